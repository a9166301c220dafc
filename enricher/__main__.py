"""`python -m enricher`: serve the webhooks with uvicorn, settings from the environment."""

from __future__ import annotations

import signal
import sys
from types import FrameType

import structlog
import uvicorn

from enricher import logs
from enricher.app import create_app
from enricher.errors import ConfigError
from enricher.service import Services
from enricher.settings import load_settings

log = structlog.get_logger("enricher")


def _exit_after_drain(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(0)


def main() -> int:
    settings = load_settings()
    logs.configure(json=True, level=settings.log_level)
    try:
        services = Services.build(settings)
    except ConfigError as exc:
        log.error("startup.config_error", error=str(exc))
        print(f"enricher: cannot start: {exc}", file=sys.stderr)
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
        access_log=False,
        timeout_graceful_shutdown=15,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
