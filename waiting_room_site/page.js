// The waiting room page's logic as pure functions: no DOM, no clock, no randomness of their own.
// room.js wires them to the page; tests/page.test.mjs runs them under Node's test runner.
// render_page() inlines this file and room.js into one <script type="module"> (it drops the
// `export` keywords and the local import line), so keep every top-level name unique across both.

export const DEFAULT_LANGUAGE = "en";

// The page's timing is core/page_timing.py's: render_page() writes core's values over these
// (the node tests run the literals here; tests/unit/test_page_timing.py holds them equal).
// The server asks for a poll every `poll_after` seconds. We never poll sooner, and spread the
// visitors' polls over up to a quarter more so a crowd that arrived together does not stay in step.
export const POLL_JITTER = 0.25;
export const MIN_POLL_SECONDS = 2;
export const MAX_POLL_SECONDS = 300;
export const DEFAULT_POLL_SECONDS = 20;

// After a failed poll: 2 s, 4 s, 8 s ... capped at 60 s, each randomised into [half, whole].
export const BACKOFF_FIRST_SECONDS = 2;
export const BACKOFF_MAX_SECONDS = 60;

// A sample above the countdown by less than this is treated as noise and absorbed.
export const RISE_TOLERANCE_SECONDS = 30;
export const RISE_TOLERANCE_FRACTION = 0.15;
// How far one sample moves the smoothed trend towards itself.
export const TREND_WEIGHT = 0.5;

// A pre-queue's first poll at the start is spread over this many seconds after it, so that a
// countdown ending in the same second for everyone does not bring every page at once
// (core/schedule.py's, written in by render_page() too).
export const START_JITTER_SECONDS = 8;

// Announce a waiting visitor's progress at most this often, unless something changes in kind.
export const ANNOUNCE_MIN_INTERVAL_MS = 60_000;

/** The first of the browser's preferred languages we have strings for, by full tag or primary subtag. */
export function chooseLanguage(preferred, available, fallback = DEFAULT_LANGUAGE) {
  const known = new Set(available.map((tag) => tag.toLowerCase()));
  for (const raw of preferred || []) {
    if (typeof raw !== "string" || !raw) continue;
    const tag = raw.toLowerCase();
    if (known.has(tag)) return available.find((a) => a.toLowerCase() === tag);
    const primary = tag.split("-")[0];
    if (known.has(primary)) return available.find((a) => a.toLowerCase() === primary);
  }
  return fallback;
}

/**
 * The locale for numbers and times: the visitor's own tag when it is of the chosen language
 * (en-GB keeps its 24-hour clock, de-CH its number grouping), else the language itself.
 */
export function formattingLocale(preferred, lang) {
  const primary = lang.toLowerCase().split("-")[0];
  for (const tag of preferred || []) {
    if (typeof tag !== "string" || tag.toLowerCase().split("-")[0] !== primary) continue;
    try {
      return Intl.getCanonicalLocales(tag)[0];
    } catch {
      // Not a well-formed tag: try the next one.
    }
  }
  return lang;
}

/** `template` with each `{name}` replaced by values[name]; unknown names stay visible. */
export function fill(template, values) {
  return template.replace(/\{(\w+)\}/g, (whole, name) =>
    Object.prototype.hasOwnProperty.call(values, name) ? String(values[name]) : whole,
  );
}

/** The form of `forms` ({one, other, ...}) the language's plural rules pick for `n`, filled in. */
export function plural(forms, n, lang, values = {}) {
  const category = new Intl.PluralRules(lang).select(n);
  const template = forms[category] ?? forms.other;
  return fill(template, { n: formatNumber(n, lang), ...values });
}

export function formatNumber(n, lang) {
  return new Intl.NumberFormat(lang, { maximumFractionDigits: 0 }).format(n);
}

/**
 * The place in words: null while the page knows no number yet; past the turn (the line
 * reorders a little) no number, which only one visitor may be shown, and while the line is
 * paused never "at the front" nor "any moment now": nobody goes in until it moves again.
 */
export function formatPosition(position, strings, lang, paused = false) {
  if (position === null) return strings.positionFinding;
  if (position < 1) return paused ? strings.positionPausedFirst : strings.positionNow;
  if (position === 1) return strings.positionOne;
  return fill(strings.positionMany, { position: formatNumber(position, lang) });
}

/** An operator's line as a sentence: its own stop, or a full stop added. */
export function asSentence(text) {
  return /[.!?…]$/.test(text) ? text : `${text}.`;
}

/**
 * An estimate in seconds rounded as a person would say it, never more precise than it is:
 * under a minute; whole minutes up to 10; 5-minute steps up to an hour; quarter hours up to
 * 5 hours; whole hours beyond.
 */
// An estimate shorter than this is shown as "any moment now", not as a number.
const ANY_MOMENT_SECONDS = 5;

export function roundWait(seconds) {
  const n = Number(seconds);
  if (!Number.isFinite(n)) return { kind: "lessThanMinute" };
  const s = Math.max(0, n);
  // A few seconds at most: the visitor is about to go in.
  if (s < ANY_MOMENT_SECONDS) return { kind: "now" };
  if (s < 60) return { kind: "lessThanMinute" };
  const minutes = s / 60;
  if (minutes < 9.5) return { kind: "minutes", minutes: Math.max(1, Math.round(minutes)) };
  if (minutes < 57.5) return { kind: "minutes", minutes: Math.round(minutes / 5) * 5 };
  if (minutes < 292.5) {
    const quarters = Math.round(minutes / 15);
    const hours = Math.floor(quarters / 4);
    return { kind: "hours", hours, minutes: (quarters % 4) * 15 };
  }
  return { kind: "hours", hours: Math.round(minutes / 60), minutes: 0 };
}

export function formatWait(seconds, strings, lang) {
  const rounded = roundWait(seconds);
  if (rounded.kind === "now") return strings.waitNow;
  if (rounded.kind === "lessThanMinute") return strings.waitLessThanMinute;
  if (rounded.kind === "minutes") return plural(strings.waitMinutes, rounded.minutes, lang);
  if (rounded.minutes === 0) return plural(strings.waitHours, rounded.hours, lang);
  return fill(strings.waitHoursMinutes, {
    hours: plural(strings.hoursPart, rounded.hours, lang),
    minutes: plural(strings.minutesPart, rounded.minutes, lang),
  });
}

/** A clock time in the visitor's locale; timeZone is for tests (the browser's own by default). */
export function formatClock(epochMs, lang, timeZone = undefined) {
  return new Intl.DateTimeFormat(lang, {
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    timeZone,
  }).format(new Date(epochMs));
}

/**
 * The estimate to show after a new sample, so it counts down steadily instead of jumping.
 *
 * Two figures are kept: `trend`, the samples smoothed (so noise averages out), and `eta`, what
 * is shown. Between samples both count down with the clock. The shown figure follows the trend
 * down (at once when the news is much better) and absorbs small rises (the countdown goes on). A sample above the countdown by
 * more than the tolerance is held back once (`high`): a single outlier is ignored, and a second
 * one in a row is a real change, shown at once as one rise with `rose` set so the page can say
 * why, rather than as a creep upwards over several polls.
 *
 * previous: {eta, trend, high, at} or null (seconds; at in ms); sample: {eta, at}.
 */
export function smoothEstimate(previous, sample) {
  const raw = Math.max(0, sample.eta);
  const at = sample.at;
  if (!previous) return { eta: raw, trend: raw, high: false, at, rose: false };
  const elapsed = Math.max(0, (at - previous.at) / 1000);
  const predicted = Math.max(0, previous.eta - elapsed);
  const priorTrend = Math.max(0, (previous.trend ?? previous.eta) - elapsed);
  const tolerance = Math.max(RISE_TOLERANCE_SECONDS, RISE_TOLERANCE_FRACTION * predicted);
  if (raw - predicted > tolerance) {
    if (previous.high) return { eta: raw, trend: raw, high: false, at, rose: true };
    return { eta: predicted, trend: priorTrend, high: true, at, rose: false };
  }
  // Good news well beyond the noise is taken at once; small dips are averaged with the trend.
  const trend =
    raw < priorTrend - tolerance ? raw : priorTrend + TREND_WEIGHT * (raw - priorTrend);
  return { eta: Math.min(predicted, trend), trend, high: false, at, rose: false };
}

/**
 * The position to show: positions only fall while a visitor waits. A higher figure comes from a
 * status copy a few seconds older than the last one, so it is not shown.
 */
export function nextPosition(previous, reported) {
  if (previous == null) return reported;
  return Math.min(previous, reported);
}

/** Per cent of the line behind the visitor since they first saw their position (0 to 100). */
export function progressPercent(firstPosition, position) {
  if (!(firstPosition > 1) || !(position >= 1)) return 0;
  const done = (firstPosition - Math.min(position, firstPosition)) / (firstPosition - 1);
  return Math.round(Math.min(1, Math.max(0, done)) * 100);
}

/** Milliseconds until the next poll: at least what the server asked, plus up to 25% jitter. */
export function pollDelay(pollAfterSeconds, random) {
  let base = Number(pollAfterSeconds);
  if (!Number.isFinite(base) || base <= 0) base = DEFAULT_POLL_SECONDS;
  base = Math.min(MAX_POLL_SECONDS, Math.max(MIN_POLL_SECONDS, base));
  return Math.round(base * (1 + POLL_JITTER * random()) * 1000);
}

/** Milliseconds to wait after `failures` failed polls in a row (1 = the first failure). */
export function backoffDelay(failures, random) {
  const exponent = Math.max(0, Math.min(failures - 1, 10));
  const ceiling = Math.min(BACKOFF_MAX_SECONDS, BACKOFF_FIRST_SECONDS * 2 ** exponent);
  return Math.round(ceiling * (0.5 + 0.5 * random()) * 1000);
}

const GONE_STATES = new Set(["no_token", "malformed", "unknown", "expired", "reset"]);

function isCount(value, minimum) {
  return Number.isInteger(value) && value >= minimum;
}

/**
 * A capacity-mode room's figures from a waiting answer: undefined when the answer has none (a
 * rate-mode room, or no status published yet), null when they break the contract.
 */
function capacityFigures(body) {
  if (body.max_inside === undefined) return undefined;
  const valid =
    isCount(body.max_inside, 1) &&
    isCount(body.inside, 0) &&
    Number.isFinite(body.turnover) &&
    body.turnover >= 0 &&
    typeof body.full === "boolean";
  if (!valid) return null;
  const { max_inside: maxInside, inside, turnover, full } = body;
  return { maxInside, inside, turnover, full };
}

/**
 * The page's own URL for a route an admission answer names in `via`, or null. Only the names in
 * `routes` (the page's config: {enter: "enter"}) are followed, never a URL from the answer.
 */
function viaUrl(via, routes, base) {
  if (typeof via !== "string" || !routes || !Object.hasOwn(routes, via)) return null;
  return safeRedirectUrl(routes[via], base);
}

/** Only plain web addresses are followed; anything else (javascript:, data:) is refused. */
export function safeRedirectUrl(candidate, base) {
  if (typeof candidate !== "string" || !candidate) return null;
  try {
    const url = new URL(candidate, base);
    return url.protocol === "https:" || url.protocol === "http:" ? url.href : null;
  } catch {
    return null;
  }
}

/**
 * A /polling answer (parsed JSON) as one of:
 * {kind: "admitted", origin[, via, viaUrl]} | {kind: "waiting", position, etaSeconds, pollAfter,
 * rate, slowed, updatedAt[, capacity: {maxInside, inside, turnover, full}]} |
 * {kind: "room_off", pollAfter} | {kind: "gone", state} | {kind: "left"} |
 * {kind: "prequeue", startsAt, pollAfter} | {kind: "paused", position, pollAfter} |
 * {kind: "closed", message} | {kind: "invalid"}.
 * `routes` names the room routes an admission may go through (`via`), relative to the page.
 * An answer that breaks the contract is "invalid" and handled like a failed poll.
 */
export function interpretAnswer(body, base, routes = {}) {
  if (!body || typeof body !== "object") return { kind: "invalid" };
  if (body.allow === true) {
    const origin = safeRedirectUrl(body.origin, base);
    if (!origin) return { kind: "invalid" };
    if (body.via === undefined) return { kind: "admitted", origin };
    const url = viaUrl(body.via, routes, base);
    return url ? { kind: "admitted", origin, via: body.via, viaUrl: url } : { kind: "invalid" };
  }
  if (body.allow !== false) return { kind: "invalid" };
  if (body.state === "waiting") {
    if (!isCount(body.position, 1) || !isCount(body.eta_seconds, 0)) return { kind: "invalid" };
    const capacity = capacityFigures(body);
    if (capacity === null) return { kind: "invalid" };
    const answer = {
      kind: "waiting",
      position: body.position,
      etaSeconds: body.eta_seconds,
      pollAfter: body.poll_after,
      rate: body.rate,
      slowed: body.slowed === true,
      updatedAt: body.updated_at,
    };
    if (isCount(body.turn, 1)) answer.turn = body.turn;
    return capacity ? { ...answer, capacity } : answer;
  }
  if (body.state === "prequeue") {
    if (!isCount(body.starts_at, 0)) return { kind: "invalid" };
    return { kind: "prequeue", startsAt: body.starts_at, pollAfter: body.poll_after };
  }
  if (body.state === "paused") {
    if (!isCount(body.position, 1)) return { kind: "invalid" };
    const paused = { kind: "paused", position: body.position, pollAfter: body.poll_after };
    if (isCount(body.turn, 1)) paused.turn = body.turn;
    return paused;
  }
  if (body.state === "closed") {
    const message = typeof body.message === "string" ? body.message.slice(0, 200) : "";
    return { kind: "closed", message };
  }
  if (body.state === "room_off") return { kind: "room_off", pollAfter: body.poll_after };
  if (body.state === "left") return { kind: "left" };
  if (GONE_STATES.has(body.state)) return { kind: "gone", state: body.state };
  return { kind: "invalid" };
}

/**
 * Where an admitted visitor goes: through the room's route when the answer names one (in
 * capacity mode /enter records the arrival, then sends the visitor on to the shop), else
 * straight to the shop.
 */
export function admissionUrl(answer) {
  return answer.viaUrl ?? answer.origin;
}

/** Whether the shop is full: visitors go in only as others leave (capacity mode). */
export function isFull(answer) {
  return answer.kind === "waiting" && answer.capacity?.full === true;
}

/**
 * The strings' key of the note under the estimate, or null: why it rose (the shop slowed entry,
 * people leave the full shop more slowly, or entry is slower than expected), else whether entry
 * is slowed for now.
 */
export function waitNoteKey(rose, answer) {
  if (rose) {
    if (answer.slowed) return "waitRoseSlowed";
    return isFull(answer) ? "waitRoseFull" : "waitRoseSlower";
  }
  return answer.slowed ? "waitSlowed" : null;
}

/**
 * Tells the room the visitor leaves the line (POST `url`, the cookie going along): a beacon when
 * the browser has one and queues it (it survives the page going away), else a keepalive fetch.
 * Never throws: the page shows the visitor as gone either way. Returns how it was sent.
 */
export function sendLeave(url, { sendBeacon, fetch }) {
  if (typeof sendBeacon === "function") {
    try {
      if (sendBeacon(url)) return "beacon";
    } catch {
      // A browser that refuses the beacon: the fetch below carries the leave instead.
    }
  }
  try {
    fetch(url, {
      method: "POST",
      keepalive: true,
      credentials: "same-origin",
      cache: "no-store",
    }).catch(() => {});
  } catch {
    return "failed";
  }
  return "fetch";
}

/**
 * Whether a waiting answer carries an estimate: a room deployed moments ago has published no
 * status yet and answers rate 0, and "0 seconds" would be a promise nobody made.
 */
export function hasEstimate(answer) {
  return answer.kind === "waiting" && Number.isInteger(answer.rate) && answer.rate > 0;
}

/** The strings' key prefix for a gone state: no_token -> noToken. */
export function goneKey(state) {
  return state.replace(/_(\w)/g, (_, letter) => letter.toUpperCase());
}

/**
 * Whether the polite live region should speak `next` ({kind, waitText, position, full}) given the
 * last announcement ({kind, waitText, position, full, at}): always on a change of kind (and never
 * twice for the same kind otherwise, so a run of failed polls is announced once); for a waiting
 * visitor on reaching the front or when the shop fills up or makes room, else at most once a
 * minute and only when the wait phrase changed or the line moved by a tenth.
 */
export function shouldAnnounce(last, next, now) {
  if (!last) return true;
  if (next.kind !== last.kind) return true;
  if (next.kind !== "waiting") return false;
  // The shop filling up or making room changes why the visitor waits: said at once.
  if (Boolean(next.full) !== Boolean(last.full)) return true;
  if (next.position <= 1 && last.position > 1) return true;
  if (now - last.at < ANNOUNCE_MIN_INTERVAL_MS) return false;
  if (next.waitText !== last.waitText) return true;
  return next.position <= last.position * 0.9;
}

/**
 * Milliseconds until a pre-queue visitor's next poll. Before the start: what the server asked
 * (plus the usual jitter), but a poll that would reach the start is moved to a moment spread
 * over START_JITTER_SECONDS after it. After the start (the draw is being made): what the server
 * asked, spread the same way.
 */
export function prequeueDelay(pollAfterSeconds, untilStartMs, random) {
  let base = Number(pollAfterSeconds);
  if (!Number.isFinite(base) || base <= 0) base = DEFAULT_POLL_SECONDS;
  base = Math.min(MAX_POLL_SECONDS, Math.max(1, base)) * 1000;
  const spread = START_JITTER_SECONDS * 1000 * random();
  if (!(untilStartMs > 0)) return Math.round(base + spread);
  const jittered = base * (1 + POLL_JITTER * random());
  if (jittered >= untilStartMs) return Math.round(untilStartMs + spread);
  return Math.round(jittered);
}

/** Time left until the start as "2 days 03:04:05" (or "03:04:05"); never negative. */
export function formatCountdown(msLeft, strings, lang) {
  const total = Math.max(0, Math.ceil(msLeft / 1000));
  const days = Math.floor(total / 86_400);
  const two = (n) => String(n).padStart(2, "0");
  const clock = `${two(Math.floor((total % 86_400) / 3600))}:${two(Math.floor((total % 3600) / 60))}:${two(total % 60)}`;
  return days > 0 ? `${plural(strings.countdownDays, days, lang)} ${clock}` : clock;
}

/** The start as a date and time in the visitor's own time zone (timeZone is for tests). */
export function formatStart(epochMs, lang, timeZone = undefined) {
  return new Intl.DateTimeFormat(lang, {
    weekday: "long",
    day: "numeric",
    month: "long",
    hour: "2-digit",
    minute: "2-digit",
    timeZoneName: "short",
    timeZone,
  }).format(new Date(epochMs));
}

// -- The serving number and the page's rule (core/serving.py owns both; a test holds the two
// equal). `timing` is the room config's: every figure comes from core/ through render_page. --

/**
 * The points of the document's history ("<ms>:<serving>:<flow>[:<waiting>:<joins>[:<floor>:<until>]]
 * ...", core.shared_state); [] when malformed.
 */
export function parseHistory(text) {
  const point = "\\d{1,15}:\\d{1,15}:\\d{1,7}(?::\\d{1,15}:\\d{1,9}(?::\\d{1,15}:\\d{1,15})?)?";
  if (typeof text !== "string" || !new RegExp(`^${point}( ${point})*$`).test(text)) return [];
  return text.split(" ").map((part) => {
    const [atMs, serving, flow, waiting, joins, floor, untilMs] = part.split(":").map(Number);
    if (waiting === undefined) return { atMs, serving, flow };
    if (floor === undefined) return { atMs, serving, flow, waiting, joins };
    return { atMs, serving, flow, waiting, joins, floor, untilMs };
  });
}

/** The admission span's start offset in a minute, and its length (core.serving.span). */
export function span(timing) {
  const margin = timing.minuteSeconds * timing.spanMarginFraction;
  return [margin, timing.minuteSeconds - 2 * margin];
}

/** Lattice slots at `flow` a minute fallen due by `at` (epoch seconds), from the epoch. */
export function dueBy(at, flow, timing) {
  if (flow <= 0) return 0;
  const minute = Math.floor(at / timing.minuteSeconds);
  const [start, length] = span(timing);
  const offset = at - minute * timing.minuteSeconds - start + timing.slotToleranceSeconds;
  const within = offset < 0 ? 0 : Math.min(flow, Math.floor((offset * flow) / length) + 1);
  return minute * flow + within;
}

/** When slot `index` (0-based, from the epoch) falls due. */
export function slotTime(index, flow, timing) {
  const minute = Math.floor(index / flow);
  const [start, length] = span(timing);
  return minute * timing.minuteSeconds + start + ((index - minute * flow) * length) / flow;
}

/** The newest point at least `delay` s before `at` (the oldest when none is), or null. */
export function anchorPoint(points, at, delay) {
  if (!points.length) return null;
  const limit = (at - delay) * 1000;
  let found = points[0];
  for (const point of points) if (point.atMs <= limit) found = point;
  return found;
}

/**
 * `point`'s serving number moved on to `at` on the lattice at its flow: for at most the
 * extrapolation's reach, and not past the hold it announces (core.serving.extrapolated).
 */
export function extrapolated(point, at, timing) {
  const since = point.atMs / 1000;
  let until = Math.min(at, since + timing.extrapolateAtMostSeconds);
  if (point.untilMs) until = Math.min(until, point.untilMs / 1000);
  if (until <= since || point.flow <= 0) return point.serving;
  return point.serving + dueBy(until, point.flow, timing) - dueBy(since, point.flow, timing);
}

/**
 * The serving number at `at` extrapolated on the lattice from the anchor `delay` s back (the
 * oldest point's own, not moved, while none is that old: every copy holds that one).
 */
export function servingAt(points, at, delay, timing) {
  const found = anchorPoint(points, at, delay);
  if (!found) return null;
  if (found.atMs / 1000 > at - delay) return found.serving;
  return extrapolated(found, at, timing);
}

/**
 * The serving number every page shows at `at`: the place is turn minus it. Never past the
 * visitors the anchor's line says have joined by then, never below the anchor's floor
 * (core.serving.shown_serving).
 */
export function shownServing(points, at, timing) {
  const serving = servingAt(points, at, timing.displayDelaySeconds, timing);
  const found = anchorPoint(points, at, timing.displayDelaySeconds);
  if (serving === null || !found) return serving;
  return Math.max(withinLine(found, serving, at, timing), found.floor ?? 0);
}

/**
 * The moment whose place a page shows at `at`, the same for every page: the last quarter second
 * in a line moving a place a second or more, else the whole second or the anchor's last slot
 * fallen due (core.serving.shown_moment).
 */
export function shownMoment(points, at, timing) {
  const found = anchorPoint(points, at, timing.displayDelaySeconds);
  const fast = timing.fastMomentSeconds;
  if (found && found.flow > timing.slotMomentsAtMost) return Math.floor(at / fast) * fast;
  const whole = Math.floor(at);
  if (!found || found.flow <= 0) return whole;
  const due = dueBy(at, found.flow, timing);
  if (due <= 0) return whole;
  const slot = slotTime(due - 1, found.flow, timing);
  return slot <= at + timing.slotToleranceSeconds ? Math.max(whole, slot) : whole;
}

/** When the page redraws next: the next moment shownMoment gives (core.serving.next_moment). */
export function nextMoment(points, at, timing) {
  const found = anchorPoint(points, at, timing.displayDelaySeconds);
  const fast = timing.fastMomentSeconds;
  if (found && found.flow > timing.slotMomentsAtMost) return (Math.floor(at / fast) + 1) * fast;
  const whole = Math.floor(at) + 1;
  if (!found || found.flow <= 0) return whole;
  const slot = slotTime(dueBy(at, found.flow, timing), found.flow, timing);
  return slot > at ? Math.min(whole, slot) : whole;
}

/**
 * The place the page of `turn` shows at `at` (below 1: "at the front"), or null while it shows
 * no number: the turn joined after what every page knows (core.serving.place_shown).
 */
export function placeShown(points, turn, at, timing) {
  const found = anchorPoint(points, at, timing.displayDelaySeconds);
  const lattice = servingAt(points, at, timing.displayDelaySeconds, timing);
  const serving = shownServing(points, at, timing);
  if (!found || lattice === null || serving === null) return null;
  const joined = joinedBy(found, at, timing);
  if (joined !== null && joined < lattice && turn > serving) return null;
  return turn - serving;
}

/** The newest point announces a hold whose moment has come by `at`: the line is paused. */
export function holdCame(points, at) {
  const newest = points[points.length - 1];
  return Boolean(newest?.untilMs) && at * 1000 >= newest.untilMs;
}

/** The visitors `point`'s line says have joined by `at` (null when it does not say). */
function joinedBy(point, at, timing) {
  if (point.waiting === undefined) return null;
  const elapsed = Math.min(Math.max(0, at - point.atMs / 1000), timing.extrapolateAtMostSeconds);
  return point.serving + point.waiting + Math.floor((point.joins * elapsed) / 60);
}

/** `serving` bounded by the visitors `point`'s line says have joined by `at`. */
function withinLine(point, serving, at, timing) {
  const joined = joinedBy(point, at, timing);
  return joined === null ? serving : Math.max(point.serving, Math.min(serving, joined));
}

/**
 * The document was published before this visitor came (core.serving.document_predates): its
 * newest point's line does not reach the page's turn. The page fetches it again sooner.
 */
export function documentPredates(points, turn, now, timing) {
  const newest = anchorPoint(points, now, 0);
  const joined = newest ? joinedBy(newest, now, timing) : null;
  return joined !== null && turn > joined;
}

/** How long after the predicted moment of its turn the page first asks (core.serving.margin_seconds). */
export function marginSeconds(flow, timing) {
  if (flow <= 0) return timing.maxMarginSeconds;
  const places = (timing.marginPlaces * timing.minuteSeconds) / flow;
  return Math.min(timing.maxMarginSeconds, Math.max(timing.minMarginSeconds, places));
}

/**
 * When the page calls its own /polling (epoch seconds): now when the serving number, extrapolated
 * from the newest point, has reached its turn (or, as the page loads, is one place short);
 * else the margin after the moment it is predicted to reach it; null when the line is not
 * moving or that moment is beyond the extrapolation's reach.
 */
export function firstOwnPoll(points, turn, now, timing, loading = false) {
  const newest = anchorPoint(points, now, 0);
  if (!newest) return null;
  let serving = servingAt(points, now, 0, timing);
  if (serving !== null) serving = withinLine(newest, serving, now, timing);
  if (serving !== null && (serving >= turn || (loading && serving >= turn - 1))) return now;
  if (newest.flow <= 0) return null;
  const since = newest.atMs / 1000;
  const index = dueBy(since, newest.flow, timing) + (turn - newest.serving) - 1;
  let reached = slotTime(index, newest.flow, timing);
  let when = reached + marginSeconds(newest.flow, timing);
  if (newest.waiting !== undefined && turn > newest.serving + newest.waiting) {
    // The line the point states reaches the turn only as people join.
    if (newest.joins <= 0) return null;
    const joined = since + ((turn - newest.serving - newest.waiting) * 60) / newest.joins;
    reached = Math.max(reached, joined);
    when = Math.max(when, joined);
  }
  // The reach is the serving number's, not the margin's (as in core/serving.py); a turn
  // beyond an announced hold is not reached before it.
  if (reached > since + timing.extrapolateAtMostSeconds || heldBefore(newest, reached, timing)) {
    return null;
  }
  return Math.max(now, when);
}

/** `point` announces a hold that stops its line before `moment`. */
function heldBefore(point, moment, timing) {
  return Boolean(point.untilMs) && moment > point.untilMs / 1000 + timing.slotToleranceSeconds;
}

/**
 * When the newest point's flow brings the serving number to `turn`, however far ahead
 * (core.serving.turn_due_at); null when the line is not moving.
 */
export function turnDueAt(points, turn, now, timing) {
  const newest = anchorPoint(points, now, 0);
  if (!newest || newest.flow <= 0) return null;
  const index = dueBy(newest.atMs / 1000, newest.flow, timing) + (turn - newest.serving) - 1;
  const reached = slotTime(index, newest.flow, timing);
  return heldBefore(newest, reached, timing) ? null : reached;
}

/**
 * The line as the page's own /polling answer says it (core.serving.answer_point): the serving
 * number turn - position at the status's `updatedAt`, at the newest flow; null without points.
 */
export function answerPoint(points, turn, position, updatedAt) {
  if (!points.length || !(updatedAt > 0)) return null;
  return { atMs: updatedAt * 1000, serving: turn - position, flow: points[points.length - 1].flow };
}

/** The points the own /polling is planned from (core.serving.with_answer). */
export function withAnswer(points, answered) {
  if (!answered || (points.length && answered.atMs <= points[points.length - 1].atMs)) return points;
  return [...points, answered];
}

/** Seconds until the next fetch of the shared document. */
export function documentDelay(
  { visible, now, ownPollAt, claimSeconds = 0, predates = false, closed = false },
  timing,
) {
  if (closed) return visible ? timing.closedDocumentEverySeconds : timing.hiddenDocumentMaxSeconds;
  if (predates) return timing.stateMaxAgeSeconds;
  if (visible) return timing.documentEverySeconds;
  let most = timing.hiddenDocumentMaxSeconds;
  if (claimSeconds > 0) most = Math.min(most, Math.max(timing.documentEverySeconds, claimSeconds / 2));
  if (ownPollAt === null || ownPollAt === undefined) return most;
  return Math.min(most, Math.max(timing.documentEverySeconds, (ownPollAt - now) / 2));
}

/**
 * Seconds until the shown serving number reaches `turn` at `flow` a minute (the estimate,
 * counting down with the clock), or null when nobody is being admitted now.
 */
export function secondsToTurn(points, turn, now, flow, timing) {
  // The places left as shown, at the document's flow (the rate, or a full shop's turnover):
  // a new rate shows at once.
  const serving = shownServing(points, now, timing);
  if (serving === null || !(flow > 0)) return null;
  const left = turn - serving;
  if (left <= 0) return 0;
  const index = dueBy(now, flow, timing) + left - 1;
  return Math.max(0, slotTime(index, flow, timing) - now);
}

/**
 * The page's turn from its URL's fragment (the marketing link's redirect): {turn} for
 * `#turn=<n>`, {prequeue: true} for `#prequeue` (a draw decides the turn), else {} (ask).
 */
export function readFragment(url, timing) {
  let hash = "";
  try {
    hash = new URL(url).hash.replace(/^#/, "");
  } catch {
    return {};
  }
  if (hash === timing.prequeueFragment) return { prequeue: true };
  const match = new RegExp(`^${timing.turnFragment}=(\\d{1,15})$`).exec(hash);
  if (!match) return {};
  const turn = Number(match[1]);
  return turn >= 1 ? { turn } : {};
}

/** A capacity room's figures in the shared document, or undefined. */
function documentCapacity(body) {
  if (body.max_inside === undefined) return undefined;
  const valid =
    isCount(body.max_inside, 1) &&
    isCount(body.inside, 0) &&
    isCount(body.turnover, 0) &&
    typeof body.full === "boolean";
  if (!valid) return null;
  return {
    maxInside: body.max_inside,
    inside: body.inside,
    turnover: body.turnover,
    full: body.full,
    claimSeconds: isCount(body.claim_seconds, 0) ? body.claim_seconds : 0,
  };
}

const DOCUMENT_STATES = new Set(["open", "off", "paused", "closed", "prequeue", "drawing"]);

/**
 * The shared state document (parsed JSON) as {kind, serving, rate, flow, slowed, updatedAt,
 * points, nowMs, startsAt, drawn, ranked, prequeueBase, capacity, message, origin}, or
 * {kind: "invalid"} (handled like a failed fetch). Without history the document's own serving
 * number stands at its request time.
 */
export function interpretDocument(body, base) {
  if (!body || typeof body !== "object" || !DOCUMENT_STATES.has(body.state)) {
    return { kind: "invalid" };
  }
  if (!isCount(body.serving, 0) || !isCount(body.flow, 0) || !isCount(body.now, 0)) {
    return { kind: "invalid" };
  }
  const capacity = documentCapacity(body);
  if (capacity === null) return { kind: "invalid" };
  let points = parseHistory(body.history);
  if (!points.length) points = [{ atMs: body.now, serving: body.serving, flow: body.flow }];
  const document = {
    kind: body.state,
    serving: body.serving,
    rate: isCount(body.rate, 0) ? body.rate : 0,
    flow: body.flow,
    slowed: body.slowed === true,
    updatedAt: body.updated_at,
    points,
    nowMs: body.now,
    startsAt: isCount(body.starts_at, 0) ? body.starts_at : 0,
    drawn: body.drawn === true,
    ranked: body.ranked === true,
    prequeueBase: isCount(body.prequeue_base, 0) ? body.prequeue_base : 0,
    message: typeof body.message === "string" ? body.message.slice(0, 200) : "",
  };
  if (capacity) document.capacity = capacity;
  if (body.state === "off") {
    const origin = safeRedirectUrl(body.origin, base);
    if (!origin) return { kind: "invalid" };
    document.origin = origin;
  }
  return document;
}

/**
 * The offset (ms) of the room's clock from this one, from the documents fetched lately: each
 * gives a lower bound (its request time plus the edge's Age, against when it arrived). A clock
 * within CLOCK_TOLERANCE_MS of the room's is taken as right: the Age header counts whole
 * seconds, and a page on a well-set clock should not be moved by it.
 */
export const CLOCK_TOLERANCE_MS = 1500;
export function clockOffset(samples) {
  if (!samples.length) return 0;
  const best = Math.max(...samples);
  return Math.abs(best) < CLOCK_TOLERANCE_MS ? 0 : best;
}
