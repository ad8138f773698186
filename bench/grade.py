"""Benchmark: what grading a submission costs, beside what the task's own checks cost.

For each task, side by side and in alternating order each round:
- `ptbank grade TASK reference.py` from the command line (a fresh process: its zygote start
  overlaps loading the bank), its wall-clock seconds, and the seconds the graded program
  itself ran (the task's own run time, from the results JSON);
- `ptbank verify --only TASK/HIDDEN-TEST --no-cache`, the same checks run as the bank runs them.
The target: grading one submission takes under 3 s plus the task's own run time.

Then many submissions at once: a folder of N (the task's reference and its wrong solutions,
repeated), graded by one `ptbank grade TASK FOLDER`, as submissions per minute, beside grading
them one command each.

    .venv/bin/python bench/grade.py [--tasks ID...] [--rounds R] [--batch-task ID] [--batch N]
                                    [--content DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from ptbank.grade.task import grading_task  # noqa: E402
from ptbank.loader import load_bank  # noqa: E402
from wrong_solutions.check import HERE as WRONG, solution_files, wrong_code  # noqa: E402

PTBANK = [sys.executable, "-m", "ptbank"]
CONTENT = ["--content", str(ROOT / "content")]


def timed(command: list[str]) -> float:
    began = time.perf_counter()
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - began
    if result.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed ({result.returncode}):\n{result.stderr}")
    return seconds


def single(task_id: str, bank, scratch: Path, rounds: int) -> dict:
    task = grading_task(bank.question(task_id))
    attempt = scratch / f"{task_id.replace('-', '_')}.py"
    attempt.write_text(task.reference, encoding="utf-8")
    out = scratch / f"{task_id}.json"
    grade = [*PTBANK, "grade", *CONTENT, task_id, str(attempt), "--json", str(out)]
    verify = [*PTBANK, "verify", *CONTENT, "--only", f"{task_id}/{task.test.id}", "--no-cache",
              "--python", sys.executable]  # the pinned build alone, as grading runs
    sides = {"grade": [], "run": [], "verify": []}
    for round_ in range(rounds):
        order = ("grade", "verify") if round_ % 2 == 0 else ("verify", "grade")
        for side in order:
            if side == "grade":
                sides["grade"].append(timed(grade))
                sides["run"].append(json.loads(out.read_text(encoding="utf-8"))["seconds"])
            else:
                sides["verify"].append(timed(verify))
    return {side: statistics.median(values) for side, values in sides.items()}


def batch(task_id: str, bank, scratch: Path, count: int) -> dict:
    task = grading_task(bank.question(task_id))
    codes = [task.reference] + [wrong_code(p, task.reference)
                                for p in solution_files(WRONG / task_id)]
    folder = scratch / "submissions"
    folder.mkdir()
    for index in range(count):
        (folder / f"s{index:03d}.py").write_text(codes[index % len(codes)], encoding="utf-8")
    together = timed([*PTBANK, "grade", *CONTENT, task_id, str(folder), "--json",
                      str(scratch / "r")])
    one_by_one = sum(timed([*PTBANK, "grade", *CONTENT, task_id, str(path), "--json",
                            str(scratch / f"{path.stem}.json")])
                     for path in sorted(folder.glob("*.py"))[:4]) / 4 * count
    return {"together": together, "one_by_one": one_by_one}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", nargs="+",
                        default=["cross-entropy-from-scratch", "rope", "lora-linear"])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--batch-task", default="cross-entropy-from-scratch")
    parser.add_argument("--batch", type=int, default=12)
    parser.add_argument("--content", type=Path, default=ROOT / "content")
    args = parser.parse_args()
    CONTENT[1] = str(args.content.resolve())
    bank = load_bank(args.content)
    with tempfile.TemporaryDirectory(prefix="ptbank-bench-grade-") as scratch:
        print(f"{'task':32} {'grade s':>8} {'own run s':>10} {'overhead s':>11} "
              f"{'verify s':>9} {'grade/verify':>13}")
        for task_id in args.tasks:
            got = single(task_id, bank, Path(scratch), args.rounds)
            print(f"{task_id:32} {got['grade']:8.2f} {got['run']:10.2f} "
                  f"{got['grade'] - got['run']:11.2f} {got['verify']:9.2f} "
                  f"{got['grade'] / got['verify']:13.2f}")
        many = batch(args.batch_task, bank, Path(scratch), args.batch)
        print(f"\n{args.batch} submissions of {args.batch_task}: one command "
              f"{many['together']:.1f} s ({args.batch / many['together'] * 60:.0f} per minute); "
              f"one command each (estimated from 4) {many['one_by_one']:.1f} s "
              f"({args.batch / many['one_by_one'] * 60:.0f} per minute); "
              f"ratio {many['one_by_one'] / many['together']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
