"""Hostile webhook bodies: edits of recorded bodies for table-driven tests, and the hypothesis
strategies the fuzz suite draws from (tests/reliability/test_fuzz.py derandomized,
`make fuzz` at random against the real service: scripts/fuzz).

`json.dumps` cannot write much of what a hostile sender can (a 5,000-digit integer, a key
given twice, bytes that are not UTF-8, nesting past Python's recursion limit), so bodies are
written by `to_json`, which takes three markers besides plain values: `Raw`, `Repeated`
and `Undecodable`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from hypothesis import strategies as st

from tests.helpers import am_alert, am_body, pd_body

#: Pass as the value to delete the key instead of setting it.
DELETE = object()
_SLOT = "\x00raw-json-slot\x00"


def edited(body: Any, path: tuple[str | int, ...], value: Any) -> bytes:
    """`body` (already a fresh copy) with the value at `path` replaced or deleted, as JSON."""
    target = body
    for key in path[:-1]:
        target = target[key]
    if value is DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return json.dumps(body).encode()


def spliced(body: Any, path: tuple[str | int, ...], literal: str) -> bytes:
    """`edited`, with the value at `path` written as the raw JSON text `literal`: what
    `json.dumps` will not write (a 5,000-digit integer, `NaN`, `"\\ud800"`, a repeated key)."""
    slot = json.dumps(_SLOT)
    return edited(body, path, _SLOT).replace(slot.encode(), literal.encode())


# --- JSON that json.dumps will not write -------------------------------------------------------


@dataclass(frozen=True)
class Raw:
    """JSON text written as it is: `9999…` (5,000 digits), `[[[…]]]` 5,000 deep, `1e400`."""

    text: str


@dataclass(frozen=True)
class Repeated:
    """A dict value that writes its key once per value, in order (JSON keeps the last)."""

    values: tuple[Any, ...]


@dataclass(frozen=True)
class Undecodable:
    """A JSON string of bytes that are not UTF-8 (a Latin-1 `é`, a cut-off sequence)."""

    data: bytes


def to_json(value: Any, *, ensure_ascii: bool = True) -> bytes:
    """`value` as JSON bytes, markers included. Lone surrogates are escaped (`\\ud800`) with
    `ensure_ascii`, else written as the three bytes UTF-8 forbids for them."""
    out: list[bytes] = []
    _write(value, ensure_ascii, out)
    return b"".join(out)


def _write(value: Any, ensure_ascii: bool, out: list[bytes]) -> None:
    if isinstance(value, Raw):
        out.append(value.text.encode())
    elif isinstance(value, Undecodable):
        out.append(b'"' + value.data + b'"')
    elif isinstance(value, dict):
        entries = [(k, v) for k, item in value.items()
                   for v in (item.values if isinstance(item, Repeated) else (item,))]
        out.append(b"{")
        for index, (key, item) in enumerate(entries):
            out.append(b", " if index else b"")
            out.append(_scalar(key, ensure_ascii) + b": ")
            _write(item, ensure_ascii, out)
        out.append(b"}")
    elif isinstance(value, list | tuple):
        out.append(b"[")
        for index, item in enumerate(value):
            out.append(b", " if index else b"")
            _write(item, ensure_ascii, out)
        out.append(b"]")
    else:
        out.append(_scalar(value, ensure_ascii))


def _scalar(value: Any, ensure_ascii: bool) -> bytes:
    return json.dumps(value, ensure_ascii=ensure_ascii).encode("utf-8", "surrogatepass")


# --- hostile values ----------------------------------------------------------------------------

#: Text of any code point, lone surrogates included.
any_text = st.text(st.characters(exclude_categories=()), max_size=60)
surrogates = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
#: Text that surely holds a lone surrogate (any_text seldom does).
surrogate_text = st.builds("{}{}{}".format, any_text, surrogates, any_text)
huge_text = st.builds(lambda c, n: c * n, st.sampled_from("xé🔥\u202e<&"), st.integers(1, 20_000))
#: Long runs of `a.a.a…` or `-a-a…`: what made a redaction pattern quadratic (issue 18).
long_runs = st.builds(lambda unit, n: unit * n,
                      st.sampled_from(["a.", "-a", ".a", "a-", "a.b-", "1.", "a_", "a.-"]),
                      st.integers(100, 20_000))
#: Integer literals past Python's 4,300-digit conversion limit, and floats past float's range.
huge_numbers = st.one_of(
    st.builds(lambda sign, n: Raw(sign + "9" * n), st.sampled_from(["", "-"]),
              st.integers(4_290, 12_000)),
    st.sampled_from([Raw("1e400"), Raw("-1e999"), Raw("1" * 400 + ".5e309")]),
)
non_finite = st.sampled_from([Raw("NaN"), Raw("Infinity"), Raw("-Infinity")]) | st.floats()
undecodable = st.builds(
    lambda parts: Undecodable(b"".join(parts)),
    st.lists(st.sampled_from([b"a", b"\xe9", b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80",
                              b"\xf0\x9f", b"caf\xe9"]), min_size=1, max_size=8),
)
#: Arrays or objects nested up to 5,000 deep (past the decoder's limit of about 900).
deep = st.builds(lambda depth, pair: Raw(pair[0] * depth + "1" + pair[1] * depth),
                 st.integers(1, 5_000), st.sampled_from([("[", "]"), ('{"a": ', "}")]))
#: What breaks a parser or a later stage, in any place a value can go.
hostile = st.one_of(huge_numbers, non_finite, surrogate_text, undecodable, deep, long_runs)
scalars = (
    st.none() | st.booleans() | st.integers() | st.floats() | any_text | huge_text
    | st.integers(-(10**400), 10**400) | hostile
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(any_text, inner, max_size=5),
    max_leaves=25,
)
#: Text-ish values for places that want text: hostile text, numbers, lists instead.
texts = st.one_of(any_text, surrogate_text, huge_text, long_runs, undecodable, huge_numbers,
                  st.floats(), st.lists(any_text, max_size=3))
# The calendar's edges with offsets (year 1 and 9999 leave the datetime range in UTC).
edge_times = st.sampled_from([
    "0001-01-01T00:00:00Z", "0001-01-01T00:00:00+01:00", "0001-01-01T00:30:00+23:59",
    "9999-12-31T23:59:59-01:00", "9999-12-31T23:59:59.999999Z", "2026-02-30T00:00:00Z",
    "2026-11-28T03:00:00", "1970-01-01T00:00:00+00:00", "2026-11-28T03:00:00.1234567891Z",
])
offsets = st.builds(lambda minutes: timezone(timedelta(minutes=minutes)), st.integers(-1439, 1439))
aware_times = st.datetimes(timezones=st.none() | offsets).map(datetime.isoformat)
times = st.one_of(edge_times, edge_times, aware_times, any_text)


def any_of(*specific: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A field's own hostile values, the general ones, and any JSON (lists for objects)."""
    return st.one_of(*specific, hostile, json_values, st.lists(json_values, max_size=3))


def text_map(keys: list[str]) -> st.SearchStrategy[Any]:
    """A label or annotation set: known keys or any, hostile text or any value."""
    return st.dictionaries(st.sampled_from(keys) | any_text | surrogate_text,
                           texts | any_of(), max_size=6)


AM_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "version": any_of(st.sampled_from(["3", "5", 4, "", "4 "])),
    "groupKey": any_of(texts),
    "truncatedAlerts": any_of(st.integers(-(10**30), 10**30)),
    "status": any_of(st.sampled_from(["resolved", "pending", "FIRING"])),
    "receiver": any_of(texts),
    "groupLabels": any_of(text_map(["alertname", "service"])),
    "commonLabels": any_of(text_map(["alertname", "service", "severity", "job"])),
    "commonAnnotations": any_of(text_map(["summary", "description", "runbook_url"])),
    "externalURL": any_of(texts),
    "alerts": any_of(st.just([]), st.lists(st.lists(json_values, max_size=3), max_size=3)),
}
ALERT_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "status": any_of(st.sampled_from(["resolved", "FIRING", ""])),
    "labels": any_of(text_map(["alertname", "service", "severity", "instance"])),
    "annotations": any_of(text_map(["summary", "description", "runbook_url"])),
    "startsAt": times | any_of(),
    "endsAt": times | any_of(),
    "generatorURL": any_of(texts, long_runs.map("http://p/graph?g0.expr={}".format)),
    "fingerprint": any_of(texts),
}
INCIDENT_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "id": any_of(texts),
    "type": any_of(st.sampled_from(["incident_note", "service", ""])),
    "title": any_of(texts, st.builds("[FIRING:1] {} {} ({})".format,
                                     any_text | surrogate_text | long_runs, any_text, any_text)),
    "service": any_of(st.fixed_dictionaries({"summary": texts})),
    "urgency": any_of(texts),
    "priority": any_of(st.fixed_dictionaries({"summary": texts})),
    "incident_key": any_of(texts),
    "html_url": any_of(texts),
    "number": any_of(st.integers(-(10**30), 10**30)),
    "status": any_of(texts),
    "created_at": times | any_of(),
    "content": any_of(texts),
    "incident": any_of(st.fixed_dictionaries({"id": texts, "summary": texts})),
}
EVENT_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "id": any_of(texts),
    "event_type": any_of(texts, st.sampled_from([
        "incident.triggered", "incident.resolved", "incident.annotated", "incident.reopened",
        "incident.acknowledged", "service.updated"])),
    "resource_type": any_of(st.sampled_from(["incident", "service", ""])),
    "occurred_at": times | any_of(),
    "agent": any_of(st.fixed_dictionaries({"id": texts, "summary": texts})),
    "client": any_of(st.dictionaries(any_text, texts)),
    "data": json_values,
}


def mutate(
    draw: st.DrawFn, target: dict[str, Any], fields: dict[str, st.SearchStrategy[Any]]
) -> None:
    """Replace one field with a hostile value, drop it, or give its key twice (the
    original value first or last)."""
    key = draw(st.sampled_from(sorted(fields)))
    how = draw(st.integers(0, 7))
    if how == 0:
        target.pop(key, None)
    elif how == 1 and key in target:
        old = target[key]
        values = (*(old.values if isinstance(old, Repeated) else (old,)), draw(fields[key]))
        target[key] = Repeated(values if draw(st.booleans()) else values[::-1])
    else:
        target[key] = draw(fields[key])


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [a for a in value if isinstance(a, dict)] if isinstance(value, list) else []


@st.composite
def alertmanager_bodies(draw: st.DrawFn) -> Any:
    """A valid body with up to four fields, of the group or of one alert, made hostile."""
    fingerprints = draw(st.lists(any_text, min_size=1, max_size=3, unique=True))
    body = am_body(*(am_alert("PostgresReplicationLag", "postgres", fingerprint=fp)
                     for fp in fingerprints))
    body["groupKey"] = draw(any_text)
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.integers(0, 2)) == 0:
            mutate(draw, body, AM_FIELDS)
        elif alerts := _dicts(body.get("alerts")):
            mutate(draw, draw(st.sampled_from(alerts)), ALERT_FIELDS)
    return body


@st.composite
def pagerduty_bodies(draw: st.DrawFn) -> Any:
    """A valid incident event with up to four fields, of the event or its data, made hostile."""
    event_type = draw(st.sampled_from(["incident.triggered", "incident.resolved",
                                       "incident.annotated", "incident.reopened"]))
    body = pd_body("[FIRING:1] KafkaConsumerLagHigh kafka (critical)", "kafka",
                   event_type=event_type, incident=draw(any_text), event_id=draw(any_text))
    event = body["event"]
    if event_type == "incident.annotated":
        event["data"] = {"type": "incident_note", "content": "a note",
                         "incident": {"id": event["data"]["id"], "summary": "title"}}
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            mutate(draw, event, EVENT_FIELDS)
        elif isinstance(event.get("data"), dict):
            mutate(draw, event["data"], INCIDENT_FIELDS)
    return body


def _nested(depth: int, opener: bytes, closer: bytes) -> bytes:
    return opener * depth + closer * depth


def bodies(shapes: st.SearchStrategy[Any], *, cap: int) -> st.SearchStrategy[bytes]:
    """Half near-valid bodies (they get past the parser), half junk of every kind, up to
    about `cap` bytes (the service's MAX_BODY_BYTES)."""
    near_valid = st.builds(lambda v, a: to_json(v, ensure_ascii=a), shapes, st.booleans())
    return st.one_of(
        near_valid, near_valid, near_valid, near_valid,
        st.builds(lambda v, a: to_json(v, ensure_ascii=a), json_values, st.booleans()),
        st.binary(max_size=2048),
        st.builds(_nested, st.integers(1, cap // 12), st.sampled_from([b"[", b'{"a":']),
                  st.sampled_from([b"]", b"}"])),
        st.builds(lambda b, cut: b[:cut], near_valid, st.integers(0, 400)),
    )
