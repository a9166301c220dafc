"""Alertmanager webhook (version 4): authenticate, parse, and reduce one group to an `Alert`.

Alertmanager sends one notification per alert group, so one payload becomes one `Alert`.
Only the fields we use are required (version, groupKey, status, alerts with status, labels
and startsAt); everything else has a default, and unknown fields are ignored, so a newer
Alertmanager or a hand-written test body is not turned away with a final 400.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)
from pydantic_core import PydanticCustomError

from enricher.alert import Alert, in_utc
from enricher.errors import Forbidden, MalformedPayload, Unauthorized
from enricher.sources.promql import group_metric_names

#: Highest first. Values outside this list still count, below "info".
SEVERITY_ORDER = ("critical", "page", "error", "warning", "info")
#: Label names that name the service, most specific first.
SERVICE_LABELS = ("service", "app", "app_kubernetes_io_name", "job")


def _go_zero_time_is_none(value: datetime | None) -> datetime | None:
    # Go marshals an unset time.Time as 0001-01-01T00:00:00Z; that is what a firing alert's
    # endsAt holds, and it means "no end yet".
    return None if value is not None and value.year == 1 else value


class _Model(BaseModel):
    model_config = ConfigDict(
        frozen=True, extra="ignore", validate_by_name=True, validate_by_alias=True
    )


class AlertmanagerAlert(_Model):
    status: Literal["firing", "resolved"]
    labels: dict[str, str]
    annotations: dict[str, str] = Field(default_factory=dict)
    starts_at: Annotated[AwareDatetime, AfterValidator(in_utc)] = Field(alias="startsAt")
    ends_at: Annotated[AwareDatetime | None, AfterValidator(_go_zero_time_is_none)] = Field(
        default=None, alias="endsAt"
    )

    @field_validator("ends_at", mode="after")
    @classmethod
    def _ends_in_utc(cls, value: datetime | None) -> datetime | None:
        return None if value is None else in_utc(value)
    generator_url: str = Field(default="", alias="generatorURL")
    fingerprint: str = ""


class AlertmanagerPayload(_Model):
    version: str
    group_key: str = Field(alias="groupKey")
    truncated_alerts: int = Field(default=0, ge=0, alias="truncatedAlerts")
    status: Literal["firing", "resolved"]
    receiver: str = ""
    group_labels: dict[str, str] = Field(default_factory=dict, alias="groupLabels")
    common_labels: dict[str, str] = Field(default_factory=dict, alias="commonLabels")
    common_annotations: dict[str, str] = Field(default_factory=dict, alias="commonAnnotations")
    external_url: str = Field(default="", alias="externalURL")
    alerts: list[AlertmanagerAlert] = Field(min_length=1)

    @field_validator("version")
    @classmethod
    def _version_4(cls, value: str) -> str:
        if value != "4":
            raise PydanticCustomError(
                "unsupported_version",
                "unsupported webhook version {version}; this receiver speaks version '4'",
                {"version": repr(value[:10])},
            )
        return value


def parse_alertmanager(body: bytes) -> AlertmanagerPayload:
    """Validate a raw request body; any problem becomes a `MalformedPayload` with a short reason."""
    try:
        return AlertmanagerPayload.model_validate_json(body)
    except ValidationError as exc:
        raise MalformedPayload.from_validation_error(exc) from None


def check_alertmanager_auth(
    authorization_header: str | None,
    *,
    bearer_tokens: Sequence[str],
    basic_users: Mapping[str, str],
) -> None:
    """Accept `Bearer <token>` or `Basic base64(user:pass)` matching the configuration.

    401 when the request carries no credentials we can check: no header, an empty one, or a
    scheme other than Bearer/Basic. 403 when it carries credentials that don't check out,
    including Basic credentials that are not base64 of `user:pass`. Every configured
    credential is compared (no early exit) with `hmac.compare_digest`; empty configured
    tokens and passwords never match, since anyone could present them.
    """
    if isinstance(bearer_tokens, str):
        raise TypeError("bearer_tokens must be a sequence of tokens, not one string")
    scheme, _, credentials = (authorization_header or "").strip().partition(" ")
    scheme, credentials = scheme.lower(), credentials.strip()
    if not scheme:
        raise Unauthorized("missing Authorization header")
    if scheme not in ("bearer", "basic"):
        raise Unauthorized("unsupported Authorization scheme; use Bearer or Basic")
    if not credentials:
        raise Unauthorized(f"empty {scheme.capitalize()} credentials")

    if scheme == "bearer":
        presented = credentials.encode()
        ok = False
        for token in bearer_tokens:
            ok |= hmac.compare_digest(presented, token.encode()) and bool(token)
        if not ok:
            raise Forbidden("invalid bearer token")
        return

    try:
        decoded = base64.b64decode(credentials, validate=True)
    except ValueError:  # binascii.Error, or non-ASCII text
        raise Forbidden("malformed Basic credentials") from None
    user, colon, password = decoded.partition(b":")
    if not colon:
        raise Forbidden("malformed Basic credentials")
    ok = False
    for name, secret in basic_users.items():
        same_user = hmac.compare_digest(user, name.encode())
        same_password = hmac.compare_digest(password, secret.encode())
        ok |= same_user and same_password and bool(secret)
    if not ok:
        raise Forbidden("invalid username or password")


def _first(keys: Sequence[str], *sources: Mapping[str, str]) -> str | None:
    """The first non-empty value, trying each source in turn and each key within it."""
    for source in sources:
        for key in keys:
            if value := source.get(key, "").strip():
                return value
    return None


def _representative(payload: AlertmanagerPayload, alert_name: str) -> AlertmanagerAlert:
    """The alert that speaks for the group where group-level fields say nothing.

    The first alert carrying the group's alert name, firing ones before resolved ones (a
    group can hold both). Every per-alert fallback reads this one alert, so summary,
    service, link and labels describe the alert the page is named after.
    """
    return min(
        payload.alerts,
        key=lambda a: (a.labels.get("alertname", "").strip() != alert_name, a.status != "firing"),
    )


def _alert_name(payload: AlertmanagerPayload) -> str:
    if name := _first(("alertname",), payload.common_labels, payload.group_labels):
        return name
    # Counter keeps insertion order and most_common() is stable, so ties go to the first seen.
    names = Counter(n for a in payload.alerts if (n := a.labels.get("alertname", "").strip()))
    return names.most_common(1)[0][0] if names else "unknown"


def _severity(payload: AlertmanagerPayload) -> str | None:
    if severity := _first(("severity",), payload.common_labels):
        return severity
    # Only the firing alerts describe the page while it fires; a resolved critical
    # alongside a firing warning is a warning page.
    firing = [a for a in payload.alerts if a.status == "firing"]
    candidates = [
        s for a in (firing or payload.alerts) if (s := a.labels.get("severity", "").strip())
    ]
    if not candidates:
        return None
    return max(candidates, key=_severity_rank)


def _severity_rank(severity: str) -> int:
    word = severity.lower()
    return len(SEVERITY_ORDER) - SEVERITY_ORDER.index(word) if word in SEVERITY_ORDER else 0


def normalize_group(payload: AlertmanagerPayload) -> Alert:
    """One `Alert` for the whole notification group.

    Group-level fields (commonLabels, commonAnnotations) win because they hold for every
    alert in the group; the representative alert fills what they lack. Note that
    commonAnnotations drops any key whose value differs between alerts.
    """
    alert_name = _alert_name(payload)
    rep = _representative(payload, alert_name)
    common, annotations = payload.common_annotations, rep.annotations
    firing = payload.status == "firing" or any(a.status == "firing" for a in payload.alerts)
    return Alert(
        source="alertmanager",
        status="firing" if firing else "resolved",
        alert_name=alert_name,
        service=_first(SERVICE_LABELS, payload.common_labels, rep.labels),
        severity=_severity(payload),
        summary=_first(("summary", "message"), common, annotations) or "",
        description=_first(("description",), common, annotations) or "",
        labels=dict(payload.common_labels or rep.labels),
        runbook_url=_first(("runbook_url", "runbook"), common, annotations),
        group_key=payload.group_key,
        alert_count=len(payload.alerts) + payload.truncated_alerts,
        truncated=payload.truncated_alerts,
        starts_at=min(a.starts_at for a in payload.alerts),
        link=rep.generator_url or payload.external_url or None,
        metrics=group_metric_names(a.generator_url for a in (rep, *payload.alerts)),
        event_type=None,
    )


def alert_identity(payload: AlertmanagerPayload) -> str:
    """Idempotency key of one notification: the same key means the same news.

    sha256 (hex) over the groupKey, the group status, `truncatedAlerts` and the sorted
    `fingerprint@startsAt:status` of every alert. HA peers and Alertmanager's own resends
    of a body produce the same key; a change the page should show (an alert joins,
    resolves, or re-fires with a new startsAt) produces a new one. Per-alert status is in
    the key because a partial resolve leaves the group status at "firing". An alert
    without a fingerprint (hand-written bodies) is identified by its sorted labels.
    """
    items = sorted(
        f"{a.fingerprint or _labels_key(a.labels)}@{a.starts_at.astimezone(UTC).isoformat()}"
        f":{a.status}"
        for a in payload.alerts
    )
    material = [payload.group_key, payload.status, payload.truncated_alerts, items]
    return hashlib.sha256(json.dumps(material).encode()).hexdigest()


def firing_fingerprints(payload: AlertmanagerPayload) -> tuple[str, ...]:
    """The firing alerts the page shows, as sorted `fingerprint@startsAt`: when the set
    changes, the posted message is updated."""
    return tuple(
        sorted(
            f"{a.fingerprint or ''}@{a.starts_at.isoformat()}"
            for a in payload.alerts
            if a.status == "firing"
        )
    )


def _labels_key(labels: Mapping[str, str]) -> str:
    return hashlib.sha256(json.dumps(sorted(labels.items())).encode()).hexdigest()[:16]


__all__ = [
    "SERVICE_LABELS",
    "SEVERITY_ORDER",
    "AlertmanagerAlert",
    "AlertmanagerPayload",
    "alert_identity",
    "check_alertmanager_auth",
    "firing_fingerprints",
    "normalize_group",
    "parse_alertmanager",
]
