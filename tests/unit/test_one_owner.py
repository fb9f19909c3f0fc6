"""Facts that used to be written in several places have one owner in core/ now: no other
module defines them (under the names the copies had), and what depends on them is derived."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from beekeeper.core import datamodel, headers, loopback, names
from beekeeper.room import producer
from tests.support.packages import SOURCE_PACKAGES

REPO = Path(__file__).resolve().parents[2]
# Every source package, and the benchmarks.
FOLDERS = (*SOURCE_PACKAGES, "bench")

# name -> its owner; None: a former copy's name, which nothing may define again.
OWNED: dict[str, str | None] = {
    "LOOPBACK_HOSTS": "core/loopback.py",
    "FUNCTION_ROLES": "core/names.py",
    "CONFIG_FRESH_SECONDS": "core/datamodel.py",
    "CONFIG_TTL_SECONDS": None,  # the producer's copy
    "CONFIG_REFRESH_SECONDS": None,  # the consumer's copy
    "POLL_JITTER": "core/page_timing.py",
    "FIRST_POLL_AFTER_JOIN_SECONDS": "core/page_timing.py",
    "PAGE_LOAD_SECONDS": "simulator/pages.py",
    "START_JITTER_SECONDS": "core/schedule.py",
    "MARKETING_LINK_HEADERS": "core/headers.py",
    "_BASE_HEADERS": None,  # the producer's copy
}


def definitions(name: str) -> set[str]:
    """The files that assign `name` at module level."""
    pattern = re.compile(rf"^{re.escape(name)}\s*(:[^=\n]+)?=", re.MULTILINE)
    return {
        str(path.relative_to(REPO))
        for folder in FOLDERS
        for path in (REPO / folder).rglob("*.py")
        if pattern.search(path.read_text(encoding="utf-8"))
    }


@pytest.mark.parametrize(("name", "owner"), OWNED.items())
def test_a_fact_is_defined_by_its_owner_alone(name: str, owner: str | None) -> None:
    assert definitions(name) == ({owner} if owner else set())


def test_what_the_cli_says_about_a_live_change_follows_the_config_freshness() -> None:
    # A change reaches a producer within CONFIG_FRESH_SECONDS and a consumer (after its long
    # poll) within twice that: what the operator is told.
    assert datamodel.CONFIG_IN_EFFECT_SECONDS == 2 * datamodel.CONFIG_FRESH_SECONDS
    told = [
        (str(path.relative_to(REPO)), int(seconds))
        for path in [*(REPO / "cli").rglob("*.py"), REPO / "docs" / "cli.md"]
        for seconds in re.findall(
            r"within (?:about )?(\d+) (?:s|seconds)\b",
            " ".join(path.read_text(encoding="utf-8").split()),
        )
    ]
    assert len(told) >= 5
    assert {seconds for _, seconds in told} == {datamodel.CONFIG_IN_EFFECT_SECONDS}, told


def test_the_producers_answers_carry_the_marketing_link_headers() -> None:
    assert producer.redirect("https://shop.example/")["headers"] == {
        **headers.MARKETING_LINK_HEADERS,
        "Location": "https://shop.example/",
    }
    page = producer.page(503, "Busy", "Try again")
    assert page["headers"] == {
        **headers.MARKETING_LINK_HEADERS,
        "Content-Type": "text/html; charset=utf-8",
    }
    assert headers.MARKETING_LINK_HEADERS["X-Content-Type-Options"] == "nosniff"


def test_the_loopback_host_headers_are_the_loopback_hosts_with_a_port() -> None:
    assert loopback.loopback_host_headers(8082) == {
        "localhost:8082",
        "127.0.0.1:8082",
        "[::1]:8082",
    }
    assert all(loopback.is_loopback_host(host) for host in loopback.LOOPBACK_HOSTS)
    assert loopback.is_loopback_host("127.0.0.2") and not loopback.is_loopback_host("10.0.0.1")


def test_every_function_role_has_its_permissions_and_its_function() -> None:
    from beekeeper.stacks import functions, permissions

    roles = set(names.FUNCTION_ROLES)
    assert set(permissions.TABLE_ACTIONS) == roles
    assert set(permissions.QUEUE_ACTIONS) == roles
    assert set(functions.SPECS) == roles
