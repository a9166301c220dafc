"""Runbook pages with a section per alert, cut the way the product cuts them. Pure.

A page's alert sections are found with the product's own rules (`ingest.chunking.chunk_units`
and `ingest.units`), so a case's `expected_section` is the anchor ingest will give the unit.
Headings that are not identifiers (``### LUN Destroyed``, ``## frontend: disk_usage``) are
named in the page's front matter (`alert_names`), which is how a team tells ingest that
they name alerts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath

import yaml

from enricher.search.names import name_key
from enricher.settings import Settings
from ingest.chunking import chunk_units
from ingest.frontmatter import parse_front_matter, split_front_matter
from ingest.units import alert_name

__all__ = ["drop_section", "headings", "named_page", "section_anchors", "strip_details"]

_DETAILS = re.compile(r"<details>.*?</details>\s*", re.DOTALL)
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_MAX_CHARS = Settings.model_fields["chunk_max_chars"].default
_MIN_CHARS = Settings.model_fields["chunk_min_chars"].default


def strip_details(text: str) -> str:
    """The text without its collapsed ``<details>`` blocks: the generated rule text some
    sites fold under each runbook, which no team's own runbook carries."""
    return _DETAILS.sub("", text)


def headings(text: str) -> list[tuple[int, str, int]]:
    """(level, heading text, line number) of every ATX heading outside code fences."""
    out: list[tuple[int, str, int]] = []
    fenced = False
    for number, line in enumerate(text.splitlines()):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if not fenced and (found := _HEADING.match(line)):
            out.append((len(found.group(1)), found.group(2), number))
    return out


def named_page(title: str, body: str, names: Sequence[str]) -> str:
    """A page with front matter naming its alert headings (`alert_names`) and `title`."""
    return _with_front_matter({"title": title, "alert_names": sorted(set(names))}, body)


def _with_front_matter(meta: Mapping[str, object], body: str) -> str:
    """`body` under `meta` as YAML front matter, keys sorted and each value on one line."""
    dumped = yaml.safe_dump(dict(meta), sort_keys=True, allow_unicode=True, width=1000)
    return f"---\n{dumped}---\n{body.lstrip()}"


def section_anchors(path: str, text: str) -> dict[str, str]:
    """name_key of each alert heading -> its unit's anchor, as ingest cuts the page."""
    meta, body = split_front_matter(text)
    front = parse_front_matter(meta)
    listed = tuple(front.alert_names) or (PurePosixPath(path).stem,)
    units = chunk_units(body, max_chars=_MAX_CHARS, min_chars=_MIN_CHARS, alert_names=listed)
    return {name_key(alert_name(u.heading)): u.anchor for u in units if u.anchor}


def drop_section(text: str, heading: str) -> str:
    """The page without the section under `heading` (up to the next heading of its level or
    above), and without its alert in the front matter's `alert_names`: how a left-out
    alert's runbook is taken out of a page. A name left listed would still name the page
    for that alert, and its near miss would find the page by its exact name."""
    lines = text.splitlines()
    found = headings(text)
    for position, (level, title, start) in enumerate(found):
        if title != heading:
            continue
        end = next((n for lv, _, n in found[position + 1 :] if lv <= level), len(lines))
        return _unlisted("\n".join(lines[:start] + lines[end:]) + "\n", heading)
    return text


def _unlisted(text: str, heading: str) -> str:
    """`text` with the alert `heading` names taken out of its front matter's `alert_names`
    (the front matter rewritten only when it listed it)."""
    meta, body = split_front_matter(text)
    listed = meta.get("alert_names")
    if not isinstance(listed, list):
        return text
    gone = name_key(alert_name(heading))
    names = [n for n in listed if name_key(str(n)) != gone]
    if len(names) == len(listed):
        return text
    return _with_front_matter({**meta, "alert_names": names}, body)
