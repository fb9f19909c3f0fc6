"""What `beekeeper deploy` refuses that `beekeeper local` accepts: URLs that name this machine.

A room in AWS sends its visitors to the origin and its governor samples the health check URL
from inside Lambda. There, a loopback address (localhost, 127.0.0.0/8, ::1, 0.0.0.0) is the
function's own sandbox, where Lambda's runtime API listens, and a link-local one (169.254.0.0/16,
fe80::/10) is the network's internal services, such as the instance metadata address
169.254.169.254. Neither is ever the shop, so a deploy refuses them, whether the URL names the
address itself or a host name that resolves to one. A local room runs on this machine and may
well protect a shop on localhost, so the room settings themselves accept them.

Name resolution is passed in (`Resolve`), so tests never ask a DNS server.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from urllib.parse import urlsplit

from beekeeper.cli.errors import UserError
from beekeeper.core.settings import RoomSettings

# host name -> the addresses it resolves to; raises OSError when it does not resolve.
Resolve = Callable[[str], list[str]]


def resolve_host(host: str) -> list[str]:
    """Every address the system resolver gives for `host` (socket.getaddrinfo)."""
    return sorted({str(info[4][0]) for info in socket.getaddrinfo(host, None)})


def internal_address(address: str) -> bool:
    """A loopback, link-local or unspecified address: this machine, never a shop."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])  # fe80::1%eth0 names a zone
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback or ip.is_link_local or ip.is_unspecified


def _localhost_name(host: str) -> bool:
    name = host.rstrip(".").lower()
    # RFC 6761: localhost and every name under it resolve to loopback.
    return name == "localhost" or name.endswith(".localhost")


def deployable_urls(settings: RoomSettings) -> dict[str, str]:
    """The room's URLs that AWS reaches or sends visitors to, by setting name."""
    urls = {"origin": settings.origin}
    if settings.health_check_url:
        urls["health_check_url"] = settings.health_check_url
    return urls


def check_deployable(settings: RoomSettings, resolve: Resolve, warn: Callable[[str], None]) -> None:
    """Raise a UserError naming the setting when a URL names this machine.

    A host that does not resolve is not refused (the shop's DNS may be set up later), only
    mentioned through `warn`.
    """
    for field_name, url in deployable_urls(settings).items():
        host = urlsplit(url).hostname or ""
        if _localhost_name(host) or internal_address(host):
            raise _refusal(settings, field_name, url, repr(host))
        try:
            addresses = resolve(host)
        except (OSError, UnicodeError):
            warn(
                f"{field_name}: the host {host!r} does not resolve from here; the room is "
                "deployed anyway, but nobody reaches the shop until it does."
            )
            continue
        internal = [address for address in addresses if internal_address(address)]
        if internal:
            raise _refusal(settings, field_name, url, f"{host} ({', '.join(internal)})")


def _refusal(settings: RoomSettings, field_name: str, url: str, what: str) -> UserError:
    return UserError(
        f"{field_name} {url!r} names this machine: {what} is a loopback or link-local address, "
        "which a room in AWS can never reach as your shop. Set the shop's public https:// URL "
        f"in {field_name} of the room file for {settings.name!r}, or rehearse on this machine "
        "with `beekeeper local`."
    )
