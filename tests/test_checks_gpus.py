"""Driver and GPU checks on the real CPU snapshot and the 2-GPU snapshot."""

from __future__ import annotations

from facts_cases import by_id, cpu_facts, gpu2_facts, vary
from gpudoctor.checks.gpus import (
    check_compute_mode,
    check_display_adapters,
    check_driver,
    check_memory_in_use,
    check_mig,
    check_p2p,
)
from gpudoctor.core.findings import Severity
from gpudoctor.probe.nvml import DRIVER_NOT_LOADED, INIT_FAILED, GpuProcess
from gpudoctor.probe.system import DisplayDevice
from gpudoctor.core.unavailable import Unavailable

GIB = 1 << 30


def test_cpu_machine_says_no_nvidia_gpu_plainly():
    f = by_id(check_driver(cpu_facts()), "no-nvidia-gpu")
    assert f.severity is Severity.INFO
    assert "No NVIDIA driver or GPU" in f.title and "NVML Shared Library Not Found" in f.title


def test_driver_ok_on_gpu_machine():
    f = by_id(check_driver(gpu2_facts()), "nvidia-driver")
    assert f.severity is Severity.OK and "570.124.06" in f.title and "2 GPUs" in f.title


def test_nvidia_on_the_bus_but_no_driver():
    facts = vary(gpu2_facts(), "nvml", cpu_facts().nvml)
    f = by_id(check_driver(facts), "nvidia-driver-missing")
    assert f.severity is Severity.ERROR and "2 NVIDIA devices" in f.title


def test_driver_not_loaded_without_nvidia_hardware_is_just_no_gpu():
    facts = vary(cpu_facts(), "nvml.error_kind", DRIVER_NOT_LOADED)
    assert by_id(check_driver(facts), "no-nvidia-gpu").severity is Severity.INFO


def test_driver_library_mismatch_is_an_error():
    facts = vary(cpu_facts(), "nvml.error_kind", INIT_FAILED)
    facts = vary(facts, "nvml.error", "Driver/library version mismatch")
    f = by_id(check_driver(facts), "nvml-error")
    assert f.severity is Severity.ERROR and "mismatch" in f.title and "reboot" in f.fix


def test_driver_loaded_but_no_gpu_warns():
    facts = vary(gpu2_facts(), "nvml.gpus", ())
    assert by_id(check_driver(facts), "no-nvidia-gpu").severity is Severity.WARN


def test_non_nvidia_display_adapter_is_named():
    f = by_id(check_display_adapters(gpu2_facts()), "non-nvidia-display-adapter")
    assert f.severity is Severity.INFO and "ASPEED" in f.evidence["adapters"][0]


def test_integrated_gpu_on_a_laptop():
    intel = DisplayDevice("0000:00:02.0", "VGA compatible controller", "Intel Corporation", "UHD Graphics 630", False)
    facts = vary(cpu_facts(), "system.display_devices", (intel,))
    assert "UHD Graphics 630" in by_id(check_display_adapters(facts), "non-nvidia-display-adapter").evidence["adapters"][0]


def test_no_display_adapters_no_finding():
    assert check_display_adapters(cpu_facts()) == []
    assert check_display_adapters(vary(cpu_facts(), "system.display_devices", Unavailable("no lspci"))) == []


def test_free_gpus():
    assert by_id(check_memory_in_use(gpu2_facts()), "gpu-memory-free").severity is Severity.OK


def test_memory_held_by_another_process():
    proc = GpuProcess(pid=4242, name="python3", used_memory_bytes=30 * GIB, kind="compute")
    facts = vary(gpu2_facts(), "nvml.gpus[1].processes", (proc,))
    facts = vary(facts, "nvml.gpus[1].memory_used_bytes", 30 * GIB + 1)
    f = by_id(check_memory_in_use(facts), "gpu-memory-in-use")
    assert f.severity is Severity.WARN and "GPU 1" in f.title and "GPU 0" not in f.title
    assert "pid 4242 python3" in f.evidence["GPU 1 (NVIDIA H100 80GB HBM3)"]
    assert f.fix.startswith("kill 4242")


def test_memory_used_without_visible_processes():
    # In a container the other job's PID is not visible, but the memory is.
    facts = vary(gpu2_facts(), "nvml.gpus[0].memory_used_bytes", 20 * GIB)
    f = by_id(check_memory_in_use(facts), "gpu-memory-in-use")
    assert f.fix.startswith("nvidia-smi")


def test_no_memory_check_without_gpus():
    assert check_memory_in_use(cpu_facts()) == []


def test_mig_enabled():
    facts = vary(gpu2_facts(), "nvml.gpus[0].mig_mode", "enabled")
    f = by_id(check_mig(facts), "mig-enabled")
    assert f.severity is Severity.WARN and f.fix.startswith("sudo nvidia-smi -i 0 -mig 0")
    assert check_mig(gpu2_facts()) == []


def test_p2p_ok_and_missing():
    assert by_id(check_p2p(gpu2_facts()), "p2p-ok").title == "P2P works between GPU 0 and GPU 1"
    facts = vary(gpu2_facts(), "nvml.links[0].p2p_read", "chipset not supported")
    f = by_id(check_p2p(facts), "p2p-unavailable")
    assert f.severity is Severity.WARN and "chipset not supported" in f.title


def test_compute_mode():
    assert check_compute_mode(gpu2_facts()) == []
    exclusive = vary(gpu2_facts(), "nvml.gpus[1].compute_mode", "Exclusive_Process")
    assert by_id(check_compute_mode(exclusive), "gpu-compute-mode-restricted").severity is Severity.WARN
    prohibited = vary(gpu2_facts(), "nvml.gpus[0].compute_mode", "Prohibited")
    f = by_id(check_compute_mode(prohibited), "gpu-compute-mode-restricted")
    assert f.severity is Severity.ERROR and f.fix == "sudo nvidia-smi -i 0 -c DEFAULT"
