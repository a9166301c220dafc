"""Sync against real Redis, real embedded Qdrant and the real models."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
import redis
from structlog.testing import capture_logs

from enricher.errors import ConfigError
from enricher.index import schema
from enricher.index.connect import open_index
from enricher.index.embedding import Embedder, ModelIdentity
from enricher.index.engine import EVERYTHING, Index
from enricher.search.reader import Reader, passage_text, unpack
from enricher.settings import Settings
from ingest import sync as sync_module
from ingest.cache import EmbeddingCache, connect
from ingest.document import Document
from ingest.sync import Syncer, SyncMemo, SyncOptions, SyncReport
from scripts.local_redis import free_port
from tests.tiny_reader import bi_folder

REPO = Path(__file__).resolve().parents[2]

PG_LAG = """---
title: Postgres replication lag
last_reviewed: 2026-10-01
---
# Postgres replication lag

## Symptoms
The replica falls behind the primary; reads on the replica return old data and the
lag metric pg_replication_lag_seconds keeps growing for several minutes in a row.

## Diagnosis
Check the WAL receiver on the replica and compare LSNs between primary and replica.

```sql
SELECT now() - pg_last_xact_replay_timestamp() AS lag;
SELECT client_addr, state, sent_lsn, replay_lsn FROM pg_stat_replication;
```

## Mitigation
Pause heavy batch writers, check network throughput between the nodes, and if the
replica cannot catch up rebuild it from a fresh base backup with pg_basebackup.

## Escalation
Page the database team when lag exceeds ten minutes or the replica stops replaying.
"""

DISK_FULL = """# Postgres disk full

## Symptoms
The data volume is above 90 percent; writes fail with "could not extend file" errors
and autovacuum starts to fall behind as temporary files pile up in the base folder.

## Mitigation
Remove old WAL archives that were already shipped, drop abandoned replication slots that
pin WAL, and grow the volume through the cloud console before the database stops.
"""


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "runbooks"
    write(root, "postgres/PostgresReplicationLag.md", PG_LAG)
    write(root, "postgres/PostgresDiskFull.md", DISK_FULL)
    return root


@pytest.fixture()
def index(settings: Settings) -> Iterator[Index]:
    opened = open_index(settings)
    yield opened
    opened.close()


def make_syncer(index: Index, settings: Settings, embedder: Embedder) -> Syncer:
    cache = EmbeddingCache(connect(settings.redis_url), embedder.identity.dense)
    return Syncer(index, embedder, cache)


def sync(syncer: Syncer, root: Path, *, prune: bool = True) -> SyncReport:
    return syncer.run(
        SyncOptions(
            roots=[root],
            chunk_max_chars=Settings().chunk_max_chars,
            chunk_min_chars=50,
            use_git=False,
            prune=prune,
        )
    )


def chunk_counts(index: Index) -> dict[str, int]:
    points, _ = index.scroll(EVERYTHING, 1000)
    counts: dict[str, int] = {}
    for point in points:
        path = str((point.payload or {})["path"])
        counts[path] = counts.get(path, 0) + 1
    return counts


class TestIncrementalSync:
    def test_second_sync_embeds_nothing(
        self, corpus: Path, index: Index, settings: Settings, embedder: Embedder
    ) -> None:
        """An unchanged corpus is skipped entirely on the second run."""
        syncer = make_syncer(index, settings, embedder)
        first = sync(syncer, corpus)
        assert first.indexed_docs == 2
        assert first.embedded == first.indexed_chunks > 2
        assert first.from_cache == 0
        second = sync(syncer, corpus)
        assert (second.indexed_docs, second.embedded, second.skipped) == (0, 0, 2)
        assert second.summary() == (
            "indexed 0 document(s) as 0 chunk(s); skipped 2 unchanged; pruned 0 stale chunk(s); "
            "removed 0 deleted document(s); embedded 0 chunk(s) (0 from cache)"
        )

    def test_editing_one_section_reembeds_only_that_chunk(
        self, corpus: Path, index: Index, settings: Settings, embedder: Embedder
    ) -> None:
        """Only the edited chunk reaches the model; the document's other chunks come from cache."""
        syncer = make_syncer(index, settings, embedder)
        first = sync(syncer, corpus)
        path = corpus / "postgres/PostgresReplicationLag.md"
        path.write_text(PG_LAG.replace("ten minutes", "fifteen minutes"))
        report = sync(syncer, corpus)
        lag_chunks = chunk_counts(index)[
            "postgres/PostgresReplicationLag.md"
        ]
        assert report.indexed_docs == 1
        assert report.skipped == 1
        assert report.embedded == lag_chunks
        assert report.embedded - report.from_cache == 1
        assert first.indexed_chunks == sum(
            chunk_counts(index).values()
        )

    def test_revision_only_change_refreshes_the_payload_without_embedding(
        self, corpus: Path, index: Index, settings: Settings, embedder: Embedder
    ) -> None:
        """A front-matter comment changes the file's bytes (its revision) but no indexed
        field: nothing is re-embedded, and every chunk shows the new revision."""
        syncer = make_syncer(index, settings, embedder)
        sync(syncer, corpus)
        path = corpus / "postgres/PostgresReplicationLag.md"
        path.write_text(PG_LAG.replace("---\ntitle:", "---\n# owned by the db team\ntitle:", 1))
        report = sync(syncer, corpus)
        assert (report.indexed_docs, report.embedded, report.skipped) == (0, 0, 2)
        points, _ = index.scroll(EVERYTHING, 1000)
        revisions = {
            str((p.payload or {})[schema.F_REVISION])
            for p in points
            if (p.payload or {})["path"] == "postgres/PostgresReplicationLag.md"
        }
        assert revisions == {hashlib.sha256(path.read_bytes()).hexdigest()}

    def test_shrunk_document_is_pruned_and_deleted_document_removed(
        self, corpus: Path, index: Index, settings: Settings, embedder: Embedder
    ) -> None:
        """Surplus chunks of a shorter document and all chunks of a deleted one disappear."""
        syncer = make_syncer(index, settings, embedder)
        sync(syncer, corpus)
        before = chunk_counts(index)
        short = PG_LAG.split("## Diagnosis")[0]
        (corpus / "postgres/PostgresReplicationLag.md").write_text(short)
        (corpus / "postgres/PostgresDiskFull.md").unlink()
        report = sync(syncer, corpus)
        after = chunk_counts(index)
        assert "postgres/PostgresDiskFull.md" not in after
        assert report.removed_docs == 1
        lag = "postgres/PostgresReplicationLag.md"
        assert after[lag] < before[lag]
        assert report.pruned_chunks == before[lag] - after[lag]
        indexes = sorted(
            int((p.payload or {})["chunk_index"])
            for p in index.scroll(EVERYTHING, 100)[0]
        )
        assert indexes == list(range(after[lag]))

    def test_source_error_skips_pruning(
        self, corpus: Path, index: Index, settings: Settings, embedder: Embedder
    ) -> None:
        """A run with a broken file deletes nothing, not even truly deleted documents."""
        syncer = make_syncer(index, settings, embedder)
        sync(syncer, corpus)
        before = chunk_counts(index)
        (corpus / "postgres/PostgresDiskFull.md").unlink()
        (corpus / "postgres/Broken.md").write_text("---\ntitle: [unclosed\n---\nbody text\n")
        with capture_logs() as logs:
            report = sync(syncer, corpus)
        assert report.errors and report.errors[0].path == "postgres/Broken.md"
        assert report.prune_skipped
        assert report.removed_docs == 0
        assert chunk_counts(index) == before
        assert any(e["event"] == "ingest.prune_skipped" for e in logs)

    def test_no_prune_option_keeps_deleted_documents(
        self, corpus: Path, index: Index, settings: Settings, embedder: Embedder
    ) -> None:
        """--no-prune leaves chunks of deleted documents in place."""
        syncer = make_syncer(index, settings, embedder)
        sync(syncer, corpus)
        (corpus / "postgres/PostgresDiskFull.md").unlink()
        report = sync(syncer, corpus, prune=False)
        assert report.removed_docs == 0
        assert "postgres/PostgresDiskFull.md" in chunk_counts(index)

    def test_payload_follows_the_index_contract(
        self, corpus: Path, index: Index, settings: Settings, embedder: Embedder
    ) -> None:
        """Every point carries the payload fields search relies on, with front matter applied."""
        sync(make_syncer(index, settings, embedder), corpus)
        points, _ = index.scroll(EVERYTHING, 100)
        lag = [
            p for p in points if (p.payload or {})["path"] == "postgres/PostgresReplicationLag.md"
        ]
        payload = lag[0].payload or {}
        assert payload["title"] == "Postgres replication lag"
        assert payload["alert_names"] == ["PostgresReplicationLag"]
        assert payload["services"] == ["postgres"]
        assert payload["last_updated"].startswith("2026-10-01")
        assert payload["embed_model"] == embedder.identity.dense
        assert payload["doc_id"] == "runbooks:postgres/PostgresReplicationLag.md"
        quoted = {name for p in lag for name in (p.payload or {})["metrics"]}
        assert "pg_replication_lag_seconds" in quoted
        assert {p.id for p in lag} == {
            schema.point_id(payload["doc_id"], i) for i in range(len(lag))
        }


class TestRedisCache:
    def test_flushed_redis_reembeds_nothing_unchanged(
        self, corpus: Path, index: Index, settings: Settings, embedder: Embedder
    ) -> None:
        """Qdrant holds the hashes, so a flushed cache costs nothing for unchanged documents."""
        syncer = make_syncer(index, settings, embedder)
        sync(syncer, corpus)
        redis.Redis.from_url(settings.redis_url).flushall()
        report = sync(syncer, corpus)
        assert (report.skipped, report.embedded) == (2, 0)

    def test_flushed_redis_reembeds_changed_document_fully(
        self, corpus: Path, index: Index, settings: Settings, embedder: Embedder
    ) -> None:
        """Without the cache, a changed document's chunks all go to the model again."""
        syncer = make_syncer(index, settings, embedder)
        sync(syncer, corpus)
        redis.Redis.from_url(settings.redis_url).flushall()
        path = corpus / "postgres/PostgresDiskFull.md"
        path.write_text(DISK_FULL + "\n## Escalation\nPage the database team on call now.\n")
        report = sync(syncer, corpus)
        assert report.indexed_docs == 1
        assert report.from_cache == 0
        assert report.embedded == report.indexed_chunks

    def test_new_index_recipe_rewrites_everything_from_cache(
        self,
        corpus: Path,
        index: Index,
        settings: Settings,
        embedder: Embedder,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """An upgrade that changes the stored payload re-indexes every document once, and the
        model is not asked again: the texts it embeds did not change."""
        syncer = make_syncer(index, settings, embedder)
        sync(syncer, corpus)
        bumped = sync_module.INDEX_RECIPE_VERSION + 1
        monkeypatch.setattr(sync_module, "INDEX_RECIPE_VERSION", bumped)
        report = sync(syncer, corpus)
        assert (report.indexed_docs, report.skipped) == (2, 0)
        assert report.from_cache == report.embedded == report.indexed_chunks > 0
        assert sync(syncer, corpus).skipped == 2

    def test_a_bi_encoder_reader_vector_rides_on_each_chunk(
        self,
        corpus: Path,
        index: Index,
        settings: Settings,
        embedder: Embedder,
        tmp_path: Path,
    ) -> None:
        """With a bi-encoder reader, each chunk stores the reader's vector of its passage
        text and the reader's digest; a new reader re-indexes every document once (from
        the embedding cache), and no reader re-indexes them without vectors."""
        cache = EmbeddingCache(connect(settings.redis_url), embedder.identity.dense)
        first = Reader(bi_folder(tmp_path / "a"))
        sync(Syncer(index, embedder, cache, reader=first), corpus)
        points, _ = index.scroll(EVERYTHING, 1000)
        assert points
        for point in points:
            stored = unpack(point.payload[schema.F_READER_VECTOR])
            (expected,) = first.passage_vectors([passage_text(point.payload)])
            assert point.payload[schema.F_READER_MODEL] == first.digest
            assert stored is not None and float(abs(stored - expected).max()) < 1e-3
        assert sync(Syncer(index, embedder, cache, reader=first), corpus).skipped == 2
        other = Reader(bi_folder(tmp_path / "b", passage_tokens=17))
        other.digest = "0" * 16  # the same graph: stand in for a retrained one
        report = sync(Syncer(index, embedder, cache, reader=other), corpus)
        assert (report.indexed_docs, report.from_cache) == (2, report.embedded)
        models = {p.payload[schema.F_READER_MODEL] for p in index.scroll(EVERYTHING, 1000)[0]}
        assert models == {"0" * 16}
        assert sync(make_syncer(index, settings, embedder), corpus).indexed_docs == 2
        assert not any(
            schema.F_READER_VECTOR in p.payload for p in index.scroll(EVERYTHING, 1000)[0]
        )

    def test_cached_vectors_equal_fresh_ones(self, redis_url: str, embedder: Embedder) -> None:
        """What comes back from Redis is the vector that went in (float32 precision)."""
        cache = EmbeddingCache(connect(redis_url), embedder.identity.dense)
        vec = embedder.dense(["disk full on the orders database"])[0]
        cache.put_many(["t"], [vec])
        got = cache.get_many(["t", "missing"])
        assert got[1] is None
        assert got[0] == pytest.approx(vec, abs=1e-6)

    def test_cache_key_depends_on_model(self, redis_url: str) -> None:
        """A vector cached under one model is invisible under another."""
        a = EmbeddingCache(connect(redis_url), "model-a")
        b = EmbeddingCache(connect(redis_url), "model-b")
        a.put_many(["same text"], [[0.5, 0.25]])
        assert b.get_many(["same text"]) == [None]
        assert a.get_many(["same text"]) == [[0.5, 0.25]]

    def test_unreachable_redis_warns_once_and_syncs(
        self, corpus: Path, index: Index, settings: Settings, embedder: Embedder
    ) -> None:
        """No Redis: one warning, and the sync still indexes everything."""
        dead = f"redis://127.0.0.1:{free_port()}/0"
        with capture_logs() as logs:
            cache = EmbeddingCache(connect(dead), embedder.identity.dense)
            report = Syncer(index, embedder, cache).run(
                SyncOptions.from_settings(Settings(), roots=[corpus], use_git=False)
            )
        assert report.indexed_docs == 2
        assert [e["event"] for e in logs].count("cache.unavailable") == 1


class TestModelIdentity:
    def test_mismatch_fails_before_writing(
        self, corpus: Path, index: Index, settings: Settings, embedder: Embedder
    ) -> None:
        """A collection built by another model is refused with instructions to re-index."""
        other = ModelIdentity(
            dense="some/other-model@fp32", dense_dim=384, sparse=embedder.identity.sparse
        )
        schema.ensure_collection(index, other)
        with pytest.raises(ConfigError, match=r"make ingest") as err:
            sync(make_syncer(index, settings, embedder), corpus)
        assert "some/other-model@fp32" in str(err.value)
        assert index.count() == 0

    def test_dimension_mismatch_names_both_sizes(
        self, index: Index, settings: Settings, embedder: Embedder
    ) -> None:
        """A collection of 768-dim vectors is refused, naming 768 and 384."""
        index.create(768)
        with pytest.raises(
            ConfigError, match=r"768-dim vectors but the configured model makes 384"
        ):
            schema.verify_collection(index, embedder.identity)

    def test_existing_collection_gains_missing_payload_indexes(
        self, index: Index, embedder: Embedder
    ) -> None:
        """A collection from a release before `metrics` existed gets that field's index the
        next time ingest opens it."""
        index.create(embedder.identity.dense_dim)
        for field in schema.KEYWORD_INDEXES:
            if field != schema.F_METRICS:
                index.create_keyword_index(field)
        index.update_metadata(schema.identity_metadata(embedder.identity))
        assert schema.F_METRICS not in index.shape().indexed_fields
        state = schema.ensure_collection(index, embedder.identity)
        assert state.created is False
        assert index.shape().indexed_fields == frozenset(schema.KEYWORD_INDEXES)

    def test_missing_model_dir_names_the_fix(self, tmp_path: Path) -> None:
        """An empty MODELS_DIR fails at load with the command that builds the models."""
        with pytest.raises(ConfigError, match=r"make models"):
            Embedder(Settings(models_dir=tmp_path))


def run_cli(
    settings: Settings, *roots: Path, extra: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """`python -m ingest --no-git --root ROOT... EXTRA...` against the test's index and Redis."""
    env = {
        **os.environ,
        "QDRANT_PATH": str(settings.qdrant_path),
        "QDRANT_COLLECTION": settings.qdrant_collection,
        "REDIS_URL": settings.redis_url,
        "MODELS_DIR": str(settings.models_dir),
    }
    args = [sys.executable, "-m", "ingest", "--no-git", *extra]
    for root in roots:
        args += ["--root", str(root)]
    return subprocess.run(args, env=env, cwd=REPO, capture_output=True, text=True, check=False)


class TestCli:

    def test_summary_line_and_exit_codes(self, corpus: Path, settings: Settings) -> None:
        """The CLI prints the one summary line; a broken file makes it exit 1."""
        ok = run_cli(settings, corpus)
        assert ok.returncode == 0, ok.stderr
        assert re.fullmatch(
            r"indexed 2 document\(s\) as \d+ chunk\(s\); skipped 0 unchanged; pruned 0 stale "
            r"chunk\(s\); removed 0 deleted document\(s\); "
            r"embedded \d+ chunk\(s\) \(0 from cache\)\n",
            ok.stdout,
        )
        (corpus / "postgres/Empty.md").write_text("")
        bad = run_cli(settings, corpus)
        assert bad.returncode == 1
        assert "postgres/Empty.md" in bad.stderr
        assert "skipped 2 unchanged" in bad.stdout


class TestMemo:
    def test_a_memo_skips_unchanged_files_and_still_sees_edits(
        self, corpus: Path, index: Index, settings: Settings, embedder: Embedder
    ) -> None:
        """With the memo of a long-running sync, an unchanged file is not read again, and an
        edited one is (its size and mtime moved)."""
        memo = SyncMemo()
        cache = EmbeddingCache(connect(settings.redis_url), embedder.identity.dense)
        syncer = Syncer(index, embedder, cache, memo)
        assert sync(syncer, corpus).indexed_docs == 2
        assert len(memo.documents) == 2 and len(memo.units) == 2
        remembered = dict(memo.documents)
        assert sync(syncer, corpus).skipped == 2
        assert memo.documents == remembered
        path = corpus / "postgres/PostgresDiskFull.md"
        path.write_text(path.read_text() + "\n\nAlso check the WAL volume.\n")
        report = sync(syncer, corpus)
        assert (report.indexed_docs, report.skipped) == (1, 1)
        points, _ = index.scroll(EVERYTHING, 1000)
        assert any("WAL volume" in str(p.payload["text"]) for p in points)
        assert len(memo.documents) == 2 and len(memo.units) == 2


class TestChunkSettings:
    def test_changed_chunk_size_rechunks_unchanged_documents(
        self, corpus: Path, index: Index, settings: Settings, embedder: Embedder
    ) -> None:
        """A new CHUNK_MAX_CHARS re-indexes documents whose text did not change."""
        syncer = make_syncer(index, settings, embedder)
        sync(syncer, corpus)
        report = syncer.run(
            SyncOptions(roots=[corpus], chunk_max_chars=300, chunk_min_chars=50, use_git=False)
        )
        assert report.indexed_docs == 2
        assert report.skipped == 0


OPS_PAGE = """# Storage operations

The storage team's runbook: one section per alert.

## DiskAlmostFull

The data volume is above 90 percent and writes will start failing within hours.

### How to investigate

Find the biggest folders on the volume with du and compare them with last week.

### How to fix

```
kubectl exec deploy/store -- rm -rf /data/tmp/*
```

## DiskReadErrors

The kernel logs read errors for the data disk; a failing device returns bad sectors.

### How to investigate

Read dmesg on the node and check the SMART counters of the device.

## DiskLatencyHigh

Reads and writes on the data disk take longer than 50 ms at the 99th percentile.

### How to fix

Move the noisiest tenant to another node with the rebalance tool.

## Contacts

Page the storage lead for anything not covered here.
"""


class TestMultiAlertPages:
    """A page with a section per alert is indexed as one runbook unit per alert, and kept,
    refreshed and pruned as one file."""

    def payloads(self, index: Index) -> list[dict[str, object]]:
        points, _ = index.scroll(EVERYTHING, 1000)
        return [p.payload or {} for p in points]

    def test_units_are_indexed_with_their_page(
        self, tmp_path: Path, index: Index, settings: Settings, embedder: Embedder
    ) -> None:
        root = tmp_path / "runbooks"
        write(root, "storage/operations.md", OPS_PAGE)
        report = sync(make_syncer(index, settings, embedder), root)
        assert (report.indexed_docs, report.skipped) == (1, 0)
        page = "runbooks:storage/operations.md"
        units: dict[str, list[dict[str, object]]] = {}
        for payload in self.payloads(index):
            assert payload[schema.F_PAGE_ID] == page
            assert payload[schema.F_PATH] == "storage/operations.md"
            units.setdefault(str(payload[schema.F_DOC_ID]), []).append(payload)
        assert sorted(units) == [
            page,
            f"{page}#diskalmostfull",
            f"{page}#disklatencyhigh",
            f"{page}#diskreaderrors",
        ]
        full = units[f"{page}#diskalmostfull"]
        assert sorted(int(str(p[schema.F_CHUNK_INDEX])) for p in full) == list(range(len(full)))
        assert {str(p[schema.F_UNIT_ANCHOR]) for p in full} == {"diskalmostfull"}
        assert {str(p[schema.F_ALERT_NAMES]) for p in full} == {str(["DiskAlmostFull"])}
        assert not any("dmesg" in str(p[schema.F_TEXT]) for p in full)
        (first,) = index.retrieve([schema.point_id(f"{page}#diskalmostfull", 0)])
        assert first.payload[schema.F_DOC_TERMS] and first.payload[schema.F_NAME_TERMS]
        stats = schema.read_stats(index)
        assert stats is not None and stats.documents == 4

    def test_an_unchanged_page_is_skipped_and_a_removed_section_pruned(
        self, tmp_path: Path, index: Index, settings: Settings, embedder: Embedder
    ) -> None:
        root = tmp_path / "runbooks"
        path = write(root, "storage/operations.md", OPS_PAGE)
        syncer = make_syncer(index, settings, embedder)
        sync(syncer, root)
        again = sync(syncer, root)
        assert (again.indexed_docs, again.skipped, again.embedded) == (0, 1, 0)
        gone = "runbooks:storage/operations.md#diskreaderrors"
        held = sum(1 for p in self.payloads(index) if p[schema.F_DOC_ID] == gone)
        start = OPS_PAGE.index("## DiskReadErrors")
        path.write_text(OPS_PAGE[:start] + OPS_PAGE[OPS_PAGE.index("## DiskLatencyHigh") :])
        report = sync(syncer, root)
        assert (report.indexed_docs, report.pruned_chunks, report.removed_docs) == (1, held, 0)
        assert not any(p[schema.F_DOC_ID] == gone for p in self.payloads(index))
        path.unlink()
        report = sync(syncer, root)
        assert report.removed_docs == 1 and self.payloads(index) == []

    def test_a_page_cut_later_leaves_no_chunk_of_the_whole(
        self, tmp_path: Path, index: Index, settings: Settings, embedder: Embedder
    ) -> None:
        """A page first indexed whole (one alert section, or an index from before units)
        and then cut keeps only its units' chunks: the whole page's extra ones are pruned."""
        root = tmp_path / "runbooks"
        first_two = OPS_PAGE[: OPS_PAGE.index("## DiskReadErrors")]
        path = write(root, "storage/operations.md", first_two + "## Contacts\nPage the lead.\n")
        syncer = make_syncer(index, settings, embedder)
        sync(syncer, root)
        page = "runbooks:storage/operations.md"
        assert {p[schema.F_DOC_ID] for p in self.payloads(index)} == {page}
        path.write_text(OPS_PAGE)
        report = sync(syncer, root)
        assert report.indexed_docs == 1 and report.pruned_chunks > 0
        held: dict[str, list[int]] = {}
        for p in self.payloads(index):
            chunk = int(str(p[schema.F_CHUNK_INDEX]))
            held.setdefault(str(p[schema.F_DOC_ID]), []).append(chunk)
        assert len(held) == 4
        assert all(sorted(i) == list(range(len(i))) for i in held.values())
        whole = [p for p in self.payloads(index) if p[schema.F_DOC_ID] == page]
        assert not any("biggest folders" in str(p[schema.F_TEXT]) for p in whole)

    def test_a_revision_refresh_reaches_every_unit(
        self, tmp_path: Path, index: Index, settings: Settings, embedder: Embedder
    ) -> None:
        root = tmp_path / "runbooks"
        path = write(root, "storage/operations.md", "---\nowner: storage\n---\n" + OPS_PAGE)
        syncer = make_syncer(index, settings, embedder)
        sync(syncer, root)
        path.write_text("---\n# a comment only\nowner: storage\n---\n" + OPS_PAGE)
        report = sync(syncer, root)
        assert (report.skipped, report.embedded) == (1, 0)
        revisions = {str(p[schema.F_REVISION]) for p in self.payloads(index)}
        expected = hashlib.sha256(path.read_bytes()).hexdigest()
        assert revisions == {expected}


class TestNameText:
    def test_a_section_is_named_in_words_like_a_file(self) -> None:
        """The heading identifier alone is a name term no renamed alert spells; a file's
        own title stays as its author wrote it."""
        section = Document(
            doc_id="runbooks:storage/operations.md#diskreaderrors",
            source="runbooks",
            path="storage/operations.md",
            title="DiskReadErrors",
            alert_names=("DiskReadErrors",),
            services=("storage",),
            owner=None,
            tags=(),
            last_updated=datetime(2026, 1, 5, tzinfo=UTC),
            revision="abc123",
            body="",
            doc_hash="h",
            unit_anchor="diskreaderrors",
        )
        titled = replace(section, doc_id="runbooks:storage/DiskReadErrors.md", unit_anchor="")
        assert sync_module.name_text(section) == "Disk Read Errors. Disk Read Errors"
        assert sync_module.name_text(titled) == "DiskReadErrors. Disk Read Errors"
