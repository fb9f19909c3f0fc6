"""Everything a command needs from the outside world, made in one place.

Commands take a `CliFactory` from click's context object; tests pass their own (`CliRunner.
invoke(cli, args, obj=factory)`) with moto-backed sessions, a recorded CDK runner, a fixed clock
and a sleep that ends a `--watch` loop.
"""

from __future__ import annotations

import os
import random
import shutil
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import click

from beekeeper.cli.invocation import operator_command
from beekeeper.core.retry import Pauses

# What a command does with the outside world is imported when it is first used, so a command's
# --help loads none of it (bench/cli_startup.py measures every command's --help).
if TYPE_CHECKING:
    from beekeeper.cli.aws import AwsClients, SessionFactory
    from beekeeper.cli.cdk import CdkRunner
    from beekeeper.cli.channel_quota import ChannelQuotaProbe
    from beekeeper.cli.deploy_checks import Resolve
    from beekeeper.cli.deployer import Deployer
    from beekeeper.cli.lambda_quota import AccountConcurrency, ConcurrencyProbe
    from beekeeper.cli.rooms import Deployment, RoomStore
    from beekeeper.core.settings import RoomSettings
    from beekeeper.room.governor_sampling import Fetcher, Sample
    from beekeeper.room.push import Publisher


def _boto3_session() -> Any:
    import boto3  # imported on first use: `beekeeper --help` stays fast

    return boto3.Session()


def _stderr_is_terminal() -> bool:
    return sys.stderr.isatty()


def _resolve_host(host: str) -> list[str]:
    from beekeeper.cli.deploy_checks import resolve_host

    return resolve_host(host)


def _fetch_once(url: str, timeout: float) -> Sample:
    from beekeeper.room.governor_sampling import fetch_once

    return fetch_once(url, timeout)


def _cdk_runner() -> CdkRunner:
    from beekeeper.cli.cdk import SubprocessCdkRunner

    return SubprocessCdkRunner(shutil.which)


def _stdin_is_terminal() -> bool:
    return sys.stdin.isatty()


@dataclass
class CliFactory:
    environ: Mapping[str, str]
    session_factory: SessionFactory
    cdk_runner: CdkRunner
    clock: Callable[[], float] = time.time
    sleep: Callable[[float], None] = time.sleep
    # The jitter of a retry's pause (core/retry.py).
    jitter: Callable[[], float] = random.random
    python: str = sys.executable
    stderr_is_terminal: Callable[[], bool] = _stderr_is_terminal
    # Whether a person can answer a question (deploy offers `beekeeper check`).
    stdin_is_terminal: Callable[[], bool] = _stdin_is_terminal
    resolve: Resolve = _resolve_host
    # The account's Lambda concurrency; None asks Lambda (tests pass their own).
    concurrency: ConcurrencyProbe | None = None
    # The account's AppSync Events quotas; None asks Service Quotas (tests pass their own).
    channel_quotas: ChannelQuotaProbe | None = None
    # How a command publishes to a room's push channel; None signs requests to the room's
    # Event API (cli/channel.py; tests pass their own: no test reaches AWS).
    channel_publisher: Callable[[RoomSettings, Deployment], Publisher] | None = None
    # Fills the cache of the consumer's wheels; None downloads them with pip (tests pass their
    # own: no test reaches PyPI).
    lambda_wheels: Callable[[], object] | None = None
    # How the operator runs this CLI again (cli/invocation.py), for the commands it prints.
    operator_command: Callable[[], str] = field(
        default=lambda: operator_command(sys.argv[0], shutil.which, sys.executable)
    )
    # One GET of a URL with a timeout, as the governor samples the shop (`beekeeper local`
    # asks whether anything answers at the room's origin).
    fetch: Fetcher = _fetch_once
    _session: Any = field(default=None, init=False, repr=False)
    # The account the credentials belong to, once they have been checked (caller_account).
    _account: str | None = field(default=None, init=False, repr=False)
    _store: RoomStore | None = field(default=None, init=False, repr=False)

    @classmethod
    def default(cls) -> CliFactory:
        return cls(
            environ=os.environ,
            session_factory=_boto3_session,
            cdk_runner=_cdk_runner(),
        )

    @property
    def pauses(self) -> Pauses:
        """What a command's retries wait with: its sleep, and its jitter."""
        return Pauses(sleep=self.sleep, random=self.jitter)

    def store(self) -> RoomStore:
        """The command's one store: what it tells the operator, it tells once."""
        from beekeeper.cli.rooms import RoomStore

        if self._store is None:
            self._store = RoomStore(self.environ, say=lambda text: click.echo(text, err=True))
        return self._store

    def session(self) -> Any:
        """One AWS session per command: credentials and service models are loaded once."""
        if self._session is None:
            self._session = self.session_factory()
        return self._session

    def aws(self) -> AwsClients:
        from beekeeper.cli.aws import AwsClients

        return AwsClients(self.session)

    def caller_account(self, settings: RoomSettings) -> str:
        """The account of the operator's credentials, asked once per command: the first
        request to AWS, so a command without valid credentials says so at once."""
        if self._account is None:
            self._account = self.aws().caller_account(settings)
        return self._account

    def client(self, service: str, settings: RoomSettings, deployment: Deployment) -> Any:
        """A client for the room; for a room in AWS, after its credentials were checked (a
        local room's emulator takes any key: cli/aws.py)."""
        if not deployment.is_local:
            self.caller_account(settings)
        return self.aws().client(service, settings, deployment)

    def publisher(self, settings: RoomSettings, deployment: Deployment) -> Publisher:
        """What an operator command publishes the room's state changes with."""
        from beekeeper.cli.channel import publisher_for

        if self.channel_publisher is not None:
            return self.channel_publisher(settings, deployment)
        return publisher_for(settings, deployment, self.session)

    def default_region(self) -> str | None:
        """The region the operator's AWS configuration names, if any (init's suggestion)."""
        for variable in ("AWS_REGION", "AWS_DEFAULT_REGION"):
            if self.environ.get(variable):
                return self.environ[variable]
        region = self.session().region_name
        return str(region) if region else None

    def deployer(self, *, assume_yes: bool = False) -> Deployer:
        from beekeeper.cli.channel_quota import probe
        from beekeeper.cli.deployer import Deployer
        from beekeeper.cli.progress import ProgressReporter

        stderr = sys.stderr
        terminal = self.stderr_is_terminal()

        def progress(label: str) -> ProgressReporter:
            return ProgressReporter(stderr, is_terminal=terminal, clock=self.clock, label=label)

        return Deployer(
            store=self.store(),
            aws=self.aws(),
            account=self.caller_account,
            runner=self.cdk_runner,
            environ=self.environ,
            python=self.python,
            progress=progress,
            say=lambda text: click.echo(text, err=True),
            resolve=self.resolve,
            confirm=(lambda _question: True) if assume_yes else _confirm,
            concurrency=self.concurrency or self.lambda_concurrency,
            channel_quotas=self.channel_quotas
            or probe(lambda settings: self.aws().client("service-quotas", settings)),
            lambda_wheels=self.lambda_wheels or self.fetch_lambda_wheels,
            clock=self.clock,
        )

    def fetch_lambda_wheels(self) -> object:
        from beekeeper.cli.errors import DeployError
        from beekeeper.stacks.lambda_wheels import WHEEL_TARGET, MissingWheels, fetch

        try:
            return fetch(WHEEL_TARGET, self.environ)
        except MissingWheels as error:
            raise DeployError(str(error)) from error

    def lambda_concurrency(self, settings: RoomSettings, *, deployed: bool) -> AccountConcurrency:
        from beekeeper.cli.lambda_quota import read_concurrency

        return read_concurrency(self.aws().client("lambda", settings), settings, deployed=deployed)


def _confirm(question: str) -> bool:
    from beekeeper.cli.answers import yes_or_no

    return yes_or_no(question, default=False, err=True)


def factory_of(ctx: click.Context) -> CliFactory:
    root = ctx.find_root()
    if root.obj is None:
        root.obj = CliFactory.default()
    factory = root.obj
    assert isinstance(factory, CliFactory)
    return factory
