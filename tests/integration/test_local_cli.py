"""`beekeeper local` as a user meets it: clear one-line errors, never a traceback.

These run the console entry point in process (each error comes before the emulator starts);
tests/integration/test_local_mode.py runs the command as a subprocess.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from beekeeper.cli.main import main


@dataclass
class Result:
    returncode: int
    stderr: str


Runner = Callable[[list[str]], Result]


@pytest.fixture()
def run_local(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Runner:
    monkeypatch.setenv("BEEKEEPER_CONFIG_DIR", str(tmp_path))

    def run(args: list[str]) -> Result:
        # `local` points the root logger at this test's stderr (logging.basicConfig, force):
        # put it back, or a later test's threads log into a closed stream.
        root = logging.getLogger()
        handlers, level = root.handlers[:], root.level
        try:
            with pytest.raises(SystemExit) as exit_:
                main(["local", *args])
        finally:
            root.handlers[:] = handlers
            root.setLevel(level)
        return Result(int(exit_.value.code or 0), capsys.readouterr().err)

    return run


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (["--origin", "http://localhost:9/", "--rate", "0"], 2, "rate: 0 is not allowed"),
        (["--origin", "http://localhost:9/", "--rate", "ten"], 2, "rate: 'ten' is not allowed"),
        (["--origin", "http://localhost:9/", "--rate", "1", "--port", "70000"], 2, "--port"),
        (["--origin", "http://localhost:9/", "--rate", "1", "--name", "Bad_Name"], 2, "--name"),
        (
            ["--origin", "http://localhost:9/", "--rate", "1", "--minute-seconds", "0"],
            2,
            "--minute-seconds",
        ),
        *(
            (
                ["--origin", "http://localhost:9/", "--rate", "1", "--minute-seconds", value],
                2,
                "is not a finite number of seconds",
            )
            for value in ("nan", "NaN", "-nan")
        ),
        (["--demo", "--rate", "1", "--port", "9000", "--demo-port", "9000"], 2, "must differ"),
        (
            ["--origin", "http://localhost:9/", "--rate", "1", "--slow-ms", "9000"],
            2,
            "slow_ms: 9000 is not allowed; use a whole number from 1 to 4,000 milliseconds",
        ),
        (["--origin", "http://shop.example/", "--rate", "1", "--port", "0"], 2, "origin:"),
        (["--origin", "not a url", "--rate", "1", "--port", "0"], 2, "origin:"),
    ],
)
def test_a_bad_flag_is_one_clear_line(
    args: list[str], code: int, says: str, tmp_path: Path, run_local: Runner
) -> None:
    result = run_local(args)
    assert result.returncode == code, result.stderr
    assert says in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "rooms").exists() or not any((tmp_path / "rooms").iterdir())


def test_a_busy_port_is_one_clear_line(run_local: Runner) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = run_local(["--origin", "http://localhost:9/", "--rate", "1", "--port", str(port)])
    assert result.returncode == 1
    assert f"port {port} is already in use" in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_room_without_a_room_file_is_one_sentence(tmp_path: Path, run_local: Runner) -> None:
    result = run_local(["spring", "--port", "0"])
    assert result.returncode == 1
    assert "There is no room named 'spring'" in result.stderr
    assert "beekeeper init --name spring" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "rooms").exists()  # nothing written for a room that did not start


def test_the_name_is_given_once(run_local: Runner) -> None:
    result = run_local(["spring", "--name", "autumn", "--port", "0"])
    assert result.returncode == 2
    assert "give the room's name once" in result.stderr
