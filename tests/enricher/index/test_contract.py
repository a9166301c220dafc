"""The index contract: the same cases on both engines behind enricher.index.engine.Index,
qdrant-edge (the default) and qdrant-client (local mode standing in for a Qdrant server).

Each `TestIndex` case runs once per engine; `TestSameRankings` runs every golden case on
both engines and asserts they rank the same runbooks with the same scores.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from enricher.errors import ConfigError
from enricher.index import schema
from enricher.index.connect import open_index, shard_path
from enricher.index.edge import EdgeIndex
from enricher.index.embedding import Embedder, ModelIdentity, SparseVector
from enricher.index.engine import (
    EVERYTHING,
    AnyOf,
    AtLeast,
    Equals,
    Filter,
    Index,
    IndexPoint,
)
from enricher.search.decide import SearchConfig
from enricher.search.searcher import Searcher
from enricher.settings import Settings
from quality.cases import load_cases
from scripts.index_copy import copy_index
from tests.conftest import ENGINES, REPO, open_engine


def point(
    doc: str, chunk: int, dense: list[float], terms: list[int], **extra: object
) -> IndexPoint:
    return IndexPoint(
        id=schema.point_id(doc, chunk),
        dense=dense,
        sparse=SparseVector(terms, [1.0] * len(terms)),
        payload={"doc_id": doc, "chunk_index": chunk, "services": ["db"], **extra},
    )


POINTS = [
    point("a", 0, [1.0, 0.0, 0.0], [1, 2], services=["db", "api"]),
    point("a", 1, [0.9, 0.1, 0.0], [2, 3]),
    point("a", 2, [0.8, 0.2, 0.0], [3]),
    point("b", 0, [0.0, 1.0, 0.0], [4, 5], services=["web"]),
    point("c", 0, [0.0, 0.0, 1.0], [1, 5]),
]


@pytest.fixture(params=ENGINES)
def index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Index]:
    opened = open_engine(request.param, tmp_path / "qdrant")
    opened.create(3)
    for field in schema.KEYWORD_INDEXES:
        opened.create_keyword_index(field)
    opened.upsert(POINTS)
    yield opened
    opened.close()


def docs_of(index: Index, flt: Filter) -> list[tuple[str, int]]:
    records, _ = index.scroll(flt, 100)
    return sorted((r.payload["doc_id"], r.payload["chunk_index"]) for r in records)


class TestIndex:
    def test_shape_reports_vectors_and_payload_indexes(self, index: Index) -> None:
        shape = index.shape()
        assert (shape.dense_size, shape.has_sparse) == (3, True)
        if index.engine == "qdrant-edge":  # local mode keeps no payload indexes
            assert shape.indexed_fields == frozenset(schema.KEYWORD_INDEXES)

    def test_filters(self, index: Index) -> None:
        """Equals on a scalar and on a list field, AnyOf, AtLeast, and must_not."""
        assert docs_of(index, Filter(must=(Equals("doc_id", "a"),))) == [
            ("a", 0), ("a", 1), ("a", 2)
        ]
        assert docs_of(index, Filter(must=(Equals("services", "api"),))) == [("a", 0)]
        assert docs_of(index, Filter(must=(AnyOf("services", ("web", "api")),))) == [
            ("a", 0), ("b", 0)
        ]
        assert docs_of(index, Filter(must=(AtLeast("chunk_index", 1),))) == [("a", 1), ("a", 2)]
        assert docs_of(index, Filter(must_not=(Equals("doc_id", "a"),))) == [("b", 0), ("c", 0)]
        assert index.count(Filter(must=(Equals("chunk_index", 0),))) == 3
        assert index.count() == 5

    def test_scroll_pages_with_selected_fields(self, index: Index) -> None:
        first, offset = index.scroll(EVERYTHING, 2, fields=["doc_id"])
        assert len(first) == 2 and offset is not None
        assert all(set(r.payload) == {"doc_id"} for r in first)
        rest, end = index.scroll(EVERYTHING, 10, fields=["doc_id"], offset=offset)
        assert end is None
        assert len({r.id for r in first + rest}) == 5

    def test_retrieve_by_id_skips_missing(self, index: Index) -> None:
        ids = [schema.point_id("b", 0), schema.point_id("zz", 0)]
        assert [r.payload["doc_id"] for r in index.retrieve(ids)] == ["b"]
        assert index.retrieve(ids)[0].id == schema.point_id("b", 0)

    def test_points_come_with_their_vectors(self, index: Index) -> None:
        """What a document's chunks are copied from when its id changes (ingest.migrate)."""
        found = {p.id: p for p in index.points(Filter(must=(Equals("doc_id", "a"),)))}
        assert set(found) == {schema.point_id("a", i) for i in range(3)}
        first = found[schema.point_id("a", 0)]
        assert [round(x, 6) for x in first.dense] == [1.0, 0.0, 0.0]
        assert (list(first.sparse.indices), list(first.sparse.values)) == ([1, 2], [1.0, 1.0])
        assert first.payload["services"] == ["db", "api"]

    def test_delete_and_set_payload_by_filter(self, index: Index) -> None:
        index.set_payload({"revision": "r2"}, Filter(must=(Equals("doc_id", "a"),)))
        records, _ = index.scroll(EVERYTHING, 10)
        assert {r.payload["doc_id"] for r in records if r.payload.get("revision") == "r2"} == {"a"}
        index.delete(Filter(must=(Equals("doc_id", "a"), AtLeast("chunk_index", 1))))
        index.delete(Filter(must=(AnyOf("doc_id", ("c",)),)))
        assert docs_of(index, EVERYTHING) == [("a", 0), ("b", 0)]

    def test_hybrid_fuses_dense_and_sparse_and_returns_vectors(self, index: Index) -> None:
        """RRF over both retrievers: a doc first in both leads; the filter applies to both."""
        hits = index.hybrid([1.0, 0.0, 0.0], SparseVector([1], [1.0]), EVERYTHING, limit=3, rrf_k=2)
        assert hits[0].payload["doc_id"] == "a" and hits[0].payload["chunk_index"] == 0
        assert list(hits[0].dense) == pytest.approx([1.0, 0.0, 0.0])
        only_web = index.hybrid(
            [1.0, 0.0, 0.0], SparseVector([1], [1.0]),
            Filter(must=(Equals("services", "web"),)), limit=3, rrf_k=2,
        )
        assert [h.payload["doc_id"] for h in only_web] == ["b"]

    def test_sparse_search_scores_with_idf(self, index: Index) -> None:
        """Term 4 is in one document, term 1 in two: the rarer term scores higher (IDF)."""
        hits = index.sparse_search(SparseVector([1, 4], [1.0, 1.0]), EVERYTHING, limit=5)
        scores = {(h.payload["doc_id"], h.payload["chunk_index"]): h.score for h in hits}
        assert scores[("b", 0)] > scores[("a", 0)]
        assert set(scores) == {("a", 0), ("b", 0), ("c", 0)}

    def test_metadata_merges_and_survives_reopen(self, index: Index, tmp_path: Path) -> None:
        index.update_metadata({"one": 1})
        index.update_metadata({"two": {"nested": [1, 2]}})
        engine = index.engine
        index.close()
        reopened = open_engine("edge" if engine == "qdrant-edge" else "local", tmp_path / "qdrant")
        try:
            assert reopened.metadata() == {"one": 1, "two": {"nested": [1, 2]}}
            assert reopened.count() == 5
        finally:
            reopened.close()


class TestSchemaChecks:
    @pytest.mark.parametrize("engine", ENGINES)
    def test_missing_collection_says_how_to_index(self, engine: str, tmp_path: Path) -> None:
        index = open_engine(engine, tmp_path / "qdrant")
        try:
            with pytest.raises(ConfigError, match=r"make ingest.*RUNBOOK_ROOTS"):
                schema.verify_collection(index, _identity())
        finally:
            index.close()

    @pytest.mark.parametrize("engine", ENGINES)
    def test_a_collection_of_another_dimension_is_refused(
        self, engine: str, tmp_path: Path
    ) -> None:
        index = open_engine(engine, tmp_path / "qdrant")
        try:
            index.create(8)
            index.update_metadata(schema.identity_metadata(_identity()))
            with pytest.raises(ConfigError, match=r"8-dim vectors .* makes 384"):
                schema.verify_collection(index, _identity())
        finally:
            index.close()


def _identity() -> ModelIdentity:
    return ModelIdentity(dense="m@fp32", dense_dim=384, sparse="bm25@x")


class TestEdgeShard:
    def test_a_second_handle_names_the_owner(self, tmp_path: Path) -> None:
        """One open handle per shard folder: the second gets an error saying what to do."""
        settings = Settings(qdrant_path=tmp_path)
        first = open_index(settings)
        first.create(3)
        try:
            with pytest.raises(ConfigError, match=r"open in another process.*SYNC_INTERVAL_S"):
                EdgeIndex(shard_path(settings), settings.qdrant_collection)
        finally:
            first.close()


class TestUpgradeFromLocalMode:
    def test_a_local_mode_folder_is_copied_into_the_shard_without_embedding(
        self, tmp_path: Path
    ) -> None:
        """QDRANT_PATH as an older release left it (local mode only) opens as an edge shard
        with the same points, vectors and metadata."""
        local = open_engine("local", tmp_path)
        local.create(3)
        local.upsert(POINTS)
        local.update_metadata({"embed_model": "m", "corpus_stats": {"version": 1}})
        local.close()
        edge = open_index(Settings(qdrant_path=tmp_path))
        try:
            assert edge.engine == "qdrant-edge"
            assert edge.count() == 5
            assert edge.metadata() == {"embed_model": "m", "corpus_stats": {"version": 1}}
            hits = edge.hybrid([0.0, 1.0, 0.0], SparseVector([4], [1.0]), EVERYTHING,
                               limit=2, rrf_k=2)
            assert hits[0].payload["doc_id"] == "b"
            assert schema.F_METRICS in edge.shape().indexed_fields
        finally:
            edge.close()


@pytest.fixture(scope="module")
def searchers(
    golden_index: Path, embedder: Embedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Searcher]]:
    config = SearchConfig.from_settings(Settings())
    opened: dict[str, Searcher] = {}
    for engine in ENGINES:
        path = tmp_path_factory.mktemp(f"rank-{engine}") / "qdrant"
        copy_index(golden_index, path)
        opened[engine] = Searcher(open_engine(engine, path), embedder, config)
    yield opened
    for searcher in opened.values():
        searcher.index.close()


class TestSameRankings:
    def test_every_golden_case_ranks_the_same_on_both_engines(
        self, searchers: dict[str, Searcher]
    ) -> None:
        """On all golden cases the two engines give the same decision, matches (with their
        scores), leads, and the same top three candidates with their probabilities.

        Ties are broken by point id on both (engine.best_first). Further down the two may
        still differ: their BM25 scores differ in the seventh digit (float32 arithmetic),
        which can reorder chunks at the edge of the pool. Measured: 2 of the 258 cases,
        from the fourth candidate on, at probability 0, which no page shows."""
        cases, errors = load_cases(REPO / "golden" / "cases.jsonl")
        assert not errors and cases
        differ = []
        for case in cases:
            seen = {}
            for engine, searcher in searchers.items():
                result, ranking = searcher.search_ranked(case.alert)
                assert ranking is not None, f"{engine}: {result.reason}"
                top = ranking.candidates[:3]
                seen[engine] = (
                    result.status,
                    ranking.tier,
                    [(m.doc_id, m.score) for m in result.matches],
                    [m.doc_id for m in result.leads],
                    [(c.doc_id, round(c.score, 3)) for c in top],
                )
            if seen["edge"] != seen["local"]:
                differ.append((case.id, seen))
        assert differ == []
