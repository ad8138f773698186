"""Renderers: one module per format, each with `render(markdown, doc, target)`, and the
registry of formats: what each builds and where it goes.

Every format derives from the same Markdown, so formats cannot disagree on content.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .document import Document

Renderer = Callable[[str, Document, Path], None]


@dataclass(frozen=True)
class Format:
    """A format `ptbank build --format NAME` writes."""

    name: str
    renderer: str
    """`module:function` under ptbank.render, imported only when the format is built."""
    study: bool = False
    """A format for candidates to study from: always with the answers (folded or on the back
    of a card), so `--answers/--no-answers` does not apply."""
    whole_bank: bool = False
    """One artifact holds every level (the site filters by level): `--level` does not apply."""
    folder: bool = False
    """The artifact is a folder of files, written whole under a temporary name."""
    parallel: bool = False
    """The renderer takes `jobs`: processes that one artifact may use at once."""
    default_out: Path = Path("build")
    """Where `--out` points when it is not given. The artifacts go straight into the folder
    `--out` names, whatever the format, so a study format has a folder of its own here."""

    def path(self, out: Path, level: str, lang: str, answers: bool) -> Path:
        if self.name == "html":
            return out / lang
        if self.name == "anki":
            return out / f"ptbank-{level}-{lang}.apkg"
        return out / f"ptbank-{level}-{lang}{'-answers' if answers else ''}.{self.name}"

    def render(self) -> Renderer:
        module, function = self.renderer.split(":")
        return getattr(importlib.import_module(module, __name__), function)


FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("md", ".markdown:write_markdown"),
    Format("docx", ".docx:render_docx"),
    Format("pdf", ".pdf:render_pdf", parallel=True),
    Format("html", ".site:render_site", study=True, whole_bank=True, folder=True,
           default_out=Path("build/site")),
    Format("anki", ".anki:render_anki", study=True, default_out=Path("build/anki")),
)}
PRINT_FORMATS = ("md", "docx", "pdf")
"""What `--format all` builds: the printed editions (sheets too)."""

