"""Field types that take what real senders send and turn it into what we need, or nothing.

A 4xx is final for both senders (Alertmanager drops the notification, PagerDuty disables the
subscription after three), so a field we merely display or fall back on never fails a body:
`null` becomes empty, a number or a boolean where text belongs becomes its text, a
timestamp without a zone is taken as UTC, and one that cannot be read or expressed in UTC
becomes `None` (the caller decides the default). Only the fields a page cannot be made
without are checked strictly, and that happens where they are used, not here.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import BeforeValidator, TypeAdapter, ValidationError

from enricher.alert import in_utc

_DATETIME = TypeAdapter(datetime)


def text(value: Any) -> str:
    """Scalars as text (`true`, `3`, `0.5`); null and anything nested as ""."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return ""


def optional_text(value: Any) -> str | None:
    """`text`, with null and anything nested as None."""
    return text(value) if isinstance(value, str | bool | int | float) else None


def string_map(value: Any) -> dict[str, str]:
    """A label or annotation set: scalar values as text; null or nested values are dropped
    (they are no label value), and anything but an object is an empty set."""
    if not isinstance(value, dict):
        return {}
    return {
        str(key): text(item)
        for key, item in value.items()
        if isinstance(item, str | bool | int | float)
    }


def timestamp(value: Any) -> datetime | None:
    """An instant in UTC, or None when absent, unreadable, Go's zero time (year 1, what
    Alertmanager sends as a firing alert's endsAt) or not expressible in UTC."""
    if value is None or value == "" or isinstance(value, bool | dict | list):
        return None
    try:
        parsed = _DATETIME.validate_python(value)
    except ValidationError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    if parsed.year == 1:
        return None
    try:
        return in_utc(parsed)
    except ValueError:
        return None


def count(value: Any) -> int:
    """A non-negative count; anything else is 0."""
    if isinstance(value, bool):
        return 0
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        return 0
    return max(0, number)


Text = Annotated[str, BeforeValidator(text)]
OptionalText = Annotated[str | None, BeforeValidator(optional_text)]
StringMap = Annotated[dict[str, str], BeforeValidator(string_map)]
Timestamp = Annotated[datetime | None, BeforeValidator(timestamp)]
Count = Annotated[int, BeforeValidator(count)]

__all__ = [
    "Count",
    "OptionalText",
    "StringMap",
    "Text",
    "Timestamp",
    "count",
    "optional_text",
    "string_map",
    "text",
    "timestamp",
]
