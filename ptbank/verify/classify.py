"""Judge what came back from a child against the snippet's expectations: one verdict, one reason.

Order of judgement: the process (timeout, signal, vanished, exited) before the exception
(`raises`/`match`), before standard output (`stdout`), before warnings. The first problem
found is the verdict; its reason is the decisive excerpt.
"""

from __future__ import annotations

import difflib
import os
import re
import signal

from ..models import Snippet
from .results import Status
from .runner import OUTPUT_CAP, Finished

DEPRECATIONS = frozenset({"DeprecationWarning", "FutureWarning", "PendingDeprecationWarning"})
_MEMORY = re.compile(r"can't allocate memory|out of memory|Cannot allocate memory", re.I)
_SITE = re.compile(r"^.*/(site|dist)-packages/")
EXCERPT_LINES = 6


def classify(snippet: Snippet, done: Finished) -> tuple[Status, str, tuple[str, ...]]:
    """The verdict, its reason, and the warnings seen (one line each)."""
    report = done.report or {}
    warnings = tuple(_warning_line(w, done.script) for w in report.get("warnings", ()))
    for judge in (_judge_process, _judge_exception, _judge_stdout, _judge_warnings):
        status, reason = judge(snippet, done)
        if status is not None:
            return status, reason, warnings + _output_notes(done)
    return Status.passed, "", warnings + _output_notes(done)


Verdict = tuple[Status | None, str]
"""A judge's finding: (None, "") when it found nothing wrong."""


def _judge_process(snippet: Snippet, done: Finished) -> Verdict:
    status = done.status
    if done.timed_out:
        return Status.timeout, _with_tail(
            f"still running after {snippet.timeout:g} s{_where_it_hung(done)}; its process "
            "group was killed", done)
    if os.WIFSIGNALED(status):
        head = f"killed by {_signal_name(os.WTERMSIG(status))}"
        return Status.crashed, _fatal_error(head, done) or _with_tail(head, done)
    if done.report is None:
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
        return Status.crashed, _with_tail(
            f"the process exited (status {code}) before the snippet finished, "
            "e.g. os._exit(); a snippet must run to its end", done)
    if os.WEXITSTATUS(status) != 0:  # the child exits 0 right after its report, always
        return Status.crashed, _with_tail(
            f"the process exited (status {os.WEXITSTATUS(status)}) after a report it did not "
            "finish: the report is not trusted", done)
    exc = done.report.get("exception")
    if exc and exc["name"] == "SystemExit" and not _is_expected(snippet, exc):
        return Status.crashed, (f"sys.exit({exc['exit_code']!r}) at line {exc['line']}: "
                                "a snippet must run to its end")
    return None, ""


def _judge_exception(snippet: Snippet, done: Finished) -> Verdict:
    exc = done.report.get("exception")
    if exc is None:
        if snippet.raises:
            return Status.failed, f"expected {snippet.raises}, but the snippet completed"
        return None, ""
    excerpt = _exception_excerpt(exc, done.script)
    if snippet.raises is None:
        if "AssertionError" in exc["types"]:
            return Status.failed, excerpt
        return Status.error, excerpt + _memory_note(snippet, exc) + _stderr_note(done)
    if not _is_expected(snippet, exc):
        return Status.failed, f"expected {snippet.raises}, got {excerpt}"
    if snippet.match and not re.search(snippet.match, exc["message"]):
        return Status.failed, (f"{exc['name']} message does not match {snippet.match!r}: "
                               f"{_first_lines(exc['message'], 3)}")
    return None, ""


def _judge_stdout(snippet: Snippet, done: Finished) -> Verdict:
    expected, got = (snippet.stdout or "").strip(), done.stdout.strip()
    if snippet.stdout is None or got == expected:
        return None, ""
    diff = difflib.unified_diff(expected.splitlines(), got.splitlines(), "expected", "got",
                                lineterm="", n=1)
    return Status.failed, "stdout differs:\n" + "\n".join(list(diff)[2:14])


def _judge_warnings(snippet: Snippet, done: Finished) -> Verdict:
    """Deprecation, Future and PendingDeprecation warnings raised from the snippet's own lines."""
    own = [w for w in done.report.get("warnings", ())
           if w["filename"] == done.script and DEPRECATIONS & set(w["types"])]
    if not own:
        return None, ""
    return Status.failed, "\n".join(_warning_line(w, done.script) for w in own)


def _is_expected(snippet: Snippet, exc: dict) -> bool:
    return snippet.raises is not None and snippet.raises in exc["types"]


def _exception_excerpt(exc: dict, script: str) -> str:
    """`Type: message`, the snippet line it came from, and the library frame it was raised in."""
    text = f"{exc['name']}: {_first_lines(exc['message'], 3)}".rstrip(": ")
    if exc["line"] is not None:
        text += f"\n  at line {exc['line']}: {exc['source']}"
    if exc["origin"]:
        text += f"\n  raised in {_short_path(exc['origin'], script)}"
    return text


def _memory_note(snippet: Snippet, exc: dict) -> str:
    if "MemoryError" in exc["types"] or _MEMORY.search(exc["message"]):
        return (f"\n(the memory limit is {snippet.memory_mb} MiB on top of what torch holds: "
                "raise `memory_mb` if the need is real)")
    return ""


def _stderr_note(done: Finished) -> str:
    """What the snippet's processes last printed to stderr (a spawned worker's traceback)."""
    tail = done.stderr_tail.strip().splitlines()[-4:]
    return "\n  stderr: " + "\n  ".join(tail) if tail else ""


def _warning_line(warning: dict, script: str) -> str:
    where = (f"line {warning['lineno']}" if warning["filename"] == script
             else f"{_short_path(warning['filename'], script)}:{warning['lineno']}")
    times = f" (×{warning['count']})" if warning["count"] > 1 else ""
    return f"{warning['category']} at {where}: {_first_lines(warning['message'], 1)}{times}"


def _short_path(path: str, script: str) -> str:
    """A library path from its package down; a file the snippet wrote, from its folder."""
    folder = os.path.dirname(script) + os.sep
    return path[len(folder):] if path.startswith(folder) else _SITE.sub("", path)


def _output_notes(done: Finished) -> tuple[str, ...]:
    return tuple(f"{name} capped: {written:,} bytes written, the first {OUTPUT_CAP:,} kept"
                 for name, written in (("stdout", done.stdout_bytes),
                                       ("stderr", done.stderr_bytes))
                 if written > OUTPUT_CAP)


def _fatal_error(head: str, done: Finished) -> str:
    """From Python's faulthandler dump: the fatal error and the snippet lines on the stack."""
    lines = done.stderr_tail.splitlines()
    fatal = [line for line in lines if line.startswith("Fatal Python error")]
    code = done.job.snippet.code.splitlines()
    own = [f"  at line {n}: {code[n - 1].strip()}" for line in lines
           if (m := re.search(rf'File "{re.escape(done.script)}", line (\d+)', line))
           and 0 < (n := int(m.group(1))) <= len(code)]
    return "\n".join([head, *fatal[:1], *own[:3]]) if fatal else ""


def _where_it_hung(done: Finished) -> str:
    """` (at line 12 of the snippet, in wait_here)`: the innermost frame of the snippet's own
    code in the stack its main thread dumped when its time was up (child.STACK_SIGNAL)."""
    if "Current thread " not in done.stderr_tail:
        return ""
    stack = done.stderr_tail.rsplit("Current thread ", 1)[1].split("\n\n")[0]
    frame = re.search(rf'File "{re.escape(done.script)}", line (\d+) in (\S+)', stack)
    return f" (at line {frame[1]} of the snippet, in {frame[2]})" if frame else ""


def _with_tail(head: str, done: Finished) -> str:
    tail = (done.stderr_tail.strip() or done.stdout_tail.strip()).splitlines()[-EXCERPT_LINES:]
    return head + ("\n" + "\n".join(tail) if tail else "")


def _first_lines(text: str, count: int) -> str:
    lines = text.strip().splitlines()
    return "\n".join(lines[:count]) + (" …" if len(lines) > count else "")


def _signal_name(number: int) -> str:
    try:
        return f"{signal.Signals(number).name} (signal {number})"
    except ValueError:
        return f"signal {number}"
