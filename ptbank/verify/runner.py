"""The parent side: feed the zygote snippets, enforce timeouts, collect what came back.

Scheduling is heaviest first (by last known duration), `slots` at a time. A snippet's clock starts
when the zygote reports its pid; when it runs out, the parent asks the zygote to kill the
snippet's whole process group. The zygote kills the group again when the snippet exits, so no
grandchild outlives it.
"""

from __future__ import annotations

import math
import os
import re
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..models import Snippet
from .child_report import clean, parse_report
from .confine import SCRIPT
from .ranks import STARTS_PROCESSES
from .warm import COMPILES, WarmCache
from .launch import VerifierError, Zygote
from .proctree import kill_tree

OUTPUT_CAP = 1 << 20
"""Bytes of a snippet's stdout (and of its stderr) that are kept; the rest is counted only."""
CANARY = """\
import torch
torch.set_num_threads(2)
a = torch.randn(256, 256)
assert torch.isfinite(a @ a).all()
assert torch.ones(1 << 20).sum().item() == 1 << 20
"""
"""Multi-threaded ops that hang in a child if the zygote ever started its OpenMP pool."""
CANARY_TIMEOUT = 30.0
STACK_GRACE = 0.5
"""Seconds between asking a snippet whose time is up for its stack and killing it."""
KILL_GRACE = 10.0
"""Seconds the zygote has to report a snippet it was told to kill, before it is given up on."""
WARM_POLL = 0.5
"""Seconds between two looks at a warm cache still being made, with snippets waiting for it."""
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
    name: str = ""
    """What messages call it (question-id/snippet-id); the snippet's id if empty."""

    @property
    def label(self) -> str:
        return self.name or self.snippet.id


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
    """The child's report; None when it died or exited before sending it, or sent a damaged one."""
    stdout: str
    """The kept head of standard output."""
    stdout_tail: str
    stderr_tail: str
    stdout_bytes: int = 0
    stderr_bytes: int = 0


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
    stack_asked: bool = False
    killed: bool = False


def run_jobs(zygote: Zygote, jobs: list[Job], *, slots: int, threads: int, workdir: Path,
             on_finish: Callable[[Finished], None], warm: WarmCache | None = None,
             fresh_ranks: bool = False) -> None:
    """Run every job, `slots` at a time, heaviest first; call on_finish as each one ends.

    `warm`: a compile cache (warm.py) that the snippets that compile start from; while it is
    still being made, they wait and the others run. `fresh_ranks`: processes a snippet
    spawns import torch themselves, instead of being forked from its rank server (ranks.py).
    """
    batch = _Batch(zygote, workdir, threads, on_finish, warm, fresh_ranks)
    try:
        batch.run(deque(sorted(jobs, key=lambda j: -j.estimate)), slots)
    except VerifierError as exc:  # the zygote is gone: its snippets' groups are orphans
        for entry in batch.running.values():  # the zygote shares ptbank's PID namespace
            if entry.pid:
                kill_tree(entry.pid)
        names = ", ".join(e.job.label for e in batch.running.values() if e.job.id != CANARY_ID)
        if names and not exc.snippets_named:
            raise VerifierError(f"{exc}\nrunning at the time: {names}",
                                snippets_named=True) from None
        raise


class _Batch:
    """The scheduling loop's state: what runs, since when, and what was asked to die."""

    def __init__(self, zygote: Zygote, workdir: Path, threads: int,
                 on_finish: Callable[[Finished], None], warm: WarmCache | None = None,
                 fresh_ranks: bool = False):
        self.zygote, self.workdir, self.threads, self.warm = zygote, workdir, threads, warm
        self.fresh_ranks = fresh_ranks
        self.on_finish = on_finish
        self.running: dict[str, _Running] = {}

    def run(self, queue: deque[Job], slots: int) -> None:
        while queue or self.running:
            while len(self.running) < slots and (job := self._next(queue)):
                self._start(job)
            if not self.running and queue:  # only jobs that wait for the warm cache are left
                self.warm.wait()
                continue
            wait = _wait_time(self.running.values())
            if self.warm and self.warm.pending:
                wait = min(wait if wait is not None else WARM_POLL, WARM_POLL)
            for event in self.zygote.events(wait):
                self._on_event(event)
            now = time.monotonic()
            for entry in self.running.values():
                if entry.deadline is None or now < entry.deadline:
                    continue
                if not entry.stack_asked:
                    self.zygote.send({"op": "stack", "job": entry.job.id})
                    entry.stack_asked = True
                    entry.deadline = now + STACK_GRACE
                elif not entry.killed:
                    self.zygote.send({"op": "kill", "job": entry.job.id})
                    entry.killed = True
                    entry.deadline = now + KILL_GRACE
                else:
                    raise VerifierError(
                        f"{entry.job.label} did not end {KILL_GRACE:g} s after it was killed "
                        "at its timeout: the zygote no longer answers (a snippet may have "
                        "stopped it with a signal)", snippets_named=True)

    def _next(self, queue: deque[Job]) -> Job | None:
        """The heaviest job that may start now: one that compiles waits for the warm cache."""
        if not (self.warm and self.warm.pending):
            return queue.popleft() if queue else None
        for index, job in enumerate(queue):
            if not COMPILES.search(job.snippet.code):
                del queue[index]
                return job
        return None

    def _start(self, job: Job) -> None:
        files = _prepare(self.workdir, job, getattr(self.zygote, "sandboxed", False))
        warm = self.warm and COMPILES.search(job.snippet.code) and self.warm.path()
        self.zygote.send({"op": "run", "job": job.id, **files, "code": job.snippet.code,
                          "warm_cache": str(warm) if warm else None, "threads": self.threads,
                          "seed": 0, "memory_mb": job.snippet.memory_mb,
                          "rank_server": not self.fresh_ranks and bool(
                              STARTS_PROCESSES.search(job.snippet.code)),
                          "cap": OUTPUT_CAP})
        self.running[job.id] = _Running(job, files, time.monotonic())

    def _on_event(self, event: dict) -> None:
        entry = self.running.get(event.get("job"))
        if entry is None or event.get("event") not in ("started", "exit"):
            raise VerifierError(
                f"the zygote sent {str(event)[:200]!r}, which is not about a snippet that is "
                "running: the channel cannot be trusted, and neither can this run")
        if event["event"] == "started":
            entry.pid = event["pid"]
            entry.deadline = time.monotonic() + entry.job.snippet.timeout
        elif event["event"] == "exit":
            del self.running[event["job"]]
            self.on_finish(_collect(entry, event))


def run_jobs_with_canary(zygote: Zygote, jobs: list[Job], *, slots: int, threads: int,
                         workdir: Path, on_finish: Callable[[Finished], None],
                         canary_timeout: float = CANARY_TIMEOUT,
                         warm: WarmCache | None = None, fresh_ranks: bool = False) -> None:
    """run_jobs, with the canary started first and alongside the others (not before them).

    The canary proves that a multi-threaded op still completes in a forked child. Results are
    held back until it has passed; if it fails, none is ever handed on. With no jobs, this
    runs the canary alone.
    """
    gate = _CanaryGate(on_finish)
    run_jobs(zygote, [_canary_job(canary_timeout), *jobs], slots=slots, threads=threads,
             workdir=workdir, on_finish=gate, warm=warm, fresh_ranks=fresh_ranks)


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


def _wait_time(running: Iterable[_Running]) -> float | None:
    deadlines = [r.deadline for r in running if r.deadline is not None]
    return None if not deadlines else max(min(deadlines) - time.monotonic(), 0.0)


def _prepare(workdir: Path, job: Job, sandboxed: bool) -> dict[str, str]:
    """Where the snippet is to run from: in the sandbox, its own private /tmp; else a fresh
    folder of the run's (the child writes the code there, from the request)."""
    if sandboxed:
        return {"script": SCRIPT}
    folder = workdir / job.id
    folder.mkdir(parents=True)
    return {"script": str(folder / "snippet.py")}


def _collect(entry: _Running, exit_event: dict) -> Finished:
    """What the zygote reported of a child that exited: status, report and output."""
    report = parse_report(exit_event.get("report"))
    status = exit_event["status"]
    return Finished(
        job=entry.job, script=entry.files["script"], status=status,
        timed_out=entry.stack_asked and os.WIFSIGNALED(status) and report is None,
        duration=time.monotonic() - entry.sent, report=report,
        stdout=clean(exit_event.get("stdout", "")),
        stdout_tail=clean(exit_event.get("stdout_tail", "")),
        stderr_tail=clean(exit_event.get("stderr_tail", "")),
        stdout_bytes=exit_event.get("stdout_bytes", 0),
        stderr_bytes=exit_event.get("stderr_bytes", 0))
