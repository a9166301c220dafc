"""Split a runbook's markdown body into chunks along its headings.

The body is read by a CommonMark parser (markdown-it-py), so what counts as a heading, a
code block or an HTML block is what GitHub renders. The rules, in the order they apply:

1. ATX (``#`` to ``######``) and setext (underlined with ``===`` or ``---``) headings start
   sections. Nothing inside a fenced or indented code block, an HTML block or a list item
   is a heading; an unclosed fence runs to the end of the body, as on GitHub.
2. A section's heading path is joined with " › ". When the body has exactly one H1 and it
   is the first heading, it is the document title: it is left out of every path, and the
   text before and after it is the preamble.
3. Text before the first section heading is the preamble: section ``""`` and anchor ``""``
   (as the `Chunk` contract says). Anchors are the host's (ingest.anchors).
4. A section's text is split into the parser's top-level blocks (paragraphs, lists,
   tables, quotes, code and HTML blocks). Blocks are packed into chunks of at most
   ``max_chars``. A block longer than that is cut at line boundaries, and a single
   over-long line at spaces; a code block is never cut, not even one nested in a list
   item. An oversized code block is a chunk of its own, together with a lead-in shorter
   than ``min_chars`` ("Restart it with:") when there is one.
5. A chunk shorter than ``min_chars`` at a section boundary takes in the following
   section(s) while it fits in ``max_chars``; the heading of each section taken in stays
   visible as a bold line (``**Scale up**``). A short chunk that still could not grow is
   appended to the chunk before it when that fits.
6. A chunk covering several sections is labelled with the heading path they share
   ("Mitigation" for "Mitigation" + "Mitigation › Scale up"), or with the first section's
   path when they share nothing. Its anchor is the anchor of the deepest heading in that
   label. Every heading the label does not name, the first section's included, appears in
   the text as a bold line.

`chunk_units` first cuts a page with a section per alert into units (ingest.units) and
chunks each on its own: no chunk spans two alerts, a unit's heading paths start below its
alert heading, and its preamble carries the alert heading's anchor. Alert headings with
no text between them share the text under the last of them: one unit, under the first.
Anchors stay those of the whole page, as the host numbers repeated headings page-wide.

Chunk text is made of the body's own lines: code lines are kept verbatim, other lines lose
only trailing whitespace, and runs of blank lines between blocks become one. Empty
sections make no chunk.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.token import Token

from enricher.index.schema import Actionable
from enricher.search.names import split_identifier
from ingest.anchors import DEFAULT_STYLE, Style, anchors, heading_text
from ingest.document import Chunk, Unit
from ingest.units import alert_headings, identifier

__all__ = [
    "SECTION_SEPARATOR",
    "actionable",
    "chunk_markdown",
    "chunk_units",
    "document_title",
    "embed_text",
]

SECTION_SEPARATOR = " › "


#: Headings that say what to do. Runbook templates name these sections the same way across
#: teams (Diagnosis, Mitigation, Remediation, Steps, Troubleshooting, What to do...).
_ACTION_HEADING = re.compile(
    r"\b(?:diagnos|mitigat|remediat|resolution|resolv|fix|steps?\b|troubleshoot|actions?\b"
    r"|procedure|recover|workaround|investigat|triage|debug|what to do|how to|respond|response"
    r"|runbook|playbook|checks?\b|restor|rollback|roll back|solutions?\b)",
    re.IGNORECASE,
)
#: A fenced or indented code block, or an inline `command` at the start of a list item.
_COMMANDS = re.compile(r"^(?:```|~~~| {4}\S|\s*[-*] `)", re.MULTILINE)


#: A heading the chunk took in from a merged section, rendered as a bold line (rule 5); a
#: page's own bold label line ("**Next steps**") reads the same.
_MERGED_HEADING = re.compile(r"^\*\*(.+)\*\*$", re.MULTILINE)
#: A list item that is only a label for what follows it ("* Solution:"), as alert-rule
#: references lay out each rule's parts.
_LIST_LABEL = re.compile(r"^[ \t]*[-*+][ \t]+([A-Za-z][\w ]{0,40}):[ \t]*$", re.MULTILINE)


def actionable(section: str, text: str) -> int:
    """The `schema.Actionable` level of a chunk from its heading path, the headings of the
    sections merged into it and its label lines."""
    headings = [section, *_MERGED_HEADING.findall(text), *_LIST_LABEL.findall(text)]
    if any(_ACTION_HEADING.search(heading) for heading in headings):
        return Actionable.HEADING
    return Actionable.COMMANDS if _COMMANDS.search(text) else Actionable.NONE


#: CommonMark plus GitHub's tables, which runbooks use for contact lists and past incidents.
_PARSER = MarkdownIt("commonmark").enable("table")
#: Blocks whose lines are code: kept verbatim and never cut.
_CODE_BLOCKS = frozenset({"fence", "code_block"})


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
    #: Number of the alert heading whose unit the section is in; None for the page's text.
    unit: int | None = None


@dataclass(frozen=True)
class _Page:
    sections: list[_Section]
    #: Every heading's text and anchor, in page order.
    headings: list[_Heading]
    #: The first alert heading of each run sharing one text -> the run's other headings.
    runs: dict[int, tuple[int, ...]]


#: A chunk under construction: (section number, block) pairs in body order.
_Draft = list[tuple[int, _Block]]


def chunk_markdown(
    body: str, *, max_chars: int, min_chars: int, style: Style = DEFAULT_STYLE
) -> list[Chunk]:
    """Cut ``body`` into chunks along its headings; see the module docstring for the rules."""
    _check_sizes(max_chars, min_chars)
    return _chunks(_parse(body, max_chars, style, None).sections, max_chars, min_chars, "")


def chunk_units(
    body: str,
    *,
    max_chars: int,
    min_chars: int,
    style: Style = DEFAULT_STYLE,
    alert_names: Sequence[str] = (),
) -> list[Unit]:
    """Cut ``body`` into its runbook units (ingest.units), each chunked on its own, in page
    order of their first text; `alert_names` are the front matter's."""
    _check_sizes(max_chars, min_chars)
    page = _parse(body, max_chars, style, alert_names)
    groups: dict[int | None, list[_Section]] = {}
    for section in page.sections:
        groups.setdefault(section.unit, []).append(section)
    units = []
    for number, sections in groups.items():
        heading, anchor = "", ""
        shared: tuple[str, ...] = ()
        if number is not None:
            heading, anchor = page.headings[number]
            shared = tuple(page.headings[n][0] for n in page.runs.get(number, ()))
        chunks = _chunks(sections, max_chars, min_chars, anchor)
        units.append(Unit(anchor, heading, tuple(chunks), shared))
    return units


def _check_sizes(max_chars: int, min_chars: int) -> None:
    if max_chars < 1 or not 0 <= min_chars <= max_chars:
        raise ValueError(
            f"chunk sizes need 0 <= min_chars <= max_chars and max_chars >= 1, "
            f"got min_chars={min_chars} max_chars={max_chars}"
        )


def _chunks(
    sections: list[_Section], max_chars: int, min_chars: int, root_anchor: str
) -> list[Chunk]:
    """The chunks of one unit's sections, numbered from 0; `root_anchor` is its preamble's."""
    drafts = _pack(sections, max_chars, min_chars)
    drafts = _merge_short_tails(drafts, sections, max_chars, min_chars)
    chunks = []
    for index, draft in enumerate(drafts):
        path = _label(draft, sections)
        chunks.append(
            Chunk(
                index=index,
                section=SECTION_SEPARATOR.join(title for title, _ in path),
                anchor=path[-1][1] if path else root_anchor,
                text=_render(draft, sections),
            )
        )
    return chunks


def document_title(body: str) -> str | None:
    """The text of the first H1 (ATX or setext), if there is one."""
    for level, text, _ in _headings(_PARSER.parse(body)):
        if level == 1 and text:
            return text
    return None


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


def _headings(tokens: Sequence[Token]) -> Iterator[tuple[int, str, int]]:
    """(level, text, token index) of every top-level heading."""
    for number, token in enumerate(tokens):
        if token.type == "heading_open" and token.level == 0:
            yield int(token.tag[1]), " ".join(tokens[number + 1].content.split()), number


def _parse(body: str, max_chars: int, style: Style, listed: Sequence[str] | None) -> _Page:
    """The page's sections; with `listed` (the front matter's alert names), each one tagged
    with the alert heading whose unit it is in (None: never cut into units)."""
    lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    tokens = _PARSER.parse("\n".join(lines))
    headings = list(_headings(tokens))
    levels = [level for level, _, _ in headings]
    title = headings[0][2] if levels.count(1) == 1 and levels[0] == 1 else None
    texts = [text for _, text, _ in headings]
    named = list(zip([heading_text(t, style) for t in texts], anchors(texts, style), strict=True))
    alerts: set[int] = set()
    if listed is not None:
        # The title names the page, never one of its units.
        first = 1 if title is not None else 0
        shown = [(level, text) for level, (text, _) in zip(levels, named, strict=True)]
        by_shape = title is None or not identifier(named[0][0])
        found = alert_headings(shown[first:], listed, by_shape=by_shape)
        alerts = {first + i for i in found}
    code = [token.map for token in tokens if token.type in _CODE_BLOCKS and token.map]

    sections: list[_Section] = []
    stack: list[tuple[int, int]] = []  # (level, heading number)
    blocks: list[_Block] = []
    last_end: int | None = None
    heading_number = 0
    #: An alert heading in a run sharing one text -> the run's first heading.
    run_start: dict[int, int] = {}

    def close() -> None:
        numbers = [n for _, n in stack]
        unit = next((n for n in reversed(numbers) if n in alerts), None)
        if unit is not None:
            numbers = numbers[numbers.index(unit) + 1 :]
            unit = run_start.get(unit, unit)
        sections.append(_Section(tuple(named[n] for n in numbers), tuple(blocks), unit))

    for number, token in enumerate(tokens):
        if token.level != 0 or token.nesting == -1 or not token.map:
            continue
        start, end = token.map
        if token.type == "heading_open":
            if number != title:
                close()
                level = int(token.tag[1])
                if _joins_run(heading_number, alerts, levels) and not blocks:
                    before = heading_number - 1
                    run_start[heading_number] = run_start.get(before, before)
                while stack and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, heading_number))
                blocks = []
            heading_number += 1
            # The title's neighbours are both preamble; keep them apart as blocks.
            last_end = None
            continue
        tight = last_end == start and bool(blocks)
        blocks.extend(_block(lines[start:end], start, token.type, code, max_chars, tight))
        last_end = end
    close()
    runs: dict[int, tuple[int, ...]] = {}
    for member, start in run_start.items():
        runs[start] = (*runs.get(start, ()), member)
    return _Page([section for section in sections if section.blocks], named, runs)


def _joins_run(number: int, alerts: set[int], levels: Sequence[int]) -> bool:
    """Whether alert heading `number` follows another alert heading at its level or above
    it; with no text between them, the two share what follows."""
    before = number - 1
    return number in alerts and before in alerts and levels[number] >= levels[before]


def _block(
    lines: list[str],
    first_line: int,
    kind: str,
    code: Sequence[list[int]],
    max_chars: int,
    tight: bool,
) -> list[_Block]:
    """One parsed block as packing units: whole, or cut at line boundaries when too long.

    Lines of a code block nested inside this block (a fence in a list item) stay together.
    """
    if kind in _CODE_BLOCKS:
        # The parser's range of a fence at the end of the body includes trailing blanks.
        while lines and not lines[-1].strip():
            lines = lines[:-1]
        return [_Block("\n".join(lines), fenced=True, tight=tight)]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    text = "\n".join(line.rstrip() for line in lines)
    if len(text) <= max_chars:
        return [_Block(text, fenced=False, tight=tight)]
    units: list[str] = []
    number = 0
    while number < len(lines):
        absolute = first_line + number
        nested = next((m for m in code if m[0] == absolute and m[1] > absolute), None)
        if nested is not None:
            size = min(nested[1], first_line + len(lines)) - absolute
            units.append("\n".join(lines[number : number + size]))
            number += size
        else:
            units.append(lines[number].rstrip())
            number += 1
    pieces = _split_long(units, max_chars)
    return [
        _Block(piece, fenced=False, tight=tight if i == 0 else True)
        for i, piece in enumerate(pieces)
    ]


def _split_long(units: Sequence[str], limit: int) -> list[str]:
    """Pack whole units (lines, or a nested code block) into pieces of at most ``limit``
    characters; only a unit with no line breaks is ever cut, at spaces."""
    pieces: list[str] = []
    current: str | None = None
    for unit in units:
        for part in [unit] if "\n" in unit else _split_line(unit, limit):
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
