"""Laid-out PDF parts on disk, keyed by everything that decides their pages, and pruned.

A part's pages follow from its HTML page (which holds the stylesheet), the fonts fontconfig
finds, the WeasyPrint and pydyf versions, and the dates written into it. The key hashes all
of them, so a part laid out once prints from here until one of them changes; what is stored
is the part's PDF bytes and what the merge needs of its pages (pdf_parts._PageFacts).

Each edition records the keys its last print used (`uses/`); `prune` deletes every part no
edition's last print used, and the records of editions whose output folder is gone. A
damaged or half-written entry is a miss, never an error: both files are written atomically
and the facts last, so facts present mean a whole entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path

from ..atomic import write_bytes_atomic, write_text_atomic

STORE = Path("build/cache/pdf-parts")
"""Beside the render cache (questions.py), relative to where ptbank runs."""
FORMAT = "2"
"""Of the stored facts: a change makes every entry a miss."""


class PartCache:
    def __init__(self, root: Path = STORE):
        self.root = root

    def key(self, html: str, timestamp: str) -> str:
        digest = hashlib.sha256()
        for part in (_layout_fingerprint(), timestamp, html):
            digest.update(part.encode("utf-8", "surrogatepass"))
            digest.update(b"\0")
        return digest.hexdigest()

    def get(self, key: str) -> tuple[bytes, dict] | None:
        """The PDF bytes and facts stored under `key`, or None."""
        try:
            facts = json.loads((self.root / f"{key}.json").read_text(encoding="utf-8"))
            pdf = (self.root / f"{key}.pdf").read_bytes()
        except (OSError, ValueError):
            return None
        if not isinstance(facts, dict) or facts.get("pdf_bytes") != len(pdf):
            return None
        return pdf, facts

    def put(self, key: str, pdf: bytes, facts: dict) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(self.root / f"{key}.pdf", pdf)
        write_text_atomic(self.root / f"{key}.json",
                          json.dumps({**facts, "pdf_bytes": len(pdf)}, ensure_ascii=False))

    def record_use(self, edition: str, output_folder: Path, keys: list[str]) -> None:
        """`edition`'s print (into `output_folder`) used `keys`; its earlier ones, no more."""
        folder = output_folder.resolve()
        name = hashlib.sha256(f"{folder}\0{edition}".encode()).hexdigest()[:24]
        write_text_atomic(self.root / "uses" / f"{name}.json", json.dumps(
            {"edition": edition, "output_folder": str(folder), "keys": sorted(set(keys))}))

    def prune(self) -> int:
        """Delete the parts no edition's last print used; return how many."""
        if not self.root.is_dir():
            return 0
        used: set[str] = set()
        for record in (self.root / "uses").glob("*.json"):
            try:
                data = json.loads(record.read_text(encoding="utf-8"))
                alive = Path(data["output_folder"]).is_dir()
                keys = data["keys"]
            except (OSError, ValueError, KeyError, TypeError):
                alive, keys = False, []
            if alive:
                used.update(keys)
            else:
                record.unlink(missing_ok=True)
        removed = 0
        for entry in self.root.iterdir():
            if entry.is_file() and entry.stem.split(".")[0] not in used:
                entry.unlink(missing_ok=True)
                removed += entry.suffix == ".json"
        return removed


@lru_cache(maxsize=1)
def _layout_fingerprint() -> str:
    """What decides every part's pages besides its HTML and date, found once a process."""
    return "\0".join((FORMAT, version("weasyprint"), version("pydyf"), fonts_fingerprint()))


@lru_cache(maxsize=1)
def fonts_fingerprint() -> str:
    """Every font file fontconfig offers, with its size and time: a font installed, removed
    or updated changes the key of every part."""
    try:
        listed = subprocess.run(["fc-list", "--format", "%{file}\\n"], capture_output=True,
                                text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return "no fontconfig"
    digest = hashlib.sha256()
    for file in sorted(set(listed)):
        try:
            stat = os.stat(file)
        except OSError:
            continue
        digest.update(f"{file}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()
