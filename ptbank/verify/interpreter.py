"""The interpreter, and so the torch build, that snippets are verified under.

By default that is the interpreter ptbank runs under (the pinned `.venv`). Another one
(`--python PATH`, or a build provisioned by `--torch VERSION`) is asked what it has through
`facts.py`, run as a file with that interpreter: one short process per run, and torch is never
imported for it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable
from functools import cached_property
from pathlib import Path

from ..errors import PtbankError
from . import facts
from .cache import Versions

FACTS_TIMEOUT = 60


class Interpreter:
    """A Python with torch installed; `current()` is the one ptbank itself runs under."""

    def __init__(self, python: str | os.PathLike):
        self.python = os.path.abspath(python)
        self.is_current = self.python == os.path.abspath(sys.executable)
        self._known: dict = {}

    @classmethod
    def current(cls) -> Interpreter:
        return cls(sys.executable)

    def learn(self, modules: Iterable[str]) -> None:
        """Ask once about every module the run will need to know of (another interpreter only)."""
        wanted = sorted(set(modules) - set(self._known.get("modules", {})))
        if self.is_current or (self._known and not wanted):
            return
        found = self._ask(wanted)
        for field in ("modules", "importable"):
            found[field] = self._known.get(field, {}) | found[field]
        self._known = found

    @cached_property
    def versions(self) -> Versions:
        if self.is_current:
            return Versions(torch=facts.torch_version(), python=facts.python_version())
        self.learn(())
        return Versions(torch=self._known["torch"], python=self._known["python"])

    @property
    def import_path(self) -> tuple[Path, ...]:
        """The folders it imports from, for the sandbox to show (facts.import_path)."""
        if self.is_current:
            return tuple(map(Path, facts.import_path()))
        self.learn(())
        return tuple(map(Path, self._known.get("path", ())))

    def module_version(self, module: str) -> str | None:
        if self.is_current:
            return facts.module_version(module)
        self.learn([module])
        return self._known["modules"][module]

    def importable(self, module: str) -> bool:
        if self.is_current:
            return facts.importable(module)
        self.learn([module])
        return self._known["importable"][module]

    def _ask(self, modules: list[str]) -> dict:
        if not os.access(self.python, os.X_OK):
            raise PtbankError(f"--python {self.python}: no such interpreter")
        try:
            done = subprocess.run([self.python, facts.__file__, *modules], capture_output=True,
                                  text=True, timeout=FACTS_TIMEOUT)
        except (subprocess.TimeoutExpired, OSError) as exc:
            raise PtbankError(f"--python {self.python}: could not run it ({exc})") from None
        try:
            found = json.loads(done.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            why = (done.stderr.strip().splitlines() or ["it printed nothing"])[-1]
            raise PtbankError(f"--python {self.python}: could not ask it what it has "
                              f"installed: {why}") from None
        if found["torch"] == "not installed":
            raise PtbankError(f"--python {self.python}: torch is not installed there")
        return found

    def __repr__(self) -> str:
        return f"Interpreter({self.python!r})"
