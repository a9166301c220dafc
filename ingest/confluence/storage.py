"""Confluence storage format (XHTML with `ac:`/`ri:` elements) to markdown the chunker reads.

The page is parsed once with BeautifulSoup; Confluence's macros are rewritten in the tree
into the plain HTML they stand for, and markdownify turns that into markdown:

- `code` and `noformat` macros become fenced code (with the `language` parameter);
- `info`, `note`, `tip`, `warning` and `panel` macros (and the Cloud editor's panels,
  `ac:adf-extension`) become block quotes led by their kind;
- `expand` macros keep their body under their title in bold;
- `details` (Page Properties) is kept as its table, and its rows are read as front matter;
- links to other pages keep their text, dates their ISO date, tasks become `- [ ]` items;
  images, emoticons and other macros without a rich body are dropped; others keep their body.
"""

from __future__ import annotations

from dataclasses import dataclass

from bs4 import BeautifulSoup, Tag
from markdownify import ATX, MarkdownConverter

__all__ = ["Converted", "convert_storage"]

#: Bump when the markdown made from the same storage changes: every page is re-read once.
CONVERTER_VERSION = 1

_CODE = ("code", "noformat")
_PANELS = {"info": "Info", "note": "Note", "tip": "Tip", "warning": "Warning", "panel": ""}
_DROPPED = ("ac:image", "ac:emoticon", "ac:placeholder", "ri:attachment")


@dataclass(frozen=True)
class Converted:
    markdown: str
    #: Page Properties rows, key as written (first column) to cell text.
    properties: dict[str, str]


def convert_storage(storage: str) -> Converted:
    soup = BeautifulSoup(storage, "html.parser")
    for moment in soup.find_all("time"):  # the date picker: `<time datetime="2026-09-14" />`
        moment.replace_with(soup.new_string(str(moment.get("datetime") or moment.get_text())))
    properties: dict[str, str] = {}
    for macro in soup.find_all("ac:structured-macro"):
        _rewrite_macro(soup, macro, properties)
    for extension in soup.find_all("ac:adf-extension"):
        _rewrite_adf_panel(soup, extension)
    for link in soup.find_all("ac:link"):
        _rewrite_link(soup, link)
    for name in _DROPPED:
        for element in soup.find_all(name):
            element.decompose()
    for task in soup.find_all("ac:task"):
        _rewrite_task(soup, task)
    for element in soup.find_all(["ac:task-list", "ac:layout", "ac:layout-section",
                                  "ac:layout-cell", "ac:rich-text-body"]):
        element.name = "ul" if element.name == "ac:task-list" else "div"
    converter = MarkdownConverter(
        heading_style=ATX,
        bullets="-",
        code_language_callback=_language,
        escape_underscores=False,
        escape_asterisks=False,
        table_infer_header=True,
    )
    markdown = converter.convert_soup(soup)
    return Converted(markdown=_tidy(markdown), properties=properties)


def _rewrite_macro(soup: BeautifulSoup, macro: Tag, properties: dict[str, str]) -> None:
    """Turn the macro element itself into plain HTML. Renamed in place, never replaced:
    `replace_with` looks the element up among its siblings, which made a page of 12,000
    code macros quadratic."""
    if macro.decomposed:  # inside a macro already dropped
        return
    name = str(macro.get("ac:name", "")).lower()
    params = _parameters(macro)
    body = _direct_child(macro, "ac:rich-text-body")
    if name in _CODE:
        code = soup.new_tag("code")
        code.string = _plain_body(macro)
        _become(macro, "pre", {"data-language": params.get("language", "")})
        macro.append(code)
        return
    if name == "status":  # a lozenge: its title is the text ("DEPRECATED")
        macro.clear()
        _become(macro, "strong", {})
        macro.string = params.get("title", "")
        return
    if name == "details" and body is not None:
        properties.update(_property_rows(body))
    lead: str | None = None
    if name in _PANELS:
        lead = ": ".join(part for part in (_PANELS[name], params.get("title", "")) if part)
    elif name == "expand":
        lead = params.get("title", "") or "Details"
    for child in list(macro.children):
        if child is not body:
            child.extract()
    _become(macro, "blockquote" if name in _PANELS else "div", {})
    if lead:
        strong = soup.new_tag("strong")
        strong.string = lead
        para = soup.new_tag("p")
        para.append(strong)
        macro.insert(0, para)


def _rewrite_adf_panel(soup: BeautifulSoup, extension: Tag) -> None:
    """The Cloud editor's panels: `ac:adf-extension` holding an `ac:adf-node type="panel"`
    (its kind in `ac:adf-attribute key="panel-type"`, its text in `ac:adf-content`) and an
    `ac:adf-fallback` copy, which is dropped so the text is not indexed twice."""
    node = extension.find("ac:adf-node")
    content = node.find("ac:adf-content") if isinstance(node, Tag) else None
    if not isinstance(node, Tag) or not isinstance(content, Tag):
        fallback = extension.find("ac:adf-fallback")
        _become(extension, "div", {})
        for child in list(extension.children):
            if child is not fallback:
                child.extract()
        return
    kind = node.find("ac:adf-attribute", attrs={"key": "panel-type"})
    lead = _PANELS.get(kind.get_text(strip=True).lower(), "") if isinstance(kind, Tag) else ""
    for child in list(extension.children):
        child.extract()
    _become(extension, "blockquote" if node.get("type") == "panel" else "div", {})
    if lead:
        strong = soup.new_tag("strong")
        strong.string = lead
        para = soup.new_tag("p")
        para.append(strong)
        extension.append(para)
    extension.append(content)
    content.name = "div"


def _become(element: Tag, name: str, attrs: dict[str, str]) -> None:
    element.name = name
    element.prefix = None
    element.attrs = dict(attrs)
    if name == "pre":
        element.clear()


def _parameters(macro: Tag) -> dict[str, str]:
    return {
        str(param.get("ac:name", "")).lower(): param.get_text()
        for param in macro.find_all("ac:parameter", recursive=False)
    }


def _direct_child(element: Tag, name: str) -> Tag | None:
    found = element.find(name, recursive=False)
    return found if isinstance(found, Tag) else None


def _plain_body(macro: Tag) -> str:
    """The macro's text: a CDATA section in `ac:plain-text-body`, as written."""
    body = _direct_child(macro, "ac:plain-text-body")
    return body.get_text().strip("\n") if body is not None else ""


def _property_rows(body: Tag) -> dict[str, str]:
    rows: dict[str, str] = {}
    for row in body.find_all("tr"):
        cells = row.find_all(["th", "td"], recursive=False)
        if len(cells) >= 2:
            key = cells[0].get_text(" ", strip=True)
            value = cells[1].get_text(", ", strip=True)
            if key:
                rows[key] = value
    return rows


def _rewrite_link(soup: BeautifulSoup, link: Tag) -> None:
    text = link.get_text(" ", strip=True)
    if not text:
        target = link.find(["ri:page", "ri:blog-post", "ri:attachment", "ri:space"])
        if isinstance(target, Tag):
            text = str(target.get("ri:content-title") or target.get("ri:filename") or "")
    if text:
        link.replace_with(soup.new_string(text))
    else:
        link.decompose()


def _rewrite_task(soup: BeautifulSoup, task: Tag) -> None:
    done = task.find("ac:task-status")
    mark = "[x]" if done is not None and done.get_text(strip=True) == "complete" else "[ ]"
    body = task.find("ac:task-body")
    item = soup.new_tag("li")
    item.string = f"{mark} {body.get_text(' ', strip=True) if body is not None else ''}"
    task.replace_with(item)


def _language(pre: Tag) -> str | None:
    language = pre.get("data-language")
    return str(language) if language else None


def _tidy(markdown: str) -> str:
    """At most one blank line in a row and no trailing spaces, except inside code fences."""
    lines: list[str] = []
    fenced = False
    for line in markdown.strip().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            line = line.rstrip()
            if not line and lines and not lines[-1]:
                continue
        lines.append(line)
    return "\n".join(lines) + "\n"
