"""A Confluence scope that does not exist is an error that prunes nothing, and a listing that
suddenly shrinks keeps its pages until the shrink is confirmed: against the respx site, with
the real sync, Redis, models and qdrant-edge."""

from __future__ import annotations

import pytest
import respx

from enricher.index.embedding import Embedder
from enricher.index.engine import Index
from enricher.settings import Settings
from ingest.cache import EmbeddingCache, connect
from ingest.confluence.source import ConfluenceSource, from_settings
from ingest.sync import Syncer, SyncOptions
from tests.ingest.confluence.conftest import DISK, confluence_settings
from tests.ingest.confluence.fakesite import FakePage, FakeSite
from tests.ingest.confluence.test_sync import payloads, run


def misconfigured(settings: Settings, deployment: str, **changes: object) -> ConfluenceSource:
    made = from_settings(
        Settings.model_validate(
            {**confluence_settings(settings, deployment).model_dump(), **changes}
        )
    )
    assert made is not None
    return made


class TestScopeThatDoesNotExist:
    @pytest.mark.parametrize("deployment", ["cloud"])
    def test_a_cloud_label_that_does_not_exist_prunes_nothing(
        self, index: Index, settings: Settings, embedder: Embedder, source: ConfluenceSource,
        router: respx.MockRouter, deployment: str,
    ) -> None:
        """The label lookup answers 404: each space is a source error naming the label, and
        the pages indexed under the right label stay."""
        run(index, settings, embedder, source)
        held = payloads(index)
        wrong = misconfigured(settings, deployment, confluence_label="runbok")
        report = run(index, settings, embedder, wrong)
        assert report.errors and all(
            "CONFLUENCE_LABEL 'runbok' does not exist" in e.reason for e in report.errors
        )
        assert report.removed_docs == 0 and payloads(index) == held

    @pytest.mark.parametrize("deployment", ["datacenter"])
    def test_a_data_center_space_key_that_does_not_exist_is_an_error(
        self, index: Index, settings: Settings, embedder: Embedder, source: ConfluenceSource,
        router: respx.MockRouter, deployment: str,
    ) -> None:
        """CQL finds nothing in a space that does not exist; the space lookup says why."""
        run(index, settings, embedder, source)
        held = payloads(index)
        wrong = misconfigured(settings, deployment, confluence_spaces="OPS,SER")
        report = run(index, settings, embedder, wrong)
        assert [e.path for e in report.errors] == [f"{wrong.name}/SER"]
        assert "CONFLUENCE_SPACES names SER, which does not exist" in report.errors[0].reason
        assert report.removed_docs == 0 and payloads(index) == held

    @pytest.mark.parametrize("deployment", ["datacenter"])
    def test_an_existing_space_with_no_page_in_scope_is_an_empty_listing(
        self, index: Index, settings: Settings, embedder: Embedder, site: FakeSite,
        router: respx.MockRouter, deployment: str,
    ) -> None:
        site.spaces["EMPTY"] = "3"
        empty = misconfigured(settings, deployment, confluence_spaces="EMPTY")
        report = run(index, settings, embedder, empty)
        assert report.errors == [] and payloads(index) == {}


class TestShrinkGuard:
    def test_a_listing_that_drops_most_pages_keeps_them_until_confirmed(
        self, index: Index, settings: Settings, embedder: Embedder, source: ConfluenceSource,
        site: FakeSite,
    ) -> None:
        """Six runbooks, then a listing that names two (a reindex): the four stay and the
        report says so; `--allow-prune` (a fraction of 1) then removes them."""
        for n in range(3):
            site.add(FakePage(f"105{n}", "OPS", f"NodeDiskFull{n}", DISK.format(pct=90 + n)))
        run(index, settings, embedder, source)
        assert len(payloads(index)) == 6
        for page_id in ("1050", "1051", "1052", "2001"):
            site.delete(page_id)
        report = run(index, settings, embedder, source)
        assert report.removed_docs == 0 and len(payloads(index)) == 6
        ((held),) = report.prune_held
        assert (held.source, held.dropped, held.of) == (source.name, 4, 6)
        assert f"kept 4 of 6 document(s) of {source.name}" in report.summary()

        cache = EmbeddingCache(connect(settings.redis_url), embedder.identity.dense)
        options = SyncOptions.from_settings(
            settings, (), use_git=False, sources=[source], allow_prune=True
        )
        confirmed = Syncer(index, embedder, cache).run(options)
        assert confirmed.removed_docs == 4 and confirmed.prune_held == ()
        assert len(payloads(index)) == 2
