"""Benchmark: the memory each torch build holds and needs, side by side.

For the pinned torch and every build content/bank.yaml names (verify_also_with_torch), it
measures, in one run:

- what a zygote maps and holds once it has imported torch and the modules it preloads (VmSize,
  and VmData, the private writable part on which every snippet's `memory_mb` budget sits);
- each snippet's peak resident growth beyond its start (`grew_mb` of
  `ptbank verify --no-cache --json`), and the largest.

Why it exists: a fixed address-space limit of 4 GiB passed every snippet under the CPU build
and broke torch.compile under the CUDA build, which maps several GiB at import without a GPU;
the limit is now on private memory, counted from what the process holds.

    .venv/bin/python bench/memory.py [--content DIR] [--only ID...] [--jobs N]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from ptbank.loader import load_bank
from ptbank.verify.builds import build_for
from ptbank.verify.interpreter import Interpreter
from ptbank.verify.zygote import BASE_PRELOAD

ROOT = Path(__file__).resolve().parent.parent
MAPPED = f"""
import importlib
for name in {BASE_PRELOAD!r}:
    importlib.import_module(name)
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
print(int(status["VmSize"].split()[0]) >> 10, int(status["VmData"].split()[0]) >> 10)
"""


def mapped_after_imports(python: str) -> tuple[int, int]:
    """MiB mapped (VmSize) and held privately (VmData) after the zygote's imports."""
    out = subprocess.run([python, "-c", MAPPED], capture_output=True, text=True, check=True)
    size, data = out.stdout.split()
    return int(size), int(data)


def growth(python: str, content: Path, only: list[str] | None, jobs: int) -> dict:
    """The verify report of one build, run cold in a scratch folder."""
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.json"
        command = [sys.executable, "-m", "ptbank", "verify", "--content", str(content.resolve()),
                   "--python", python, "--no-cache", "--jobs", str(jobs), "--json", str(report)]
        if only:
            command += ["--only", *only]
        subprocess.run(command, cwd=scratch, capture_output=True, text=True)
        return json.loads(report.read_text())["builds"][0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--content", type=Path, default=ROOT / "content")
    parser.add_argument("--only", nargs="+", default=None, metavar="ID",
                        help="question ids to run (default: the whole bank)")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()

    bank = load_bank(args.content)
    builds = [Interpreter.current(), *(build_for(v) for v in bank.meta.verify_also_with_torch)]
    rows = []
    for interpreter in builds:
        size, data = mapped_after_imports(interpreter.python)
        report = growth(interpreter.python, args.content, args.only, args.jobs)
        grown = [r for r in report["results"] if r["grew_mb"] is not None]
        top = max(grown, key=lambda r: r["grew_mb"], default=None)
        rows.append((report["torch_version"], size, data, len(grown), top))

    print(f"{'torch':<16} {'mapped MiB':>10} {'held MiB':>10} {'snippets':>8}  "
          "largest resident growth")
    for torch, size, data, count, top in rows:
        largest = f"{top['grew_mb']} MiB {top['question_id']}/{top['snippet_id']}" if top else "-"
        print(f"{torch:<16} {size:>10} {data:>10} {count:>8}  {largest}")
    if len(rows) > 1:
        base, other = rows[0], rows[1]
        print(f"mapped after imports: {base[0]} / {other[0]} = {base[1] / other[1]:.1f}x")
        if base[4] and other[4]:
            print(f"largest growth: {base[0]} / {other[0]} = "
                  f"{base[4]['grew_mb'] / max(other[4]['grew_mb'], 1):.1f}x")


if __name__ == "__main__":
    main()
