"""The verification record: what the release verified, committed beside the content.

Like Quarto's `freeze`: `ptbank verify --record` (make record) writes
content/verification-record.jsonl after a passing run, and `build` and `sheet` accept a
snippet as verified when the record holds a pass for the same snippet key under the same torch
build, Python and verifier as the environment that would run it. Everything else runs here.
`make verify` still runs every snippet, and `ptbank verify --check-record` (CI) fails when the
record says anything a fresh run does not: the record never claims what a run would not confirm.
Both rest on this machine's own runs: a verdict `ptbank cache import` brought in never counts.

One JSON object per line, sorted, so a pull request's diff shows which snippets were
re-verified: first one `build` line per torch build (its Python, verifier, the snippet packages
it had, the date it was recorded), then one `snippet` line per passing snippet and build.
Snippets that need a GPU are never recorded: CI on this machine could not confirm them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ..atomic import write_text_atomic
from ..errors import PtbankError
from ..models import Bank, Question, Snippet
from ..variants import agree, verification_snippets
from .cache import VERIFIER_VERSION, Versions, extra_modules
from .results import SnippetResult, Status, VerifyReport, skip_reason

RECORD_NAME = "verification-record.jsonl"


def record_path(content: Path) -> Path:
    return Path(content) / RECORD_NAME


def snippet_key(snippet: Snippet) -> str:
    """What a recorded verdict depends on in the snippet itself: code, expectations, limits,
    requirements. The build it ran under is recorded beside it, not hashed into it."""
    fields = {"code": snippet.code, "raises": snippet.raises, "match": snippet.match,
              "stdout": snippet.stdout, "requires": sorted(snippet.requires),
              "timeout": snippet.timeout, "memory_mb": snippet.memory_mb}
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def recordable(snippet: Snippet) -> bool:
    """Snippets a CPU machine can confirm: none that needs a GPU."""
    return not any(r == "cuda" or r.startswith("gpus>=") for r in snippet.requires)


class _BuildLine(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)
    torch: str
    python: str
    verifier: str
    recorded: str
    modules: dict[str, str | None] = {}


class _SnippetLine(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)
    snippet: str
    torch: str
    key: str
    verdict: Literal["passed"]
    """Only passes are recorded."""
    answers: dict | None = None
    """A variant's `solve` (`question/solve@3`): the answers it computed under this build."""


@dataclass(frozen=True)
class Record:
    """The record as read: builds by torch version, and snippet keys by (snippet, torch)."""

    builds: dict[str, _BuildLine] = field(default_factory=dict)
    keys: dict[tuple[str, str], str] = field(default_factory=dict)
    answers: dict[tuple[str, str], dict] = field(default_factory=dict)
    """A variant's answers by (solve snippet, torch): what a fresh clone prints it with."""

    # --- reading and writing --------------------------------------------------------------

    @classmethod
    def load(cls, path: Path) -> Record:
        """The record at `path`; an absent file is an empty record, a damaged one an error."""
        try:
            lines = Path(path).read_text("utf-8").splitlines()
        except FileNotFoundError:
            return cls()
        builds, keys, answers = {}, {}, {}
        for number, line in enumerate(lines, 1):
            try:
                data = json.loads(line)
                if "build" in data and len(data) == 1:
                    build = _BuildLine.model_validate(data["build"])
                    builds[build.torch] = build
                else:
                    entry = _SnippetLine.model_validate(data)
                    keys[(entry.snippet, entry.torch)] = entry.key
                    if entry.answers is not None:
                        answers[(entry.snippet, entry.torch)] = entry.answers
            except ValidationError as exc:
                error = exc.errors()[0]
                where = ".".join(map(str, error["loc"]))
                raise _damaged(path, number, f"{where}: {error['msg']}") from None
            except (ValueError, TypeError) as exc:
                raise _damaged(path, number, str(exc)) from None
        return cls(builds, keys, answers)

    def write(self, path: Path) -> None:
        lines = [json.dumps({"build": self.builds[t].model_dump()}, sort_keys=True,
                            ensure_ascii=False) for t in sorted(self.builds)]
        lines += [json.dumps({"snippet": name, "torch": torch, "key": key, "verdict": "passed"}
                             | ({"answers": self.answers[name, torch]}
                                if (name, torch) in self.answers else {}),
                             ensure_ascii=False, sort_keys=False)
                  for (name, torch), key in sorted(self.keys.items())]
        write_text_atomic(Path(path), "\n".join(lines) + "\n")

    # --- using it -------------------------------------------------------------------------

    def vouches_for(self, name: str, snippet: Snippet, versions: Versions,
                    module_version: Callable[[str], str | None]) -> _BuildLine | None:
        """The recorded build that passed this snippet under exactly this environment, if any."""
        build = self.builds.get(versions.torch)
        if (build is None or not recordable(snippet)
                or (build.python, build.verifier) != (versions.python, versions.verifier)
                or self.keys.get((name, versions.torch)) != snippet_key(snippet)):
            return None
        modules = extra_modules(snippet)
        if any(build.modules.get(m, "absent") != module_version(m) for m in modules):
            return None
        return build

    def report_without_running(self, bank: Bank, version: str) -> VerifyReport | None:
        """A report for torch `version` made from the record alone, when it covers every
        snippet a CPU machine can run (those needing a GPU are skipped, as they would be here);
        None when anything would have to run, so that its environment is needed."""
        builds = [b for b in self.builds.values()
                  if b.torch.split("+")[0] == version and b.verifier == VERIFIER_VERSION]
        if len(builds) != 1:
            return None
        build = builds[0]
        results = []
        for question in bank.questions:
            for index, snippet in verification_snippets(question):
                name = f"{question.id}/{snippet.id}"
                where = (bank.where(question.id, "snippets", index) if index >= 0
                         else bank.where(question.id, "solve"))
                if not recordable(snippet):
                    needs = next(r for r in snippet.requires
                                 if r == "cuda" or r.startswith("gpus>="))
                    results.append(SnippetResult(question.id, snippet.id, Status.skipped, 0.0,
                                                 skip_reason(needs, "not run: verified by the "
                                                             "release record"), where=where))
                elif self.keys.get((name, build.torch)) == snippet_key(snippet):
                    results.append(SnippetResult(question.id, snippet.id, Status.passed, 0.0,
                                                 where=where, recorded=build.recorded,
                                                 answers=self.answers.get((name, build.torch))))
                else:
                    return None
        return VerifyReport(tuple(results), build.torch, build.python, build.verifier,
                            sandboxed=True)


def _damaged(path: Path, number: int, why: str) -> PtbankError:
    return PtbankError(f"{path}:{number}: not a verification record line ({why}); restore it "
                       "from git or run `make record`")


def recorded(previous: Record, bank: Bank, reports: Iterable[VerifyReport],
             modules: dict[str, dict[str, str | None]], date: str) -> Record:
    """The record after a passing run: the builds that ran replace their lines; other builds'
    lines are kept. `modules` holds, per torch build, the snippet packages it had."""
    builds = dict(previous.builds)
    keys = dict(previous.keys)
    answers = dict(previous.answers)
    snippets = verified_snippets(bank)
    for report in reports:
        torch = report.torch_version
        keys = {k: v for k, v in keys.items() if k[1] != torch}
        answers = {k: v for k, v in answers.items() if k[1] != torch}
        builds[torch] = _BuildLine(torch=torch, python=report.python_version,
                                   verifier=report.verifier_version, recorded=date,
                                   modules=modules.get(torch, {}))
        for result in report.results:
            snippet = snippets[result.name]
            if (result.status is Status.passed and recordable(snippet)
                    and not result.imported_from):  # the record vouches for runs of its own
                keys[(result.name, torch)] = snippet_key(snippet)
                if result.answers is not None:
                    answers[(result.name, torch)] = result.answers
    return Record(builds, keys, answers)


def disagreements(record: Record, bank: Bank, reports: Iterable[VerifyReport],
                  modules: dict[str, dict[str, str | None]]) -> list[str]:
    """What the record says that these fresh reports do not confirm, or misses; one line each.

    Only the builds in `reports` are compared; other builds' lines are left alone."""
    snippets = verified_snippets(bank)
    questions = {q.id: q for q in bank.questions}
    found = []
    for report in reports:
        torch = report.torch_version
        build = record.builds.get(torch)
        here = (report.python_version, report.verifier_version, modules.get(torch, {}))
        if build is None:
            found.append(f"torch {torch}: not in the record")
            continue
        if (build.python, build.verifier, build.modules) != here:
            found.append(f"torch {torch}: recorded under Python {build.python}, verifier "
                         f"{build.verifier}, {build.modules or 'no packages'}; this run had "
                         f"Python {here[0]}, verifier {here[1]}, {here[2] or 'no packages'}")
        fresh = {r.name: r for r in report.results if recordable(snippets[r.name])}
        claimed = {name: key for (name, t), key in record.keys.items() if t == torch}
        for name in sorted(set(fresh) | set(claimed)):
            result = fresh.get(name)
            if name not in snippets:
                found.append(f"{name} (torch {torch}): recorded, but no such snippet")
            elif result is None:
                continue  # not run this time (--only): nothing to compare
            elif result.imported_from:
                found.append(f"{name} (torch {torch}): its verdict was imported from "
                             f"{result.imported_from}, not run here: the check needs its own")
            elif result.status is not Status.passed:
                if name in claimed:
                    found.append(f"{name} (torch {torch}): recorded as passed, but it "
                                 f"{result.status.value} here")
            elif claimed.get(name) is None:
                found.append(f"{name} (torch {torch}): passed here, missing from the record")
            elif claimed[name] != snippet_key(snippets[name]):
                found.append(f"{name} (torch {torch}): recorded for other code or expectations")
            elif (name, torch) in record.answers or result.answers is not None:
                differ = _answers_differ(questions[name.split("/")[0]],
                                         record.answers.get((name, torch)), result.answers)
                if differ:
                    found.append(f"{name} (torch {torch}): recorded answers differ from this "
                                 f"run's: {differ}")
    return found


def _answers_differ(question: Question, recorded: dict | None, fresh: dict | None) -> str:
    if recorded is None or fresh is None:
        return f"{recorded!r} vs {fresh!r}"
    return "; ".join(agree(question, recorded, fresh))


def verified_snippets(bank: Bank) -> dict[str, Snippet]:
    """Every snippet the verifier runs for the bank, variants included, by name."""
    return {f"{q.id}/{s.id}": s for q in bank.questions for _, s in verification_snippets(q)}
