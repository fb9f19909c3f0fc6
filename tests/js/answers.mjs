// /polling answers for the page's tests (docs/data-model.md), built from one waiting answer.
// Not a test file (node --test runs *.test.mjs only).

/** A waiting visitor's answer; `extra` overrides or adds fields. */
export const waitingAnswer = (position = 12, extra = {}) => ({
  allow: false,
  state: "waiting",
  position,
  eta_seconds: 300,
  poll_after: 20,
  rate: 100,
  slowed: false,
  updated_at: 1_790_000_000,
  ...extra,
});

/** A capacity-mode room's waiting answer: the shop full unless `extra` says otherwise. */
export const capacityAnswer = (position = 12, extra = {}) =>
  waitingAnswer(position, { max_inside: 500, inside: 500, turnover: 3, full: true, ...extra });
