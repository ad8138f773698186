"""The `ptbank` command line. What users see is checked in a subprocess run from the repository
root (many at once, to stay fast); the rest calls `main()` in-process."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ptbank.cli import main
from ptbank.doctor import checks
from ptbank.errors import ContentError
from ptbank.loader import load_bank

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path("tests/fixtures")
GOOD = FIXTURES / "good"
BAD_BANKS = sorted(p.name for p in (REPO / FIXTURES).glob("bad-*"))
LINT_CASES = [  # bank, --strict, exit status, end of the summary line
    ("lint-parity", False, 2, "1 error(s), 0 warning(s)"),
    ("lint-no-claim", False, 2, "1 error(s), 0 warning(s)"),
    ("lint-long-line", False, 2, "1 error(s), 0 warning(s)"),
    ("lint-warnings", False, 0, "0 error(s), 1 warning(s)"),
    ("lint-warnings", True, 2, "1 error(s), 0 warning(s)"),
    ("good", True, 0, "0 error(s), 0 warning(s)"),
]


def ptbank(*args: str | Path) -> subprocess.CompletedProcess:
    """Run `python -m ptbank ARGS` from the repository root; no traceback may ever show."""
    result = subprocess.run([sys.executable, "-m", "ptbank", *map(str, args)], cwd=REPO,
                            capture_output=True, text=True, timeout=60)
    assert "Traceback" not in result.stderr + result.stdout
    return result


def run_main(capsys, *args: str | Path) -> tuple[int, str, str]:
    """`ptbank ARGS` in-process: (exit status, stdout, stderr)."""
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch):
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("COLUMNS", "200")  # rich tables unwrapped, so names stay whole


@pytest.fixture(scope="module")
def lint_runs() -> dict[str, subprocess.CompletedProcess]:
    """`ptbank lint --content BANK` for every bad bank, run concurrently."""
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = pool.map(lambda name: ptbank("lint", "--content", FIXTURES / name), BAD_BANKS)
        return dict(zip(BAD_BANKS, results))


# --- lint -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", BAD_BANKS)
def test_lint_bad_bank_exits_2_naming_file_and_line(lint_runs, name):
    result = lint_runs[name]
    with pytest.raises(ContentError) as caught:
        load_bank(FIXTURES / name)
    problems = [str(p) for p in caught.value.problems]
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        *problems, f"ptbank: {len(problems)} problem(s) in the content"]
    assert all(line.startswith(f"{FIXTURES}/{name}/") for line in problems)


def test_lint_message_format(lint_runs):
    result = lint_runs["bad-enum"]
    assert result.stderr.splitlines()[0] == (
        "tests/fixtures/bad-enum/tensors/q.yaml:5: level: "
        "Input should be 'beginner', 'intermediate' or 'advanced'")


@pytest.mark.parametrize("name, strict, status, summary", LINT_CASES)
def test_lint_rules_and_strict(capsys, name, strict, status, summary):
    exit_status, _, err = run_main(capsys, "lint", "--content", FIXTURES / name,
                                   *(["--strict"] if strict else []))
    *findings, last = err.splitlines()
    assert exit_status == status
    assert all(line.startswith(f"{FIXTURES}/{name}/tensors/q.yaml:") for line in findings)
    assert last == f"ptbank: {len(load_bank(FIXTURES / name).questions)} questions, {summary}"


def test_lint_whole_bank_without_heavy_imports():
    """`ptbank lint` stays light: torch, WeasyPrint and python-docx are never imported."""
    code = ("import sys\nfrom ptbank.cli import main\nstatus = main(['lint'])\n"
            "loaded = {m.split('.')[0] for m in sys.modules}\n"
            "print(status, sorted(loaded & {'torch', 'weasyprint', 'docx'}))\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                            text=True, timeout=60)
    assert result.stdout.strip() == "0 []", result.stderr


def test_missing_content_folder(capsys):
    assert run_main(capsys, "lint", "--content", "no/such/folder") == (
        2, "", "ptbank: content folder not found: no/such/folder\n")


# --- new ------------------------------------------------------------------------------------

@pytest.fixture
def bank_copy(tmp_path) -> Path:
    content = tmp_path / "bank"
    shutil.copytree(REPO / GOOD, content)
    return content


def test_new_scaffolds_a_file_that_fails_only_on_placeholders(capsys, bank_copy):
    result = ptbank("new", "grad-accumulation", "--topic", "autograd", "--level",
                    "intermediate", "--content", bank_copy)
    path = bank_copy / "autograd/grad-accumulation.yaml"
    assert (result.returncode, result.stdout) == (0, f"{path}\n")
    assert path.read_text("utf-8").splitlines()[0] == (
        "# yaml-language-server: $schema=../question.schema.json")

    status, _, err = run_main(capsys, "lint", "--content", bank_copy)
    *findings, summary = err.splitlines()
    assert status == 2
    assert summary == "ptbank: 4 questions, 8 error(s), 0 warning(s)"
    assert all(line.startswith(f"{path}:") and line.endswith("still holds a TODO placeholder")
               for line in findings)
    assert {line.split(": ")[1] for line in findings} == {
        f"{lang}.{field}" for lang in ("zh", "en")
        for field in ("title", "question", "answer", "rubric.0")}


@pytest.mark.parametrize("qid, topic, message", [
    ("type-promotion", "tensors", "tensors/type-promotion.yaml already exists"),
    ("type-promotion", "autograd", "tensors/type-promotion.yaml already exists"),
    ("grad-accumulation", "optim", "unknown topic 'optim'"),
    ("Grad_Accumulation", "autograd", "id 'Grad_Accumulation' is not kebab-case"),
])
def test_new_refuses(capsys, bank_copy, qid, topic, message):
    before = sorted(bank_copy.rglob("*"))
    status, _, err = run_main(capsys, "new", qid, "--topic", topic, "--level", "beginner",
                              "--content", bank_copy)
    assert status == 2
    assert err.startswith("ptbank: ") and message in err
    assert sorted(bank_copy.rglob("*")) == before


def test_new_reports_a_broken_topics_file(capsys, bank_copy):
    (bank_copy / "topics.yaml").write_text("- tensors\n", encoding="utf-8")
    status, _, err = run_main(capsys, "new", "x", "--topic", "tensors", "--level", "beginner",
                              "--content", bank_copy)
    assert status == 2
    assert f"{bank_copy}/topics.yaml:1: expected a mapping" in err


# --- stats, doctor, help --------------------------------------------------------------------

def _table_rows(text: str) -> dict[str, list[str]]:
    rows = (line.strip("│").split("│") for line in text.splitlines() if line.startswith("│"))
    return {cells[0].strip(): [c.strip() for c in cells[1:]] for cells in rows}


def test_stats_counts_and_seed_coverage(capsys):
    status, out, _ = run_main(capsys, "stats", "--content", GOOD)
    assert status == 0
    # columns: beginner, intermediate, advanced, coding, total
    assert _table_rows(out) == {
        "tensors": ["1", "0", "0", "0", "1"],
        "autograd": ["0", "1", "1", "1", "2"],
        "all": ["1", "1", "1", "1", "3"],
    }
    assert "snippets: 5 (answer 3, hidden 1, question 1)" in out
    assert "minutes: beginner 2, intermediate 3, advanced 10, total 15" in out
    assert "seed coverage: 3/46; missing: q1, q3, q4," in out


def test_stats_on_bad_content_exits_2(capsys):
    status, _, err = run_main(capsys, "stats", "--content", FIXTURES / "bad-enum")
    assert status == 2 and "bad-enum/tensors/q.yaml:5: level:" in err


def test_doctor_names_each_check(capsys):
    status, out, _ = run_main(capsys, "doctor")
    assert status == 0, out
    rows = _table_rows(out)
    for check in checks():
        assert rows[check.name][0] in {"ok", "optional"}


def test_help_lists_every_command(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    out = capsys.readouterr().out
    assert exited.value.code == 0
    for command in ("verify", "build", "sheet", "lint", "stats", "new", "schema", "doctor"):
        assert f"    {command} " in out


@pytest.mark.parametrize("args, message", [
    (("schema", "--out", "/proc/ptbank-schema.json"), "--out /proc/ptbank-schema.json: cannot"),
    (("verify", "--only", "type-promotion", "--json", "{file}/report.json"),
     "--json {file}/report.json: cannot write there ({file} is a file, not a folder)"),
    (("verify", "--only", "type-promotion", "--junit", "{tmp}"), "it is a folder"),
    (("drift", "--json", "{file}/d.json"), "is a file, not a folder"),
    (("build", "--format", "md", "--out", "{file}/out"), "--out {file}/out: cannot write"),
    (("sheet", "--level", "beginner", "--count", "1", "--seed", "1", "--out", "/proc/sheets"),
     "--out /proc/sheets: cannot write there"),
])
def test_unwritable_outputs_are_usage_errors_before_any_work(capsys, tmp_path, args, message):
    """Checked first: no table of passes, no traceback, exit 2 naming the option."""
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    fill = {"file": a_file, "tmp": tmp_path}
    content = () if args[0] == "schema" else ("--content", "tests/fixtures/good")
    status, out, err = run_main(capsys, *(a.format(**fill) for a in args), *content)
    assert status == 2, err
    assert message.format(**fill) in err and out == "" and "Traceback" not in err
