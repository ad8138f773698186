"""Every coding task's hidden test has teeth: it passes the reference solution and rejects, by
an assertion, each deliberately wrong solution in tests/wrong_solutions/<question-id>/."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptbank.loader import load_bank
from ptbank.models import Kind
from wrong_solutions.check import (CONTENT, HERE, hidden_test, judge, solution_files,
                                   tasks_with_wrong_solutions, wrong_code)

FIXTURE = Path(__file__).parent / "fixtures" / "wrong-solutions"


@pytest.fixture(scope="module")
def verdicts():
    """One verification run for every task's reference and wrong solutions (one zygote)."""
    return {(v.question_id, v.solution): v for v in judge(tasks_with_wrong_solutions())}


def _solutions() -> list[tuple[str, str]]:
    return [(qid, name) for qid in tasks_with_wrong_solutions()
            for name in ["reference", *(p.stem for p in solution_files(HERE / qid))]]


@pytest.mark.parametrize(("question_id", "solution"), _solutions())
def test_the_hidden_test_passes_the_reference_and_rejects_each_wrong_solution(
        verdicts, question_id, solution):
    verdict = verdicts[(question_id, solution)]
    grade = verdict.grade
    assert verdict.as_expected, f"{question_id}: {solution} -> {verdict.reason[:500]}"
    if solution == "reference":
        assert grade.score == 1.0 and grade.failed_checks() == []
    else:  # less than full marks, and the check that caught it is named with its assertion
        assert grade.score < 1.0
        caught = [c for c in grade.checks if c.outcome.value == "failed"]
        assert caught and all("AssertionError" in c.message for c in caught)
        assert all(c.description["en"] and c.description["zh"] for c in caught)


def test_every_task_with_split_checks_has_wrong_solutions_and_every_folder_a_task():
    bank = load_bank(CONTENT)
    split = {q.id for q in bank.questions if q.kind is Kind.coding
             and any(s.solution_and_checks for s in q.snippets)}
    folders = set(tasks_with_wrong_solutions())
    assert split - folders == set(), "coding tasks whose checks no wrong solution challenges"
    assert folders - split == set(), "wrong solutions for no task with a `# --- checks ---` line"
    for qid in folders:
        hidden_test(bank.question(qid))


def test_a_toothless_check_and_a_wrong_name_are_both_caught_by_the_harness():
    verdicts = {v.solution: v for v in judge(["relu-task"], content=FIXTURE / "content",
                                             solutions=FIXTURE / "solutions")}
    assert verdicts["reference"].as_expected
    assert verdicts["identity"].as_expected                       # check 2 catches it
    assert verdicts["absolute-value"].as_expected                 # an edit of the reference
    assert verdicts["identity"].grade.failed_checks() == [2]
    slipped = verdicts["wrong-below-minus-five"]                  # the checks are too weak
    assert slipped.grade.score == 1.0 and not slipped.as_expected
    misnamed = verdicts["misnamed"]                               # not gradable: no `relu`
    assert not misnamed.grade.gradable and "`relu`" in misnamed.reason
    assert not misnamed.as_expected


def test_an_edit_that_no_longer_fits_the_reference_names_its_file(tmp_path):
    edit = tmp_path / "stale.edit"
    edit.write_text("<<<<<<< reference\n    return x.clamp(min=0)\n=======\n    return x\n"
                    ">>>>>>> wrong\n", encoding="utf-8")
    assert wrong_code(edit, "def relu(x):\n    return x.clamp(min=0)\n") == \
        "def relu(x):\n    return x\n"
    with pytest.raises(ValueError, match=r"stale\.edit: the reference solution holds this "
                                         r"block 0 times"):
        wrong_code(edit, "def relu(x):\n    return torch.relu(x)\n")
    edit.write_text("return x\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no `<<<<<<< reference`"):
        wrong_code(edit, "def relu(x):\n    return x\n")
