"""`verify --cpu-capability` and `--threads`: snippets run as on another x86-64 CPU, and the
verdicts reached so are cached, and reported, apart from this machine's own."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ptbank.cli import main
from ptbank.loader import load_bank
from ptbank.models import Snippet
from ptbank.verify import Status, verify_bank
from ptbank.verify.cache import Versions, cache_key
from ptbank.verify.launch import NATIVE, CpuSetting, zygote_env
from ptbank.verify.report import summary_line, to_json, to_junit

QUESTION = """\
id: cpu-checks
topic: basics
level: beginner
minutes: 1
zh: {title: CPU 检查, question: 在哪种 CPU 上运行？, answer: 看片段。, rubric: [看片段]}
en: {title: CPU checks, question: Which CPU does it run on?, answer: See the snippets., rubric: [see]}
snippets:
  - id: runs-as-avx2
    code: |
      import torch

      assert torch.backends.cpu.get_cpu_capability() == "AVX2", torch.backends.cpu.get_cpu_capability()
      q = torch.randn(1, 2, 64, 32, dtype=torch.bfloat16)  # AVX2 kernel, oneDNN capped to match
      assert torch.nn.functional.scaled_dot_product_attention(q, q, q).shape == q.shape
  - id: three-threads
    code: |
      import torch

      assert torch.get_num_threads() == 3, torch.get_num_threads()
"""


def _avx512() -> bool:
    try:
        return "avx512f" in Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return False


needs_avx512 = pytest.mark.skipif(not _avx512(), reason="this machine has no AVX-512: a "
                                  "native run is an AVX2 (or lesser) run already")


@pytest.fixture
def bank(tmp_path):
    root = tmp_path / "content"
    (root / "basics").mkdir(parents=True)
    (root / "bank.yaml").write_text("title: {zh: CPU 题库, en: CPU bank}\nversion: 0.0.1\n",
                                    encoding="utf-8")
    (root / "topics.yaml").write_text("basics: {zh: 基础, en: Basics}\n", encoding="utf-8")
    (root / "basics" / "cpu-checks.yaml").write_text(QUESTION, encoding="utf-8")
    return load_bank(root)


def _by_id(report) -> dict[str, object]:
    return {r.snippet_id: r for r in report.results}


def test_native_keys_are_unchanged_and_every_setting_has_its_own():
    snippet = Snippet(id="s", code="import torch\n")
    versions = Versions("2.15.0", "3.12.0")
    installed = lambda module: None  # noqa: E731
    native = cache_key(snippet, versions, installed)
    assert cache_key(snippet, versions, installed, cpu=NATIVE) == native
    keys = {cache_key(snippet, versions, installed, cpu=CpuSetting(cap, threads))
            for cap in (None, "avx2", "default") for threads in (None, 1, 2)}
    assert len(keys) == 9 and native in keys


def test_the_capability_reaches_the_zygote_and_an_exported_one_does_not(tmp_path, monkeypatch):
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "default")
    assert "ATEN_CPU_CAPABILITY" not in zygote_env(tmp_path)
    env = zygote_env(tmp_path, CpuSetting("avx2"))
    assert env["ATEN_CPU_CAPABILITY"] == "avx2"
    assert (env["ONEDNN_MAX_CPU_ISA"], env["MKL_ENABLE_INSTRUCTIONS"]) == ("AVX2", "AVX2")
    assert env["TORCHINDUCTOR_CACHE_DIR"] != zygote_env(tmp_path)["TORCHINDUCTOR_CACHE_DIR"]
    with pytest.raises(Exception, match="avx512"):
        CpuSetting("avx512")


@needs_avx512
def test_avx2_passes_under_the_option_fails_natively_and_the_cache_keeps_them_apart(
        bank, tmp_path, monkeypatch):
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "avx2")  # exported: must not reach a native run
    cache_dir = tmp_path / "build/cache/verify"
    avx2 = CpuSetting("avx2", threads=3)
    under = verify_bank(bank, cache_dir=cache_dir, progress=False, cpu=avx2)
    assert under.ok, [(r.snippet_id, r.reason) for r in under.results]
    assert (under.cpu_capability, under.threads) == ("avx2", 3)
    assert "under ATEN_CPU_CAPABILITY=avx2" in summary_line(under)

    native = verify_bank(bank, cache_dir=cache_dir, progress=False, jobs=1)
    results = _by_id(native)
    assert not results["runs-as-avx2"].cached, "an avx2 verdict served a native run"
    assert results["runs-as-avx2"].status is Status.failed
    assert "AVX512" in results["runs-as-avx2"].reason
    assert native.cpu_capability == "" and "ATEN_CPU_CAPABILITY" not in summary_line(native)
    assert native.threads == max(1, len(os.sched_getaffinity(0)))

    again = verify_bank(bank, cache_dir=cache_dir, progress=False, cpu=avx2)
    assert again.ok and all(r.cached for r in again.results)
    assert again.zygote_start is None

    data = json.loads(to_json([under, native]))
    assert [(b["cpu_capability"], b["threads"]) for b in data["builds"]] == [
        ("avx2", 3), ("native", native.threads)]
    suite = ET.fromstring(to_junit([under])).find("testsuite")
    assert {p.get("name"): p.get("value") for p in suite.iter("property")}[
        "cpu_capability"] == "avx2"


def test_the_thread_count_reaches_the_snippet(bank, tmp_path):
    report = verify_bank(bank, only=["cpu-checks/three-threads"], progress=False,
                         cache_dir=tmp_path / "cache", cpu=CpuSetting(threads=3))
    assert report.ok and report.threads == 3, report.results[0].reason


@pytest.mark.parametrize("argv, message", [
    (["--record", "--cpu-capability", "avx2"], "native runs"),
    (["--check-record", "--threads", "1"], "native runs"),
])
def test_the_record_is_of_native_runs_only(capsys, argv, message):
    assert main(["verify", *argv]) != 0
    assert message in capsys.readouterr().err


def test_bad_values_are_refused_by_the_parser(capsys):
    for argv in (["--threads", "0"], ["--cpu-capability", "avx512"]):
        with pytest.raises(SystemExit) as stopped:
            main(["verify", *argv])
        assert stopped.value.code == 2
    assert "--threads" in capsys.readouterr().err
