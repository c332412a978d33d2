"""torch build checks on the real CPU snapshot and the 2-GPU snapshot, one
field varied per case."""

from __future__ import annotations

import pytest

from facts_cases import by_id, cpu_facts, gpu2_facts, ids, vary, visible
from gpudoctor.checks.torch_build import (
    arch_runs_on,
    check_arch_list,
    check_cuda_available,
    check_driver_version,
    check_torch_build,
    check_torch_import,
)
from gpudoctor.core.findings import Severity
from gpudoctor.probe.torch_info import failed


def test_cpu_build_on_cpu_machine_is_info():
    f = by_id(check_torch_build(cpu_facts()), "torch-build")
    assert f.severity is Severity.INFO and "CPU build" in f.title


def test_cpu_build_on_gpu_machine_is_an_error_with_a_wheel_command():
    facts = vary(gpu2_facts(), "torch.cuda", None)
    f = by_id(check_torch_build(facts), "torch-cpu-build-with-gpus")
    assert f.severity is Severity.ERROR
    # driver CUDA 12.8 -> newest wheel tag not above it
    assert f.fix.startswith("pip install --force-reinstall torch==2.13.0 --index-url https://download.pytorch.org/whl/cu128")


def test_cpu_build_with_nvidia_on_bus_but_no_driver_is_still_an_error():
    facts = vary(gpu2_facts(), "torch.cuda", None)
    facts = vary(facts, "nvml", cpu_facts().nvml)  # driver missing; lspci still shows the H100s
    assert ids(check_torch_build(facts)) == ["torch-cpu-build-with-gpus"]


def test_cuda_build_is_ok():
    f = by_id(check_torch_build(gpu2_facts()), "torch-build")
    assert f.severity is Severity.OK and "CUDA 12.6" in f.title


def test_import_failure_is_an_error():
    facts = vary(cpu_facts(), "torch", failed("import-failed", "ImportError: libcudart.so.12: cannot open", None))
    f = by_id(check_torch_import(facts), "torch-import-failed")
    assert f.severity is Severity.ERROR and "libcudart" in f.title
    assert check_torch_build(facts) == []  # nothing more to say about a torch that does not import


@pytest.mark.parametrize("status", ["timeout", "probe-failed"])
def test_probe_failure_is_an_error(status):
    facts = vary(cpu_facts(), "torch", failed(status, "no answer", None))
    assert by_id(check_torch_import(facts), "torch-probe-failed").severity is Severity.ERROR


def test_healthy_import_has_no_import_finding():
    assert check_torch_import(cpu_facts()) == []


def test_driver_new_enough_is_ok():
    assert by_id(check_driver_version(gpu2_facts()), "driver-cuda-version").severity is Severity.OK


def test_driver_of_older_major_is_an_error():
    facts = vary(gpu2_facts(), "nvml.cuda_driver_version", "11.4")
    f = by_id(check_driver_version(facts), "driver-too-old")
    assert f.severity is Severity.ERROR
    assert "cu118" in f.fix  # the oldest wheel; CUDA 11 minor-version compatibility runs it on an 11.4 driver


def test_driver_of_older_minor_is_a_warning():
    facts = vary(gpu2_facts(), "nvml.cuda_driver_version", "12.4")
    f = by_id(check_driver_version(facts), "driver-too-old")
    assert f.severity is Severity.WARN and "cu124" in f.fix


def test_torch_warning_about_old_driver_is_an_error_even_without_nvml():
    facts = vary(gpu2_facts(), "nvml", cpu_facts().nvml)
    facts = vary(facts, "torch.cuda_warnings", ("CUDA initialization: The NVIDIA driver on your system is too old (found version 11040).",))
    assert by_id(check_driver_version(facts), "driver-too-old").severity is Severity.ERROR


def test_no_driver_check_on_cpu_machine():
    assert check_driver_version(cpu_facts()) == []


@pytest.mark.parametrize(
    "arch, device_cc, runs",
    [
        ("sm_90", 90, True),
        ("sm_80", 86, True),  # same major, newer minor
        ("sm_86", 80, False),  # older minor cannot run newer code
        ("sm_80", 90, False),  # SASS does not cross majors
        ("compute_80", 90, True),  # PTX is JIT-compiled forward
        ("compute_90", 80, False),
        ("sm_90a", 90, True),
        ("sm_90a", 91, False),  # arch-specific code: that GPU only
        ("sm_80", 87, False),  # Jetson Orin runs only its own code
        ("sm_87", 87, True),
        ("sm_120", 120, True),
        ("garbage", 90, False),
    ],
)
def test_arch_runs_on(arch, device_cc, runs):
    assert arch_runs_on(arch, device_cc) is runs


def test_arch_supported():
    assert by_id(check_arch_list(gpu2_facts()), "arch-supported").severity is Severity.OK


def test_arch_missing_for_a_newer_gpu():
    facts = vary(gpu2_facts(), "torch.devices[1].capability", "12.0")
    f = by_id(check_arch_list(facts), "arch-missing")
    assert f.severity is Severity.ERROR and "cuda:1" in f.title and "sm_120" in f.title


def test_arch_uses_nvml_capability_when_torch_sees_no_device():
    facts = vary(gpu2_facts(), "torch.devices", ())
    facts = vary(facts, "nvml.gpus[0].capability", "10.0")
    assert "GPU 0" in by_id(check_arch_list(facts), "arch-missing").title


def test_cuda_unavailable_unexplained():
    facts = vary(gpu2_facts(), "torch.is_available", False)
    facts = vary(facts, "torch.cuda_warnings", ("CUDA initialization: Unexpected error from cudaGetDeviceCount()",))
    f = by_id(check_cuda_available(facts), "cuda-unavailable")
    assert f.severity is Severity.ERROR and f.evidence["torch warnings"]


def test_cuda_unavailable_explained_by_old_driver_is_not_repeated():
    facts = vary(gpu2_facts(), "torch.is_available", False)
    facts = vary(facts, "nvml.cuda_driver_version", "11.4")
    assert check_cuda_available(facts) == []


def test_cuda_unavailable_explained_by_visible_devices_is_not_repeated():
    facts = vary(visible(gpu2_facts(), "garbage", []), "torch.is_available", False)
    assert check_cuda_available(facts) == []
