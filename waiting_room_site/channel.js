// The waiting page's push channel: a WebSocket to the room's AppSync Event API (or a local
// room's loopback channel, which speaks the same protocol: local/channel.py), subscribed to the
// room's channel. core/push.py owns the protocol, the message and every figure here (the room
// config's `timing` brings them); docs/pipeline.md says what is pushed and what is polled.
//
// Protocol (AWS AppSync Events, "Understanding the Event API WebSocket protocol"): offer the
// subprotocols `aws-appsync-event-ws` and `header-<base64url {"host", "x-api-key"}>`; send
// `connection_init`, get `connection_ack`; send `subscribe` {id, channel, authorization}, get
// `subscribe_success`; then `ka` keep-alives every minute and `data` frames whose `event` is the
// published JSON text (AWS's page shows an array of them too: both are read).
//
// Any failure to be subscribed within the handshake timeout (a refused upgrade, a close, a
// `connection_error`, a `subscribe_error`, silence) is a refusal; a subscribed socket that
// closes or falls silent has dropped. Either way the page is told (`onStatus`), keeps the shared
// document as its fallback, and the socket is tried again after a full-jitter backoff. A tab
// hidden for a while closes its socket; shown again, it subscribes again.
//
// render_page() inlines this file with page.js and room.js into one module script: every
// top-level name stays unique across the three.

/** The `header-` subprotocol: the auth object as unpadded base64url (AWS's own client's way). */
export function authProtocol(auth) {
  const b64 = btoa(JSON.stringify(auth));
  return `header-${b64.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")}`;
}

/** The room's messages in a `data` frame's `event` (a JSON text, or an array of them). */
export function pushedMessages(event) {
  const found = [];
  for (const text of [event].flat()) {
    try {
      const m = JSON.parse(text);
      if (m?.v === 1 && m.seq > 0 && m.doc) found.push(m);
    } catch {
      // Not the room's message: nothing to apply.
    }
  }
  return found;
}

/** Milliseconds to the next fetch of the shared document while the page has no channel. */
export function fallbackDelay(timing, random) {
  return Math.round(timing.fallbackSeconds * (1 - timing.fallbackJitter * random()) * 1000);
}

/** Seconds before the socket is tried again after `failures` (>= 1) failures in a row (full jitter). */
export function socketRetryDelay(failures, timing, random) {
  const ceiling = timing.retryFirstSeconds * 2 ** Math.min(failures - 1, 16);
  return Math.min(timing.retryMaxSeconds, ceiling) * random();
}

/** Seconds to a hidden page's next fetch once its socket is closed (core/push.py's hidden_document_delay). */
export function hiddenDelay({ now, ownPollAt, claimSeconds = 0 }, timing) {
  const every = timing.documentEverySeconds;
  const lead = timing.hiddenLeadSeconds;
  let most = timing.hiddenAtMostSeconds;
  if (claimSeconds > 0) most = Math.min(most, Math.max(every, claimSeconds / 2));
  if (ownPollAt == null) return Math.min(most, timing.hiddenDocumentMaxSeconds);
  const ahead = ownPollAt - now;
  return Math.min(most, Math.max(every, ahead > lead ? ahead - lead : ahead + lead));
}

/**
 * The page's channel. `env`: {window (its WebSocket and timers), now, random}; `channel`: the
 * room config's {url, host, key, channel}; `onMessage(message)`: each newer message of the room
 * (`{v, seq, reason, doc}`; one not newer than the last is dropped); `onStatus({subscribed,
 * dropped})`: on being subscribed, refused (`dropped` false) or losing a working socket
 * (`dropped` true). Returns {visibility, stop, subscribed, heardAt}.
 */
export function openChannel(env, channel, timing, { onMessage, onStatus }) {
  const { window } = env;
  // ws: the socket; up: subscribed; timers: the handshake's or the silence's, the retry's, the
  // hidden tab's.
  let ws = null;
  let up = false;
  let failures = 0;
  let lastSeq = 0;
  let heard = 0;
  let hidden = false;
  let stopped = false;
  let watch = null;
  let retry = null;
  let hiding = null;
  const later = (seconds, action) => window.setTimeout(action, seconds * 1000);
  const cancel = (timer) => timer !== null && window.clearTimeout(timer);
  const send = (message) => ws.send(JSON.stringify(message));
  const auth = { host: channel.host, "x-api-key": channel.key };

  function connect() {
    cancel(retry);
    retry = null;
    if (stopped || ws || hidden) return;
    try {
      ws = new window.WebSocket(channel.url, ["aws-appsync-event-ws", authProtocol(auth)]);
    } catch {
      return failed();
    }
    const socket = ws;
    watch = later(timing.handshakeSeconds, failed);
    socket.onopen = () => send({ type: "connection_init" });
    socket.onmessage = (event) => frame(event.data);
    socket.onclose = socket.onerror = () => ws === socket && failed();
  }

  function frame(data) {
    let m;
    try {
      m = JSON.parse(data);
    } catch {
      return;
    }
    heard = env.now();
    const type = m?.type;
    if (type === "connection_ack") {
      cancel(watch);
      watch = later(timing.handshakeSeconds, failed);
      send({ type: "subscribe", id: "room", channel: channel.channel, authorization: auth });
    } else if (type === "subscribe_success" || up) {
      // Any frame of a subscribed socket: it is alive (a `ka` a minute, AWS says).
      cancel(watch);
      watch = later(timing.silenceSeconds, failed);
      if (!up) {
        up = true;
        failures = 0;
        onStatus({ subscribed: true, dropped: false });
      }
    }
    if (type === "data") {
      for (const pushed of pushedMessages(m.event)) {
        if (pushed.seq > lastSeq) onMessage(pushed, (lastSeq = pushed.seq));
      }
    } else if (/error$/.test(type)) failed();
  }

  // Closes the socket; true when it was subscribed.
  function close() {
    const was = up;
    cancel(watch);
    if (ws) {
      ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null;
      try {
        if (was) send({ type: "unsubscribe", id: "room" });
        ws.close(1000);
      } catch {
        // Already closing: nothing more to say to it.
      }
    }
    ws = null;
    up = false;
    return was;
  }

  function failed() {
    if (stopped) return;
    const dropped = close();
    failures += 1;
    if (!hidden) retry = later(socketRetryDelay(failures, timing, env.random), connect);
    onStatus({ subscribed: false, dropped });
  }

  // The tab shown or hidden: hidden for hiddenCloseSeconds, the socket is closed (and not
  // tried again while hidden); shown again, it subscribes at once.
  function visibility(visible) {
    if (stopped) return;
    if (visible) {
      cancel(hiding);
      hiding = null;
      hidden = false;
      return connect();
    }
    hiding ??= later(timing.hiddenCloseSeconds, () => {
      hiding = null;
      hidden = true;
      cancel(retry);
      onStatus({ subscribed: false, dropped: close() });
    });
  }

  function stop() {
    stopped = true;
    close();
    cancel(retry);
    cancel(hiding);
  }

  return { visibility, stop, subscribed: () => up, heardAt: () => heard };
}
