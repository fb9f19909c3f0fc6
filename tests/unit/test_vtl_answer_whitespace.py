"""Every template's output starts with its first character of JSON and holds no blank line.

Directive lines and the shared fragments used to leave their line breaks in the output: a
/polling answer started with some 60 blank lines, /jwks.json's with 14. Each template of the
route registry is rendered with the visitor's token and without, for DynamoDB answers of
every shape a template reads (a batch with the visitor's and the status items, one item, a
refused condition, nothing), and the jwks answer with published keys.
"""

from __future__ import annotations

import json

import pytest

from beekeeper.apigateway.velocity.renderer import RenderInput, render_response
from beekeeper.core.routes import template_files
from beekeeper.core.settings import Mode
from beekeeper.vtl import load_template, template_values

TABLE = "beekeeper-test"
VALUES = template_values(
    table_name=TABLE, origin="https://shop.example/sale", mode=Mode.CAPACITY, session_seconds=600
)
TOKEN_ID = "Ab0_-" + "x" * 17
NOW_MS = 1_763_780_000_000
NOW_S = NOW_MS // 1000
VISITOR = {
    "pk": {"S": f"v#{TOKEN_ID}"},
    "ordinal": {"N": "1234"},
    "admitted_at": {"N": str(NOW_S - 60)},
    "expires_at": {"N": str(NOW_S + 600)},
}
STATUS = {
    "pk": {"S": "status#4"},
    "admitted_total": {"N": "1000"},
    "arrivals_total": {"N": "5000"},
    "rate": {"N": "60"},
    "updated_at": {"N": str(NOW_S - 10)},
    "enabled": {"BOOL": True},
    "slowed": {"BOOL": False},
}
JWK = '{"alg":"ES256","crv":"P-256","kid":"K1","kty":"EC","use":"sig","x":"AAA","y":"BBB"}'
KEYS = {
    "pk": {"S": "ticket-keys"},
    "published": {
        "L": [
            {"M": {"jwk": {"S": JWK.replace("K1", kid)}, "retire_at": {"N": "0"}}}
            for kid in ("K1", "K2")
        ]
    },
}
DYNAMODB_ANSWERS = {
    "nothing": {},
    "a batch": {"Responses": {TABLE: [STATUS, VISITOR]}},
    "the status alone": {"Responses": {TABLE: [STATUS]}},
    "an item": {"Item": VISITOR, "Attributes": VISITOR},
    "the ticket keys": {"Item": KEYS},
    "a refused condition": {
        "__type": "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException",
        "message": "The conditional request failed",
        "Item": VISITOR,
    },
}


@pytest.mark.parametrize("name", sorted(template_files()))
@pytest.mark.parametrize("answer", sorted(DYNAMODB_ANSWERS))
@pytest.mark.parametrize("token", [f"{TOKEN_ID}.1234", None])
def test_the_output_starts_at_its_first_character_and_has_no_blank_line(
    name: str, answer: str, token: str | None
) -> None:
    data = RenderInput(
        body=json.dumps(DYNAMODB_ANSWERS[answer]),
        headers={"Cookie": f"beekeeper_token={token}"} if token else {},
        context={"requestTimeEpoch": NOW_MS},
    )
    text = render_response(load_template(name, VALUES), data).text
    assert text and not text[0].isspace(), text[:80]
    assert "\n\n" not in text, text
    json.loads(text)  # and it is the JSON it was before, whitespace aside


def test_the_jwks_answer_is_its_keys_line_by_line() -> None:
    data = RenderInput(body=json.dumps({"Item": KEYS}), context={"requestTimeEpoch": NOW_MS})
    text = render_response(load_template("jwks-response.vtl", VALUES), data).text
    assert text == '{"keys": [\n' + JWK + "\n,\n" + JWK.replace("K1", "K2") + "\n]}\n"
