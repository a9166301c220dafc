"""Grafana's signed webhook: `X-Grafana-Alerting-Signature`, hex HMAC-SHA256 of the body, or
of `timestamp:body` when Grafana also sends its timestamp header (unix seconds).

The signature covers the body, so it is computed as the body streams in (`update`) and
checked once it is complete (`verify`), before anything is queued. What can be judged from
the headers is judged first: no signature is 401, a timestamp outside the replay window
401. A signature made with none of the configured secrets is 403. Every configured secret
is compared in constant time (enricher.signatures), so secrets can rotate.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping, Sequence

from enricher.errors import Forbidden, Unauthorized
from enricher.signatures import any_match

SIGNATURE_HEADER = "x-grafana-alerting-signature"


class GrafanaSignature:
    def __init__(
        self,
        headers: Mapping[str, str],
        secrets: Sequence[str],
        *,
        timestamp_header: str,
        max_age_s: float,
        now: float,
    ) -> None:
        """Check what the headers alone can tell: 401 when the signature is missing or the
        timestamp is not within `max_age_s` of `now`."""
        presented = headers.get(SIGNATURE_HEADER, "").strip().lower().removeprefix("sha256=")
        if not presented:
            raise Unauthorized(f"missing {SIGNATURE_HEADER} header")
        try:
            self._presented = bytes.fromhex(presented)
        except ValueError:
            raise Forbidden(f"{SIGNATURE_HEADER} is not hex") from None
        prefix = b""
        if (timestamp := headers.get(timestamp_header, "").strip()) != "":
            digits = timestamp.isascii() and timestamp.isdigit() and len(timestamp) <= 12
            if not digits or abs(now - int(timestamp)) > max_age_s:
                raise Unauthorized(
                    f"{timestamp_header} is not a unix time within {max_age_s:g} s of ours: "
                    "a replay, or the sender's clock is off"
                )
            prefix = timestamp.encode() + b":"
        self._macs = [
            hmac.new(secret.encode(), prefix, hashlib.sha256) for secret in secrets if secret
        ]

    def update(self, chunk: bytes) -> None:
        for mac in self._macs:
            mac.update(chunk)

    def verify(self) -> None:
        """403 unless the body as read was signed with a configured secret."""
        if not any_match([mac.digest() for mac in self._macs], [self._presented]):
            raise Forbidden("signature mismatch")


__all__ = ["SIGNATURE_HEADER", "GrafanaSignature"]
