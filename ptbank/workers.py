"""Rendering artifacts in worker processes, and stopping cleanly however the build ends.

PDFs render in parallel in spawned workers. What must hold when a build is interrupted:

- Ctrl-C: only the main process handles it (workers ignore SIGINT); it kills the workers
  (SIGTERM, then reaped), removes the temporary files of what they were writing, and exits.
  A pool shut down gracefully instead could wait forever on a worker blocked on its pipe.
- The main process killed outright: every worker dies with it (PR_SET_PDEATHSIG), so no
  worker, and hence no resource tracker, is left behind.
- Temporary files left by a killed build (`.<name>.*.part`, see atomic.py) are removed by the
  next build of the same folder, which holds a lock on it so that two builds never share it.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import shutil
import signal
from collections.abc import Callable, Iterator
from multiprocessing import get_context
from pathlib import Path

from .artifacts import STATE_DIR, Artifact

PR_SET_PDEATHSIG = 1
LOCK_NAME = "build.lock"
"""In the output folder's state folder, beside the artifacts' fingerprints."""
ARTIFACT_PREFIXES = ("ptbank", "sheet")
"""Every artifact's name starts with one of these (bank documents, interview sheets)."""


PDF_BYTES_PER_CHAR = 1536
"""Peak memory a PDF process needs per character of its Markdown, rounded up from a measured
1.2 KiB (the advanced answer key in English: 866 K characters, 356 pages, 1085 MiB at peak;
bench/render.py prints it per page). WeasyPrint holds every laid-out page until it writes."""
PDF_BASE_BYTES = 200 << 20
PDF_PEAK_BYTES_MAX = 3 << 29
"""No PDF process needs more (1.5 GiB): a long one is laid out in parts (render/pdf_parts.py).
The whole bank's zh answer key twice over (1136 pages) peaked at 1186 MiB in parts and
3364 MiB laid out whole (bench/render.py --memory-only --copies 2)."""
MEMORY_HEADROOM = 1 << 30


def pdf_workers(stale: list[Artifact], wanted: int) -> int:
    """How many PDFs may render at once: `wanted` (cores, or --jobs), fewer when the machine's
    available memory cannot hold that many of the largest at their peak."""
    pdfs = sorted((len(a.markdown) for a in stale if a.format == "pdf"), reverse=True)
    if not pdfs:
        return 1
    need = min(PDF_BASE_BYTES + PDF_BYTES_PER_CHAR * pdfs[0], PDF_PEAK_BYTES_MAX)
    fits = (available_memory() - MEMORY_HEADROOM) // need
    return max(1, min(wanted, len(pdfs), fits))


def available_memory() -> int:
    """Bytes the kernel says can be allocated without swapping (MemAvailable)."""
    with open("/proc/meminfo") as meminfo:
        for line in meminfo:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 1 << 62  # not Linux: no bound known


def rendered(stale: list[Artifact], workers: int,
             render: Callable[[Artifact], None]) -> Iterator[Artifact]:
    """Render each artifact with `render`; yield each once its file is in place."""
    if workers <= 1:
        for artifact in stale:
            render(artifact)
            yield artifact
        return
    pool = get_context("spawn").Pool(workers, initializer=_worker_setup, initargs=(render,))
    try:
        for index in pool.imap_unordered(_render_one, enumerate(stale)):
            yield stale[index]
        pool.close()
    except BaseException:  # Ctrl-C, a failed render, the consumer gone: the workers go too
        pool.terminate()
        raise
    finally:
        pool.join()
        remove_leftovers(stale)


@contextlib.contextmanager
def process_pool(workers: int) -> Iterator:
    """`workers` spawned processes that stop as the build's workers do (Ctrl-C is this
    process's; they die with it), for `pool.starmap` and the like."""
    pool = get_context("spawn").Pool(workers, initializer=_worker_setup, initargs=(None,))
    try:
        yield pool
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()


@contextlib.contextmanager
def output_lock(artifacts: list[Artifact]):
    """Hold every output folder of `artifacts` for this build; clear what a killed one left."""
    with contextlib.ExitStack() as stack:
        for folder in sorted({a.path.parent for a in artifacts}):
            (folder / STATE_DIR).mkdir(parents=True, exist_ok=True)
            handle = stack.enter_context(open(folder / STATE_DIR / LOCK_NAME, "w"))
            fcntl.flock(handle, fcntl.LOCK_EX)
        for folder in {a.path.parent for a in artifacts}:  # of any artifact, any format
            for prefix in ARTIFACT_PREFIXES:
                for leftover in folder.glob(f".{prefix}-*.part"):
                    _remove(leftover)
        remove_leftovers(artifacts)  # of these artifacts' names (a site's `zh`, say)
        yield


def remove_leftovers(artifacts: list[Artifact]) -> None:
    """Delete the temporary files of `artifacts` that no finished write renamed into place."""
    for artifact in artifacts:
        for leftover in artifact.path.parent.glob(f".{artifact.path.name}.*.part"):
            _remove(leftover)


def _remove(leftover: Path) -> None:
    """A temporary file, or the temporary folder of a folder artifact."""
    if leftover.is_dir() and not leftover.is_symlink():
        shutil.rmtree(leftover, ignore_errors=True)
    else:
        leftover.unlink(missing_ok=True)


_render: Callable[[Artifact], None] | None = None
"""In a worker: the render function the pool was made with."""


def _render_one(task: tuple[int, Artifact]) -> int:
    index, artifact = task
    _render(artifact)
    return index


def _worker_setup(render: Callable[[Artifact], None] | None) -> None:
    global _render
    _render = render
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle
    with contextlib.suppress(OSError, AttributeError):  # not Linux: no parent-death signal
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
