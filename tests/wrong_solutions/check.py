"""Prove a coding task's hidden test has teeth: it passes the reference solution and rejects
every deliberately wrong one kept in tests/wrong_solutions/<question-id>/*.py.

A hidden test is the reference solution, a `# --- checks ---` line, then the checks. Each
solution is graded as `ptbank grade` grades a candidate's file (ptbank/grade: the real verifier,
its sandbox and limits, under the torch ptbank runs under): the reference must get full marks,
and each wrong solution must fail at least one numbered check on an assertion (outcome
`failed`), not only on a NameError or a crash, so that it is caught for being wrong.

A wrong solution is either a whole program (`NAME.py`) or, where it is the reference with a
mistake or two put in (a bug hunt's program with one bug left), an edit of the reference
(`NAME.edit`): one or more blocks

    <<<<<<< reference
    lines of the reference solution, exactly as they stand there (once)
    =======
    the lines that replace them
    >>>>>>> wrong

A block the reference no longer holds exactly once is an error naming the file, so an edit
cannot go stale silently.

    python tests/wrong_solutions/check.py [QUESTION-ID ...]     # default: every task here
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from ptbank.grade.results import Grade, Outcome
from ptbank.grade.run import Submission, grade_pairs
from ptbank.grade.command import find_task
from ptbank.loader import load_bank
from ptbank.models import CHECKS_MARKER, Question, Show, Snippet

HERE = Path(__file__).resolve().parent
CONTENT = HERE.parents[1] / "content"
SUFFIXES = (".py", ".edit")
_BLOCK = re.compile(r"^<<<<<<< reference\n(.*?)^=======\n(.*?)^>>>>>>> wrong$", re.M | re.S)


@dataclass(frozen=True)
class Verdict:
    """How one solution (the reference or a wrong one) was graded against a task's checks."""

    question_id: str
    solution: str
    """`reference`, or the wrong solution's file stem."""
    grade: Grade

    @property
    def as_expected(self) -> bool:
        if not self.grade.gradable:
            return False
        if self.solution == "reference":
            return self.grade.points == self.grade.max_points
        return any(c.outcome is Outcome.failed for c in self.grade.checks)

    @property
    def reason(self) -> str:
        """Which checks did not pass and how, or why the solution was not gradable."""
        if not self.grade.gradable:
            return f"not gradable: {self.grade.message}"
        return "; ".join(f"check {c.number} {c.outcome.value}: "
                         f"{c.message.splitlines()[-1] if c.message else ''}"
                         for c in self.grade.checks if c.outcome is not Outcome.passed)


def tasks_with_wrong_solutions(solutions: Path = HERE) -> list[str]:
    """Question ids that have a folder of wrong solutions in `solutions`."""
    return sorted(p.name for p in solutions.iterdir() if p.is_dir() and solution_files(p))


def solution_files(folder: Path) -> list[Path]:
    """The wrong solutions in a task's folder, whole programs and edits, by name."""
    return sorted((p for p in folder.iterdir() if p.suffix in SUFFIXES), key=lambda p: p.stem)


def wrong_code(path: Path, reference: str) -> str:
    """The code of the wrong solution at `path`: the file itself, or the reference solution
    with the edit's blocks applied in turn."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        return text
    blocks = _BLOCK.findall(text)
    if not blocks:
        raise ValueError(f"{path}: no `<<<<<<< reference` ... `>>>>>>> wrong` block")
    code = reference
    for old, new in blocks:
        if code.count(old) != 1:
            raise ValueError(f"{path}: the reference solution holds this block "
                             f"{code.count(old)} times, not once:\n{old}")
        code = code.replace(old, new)
    return code


def hidden_test(question: Question) -> Snippet:
    """The question's hidden snippet that is split into solution and checks."""
    for snippet in question.snippets:
        if snippet.show is Show.hidden and snippet.solution_and_checks:
            return snippet
    raise LookupError(f"{question.id}: no hidden snippet has a `{CHECKS_MARKER}` line")


def judge(question_ids: list[str], content: Path = CONTENT, solutions: Path = HERE,
          jobs: int | None = None, progress: bool = False) -> list[Verdict]:
    """Grade each task's reference solution and each of its wrong ones, with `ptbank grade`'s
    machinery, in one verification run; a parametrized task as `ptbank grade` grades it, with
    its checks filled in for variant 0."""
    bank = load_bank(content)
    pairs, names = [], []
    for question_id in question_ids:
        task = find_task(bank, question_id)  # a parametrized task: its canonical variant
        files = solution_files(solutions / question_id)
        if not files:
            raise LookupError(f"{question_id}: no wrong solutions in {solutions / question_id}")
        pairs.append((task, Submission("reference", task.reference.encode())))
        names.append((question_id, "reference"))
        for path in files:
            pairs.append((task, Submission(path.name, wrong_code(path, task.reference).encode())))
            names.append((question_id, path.stem))
    grades = grade_pairs(bank, pairs, jobs=jobs, progress=progress)
    return [Verdict(qid, name, grade) for (qid, name), grade in zip(names, grades)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ids", nargs="*", help="question ids (default: every task here)")
    parser.add_argument("--jobs", "-j", type=int, default=None)
    args = parser.parse_args(argv)
    verdicts = judge(args.ids or tasks_with_wrong_solutions(), jobs=args.jobs, progress=True)
    for v in verdicts:
        mark = "ok  " if v.as_expected else "BAD "
        expected = ("gets full marks" if v.solution == "reference"
                    else "fails a check's assertion")
        g = v.grade
        score = f"{g.points:g}/{g.max_points:g}" if g.gradable else "not gradable"
        print(f"{mark}{v.question_id}: {v.solution} {expected}? {score}"
              + (f" — {v.reason[:200]}" if v.reason else ""))
    return 0 if all(v.as_expected for v in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
