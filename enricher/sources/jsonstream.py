"""The parse boundary: webhook bodies become plain values every later stage can encode.

Reading one big JSON object a piece at a time. An Alertmanager group has no size bound (1,500
alerts pass 1 MiB), and a 4xx on it is final for the sender, so the body cannot simply be
refused or loaded whole. `ObjectReader` takes the body in chunks as they arrive (`feed`) and
hands each element of one named array (`alerts`) to a callback as soon as it is complete;
every other top-level value is kept. What it holds at any moment is the part of the body not
yet consumed: one element or one top-level value, at most `max_value_chars` characters, so
memory does not grow with the body. `loads` reads a whole (small) body by the same rules.

Each value is decoded by the standard library's C scanner (`JSONDecoder.raw_decode`). An
incomplete value is retried only once the buffer has doubled or the body has ended, so a
large value costs linear time, not one scan per chunk.

What comes out holds only text that encodes to UTF-8, finite numbers and ints whose text
Python can print, so hashing, queueing and rendering never fail on a value the parser let
through, and a value no field needs never costs the page:
- a byte that is not UTF-8, and a lone surrogate escape (`"\\ud800"`), become U+FFFD;
- an integer over `MAX_INT_CHARS` characters, a number too big for a float (`1e400`) and
  the non-JSON `NaN`, `Infinity`, `-Infinity` are kept as their text (a label shows them as
  written; a count reads them as 0);
- a key given twice keeps its last value, as JSON parsers do; for the streamed array that
  means `on_array` is called again and the consumer starts over.
A value nested deeper than the decoder can follow (Python's recursion limit: a little under
1,000 levels) is refused ("nested too deeply"): no sender nests that deep.
"""

from __future__ import annotations

import codecs
import json
import math
import re
import sys
from collections.abc import Callable
from typing import Any

from enricher.errors import MalformedPayload, PayloadTooLarge

_WS = re.compile(r"[ \t\n\r]*")
#: Longest integer literal read as an int: Python refuses to convert longer ones (4,300 digits
#: by default), and the conversion is quadratic, so this holds even where the limit is off.
MAX_INT_CHARS = min(4300, sys.get_int_max_str_digits() or 4300)
#: A `\\u` escape of a high surrogate not followed by a low one, or of a low one not after a
#: high one: only then can a decoded string hold a lone surrogate (an emoji sent as a pair
#: is decoded to its code point). An escaped backslash may match too: that costs a walk.
_LONE_SURROGATE_ESCAPE = re.compile(
    r"\\u[dD](?:[89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])"
    r"|[c-fC-F](?<!\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F]))"
)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_TOO_DEEP = "invalid JSON: nested too deeply"
_NUMBER_START = frozenset("-0123456789")
#: What may still follow a number's text read so far (`0.` of `0.5`, `1e` of `1e-3`).
_NUMBER_GOES_ON = re.compile(r"[0-9.eE+\-]*\Z")


def _integer(text: str) -> int | str:
    return int(text) if len(text) <= MAX_INT_CHARS else text


def _real(text: str) -> float | str:
    value = float(text)
    return value if math.isfinite(value) else text


_DECODER = json.JSONDecoder(parse_int=_integer, parse_float=_real, parse_constant=str)


def _encodable(value: Any) -> Any:
    """`value` with every lone surrogate, in keys and in text, replaced by U+FFFD (a paired
    escape was already decoded to its code point). Plain loops: one frame per level."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        for index, item in enumerate(value):
            value[index] = _encodable(item)
        return value
    if isinstance(value, dict):
        clean: dict[str, Any] = {}
        for key, item in value.items():
            clean[_LONE_SURROGATE.sub("\ufffd", key)] = _encodable(item)
        return clean
    return value


def _decode(text: str, pos: int) -> tuple[Any, int]:
    """The value starting at `pos` and where it ends, by the rules of the module docstring.
    `json.JSONDecodeError` when the text there is incomplete or not JSON."""
    try:
        value, end = _DECODER.raw_decode(text, pos)
        if _LONE_SURROGATE_ESCAPE.search(text, pos, end):
            value = _encodable(value)
    except RecursionError:
        raise MalformedPayload(_TOO_DEEP) from None
    return value, end


def _utf8() -> codecs.IncrementalDecoder:
    return codecs.getincrementaldecoder("utf-8")(errors="replace")


def loads(body: bytes) -> Any:
    """A whole body (one PagerDuty event, a file) as plain values; `MalformedPayload` when
    it is not one JSON value."""
    text = _utf8().decode(body, final=True)
    start = _skip(text, 0)
    try:
        value, end = _decode(text, start)
    except json.JSONDecodeError as exc:
        raise MalformedPayload(f"invalid JSON: {exc.msg} at offset {exc.pos}") from None
    if _skip(text, end) != len(text):
        raise MalformedPayload("invalid JSON: extra data after the value")
    return value


def _skip(text: str, pos: int) -> int:
    match = _WS.match(text, pos)
    return match.end() if match else pos


class ObjectReader:
    """Incremental reader of `{"key": value, ..., "<array_key>": [elements...], ...}`.

    `on_array()` is called where `array_key`'s array starts (again for each repeat of the
    key: the last one wins, so the consumer starts over), then `on_element(element)` for
    each of its elements, in order; `close()` returns the other top-level values once the
    body is complete. Raises `MalformedPayload` for anything that is not such an object,
    `PayloadTooLarge` for a single value over `max_value_chars`.
    """

    def __init__(
        self,
        array_key: str,
        on_element: Callable[[Any], None],
        *,
        on_array: Callable[[], None],
        max_value_chars: int,
    ) -> None:
        self._array_key = array_key
        self._on_element = on_element
        self._on_array = on_array
        self._max = max_value_chars
        self._utf8 = _utf8()
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
        self._buf += self._utf8.decode(chunk)
        self._run()

    def close(self) -> dict[str, Any]:
        """End of body: the top-level values other than the streamed array."""
        self._buf += self._utf8.decode(b"", final=True)
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
        self._pos = _skip(self._buf, self._pos)
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
            value, end = _decode(self._buf, self._pos)
        except json.JSONDecodeError as exc:
            if not self._ended:
                return self._wait()
            raise MalformedPayload(f"invalid JSON: {exc.msg} at offset {exc.pos}") from None
        if end - self._pos > self._max:
            raise self._too_large()
        if (
            not self._ended
            and self._buf[self._pos] in _NUMBER_START
            and _NUMBER_GOES_ON.match(self._buf, end)
        ):
            # `12` or `0.` at the end of a chunk may be the start of `123` or `0.5`: the
            # decoder stops before a `.` with no digit after it yet (the value may be a
            # number's text by now, so the text is what tells).
            return self._wait()
        self._pos = end
        self._retry_at = 0
        return True, value

    def _wait(self) -> tuple[bool, Any]:
        """Try again once the pending part has doubled: linear time overall."""
        self._retry_at = len(self._buf) + max(len(self._buf) - self._pos, 64)
        return False, None

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
                    self._on_array()
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


__all__ = ["MAX_INT_CHARS", "ObjectReader", "loads"]
