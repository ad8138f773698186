"""Artifact names and freshness: which files a build writes and which it may skip.

An artifact is skipped when the fingerprint of its inputs (the rendered Markdown, the format,
the templates and the renderer code) matches the one recorded when it was written, and the file
is still what was written then: same size, same SHA-256 (a truncated or edited file is stale).
The Markdown holds every content-dependent input, so this is exact.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

from . import __version__
from .atomic import write_text_atomic
from .render.document import Document
from .render.markdown import TEMPLATES

STATE_DIR = ".state"
_RENDER_CODE = Path(__file__).resolve().parent / "render"


@dataclass(frozen=True)
class Artifact:
    """One file to produce: a document in one format."""

    path: Path
    format: str
    markdown: str
    doc: Document

    @cached_property
    def fingerprint(self) -> str:
        """Hash of every input; computed once (the Markdown of a whole bank is ~0.5 MB)."""
        digest = hashlib.sha256()
        for part in (__version__, self.format, _code_fingerprint(), self.markdown):
            digest.update(part.encode("utf-8"))
            digest.update(b"\0")
        return digest.hexdigest()

    @property
    def _state_file(self) -> Path:
        return self.path.parent / STATE_DIR / f"{self.path.name}.sha256"

    def is_fresh(self) -> bool:
        try:
            recorded = self._state_file.read_text(encoding="utf-8").split()
            size = _size(self.path)
        except OSError:
            return False
        return (len(recorded) == 3 and recorded[0] == self.fingerprint
                and recorded[1] == str(size) and recorded[2] == _file_digest(self.path))

    def mark_fresh(self) -> None:
        """Record the inputs' fingerprint and what was written: its size and SHA-256."""
        written = f"{_size(self.path)} {_file_digest(self.path)}"
        write_text_atomic(self._state_file, f"{self.fingerprint} {written}\n")


def _file_digest(path: Path) -> str:
    """SHA-256 of a file; of a folder artifact (a site), of every file's path and digest."""
    if path.is_dir():
        digest = hashlib.sha256()
        for file in sorted(p for p in path.rglob("*") if p.is_file()):
            digest.update(f"{file.relative_to(path).as_posix()}\0{_file_digest(file)}\n".encode())
        return digest.hexdigest()
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _size(path: Path) -> int:
    """Bytes of a file, or of every file in a folder artifact."""
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


@lru_cache(maxsize=1)
def _code_fingerprint() -> str:
    digest = hashlib.sha256()
    for folder in (TEMPLATES, _RENDER_CODE):
        for path in sorted(folder.glob("*")):
            if path.is_file() and path.suffix in (".j2", ".css", ".py"):
                digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()
