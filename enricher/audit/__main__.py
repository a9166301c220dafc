"""`python -m enricher.audit RULES... [--runbooks DIR] [--format text|json|junit|sarif]
[--fail-on broken,missing]`

Every alerting rule in the Prometheus rule files (or folders of them; `-` reads standard
input, `helm template CHART | python -m enricher.audit -`) against the indexed runbooks, one
verdict per rule (enricher.audit.verdict). The index is the served one (QDRANT_PATH /
QDRANT_URL), or, with `--runbooks DIR`, that folder indexed into an index of the audit's
own, kept in `--cache-dir` between runs: a second run embeds only the runbooks that changed,
with Redis or without. Rules found with no runbook are noted in Redis (REDIS_URL) when it is
reachable, so that `python -m enricher.gaps` shows them as already known when they page.

Exit status: 0; 1 when a verdict named in `--fail-on` occurred (a CI check for a rules
repository); 2 when a rule file could not be read, no alerting rule was read at all, or the
index could not be opened.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from enricher import logs
from enricher.audit import ci, report
from enricher.audit.rules import Rule, read_rules
from enricher.audit.verdict import KINDS, Kind, Verdict, as_alert, judge
from enricher.errors import ConfigError
from enricher.gaps.store import GapStore
from enricher.index import schema
from enricher.index.connect import open_index
from enricher.index.embedding import Embedder
from enricher.index.engine import Index
from enricher.search.searcher import build_searcher
from enricher.service import sync_factory
from enricher.settings import Settings, load_settings

#: How long indexing `--runbooks` may take before the audit gives up.
INDEX_TIMEOUT_S = 3600.0
FORMATS = ("text", "json", "junit", "sarif")
#: Searches at once, as many as the service's default WORKERS: the models release the GIL.
SEARCH_THREADS = 4


def _kinds(value: str) -> frozenset[Kind]:
    chosen = {part.strip() for part in value.split(",") if part.strip()}
    unknown = chosen - set(KINDS)
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown verdict {', '.join(sorted(unknown))}; choose from {', '.join(KINDS)}"
        )
    return frozenset(k for k in KINDS if k in chosen)


def audit(settings: Settings, index: Index, embedder: Embedder, paths: Sequence[Path]) -> tuple[
    list[Verdict], list[str]
]:
    """Verdicts for every alerting rule under `paths`, and the rule files that failed."""
    scan = read_rules(paths, stdin=sys.stdin)
    searcher = build_searcher(settings, index, embedder)

    def one(rule: Rule) -> Verdict:
        return judge(rule, searcher.search(as_alert(rule)), settings.runbook_base_url)

    with ThreadPoolExecutor(max_workers=SEARCH_THREADS) as pool:
        verdicts = list(pool.map(one, scan.rules))
    return verdicts, [f"{e.file}: {e.reason}" for e in scan.errors]


def default_cache_dir() -> Path:
    return Path.home() / ".cache" / "runbook-enricher" / "audit"


@contextmanager
def _own_folder(cache_dir: Path, runbooks: Path) -> Iterator[Path]:
    """The audit's index folder for `runbooks`: kept in `cache_dir` (one per runbooks folder),
    or a throwaway one when that cannot be made."""
    key = hashlib.sha256(str(runbooks.resolve()).encode()).hexdigest()[:16]
    folder = cache_dir / key
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        with tempfile.TemporaryDirectory(prefix="audit-index-") as throwaway:
            yield Path(throwaway)
        return
    yield folder


@contextmanager
def _index(
    settings: Settings, embedder: Embedder, runbooks: Path | None, cache_dir: Path
) -> Iterator[Index]:
    """The served index, or `runbooks` indexed into the audit's own (kept in `cache_dir`)."""
    if runbooks is None:
        try:
            index = open_index(settings)
        except ConfigError as exc:
            raise ConfigError(f"{exc}; or audit against a folder with --runbooks DIR") from None
        try:
            schema.verify_collection(index, embedder.identity)
            yield index
        finally:
            index.close()
        return
    if not runbooks.is_dir():
        raise ConfigError(f"--runbooks {runbooks}: no such folder of runbooks")
    with _own_folder(cache_dir, runbooks) as folder:
        own = settings.model_copy(
            update={
                "qdrant_url": None,
                "qdrant_path": folder,
                "runbook_roots": (str(runbooks),),
                "runbook_git_url": None,
                "confluence_url": None,
            }
        )
        index = open_index(own)
        try:
            schema.ensure_collection(index, embedder.identity)
            sync = sync_factory()(own, index, embedder, lambda: None, None)
            sync.start()
            sync.first_done.wait(INDEX_TIMEOUT_S)
            sync.stop(INDEX_TIMEOUT_S)
            if sync.last_error:
                raise ConfigError(f"--runbooks {runbooks}: indexing failed: {sync.last_error}")
            yield index
        finally:
            index.close()


def _note_gaps(settings: Settings, verdicts: Sequence[Verdict]) -> str | None:
    """Mark the rules with no runbook for the gap report; a warning when Redis is away."""
    missing = {v.rule.name: v.rule.file for v in verdicts if v.kind in ("missing", "broken")}
    covered = [v.rule.name for v in verdicts if v.kind in ("linked", "matched")]

    async def note() -> None:
        client = aioredis.Redis.from_url(settings.redis_url, socket_timeout=2)
        try:
            await GapStore(client).mark_audited(missing, covered, at=time.time())
        finally:
            await client.aclose()

    try:
        asyncio.run(note())
    except (RedisError, OSError) as exc:
        return (
            f"warning: not noted for the gap report (Redis at REDIS_URL: {type(exc).__name__});"
            " the verdicts stand"
        )
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m enricher.audit",
        description="Audit every alerting rule's runbook against the indexed runbooks. "
        + report.legend(),
    )
    parser.add_argument(
        "rules", nargs="+", type=Path, help="rule files or folders of them; - reads stdin"
    )
    parser.add_argument(
        "--runbooks", type=Path, help="index this folder instead of the served index"
    )
    parser.add_argument(
        "--cache-dir", type=Path, default=default_cache_dir(),
        help="where --runbooks keeps its index between runs (default ~/.cache/runbook-"
        "enricher/audit): unchanged runbooks are not embedded again",
    )
    parser.add_argument(
        "--format", choices=FORMATS, default="text",
        help="text (a table), json (one object per rule and line), junit (XML test report) "
        "or sarif (SARIF 2.1.0, for code scanning annotations)",
    )
    parser.add_argument("--json", action="store_true", help="the same as --format json")
    parser.add_argument(
        "--fail-on",
        type=_kinds,
        default=frozenset(),
        help="exit 1 when any rule gets one of these verdicts (comma separated: broken,missing)",
    )
    args = parser.parse_args(argv)
    logs.configure(json=False, level="WARNING")
    started = time.monotonic()
    try:
        settings = load_settings()
        embedder = Embedder(settings)
        with _index(settings, embedder, args.runbooks, args.cache_dir) as index:
            verdicts, failed = audit(settings, index, embedder, args.rules)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    seconds = time.monotonic() - started
    for problem in failed:
        print(f"error: {problem}", file=sys.stderr)
    if not verdicts:
        print(
            f"error: no alerting rule was read from {' '.join(map(str, args.rules))}: give "
            "Prometheus rule files (`groups:` of rules with `alert:`) or PrometheusRule "
            "resources (`spec.groups`)",
            file=sys.stderr,
        )
        return 2
    form = "json" if args.json else args.format
    if form == "json":
        print(report.json_lines(verdicts))
    elif form == "junit":
        print(ci.junit(verdicts, args.fail_on, seconds))
    elif form == "sarif":
        print(ci.sarif(verdicts, args.fail_on))
    else:
        print(report.table(verdicts))
        print(report.tally(verdicts, seconds))
    if warning := _note_gaps(settings, verdicts):
        print(warning, file=sys.stderr)
    if failed:
        return 2
    return 1 if any(v.kind in args.fail_on for v in verdicts) else 0


if __name__ == "__main__":
    sys.exit(main())
