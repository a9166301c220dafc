"""Slack's request signature (property tests) and reading a click's payload."""

from __future__ import annotations

import hashlib
import hmac
import json
from urllib.parse import urlencode

import pytest
from hypothesis import given
from hypothesis import strategies as st

from enricher.errors import Unauthorized
from enricher.feedback.intake import MAX_SKEW_S, BlockActions, _payload, verify_slack_request

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
NOW = 1_800_000_000


def slack_sign(secret: str, timestamp: str, body: bytes) -> str:
    """Slack's recipe, written out independently of the code under test."""
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def accepted(body: bytes, timestamp: str, signature: str, now: int = NOW) -> bool:
    try:
        verify_slack_request(body, timestamp=timestamp, signature=signature, secret=SECRET, now=now)
    except Unauthorized:
        return False
    return True


bodies = st.binary(max_size=400)
skews = st.integers(min_value=-MAX_SKEW_S, max_value=MAX_SKEW_S)


class TestSignature:
    @given(body=bodies, skew=skews)
    def test_genuine_requests_pass(self, body: bytes, skew: int) -> None:
        """A body signed with the secret passes anywhere inside the 5-minute window."""
        ts = str(NOW + skew)
        assert accepted(body, ts, slack_sign(SECRET, ts, body))

    @given(
        body=bodies,
        skew=st.integers(min_value=MAX_SKEW_S + 1, max_value=10**6),
        sign=st.sampled_from([1, -1]),
    )
    def test_stale_or_future_timestamps_fail(self, body: bytes, skew: int, sign: int) -> None:
        """Correctly signed but more than 5 minutes off, either way: a replay."""
        ts = str(NOW + sign * skew)
        assert not accepted(body, ts, slack_sign(SECRET, ts, body))

    @given(body=bodies, data=st.data())
    def test_any_tampering_fails(self, body: bytes, data: st.DataObject) -> None:
        """Flipping any byte, appending or dropping one invalidates the signature."""
        ts = str(NOW)
        signature = slack_sign(SECRET, ts, body)
        if body:
            at = data.draw(st.integers(min_value=0, max_value=len(body) - 1))
            flipped = (
                body[:at] + bytes([body[at] ^ data.draw(st.integers(1, 255))]) + body[at + 1 :]
            )
            assert not accepted(flipped, ts, signature)
            assert not accepted(body[:-1], ts, signature)
        assert not accepted(body + b"x", ts, signature)

    @given(body=bodies, skew=st.integers(min_value=1, max_value=MAX_SKEW_S))
    def test_timestamp_is_signed(self, body: bytes, skew: int) -> None:
        """A signature made for another timestamp does not pass, even inside the window."""
        assert not accepted(body, str(NOW + skew), slack_sign(SECRET, str(NOW), body))

    @given(body=bodies, secret=st.text(min_size=1, max_size=40).filter(lambda s: s != SECRET))
    def test_other_secrets_fail(self, body: bytes, secret: str) -> None:
        ts = str(NOW)
        assert not accepted(body, ts, slack_sign(secret, ts, body))

    @given(body=bodies, upper_prefix=st.booleans())
    def test_hex_and_version_case_do_not_matter(self, body: bytes, upper_prefix: bool) -> None:
        """Hex digits in either case, and `V0=`, carry the same signature."""
        ts = str(NOW)
        signature = slack_sign(SECRET, ts, body).upper()
        if not upper_prefix:
            signature = "v0=" + signature[3:]
        assert accepted(body, ts, signature)

    @given(
        body=bodies,
        others=st.lists(st.binary(min_size=32, max_size=32), min_size=1, max_size=4),
        position=st.integers(min_value=0, max_value=4),
    )
    def test_several_v0_values(self, body: bytes, others: list[bytes], position: int) -> None:
        """Among several comma-separated `v0=` values one genuine one is enough, and
        without it none of the others passes."""
        ts = str(NOW)
        wrong = [f"v0={value.hex()}" for value in others]
        assert not accepted(body, ts, ", ".join(wrong))
        with_genuine = [*wrong]
        with_genuine.insert(min(position, len(wrong)), slack_sign(SECRET, ts, body))
        assert accepted(body, ts, ",".join(with_genuine))

    @pytest.mark.parametrize(
        ("timestamp", "signature"),
        [
            (None, "v0=00"),
            ("", "v0=00"),
            (str(NOW), None),
            (str(NOW), ""),
            ("17e8", "v0=00"),
            ("-1800000000", "v0=00"),
            (str(NOW), "v1=" + "0" * 64),
            (str(NOW), "v0=not-hex"),
            ("١٨٠٠٠٠٠٠٠٠", "v0=00"),  # Arabic-Indic digits: str.isdigit() but no Unix time
        ],
    )
    def test_malformed_headers_fail(self, timestamp: str | None, signature: str | None) -> None:
        with pytest.raises(Unauthorized):
            verify_slack_request(
                b"payload=x", timestamp=timestamp, signature=signature, secret=SECRET, now=NOW
            )

    def test_version_is_v0_only(self) -> None:
        """A correct HMAC under another version label is not Slack's scheme."""
        ts = str(NOW)
        genuine = slack_sign(SECRET, ts, b"x")
        assert not accepted(b"x", ts, "v1=" + genuine[3:])


def form(payload: object) -> bytes:
    return urlencode({"payload": json.dumps(payload)}).encode()


class TestPayload:
    def test_block_actions_are_read(self) -> None:
        body = form(
            {
                "type": "block_actions",
                "user": {"id": "U123", "name": "ana"},
                "container": {"type": "message", "channel_id": "C1", "message_ts": "1.2"},
                "actions": [{"action_id": "rbe_feedback_right", "value": "{}", "type": "button"}],
                "unknown": {"ignored": True},
            }
        )
        parsed = _payload(body)
        assert isinstance(parsed, BlockActions)
        assert parsed.user.id == "U123"
        assert parsed.container.message_ts == "1.2"

    @pytest.mark.parametrize(
        "body",
        [
            b"",
            b"payload=",
            b"payload=%7Bnot json",
            form({"type": "view_submission", "user": {"id": "U1"}}),
            form({"type": "block_actions"}),
            b"\xff\xfe",
        ],
    )
    def test_other_bodies_say_why(self, body: bytes) -> None:
        """Anything that is not a block action is a reason to ignore, not an exception."""
        assert isinstance(_payload(body), str)
