"""Options -> Sweep, and the backend/device choice, for machines described by
CudaFacts (a CPU-only build like this one, GPU boxes, a CUDA build without NCCL)."""

import pytest

from gpudoctor.commands.allreduce.options import (
    Options,
    PlanError,
    check_options,
    plan_sweep,
)
from gpudoctor.launch.contract import read_config, write_config
from gpudoctor.probe.cuda import CudaFacts

CPU_BUILD = CudaFacts(False, 0, False, None, "2.13.0+cpu")
NO_DRIVER = CudaFacts(False, 0, True, "12.4", "2.13.0")
TWO_GPUS = CudaFacts(True, 2, True, "12.4", "2.13.0")
NO_NCCL = CudaFacts(True, 2, False, "12.4", "2.13.0")


def test_defaults_on_a_cpu_machine_are_two_gloo_ranks_over_the_default_sweep():
    sweep = plan_sweep(Options(), CPU_BUILD)
    assert (sweep.backend, sweep.device, sweep.nproc) == ("gloo", "cpu", 2)
    assert sweep.sizes[0] == 4096 and sweep.sizes[-1] == 64 << 20
    assert (sweep.op, sweep.dtype, sweep.iters, sweep.warmup) == ("all_reduce", "float32", 20, 5)


def test_defaults_on_a_gpu_machine_are_one_nccl_rank_per_gpu():
    sweep = plan_sweep(Options(), TWO_GPUS)
    assert (sweep.backend, sweep.device, sweep.nproc) == ("nccl", "cuda", 2)




@pytest.mark.parametrize(
    "options, says",
    [
        (Options(nproc=0), "--nproc must be between 1 and"),
        (Options(nproc=100_000), "--nproc must be between 1 and"),
        (Options(backend="mpi"), "--backend must be one of auto, nccl, gloo"),
        (Options(device="tpu"), "--device must be one of"),
        (Options(dtype="int8"), "--dtype must be one of float32, float16, bfloat16"),
        (Options(op="alltoall"), "--op must be one of"),
        (Options(sizes="4X"), "--sizes: '4X' is not a size"),
        (Options(sizes=","), "--sizes is empty"),
        (Options(sizes="4K", min_bytes="1K"), "either --sizes or --min-bytes"),
        (Options(min_bytes="1M", max_bytes="4K"), "larger than --max-bytes"),
        (Options(sizes="64G"), "not supported"),
        (Options(iters=0), "--iters"),
        (Options(warmup=-1), "--warmup"),
        (Options(timeout=0), "--timeout"),
    ],
)
def test_bad_options_are_one_line_errors(options, says):
    with pytest.raises(PlanError) as info:
        check_options(options)
    assert says in str(info.value)
    assert "\n" not in str(info.value)


def test_sizes_come_sorted_and_ranges_double():
    assert check_options(Options(sizes="1M,4K"))[4] == (4096, 1 << 20)
    assert check_options(Options(min_bytes="1K", max_bytes="8K"))[4] == (1024, 2048, 4096, 8192)
    assert check_options(Options(min_bytes="32M"))[4] == (32 << 20, 64 << 20)
    assert check_options(Options(op="all-gather"))[2] == "all_gather"


def test_join_mode_uses_the_jobs_world_and_checks_gpus_per_host():
    sweep = plan_sweep(Options(nproc=7), TWO_GPUS, world=16, ranks_per_host=2)
    assert (sweep.backend, sweep.nproc) == ("nccl", 16)
    with pytest.raises(PlanError, match="4 ranks on this host"):
        plan_sweep(Options(backend="nccl"), TWO_GPUS, world=8, ranks_per_host=4)


def test_the_sweep_is_what_the_rank_reads_back_through_the_codec(tmp_path):
    sweep = plan_sweep(Options(sizes="4K", op="broadcast", dtype="bfloat16", iters=3, warmup=0, timeout=99), CPU_BUILD)
    assert (sweep.backend, sweep.device, sweep.op, sweep.dtype, sweep.sizes) == ("gloo", "cpu", "broadcast", "bfloat16", (4096,))
    assert (sweep.iters, sweep.warmup, sweep.timeout_s, sweep.pg_timeout_s, sweep.bisect) == (3, 0, 99.0, 99.0, False)
    assert sweep.planned() == [(4096, 2048)]
    # launch_function writes it, launch/child.py reads it back as the same typed object
    path = str(tmp_path / "config.json")
    config_type = write_config(path, sweep.with_changes(bisect=True))
    assert config_type == "gpudoctor.commands.allreduce.options:Sweep"
    assert read_config(path, config_type) == sweep.with_changes(bisect=True)


def test_sizes_that_run_as_another_size_are_announced():
    sweep = plan_sweep(Options(sizes="3,4K,4097"), CPU_BUILD)
    assert sweep.rounding() == [
        "size 3 bytes runs as 4 bytes: 1 whole float32 element of 4 bytes",
        "size 4097 bytes runs as 4096 bytes: 1024 whole float32 elements of 4 bytes",
    ]
    gather = plan_sweep(Options(sizes="3", op="all_gather", nproc=2), CPU_BUILD)
    assert gather.rounding() == ["size 3 bytes runs as 8 bytes: 2 whole float32 elements of 4 bytes, a multiple of 2 ranks"]
    assert plan_sweep(Options(), CPU_BUILD).rounding() == []
