"""`beekeeper init`: the original's six questions, each also a flag, then a room file.

Precedence: a flag's value, else (with --force over an existing room) the room file's, else a
default. Settings that are not asked keep the room file's value or the model's default.
Interactive answers are checked with the model's sentence and asked again until they pass.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Any

import click

from beekeeper.cli.answers import yes_or_no
from beekeeper.cli.errors import UserError
from beekeeper.cli.options import check_setting
from beekeeper.cli.rooms import RoomStore
from beekeeper.core.settings import SETTINGS, RoomSettings, SettingsError


@dataclass(frozen=True)
class Question:
    field_name: str
    prompt: str
    what: str  # for "--yes needs ..." messages
    example: str = ""  # shown with the question, and again after an empty answer

    @property
    def flag(self) -> str:
        return SETTINGS[self.field_name].flags[0]

    @property
    def asked(self) -> str:
        return f"{self.prompt} (e.g. {self.example})" if self.example else self.prompt

    def check(self, text: str) -> Any:
        """The answer as the model stores it; an empty one gets its own sentence (click
        would ask again without a word)."""
        if not text.strip():
            example = f", e.g. {self.example}" if self.example else ""
            raise UserError(f"This question needs an answer{example}.")
        return check_setting(self.field_name, text)


QUESTIONS = (
    Question("name", "Room name (lower case, used in AWS resource names)", "the room's name"),
    Question("display_name", "Display name visitors see", "the display name"),
    Question("region", "AWS region", "the AWS region, or set AWS_REGION", example="eu-west-1"),
    Question("origin", "URL to protect (where admitted visitors go)", "the URL to protect"),
    Question("rate", "Visitors let through per minute", "visitors per minute"),
    Question(
        "dynamic_rate_throttling",
        "Slow the rate down automatically when the site slows (dynamic rate throttling)?",
        "whether to throttle dynamically",
    ),
)

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

    def create(self, given: Mapping[str, Any], *, interactive: bool, force: bool) -> Path:
        """Build the room from flags and answers, save it, and return the room file."""
        name = given.get("name")
        if name is None:
            if not interactive:
                raise click.UsageError("--yes needs --name (the room's name).")
            name = self.ask(QUESTIONS[0].asked, None, lambda text: self._new_name(text, force))
        elif self.store.exists(name) and not force:
            raise UserError(self._exists_message(name))
        existing = self._existing(name) if force else None
        answers: dict[str, Any] = {"name": name}
        if not interactive:
            self._require_flags(given, name, existing)
        for question in QUESTIONS[1:]:
            field_name = question.field_name
            if field_name in given:
                answers[field_name] = given[field_name]
                continue
            default = self._default(field_name, name, existing)
            if not interactive:
                answers[field_name] = default
            elif field_name == "dynamic_rate_throttling":
                answers[field_name] = self.confirm(question.asked, bool(default))
            else:
                answers[field_name] = self.ask(question.asked, default, question.check)
        # Settings given as flags that are not questions (--slow-ms, --alert-email) are taken
        # as they are.
        answers.update({k: v for k, v in given.items() if k not in answers})
        settings = existing.replace(**answers) if existing else RoomSettings.from_mapping(answers)
        return self.store.save(settings)

    def _require_flags(
        self, given: Mapping[str, Any], name: str, existing: RoomSettings | None
    ) -> None:
        missing = [
            q
            for q in QUESTIONS[1:]
            if q.field_name not in given and self._default(q.field_name, name, existing) is None
        ]
        if missing:
            needs = ", ".join(f"{q.flag} ({q.what})" for q in missing)
            raise click.UsageError(f"--yes needs {needs}; give them as flags or drop --yes.")

    def _new_name(self, text: str, force: bool) -> str:
        name = str(QUESTIONS[0].check(text))
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
        if field_name == "dynamic_rate_throttling":
            return False
        return None  # origin and rate have no sensible default: they must be given
