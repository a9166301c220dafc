"""What the collector passes between its stages: plain frozen data."""

from __future__ import annotations

from dataclasses import dataclass, field

from enricher.audit.rules import Rule

__all__ = ["Extracted", "Pair"]


@dataclass(frozen=True)
class Pair:
    """One alert rule and its runbook in the corpus being built."""

    rule: Rule
    #: The runbook's path in the corpus (`<service>/<AlertName>.md`, or the page).
    doc: str
    #: On a page with a section per alert, the text of the alert's heading; None: the file.
    heading: str | None
    #: Where the runbook came from: `owner/name:path` (and `#heading` for a section).
    source: str


@dataclass(frozen=True)
class Extracted:
    """One corpus as a project publishes it."""

    #: Corpus path -> markdown, every runbook and page, before any is left out.
    files: dict[str, str]
    pairs: tuple[Pair, ...]
    #: The project's rules that have no runbook anywhere: real near misses.
    orphans: tuple[Rule, ...] = ()
    #: The paths read, per repository (for the manifest).
    paths: dict[str, tuple[str, ...]] = field(default_factory=dict)
