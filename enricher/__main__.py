"""`python -m enricher`: serve the webhooks with uvicorn, settings from the environment.

Everything a setting can get wrong fails here, before anything serves or a worker starts,
with exit status 2 and one sentence naming the setting and what to fix: the settings
themselves (enricher.settings), the listening address (enricher.serving.bind), then what
`Services.build` checks.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType

import structlog

from enricher import logs, serving
from enricher.errors import ConfigError
from enricher.settings import load_settings

log = structlog.get_logger("enricher")


def _exit_after_drain(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(0)


def main() -> int:
    logs.configure(json=True)
    # A Ctrl-C while starting up ends the process the same clean way.
    signal.signal(signal.SIGINT, _exit_after_drain)
    try:
        settings = load_settings()
        logs.configure(json=True, level=settings.log_level)
        serving.fit_open_files(settings.max_connections)
        sock = serving.bind(settings.host, settings.port)
        # Imported once the settings and the address are known good: the service's modules
        # take seconds to import (qdrant-client), and a typo should not wait for them.
        from enricher.app import create_app
        from enricher.service import Services

        services = Services.build(settings)
    except ConfigError as exc:
        log.error("startup.config_error", error=str(exc))
        print(f"enricher: cannot start: {exc}", file=sys.stderr, flush=True)
        return 2
    # uvicorn drains on SIGTERM or SIGINT (a second Ctrl-C cuts the drain short), then
    # re-raises each signal it got to the previous handler; exit 0 there, so a deliberate
    # stop reads as success to systemd and Kubernetes, and Ctrl-C prints no traceback.
    signal.signal(signal.SIGTERM, _exit_after_drain)
    serving.server(create_app(services), settings).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
