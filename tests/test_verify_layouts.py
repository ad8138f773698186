"""Verification works wherever the checkout and its environment live.

The sandbox's /tmp is private and /root is hidden, so a checkout under /tmp (`mktemp -d`, as
CI's own instructions make one), or reached through a symbolic link into /tmp, or a `.venv`
that is a symbolic link to an environment elsewhere, would hide what the zygote imports from.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import ptbank

PASSING = Path(__file__).parent / "fixtures" / "verify-passing"


def checkout_with_a_linked_venv(root: Path) -> Path:
    """A copy of ptbank in a folder closed to others (as `mktemp -d` makes it), whose .venv is
    a symbolic link to the environment this test runs under."""
    checkout = root / "checkout"
    checkout.mkdir(mode=0o700)
    shutil.copytree(Path(ptbank.__file__).parent, checkout / "ptbank",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (checkout / ".venv").symlink_to(Path(sys.prefix).resolve(), target_is_directory=True)
    return checkout


@pytest.mark.parametrize("reached", ["directly", "through a symlink"])
def test_a_checkout_under_tmp_with_a_linked_venv_verifies(tmp_path, reached):
    checkout = checkout_with_a_linked_venv(tmp_path)
    assert Path("/tmp") in checkout.parents
    where = checkout
    if reached == "through a symlink":
        outside = Path(tempfile.mkdtemp(prefix="ptbank-layout-", dir="/var/tmp"))
        where = outside / "link"
        where.symlink_to(checkout, target_is_directory=True)
    try:
        done = subprocess.run(
            [str(where / ".venv" / "bin" / "python"), "-m", "ptbank", "verify",
             "--content", str(PASSING), "--no-cache"],
            cwd=where, capture_output=True, text=True, timeout=300,
            env={**os.environ, "PYTHONPATH": "", "COLUMNS": "200"})
    finally:
        if where != checkout:
            shutil.rmtree(where.parent)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "3 passed, 0 failed" in done.stdout
