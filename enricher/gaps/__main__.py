"""`python -m enricher.gaps [--days N] [--json]`: alerts that paged with no confident runbook.

One row per (alert name, service), most pages first: pages in the window, first and last
seen, the leads offered, and the runbook on-call has since confirmed, if any. `--json`
prints one object per line.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence

import redis.asyncio as aioredis

from enricher.cli import run_with_redis
from enricher.feedback.store import FeedbackStore
from enricher.gaps.store import Gap, GapStore
from enricher.settings import Settings


async def _report(days: float, as_json: bool, settings: Settings, redis: aioredis.Redis) -> str:
    feedback = FeedbackStore(redis, page_ttl_s=settings.feedback_page_ttl_s)
    gaps = await GapStore(redis).gaps(since=time.time() - days * 86400, feedback=feedback)
    if as_json:
        return "\n".join(json.dumps(gap.to_json()) for gap in gaps)
    return table(gaps)


def table(gaps: Sequence[Gap]) -> str:
    if not gaps:
        return "no runbook gaps: every page in the window had a confident match"
    head = f"{'pages':>5}  {'alert name':<32} {'service':<20} {'first seen':<16} "
    lines = [head + f"{'last seen':<16} leads / confirmed"]
    for gap in gaps:
        leads = ", ".join(gap.leads) or "-"
        confirmed = f"; confirmed: {', '.join(gap.confirmed)}" if gap.confirmed else ""
        if gap.audited:
            confirmed += (
                f"; already known: the audit of {gap.audited.at:%Y-%m-%d} found no runbook "
                f"for its rule in {gap.audited.rule_file}"
            )
        lines.append(
            f"{gap.pages:>5}  {gap.alert_name[:32]:<32} {(gap.service or '-')[:20]:<20} "
            f"{gap.first_seen:%Y-%m-%d %H:%M} {gap.last_seen:%Y-%m-%d %H:%M} {leads}{confirmed}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m enricher.gaps", description=__doc__)
    parser.add_argument("--days", type=float, default=30.0, help="window (default %(default)s)")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    args = parser.parse_args(argv)
    return run_with_redis(lambda settings, redis: _report(args.days, args.json, settings, redis))


if __name__ == "__main__":
    sys.exit(main())
