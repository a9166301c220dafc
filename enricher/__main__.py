"""`python -m enricher`: serve the webhooks with uvicorn, settings from the environment.

Everything a setting can get wrong fails here, before anything serves or a worker starts,
with exit status 2 and one sentence naming the setting and what to fix: the settings
themselves (enricher.settings), then what `Services.build` checks.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType

import structlog
import uvicorn

from enricher import logs
from enricher.errors import ConfigError
from enricher.settings import load_settings

log = structlog.get_logger("enricher")


def _exit_after_drain(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(0)


def main() -> int:
    logs.configure(json=True)
    try:
        settings = load_settings()
        logs.configure(json=True, level=settings.log_level)
        # Imported once the settings are known good: the service's modules
        # take seconds to import (qdrant-client), and a typo should not wait for them.
        from enricher.app import create_app
        from enricher.service import Services

        services = Services.build(settings)
    except ConfigError as exc:
        log.error("startup.config_error", error=str(exc))
        print(f"enricher: cannot start: {exc}", file=sys.stderr, flush=True)
        return 2
    # uvicorn drains on SIGTERM, then re-raises the signal to the previous handler; exit 0
    # there, so a deliberate stop reads as success to systemd and Kubernetes.
    signal.signal(signal.SIGTERM, _exit_after_drain)
    if settings.allow_unauthenticated:
        log.warning("startup.unauthenticated", detail="webhooks accept unauthenticated requests")
    uvicorn.run(
        create_app(services),
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level.lower(),
        log_config=None,  # uvicorn's lines go through enricher.logs as JSON
        access_log=False,
        # Outlast the senders' idle connections (settings.keep_alive_s).
        timeout_keep_alive=int(settings.keep_alive_s),
        http="h11",
        # Headers are read up to this size, so a large one gets the app's 431 (enricher.app)
        # rather than h11's 400 and a connection reset while the client is still sending.
        h11_max_incomplete_event_size=settings.max_body_bytes,
        timeout_graceful_shutdown=15,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
