"""What a local room (`beekeeper local`) and the operator CLI agree on without importing each
other: the emulator's region and the placeholder credentials requests to it are signed with.

The emulator accepts any credentials, boto3 needs some to sign with, and a local room must
never pick up (or send anywhere) the operator's real ones. Standard library only.
"""

from __future__ import annotations

LOCAL_REGION = "us-east-1"
PLACEHOLDER_CREDENTIALS = {
    "aws_access_key_id": "beekeeper-local",
    "aws_secret_access_key": "beekeeper-local",
}
