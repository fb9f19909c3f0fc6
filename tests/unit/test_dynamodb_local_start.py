"""tests/support/dynamodb_local.py starts DynamoDB Local again on another port when the port
it chose was taken before the JVM could listen on it (a worker's room can take it first), and
fails at once on any other exit. A shell script stands in for java: it exits as the JVM does
when the port is taken, a given number of times, then serves nothing and exits otherwise."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tests.support import dynamodb_local
from tests.support.dynamodb_local import PORT_ATTEMPTS, Installation, PortTaken

TAKEN = 'echo "Caused by: java.net.BindException: Address already in use"; exit 1'


def stand_in_java(tmp_path: Path, *, port_taken_times: int, then: str) -> Installation:
    """A `java` that exits as a taken port makes the JVM exit, `port_taken_times` times
    (counted in a file), then runs `then`."""
    count = tmp_path / "starts"
    script = tmp_path / "java"
    script.write_text(
        "#!/bin/sh\n"
        f'echo x >> "{count}"\n'
        f'if [ "$(wc -l < "{count}")" -le {port_taken_times} ]; then {TAKEN}; fi\n'
        f"{then}\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    jar = tmp_path / "DynamoDBLocal.jar"
    jar.touch()
    return Installation(java=str(script), jar=jar)


def starts(tmp_path: Path) -> int:
    return len((tmp_path / "starts").read_text().splitlines())


def test_a_taken_port_is_tried_again_on_another_up_to_the_attempts(tmp_path: Path) -> None:
    installation = stand_in_java(
        tmp_path, port_taken_times=PORT_ATTEMPTS, then='echo "other failure"; exit 1'
    )
    with pytest.raises(PortTaken, match="BindException"):
        dynamodb_local.start(installation, tmp_path)
    assert starts(tmp_path) == PORT_ATTEMPTS


def test_a_start_after_a_taken_port_fails_on_its_own_exit(tmp_path: Path) -> None:
    installation = stand_in_java(tmp_path, port_taken_times=1, then='echo "no jar"; exit 3')
    with pytest.raises(RuntimeError, match="exited with status 3:\nno jar") as failed:
        dynamodb_local.start(installation, tmp_path)
    assert not isinstance(failed.value, PortTaken)
    assert starts(tmp_path) == 2  # the taken port's start, then the one that failed otherwise


def test_any_other_exit_is_not_tried_again(tmp_path: Path) -> None:
    installation = stand_in_java(tmp_path, port_taken_times=0, then='echo "no jar"; exit 3')
    with pytest.raises(RuntimeError, match="exited with status 3"):
        dynamodb_local.start(installation, tmp_path)
    assert starts(tmp_path) == 1
