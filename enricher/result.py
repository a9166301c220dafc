"""The search result contract: what search returns, Slack renders and the CLI prints."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Status = Literal["matched", "no_match", "unavailable"]
Tier = Literal[
    "runbook_url", "alert_name+service", "alert_name", "feedback", "service", "global"
]


@dataclass(frozen=True)
class Section:
    """Another section of a matched runbook, shown beside the best-matching one."""

    #: Heading path, "Mitigation › Scale up".
    section: str
    anchor: str
    text: str


@dataclass(frozen=True)
class Match:
    doc_id: str
    title: str
    section: str
    #: Root label the document came from (Document.source).
    source: str
    #: Path relative to its root: "<service>/<alert_name>.md".
    path: str
    #: Readable confidence in 0..1 (see docs/RETRIEVAL.md for what it is).
    score: float
    stale: bool
    age_days: int
    text: str
    revision: str = ""
    #: Anchor of the matched chunk's heading on its page (the link's target).
    anchor: str = ""
    #: On a page with a section per alert: the anchor of the alert's heading, the section
    #: this runbook is (ingest.units); "" for a runbook that is a whole file.
    unit_anchor: str = ""
    #: Where a person reads the runbook (its git host's blob URL), "" when unknown.
    url: str = ""
    #: The matched section itself says what to do (its heading: Diagnosis, Mitigation...).
    actionable: bool = False
    #: Metrics of the alert's rule that this runbook alone quotes (enricher.search.searcher).
    quoted_metrics: tuple[str, ...] = ()
    #: The runbook's first actionable section (diagnosis, mitigation, steps...) when the best
    #: match is not already one: what on-call needs first. None when there is none. On a page
    #: with a section per alert, only from the alert's own section.
    steps: Section | None = None
    #: Nothing in this runbook (or alert section) says what to do: the page says so.
    no_steps: bool = False
    #: What on-call's votes did to this runbook for this alert ("confirmed 3× for this
    #: alert"), "" when they moved nothing (enricher.search.feedback).
    feedback: str = ""


@dataclass(frozen=True)
class SearchResult:
    status: Status
    tier: Tier | None
    matches: tuple[Match, ...] = field(default_factory=tuple)
    #: With "no_match" only: the closest runbooks, shown to on-call as not confident.
    leads: tuple[Match, ...] = field(default_factory=tuple)
    #: With "no_match" only: the first lead is likely the alert's runbook though below the
    #: bar (enricher.search.decide.likely); it then carries its steps.
    likely: bool = False
    #: Why search was unavailable, for logs and the Slack note; never contains secrets.
    reason: str | None = None
    #: The alert's runbook_url when it named no indexed runbook (the page says so).
    unresolved_url: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "tier": self.tier,
            "matches": [asdict(m) for m in self.matches],
            "leads": [asdict(m) for m in self.leads],
            "likely": self.likely,
        }
