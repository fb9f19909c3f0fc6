// The page's controller (room.js) with the room's shared state (/state), on a stand-in page
// (fake_page.mjs) with a clock run by hand: the place from the state, the estimate counted down,
// its own /polling only near its turn, hold/close/off reaching it within a document's interval,
// no two pages showing one place, a drawn pre-queue's places in the drawn order, a hidden tab,
// a clock set wrong.
import assert from "node:assert/strict";
import { test } from "node:test";

import { firstOwnPoll, parseHistory, shownServing } from "../../waiting_room_site/page.js";
import { startRoom } from "../../waiting_room_site/room.js";
import { fakePage, fakeStorage, TIMING } from "./fake_page.mjs";

// 30 s into a minute (epoch ms), so the lattice is inside its span.
const T = 1_800_000_030_000;
const ROOM = "https://queue.shop.example/room";
const SHOP = "https://shop.example.com/?beekeeper_token=AAAAAAAAAAAAAAAAAAAAAA.7";

/** A shared state document: `points` are [atMs, serving, flow]; the newest says the state. */
function doc(points, extra = {}) {
  const [atMs, serving, flow] = points[points.length - 1];
  return {
    state: "open",
    serving,
    rate: flow || 600,
    flow,
    slowed: false,
    updated_at: Math.floor(atMs / 1000),
    history: points.map((p) => p.join(":")).join(" "),
    ...extra,
  };
}

async function opened({ turn, fragment = turn ? `#turn=${turn}` : "", ...options }) {
  const page = fakePage({ base: `${ROOM}${fragment}`, clockAt: T, ...options });
  startRoom(page.env);
  await page.settle();
  return page;
}

const placeOf = (page) => {
  const match = /^You are number ([\d,]+) in line\.$/.exec(page.text("position"));
  if (match) return Number(match[1].replace(/,/g, ""));
  return page.text("position") === "You are next in line." ? 1 : null;
};

test("the place comes from the shared state and the estimate counts down between fetches", async () => {
  const state = doc([[T - 1000, 1000, 600]]);
  const page = await opened({ turn: 5000, documents: [state] });
  const expected = 5000 - shownServing(parseHistory(state.history), T / 1000, TIMING);
  assert.equal(placeOf(page), expected);
  assert.equal(page.text("wait"), "Estimated wait: about 7 minutes");
  await page.run(60_000);
  // Ten a second on the lattice: the place falls and the estimate with it, without a request.
  assert.ok(placeOf(page) < expected - 500, `${placeOf(page)}`);
  assert.equal(page.text("wait"), "Estimated wait: about 6 minutes");
  assert.deepEqual(page.record.polls, []); // far from its turn: never its own /polling
  assert.equal(page.record.documents.length, 1 + 60 / TIMING.documentEverySeconds);
});

test("near its turn the page asks at the predicted moment, then every 2 s until admitted", async () => {
  const state = doc([[T - 1000, 1000, 600]]);
  const turn = 1040;
  const predicted = firstOwnPoll(parseHistory(state.history), turn, T / 1000, TIMING);
  const page = await opened({
    turn,
    documents: [state],
    answers: [
      { allow: false, state: "waiting", position: 3, turn, eta_seconds: 1, poll_after: 2, rate: 600, slowed: false, updated_at: 1 },
      { allow: false, state: "waiting", position: 1, turn, eta_seconds: 1, poll_after: 2, rate: 600, slowed: false, updated_at: 1 },
      { allow: true, origin: SHOP },
    ],
  });
  const times = [];
  for (let i = 0; i < 200 && !page.record.navigations.length; i += 1) {
    const before = page.record.polls.length;
    await page.advance(50);
    if (page.record.polls.length > before) times.push(page.now());
  }
  assert.deepEqual(page.record.navigations, [SHOP]);
  assert.equal(times.length, 3);
  assert.ok(Math.abs(times[0] - predicted * 1000) <= 50, `${times[0]} ${predicted * 1000}`);
  assert.deepEqual([times[1] - times[0], times[2] - times[1]], [2000, 2000]);
});

const WAITING = { allow: false, state: "waiting", position: 8000, eta_seconds: 800, poll_after: 300, rate: 600, slowed: false, updated_at: 1 };

for (const [kind, extra, check] of [
  [
    "paused",
    { state: "paused", flow: 0 },
    (page) => {
      assert.match(page.text("wait"), /The line is paused/);
      assert.deepEqual(page.record.polls, []); // learnt from the state alone
    },
  ],
  [
    "closed",
    // The operator's line ends the notice as a sentence of its own (a full stop added).
    { state: "closed", flow: 0, message: "Sold out, thank you" },
    (page) => {
      assert.match(page.text("notice-text"), /patience\. Sold out, thank you\.$/);
      assert.deepEqual(page.record.polls, []);
    },
  ],
  [
    "off",
    { state: "off", flow: 0, origin: "https://shop.example.com/sale" },
    (page) => {
      // Off lets the line in, each visitor with a ticket: the page says so and asks for its
      // own admission at once; it never goes to the shop without one.
      assert.equal(page.text("notice-title"), "The line is open");
      assert.ok(page.record.polls.length >= 1);
      assert.deepEqual(page.record.navigations, []);
    },
  ],
]) {
  test(`the room ${kind}: every open page shows it within one document interval`, async () => {
    const change = T + 10_000;
    const states = (clock) =>
      clock < change
        ? doc([[T - 1000, 1000, 600]])
        : doc([[T - 1000, 1000, 600], [change, 1100, 0]], extra);
    const page = await opened({ turn: 9000, documents: [states], answers: [WAITING] });
    await page.run(change - T);
    await page.run(TIMING.documentEverySeconds * 1000 + 100);
    check(page);
  });
}

test("a reload asks its own /polling at once: a visitor who left is shown so, far from the turn", async () => {
  const state = doc([[T - 1000, 1000, 600]]);
  const storage = fakeStorage();
  const first = await opened({ turn: 5000, documents: [state], answers: [WAITING], storage });
  assert.deepEqual(first.record.polls, []); // just placed by the marketing link: the document says
  assert.ok(placeOf(first) > 3000, `${placeOf(first)}`);
  const reloaded = await opened({
    turn: 5000,
    documents: [state],
    answers: [{ allow: false, state: "left" }],
    storage,
  });
  assert.equal(reloaded.record.polls.length, 1);
  assert.equal(reloaded.text("notice-title"), "You left the line");
  // Another tab (its own storage) with the same link is a first load: no poll.
  const other = await opened({ turn: 5000, documents: [state], answers: [WAITING] });
  assert.deepEqual(other.record.polls, []);
});

test("a reload of a page let in meanwhile goes to the shop at once, before the shared state says so", async () => {
  const state = doc([[T - 1000, 1000, 600]]);
  const storage = fakeStorage();
  await opened({ turn: 5000, documents: [state], answers: [WAITING], storage });
  const reloaded = await opened({ turn: 5000, documents: [state], answers: [{ allow: true, origin: SHOP }], storage });
  assert.deepEqual(reloaded.record.navigations, [SHOP]);
});

test("the room off: the page asks every 2 s until it is let in with its ticket", async () => {
  const off = doc([[T - 1000, 1000, 0]], { state: "off", origin: "https://shop.example.com/sale" });
  const page = await opened({
    turn: 9000,
    documents: [off],
    answers: [{ allow: false, state: "room_off", poll_after: 2 }, WAITING, { allow: true, origin: SHOP }],
  });
  await page.run(5_000);
  assert.equal(page.record.polls.length, 3);
  assert.deepEqual(page.record.navigations, [SHOP]);
});

test("a closed event's page keeps listening, and shows the place again when it resumes", async () => {
  const resumed = T + 60_000;
  const states = (clock) =>
    clock < resumed
      ? doc([[T - 1000, 1000, 0]], { state: "closed" })
      : doc([[T - 1000, 1000, 0], [resumed, 1000, 6]]);
  const page = await opened({ turn: 1100, documents: [states] });
  assert.equal(page.text("notice-title"), "This event is over");
  await page.run(resumed - T + TIMING.closedDocumentEverySeconds * 1000 + 100);
  assert.equal(page.shown("notice"), false);
  const place = placeOf(page);
  assert.ok(place !== null && place <= 100 && place >= 95, `${place}`);
  // At the closed page's slow pace meanwhile, not every few seconds.
  const whileClosed = page.record.documents.filter((at) => at <= resumed);
  assert.equal(whileClosed.length, 1 + (resumed - T) / 1000 / TIMING.closedDocumentEverySeconds);
});

test("no two waiting pages show the same place at the same moment", async () => {
  // Five a minute, 30 visitors, a quiet room's admissions published at once (a burst first).
  const admissions = [0, 0.05, 0.1, 0.15, 11.6, 23.2, 34.8, 46.4, 58.0];
  const published = (clock) => {
    const points = [[T - 60_000, 0, 5]];
    admissions.forEach((second, i) => {
      const at = T + second * 1000 + 120;
      if (at <= clock) points.push([at, i + 1, 5]);
    });
    return doc(points.slice(-24));
  };
  const pages = [];
  for (let turn = 1; turn <= 30; turn += 1) {
    // Loaded at different moments, so their fetches fall at different times.
    const start = T - ((turn * 379) % 6000);
    const page = fakePage({ base: `${ROOM}#turn=${turn}`, clockAt: start, documents: [published] });
    startRoom(page.env);
    await page.settle();
    await page.run(T - start);
    pages.push(page);
  }
  for (let step = 0; step < 140; step += 1) {
    const shown = pages.map(placeOf).filter((place) => place !== null);
    assert.equal(new Set(shown).size, shown.length, `step ${step}: ${pages.map(placeOf)}`);
    for (const page of pages) await page.advance(500);
  }
});

test("after a draw the places follow the drawn order 1, 2, 3 ...", async () => {
  const start = Math.floor(T / 1000) + 5;
  const before = doc([[T - 1000, 0, 0]], { state: "prequeue", starts_at: start, drawn: false, ranked: false, prequeue_base: 0 });
  const drawn = doc([[T - 1000, 0, 0], [T + 20_000, 0, 5]], { state: "open", starts_at: start, drawn: true, ranked: true, prequeue_base: 0 });
  const ranks = [4, 1, 6, 2, 5, 3];
  const pages = [];
  for (const rank of ranks) {
    const page = fakePage({
      base: `${ROOM}#prequeue`,
      clockAt: T,
      documents: [(clock) => (clock < T + 20_000 ? before : drawn)],
      answers: [{ allow: false, state: "waiting", position: rank, turn: rank, eta_seconds: 1, poll_after: 5, rate: 5, slowed: false, updated_at: 1 }],
    });
    startRoom(page.env);
    await page.settle();
    pages.push(page);
  }
  assert.match(pages[0].text("position"), /^Starts in /);
  // Drawn at T + 20 s; the places before the first drawn visitor's slot (T + 31 s).
  for (const page of pages) await page.run(28_000, 500);
  assert.deepEqual(pages.map(placeOf), ranks);
  // Each asked once for its rank; only the front of the line asks again (every 2 s).
  pages.forEach((page, i) => {
    if (ranks[i] > 2) assert.equal(page.record.polls.length, 1, `rank ${ranks[i]}`);
  });
});

test("a hidden page fetches the state only as its turn needs, and at once when shown", async () => {
  const page = fakePage({ base: `${ROOM}#turn=90000`, clockAt: T, documents: [doc([[T - 1000, 1000, 600]])] });
  page.env.document.visibilityState = "hidden";
  startRoom(page.env);
  await page.settle();
  await page.run(120_000, 1000);
  assert.equal(page.record.documents.length, 1); // the next is TIMING.hiddenDocumentMaxSeconds on
  page.env.document.visibilityState = "visible";
  page.env.document.dispatch("visibilitychange");
  await page.settle();
  assert.equal(page.record.documents.length, 2);
});

test("a hidden page 200 s from its turn fetches again in time and asks at its turn", async () => {
  // A line moving at 600 a minute: the newest point is a second old at every fetch.
  const moving = (clock) => doc([[clock - 1000, 1000 + Math.floor((clock - T) / 100), 600]]);
  const page = fakePage({
    base: `${ROOM}#turn=3000`,
    clockAt: T,
    documents: [moving],
    answers: [{ allow: true, origin: SHOP }],
  });
  page.env.document.visibilityState = "hidden";
  startRoom(page.env);
  await page.settle();
  let asked = null;
  for (let i = 0; i < 3000 && asked === null; i += 1) {
    await page.advance(100);
    if (page.record.polls.length) asked = page.now();
  }
  // The serving number reaches 3000 about 200 s on: the page asks then, not at a 5-minute
  // fetch (the own poll is beyond the extrapolation's reach at the first document).
  assert.ok(asked !== null && Math.abs(asked - (T + 200_000)) <= 2000, `asked at ${asked - T} ms`);
  assert.ok(page.record.documents.length <= 8, `${page.record.documents.length} documents`);
});

test("a page whose clock is a minute fast shows the room's place, not its own", async () => {
  const state = doc([[T - 1000, 1000, 600]]);
  const page = fakePage({
    base: `${ROOM}#turn=5000`,
    clockAt: T + 60_000,
    documents: [(clock) => ({ ...state, now: clock - 60_000 - 200 })],
  });
  startRoom(page.env);
  await page.settle();
  await page.advance(1000); // a second document: the room's clock is known from two samples
  const place = placeOf(page);
  const roomTime = (T + 1000) / 1000;
  assert.ok(Math.abs(place - (5000 - shownServing(parseHistory(state.history), roomTime, TIMING))) <= 12);
});

test("the shared state's answer is read strictly: anything else is a failed fetch", async () => {
  const { interpretDocument, readFragment } = await import("../../waiting_room_site/page.js");
  const good = doc([[T - 1000, 1000, 600]], { now: T });
  assert.equal(interpretDocument(good, ROOM).kind, "open");
  assert.deepEqual(interpretDocument({ ...good, history: "" }, ROOM).points, [
    { atMs: T, serving: 1000, flow: 600 },
  ]);
  for (const bad of [null, "x", { ...good, state: "maybe" }, { ...good, serving: -1 }, { ...good, now: "1" }]) {
    assert.equal(interpretDocument(bad, ROOM).kind, "invalid");
  }
  // Off sends the visitor to the shop only at a plain web address.
  assert.equal(interpretDocument({ ...good, state: "off", origin: "javascript:alert(1)" }, ROOM).kind, "invalid");
  assert.equal(interpretDocument({ ...good, state: "off", origin: "https://shop.example/" }, ROOM).origin, "https://shop.example/");
  assert.deepEqual(readFragment(`${ROOM}#turn=42`, TIMING), { turn: 42 });
  assert.deepEqual(readFragment(`${ROOM}#prequeue`, TIMING), { prequeue: true });
  for (const hash of ["", "#turn=", "#turn=0", "#turn=1e5", "#turn=42&x", "#other"]) {
    assert.deepEqual(readFragment(`${ROOM}${hash}`, TIMING), {});
  }
});
