"""Controls and siblings for the findings gpudoctor makes from what a job left behind:
the ranks' step records (knowledge/stragglers.py), train-smoke's results
(commands/train_smoke), the rendezvous of a joined job (launch/rendezvous.py), a run
folder given to `diagnose` (torchrun's error files, Flight Recorder dumps), gpudoctor's
own temp folders and `lint`'s file reading — issue 34's method: the input that looks
most like the verdict's case but is not must not get it (test_control_*); the nearest
input that needs another verdict gets its own (test_sibling_*).

Step records and rank reports are built by hand, as tests/test_knowledge_stragglers.py
and tests/test_smoke_verify.py build them; folders and files are real (tmp_path); the
rendezvous is torch's real TCPStore on 127.0.0.1 inside this process."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import socket
import threading
from pathlib import Path

import pytest

from gpudoctor.commands.diagnose.analyse import diagnose
from gpudoctor.commands.diagnose.inputs import resolve
from gpudoctor.commands.train_smoke.config import SmokeConfig
from gpudoctor.commands.train_smoke.job import _checkpoint_folder, compare_dp
from gpudoctor.commands.train_smoke.verify import throughput, verify_all, verify_throughput, verify_workers
from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.stragglers import RankSteps, analyze_steps
from gpudoctor.linter import engine
from gpudoctor.probe.cuda import CudaFacts
from test_smoke_verify import healthy, typed

FLIGHT_RECORDER = Path(__file__).resolve().parent.parent / "fixtures" / "flight_recorder" / "kind"


def ids(findings) -> list[str]:
    return [f.id for f in findings]


# --- the ranks' step records --------------------------------------------------------------


def steps(late_at=(), late_us=1_500_000, wait_us=1_000, every_late_us=0, n=40, ranks=2, work_us=21_000):
    """Each rank's records: (step, start, total, data, forward, backward, optimizer, other,
    collective) µs. Rank 0 spends `late_us` more at the steps in `late_at` and
    `every_late_us` more at every step; the others wait for it inside the collective,
    on top of the `wait_us` every rank waits (the transfer itself)."""
    recs: dict[int, list] = {r: [] for r in range(ranks)}
    for i in range(n):
        extra = (late_us if i in late_at else 0) + every_late_us
        for rank in recs:
            own = extra if rank == 0 else 0
            wait = wait_us + (extra - own) + 200 * ((i + rank) % 3)
            phases = [2_000, work_us - 6_000, 3_000, 500, 500 + own, wait]
            recs[rank].append((i, 0, sum(phases), *phases))
    return [RankSteps(r, "a", n, "optimizer", tuple(v)) for r, v in recs.items()]


class TestRankPause:
    def test_control_a_balanced_job(self):
        assert analyze_steps(steps()).findings == ()

    def test_control_a_pause_inside_the_warm_up_is_not_compared(self):
        assert analyze_steps(steps(late_at={1})).findings == ()

    def test_sibling_one_evaluation_pause(self):
        [f] = analyze_steps(steps(late_at={20})).findings
        assert f.id == "rank-pause" and f.severity is Severity.INFO and f.evidence["rank"] == 0
        assert f.evidence["steps it was late at"] == 1 and "faster" not in f.title

    def test_sibling_a_pause_at_two_steps_is_a_straggler(self):
        [f] = analyze_steps(steps(late_at={10, 30})).findings
        assert f.id == "rank-straggler" and f.evidence["steps it was late at"] == 2


class TestCollectiveWait:
    def test_control_a_short_wait_in_every_collective(self):
        # every rank waits 4 ms of a ~25 ms step: the transfer, not a slow link
        assert analyze_steps(steps(wait_us=4_000)).findings == ()

    def test_control_under_half_the_step(self):
        assert analyze_steps(steps(wait_us=18_000, work_us=21_000)).findings == ()

    def test_sibling_every_rank_waits_most_of_the_step(self):
        [f] = analyze_steps(steps(wait_us=40_000)).findings
        assert f.id == "collective-wait" and f.severity is Severity.WARN and f.evidence["share of the step"] > 0.5

    def test_sibling_one_rank_late_at_every_step_is_a_straggler_not_the_link(self):
        [f] = analyze_steps(steps(wait_us=40_000, every_late_us=40_000)).findings
        assert f.id == "rank-straggler" and f.evidence["rank"] == 0


class TestStepEdgeCases:
    """Issue 34's edge cases for the step verdicts: one rank, zero steps, too few steps."""

    verdict = "rank-straggler"

    def test_control_one_rank_has_nobody_to_hold_back(self):
        v = analyze_steps(steps(ranks=1, every_late_us=40_000))
        assert v.findings == () and len(v.rows) == 1 and v.steps_per_s > 0

    def test_control_zero_steps_gives_no_verdict_and_no_rate(self):
        v = analyze_steps([RankSteps(r, "a", 0, "optimizer", ()) for r in range(2)])
        assert v.findings == () and v.rows == () and v.steps_per_s == 0.0

    def test_sibling_three_steps_past_warm_up_is_too_few_four_is_enough(self):
        few = analyze_steps(steps(every_late_us=40_000, n=5))  # steps 2, 3, 4 compared
        enough = analyze_steps(steps(every_late_us=40_000, n=6))
        assert few.findings == () and few.matched_steps == 3
        assert ids(enough.findings) == ["rank-straggler"]


# --- train-smoke -------------------------------------------------------------------------------


def with_workers(results, off=(1.5, 1.3), on=(1.4, 0.002)):
    for r in results:
        r["workers"] = {"num_workers": 2, "start_method": "spawn", "epochs": 2,
                        "off": {"startup_s": list(off), "epoch_s": [1.6, 1.4]},
                        "on": {"startup_s": list(on), "epoch_s": [1.5, 0.1]}}
    return results


class TestDataloaderWorkerStartup:
    def test_control_no_workers_measured(self):
        results = typed(healthy())
        assert verify_workers(results) is None
        assert "dataloader-worker-startup" not in [f.id for v in verify_all(results, SmokeConfig()) for f in v.findings]

    def test_control_a_measurement_stopped_by_the_watchdog_is_not_run(self):
        [v] = [v for v in verify_all(typed(with_workers(healthy())), SmokeConfig(), "timed out after 60 s")
               if v.name == "dataloader-workers"]
        assert v.passed is None and v.findings == () and "not run: timed out" in v.detail

    def test_sibling_spawned_workers_restarting_every_epoch(self):
        [f] = verify_workers(typed(with_workers(healthy()))).findings
        assert f.id == "dataloader-worker-startup" and f.severity is Severity.INFO and "persistent_workers=True" in f.fix

    def test_sibling_persistent_workers_that_save_nothing_advise_nothing(self):
        # workers that start in 10 ms either way: persistent_workers=True would change nothing
        [f] = verify_workers(typed(with_workers(healthy(), off=(0.01, 0.01), on=(0.01, 0.01)))).findings
        assert f.id == "dataloader-worker-startup" and f.fix == ""


class TestSmokeThroughput:
    def test_control_no_time_measured_is_not_a_rate(self):
        results = healthy()
        for r in results:
            r["throughput"].update(seconds=0.0, steps_per_s=None, samples_per_s=None)
        v = verify_throughput(throughput(typed(results)), "cpu")
        assert v.passed is None and v.findings == () and "not measured" in v.detail

    def test_control_a_job_that_did_not_finish_has_no_throughput(self):
        from gpudoctor.commands.train_smoke.verify import not_run

        assert "throughput" not in [v.name for v in not_run("rank 1 hung")]

    def test_sibling_the_job_goes_at_its_slowest_rank(self):
        [f] = verify_throughput(throughput(typed(healthy(2, steps=200))), "cpu").findings
        assert f.id == "smoke-throughput" and f.severity is Severity.OK
        assert f.evidence["steps_per_s"] == round(200 / 0.6, 2) and "2 ranks" in f.title


class TestDpComparisonNeedsGpus:
    def test_control_the_reason_is_the_one_that_holds(self):
        # two GPUs and --nproc 1: the GPUs are there, the ranks are not
        [f] = compare_dp(SmokeConfig(nproc=1, device="cuda"), CudaFacts(True, 2, True, "12.6"), {})[0]
        assert "--nproc 1" in f.title and "GPU visible" not in f.title

    def test_sibling_cpu(self):
        [f] = compare_dp(SmokeConfig(nproc=2, device="cpu"), None, {})[0]
        assert f.id == "dp-comparison-needs-gpus" and f.severity is Severity.WARN and "it ran on cpu" in f.title

    def test_sibling_one_gpu(self):
        [f] = compare_dp(SmokeConfig(nproc=2, device="cuda"), CudaFacts(True, 1, True, "12.6"), {})[0]
        assert "1 GPU visible" in f.title


# --- real ranks: how a job ended (few, each a few seconds) -----------------------------------------

TESTS = Path(__file__).resolve().parent.parent


def rank_env() -> dict[str, str]:
    from orphans import TAG_ENV, new_tag

    path = [str(Path(__file__).resolve().parent), str(TESTS), os.environ.get("PYTHONPATH", "")]
    return {"PYTHONPATH": os.pathsep.join(p for p in path if p), TAG_ENV: new_tag()}


def smoke_job(monkeypatch, target: str):
    """train-smoke's job with its rank function swapped for `target`, on one rank."""
    from gpudoctor.commands.train_smoke import job

    monkeypatch.setattr(job, "JOB", target)
    return job.run_local(SmokeConfig(nproc=1, timeout_s=120), env=rank_env())


@pytest.mark.slow
class TestSmokeNoResult:
    def test_control_a_rank_that_hands_its_report_back(self, monkeypatch):
        report = smoke_job(monkeypatch, "findings_targets:healthy_report")
        assert "smoke-no-result" not in ids(report.findings) and report.ok

    def test_sibling_a_rank_that_ends_well_with_no_report(self, monkeypatch):
        report = smoke_job(monkeypatch, "findings_targets:returns_nothing")
        [f] = report.findings
        assert f.id == "smoke-no-result" and f.severity is Severity.ERROR and not report.ok
        assert all(v["passed"] is None for v in report.data["verifications"])


@pytest.mark.slow
class TestTimeoutStillProgressingEdges:
    """Issue 34's edge cases on real ranks: one rank, and a job that works exactly as
    long as its timeout; each gets a true sentence."""

    verdict = "timeout-still-progressing"

    def run(self, sleep: float, timeout: float):
        from gpudoctor.hang.run_ranks import run_local

        return run_local("findings_targets:joins_then_sleeps", {"sleep": sleep}, 1, timeout=timeout, env=rank_env())

    def test_control_one_rank_that_ends_inside_its_timeout(self):
        run = self.run(0.2, 30.0)
        assert run.result.ok and list(run.findings) == []

    def test_sibling_one_rank_working_exactly_as_long_as_its_timeout(self):
        run = self.run(2.0, 2.0)
        if run.result.ok:  # it ended as the watchdog was due: finished, and nothing to say
            assert list(run.findings) == []
            return
        [f] = run.findings
        assert f.id == "timeout-still-progressing" and f.severity is Severity.WARN
        assert "2 s --timeout" in f.title and "hang" not in f.title and run.cause is None


@pytest.mark.slow
class TestRankStillStartingRun:
    """`gpudoctor run --timeout` on a script that does its own work before (or without)
    `import torch`: the rank is running the script, not starting."""

    verdict = "rank-still-starting"

    def run(self, tmp_path, script: str, timeout: str):
        import subprocess
        import sys

        (tmp_path / "job.py").write_text(script)
        out = tmp_path / "report.json"
        cmd = [sys.executable, "-m", "gpudoctor", "run", "--nproc", "1", "--timeout", timeout, "--json", str(out),
               str(tmp_path / "job.py")]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env={**os.environ, **rank_env()})
        return proc.returncode, json.loads(out.read_text())

    def test_control_a_script_that_ends_in_time(self, tmp_path):
        rc, report = self.run(tmp_path, "print('done')\n", "60")
        assert rc == 0 and report["findings"] == []

    def test_sibling_a_script_busy_before_importing_torch_is_not_starting(self, tmp_path):
        marker = tmp_path / "running"
        rc, report = self.run(tmp_path, f"open({str(marker)!r}, 'w').close()\nimport time\ntime.sleep(60)\n", "4")
        if not marker.exists():
            pytest.skip("the machine is too slow: the script had not started within 4 s")
        [f] = report["findings"]
        assert rc == 124 and "(Python, import torch)" not in f["title"], f
        assert "its script was still running" in f["title"] and f["evidence"]["last_stage"] == "script", f


SAMPLERS = """from torch.utils.data.distributed import DistributedSampler

data = list(range(8))
fixed = DistributedSampler(data, num_replicas=2, rank=0, shuffle=False)
for epoch in range(2):
    list(fixed)
stepped = DistributedSampler(data, num_replicas=2, rank=0, shuffle=True)
for epoch in range(2):
    stepped.set_epoch(epoch)
    list(stepped)
forgot = DistributedSampler(data, num_replicas=2, rank=0, shuffle=True)
for epoch in range(2):
    list(forgot)
"""


@pytest.fixture(scope="module")
def findings(tmp_path_factory):
    """`gpudoctor run` on SAMPLERS, once per session (the class's tests are often given to
    several xdist workers: tests/session_jobs.py): its findings."""
    import subprocess
    import sys

    from session_jobs import run_once

    def start(folder):
        (folder / "job.py").write_text(SAMPLERS)
        cmd = [sys.executable, "-m", "gpudoctor", "run", "--json", str(folder / "report.json"), str(folder / "job.py")]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env={**os.environ, **rank_env()})

    _, folder = run_once(tmp_path_factory, "samplers", start)
    return json.loads((folder / "report.json").read_text())["findings"]


@pytest.mark.slow
class TestSamplerWithoutSetEpoch:
    """One script with three samplers, each iterated for two epochs: the hook
    (hooks/data.py) sees which of them repeat one shuffled order."""

    def lines(self, findings) -> list[int]:
        return [int(f["evidence"]["source"].rsplit(":", 1)[1]) for f in findings if f["id"] == "sampler-without-set-epoch"]

    def test_control_a_sampler_that_does_not_shuffle(self, findings):
        assert 6 not in self.lines(findings)

    def test_control_set_epoch_before_every_epoch(self, findings):
        assert 10 not in self.lines(findings)

    def test_sibling_a_shuffling_sampler_without_set_epoch(self, findings):
        assert self.lines(findings) == [13] and [f["id"] for f in findings] == ["sampler-without-set-epoch"]
        assert findings[0]["severity"] == "warn" and "set_epoch" in findings[0]["fix"]

    def test_sibling_seen_on_two_ranks_is_one_finding(self):
        from gpudoctor.hooks.checks import runtime_findings
        from gpudoctor.hooks.facts import SamplerEpochRepeat

        seen = [SamplerEpochRepeat(r, "DistributedSampler", 0, 3, 2, 100) for r in (0, 1)]
        [f] = runtime_findings(seen)
        assert f.id == "sampler-without-set-epoch" and f.evidence["ranks"] == [0, 1]


# --- the rendezvous of a joined job -------------------------------------------------------------


@pytest.fixture()
def master(monkeypatch):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", str(port))
    monkeypatch.delenv("TORCHELASTIC_USE_AGENT_STORE", raising=False)
    return port


class TestRendezvousIncomplete:
    def test_control_one_rank_meets_itself_at_once(self, master):
        from gpudoctor.launch.rendezvous import meet

        assert meet(0, 1, 1.0, "env") is not None

    def test_control_both_ranks_come(self, master):
        from gpudoctor.launch.rendezvous import meet

        peer = threading.Thread(target=meet, args=(1, 2, 20.0, "env"), daemon=True)
        peer.start()
        assert meet(0, 2, 20.0, "env") is not None
        peer.join(20)

    def test_sibling_the_peer_never_comes_within_1_s(self, master):
        from gpudoctor.launch.rendezvous import RendezvousIncomplete, meet

        with pytest.raises(RendezvousIncomplete) as caught:
            meet(0, 2, 1.0, "env")
        f = caught.value.finding()
        assert f.id == "rendezvous-incomplete" and f.severity is Severity.ERROR
        assert f"127.0.0.1:{master}" in f.title and "rank 1 missing" in f.title and "within 1 s" in f.title
        assert f.evidence["joined"] == [0] and f.evidence["missing"] == [1]


# --- a run folder given to diagnose ---------------------------------------------------------------


def error_file(path: Path, message: str, stamp: str = "1700000000") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {"message": {"message": message, "extraInfo": {"py_callstack": "Traceback ...\n" + message, "timestamp": stamp}}}
    path.write_text(json.dumps(body))


def folder_ids(path: Path) -> list[str]:
    return ids(diagnose(resolve(str(path))).findings)


class TestRankException:
    def test_control_an_exception_a_pattern_knows(self, tmp_path):
        error_file(tmp_path / "0" / "error.json", "AssertionError: Torch not compiled with CUDA enabled")
        got = folder_ids(tmp_path)
        assert "rank-exception" not in got and "cuda-torch-cpu-build" in got

    def test_sibling_a_message_no_pattern_knows_is_the_ranks_own_first_failure(self, tmp_path):
        error_file(tmp_path / "1" / "error.json", "the data loader gave up after 3 retries", "")
        [f] = diagnose(resolve(str(tmp_path))).findings
        assert f.id == "rank-exception" and f.severity is Severity.ERROR and "rank 1 raised" in f.title
        assert f.title.endswith("(first failure)") and f.evidence["role"] == "cause"

    def test_sibling_a_later_error_on_another_rank_is_a_consequence(self, tmp_path):
        error_file(tmp_path / "1" / "error.json", "the data loader gave up after 3 retries", "1700000000")
        error_file(tmp_path / "0" / "error.json", "the data loader gave up after 3 retries", "1700000009")
        got = {f.evidence["rank"]: f for f in diagnose(resolve(str(tmp_path))).findings if f.id == "rank-exception"}
        assert got[1].title.endswith("(first failure)") and got[1].evidence["role"] == "cause"
        assert not got[0].title.endswith("(first failure)") and got[0].evidence["role"] == "consequence"

    def test_sibling_a_named_python_exception_is_the_generic_verdict(self, tmp_path):
        error_file(tmp_path / "1" / "error.json", "ShardError: shard 7 of /data/train is corrupt")
        assert folder_ids(tmp_path) == ["unrecognised-failure"]


class TestFilesNotRead:
    def test_control_every_file_read(self, tmp_path):
        (tmp_path / "rank0.log").write_text("step 1 loss 0.5\nstep 2 loss 0.4\n")
        (tmp_path / "rank1.log").write_text("step 1 loss 0.5\nstep 2 loss 0.4\n")
        assert "files-not-read" not in folder_ids(tmp_path)

    def test_control_an_empty_stdout_log_is_not_unread(self, tmp_path):
        (tmp_path / "rank0.log").write_text("step 1 loss 0.5\n")
        (tmp_path / "stdout.log").write_text("")
        assert "files-not-read" not in folder_ids(tmp_path)

    def test_sibling_a_binary_file_beside_the_logs(self, tmp_path):
        (tmp_path / "rank0.log").write_text("step 1 loss 0.5\n")
        (tmp_path / "core.bin").write_bytes(b"\x7fELF\x00\x00\x01" * 64)
        [f] = [f for f in diagnose(resolve(str(tmp_path))).findings if f.id == "files-not-read"]
        assert f.severity is Severity.WARN and "binary" in f.evidence["core.bin"]


class TestLogNoFailure:
    def test_control_a_log_cut_before_its_end_does_not_decide(self, tmp_path):
        log = tmp_path / "train.log"
        log.write_text("epoch 0 step 100 loss 2.31\nepoch 0 step 200 loss 2.05\n")
        assert folder_ids(log) == ["log-inconclusive"]

    def test_sibling_a_log_that_shows_its_end(self, tmp_path):
        log = tmp_path / "train.log"
        log.write_text("epoch 0 step 100 loss 2.31\nepoch 0 step 200 loss 2.05\nTraining completed.\n")
        [f] = diagnose(resolve(str(log))).findings
        assert f.id == "log-no-failure" and f.severity is Severity.OK and f.evidence["ended"]

    def test_sibling_a_failure_is_its_own_verdict(self, tmp_path):
        log = tmp_path / "train.log"
        log.write_text("epoch 0 step 100 loss 2.31\nAssertionError: Torch not compiled with CUDA enabled\n")
        assert "log-no-failure" not in folder_ids(log)


class RunsCommand:
    """What an attacker pickles: loading it would call os.system."""

    def __reduce__(self):
        return (os.system, ("true",))


class TestPickleRefused:
    def test_control_a_real_flight_recorder_dump_is_plain_data(self, tmp_path):
        for dump in FLIGHT_RECORDER.iterdir():
            shutil.copy(dump, tmp_path / dump.name)
        got = folder_ids(tmp_path)
        assert "pickle-refused" not in got and "files-not-read" not in got

    def test_sibling_a_dump_shaped_pickle_that_names_code(self, tmp_path):
        (tmp_path / "fr_trace_rank_0").write_bytes(pickle.dumps({"version": "2.10", "entries": [RunsCommand()]}, protocol=2))
        (tmp_path / "rank0.log").write_text("step 1 loss 0.5\n")
        [f] = [f for f in diagnose(resolve(str(tmp_path))).findings if f.id == "pickle-refused"]
        assert f.severity is Severity.ERROR and f.evidence["file"] == "fr_trace_rank_0"

    def test_sibling_a_binary_that_is_not_a_pickle_is_only_unread(self, tmp_path):
        (tmp_path / "rank0.log").write_text("step 1 loss 0.5\n")
        (tmp_path / "weights.bin").write_bytes(b"\x00\x01\x02" * 100)
        got = folder_ids(tmp_path)
        assert "pickle-refused" not in got and "files-not-read" in got


# --- gpudoctor's own temp folders ----------------------------------------------------------------


class TestTempFolderRefused:
    def test_control_a_private_folder_of_ours_is_used(self, tmp_path):
        (tmp_path / "smoke").mkdir(mode=0o700)
        path = str(tmp_path / "smoke" / "train-smoke.pt")
        assert _checkpoint_folder(path) == (path, [])

    def test_control_a_new_folder_is_made_private(self, tmp_path):
        path = str(tmp_path / "fresh" / "train-smoke.pt")
        assert _checkpoint_folder(path) == (path, []) and (os.stat(tmp_path / "fresh").st_mode & 0o777) == 0o700

    def test_sibling_a_folder_others_can_write(self, tmp_path):
        shared = tmp_path / "smoke"
        shared.mkdir()
        shared.chmod(0o777)
        used, [f] = _checkpoint_folder(str(shared / "train-smoke.pt"))
        try:
            assert f.id == "temp-folder-refused" and f.severity is Severity.WARN and "open to other users" in f.title
            assert not used.startswith(str(shared)) and f.evidence["used instead"] == os.path.dirname(used)
        finally:
            shutil.rmtree(os.path.dirname(used), ignore_errors=True)

    def test_sibling_a_planted_link(self, tmp_path):
        (tmp_path / "victim").mkdir(mode=0o700)
        os.symlink(tmp_path / "victim", tmp_path / "smoke")
        used, [f] = _checkpoint_folder(str(tmp_path / "smoke" / "train-smoke.pt"))
        try:
            assert "symbolic link" in f.title
        finally:
            shutil.rmtree(os.path.dirname(used), ignore_errors=True)


# --- lint's file reading ------------------------------------------------------------------------


def lint_ids(path: Path) -> list[str]:
    return [d.rule for d in engine.lint_file(str(path))]


class TestUnreadableFile:
    def test_control_latin1_with_its_coding_cookie(self, tmp_path):
        src = tmp_path / "train.py"
        src.write_bytes(b"# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n")
        assert lint_ids(src) == []

    def test_control_a_utf8_bom(self, tmp_path):
        src = tmp_path / "train.py"
        src.write_bytes(b"\xef\xbb\xbfname = 'caf\xc3\xa9'\n")
        assert lint_ids(src) == []

    def test_sibling_the_same_bytes_without_the_cookie(self, tmp_path):
        src = tmp_path / "train.py"
        src.write_bytes(b"name = 'caf\xe9'\n")
        assert lint_ids(src) == ["unreadable-file"]

    def test_sibling_bad_python_that_decodes_is_a_syntax_error(self, tmp_path):
        src = tmp_path / "train.py"
        src.write_bytes(b"print 'caf\xc3\xa9'\n")
        assert lint_ids(src) == ["syntax-error"]


class TestRankExceptionOnce:
    """An error file's exception is said once: by a pattern, by the failure detector
    (unrecognised-failure), or, where neither reads it, as the rank's own exception."""

    verdict = "rank-exception"

    def test_control_a_bare_exception_name_is_not_said_twice(self, tmp_path):
        error_file(tmp_path / "1" / "error.json", "ShardError")
        assert folder_ids(tmp_path) == ["unrecognised-failure"]

    def test_sibling_plain_words_no_detector_reads_are_the_ranks_exception(self, tmp_path):
        error_file(tmp_path / "1" / "error.json", "gave up after 3 retries", "")
        assert folder_ids(tmp_path) == ["rank-exception"]
