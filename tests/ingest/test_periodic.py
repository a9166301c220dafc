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
