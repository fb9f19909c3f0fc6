"""`beekeeper init`: a question for every setting a room needs, each also a flag, then a room
file.

The questions are the settings' own descriptions (core/settings.py): every required setting,
and those declared `asked`, in the room file's order, each asked with its help sentence.
Precedence: a flag's value, else (with --force over an existing room) the room file's, else a
default. Settings that are not asked keep the room file's value or the model's default.
Interactive answers are checked with the model's sentence and asked again until they pass.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass
from functools import partial
from pathlib import Path
from typing import Any

import click

from beekeeper.cli.answers import yes_or_no
from beekeeper.cli.errors import UserError
from beekeeper.cli.options import check_setting, given_settings, settings_from_flags
from beekeeper.cli.rooms import RoomStore
from beekeeper.core.settings import SETTINGS, RoomSettings, SettingDescription, SettingsError

# What init asks, in the room file's order: the name first.
QUESTIONS: tuple[SettingDescription, ...] = tuple(
    d for d in SETTINGS.values() if d.required or d.asked
)
# Where a default comes from when it is not the setting's own (said when --yes lacks it).
_DEFAULT_FROM = {"region": "or set AWS_REGION"}


def _answer(question: SettingDescription, text: str) -> Any:
    """The answer as the model stores it; an empty one gets its own sentence, with the
    question's help and its example (click would ask again without a word)."""
    if not text.strip():
        raise UserError(f"This question needs an answer ({question.help.removesuffix('.')}).")
    return check_setting(question.name, text)


def _flag(question: SettingDescription) -> str:
    """The flag that answers `question`, as --yes asks for it: `--rate N`."""
    hint = f" ({_DEFAULT_FROM[question.name]})" if question.name in _DEFAULT_FROM else ""
    return f"{question.flags[0]} {question.rule.metavar}{hint}"


# Ask(prompt, default, check) -> answer; Confirm(prompt, default) -> bool.
Ask = Callable[[str, Any, Callable[[str], Any]], Any]
Confirm = Callable[[str, bool], bool]


def click_ask(prompt: str, default: Any, check: Callable[[str], Any]) -> Any:
    def value_proc(text: str) -> Any:
        try:
            return check(text)
        except (SettingsError, UserError) as error:
            # click shows a UsageError's message and asks again.
            text = error.message if isinstance(error, UserError) else str(error)
            raise click.UsageError(text) from error

    if default is None:  # an empty answer reaches `check`, which says what is missing
        return click.prompt(prompt, default="", show_default=False, value_proc=value_proc)
    return click.prompt(prompt, default=default, value_proc=value_proc)


def click_confirm(prompt: str, default: bool) -> bool:
    return yes_or_no(prompt, default=default)


def display_name_from(name: str) -> str:
    return name.replace("-", " ").capitalize()


@dataclass(frozen=True)
class RoomWizard:
    """Asks the questions a room file needs (or takes them from flags) and saves the room."""

    store: RoomStore
    _: KW_ONLY
    default_region: str | None
    ask: Ask = click_ask
    confirm: Confirm = click_confirm

    def create(self, flags: Mapping[str, Any], *, interactive: bool, force: bool) -> Path:
        """Build the room from the flags click received and the answers, save it, and return
        the room file."""
        given = given_settings(flags)
        name = given.get("name")
        if name is None:
            if not interactive:
                raise click.UsageError(f"--yes needs {_flag(QUESTIONS[0])}.")
            name = self.ask(QUESTIONS[0].question, None, lambda text: self._new_name(text, force))
        elif self.store.exists(name) and not force:
            raise UserError(self._exists_message(name))
        existing = self._existing(name) if force else None
        answers: dict[str, Any] = {"name": name}
        if not interactive:
            self._require_flags(given, name, existing)
        for question in QUESTIONS[1:]:
            if question.name in given:
                continue
            default = self._default(question.name, name, existing)
            if not interactive:
                answers[question.name] = default
            elif question.kind is bool:
                answers[question.name] = self.confirm(question.question, bool(default))
            else:
                answers[question.name] = self.ask(
                    question.question, default, partial(_answer, question)
                )
        # The flags given, the questions' and the others (--slow-ms, --alert-email), go over
        # the answers.
        return self.store.save(settings_from_flags(existing or {}, {**answers, **given}))

    def _require_flags(
        self, given: Mapping[str, Any], name: str, existing: RoomSettings | None
    ) -> None:
        missing = [
            q
            for q in QUESTIONS[1:]
            if q.name not in given and self._default(q.name, name, existing) is None
        ]
        if missing:
            needs = ", ".join(_flag(q) for q in missing)
            raise click.UsageError(f"--yes needs {needs}; give them as flags or drop --yes.")

    def _new_name(self, text: str, force: bool) -> str:
        name = str(_answer(QUESTIONS[0], text))
        if self.store.exists(name) and not force:
            raise UserError(self._exists_message(name))
        return name

    def _exists_message(self, name: str) -> str:
        return (
            f"A room named {name!r} already exists ({self.store.room_path(name)}); "
            "choose another name, or pass --force to overwrite it."
        )

    def _existing(self, name: str) -> RoomSettings | None:
        if not self.store.exists(name):
            return None
        try:
            return self.store.load(name)
        except UserError:
            return None  # --force over a broken file: start from the defaults

    def _default(self, field_name: str, name: str, existing: RoomSettings | None) -> Any:
        if existing is not None:
            return getattr(existing, field_name)
        if field_name == "display_name":
            return display_name_from(name)
        if field_name == "region":
            return self.default_region
        default = SETTINGS[field_name].default
        # origin and rate have no sensible default: they must be given
        return None if SETTINGS[field_name].required else default
