"""Slack's Retry-After held for the calls it covers (enricher/slack/ratelimit.py)."""

from __future__ import annotations

import pytest

from enricher.errors import DeliveryFailed
from enricher.slack.ratelimit import PAUSED, Pauses


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def limited(seconds: float) -> DeliveryFailed:
    return DeliveryFailed("ratelimited", permanent=False, retry_after=seconds)


def held_for(pauses: Pauses, method: str, target: str) -> float | None:
    """The time left on a pause, None when the call may go."""
    try:
        pauses.check(method, target)
    except DeliveryFailed as exc:
        assert str(exc) == PAUSED
        assert exc.permanent is False
        assert not exc.maybe_delivered
        return exc.retry_after
    return None


def test_a_429_holds_later_calls_of_its_method_and_channel_until_retry_after() -> None:
    clock = Clock()
    pauses = Pauses(clock)
    assert held_for(pauses, "chat.postMessage", "C1") is None
    failure = limited(3)
    assert pauses.note("chat.postMessage", "C1", failure) is failure
    assert held_for(pauses, "chat.postMessage", "C1") == pytest.approx(3)
    clock.now += 2
    assert held_for(pauses, "chat.postMessage", "C1") == pytest.approx(1)
    clock.now += 1
    assert held_for(pauses, "chat.postMessage", "C1") is None


def test_other_channels_and_methods_are_not_held() -> None:
    """Slack limits chat.postMessage per channel: one noisy channel must not hold up
    another team's page, nor the update of a page already posted."""
    pauses = Pauses(Clock())
    pauses.note("chat.postMessage", "C1", limited(30))
    assert held_for(pauses, "chat.postMessage", "C2") is None
    assert held_for(pauses, "chat.update", "C1") is None


def test_a_shorter_retry_after_does_not_cut_a_longer_pause() -> None:
    clock = Clock()
    pauses = Pauses(clock)
    pauses.note("chat.postMessage", "C1", limited(10))
    pauses.note("chat.postMessage", "C1", limited(1))
    assert held_for(pauses, "chat.postMessage", "C1") == pytest.approx(10)


@pytest.mark.parametrize(
    "failure",
    [
        DeliveryFailed("http_500", permanent=False),
        DeliveryFailed("channel_not_found", permanent=True),
        # our own held-back call says how long is left; it does not extend the pause
        DeliveryFailed(PAUSED, permanent=False, retry_after=5),
    ],
)
def test_only_slacks_429_starts_a_pause(failure: DeliveryFailed) -> None:
    pauses = Pauses(Clock())
    pauses.note("chat.postMessage", "C1", failure)
    assert held_for(pauses, "chat.postMessage", "C1") is None
