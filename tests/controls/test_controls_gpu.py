"""Controls and siblings for the verdicts issue 38 touched, on NVML answers recorded from
public nvidia-smi / NVML output (tests/fixtures/gpu_health/nvml/*.json, each with its
source): the healthy input that looks most like the failure must not get the verdict
(control); the nearest input that needs another verdict gets its own (sibling)."""

from __future__ import annotations

import copy
import dataclasses
import json
import subprocess
import sys
import threading
import types
from pathlib import Path

import pytest

from facts_cases import gpu2_facts, ids, with_env
from recorded_nvml import from_recording, recorded
from gpudoctor import api
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


# --- what one nvidia-smi snapshot shows GPUs doing (checks/gpu_activity.py) -----------------
# Real pastes from the sampled corpus (tests/fixtures/log_sample/dev, each with its thread on
# line 1) and tables written here in nvidia-smi 535's layout, one reading away from them. Each
# goes through the whole `diagnose`: the API, and the CLI for its exit code.

SAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "log_sample" / "dev"

SMI_HEAD = """\
Tue Mar  5 10:12:41 2024
+---------------------------------------------------------------------------------------+
| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |
|-----------------------------------------+----------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |
|                                         |                      |               MIG M. |
|=========================================+======================+======================|
"""
SMI_GPU = """\
|   {i}  NVIDIA A100-SXM4-80GB          On  | 00000000:{bus}:00.0 Off |                    0 |
| N/A   {temp}C    P0             {w}W / 400W |  {used:>5}MiB / 81920MiB |    {util:>3}%      Default |
|                                         |                      |             Disabled |
+-----------------------------------------+----------------------+----------------------+
"""
SMI_PROCESSES = """
+---------------------------------------------------------------------------------------+
| Processes:                                                                            |
|  GPU   GI   CI        PID   Type   Process name                            GPU Memory |
|        ID   ID                                                             Usage      |
|=======================================================================================|
{rows}+---------------------------------------------------------------------------------------+
"""
SMI_PROCESS = "|    {gpu}   N/A  N/A    {pid:>7}      C   {name:<40}{mib:>7}MiB |\n"
BUSES = ("07", "0B", "48", "4C")


def smi(rows: list[tuple[int, int, int]], processes: list[tuple[int, int, str, int]] | None = None, none_found: bool = False) -> str:
    """A table of A100-80GB GPUs, one (util %, watts, MiB used) per GPU; then its process list
    (gpu, pid, name, MiB), or "No running processes found"."""
    text = SMI_HEAD + "".join(
        SMI_GPU.format(i=i, bus=BUSES[i], temp=33 + util // 4, w=w, used=used, util=util) for i, (util, w, used) in enumerate(rows)
    )
    if processes is not None or none_found:
        body = "".join(SMI_PROCESS.format(gpu=g, pid=p, name=n, mib=m) for g, p, n, m in processes or [])
        text += SMI_PROCESSES.format(rows=body or "|  No running processes found                                                           |\n")
    return text


def sample(case_id: str) -> str:
    return (SAMPLE / f"{case_id}.log").read_text(encoding="utf-8")


def diagnosed(text: str) -> dict[str, object]:
    """api.diagnose of a paste: finding id -> the finding (the last of an id)."""
    return {f.id: f for f in api.diagnose(text).findings}


def cli_exit(text: str, tmp_path) -> tuple[int, dict]:
    """`gpudoctor diagnose FILE --json`'s exit code and answer, computed in this process
    (the same report and report_exit the CLI uses; TestSnapshotCliExit runs the CLI itself
    on a control and a sibling, so the dozens of readings here need no process each)."""
    from gpudoctor.core.exit_code import report_exit

    path = tmp_path / "paste.txt"
    path.write_text(text, encoding="utf-8")
    report = api.diagnose(path=path)
    return int(report_exit(report)), json.loads(json.dumps(report.to_dict(), default=str))


def cli_exit_in_a_process(text: str, tmp_path) -> tuple[int, dict]:
    """`gpudoctor diagnose FILE --json` in its own process: its exit code and its answer."""
    path = tmp_path / "paste.txt"
    path.write_text(text, encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "gpudoctor", "diagnose", str(path), "--json"],
                         capture_output=True, text=True, timeout=120)
    return run.returncode, json.loads(run.stdout)


class TestSnapshotCliExit:
    """The CLI in its own process agrees with cli_exit on a snapshot's two answers."""

    verdict = "gpu-collective-spin"

    def test_control_a_snapshot_with_no_fault_exits_1_undecided(self, tmp_path):
        text = sample("deepspeed-6524-nvidia-smi-h100-100pct-stuck").replace(" 116W / 700W", " 600W / 700W").replace(" 121W / 700W", " 610W / 700W")
        code, answer = cli_exit_in_a_process(text, tmp_path)
        loud = {f["id"] for f in answer["findings"] if f["severity"] in ("warn", "error")}
        assert code == 1 and answer["ok"] is False and loud == {"log-inconclusive"}
        assert cli_exit(text, tmp_path)[0] == code

    def test_sibling_ranks_spinning_exit_1_with_the_reading(self, tmp_path):
        text = sample("deepspeed-6524-nvidia-smi-h100-100pct-stuck")
        code, answer = cli_exit_in_a_process(text, tmp_path)
        assert code == 1 and "gpu-collective-spin" in {f["id"] for f in answer["findings"]}
        assert cli_exit(text, tmp_path)[0] == 1


def undecided(text: str, tmp_path) -> bool:
    """No fault read in the snapshot: exit 1 all the same, and the snapshot's own verdict
    (log-inconclusive: it shows the GPUs, not the job) the only warning or error."""
    code, answer = cli_exit(text, tmp_path)
    loud = {f["id"] for f in answer["findings"] if f["severity"] in ("warn", "error")}
    return code == 1 and loud == {"log-inconclusive"}


# A reporter's words that the run hangs (zju3dv/LoFTR#278's title, knowledge/said_hang.py), beside a pasted table: with
# them a snapshot's reading of ranks stuck is a warning; one table alone is info (diagA21: one instant does not decide)
HUNG = '# Training stuck on: "initializing ddp: GLOBAL_RANK"\n\n'


class TestGpuCollectiveSpin:
    def test_sibling_h100s_at_100_percent_on_a_sixth_of_their_cap(self, tmp_path):
        # DeepSpeed#6524: training stops; both H100s at 100 % on 116 and 121 W of 700 W
        text = HUNG + sample("deepspeed-6524-nvidia-smi-h100-100pct-stuck")
        f = diagnosed(text)["gpu-collective-spin"]
        assert f.severity is Severity.WARN and f.title.startswith("GPU 0, GPU 1 at 100 % utilisation but drawing only 17 % ")
        assert f.evidence["GPU 0"] == "100 %, 116 W of 700 W, 55217 MiB of 81559 MiB" and "py-spy dump" in f.fix
        code, answer = cli_exit(text, tmp_path)
        assert code == 1 and answer["ok"] is False

    def test_control_the_same_table_alone_is_info_and_undecided(self, tmp_path):
        f = diagnosed(sample("deepspeed-6524-nvidia-smi-h100-100pct-stuck"))["gpu-collective-spin"]
        assert f.severity is Severity.INFO and "in one snapshot" in f.title and "sleep 60" in f.fix
        assert undecided(sample("deepspeed-6524-nvidia-smi-h100-100pct-stuck"), tmp_path)

    def test_control_a_training_gpu_at_100_percent_on_80_percent_of_its_cap(self, tmp_path):
        text = smi([(100, 320, 61234), (100, 318, 61230)])
        found = diagnosed(text)
        assert "gpu-collective-spin" not in found and "gpu-rank-idle" not in found
        assert undecided(text, tmp_path)

    def test_sibling_idle_gpus_at_low_power_are_neither_spinning_nor_a_rank_gone(self, tmp_path):
        text = smi([(0, 61, 4308), (0, 60, 4332)])  # DeepSpeed#2816's shape: loaded, idle
        found = diagnosed(text)
        assert not {"gpu-collective-spin", "gpu-rank-idle", "gpu-unused"} & set(found)
        assert undecided(text, tmp_path)

    def test_sibling_a_third_of_the_cap_is_info_that_says_it_does_not_decide(self, tmp_path):
        # Lightning#2065: GTX 1080 Ti training at 100 % on 79-90 W of 250 W (the thread: slow, not hung)
        text = sample("lightning-2065-nvidia-smi-1080ti-full-util")
        f = diagnosed(text)["gpu-collective-spin"]
        assert f.severity is Severity.INFO and "32-36 %" in f.title and "does not tell them apart" in f.why
        assert undecided(text, tmp_path)


SMI_Q = """\
GPU 00000000:53:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    FB Memory Usage
        Total                             : 81559 MiB
        Used                              : 55217 MiB
    Utilization
        Gpu                               : 100 %
        Memory                            : {mem_util} %
    GPU Power Readings
        Power Draw                        : {watts} W
        Current Power Limit               : 700.00 W
        Default Power Limit               : 700.00 W
"""


class TestGpuCollectiveSpinSmallCard:
    verdict = "gpu-collective-spin"  # a card whose idle draw is a large share of its cap

    def test_sibling_t4s_at_100_percent_on_59_percent_of_70_w_is_info(self, tmp_path):
        # accelerate#233: stuck at the start, the T4s at 100 % on 40-41 W of 70 W: not decided by this alone
        text = sample("accelerate-233-nvidia-smi-t4-100pct-stuck-start")
        f = diagnosed(text)["gpu-collective-spin"]
        assert f.severity is Severity.INFO and "57-59 %" in f.title and "py-spy dump" in f.fix
        assert undecided(text, tmp_path)

    def test_control_t4s_training_at_their_cap(self):
        text = sample("accelerate-233-nvidia-smi-t4-100pct-stuck-start").replace("41W /  70W", "70W /  70W").replace("40W /  70W", "69W /  70W")
        assert "gpu-collective-spin" not in diagnosed(text)


class TestGpuCollectiveSpinReport:
    verdict = "gpu-collective-spin"  # the same reading from `nvidia-smi -q`

    def test_sibling_the_q_report_of_a_spinning_h100(self, tmp_path):
        text = HUNG + SMI_Q.format(mem_util=0, watts="116.32")
        f = diagnosed(text)["gpu-collective-spin"]
        assert f.severity is Severity.WARN and f.evidence["GPU 00000000:53:00.0"] == "100 %, 116.32 W of 700 W, 55217 MiB of 81559 MiB"
        assert cli_exit(text, tmp_path)[0] == 1

    def test_control_the_q_report_of_a_training_h100(self, tmp_path):
        text = SMI_Q.format(mem_util=38, watts="612.80")
        assert "gpu-collective-spin" not in diagnosed(text)
        assert undecided(text, tmp_path)


class TestGpuRankIdle:
    def test_sibling_one_v100_at_100_percent_the_other_at_0_with_the_same_memory(self, tmp_path):
        # DeepSpeed#2069: after the script freezes, GPU 0 at 100 % and GPU 1 at 0 %, both ~4.9 GB
        text = HUNG + sample("deepspeed-2069-nvidia-smi-frozen-one-gpu-busy")
        f = diagnosed(text)["gpu-rank-idle"]
        assert f.severity is Severity.WARN and f.title.startswith("GPU 1 holds the same memory as GPU 0 (one job) but is idle")
        assert f.evidence["GPU 1"] == "0 %, 58 W of 300 W, 4860 MiB of 32510 MiB" and "hang" in f.why
        assert cli_exit(text, tmp_path)[0] == 1

    def test_control_every_rank_busy_with_the_same_memory(self):
        assert "gpu-rank-idle" not in diagnosed(smi([(97, 330, 40112), (95, 326, 40098)]))

    def test_control_cards_at_0_percent_that_draw_their_cap_compute(self, tmp_path):
        # heldout12's xstead/ethereum-miner-monitor#5: four GTX 1070s mining, 98-101 W of 100 W and 2.5 GB each,
        # GPU-Util 100 % on GPU 0 and 0 % on the others (a sample): the power says every card works
        text = (SAMPLE.parent / "heldout12" / "ethereum-miner-monitor-5-nvidia-smi-one-gpu-util.log").read_text(encoding="utf-8")
        assert "gpu-rank-idle" not in diagnosed(text)
        code, answer = cli_exit(text, tmp_path)
        assert code == 1 and answer["findings"][0]["id"] == "log-inconclusive"  # not decided, no fault asserted

    def test_sibling_the_same_table_with_the_idle_card_at_idle_draw(self):
        # the nearest rank gone idle: the same memory, 0 %, and 62 of 400 W (what an A100 draws idle)
        found = diagnosed(HUNG + smi([(100, 330, 30112), (0, 62, 30090)]))
        assert found["gpu-rank-idle"].severity is Severity.WARN

    def test_control_the_same_table_alone_is_info(self):
        found = diagnosed(smi([(100, 330, 30112), (0, 62, 30090)]))
        assert found["gpu-rank-idle"].severity is Severity.INFO and "one reading does not decide" in found["gpu-rank-idle"].title

    def test_control_an_idle_gpu_holding_another_jobs_memory(self):
        # GPU 1 holds 2 GB (another, idle notebook), GPU 0 trains with 40 GB: not one job
        found = diagnosed(smi([(98, 335, 40112), (0, 62, 2048)]))
        assert "gpu-rank-idle" not in found and "gpu-unused" not in found


class TestGpuUnused:
    def test_sibling_one_gpu_works_the_other_holds_nothing(self, tmp_path):
        # DeepSpeed#721: StyleGAN2 uses GPU 0 (70 %, 12.8 GB); GPU 1 at 0 % holds 3 MiB
        text = sample("deepspeed-721-nvidia-smi-second-v100-idle")
        f = diagnosed(text)["gpu-unused"]
        assert f.severity is Severity.INFO and f.title == "Only GPU 0 of the 2 GPUs shown works; GPU 1 holds no memory (no process uses it)"
        assert "torchrun --nproc_per_node 2" in f.fix and "meant for one GPU" in f.why
        assert undecided(text, tmp_path)  # one job on one GPU by design looks the same

    def test_control_both_gpus_work(self):
        assert "gpu-unused" not in diagnosed(smi([(91, 301, 30112), (88, 297, 30090)]))

    def test_control_an_idle_gpu_with_the_jobs_memory_is_a_rank_not_an_unused_gpu(self):
        found = diagnosed(smi([(100, 330, 30112), (0, 70, 30090)]))
        assert "gpu-unused" not in found and "gpu-rank-idle" in found


class TestGpuMemoryUneven:
    def test_sibling_the_first_v100_full_the_second_at_half(self, tmp_path):
        # transformers#13986: `python train.py` on 2 GPUs (DataParallel): 32.2 GB on GPU 5, 16.1 GB on GPU 6
        text = sample("transformers-13986-nvidia-smi-uneven-memory")
        f = diagnosed(text)["gpu-memory-uneven"]
        assert f.severity is Severity.WARN and f.title.startswith("GPU 5 is full (32212 of 32510 MiB) while GPU 6")
        assert "DataParallel" in f.why and f.fix.startswith("torchrun --nproc_per_node")
        assert cli_exit(text, tmp_path)[0] == 1

    def test_control_ddp_ranks_hold_the_same_memory(self, tmp_path):
        text = smi([(100, 390, 79012), (100, 388, 79001), (99, 385, 78990), (100, 391, 79020)])
        assert "gpu-memory-uneven" not in diagnosed(text)
        assert undecided(text, tmp_path)

    def test_sibling_uneven_but_with_room_is_info(self, tmp_path):
        text = smi([(100, 330, 40112), (100, 326, 20098)])
        f = diagnosed(text)["gpu-memory-uneven"]
        assert f.severity is Severity.INFO and f.title.startswith("GPU 0 holds 2.0x the memory of GPU 1")
        assert undecided(text, tmp_path)


class TestGpuMemoryWithoutProcess:
    def test_sibling_processes_nvidia_smi_cannot_name_hold_memory(self, tmp_path):
        # the shape of apache/mxnet#4242: killed trainers listed as "Unknown Error", still holding memory
        text = smi([(0, 64, 5371), (97, 330, 20112)], [(0, 31794, "Unknown Error", 5371), (1, 7653, "python", 20110)])
        f = diagnosed(text)["gpu-memory-without-process"]
        assert f.severity is Severity.WARN and f.title == "Processes nvidia-smi cannot name (Unknown Error) hold memory on GPU 0"
        assert f.evidence["GPU 0"] == ["pid 31794: Unknown Error, 5371 MiB"] and "zombie" in f.why and "fuser" in f.fix
        assert cli_exit(text, tmp_path)[0] == 1

    def test_sibling_memory_on_a_gpu_the_list_shows_no_process_for(self):
        text = smi([(97, 330, 20112), (0, 62, 18020)], [(0, 4411, "python train.py", 20110)])
        f = diagnosed(text)["gpu-memory-without-process"]
        assert f.severity is Severity.WARN and f.title == "GPU 1 holds memory that no listed process holds"

    def test_control_every_gpus_memory_has_its_process(self, tmp_path):
        text = smi([(97, 330, 20112), (96, 328, 20110)], [(0, 4411, "python", 20110), (1, 4412, "python", 20108)])
        assert "gpu-memory-without-process" not in diagnosed(text)
        assert undecided(text, tmp_path)

    def test_control_a_table_cut_before_its_process_list_is_not_judged(self):
        assert "gpu-memory-without-process" not in diagnosed(smi([(0, 64, 797), (0, 62, 773)]))

    def test_sibling_no_running_processes_found_does_not_decide(self, tmp_path):
        # Ray#32725's shape: ~800 MiB held on idle GPUs; in a container the list hides every process
        text = smi([(0, 64, 797), (0, 62, 773)], none_found=True)
        f = diagnosed(text)["gpu-memory-without-process"]
        assert f.severity is Severity.INFO and f.title == "nvidia-smi lists no process, yet GPU 0, GPU 1 hold memory"
        assert undecided(text, tmp_path)


class TestGpuReadingFailedRow:
    verdict = "gpu-reading-failed"  # a whole row of ERR! against one field

    ROW = """\
+-------------------------------+----------------------+----------------------+
|   7  NVIDIA A100 80G...  On   | 00000000:D6:00.0 Off |                 ERR! |
|{row}|      0MiB / 80994MiB |    ERR!      Default |
|                               |                      |                 ERR! |
+-------------------------------+----------------------+----------------------+
"""

    def test_sibling_err_across_the_row_is_a_warning_and_not_healthy(self, tmp_path):
        # NVIDIA/dcgm-exporter#46: GPU 7's row, ERR! in fan, temperature, performance and utilisation
        text = self.ROW.format(row="ERR!  ERR! ERR!      1W /  N/A ")
        f = diagnosed(text)["gpu-reading-failed"]
        assert f.severity is Severity.WARN and f.evidence["ERR!"] == ["fan", "temperature", "performance state", "utilisation"]
        assert cli_exit(text, tmp_path)[0] == 1

    def test_control_one_field_read_err(self, tmp_path):
        text = self.ROW.format(row=" 35%   41C    P0   ERR! /  300W ").replace("ERR!      Default", "  0%      Default")
        f = diagnosed(text)["gpu-reading-failed"]
        assert f.severity is Severity.INFO and f.evidence["ERR!"] == ["power draw"]
        assert undecided(text, tmp_path)


class TestGpuRowRemapPendingPasted:
    verdict = "gpu-row-remap-pending"  # the hardware warning `check` gives, in a pasted snapshot

    REMAP = """\
GPU 00000000:07:00.0
    Product Name                          : NVIDIA A100-SXM4-80GB
    Remapped Rows
        Correctable Error                 : 0
        Uncorrectable Error               : {unc}
        Pending                           : {pending}
        Remapping Failure Occurred        : No
"""

    def test_sibling_a_pasted_remap_waiting_for_a_reset_is_not_healthy(self, tmp_path):
        text = self.REMAP.format(unc=2, pending="Yes")
        assert diagnosed(text)["gpu-row-remap-pending"].severity is Severity.WARN
        code, answer = cli_exit(text, tmp_path)
        assert code == 1 and answer["ok"] is False

    def test_control_rows_remapped_and_applied_are_healthy(self, tmp_path):
        text = self.REMAP.format(unc=2, pending="No")
        assert "gpu-row-remap-pending" not in diagnosed(text)
        assert undecided(text, tmp_path)

    def test_control_check_keeps_a_hardware_warning_at_exit_0(self):
        # the same warning from `check` on a live node: a warning, not a failed check
        from gpudoctor.catalog.findings.gpu_health import GPU_ROW_REMAP_PENDING
        from gpudoctor.core.findings import Report

        f = GPU_ROW_REMAP_PENDING(evidence={"GPU 0": "pending"}, gpus="GPU 0")
        assert Report("check", (f,)).ok and not Report("diagnose", (f,)).ok


# gpustat -P (the same readings as nvidia-smi's table, one line per GPU; its MB are MiB)
GPUSTAT = """\
node17               Tue Jul  5 16:37:34 2022  450.102.04
[0] Tesla V100-SXM2-32GB | 44'C, {u0:>3} %, {w0:>3} / 300 W |  4890 / 32510 MB | alice(4880M)
[1] Tesla V100-SXM2-32GB | 36'C, {u1:>3} %, {w1:>3} / 300 W |  4860 / 32510 MB | {owner1}(4850M)
"""


class TestGpuRankIdleGpustat:
    verdict = "gpu-rank-idle"  # the same reading from gpustat, whose process list names the owner

    def test_sibling_gpustat_one_rank_spinning_the_other_idle(self, tmp_path):
        text = HUNG + GPUSTAT.format(u0=100, w0=71, u1=0, w1=58, owner1="alice")
        found = diagnosed(text)
        assert found["gpu-rank-idle"].severity is Severity.WARN and found["gpu-collective-spin"].severity is Severity.WARN
        assert cli_exit(text, tmp_path)[0] == 1

    def test_control_the_idle_gpu_is_another_users(self, tmp_path):
        text = GPUSTAT.format(u0=98, w0=281, u1=0, w1=58, owner1="bob")
        assert "gpu-rank-idle" not in diagnosed(text)
        assert undecided(text, tmp_path)


class TestGpuProcessOnEveryGpu:
    def test_sibling_every_ddp_rank_holds_a_context_on_every_gpu(self, tmp_path):
        procs = [(0, 4411, "python", 20110), (0, 4412, "python", 503), (1, 4412, "python", 20108), (1, 4411, "python", 503)]
        text = smi([(97, 330, 20613), (96, 328, 20611)], procs)
        f = diagnosed(text)["gpu-process-on-every-gpu"]
        assert f.severity is Severity.WARN and "2 entries, up to 503 MiB" in f.title and f.fix.startswith("torch.cuda.set_device(local_rank)")
        assert cli_exit(text, tmp_path)[0] == 1

    def test_sibling_gpustat_entries_with_no_memory_yet(self, tmp_path):
        # Lightning#4828: each of 6 ddp processes also listed with 0 MiB on every other GPU
        text = sample("lightning-4828-gpustat-every-process-on-every-gpu")
        f = diagnosed(text)["gpu-process-on-every-gpu"]
        assert f.severity is Severity.WARN and "35 entries with 0 MiB" in f.title and "no memory yet" in f.why
        assert "gpu-rank-idle" not in diagnosed(text)  # GPU 6, idle, is another user's (aaa)
        assert cli_exit(text, tmp_path)[0] == 1

    def test_control_dataparallel_is_one_process_on_every_gpu(self):
        text = smi([(97, 330, 20613), (96, 328, 12611)], [(0, 4411, "python", 20610), (1, 4411, "python", 12608)])
        assert "gpu-process-on-every-gpu" not in diagnosed(text)

    def test_control_each_ddp_rank_on_its_own_gpu(self):
        text = smi([(97, 330, 20613), (96, 328, 20611)], [(0, 4411, "python", 20610), (1, 4412, "python", 20608)])
        assert "gpu-process-on-every-gpu" not in diagnosed(text)


DCGM_DIAG = """\
$ dcgmi diag -r 2
Successfully ran diagnostic for group.
+---------------------------+------------------------------------------------+
| Diagnostic                | Result                                         |
+===========================+================================================+
|-----  Deployment  --------+------------------------------------------------|
| Denylist                  | Pass                                           |
| NVML Library              | Pass                                           |
| Persistence Mode          | Pass                                           |
| Page Retirement/Row Remap | {remap:<47}|
{warning}+-----  Integration  -------+------------------------------------------------+
| PCIe                      | Pass - All                                     |
+-----  Hardware  ----------+------------------------------------------------+
| GPU Memory                | {memory:<47}|
+---------------------------+------------------------------------------------+
"""
DCGM_WARNING = """\
| Warning                   | GPU 3 had uncorrectable memory errors and row  |
|                           | remapping failed.                              |
"""
DCGM_HEALTH = """\
+---------------------------+----------------------------------------------------------+
| Health Monitor Report                                                                |
+===========================+==========================================================+
| Overall Health            | Warning                                                  |
| GPU ID: 0                 | Warning                                                  |
|                           | PCIe system: Warning - Detected more than 8 PCIe replays |
+---------------------------+----------------------------------------------------------+
"""


class TestGpuDcgmFailed:
    def test_sibling_a_failed_dcgmi_diag_test_is_an_error(self, tmp_path):
        text = DCGM_DIAG.format(remap="Fail", warning=DCGM_WARNING, memory="Fail - GPU: 3")
        f = diagnosed(text)["gpu-dcgm-failed"]
        assert f.severity is Severity.ERROR and f.title == "dcgmi diag failed on this node: Page Retirement/Row Remap; GPU Memory"
        assert f.evidence["warnings"] == ["GPU 3 had uncorrectable memory errors and row remapping failed."]
        assert cli_exit(text, tmp_path)[0] == 1

    def test_control_every_test_passed_is_no_gpu_fault(self, tmp_path):
        # the GPUs passed their diagnostics: no fault, though the job itself is not shown
        text = DCGM_DIAG.format(remap="Pass", warning="", memory="Pass - All")
        assert "gpu-dcgm-failed" not in diagnosed(text)
        assert undecided(text, tmp_path)

    def test_sibling_dcgmi_health_warning_is_a_warning_and_not_healthy(self, tmp_path):
        f = diagnosed(DCGM_HEALTH)["gpu-dcgm-failed"]
        assert f.severity is Severity.WARN and f.title.startswith("dcgmi health reports Warning: GPU ID")
        assert cli_exit(DCGM_HEALTH, tmp_path)[0] == 1
