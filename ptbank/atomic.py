"""Atomic writes: a crash or Ctrl-C never leaves a half-written file under its final name."""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(final: Path):
    """Yield a temporary path beside `final`; rename it onto `final` only if the block succeeds."""
    final.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{final.name}.", suffix=".part", dir=final.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, final)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def atomic_folder(final: Path):
    """Yield a temporary folder beside `final`; swap it in for `final` only if the block
    succeeds. The old folder is renamed aside first, so `final` is at every moment either
    the old whole folder, absent for an instant, or the new whole folder — never half of one."""
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".part", dir=final.parent))
    try:
        yield tmp
        os.chmod(tmp, 0o755)
        if final.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".part",
                                        dir=final.parent))
            os.replace(final, old)  # onto an empty folder: a rename
            os.replace(tmp, final)
            shutil.rmtree(old)
        else:
            os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_bytes_atomic(final: Path, data: bytes) -> None:
    with atomic_path(final) as tmp:
        tmp.write_bytes(data)


def write_text_atomic(final: Path, text: str) -> None:
    write_bytes_atomic(final, text.encode("utf-8"))
