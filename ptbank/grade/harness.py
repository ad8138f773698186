"""The program that grades one submission: the candidate's code loaded as a module, then the
task's checks, each numbered section wrapped so that it is scored on its own.

It is an ordinary snippet to the verifier, so it runs under the verifier's runner, in its
sandbox, with the task's hidden test's timeout and memory budget.
"""

from __future__ import annotations

import ast
import io
import tokenize

from .task import GradingTask

INDENT = "    "


def graded_program(task: GradingTask, source: str) -> str:
    """The code of the snippet that grades `source` against `task`'s checks.

    First the reference solution's imports (the checks may lean on them), then the
    candidate's code as the module `submission` and the names the checks need from it, then
    the shared set-up, then each numbered section under `with _ptbank_check(N):`.
    """
    imports = "".join(ast.get_source_segment(task.reference, node) + "\n"
                      for node in ast.parse(task.reference).body
                      if isinstance(node, (ast.Import, ast.ImportFrom))
                      and getattr(node, "module", "") != "__future__")
    names = ", ".join(task.required)
    head = ("from ptbank.grade.checker import check as _ptbank_check, load_submission\n"
            + imports
            + f"load_submission({source!r})\n"
            + (f"from submission import {names}\n" if names else ""))
    return head + _wrap_sections(task)


def _wrap_sections(task: GradingTask) -> str:
    """The checks with each numbered section indented under its `with`, at the section's own
    indentation (a section may sit inside an `if __name__ == "__main__":`).

    A section ends where the next begins, or at the first line indented less than its
    comment. Lines inside a multi-line string are left as they are, so its value does not
    change.
    """
    checks = task.setup + "".join(c.code for c in task.checks)
    lines = checks.splitlines(keepends=True)
    in_string = _lines_inside_strings(checks)
    starts = {c.line - 1: c.number for c in task.checks}
    out, depth = [], None
    for index, line in enumerate(lines):
        if index in starts:
            depth = len(line) - len(line.lstrip())
            out.append(f"{line[:depth]}with _ptbank_check({starts[index]}):\n")
        elif depth is not None and line.strip() and index not in in_string and (
                len(line) - len(line.lstrip()) < depth):
            depth = None
        if depth is not None and index not in in_string and line.strip():
            line = line[:depth] + INDENT + line[depth:]
        out.append(line)
    return "".join(out)


def _lines_inside_strings(source: str) -> set[int]:
    """0-based lines that continue a string begun on an earlier line."""
    inside = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.STRING and token.end[0] > token.start[0]:
                inside.update(range(token.start[0], token.end[0]))  # 1-based start + 1 ...
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return inside
