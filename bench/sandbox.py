"""Benchmark: what the sandbox costs a cold verification, measured side by side.

Verifies the same snippets cold (no verdict cache, and a fresh torch.compile cache, as in a
fresh clone) under the pinned torch, in the sandbox and without it, alternating which goes
first in each round so that machine load falls on both alike, and prints each run's seconds,
the snippets whose time differs most, and the ratio of the totals. The target: a cold verify
of the real bank costs at most 10 % more in the sandbox.

    .venv/bin/python bench/sandbox.py [--content DIR] [--only ID...] [--jobs N] [--rounds R]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from ptbank.loader import load_bank
from ptbank.verify import verify_bank

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--content", type=Path, default=ROOT / "content")
    parser.add_argument("--only", nargs="+", default=None, metavar="ID")
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    bank = load_bank(args.content)
    totals = {True: 0.0, False: 0.0}
    durations: dict[bool, dict[str, float]] = {True: {}, False: {}}
    for round_number in range(args.rounds):
        order = (True, False) if round_number % 2 == 0 else (False, True)
        for sandboxed in order:
            with tempfile.TemporaryDirectory() as cache:
                # cold compile caches on both sides (the sandbox keeps its own in its /tmp)
                os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(Path(cache) / "inductor")
                report = verify_bank(bank, jobs=args.jobs, only=args.only, use_cache=False,
                                     cache_dir=Path(cache), progress=False, sandbox=sandboxed)
            counts = ", ".join(f"{n} {s}" for s, n in report.counts.items() if n)
            print(f"round {round_number + 1}, {'sandbox   ' if sandboxed else 'no sandbox'}: "
                  f"{report.elapsed:7.1f} s  ({counts})", flush=True)
            totals[sandboxed] += report.elapsed
            for result in report.results:
                durations[sandboxed][result.name] = (durations[sandboxed].get(result.name, 0)
                                                     + result.duration)
    gaps = sorted(durations[True], key=lambda n: durations[False][n] - durations[True][n])
    print("largest differences (seconds summed over the rounds, sandbox vs no sandbox):")
    for name in gaps[:8]:
        print(f"  {durations[True][name]:7.1f} {durations[False][name]:7.1f}  {name}")
    print(f"sandbox / no sandbox: {totals[True] / totals[False]:.3f} "
          f"({totals[True]:.1f} s / {totals[False]:.1f} s, {len(report.results)} snippets, "
          f"torch {report.torch_version})")


if __name__ == "__main__":
    main()
