"""The zygote: import torch once, then fork one fresh child per snippet.

Run as `python -m ptbank.verify.zygote`. It imports torch and the lazily loaded modules
snippets commonly touch at once, then the modules the first request names (those the bank's
snippets `require`), then serves JSON lines: requests on fd 0, replies on fd 1.

    → {"op": "preload", "modules": ["onnx"], "fence": {"keep": [...]} or null}   (first, once)
    ← {"event": "ready", "failed": {}}                  (or {"event": "failed", "error": ...})
    → {"op": "run", "job": "7", "code": "...", "script": "/tmp/snippet/snippet.py", ...}
                                                        (the rest: see child.run)
    ← {"event": "started", "job": "7", "pid": 1234}
    → {"op": "stack", "job": "7"}                       (the parent's timeout: where is it?)
    → {"op": "kill", "job": "7"}                        (half a second later)
    ← {"event": "exit", "job": "7", "status": 9, "report": "{...}" or null,
       "stdout": "...", "stdout_bytes": 12, "stdout_tail": "...", "stderr_tail": "...", ...}

A child's stdout, stderr and report are pipes that only the zygote reads: it keeps the first
`cap` bytes and the last TAIL bytes of each stream and counts the rest, so a flood written with
os.write() costs nothing on disk; and the verdict comes from what arrives on the report pipe and
from the exit status the zygote reaped, never from a file a snippet could write.

The zygote itself must never run an op (a child of a process that already started its OpenMP
pool hangs on its first parallel op) and never touch CUDA (a forked child cannot use a CUDA
context its parent created). In the sandbox (a `fence` in the preload request) each child fences itself in (confine.py)
before the snippet runs, and the zygote makes itself non-dumpable, so that no snippet can open
its descriptors or its memory through /proc. Unconfined, it is a child subreaper, so snippets'
orphaned grandchildren are reparented to it and reaped; a child's process group is killed before
the child is reaped, while its pid (= the group id) cannot yet be reused.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib
import json
import os
import selectors
import signal
import sys
import time
import traceback

from . import confine
from .proctree import children, kill_group, kill_tree

BASE_PRELOAD = ("torch", "torch._dynamo", "torch.optim", "torch.utils.data",
                "torch.distributed", "torch.func", "torch.multiprocessing", "numpy")
"""Imported before any fork: their lazy imports would cost every snippet seconds otherwise."""
PR_SET_CHILD_SUBREAPER = 36
TAIL = 8192
"""Bytes kept from the end of a child's stdout and of its stderr, for messages."""
REPORT_LIMIT = 4 << 20
"""A report longer than this is no report the child wrote: it counts as damaged."""
EXIT_CHILD_SETUP = 70
"""Status of a child that failed before the snippet began (EX_SOFTWARE)."""


def main() -> None:
    requests, replies = _protocol_fds()
    failed = _preload(BASE_PRELOAD)
    if "torch" in failed:
        _send(replies, {"event": "failed", "error": failed["torch"]})
        return
    first, pending = _first_request(requests)
    if first is None:  # the parent is gone before it needed us (e.g. the bank did not load)
        os._exit(0)
    failed |= _preload(tuple(first["modules"]))
    from . import child  # noqa: F401 - imported once here rather than in every child

    for stream in (sys.stdout, sys.stderr):  # no buffered import chatter for children to inherit
        stream.flush()
    _send(replies, {"event": "ready", "failed": failed})
    if first.get("fence") is not None:
        confine.make_dumpable_never()
    _Server(requests, replies, first.get("fence")).serve(pending)
    os._exit(0)  # skip interpreter teardown: with torch loaded it takes most of a second


def _first_request(fd: int) -> tuple[dict | None, bytes]:
    """The preload request, and whatever bytes came after it."""
    data = b""
    while b"\n" not in data:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return None, b""
        data += chunk
    line, rest = data.split(b"\n", 1)
    return json.loads(line), rest


def _protocol_fds() -> tuple[int, int]:
    """Move the protocol pipes off fds 0/1 so nothing an import prints can corrupt them."""
    requests, replies = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return requests, replies


def _preload(names: tuple[str, ...]) -> dict[str, str]:
    """Import `names` with the cyclic GC off, then freeze everything imported.

    Importing torch and dynamo creates ~280,000 objects, and the collector, left on, walks
    them again and again while they are created: a quarter of the zygote's start-up. Frozen,
    they stay out of every later collection, so a child's first full collection does not walk
    (and copy-on-write) the zygote's whole heap: that costs 0.15 s per child otherwise. The
    children run with the collector on, as any program does.
    """
    failed = {}
    gc.disable()
    try:
        for name in dict.fromkeys(names):
            try:
                importlib.import_module(name)
            except Exception as exc:  # noqa: BLE001 - fails only the snippets that import it
                failed[name] = f"{type(exc).__name__}: {exc}"
    finally:
        gc.freeze()
        gc.enable()
    return failed


def _send(fd: int, message: dict) -> None:
    data = (json.dumps(message) + "\n").encode()
    while data:
        data = data[os.write(fd, data):]


class _Server:
    """The request loop: fork on `run`, kill on `kill`, report every exit of a child."""

    def __init__(self, requests: int, replies: int, fence: dict | None = None):
        self.requests, self.replies = requests, replies
        self.fence = fence
        """Where each child fences itself in before its snippet runs (confine.enter)."""
        self.running: dict[int, tuple[str, _Capture]] = {}  # pid → job id, its pipes
        self.wake_r, self.wake_w = os.pipe()
        for fd in (self.wake_r, self.wake_w):
            os.set_blocking(fd, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        _become_subreaper()
        self.selector = selectors.DefaultSelector()
        self.selector.register(requests, selectors.EVENT_READ)
        self.selector.register(self.wake_r, selectors.EVENT_READ)

    def serve(self, pending: bytes = b"") -> None:
        """Requests until EOF; `pending` holds bytes already read past the preload request."""
        while True:
            *lines, pending = pending.split(b"\n")
            for line in lines:
                self._handle(json.loads(line))
            for key, _ in self.selector.select():
                if key.fd == self.wake_r:
                    _drain(self.wake_r)
                elif key.data is not None:
                    if not key.data.read(key.fd):
                        self._forget_fd(key.fd, key.data)
                else:
                    data = os.read(self.requests, 1 << 16)
                    if not data:
                        return self._shutdown()
                    pending += data
            self._reap()

    def _handle(self, request: dict) -> None:
        if request["op"] == "run":
            self._fork(request)
        elif request["op"] == "stack":
            from .child import STACK_SIGNAL
            for pid, (job, _) in self.running.items():
                if job == request["job"]:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, STACK_SIGNAL)
        elif request["op"] == "kill":
            for pid, (job, _) in self.running.items():
                if job == request["job"]:
                    kill_tree(pid)

    def _fork(self, request: dict) -> None:
        pipes = {name: os.pipe2(os.O_CLOEXEC) for name in _Capture.STREAMS}
        pid = os.fork()
        if pid == 0:
            try:
                self._forget_in_child()
                for read_end, _ in pipes.values():
                    os.close(read_end)
                for fd, name in ((1, "stdout"), (2, "stderr")):
                    os.dup2(pipes[name][1], fd)  # fds 1 and 2 stay open across exec
                    os.close(pipes[name][1])
                from . import child
                if self.fence is not None:
                    confine.enter(self.fence["keep"], request["memory_mb"], child.STACK_SIGNAL)
                child.run(request, pipes["report"][1])
            except BaseException:  # noqa: BLE001 - setting up the child failed: say why, then die
                traceback.print_exc()
            finally:
                os._exit(EXIT_CHILD_SETUP)
        try:
            os.setpgid(pid, pid)  # also done by the child; whichever runs first wins the race
        except OSError:
            pass
        for _, write_end in pipes.values():
            os.close(write_end)
        capture = _Capture({name: read_end for name, (read_end, _) in pipes.items()},
                           request["cap"])
        for fd in capture.fds:
            os.set_blocking(fd, False)
            self.selector.register(fd, selectors.EVENT_READ, capture)
        self.running[pid] = (request["job"], capture)
        _send(self.replies, {"event": "started", "job": request["job"], "pid": pid})

    def _forget_in_child(self) -> None:
        """What a child must not hold: the protocol, and the other children's output pipes."""
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        self.selector.close()
        for fd in (self.requests, self.replies, self.wake_r, self.wake_w):
            os.close(fd)
        for _, capture in self.running.values():
            for fd in capture.fds:
                os.close(fd)

    def _forget_fd(self, fd: int, capture: _Capture) -> None:
        """Stop reading one of a child's pipes: at its end, or once the child is reaped."""
        self.selector.unregister(fd)
        os.close(fd)
        del capture.names[fd]

    def _reap(self) -> None:
        """Report every exited child; kill its group first, while its pid is still reserved."""
        while True:
            try:
                info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return
            if info is None or info.si_pid == 0:
                return
            job, capture = self.running.pop(info.si_pid, (None, None))
            if job is not None:
                kill_group(info.si_pid)
            _, status = os.waitpid(info.si_pid, 0)
            if job is not None:
                for fd in capture.drain():  # what is still in the pipes; a survivor's is lost
                    self._forget_fd(fd, capture)
                _send(self.replies, {"event": "exit", "job": job, "status": status,
                                     **capture.summary()})

    def _shutdown(self) -> None:
        """The parent is gone or done: kill every group and every adopted orphan, reap all."""
        for pid in list(self.running):
            kill_tree(pid)
        for pid in children():
            kill_tree(pid)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                if os.waitpid(-1, os.WNOHANG) == (0, 0):
                    time.sleep(0.01)
            except ChildProcessError:
                return


class _Capture:
    """A child's stdout, stderr and report pipes, read as they fill.

    Of stdout and stderr it keeps the first `cap` bytes and the last TAIL bytes and counts all;
    the report it keeps whole, up to REPORT_LIMIT.
    """

    STREAMS = ("stdout", "stderr", "report")

    def __init__(self, fds: dict[str, int], cap: int):
        self.names = {fd: name for name, fd in fds.items()}
        self.cap = cap
        self.head = {name: bytearray() for name in self.STREAMS}
        self.tail = {name: b"" for name in self.STREAMS}
        self.size = dict.fromkeys(self.STREAMS, 0)

    @property
    def fds(self) -> list[int]:
        return list(self.names)

    def read(self, fd: int) -> bool:
        """Take what is in the pipe now; False at its end (or when nothing can come)."""
        try:
            data = os.read(fd, 1 << 16)
        except BlockingIOError:
            return True
        except OSError:
            return False
        if data:
            self._keep(self.names[fd], data)
        return bool(data)

    def drain(self) -> list[int]:
        """After the child is gone: read each pipe until it is empty; return the fds to close."""
        for fd in self.fds:
            while True:
                try:
                    data = os.read(fd, 1 << 16)
                except OSError:  # empty, though a grandchild that escaped may still hold it
                    break
                if not data:
                    break
                self._keep(self.names[fd], data)
        return self.fds

    def _keep(self, name: str, data: bytes) -> None:
        limit = REPORT_LIMIT + 1 if name == "report" else self.cap
        room = limit - len(self.head[name])
        if room > 0:
            self.head[name] += data[:room]
        self.tail[name] = (self.tail[name] + data)[-TAIL:]
        self.size[name] += len(data)

    def summary(self) -> dict:
        text = {name: bytes(self.head[name]).decode("utf-8", "replace") for name in self.head}
        report = text["report"] if 0 < self.size["report"] <= REPORT_LIMIT else None
        return {"report": report, "report_bytes": self.size["report"],
                "stdout": text["stdout"], "stdout_bytes": self.size["stdout"],
                "stderr_bytes": self.size["stderr"],
                "stdout_tail": self.tail["stdout"].decode("utf-8", "replace"),
                "stderr_tail": self.tail["stderr"].decode("utf-8", "replace")}


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 4096):
            pass
    except BlockingIOError:
        pass


def _become_subreaper() -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: orphans go to init instead, which reaps them too


if __name__ == "__main__":
    main()
