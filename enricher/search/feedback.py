"""What on-call's votes do to a ranking, before the decision. Pure.

A "Right runbook" click on a page says: for this alert name, this runbook is the one. That
is what a front-matter `alert_names` entry says, so a runbook whose confirmations outnumber
its "Wrong runbook" votes for the alert's name is decided the same way: by identity (tier
"feedback"), ahead of everything the scores say, with score 1.0 like the other identity
tiers. A runbook whose wrong votes outnumber its confirmations is demoted: it goes to the
end of the ranking with probability 0, so it is neither a match nor the first lead.

Feedback never overrides what the alert or the runbooks themselves say: a ranking decided
by `runbook_url` or by an exact `alert_names` entry (enricher.search.decide.NAMED_TIERS)
comes back unchanged. Every candidate feedback moved carries a note the page shows
("confirmed 3× for this alert"); tallies that cancel out move nothing and say nothing.

Votes are counted per alert name (its `name_key`), not per service: a renamed alert is
the same alert in every namespace it fires in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from enricher.search.decide import NAMED_TIERS, Candidate, Ranking


@dataclass(frozen=True)
class Tally:
    """Votes for one runbook under one alert name (one vote per user per page)."""

    right: int = 0
    wrong: int = 0

    @property
    def net(self) -> int:
        return self.right - self.wrong


#: Doc id -> its tally, for one alert name.
Tallies = Mapping[str, Tally]
NO_FEEDBACK: Tallies = {}


def note(tally: Tally) -> str:
    """What the page says about a runbook feedback moved."""
    if tally.net > 0:
        text = f"confirmed {tally.right}× for this alert"
        return text + (f" (marked wrong {tally.wrong}×)" if tally.wrong else "")
    text = f"marked wrong {tally.wrong}× for this alert"
    return text + (f" (confirmed {tally.right}×)" if tally.right else "")


def rerank(ranking: Ranking, tallies: Tallies) -> Ranking:
    """The ranking with feedback applied (module docstring)."""
    if not tallies or ranking.tier in NAMED_TIERS:
        return ranking
    confirmed: list[tuple[int, Candidate]] = []
    kept: list[Candidate] = []
    demoted: list[Candidate] = []
    for candidate in ranking.candidates:
        tally = tallies.get(candidate.doc_id, Tally())
        if tally.net > 0:
            confirmed.append((tally.net, replace(candidate, score=1.0, feedback=note(tally))))
        elif tally.net < 0:
            demoted.append(replace(candidate, score=0.0, feedback=note(tally)))
        else:
            kept.append(candidate)
    if confirmed:
        best = sorted(confirmed, key=lambda pair: -pair[0])  # stable: fused order on ties
        return replace(ranking, candidates=tuple(c for _, c in best), tier="feedback")
    if not demoted:
        return ranking
    return replace(ranking, candidates=(*kept, *demoted))


__all__ = ["NO_FEEDBACK", "Tallies", "Tally", "note", "rerank"]
