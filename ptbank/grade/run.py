"""Grade submissions: check that each can be graded, run each gradable one as one more snippet
of the verifier (its runner, its sandbox, its limits), and read each check's outcome back.

Several submissions run side by side, one sandboxed child each, exactly as `verify` runs
snippets; no verdict is cached, and none is run twice.
"""

from __future__ import annotations

import ast
import hashlib
import io
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path

from ..models import Bank, Show, Snippet
from ..verify.results import SnippetResult, Status
from .checker import MARKER
from .harness import graded_program
from .results import CheckOutcome, Grade, Outcome
from .task import GradingTask, borrowed_names

SOURCE_LIMIT = 1 << 20
"""Bytes a submission may have: a source file, not a data dump."""
OUTPUT_LIMIT = 20_000
"""Characters of what a submission printed that a grade keeps."""
_MEMORY = re.compile(r"memory", re.I)
_UNDEFINED = re.compile(r"NameError: name '(\w+)' is not defined")


@dataclass(frozen=True)
class Submission:
    name: str
    """As named on the command line (what reports print)."""
    source: bytes


def read_submission(path: Path) -> Submission:
    return Submission(str(path), path.read_bytes())


def ungradable_because(task: GradingTask, submission: Submission) -> str:
    """Why the submission cannot be graded (empty when it can): not UTF-8 text, too large,
    not Python, or without a name the checks call."""
    if len(submission.source) > SOURCE_LIMIT:
        return f"the file has {len(submission.source)} bytes; a submission may have at most " \
               f"{SOURCE_LIMIT}"
    try:
        text = submission.source.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"the file is not UTF-8 text (byte {exc.start})"
    if not text.strip():
        return "the file is empty"
    try:
        tree = ast.parse(text, filename=submission.name)
    except SyntaxError as exc:
        where = f"line {exc.lineno}" + (f", column {exc.offset}" if exc.offset else "")
        line = (exc.text or "").rstrip()
        return f"not valid Python: {exc.msg} ({where})" + (f"\n    {line}" if line else "")
    defined = _top_level_names(tree)
    missing = [name for name in task.required if name not in defined]
    if missing:
        return (f"the task's checks call {_listed(task.required)}; the file does not define "
                f"{_listed(missing)} at its top level")
    return ""


def grade_submissions(bank: Bank, task: GradingTask, submissions: list[Submission], *,
                      jobs: int | None = None, progress: bool = False, head_start=None,
                      sandbox: bool = True) -> list[Grade]:
    """A grade for each submission, in the order given."""
    return grade_pairs(bank, [(task, s) for s in submissions], jobs=jobs, progress=progress,
                       head_start=head_start, sandbox=sandbox)


def grade_pairs(bank: Bank, pairs: list[tuple[GradingTask, Submission]], *,
                jobs: int | None = None, progress: bool = False, head_start=None,
                sandbox: bool = True) -> list[Grade]:
    """A grade for each (task, submission), in the order given, from one verification run."""
    from ..verify import verify_bank

    why = [ungradable_because(task, s) for task, s in pairs]
    by_task: dict[str, list[Snippet]] = {}
    for index, (task, submission) in enumerate(pairs):
        if not why[index]:
            by_task.setdefault(task.id, []).append(Snippet(
                id=f"submission-{index}", code=graded_program(
                    task, submission.source.decode("utf-8")), show=Show.hidden,
                timeout=task.test.timeout, memory_mb=task.test.memory_mb,
                requires=task.test.requires))
    results: dict[int, SnippetResult] = {}
    torch = ""
    if by_task:
        tasks = {task.id: task for task, _ in pairs}
        # the submissions alone: a parametrized task's variant is filled in already
        questions = tuple(tasks[qid].question.model_copy(update={
            "snippets": snippets, "params": {}, "answers": {}, "solve": None})
            for qid, snippets in by_task.items())
        report = verify_bank(bank.model_copy(update={"questions": questions}), jobs=jobs,
                             use_cache=False, progress=progress, head_start=head_start,
                             sandbox=sandbox, keep_output=True, retry=False)
        torch = report.torch_version
        results = {int(r.snippet_id.rsplit("-", 1)[1]): r for r in report.results}
    grades = []
    for index, (task, submission) in enumerate(pairs):
        digest = hashlib.sha256(submission.source).hexdigest()
        if why[index]:
            grades.append(Grade(task.id, submission.name, False, why[index], sha256=digest))
        else:
            grades.append(_read_grade(task, submission.name, results[index], digest, torch))
    return grades


def _read_grade(task: GradingTask, name: str, result: SnippetResult, digest: str,
                torch: str) -> Grade:
    """The grade a graded program's run gives: each check's outcome from its marker line,
    and for checks without one, what stopped the run."""
    if result.status is Status.skipped:
        return Grade(task.id, name, False, f"cannot be graded on this machine: {result.reason}",
                     sha256=digest, torch=torch)
    seen, printed = _parse_output(result.output)
    loading = seen.pop(0, None)
    checks, stopped = [], ""
    for check in task.checks:
        got = seen.get(check.number)
        if got is not None:
            known = got.get("outcome") in Outcome._value2member_map_
            outcome = Outcome(got["outcome"]) if known else Outcome.error
            message = str(got.get("message", ""))
            if outcome is Outcome.timeout:
                message = f"{message}\n({_limit(task)})"
                stopped = message
        elif stopped or loading is not None:
            outcome, message = Outcome.not_run, ""
        else:
            outcome, message = _why_not_reached(task, result)
            stopped = message
        checks.append(CheckOutcome(check.number, check.description, check.points, outcome,
                                   message, got.get("seconds") if got else None))
    checks = _with_borrowed_names(task, checks)
    message = stopped
    if loading is not None:
        message = "the submission raised while it was loaded, before any check ran:\n" + \
            str(loading.get("message", ""))
    return Grade(task.id, name, True, message, tuple(checks), printed[:OUTPUT_LIMIT], digest,
                 torch, result.duration)


def _with_borrowed_names(task: GradingTask, checks: list[CheckOutcome]) -> list[CheckOutcome]:
    """A check that failed for a name another check sets says so: that one stopped first."""
    owners = {(number, name): owner for number, name, owner in borrowed_names(task)}
    out = []
    for check in checks:
        missing = _UNDEFINED.search(check.message) if check.outcome is Outcome.error else None
        owner = missing and owners.get((check.number, missing.group(1)))
        if owner:
            check = replace(check, message=f"{check.message}\n(`{missing.group(1)}` is set by "
                                          f"check {owner}, which stopped before it)")
        out.append(check)
    return out


def _why_not_reached(task: GradingTask, result: SnippetResult) -> tuple[Outcome, str]:
    """The outcome of the first check that reported nothing: the one the run ended in."""
    reason = result.reason.strip()
    if result.status is Status.timeout:
        return Outcome.timeout, f"still running when the task's time was up ({_limit(task)})"
    if result.status is Status.crashed:
        return (Outcome.memory if _MEMORY.search(reason) else Outcome.crashed), reason
    if result.status in (Status.failed, Status.error):  # outside every numbered section
        return Outcome.not_run, f"the checks' set-up failed, so no check ran: {reason}"
    return Outcome.crashed, ("the check reported nothing (the submission may have closed or "
                             "flooded its output)")


def _limit(task: GradingTask) -> str:
    return f"the task's limit: {task.test.timeout:g} s for the whole run"


def _parse_output(stdout: str) -> tuple[dict[int, dict], str]:
    """Check number → its reported outcome (the last report wins), and everything else the
    program printed: the submission's own output."""
    seen, printed = {}, []
    for line in io.StringIO(stdout).readlines():  # \n only: a form feed is no line end
        if line.startswith(MARKER):
            try:
                data = json.loads(line[len(MARKER):])
                seen[int(data["check"])] = data
            except (ValueError, KeyError, TypeError):
                printed.append(line)
        else:
            printed.append(line)
    return seen, "".join(printed)


def _top_level_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.If, ast.Try, ast.With)) and not _main_guard(node):
            inner = ast.Module(body=[n for n in ast.walk(node) if isinstance(n, ast.stmt)
                                     and n is not node], type_ignores=[])
            names |= _top_level_names(inner)
    return names


def _main_guard(node: ast.stmt) -> bool:
    """`if __name__ == "__main__":`, whose body does not run in a submission (a module)."""
    return isinstance(node, ast.If) and "__name__" in ast.unparse(node.test)


def _listed(names) -> str:
    return ", ".join(f"`{n}`" for n in names)
