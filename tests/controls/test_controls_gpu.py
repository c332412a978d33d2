"""Controls and siblings for the verdicts issue 38 touched, on NVML answers recorded from
public nvidia-smi / NVML output (tests/fixtures/gpu_health/nvml/*.json, each with its
source): the healthy input that looks most like the failure must not get the verdict
(control); the nearest input that needs another verdict gets its own (sibling)."""

from __future__ import annotations

import copy
import dataclasses
import sys
import threading
import types

import pytest

from facts_cases import gpu2_facts, ids, with_env
from recorded_nvml import from_recording, recorded
from gpudoctor.checks.gpu_health import check_gpu_health, health_summary
from gpudoctor.checks.gpus import check_mig
from gpudoctor.commands.allreduce.bandwidth import make_row, summarize
from gpudoctor.commands.allreduce.verify import check_link_speed
from gpudoctor.commands.train_smoke.config import SmokeConfig
from gpudoctor.commands.train_smoke.options import Options, check_options
from gpudoctor.core.unavailable import Unavailable
from gpudoctor.core.usage import UsageError
from gpudoctor.checks.visibility import check_device_order, check_visible_devices, device_map, mapping_lines
from gpudoctor.core.findings import Severity
from gpudoctor.probe.facts import Facts
from gpudoctor.probe.links import LinkFacts
from gpudoctor.probe.nvml import LOST, NOT_PERMITTED, NvmlFacts, probe_nvml
from gpudoctor.probe.torch_info import TorchDevice


def nvml(monkeypatch, name: str, edit=None) -> NvmlFacts:
    """NVML's facts as gpudoctor's probe reads them from a recording (edit: a change to
    the recording's data, for a control or sibling one fact away from it)."""
    module = recorded(name)
    if edit is not None:
        data = copy.deepcopy(module.recording)
        edit(data)
        module = from_recording(data)
    monkeypatch.setitem(sys.modules, "pynvml", module)
    return probe_nvml()


def facts(nv: NvmlFacts, devices=None, visible_devices=None) -> Facts:
    base = dataclasses.replace(gpu2_facts(), nvml=nv)
    if devices is not None:
        base = dataclasses.replace(base, torch=dataclasses.replace(base.torch, devices=tuple(devices), device_count=len(devices)))
    return with_env(base, CUDA_VISIBLE_DEVICES=visible_devices)


def severe(found) -> list[str]:
    return sorted(f.id for f in found if f.severity in (Severity.WARN, Severity.ERROR))


# --- 1. a GPU NVML counts but cannot open ---------------------------------------


class TestGpuLost:
    def test_sibling_lost_gpu_is_an_error_in_live_check(self, monkeypatch):
        nv = nvml(monkeypatch, "gpu_lost_unknown_error")
        assert nv.device_count == 2 and [g.index for g in nv.gpus] == [0]
        [u] = nv.unreachable
        assert (u.index, u.kind, u.reason) == (1, LOST, "Unknown Error")
        [f] = [f for f in check_gpu_health(facts(nv)) if f.id == "gpu-lost"]
        assert f.severity is Severity.ERROR and "GPU 1 (Unknown Error)" in f.title
        assert f.evidence["GPU 1"] == "nvmlDeviceGetHandleByIndex(1): Unknown Error" and f.fix.startswith("sudo dmesg")
        assert "gpu-health-ok" not in ids(check_gpu_health(facts(nv)))
        cell, worst = health_summary(facts(nv))
        assert cell == "lost (GPU 1)" and worst is Severity.ERROR

    def test_control_every_handle_answers(self, monkeypatch):
        nv = nvml(monkeypatch, "gpu_lost_unknown_error", lambda d: d["gpus"][1].clear())
        assert nv.unreachable == () and "gpu-lost" not in ids(check_gpu_health(facts(nv)))

    def test_control_another_jobs_gpus_are_not_lost(self, monkeypatch):
        nv = nvml(monkeypatch, "cgroup_two_of_four")
        assert [u.kind for u in nv.unreachable] == [NOT_PERMITTED, NOT_PERMITTED]
        assert "gpu-lost" not in ids(check_gpu_health(facts(nv)))

    def test_sibling_index_after_the_gap_maps_to_the_lost_gpu(self, monkeypatch):
        # CUDA_VISIBLE_DEVICES=1 names the lost GPU: in range (NVML counts 2), not "out of range: 1 GPU"
        nv = nvml(monkeypatch, "gpu_lost_unknown_error")
        [f] = check_visible_devices(facts(nv, visible_devices="1"))
        assert f.id == "visible-devices" and "cuda:0 = GPU 1" in f.title
        [f] = check_visible_devices(facts(nv, visible_devices="0,2"))
        assert f.id == "visible-devices-invalid" and "this machine has 2 GPUs" in f.title
        assert f.fix.endswith("CUDA_VISIBLE_DEVICES=0,1")
        # torch's cuda:0 without UUID or PCI id: the lost GPU has no NVML record, and no traceback
        rows = device_map(facts(nv, [TorchDevice(0, "?", "?", 0, _none(), _none())], "1"))
        assert rows[0].gpu is None and mapping_lines(rows)[0].startswith("cuda:0 = ? (not matched")


def _none():
    return Unavailable("not reported")


# --- 2. NVLink down only where a link has something to reach --------------------


class TestGpuNvlinkDegraded:
    def test_control_single_h200_vm(self, monkeypatch):
        nv = nvml(monkeypatch, "h200_single_vm")
        [gpu] = nv.gpus
        assert len(gpu.health.nvlinks) == 18 and not any(link.active for link in gpu.health.nvlinks)
        found = check_gpu_health(facts(nv))
        assert severe(found) == [] and found[0].id == "gpu-health-ok"

    def test_sibling_two_h200_with_every_link_down(self, monkeypatch):
        # the same GPU with a second one beside it: its links have a peer to reach, and reach none
        nv = nvml(monkeypatch, "h200_single_vm", lambda d: d["gpus"].append(copy.deepcopy(d["gpus"][0])))
        [f] = [f for f in check_gpu_health(facts(nv)) if f.id == "gpu-nvlink-degraded"]
        assert "every NVLink down (18 links)" in f.evidence[next(iter(f.evidence))]

    def test_sibling_8x_h100_one_link_down(self, monkeypatch):
        nv = nvml(monkeypatch, "h100_8x_one_link_down")
        [f] = [f for f in check_gpu_health(facts(nv)) if f.id == "gpu-nvlink-degraded"]
        assert f.severity is Severity.WARN and list(f.evidence) == ["GPU 3 (NVIDIA H100 80GB HBM3, 0000:5D:00.0)"]
        assert f.evidence["GPU 3 (NVIDIA H100 80GB HBM3, 0000:5D:00.0)"] == "links 5 down, 17 up"

    def test_control_8x_h100_every_link_up(self, monkeypatch):
        nv = nvml(monkeypatch, "h100_8x_one_link_down", _all_links_up)
        assert severe(check_gpu_health(facts(nv))) == []
        # every pair reaches the other through the NVSwitches over all 18 links
        assert len(nv.links) == 28 and {link.nvlinks for link in nv.links} == {18}

    def test_control_links_past_the_parts_own_are_not_probed(self, monkeypatch):
        # pynvml 13's NVML_NVLINK_MAX_LINKS is 36; an H100 has 18 (field 91): links 18-35 are no links
        nv = nvml(monkeypatch, "h100_8x_one_link_down", _links_past_18_inactive)
        assert all(len(g.health.nvlinks) == 18 for g in nv.gpus)
        assert severe(check_gpu_health(facts(nv))) == []


def _all_links_up(data: dict) -> None:
    gpu = data["gpus"][3]
    gpu["nvmlDeviceGetNvLinkState"]["5"] = 1
    gpu["nvmlDeviceGetNvLinkRemoteDeviceType"]["5"] = 2
    gpu["nvmlDeviceGetNvLinkRemotePciInfo"]["5"] = {"busId": "0000:07:00.0"}


def _links_past_18_inactive(data: dict) -> None:
    _all_links_up(data)
    for gpu in data["gpus"]:
        gpu["nvmlDeviceGetNvLinkState"].update({str(link): 0 for link in range(18, 36)})


# --- 3. cgroup-limited devices: another job's GPUs keep their NVML indices ------


def _k80(index: int, bus: str | None) -> TorchDevice:
    return TorchDevice(index, "Tesla K80", "3.7", 11996954624, _none(), bus if bus else _none())


class TestDeviceOrderNotPci:
    def test_control_cgroup_job_gpus_matched_by_pci(self, monkeypatch):
        # CUDA numbers the job's two GPUs 0 and 1; NVML calls them 2 and 3: no renumbering
        nv = nvml(monkeypatch, "cgroup_two_of_four")
        job = facts(nv, [_k80(0, "0000:04:00.0"), _k80(1, "0000:05:00.0")], "0,1")
        assert ids(check_device_order(job)) == ["device-order"]
        [f] = check_visible_devices(job)
        assert f.id == "visible-devices" and "cuda:0 = GPU 2, cuda:1 = GPU 3" in f.title

    def test_control_cgroup_job_without_uuid_or_pci(self, monkeypatch):
        # neither id to match by: the CUDA_VISIBLE_DEVICES order, counted over the job's GPUs
        nv = nvml(monkeypatch, "cgroup_two_of_four")
        job = facts(nv, [_k80(0, None), _k80(1, None)], "0,1")
        rows = device_map(job)
        assert [(r.torch_index, r.gpu.index if r.gpu else None, r.matched_by) for r in rows] == [
            (0, 2, "CUDA_VISIBLE_DEVICES order"), (1, 3, "CUDA_VISIBLE_DEVICES order")]
        assert ids(check_device_order(job)) == ["device-order"]

    def test_sibling_cgroup_job_renumbered(self, monkeypatch):
        # the same job where CUDA put the second GPU first: that is the finding
        nv = nvml(monkeypatch, "cgroup_two_of_four")
        job = facts(nv, [_k80(0, "0000:05:00.0"), _k80(1, "0000:04:00.0")], "0,1")
        [f] = check_device_order(job)
        assert f.id == "device-order-not-pci" and "cuda:0 is GPU 3, not GPU 2" in f.title

    def test_sibling_index_past_the_jobs_gpus(self, monkeypatch):
        nv = nvml(monkeypatch, "cgroup_two_of_four")
        [f] = check_visible_devices(facts(nv, visible_devices="2"))
        assert f.id == "visible-devices-invalid"
        assert "this process may use 2 GPUs (NVML counts 4; the others are another job's)" in f.title
        assert f.fix.endswith("CUDA_VISIBLE_DEVICES=0,1")


# --- 4/5. a run against a published figure: the same shape, the same statistic --


def _gpus(name: str, n: int, kind: str = "nvlink") -> LinkFacts:
    return LinkFacts((name,) * n, 1, kind, 18 if kind == "nvlink" else 0, ("NODE",), ("ok",))


def _summary(per_rank_us: list[list[float]], nbytes: int = 1 << 30) -> dict:
    world = len(per_rank_us)
    row = make_row("all_reduce", nbytes, nbytes // 4, "float32", world, [0] * world, per_rank_us)
    return summarize([row], 1)


def _published(found) -> tuple[str, object]:
    [f] = found
    return f.severity.name, f.evidence.get("share of published", f.evidence.get("published busbw"))


# 1 GiB across 8 ranks: busbw = 2**30 / t * 1.75; 4.37 ms is 430 GB/s
STEADY_8 = [[4370.0] * 20 for _ in range(8)]


class TestAllreduceLinkSpeed:
    def test_control_gh200_is_not_an_h200(self):
        # the H200 row must not judge Grace Hopper: no published figure for that shape
        severity, published = _published(check_link_speed(_summary(STEADY_8), 8, _gpus("NVIDIA GH200 480GB", 8)))
        assert severity == "OK" and str(published).startswith("no published figure for this shape (8x NVIDIA GH200")

    def test_sibling_8x_h200_gets_its_published_share(self):
        [f] = check_link_speed(_summary(STEADY_8), 8, _gpus("NVIDIA H200", 8))
        assert f.evidence["source"] == "https://github.com/NVIDIA/nccl-tests/issues/272"
        assert f.evidence["share of published"] == 0.91 and "NCCL 2.20.3" in f.evidence["conditions"]

    def test_sibling_2x_h100_sxm_has_a_row(self):
        two = [[2900.0] * 20, [2900.0] * 20]  # 2**30 / 2.9 ms = 370 GB/s busbw on 2 ranks
        [f] = check_link_speed(_summary(two), 2, _gpus("NVIDIA H100 80GB HBM3", 2))
        assert f.severity is Severity.OK and "of what 2x H100 SXM over NVLink 4 (NVSwitch) reaches (370 GB/s" in f.title
        assert f.evidence["source"] == "https://github.com/NVIDIA/nccl/issues/1442"

    def test_control_h100_pcie_pair_has_no_row(self):
        # the old 116 GB/s row came from a thread calling it low: removed, so nothing is claimed
        two = [[9300.0] * 20, [9300.0] * 20]
        severity, published = _published(check_link_speed(_summary(two), 2, _gpus("NVIDIA H100 PCIe", 2)))
        assert severity == "OK" and str(published).startswith("no published figure")

    def test_control_steady_run_median_and_mean_agree(self):
        [f] = check_link_speed(_summary(STEADY_8), 8, _gpus("NVIDIA H100 80GB HBM3", 8))
        assert f.severity is Severity.OK and f.evidence["busbw compared (GB/s)"] == _summary(STEADY_8)["peak_busbw_gbps"]

    def test_sibling_slow_iterations_count_as_nccl_tests_counts_them(self):
        # most iterations at 430 GB/s, a quarter at 10x the time: the median says 90 %, the
        # loop mean nccl-tests reports (and the published 480 is) says 27 %: a warning
        jittery = [[4370.0] * 15 + [43700.0] * 5 for _ in range(8)]
        summary = _summary(jittery)
        assert summary["peak_busbw_gbps"] > 400 and summary["peak_busbw_mean_gbps"] < 140
        [f] = check_link_speed(summary, 8, _gpus("NVIDIA H100 80GB HBM3", 8))
        assert f.severity is Severity.WARN and f.title.startswith(f"busbw {summary['peak_busbw_mean_gbps']:.1f} GB/s is 2")
        assert f.evidence["statistic"] == "nccl-tests busbw: the timed loop's mean time, averaged over the ranks"


# --- 6. train-smoke --compare-dp: a batch the dataset can fill, the same work --------


class TestCompareDpBatch:
    verdict = "ddp-vs-dp"  # the comparison it guards: refused up front rather than looping

    def test_sibling_global_batch_past_the_dataset_is_refused(self):
        with pytest.raises(UsageError) as refused:
            check_options(Options(nproc=2, batch_size=4096, compare_dp=True))
        assert str(refused.value) == (
            "--compare-dp with --batch-size 4096 x 2 ranks: a global batch of 8192 is more than the 4096 samples of "
            "the smoke dataset: DataParallel's loader drops the incomplete batch and has nothing to train on; "
            "use --batch-size 2048 or less")

    def test_control_global_batch_the_dataset_fills(self):
        assert check_options(Options(nproc=2, batch_size=2048, compare_dp=True)).batch_size == 2048

    def test_control_without_compare_dp_the_batch_is_not_refused(self):
        # the DDP job alone takes an incomplete last batch (no drop_last): it trains
        assert check_options(Options(nproc=2, batch_size=4096)).batch_size == 4096

    def test_sibling_the_dataparallel_job_never_spins_on_an_empty_loader(self):
        # reached past the option check (a config built by hand): a clear error at once, not a loop
        from gpudoctor.commands.train_smoke.dp import run_dp

        done: list = []

        def run() -> None:
            try:
                run_dp(types.SimpleNamespace(progress=lambda *a: None), SmokeConfig(nproc=2, batch_size=4096, steps=5))
            except ValueError as exc:
                done.append(str(exc))

        worker = threading.Thread(target=run, daemon=True)
        worker.start()
        worker.join(60)
        assert done and "has nothing to train on" in done[0]

    def test_sibling_both_arms_take_the_same_step(self):
        # one step function and one autocast/GradScaler choice for DDP and DataParallel
        import inspect

        from gpudoctor.commands.train_smoke import dp, rank

        assert dp.train_step is rank.train_step and dp.amp_setup is rank.amp_setup
        assert "train_step(" in inspect.getsource(rank._train) and "train_step(" in inspect.getsource(dp.run_dp)


# --- 7. clock event reasons on a driver older than 535 ---------------------------


class TestGpuClocksSlowdown:
    def test_control_old_driver_idle_reads_through_the_throttle_call(self, monkeypatch):
        # FunctionNotFound from the new call: the old one answers (Idle), and Idle is no slowdown
        nv = nvml(monkeypatch, "driver_before_535_throttle_idle")
        assert nv.gpus[0].health.clock_events == ("Idle",)
        assert severe(check_gpu_health(facts(nv))) == []

    def test_sibling_old_driver_hw_slowdown_is_seen(self, monkeypatch):
        nv = nvml(monkeypatch, "driver_before_535_throttle_idle",
                  lambda d: d["gpus"][0].__setitem__("nvmlDeviceGetCurrentClocksThrottleReasons", 0x8))
        [f] = [f for f in check_gpu_health(facts(nv)) if f.id == "gpu-clocks-slowdown"]
        assert "HW Slowdown" in f.title

    def test_control_another_error_is_not_hidden_by_the_old_call(self, monkeypatch):
        # NotSupported from the new call is the GPU's answer, not a missing function: no fallback
        nv = nvml(monkeypatch, "driver_before_535_throttle_idle",
                  lambda d: d["gpus"][0].__setitem__("nvmlDeviceGetCurrentClocksEventReasons", {"nvml_error": 3, "text": "Not Supported"}))
        assert nv.gpus[0].health.clock_events == Unavailable("Not Supported")


# --- 8. MIG: a single-GPU job on one instance is what MIG is for -----------------

MIG_INSTANCE = "MIG-4f421ec4-5175-50ef-8452-d6abb13cb1d2"  # the job's instance in the recording's thread


def _a100_slice() -> TorchDevice:
    return TorchDevice(0, "NVIDIA A100-SXM4-40GB MIG 4g.20gb", "8.0", 20937965568, MIG_INSTANCE, _none())


class TestMigEnabled:
    def test_control_slurm_job_on_one_mig_instance(self, monkeypatch):
        nv = nvml(monkeypatch, "mig_one_instance_slurm")
        [f] = check_mig(facts(nv, [_a100_slice()], MIG_INSTANCE))
        assert f.id == "mig-enabled" and f.severity is Severity.INFO
        assert f.evidence["one instance"] == f"CUDA_VISIBLE_DEVICES={MIG_INSTANCE}"
        assert f.fix.startswith("nothing to do for a single-GPU job")

    def test_control_the_one_gpu_of_the_machine(self, monkeypatch):
        # a container handed one slice (CUDA_VISIBLE_DEVICES unset), NVML shows its one GPU
        nv = nvml(monkeypatch, "mig_one_instance_slurm")
        [f] = check_mig(facts(nv, [_a100_slice()]))
        assert f.severity is Severity.INFO

    def test_sibling_two_gpus_torch_sees_both(self, monkeypatch):
        # the same GPU beside a second one, and torch sees two devices: multi-GPU training is in view
        nv = nvml(monkeypatch, "mig_one_instance_slurm", lambda d: d["gpus"].append({"nvmlDeviceGetMigMode": [0, 0]}))
        [f] = check_mig(facts(nv, [_a100_slice(), _a100_slice()]))
        assert f.severity is Severity.WARN and f.fix.startswith("sudo nvidia-smi -i 0 -mig 0")

    def test_sibling_two_instances_named(self, monkeypatch):
        nv = nvml(monkeypatch, "mig_one_instance_slurm")
        two = f"{MIG_INSTANCE},MIG-00000000-0000-0000-0000-000000000001"
        [f] = check_mig(facts(nv, [_a100_slice(), _a100_slice()], two))
        assert f.severity is Severity.WARN


class TestVisibleDevices:
    def test_control_every_gpu_answers(self, monkeypatch):
        nv = nvml(monkeypatch, "gpu_lost_unknown_error", lambda d: d["gpus"][1].clear())
        [f] = check_visible_devices(facts(nv))
        assert f.title == "CUDA_VISIBLE_DEVICES is unset: CUDA sees every GPU (2)"

    def test_sibling_a_lost_gpu_is_not_counted_silently(self, monkeypatch):
        [f] = check_visible_devices(facts(nvml(monkeypatch, "gpu_lost_unknown_error")))
        assert f.title == "CUDA_VISIBLE_DEVICES is unset: CUDA sees every GPU (1; not GPU 1, which NVML cannot reach)"

    def test_sibling_another_jobs_gpus_are_named(self, monkeypatch):
        [f] = check_visible_devices(facts(nvml(monkeypatch, "cgroup_two_of_four")))
        assert f.title == "CUDA_VISIBLE_DEVICES is unset: CUDA sees every GPU (2; NVML counts 2 more GPUs, another job's)"


class TestGpuNvlinkDegradedPasted:
    verdict = "gpu-nvlink-degraded"  # the same verdict, from a pasted nvidia-smi

    """diagnose judges a pasted nvidia-smi by the same rule: every link down is a fault only
    where the paste shows another GPU (or numbers this one past 0)."""

    B200_ALL_DOWN = "GPU {i}: NVIDIA B200 (UUID: GPU-xxx)\nNVML: Unable to retrieve NVLink information as all links are inActive\n"

    def _ids(self, text: str) -> list[str]:
        from gpudoctor.commands.diagnose.nvidia_smi import NvidiaSmiReader

        reader = NvidiaSmiReader()
        reader.feed(text.encode())
        reader.feed(b"")
        return [f.id for f in reader.findings()]

    def test_control_the_one_gpu_of_a_vm(self):
        assert "gpu-nvlink-degraded" not in self._ids(self.B200_ALL_DOWN.format(i=0))

    def test_sibling_gpu_2_of_a_board(self):
        # leptonai/gpud#1085's paste: GPU 2 of a B200 board, every link down
        assert "gpu-nvlink-degraded" in self._ids(self.B200_ALL_DOWN.format(i=2))
