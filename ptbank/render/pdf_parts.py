"""A long PDF laid out in parts and merged, so that its memory does not grow with its length.

WeasyPrint keeps every laid-out page of a document until it writes the file: about 4 MB a
page, so the whole bank's answer key (567 pages) peaked at 2.2 GB and a 1000-page one would
need about 4 GB. Laid out in parts of at most `PART_CHARS` characters of HTML, the peak is
that of the largest part (bench/render.py measures both).

The cuts fall where print.css breaks the page anyway, before each h2, so the pages are those
of the document laid out whole; only a chapter longer than a part is cut between two of its
questions, which starts that question on a new page. What spans parts is redone from what
WeasyPrint reports of each page it laid out:

- "page X of Y": the parts are laid out without it, then a document of Y pages holding only
  that footer is laid out and each of its pages drawn over a page of the merged file;
- the table of contents' numbers: the front part (title page and contents) is laid out last,
  with each entry's page written in (`data-page`), again until its own length settles;
- links and the outline: every anchor becomes a named destination of the merged file, the
  links WeasyPrint dropped because their target lay in another part are put back with the
  same /Dest, and the outline is rebuilt from every page's bookmarks.
"""

from __future__ import annotations

import gc
import io
import logging
from contextlib import contextmanager
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from .document import Document
from .html import PageLayer, print_page, with_page_numbers

PART_CHARS = 2_000_000
"""Characters of body HTML laid out at once. WeasyPrint needs about 700 bytes per character
at its peak (the whole bank's zh answer key: 3.1 M characters, 567 pages, 2212 MiB laid out
whole), so a part peaks near 1.4 GB. Parts no smaller than needed: each embeds its own font
subsets and pays WeasyPrint's set-up again, so an advanced answer key (1.7-1.9 M characters,
about 330 pages) is still laid out whole."""

PX_TO_PT = 0.75  # 72 PDF points per inch / 96 CSS pixels per inch
FRONT_TRIES = 4
"""Layouts of the front part before its length must have settled (it settles at the second:
the numbers written in take the room the first layout gave them)."""

Layout = Callable[[str], object]
"""HTML page → a laid-out weasyprint.Document."""


@dataclass
class _PageFacts:
    """What the merge needs of one laid-out page, kept once its layout is freed."""

    height: float
    anchors: dict[str, tuple[float, float]]
    links: list[tuple[str, tuple[float, float, float, float]]]
    """In-document links: (target anchor, rectangle in CSS px)."""
    bookmarks: list[tuple[int, str, tuple[float, float]]]


@dataclass
class _Part:
    pdf: bytes
    pages: list[_PageFacts] = field(default_factory=list)


def plan_parts(chapters: list[list[str]], part_chars: int = PART_CHARS) -> list[list[str]]:
    """The body HTML pieces of each part: whole chapters while they fit in `part_chars`,
    a chapter longer than that cut between its pieces (questions). At least one part."""
    parts: list[list[str]] = [[]]
    size = 0
    for chapter in chapters:
        chapter_size = sum(map(len, chapter))
        if parts[-1] and size + chapter_size > part_chars:
            parts.append([])
            size = 0
        if chapter_size <= part_chars:
            parts[-1].extend(chapter)
            size += chapter_size
            continue
        for piece in chapter:
            if parts[-1] and size + len(piece) > part_chars:
                parts.append([])
                size = 0
            parts[-1].append(piece)
            size += len(piece)
    return parts


def render_in_parts(front: list[str], parts: list[list[str]], doc: Document,
                    layout: Layout, write: Callable[[object], bytes]) -> bytes:
    """The merged PDF of `front` (title page and contents) followed by `parts`.

    `layout` lays out an HTML page, `write` writes a laid-out document to PDF bytes (pdf.py
    gives both, with its metadata and dates)."""
    with _cross_part_links_expected():
        body = [_laid_out(print_page("".join(part), doc, _CONTENT), layout, write)
                for part in parts]
        pages_before = 0
        front_part = None
        for _ in range(FRONT_TRIES):
            page_of = _page_numbers(body, first=pages_before + 1)
            numbered = with_page_numbers("".join(front), page_of)
            front_part = _laid_out(print_page(numbered, doc, _FRONT), layout, write)
            if len(front_part.pages) == pages_before:
                break
            pages_before = len(front_part.pages)
        else:
            raise RuntimeError("the table of contents' length did not settle")
    all_parts = [front_part, *body]
    total = sum(len(part.pages) for part in all_parts)
    blank_pages = "<div></div>" + '<div style="break-before: page"></div>' * (total - 1)
    footer = layout(print_page(blank_pages, doc, _FOOTER))
    if len(footer.pages) != total:
        raise RuntimeError(f"page numbers laid out for {len(footer.pages)} of {total} pages")
    footer_pdf = write(footer)
    del footer
    return _merge(all_parts, footer_pdf)


_CONTENT = PageLayer(footer=False, title_page=False)
_FRONT = PageLayer(footer=False, toc_numbers_given=True)
_FOOTER = PageLayer(header=False, title_page=False)


def _laid_out(html: str, layout: Layout, write: Callable[[object], bytes]) -> _Part:
    """Lay out and write `html`, keeping only what the merge needs: the layout is freed
    before the next part is laid out."""
    document = layout(html)
    part = _Part(pdf=write(document))
    for page in document.pages:
        part.pages.append(_PageFacts(
            height=page.height,
            anchors={name: (x1, y1) for name, (x1, y1, _, _) in page.anchors.items()},
            links=[(target, rectangle) for kind, target, rectangle, _ in page.links
                   if kind == "internal"],
            bookmarks=[(level, label, point) for level, label, point, _ in page.bookmarks],
        ))
    del document
    gc.collect()  # WeasyPrint's boxes hold cycles: free this part before the next is laid out
    return part


def _page_numbers(parts: list[_Part], first: int) -> dict[str, int]:
    """The printed page number of each anchor of `parts`, their first page being `first`."""
    page_of: dict[str, int] = {}
    number = first
    for page in (page for part in parts for page in part.pages):
        for name in page.anchors:
            page_of.setdefault(name, number)
        number += 1
    return page_of


def _merge(parts: list[_Part], footer_pdf: bytes) -> bytes:
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import (ArrayObject, DictionaryObject, FloatObject, NameObject,
                               NumberObject, TextStringObject)
    from pypdf.generic import Fit

    writer = PdfWriter()
    front = PdfReader(io.BytesIO(parts[0].pdf))
    writer.add_metadata(front.metadata)  # title, producer, the build's dates
    for key in ("/Lang", "/PageMode"):
        if key in front.trailer["/Root"]:
            writer._root_object[NameObject(key)] = front.trailer["/Root"][key]
    footers = PdfReader(io.BytesIO(footer_pdf)).pages
    facts: list[_PageFacts] = []
    for part in parts:
        reader = front if part is parts[0] else PdfReader(io.BytesIO(part.pdf))
        for page, page_facts in zip(reader.pages, part.pages):
            merged = writer.add_page(page)
            merged.merge_page(footers[len(facts)])
            merged.compress_content_streams()  # the merge wrote the page's content inflated
            facts.append(page_facts)

    first_anchor: dict[str, int] = {}
    for index, page_facts in enumerate(facts):
        for name, (x, y) in page_facts.anchors.items():
            if name not in first_anchor:
                first_anchor[name] = index
                top = (page_facts.height - y) * PX_TO_PT
                writer.add_named_destination_object(_destination(
                    name, writer.pages[index].indirect_reference, x * PX_TO_PT, top))

    for index, (page_facts, page) in enumerate(zip(facts, writer.pages)):
        present = {str(a.get_object().get("/Dest", "")) for a in page.get("/Annots", [])}
        for target, (x1, y1, x2, y2) in page_facts.links:
            if target in present:
                continue
            if target not in first_anchor:
                logging.getLogger("weasyprint").error(
                    "No anchor #%s for internal URI reference", target)
                continue
            height = page_facts.height
            annotation = DictionaryObject({
                NameObject("/Type"): NameObject("/Annot"),
                NameObject("/Subtype"): NameObject("/Link"),
                NameObject("/Rect"): ArrayObject(FloatObject(v * PX_TO_PT) for v in (
                    x1, height - y1, x2, height - y2)),  # as WeasyPrint writes it
                NameObject("/BS"): DictionaryObject({NameObject("/W"): NumberObject(0)}),
                NameObject("/Dest"): TextStringObject(target),
            })
            writer.add_annotation(index, annotation)

    _add_outline(writer, facts, Fit)
    return _written(writer)


def _destination(name: str, page, left: float, top: float):
    from pypdf.generic import Destination, Fit
    return Destination(name, page, Fit.xyz(left=left, top=top, zoom=0))


def _add_outline(writer, facts: list[_PageFacts], Fit) -> None:
    """Bookmarks nested by level, as WeasyPrint nests them in a document laid out whole."""
    parents: list[tuple[int, object]] = []  # (level, outline item), innermost last
    for index, page_facts in enumerate(facts):
        for level, label, (x, y) in page_facts.bookmarks:
            while parents and parents[-1][0] >= level:
                parents.pop()
            item = writer.add_outline_item(
                title=label, page_number=index, parent=parents[-1][1] if parents else None,
                fit=Fit.xyz(left=x * PX_TO_PT, top=(page_facts.height - y) * PX_TO_PT, zoom=0))
            parents.append((level, item))


def _written(writer) -> bytes:
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


class _DropMissingAnchorErrors(logging.Filter):
    """A part's links to another part's anchors: WeasyPrint drops them with an error, and the
    merge puts them back (or reports the error itself when no part has the anchor)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("No anchor #")


@contextmanager
def _cross_part_links_expected() -> Iterator[None]:
    logger = logging.getLogger("weasyprint")
    quiet = _DropMissingAnchorErrors()
    logger.addFilter(quiet)
    try:
        yield
    finally:
        logger.removeFilter(quiet)
