"""A bank PDF laid out in parts, a part per chapter, and merged.

So that its memory does not grow with its length: WeasyPrint keeps every laid-out page of a
document until it writes the file, about 4 MB a page, so the whole bank's answer key (567
pages) peaked at 2.2 GB laid out whole; in parts, the peak is that of the largest part
(bench/render.py measures both). And so that a print after an edit lays out only the part
that changed (the others come from part_cache.py), and the parts of one PDF can be laid out
at once on several cores (pdf.py).

The cuts fall where print.css breaks the page anyway, before each h2, so the pages are those
of the document laid out whole; only a chapter longer than a part is cut between two of its
questions, which starts that question on a new page. What spans parts is redone from what
WeasyPrint reports of each page it laid out:

- "page X of Y": the parts are laid out without it, then a document of Y pages holding only
  that footer is laid out and each of its pages drawn over a page of the merged file;
- the table of contents' numbers: the front part (title page and contents) is laid out last,
  with each entry's page written in (`data-page`), again until its own length settles;
- cross-references' page numbers ("see 7.3 ... (p. 152)"): each part leaves the number's room
  empty (html.py), and a layer of pages holding only those numbers, each where its room was
  laid out, is drawn over the merged pages like the footer;
- links and the outline: every anchor becomes a named destination of the merged file, the
  links WeasyPrint dropped because their target lay in another part are put back with the
  same /Dest, and the outline is rebuilt from every page's bookmarks.
"""

from __future__ import annotations

import io
import logging
from contextlib import contextmanager
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from markupsafe import escape

from .document import Document
from .html import PAGE_REFERENCE, PageLayer, page_ref_words, print_page, with_page_numbers

PART_CHARS = 2_000_000
"""Most characters of body HTML laid out at once: a chapter longer than that is cut between
its questions. WeasyPrint needs about `PART_BYTES_PER_CHAR` at its peak (the whole bank's zh
answer key: 3.1 M characters, 567 pages, 2212 MiB laid out whole), so a part peaks near
1.4 GB; chapters are far shorter (an advanced answer key of 1.7-1.9 M characters has 12)."""
PART_BYTES_PER_CHAR = 700

PX_TO_PT = 0.75  # 72 PDF points per inch / 96 CSS pixels per inch
FRONT_TRIES = 4
"""Layouts of the front part before its length must have settled (it settles at the second:
the numbers written in take the room the first layout gave them). From the second on, the
page numbers' layer for the length it assumes is laid out beside it (at once, given cores)."""

PagePrinter = Callable[[list[str]], list["Part"]]
"""HTML pages → each laid out and written as a Part (pdf.py: from the part cache, or laid out
in parallel processes)."""


@dataclass
class _PageFacts:
    """What the merge needs of one laid-out page, kept once its layout is freed."""

    height: float
    anchors: dict[str, tuple[float, float]]
    links: list[tuple[str, tuple[float, float, float, float]]]
    """In-document links: (target anchor, rectangle in CSS px)."""
    bookmarks: list[tuple[int, str, tuple[float, float]]]
    page_refs: list[tuple[str, str, tuple[float, float, float, float]]] = field(
        default_factory=list)
    """Cross-references' page numbers to draw: (language, target anchor, room in CSS px)."""


@dataclass
class Part:
    """One laid-out HTML page: its PDF, what the merge needs of each of its pages, and the
    characters it printed with no glyph (the glyph gate of pdf.py refuses them)."""

    pdf: bytes
    pages: list[_PageFacts] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, document, pdf: bytes, missing: list[str]) -> Part:
        """The part of a laid-out weasyprint.Document, once written to `pdf`."""
        part = cls(pdf=pdf, missing=missing)
        for page in document.pages:
            rooms = {name: room for name, room in page.anchors.items()
                     if name.startswith(PAGE_REFERENCE)}
            part.pages.append(_PageFacts(
                height=page.height,
                anchors={name: (x1, y1) for name, (x1, y1, _, _) in page.anchors.items()},
                links=[(target, tuple(rectangle)) for kind, target, rectangle, _ in page.links
                       if kind == "internal"],
                bookmarks=[(level, label, tuple(point))
                           for level, label, point, _ in page.bookmarks],
                page_refs=[(*_language_and_target(name), tuple(room))
                           for name, room in rooms.items()],
            ))
        return part

    def facts(self) -> dict:
        """Everything but the PDF, as JSON data (part_cache.py stores it)."""
        return {"missing": self.missing, "pages": [
            {"height": p.height, "anchors": p.anchors, "links": p.links,
             "bookmarks": p.bookmarks, "page_refs": p.page_refs} for p in self.pages]}

    @classmethod
    def from_facts(cls, pdf: bytes, facts: dict) -> Part:
        return cls(pdf=pdf, missing=list(facts["missing"]), pages=[_PageFacts(
            height=p["height"],
            anchors={name: tuple(point) for name, point in p["anchors"].items()},
            links=[(target, tuple(rectangle)) for target, rectangle in p["links"]],
            bookmarks=[(level, label, tuple(point)) for level, label, point in p["bookmarks"]],
            page_refs=[(lang, target, tuple(room)) for lang, target, room in p["page_refs"]],
        ) for p in facts["pages"]])


def _language_and_target(name: str) -> tuple[str, str]:
    """Of a page number's id (html.PAGE_REFERENCE): the reference's language and target."""
    lang, _n, _source, target = name[len(PAGE_REFERENCE):].split(":", 3)
    return lang, target


def plan_parts(chapters: list[list[str]], part_chars: int = PART_CHARS) -> list[list[str]]:
    """The body HTML pieces of each part: a part per chapter (so an edit lays out its own
    chapter again, and chapters can be laid out at once), a chapter longer than `part_chars`
    cut between its pieces (questions). At least one part."""
    parts: list[list[str]] = [[]]
    size = 0
    for chapter in chapters:
        if parts[-1]:
            parts.append([])
            size = 0
        for piece in chapter:
            if parts[-1] and size + len(piece) > part_chars:
                parts.append([])
                size = 0
            parts[-1].append(piece)
            size += len(piece)
    return parts


def render_in_parts(front: list[str], parts: list[list[str]], doc: Document,
                    print_pages: PagePrinter) -> tuple[bytes, list[Part]]:
    """The merged PDF of `front` (title page and contents) followed by `parts`, and every
    part it was made of (the body's, the front's layouts and the page numbers' layer)."""
    body = print_pages([print_page("".join(part), doc, _CONTENT) for part in parts])
    printed = list(body)
    body_pages = sum(len(part.pages) for part in body)
    assumed, front_part, layers = 0, None, []  # the front's length its numbers assume
    for _ in range(FRONT_TRIES):
        page_of = _page_numbers(body, first=assumed + 1)
        pages = [print_page(with_page_numbers("".join(front), page_of), doc, _FRONT)]
        if assumed:  # the page numbers' layers for that length, laid out beside it
            pages += [_footer_page(assumed + body_pages, doc),
                      _page_refs_layer(assumed, body, page_of, doc)]
        front_part, *layers = print_pages(pages)
        printed += [front_part, *layers]
        if len(front_part.pages) == assumed:
            break
        assumed = len(front_part.pages)
    else:
        raise RuntimeError("the table of contents' length did not settle")
    total = assumed + body_pages
    for layer in layers:
        if len(layer.pages) != total:
            raise RuntimeError(f"a layer laid out for {len(layer.pages)} of {total} pages")
    footer, page_refs = layers
    return _merge([front_part, *body], footer, page_refs), printed


def _footer_page(total: int, doc: Document) -> str:
    """`total` blank pages carrying only "page X of Y", drawn over the merged pages."""
    blank_pages = "<div></div>" + '<div style="break-before: page"></div>' * (total - 1)
    return print_page(blank_pages, doc, _FOOTER)


def _page_refs_layer(front_pages: int, body: list[Part], page_of: dict[str, int],
                     doc: Document) -> str:
    """A blank page for each of the front's and the body's, carrying only the page numbers
    of the body's cross-references, each in the room its part left for it."""
    pages = ["<div></div>"] * front_pages
    for page in (page for part in body for page in part.pages):
        numbers = "".join(
            f'<span class="drawn-page-number" lang="{lang}" style="left: {x1}px; top: {y1}px; '
            f'width: {x2 - x1}px">{escape(page_ref_words(lang)[1])}{page_of[target]}</span>'
            for lang, target, (x1, y1, x2, _) in page.page_refs)
        pages.append(f'<div style="position: relative">{numbers}</div>')
    pages[1:] = [f'<div style="break-before: page">{page}</div>' for page in pages[1:]]
    return print_page("".join(pages), doc, _PAGE_REFS)


_CONTENT = PageLayer(footer=False, title_page=False, page_numbers_drawn_over=True)
_FRONT = PageLayer(footer=False, toc_numbers_given=True)
_FOOTER = PageLayer(header=False, title_page=False)
_PAGE_REFS = PageLayer(header=False, footer=False, title_page=False, bare=True)


def _page_numbers(parts: list[Part], first: int) -> dict[str, int]:
    """The printed page number of each anchor of `parts`, their first page being `first`."""
    page_of: dict[str, int] = {}
    number = first
    for page in (page for part in parts for page in part.pages):
        for name in page.anchors:
            page_of.setdefault(name, number)
        number += 1
    return page_of


def _merge(parts: list[Part], footer: Part, page_refs: Part) -> bytes:
    """The parts' pages in one file, the footer's page of the same number drawn over each,
    and the page references' page over each that has cross-references."""
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
    footers = PdfReader(io.BytesIO(footer.pdf)).pages
    page_ref_pages = PdfReader(io.BytesIO(page_refs.pdf)).pages
    facts: list[_PageFacts] = []
    for part in parts:
        reader = front if part is parts[0] else PdfReader(io.BytesIO(part.pdf))
        for page, page_facts in zip(reader.pages, part.pages):
            merged = writer.add_page(page)
            merged.merge_page(footers[len(facts)])
            if page_facts.page_refs:
                merged.merge_page(page_ref_pages[len(facts)])
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
def cross_part_links_expected() -> Iterator[None]:
    logger = logging.getLogger("weasyprint")
    quiet = _DropMissingAnchorErrors()
    logger.addFilter(quiet)
    try:
        yield
    finally:
        logger.removeFilter(quiet)
