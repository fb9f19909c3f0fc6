"""What a local room (`beekeeper local`) and the operator CLI agree on without importing each
other: the emulator's region, account and the placeholder credentials requests to it are
signed with, what its API names where a deployed room's has AWS resources, and the rate of a
room described by flags alone.

The emulator accepts any credentials, boto3 needs some to sign with, and a local room must
never pick up (or send anywhere) the operator's real ones. Standard library only.
"""

from __future__ import annotations

import os

LOCAL_REGION = "us-east-1"
LOCAL_PARTITION = "aws"
LOCAL_ACCOUNT = "000000000000"
# What a local room's API names where the deployed one has an IAM role and a Lambda function
# (stacks/rest_api.py's references; local mode's gateway calls the producer's handler).
LOCAL_INTEGRATION_ROLE = f"arn:aws:iam::{LOCAL_ACCOUNT}:role/beekeeper-local-api"
LOCAL_PRODUCER = f"arn:aws:lambda:{LOCAL_REGION}:{LOCAL_ACCOUNT}:function:beekeeper-local-producer"
# A local room described by flags alone, without --rate, admits the demo's 10 visitors a
# minute: slow enough to watch a line form and move from one browser, fast enough that the
# first visitors go in within seconds.
FLAGS_ONLY_RATE = 10
# The name of a local room described by flags alone (`beekeeper local`, the demo), which the
# operator commands take: `beekeeper status local`.
FLAGS_ONLY_NAME = "local"
# Where a local room listens on 127.0.0.1 unless told otherwise: its routes, the demo shop and
# the operator's live view.
DEFAULT_PORT = 8080
DEFAULT_DEMO_PORT = 8081
DEFAULT_OPERATOR_PORT = 8082
# A local room described by flags alone: what the flags leave out (then each setting's
# default). Its origin is the demo shop's ("localhost", not 127.0.0.1: a site of its own, as a
# shop is in production), the address its port is bound to once it runs.
FLAGS_ONLY_ROOM = {
    "name": FLAGS_ONLY_NAME,
    "display_name": "Local rehearsal",
    "region": LOCAL_REGION,
    "origin": f"http://localhost:{DEFAULT_DEMO_PORT}/",
    "rate": FLAGS_ONLY_RATE,
}
PLACEHOLDER_CREDENTIALS = {
    "aws_access_key_id": "beekeeper-local",
    "aws_secret_access_key": "beekeeper-local",
}

# The keys of a running local room's record (rooms/<name>.local.json).
LOCAL_PID_KEY = "pid"
LOCAL_SETTINGS_KEY = "settings"
LOCAL_OUTPUTS_KEY = "outputs"


def process_alive(pid: object) -> bool:
    """Whether `pid` names a running process (a local room's record outlives a killed room)."""

    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """An ended process its parent has not reaped yet (Linux; elsewhere never so judged)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rsplit(")", 1)[-1].split()[0] == "Z"
    except (OSError, IndexError):
        return False
