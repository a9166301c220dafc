"""A source that has never loaded is not "no match": a page that finds no confident runbook
says which source's runbooks are missing and why, /readyz is not ready while no source has
loaded, and "Add one at ..." appears only when every source has loaded."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from starlette.testclient import TestClient

from enricher.app import create_app
from enricher.index.embedding import Embedder
from enricher.service import Services
from enricher.settings import Settings
from enricher.slack.delivery import ConsoleDelivery
from enricher.sources.alertmanager import one_alert_body
from tests.conftest import MODELS_DIR, REPO, wait_for
from tests.gitserver import GitHttpServer, TeamRepo

GOLDEN = REPO / "golden" / "runbooks"
DISK_FULL = "postgres/PostgresDiskFull.md"


def page_for(alert_name: str, summary: str, key: str) -> dict[str, Any]:
    labels = {"alertname": alert_name, "service": "postgres", "severity": "critical"}
    return one_alert_body(
        labels, {"summary": summary}, group_key=key, receiver="test",
        starts_at="2026-03-01T12:00:00Z", generator_url="", fingerprint=key,
    )


def posted(pages: io.StringIO) -> list[str]:
    """The text of each message printed by the console delivery."""
    decoder, text, found, at = json.JSONDecoder(), pages.getvalue(), [], 0
    while at < len(text.rstrip()):
        doc, end = decoder.raw_decode(text, at)
        found.append(json.dumps(doc, ensure_ascii=False))
        at = end + 1
    return found


def service(tmp_path: Path, redis_url: str, embedder: Embedder, pages: io.StringIO,
            **sources: Any) -> Services:
    settings = Settings(
        models_dir=MODELS_DIR, qdrant_path=tmp_path / "qdrant", redis_url=redis_url,
        allow_unauthenticated=True, sync_interval_s=1, sync_use_git=False, workers=1,
        first_sync_wait_s=30, **sources,
    )
    return Services.build(settings, embedder=embedder, delivery=ConsoleDelivery(pages))


@pytest.fixture()
def repo(tmp_path: Path) -> TeamRepo:
    team = TeamRepo(tmp_path / "server", name="ops")
    team.write(DISK_FULL, (GOLDEN / DISK_FULL).read_text())
    team.commit_and_push("runbooks")
    return team


class TestNeverLoaded:
    def test_a_misspelt_root_on_an_empty_index_is_not_ready_and_pages_say_why(
        self, tmp_path: Path, redis_url: str, embedder: Embedder
    ) -> None:
        pages = io.StringIO()
        services = service(tmp_path, redis_url, embedder, pages,
                           runbook_roots=(str(tmp_path / "runboks"),))
        with TestClient(create_app(services)) as client:
            body = page_for("PGReplicaBehind", "Replica lags", "lag")
            assert client.post("/webhook/alertmanager", json=body).status_code == 202
            wait_for(lambda: bool(posted(pages)), what="the page")
            ready = client.get("/readyz")
        (text,) = posted(pages)
        assert "Runbook search unavailable" in text
        assert "runbooks from runboks are not loaded (runbook root does not exist)" in text
        assert "Add one at" not in text
        assert ready.status_code == 503
        assert "not loaded: runboks (runbook root does not exist)" in (
            ready.json()["checks"]["sync"]["detail"]
        )

    def test_beside_a_loaded_source_a_match_pages_and_no_match_names_the_missing_one(
        self, tmp_path: Path, redis_url: str, embedder: Embedder
    ) -> None:
        root = tmp_path / "runbooks"
        (root / "postgres").mkdir(parents=True)
        shutil.copy(GOLDEN / DISK_FULL, root / DISK_FULL)
        pages = io.StringIO()
        services = service(tmp_path, redis_url, embedder, pages,
                           runbook_roots=(str(root), str(tmp_path / "team" / "runboks")))
        with TestClient(create_app(services)) as client:
            disk = page_for("PostgresDiskFull", "Postgres data volume 95% full", "disk")
            other = page_for("KafkaConsumerLagHigh", "Consumer group lags", "kafka")
            for body in (disk, other):
                assert client.post("/webhook/alertmanager", json=body).status_code == 202
            wait_for(lambda: len(posted(pages)) == 2, what="both pages")
            ready = client.get("/readyz")
        matched, missing = sorted(posted(pages), key=lambda t: "KafkaConsumerLagHigh" in t)
        assert "PostgresDiskFull.md" in matched and "unavailable" not in matched
        assert "runbooks from runboks are not loaded (runbook root does not exist)" in missing
        assert "Add one at" not in missing
        assert ready.status_code == 200  # one source loaded: it serves what it has


def test_a_git_remote_never_cloned_pages_unavailable_with_the_fetch_error(
    tmp_path: Path, redis_url: str, embedder: Embedder, server: GitHttpServer
) -> None:
    """A wrong token at the first start: the page names the remote's runbooks as not
    loaded and says why, never "no match"."""
    pages = io.StringIO()
    services = service(
        tmp_path, redis_url, embedder, pages, runbook_git_url=server.url("ops"),
        runbook_git_token=SecretStr("ghp-wrong"), runbook_git_dir=tmp_path / "git",
    )
    with TestClient(create_app(services)) as client:
        body = page_for("PostgresDiskFull", "Postgres data volume 95% full", "disk")
        assert client.post("/webhook/alertmanager", json=body).status_code == 202
        wait_for(lambda: bool(posted(pages)), what="the page")
    (text,) = posted(pages)
    assert "runbooks from ops are not loaded (git clone of" in text
    assert "authentication failed" in text and "ghp-wrong" not in text
    assert "Add one at" not in text
