"""`ptbank doctor`: is this machine able to verify and print the bank? Each check says how to fix it."""

from __future__ import annotations

import ctypes.util
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from .verify.builds import ENVS, PROJECT
from .verify.facts import torch_version

CJK_FAMILY = "Noto Sans CJK SC"
APT = "apt-get install -y"


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = True


def pinned_torch(lock: Path = PROJECT / "requirements.lock") -> str | None:
    """The torch version requirements.lock pins (None without a lock, e.g. installed elsewhere)."""
    try:
        found = re.search(r"^torch==(\S+)", lock.read_text(encoding="utf-8"), re.M)
    except OSError:
        return None
    return found.group(1) if found else None


def _torch() -> Check:
    version, pinned = torch_version(), pinned_torch()
    if version == "not installed":
        return Check("torch", False, version, "make setup")
    ok = pinned is None or version.split("+")[0] == pinned
    return Check("torch", ok, version, "" if ok else f"make setup  (pins torch=={pinned})")


def _other_torch(version: str) -> Check:
    """A torch the bank is also verified under: installed on first use, so optional here."""
    python = ENVS / f"torch-{version}" / "bin" / "python"
    return Check(f"torch {version} (verify_also_with_torch)", python.exists(),
                 str(python) if python.exists() else "not installed yet",
                 "make verify  (installs it on first use)", required=False)


def font_style_found(family: str, style: str) -> str | None:
    """The font file fontconfig picks for family+style, or None when it would substitute."""
    if not shutil.which("fc-match"):
        return None
    out = subprocess.run(["fc-match", "-f", "%{family}|%{style}|%{file}", f"{family}:{style}"],
                         capture_output=True, text=True).stdout
    families, styles, file = (out.split("|") + ["", "", ""])[:3]
    if family in families.split(",") and style.lower() in styles.lower():
        return file
    return None


def _font(style: str) -> Check:
    found = font_style_found(CJK_FAMILY, style)
    return Check(f"CJK font {CJK_FAMILY} {style}", found is not None,
                 found or "not found by fontconfig", f"{APT} fonts-noto-cjk")


def _harfbuzz_subset() -> Check:
    lib = ctypes.util.find_library("harfbuzz-subset")
    return Check("harfbuzz subsetting", lib is not None,
                 lib or "missing: WeasyPrint falls back to slow font handling",
                 f"{APT} libharfbuzz-subset0")


def _sandbox() -> Check:
    from .verify.sandbox import unavailable_because

    why = unavailable_because()
    return Check("snippet sandbox (bubblewrap)", not why,
                 why or f"{shutil.which('bwrap')}: read-only files, loopback-only network",
                 f"{APT} bubblewrap (or verify with --no-sandbox, unconfined)")


def _tool(name: str, binary: str, package: str, why: str, required: bool) -> Check:
    path = shutil.which(binary)
    return Check(name, path is not None, path or f"not found ({why})", f"{APT} {package}",
                 required)


def checks(also_torch: list[str] = ()) -> list[Check]:
    return [
        _torch(),
        *(_other_torch(v) for v in also_torch),
        _font("Regular"),
        _font("Bold"),
        _harfbuzz_subset(),
        _sandbox(),
        _tool("pdftoppm / pdftotext", "pdftotext", "poppler-utils", "tests read PDFs back", True),
        _tool("C++ compiler", "g++", "g++", "torch.compile snippets need it", True),
        _tool("LibreOffice", "soffice", "libreoffice-writer-nogui",
              "optional: DOCX rendering test", False),
    ]


def run_doctor(also_torch: list[str] = (), console: Console | None = None) -> int:
    console = console or Console()
    table = Table(title="ptbank doctor")
    for column in ("check", "status", "found", "fix"):
        table.add_column(column)
    results = checks(also_torch)
    for c in results:
        status = "[green]ok[/]" if c.ok else ("[red]missing[/]" if c.required
                                             else "[yellow]optional[/]")
        table.add_row(c.name, status, c.detail, "" if c.ok else c.fix)
    console.print(table)
    return 0 if all(c.ok or not c.required for c in results) else 1
