"""HTML → PDF with WeasyPrint, behind a glyph gate.

Text extraction cannot tell a missing glyph from a present one (a PDF with tofu still extracts
the Chinese), but WeasyPrint logs a `.notdef` warning for every character no font has; the gate
turns those into a build failure that names the question and the character.
"""

from __future__ import annotations

import logging
import re
from contextlib import contextmanager
from pathlib import Path

from ..errors import PtbankError
from .document import Document
from .html import markdown_to_html_chapters, print_page
from .pdf_parts import PART_CHARS, plan_parts, render_in_parts

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
    logger = logging.getLogger("weasyprint")
    collector = _NotdefCollector()
    logger.addHandler(collector)
    try:
        yield collector.missing
    finally:
        logger.removeHandler(collector)


def render_pdf(markdown: str, doc: Document, target: Path,
               part_chars: int = PART_CHARS) -> None:
    """Write the PDF of `markdown` to `target`; raise if any character printed as tofu.

    A bank longer than `part_chars` characters of HTML is laid out in parts and merged
    (pdf_parts.py), so that its memory stays that of a part. The caller writes to a temporary
    path (see atomic.py), so a refused PDF never lands.
    """
    chapters = markdown_to_html_chapters(markdown, doc.langs)
    timestamp = f"{doc.date}T00:00:00Z"  # fixed dates: the same inputs give the same bytes

    def layout(html: str):
        from weasyprint import HTML  # heavy: imported only when a PDF is built
        return HTML(string=html, base_url=str(target.parent), url_fetcher=_fetch_nothing).render()

    def write(document) -> bytes:
        document.metadata.created = timestamp
        document.metadata.modified = timestamp
        return document.write_pdf()

    with _collect_missing_glyphs() as missing:  # WeasyPrint reports them while writing
        parts = plan_parts(chapters[2:], part_chars) if doc.kind == "bank" else []
        if len(parts) > 1:  # the front (title page, contents) is laid out after the rest
            pdf = render_in_parts([*chapters[0], *chapters[1]], parts, doc, layout, write)
        else:
            body = "".join(piece for chapter in chapters for piece in chapter)
            pdf = write(layout(print_page(body, doc)))
        target.write_bytes(pdf)
    if missing:
        raise MissingGlyphError(_describe_missing(missing, doc))


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
