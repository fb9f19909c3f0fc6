/* Beekeeper's presence script: keeps a visitor's place in the shop while this tab is open,
   visible and in use, and lets it go when they close it, hide it for longer than the room's
   grace or stop using it. On every page of the shop, with the visitor's token:

   <script src="ROOM/presence.js" data-token="TOKEN" integrity="sha384-..."
           crossorigin="anonymous" async></script>

   It sets no cookie and reads none, and sends nothing but its heartbeats to the room:
   docs/shop-integration.md, "Presence". */
(() => {
  "use strict";
  const script = document.currentScript;
  if (!script || typeof fetch !== "function") return;
  const TOKEN = /^[A-Za-z0-9_-]{22}\.[0-9]{1,12}$/;
  const PARAMETER = "beekeeper_token";
  const RETRY_MS = 2000;
  const USE = ["pointerdown", "pointermove", "keydown", "wheel", "scroll", "touchstart"];
  const data = script.dataset;

  // The token: the shop's data-token, or the one the admission brought in the URL, kept for
  // the tab's next pages (sessionStorage: this tab, this shop, until the tab closes).
  const found = () => {
    if (data.token) return data.token;
    const inUrl = new URLSearchParams(location.search).get(PARAMETER);
    try {
      if (inUrl) sessionStorage.setItem(PARAMETER, inUrl);
      return inUrl || sessionStorage.getItem(PARAMETER);
    } catch {
      return inUrl; // storage switched off
    }
  };
  const token = found();
  if (!TOKEN.test(token || "")) return;
  // The room: data-room when the shop serves this script itself, else where it came from.
  const base = data.room ? data.room.replace(/\/?$/, "/") : script.src;
  const url = new URL(`{{HEARTBEAT}}?token=${token}`, base).href;

  let beatMs = 10000; // until the room's first answer says how often
  let idleMs = 600000;
  let lastUse = Date.now();
  let timer = 0;
  let resting = false; // idle: no beats until the visitor uses the page again
  let away = false; // the tab was hidden or closed: its last heartbeat went out
  let gone = false; // the place is gone, or the room keeps no presence

  const hidden = () => document.visibilityState === "hidden";

  const next = (ms) => {
    if (gone || timer || hidden()) return;
    timer = setTimeout(() => {
      timer = 0;
      if (Date.now() - lastUse >= idleMs) resting = true;
      else beat(false);
    }, ms);
  };

  const lost = () => {
    gone = true;
    const event = new CustomEvent("beekeeper:gone", { cancelable: true });
    if (!document.dispatchEvent(event) || !data.goneUrl) return;
    const to = new URL(data.goneUrl, location.href);
    if (to.protocol === "https:" || to.protocol === "http:") location.assign(to.href);
  };

  const heard = (answer) => {
    if (!answer || answer.present !== true) return lost();
    if (answer.beat_seconds > 0) beatMs = answer.beat_seconds * 1000;
    if (answer.idle_seconds > 0) idleMs = answer.idle_seconds * 1000;
    next(beatMs);
  };

  // One heartbeat: the place is held a grace from now. `leaving`: the tab is being hidden or
  // closed, so the request must outlive the page.
  const beat = (leaving) => {
    clearTimeout(timer);
    timer = 0;
    if (gone) return;
    fetch(url, {
      method: "POST",
      mode: "cors",
      credentials: "omit",
      cache: "no-store",
      referrerPolicy: "no-referrer",
      keepalive: leaving,
    })
      .then((answer) => {
        if (answer.status === 200) return answer.json().then(heard);
        if (answer.status === 429 || answer.status >= 500) return next(RETRY_MS);
        gone = true; // this room answers no heartbeats (a rate-mode room): nothing to keep
      })
      .catch(() => next(RETRY_MS)); // no answer: try again soon, within the grace
  };

  const wake = () => {
    if (gone || hidden()) return;
    resting = false;
    away = false;
    beat(false);
  };

  // Closing a tab hides it and then hides the page: one last heartbeat for both.
  const leave = () => {
    if (away) return;
    away = true;
    beat(true);
  };

  document.addEventListener("visibilitychange", () => (hidden() ? leave() : wake()));
  addEventListener("pagehide", leave);
  addEventListener("pageshow", (event) => event.persisted && wake());
  for (const kind of USE) {
    addEventListener(
      kind,
      () => {
        lastUse = Date.now();
        if (resting) wake();
      },
      { capture: true, passive: true },
    );
  }
  beat(false);
})();
