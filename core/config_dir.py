"""Where the operator's room files live, shared by the CLI and the CDK app (`-c room=NAME`).

Precedence: $BEEKEEPER_CONFIG_DIR, else $XDG_CONFIG_HOME/beekeeper, else ~/.config/beekeeper.
Room settings are `rooms/<name>.toml` (human-editable); what a deploy produced is recorded
beside them as `rooms/<name>.deployed.json`; a running local room as `rooms/<name>.local.json`,
its saved line under `local/`. Both are written with `write_atomically`, by the
CLI and by a local room alike.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def config_dir(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    if env.get("BEEKEEPER_CONFIG_DIR"):
        return Path(env["BEEKEEPER_CONFIG_DIR"]).expanduser()
    if env.get("XDG_CONFIG_HOME"):
        return Path(env["XDG_CONFIG_HOME"]).expanduser() / "beekeeper"
    return Path.home() / ".config" / "beekeeper"


def room_file(name: str, environ: Mapping[str, str] | None = None) -> Path:
    return config_dir(environ) / "rooms" / f"{name}.toml"


def deployment_file(name: str, environ: Mapping[str, str] | None = None) -> Path:
    return config_dir(environ) / "rooms" / f"{name}.deployed.json"


def local_record_file(name: str, environ: Mapping[str, str] | None = None) -> Path:
    """A running local room's record (`beekeeper local`): its settings, URLs and endpoint."""
    return config_dir(environ) / "rooms" / f"{name}.local.json"


def local_state_file(name: str, environ: Mapping[str, str] | None = None) -> Path:
    """A local room's saved line: its table and queues, kept across restarts."""
    return config_dir(environ) / "local" / f"{name}.state.jsonl"


def write_atomically(path: Path, text: str, *, private: bool = False) -> None:
    """Write via a temporary file and rename, so a crash never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    if private:  # readable by this user alone: it holds a secret
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
    else:
        temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)
