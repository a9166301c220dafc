"""POST /webhook/git: a push event from GitHub (signed) or GitLab (token) fetches the pushed
repository at once, against a real git server on loopback, with SYNC_INTERVAL_S=300 so that
only the webhook can explain a fresh page."""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import SecretStr
from starlette.testclient import TestClient

from enricher.app import create_app
from enricher.index.embedding import Embedder
from enricher.service import Services
from enricher.settings import Settings
from enricher.slack.delivery import ConsoleDelivery
from tests.conftest import MODELS_DIR, REPO, wait_for
from tests.gitserver import TEAM_TOKEN, GitHttpServer, TeamRepo
from tests.ingest.test_periodic import disk_alert
from tests.ingest.test_periodic_git import DISK_FULL, disk_page

GOLDEN = REPO / "golden" / "runbooks"
SECRET = "whsec-runbooks-1"
INTERVAL_S = 300.0


@pytest.fixture()
def repo(tmp_path: Path) -> TeamRepo:
    team = TeamRepo(tmp_path / "server", name="ops")
    for rel in (DISK_FULL, "postgres/PostgresReplicationLag.md", "redis/RedisDown.md"):
        team.write(f"runbooks/{rel}", (GOLDEN / rel).read_text())
    team.commit_and_push("runbooks")
    return team


def github(body: dict[str, object], secret: str = SECRET) -> tuple[bytes, dict[str, str]]:
    raw = json.dumps(body).encode()
    signature = hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()
    return raw, {"X-GitHub-Event": "push", "X-Hub-Signature-256": f"sha256={signature}",
                 "Content-Type": "application/json"}


def push_event(url: str, ref: str = "refs/heads/main") -> dict[str, object]:
    return {"ref": ref, "repository": {"clone_url": url, "html_url": url.removesuffix(".git")}}


def served_revision(services: Services) -> str:
    matches = services.searcher.search(disk_alert()).matches
    return matches[0].revision if matches and matches[0].path == DISK_FULL else ""


def serving(services: Services, commit: str) -> Callable[[], bool]:
    return lambda: served_revision(services).startswith(f"{commit}:")


class TestPushWebhook:
    def test_a_push_reaches_the_page_at_once_five_times(
        self, tmp_path: Path, redis_url: str, embedder: Embedder, server: GitHttpServer,
        repo: TeamRepo,
    ) -> None:
        settings = Settings(
            models_dir=MODELS_DIR, qdrant_path=tmp_path / "qdrant", redis_url=redis_url,
            allow_unauthenticated=True, runbook_git_url=server.url("ops"),
            runbook_git_subdir="runbooks", runbook_git_token=SecretStr(TEAM_TOKEN),
            runbook_git_dir=tmp_path / "git", sync_interval_s=INTERVAL_S, workers=1,
            runbook_git_webhook_secrets=(SECRET,),
        )
        pages = io.StringIO()
        services = Services.build(settings, embedder=embedder, delivery=ConsoleDelivery(pages))
        delays: list[float] = []
        with TestClient(create_app(services)) as client:
            sync = services.sync
            assert sync is not None
            wait_for(lambda: sync.runs >= 1, what="the first sync")
            text = (GOLDEN / DISK_FULL).read_text()
            for run in range(5):
                repo.write(f"runbooks/{DISK_FULL}", text + f"\n## Afterwards\n\nStep {run}.\n")
                pushed_at = time.monotonic()
                commit = repo.commit_and_push(f"step {run}")
                body, headers = github(push_event(server.url("ops")))
                answer = client.post("/webhook/git", content=body, headers=headers)
                assert answer.status_code == 202, answer.text
                assert answer.json() == {"status": "fetching", "sources": ["ops"]}
                wait_for(serving(services, commit), timeout_s=60, what="the pushed edit")
                delays.append(time.monotonic() - pushed_at)
            assert client.post("/webhook/alertmanager", json=disk_page()).status_code == 202
            wait_for(lambda: f"rev {commit[:8]}" in pages.getvalue(), what="the page")
            assert "source: ops" in pages.getvalue()  # the remote's name, not its folder's
        print("push to page (s):", ", ".join(f"{d:.2f}" for d in delays))
        assert sync.runs >= 6  # one sync per push, none waited for the 300 s interval

    def test_signatures_tokens_and_other_repositories(
        self, tmp_path: Path, redis_url: str, embedder: Embedder, server: GitHttpServer,
    ) -> None:
        settings = Settings(
            models_dir=MODELS_DIR, qdrant_path=tmp_path / "qdrant", redis_url=redis_url,
            allow_unauthenticated=True, runbook_git_url=f"{server.url('ops')}?ref=main",
            runbook_git_token=SecretStr(TEAM_TOKEN), runbook_git_dir=tmp_path / "git",
            sync_interval_s=INTERVAL_S, workers=1, runbook_git_webhook_secrets=("old", SECRET),
        )
        services = Services.build(settings, embedder=embedder)
        with TestClient(create_app(services)) as client:
            body, headers = github(push_event(server.url("ops")), secret="wrong")
            refused = client.post("/webhook/git", content=body, headers=headers)
            assert refused.status_code == 401
            gitlab = {"X-Gitlab-Event": "Push Hook", "X-Gitlab-Token": SECRET}
            event = {"ref": "refs/heads/main", "project": {"git_http_url": server.url("ops")}}
            ok = client.post("/webhook/git", json=event, headers=gitlab)
            assert ok.status_code == 202 and ok.json()["sources"] == ["ops"]
            elsewhere = push_event("https://github.com/acme/other.git")
            body, headers = github(elsewhere)
            other = client.post("/webhook/git", content=body, headers=headers)
            assert other.status_code == 202 and other.json()["status"] == "ignored"
            body, headers = github(push_event(server.url("ops"), "refs/heads/dev"))
            branch = client.post("/webhook/git", content=body, headers=headers)
            assert branch.json()["status"] == "ignored"
            body, headers = github({"zen": "hi"})
            ping = client.post("/webhook/git", content=body,
                               headers={**headers, "X-GitHub-Event": "ping"})
            assert ping.json() == {"status": "pong"}
