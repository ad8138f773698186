"""Snippets that attack the verifier itself: every run ends, every verdict is the verifier's.

tests/fixtures/verify-tampering holds them; the zygote attacks (SIGSTOP, SIGKILL to the
parent) run alone, since they end the run they are in.
"""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import time
import uuid
from pathlib import Path

import pytest
from rich.console import Console

from ptbank.loader import load_bank
from ptbank.models import Snippet
from ptbank.verify import Status, verify_bank
from ptbank.verify.cache import ResultCache
from ptbank.verify.launch import VerifierError, Zygote, zygote_env
from ptbank.verify import sandbox
from ptbank.verify.report import print_report, summary_line, to_json, to_junit
from ptbank.verify.classify import classify
from ptbank.verify.runner import Finished, Job, run_jobs

from ptbank.verify.proctree import children

from conftest import live_processes_with, wait_until_gone

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


@pytest.fixture(scope="module")
def tampered(tmp_path_factory):
    root = tmp_path_factory.mktemp("tampering")
    token = uuid.uuid4().hex
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PTBANK_SNIPPET_TOKEN", token)
        mp.chdir(root)
        report = verify_bank(load_bank(TAMPERING), jobs=2, only=["tampering"], progress=False,
                             cache_dir=root / "cache")
    return {"root": root, "report": report, "token": token,
            "results": {r.snippet_id: r for r in report.results}}


def test_a_forged_result_file_and_a_bad_exit_is_no_pass(tampered):
    forged = tampered["results"]["forged-result-file"]
    assert forged.status is Status.crashed, forged.reason
    assert "exited (status 3)" in forged.reason
    cache = ResultCache(tampered["root"] / "cache")
    assert cache.get(forged.key, "tampering", "forged-result-file", "") is None


def test_a_snippet_that_leaves_its_group_still_times_out_and_dies(tampered):
    escaped = tampered["results"]["leaves-its-group"]
    assert escaped.status is Status.timeout, escaped.reason
    assert wait_until_gone(tampered["token"]) == []


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


DETACHES = """\
import os, time
if os.fork() == 0:
    os.setsid()  # its own session and group: no group kill reaches it
    if os.fork() == 0:
        time.sleep(60)
    os._exit(0)
os.wait()
"""


def test_no_process_a_snippet_started_outlives_it_detached_or_not(tmp_path, process_token):
    """A double-forked grandchild in a session of its own is gone as soon as its snippet is,
    while the run goes on (not only when the zygote shuts down)."""
    zygote = Zygote(tmp_path, zygote_env(tmp_path / "cache"), sandboxed=True)
    alive_after: dict[str, list[str]] = {}

    def look(done: Finished) -> None:  # bubblewrap and the zygote carry the token too
        sandbox_pids = {zygote.proc.pid, *children(zygote.proc.pid)}
        deadline = time.monotonic() + 5
        while True:
            alive = [p for p in live_processes_with(process_token)
                     if int(p.split()[0]) not in sandbox_pids]
            if not alive or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        alive_after[done.job.id] = alive

    try:
        zygote.wait_ready()
        run_jobs(zygote, [Job("detaches", Snippet(id="detaches", code=DETACHES), 1.0),
                          Job("after", Snippet(id="after", code="import time\ntime.sleep(1)"))],
                 slots=1, threads=1, workdir=tmp_path, on_finish=look)
    finally:
        zygote.close()
    assert alive_after == {"detaches": [], "after": []}


def test_in_the_sandbox_a_snippet_cannot_stop_or_kill_the_zygote(tmp_path, no_hang,
                                                                 process_token):
    """Its parent is the init of its own PID namespace, which ignores signals sent from inside
    it; the zygote is not in the namespace at all. The run carries on, and each gets its own
    verdict."""
    report = verify_bank(load_bank(TAMPERING), jobs=1, only=["stop-the-zygote", "kill-the-zygote"],
                         progress=False, cache_dir=tmp_path / "cache")
    by_name = {r.snippet_id: r for r in report.results}
    assert by_name["sigkill-parent"].status is Status.passed, by_name["sigkill-parent"].reason
    assert by_name["sigstop-parent"].status is Status.timeout
    assert wait_until_gone(process_token) == []


def test_unconfined_a_snippet_that_stops_the_zygote_ends_the_run_and_leaves_nothing(
        tmp_path, no_hang, process_token):
    with pytest.raises(VerifierError, match="stop-the-zygote/sigstop-parent did not end"):
        verify_bank(load_bank(TAMPERING), jobs=1, only=["stop-the-zygote"], progress=False,
                    cache_dir=tmp_path / "cache", sandbox=False)
    assert wait_until_gone(process_token) == []


def test_unconfined_a_snippet_that_kills_the_zygote_is_named(tmp_path, no_hang):
    with pytest.raises(VerifierError, match="(?s)zygote died.*kill-the-zygote/sigkill-parent"):
        verify_bank(load_bank(TAMPERING), jobs=1, only=["kill-the-zygote"], progress=False,
                    cache_dir=tmp_path / "cache", sandbox=False)


# --- the sandbox ----------------------------------------------------------------------------

SANDBOX = Path(__file__).parent / "fixtures" / "verify-sandbox"


def folders_with_a_precious_file(*folders: Path) -> list[Path]:
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "keep-me").write_text("precious")
    return list(folders)


@pytest.fixture
def outside(tmp_path, monkeypatch):
    """Folders, a loopback server and a process outside the sandbox, named to the snippets.

    The folders: one in ptbank's working directory (the checkout), and one under the host's
    /tmp. Unconfined, the snippets would write and delete there.
    """
    cwd = tmp_path / "checkout"
    folders = folders_with_a_precious_file(cwd / "content", tmp_path / "outside")
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("HOME", str(cwd))
    monkeypatch.setenv("PTBANK_SNIPPET_FOLDERS", os.pathsep.join(map(str, [cwd, *folders])))
    server = socket.create_server(("127.0.0.1", 0))
    monkeypatch.setenv("PTBANK_SNIPPET_PORT", str(server.getsockname()[1]))
    monkeypatch.setenv("PTBANK_SNIPPET_PID", str(os.getpid()))
    yield folders
    server.close()


def test_the_sandbox_stops_files_network_and_signals(tmp_path, outside):
    report = verify_bank(load_bank(SANDBOX), jobs=2, progress=False, cache_dir=tmp_path / "c")
    assert {r.snippet_id: r.status for r in report.results} == {
        "cannot-write-outside": Status.passed, "cannot-reach-the-network": Status.passed,
        "cannot-signal-outside": Status.passed}, [r.reason for r in report.results]
    assert report.sandboxed
    for folder in outside:
        assert sorted(p.name for p in folder.iterdir()) == ["keep-me"]


def test_without_the_sandbox_the_same_snippets_get_out(tmp_path, outside):
    """The check above can fail: unconfined, every one of them reaches outside."""
    report = verify_bank(load_bank(SANDBOX), jobs=2, progress=False, cache_dir=tmp_path / "c",
                         sandbox=False)
    assert {r.status for r in report.results} == {Status.failed}
    assert not report.sandboxed and "without the sandbox" in summary_line(report)
    assert (Path.cwd() / "written-by-a-snippet").exists()  # the first folder it tried


def test_no_sandbox_here_is_refused_with_a_way_out(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on it
    sandbox.unavailable_because.cache_clear()
    try:
        with pytest.raises(sandbox.SandboxUnavailable,
                           match="bubblewrap.*not installed.*--no-sandbox"):
            verify_bank(load_bank(SANDBOX), progress=False, cache_dir=tmp_path / "c")
    finally:
        sandbox.unavailable_because.cache_clear()


def test_a_timeout_says_where_the_snippet_hung(tmp_path):
    """Before the kill, the snippet's main thread dumps its stack: the verdict names the line
    of the snippet it was stuck on, and the excerpt shows the stack."""
    zygote = Zygote(tmp_path, zygote_env(tmp_path / "cache"))
    code = "import time\n\n\ndef wait_here():\n    time.sleep(60)\n\n\nwait_here()\n"
    snippet = Snippet(id="stuck", code=code, timeout=2)
    done: list[Finished] = []
    try:
        zygote.wait_ready()
        run_jobs(zygote, [Job("stuck", snippet)], slots=1, threads=1, workdir=tmp_path,
                 on_finish=done.append)
    finally:
        zygote.close()
    status, reason, _ = classify(snippet, done[0])
    assert status is Status.timeout
    assert reason.startswith("still running after 2 s (at line 5 of the snippet, in wait_here);")
    assert "in <module>" in reason
