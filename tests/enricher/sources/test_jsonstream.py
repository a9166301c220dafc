"""The parse boundary: what any accepted body becomes, streamed or whole."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from enricher.errors import MalformedPayload
from enricher.sources.jsonstream import MAX_INT_CHARS, ObjectReader, loads

PROPERTY = settings(max_examples=300, deadline=None, database=None, derandomize=True)


class Recorder:
    """Reads one body with an `ObjectReader` over `items`, recording what it hands out."""

    def __init__(self, body: bytes, chunk: int | None = None) -> None:
        self.arrays: list[list[Any]] = []
        reader = ObjectReader(
            "items", self.element, on_array=lambda: self.arrays.append([]), max_value_chars=1 << 20
        )
        step = chunk or len(body) or 1
        for start in range(0, len(body), step):
            reader.feed(body[start : start + step])
        self.fields = reader.close()

    def element(self, value: Any) -> None:
        self.arrays[-1].append(value)


def encodes(value: Any) -> bool:
    """Every later stage can write it: strict JSON (no NaN), UTF-8, ints printable."""
    json.dumps(value, allow_nan=False, ensure_ascii=False).encode("utf-8")
    return True


HUGE = "1" * (MAX_INT_CHARS + 1)

#: (JSON text of one value, what it becomes)
VALUES: list[tuple[str, str, Any]] = [
    ("huge-int", HUGE, HUGE),
    ("huge-negative-int", "-" + HUGE, "-" + HUGE),
    ("longest-int", "9" * MAX_INT_CHARS, int("9" * MAX_INT_CHARS)),
    ("float-overflow", "1e400", "1e400"),
    ("negative-float-overflow", "-1e400", "-1e400"),
    ("float", "0.5", 0.5),
    ("nan", "NaN", "NaN"),
    ("infinity", "-Infinity", "-Infinity"),
    ("lone-high-surrogate", '"a\\ud800b"', "a\ufffdb"),
    ("lone-low-surrogate", '"\\udfff"', "\ufffd"),
    ("reversed-pair", '"\\ude00\\ud83d"', "\ufffd\ufffd"),
    ("pair", '"\\ud83d\\ude00"', "\U0001f600"),
    ("escaped-backslash", '"\\\\ud800"', "\\ud800"),
    (
        "surrogate-key",
        '{"\\ud800": ["\\udc00", {"k": "\\ud801"}]}',
        {"\ufffd": ["\ufffd", {"k": "\ufffd"}]},
    ),
    ("keys-that-meet", '{"\\ud800": 1, "\\udbff": 2}', {"\ufffd": 2}),
    ("repeated-key", '{"k": 1, "k": {"k": 2, "k": 3}}', {"k": {"k": 3}}),
]


class TestValues:
    @pytest.mark.parametrize(
        ("text", "expected"), [v[1:] for v in VALUES], ids=[v[0] for v in VALUES]
    )
    def test_whole_and_streamed(self, text: str, expected: Any) -> None:
        """Each value reads the same whole, as a top-level field and as an element cut into
        3-byte chunks, and what it becomes encodes."""
        body = f'{{"x": {text}, "items": [{text}, {text}]}}'.encode()
        assert loads(text.encode()) == expected
        for chunk in (None, 3):
            read = Recorder(body, chunk)
            assert (read.fields, read.arrays) == ({"x": expected}, [[expected, expected]])
        assert encodes(expected)

    def test_bytes_that_are_not_utf8_become_replacement_characters(self) -> None:
        """A Latin-1 byte in a value, whole or split between chunks, is U+FFFD."""
        body = '{"x": "caf\xe9", "items": ["\u00e9t\xe9"]}'.encode("latin-1")
        assert loads(body)["x"] == "caf\ufffd"
        for chunk in (None, 1):
            read = Recorder(body, chunk)
            assert (read.fields, read.arrays) == ({"x": "caf\ufffd"}, [["\ufffdt\ufffd"]])
        assert Recorder('{"items": ["é"]}'.encode(), 1).arrays == [["é"]]

    def test_a_number_cut_by_a_chunk_is_read_whole(self) -> None:
        """Digits that end a chunk are not taken for the whole number, even once it is too
        long to be an int."""
        for text in ("12345", HUGE, "1e40" + "0"):
            read = Recorder(f'{{"items": [{text}], "x": {text}}}'.encode(), 2)
            assert read.fields == {"x": loads(text.encode())}

    @pytest.mark.parametrize("text", ["0.0", "-2.5", "1e-3", "4E+10", "0.25e2"])
    def test_a_number_cut_at_its_point_or_exponent_is_read_whole(self, text: str) -> None:
        """A chunk ending in `0.` or `1e` (a Grafana body's `values` hold floats): the
        decoder stops before a `.` or `e` with nothing after it, which is no number's end
        yet. Every cut of the body is tried."""
        body = f'{{"x": {text}, "items": [{text}]}}'.encode()
        value = loads(text.encode())
        for chunk in range(1, len(body)):
            read = Recorder(body, chunk)
            assert (read.fields, read.arrays) == ({"x": value}, [[value]]), chunk

    def test_a_bad_number_is_still_refused(self) -> None:
        with pytest.raises(MalformedPayload):
            Recorder(b'{"x": 1., "items": []}', 4)


class TestRepeatedKeys:
    def test_last_array_wins(self) -> None:
        """A second `items` key starts the array over, as the last key wins in JSON."""
        read = Recorder(b'{"items": [1, 2], "x": 1, "items": [3], "x": 2}')
        assert read.arrays == [[1, 2], [3]]
        assert read.fields == {"x": 2}

    def test_last_value_not_an_array_is_refused(self) -> None:
        """The last `items` is what counts: not a list, so the body has no array."""
        with pytest.raises(MalformedPayload, match="valid list"):
            Recorder(b'{"items": [1], "items": {"a": 1}}')


class TestRefused:
    @pytest.mark.parametrize(
        ("body", "fragment"),
        [
            (b"", "invalid JSON"),
            (b'{"a": 1} x', "extra data"),
            (b"[" * 5000 + b"]" * 5000, "nested too deeply"),
        ],
    )
    def test_loads(self, body: bytes, fragment: str) -> None:
        """What is not one JSON value, or nests past the decoder's depth, is a 400."""
        with pytest.raises(MalformedPayload, match=fragment):
            loads(body)


# Text with lone surrogates, and numbers of every size, where a field holds text or a number.
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.floats(),
    st.text(st.characters(exclude_categories=())),
    st.integers(),
    st.integers(min_value=10**4290, max_value=10**4310),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.text(st.characters(exclude_categories=()), max_size=4), inner, max_size=4
        )
    ),
    max_leaves=12,
)


def dumps(value: Any) -> str:
    """JSON text of `value`, ints of any size included (json.dumps refuses to print them)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return ("-" if value < 0 else "") + _digits(abs(value))
    if isinstance(value, list):
        return "[" + ", ".join(dumps(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {dumps(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def _digits(number: int) -> str:
    if number < 10**4000:
        return str(number)
    high, low = divmod(number, 10**2000)
    return _digits(high) + f"{low:02000d}"


class TestProperty:
    @PROPERTY
    @given(value=values, chunk=st.integers(1, 64))
    def test_any_accepted_body_encodes(self, value: Any, chunk: int) -> None:
        """Whatever JSON a body holds, what the boundary hands on encodes, and streaming it
        in any chunk size gives what reading it whole gives."""
        text = dumps(value)
        body = f'{{"x": {text}, "items": [{text}]}}'.encode()
        whole = loads(body)
        assert encodes(whole)
        read = Recorder(body, chunk)
        assert encodes([read.fields, read.arrays])
        assert (read.fields, read.arrays) == ({"x": whole["x"]}, [whole["items"]])
