"""The grading side that runs inside the sandbox, in the snippet's own process.

The program a submission is graded by (harness.py writes it) starts with `load_submission`,
which makes the candidate's code the module `submission` (so their tracebacks name
`submission.py` and their own line numbers, and code under their `if __name__ == "__main__":`
does not run), then runs the task's checks with each numbered section inside `with
check(N):`. A section that raises is recorded and the next one still runs.

Each check's outcome leaves as one line on a duplicate of the process's stdout, made before
any of the candidate's code ran, behind a marker the parent looks for (run.py). Only the main
process of the program reports: processes a check spawns re-run the program's top level as
`__mp_main__`, and say nothing.

This is not a fence against the candidate: their code runs in the same process as the checks
and could change them. The sandbox keeps the machine and every other submission safe from it;
an interviewer still reads the code.

Only the standard library is imported here; torch only to describe a failed assertion.
"""

from __future__ import annotations

import ast
import io
import json
import linecache
import os
import re
import signal
import sys
import time
import traceback
import types

from ..verify.child import STACK_SIGNAL

MARKER = "::ptbank-check:: "
"""Starts every line the parent reads as a check's outcome."""
SUBMISSION = "submission"
MESSAGE_LIMIT = 2000
_MEMORY = re.compile(r"can't allocate memory|out of memory|Cannot allocate memory", re.I)
_report_fd: int | None = None
_running: check | None = None


def load_submission(source: str) -> types.ModuleType:
    """Run the candidate's code as the module `submission` and return it."""
    global _report_fd
    if _report_fd is None:
        _report_fd = os.dup(1)
        os.set_inheritable(_report_fd, False)
    filename = f"{SUBMISSION}.py"
    module = types.ModuleType(SUBMISSION)
    module.__file__ = os.path.join(os.getcwd(), filename)
    linecache.cache[module.__file__] = (len(source), None, io.StringIO(source).readlines(),
                                        module.__file__)
    sys.modules[SUBMISSION] = module
    signal.signal(STACK_SIGNAL, _time_up)
    started = time.perf_counter()
    try:
        exec(compile(source, module.__file__, "exec"), module.__dict__)  # noqa: S102
    except BaseException as exc:
        _emit({"check": 0, "outcome": _kind(exc), "message": _explain(exc),
               "seconds": time.perf_counter() - started})
        raise
    return module


def _time_up(signum, frame) -> None:
    """The verifier asks for the stack of a program whose time is up, then kills it: say
    which check was running, and where in the submission (when Python code was running)."""
    if _running is None:
        return
    stack = [f for f in _frames(frame) if f.f_code.co_filename.endswith(f"{os.sep}{SUBMISSION}.py")]
    where = ""
    if stack:
        lineno = stack[-1].f_lineno
        where = (f"\nin {SUBMISSION}.py, line {lineno}, in {stack[-1].f_code.co_name}: "
                 f"{linecache.getline(stack[-1].f_code.co_filename, lineno).strip()}")
    _emit({"check": _running.number, "outcome": "timeout",
           "seconds": time.perf_counter() - _running.started,
           "message": f"still running when the task's time was up{where}"})


def _frames(frame) -> list:
    """The frames of the stack, outermost first."""
    stack = []
    while frame is not None:
        stack.append(frame)
        frame = frame.f_back
    return stack[::-1]


class check:  # noqa: N801 - reads as a statement: `with check(3):`
    """Run one numbered section; record how it ended and let the next one run."""

    def __init__(self, number: int):
        self.number = number

    def __enter__(self) -> check:
        global _running
        self.started = time.perf_counter()
        _running = self
        return self

    def __exit__(self, kind, exc, tb) -> bool:
        global _running
        _running = None
        outcome = {"check": self.number, "seconds": time.perf_counter() - self.started}
        if exc is None:
            _emit(outcome | {"outcome": "passed"})
            return False
        if isinstance(exc, KeyboardInterrupt):
            return False
        _emit(outcome | {"outcome": _kind(exc), "message": _explain(exc)})
        return True


def _kind(exc: BaseException) -> str:
    if isinstance(exc, AssertionError):
        return "failed"
    if isinstance(exc, MemoryError) or _MEMORY.search(_text(exc)):
        return "memory"
    return "error"


def _emit(outcome: dict) -> None:
    if _report_fd is None or getattr(sys.modules.get("__main__"), "__name__", "") != "__main__":
        return
    line = (MARKER + json.dumps(outcome, ensure_ascii=True) + "\n").encode("ascii")
    try:
        while line:
            line = line[os.write(_report_fd, line):]
    except OSError:
        pass


def _explain(exc: BaseException) -> str:
    """The decisive line and what it compared: the failing line of the checks (or of the
    submission for an error raised there), the exception, and the values the assertion looked
    at, tensors as shape, dtype and their largest difference."""
    frames = list(traceback.walk_tb(exc.__traceback__))
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    own = [(f, line) for f, line in frames if f.f_code.co_filename == main]
    theirs = [(f, line) for f, line in frames if f.f_code.co_filename.endswith(
        f"{os.sep}{SUBMISSION}.py")]
    parts = []
    if own:
        frame, lineno = own[-1]
        statement = _statement(main, lineno)
        parts.append(f"at: {statement or linecache.getline(main, lineno).strip()}")
        if isinstance(exc, AssertionError) and statement.startswith("assert"):
            parts += _values(statement, frame)
    if theirs and not isinstance(exc, AssertionError):
        frame, lineno = theirs[-1]
        parts.append(f"in {SUBMISSION}.py, line {lineno}, in {frame.f_code.co_name}: "
                     f"{linecache.getline(frame.f_code.co_filename, lineno).strip()}")
    message = _text(exc)
    parts.append(f"{type(exc).__name__}: {message}" if message else type(exc).__name__)
    return "\n".join(parts)[:MESSAGE_LIMIT]


def _text(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # noqa: BLE001 - a broken __str__ must not lose the outcome
        return f"<unprintable {type(exc).__name__}>"


def _statement(filename: str, lineno: int) -> str:
    """The whole statement of `filename` that spans `lineno`, dedented."""
    source = "".join(linecache.getlines(filename))
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ""
    best = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno <= lineno <= (node.end_lineno or 0):
            if not isinstance(node, (ast.With, ast.If, ast.For, ast.While, ast.FunctionDef,
                                     ast.Try, ast.ClassDef)):
                best = node
    return " ".join(ast.get_source_segment(source, best).split()) if best else ""


def _values(statement: str, frame) -> list[str]:
    """What the failed `assert` compared, evaluated again in its frame."""
    try:
        test = ast.parse(statement).body[0].test
    except (SyntaxError, IndexError, AttributeError):
        return []
    while isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        falsy = next((v for v in test.values if not _truthy(v, frame)), None)
        if falsy is None:
            return []
        test = falsy
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    if isinstance(test, ast.Compare):
        operands = [test.left, *test.comparators]
    elif isinstance(test, ast.Call):
        operands = list(test.args)
    else:
        operands = [test]
    shown = [(ast.unparse(node), _evaluate(node, frame)) for node in operands
             if not isinstance(node, ast.Constant)]
    lines = [f"  {text} = {_describe(value)}" for text, (ok, value) in
             ((t, v) for t, v in shown) if ok]
    tensors = [value for _, (ok, value) in shown if ok and _is_tensor(value)]
    if len(tensors) == 2:
        lines += _difference(*tensors)
    return lines


def _truthy(node: ast.expr, frame) -> bool:
    ok, value = _evaluate(node, frame)
    try:
        return not ok or bool(value)
    except Exception:  # noqa: BLE001 - e.g. a tensor of several values
        return True


def _evaluate(node: ast.expr, frame) -> tuple[bool, object]:
    try:
        code = compile(ast.Expression(node), "<assert>", "eval")
        return True, eval(code, frame.f_globals, frame.f_locals)  # noqa: S307
    except Exception:  # noqa: BLE001 - a value that cannot be shown is left out
        return False, None


def _is_tensor(value) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def _describe(value) -> str:
    if _is_tensor(value):
        text = f"tensor of shape {tuple(value.shape)}, {value.dtype}"
        if value.numel() <= 8:
            text += f": {value.detach().cpu().tolist()}"
        return text
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "…"


def _difference(a, b) -> list[str]:
    import torch

    if a.shape != b.shape:
        return [f"  shapes differ: {tuple(a.shape)} vs {tuple(b.shape)}"]
    try:
        diff = (a.detach().double() - b.detach().double()).abs()
    except Exception:  # noqa: BLE001
        return []
    if diff.numel() == 0:
        return []
    worst = int(diff.argmax())
    index = tuple(int(i) for i in torch.unravel_index(torch.tensor(worst), diff.shape))
    return [f"  max abs diff {diff.max().item():.3g} at index {index}; "
            f"{int((diff > 0).sum())} of {diff.numel()} elements differ"]
