"""`ptbank cache import`: verdicts reached on another machine, merged into this one's cache.

A GPU runner can run the snippets this machine skips (`requires: [cuda]`) and hand back either
its `ptbank verify --junit` report or its cache folder. Every verdict is stored under the cache
key it was reached with: the code, its expectations and the torch, Python and module versions
of that runner. So an imported verdict is used here only for the same code under the same
builds, and a snippet that changed since runs again.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import replace
from pathlib import Path

from ..errors import PtbankError
from .cache import ResultCache
from .launch import DEFAULT_CACHE
from .results import CACHEABLE, SnippetResult, Status

_KEY = re.compile(r"^[0-9a-f]{64}$")


def run_cache_import(sources: list[Path], cache_dir: Path = DEFAULT_CACHE) -> int:
    cache = ResultCache(cache_dir)
    for source in sources:
        if source.is_dir():
            counts = import_folder(source, cache)
        elif source.is_file():
            counts = import_junit(source, cache)
        else:
            raise PtbankError(f"cache import: {source}: no such file or folder")
        tally = ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "nothing"
        print(f"ptbank: imported {tally} from {source} into {cache_dir}")
    return 0


def import_junit(path: Path, cache: ResultCache) -> Counter:
    """Passed and failed testcases that carry a cache key (ptbank verify --junit writes it)."""
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as exc:
        raise PtbankError(f"cache import: {path}: not a JUnit XML file ({exc})") from None
    counts: Counter = Counter()
    for case in root.iter("testcase"):
        key = next((p.get("value") for p in case.iter("property")
                    if p.get("name") == "cache_key"), None)
        result = _case_result(case)
        if key and _KEY.match(key) and result.status in CACHEABLE:
            cache.put(key, result)
            counts[result.status.value] += 1
        else:
            counts["not cacheable"] += 1
    return counts


def _case_result(case: ET.Element) -> SnippetResult:
    failure, skipped, error = (case.find(tag) for tag in ("failure", "skipped", "error"))
    if failure is not None:
        status, reason = Status.failed, failure.text or failure.get("message", "")
    elif skipped is not None:
        status, reason = Status.skipped, skipped.get("message", "")
    elif error is not None:
        status, reason = Status(error.get("type", "error")), error.text or ""
    else:
        status, reason = Status.passed, ""
    out = case.find("system-out")
    warnings = tuple(line for line in (out.text or "").splitlines()
                     if line and not line.startswith("first run: ")) if out is not None else ()
    return SnippetResult(case.get("classname", ""), case.get("name", ""), status,
                         float(case.get("time", 0) or 0), reason, warnings)


def import_folder(folder: Path, cache: ResultCache) -> Counter:
    """Verdict files of another cache folder, read as the cache reads its own (timings.json,
    damaged and uncacheable entries are left out)."""
    theirs = ResultCache(folder)
    counts: Counter = Counter()
    for entry in sorted(folder.glob("*.json")):
        if not _KEY.match(entry.stem):
            continue
        result = theirs.get(entry.stem, "", "", "")
        if result is None:
            counts["left out"] += 1
            continue
        cache.put(entry.stem, replace(result, cached=False))
        counts[result.status.value] += 1
    return counts
