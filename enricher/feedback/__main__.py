"""`python -m enricher.feedback export|tallies|reset`: on-call's votes, from Redis.

export --out FILE          the votes as golden cases (JSON lines), for `make eval`
tallies [--alert NAME]     what the votes do to ranking, per alert name and runbook
reset --alert NAME [--doc DOC_ID]
                           forget an alert name's votes (or one runbook's): its pages
                           are ranked as if nobody had voted
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import redis.asyncio as aioredis

from enricher.cli import run_with_redis
from enricher.feedback.export import cases
from enricher.feedback.store import FeedbackStore
from enricher.search.feedback import note
from enricher.settings import Settings


async def _export(store: FeedbackStore, out: Path) -> str:
    found = cases(await store.all_votes())
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(case) + "\n" for case in found), encoding="utf-8")
    confirmed = sum(1 for case in found if case["expected_doc"] is not None)
    return (
        f"wrote {len(found)} case(s) to {out}: {confirmed} with a confirmed runbook, "
        f"{len(found) - confirmed} where every vote said wrong"
    )


async def _tallies(store: FeedbackStore, alert: str | None) -> str:
    lines: list[str] = []
    for key in [alert] if alert else await store.alert_keys():
        for doc, tally in (await store.tallies(key)).items():
            effect = "promoted" if tally.net > 0 else "demoted" if tally.net < 0 else "no effect"
            lines.append(f"{key}\t{doc}\t+{tally.right} -{tally.wrong}\t{effect}: {note(tally)}")
    return "\n".join(lines) or "no votes"


async def _run(args: argparse.Namespace, settings: Settings, redis: aioredis.Redis) -> str:
    store = FeedbackStore(redis, page_ttl_s=settings.feedback_page_ttl_s)
    if args.command == "export":
        return await _export(store, args.out)
    if args.command == "tallies":
        return await _tallies(store, args.alert)
    reset = await store.reset(args.alert, args.doc)
    return f"removed {reset.votes} vote(s) for alert name key {reset.alert_key!r}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m enricher.feedback",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    export = commands.add_parser("export", help="write the votes as golden cases")
    export.add_argument("--out", type=Path, required=True, help="cases file (JSON lines)")
    tallies = commands.add_parser("tallies", help="show the votes per alert name and runbook")
    tallies.add_argument("--alert", help="only this alert name")
    reset = commands.add_parser("reset", help="forget an alert name's votes")
    reset.add_argument("--alert", required=True, help="alert name (case and separators ignored)")
    reset.add_argument("--doc", help="only the votes on this runbook (doc id, see tallies)")
    args = parser.parse_args(argv)
    return run_with_redis(lambda settings, redis: _run(args, settings, redis))


if __name__ == "__main__":
    sys.exit(main())
