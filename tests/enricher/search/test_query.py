"""Query building and name normalization: pure functions, table-driven."""

from __future__ import annotations

import pytest

from enricher.alert import Alert
from enricher.search.names import alert_key_forms, name_key, service_keys, severity_bare
from enricher.search.query import build_query


def alert(**changes: object) -> Alert:
    values: dict[str, object] = {
        "source": "alertmanager",
        "status": "firing",
        "alert_name": "PostgresReplicationLag",
        "service": "postgres",
        "severity": "critical",
        "summary": "Replica is 84s behind",
        "description": "WAL replay is slow",
        "labels": {"pod": "db-2", "container": "patroni"},
    }
    values.update(changes)
    return Alert(**values)  # type: ignore[arg-type]


class TestNameKey:
    @pytest.mark.parametrize(
        ("value", "key"),
        [("checkout-api", "checkoutapi"), ("Checkout_API", "checkoutapi"), ("a.b c", "abc")],
    )
    def test_separators_and_case_are_ignored(self, value: str, key: str) -> None:
        """Spelling variants of one name share a key."""
        assert name_key(value) == key


class TestServiceKeys:
    @pytest.mark.parametrize(
        ("label", "expected"),
        [
            ("payments-api-prod", ("paymentsapiprod", "paymentsapi", "payments", "api")),
            ("postgres", ("postgres",)),
            ("kafka-eu-1", ("kafkaeu1", "kafka")),
            ("prod", ("prod",)),
            ("", ()),
        ],
    )
    def test_candidates_most_specific_first(self, label: str, expected: tuple[str, ...]) -> None:
        """Environment and region tokens are dropped; sub-runs of the rest are offered."""
        assert service_keys(label) == expected


class TestBuildQuery:
    def test_the_severity_label_spells_no_runbook_name(self) -> None:
        """`severity: warning` routes the page; read as a word it would spell part of
        every runbook named `…Warning`, for any alert at all."""
        query = build_query(alert(labels={"severity": "warning", "container": "patroni"}))
        assert "warning" not in query.alert_text.lower()
        assert "patroni" in query.alert_text
    def test_sparse_text_leads_with_the_exact_name(self) -> None:
        """BM25 gets the exact name token, its words, the service, the prose and labels."""
        query = build_query(alert())
        assert query.sparse_text == (
            "PostgresReplicationLag. Postgres Replication Lag. postgres. "
            "Replica is 84s behind. WAL replay is slow. patroni"
        )

    def test_dense_text_leads_with_what_the_alert_says(self) -> None:
        """The dense model reads the summary and description first, then the name in words
        and the service; label values go to BM25 only."""
        query = build_query(alert())
        assert query.dense_text == (
            "Replica is 84s behind. WAL replay is slow. Postgres Replication Lag. postgres"
        )

    def test_where_the_alert_fired_is_taken_out_of_the_prose(self) -> None:
        """Interpolated pod, namespace and cluster values say where, not what: they leave
        the prose; the service, the container and a state value stay."""
        query = build_query(
            alert(
                description="Pod shop/checkout-7d9f-x2 (patroni) in prod-eu-1 is in "
                "CrashLoopBackOff",
                labels={
                    "pod": "checkout-7d9f-x2",
                    "namespace": "shop",
                    "cluster": "prod-eu-1",
                    "container": "patroni",
                    "reason": "CrashLoopBackOff",
                },
            )
        )
        for where in ("checkout-7d9f-x2", "shop/", "prod-eu-1"):
            assert where not in query.dense_text + query.content_text
        assert "(patroni)" in query.dense_text
        assert "Crash Loop Back Off" in query.dense_text

    def test_states_and_rule_metrics_are_the_evidence(self) -> None:
        """What spells a runbook's name: the rule's metrics and the states the alert names
        (a matcher literal, a CamelCase label or word), as words; never the alert's own name."""
        url = (
            "http://prometheus/graph?g0.expr=kube_pod_container_status_waiting_reason"
            "%7Breason%3D%22CrashLoopBackOff%22%2Cjob%3D%22kube-state-metrics%22%7D"
        )
        query = build_query(
            alert(
                alert_name="PaymentsPodKeepsDying",
                link=url,
                metrics=("kube_pod_container_status_waiting_reason",),
                labels={"alertname": "PaymentsPodKeepsDying"},
            )
        )
        assert query.evidence_text == (
            "kube pod container status waiting reason Crash Loop Back Off"
        )
        assert "kube-state-metrics" not in query.evidence_text
        assert "Payments Pod Keeps Dying" in query.content_text

    def test_identifiers_in_prose_become_words_for_the_dense_model(self) -> None:
        """A PagerDuty title carrying the alert name reads as words to the dense model and
        keeps the exact token for BM25."""
        title = "OrderEventsConsumerBehind orders (order-projector critical)"
        query = build_query(
            alert(alert_name="OrderEventsConsumerBehind", summary=title, description="")
        )
        assert query.dense_text.startswith("Order Events Consumer Behind orders")
        assert "OrderEventsConsumerBehind" not in query.dense_text
        assert query.sparse_text.startswith("OrderEventsConsumerBehind")

    def test_rule_metrics_go_to_bm25_only(self) -> None:
        """Metric names of the rule expression reach BM25 exact and as words; the dense
        text stays the alert's prose and name."""
        query = build_query(alert(metrics=("pg_replication_lag_seconds",)))
        assert query.sparse_text.endswith(
            "pg_replication_lag_seconds. pg replication lag seconds"
        )
        assert "replication_lag" not in query.dense_text
        assert "seconds" not in query.dense_text

    def test_free_text_name_is_used_once(self) -> None:
        """A PagerDuty title that is both the name and the summary appears once."""
        title = "Refund notifications piling up"
        query = build_query(alert(alert_name=title, summary=title, description=""))
        assert query.dense_text.count(title) == 1
        assert query.sparse_text.count(title) == 1

    def test_instance_labels_stay_out_of_the_text(self) -> None:
        """Pod and instance names are noise for retrieval."""
        query = build_query(alert())
        assert "db-2" not in query.dense_text + query.sparse_text

    def test_filter_keys(self) -> None:
        """Alert name and service become normalized filter keys."""
        query = build_query(alert(service="pg-orders-primary"))
        assert query.alert_key == "postgresreplicationlag"
        assert "pgorders" in query.service_keys

    def test_name_keys_add_the_name_without_its_severity(self) -> None:
        """The exact-name tier also looks for the name without the alert's own severity."""
        query = build_query(
            alert(alert_name="warning_frontend_search_latency", severity="warning")
        )
        assert query.name_keys == (
            "warningfrontendsearchlatency",
            "warningfrontendsearchlatencyalert",
            "frontendsearchlatency",
            "frontendsearchlatencyalert",
        )
        assert build_query(alert()).name_keys == (
            "postgresreplicationlag",
            "postgresreplicationlagalert",
        )

    def test_a_service_name_label_stays_in_the_prose(self) -> None:
        """The service's name in an annotation is what failed, not where: it stays."""
        query = build_query(
            alert(
                service="frontend",
                summary="frontend: search latency high",
                labels={"service_name": "frontend", "pod": "frontend-7d9"},
            )
        )
        assert "frontend: search latency high" in query.sparse_text

    def test_no_service_means_no_service_keys(self) -> None:
        """PagerDuty annotations without a service still build a query."""
        query = build_query(alert(service=None, description=""))
        assert query.service_keys == ()
        assert query.dense_text.count("Replica is 84s behind") == 1


@pytest.mark.parametrize(
    ("key", "forms"),
    [
        ("southboundstale", ("southboundstale", "southboundstalealert")),
        ("quotabytesalert", ("quotabytesalert", "quotabytes")),
        ("alert", ("alert", "alertalert")),
        ("", ()),
    ],
)
def test_an_alert_name_also_stands_for_itself_with_or_without_a_trailing_alert(
    key: str, forms: tuple[str, ...]
) -> None:
    assert alert_key_forms(key) == forms


@pytest.mark.parametrize(
    ("name", "severity", "bare"),
    [
        pytest.param("warning_frontend_p99", "warning", "frontend_p99", id="prefix"),
        pytest.param("HighCPU-critical", "critical", "HighCPU", id="suffix"),
        pytest.param("CRITICAL: disk full", "critical", "disk full", id="any-case"),
        pytest.param("critical_frontend_p99", "warning", "", id="another-severity"),
        pytest.param("etcdSignerCAExpirationCritical", "critical", "", id="run-in-stays"),
        pytest.param("warning", "warning", "", id="nothing-left"),
        pytest.param("warning_x", None, "", id="no-severity"),
    ],
)
def test_a_name_without_its_own_severity_word(name: str, severity: str | None, bare: str) -> None:
    assert severity_bare(name, severity) == bare
