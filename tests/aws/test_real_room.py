"""Opt-in: a room in a real AWS account, the whole journey a shop relies on, always torn down.

    BEEKEEPER_REAL_AWS=1 AWS_PROFILE=... AWS_REGION=eu-west-1 \
        .venv/bin/python -m pytest tests/aws -s

Skipped unless BEEKEEPER_REAL_AWS=1 and credentials and a region are set. It builds the wheel,
installs it into a fresh virtualenv and runs that `beekeeper` (with this checkout's CDK CLI on
PATH), as a shop would:

1. `init` a room with a random name at 60 visitors/min, `deploy --yes` it (bootstrapping the
   account and region when needed);
2. `beekeeper check` on it: the product's own journey of two test visitors (cli/check: the
   marketing link and its work, the cookie and redirect, the page and its
   Content-Security-Policy, the shared state, their /polling, admission, the ticket verified
   offline, /client, a redeem with the cookie alone refused, a redeem and a second redeem),
   every step passed, its lines in the report;
   then tests/support/realroom/journey.py's many visitors: positions on /polling, admitted
   exactly once and in order as far as a standard queue allows, /client true for them and false
   for a forged token, `off` sending new visitors to the shop within 10 s, a page's
   subscription to the room's push channel (AppSync Events, with the key and endpoints its page
   carries: the key refused a publish) seeing `hold` and `resume` within 2 s, `rate` changing
   `status`;
3. the room's custom metrics readable in CloudWatch within a few minutes, and an alarm's
   notice reaching the room's SNS topic (its history says the action succeeded);
4. `destroy --yes`, then nothing of the room left: every resource tagged with the room, its
   dashboard and its IAM roles, looked up until gone (deletion is eventual) or 5 minutes pass.

A second room in capacity mode (`--max-inside`) is deployed the same way and checked with
`beekeeper check`, whose test visitors go through /enter (302 to the shop), are seen inside by
/client, redeem once, and leave (then again: `{"left": false}`), their places freed.

A short report is printed at the end (with -s), whether the run passed or not. Set
BEEKEEPER_TEST_ALERT_EMAIL to subscribe an address and receive the alarm notice.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.support.realroom import aws_checks, journey
from tests.support.wheel import build_wheel, install_in_fresh_venv

REPO = Path(__file__).resolve().parents[2]
VISITORS = 8
METRICS = ("Arrivals", "Admitted", "Rate", "Planned")

pytestmark = [
    pytest.mark.aws,
    pytest.mark.slow,
    pytest.mark.skipif(
        os.environ.get("BEEKEEPER_REAL_AWS") != "1",
        reason="deploys to a real AWS account: set BEEKEEPER_REAL_AWS=1 with real credentials",
    ),
]


def _region() -> str:
    import boto3

    session = boto3.Session()
    if session.get_credentials() is None or not session.region_name:
        pytest.skip("no AWS credentials or region in the environment")
    return str(session.region_name)


@pytest.fixture(scope="module")
def installed_beekeeper(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`beekeeper` from the wheel, installed into a fresh virtualenv (its base dependencies)."""
    wheel = build_wheel(tmp_path_factory.mktemp("wheel"))
    return install_in_fresh_venv(wheel, tmp_path_factory.mktemp("venv")) / "beekeeper"


class Run:
    """One room's run: its `beekeeper` command, its AWS clients, and the report."""

    def __init__(self, executable: Path, config_dir: Path, region: str) -> None:
        import boto3

        self.name = f"e2e-{secrets.token_hex(3)}"
        self.region = region
        self.config_dir = config_dir
        self.executable = executable
        self.report: list[str] = [f"room {self.name} in {region}"]
        self._clients: dict[str, Any] = {}
        self._boto3 = boto3

    def client(self, service: str) -> Any:
        if service not in self._clients:
            self._clients[service] = self._boto3.client(service, region_name=self.region)
        return self._clients[service]

    def us_east_1(self, service: str) -> Any:
        """The edge's part (the distribution, its WAF) is in us-east-1 whatever the region."""
        return self._boto3.client(service, region_name="us-east-1")

    def beekeeper(self, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
        env = {
            **os.environ,
            "BEEKEEPER_CONFIG_DIR": str(self.config_dir),
            # This checkout's CDK CLI (npm ci); without it, deploy fetches one with npx.
            "PATH": f"{REPO / 'node_modules' / '.bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        }
        return subprocess.run(
            [str(self.executable), *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=45 * 60,
            check=False,
        )

    def must(self, *args: str) -> str:
        done = self.beekeeper(args)
        assert done.returncode == 0, f"beekeeper {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def timed(self, what: str, *args: str) -> str:
        started = time.monotonic()
        out = self.must(*args)
        self.report.append(f"{what}: {time.monotonic() - started:.0f} s")
        return out


@pytest.fixture
def real_room(installed_beekeeper: Path, tmp_path: Path) -> Iterator[Run]:
    run = Run(installed_beekeeper, tmp_path / "config", _region())
    started = time.monotonic()
    try:
        yield run
    finally:
        destroyed = run.beekeeper(["destroy", run.name, "--yes"])
        run.report.append(f"destroy: exit {destroyed.returncode}")
        left = aws_checks.wait_until_gone(
            run.client, run.name, timeout=300, sleep=time.sleep, us_east_1=run.us_east_1
        )
        run.report.append(f"left behind after destroy: {left or 'nothing'}")
        run.report.append(f"whole run: {(time.monotonic() - started) / 60:.1f} min")
        print("\n== real-AWS journey\n" + "\n".join(run.report))
        assert destroyed.returncode == 0, destroyed.stdout + destroyed.stderr
        assert left == [], f"destroy left {left}"


ORIGIN = "https://example.com/shop"
DISPLAY_NAME = "Beekeeper end-to-end test"


def deployed(run: Run) -> journey.JourneyRoom:
    """`deploy` the room `init` wrote, timed, and the journey's view of it."""
    run.timed("deploy", "deploy", run.name, "--yes", "--no-check")
    record = json.loads((run.config_dir / "rooms" / f"{run.name}.deployed.json").read_text())
    outputs = record["outputs"]  # beside the settings deployed (cli/rooms.py)
    return journey.JourneyRoom(
        name=run.name,
        marketing_url=outputs["MarketingUrl"],
        page_url=outputs["PageUrl"],
        client_check_url=outputs["ClientCheckUrl"],
        origin=ORIGIN,
        display_name=DISPLAY_NAME,
        beekeeper=run.beekeeper,
        dynamodb=run.client("dynamodb"),
        table=outputs["TableName"],
        report=run.report,
        origin_url=outputs["OriginUrl"],
    )


def checked(run: Run) -> None:
    """`beekeeper check` on the deployed room: the command's own journey, every step passed."""
    started = time.monotonic()
    done = run.beekeeper(["check", run.name, "--json"])
    report = json.loads(done.stdout)
    run.report.append(
        f"beekeeper check: exit {done.returncode}, {time.monotonic() - started:.0f} s"
    )
    run.report += [
        f"  {step['step']}: {step['seconds']} s, {step['saw']}" for step in report["steps"]
    ]
    assert done.returncode == 0 and report["passed"], done.stdout + done.stderr


def test_a_capacity_room_in_aws_enters_leaves_and_redeems(real_room: Run) -> None:
    run = real_room
    run.must(
        "init", "--yes", "--name", run.name, "--display-name", DISPLAY_NAME,
        "--region", run.region, "--origin", ORIGIN, "--rate", "60",
        "--max-inside", "5", "--session-minutes", "5", "--claim-minutes", "5",
    )  # fmt: skip
    deployed(run)
    checked(run)


def test_a_room_in_aws_does_what_a_shop_relies_on(real_room: Run) -> None:
    run = real_room
    alert_email = os.environ.get("BEEKEEPER_TEST_ALERT_EMAIL", "")
    run.must(
        "init", "--yes", "--name", run.name, "--display-name", DISPLAY_NAME,
        "--region", run.region, "--origin", ORIGIN, "--rate", "60",
        *(["--alert-email", alert_email] if alert_email else []),
    )  # fmt: skip
    room = deployed(run)
    since, _ = aws_checks.recent(1)
    checked(run)

    tokens = journey.join(room, VISITORS)
    journey.polling_shows_a_position(room, tokens)
    journey.admitted_once_and_in_order(room, tokens, timeout=6 * 60)
    # The consumer's ARM64 crypto wheels sign in Lambda itself.
    journey.tickets_verify_offline(room, tokens)
    journey.client_says_who_came_through(room, tokens)
    journey.off_lets_new_visitors_into_the_shop(room)
    journey.a_subscribed_page_sees_a_hold(room)
    journey.rate_changes_the_status(room, 120)

    # A producer container writes a minute's metric line with its first request after that
    # minute: a few returning visitors (sent to the shop) in a later minute write them.
    time.sleep(61)
    for token in tokens[:3]:
        assert journey.get(room.marketing_url, cookie=f"beekeeper_token={token}").status == 302

    def metrics_in() -> dict[str, float | None] | None:
        _, until = aws_checks.recent(0)
        sums = aws_checks.metric_sums(run.client("cloudwatch"), run.name, METRICS, since, until)
        return sums if all(value is not None for value in sums.values()) else None

    sums = journey.wait_for(metrics_in, 6 * 60, 20, "the room's metrics in CloudWatch")
    # The check's test visitors count in no metric: only the journey's real visitors do.
    assert sums["Admitted"] == VISITORS and sums["Arrivals"] >= VISITORS
    run.report.append(f"metrics in CloudWatch: {sums}")

    alarm = f"beekeeper-{run.name}-dead-letters"
    account = run.client("sts").get_caller_identity()["Account"]
    topic = f"arn:aws:sns:{run.region}:{account}:beekeeper-{run.name}-alarms"
    run.client("cloudwatch").set_alarm_state(
        AlarmName=alarm, StateValue="ALARM", StateReason="beekeeper end-to-end test"
    )
    journey.wait_for(
        lambda: aws_checks.alarm_notice_delivered(run.client("cloudwatch"), alarm, topic),
        120,
        10,
        "the alarm's notice published to the room's topic",
    )
    run.report.append(f"alarm notice: {alarm} published to {topic}")
