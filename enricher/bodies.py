"""Reading a request body: the size caps, and `Content-Encoding` undone as it streams.

A PagerDuty body (one event) is read whole, up to `MAX_BODY_BYTES`. An Alertmanager group has
no size bound, and a 413 would lose its page for good, so once the request has passed auth its
body is read as it streams in (`GroupReader`): at most `ALERTMANAGER_MAX_BODY_BYTES` in all,
holding no more than one alert or field (`MAX_BODY_BYTES`) at a time, the first alerts kept
and the rest counted.

A `gzip` or `deflate` body (zlib-wrapped, or raw as some clients send it) is decompressed a
piece at a time, and every cap is on the decoded size: the decompressor is never asked for
more than the room left under the cap (and at most `PIECE` bytes at once), so a zip bomb is
refused with 413 after decoding at most the cap, in bounded memory. Any other encoding is 415.
A signature is checked against the decoded body, the JSON the sender signed.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Callable, Iterator

from starlette.requests import Request

from enricher.errors import MalformedPayload, PayloadTooLarge, UnsupportedEncoding
from enricher.sources import Parsed, from_group
from enricher.sources.alertmanager import GroupReader

#: Largest piece decompressed at once.
PIECE = 64 * 1024
_GZIP = zlib.MAX_WBITS | 16
_ZLIB = zlib.MAX_WBITS
_RAW = -zlib.MAX_WBITS


def _check_declared(request: Request, limit: int) -> None:
    if _encoding(request) != "identity":
        return  # the declared length is of the compressed body
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"body over {limit} bytes")


async def read_capped(request: Request, limit: int) -> bytes:
    """The decoded body, refusing more than `limit` bytes without reading them all."""
    _check_declared(request, limit)
    chunks: list[bytes] = []
    async for chunk, size in _chunks(request, limit):
        if size > limit:
            raise PayloadTooLarge(f"body over {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def read_group(
    request: Request,
    *,
    limit: int,
    value_limit: int,
    seen: Callable[[bytes], None] | None = None,
) -> Parsed:
    """An Alertmanager body read as it arrives, in bounded memory (module docstring);
    `seen` gets each decoded piece too (a signature computed as the body streams)."""
    _check_declared(request, limit)
    reader = GroupReader(max_value_chars=value_limit)
    async for chunk, size in _chunks(request, limit):
        if size > limit:
            raise PayloadTooLarge(
                f"body over {limit} bytes: set max_alerts in the webhook config "
                "or raise ALERTMANAGER_MAX_BODY_BYTES"
            )
        if seen is not None:
            seen(chunk)
        reader.feed(chunk)
    return from_group(reader.close())


def _encoding(request: Request) -> str:
    return request.headers.get("content-encoding", "identity").strip().lower() or "identity"


async def _chunks(request: Request, limit: int) -> AsyncIterator[tuple[bytes, int]]:
    """The decoded body as it arrives, each piece with the decoded bytes so far; decoding
    stops once they pass `limit`. The raw bytes received are kept on `request.state` for
    the log line of a sender that hangs up."""
    encoding = _encoding(request)
    if encoding not in ("identity", "gzip", "x-gzip", "deflate"):
        raise UnsupportedEncoding(
            f"Content-Encoding {encoding[:40]} is not supported; send gzip, deflate or none"
        )
    decoder = None if encoding == "identity" else Decoder(encoding)
    request.state.received_bytes = 0
    size = 0
    async for chunk in request.stream():
        request.state.received_bytes += len(chunk)
        for piece in [chunk] if decoder is None else decoder.feed(chunk, limit - size):
            size += len(piece)
            yield piece, size
            if size > limit:
                return
    if decoder is not None:
        decoder.close()


class Decoder:
    """One `gzip` or `deflate` body, decompressed a piece at a time."""

    def __init__(self, encoding: str) -> None:
        self.name = "gzip" if encoding in ("gzip", "x-gzip") else "deflate"
        self._wbits: int | None = _GZIP if self.name == "gzip" else None
        self._inflate: zlib._Decompress | None = None

    def feed(self, data: bytes, room: int) -> Iterator[bytes]:
        """Decompressed pieces of `data`, stopping once they pass `room` bytes in all."""
        made = 0
        while data and made <= room:
            inflate = self._inflater(data)
            try:
                piece = inflate.decompress(data, min(PIECE, room - made + 1))
            except zlib.error:
                raise MalformedPayload(f"body is not valid {self.name}") from None
            made += len(piece)
            if piece:
                yield piece
            # After the end of a stream: a gzip body may hold several members in a row.
            data = inflate.unused_data if inflate.eof else inflate.unconsumed_tail

    def close(self) -> None:
        if self._inflate is None or not self._inflate.eof:
            raise MalformedPayload(f"{self.name} body ends early")

    def _inflater(self, data: bytes) -> zlib._Decompress:
        if self._inflate is None or self._inflate.eof:
            if self._wbits is None:
                # RFC 9110's deflate is zlib-wrapped; some clients send it raw.
                zlib_header = len(data) >= 2 and data[0] & 0x0F == 8 and (
                    (data[0] << 8) | data[1]) % 31 == 0
                self._wbits = _ZLIB if zlib_header else _RAW
            self._inflate = zlib.decompressobj(self._wbits)
        return self._inflate


__all__ = ["PIECE", "Decoder", "read_capped", "read_group"]
