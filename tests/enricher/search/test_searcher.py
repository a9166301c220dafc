"""Search: the decision rule (pure) and the tiers against the real golden index."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from qdrant_client import QdrantClient, models

from enricher.alert import Alert
from enricher.index import schema
from enricher.index.embedding import Embedder
from enricher.search.decide import Candidate, Ranking, SearchConfig, decide, leads, sole_quoters
from enricher.search.searcher import QUOTE_SCAN_LIMIT, Searcher
from enricher.settings import Settings
from quality.cases import Case, parse_case
from tests.conftest import REPO

DEFAULT_CONFIG = SearchConfig.from_settings(Settings())

CONFIG = SearchConfig(
    threshold=0.6, global_threshold=0.65, stale_after_days=180, margin_floor=0.35, margin=0.15
)


def ranking(tier: str, *scores: float, runner_up: float = 0.0, vouched: str = "") -> Ranking:
    """Candidates d0, d1, ... with `scores`; `vouched` names the one a metric vouches for."""
    cands = tuple(
        Candidate({"doc_id": f"d{i}", "path": f"p{i}.md"}, s) for i, s in enumerate(scores)
    )
    evidence = {vouched: ("m_total",)} if vouched else {}
    return Ranking(cands, tier, runner_up, evidence)  # type: ignore[arg-type]


class TestDecide:
    @pytest.mark.parametrize(
        ("rank", "chosen"),
        [
            (ranking("service", 0.7, 0.62, 0.61, 0.6), ["d0", "d1", "d2"]),
            (ranking("service", 0.59, 0.2, runner_up=0.5), []),
            (ranking("global", 0.62, runner_up=0.58), []),
            (ranking("global", 0.66, runner_up=0.6), ["d0"]),
            (ranking("global", 0.5, runner_up=0.3), ["d0"]),
            (ranking("global", 0.34, runner_up=0.0), []),
            (ranking("alert_name", 0.5, runner_up=0.0), []),
            (ranking("service"), []),
        ],
    )
    def test_threshold_then_clear_winner(self, rank: Ranking, chosen: list[str]) -> None:
        """Above the tier's bar, up to top_k; below it, only a clear winner over the floor."""
        assert [c.doc_id for c in decide(rank, CONFIG)] == chosen

    @pytest.mark.parametrize(
        ("rank", "chosen"),
        [
            (ranking("global", 0.5, 0.48, runner_up=0.48, vouched="d0"), ["d0"]),
            (ranking("service", 0.4, 0.39, runner_up=0.39, vouched="d0"), ["d0"]),
            # Evidence for the runner-up never promotes it over the top candidate.
            (ranking("global", 0.5, 0.48, runner_up=0.48, vouched="d1"), []),
            (ranking("global", 0.3, 0.1, runner_up=0.1, vouched="d0"), []),
            (ranking("alert_name", 0.5, vouched="d0"), []),
        ],
    )
    def test_the_only_runbook_quoting_the_metric_is_taken(
        self, rank: Ranking, chosen: list[str]
    ) -> None:
        """Below the bar and without a clear lead, the top runbook is still taken (over the
        floor, in the service and global tiers) when no other runbook quotes its metric."""
        assert [c.doc_id for c in decide(rank, CONFIG)] == chosen

    def test_metric_evidence_can_be_switched_off(self) -> None:
        rank = ranking("global", 0.5, 0.48, runner_up=0.48, vouched="d0")
        assert decide(rank, replace(CONFIG, metric_evidence=False)) == ()


class TestLeads:
    def test_closest_runbooks_over_the_floor_best_first(self) -> None:
        """A no-match page names at most `max_leads` runbooks, none under the floor."""
        rank = ranking("service", 0.55, 0.5, 0.4, runner_up=0.5)
        assert decide(rank, CONFIG) == ()
        assert [c.doc_id for c in leads(rank, CONFIG)] == ["d0", "d1"]
        assert [c.doc_id for c in leads(rank, replace(CONFIG, max_leads=3))] == ["d0", "d1", "d2"]

    def test_nothing_under_the_floor_is_named(self) -> None:
        assert leads(ranking("global", 0.34, 0.2), CONFIG) == ()
        assert leads(ranking("global"), CONFIG) == ()

    def test_leads_can_be_switched_off(self) -> None:
        assert leads(ranking("service", 0.55, 0.5), replace(CONFIG, max_leads=0)) == ()


class TestSoleQuoters:
    def test_a_metric_in_one_document_vouches_for_it(self) -> None:
        """Chunks of one document count once; a metric in two documents vouches for none."""
        payloads = [
            {"doc_id": "a", "metrics": ["m_one", "m_shared"]},
            {"doc_id": "a", "metrics": ["m_one"]},
            {"doc_id": "b", "metrics": ["m_shared", "m_other"]},
        ]
        assert sole_quoters(["m_one", "m_shared", "m_other"], payloads) == {
            "a": ("m_one",),
            "b": ("m_other",),
        }
        assert sole_quoters(["m_shared"], payloads) == {}
        assert sole_quoters(["m_missing"], payloads) == {}

    def test_metrics_quoted_everywhere_vouch_for_nothing(self, embedder: Embedder) -> None:
        """Past QUOTE_SCAN_LIMIT quoting chunks the scan stops, and no runbook is vouched for
        (the chunks it did not read could be other runbooks quoting the same metric)."""
        client = QdrantClient(":memory:")
        client.create_collection("c", vectors_config={})
        client.upsert(
            "c",
            [
                models.PointStruct(id=i, vector={}, payload={"doc_id": "a", "metrics": ["m_x"]})
                for i in range(QUOTE_SCAN_LIMIT)
            ],
        )
        searcher = Searcher(client, "c", embedder, DEFAULT_CONFIG)
        assert searcher._sole_quoters(["m_x"]) == {}
        client.delete("c", points_selector=models.PointIdsList(points=[0]))
        assert searcher._sole_quoters(["m_x"]) == {"a": ("m_x",)}


@pytest.fixture(scope="module")
def searcher(
    golden_index: Path, embedder: Embedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Searcher]:
    path = tmp_path_factory.mktemp("search") / "qdrant"
    shutil.copytree(golden_index, path)
    client = QdrantClient(path=str(path))
    yield Searcher(client, Settings().qdrant_collection, embedder, DEFAULT_CONFIG)
    client.close()


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
        """A runbook naming the alert, in the alert's service, is found in the first tier."""
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

    def test_off_topic_alert_is_no_match(self, searcher: Searcher) -> None:
        """Nothing about office coffee machines is in the runbooks: no confident match."""
        result = searcher.search(
            alert("CoffeeMachineDescaling", "facilities", "Descale the coffee machine")
        )
        assert result.status == "no_match"
        assert result.matches == ()
        assert result.leads == ()

    def test_a_near_tie_names_the_closest_runbooks_as_leads(self, searcher: Searcher) -> None:
        """With nothing confident, the runbooks over the floor still reach on-call, marked as
        leads; a confident match carries none."""
        strict = Searcher(
            searcher.client,
            searcher.collection,
            searcher.embedder,
            replace(searcher.config, threshold=1.0, global_threshold=1.0, margin=1.0),
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
        assert all(m.score >= strict.config.margin_floor for m in result.leads)
        assert searcher.search(alert("HighErrorRate", "api-gateway", "5xx")).leads == ()

    def test_matches_are_one_per_document_with_readable_scores(self, searcher: Searcher) -> None:
        """At most three sections, from different runbooks, each scored in 0..1."""
        result = searcher.search(
            alert("PostgresReplicationLag", "postgres", "Replica behind primary")
        )
        paths = [m.path for m in result.matches]
        assert len(paths) == len(set(paths)) <= 3
        assert all(0 <= m.score <= 1 for m in result.matches)

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

    def test_match_taken_on_metric_evidence_names_the_metric(self, searcher: Searcher) -> None:
        """A renamed crash-loop alert (golden dev case) leads without a clear margin and below
        the global bar; it is matched because only its runbook quotes the rule's metric."""
        (line,) = [
            line
            for line in (REPO / "golden" / "cases.jsonl").read_text().splitlines()
            if '"renamed-checkout-pods-restarting-truncated"' in line
        ]
        case = parse_case(line, 1)
        assert isinstance(case, Case)
        result = searcher.search(case.alert)
        assert (result.status, result.tier) == ("matched", "global")
        (top,) = result.matches
        assert top.path == "kubernetes/KubePodCrashLooping.md"
        assert top.score < DEFAULT_CONFIG.global_threshold
        assert top.quoted_metrics == ("kube_pod_container_status_restarts_total",)

    def test_an_alert_without_metrics_has_no_vouched_runbook(self, searcher: Searcher) -> None:
        assert searcher.rank(alert("OpsAlert7", None, "price changes not visible")).vouched == {}

    def test_index_has_the_payload_contract(self, searcher: Searcher) -> None:
        """Every point carries the fields search reads."""
        points, _ = searcher.client.scroll(searcher.collection, limit=1, with_payload=True)
        payload = points[0].payload or {}
        for field in (
            schema.F_DOC_ID,
            schema.F_PATH,
            schema.F_TITLE,
            schema.F_SECTION,
            schema.F_TEXT,
            schema.F_ALERT_KEYS,
            schema.F_SERVICE_KEYS,
            schema.F_REVISION,
            schema.F_LAST_UPDATED,
            schema.F_METRICS,
        ):
            assert field in payload


class TestSearchCli:
    def test_prints_the_result_for_a_payload(self, golden_index: Path, tmp_path: Path) -> None:
        """`python -m enricher.search --payload FILE` prints the search result contract."""
        qdrant = tmp_path / "qdrant"
        shutil.copytree(golden_index, qdrant)
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
        assert set(result) == {"status", "tier", "matches", "leads"}
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
