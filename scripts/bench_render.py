"""Render benchmark: `python -m scripts.bench_render [--renders 500] [--out F]`.

CPU time of one `render_message` call on a typical page (issue 23): the recorded grouped
Alertmanager sample (several pods crash looping) with three matched runbook sections, each a
few kB of golden runbook markdown with code blocks, the first one leading with its steps.
The clock is pinned, so the page is the same whatever day it runs. Reports p50/p99 of
`time.process_time_ns` per render after a warm-up, and the load average it ran under (the
machine is shared: compare runs made back to back); it never asserts a speed. The page's
fingerprint (`sha256`) changes when the rendered output does. JSON on the last line.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path

from enricher.alert import Alert
from enricher.result import Match, SearchResult, Section
from enricher.slack.render import message_size, render_message
from enricher.sources import Parsed, parse
from scripts.benchlib import REPO, emit, percentile

NOW = datetime(2026, 11, 28, 1, 5, tzinfo=UTC)
BASE = "https://git.example.com/ops/runbooks/blob/main"
SAMPLE = REPO / "golden" / "samples" / "alertmanager-grouped.json"
RUNBOOKS = REPO / "golden" / "runbooks" / "kubernetes"
WARM_UP = 50


def sections(path: Path) -> dict[str, str]:
    """A runbook's `## ` sections by heading, front matter and title left out."""
    body = path.read_text().split("\n---\n", 1)[-1]
    out: dict[str, str] = {}
    for part in body.split("\n## ")[1:]:
        heading, _, text = part.partition("\n")
        out[heading.strip()] = text.strip()
    return out


def match(rank: int, name: str, leads_with_steps: bool) -> Match:
    """A match on a runbook's diagnosis and everything after it (a few kB, code included)."""
    parts = sections(RUNBOOKS / f"{name}.md")
    names = list(parts)
    start = names.index("Diagnosis") if "Diagnosis" in names else 0
    text = "\n\n".join(f"### {n}\n\n{parts[n]}" for n in names[start:])
    steps = Section("Mitigation", "mitigation", parts["Mitigation"]) if leads_with_steps else None
    return Match(
        doc_id=f"runbooks:kubernetes/{name}.md",
        title=name,
        section="Diagnosis",
        source="runbooks",
        path=f"kubernetes/{name}.md",
        score=0.81 - rank / 20,
        stale=rank == 2,
        age_days=200 if rank == 2 else 30,
        text=text,
        revision="3f9c2a7e51d04b6a",
        anchor="diagnosis",
        actionable=not leads_with_steps,
        quoted_metrics=("kube_pod_container_status_restarts_total",) if rank == 0 else (),
        steps=steps,
    )


def page() -> tuple[Alert, SearchResult]:
    parsed = parse("alertmanager", SAMPLE.read_bytes())
    if not isinstance(parsed, Parsed):
        raise SystemExit(f"{SAMPLE} makes no page: the benchmark needs a firing group")
    names = ("KubePodCrashLooping", "KubeContainerOOMKilled", "KubePodNotReady")
    matches = tuple(match(rank, name, rank == 0) for rank, name in enumerate(names))
    return parsed.alert, SearchResult("matched", "alert_name+service", matches=matches)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.bench_render", description=__doc__)
    parser.add_argument("--renders", type=int, default=500)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    alert, result = page()
    message = render_message(alert, result, runbook_base_url=BASE, now=NOW)
    for _ in range(WARM_UP):
        render_message(alert, result, runbook_base_url=BASE, now=NOW)
    samples: list[int] = []
    for _ in range(args.renders):
        start = time.process_time_ns()
        render_message(alert, result, runbook_base_url=BASE, now=NOW)
        samples.append(time.process_time_ns() - start)

    def ms(q: float) -> float:
        return round(percentile(samples, q) / 1e6, 3)

    return emit(
        {
            "renders": args.renders,
            "cpu_ms": {"p50": ms(50), "p99": ms(99), "max": ms(100)},
            "load_avg_1m": os.getloadavg()[0],
            "page": {
                "firing": alert.firing_count,
                "matches": len(result.matches),
                "runbook_chars": sum(len(m.text) for m in result.matches),
                "cards": len(message.attachments),
                "size": message_size(message.blocks, message.attachments),
                "sha256": _digest(message.to_kwargs()),
            },
        },
        args.out,
        [],
    )


def _digest(kwargs: object) -> str:
    return hashlib.sha256(json.dumps(kwargs, sort_keys=True).encode()).hexdigest()[:16]


if __name__ == "__main__":
    raise SystemExit(main())
