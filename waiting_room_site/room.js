// The waiting room page's controller: reads the room's config, follows the room's shared state
// (/state, the same for everyone, kept by the edge), asks its own /polling only near its turn,
// shows the place and a live estimate, and in capacity mode lets the visitor leave (/leave).
// Every decision (the serving number, when to ask, formatting, what to announce) is a pure
// function of page.js, whose figures come from the room config's `timing` (core/serving.py);
// this file only touches the page. Elements are found by their data-bk hooks (docs/page.md).
//
// The room's push channel (channel.js, when the config names one) tells the page each change
// at once: while it is subscribed the page fetches the shared state only on load and when the
// tab is shown again, and extrapolates the serving number up to the next full copy; without it
// (refused, dropped, a tab hidden a minute) the page fetches the shared state again (at most
// every 30 s while watched) and keeps the shared rule's shorter reach.
//
// Without the shared state (the edge can not be reached, or the document is not valid) the
// page falls back to asking its own /polling as often as the answers say (`poll_after`), so a
// visitor is never stranded; when neither answers for a while it says so, keeps the place and
// stops the estimate until the room answers again. A fetched document goes through
// handleDocument, the one place the page follows the room's state.

import {
  admissionUrl,
  asSentence,
  backoffDelay,
  chooseLanguage,
  clockOffset,
  DEFAULT_LANGUAGE,
  documentDelay,
  documentPredates,
  fill,
  answerPoint,
  firstOwnPoll,
  formatClock,
  formatNumber,
  formattingLocale,
  formatCountdown,
  formatPosition,
  formatStart,
  formatWait,
  hasEstimate,
  holdCame,
  goneKey,
  interpretAnswer,
  interpretDocument,
  isFull,
  nextMoment,
  nextPosition,
  placeShown,
  pollDelay,
  prequeueDelay,
  progressPercent,
  readFragment,
  safeRedirectUrl,
  secondsToTurn,
  sendLeave,
  withAnswer,
  shouldAnnounce,
  shownMoment,
  smoothEstimate,
  turnDueAt,
  waitNoteKey,
} from "./page.js";
import { fallbackDelay, hiddenDelay, openChannel } from "./channel.js";

// How long the "why your wait went up" note stays after a rise, and "the room is back".
const RISE_NOTE_MS = 120_000;
const BACK_NOTE_MS = 30_000;
const FIRST_POSITION_KEY = "beekeeper.firstPosition";
// The turn this tab last loaded with: the same turn again is a reload (or a tab brought back).
const SHOWN_TURN_KEY = "beekeeper.shownTurn";
// Offset samples kept for the room's clock (one a document).
const CLOCK_SAMPLES = 8;

export function startRoom(env) {
  const { document, window } = env;
  const config = JSON.parse(document.getElementById("beekeeper-room").textContent);
  const baseTiming = config.timing;
  // The rule's figures: the subscribed page's reach while the channel is up (onChannel).
  let timing = baseTiming;
  const lang = chooseLanguage(
    env.languages,
    Object.keys(config.strings),
    config.defaultLanguage || DEFAULT_LANGUAGE,
  );
  const t = config.strings[lang];
  const locale = formattingLocale(env.languages, lang);
  const hook = (name) => document.querySelector(`[data-bk="${name}"]`);
  const setText = (name, text) => {
    const element = hook(name);
    if (element) element.textContent = text;
  };
  const show = (name, visible) => {
    const element = hook(name);
    if (element) element.hidden = !visible;
  };

  document.documentElement.lang = lang;
  for (const element of document.querySelectorAll("[data-bk-text]")) {
    const key = element.getAttribute("data-bk-text");
    if (typeof t[key] === "string") element.textContent = t[key];
  }
  setText("position", t.checking);
  // The live region must be one before anything is written to it, whatever the template says.
  const status = hook("status");
  status.setAttribute("role", "status");
  status.setAttribute("aria-live", "polite");
  status.setAttribute("aria-atomic", "true");
  const progress = hook("progress");
  if (progress) progress.setAttribute("aria-label", t.progressLabel);
  const joinUrl = safeRedirectUrl(config.joinUrl, env.baseUrl) || config.joinUrl;
  // The routes an admission may go through (capacity mode's /enter): names from the page's own
  // config, relative to the page like pollUrl; an answer only picks one by name.
  const admissionRoutes = config.enterUrl ? { enter: config.enterUrl } : {};
  const fragment = timing ? readFragment(env.baseUrl, timing) : {};

  const state = {
    turn: fragment.turn ?? null, // the serving number at which this visitor's turn comes
    awaitingDraw: fragment.prequeue === true, // a pre-queue place: the draw decides the turn
    doc: null, // the shared state as last fetched (interpretDocument)
    docAt: 0, // when it arrived (this clock)
    docNextAt: 0,
    docFailures: 0,
    // Subscribed: one fetch owed at this moment (onChannel).
    catchUpAt: 0,
    // The room's push the document held says (core/push.py).
    seq: 0,
    offsets: [], // the room's clock against this one, one sample a document
    ownNear: false, // asking every few seconds: the turn has come or is about to
    movedAt: 0, // when the line last moved again after standing still (this clock)
    ownInFlight: false,
    ownNextAt: 0,
    // Until the first document with a turn: a page loading at the front asks at once.
    loading: true,
    answered: null, // the line as the last own /polling answer said it (core.serving.with_answer)
    ownFailures: 0,
    lastAnswer: null, // the last waiting answer of /polling (shown when there is no document)
    position: null,
    estimate: null,
    roseAt: -Infinity,
    announced: null,
    docTimer: null,
    ownTimer: null,
    tick: null,
    countdown: null,
    stopped: false,
    capacity: false,
    firstPosition: readFirstPosition(window),
    stillKind: false, // the last document said the line does not move (paused, closed, off)
    closed: false, // the event is closed: the page listens for a resume
    lettingIn: false, // the room is off: the page asks to be let in, with its ticket
    failingSince: { doc: 0, own: 0 }, // when the current run of failed fetches began
    ownAnsweredAt: 0, // when its own /polling last answered
    outage: null, // {since} while the room is out of reach
    outageTimer: null,
    backUntil: 0, // "the room is back" stays until then
  };

  // The room's time now (seconds), this clock corrected when it is clearly wrong.
  const roomNow = () => (env.now() + clockOffset(state.offsets)) / 1000;
  const visible = () => document.visibilityState !== "hidden";

  function announce(next, text) {
    const now = env.now();
    if (!shouldAnnounce(state.announced, next, now)) return;
    state.announced = { ...next, at: now };
    setText("status", text);
  }

  function showNotice(title, text, linkText, href) {
    show("waiting", false);
    show("retry", false);
    setText("notice-title", title);
    setText("notice-text", text);
    const link = hook("notice-link");
    if (link) {
      link.textContent = linkText;
      link.setAttribute("href", href);
    }
    show("notice", true);
    announce({ kind: "notice" }, /[.!?]$/.test(title) ? `${title} ${text}` : `${title}. ${text}`);
  }

  // When the page last heard from the room and will next; the details are shown.
  function showChecked(lastAt, nextAt) {
    // Subscribed: the page last heard from the room at the channel's last frame, and takes it
    // as dropped without a frame (a keep-alive comes every minute) for the silence.
    const live = channel?.subscribed();
    if (live) lastAt = channel.heardAt();
    if (live || nextAt === Infinity) nextAt = lastAt + timing.silenceSeconds * 1000;
    setText(
      "checked",
      fill(t.checkedTimes, { last: formatClock(lastAt, locale), next: formatClock(nextAt, locale) }),
    );
    if (env.now() >= state.backUntil) show("retry", false);
    show("details", true);
  }

  function stop() {
    state.stopped = true;
    window.clearTimeout(state.docTimer);
    window.clearTimeout(state.ownTimer);
    window.clearTimeout(state.tick);
    window.clearTimeout(state.countdown);
    window.clearTimeout(state.outageTimer);
    channel?.stop();
  }

  function leaveFor(url, title, text, linkText) {
    stop();
    showNotice(title, text, linkText, url);
    env.navigate(url);
  }

  function showLeft() {
    clearFirstPosition(window);
    showNotice(t.leftTitle, t.leftText, t.rejoinLink, joinUrl);
  }

  // The event is over: said with the operator's line; the place is kept and the page keeps
  // listening (handleDocument) in case the event resumes.
  function showClosed(message) {
    state.closed = true;
    window.clearTimeout(state.ownTimer);
    state.ownTimer = null;
    window.clearTimeout(state.tick);
    const text = message ? `${t.closedText} ${asSentence(message)}` : t.closedText;
    showNotice(t.closedTitle, text, t.joinLink, joinUrl);
    show("notice-link", false);
  }

  // Back to waiting from a notice that did not end the visit (closed, the room off).
  function reopen() {
    if (!state.closed && !state.lettingIn) return;
    state.closed = false;
    state.lettingIn = false;
    show("notice", false);
    show("waiting", true);
  }

  // The room is off: it lets everyone in, each with a ticket; the page asks for its own at
  // once and every few seconds until it is there.
  function letIn() {
    if (!state.lettingIn) {
      state.lettingIn = true;
      window.clearTimeout(state.tick);
      showNotice(t.roomOffTitle, t.roomOffText, t.roomOffLink, joinUrl);
      show("notice-link", false);
      // At once, whatever was planned (a subscribed page plans its turn minutes ahead).
      if (!state.ownInFlight) scheduleOwn(0);
    }
    if (!state.ownInFlight && !state.ownTimer) scheduleOwn(0);
  }

  function showFailure(failures, nextAt) {
    const text = fill(t.retrying, { next: formatClock(nextAt, locale) });
    setText("retry", text);
    show("retry", true);
    announce({ kind: "retrying" }, text);
    return failures;
  }

  // -- out of reach: fetches that keep failing ----------------------------------------------

  function failed(kind) {
    if (!state.failingSince[kind]) state.failingSince[kind] = env.now();
    if (!state.outageTimer && !state.outage) {
      const since = state.failingSince[kind];
      const delay = Math.max(0, since + timing.outOfReachSeconds * 1000 - env.now());
      state.outageTimer = window.setTimeout(() => {
        state.outageTimer = null;
        checkOutage();
      }, delay);
    }
    checkOutage();
  }

  // Since when the room has been out of the page's reach (Infinity: it is not): its own
  // /polling failing, or the shared state's fetches failing with no own answer since they
  // began (a page whose own /polling answers has reached the room).
  function unreachedSince() {
    const { doc, own } = state.failingSince;
    const docSince = doc && !(state.ownAnsweredAt >= doc) ? doc : 0;
    return Math.min(...[docSince, own].filter(Boolean));
  }

  function reached(kind) {
    state.failingSince[kind] = 0;
    if (kind === "own") state.ownAnsweredAt = env.now();
    if (!state.outage || Number.isFinite(unreachedSince())) return;
    // Back in touch: said, and the place and the estimate move on from the room's answer.
    state.outage = null;
    state.estimate = null;
    state.backUntil = env.now() + BACK_NOTE_MS;
    setText("retry", t.backInReach);
    show("retry", true);
    announce({ kind: "back" }, t.backInReach);
  }

  function checkOutage() {
    if (state.stopped) return;
    const now = env.now();
    const since = unreachedSince();
    if (!Number.isFinite(since) || now - since < timing.outOfReachSeconds * 1000) return;
    if (!state.outage) {
      state.outage = { since };
      window.clearTimeout(state.tick); // the place and the estimate wait
    }
    const next = [state.docNextAt, state.ownNextAt].filter((at) => at > now);
    const text = fill(t.outOfReach, {
      since: formatClock(since, locale),
      next: formatClock(next.length ? Math.min(...next) : now, locale),
    });
    setText("retry", text);
    show("retry", true);
    announce({ kind: "outage" }, text);
  }

  // -- the shared state -------------------------------------------------------------------

  // null: no fetch planned (the channel tells the page).
  function scheduleDocument(delayMs) {
    window.clearTimeout(state.docTimer);
    state.docTimer = null;
    state.docNextAt = delayMs === null ? Infinity : env.now() + delayMs;
    if (delayMs !== null) state.docTimer = window.setTimeout(fetchDocument, delayMs);
  }

  async function fetchDocument() {
    if (state.stopped || !config.stateUrl || !timing) return;
    state.docTimer = null;
    let doc;
    let age = 0;
    let seq = 0;
    try {
      const response = await env.fetch(config.stateUrl, { headers: { Accept: "application/json" } });
      if (response.ok) {
        const body = await response.json();
        doc = interpretDocument(body, env.baseUrl);
        seq = Number(body?.seq) || 0;
        age = Number(response.headers?.get?.("Age")) || 0;
      }
    } catch {
      doc = null;
    }
    if (state.stopped) return;
    if (!doc || doc.kind === "invalid") {
      state.docFailures += 1;
      scheduleDocument(backoffDelay(state.docFailures, env.random));
      // Shown only when nothing else tells the visitor how things stand.
      if (!state.lastAnswer && state.doc === null && !state.ownTimer && !state.ownInFlight) {
        showFailure(state.docFailures, state.docNextAt);
      }
      failed("doc");
      return;
    }
    state.docFailures = 0;
    applyDocument(doc, age * 1000, seq);
  }

  // A document fetched (`ageMs`: the edge's Age) or pushed (null), of the room's push `seq`.
  function applyDocument(doc, ageMs, seq) {
    const arrived = env.now();
    state.offsets = [...state.offsets, doc.nowMs + (ageMs ?? 0) - arrived].slice(-CLOCK_SAMPLES);
    if (ageMs === null || arrived >= state.catchUpAt) state.catchUpAt = 0;
    // An edge copy older than a push never undoes it: the higher seq wins (equal: the newer).
    if (!state.doc || seq > state.seq || (seq === state.seq && doc.nowMs >= state.doc.nowMs)) {
      state.seq = seq;
      state.doc = doc;
      state.docAt = arrived;
    }
    doc = state.doc;
    reached("doc");
    nextDocument();
    handleDocument(doc);
  }

  function nextDocument() {
    const doc = state.doc;
    // Beyond the extrapolation's reach, the turn's predicted moment times a hidden page's next fetch.
    const ownPollAt =
      doc && state.turn !== null
        ? (firstOwnPoll(ownPoints(doc), state.turn, roomNow(), timing) ??
          turnDueAt(ownPoints(doc), state.turn, roomNow(), timing))
        : null;
    const claimSeconds = doc?.capacity?.claimSeconds ?? 0;
    // The first document with the turn, if published before this visitor came: again soon.
    const predates = state.loading && doc && state.turn !== null && documentPredates(doc.points, state.turn, roomNow(), timing);
    const closed = doc?.kind === "closed";
    const inputs = { visible: visible(), now: roomNow(), ownPollAt, claimSeconds, predates, closed };
    if (channel && !predates) {
      // Hidden and subscribed: no catch-up (shown again, the page fetches at once).
      if (channel.subscribed()) return scheduleDocument(state.catchUpAt && visible() ? state.catchUpAt - env.now() : null);
      if (visible()) return scheduleDocument(fallbackDelay(timing, env.random));
      return scheduleDocument(Math.round(hiddenDelay(inputs, timing) * 1000));
    }
    scheduleDocument(Math.round(documentDelay(inputs, timing) * 1000));
  }

  // -- the push channel --------------------------------------------------------------------

  // A pushed message: its document applied as a fetched one.
  function onPushed(message) {
    const doc = interpretDocument(message.doc, env.baseUrl);
    if (!state.stopped && doc.kind !== "invalid") applyDocument(doc, null, message.seq);
  }

  function onChannel({ subscribed, dropped }) {
    if (state.stopped) return;
    timing = subscribed ? { ...baseTiming, extrapolateAtMostSeconds: baseTiming.pushedReachSeconds } : baseTiming;
    // Just subscribed: what was published before is in the document once the edge's copy is
    // younger than the subscription (one fetch then, unless a push brings it first).
    state.catchUpAt = subscribed ? env.now() + (baseTiming.stateMaxAgeSeconds + 1) * 1000 : 0;
    // Lost after working: what was pushed meanwhile is lost, so the document at once.
    if (dropped && visible()) return fetchDocument();
    if (!state.doc) return;
    if (subscribed || state.docTimer === null) nextDocument();
    handleDocument(state.doc);
  }

  // The room's state, as a fetched document says it: the one place the page follows it.
  function handleDocument(doc) {
    if (state.stopped) return;
    const moving = doc.kind === "open";
    // The line moving again (a resume, `on`): a page at the front asks at once, as on loading,
    // since the room lets the next in line in at once.
    if (moving && state.stillKind) {
      state.loading = true;
      state.movedAt = env.now();
    }
    state.stillKind = !moving;
    if (doc.kind === "off") return letIn();
    if (doc.kind === "closed") return showClosed(doc.message);
    reopen();
    if (doc.capacity) state.capacity = true;
    if (state.turn === null) {
      if (doc.kind === "prequeue" || doc.kind === "drawing") {
        showPrequeue(doc.startsAt, doc.kind === "drawing");
        // Asked first at the start, spread over a few seconds (the draw is made then).
        if (!state.ownTimer && !state.ownInFlight) {
          const untilStart = Math.max(0, doc.startsAt * 1000 - roomNow() * 1000);
          scheduleOwn(Math.round(untilStart + timing.startJitterSeconds * 1000 * env.random()));
        }
        return;
      }
      // The turn only /polling knows (a drawn rank, or no fragment): ask, once the draw is made.
      if (!state.ownTimer && !state.ownInFlight && !state.ownNear) {
        const spread = state.awaitingDraw ? timing.startJitterSeconds * 1000 * env.random() : 0;
        scheduleOwn(Math.round(spread));
      }
      return;
    }
    stopCountdown();
    render();
    planOwnPoll();
  }

  // The place and the estimate, from the shared state and the clock: counted down every second.
  function render() {
    window.clearTimeout(state.tick);
    state.tick = null;
    const doc = state.doc;
    const still = state.closed || state.lettingIn || state.outage;
    if (state.stopped || !doc || state.turn === null || still) return;
    // Every page shows the place of the same moment, whenever it redraws: the whole second,
    // or a slow line's slot (shownMoment).
    const now = shownMoment(doc.points, roomNow(), timing);
    // A place shown never goes back up (the shared state's floor holds it; this page holds it
    // too, whatever reaches it): a number, "at the front", or none yet (null).
    const computed = placeShown(doc.points, state.turn, now, timing);
    const place = computed === null ? null : nextPosition(state.position, computed);
    const paused = doc.kind === "paused" || holdCame(doc.points, now);
    const waitSeconds =
      paused || place === null ? null : secondsToTurn(doc.points, state.turn, now, doc.flow, timing);
    showPlace(place, waitSeconds, doc, paused);
    const later = nextMoment(doc.points, roomNow(), timing);
    state.tick = window.setTimeout(render, Math.max(0, Math.ceil((later - roomNow()) * 1000)));
  }

  function showPlace(place, waitSeconds, doc, paused) {
    const now = env.now();
    show("waiting", true);
    if (place !== null) state.position = place;
    if (place >= 1 && (state.firstPosition == null || place > state.firstPosition)) {
      state.firstPosition = place;
      writeFirstPosition(window, place);
    }
    const positionText = formatPosition(place, t, locale, paused);
    const full = doc.capacity?.full === true;
    const fullNote = hook("full-note");
    setText("full-note", t.fullNote);
    show("full-note", full && !paused);
    setText("position", full && !fullNote && !paused ? `${t.fullNote} ${positionText}` : positionText);
    let waitText = t.waitUnknown;
    if (paused) {
      setText("wait", t.pausedText);
      show("wait-note", false);
    } else {
      if (waitSeconds !== null) {
        state.estimate = smoothEstimate(state.estimate, { eta: waitSeconds, at: now });
        if (state.estimate.rose) state.roseAt = now;
        waitText = formatWait(state.estimate.eta, t, locale);
      }
      setText("wait", `${t.waitLabel} ${waitText}`);
      const answerLike = { kind: "waiting", slowed: doc.slowed, capacity: doc.capacity };
      const noteKey = waitNoteKey(now - state.roseAt < RISE_NOTE_MS, answerLike);
      const note = noteKey ? t[noteKey] : "";
      setText("wait-note", note);
      show("wait-note", Boolean(note));
    }
    show("leave", state.capacity);
    if (place !== null) showProgress(Math.max(1, place));
    showChecked(state.docAt, state.docNextAt);
    if (paused) return announce({ kind: "paused" }, t.announcePaused);
    if (place === null) return announce({ kind: "finding" }, positionText);
    const spoken = full
      ? `${positionText} ${t.fullNote} ${t.waitLabel} ${waitText}.`
      : place < 1
        ? `${positionText}`
        : fill(place <= 1 ? t.announceNext : t.announceWaiting, {
            position: formatNumber(place, locale),
            wait: waitText,
          });
    announce({ kind: "waiting", waitText, position: place, full }, spoken);
  }

  function showProgress(position) {
    const percent = progressPercent(state.firstPosition, position);
    if (progress) {
      progress.setAttribute("aria-valuenow", String(percent));
      progress.setAttribute("aria-valuetext", fill(t.progressValue, { percent }));
    }
    const bar = hook("progress-fill");
    if (bar) bar.style.width = `${Math.max(percent, 2)}%`;
  }

  // A scheduled event's pre-queue: a live countdown to the start in the visitor's time zone.
  function showPrequeue(startsAt, drawing) {
    const startsAtMs = startsAt * 1000;
    const startText = fill(t.prequeueStartsAt, { time: formatStart(startsAtMs, locale) });
    const count = () => {
      const left = startsAtMs - roomNow() * 1000;
      setText(
        "position",
        left > 0 && !drawing
          ? fill(t.prequeueCountdown, { countdown: formatCountdown(left, t, locale) })
          : t.prequeueDrawing,
      );
      // The next whole second of the countdown.
      state.countdown = left > 0 && !drawing ? window.setTimeout(count, left % 1000 || 1000) : null;
    };
    window.clearTimeout(state.countdown);
    count();
    setText("wait", startsAtMs > 0 ? startText : "");
    setText("wait-note", t.prequeueDraw);
    show("wait-note", true);
    show("progress", false);
    show("leave", false);
    showChecked(env.now(), Math.min(state.docNextAt || Infinity, state.ownNextAt || Infinity));
    announce({ kind: "prequeue" }, fill(t.announcePrequeue, { time: formatStart(startsAtMs, locale) }));
  }

  function stopCountdown() {
    window.clearTimeout(state.countdown);
    state.countdown = null;
    show("progress", true);
  }

  // -- the visitor's own /polling ------------------------------------------------------------

  function scheduleOwn(delayMs) {
    window.clearTimeout(state.ownTimer);
    state.ownNextAt = env.now() + delayMs;
    state.ownTimer = window.setTimeout(ownPoll, delayMs);
  }

  // The points the own /polling is planned from: the document's, and the last own answer's.
  function ownPoints(doc) {
    return withAnswer(doc.points, state.answered);
  }

  // Near the turn, at the moment the shared state predicts: not before.
  function planOwnPoll() {
    const doc = state.doc;
    if (state.ownNear || state.ownInFlight) return;
    if (!doc || state.turn === null || doc.kind !== "open") {
      if (doc?.kind === "paused") {
        window.clearTimeout(state.ownTimer);
        state.ownTimer = null;
      }
      return;
    }
    const now = roomNow();
    const at = firstOwnPoll(ownPoints(doc), state.turn, now, timing, state.loading);
    state.loading = false;
    window.clearTimeout(state.ownTimer);
    state.ownTimer = null;
    if (at === null) return;
    // Only when it comes before the next document, which may move it.
    const untilMs = Math.round((at - now) * 1000);
    if (env.now() + untilMs <= state.docNextAt) scheduleOwn(untilMs);
  }

  async function ownPoll() {
    if (state.stopped) return;
    state.ownTimer = null;
    state.ownInFlight = true;
    let answer;
    try {
      const response = await env.fetch(config.pollUrl, {
        credentials: "same-origin",
        cache: "no-store",
        headers: { Accept: "application/json" },
      });
      answer = response.ok
        ? interpretAnswer(await response.json(), env.baseUrl, admissionRoutes)
        : null;
    } catch {
      answer = null;
    }
    state.ownInFlight = false;
    if (state.stopped) return;
    if (!answer || answer.kind === "invalid") {
      state.ownFailures += 1;
      scheduleOwn(backoffDelay(state.ownFailures, env.random));
      if (state.outage) checkOutage(); // says when it tries next
      else if (state.doc === null || state.ownNear) showFailure(state.ownFailures, state.ownNextAt);
      failed("own");
      return;
    }
    state.ownFailures = 0;
    reached("own");
    if (answer.kind === "admitted") {
      clearFirstPosition(window);
      return leaveFor(admissionUrl(answer), t.admittedTitle, t.admittedText, t.admittedLink);
    }
    if (answer.kind === "room_off" || (state.lettingIn && answer.kind === "waiting")) {
      // Being let in, with a ticket: asked again in a moment until it is there.
      letIn();
      return scheduleOwn(timing.ownPollEverySeconds * 1000);
    }
    if (answer.kind === "left") {
      stop();
      return showLeft();
    }
    if (answer.kind === "gone") {
      stop();
      clearFirstPosition(window);
      const key = goneKey(answer.state);
      return showNotice(t[`${key}Title`], t[`${key}Text`], t.joinLink, joinUrl);
    }
    if (answer.kind === "closed") return showClosed(answer.message);
    if (answer.kind === "prequeue") {
      state.awaitingDraw = true;
      // Planned before it is shown: the page shows when it asks next (before the first shared
      // state is in, the only moment it knows).
      scheduleOwn(prequeueDelay(answer.pollAfter, answer.startsAt * 1000 - roomNow() * 1000, env.random));
      showPrequeue(answer.startsAt, answer.startsAt * 1000 <= roomNow() * 1000);
      return;
    }
    if (answer.turn && answer.turn !== state.turn) {
      state.turn = answer.turn; // a drawn rank: a new place, shown as it is
      state.position = null;
    }
    if (answer.kind === "waiting" && state.doc && state.turn !== null) {
      state.answered = answerPoint(state.doc.points, state.turn, answer.position, answer.updatedAt);
    }
    if (state.doc && state.turn !== null) {
      // The shared state shows the place. Not admitted yet: ask again every few seconds while
      // the state says the turn has come, else when it next says so.
      state.ownNear = false;
      handleDocument(state.doc);
      const now = roomNow();
      const at = state.doc.kind === "open" ? firstOwnPoll(ownPoints(state.doc), state.turn, now, timing) : null;
      // The front of a line that just moved again goes in within seconds (core/push.py
      // RESTART_ASK_SECONDS), perhaps a slot before the shared state's lattice says.
      const restarted =
        answer.position <= 1 && env.now() - state.movedAt < timing.restartAskSeconds * 1000;
      if (answer.kind === "waiting" && ((at !== null && at <= now) || restarted)) {
        state.ownNear = true;
        scheduleOwn(timing.ownPollEverySeconds * 1000);
      }
      return;
    }
    // No shared state (yet): as the answer says, like a page without the edge would.
    state.ownNear = false;
    state.lastAnswer = answer;
    if (answer.kind === "paused") return showPausedAnswer(answer);
    showWaitingAnswer(answer);
  }

  function showPausedAnswer(answer) {
    state.position = nextPosition(state.position, answer.position);
    setText("position", formatPosition(state.position, t, locale));
    setText("wait", t.pausedText);
    show("wait-note", false);
    scheduleOwn(pollDelay(answer.pollAfter, env.random));
    showChecked(env.now(), state.ownNextAt);
    announce({ kind: "paused" }, t.announcePaused);
  }

  function showWaitingAnswer(answer) {
    const now = env.now();
    stopCountdown();
    state.position = nextPosition(state.position, answer.position);
    if (state.firstPosition == null || state.position > state.firstPosition) {
      state.firstPosition = state.position;
      writeFirstPosition(window, state.position);
    }
    let waitText = t.waitUnknown;
    if (hasEstimate(answer)) {
      state.estimate = smoothEstimate(state.estimate, { eta: answer.etaSeconds, at: now });
      if (state.estimate.rose) state.roseAt = now;
      waitText = formatWait(state.estimate.eta, t, locale);
    }
    const full = isFull(answer);
    const positionText = formatPosition(state.position, t, locale);
    const fullNote = hook("full-note");
    setText("full-note", t.fullNote);
    show("full-note", full);
    setText("position", full && !fullNote ? `${t.fullNote} ${positionText}` : positionText);
    setText("wait", `${t.waitLabel} ${waitText}`);
    const noteKey = waitNoteKey(now - state.roseAt < RISE_NOTE_MS, answer);
    const note = noteKey ? t[noteKey] : "";
    setText("wait-note", note);
    show("wait-note", Boolean(note));
    // Only a capacity-mode room has /leave; once seen, the button stays for the tab's life.
    if (answer.capacity) state.capacity = true;
    show("leave", state.capacity);
    showProgress(state.position);
    scheduleOwn(pollDelay(answer.pollAfter, env.random));
    showChecked(now, state.ownNextAt);
    const spoken = full
      ? `${positionText} ${t.fullNote} ${t.waitLabel} ${waitText}.`
      : fill(state.position <= 1 ? t.announceNext : t.announceWaiting, {
          position: formatNumber(state.position, locale),
          wait: waitText,
        });
    announce({ kind: "waiting", waitText, position: state.position, full }, spoken);
  }

  // The "Leave the line" button: the room is told (a beacon, or a keepalive POST), the page stops
  // asking and says the visitor left; focus moves to that message, as the button is gone.
  function leaveLine() {
    if (state.stopped) return;
    stop();
    sendLeave(safeRedirectUrl(config.leaveUrl, env.baseUrl) || config.leaveUrl, env);
    showLeft();
    const title = hook("notice-title");
    if (title) {
      title.setAttribute("tabindex", "-1");
      title.focus();
    }
  }

  const leaveButton = hook("leave");
  if (leaveButton) leaveButton.addEventListener("click", leaveLine);
  // Capacity mode's parts appear with the first answer that has its figures, whatever the
  // template says.
  show("leave", false);
  show("full-note", false);

  // Background tabs run timers late and fetch the state rarely; when the visitor comes back,
  // the state is fetched at once, and an overdue own poll runs.
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState !== "visible" || state.stopped) return;
    if (env.now() - state.docAt >= 1000) {
      window.clearTimeout(state.docTimer);
      fetchDocument();
    }
    if (state.ownTimer !== null && env.now() >= state.ownNextAt) {
      window.clearTimeout(state.ownTimer);
      ownPoll();
    }
  });

  const channel =
    config.channel && window.WebSocket
      ? openChannel(env, config.channel, baseTiming, { onMessage: onPushed, onStatus: onChannel })
      : null;
  // A tab that loads hidden subscribes only once shown.
  document.addEventListener("visibilitychange", () => channel?.visibility(visible()));
  fetchDocument();
  channel?.visibility(visible());
  // Without its turn (no fragment) the page asks at once; a pre-queue place waits for the draw.
  // A reload asks at once too: since the tab last showed this turn the visitor may have left,
  // been let in or lost the place, which the shared state can not say. A page just come from
  // the marketing link has been placed a moment ago, and asks only near its turn.
  if ((state.turn === null && !state.awaitingDraw) || reloadedWith(window, state.turn)) ownPoll();
}

// Whether this tab loaded with `turn` before; remembers it for the next load.
function reloadedWith(window, turn) {
  if (turn === null) return false;
  try {
    const again = window.sessionStorage.getItem(SHOWN_TURN_KEY) === String(turn);
    window.sessionStorage.setItem(SHOWN_TURN_KEY, String(turn));
    return again;
  } catch {
    return false; // storage switched off: the page asks near its turn, as on a first load
  }
}

// The first position this visitor saw, kept for the tab's life so a reload keeps the progress bar.
function readFirstPosition(window) {
  try {
    const value = Number(window.sessionStorage.getItem(FIRST_POSITION_KEY));
    return Number.isInteger(value) && value >= 1 ? value : null;
  } catch {
    return null;
  }
}

function writeFirstPosition(window, position) {
  try {
    window.sessionStorage.setItem(FIRST_POSITION_KEY, String(position));
  } catch {
    // Storage may be switched off; the bar then starts again from the current position.
  }
}

function clearFirstPosition(window) {
  try {
    window.sessionStorage.removeItem(FIRST_POSITION_KEY);
  } catch {
    // Nothing to clear.
  }
}

export function browserEnvironment(window) {
  return {
    document: window.document,
    window,
    languages: window.navigator.languages || [window.navigator.language],
    fetch: window.fetch.bind(window),
    sendBeacon: window.navigator.sendBeacon
      ? window.navigator.sendBeacon.bind(window.navigator)
      : undefined,
    random: Math.random,
    now: Date.now,
    baseUrl: window.location.href,
    navigate: (url) => window.location.replace(url),
  };
}

if (typeof document !== "undefined" && document.getElementById("beekeeper-room")) {
  startRoom(browserEnvironment(window));
}
