"""Choosing the decision's bar over the fit corpora (quality.transfer), pure."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from enricher.search.confidence import Model
from enricher.search.evidence import FEATURES
from quality.calibrate import Run
from quality.metrics import Outcome
from quality.transfer import Corpus, Fitting, Searches, choose_bar, held_out

#: The model reads `cosine` as the probability itself (mean 0, scale 1, logit inverse).
MODEL = Model(("cosine",), (0.0,), (1.0,), (1.0,), 0.0, lead_floor=0.0)


def _search(case: str, probability: float, right: bool) -> tuple[Outcome, tuple[float, ...]]:
    """A search whose first candidate has `probability` (through MODEL) and is right or not."""
    logit = math.log(probability / (1 - probability))
    features = tuple(logit if f == "cosine" else 0.0 for f in FEATURES)
    outcome = Outcome(
        id=case, kind="renamed", split="dev", expected="a", status="no_match",
        tier="global", docs=("a" if right else "b",), scores=(probability,),
    )
    return outcome, features


def _corpus(name: str, searches: list[tuple[float, bool]]) -> Searches:
    scored = tuple(_search(f"{name}{i}", p, r) for i, (p, r) in enumerate(searches))
    return Searches(Corpus(name, Path(name), Path(name), "dev", "dev"), Run(name, (), scored))


class TestChooseBar:
    @pytest.mark.parametrize(
        ("hard", "bar"),
        [
            # Every corpus clean: the lowest bar matches the most.
            ([(0.95, True)] * 20, 0.1),
            # One corpus's few wrong runbooks at 0.6, among many right pages elsewhere: the
            # pages together hold false matches under 0.05, so its bar does not bind.
            ([(0.95, True)] * 18 + [(0.6, False)] * 2, 0.1),
            # Wrong runbooks at 0.6 make a tenth of all matched pages: the bar goes past them.
            ([(0.95, True)] * 10 + [(0.6, False)] * 10, 0.65),
        ],
    )
    def test_false_matches_over_the_pages_together(
        self, hard: list[tuple[float, bool]], bar: float
    ) -> None:
        """Of the bars that keep false matches within bounds over every fit corpus's pages
        together, the one with the best mean matched-and-right."""
        easy = _corpus("easy", [(0.9, True)] * 80 + [(0.3, True)] * 20)
        assert choose_bar([easy, _corpus("hard", hard)], MODEL) == bar

    def test_balanced_bounds_the_mean_of_the_corpora_false_match_rates(self) -> None:
        """Two wrong runbooks among a small corpus's ten pages are 2 of 110 pages together,
        within bounds; balanced, that corpus's rate of 0.2 counts as much as the other's 0,
        and the bar goes past them."""
        easy = _corpus("easy", [(0.9, True)] * 80 + [(0.3, True)] * 20)
        small = _corpus("small", [(0.95, True)] * 8 + [(0.6, False)] * 2)
        assert choose_bar([easy, small], MODEL) == 0.1
        assert choose_bar([easy, small], MODEL, balanced=True) == 0.65


class TestJudgedOnly:
    def test_a_judged_only_corpus_is_scored_but_never_fitted_on(self) -> None:
        """Its fold is in the table; every other fold is fitted as if it did not exist."""
        easy = _corpus("easy", [(0.9, True)] * 80 + [(0.3, True)] * 20)
        hard = _corpus("hard", [(0.95, True)] * 10 + [(0.6, False)] * 10)
        noisy = _corpus("noisy", [(0.97, False)] * 30 + [(0.2, True)] * 5)
        keep = ["cosine"]
        judged = held_out([easy, hard, noisy], keep, Fitting(judged_only=frozenset({"noisy"})))
        without = held_out([easy, hard], keep)
        assert [name for name, _, _ in judged] == ["easy", "hard", "noisy"]
        assert [bar for _, bar, _ in judged[:2]] == [bar for _, bar, _ in without]
        fitted_with_it = held_out([easy, hard, noisy], keep)
        assert [bar for _, bar, _ in fitted_with_it[:2]] != [bar for _, bar, _ in without]
