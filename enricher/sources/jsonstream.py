"""Reading one big JSON object a piece at a time, one element of its big array at a time.

An Alertmanager group has no size bound (1,500 alerts pass 1 MiB), and a 4xx on it is final
for the sender, so the body cannot simply be refused or loaded whole. `ObjectReader` takes
the body in chunks as they arrive (`feed`) and hands each element of one named array
(`alerts`) to a callback as soon as it is complete; every other top-level value is kept.
What it holds at any moment is the part of the body not yet consumed: one element or one
top-level value, at most `max_value_chars` characters, so memory does not grow with the body.

Each value is decoded by the standard library's C scanner (`JSONDecoder.raw_decode`). An
incomplete value is retried only once the buffer has doubled or the body has ended, so a
large value costs linear time, not one scan per chunk.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable
from typing import Any

from enricher.errors import MalformedPayload, PayloadTooLarge

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class ObjectReader:
    """Incremental reader of `{"key": value, ..., "<array_key>": [elements...], ...}`.

    `on_element(element)` is called for each element of `array_key`, in order; `result()`
    returns the other top-level values once the body is complete. Raises `MalformedPayload`
    for anything that is not such an object, `PayloadTooLarge` for a single value over
    `max_value_chars`.
    """

    def __init__(
        self, array_key: str, on_element: Callable[[Any], None], *, max_value_chars: int
    ) -> None:
        self._array_key = array_key
        self._on_element = on_element
        self._max = max_value_chars
        self._utf8 = codecs.getincrementaldecoder("utf-8")()
        self._buf = ""
        self._pos = 0
        self._retry_at = 0
        self._ended = False
        # start -> key -> colon -> value -> after_value -> ... -> done; in_array/after_element
        self._state = "start"
        self._key = ""
        self._fields: dict[str, Any] = {}
        self._array_seen = False

    def feed(self, chunk: bytes) -> None:
        try:
            self._buf += self._utf8.decode(chunk)
        except UnicodeDecodeError:
            raise MalformedPayload("body is not UTF-8 text") from None
        self._run()

    def close(self) -> dict[str, Any]:
        """End of body: the top-level values other than the streamed array."""
        try:
            self._buf += self._utf8.decode(b"", final=True)
        except UnicodeDecodeError:
            raise MalformedPayload("body is not UTF-8 text") from None
        self._ended = True
        self._run()
        if self._state != "done":
            raise MalformedPayload("invalid JSON: the body ends before the object does")
        if not self._array_seen:
            raise MalformedPayload(f"{self._array_key}: field required")
        return self._fields

    # --- the state machine ---

    def _run(self) -> None:
        while self._step():
            pass
        if self._pos:
            self._buf = self._buf[self._pos :]
            self._retry_at = max(0, self._retry_at - self._pos)
            self._pos = 0
        if len(self._buf) > self._max:
            raise self._too_large()

    def _too_large(self) -> PayloadTooLarge:
        return PayloadTooLarge(
            f"one value of the body is over {self._max} characters; "
            f"only the {self._array_key} array may be larger"
        )

    def _skip_ws(self) -> str | None:
        """The next significant character, or None when more input is needed."""
        match = _WS.match(self._buf, self._pos)
        self._pos = match.end() if match else self._pos
        return self._buf[self._pos] if self._pos < len(self._buf) else None

    def _expect(self, allowed: str) -> str | None:
        char = self._skip_ws()
        if char is None:
            return None
        if char not in allowed:
            raise MalformedPayload(self._unexpected(char, allowed))
        self._pos += 1
        return char

    def _unexpected(self, char: str, allowed: str) -> str:
        if self._state == "start":
            return "invalid JSON: the body must be a JSON object"
        wanted = " or ".join(repr(c) for c in allowed)
        return f"invalid JSON: expected {wanted}, found {char!r}"

    def _value(self) -> tuple[bool, Any]:
        """(True, value) when a complete value starts here, (False, None) to wait for more."""
        if self._skip_ws() is None:
            return False, None
        if not self._ended and len(self._buf) < self._retry_at:
            return False, None
        try:
            value, end = _DECODER.raw_decode(self._buf, self._pos)
        except json.JSONDecodeError as exc:
            if not self._ended:
                # Try again once the pending part has doubled: linear time overall.
                self._retry_at = len(self._buf) + max(len(self._buf) - self._pos, 64)
                return False, None
            raise MalformedPayload(f"invalid JSON: {exc.msg} at offset {exc.pos}") from None
        except RecursionError:
            raise MalformedPayload("invalid JSON: nested too deeply") from None
        if end - self._pos > self._max:
            raise self._too_large()
        if end == len(self._buf) and not self._ended and _number(value):
            # `12` at the end of a chunk may be the start of `123`.
            self._retry_at = len(self._buf) + 1
            return False, None
        self._pos = end
        self._retry_at = 0
        return True, value

    def _step(self) -> bool:
        """Advance by one token or value; False when more input is needed (or done)."""
        state = self._state
        if state == "start":
            return self._to("key_or_end") if self._expect("{") else False
        if state in ("key_or_end", "key"):
            char = self._skip_ws()
            if char is None:
                return False
            if char == "}" and state == "key_or_end":
                self._pos += 1
                return self._to("done")
            if char != '"':
                raise MalformedPayload(self._unexpected(char, '"'))
            ready, key = self._value()
            if not ready:
                return False
            self._key = str(key)
            return self._to("colon")
        if state == "colon":
            return self._to("value") if self._expect(":") else False
        if state == "value":
            if self._key == self._array_key:
                char = self._skip_ws()
                if char is None:
                    return False
                if char == "[":
                    self._pos += 1
                    self._array_seen = True
                    return self._to("element_or_end")
            ready, value = self._value()
            if not ready:
                return False
            if self._key == self._array_key:
                raise MalformedPayload(f"{self._array_key}: input should be a valid list")
            self._fields[self._key] = value
            return self._to("after_value")
        if state == "after_value":
            char = self._expect(",}")
            if char is None:
                return False
            return self._to("key" if char == "," else "done")
        if state in ("element_or_end", "element"):
            char = self._skip_ws()
            if char is None:
                return False
            if char == "]" and state == "element_or_end":
                self._pos += 1
                return self._to("after_value")
            ready, element = self._value()
            if not ready:
                return False
            self._on_element(element)
            return self._to("after_element")
        if state == "after_element":
            char = self._expect(",]")
            if char is None:
                return False
            return self._to("element" if char == "," else "after_value")
        # done: only whitespace may follow
        char = self._skip_ws()
        if char is not None:
            raise MalformedPayload("invalid JSON: extra data after the object")
        return False

    def _to(self, state: str) -> bool:
        self._state = state
        return True


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


__all__ = ["ObjectReader"]
