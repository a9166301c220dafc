"""YAML front matter of a runbook: split it off the markdown body and validate it.

A runbook may open with a YAML mapping between two ``---`` lines::

    ---
    title: Postgres replication lag
    alert_names: [PostgresReplicationLag]
    services: [postgres]
    owner: team-db
    last_reviewed: 2024-05-01
    tags: [database]
    ---
    # Postgres replication lag
    ...

Every problem is reported as `FrontMatterError` with a message that names the
problem but not the file: the caller knows the path and adds it.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

__all__ = ["FrontMatter", "FrontMatterError", "parse_front_matter", "split_front_matter"]

_DELIMITER = "---"


class FrontMatterError(ValueError):
    """The front matter is not valid YAML, not a mapping, or has a field of the wrong type."""


def split_front_matter(text: str) -> tuple[dict[str, object], str]:
    """Return ``(meta, body)``; ``meta`` is empty when the text has no front matter.

    Front matter exists only when the very first line is ``---`` (a UTF-8 BOM
    before it is tolerated). It ends at the next line that is exactly ``---``;
    the body is everything after that line, unchanged. A text that opens with
    ``---`` but never closes it is an error rather than silently becoming body,
    because the author clearly meant front matter.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip() != _DELIMITER:
        return {}, text
    for number, line in enumerate(lines[1:], start=1):
        if line.rstrip() == _DELIMITER:
            meta = _load_yaml("".join(lines[1:number]))
            return meta, "".join(lines[number + 1 :])
    raise FrontMatterError(
        "front matter opened with '---' on line 1 is never closed by a '---' line"
    )


def _load_yaml(source: str) -> dict[str, object]:
    try:
        loaded: object = yaml.safe_load(source)
    except yaml.YAMLError as exc:
        raise FrontMatterError(f"front matter is not valid YAML{_where(exc)}") from exc
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        if isinstance(loaded, list):
            kind = "a list"
        elif isinstance(loaded, str):
            kind = "plain text"
        else:
            kind = f"a single {type(loaded).__name__} value"
        raise FrontMatterError(f"front matter must be a YAML mapping of keys to values, got {kind}")
    return {str(key): value for key, value in loaded.items()}


def _where(exc: yaml.YAMLError) -> str:
    """Locate a YAML error in the file: the opening ``---`` is line 1, so YAML line 0 is line 2."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None)
    if mark is None:
        return ""
    detail = f": {problem}" if problem else ""
    return f" (line {mark.line + 2}, column {mark.column + 1}{detail})"


class FrontMatter(BaseModel):
    """The front matter keys ingestion understands; unknown keys are ignored.

    Strings are stripped; a blank ``title`` or ``owner`` counts as absent. List
    fields accept a single string (``services: checkout``), drop blank entries
    and duplicates, and keep the author's order. A YAML timestamp in
    ``last_reviewed`` is reduced to its date.
    """

    model_config = ConfigDict(extra="ignore", frozen=True)

    title: str | None = None
    alert_names: list[str] = []
    services: list[str] = []
    owner: str | None = None
    last_reviewed: date | None = None
    tags: list[str] = []

    @field_validator("title", "owner", mode="after")
    @classmethod
    def _blank_is_absent(cls, value: str | None) -> str | None:
        if value is None:
            return None
        return value.strip() or None

    @field_validator("alert_names", "services", "tags", mode="before")
    @classmethod
    def _one_string_is_a_list(cls, value: Any) -> Any:
        if value is None:
            return []
        if isinstance(value, str):
            return [value]
        if isinstance(value, list):
            # YAML reads `tags: [gateway, 429]` as a number; a person meant the text "429".
            return [
                str(item) if isinstance(item, int | float) and not isinstance(item, bool) else item
                for item in value
            ]
        return value

    @field_validator("alert_names", "services", "tags", mode="after")
    @classmethod
    def _clean_list(cls, value: list[str]) -> list[str]:
        stripped = (item.strip() for item in value)
        return list(dict.fromkeys(item for item in stripped if item))

    @field_validator("last_reviewed", mode="before")
    @classmethod
    def _timestamp_to_date(cls, value: Any) -> Any:
        return value.date() if isinstance(value, datetime) else value


def parse_front_matter(meta: dict[str, object]) -> FrontMatter:
    """Validate ``meta`` (from `split_front_matter`) into a `FrontMatter`."""
    try:
        return FrontMatter.model_validate(meta)
    except ValidationError as exc:
        raise FrontMatterError(f"invalid front matter: {_describe(exc)}") from exc


def _describe(exc: ValidationError) -> str:
    """Turn pydantic's report into one line: ``tags[1]: Input should be a valid string``."""
    reasons = []
    for error in exc.errors(include_url=False):
        field = ""
        for part in error["loc"]:
            field += f"[{part}]" if isinstance(part, int) else (f".{part}" if field else str(part))
        reasons.append(f"{field or 'front matter'}: {error['msg']}")
    return "; ".join(reasons)
