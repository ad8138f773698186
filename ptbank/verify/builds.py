"""The torch builds a bank is verified under, and the environments that hold them.

The pinned build is the interpreter ptbank runs under (`.venv`, from requirements.lock). A bank
may name more torch versions in `bank.yaml` (`verify_also_with_torch`); `ptbank verify` runs
every snippet under each. Any version can be asked for once with `--torch VERSION`, and any
interpreter with torch installed with `--python PATH`.

`--torch VERSION` uses `build/envs/torch-VERSION/`, provisioned the first time: a virtual
environment with that torch and the packages snippets import (pyproject's `snippets` extra),
held to requirements.lock's pins for everything but torch and the packages a torch build brings
with it (CUDA libraries, triton). It is built under a temporary name and renamed into place
when complete, so an interrupted install never passes for a finished one. It remembers what it
was installed from, so a package added to the `snippets` extra reaches it on the next run.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import ptbank

from ..errors import PtbankError
from .interpreter import Interpreter

ENVS = Path("build/envs")
PROJECT = Path(ptbank.__file__).resolve().parent.parent
_VERSION = re.compile(r"^\d+\.\d+(\.\d+)?([a-z0-9.+]*)$")
_BUILD_PACKAGES = re.compile(r"^(torch|triton|nvidia-.*|cuda-.*)$", re.I)
"""Pins of the pinned torch build itself, never imposed on another version of torch."""
DEFAULT_SNIPPET_PACKAGES = ("numpy",)


def interpreters_for(*, torch: str | None, python: str | None,
                     declared: list[str], envs: Path = ENVS, log=print) -> Iterator[Interpreter]:
    """The builds one run verifies under: the one asked for, else the pinned and declared ones.

    Each is installed only when the run reaches it, so the pinned build's verdicts come first.
    """
    if python:
        yield Interpreter(python)
    elif torch:
        yield build_for(torch, envs, log)
    else:
        yield Interpreter.current()
        for version in declared:
            yield build_for(version, envs, log)


def build_for(version: str, envs: Path = ENVS, log=print) -> Interpreter:
    """The interpreter holding torch `version`: ptbank's own if it has it, else its env."""
    if not _VERSION.match(version):
        raise PtbankError(f"--torch {version!r}: expected a version such as 2.13.0")
    pinned = Interpreter.current()
    if pinned.versions.torch.split("+")[0] == version:
        return pinned
    return Interpreter(provision(version, envs, log))


def provision(version: str, envs: Path = ENVS, log=print) -> Path:
    """build/envs/torch-VERSION/bin/python, installing it first if it is not there yet.

    The environment keeps the install request it was made from (INSTALLED); when the snippet
    packages or the lock's pins change, the next run installs the difference into it.
    """
    envs.mkdir(parents=True, exist_ok=True)
    with open(envs / f".torch-{version}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two runs at once install once, one after the other
        return _provision_locked(version, envs, log)


def _provision_locked(version: str, envs: Path, log) -> Path:
    env = envs / f"torch-{version}"
    python = env / "bin" / "python"
    request = _install_request(version)
    if python.exists():
        if _installed_request(env) != request:
            log(f"ptbank: updating {env}: the snippet packages or their pins changed")
            _install(python, request, f"update the packages of torch {version}")
            (env / INSTALLED).write_text(request, encoding="utf-8")
        return python
    partial = envs / f".torch-{version}.partial"
    shutil.rmtree(partial, ignore_errors=True)  # what an interrupted install left
    log(f"ptbank: installing torch {version} into {env} (once: a minute or more; "
        "a CUDA build of torch is several GB)")
    try:
        _run([sys.executable, "-m", "venv", str(partial)], "create a virtual environment")
        _install(partial / "bin" / "python", request, f"install torch {version}")
        (partial / INSTALLED).write_text(request, encoding="utf-8")
        partial.rename(env)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return python


INSTALLED = "ptbank-install.txt"
"""Written into each provisioned environment: the request (packages, then pins) it holds."""


def _install_request(version: str) -> str:
    """What an environment for torch `version` is installed from: requirements, then pins."""
    return "\n".join([f"torch=={version}", *snippet_packages(), "# constraints",
                      _constraints().strip()]) + "\n"


def _installed_request(env: Path) -> str | None:
    try:
        return (env / INSTALLED).read_text(encoding="utf-8")
    except OSError:
        return None


def _install(python: Path, request: str, what: str) -> None:
    """pip-install `request` (as made by _install_request) with `python`."""
    requirements, constraints = request.split("# constraints\n", 1)
    constraints_file = python.parent.parent / "constraints.txt"
    constraints_file.write_text(constraints, encoding="utf-8")
    quiet = [] if sys.stderr.isatty() else ["-q"]  # a terminal sees pip's progress
    _run([str(python), "-m", "pip", "install", *quiet, "--disable-pip-version-check",
          *requirements.split(), "-c", str(constraints_file)], what)


def snippet_packages() -> list[str]:
    """What snippets import besides torch: pyproject's `snippets` extra."""
    try:
        project = tomllib.loads((PROJECT / "pyproject.toml").read_text(encoding="utf-8"))
        return list(project["project"]["optional-dependencies"]["snippets"])
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return list(DEFAULT_SNIPPET_PACKAGES)


def _constraints() -> str:
    """requirements.lock without the pinned torch build's own packages."""
    try:
        lines = (PROJECT / "requirements.lock").read_text(encoding="utf-8").splitlines()
    except OSError:
        return ""
    kept = [line for line in lines if line.strip() and not line.startswith("#")
            and not _BUILD_PACKAGES.match(re.split(r"[=<>!~ ]", line, maxsplit=1)[0])]
    return "\n".join(kept) + "\n"


def _run(command: list[str], what: str) -> None:
    """Run an install step; on a terminal its output shows as it goes, else only on failure."""
    env = dict(os.environ, PIP_NO_INPUT="1")
    if sys.stderr.isatty():
        if subprocess.run(command, stdout=sys.stderr, env=env).returncode != 0:
            raise PtbankError(f"could not {what} (see the output above)")
        return
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-8:])
        raise PtbankError(f"could not {what}:\n{tail}")
