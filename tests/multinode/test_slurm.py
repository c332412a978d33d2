"""gpudoctor under a real Slurm (22.05, Debian's slurm-wlm and munge) whose nodes are
the simulated nodes of nodes.py: slurmctld and one slurmd per node, srun -N2 as users
run it. Skipped, with the reason, where Slurm is not installed."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from nodes import Nodes
from slurm import Slurm, available
from test_tier import CLEAN, SKIPS_A_BARRIER

pytestmark = pytest.mark.skipif(available() is not None, reason=available() or "")


@pytest.fixture(scope="module")
def cluster():
    # under /tmp itself: munged wants every folder above its socket open to its user,
    # and pytest's own temporary folders are closed to others
    root = Path(tempfile.mkdtemp(prefix="gd-slurm-", dir="/tmp"))
    nodes = Nodes(2, root).up()
    slurm = Slurm(nodes)
    try:
        yield slurm.up()
    finally:
        slurm.down()
        nodes.down()
        shutil.rmtree(root, ignore_errors=True)


def srun(cluster: Slurm, tasks: int, argv: list[str], env: dict[str, str] | None = None, timeout_s: float = 240):
    import os

    clean = {k: "" for k in CLEAN if k in os.environ}
    cmd = ["srun", "-N2", f"-n{tasks}", "--kill-on-bad-exit=1", "timeout", "-k", "5", str(int(timeout_s - 20)), *argv]
    return cluster.run(0, cmd, timeout_s=timeout_s, env={**clean, **(env or {})})


def test_allreduce_under_srun_without_master_variables(cluster):
    # what users hit first: a batch script that sets no MASTER_ADDR / MASTER_PORT
    out = srun(cluster, 2, [sys.executable, "-m", "gpudoctor", "allreduce", "--sizes", "4K,64K"])
    said = out.stdout + out.stderr
    assert "KeyError" not in said, said[-3000:]
    assert out.returncode == 0, said[-3000:]
    assert "allreduce-correct" in said
    assert "torchrun job" not in said
    assert _job_processes_left(cluster) == {}


def test_fleet_check_under_srun_two_nodes(cluster):
    env = {"MASTER_ADDR": cluster.nodes.name(0), "MASTER_PORT": "29571"}
    out = srun(cluster, 4, [sys.executable, "-m", "gpudoctor", "check"], env)
    said = out.stdout + out.stderr
    assert out.returncode == 0, said[-3000:]
    assert cluster.nodes.name(0) in said and cluster.nodes.name(1) in said
    assert "not started by a launcher" not in said


def test_a_skipped_collective_under_srun_is_named_on_every_node(cluster, tmp_path):
    script = cluster.nodes.root / "skip.py"
    script.write_text(SKIPS_A_BARRIER)
    env = {"MASTER_ADDR": cluster.nodes.name(0), "MASTER_PORT": "29582"}
    # as users run a script under srun: the batch script maps Slurm's variables to env://'s
    run = f"RANK=$SLURM_PROCID WORLD_SIZE=$SLURM_NTASKS LOCAL_RANK=$SLURM_LOCALID exec {sys.executable} -m gpudoctor run --hang-timeout 20 {script}"
    out = srun(cluster, 4, ["bash", "-c", run], env)
    said = out.stdout + out.stderr
    assert out.returncode not in (0, None), said[-3000:]
    assert "collective-mismatch" in said, said[-3000:]
    for i in range(2):
        reports = list((cluster.nodes.root / cluster.nodes.name(i) / "tmp").glob("gpudoctor-run-*/report.txt"))
        assert reports and "collective-mismatch" in reports[0].read_text(), (i, said[-2000:])


def _job_processes_left(cluster: Slurm, settle_s: float = 10.0) -> dict[str, list[str]]:
    """What of the job still runs on each node, after up to settle_s (the cluster's own daemons aside)."""
    import time

    deadline = time.monotonic() + settle_s
    while True:
        left: dict[str, list[str]] = {}
        for i in range(cluster.nodes.count):
            for pid in cluster.nodes.pids(i):
                try:
                    name = open(f"/proc/{pid}/comm").read().strip()
                except OSError:
                    continue
                if name not in ("slurmctld", "slurmd", "slurmstepd", "slurmscriptd"):  # the cluster's own
                    left.setdefault(cluster.nodes.name(i), []).append(f"{pid} {name}")
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.5)
