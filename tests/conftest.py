"""Shared fixtures: a real redis-server on a free port, the real offline models, settings."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from enricher.index import schema
from enricher.index.embedding import Embedder
from enricher.settings import Settings
from ingest.cache import EmbeddingCache
from ingest.sync import Syncer, SyncOptions
from scripts.local_redis import RedisServer
from tests.fakeslack import FakeSlack, running_fake_slack

REPO = Path(__file__).resolve().parent.parent
MODELS_DIR = REPO / "models"


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.kill()


@pytest.fixture()
def redis_url(redis_server: RedisServer) -> Iterator[str]:
    """A clean database for each test."""
    if redis_server.proc is None:
        redis_server.start()
    redis_server.flush()
    yield redis_server.url


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return Embedder(Settings(models_dir=MODELS_DIR))


@pytest.fixture()
def settings(tmp_path: Path, redis_url: str) -> Settings:
    return Settings(
        models_dir=MODELS_DIR,
        qdrant_path=tmp_path / "qdrant",
        redis_url=redis_url,
        qdrant_collection="runbooks_test",
    )


@pytest.fixture()
def fake_slack() -> Iterator[FakeSlack]:
    with running_fake_slack(token="xoxb-test") as fake:
        yield fake


@pytest.fixture(scope="session")
def golden_index(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    """golden/runbooks indexed once into an embedded Qdrant folder (copy it before use:
    embedded Qdrant allows one client per folder)."""
    path = tmp_path_factory.mktemp("golden-qdrant")
    settings = Settings(models_dir=MODELS_DIR, qdrant_path=path)
    client = schema.open_client(settings)
    try:
        Syncer(client, settings.qdrant_collection, embedder, EmbeddingCache(None, "none")).run(
            SyncOptions.from_settings(Settings(), [REPO / "golden" / "runbooks"], use_git=False)
        )
    finally:
        client.close()
    return path


def wait_for(predicate: Callable[[], bool], timeout_s: float = 20.0, what: str = "") -> None:
    """Poll until `predicate()` holds. The timeout only bounds a hung test; it asserts no speed."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what or predicate}")
