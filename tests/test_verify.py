"""The verifier against hostile snippets: each gets the right verdict and the run carries on.

One real verification run of tests/fixtures/verify-hostile is shared by every test here.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import uuid
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ptbank.errors import PtbankError
from ptbank.loader import load_bank
from ptbank.verify import Status, verify_bank
from ptbank.verify.interpreter import Interpreter
from ptbank.verify.report import summary_line, to_json, to_junit

from conftest import wait_until_gone

HOSTILE = Path(__file__).parent / "fixtures" / "verify-hostile"
OTHER_BUILD = os.environ.get("PTBANK_TEST_PYTHON")
"""An interpreter of another torch build to run the hostile bank under instead of the pinned
one: .ci/run sets it to build/envs/torch-2.13.0/bin/python for a second pass."""

EXPECTED = {
    "process-hazards/endless-loop": Status.timeout,
    "process-hazards/segfault": Status.crashed,
    "process-hazards/os-exit-zero": Status.crashed,
    "process-hazards/sys-exit-zero": Status.crashed,
    "process-hazards/sys-exit-three": Status.crashed,
    "process-hazards/huge-allocation": Status.error,
    "process-hazards/leftover-grandchild": Status.passed,
    "process-hazards/stdout-flood": Status.passed,
    "claims-and-expectations/expected-exception": Status.passed,
    "claims-and-expectations/expected-stdout": Status.passed,
    "claims-and-expectations/interleaved-output": Status.passed,
    "claims-and-expectations/failing-assertion": Status.failed,
    "claims-and-expectations/wrong-exception": Status.failed,
    "claims-and-expectations/missing-exception": Status.failed,
    "claims-and-expectations/message-mismatch": Status.failed,
    "claims-and-expectations/stdout-mismatch": Status.failed,
    "claims-and-expectations/unexpected-error": Status.error,
    "claims-and-expectations/aged-autocast": Status.failed,
    "claims-and-expectations/deprecation-inside-a-library": Status.passed,
    "isolation-and-threads/changes-default-dtype": Status.passed,
    "isolation-and-threads/relies-on-default-dtype": Status.passed,
    "isolation-and-threads/seeded": Status.passed,
    "isolation-and-threads/threaded-matmul": Status.passed,
    "isolation-and-threads/ddp-gloo-step": Status.passed,
    "spawned-ranks/ranks-start-fresh": Status.passed,
    "spawned-ranks/a-failing-rank-fails-the-snippet": Status.passed,
    "spawned-ranks/spawned-dataloader-workers": Status.passed,
    "declared-requirements/needs-cuda": Status.skipped,
    "declared-requirements/needs-two-gpus": Status.skipped,
    "declared-requirements/needs-missing-module": Status.skipped,
    "declared-requirements/needs-onnx": Status.passed,
    "escape-attempts/detached-rewriter": Status.passed,
    "escape-attempts/rewritten-victim": Status.failed,
    "escape-attempts/forged-reply": Status.failed,
    "escape-attempts/no-secret-in-the-environment": Status.passed,
    "escape-attempts/no-host-secrets": Status.passed,
    "escape-attempts/shared-memory-is-bounded": Status.crashed,
    "escape-attempts/tmp-is-bounded": Status.passed,
    "escape-attempts/processes-are-bounded": Status.passed,
    "escape-attempts/leaves-files-behind": Status.passed,
    "escape-attempts/finds-nothing-left-behind": Status.passed,
    "escape-attempts/no-user-namespace-below": Status.passed,
    "escape-attempts/system-v-segments-are-counted": Status.crashed,
    "escape-attempts/memfd-is-counted": Status.crashed,
    "escape-attempts/holds-a-terminal": Status.passed,
    "escape-attempts/sees-no-other-terminal": Status.passed,
    "escape-attempts/init-is-out-of-reach": Status.passed,
}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """One run over the hostile bank; cwd-relative cache so that the CLI can reuse it."""
    root = tmp_path_factory.mktemp("hostile")
    token = uuid.uuid4().hex
    bank = load_bank(HOSTILE)
    with pytest.MonkeyPatch.context() as mp, host_socket() as socket_path:
        mp.setenv("PTBANK_SNIPPET_TOKEN", token)
        mp.setenv("API_TOKEN", "hunter2")  # a secret exported before `ptbank verify`
        mp.setenv("DEPLOY_KEY", f"hunter2-{token}")
        if os.geteuid() == 0:  # as a user, snippets run as that user: their sockets are theirs
            mp.setenv("PTBANK_SNIPPET_SOCKET", str(socket_path))
        report = verify_bank(bank, jobs=2, cache_dir=root / "build/cache/verify", progress=False,
                             interpreter=Interpreter(OTHER_BUILD) if OTHER_BUILD else None)
    return {"root": root, "bank": bank, "report": report, "token": token}


@contextlib.contextmanager
def host_socket():
    """A Unix socket listening under the checkout's build/ (the hidden folders are not it)."""
    folder = Path(__file__).resolve().parent.parent / "build" / "test-sockets"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{uuid.uuid4().hex[:12]}.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        server.listen()
        try:
            yield path
        finally:
            path.unlink()


def results(hostile) -> dict:
    return {r.name: r for r in hostile["report"].results}


def test_the_run_is_under_the_build_asked_for(hostile):
    asked = Interpreter(OTHER_BUILD or sys.executable).versions.torch
    assert hostile["report"].torch_version == asked


def test_every_hostile_snippet_gets_its_verdict(hostile):
    assert {name: r.status for name, r in results(hostile).items()} == EXPECTED
    assert not hostile["report"].ok


def test_report_is_in_bank_order_with_locations(hostile):
    report, bank = hostile["report"], hostile["bank"]
    expected = [f"{q.id}/{s.id}" for q in bank.questions for s in q.snippets]
    assert [r.name for r in report.results] == expected
    first = report.results[0]
    assert first.where == bank.where(first.question_id, "snippets", 0)
    assert report.counts == {"passed": 26, "failed": 8, "error": 2, "timeout": 1,
                             "crashed": 7, "skipped": 3}


@pytest.mark.parametrize("name, excerpt", [
    ("process-hazards/endless-loop", "still running after 2 s"),
    ("process-hazards/segfault", "SIGSEGV"),
    ("process-hazards/segfault", "at line 2: ctypes.string_at(0)"),
    ("process-hazards/os-exit-zero", "exited (status 0) before the snippet finished"),
    ("process-hazards/sys-exit-zero", "sys.exit(0)"),
    ("process-hazards/sys-exit-three", "sys.exit(3)"),
    ("process-hazards/huge-allocation", "memory limit is 2048 MiB"),
    ("claims-and-expectations/failing-assertion", "expected 3, got 2"),
    ("claims-and-expectations/wrong-exception", "expected RuntimeError, got ValueError"),
    ("claims-and-expectations/missing-exception", "but the snippet completed"),
    ("claims-and-expectations/message-mismatch", "does not match 'view size'"),
    ("claims-and-expectations/stdout-mismatch", "-goodbye\n+hello"),
    ("claims-and-expectations/unexpected-error", "at line 3: torch.ones(2) @ torch.ones(3)"),
    ("claims-and-expectations/aged-autocast", "FutureWarning at line 3"),
    ("declared-requirements/needs-cuda", "requires cuda: CUDA is not available"),
    ("declared-requirements/needs-two-gpus", "requires gpus>=2: 0 GPU(s) here"),
    ("declared-requirements/needs-missing-module",
     "requires ptbank_no_such_module: module not installed"),
    ("escape-attempts/rewritten-victim", "assert torch.tensor([1.0, 2.0]).mean().item() == 2.0"),
    ("escape-attempts/forged-reply", "this verdict must stand: failed"),
    ("escape-attempts/shared-memory-is-bounded", "over its limit of 256 MiB (memory_mb)"),
    ("escape-attempts/system-v-segments-are-counted", "over its limit of 256 MiB"),
    ("escape-attempts/memfd-is-counted", "over its limit of 256 MiB"),
])
def test_reason_quotes_the_decisive_excerpt(hostile, name, excerpt):
    assert excerpt in results(hostile)[name].reason


def test_no_grandchild_outlives_its_snippet(hostile):
    assert wait_until_gone(hostile["token"]) == []


def test_stdout_flood_is_capped_and_the_snippet_still_passes(hostile):
    flood = results(hostile)["process-hazards/stdout-flood"]
    assert any("stdout capped: 100,000,0" in w for w in flood.warnings)


def test_library_warnings_are_recorded_not_failed(hostile):
    by_name = results(hostile)
    library = by_name["claims-and-expectations/deprecation-inside-a-library"].warnings
    assert any(w.startswith("DeprecationWarning at helper.py:3") for w in library)
    assert any(w.startswith("UserWarning at line 11") for w in library)
    autocast = by_name["claims-and-expectations/aged-autocast"].warnings
    assert any(w.startswith("UserWarning at torch/cuda/amp/") for w in autocast)


def test_summary_line(hostile):
    line = summary_line(hostile["report"])
    assert line.startswith("ptbank: 26 passed, 8 failed, 2 errors, 1 timeout, 7 crashed, "
                           "3 skipped (cuda, gpus>=2, ptbank_no_such_module) in ")
    assert line.endswith(f"torch {hostile['report'].torch_version}")


def test_json_view(hostile):
    data = json.loads(to_json([hostile["report"]]))
    assert data["ok"] is False
    [data] = data["builds"]
    assert data["ok"] is False
    assert data["torch_version"] == hostile["report"].torch_version
    assert data["python_version"].startswith("CPython 3.")
    assert data["counts"]["crashed"] == 7
    segfault = next(r for r in data["results"] if r["snippet_id"] == "segfault")
    assert segfault["question_id"] == "process-hazards"
    assert segfault["status"] == "crashed" and "SIGSEGV" in segfault["reason"]
    assert segfault["duration"] >= 0 and segfault["cached"] is False


def test_junit_view(hostile):
    root = ET.fromstring(to_junit([hostile["report"]]))
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"),
            suite.get("skipped")) == ("47", "8", "10", "3")
    cases = {(c.get("classname"), c.get("name")): c for c in suite.iter("testcase")}
    assert cases[("process-hazards", "endless-loop")].find("error").get("type") == "timeout"
    assert cases[("claims-and-expectations", "wrong-exception")].find("failure") is not None
    assert "cuda" in cases[("declared-requirements", "needs-cuda")].find("skipped").get("message")
    passed = cases[("isolation-and-threads", "seeded")]
    assert [child.tag for child in passed] == ["properties"] and float(passed.get("time")) >= 0
    [key] = passed.iter("property")
    assert key.get("name") == "cache_key" and len(key.get("value")) == 64


def test_only_passes_and_failures_are_cached(hostile):
    cache = hostile["root"] / "build/cache/verify"
    cached_statuses = [json.loads(p.read_text())["status"]
                       for p in cache.glob("*.json") if p.name != "timings.json"]
    report = hostile["report"]
    assert sorted(cached_statuses) == sorted(
        r.status.value for r in report.results if r.status in (Status.passed, Status.failed))
    assert set(json.loads((cache / "timings.json").read_text())) >= {
        "isolation-and-threads/ddp-gloo-step", "process-hazards/endless-loop"}


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = os.environ | {"COLUMNS": "250"}
    return subprocess.run([sys.executable, "-m", "ptbank", "verify", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120, env=env)


def test_cli_exits_1_on_failures_and_writes_reports(hostile):
    root = hostile["root"]
    only = [f"claims-and-expectations/{s}"
            for s in ("expected-stdout", "wrong-exception", "stdout-mismatch")]
    done = run_cli("--content", str(HOSTILE), "--only", *only,
                   "--json", "out/report.json", "--junit", "out/report.xml", cwd=root)
    assert done.returncode == 1, done.stderr
    assert "claims-and-expectations/wrong-exception" in done.stdout
    assert "expected RuntimeError, got ValueError" in done.stdout
    assert "ptbank: 1 passed, 2 failed in " in done.stdout and "3 from cache" in done.stdout
    data = json.loads((root / "out/report.json").read_text())
    [build] = data["builds"]
    assert len(build["results"]) == 3 and all(r["cached"] for r in build["results"])
    assert ET.parse(root / "out/report.xml").getroot().find("testsuite").get("tests") == "3"


def test_only_selects_questions_and_single_snippets(hostile):
    report = verify_bank(hostile["bank"], only=["claims-and-expectations/wrong-exception",
                                                "declared-requirements"],
                         cache_dir=hostile["root"] / "build/cache/verify", progress=False)
    assert [r.name for r in report.results] == [
        "claims-and-expectations/wrong-exception", "declared-requirements/needs-cuda",
        "declared-requirements/needs-two-gpus", "declared-requirements/needs-missing-module",
        "declared-requirements/needs-onnx"]
    assert report.results[0].cached and report.results[-1].cached


def test_only_rejects_unknown_ids(hostile):
    with pytest.raises(PtbankError, match="no-such-question"):
        verify_bank(hostile["bank"], only=["no-such-question"], use_cache=False,
                    progress=False)
    done = run_cli("--content", str(HOSTILE), "--only", "process-hazards/nope",
                   cwd=hostile["root"])
    assert done.returncode == 2 and "process-hazards/nope" in done.stderr



FLAKY = Path(__file__).parent / "fixtures" / "verify-flaky"


def test_error_crash_and_timeout_get_one_more_run_and_say_so(tmp_path, monkeypatch):
    """A snippet that crashed or hung once passes on its second run, and every view says it
    needed one; an error that repeats stays an error; a wrong claim runs once and fails."""
    runs = tmp_path / "runs"
    runs.mkdir()
    runs.chmod(0o777)  # run as root, ptbank hands snippets the user nobody
    monkeypatch.setenv("PTBANK_SNIPPET_RUNS", str(runs))
    report = verify_bank(load_bank(FLAKY), jobs=2, cache_dir=tmp_path / "cache", progress=False,
                         sandbox_writable=(runs,))
    by_name = {r.snippet_id: r for r in report.results}
    counted = {name: len((runs / name).read_text().splitlines()) for name in by_name}
    assert counted == {"crashes-once": 2, "errors-always": 2, "wrong-claim": 1, "hangs-once": 2}

    crashed_once, errors, wrong, hung_once = (by_name[n] for n in counted)
    assert hung_once.status is Status.passed
    assert hung_once.first_attempt.startswith("timeout: still running after 3 s")
    assert crashed_once.status is Status.passed
    assert crashed_once.first_attempt == "crashed: killed by SIGABRT (signal 6)"
    assert errors.status is Status.error and errors.first_attempt == "error: KeyError: 'always'"
    assert wrong.status is Status.failed and wrong.first_attempt == ""

    assert crashed_once in report.not_passed                # the table shows it
    assert "2 passed (2 on a second run), 1 failed, 1 error" in summary_line(report)
    data = {r["snippet_id"]: r for r in json.loads(to_json([report]))["builds"][0]["results"]}
    assert data["crashes-once"]["first_attempt"].startswith("crashed")
    case = ET.fromstring(to_junit([report]).split("\n", 1)[1]).find(
        ".//testcase[@name='crashes-once']")
    assert "first run: crashed" in case.find("system-out").text


def test_the_table_ends_with_the_problems_next_to_the_summary():
    """45 skips must not push a timeout out of a terminal's (or CI log's) last screen: the table
    lists skips first, then passes that needed a second run, then the problems."""
    import io

    from rich.console import Console

    from ptbank.verify.report import print_report
    from ptbank.verify.results import SnippetResult, VerifyReport

    def result(name, status, **extra):
        return SnippetResult("q", name, status, 1.0, reason=f"why {name}", **extra)

    report = VerifyReport((result("hung", Status.timeout), result("gpu", Status.skipped),
                           result("wrong", Status.failed),
                           result("flaky", Status.passed, first_attempt="crashed: x"),
                           result("fine", Status.passed)), "2.13.0", "3.11")
    out = io.StringIO()
    print_report(report, Console(file=out, width=120))
    text = out.getvalue()
    order = [text.index(f"q/{name}") for name in ("gpu", "flaky", "hung", "wrong")]
    assert order == sorted(order) and "q/fine" not in text
    assert text.rstrip().splitlines()[-1].startswith("ptbank: 2 passed")
