"""The committed verification record: build and sheet trust what the release verified, run
everything else, and CI catches a record that claims what a fresh run does not confirm."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ptbank.errors import PtbankError
from ptbank.loader import load_bank
from ptbank.verify.facts import python_version, torch_version
from ptbank.verify.record import RECORD_NAME, Record, snippet_key

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def ptbank(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1764547200", "COLUMNS": "200"}  # 2025-12-01
    result = subprocess.run([sys.executable, "-m", "ptbank", *args], cwd=cwd, env=env,
                            capture_output=True, text=True, timeout=300)
    assert "Traceback" not in result.stdout + result.stderr
    return result


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A working folder with a copy of a small all-passing bank, and its own cache."""
    shutil.copytree(FIXTURES / "verify-passing", tmp_path / "content")
    return tmp_path


def _record_lines(project: Path) -> list[dict]:
    return [json.loads(line) for line in
            (project / "content" / RECORD_NAME).read_text("utf-8").splitlines()]


def _edit(project: Path, old: str, new: str) -> None:
    path = project / "content" / "basics" / "quick-checks.yaml"
    text = path.read_text("utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_record_is_sorted_and_names_the_build(project: Path):
    result = ptbank(project, "verify", "--record", "--content", "content")
    assert result.returncode == 0, result.stderr
    lines = _record_lines(project)
    assert lines[0] == {"build": {"torch": torch_version(), "python": python_version(),
                                  "verifier": lines[0]["build"]["verifier"],
                                  "recorded": "2025-12-01", "modules": {}}}
    entries = lines[1:]
    assert [e["snippet"] for e in entries] == sorted(e["snippet"] for e in entries)
    assert len(entries) == 3 and {e["verdict"] for e in entries} == {"passed"}
    assert "recorded: 3 passing snippets" in result.stderr


def test_build_trusts_the_record_and_reruns_only_an_edited_snippet(project: Path):
    path = project / "content" / "basics" / "quick-checks.yaml"
    path.write_text(path.read_text("utf-8") + "  - id: on-a-gpu\n    requires: [cuda]\n"
                    "    code: |\n      import torch\n      assert torch.cuda.is_available()\n",
                    encoding="utf-8")
    assert ptbank(project, "verify", "--record", "--content", "content").returncode == 0
    shutil.rmtree(project / "build")  # a fresh clone: no cache, only the committed record
    first = ptbank(project, "build", "--content", "content", "--format", "md", "--level",
                   "all", "--lang", "en", "--answers")
    assert first.returncode == 0, first.stderr
    assert ("verified: 3 passed, 1 skipped (3 by the release record, 0 from cache, 0 run here)"
            in first.stderr), "a skip is not run, and GPU snippets are never recorded"
    assert not (project / "build" / "cache" / "verify").exists() or not any(
        (project / "build" / "cache" / "verify").glob("*/*.json")), "nothing ran, nothing cached"
    markdown = (project / "build" / "ptbank-all-en-answers.md").read_text("utf-8")
    assert "Verified: 3/4 code snippets passed" in markdown
    assert "(3 by the release record of 2025-12-01, 0 here)" in markdown

    _edit(project, "== 10", "== 4 + 6")
    second = ptbank(project, "build", "--content", "content", "--format", "md", "--level",
                    "all", "--lang", "en", "--answers")
    assert second.returncode == 0, second.stderr
    assert "(2 by the release record, 0 from cache, 1 run here)" in second.stderr
    again = ptbank(project, "build", "--content", "content", "--format", "md", "--level",
                   "all", "--lang", "en", "--answers", "--reverify")
    assert "(0 by the release record, 1 from cache, 2 run here)" in again.stderr


def test_check_record_catches_a_forged_pass_and_a_missing_snippet(project: Path):
    assert ptbank(project, "verify", "--record", "--content", "content").returncode == 0
    assert ptbank(project, "verify", "--check-record", "--content", "content").returncode == 0
    # make a snippet fail, then forge the record so it claims that code passed
    _edit(project, "== 10", "== 11")
    bank = load_bank(project / "content")
    failing = next(s for s in bank.question("quick-checks").snippets if s.id == "arange-sum")
    path = project / "content" / RECORD_NAME
    lines = path.read_text("utf-8").splitlines()
    forged = [line.replace(json.loads(line)["key"], snippet_key(failing))
              if '"quick-checks/arange-sum"' in line else line for line in lines]
    path.write_text("\n".join(forged) + "\n", encoding="utf-8")
    build = ptbank(project, "build", "--content", "content", "--format", "md", "--lang", "en")
    assert build.returncode == 0, "the forged pass is trusted by a build ..."
    check = ptbank(project, "verify", "--check-record", "--content", "content")
    assert check.returncode == 1, "... and caught by CI's check"
    assert "record is stale: run `make record`" in check.stderr
    assert "quick-checks/arange-sum" in check.stderr and "recorded as passed, but it failed" \
        in check.stderr
    # a snippet that passes but is missing from the record is caught too
    _edit(project, "== 11", "== 10")
    path.write_text("\n".join(l for l in lines if "prints-shape" not in l) + "\n", "utf-8")
    missing = ptbank(project, "verify", "--check-record", "--content", "content")
    assert missing.returncode == 1
    assert "quick-checks/prints-shape" in missing.stderr and "missing from the record" \
        in missing.stderr


def test_a_declared_build_the_record_covers_is_not_installed(project: Path):
    """Another build's record lines are shown in the stamp, never used for the local build:
    torch 2.99.0 does not exist, so the build passes only if it is never installed."""
    bank_yaml = project / "content" / "bank.yaml"
    bank_yaml.write_text(bank_yaml.read_text("utf-8")
                         + 'verify_also_with_torch: ["2.99.0"]\n', encoding="utf-8")
    bank = load_bank(project / "content")
    from ptbank.verify.cache import VERIFIER_VERSION

    other = "2.99.0+cpu"
    lines = [{"build": {"torch": other, "python": "3.11.0", "verifier": VERIFIER_VERSION,
                        "recorded": "2025-11-30", "modules": {}}}]
    lines += [{"snippet": f"quick-checks/{s.id}", "torch": other, "key": snippet_key(s),
               "verdict": "passed"} for s in bank.question("quick-checks").snippets]
    (project / "content" / RECORD_NAME).write_text(
        "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    result = ptbank(project, "build", "--content", "content", "--format", "md", "--level",
                    "all", "--lang", "en", "--answers")
    assert result.returncode == 0, result.stderr
    assert "installing torch 2.99.0" not in result.stderr
    markdown = (project / "build" / "ptbank-all-en-answers.md").read_text("utf-8")
    assert f"passed under torch {torch_version()}" in markdown      # the local build ran here
    assert (f"Verified: 3/3 code snippets passed under torch {other}, 3.11.0 "
            "(3 by the release record of 2025-11-30, 0 here)") in markdown


def test_a_damaged_record_line_is_named_with_its_file_and_line(tmp_path: Path):
    path = tmp_path / RECORD_NAME
    path.write_text('{"build": {"torch": "2.15.0", "python": "3.11.7", "verifier": "5", '
                    '"recorded": "2026-12-01"}}\n{"snippet": "a/b", "torch": "2.15.0", '
                    '"key": 5, "verdict": "passed"}\n', encoding="utf-8")
    with pytest.raises(PtbankError, match=rf"{RECORD_NAME}:2: not a verification record line"):
        Record.load(path)
    assert Record.load(tmp_path / "absent.jsonl") == Record()
