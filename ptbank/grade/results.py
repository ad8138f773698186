"""What grading produces: one outcome per numbered check and a grade per submission.

The JSON is the shape of PrairieLearn's external grader (`gradable`, `score` in [0, 1],
`tests: [{name, points, max_points, output, message}]`), with each test's `score` and
`max_score` as Gradescope's autograder reads them, so either can take it as it is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum


class Outcome(str, Enum):
    """How one check ended."""

    passed = "passed"
    failed = "failed"
    """An assertion of the check failed: the submission gives a wrong result."""
    error = "error"
    """The check raised something else (the submission's own exception, a missing method)."""
    memory = "memory"
    """The submission ran out of its memory budget during the check."""
    timeout = "timeout"
    """Still running when the task's time was up; the checks after it did not run."""
    crashed = "crashed"
    """The process died during the check (a signal, os._exit); the checks after it did not run."""
    not_run = "not_run"
    """Never reached: the submission failed to load, or an earlier check timed out or crashed."""


OUTCOME_WORDS = {
    Outcome.passed: {"en": "passed", "zh": "通过"},
    Outcome.failed: {"en": "failed", "zh": "未通过"},
    Outcome.error: {"en": "error", "zh": "出错"},
    Outcome.memory: {"en": "out of memory", "zh": "内存超限"},
    Outcome.timeout: {"en": "timed out", "zh": "超时"},
    Outcome.crashed: {"en": "crashed", "zh": "崩溃"},
    Outcome.not_run: {"en": "not run", "zh": "未运行"},
}


@dataclass(frozen=True)
class CheckOutcome:
    number: int
    description: dict[str, str]
    max_points: float
    outcome: Outcome
    message: str = ""
    """On anything but a pass: the decisive line, the exception, the values it compared."""
    seconds: float | None = None

    @property
    def points(self) -> float:
        return self.max_points if self.outcome is Outcome.passed else 0.0


@dataclass(frozen=True)
class Grade:
    """One submission, graded (or found ungradable)."""

    task: str
    submission: str
    """The file as it was named on the command line."""
    gradable: bool
    message: str = ""
    """Why it could not be graded, or what stopped the checks early; empty when all ran."""
    checks: tuple[CheckOutcome, ...] = ()
    output: str = ""
    """What the submission printed (its head)."""
    sha256: str = ""
    torch: str = ""
    seconds: float = 0.0
    """Wall-clock seconds the graded program ran."""

    @property
    def points(self) -> float:
        return sum(c.points for c in self.checks)

    @property
    def max_points(self) -> float:
        return sum(c.max_points for c in self.checks)

    @property
    def score(self) -> float:
        return self.points / self.max_points if self.gradable and self.max_points else 0.0

    def failed_checks(self) -> list[int]:
        return [c.number for c in self.checks if c.outcome is not Outcome.passed]

    def to_json(self, lang: str = "en") -> dict:
        """PrairieLearn's results.json, Gradescope's per-test fields beside it."""
        tests = [{
            "name": f"{c.number}. {c.description.get(lang) or c.description.get('en', '')}",
            "number": c.number,
            "points": c.points, "max_points": c.max_points,
            "score": c.points, "max_score": c.max_points,
            "outcome": c.outcome.value,
            "status": "passed" if c.outcome is Outcome.passed else "failed",
            "message": c.message, "output": c.message,
            "description": c.description,
        } for c in self.checks]
        return {"task": self.task, "submission": self.submission, "gradable": self.gradable,
                "score": round(self.score, 6), "points": self.points,
                "max_points": self.max_points, "message": self.message,
                "output": self.output, "tests": tests, "sha256": self.sha256,
                "torch": self.torch, "seconds": round(self.seconds, 3)}


def dumps(grade: Grade, lang: str = "en") -> str:
    return json.dumps(grade.to_json(lang), ensure_ascii=False, indent=2) + "\n"


def as_record_checks(grade: Grade) -> dict[str, str]:
    """Check number → outcome, for the ledger."""
    return {str(c.number): c.outcome.value for c in grade.checks}
