"""Runbook units: one page with a section per alert is several runbooks. Pure.

Many teams keep one long page with a heading per alert (``### KubePodCrashLooping``), then
what it means and how to fix it. Search, the decision and the page all work on documents,
so such a page is cut at ingest into *units*, each a runbook of its own:

- A heading names an alert when it is an identifier (one word with an inner capital,
  "_" or ":", such as ``etcdNoLeader``, ``node_disk_full`` or ``disk_used_more_than_80%``,
  optionally in backticks, the code span optionally followed by a note in parentheses or
  an explicit ``{#id}``), or a service and an identifier (``frontend: p99_search_latency``,
  as generated alert references write them), and at least one other heading at its level
  is one too; or when the page's front matter lists it in ``alert_names``. A page needs two
  such headings to be cut.
- A page whose title is itself an alert name (``# KubePodCrashLooping``) is that alert's
  runbook: identifiers among its headings are the things it talks about (resource kinds
  under "Mitigation", say), so only the front matter's names cut it.
- Each such heading's section, its subsections included, is a unit: id
  ``<doc_id>#<anchor>``, titled and alert-named after the heading, with its own chunks.
- A run of alert headings with nothing but blank lines between them (``## FooDown``,
  ``## BarDown``, then one text for both) is one unit: the text serves every alert of the
  run. Its id and anchor are the first heading's, it is alert-named after each heading
  and titled with all of them. One unit, not one copy per alert: copies would be sibling
  runbooks with the same text, tied for every alert that is not named exactly, and each
  would count the text again in the corpus statistics (docs/RETRIEVAL.md).
- The page's text outside those sections stays a unit under the page's own doc id, title
  and remaining alert names (its file name is no alert name: it names the collection).
  A page with no alert headings is one unit: itself.

Path, revision, last update, web link and source stay the page's (`Document.page_id`
names it): a unit is read, linked and kept fresh as part of its page.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import PurePosixPath

from enricher.search.names import name_key
from ingest.document import Chunk, Document, Unit

__all__ = ["alert_headings", "alert_name", "identifier", "unit_alert_names", "unit_documents"]

#: One identifier that reads as an alert name: a lower-case letter then a capital
#: (CamelCase, camelCase), or words joined by "_" or ":" (snake_case, recording rules).
_IDENTIFIER = re.compile(r"^[A-Za-z][\w:.%-]*$")
_ALERT_SHAPED = re.compile(r"[a-z0-9][A-Z]|[A-Za-z0-9][_:][A-Za-z0-9]")
#: A service, then its alert: ``frontend: 99th_percentile_search_request_duration``.
_SERVICE_ALERT = re.compile(r"^[A-Za-z][\w.-]*: ([A-Za-z0-9][\w:.%-]*)$")
#: An alert name in a code span, then a note or a site's explicit id:
#: ``\`Loader_lag\` (streaming only)``, ``\`Loader_lag\` {#loader-lag}``.
_CODE_NAME = re.compile(r"^`([^`]+)`\s*(?:\([^()]*\)|\{#[\w:.-]+\})?$")
#: Enough headings of one level that are alert names for the page to be a multi-alert page.
MIN_ALERT_HEADINGS = 2


def alert_name(heading: str) -> str:
    """The alert a heading names, without the code span it may be written in (nor the
    note or explicit id after that span)."""
    text = heading.strip()
    if code := _CODE_NAME.match(text):
        return code.group(1).strip()
    return text.strip("`").strip()


def identifier(heading: str) -> bool:
    """Whether a heading reads as an alert name."""
    name = alert_name(heading)
    if service := _SERVICE_ALERT.match(name):
        return bool(_ALERT_SHAPED.search(service.group(1)))
    return bool(_IDENTIFIER.match(name)) and bool(_ALERT_SHAPED.search(name))


def alert_headings(
    headings: Sequence[tuple[int, str]], listed: Sequence[str], *, by_shape: bool = True
) -> set[int]:
    """Positions (in `headings`, given as (level, text)) of the headings that name alerts:
    the headings the front matter's alert names match, and with `by_shape` the
    identifier-like headings of the level that has most of them, when there are at least
    two."""
    keys = {name_key(name) for name in listed} - {""}
    named = {i for i, (_, text) in enumerate(headings) if name_key(alert_name(text)) in keys}
    shaped = [(i, level) for i, (level, text) in enumerate(headings) if identifier(text)]
    by_level = Counter(level for _, level in shaped)
    found = set(named)
    if by_level and by_shape:
        level, count = max(by_level.items(), key=lambda item: (item[1], -item[0]))
        if count >= MIN_ALERT_HEADINGS:
            found.update(i for i, at in shaped if at == level)
    return found if len(found) >= MIN_ALERT_HEADINGS else set()


def unit_alert_names(unit: Unit) -> tuple[str, ...]:
    """The alerts an alert section serves: its heading's, and those of the headings that
    share its text."""
    return tuple(alert_name(heading) for heading in (unit.heading, *unit.shared))


UnitDocument = tuple[Document, tuple[Chunk, ...]]


def unit_documents(doc: Document, units: Sequence[Unit]) -> list[UnitDocument]:
    """Each unit of `doc` as a document of its own, with its chunks. The unit ids are the
    page's doc id, and ``<doc_id>#<anchor>`` for alert sections."""
    split_out = {name_key(n) for u in units if u.anchor for n in unit_alert_names(u)}
    if split_out:
        split_out.add(name_key(PurePosixPath(doc.path).stem))
    out: list[UnitDocument] = []
    for unit in units:
        body = "\n\n".join(chunk.text for chunk in unit.chunks)
        if unit.anchor:
            names = unit_alert_names(unit)
            made = replace(
                doc,
                doc_id=f"{doc.doc_id}#{unit.anchor}",
                title=" / ".join(names),
                alert_names=names,
                body=body,
                page_id=doc.doc_id,
                unit_anchor=unit.anchor,
            )
        elif split_out:
            rest = tuple(n for n in doc.alert_names if name_key(n) not in split_out)
            made = replace(doc, alert_names=rest, body=body, page_id=doc.doc_id)
        else:
            made = doc
        out.append((made, unit.chunks))
    return out
