"""The one HTTP seam to Confluence: auth, timeouts, retries with Retry-After, pagination.

429, 5xx, timeouts and dropped connections are retried (tenacity) up to `attempts` times,
waiting what `Retry-After` asks (capped at `max_wait_s`) or backing off exponentially.
401 and 403 are never retried: they raise `ConfluenceAuthError` with what to fix, except on
a single page, where 403 and 404 mean the token may not read it (`get_json(...,
missing_ok=True)` answers None). Credentials live in the client's auth and never reach a
log line or an error message.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

import httpx
import structlog
from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt

from ingest.confluence.errors import ConfluenceAuthError, ConfluenceUnavailable

log = structlog.get_logger(__name__)

_TRANSIENT_STATUS = frozenset({429, 500, 502, 503, 504})
_AUTH_HINT = {
    401: "the credentials were refused (wrong or expired token)",
    403: "the token's user may not use the API or read this space",
}


class _Transient(Exception):
    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


class ConfluenceHttp:
    def __init__(
        self,
        base_url: str,
        auth: httpx.Auth,
        *,
        fix_hint: str,
        timeout_s: float = 30.0,
        attempts: int = 6,
        max_wait_s: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        parts = urlsplit(self.base_url)
        self._origin = f"{parts.scheme}://{parts.netloc}"
        self._base_path = parts.path
        self._fix_hint = fix_hint
        self._attempts = attempts
        self._max_wait_s = max_wait_s
        self._sleep = sleep
        self._client = httpx.Client(
            auth=auth,
            timeout=httpx.Timeout(timeout_s),
            headers={"Accept": "application/json"},
            follow_redirects=False,
        )

    def close(self) -> None:
        self._client.close()

    def get_json(
        self, path: str, params: Mapping[str, str] | None = None, *, missing_ok: bool = False
    ) -> dict[str, Any] | None:
        """GET `path` (relative to the base URL, or a `_links.next` link) as a JSON object."""
        url = self._url(path)
        retrying = Retrying(
            retry=retry_if_exception_type(_Transient),
            stop=stop_after_attempt(self._attempts),
            wait=self._wait,
            sleep=self._sleep,
            before_sleep=_log_retry,
            reraise=True,
        )
        try:
            response = retrying(self._get, url, params)
        except _Transient as exc:
            raise ConfluenceUnavailable(
                f"Confluence at {self._origin} did not answer {urlsplit(url).path} after "
                f"{self._attempts} attempts ({exc}); the pages indexed before stay served, "
                "and the next sync tries again"
            ) from None
        if response.status_code in (401, 403) and not (missing_ok and response.status_code == 403):
            raise ConfluenceAuthError(
                f"Confluence at {self._origin} answered {response.status_code} to "
                f"{urlsplit(url).path}: {_AUTH_HINT[response.status_code]}; {self._fix_hint}"
            )
        if missing_ok and response.status_code in (403, 404):
            return None
        if response.status_code != 200:
            raise ConfluenceUnavailable(
                f"Confluence at {self._origin} answered {response.status_code} to "
                f"{urlsplit(url).path}; check CONFLUENCE_URL and CONFLUENCE_SPACES"
            )
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise ConfluenceUnavailable(
                f"Confluence at {self._origin} answered {urlsplit(url).path} with something "
                "other than a JSON object; is CONFLUENCE_URL the site's address?"
            )
        return body

    def pages(self, path: str, params: Mapping[str, str]) -> Iterator[dict[str, Any]]:
        """Every page of a listing, following `_links.next` until there is none."""
        body = self.get_json(path, params)
        followed: set[str] = set()
        while body is not None:
            yield body
            links = body.get("_links")
            following = links.get("next") if isinstance(links, dict) else None
            if not following:
                return
            if str(following) in followed:
                raise ConfluenceUnavailable(
                    f"Confluence at {self._origin} paged {path} in a circle (the same "
                    "`_links.next` twice); the pages indexed before stay served"
                )
            followed.add(str(following))
            body = self.get_json(str(following))

    def _get(self, url: str, params: Mapping[str, str] | None) -> httpx.Response:
        try:
            response = self._client.get(url, params=params)
        except httpx.TransportError as exc:
            raise _Transient(type(exc).__name__) from None
        if response.status_code in _TRANSIENT_STATUS:
            raise _Transient(
                f"HTTP {response.status_code}", _retry_after(response.headers.get("Retry-After"))
            )
        return response

    def _wait(self, state: RetryCallState) -> float:
        failure = state.outcome.exception() if state.outcome is not None else None
        asked = failure.retry_after if isinstance(failure, _Transient) else None
        if asked is None:
            asked = 2.0 ** (state.attempt_number - 1)
        return min(max(asked, 0.0), self._max_wait_s)

    def _url(self, path: str) -> str:
        """Listing links are site-relative on Cloud (`/wiki/api/v2/...`) and relative to the
        base on Data Center (`/rest/api/...`); an absolute link must stay on our site."""
        if "://" in path:
            if not path.startswith(self._origin + "/"):
                raise ConfluenceUnavailable(
                    f"Confluence linked a listing to another site; refusing to follow it "
                    f"with our credentials (expected {self._origin})"
                )
            return path
        if path.startswith("/") and self._base_path and path.startswith(self._base_path + "/"):
            return self._origin + path
        return f"{self.base_url}/{path.lstrip('/')}"


def _retry_after(value: str | None) -> float | None:
    """Seconds from `Retry-After`: a number of seconds, or an HTTP date (from our clock)."""
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _log_retry(state: RetryCallState) -> None:
    failure = state.outcome.exception() if state.outcome is not None else None
    wait = state.next_action.sleep if state.next_action is not None else None
    log.warning(
        "confluence.retry", reason=str(failure), attempt=state.attempt_number, wait_s=wait
    )


__all__ = ["ConfluenceHttp"]
