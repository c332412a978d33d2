"""--backend/--device auto for train-smoke: every rule, from facts, no GPU needed."""

import pytest

from gpudoctor.smoke.devices import DeviceChoiceError, DeviceFacts, choose, probe_devices

CPU_ONLY = DeviceFacts(cuda_available=False, gpu_count=0, nccl_available=False, reason="torch 2.13.0+cpu is a CPU-only build")
ONE_GPU = DeviceFacts(cuda_available=True, gpu_count=1, nccl_available=True)
TWO_GPUS = DeviceFacts(cuda_available=True, gpu_count=2, nccl_available=True)


@pytest.mark.parametrize(
    "backend, device, nproc, facts, expected",
    [
        ("auto", "auto", 2, CPU_ONLY, ("gloo", "cpu")),
        ("auto", "auto", 2, TWO_GPUS, ("nccl", "cuda")),
        ("auto", "auto", 2, ONE_GPU, ("gloo", "cuda")),  # two ranks cannot share one GPU under NCCL
        ("auto", "cpu", 2, TWO_GPUS, ("gloo", "cpu")),
        ("gloo", "auto", 2, TWO_GPUS, ("gloo", "cpu")),
        ("gloo", "cuda", 2, ONE_GPU, ("gloo", "cuda")),
        ("nccl", "auto", 2, TWO_GPUS, ("nccl", "cuda")),
        ("auto", "cuda", 1, ONE_GPU, ("nccl", "cuda")),
    ],
)
def test_choice(backend, device, nproc, facts, expected):
    assert choose(backend, device, nproc, facts) == expected


@pytest.mark.parametrize(
    "backend, device, nproc, facts, words",
    [
        ("nccl", "auto", 2, CPU_ONLY, "CPU-only build"),
        ("auto", "cuda", 2, CPU_ONLY, "--device cuda needs a CUDA GPU"),
        ("nccl", "cpu", 2, TWO_GPUS, "NCCL carries only CUDA tensors"),
        ("nccl", "cuda", 2, ONE_GPU, "one GPU per rank"),
        ("nccl", "cuda", 1, DeviceFacts(True, 1, nccl_available=False), "no NCCL"),
    ],
)
def test_impossible_pairs_are_one_line_reasons(backend, device, nproc, facts, words):
    with pytest.raises(DeviceChoiceError) as info:
        choose(backend, device, nproc, facts)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_probe_on_this_machine_never_raises():
    facts = probe_devices()
    assert isinstance(facts.cuda_available, bool)
    assert choose("auto", "auto", 2, facts)[0] in ("gloo", "nccl")
