"""A starter file for practising a coding task: what the checks call, with no solution in it.

The question (as a docstring), the reference solution's imports, and for each name the checks
call: a function's signature and docstring with a body that raises NotImplementedError; a
class with its methods so stubbed; a constant as the reference sets it. A task that hands the
candidate code to fix (a bug hunt) starts from that code instead, as the question prints it.
"""

from __future__ import annotations

import ast
import copy

from ..models import Show
from .task import GradingTask, defined_names


def starter_code(task: GradingTask, lang: str) -> str:
    text = task.question.text(lang)
    grade_line = {"zh": f"写完后评分：ptbank grade {task.id} 本文件",
                  "en": f"Grade it with: ptbank grade {task.id} THIS_FILE"}[lang]
    head = (f'"""{_docstring_safe(text.title)}\n\n{_docstring_safe(text.question.strip())}\n\n'
            f'{grade_line}\n"""\n\n')
    handed = _handed_out(task)
    if handed is not None:
        return head + handed
    reference = ast.parse(task.reference)
    body = []
    for node in reference.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            body.append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.name in task.required:
            body.append(_stub_function(node))
        elif isinstance(node, ast.ClassDef) and node.name in task.required:
            body.append(_stub_class(node))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and \
                set(defined_names(node)) & set(task.required):
            body.append(node)
    code = _unparse(body)
    try_it = {"zh": "# 在这里试运行；评分时不会执行这一段",
              "en": "# try it out here; grading does not run this part"}[lang]
    return f'{head}{code}\n\n\nif __name__ == "__main__":\n    {try_it}\n    pass\n'


def _handed_out(task: GradingTask) -> str | None:
    """The code the question hands out to be fixed, when it defines what the checks call."""
    for snippet in task.question.snippets:
        if snippet.show is Show.question:
            try:
                defined = {n.name for n in ast.parse(snippet.code).body if hasattr(n, "name")}
            except SyntaxError:
                continue
            if set(task.required) <= defined | _constants(snippet.code):
                return snippet.code
    return None


def _stub_function(node: ast.FunctionDef) -> ast.FunctionDef:
    stub = copy.deepcopy(node)
    stub.body = [*_docstring(node), ast.Raise(exc=ast.Call(
        func=ast.Name("NotImplementedError", ast.Load()),
        args=[ast.Constant(f"write {node.name}")], keywords=[]), cause=None)]
    return stub


def _stub_class(node: ast.ClassDef) -> ast.ClassDef:
    stub = copy.deepcopy(node)
    methods = [_stub_function(n) for n in node.body
               if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    stub.body = [*_docstring(node), *methods] or [ast.Pass()]
    return stub


def _docstring(node) -> list[ast.stmt]:
    first = node.body[0] if node.body else None
    if isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant) \
            and isinstance(first.value.value, str):
        return [first]
    return []


def _constants(code: str) -> set[str]:
    return {name for node in ast.parse(code).body
            if isinstance(node, (ast.Assign, ast.AnnAssign)) for name in defined_names(node)}


def _unparse(body: list[ast.stmt]) -> str:
    """The statements as source, imports together, two blank lines around each definition."""
    parts, previous = [], None
    for node in body:
        text = ast.unparse(ast.fix_missing_locations(node))
        is_import = isinstance(node, (ast.Import, ast.ImportFrom))
        if previous is not None:
            parts.append("\n" if is_import and previous else "\n\n\n")
        parts.append(text)
        previous = is_import
    return "".join(parts)


def _docstring_safe(text: str) -> str:
    """`text` inside a triple-quoted docstring: backslashes kept, inner docstrings as '''."""
    return text.replace("\\", "\\\\").replace('"""', "'''")
