"""CDK entry point for `cdk synth` / `cdk deploy` in the repository (cdk.json runs it).

It only hands over to beekeeper.stacks.app, which the installed `beekeeper deploy` runs as
`python -m beekeeper.stacks.app`. cdk.json says `python3 app.py`, and in a fresh clone the
`python3` on PATH is rarely the one with the project installed: when the repository's .venv
exists (bash .ci/run creates it) and is not the running interpreter, this script re-runs
itself with .venv/bin/python, so `npx cdk synth` works without activating anything.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

VENV_PYTHON = Path(__file__).resolve().parent / ".venv" / "bin" / "python"


def _use_project_venv() -> None:
    if not VENV_PYTHON.exists():
        return
    if Path(sys.prefix).resolve() == VENV_PYTHON.parent.parent.resolve():
        return
    # The fixed path of the project's own interpreter, with this very script.
    os.execv(str(VENV_PYTHON), [str(VENV_PYTHON), __file__, *sys.argv[1:]])  # noqa: S606


if __name__ == "__main__":
    _use_project_venv()
    try:
        from beekeeper.stacks.app import main
    except ModuleNotFoundError as error:
        sys.exit(
            f"Error: {error.name} is not installed for {sys.executable}. Run `bash .ci/run` "
            "(creates .venv) or `pip install -e .` in the environment cdk uses."
        )
    main()
