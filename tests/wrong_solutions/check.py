"""Prove a coding task's hidden test has teeth: it passes the reference solution and rejects
every deliberately wrong one kept in tests/wrong_solutions/<question-id>/*.py.

A hidden test is the reference solution, a `# --- checks ---` line, then the checks. Each wrong
solution replaces everything above that line; the checks must then fail on an assertion (status
`failed`), not on a NameError or a crash, so that a wrong solution is caught for being wrong.
Everything runs through the real verifier (sandbox, limits) under the torch ptbank runs under.

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
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ptbank.loader import load_bank
from ptbank.models import CHECKS_MARKER, Bank, Question, Show, Snippet
from ptbank.verify import Status, verify_bank

HERE = Path(__file__).resolve().parent
CONTENT = HERE.parents[1] / "content"
WRONG_PREFIX = "wrong-"
SUFFIXES = (".py", ".edit")
_BLOCK = re.compile(r"^<<<<<<< reference\n(.*?)^=======\n(.*?)^>>>>>>> wrong$", re.M | re.S)


@dataclass(frozen=True)
class Verdict:
    """How one solution (the reference or a wrong one) fared against a task's checks."""

    question_id: str
    solution: str
    """`reference`, or the wrong solution's file stem."""
    status: Status
    reason: str

    @property
    def as_expected(self) -> bool:
        if self.solution == "reference":
            return self.status is Status.passed
        return self.status is Status.failed and "AssertionError" in self.reason


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


def with_wrong_solutions(bank: Bank, question_id: str,
                         solutions: Path = HERE) -> tuple[Bank, list[str]]:
    """The bank with one extra hidden snippet per wrong solution of `question_id`, and the
    `question/snippet` names to run: the hidden test first, then each wrong solution."""
    question = bank.question(question_id)
    test = hidden_test(question)
    reference, checks = test.solution_and_checks
    extra = [test.model_copy(update={
        "id": f"{WRONG_PREFIX}{path.stem}",
        "code": f"{wrong_code(path, reference).rstrip()}\n\n{CHECKS_MARKER}\n{checks}",
    }) for path in solution_files(solutions / question_id)]
    if not extra:
        raise LookupError(f"{question_id}: no wrong solutions in {solutions / question_id}")
    changed = question.model_copy(update={"snippets": [*question.snippets, *extra]})
    questions = tuple(changed if q.id == question_id else q for q in bank.questions)
    names = [f"{question_id}/{s.id}" for s in (test, *extra)]
    return bank.model_copy(update={"questions": questions}), names


def judge(question_ids: list[str], content: Path = CONTENT, solutions: Path = HERE,
          jobs: int | None = None, progress: bool = False) -> list[Verdict]:
    """Run each task's hidden test with its reference solution and with each wrong one."""
    bank = load_bank(content)
    names: list[str] = []
    for question_id in question_ids:
        bank, more = with_wrong_solutions(bank, question_id, solutions)
        names += more
    with tempfile.TemporaryDirectory(prefix="ptbank-wrong-") as cache:
        report = verify_bank(bank, only=names, use_cache=False, cache_dir=Path(cache),
                             jobs=jobs, progress=progress)
    return [Verdict(r.question_id, r.snippet_id.removeprefix(WRONG_PREFIX)
                    if r.snippet_id.startswith(WRONG_PREFIX) else "reference",
                    r.status, r.reason) for r in report.results]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ids", nargs="*", help="question ids (default: every task here)")
    parser.add_argument("--jobs", "-j", type=int, default=None)
    args = parser.parse_args(argv)
    verdicts = judge(args.ids or tasks_with_wrong_solutions(), jobs=args.jobs, progress=True)
    for v in verdicts:
        mark = "ok  " if v.as_expected else "BAD "
        expected = "passes" if v.solution == "reference" else "is rejected by an assertion"
        print(f"{mark}{v.question_id}: {v.solution} {expected}? {v.status.value}"
              + (f" — {v.reason.splitlines()[0][:150]}" if v.reason else ""))
    return 0 if all(v.as_expected for v in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
