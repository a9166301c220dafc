"""The note client against PagerDuty's documented request and response shapes (respx)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import pytest
import respx

from enricher.notes.client import ACCEPT, NoteFailed, NotesClient, NotesConfig, retry_after_s

pytestmark = pytest.mark.anyio
API = "https://api.pagerduty.test"
NOTES = f"{API}/incidents/Q1ABC/notes"
#: PagerDuty's documented 201 answer to POST /incidents/{id}/notes.
CREATED = {
    "note": {
        "id": "PWL7QXS",
        "user": {"id": "PXPGF42", "type": "user_reference", "summary": "Earline Greenholt"},
        "content": "Firefighters are on the scene.",
        "created_at": "2026-12-04T17:40:31-05:00",
    }
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def client() -> AsyncIterator[NotesClient]:
    notes = NotesClient(NotesConfig(API, "y_NbAkKc66ryYTWUXYEu", "bot@example.com"))
    yield notes
    await notes.aclose()


def error(status: int, message: str, *errors: str, **headers: str) -> httpx.Response:
    body = {"error": {"message": message, "code": 2001, "errors": list(errors)}}
    return httpx.Response(status, json=body, headers=headers)


class TestCreate:
    @respx.mock
    async def test_request_has_the_documented_headers_and_body(self, client: NotesClient) -> None:
        """Token auth, API version 2, From: and {"note": {"content"}}; the note's id back."""
        route = respx.post(NOTES).mock(return_value=httpx.Response(201, json=CREATED))
        assert await client.create("Q1ABC", "Runbook: x") == "PWL7QXS"
        request = route.calls.last.request
        assert request.headers["authorization"] == "Token token=y_NbAkKc66ryYTWUXYEu"
        assert request.headers["accept"] == ACCEPT
        assert request.headers["content-type"] == "application/json"
        assert request.headers["from"] == "bot@example.com"
        assert json.loads(request.content) == {"note": {"content": "Runbook: x"}}

    @respx.mock
    async def test_incident_id_is_one_path_segment(self, client: NotesClient) -> None:
        """An id with a slash cannot reach another endpoint."""
        route = respx.post(f"{API}/incidents/a%2F..%2Fb/notes").mock(
            return_value=httpx.Response(201, json=CREATED)
        )
        await client.create("a/../b", "x")
        assert route.called

    @pytest.mark.parametrize("status", [401, 403])
    @respx.mock
    async def test_bad_key_is_permanent_and_says_what_to_set(
        self, client: NotesClient, status: int
    ) -> None:
        respx.post(NOTES).mock(return_value=error(status, "Unauthorized"))
        with pytest.raises(NoteFailed) as failed:
            await client.create("Q1ABC", "x")
        assert failed.value.permanent and failed.value.status == status
        assert "PAGERDUTY_API_TOKEN" in failed.value.reason
        assert "y_NbAkKc66ryYTWUXYEu" not in failed.value.reason

    @respx.mock
    async def test_unknown_incident_is_gone(self, client: NotesClient) -> None:
        respx.post(NOTES).mock(return_value=error(404, "Not Found", "Incident Not Found"))
        with pytest.raises(NoteFailed) as failed:
            await client.create("Q1ABC", "x")
        assert failed.value.gone and not failed.value.permanent

    @respx.mock
    async def test_bad_requester_is_permanent_and_names_the_setting(
        self, client: NotesClient
    ) -> None:
        respx.post(NOTES).mock(return_value=error(400, "Invalid", "Requester User Not Found"))
        with pytest.raises(NoteFailed) as failed:
            await client.create("Q1ABC", "x")
        assert failed.value.permanent
        assert "Requester User Not Found" in failed.value.reason
        assert "PAGERDUTY_FROM" in failed.value.reason

    @pytest.mark.parametrize(
        ("headers", "wait"),
        [({"Retry-After": "7"}, 7.0), ({"ratelimit-reset": "23"}, 23.0), ({}, None)],
    )
    @respx.mock
    async def test_429_carries_the_rate_limit_wait(
        self, client: NotesClient, headers: dict[str, str], wait: float | None
    ) -> None:
        respx.post(NOTES).mock(return_value=error(429, "Rate limited", **headers))
        with pytest.raises(NoteFailed) as failed:
            await client.create("Q1ABC", "x")
        assert failed.value.retry_after == wait
        assert not failed.value.permanent and not failed.value.maybe_sent

    @respx.mock
    async def test_5xx_and_timeout_may_have_stored_it(self, client: NotesClient) -> None:
        respx.post(NOTES).mock(
            side_effect=[httpx.Response(502), httpx.ReadTimeout("slow"), httpx.ConnectError("no")]
        )
        outcomes = []
        for _ in range(3):
            with pytest.raises(NoteFailed) as failed:
                await client.create("Q1ABC", "x")
            outcomes.append(failed.value.maybe_sent)
        assert outcomes == [True, True, False], "a connection never made sent nothing"


class TestFind:
    @respx.mock
    async def test_finds_a_note_by_its_ref(self, client: NotesClient) -> None:
        listed = {"notes": [CREATED["note"], {**CREATED["note"], "content": "x\n— ref abc123"}]}
        route = respx.get(NOTES).mock(return_value=httpx.Response(200, json=listed))
        assert await client.find("Q1ABC", "ref abc123")
        assert not await client.find("Q1ABC", "ref 999")
        assert route.calls.last.request.headers["accept"] == ACCEPT

    @respx.mock
    async def test_a_failed_lookup_leaves_it_unknown(self, client: NotesClient) -> None:
        respx.get(NOTES).mock(return_value=error(429, "Rate limited", **{"Retry-After": "2"}))
        with pytest.raises(NoteFailed) as failed:
            await client.find("Q1ABC", "ref")
        assert failed.value.maybe_sent and failed.value.retry_after == 2.0


def test_retry_after_ignores_junk() -> None:
    assert retry_after_s(httpx.Headers({"Retry-After": "soon", "ratelimit-reset": "3"})) == 3.0
