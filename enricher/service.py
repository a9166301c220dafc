"""The running service, wired once from settings: index, models, search, Slack, Redis, pool.

`Services.build` checks everything that can be checked before serving (ConfigError with
what to fix); the app (enricher.app) holds the result for its lifetime.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Protocol, cast

import redis.asyncio as aioredis
import structlog
from redis.exceptions import RedisError

from enricher import redis_connect
from enricher.errors import ConfigError
from enricher.feedback.intake import FeedbackIntake
from enricher.feedback.store import FeedbackStore
from enricher.feedback.updater import MessageUpdater
from enricher.gaps.digest import Digest
from enricher.gaps.store import GapStore
from enricher.index import schema
from enricher.index.connect import open_index, shard_path
from enricher.index.embedding import Embedder
from enricher.index.engine import Index
from enricher.metrics import Metrics
from enricher.notes.client import NotesClient, NotesConfig
from enricher.pipeline.first_index import FirstIndex
from enricher.pipeline.history import PageHistory
from enricher.pipeline.ledger import Ledger
from enricher.pipeline.notes import IncidentNotes
from enricher.pipeline.pool import AcceptOutcome, Pool
from enricher.pipeline.processor import Processor
from enricher.pipeline.queue import Job, JobQueue
from enricher.pipeline.replication import ReplicaAck
from enricher.search.feedback import Tallies
from enricher.search.reader import Reader
from enricher.search.searcher import Searcher, build_searcher
from enricher.settings import Settings
from enricher.slack.delivery import Delivery, build_delivery
from enricher.slack.posting import Poster
from enricher.slack.routing import parse_routes

log = structlog.get_logger(__name__)

#: How long a stop waits for in-flight jobs before cancelling them.
STOP_GRACE_S = 10.0
#: The entry-point group a runbook syncer registers under (`ingest` does, in pyproject.toml):
#: the service syncs RUNBOOK_ROOTS itself without the runtime importing `ingest`.
SYNC_ENTRY_POINTS = "enricher.sync"


class RemoteState(Protocol):
    """A git remote of runbooks (RUNBOOK_GIT_URL) as its last fetch left it."""

    #: The remote's URL without credentials.
    name: str
    #: The commit served (None before the first good fetch).
    commit: str | None
    #: Why the last fetch failed; None after a good one.
    error: str | None
    failures: int
    fetched_at: float | None


class BackgroundSync(Protocol):
    """Keeps the served index in step with the runbook roots, in its own thread."""

    #: Set once the first run has finished, successfully or not.
    first_done: threading.Event
    last_error: str | None
    #: A source that failed in the last run (served as before): shown, not "not ready".
    source_problem: str | None
    #: Documents kept although their source's listing dropped them (a shrink past
    #: PRUNE_MAX_FRACTION), and what to do about it: shown, not "not ready".
    held_documents: int
    held_problem: str | None

    @property
    def none_loaded(self) -> bool:
        """No configured source has ever loaded: not ready."""

    @property
    def load_problem(self) -> str | None: ...

    def unloaded(self) -> Mapping[str, str]:
        """The configured sources that have never loaded, each with why."""

    def push(self, urls: Collection[str], ref: str) -> list[str]:
        """A push to the repository of these clone URLs (enricher.githook): the names of
        the remotes serving `ref`, fetched at once."""
    runs: int
    #: The git remotes of RUNBOOK_GIT_URL, in its order.
    remotes: Sequence[RemoteState]

    def start(self) -> None: ...

    def stop(self, timeout_s: float) -> None: ...


#: (settings, index, embedder, called after each sync, the searcher's reader: a bi-encoder
#: one embeds each chunk as it is indexed, so a page embeds only its alert).
SyncFactory = Callable[
    [Settings, Index, Embedder, Callable[[], None], Reader | None], BackgroundSync
]


@dataclass
class FeedbackLoop:
    """The feedback loop's running parts: on-call's votes (enricher.feedback) and the
    runbook-gap report they feed (enricher.gaps), joined here."""

    store: FeedbackStore
    gaps: GapStore
    updater: MessageUpdater
    intake: FeedbackIntake
    #: The runbook-gap digest, when GAP_REPORT_CHANNEL is set.
    digest: Digest | None

    @classmethod
    def build(cls, settings: Settings, redis: aioredis.Redis, poster: Poster) -> FeedbackLoop:
        store = FeedbackStore(redis, page_ttl_s=settings.feedback_page_ttl_s)
        gaps = GapStore(redis)
        updater = MessageUpdater(redis, store, poster)
        digest = None
        if settings.gap_report_channel:
            digest = Digest(
                redis,
                gaps,
                store,
                poster,
                channel=settings.gap_report_channel,
                interval_s=settings.gap_report_interval_s,
                template=settings.gap_runbook_new_url,
                base=settings.runbook_base_url,
            )
        return cls(store, gaps, updater, FeedbackIntake(store, updater), digest)

    async def start(self) -> None:
        await self.updater.start()
        if self.digest is not None:
            self.digest.start()

    async def stop(self) -> None:
        if self.digest is not None:
            await self.digest.stop()
        await self.updater.stop()


async def feedback_tallies(settings: Settings, alert_name: str) -> Tallies:
    """On-call's votes for `alert_name`, read from Redis as the webhook reads them (the
    search CLI, `python -m enricher.search`). Raises RedisError when Redis is unreachable."""
    client = redis_connect.async_client(settings)
    try:
        store = FeedbackStore(client, page_ttl_s=settings.feedback_page_ttl_s)
        return await store.tallies(alert_name)
    finally:
        await redis_connect.aclose(client)


@dataclass
class Services:
    settings: Settings
    embedder: Embedder
    index: Index
    searcher: Searcher
    processor: Processor
    metrics: Metrics
    worker_id: str
    redis: aioredis.Redis
    pool: Pool
    feedback: FeedbackLoop
    sync: BackgroundSync | None

    @classmethod
    def build(
        cls,
        settings: Settings,
        *,
        delivery: Delivery | None = None,
        embedder: Embedder | None = None,
        index: Index | None = None,
    ) -> Services:
        """Everything that can be checked before serving is checked here (ConfigError).

        `delivery`, `embedder` and `index` can be handed in (tests, benchmarks) to reuse
        loaded parts or serve another engine.
        """
        if index is None and settings.qdrant_url is None:
            check_index_folder(settings)
        embedder = embedder or Embedder(settings)
        index = index or open_index(settings)
        if settings.runbook_roots or settings.confluence_configured or settings.runbook_git_url:
            # The service syncs the roots itself: the first sync creates the collection.
            schema.ensure_collection(index, embedder.identity)
        else:
            schema.verify_collection(index, embedder.identity)
        if not settings.allow_unauthenticated and not (
            settings.alertmanager_auth_configured
            or settings.pagerduty_auth_configured
            or settings.grafana_signing_secrets
        ):
            raise ConfigError(
                "no webhook auth configured: set ALERTMANAGER_BEARER_TOKENS (or "
                "ALERTMANAGER_BASIC_AUTH), PAGERDUTY_SIGNING_SECRETS and/or "
                "GRAFANA_SIGNING_SECRETS; for a local demo only, ALLOW_UNAUTHENTICATED=true"
            )
        router = parse_routes(settings.slack_routes, settings.slack_channel)
        delivery = delivery or build_delivery(settings)
        metrics = Metrics()
        worker_id = settings.worker_id or socket.gethostname()
        searcher = build_searcher(settings, index, embedder)
        sync = _background_sync(settings, index, embedder, searcher)
        first_index = (
            FirstIndex(sync.first_done, settings.first_sync_wait_s, sync.unloaded)
            if sync is not None and (index.count() == 0 or sync.unloaded())
            else None
        )
        redis_client = redis_connect.async_client(settings)
        poster = Poster(delivery, unready_after=settings.slack_permanent_errors_unready)
        feedback = FeedbackLoop.build(settings, redis_client, poster)
        processor = Processor(
            searcher=searcher,
            poster=poster,
            router=router,
            metrics=metrics,
            # A fresh nonce per process: the ledger tells a dead predecessor's claims
            # (same worker id, other nonce) from live ones (enricher.pipeline.ledger).
            owner=f"{worker_id}:{uuid.uuid4().hex[:12]}",
            runbook_base_url=settings.runbook_base_url,
            lease_s=settings.post_lease_s,
            feedback=feedback.store,
            gaps=feedback.gaps,
            first_index=first_index,
        )
        replica_ack = _replica_ack(settings)
        queue = JobQueue(
            redis_client,
            consumer=worker_id,
            claim_idle_ms=int(settings.job_claim_idle_s * 1000),
            replica_ack=replica_ack,
        )
        # Output notes go through a synchronous connection: written before anything else
        # runs (enricher.pipeline.ledger, the crash window of deliveries without lookups).
        notes = redis_connect.sync_client(settings, socket_timeout=1)
        ledger = Ledger(
            redis_client, dedup_ttl_s=settings.dedup_ttl_s, notes=notes, replica_ack=replica_ack
        )
        processor.notes = _incident_notes(settings, redis_client, ledger)
        processor.history = PageHistory(redis_client)
        pool = Pool(
            queue=queue,
            ledger=ledger,
            processor=processor,
            metrics=metrics,
            workers=settings.workers,
            max_attempts=settings.delivery_max_attempts,
            durable_intake=settings.redis_durable_ack,
            first_index=first_index,
        )
        return cls(
            settings=settings,
            embedder=embedder,
            index=index,
            searcher=searcher,
            processor=processor,
            metrics=metrics,
            worker_id=worker_id,
            redis=redis_client,
            pool=pool,
            feedback=feedback,
            sync=sync,
        )

    async def start(self) -> None:
        first = self.pool.first_index
        if first is not None and first.pending:
            log.info(
                "workers.held",
                reason="the index is empty: pages wait for its first sync",
                at_most_s=first.wait_s,
            )
        await self.pool.start()
        await self.feedback.start()
        if self.sync is not None:
            self.sync.start()
        log.info(
            "service.started",
            workers=self.settings.workers,
            redis=self.pool.redis_ok,
            redis_at=redis_connect.describe(self.settings),
            replicas_ack=self.settings.redis_min_replicas_ack,
            worker_id=self.worker_id,
            engine=self.index.engine,
            syncing=list(self.settings.runbook_roots),
        )

    async def stop(self) -> None:
        await self.pool.stop(STOP_GRACE_S)
        if self.sync is not None:
            await asyncio.to_thread(self.sync.stop, STOP_GRACE_S)
        await self.feedback.stop()
        await self.processor.poster.close()
        if self.processor.notes is not None:
            await self.processor.notes.client.aclose()
        await redis_connect.aclose(self.redis)
        self.pool.ledger.close()
        await asyncio.to_thread(self.index.close)
        log.info("service.stopped")

    async def accept(self, job: Job) -> AcceptOutcome:
        return await self.pool.accept(job)

    async def refresh_gauges(self) -> None:
        await self.pool.refresh_gauges()
        if self.sync is not None:
            self.metrics.prune_held.set(self.sync.held_documents)
        remotes = self.sync.remotes if self.sync is not None else ()
        if remotes:  # of several remotes, the one that has failed longest
            self.metrics.git_fetch_failures.set(max(r.failures for r in remotes))
            fetched = [r.fetched_at for r in remotes if r.fetched_at is not None]
            if len(fetched) == len(remotes):
                self.metrics.git_fetched_at.set(min(fetched))

    async def readiness(self) -> dict[str, dict[str, Any]]:
        checks: dict[str, dict[str, Any]] = {
            "models": {"ok": True, "detail": self.embedder.identity.dense}
        }
        try:
            await asyncio.wait_for(
                asyncio.to_thread(schema.verify_collection, self.index, self.embedder.identity),
                timeout=3,
            )
            checks["qdrant"] = {"ok": True}
        except Exception as exc:  # any failure means "not ready", with its reason
            checks["qdrant"] = {"ok": False, "detail": f"{type(exc).__name__}: {exc}"[:300]}
        try:
            await asyncio.wait_for(self.redis.ping(), timeout=2)
            checks["redis"] = {"ok": True}
        except (RedisError, TimeoutError) as exc:
            checks["redis"] = {"ok": False, "detail": f"{type(exc).__name__}: {exc}"[:300]}
        if self.sync is not None:
            checks["sync"] = {
                "ok": self.sync.first_done.is_set() and self.sync.last_error is None
                and not self.sync.none_loaded,
                "detail": self.sync.last_error
                or "; ".join(filter(None, [
                    f"{self.sync.runs} run(s)", self.sync.load_problem,
                    self.sync.source_problem, self.sync.held_problem,
                ])),
            }
            for n, remote in enumerate(self.sync.remotes):
                checks["runbook_git" + (f"_{n + 1}" if n else "")] = remote_check(remote)
        checks["delivery"] = self.processor.poster.health.check()
        if self.processor.notes is not None:
            checks["pagerduty_notes"] = self.processor.notes.health.check()
        alive, started = self.pool.workers_alive()
        checks["workers"] = {
            "ok": alive == started and alive > 0,
            "detail": f"{alive}/{started} running",
        }
        return checks


def _incident_notes(
    settings: Settings, redis: aioredis.Redis, ledger: Ledger
) -> IncidentNotes | None:
    """PagerDuty incident notes (PAGERDUTY_NOTES), through the posts' ledger."""
    token = settings.pagerduty_api_token
    if settings.pagerduty_notes_mode == "off" or token is None:
        return None
    config = NotesConfig(
        settings.pagerduty_api_url, token.get_secret_value(), settings.pagerduty_from
    )
    return IncidentNotes(
        redis,
        ledger,
        NotesClient(config),
        mode=settings.pagerduty_notes_mode,
        base_url=settings.runbook_base_url,
        lease_s=settings.post_lease_s,
    )


def _replica_ack(settings: Settings) -> ReplicaAck | None:
    if not settings.redis_min_replicas_ack:
        return None
    return ReplicaAck(
        settings.redis_min_replicas_ack, settings.redis_min_replicas_ack_timeout_ms
    )


def remote_check(remote: RemoteState) -> dict[str, Any]:
    """Ready while a good commit is served, even when the last fetch failed: pages are better
    served from the last good runbooks than not at all. The detail says which."""
    served = f"serving {remote.commit[:12]}" if remote.commit else "nothing fetched yet"
    if remote.error is None:
        return {"ok": remote.commit is not None, "detail": f"{served} of {remote.name}"}
    failing = f"last {remote.failures} fetch(es) failed, {served} (the last good commit)"
    return {"ok": remote.commit is not None, "detail": f"{failing}: {remote.error}"[:500]}


def check_index_folder(settings: Settings) -> None:
    """The embedded index's folder exists (made now if need be) and is writable; else a
    ConfigError naming QDRANT_PATH. Made, not reasoned about: only mkdir knows that /proc
    takes no new folder, even for root."""
    folder = shard_path(settings)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            f"QDRANT_PATH={str(settings.qdrant_path)!r}: cannot make the index folder {folder} "
            f"({exc.strerror}); set QDRANT_PATH to a directory this user can write"
        ) from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ConfigError(
            f"QDRANT_PATH={str(settings.qdrant_path)!r}: the index folder {folder} is not "
            "writable by this user; fix its owner or set QDRANT_PATH to a directory this "
            "user can write"
        )


def _background_sync(
    settings: Settings, index: Index, embedder: Embedder, searcher: Searcher
) -> BackgroundSync | None:
    if not (
        settings.runbook_roots or settings.confluence_configured or settings.runbook_git_url
    ):
        return None
    return sync_factory()(settings, index, embedder, searcher.refresh, searcher.reader)


def sync_factory() -> SyncFactory:
    """The installed runbook syncer (the `enricher.sync` entry point)."""
    found = sorted(entry_points(group=SYNC_ENTRY_POINTS), key=lambda e: e.name)
    if not found:
        raise ConfigError(
            "RUNBOOK_ROOTS or CONFLUENCE_URL is set but no runbook syncer is installed: install "
            "the project (`make setup`), or unset them and index with `python -m ingest`"
        )
    return cast(SyncFactory, found[0].load())
