"""Snippets that attack the verifier itself: every run ends, every verdict is the verifier's.

tests/fixtures/verify-tampering holds them; the zygote attacks (SIGSTOP, SIGKILL to the
parent) run alone, since they end the run they are in.
"""

from __future__ import annotations

import io
import json
import signal
from pathlib import Path

import pytest
from rich.console import Console

from ptbank.loader import load_bank
from ptbank.models import Snippet
from ptbank.verify import Status, verify_bank
from ptbank.verify.cache import ResultCache
from ptbank.verify.launch import VerifierError, Zygote, zygote_env
from ptbank.verify.report import print_report, to_json, to_junit
from ptbank.verify.runner import Finished, Job, run_jobs

TAMPERING = Path(__file__).parent / "fixtures" / "verify-tampering"
RUN_LIMIT = 120
"""Seconds after which a run counts as hung (the failure these tests exist to catch)."""


@pytest.fixture
def no_hang():
    """Fail, rather than hang the suite, when a run does not end."""
    def hung(*_):
        raise TimeoutError(f"the verification did not end within {RUN_LIMIT} s")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(RUN_LIMIT)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")


@pytest.fixture(scope="module")
def tampered(tmp_path_factory):
    root = tmp_path_factory.mktemp("tampering")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PTBANK_TEST_PIDFILE", str(root / "escaped.pid"))
        mp.chdir(root)
        report = verify_bank(load_bank(TAMPERING), jobs=2, only=["tampering"], progress=False,
                             cache_dir=root / "cache")
    return {"root": root, "report": report, "results": {r.snippet_id: r for r in report.results}}


def test_a_forged_result_file_and_a_bad_exit_is_no_pass(tampered):
    forged = tampered["results"]["forged-result-file"]
    assert forged.status is Status.crashed, forged.reason
    assert "exited (status 3)" in forged.reason
    cache = ResultCache(tampered["root"] / "cache")
    assert cache.get(forged.key, "tampering", "forged-result-file", "") is None


def test_a_snippet_that_leaves_its_group_still_times_out_and_dies(tampered):
    escaped = tampered["results"]["leaves-its-group"]
    assert escaped.status is Status.timeout, escaped.reason
    assert gone(int((tampered["root"] / "escaped.pid").read_text()))


def test_lone_surrogates_are_reported_not_fatal(tampered):
    message = tampered["results"]["surrogate-in-message"]
    assert message.status is Status.failed and "bad \\udcff surrogate" in message.reason
    output = tampered["results"]["surrogate-in-output"]
    assert output.status is Status.error and "err \\udcff" in output.reason
    report = tampered["report"]
    table = io.StringIO()
    print_report(report, Console(file=table, width=120))  # the table, as the terminal gets it
    assert "surrogate-in-message" in table.getvalue()
    table.getvalue().encode("utf-8")
    json.loads(to_json([report]))
    to_junit([report]).encode("utf-8")
    cached = ResultCache(tampered["root"] / "cache").get(message.key, "tampering",
                                                        "surrogate-in-message", "")
    assert cached is not None and cached.reason == message.reason


def test_a_flood_below_python_is_capped_and_never_written_out(tmp_path):
    """os.write(1, ...) of 300 MiB: counted, the first MiB kept, nothing large on disk."""
    zygote = Zygote(tmp_path, zygote_env(tmp_path / "cache"))
    code = "import os\nchunk = b'x' * (1 << 20)\nfor _ in range(300):\n    os.write(1, chunk)\n"
    done: list[Finished] = []
    try:
        zygote.wait_ready()
        run_jobs(zygote, [Job("flood", Snippet(id="flood", code=code, timeout=60))], slots=1,
                 threads=1, workdir=tmp_path, on_finish=done.append)
    finally:
        zygote.close()
    [flood] = done
    assert flood.report["outcome"] == "completed"
    assert flood.stdout_bytes == 300 << 20 and len(flood.stdout) == 1 << 20
    largest = max(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file())
    assert largest < 1 << 20


def test_the_flood_is_noted_in_the_verdict(tampered):
    flood = tampered["results"]["flood-below-python"]
    assert flood.status is Status.passed
    assert any("stdout capped: 314,572,800 bytes written" in w for w in flood.warnings)


def test_a_snippet_that_stops_the_zygote_ends_the_run_and_leaves_nothing(tmp_path, monkeypatch,
                                                                        no_hang):
    monkeypatch.setenv("PTBANK_TEST_PIDFILE", str(tmp_path / "stopper.pid"))
    with pytest.raises(VerifierError, match="stop-the-zygote/sigstop-parent did not end"):
        verify_bank(load_bank(TAMPERING), jobs=1, only=["stop-the-zygote"], progress=False,
                    cache_dir=tmp_path / "cache")
    assert gone(int((tmp_path / "stopper.pid").read_text()))


def test_a_snippet_that_kills_the_zygote_is_named(tmp_path, no_hang):
    with pytest.raises(VerifierError, match="(?s)zygote died.*kill-the-zygote/sigkill-parent"):
        verify_bank(load_bank(TAMPERING), jobs=1, only=["kill-the-zygote"], progress=False,
                    cache_dir=tmp_path / "cache")
