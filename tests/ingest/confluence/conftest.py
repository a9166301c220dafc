"""Fixtures of the Confluence tests: the recorded site, served by respx as Cloud or as Data
Center, and the source the service makes for it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import respx

from enricher.settings import Settings
from ingest.confluence.source import ConfluenceSource, from_settings
from tests.conftest import REPO
from tests.ingest.confluence.fakesite import (
    CLOUD,
    DATACENTER,
    FakePage,
    FakeSite,
    serve_cloud,
    serve_datacenter,
)

FIXTURES = REPO / "tests" / "fixtures" / "confluence"
DEPLOYMENTS = ("cloud", "datacenter")
DISK = "<h2>Symptoms</h2><p>The node's disk is {pct} percent full and pods are evicted.</p>"


def recorded(name: str) -> str:
    return (FIXTURES / f"{name}.xml").read_text()


def confluence_settings(settings: Settings, deployment: str) -> Settings:
    auth: dict[str, object] = (
        {"confluence_email": "bot@acme.test", "confluence_api_token": "cloud-token-1"}
        if deployment == "cloud"
        else {"confluence_personal_token": "dc-token-1"}
    )
    return Settings.model_validate(
        {
            **settings.model_dump(),
            "confluence_url": f"{CLOUD}/wiki" if deployment == "cloud" else DATACENTER,
            "confluence_spaces": "OPS,SRE",
            "confluence_label": "runbook",
            **auth,
        }
    )


@pytest.fixture()
def site() -> FakeSite:
    fake = FakeSite()
    fake.add(FakePage("1001", "OPS", "Postgres replication lag",
                      recorded("postgres-replication-lag"), labels=("runbook", "database")))
    fake.add(FakePage("1002", "OPS", "KafkaConsumerLagHigh", recorded("kafka-consumer-lag")))
    fake.add(FakePage("1003", "OPS", "Team lunch menu", "<p>Pizza on Fridays.</p>", labels=()))
    fake.add(FakePage("1004", "OPS", "Secret escalation", DISK.format(pct=99), restricted=True))
    fake.add(FakePage("2001", "SRE", "ディスク容量不足", recorded("disk-pressure-ja")))
    return fake


@pytest.fixture(params=DEPLOYMENTS)
def deployment(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture()
def router(site: FakeSite, deployment: str) -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_called=False) as mock:
        (serve_cloud if deployment == "cloud" else serve_datacenter)(mock, site, limit=2)
        yield mock


@pytest.fixture()
def waits() -> list[float]:
    return []


@pytest.fixture()
def source(
    settings: Settings, deployment: str, router: respx.MockRouter, waits: list[float]
) -> ConfluenceSource:
    """The source as the service makes it, waiting on Retry-After into `waits` (no sleep)."""
    made = from_settings(confluence_settings(settings, deployment), sleep=waits.append)
    assert made is not None
    return made


