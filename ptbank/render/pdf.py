"""HTML → PDF with WeasyPrint, behind a glyph gate.

Text extraction cannot tell a missing glyph from a present one (a PDF with tofu still extracts
the Chinese), but WeasyPrint logs a `.notdef` warning for every character no font has; the gate
turns those into a build failure that names the question and the character.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import re
from contextlib import contextmanager
from multiprocessing import current_process
from pathlib import Path

from ..errors import PtbankError
from .document import Document
from .html import markdown_to_html_chapters, print_page
from .part_cache import PartCache
from .pdf_parts import (PART_BYTES_PER_CHAR, PART_CHARS, Part, cross_part_links_expected,
                        plan_parts, render_in_parts)

_NOTDEF = re.compile(r'\.notdef glyph rendered for Unicode string unsupported by fonts: "(.*)"', re.S)


class MissingGlyphError(PtbankError):
    """A character in the content has no glyph in any installed font."""


class _NotdefCollector(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.missing: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        found = _NOTDEF.match(record.getMessage())
        if found:
            self.missing.extend(ch for ch in found.group(1) if ch not in self.missing)


@contextmanager
def _collect_missing_glyphs():
    """The characters WeasyPrint reports without a glyph while the block lays out and writes."""
    logger = logging.getLogger("weasyprint")
    collector = _NotdefCollector()
    logger.addHandler(collector)
    try:
        yield collector.missing
    finally:
        logger.removeHandler(collector)


def render_pdf(markdown: str, doc: Document, target: Path, part_chars: int | None = PART_CHARS,
               jobs: int = 1, cache: PartCache | None = None) -> None:
    """Write the PDF of `markdown` to `target`; raise if any character printed as tofu.

    A bank document is laid out in parts, a part per chapter, and merged (pdf_parts.py): each
    part comes from `cache` (part_cache.py; default: build/cache/pdf-parts) when its HTML was
    laid out before, and the others are laid out `jobs` at once, as far as memory allows. A
    sheet, or any document with `part_chars` None, is laid out whole. The caller writes to a
    temporary path (see atomic.py), so a refused PDF never lands.
    """
    chapters = markdown_to_html_chapters(markdown, doc.langs)
    timestamp = f"{doc.date}T00:00:00Z"  # fixed dates: the same inputs give the same bytes
    if doc.kind != "bank" or part_chars is None:
        body = "".join(piece for chapter in chapters for piece in chapter)
        printed = [lay_out_page(print_page(body, doc), timestamp)]
        pdf = printed[0].pdf
    else:
        cache = cache or PartCache()
        with _CachedPrinter(cache, timestamp, jobs) as printer:
            pdf, printed = render_in_parts([*chapters[0], *chapters[1]],
                                           plan_parts(chapters[2:], part_chars), doc, printer)
        cache.record_use(edition_of(doc), target.parent, printer.keys)
    missing = list(dict.fromkeys(ch for part in printed for ch in part.missing))
    if missing:
        raise MissingGlyphError(_describe_missing(missing, doc))
    target.write_bytes(pdf)


def lay_out_page(html: str, timestamp: str) -> Part:
    """Lay out and write one HTML page (in this process or a worker): a Part."""
    from weasyprint import HTML  # heavy: imported only when a PDF is built

    with _collect_missing_glyphs() as missing, cross_part_links_expected():
        document = HTML(string=html, url_fetcher=_fetch_nothing).render()
        document.metadata.created = timestamp
        document.metadata.modified = timestamp
        part = Part.of(document, document.write_pdf(), missing)
    del document
    gc.collect()  # WeasyPrint's boxes hold cycles: free this layout before the next
    return part


def edition_of(doc: Document) -> str:
    """Which edition a document is, for the part cache's record of what each print used."""
    return " | ".join((doc.kind, doc.title, doc.subtitle, ",".join(doc.langs),
                       "answers" if doc.answers else "questions"))


class _CachedPrinter:
    """The PagePrinter of a bank PDF: each page from the cache, or laid out (in parallel
    processes when `jobs` > 1 and memory holds them) and stored."""

    def __init__(self, cache: PartCache, timestamp: str, jobs: int):
        self.cache, self.timestamp, self.jobs = cache, timestamp, jobs
        self.keys: list[str] = []
        """Every key this print used, for the cache's record of it."""
        self._pools = contextlib.ExitStack()
        self._pool = None
        """Started at the first layout that needs it, sized by memory for that one (the
        body's chapters: the largest pages), kept for the front's and the footer's."""

    def __enter__(self) -> _CachedPrinter:
        return self

    def __exit__(self, *exc) -> None:
        self._pools.__exit__(*exc)

    def __call__(self, pages: list[str]) -> list[Part]:
        keys = [self.cache.key(page, self.timestamp) for page in pages]
        self.keys += keys
        parts: dict[str, Part] = {}
        for key in dict.fromkeys(keys):
            stored = self.cache.get(key)
            if stored is not None:
                parts[key] = Part.from_facts(*stored)
        missing = {key: page for key, page in zip(keys, pages) if key not in parts}
        for key, part in zip(missing, self._lay_out(list(missing.values()))):
            self.cache.put(key, part.pdf, part.facts())
            parts[key] = part
        return [parts[key] for key in keys]

    def _lay_out(self, pages: list[str]) -> list[Part]:
        if self._pool is None and len(pages) > 1 and not current_process().daemon:
            size = min(self.jobs, len(pages), _parts_that_fit(pages))
            if size > 1:
                from ..workers import process_pool
                self._pool = self._pools.enter_context(process_pool(size))
        if self._pool is None or len(pages) == 1:
            return [lay_out_page(page, self.timestamp) for page in pages]
        longest_first = sorted(range(len(pages)), key=lambda i: -len(pages[i]))
        laid_out = self._pool.starmap(lay_out_page, [(pages[i], self.timestamp)
                                                     for i in longest_first], chunksize=1)
        return [part for _, part in sorted(zip(longest_first, laid_out), key=lambda x: x[0])]


def _parts_that_fit(pages: list[str]) -> int:
    """How many of `pages` available memory holds laid out at once (the largest, each)."""
    from ..workers import MEMORY_HEADROOM, PDF_BASE_BYTES, available_memory
    need = PDF_BASE_BYTES + PART_BYTES_PER_CHAR * max(map(len, pages), default=0)
    return max(1, (available_memory() - MEMORY_HEADROOM) // need)


def _fetch_nothing(url: str, *args, **kwargs):
    """The page holds its own stylesheet and fonts come from fontconfig: nothing is fetched,
    neither a file nor a URL, whatever a document might name."""
    raise ValueError(f"ptbank prints nothing fetched from files or the network: {url}")


def _describe_missing(missing: list[str], doc: Document) -> str:
    lines = ["no installed font has a glyph for:"]
    for char in missing:
        where = [f"{item.number} {item.question.id}" for section in doc.sections
                 for item in section.items if char in _raw_text(item.question)]
        lines.append(f"  {char!r} (U+{ord(char):04X}) in question(s): "
                     + (", ".join(where) or "the document template"))
    lines.append("remove the character, or install a font that has it (see `ptbank doctor`)")
    return "\n".join(lines)


def _raw_text(question) -> str:
    parts = [question.id]
    for lang in ("zh", "en"):
        text = question.text(lang)
        parts += [text.title, text.question, text.answer, *text.rubric, *text.follow_ups]
    parts += [s.code for s in question.snippets]
    return "\n".join(parts)
