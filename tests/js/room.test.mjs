// The page's controller (waiting_room_site/room.js) in capacity mode, on a stand-in page
// (fake_page.mjs): where an admission goes, the leave button, the left state. The browser tests
// (tests/browser) run the same page in Chromium.
import assert from "node:assert/strict";
import { test } from "node:test";

import { startRoom } from "../../waiting_room_site/room.js";
import { capacityAnswer, waitingAnswer } from "./answers.mjs";
import { fakePage } from "./fake_page.mjs";

const SHOP = "https://shop.example.com/?beekeeper_token=AAAAAAAAAAAAAAAAAAAAAA.7";
const ENTER = "https://api.example.com/prod/enter";
const LEAVE = "https://api.example.com/prod/leave";
const JOIN = "https://api.example.com/prod/beekeeper";
// Longest wait to the next poll for poll_after=20 (random 0: exactly 20 s) plus a little.
const NEXT_POLL_MS = 20_100;

const waiting = (position) => waitingAnswer(position);
const full = (position) => capacityAnswer(position, { max_inside: 2, inside: 2 });
const roomy = (position) => capacityAnswer(position, { max_inside: 2, inside: 1, full: false });

async function started(options) {
  const page = fakePage(options);
  startRoom(page.env);
  await page.settle();
  return page;
}

test("rate mode: the usual text, no leave button, admission straight to origin", async () => {
  const page = await started({ answers: [waiting(12), { allow: true, origin: SHOP }] });
  assert.equal(page.text("position"), "You are number 12 in line.");
  assert.equal(page.shown("full-note"), false);
  assert.equal(page.shown("leave"), false);
  await page.advance(NEXT_POLL_MS);
  assert.deepEqual(page.record.navigations, [SHOP]);
  assert.equal(page.hook("notice-link").getAttribute("href"), SHOP);
});

test("capacity mode, shop full: explained, with the estimate and the leave button", async () => {
  const page = await started({ answers: [full(12)] });
  assert.equal(page.text("position"), "You are number 12 in line.");
  assert.equal(page.shown("full-note"), true);
  assert.equal(page.text("full-note"), "The shop is full: people go in as others leave.");
  assert.equal(page.text("wait"), "Estimated wait: about 5 minutes");
  assert.equal(page.shown("leave"), true);
  assert.equal(page.hook("leave").listeners.get("click").length, 1);
  assert.equal(
    page.text("status"),
    "You are number 12 in line. The shop is full: people go in as others leave. " +
      "Estimated wait: about 5 minutes.",
  );
});

test("capacity mode, shop full, in German", async () => {
  const page = await started({ answers: [full(1234)], languages: ["de-DE"] });
  assert.equal(page.text("position"), "Sie sind Nummer 1.234 in der Warteschlange.");
  assert.equal(
    page.text("full-note"),
    "Der Shop ist gerade voll: Sobald andere ihn verlassen, rücken die Nächsten nach.",
  );
  assert.equal(page.text("wait"), "Geschätzte Wartezeit: etwa 5 Minuten");
});

test("capacity mode, room inside: the usual text, the leave button all the same", async () => {
  const page = await started({ answers: [roomy(12), full(11), roomy(10)] });
  assert.equal(page.text("position"), "You are number 12 in line.");
  assert.equal(page.shown("full-note"), false);
  assert.equal(page.shown("leave"), true);
  await page.advance(NEXT_POLL_MS);
  assert.equal(page.shown("full-note"), true);
  // The shop filling up is said at once, not a minute later; and so is its making room.
  assert.match(page.text("status"), /^You are number 11 in line\. The shop is full:/);
  await page.advance(NEXT_POLL_MS);
  assert.equal(page.shown("full-note"), false);
  assert.match(page.text("status"), /^You are number 10 in line\. Estimated wait: about \d minutes\.$/);
});

test("capacity mode: an admission goes through the room's enter route", async () => {
  const page = await started({ answers: [full(1), { allow: true, origin: SHOP, via: "enter" }] });
  await page.advance(NEXT_POLL_MS);
  assert.deepEqual(page.record.navigations, [ENTER]);
  assert.equal(page.hook("notice-link").getAttribute("href"), ENTER);
  assert.equal(page.text("notice-title"), "It's your turn!");
});

test("an admission naming anything but the enter route is not followed: the page retries", async () => {
  const page = await started({
    answers: [
      { allow: true, origin: SHOP, via: "https://evil.example.com/" },
      { allow: true, origin: SHOP, via: "enter" },
    ],
  });
  assert.deepEqual(page.record.navigations, []);
  assert.equal(page.shown("retry"), true);
  await page.advance(2_000); // the first back-off: at most 2 s
  assert.deepEqual(page.record.navigations, [ENTER]);
});

test("leave with a beacon: sent once, polling stops, the left state with a way back", async () => {
  const page = await started({ answers: [full(12)] });
  // The next poll, the shared state's next try, and when its failures would mean out of reach.
  assert.equal(page.pendingTimers(), 3);
  page.hook("leave").click();
  assert.deepEqual(page.record.beacons, [{ url: LEAVE, data: undefined }]);
  assert.deepEqual(page.record.posts, []);
  assert.equal(page.pendingTimers(), 0, "no poll is scheduled any more");
  assert.equal(page.shown("waiting"), false);
  assert.equal(page.shown("notice"), true);
  assert.equal(page.text("notice-title"), "You left the line");
  assert.match(page.text("notice-text"), /join the line again/);
  assert.equal(page.text("notice-link"), "Join the line again");
  assert.equal(page.hook("notice-link").getAttribute("href"), JOIN);
  // Focus moves to the message (the button is gone), which the live region also speaks.
  assert.equal(page.env.document.activeElement, page.hook("notice-title"));
  assert.equal(page.hook("notice-title").getAttribute("tabindex"), "-1");
  assert.match(page.text("status"), /^You left the line\. Your place has gone/);
  await page.advance(10 * 60_000);
  assert.equal(page.record.polls.length, 1);
  // A second click (the button is hidden; a custom template's could remain) sends nothing more.
  page.hook("leave").click();
  assert.equal(page.record.beacons.length, 1);
});

test("leave without a beacon: one keepalive POST to the leave route", async () => {
  const page = await started({ answers: [full(12)], beacon: null });
  page.hook("leave").click();
  assert.equal(page.record.posts.length, 1);
  const [post] = page.record.posts;
  assert.equal(post.url, LEAVE);
  assert.equal(post.options.method, "POST");
  assert.equal(post.options.keepalive, true);
  assert.equal(post.options.credentials, "same-origin");
  assert.equal(page.text("notice-title"), "You left the line");
  assert.equal(page.pendingTimers(), 0);
});

test("leave with a beacon the browser refuses: the POST carries it", async () => {
  const page = await started({ answers: [full(12)], beacon: false });
  page.hook("leave").click();
  assert.equal(page.record.beacons.length, 1);
  assert.equal(page.record.posts.length, 1);
  assert.equal(page.record.posts[0].url, LEAVE);
});

test("a leave while a poll is on its way: the poll's answer changes nothing", async () => {
  const page = await started({ answers: [full(12), { allow: true, origin: SHOP, via: "enter" }] });
  await page.advance(19_000);
  assert.equal(page.record.polls.length, 1);
  // The timer fires (the poll is sent); the visitor clicks before its answer arrives.
  const pending = page.advance(1_100);
  assert.equal(page.record.polls.length, 2);
  page.hook("leave").click();
  await pending;
  await page.settle();
  assert.deepEqual(page.record.navigations, []);
  assert.equal(page.text("notice-title"), "You left the line");
});

test("/polling says left (another tab, or the shop): the same state, no leave sent", async () => {
  const page = await started({ answers: [full(12), { allow: false, state: "left" }] });
  await page.advance(NEXT_POLL_MS);
  assert.equal(page.text("notice-title"), "You left the line");
  assert.equal(page.hook("notice-link").getAttribute("href"), JOIN);
  assert.equal(page.shown("waiting"), false);
  assert.deepEqual(page.record.beacons, []);
  assert.equal(page.pendingTimers(), 0);
  await page.advance(10 * 60_000);
  assert.equal(page.record.polls.length, 2);
});

test("a custom template without the leave hook still works in capacity mode", async () => {
  const hooks = ["status", "waiting", "position", "notice", "notice-title", "notice-text", "notice-link"];
  const page = await started({ answers: [full(3), { allow: true, origin: SHOP, via: "enter" }], hooks });
  // Without the full-note hook the explanation goes with the position.
  assert.equal(
    page.text("position"),
    "The shop is full: people go in as others leave. You are number 3 in line.",
  );
  await page.advance(NEXT_POLL_MS);
  assert.deepEqual(page.record.navigations, [ENTER]);
});
