"""A run the verifier cannot finish (a snippet killed or stopped the zygote) still writes its
reports: every verdict reached so far, the snippet(s) running at the time named, the rest
marked as not run, and the exit status of a verifier failure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from ptbank.errors import EXIT_FAILED

ABORT = Path(__file__).parent / "fixtures" / "verify-abort"


def test_a_run_the_zygote_dies_in_still_writes_its_reports(tmp_path: Path):
    """Unconfined, where a snippet can kill the zygote (in the sandbox it cannot reach it)."""
    done = subprocess.run(
        [sys.executable, "-m", "ptbank", "verify", "--content", str(ABORT), "--jobs", "1",
         "--json", "r.json", "--junit", "r.xml", "--no-sandbox"], cwd=tmp_path, capture_output=True,
        text=True, timeout=300, env={**os.environ, "COLUMNS": "250"})
    assert "Traceback" not in done.stdout + done.stderr
    assert done.returncode == EXIT_FAILED, done.stdout + done.stderr
    assert "zygote died" in done.stderr and "abort-midway/kills-the-zygote" in done.stderr
    assert "1 passed, 0 failed, 1 crashed, 1 skipped (ptbank_no_such_module), 1 not run" \
        in done.stdout, done.stdout

    data = json.loads((tmp_path / "r.json").read_text("utf-8"))
    [build] = data["builds"]
    assert data["ok"] is False and build["ok"] is False
    assert "zygote died" in build["aborted"]
    results = {r["snippet_id"]: r for r in build["results"]}
    assert [r["snippet_id"] for r in build["results"]] == [
        "passes-first", "needs-a-module", "kills-the-zygote", "never-runs"]
    assert {name: r["status"] for name, r in results.items()} == {
        "passes-first": "passed", "needs-a-module": "skipped",
        "kills-the-zygote": "crashed", "never-runs": "not_run"}
    assert results["kills-the-zygote"]["reason"].startswith(
        "running when the verifier stopped: the zygote died")
    assert results["never-runs"]["reason"].startswith("not run: the verifier stopped")
    assert build["counts"]["not_run"] == 1

    suite = ET.parse(tmp_path / "r.xml").getroot().find("testsuite")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert [c.tag for c in cases["passes-first"]] == ["properties"]  # a pass: nothing else
    assert cases["kills-the-zygote"].find("error").get("type") == "crashed"
    assert cases["never-runs"].find("skipped").get("message").startswith("not run: ")
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert "zygote died" in props["aborted"]
    assert (suite.get("errors"), suite.get("skipped")) == ("1", "2")
