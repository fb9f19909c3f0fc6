// Evaluates the page's rule (waiting_room_site/page.js) on cases read from stdin (JSON), for
// tests/unit/test_serving_twin.py, which holds the answers equal to core/serving.py's. Not a
// test file (node --test runs *.test.mjs only).
import { readFileSync } from "node:fs";

import {
  answerPoint,
  documentDelay,
  documentPredates,
  dueBy,
  firstOwnPoll,
  nextMoment,
  parseHistory,
  placeShown,
  servingAt,
  shownMoment,
  shownServing,
  slotTime,
  turnDueAt,
  withAnswer,
} from "../../waiting_room_site/page.js";

const { timing, cases } = JSON.parse(readFileSync(0, "utf8"));
const answers = cases.map((c) => {
  const points = parseHistory(c.history);
  return {
    due_by: dueBy(c.at, c.flow, timing),
    slot_time: slotTime(c.index, c.flow, timing),
    serving_now: servingAt(points, c.at, 0, timing),
    shown: shownServing(points, c.at, timing),
    place: placeShown(points, c.turn, c.at, timing),
    moment: shownMoment(points, c.at, timing),
    next_moment: nextMoment(points, c.at, timing),
    first_own_poll: firstOwnPoll(points, c.turn, c.at, timing),
    first_own_poll_loading: firstOwnPoll(points, c.turn, c.at, timing, true),
    first_own_poll_answered: firstOwnPoll(
      withAnswer(points, answerPoint(points, c.turn, c.position, c.updated_at)),
      c.turn,
      c.at,
      timing,
    ),
    document_delay: documentDelay(
      {
        visible: c.visible,
        now: c.at,
        ownPollAt: c.own_poll_at,
        claimSeconds: c.claim,
        closed: c.closed,
      },
      timing,
    ),
    predates: documentPredates(points, c.turn, c.at, timing),
    turn_due_at: turnDueAt(points, c.turn, c.at, timing),
  };
});
process.stdout.write(JSON.stringify(answers));
