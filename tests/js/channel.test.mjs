// The page's push channel (channel.js) on a stand-in socket and a clock run by hand: the
// AppSync Events handshake as core/push.py and local/channel.py speak it, pushed messages in
// order, the fallback's timing, the socket's jittered backoff, silence, a hidden tab; and the
// page (room.js) with it: no periodic fetch while subscribed, a pushed hold shown at once, the
// shared document every 30 s at most while refused, at once when the socket drops.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  authProtocol,
  fallbackDelay,
  openChannel,
  pushedMessages,
  socketRetryDelay,
} from "../../waiting_room_site/channel.js";
import { startRoom } from "../../waiting_room_site/room.js";
import { fakePage, TIMING } from "./fake_page.mjs";

const CHANNEL = {
  url: "ws://127.0.0.1:9/event/realtime",
  host: "127.0.0.1:8",
  key: "da2-abcdefghijklmnopqrstuvwxyz",
  channel: "/room/sale",
};

/** A stand-in WebSocket: records what the page sends; the test plays the server. */
class FakeSocket {
  static opened = [];

  constructor(url, protocols) {
    this.url = url;
    this.protocols = protocols;
    this.sent = [];
    this.closed = null;
    FakeSocket.opened.push(this);
  }

  send(text) {
    this.sent.push(JSON.parse(text));
  }

  close(code) {
    this.closed = code;
  }

  // The server's side.
  open() {
    this.onopen?.();
  }

  receive(message) {
    this.onmessage?.({ data: JSON.stringify(message) });
  }

  drop() {
    this.onclose?.({ code: 1006 });
  }

  /** The whole handshake, as a working channel answers it. */
  accept() {
    this.open();
    this.receive({ type: "connection_ack", connectionTimeoutMs: 300_000 });
    this.receive({ type: "subscribe_success", id: this.sent.at(-1).id });
  }
}

function clockAndTimers() {
  const timers = new Map();
  let next = 1;
  let clock = 1_800_000_000_000;
  const window = {
    WebSocket: FakeSocket,
    setTimeout(callback, delay) {
      timers.set(next, { callback, at: clock + delay });
      return next++;
    },
    clearTimeout(id) {
      timers.delete(id);
    },
  };
  return {
    env: { window, now: () => clock, random: () => 1 },
    advance(ms) {
      const until = clock + ms;
      for (;;) {
        const due = [...timers].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
        if (!due) break;
        timers.delete(due[0]);
        clock = due[1].at;
        due[1].callback();
      }
      clock = until;
    },
  };
}

function channelWith(random = () => 1) {
  FakeSocket.opened = [];
  const world = clockAndTimers();
  world.env.random = random;
  const messages = [];
  const statuses = [];
  const channel = openChannel(world.env, CHANNEL, TIMING, {
    onMessage: (m) => messages.push(m),
    onStatus: (s) => statuses.push(s),
  });
  return { ...world, channel, messages, statuses, socket: () => FakeSocket.opened.at(-1) };
}

const event = (seq, state = "paused") => JSON.stringify({ v: 1, seq, reason: "hold", doc: { state } });

test("the auth subprotocol is the auth object as unpadded base64url", () => {
  const protocol = authProtocol({ host: "a.example", "x-api-key": "da2-k?>>" });
  assert.match(protocol, /^header-[A-Za-z0-9_-]+$/);
  const b64 = protocol.slice("header-".length).replace(/-/g, "+").replace(/_/g, "/");
  assert.deepEqual(JSON.parse(atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4))), {
    host: "a.example",
    "x-api-key": "da2-k?>>",
  });
});

test("a data frame's event is read as one JSON text or an array of them; others are dropped", () => {
  assert.deepEqual(pushedMessages(event(5)).map((m) => m.seq), [5]);
  assert.deepEqual(pushedMessages([event(6), event(7)]).map((m) => m.seq), [6, 7]);
  assert.deepEqual(pushedMessages(["not json", JSON.stringify({ v: 2, seq: 1, doc: {} }), "{}"]), []);
});

test("the fallback fetches the document at most every 30 s, jittered down to three quarters", () => {
  assert.equal(TIMING.fallbackSeconds, 30);
  assert.equal(fallbackDelay(TIMING, () => 0), 30_000);
  assert.equal(fallbackDelay(TIMING, () => 1), 22_500);
  assert.equal(fallbackDelay(TIMING, () => 0.5), 26_250);
});

test("the socket is retried with full-jitter exponential backoff, capped", () => {
  const ceilings = [1, 2, 3, 4, 5, 6, 7, 8, 20].map((n) => socketRetryDelay(n, TIMING, () => 1));
  assert.deepEqual(ceilings, [2, 4, 8, 16, 32, 64, 120, 120, 120]);
  assert.equal(socketRetryDelay(3, TIMING, () => 0.25), 2);
  assert.equal(socketRetryDelay(1, TIMING, () => 0), 0);
});

test("the handshake is AppSync Events': subprotocols, init, ack, subscribe, success", () => {
  const c = channelWith();
  c.channel.visibility(true);
  const socket = c.socket();
  assert.equal(socket.url, CHANNEL.url);
  assert.equal(socket.protocols[0], "aws-appsync-event-ws");
  assert.equal(socket.protocols[1], authProtocol({ host: CHANNEL.host, "x-api-key": CHANNEL.key }));
  socket.open();
  assert.deepEqual(socket.sent, [{ type: "connection_init" }]);
  socket.receive({ type: "connection_ack", connectionTimeoutMs: 300_000 });
  assert.deepEqual(socket.sent[1], {
    type: "subscribe",
    id: "room",
    channel: "/room/sale",
    authorization: { host: CHANNEL.host, "x-api-key": CHANNEL.key },
  });
  assert.equal(c.channel.subscribed(), false);
  socket.receive({ type: "subscribe_success", id: "room" });
  assert.equal(c.channel.subscribed(), true);
  assert.deepEqual(c.statuses, [{ subscribed: true, dropped: false }]);
});

test("pushed messages reach the page once each, in order; an older one is dropped", () => {
  const c = channelWith();
  c.channel.visibility(true);
  c.socket().accept();
  c.socket().receive({ type: "data", id: "room", event: event(10) });
  c.socket().receive({ type: "data", id: "room", event: [event(9), event(12)] });
  c.socket().receive({ type: "data", id: "room", event: event(12) });
  assert.deepEqual(c.messages.map((m) => m.seq), [10, 12]);
});

test("a refused socket is reported and tried again after its backoff", () => {
  const c = channelWith(() => 0.5);
  c.channel.visibility(true);
  c.socket().drop(); // a throttled upgrade: closed before any ack
  assert.deepEqual(c.statuses, [{ subscribed: false, dropped: false }]);
  assert.equal(FakeSocket.opened.length, 1);
  c.advance(999); // the first retry: half of 2 s
  assert.equal(FakeSocket.opened.length, 1);
  c.advance(1);
  assert.equal(FakeSocket.opened.length, 2);
  c.socket().receive({ type: "connection_error", errors: [{ errorType: "UnauthorizedException" }] });
  c.advance(1_999); // the second: half of 4 s
  assert.equal(FakeSocket.opened.length, 2);
  c.advance(1);
  assert.equal(FakeSocket.opened.length, 3);
  c.socket().accept();
  assert.deepEqual(c.statuses.at(-1), { subscribed: true, dropped: false });
});

test("a handshake that never completes is a refusal; a silent subscribed socket has dropped", () => {
  const c = channelWith();
  c.channel.visibility(true);
  c.socket().open();
  c.advance(TIMING.handshakeSeconds * 1000);
  assert.deepEqual(c.statuses, [{ subscribed: false, dropped: false }]);
  c.advance(2_000);
  c.socket().accept();
  c.advance((TIMING.silenceSeconds - 1) * 1000);
  c.socket().receive({ type: "ka" });
  c.advance((TIMING.silenceSeconds - 1) * 1000);
  assert.equal(c.channel.subscribed(), true);
  c.advance(1_000);
  assert.equal(c.channel.subscribed(), false);
  assert.deepEqual(c.statuses.at(-1), { subscribed: false, dropped: true });
  assert.equal(FakeSocket.opened[1].closed, 1000);
});

test("a tab hidden a minute closes its socket and subscribes again once shown", () => {
  const c = channelWith();
  c.channel.visibility(true);
  c.socket().accept();
  c.channel.visibility(false);
  c.advance(TIMING.hiddenCloseSeconds * 1000 - 1);
  c.socket().receive({ type: "ka" });
  assert.equal(c.channel.subscribed(), true);
  c.channel.visibility(true); // back in time: the same socket stays
  c.channel.visibility(false);
  c.advance(TIMING.hiddenCloseSeconds * 1000);
  const first = FakeSocket.opened[0];
  assert.equal(first.closed, 1000);
  assert.deepEqual(first.sent.at(-1), { type: "unsubscribe", id: "room" });
  assert.deepEqual(c.statuses.at(-1), { subscribed: false, dropped: true });
  c.advance(600_000); // hidden: no retry
  assert.equal(FakeSocket.opened.length, 1);
  c.channel.visibility(true);
  assert.equal(FakeSocket.opened.length, 2);
});

test("a tab that loads hidden does not connect until shown", () => {
  const c = channelWith();
  c.channel.visibility(false);
  c.advance(600_000);
  assert.equal(FakeSocket.opened.length, 0);
  c.channel.visibility(true);
  assert.equal(FakeSocket.opened.length, 1);
});

// -- the page with its channel ------------------------------------------------------------

const T = 1_800_000_030_000;

function doc(serving, extra = {}) {
  return {
    state: "open",
    serving,
    rate: 600,
    flow: 600,
    slowed: false,
    updated_at: Math.floor((T - 1_000) / 1000),
    history: `${T - 1_000}:${serving}:600`,
    ...extra,
  };
}

async function pageWithChannel(documents) {
  FakeSocket.opened = [];
  const page = fakePage({
    base: "https://queue.shop.example/room#turn=50000",
    clockAt: T,
    documents,
    channel: CHANNEL,
    WebSocket: FakeSocket,
  });
  startRoom(page.env);
  await page.settle();
  return page;
}

test("a subscribed page fetches the document on load and once to catch up, then only when told", async () => {
  const page = await pageWithChannel([doc(100)]);
  const socket = FakeSocket.opened[0];
  socket.accept();
  for (let minute = 0; minute < 10; minute += 1) {
    await page.run(60_000, 1_000);
    socket.receive({ type: "ka" });
  }
  // On load, and once the edge's copy is younger than the subscription.
  assert.equal(page.record.documents.length, 2);
  assert.equal(page.record.documents[1] - T, (TIMING.stateMaxAgeSeconds + 1) * 1000);
  assert.equal(FakeSocket.opened.length, 1);
  // Silent for longer than the silence: dropped, and the document fetched at once.
  await page.run(TIMING.silenceSeconds * 1000, 1_000);
  assert.equal(page.record.documents.length, 3);
});

test("a pushed hold is shown at once, without a fetch", async () => {
  const page = await pageWithChannel([doc(100)]);
  FakeSocket.opened[0].accept();
  await page.run(5_000, 1_000);
  const fetched = page.record.documents.length;
  const now = page.now();
  const held = { ...doc(100, { state: "paused" }), now };
  FakeSocket.opened[0].receive({ type: "data", id: "room", event: JSON.stringify({ v: 1, seq: now, reason: "hold", doc: held }) });
  await page.settle();
  assert.equal(page.text("wait"), JSON.parse(page.env.document.config).strings.en.pausedText);
  assert.equal(page.record.documents.length, fetched);
});

test("a refused page fetches the document every 30 s at most, and a dropped one at once", async () => {
  const page = await pageWithChannel([doc(100)]);
  FakeSocket.opened[0].drop(); // refused
  await page.run(5 * 60_000, 500);
  const gaps = page.record.documents.slice(1).map((at, i) => at - page.record.documents[i]);
  assert.ok(gaps.length >= 9, `fetched ${page.record.documents.length} times in 5 minutes`);
  assert.ok(Math.max(...gaps) <= 30_000, `gaps ${gaps}`);
  // The retries: random() is 0 here, so each comes at once; one finally works.
  const socket = FakeSocket.opened.at(-1);
  socket.accept();
  await page.run(60_000, 500);
  const before = page.record.documents.length;
  socket.drop();
  await page.settle();
  assert.equal(page.record.documents.length, before + 1);
});

test("a tab hidden a minute closes its socket, fetches rarely, and subscribes again when shown", async () => {
  // 600 a minute from serving 100: the turn 50,000 is far beyond the reach, not predicted.
  const page = await pageWithChannel([doc(100)]);
  const socket = FakeSocket.opened[0];
  socket.accept();
  page.env.document.visibilityState = "hidden";
  page.env.document.dispatch("visibilitychange");
  await page.run(TIMING.hiddenCloseSeconds * 1000 + 1_000, 1_000);
  assert.equal(socket.closed, 1000);
  assert.deepEqual(socket.sent.at(-1), { type: "unsubscribe", id: "room" });
  const before = page.record.documents.length;
  await page.run(30 * 60_000, 5_000);
  // Every 5 minutes at most while no turn is predicted, and no socket meanwhile.
  assert.ok(page.record.documents.length - before <= 7, page.record.documents.length - before);
  assert.equal(FakeSocket.opened.length, 1);
  page.env.document.visibilityState = "visible";
  page.env.document.dispatch("visibilitychange");
  await page.settle();
  assert.equal(FakeSocket.opened.length, 2);
  assert.ok(page.record.documents.length >= before + 1);
});

test("an edge copy older than a pushed hold never undoes it", async () => {
  const page = await pageWithChannel([doc(100, { seq: 5 })]);
  const socket = FakeSocket.opened[0];
  socket.accept();
  const now = page.now();
  const held = { ...doc(100, { state: "paused", seq: now }), now };
  socket.receive({ type: "data", id: "room", event: JSON.stringify({ v: 1, seq: now, reason: "hold", doc: held }) });
  await page.settle();
  const paused = JSON.parse(page.env.document.config).strings.en.pausedText;
  assert.equal(page.text("wait"), paused);
  const fetched = page.record.documents.length;
  // The socket drops: the page fetches at once and gets the edge's copy from before the hold
  // (seq 5). The hold stays.
  socket.drop();
  await page.run(2_000, 500);
  assert.equal(page.record.documents.length, fetched + 1);
  assert.equal(page.text("wait"), paused);
});

// One a minute, held, this visitor first in line (turn 1), subscribed; resumed a second into a
// minute, so the shared state's lattice puts its slot at the next minute, while the room lets
// it in within seconds. `answers`: its own /polling's, in order.
const FIRST = { allow: false, state: "waiting", position: 1, turn: 1, eta_seconds: 60, poll_after: 2, rate: 1, slowed: false, updated_at: 1 };

async function resumedAtTheFront(answers) {
  FakeSocket.opened = [];
  const held = { state: "paused", serving: 0, rate: 1, flow: 0, slowed: false, updated_at: Math.floor(T / 1000) - 1, history: `${T - 1_000}:0:0` };
  const page = fakePage({
    base: "https://queue.shop.example/room#turn=1",
    clockAt: T,
    documents: [held],
    answers,
    channel: CHANNEL,
    WebSocket: FakeSocket,
  });
  startRoom(page.env);
  await page.settle();
  FakeSocket.opened[0].accept();
  await page.run(31_000, 500);
  const asked = page.record.polls.length;
  const now = page.now();
  const open = { state: "open", serving: 0, rate: 1, flow: 1, slowed: false, updated_at: Math.floor(now / 1000), history: `${now}:0:1`, now, seq: now };
  FakeSocket.opened[0].receive({ type: "data", id: "room", event: JSON.stringify({ v: 1, seq: now, reason: "resume", doc: open }) });
  return { page, asked };
}

test("the front of a line that moves again asks every few seconds until it is let in", async () => {
  const shop = "https://shop.example.com/?beekeeper_token=AAAAAAAAAAAAAAAAAAAAAA.1";
  const { page, asked } = await resumedAtTheFront([FIRST, FIRST, FIRST, { allow: true, origin: shop }]);
  await page.run(3 * TIMING.ownPollEverySeconds * 1000 + 500, 250);
  // At once, then every few seconds: the fourth answer lets it in, well before its slot.
  assert.equal(page.record.polls.length - asked, 4);
  assert.deepEqual(page.record.navigations, [shop]);
});

test("the front of a line that moves again stops asking every few seconds after a while", async () => {
  const { page } = await resumedAtTheFront([FIRST]);
  await page.run(TIMING.restartAskSeconds * 1000 + 500, 250);
  const asked = page.record.polls.length;
  // Then as the shared state's lattice says: nothing more until near its slot.
  await page.run(20_000, 250);
  assert.equal(page.record.polls.length, asked);
});

test("a pushed off sends a page whose turn is planned minutes ahead to ask its own /polling at once", async () => {
  // 600 a minute from serving 100: turn 1,000 comes in about 90 s, within a subscribed
  // page's reach, so its own /polling is planned then.
  FakeSocket.opened = [];
  const shop = "https://shop.example.com/?beekeeper_token=AAAAAAAAAAAAAAAAAAAAAA.1000";
  const page = fakePage({
    base: "https://queue.shop.example/room#turn=1000",
    clockAt: T,
    documents: [doc(100)],
    answers: [{ allow: true, origin: shop }],
    channel: CHANNEL,
    WebSocket: FakeSocket,
  });
  startRoom(page.env);
  await page.settle();
  FakeSocket.opened[0].accept();
  await page.run(10_000, 500);
  assert.equal(page.record.polls.length, 0);
  const now = page.now();
  const off = { ...doc(100, { state: "off", flow: 0, origin: "https://shop.example.com/" }), now, seq: now };
  FakeSocket.opened[0].receive({ type: "data", id: "room", event: JSON.stringify({ v: 1, seq: now, reason: "off", doc: off }) });
  await page.run(500, 250);
  assert.equal(page.record.polls.length, 1);
  assert.deepEqual(page.record.navigations, [shop]);
});
