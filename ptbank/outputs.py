"""Where a command will write, checked before it does any work.

A report path under a file, or in /proc, used to surface as a traceback (and exit status 1,
"verification failed") after minutes of verification. Each command names its output options;
`check_outputs` tries them first — the folder made (or found) and a probe file created and
removed in it — and fails with a usage error (exit 2) naming the option.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from .errors import PtbankError


def check_outputs(args) -> None:
    """Every output file and folder the parsed command line names can be written."""
    for option in getattr(args, "output_files", ()):
        path = getattr(args, option)
        if path is not None:
            if path.is_dir():
                raise _unwritable(option, path, "it is a folder")
            _check_folder(option, path, path.parent)
    for option in getattr(args, "output_dirs", ()):
        path = getattr(args, option)
        if path is not None:
            _check_folder(option, path, path)


def _check_folder(option: str, path: Path, folder: Path) -> None:
    existing = next(p for p in (folder, *folder.parents) if p.exists() or p == p.parent)
    if not existing.is_dir():
        raise _unwritable(option, path, f"{existing} is a file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".ptbank-probe-"):
            pass
    except OSError as exc:
        raise _unwritable(option, path, exc.strerror or str(exc)) from None


def _unwritable(option: str, path: Path, why: str) -> PtbankError:
    return PtbankError(f"--{option.replace('_', '-')} {path}: cannot write there ({why})")
