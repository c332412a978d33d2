"""Comparing the nodes of a job: `gpudoctor check` under torchrun with several
agents on 127.0.0.1 (static rendezvous, one agent per "node", each with its own
environment) and offline from saved snapshots; `allreduce` and `train-smoke`
joined across nodes, starting with the same comparison. Distinct hostnames cannot be
had on one machine, so each agent names its node with GPUDOCTOR_NODE_NAME."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from orphans import TAG_ENV, kill_all, leftovers, new_tag

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FAILED_GRACE_S = 30  # once one agent has ended, how long the others may still take
AGENT_TIMEOUT_S = 150  # under load on 2 shared cores; each run takes seconds when the machine is idle
CLEAN = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT",
         "GPUDOCTOR_FAULT", "GPUDOCTOR_NODE_NAME", "NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "NCCL_IB_DISABLE",
         "CUDA_VISIBLE_DEVICES", "COLUMNS")  # COLUMNS: a log has none, and 80 columns cut the table before


@dataclass
class Agent:
    returncode: int
    stdout: str
    stderr: str


def _free_port() -> int:
    # below the kernel's ephemeral range, free on every interface: an outgoing connection of a
    # parallel test is never handed it in between (a port the kernel picked from that range can be)
    from gpudoctor.launch.store import free_port as unused_port

    return unused_port()


def run_nodes(node_envs: list[dict[str, str]], *args: str, command: str = "check", c10d: bool = False) -> list[Agent]:
    """`gpudoctor COMMAND ARGS` under one torchrun agent per node (1 rank each),
    all on 127.0.0.1; every wait bounded, every process of the test killed at the end.
    c10d: the c10d rendezvous (ranks in the order it gives them) instead of the static one
    (--node-rank, the nodes' ranks in the order given)."""
    tag, port = new_tag(), _free_port()
    base = {k: v for k, v in os.environ.items() if k not in CLEAN}
    procs = []
    try:
        for node_rank, extra in enumerate(node_envs):
            if c10d:
                rendezvous = ["--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}", "--rdzv-id", f"gpudoctor-test-{tag[:8]}"]
            else:
                rendezvous = ["--node-rank", str(node_rank), "--master-addr", "127.0.0.1", "--master-port", str(port)]
            cmd = [sys.executable, "-m", "torch.distributed.run", "--nnodes", str(len(node_envs)),
                   "--nproc-per-node", "1", *rendezvous, "-m", "gpudoctor", command, *args]  # fmt: skip
            env = {**base, TAG_ENV: tag, **extra}
            procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        outputs = _collect(procs)
        agents = [Agent(p.returncode, *outputs[i]) for i, p in enumerate(procs)]
        assert leftovers(tag) == []
        return agents
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
        kill_all(leftovers(tag, settle_s=0))


def _collect(procs: list[subprocess.Popen]) -> list[tuple[str, str]]:
    """Every agent's (stdout, stderr), read side by side. Agents of a healthy job end
    within moments of each other; one whose worker failed can leave the others in
    torchrun's exit barrier for 300 s. So once one agent has ended, the rest get a
    grace and are then killed: the test fails on what every agent said, not on a timeout."""
    outputs: list[tuple[str, str]] = [("", "")] * len(procs)

    def read(i: int) -> None:
        outputs[i] = procs[i].communicate()

    readers = [threading.Thread(target=read, args=(i,), daemon=True) for i in range(len(procs))]
    for t in readers:
        t.start()
    deadline = time.monotonic() + AGENT_TIMEOUT_S
    while any(p.poll() is None for p in procs) and time.monotonic() < deadline:
        if any(p.returncode is not None for p in procs):
            deadline = min(deadline, time.monotonic() + FAILED_GRACE_S)
        time.sleep(0.1)
    for p in procs:
        if p.poll() is None:
            p.kill()
    for t in readers:
        t.join(timeout=30)
    return outputs


def by_id(report: dict, id: str) -> list[dict]:
    return [f for f in report["findings"] if f["id"] == id]


@pytest.mark.slow
def test_two_nodes_with_different_network_settings():
    agents = run_nodes(
        [
            {"GPUDOCTOR_NODE_NAME": "node-a", "NCCL_SOCKET_IFNAME": "lo"},
            {"GPUDOCTOR_NODE_NAME": "node-b", "NCCL_SOCKET_IFNAME": "ens9f0", "NCCL_IB_DISABLE": "1",
             "GPUDOCTOR_TEST_EXTRA": "1"},
        ],
        "--json",
    )  # fmt: skip
    first, second = agents
    assert second.stdout == ""
    # torchrun reports rank 0's exit code 1 with its own traceback; none comes from gpudoctor.
    assert "site-packages/gpudoctor" not in first.stderr and "src/gpudoctor" not in first.stderr
    report = json.loads(first.stdout)  # one report, from global rank 0
    assert first.returncode == 1 and report["ok"] is False
    assert [(n["name"], n["ranks"]) for n in report["nodes"]] == [("node-a", [0]), ("node-b", [1])]
    [ifname] = by_id(report, "fleet-socket-ifname-missing")
    assert ifname["severity"] == "error"
    assert "NCCL_SOCKET_IFNAME='ens9f0' names no interface on rank 1 (node-b)" in ifname["title"]
    [ib] = by_id(report, "fleet-env-mismatch")
    assert ib["evidence"]["fact"] == "NCCL_IB_DISABLE" and ib["evidence"]["values"] == {"unset": "rank 0 (node-a)", "1": "rank 1 (node-b)"}
    assert "NCCL_IB_DISABLE" in report["differs"]
    # A variable outside NCCL_*/GLOO_*/CUDA_*/MASTER_* is not compared.
    assert "GPUDOCTOR_TEST_EXTRA" not in json.dumps(report["nodes"])
    # Node-local findings of both nodes, shown once with the nodes they apply to.
    [gloo] = by_id(report, "backend-gloo")
    assert gloo["title"].startswith("both nodes: ")


def test_three_nodes_that_agree_exit_0_with_one_table(tmp_path):
    # Three agreeing nodes' table and words, from three saved snapshots (the same comparison and
    # rendering a torchrun job's rank 0 prints). The live side: agreeing nodes under torchrun
    # exiting 0 on every agent is test_train_smoke_across_nodes_that_agree; the other agents
    # printing nothing, test_two_nodes_with_different_network_settings; `check` on identical
    # nodes, healthy and not cut to 80 columns in a log, the multi-node tier's
    # tests/multinode/test_tier.py::test_fleet_check_on_identical_nodes_is_healthy_and_readable_in_a_log.
    snapshot = (FIXTURES / "facts_2gpu.json").read_text()
    paths = []
    for i in range(3):
        paths += ["--facts", str(tmp_path / f"node-{i}.json")]
        (tmp_path / f"node-{i}.json").write_text(snapshot)
    r = _check(*paths)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    out = r.stdout
    assert "3 nodes" in out and all(f"node-{i}" in out for i in range(3))
    header = next(line for line in out.splitlines() if "ranks" in line)  # not cut to 80 columns in a log
    assert all(h in header for h in ("torch", "NCCL", "driver", "GPU model", "InfiniBand", "/dev/shm")), header
    assert "3 nodes agree on torch, NCCL, driver" in " ".join(out.split())
    assert "check: healthy" in out


def _check(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k not in CLEAN}
    return subprocess.run([sys.executable, "-m", "gpudoctor", "check", *args], capture_output=True, text=True,
                          timeout=120, env={**full, **(env or {})})  # fmt: skip


def test_saved_snapshots_of_two_nodes_are_compared(tmp_path):
    report = json.loads((FIXTURES / "facts_2gpu.json").read_text())
    report["facts"]["torch"]["nccl"] = "2.21.5"
    odd = tmp_path / "gpu-17.json"
    odd.write_text(json.dumps(report))
    r = _check("--facts", str(FIXTURES / "facts_2gpu.json"), "--facts", str(odd), "--json")
    assert r.returncode == 1, r.stderr
    d = json.loads(r.stdout)
    [f] = by_id(d, "fleet-nccl-mismatch")
    assert "2.21.5 on gpu-17" in f["title"] and "2.27.5 on facts_2gpu" in f["title"]
    assert [n["name"] for n in d["nodes"]] == ["facts_2gpu", "gpu-17"] and len(d["snapshots"]) == 2


def test_leftover_rank_variables_do_not_make_check_wait_for_peers():
    # RANK/WORLD_SIZE left over in a shell, no MASTER_ADDR: a plain check of this machine.
    r = _check("--json", env={"RANK": "1", "WORLD_SIZE": "2"})
    assert r.returncode == 0, r.stderr
    assert "facts" in json.loads(r.stdout)


@pytest.mark.slow
def test_allreduce_across_nodes_shows_the_skew_beside_its_results():
    # Also allreduce's join across two nodes (it was a second two-agent job, in
    # tests/e2e/test_allreduce.py): one report, from the node of global rank 0, in torchrun mode.
    agents = run_nodes(
        [{"GPUDOCTOR_NODE_NAME": "node-a"}, {"GPUDOCTOR_NODE_NAME": "node-b", "NCCL_IB_DISABLE": "1"}],
        "--sizes", "4K,64K", "--iters", "2", "--warmup", "1", "--json",
        command="allreduce",
    )  # fmt: skip
    assert agents[1].stdout == ""
    report = json.loads(agents[0].stdout)
    assert agents[0].returncode == 1 and report["ok"] is False  # the skew is an error, though the all-reduce worked
    assert report["nproc"] == 2 and report["summary"]["mode"] == "torchrun"
    assert report["findings"][0]["id"] == "fleet-env-mismatch"
    assert report["findings"][0]["evidence"]["values"] == {"unset": "rank 0 (node-a)", "1": "rank 1 (node-b)"}
    assert by_id(report, "allreduce-correct")[0]["severity"] == "ok"
    assert [r["wrong"] for r in report["results"]] == [0, 0]
    assert report["fleet"]["differs"] == ["NCCL_IB_DISABLE"]
    assert [n["name"] for n in report["fleet"]["nodes"]] == ["node-a", "node-b"]


@pytest.mark.slow
def test_train_smoke_across_nodes_that_agree():
    # Under the c10d rendezvous (--rdzv-backend c10d), the others here being static: a command
    # joined across two nodes that way, every agent exiting 0 and only the node of global
    # rank 0 printing (it was a second two-agent job, allreduce's, in tests/e2e/test_allreduce.py).
    # 40 steps, as the one-agent job it also carries (its 100 steps: learning needs far fewer).
    agents = run_nodes([{"GPUDOCTOR_NODE_NAME": f"node-{i}"} for i in range(2)], "--steps", "40", "--json",
                       command="train-smoke", c10d=True)  # fmt: skip
    assert [a.returncode for a in agents] == [0, 0], [a.stderr[-2000:] for a in agents]
    printed = [a for a in agents if a.stdout.strip()]
    assert len(printed) == 1  # the node that holds global rank 0 prints, the other is silent
    report = json.loads(printed[0].stdout)
    assert report["ok"] is True and report["findings"][0]["id"] == "fleet-consistent"
    assert report["fleet"]["differs"] == []
    assert sorted(n["name"] for n in report["fleet"]["nodes"]) == ["node-0", "node-1"]
    # Also train-smoke joined under torchrun (it was a job of its own, two ranks on one agent, in
    # tests/e2e/test_train_smoke.py): every verification passes, both ranks trained, rank 0 reports.
    assert report["joined_by"] == "torchrun"
    assert all(v["passed"] for v in report["verifications"]), report["verifications"]
    assert report["throughput"]["total"]["ranks"] == 2


def test_ranks_that_cannot_meet_end_in_a_finding_within_the_timeout():
    # Rank 0 of a 2-rank job whose rank 1 never comes: no hang, no traceback, nothing left behind.
    tag = new_tag()
    env = {"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1",
           "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(_free_port()), TAG_ENV: tag}  # fmt: skip
    try:
        r = _check("--timeout", "3", env=env)
        assert r.returncode == 1 and "Traceback" not in r.stdout + r.stderr
        assert "[rendezvous-incomplete]" in r.stdout and "rank 1 missing" in r.stdout
        assert leftovers(tag) == []
    finally:
        kill_all(leftovers(tag, settle_s=0))
