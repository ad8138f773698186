"""A compile cache made by ptbank itself, that every sandboxed snippet starts from.

In the sandbox each snippet has a /tmp of its own, and its inductor cache is there: no snippet
can plant a compiled kernel that a later one would load. But a cold cache makes the first
torch.compile of every snippet pay for what all of them share (the C++ prelude of generated
kernels, compiled once per cache: 8 s of a 19 s snippet on this 2-core machine). So while the
first snippets run, ptbank compiles a small training step itself, in a process of its own
outside the sandbox (its own code, no snippet's), into build/cache/compile-warm/<build>/, kept
for later runs. Snippets see that folder read-only and start from a copy of it in their own
/tmp. Standard library only: launch.py imports it before torch is needed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

COMPILES = re.compile(r"torch\.compile|torch\._inductor|aot_compile|aoti_")
"""Snippets that compile with inductor: they start from the warm cache."""
WARM_UP = """\
import torch

model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))


def step(x):
    loss = model(x).pow(2).mean()
    loss.backward()
    return loss


torch.compile(step)(torch.randn(4, 8))
torch.compile(lambda x: (x.sin() * 2).sum())(torch.randn(8))
"""
WARM_UP_TIMEOUT = 600.0


def warm_root(cache_dir: Path) -> Path:
    """Where the warm caches of every build live, beside the verdict cache."""
    return cache_dir.parent / "compile-warm"


class WarmCache:
    """The warm inductor cache of one build: there already, or being made in the background.

    While it is being made, the snippets that do not compile run (runner.py holds the others
    back). It is made in a temporary folder and renamed into place, so that a crash leaves
    none half made; what the warm-up printed goes to `log`. If it fails or takes longer than
    WARM_UP_TIMEOUT, snippets compile from a cold cache, as they would have anyway.
    """

    def __init__(self, python: str, cache_dir: Path, build: str, env: dict[str, str],
                 log: Path):
        root = warm_root(cache_dir)
        self.target = folder(cache_dir, build)
        self._proc: subprocess.Popen | None = None
        self._ready = self.target.is_dir()
        if self._ready:
            return
        root.mkdir(parents=True, exist_ok=True)
        self._staging = Path(tempfile.mkdtemp(prefix=".making-", dir=root))
        self._began = time.monotonic()
        with open(log, "ab") as out:
            self._proc = subprocess.Popen(
                [python, "-c", WARM_UP], stdout=out, stderr=out,
                env={**env, "TORCHINDUCTOR_CACHE_DIR": str(self._staging / "inductor")})

    @property
    def pending(self) -> bool:
        """Whether it is still being made (a look, not a wait)."""
        if self._proc is None:
            return False
        if self._proc.poll() is None and time.monotonic() - self._began < WARM_UP_TIMEOUT:
            return True
        self._finish()
        return False

    def path(self) -> Path | None:
        """The cache to start from, once made; None while pending, or if it failed."""
        return self.target / "inductor" if not self.pending and self._ready else None

    def wait(self) -> None:
        if self._proc is not None:
            try:
                self._proc.wait(max(WARM_UP_TIMEOUT - (time.monotonic() - self._began), 0))
            except subprocess.TimeoutExpired:
                pass
            self._finish()

    def close(self) -> None:
        """Stop a warm-up still running (the run is over or aborted) and leave nothing."""
        if self._proc is not None:
            self._proc.kill()
            self._finish()

    def _finish(self) -> None:
        proc, self._proc = self._proc, None
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        try:
            if proc.returncode == 0:
                _open_to_all(self._staging)  # mkdtemp's and inductor's own files are 0600
                os.rename(self._staging, self.target)
                self._ready = True
        except OSError:
            pass
        finally:
            shutil.rmtree(self._staging, ignore_errors=True)


def folder(cache_dir: Path, build: str) -> Path:
    """The warm cache of one build (`torch-python`, e.g. 2.15.0+cu132-CPython 3.11.7)."""
    return warm_root(cache_dir) / re.sub(r"[^A-Za-z0-9.+-]", "_", build)


def _open_to_all(tree: Path) -> None:
    """Readable by all (snippets run as nobody when ptbank runs as root), writable by none."""
    for path in (tree, *tree.rglob("*")):
        if not path.is_symlink():
            os.chmod(path, 0o555 if path.is_dir() else 0o444)


def needed(codes: Iterable[str]) -> bool:
    return any(COMPILES.search(code) for code in codes)
