"""Verdicts keyed by everything that can change them, so an unchanged bank re-verifies in a blink.

Key = SHA-256 of: the code, the expectations (raises, match, stdout), the requirements, the
limits (timeout, memory), whether it runs in the sandbox, the CPU asked for (`verify
--cpu-capability`, `--threads`; nothing for a native run), the torch version (from package
metadata: reading it must not import torch), the Python version, the verifier version, and the
installed versions of the extra modules a snippet requires or imports. One JSON file per key, written atomically, so concurrent runs
never corrupt an entry (the last writer wins).

A verdict brought in by `ptbank cache import` (imports.py) keeps where it came from
(`imported_from`): every view of a report says it was not run here, and `verify --record` and
`--check-record` never count it (they run that snippet here instead).

Beside the verdicts, `timings.json` keeps each snippet's last duration by id, so that a changed
snippet (new key) is still scheduled by how heavy it was.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..atomic import write_text_atomic
from ..models import Snippet
from .launch import NATIVE, CpuSetting
from .results import CACHEABLE, SnippetResult, Status

VERIFIER_VERSION = "6"
"""Bump when the child's environment or the classification changes: every verdict reruns."""
_IMPORT = re.compile(r"^\s*(?:import|from)\s+([A-Za-z_]\w*)", re.M)
_SKIP_MODULES = frozenset(sys.stdlib_module_names) | {"torch", "__future__"}


@dataclass(frozen=True)
class Versions:
    """What the verdicts were reached with."""

    torch: str
    python: str
    verifier: str = VERIFIER_VERSION


def extra_modules(snippet: Snippet) -> list[str]:
    """Third-party modules the snippet requires or imports at top level (torch aside)."""
    named = [r.split(".")[0] for r in snippet.requires if not _is_device(r)]
    named += _IMPORT.findall(snippet.code)
    return sorted({m for m in named if m not in _SKIP_MODULES})


def cache_key(snippet: Snippet, versions: Versions,
              module_version: Callable[[str], str | None], sandboxed: bool = True,
              cpu: CpuSetting = NATIVE) -> str:
    """The key of a snippet's verdict; `module_version` answers for the interpreter it runs in.

    Whether it ran in the sandbox is part of the key: a snippet that reaches the network or
    writes outside its folder passes only outside it. So is the CPU it ran as if on
    (`verify --cpu-capability`, `--threads`): a fraction of differing floats can hold under
    AVX-512 and fail under AVX2. A native run adds nothing, so its keys are as they were.
    """
    fields = {
        "sandboxed": sandboxed,
        "code": snippet.code, "raises": snippet.raises, "match": snippet.match,
        "stdout": snippet.stdout, "requires": sorted(snippet.requires),
        "timeout": snippet.timeout, "memory_mb": snippet.memory_mb,
        "versions": asdict(versions),
        "modules": {m: module_version(m) for m in extra_modules(snippet)},
        **cpu.key(),
    }
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def _is_device(requirement: str) -> bool:
    return requirement == "cuda" or requirement.startswith("gpus>=")


class _CacheEntry(BaseModel):
    """One verdict file, as read back: anything else is a damaged entry, i.e. a miss."""

    model_config = ConfigDict(strict=True)

    status: Status
    duration: float = Field(ge=0, allow_inf_nan=False)
    reason: str = ""
    warnings: list[str] = []
    grew_mb: int | None = None
    imported_from: str = ""
    answers: dict | None = None


class ResultCache:
    """Verdicts on disk under `root`, one file per key; timings by snippet name."""

    def __init__(self, root: Path):
        self.root = root

    def get(self, key: str, question_id: str, snippet_id: str, where: str) -> SnippetResult | None:
        """The cached verdict, or None: missing, not cacheable, or damaged (then run it again)."""
        try:
            entry = _CacheEntry.model_validate_json((self.root / f"{key}.json").read_bytes())
        except (OSError, ValidationError):
            return None
        if entry.status not in CACHEABLE:
            return None
        return SnippetResult(question_id, snippet_id, entry.status, entry.duration, entry.reason,
                             tuple(entry.warnings), cached=True, where=where, key=key,
                             grew_mb=entry.grew_mb, imported_from=entry.imported_from,
                             answers=entry.answers)

    def put(self, key: str, result: SnippetResult) -> None:
        if result.status not in CACHEABLE or result.cached:
            return
        entry = {"status": result.status.value, "duration": round(result.duration, 3),
                 "reason": result.reason, "warnings": list(result.warnings),
                 "grew_mb": result.grew_mb}
        if result.answers is not None:
            entry["answers"] = result.answers
        if result.imported_from:  # `ptbank cache import`'s: another machine's, not run here
            entry["imported_from"] = result.imported_from
        self._write(f"{key}.json", json.dumps(entry))  # ASCII: any text at all encodes

    def timings(self) -> dict[str, float]:
        """Last durations by snippet name; what is not a number of seconds is left out."""
        try:
            data = json.loads((self.root / "timings.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {name: float(seconds) for name, seconds in data.items()
                if isinstance(seconds, (int, float)) and not isinstance(seconds, bool)
                and math.isfinite(seconds) and seconds >= 0}

    def save_timings(self, measured: dict[str, float]) -> None:
        if measured:
            merged = self.timings() | {k: round(v, 3) for k, v in measured.items()}
            self._write("timings.json", json.dumps(merged, sort_keys=True))

    def _write(self, name: str, text: str) -> None:
        try:
            write_text_atomic(self.root / name, text)
        except OSError:
            pass  # an unwritable cache costs the next run time, never this run's verdicts
