"""Every command that takes a room setting takes it through the flag made from the setting's
description (cli/options.py from core/settings.py): the same names, and the same sentence for
the same mistake, wherever it is made."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from beekeeper.cli.main import cli
from beekeeper.cli.options import SettingType
from beekeeper.core.settings import SETTINGS, RoomSettings, SettingsError
from tests.support.cli_testkit import Invoke

# `schedule --starts-at` is a live change checked against the clock (ahead, at most a year,
# "" refused): it takes the time with the schedule's own sentences (core/schedule.py).
OWN_CHECK = {("schedule", "starts_at")}


def setting_parameters() -> list[tuple[str, click.Parameter]]:
    context = click.Context(cli)
    found = []
    for command_name in cli.list_commands(context):
        command = cli.get_command(context, command_name)
        assert command is not None
        found += [(command_name, p) for p in command.params if p.name in SETTINGS]
    return found


def test_every_setting_a_command_takes_is_the_settings_own_flag() -> None:
    found = setting_parameters()
    assert {name for name, _ in found} >= {"init", "local", "simulate", "rate", "capacity"}
    for command_name, parameter in found:
        if (command_name, parameter.name) in OWN_CHECK:
            continue
        assert parameter.name is not None
        description = SETTINGS[parameter.name]
        where = f"{command_name} {parameter.name}"
        if isinstance(parameter, click.Argument):
            assert isinstance(parameter.type, SettingType), where
            assert parameter.type.field_name == parameter.name, where
            continue
        assert isinstance(parameter, click.Option)
        assert parameter.opts == list(description.flags), where
        if description.kind is bool:
            assert parameter.secondary_opts == [
                f"--no-{flag.removeprefix('--')}" for flag in description.flags
            ], where
        else:
            assert isinstance(parameter.type, SettingType), where
            assert parameter.type.field_name == parameter.name, where
        assert parameter.help is not None and parameter.help.startswith(description.help), where


def sentence(field_name: str, value: str) -> str:
    """What the settings model says about `value` (typed on a command line) for the setting."""
    with pytest.raises(SettingsError) as refused:
        SETTINGS[field_name].parse(value)
    return str(refused.value)


SIMULATE = ("simulate", "--visitors", "10")
# (setting, bad value) -> every command line that gives it; the value goes last.
MISTAKES = {
    ("rate", "0"): [
        ("init", "--yes", "--name", "sale", "--rate"),
        ("local", "--rate"),
        (*SIMULATE, "--rate"),
        ("rate", "sale"),
    ],
    ("rate", "-5"): [
        ("init", "--rate"),
        ("local", "--rate"),
        (*SIMULATE, "--rate"),
        ("rate", "sale"),
    ],
    ("rate", "fast"): [("init", "--rate"), (*SIMULATE, "--rate"), ("rate", "sale")],
    ("max_inside", "-1"): [
        ("init", "--max-inside"),
        ("local", "--max-inside"),
        (*SIMULATE, "--rate", "10", "--max-inside"),
        ("capacity", "sale"),
    ],
    ("session_minutes", "0"): [
        ("init", "--session-minutes"),
        ("local", "--session-minutes"),
        (*SIMULATE, "--rate", "10", "--max-inside", "5", "--session-minutes"),
    ],
    ("claim_minutes", "61"): [
        ("init", "--claim-minutes"),
        ("local", "--claim-minutes"),
        (*SIMULATE, "--rate", "10", "--max-inside", "5", "--claim-minutes"),
    ],
    ("slow_ms", "9000"): [("init", "--slow-ms"), ("local", "--slow-ms")],
    ("origin", "http://shop.example"): [("init", "--origin"), ("local", "--origin")],
}


@pytest.mark.parametrize(
    ("field_name", "value", "words"),
    [(field, value, words) for (field, value), lines in MISTAKES.items() for words in lines],
)
def test_the_same_mistake_gets_the_same_sentence_from_every_command(
    invoke: Invoke, field_name: str, value: str, words: tuple[str, ...]
) -> None:
    result = invoke(*words, value)
    assert result.exit_code == 2, result.output
    assert sentence(field_name, value) in " ".join(result.output.split())
    assert "No such option" not in result.output


@pytest.mark.parametrize("flag", ["--drt", "--dynamic-rate-throttling"])
@pytest.mark.parametrize("command_name", ["init", "local"])
def test_both_names_of_dynamic_rate_throttling_work(flag: str, command_name: str) -> None:
    command = cli.get_command(click.Context(cli), command_name)
    assert command is not None
    on = command.make_context(command_name, [flag])
    off = command.make_context(command_name, [flag.replace("--", "--no-", 1)])
    assert on.params["dynamic_rate_throttling"] is True
    assert off.params["dynamic_rate_throttling"] is False
    # Left out it is not given: init asks, local keeps the room file's.
    assert command.make_context(command_name, []).params["dynamic_rate_throttling"] is None


def test_init_writes_the_setting_either_flag_name_gives(invoke: Invoke, config_dir: Path) -> None:
    common = ("init", "--yes", "--region", "eu-west-1", "--origin", "https://shop.example")
    for name, flag in (("one", "--drt"), ("two", "--dynamic-rate-throttling")):
        result = invoke(*common, "--name", name, "--rate", "5", flag)
        assert result.exit_code == 0, result.output
        saved = RoomSettings.from_toml((config_dir / "rooms" / f"{name}.toml").read_text())
        assert saved.dynamic_rate_throttling is True
