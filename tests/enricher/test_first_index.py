"""A service started on an empty index holds its pages until the first sync has built it
(enricher.pipeline.first_index): a page sent in the first seconds gets its runbook, not a
"no confident match" made from half an index. Real service, real sync, fake Slack."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from enricher import service as service_module
from enricher.app import create_app
from enricher.index.embedding import Embedder
from enricher.pipeline.first_index import STILL_INDEXING
from enricher.service import BackgroundSync, Services, SyncFactory
from enricher.settings import Settings
from tests.conftest import MODELS_DIR, REPO, wait_for
from tests.fakeslack import FakeSlack
from tests.helpers import CHANNEL, am_alert, am_body

LAG = am_alert(
    "PostgresReplicationLag",
    "postgres",
    summary="replica replay is 3m behind the primary",
    description="Replication lag on the billing replica",
)


class HeldSync:
    """The real syncer, whose "first sync done" the test sets itself: the index fills
    at once, and the workers see it built only when the test says so."""

    def __init__(self, real: BackgroundSync) -> None:
        self.real = real
        self.first_done = threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


@pytest.fixture()
def held(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[HeldSync]]:
    made: list[HeldSync] = []
    real_factory = service_module.sync_factory()

    def factory() -> SyncFactory:
        def build(*args: Any) -> BackgroundSync:
            made.append(HeldSync(real_factory(*args)))
            return made[-1]

        return build

    monkeypatch.setattr(service_module, "sync_factory", factory)
    yield made


def settings(tmp_path: Path, redis_url: str, fake: FakeSlack, **extra: Any) -> Settings:
    values: dict[str, Any] = {
        "models_dir": MODELS_DIR,
        "qdrant_path": tmp_path / "qdrant",
        "redis_url": redis_url,
        "allow_unauthenticated": True,
        "runbook_roots": (str(REPO / "golden" / "runbooks"),),
        "sync_use_git": False,
        "workers": 1,
        "slack_bot_token": "xoxb-test",
        "slack_channel": CHANNEL,
        "slack_api_url": fake.url,
        **extra,
    }
    return Settings(**values)


def page_text(fake: FakeSlack) -> str:
    (call,) = fake.calls_to("chat.postMessage")
    return json.dumps(call.body)


class TestEmptyIndexAtStart:
    def test_a_page_sent_during_the_first_sync_waits_for_it_and_gets_its_runbook(
        self, tmp_path: Path, redis_url: str, fake_slack: FakeSlack, embedder: Embedder,
        held: list[HeldSync],
    ) -> None:
        services = Services.build(settings(tmp_path, redis_url, fake_slack), embedder=embedder)
        with TestClient(create_app(services)) as client:
            answer = client.post("/webhook/alertmanager", json=am_body(LAG))
            assert answer.json() == {"status": "queued"}
            (sync,) = held
            wait_for(lambda: sync.real.first_done.is_set(), timeout_s=120, what="the real sync")
            # Without the hold, the page would have gone out before the index was full.
            assert fake_slack.calls_to("chat.postMessage") == []
            sync.first_done.set()
            wait_for(lambda: bool(fake_slack.calls_to("chat.postMessage")), what="the page")
        text = page_text(fake_slack)
        assert "PostgresReplicationLag.md" in text
        assert "No confident runbook match" not in text

    def test_a_page_held_past_the_wait_says_the_runbooks_are_still_being_indexed(
        self, tmp_path: Path, redis_url: str, fake_slack: FakeSlack, embedder: Embedder,
        held: list[HeldSync],
    ) -> None:
        configured = settings(tmp_path, redis_url, fake_slack, first_sync_wait_s=0.2)
        services = Services.build(configured, embedder=embedder)
        with TestClient(create_app(services)) as client:
            answer = client.post("/webhook/alertmanager", json=am_body(LAG))
            assert answer.json() == {"status": "queued"}
            wait_for(lambda: bool(fake_slack.calls_to("chat.postMessage")), what="the page")
        text = page_text(fake_slack)
        assert "Runbook search is unavailable" in text
        assert STILL_INDEXING in text
        assert "No confident runbook match" not in text

    def test_a_restart_on_a_built_index_holds_nothing(
        self, tmp_path: Path, redis_url: str, fake_slack: FakeSlack, embedder: Embedder,
        held: list[HeldSync],
    ) -> None:
        configured = settings(tmp_path, redis_url, fake_slack)
        first = Services.build(configured, embedder=embedder)
        with TestClient(create_app(first)):
            wait_for(lambda: held[0].real.first_done.is_set(), timeout_s=120, what="the sync")
        again = Services.build(configured, embedder=embedder)
        assert again.pool.first_index is None
        with TestClient(create_app(again)) as client:
            answer = client.post("/webhook/alertmanager", json=am_body(LAG))
            assert answer.json() == {"status": "queued"}
            wait_for(lambda: bool(fake_slack.calls_to("chat.postMessage")), what="the page")
        assert "PostgresReplicationLag.md" in page_text(fake_slack)
