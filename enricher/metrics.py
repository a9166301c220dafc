"""Prometheus metrics, one registry per app instance (tests build many apps in one process)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)


class Metrics:
    def __init__(self) -> None:
        r = self.registry = CollectorRegistry()
        self.received = Counter(
            "rbe_webhooks_received", "Webhook requests received", ["source"], registry=r
        )
        self.rejected = Counter(
            "rbe_webhooks_rejected",
            "Webhook requests refused with a 4xx",
            ["source", "reason"],
            registry=r,
        )
        self.ignored = Counter(
            "rbe_webhooks_ignored",
            "Valid webhooks acknowledged without a page (2xx)",
            ["source", "reason"],
            registry=r,
        )
        self.deduplicated = Counter(
            "rbe_webhooks_deduplicated", "Deliveries dropped as repeats", ["source"], registry=r
        )
        self.degraded_intake = Counter(
            "rbe_intake_degraded", "Jobs accepted in memory because Redis was down", registry=r
        )
        self.refused = Counter(
            "rbe_intake_unavailable",
            "Webhooks answered 503: no Redis primary, or too few replicas confirmed the job",
            ["source"],
            registry=r,
        )
        self.enrichments = Counter(
            "rbe_enrichments", "Searches run for pages", ["status", "tier"], registry=r
        )
        self.slack_posts = Counter(
            "rbe_slack_calls", "Slack deliveries that succeeded", ["kind"], registry=r
        )
        self.slack_failures = Counter(
            "rbe_slack_failures", "Slack deliveries that failed", ["error"], registry=r
        )
        self.dead_letters = Counter(
            "rbe_dead_letters", "Jobs moved to the dead-letter stream", ["reason"], registry=r
        )
        self.gap_pages = Counter(
            "rbe_runbook_gap_pages",
            "Pages posted with no confident runbook match (`python -m enricher.gaps`)",
            registry=r,
        )
        self.feedback_votes = Counter(
            "rbe_feedback_votes", "Feedback clicks recorded", ["verdict", "outcome"], registry=r
        )
        self.queue_depth = Gauge("rbe_queue_depth", "Jobs waiting or in flight", registry=r)
        self.pending_age = Gauge(
            "rbe_queue_oldest_pending_seconds", "Age of the oldest unacknowledged job", registry=r
        )
        self.dead_letter_depth = Gauge(
            "rbe_dead_letter_depth", "Entries in the dead-letter stream", registry=r
        )
        self.git_fetch_failures = Gauge(
            "rbe_runbook_git_fetch_failures",
            "Fetches of RUNBOOK_GIT_URL failed in a row (0: the last one worked)",
            registry=r,
        )
        self.git_fetched_at = Gauge(
            "rbe_runbook_git_last_fetch_timestamp_seconds",
            "When RUNBOOK_GIT_URL was last fetched successfully",
            registry=r,
        )
        self.prune_held = Gauge(
            "rbe_runbook_prune_held_documents",
            "Documents kept although their source's listing dropped them: a shrink past "
            "PRUNE_MAX_FRACTION, waiting to be confirmed",
            registry=r,
        )
        self.search_seconds = Histogram(
            "rbe_search_seconds", "Runbook search latency", buckets=LATENCY_BUCKETS, registry=r
        )
        self.end_to_end_seconds = Histogram(
            "rbe_end_to_end_seconds",
            "From webhook accepted to Slack accepted",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )

    def render(self) -> bytes:
        return generate_latest(self.registry)
