"""Ranks that do not import torch again: `spawn` served by a fork of the snippet's clean process.

Under `spawn` every rank is a new interpreter that imports torch again: about 2.8 s of CPU a
rank on these machines, most of what a multi-process snippet costs. So before a snippet that
starts processes runs, its process forks a server, while nothing has happened in it but the
zygote's imports: no snippet code, no op (hence no OpenMP pool), no CUDA. The server runs
multiprocessing's own forkserver loop. A `spawn` start is then served the way `forkserver`
serves one: the server forks the rank, which reads the pickled preparation data and process
object a spawned interpreter would read, imports the snippet again as `__mp_main__`, and runs
its target. Each rank is still a fresh process that shares nothing with the snippet's.

What a spawned interpreter would take from the snippet at the start travels with the request:
the environment as it is then (snippets set MASTER_PORT just before they spawn), with the
working folder, sys.path and argv that spawn already sends; torch's and numpy's generators are
seeded from the OS, as a new interpreter's are. The server, like an exec, keeps
only fds 0-2. What differs from an exec: the modules the zygote preloaded are already imported
(torch reads the variables it reads at import, such as TORCH_LOGS, once, in the zygote), and a
rank ends with os._exit after flushing its streams, as forkserver's ranks do, so atexit
handlers do not run in it. `ptbank verify --fresh-ranks` spawns ranks the usual way, to
compare (bench/verify.py).

Explicit `forkserver` starts use the same server; `fork` starts are untouched.
"""

from __future__ import annotations

import os
import re
import socket
import sys

from .confine import close_all_but

STARTS_PROCESSES = re.compile(r"\bspawn\b|start_processes|elastic_launch|forkserver"
                              r"|multiprocessing|get_context")
"""Code that may start processes the spawn way; the others are not given a server."""


def serve_spawn_from_fork() -> None:
    """Fork the rank server now, and send this process's spawn starts to it."""
    from multiprocessing import context, forkserver, popen_forkserver, spawn, util

    address = util.get_temp_dir() + "/ranks"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(address)
    os.chmod(address, 0o600)
    listener.listen()
    alive_r, alive_w = os.pipe()  # the server ends when this process (the last writer) does
    pid = os.fork()
    if pid == 0:
        try:
            os.close(alive_w)
            close_all_but(listener.fileno(), alive_r)
            forkserver.main(listener.fileno(), alive_r, preload=[])
        finally:
            os._exit(0)
    listener.close()
    os.close(alive_r)
    server = forkserver._forkserver
    server._forkserver_address, server._forkserver_alive_fd = address, alive_w
    server._forkserver_pid = pid
    spawn.get_preparation_data = _with_environment(spawn.get_preparation_data)
    context.SpawnProcess._Popen = staticmethod(popen_forkserver.Popen)


def _with_environment(get_preparation_data):
    def preparation_data(name: str) -> dict:
        return _Preparation(get_preparation_data(name), dict(os.environ))
    return preparation_data


class _Preparation(dict):
    """spawn's preparation data, which sets the starting process's environment as it is
    unpickled in the rank: before the rank imports the snippet as `__mp_main__`."""

    def __init__(self, data: dict, environment: dict[str, str]):
        super().__init__(data)
        self.environment = environment

    def __reduce__(self):
        return _prepared, (dict(self), self.environment)


def _prepared(data: dict, environment: dict[str, str]) -> dict:
    os.environ.clear()
    os.environ.update(environment)
    # Random state as a new interpreter's: drawn from the OS (`random` is reseeded at every
    # fork already). Forked as they are, the ranks would otherwise all draw the same numbers.
    if "torch" in sys.modules:
        sys.modules["torch"].seed()
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    return data
