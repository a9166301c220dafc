"""The Alertmanager notification as a sender writes it: the payload models, read leniently.

Any Alertmanager-compatible body is read (version 4, Grafana's "1", hand-written ones), with
the lenient field types of `enricher.sources.lenient`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from enricher.sources import lenient
from enricher.sources.lenient import Count, StringMap, Text, Timestamp


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
    "AlertmanagerAlert",
    "AlertmanagerPayload",
    "one_alert_body",
]
