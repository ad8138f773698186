"""Spawned ranks: forked from the snippet's rank server unless asked for fresh ones, with the
same verdicts either way (the hostile bank's spawned-ranks question checks what they see)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptbank.loader import load_bank
from ptbank.verify import Status, verify_bank
from ptbank.verify.ranks import STARTS_PROCESSES

HOSTILE = Path(__file__).parent / "fixtures" / "verify-hostile"
REPORTS_ITS_ORIGIN = """\
import sys

import torch.multiprocessing as mp


def origin(rank):
    # a rank forked from the server holds the modules of the process it was forked from
    print("forked" if "ptbank.verify.child" in sys.modules else "new interpreter", flush=True)


if __name__ == "__main__":
    mp.spawn(origin, nprocs=2)
"""


@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    root = tmp_path_factory.mktemp("ranks")
    (root / "bank.yaml").write_text((HOSTILE / "bank.yaml").read_text())
    (root / "topics.yaml").write_text((HOSTILE / "topics.yaml").read_text())
    (root / "isolation").mkdir()
    question = (HOSTILE / "isolation" / "spawned-ranks.yaml").read_text()
    head = question.split("snippets:")[0]
    code = "".join(f"      {line}\n" if line else "\n" for line in REPORTS_ITS_ORIGIN.split("\n"))
    (root / "isolation" / "spawned-ranks.yaml").write_text(
        f"{head}snippets:\n  - id: reports-its-origin\n    show: hidden\n    code: |\n{code}")
    return load_bank(root)


@pytest.mark.parametrize("fresh, printed", [(False, "forked"), (True, "new interpreter")])
def test_ranks_come_from_the_server_unless_fresh_ones_are_asked_for(bank, tmp_path, fresh,
                                                                    printed):
    report = verify_bank(bank, use_cache=False, progress=False, cache_dir=tmp_path,
                         keep_output=True, fresh_ranks=fresh)
    [result] = report.results
    assert result.status is Status.passed, result.reason
    assert result.output.splitlines() == [printed, printed]


def test_only_code_that_may_spawn_gets_a_server():
    assert STARTS_PROCESSES.search("import torch.multiprocessing as mp\nmp.spawn(f, nprocs=2)")
    assert STARTS_PROCESSES.search('DataLoader(ds, multiprocessing_context="forkserver")')
    assert not STARTS_PROCESSES.search("import torch\nprint(torch.ones(2).sum())")
