// The work page's solver and controller (waiting_room_site/work/), run by `node --test tests/js/`.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";

import {
  challengeSeed,
  parseChallenge,
  searchCounters,
  sha256Words,
  solutionText,
  solveAll,
  visitorNonce,
} from "../../waiting_room_site/work/solver.js";
import { shares, startWork, workLanguage, workerSource } from "../../waiting_room_site/work/work.js";

const words = (digest) => Array.from({ length: 8 }, (_, i) => digest.readInt32BE(i * 4));
const firstWord = (seed, index, counter) => {
  const message = Buffer.alloc(40);
  seed.forEach((word, i) => message.writeInt32BE(word, i * 4));
  message.writeUInt32BE(index, 32);
  message.writeUInt32BE(counter, 36);
  return createHash("sha256").update(message).digest().readUInt32BE(0);
};

// Solved by core/join_work.py's solve(Challenge.parse(PYTHON_CHALLENGE)): the page's solver
// must find exactly these counters; and with the visitor nonce of the bytes 0 to 15
// (solve(challenge, VISITOR)), these.
const PYTHON_CHALLENGE =
  "1.1800000000.13743895.16.AAAAAAAAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBB";
const PYTHON_COUNTERS = [98, 1122, 244, 93, 38, 102, 412, 21, 52, 89, 12, 36, 70, 7, 79, 404];
const VISITOR = "AAECAwQFBgcICQoLDA0ODw";
const PYTHON_VISITOR_COUNTERS = [
  370, 355, 188, 219, 276, 554, 587, 118, 360, 369, 237, 1050, 7, 439, 66, 313,
];
// A CSPRNG that hands out the bytes 0, 1, 2, ...
const countingCrypto = () => ({
  getRandomValues(bytes) {
    bytes.forEach((_, i) => (bytes[i] = i));
    return bytes;
  },
});

test("SHA-256 is FIPS 180-4's at every padding boundary", () => {
  for (const length of [0, 1, 40, 55, 56, 63, 64, 65, 119, 120, 200]) {
    const bytes = new Uint8Array(length).map((_, i) => (i * 31 + length) & 0xff);
    const expected = words(createHash("sha256").update(bytes).digest());
    assert.deepEqual(Array.from(sha256Words(bytes)), expected, `length ${length}`);
  }
});

test("a sub-puzzle's counter is the first whose digest is below the target", () => {
  const seed = challengeSeed("anything");
  const target = 2 ** 32 / 300;
  const counter = searchCounters(seed, 5, target, 0, 100_000);
  assert.ok(counter >= 0);
  assert.ok(firstWord(seed, 5, counter) < target);
  for (let earlier = 0; earlier < counter; earlier++) {
    assert.ok(firstWord(seed, 5, earlier) >= target, `counter ${earlier} solves too`);
  }
  // A budget that ends before it: not found, and the search goes on from where it stopped.
  if (counter > 0) {
    assert.equal(searchCounters(seed, 5, target, 0, counter), -1);
    assert.equal(searchCounters(seed, 5, target, counter, 1), counter);
  }
});

test("the page solves the room's challenge exactly as the room's reference solver does", () => {
  const challenge = parseChallenge(PYTHON_CHALLENGE);
  assert.deepEqual(solveAll(challenge), PYTHON_COUNTERS);
  assert.equal(
    solutionText(challenge, PYTHON_COUNTERS),
    `${PYTHON_CHALLENGE}~${PYTHON_COUNTERS.join(".")}`,
  );
});

test("a shared challenge is solved with the page's own nonce, as the room checks it", () => {
  assert.equal(visitorNonce(countingCrypto()), VISITOR);
  assert.match(visitorNonce(globalThis.crypto), /^[A-Za-z0-9_-]{22}$/);
  assert.notEqual(visitorNonce(globalThis.crypto), visitorNonce(globalThis.crypto));
  const challenge = parseChallenge(PYTHON_CHALLENGE);
  assert.deepEqual(solveAll(challenge, VISITOR), PYTHON_VISITOR_COUNTERS);
  assert.equal(
    solutionText(challenge, PYTHON_VISITOR_COUNTERS, VISITOR),
    `${PYTHON_CHALLENGE}~${VISITOR}~${PYTHON_VISITOR_COUNTERS.join(".")}`,
  );
});

test("only a well-formed challenge is read", () => {
  assert.equal(parseChallenge(PYTHON_CHALLENGE).count, 16);
  for (const bad of [
    "",
    null,
    PYTHON_CHALLENGE + "\n",
    PYTHON_CHALLENGE.replace("1.", "2."),
    PYTHON_CHALLENGE.replace(".13743895.", ".0."),
    PYTHON_CHALLENGE.replace(".13743895.", ".4294967296."),
    PYTHON_CHALLENGE.replace(".16.", ".0."),
    PYTHON_CHALLENGE.replace(".16.", ".65."),
    PYTHON_CHALLENGE.slice(0, -1),
  ]) {
    assert.equal(parseChallenge(bad), null, String(bad));
  }
});

test("workers share the sub-puzzles round robin and run the solver's own code", () => {
  assert.deepEqual(shares(5, 2), [[0, 2, 4], [1, 3]]);
  assert.deepEqual(shares(2, 4), [[0], [1]]);
  const source = workerSource();
  assert.match(source, /function searchCounters\(/);
  assert.match(source, /function roundConstants\(/);
  assert.match(source, /onmessage = /);
});

test("the page speaks the visitor's language when it can", () => {
  assert.equal(workLanguage(["de-CH", "en"], ["en", "de"], "en"), "de");
  assert.equal(workLanguage(["fr", "en-GB"], ["en", "de"], "en"), "en");
  assert.equal(workLanguage(["fr"], ["en", "de"], "en"), "en");
  assert.equal(workLanguage(undefined, ["en", "de"], "en"), "en");
});

// A page around startWork: its hooks, a window without workers, timers run by hand.
function fakePage(hash) {
  const elements = new Map();
  const element = (name) => {
    if (!elements.has(name)) {
      elements.set(name, {
        textContent: "",
        hidden: name === "work-missing",
        style: {},
        attributes: new Map(),
        setAttribute(key, value) {
          this.attributes.set(key, String(value));
        },
        getAttribute(key) {
          return this.attributes.get(key) ?? null;
        },
      });
    }
    return elements.get(name);
  };
  const config = {
    joinUrl: "beekeeper",
    parameter: "work",
    maxWorkers: 4,
    defaultLanguage: "en",
    strings: {
      en: { working: "working", done: "done", progressLabel: "check" },
      de: { working: "prüfe", done: "fertig", progressLabel: "Prüfung" },
    },
  };
  const timers = [];
  const navigated = [];
  const document = {
    documentElement: {},
    getElementById: (id) => (id === "beekeeper-work" ? { textContent: JSON.stringify(config) } : null),
    querySelector: (selector) => element(selector.match(/data-bk="([^"]+)"/)[1]),
    querySelectorAll: () => [],
  };
  const window = {
    location: { hash, replace: (url) => navigated.push(url) },
    navigator: { hardwareConcurrency: 2 },
    crypto: countingCrypto(),
    setTimeout: (callback) => timers.push(callback),
  };
  return { env: { document, window, languages: ["de-DE"] }, element, timers, navigated };
}

test("without workers the page solves on its own thread, then goes back to the link", () => {
  const page = fakePage(`#${PYTHON_CHALLENGE}`);
  startWork(page.env);
  assert.equal(page.element("work-status").textContent, "prüfe");
  assert.equal(page.element("work-progress").getAttribute("aria-label"), "Prüfung");
  let steps = 0;
  while (page.timers.length && steps < 10_000) {
    page.timers.shift()();
    steps += 1;
  }
  assert.equal(page.element("work-progress").getAttribute("aria-valuenow"), "100");
  assert.equal(page.element("work-status").textContent, "fertig");
  const solution = `${PYTHON_CHALLENGE}~${VISITOR}~${PYTHON_VISITOR_COUNTERS.join(".")}`;
  assert.deepEqual(page.navigated, [`beekeeper?work=${encodeURIComponent(solution)}`]);
});

test("without a challenge the page offers the link and never loops", () => {
  const page = fakePage("#not-a-challenge");
  assert.equal(startWork(page.env), null);
  assert.equal(page.element("work-missing").hidden, false);
  assert.equal(page.element("work-working").hidden, true);
  assert.deepEqual(page.navigated, []);
  assert.equal(page.timers.length, 0);
});
