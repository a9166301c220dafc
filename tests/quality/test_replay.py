"""Replaying feedback on golden/: what on-call's votes do to the next page of renamed alerts
and of alerts that have no runbook (real models, embedded Qdrant, the webhook's search)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from enricher.feedback.export import cases as export_cases
from enricher.index.embedding import Embedder
from enricher.settings import Settings
from quality.calibrate import neutral_model
from quality.cases import Case, load_cases
from quality.evalindex import EvalIndex
from quality.metrics import compute_metrics
from quality.replay import Replay, book_from_export, replay
from tests.conftest import MODELS_DIR, REPO
from tests.helpers import make_vote

GOLDEN = REPO / "golden"


@pytest.fixture(scope="module")
def golden_cases() -> list[Case]:
    cases, errors = load_cases(GOLDEN / "cases.jsonl")
    assert not errors
    return [c for c in cases if c.kind in ("renamed", "no_runbook")]


@pytest.fixture(scope="module")
def index(embedder: Embedder) -> Iterator[EvalIndex]:
    settings = Settings(models_dir=MODELS_DIR, redis_url="redis://127.0.0.1:1/0")
    with EvalIndex(GOLDEN / "runbooks", settings, embedder) as idx:
        yield idx


@pytest.fixture(scope="module")
def simulated(index: EvalIndex, golden_cases: list[Case]) -> Replay:
    return replay(index, golden_cases)


class TestSimulatedOnCall:
    def test_renamed_alerts_are_found_after_their_first_page(
        self, simulated: Replay, golden_cases: list[Case]
    ) -> None:
        """Every renamed alert whose runbook the first page showed (match or lead) gets it
        as the match on the next page; recall@1 on renamed alerts rises, ranks never fall."""
        renamed = [i for i, c in enumerate(golden_cases) if c.kind == "renamed"]
        before = [simulated.before[i] for i in renamed]
        after = [simulated.after[i] for i in renamed]
        shown = [b for b in before if b.expected == b.top or b.expected in b.leads]
        assert len(shown) > sum(b.right for b in before)  # some were only leads
        for b, a in zip(before, after, strict=True):
            if b.expected == b.top or b.expected in b.leads:
                assert a.right, (b.id, a.status, a.top)
                assert a.tier in ("feedback", "alert_name", "alert_name+service", "runbook_url")
            assert a.rank is not None and (b.rank is None or a.rank <= b.rank), b.id
        r1_before = compute_metrics(before).recall_at_1 or 0.0
        r1_after = compute_metrics(after).recall_at_1 or 0.0
        assert r1_after > r1_before

    def test_wrong_matches_of_alerts_without_a_runbook_go_away(
        self, simulated: Replay, golden_cases: list[Case]
    ) -> None:
        """An alert with no runbook that matched one: marked wrong, the next page says
        "no confident match"."""
        pairs = [
            (b, a)
            for b, a, c in zip(simulated.before, simulated.after, golden_cases, strict=True)
            if c.kind == "no_runbook"
        ]
        wrong = [(b, a) for b, a in pairs if b.status == "matched"]
        assert wrong, "golden/ has alerts without a runbook that match one"
        for b, a in wrong:
            assert a.top != b.top, b.id
        assert sum(a.status == "matched" for _, a in pairs) < len(wrong)


def test_an_export_replays(index: EvalIndex, golden_cases: list[Case], tmp_path: Path) -> None:
    """Votes exported from Redis replay the same way: each case on-call confirmed a runbook
    for is matched with it next time, also those the search alone missed."""
    chosen = [c for c in golden_cases if c.kind in ("renamed", "paraphrase") and c.expected]
    votes = [make_vote(c.alert, str(c.expected), ts=f"1.{i}") for i, c in enumerate(chosen)]
    exported = tmp_path / "feedback.jsonl"
    exported.write_text("".join(json.dumps(c) + "\n" for c in export_cases(votes)))
    cases, errors = load_cases(exported)
    assert not errors and [c.expected for c in cases] == [c.expected for c in chosen]
    result = replay(index, cases, book_from_export(exported, cases))
    assert not all(b.right for b in result.before), "some confirmed case was missed before"
    assert all(a.right and a.tier == "feedback" for a in result.after)


class TestEvalSearcher:
    """`make eval` judges the searcher the webhook serves: the shipped reader included,
    also under the ablations' configs."""

    def test_the_served_searcher_reads(self, index: EvalIndex) -> None:
        served = index.searcher()
        assert served.reader is not None and served.reader.reorders

    def test_a_config_keeps_the_reader(self, index: EvalIndex) -> None:
        config = replace(index.searcher().config, mode="dense")
        searcher = index.searcher(config)
        assert searcher.config.mode == "dense" and searcher.reader is not None

    def test_mining_and_fitting_do_not_read(self, index: EvalIndex) -> None:
        """Mining for the reader's training and a fit's collection pass their own
        decision and ask for no reader; the reader is applied afterwards (quality.reading)."""
        config = index.searcher().config
        assert index.searcher(config, neutral_model()).reader is None
