"""Alertmanager webhook: authenticate, read, and reduce one notification group to an `Alert`.

Alertmanager sends one notification per alert group, so one body becomes one `Alert`. Any
Alertmanager-compatible body is read (version 4, Grafana's "1", hand-written ones), with the
lenient field types of `enricher.sources.lenient`: a body is refused only when no page can
be made from it (not a JSON object, or no alert with a label in `alerts[]`).

A group has no size bound, so the body is read as it streams in (`GroupReader`): the first
`KEPT_ALERTS` alerts are kept whole, and every alert is counted and tallied (status,
severity, identity), so the page says how many it does not name and the dedup key still
covers them all.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from enricher.alert import Alert
from enricher.errors import Forbidden, MalformedPayload, Unauthorized
from enricher.sources import lenient
from enricher.sources.jsonstream import ObjectReader
from enricher.sources.lenient import Count, StringMap, Text, Timestamp
from enricher.sources.promql import group_metric_names

#: Highest first. Values outside this list still count, below "info".
SEVERITY_ORDER = ("critical", "page", "error", "warning", "info")
#: Label names that name the service, most specific first. `job` comes last and only when
#: it is not an exporter's scrape job (see `_service`).
SERVICE_LABELS = ("service", "app", "app_kubernetes_io_name")
#: Scrape jobs that report on other things: their name is not the service at fault.
_EXPORTER_JOB = re.compile(
    r"(?i)exporter|kube-state-metrics|cadvisor|blackbox|pushgateway|federate"
)
#: Alerts of a group read in full; the rest are counted and tallied only.
KEPT_ALERTS = 50
#: Firing alert identities the ledger compares to tell "new alerts joined" from a repeat.
TRACKED_FIRING = 1000
#: Alerts named on the page as "firing now".
TARGETS_SHOWN = 5
#: Labels that tell alerts of one group apart, in the order they are worth reading.
TARGET_LABELS = (
    "namespace",
    "service",
    "pod",
    "instance",
    "container",
    "deployment",
    "job",
    "node",
    "device",
    "mountpoint",
)


def _status(value: Any) -> Literal["firing", "resolved"] | None:
    word = lenient.text(value).strip().lower()
    return "firing" if word == "firing" else "resolved" if word == "resolved" else None


class _Model(BaseModel):
    model_config = ConfigDict(
        frozen=True, extra="ignore", validate_by_name=True, validate_by_alias=True
    )


class AlertmanagerAlert(_Model):
    status: Literal["firing", "resolved"]
    labels: StringMap = Field(default_factory=dict)
    annotations: StringMap = Field(default_factory=dict)
    #: None when the sender gave none (or one that cannot be read): the page then shows
    #: the time the body was received.
    starts_at: Timestamp = Field(default=None, alias="startsAt")
    ends_at: Timestamp = Field(default=None, alias="endsAt")
    generator_url: Text = Field(default="", alias="generatorURL")
    fingerprint: Text = ""

    @model_validator(mode="before")
    @classmethod
    def _status_from_ends_at(cls, data: Any) -> Any:
        """A missing or unknown status is read from endsAt: resolved once it has passed."""
        if isinstance(data, dict) and data.get("status") not in ("firing", "resolved"):
            status = _status(data.get("status"))
            if status is None:
                ends = lenient.timestamp(data.get("endsAt"))
                status = "resolved" if ends is not None and ends <= datetime.now(UTC) else "firing"
            return {**data, "status": status}
        return data

    def identity(self) -> str:
        """`fingerprint@startsAt`: the alert across notifications (labels stand in for a
        missing fingerprint; a missing startsAt is left out rather than defaulted, so a
        re-send is still the same alert)."""
        starts = self.starts_at.isoformat() if self.starts_at else ""
        return f"{self.fingerprint or _labels_key(self.labels)}@{starts}"


class AlertmanagerPayload(_Model):
    version: Text = ""
    group_key: Text = Field(default="", alias="groupKey")
    truncated_alerts: Count = Field(default=0, alias="truncatedAlerts")
    status: Literal["firing", "resolved"] | None = None
    receiver: Text = ""
    group_labels: StringMap = Field(default_factory=dict, alias="groupLabels")
    common_labels: StringMap = Field(default_factory=dict, alias="commonLabels")
    common_annotations: StringMap = Field(default_factory=dict, alias="commonAnnotations")
    external_url: Text = Field(default="", alias="externalURL")
    #: The alerts read in full (at most KEPT_ALERTS); `AlertGroup` tallies all of them.
    alerts: tuple[AlertmanagerAlert, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _known_status_only(cls, data: Any) -> Any:
        if isinstance(data, dict) and "status" in data:
            return {**data, "status": _status(data["status"])}
        return data


@dataclass(frozen=True)
class AlertGroup:
    """One notification as read: its group fields with the first alerts, and a tally of all."""

    payload: AlertmanagerPayload
    firing: int
    resolved: int
    #: Elements of `alerts[]` that were no alert (not an object, or without labels).
    skipped: int
    #: Highest severity among the firing alerts (all alerts when none fires).
    top_severity: str | None
    #: Order-independent digest over every alert's `identity():status`.
    digest: str
    #: Sorted identities of the firing alerts: the TRACKED_FIRING smallest, then a
    #: `#<count>:<digest>` element standing for all of them when there are more.
    firing_ids: tuple[str, ...]
    received_at: datetime

    @property
    def alerts(self) -> tuple[AlertmanagerAlert, ...]:
        return self.payload.alerts

    @property
    def total(self) -> int:
        return self.firing + self.resolved

    @property
    def omitted(self) -> int:
        return self.total - len(self.payload.alerts)


@dataclass
class _Tally:
    firing: int = 0
    resolved: int = 0
    skipped: int = 0
    digest: int = 0
    firing_digest: int = 0
    severities: dict[str, Counter[str]] = field(
        default_factory=lambda: {"firing": Counter(), "resolved": Counter()}
    )
    firing_ids: list[str] = field(default_factory=list)

    def add(self, alert: AlertmanagerAlert) -> None:
        identity = alert.identity()
        self.digest = (self.digest + _item_hash(f"{identity}:{alert.status}")) % _MOD
        if severity := alert.labels.get("severity", "").strip():
            self.severities[alert.status][severity] += 1
        if alert.status == "resolved":
            self.resolved += 1
            return
        self.firing += 1
        self.firing_digest = (self.firing_digest + _item_hash(identity)) % _MOD
        self.firing_ids.append(identity)
        if len(self.firing_ids) > 2 * TRACKED_FIRING:  # keep the smallest: order-independent
            self.firing_ids = sorted(self.firing_ids)[:TRACKED_FIRING]

    def tracked(self) -> tuple[str, ...]:
        ids = sorted(self.firing_ids)
        if len(ids) <= TRACKED_FIRING:
            return tuple(ids)
        return (*ids[:TRACKED_FIRING], f"#{self.firing}:{self.firing_digest:064x}")

    def top_severity(self) -> str | None:
        found = self.severities["firing"] or self.severities["resolved"]
        return max(found, key=_severity_rank) if found else None


_MOD = 2**256


def _item_hash(item: str) -> int:
    return int.from_bytes(hashlib.sha256(item.encode()).digest(), "big")


class GroupReader:
    """Reads an Alertmanager body in chunks (`feed`, then `close`), in bounded memory."""

    def __init__(self, *, max_value_chars: int) -> None:
        self._tally = _Tally()
        self._kept: list[AlertmanagerAlert] = []
        self._reader = ObjectReader(
            "alerts", self._element, on_array=self._restart, max_value_chars=max_value_chars
        )
        self._received_at = datetime.now(UTC)

    def feed(self, chunk: bytes) -> None:
        self._reader.feed(chunk)

    def _restart(self) -> None:
        """An `alerts` array starts: a second one replaces the first (the last key wins)."""
        self._tally = _Tally()
        self._kept = []

    def _element(self, element: Any) -> None:
        try:
            alert = AlertmanagerAlert.model_validate(element)
        except ValidationError:
            alert = None
        if alert is None or not alert.labels:
            self._tally.skipped += 1
            return
        self._tally.add(alert)
        if len(self._kept) < KEPT_ALERTS:
            self._kept.append(alert)

    def close(self) -> AlertGroup:
        fields = self._reader.close()
        if not self._kept:
            raise MalformedPayload(
                "alerts: no alert with labels, so there is nothing to page about"
            )
        try:
            payload = AlertmanagerPayload.model_validate({**fields, "alerts": self._kept})
        except ValidationError as exc:  # not expected: every field is lenient
            raise MalformedPayload.from_validation_error(exc) from None
        tally = self._tally
        return AlertGroup(
            payload=payload,
            firing=tally.firing,
            resolved=tally.resolved,
            skipped=tally.skipped,
            top_severity=tally.top_severity(),
            digest=f"{tally.digest:064x}",
            firing_ids=tally.tracked(),
            received_at=self._received_at,
        )


def parse_alertmanager(body: bytes, *, max_value_chars: int = 1 << 20) -> AlertGroup:
    """Read a whole body at once (CLIs, the queue's old entries, tests)."""
    reader = GroupReader(max_value_chars=max_value_chars)
    reader.feed(body)
    return reader.close()


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


def _service(*sources: Mapping[str, str]) -> str | None:
    """The service label, else `job` when it names the service itself: an exporter's job
    (`kube-state-metrics`, `node-exporter`) reports on other things, and taking it for the
    service would file every alert it carries under one service."""
    if service := _first(SERVICE_LABELS, *sources):
        return service
    job = _first(("job",), *sources)
    return job if job and not _EXPORTER_JOB.search(job) else None


def _representative(payload: AlertmanagerPayload, alert_name: str) -> AlertmanagerAlert:
    """The alert that speaks for the group where group-level fields say nothing.

    The first alert carrying the group's alert name, firing ones before resolved ones (a
    group can hold both), the most severe first: when a critical joins a group of warnings,
    the page's summary is the critical's. Every per-alert fallback reads this one alert.
    """
    return min(
        payload.alerts,
        key=lambda a: (
            a.labels.get("alertname", "").strip() != alert_name,
            a.status != "firing",
            -_severity_rank(a.labels.get("severity", "")),
        ),
    )


def _alert_name(payload: AlertmanagerPayload) -> str:
    """The group's alert name (groupLabels), else the one most of its alerts carry, else
    commonLabels': the page names what the alerts carry, even when a sender's
    commonLabels disagree with them."""
    if name := _first(("alertname",), payload.group_labels):
        return name
    # Counter keeps insertion order and most_common() is stable, so ties go to the first seen.
    names = Counter(n for a in payload.alerts if (n := a.labels.get("alertname", "").strip()))
    if names:
        return names.most_common(1)[0][0]
    return _first(("alertname",), payload.common_labels) or "unknown"


def _severity_rank(severity: str) -> int:
    word = severity.strip().lower()
    return len(SEVERITY_ORDER) - SEVERITY_ORDER.index(word) if word in SEVERITY_ORDER else 0


def _targets(group: AlertGroup) -> tuple[str, ...]:
    """The first few firing alerts, most severe first, each by the labels that set it apart
    from the group (a one-alert group: by its most telling labels)."""
    payload = group.payload
    firing = [a for a in payload.alerts if a.status == "firing"]
    firing.sort(key=lambda a: -_severity_rank(a.labels.get("severity", "")))
    common = payload.common_labels if len(payload.alerts) > 1 else {}
    mixed_severity = "severity" not in payload.common_labels and len(payload.alerts) > 1
    targets: list[str] = []
    for alert in firing[:TARGETS_SHOWN]:
        labels = alert.labels
        keys = [k for k in TARGET_LABELS if labels.get(k) and common.get(k) != labels[k]]
        if not keys:
            keys = [
                k
                for k in sorted(labels)
                if k not in ("alertname", "severity") and common.get(k) != labels[k]
            ]
        text = " ".join(f"{k}={labels[k]}" for k in keys[:3]) or labels.get("alertname", "")
        severity = labels.get("severity", "").strip()
        targets.append(f"{text} ({severity})" if mixed_severity and severity else text)
    return tuple(targets)


def _group_key(payload: AlertmanagerPayload, alert_name: str) -> str:
    """The sender's groupKey; a body without one is keyed by receiver and group labels."""
    if payload.group_key:
        return payload.group_key
    labels = payload.group_labels or {"alertname": alert_name}
    return "derived:" + json.dumps([payload.receiver, sorted(labels.items())])


def normalize_group(group: AlertGroup) -> Alert:
    """One `Alert` for the whole notification group.

    Group-level fields (commonLabels, commonAnnotations) win because they hold for every
    alert in the group; the representative alert fills what they lack. Note that
    commonAnnotations drops any key whose value differs between alerts. Counts and the
    severity cover every alert of the body, also those not read in full.
    """
    payload = group.payload
    alert_name = _alert_name(payload)
    rep = _representative(payload, alert_name)
    common, annotations = payload.common_annotations, rep.annotations
    firing = payload.status == "firing" or group.firing > 0
    labels = dict(payload.common_labels or rep.labels)
    if "alertname" in labels:
        labels["alertname"] = alert_name
    starts = [a.starts_at for a in payload.alerts if a.starts_at is not None]
    ends = [a.ends_at for a in payload.alerts if a.status == "resolved" and a.ends_at]
    return Alert(
        source="alertmanager",
        status="firing" if firing else "resolved",
        alert_name=alert_name,
        service=_service(payload.common_labels, rep.labels),
        severity=_first(("severity",), payload.common_labels) or group.top_severity,
        summary=_first(("summary", "message"), common, annotations) or "",
        description=_first(("description",), common, annotations) or "",
        labels=labels,
        runbook_url=_first(("runbook_url", "runbook"), common, annotations),
        group_key=_group_key(payload, alert_name),
        alert_count=group.total + payload.truncated_alerts,
        truncated=payload.truncated_alerts,
        omitted=group.omitted,
        firing_count=group.firing,
        targets=_targets(group),
        starts_at=min(starts) if starts else group.received_at,
        ends_at=max(ends) if ends and not firing else None,
        link=rep.generator_url or payload.external_url or None,
        metrics=group_metric_names(a.generator_url for a in (rep, *payload.alerts)),
        event_type=None,
    )


def alert_identity(group: AlertGroup) -> str:
    """Idempotency key of one notification: the same key means the same news.

    sha256 (hex) over the group key, the group status, `truncatedAlerts` and the digest of
    every alert's `fingerprint@startsAt:status` (a sum of their hashes, so it is
    order-independent and needs no list of them). HA peers and Alertmanager's own resends
    of a body produce the same key; a change the page should show (an alert joins,
    resolves, or re-fires with a new startsAt) produces a new one. Per-alert status is in
    the key because a partial resolve leaves the group status at "firing".
    """
    payload = group.payload
    status = payload.status or ("firing" if group.firing else "resolved")
    material = [_group_key(payload, _alert_name(payload)), status, payload.truncated_alerts]
    return hashlib.sha256(json.dumps([*material, group.digest]).encode()).hexdigest()


def firing_fingerprints(group: AlertGroup) -> tuple[str, ...]:
    """The firing alerts the page shows, as sorted `fingerprint@startsAt`: when the set
    changes, the posted message is updated (and watchers told when alerts joined)."""
    return group.firing_ids


def severity_rank(severity: str | None) -> int:
    """How severe, higher is worse; 0 for no severity or one outside SEVERITY_ORDER."""
    return _severity_rank(severity or "")


def _labels_key(labels: Mapping[str, str]) -> str:
    return hashlib.sha256(json.dumps(sorted(labels.items())).encode()).hexdigest()[:16]


#: The `endsAt` of a firing alert.
FIRING_ENDS_AT = "0001-01-01T00:00:00Z"


def one_alert_body(
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
    *,
    group_key: str,
    receiver: str,
    starts_at: str,
    generator_url: str,
    fingerprint: str,
) -> dict[str, Any]:
    """A v4 notification of one firing alert (`labels` with its `alertname`): how tools put
    something that is not an Alertmanager page through this parser (the feedback export,
    the runbook audit)."""
    return {
        "version": "4",
        "groupKey": group_key,
        "truncatedAlerts": 0,
        "status": "firing",
        "receiver": receiver,
        "groupLabels": {"alertname": labels.get("alertname", "")},
        "commonLabels": dict(labels),
        "commonAnnotations": dict(annotations),
        "externalURL": "",
        "alerts": [
            {
                "status": "firing",
                "labels": dict(labels),
                "annotations": dict(annotations),
                "startsAt": starts_at,
                "endsAt": FIRING_ENDS_AT,
                # The rule's metrics are read from here (enricher.sources.promql).
                "generatorURL": generator_url,
                "fingerprint": fingerprint,
            }
        ],
    }


__all__ = [
    "FIRING_ENDS_AT",
    "KEPT_ALERTS",
    "SERVICE_LABELS",
    "SEVERITY_ORDER",
    "AlertGroup",
    "AlertmanagerAlert",
    "AlertmanagerPayload",
    "GroupReader",
    "alert_identity",
    "check_alertmanager_auth",
    "firing_fingerprints",
    "normalize_group",
    "one_alert_body",
    "parse_alertmanager",
    "severity_rank",
]
