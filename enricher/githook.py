"""`POST /webhook/git`: a git host's push event fetches the matching runbook source at once,
instead of at the next SYNC_INTERVAL_S.

GitHub signs the body (`X-Hub-Signature-256: sha256=<hex HMAC-SHA256>`, event in
`X-GitHub-Event`); GitLab sends its secret token itself (`X-Gitlab-Token`, event in
`X-Gitlab-Event: Push Hook`). Either is checked against RUNBOOK_GIT_WEBHOOK_SECRETS (several
during rotation); without them the route answers 401, unless ALLOW_UNAUTHENTICATED. A push
names its repository's clone URLs and `ref`; every RUNBOOK_GIT_URL remote of that repository
serving that ref is fetched and synced now (the sync's loop is woken). The answer is 202
either way: the host retries nothing, and the fetch itself runs in the sync's thread.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Mapping
from typing import Any

import structlog
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from enricher.bodies import read_capped
from enricher.errors import BadRequest, MalformedPayload, Unauthorized
from enricher.service import Services
from enricher.signatures import any_match, hmac_sha256, presented

log = structlog.get_logger(__name__)

__all__ = ["git_push_route", "pushed"]


def git_push_route(services: Services) -> Route:
    settings = services.settings

    async def endpoint(request: Request) -> Response:
        try:
            body = await read_capped(request, settings.max_body_bytes)
            _verify(request.headers, body, settings.runbook_git_webhook_secrets,
                    open_=settings.allow_unauthenticated)
            event = request.headers.get("x-github-event") or request.headers.get(
                "x-gitlab-event", ""
            )
            if event == "ping":  # GitHub's hello when the webhook is made
                return JSONResponse({"status": "pong"})
            if event not in ("push", "Push Hook", "Tag Push Hook"):
                return JSONResponse({"status": "ignored", "event": event}, status_code=202)
            urls, ref = pushed(body)
        except BadRequest as exc:
            log.warning("webhook.rejected", source="git", status=exc.status, reason=exc.reason)
            return JSONResponse({"error": exc.reason}, status_code=exc.status)
        sync = services.sync
        sources = sync.push(urls, ref) if sync is not None else []
        log.info("git.push_received", ref=ref, repository=sorted(urls)[:1], fetching=sources)
        if not sources:
            return JSONResponse(
                {"status": "ignored", "reason": "no RUNBOOK_GIT_URL remote serves that "
                 f"repository at {ref}"},
                status_code=202,
            )
        return JSONResponse({"status": "fetching", "sources": sources}, status_code=202)

    return Route("/webhook/git", endpoint, methods=["POST"])


def _verify(headers: Mapping[str, str], body: bytes, secrets: tuple[str, ...], *,
            open_: bool) -> None:
    if not secrets:
        if open_:
            return
        raise Unauthorized(
            "push webhooks are off here: set RUNBOOK_GIT_WEBHOOK_SECRETS to the webhook's "
            "secret (GitHub) or secret token (GitLab)"
        )
    signature = headers.get("x-hub-signature-256")
    if signature is not None:
        expected = [hmac_sha256(secret, body) for secret in secrets]
        if any_match(expected, presented(signature, "sha256")):
            return
        raise Unauthorized("X-Hub-Signature-256 does not match RUNBOOK_GIT_WEBHOOK_SECRETS")
    token = headers.get("x-gitlab-token")
    if token is not None:
        ok = False
        for secret in secrets:
            ok |= hmac.compare_digest(secret.encode(), token.encode())
        if ok:
            return
        raise Unauthorized("X-Gitlab-Token does not match RUNBOOK_GIT_WEBHOOK_SECRETS")
    raise Unauthorized("unsigned: send X-Hub-Signature-256 (GitHub) or X-Gitlab-Token (GitLab)")


def pushed(body: bytes) -> tuple[set[str], str]:
    """The clone URLs of the pushed repository, and the ref, from a GitHub or GitLab push."""
    try:
        event = json.loads(body)
    except ValueError:
        raise MalformedPayload("not JSON") from None
    if not isinstance(event, dict) or not isinstance(event.get("ref"), str):
        raise MalformedPayload("no ref: not a push event")
    urls: set[str] = set()
    for key in ("repository", "project"):
        part: Any = event.get(key)
        if isinstance(part, dict):
            for field in ("clone_url", "ssh_url", "git_url", "html_url", "url",
                          "git_http_url", "git_ssh_url", "web_url", "homepage"):
                value = part.get(field)
                if isinstance(value, str) and value:
                    urls.add(value[:2000])
    if not urls:
        raise MalformedPayload("no repository URL in the push event")
    return urls, event["ref"][:500]
