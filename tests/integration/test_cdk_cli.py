"""`cdk synth` through the real CDK CLI (node_modules/.bin/cdk, installed by npm ci).

Two synths: the repository's cdk.json with no context (the sample room, through app.py), and
the way `beekeeper deploy` runs it (`--app "<python> -m beekeeper.stacks.app" -c room=NAME`)
from outside the repository, with the room file in a temporary BEEKEEPER_CONFIG_DIR. Every
AWS endpoint points at a closed loopback port, so nothing can leave the machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from beekeeper.stacks.app import SAMPLE_ROOM

REPO = Path(__file__).resolve().parents[2]
CDK = REPO / "node_modules" / ".bin" / "cdk"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CDK.exists(), reason="the CDK CLI is installed by `npm ci`"),
]


def _cdk(
    args: list[str], *, cwd: Path, config_dir: Path, outdir: Path
) -> subprocess.CompletedProcess[str]:
    environment = {
        **os.environ,
        "BEEKEEPER_CONFIG_DIR": str(config_dir),
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9",
        "CDK_DISABLE_CLI_TELEMETRY": "true",
    }
    return subprocess.run(
        [str(CDK), "synth", "--no-notices", "--quiet", "--output", str(outdir), *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_synth_with_no_context_builds_the_sample_room(tmp_path: Path) -> None:
    outdir = tmp_path / "out"
    result = _cdk([], cwd=REPO, config_dir=tmp_path, outdir=outdir)
    assert result.returncode == 0, result.stderr
    template = json.loads((outdir / "beekeeper-sample.template.json").read_text())
    kinds = [resource["Type"] for resource in template["Resources"].values()]
    assert kinds.count("AWS::Lambda::Function") == 4
    # The edge in front, the origin lock on the stage; no governor schedule: only the trigger's.
    assert kinds.count("AWS::CloudFront::Distribution") == 1
    assert kinds.count("AWS::WAFv2::WebACL") == 1
    assert kinds.count("AWS::Events::Rule") == 1
    # The per-address rule (on by default) is the edge WAF's, in its own us-east-1 stack.
    waf = json.loads((outdir / "beekeeper-sample-edge-waf.template.json").read_text())
    scopes = [
        r["Properties"]["Scope"]
        for r in waf["Resources"].values()
        if r["Type"] == "AWS::WAFv2::WebACL"
    ]
    assert scopes == ["CLOUDFRONT"]
    acknowledged = {rule["id"] for rule in template["Metadata"]["cdk_nag"]["rules_to_suppress"]}
    # No domain: CloudFront's own certificate and TLS policy, acknowledged with the reason.
    assert "AwsSolutions-CFR4" in acknowledged
    assert SAMPLE_ROOM.origin in json.dumps(template)


def test_synth_of_a_room_file_the_way_beekeeper_deploy_runs_it(tmp_path: Path) -> None:
    room = SAMPLE_ROOM.replace(name="pop-up", display_name="Pop-up shop", rate=12_345)
    rooms = tmp_path / "config" / "rooms"
    rooms.mkdir(parents=True)
    (rooms / "pop-up.toml").write_text(room.to_toml(), encoding="utf-8")
    outdir = tmp_path / "out"
    app = f"{sys.executable} -m beekeeper.stacks.app"
    result = _cdk(
        ["--app", app, "-c", "room=pop-up", "-c", "api_logging=false"],
        cwd=tmp_path,
        config_dir=tmp_path / "config",
        outdir=outdir,
    )
    assert result.returncode == 0, result.stderr
    template = json.loads((outdir / "beekeeper-pop-up.template.json").read_text())
    (stage,) = (r for r in template["Resources"].values() if r["Type"] == "AWS::ApiGateway::Stage")
    assert stage["Properties"]["StageName"] == "pop-up"
    assert "AccessLogSetting" not in stage["Properties"]
    assert not any(
        r["Type"] == "AWS::Logs::LogGroup"
        and "API-Gateway-Execution-Logs" in json.dumps(r["Properties"])
        for r in template["Resources"].values()
    )
    acknowledged = {rule["id"] for rule in template["Metadata"]["cdk_nag"]["rules_to_suppress"]}
    assert {"AwsSolutions-APIG1", "AwsSolutions-APIG6"} <= acknowledged
    assert '\\"rate\\":12345' in json.dumps(template)


def test_a_missing_room_is_one_line_saying_what_to_do(tmp_path: Path) -> None:
    app = f"{sys.executable} -m beekeeper.stacks.app"
    result = _cdk(
        ["--app", app, "-c", "room=nowhere"], cwd=tmp_path, config_dir=tmp_path, outdir=tmp_path
    )
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert errors == [
        f"Error: no room file at {tmp_path / 'rooms' / 'nowhere.toml'}; create it with "
        "`beekeeper init` or pass -c room_file=PATH"
    ]
    assert "Traceback" not in result.stderr


def test_synth_before_the_wheels_are_fetched_says_what_to_run(tmp_path: Path) -> None:
    # A fresh install: nothing in the consumer's wheel cache yet (beekeeper deploy fills it).
    result = subprocess.run(
        [sys.executable, str(REPO / "app.py")],
        cwd=tmp_path,
        env={**os.environ, "BEEKEEPER_WHEEL_CACHE": str(tmp_path / "empty-cache")},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    (error,) = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert error.startswith("Error: The Lambda's wheels for Python ")
    assert error.endswith(
        f"run `{sys.executable} -m beekeeper.stacks.lambda_wheels` once (it needs PyPI), then "
        "synthesize again."
    )
