"""This machine's loopback address, as a URL or a Host header names it: the one owner.

The settings accept plain http only for it (a local rehearsal's shop), deploy refuses an origin
on it, and local mode's operator servers answer only requests addressed to it. Standard
library only: shipped inside the Lambda asset with the settings.
"""

from __future__ import annotations

import ipaddress

# A URL's host for this machine (the IPv6 address without the brackets a URL puts round it).
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


def is_loopback_host(host: str) -> bool:
    """localhost or a loopback address (127.0.0.0/8, ::1), as a URL's host names it."""
    if host in LOOPBACK_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def loopback_host_headers(port: int) -> frozenset[str]:
    """The Host header a browser or boto3 sends to this machine's loopback address on `port`
    (an IPv6 address in brackets)."""
    return frozenset(f"[{h}]:{port}" if ":" in h else f"{h}:{port}" for h in LOOPBACK_HOSTS)
