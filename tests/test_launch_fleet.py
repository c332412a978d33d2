"""The pure parts of gathering the nodes: who may join, what a rank sends, how
ranks are grouped into nodes at rank 0."""

from __future__ import annotations

from facts_cases import cpu_facts, gpu2_facts
from gpudoctor.launch.fleet import RankNode, decode, encode, group_by_node, joinable, one_node
from gpudoctor.launch.rank import RankContext


def ctx(by: str, world: int = 4, local_world: int = 2) -> RankContext:
    return RankContext(rank=0, world_size=world, local_rank=0, local_world_size=local_world, joined_by=by)


def test_who_may_join():
    meet = {"MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500"}
    assert joinable(ctx("torchrun"), {})
    assert not joinable(ctx("torchrun", world=1, local_world=1), {})
    assert not joinable(None, meet)
    # RANK/WORLD_SIZE left in a shell, with nowhere to meet: not a job.
    assert not joinable(ctx("env"), {}) and joinable(ctx("env"), meet)
    # An sbatch script's own shell has SLURM_PROCID=0 too; only srun steps join.
    assert not joinable(ctx("slurm"), meet)
    assert joinable(ctx("slurm"), {**meet, "SLURM_STEP_ID": "0"})
    assert not joinable(ctx("gpudoctor"), meet)


def test_one_node_only_when_the_launcher_says_so():
    assert one_node(ctx("torchrun", world=2, local_world=2), {"LOCAL_WORLD_SIZE": "2"})
    assert not one_node(ctx("torchrun", world=4, local_world=2), {"LOCAL_WORLD_SIZE": "2"})
    assert one_node(ctx("slurm", world=4, local_world=1), {"SLURM_NNODES": "1"})
    # A launcher that gives no local size: compare, it costs one gather.
    assert not one_node(ctx("env", world=2, local_world=2), {})


def test_a_rank_report_survives_the_codec():
    sent = RankNode(rank=3, node="gpu-07", node_rank=1, facts=gpu2_facts())
    assert decode(encode(sent)) == sent
    assert decode(encode(RankNode(4, "gpu-07", 1, None))).facts is None


def test_ranks_grouped_by_node_in_rank_order():
    a, b = cpu_facts(), gpu2_facts()
    reports = [
        RankNode(2, "vm", 1, b), RankNode(0, "vm", 0, a), RankNode(3, "vm", 1, None), RankNode(1, "vm", 0, None),
        RankNode(4, "lost", 2, None),  # its node's facts never came: left out
    ]
    nodes = group_by_node(reports)
    assert [(n.facts, n.ranks) for n in nodes] == [(a, (0, 1)), (b, (2, 3))]


def test_a_joined_commands_report_starts_with_the_comparison():
    from gpudoctor.checks.fleet import check_fleet
    from gpudoctor.core.findings import Finding, Report, Severity
    from gpudoctor.launch.fleet import FleetComparison
    from gpudoctor.hang.run_ranks import JoinedRun
    from gpudoctor.checks.node import node_facts
    from facts_cases import vary

    nodes = (node_facts(gpu2_facts(), "node-1", (0,)), node_facts(vary(gpu2_facts(), "torch.nccl", "2.21.5"), "node-2", (1,)))
    comparison = FleetComparison(nodes, tuple(check_fleet(nodes)))
    work = Report("allreduce", (Finding("allreduce-correct", Severity.OK, "exact"),), {"nproc": 2})
    report = JoinedRun(value={}, fleet=comparison).with_fleet(work)
    assert [f.id for f in report.findings] == ["fleet-nccl-mismatch", "allreduce-correct"]
    assert report.data["nproc"] == 2 and report.data["fleet"]["differs"] == ["NCCL"]
    assert report.failed()
    assert JoinedRun(value={}).with_fleet(work) is work  # one node: nothing compared
