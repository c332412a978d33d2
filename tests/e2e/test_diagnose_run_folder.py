"""`gpudoctor diagnose DIR` on the run folder a failed `gpudoctor run --nproc 2`,
`gpudoctor allreduce` or `train-smoke` names: the same root-cause rank, kind and first finding
as the live report (real gloo ranks on 127.0.0.1, each run bounded, no process
left behind)."""

import json
import os
import shutil
import subprocess
import sys

import pytest

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TESTS)
sys.path.insert(0, TESTS)
from orphans import TAG_ENV, kill_all, leftovers, new_tag  # noqa: E402

pytestmark = pytest.mark.slow


def clean_env(tag, **extra):
    env = dict(os.environ, **{TAG_ENV: tag}, **extra)
    for var in ("GPUDOCTOR_RUN", "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "SLURM_PROCID", "SLURM_NTASKS"):
        env.pop(var, None)  # never join the pytest process's own job
    if "GPUDOCTOR_FAULT" not in extra:
        env.pop("GPUDOCTOR_FAULT", None)
    return env


def live_run(doctor_jobs, script, *args, hang_timeout="30", options=()):
    """`gpudoctor run --nproc 2 ... --json FILE`: (exit status, report). The job is the one
    tests/e2e/test_run_hangs.py asserts the live report of (tests/doctor_jobs.py): started once."""
    job = doctor_jobs.run(script, *args, hang_timeout=hang_timeout, options=options)
    return job.process.returncode, job.report


def diagnose(folder):
    """`gpudoctor diagnose DIR --json`: (exit status, report)."""
    r = subprocess.run(
        [sys.executable, "-m", "gpudoctor", "diagnose", str(folder), "--json"],
        capture_output=True, text=True, timeout=120, cwd=ROOT, env=clean_env(new_tag()),
    )  # fmt: skip
    assert r.stdout.strip(), r.stderr
    return r.returncode, json.loads(r.stdout)


def root(report):
    cause = report["root_cause"]
    return cause["rank"], cause["kind"], report["findings"][0]["id"]


def same_verdict_from_the_folder(live, folder=None):
    folder = folder or live["run_dir"]
    assert os.path.exists(os.path.join(folder, "outcome.json"))
    status, later = diagnose(folder)
    assert status == 1, later
    assert root(later) == root(live)
    # The same records; a folder moved elsewhere has its logs at its new place.
    moved = {r["rank"]: os.path.join(folder, os.path.basename(r["log"])) for r in live["ranks"]}
    assert later["ranks"] == [dict(r, log=moved[r["rank"]]) for r in live["ranks"]]
    return later


def test_a_collective_mismatch(doctor_jobs):
    status, live = live_run(doctor_jobs, "tests/scripts/hang/mismatch_shape.py")
    assert status == 1
    assert root(live) == (1, "collective-mismatch", "collective-mismatch")
    same_verdict_from_the_folder(live)


def test_a_stall_stopped_by_the_hang_timeout(doctor_jobs):
    status, live = live_run(doctor_jobs, "tests/scripts/hang/stuck_compute.py", hang_timeout="3")
    assert status == 124  # the job's status: a stall; diagnose's: a problem found
    assert root(live) == (1, "collective-stall", "collective-stall")
    later = same_verdict_from_the_folder(live)
    # how long the ranks had waited is the live figure, kept in outcome.json
    assert later["findings"][0]["evidence"]["no progress for"] == live["findings"][0]["evidence"]["no progress for"]


def test_a_stall_stopped_by_the_timeout_watchdog(doctor_jobs):
    """--timeout, not --hang-timeout: the ranks' stacks come from the dump at the end of
    their logs, read again from the folder. 30 s: on a loaded two-core machine 15 s once ended
    the job before rank 1 had reached its stall (no stacks, no root cause)."""
    status, live = live_run(doctor_jobs, "tests/scripts/hang/stuck_compute.py", hang_timeout="0", options=("--timeout", "30"))
    assert status == 124
    assert root(live)[0] == 1
    later = same_verdict_from_the_folder(live)
    assert later["findings"][0]["title"] == live["findings"][0]["title"]


def test_a_rank_that_raises_and_the_folder_moved_elsewhere(doctor_jobs, tmp_path):
    status, live = live_run(doctor_jobs, "tests/scripts/hang/one_rank_fails.py", "raise")
    assert status == 1
    assert root(live) == (1, "exception", "rank-raised")
    moved = shutil.copytree(live["run_dir"], tmp_path / "sent-by-a-colleague")
    later = same_verdict_from_the_folder(live, moved)
    assert later["findings"][0]["evidence"]["log"] == str(moved / "rank1.stderr")
    # Without outcome.json (an older gpudoctor's folder) it is read as logs, as before.
    os.unlink(moved / "outcome.json")
    status, logs = diagnose(moved)
    assert status == 1 and "outcome" not in logs
    assert logs["root_cause"]["rank"] == 1 and "ValueError" in json.dumps(logs["findings"][0])


# allreduce's (its folder is the report's summary.logs): the 1:raise case of
# tests/e2e/test_allreduce.py::test_each_fault_names_the_rank_in_bounded_time_without_orphans,
# whose job is the same sweep (it was a second one here).
COMMANDS = {
    "train-smoke": ([], lambda report: report["logs"]),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_command_whose_rank_1_raises(command):
    options, folder_of = COMMANDS[command]
    tag = new_tag()
    cmd = [sys.executable, "-m", "gpudoctor", command, "--nproc", "2", *options, "--timeout", "60", "--json", "--fault", "1:raise"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=ROOT, env=clean_env(tag))
        assert leftovers(tag) == []
    finally:
        kill_all(leftovers(tag, settle_s=0))
    assert r.returncode == 1, r.stderr
    live = json.loads(r.stdout)
    [first] = [f for f in live["findings"] if f["severity"] == "error"]
    assert (first["id"], first["title"].split()[:2]) == ("rank-raised", ["rank", "1"])
    status, later = diagnose(folder_of(live))
    assert status == 1
    assert later["findings"][0]["id"] == first["id"]
    assert (later["root_cause"]["rank"], later["root_cause"]["kind"]) == (1, "exception")
