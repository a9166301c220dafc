"""The HTTP edge: authenticate, validate, enqueue, answer. No search or Slack call happens here.

A webhook is answered as soon as its job is durable (202), so both senders get their 2xx well
inside their timeouts, and the work happens in the workers (enricher.pipeline.pool).

Size and encoding: enricher.bodies (the caps apply to the decoded body; a zip bomb is 413).

Every refusal is logged at warning with who sent it and counted by reason
(`rbe_webhooks_rejected_total`), so a sender whose pages are refused is seen. A sender that
hangs up before its body is complete is no error of ours: one warning line
(`webhook.disconnected`, with the bytes received), no traceback; it will send again.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import structlog
from redis.exceptions import RedisError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from enricher.bodies import read_capped, read_group
from enricher.errors import BadRequest, Unauthorized
from enricher.feedback.intake import verify_slack_request
from enricher.githook import git_push_route
from enricher.metrics import Metrics
from enricher.pipeline.queue import new_job
from enricher.service import Services
from enricher.sources import Ignored, Parsed, parse, refuse_replay
from enricher.sources.alertmanager import check_alertmanager_auth
from enricher.sources.alertmanager.grafana import GrafanaSignature
from enricher.sources.pagerduty import verify_signature

log = structlog.get_logger(__name__)

Handler = Callable[[Request], Awaitable[Response]]


def _sender(request: Request) -> dict[str, str | None]:
    """Who sent a request, for the log line of a refusal."""
    agent = request.headers.get("user-agent")
    return {
        "client": request.client.host if request.client else None,
        "user_agent": agent,
    }


class HeaderCap:
    """ASGI middleware: 431 for requests whose headers exceed `limit` bytes in all.

    uvicorn reads headers up to MAX_BODY_BYTES (enricher.__main__), so a client sending
    140 kB of headers gets this answer, counted and logged like any refusal, instead of a
    connection reset mid-send.
    """

    def __init__(self, app: ASGIApp, *, limit: int, metrics: Metrics) -> None:
        self.app = app
        self.limit = limit
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            size = sum(len(name) + len(value) + 4 for name, value in scope["headers"])
            if size > self.limit:
                last = str(scope.get("path", "")).rpartition("/")[2]
                source = last if last in ("alertmanager", "pagerduty", "grafana") else "other"
                self.metrics.rejected.labels(source, "HeadersTooLarge").inc()
                client = scope.get("client")
                log.warning(
                    "webhook.rejected",
                    source=source,
                    status=431,
                    reason=f"request headers over {self.limit} bytes",
                    client=client[0] if client else None,
                )
                response = JSONResponse(
                    {"error": f"request headers over {self.limit} bytes"},
                    status_code=431,
                    headers={"connection": "close"},
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def create_app(services: Services) -> Starlette:
    settings = services.settings
    metrics = services.metrics
    open_endpoints = settings.open_endpoints
    if open_endpoints:
        log.warning(
            "startup.unauthenticated",
            endpoints=list(open_endpoints),
            detail="these webhooks accept requests without credentials (ALLOW_UNAUTHENTICATED)",
        )

    def guarded(source: str, handler: Handler) -> Handler:
        """Map BadRequest to its 4xx with a short reason, a log line and a metric."""

        async def endpoint(request: Request) -> Response:
            metrics.received.labels(source).inc()
            try:
                return await handler(request)
            except BadRequest as exc:
                metrics.rejected.labels(source, type(exc).__name__).inc()
                log.warning(
                    "webhook.rejected",
                    source=source,
                    status=exc.status,
                    reason=exc.reason,
                    **_sender(request),
                )
                return JSONResponse({"error": exc.reason}, status_code=exc.status)
            except ClientDisconnect:
                log.warning(
                    "webhook.disconnected",
                    source=source,
                    received_bytes=getattr(request.state, "received_bytes", 0),
                    declared_bytes=request.headers.get("content-length"),
                    **_sender(request),
                )
                # Never sent (the connection is gone); a response is what the route returns.
                return Response(status_code=400)

        return endpoint

    async def accept(parsed: Parsed | Ignored, request: Request) -> Response:
        if isinstance(parsed, Ignored):
            metrics.ignored.labels("pagerduty", parsed.reason).inc()
            event = "webhook.ignored"
            fields = {"source": "pagerduty", "event_type": parsed.event_type}
            if parsed.reason.startswith("older"):
                log.warning(event, **fields, reason=parsed.reason, **_sender(request))
            else:
                log.info(event, **fields, reason=parsed.reason)
            return JSONResponse({"status": "ignored"}, status_code=202)
        job = new_job(parsed)
        outcome = await services.accept(job)
        if outcome == "unavailable":
            # Not durable yet (no primary, or too few replicas confirmed): a retry will help.
            metrics.refused.labels(job.source).inc()
            log.warning("webhook.unavailable", source=job.source, group=job.group_key)
            return JSONResponse(
                {"status": "unavailable", "error": "the alert could not be stored durably; retry"},
                status_code=503,
                headers={"retry-after": "1"},
            )
        if outcome == "duplicate":
            metrics.deduplicated.labels(job.source).inc()
        log.info(
            "webhook.accepted",
            source=job.source,
            outcome=outcome,
            group=job.group_key,
            status=job.status,
            alerts=job.alert.alert_count,
        )
        return JSONResponse({"status": outcome}, status_code=202)

    async def alertmanager(request: Request) -> Response:
        if "/webhook/alertmanager" not in open_endpoints:
            check_alertmanager_auth(
                request.headers.get("authorization"),
                bearer_tokens=settings.alertmanager_bearer_tokens,
                basic_users=settings.basic_users,
            )
        parsed = await read_group(
            request,
            limit=settings.alertmanager_max_body_bytes,
            value_limit=settings.max_body_bytes,
        )
        return await accept(parsed, request)

    async def grafana(request: Request) -> Response:
        """Grafana's webhook contact point, signed (enricher.sources.alertmanager.grafana):
        the signature is checked once the body is read, before anything is queued."""
        signature = None
        if "/webhook/grafana" not in open_endpoints:
            signature = GrafanaSignature(
                request.headers,
                settings.grafana_signing_secrets,
                timestamp_header=settings.grafana_signing_timestamp_header,
                max_age_s=settings.grafana_signing_max_age_s,
                now=time.time(),
            )
        parsed = await read_group(
            request,
            limit=settings.alertmanager_max_body_bytes,
            value_limit=settings.max_body_bytes,
            seen=signature.update if signature is not None else None,
        )
        if signature is not None:
            signature.verify()
        return await accept(parsed, request)

    async def pagerduty(request: Request) -> Response:
        body = await read_capped(request, settings.max_body_bytes)
        if "/webhook/pagerduty" not in open_endpoints:
            verify_signature(
                body,
                request.headers.get("x-pagerduty-signature"),
                settings.pagerduty_signing_secrets,
            )
        return await accept(refuse_replay(parse("pagerduty", body)), request)

    async def slack_interactions(request: Request) -> Response:
        """A feedback click (enricher.feedback.intake): 401 unless Slack signed it, else
        200 once the vote is stored (503 when Redis cannot store it: the user may retry)."""
        body = await read_capped(request, settings.max_body_bytes)
        if settings.slack_signing_secret is None:
            raise Unauthorized(
                "feedback buttons are off here: set SLACK_SIGNING_SECRET to the Slack app's "
                "signing secret"
            )
        verify_slack_request(
            body,
            timestamp=request.headers.get("x-slack-request-timestamp"),
            signature=request.headers.get("x-slack-signature"),
            secret=settings.slack_signing_secret.get_secret_value(),
        )
        try:
            accepted = await services.feedback.intake.accept(body)
        except RedisError as exc:
            log.error(
                "feedback.unrecorded",
                error=type(exc).__name__,
                fix="check Redis; Slack shows the user an error, and a second click retries",
            )
            return JSONResponse({"error": "vote not recorded, try again"}, status_code=503)
        metrics.feedback_votes.labels(accepted.verdict or "none", accepted.outcome).inc()
        return Response(status_code=200)

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
        middleware=[Middleware(HeaderCap, limit=settings.max_header_bytes, metrics=metrics)],
        routes=[
            Route("/webhook/alertmanager", guarded("alertmanager", alertmanager), methods=["POST"]),
            Route("/webhook/pagerduty", guarded("pagerduty", pagerduty), methods=["POST"]),
            Route("/webhook/grafana", guarded("grafana", grafana), methods=["POST"]),
            Route("/slack/interactions", guarded("slack", slack_interactions), methods=["POST"]),
            git_push_route(services),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/readyz", readyz, methods=["GET"]),
            Route("/metrics", metrics_endpoint, methods=["GET"]),
        ],
        lifespan=lifespan,
    )
