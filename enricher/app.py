"""The HTTP edge: authenticate, validate, enqueue, answer. No search or Slack call happens here.

A webhook is answered as soon as its job is durable (202), so both senders get their 2xx well
inside their timeouts, and the work happens in the workers (enricher/worker.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import structlog
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from enricher.errors import BadRequest, PayloadTooLarge
from enricher.pipeline.queue import new_job
from enricher.service import Services
from enricher.sources import Ignored, Parsed, parse
from enricher.sources.alertmanager import check_alertmanager_auth
from enricher.sources.pagerduty import verify_signature

log = structlog.get_logger(__name__)

Handler = Callable[[Request], Awaitable[Response]]


async def read_capped(request: Request, limit: int) -> bytes:
    """The raw body, refusing more than `limit` bytes without reading them all."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"body over {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"body over {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def create_app(services: Services) -> Starlette:
    settings = services.settings
    metrics = services.metrics

    def guarded(source: str, handler: Handler) -> Handler:
        """Map BadRequest to its 4xx with a short reason, a log line and a metric."""

        async def endpoint(request: Request) -> Response:
            metrics.received.labels(source).inc()
            try:
                return await handler(request)
            except BadRequest as exc:
                metrics.rejected.labels(source, type(exc).__name__).inc()
                log.info(
                    "webhook.rejected",
                    source=source,
                    status=exc.status,
                    reason=exc.reason,
                    client=request.client.host if request.client else None,
                )
                return JSONResponse({"error": exc.reason}, status_code=exc.status)

        return endpoint

    async def accept(parsed: Parsed | Ignored) -> Response:
        if isinstance(parsed, Ignored):
            log.info("webhook.ignored", source="pagerduty", event_type=parsed.event_type)
            return JSONResponse({"status": "ignored"}, status_code=202)
        job = new_job(parsed)
        outcome = await services.accept(job)
        if outcome == "duplicate":
            metrics.deduplicated.labels(job.source).inc()
        log.info(
            "webhook.accepted",
            source=job.source,
            outcome=outcome,
            group=job.group_key,
            status=job.status,
        )
        return JSONResponse({"status": outcome}, status_code=202)

    async def alertmanager(request: Request) -> Response:
        if not settings.allow_unauthenticated:
            check_alertmanager_auth(
                request.headers.get("authorization"),
                bearer_tokens=settings.alertmanager_bearer_tokens,
                basic_users=settings.basic_users,
            )
        body = await read_capped(request, settings.max_body_bytes)
        return await accept(parse("alertmanager", body))

    async def pagerduty(request: Request) -> Response:
        body = await read_capped(request, settings.max_body_bytes)
        if not settings.allow_unauthenticated:
            verify_signature(
                body,
                request.headers.get("x-pagerduty-signature"),
                settings.pagerduty_signing_secrets,
            )
        return await accept(parse("pagerduty", body))

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def readyz(request: Request) -> Response:
        checks = await services.readiness()
        ready = all(c["ok"] for c in checks.values())
        return JSONResponse({"ready": ready, "checks": checks}, status_code=200 if ready else 503)

    async def metrics_endpoint(request: Request) -> Response:
        await services.refresh_gauges()
        return Response(metrics.render(), media_type="text/plain; version=0.0.4")

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await services.start()
        try:
            yield
        finally:
            await services.stop()

    return Starlette(
        routes=[
            Route("/webhook/alertmanager", guarded("alertmanager", alertmanager), methods=["POST"]),
            Route("/webhook/pagerduty", guarded("pagerduty", pagerduty), methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/readyz", readyz, methods=["GET"]),
            Route("/metrics", metrics_endpoint, methods=["GET"]),
        ],
        lifespan=lifespan,
    )
