"""The names of a room's AWS resources and of the environment its Lambdas read.

One room is one CloudFormation stack, `beekeeper-<room>`; the stack names its table, queues
and functions from it, and local mode names the emulator's table and queues the same way, so
an operator command, a log line or a test finds a resource under one name wherever the room
runs. Standard library only: the Lambda asset ships it.
"""

from __future__ import annotations

from dataclasses import dataclass

STACK_PREFIX = "beekeeper"
# The four functions, by the role they play (also the handlers' module names).
FUNCTION_ROLES = ("producer", "trigger", "consumer", "governor")

# Environment variables the stack gives the functions, besides the room settings
# (core/settings.py ENVIRONMENT_VARIABLE).
TABLE_NAME_VARIABLE = "TABLE_NAME"
QUEUE_URL_VARIABLE = "QUEUE_URL"
CONSUMER_FUNCTION_VARIABLE = "CONSUMER_FUNCTION_NAME"
# The consumer's: the secret holding the room's ticket keys (room/tickets.py).
TICKET_KEYS_SECRET_VARIABLE = "TICKET_KEYS_SECRET"
# The producer's: the secret its challenges and token ids are signed with (core/join_work.py).
JOIN_SECRET_VARIABLE = "JOIN_SECRET"
# The trigger's, consumers' and governor's: the room's push channel's HTTP host, which they
# publish the room's state changes to (room/push.py; the stack grants them the publish).
CHANNEL_HTTP_DOMAIN_VARIABLE = "CHANNEL_HTTP_DOMAIN"
# The producer's: the room's own public origin, its page's (`https://<host>`), which a leave
# with the cookie may come from (room/leaving.py).
ROOM_ORIGIN_VARIABLE = "ROOM_ORIGIN"


@dataclass(frozen=True)
class ResourceNames:
    """Every name derived from a room's name (already validated by the settings)."""

    room: str

    @property
    def stack(self) -> str:
        return f"{STACK_PREFIX}-{self.room}"

    @property
    def edge_waf_stack(self) -> str:
        """The edge's WAF, a stack of its own in us-east-1 (core.edge.WAF_REGION)."""
        return f"{self.stack}-edge-waf"

    @property
    def table(self) -> str:
        return self.stack

    @property
    def queue(self) -> str:
        return f"{self.stack}-visitors"

    @property
    def dead_letter_queue(self) -> str:
        return f"{self.stack}-dead-letters"

    @property
    def local_ticket_keys_secret(self) -> str:
        """The ticket keys' secret in a local room's store (in AWS CloudFormation names it: a
        deleted secret's name stays taken for days, and a room may be deployed again)."""
        return f"{self.stack}-ticket-keys"

    @property
    def local_join_secret(self) -> str:
        """The join secret in a local room's store (in AWS CloudFormation names it)."""
        return f"{self.stack}-join"

    def function(self, role: str) -> str:
        if role not in FUNCTION_ROLES:
            raise ValueError(f"no function plays the role {role!r}")
        return f"{self.stack}-{role}"


# The stack's outputs (docs/data-model.md "Stack outputs"): what `beekeeper deploy` records and
# every operator command reads; a local room records the same keys.
MARKETING_URL_OUTPUT = "MarketingUrl"
CLIENT_CHECK_URL_OUTPUT = "ClientCheckUrl"
PAGE_URL_OUTPUT = "PageUrl"
TABLE_NAME_OUTPUT = "TableName"
QUEUE_URL_OUTPUT = "QueueUrl"
DEAD_LETTER_QUEUE_URL_OUTPUT = "DeadLetterQueueUrl"
DASHBOARD_NAME_OUTPUT = "DashboardName"
# Admission tickets (core/tickets.py): the room's public keys, and the secret with its private
# keys (which `beekeeper keys` writes).
JWKS_URL_OUTPUT = "JwksUrl"
TICKET_KEYS_SECRET_OUTPUT = "TicketKeysSecret"
# The room's public address (the edge: https://<domain or distribution>), the distribution's
# own domain name (where a custom domain's DNS record points) and ID, and the API's stage URL,
# which only the edge may use (the origin lock refuses anyone else).
PUBLIC_URL_OUTPUT = "PublicUrl"
EDGE_DOMAIN_OUTPUT = "EdgeDomain"
DISTRIBUTION_ID_OUTPUT = "DistributionId"
ORIGIN_URL_OUTPUT = "OriginUrl"
# The push channel (core/push.py, stacks/channel.py): the Event API's HTTP and real-time hosts
# (a local room: its loopback channel's `127.0.0.1:<port>`), and in AWS the API's ARN (its
# Service Quotas are per API) and when the page's API key expires (epoch seconds).
CHANNEL_HTTP_DOMAIN_OUTPUT = "ChannelHttpDomain"
CHANNEL_REALTIME_DOMAIN_OUTPUT = "ChannelRealtimeDomain"
CHANNEL_API_ARN_OUTPUT = "ChannelApiArn"
CHANNEL_KEY_EXPIRES_OUTPUT = "ChannelKeyExpires"
# Recorded for a local room only: the address of its AWS API emulator, and the length of its
# minute in seconds (`beekeeper local --minute-seconds`), which its metrics are written in.
ENDPOINT_URL_OUTPUT = "EndpointUrl"
MINUTE_SECONDS_OUTPUT = "MinuteSeconds"


def function_output(role: str) -> str:
    """The output naming the function of `role`, e.g. ProducerFunctionName."""
    if role not in FUNCTION_ROLES:
        raise ValueError(f"no function plays the role {role!r}")
    return f"{role.capitalize()}FunctionName"


STACK_OUTPUTS = (
    MARKETING_URL_OUTPUT,
    CLIENT_CHECK_URL_OUTPUT,
    PAGE_URL_OUTPUT,
    TABLE_NAME_OUTPUT,
    QUEUE_URL_OUTPUT,
    DEAD_LETTER_QUEUE_URL_OUTPUT,
    *(function_output(role) for role in FUNCTION_ROLES),
    DASHBOARD_NAME_OUTPUT,
    JWKS_URL_OUTPUT,
    TICKET_KEYS_SECRET_OUTPUT,
    PUBLIC_URL_OUTPUT,
    EDGE_DOMAIN_OUTPUT,
    DISTRIBUTION_ID_OUTPUT,
    ORIGIN_URL_OUTPUT,
    CHANNEL_HTTP_DOMAIN_OUTPUT,
    CHANNEL_REALTIME_DOMAIN_OUTPUT,
    CHANNEL_API_ARN_OUTPUT,
    CHANNEL_KEY_EXPIRES_OUTPUT,
)
