"""gpudoctor across simulated nodes, as users run it: one torchrun agent per node
with the c10d rendezvous, each node a network namespace with its own address,
hostname, NIC, /etc/hosts, TMPDIR and /dev/shm (nodes.py). Every agent is bounded;
every namespace and every process in it is removed at the end, by name and pid."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from nodes import Nodes

AGENT_TIMEOUT_S = 180  # two cores shared by every rank of every node
CLEAN = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT",
         "GPUDOCTOR_NODE_NAME", "NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "COLUMNS", "LINES")


@dataclass
class Agent:
    returncode: int | None
    stdout: str
    stderr: str
    seconds: float


@pytest.fixture
def nodes_factory(tmp_path):
    made: list[Nodes] = []

    def make(count: int, nic_names: list[str] | None = None) -> Nodes:
        root = tmp_path / f"nodes{len(made)}"
        root.mkdir(mode=0o700)
        nodes = Nodes(count, root, nic_names)
        made.append(nodes)
        return nodes.up()

    yield make
    for nodes in made:
        nodes.down()


def start(nodes: Nodes, nproc: int, argv: list[str], job: str) -> list[subprocess.Popen]:
    """One torchrun agent per node, rendezvous at node 0, `python -m gpudoctor ARGV` as
    the workers; each agent's output goes to files, which its workers write to as well."""
    env = {k: v for k, v in os.environ.items() if k not in CLEAN}
    endpoint = f"{nodes.address(0)}:29400"
    procs = []
    for i in range(nodes.count):
        agent = [sys.executable, "-m", "torch.distributed.run", "--nnodes", str(nodes.count),
                 "--nproc-per-node", str(nproc), "--rdzv-backend", "c10d", "--rdzv-endpoint", endpoint,
                 "--rdzv-id", job, "-m", "gpudoctor", *argv]  # fmt: skip
        cmd = nodes.command(i, ["timeout", "-k", "5", str(AGENT_TIMEOUT_S), *agent])
        with open(nodes.root / f"agent{i}.out", "w") as out, open(nodes.root / f"agent{i}.err", "w") as err:
            procs.append(subprocess.Popen(cmd, env=env, stdout=out, stderr=err))
    return procs


def collect(nodes: Nodes, procs: list[subprocess.Popen], limit_s: float = AGENT_TIMEOUT_S + 20) -> list[Agent]:
    """Every agent's result, waited for side by side and bounded by limit_s overall: past
    it, every process of a node still running is killed."""
    began = time.monotonic()
    for i, proc in enumerate(procs):
        try:
            proc.wait(timeout=max(1.0, limit_s - (time.monotonic() - began)))
        except subprocess.TimeoutExpired:
            nodes.kill_node(i)
            proc.kill()
            proc.wait(timeout=30)
    return [
        Agent(
            p.returncode,
            (nodes.root / f"agent{i}.out").read_text(errors="replace"),
            (nodes.root / f"agent{i}.err").read_text(errors="replace"),
            time.monotonic() - began,
        )
        for i, p in enumerate(procs)
    ]


def argvs(nodes: Nodes, i: int) -> list[tuple[int, list[bytes]]]:
    """(pid, argv) of every process of node i that is still there to read."""
    out = []
    for pid in nodes.pids(i):
        try:
            out.append((pid, Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")))
        except OSError:
            continue
    return out


def workers_running(nodes: Nodes, i: int) -> bool:
    """Whether node i's agent has started its workers (the rendezvous is complete)."""
    return any(b"gpudoctor" in argv and b"torch.distributed.run" not in argv for _, argv in argvs(nodes, i))


def long_sweep_under_way(nodes: Nodes, job: str, settle_s: float) -> list[subprocess.Popen]:
    """A long allreduce on every node, once node 1's workers run and settle_s more have passed."""
    procs = start(nodes, 1, ["allreduce", "--sizes", "4K,1M,16M", "--iters", "400", "--timeout", "30"], job)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and not workers_running(nodes, 1):
        time.sleep(0.5)
    time.sleep(settle_s)
    return procs


def said(agent: Agent) -> str:
    return agent.stdout + agent.stderr


def test_fleet_check_on_identical_nodes_is_healthy_and_readable_in_a_log(nodes_factory):
    nodes = nodes_factory(2)
    agents = collect(nodes, start(nodes, 2, ["check"], "check"))
    assert [a.returncode for a in agents] == [0, 0], [said(a)[-3000:] for a in agents]
    report = agents[0].stdout
    assert nodes.name(0) in report and nodes.name(1) in report  # the nodes' own hostnames
    assert "…" not in report, report  # a log is not a terminal: nothing cut to 80 columns
    assert nodes.leftovers() == {}


def test_fleet_check_with_per_node_nic_names_is_not_an_error(nodes_factory):
    # NIC names differ from node to node on many clusters; each node's GLOO_SOCKET_IFNAME
    # names an interface that exists on that node, so nothing is broken
    nodes = nodes_factory(2, nic_names=["gdv0", "gdv1"])
    agents = collect(nodes, start(nodes, 1, ["check"], "ifnames"))
    assert [a.returncode for a in agents] == [0, 0], [said(a)[-3000:] for a in agents]
    assert "fleet-socket-ifname" not in said(agents[0])
    assert nodes.leftovers() == {}


def test_allreduce_across_nodes_is_exact(nodes_factory):
    nodes = nodes_factory(2)
    agents = collect(nodes, start(nodes, 1, ["allreduce", "--sizes", "4K,64K"], "allreduce"))
    assert [a.returncode for a in agents] == [0, 0], [said(a)[-3000:] for a in agents]
    assert "allreduce-correct" in said(agents[0]) or "exact" in said(agents[0]), said(agents[0])[-3000:]
    assert nodes.leftovers() == {}


def test_a_node_lost_mid_sweep_is_named_and_nothing_is_left(nodes_factory):
    nodes = nodes_factory(2)
    procs = long_sweep_under_way(nodes, "lost", settle_s=10)  # the kill lands with the ranks joined
    killed = nodes.kill_node(1)
    assert killed
    lost_at = time.monotonic()
    agents = collect(nodes, procs, limit_s=100)
    node0 = agents[0]
    assert node0.returncode not in (0, None), said(node0)[-3000:]
    assert time.monotonic() - lost_at < 110
    assert nodes.name(1) in said(node0), said(node0)[-3000:]  # the node that went away, by name
    assert nodes.leftovers() == {}


def agent_pid(nodes: Nodes, i: int) -> int | None:
    return next((pid for pid, argv in argvs(nodes, i) if b"torch.distributed.run" in argv and b"timeout" not in argv[0]), None)


def test_workers_whose_agent_is_killed_stop_and_say_so(nodes_factory):
    nodes = nodes_factory(2)
    procs = long_sweep_under_way(nodes, "agent", settle_s=5)
    agent = agent_pid(nodes, 1)
    assert agent is not None
    os.kill(agent, 9)
    agents = collect(nodes, procs, limit_s=100)
    assert "its launcher (torchrun agent, pid" in agents[1].stderr, agents[1].stderr[-2000:]
    assert agents[0].returncode not in (0, None), said(agents[0])[-3000:]
    assert nodes.leftovers() == {}


SKIPS_A_BARRIER = """
import time
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
t = torch.ones(1024)
for step in range(6):
    dist.all_reduce(t)
    if step == 2 and rank != world - 1:
        dist.barrier()  # the last rank, on the last node, never makes this call
    time.sleep(0.2)
dist.destroy_process_group()
"""


def test_a_skipped_collective_verdict_reaches_every_node(nodes_factory):
    nodes = nodes_factory(2)
    script = nodes.root / "skip.py"
    script.write_text(SKIPS_A_BARRIER)
    agents = collect(nodes, start(nodes, 2, ["run", "--hang-timeout", "20", str(script)], "hang"), limit_s=150)
    for i, agent in enumerate(agents):
        assert agent.returncode not in (0, None), said(agent)[-2000:]
        reports = list((nodes.root / nodes.name(i) / "tmp").glob("gpudoctor-run-*/report.txt"))
        assert len(reports) == 1, (i, sorted(p.name for p in (nodes.root / nodes.name(i) / "tmp").iterdir()))
        assert "collective-mismatch" in reports[0].read_text(), reports[0].read_text()
        assert "collective-mismatch" in agent.stderr
    carried = [a for a in agents if "the job's verdict was reached on node" in a.stderr]
    assert len(carried) == 1  # the node that did not reach it names the one that did
    for i in range(nodes.count):  # no empty folder left behind on any node
        leftover = [p for p in (nodes.root / nodes.name(i) / "tmp").glob("gpudoctor-run-*") if not any(p.iterdir())]
        assert leftover == []
    assert nodes.leftovers() == {}


def test_a_master_address_nobody_has_ends_within_the_timeout_and_names_it(nodes_factory):
    # env:// as srun users run it, without torchrun: rank 1's MASTER_ADDR is an address of
    # the nodes' network that no node has
    nodes = nodes_factory(2)
    nowhere = nodes.address(8)
    env = {k: v for k, v in os.environ.items() if k not in CLEAN}
    env.update(RANK="1", WORLD_SIZE="2", LOCAL_RANK="0", LOCAL_WORLD_SIZE="1", MASTER_ADDR=nowhere, MASTER_PORT="29500")
    began = time.monotonic()
    out = subprocess.run(
        nodes.command(1, [sys.executable, "-m", "gpudoctor", "allreduce", "--sizes", "4K", "--timeout", "20"]),
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    took = time.monotonic() - began
    assert out.returncode not in (0, None), out.stdout[-2000:] + out.stderr[-2000:]
    assert took < 20 + 40, took  # the stated timeout bounds the whole join (and start-up on a busy machine)
    assert nowhere in out.stdout + out.stderr
    assert nodes.leftovers() == {}


def bisect_verdicts(agent: Agent) -> tuple[set[str], dict]:
    import json

    report = json.loads(agent.stdout)
    return {f["id"] for f in report["findings"] if f["id"].startswith("allreduce-")}, report


def test_bisect_names_the_node_whose_link_is_slowed_and_nothing_on_a_control(nodes_factory):
    # 3 nodes x 1 rank: pairs across nodes compared with pairs across nodes
    nodes = nodes_factory(3)
    argv = ["allreduce", "--sizes", "4K,64K", "--bisect", "--json"]
    control = collect(nodes, start(nodes, 1, argv, "bisect-control"))
    assert control[0].returncode is not None, said(control[0])[-2000:]
    ids, _ = bisect_verdicts(control[0])
    assert not ids & {"allreduce-slow-link", "allreduce-slow-rank"}, control[0].stdout[-3000:]
    nodes.shape(1, "tbf", "rate", "20mbit", "burst", "32kbit", "latency", "400ms")
    shaped = collect(nodes, start(nodes, 1, argv, "bisect-shaped"))
    ids, report = bisect_verdicts(shaped[0])
    slow = [f for f in report["findings"] if f["id"] in ("allreduce-slow-link", "allreduce-slow-rank")]
    assert slow, shaped[0].stdout[-3000:]
    assert all(nodes.name(1) in json_text(f) or "rank 1" in f["title"] for f in slow), slow
    assert nodes.leftovers() == {}


def json_text(finding: dict) -> str:
    import json

    return json.dumps(finding)


def slow_node_findings(agent: Agent) -> tuple[list[dict], dict]:
    import json

    report = json.loads(agent.stdout)
    return [f for f in report["findings"] if f["id"] == "allreduce-slow-node"], report


def test_per_node_figures_name_the_node_whose_link_is_slowed_and_nothing_on_a_control(nodes_factory):
    # 2 nodes x 2 ranks: each node's intra-node figure beside its inter-node one; node 1's
    # NIC shaped to a few percent of the others' sends is named, the unshaped run is not
    nodes = nodes_factory(2)
    argv = ["allreduce", "--sizes", "4K", "--iters", "5", "--warmup", "1", "--json"]
    control = collect(nodes, start(nodes, 2, argv, "pernode-control"))
    assert control[0].returncode == 0, said(control[0])[-3000:]
    found, report = slow_node_findings(control[0])
    assert [f["severity"] for f in found] == ["ok"], control[0].stdout[-3000:]
    rows = report["per_node"]["nodes"]
    assert [r["node"] for r in rows] == [nodes.name(0), nodes.name(1)]
    assert all(r["intra_busbw_gbps"] and r["inter_send_gbps"] for r in rows), rows
    nodes.shape(1, "tbf", "rate", "20mbit", "burst", "32kbit", "latency", "400ms")
    shaped = collect(nodes, start(nodes, 2, argv, "pernode-shaped"))
    assert shaped[0].returncode is not None, said(shaped[0])[-3000:]
    found, report = slow_node_findings(shaped[0])
    assert [f["severity"] for f in found] == ["warn"], shaped[0].stdout[-3000:]
    assert found[0]["evidence"]["slow"] == [nodes.name(1)], found[0]
    assert f"node {nodes.name(1)} sends" in found[0]["title"] and nodes.name(1) in found[0]["fix"]
    print("control", json_text(control[0] and slow_node_findings(control[0])[1]["per_node"]))
    print("shaped", json_text(report["per_node"]), found[0]["title"])
    assert nodes.leftovers() == {}
