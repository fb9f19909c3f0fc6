"""`beekeeper deploy` and `destroy` of the edge: the domain's certificate from ACM in us-east-1,
and the edge WAF's own stack there. ACM and CloudFormation are moto; the CDK CLI a double."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from beekeeper.core.edge import WAF_REGION
from tests.functional.cli.test_cli_deploy import OUTPUTS, bootstrap, deployed_outputs
from tests.support.cli_testkit import (
    REGION,
    Invoke,
    RecordedCdkRunner,
    aws_client,
    room_settings,
    write_deployment,
    write_room,
)

DOMAIN = "queue.shop.example"


def import_certificate(*names: str, region: str = WAF_REGION) -> str:
    """An issued certificate for `names` in ACM (imported: moto issues those at once)."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=90))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in names]), False)
        .sign(key, hashes.SHA256())
    )
    arn: str = aws_client("acm", region).import_certificate(
        Certificate=certificate.public_bytes(serialization.Encoding.PEM),
        PrivateKey=key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )["CertificateArn"]
    return arn


def context_of(call: list[str], name: str) -> str | None:
    values = [call[i + 1] for i, arg in enumerate(call) if arg == "-c"]
    found = [v.split("=", 1)[1] for v in values if v.startswith(f"{name}=")]
    return found[0] if found else None


@pytest.fixture
def domain_room(aws: None, config_dir: Path, cdk: RecordedCdkRunner) -> Path:
    cdk.outputs = {"beekeeper-sale": deployed_outputs()}
    bootstrap()
    return write_room(config_dir, room_settings("sale", domain=DOMAIN))


def test_deploy_finds_the_issued_certificate_for_the_domain_and_says_which(
    invoke: Invoke, domain_room: Path, cdk: RecordedCdkRunner
) -> None:
    aws_client("acm", WAF_REGION).request_certificate(
        DomainName=DOMAIN, ValidationMethod="DNS"
    )  # pending: never chosen
    other = import_certificate("shop.example")
    wildcard = import_certificate("*.shop.example")
    exact = import_certificate("www.shop.example", DOMAIN)
    result = invoke("deploy", "sale")
    assert result.exit_code == 0, result.output
    (call,) = [c.args for c in cdk.calls if c.args[0] == "deploy"]
    assert context_of(call, "certificate_arn") == exact
    assert f"The room's domain {DOMAIN} is served with {exact}." in result.stderr
    assert other != wildcard  # both issued, neither the exact name
    assert f"Point {DOMAIN} at " in result.stderr


def test_a_wildcard_certificate_serves_a_domain_one_label_below_it(
    invoke: Invoke, domain_room: Path, cdk: RecordedCdkRunner
) -> None:
    wildcard = import_certificate("*.shop.example")
    result = invoke("deploy", "sale")
    assert result.exit_code == 0, result.output
    (call,) = [c.args for c in cdk.calls if c.args[0] == "deploy"]
    assert context_of(call, "certificate_arn") == wildcard


def test_no_certificate_in_us_east_1_is_one_sentence_and_nothing_is_deployed(
    invoke: Invoke, domain_room: Path, cdk: RecordedCdkRunner
) -> None:
    import_certificate(DOMAIN, region=REGION)  # the room's region: CloudFront can not use it
    result = invoke("deploy", "sale")
    assert result.exit_code == 1
    assert f"No issued certificate in ACM in us-east-1 covers {DOMAIN}" in result.output
    assert "aws acm request-certificate --region us-east-1" in result.output
    assert cdk.calls == []


@pytest.mark.parametrize(
    ("names", "pending", "expected"),
    [
        (("shop.example", "www.shop.example"), False, "but not queue.shop.example"),
        ((DOMAIN,), True, "is not issued yet (PENDING_VALIDATION)"),
    ],
)
def test_a_named_certificate_that_can_not_serve_the_domain_is_explained(
    invoke: Invoke,
    aws: None,
    config_dir: Path,
    cdk: RecordedCdkRunner,
    names: tuple[str, ...],
    pending: bool,
    expected: str,
) -> None:
    bootstrap()
    if pending:
        arn = aws_client("acm", WAF_REGION).request_certificate(
            DomainName=names[0], ValidationMethod="DNS"
        )["CertificateArn"]
    else:
        arn = import_certificate(*names)
    write_room(config_dir, room_settings("sale", domain=DOMAIN, certificate_arn=arn))
    result = invoke("deploy", "sale")
    assert result.exit_code == 1
    assert expected in result.output
    assert cdk.calls == []


def test_a_named_certificate_that_serves_the_domain_is_deployed_as_the_room_file_says(
    invoke: Invoke, aws: None, config_dir: Path, cdk: RecordedCdkRunner
) -> None:
    bootstrap()
    cdk.outputs = {"beekeeper-sale": deployed_outputs()}
    arn = import_certificate(DOMAIN)
    write_room(config_dir, room_settings("sale", domain=DOMAIN, certificate_arn=arn))
    result = invoke("deploy", "sale")
    assert result.exit_code == 0, result.output
    (call,) = [c.args for c in cdk.calls if c.args[0] == "deploy"]
    # The app reads it from the room file: no context needed.
    assert context_of(call, "certificate_arn") is None


def test_a_room_without_the_rule_deploys_one_stack_and_removes_an_old_waf_stack(
    invoke: Invoke, aws: None, config_dir: Path, cdk: RecordedCdkRunner
) -> None:
    bootstrap(REGION)  # us-east-1 is not needed: nothing goes there
    cdk.outputs = {"beekeeper-sale": deployed_outputs()}
    write_room(config_dir, room_settings("sale", waf_requests_per_5_minutes=0))
    old = aws_client("cloudformation", WAF_REGION)
    old.create_stack(
        StackName="beekeeper-sale-edge-waf",
        TemplateBody=json.dumps({"Resources": {"Q": {"Type": "AWS::SQS::Queue"}}}),
    )
    result = invoke("deploy", "sale")
    assert result.exit_code == 0, result.output
    assert [c.args[0] for c in cdk.calls] == ["deploy"]  # no bootstrap of us-east-1
    assert "Removing beekeeper-sale-edge-waf in us-east-1" in result.stderr
    summaries = old.list_stacks()["StackSummaries"]
    assert {s["StackStatus"] for s in summaries if s["StackName"].endswith("edge-waf")} == {
        "DELETE_COMPLETE"
    }


def test_destroy_removes_every_stack_of_the_room(
    invoke: Invoke, aws: None, config_dir: Path, cdk: RecordedCdkRunner
) -> None:
    write_room(config_dir, room_settings("sale", domain=DOMAIN))
    write_deployment(config_dir, "sale", OUTPUTS)
    result = invoke("destroy", "sale", "--yes")
    assert result.exit_code == 0, result.output
    (call,) = [c.args for c in cdk.calls]
    assert call[:2] == ["destroy", "--all"]
    # The app describes a room with a domain only with a certificate; deleting needs none.
    assert context_of(call, "certificate_arn") is not None


def test_list_shows_the_public_address_before_the_marketing_link(
    invoke: Invoke, config_dir: Path
) -> None:
    write_room(config_dir, room_settings("sale"))
    write_deployment(config_dir, "sale", OUTPUTS)
    result = invoke("list")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[1:3] == [
        f"  public address:   {OUTPUTS['PublicUrl']}",
        f"  marketing URL:    {OUTPUTS['PublicUrl']}/beekeeper",
    ]
