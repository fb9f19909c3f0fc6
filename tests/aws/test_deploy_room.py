"""Opt-in: deploy a room to a real AWS account, send one visitor through, destroy it.

Runs only with BEEKEEPER_REAL_AWS=1 and real credentials for a CDK-bootstrapped account and
region (`cdk bootstrap`); otherwise skipped. The room has a random name and is destroyed in a
`finally`, whatever happened. Takes about 5-10 minutes and costs a few cents.

    BEEKEEPER_REAL_AWS=1 AWS_PROFILE=... AWS_REGION=eu-west-1 \
        .venv/bin/python -m pytest tests/aws -m aws -s
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import secrets
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from beekeeper.core.datamodel import COOKIE_NAME, Token
from beekeeper.core.settings import RoomSettings

REPO = Path(__file__).resolve().parents[2]
CDK = REPO / "node_modules" / ".bin" / "cdk"
ADMISSION_DEADLINE_SECONDS = 6 * 60

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


def _account_has_api_logging_role(region: str) -> bool:
    import boto3

    account = boto3.client("apigateway", region_name=region).get_account()
    return bool(account.get("cloudwatchRoleArn"))


def _cdk(verb: list[str], room: str, config_dir: Path, workdir: Path, logging: bool) -> None:
    command = [
        str(CDK),
        *verb,
        "--no-notices",
        "--app",
        f"{sys.executable} -m beekeeper.stacks.app",
        "-c",
        f"room={room}",
        "-c",
        f"api_logging={'true' if logging else 'false'}",
    ]
    environment = {**os.environ, "BEEKEEPER_CONFIG_DIR": str(config_dir)}
    subprocess.run(command, cwd=workdir, env=environment, check=True, timeout=30 * 60)


@pytest.fixture
def deployed_room(tmp_path: Path) -> Iterator[dict[str, str]]:
    region = _region()
    name = f"e2e-{secrets.token_hex(4)}"
    room = RoomSettings(
        name=name,
        display_name="Beekeeper end-to-end test",
        region=region,
        origin="https://example.com/shop",
        rate=60,
        log_retention_days=1,
    )
    config_dir = tmp_path / "config"
    (config_dir / "rooms").mkdir(parents=True)
    (config_dir / "rooms" / f"{name}.toml").write_text(room.to_toml(), encoding="utf-8")
    outputs_file = tmp_path / "outputs.json"
    logging = _account_has_api_logging_role(region)
    try:
        _cdk(
            ["deploy", "--require-approval", "never", "--outputs-file", str(outputs_file)],
            name,
            config_dir,
            tmp_path,
            logging,
        )
        outputs = json.loads(outputs_file.read_text())[room.stack_name]
        yield outputs
    finally:
        _cdk(["destroy", "--force"], name, config_dir, tmp_path, logging)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _get_json(opener: urllib.request.OpenerDirector, url: str) -> dict[str, Any]:
    with opener.open(url, timeout=30) as response:
        assert response.headers["Content-Type"].startswith("application/json")
        assert response.headers["Cache-Control"] == "no-store"
        return dict(json.loads(response.read()))


def test_one_visitor_goes_through_the_room(deployed_room: dict[str, str]) -> None:
    jar = http.cookiejar.CookieJar()
    visitor = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))

    # The marketing link sets the first-party cookie and sends the visitor to the page.
    no_redirects = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), _NoRedirect)
    with pytest.raises(urllib.error.HTTPError) as redirect:
        no_redirects.open(deployed_room["MarketingUrl"], timeout=30)
    assert redirect.value.code == 302, redirect.value.read()
    assert redirect.value.headers["Location"].endswith("room")
    token = next(cookie.value for cookie in jar if cookie.name == COOKIE_NAME)
    assert Token.parse(token) is not None

    with visitor.open(deployed_room["PageUrl"], timeout=30) as page:
        assert page.headers["Content-Type"] == "text/html; charset=utf-8"
        assert b"Beekeeper end-to-end test" in page.read()

    polling_url = deployed_room["PageUrl"].removesuffix("room") + "polling"
    deadline = time.monotonic() + ADMISSION_DEADLINE_SECONDS
    answer = _get_json(visitor, polling_url)
    while not answer["allow"]:
        assert answer["state"] == "waiting", answer
        assert time.monotonic() < deadline, f"not admitted in time: {answer}"
        time.sleep(10)
        answer = _get_json(visitor, polling_url)
    assert answer["origin"] == f"https://example.com/shop?beekeeper_token={token}"

    stranger = urllib.request.build_opener()
    check = _get_json(stranger, f"{deployed_room['ClientCheckUrl']}?token={token}")
    assert check == {"allow": True}
    forged = Token.parse(token)
    assert forged is not None
    other = "A" * 22 + f".{forged.ordinal}"
    assert _get_json(stranger, f"{deployed_room['ClientCheckUrl']}?token={other}") == {
        "allow": False
    }
