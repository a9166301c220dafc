"""Metric names read from rule expressions and runbook text (enricher.sources.promql)."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from enricher.sources.promql import (
    MAX_EXPRESSION_CHARS,
    MAX_NAMES,
    MAX_QUOTED_NAMES,
    expression,
    group_metric_names,
    metric_names,
    quoted_names,
)


def prometheus_url(expr: str) -> str:
    return "http://prometheus-0:9090/graph?" + urlencode({"g0.expr": expr, "g0.tab": "1"})


class TestMetricNames:
    @pytest.mark.parametrize(
        ("expr", "names"),
        [
            ("redis_up == 0", ("redis_up",)),
            (
                'rate(kafka_producer_record_error_total{service="orders"}[5m])'
                " / rate(kafka_producer_record_send_total[5m]) > 0.01",
                ("kafka_producer_record_error_total", "kafka_producer_record_send_total"),
            ),
            (
                "sum by (instance) (pg_stat_activity_count)"
                " / on (instance) group_left(job) pg_settings_max_connections > 0.9",
                ("pg_stat_activity_count", "pg_settings_max_connections"),
            ),
            (
                "histogram_quantile(0.99, sum by (le) (rate(envoy_rq_time_bucket[5m]))) > 1e3",
                ("envoy_rq_time_bucket",),
            ),
            ("slo:sli_error:ratio_rate1h > 14.4 * 0.001", ("slo:sli_error:ratio_rate1h",)),
            ("time() - cert_expiry_seconds < 86400 * 14", ("cert_expiry_seconds",)),
        ],
    )
    def test_names_in_order_of_appearance(self, expr: str, names: tuple[str, ...]) -> None:
        """Functions, label matchers, ranges, `by`/`on` lists and numbers are not names."""
        assert metric_names(expr) == names

    def test_offset_durations_are_not_names(self) -> None:
        """`offset 1w` is a duration, not a metric called `w`."""
        assert metric_names("declined_ratio > 2 * declined_ratio offset 1w") == ("declined_ratio",)

    def test_keywords_and_label_values_are_not_names(self) -> None:
        """Set operators and quoted values (even ones that look like metrics) are skipped."""
        expr = 'a and b unless c or bool d{job="not_a_metric"} == bool 1'
        assert metric_names(expr) == ("a", "b", "c", "d")

    def test_alerts_meta_series_names_nothing(self) -> None:
        """`ALERTS{alertname="X"}` (rules that alert on alerts) carries no metric of ours."""
        assert metric_names('ALERTS{alertname="SyntheticCheckFailed"}') == ()

    def test_each_name_once(self) -> None:
        assert metric_names("x / x + x") == ("x",)

    def test_only_the_head_of_a_huge_expression_is_read(self) -> None:
        """A sender cannot make reading expensive: the tail past the cap is ignored."""
        expr = "a " + " " * MAX_EXPRESSION_CHARS + "hidden_metric"
        assert metric_names(expr) == ("a",)

    @pytest.mark.parametrize("expr", ["", "(((", '"', "{}[]", "} ) ] {"])
    def test_garbage_gives_no_names_and_no_error(self, expr: str) -> None:
        assert metric_names(expr) == ()


class TestExpression:
    def test_reads_g0_expr(self) -> None:
        assert expression(prometheus_url("redis_up == 0")) == "redis_up == 0"

    @pytest.mark.parametrize("url", ["", "http://alertmanager:9093", "http://[::1", "not a url"])
    def test_no_expression(self, url: str) -> None:
        """A URL without a rule expression (or no URL at all) gives an empty expression."""
        assert expression(url) == ""


class TestGroupMetricNames:
    def test_union_over_the_group_first_seen_first(self) -> None:
        urls = [prometheus_url("a_total > 1"), prometheus_url("a_total > 1"), prometheus_url("b")]
        assert group_metric_names(urls) == ("a_total", "b")

    def test_capped(self) -> None:
        """A group of many different rules keeps the first MAX_NAMES names."""
        urls = [prometheus_url(f"metric_{i} > 0") for i in range(MAX_NAMES + 5)]
        names = group_metric_names(urls)
        assert names == tuple(f"metric_{i}" for i in range(MAX_NAMES))


class TestQuotedNames:
    def test_metric_shaped_identifiers_in_prose_and_code(self) -> None:
        """Names with an underscore count, wherever they stand; plain words and calls do not."""
        text = (
            "The lag metric pg_replication_lag_seconds keeps growing.\n"
            "```promql\nsum by (job) (rate(kafka_producer_record_error_total{job='x'}[5m]))\n"
            "job:http_errors:rate5m > 0.1\n```"
        )
        assert quoted_names(text) == (
            "pg_replication_lag_seconds",
            "kafka_producer_record_error_total",
            "job:http_errors:rate5m",
        )

    def test_each_name_once_first_seen_first(self) -> None:
        assert quoted_names("b_total a_total b_total") == ("b_total", "a_total")

    def test_underscores_alone_do_not_make_a_name(self) -> None:
        """`__name__` and `_` are label syntax, not metric names; a trailing colon is trimmed."""
        assert quoted_names("__name__ _ __ redis_up:") == ("redis_up",)

    def test_capped(self) -> None:
        text = " ".join(f"metric_{i}" for i in range(MAX_QUOTED_NAMES + 10))
        assert len(quoted_names(text)) == MAX_QUOTED_NAMES
