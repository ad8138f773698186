"""`ptbank verify`, `ptbank drift`: load, verify under each build, print, write the reports.

Only light modules are imported at the top: on a cold cache the zygote starts first, and the
heavier imports below (pydantic, the loader) happen while it imports torch.
"""

from __future__ import annotations

import os
import sys
from contextlib import nullcontext

from ..errors import EXIT_FAILED
from .launch import DEFAULT_CACHE, CpuSetting, HeadStart


def run_verify_command(args) -> int:
    """Exit status 0 when every snippet that can run here passed under every build, else 1."""
    cpu = CpuSetting(getattr(args, "cpu_capability", None), getattr(args, "threads", None))
    # the head start is for the pinned build, which every run without --torch/--python needs
    # (natively: its zygote has this machine's CPU capability)
    with (HeadStart(DEFAULT_CACHE, use_cache=not args.no_cache, sandboxed=args.sandbox)
          if not (args.torch or args.python or cpu.capability) else nullcontext()) as head_start:
        from ..loader import load_bank
        from .builds import interpreters_for
        from .core import VerificationAborted, verify_bank

        bank = load_bank(args.content)
        interpreters = interpreters_for(torch=args.torch, python=args.python,
                                        declared=bank.meta.verify_also_with_torch, log=_note)
        runs = []
        try:
            for interpreter in interpreters:
                # what the record says and what CI checks of it rest on this machine's runs
                runs.append((interpreter, verify_bank(
                    bank, jobs=args.jobs, only=args.only, use_cache=not args.no_cache,
                    head_start=head_start, interpreter=interpreter, sandbox=args.sandbox,
                    imported=not (args.record or args.check_record),
                    fresh_ranks=args.fresh_ranks, cpu=cpu)))
        except VerificationAborted as exc:  # the reports still say what was decided, then
            _report(args, [report for _, report in runs] + [exc.report])  # the error's exit
            raise
    reports = [report for _, report in runs]
    _report(args, reports)
    ok = all(r.ok for r in reports)
    if args.check_record and not _record_agrees(bank, runs, args.content):
        return EXIT_FAILED
    if args.record and ok:
        _write_record(bank, runs, args.content)
    return 0 if ok else EXIT_FAILED


def _report(args, reports) -> None:
    """Print each build's report and write the --json and --junit files asked for."""
    from ..atomic import write_text_atomic
    from .report import print_report, to_json, to_junit

    console = _console()
    for report in reports:
        print_report(report, console)
    if args.json:
        write_text_atomic(args.json, to_json(reports))
    if args.junit:
        write_text_atomic(args.junit, to_junit(reports))


def _snippet_packages(bank, interpreter) -> dict[str, str | None]:
    """Versions of every third-party module the bank's snippets need, in this interpreter."""
    from .cache import extra_modules

    names = sorted({m for q in bank.questions for s in q.snippets for m in extra_modules(s)})
    return {name: interpreter.module_version(name) for name in names}


def _write_record(bank, runs, content) -> None:
    from ..render.document import build_date
    from .record import Record, record_path, recorded

    path = record_path(content)
    modules = {r.torch_version: _snippet_packages(bank, i) for i, r in runs}
    new = recorded(Record.load(path), bank, [r for _, r in runs], modules, build_date())
    new.write(path)
    for _, report in runs:
        count = sum(1 for (_, torch) in new.keys if torch == report.torch_version)
        _note(f"recorded: {count} passing snippets under torch {report.torch_version} "
              f"in {path} (commit it)")


def _record_agrees(bank, runs, content) -> bool:
    from .record import Record, disagreements, record_path

    path = record_path(content)
    modules = {r.torch_version: _snippet_packages(bank, i) for i, r in runs}
    found = disagreements(Record.load(path), bank, [r for _, r in runs], modules)
    if not found:
        _note(f"record: {path} agrees with this run")
        return True
    _note(f"record is stale: run `make record` and commit {path}")
    for line in found[:20]:
        _note(f"  {line}")
    if len(found) > 20:
        _note(f"  ... and {len(found) - 20} more")
    return False


def run_drift_command(args) -> int:
    """Exit status 0 when every difference between the two builds is explained, else 1."""
    from ..atomic import write_text_atomic
    from ..errors import PtbankError
    from ..loader import load_bank
    from .builds import build_for
    from .core import verify_bank
    from .drift import compare, print_drift, to_json, unexplained
    from .interpreter import Interpreter

    bank = load_bank(args.content)
    pinned, declared = Interpreter.current(), bank.meta.verify_also_with_torch
    other = Interpreter(args.python) if args.python else None
    if other is None and args.torch:
        other = build_for(args.torch, log=_note)
        if other.is_current and declared:  # the pinned build itself: compare it with the next
            _note(f"ptbank: torch {args.torch} is the pinned build; comparing it with "
                  f"torch {declared[0]}")
            other = None
    if other is None and declared:
        other = build_for(declared[0], log=_note)
    if other is None or other.is_current:
        raise PtbankError("drift: name another build with --torch VERSION or --python PATH")
    reports = [verify_bank(bank, jobs=args.jobs, only=args.only, interpreter=interpreter,
                           use_cache=not args.no_cache, progress=sys.stderr.isatty(),
                           sandbox=args.sandbox, fresh_ranks=args.fresh_ranks)
               for interpreter in (pinned, other)]
    drifts = compare(*reports, bank.meta.explained_drift)
    print_drift(reports, drifts, _console())
    if args.json:
        write_text_atomic(args.json, to_json(reports, drifts))
    return EXIT_FAILED if unexplained(drifts) else 0


def _console():
    from rich.console import Console

    wide = sys.stdout.isatty() or "COLUMNS" in os.environ
    return Console(file=sys.stdout, highlight=False, width=None if wide else 120)


def _note(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
