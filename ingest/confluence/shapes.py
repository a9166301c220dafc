"""Response shapes both deployments share (pydantic at the edge; unknown fields ignored)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ingest.confluence.errors import ConfluenceUnavailable
from ingest.confluence.page import Page, PageRef


class ApiModel(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


Shape = TypeVar("Shape", bound=ApiModel)


def parse(shape: type[Shape], item: object) -> Shape:
    """`item` as `shape`; an answer of another shape is the site's fault, reported as such."""
    try:
        return shape.model_validate(item)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "the answer"
        raise ConfluenceUnavailable(
            f"Confluence answered in an unexpected shape ({where}: {first['msg']}); is "
            "CONFLUENCE_URL a Confluence site of the deployment its credentials are for?"
        ) from None


class Storage(ApiModel):
    value: str = ""


class Body(ApiModel):
    storage: Storage = Field(default_factory=Storage)


class Label(ApiModel):
    name: str


class Labels(ApiModel):
    results: list[Label] = []


class Links(ApiModel):
    webui: str | None = None


def results(body: dict[str, Any]) -> list[Any]:
    """The `results` array of a listing (absent or malformed: none)."""
    found = body.get("results", [])
    return found if isinstance(found, list) else []


def make_page(
    ref: PageRef, base_url: str, title: str, version: tuple[int, datetime],
    labels: Labels, body: Body, links: Links,
) -> Page:
    """A `Page` from either deployment's answer; web links are relative to the base URL."""
    return Page(
        id=ref.id,
        space=ref.space,
        title=title,
        version=version[0],
        when=version[1],
        labels=tuple(label.name for label in labels.results),
        storage=body.storage.value,
        url=f"{base_url}{links.webui}" if links.webui else None,
    )
