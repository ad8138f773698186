"""Fixtures shared by several test modules."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from ptbank.verify import builds

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
"""Debian's chromium (Playwright's own browser download cannot reach the network here)."""


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
        # as ptbank would have provisioned it, so that it is taken as it is
        (env / builds.INSTALLED).write_text(builds._install_request(torch_version))
    return env / "bin" / "python"


def live_processes_with(token: str) -> list[str]:
    """Processes still alive whose environment holds PTBANK_SNIPPET_TOKEN=`token`.

    Snippets run in a PID namespace, where the pids they see mean nothing outside; their
    environment, inherited by everything they start, marks them wherever they are.
    """
    marker = f"PTBANK_SNIPPET_TOKEN={token}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in environ.split(b"\0") and state not in ("Z", "X"):
            command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
            found.append(f"{entry} ({state}): {command.decode(errors='replace')[:200]}")
    return found


def wait_until_gone(token: str, seconds: float = 10) -> list[str]:
    """live_processes_with(token), once it is empty or `seconds` have passed: a killed process
    takes a moment to be torn down on a loaded machine."""
    deadline = time.monotonic() + seconds
    while live_processes_with(token) and time.monotonic() < deadline:
        time.sleep(0.1)
    return live_processes_with(token)


@pytest.fixture
def process_token(monkeypatch) -> str:
    """A unique PTBANK_SNIPPET_TOKEN for what this test runs (see live_processes_with)."""
    token = uuid.uuid4().hex
    monkeypatch.setenv("PTBANK_SNIPPET_TOKEN", token)
    return token


@pytest.fixture(scope="session")
def other_python(tmp_path_factory) -> Path:
    return make_second_interpreter(tmp_path_factory.mktemp("envs") / "other")


@pytest.fixture(scope="module")
def browser():
    """Headless chromium for the site and deck tests, one per test module."""
    from playwright.sync_api import sync_playwright

    assert CHROMIUM, "chromium is missing: `make test` installs it (Debian package chromium)"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield browser
        browser.close()
