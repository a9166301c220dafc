"""The service's own sync (RUNBOOK_ROOTS, SYNC_INTERVAL_S): it indexes an empty shard at
start, and a runbook edit reaches search while the service runs, without a restart."""

from __future__ import annotations

import shutil
from pathlib import Path

from starlette.testclient import TestClient
from structlog.testing import capture_logs

from enricher.alert import Alert
from enricher.app import create_app
from enricher.index.embedding import Embedder
from enricher.service import Services
from enricher.settings import Settings
from tests.conftest import MODELS_DIR, REPO, wait_for

GOLDEN = REPO / "golden" / "runbooks"
DISK_FULL = "postgres/PostgresDiskFull.md"


def disk_alert() -> Alert:
    return Alert(
        source="alertmanager",
        status="firing",
        alert_name="PostgresDiskFull",
        service="postgres",
        severity="critical",
        summary="Postgres data volume 95% full",
        description="Writes fail with could not extend file",
    )


class TestServiceSync:
    def test_an_added_runbook_reaches_search_without_a_restart(
        self, tmp_path: Path, redis_url: str, embedder: Embedder
    ) -> None:
        """The first sync creates and fills the shard; a runbook written into the root while
        the service serves is found after the next sync; the re-sync of the unchanged one
        embeds nothing (its vectors are in the index and in Redis)."""
        root = tmp_path / "runbooks"
        (root / "postgres").mkdir(parents=True)
        lag = "postgres/PostgresReplicationLag.md"
        shutil.copy(GOLDEN / lag, root / lag)
        settings = Settings(
            models_dir=MODELS_DIR,
            qdrant_path=tmp_path / "qdrant",
            redis_url=redis_url,
            allow_unauthenticated=True,
            runbook_roots=(str(root),),
            sync_interval_s=1,
            sync_use_git=False,
            workers=1,
        )
        services = Services.build(settings, embedder=embedder)
        assert services.sync is not None
        with capture_logs() as logs, TestClient(create_app(services)) as client:
            sync = services.sync
            wait_for(lambda: sync.runs >= 1, what="the first sync")
            ready = client.get("/readyz").json()
            assert ready["checks"]["sync"]["ok"], ready
            assert services.index.count() > 0
            first = services.searcher.search(disk_alert())
            assert all(m.path != DISK_FULL for m in first.matches)

            shutil.copy(GOLDEN / DISK_FULL, root / DISK_FULL)
            wait_for(
                lambda: any(
                    m.path == DISK_FULL for m in services.searcher.search(disk_alert()).matches
                ),
                what="the added runbook in search",
            )
        summaries = [e["summary"] for e in logs if e["event"] == "sync.done"]
        assert summaries[0].startswith("indexed 1 document(s)")
        assert any(
            s.startswith("indexed 1 document(s)") and "skipped 1 unchanged" in s
            for s in summaries[1:]
        )


class TestShrinkHeldBack:
    def test_a_root_that_loses_most_runbooks_keeps_them_and_says_so_once(
        self, tmp_path: Path, redis_url: str, embedder: Embedder
    ) -> None:
        """Four runbooks, then three gone at once (a checkout half-restored, say): they stay
        served, /readyz and rbe_runbook_prune_held_documents say so, and one log line."""
        root = tmp_path / "runbooks"
        names = ["PostgresDiskFull", "PostgresReplicationLag", "PostgresTooManyConnections",
                 "PostgresDown"]
        for name in names:
            path = root / "postgres" / f"{name}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"# {name}\n\n## Mitigation\n\nPage the database team about {name}.\n")
        settings = Settings(
            models_dir=MODELS_DIR, qdrant_path=tmp_path / "qdrant", redis_url=redis_url,
            allow_unauthenticated=True, runbook_roots=(str(root),), sync_interval_s=1,
            sync_use_git=False, workers=1,
        )
        services = Services.build(settings, embedder=embedder)
        with capture_logs() as logs, TestClient(create_app(services)) as client:
            sync = services.sync
            assert sync is not None
            wait_for(lambda: sync.runs >= 1, what="the first sync")
            for name in names[1:]:
                (root / "postgres" / f"{name}.md").unlink()
            runs = sync.runs
            wait_for(lambda: sync.runs > runs, what="the shrunk sync")
            (root / "postgres" / "Note.md").write_text("# Note\n\nA change, so it syncs again.\n")
            wait_for(lambda: sync.runs > runs + 1, what="one more sync")
            ready = client.get("/readyz").json()
            metrics = client.get("/metrics").text
            held = services.index.count()
        detail = ready["checks"]["sync"]["detail"]
        assert ready["ready"] and "kept 3 of 4 document(s) of runbooks" in detail
        assert "--allow-prune" in detail
        assert "rbe_runbook_prune_held_documents 3.0" in metrics
        assert [e["event"] for e in logs].count("ingest.prune_held") == 1
        assert held == 5  # one chunk for each of the four runbooks, and the note
