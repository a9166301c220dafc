"""Links that open where teams publish: a source's RUNBOOK_LINK_TEMPLATE is each runbook's
link on the page, RUNBOOK_BASE_URL covers the other file sources, and a Confluence page
keeps its own URL whatever they say."""

from __future__ import annotations

import json
from pathlib import Path

from enricher.alert import Alert
from enricher.index import schema
from enricher.index.embedding import Embedder
from enricher.index.engine import EVERYTHING, Index
from enricher.result import Match, SearchResult
from enricher.settings import Settings
from enricher.slack.render import render_message
from ingest.naming import Root
from ingest.sync import SyncOptions
from tests.ingest.test_sync import DISK_FULL, make_syncer, write

DISK = "postgres/PostgresDiskFull.md"


def urls(index: Index) -> dict[str, str]:
    points, _ = index.scroll(EVERYTHING, 100, fields=[schema.F_SOURCE, schema.F_URL])
    return {str(p.payload[schema.F_SOURCE]): str(p.payload[schema.F_URL]) for p in points}


class TestTemplates:
    def test_each_source_links_where_its_template_says(
        self, tmp_path: Path, settings: Settings, index: Index, embedder: Embedder
    ) -> None:
        """`docs` is published by MkDocs; `wiki` has no template of its own and takes
        RUNBOOK_BASE_URL's."""
        for name in ("docs", "wiki"):
            write(tmp_path / name, DISK, DISK_FULL)
        configured = settings.model_copy(update={
            "runbook_link_template": "docs=https://docs.acme.com/rb/{path_noext}/#{anchor}",
            "runbook_base_url": "https://wiki.acme.com/runbooks",
        })
        roots = [Root(tmp_path / n, n, n) for n in ("docs", "wiki")]
        options = SyncOptions.from_settings(configured, roots, use_git=False)
        make_syncer(index, settings, embedder).run(options)
        assert urls(index) == {
            "docs": "https://docs.acme.com/rb/postgres/PostgresDiskFull/",
            "wiki": "https://wiki.acme.com/runbooks/postgres/PostgresDiskFull.md",
        }


def test_a_confluence_page_keeps_its_own_link_beside_a_base_url() -> None:
    page = "https://acme.atlassian.net/wiki/spaces/OPS/pages/1002/Kafka+lag"
    match = Match(
        doc_id="confluence@acme.atlassian.net:1002", title="Kafka lag", section="Check",
        source="confluence@acme.atlassian.net", path="OPS/1002", score=0.9, stale=False,
        age_days=3, text="Restart the consumer.", anchor="check", url=page,
    )
    alert = Alert(
        source="alertmanager", status="firing", alert_name="KafkaConsumerLagHigh",
        service="kafka", severity="warning", summary="Consumer lags", description="",
    )
    result = SearchResult(status="matched", tier="alert_name", matches=(match,))
    message = json.dumps(
        render_message(alert, result, runbook_base_url="https://runbooks.acme.com").to_kwargs()
    )
    assert f"{page}#check" in message and "runbooks.acme.com" not in message
