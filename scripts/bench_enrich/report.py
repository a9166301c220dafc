"""The enrichment benchmark's tables on stdout, read from the JSON result."""

from __future__ import annotations

from typing import Any

from scripts.benchlib import print_table


def report(result: dict[str, Any]) -> None:
    m = result["machine"]
    for size in result["sizes"]:
        b = size["burst"]
        rows: list[tuple[str, object]] = [
            ("index", f"{size['chunks']} chunks from {size['docs']} runbooks "
                      f"({'cached' if size['index_cached'] else 'built'}; build "
                      f"{size['index_build_s']} s)"),
            ("alerts, outcomes", f"{size['alerts']}: {size['outcomes']}"),
            ("RSS while serving", f"{size['rss_mb']} MiB (the whole benchmark process)"),
        ]
        for label, key in (("ack", "ack_ms"), ("search", "search_ms"), ("render", "render_ms"),
                           ("end to end", "end_to_end_ms")):
            d = size[key]
            rows.append((f"{label} (ms)", f"p50 {d['p50']}  p99 {d['p99']}  max {d['max']}"))
        rows.append(("Qdrant calls/alert", f"{size['qdrant_calls_per_alert']} "
                                           f"{size['qdrant_calls_by_kind']}"))
        for kind, d in size["qdrant_ms_per_call_by_kind"].items():
            rows.append((f"  Qdrant {kind} (ms)", f"p50 {d['p50']}  p99 {d['p99']}"))
        rows.append(("breakdown", "p50 ms / share of mean end to end"))
        for name, d in size["breakdown"].items():
            rows.append((f"  {name}", f"{d['p50']} ms / {d['share_of_mean_e2e_pct']}%"))
        rows += [
            ("burst", f"{b['requests']} POSTs from {b['client_threads']} threads in "
                      f"{b['send_s']} s, statuses {b['statuses']}"),
            ("burst ack (ms)", f"p50 {b['ack_ms']['p50']}  p99 {b['ack_ms']['p99']}  "
                               f"max {b['ack_ms']['max']}"),
            ("burst drain", f"{b['posted']} posted in {b['window_s']} s ({b['posts_per_s']}/s, "
                            f"{b['workers']} workers){'' if b['drained'] else ', NOT drained'}"),
            ("search under burst (ms)", f"p50 {b['search_ms_under_load']['p50']}  "
                                        f"p99 {b['search_ms_under_load']['p99']}"),
            ("failures", "; ".join(size["failures"]) or "none"),
        ]
        print_table(f"Enrich benchmark, {size['chunks']} chunks ({m['date']}, {m['cores']} "
                    f"cores, load avg at start {result['load_avg_start']})", rows)
    print(f"\npeak RSS {result['peak_rss_mb']} MiB")
