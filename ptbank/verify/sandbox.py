"""The sandbox every snippet runs in: bubblewrap around the zygote and all it forks.

Content arrives in pull requests, and verifying it runs its code. bubblewrap fences the run in:
the machine read-only; a private /tmp; /var/tmp, /root, /home, /run (D-Bus, database and
other sockets), /srv, /mnt and /media replaced by empty folders, and the shadow files by empty
files; what the zygote imports from (ptbank, the interpreter's environment and its base
installation) put back wherever it lives, /tmp and /root included; no network beyond a loopback of its own; no
capabilities but the three the fence needs to hand each snippet a lesser user (root only), and
none of them reach a snippet. When ptbank goes, the sandbox goes with it (--die-with-parent).
Inside it, confine.py fences every snippet in once more: its own namespaces, /tmp, /proc and
limits.

The zygote stays in the machine's PID namespace, with its /proc: every snippet gets a PID
namespace of its own, and mounting its own /proc there needs a /proc that no mount covers
(bubblewrap's --proc covers parts of its own).

Where bubblewrap is missing or cannot create namespaces (some containers), verify refuses
with a message saying so, unless the user asks for `--no-sandbox`; every report and stamp says
which way the snippets ran.
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import ptbank

from ..errors import PtbankError

HOME = "/tmp/home"
"""HOME inside the sandbox, on each snippet's private /tmp (confine.HOME)."""
PRIVATE_ENV = {"HOME": HOME, "TMPDIR": "/tmp", "XDG_CACHE_HOME": "/tmp/cache",
               "TORCHINDUCTOR_CACHE_DIR": "/tmp/inductor", "TRITON_CACHE_DIR": "/tmp/triton"}
"""Caches a snippet could otherwise poison for later ones: on its own /tmp, gone with it."""
HIDDEN = ("/tmp", "/var/tmp", "/root", "/home", "/run", "/srv", "/mnt", "/media")
"""Folders the sandbox replaces by empty ones (/var/run is /run): users' files and sockets."""
SECRETS = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-")
"""Files replaced by empty ones: readable by root, and so by a snippet run as root."""
FENCE_CAPABILITIES = ("CAP_SETUID", "CAP_SETGID", "CAP_KILL")
"""What the zygote keeps, run as root: to hand each snippet the user nobody, and to kill it."""
HOW_TO_INSTALL = ("install bubblewrap (`make setup` does, as root; or "
                  "`sudo apt-get install bubblewrap`), or pass --no-sandbox to run snippets "
                  "unconfined")


class SandboxUnavailable(PtbankError):
    """Snippets would have to run unconfined, and the user did not ask for that."""


def wrap(command: list[str], writable: tuple[Path, ...],
         visible: tuple[Path, ...] = ()) -> list[str]:
    """`command` run inside the sandbox, with `writable` (the run's folder first) writable.

    `visible`: what must be seen although it lies in a hidden folder (see visible_paths).
    """
    args = ["bwrap", "--ro-bind", "/", "/", "--bind", "/proc", "/proc", "--dev", "/dev"]
    for folder in HIDDEN:
        if os.path.isdir(folder) and not os.path.islink(folder):
            args += ["--tmpfs", folder]
    for secret in SECRETS:
        if os.path.lexists(secret):
            args += ["--ro-bind", "/dev/null", secret]
    made: set[Path] = set()
    for how, path, source in ([("--ro-bind", p, p.resolve()) for p in visible]
                              + [("--bind", p.resolve(), p.resolve()) for p in writable]):
        for folder in reversed(path.parents):  # made by bubblewrap as 0700: closed to nobody
            if _is_hidden(folder) and folder not in map(Path, HIDDEN) and folder not in made:
                args += ["--perms", "0755", "--dir", str(folder)]
                made.add(folder)
        args += [how, str(source), str(path)]
    args += ["--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
             "--cap-drop", "ALL"]
    if os.geteuid() == 0:
        for capability in FENCE_CAPABILITIES:
            args += ["--cap-add", capability]
    args += ["--new-session", "--die-with-parent"]
    for node in sorted(glob.glob("/dev/nvidia*")):  # the GPU, where there is one
        args += ["--dev-bind", node, node]
    for name, value in PRIVATE_ENV.items():
        args += ["--setenv", name, value]
    return [*args, "--", *command]


def visible_paths(python: str, *also: Path) -> tuple[Path, ...]:
    """What the zygote imports from, and `also`, where a hidden folder would hide it.

    ptbank's own package, the interpreter's environment, and the installation a venv was made
    from (pyenv keeps it under /root, uv under ~/.local). Each is put back alone, in folders
    open to all (a checkout made by `mktemp -d` is 0700: a snippet run as nobody could not pass
    through it, and need see nothing else of it), at the path it is used by and,
    when that is a symlink (a `.venv` linked to an environment elsewhere), at its real path too
    (a symlink inside a folder that is put back is there already, and is not bound over).
    """
    environment = Path(os.path.abspath(python)).parent.parent
    wanted = [Path(ptbank.__file__).resolve().parent, environment,
              Path(os.path.realpath(python)).parent.parent, *_venv_home(environment), *also]
    real = {path.resolve() for path in wanted if path.exists()}
    real = {path for path in real if _is_hidden(path)}
    covering = [path for path in real if _open_to_all(path)]  # a closed one covers nothing
    real = sorted(path for path in real
                  if not _within(path, [other for other in covering if other != path])
                  and not (path not in covering  # closed, and others in it: put back alone
                           and any(path in other.parents for other in real)))
    named = ({Path(os.path.abspath(path)) for path in wanted}  # as the zygote is started
             | {Path(os.path.realpath(path.parent)) / path.name for path in wanted}) - set(real)
    named = [path for path in named if path.exists() and path != path.resolve()
             and _is_hidden(path) and not _within(path, real)]  # the symlinks' own paths
    return (*real, *sorted(path for path in named  # one put back inside another is there
                           if not _within(path, [other for other in named if other != path])))


def _open_to_all(folder: Path) -> bool:
    return os.stat(folder).st_mode & 0o005 == 0o005


def _within(path: Path, folders: list[Path]) -> bool:
    return any(path == folder or folder in path.parents for folder in folders)


def kept_in_tmp(paths: tuple[Path, ...]) -> list[str]:
    """Of `paths`, those a snippet's private /tmp would hide: its fence puts them back."""
    return sorted({str(p) for p in paths if Path("/tmp") in p.parents})


def _venv_home(environment: Path) -> list[Path]:
    """The base installation a venv names in its pyvenv.cfg (`home = …/bin`)."""
    try:
        text = (environment / "pyvenv.cfg").read_text(encoding="utf-8")
    except OSError:
        return []
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            return [Path(value.strip()).parent]
    return []


def _is_hidden(path: Path) -> bool:
    return _within(path, [Path(folder) for folder in HIDDEN])


_NAMESPACES_PROBE = ["unshare", "--user", "--mount", "--pid", "--ipc", "--net", "--fork",
                     "/bin/true"]
"""What each snippet's fence does first (confine.py): some containers allow bubblewrap but
no user namespace inside it."""


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
            done = subprocess.run(wrap(_NAMESPACES_PROBE, (Path(probe),)),
                                  capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap did not run: {exc}"
    if done.returncode != 0:
        return f"bwrap failed: {done.stderr.strip().splitlines()[-1] if done.stderr else done}"
    return ""
