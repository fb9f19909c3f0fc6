"""Benchmark: the CPU a render of the busiest mapping templates takes in the local engine.

    .venv/bin/python bench/vtl_render.py [--renders N] [--runs R] [--against CHECKOUT]
                                         [--simulation]

Renders the /client and /polling templates of a capacity-mode room (the request template and
the response template of each, as route_method gives them to API Gateway) over the inputs a
waiting visitor's requests give them, N times each (2,000 by default), and prints the median
CPU microseconds a render takes over R runs (5 by default). With --against, the same renders
run alternately here and in another checkout (its own .venv, so its own engine), each run a
fresh process, and the ratio of the two medians is printed: both sides run in turns on the
same machine, so the ratio holds on a busy machine where the microseconds do not. With
--simulation each run also times a capacity-mode simulation whose every /client and /polling
answer goes through these templates (SIMULATION: 1,300 visitors with every fault), whole.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

CLIENT_QUERY = {"token": "AAAAAAAAAACfCD_Nbv2vSw.1234"}
POLLING_COOKIE = {"Cookie": "theme=dark; beekeeper_token=AAAAAAAAAACfCD_Nbv2vSw.1234"}
CONTEXT = {"requestTimeEpoch": 1763780000456, "httpMethod": "GET", "stage": "local"}
# DynamoDB's BatchGetItem answer for a visitor still waiting in a full capacity-mode room.
POLLING_ANSWER = {
    "Responses": {
        "table": [
            {
                "pk": {"S": "status#4"},
                "admitted_total": {"N": "734"},
                "rate": {"N": "600"},
                "updated_at": {"N": "1763779997"},
                "max_inside": {"N": "100"},
                "inside": {"N": "100"},
                "turnover": {"N": "1"},
                "claim_seconds": {"N": "120"},
                "enabled": {"BOOL": True},
                "slowed": {"BOOL": False},
            }
        ]
    }
}


# `beekeeper simulate` arguments: capacity mode, crowded, every fault.
SIMULATION = (  # noqa: SIM905 (the command line as one types it)
    "--rate 600 --visitors 1300 --arrival uniform:30 --minutes 60 --max-inside 100 "
    "--session-minutes 5 --claim-minutes 2 --visit-minutes 10 --abandon 0.2 --leave 1 "
    "--faults crash,throttle,duplicates,double-trigger --json"
).split()


def _renders() -> dict[str, tuple[str, object]]:
    """(template, input) of each render, by name: imported here, so a run measures the engine
    of the checkout whose interpreter runs it."""
    from beekeeper.apigateway.velocity import RenderInput
    from beekeeper.core.routes import templated
    from beekeeper.core.settings import Mode
    from beekeeper.vtl.methods import route_method

    def templates(route: str) -> tuple[str, str]:
        method = route_method(
            templated(Mode.CAPACITY)[route],
            mode=Mode.CAPACITY,
            table_name="table",
            origin="https://shop.example",
            session_seconds=300,
            credentials="arn:aws:iam::123456789012:role/integration",
            region="us-east-1",
            partition="aws",
        )
        integration = method["Integration"]
        request = integration["RequestTemplates"]["application/json"]
        default = next(
            r for r in integration["IntegrationResponses"] if "SelectionPattern" not in r
        )
        return request, default["ResponseTemplates"]["application/json"]

    client_request, client_response = templates("client")
    polling_request, polling_response = templates("polling")
    client = RenderInput(query=CLIENT_QUERY, context=CONTEXT)
    polling = RenderInput(headers=POLLING_COOKIE, context=CONTEXT)
    answered = RenderInput(body=json.dumps(POLLING_ANSWER), headers=POLLING_COOKIE, context=CONTEXT)
    return {
        "/client request": (client_request, client),
        "/client response": (client_response, RenderInput(query=CLIENT_QUERY, context=CONTEXT)),
        "/polling request": (polling_request, polling),
        "/polling response": (polling_response, answered),
    }


def _simulation_seconds() -> float:
    # A small one first, untimed: what the command imports on its way is not the renders' CPU.
    small = ["--rate", "600", "--visitors", "20", "--minutes", "2", "--max-inside", "10"]
    _simulate([*small, "--session-minutes", "5", "--faults", "crash,throttle,duplicates"])
    started = time.process_time()
    _simulate(SIMULATION)
    return time.process_time() - started


def _simulate(arguments: list[str]) -> None:
    from click.testing import CliRunner

    from beekeeper.cli.main import cli

    result = CliRunner().invoke(cli, ["simulate", *arguments])
    if result.exit_code != 0:
        raise SystemExit(result.output)


def measure(renders: int, simulation: bool) -> dict[str, float]:
    """CPU microseconds per render of each template (compiled before the clock starts), and
    with `simulation` the simulation's CPU seconds."""
    from beekeeper.apigateway.velocity import render_response

    timings: dict[str, float] = {}
    if simulation:
        timings["simulation, CPU s"] = _simulation_seconds()
    for name, (template, data) in _renders().items():
        render_response(template, data)
        started = time.process_time()
        for _ in range(renders):
            render_response(template, data)
        timings[f"{name}, CPU µs a render"] = (time.process_time() - started) / renders * 1e6
    return timings


def _run(python: Path, renders: int, simulation: bool) -> dict[str, float]:
    """One measurement in a fresh process of `python` (a checkout's own interpreter)."""
    extra = ["--simulation"] if simulation else []
    done = subprocess.run(
        [str(python), __file__, "--renders", str(renders), "--once", *extra],
        capture_output=True,
        text=True,
        check=True,
    )
    timings: dict[str, float] = json.loads(done.stdout)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--renders", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--against", type=Path, help="another checkout, with its .venv")
    parser.add_argument("--simulation", action="store_true", help="time SIMULATION too")
    parser.add_argument("--once", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.once:
        print(json.dumps(measure(options.renders, options.simulation)))
        return
    here = Path(sys.executable)
    sides = {"here": here}
    if options.against is not None:
        sides = {"against": options.against / ".venv" / "bin" / "python", "here": here}
    runs: dict[str, list[dict[str, float]]] = {side: [] for side in sides}
    for _ in range(options.runs):
        for side, python in sides.items():
            runs[side].append(_run(python, options.renders, options.simulation))
    names = list(runs["here"][0])
    medians = {
        side: {name: statistics.median(run[name] for run in done) for name in names}
        for side, done in runs.items()
    }
    if options.against is None:
        print("| what | median |")
        print("|---|---:|")
        for name in names:
            print(f"| {name} | {medians['here'][name]:.1f} |")
        return
    print("| what | against | here | ratio |")
    print("|---|---:|---:|---:|")
    for name in names:
        before, after = medians["against"][name], medians["here"][name]
        print(f"| {name} | {before:.1f} | {after:.1f} | {after / before:.2f} |")


if __name__ == "__main__":
    main()
