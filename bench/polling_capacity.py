"""How many waiting visitors /polling can hold, and how soon a visitor notices admission.

Run: .venv/bin/python bench/polling_capacity.py [--samples 20000] [--seed 1]

Uses the poll rule of the /polling response template (beekeeper.core.polling, held equal to the
template by the unit tests and re-checked here against the real template before measuring).

Standing load: core/polling_load.py (the model the stack sizes its throttle with), with the
page's jitter (a uniform factor in [1, 1 + POLL_JITTER], core/page_timing.py) stretching every
interval.

Notice latency. A Monte Carlo run of visitors approaching the front, each starting 15 minutes
out (beyond that everyone polls at the cap, so the start does not matter) at a random phase
of its poll cycle. The model's noise:
- status staleness: the status copy a poll reads is up to --staleness seconds old, so the
  position shown lags (admitted_total was smaller);
- queue order: SQS standard queues deliver roughly, not strictly, in order: a visitor's real
  admission time is the estimated one plus a normal error of --order-noise seconds;
- overhead: --overhead seconds for the poll's round trip and DynamoDB's eventual consistency.
The latency is the time from the admission item's write to the poll that sees it.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
from collections.abc import Callable, Sequence

from beekeeper.apigateway.velocity import RenderInput, render
from beekeeper.core import polling
from beekeeper.core.page_timing import MEAN_POLL_STRETCH, POLL_JITTER
from beekeeper.core.polling_load import standing_polls_per_second
from beekeeper.core.routes import route
from beekeeper.vtl import load_template, template_values

API_GATEWAY_DEFAULT_LIMIT = 10_000  # requests per second, per account and region
# The page waits poll_after * (1 + POLL_JITTER * random()): never sooner than asked
# (core/page_timing.py, which the page's pollDelay takes its values from).
JITTER_LOW, JITTER_HIGH = 1.0, 1.0 + POLL_JITTER
MEAN_JITTER = MEAN_POLL_STRETCH
RATES_PER_MINUTE = (1_000, 6_000, 20_000, 30_000, 60_000, 300_000)
LINE_LENGTHS = (100_000, 1_000_000, 2_000_000)


def standing_requests_per_second(line_length: int, rate_per_minute: int) -> float:
    return standing_polls_per_second(line_length, rate_per_minute, interval_factor=MEAN_JITTER)


def notice_latencies(
    rate_per_minute: int,
    *,
    samples: int,
    staleness: float,
    order_noise: float,
    overhead: float,
    rng: random.Random,
) -> list[float]:
    per_second = rate_per_minute / 60
    start_eta = 15 * 60
    latencies = []
    for _ in range(samples):
        start_position = start_eta * per_second
        admitted_at = max(0.0, start_eta + rng.gauss(0.0, order_noise))
        # The first poll after the start comes at a random phase of the visitor's cycle.
        start_wait = polling.poll_after_seconds(math.ceil(start_position), rate_per_minute)
        now = rng.uniform(0, start_wait)
        while True:
            if now >= admitted_at:
                latencies.append(now - admitted_at + overhead)
                break
            # The status copy was written a little earlier: fewer admitted, a longer line.
            seen_at = max(0.0, now - rng.uniform(0, staleness))
            position = max(1, math.ceil(start_position - per_second * seen_at))
            wait = polling.poll_after_seconds(position, rate_per_minute)
            now += wait * rng.uniform(JITTER_LOW, JITTER_HIGH)
    return latencies


def check_rule_against_template(rng: random.Random, checks: int = 200) -> None:
    """The Python rule must be the template's: render the real template and compare."""
    values = template_values(table_name="bench", origin="https://shop.example")
    template = load_template(route("polling").response_template, values)
    for _ in range(checks):
        rate = rng.choice([1, 7, 60, 1_000, 30_000, 300_000])
        ordinal = rng.randint(1, 5_000_000)
        admitted = rng.randint(0, ordinal)
        token = f"{'B' * 22}.{ordinal}"
        status = {
            "pk": {"S": f"status#{ordinal % 10}"},
            "admitted_total": {"N": str(admitted)},
            "rate": {"N": str(rate)},
            "enabled": {"BOOL": True},
        }
        body = json.dumps({"Responses": {"bench": [status]}})
        answer = json.loads(
            render(
                template,
                RenderInput(
                    body=body,
                    headers={"Cookie": f"beekeeper_token={token}"},
                    context={"requestTimeEpoch": 0},
                ),
            )
        )
        position = max(1, ordinal - admitted)
        eta = polling.eta_seconds(position, rate)
        expected = polling.poll_after_seconds(position, rate)
        if answer["poll_after"] != expected or answer["eta_seconds"] != eta:
            raise SystemExit(f"template and rule differ for {ordinal=} {admitted=} {rate=}")


def _largest(high: int, fits: Callable[[int], bool]) -> int:
    """The largest value in [0, high] for which `fits` holds (it must hold for all smaller)."""
    low = 0
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if fits(middle) else (low, middle - 1)
    return low


def max_line_under_limit(rate_per_minute: int) -> int:
    """The longest line whose standing load stays under API Gateway's default limit."""
    return _largest(
        50_000_000,
        lambda line: (
            standing_requests_per_second(line, rate_per_minute) <= API_GATEWAY_DEFAULT_LIMIT
        ),
    )


def max_rate_under_limit(line_length: int) -> int:
    """The highest admission rate (per minute) at which `line_length` waiting stay under it."""
    return _largest(
        300_000,
        lambda rate: standing_requests_per_second(line_length, rate) <= API_GATEWAY_DEFAULT_LIMIT,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--staleness", type=float, default=5.0, help="seconds (max)")
    parser.add_argument("--order-noise", type=float, default=10.0, help="seconds (std dev)")
    parser.add_argument("--overhead", type=float, default=0.3, help="seconds")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    check_rule_against_template(rng)

    print(
        f"poll rule: half the time to the earliest admission, within "
        f"[{polling.POLL_AFTER_MIN_SECONDS} s, "
        f"{polling.POLL_AFTER_MAX_SECONDS} s]; page jitter x[{JITTER_LOW}, {JITTER_HIGH}]"
    )
    print("\nStanding load of /polling (requests/s)")
    header = f"{'rate/min':>9} | " + " | ".join(f"{n:>11,} waiting" for n in LINE_LENGTHS)
    print(header + f" | {'longest line < 10k/s':>21}")
    for rate in RATES_PER_MINUTE:
        loads = [standing_requests_per_second(n, rate) for n in LINE_LENGTHS]
        cells = " | ".join(f"{load:>19,.0f}" for load in loads)
        print(f"{rate:>9,} | {cells} | {max_line_under_limit(rate):>21,}")

    for line in LINE_LENGTHS:
        print(
            f"{line:,} waiting stay under {API_GATEWAY_DEFAULT_LIMIT:,} requests/s up to "
            f"{max_rate_under_limit(line):,} admissions per minute"
        )

    print(
        f"\nNotice latency (s): staleness <= {args.staleness} s, order noise sd "
        f"{args.order_noise} s, overhead {args.overhead} s, {args.samples:,} visitors per rate"
    )
    print(f"{'rate/min':>9} | {'median':>6} | {'p90':>6} | {'p99':>6}")
    for rate in RATES_PER_MINUTE:
        latencies = notice_latencies(
            rate,
            samples=args.samples,
            staleness=args.staleness,
            order_noise=args.order_noise,
            overhead=args.overhead,
            rng=rng,
        )
        quantiles = statistics.quantiles(latencies, n=100)
        print(
            f"{rate:>9,} | {statistics.median(latencies):>6.2f} | {quantiles[89]:>6.2f} | "
            f"{quantiles[98]:>6.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
