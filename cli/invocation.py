"""How the operator runs this CLI again, for the commands a running command prints.

After `scripts/local-demo` the CLI is `.venv/bin/beekeeper`, not on PATH: a printed
`beekeeper status local` would not run. The hint names `beekeeper` only when that is the
program PATH finds; otherwise the path this one was started from.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable


def operator_command(argv0: str, which: Callable[[str], str | None], python: str) -> str:
    """`beekeeper`, the absolute path of the `beekeeper` program that is running, or (run as
    `python -m beekeeper.cli.main`) that command."""
    if os.path.basename(argv0) != "beekeeper" or not os.path.isfile(argv0):
        return f"{shlex.quote(python)} -m beekeeper.cli.main"
    on_path = which("beekeeper")
    if on_path is not None and os.path.isfile(on_path) and os.path.samefile(on_path, argv0):
        return "beekeeper"
    return shlex.quote(os.path.abspath(argv0))
