"""How long `beekeeper deploy` takes on this machine before the AWS CDK CLI takes over.

    .venv/bin/python bench/deploy_path.py [--runs 5] [--synth]

Each run is a fresh Python process (interpreter start and every import count) running
`beekeeper deploy` for a room in a fresh config directory: the URL checks, the CDK CLI lookup,
STS, the bootstrap check, the stack's status, the account's Lambda concurrency and API Gateway's
logging role, up to the moment the CDK CLI is asked to deploy. The AWS calls go over HTTP to an
AWS API emulator on loopback (moto's server), so they cost what a call costs here, not what a
round trip to AWS costs (add about 50-150 ms for each of the 5 calls from a typical network).
The CDK CLI is a recorded runner that notes the moment it is called and does nothing; Lambda's
GetAccountSettings, which moto lacks, and DNS are answered by stand-ins.

With --synth it also times, once, the real CDK CLI synthesizing the same room
(`node_modules/.bin/cdk synth`, as `beekeeper deploy` runs it): the local part of the deploy's
CDK step. What follows in AWS (asset upload, CloudFormation creating the resources) is not
measured here: docs/deploy.md gives an estimate.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOM = "bench-room"
REPO = Path(__file__).resolve().parents[1]


def child(started: float, config_dir: str) -> None:
    """One `beekeeper deploy`, timed from the parent's spawn to the CDK CLI's call."""
    imported_at = time.time()
    import boto3

    from beekeeper.cli.factory import CliFactory
    from beekeeper.cli.lambda_quota import AccountConcurrency
    from beekeeper.cli.main import main

    class RecordedCdk:
        called_at = 0.0

        def ensure_available(self) -> str | None:
            return None

        def run(self, args, *, env, cwd, on_line):  # type: ignore[no-untyped-def]
            if not self.called_at:
                RecordedCdk.called_at = time.time()
            if args[0] == "deploy":
                outputs = Path(args[args.index("--outputs-file") + 1])
                outputs.write_text(
                    json.dumps({f"beekeeper-{ROOM}": {"TableName": "t", "QueueUrl": "q"}})
                )
            return 0

    factory = CliFactory(
        environ={**os.environ, "BEEKEEPER_CONFIG_DIR": config_dir},
        session_factory=boto3.Session,
        cdk_runner=RecordedCdk(),
        stderr_is_terminal=lambda: False,
        resolve=lambda host: ["192.0.2.10"],
        concurrency=lambda settings, deployed: AccountConcurrency(1000, 1000, 0),
    )
    main_at = time.time()
    try:
        main(["deploy", ROOM], factory=factory)
    except SystemExit as exit_:
        assert exit_.code == 0, f"deploy exited {exit_.code}"
    print(
        json.dumps(
            {
                "start_and_imports": main_at - started,
                "deploy_path": RecordedCdk.called_at - main_at,
                "to_cdk": RecordedCdk.called_at - started,
                "python_start": imported_at - started,
            }
        )
    )


def prepare_config(config_dir: Path) -> None:
    beekeeper = Path(sys.executable).with_name("beekeeper")
    subprocess.run(
        [str(beekeeper), "init", "--yes", "--name", ROOM, "--region", "us-east-1",
         "--origin", "https://shop.example.com/sale", "--rate", "6000",
         "--alert-email", "ops@shop.example"],
        env={**os.environ, "BEEKEEPER_CONFIG_DIR": str(config_dir)},
        check=True,
        capture_output=True,
    )  # fmt: skip


def emulator() -> tuple[object, str]:
    import logging

    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    return server, f"http://{host}:{port}"


def synth_seconds(config_dir: Path) -> float:
    from beekeeper.cli.errors import UserError
    from beekeeper.cli.node import choose_node

    cdk = REPO / "node_modules" / ".bin" / "cdk"
    try:
        node = choose_node(shutil.which)  # the Node.js `beekeeper deploy` runs the CDK on
    except UserError as error:
        raise SystemExit(f"--synth needs Node.js: {error.message}") from error
    if not cdk.exists():
        raise SystemExit("--synth needs `npm ci` (the CDK CLI)")
    with tempfile.TemporaryDirectory() as work:
        started = time.perf_counter()
        subprocess.run(
            [str(cdk), "synth", "--app", f"{sys.executable} -m beekeeper.stacks.app",
             "-c", f"room={ROOM}", "--no-notices", "--quiet"],
            cwd=work,
            env=node.environment({**os.environ, "BEEKEEPER_CONFIG_DIR": str(config_dir),
                                  "CDK_DISABLE_CLI_TELEMETRY": "true"}),
            check=True,
            capture_output=True,
        )  # fmt: skip
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--synth", action="store_true", help="also time the CDK CLI's synth")
    parser.add_argument(
        "--child", nargs=2, metavar=("STARTED", "CONFIG_DIR"), help=argparse.SUPPRESS
    )
    options = parser.parse_args()
    if options.child:
        child(float(options.child[0]), options.child[1])
        return

    server, endpoint = emulator()
    environment = {
        **os.environ,
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    environment.pop("AWS_PROFILE", None)
    environment.pop("AWS_SESSION_TOKEN", None)
    import boto3

    boto3.client(
        "ssm", endpoint_url=endpoint, region_name="us-east-1",
        aws_access_key_id="bench", aws_secret_access_key="bench",
    ).put_parameter(Name="/cdk-bootstrap/hnb659fds/version", Value="27", Type="String")  # fmt: skip

    results = []
    with tempfile.TemporaryDirectory() as base:
        for run in range(options.runs):
            config_dir = Path(base, f"config-{run}")
            prepare_config(config_dir)
            started = time.time()
            answer = subprocess.run(
                [sys.executable, __file__, "--child", repr(started), str(config_dir)],
                env=environment,
                check=True,
                capture_output=True,
                text=True,
            )
            results.append(json.loads(answer.stdout.strip().splitlines()[-1]))
        synth = synth_seconds(Path(base, "config-0")) if options.synth else None
    server.stop()  # type: ignore[attr-defined]

    def row(key: str) -> str:
        values = [r[key] for r in results]
        return (
            f"median {statistics.median(values):.2f} s, "
            f"min {min(values):.2f} s, max {max(values):.2f} s"
        )

    print(f"beekeeper deploy up to the CDK CLI's call, {options.runs} fresh processes:")
    print(f"  interpreter start and imports:  {row('start_and_imports')}")
    print(f"  checks and AWS calls (loopback): {row('deploy_path')}")
    print(f"  total:                           {row('to_cdk')}")
    if synth is not None:
        print(f"cdk synth of the room (real CDK CLI, once): {synth:.1f} s")


if __name__ == "__main__":
    main()
