"""The zygote and the scheduler: the fork hazard is caught, threads are set, heavy runs first."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ptbank.models import Snippet
from ptbank.verify.launch import HeadStart, VerifierError, Zygote, zygote_env
from ptbank.verify.runner import (Finished, Job, estimate, run_jobs, run_jobs_with_canary,
                                  shared_imports)


def start_zygote(workdir: Path, preload=(), env=None) -> Zygote:
    zygote = Zygote(workdir, env or zygote_env(workdir / "cache"))
    zygote.wait_ready(preload)
    return zygote


def run_canary(zygote: Zygote, workdir: Path, timeout: float = 30.0) -> None:
    """The canary alone: raises VerifierError unless a threaded op completes in a child."""
    run_jobs_with_canary(zygote, [], slots=1, threads=2, workdir=workdir,
                         on_finish=lambda done: None, canary_timeout=timeout)


def start_poisoned_zygote(tmp_path: Path) -> Zygote:
    """A zygote that preloads a module running an OpenMP op at import: every child hangs."""
    modules = tmp_path / "modules"
    modules.mkdir()
    (modules / "ptbank_fork_hazard.py").write_text(
        "import torch\ntorch.set_num_threads(2)\ntorch.ones(1 << 22).sum()\n")
    env = zygote_env(tmp_path / "cache")
    env["PYTHONPATH"] = f"{modules}{os.pathsep}{env['PYTHONPATH']}"
    return start_zygote(tmp_path, ["ptbank_fork_hazard"], env)


def test_canary_catches_a_zygote_that_ran_a_threaded_op(tmp_path):
    """A module that runs an OpenMP op at import poisons every child; the canary must say so."""
    zygote = start_poisoned_zygote(tmp_path)
    try:
        with pytest.raises(VerifierError, match="canary hung"):
            run_canary(zygote, tmp_path, timeout=3)
    finally:
        zygote.close()


def test_no_result_counts_when_the_canary_run_beside_it_fails(tmp_path):
    """The canary runs alongside the first snippets; a snippet that finished first is dropped."""
    zygote = start_poisoned_zygote(tmp_path)
    handed_on: list[Finished] = []
    try:
        with pytest.raises(VerifierError, match="canary hung"):
            quick = Snippet(id="quick", code="open('finished', 'w').close()")
            run_jobs_with_canary(zygote, [Job("0", quick)], slots=2,
                                 threads=1, workdir=tmp_path, on_finish=handed_on.append,
                                 canary_timeout=3)
    finally:
        zygote.close()
    assert (tmp_path / "0" / "finished").exists(), "the snippet should have finished first"
    assert handed_on == []


@pytest.fixture(scope="module")
def zygote(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("zygote")
    started = start_zygote(workdir)
    yield started, workdir
    started.close()


def test_zygote_imports_but_runs_nothing(zygote):
    started, workdir = zygote
    assert started.ready["failed"] == {}
    run_canary(started, workdir)


def test_zygote_reports_preloads_that_fail_and_still_serves(tmp_path):
    zygote = start_zygote(tmp_path, ["ptbank_no_such_module"])
    try:
        assert "ModuleNotFoundError" in zygote.ready["failed"]["ptbank_no_such_module"]
        run_canary(zygote, tmp_path)
    finally:
        zygote.close()


def test_children_collect_their_garbage_but_never_walk_the_zygote_heap(zygote):
    """The zygote freezes what it imported: a child's full collection skips those objects
    (otherwise each one costs 0.15 s and copies the heap), yet the child's own cycles die."""
    started, workdir = zygote
    code = textwrap.dedent("""
        import gc, weakref
        assert gc.isenabled()
        assert gc.get_freeze_count() > 50_000, gc.get_freeze_count()
        class Node: pass
        a, b = Node(), Node()
        a.other, b.other = b, a
        probe = weakref.ref(a)
        del a, b
        gc.collect()
        assert probe() is None
    """)
    done: list[Finished] = []
    run_jobs(started, [Job("gc", Snippet(id="gc", code=code, timeout=20))], slots=1,
             threads=1, workdir=workdir, on_finish=done.append)
    assert done[0].report["outcome"] == "completed", done[0].stderr_tail


def test_head_start_only_on_a_cache_without_verdicts(tmp_path):
    cache_dir = tmp_path / "cache"
    with HeadStart(cache_dir) as cold:  # no cache folder at all
        assert cold.take("/usr/bin/python-of-another-build") is None
        lease = cold.take(sys.executable)
        assert lease is not None and cold.take(sys.executable) is None
        with lease:
            assert lease.zygote.wait_ready() > 0
    cache_dir.mkdir()
    (cache_dir / "timings.json").write_text("{}")
    with HeadStart(cache_dir) as timings_only:
        assert timings_only._lease is not None
    (cache_dir / ("0" * 64 + ".json")).write_text('{"status": "passed"}')
    with HeadStart(cache_dir) as warm:
        assert warm.take(sys.executable) is None, "a run that may be fully cached must not start torch"
    with HeadStart(cache_dir, use_cache=False) as no_cache:
        assert no_cache._lease is not None


def test_an_unused_head_start_is_killed_not_waited_for(tmp_path):
    """E.g. the bank did not load: the zygote, still importing torch, must not hold ptbank up."""
    with HeadStart(tmp_path / "cache") as head_start:
        proc = head_start._lease.zygote.proc
    assert proc.returncode == -signal.SIGKILL


def test_children_get_the_requested_thread_count(zygote):
    started, workdir = zygote
    code = ("import torch\nassert torch.get_num_threads() == 2, torch.get_num_threads()\n"
            "assert torch.ones(1 << 22).sum() == 1 << 22\n")
    done: list[Finished] = []
    run_jobs(started, [Job("threads", Snippet(id="t", code=code, timeout=20))], slots=1,
             threads=2, workdir=workdir, on_finish=done.append)
    report = done[0].report
    resident = report.pop("resident")
    assert report == {"outcome": "completed", "warnings": []}
    assert (done[0].stdout_bytes, done[0].stderr_bytes) == (0, 0)
    assert 0 < resident["at_start"] <= resident["peak"]


def test_a_torch_that_does_not_import_is_named_as_the_cause(tmp_path):
    shadow = tmp_path / "shadow"
    (shadow / "torch").mkdir(parents=True)
    (shadow / "torch" / "__init__.py").write_text("raise ImportError('broken torch build')\n")
    env = zygote_env(tmp_path / "cache")
    env["PYTHONPATH"] = f"{shadow}{os.pathsep}{env['PYTHONPATH']}"
    zygote = Zygote(tmp_path, env)
    zygote.proc.wait(60)  # as with a head start: it has given up before anything was asked
    try:
        with pytest.raises(VerifierError, match="cannot import torch: ImportError: broken torch"):
            zygote.wait_ready()
    finally:
        zygote.close()


def test_zygote_death_is_an_infrastructure_error(tmp_path):
    zygote = Zygote(tmp_path, zygote_env(tmp_path / "cache"))
    zygote.proc.kill()
    zygote.proc.wait()
    with pytest.raises(VerifierError, match="zygote died"):
        run_jobs(zygote, [Job("a", Snippet(id="a", code="pass"))], slots=1, threads=1,
                 workdir=tmp_path, on_finish=lambda done: None)
    zygote.close()


class FakeZygote:
    """Answers like the zygote, instantly; jobs whose code says `hang` wait to be killed."""

    def __init__(self):
        self.started: list[str] = []
        self.outbox: list[dict] = []
        self.hanging: set[str] = set()
        self.max_running = 0
        self.running: set[str] = set()

    def send(self, message: dict) -> None:
        job = message["job"]
        if message["op"] == "run":
            self.started.append(job)
            self.running.add(job)
            self.max_running = max(self.max_running, len(self.running))
            self.outbox.append({"event": "started", "job": job, "pid": 0})
            code = message["code"]
            if "hang" in code:
                self.hanging.add(job)
            else:
                report = json.dumps({"outcome": "completed", "warnings": []})
                self.outbox.append({"event": "exit", "job": job, "status": 0, "report": report})
        elif message["op"] == "kill" and job in self.hanging:
            self.outbox.append({"event": "exit", "job": job, "status": signal.SIGKILL})

    def events(self, timeout):
        out, self.outbox = self.outbox, []
        for event in out:
            if event["event"] == "exit":
                self.running.discard(event["job"])
        return out


def test_scheduler_runs_heaviest_first_within_the_slots(tmp_path):
    fake = FakeZygote()
    jobs = [Job(name, Snippet(id=name, code="pass"), cost)
            for name, cost in (("light", 0.1), ("heavy", 9.0), ("medium", 2.0), ("tiny", 0.0))]
    done: list[Finished] = []
    run_jobs(fake, jobs, slots=2, threads=1, workdir=tmp_path, on_finish=done.append)
    assert fake.started == ["heavy", "medium", "light", "tiny"]
    assert fake.max_running <= 2
    assert all(d.report == {"outcome": "completed", "warnings": []} and not d.timed_out
               for d in done)


def test_scheduler_kills_a_snippet_at_its_timeout(tmp_path):
    fake = FakeZygote()
    jobs = [Job("slow", Snippet(id="slow", code="hang", timeout=0.2)),
            Job("quick", Snippet(id="quick", code="pass"))]
    done: dict[str, Finished] = {}
    run_jobs(fake, jobs, slots=2, threads=1, workdir=tmp_path,
             on_finish=lambda d: done.setdefault(d.job.id, d))
    assert done["slow"].timed_out and done["slow"].duration >= 0.2
    assert not done["quick"].timed_out


def test_estimate_prefers_the_last_known_duration():
    compiled = Snippet(id="c", code="import torch\nf = torch.compile(lambda x: x)\n")
    plain = Snippet(id="p", code="import torch\n")
    assert estimate(compiled, None) > estimate(plain, None)
    assert estimate(compiled, 0.25) == 0.25


def test_heavy_lazy_modules_are_preloaded_only_for_two_users_or_more():
    compiled = Snippet(id="c", code="import torch\nf = torch.compile(lambda x: x)\n")
    exported = Snippet(id="e", code="import torch\nep = torch.export.export(m, (x,))\n")
    plain = Snippet(id="p", code="import torch\n")
    assert shared_imports([compiled, plain, exported]) == []
    assert shared_imports([compiled, compiled, exported]) == ["torch._inductor.compile_fx"]


def test_a_zygote_with_inductor_preloaded_still_forks_safely(tmp_path):
    """Importing inductor must start no thread pool or compile workers before the forks."""
    zygote = start_zygote(tmp_path, ["torch._inductor.compile_fx"])
    try:
        assert zygote.ready["failed"] == {}
        run_canary(zygote, tmp_path)
    finally:
        zygote.close()


def test_preloading_never_asks_cuda_anything():
    """A forked child cannot use CUDA if the zygote touched it, even via is_available()."""
    script = textwrap.dedent("""
        import torch
        calls = []
        for name in ("is_available", "device_count", "_lazy_init", "init", "current_device",
                     "get_device_properties", "get_device_name", "is_initialized"):
            real = getattr(torch.cuda, name)
            spy = lambda *a, _n=name, _r=real, **k: calls.append(_n) or _r(*a, **k)
            setattr(torch.cuda, name, spy)
        from ptbank.verify.zygote import BASE_PRELOAD, _preload
        assert _preload(BASE_PRELOAD) == {}
        print(calls)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.strip() == "[]", done.stderr


def test_devices_are_probed_in_a_separate_process_only_when_the_answer_is_not_known(
        monkeypatch):
    from ptbank.verify import requirements
    from ptbank.verify.cache import Versions
    from ptbank.verify.interpreter import Interpreter

    def built(torch: str) -> Interpreter:
        interpreter = Interpreter(sys.executable)
        interpreter.versions = Versions(torch=torch, python="CPython 3.11.7")
        return interpreter

    cpu_build = requirements.probe_devices(built("2.13.0+cpu"))
    assert (cpu_build.cuda, cpu_build.gpus) == (False, 0) and "CPU build" in cpu_build.why
    monkeypatch.setattr(requirements, "nvidia_driver_loaded", lambda: False)
    no_driver = requirements.probe_devices(built("2.15.0+cu132"))
    assert no_driver.why == "no NVIDIA driver on this machine; torch 2.15.0+cu132"
    monkeypatch.setattr(requirements, "nvidia_driver_loaded", lambda: True)
    probed = requirements.probe_devices(built("2.15.0+cu132"))  # no GPU here all the same
    assert probed.why == "probed with torch 2.15.0+cu132"
    assert (probed.cuda, probed.gpus) == (False, 0)


class ForgingZygote(FakeZygote):
    """A zygote channel that also carries an exit for a job nobody started (a forged one)."""

    def send(self, message: dict) -> None:
        super().send(message)
        if message["op"] == "run":
            report = json.dumps({"outcome": "completed", "warnings": []})
            self.outbox.append({"event": "exit", "job": "ghost", "status": 0, "report": report})


def test_a_message_for_a_job_that_is_not_running_is_refused(tmp_path):
    with pytest.raises(VerifierError, match="not about a snippet that is running"):
        run_jobs(ForgingZygote(), [Job("real", Snippet(id="real", code="pass"))], slots=1,
                 threads=1, workdir=tmp_path, on_finish=lambda done: None)
