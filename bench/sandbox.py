"""Benchmark: what each snippet's own sandbox costs a cold verification, measured side by side.

Verifies the same snippets cold (no verdict cache, fresh compile caches) with this tree and
with an earlier revision of ptbank (by default the last one before confine.py, when snippets
shared the sandbox's /tmp, HOME, compile caches, PID and network namespaces), and with no
sandbox at all; the sides alternate which goes first in each round, so that machine load falls
on all alike. It prints each run's seconds, the per-snippet cost of the fence (a snippet that
does nothing, run many times), the snippets whose time differs most, and the ratios of the
totals. The target: the fence costs a cold verify of the real bank at most 15 %.

    .venv/bin/python bench/sandbox.py [--against REV] [--every N] [--only ID...] [--jobs N]
                                      [--rounds R] [--empty K] [--sides SIDE...]

--every N verifies every N-th question of the bank (all of them by default); each side runs in
a process of its own, importing ptbank from its own tree.
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
SIDES = ("fenced", "shared sandbox", "no sandbox")
RUN_ONE = textwrap.dedent("""\
    import json, sys, tempfile
    from pathlib import Path
    from ptbank.loader import load_bank
    from ptbank.verify import verify_bank
    content, only, jobs, sandbox = json.loads(sys.argv[1])
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
    parser.add_argument("--against", default=None, help="the revision to compare with")
    parser.add_argument("--every", type=int, default=1, metavar="N")
    parser.add_argument("--only", nargs="+", default=None, metavar="ID")
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--sides", nargs="+", choices=SIDES, default=list(SIDES),
                        help="which to run (the first two are the comparison that counts)")
    parser.add_argument("--empty", type=int, default=40, metavar="K",
                        help="snippets that do nothing, for the per-snippet cost (0: skip)")
    args = parser.parse_args()
    against = args.against or _before_the_fence()
    # not under /tmp: the earlier sandbox hid /tmp, and a tree there from its zygote
    with tempfile.TemporaryDirectory(prefix="ptbank-bench-", dir="/var/tmp") as scratch:
        old_tree = Path(scratch) / "old"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q",
                        str(old_tree), against], check=True)
        try:
            trees = {"fenced": (ROOT, True), "shared sandbox": (old_tree, True),
                     "no sandbox": (ROOT, False)}
            only = args.only or _every(args.content, args.every)
            if args.empty:
                empty = _empty_bank(Path(scratch) / "empty", args.empty)
                _compare(trees, args.sides, empty, None, args.jobs, 1,
                         "snippets that do nothing", per_snippet=args.empty)
            _compare(trees, args.sides, args.content, only, args.jobs, args.rounds, "the bank")
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(old_tree)], check=False)
    print(f"(compared with {against[:12]})")


def _compare(trees: dict, sides: list[str], content: Path, only: list[str] | None,
             jobs: int | None, rounds: int, what: str, per_snippet: int = 0) -> None:
    totals = dict.fromkeys(sides, 0.0)
    durations: dict[str, dict[str, float]] = {side: {} for side in sides}
    for number in range(rounds):
        order = sides if number % 2 == 0 else list(reversed(sides))
        for side in order:
            tree, sandbox = trees[side]
            run = _run(tree, content, only, jobs, sandbox)
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


def _run(tree: Path, content: Path, only, jobs, sandbox: bool) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", RUN_ONE,
                           json.dumps([str(content), only, jobs, sandbox])],
                          cwd=tree, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"bench: the run in {tree} failed:\n{done.stderr[-3000:]}")
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


def _before_the_fence() -> str:
    added = subprocess.run(["git", "-C", str(ROOT), "log", "--diff-filter=A", "--format=%H",
                            "--", "ptbank/verify/confine.py"], capture_output=True, text=True,
                           check=True).stdout.split()
    if not added:
        sys.exit("bench: confine.py is not in this history; pass --against REV")
    return f"{added[-1]}^"


if __name__ == "__main__":
    main()
