"""The environment probe: which variables it keeps, and name resolution."""

from __future__ import annotations

from gpudoctor.probe.environment import probe_environment, relevant, resolve
from gpudoctor.core.unavailable import Unavailable


def test_keeps_only_relevant_variables():
    env = {
        "CUDA_VISIBLE_DEVICES": "1,0",
        "NCCL_DEBUG": "INFO",
        "TORCH_DISTRIBUTED_DEBUG": "DETAIL",
        "SLURM_PROCID": "3",
        "MASTER_PORT": "29500",
        "HOME": "/root",
        "AWS_SECRET_ACCESS_KEY": "x",
    }
    assert relevant(env) == {k: env[k] for k in ("CUDA_VISIBLE_DEVICES", "MASTER_PORT", "NCCL_DEBUG", "SLURM_PROCID", "TORCH_DISTRIBUTED_DEBUG")}


def test_empty_string_is_kept_distinct_from_unset():
    facts = probe_environment({"CUDA_VISIBLE_DEVICES": ""})
    assert facts.get("CUDA_VISIBLE_DEVICES") == ""
    assert probe_environment({}).get("CUDA_VISIBLE_DEVICES") is None


def test_localhost_resolves():
    got = resolve("localhost")
    assert isinstance(got.addresses, tuple) and "127.0.0.1" in got.addresses


def test_invalid_name_does_not_resolve():
    # .invalid is reserved (RFC 2606): it never resolves.
    got = resolve("node-17.invalid")
    assert isinstance(got.addresses, Unavailable)


def test_master_addr_is_resolved_by_the_probe():
    facts = probe_environment({"MASTER_ADDR": "127.0.0.1"})
    assert facts.master_addr is not None and facts.master_addr.addresses == ("127.0.0.1",)
    assert probe_environment({}).master_addr is None
