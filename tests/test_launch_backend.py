"""--backend/--device auto and the impossible requests, from CudaFacts: every
rule without a GPU, and the real probe on this machine."""

import pytest

from gpudoctor.launch.backend import (
    ImpossibleRequest,
    choose_backend,
    rank_device_index,
    ranks_competing_for_gpus,
)
from gpudoctor.probe.cuda import CudaFacts, probe_cuda

CPU_BUILD = CudaFacts(False, 0, False, None, "2.13.0+cpu")
NO_DRIVER = CudaFacts(False, 0, True, "12.4", "2.13.0")
ONE_GPU = CudaFacts(True, 1, True, "12.4", "2.13.0")
TWO_GPUS = CudaFacts(True, 2, True, "12.4", "2.13.0")
NO_NCCL = CudaFacts(True, 2, False, "12.4", "2.13.0")


def test_auto_is_nccl_with_one_gpu_per_rank():
    assert choose_backend("auto", "auto", 2, TWO_GPUS) == ("nccl", "cuda")
    assert choose_backend("auto", "cuda", 1, ONE_GPU) == ("nccl", "cuda")
    # two ranks cannot share one GPU under NCCL: gloo on CPU, as the issue asks
    assert choose_backend("auto", "auto", 2, ONE_GPU) == ("gloo", "cpu")
    assert choose_backend("auto", "auto", 2, CPU_BUILD) == ("gloo", "cpu")


def test_auto_falls_back_to_gloo_when_ranks_outnumber_gpus():
    assert choose_backend("auto", "auto", 4, TWO_GPUS) == ("gloo", "cpu")
    assert choose_backend("auto", "auto", 2, NO_NCCL) == ("gloo", "cpu")
    assert choose_backend("auto", "cpu", 2, TWO_GPUS) == ("gloo", "cpu")
    assert choose_backend("gloo", "auto", 2, TWO_GPUS) == ("gloo", "cpu")
    assert choose_backend("gloo", "cuda", 2, TWO_GPUS) == ("gloo", "cuda")


@pytest.mark.parametrize(
    "backend, device, ranks, cuda, says",
    [
        ("nccl", "auto", 2, CPU_BUILD, "CPU-only build; use --backend gloo"),
        ("nccl", "auto", 2, NO_DRIVER, "torch.cuda.is_available() is False"),
        ("auto", "cuda", 2, CPU_BUILD, "--device cuda needs CUDA"),
        ("nccl", "cpu", 2, TWO_GPUS, "NCCL moves only CUDA tensors"),
        ("nccl", "auto", 3, TWO_GPUS, "3 ranks on this host but 2 GPU(s) visible; use --nproc 2"),
        ("nccl", "auto", 2, NO_NCCL, "no NCCL"),
        ("auto", "cuda", 3, TWO_GPUS, "one GPU per rank"),
    ],
)
def test_impossible_requests_say_what_would_work(backend, device, ranks, cuda, says):
    with pytest.raises(ImpossibleRequest) as info:
        choose_backend(backend, device, ranks, cuda)
    message = str(info.value)
    assert says in message
    assert "\n" not in message


def test_probe_on_this_machine_never_raises():
    facts = probe_cuda()
    assert isinstance(facts.available, bool)
    assert choose_backend("auto", "auto", 2, facts)[0] in ("gloo", "nccl")


def test_a_rank_bound_to_one_gpu_competes_with_no_one():
    # SLURM --gpus-per-task=1: each of 4 local ranks sees one GPU of its own.
    assert ranks_competing_for_gpus(4, ONE_GPU, "2") == 1
    assert choose_backend("auto", "auto", ranks_competing_for_gpus(4, ONE_GPU, "2"), ONE_GPU) == ("nccl", "cuda")
    # No binding: 4 ranks really would share the one GPU, so NCCL is not offered.
    assert ranks_competing_for_gpus(4, ONE_GPU, None) == 4
    assert ranks_competing_for_gpus(4, TWO_GPUS, "0,1") == 4


def test_rank_device_index():
    assert [rank_device_index(r, 4) for r in range(4)] == [0, 1, 2, 3]
    assert rank_device_index(3, 1) == 0  # bound to its one GPU
    assert rank_device_index(0, 0) == 0
