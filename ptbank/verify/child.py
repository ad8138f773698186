"""A freshly forked snippet process: fence itself in, run the snippet as `__main__`, report.

Runs only inside the zygote's children, where torch is already imported; fds 1 and 2 are pipes
the zygote reads. The report is JSON written to the report pipe as the very last step, so a
process that dies or exits early sends none, and the parent can tell "finished" from "vanished"
(os._exit(0) is never a pass).
"""

from __future__ import annotations

import contextlib
import faulthandler
import io
import json
import os
import random
import resource
import runpy
import shutil
import signal
import sys
import traceback
import warnings
from typing import NoReturn

FILE_SIZE_LIMIT = 1 << 30
"""Largest file a snippet may write: a backstop against filling the disk."""
STACK_SIGNAL = signal.SIGUSR2
"""Asks a snippet's process for its Python stack (faulthandler, on its stderr): the parent
sends it when the snippet's time is up, before killing it, so a timeout says where it hung."""
MESSAGE_LIMIT = 4000
MAX_WARNINGS = 50


def run(request: dict, report_fd: int) -> NoReturn:
    """Run the snippet described by `request` in this (forked) process, report, then _exit."""
    me = os.getpid()
    os.setpgid(0, 0)  # own group: the parent kills it whole, grandchildren included
    out, err = _text_stream(1), _text_stream(2)
    at_start = _limit(request["memory_mb"])
    faulthandler.enable(file=err, all_threads=True)
    faulthandler.register(STACK_SIGNAL, file=err, all_threads=True)
    _write_script(request["script"], request["code"])
    if request.get("warm_cache"):
        _copy_warm_cache(request["warm_cache"], os.environ["TORCHINDUCTOR_CACHE_DIR"])
    if request.get("rank_server"):  # before the thread count and the seeds: as a new process
        from .ranks import serve_spawn_from_fork
        serve_spawn_from_fork()
    _seed(request["seed"], request["threads"])
    report = _execute(request["script"])
    if os.getpid() == me:  # a grandchild forked by the snippet must not report for it
        for stream in (out, err):
            with contextlib.suppress(ValueError, OSError):  # the snippet may have closed it
                stream.flush()
        report["resident"] = {"at_start": at_start, "peak": _vm_kib("VmHWM")}
        _send_report(report_fd, report)
    os._exit(0)


def _write_script(script: str, code: str) -> None:
    """The snippet's code, handed over in the request, written where it runs from: its cwd.

    In the sandbox that is the snippet's private /tmp, which nothing else can see; no file of
    the parent's is read, so nothing another snippet left running could have rewritten it.
    """
    folder = os.path.dirname(script)
    os.makedirs(folder, exist_ok=True)
    with open(script, "w", encoding="utf-8") as handle:
        handle.write(code)
    os.chdir(folder)


def _copy_warm_cache(source: str, target: str) -> None:
    """The warm compile cache (warm.py), copied into the snippet's own: writable, as inductor
    needs it, and whatever the snippet writes there stays in its own /tmp."""
    for folder, _, files in os.walk(source):
        into = os.path.join(target, os.path.relpath(folder, source))
        os.makedirs(into, exist_ok=True)
        for name in files:
            shutil.copyfile(os.path.join(folder, name), os.path.join(into, name))


def _text_stream(fd: int) -> io.TextIOWrapper:
    """sys.stdout or sys.stderr on `fd`, line-buffered as on the terminal it was written at.

    So print() and output from subprocesses or C code on the same fd interleave in the order
    they happened.
    """
    stream = io.TextIOWrapper(io.BufferedWriter(io.FileIO(fd, "w", closefd=False)),
                              encoding="utf-8",
                              errors="backslashreplace", line_buffering=True)
    setattr(sys, ("stdout", "stderr")[fd - 1], stream)
    return stream


def _limit(memory_mb: int) -> int | None:
    """Fence the process in; return its resident KiB at the start (its peak is reset to it).

    The memory limit is on private writable memory (RLIMIT_DATA): what the forked process
    already holds (torch's heap, inherited from the zygote) plus the snippet's budget of
    `memory_mb`. It stops a runaway allocation, whether `bytearray`, numpy or torch's CPU
    allocator, and leaves alone what is not memory: shared libraries, and the address space
    the CUDA runtime reserves but does not commit. An address-space limit (RLIMIT_AS) could do
    neither: after the zygote's imports the CUDA build of torch 2.15.0 maps 3.3 GiB without a
    GPU (0.7 GiB for the CPU build of 2.13.0), and on a GPU machine CUDA could not start under
    it at all ("out of memory" from cudaGetDeviceCount on an H200).
    """
    held = _vm_kib("VmData")
    if held is not None:
        size = (held << 10) + (memory_mb << 20)
        resource.setrlimit(resource.RLIMIT_DATA, (size, size))
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT, FILE_SIZE_LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    with contextlib.suppress(OSError):  # reset VmHWM, the peak resident size, to the current
        with open("/proc/self/clear_refs", "w", encoding="ascii") as refs:
            refs.write("5")
    return _vm_kib("VmRSS")


def _vm_kib(field: str) -> int | None:
    """A `Vm*` figure of /proc/self/status in KiB; None where there is no /proc."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _seed(seed: int, threads: int) -> None:
    """Same random numbers on every run; a thread count that fits the parallel children.

    Setting the thread count here, in the child, is safe: the fork hazard is an OpenMP pool
    that already exists in the zygote, and the zygote never runs an op.
    """
    import torch

    random.seed(seed)
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(threads)


class _WarningLog:
    """Every distinct warning (category, message, location) once, with how often it came."""

    def __init__(self) -> None:
        self.seen: dict[tuple, dict] = {}

    def show(self, message, category, filename, lineno, file=None, line=None) -> None:
        key = (category, str(message), filename, lineno)
        if key in self.seen:
            self.seen[key]["count"] += 1
        elif len(self.seen) < MAX_WARNINGS:
            self.seen[key] = {"category": category.__name__,
                              "types": [c.__name__ for c in category.__mro__],
                              "message": str(message)[:MESSAGE_LIMIT],
                              "filename": filename, "lineno": lineno, "count": 1}


def _execute(script: str) -> dict:
    sys.argv = [script]
    sys.path[0] = os.path.dirname(script)
    log = _WarningLog()
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = log.show
        try:
            runpy.run_path(script, run_name="__main__")
            outcome = {"outcome": "completed"}
        except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt: verdicts too
            outcome = {"outcome": "raised", "exception": _describe(exc, script)}
    return outcome | {"warnings": list(log.seen.values())}


def _describe(exc: BaseException, script: str) -> dict:
    """The exception as data: class names (for `raises`), message (for `match`), where it began."""
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if f.filename == script]
    deepest = frames[-1] if frames else None
    try:
        message = str(exc)
    except Exception:  # noqa: BLE001 - a broken __str__ must not lose the verdict
        message = f"<unprintable {type(exc).__name__}>"
    mro = type(exc).__mro__
    return {
        "name": type(exc).__name__,
        "types": [c.__name__ for c in mro] + [f"{c.__module__}.{c.__qualname__}" for c in mro],
        "message": message[:MESSAGE_LIMIT],
        "line": own[-1].lineno if own else None,
        "source": (own[-1].line or "") if own else "",
        "origin": (f"{deepest.filename}:{deepest.lineno} in {deepest.name}"
                   if deepest and deepest.filename != script else ""),
        "exit_code": _exit_code(exc),
    }


def _exit_code(exc: BaseException) -> int | str | None:
    if not isinstance(exc, SystemExit):
        return None
    code = exc.code
    return code if code is None or isinstance(code, int) else str(code)


def _send_report(fd: int, report: dict) -> None:
    data = json.dumps(report).encode("ascii")  # ASCII: a lone surrogate travels escaped
    with contextlib.suppress(OSError):  # the zygote is gone: nobody is left to tell
        while data:
            data = data[os.write(fd, data):]
