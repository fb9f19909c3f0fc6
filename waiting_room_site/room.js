// The waiting room page's controller: reads the room's config, polls /polling, shows the answer,
// and in capacity mode lets the visitor leave the line (/leave).
// Every decision (formatting, smoothing, timing, what to announce) is a pure function of
// page.js; this file only touches the page. Elements are found by their data-bk hooks
// (docs/page.md), and every hook but the required ones may be missing from a custom template.

import {
  admissionUrl,
  backoffDelay,
  chooseLanguage,
  DEFAULT_LANGUAGE,
  fill,
  formatClock,
  formatNumber,
  formattingLocale,
  formatCountdown,
  formatPosition,
  formatStart,
  formatWait,
  hasEstimate,
  goneKey,
  interpretAnswer,
  isFull,
  nextPosition,
  pollDelay,
  prequeueDelay,
  progressPercent,
  safeRedirectUrl,
  sendLeave,
  shouldAnnounce,
  smoothEstimate,
  waitNoteKey,
} from "./page.js";

// How long the "why your wait went up" note stays after a rise.
const RISE_NOTE_MS = 120_000;
const FIRST_POSITION_KEY = "beekeeper.firstPosition";

export function startRoom(env) {
  const { document, window } = env;
  const config = JSON.parse(document.getElementById("beekeeper-room").textContent);
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

  const state = {
    position: null,
    estimate: null,
    roseAt: -Infinity,
    failures: 0,
    announced: null,
    timer: null,
    nextAt: 0,
    stopped: false,
    capacity: false,
    firstPosition: readFirstPosition(window),
    tick: null,
  };

  function announce(next, text) {
    const now = env.now();
    if (!shouldAnnounce(state.announced, next, now)) return;
    state.announced = { ...next, at: now };
    setText("status", text);
  }

  function schedule(delayMs) {
    window.clearTimeout(state.timer);
    state.nextAt = env.now() + delayMs;
    state.timer = window.setTimeout(poll, delayMs);
    return state.nextAt;
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

  // When the page last asked and asks next; the details are shown, any failure note hidden.
  function showChecked(now, nextAt) {
    setText(
      "checked",
      fill(t.checkedTimes, { last: formatClock(now, locale), next: formatClock(nextAt, locale) }),
    );
    show("retry", false);
    show("details", true);
  }

  // A scheduled event's pre-queue: a live countdown to the start in the visitor's time zone.
  function showPrequeue(answer) {
    const now = env.now();
    const startsAtMs = answer.startsAt * 1000;
    const startText = fill(t.prequeueStartsAt, { time: formatStart(startsAtMs, locale) });
    const count = () => {
      const left = startsAtMs - env.now();
      setText(
        "position",
        left > 0
          ? fill(t.prequeueCountdown, { countdown: formatCountdown(left, t, locale) })
          : t.prequeueDrawing,
      );
      // The next whole second of the countdown.
      state.tick = left > 0 ? window.setTimeout(count, left % 1000 || 1000) : null;
    };
    window.clearTimeout(state.tick);
    count();
    setText("wait", startsAtMs > 0 ? startText : "");
    setText("wait-note", t.prequeueDraw);
    show("wait-note", true);
    show("progress", false);
    show("leave", false);
    const nextAt = schedule(prequeueDelay(answer.pollAfter, startsAtMs - now, env.random));
    showChecked(now, nextAt);
    announce({ kind: "prequeue" }, fill(t.announcePrequeue, { time: formatStart(startsAtMs, locale) }));
  }

  function stopCountdown() {
    window.clearTimeout(state.tick);
    state.tick = null;
    show("progress", true);
  }

  // A held line: the place is kept, nothing moves until the operator resumes.
  function showPaused(answer) {
    const now = env.now();
    state.position = nextPosition(state.position, answer.position);
    setText("position", formatPosition(state.position, t, locale));
    setText("wait", t.pausedText);
    show("wait-note", false);
    const nextAt = schedule(pollDelay(answer.pollAfter, env.random));
    showChecked(now, nextAt);
    announce({ kind: "paused" }, t.announcePaused);
  }

  function showClosed(answer) {
    stop();
    clearFirstPosition(window);
    const text = answer.message ? `${t.closedText} ${answer.message}` : t.closedText;
    showNotice(t.closedTitle, text, t.joinLink, joinUrl);
    show("notice-link", false);
  }

  function showWaiting(answer) {
    const now = env.now();
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
    // Why a full shop's line waits; a template without the hook gets it with the position.
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

    const percent = progressPercent(state.firstPosition, state.position);
    if (progress) {
      progress.setAttribute("aria-valuenow", String(percent));
      progress.setAttribute("aria-valuetext", fill(t.progressValue, { percent }));
    }
    const bar = hook("progress-fill");
    if (bar) bar.style.width = `${Math.max(percent, 2)}%`;

    const nextAt = schedule(pollDelay(answer.pollAfter, env.random));
    showChecked(now, nextAt);
    const spoken = full
      ? `${positionText} ${t.fullNote} ${t.waitLabel} ${waitText}.`
      : fill(state.position <= 1 ? t.announceNext : t.announceWaiting, {
          position: formatNumber(state.position, locale),
          wait: waitText,
        });
    announce({ kind: "waiting", waitText, position: state.position, full }, spoken);
  }

  function showFailure() {
    state.failures += 1;
    const nextAt = schedule(backoffDelay(state.failures, env.random));
    const text = fill(t.retrying, { next: formatClock(nextAt, locale) });
    setText("retry", text);
    show("retry", true);
    announce({ kind: "retrying" }, text);
  }

  function stop() {
    state.stopped = true;
    window.clearTimeout(state.timer);
    window.clearTimeout(state.tick);
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

  async function poll() {
    if (state.stopped) return;
    state.timer = null;
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
    if (state.stopped) return;
    if (!answer || answer.kind === "invalid") return showFailure();
    state.failures = 0;
    if (answer.kind === "prequeue") return showPrequeue(answer);
    stopCountdown();
    if (answer.kind === "closed") return showClosed(answer);
    if (answer.kind === "paused") return showPaused(answer);
    if (answer.kind === "admitted") {
      clearFirstPosition(window);
      return leaveFor(admissionUrl(answer), t.admittedTitle, t.admittedText, t.admittedLink);
    }
    if (answer.kind === "room_off") {
      return leaveFor(joinUrl, t.roomOffTitle, t.roomOffText, t.roomOffLink);
    }
    if (answer.kind === "left") {
      stop();
      return showLeft();
    }
    if (answer.kind === "gone") {
      state.stopped = true;
      clearFirstPosition(window);
      const key = goneKey(answer.state);
      return showNotice(t[`${key}Title`], t[`${key}Text`], t.joinLink, joinUrl);
    }
    return showWaiting(answer);
  }

  // Background tabs run timers late; when the visitor comes back, an overdue poll runs at once.
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible" && !state.stopped && state.timer !== null) {
      if (env.now() >= state.nextAt) {
        window.clearTimeout(state.timer);
        poll();
      }
    }
  });

  poll();
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
