"""structlog set-up: JSON lines for the service, key=value lines for the CLIs, all on stderr.

Libraries that log through the standard `logging` module (uvicorn, httpx, onnxruntime's
Python side) go through the same renderer, so the service's stderr is one JSON event per
line. Values are capped (`cap_values`): a sender chooses a groupKey or a User-Agent, and a
100 kB one must not be written verbatim into every line that names it.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from typing import Any

import structlog

#: Longest string value written to a log line; longer ones are cut with a note.
VALUE_MAX = 500
#: Formatted tracebacks may be longer: they are written by us, not chosen by a sender.
EXCEPTION_MAX = 20_000


def cap_values(
    logger: object, method: str, event: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """Processor: cut long string values to VALUE_MAX characters, saying how much was cut."""
    for key, value in event.items():
        limit = EXCEPTION_MAX if key == "exception" else VALUE_MAX
        if isinstance(value, str) and len(value) > limit:
            event[key] = f"{value[:limit]}…(+{len(value) - limit} chars)"
    return event


def configure(*, json: bool, level: str = "INFO") -> None:
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    )
    shared: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[*shared, structlog.processors.format_exc_info, cap_values, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[*shared, structlog.stdlib.add_logger_name],
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                cap_values,
                renderer,
            ],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # uvicorn installs handlers of its own unless told otherwise (log_config=None); these
    # make its loggers propagate to the root handler above.
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers.clear()
        logging.getLogger(name).propagate = True
    # httpx logs every request at INFO: a Confluence sync would write a line per page read.
    # Our own events (confluence.scanned, ingest.source_error) say what those requests did.
    logging.getLogger("httpx").setLevel(logging.WARNING)


__all__ = ["EXCEPTION_MAX", "VALUE_MAX", "cap_values", "configure"]
