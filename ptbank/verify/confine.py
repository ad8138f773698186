"""One snippet's own sandbox inside the sandbox: namespaces of its own, and no way back.

bubblewrap (sandbox.py) fences the whole run in: the machine read-only, no network, no
capabilities. Inside it every snippet is fenced in once more, by the zygote's freshly forked
child, before a line of the snippet runs:

- it runs as `nobody` when ptbank runs as root (root's own files, /etc/shadow among them,
  are then closed to it by their permissions), else as the user;
- its own user, mount, PID, IPC and network namespaces: it sees and signals only its own
  processes, its /proc shows only them (the zygote's descriptors and memory, and every other
  snippet's, are out of reach), its loopback and its System V IPC are its own;
- its own /tmp (TMP_MB), /dev/shm (its memory budget) and HOME; no file of another snippet,
  no file of the run, and the snippet's code came over the zygote's request, not from a file;
- no capabilities (not even in its own namespaces) and no new privileges;
- at most PROCESS_LIMIT tasks, and its shared memory watched against its budget.

The processes:

    zygote ── fence (the forked child: sets the namespaces up, ends as the snippet ended)
                └─ init (pid 1 of the snippet's PID namespace: reaps, watches the snippet's
                     │    shared memory; non-dumpable, so that no snippet can trace it or open
                     │    its descriptors)
                     └─ snippet (pid 2; runs the snippet)

When the snippet ends, init exits, and the kernel kills every other process of the namespace
before the fence can reap init: no process a snippet started, detached or not, outlives it.
The fence and init die with their parents (PR_SET_PDEATHSIG). Standard library only (ctypes):
the zygote imports this before it forks.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import re
import resource
import signal
import socket
import struct
from typing import NoReturn

NOBODY = 65534
TMP_MB = 1024
"""Size of a snippet's private /tmp (its cwd, HOME and compile caches live there)."""
PROCESS_LIMIT = 1024
"""Tasks (processes and threads) one snippet may have at once (RLIMIT_NPROC in its own user
namespace): DataLoader workers, spawned ranks and compile workers fit, a fork bomb does not."""
WORKDIR = "/tmp/snippet"
SCRIPT = f"{WORKDIR}/snippet.py"
"""Where the snippet's code is written, inside its private /tmp: the same path for every one."""
HOME = "/tmp/home"
WATCH_INTERVAL = 0.05
"""Seconds between two looks at the snippet's shared memory."""

_CLONE_NEWNS, _CLONE_NEWIPC, _CLONE_NEWUSER = 0x00020000, 0x08000000, 0x10000000
_CLONE_NEWPID, _CLONE_NEWNET = 0x20000000, 0x40000000
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_BIND = 0x2, 0x4, 0x8, 0x1000
_MS_REC, _MS_PRIVATE = 0x4000, 0x40000
_SYS_OPEN_TREE, _SYS_MOVE_MOUNT = 428, 429  # the same number on every architecture
_OPEN_TREE_CLONE, _OPEN_TREE_CLOEXEC, _AT_RECURSIVE = 1, 0o2000000, 0x8000
_MOVE_MOUNT_F_EMPTY_PATH, _AT_FDCWD = 0x4, -100
_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE, _PR_CAPBSET_DROP, _PR_SET_NO_NEW_PRIVS = 1, 4, 24, 38
_SIOCSIFFLAGS, _IFF_UP, _IFF_LOOPBACK, _IFF_RUNNING = 0x8914, 0x1, 0x8, 0x40
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
_SHMEM = re.compile(rb"^RssShmem:\s+(\d+) kB", re.M)

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class FenceError(OSError):
    """A step of fencing the snippet in failed: the snippet must not run."""


def make_dumpable_never() -> None:
    """For the zygote: its /proc files (descriptors, memory) are closed to every snippet."""
    _call(_libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0), "prctl(PR_SET_DUMPABLE)")


def enter(keep: list[str], memory_mb: int, stack_signal: int) -> None:
    """Fence this freshly forked child in; return in the snippet's own process.

    `keep`: folders under /tmp that must stay visible (an interpreter's environment, ptbank,
    a test harness's folder); the private /tmp would hide them. `stack_signal`, sent to the
    fence by the zygote, is passed on to the snippet. The fence never returns: it waits, and
    exits with the snippet's own status. RLIMIT_NPROC is set before init and the snippet exist,
    and counts them and the fence.
    """
    if os.geteuid() == 0:
        _become(NOBODY)
    uid, gid = os.geteuid(), os.getegid()
    _call(_libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
    _call(_libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0), "prctl(PR_SET_DUMPABLE)")  # own uid_map
    _call(_libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS | _CLONE_NEWPID | _CLONE_NEWIPC
                        | _CLONE_NEWNET), "unshare")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")
    _write("/proc/sys/user/max_user_namespaces", "0")  # none below: no capabilities regained
    _private_files(keep, memory_mb)
    _loopback_up()
    resource.setrlimit(resource.RLIMIT_NPROC, (PROCESS_LIMIT, PROCESS_LIMIT))
    limit_kib = _shared_kib("self") + (memory_mb << 10)  # on top of what it inherits
    status_r, status_w = os.pipe()
    init = os.fork()
    if init:
        _fence(init, status_r, status_w, stack_signal)
    _call(_libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
    _mount(b"proc", b"/proc", b"proc", _MS_NOSUID | _MS_NODEV)
    make_dumpable_never()  # before the fork: the snippet never sees init's status pipe open
    snippet = os.fork()
    if snippet:
        _init(snippet, status_r, status_w, limit_kib, memory_mb, stack_signal)
    os.close(status_r)
    os.close(status_w)
    _call(_libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
    _call(_libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0), "prctl(PR_SET_DUMPABLE)")  # as any program
    for folder in (WORKDIR, HOME):
        os.makedirs(folder, exist_ok=True)
    _drop_capabilities()


def _become(uid: int) -> None:
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def _private_files(keep: list[str], memory_mb: int) -> None:
    """A fresh /tmp (with `keep` put back), /dev/shm and /dev/pts, in its own mount namespace."""
    _mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE)
    kept = [(path, _clone_tree(path)) for path in keep]
    _mount(b"tmpfs", b"/tmp", b"tmpfs", _MS_NOSUID | _MS_NODEV,
           f"size={TMP_MB}m,mode=1777".encode())
    for path, tree in kept:
        os.makedirs(path, exist_ok=True)
        _call(_libc.syscall(_SYS_MOVE_MOUNT, tree, b"", _AT_FDCWD, path.encode(),
                            _MOVE_MOUNT_F_EMPTY_PATH), f"move_mount({path})")
        os.close(tree)
    if os.path.isdir("/dev/shm"):
        _mount(b"tmpfs", b"/dev/shm", b"tmpfs", _MS_NOSUID | _MS_NODEV,
               f"size={memory_mb}m,mode=1777".encode())
    if os.path.isdir("/dev/pts"):  # terminals of its own: no other snippet's pty to read
        _mount(b"devpts", b"/dev/pts", b"devpts", _MS_NOSUID | _MS_NOEXEC,
               b"newinstance,ptmxmode=0666,mode=0620")
        if not os.path.islink("/dev/ptmx"):
            _mount(b"/dev/pts/ptmx", b"/dev/ptmx", None, _MS_BIND)


def _clone_tree(path: str) -> int:
    fd = _libc.syscall(_SYS_OPEN_TREE, _AT_FDCWD, path.encode(),
                       _OPEN_TREE_CLONE | _OPEN_TREE_CLOEXEC | _AT_RECURSIVE)
    _call(0 if fd >= 0 else -1, f"open_tree({path})")
    return fd


def _loopback_up() -> None:
    """The new network namespace's loopback, up: gloo and TCP stores bind to 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        fcntl.ioctl(sock, _SIOCSIFFLAGS,
                    struct.pack("16sH14x", b"lo", _IFF_UP | _IFF_LOOPBACK | _IFF_RUNNING))


def _fence(init: int, status_r: int, status_w: int, stack_signal: int) -> NoReturn:
    """Wait for the namespace's init; then end as the snippet ended (its signal, or its exit
    code). No status from init means it was killed, the snippet with it (a timeout)."""
    os.close(status_w)
    close_all_but(status_r)
    make_dumpable_never()
    signal.signal(stack_signal, lambda *_: _pass_on(init, stack_signal))
    os.waitpid(init, 0)
    data = os.read(status_r, 64)
    try:
        status = int(data)
    except ValueError:
        _die_by(signal.SIGKILL)
    if os.WIFSIGNALED(status):
        _die_by(os.WTERMSIG(status))
    os._exit(os.WEXITSTATUS(status))


def _init(snippet: int, status_r: int, status_w: int, limit_kib: int, memory_mb: int,
          stack_signal: int) -> NoReturn:
    """pid 1: reap every process, kill the snippet if its shared memory passes `limit_kib`.

    When the snippet exits, its wait status goes to the fence, and init exits: the kernel then
    kills every other process of the namespace.
    """
    os.close(status_r)
    close_all_but(status_w, 2)  # stderr stays: a memory kill is explained there
    signal.signal(stack_signal, lambda *_: _pass_on(snippet, stack_signal))
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGCHLD])
    while True:
        signal.sigtimedwait([signal.SIGCHLD], WATCH_INTERVAL)
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                pid = 0
            if pid == snippet:
                os.write(status_w, str(status).encode())
                os._exit(0)
            if pid == 0:
                break
        shared = _shared_kib()
        if shared > limit_kib:
            os.write(2, (f"\nptbank: the snippet's shared memory reached {shared >> 10} MiB, "
                         f"over its limit of {memory_mb} MiB (memory_mb): killed\n").encode())
            with contextlib.suppress(OSError):
                os.kill(-1, signal.SIGKILL)  # every process of the namespace but init


def _die_by(number: int) -> NoReturn:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    with contextlib.suppress(ValueError, OSError):  # SIGKILL has no handler to reset
        signal.signal(number, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [number])
    os.kill(os.getpid(), number)
    os._exit(128 + number)  # a signal that does not end a process by default


def _shared_kib(only: str | None = None) -> int:
    """Shared memory the namespace's processes hold (or `only` one's): what they map of it
    (shared mappings, /dev/shm), memfd files they hold open, System V segments of their IPC
    namespace, mapped or not. Private memory each process has is bounded by RLIMIT_DATA."""
    total, memfds = 0, set()
    names = [only] if only else [n for n in os.listdir("/proc") if n.isdigit() and n != "1"]
    for name in names:
        with contextlib.suppress(OSError):
            with open(f"/proc/{name}/status", "rb") as status:
                found = _SHMEM.search(status.read())
            total += int(found.group(1)) if found else 0
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{name}/fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(f"/proc/{name}/fd/{fd}").startswith("/memfd:"):
                        held = os.stat(f"/proc/{name}/fd/{fd}")
                        if (held.st_dev, held.st_ino) not in memfds:
                            memfds.add((held.st_dev, held.st_ino))
                            total += held.st_blocks // 2
    if only is None:
        with contextlib.suppress(OSError):
            with open("/proc/sysvipc/shm", encoding="ascii") as segments:
                rows = segments.read().splitlines()[1:]
            total += sum(int(row.split()[14]) >> 10 for row in rows if len(row.split()) > 14)
    return total


def _pass_on(pid: int, number: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, number)


def close_all_but(*fds: int) -> None:
    """Close every descriptor above 2 but `fds`: what the fence, init and the rank server
    (ranks.py) must not hold open, the snippet's report pipe above all."""
    low = 3
    for fd in sorted(f for f in fds if f >= 3):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 16)


def _drop_capabilities() -> None:
    """None left in the snippet's own user namespace: it cannot undo its mounts, say."""
    last = int(_read("/proc/sys/kernel/cap_last_cap"))
    for cap in range(last + 1):
        _call(_libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0), "prctl(PR_CAPBSET_DROP)")
    header = (ctypes.c_uint32 * 2)(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    _call(_libc.capset(header, data), "capset")
    _call(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")


def _mount(source: bytes, target: bytes, kind: bytes | None, flags: int,
           options: bytes | None = None) -> None:
    _call(_libc.mount(source, target, kind, flags, options), f"mount {target.decode()}")


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="ascii") as handle:
        handle.write(text)


def _read(path: str) -> str:
    with open(path, encoding="ascii") as handle:
        return handle.read()


def _call(result: int, what: str) -> None:
    if result != 0:
        number = ctypes.get_errno()
        raise FenceError(number, f"cannot fence the snippet in: {what}: {os.strerror(number)}")
