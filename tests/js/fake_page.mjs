// A stand-in for the browser around room.js's startRoom(env): the few DOM calls it makes (hooks
// found by data-bk, text, hidden, attributes, focus, click listeners), timers it can run by hand,
// a scripted /polling and records of every request, beacon and navigation. Not a test file
// (node --test runs *.test.mjs only).

import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";

// The figures of the page's rule, as render_page puts them in the room config (core/serving.py):
// asked of this checkout's Python once, so the tests run the page with the very same figures.
const repo = path.resolve(new URL(".", import.meta.url).pathname, "../..");
const python = process.env.BEEKEEPER_PYTHON ?? path.join(repo, ".venv/bin/python");
export const TIMING = JSON.parse(
  execFileSync(
    python,
    ["-c", "import json; from beekeeper.waiting_room_site import page_timing; print(json.dumps(page_timing()))"],
    { cwd: repo, encoding: "utf8" },
  ),
);

const load = (lang) =>
  JSON.parse(readFileSync(new URL(`../../waiting_room_site/locales/${lang}.json`, import.meta.url), "utf8"));

// The hooks of the default template (waiting_room_site/index.html).
const HOOKS = [
  "status",
  "waiting",
  "position",
  "full-note",
  "details",
  "wait",
  "wait-note",
  "progress",
  "progress-fill",
  "checked",
  "retry",
  "leave",
  "notice",
  "notice-title",
  "notice-text",
  "notice-link",
];
// A custom template may leave capacity mode's hooks visible: the page hides them itself.
const HIDDEN_AT_START = new Set(["details", "wait-note", "retry", "notice"]);

class FakeElement {
  constructor(document, name) {
    this.document = document;
    this.name = name;
    this.textContent = "";
    this.hidden = HIDDEN_AT_START.has(name);
    this.attributes = new Map();
    this.listeners = new Map();
    this.style = {};
  }

  setAttribute(name, value) {
    this.attributes.set(name, String(value));
  }

  getAttribute(name) {
    return this.attributes.get(name) ?? null;
  }

  addEventListener(type, listener) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }

  focus() {
    this.document.activeElement = this;
  }

  click() {
    for (const listener of this.listeners.get("click") ?? []) listener({ type: "click" });
  }
}

class FakeDocument {
  constructor(config, hooks) {
    this.config = JSON.stringify(config);
    this.elements = new Map(hooks.map((name) => [name, new FakeElement(this, name)]));
    this.documentElement = { lang: "" };
    this.activeElement = null;
    this.visibilityState = "visible";
  }

  getElementById(id) {
    return id === "beekeeper-room" ? { textContent: this.config } : null;
  }

  querySelector(selector) {
    const match = /^\[data-bk="([\w-]+)"\]$/.exec(selector);
    return (match && this.elements.get(match[1])) || null;
  }

  querySelectorAll() {
    return [];
  }

  addEventListener(type, listener) {
    this.listeners = this.listeners ?? new Map();
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }

  dispatch(type) {
    for (const listener of this.listeners?.get(type) ?? []) listener({ type });
  }
}

/** The tab's sessionStorage: pass one to two pages and the second is a reload of the first. */
export function fakeStorage() {
  const items = new Map();
  return {
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => items.set(key, String(value)),
    removeItem: (key) => items.delete(key),
  };
}

/**
 * A page for startRoom: `answers` are /polling bodies in order (the last repeats); `documents`
 * the shared state's (/state) in order, the last repeating (none: /state fails, and the page
 * falls back to its own /polling); `beacon` is what navigator.sendBeacon returns (true,
 * false), or null for a browser without it; `clockAt` the clock's start (epoch ms);
 * `lateDocuments` holds each /state answer back until the page's other answers are in (an edge
 * slower than the origin for once). `channel` (the config's push channel) and `WebSocket` (a
 * stand-in class: channel.test.mjs's) give the page its push channel. `storage` is the tab's
 * sessionStorage (a new one: a new tab).
 */
export function fakePage({
  answers = [],
  documents = [],
  beacon = true,
  base = "https://api.example.com/prod/room",
  hooks = HOOKS,
  languages = ["en-GB"],
  timing = TIMING,
  clockAt = 1_790_000_000_000,
  age = 0,
  lateDocuments = false,
  channel = undefined,
  WebSocket = undefined,
  storage = fakeStorage(),
}) {
  const config = {
    displayName: "Spring Sale",
    pollUrl: "polling",
    stateUrl: "state",
    joinUrl: "beekeeper",
    enterUrl: "enter",
    leaveUrl: "leave",
    defaultLanguage: "en",
    timing,
    strings: { en: load("en"), de: load("de") },
    channel,
  };
  const document = new FakeDocument(config, hooks);
  const timers = new Map();
  let nextTimer = 1;
  let clock = clockAt;
  const script = [...answers];
  const states = [...documents];
  const record = { polls: [], documents: [], posts: [], beacons: [], navigations: [] };
  const window = {
    document,
    setTimeout(callback, delay) {
      const id = nextTimer++;
      timers.set(id, { callback, at: clock + delay });
      return id;
    },
    clearTimeout(id) {
      timers.delete(id);
    },
    sessionStorage: storage,
    WebSocket,
  };

  const env = {
    document,
    window,
    languages,
    random: () => 0,
    now: () => clock,
    baseUrl: base,
    navigate: (url) => record.navigations.push(url),
    async fetch(url, options = {}) {
      const resolved = new URL(url, base).href;
      if ((options.method ?? "GET") === "POST") {
        record.posts.push({ url: resolved, options });
        return { ok: true, json: async () => ({ left: true }) };
      }
      if (resolved.endsWith("/state")) {
        record.documents.push(clock);
        if (lateDocuments) for (let i = 0; i < 3; i += 1) await new Promise((go) => setImmediate(go));
        if (!states.length) return { ok: false, status: 503, json: async () => ({}) };
        const state = states.length > 1 ? states.shift() : states[0];
        const given = typeof state === "function" ? state(clock) : state;
        // The edge's copy was made a moment ago: its request time, unless the test says.
        const body = given && given.now === undefined ? { ...given, now: clock - 200 } : given;
        return { ok: true, headers: { get: (name) => (name === "Age" ? String(age) : null) }, json: async () => body };
      }
      record.polls.push(resolved);
      const body = script.length > 1 ? script.shift() : script[0];
      return { ok: true, json: async () => body };
    },
    sendBeacon:
      beacon === null
        ? undefined
        : (url, data) => {
            record.beacons.push({ url, data });
            return beacon;
          },
  };

  const hook = (name) => document.elements.get(name);
  return {
    env,
    record,
    hook,
    text: (name) => hook(name)?.textContent ?? "",
    shown: (name) => hook(name) !== undefined && !hook(name).hidden,
    pendingTimers: () => timers.size,
    /** Lets the page's pending promises (a poll's fetch and json) settle. */
    async settle() {
      for (let i = 0; i < 10; i += 1) await new Promise((resolve) => setImmediate(resolve));
    },
    now: () => clock,
    /** Moves the clock on by `ms` and runs the timers that came due, then lets polls settle. */
    async advance(ms) {
      clock += ms;
      for (const [id, timer] of [...timers]) {
        if (timer.at <= clock) {
          timers.delete(id);
          timer.callback();
        }
      }
      await this.settle();
    },
    /** Moves the clock on in steps of `step` ms, running timers as they come due. */
    async run(ms, step = 100) {
      for (let done = 0; done < ms; done += step) await this.advance(Math.min(step, ms - done));
    },
  };
}
