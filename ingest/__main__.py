"""`python -m ingest [--root [NAME=]DIR ...] [--no-git] [--no-prune] [--allow-prune]`

The sources are those of the settings (ingest.configure), `--root` replacing RUNBOOK_ROOTS.
With RUNBOOK_GIT_URL set, each remote is fetched into RUNBOOK_GIT_DIR first and indexed as
one more root; with CONFLUENCE_URL set, the Confluence spaces are synced too (with either,
`--root` is optional). Prints the sync summary line on stdout; exits 1 when any source
failed (a failed fetch included: the last good checkout, if any, is indexed) or a shrink
was held back (ingest.plan.guard_shrink; `--allow-prune` confirms it), 2 on
misconfiguration.
"""

from __future__ import annotations

import argparse
import sys

import structlog

from enricher import logs
from enricher.errors import ConfigError
from enricher.index.connect import open_index
from enricher.index.embedding import Embedder
from enricher.search.confidence import load_model
from enricher.search.searcher import load_reader
from enricher.settings import load_settings
from ingest.cache import EmbeddingCache, connect
from ingest.configure import configure
from ingest.gitremote import GitFetchError
from ingest.sync import Progress, Syncer, SyncOptions

log = structlog.get_logger("ingest")


def _progress_bar() -> Progress | None:
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        width = 30
        filled = width * done // max(total, 1)
        sys.stderr.write(f"\rembedding [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ingest", description="Index runbooks into Qdrant."
    )
    parser.add_argument(
        "--root",
        action="append",
        default=[],
        metavar="[NAME=]DIR",
        help="folder of runbooks, <root>/<service>/<alert_name>.md, optionally with the "
        "source name its documents are known by (repeatable; default RUNBOOK_ROOTS)",
    )
    parser.add_argument("--no-git", action="store_true", help="ignore git metadata")
    parser.add_argument(
        "--no-prune", action="store_true", help="keep chunks of deleted or shrunk documents"
    )
    parser.add_argument(
        "--allow-prune",
        action="store_true",
        help="prune what a source's listing dropped even when it is more than "
        "PRUNE_MAX_FRACTION of its documents (confirms a shrink the sync held back)",
    )
    args = parser.parse_args(argv)
    logs.configure(json=False)
    try:
        settings = load_settings()
        sources = configure(settings, [str(r) for r in args.root] or None)
        if not sources.roots and sources.confluence is None:
            raise ConfigError(
                "nothing to index: give --root DIR, or set RUNBOOK_ROOTS, RUNBOOK_GIT_URL or "
                "CONFLUENCE_URL"
            )
        embedder = Embedder(settings)
        # The reader the service will read with: a bi-encoder embeds each chunk here once.
        reader = load_reader(settings, load_model())
        index = open_index(settings)
    except ConfigError as exc:
        log.error("ingest.config_error", error=str(exc))
        return 2
    fetch_failed = False
    for remote in sources.remotes:
        try:
            remote.update()
        except GitFetchError:  # logged by the remote; its last good checkout is indexed
            fetch_failed = True
    roots = [root for root in sources.roots if root.path.is_dir() or root in sources.folders]
    if not roots and sources.confluence is None:
        index.close()
        log.error("ingest.nothing_indexed", reason="no git remote could be fetched (see above)")
        return 1
    cache = EmbeddingCache(connect(settings), embedder.identity.dense)
    options = SyncOptions.from_settings(
        settings, roots, use_git=not args.no_git, prune=not args.no_prune,
        sources=sources.incremental, allow_prune=args.allow_prune,
    )
    try:
        report = Syncer(index, embedder, cache, reader=reader).run(
            options, progress=_progress_bar()
        )
        # This process owns the shard alone, so it can spend the seconds (GIL held) that
        # building HNSW takes; a serving process never does (ingest.periodic).
        index.optimize()
    except ConfigError as exc:
        log.error("ingest.config_error", error=str(exc))
        return 2
    finally:
        index.close()
        for source in sources.incremental:
            source.close()
    report.log_held(options.prune_max_fraction)
    print(report.summary(), flush=True)
    return 1 if report.errors or fetch_failed or report.prune_held else 0


if __name__ == "__main__":
    sys.exit(main())
