"""One notification group reduced to the `Alert` its page is made from, and its keys.

Alertmanager sends one notification per alert group, so one body becomes one `Alert`:
group-level fields where they hold for every alert, one representative alert for the rest,
counts and severity over every alert of the body.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence

from enricher.alert import SERVICE_LABELS, Alert
from enricher.sources.alertmanager.payload import AlertmanagerAlert, AlertmanagerPayload
from enricher.sources.alertmanager.reader import AlertGroup
from enricher.sources.promql import group_metric_names
from enricher.sources.severity import severity_rank

#: Scrape jobs that report on other things: their name is not the service at fault.
_EXPORTER_JOB = re.compile(
    r"(?i)exporter|kube-state-metrics|cadvisor|blackbox|pushgateway|federate"
)
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
            -severity_rank(a.labels.get("severity", "")),
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


def _targets(group: AlertGroup) -> tuple[str, ...]:
    """The first few firing alerts, most severe first, each by the labels that set it apart
    from the group (a one-alert group: by its most telling labels)."""
    payload = group.payload
    firing = [a for a in payload.alerts if a.status == "firing"]
    firing.sort(key=lambda a: -severity_rank(a.labels.get("severity", "")))
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


__all__ = ["SERVICE_LABELS", "alert_identity", "firing_fingerprints", "normalize_group"]
