"""Editing recorded webhook bodies for table-driven tests of bad input."""

from __future__ import annotations

import json
from typing import Any

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
