"""Renderers: one module per format, each with `render(markdown, doc, target)`.

Every format derives from the same Markdown, so formats cannot disagree on content.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .document import Document

Renderer = Callable[[str, Document, Path], None]


def renderer_for(fmt: str) -> Renderer:
    """The render function of a format, imported only when that format is built."""
    if fmt == "md":
        from .markdown import write_markdown
        return write_markdown
    if fmt == "docx":
        from .docx import render_docx
        return render_docx
    if fmt == "pdf":
        from .pdf import render_pdf
        return render_pdf
    raise ValueError(f"unknown format {fmt!r}")
