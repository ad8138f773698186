"""Interview sheets: deterministic selection, budgets, editions, every format."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ptbank.errors import PtbankError
from ptbank.loader import load_bank
from ptbank.models import Kind, Level
from ptbank.sheet import SheetRequest, select_questions, sheet_id

ROOT = Path(__file__).resolve().parents[1]
BANK = ROOT / "tests" / "fixtures" / "sheet"


@pytest.fixture(scope="module")
def bank():
    return load_bank(BANK)


def sheet(*args: str, out: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1764460800"}
    return subprocess.run([sys.executable, "-m", "ptbank", "sheet", "--content", str(BANK),
                           "--draft", "--out", str(out), *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_same_seed_same_sheet_other_seed_other_sheet(bank):
    one = SheetRequest(level=Level.intermediate, seed=7, minutes=30)
    again = select_questions(bank, SheetRequest(level=Level.intermediate, seed=7, minutes=30))
    assert [q.id for q in select_questions(bank, one)] == [q.id for q in again]
    others = {tuple(q.id for q in select_questions(
        bank, SheetRequest(level=Level.intermediate, seed=s, minutes=30))) for s in range(8)}
    assert len(others) > 1, "different seeds give different sheets"
    assert sheet_id(bank, one) != sheet_id(bank, SheetRequest(Level.intermediate, 8, 30))


@pytest.mark.parametrize("seed", range(10))
def test_budget_respected_topics_mixed_one_coding_no_shared_seed(bank, seed):
    chosen = select_questions(bank, SheetRequest(level=Level.intermediate, seed=seed, minutes=30))
    assert sum(q.minutes for q in chosen) <= 30
    assert sum(q.kind is Kind.coding for q in chosen) == 1, "a coding task when one fits"
    assert len({q.topic for q in chosen}) >= 2
    seeds = [s for q in chosen for s in q.seed]
    assert len(seeds) == len(set(seeds)), "never two questions on the same seed item"
    assert all(q.level is Level.intermediate for q in chosen)


def test_budget_is_filled_as_far_as_the_bank_allows(bank):
    chosen = select_questions(bank, SheetRequest(level=Level.intermediate, seed=1, minutes=30))
    pool = [q for q in bank.questions if q.level is Level.intermediate]
    used = sum(q.minutes for q in chosen)
    leftovers = [q for q in pool if q not in chosen
                 and not set(q.seed) & {s for c in chosen for s in c.seed}]
    assert all(used + q.minutes > 30 for q in leftovers), "nothing else would still fit"


def test_count_and_exclude(bank):
    first = select_questions(bank, SheetRequest(level=Level.intermediate, seed=3, count=2))
    assert len(first) == 2
    second = select_questions(bank, SheetRequest(level=Level.intermediate, seed=3, count=2,
                                                 exclude=tuple(q.id for q in first)))
    assert not {q.id for q in first} & {q.id for q in second}


@pytest.mark.parametrize("request_, message", [
    (SheetRequest(level=Level.advanced, seed=1, minutes=30), "no advanced questions"),
    (SheetRequest(level=Level.intermediate, seed=1, minutes=1), "shortest"),
    (SheetRequest(level=Level.intermediate, seed=1, count=50), "only"),
    (SheetRequest(level=Level.intermediate, seed=1, minutes=30, topics=("nope",)), "unknown topic"),
    (SheetRequest(level=Level.intermediate, seed=1, minutes=30, exclude=("nope",)), "unknown question"),
])
def test_unsatisfiable_requests_say_why(bank, request_, message):
    with pytest.raises(PtbankError, match=message):
        select_questions(bank, request_)


def test_cli_editions_every_format_and_byte_identical_markdown(tmp_path: Path):
    args = ("--level", "intermediate", "--minutes", "30", "--seed", "5", "--format", "all",
            "--lang", "en")
    first = sheet(*args, out=tmp_path / "a")
    assert first.returncode == 0, first.stderr
    again = sheet(*args, out=tmp_path / "b")
    names = sorted(p.name for p in (tmp_path / "a").iterdir() if p.is_file())
    assert names.pop(0) == "ledger.jsonl"
    assert len(names) == 6 and all(n.startswith("sheet-") for n in names)
    ident = names[0].split("-candidate")[0].split("-interviewer")[0]
    for edition in ("candidate", "interviewer"):
        md = f"{ident}-{edition}-en.md"
        assert (tmp_path / "a" / md).read_bytes() == (tmp_path / "b" / md).read_bytes()
    candidate = (tmp_path / "a" / f"{ident}-candidate-en.md").read_text("utf-8")
    interviewer = (tmp_path / "a" / f"{ident}-interviewer-en.md").read_text("utf-8")
    code = ident.removeprefix("sheet-")
    assert code in candidate and code in interviewer
    for marker in ("ANSWER-MARKER", "RUBRIC-MARKER", "Reference answer", "Must-have"):
        assert marker not in candidate
        assert marker in interviewer
    assert "Candidate name" in candidate and "Interview plan" in interviewer
    assert "ptbank sheet --level intermediate --seed 5 --minutes 30" in interviewer
    first_ids = _sheet_question_ids(interviewer)
    assert len(first_ids) >= 2
    again = sheet("--level", "intermediate", "--minutes", "30", "--seed", "5", "--format", "md",
                  "--lang", "en", "--exclude", ",".join(first_ids), out=tmp_path / "c")
    assert again.returncode == 0, again.stderr
    second = next((tmp_path / "c").glob("*-interviewer-en.md")).read_text("utf-8")
    assert not set(first_ids) & set(_sheet_question_ids(second)), "second round avoids round one"
    pdf = subprocess.run(["pdftotext", str(tmp_path / "a" / f"{ident}-candidate-en.pdf"), "-"],
                         capture_output=True, text=True, check=True).stdout
    assert code in pdf and "ANSWER-MARKER" not in pdf


def test_cli_reports_unsatisfiable_request_without_traceback(tmp_path: Path):
    result = sheet("--level", "advanced", "--count", "3", "--seed", "1", out=tmp_path)
    assert result.returncode == 2
    assert "no advanced questions" in result.stderr and "Traceback" not in result.stderr


def _sheet_question_ids(interviewer_markdown: str) -> list[str]:
    """The ids an interviewer edition lists for a second round's --exclude."""
    return re.search(r"`--exclude ([a-z0-9,-]+)`", interviewer_markdown).group(1).split(",")


def test_docx_sheet_flows_and_sizes_the_score_grid(tmp_path: Path):
    from docx import Document as open_docx

    result = sheet("--level", "intermediate", "--minutes", "30", "--seed", "5", "--format", "docx",
                   "--lang", "en", out=tmp_path)
    assert result.returncode == 0, result.stderr
    candidate = open_docx(next(tmp_path.glob("*-candidate-*.docx")))
    headings = [p for p in candidate.paragraphs if p.style.name == "Heading 2"]
    assert headings and headings[0].paragraph_format.page_break_before is False
    interviewer = open_docx(next(tmp_path.glob("*-interviewer-*.docx")))
    grid = next(t for t in interviewer.tables if t.cell(0, 0).text == "No.")
    widths = [column.width for column in grid.columns]
    assert widths[1] == max(widths), "the question column gets the room"
    fields = interviewer.tables[0]
    assert fields.rows[1].height is not None and fields.rows[1].height.cm > 0.85


def test_one_sheet_in_two_languages_keeps_both_files(tmp_path: Path):
    """The second language comes from the regenerate command (the ledger has grown since)."""
    args = ("--level", "intermediate", "--minutes", "30", "--seed", "5", "--format", "md")
    assert sheet(*args, "--lang", "zh", out=tmp_path).returncode == 0
    assert sheet(*args, "--ledger-upto", "0", "--lang", "en", out=tmp_path).returncode == 0
    assert len((tmp_path / "ledger.jsonl").read_text("utf-8").splitlines()) == 1
    names = sorted(p.name for p in tmp_path.glob("*.md"))
    assert len(names) == 4, names
    ident = names[0].split("-candidate")[0]
    assert names == [f"{ident}-{edition}-{lang}.md" for edition in ("candidate", "interviewer")
                     for lang in ("en", "zh")]


def test_the_order_topics_are_named_in_does_not_change_the_sheet(tmp_path: Path):
    common = ("--level", "intermediate", "--minutes", "30", "--seed", "5", "--format", "md",
              "--lang", "en")
    one = sheet(*common, "--topics", "tensors,autograd", out=tmp_path / "a")
    other = sheet(*common, "--topics", "autograd,tensors,autograd", out=tmp_path / "b")
    assert one.returncode == 0 and other.returncode == 0, one.stderr + other.stderr
    assert sorted(p.name for p in (tmp_path / "a").glob("*.md")) == \
        sorted(p.name for p in (tmp_path / "b").glob("*.md"))


@pytest.mark.parametrize("size", [("--count", "0"), ("--minutes", "-5"), ("--count", "two")])
def test_a_count_or_budget_below_one_is_a_usage_error(tmp_path: Path, size):
    done = sheet("--level", "intermediate", "--seed", "5", *size, out=tmp_path)
    assert done.returncode == 2 and "None" not in done.stderr
    assert f"argument {size[0]}:" in done.stderr and "Traceback" not in done.stderr


def test_coding_tasks_get_a_code_grid_and_the_interviewer_the_checks_not_the_code(tmp_path):
    from docx import Document as open_docx

    result = sheet("--level", "intermediate", "--minutes", "30", "--seed", "5", "--format", "all",
                   "--lang", "en", out=tmp_path)
    assert result.returncode == 0, result.stderr
    candidate = next(tmp_path.glob("*-candidate-en.md")).read_text("utf-8")
    interviewer = next(tmp_path.glob("*-interviewer-en.md")).read_text("utf-8")
    [coding] = [qid for qid in _sheet_question_ids(interviewer) if qid in ("c1", "c2")]
    minutes = {"c1": 12, "c2": 15}[coding]
    assert f"<!-- ptbank:answer-space {minutes} code -->" in candidate
    assert "What the hidden test checks" in interviewer and "CHECK-MARKER" in interviewer
    assert "CHECK-MARKER" not in candidate
    for printed in (interviewer, pdf_text(next(tmp_path.glob("*-interviewer-en.pdf")))):
        assert "HIDDEN-CODE-MARKER" not in printed and "--- checks ---" not in printed
    # the candidate's PDF numbers each row of the grid: 2 rows a minute
    pdf = pdf_text(next(tmp_path.glob("*-candidate-en.pdf")))
    numbers = [int(n) for n in re.findall(r"^\s*(\d{1,2})(?:\s+Answer space)?\s*$", pdf, re.M)]
    assert list(range(1, 2 * minutes + 1)) == sorted(set(numbers) & set(range(1, 41)))
    box = next(t for t in open_docx(next(tmp_path.glob("*-candidate-en.docx"))).tables
               if t.cell(0, 0).text.split() == ["1", "Answer", "space"])
    assert len(box.rows) == 2 * minutes
    assert [row.cells[0].text.split()[0] for row in box.rows[:3]] == ["1", "2", "3"]
    assert round(box.rows[0].height.cm, 1) == 0.6


def pdf_text(path: Path) -> str:
    return subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True,
                          text=True, check=True).stdout
