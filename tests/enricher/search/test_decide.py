"""The match decision (pure): bars by tier, identity tiers, leads, sole quoters."""

from __future__ import annotations

import pytest

from enricher.search.decide import (
    Candidate,
    Ranking,
    SearchConfig,
    decide,
    leads,
    likely,
    most_probable_first,
    sole_quoters,
)

CONFIG = SearchConfig(threshold=0.4, global_threshold=0.3, stale_after_days=180, max_leads=2)


def ranking(tier: str, *scores: float, floor: float = 0.1) -> Ranking:
    """Candidates d0, d1, ... with probabilities `scores`, in that (fused) order."""
    cands = tuple(
        Candidate({"doc_id": f"d{i}", "path": f"p{i}.md"}, s) for i, s in enumerate(scores)
    )
    return Ranking(cands, tier, lead_floor=floor)  # type: ignore[arg-type]


class TestDecide:
    @pytest.mark.parametrize(
        ("rank", "chosen"),
        [
            (ranking("service", 0.45, 0.2), ["d0"]),
            (ranking("service", 0.35), []),
            (ranking("global", 0.35), ["d0"]),
            (ranking("global", 0.25), []),
            (ranking("global", 0.9, 0.8, 0.7, 0.6), ["d0", "d1", "d2"]),
            (ranking("global", 0.2, 0.9), ["d1"]),
            (ranking("global"), []),
        ],
    )
    def test_the_bar_of_the_tier(self, rank: Ranking, chosen: list[str]) -> None:
        """SCORE_THRESHOLD in the service tier, GLOBAL_SCORE_THRESHOLD in the global one; at
        most top_k, in fused order, and the order is never changed."""
        assert [c.doc_id for c in decide(rank, CONFIG)] == chosen

    @pytest.mark.parametrize("tier", ["runbook_url", "alert_name", "alert_name+service"])
    def test_identity_tiers_decide_without_a_bar(self, tier: str) -> None:
        """A runbook the alert links or names is the answer whatever its score."""
        assert [c.doc_id for c in decide(ranking(tier, 0.0), CONFIG)] == ["d0"]


class TestLeads:
    def test_leads_in_rank_order_each_above_the_floor(self) -> None:
        """Leads follow the fused order, and a lead under the floor is not named: at a few
        percent it is noise, not a lead."""
        got = leads(ranking("global", 0.2, 0.01, 0.15), CONFIG)
        assert [c.doc_id for c in got] == ["d0"]
        got = leads(ranking("global", 0.2, 0.12, 0.15), CONFIG)
        assert [c.doc_id for c in got] == ["d0", "d1"]

    def test_nothing_when_the_best_is_under_the_floor(self) -> None:
        """An off-topic alert gets no leads rather than random ones."""
        assert leads(ranking("global", 0.05, 0.04), CONFIG) == ()

    def test_leads_can_be_switched_off(self) -> None:
        config = SearchConfig(threshold=0.4, global_threshold=0.3, stale_after_days=1, max_leads=0)
        assert leads(ranking("global", 0.9), config) == ()

    @pytest.mark.parametrize(
        ("rank", "expected"),
        [
            (ranking("global", 0.25, 0.2), True),
            (ranking("global", 0.19, 0.18), False),
            (ranking("global", 0.05, 0.3, floor=0.1), False),
            (ranking("global"), False),
        ],
    )
    def test_a_first_lead_above_the_likely_level_is_likely(
        self, rank: Ranking, expected: bool
    ) -> None:
        """Only the first runbook of the ranking can be "likely", and only from LIKELY up."""
        config = SearchConfig(threshold=0.4, global_threshold=0.4, stale_after_days=1)
        assert likely(rank, config) is expected


class TestSoleQuoters:
    def test_a_metric_in_one_document_vouches_for_it(self) -> None:
        """Chunks of one document count once; a metric in two documents vouches for none."""
        payloads = [
            {"doc_id": "a", "metrics": ["m_one", "m_shared"]},
            {"doc_id": "a", "metrics": ["m_one"]},
            {"doc_id": "b", "metrics": ["m_shared", "m_other"]},
        ]
        assert sole_quoters(["m_one", "m_shared", "m_other"], payloads) == {
            "a": ("m_one",),
            "b": ("m_other",),
        }
        assert sole_quoters(["m_shared"], payloads) == {}
        assert sole_quoters(["m_missing"], payloads) == {}


class TestMostProbableFirst:
    def test_highest_first_ties_in_given_order(self) -> None:
        """The page's order of the scored candidates: by probability, highest first, a tie
        keeping the fused order it was given in; indices not given stay out."""
        probability = [0.2, 0.7, 0.2, 0.9, 0.7]
        assert most_probable_first([0, 1, 2, 3, 4], probability) == [3, 1, 4, 0, 2]
        assert most_probable_first([4, 2, 1], probability) == [4, 1, 2]
