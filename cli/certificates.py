"""The certificate for a room's own domain: ACM in us-east-1, issued, covering the domain.

CloudFront takes a certificate only from ACM in us-east-1 ("Requirements for using SSL/TLS
certificates with CloudFront"), whatever the room's region. A room file may name one
(`certificate_arn`); `beekeeper deploy` then checks it. Without one, deploy looks for an issued
certificate that covers the domain and uses it (and says which). Each way it can go wrong is
one sentence that says what to do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import botocore.exceptions

from beekeeper.cli.errors import UserError
from beekeeper.core.settings import CERTIFICATE_REGION, RoomSettings

# The key types CloudFront serves (RSA and ECDSA); ACM lists only RSA_2048 unless asked.
KEY_TYPES = ("RSA_2048", "RSA_3072", "RSA_4096", "EC_prime256v1", "EC_secp384r1")

AcmClient = Callable[[], Any]  # an ACM client in us-east-1


def covers(name: str, domain: str) -> bool:
    """Whether a certificate name (exact, or a one-label wildcard like *.shop.example) covers
    the domain, as TLS matches host names: case-insensitive, the wildcard for one label."""
    name, domain = name.lower().rstrip("."), domain.lower().rstrip(".")
    if name == domain:
        return True
    if name.startswith("*."):
        head, _, rest = domain.partition(".")
        return bool(head) and rest == name[2:]
    return False


def _request_hint(domain: str) -> str:
    return (
        f"request one with `aws acm request-certificate --region {CERTIFICATE_REGION} "
        f"--domain-name {domain} --validation-method DNS`, add the DNS record ACM shows for "
        "it, and deploy again once its status is ISSUED"
    )


def certificate_for(settings: RoomSettings, acm: AcmClient) -> str | None:
    """The ARN of the certificate the room's domain is served with (None: no domain)."""
    if not settings.domain:
        return None
    client = acm()
    if settings.certificate_arn:
        check(client, settings.certificate_arn, settings.domain)
        return settings.certificate_arn
    return find(client, settings.domain)


def check(client: Any, arn: str, domain: str) -> None:
    """The named certificate exists, is issued and covers the domain; else a UserError."""
    try:
        certificate = client.describe_certificate(CertificateArn=arn)["Certificate"]
    except botocore.exceptions.ClientError as error:
        if error.response.get("Error", {}).get("Code") == "ResourceNotFoundException":
            raise UserError(
                f"certificate_arn {arn} is not in ACM in {CERTIFICATE_REGION} for this "
                f"account; give the ARN of a certificate there, or remove certificate_arn and "
                f"`beekeeper deploy` finds one for {domain}."
            ) from error
        raise
    status = str(certificate.get("Status", "UNKNOWN"))
    if status == "PENDING_VALIDATION":
        raise UserError(
            f"The certificate {arn} is not issued yet (PENDING_VALIDATION): add the DNS "
            "validation record ACM shows for it and deploy again once its status is ISSUED."
        )
    if status != "ISSUED":
        raise UserError(
            f"The certificate {arn} is {status}, so CloudFront can not serve it; "
            f"{_request_hint(domain)}."
        )
    names = _names(certificate)
    if not any(covers(name, domain) for name in names):
        raise UserError(
            f"The certificate {arn} covers {', '.join(names)} but not {domain}; give a "
            f"certificate for {domain} (or for *.{domain.partition('.')[2]})."
        )


def find(client: Any, domain: str) -> str:
    """An issued us-east-1 certificate covering the domain: an exact name before a wildcard,
    then the one valid longest; a UserError when there is none."""
    candidates = []
    pages = client.get_paginator("list_certificates").paginate(
        CertificateStatuses=["ISSUED"], Includes={"keyTypes": list(KEY_TYPES)}
    )
    for page in pages:
        for summary in page.get("CertificateSummaryList", []):
            if "SubjectAlternativeNameSummaries" not in summary:
                # A summary may leave the other names out: ask for the certificate itself.
                summary = {
                    **summary,
                    **client.describe_certificate(CertificateArn=summary["CertificateArn"])[
                        "Certificate"
                    ],
                }
            names = _names(summary)
            if any(covers(name, domain) for name in names):
                exact = any(name.lower() == domain for name in names)
                not_after = summary.get("NotAfter")
                candidates.append((exact, not_after.timestamp() if not_after else 0.0, summary))
    if not candidates:
        raise UserError(
            f"No issued certificate in ACM in {CERTIFICATE_REGION} covers {domain}, and "
            f"CloudFront takes certificates from {CERTIFICATE_REGION} only; "
            f"{_request_hint(domain)}."
        )
    candidates.sort(key=lambda found: (found[0], found[1]), reverse=True)
    return str(candidates[0][2]["CertificateArn"])


def _names(certificate: Mapping[str, Any]) -> list[str]:
    """Every name a certificate (or a list summary of one) is for, the main one first."""
    found: Iterable[str] = [
        str(certificate.get("DomainName", "")),
        *(certificate.get("SubjectAlternativeNames") or ()),
        *(certificate.get("SubjectAlternativeNameSummaries") or ()),
    ]
    return list(dict.fromkeys(name for name in found if name))
