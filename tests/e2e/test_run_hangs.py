"""The hang & crash doctor: `gpudoctor run --nproc 2` on real gloo jobs that hang or
die the ways users' jobs do (tests/scripts/hang/), each bounded, none leaving a
process behind."""

import os
import signal
import subprocess
import sys
import time

import pytest

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TESTS)
sys.path.insert(0, TESTS)
from agreement import disagreements  # noqa: E402
from orphans import TAG_ENV, kill_all, leftovers, new_tag, tagged  # noqa: E402

pytestmark = pytest.mark.slow


def script(name):
    return os.path.join("tests", "scripts", "hang", name)


def doctor(doctor_jobs, name, *args, hang_timeout="30", timeout=150, options=()):
    """The doctor on a script (a job shared with tests/e2e/test_diagnose_run_folder.py where
    that reads the same one: tests/doctor_jobs.py); returns (completed process, --json report)."""
    job = doctor_jobs.run(script(name), *args, hang_timeout=hang_timeout, options=options, timeout=timeout)
    r, report = job.process, job.report
    # Every live case: the words and the JSON agree on the root rank, one state per rank.
    assert disagreements(report, report_part(r), 2) == [], r.stderr
    return r, report


def report_part(r):
    """The doctor's own report: what follows the ranks' echoed output."""
    return "\n".join(line for line in r.stderr.splitlines() if not line.startswith("[rank "))


def test_mismatched_kind_is_reported_live_with_both_lines(doctor_jobs):
    start = time.monotonic()
    r, report = doctor(doctor_jobs, "mismatch_kind.py")
    assert r.returncode == 1, r.stderr
    text = report_part(r)
    assert "collective #3 differs across ranks: rank 0 called all_reduce at tests/scripts/hang/mismatch_kind.py:11; " in text
    assert "rank 1 called broadcast at tests/scripts/hang/mismatch_kind.py:13" in text
    assert "[collective-mismatch]" in text and "no problems seen" not in r.stderr
    assert "run folder: " in text
    [f] = report["findings"]
    assert f["evidence"]["rank 1"] == "broadcast [4] float32 root 0 at tests/scripts/hang/mismatch_kind.py:13"
    assert report["root_cause"]["kind"] == "collective-mismatch"
    assert [(x["rank"], x["state"], x["collective"]["seq"]) for x in report["ranks"]] == [(0, "waiting", 3), (1, "waiting", 3)]
    assert time.monotonic() - start < 60  # not the backend's 30-minute timeout
    run_dir = report["run_dir"]
    assert os.path.exists(os.path.join(run_dir, "rank1.collectives.json"))


def test_mismatched_shape_names_each_rank_s_shape(doctor_jobs):
    r, report = doctor(doctor_jobs, "mismatch_shape.py")
    text = report_part(r)
    assert "collective #2 (all_reduce) has a different shape on each rank: rank 0 [4]; rank 1 [5]" in text, r.stderr
    assert "rank 0: all_reduce [4] float32 at tests/scripts/hang/mismatch_shape.py:8" in text
    # gloo aborts rank 0 on the size mismatch (SIGABRT): still a problem found, 1, as when gpudoctor stops it.
    assert r.returncode == 1
    assert report["root_cause"]["kind"] == "collective-mismatch"


def test_barrier_only_rank_0_calls(doctor_jobs):
    r, report = doctor(doctor_jobs, "barrier_rank0.py")
    assert r.returncode == 1, r.stderr
    text = report_part(r)
    assert "rank 0 failed in barrier #4 at tests/scripts/hang/barrier_rank0.py:12, which rank 1 never called" in text
    assert "take the barrier at tests/scripts/hang/barrier_rank0.py:12 out of any `if rank == ...` block" in text
    assert report["root_cause"]["rank"] == 0 and report["root_cause"]["kind"] == "collective-missing"


def test_skipped_collective(doctor_jobs):
    r, report = doctor(doctor_jobs, "skipped_collective.py")
    assert r.returncode == 1, r.stderr
    text = report_part(r)
    assert "collective #6 differs across ranks: rank 0 called all_reduce at tests/scripts/hang/skipped_collective.py:12" in text
    assert "all_reduce at tests/scripts/hang/skipped_collective.py:12: rank 0 3, rank 1 2" in text
    assert "broadcast at tests/scripts/hang/skipped_collective.py:9: rank 0 3, rank 1 4" in text


def test_stuck_rank_is_named_with_every_rank_s_place(doctor_jobs):
    r, report = doctor(doctor_jobs, "stuck_compute.py", hang_timeout="3")
    assert r.returncode == 124, r.stderr
    text = report_part(r)
    assert (
        "rank 1 holds the others up: rank 0 waits in all_reduce #2 at tests/scripts/hang/stuck_compute.py:19; "
        "rank 1 is not in a collective: tests/scripts/hang/stuck_compute.py:11 in load_next_shard (time.sleep)"
    ) in text
    assert report["root_cause"]["rank"] == 1 and report["root_cause"]["kind"] == "collective-stall"
    ranks = {x["rank"]: x for x in report["ranks"]}
    assert ranks[1]["state"] == "running" and ranks[1]["where"] == "tests/scripts/hang/stuck_compute.py:11"
    assert ranks[0]["state"] == "waiting" and ranks[0]["collective"]["kind"] == "all_reduce"
    stacks = open(os.path.join(report["run_dir"], "rank1.stacks.txt")).read()
    assert "in load_next_shard" in stacks and "Thread MainThread" in stacks


def test_timeout_watchdog_takes_stacks_instead_of_killing_the_ranks(doctor_jobs):
    """`--timeout` (not --hang-timeout) asks the ranks for stacks with SIGUSR1: they
    print them, and the job is a timeout (124), not two ranks killed by SIGUSR1."""
    r, report = doctor(doctor_jobs, "stuck_compute.py", hang_timeout="0", timeout=90, options=("--timeout", "30"))
    assert r.returncode == 124, r.stderr
    assert "SIGUSR1" not in r.stderr
    assert "[rank 1]   File" in r.stderr and "in load_next_shard" in r.stderr  # faulthandler's dump, echoed
    text = report_part(r)
    assert "rank 1 holds the others up" in text and "stuck_compute.py:11 in load_next_shard" in text
    assert report["root_cause"]["rank"] == 1


def test_send_send_cycle_is_a_deadlock_before_the_hang_timeout(doctor_jobs):
    start = time.monotonic()
    r, report = doctor(doctor_jobs, "send_send.py", hang_timeout="300")
    assert r.returncode == 1, r.stderr
    text = report_part(r)
    assert (
        "deadlock: rank 0 waits in send #1 to rank 1 at tests/scripts/hang/send_send.py:9; "
        "rank 1 waits in send #1 to rank 0 at tests/scripts/hang/send_send.py:9"
    ) in text
    assert report["root_cause"]["kind"] == "collective-deadlock"
    assert time.monotonic() - start < 60


def corpus_line(name, mark):
    """The line of `# @<mark>` in a case of tests/hang_corpus/."""
    path = os.path.join(TESTS, "hang_corpus", name)
    return next(n for n, text in enumerate(open(path), 1) if f"# @{mark}" in text)


def test_a_rank_that_destroyed_the_group_and_left_is_the_root_not_its_victim(doctor_jobs):
    name = "destroy_mid_training.py"
    r, report = doctor(doctor_jobs, f"../../hang_corpus/{name}")
    assert r.returncode == 1, r.stderr
    at = f"tests/hang_corpus/{name}:{corpus_line(name, 'A')}"
    assert f"rank 1 called destroy_process_group() at {at} after 2 collectives and left" in report_part(r)
    assert report["root_cause"]["rank"] == 1 and report["root_cause"]["kind"] == "collective-missing"


def test_a_dataloader_worker_s_exception_is_reported_at_the_worker_s_frame(doctor_jobs):
    name = "dataloader_worker_keyerror.py"
    r, report = doctor(doctor_jobs, f"../../hang_corpus/{name}")
    assert r.returncode == 1, r.stderr
    at = f"tests/hang_corpus/{name}:{corpus_line(name, 'A')}"
    assert f"rank 1 failed first: it raised KeyError: 6 at {at}" in report_part(r)
    assert report["root_cause"]["where"] == at and report["root_cause"]["message"] == "6"


def test_uneven_batches(doctor_jobs):
    r, report = doctor(doctor_jobs, "uneven_batches.py")
    assert r.returncode == 1, r.stderr
    text = report_part(r)
    assert "uneven work: rank 0 left the loop after 3 all_reduce calls at tests/scripts/hang/uneven_batches.py:13 " in text
    assert "rank 1 called a 4th" in text and "drop_last" in text and "Join" in text
    assert report["root_cause"]["rank"] == 0  # the rank that left first: where the sequences part


@pytest.mark.parametrize(
    "how, status, first",
    [
        ("raise", 1, "rank 1 failed first: it raised ValueError: bad batch at step 2 at tests/scripts/hang/one_rank_fails.py:16"),
        ("exit", 9, "rank 1 failed first: it called os._exit(9) at tests/scripts/hang/one_rank_fails.py:18"),
        ("kill", 128 + signal.SIGKILL, "rank 1 failed first: it was killed by SIGKILL"),
    ],
)
def test_one_rank_fails_the_other_is_its_victim(doctor_jobs, how, status, first):
    r, report = doctor(doctor_jobs, "one_rank_fails.py", how)
    assert r.returncode == status, r.stderr
    text = report_part(r)
    assert first in text and "(after collective #2)" in text
    assert "rank 0 failed because rank 1 was gone (in all_reduce #3 at tests/scripts/hang/one_rank_fails.py:20)" in text
    assert "no problems seen" not in r.stderr and text.count("[rank-peer-lost]") == 1
    cause = report["root_cause"]
    assert cause["rank"] == 1 and cause["reached"] == 2
    assert {x["rank"]: x["state"] for x in report["ranks"]}[0] in ("lost-peer", "waiting")


def test_slow_but_moving_job_passes_untouched(doctor_jobs):
    r, report = doctor(doctor_jobs, "slow_steps.py", "1.5", hang_timeout="8")  # steps of 1.5 s never stall
    assert r.returncode == 0, r.stderr
    # Both ranks share our stdout unbuffered: their lines may interleave mid-line.
    assert "rank 0 done: 8" in r.stdout and "rank 1 done: 8" in r.stdout
    assert report["findings"] == [] and report["root_cause"] is None
    assert "run folder" not in r.stderr


def test_killing_the_doctor_leaves_no_rank_behind(tmp_path):
    tag = new_tag()
    env = dict(os.environ, **{TAG_ENV: tag})
    env.pop("GPUDOCTOR_RUN", None)
    cmd = [sys.executable, "-m", "gpudoctor", "run", "--nproc", "2", script("stuck_compute.py")]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while len(tagged(tag)) < 3 and time.monotonic() < deadline:  # the doctor and its two ranks
            time.sleep(0.1)
        assert len(tagged(tag)) >= 3
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert leftovers(tag, settle_s=10) == []
    finally:
        proc.kill()
        kill_all(leftovers(tag, settle_s=0))


def test_under_torchrun_the_ranks_doctors_diagnose_over_the_job_s_store(tmp_path):
    tag = new_tag()
    env = dict(os.environ, **{TAG_ENV: tag})
    env.pop("GPUDOCTOR_RUN", None)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"]
    cmd += ["-m", "gpudoctor", "run", "--hang-timeout", "3", script("stuck_compute.py")]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=150, cwd=ROOT, env=env)
        assert leftovers(tag) == []
    finally:
        kill_all(leftovers(tag, settle_s=0))
    assert r.returncode != 0
    assert "gpudoctor run: 2 ranks of the torchrun job: stopped (stall)" in r.stderr
    assert (
        "rank 1 holds the others up: rank 0 waits in all_reduce #2 at tests/scripts/hang/stuck_compute.py:19; "
        "rank 1 is not in a collective: tests/scripts/hang/stuck_compute.py:11 in load_next_shard (time.sleep)"
    ) in r.stderr
    assert r.stderr.count("[collective-stall]") == 1  # one report, from one rank


def test_a_rank_that_never_reaches_the_rendezvous_holds_the_others_up(doctor_jobs):
    r, report = doctor(doctor_jobs, "late_join.py", hang_timeout="3")
    assert r.returncode == 124, r.stderr
    text = report_part(r)
    assert (
        "rank 1 holds the others up: rank 0 waits in init_process_group (the rendezvous) at "
        "tests/scripts/hang/late_join.py:15; rank 1 is not in a collective: tests/scripts/hang/late_join.py:9 "
        "in prepare_data (time.sleep)"
    ) in text


@pytest.mark.parametrize("how", ["kill", "hang"])
def test_a_rank_past_many_collectives_is_placed_at_its_true_last_one(doctor_jobs, how):
    # 12 all-reduces: past the window of records a moving rank publishes, so a count read
    # from that window against another rank's full history would be wrong.
    r, report = doctor(doctor_jobs, "many_then_fails.py", how, "12", hang_timeout="10")
    text = report_part(r)
    ranks = {x["rank"]: x for x in report["ranks"]}
    assert report["root_cause"]["rank"] == 1 and ranks[1]["reached"] == 12 and ranks[0]["reached"] == 12
    assert ranks[0]["collective"]["seq"] == 13
    if how == "kill":
        assert r.returncode == 128 + signal.SIGKILL, r.stderr
        assert "rank 1 failed first: it was killed by SIGKILL (after collective #12)" in text
        assert "rank 0 failed because rank 1 was gone (in all_reduce #13 " in text
        assert (ranks[0]["state"], ranks[1]["state"]) == ("lost-peer", "failed")
    else:
        assert r.returncode == 124, r.stderr
        assert "rank 1 holds the others up: rank 0 waits in all_reduce #13 " in text
        assert "raise --hang-timeout" in text  # run's own option
        assert (ranks[0]["state"], ranks[1]["state"]) == ("waiting", "running")
