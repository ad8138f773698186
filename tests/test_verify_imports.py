"""Verdicts brought in by `ptbank cache import`: marked as imported wherever they count, and
never what CI's check of the record rests on.

A JUnit file is easy to write by hand (a testcase without <failure> reads as a pass) and a
cache key is computed from public data, so an imported verdict is only as good as its source.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from xml.sax.saxutils import quoteattr

from rich.console import Console

from ptbank.loader import load_bank
from ptbank.stamp import stamp_for
from ptbank.verify import Status, verify_bank
from ptbank.verify.cache import ResultCache
from ptbank.verify.core import select_targets
from ptbank.verify.imports import run_cache_import
from ptbank.verify.interpreter import Interpreter
from ptbank.verify.record import RECORD_NAME, Record, _BuildLine, snippet_key
from ptbank.verify.report import print_report, summary_line, to_json, to_junit

PASSING = Path(__file__).parent / "fixtures" / "verify-passing"


def ptbank(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "250"}
    result = subprocess.run([sys.executable, "-m", "ptbank", *args], cwd=cwd, env=env,
                            capture_output=True, text=True, timeout=300)
    assert "Traceback" not in result.stdout + result.stderr
    return result


def forged_junit(path: Path, cases: list[tuple[str, str, str]]) -> Path:
    """A JUnit file such as anyone can write: (question id, snippet id, cache key), all passed."""
    rows = "".join(
        f'<testcase classname={quoteattr(q)} name={quoteattr(s)} time="0.1"><properties>'
        f'<property name="cache_key" value="{key}"/></properties></testcase>'
        for q, s, key in cases)
    path.write_text(f'<?xml version="1.0"?><testsuites><testsuite name="x">{rows}'
                    "</testsuite></testsuites>\n", encoding="utf-8")
    return path


def test_imported_verdicts_say_so_in_every_view_and_in_the_stamp(tmp_path: Path):
    bank = load_bank(PASSING)
    targets = select_targets(bank, None, Interpreter.current())
    source = forged_junit(tmp_path / "gpu-runner.xml",
                          [(t.question_id, t.snippet.id, t.key) for t in targets])
    cache_dir = tmp_path / "cache"
    assert run_cache_import([source], cache_dir) == 0
    cached = ResultCache(cache_dir).get(targets[0].key, "q", "s", "")
    assert cached.imported_from == str(source)

    report = verify_bank(bank, cache_dir=cache_dir, progress=False)  # all cached: no torch
    assert [r.imported_from for r in report.results] == [str(source)] * 3
    assert report.zygote_start is None, "nothing ran here"
    assert "3 imported, not run here" in summary_line(report)
    assert "from cache" not in summary_line(report), "the own cache served none of them"

    out = io.StringIO()
    print_report(report, Console(file=out, width=200))
    table = out.getvalue()
    assert "(imported)" in table and f"imported from {source}: not run here" in table

    [build] = json.loads(to_json([report]))["builds"]
    assert [r["imported_from"] for r in build["results"]] == [str(source)] * 3

    root = ET.fromstring(to_junit([report]).split("\n", 1)[1])
    case = root.find("testsuite/testcase")
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props["imported_from"] == str(source)
    assert f"imported from {source}: not run here" in case.find("system-out").text

    [line] = stamp_for([report], bank.questions).lines("en")
    assert "Verified: 3/3" in line and "3 imported from another machine, not run here" in line

    # the JUnit this machine writes, imported elsewhere: still imported, and no warning made up
    again = tmp_path / "again.xml"
    again.write_text(to_junit([report]), encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    run_cache_import([again], elsewhere)
    result = ResultCache(elsewhere).get(targets[0].key, "q", "s", "")
    assert result.imported_from == str(source) and result.warnings == ()


def test_a_cache_folder_import_marks_its_verdicts_imported(tmp_path: Path):
    bank = load_bank(PASSING)
    targets = select_targets(bank, None, Interpreter.current())
    theirs = tmp_path / "theirs"
    ResultCache(theirs)._write(f"{targets[0].key}.json",
                               json.dumps({"status": "passed", "duration": 0.5}))
    run_cache_import([theirs], tmp_path / "ours")
    result = ResultCache(tmp_path / "ours").get(targets[0].key, "q", "s", "")
    assert result.status is Status.passed and result.imported_from == str(theirs)
    own = ResultCache(theirs).get(targets[0].key, "q", "s", "")
    assert own.imported_from == "", "a verdict of the machine's own run is not imported"


def test_check_record_never_rests_on_an_imported_verdict(tmp_path: Path):
    """CI's check runs what was imported: a forged pass neither confirms the record nor stays
    in the cache; the check after it reuses this machine's own verdicts."""
    shutil.copytree(PASSING, tmp_path / "content")
    path = tmp_path / "content" / "basics" / "quick-checks.yaml"
    path.write_text(path.read_text("utf-8").replace("== 10", "== 11"), encoding="utf-8")
    bank = load_bank(tmp_path / "content")
    interpreter = Interpreter.current()
    versions = interpreter.versions
    targets = select_targets(bank, None, interpreter)
    failing = next(t for t in targets if t.snippet.id == "arange-sum")
    # a record that claims every snippet passed, and a forged JUnit that agrees with it
    Record({versions.torch: _BuildLine(torch=versions.torch, python=versions.python,
                                       verifier=versions.verifier, recorded="2025-12-01")},
           {(t.name, versions.torch): snippet_key(t.snippet) for t in targets}
           ).write(tmp_path / "content" / RECORD_NAME)
    source = forged_junit(tmp_path / "forged.xml",
                          [(failing.question_id, failing.snippet.id, failing.key)])
    assert ptbank(tmp_path, "cache", "import", str(source)).returncode == 0

    check = ptbank(tmp_path, "verify", "--check-record", "--content", "content")
    assert check.returncode == 1, check.stdout + check.stderr
    assert "quick-checks/arange-sum (torch" in check.stderr
    assert "recorded as passed, but it failed here" in check.stderr
    assert "imported" not in check.stdout, "the imported verdict did not count"
    own = ResultCache(tmp_path / "build/cache/verify").get(failing.key, "q", "s", "")
    assert own.status is Status.failed and own.imported_from == "", "replaced by its own run"

    again = ptbank(tmp_path, "verify", "--check-record", "--content", "content")
    assert again.returncode == 1 and "3 from cache" in again.stdout, again.stdout
