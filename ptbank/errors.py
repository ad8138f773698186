"""Domain errors: what users see instead of tracebacks, and the exit status each one means."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

EXIT_FAILED = 1
"""Verification (or a check the user asked for) failed."""
EXIT_BAD_INPUT = 2
"""The content, a template or the command line is wrong."""


class Severity(str, Enum):
    error = "error"
    warning = "warning"


@dataclass(frozen=True, order=True)
class Problem:
    """One finding about the content, located as precisely as we can."""

    path: str
    line: int
    field: str
    message: str
    severity: Severity = Severity.error

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}"
        what = f"{self.field}: {self.message}" if self.field else self.message
        tag = "" if self.severity is Severity.error else "warning: "
        return f"{where}: {tag}{what}"


class PtbankError(Exception):
    """An error the user can fix; printed as `ptbank: <message>` with no traceback."""

    exit_status = EXIT_BAD_INPUT


class ContentError(PtbankError):
    """The content folder has errors; carries every problem found in one run."""

    def __init__(self, problems: list[Problem]):
        self.problems = sorted(problems)
        super().__init__(f"{len(self.problems)} problem(s) in the content")


class VerificationRequired(PtbankError):
    """A build was asked for content that is not verified and passing under the current torch."""

    exit_status = EXIT_FAILED
