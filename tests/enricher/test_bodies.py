"""Content-Encoding undone a piece at a time, never past the room under the cap."""

from __future__ import annotations

import gzip
import zlib

import pytest

from enricher.bodies import PIECE, Decoder
from enricher.errors import MalformedPayload

JSON = b'{"version": "4", "alerts": []}'


class TestDecoder:
    def test_a_bomb_is_decoded_no_further_than_the_room(self) -> None:
        """64 MiB in 64 KiB of gzip, fed in one go: the pieces stop one byte past the room,
        none larger than PIECE."""
        bomb = gzip.compress(b" " * (64 << 20), 1)
        pieces = list(Decoder("gzip").feed(bomb, 1 << 20))
        assert sum(map(len, pieces)) == (1 << 20) + 1
        assert max(map(len, pieces)) <= PIECE

    @pytest.mark.parametrize(
        ("encoding", "body"),
        [
            ("gzip", gzip.compress(JSON[:10]) + gzip.compress(JSON[10:])),
            ("deflate", zlib.compress(JSON)),
            ("deflate", zlib.compress(JSON)[2:-4]),
        ],
        ids=["gzip-two-members", "deflate-zlib", "deflate-raw"],
    )
    def test_fed_a_byte_at_a_time(self, encoding: str, body: bytes) -> None:
        """Chunk boundaries do not matter (past the first two bytes of a deflate body)."""
        decoder = Decoder(encoding)
        out = b"".join(
            piece
            for chunk in [body[:2], *(body[i : i + 1] for i in range(2, len(body)))]
            for piece in decoder.feed(chunk, 1 << 20)
        )
        decoder.close()
        assert out == JSON

    def test_an_unfinished_stream_is_refused(self) -> None:
        decoder = Decoder("gzip")
        list(decoder.feed(gzip.compress(JSON)[:-8], 1 << 20))
        with pytest.raises(MalformedPayload, match="gzip body ends early"):
            decoder.close()
