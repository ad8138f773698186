"""Whether a snippet's declared requirements (`cuda`, `gpus>=N`, a module) are met here.

Modules are looked up without importing them. Devices are probed in a separate short-lived
process, only when a snippet asks for one and only once per run: the zygote must never touch
CUDA, and neither should ptbank itself. A CPU build of torch (version `+cpu`) needs no probe.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from functools import cached_property

from ..models import Snippet
from .interpreter import Interpreter
from .results import skip_reason

PROBE = ("import json, torch; print(json.dumps({'cuda': torch.cuda.is_available(), "
         "'gpus': torch.cuda.device_count() if torch.cuda.is_available() else 0}))")
PROBE_TIMEOUT = 120


@dataclass(frozen=True)
class Devices:
    cuda: bool
    gpus: int
    why: str
    """How we know, for skip reasons."""


class Requirements:
    """Answers "can this snippet run here, under `interpreter`?", probing devices at most once."""

    def __init__(self, interpreter: Interpreter):
        self.interpreter = interpreter

    def why_not(self, snippet: Snippet) -> str | None:
        """The skip reason for the first unmet requirement, or None when all are met."""
        for requirement in snippet.requires:
            if requirement == "cuda" and not self.devices.cuda:
                return skip_reason("cuda", f"CUDA is not available ({self.devices.why})")
            if requirement.startswith("gpus>="):
                wanted = int(requirement.removeprefix("gpus>="))
                if self.devices.gpus < wanted:
                    return skip_reason(requirement,
                                       f"{self.devices.gpus} GPU(s) here ({self.devices.why})")
            elif requirement != "cuda" and not self.interpreter.importable(requirement):
                return skip_reason(requirement, "module not installed")
        return None

    @cached_property
    def devices(self) -> Devices:
        return probe_devices(self.interpreter)


def probe_devices(interpreter: Interpreter) -> Devices:
    """CUDA availability and GPU count, asked of a throwaway process of `interpreter`.

    The probe imports torch (3-5 s for a CUDA build), so it is skipped when its answer is
    known: a CPU build, or a CUDA build on a machine without the NVIDIA driver. That keeps a
    fully cached run of a bank with GPU snippets from importing torch at all.
    """
    version = interpreter.versions.torch
    if version.endswith("+cpu"):
        return Devices(False, 0, f"torch {version} is a CPU build")
    if "+cu" in version and not nvidia_driver_loaded():
        return Devices(False, 0, f"no NVIDIA driver on this machine; torch {version}")
    try:
        done = subprocess.run([interpreter.python, "-c", PROBE], capture_output=True, text=True,
                              timeout=PROBE_TIMEOUT)
        found = json.loads(done.stdout.strip().splitlines()[-1])
    except (subprocess.TimeoutExpired, ValueError, IndexError) as exc:
        return Devices(False, 0, f"device probe failed: {type(exc).__name__}")
    return Devices(bool(found["cuda"]), int(found["gpus"]), f"probed with torch {version}")



def nvidia_driver_loaded() -> bool:
    """Whether the NVIDIA kernel driver is there, without which CUDA never is (Linux)."""
    return any(os.path.exists(p) for p in ("/proc/driver/nvidia/version", "/dev/nvidiactl"))
