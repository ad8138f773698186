"""`ptbank cache import`: verdicts reached on another machine, merged into this one's cache.

A GPU runner can run the snippets this machine skips (`requires: [cuda]`) and hand back either
its `ptbank verify --junit` report or its cache folder. Every verdict is stored under the cache
key it was reached with: the code, its expectations and the torch, Python and module versions
of that runner. So an imported verdict is used here only for the same code under the same
builds, and a snippet that changed since runs again.

Nothing vouches for such a file (a testcase without <failure> reads as a pass, and a cache key
is computed from public data), so each imported verdict keeps where it came from
(`imported_from`): reports and stamps say it was not run here, and CI's `verify
--check-record` never rests on one.
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
from .report import NOTES
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
        result = _case_result(case, str(path))
        if key and _KEY.match(key) and result.status in CACHEABLE:
            cache.put(key, result)
            counts[result.status.value] += 1
        else:
            counts["not cacheable"] += 1
    return counts


def _case_result(case: ET.Element, source: str) -> SnippetResult:
    """The testcase's verdict, imported from `source` (or from where that report says its own
    verdict was imported from)."""
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
                     if line and not line.startswith(NOTES)) if out is not None else ()
    origin = next((p.get("value") for p in case.iter("property")
                   if p.get("name") == "imported_from"), None)
    return SnippetResult(case.get("classname", ""), case.get("name", ""), status,
                         float(case.get("time", 0) or 0), reason, warnings,
                         imported_from=origin or source)


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
        cache.put(entry.stem, replace(result, cached=False,
                                      imported_from=result.imported_from or str(folder)))
        counts[result.status.value] += 1
    return counts
