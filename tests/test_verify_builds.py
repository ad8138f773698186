"""Other torch builds: verifying under another interpreter, drift between two, provisioning an
environment, and verdicts brought in from another machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ptbank.errors import PtbankError
from ptbank.loader import load_bank
from ptbank.verify import Status, VerifyReport, verify_bank
from ptbank.verify import builds
from ptbank.verify.drift import compare, outcome_lines
from ptbank.verify.interpreter import Interpreter
from ptbank.verify.results import SnippetResult
from ptbank.verify.report import to_junit

FIXTURES = Path(__file__).parent / "fixtures"
DRIFT = FIXTURES / "verify-drift"
PASSING = FIXTURES / "verify-passing"


def ptbank(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = os.environ | {"COLUMNS": "250"}
    return subprocess.run([sys.executable, "-m", "ptbank", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_drift_names_each_snippet_that_differs_with_its_first_differing_line(
        other_python, tmp_path):
    done = ptbank("drift", "--content", str(DRIFT), "--python", str(other_python),
                  "--no-cache", "--json", "drift.json", cwd=tmp_path)
    assert done.returncode == 1, done.stderr  # the verdict that changed is not explained
    assert "ptbank drift: 2 of 3 snippets differ" in done.stdout
    assert "(1 explained in bank.yaml)" in done.stdout
    assert "explained (1): the other interpreter renamed the API" in done.stdout
    drift = {d["name"]: d for d in json.loads((tmp_path / "drift.json").read_text())["drift"]}
    assert set(drift) == {"flavours/verdict-changes", "flavours/warning-changes"}
    verdict = drift["flavours/verdict-changes"]
    assert (verdict["base"]["status"], verdict["other"]["status"]) == ("passed", "failed")
    assert verdict["explained"] is None
    warning = drift["flavours/warning-changes"]
    assert warning["explained"].startswith("the other interpreter renamed the API")
    assert warning["base"] == {"status": "passed", "line": "(nothing more)"}
    assert warning["other"]["line"] == "UserWarning at line 5: this API was renamed"
    assert verdict["where"].endswith("flavours.yaml:22")


def test_drift_exits_0_when_nothing_unexplained_differs(other_python, tmp_path):
    done = ptbank("drift", "--content", str(DRIFT), "--python", str(other_python),
                  "--no-cache", "--only", "flavours/same-everywhere", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ptbank drift: 0 of 1 snippets differ" in done.stdout
    done = ptbank("drift", "--content", str(DRIFT), "--python", str(other_python),
                  "--no-cache", "--only", "flavours/warning-changes", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 of 1 snippets differ" in done.stdout and "(1 explained" in done.stdout


def test_drift_of_the_pinned_build_with_itself_is_refused(tmp_path):
    pinned = Interpreter.current().versions.torch.split("+")[0]
    done = ptbank("drift", "--content", str(DRIFT), "--torch", pinned, cwd=tmp_path)
    assert done.returncode == 2 and "name another build" in done.stderr
    assert not (tmp_path / "build/envs").exists()


def test_verify_python_runs_the_snippets_under_that_interpreter(other_python, tmp_path):
    done = ptbank("verify", "--content", str(DRIFT), "--python", str(other_python),
                  "--no-cache", "--json", "report.json", cwd=tmp_path)
    assert done.returncode == 1
    [build] = json.loads((tmp_path / "report.json").read_text())["builds"]
    assert {r["snippet_id"]: r["status"] for r in build["results"]} == {
        "same-everywhere": "passed", "verdict-changes": "failed", "warning-changes": "passed"}


def test_verify_python_that_is_no_interpreter_is_a_usage_error(tmp_path):
    done = ptbank("verify", "--content", str(PASSING), "--python", str(tmp_path / "nope"),
                  cwd=tmp_path)
    assert done.returncode == 2 and "no such interpreter" in done.stderr
    assert "Traceback" not in done.stderr


def _result(status: Status, reason: str = "", warnings: tuple[str, ...] = ()) -> SnippetResult:
    return SnippetResult("q", "s", status, 0.1, reason, warnings)


def test_drift_ignores_how_a_skip_was_found_and_library_line_numbers():
    base = VerifyReport((_result(Status.skipped, "requires cuda: CUDA is not available "
                                                 "(torch 2.13.0+cpu is a CPU build)"),),
                        "2.13.0+cpu", "CPython 3.11.7")
    other = VerifyReport((_result(Status.skipped, "requires cuda: CUDA is not available "
                                                  "(probed with torch 2.15.0+cu132)"),),
                         "2.15.0+cu132", "CPython 3.11.7")
    assert compare(base, other) == []
    moved = outcome_lines(_result(Status.passed, warnings=(
        "UserWarning at torch/nn/modules/module.py:1201: hooks at 0x7f3a2b1c4d50",)))
    assert moved == outcome_lines(_result(Status.passed, warnings=(
        "UserWarning at torch/nn/modules/module.py:1344: hooks at 0x7f99aa001122",)))


def test_a_changed_verdict_is_never_explained():
    from ptbank.models import ExplainedDrift

    everything = [ExplainedDrift(warning=".*", why="anything goes")]
    base = VerifyReport((_result(Status.passed, warnings=("UserWarning at line 1: a",)),),
                        "2.15.0", "CPython 3.11.7")
    other = VerifyReport((_result(Status.failed, "AssertionError",
                                  ("UserWarning at line 1: a",)),), "2.13.0", "CPython 3.11.7")
    [drift] = compare(base, other, everything)
    assert drift.explained is None
    quiet = VerifyReport((_result(Status.passed),), "2.13.0", "CPython 3.11.7")
    [drift] = compare(base, quiet, everything)
    assert drift.explained == "anything goes"
    [drift] = compare(base, quiet, [ExplainedDrift(warning="other words", why="no")])
    assert drift.explained is None


def test_provisioning_leaves_nothing_half_made(tmp_path, monkeypatch):
    """A failed install leaves no environment behind; a finished one appears whole, once."""
    calls = []

    def failing(command, what):
        if what.startswith("create"):
            Path(command[-1]).mkdir()
        else:
            raise PtbankError(f"could not {what}: no network")

    monkeypatch.setattr(builds, "_run", failing)
    with pytest.raises(PtbankError, match="no network"):
        builds.provision("2.99.0", tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == [".torch-2.99.0.lock"]

    def working(command, what):
        calls.append(what)
        if what.startswith("create"):
            (Path(command[-1]) / "bin").mkdir(parents=True)
            (Path(command[-1]) / "bin" / "python").write_text("")

    monkeypatch.setattr(builds, "_run", working)
    python = builds.provision("2.99.0", tmp_path)
    assert python == tmp_path / "torch-2.99.0" / "bin" / "python" and python.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".torch-2.99.0.lock", "torch-2.99.0"]
    calls.clear()
    assert builds.provision("2.99.0", tmp_path) == python and calls == []  # reused


def test_a_provisioned_env_gets_a_snippet_package_added_later(tmp_path, monkeypatch):
    """An env made before `snippets` gained a package is updated in place, once."""
    calls = []

    def working(command, what):
        calls.append((what, command))
        if what.startswith("create"):
            (Path(command[-1]) / "bin").mkdir(parents=True)
            (Path(command[-1]) / "bin" / "python").write_text("")

    monkeypatch.setattr(builds, "_run", working)
    monkeypatch.setattr(builds, "snippet_packages", lambda: ["numpy"])
    python = builds.provision("2.99.0", tmp_path)
    calls.clear()
    monkeypatch.setattr(builds, "snippet_packages", lambda: ["numpy", "torchao"])
    assert builds.provision("2.99.0", tmp_path) == python
    [(what, command)] = calls
    assert what.startswith("update") and "torchao" in command and "torch==2.99.0" in command
    assert command[0] == str(python)  # into the existing env, not a new one
    calls.clear()
    assert builds.provision("2.99.0", tmp_path) == python and calls == []  # now up to date


def test_provisioned_env_keeps_the_locks_pins_but_not_the_pinned_torch_builds_own():
    pins = builds._constraints().splitlines()
    names = {line.split("==")[0].lower() for line in pins}
    assert "numpy" in names and "onnx" in names
    assert not {n for n in names if n == "torch" or n.startswith(("nvidia-", "triton"))}
    assert set(builds.snippet_packages()) >= {"numpy", "onnx"}


def test_torch_version_is_checked_before_anything_is_installed(tmp_path):
    with pytest.raises(PtbankError, match="expected a version"):
        builds.build_for("latest; rm -rf /", tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_verdicts_from_another_machine_are_imported_by_junit_or_folder(tmp_path):
    bank = load_bank(PASSING)
    there = verify_bank(bank, cache_dir=tmp_path / "there", progress=False)
    assert all(r.status is Status.passed for r in there.results)
    report = tmp_path / "there.xml"
    report.write_text(to_junit([there]))
    (tmp_path / "there" / ("f" * 64 + ".json")).write_text("{damaged")

    for source, name in ((report, "from-junit"), (tmp_path / "there", "from-folder")):
        here = tmp_path / name
        done = ptbank("cache", "import", str(source), cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert "3 passed" in done.stdout
        assert ("1 left out" in done.stdout) == (name == "from-folder")
        (tmp_path / "build/cache/verify").rename(here)
        again = verify_bank(bank, cache_dir=here, progress=False)
        assert all(r.cached and r.status is Status.passed for r in again.results)


def test_junit_names_each_build_and_each_snippets_key(tmp_path):
    report = verify_bank(load_bank(PASSING), cache_dir=tmp_path, progress=False)
    root = ET.fromstring(to_junit([report, report]).split("\n", 1)[1])
    suites = root.findall("testsuite")
    assert len(suites) == 2 and root.get("tests") == "6"
    assert suites[0].get("name") == f"ptbank torch {report.torch_version}"
    keys = [p.get("value") for p in suites[0].iter("property") if p.get("name") == "cache_key"]
    assert keys == [r.key for r in report.results] and all(len(k) == 64 for k in keys)
