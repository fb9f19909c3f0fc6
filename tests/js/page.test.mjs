// Unit tests of the page's pure logic (waiting_room_site/page.js), run by `node --test tests/js/`.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  ANNOUNCE_MIN_INTERVAL_MS,
  BACKOFF_MAX_SECONDS,
  backoffDelay,
  chooseLanguage,
  fill,
  formatClock,
  formatPosition,
  formattingLocale,
  formatWait,
  goneKey,
  hasEstimate,
  interpretAnswer,
  MAX_POLL_SECONDS,
  nextPosition,
  pollDelay,
  progressPercent,
  roundWait,
  safeRedirectUrl,
  shouldAnnounce,
  smoothEstimate,
} from "../../waiting_room_site/page.js";

const load = (lang) =>
  JSON.parse(readFileSync(new URL(`../../waiting_room_site/locales/${lang}.json`, import.meta.url), "utf8"));
const en = load("en");
const de = load("de");
const constant = (value) => () => value;
const BASE = "https://api.example.com/prod/room";

test("every language has every string English has, with the same placeholders", () => {
  const placeholders = (value) => JSON.stringify(value).match(/\{\w+\}/g)?.sort() ?? [];
  for (const [key, value] of Object.entries(en)) {
    assert.ok(key in de, `de lacks ${key}`);
    assert.deepEqual(placeholders(de[key]), placeholders(value), key);
  }
  assert.deepEqual(Object.keys(de).sort(), Object.keys(en).sort());
});

test("language: first supported preference by full tag or primary subtag, else English", () => {
  assert.equal(chooseLanguage(["de-AT", "en"], ["en", "de"]), "de");
  assert.equal(chooseLanguage(["fr-FR", "DE"], ["en", "de"]), "de");
  assert.equal(chooseLanguage(["fr-FR", "es"], ["en", "de"]), "en");
  assert.equal(chooseLanguage(["en-GB", "de"], ["en", "de"]), "en");
  assert.equal(chooseLanguage([], ["en", "de"]), "en");
  assert.equal(chooseLanguage(undefined, ["en", "de"]), "en");
  assert.equal(chooseLanguage(["", null, "pt-BR"], ["en", "pt-BR"]), "pt-BR");
});

test("formatting locale: the visitor's own variant of the chosen language", () => {
  assert.equal(formattingLocale(["en-GB", "de"], "en"), "en-GB");
  assert.equal(formattingLocale(["fr-FR", "de-ch"], "de"), "de-CH");
  assert.equal(formattingLocale(["fr-FR"], "en"), "en");
  assert.equal(formattingLocale(["en-!!", "en-AU"], "en"), "en-AU");
  assert.equal(formattingLocale(undefined, "de"), "de");
});

test("position: grouped digits in each language, and 'next' at the front", () => {
  assert.equal(formatPosition(1234, en, "en"), "You are number 1,234 in line.");
  assert.equal(formatPosition(1234, de, "de"), "Sie sind Nummer 1.234 in der Warteschlange.");
  assert.equal(formatPosition(2, en, "en"), "You are number 2 in line.");
  assert.equal(formatPosition(1, en, "en"), "You are next in line.");
  assert.equal(formatPosition(1, de, "de"), "Sie sind als Nächstes an der Reihe.");
});

test("wait rounding is never more precise than an estimate can be", () => {
  assert.deepEqual(roundWait(0), { kind: "now" });
  assert.deepEqual(roundWait(4), { kind: "now" });
  assert.deepEqual(roundWait(5), { kind: "lessThanMinute" });
  assert.deepEqual(roundWait(59), { kind: "lessThanMinute" });
  assert.deepEqual(roundWait(60), { kind: "minutes", minutes: 1 });
  assert.deepEqual(roundWait(89), { kind: "minutes", minutes: 1 });
  assert.deepEqual(roundWait(91), { kind: "minutes", minutes: 2 });
  assert.deepEqual(roundWait(9 * 60), { kind: "minutes", minutes: 9 });
  assert.deepEqual(roundWait(12 * 60), { kind: "minutes", minutes: 10 });
  assert.deepEqual(roundWait(13 * 60), { kind: "minutes", minutes: 15 });
  assert.deepEqual(roundWait(58 * 60), { kind: "hours", hours: 1, minutes: 0 });
  assert.deepEqual(roundWait(100 * 60), { kind: "hours", hours: 1, minutes: 45 });
  assert.deepEqual(roundWait(5 * 3600 + 1700), { kind: "hours", hours: 5, minutes: 0 });
  assert.deepEqual(roundWait(-5), { kind: "now" });
  assert.deepEqual(roundWait("nonsense"), { kind: "lessThanMinute" });
});

test("clock times follow the locale", () => {
  const noon = Date.UTC(2026, 8, 21, 12, 0, 5);
  assert.equal(formatClock(noon, "de-DE", "UTC"), "12:00:05");
  assert.equal(formatClock(noon, "en-GB", "UTC"), "12:00:05");
  assert.match(formatClock(noon, "en-US", "UTC"), /^12:00:05\sPM$/);
});

test("wait wording in English and German, singular and plural", () => {
  const cases = [
    [0, "any moment now", "jeden Moment"],
    [30, "less than a minute", "weniger als eine Minute"],
    [60, "about 1 minute", "etwa 1 Minute"],
    [12 * 60, "about 10 minutes", "etwa 10 Minuten"],
    [13 * 60, "about 15 minutes", "etwa 15 Minuten"],
    [60 * 60, "about 1 hour", "etwa 1 Stunde"],
    [75 * 60, "about 1 hour and 15 minutes", "etwa 1 Stunde und 15 Minuten"],
    [150 * 60, "about 2 hours and 30 minutes", "etwa 2 Stunden und 30 Minuten"],
    [8 * 3600, "about 8 hours", "etwa 8 Stunden"],
  ];
  for (const [seconds, english, german] of cases) {
    assert.equal(formatWait(seconds, en, "en"), english, `${seconds} s in English`);
    assert.equal(formatWait(seconds, de, "de"), german, `${seconds} s in German`);
  }
});

test("fill replaces known names and leaves unknown ones visible", () => {
  assert.equal(fill("{a} and {b}", { a: 1 }), "1 and {b}");
});

test("smoothing: first sample shown as is, then a steady countdown", () => {
  const first = smoothEstimate(null, { eta: 600, at: 0 });
  assert.equal(first.eta, 600);
  assert.equal(first.rose, false);
  // 20 s later the server says 580: exactly the countdown.
  const second = smoothEstimate(first, { eta: 580, at: 20_000 });
  assert.equal(second.eta, 580);
  assert.equal(second.rose, false);
});

test("smoothing: much better news is shown at once, a small dip is averaged", () => {
  const previous = smoothEstimate(null, { eta: 600, at: 0 });
  assert.equal(smoothEstimate(previous, { eta: 95, at: 20_000 }).eta, 95);
  // predicted 580, sample 520: within the tolerance (87), so half way
  assert.equal(smoothEstimate(previous, { eta: 520, at: 20_000 }).eta, 550);
});

test("smoothing: a small rise is absorbed, the countdown continues", () => {
  const previous = smoothEstimate(null, { eta: 600, at: 0 });
  // predicted 580; +60 is within the tolerance (15% of 580 = 87)
  const next = smoothEstimate(previous, { eta: 640, at: 20_000 });
  assert.equal(next.eta, 580);
  assert.equal(next.rose, false);
});

test("smoothing: a single outlier is ignored", () => {
  const previous = smoothEstimate(null, { eta: 600, at: 0 });
  const spike = smoothEstimate(previous, { eta: 1200, at: 20_000 });
  assert.equal(spike.eta, 580);
  assert.equal(spike.rose, false);
  const after = smoothEstimate(spike, { eta: 560, at: 40_000 });
  assert.equal(after.eta, 560);
  assert.equal(after.rose, false);
});

test("smoothing: a lasting rise is shown at once as one flagged rise", () => {
  let estimate = smoothEstimate(null, { eta: 600, at: 0 });
  const rises = [];
  for (let t = 20; t <= 400; t += 20) {
    estimate = smoothEstimate(estimate, { eta: 1500 - t, at: t * 1000 });
    if (estimate.rose) rises.push(t);
  }
  assert.deepEqual(rises, [40], "one rise, on the second sample that confirms it");
  assert.equal(estimate.eta, 1100);
  // Near the front the tolerance is the 30 s floor, not a fraction of almost nothing.
  const nearFront = smoothEstimate(smoothEstimate(null, { eta: 40, at: 0 }), {
    eta: 55,
    at: 10_000,
  });
  assert.equal(nearFront.eta, 30);
  assert.equal(nearFront.high, false);
});

test("smoothing: a jittery series never rises in what is shown", () => {
  let estimate = null;
  const shown = [];
  const truth = (t) => 900 - t; // the real remaining wait, seconds
  for (let t = 0; t <= 600; t += 20) {
    const noisy = truth(t) + (t % 40 === 0 ? 45 : -45);
    estimate = smoothEstimate(estimate, { eta: noisy, at: t * 1000 });
    assert.equal(estimate.rose, false, `rose at ${t}`);
    shown.push(estimate.eta);
  }
  for (let i = 1; i < shown.length; i += 1) assert.ok(shown[i] <= shown[i - 1], `step ${i}`);
  // ... and stays near the truth.
  assert.ok(Math.abs(shown.at(-1) - truth(600)) <= 60, String(shown.at(-1)));
});

test("position only falls: an older status copy does not move the visitor back", () => {
  assert.equal(nextPosition(null, 50), 50);
  assert.equal(nextPosition(50, 40), 40);
  assert.equal(nextPosition(40, 45), 40);
});

test("progress: share of the line passed since the first position seen", () => {
  assert.equal(progressPercent(101, 101), 0);
  assert.equal(progressPercent(101, 51), 50);
  assert.equal(progressPercent(101, 1), 100);
  assert.equal(progressPercent(1, 1), 0);
  assert.equal(progressPercent(null, 5), 0);
  assert.equal(progressPercent(10, 20), 0);
});

test("poll interval: never sooner than asked, at most a quarter later, within sane bounds", () => {
  assert.equal(pollDelay(20, constant(0)), 20_000);
  assert.equal(pollDelay(20, constant(0.999999)), 25_000);
  assert.equal(pollDelay(20, constant(0.5)), 22_500);
  assert.equal(pollDelay(undefined, constant(0)), 20_000);
  assert.equal(pollDelay(-3, constant(0)), 20_000);
  assert.equal(pollDelay(0.1, constant(0)), 2_000);
  assert.equal(pollDelay(10_000, constant(0)), MAX_POLL_SECONDS * 1000);
  const spread = new Set(Array.from({ length: 50 }, (_, i) => pollDelay(20, constant(i / 50))));
  assert.equal(spread.size, 50, "jitter spreads visitors who polled together");
});

test("back-off: doubles from 2 s to a 60 s cap, jittered within [half, whole]", () => {
  const ceilings = [2, 4, 8, 16, 32, 60, 60];
  ceilings.forEach((ceiling, index) => {
    const failures = index + 1;
    assert.equal(backoffDelay(failures, constant(0)), (ceiling * 1000) / 2, `low ${failures}`);
    assert.equal(backoffDelay(failures, constant(1)), ceiling * 1000, `high ${failures}`);
  });
  assert.equal(backoffDelay(1000, constant(1)), BACKOFF_MAX_SECONDS * 1000);
  assert.equal(backoffDelay(0, constant(1)), 2000);
});

test("answers: each /polling case of docs/data-model.md", () => {
  assert.deepEqual(
    interpretAnswer({ allow: true, origin: "https://shop.example.com/?beekeeper_token=x" }, BASE),
    { kind: "admitted", origin: "https://shop.example.com/?beekeeper_token=x" },
  );
  const waiting = {
    allow: false,
    state: "waiting",
    position: 12,
    eta_seconds: 300,
    poll_after: 20,
    rate: 100,
    slowed: true,
    updated_at: 1_790_000_000,
  };
  assert.deepEqual(interpretAnswer(waiting, BASE), {
    kind: "waiting",
    position: 12,
    etaSeconds: 300,
    pollAfter: 20,
    rate: 100,
    slowed: true,
    updatedAt: 1_790_000_000,
  });
  assert.deepEqual(interpretAnswer({ allow: false, state: "room_off", poll_after: 5 }, BASE), {
    kind: "room_off",
    pollAfter: 5,
  });
  for (const state of ["no_token", "malformed", "unknown", "expired"]) {
    assert.deepEqual(interpretAnswer({ allow: false, state }, BASE), { kind: "gone", state });
  }
});

test("answers breaking the contract are invalid (retried), never followed", () => {
  const invalid = { kind: "invalid" };
  assert.deepEqual(interpretAnswer(null, BASE), invalid);
  assert.deepEqual(interpretAnswer("allow", BASE), invalid);
  assert.deepEqual(interpretAnswer({ allow: "yes" }, BASE), invalid);
  assert.deepEqual(interpretAnswer({ allow: true, origin: "javascript:alert(1)" }, BASE), invalid);
  assert.deepEqual(interpretAnswer({ allow: true }, BASE), invalid);
  assert.deepEqual(interpretAnswer({ allow: false, state: "waiting", position: 0 }, BASE), invalid);
  assert.deepEqual(
    interpretAnswer({ allow: false, state: "waiting", position: 3, eta_seconds: -1 }, BASE),
    invalid,
  );
  assert.deepEqual(interpretAnswer({ allow: false, state: "teapot" }, BASE), invalid);
});

test("redirect targets: only http(s), relative ones resolved against the page", () => {
  assert.equal(safeRedirectUrl("beekeeper", BASE), "https://api.example.com/prod/beekeeper");
  assert.equal(safeRedirectUrl("data:text/html,hi", BASE), null);
  assert.equal(safeRedirectUrl("", BASE), null);
  assert.equal(safeRedirectUrl(42, BASE), null);
});

test("gone states map to their strings", () => {
  for (const state of ["no_token", "malformed", "unknown", "expired"]) {
    const key = goneKey(state);
    assert.equal(typeof en[`${key}Title`], "string", state);
    assert.equal(typeof en[`${key}Text`], "string", state);
  }
});

test("announcements: first and changes of kind at once; waiting updates rarely", () => {
  const at = 1_000_000;
  const waiting = (position, waitText) => ({ kind: "waiting", position, waitText });
  assert.equal(shouldAnnounce(null, waiting(100, "about 10 minutes"), at), true);
  const last = { ...waiting(100, "about 10 minutes"), at };
  // Within the minute nothing but a change of kind or reaching the front is spoken.
  assert.equal(shouldAnnounce(last, waiting(50, "about 5 minutes"), at + 10_000), false);
  assert.equal(shouldAnnounce(last, { kind: "retrying" }, at + 10_000), true);
  assert.equal(shouldAnnounce(last, waiting(1, "less than a minute"), at + 10_000), true);
  const later = at + ANNOUNCE_MIN_INTERVAL_MS;
  assert.equal(shouldAnnounce(last, waiting(95, "about 10 minutes"), later), false);
  assert.equal(shouldAnnounce(last, waiting(90, "about 10 minutes"), later), true);
  assert.equal(shouldAnnounce(last, waiting(99, "about 9 minutes"), later), true);
  // A run of failures is announced once.
  const failing = { kind: "retrying", at };
  assert.equal(shouldAnnounce(failing, { kind: "retrying" }, later * 2), false);
});

test("an answer without a published rate carries no estimate", () => {
  const waiting = (rate) =>
    interpretAnswer({ allow: false, state: "waiting", position: 3, eta_seconds: 0, poll_after: 5, rate, slowed: false, updated_at: 0 });
  assert.equal(hasEstimate(waiting(0)), false);
  assert.equal(hasEstimate(waiting(120)), true);
  assert.equal(hasEstimate(interpretAnswer({ allow: false, state: "room_off", poll_after: 5 })), false);
});
