"""A crashed rank's finding says what its error means, from the same knowledge
base `gpudoctor diagnose` uses, instead of only pointing at rankN.stderr."""

import os

import pytest

from gpudoctor.launch.supervisor import launch_function
from gpudoctor.hang.failures import launch_findings
from gpudoctor.hang.verdict import root_cause
from orphans import TAG_ENV, leftovers, new_tag

HERE = os.path.dirname(os.path.abspath(__file__))
RANK_PATH = os.pathsep.join(p for p in (HERE, os.environ.get("PYTHONPATH")) if p)


@pytest.mark.slow
def test_a_crashed_ranks_finding_says_what_its_error_means():
    tag = new_tag()
    env = {"PYTHONPATH": RANK_PATH, TAG_ENV: tag, "CUDA_VISIBLE_DEVICES": ""}
    result = launch_function("launch_targets:cuda_on_one_rank", {"pg_timeout": 30}, 2, timeout=60, env=env)
    assert not result.ok and root_cause(result, {}).rank == 1
    first = launch_findings(result)[0]
    assert first.id == "rank-raised" and "rank 1" in first.title
    # a CPU-only torch says "not compiled with CUDA", a CUDA build with no visible GPU "No CUDA GPUs"
    assert first.evidence["diagnosis"] in ("cuda-torch-cpu-build", "cuda-no-gpus-visible")
    assert first.evidence["meaning"] in first.title
    assert "less " not in first.fix and "log: " in first.fix
    assert leftovers(tag) == []


def test_a_joined_rank_that_only_lost_its_peer_says_so():
    from types import SimpleNamespace

    from gpudoctor.hang.failures import joined_failure

    ctx = SimpleNamespace(rank=0, world_size=2, local_world_size=1, joined_by="torchrun")
    try:  # the text torch's gloo raises when the peer's process is gone
        raise RuntimeError("[../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [172.28.0.12]:14004")
    except RuntimeError as exc:
        f = joined_failure(ctx, exc, "", "check")
    assert "lost a peer" in f.title and f.evidence["diagnosis"] == "gloo-peer-closed"
