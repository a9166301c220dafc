"""Every exception the enricher raises on purpose, and what it means to the caller.

    EnricherError
    ├── BadRequest             4xx, final for the sender; `.status`, `.reason`
    │   ├── MalformedPayload   400  body is not the webhook it claims to be
    │   ├── Unauthorized       401  no credentials we can check
    │   ├── Forbidden          403  wrong credentials or bad signature
    │   ├── PayloadTooLarge    413  body over the size cap (decoded)
    │   └── UnsupportedEncoding 415 a Content-Encoding other than gzip or deflate
    ├── SearchUnavailable      runbook search is down; the page is still delivered
    ├── DeliveryFailed         Slack did not take the message; `.permanent` says retry or not
    ├── NotReplicated          a write did not reach REDIS_MIN_REPLICAS_ACK replicas in time: 503
    └── ConfigError            misconfiguration found at startup; the message says what to fix

`BadRequest.reason` goes back to the sender verbatim, so it is short (capped at
`REASON_MAX` characters) and never holds a secret or echoes more than a fragment of input.
"""

from __future__ import annotations

from pydantic import ValidationError

REASON_MAX = 200
_LOC_PART_MAX = 40


class EnricherError(Exception):
    pass


class BadRequest(EnricherError):
    status: int = 400

    def __init__(self, reason: str) -> None:
        self.reason = reason if len(reason) <= REASON_MAX else reason[: REASON_MAX - 1] + "…"
        super().__init__(self.reason)


class MalformedPayload(BadRequest):
    status = 400

    @classmethod
    def from_validation_error(cls, exc: ValidationError) -> MalformedPayload:
        """The first error as `loc: message`, e.g. `alerts.0.labels: field required`."""
        first = exc.errors(include_url=False, include_input=False)[0]
        loc = ".".join(str(part)[:_LOC_PART_MAX] for part in first["loc"])
        msg = first["msg"][:1].lower() + first["msg"][1:]
        more = exc.error_count() - 1
        return cls((f"{loc}: {msg}" if loc else msg) + (f" (+{more} more)" if more else ""))


class Unauthorized(BadRequest):
    status = 401


class Forbidden(BadRequest):
    status = 403


class PayloadTooLarge(BadRequest):
    status = 413


class UnsupportedEncoding(BadRequest):
    status = 415


class SearchUnavailable(EnricherError):
    pass


class DeliveryFailed(EnricherError):
    def __init__(
        self, message: str, *, permanent: bool = False, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.permanent = permanent
        #: Seconds Slack asked us to wait (429 Retry-After), when it said.
        self.retry_after = retry_after

    @property
    def maybe_delivered(self) -> bool:
        """5xx and timeouts may have been processed by Slack; 429 and permanent errors
        were not."""
        return not self.permanent and self.retry_after is None


class NotReplicated(EnricherError):
    def __init__(self, wanted: int, acked: int, timeout_ms: int) -> None:
        super().__init__(
            f"the write reached {acked} of the {wanted} replica(s) REDIS_MIN_REPLICAS_ACK asks "
            f"for within {timeout_ms} ms: check the replicas' link to the primary, or lower "
            "REDIS_MIN_REPLICAS_ACK"
        )
        self.wanted = wanted
        self.acked = acked


class ConfigError(EnricherError):
    pass
