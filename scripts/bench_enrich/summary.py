"""One index size's measurements turned into its JSON result: distributions, the breakdown
of the end-to-end time, Qdrant calls by kind, and the burst."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from scripts.bench_enrich.timing import Probe
from scripts.benchlib import dist


def summarize(
    points: int, meta: dict[str, Any], probes: list[Probe], burst_probes: list[Probe],
    acks: list[float], e2e: list[float], slack_leg: list[float], render_s: list[float],
    burst: dict[str, Any], burst_posted: int, burst_window: float, drained: bool,
    burst_threads: int, workers: int, failures: list[str],
) -> dict[str, Any]:
    search_s = [p.total_s for p in probes]
    qdrant_s = [sum(t for _, t in p.qdrant) for p in probes]
    embed_s = [p.dense_s + p.sparse_s for p in probes]
    calls_by_kind: Counter[str] = Counter(kind for p in probes for kind, _ in p.qdrant)
    per_call: dict[str, list[float]] = {}
    for p in probes:
        for kind, seconds in p.qdrant:
            per_call.setdefault(kind, []).append(seconds)
    outcomes = Counter(f"{p.result.status}/{p.result.tier}" for p in probes if p.result)
    residual = [
        total - ack - search - render - leg
        for total, ack, search, render, leg in zip(e2e, acks, search_s, render_s, slack_leg,
                                                    strict=True)
    ]
    mean_e2e = sum(e2e) / len(e2e) if e2e else 1.0

    def share(values: Sequence[float]) -> float:
        return round(100 * (sum(values) / len(values)) / mean_e2e, 1) if values else 0.0

    breakdown = {
        "ack (POST to 202)": acks,
        "queue, ledger, thread hops (residual)": residual,
        "query embedding, dense": [p.dense_s for p in probes],
        "query embedding, sparse": [p.sparse_s for p in probes],
        "Qdrant calls (query_points, scroll), all": qdrant_s,
        "reader (the searches that read)": [p.reader_s for p in probes],
        "rest of search (query, rerank, matches)": [
            s - q - e - p.reader_s
            for s, q, e, p in zip(search_s, qdrant_s, embed_s, probes, strict=True)
        ],
        "render": render_s,
        "Slack request (post start to fake receipt)": slack_leg,
    }
    # The floor a page cannot go below: one query embedding and one hybrid query.
    hybrid = per_call.get("hybrid unfiltered", [])
    floor_s = (_p50(embed_s) + _p50(hybrid)) if hybrid else 0.0
    return {
        "chunks": points,
        "physical_limit_ms": {
            "query_embedding_p50": round(1000 * _p50(embed_s), 2),
            "hybrid_query_p50": round(1000 * _p50(hybrid), 2),
            "end_to_end_p50_over_limit": round(_p50(e2e) / floor_s, 2) if floor_s else None,
        },
        "docs": meta["docs"],
        "index_build_s": meta["build_s"],
        "index_cached": meta["cached"],
        "alerts": len(e2e),
        "outcomes": dict(outcomes),
        "ack_ms": dist(acks),
        "search_ms": dist(search_s),
        "render_ms": dist(render_s),
        "end_to_end_ms": dist(e2e),
        "reader_ms_when_read": dist([p.reader_s for p in probes if p.reader_s]),
        "breakdown": {
            name: {**dist(values), "share_of_mean_e2e_pct": share(values)}
            for name, values in breakdown.items()
        },
        "qdrant_calls_per_alert": round(sum(calls_by_kind.values()) / max(1, len(probes)), 2),
        "qdrant_calls_by_kind": dict(calls_by_kind),
        "qdrant_ms_per_call_by_kind": {kind: dist(v) for kind, v in per_call.items()},
        "burst": {
            "requests": len(burst["latencies"]),
            "client_threads": burst_threads,
            "workers": workers,
            "statuses": burst["statuses"],
            "send_s": round(burst["wall_s"], 2),
            "ack_ms": dist(burst["latencies"]),
            "posted": burst_posted,
            "drained": drained,
            "window_s": round(burst_window, 1),
            "posts_per_s": round(burst_posted / burst_window, 2),
            "search_ms_under_load": dist([p.total_s for p in burst_probes]),
        },
        "failures": failures,
    }


def _p50(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else 0.0
