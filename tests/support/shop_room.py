"""A local room for the shop integration examples (docs/shop-integration.md): one visitor admitted
through the real flow, and the tickets a shop must refuse, made with the room's own key.

In-process for the Python example's tests (`shop_room`), and as a program for the Node.js
example's (`python -m tests.support.shop_room`): it prints one JSON line with
the facts and runs until its standard input closes. With a cap (`max_inside`, `--max-inside`)
the room is in capacity mode, for the examples of the page's "Capacity mode" section.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import boto3
import jwt

from beekeeper.core.datamodel import ORIGIN_TICKET_PARAMETER, ORIGIN_TOKEN_PARAMETER
from beekeeper.core.headers import browser_origin
from beekeeper.core.local_room import LOCAL_REGION, PLACEHOLDER_CREDENTIALS
from beekeeper.core.tickets import JTI_BYTES
from beekeeper.local.room import LocalOptions, LocalRoom, local_room
from beekeeper.room.tickets import (
    KeyRing,
    TicketSigner,
    b64url,
    b64url_decode,
    generate_private_jwk,
)
from tests.support.localroom.http import admitted_origin

# The shop's page the room sends visitors to (with a query of its own, which the examples keep).
SHOP_URL = "http://localhost:3000/sale?from=email"
ROOM_NAME = "shop-examples"
CAPACITY_ROOM_NAME = "shop-examples-capacity"


@dataclass(frozen=True)
class ShopRoom:
    room_url: str  # the tickets' iss
    room_name: str
    shop_origin: str
    token: str  # the admitted visitor's
    admission_url: str  # where the room sent them: token and ticket
    tickets: dict[str, str]  # "valid" and the ones a shop must refuse
    # Genuine tickets for further admissions, signed by the room's key with the room's own
    # signer (room/tickets.py), each with its own jti: for the signature's canonical form.
    signed: list[str]


def admit_one_visitor(room: LocalRoom, within_seconds: float = 20) -> str:
    """Through the marketing link and /polling, as the page does; the URL the room redirects to."""
    assert room.urls is not None
    polling = room.urls.page_url.removesuffix("/room") + "/polling"
    return admitted_origin(room.urls.marketing_url, polling, within_seconds)


SIGNED_TICKETS = 40


def room_key(room: LocalRoom) -> dict[str, Any]:
    """The room's one signing key, from its secret."""
    assert room.resources is not None
    secrets = boto3.client(
        "secretsmanager",
        endpoint_url=room.endpoint_url,
        region_name=LOCAL_REGION,
        **PLACEHOLDER_CREDENTIALS,
    )
    ring = KeyRing.parse(
        secrets.get_secret_value(SecretId=room.resources.ticket_keys_secret)["SecretString"]
    )
    (key,) = ring.keys
    return dict(key)


def signed_tickets(room: LocalRoom, valid: str) -> list[str]:
    """The valid ticket's claims with a new jti each, signed as the consumer signs."""
    claims = jwt.decode(valid, options={"verify_signature": False})
    signer = TicketSigner(room_key(room))
    return [
        signer.sign({**claims, "jti": b64url(os.urandom(JTI_BYTES))}) for _ in range(SIGNED_TICKETS)
    ]


def crafted_tickets(room: LocalRoom, valid: str) -> dict[str, str]:
    """What a shop must refuse, each wrong in one way; signed with the room's own key unless
    the point is another key."""
    key = room_key(room)
    claims = jwt.decode(valid, options={"verify_signature": False})

    def signed(key: dict[str, Any], **changes: Any) -> str:
        return jwt.encode(
            {**claims, **changes},
            jwt.PyJWK(dict(key)).key,
            algorithm="ES256",
            headers={"kid": str(key["kid"])},
        )

    header, payload, signature = valid.split(".")
    richer = json.loads(b64url_decode(payload)) | {"exp": claims["exp"] + 86_400}
    now = int(time.time())
    return {
        "valid": valid,
        "tampered": ".".join((header, b64url(json.dumps(richer).encode()), signature)),
        "other_room": signed(key, iss="http://127.0.0.1:9/other", room="other"),
        "other_origin": signed(key, aud="https://elsewhere.example"),
        "expired": signed(key, iat=now - 7200, exp=now - 3600),
        "unknown_key": signed(generate_private_jwk(signs_from=0)),
    }


@contextmanager
def shop_room(shop_url: str = SHOP_URL, max_inside: int = 0) -> Iterator[ShopRoom]:
    """A running local room for the shop at `shop_url`, with one admitted visitor; stopped on
    exit. With `max_inside` > 0 it is a capacity-mode room (its own name, so both can run)."""
    name = CAPACITY_ROOM_NAME if max_inside else ROOM_NAME
    settings = local_room(rate=600, origin=shop_url, name=name, max_inside=max_inside)
    options = LocalOptions(port=0, operator_port=0, minute_seconds=2, save_line=False)
    room = LocalRoom(settings, options)
    room.start()
    try:
        assert room.urls is not None
        admission = admit_one_visitor(room)
        query = parse_qs(urlsplit(admission).query)
        yield ShopRoom(
            room_url=room.urls.issuer,
            room_name=name,
            shop_origin=browser_origin(shop_url),
            token=query[ORIGIN_TOKEN_PARAMETER][0],
            admission_url=admission,
            tickets=crafted_tickets(room, query[ORIGIN_TICKET_PARAMETER][0]),
            signed=signed_tickets(room, query[ORIGIN_TICKET_PARAMETER][0]),
        )
    finally:
        room.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shop-url", default=SHOP_URL)
    parser.add_argument("--max-inside", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as config:
        os.environ["BEEKEEPER_CONFIG_DIR"] = config
        with shop_room(args.shop_url, args.max_inside) as room:
            print(json.dumps(asdict(room)), flush=True)
            sys.stdin.read()  # until the test closes it


if __name__ == "__main__":
    main()
