"""Controls and siblings for `gpudoctor check`'s status and problem findings on the
recorded fact snapshots (tests/fixtures/facts_2gpu.json, facts_cpu.json), and for the
findings `gpudoctor run`'s hooks make from what they saw (hooks/checks.py) — issue 34's
method: the input that looks most like the verdict's case but is not must not get it
(test_control_*); the nearest input that needs another verdict gets its own
(test_sibling_*). For an `ok` status line the control is the machine one fact away
that must get the problem instead, or no claim at all where the evidence is missing.
Pure checks on facts: no probe runs, nothing imports torch."""

from __future__ import annotations

from dataclasses import replace

from facts_cases import GPU2_SNAPSHOT, by_id, cpu_facts, gpu2_facts, ids, torch_sees, vary, visible, with_env
from gpudoctor.checks import run_checks
from gpudoctor.checks.backends import check_backends
from gpudoctor.checks.environment import check_launch_env, check_transports_disabled
from gpudoctor.checks.gpus import (
    check_compute_mode,
    check_display_adapters,
    check_driver,
    check_memory_in_use,
    check_p2p,
)
from gpudoctor.checks.platform import check_platform
from gpudoctor.checks.system import check_container, check_cpus, check_open_files, check_ram, check_shm
from gpudoctor.checks.toolchain import check_nvcc
from gpudoctor.checks.torch_build import (
    check_arch_list,
    check_cuda_available,
    check_driver_version,
    check_torch_build,
    check_torch_import,
)
from gpudoctor.checks.visibility import (
    check_device_count,
    check_device_order,
    check_set_after_init,
    check_visible_devices,
    check_visible_override,
)
from gpudoctor.core.findings import Severity
from gpudoctor.core.unavailable import Unavailable
from gpudoctor.hooks.checks import runtime_findings
from gpudoctor.hooks.facts import (
    CheckpointSave,
    DeviceMismatch,
    LoaderRestarts,
    ModuleInputDevice,
    NcclDevice,
)
from gpudoctor.probe.nvml import INIT_FAILED, LIBRARY_NOT_FOUND, PYNVML_MISSING, GpuProcess
from gpudoctor.probe.software import Nvcc, SoftwareFacts
from gpudoctor.probe.system import DisplayDevice
from gpudoctor.probe.torch_info import InProcessTorch, failed

GIB = 1 << 30
MIB = 1 << 20


def gpu2(path: str, value):
    return vary(gpu2_facts(), path, value)


# --- the torch build -------------------------------------------------------------------


class TestTorchBuild:
    def test_control_the_cpu_wheel_beside_gpus_is_not_a_plain_build_line(self):
        assert ids(check_torch_build(gpu2("torch.cuda", None))) == ["torch-cpu-build-with-gpus"]

    def test_control_a_torch_that_does_not_import_has_no_build_line(self):
        facts = vary(cpu_facts(), "torch", failed("import-failed", "ModuleNotFoundError: No module named 'torch'", None))
        assert check_torch_build(facts) == [] and ids(check_torch_import(facts)) == ["torch-import-failed"]

    def test_sibling_the_cpu_wheel_on_a_cpu_machine_is_info_not_ok(self):
        [f] = check_torch_build(cpu_facts())
        assert f.id == "torch-build" and f.severity is Severity.INFO and "2.13.0+cpu" in f.title

    def test_sibling_the_cuda_build_on_gpus_is_ok(self):
        [f] = check_torch_build(gpu2_facts())
        assert f.severity is Severity.OK and "12.6" in f.title


class TestTorchImportFailed:
    def test_control_a_torch_that_imports(self):
        assert check_torch_import(gpu2_facts()) == [] and check_torch_import(cpu_facts()) == []

    def test_control_a_probe_that_timed_out_is_not_an_import_failure(self):
        facts = vary(cpu_facts(), "torch", failed("timeout", "no answer in 60 s", None))
        assert ids(check_torch_import(facts)) == ["torch-probe-failed"]

    def test_sibling_no_torch_installed_says_install_not_broken(self):
        facts = vary(cpu_facts(), "torch", failed("import-failed", "ModuleNotFoundError: No module named 'torch'", None))
        [f] = check_torch_import(facts)
        assert f.id == "torch-import-failed" and "pip install" in f.fix

    def test_sibling_a_broken_torch_names_its_error(self):
        error = "ImportError: libcudnn.so.9: cannot open shared object file"
        [f] = check_torch_import(vary(cpu_facts(), "torch", failed("import-failed", error, None)))
        assert f.id == "torch-import-failed" and "libcudnn.so.9" in f.title + str(f.evidence)


class TestTorchProbeFailed:
    def test_control_an_import_error_is_its_own_verdict(self):
        facts = vary(cpu_facts(), "torch", failed("import-failed", "ImportError: torch._C", None))
        assert ids(check_torch_import(facts)) == ["torch-import-failed"]

    def test_control_the_recorded_machines_probe_answered(self):
        assert "torch-probe-failed" not in ids(run_checks(gpu2_facts()))

    def test_sibling_a_probe_that_crashed(self):
        [f] = check_torch_import(vary(cpu_facts(), "torch", failed("probe-failed", "exit code -11 (SIGSEGV)", None)))
        assert f.id == "torch-probe-failed" and f.severity is Severity.ERROR and "SIGSEGV" in str(f.evidence)


def cuda_arch(*archs: str):
    return gpu2("torch.arch_list", archs)


class TestArchSupported:
    def test_control_sass_of_an_older_major_does_not_run_on_an_h100(self):
        assert ids(check_arch_list(cuda_arch("sm_75", "sm_80", "sm_86"))) == ["arch-missing"]

    def test_control_no_capability_read_makes_no_claim(self):
        facts = vary(vary(gpu2_facts(), "torch.devices", ()), "nvml.gpus[0].capability", Unavailable("not read"))
        facts = vary(facts, "nvml.gpus[1].capability", Unavailable("not read"))
        assert check_arch_list(facts) == []

    def test_sibling_ptx_of_the_same_major_is_supported(self):
        [f] = check_arch_list(cuda_arch("sm_80", "compute_90"))
        assert f.id == "arch-supported" and "9.0" in f.title

    def test_sibling_a_cpu_build_has_no_arch_verdict(self):
        assert check_arch_list(gpu2("torch.cuda", None)) == []


def driver_cuda(version):
    return gpu2("nvml.cuda_driver_version", version)


class TestDriverCudaVersion:
    def test_control_a_driver_one_minor_too_old(self):
        assert ids(check_driver_version(driver_cuda("12.5"))) == ["driver-too-old"]

    def test_control_no_driver_version_read_makes_no_claim(self):
        assert check_driver_version(driver_cuda(Unavailable("NVML not loaded"))) == []

    def test_sibling_torchs_own_too_old_warning_decides_without_nvml(self):
        facts = vary(driver_cuda(Unavailable("NVML not loaded")), "torch.cuda_warnings",
                     ("The NVIDIA driver on your system is too old (found version 11040).",))
        [f] = check_driver_version(facts)
        assert f.id == "driver-too-old" and f.severity is Severity.ERROR

    def test_sibling_the_exact_version_is_ok(self):
        [f] = check_driver_version(driver_cuda("12.6"))
        assert f.id == "driver-cuda-version" and f.severity is Severity.OK


def not_available(facts):
    return vary(facts, "torch.is_available", False)


class TestCudaUnavailable:
    def test_control_every_gpu_hidden_on_purpose(self):
        facts = not_available(with_env(gpu2_facts(), CUDA_VISIBLE_DEVICES="-1"))
        assert check_cuda_available(facts) == [] and ids(check_visible_devices(facts)) == ["visible-devices-hide-all"]

    def test_control_a_driver_too_old_explains_it(self):
        facts = not_available(driver_cuda("11.4"))
        assert check_cuda_available(facts) == [] and ids(check_driver_version(facts)) == ["driver-too-old"]

    def test_control_a_cpu_build_is_not_cuda_failing(self):
        assert check_cuda_available(not_available(gpu2("torch.cuda", None))) == []

    def test_sibling_a_cuda_build_on_a_new_driver_that_still_sees_nothing(self):
        [f] = check_cuda_available(not_available(gpu2_facts()))
        assert f.id == "cuda-unavailable" and f.severity is Severity.ERROR and "2 GPUs" in f.title


class TestNvccTorchCudaMatch:
    def nvcc(self, release, facts=None):
        sw = SoftwareFacts((), "Debian", "6.1", "cpu", "12.2.0", "2.36", Nvcc("/usr/local/cuda/bin/nvcc", "PATH", release))
        return check_nvcc(vary(facts or gpu2_facts(), "software", sw))

    def test_control_another_minor_is_not_a_match(self):
        [f] = self.nvcc("12.4")
        assert f.id == "nvcc-torch-cuda-mismatch" and f.severity is Severity.INFO

    def test_control_a_release_that_was_not_read_makes_no_claim(self):
        assert self.nvcc(Unavailable("nvcc --version failed")) == []

    def test_sibling_another_major_is_a_warning(self):
        [f] = self.nvcc("11.8")
        assert f.id == "nvcc-torch-cuda-mismatch" and f.severity is Severity.WARN

    def test_sibling_the_same_release_matches(self):
        [f] = self.nvcc("12.6")
        assert f.id == "nvcc-torch-cuda-match" and f.severity is Severity.OK

    def test_sibling_a_cpu_torch_compiles_no_cuda_extension(self):
        assert self.nvcc("12.6", gpu2("torch.cuda", None)) == []


# --- the driver and the GPUs -------------------------------------------------------------


def no_nvml(kind: str, error: str, facts=None):
    facts = facts or gpu2_facts()
    nv = replace(facts.nvml, available=False, error_kind=kind, error=error, gpus=(), links=(), device_count=0,
                 driver_version=Unavailable(error), cuda_driver_version=Unavailable(error))
    return vary(facts, "nvml", nv)


class TestNvidiaDriver:
    def test_control_nvml_loads_and_lists_no_gpu(self):
        facts = vary(vary(gpu2_facts(), "nvml.gpus", ()), "nvml.links", ())
        [f] = check_driver(facts)
        assert f.id == "no-nvidia-gpu" and f.severity is Severity.WARN

    def test_control_the_library_missing_beside_h100s_on_the_bus(self):
        assert ids(check_driver(no_nvml(LIBRARY_NOT_FOUND, "NVML Shared Library Not Found"))) == ["nvidia-driver-missing"]

    def test_sibling_the_recorded_machine(self):
        [f] = check_driver(gpu2_facts())
        assert f.id == "nvidia-driver" and f.severity is Severity.OK and "2 GPUs" in f.title


class TestNvidiaDriverMissing:
    def test_control_a_cpu_machine_without_nvidia_devices(self):
        [f] = check_driver(cpu_facts())
        assert f.id == "no-nvidia-gpu" and f.severity is Severity.INFO and not f.fix

    def test_control_a_mac_has_no_nvidia_driver_to_miss(self):
        facts = vary(no_nvml(LIBRARY_NOT_FOUND, "NVML Shared Library Not Found"), "system.platform", "macOS-14.5-arm64-arm-64bit")
        assert check_driver(facts) == [] and ids(check_platform(facts)) == ["platform-limits"]

    def test_sibling_a_driver_that_fails_to_initialise_is_an_nvml_error(self):
        facts = no_nvml(INIT_FAILED, "Driver/library version mismatch")
        assert ids(check_driver(facts)) == ["nvml-error"]

    def test_sibling_h100s_on_the_bus_and_no_library(self):
        [f] = check_driver(no_nvml(LIBRARY_NOT_FOUND, "NVML Shared Library Not Found"))
        assert f.severity is Severity.ERROR and "2 NVIDIA devices" in f.title


class TestNvmlError:
    def test_control_no_driver_at_all_on_a_cpu_machine(self):
        assert ids(check_driver(cpu_facts())) == ["no-nvidia-gpu"]

    def test_control_the_library_missing_is_a_missing_driver(self):
        assert ids(check_driver(no_nvml(LIBRARY_NOT_FOUND, "NVML Shared Library Not Found"))) == ["nvidia-driver-missing"]

    def test_sibling_a_version_mismatch_after_an_upgrade_is_an_error(self):
        [f] = check_driver(no_nvml(INIT_FAILED, "Driver/library version mismatch"))
        assert f.id == "nvml-error" and f.severity is Severity.ERROR

    def test_sibling_pynvml_missing_is_only_a_warning(self):
        [f] = check_driver(no_nvml(PYNVML_MISSING, "No module named 'pynvml'"))
        assert f.id == "nvml-error" and f.severity is Severity.WARN


class TestNoNvidiaGpu:
    def test_control_nvml_lists_gpus(self):
        assert "no-nvidia-gpu" not in ids(check_driver(gpu2_facts()))

    def test_control_nvidia_devices_on_the_bus_without_a_driver(self):
        assert ids(check_driver(no_nvml(LIBRARY_NOT_FOUND, "NVML Shared Library Not Found"))) == ["nvidia-driver-missing"]

    def test_sibling_a_cpu_machine_is_info_with_nothing_to_do(self):
        [f] = check_driver(cpu_facts())
        assert f.id == "no-nvidia-gpu" and f.severity is Severity.INFO and f.fix == ""

    def test_sibling_a_loaded_driver_listing_no_gpu_is_a_warning(self):
        [f] = check_driver(vary(gpu2_facts(), "nvml.gpus", ()))
        assert f.id == "no-nvidia-gpu" and f.severity is Severity.WARN


def adapters(*devices):
    return check_display_adapters(vary(cpu_facts(), "system.display_devices", devices))


H100 = DisplayDevice("0000:18:00.0", "3D controller", "NVIDIA Corporation", "GH100 [H100 SXM5 80GB]", True)


class TestNonNvidiaDisplayAdapter:
    def test_control_only_nvidia_devices(self):
        assert adapters(H100) == []

    def test_control_the_bus_was_not_read(self):
        assert check_display_adapters(vary(cpu_facts(), "system.display_devices", Unavailable("no lspci"))) == []

    def test_sibling_a_servers_bmc_graphics_is_info(self):
        [f] = check_display_adapters(gpu2_facts())
        assert f.severity is Severity.INFO and "ASPEED" in f.evidence["adapters"][0]

    def test_sibling_an_amd_gpu_alone(self):
        amd = DisplayDevice("0000:03:00.0", "VGA compatible controller", "Advanced Micro Devices, Inc. [AMD/ATI]", "Navi 31", False)
        [f] = adapters(amd)
        assert f.id == "non-nvidia-display-adapter" and "Navi 31" in f.evidence["adapters"][0]


def busy(gpu: int, used: int, *procs: GpuProcess):
    facts = gpu2(f"nvml.gpus[{gpu}].memory_used_bytes", used)
    return vary(facts, f"nvml.gpus[{gpu}].processes", procs)


XORG = GpuProcess(pid=1712, name="Xorg", used_memory_bytes=40 * MIB, kind="graphics")


class TestGpuMemoryFree:
    def test_control_a_forgotten_notebook_holds_memory(self):
        nb = GpuProcess(pid=4242, name="python3", used_memory_bytes=12 * GIB, kind="compute")
        [f] = check_memory_in_use(busy(1, 12 * GIB, nb))
        assert f.id == "gpu-memory-in-use" and f.fix.startswith("kill 4242")

    def test_control_another_containers_memory_without_a_visible_pid(self):
        [f] = check_memory_in_use(busy(0, 20 * GIB))
        assert f.id == "gpu-memory-in-use" and f.fix.startswith("nvidia-smi")

    def test_sibling_the_drivers_own_reservation_is_free(self):
        # a few hundred MiB the driver keeps for itself: under 5 % of 80 GB
        assert ids(check_memory_in_use(busy(0, 500 * MIB))) == ["gpu-memory-free"]

    def test_sibling_no_gpus_no_claim(self):
        assert check_memory_in_use(cpu_facts()) == []


class TestGpuMemoryInUse:
    def test_control_just_under_the_share(self):
        total = gpu2_facts().nvml.gpus[0].memory_total_bytes
        assert ids(check_memory_in_use(busy(0, int(0.05 * total)))) == ["gpu-memory-free"]

    def test_control_a_desktops_display_server_is_not_a_job_to_kill(self):
        # Xorg on a workstation's GPU 0: a graphics process, a few MiB (the summary: "any compute process")
        assert ids(check_memory_in_use(busy(0, 60 * MIB, XORG))) == ["gpu-memory-free"]

    def test_sibling_just_over_the_share(self):
        total = gpu2_facts().nvml.gpus[0].memory_total_bytes
        [f] = check_memory_in_use(busy(0, int(0.05 * total) + MIB))
        assert f.id == "gpu-memory-in-use" and f.severity is Severity.WARN and "GPU 0" in f.title

    def test_sibling_a_busy_gpu_names_no_display_server_to_kill(self):
        [f] = check_memory_in_use(busy(0, 30 * GIB, XORG))
        assert f.id == "gpu-memory-in-use" and f.fix.startswith("nvidia-smi") and "1712" not in f.fix
        assert "pid 1712 Xorg" in f.evidence["GPU 0 (NVIDIA H100 80GB HBM3)"]

    def test_sibling_a_compute_process_however_small(self):
        job = GpuProcess(pid=99, name="python", used_memory_bytes=300 * MIB, kind="compute")
        [f] = check_memory_in_use(busy(1, 300 * MIB, job))
        assert f.id == "gpu-memory-in-use" and "GPU 1" in f.title and f.fix.startswith("kill 99")


def compute_mode(mode: str):
    return check_compute_mode(gpu2("nvml.gpus[1].compute_mode", mode))


class TestGpuComputeModeRestricted:
    def test_control_default(self):
        assert compute_mode("Default") == []

    def test_control_a_mode_nvml_did_not_name(self):
        assert compute_mode("unknown") == []

    def test_sibling_exclusive_process_is_a_warning(self):
        [f] = compute_mode("Exclusive_Process")
        assert f.id == "gpu-compute-mode-restricted" and f.severity is Severity.WARN and f.fix.endswith("-i 1 -c DEFAULT")

    def test_sibling_prohibited_is_an_error(self):
        [f] = compute_mode("Prohibited")
        assert f.severity is Severity.ERROR


def p2p(status):
    return check_p2p(gpu2("nvml.links[0].p2p_read", status))


class TestP2pOk:
    def test_control_a_consumer_board_without_p2p(self):
        [f] = p2p("chipset not supported")
        assert f.id == "p2p-unavailable" and f.severity is Severity.WARN

    def test_control_a_status_nvml_did_not_give_is_no_ok(self):
        assert "p2p-ok" not in ids(p2p(Unavailable("nvmlDeviceGetP2PStatus: Not Supported")))

    def test_sibling_the_recorded_nvlinked_pair(self):
        [f] = p2p("ok")
        assert f.id == "p2p-ok" and f.title == "P2P works between GPU 0 and GPU 1"

    def test_sibling_one_gpu_has_no_pair_to_judge(self):
        assert check_p2p(gpu2("nvml.links", ())) == []

    def test_sibling_some_pairs_unanswered_claims_only_the_answered(self):
        link = gpu2_facts().nvml.links[0]
        links = (link, replace(link, a=0, b=2, p2p_read="unknown"), replace(link, a=1, b=2))
        [f] = check_p2p(gpu2("nvml.links", links))
        assert f.id == "p2p-ok" and "2 GPU pairs of 3" in f.title and "all" not in f.title


class TestP2pUnavailable:
    def test_control_the_recorded_pair(self):
        assert ids(p2p("ok")) == ["p2p-ok"]

    def test_control_an_unanswered_query_is_not_a_missing_p2p(self):
        # NVML gave no status (an old driver, a VM): nothing was seen that says P2P is off
        assert "p2p-unavailable" not in ids(p2p(Unavailable("nvmlDeviceGetP2PStatus: Not Supported")))
        assert "p2p-unavailable" not in ids(p2p("unknown"))

    def test_sibling_disabled_by_regkey(self):
        [f] = p2p("disabled by regkey")
        assert f.id == "p2p-unavailable" and "disabled by regkey" in f.title


# --- which GPUs torch sees ------------------------------------------------------------------


class TestDeviceCount:
    def test_control_torch_sees_one_of_two_with_nothing_hiding_one(self):
        assert ids(check_device_count(torch_sees(gpu2_facts(), [0]))) == ["device-count-mismatch"]

    def test_control_torch_without_cuda_makes_no_count_claim(self):
        assert check_device_count(vary(gpu2_facts(), "torch.is_available", False)) == []

    def test_sibling_one_gpu_selected_on_purpose(self):
        [f] = check_device_count(visible(gpu2_facts(), "1", [1]))
        assert f.id == "device-count" and f.severity is Severity.OK


class TestDeviceCountMismatch:
    def test_control_cuda_visible_devices_selects_one(self):
        assert ids(check_device_count(visible(gpu2_facts(), "0", [0]))) == ["device-count"]

    def test_control_mig_instances_are_counted_by_cuda_not_gpus(self):
        facts = vary(torch_sees(gpu2_facts(), [0]), "nvml.gpus[0].mig_mode", "enabled")
        assert check_device_count(facts) == []

    def test_sibling_one_gpu_missing_from_torch(self):
        [f] = check_device_count(torch_sees(gpu2_facts(), [0]))
        assert f.id == "device-count-mismatch" and f.evidence["expected"] == 2


def differing(facts):
    return vary(facts, "nvml.gpus[1].name", "NVIDIA A100-SXM4-40GB")


class TestDeviceOrder:
    def test_control_two_different_gpus_under_cudas_default_order(self):
        [f] = check_device_order(differing(gpu2_facts()))
        assert f.id == "device-order-not-pci" and f.severity is Severity.WARN

    def test_control_one_gpu_has_no_order(self):
        facts = gpu2_facts()
        assert check_device_order(vary(facts, "nvml", replace(facts.nvml, gpus=facts.nvml.gpus[:1]))) == []

    def test_sibling_pci_bus_order_set(self):
        [f] = check_device_order(with_env(differing(gpu2_facts()), CUDA_DEVICE_ORDER="PCI_BUS_ID"))
        assert f.id == "device-order" and f.severity is Severity.OK

    def test_sibling_identical_gpus_need_no_order(self):
        assert ids(check_device_order(gpu2_facts())) == ["device-order"]

    def test_sibling_torch_renumbered_them(self):
        [f] = check_device_order(torch_sees(gpu2_facts(), [1, 0]))
        assert f.id == "device-order-not-pci" and "cuda:0 is GPU 1" in f.title + str(f.evidence)


def in_process(initialized, count, uuids, value):
    return InProcessTorch(cuda_initialized=initialized, device_count=count, device_uuids=uuids, cuda_visible_devices=value)


def both_uuids():
    return tuple(d.uuid for d in gpu2_facts().torch.devices)


class TestVisibleDevicesSetAfterInit:
    def test_control_cuda_not_initialised_in_this_process(self):
        facts = vary(gpu2_facts(), "torch_in_process", in_process(False, 2, both_uuids(), "0"))
        assert check_set_after_init(facts) == []

    def test_control_initialised_on_the_same_gpus(self):
        [f] = check_set_after_init(vary(gpu2_facts(), "torch_in_process", in_process(True, 2, both_uuids(), None)))
        assert f.severity is Severity.OK and not f.fix

    def test_sibling_set_to_one_gpu_after_cuda_saw_two(self):
        facts = visible(gpu2_facts(), "1", [1])
        facts = vary(facts, "torch_in_process", in_process(True, 2, both_uuids(), "1"))
        [f] = check_set_after_init(facts)
        assert f.id == "visible-devices-set-after-init" and f.severity is Severity.ERROR

    def test_sibling_a_what_if_value_is_an_override_not_a_late_set(self):
        facts = replace(visible(gpu2_facts(), "1", [1]), visible_override="1")
        facts = vary(facts, "torch_in_process", in_process(True, 2, both_uuids(), None))
        assert check_set_after_init(facts) == [] and ids(check_visible_override(facts)) == ["visible-override"]


class TestVisibleOverride:
    def test_control_the_environments_own_value(self):
        facts = visible(gpu2_facts(), "1", [1])
        assert check_visible_override(facts) == [] and ids(check_visible_devices(facts)) == ["visible-devices"]

    def test_sibling_check_visible_1(self):
        facts = replace(torch_sees(gpu2_facts(), [1]), visible_override="1")
        [f] = check_visible_override(facts)
        assert f.severity is Severity.INFO and f.evidence["--visible"] == "1" and f.evidence["GPUs torch would see"] == 1

    def test_sibling_an_override_that_hides_every_gpu_is_judged_as_such(self):
        facts = replace(gpu2_facts(), visible_override="-1")
        assert ids(check_visible_devices(facts)) == ["visible-devices-hide-all"]


# --- backends -------------------------------------------------------------------------------


def backends(facts, **have: bool):
    return vary(facts, "torch.backends", {**facts.torch.backends, **have})


class TestBackendGloo:
    def test_control_a_build_without_gloo(self):
        assert "backend-gloo" not in ids(check_backends(backends(cpu_facts(), gloo=False)))

    def test_control_no_distributed_no_backend_line(self):
        assert ids(check_backends(vary(cpu_facts(), "torch.distributed", False))) == ["distributed-unavailable"]

    def test_sibling_gloo_missing_with_nccl_is_a_warning(self):
        f = by_id(check_backends(backends(gpu2_facts(), gloo=False)), "gloo-missing")
        assert f.severity is Severity.WARN

    def test_sibling_the_recorded_cpu_build(self):
        assert by_id(check_backends(cpu_facts()), "backend-gloo").severity is Severity.OK


class TestGlooMissing:
    def test_control_gloo_built_in(self):
        assert "gloo-missing" not in ids(check_backends(gpu2_facts()))

    def test_sibling_gloo_and_nccl_both_missing_is_an_error(self):
        f = by_id(check_backends(backends(cpu_facts(), gloo=False, nccl=False)), "gloo-missing")
        assert f.severity is Severity.ERROR

    def test_sibling_gloo_missing_beside_nccl_only_warns(self):
        assert by_id(check_backends(backends(gpu2_facts(), gloo=False)), "gloo-missing").severity is Severity.WARN


class TestBackendNccl:
    def test_control_nccl_not_built_on_linux_gpus(self):
        assert "backend-nccl" not in ids(check_backends(backends(gpu2_facts(), nccl=False)))

    def test_control_a_cuda_build_that_sees_no_gpu_makes_no_nccl_claim(self):
        got = ids(check_backends(vary(gpu2_facts(), "torch.is_available", False)))
        assert "backend-nccl" not in got and "nccl-missing" not in got

    def test_sibling_the_recorded_h100s(self):
        f = by_id(check_backends(gpu2_facts()), "backend-nccl")
        assert f.severity is Severity.OK


class TestNcclMissing:
    def test_control_no_gpu_needs_no_nccl(self):
        assert "nccl-missing" not in ids(check_backends(cpu_facts()))

    def test_sibling_linux_gpus_without_nccl_is_an_error(self):
        f = by_id(check_backends(backends(gpu2_facts(), nccl=False)), "nccl-missing")
        assert f.severity is Severity.ERROR

    def test_sibling_windows_has_no_nccl_to_build_info(self):
        facts = vary(backends(gpu2_facts(), nccl=False), "system.platform", "Windows-11-10.0.22631-SP0")
        assert by_id(check_backends(facts), "nccl-missing").severity is Severity.INFO


class TestBackendChoice:
    def test_control_no_distributed_no_choice(self):
        assert "backend-choice" not in ids(check_backends(vary(cpu_facts(), "torch.distributed", False)))

    def test_control_no_torch_no_choice(self):
        facts = vary(cpu_facts(), "torch", failed("import-failed", "ModuleNotFoundError: No module named 'torch'", None))
        assert check_backends(facts) == []

    def test_sibling_gpus_say_nccl_and_cpu_says_gloo(self):
        gpu, cpu = by_id(check_backends(gpu2_facts()), "backend-choice"), by_id(check_backends(cpu_facts()), "backend-choice")
        assert gpu.severity is cpu.severity is Severity.INFO
        assert gpu.evidence["GPU tensors"] == "nccl" and cpu.evidence["GPU tensors"].startswith("no NCCL")
        assert gpu.title != cpu.title


class TestDistributedUnavailable:
    def test_control_the_recorded_builds(self):
        assert "distributed-unavailable" not in ids(check_backends(cpu_facts()) + check_backends(gpu2_facts()))

    def test_control_a_torch_that_does_not_import(self):
        facts = vary(cpu_facts(), "torch", failed("import-failed", "ImportError: torch._C", None))
        assert check_backends(facts) == []

    def test_control_is_available_not_read_is_not_false(self):
        facts = vary(cpu_facts(), "torch.distributed", Unavailable("could not be queried: RuntimeError"))
        assert check_backends(facts) == []

    def test_sibling_a_build_without_distributed(self):
        [f] = check_backends(vary(cpu_facts(), "torch.distributed", False))
        assert f.id == "distributed-unavailable" and f.severity is Severity.ERROR


# --- the host -------------------------------------------------------------------------------


class TestCpuCount:
    def test_control_slurm_gives_two_of_eight_cpus(self):
        facts = vary(vary(cpu_facts(), "system.cpus_logical", 8), "system.cpu_affinity", (0, 1))
        [f] = check_cpus(facts)
        assert f.id == "cpu-count" and f.severity is Severity.INFO and "2 of 8" in f.title

    def test_sibling_every_cpu_usable(self):
        [f] = check_cpus(cpu_facts())
        assert f.severity is Severity.OK and "2 logical CPUs" in f.title

    def test_sibling_affinity_not_readable_claims_no_restriction(self):
        [f] = check_cpus(vary(cpu_facts(), "system.cpu_affinity", Unavailable("no sched_getaffinity on macOS")))
        assert f.severity is Severity.OK and "affinity" not in f.title


class TestRamSize:
    def test_control_memory_not_read_is_no_ok(self):
        facts = vary(vary(cpu_facts(), "system.ram_total_bytes", Unavailable("no /proc/meminfo")),
                     "system.ram_available_bytes", Unavailable("no /proc/meminfo"))
        assert check_ram(facts) == []

    def test_sibling_the_recorded_machine(self):
        [f] = check_ram(cpu_facts())
        assert f.severity is Severity.OK and "RAM" in f.title and "unknown" not in f.title.lower()


def shm(total):
    return check_shm(vary(cpu_facts(), "system.shm_total_bytes", total))


class TestShmSize:
    def test_control_dockers_default_64_mib(self):
        assert ids(shm(64 * MIB)) == ["shm-too-small"]

    def test_control_one_byte_under_the_floor(self):
        assert ids(shm(GIB - 1)) == ["shm-too-small"]

    def test_control_size_not_read(self):
        assert shm(Unavailable("no /dev/shm")) == []

    def test_control_a_large_one_that_stale_files_fill(self):
        facts = vary(vary(cpu_facts(), "system.shm_total_bytes", 16 * GIB), "system.shm_free_bytes", 5 * MIB)
        assert "shm-size" not in ids(check_shm(facts))

    def test_control_at_the_floor_with_a_little_in_use_is_not_full(self):
        facts = vary(vary(cpu_facts(), "system.shm_total_bytes", GIB), "system.shm_free_bytes", GIB - 64 * 1024)
        assert ids(check_shm(facts)) == ["shm-size"]

    def test_sibling_exactly_the_floor(self):
        facts = vary(vary(cpu_facts(), "system.shm_total_bytes", GIB), "system.shm_free_bytes", GIB)
        [f] = check_shm(facts)
        assert f.id == "shm-size" and f.severity is Severity.OK

    def test_sibling_full_is_a_warning_that_says_full_not_small(self):
        facts = vary(vary(cpu_facts(), "system.shm_total_bytes", 16 * GIB), "system.shm_free_bytes", 5 * MIB)
        [f] = check_shm(facts)
        assert f.id == "shm-too-small" and f.severity is Severity.WARN
        assert "only 5 MiB is free" in f.title and "--shm-size" not in f.fix and "/dev/shm" in f.fix

    def test_sibling_free_space_not_read_judges_the_size(self):
        facts = vary(vary(cpu_facts(), "system.shm_total_bytes", 16 * GIB), "system.shm_free_bytes", Unavailable("statvfs failed"))
        assert ids(check_shm(facts)) == ["shm-size"]


def open_files(soft, hard):
    return check_open_files(vary(vary(cpu_facts(), "system.open_files_soft", soft), "system.open_files_hard", hard))


class TestOpenFilesLimit:
    def test_control_one_under_the_floor(self):
        assert ids(open_files(4095, 1 << 20)) == ["open-files-limit-low"]

    def test_control_limit_not_read(self):
        assert open_files(Unavailable("no resource module"), Unavailable("no resource module")) == []

    def test_sibling_the_floor(self):
        [f] = open_files(4096, 4096)
        assert f.id == "open-files-limit" and f.severity is Severity.OK


class TestContainerDetected:
    def test_control_no_hint(self):
        assert check_container(vary(cpu_facts(), "system.container", ())) == []

    def test_sibling_dockers_small_shm_is_its_own_warning(self):
        facts = vary(cpu_facts(), "system.shm_total_bytes", 64 * MIB)
        [f] = check_container(facts)
        assert f.severity is Severity.INFO and f.evidence["hints"] == ["/.dockerenv"]
        assert ids(check_shm(facts)) == ["shm-too-small"]


class TestPlatformLimits:
    def test_control_linux(self):
        assert check_platform(cpu_facts()) == []

    def test_sibling_windows_names_what_does_not_apply(self):
        [f] = check_platform(vary(cpu_facts(), "system.platform", "Windows-11-10.0.22631-SP0"))
        assert f.severity is Severity.INFO and "NCCL backend" in f.evidence["does not apply"]

    def test_sibling_macos_also_has_no_cuda(self):
        [f] = check_platform(vary(cpu_facts(), "system.platform", "macOS-14.5-arm64-arm-64bit"))
        assert "CUDA devices and CUDA_VISIBLE_DEVICES" in f.evidence["does not apply"]


# --- the environment ---------------------------------------------------------------------------


def launch_env(**env):
    base = with_env(cpu_facts(), **{k: None for k in cpu_facts().environment.variables})
    return check_launch_env(with_env(base, **env))


class TestDistributedEnv:
    def test_control_a_rank_without_the_address(self):
        [f] = launch_env(RANK="1", WORLD_SIZE="2")
        assert f.id == "distributed-env-incomplete"

    def test_sibling_nothing_set(self):
        [f] = launch_env()
        assert f.id == "distributed-env" and f.severity is Severity.OK

    def test_sibling_master_alone_is_harmless_info(self):
        [f] = launch_env(MASTER_ADDR="127.0.0.1", MASTER_PORT="29500")
        assert f.id == "distributed-env" and f.severity is Severity.INFO and "MASTER_PORT=29500" in f.title


class TestNcclIbDisabled:
    def test_control_set_to_zero_or_empty(self):
        facts = with_env(gpu2_facts(), NCCL_IB_DISABLE="0")
        assert check_transports_disabled(facts) == []
        assert check_transports_disabled(with_env(gpu2_facts(), NCCL_IB_DISABLE=" ")) == []

    def test_sibling_disabled(self):
        [f] = check_transports_disabled(with_env(gpu2_facts(), NCCL_IB_DISABLE="1"))
        assert f.id == "nccl-ib-disabled" and f.severity is Severity.INFO


# --- one node (issue 34's edge case) ---------------------------------------------------------------


class TestFleetConsistentOneNode:
    """One node has nothing to agree with: `check` gives it the node's own report."""

    verdict = "fleet-consistent"

    def run(self, *snapshots):
        from gpudoctor.commands.check import run
        from gpudoctor.commands.check.options import Options

        return run(Options(facts=tuple(str(p) for p in snapshots))).findings

    def test_control_one_snapshot_is_a_node_report(self):
        got = ids(self.run(GPU2_SNAPSHOT))
        assert not [i for i in got if i.startswith("fleet-")] and "nvidia-driver" in got

    def test_sibling_two_nodes_that_agree(self, tmp_path):
        other = tmp_path / "node-b.json"
        other.write_text(GPU2_SNAPSHOT.read_text())
        f = by_id(self.run(GPU2_SNAPSHOT, other), "fleet-consistent")
        assert f.title.startswith("2 nodes agree on torch")


# --- a check that fails ---------------------------------------------------------------------


def check_that_trips(facts):
    return [f for f in check_cpus(facts) if facts.system.cpus_logical // 0]


class TestCheckFailed:
    def test_control_every_real_check_on_the_recorded_snapshots(self):
        assert "check-failed" not in ids(run_checks(cpu_facts()) + run_checks(gpu2_facts()))

    def test_sibling_a_check_that_raises_is_named_and_the_others_still_run(self):
        got = run_checks(cpu_facts(), (check_that_trips, check_ram))
        f = by_id(got, "check-failed")
        assert "check_that_trips" in f.title and "ZeroDivisionError" in f.evidence["error"]
        assert ids(got) == ["check-failed", "ram-size"]


# --- what the runtime hooks saw (gpudoctor run) ---------------------------------------------------


def mismatch(**kw):
    base = dict(rank=0, error="Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
                devices_in_message=("cuda:0", "cpu"), module="head", module_type="Linear", root_type="Net")
    return DeviceMismatch(**{**base, **kw})


class TestDeviceMismatch:
    def test_control_an_input_moved_before_anything_failed(self):
        seen = ModuleInputDevice(0, "head", "Linear", "cuda:0", "input", "cpu")
        assert ids(runtime_findings([seen])) == ["module-input-device"]

    def test_sibling_the_input_apart_moves_the_input(self):
        f = by_id(runtime_findings([mismatch(module_tensors={"weight": "cuda:0"}, inputs={"input": "cpu"},
                                             model_devices={"cuda:0": 10})]), "device-mismatch")
        assert f.severity is Severity.ERROR and f.fix.startswith('input = input.to("cuda:0")')

    def test_sibling_the_module_apart_moves_the_module(self):
        f = by_id(runtime_findings([mismatch(module_tensors={"weight": "cpu"}, inputs={"input": "cuda:0"},
                                             model_devices={"cuda:0": 10, "cpu": 1})]), "device-mismatch")
        assert f.fix.startswith('model.head.to("cuda:0")')


class TestModuleInputDevice:
    def test_control_the_module_that_failed_is_told_once(self):
        seen = ModuleInputDevice(0, "head", "Linear", "cuda:0", "input", "cpu")
        failed_op = mismatch(module_tensors={"weight": "cuda:0"}, inputs={"input": "cpu"})
        assert ids(runtime_findings([seen, failed_op])) == ["device-mismatch"]

    def test_sibling_a_meta_module_is_its_own_case(self):
        move = runtime_findings([ModuleInputDevice(0, "head", "Linear", "cuda:0", "input", "cpu")])
        meta = runtime_findings([ModuleInputDevice(0, "head", "Linear", "meta", "input", "cuda:0")])
        assert ids(move) == ids(meta) == ["module-input-device"] and move[0].fix != meta[0].fix

    def test_sibling_two_ranks_one_finding(self):
        [f] = runtime_findings([ModuleInputDevice(r, "head", "Linear", "cuda:0", "input", "cpu") for r in (0, 1)])
        assert f.evidence["ranks"] == [0, 1]


def nccl(**kw):
    base = dict(rank=1, backend="nccl", local_rank=1, local_world_size=2, visible_devices=None, device_count=2,
                current_device=1, when="init_process_group")
    return NcclDevice(**{**base, **kw})


class TestNcclRankDevice:
    def test_control_each_rank_on_its_own_gpu(self):
        assert runtime_findings([nccl()]) == []

    def test_control_one_gpu_per_rank_through_cuda_visible_devices(self):
        # Slurm's --gpus-per-task: each rank sees one GPU, cuda:0, whatever its LOCAL_RANK
        assert runtime_findings([nccl(visible_devices="3", device_count=1, current_device=0)]) == []

    def test_control_gloo_has_no_gpu_to_share(self):
        assert runtime_findings([nccl(backend="gloo", current_device=0)]) == []

    def test_sibling_rank_1_left_on_cuda_0(self):
        [f] = runtime_findings([nccl(current_device=0)])
        assert f.id == "nccl-rank-device" and f.severity is Severity.ERROR and "cuda:0" in str(f.evidence)

    def test_sibling_more_ranks_than_gpus(self):
        [f] = runtime_findings([nccl(rank=2, local_rank=2, local_world_size=3, current_device=0)])
        assert f.id == "nccl-rank-device" and "ranks share a GPU" in f.title and "--nproc_per_node 2" in f.fix


def loader(**kw):
    base = dict(rank=0, spawned_rank=True, start_method="spawn", num_workers=4, persistent_workers=False,
                startup_s=(1.2, 1.1, 1.3), lightning=False)
    return LoaderRestarts(**{**base, **kw})


class TestSpawnedRankLoaderWorkers:
    def test_control_persistent_workers(self):
        assert runtime_findings([loader(persistent_workers=True)]) == []

    def test_control_forked_workers_start_fast(self):
        assert runtime_findings([loader(spawned_rank=False, start_method="fork")]) == []

    def test_control_a_start_up_under_the_floor(self):
        assert runtime_findings([loader(startup_s=(0.02, 0.03))]) == []

    def test_control_one_epoch_is_no_restart(self):
        assert runtime_findings([loader(startup_s=(1.2,))]) == []

    def test_sibling_a_spawned_rank(self):
        [f] = runtime_findings([loader()])
        assert f.id == "spawned-rank-loader-workers" and f.severity is Severity.WARN and "persistent_workers=True" in f.fix

    def test_sibling_lightning_gets_its_strategy(self):
        plain, lightning = runtime_findings([loader()]), runtime_findings([loader(lightning=True)])
        assert plain[0].fix != lightning[0].fix


def save(**kw):
    base = dict(rank=0, world_size=2, path="/ckpt/model.pt", ddp_wrapper=None, ddp_kind=None, example_key=None, writers=None)
    return CheckpointSave(**{**base, **kw})


class TestCheckpointEveryRank:
    def test_control_rank_0_alone_saves(self):
        assert runtime_findings([save(writers=1)]) == []

    def test_control_each_rank_its_own_shard(self):
        assert runtime_findings([save(rank=0, path="/ckpt/rank0.pt"), save(rank=1, path="/ckpt/rank1.pt")]) == []

    def test_control_one_process_job(self):
        assert runtime_findings([save(world_size=1), save(world_size=1)]) == []

    def test_sibling_both_ranks_write_one_file(self):
        [f] = runtime_findings([save(rank=0), save(rank=1)])
        assert f.id == "checkpoint-every-rank" and f.evidence["writers"] == 2 and f.evidence["not rank 0"] == [1]

    def test_sibling_the_store_counted_writers_seen_from_one_rank(self):
        [f] = runtime_findings([save(rank=0, writers=4, world_size=4)])
        assert f.id == "checkpoint-every-rank" and f.evidence["writers"] == 4

    def test_control_each_nodes_rank_0_saving_its_node_local_copy(self):
        # local rank 0 of node a and of node b (global ranks 0 and 2), /scratch on each node's own disk
        local = [save(rank=0, world_size=4, path="/scratch/ckpt.pt", scope="node-a"),
                 save(rank=2, world_size=4, path="/scratch/ckpt.pt", scope="node-b")]  # fmt: skip
        assert runtime_findings(local) == []

    def test_sibling_two_ranks_of_one_node_on_its_local_disk(self):
        [f] = runtime_findings([save(rank=r, world_size=4, path="/scratch/ckpt.pt", scope="node-a") for r in (0, 1)])
        assert f.id == "checkpoint-every-rank" and "node-a" in f.evidence["node"]

    def test_sibling_two_nodes_on_a_network_file_system_clash(self):
        shared = [save(rank=0, world_size=4, path="/nfs/ckpt.pt", scope=""), save(rank=2, world_size=4, path="/nfs/ckpt.pt", scope="")]
        [f] = runtime_findings(shared)
        assert f.id == "checkpoint-every-rank" and f.evidence["ranks seen saving it"] == [0, 2]


class TestCheckpointSaveScope:
    """hooks/checkpoint.save_scope: which paths are one file for every node."""

    verdict = "checkpoint-every-rank"
    MOUNTS = ("overlay / overlay rw,relatime 0 0\n"
              "10.0.0.5:/export/home /home nfs4 rw,vers=4.2 0 0\n"
              "/dev/nvme0n1p1 /scratch ext4 rw 0 0\n"
              "lustre@tcp:/fs /lustre/my\\040data lustre rw 0 0\n")  # fmt: skip

    def test_control_a_node_local_disk_is_this_nodes(self):
        from gpudoctor.hooks.checkpoint import save_scope

        assert save_scope("/scratch/run/ckpt.pt", self.MOUNTS, "node-a") == "node-a"
        assert save_scope("/tmp/ckpt.pt", self.MOUNTS, "node-a") == "node-a"  # the overlay root

    def test_sibling_a_network_file_system_is_every_nodes(self):
        from gpudoctor.hooks.checkpoint import save_scope

        assert save_scope("/home/u/ckpt.pt", self.MOUNTS, "node-a") == ""
        assert save_scope("/lustre/my data/ckpt.pt", self.MOUNTS, "node-a") == ""

    def test_sibling_unknown_mounts_are_judged_shared(self):
        from gpudoctor.hooks.checkpoint import save_scope

        assert save_scope("/scratch/ckpt.pt", "", "node-a") == ""


class TestCheckpointDdpWrapper:
    def test_control_the_inner_modules_state_dict(self):
        assert runtime_findings([save(writers=1)]) == []

    def test_sibling_the_wrapper_itself(self):
        [f] = runtime_findings([save(writers=1, ddp_wrapper="obj", ddp_kind="wrapper")])
        assert f.id == "checkpoint-ddp-wrapper" and f.severity is Severity.WARN

    def test_sibling_its_state_dict_names_the_prefixed_key(self):
        [f] = runtime_findings([save(writers=1, ddp_wrapper="obj['model']", ddp_kind="state_dict", example_key="module.fc.weight")])
        assert f.evidence["key"] == "module.fc.weight" and f.evidence["found in"] == "obj['model']"

    def test_sibling_every_rank_saving_the_wrapper_gets_both(self):
        got = runtime_findings([save(rank=r, ddp_wrapper="obj", ddp_kind="wrapper") for r in (0, 1)])
        assert sorted(ids(got)) == ["checkpoint-ddp-wrapper", "checkpoint-every-rank"]



class TestRanksOutnumberCores:
    """launch/capacity.crowded: four ranks per usable core is the line."""

    def test_control_just_under_four_ranks_per_core_is_not_crowded(self):
        from gpudoctor.launch.capacity import crowded

        assert crowded("run", 7, 2) is None
        assert crowded("allreduce", 3, 1) is None

    def test_control_one_rank_per_core_is_not_crowded(self):
        from gpudoctor.launch.capacity import crowded

        assert crowded("train-smoke", 16, 16) is None

    def test_sibling_four_per_core_is_the_warning_with_its_figures(self):
        from gpudoctor.launch.capacity import crowded

        found = crowded("run", 8, 2)
        assert found is not None and found.id == "ranks-outnumber-cores"
        assert found.severity is Severity.WARN
        assert found.evidence["ranks"] == 8 and found.evidence["usable cores"] == 2

    def test_sibling_more_ranks_than_the_limit_is_a_usage_error_not_crowding(self):
        from gpudoctor.launch.capacity import nproc_problem

        assert nproc_problem(10000) == "--nproc must be between 1 and 256 (got 10000)"
        assert nproc_problem(0) == "--nproc must be between 1 and 256 (got 0)"
