"""Benchmark: what each snippet's own sandbox costs a cold verification, measured side by side.

Verifies the same snippets cold (no verdict cache, fresh compile caches) with this tree three
ways: fenced (each snippet in its own namespaces, confine.py, inside bubblewrap: what verify
does), bubblewrap only (the same verifier with the per-snippet fence switched off, so that
snippets share the sandbox's /tmp, HOME, compile caches, PID and network namespaces, as before
confine.py), and with no sandbox at all. The sides alternate which goes first in each round, so
that machine load falls on all alike. It prints each run's seconds, the per-snippet cost of the
fence (a snippet that does nothing, run many times), the snippets whose time differs most, and
the ratios of the totals. The target: the fence costs a cold verify of the real bank at most
15 %.

    .venv/bin/python bench/sandbox.py [--every N] [--only ID...] [--jobs N] [--rounds R]
                                      [--empty K] [--sides SIDE...]

--every N verifies every N-th question of the bank (all of them by default); each side runs in
a process of its own. The fence is switched off by the bench alone (RUN_ONE), never by an
option of verify: an earlier revision of ptbank cannot be the baseline, as it neither reads
today's content nor has the rank server (which would count as the fence's gain).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIDES = ("fenced", "bubblewrap only", "no sandbox")
RUN_ONE = textwrap.dedent("""\
    import json, sys, tempfile
    from pathlib import Path
    from ptbank.loader import load_bank
    from ptbank.verify import verify_bank
    content, only, jobs, sandbox, fence = json.loads(sys.argv[1])
    if not fence:  # the bench's baseline: the zygote is told no fence, so none is entered
        from ptbank.verify import launch
        unfenced = launch.Zygote.wait_ready
        def wait_ready(self, *args, **kwargs):
            self.fence = None
            return unfenced(self, *args, **kwargs)
        launch.Zygote.wait_ready = wait_ready
    with tempfile.TemporaryDirectory() as scratch:  # its compile-warm/ beside: cold too
        report = verify_bank(load_bank(Path(content)), jobs=jobs, only=only, use_cache=False,
                             cache_dir=Path(scratch) / "verify", progress=False,
                             sandbox=sandbox)
    print(json.dumps({"elapsed": report.elapsed, "counts": report.counts,
                      "torch": report.torch_version,
                      "durations": {r.name: r.duration for r in report.results}}))
    """)
EMPTY_BANK = {
    "bank.yaml": "title: {zh: 空片段, en: Empty snippets}\nversion: 0.0.1\n",
    "topics.yaml": "empty: {zh: 空, en: Empty}\n",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--content", type=Path, default=ROOT / "content")
    parser.add_argument("--every", type=int, default=1, metavar="N")
    parser.add_argument("--only", nargs="+", default=None, metavar="ID")
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--sides", nargs="+", choices=SIDES, default=list(SIDES),
                        help="which to run (the first two are the comparison that counts)")
    parser.add_argument("--empty", type=int, default=40, metavar="K",
                        help="snippets that do nothing, for the per-snippet cost (0: skip)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ptbank-bench-", dir="/var/tmp") as scratch:
        sides = {"fenced": (True, True), "bubblewrap only": (True, False),
                 "no sandbox": (False, False)}
        only = args.only or _every(args.content, args.every)
        if args.empty:
            empty = _empty_bank(Path(scratch) / "empty", args.empty)
            _compare(sides, args.sides, empty, None, args.jobs, 1,
                     "snippets that do nothing", per_snippet=args.empty)
        _compare(sides, args.sides, args.content, only, args.jobs, args.rounds, "the bank")


def _compare(ways: dict, sides: list[str], content: Path, only: list[str] | None,
             jobs: int | None, rounds: int, what: str, per_snippet: int = 0) -> None:
    totals = dict.fromkeys(sides, 0.0)
    durations: dict[str, dict[str, float]] = {side: {} for side in sides}
    for number in range(rounds):
        order = sides if number % 2 == 0 else list(reversed(sides))
        for side in order:
            run = _run(content, only, jobs, *ways[side])
            counts = ", ".join(f"{n} {s}" for s, n in run["counts"].items() if n)
            print(f"{what}, round {number + 1}, {side:14}: {run['elapsed']:7.1f} s  ({counts})",
                  flush=True)
            totals[side] += run["elapsed"]
            for name, seconds in run["durations"].items():
                durations[side][name] = durations[side].get(name, 0.0) + seconds
    if per_snippet:
        for side in sides:
            mean = sum(durations[side].values()) / max(len(durations[side]), 1)
            print(f"  {side:14}: {1000 * mean:6.1f} ms a snippet that does nothing")
    elif len(sides) > 1:
        first, second = sides[:2]
        gaps = sorted(durations[first], key=lambda n: (durations[second].get(n, 0)
                                                       - durations[first][n]))
        print(f"  largest differences (seconds, {first} vs {second}):")
        for name in gaps[:8]:
            print(f"    {durations[first][name]:7.1f} {durations[second].get(name, 0):7.1f}  "
                  f"{name}")
    for other in sides[1:]:
        print(f"  {sides[0]} / {other}: {totals[sides[0]] / totals[other]:.3f} "
              f"({totals[sides[0]]:.1f} s / {totals[other]:.1f} s, torch {run['torch']})",
              flush=True)


def _run(content: Path, only, jobs, sandbox: bool, fence: bool) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", RUN_ONE,
                           json.dumps([str(content), only, jobs, sandbox, fence])],
                          cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"bench: a run failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _every(content: Path, step: int) -> list[str] | None:
    if step <= 1:
        return None
    from ptbank.loader import load_bank

    return [q.id for q in load_bank(content).questions][::step]


def _empty_bank(folder: Path, count: int) -> Path:
    for name, text in EMPTY_BANK.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    snippets = "".join(f"  - id: s{i}\n    code: |\n      pass\n" for i in range(count))
    (folder / "empty").mkdir()
    (folder / "empty" / "does-nothing.yaml").write_text(
        "id: does-nothing\ntopic: empty\nlevel: beginner\nkind: concept\nminutes: 1\n"
        "zh: {title: 什么也不做, question: 什么也不做？, answer: 是。, rubric: [是]}\n"
        "en: {title: Does nothing, question: Does it do nothing?, answer: It does., "
        "rubric: [it does]}\n" + "snippets:\n" + snippets, encoding="utf-8")
    return folder


if __name__ == "__main__":
    main()
