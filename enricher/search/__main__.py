"""`python -m enricher.search --payload FILE`: what the webhook would find for a body.

Prints the search result JSON (the contract Slack renders) for an Alertmanager or PagerDuty
webhook body, against the configured index, with on-call's votes for the alert's name read
from REDIS_URL as the webhook reads them: `feedback` lists them per runbook and what they
did (a runbook they moved also says so in its own `feedback` field). Without Redis the
search runs without them, and says so.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from redis.exceptions import RedisError

from enricher import logs
from enricher.errors import BadRequest, ConfigError
from enricher.index import schema
from enricher.index.connect import open_index
from enricher.index.embedding import Embedder
from enricher.search.decide import NAMED_TIERS
from enricher.search.feedback import NO_FEEDBACK, Tallies
from enricher.search.searcher import build_searcher
from enricher.service import feedback_tallies
from enricher.settings import Settings, load_settings
from enricher.sources import Ignored, parse_body


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m enricher.search",
        description="Show what the webhook would find for a payload (Alertmanager or PagerDuty).",
    )
    parser.add_argument("--payload", type=Path, required=True, help="webhook body as JSON")
    args = parser.parse_args(argv)
    logs.configure(json=False)
    try:
        settings = load_settings()
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        parsed = parse_body(args.payload.read_bytes())
    except BadRequest as exc:
        print(f"error: {args.payload}: {exc.reason}", file=sys.stderr)
        return 2
    if isinstance(parsed, Ignored):
        print("not an incident event: the webhook would acknowledge and ignore it", file=sys.stderr)
        return 0
    try:
        embedder = Embedder(settings)
        index = open_index(settings)
        schema.verify_collection(index, embedder.identity)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    tallies = _tallies(settings, parsed.alert.alert_name)
    try:
        result = build_searcher(settings, index, embedder).search(parsed.alert, feedback=tallies)
    finally:
        index.close()
    explained = result.to_json()
    explained["feedback"] = {
        doc: {"right": t.right, "wrong": t.wrong, "effect": _effect(t.net, result.tier)}
        for doc, t in tallies.items()
    }
    print(json.dumps(explained, indent=2))
    return 0


def _tallies(settings: Settings, alert_name: str) -> Tallies:
    try:
        return asyncio.run(feedback_tallies(settings, alert_name))
    except RedisError as exc:
        print(
            f"warning: no feedback read (Redis at REDIS_URL: {type(exc).__name__}); the "
            "result is the search alone",
            file=sys.stderr,
        )
        return NO_FEEDBACK


def _effect(net: int, tier: str | None) -> str:
    if tier in NAMED_TIERS:
        return f"none: the alert names its runbook itself (tier {tier}), which votes never override"
    if net > 0:
        return "promoted: decided by identity, as a front-matter alias would be"
    if net < 0:
        return "demoted: last in the ranking, probability 0"
    return "none: the votes cancel out"


if __name__ == "__main__":
    sys.exit(main())
