"""Killing a process with everything below it, wherever its members moved themselves.

A snippet may leave its process group (setpgid, setsid) or stop its parent with a signal, so
neither a group kill nor asking the zygote is enough on its own. The tree is found through
/proc/PID/task/*/children and stopped top-down before it is killed, so that nothing forks or
is orphaned (reparented out of reach) while it is being collected. Standard library only: the
zygote imports this.
"""

from __future__ import annotations

import contextlib
import os
import signal


def kill_tree(pid: int) -> None:
    """SIGKILL `pid`, its process group, and every descendant process."""
    tree = [pid]
    for member in tree:  # grows as it goes: breadth-first over the stopped tree
        _signal(member, signal.SIGSTOP)
        tree += [p for p in children(member) if p not in tree]
    kill_group(pid)
    for member in tree:
        _signal(member, signal.SIGKILL)


def kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def children(pid: int | str = "self") -> list[int]:
    """The direct children of `pid` (all its threads'); [] once it is gone."""
    pids = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return pids
    for task in tasks:
        with contextlib.suppress(OSError):
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as handle:
                pids += [int(p) for p in handle.read().split()]
    return pids


def _signal(pid: int, number: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, number)
