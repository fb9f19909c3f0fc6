"""cdk-nag's AwsSolutions pack and cfn-lint over the synthesized room."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from beekeeper.stacks import nag
from tests.support.stack_testkit import Synthesized

# Every stack test reads the synth of the whole room (tests/stack/conftest.py): slow.
pytestmark = pytest.mark.slow


def test_no_unacknowledged_cdk_nag_finding(synthesized: Synthesized) -> None:
    assert synthesized.nag_messages == []
    assert synthesized.edge_waf_raw is not None
    assert synthesized.edge_waf_nag_messages == ()
    statuses = {row["Compliance"] for row in synthesized.nag_report}
    assert statuses <= {"Compliant", "Suppressed"}, [
        (row["Rule ID"], row["Resource ID"])
        for row in synthesized.nag_report
        if row["Compliance"] not in ("Compliant", "Suppressed")
    ]
    # The pack really ran over the room's resources.
    checked = {row["Rule ID"] for row in synthesized.nag_report}
    assert {
        "AwsSolutions-IAM4",
        "AwsSolutions-IAM5",
        "AwsSolutions-L1",
        "AwsSolutions-SQS4",
        "AwsSolutions-SNS3",
    } <= checked


def test_only_the_documented_acknowledgements_are_used(synthesized: Synthesized) -> None:
    suppressed = {
        (row["Rule ID"], row["Exception Reason"])
        for row in synthesized.nag_report
        if row["Compliance"] == "Suppressed"
    }
    # WAF, logging and a domain are on in this room: only the public-route findings, the
    # edge's and the two secrets' own rotation are acknowledged.
    expected = (
        *nag.PUBLIC_ROUTES,
        *nag.EDGE,
        nag.TICKET_KEYS_ROTATION,
        nag.JOIN_SECRET_ROTATION,
    )
    assert suppressed == {(a.rule, a.reason) for a in expected}
    for acknowledgement in (
        *expected,
        nag.WAF_OFF,
        nag.DEFAULT_CERTIFICATE,
        *nag.LOGGING_OFF,
    ):
        assert len(acknowledgement.reason) >= 60
        assert acknowledgement.reason.isascii()


def test_cfn_lint_is_clean_apart_from_w3005(synthesized: Synthesized, tmp_path: Path) -> None:
    from cfnlint.api import ManualArgs, lint_file

    template = tmp_path / "room.template.json"
    template.write_text(json.dumps(synthesized.raw), encoding="utf-8")
    matches = lint_file(template, config=ManualArgs(ignore_checks=["W3005"]))
    assert [f"{m.rule.id} {m.message}" for m in matches] == []
