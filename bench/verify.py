"""Benchmark: ptbank verify against the usual ways of running documentation snippets.

Runs the same snippets (default: tests/fixtures/verify-bench, 24 small realistic ones) four
ways and prints the times side by side:

- ptbank verify, cold (a fresh cache) and cached, each as a CLI subprocess (CLI start included);
- pytest-codeblocks: the snippets as ```python blocks in a Markdown file, `pytest --codeblocks`
  (serial, exec() in the pytest process: fast, but not isolated);
- one fresh interpreter per snippet (isolated, but every snippet imports torch), --jobs at once.

It also prints ptbank's distance from the floor: zygote start + Σ snippet time ÷ jobs, where
zygote start is from its spawn to ready (torch imported) and a snippet's time runs from the
request to its exit as the parent sees it. The methods run interleaved, one of each per round,
and each method's best round counts: these machines are noisy, and drift should hit all alike.

With --by-kind it instead runs a cold `ptbank verify` of the content twice per round, with
spawned ranks forked from the rank server (the default) and with `--fresh-ranks` (each rank
imports torch, as before ranks.py), and prints Σ snippet time by kind (multi-process, compile
and export, plain), the wall time of each run, and whether every verdict agrees.

    .venv/bin/python bench/verify.py [--content DIR] [--jobs N] [--repeat N] [--no-fresh]
    .venv/bin/python bench/verify.py --by-kind --content content [--torch 2.13.0] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ptbank.loader import load_bank
from ptbank.models import Bank
from ptbank.verify.ranks import STARTS_PROCESSES
from ptbank.verify.warm import COMPILES

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CONTENT = ROOT / "tests" / "fixtures" / "verify-bench"


def timed(command: list[str], cwd: Path) -> float:
    """Wall-clock seconds of a command; exit status 1 (some snippet failed) still counts."""
    began = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - began
    if done.returncode not in (0, 1):
        sys.exit(f"bench: {' '.join(command[:4])} … failed ({done.returncode}):\n"
                 f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
    last = (done.stdout.strip().splitlines() or [""])[-1]
    print(f"  ({' '.join(command[1:4])} …: {last})", file=sys.stderr)
    return elapsed


def ptbank_runs(content: Path, jobs: int, work: Path) -> tuple[float, float, dict]:
    """Cold (fresh cache dir) and cached, both as `python -m ptbank verify` subprocesses."""
    cwd = Path(tempfile.mkdtemp(dir=work))
    command = [sys.executable, "-m", "ptbank", "verify", "--content", str(content),
               "--jobs", str(jobs), "--json", "report.json"]
    cold = timed(command, cwd)
    report = json.loads((cwd / "report.json").read_text())["builds"][0]
    cached = timed(command, cwd)
    return cold, cached, report


def codeblocks_markdown(bank: Bank) -> str:
    """The snippets as pytest-codeblocks understands them (expected exceptions and output)."""
    parts = ["# Snippets\n"]
    for question in bank.questions:
        for snippet in question.snippets:
            if snippet.raises:
                parts.append("<!--pytest-codeblocks:expect-exception-->")
            parts.append(f"```python\n{snippet.code.rstrip()}\n```\n")
            if snippet.stdout is not None:
                parts.append("<!--pytest-codeblocks:expected-output-ignore-whitespace-->")
                parts.append(f"```\n{snippet.stdout.strip()}\n```\n")
    return "\n".join(parts)


def codeblocks_run(bank: Bank, work: Path) -> float:
    cwd = Path(tempfile.mkdtemp(dir=work))
    (cwd / "pytest.ini").write_text("[pytest]\n")
    (cwd / "snippets.md").write_text(codeblocks_markdown(bank))
    return timed([sys.executable, "-m", "pytest", "--codeblocks", "-q", "-p", "no:cacheprovider",
                  "snippets.md"], cwd)


def fresh_interpreters(bank: Bank, jobs: int, work: Path) -> float:
    """One `python snippet.py` per snippet, `jobs` at a time (exit codes are not judged)."""
    scripts = []
    for question in bank.questions:
        for snippet in question.snippets:
            folder = Path(tempfile.mkdtemp(dir=work))
            (folder / "snippet.py").write_text(snippet.code)
            scripts.append(folder)
    began = time.perf_counter()
    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(lambda d: subprocess.run([sys.executable, "snippet.py"], cwd=d,
                                               capture_output=True), scripts))
    return time.perf_counter() - began


KINDS = ("multi-process", "compile and export", "plain")
EXPORTS = re.compile(r"torch\.export|torch\.onnx|\bonnx\b")


def kind_of(code: str) -> str:
    if STARTS_PROCESSES.search(code):
        return KINDS[0]
    if COMPILES.search(code) or EXPORTS.search(code):
        return KINDS[1]
    return KINDS[2]


def by_kind(bank: Bank, args, work: Path) -> None:
    """Cold runs with ranks from the server and with fresh ranks, Σ time by kind of each."""
    kinds = {f"{q.id}/{s.id}": kind_of(s.code) for q in bank.questions for s in q.snippets}
    kinds |= {f"{q.id}/solve": kind_of(q.solve) for q in bank.questions if q.solve}
    modes = {"ranks forked from the server": [], "fresh ranks (--fresh-ranks)": []}
    for _ in range(args.repeat):
        for mode, extra in zip(modes, ([], ["--fresh-ranks"])):
            cwd = Path(tempfile.mkdtemp(dir=work))
            command = [sys.executable, "-m", "ptbank", "verify", "--content", str(args.content),
                       "--jobs", str(args.jobs), "--no-cache", "--json", "report.json", *extra,
                       "--torch", args.torch or version("torch").split("+")[0]]
            wall = timed(command, cwd)
            [report] = json.loads((cwd / "report.json").read_text())["builds"]
            modes[mode].append((wall, report))
    best = {mode: min(runs, key=lambda run: run[0]) for mode, runs in modes.items()}
    torch_version = next(iter(best.values()))[1]["torch_version"]
    print(f"ptbank verify by kind: {len(kinds)} snippets, --jobs {args.jobs}, "
          f"{len(os.sched_getaffinity(0))} cores, torch {torch_version}, best of {args.repeat}")
    print(f"  {'kind':<22}{'snippets':>9}" + "".join(f"{mode:>32}" for mode in best)
          + f"{'ratio':>8}")
    sums = {}
    for kind in (*KINDS, "all"):
        row = {mode: [r["duration"] for r in report["results"]
                      if r["status"] != "skipped" and kind in ("all", _kind(kinds, r))]
               for mode, (_, report) in best.items()}
        sums[kind] = [sum(times) for times in row.values()]
        after, before = sums[kind]
        count = len(next(iter(row.values())))
        print(f"  {'Σ ' + kind:<22}{count:>9}" + "".join(f"{t:>30.1f} s" for t in sums[kind])
              + f"{after / before if before else 0:>7.2f}×")
    walls = [wall for wall, _ in best.values()]
    print(f"  {'wall, cold verify':<31}" + "".join(f"{w:>30.1f} s" for w in walls)
          + f"{walls[0] / walls[1]:>7.2f}×")
    verdicts = [{(r["question_id"], r["snippet_id"]): r["status"] for r in report["results"]}
                for _, report in best.values()]
    differ = sorted(f"{q}/{s}: {verdicts[0][q, s]} vs {verdicts[1].get((q, s))}"
                    for q, s in verdicts[0] if verdicts[0][q, s] != verdicts[1].get((q, s)))
    print(f"  verdicts: {'the same for every snippet' if not differ else 'DIFFER'}")
    for line in differ:
        print(f"    {line}")


def _kind(kinds: dict[str, str], result: dict) -> str:
    """The kind of a result's snippet; a variant's ("solve@3") is its question's `solve`."""
    return kinds[f"{result['question_id']}/{result['snippet_id'].split('@')[0]}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--content", type=Path, default=DEFAULT_CONTENT)
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--repeat", type=int, default=3,
                        help="rounds; each method runs once per round, best round counts")
    parser.add_argument("--no-fresh", action="store_true",
                        help="skip the fresh-interpreter run (minutes on a large bank)")
    parser.add_argument("--by-kind", action="store_true",
                        help="Σ snippet time by kind, ranks from the server against fresh ones")
    parser.add_argument("--torch", metavar="VERSION", help="with --by-kind: under this build (default: the pinned one)")
    args = parser.parse_args()
    args.content = args.content.resolve()
    bank = load_bank(args.content)
    if args.by_kind:
        with tempfile.TemporaryDirectory(prefix="ptbank-bench-") as tmp:
            return by_kind(bank, args, Path(tmp))
    count = sum(len(q.snippets) for q in bank.questions)
    runs, codeblocks, fresh = [], [], []
    with tempfile.TemporaryDirectory(prefix="ptbank-bench-") as tmp:
        work = Path(tmp)
        for _ in range(args.repeat):  # interleaved, so that drift in machine speed hits all
            runs.append(ptbank_runs(args.content, args.jobs, work))
            codeblocks.append(codeblocks_run(bank, work))
            if not args.no_fresh:
                fresh.append(fresh_interpreters(bank, args.jobs, work))
    cold, _, report = min(runs, key=lambda r: r[0])
    cached = min(r[1] for r in runs)
    floor = report["zygote_start"] + sum(r["duration"] for r in report["results"]) / args.jobs
    print_table(count, args.jobs, report, cold, cached, min(codeblocks),
                min(fresh) if fresh else None, floor)


def print_table(count, jobs, report, cold, cached, codeblocks, fresh, floor) -> None:
    print(f"ptbank verify bench: {count} snippets, --jobs {jobs}, "
          f"{len(os.sched_getaffinity(0))} cores, torch {report['torch_version']}")
    rows = [("ptbank verify, cold (fresh cache, CLI)", cold, "yes"),
            ("ptbank verify, cached (CLI start incl.)", cached, "yes"),
            ("pytest-codeblocks (serial, in-process)", codeblocks, "no"),
            (f"fresh interpreter per snippet (-j {jobs})", fresh, "yes")]
    print(f"  {'method':<42}{'seconds':>9}{'÷ ptbank cold':>15}  isolated")
    for name, seconds, isolated in (row for row in rows if row[1] is not None):
        print(f"  {name:<42}{seconds:>9.2f}{seconds / cold:>15.2f}  {isolated}")
    snippet_sum = sum(r["duration"] for r in report["results"])
    print(f"  floor = zygote start {report['zygote_start']:.2f} s + Σ snippets "
          f"{snippet_sum:.2f} s ÷ {jobs} = {floor:.2f} s; ptbank cold (CLI start and exit "
          f"included) = {cold / floor:.2f} × floor")
    print(f"  targets: cold ≤ 1.2 × floor: {_yes(cold <= 1.2 * floor)} · "
          f"≥ 1.5 × faster than pytest-codeblocks: {_yes(codeblocks / cold >= 1.5)} "
          f"({codeblocks / cold:.2f}×) · cached < 0.5 s: {_yes(cached < 0.5)}")


def _yes(flag: bool) -> str:
    return "yes" if flag else "NO"


if __name__ == "__main__":
    main()
