"""Controls and siblings for GPU health (checks/gpu_health.py) on the NVML answers
recorded from a healthy V100 (tests/fixtures/gpu_health/nvml/pcie_v100_healthy.json),
each one reading away from it, and for the fleet comparison (checks/fleet.py) on
nodes built from the recorded 2-GPU snapshot as tests/test_checks_fleet.py builds
them, issue 34's method: the healthy input that looks most like the failure must not
get the verdict (test_control_*); the nearest input that needs another verdict gets
its own (test_sibling_*). Pure checks: no probe runs but the recorded NVML."""

from __future__ import annotations

import dataclasses

import pytest

from facts_cases import by_id, gpu2_facts, ids, vary
from gpudoctor.checks.fleet import check_fleet
from gpudoctor.checks.gpu_health import check_gpu_health, check_xid_events, health_findings
from gpudoctor.core.findings import Severity
from gpudoctor.core.unavailable import Unavailable
from gpudoctor.knowledge.xid import xid_events
from gpudoctor.probe.host import HostFacts, InfinibandDevice, InfinibandPort
from gpudoctor.probe.kernel_log import KernelLogFacts
from test_checks_fleet import ACTIVE, fleet, on_host, same
from test_checks_gpu_health import facts_with, nvml_from

V100 = "GPU 0 (Tesla V100-PCIE-32GB, 00000000:3B:00.0)"


@pytest.fixture
def v100(monkeypatch):
    """The recorded healthy V100's health, to change one reading of."""
    return nvml_from("pcie_v100_healthy", monkeypatch).gpus[0].health


def judged(health, **change) -> list[str]:
    return ids(health_findings([(V100, dataclasses.replace(health, **change))]))


class TestGpuEccUncorrectable:
    def test_control_corrected_errors_only(self, v100):
        assert judged(v100, ecc_volatile_corrected=1200, ecc_volatile_uncorrected=0) == []

    def test_control_a_lifetime_count_from_before_this_boot(self, v100):
        assert judged(v100, ecc_aggregate_uncorrected=3, ecc_volatile_uncorrected=0) == []

    def test_sibling_one_uncorrectable_since_boot(self, v100):
        assert judged(v100, ecc_volatile_uncorrected=1) == ["gpu-ecc-uncorrectable"]


class TestGpuPagesPendingRetirement:
    def test_control_pages_already_retired_nothing_pending(self, v100):
        assert judged(v100, retired_double_bit=2, retired_single_bit=5, retired_pending=False) == []

    def test_sibling_a_retirement_waiting_for_a_reset(self, v100):
        assert judged(v100, retired_double_bit=2, retired_pending=True) == ["gpu-pages-pending-retirement"]


class TestGpuRowRemapPending:
    def test_control_rows_remapped_nothing_pending(self, v100):
        assert judged(v100, remapped_corrected=3, remap_pending=False, remap_failure=False) == []

    def test_sibling_a_failed_remap_is_its_own_verdict(self, v100):
        assert judged(v100, remap_pending=True, remap_failure=True) == ["gpu-row-remap-failed"]

    def test_sibling_pending(self, v100):
        assert judged(v100, remap_pending=True, remap_failure=False) == ["gpu-row-remap-pending"]


class TestGpuRowRemapFailed:
    def test_control_pending_only(self, v100):
        assert "gpu-row-remap-failed" not in judged(v100, remap_pending=True, remap_failure=False)

    def test_sibling_failure(self, v100):
        assert judged(v100, remap_failure=True) == ["gpu-row-remap-failed"]


class TestGpuTemperatureHigh:
    # the recorded V100: slowdown at 82 C, shutdown at 85 C
    def test_control_warm_under_load_but_past_the_margin(self, v100):
        assert judged(v100, temperature_c=76) == []

    def test_sibling_within_5_c_of_slowdown_is_a_warning(self, v100):
        [f] = health_findings([(V100, dataclasses.replace(v100, temperature_c=78))])
        assert f.id == "gpu-temperature-high" and f.severity is Severity.WARN

    def test_sibling_within_5_c_of_shutdown_is_an_error(self, v100):
        [f] = health_findings([(V100, dataclasses.replace(v100, temperature_c=81))])
        assert f.id == "gpu-temperature-high" and f.severity is Severity.ERROR


class TestGpuPowerCapped:
    def test_control_a_limit_at_90_percent_of_the_default(self, v100):
        assert judged(v100, power_limit_w=225.0) == []

    def test_control_drawing_little_at_idle_is_not_a_cap(self, v100):
        assert judged(v100, power_w=25.0) == []

    def test_sibling_a_limit_set_to_150_of_250_w(self, v100):
        assert judged(v100, power_limit_w=150.0) == ["gpu-power-capped"]


class TestGpuPcieLinkDegraded:
    def test_control_gen_1_at_idle_with_full_width(self, v100):
        # a GPU at idle drops its PCIe generation to save power
        assert judged(v100, pcie_gen=1, pcie_max_gen=3, pcie_width=16, pcie_max_width=16, pcie_replays=0) == []

    def test_control_replays_under_the_limit(self, v100):
        assert judged(v100, pcie_width=16, pcie_max_width=16, pcie_replays=999) == []

    def test_sibling_x8_of_x16(self, v100):
        assert judged(v100, pcie_width=8, pcie_max_width=16) == ["gpu-pcie-link-degraded"]


class TestGpuPersistenceOff:
    def test_control_enabled(self, v100):
        assert judged(v100, persistence_mode="enabled") == []

    def test_sibling_the_recorded_a100_with_it_off_is_info(self, monkeypatch):
        f = by_id(check_gpu_health(facts_with(nvml_from("a100_persistence_off", monkeypatch))), "gpu-persistence-off")
        assert f.severity is Severity.INFO


class TestGpuResetRequired:
    def test_control_recovery_action_none(self, v100):
        assert judged(v100, recovery_action="none") == []

    def test_sibling_the_recorded_gpu_nvml_says_needs_a_reset(self, monkeypatch):
        assert "gpu-reset-required" in ids(check_gpu_health(facts_with(nvml_from("gpu_requires_reset", monkeypatch))))


class TestGpuHealthOk:
    def test_control_a_power_cap_is_not_healthy(self, monkeypatch):
        nv = nvml_from("pcie_v100_healthy", monkeypatch)
        gpu = dataclasses.replace(nv.gpus[0], health=dataclasses.replace(nv.gpus[0].health, power_limit_w=150.0))
        found = check_gpu_health(facts_with(dataclasses.replace(nv, gpus=(gpu,))))
        assert "gpu-health-ok" not in ids(found)

    def test_sibling_the_recorded_healthy_v100(self, monkeypatch):
        assert ids(check_gpu_health(facts_with(nvml_from("pcie_v100_healthy", monkeypatch)))) == ["gpu-health-ok"]


XID_79 = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."
XID_13 = "NVRM: Xid (PCI:0000:cb:00): 13, pid=4412, name=python, Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0)"
NVRM_LOAD = "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023"


def _kernel_log(*lines: str):
    return facts_with(gpu2_facts().nvml, KernelLogFacts("dmesg", xid_events(list(lines)), ()))


class TestGpuXidErrors:
    def test_control_the_drivers_own_load_line_is_no_xid(self):
        assert check_xid_events(_kernel_log(NVRM_LOAD)) == []

    def test_sibling_an_application_fault_is_a_warning(self):
        [f] = check_xid_events(_kernel_log(XID_13))
        assert f.id == "gpu-xid-errors" and f.severity is Severity.WARN

    def test_sibling_fallen_off_the_bus_is_an_error(self):
        [f] = check_xid_events(_kernel_log(NVRM_LOAD, XID_79))
        assert f.id == "gpu-xid-errors" and f.severity is Severity.ERROR and "Xid 79" in f.title


class TestKernelLogUnreadable:
    def test_control_a_readable_log_without_xids(self):
        assert check_xid_events(_kernel_log()) == []

    def test_sibling_dmesg_refused(self):
        [f] = check_xid_events(facts_with(gpu2_facts().nvml, Unavailable("dmesg: Operation not permitted")))
        assert f.id == "kernel-log-unreadable" and f.severity is Severity.INFO


# -- the fleet


class TestFleetConsistent:
    def test_control_one_node_with_another_nccl_is_not_consistent(self):
        odd = vary(gpu2_facts(), "torch.nccl", "2.21.5")
        assert "fleet-consistent" not in ids(check_fleet(fleet(gpu2_facts(), odd)))

    def test_sibling_identical_nodes(self):
        assert ids(check_fleet(fleet(*same(3)))) == ["fleet-consistent"]


class TestFleetNcclMismatch:
    def test_control_hostnames_differ_nothing_else(self):
        assert "fleet-nccl-mismatch" not in ids(check_fleet(fleet(*same(2))))

    def test_sibling_another_nccl(self):
        odd = vary(gpu2_facts(), "torch.nccl", "2.21.5")
        assert by_id(check_fleet(fleet(gpu2_facts(), odd)), "fleet-nccl-mismatch").severity is Severity.ERROR


class TestFleetGpuModelMismatch:
    def test_control_the_same_model_everywhere(self):
        assert "fleet-gpu-model-mismatch" not in ids(check_fleet(fleet(*same(2))))

    def test_sibling_a100s_on_one_node(self):
        odd = vary(vary(gpu2_facts(), "nvml.gpus[0].name", "NVIDIA A100-SXM4-80GB"), "nvml.gpus[1].name", "NVIDIA A100-SXM4-80GB")
        assert "fleet-gpu-model-mismatch" in ids(check_fleet(fleet(gpu2_facts(), odd)))


class TestFleetGpuCountMismatch:
    def test_control_two_gpus_on_each_node(self):
        assert "fleet-gpu-count-mismatch" not in ids(check_fleet(fleet(*same(3))))

    def test_sibling_one_gpu_gone_from_one_node_is_also_fewer_gpus_than_ranks(self):
        from facts_cases import torch_sees

        one = vary(torch_sees(gpu2_facts(), [0]), "nvml.gpus", gpu2_facts().nvml.gpus[:1])
        found = ids(check_fleet(fleet(gpu2_facts(), one)))
        assert "fleet-gpu-count-mismatch" in found and "fleet-gpus-fewer-than-ranks" in found


class TestFleetGpusFewerThanRanks:
    def test_control_as_many_ranks_as_gpus(self):
        assert "fleet-gpus-fewer-than-ranks" not in ids(check_fleet(fleet(*same(2), ranks_per_node=2)))

    def test_sibling_three_ranks_on_two_gpus(self):
        f = by_id(check_fleet(fleet(*same(2), ranks_per_node=3)), "fleet-gpus-fewer-than-ranks")
        assert "3 ranks on 2 GPUs" in f.title


class TestFleetInfinibandMismatch:
    def test_control_the_same_active_port_on_each_node(self):
        nodes = fleet(on_host(gpu2_facts(), "gpu-01"), on_host(gpu2_facts(), "gpu-02"))
        assert "fleet-infiniband-mismatch" not in ids(check_fleet(nodes))

    def test_control_unknown_infiniband_is_not_a_difference(self):
        unknown = vary(gpu2_facts(), "host", HostFacts(hostname="gpu-02", name="gpu-02", infiniband=Unavailable("not read")))
        assert "fleet-infiniband-mismatch" not in ids(check_fleet(fleet(on_host(gpu2_facts(), "gpu-01"), unknown)))

    def test_sibling_a_port_down_on_one_node(self):
        down = InfinibandDevice("mlx5_0", (InfinibandPort(1, "DOWN", "InfiniBand", "10 Gb/sec (4X SDR)"),))
        nodes = fleet(on_host(gpu2_facts(), "gpu-01", ib=(InfinibandDevice("mlx5_0", (ACTIVE,)),)), on_host(gpu2_facts(), "gpu-02", ib=(down,)))
        assert "fleet-infiniband-mismatch" in ids(check_fleet(nodes))


class TestFleetPythonMismatch:
    def test_control_the_same_interpreter(self):
        assert "fleet-python-mismatch" not in ids(check_fleet(fleet(*same(2))))

    def test_sibling_3_10_on_one_node(self):
        odd = vary(gpu2_facts(), "system.python", "3.10.12")
        f = by_id(check_fleet(fleet(gpu2_facts(), odd)), "fleet-python-mismatch")
        assert f.severity is Severity.WARN and "3.10.12" in f.title


class TestFleetShmMismatch:
    def test_control_the_same_size(self):
        assert "fleet-shm-mismatch" not in ids(check_fleet(fleet(*same(2))))

    def test_sibling_a_docker_default_on_one_node_is_said(self):
        odd = vary(gpu2_facts(), "system.shm_total_bytes", 64 << 20)
        assert by_id(check_fleet(fleet(gpu2_facts(), odd)), "fleet-shm-mismatch").severity is Severity.INFO
