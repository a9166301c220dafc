"""Search against the real golden index: tiers, readings, leads, steps, and the CLI."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from enricher.alert import Alert
from enricher.feedback.store import FeedbackStore
from enricher.index import schema
from enricher.index.connect import open_index
from enricher.index.embedding import Embedder, SparseVector
from enricher.index.engine import EVERYTHING, Equals, Filter, IndexPoint
from enricher.search.decide import SearchConfig, sole_quoters
from enricher.search.links import url_keys
from enricher.search.searcher import QUOTE_SCAN_LIMIT, Searcher
from enricher.settings import Settings
from scripts.index_copy import copy_index
from tests.conftest import ENGINES, REPO, open_engine
from tests.helpers import make_vote

DEFAULT_CONFIG = SearchConfig.from_settings(Settings())


class TestSoleQuoters:
    def test_metrics_quoted_everywhere_vouch_for_nothing(
        self, embedder: Embedder, tmp_path: Path
    ) -> None:
        """Past QUOTE_SCAN_LIMIT quoting chunks the scan stops, and no runbook is vouched for
        (the chunks it did not read could be other runbooks quoting the same metric)."""
        index = open_index(Settings(qdrant_path=tmp_path))
        index.create(2)
        index.upsert(
            [
                IndexPoint(
                    id=schema.point_id("a", i),
                    dense=[1.0, 0.0],
                    sparse=SparseVector([], []),
                    payload={"doc_id": "a", "chunk_index": i, "metrics": ["m_x"]},
                )
                for i in range(QUOTE_SCAN_LIMIT)
            ]
        )
        searcher = Searcher(index, embedder, DEFAULT_CONFIG)
        assert searcher._quoting(["m_x"]) == []
        index.delete(Filter(must=(Equals("chunk_index", 0),)))
        quoting = searcher._quoting(["m_x"])
        assert sole_quoters(["m_x"], quoting) == {"a": ("m_x",)}
        index.close()


@pytest.fixture(scope="module", params=ENGINES)
def searcher(
    request: pytest.FixtureRequest,
    golden_index: Path,
    embedder: Embedder,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Searcher]:
    """The golden index on each engine: every search case here runs on both."""
    path = tmp_path_factory.mktemp("search") / "qdrant"
    copy_index(golden_index, path)
    index = open_engine(request.param, path)
    yield Searcher(index, embedder, DEFAULT_CONFIG)
    index.close()


def alert(name: str, service: str | None, summary: str, description: str = "") -> Alert:
    return Alert(
        source="alertmanager",
        status="firing",
        alert_name=name,
        service=service,
        severity="critical",
        summary=summary,
        description=description,
    )


class TestTiers:
    def test_exact_name_and_service(self, searcher: Searcher) -> None:
        """A runbook naming the alert, in the alert's service, is the answer."""
        result = searcher.search(
            alert("KafkaConsumerLagHigh", "kafka", "Consumer group lag is high")
        )
        assert (result.status, result.tier) == ("matched", "alert_name+service")
        assert result.matches[0].path == "kafka/KafkaConsumerLagHigh.md"

    def test_front_matter_alias_matches_by_name(self, searcher: Searcher) -> None:
        """An alert name listed in a runbook's front matter `alert_names` finds that runbook."""
        result = searcher.search(
            alert("KafkaConsumerGroupStalled", "kafka", "Group stopped consuming")
        )
        assert result.matches[0].path == "kafka/KafkaConsumerLagHigh.md"

    def test_a_trailing_alert_word_is_not_part_of_the_name(self, searcher: Searcher) -> None:
        """A rule named `KafkaConsumerLagHighAlert` pages with KafkaConsumerLagHigh.md, by name."""
        result = searcher.search(
            alert("KafkaConsumerLagHighAlert", "kafka", "Consumer group lag is high")
        )
        assert (result.status, result.tier) == ("matched", "alert_name+service")
        assert result.matches[0].path == "kafka/KafkaConsumerLagHigh.md"

    def test_a_severity_word_in_the_name_is_not_part_of_it(self, searcher: Searcher) -> None:
        """`critical_KafkaConsumerLagHigh` (severity critical) pages with its runbook by
        name; a name carrying another severity is not the same alert."""
        result = searcher.search(
            alert("critical_KafkaConsumerLagHigh", "kafka", "Consumer group lag is high")
        )
        assert (result.status, result.tier) == ("matched", "alert_name+service")
        assert result.matches[0].path == "kafka/KafkaConsumerLagHigh.md"
        other = searcher.search(
            alert("warning_KafkaConsumerLagHigh", "kafka", "Consumer group lag is high")
        )
        assert other.tier not in ("alert_name", "alert_name+service")

    @pytest.mark.parametrize(
        "url",
        [
            "https://git.example.com/ops/runbooks/blob/main/postgres/PostgresDiskFull.md",
            "https://runbooks.example.com/runbooks/postgres/postgresdiskfull",
            "https://wiki.example.com/alerts/PostgresDiskFull",
        ],
    )
    def test_a_runbook_url_that_resolves_is_the_match(self, searcher: Searcher, url: str) -> None:
        """By its last path segments against the runbook paths, or its last segment against
        the alert names, case-insensitively: even an alert that says nothing useful."""
        linked = replace(alert("TeamAlert42", None, "something is wrong"), runbook_url=url)
        result = searcher.search(linked)
        assert (result.status, result.tier) == ("matched", "runbook_url")
        assert result.matches[0].path == "postgres/PostgresDiskFull.md"
        assert result.unresolved_url is None

    def test_under_the_base_url_the_whole_rest_is_the_path(self) -> None:
        """RUNBOOK_BASE_URL names runbooks at any depth, percent-encoding undone; the last
        segments still count after it."""
        base = "https://docs.example.com/ops/runbooks/"
        url = base + "team%20a/postgres/PostgresDiskFull.md#mitigation"
        assert url_keys(url, base) == [
            (schema.F_PATH_KEY, "team a/postgres/postgresdiskfull"),
            (schema.F_PATH_KEY, "postgres/postgresdiskfull"),
            (schema.F_ALERT_KEYS, "mitigation"),
            (schema.F_ALERT_KEYS, "postgresdiskfull"),
        ]
        assert url_keys("https://elsewhere.example.com/a/b", base)[0] == (
            schema.F_PATH_KEY,
            "a/b",
        )

    def test_a_runbook_url_to_nothing_indexed_is_noted_and_searched(
        self, searcher: Searcher
    ) -> None:
        url = "https://wiki.example.com/runbooks/NoSuchRunbook"
        linked = replace(alert("KafkaConsumerLagHigh", "kafka", "lag"), runbook_url=url)
        result = searcher.search(linked)
        assert (result.status, result.tier) == ("matched", "alert_name+service")
        assert result.unresolved_url == url

    def test_unknown_service_label_still_finds_the_runbook(self, searcher: Searcher) -> None:
        """A service label that matches no folder does not hide a good match elsewhere."""
        result = searcher.search(
            alert(
                "DiskAlmostFull",
                "orders-db-primary",
                "Postgres data volume 93% full",
                "Writes fail with could not extend file",
            )
        )
        assert result.status == "matched"
        assert result.matches[0].path == "postgres/PostgresDiskFull.md"

    def test_off_topic_alert_is_no_match_without_leads(self, searcher: Searcher) -> None:
        """Nothing about office coffee machines is in the runbooks: no confident match, and
        no runbook named as a lead either."""
        result = searcher.search(
            alert("CoffeeMachineDescaling", "facilities", "Descale the coffee machine")
        )
        assert result.status == "no_match"
        assert result.matches == ()
        assert result.leads == ()

    def test_below_the_bar_the_closest_runbooks_are_leads(self, searcher: Searcher) -> None:
        """With nothing confident, the best few in fused order still reach on-call, marked
        as leads; a confident match carries none."""
        strict = Searcher(
            searcher.index,
            searcher.embedder,
            replace(searcher.config, threshold=1.01, global_threshold=1.01),
            searcher.model,
        )
        gateway = alert(
            "RouteServerErrors",
            "api-gateway",
            "5% of requests on /v1/orders fail with 502",
            "Since the deploy of orders-api the gateway answers 502 for 5% of requests.",
        )
        result = strict.search(gateway)
        assert (result.status, result.matches) == ("no_match", ())
        assert 1 <= len(result.leads) <= strict.config.max_leads
        assert result.leads[0].path == "api-gateway/HighErrorRate.md"
        assert searcher.search(alert("HighErrorRate", "api-gateway", "5xx")).leads == ()

    def test_a_left_out_runbook_is_never_returned(self, searcher: Searcher) -> None:
        """The eval's near misses: searched as if the runbook were not indexed."""
        disk = alert("PostgresDiskFull", "postgres", "Postgres data volume 93% full")
        _, ranking = searcher.search_ranked(
            disk, exclude="runbooks:postgres/PostgresDiskFull.md"
        )
        assert ranking is not None and ranking.candidates
        assert all(c.doc_id != "runbooks:postgres/PostgresDiskFull.md" for c in ranking.candidates)
        assert ranking.tier in ("service", "global")  # the name tier had nothing left

    def test_matches_are_one_per_document_with_readable_scores(self, searcher: Searcher) -> None:
        """At most three sections, from different runbooks, each scored in 0..1."""
        result = searcher.search(
            alert("PostgresReplicationLag", "postgres", "Replica behind primary")
        )
        paths = [m.path for m in result.matches]
        assert len(paths) == len(set(paths)) <= 3
        assert all(0 <= m.score <= 1 for m in result.matches)

    def test_a_match_carries_what_to_do(self, searcher: Searcher) -> None:
        """A symptom-worded alert matches a description section; the match also carries the
        runbook's first actionable section, unless the matched one already is one."""
        result = searcher.search(
            alert(
                "PostgresDiskFull",
                "postgres",
                "Postgres data volume is almost full",
                "The data disk of the primary is 95% full.",
            )
        )
        (top, *_) = result.matches
        assert top.actionable or top.steps is not None
        if top.steps is not None:
            assert top.steps.section != top.section
            assert top.steps.text

    def test_the_candidates_carry_the_features_they_were_scored_on(
        self, searcher: Searcher
    ) -> None:
        ranking = searcher.rank(alert("DiskAlmostFull", None, "Postgres data volume 93% full"))
        top = ranking.candidates[0]
        assert set(top.features) >= {"cosine", "content_coverage", "name_coverage"}
        assert top.score == pytest.approx(searcher.model.probability(top.features))

    def test_a_metric_quoted_by_one_runbook_vouches_for_it(self, searcher: Searcher) -> None:
        """The webhook-backlog metric is in one runbook; the Envoy latency histogram in two."""
        renamed = replace(
            alert("PSPCallbackQueueGrowing", None, "Provider callbacks not processed"),
            metrics=("payments_webhook_pending_events", "envoy_cluster_upstream_rq_time_bucket"),
        )
        vouched = searcher.rank(renamed).vouched
        assert vouched == {
            "runbooks:payments/PaymentWebhookBacklog.md": ("payments_webhook_pending_events",)
        }

    def test_an_alert_without_metrics_has_no_vouched_runbook(self, searcher: Searcher) -> None:
        assert searcher.rank(alert("OpsAlert7", None, "price changes not visible")).vouched == {}

    def test_index_has_the_payload_contract(self, searcher: Searcher) -> None:
        """Every point carries the fields search reads; first chunks carry the term sets,
        and the collection holds the corpus statistics."""
        points, _ = searcher.index.scroll(EVERYTHING, 1000)
        for point in points:
            payload = point.payload
            for field in (
                schema.F_DOC_ID,
                schema.F_PATH,
                schema.F_PATH_KEY,
                schema.F_TITLE,
                schema.F_SECTION,
                schema.F_TEXT,
                schema.F_ALERT_KEYS,
                schema.F_SERVICE_KEYS,
                schema.F_REVISION,
                schema.F_LAST_UPDATED,
                schema.F_METRICS,
                schema.F_ACTIONABLE,
                schema.F_URL,
                schema.F_PAGE_ID,
                schema.F_UNIT_ANCHOR,
            ):
                assert field in payload
            first = payload[schema.F_CHUNK_INDEX] == 0
            assert (schema.F_DOC_TERMS in payload) is first
            assert (schema.F_NAME_TERMS in payload) is first
        stats = schema.read_stats(searcher.index)
        units = {p.payload[schema.F_DOC_ID] for p in points}
        assert stats is not None and stats.documents == len(units) > 49


OPS_PAGE = "objectstore/operations.md"
OPS_URL = "https://git.example.com/acme/runbooks/blob/main/objectstore/operations.md"


class TestSectionsOfOnePage:
    """golden's objectstore/operations.md holds a section per alert: each is a runbook."""

    @pytest.mark.parametrize(
        ("name", "section", "number"),
        [
            ("ObjectStoreCapacityWarning", "objectstorecapacitywarning", 2),
            ("ObjectStoreCapacityCritical", "objectstorecapacitycritical", 3),
            ("ObjectStoreReplicationStopped", "objectstorereplicationstopped", 5),
        ],
    )
    def test_an_alert_named_like_a_heading_gets_that_section_and_its_own_fix(
        self, searcher: Searcher, name: str, section: str, number: int
    ) -> None:
        """`number`: the page's repeated "How to fix" headings are numbered by section, so
        the anchor of what the page shows says which section it came from."""
        result = searcher.search(alert(name, "objectstore", "object store alert firing"))
        assert (result.status, result.tier) == ("matched", "alert_name+service")
        top = result.matches[0]
        assert (top.path, top.unit_anchor) == (OPS_PAGE, section)
        assert top.doc_id == f"runbooks:{OPS_PAGE}#{section}"
        shown = top.steps.anchor if top.steps else top.anchor
        assert (top.actionable or top.steps is not None) and not top.no_steps
        assert shown.startswith("how-to-") and shown.endswith(f"-{number}")

    def test_the_fix_shown_is_never_another_alert_s(self, searcher: Searcher) -> None:
        """The investigate section of the quota alert is matched; the steps beside it come
        from the quota section, not from the first fix on the page."""
        result = searcher.search(alert("ObjectStoreBucketQuotaExceeded", None, "bucket full"))
        top = result.matches[0]
        assert top.unit_anchor == "objectstorebucketquotaexceeded"
        unit = {
            p.payload[schema.F_ANCHOR]
            for p in searcher.index.scroll(
                Filter(must=(Equals(schema.F_DOC_ID, top.doc_id),)), 100
            )[0]
        }
        assert top.anchor in unit
        assert top.steps is None or top.steps.anchor in unit

    def test_a_section_without_steps_says_so_and_borrows_none(self, searcher: Searcher) -> None:
        result = searcher.search(alert("ObjectStoreVersionSkew", "objectstore", "mixed releases"))
        top = result.matches[0]
        assert top.unit_anchor == "objectstoreversionskew"
        assert (top.steps, top.no_steps, top.actionable) == (None, True, False)

    @pytest.mark.parametrize(
        ("fragment", "section"),
        [
            ("objectstorescruberrors", "objectstorescruberrors"),
            ("ObjectStoreScrubErrors", "objectstorescruberrors"),
            # A subsection's anchor names the alert section holding it.
            ("how-to-fix-9", "objectstorescruberrors"),
        ],
    )
    def test_a_runbook_url_fragment_resolves_to_its_section(
        self, searcher: Searcher, fragment: str, section: str
    ) -> None:
        url = f"{OPS_URL}#{fragment}"
        linked = replace(alert("TeamAlert42", None, "disk trouble"), runbook_url=url)
        result = searcher.search(linked)
        assert (result.status, result.tier) == ("matched", "runbook_url")
        assert (result.matches[0].path, result.matches[0].unit_anchor) == (OPS_PAGE, section)

    def test_a_link_to_the_whole_page_leaves_the_alert_s_name_to_decide(
        self, searcher: Searcher
    ) -> None:
        """Without a fragment the link names every section: it decides nothing, and it is
        no link to nothing either (the page does not say so)."""
        named = alert("ObjectStoreNodeDown", "objectstore", "node gone")
        linked = replace(named, runbook_url=OPS_URL)
        result = searcher.search(linked)
        assert (result.tier, result.unresolved_url) == ("alert_name+service", None)
        assert result.matches[0].unit_anchor == "objectstorenodedown"

    def test_a_published_page_s_fragment_names_the_alert(self, searcher: Searcher) -> None:
        """A link to the page where it is published, elsewhere than its path: the anchor of
        the alert's heading is the alert's name."""
        url = "https://docs.example.com/operations/#objectstorenodedown"
        result = searcher.search(replace(alert("Pager7", None, "host gone"), runbook_url=url))
        assert result.tier == "runbook_url"
        assert result.matches[0].unit_anchor == "objectstorenodedown"

    def test_siblings_compete_as_separate_runbooks(self, searcher: Searcher) -> None:
        """A renamed alert is scored against the page's sections one by one."""
        ranking = searcher.rank(
            alert(
                "BlobShardChecksumMismatch",
                "blobstore",
                "weekly scrub found corrupted shards",
                "Silent corruption detected; objects still readable from the other shards.",
            )
        )
        units = [c.payload[schema.F_UNIT_ANCHOR] for c in ranking.candidates[:3]]
        assert units[0] == "objectstorescruberrors" and len(set(units)) == len(units)


class TestSearchCli:
    def test_prints_the_result_for_a_payload(self, golden_index: Path, tmp_path: Path) -> None:
        """`python -m enricher.search --payload FILE` prints the search result contract."""
        qdrant = tmp_path / "qdrant"
        copy_index(golden_index, qdrant)
        payload = REPO / "golden" / "samples" / "alertmanager-renamed-alert.json"
        env = {**os.environ, "QDRANT_PATH": str(qdrant), "MODELS_DIR": str(REPO / "models")}
        done = subprocess.run(
            [sys.executable, "-m", "enricher.search", "--payload", str(payload)],
            env=env,
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        assert set(result) == {"status", "tier", "matches", "leads", "likely", "feedback"}
        assert result["status"] == "matched"
        top = result["matches"][0]
        assert top["doc_id"] == "runbooks:postgres/PostgresReplicationLag.md"
        assert set(top) >= {
            "doc_id",
            "title",
            "section",
            "source",
            "score",
            "stale",
            "age_days",
            "text",
        }

    def test_bad_payload_is_a_clear_error(self, tmp_path: Path) -> None:
        """A body that is not a webhook fails with the reason, not a traceback."""
        bad = tmp_path / "bad.json"
        bad.write_text('{"hello": 1}')
        done = subprocess.run(
            [sys.executable, "-m", "enricher.search", "--payload", str(bad)],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 2
        assert "neither an Alertmanager" in done.stderr

    def test_explains_what_votes_did(
        self, golden_index: Path, tmp_path: Path, redis_url: str
    ) -> None:
        """With votes in Redis, the CLI shows the runbook they promoted and why."""
        doc = "runbooks:postgres/PostgresDiskFull.md"

        async def vote() -> None:
            client = aioredis.Redis.from_url(redis_url)
            alert = Alert("alertmanager", "firing", "PGReplicaBehind", "postgres", None, "", "")
            try:
                store = FeedbackStore(client, page_ttl_s=60)
                await store.vote(make_vote(alert, "postgres/PostgresDiskFull.md"))
            finally:
                await client.aclose()

        asyncio.run(vote())
        qdrant = tmp_path / "qdrant"
        copy_index(golden_index, qdrant)
        payload = REPO / "golden" / "samples" / "alertmanager-renamed-alert.json"
        env = {
            **os.environ,
            "QDRANT_PATH": str(qdrant),
            "MODELS_DIR": str(REPO / "models"),
            "REDIS_URL": redis_url,
        }
        done = subprocess.run(
            [sys.executable, "-m", "enricher.search", "--payload", str(payload)],
            env=env, cwd=REPO, capture_output=True, text=True, check=False,
        )
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        assert result["tier"] == "feedback"
        assert result["matches"][0]["doc_id"] == doc
        assert result["matches"][0]["feedback"] == "confirmed 1× for this alert"
        assert result["feedback"][doc]["effect"].startswith("promoted")
