"""`python -m enricher.search --payload FILE`: what the webhook would find for a body.

Prints the search result JSON (the contract Slack renders) for an Alertmanager or PagerDuty
webhook body, against the configured index.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from enricher import logs
from enricher.errors import BadRequest, ConfigError
from enricher.index import schema
from enricher.index.connect import open_index
from enricher.index.embedding import Embedder
from enricher.search.searcher import build_searcher
from enricher.settings import load_settings
from enricher.sources import Ignored, parse_body


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m enricher.search",
        description="Show what the webhook would find for a payload (Alertmanager or PagerDuty).",
    )
    parser.add_argument("--payload", type=Path, required=True, help="webhook body as JSON")
    args = parser.parse_args(argv)
    logs.configure(json=False)
    settings = load_settings()
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
    try:
        result = build_searcher(settings, index, embedder).search(parsed.alert)
    finally:
        index.close()
    print(json.dumps(result.to_json(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
