"""Whether Slack takes our messages: permanent errors in a row, for /readyz.

A permanent error dead-letters its job at once (enricher.pipeline.pool), so a bad token or
channel would otherwise drop every page while the service reports itself ready. After
`unready_after` permanent errors in a row, with no message sent in between, delivery is
reported failing with the last error; the next message Slack takes makes it ready again.
Errors about one message (MESSAGE_ERRORS: too long, deleted) neither count nor reset: they
say nothing of the next page.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import structlog

from enricher.errors import DeliveryFailed
from enricher.slack.delivery import MESSAGE_ERRORS

log = structlog.get_logger(__name__)


class DeliveryHealth:
    def __init__(self, unready_after: int) -> None:
        self.unready_after = unready_after
        self.in_a_row = 0
        self.last_error = ""

    @contextlib.contextmanager
    def watch(self) -> Iterator[None]:
        """Count the outcome of one message sent (a post, an update or a reply)."""
        try:
            yield
        except DeliveryFailed as exc:
            if exc.permanent and str(exc) not in MESSAGE_ERRORS:
                self._failed(str(exc))
            raise
        if self.in_a_row >= self.unready_after:
            log.info("slack.delivery_recovered", after_errors=self.in_a_row)
        self.in_a_row = 0

    def _failed(self, error: str) -> None:
        self.in_a_row += 1
        self.last_error = error
        if self.in_a_row == self.unready_after:
            log.error(
                "slack.delivery_failing",
                errors_in_a_row=self.in_a_row,
                error=error,
                fix="check SLACK_BOT_TOKEN, SLACK_CHANNEL / SLACK_ROUTES (is the bot invited?) "
                "or SLACK_WEBHOOK_URL; the dead-lettered pages are in the dead-letter stream",
            )

    def check(self) -> dict[str, Any]:
        """The /readyz entry."""
        if self.in_a_row < self.unready_after:
            return {"ok": True}
        return {
            "ok": False,
            "detail": f"{self.in_a_row} permanent Slack errors in a row, pages dead-lettered; "
            f"last: {self.last_error}"[:300],
        }


__all__ = ["DeliveryHealth"]
