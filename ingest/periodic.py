"""The service's own sync: RUNBOOK_ROOTS, RUNBOOK_GIT_URL (and Confluence, when
CONFLUENCE_URL is set) into its index every SYNC_INTERVAL_S, in a thread.

An embedded shard has one owner (enricher.index.edge), so a separate `python -m ingest`
cannot write while the service serves; the service therefore syncs itself. The work runs
in one worker thread, never on the event loop: embedding releases the GIL inside ONNX, and
the engine's upserts hold it a few milliseconds a batch. The serving shard is never
optimized here (HNSW takes seconds with the GIL held); see docs/PERFORMANCE.md.

The Redis embedding cache and the hash plan keep a re-sync of unchanged runbooks from
embedding anything, but reading, parsing and chunking every runbook still costs Python time
(about 8 s at 1,500 runbooks here) that competes with the serving threads for the GIL. So a
run is skipped while no markdown file under the roots changed its size or mtime, and a run
reads and chunks only the files that changed (ingest.sync.SyncMemo). A git commit that
leaves the bytes as they were refreshes the revision at the next real change.

A git remote (ingest.gitremote) is fetched first in each run; its checkout is then one more
root, so only the files the new commit changed are read and embedded. A failed fetch leaves
the checkout, and so the index, at the last good commit.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import suppress
from pathlib import Path

import structlog

from enricher.index import schema
from enricher.index.embedding import Embedder
from enricher.index.engine import Equals, Filter, Index
from enricher.search.reader import Reader
from enricher.settings import Settings
from ingest.cache import EmbeddingCache, connect
from ingest.configure import configure
from ingest.gitremote import GitFetchError, GitRemote, repo_key, same_ref
from ingest.naming import Root
from ingest.sync import Syncer, SyncMemo, SyncOptions, SyncReport

log = structlog.get_logger(__name__)


def for_service(
    settings: Settings,
    index: Index,
    embedder: Embedder,
    on_synced: Callable[[], None],
    reader: Reader | None = None,
) -> PeriodicSync:
    """The service's sync of RUNBOOK_ROOTS, RUNBOOK_GIT_URL and Confluence into `index`,
    registered as the `enricher.sync` entry point (pyproject.toml): the runtime finds it
    there and never imports `ingest`."""
    sources = configure(settings)
    # A checkout is always read with its git metadata: that is where revisions come from.
    use_git = settings.sync_use_git or bool(sources.remotes)
    options = SyncOptions.from_settings(
        settings, sources.roots, use_git=use_git, sources=sources.incremental
    )
    memo = SyncMemo()

    def make_syncer() -> Syncer:
        # A fresh cache per run: one that lost Redis disables itself, and Redis may be back.
        cache = EmbeddingCache(connect(settings), embedder.identity.dense)
        return Syncer(index, embedder, cache, memo, reader)

    # A source the index holds no document of has not loaded yet (a new deployment, a
    # source added, a first clone that was refused before this restart).
    absent = [
        name for name in sources.names
        if not index.exists() or not index.count(Filter(must=(Equals(schema.F_SOURCE, name),)))
    ]
    return PeriodicSync(
        make_syncer, options, settings.sync_interval_s, lambda _: on_synced(),
        remotes=sources.remotes, unloaded={name: "not synced yet" for name in absent},
        sources=len(sources.names),
    )


class PeriodicSync:
    def __init__(
        self,
        make_syncer: Callable[[], Syncer],
        options: SyncOptions,
        interval_s: float,
        on_synced: Callable[[SyncReport], None],
        *,
        remotes: Sequence[GitRemote] = (),
        unloaded: Mapping[str, str] | None = None,
        sources: int = 0,
    ) -> None:
        self._make_syncer = make_syncer
        #: Fetched before each run; their state (commit, error, failures) is read by /readyz.
        self.remotes = tuple(remotes)
        self._options = options
        self._interval_s = interval_s
        self._on_synced = on_synced
        self._stop = threading.Event()
        #: Set by a push (POST /webhook/git) or a stop: the loop runs now, not at the interval.
        self._wake = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="runbook-sync", daemon=True)
        #: Set once the first sync has finished (successfully or not).
        self.first_done = threading.Event()
        self.last_error: str | None = None
        #: The first source that failed in the last run (a refused Confluence token, say):
        #: the index is served as it was, and /readyz shows why it may be behind.
        self.source_problem: str | None = None
        self.runs = 0
        #: Documents kept although their source's listing dropped them (a shrink past
        #: PRUNE_MAX_FRACTION, ingest.plan.guard_shrink), and what /readyz says of them.
        self.held_documents = 0
        self.held_problem: str | None = None
        #: The configured sources that have never loaded, with why (enricher.pipeline.
        #: first_index: a page without a match says so instead of "no match").
        self._unloaded = dict(unloaded or {})
        self._sources = sources
        self._synced: int | None = None

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout_s: float) -> None:
        """Ask the loop to stop and wait for a running sync to finish (up to `timeout_s`)."""
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout_s)
        if not self._thread.is_alive():  # a sync still running keeps its connections
            for source in self._options.sources:
                source.close()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.run_once()
            self.first_done.set()
            self._wake.wait(self._interval_s)
            self._wake.clear()

    def run_once(self) -> None:
        for remote in self.remotes:
            # A failed fetch is logged and kept by the remote; its last good checkout is
            # synced as it was.
            with suppress(GitFetchError):
                remote.update()
        files = fingerprint([r.path if isinstance(r, Root) else r for r in self._options.roots])
        # Incremental sources (Confluence) say themselves what changed: asked every time.
        if files == self._synced and not self._options.sources:
            return
        started = time.monotonic()
        try:
            report = self._make_syncer().run(self._options)
        except Exception as exc:  # a failed sync keeps serving the index as it was
            self.last_error = clip(f"{type(exc).__name__}: {exc}")
            log.error("sync.failed", error=self.last_error, next_in_s=self._interval_s)
            self._unloaded = {name: self.last_error for name in self._unloaded}
            return
        self.last_error = None
        self.source_problem = clip(
            f"{len(report.errors)} source error(s), first {report.errors[0].path}: "
            f"{report.errors[0].reason}"
        ) if report.errors else None
        self.runs += 1
        self._hold(report)
        self._load(report)
        # A run with a failed source is repeated: the file may be fixed without a change.
        self._synced = None if report.errors else files
        self._on_synced(report)
        log.info(
            "sync.done",
            summary=report.summary(),
            changed=report.indexed_docs + report.removed_docs + report.pruned_chunks,
            source_errors=len(report.errors),
            ms=round((time.monotonic() - started) * 1000),
        )


    def push(self, urls: Collection[str], ref: str) -> list[str]:
        """A push of `ref` to the repository with these clone URLs: the names of the remotes
        serving it, which the loop now fetches at once (none: nothing happens)."""
        pushed = {repo_key(url) for url in urls if url}
        hits = [
            r.source for r in self.remotes if repo_key(r.url) in pushed and same_ref(ref, r.ref)
        ]
        if hits:
            self._wake.set()
        return hits

    def unloaded(self) -> dict[str, str]:
        """The configured sources that have never loaded, each with why, cut for a page."""
        return dict(self._unloaded)

    @property
    def none_loaded(self) -> bool:
        """No configured source has ever loaded: nothing a page could be matched against."""
        return bool(self._sources) and len(self._unloaded) >= self._sources

    @property
    def load_problem(self) -> str | None:
        """What /readyz says of the sources that have not loaded."""
        if not self._unloaded:
            return None
        return "not loaded: " + "; ".join(f"{n} ({why})" for n, why in self._unloaded.items())

    def _load(self, report: SyncReport) -> None:
        fetch = {r.source: r.error for r in self.remotes if r.error is not None}
        self._unloaded = {
            name: clip(fetch.get(name) or report.failed.get(name) or "nothing read", 150)
            for name in self._unloaded
            if name not in report.loaded
        }

    def _hold(self, report: SyncReport) -> None:
        """Keep the held shrink for /readyz and /metrics; log it once, when it changes."""
        problem = "; ".join(
            f"kept {h.dropped} of {h.of} document(s) of {h.source} that its listing dropped: "
            "confirm with `python -m ingest --allow-prune` or raise PRUNE_MAX_FRACTION"
            for h in report.prune_held
        ) or None
        if problem != self.held_problem:
            report.log_held(self._options.prune_max_fraction)
        self.held_problem = problem
        self.held_documents = sum(h.dropped for h in report.prune_held)


def clip(text: str, limit: int = 800) -> str:
    """`text` whole when it fits, else cut at a word and marked: an error's last words say
    what to set, and a setting's name cut in two (`CONFLUENCE_`) names nothing."""
    if len(text) <= limit:
        return text
    return text[: limit - 1].rsplit(" ", 1)[0] + "…"


def fingerprint(roots: Sequence[Path]) -> int:
    """The path, size and mtime of every markdown file under `roots`, hashed."""
    entries: list[tuple[str, int, int]] = []
    for root in roots:
        for folder, subfolders, files in os.walk(root):
            subfolders.sort()
            for name in sorted(files):
                if name.lower().endswith(".md"):
                    path = os.path.join(folder, name)
                    try:
                        stat = os.stat(path)
                    except OSError:  # deleted while walking: the sync will see it gone
                        continue
                    entries.append((path, stat.st_size, stat.st_mtime_ns))
    return hash(tuple(entries))
