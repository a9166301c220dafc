"""Shared fixtures: a real redis-server on a free port, the real offline models, settings."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from enricher.index.connect import open_index, open_local_mode
from enricher.index.embedding import Embedder
from enricher.index.engine import Index
from enricher.settings import Settings
from ingest.cache import EmbeddingCache
from ingest.sync import Syncer, SyncOptions
from scripts.local_redis import RedisServer
from tests.fakepagerduty import FakePagerDuty, running_fake_pagerduty
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


@pytest.fixture()
def fake_pd() -> Iterator[FakePagerDuty]:
    """The fake PagerDuty REST API (incident notes) on 127.0.0.1."""
    with running_fake_pagerduty() as fake:
        yield fake


ENGINES = ("edge", "local")


def open_engine(engine: str, qdrant_path: Path) -> Index:
    """The golden collection in a QDRANT_PATH folder, on qdrant-edge (the default engine)
    or on qdrant-client's local mode (the stand-in for a Qdrant server)."""
    collection = Settings().qdrant_collection
    if engine == "local":
        return open_local_mode(qdrant_path, collection)
    return open_index(Settings(qdrant_path=qdrant_path))


@pytest.fixture(scope="session")
def golden_index(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    """golden/runbooks indexed once into a QDRANT_PATH folder that holds it on both engines
    (copy it before use: each engine allows one handle per folder). It is synced into
    local mode, the layout of releases before qdrant-edge, and the upgrade path
    (enricher.index.connect) copies it into the edge shard, as it would on upgrade."""
    path = tmp_path_factory.mktemp("golden-qdrant")
    local = open_engine("local", path)
    try:
        Syncer(local, embedder, EmbeddingCache(None, "none")).run(
            SyncOptions.from_settings(Settings(), [REPO / "golden" / "runbooks"], use_git=False)
        )
    finally:
        local.close()
    open_engine("edge", path).close()
    return path


def wait_for(predicate: Callable[[], bool], timeout_s: float = 20.0, what: str = "") -> None:
    """Poll until `predicate()` holds. The timeout only bounds a hung test; it asserts no speed."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what or predicate}")
