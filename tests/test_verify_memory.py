"""The memory guard: a snippet's budget comes on top of what its torch build already maps."""

from __future__ import annotations

import os
from pathlib import Path

from ptbank.loader import load_bank
from ptbank.verify import Status, verify_bank

MEMORY = Path(__file__).parent / "fixtures" / "verify-memory"


def test_budget_is_counted_from_what_the_build_already_maps(tmp_path, monkeypatch):
    """Under a build that maps 3 GiB at import (a CUDA build maps 3.3 GiB without a GPU),
    512 MiB of a 1 GiB budget still passes, and 2 GiB is still stopped."""
    preload = str(MEMORY / "preload")
    monkeypatch.syspath_prepend(preload)  # for the requirement check in this process
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [
        preload, os.environ.get("PYTHONPATH")])))  # for the zygote, which imports it
    report = verify_bank(load_bank(MEMORY), jobs=2, cache_dir=tmp_path, use_cache=False,
                         progress=False)
    within, beyond = report.results
    assert within.status is Status.passed, within.reason
    assert 512 <= within.grew_mb < 1024
    assert beyond.status is Status.error
    assert "MemoryError" in beyond.reason and "memory limit is 1024 MiB" in beyond.reason
