"""Multi-alert pages: the synthetic corpus written the way many teams keep runbooks, one
long page per service with a section per alert (`python -m scripts.corpus_gen --pages`).

Each service's runbooks are folded, in corpus order, into `<service>/operations.md`: a
title and a short preamble, then per runbook an `## <AlertName>` heading over its own
sections, each demoted one level (its front matter and title dropped). A service with a
single runbook keeps it as a file of its own. Cases that expect a folded runbook then
expect the page and the alert's section (`expected_section`, its heading's anchor as the
default host makes it, ingest.anchors); the other cases are unchanged. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ingest.anchors import DEFAULT_STYLE, slug
from scripts.corpus_gen.generate import Runbook

PAGE_NAME = "operations.md"


@dataclass(frozen=True)
class Folded:
    """The corpus as pages: path -> markdown, and each folded runbook's (page, anchor)."""

    files: dict[str, str]
    sections: dict[str, tuple[str, str]]


def _demoted(text: str) -> list[str]:
    """A runbook's body without front matter and title, its headings one level deeper
    (lines inside code fences are left alone: a shell comment is not a heading)."""
    lines = text.splitlines()
    if lines and lines[0] == "---":
        lines = lines[lines.index("---", 1) + 1 :]
    out: list[str] = []
    fenced = False
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("# "):
            continue
        elif not fenced and line.startswith("#"):
            line = "#" + line
        out.append(line)
    return out


def fold(books: Sequence[Runbook]) -> Folded:
    """Fold the runbooks of each service that has two or more into one page."""
    by_service: dict[str, list[Runbook]] = {}
    for book in books:
        by_service.setdefault(book.service, []).append(book)
    files: dict[str, str] = {}
    sections: dict[str, tuple[str, str]] = {}
    for service, own in by_service.items():
        if len(own) < 2:
            files[own[0].path] = own[0].text
            continue
        page = f"{service}/{PAGE_NAME}"
        parts = [
            "---",
            f"title: {service} operations runbook",
            f"services: [{service}]",
            "---",
            f"# {service} operations runbook",
            "",
            f"Every alert the {service} service pages for has a section below, named "
            "exactly like the alert.",
        ]
        for book in own:
            parts += ["", f"## {book.alert_name}", *_demoted(book.text)]
            sections[book.path] = (page, slug(book.alert_name, DEFAULT_STYLE))
        files[page] = "\n".join(parts).rstrip("\n") + "\n"
    return Folded(files, sections)


def sectioned(items: Sequence[dict[str, Any]], folded: Folded) -> list[dict[str, Any]]:
    """The cases with each folded runbook's expectation moved to its page and section."""
    out: list[dict[str, Any]] = []
    for item in items:
        target = folded.sections.get(item.get("expected_doc") or "")
        if target is None:
            out.append(item)
            continue
        page, anchor = target
        out.append({**item, "expected_doc": page, "expected_section": anchor})
    return out

