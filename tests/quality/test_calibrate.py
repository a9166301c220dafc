"""Fitting the confidence model and suggesting its bars (on the small fixture corpus)."""

from __future__ import annotations

from pathlib import Path

import pytest

from enricher.index.embedding import Embedder
from enricher.search.confidence import Model
from enricher.search.evidence import FEATURES
from enricher.settings import Settings
from quality import calibrate
from quality.calibrate import Example, at_bar, collect, fit, neutral_model, suggest
from quality.cases import load_cases
from tests.conftest import MODELS_DIR

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "eval"


def example(right: bool, **values: float) -> Example:
    return Example("c", tuple(values.get(f, 0.0) for f in FEATURES), right)


class TestFit:
    EXAMPLES = (
        example(True, cosine=0.8, content_coverage=0.9),
        example(True, cosine=0.7, content_coverage=0.8),
        example(True, cosine=0.75, content_coverage=0.6),
        example(False, cosine=0.6, content_coverage=0.2),
        example(False, cosine=0.5, content_coverage=0.3),
        example(False, cosine=0.65, content_coverage=0.1),
    )

    def test_separable_examples_are_separated(self) -> None:
        model = fit(self.EXAMPLES, {"fitted_on": ["test"]})
        scores = [model.probability(dict(zip(FEATURES, e.features, strict=True)))
                  for e in self.EXAMPLES]
        assert min(scores[:3]) > max(scores[3:])
        assert model.provenance == {"fitted_on": ["test"]}
        assert 0 < model.lead_floor <= min(scores[:3]) + 1e-4  # stored to four places

    def test_the_known_floor_leaves_room_below_every_right_example(self) -> None:
        """Half the lowest known share a right top candidate had in the fit set."""
        known = [0.6, 0.3, 0.9, 0.05, 0.8, 0.02]
        examples = [
            example(e.right, cosine=e.features[FEATURES.index("cosine")], known_share=k)
            for e, k in zip(self.EXAMPLES, known, strict=True)
        ]
        assert fit(examples, {}).known_floor == pytest.approx(0.15)

    def test_weights_never_go_below_zero(self) -> None:
        """A feature that only hurts on the fit set gets weight 0, not a negative one."""
        odd = [*self.EXAMPLES,
               *(example(False, cosine=0.9, name_coverage=1.0) for _ in range(3))]
        model = fit(odd, {})
        assert all(w >= 0 for w in model.weights)
        assert dict(zip(model.features, model.weights, strict=True))["name_coverage"] == 0

    def test_balanced_gives_each_corpus_the_same_say(self) -> None:
        """90 right examples of one corpus and 10 wrong of another, alike in every feature:
        pooled, the fit says 0.9; balanced, each corpus weighs half and it says 0.5."""
        big = [Example("big", (0.0,) * len(FEATURES), True)] * 90
        small = [Example("small", (0.0,) * len(FEATURES), False)] * 10
        at = dict.fromkeys(FEATURES, 0.0)
        assert fit([*big, *small], {}).probability(at) == pytest.approx(0.9, abs=0.01)
        assert fit([*big, *small], {}, balanced=True).probability(at) == pytest.approx(
            0.5, abs=0.01
        )

    def test_dropped_features_are_left_out(self) -> None:
        model = fit(self.EXAMPLES, {}, drop=["cosine"])
        assert "cosine" not in model.features and len(model.features) == len(FEATURES) - 1

    def test_the_neutral_model_scores_everything_one_half(self) -> None:
        assert neutral_model().probability({"cosine": 0.9}) == pytest.approx(0.5)


@pytest.fixture(scope="module")
def run(embedder: Embedder) -> calibrate.Run:
    cases, errors = load_cases(FIXTURES / "cases.jsonl")
    assert errors == []
    settings = Settings(models_dir=MODELS_DIR, redis_url="redis://127.0.0.1:1/0")
    return collect(FIXTURES / "runbooks", cases, settings, neutral_model())


class TestCollectAndSuggest:
    def test_each_case_and_its_left_out_twin_is_scored(self, run: calibrate.Run) -> None:
        """Cases decided by identity (exact names) give no example; the others and every
        left-out twin do, a left-out twin always as wrong."""
        left = [o for o, _ in run.scored if o.left_out]
        assert len(left) == 5  # every case that expects a runbook
        assert run.examples and not all(e.right for e in run.examples)
        assert all(f is None for o, f in run.scored if o.tier == "alert_name+service")

    def test_bars_trade_recall_for_no_match(self, run: calibrate.Run) -> None:
        """A bar of 0 matches every decided case; a bar above 1 matches none of them."""
        model = fit(run.examples, {}) if any(e.right for e in run.examples) else neutral_model()
        low, low_left = at_bar(run, model, 0.0)
        high, high_left = at_bar(run, model, 1.01)
        assert (low_left.no_match_accuracy or 0) <= (high_left.no_match_accuracy or 0)
        assert high_left.no_match_accuracy == 1.0
        assert (low.recall_at_1 or 0) >= (high.recall_at_1 or 0)

    def test_suggest_keeps_every_corpus_within_the_bounds(self, run: calibrate.Run) -> None:
        model: Model = fit(run.examples, {})
        bar = suggest([run], model)
        assert bar is not None, "the fixture corpus has a feasible bar"
        cases, left = at_bar(run, model, bar)
        assert (cases.false_match_share or 0) <= calibrate.MAX_FALSE_MATCH
        assert (cases.no_match_accuracy or 1) >= calibrate.MIN_NO_MATCH
        assert (left.no_match_accuracy or 1) >= calibrate.MIN_LEFT_OUT_NO_MATCH
        lower = [b for b in calibrate.BARS if b < bar]
        if lower:  # the bar just below breaks a bound, or buys no recall@1
            below, below_left = at_bar(run, model, lower[-1])
            assert (
                (below.false_match_share or 0) > calibrate.MAX_FALSE_MATCH
                or (below.no_match_accuracy or 1) < calibrate.MIN_NO_MATCH
                or (below_left.no_match_accuracy or 1) < calibrate.MIN_LEFT_OUT_NO_MATCH
                or (below.recall_at_1 or 0) <= (cases.recall_at_1 or 0)
            )
