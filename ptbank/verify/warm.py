"""A compile cache made by ptbank itself, that every sandboxed snippet starts from.

In the sandbox each snippet has a /tmp of its own, and its inductor cache is there: no snippet
can plant a compiled kernel that a later one would load. But a cold cache makes the first
torch.compile of every snippet pay for what all of them share (the C++ prelude of generated
kernels, compiled once per cache: 8 s of a 19 s snippet on this 2-core machine). So before the
snippets run, ptbank compiles a small training step itself, in a process of its own outside the
sandbox (its own code, no snippet's), into build/cache/compile-warm/<build>/. Snippets see that
folder read-only and start from a copy of it in their own /tmp. Standard library only: launch.py
imports it before torch is needed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
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


def warm_cache(python: str, cache_dir: Path, build: str, env: dict[str, str],
               log: Path) -> Path | None:
    """The warm inductor cache for `build` (made now if missing); None if it cannot be made.

    Made in a temporary folder and renamed into place, so that a crash leaves none half made;
    what the warm-up printed goes to `log`.
    """
    root = warm_root(cache_dir)
    target = root / re.sub(r"[^A-Za-z0-9.+-]", "_", build)
    if target.is_dir():
        return target / "inductor"
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".making-", dir=root))
    try:
        with open(log, "ab") as out:
            done = subprocess.run([python, "-c", WARM_UP], env={
                **env, "TORCHINDUCTOR_CACHE_DIR": str(staging / "inductor")},
                stdout=out, stderr=out, timeout=WARM_UP_TIMEOUT, check=False)
        if done.returncode != 0:
            return None
        _open_to_all(staging)  # mkdtemp and inductor's own temporary files are 0600/0700
        os.rename(staging, target)
        return target / "inductor"
    except (OSError, subprocess.TimeoutExpired):
        return None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _open_to_all(folder: Path) -> None:
    """Readable by all (snippets run as nobody when ptbank runs as root), writable by none."""
    for path in (folder, *folder.rglob("*")):
        if not path.is_symlink():
            os.chmod(path, 0o555 if path.is_dir() else 0o444)


def needed(codes: Iterable[str]) -> bool:
    return any(COMPILES.search(code) for code in codes)
