"""The service serving runbooks from a git remote (RUNBOOK_GIT_URL) on a real git server on
loopback: a pushed edit reaches the next page within SYNC_INTERVAL_S + 5 s, a force-push
that drops a runbook prunes it, and a wrong or revoked token is reported while the service
keeps serving the last good runbooks."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest
from pydantic import SecretStr
from starlette.testclient import TestClient
from structlog.testing import capture_logs

from enricher.app import create_app
from enricher.index import schema
from enricher.index.embedding import Embedder
from enricher.index.engine import Equals, Filter
from enricher.service import Services
from enricher.settings import Settings
from enricher.slack.delivery import ConsoleDelivery
from enricher.sources.alertmanager import one_alert_body
from tests.conftest import MODELS_DIR, REPO, wait_for
from tests.gitserver import TEAM_TOKEN, GitHttpServer, TeamRepo, git
from tests.ingest.test_periodic import disk_alert

TOKEN = TEAM_TOKEN
INTERVAL_S = 2.0
GOLDEN = REPO / "golden" / "runbooks"
PAGE = (REPO / "tests" / "fixtures" / "alertmanager" / "single_firing.json").read_bytes()
DISK_FULL = "postgres/PostgresDiskFull.md"
REDIS_DOWN = "redis/RedisDown.md"


@pytest.fixture()
def repo(tmp_path: Path) -> TeamRepo:
    team = TeamRepo(tmp_path / "server")
    for rel in (DISK_FULL, "postgres/PostgresReplicationLag.md", REDIS_DOWN):
        team.write(f"runbooks/{rel}", (GOLDEN / rel).read_text())
    team.commit_and_push("runbooks")
    return team


def settings_for(tmp_path: Path, redis_url: str, url: str, token: str) -> Settings:
    return Settings(
        models_dir=MODELS_DIR,
        qdrant_path=tmp_path / "qdrant",
        redis_url=redis_url,
        allow_unauthenticated=True,
        runbook_git_url=url,
        runbook_git_subdir="runbooks",
        runbook_git_token=SecretStr(token),
        runbook_git_dir=tmp_path / "data" / "git",
        sync_interval_s=INTERVAL_S,
        workers=1,
    )


def disk_page() -> dict[str, object]:
    alert = disk_alert()
    labels = {"alertname": alert.alert_name, "service": "postgres", "severity": "critical"}
    notes = {"summary": alert.summary, "description": alert.description}
    return one_alert_body(
        labels, notes, group_key="disk-full", receiver="test",
        starts_at="2026-03-01T12:00:00Z", generator_url="", fingerprint="disk",
    )


def indexed(services: Services, path: str) -> int:
    points, _ = services.index.scroll(Filter(must=(Equals(schema.F_PATH, path),)), 100)
    return len(points)


def served_revision(services: Services) -> str:
    matches = services.searcher.search(disk_alert()).matches
    return matches[0].revision if matches and matches[0].path == DISK_FULL else ""


class TestServiceFromGit:
    def test_push_reaches_the_next_page_force_push_prunes_revoked_token_keeps_serving(
        self,
        tmp_path: Path,
        redis_url: str,
        embedder: Embedder,
        server: GitHttpServer,
        repo: TeamRepo,
    ) -> None:
        settings = settings_for(tmp_path, redis_url, server.url(), TOKEN)
        pages = io.StringIO()
        services = Services.build(settings, embedder=embedder, delivery=ConsoleDelivery(pages))
        with capture_logs() as logs, TestClient(create_app(services)) as client:
            sync = services.sync
            assert sync is not None
            wait_for(lambda: sync.runs >= 1, what="the first sync")
            first = git(repo.work, "rev-parse", "HEAD")
            assert served_revision(services).startswith(f"{first}:")
            ready = client.get("/readyz").json()
            assert ready["ready"] and first[:12] in ready["checks"]["runbook_git"]["detail"]

            # A pushed edit is on the next page within SYNC_INTERVAL_S + 5 s.
            text = (GOLDEN / DISK_FULL).read_text()
            repo.write(f"runbooks/{DISK_FULL}", text + "\n## Afterwards\n\nFile a ticket.\n")
            pushed_at = time.monotonic()
            edited = repo.commit_and_push("disk full: file a ticket")
            wait_for(
                lambda: served_revision(services).startswith(f"{edited}:"),
                timeout_s=INTERVAL_S + 30,
                what="the pushed edit on a page",
            )
            delay = time.monotonic() - pushed_at
            print(f"push to page: {delay:.2f} s (SYNC_INTERVAL_S={INTERVAL_S:g})")
            assert delay <= INTERVAL_S + 5
            # ... and the page itself names the pushed commit.
            assert client.post("/webhook/alertmanager", json=disk_page()).status_code == 202
            wait_for(lambda: f"rev {edited[:8]}" in pages.getvalue(), what="the posted page")

            # A force-push that drops a runbook prunes it from the index.
            assert indexed(services, REDIS_DOWN) > 0
            repo.remove(f"runbooks/{REDIS_DOWN}")
            git(repo.work, "add", "-A")
            git(repo.work, "commit", "-q", "--amend", "-m", "rewritten without redis")
            git(repo.work, "push", "-q", "--force", "origin", "HEAD:main")
            wait_for(lambda: indexed(services, REDIS_DOWN) == 0, what="the dropped runbook pruned")
            assert indexed(services, DISK_FULL) > 0
            rewritten = git(repo.work, "rev-parse", "HEAD")

            # A revoked token: the service stays ready on the last good commit and says so.
            server.token = "rotated-away"
            (remote,) = sync.remotes
            wait_for(lambda: remote.failures >= 2, what="failed fetches")
            ready = client.get("/readyz")
            detail = ready.json()["checks"]["runbook_git"]["detail"]
            assert ready.status_code == 200, ready.text
            assert "RUNBOOK_GIT_TOKEN" in detail and rewritten[:12] in detail
            assert served_revision(services).startswith(f"{rewritten}:")
            failures = [
                line for line in client.get("/metrics").text.splitlines()
                if line.startswith("rbe_runbook_git_fetch_failures ")
            ]
            assert failures and float(failures[0].split()[1]) >= 2
            accepted = client.post("/webhook/alertmanager", content=PAGE)
            assert accepted.status_code == 202

            server.token = TOKEN
            wait_for(lambda: remote.failures == 0, what="the next good fetch")
            assert "failed" not in client.get("/readyz").json()["checks"]["runbook_git"]["detail"]
        events = [e["event"] for e in logs]
        assert "git.fetch_failed" in events and "git.fetch_recovered" in events
        assert not any(TOKEN in repr(e) for e in logs)
        prune = [e["summary"] for e in logs if e["event"] == "sync.done"]
        assert any("removed 1 deleted document(s)" in s for s in prune)

    def test_a_wrong_token_at_start_is_a_clear_error_and_the_service_stays_up(
        self, tmp_path: Path, redis_url: str, embedder: Embedder, server: GitHttpServer
    ) -> None:
        settings = settings_for(tmp_path, redis_url, server.url(), "ghp-wrong")
        services = Services.build(settings, embedder=embedder)
        with TestClient(create_app(services)) as client:
            sync = services.sync
            assert sync is not None
            wait_for(sync.first_done.is_set, what="the first sync")
            ready = client.get("/readyz")
            check = ready.json()["checks"]["runbook_git"]
            assert ready.status_code == 503 and not check["ok"]
            assert "authentication failed" in check["detail"]
            assert "RUNBOOK_GIT_TOKEN" in check["detail"] and "ghp-wrong" not in ready.text
            assert client.get("/healthz").status_code == 200
            accepted = client.post("/webhook/alertmanager", content=PAGE)
            assert accepted.status_code == 202
