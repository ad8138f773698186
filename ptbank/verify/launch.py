"""Starting, talking to and stopping the zygote process; and starting it early when that pays.

This module stays light (no pydantic, no torch): `ptbank verify` imports it first, so that on a
cold cache the zygote can begin its second of importing torch while ptbank itself is still
importing its models and reading the bank.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import ptbank

from ..errors import EXIT_FAILED, PtbankError
from .proctree import kill_tree
from .facts import import_path
from .sandbox import kept_in_tmp, unavailable_because, visible_paths, wrap
from .warm import warm_root

DEFAULT_CACHE = Path("build/cache/verify")
CLOSE_TIMEOUT = 3.0
"""Seconds the zygote has to kill its snippets and exit once told to."""
READY_TIMEOUT = 300.0
"""Seconds the zygote may take to import torch (minutes on a cold disk under load)."""


CPU_ENV = {
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2",
             "MKL_ENABLE_INSTRUCTIONS": "AVX2"},
    "default": {"ATEN_CPU_CAPABILITY": "default", "ONEDNN_MAX_CPU_ISA": "SSE41",
                "MKL_ENABLE_INSTRUCTIONS": "SSE4_2"},
}
"""What `verify --cpu-capability` sets for snippets: an x86-64 CPU with AVX2 and no AVX-512
(most AMD EPYC before Zen 4, many desktops), or one with no vector ISA torch uses. ATen picks
its kernels by ATEN_CPU_CAPABILITY and Inductor its vector ISA; oneDNN and MKL (the BLAS) are
capped to the same ISA, else they still take this machine's AVX-512 and AMX paths, which an
avx2 ATen kernel cannot follow (SDPA in bf16 raises "pack_vnni2 is only supported when avx512
is supported", which no AVX2 CPU ever does). A capability above this machine's falls back to
what it has."""
CPU_CAPABILITIES = tuple(CPU_ENV)


@dataclass(frozen=True)
class CpuSetting:
    """The CPU snippets run as if on: a capability (None: this machine's own) and the intra-op
    thread count each snippet gets (None: the cores divided among the jobs)."""

    capability: str | None = None
    threads: int | None = None

    def __post_init__(self):
        if self.capability is not None and self.capability not in CPU_CAPABILITIES:
            raise PtbankError(f"--cpu-capability: {self.capability!r} is none of "
                              f"{', '.join(CPU_CAPABILITIES)}")
        if self.threads is not None and self.threads < 1:
            raise PtbankError(f"--threads: {self.threads} is not a positive count")

    @property
    def native(self) -> bool:
        return self.capability is None and self.threads is None

    def key(self) -> dict:
        """What a cache key adds for it: nothing for a native run, so its keys stay as they were."""
        return {} if self.native else {"cpu": {"capability": self.capability,
                                               "env": CPU_ENV.get(self.capability or ""),
                                               "threads": self.threads}}

    def describe(self, threads: int | None = None) -> str:
        """`ATEN_CPU_CAPABILITY=avx2, 1 thread`; `threads` is the count a native run gave."""
        count = self.threads or threads
        parts = [f"ATEN_CPU_CAPABILITY={self.capability}" if self.capability else "native CPU"]
        if count:
            parts.append(f"{count} thread{'s' if count != 1 else ''}")
        return ", ".join(parts)


NATIVE = CpuSetting()


class VerifierError(PtbankError):
    """The verifier itself could not run (zygote died, canary hung): nothing can be trusted."""

    exit_status = EXIT_FAILED

    def __init__(self, message: str, *, snippets_named: bool = False):
        super().__init__(message)
        self.snippets_named = snippets_named
        """Whether the message already names the snippets that were running."""


class Zygote:
    """The parent's handle on `python -m ptbank.verify.zygote`.

    The process starts importing torch at once; `wait_ready` names the extra modules it should
    import too and waits until it has. Its stderr goes to `workdir`/zygote.log. `sandboxed`:
    it runs inside the sandbox (see sandbox.py), with `writable` writable and `readable`
    seen read-only wherever they live.
    """

    def __init__(self, workdir: Path, env: dict[str, str], python: str = sys.executable,
                 sandboxed: bool = False, writable: tuple[Path, ...] = (),
                 readable: tuple[Path, ...] = ()):
        self.log_path = workdir / "zygote.log"
        self.sandboxed = sandboxed
        command = [python, "-m", "ptbank.verify.zygote"]
        imports = [Path(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        visible = visible_paths(python, *readable, *imports) if sandboxed else ()
        self.fence = ({"keep": kept_in_tmp((*visible, *(p.resolve() for p in writable)))}
                      if sandboxed else None)
        """What each snippet's fence needs to know (confine.enter); None: unconfined."""
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                wrap(command, writable, visible) if sandboxed else command,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env,
                start_new_session=True)  # Ctrl-C reaches ptbank, which shuts the zygote down
        self.began = time.perf_counter()
        self._pending = b""
        self.ready: dict = {}

    def wait_ready(self, preload: Iterable[str] = ()) -> float:
        """Have `preload` imported too, block until ready; return the seconds since the start."""
        try:
            self.send({"op": "preload", "modules": sorted(set(preload)), "fence": self.fence})
        except VerifierError:
            pass  # it may have exited after saying why (torch failed to import): read that first
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            for event in self.events(deadline - time.monotonic()):
                if event["event"] == "failed":
                    raise VerifierError(f"the verifier cannot import torch: {event['error']}")
                if event["event"] == "ready":
                    self.ready = event
                    return time.perf_counter() - self.began
        raise VerifierError(f"the zygote did not import torch in {READY_TIMEOUT:g} s")

    def send(self, message: dict) -> None:
        try:
            self.proc.stdin.write((json.dumps(message) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise VerifierError(f"the zygote died{self._log_tail()}") from None

    def events(self, timeout: float | None) -> list[dict]:
        """Messages from the zygote that arrive within `timeout` seconds (None: wait for one)."""
        fd = self.proc.stdout.fileno()
        if not select.select([fd], [], [], None if timeout is None else max(timeout, 0))[0]:
            return []
        data = os.read(fd, 1 << 16)
        if not data:
            raise VerifierError(f"the zygote died{self._log_tail()}")
        *lines, self._pending = (self._pending + data).split(b"\n")
        return [json.loads(line) for line in lines]

    def close(self) -> None:
        """EOF on its stdin: the zygote kills every snippet group still alive and exits.

        A zygote that never became ready has no children yet and may still be importing torch
        for seconds: it is killed instead of waited for. One that does not exit in time (a
        snippet may have stopped it with a signal) is killed with every process below it.
        """
        if not self.ready:
            self.proc.kill()
        if self.proc.stdin and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
        try:
            self.proc.wait(CLOSE_TIMEOUT)
        except subprocess.TimeoutExpired:
            kill_tree(self.proc.pid)
            self.proc.wait()
        self.proc.stdout.close()

    def _log_tail(self) -> str:
        tail = self.log_path.read_text(errors="replace")[-2000:].strip()
        return f":\n{tail}" if tail else ""


class ZygoteLease:
    """A zygote with its own temporary folder; closing it stops the one and removes the other."""

    def __init__(self, cache_dir: Path, python: str = sys.executable, sandboxed: bool = True,
                 writable: tuple[Path, ...] = (), readable: tuple[Path, ...] = (),
                 cpu: CpuSetting = NATIVE):
        self._tmp = tempfile.TemporaryDirectory(prefix="ptbank-verify-")
        self.workdir = Path(self._tmp.name)
        self.python = os.path.abspath(python)
        self.sandboxed = sandboxed
        warm = warm_root(cache_dir)
        warm.mkdir(parents=True, exist_ok=True)  # what is bound in must exist at the start
        self.cpu = cpu
        self.zygote = Zygote(self.workdir, zygote_env(cache_dir, cpu), self.python, sandboxed,
                             writable, readable=(warm.resolve(), *readable))

    def close(self) -> None:
        try:
            self.zygote.close()
        finally:
            self._tmp.cleanup()

    def __enter__(self) -> ZygoteLease:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


class HeadStart:
    """Start the pinned build's zygote before the bank is loaded, when the run will need it.

    With no verdict in the cache (a fresh clone, CI, `--no-cache`) every snippet will run, so
    torch's import can overlap ptbank's own start-up and the reading of the bank. Otherwise
    nothing starts here: a cached run must not import torch at all. Use it as a context
    manager around loading and verifying; a zygote that verify_bank did not take is stopped
    on exit.
    """

    def __init__(self, cache_dir: Path = DEFAULT_CACHE, *, use_cache: bool = True,
                 sandboxed: bool = True):
        cold = not use_cache or not _holds_verdicts(cache_dir)
        if sandboxed and unavailable_because():
            cold = False  # verify will refuse, and say why
        self._lease = (ZygoteLease(cache_dir, sandboxed=sandboxed,
                                   readable=tuple(map(Path, import_path()))) if cold else None)

    def take(self, python: str, sandboxed: bool = True,
             cpu: CpuSetting = NATIVE) -> ZygoteLease | None:
        """The early zygote if it runs `python` as asked, now the caller's to close; else None."""
        if (self._lease is None or self._lease.python != python
                or self._lease.sandboxed != sandboxed
                or self._lease.cpu.capability != cpu.capability):
            return None
        lease, self._lease = self._lease, None
        return lease

    def __enter__(self) -> HeadStart:
        return self

    def __exit__(self, *exc_info) -> None:
        if self._lease is not None:
            self._lease.close()


def _holds_verdicts(cache_dir: Path) -> bool:
    """Whether the cache has any verdict file (timings.json alone is not one)."""
    try:
        with os.scandir(cache_dir) as entries:
            return any(e.name.endswith(".json") and e.name != "timings.json" for e in entries)
    except OSError:
        return False


PASSED_ENV = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ", "HOME",
              "CC", "CXX", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES")
"""What a snippet sees of ptbank's environment: the locale, where programs and compilers are,
and which GPUs to use. Nothing else: a token or password exported before `ptbank verify`
must not reach a snippet, nor from there an assertion message, a report and a CI log."""
PASSED_PREFIX = "PTBANK_SNIPPET_"
"""Variables named so are handed to snippets on purpose (a test harness's, say)."""


def zygote_env(cache_dir: Path, cpu: CpuSetting = NATIVE) -> dict[str, str]:
    """The zygote's environment: allow-listed, ptbank importable, a fixed hash seed, and a
    lasting inductor cache where snippets run unconfined (the sandbox gives each its own).

    ATEN_CPU_CAPABILITY (and oneDNN's and MKL's caps, CPU_ENV) is set only by `cpu` (`verify
    --cpu-capability`), never passed on from ptbank's own environment: a verdict's cache key
    names the capability it ran under. Its inductor cache is its own, so kernels compiled for
    one vector ISA never serve another."""
    env = {name: value for name, value in os.environ.items()
           if name in PASSED_ENV or name.startswith(PASSED_PREFIX)}
    package_root = str(Path(ptbank.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root,
                                                      os.environ.get("PYTHONPATH")]))
    env["PYTHONHASHSEED"] = "0"
    inductor = "inductor" + (f"-{cpu.capability}" if cpu.capability else "")
    env["TORCHINDUCTOR_CACHE_DIR"] = str((cache_dir.parent / inductor).resolve())
    env.update(CPU_ENV.get(cpu.capability or "", {}))
    return env
