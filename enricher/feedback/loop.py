"""The feedback loop's running parts, wired once from settings (enricher.service)."""

from __future__ import annotations

from dataclasses import dataclass

import redis.asyncio as aioredis

from enricher.feedback.intake import FeedbackIntake
from enricher.feedback.store import FeedbackStore
from enricher.feedback.updater import MessageUpdater
from enricher.gaps.digest import Digest
from enricher.gaps.store import GapStore
from enricher.settings import Settings
from enricher.slack.posting import Poster


@dataclass
class FeedbackLoop:
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


__all__ = ["FeedbackLoop"]
