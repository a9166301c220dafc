"""PagerDuty's REST API for incident notes, over httpx (respx intercepts it in tests).

    POST {api}/incidents/{id}/notes   {"note": {"content": ...}}  → 201 {"note": {id, ...}}
    GET  {api}/incidents/{id}/notes                              → 200 {"notes": [...]}

Headers: `Authorization: Token token=<key>`, `Accept: application/vnd.pagerduty+json;
version=2`, `From: <email>` (an account-level key requires it). Every failure is a
`NoteFailed` that says what happens next: `permanent` (401/403: the key; 400: this note),
`gone` (404: the incident), `retry_after` (429, from `Retry-After` or `ratelimit-reset`),
and `maybe_sent` (5xx, a timeout: PagerDuty may have stored it, so look before resending).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ConfigDict, ValidationError

ACCEPT = "application/vnd.pagerduty+json;version=2"
TIMEOUT_S = 5.0
#: How many of an incident's notes a lookup reads (PagerDuty lists them oldest first).
LOOKUP_LIMIT = 100


class NoteFailed(Exception):
    def __init__(
        self,
        reason: str,
        *,
        status: int | None = None,
        permanent: bool = False,
        gone: bool = False,
        retry_after: float | None = None,
        maybe_sent: bool = False,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.permanent = permanent
        self.gone = gone
        self.retry_after = retry_after
        self.maybe_sent = maybe_sent


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class _Note(_Model):
    id: str
    content: str = ""


class _Created(_Model):
    note: _Note


class _Listed(_Model):
    notes: list[_Note]


@dataclass(frozen=True)
class NotesConfig:
    api_url: str
    token: str
    sender: str | None


def retry_after_s(headers: httpx.Headers) -> float | None:
    """PagerDuty's wait on a 429: `Retry-After` (seconds), else `ratelimit-reset` (seconds
    until the window resets); None when neither is a number."""
    for name in ("retry-after", "ratelimit-reset"):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            return max(0.0, float(raw))
        except ValueError:
            continue
    return None


def _error_detail(response: httpx.Response) -> str:
    """PagerDuty's `{"error": {"message", "errors": [...]}}`, short; the status otherwise."""
    try:
        error = response.json().get("error") or {}
        parts = [str(error.get("message", "")), *map(str, error.get("errors") or [])]
        detail = "; ".join(p for p in parts if p)
    except (ValueError, AttributeError):
        detail = ""
    return (detail or f"HTTP {response.status_code}")[:200]


def _failure(response: httpx.Response) -> NoteFailed:
    status = response.status_code
    detail = _error_detail(response)
    if status in (401, 403):
        return NoteFailed(
            f"PagerDuty refused the API key ({status} {detail}): set PAGERDUTY_API_TOKEN to a "
            "REST API key with write access (and PAGERDUTY_FROM to a user's email)",
            status=status, permanent=True,
        )
    if status == 404:
        return NoteFailed(f"no such incident ({detail})", status=status, gone=True)
    if status == 429:
        return NoteFailed(
            "rate limited", status=status, retry_after=retry_after_s(response.headers)
        )
    if status >= 500:
        return NoteFailed(f"PagerDuty error {status}", status=status, maybe_sent=True)
    return NoteFailed(
        f"PagerDuty rejected the note ({status} {detail}); a 400 naming the requester means "
        "PAGERDUTY_FROM is not a user's email",
        status=status, permanent=True,
    )


class NotesClient:
    def __init__(
        self, config: NotesConfig, *, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        headers = {
            "Authorization": f"Token token={config.token}",
            "Accept": ACCEPT,
            "Content-Type": "application/json",
        }
        if config.sender:
            headers["From"] = config.sender
        self._http = httpx.AsyncClient(
            base_url=config.api_url.rstrip("/"),
            headers=headers,
            timeout=TIMEOUT_S,
            transport=transport,
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _call(
        self, method: str, path: str, *, json: object = None, params: dict[str, int] | None = None
    ) -> httpx.Response:
        try:
            return await self._http.request(method, path, json=json, params=params)
        except httpx.TimeoutException as exc:
            reason = f"PagerDuty timed out ({type(exc).__name__})"
            raise NoteFailed(reason, maybe_sent=True) from exc
        except httpx.HTTPError as exc:
            # A connection never made sent nothing; one dropped mid-way may have.
            sent = not isinstance(exc, httpx.ConnectError)
            reason = f"PagerDuty unreachable ({type(exc).__name__})"
            raise NoteFailed(reason, maybe_sent=sent) from exc

    async def create(self, incident_id: str, content: str) -> str:
        """Add the note; its id."""
        path = f"/incidents/{quote(incident_id, safe='')}/notes"
        response = await self._call("POST", path, json={"note": {"content": content}})
        if response.status_code not in (200, 201):
            raise _failure(response)
        try:
            return _Created.model_validate_json(response.content).note.id
        except ValidationError:
            return ""  # stored (2xx) all the same: an answer we cannot read is not a failure

    async def find(self, incident_id: str, ref: str) -> bool:
        """Whether the incident already has a note containing `ref`."""
        path = f"/incidents/{quote(incident_id, safe='')}/notes"
        response = await self._call("GET", path, params={"limit": LOOKUP_LIMIT})
        if response.status_code != 200:
            failure = _failure(response)
            failure.maybe_sent = True  # still unknown: the note may be there
            raise failure
        try:
            notes = _Listed.model_validate_json(response.content).notes
        except ValidationError as exc:
            raise NoteFailed("PagerDuty's note list unreadable", maybe_sent=True) from exc
        return any(ref in note.content for note in notes)

