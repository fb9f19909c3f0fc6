// The presence script (waiting_room_site/presence.js) in a stand-in browser: the very script the
// room serves, run in a fresh context with a hand-driven clock, scripted room answers and
// records of every heartbeat, event and navigation.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import vm from "node:vm";

// As the room serves it (waiting_room_site/presence.py): the heartbeat's path filled in.
const SOURCE = readFileSync(new URL("../../waiting_room_site/presence.js", import.meta.url), "utf8")
  .replace("{{HEARTBEAT}}", "presence");
const TOKEN = `Pr3_-${"s".repeat(17)}.77`;
const ROOM = "https://room.example/prod";
const HELD = { present: true, beat_seconds: 10, idle_seconds: 120 };

const settle = () => new Promise((resolve) => setImmediate(resolve));

class Browser {
  constructor({ dataset = { token: TOKEN }, search = "", src = `${ROOM}/presence.js`, storage } = {}) {
    this.now = 1_800_000_000_000;
    this.timers = [];
    this.beats = []; // [time, url, options]
    this.answers = []; // what the room answers next (a default of HELD)
    this.gone = 0;
    this.navigations = [];
    this.storage = storage ?? new Map();
    this.visibility = "visible";
    this.windowListeners = new Map();
    this.documentListeners = new Map();
    this.cancelGone = false;
    const browser = this;
    const listen = (map) => (type, listener) => map.set(type, [...(map.get(type) ?? []), listener]);
    const document = {
      currentScript: { dataset, src },
      get visibilityState() {
        return browser.visibility;
      },
      addEventListener: listen(this.documentListeners),
      dispatchEvent(event) {
        if (event.type === "beekeeper:gone") browser.gone += 1;
        if (browser.cancelGone && event.cancelable) event.defaultPrevented = true;
        return !event.defaultPrevented;
      },
    };
    class CustomEvent {
      constructor(type, init = {}) {
        this.type = type;
        this.cancelable = Boolean(init.cancelable);
        this.defaultPrevented = false;
      }
    }
    this.context = vm.createContext({
      document,
      CustomEvent,
      URL,
      URLSearchParams,
      Promise,
      location: {
        search,
        href: "https://shop.example/cart" + search,
        assign: (to) => browser.navigations.push(to),
      },
      sessionStorage: {
        getItem: (key) => (browser.storage.has(key) ? browser.storage.get(key) : null),
        setItem: (key, value) => browser.storage.set(key, String(value)),
      },
      Date: { now: () => browser.now },
      setTimeout: (fn, ms) => {
        browser.timers.push({ at: browser.now + ms, fn, id: browser.timers.length + 1 });
        return browser.timers.length;
      },
      clearTimeout: (id) => {
        const timer = browser.timers.find((t) => t.id === id);
        if (timer) timer.fn = null;
      },
      addEventListener: listen(this.windowListeners),
      fetch: (url, options) => {
        browser.beats.push([browser.now, url, options]);
        const answer = browser.answers.length ? browser.answers.shift() : { status: 200, body: HELD };
        if (answer === "offline") return Promise.reject(new TypeError("Failed to fetch"));
        return Promise.resolve({
          status: answer.status,
          json: () => Promise.resolve(answer.body),
        });
      },
    });
  }

  async load() {
    vm.runInContext(SOURCE, this.context);
    await settle();
    return this;
  }

  // Moves the clock on by `ms`, running every timer that falls due, in order.
  async advance(ms) {
    const end = this.now + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.fn && t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.now = due.at;
      const fn = due.fn;
      due.fn = null;
      fn();
      await settle();
    }
    this.now = end;
  }

  async fire(map, type, event = {}) {
    for (const listener of map.get(type) ?? []) listener({ type, ...event });
    await settle();
  }

  async hide() {
    this.visibility = "hidden";
    await this.fire(this.documentListeners, "visibilitychange");
  }

  async show() {
    this.visibility = "visible";
    await this.fire(this.documentListeners, "visibilitychange");
  }

  async window(type, event) {
    await this.fire(this.windowListeners, type, event);
  }

  beatTimes() {
    return this.beats.map(([at]) => (at - this.beats[0][0]) / 1000);
  }
}

test("a page beats at once, then as often as the room says, with no cookie and no body", async () => {
  const page = await new Browser().load();
  await page.advance(35_000);
  assert.deepEqual(page.beatTimes(), [0, 10, 20, 30]);
  const [, url, options] = page.beats[0];
  assert.equal(url, `${ROOM}/presence?token=${TOKEN}`);
  assert.equal(options.method, "POST");
  assert.equal(options.credentials, "omit");
  assert.equal(options.body, undefined); // no Content-Type: a CORS simple request
  assert.equal(options.headers, undefined);
  assert.equal(options.keepalive, false);
  assert.equal(options.referrerPolicy, "no-referrer");
});

test("a hidden tab beats once more and then not at all until it is shown", async () => {
  const page = await new Browser().load();
  await page.advance(4_000);
  await page.hide();
  await page.advance(60_000);
  assert.deepEqual(page.beatTimes(), [0, 4]);
  assert.equal(page.beats[1][2].keepalive, true); // outlives a tab being closed
  await page.show();
  await page.advance(10_000);
  assert.deepEqual(page.beatTimes(), [0, 4, 64, 74]);
});

test("closing or leaving the page sends one last heartbeat, however it is told", async () => {
  const closed = await new Browser().load();
  await closed.advance(3_000);
  await closed.hide();
  await closed.window("pagehide", { persisted: false });
  assert.deepEqual(closed.beatTimes(), [0, 3]);
  const left = await new Browser().load();
  await left.advance(5_000);
  await left.window("pagehide", { persisted: false });
  await left.hide();
  assert.deepEqual(left.beatTimes(), [0, 5]);
  assert.equal(left.beats[1][2].keepalive, true);
  // Back from the back-forward cache: beating again at once.
  left.visibility = "visible";
  await left.window("pageshow", { persisted: true });
  assert.deepEqual(left.beatTimes(), [0, 5, 5]);
});

test("an idle visitor's page stops beating until they use it again", async () => {
  const page = await new Browser().load();
  await page.advance(200_000);
  // idle_seconds 120: the beat due at 120 s finds nobody has used the page since it loaded.
  assert.deepEqual(page.beatTimes(), [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110]);
  await page.window("pointermove");
  assert.deepEqual(page.beatTimes().slice(-1), [200]);
  await page.advance(100_000);
  assert.equal(page.beatTimes().at(-1), 300);
  // Used again at 300 s while it beats: it keeps beating past 320 s (120 s after the use at
  // 200 s), and no more often than the room says.
  await page.window("keydown");
  await page.advance(60_000);
  assert.deepEqual(page.beatTimes().slice(-7), [300, 310, 320, 330, 340, 350, 360]);
});

test("a place that is gone stops the heartbeats and tells the shop's page", async () => {
  const page = await new Browser({ dataset: { token: TOKEN, goneUrl: "/cart?ended=1" } }).load();
  page.answers.push({ status: 200, body: { present: false } });
  await page.advance(30_000);
  assert.deepEqual(page.beatTimes(), [0, 10]);
  assert.equal(page.gone, 1);
  assert.deepEqual(page.navigations, ["https://shop.example/cart?ended=1"]);
  await page.hide();
  await page.show();
  assert.equal(page.beats.length, 2);
});

test("a page that handles the event itself stays, and a gone URL must be http(s)", async () => {
  const handled = new Browser({ dataset: { token: TOKEN, goneUrl: "/ended" } });
  handled.cancelGone = true;
  handled.answers.push({ status: 200, body: { present: false } });
  await handled.load();
  assert.equal(handled.gone, 1);
  assert.deepEqual(handled.navigations, []);
  const odd = new Browser({ dataset: { token: TOKEN, goneUrl: "javascript:alert(1)" } });
  odd.answers.push({ status: 200, body: { present: false } });
  await odd.load();
  assert.deepEqual(odd.navigations, []);
});

test("a room that fails is asked again soon; a room without presence is left alone", async () => {
  const page = new Browser();
  page.answers.push("offline", { status: 503, body: { present: false } }, { status: 429, body: {} });
  await page.load();
  await page.advance(20_000);
  // Retries 2 s apart, each well within the grace, then the room's own rhythm.
  assert.deepEqual(page.beatTimes(), [0, 2, 4, 6, 16]);
  assert.equal(page.gone, 0);
  const rateRoom = new Browser();
  rateRoom.answers.push({ status: 403, body: { error: "Missing Authentication Token" } });
  await rateRoom.load();
  await rateRoom.advance(60_000);
  await rateRoom.hide();
  await rateRoom.show();
  assert.deepEqual(rateRoom.beatTimes(), [0]);
  assert.equal(rateRoom.gone, 0);
});

test("without a well-formed token nothing is sent", async () => {
  for (const dataset of [{}, { token: "" }, { token: "not-a-token" }, { token: `${TOKEN}\n` }]) {
    const page = await new Browser({ dataset }).load();
    await page.advance(30_000);
    assert.deepEqual(page.beats, []);
  }
});

test("a token the admission brought in the URL serves the tab's next pages", async () => {
  const storage = new Map();
  const arrival = await new Browser({ dataset: {}, search: `?beekeeper_token=${TOKEN}`, storage }).load();
  assert.equal(arrival.beats[0][1], `${ROOM}/presence?token=${TOKEN}`);
  const nextPage = await new Browser({ dataset: {}, search: "?page=2", storage }).load();
  assert.equal(nextPage.beats[0][1], `${ROOM}/presence?token=${TOKEN}`);
});

test("a script the shop serves itself beats to the room data-room names", async () => {
  for (const room of ["https://room.example/prod", "https://room.example/prod/"]) {
    const page = await new Browser({
      dataset: { token: TOKEN, room },
      src: "https://shop.example/static/presence.js",
    }).load();
    assert.equal(page.beats[0][1], `https://room.example/prod/presence?token=${TOKEN}`);
  }
});
