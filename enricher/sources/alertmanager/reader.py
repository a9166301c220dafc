"""Reading an Alertmanager body as it streams in, in bounded memory.

A group has no size bound, so the body is read in chunks (`GroupReader`): the first
`KEPT_ALERTS` alerts are kept whole, and every alert is counted and tallied (status,
severity, identity), so the page says how many it does not name and the dedup key still
covers them all. A body is refused only when no page can be made from it (not a JSON
object, or no alert with a label in `alerts[]`).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from enricher.errors import MalformedPayload
from enricher.sources.alertmanager.payload import AlertmanagerAlert, AlertmanagerPayload
from enricher.sources.jsonstream import ObjectReader
from enricher.sources.severity import severity_rank

#: Alerts of a group read in full; the rest are counted and tallied only.
KEPT_ALERTS = 50
#: Firing alert identities the ledger compares to tell "new alerts joined" from a repeat.
TRACKED_FIRING = 1000


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
        return max(found, key=severity_rank) if found else None


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


__all__ = ["KEPT_ALERTS", "TRACKED_FIRING", "AlertGroup", "GroupReader", "parse_alertmanager"]
