"""verify_bank: cached verdicts first, then every other snippet in its own forked process.

Read top to bottom: select → look up the cache → check requirements → start the zygote →
run the canary first and the rest heaviest first beside it (no result counts until the canary
passed) → run once more what errored or crashed → cache what is cacheable → report in bank
order.
When every verdict is cached, neither torch nor the zygote is started.
When the verifier itself fails midway (VerifierError: the zygote died or stopped answering),
the error raised is a VerificationAborted carrying the report of what was decided by then.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import PtbankError
from ..models import Bank, Snippet
from ..variants import answers_from, solve_index, verification_snippets
from .cache import ResultCache, cache_key, extra_modules
from .classify import classify
from .interpreter import Interpreter
from . import warm
from .launch import (DEFAULT_CACHE, NATIVE, CpuSetting, HeadStart, VerifierError, ZygoteLease,
                     zygote_env)
from .progress import make_progress
from .record import Record
from .requirements import Requirements
from .results import RETRIED, SnippetResult, Status, VerifyReport
from .runner import Finished, Job, estimate, run_jobs, run_jobs_with_canary, shared_imports
from .sandbox import ensure_available


class VerificationAborted(VerifierError):
    """A VerifierError that stopped a run midway, with the report it leaves (`report`): every
    verdict reached so far, the snippets the message names (running at the time) as crashed,
    and every other one as not run, so that `verify --json/--junit` can still be written."""

    def __init__(self, cause: VerifierError, report: VerifyReport):
        super().__init__(str(cause), snippets_named=cause.snippets_named)
        self.report = report


@dataclass(frozen=True)
class Target:
    """A snippet picked for this run, with where it is and its cache key."""

    question_id: str
    snippet: Snippet
    where: str
    key: str

    @property
    def name(self) -> str:
        return f"{self.question_id}/{self.snippet.id}"


def verify_bank(bank: Bank, *, jobs: int | None = None, only: list[str] | None = None,
                use_cache: bool = True, cache_dir: Path = DEFAULT_CACHE,
                progress: bool = True, head_start: HeadStart | None = None,
                interpreter: Interpreter | None = None, sandbox: bool = True,
                sandbox_writable: tuple[Path, ...] = (), record: Record | None = None,
                imported: bool = True, keep_output: bool = False,
                retry: bool = True, fresh_ranks: bool = False,
                cpu: CpuSetting = NATIVE) -> VerifyReport:
    """Verify the bank's snippets (or those named in `only`) and return the typed report.

    `interpreter` is the torch build to verify under (default: the one ptbank runs under).
    `head_start` may hold a zygote started before the bank was loaded; it is used if needed.
    `sandbox`: run the snippets in the sandbox (sandbox.py); without it, they run unconfined.
    `sandbox_writable`: folders the sandbox leaves writable besides the run's own (a test
    harness's, where its snippets count their runs).
    `record`: the committed verification record; a snippet it vouches for under exactly this
    build is not run (build and sheet use it; `ptbank verify` never does).
    `imported`: whether verdicts brought into the cache by `ptbank cache import` count; without
    it (`verify --record`, `--check-record`) those snippets run here, and their own verdicts
    replace the imported ones.
    `keep_output`: each result carries the head of its snippet's stdout (grading reads it).
    `retry`: give a snippet that errored, crashed or timed out one more run (RETRIED).
    `fresh_ranks`: processes that snippets spawn import torch themselves, as under a plain
    `spawn`, instead of being forked from a server made before the snippet ran (ranks.py).
    `cpu`: the CPU capability snippets run under (ATEN_CPU_CAPABILITY) and the threads each
    gets (default: this machine's own, and the cores divided among the jobs); both are part of
    every cache key but a native run's, and the report names them.
    """
    began = time.perf_counter()
    if sandbox:
        ensure_available()
    interpreter = interpreter or Interpreter.current()
    targets = select_targets(bank, only, interpreter, sandbox, cpu)
    versions = interpreter.versions
    cache = ResultCache(cache_dir) if use_cache else None
    results: dict[str, SnippetResult] = {}
    for target in targets:
        vouched = record and record.vouches_for(target.name, target.snippet, versions,
                                                interpreter.module_version)
        if vouched:
            results[target.name] = SnippetResult(
                target.question_id, target.snippet.id, Status.passed, 0.0, where=target.where,
                key=target.key, recorded=vouched.recorded,
                answers=record.answers.get((target.name, versions.torch)))
            continue
        hit = cache and cache.get(target.key, target.question_id, target.snippet.id, target.where)
        if hit and (imported or not hit.imported_from):
            results[target.name] = hit
    slots = max(1, jobs or len(os.sched_getaffinity(0)))
    threads = cpu.threads or max(1, len(os.sched_getaffinity(0)) // slots)
    todo = [t for t in targets if t.name not in results]
    view = make_progress(progress, total=len(targets), done=len(results))
    try:
        run = _Run(interpreter, cache, cache_dir, view, results, head_start,
                   sandbox and (*sandbox_writable,), keep_output=keep_output, retry=retry,
                   fresh_ranks=fresh_ranks, cpu=cpu, threads=threads)
        zygote_start = run.verify(todo, slots) if todo else None
    except VerifierError as exc:
        raise VerificationAborted(exc, VerifyReport(
            tuple(results.get(t.name) or run.undecided(t, exc) for t in targets),
            versions.torch, versions.python, versions.verifier, time.perf_counter() - began,
            slots, None, sandbox, aborted=str(exc), cpu_capability=cpu.capability or "",
            threads=threads)) from exc
    finally:
        view.close()
    return VerifyReport(tuple(results[t.name] for t in targets), versions.torch,
                        versions.python, versions.verifier, time.perf_counter() - began,
                        slots, zygote_start, sandbox, cpu_capability=cpu.capability or "",
                        threads=threads)


def select_targets(bank: Bank, only: list[str] | None, interpreter: Interpreter,
                   sandbox: bool = True, cpu: CpuSetting = NATIVE) -> list[Target]:
    """Snippets in bank order; `only` names question ids or `question-id/snippet-id`."""
    wanted = set(only or ())
    picked, matched = [], set()
    for question in bank.questions:
        for index, snippet in verification_snippets(question):
            names = {question.id, f"{question.id}/{snippet.id}",
                     f"{question.id}/{snippet.id.partition('@')[0]}"}
            if only is not None and not names & wanted:
                continue
            matched |= names & wanted
            where = (bank.where(question.id, "snippets", index) if index >= 0
                     else bank.where(question.id, "solve"))
            picked.append((question.id, snippet, where))
    unknown = sorted(wanted - matched)
    if unknown:
        raise PtbankError(f"--only: no question or snippet named {', '.join(unknown)}")
    interpreter.learn(m for _, snippet, _ in picked for m in extra_modules(snippet))
    versions = interpreter.versions
    return [Target(qid, snippet, where,
                   cache_key(snippet, versions, interpreter.module_version, sandbox, cpu))
            for qid, snippet, where in picked]


class _Run:
    """One run's uncached part: skips, the zygote, the children, the bookkeeping of results."""

    def __init__(self, interpreter: Interpreter, cache: ResultCache | None, cache_dir: Path,
                 view, results: dict, head_start: HeadStart | None,
                 sandbox: tuple[Path, ...] | bool, *, keep_output: bool = False,
                 retry: bool = True, fresh_ranks: bool = False, cpu: CpuSetting = NATIVE,
                 threads: int = 1):
        self.interpreter = interpreter
        self.cpu, self.threads = cpu, threads
        """The CPU snippets run as if on; the intra-op threads each gets."""
        self.keep_output, self.retry, self.fresh_ranks = keep_output, retry, fresh_ranks
        self.sandbox, self.writable = sandbox is not False, sandbox or ()
        """Whether snippets run in the sandbox; which folders it leaves writable besides."""
        self.cache, self.cache_dir, self.view, self.results = cache, cache_dir, view, results
        self.head_start = head_start
        self.by_job: dict[str, Target] = {}
        self.timings: dict[str, float] = {}
        self.first_attempts: dict[str, str] = {}
        """Target name → how its first run ended, for those that run again."""
        self.again: list[Job] = []

    def verify(self, todo: list[Target], slots: int) -> float | None:
        """Run what can run here; return the zygote's start-up seconds (None if not started)."""
        requirements = Requirements(self.interpreter)
        runnable = []
        for target in todo:
            why = requirements.why_not(target.snippet)
            if why:
                self._record(target, SnippetResult(target.question_id, target.snippet.id,
                                                   Status.skipped, 0.0, why, where=target.where))
            else:
                runnable.append(target)
        if not runnable:
            return None
        try:
            return self._run(runnable, slots)
        finally:
            if self.cache:
                self.cache.save_timings(self.timings)

    def _run(self, runnable: list[Target], slots: int) -> float:
        last = self.cache.timings() if self.cache else {}
        jobs = []
        for number, target in enumerate(runnable):
            self.by_job[str(number)] = target
            jobs.append(Job(str(number), target.snippet,
                            estimate(target.snippet, last.get(target.name)), target.name))
        preload = {r for t in runnable for r in t.snippet.requires
                   if r != "cuda" and not r.startswith("gpus>=")}
        preload.update(shared_imports(t.snippet for t in runnable))
        early = (self.head_start.take(self.interpreter.python, self.sandbox, self.cpu)
                 if self.head_start and not self.writable else None)
        threads = self.threads
        with early or ZygoteLease(self.cache_dir, self.interpreter.python, self.sandbox,
                                  self.writable, self.interpreter.import_path,
                                  cpu=self.cpu) as lease:
            warm = self._warm_cache(runnable, lease.workdir)  # made beside the first snippets
            try:
                started = lease.zygote.wait_ready(preload)
                run_jobs_with_canary(lease.zygote, jobs, slots=slots, threads=threads,
                                     workdir=lease.workdir, on_finish=self._finish, warm=warm,
                                     fresh_ranks=self.fresh_ranks)
                if self.again:
                    run_jobs(lease.zygote, self.again, slots=slots, threads=threads,
                             workdir=lease.workdir, on_finish=self._finish, warm=warm,
                             fresh_ranks=self.fresh_ranks)
            finally:
                if warm:
                    warm.close()
        return started

    def _warm_cache(self, runnable: list[Target], workdir: Path) -> warm.WarmCache | None:
        """In the sandbox, the compile cache that snippets which compile start from (warm.py).

        Unconfined, snippets share a lasting compile cache already.
        """
        if not self.sandbox or not warm.needed(t.snippet.code for t in runnable):
            return None
        versions = self.interpreter.versions
        isa = f"-{self.cpu.capability}" if self.cpu.capability else ""  # kernels per vector ISA
        return warm.WarmCache(self.interpreter.python, self.cache_dir,
                              f"{versions.torch}-{versions.python}{isa}",
                              zygote_env(self.cache_dir, self.cpu), workdir / "warm-up.log")

    def _finish(self, done: Finished) -> None:
        target = self.by_job[done.job.id]
        status, reason, warnings = classify(target.snippet, done)
        self.timings[target.name] = done.duration
        if self.retry and status in RETRIED and target.name not in self.first_attempts:
            first_line = reason.splitlines()[0] if reason else ""
            self.first_attempts[target.name] = f"{status.value}: {first_line}"
            again = Job(f"{done.job.id}-again", target.snippet, done.duration, target.name)
            self.by_job[again.id] = target
            self.again.append(again)
            return
        answers = _answers(target, status, done.stdout, done.stdout_tail)
        if status is Status.passed and solve_index(target.snippet.id) is not None and not answers:
            status, reason = Status.failed, ("the variant's solve ended without handing back "
                                             "its answers (did it exit early?)")
        result = SnippetResult(target.question_id, target.snippet.id, status, done.duration,
                               reason, warnings, where=target.where,
                               first_attempt=self.first_attempts.get(target.name, ""),
                               key=target.key, grew_mb=growth_mb(done.report),
                               output=done.stdout if self.keep_output else "",
                               answers=answers)
        if self.cache:
            self.cache.put(target.key, result)
        self._record(target, result)

    def _record(self, target: Target, result: SnippetResult) -> None:
        self.results[target.name] = result
        self.view.advance(result)

    def undecided(self, target: Target, stopped: VerifierError) -> SnippetResult:
        """The result of a snippet left without a verdict when the verifier stopped: crashed
        if the error names it (it was running then), else not run."""
        message = str(stopped)
        named = stopped.snippets_named and re.search(
            rf"(?<![\w./-]){re.escape(target.name)}(?![\w./-])", message)
        status, reason = ((Status.crashed, f"running when the verifier stopped: {message}")
                          if named else
                          (Status.not_run, "not run: the verifier stopped before its verdict ("
                           f"{message.splitlines()[0] if message else 'no message'})"))
        return SnippetResult(target.question_id, target.snippet.id, status, 0.0, reason,
                             where=target.where, key=target.key,
                             first_attempt=self.first_attempts.get(target.name, ""))


def _answers(target: Target, status: Status, stdout: str, tail: str) -> dict | None:
    """What a variant's passing `solve` handed back (variants.py), else None."""
    if status is not Status.passed or solve_index(target.snippet.id) is None:
        return None
    return answers_from(tail) or answers_from(stdout)


def growth_mb(report: dict | None) -> int | None:
    """MiB the snippet's resident memory grew at its peak, from the child's report."""
    resident = (report or {}).get("resident") or {}
    if resident.get("at_start") is None or resident.get("peak") is None:
        return None
    return max(0, resident["peak"] - resident["at_start"]) >> 10
