"""What an interpreter has installed, read from package metadata without importing torch.

Runs in-process for the interpreter ptbank itself runs under, and as
`python -m ptbank.verify.facts MODULE...` for another one (a provisioned torch build, or any
`--python`), which prints the same facts as one JSON line. Standard library only: the other
interpreter need not have ptbank's dependencies, only torch and what the snippets import.
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import re
import sys
from functools import cache
from importlib import metadata
from pathlib import Path

_VERSION_LINE = re.compile(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", re.M)


def torch_version() -> str:
    """The installed torch's build (e.g. `2.15.0+cu132`, `2.13.0+cpu`), or `not installed`.

    Package metadata says only `2.15.0` for the CUDA build PyPI serves; torch/version.py,
    read as text, names the build as `torch.__version__` does.
    """
    try:
        dist = metadata.distribution("torch")
    except metadata.PackageNotFoundError:
        return "not installed"
    try:
        text = Path(dist.locate_file("torch/version.py")).read_text(encoding="utf-8")
        return _VERSION_LINE.search(text).group(1)
    except (OSError, AttributeError):
        return dist.version


def python_version() -> str:
    return f"{platform.python_implementation()} {platform.python_version()}"


@cache
def module_version(module: str) -> str | None:
    """Installed version of the distribution that provides `module`; None when not installed."""
    try:
        return metadata.version(module)
    except metadata.PackageNotFoundError:
        pass
    dists = _distributions().get(module, [])
    try:
        return ",".join(metadata.version(d) for d in dists) or None
    except metadata.PackageNotFoundError:
        return None


def importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def facts(modules: list[str]) -> dict:
    """Everything the verifier asks of an interpreter, for the given modules."""
    return {"torch": torch_version(), "python": python_version(),
            "modules": {m: module_version(m) for m in modules},
            "importable": {m: importable(m) for m in modules},
            "path": import_path()}


def import_path() -> list[str]:
    """The folders this interpreter imports from (its .pth files' included): the sandbox must
    show them wherever they live."""
    return [p for p in sys.path if os.path.isabs(p)]


@cache
def _distributions() -> dict[str, list[str]]:
    return metadata.packages_distributions()


if __name__ == "__main__":
    print(json.dumps(facts(sys.argv[1:])))
