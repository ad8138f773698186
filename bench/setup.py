"""Set-up benchmark: what a fresh clone costs until `make pdf LEVEL=advanced` has printed.

Run: .venv/bin/python bench/setup.py [--wheels DIR] [--skip-pip]

1. requirements.lock into a new virtual environment, side by side, after the packages are
   downloaded (outside the timing): pip from a folder of the downloaded wheels (`pip download`
   brings --wheels up to date first) and uv from its package cache (tools/install-venv.sh's way); ratio.
2. In a fresh clone of HEAD: `make setup` (venv, packages, system packages), then
   `make pdf LEVEL=advanced`, each timed, and the build's own lines (verification, rendering).
   Target: the two together under 90 s.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements.lock"


def timed(command: list[str], cwd: Path | None = None) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "200"})  # the build's lines unwrapped
    elapsed = time.perf_counter() - started
    if done.returncode:
        sys.exit(f"failed: {' '.join(command)}\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return elapsed, done.stdout + done.stderr


def install_side_by_side(tmp: Path, wheels: Path) -> None:
    print(f"downloading the lock's wheels into {wheels} (not timed) ...", flush=True)
    timed([sys.executable, "-m", "pip", "download", "-q", "-d", str(wheels), "-r", str(LOCK)])
    uv = [sys.executable, "-m", "uv", "pip", "install", "-q", "-r", str(LOCK)]
    timed([*uv, "--python", str(_venv(tmp / "warm"))])  # fills uv's cache (not timed)
    pip_s, _ = timed([str(_venv(tmp / "pip")), "-m", "pip", "install", "-q", "--no-index",
                      "--find-links", str(wheels), "-r", str(LOCK)])
    uv_s, _ = timed([*uv, "--python", str(_venv(tmp / "uv"))])
    print(f"install the lock, pip from downloaded wheels {pip_s:7.1f} s")
    print(f"install the lock, uv from its cache          {uv_s:7.1f} s")
    print(f"ratio pip / uv                               {pip_s / uv_s:7.1f} x")


def _venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    return path / "bin" / "python"


def fresh_clone_pdf(tmp: Path) -> None:
    clone = tmp / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    env_note = "" if os.geteuid() == 0 else " (not root: system packages must be present)"
    setup_s, _ = timed(["make", "setup"], cwd=clone)
    pdf_s, output = timed(["make", "pdf", "LEVEL=advanced"], cwd=clone)
    print(f"fresh clone: make setup                      {setup_s:7.1f} s{env_note}")
    print(f"fresh clone: make pdf LEVEL=advanced         {pdf_s:7.1f} s")
    for line in output.splitlines():
        if re.match(r"(verified:|ptbank: \d+ written)", line):
            print(f"    {line}")
    print(f"together                                     {setup_s + pdf_s:7.1f} s   (target < 90)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheels", type=Path, default=Path(tempfile.gettempdir()) / "ptbank-wheels",
                        help="folder of the lock's downloaded wheels, for pip (filled when empty)")
    parser.add_argument("--skip-pip", action="store_true", help="only the fresh-clone part")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ptbank-setup-") as tmp:
        if not args.skip_pip:
            install_side_by_side(Path(tmp), args.wheels)
        fresh_clone_pdf(Path(tmp))


if __name__ == "__main__":
    main()
