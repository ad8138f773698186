"""Views of a VerifyReport: the terminal table and summary, JSON, JUnit XML.

Each view reads the typed results and nothing else, so the three cannot disagree.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

from .results import Status, VerifyReport, skip_tag

_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
NOTES = ("first run: ", "imported from ")
"""How the notes a JUnit case's system-out adds beside the warnings begin (imports.py reads the
warnings back without them)."""
_VERDICT_STYLE = {Status.failed: "red", Status.error: "red", Status.timeout: "magenta",
                  Status.crashed: "magenta", Status.skipped: "yellow"}


def summary_line(report: VerifyReport) -> str:
    """`ptbank: 132 passed, 0 failed, 2 skipped (cuda) in 14.2 s, torch 2.13.0`."""
    counts = report.counts
    parts = [f"{counts['passed']} passed", f"{counts['failed']} failed"]
    parts += [_plural(counts[s.value], s.value) for s in (Status.error, Status.timeout)
              if counts[s.value]]
    if counts["crashed"]:
        parts.append(f"{counts['crashed']} crashed")
    if counts["skipped"]:
        tags = {skip_tag(r.reason) for r in report.results if r.status is Status.skipped}
        parts.append(f"{counts['skipped']} skipped ({', '.join(sorted(tags))})")
    if counts.get("not_run"):
        parts.append(f"{counts['not_run']} not run")
    second = sum(r.status is Status.passed and bool(r.first_attempt) for r in report.results)
    if second:
        parts[0] += f" ({second} on a second run)"
    cached = sum(r.cached and not r.imported_from for r in report.results)
    from_cache = f", {cached} from cache" if cached else ""
    imported = sum(bool(r.imported_from) for r in report.results)
    from_elsewhere = f", {imported} imported, not run here" if imported else ""
    unconfined = "" if report.sandboxed else ", without the sandbox"
    cpu = f", under ATEN_CPU_CAPABILITY={report.cpu_capability}" if report.cpu_capability else ""
    return (f"ptbank: {', '.join(parts)} in {report.elapsed:.1f} s, "
            f"torch {report.torch_version}{from_cache}{from_elsewhere}{unconfined}{cpu}")


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("s" if count != 1 else "")


def print_report(report: VerifyReport, console) -> None:
    """A table of every snippet that did not pass, then the summary line.

    The rows run from the least to the most urgent (skips, passes that needed a second run,
    problems), so that what broke stays on the last screen, beside the summary, however many
    skips come before it."""
    from rich.table import Table
    from rich.text import Text

    # what a stopped run never reached is counted in the summary line, not listed
    not_passed = sorted((r for r in report.not_passed if r.status is not Status.not_run),
                        key=_urgency)
    if not_passed:
        table = Table(show_lines=True)
        table.add_column("snippet", overflow="fold", ratio=2)
        table.add_column("verdict", no_wrap=True)
        table.add_column("why", overflow="fold", ratio=3)
        for result in not_passed:
            verdict = result.status.value + ("\n(imported)" if result.imported_from else
                                             "\n(cached)" if result.cached else "")
            why = "\n".join(filter(None, [result.reason, _imported_note(result)]))
            if result.first_attempt:
                verdict += "\n(2nd run)"
                why = "\n".join(filter(None, [why, f"first run: {result.first_attempt}"]))
            style = _VERDICT_STYLE.get(result.status, "yellow" if result.first_attempt
                                       or result.imported_from else "")
            table.add_row(Text(f"{result.name}\n{result.where}"), Text(verdict, style=style),
                          Text(why))
        console.print(table)
    console.print(Text(summary_line(report), style="bold" if report.ok else "bold red"))


def _imported_note(result) -> str:
    return f"imported from {result.imported_from}: not run here" if result.imported_from else ""


def _urgency(result) -> int:
    if result.status is Status.skipped:
        return 0
    return 2 if result.status.is_problem else 1


def to_json(reports: list[VerifyReport]) -> str:
    """Every build's report: `{"ok": ..., "builds": [{"torch_version": ..., "results": ...}]}`."""
    data = {"ok": all(r.ok for r in reports), "builds": [_build_json(r) for r in reports]}
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def _build_json(report: VerifyReport) -> dict:
    return {
        "ok": report.ok,
        "torch_version": report.torch_version,
        "python_version": report.python_version,
        "verifier_version": report.verifier_version,
        "elapsed": round(report.elapsed, 3),
        "jobs": report.jobs,
        "zygote_start": report.zygote_start,
        "sandboxed": report.sandboxed,
        "cpu_capability": report.cpu_capability or "native",
        "threads": report.threads,
        "aborted": report.aborted or None,
        "counts": report.counts,
        "results": [
            {"question_id": r.question_id, "snippet_id": r.snippet_id, "where": r.where,
             "status": r.status.value, "duration": round(r.duration, 3), "reason": r.reason,
             "warnings": list(r.warnings), "cached": r.cached,
             "first_attempt": r.first_attempt, "grew_mb": r.grew_mb, "key": r.key,
             "imported_from": r.imported_from}
            | ({"answers": r.answers} if r.answers is not None else {})
            for r in report.results
        ],
    }


def to_junit(reports: list[VerifyReport]) -> str:
    """JUnit XML: a testsuite per torch build, a testcase per snippet (classname = question id).

    Each suite names its build in its properties (torch_version, python_version,
    verifier_version) and each case its code's cache key, so that `ptbank cache import` can
    bring verdicts reached on another machine (a GPU runner) into this one's cache.
    """
    root = ET.Element("testsuites", {"name": "ptbank verify", **_totals(reports)})
    for report in reports:
        _suite(root, report)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def _totals(reports: list[VerifyReport]) -> dict[str, str]:
    def count(*statuses: str) -> str:
        return str(sum(r.counts.get(s, 0) for r in reports for s in statuses))

    return {"tests": str(sum(len(r.results) for r in reports)), "failures": count("failed"),
            "errors": count("error", "timeout", "crashed"),
            "skipped": count("skipped", "not_run"),
            "time": f"{sum(r.elapsed for r in reports):.3f}"}


def _suite(root: ET.Element, report: VerifyReport) -> None:
    suite = ET.SubElement(root, "testsuite", {"name": f"ptbank torch {report.torch_version}",
                                              **_totals([report])})
    properties = ET.SubElement(suite, "properties")
    for name in ("torch_version", "python_version", "verifier_version"):
        ET.SubElement(properties, "property", {"name": name, "value": getattr(report, name)})
    ET.SubElement(properties, "property",
                  {"name": "sandboxed", "value": str(report.sandboxed).lower()})
    ET.SubElement(properties, "property",
                  {"name": "cpu_capability", "value": report.cpu_capability or "native"})
    if report.aborted:
        ET.SubElement(properties, "property", {"name": "aborted", "value": _xml(report.aborted)})
    for r in report.results:
        path, _, line = r.where.rpartition(":")
        case = ET.SubElement(suite, "testcase", {"classname": r.question_id, "name": r.snippet_id,
                                                 "time": f"{r.duration:.3f}", "file": path,
                                                 "line": line})
        if r.key or r.imported_from:
            properties = ET.SubElement(case, "properties")
            if r.key:
                ET.SubElement(properties, "property", {"name": "cache_key", "value": r.key})
            if r.imported_from:
                ET.SubElement(properties, "property",
                              {"name": "imported_from", "value": _xml(r.imported_from)})
        first = _xml(r.reason.splitlines()[0]) if r.reason else ""
        if r.status is Status.failed:
            outcome = ET.SubElement(case, "failure", {"message": first, "type": "failed"})
            outcome.text = _xml(r.reason)
        elif r.status in (Status.skipped, Status.not_run):
            ET.SubElement(case, "skipped", {"message": _xml(r.reason)})
        elif r.status.is_problem:
            outcome = ET.SubElement(case, "error", {"message": first, "type": r.status.value})
            outcome.text = _xml(r.reason)
        notes = list(r.warnings) + ([f"first run: {r.first_attempt}"] if r.first_attempt else [])
        notes += [_imported_note(r)] if r.imported_from else []
        if notes:
            ET.SubElement(case, "system-out").text = _xml("\n".join(notes))


def _xml(text: str) -> str:
    """Text XML 1.0 can carry (snippet output may hold control characters)."""
    return _XML_ILLEGAL.sub("\N{REPLACEMENT CHARACTER}", text)
