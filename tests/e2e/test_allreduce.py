"""`gpudoctor allreduce` end to end: the real command as a subprocess, real gloo
ranks on 127.0.0.1. Every failure case checks the rank named, the time taken and
that no process is left behind."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpudoctor.hang.verdict import STATES

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from orphans import TAG_ENV, kill_all, leftovers, new_tag  # noqa: E402
from terminal import on_a_terminal  # noqa: E402
from waiting import wait_until  # noqa: E402

pytestmark = pytest.mark.slow
FAST = ["--iters", "2", "--warmup", "1"]


def gpudoctor(*args, env=None, timeout=120, tag=None):
    """Run the CLI; returns (process, seconds). Every process carries a test tag."""
    full_env = dict(os.environ)
    for var in ("GPUDOCTOR_FAULT", "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "SLURM_PROCID", "SLURM_NTASKS"):
        full_env.pop(var, None)  # no stray fault, and never join the pytest process's own job
    full_env.update({TAG_ENV: tag or new_tag()}, **(env or {}))
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "gpudoctor", "allreduce", *args],
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return proc, time.monotonic() - start


def report_of(proc):
    assert proc.stdout.strip(), proc.stderr
    return json.loads(proc.stdout)


ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2}


# Every op in every dtype is checked in one job by tests/test_allreduce_job.py; here the
# CLI's --dtype reaches the ranks (two of the jobs below run in a 2-byte dtype: they were
# two jobs of their own), and a size that is not whole elements (1001 bytes) becomes whole
# elements, for the split ops a whole number per rank, rounded down (on three ranks: a split
# that is not a power of two; all_reduce splits nothing, so two ranks say as much of it).
@pytest.mark.parametrize(
    "nproc, op, dtype",
    [(1, "all_reduce", "float32"), (2, "all_reduce", "bfloat16"), (3, "all_gather", "float16"),
     (2, "reduce_scatter", "float32"), (2, "broadcast", "float32")],
)  # fmt: skip
def test_ranks_agree_and_the_json_has_every_column(nproc, op, dtype):
    args = ["--nproc", str(nproc), "--op", op, "--sizes", "4K,1001,64K", "--json", *FAST]
    proc, _ = gpudoctor(*args, *(["--dtype", dtype] if dtype != "float32" else []))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = report_of(proc)
    assert report["command"] == "allreduce" and report["ok"] is True
    assert (report["backend"], report["device"], report["nproc"]) == ("gloo", "cpu", nproc)
    results = report["results"]
    assert len(results) == 3
    split = nproc if op in ("all_gather", "reduce_scatter") else 1
    whole = [(asked // ITEMSIZE[dtype]) // split * split * ITEMSIZE[dtype] for asked in (1001, 4096, 65536)]
    assert [r["bytes"] for r in results] == whole
    for row in results:
        assert set(row) == {"op", "bytes", "count", "dtype", "time_us", "algbw_gbps", "busbw_gbps", "wrong"}
        assert row["op"] == op and row["dtype"] == dtype and row["wrong"] == 0 and row["time_us"] > 0
        assert row["bytes"] == row["count"] * ITEMSIZE[dtype]
        if op in ("all_gather", "reduce_scatter"):
            assert row["count"] % nproc == 0
        if nproc == 1 and op == "all_reduce":
            assert row["busbw_gbps"] == 0
    summary = report["summary"]
    assert summary["sizes_run"] == 3 and summary["wrong"] == 0 and summary["logs"] is None
    assert {f["id"] for f in report["findings"]} == {"allreduce-correct", "allreduce-bandwidth"}


def test_default_sweep_and_rich_report():
    proc, _ = gpudoctor("--iters", "1", "--warmup", "0")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "busbw" in out and "#wrong" in out and "64M" in out
    assert "peak busbw" in out and "allreduce: healthy" in out


# One job for two things (they were two jobs): --min-bytes/--max-bytes doubles from one
# to the other, and --markdown prints the results table, one row per size.
def test_min_max_bytes_sweep_doubles_and_markdown_has_the_results_table():
    proc, _ = gpudoctor("--min-bytes", "1K", "--max-bytes", "8K", "--markdown", *FAST)
    assert proc.returncode == 0, proc.stderr
    assert "### Results" in proc.stdout and "| size | count | dtype |" in proc.stdout
    assert "## gpudoctor allreduce — healthy" in proc.stdout
    cells = [[cell.strip() for cell in line.split("|")[1:-1]] for line in proc.stdout.splitlines() if line.startswith("| ")]
    # size, count, dtype of each results row: 1K to 8K doubling, 4 bytes a float32
    assert [row[:3] for row in cells if len(row) == 7 and row[2] == "float32"] == [
        ["1K", "256", "float32"], ["2K", "512", "float32"], ["4K", "1024", "float32"], ["8K", "2048", "float32"],
    ]


FAULT_CASES = [
    ("1:crash", "rank-crashed", "rank 1"),
    ("1:raise", "rank-raised", "rank 1"),
    ("1:hang", "rank-hung", "rank 1"),
    ("0:hang", "rank-hung", "rank 0"),
    ("1:nojoin", "rank-never-joined", "rank 1"),
    ("1:wrong", "allreduce-wrong-result", "rank 1"),
]
WATCHDOG = {"rank-hung", "rank-never-joined"}  # the watchdog stopped the job: 124, as timeout(1)


@pytest.mark.parametrize("fault, finding_id, rank", FAULT_CASES)
def test_each_fault_names_the_rank_in_bounded_time_without_orphans(fault, finding_id, rank):
    # The watchdog does not count the ranks' start (python, import torch: startup_grace),
    # so its timeout only has to cover the rendezvous and two tiny sizes on a busy machine.
    # A hang case waits all of it; a case that ends by itself never does.
    timeout = 8 if finding_id in WATCHDOG else 15
    tag = new_tag()
    proc, elapsed = gpudoctor(
        "--nproc", "2", "--sizes", "4K,64K", "--timeout", str(timeout), "--json", *FAST, "--fault", fault,
        tag=tag,
    )  # fmt: skip
    try:
        assert proc.returncode == (124 if finding_id in WATCHDOG else 1), proc.stdout + proc.stderr
        assert elapsed < 45  # the timeout and the ranks' start-up, which the watchdog does not count (as before: 15 + 30)
        report = report_of(proc)
        assert report["ok"] is False
        errors = [f for f in report["findings"] if f["severity"] == "error"]
        assert [f["id"] for f in errors] == [finding_id]
        assert errors[0]["title"].startswith(rank + " ")
        assert errors[0]["fix"]
        # One record per rank, one state each, and the root rank the words name first.
        if finding_id != "allreduce-wrong-result":  # (there every rank finished)
            assert [r["rank"] for r in report["ranks"]] == [0, 1] and all(r["state"] in STATES for r in report["ranks"])
            assert report["root_cause"]["rank"] == int(rank.split()[1])
        if finding_id == "rank-hung":  # the hung rank's own stack, dumped before it was stopped
            assert "in fault_point" in errors[0]["evidence"]["stderr_tail"]
        # gloo is never narrowed: the NCCL reruns are for NCCL only.
        assert not any(f["id"].startswith("nccl-") for f in report["findings"])
        assert "narrowing" not in report["summary"]
        if fault.endswith("wrong"):
            assert [r["wrong"] for r in report["results"]] == [1, 1]
            # the flag, said first (it was a second job of its own, in tests/e2e/test_hostile_env.py)
            assert report["findings"][0]["id"] == "fault-injected" and f"--fault {fault}" in report["findings"][0]["title"]
        else:
            assert report["summary"]["logs"] and os.path.isdir(report["summary"]["logs"])
        assert leftovers(tag) == []
    finally:
        kill_all(leftovers(tag, settle_s=0))
    if fault == "1:raise":
        # `gpudoctor diagnose` on the folder the failed sweep names: the same root-cause rank, kind
        # and first finding (it was a job of its own, in tests/e2e/test_diagnose_run_folder.py).
        later = subprocess.run(
            [sys.executable, "-m", "gpudoctor", "diagnose", report["summary"]["logs"], "--json"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert later.returncode == 1 and later.stdout.strip(), later.stderr
        diagnosed = json.loads(later.stdout)
        assert diagnosed["findings"][0]["id"] == errors[0]["id"]
        assert (diagnosed["root_cause"]["rank"], diagnosed["root_cause"]["kind"]) == (1, "exception")


def test_sigint_mid_sweep_stops_every_rank(tmp_path):
    tag = new_tag()
    env = dict(os.environ, **{TAG_ENV: tag, "TMPDIR": str(tmp_path)})
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpudoctor", "allreduce", "--nproc", "2", "--sizes", "1M", "--iters", "100000", "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        sweeping = lambda: any("all_reduce" in p.read_text() for p in tmp_path.glob("*/rank*.progress"))  # noqa: E731
        wait_until(sweeping, 60, "the sweep never started", proc)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 130, err
        assert [f["id"] for f in json.loads(out)["findings"]][0] == "launch-interrupted"
        assert leftovers(tag) == []
    finally:
        kill_all(leftovers(tag, settle_s=0))
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize(
    "args, says",
    [
        (["--nproc", "0"], "--nproc"),
        (["--nproc", "abc"], "--nproc"),
        (["--backend", "mpi"], "--backend must be one of auto, nccl, gloo"),
        (["--sizes", "4X"], "--sizes"),
        (["--sizes", "1M", "--max-bytes", "4M"], "either --sizes"),
        (["--dtype", "int8"], "--dtype"),
        (["--op", "alltoall"], "--op"),
        (["--iters", "0"], "--iters"),
        (["--backend", "nccl"], "use --backend gloo"),
    ],
)
def test_invalid_arguments_are_one_line_and_exit_2(args, says):
    proc, _ = gpudoctor(*args)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpudoctor: error:") and says in lines[0]


def test_two_runs_at_once_both_pass(tmp_path):
    # One of the two runs has its stderr on a real pseudo-terminal, so rich animates: what a
    # user watching it sees, the live results table with its progress bar (it was a third job
    # of the same command, in the former tests/e2e/test_live_display.py).
    env = dict(os.environ)
    env.pop("GPUDOCTOR_FAULT", None)
    cmd = [sys.executable, "-m", "gpudoctor", "allreduce", "--nproc", "2", "--sizes", "4K,64K", "--json", *FAST]
    other = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        code, screen = on_a_terminal(cmd[3:], tmp_path / "out")
        out, err = other.communicate(timeout=120)
    finally:
        if other.poll() is None:
            other.kill()
            other.wait()
    assert other.returncode == 0, err
    assert json.loads(out)["ok"] is True
    assert code == 0, screen[-2000:]
    assert json.loads((tmp_path / "out").read_text())["ok"] is True
    assert "all_reduce: 2 rank(s), gloo on cpu" in screen, screen[-2000:]  # the table's title
    # The bar, from the first frame to the last (frames in between, and the first frame's
    # stage word, "starting ranks" or already "started", depend on timing).
    assert re.search(r"(starting ranks|started) .*\b0/2\b", screen) and re.search(r"finished .*\b2/2\b", screen), screen[-2000:]
    assert re.search(r"│\s*4K\s*│", screen) and re.search(r"│\s*64K\s*│", screen), screen[-2000:]  # rows as they come
    assert (tmp_path / "out").read_text().lstrip().startswith("{")  # stdout kept clean for --json


def _torchrun_env(tag):
    env = dict(os.environ, **{TAG_ENV: tag})
    for var in ("GPUDOCTOR_FAULT", "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(var, None)
    return env


def test_join_mode_under_torchrun_single_node():
    tag = new_tag()
    proc = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
         "-m", "gpudoctor", "allreduce", "--sizes", "4K,64K", "--json", *FAST],
        env=_torchrun_env(tag), capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    try:
        assert proc.returncode == 0, proc.stderr
        report = json.loads(proc.stdout)  # one report: only rank 0 printed
        assert report["ok"] is True and report["nproc"] == 2
        assert report["summary"]["mode"] == "torchrun"
        assert [r["wrong"] for r in report["results"]] == [0, 0]
        assert leftovers(tag) == []
    finally:
        kill_all(leftovers(tag, settle_s=0))


def test_join_mode_hang_ends_in_a_finding_from_rank_0_within_the_timeout():
    tag = new_tag()
    env = _torchrun_env(tag)
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
         "-m", "gpudoctor", "allreduce", "--sizes", "4K", "--timeout", "5", "--json", *FAST, "--fault", "1:hang"],
        env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    try:
        assert proc.returncode == 1
        assert time.monotonic() - start < 5 + 30
        report = json.loads(proc.stdout)
        (finding,) = [f for f in report["findings"] if f["severity"] == "error"]
        assert finding["id"] == "joined-rank-failed" and "timed out waiting for a peer" in finding["title"]
        assert leftovers(tag) == []
    finally:
        kill_all(leftovers(tag, settle_s=0))


# allreduce joined across two torchrun agents (one report, from the node of global rank 0, in
# torchrun mode): tests/e2e/test_fleet.py::test_allreduce_across_nodes_shows_the_skew_beside_its_results;
# a command joined across two nodes by the c10d rendezvous, every agent exiting 0:
# tests/e2e/test_fleet.py::test_train_smoke_across_nodes_that_agree (and allreduce's, on nodes of
# their own, tests/multinode/test_tier.py::test_allreduce_across_nodes_is_exact). Each was a
# second two-agent job here.
