"""Controls and siblings for naming the node a joined rank lost (hang/failures.py)."""

from __future__ import annotations

from gpudoctor.hang.failures import joined_failure, peer_node
from gpudoctor.launch.rank import RankContext

CLOSED = "[gloo/transport/tcp/pair.cc:553] Connection closed by peer [10.0.0.2]:45735. This is typically caused by a remote worker crashing."
PEERS = (("10.0.0.2", "node-b", (2, 3)), ("10.0.0.3", "node-c", (4, 5)))


def ctx() -> RankContext:
    return RankContext(rank=0, world_size=6, local_rank=0, local_world_size=2, joined_by="torchrun")


class TestJoinedRankFailed:
    def test_control_an_error_that_names_no_address_names_no_node(self):
        finding = joined_failure(ctx(), RuntimeError("Connection reset by peer"), "", "check", PEERS)
        assert "node" not in finding.evidence
        assert finding.title.startswith("rank 0 of the torchrun job lost a peer (a rank crashed?)")

    def test_control_an_address_of_no_node_of_the_job_names_none(self):
        assert peer_node(CLOSED.replace("10.0.0.2", "10.9.9.9"), PEERS) is None

    def test_sibling_the_lost_peers_address_names_its_node_and_ranks(self):
        finding = joined_failure(ctx(), RuntimeError(CLOSED), " after 1 of 3 size(s)", "allreduce", PEERS)
        assert finding.title == "rank 0 of the torchrun job lost a peer: node node-b (ranks 2, 3) after 1 of 3 size(s)"
        assert finding.evidence["node ranks"] == [2, 3]

    def test_sibling_a_timeout_naming_a_node_says_timed_out_not_crashed(self):
        error = RuntimeError("Timed out waiting 30000ms for recv operation to complete from [10.0.0.3]:1234")
        finding = joined_failure(ctx(), error, "", "check", PEERS)
        assert "timed out waiting for a peer: node node-c (ranks 4, 5)" in finding.title

    def test_sibling_two_nodes_named_is_not_decided(self):
        assert peer_node("peers 10.0.0.2 and 10.0.0.3 both closed", PEERS) is None


# What rank 0 raised on one H200 under `CUDA_VISIBLE_DEVICES=0 torchrun --nproc-per-node 2 -m gpudoctor allreduce`
# (tests/fixtures/gpu_truth/h200/ar-dup.out): its own error names the cause.
DUPLICATE_GPU = (
    "NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:93, invalid usage (run with NCCL_DEBUG=WARN for "
    "details), NCCL version 2.28.9\nncclInvalidUsage: This usually reflects invalid usage of NCCL library.\nLast error:\n"
    "Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 60"
)


class TestJoinedRankFailedOwnCause:
    def test_control_a_lost_peer_still_points_at_the_peers(self):
        finding = joined_failure(ctx(), RuntimeError(CLOSED), "", "allreduce", PEERS)
        assert "only sees its own side" in finding.why and "launcher's output" in finding.fix

    def test_sibling_an_error_that_is_its_own_cause_gets_that_causes_why_and_fix(self):
        finding = joined_failure(ctx(), RuntimeError(DUPLICATE_GPU), " after 0 of 1 size(s)", "allreduce", PEERS)
        assert finding.evidence["diagnosis"] == "nccl-duplicate-gpu"
        assert "own error decides it" in finding.why and "only sees its own side" not in finding.why
        assert "launcher's output" not in finding.fix and finding.fix
