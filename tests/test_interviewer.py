"""The interviewer edition of the real bank, as a hiring manager runs an hour's interview from
it: the plan and a run sheet per question before anything else, the scorecard, then the
appendix; at most 8 pages before the appendix, in both languages; the scorecard's weights."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ptbank.loader import load_bank
from ptbank.scorecard import CODING, competencies, plan, weighted_score
from ptbank.sheet import SheetRequest, select_questions

ROOT = Path(__file__).resolve().parents[1]
MOST_PAGES = 8
"""Pages an hour's interviewer edition may take before its appendix (the interview-kit issue)."""


def build(tmp_path: Path, profile: str, lang: str, fmt: str = "pdf") -> tuple[str, Path]:
    out = tmp_path / f"{profile}-{lang}"
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1764460800"}
    result = subprocess.run(
        [sys.executable, "-m", "ptbank", "sheet", "--content", str(ROOT / "content"),
         "--profile", profile, "--minutes", "60", "--seed", "1", "--lang", lang,
         "--format", "all" if fmt == "all" else fmt, "--out", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    markdown = next(out.glob(f"*-interviewer-{lang}.md"), None)
    return (markdown.read_text("utf-8") if markdown else ""), out


def pages_before(pdf: Path, heading: str) -> int:
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True,
                          text=True, check=True).stdout
    for number, page in enumerate(text.split("\f"), 1):
        if re.search(rf"^\s*{heading}", page, re.M):
            return number - 1
    raise AssertionError(f"no page starts the appendix ({heading})")


@pytest.mark.parametrize(("profile", "lang", "appendix"), [
    ("training-infra", "en", "Appendix"), ("training-infra", "zh", "附录"),
    ("generalist", "en", "Appendix"), ("generalist", "zh", "附录")])
def test_an_hour_takes_at_most_8_pages_before_the_appendix(tmp_path, profile, lang, appendix):
    _, out = build(tmp_path, profile, lang)
    assert pages_before(next(out.glob(f"*-interviewer-{lang}.pdf")), appendix) <= MOST_PAGES


def test_the_interviewers_path_is_plan_run_sheets_scorecard_then_the_appendix(tmp_path):
    markdown, out = build(tmp_path, "training-infra", "en", fmt="md")
    before, appendix = markdown.split("## Appendix: reference answers", 1)
    assert before.index("## Interview plan") < before.index("### 1. ") < before.index(
        "## Scorecard")
    for run_sheet in re.split(r"^### \d+\. ", before.split("## Scorecard")[0], flags=re.M)[1:]:
        parts = ["#### Must-have", "#### Scale (circle one)", "| Hints if stuck",
                 "<!-- ptbank:answer-space 1 notes -->"]
        assert [run_sheet.index(p) for p in parts] == sorted(run_sheet.index(p) for p in parts)
        assert "#### Bonus" in run_sheet and "| **4** |" in run_sheet
        assert "assert " not in run_sheet, "no verification code in the interviewer's path"
    assert "Verified" not in before and "Verified" in appendix.split("#### About this sheet")[1]
    assert "Reference answer to 1" in appendix and "```python" in appendix
    for box in ("Strong hire", "Hire", "No hire", "Strong no hire"):
        assert f"- [ ] {box}\n" in before
    assert "**Rationale (required: the evidence for it)**" in before
    assert "Answer space" not in before          # the notes boxes are captioned as notes
    candidate = next(out.glob("*-candidate-en.md")).read_text("utf-8")
    assert "*Instructions: answer in Chinese or English. Pseudocode" in candidate


def test_a_20_minute_task_weighs_five_times_a_4_minute_warm_up():
    bank = load_bank(ROOT / "content")
    questions = select_questions(bank, SheetRequest(level=None, seed=3, minutes=60,
                                                    profile="training-infra"))
    rows = plan(questions)
    total = sum(q.minutes for q in questions)
    assert [r.weight for r in rows] == [q.minutes / total for q in questions]
    assert [r.start for r in rows] == [sum(q.minutes for q in questions[:i])
                                       for i in range(len(questions))]
    assert sum(r.weight for r in rows) == pytest.approx(1)
    assert sum(r.competency == CODING for r in rows) == 1
    found = competencies(rows)
    assert [c.weight for c in found] == sorted((c.weight for c in found), reverse=True)
    assert sum(c.weight for c in found) == pytest.approx(1)
    warm_up, task = rows[0], next(r for r in rows if r.competency == CODING)
    scores = {r.number: 4 if r is warm_up else 1 for r in rows}
    assert weighted_score(rows, scores) == pytest.approx(1 + 3 * warm_up.weight)
    scores = {r.number: 4 if r is task else 1 for r in rows}
    assert weighted_score(rows, scores) == pytest.approx(1 + 3 * task.weight)
    assert task.weight / warm_up.weight == pytest.approx(task.question.minutes /
                                                         warm_up.question.minutes)


@pytest.mark.skipif(shutil.which("soffice") is None,
                    reason="LibreOffice missing: `make test` installs libreoffice-writer-nogui")
def test_docx_table_headers_print_whole_under_libreoffice(tmp_path):
    """Bold one-word headers used to break inside the word ("Minute s", "Weigh t",
    "Scor e") where LibreOffice prints the table in DejaVu Sans."""
    _, out = build(tmp_path, "training-infra", "en", fmt="docx")
    source = next(out.glob("*-interviewer-en.docx"))
    subprocess.run(["soffice", "--headless", f"-env:UserInstallation=file://{tmp_path}/lo",
                    "--convert-to", "pdf", "--outdir", str(tmp_path), str(source)],
                   check=True, capture_output=True, timeout=180)
    text = subprocess.run(["pdftotext", "-layout", str(tmp_path / f"{source.stem}.pdf"), "-"],
                          capture_output=True, text=True, check=True).stdout
    words = set(text.split())
    for header in ("Starts", "Minutes", "Weight", "Interviewer", "Score"):
        assert header in words, header


def test_docx_tables_give_short_cells_their_whole_width(tmp_path):
    """zh headers such as 题号 and cells such as "12 分钟" used to wrap a character a line."""
    from docx import Document as open_docx

    from ptbank.render.docx import CELL_PADDING, CELL_UNIT_CM, _display_width

    _, out = build(tmp_path, "training-infra", "zh", fmt="docx")
    interviewer = open_docx(next(out.glob("*-interviewer-zh.docx")))
    plan_table = next(t for t in interviewer.tables if t.cell(0, 0).text == "题号")
    for column in plan_table.columns:
        short = [c.text for c in column.cells if _display_width(c.text) <= 12]
        if short:
            need = CELL_UNIT_CM * (max(map(_display_width, short)) + CELL_PADDING)
            assert column.width.cm >= need - 0.01, \
                (short, column.width.cm)
    widths = [c.width for c in plan_table.columns]
    assert widths[1] == max(widths), "the question column gets the room"


def test_a_bi_sheet_gives_the_interviewer_each_question_in_both_languages(tmp_path):
    """The frame in Chinese, but every question's own text twice: a candidate who answers in
    English is scored against the same points, read in English."""
    bi, _ = build(tmp_path, "generalist", "bi", fmt="md")
    en, _ = build(tmp_path, "generalist", "en", fmt="md")
    zh, _ = build(tmp_path, "generalist", "zh", fmt="md")
    assert "## 面试安排" in bi and "## Interview plan" not in bi
    before, appendix = bi.split("## 附录", 1)
    for sheet in (en, zh):
        points = re.findall(r"^- \[ \] (.+)$", sheet.split("## Scorecard")[0].split("## 评分卡")[0],
                            re.M)
        assert points and all(point in before for point in points if "Hire" not in point)
        titles = re.findall(r"^### \d+\. (.+)$", sheet, re.M)
        assert titles and all(title in before for title in titles)
    en_answers = en.split("## Appendix: reference answers", 1)[1]
    first_paragraph = en_answers.split("\n\n")[2]      # below the first answer's heading
    assert first_paragraph in appendix, "the English reference answer is in the bi appendix"
    ids = re.search(r"--exclude ([\w,-]+)", bi)[1].split(",")
    questions = {q.id: q for q in load_bank(ROOT / "content").questions}
    in_prose = sum(questions[i].en.question.count("```python")
                   + questions[i].en.answer.count("```python") for i in ids)
    assert bi.count("```python") == zh.count("```python") + in_prose, \
        "each snippet is printed once; only code written into the prose comes in both languages"
