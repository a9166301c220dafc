"""What votes do to a ranking (pure): promote as an alias would, demote, never override."""

from __future__ import annotations

import pytest

from enricher.search.decide import Candidate, Ranking, SearchConfig, decide, leads
from enricher.search.feedback import Tally, note, rerank

CONFIG = SearchConfig(threshold=0.4, global_threshold=0.4, stale_after_days=180)


def ranking(tier: str, *scores: float) -> Ranking:
    """Candidates d0, d1, ... with probabilities `scores`, in that (fused) order."""
    cands = tuple(Candidate({"doc_id": f"d{i}"}, s) for i, s in enumerate(scores))
    return Ranking(cands, tier, lead_floor=0.1)  # type: ignore[arg-type]


def ids(rank: Ranking) -> list[str]:
    return [c.doc_id for c in rank.candidates]


class TestRerank:
    def test_a_confirmed_runbook_is_decided_by_identity(self) -> None:
        """Confirmed more than marked wrong: the match, first, whatever its probability."""
        before = ranking("global", 0.6, 0.2, 0.1)
        after = rerank(before, {"d2": Tally(right=3)})
        assert decide(before, CONFIG)[0].doc_id == "d0"
        assert after.tier == "feedback"
        assert [c.doc_id for c in decide(after, CONFIG)] == ["d2"]
        assert after.candidates[0].feedback == "confirmed 3× for this alert"

    def test_several_confirmed_rank_by_net_votes(self) -> None:
        after = rerank(ranking("service", 0.5, 0.4, 0.3), {"d0": Tally(1), "d2": Tally(4, 1)})
        assert ids(after) == ["d2", "d0"]
        assert after.candidates[0].feedback == "confirmed 4× for this alert (marked wrong 1×)"

    def test_a_runbook_marked_wrong_is_demoted(self) -> None:
        """It goes last with probability 0: the next one becomes the match, or nothing."""
        after = rerank(ranking("global", 0.9, 0.5, 0.3), {"d0": Tally(wrong=2)})
        assert ids(after) == ["d1", "d2", "d0"]
        assert [c.doc_id for c in decide(after, CONFIG)] == ["d1"]
        assert after.candidates[-1].score == 0.0
        assert after.candidates[-1].feedback == "marked wrong 2× for this alert"

    def test_a_demoted_top_no_longer_leads(self) -> None:
        """Demoted to probability 0: the first lead is the next runbook, and the one on-call
        marked wrong is not offered again, even as a lead."""
        after = rerank(ranking("global", 0.3, 0.2), {"d0": Tally(1, 2)})
        assert [c.doc_id for c in leads(after, CONFIG)] == ["d1"]
        assert decide(after, CONFIG) == ()

    def test_cancelling_votes_move_nothing(self) -> None:
        before = ranking("global", 0.5, 0.3)
        assert rerank(before, {"d1": Tally(2, 2)}) is before

    def test_votes_for_runbooks_not_ranked_change_nothing(self) -> None:
        before = ranking("global", 0.5, 0.3)
        assert rerank(before, {"elsewhere": Tally(5)}) is before

    @pytest.mark.parametrize("tier", ["runbook_url", "alert_name", "alert_name+service"])
    def test_never_overrides_what_the_alert_names(self, tier: str) -> None:
        """runbook_url and an exact alert_names entry win over any vote."""
        before = ranking(tier, 1.0, 1.0)
        after = rerank(before, {"d1": Tally(right=9), "d0": Tally(wrong=9)})
        assert after is before
        assert ids(after) == ["d0", "d1"]


@pytest.mark.parametrize(
    ("tally", "text"),
    [
        (Tally(1, 0), "confirmed 1× for this alert"),
        (Tally(0, 3), "marked wrong 3× for this alert"),
        (Tally(1, 3), "marked wrong 3× for this alert (confirmed 1×)"),
    ],
)
def test_note(tally: Tally, text: str) -> None:
    assert note(tally) == text
