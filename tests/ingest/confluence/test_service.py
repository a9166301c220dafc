"""Confluence in the service's own sync loop (`make run`) and in `python -m ingest`: a page
edited while the service serves reaches search, served beside a folder runbook, and a
Confluence match names its source."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import respx
import structlog
from pydantic import SecretStr
from starlette.testclient import TestClient
from structlog.testing import capture_logs

from enricher.alert import Alert
from enricher.app import create_app
from enricher.index.connect import open_index
from enricher.index.embedding import Embedder
from enricher.index.engine import EVERYTHING
from enricher.service import Services
from enricher.settings import Settings
from ingest.__main__ import main as ingest_main
from tests.conftest import MODELS_DIR, REPO, wait_for
from tests.ingest.confluence.fakesite import (
    DATACENTER,
    FakePage,
    FakeSite,
    serve_datacenter,
)

FIXTURES = REPO / "tests" / "fixtures" / "confluence"
GOLDEN = REPO / "golden" / "runbooks"
NAME = "confluence@confluence.example.com"


@pytest.fixture()
def site() -> Iterator[FakeSite]:
    fake = FakeSite(spaces={"OPS": "1", "SRE": "2"})
    fake.add(FakePage("1002", "OPS", "KafkaConsumerLagHigh",
                      (FIXTURES / "kafka-consumer-lag.xml").read_text()))
    with respx.mock(assert_all_called=False) as router:
        serve_datacenter(router, fake)
        yield fake


def kafka_alert() -> Alert:
    return Alert(
        source="alertmanager", status="firing", alert_name="KafkaConsumerLagHigh",
        service="kafka", severity="warning", summary="Consumer group orders-consumer lags",
        description="Lag on the orders topic keeps growing",
    )


def disk_alert() -> Alert:
    return Alert(
        source="alertmanager", status="firing", alert_name="PostgresDiskFull",
        service="postgres", severity="critical", summary="Postgres data volume 95% full",
        description="Writes fail with could not extend file",
    )


class TestServiceLoop:
    def test_confluence_and_a_folder_are_served_side_by_side(
        self, tmp_path: Path, redis_url: str, embedder: Embedder, site: FakeSite
    ) -> None:
        """The service syncs Confluence with RUNBOOK_ROOTS every SYNC_INTERVAL_S; a page
        matches its alert and names its source; a page edited while it serves is re-read,
        and re-syncs of unchanged pages embed nothing. When the token is refused, /readyz
        says so and the service keeps serving the pages it has."""
        root = tmp_path / "runbooks"
        (root / "postgres").mkdir(parents=True)
        shutil.copy(GOLDEN / "postgres/PostgresDiskFull.md", root / "postgres")
        settings = Settings(
            models_dir=MODELS_DIR, qdrant_path=tmp_path / "qdrant", redis_url=redis_url,
            allow_unauthenticated=True, runbook_roots=(str(root),), sync_interval_s=1,
            sync_use_git=False, workers=1, confluence_url=DATACENTER,
            confluence_spaces=("OPS", "SRE"), confluence_personal_token=SecretStr("dc-token-1"),
        )
        services = Services.build(settings, embedder=embedder)
        assert services.sync is not None
        with capture_logs() as logs, TestClient(create_app(services)) as client:
            sync = services.sync
            wait_for(lambda: sync.runs >= 2, what="two syncs")
            assert client.get("/readyz").json()["checks"]["sync"]["ok"]
            top = services.searcher.search(kafka_alert()).matches[0]
            assert (top.source, top.title) == (NAME, "KafkaConsumerLagHigh")
            folder = services.searcher.search(disk_alert()).matches[0]
            assert (folder.source, folder.path) == ("runbooks", "postgres/PostgresDiskFull.md")
            site.edit("1002", "<h2>Check</h2><p>Restart the orders-consumer deployment.</p>")
            wait_for(
                lambda: "Restart the orders-consumer" in services.searcher.search(
                    kafka_alert()).matches[0].text,
                what="the edited page in search",
            )
            site.status = 401
            runs = sync.runs
            wait_for(lambda: sync.runs > runs + 1, what="a sync with the token refused")
            check = client.get("/readyz").json()["checks"]["sync"]
            assert check["ok"] and "answered 401" in check["detail"], check
            assert check["detail"].endswith("and set CONFLUENCE_PERSONAL_TOKEN")  # not cut
            assert "dc-token-1" not in check["detail"]
            assert services.searcher.search(kafka_alert()).matches[0].source == NAME
        summaries = [e["summary"] for e in logs if e["event"] == "sync.done"]
        assert summaries[0].startswith("indexed 2 document(s)")
        assert summaries[1].startswith("indexed 0 document(s)")
        assert summaries[1].endswith("embedded 0 chunk(s) (0 from cache)")
        assert any(s.startswith("indexed 1 document(s)") for s in summaries[2:])


def confluence_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, redis_url: str) -> None:
    """The environment `python -m ingest` reads: a Data Center site and its token."""
    for name, value in {
        "MODELS_DIR": str(MODELS_DIR), "QDRANT_PATH": str(tmp_path / "qdrant"),
        "REDIS_URL": redis_url, "CONFLUENCE_URL": DATACENTER,
        "CONFLUENCE_SPACES": "OPS,SRE", "CONFLUENCE_PERSONAL_TOKEN": "dc-token-1",
    }.items():
        monkeypatch.setenv(name, value)


@pytest.fixture()
def cli_logging() -> Iterator[None]:
    """The CLI points structlog and the root logger at the (captured) stderr of its test;
    put back what was there, so later tests do not write to a closed capture."""
    saved = structlog.get_config()
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    structlog.configure(**saved)
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.mark.usefixtures("cli_logging")
class TestCommandLine:
    def test_python_m_ingest_syncs_confluence_alone(
        self, tmp_path: Path, redis_url: str, site: FakeSite,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    ) -> None:
        """With CONFLUENCE_* set, `python -m ingest` needs no --root; its second run reads
        no page and embeds nothing."""
        confluence_env(monkeypatch, tmp_path, redis_url)
        assert ingest_main([]) == 0
        assert ingest_main([]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert lines[0].startswith("indexed 1 document(s)")
        assert lines[1] == (
            "indexed 0 document(s) as 0 chunk(s); skipped 1 unchanged; pruned 0 stale "
            "chunk(s); removed 0 deleted document(s); embedded 0 chunk(s) (0 from cache)"
        )
        index = open_index(Settings(qdrant_path=tmp_path / "qdrant"))
        try:
            sources = {p.payload["source"] for p in index.scroll(EVERYTHING, 100)[0]}
        finally:
            index.close()
        assert sources == {NAME}

    def test_a_refused_token_exits_1_and_says_what_to_do(
        self, tmp_path: Path, redis_url: str, site: FakeSite,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    ) -> None:
        """401: exit status 1, the error names CONFLUENCE_PERSONAL_TOKEN, the token is not
        in any log line."""
        site.status = 401
        confluence_env(monkeypatch, tmp_path, redis_url)
        assert ingest_main([]) == 1
        logged = capsys.readouterr().err  # the CLI configures its own log output
        errors = [line for line in logged.splitlines() if "ingest.source_error" in line]
        assert len(errors) == 1 and "answered 401" in errors[0]  # one, not one per space
        assert "set CONFLUENCE_PERSONAL_TOKEN" in errors[0]
        assert "dc-token-1" not in logged
        assert "HTTP Request" not in logged  # no httpx line per request
