"""The verdict cache: hits and misses, what invalidates it, and that a hit never imports torch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ptbank.loader import load_bank
from ptbank.models import Snippet
from ptbank.verify import Status, verify_bank
from ptbank.verify import facts
from ptbank.verify.cache import ResultCache, Versions, cache_key, extra_modules

PASSING = Path(__file__).parent / "fixtures" / "verify-passing"


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """A cold run of the passing bank, then a cached one, sharing a cwd-relative cache."""
    root = tmp_path_factory.mktemp("passing")
    cache_dir = root / "build/cache/verify"
    bank = load_bank(PASSING)
    cold = verify_bank(bank, cache_dir=cache_dir, progress=False)
    again = verify_bank(bank, cache_dir=cache_dir, progress=False)
    return {"root": root, "cache_dir": cache_dir, "bank": bank, "cold": cold, "again": again}


def test_cold_run_passes_and_fills_the_cache(warm):
    cold = warm["cold"]
    assert cold.ok and cold.counts["passed"] == 3
    assert not any(r.cached for r in cold.results)
    assert cold.zygote_start is not None and cold.zygote_start > 0
    assert len([p for p in warm["cache_dir"].glob("*.json") if p.name != "timings.json"]) == 3


def test_second_run_is_served_from_the_cache_without_a_zygote(warm):
    again = warm["again"]
    assert again.ok and all(r.cached for r in again.results)
    assert again.zygote_start is None
    assert [r.status for r in again.results] == [r.status for r in warm["cold"].results]


def test_cached_run_does_not_import_torch(warm):
    script = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from ptbank.loader import load_bank
        from ptbank.verify import verify_bank
        report = verify_bank(load_bank(Path({str(PASSING)!r})),
                             cache_dir=Path({str(warm["cache_dir"])!r}), progress=False)
        assert all(r.cached for r in report.results), report
        assert "torch" not in sys.modules, "a cached run imported torch"
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.strip() == "ok", done.stderr


def test_no_cache_reruns_and_leaves_the_cache_alone(warm, tmp_path):
    before = sorted(p.name for p in warm["cache_dir"].iterdir())
    report = verify_bank(warm["bank"], only=["quick-checks/arange-sum"], use_cache=False,
                         cache_dir=warm["cache_dir"], progress=False)
    assert report.ok and not report.results[0].cached
    assert sorted(p.name for p in warm["cache_dir"].iterdir()) == before


def test_a_torch_upgrade_reruns_everything(warm, monkeypatch):
    monkeypatch.setattr(facts, "torch_version", lambda: "99.0.0")
    report = verify_bank(warm["bank"], only=["quick-checks/prints-shape"],
                         cache_dir=warm["cache_dir"], progress=False)
    assert report.torch_version == "99.0.0"
    assert report.results[0].status is Status.passed and not report.results[0].cached


def test_key_covers_code_expectations_requirements_and_versions():
    base = Snippet(id="s", code="import torch\nassert True\n")
    versions = Versions(torch="2.13.0", python="CPython 3.11.7")
    key = cache_key(base, versions, _installed)
    variants = [
        base.model_copy(update={"code": "import torch\nassert 1\n"}),
        base.model_copy(update={"raises": "RuntimeError"}),
        base.model_copy(update={"match": "x"}),
        base.model_copy(update={"stdout": "1"}),
        base.model_copy(update={"requires": ["onnx"]}),
        base.model_copy(update={"timeout": 5}),
        base.model_copy(update={"memory_mb": 1024}),
    ]
    assert all(cache_key(v, versions, _installed) != key for v in variants)
    for changed in (Versions("2.14.0", versions.python),
                    Versions(versions.torch, "CPython 3.12.0"),
                    Versions(versions.torch, versions.python, verifier="999")):
        assert cache_key(base, changed, _installed) != key
    assert cache_key(base, versions, _installed) == key


def _installed(module: str) -> str:
    return "1.0"


def test_key_follows_the_versions_of_extra_modules():
    snippet = Snippet(id="s", code="import numpy as np\nimport os\nimport torch\n",
                      requires=["onnx", "cuda"])
    assert extra_modules(snippet) == ["numpy", "onnx"]
    versions = Versions(torch="2.13.0", python="CPython 3.11.7")
    key = cache_key(snippet, versions, _installed)
    assert cache_key(snippet, versions, lambda m: "0.0.1") != key
    assert cache_key(snippet, versions, lambda m: "1.0" if m == "numpy" else None) != key


def test_damaged_cache_entries_are_ignored(warm, tmp_path):
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    for entry in warm["cache_dir"].glob("*.json"):
        (cache_dir / entry.name).write_text("{not json")
    report = verify_bank(warm["bank"], only=["quick-checks/arange-sum"], cache_dir=cache_dir,
                         progress=False)
    assert report.ok and not report.results[0].cached


DAMAGES = [{"duration": "abc"}, {"duration": None}, {"warnings": 5}, {"status": 3},
           {"reason": ["a"]}, {"grew_mb": "big"}, {"duration": -1}]


def test_entries_with_wrong_types_are_misses_and_rerun(warm, tmp_path):
    """Valid JSON, wrong types: later runs rerun the snippet rather than crash on the entry."""
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    [target] = [r for r in warm["cold"].results if r.name == "quick-checks/arange-sum"]
    good = json.loads((warm["cache_dir"] / f"{target.key}.json").read_text())
    entry = cache_dir / f"{target.key}.json"
    for damage in DAMAGES:
        entry.write_text(json.dumps(good | damage))
        assert ResultCache(cache_dir).get(target.key, "q", "s", "") is None, damage
    timings = json.loads((warm["cache_dir"] / "timings.json").read_text())
    (cache_dir / "timings.json").write_text(
        json.dumps({name: "abc" for name in timings} | {"other/snippet": None}))
    report = verify_bank(warm["bank"], only=[target.name], cache_dir=cache_dir, progress=False)
    assert report.ok and not report.results[0].cached
    assert ResultCache(cache_dir).get(target.key, "q", "s", "") is not None  # replaced


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = os.environ | {"COLUMNS": "250"}
    return subprocess.run([sys.executable, "-m", "ptbank", "verify", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120, env=env)


def test_cli_exits_0_on_a_passing_bank(warm):
    done = run_cli("--content", str(PASSING), "--json", "r.json", "--junit", "r.xml",
                   cwd=warm["root"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("ptbank: 3 passed, 0 failed in ")
    assert "3 from cache" in done.stdout
    data = json.loads((warm["root"] / "r.json").read_text())
    [build] = data["builds"]
    assert data["ok"] is True and build["counts"]["passed"] == 3
    assert [r["snippet_id"] for r in build["results"]] == [
        "arange-sum", "prints-shape", "matmul-shape-error"]
    suite = ET.parse(warm["root"] / "r.xml").getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "0", "0")
