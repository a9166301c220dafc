"""Shared fixtures: a real redis-server on a free port, the real offline models, settings."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis

from enricher import index
from enricher.embedding import Embedder
from enricher.settings import Settings
from ingest.cache import EmbeddingCache
from ingest.sync import Syncer, SyncOptions
from tests.fakeslack import FakeSlack, running_fake_slack

REPO = Path(__file__).resolve().parent.parent
MODELS_DIR = REPO / "models"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    """A throwaway redis-server process; `kill()` and `start()` let tests simulate outages."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.workdir = workdir
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail("redis-server is not installed: run `make setup`")
        self.proc = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.workdir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis.from_url(self.url)
        for _ in range(200):
            try:
                client.ping()
                client.close()
                return
            except redis.ConnectionError:
                time.sleep(0.02)
        pytest.fail("redis-server did not come up")

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


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
    client = redis.Redis.from_url(redis_server.url)
    client.flushall()
    client.close()
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
    client = index.open_client(settings)
    try:
        Syncer(client, settings.qdrant_collection, embedder, EmbeddingCache(None, "none")).run(
            SyncOptions(roots=[REPO / "golden" / "runbooks"], use_git=False)
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
