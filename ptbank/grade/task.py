"""A coding task as a grader sees it: the reference solution, the checks in numbered sections,
what each is worth, and the names a submission must define.

Read from a question's hidden test split at `# --- checks ---` (models.CHECKS_MARKER): what
precedes the marker is the reference solution, which a submission replaces; what follows is
shared set-up, then sections that each begin with a `# N. ...` comment line.
"""

from __future__ import annotations

import ast
import re
import symtable
import textwrap
from dataclasses import dataclass

from ..errors import PtbankError
from ..models import CHECKS_MARKER, Kind, Question, Show, Snippet

NUMBERED = re.compile(r"^\s*# (\d+)\. ")
"""The comment line that opens a numbered check (the same rule lint applies)."""


@dataclass(frozen=True)
class Check:
    """One numbered section of a task's checks."""

    number: int
    code: str
    line: int
    """1-based line of its `# N.` comment within the checks (after the marker)."""
    description: dict[str, str]
    """Language → what it checks, as the question's `checks` say."""
    points: float

    @property
    def name(self) -> str:
        return f"check {self.number}"


@dataclass(frozen=True)
class GradingTask:
    """Everything needed to grade a submission for one coding task."""

    question: Question
    test: Snippet
    """The hidden test the checks come from (its timeout and memory apply to a submission)."""
    reference: str
    setup: str
    """The checks' shared part before `# 1.`: imports, fixtures, helpers."""
    checks: tuple[Check, ...]
    required: tuple[str, ...]
    """Names the checks use that the reference solution defines at its top level: what a
    submission must define too."""

    @property
    def id(self) -> str:
        return self.question.id

    @property
    def max_points(self) -> float:
        return sum(c.points for c in self.checks)


def gradable_tasks(questions) -> list[Question]:
    """The coding tasks whose hidden test is split into numbered checks, in bank order."""
    return [q for q in questions if q.kind is Kind.coding and _split_test(q) is not None]


def grading_task(question: Question) -> GradingTask:
    """The task of `question`; PtbankError when it has no numbered checks to grade against."""
    test = _split_test(question)
    if test is None:
        raise PtbankError(f"{question.id} has no hidden test split at `{CHECKS_MARKER}`: "
                          "it cannot be graded check by check")
    reference, after = test.solution_and_checks
    lines = after.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if NUMBERED.match(line)]
    if not starts:
        raise PtbankError(f"{question.id}: its checks are not numbered `# 1.`, `# 2.`, ...")
    points = question.check_points or [1] * len(starts)
    if len(points) != len(starts):
        raise PtbankError(f"{question.id}: check_points gives {len(points)} value(s) for "
                          f"{len(starts)} checks")
    checks = []
    for index, start in enumerate(starts):
        end = starts[index + 1] if index + 1 < len(starts) else len(lines)
        checks.append(Check(
            number=index + 1, code="".join(lines[start:end]), line=start + 1,
            description={lang: _nth(question.text(lang).checks, index) for lang in ("zh", "en")},
            points=float(points[index])))
    setup = "".join(lines[:starts[0]])
    return GradingTask(question, test, reference, setup, tuple(checks),
                       required_names(reference, after))


def required_names(reference: str, checks: str) -> tuple[str, ...]:
    """Top-level names of the reference that the checks read, in the reference's order.

    Imports are left out: a submission brings its own.
    """
    defined = [name for node in ast.parse(reference).body for name in defined_names(node)]
    used = {node.id for node in ast.walk(ast.parse(checks))
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    return tuple(dict.fromkeys(name for name in defined if name in used))


def defined_names(node: ast.stmt) -> list[str]:
    """The names a top-level statement defines: a def, a class, or assignment targets."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    targets = (node.targets if isinstance(node, ast.Assign)
               else [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else [])
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]


def _split_test(question: Question) -> Snippet | None:
    for snippet in question.snippets:
        if snippet.show is Show.hidden and snippet.solution_and_checks:
            return snippet
    return None


def _nth(items: list[str], index: int) -> str:
    return items[index] if index < len(items) else ""


def borrowed_names(task: GradingTask) -> list[tuple[int, str, int]]:
    """(check, name, the other check that defines it) for each name a numbered check reads
    that only another check defines: when that other check fails, this one fails with it, so
    the name belongs in the set-up before `# 1.`."""
    shared = _stored(task.reference) | _stored(task.setup)
    stored = {c.number: _stored(c.code) for c in task.checks}
    found = []
    for c in task.checks:
        for name in sorted(_loaded(c.code) - stored[c.number] - shared):
            owner = next((n for n, names in stored.items() if name in names), None)
            if owner is not None:
                found.append((c.number, name, owner))
    return found


def _symbols(code: str) -> symtable.SymbolTable | None:
    try:
        return symtable.symtable(textwrap.dedent(code), "<checks>", "exec")
    except SyntaxError:
        return None


def _stored(code: str) -> set[str]:
    """Names `code` binds at module scope: what it leaves for code after it to read."""
    table = _symbols(code)
    return {s.get_name() for s in table.get_symbols()
            if s.is_assigned() or s.is_imported() or s.is_namespace()} if table else set()


def _loaded(code: str) -> set[str]:
    """Module-scope names `code` reads, at the top level or from inside its functions."""
    table = _symbols(code)
    if table is None:
        return set()
    names = {s.get_name() for s in table.get_symbols() if s.is_referenced()}
    pending = list(table.get_children())
    while pending:
        child = pending.pop()
        names |= {s.get_name() for s in child.get_symbols()
                  if s.is_referenced() and s.is_global()}
        pending += child.get_children()
    return names
