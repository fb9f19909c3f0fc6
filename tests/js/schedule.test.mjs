// A scheduled event on the page: the pre-queue's answers, its countdown and its first poll
// spread after the start; a held line (paused) and a closed event, in English and German.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  formatCountdown,
  formatStart,
  interpretAnswer,
  prequeueDelay,
  START_JITTER_SECONDS,
} from "../../waiting_room_site/page.js";
import { startRoom } from "../../waiting_room_site/room.js";
import { fakePage } from "./fake_page.mjs";

const BASE = "https://api.example.com/prod/room";
const NOW_MS = 1_790_000_000_000; // fake_page's clock
const en = { countdownDays: { one: "{n} day", other: "{n} days" } };

test("prequeue, paused and closed answers are read, and broken ones are invalid", () => {
  assert.deepEqual(
    interpretAnswer({ allow: false, state: "prequeue", starts_at: 1_790_000_600, poll_after: 540 }, BASE),
    { kind: "prequeue", startsAt: 1_790_000_600, pollAfter: 540 },
  );
  assert.deepEqual(interpretAnswer({ allow: false, state: "prequeue", starts_at: "soon" }, BASE), {
    kind: "invalid",
  });
  assert.deepEqual(
    interpretAnswer({ allow: false, state: "paused", position: 7, poll_after: 30 }, BASE),
    { kind: "paused", position: 7, pollAfter: 30 },
  );
  assert.deepEqual(interpretAnswer({ allow: false, state: "paused", position: 0 }, BASE), {
    kind: "invalid",
  });
  assert.deepEqual(interpretAnswer({ allow: false, state: "closed", message: "Sold out" }, BASE), {
    kind: "closed",
    message: "Sold out",
  });
  assert.deepEqual(interpretAnswer({ allow: false, state: "closed", message: 5 }, BASE), {
    kind: "closed",
    message: "",
  });
});

test("before the start a poll keeps the server's pace; one reaching the start is spread after it", () => {
  const half = () => 0.5;
  // Far from the start: the server's 300 s, with the usual jitter.
  assert.equal(prequeueDelay(300, 3_600_000, half), 337_500);
  // A poll that would land past the start lands within the spread after it, never before.
  for (const r of [0, 0.25, 0.999]) {
    const delay = prequeueDelay(60, 30_000, () => r);
    assert.ok(delay >= 30_000 && delay < 30_000 + START_JITTER_SECONDS * 1000, `${delay}`);
  }
  // Different visitors' random draws spread the first poll over several seconds.
  const spread = [0, 0.5, 0.99].map((r) => prequeueDelay(30, 30_000, () => r));
  assert.ok(Math.max(...spread) - Math.min(...spread) >= 0.9 * START_JITTER_SECONDS * 1000);
  // After the start (the draw is being made): every few seconds, spread too.
  assert.equal(prequeueDelay(5, -1000, () => 0), 5000);
  assert.equal(prequeueDelay(5, -1000, () => 1), 5000 + START_JITTER_SECONDS * 1000);
});

test("the countdown counts whole seconds, with days when there are any", () => {
  assert.equal(formatCountdown(3_723_000, en, "en"), "01:02:03");
  assert.equal(formatCountdown(3_722_001, en, "en"), "01:02:03");
  assert.equal(formatCountdown(90_061_000, en, "en"), "1 day 01:01:01");
  assert.equal(formatCountdown(2 * 86_400_000, en, "en"), "2 days 00:00:00");
  assert.equal(formatCountdown(-5, en, "en"), "00:00:00");
});

test("the start is shown in the visitor's own time zone", () => {
  const start = Date.UTC(2026, 5, 1, 7, 0, 0); // 07:00 UTC
  assert.match(formatStart(start, "en-GB", "Europe/Berlin"), /09:00/);
  assert.match(formatStart(start, "en-GB", "America/New_York"), /03:00/);
  assert.match(formatStart(start, "de-DE", "Europe/Berlin"), /Montag, 1\. Juni/);
});

async function started(answers, languages, options = {}) {
  const page = fakePage({ answers, languages, ...options });
  startRoom(page.env);
  await page.settle();
  return page;
}

const prequeue = (secondsAhead, pollAfter) => ({
  allow: false,
  state: "prequeue",
  starts_at: Math.round(NOW_MS / 1000) + secondsAhead,
  poll_after: pollAfter,
});

test("the pre-queue page counts down live and says the order is drawn at the start", async () => {
  const page = await started([prequeue(90, 60), prequeue(30, 30), prequeue(-1, 5)]);
  assert.equal(page.text("position"), "Starts in 00:01:30");
  assert.match(page.text("wait"), /^The event starts on /);
  assert.match(page.text("wait-note"), /random order, drawn at the start/);
  assert.equal(page.shown("progress"), false);
  await page.advance(1000);
  assert.equal(page.text("position"), "Starts in 00:01:29");
  assert.equal(page.record.polls.length, 1);
  // random 0: the server's 60 s exactly; the second answer says 30 s to go.
  await page.advance(59_000);
  assert.equal(page.record.polls.length, 2);
  await page.advance(30_000);
  assert.equal(page.text("position"), "The event has started: the order is being drawn. Your place appears in a moment.");
});

test("a pre-queue answer that comes before the first shared state still plans the next poll", async () => {
  // The page then knows neither when it fetches the state next nor when it asks next: it
  // must not show an unknown moment (an invalid date threw, and the poll was never planned).
  const page = await started([prequeue(90, 60), prequeue(30, 30)], undefined, {
    lateDocuments: true,
  });
  assert.equal(page.text("position"), "Starts in 00:01:30");
  assert.equal(page.record.polls.length, 1);
  assert.equal(page.record.documents.length, 1);
  await page.advance(60_000);
  assert.equal(page.record.polls.length, 2);
});

test("a held line shows the place kept; a closed event shows the operator's message", async () => {
  const paused = await started([{ allow: false, state: "paused", position: 42, poll_after: 30 }]);
  assert.equal(paused.text("position"), "You are number 42 in line.");
  assert.match(paused.text("wait"), /The line is paused/);
  const closed = await started(
    [{ allow: false, state: "closed", message: "Ausverkauft, danke!" }],
    ["de-DE"],
  );
  assert.equal(closed.text("notice-title"), "Diese Aktion ist beendet");
  assert.match(closed.text("notice-text"), /Ausverkauft, danke!$/);
  assert.equal(closed.shown("notice-link"), false);
  // No more polls; the page listens to the shared state for a resume.
  await closed.advance(10 * 60_000);
  assert.equal(closed.record.polls.length, 1);
});
