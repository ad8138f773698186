"""`ptbank grade` and `ptbank practice`, on a small task with weighted checks (2, 1, 1 points):
each way a submission can end, the JSON, the ledger, batch grading and the starter file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ptbank.cli import main
from ptbank.grade.run import Submission, grade_submissions
from ptbank.grade.task import grading_task
from ptbank.ledger import LedgerRecord, append_record, grades, read_ledger
from ptbank.loader import load_bank

CONTENT = Path(__file__).parent / "fixtures" / "grade" / "content"
TASK = "scale-rows"
SUBMISSIONS = {
    "right": "import torch\n\ndef scale_rows(x, w):\n    return x * w.unsqueeze(1)\n",
    "columns": "def scale_rows(x, w):\n    return x * w[:x.shape[1]]\n",   # wrong broadcast
    "in-place": "def scale_rows(x, w):\n    x *= w[:, None]\n    return x\n",
    "to-float": "def scale_rows(x, w):\n    return (x * w[:, None]).float()\n",
    "raises": "def scale_rows(x, w):\n    raise ValueError('not yet')\n",
    "exits": "import os\n\ndef scale_rows(x, w):\n    os._exit(0)\n",
    "loops": "def scale_rows(x, w):\n    while True:\n        pass\n",
    "greedy": ("import torch\n\ndef scale_rows(x, w):\n"
               "    return torch.ones(1 << 31)\n"),
    "broken-import": "import not_a_module\n\ndef scale_rows(x, w):\n    return x\n",
    "prints": ("print('loading my attempt')\n\ndef scale_rows(x, w):\n    print('called')\n"
               "    return x * w[:, None]\n\nif __name__ == '__main__':\n    raise SystemExit(1)\n"),
    "syntax": "def scale_rows(x, w)\n    return x\n",
    "misnamed": "def scale(x, w):\n    return x * w[:, None]\n",
}


@pytest.fixture(scope="module")
def graded():
    """Every submission above, graded in one run (they run side by side, as a batch does)."""
    bank = load_bank(CONTENT)
    task = grading_task(bank.question(TASK))
    found = grade_submissions(bank, task, [Submission(f"{name}.py", code.encode())
                                           for name, code in SUBMISSIONS.items()])
    return {g.submission.removesuffix(".py"): g for g in found}


def outcomes(grade) -> list[str]:
    return [c.outcome.value for c in grade.checks]


def test_a_right_submission_gets_every_point_of_the_weighted_checks(graded):
    grade = graded["right"]
    assert outcomes(grade) == ["passed"] * 3
    assert (grade.points, grade.max_points, grade.score) == (4, 4, 1.0)
    assert [c.max_points for c in grade.checks] == [2, 1, 1]


def test_a_wrong_result_fails_its_check_with_the_decisive_line_and_the_tensors(graded):
    grade = graded["columns"]
    assert outcomes(grade)[0] == "failed" and grade.points < 2 + 1 + 1
    message = grade.checks[0].message
    assert "at: torch.testing.assert_close(out, x * w[:, None])" in message or \
        "at: assert out.shape == x.shape" in message
    assert "AssertionError" in message


def test_a_failed_plain_assert_shows_the_values_it_compared(graded):
    to_float = graded["to-float"]
    assert outcomes(to_float) == ["passed", "failed", "passed"] and to_float.points == 2 + 1
    assert "at: assert half.dtype == torch.float16" in to_float.checks[1].message
    assert "half.dtype = torch.float32" in to_float.checks[1].message
    in_place = graded["in-place"].checks[1]
    assert in_place.outcome.value == "failed"
    assert "at: assert torch.equal(x, before), note" in in_place.message
    assert "tensor of shape (4, 3), torch.float32" in in_place.message
    assert "elements differ" in in_place.message              # the largest difference, where
    assert "the input was modified:\nscale_rows must return a new tensor" in in_place.message
    assert outcomes(graded["in-place"]) == ["failed", "failed", "passed"]   # all of them ran


def test_an_exception_of_the_submission_is_an_error_naming_its_line(graded):
    grade = graded["raises"]
    assert outcomes(grade) == ["error"] * 3 and grade.points == 0
    assert "in submission.py, line 2, in scale_rows: raise ValueError('not yet')" in \
        grade.checks[0].message
    assert "ValueError: not yet" in grade.checks[0].message


def test_a_crash_a_timeout_and_a_memory_blow_up_are_named_and_stop_the_rest(graded):
    assert outcomes(graded["exits"]) == ["crashed", "not_run", "not_run"]
    assert "exited" in graded["exits"].checks[0].message
    loops = graded["loops"]
    assert outcomes(loops) == ["timeout", "not_run", "not_run"]
    assert "in submission.py, line 2, in scale_rows: while True:" in loops.checks[0].message
    assert "8 s" in loops.checks[0].message
    assert outcomes(graded["greedy"])[0] == "memory"


def test_a_submission_that_fails_to_load_is_graded_zero_with_its_error(graded):
    grade = graded["broken-import"]
    assert grade.gradable and outcomes(grade) == ["not_run"] * 3 and grade.score == 0
    assert "raised while it was loaded" in grade.message
    assert "ModuleNotFoundError: No module named 'not_a_module'" in grade.message


def test_what_a_submission_prints_is_kept_and_its_main_block_does_not_run(graded):
    grade = graded["prints"]
    assert grade.score == 1.0                       # `raise SystemExit(1)` under __main__ is not run
    assert grade.output.startswith("loading my attempt\ncalled\n")
    assert "::ptbank-check::" not in grade.output


def test_syntax_errors_and_missing_names_are_not_gradable_and_say_why(graded):
    syntax = graded["syntax"]
    assert not syntax.gradable and syntax.checks == () and syntax.score == 0
    assert "not valid Python" in syntax.message and "line 1" in syntax.message
    misnamed = graded["misnamed"]
    assert not misnamed.gradable
    assert misnamed.message == ("the task's checks call `scale_rows`; the file does not define "
                                "`scale_rows` at its top level")


def test_the_json_has_prairielearn_and_gradescope_fields(tmp_path, capsys):
    attempt = tmp_path / "attempt.py"
    attempt.write_text(SUBMISSIONS["to-float"], encoding="utf-8")
    out = tmp_path / "results.json"
    assert main(["grade", "--content", str(CONTENT), TASK, str(attempt), "--json", str(out),
                 "--lang", "zh"]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["gradable"] is True and data["score"] == 0.75
    assert (data["points"], data["max_points"]) == (3, 4)
    tests = data["tests"]
    assert [t["name"] for t in tests] == ["1. 每一行乘以对应的权重", "2. 不修改输入且保持 dtype",
                                          "3. 空的 batch 得到空结果"]
    assert [(t["points"], t["max_points"]) for t in tests] == [(2, 2), (0, 1), (1, 1)]
    assert [(t["score"], t["max_score"]) for t in tests] == [(2, 2), (0, 1), (1, 1)]
    assert "AssertionError" in tests[1]["output"]
    printed = " ".join(capsys.readouterr().out.split())
    assert "得分: 3/4 (75%)" in printed and "未通过" in printed


def test_exit_status_one_when_not_gradable_two_for_usage(tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text(SUBMISSIONS["syntax"], encoding="utf-8")
    assert main(["grade", "--content", str(CONTENT), TASK, str(bad)]) == 1
    assert "not gradable: not valid Python" in " ".join(capsys.readouterr().out.split())
    assert main(["grade", "--content", str(CONTENT), "no-such-task", str(bad)]) == 2
    assert "the tasks that can be graded: scale-rows" in capsys.readouterr().err
    assert main(["grade", "--content", str(CONTENT), TASK, str(tmp_path / "absent.py")]) == 2
    assert main(["grade", "--content", str(CONTENT), TASK, str(bad), "--sheet", "X"]) == 2


def test_a_folder_is_graded_in_one_run_with_a_json_each_and_a_summary(tmp_path, capsys):
    folder = tmp_path / "submissions"
    folder.mkdir()
    for name in ("right", "columns", "syntax"):
        (folder / f"{name}.py").write_text(SUBMISSIONS[name], encoding="utf-8")
    results = tmp_path / "results"
    assert main(["grade", "--content", str(CONTENT), TASK, str(folder), "--json",
                 str(results)]) == 1                       # one of them is not gradable
    scores = {p.stem: json.loads(p.read_text(encoding="utf-8"))["score"]
              for p in results.glob("*.json")}
    assert scores["right"] == 1.0 and scores["columns"] < 1.0 and scores["syntax"] == 0
    summary = " ".join(capsys.readouterr().out.split())
    assert "3 submission(s)" in summary and "not gradable" in summary


def test_a_grade_for_a_sheet_is_recorded_and_ledger_shows_what_fails(tmp_path, capsys):
    ledger = tmp_path / "ledger.jsonl"
    append_record(ledger, LedgerRecord(sheet="S1", date="2026-12-02", candidate="A12",
                                       questions=[TASK], command="ptbank sheet ..."))
    attempt = tmp_path / "a12.py"
    attempt.write_text(SUBMISSIONS["to-float"], encoding="utf-8")
    args = ["grade", "--content", str(CONTENT), TASK, str(attempt), "--ledger", str(ledger)]
    assert main([*args, "--sheet", "S1", "--candidate", "B7"]) == 2     # not B7's sheet
    assert "issued to A12, not B7" in capsys.readouterr().err
    assert main([*args, "--sheet", "S2", "--candidate", "A12"]) == 2    # no such sheet
    assert main([*args, "--sheet", "S1", "--candidate", "A12"]) == 0
    recorded = grades(read_ledger(ledger))
    assert len(recorded) == 1 and len(read_ledger(ledger)) == 2         # appended, not rewritten
    grade = recorded[0]
    assert (grade.grade, grade.sheet, grade.candidate) == (TASK, "S1", "A12")
    assert (grade.points, grade.max_points) == (3, 4)
    assert grade.checks == {"1": "passed", "2": "failed", "3": "passed"}
    assert grade.sha256 == __import__("hashlib").sha256(attempt.read_bytes()).hexdigest()
    capsys.readouterr()
    assert main(["ledger", "--content", str(CONTENT), "--ledger", str(ledger)]) == 0
    table = " ".join(capsys.readouterr().out.split())
    assert "grades per task" in table and "75%" in table and "2: 100%" in table


def test_practice_writes_a_starter_that_grades_as_not_yet_written(tmp_path, capsys):
    starter = tmp_path / "scale_rows.py"
    assert main(["practice", "--content", str(CONTENT), TASK, "--out", str(starter)]) == 0
    code = starter.read_text(encoding="utf-8")
    assert "def scale_rows(x, w):" in code and "NotImplementedError" in code
    assert "x * w[:, None]" not in code.split('"""', 2)[2]       # no solution past the question
    assert f"ptbank grade {TASK} {starter}" in capsys.readouterr().err
    assert main(["practice", "--content", str(CONTENT), TASK, "--out", str(starter)]) == 2
    assert main(["grade", "--content", str(CONTENT), TASK, str(starter), "--json",
                 str(tmp_path / "r.json")]) == 0
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert data["gradable"] and data["score"] == 0
    assert all("NotImplementedError: write scale_rows" in t["output"] for t in data["tests"])


def test_the_checks_print_their_points_and_the_site_shows_how_to_practise(tmp_path):
    for fmt in ("md", "html"):
        assert main(["build", "--content", str(CONTENT), "--format", fmt, "--level", "beginner",
                     "--lang", "zh,en", "--answers", "--draft", "--out", str(tmp_path)]) == 0
    key = (tmp_path / "ptbank-beginner-en-answers.md").read_text(encoding="utf-8")
    assert "1. every row is scaled by its weight *(2 pt)*" in key
    assert "3. an empty batch gives an empty result *(1 pt)*" in key
    assert f"`ptbank grade {TASK} FILE`" in key
    assert "每一行乘以对应的权重 *(2 分)*" in (
        tmp_path / "ptbank-beginner-zh-answers.md").read_text(encoding="utf-8")
    page = (tmp_path / "en" / "coding" / f"{TASK}.html").read_text(encoding="utf-8")
    assert '<p class="practice" lang="en">Practise: <code>ptbank practice scale-rows</code>' in page
    assert "<code>ptbank grade scale-rows scale_rows.py</code>" in page


def test_a_check_that_needs_a_name_another_check_sets_says_which_one_stopped_first():
    bank = load_bank(CONTENT)
    question = bank.question(TASK)
    test = question.snippets[0]
    code = test.code.replace(
        "assert scale_rows(torch.empty(0, 3), torch.empty(0)).shape == (0, 3)",
        "assert out.shape == (4, 3)                # `out` is set by check 1")
    changed = question.model_copy(update={"snippets": [test.model_copy(update={"code": code})]})
    bank = bank.model_copy(update={"questions": (changed,)})
    task = grading_task(changed)
    grade, = grade_submissions(bank, task, [Submission("raises.py",
                                                       SUBMISSIONS["raises"].encode())])
    assert outcomes(grade) == ["error", "error", "error"]
    assert "NameError: name 'out' is not defined" in grade.checks[2].message
    assert "(`out` is set by check 1, which stopped before it)" in grade.checks[2].message


def test_only_names_a_check_leaves_at_module_scope_count_as_borrowed():
    from ptbank.grade.task import _loaded, _stored

    first = ("x = torch.randn(3)\n"
             "def helper(t):\n    y = t * 2\n    return y + scale\n"
             "total = sum(v for v in x)\n")
    assert _stored(first) == {"x", "helper", "total"}        # not t, y or v: local names
    assert _loaded(first) == {"torch", "x", "scale", "sum"}  # scale: read inside helper
    indented = "    if True:\n        z = helper(x)\n"
    assert _stored(indented) == {"z"} and {"helper", "x"} <= _loaded(indented)
