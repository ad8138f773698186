"""What verification produces: one typed result per snippet and the report of a run.

These are plain data. The terminal table, JSON and JUnit XML are views of them (report.py), and
nothing here is written back onto a Question.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from enum import Enum


class Status(str, Enum):
    """The verdict on one snippet."""

    passed = "passed"
    """Ran to the end and met every expectation."""
    failed = "failed"
    """A claim is wrong: an assertion, a wrong or missing exception, a stdout mismatch, or a
    deprecation warning raised from the snippet's own lines."""
    error = "error"
    """Raised an exception nobody expected."""
    timeout = "timeout"
    """Still running when its time was up; its whole process group was killed."""
    crashed = "crashed"
    """Died from a signal, or exited (os._exit, sys.exit) without finishing."""
    skipped = "skipped"
    """A declared requirement (cuda, gpus>=N, a module) is absent here."""
    not_run = "not_run"
    """No verdict: the verifier itself stopped (the zygote died or stopped answering) before
    this snippet's was reached. Only in the report of a run that stopped (VerifyReport.aborted)."""

    @property
    def is_problem(self) -> bool:
        return self not in (Status.passed, Status.skipped)


RETRIED = frozenset({Status.error, Status.crashed, Status.timeout})
"""Verdicts that earn a snippet one more run, in the same verification.

Multi-process snippets meet torch's own teardown races: a 2-process gloo DDP snippet that had
done all its work aborted at exit ("terminate called without an active exception") in 4 of 96
runs on a loaded 2-core machine, and CI once saw one of the 640 snippets of a cold run under
torch 2.13 hang past its timeout when every one of them had passed in the runs before and
after. A wrong claim (failed) is never retried; a snippet that hangs every time costs its
timeout twice. A result that needed the second run says so in every view of the report."""

CACHEABLE = frozenset({Status.passed, Status.failed})
"""Verdicts that depend only on the code and the versions in the cache key.

Everything else is rerun every time: skips depend on this machine, timeouts on its load, crashes
may come from outside the snippet (the OOM killer, a signal from another process), and an
unexpected exception is too often the environment's (a worker process that aborted at exit, a
file or network that was missing) to be remembered as the code's verdict."""


@dataclass(frozen=True)
class SnippetResult:
    """The verdict on one snippet, with the excerpt that decided it."""

    question_id: str
    snippet_id: str
    status: Status
    duration: float
    """Seconds the snippet ran (for a cached result: when it last ran)."""
    reason: str = ""
    """Why it did not pass: assertion, exception, stdout diff, warning or missing requirement."""
    warnings: tuple[str, ...] = ()
    """Warnings seen while it ran, one line each; only deprecations from its own lines fail it."""
    cached: bool = False
    """True when the verdict was read from the cache instead of running the snippet."""
    recorded: str = ""
    """When the committed verification record vouched for it instead of a run here: the date
    of that record (record.py); else empty."""
    imported_from: str = ""
    """When the verdict was reached on another machine and brought into the cache by `ptbank
    cache import`: the file or folder it came from (not run here); else empty."""
    where: str = ""
    """`path:line` of the snippet in its question file."""
    first_attempt: str = ""
    """When the verdict is from a second run: how the first ended ("error: ..."), else empty."""
    key: str = ""
    """The cache key of the code and expectations under this build (empty for a skip's)."""
    grew_mb: int | None = None
    """MiB of resident memory the snippet used at its peak beyond what its process started
    with (torch's own, inherited): a measure of what its `memory_mb` budget must cover.
    None when not measured."""
    output: str = ""
    """The kept head of its standard output, when the run was asked to keep it (grading)."""
    answers: dict | None = None
    """A variant's `solve` snippet that passed: the answers it computed (variants.py)."""

    @property
    def name(self) -> str:
        return f"{self.question_id}/{self.snippet_id}"


SKIP_PREFIX = "requires "


def skip_reason(requirement: str, why: str) -> str:
    """The reason of a skip; `skip_tag` reads the requirement back for the summary line."""
    return f"{SKIP_PREFIX}{requirement}: {why}"


def skip_tag(reason: str) -> str:
    if reason.startswith(SKIP_PREFIX) and ":" in reason:
        return reason[len(SKIP_PREFIX):].split(":", 1)[0]
    return reason


@dataclass(frozen=True)
class VerifyReport:
    """Everything one verification run found, in bank order."""

    results: tuple[SnippetResult, ...]
    torch_version: str
    python_version: str
    verifier_version: str = ""
    elapsed: float = 0.0
    """Wall-clock seconds of the whole run."""
    jobs: int = 1
    """Snippets that could run at once."""
    zygote_start: float | None = None
    """Seconds until the zygote had imported torch (None when every result came from the cache)."""
    sandboxed: bool = True
    """Whether the snippets ran in the sandbox (cached verdicts too: the mode is in the key)."""
    aborted: str = ""
    """Why the run stopped before every verdict was reached (the verifier's own error), for
    the partial report of such a run; else empty."""
    cpu_capability: str = ""
    """The ATEN_CPU_CAPABILITY snippets ran under (`verify --cpu-capability`); empty: this
    machine's own."""
    threads: int | None = None
    """The intra-op threads each snippet had (None: not known, a report made elsewhere)."""

    @property
    def counts(self) -> dict[str, int]:
        """Status value → number of snippets, with every status present (`not_run` only when
        there is one: in the report of a run that stopped)."""
        tally = Counter(r.status.value for r in self.results)
        return {s.value: tally.get(s.value, 0) for s in Status
                if s is not Status.not_run or tally.get(s.value)}

    @property
    def ok(self) -> bool:
        """The run ended, and nothing failed, errored, timed out or crashed; skips are fine."""
        return not self.aborted and not any(r.status.is_problem for r in self.results)

    @property
    def not_passed(self) -> tuple[SnippetResult, ...]:
        """Every result the table shows: problems, skips, passes that needed a second run, and
        passes imported from another machine (not run here)."""
        return tuple(r for r in self.results
                     if r.status is not Status.passed or r.first_attempt or r.imported_from)
