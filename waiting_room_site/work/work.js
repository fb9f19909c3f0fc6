// The work page's controller: the marketing link sent the visitor here with a challenge in the
// fragment (work#<challenge>), shared with every browser that followed the link at the same
// moment; the page adds its own nonce and solves its puzzles with solver.js, in Web Workers when the
// browser has them (the page stays responsive and a phone's cores share the sub-puzzles), and
// goes back to the marketing link with the solution, which gives the place in line.
//
// The page makes no request of its own: it only navigates (to the link, or the link again
// when there is no challenge to solve). docs/page.md describes it.

import {
  challengeSeed,
  initialHash,
  parseChallenge,
  roundConstants,
  rounds,
  schedule,
  searchCounters,
  seedText,
  solutionText,
  visitorNonce,
} from "./solver.js";

// Tries a main-thread slice makes before it lets the page breathe (no Worker available).
const SLICE_TRIES = 20_000;

// The language of the first preferred tag whose primary subtag the page speaks.
export function workLanguage(preferred, available, fallback) {
  for (const tag of preferred || []) {
    if (typeof tag !== "string") continue;
    const primary = tag.toLowerCase().split("-")[0];
    if (available.includes(primary)) return primary;
  }
  return fallback;
}

// The worker's whole program: the solver's functions as the page has them, and a loop over
// the sub-puzzles it is given. Built from the functions' own source text, so the page carries
// the solver once.
export function workerSource() {
  return [
    roundConstants.toString(),
    initialHash.toString(),
    schedule.toString(),
    rounds.toString(),
    searchCounters.toString(),
    "onmessage = (event) => {",
    "  const { seed, target, indices } = event.data;",
    "  for (const index of indices) {",
    "    postMessage({ index, counter: searchCounters(seed, index, target, 0, 0x100000000) });",
    "  }",
    "};",
  ].join("\n");
}

// Which sub-puzzles each of `workers` workers takes: round robin.
export function shares(count, workers) {
  const lists = Array.from({ length: workers }, () => []);
  for (let index = 0; index < count; index++) lists[index % workers].push(index);
  return lists.filter((list) => list.length > 0);
}

export function startWork(env) {
  const { document, window } = env;
  const config = JSON.parse(document.getElementById("beekeeper-work").textContent);
  const lang = workLanguage(env.languages, Object.keys(config.strings), config.defaultLanguage);
  const t = config.strings[lang];
  const hook = (name) => document.querySelector(`[data-bk="${name}"]`);
  document.documentElement.lang = lang;
  for (const element of document.querySelectorAll("[data-bk-text]")) {
    element.textContent = t[element.getAttribute("data-bk-text")] || "";
  }
  const progress = hook("work-progress");
  progress.setAttribute("aria-label", t.progressLabel);
  const status = hook("work-status");

  const challenge = parseChallenge(decodeURIComponent(window.location.hash.replace(/^#/, "")));
  if (!challenge) {
    // Nothing to solve: the link gives a fresh challenge (no automatic loop).
    hook("work-working").hidden = true;
    hook("work-missing").hidden = false;
    return null;
  }

  const visitor = visitorNonce(window.crypto);
  const counters = new Array(challenge.count);
  let solved = 0;
  const showProgress = () => {
    const percent = Math.round((100 * solved) / challenge.count);
    progress.setAttribute("aria-valuenow", String(percent));
    hook("work-fill").style.width = `${Math.max(2, percent)}%`;
  };
  const finish = () => {
    status.textContent = t.done;
    const url = `${config.joinUrl}?${config.parameter}=${encodeURIComponent(
      solutionText(challenge, counters, visitor),
    )}`;
    // Replaced, not pushed: Back leads to where the visitor came from, not to this page.
    window.location.replace(url);
  };
  const found = (index, counter) => {
    counters[index] = counter;
    solved += 1;
    showProgress();
    if (solved === challenge.count) finish();
  };
  status.textContent = t.working;
  showProgress();

  const seed = challengeSeed(seedText(challenge, visitor));
  const workers = startWorkers(env, config, challenge, seed, found);
  if (workers) return { challenge, workers };
  solveOnThisThread(env, challenge, seed, found);
  return { challenge, workers: [] };
}

function startWorkers(env, config, challenge, seed, found) {
  const { window } = env;
  if (typeof window.Worker !== "function" || typeof window.Blob !== "function") return null;
  const cores = Number(window.navigator.hardwareConcurrency) || 2;
  const lists = shares(challenge.count, Math.max(1, Math.min(config.maxWorkers, cores)));
  let url;
  try {
    url = window.URL.createObjectURL(new window.Blob([workerSource()], { type: "text/javascript" }));
    return lists.map((indices) => {
      const worker = new window.Worker(url);
      worker.onmessage = (event) => found(event.data.index, event.data.counter);
      worker.postMessage({ seed: Array.from(seed), target: challenge.target, indices });
      return worker;
    });
  } catch {
    return null; // a browser that refuses workers: the page solves on its own thread
  } finally {
    if (url) window.setTimeout(() => window.URL.revokeObjectURL(url), 60_000);
  }
}

// Without workers: slices of tries between which the page stays responsive.
function solveOnThisThread(env, challenge, seed, found) {
  let index = 0;
  let start = 0;
  const step = () => {
    const counter = searchCounters(seed, index, challenge.target, start, SLICE_TRIES);
    if (counter >= 0) {
      found(index, counter);
      index += 1;
      start = 0;
    } else {
      start += SLICE_TRIES;
    }
    if (index < challenge.count) env.window.setTimeout(step, 0);
  };
  env.window.setTimeout(step, 0);
}

if (typeof document !== "undefined" && document.getElementById("beekeeper-work")) {
  startWork({ document, window, languages: navigator.languages || [navigator.language] });
}
