"""Alertmanager webhook: authenticate, read, and reduce one notification group to an `Alert`.

One module per step: `auth` (bearer and basic credentials), `grafana` (Grafana's signed
webhook), `payload` (the models, read leniently), `reader` (the body read as it streams,
the first alerts kept and all tallied), `normalize` (the group's `Alert`, its dedup key and
the firing alerts the page tracks).
"""

from __future__ import annotations

from enricher.sources.alertmanager.auth import check_alertmanager_auth
from enricher.sources.alertmanager.normalize import (
    SERVICE_LABELS,
    alert_identity,
    firing_fingerprints,
    normalize_group,
)
from enricher.sources.alertmanager.payload import (
    FIRING_ENDS_AT,
    AlertmanagerAlert,
    AlertmanagerPayload,
    one_alert_body,
)
from enricher.sources.alertmanager.reader import (
    KEPT_ALERTS,
    AlertGroup,
    GroupReader,
    parse_alertmanager,
)
from enricher.sources.severity import SEVERITY_ORDER, severity_rank

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
