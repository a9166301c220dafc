"""The reader's training data, without torch: mined lists as the serving side builds its
pairs, folds, batches and the reader-alone metrics."""

from __future__ import annotations

import gzip
import json
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from enricher.alert import Alert
from enricher.search import reader
from enricher.search.decide import Candidate
from enricher.search.query import build_query
from quality.cases import Case
from quality.train.mine import listing
from quality.train.train_data import (
    Listing,
    auc,
    batches,
    corpus_of,
    decision_aucs,
    fit_logit,
    folds,
    manifest_hash,
    margin_auc,
    measure,
    pairs,
    read,
)

COUNTS = {
    "tempo": 99,
    "pingcap": 266,
    "sourcegraph": 586,
    "netapp-harvest": 270,
    "cloudnative-pg": 53,
    "gitlab": 427,
    "toy-databases": 426,
    "toy-hosts": 489,
    "toy-network": 333,
}


def alert(name: str) -> Alert:
    return Alert(
        source="alertmanager",
        status="firing",
        alert_name=name,
        service="postgres",
        severity="warning",
        summary="replica lags behind the primary",
        description="",
        labels={"alertname": name},
        starts_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


def candidate(path: str, anchor: str = "") -> Candidate:
    payload = {
        "path": path,
        "doc_id": path,
        "title": path.rsplit("/", 1)[-1].removesuffix(".md"),
        "section": "Meaning",
        "text": f"What {path} means.",
        "alert_names": [],
        "unit_anchor": anchor,
    }
    return Candidate(payload, 0.5)


def item(labels: tuple[int, ...], corpus: str = "toy") -> Listing:
    n = len(labels)
    return Listing(corpus, "c", "paraphrase", False, "a", ("p",) * n, ("k",) * n, labels)


class TestListing:
    def test_pairs_are_the_serving_sides_texts(self) -> None:
        """Training reads exactly what enricher.search.reader.texts gives the page."""
        case = Case("c1", "paraphrase", None, "pg/Lag.md", alert("PgReplicaSlow"), 1)
        found = [candidate("pg/Down.md"), candidate("pg/Lag.md")]
        got = listing("toy", case, False, found)
        query = build_query(case.alert)
        assert [(got.alert, p) for p in got.passages] == [
            reader.texts(query, c.payload) for c in found
        ]
        assert got.labels == (0, 1)

    def test_a_left_out_twin_has_no_positive(self) -> None:
        case = Case("c1", "paraphrase", None, "pg/Lag.md", alert("PgReplicaSlow"), 1)
        got = listing("toy", case, True, [candidate("pg/Lag.md")])
        assert got.left_out and got.labels == (0,)

    def test_a_section_case_is_labelled_on_its_unit(self) -> None:
        case = Case("c1", "section_renamed", None, "ops.md", alert("X"), 1, "lag")
        got = listing("toy", case, False, [candidate("ops.md", "down"), candidate("ops.md", "lag")])
        assert got.keys == ("ops.md#down", "ops.md#lag") and got.labels == (0, 1)

    def test_read_takes_plain_and_gzipped_files_alike(self, tmp_path: Path) -> None:
        lines = "".join(json.dumps(asdict(item((1, 0)))) + "\n" for _ in range(2))
        (tmp_path / "toy.jsonl").write_text(lines)
        (tmp_path / "gz").mkdir()
        (tmp_path / "gz" / "toy.jsonl.gz").write_bytes(gzip.compress(lines.encode()))
        plain, packed = tmp_path / "toy.jsonl", tmp_path / "gz" / "toy.jsonl.gz"
        assert read(plain) == read(packed) == [item((1, 0))] * 2
        assert corpus_of(packed) == "toy"
        assert manifest_hash([plain]) == manifest_hash([packed])


class TestFolds:
    def test_deterministic_and_every_corpus_held_once(self) -> None:
        held = folds(COUNTS)
        assert held == folds(dict(reversed(list(COUNTS.items()))))
        assert sorted(c for cs in held.values() for c in cs) == sorted(COUNTS)

    def test_a_projects_corpora_are_held_out_together(self) -> None:
        held = folds(COUNTS)
        toy = [name for name, cs in held.items() if any(c.startswith("toy-") for c in cs)]
        assert len(toy) == 1 and {"toy-databases", "toy-hosts", "toy-network"} <= set(held[toy[0]])

    def test_folds_are_balanced_by_lists(self) -> None:
        sizes = [sum(COUNTS[c] for c in cs) for cs in folds(COUNTS).values()]
        assert max(sizes) - min(sizes) <= max(COUNTS.values())


class TestBatches:
    def test_every_list_once_per_epoch_and_the_order_is_seeded(self) -> None:
        one = batches(37, 8, seed=13, epoch=0)
        assert sorted(g for b in one for g in b) == list(range(37))
        assert one == batches(37, 8, seed=13, epoch=0) != batches(37, 8, seed=13, epoch=1)

    def test_pairs_carry_their_list(self) -> None:
        got = pairs([item((1, 0)), item((0,))])
        assert [(p.label, p.group) for p in got] == [(1, 0), (0, 0), (0, 1)]

    def test_negatives_keep_the_hardest_and_every_positive(self) -> None:
        """The first negatives in fused order are kept, wherever the positive sits."""
        listing = Listing(
            "toy", "c", "paraphrase", False, "a", ("n1", "n2", "p", "n3"), ("k",) * 4, (0, 0, 1, 0)
        )
        got = pairs([listing], negatives=1)
        assert [(p.passage, p.label) for p in got] == [("n1", 0), ("p", 1)]
        assert len(pairs([listing], negatives=0)) == 4

    def test_alert_chars_cuts_the_alert_side_only(self) -> None:
        listing = Listing("toy", "c", "paraphrase", False, "abcdef", ("passage",), ("k",), (1,))
        (got,) = pairs([listing], alert_chars=3)
        assert (got.alert, got.passage) == ("abc", "passage")


class TestMeasure:
    @pytest.mark.parametrize(
        ("labels", "scores", "expected"),
        [
            ([1, 0], [2.0, 1.0], 1.0),
            ([1, 0], [1.0, 2.0], 0.0),
            ([1, 0, 1, 0], [0.9, 0.1, 0.5, 0.5], 0.875),
            ([1, 1], [0.3, 0.2], 0.5),
        ],
    )
    def test_auc(self, labels: list[int], scores: list[float], expected: float) -> None:
        assert auc(labels, scores) == pytest.approx(expected)

    def test_reader_and_first_rank_over_lists_with_a_positive(self) -> None:
        lists = [item((0, 1)), item((1, 0)), item((0, 0))]
        got = measure(lists, [[0.0, 3.0], [0.0, 3.0], [5.0, 5.0]])
        assert (got.with_positive, got.reader_r1, got.first_rank_r1) == (2, 0.5, 0.5)
        assert got.pairs == 6

    def test_margin_auc_reads_the_first_candidates_lead(self) -> None:
        """A reader that puts its widest lead on the lists whose first runbook is right
        separates them fully; one that leads as far on a wrong first does not."""
        lists = [item((1, 0)), item((0, 1)), item((1, 0, 0)), item((1,))]
        apart = [[0.9, 0.2], [0.5, 0.45], [0.8, 0.3, 0.1], [0.9]]
        assert margin_auc(lists, apart) == pytest.approx(1.0)
        alike = [[0.9, 0.2], [0.9, 0.2], [0.8, 0.3, 0.1], [0.9]]
        assert margin_auc(lists, alike) == pytest.approx(0.25)

    def test_decision_aucs_count_the_lists_without_a_runbook(self) -> None:
        """A list whose runbook is not indexed is a wrong page at any score: a reader that
        reads its best candidate high there separates worse than one that reads it low,
        though both rank every list with a positive alike. `top_auc` reads the reader's own
        best of the first three; `first_auc` the search's first."""
        lists = [item((1, 0, 0)), item((0, 1, 0)), item((0, 0, 0)), item((0, 0, 0, 1))]
        low = [[0.9, 0.2, 0.1], [0.3, 0.8, 0.1], [0.4, 0.3, 0.2], [0.5, 0.2, 0.1, 0.95]]
        high = [[0.9, 0.2, 0.1], [0.3, 0.8, 0.1], [0.95, 0.3, 0.2], [0.5, 0.2, 0.1, 0.95]]
        got_low, got_high = decision_aucs(lists, low), decision_aucs(lists, high)
        assert got_low["top_auc"] == pytest.approx(1.0)
        assert got_high["top_auc"] == pytest.approx(0.5)
        assert got_low["first_auc"] == pytest.approx(1.0)
        assert got_high["first_auc"] == pytest.approx(2 / 3, abs=1e-4)
        assert got_low["lists"] == 4

    def test_fit_logit_recovers_a_logistic_law(self) -> None:
        """Labels drawn from sigmoid(8 * (x - 0.6)) give back about that scale and shift,
        and the shift is where the fitted probability is one half."""
        rng = np.random.default_rng(3)
        x = rng.uniform(0.0, 1.0, 20_000)
        y = (rng.uniform(0.0, 1.0, x.size) < 1 / (1 + np.exp(-8.0 * (x - 0.6)))).astype(int)
        scale, shift = fit_logit(list(x), list(y))
        assert scale == pytest.approx(8.0, rel=0.1)
        assert shift == pytest.approx(0.6, abs=0.02)
