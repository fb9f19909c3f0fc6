// Capacity mode in the page's pure logic (waiting_room_site/page.js): the answers' new fields,
// the admission through /enter, the left state, the leave request. Run by `node --test tests/js/`.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  admissionUrl,
  interpretAnswer,
  isFull,
  sendLeave,
  shouldAnnounce,
  waitNoteKey,
} from "../../waiting_room_site/page.js";
import { capacityAnswer, waitingAnswer } from "./answers.mjs";

const BASE = "https://api.example.com/prod/room";
const ROUTES = { enter: "enter" };
const SHOP = "https://shop.example.com/?beekeeper_token=AAAAAAAAAAAAAAAAAAAAAA.7";

const waiting = (extra) => waitingAnswer(12, extra);
const capacity = (extra) => capacityAnswer(12, extra);

test("a capacity-mode waiting answer carries the shop's figures", () => {
  const answer = interpretAnswer(capacity(), BASE, ROUTES);
  assert.equal(answer.kind, "waiting");
  assert.equal(answer.position, 12);
  assert.equal(answer.etaSeconds, 300);
  assert.deepEqual(answer.capacity, { maxInside: 500, inside: 500, turnover: 3, full: true });
  assert.equal(isFull(answer), true);
  const room = interpretAnswer(capacity({ inside: 120, full: false }), BASE, ROUTES);
  assert.deepEqual(room.capacity, { maxInside: 500, inside: 120, turnover: 3, full: false });
  assert.equal(isFull(room), false);
});

test("a rate-mode waiting answer has no capacity figures and is never full", () => {
  const answer = interpretAnswer(waiting(), BASE, ROUTES);
  assert.equal("capacity" in answer, false);
  assert.equal(isFull(answer), false);
  // A full flag outside the capacity figures is not believed.
  assert.equal(isFull(interpretAnswer(waiting({ full: true }), BASE, ROUTES)), false);
});

test("capacity figures that break the contract make the answer invalid (retried)", () => {
  const broken = [
    { max_inside: 0 },
    { max_inside: "500" },
    { max_inside: 1.5 },
    { inside: -1 },
    { inside: undefined },
    { turnover: -2 },
    { turnover: "3" },
    { turnover: Number.NaN },
    { full: "true" },
    { full: undefined },
  ];
  for (const fields of broken) {
    assert.deepEqual(interpretAnswer(capacity(fields), BASE, ROUTES), { kind: "invalid" }, JSON.stringify(fields));
  }
});

test("state left: the visitor left the line or the shop", () => {
  assert.deepEqual(interpretAnswer({ allow: false, state: "left" }, BASE, ROUTES), { kind: "left" });
});

test("an admission via enter goes to the page's own enter route, not to origin", () => {
  const answer = interpretAnswer({ allow: true, origin: SHOP, via: "enter" }, BASE, ROUTES);
  assert.deepEqual(answer, {
    kind: "admitted",
    origin: SHOP,
    via: "enter",
    viaUrl: "https://api.example.com/prod/enter",
  });
  assert.equal(admissionUrl(answer), "https://api.example.com/prod/enter");
  // Local mode serves the page at /room: enter is /enter, beside /polling.
  const local = interpretAnswer({ allow: true, origin: SHOP, via: "enter" }, "http://127.0.0.1:8080/room", ROUTES);
  assert.equal(admissionUrl(local), "http://127.0.0.1:8080/enter");
});

test("an admission without via goes straight to origin, as in rate mode", () => {
  const answer = interpretAnswer({ allow: true, origin: SHOP }, BASE, ROUTES);
  assert.deepEqual(answer, { kind: "admitted", origin: SHOP });
  assert.equal(admissionUrl(answer), SHOP);
  assert.equal(admissionUrl(interpretAnswer({ allow: true, origin: SHOP }, BASE)), SHOP);
});

test("via names only a route of the page's config: URLs and other names are refused", () => {
  const invalid = { kind: "invalid" };
  const admitted = (via, routes = ROUTES, origin = SHOP) =>
    interpretAnswer({ allow: true, origin, via }, BASE, routes);
  assert.deepEqual(admitted("https://evil.example.com/enter"), invalid);
  assert.deepEqual(admitted("//evil.example.com/enter"), invalid);
  assert.deepEqual(admitted("javascript:alert(1)"), invalid);
  assert.deepEqual(admitted("leave"), invalid);
  assert.deepEqual(admitted("ENTER"), invalid);
  assert.deepEqual(admitted("__proto__"), invalid);
  assert.deepEqual(admitted("constructor"), invalid);
  assert.deepEqual(admitted("toString"), invalid);
  assert.deepEqual(admitted(null), invalid);
  assert.deepEqual(admitted(["enter"]), invalid);
  assert.deepEqual(admitted({ enter: "enter" }), invalid);
  // A page whose config names no enter route can not follow it.
  assert.deepEqual(admitted("enter", {}), invalid);
  assert.deepEqual(interpretAnswer({ allow: true, origin: SHOP, via: "enter" }, BASE), invalid);
  // The origin is still checked: a via does not make a bad origin acceptable.
  assert.deepEqual(admitted("enter", ROUTES, "javascript:alert(1)"), invalid);
  assert.deepEqual(interpretAnswer({ allow: true, via: "enter" }, BASE, ROUTES), invalid);
});

test("the note under the estimate: why it rose, full shop or slowed entry", () => {
  const full = interpretAnswer(capacity(), BASE, ROUTES);
  const roomy = interpretAnswer(capacity({ full: false }), BASE, ROUTES);
  const slowedFull = interpretAnswer(capacity({ slowed: true }), BASE, ROUTES);
  assert.equal(waitNoteKey(true, full), "waitRoseFull");
  assert.equal(waitNoteKey(true, roomy), "waitRoseSlower");
  assert.equal(waitNoteKey(true, slowedFull), "waitRoseSlowed");
  assert.equal(waitNoteKey(false, full), null);
  assert.equal(waitNoteKey(false, slowedFull), "waitSlowed");
  const rate = interpretAnswer(waiting(), BASE, ROUTES);
  assert.equal(waitNoteKey(true, rate), "waitRoseSlower");
  assert.equal(waitNoteKey(false, rate), null);
});

test("the shop filling up or making room is announced at once", () => {
  const at = 1_000_000;
  const last = { kind: "waiting", position: 100, waitText: "about 10 minutes", full: false, at };
  const next = { kind: "waiting", position: 99, waitText: "about 10 minutes" };
  assert.equal(shouldAnnounce(last, { ...next, full: true }, at + 5_000), true);
  assert.equal(shouldAnnounce({ ...last, full: true }, { ...next, full: false }, at + 5_000), true);
  assert.equal(shouldAnnounce({ ...last, full: true }, { ...next, full: true }, at + 5_000), false);
  // Rate mode never sets full: nothing changes there.
  const { full: _, ...rateLast } = last;
  assert.equal(shouldAnnounce(rateLast, next, at + 5_000), false);
});

function recorder(result) {
  const calls = [];
  const fn = (...args) => {
    calls.push(args);
    if (result instanceof Error) throw result;
    return result;
  };
  return { calls, fn };
}

const LEAVE = "https://api.example.com/prod/leave";

test("leave: a beacon when the browser has one, and nothing else", () => {
  const beacon = recorder(true);
  const fetch = recorder(Promise.resolve({ ok: true }));
  assert.equal(sendLeave(LEAVE, { sendBeacon: beacon.fn, fetch: fetch.fn }), "beacon");
  assert.deepEqual(beacon.calls, [[LEAVE]], "an empty body: the route accepts it");
  assert.equal(fetch.calls.length, 0);
});

test("leave: a keepalive POST with the cookie when there is no beacon", () => {
  const fetch = recorder(Promise.resolve({ ok: true }));
  assert.equal(sendLeave(LEAVE, { sendBeacon: undefined, fetch: fetch.fn }), "fetch");
  assert.equal(fetch.calls.length, 1);
  const [url, options] = fetch.calls[0];
  assert.equal(url, LEAVE);
  assert.equal(options.method, "POST");
  assert.equal(options.keepalive, true);
  assert.equal(options.credentials, "same-origin");
  assert.equal(options.body, undefined);
});

test("leave: a beacon the browser refuses or throws on falls back to the POST", () => {
  for (const refusal of [false, new TypeError("beacon refused")]) {
    const beacon = recorder(refusal);
    const fetch = recorder(Promise.resolve({ ok: true }));
    assert.equal(sendLeave(LEAVE, { sendBeacon: beacon.fn, fetch: fetch.fn }), "fetch");
    assert.equal(beacon.calls.length, 1);
    assert.equal(fetch.calls.length, 1);
    assert.equal(fetch.calls[0][1].method, "POST");
  }
});

test("leave: a failing POST never throws into the page", async () => {
  const rejected = Promise.reject(new TypeError("network down"));
  const fetch = recorder(rejected);
  assert.equal(sendLeave(LEAVE, { fetch: fetch.fn }), "fetch");
  await new Promise((resolve) => setImmediate(resolve)); // an unhandled rejection would fail the run
  assert.equal(sendLeave(LEAVE, { fetch: recorder(new TypeError("no fetch")).fn }), "failed");
});
