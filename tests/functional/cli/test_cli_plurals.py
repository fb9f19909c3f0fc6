"""Every sentence the CLI prints about one of something says it in the singular.

A capacity-mode room in moto holds exactly one of everything the commands count (an arrival
in the last minute, an admission, a visitor waiting, a message, a dead letter, a visitor
inside, one let in a minute and one who left the line, a pre-queue visitor drawn, an item of
several kinds a reset deletes). Every operator command that reports a count runs on it, and
the outputs are swept for "1" followed by a plural noun.
"""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from beekeeper.cli.main import cli
from tests.support.cli_testkit import (
    NOW,
    DeployedRoom,
    Invoke,
    aws_client,
    create_room_resources,
    put_item,
    room_settings,
    write_deployment,
    write_room,
)

MINUTE = int(NOW) // 60

# "1" (not part of a larger number) and the next word, or the next two when the first is one of
# the adjectives the CLI puts before a noun ("1 pre-queue visitor", "1 second admission").
ONE_AND_NOUN = re.compile(r"(?<![\d.,])1 ((?:pre-queue|second|status|new) )?([a-z]+)\b")
# Words after a "1" that end in s but are not plural nouns.
NOT_PLURAL = {"is", "was", "has", "this", "its", "s", "ms", "as", "us"}


def singular_lapses(text: str) -> list[str]:
    """The "1 <plural>" phrases in `text`."""
    return [
        match.group(0)
        for match in ONE_AND_NOUN.finditer(text)
        if match.group(2).endswith("s") and match.group(2) not in NOT_PLURAL
    ]


def test_the_sweep_finds_what_it_looks_for() -> None:
    assert singular_lapses("Queue: 1 messages; 11 arrivals; 1 visitor; 1.1 seconds") == [
        "1 messages"
    ]
    assert singular_lapses("lets 1 visitors/min, 1 pre-queue visitors drawn") == [
        "1 visitors",
        "1 pre-queue visitors",
    ]
    assert singular_lapses("1 status copies, 1 status copy, 2 status copies, 1 is") == [
        "1 status copies"
    ]


def one_of_everything(config_dir: Path) -> DeployedRoom:
    settings = room_settings("one", max_inside=1, session_minutes=15)
    write_room(config_dir, settings)
    outputs = create_room_resources(settings.region, settings.name)
    write_deployment(config_dir, settings.name, outputs)
    table = outputs["TableName"]
    put_item(table, {"pk": "config", "enabled": False, "operator_rate": 1, "rate": 1,
                     "version": 1, "updated_at": int(NOW) - 30, "max_inside": 1,
                     "starts_at": int(NOW) - 120})  # fmt: skip
    put_item(table, {"pk": "arrivals#0", "n": 3})
    put_item(table, {"pk": "admitted", "n": 1, "skipped": 1})
    put_item(table, {"pk": "inside", "n": 1, "turnover": 1})
    put_item(table, {"pk": "draw", "state": "drawn", "size": 1, "secret": "s" * 64})
    put_item(table, {"pk": f"minute#{MINUTE - 1}", "admitted": 1, "arrivals_total": 2})
    put_item(table, {"pk": f"minute#{MINUTE}", "admitted": 0, "arrivals_total": 3})
    put_item(table, {"pk": "v#" + "A" * 22, "ordinal": 1, "admitted_at": int(NOW) - 60})
    put_item(table, {"pk": "status#0", "arrivals_total": 3, "admitted_total": 1})
    put_item(table, {"pk": "governor", "state": "passing"})
    put_item(table, {"pk": "p#" + "C" * 22, "ordinal": 2, "joined_at": int(NOW) - 200})
    sqs = aws_client("sqs")
    sqs.send_message(QueueUrl=outputs["QueueUrl"], MessageBody="B" * 22 + ".2")
    sqs.send_message(QueueUrl=outputs["DeadLetterQueueUrl"], MessageBody="stuck")
    return DeployedRoom(settings, outputs)


def test_no_command_says_one_of_something_in_the_plural(
    invoke: Invoke, config_dir: Path, aws: None
) -> None:
    one_of_everything(config_dir)
    outputs = []
    for args in (
        ["status", "one"],
        ["rate", "one", "1"],
        ["capacity", "one", "1"],
        ["resume", "one"],
        ["reset", "one", "--yes"],
    ):
        result = invoke(*args)
        assert result.exit_code == 0, (args, result.output)
        outputs.append(result.output)
    simulated = CliRunner().invoke(
        cli, ["simulate", "--rate", "1", "--visitors", "1", "--minutes", "1",
              "--starts-at-minute", "0"],
    )  # fmt: skip
    assert simulated.exit_code == 0, simulated.output
    outputs.append(simulated.output)
    said = "\n".join(outputs)
    # The figures are there to be said (one of each), and none in the plural.
    for phrase in ("Queue: 1 message (", "1 arrival,", "1 visitor drawn", "1 visitor/min",
                   "lets 1 visitor per minute", "at most 1 visitor inside", "1 visitor a minute",
                   "at 1 visitor per minute", "1 message in the queue", "1 draw item",
                   "1 message in the dead-letter queue is", "the 1 inside the shop is",
                   "1 pre-queue place", "1 visitor)", "1 waiting loses",
                   "1 visitor left the line"):  # fmt: skip
        assert phrase in said, phrase
    assert singular_lapses(said) == []
