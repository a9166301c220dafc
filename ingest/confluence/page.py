"""Plain data for a Confluence page, whichever deployment it came from."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class PageRef:
    """A page as a listing names it: enough to tell whether it changed, without its body."""

    id: str
    space: str
    version: int


@dataclass(frozen=True)
class Page:
    id: str
    space: str
    title: str
    version: int
    #: When this version was saved (UTC).
    when: datetime
    labels: tuple[str, ...]
    #: The body in storage format (XHTML with `ac:` macros).
    storage: str
    #: Where a person reads it; None when the API gave no link.
    url: str | None
