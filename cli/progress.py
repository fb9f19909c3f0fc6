"""Progress of a long CDK run on stderr.

Every line the CDK CLI prints (resource events with `--progress events`) is passed through.
On a terminal the events are coloured by status and one status line at the bottom shows a
spinner, the resources done so far and the elapsed time; anywhere else (a CI log, a pipe) the
lines pass through unchanged, with no control characters.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TextIO

import click

_PROGRESS = re.compile(r"\|\s*(\d+)/(\d+)\s*\|")
_SPINNER = "|/-\\"
_BAR_WIDTH = 20


def _colour(line: str) -> str:
    if "FAILED" in line or "ROLLBACK" in line:
        return click.style(line, fg="red")
    if "_COMPLETE" in line:
        return click.style(line, fg="green")
    if "_IN_PROGRESS" in line:
        return click.style(line, fg="yellow")
    return line


class ProgressReporter:
    def __init__(
        self, stream: TextIO, *, is_terminal: bool, clock: Callable[[], float], label: str
    ) -> None:
        self._stream = stream
        self._terminal = is_terminal
        self._clock = clock
        self._label = label
        self._started = clock()
        self._ticks = 0
        self._done: tuple[int, int] | None = None

    def line(self, text: str) -> None:
        match = _PROGRESS.search(text)
        if match:
            self._done = (int(match.group(1)), int(match.group(2)))
        if not self._terminal:
            self._stream.write(text + "\n")
            self._stream.flush()
            return
        self._ticks += 1
        self._stream.write("\r\x1b[K" + _colour(text) + "\n" + self.status_line())
        self._stream.flush()

    def status_line(self) -> str:
        elapsed = int(self._clock() - self._started)
        spinner = _SPINNER[self._ticks % len(_SPINNER)]
        text = f"{spinner} {self._label} {elapsed // 60}m{elapsed % 60:02d}s"
        if self._done and self._done[1]:
            done, total = self._done
            filled = min(_BAR_WIDTH, _BAR_WIDTH * done // total)
            text += f" [{'#' * filled}{'.' * (_BAR_WIDTH - filled)}] {done}/{total}"
        return text

    def finish(self) -> None:
        if self._terminal:
            self._stream.write("\r\x1b[K")
            self._stream.flush()
