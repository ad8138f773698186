"""Fixtures shared by several test modules."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def make_second_interpreter(env: Path, torch_version: str | None = None) -> Path:
    """A second Python at `env`: this one's packages (torch included) plus a module of its own,
    `ptbank_test_flavour`, so that snippets can tell the two apart.

    With `torch_version`, its package metadata names that torch version (the torch it imports
    is still this one's), so that its verdicts are cached and stamped as another build's.
    """
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    site = next((env / "lib").glob("python3*/site-packages"))
    ours = [p for p in sys.path if p.endswith("site-packages")]
    (site / "ptbank-parent.pth").write_text("\n".join(ours) + "\n")
    (site / "ptbank_test_flavour.py").write_text("FLAVOUR = 'other'\n")
    if torch_version:
        info = site / f"torch-{torch_version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: torch\nVersion: {torch_version}\n")
    return env / "bin" / "python"


@pytest.fixture(scope="session")
def other_python(tmp_path_factory) -> Path:
    return make_second_interpreter(tmp_path_factory.mktemp("envs") / "other")
