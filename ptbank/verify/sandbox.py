"""The sandbox every snippet runs in: bubblewrap around the zygote and all it forks.

Content arrives in pull requests, and verifying it runs its code. Inside the sandbox a snippet
sees the machine read-only, except the run's own folder and a private /tmp; it has its own
network namespace with only loopback (gloo over 127.0.0.1 works, nothing beyond), its own PID
namespace (it can signal nothing outside: not ptbank, not the user's other processes), no
capabilities even when ptbank runs as root, and HOME and the compile caches on the private
/tmp. When ptbank goes, the sandbox goes with it (--die-with-parent).

Where bubblewrap is missing or cannot create namespaces (some containers), verify refuses
with a message saying so, unless the user asks for `--no-sandbox`; every report and stamp says
which way the snippets ran.
"""

from __future__ import annotations

import functools
import glob
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..errors import PtbankError

HOME = "/tmp/home"
"""HOME inside the sandbox: libraries that write caches under ~ find it writable."""
PRIVATE_ENV = {"HOME": HOME, "TMPDIR": "/tmp", "XDG_CACHE_HOME": "/tmp/cache",
               "TORCHINDUCTOR_CACHE_DIR": "/tmp/inductor", "TRITON_CACHE_DIR": "/tmp/triton"}
"""Caches a snippet could otherwise poison for later runs stay inside the sandbox."""
HOW_TO_INSTALL = ("install bubblewrap (`make setup` does, as root; or "
                  "`sudo apt-get install bubblewrap`), or pass --no-sandbox to run snippets "
                  "unconfined")


class SandboxUnavailable(PtbankError):
    """Snippets would have to run unconfined, and the user did not ask for that."""


def wrap(command: list[str], writable: tuple[Path, ...],
         readable: tuple[Path, ...] = ()) -> list[str]:
    """`command` run inside the sandbox, with `writable` (the run's folder first) writable.

    /tmp is the sandbox's own, so what lives in the host's /tmp is hidden; `readable` names
    what must be seen all the same (the environment of an interpreter kept there).
    """
    args = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--tmpfs", "/tmp", "--dir", HOME]
    for path in readable:
        args += ["--ro-bind", str(path), str(path)]
    for folder in map(str, (path.resolve() for path in writable)):
        args += ["--bind", folder, folder]
    args += ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
             "--unshare-cgroup-try", "--cap-drop", "ALL", "--new-session", "--die-with-parent"]
    for node in sorted(glob.glob("/dev/nvidia*")):  # the GPU, where there is one
        args += ["--dev-bind", node, node]
    for name, value in PRIVATE_ENV.items():
        args += ["--setenv", name, value]
    return [*args, "--", *command]


def ensure_available() -> None:
    """Raise SandboxUnavailable, saying why, unless a sandbox can be made here."""
    why = unavailable_because()
    if why:
        raise SandboxUnavailable(f"cannot run snippets in a sandbox: {why}; {HOW_TO_INSTALL}")


@functools.cache
def unavailable_because() -> str:
    """Why no sandbox can be made on this machine; "" when one can (tried once per process)."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    try:
        with tempfile.TemporaryDirectory(prefix="ptbank-sandbox-") as probe:
            done = subprocess.run(wrap(["/bin/true"], (Path(probe),)), capture_output=True,
                                  text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap did not run: {exc}"
    if done.returncode != 0:
        return f"bwrap failed: {done.stderr.strip().splitlines()[-1] if done.stderr else done}"
    return ""
