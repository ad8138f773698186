"""The warm compile cache: made by ptbank's own code, copied into each snippet that compiles,
never written by one."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from ptbank.loader import load_bank
from ptbank.verify import Status, verify_bank
from ptbank.verify import warm as warm_module
from ptbank.verify.warm import WarmCache, warm_root

PASSING = Path(__file__).parent / "fixtures" / "verify-passing"
BUILD = "test-build"


def test_a_warm_cache_is_made_in_the_background_then_renamed_and_closed(tmp_path, monkeypatch):
    monkeypatch.setattr(warm_module, "WARM_UP", (
        "import os, pathlib, time\n"
        "time.sleep(0.5)\n"
        "cache = pathlib.Path(os.environ['TORCHINDUCTOR_CACHE_DIR'], 'fx')\n"
        "cache.mkdir(parents=True)\n"
        "(cache / 'kernel.so').write_text('made by ptbank')\n"
        "os.chmod(cache / 'kernel.so', 0o600)\n"))
    made = WarmCache(sys.executable, tmp_path / "verify", BUILD, dict(os.environ),
                     tmp_path / "log")
    assert made.pending and made.path() is None
    made.wait()
    path = made.path()
    assert path == warm_root(tmp_path / "verify") / BUILD / "inductor"
    kernel = path / "fx" / "kernel.so"
    assert kernel.read_text() == "made by ptbank"
    assert stat.S_IMODE(kernel.stat().st_mode) == 0o444  # readable by nobody, writable by none
    assert stat.S_IMODE(path.stat().st_mode) == 0o555
    assert [p.name for p in warm_root(tmp_path / "verify").iterdir()] == [BUILD]  # no staging
    again = WarmCache(sys.executable, tmp_path / "verify", BUILD, {}, tmp_path / "log")
    assert not again.pending and again.path() == path  # kept for the next run


def test_a_failed_warm_up_leaves_nothing_and_snippets_compile_cold(tmp_path, monkeypatch):
    monkeypatch.setattr(warm_module, "WARM_UP", "raise SystemExit(3)\n")
    made = WarmCache(sys.executable, tmp_path / "verify", BUILD, dict(os.environ),
                     tmp_path / "log")
    made.wait()
    assert made.path() is None
    assert list(warm_root(tmp_path / "verify").iterdir()) == []


SNIPPET_SEES_ITS_COPY = """\
import os
from pathlib import Path

# torch.compile: this snippet starts from the warm cache
cache = Path(os.environ["TORCHINDUCTOR_CACHE_DIR"])
assert (cache / "fx" / "kernel.so").read_text() == "made by ptbank"
(cache / "fx" / "kernel.so").write_text("poisoned")  # its own copy: allowed
source = Path(os.environ["PTBANK_SNIPPET_WARM"])
try:
    (source / "fx" / "kernel.so").write_text("poisoned")
except OSError:
    pass
else:
    raise AssertionError("wrote into the warm cache")
"""


def test_a_snippet_that_compiles_gets_a_copy_it_cannot_write_back(tmp_path, monkeypatch):
    cache_dir = tmp_path / "verify"
    bank = load_bank(PASSING)
    from ptbank.verify.interpreter import Interpreter

    versions = Interpreter.current().versions
    source = warm_module.folder(cache_dir, f"{versions.torch}-{versions.python}")
    kernel = source / "inductor" / "fx" / "kernel.so"
    kernel.parent.mkdir(parents=True)
    kernel.write_text("made by ptbank")
    for path in (kernel, kernel.parent, kernel.parent.parent, source):
        path.chmod(0o444 if path.is_file() else 0o555)
    monkeypatch.setenv("PTBANK_SNIPPET_WARM", str(source / "inductor"))
    question = bank.questions[0]
    snippet = question.snippets[0].model_copy(update={"code": SNIPPET_SEES_ITS_COPY})
    question = question.model_copy(update={"snippets": (snippet,)})
    bank = bank.model_copy(update={"questions": (question,)})
    report = verify_bank(bank, jobs=1, progress=False, cache_dir=cache_dir, use_cache=False)
    [result] = report.results
    assert result.status is Status.passed, result.reason
    assert kernel.read_text() == "made by ptbank"
