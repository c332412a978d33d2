"""Controls and siblings for `gpudoctor check`'s verdicts on the recorded fact snapshots
(tests/fixtures/facts_2gpu.json, facts_cpu.json), one fact away from the failure
(issue 34's method): the healthy machine that looks most like the failure must not
get the verdict (test_control_*); the nearest machine that needs another verdict
gets its own (test_sibling_*). Pure checks on facts: no probe runs."""

from __future__ import annotations

from dataclasses import replace

from facts_cases import by_id, cpu_facts, gpu2_facts, ids, vary, with_env
from gpudoctor.checks.environment import check_master, check_socket_ifname, check_transports_disabled
from gpudoctor.checks.fleet import check_fleet
from gpudoctor.checks.node import node_facts
from gpudoctor.checks.system import check_open_files, check_shm
from gpudoctor.checks.torch_build import check_arch_list, check_driver_version, check_torch_build
from gpudoctor.checks.visibility import check_visible_devices
from gpudoctor.core.findings import Severity
from gpudoctor.probe.host import HostFacts

GIB = 1 << 30


def driver_cuda(version: str):
    return vary(gpu2_facts(), "nvml.cuda_driver_version", version)


class TestDriverTooOld:
    def test_control_a_newer_driver_than_the_build(self):
        # torch cu126 on a driver that supports CUDA 12.8: the recorded H100 machine
        assert ids(check_driver_version(gpu2_facts())) == ["driver-cuda-version"]

    def test_control_the_same_cuda_version(self):
        assert ids(check_driver_version(driver_cuda("12.6"))) == ["driver-cuda-version"]

    def test_sibling_an_older_minor_is_a_warning(self):
        [f] = check_driver_version(driver_cuda("12.4"))
        assert f.id == "driver-too-old" and f.severity is Severity.WARN

    def test_sibling_an_older_major_is_an_error(self):
        [f] = check_driver_version(driver_cuda("11.4"))
        assert f.id == "driver-too-old" and f.severity is Severity.ERROR

    def test_sibling_a_cpu_build_on_gpus_is_its_own_verdict(self):
        facts = vary(gpu2_facts(), "torch.cuda", None)
        assert check_driver_version(facts) == [] and ids(check_torch_build(facts)) == ["torch-cpu-build-with-gpus"]


class TestTorchCpuBuildWithGpus:
    def test_control_a_cpu_build_on_a_machine_without_gpus(self):
        [f] = check_torch_build(cpu_facts())
        assert f.id == "torch-build" and f.severity is Severity.INFO

    def test_control_the_cuda_build_on_the_gpus(self):
        assert ids(check_torch_build(gpu2_facts())) == ["torch-build"]

    def test_sibling_the_cpu_wheel_beside_two_h100(self):
        [f] = check_torch_build(vary(gpu2_facts(), "torch.cuda", None))
        assert f.id == "torch-cpu-build-with-gpus" and f.severity is Severity.ERROR
        assert f.evidence["GPUs NVML sees"] == 2


def arch(*archs: str):
    return vary(gpu2_facts(), "torch.arch_list", archs)


class TestArchMissing:
    def test_control_the_recorded_build_covers_sm_90(self):
        assert ids(check_arch_list(gpu2_facts())) == ["arch-supported"]

    def test_control_ptx_of_an_older_arch_runs_on_a_newer_gpu(self):
        # compute_80 is PTX: the driver compiles it for the H100 (9.0)
        assert ids(check_arch_list(arch("sm_70", "sm_80", "compute_80"))) == ["arch-supported"]

    def test_sibling_sass_only_up_to_sm_86_on_an_h100(self):
        [f] = check_arch_list(arch("sm_70", "sm_80", "sm_86"))
        assert f.id == "arch-missing" and "sm_90" in f.title

    def test_sibling_sm_90a_does_not_run_on_another_gpu(self):
        facts = vary(vary(arch("sm_90a"), "torch.devices[0].capability", "8.0"), "torch.devices[1].capability", "8.0")
        assert ids(check_arch_list(facts)) == ["arch-missing"]


def ifname(**env: str):
    return check_socket_ifname(with_env(gpu2_facts(), **env))


class TestNcclSocketIfnameMissing:
    def test_control_a_prefix_that_matches_eth0(self):
        assert ifname(NCCL_SOCKET_IFNAME="eth") == []

    def test_control_an_exclusion_list(self):
        assert ifname(NCCL_SOCKET_IFNAME="^docker,lo") == []

    def test_sibling_an_interface_this_machine_lacks(self):
        [f] = ifname(NCCL_SOCKET_IFNAME="ib0")
        assert f.id == "nccl-socket-ifname-missing" and f.severity is Severity.ERROR

    def test_sibling_gloo_given_the_same_prefix_needs_exact_names(self):
        [f] = ifname(GLOO_SOCKET_IFNAME="eth")
        assert f.id == "gloo-socket-ifname-missing"


class TestGlooSocketIfnameMissing:
    def test_control_the_exact_name(self):
        assert ifname(GLOO_SOCKET_IFNAME="eth0") == []

    def test_control_a_list_of_existing_names(self):
        assert ifname(GLOO_SOCKET_IFNAME="eth0,lo") == []

    def test_sibling_nccl_with_the_same_prefix_is_fine_and_gloo_is_not(self):
        assert ids(ifname(NCCL_SOCKET_IFNAME="eth", GLOO_SOCKET_IFNAME="eth")) == ["gloo-socket-ifname-missing"]

    def test_sibling_nccl_naming_a_missing_interface_is_nccls(self):
        assert ids(ifname(NCCL_SOCKET_IFNAME="ens5", GLOO_SOCKET_IFNAME="eth0")) == ["nccl-socket-ifname-missing"]


def master(**env: str):
    return check_master(with_env(gpu2_facts(), **env))


class TestMasterPortInvalid:
    def test_control_the_default_port(self):
        assert master(MASTER_ADDR="10.0.0.1", MASTER_PORT="29500") == []

    def test_control_the_highest_port(self):
        assert master(MASTER_PORT="65535") == []

    def test_sibling_a_url_where_a_port_belongs(self):
        assert ids(master(MASTER_PORT="tcp://10.0.0.1:29500")) == ["master-port-invalid"]

    def test_sibling_one_past_the_last_port(self):
        assert ids(master(MASTER_PORT="65536")) == ["master-port-invalid"]

    def test_sibling_an_empty_address_is_its_own_verdict(self):
        assert ids(master(MASTER_ADDR="", MASTER_PORT="29500")) == ["master-addr-unresolvable"]


class TestMasterAddrUnresolvable:
    def test_control_an_ip_address(self):
        assert master(MASTER_ADDR="10.0.0.1") == []

    def test_sibling_an_empty_address_from_an_unset_variable(self):
        # `export MASTER_ADDR=$HEAD` with HEAD unset, as in deepspeed-2612 and colossalai-5890
        [f] = master(MASTER_ADDR="")
        assert f.id == "master-addr-unresolvable" and "is empty" in f.title + str(f.evidence)


def shm(total: int):
    return check_shm(vary(gpu2_facts(), "system.shm_total_bytes", total))


class TestShmTooSmall:
    def test_control_exactly_one_gib(self):
        assert ids(shm(GIB)) == ["shm-size"]

    def test_control_the_recorded_machine(self):
        assert ids(check_shm(gpu2_facts())) == ["shm-size"]

    def test_sibling_dockers_default_64_mib(self):
        [f] = shm(64 << 20)
        assert f.id == "shm-too-small" and f.severity is Severity.WARN


def open_files(soft: int, hard: int):
    return check_open_files(vary(vary(gpu2_facts(), "system.open_files_soft", soft), "system.open_files_hard", hard))


class TestOpenFilesLimitLow:
    def test_control_at_the_threshold(self):
        assert ids(open_files(4096, 4096)) == ["open-files-limit"]

    def test_control_unlimited(self):
        assert ids(open_files(-1, -1)) == ["open-files-limit"]

    def test_sibling_the_usual_1024_raisable(self):
        [f] = open_files(1024, 1048576)
        assert f.id == "open-files-limit-low" and "65536" in f.fix

    def test_sibling_a_hard_limit_too_low_to_raise_shares_files_instead(self):
        [f] = open_files(1024, 1024)
        assert f.id == "open-files-limit-low" and "file_system" in f.fix


def transports(**env: str):
    return check_transports_disabled(with_env(gpu2_facts(), **env))


class TestNcclP2pDisabled:
    def test_control_set_to_zero(self):
        assert transports(NCCL_P2P_DISABLE="0") == []

    def test_sibling_ib_disabled_is_its_own_notice(self):
        [f] = transports(NCCL_IB_DISABLE="1")
        assert f.id == "nccl-ib-disabled" and f.severity is Severity.INFO

    def test_sibling_p2p_disabled(self):
        [f] = transports(NCCL_P2P_DISABLE="1")
        assert f.id == "nccl-p2p-disabled" and f.severity is Severity.WARN


def visible(value: str):
    return check_visible_devices(with_env(gpu2_facts(), CUDA_VISIBLE_DEVICES=value))


class TestVisibleDevicesInvalid:
    def test_control_both_gpus_in_reverse_order(self):
        assert ids(visible("1,0")) == ["visible-devices"]

    def test_sibling_an_index_past_the_last_gpu(self):
        [f] = visible("2")
        assert f.id == "visible-devices-invalid" and f.severity is Severity.WARN and "out of range" in f.title

    def test_sibling_minus_one_hides_every_gpu(self):
        assert ids(visible("-1")) == ["visible-devices-hide-all"]


class TestVisibleDevicesHideAll:
    def test_control_one_gpu_selected(self):
        assert ids(visible("0")) == ["visible-devices"]

    def test_sibling_a_list_read_in_part(self):
        [f] = visible("0,5")
        assert f.id == "visible-devices-invalid"

    def test_sibling_an_empty_value_hides_all(self):
        assert ids(visible("")) == ["visible-devices-hide-all"]


def node(name: str, facts):
    return vary(facts, "host", HostFacts(hostname=name, name=name, infiniband=()))


def fleet(*facts):
    return check_fleet([node_facts(f, None, (2 * i, 2 * i + 1)) for i, f in enumerate(facts)])


class TestFleetTorchMismatch:
    def test_control_the_same_torch_on_both_nodes(self):
        assert "fleet-torch-mismatch" not in ids(fleet(node("a", gpu2_facts()), node("b", gpu2_facts())))

    def test_sibling_a_different_driver_is_its_own_verdict(self):
        b = vary(vary(gpu2_facts(), "nvml.driver_version", "535.104.05"), "nvml.cuda_driver_version", "12.2")
        got = ids(fleet(node("a", gpu2_facts()), node("b", b)))
        assert "fleet-driver-mismatch" in got and "fleet-torch-mismatch" not in got

    def test_sibling_another_torch_on_one_node(self):
        b = vary(gpu2_facts(), "torch.version", "2.12.1+cu126")
        f = by_id(fleet(node("a", gpu2_facts()), node("b", b)), "fleet-torch-mismatch")
        assert f.severity is Severity.ERROR


class TestFleetDriverMismatch:
    def test_control_the_same_driver(self):
        got = ids(fleet(node("a", gpu2_facts()), node("b", gpu2_facts())))
        assert got == ["fleet-consistent"]

    def test_sibling_another_gpu_count_is_its_own_verdict(self):
        b = gpu2_facts()
        b = vary(b, "nvml", replace(b.nvml, gpus=b.nvml.gpus[:1], device_count=1))
        got = ids(fleet(node("a", gpu2_facts()), node("b", b)))
        assert "fleet-gpu-count-mismatch" in got and "fleet-driver-mismatch" not in got

    def test_sibling_another_driver(self):
        b = vary(gpu2_facts(), "nvml.driver_version", "570.86.15")
        assert "fleet-driver-mismatch" in ids(fleet(node("a", gpu2_facts()), node("b", b)))
