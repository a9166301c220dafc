"""Confluence through the real sync: real Redis, real models, a real qdrant-edge shard, and
the site answered by respx in Atlassian's documented shapes, for Cloud and Data Center."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import httpx
import respx
from structlog.testing import capture_logs

from enricher.index.embedding import Embedder
from enricher.index.engine import EVERYTHING, Index
from enricher.settings import Settings
from ingest.cache import EmbeddingCache, connect
from ingest.confluence.source import ConfluenceSource, from_settings
from ingest.sync import Syncer, SyncOptions, SyncReport
from tests.ingest.confluence.conftest import DISK, confluence_settings, recorded
from tests.ingest.confluence.fakesite import CLOUD, DATACENTER, FakePage, FakeSite


def run(index: Index, settings: Settings, embedder: Embedder, *sources: ConfluenceSource,
        roots: tuple[Path, ...] = ()) -> SyncReport:
    cache = EmbeddingCache(connect(settings.redis_url), embedder.identity.dense)
    options = SyncOptions.from_settings(settings, roots, use_git=False, sources=sources)
    return Syncer(index, embedder, cache).run(options)


def payloads(index: Index) -> dict[str, dict[str, object]]:
    """First chunk's payload by doc id."""
    points, _ = index.scroll(EVERYTHING, 1000)
    return {str(p.payload["doc_id"]): dict(p.payload) for p in points
            if p.payload["chunk_index"] == 0}


def calls(router: respx.MockRouter) -> dict[str, int]:
    return {route.name: route.call_count for route in router.routes if route.name}


class TestFirstSync:
    def test_pages_become_runbooks_with_their_metadata(
        self, index: Index, settings: Settings, embedder: Embedder, source: ConfluenceSource,
        deployment: str,
    ) -> None:
        """Labelled pages of both spaces are indexed with title, page properties, labels,
        version, date and link; the unlabelled page is out of scope and the restricted one
        is skipped and counted."""
        with capture_logs() as logs:
            report = run(index, settings, embedder, source)
        assert report.errors == []
        assert report.indexed_docs == 3
        held = payloads(index)
        name = source.name
        cloud = deployment == "cloud"
        assert name == ("confluence@acme.atlassian.net" if cloud
                        else "confluence@confluence.example.com")
        assert set(held) == {f"{name}:1001", f"{name}:1002", f"{name}:2001"}
        lag = held[f"{name}:1001"]
        assert lag["source"] == name
        assert lag["title"] == "Postgres replication lag"
        assert lag["alert_names"] == ["PostgresReplicationLag", "PGReplicaBehind"]
        assert lag["services"] == ["postgres"]
        assert lag["revision"] == "1"
        assert lag["last_updated"] == datetime(2026, 9, 14, tzinfo=UTC).isoformat()
        assert lag["url"] == (
            f"{CLOUD}/wiki/spaces/OPS/pages/1001/Postgres+replication+lag" if cloud
            else f"{DATACENTER}/display/OPS/Postgres+replication+lag"
        )
        assert lag["path"] == "OPS/1001"
        kafka = held[f"{name}:1002"]
        assert kafka["alert_names"] == ["KafkaConsumerLagHigh"]
        assert kafka["last_updated"] == datetime(2026, 10, 2, 9, 30, tzinfo=UTC).isoformat()
        assert held[f"{name}:2001"]["title"] == "ディスク容量不足"
        scanned = [e for e in logs if e["event"] == "confluence.scanned"]
        assert [(e["space"], e["read"], e["skipped"]) for e in scanned] == [
            ("OPS", 2, 1), ("SRE", 1, 0)
        ]

    def test_without_a_label_every_page_of_the_spaces_is_in_scope(
        self, index: Index, settings: Settings, embedder: Embedder, deployment: str,
        router: respx.MockRouter, waits: list[float],
    ) -> None:
        """No CONFLUENCE_LABEL: the space listing itself (Cloud: /spaces/{id}/pages, Data
        Center: CQL without a label) names the scope, unlabelled pages included."""
        unlabelled = confluence_settings(settings, deployment).model_dump()
        unlabelled["confluence_label"] = None
        made = from_settings(Settings.model_validate(unlabelled), sleep=waits.append)
        assert made is not None
        report = run(index, settings, embedder, made)
        assert report.indexed_docs == 4
        assert f"{made.name}:1003" in payloads(index)
        assert calls(router)["listing"] == 3
        assert calls(router).get("label_listing", 0) == 0

    def test_listings_follow_pagination(
        self, index: Index, settings: Settings, embedder: Embedder, source: ConfluenceSource,
        router: respx.MockRouter, site: FakeSite, deployment: str,
    ) -> None:
        """The site lists 2 pages at a time: every page in scope is reached through
        `_links.next`, with one listing request per 2 pages."""
        for n in range(5):
            site.add(FakePage(str(3000 + n), "SRE", f"Runbook {n}", DISK.format(pct=90 + n)))
        report = run(index, settings, embedder, source)
        assert report.indexed_docs == 8
        listing = "label_listing" if deployment == "cloud" else "listing"
        assert calls(router)[listing] == 2 + 3  # OPS: 3 labelled pages by 2; SRE: 6 by 2


class TestIncremental:
    def test_a_resync_with_nothing_changed_lists_once_per_space_and_embeds_nothing(
        self, index: Index, settings: Settings, embedder: Embedder, source: ConfluenceSource,
        router: respx.MockRouter, site: FakeSite, deployment: str,
    ) -> None:
        """Second sync: one listing request per space (each fits one listing page), no page
        read, nothing chunked or embedded, nothing pruned."""
        site.delete("1004")  # leaves 2 pages in scope in OPS: one listing page of 2
        run(index, settings, embedder, source)
        before = calls(router)
        report = run(index, settings, embedder, source)
        after = calls(router)
        listing = "label_listing" if deployment == "cloud" else "listing"
        assert after[listing] - before[listing] == 2
        assert after["page"] == before["page"]
        assert sum(after.values()) - sum(before.values()) == 2
        assert (report.indexed_docs, report.embedded, report.removed_docs) == (0, 0, 0)
        assert report.skipped == 3

    def test_one_edited_page_re_embeds_only_that_page(
        self, index: Index, settings: Settings, embedder: Embedder, source: ConfluenceSource,
        router: respx.MockRouter, site: FakeSite,
    ) -> None:
        """A new version of one page: that page alone is read and re-indexed."""
        run(index, settings, embedder, source)
        before = calls(router)["page"]
        site.edit("2001", recorded("disk-pressure-ja") + "<h2>連絡先</h2><p>#sre-oncall へ。</p>")
        report = run(index, settings, embedder, source)
        assert calls(router)["page"] - before == 1
        assert report.indexed_docs == 1
        assert report.skipped == 2
        chunks = [p for p in index.scroll(EVERYTHING, 1000)[0]
                  if p.payload["doc_id"] == f"{source.name}:2001"]
        assert report.embedded == len(chunks)
        assert {p.payload["revision"] for p in chunks} == {"2"}
        assert any("#sre-oncall" in str(p.payload["text"]) for p in chunks)

    def test_deleted_and_unlabelled_pages_are_pruned(
        self, index: Index, settings: Settings, embedder: Embedder, source: ConfluenceSource,
        site: FakeSite,
    ) -> None:
        """A deleted page and one whose label was removed leave the index; the rest stay."""
        run(index, settings, embedder, source)
        site.delete("1002")
        site.pages["2001"].labels = ("archived",)
        report = run(index, settings, embedder, source)
        assert report.removed_docs == 2
        assert set(payloads(index)) == {f"{source.name}:1001"}


class TestFailures:
    def test_an_expired_token_keeps_what_is_indexed(
        self, index: Index, settings: Settings, embedder: Embedder, source: ConfluenceSource,
        site: FakeSite,
    ) -> None:
        """401 on the next sync: one source error that says what to fix (every space would
        say the same), nothing is pruned, and the pages indexed before are still there."""
        run(index, settings, embedder, source)
        site.delete("1002")
        site.status = 401
        report = run(index, settings, embedder, source)
        assert [e.path for e in report.errors] == [source.name]  # one, not one per space
        assert all("401" in e.reason and "TOKEN" in e.reason for e in report.errors)
        assert report.prune_skipped and report.removed_docs == 0
        assert len(payloads(index)) == 3

    def test_a_429_storm_is_ridden_out(
        self, index: Index, settings: Settings, embedder: Embedder, source: ConfluenceSource,
        site: FakeSite, waits: list[float],
    ) -> None:
        """Five 429s in a row, each asking for 2 s: the client waits as told and the sync
        indexes everything with no error."""
        site.throttle = 5
        report = run(index, settings, embedder, source)
        assert report.errors == [] and report.indexed_docs == 3
        assert waits == [2.0] * 5


    def test_an_answer_of_another_shape_is_a_source_error(
        self, index: Index, settings: Settings, embedder: Embedder, source: ConfluenceSource,
        router: respx.MockRouter, deployment: str,
    ) -> None:
        """A listing without versions (a proxy's page, another API) fails that space with a
        message, prunes nothing, and does not crash the sync."""
        run(index, settings, embedder, source)
        listing = "label_listing" if deployment == "cloud" else "listing"
        router.routes[listing].side_effect = None
        router.routes[listing].return_value = httpx.Response(
            200, json={"results": [{"id": "1001", "title": "no version here"}]})
        report = run(index, settings, embedder, source)
        assert len(report.errors) == 2
        assert "unexpected shape" in report.errors[0].reason
        assert report.prune_skipped and len(payloads(index)) == 3


class TestSideBySide:
    def test_a_folder_and_confluence_in_one_index(
        self, tmp_path: Path, index: Index, settings: Settings, embedder: Embedder,
        source: ConfluenceSource,
    ) -> None:
        """A folder runbook and Confluence pages are indexed together, each naming its
        source, and a Confluence re-sync never prunes the folder's runbooks."""
        root = tmp_path / "runbooks"
        (root / "node").mkdir(parents=True)
        (root / "node" / "NodeDiskFull.md").write_text(
            "# Node disk full\n\n## Mitigation\nDelete old images with `crictl rmi --prune`.\n")
        report = run(index, settings, embedder, source, roots=(root,))
        assert report.indexed_docs == 4
        sources = {str(p["source"]) for p in payloads(index).values()}
        assert sources == {"runbooks", source.name}
        again = run(index, settings, embedder, source)
        assert again.removed_docs == 0 and len(payloads(index)) == 4
