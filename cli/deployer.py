"""Deploy and destroy a room's stack with the AWS CDK CLI.

The CDK app is this package's own `beekeeper.stacks.app`, run by the same Python interpreter as
the CLI and told which room to build with `-c room=NAME`; it reads the same room file. The CDK
CLI works in a cache folder under the config directory (cdk.out is written there, never into
site-packages).

Both check the operator's credentials before anything else is asked of AWS, synthesized or
downloaded (one STS call: cli/aws.py `caller_account`), so a missing or expired credential is
said within seconds.

Run again after a failure: a stack whose first create rolled back (ROLLBACK_COMPLETE) can not be
updated, so it is deleted first; a stack still busy is reported, not touched.
"""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import botocore.exceptions

from beekeeper.cli.aws import AwsClients, explain_aws_failure
from beekeeper.cli.cdk import CdkRunner, LineSink
from beekeeper.cli.certificates import certificate_for
from beekeeper.cli.change_review import question, replacements
from beekeeper.cli.channel_quota import ChannelQuotaProbe, channel_advice
from beekeeper.cli.deploy_checks import Resolve, check_deployable
from beekeeper.cli.errors import DeployError, UserError
from beekeeper.cli.lambda_quota import ConcurrencyProbe, check_room_fits
from beekeeper.cli.rooms import Deployment, RoomStore
from beekeeper.cli.ticket_keys import issuer, key_store
from beekeeper.core.edge import WAF_REGION
from beekeeper.core.push import key_expiry
from beekeeper.core.settings import CERTIFICATE_REGION, RoomSettings
from beekeeper.room.ticket_keys import KeysChangedError
from beekeeper.room.tickets import KeyRingError
from beekeeper.stacks.app import CERTIFICATE_CONTEXT, CHANNEL_KEY_EXPIRES_CONTEXT

APP_MODULE = "beekeeper.stacks.app"
# A well-formed certificate ARN for `cdk destroy` of a room whose certificate deploy found: the
# app describes the room with it, and destroying creates nothing.
_ANY_CERTIFICATE = (
    f"arn:aws:acm:{CERTIFICATE_REGION}:000000000000:certificate/"
    "00000000-0000-0000-0000-000000000000"
)
BOOTSTRAP_VERSION_PARAMETER = "/cdk-bootstrap/hnb659fds/version"
# Stacks in these states can not be updated; deleting them is what "run it again" needs.
_DELETE_BEFORE_DEPLOY = frozenset(
    {"ROLLBACK_COMPLETE", "ROLLBACK_FAILED", "CREATE_FAILED", "DELETE_FAILED"}
)

ProgressFactory = Callable[[str], Any]
# What can keep a deployed room from getting its first ticket key (each says why).
_KEY_FAILURES = (
    KeyRingError,
    KeysChangedError,
    botocore.exceptions.BotoCoreError,
    botocore.exceptions.ClientError,
)  # label -> object with line(text) and finish()


def cdk_environment(
    base: Mapping[str, str], settings: RoomSettings, config: Path
) -> dict[str, str]:
    """The CDK CLI's environment: the caller's, without telemetry, pinned to the room's region.

    The runner adds the Node.js it runs on (cli/node.py), and says once which one the CDK
    wants when the machine's is not one of them."""
    env = dict(base)
    env.update(
        {
            "CDK_DISABLE_CLI_TELEMETRY": "true",
            "AWS_REGION": settings.region,
            "AWS_DEFAULT_REGION": settings.region,
            # The app finds the room file exactly where this CLI found it.
            "BEEKEEPER_CONFIG_DIR": str(config),
        }
    )
    return env


@dataclass(frozen=True, kw_only=True)
class Deployer:
    """Deploys and destroys a room's stack with the CDK CLI, with the checks that come first."""

    store: RoomStore
    aws: AwsClients
    # The account of the operator's credentials, asked once per command (CliFactory).
    account: Callable[[RoomSettings], str]
    runner: CdkRunner
    environ: Mapping[str, str]
    python: str
    progress: ProgressFactory
    say: Callable[[str], None]
    resolve: Resolve
    confirm: Callable[[str], bool]
    concurrency: ConcurrencyProbe
    # The account's AppSync Events quotas for the room's push channel (cli/channel_quota.py).
    channel_quotas: ChannelQuotaProbe
    lambda_wheels: Callable[[], object]
    clock: Callable[[], float] = time.time
    wait_delay_seconds: int = 5

    # -- what the CDK CLI is asked to do --------------------------------------------------

    def work_dir(self, name: str) -> Path:
        return self.store.directory / "cache" / "cdk" / name

    def outputs_file(self, name: str) -> Path:
        return self.work_dir(name) / "outputs.json"

    def app_args(self, name: str, *, certificate: str | None = None) -> list[str]:
        """The app and the room; `certificate`: the domain's, found by deploy (cli/certificates)."""
        found = ["-c", f"{CERTIFICATE_CONTEXT}={certificate}"] if certificate else []
        return [
            "--app",
            f"{shlex.quote(self.python)} -m {APP_MODULE}",
            "-c",
            f"room={name}",
            *found,
        ]

    def key_context(self) -> list[str]:
        """The waiting pages' key to the push channel expires a year from now: every deploy
        pushes it out again (an in-place update that keeps the key, core/push.py)."""
        return ["-c", f"{CHANNEL_KEY_EXPIRES_CONTEXT}={key_expiry(self.clock())}"]

    def deploy_args(
        self, name: str, *, api_logging: bool = True, certificate: str | None = None
    ) -> list[str]:
        # Without the account's API Gateway logging role, a stage with logs can not be created.
        logging = [] if api_logging else ["-c", "api_logging=false"]
        return [
            "deploy",
            # The room and, when it has one, its edge WAF in us-east-1 (stacks/edge_waf.py).
            "--all",
            *self.app_args(name, certificate=certificate),
            *self.key_context(),
            *logging,
            "--require-approval",
            "never",
            "--outputs-file",
            str(self.outputs_file(name)),
            "--no-notices",
            "--progress",
            "events",
        ]

    def diff_args(
        self, name: str, *, api_logging: bool = True, certificate: str | None = None
    ) -> list[str]:
        logging = [] if api_logging else ["-c", "api_logging=false"]
        return [
            "diff",
            *self.app_args(name, certificate=certificate),
            *self.key_context(),
            *logging,
            "--no-notices",
        ]

    def destroy_args(self, name: str, *, certificate: str | None = None) -> list[str]:
        return [
            "destroy",
            "--all",
            *self.app_args(name, certificate=certificate),
            "--force",
            "--no-notices",
        ]

    # -- deploy -----------------------------------------------------------------------------

    def deploy(self, settings: RoomSettings) -> Deployment:
        # What this machine decides alone comes first: the room file's URLs, the CDK CLI.
        check_deployable(settings, self.resolve, self.say)
        self._ensure_cdk()
        # Then the credentials: nothing is downloaded, synthesized or deployed without them.
        account = self.account(settings)
        # The consumer's crypto wheels, for Lambda's platform: synth (and cdk diff) only read them.
        self.lambda_wheels()
        # The domain's certificate, before anything is deployed: each mistake is one sentence.
        found = certificate_for(
            settings, lambda: self.aws.client("acm", settings, region=CERTIFICATE_REGION)
        )
        # The app reads a room file's own certificate; one deploy found goes in as context.
        certificate = None if settings.certificate_arn else found
        if certificate:
            self.say(f"The room's domain {settings.domain} is served with {certificate}.")
        cloudformation = self.aws.client("cloudformation", settings)
        for region in self._regions(settings):
            if not self._bootstrapped(settings, region):
                target = f"aws://{account}/{region}"
                self.say(f"Bootstrapping {target} for the CDK (once per account and region).")
                self._run(
                    settings, ["bootstrap", target, "--no-notices"], "bootstrapping", "bootstrap"
                )
        if settings.waf_requests_per_5_minutes:
            self._clear_failed_stack(
                self.aws.client("cloudformation", settings, region=WAF_REGION),
                settings,
                settings.names.edge_waf_stack,
            )
        running = self._clear_failed_stack(cloudformation, settings, settings.stack_name)
        # A new account's Lambda quota may be too small for the room's reservations: say so
        # now rather than after minutes of a deploy that rolls back.
        check_room_fits(settings, self.concurrency(settings, deployed=running))
        api_logging = self._api_logging_possible(settings)
        if not api_logging:
            self.say(
                "This account has no API Gateway CloudWatch logging role, so the room is deployed "
                "without API logs (its Lambda logs are kept). Set the role in API Gateway's "
                "settings and deploy again to add them."
            )
        if running:
            self._review_changes(settings, api_logging=api_logging, certificate=certificate)
        outputs_file = self.outputs_file(settings.name)
        outputs_file.parent.mkdir(parents=True, exist_ok=True)
        outputs_file.unlink(missing_ok=True)
        self._run(
            settings,
            self.deploy_args(settings.name, api_logging=api_logging, certificate=certificate),
            f"deploying {settings.stack_name}",
            "deploy",
        )
        if not settings.waf_requests_per_5_minutes:
            # The rule was turned off since the last deploy: its stack is nobody's now.
            self._remove_edge_waf(settings)
        outputs = self._read_outputs(settings, outputs_file)
        self.store.record_deployment(settings, outputs)
        deployment = Deployment(outputs, settings)
        self._first_ticket_key(settings, deployment)
        self._channel_quotas(settings, deployment)
        return deployment

    def _channel_quotas(self, settings: RoomSettings, deployment: Deployment) -> None:
        """What the push channel's quotas mean for the room's burst (per API: so read once the
        API exists), and when the pages' key now expires."""
        api_arn = deployment.channel_api_arn
        if api_arn is None:
            return
        for line in channel_advice(settings, api_arn, self.channel_quotas(settings, api_arn)):
            self.say(line)
        expires = deployment.channel_key_expires
        if expires and expires.isdigit():
            day = datetime.fromtimestamp(int(expires), UTC).date().isoformat()
            self.say(
                f"Waiting pages subscribe with a key that now expires on {day} (each deploy "
                "sets it a year ahead; `beekeeper status` warns a month before)."
            )

    def _first_ticket_key(self, settings: RoomSettings, deployment: Deployment) -> None:
        """A new room's first ticket key (the stack makes its secret empty); a redeployed
        room keeps its keys, with the issuer brought up to date if its URL changed."""
        store = key_store(
            settings,
            deployment,
            lambda service: self.aws.client(service, settings, deployment),
            self.clock,
        )
        try:
            change = store.ensure_first_key(issuer=issuer(settings, deployment))
        except _KEY_FAILURES as error:
            raise DeployError(
                f"Room {settings.name!r} is deployed, but its first ticket key could not be "
                f"made ({error}); admissions carry no ticket until `beekeeper keys rotate "
                f"{settings.name}` succeeds."
            ) from error
        if change is not None:
            self.say(f"Admission tickets: {change.summary}.")

    def _api_logging_possible(self, settings: RoomSettings) -> bool:
        """API Gateway logs need an account-wide role that outlives any room; we never set it."""
        account = self.aws.client("apigateway", settings).get_account()
        return bool(account.get("cloudwatchRoleArn"))

    @staticmethod
    def _regions(settings: RoomSettings) -> list[str]:
        """Where the room's stacks go: its region, and us-east-1 for its edge WAF."""
        regions = [settings.region]
        if settings.waf_requests_per_5_minutes and WAF_REGION not in regions:
            regions.append(WAF_REGION)
        return regions

    def _bootstrapped(self, settings: RoomSettings, region: str) -> bool:
        ssm = self.aws.client("ssm", settings, region=region)
        try:
            ssm.get_parameter(Name=BOOTSTRAP_VERSION_PARAMETER)
        except botocore.exceptions.ClientError as error:
            if error.response.get("Error", {}).get("Code") == "ParameterNotFound":
                return False
            raise
        return True

    def stack_status(
        self, cloudformation: Any, settings: RoomSettings, stack_name: str | None = None
    ) -> str | None:
        try:
            stacks = cloudformation.describe_stacks(StackName=stack_name or settings.stack_name)[
                "Stacks"
            ]
        except botocore.exceptions.ClientError as error:
            if "does not exist" in str(error.response.get("Error", {}).get("Message", "")):
                return None
            raise
        return str(stacks[0]["StackStatus"]) if stacks else None

    def _review_changes(
        self, settings: RoomSettings, *, api_logging: bool, certificate: str | None
    ) -> None:
        """Show what the deploy changes (`cdk diff`); ask before anything would be replaced."""
        self.say(f"Changes to {settings.stack_name} (cdk diff):")
        lines: list[str] = []

        def show(line: str) -> None:
            lines.append(line)
            self.say(line)

        code = self.runner.run(
            self.diff_args(settings.name, api_logging=api_logging, certificate=certificate),
            env=cdk_environment(self.environ, settings, self.store.directory),
            cwd=self._ensure_work_dir(settings),
            on_line=show,
        )
        if code != 0:
            raise DeployError(
                f"The CDK diff of {settings.stack_name} failed (exit code {code}; its output "
                f"above says why); nothing was deployed. Fix the cause and run `beekeeper deploy "
                f"{settings.name}` again."
            )
        replaced = replacements(lines)
        if replaced and not self.confirm(question(settings.stack_name, replaced)):
            raise UserError(
                f"Nothing was deployed: {settings.stack_name} is unchanged. Run `beekeeper deploy "
                f"{settings.name} --yes` to replace them anyway."
            )

    def _clear_failed_stack(
        self, cloudformation: Any, settings: RoomSettings, stack_name: str
    ) -> bool:
        """True when a stack that a deploy updates in place is running."""
        status = self.stack_status(cloudformation, settings, stack_name)
        if status is None:
            return False
        region = cloudformation.meta.region_name
        if status.endswith("_IN_PROGRESS"):
            raise UserError(
                f"Stack {stack_name} is busy ({status}); wait until it finishes "
                f"and run `beekeeper deploy {settings.name}` again."
            )
        if status == "UPDATE_ROLLBACK_FAILED":
            raise UserError(
                f"Stack {stack_name} is stuck in UPDATE_ROLLBACK_FAILED; run `aws "
                f"cloudformation continue-update-rollback --stack-name {stack_name} "
                f"--region {region}`, then `beekeeper deploy {settings.name}` again."
            )
        if status in _DELETE_BEFORE_DEPLOY:
            self.say(
                f"Stack {stack_name} is left over from a failed deploy ({status}); "
                "deleting it first."
            )
            self._delete_stack(cloudformation, stack_name)
            return False
        return True

    def _delete_stack(self, cloudformation: Any, stack_name: str) -> None:
        cloudformation.delete_stack(StackName=stack_name)
        cloudformation.get_waiter("stack_delete_complete").wait(
            StackName=stack_name,
            WaiterConfig={"Delay": self.wait_delay_seconds, "MaxAttempts": 360},
        )

    def _remove_edge_waf(self, settings: RoomSettings) -> None:
        """Delete the room's edge WAF stack in us-east-1 if one is left from a deploy with the
        rule on (the room's stack no longer refers to it)."""
        cloudformation = self.aws.client("cloudformation", settings, region=WAF_REGION)
        name = settings.names.edge_waf_stack
        if self.stack_status(cloudformation, settings, name) is None:
            return
        self.say(f"Removing {name} in {WAF_REGION}: the room has no per-address rule now.")
        self._delete_stack(cloudformation, name)

    def _read_outputs(self, settings: RoomSettings, path: Path) -> dict[str, str]:
        try:
            by_stack = json.loads(path.read_text(encoding="utf-8"))
            outputs = by_stack[settings.stack_name]
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise DeployError(
                f"The CDK CLI finished but wrote no outputs for {settings.stack_name} in {path}; "
                f"run `beekeeper deploy {settings.name}` again."
            ) from error
        return {str(k): str(v) for k, v in outputs.items()}

    # -- destroy ----------------------------------------------------------------------------

    def destroy(self, settings: RoomSettings) -> None:
        """Delete the room's stacks with the CDK CLI, then forget the room; a room that was
        never deployed is said to be so, and nothing is run or asked."""
        deployment = self.store.deployment(settings.name)
        local = deployment is not None and deployment.is_local
        if deployment is None:
            self._say_what_a_failed_deploy_left(settings)
        elif not local:
            self._ensure_cdk()
            self.account(settings)
        where = "on this machine" if local else f"{settings.stack_name} in {settings.region}"
        if not self.confirm(
            f"Delete room {settings.name!r} ({where}) and every visitor waiting in it?"
        ):
            raise UserError(f"Nothing was destroyed: room {settings.name!r} is as it was.")
        if local:
            self.store.forget(settings.name)  # a local room's record: nothing in AWS
            return
        # The app needs the domain's certificate to describe the room; any well-formed one
        # does to delete it (nothing is created).
        placeholder = _ANY_CERTIFICATE if settings.domain and not settings.certificate_arn else None
        self._run(
            settings,
            self.destroy_args(settings.name, certificate=placeholder),
            f"destroying {settings.stack_name}",
            "destroy",
        )
        if not settings.waf_requests_per_5_minutes:
            self._remove_edge_waf(settings)
        self.store.forget(settings.name)

    def _say_what_a_failed_deploy_left(self, settings: RoomSettings) -> None:
        """For a room without a deployment record: raise a UserError saying it was never
        deployed, unless AWS holds a stack of it (a first deploy that failed or was stopped
        leaves one), which is then named and destroyed."""
        name, room_file = settings.name, self.store.room_path(settings.name)
        try:
            self.account(settings)
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as error:
            explained = explain_aws_failure(error)
            reason = explained.message if explained else str(error)
            raise UserError(
                f"Room {name!r} was never deployed from this machine (it has no deployment "
                f"record), so there is nothing to destroy; its room file {room_file} stays. "
                f"Whether an interrupted deploy left a stack in AWS could not be checked: "
                f"{reason}"
            ) from error
        stacks = [
            (stack_name, status)
            for stack_name, region in self._stack_places(settings)
            if (
                status := self.stack_status(
                    self.aws.client("cloudformation", settings, region=region),
                    settings,
                    stack_name,
                )
            )
            is not None
        ]
        if not stacks:
            raise UserError(
                f"Room {name!r} was never deployed: AWS has no stack {settings.stack_name} in "
                f"{settings.region}, so there is nothing to destroy. Its room file {room_file} "
                "stays; delete it to forget the room."
            )
        found = ", ".join(f"{stack_name} ({status})" for stack_name, status in stacks)
        self.say(
            f"Room {name!r} has no deployment record, but AWS has {found}, left by a deploy "
            "that did not finish."
        )
        self._ensure_cdk()

    @staticmethod
    def _stack_places(settings: RoomSettings) -> list[tuple[str, str]]:
        """Each stack a room may have, with its region: the room's, and its edge WAF's."""
        return [
            (settings.stack_name, settings.region),
            (settings.names.edge_waf_stack, WAF_REGION),
        ]

    # -- running the CDK CLI ----------------------------------------------------------------

    def _ensure_cdk(self) -> None:
        """Stop with what to install when the CDK CLI can not run here; say once which Node.js
        it runs on when that is not one the CDK supports (cli/node.py)."""
        note = self.runner.ensure_available()
        if note:
            self.say(note)

    def _ensure_work_dir(self, settings: RoomSettings) -> Path:
        work_dir = self.work_dir(settings.name)
        work_dir.mkdir(parents=True, exist_ok=True)
        return work_dir

    def _run(self, settings: RoomSettings, args: list[str], label: str, verb: str) -> None:
        work_dir = self._ensure_work_dir(settings)
        reporter = self.progress(label)
        on_line: LineSink = reporter.line
        try:
            code = self.runner.run(
                args,
                env=cdk_environment(self.environ, settings, self.store.directory),
                cwd=work_dir,
                on_line=on_line,
            )
        finally:
            reporter.finish()
        if code != 0:
            raise DeployError(
                f"The CDK {verb} of {settings.stack_name} failed (exit code {code}; its output "
                f"above says why); CloudFormation rolls a failed change back, so fix the cause "
                f"and run `beekeeper {'destroy' if verb == 'destroy' else 'deploy'} "
                f"{settings.name}` again."
            )
