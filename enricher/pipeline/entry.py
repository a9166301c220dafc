"""How a job is stored: the fields of a `rbe:jobs` entry, and the netstring member of
`rbe:delayed` that carries the same fields while a job waits (layout: enricher.pipeline.queue).

Parsed once. The body is parsed and normalized at the HTTP edge; an entry carries the
`Alert`, not the bytes, so a worker never parses again and a 1 MiB body costs its page's
size, not its own. Entries written before that change (format 1: the raw `body` and its
`source`) are still read, by parsing the body the way the edge would: an upgrade with jobs
in flight loses none of them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import get_args

from pydantic import TypeAdapter, ValidationError

from enricher.alert import Alert, Source
from enricher.errors import BadRequest
from enricher.sources import Parsed, parse

_SOURCES: frozenset[str] = frozenset(get_args(Source))
_ALERT = TypeAdapter(Alert)
#: Version of the stream entry layout; 1 had the raw body (read by `_decode_body`).
FORMAT = b"2"

Fields = dict[bytes, bytes]


@dataclass(frozen=True)
class Job:
    """One accepted webhook: its normalized alert and what dedup and the ledger need."""

    id: str
    alert: Alert
    dedup_key: str
    #: Identity of the firing alerts the page shows (`Parsed.fingerprints`).
    fingerprints: tuple[str, ...]
    received_at: float
    attempts: int

    @property
    def source(self) -> Source:
        return self.alert.source

    @property
    def group_key(self) -> str:
        return self.alert.group_key

    @property
    def status(self) -> str:
        return self.alert.status

    @property
    def owes_page(self) -> bool:
        """A firing job the group's page is owed to. An acknowledgement is not: it edits a
        page a trigger owes, or posts one itself when none is owed (a trigger that never
        reached us), so marking its group owed would leave it waiting for itself."""
        return self.status == "firing" and self.alert.acknowledged is None


def encode(job: Job, *, retry_of: str | None = None) -> Fields:
    fields: Fields = {
        b"format": FORMAT,
        b"alert": _ALERT.dump_json(job.alert),
        b"fingerprints": json.dumps(list(job.fingerprints)).encode(),
        b"dedup_key": job.dedup_key.encode(),
        b"received_at": repr(job.received_at).encode(),
        b"prior_attempts": str(job.attempts).encode(),
    }
    if retry_of is not None:
        fields[b"retry_of"] = retry_of.encode()
    return fields


def decode(entry_id: str, fields: Mapping[bytes, bytes], deliveries: int) -> Job | None:
    """The job in a stream entry, or None when the entry is not one we wrote."""
    try:
        if fields.get(b"format") == FORMAT:
            alert = _ALERT.validate_json(fields[b"alert"])
            fingerprints = tuple(str(f) for f in json.loads(fields[b"fingerprints"]))
        else:
            parsed = _decode_body(fields)
            if parsed is None:
                return None
            alert, fingerprints = parsed.alert, parsed.fingerprints
        return Job(
            id=entry_id,
            alert=alert,
            dedup_key=fields[b"dedup_key"].decode(),
            fingerprints=fingerprints,
            received_at=float(fields[b"received_at"]),
            attempts=int(fields[b"prior_attempts"]) + deliveries,
        )
    except (KeyError, ValueError, ValidationError):
        return None


def _decode_body(fields: Mapping[bytes, bytes]) -> Parsed | None:
    """A format-1 entry (raw body, queued before the edge parsed once), parsed as the edge
    would have; None when it makes no page."""
    source = fields[b"source"].decode()
    if source not in _SOURCES:
        return None
    try:
        parsed = parse("alertmanager" if source == "alertmanager" else "pagerduty", fields[b"body"])
    except BadRequest:
        return None
    return parsed if isinstance(parsed, Parsed) else None


def netstrings(fields: Fields) -> bytes:
    return b"".join(b"%d:%s," % (len(part), part) for pair in fields.items() for part in pair)


def from_netstrings(member: bytes) -> Fields:
    parts: list[bytes] = []
    pos = 0
    while pos < len(member):
        colon = member.index(b":", pos)
        size = int(member[pos:colon])
        parts.append(member[colon + 1 : colon + 1 + size])
        pos = colon + size + 2
    return dict(zip(parts[::2], parts[1::2], strict=True))
