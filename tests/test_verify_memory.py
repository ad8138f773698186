"""The memory guard: a snippet's budget is private memory on top of what its build holds."""

from __future__ import annotations

import os
from pathlib import Path

from ptbank.loader import load_bank
from ptbank.verify import Status, verify_bank

MEMORY = Path(__file__).parent / "fixtures" / "verify-memory"


def test_budget_is_private_memory_on_top_of_what_the_build_holds(tmp_path, monkeypatch):
    """Under a build that holds 3 GiB and reserves 3 GiB more at import, 512 MiB of a 1 GiB
    budget still passes; reserving 16 GiB of address space, as CUDA does when it starts, is
    not allocating; and 2 GiB, a runaway, is still stopped."""
    preload = str(MEMORY / "preload")
    monkeypatch.syspath_prepend(preload)  # for the requirement check in this process
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [
        preload, os.environ.get("PYTHONPATH")])))  # for the zygote, which imports it
    report = verify_bank(load_bank(MEMORY), jobs=2, cache_dir=tmp_path, use_cache=False,
                         progress=False)
    within, reserving, beyond = report.results
    assert within.status is Status.passed, within.reason
    assert 512 <= within.grew_mb < 1024
    assert reserving.status is Status.passed, reserving.reason
    assert reserving.grew_mb < 64
    assert beyond.status is Status.error
    assert "MemoryError" in beyond.reason and "memory limit is 1024 MiB" in beyond.reason
