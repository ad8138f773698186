"""The parent side: feed the zygote snippets, enforce timeouts, collect what came back.

Scheduling is heaviest first (by last known duration), `slots` at a time. A snippet's clock starts
when the zygote reports its pid; when it runs out, the parent asks the zygote to kill the
snippet's whole process group. The zygote kills the group again when the snippet exits, so no
grandchild outlives it.
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..models import Snippet
from .launch import VerifierError, Zygote

OUTPUT_CAP = 1 << 20
"""Bytes of a snippet's stdout (and of its stderr) that are kept; the rest is counted only."""
TAIL = 8192
CANARY = """\
import torch
torch.set_num_threads(2)
a = torch.randn(256, 256)
assert torch.isfinite(a @ a).all()
assert torch.ones(1 << 20).sum().item() == 1 << 20
"""
"""Multi-threaded ops that hang in a child if the zygote ever started its OpenMP pool."""
CANARY_TIMEOUT = 30.0
CANARY_ID = "canary"
"""The canary's job id; snippets' job ids are numbers."""
_HEAVY_HINTS = ((re.compile(r"torch\.compile|torch\._inductor"), 12.0),
                (re.compile(r"\bspawn\b|init_process_group|num_workers\s*=\s*[1-9]"), 6.0),
                (re.compile(r"\bonnx\b|torch\.export"), 4.0))
_SHARED_IMPORTS = ((re.compile(r"torch\.compile|torch\._inductor"), "torch._inductor.compile_fx"),
                   (re.compile(r"torch\.export|torch\.onnx|make_fx"),
                    "torch._functorch.aot_autograd"))
"""Heavy modules that snippets using these APIs import lazily (0.5 s and 0.1 s in the zygote)."""


@dataclass(frozen=True)
class Job:
    """One snippet to run; `id` names its files and its messages to the zygote."""

    id: str
    snippet: Snippet
    estimate: float = 0.0
    """Expected seconds, for heaviest-first scheduling."""


def shared_imports(snippets: Iterable[Snippet]) -> list[str]:
    """Heavy lazy modules that two or more of `snippets` will import: cheaper once, preloaded.

    A preload delays every snippet by its import time, so one user alone pays it itself.
    """
    users: dict[str, int] = {}
    for snippet in snippets:
        for module in {m for pattern, m in _SHARED_IMPORTS if pattern.search(snippet.code)}:
            users[module] = users.get(module, 0) + 1
    return sorted(module for module, count in users.items() if count >= 2)


@dataclass(frozen=True)
class Finished:
    """What came back from one child, before any judgement."""

    job: Job
    script: str
    """Path the snippet ran from: warnings and frames from this file are the snippet's own."""
    status: int
    """os.waitpid status of the child."""
    timed_out: bool
    duration: float
    report: dict | None
    """The child's JSON report; None when it died or exited before writing it."""
    stdout: str
    """The kept head of standard output."""
    stdout_tail: str
    stderr_tail: str


def estimate(snippet: Snippet, last_known: float | None) -> float:
    """Seconds a snippet will take: its last run, else a guess from what it uses."""
    if last_known is not None:
        return last_known
    return max((cost for pattern, cost in _HEAVY_HINTS if pattern.search(snippet.code)),
               default=0.5)


@dataclass
class _Running:
    job: Job
    files: dict[str, str]
    sent: float
    pid: int = 0
    deadline: float | None = None
    killed: bool = False


def run_jobs(zygote: Zygote, jobs: list[Job], *, slots: int, threads: int, workdir: Path,
             on_finish: Callable[[Finished], None]) -> None:
    """Run every job, `slots` at a time, heaviest first; call on_finish as each one ends."""
    batch = _Batch(zygote, workdir, threads, on_finish)
    try:
        batch.run(deque(sorted(jobs, key=lambda j: -j.estimate)), slots)
    except VerifierError:  # the zygote is gone: its snippets' groups are orphans, kill them here
        for entry in batch.running.values():
            if entry.pid:
                _kill_group(entry.pid)
        raise


class _Batch:
    """The scheduling loop's state: what runs, since when, and what was asked to die."""

    def __init__(self, zygote: Zygote, workdir: Path, threads: int,
                 on_finish: Callable[[Finished], None]):
        self.zygote, self.workdir, self.threads = zygote, workdir, threads
        self.on_finish = on_finish
        self.running: dict[str, _Running] = {}

    def run(self, queue: deque[Job], slots: int) -> None:
        while queue or self.running:
            while queue and len(self.running) < slots:
                self._start(queue.popleft())
            for event in self.zygote.events(_wait_time(self.running.values())):
                self._on_event(event)
            now = time.monotonic()
            for entry in self.running.values():
                if entry.deadline is not None and now >= entry.deadline and not entry.killed:
                    self.zygote.send({"op": "kill", "job": entry.job.id})
                    entry.killed = True

    def _start(self, job: Job) -> None:
        files = _prepare(self.workdir, job)
        self.zygote.send({"op": "run", "job": job.id, **files, "threads": self.threads,
                          "seed": 0, "memory_mb": job.snippet.memory_mb,
                          "cap": OUTPUT_CAP})
        self.running[job.id] = _Running(job, files, time.monotonic())

    def _on_event(self, event: dict) -> None:
        entry = self.running[event["job"]]
        if event["event"] == "started":
            entry.pid = event["pid"]
            entry.deadline = time.monotonic() + entry.job.snippet.timeout
        elif event["event"] == "exit":
            del self.running[event["job"]]
            self.on_finish(_collect(entry, event["status"]))


def run_jobs_with_canary(zygote: Zygote, jobs: list[Job], *, slots: int, threads: int,
                         workdir: Path, on_finish: Callable[[Finished], None],
                         canary_timeout: float = CANARY_TIMEOUT) -> None:
    """run_jobs, with the canary started first and alongside the others (not before them).

    The canary proves that a multi-threaded op still completes in a forked child. Results are
    held back until it has passed; if it fails, none is ever handed on. With no jobs, this
    runs the canary alone.
    """
    gate = _CanaryGate(on_finish)
    run_jobs(zygote, [_canary_job(canary_timeout), *jobs], slots=slots, threads=threads,
             workdir=workdir, on_finish=gate)


def _canary_job(timeout: float) -> Job:
    return Job(CANARY_ID, Snippet(id=CANARY_ID, code=CANARY, timeout=timeout), math.inf)


def _check_canary(done: Finished) -> None:
    if done.report is None or done.report.get("outcome") != "completed":
        why = "hung" if done.timed_out else f"failed (wait status {done.status})"
        raise VerifierError(
            f"start-up canary {why}: a multi-threaded op does not complete in a forked child, "
            "so the zygote must have run an op before forking"
            + (f"\n{done.stderr_tail.strip()}" if done.stderr_tail.strip() else ""))


class _CanaryGate:
    """on_finish for run_jobs_with_canary: holds results until the canary has passed."""

    def __init__(self, on_finish: Callable[[Finished], None]):
        self.on_finish = on_finish
        self.held: list[Finished] | None = []  # None once the canary has passed

    def __call__(self, done: Finished) -> None:
        if done.job.id == CANARY_ID:
            _check_canary(done)
            held, self.held = self.held, None
            for earlier in held:
                self.on_finish(earlier)
        elif self.held is None:
            self.on_finish(done)
        else:
            self.held.append(done)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _wait_time(running: Iterable[_Running]) -> float | None:
    deadlines = [r.deadline for r in running if r.deadline is not None and not r.killed]
    return None if not deadlines else max(min(deadlines) - time.monotonic(), 0.0)


def _prepare(workdir: Path, job: Job) -> dict[str, str]:
    """The job's folder: run/snippet.py (its cwd), and where its output and report go."""
    base = workdir / job.id
    (base / "run").mkdir(parents=True)
    script = base / "run" / "snippet.py"
    script.write_text(job.snippet.code, encoding="utf-8")
    return {"script": str(script), "stdout": str(base / "stdout"),
            "stderr": str(base / "stderr"), "result": str(base / "result.json")}


def _collect(entry: _Running, status: int) -> Finished:
    files = entry.files
    report = None
    if os.path.exists(files["result"]):
        with open(files["result"], encoding="utf-8") as handle:
            report = json.load(handle)
    return Finished(
        job=entry.job, script=files["script"], status=status,
        timed_out=entry.killed and os.WIFSIGNALED(status) and report is None,
        duration=time.monotonic() - entry.sent, report=report,
        stdout=_read(files["stdout"], 0, OUTPUT_CAP),
        stdout_tail=_read(files["stdout"], -TAIL, TAIL),
        stderr_tail=_read(files["stderr"], -TAIL, TAIL))


def _read(path: str, start: int, size: int) -> str:
    try:
        with open(path, "rb") as handle:
            if start < 0:
                handle.seek(max(os.fstat(handle.fileno()).st_size + start, 0))
            return handle.read(size).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return ""

