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
from .html import render_html

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


def render_pdf(markdown: str, doc: Document, target: Path) -> None:
    """Write the PDF of `markdown` to `target`; raise if any character printed as tofu.

    The caller writes to a temporary path (see atomic.py), so a refused PDF never lands.
    """
    from weasyprint import HTML  # heavy: imported only when a PDF is built

    html = render_html(markdown, doc)
    timestamp = f"{doc.date}T00:00:00Z"  # fixed dates: the same inputs give the same bytes
    with _collect_missing_glyphs() as missing:  # WeasyPrint reports them while writing
        document = HTML(string=html, base_url=str(target.parent),
                        url_fetcher=_fetch_nothing).render()
        document.metadata.created = timestamp
        document.metadata.modified = timestamp
        document.write_pdf(target)
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
