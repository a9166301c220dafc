"""HMAC-SHA256 request signatures, shared by the senders that sign (PagerDuty, Slack).

Both put one or more `<version>=<hex>` values in a header, comma separated (PagerDuty
during secret rotation); a request is genuine when any presented value equals the HMAC
computed with any configured secret. Every comparison runs in constant time, and all
pairs are compared, so the time taken says nothing about which one matched.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence


def hmac_sha256(secret: str, message: bytes) -> bytes:
    return hmac.new(secret.encode(), message, hashlib.sha256).digest()


def presented(header: str, version: str) -> list[bytes]:
    """The `version=<hex>` values of a comma-separated signature header (the version
    matched case-insensitively, hex in either case); values that are not hex are skipped."""
    values: list[bytes] = []
    for part in header.split(","):
        name, _, value = part.strip().partition("=")
        if name.strip().lower() == version:
            try:
                values.append(bytes.fromhex(value.strip()))
            except ValueError:
                continue
    return values


def any_match(expected: Sequence[bytes], signatures: Sequence[bytes]) -> bool:
    """Whether any presented signature equals any expected one (constant time each)."""
    ok = False
    for want in expected:
        for signature in signatures:
            ok |= hmac.compare_digest(want, signature)
    return ok


__all__ = ["any_match", "hmac_sha256", "presented"]
