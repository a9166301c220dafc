"""Split a runbook's markdown body into chunks along its headings.

The rules, in the order they apply:

1. ATX headings (``#`` to ``######``, up to three spaces of indent) start
   sections. Lines inside fenced code blocks (``` or ~~~, three or more, closed
   by the same character at least as long) are never headings. Fences are
   recognised at any indentation so that fences inside list items are
   protected too; an unclosed fence runs to the end of the body, as on GitHub.
   Setext headings (underlined with ``===``) are not sections.
2. A section's heading path is joined with " › ". When the body has exactly
   one H1 and it is the first heading, it is the document title: it is left
   out of every path, and the text before and after it is the preamble.
3. Text before the first section heading is the preamble: section ``""`` and
   anchor ``""`` (as the `Chunk` contract says).
4. A section's text is split into blocks: paragraphs (separated by blank
   lines) and fenced code blocks. Blocks are packed into chunks of at most
   ``max_chars``. A paragraph longer than that is cut at line boundaries, and
   a single over-long line at spaces. A fenced code block is never cut: an
   oversized one is a chunk of its own, together with a lead-in shorter than
   ``min_chars`` ("Restart it with:") when there is one.
5. A chunk shorter than ``min_chars`` at a section boundary takes in the
   following section(s) while it fits in ``max_chars``; the heading of each
   section taken in stays visible as a bold line (``**Scale up**``). A short
   chunk that still could not grow is appended to the chunk before it when
   that fits.
6. A chunk covering several sections is labelled with the heading path they
   share ("Mitigation" for "Mitigation" + "Mitigation › Scale up"), or with
   the first section's path when they share nothing. Its anchor is the anchor
   of the deepest heading in that label. Every heading the label does not
   name, the first section's included, appears in the text as a bold line.

Chunk text is made of the body's own lines: code lines are kept verbatim,
prose lines lose only trailing whitespace, and runs of blank lines between
blocks become one. Empty sections make no chunk.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from enricher.search.names import split_identifier
from ingest.document import Chunk

__all__ = [
    "SECTION_SEPARATOR",
    "chunk_markdown",
    "document_title",
    "embed_text",
    "slugify",
]

SECTION_SEPARATOR = " › "

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+$")
_FENCE_OPEN = re.compile(r"^[ \t]*(`{3,}|~{3,})(.*)$")
_FENCE_CLOSE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*$")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_HTML_TAG = re.compile(r"<[^>]+>")
_NOT_SLUG = re.compile(r"[^\w\- ]")


@dataclass(frozen=True)
class _Line:
    text: str
    #: (level, heading text) for a heading line.
    heading: tuple[int, str] | None = None
    #: Number of the fenced code block the line belongs to, opener and closer included.
    fence: int | None = None


@dataclass(frozen=True)
class _Block:
    text: str
    fenced: bool
    #: No blank line separated this block from the one before it in the body.
    tight: bool


#: One heading in a path: (heading text, anchor).
_Heading = tuple[str, str]


@dataclass(frozen=True)
class _Section:
    path: tuple[_Heading, ...]
    blocks: tuple[_Block, ...]


#: A chunk under construction: (section number, block) pairs in body order.
_Draft = list[tuple[int, _Block]]


def chunk_markdown(body: str, *, max_chars: int, min_chars: int) -> list[Chunk]:
    """Cut ``body`` into chunks along its headings; see the module docstring for the rules."""
    if max_chars < 1 or not 0 <= min_chars <= max_chars:
        raise ValueError(
            f"chunk sizes need 0 <= min_chars <= max_chars and max_chars >= 1, "
            f"got min_chars={min_chars} max_chars={max_chars}"
        )
    sections = _sections(_scan_lines(body), max_chars)
    drafts = _pack(sections, max_chars, min_chars)
    drafts = _merge_short_tails(drafts, sections, max_chars, min_chars)
    chunks = []
    for index, draft in enumerate(drafts):
        path = _label(draft, sections)
        chunks.append(
            Chunk(
                index=index,
                section=SECTION_SEPARATOR.join(title for title, _ in path),
                anchor=path[-1][1] if path else "",
                text=_render(draft, sections),
            )
        )
    return chunks


def document_title(body: str) -> str | None:
    """The text of the first H1 outside code fences, if there is one."""
    for line in _scan_lines(body):
        if line.heading is not None and line.heading[0] == 1 and line.heading[1]:
            return line.heading[1]
    return None


def slugify(heading: str) -> str:
    """GitHub's anchor for a heading: "Scale up (fast!)" -> "scale-up-fast".

    Link targets and HTML tags are dropped first, as GitHub slugs the rendered text.
    """
    text = _HTML_TAG.sub("", _LINK.sub(r"\1", heading))
    return _NOT_SLUG.sub("", text.strip().lower()).replace(" ", "-")




def embed_text(title: str, alert_names: Sequence[str], chunk: Chunk) -> str:
    """The text embedded for ``chunk``: title, alert names (as written and as words), section, text.

    The alert names are written both ways so that a query carrying the exact
    token and one carrying the words ("replication lag") both hit.
    """
    names = []
    for name in alert_names:
        words = split_identifier(name)
        names.append(f"{name} ({words})" if words and words != name else name)
    lines = [title.strip(), ", ".join(names), chunk.section, chunk.text]
    return "\n".join(line for line in lines if line)


def _scan_lines(body: str) -> list[_Line]:
    lines: list[_Line] = []
    fence_number = 0
    open_fence: tuple[str, int] | None = None
    for raw in body.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if open_fence is not None:
            lines.append(_Line(raw, fence=fence_number))
            closer = _FENCE_CLOSE.match(raw)
            if closer and closer[1][0] == open_fence[0] and len(closer[1]) >= open_fence[1]:
                open_fence = None
            continue
        opener = _FENCE_OPEN.match(raw)
        # A backtick fence's info string cannot contain backticks: "```x```" is inline code.
        if opener and not (opener[1][0] == "`" and "`" in opener[2]):
            fence_number += 1
            open_fence = (opener[1][0], len(opener[1]))
            lines.append(_Line(raw, fence=fence_number))
            continue
        heading = _HEADING.match(raw)
        if heading:
            text = _CLOSING_HASHES.sub("", heading[2] or "").strip()
            lines.append(_Line(raw, heading=(len(heading[1]), text)))
        else:
            lines.append(_Line(raw))
    return lines


def _sections(lines: list[_Line], max_chars: int) -> list[_Section]:
    headings = {n: line.heading for n, line in enumerate(lines) if line.heading is not None}
    levels = [level for level, _ in headings.values()]
    first = next(iter(headings), None)
    title_line = first if levels.count(1) == 1 and levels[0] == 1 else None
    anchors = _anchors(headings)

    sections: list[_Section] = []
    stack: list[tuple[int, _Heading]] = []
    content: list[_Line] = []
    for number, line in enumerate(lines):
        if line.heading is None:
            content.append(line)
        elif number == title_line:
            # The title's neighbours are both preamble; keep them apart as paragraphs.
            content.append(_Line(""))
        else:
            sections.append(_Section(tuple(h for _, h in stack), _blocks(content, max_chars)))
            level, text = line.heading
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, (text, anchors[number])))
            content = []
    sections.append(_Section(tuple(h for _, h in stack), _blocks(content, max_chars)))
    return [section for section in sections if section.blocks]


def _anchors(headings: dict[int, tuple[int, str]]) -> dict[int, str]:
    """Anchors by line number; repeats get "-1", "-2"... as on GitHub."""
    seen: dict[str, int] = {}
    anchors: dict[int, str] = {}
    for number, (_, text) in headings.items():
        slug = slugify(text)
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors[number] = f"{slug}-{count}" if count else slug
    return anchors


def _blocks(lines: list[_Line], max_chars: int) -> tuple[_Block, ...]:
    blocks: list[_Block] = []
    gap = False

    def kind(line: _Line) -> object:
        if line.fence is not None:
            return line.fence
        return "blank" if not line.text.strip() else "text"

    for key, group in itertools.groupby(lines, key=kind):
        if key == "blank":
            gap = True
            continue
        if key == "text":
            text = "\n".join(line.text.rstrip() for line in group)
        else:
            text = "\n".join(line.text for line in group)
        if key == "text" and len(text) > max_chars:
            pieces = _split_long(text, max_chars)
            blocks.append(_Block(pieces[0], fenced=False, tight=bool(blocks) and not gap))
            blocks.extend(_Block(piece, fenced=False, tight=True) for piece in pieces[1:])
        else:
            blocks.append(_Block(text, fenced=key != "text", tight=bool(blocks) and not gap))
        gap = False
    return tuple(blocks)


def _split_long(text: str, limit: int) -> list[str]:
    """Pack whole lines into pieces of at most ``limit`` characters."""
    pieces: list[str] = []
    current: str | None = None
    for line in text.split("\n"):
        for part in _split_line(line, limit):
            if current is not None and len(current) + 1 + len(part) <= limit:
                current = f"{current}\n{part}"
            else:
                if current is not None:
                    pieces.append(current)
                current = part
    if current is not None:
        pieces.append(current)
    return pieces


def _split_line(line: str, limit: int) -> Iterator[str]:
    """Cut an over-long line at the last space that fits, or hard at ``limit`` without one."""
    while len(line) > limit:
        cut = line.rfind(" ", 0, limit + 1)
        if cut <= 0 or not line[:cut].strip():
            yield line[:limit]
            line = line[limit:]
        else:
            yield line[:cut]
            line = line[cut + 1 :]
    yield line


def _pack(sections: list[_Section], max_chars: int, min_chars: int) -> list[_Draft]:
    drafts: list[_Draft] = []
    current: _Draft = []
    size = 0  # len(_render(current, sections)), kept without re-rendering
    for number, section in enumerate(sections):
        for position, block in enumerate(section.blocks):
            if current and not (position == 0 and size >= min_chars):
                if current[-1][0] == number:
                    # Same section as the last block: the label cannot change.
                    grown = size + (1 if block.tight else 2) + len(block.text)
                else:
                    grown = len(_render([*current, (number, block)], sections))
                # An oversized fence fits nowhere; keep its short lead-in with it.
                lead_in = block.fenced and len(block.text) > max_chars and size < min_chars
                if grown <= max_chars or lead_in:
                    current.append((number, block))
                    size = grown
                    continue
            if current:
                drafts.append(current)
            current = [(number, block)]
            size = len(block.text)
    if current:
        drafts.append(current)
    return drafts


def _merge_short_tails(
    drafts: list[_Draft], sections: list[_Section], max_chars: int, min_chars: int
) -> list[_Draft]:
    """Append a chunk still shorter than ``min_chars`` to the one before it, when that fits."""
    merged: list[_Draft] = []
    for draft in drafts:
        if (
            merged
            and len(_render(draft, sections)) < min_chars
            and len(_render([*merged[-1], *draft], sections)) <= max_chars
        ):
            merged[-1] = [*merged[-1], *draft]
        else:
            merged.append(draft)
    return merged


def _render(draft: _Draft, sections: list[_Section]) -> str:
    """The chunk's text. Each heading its label does not already name is shown as a bold line."""
    out: list[str] = []
    known = _label(draft, sections)
    previous: int | None = None
    for number, block in draft:
        if number == previous:
            out.append(("\n" if block.tight else "\n\n") + block.text)
            continue
        path = sections[number].path
        unseen = path[_shared_prefix_length(known, path) :]
        heading = SECTION_SEPARATOR.join(title for title, _ in unseen if title)
        separator = "\n\n" if out else ""
        if heading:
            separator += f"**{heading}**\n\n"
        out.append(separator + block.text)
        known = path
        previous = number
    return "".join(out)


def _label(draft: _Draft, sections: list[_Section]) -> tuple[_Heading, ...]:
    paths = [sections[number].path for number in dict.fromkeys(number for number, _ in draft)]
    shared = min(_shared_prefix_length(paths[0], path) for path in paths)
    return paths[0][:shared] if shared else paths[0]


def _shared_prefix_length(a: tuple[_Heading, ...], b: tuple[_Heading, ...]) -> int:
    length = 0
    for left, right in zip(a, b, strict=False):
        if left != right:
            break
        length += 1
    return length
