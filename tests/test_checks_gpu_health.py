"""GPU health, judged from NVML answers recorded from real devices (tests/recorded_nvml.py
answers as pynvml from tests/fixtures/gpu_health/nvml/*.json) and from the same
devices' pasted nvidia-smi output: one knowledge, two readers."""

from __future__ import annotations

import dataclasses
import json
import sys

import pytest

from facts_cases import gpu2_facts, ids
from recorded_nvml import FIXTURES, recorded
from gpudoctor.checks import run_checks
from gpudoctor.checks.gpu_health import check_gpu_health, check_xid_events, health_findings
from gpudoctor.core.findings import Severity
from gpudoctor.commands.diagnose.nvidia_smi import NvidiaSmiReader
from gpudoctor.knowledge.xid import xid_events
from gpudoctor.core.codec import from_plain, to_plain
from gpudoctor.probe.facts import Facts
from gpudoctor.probe.kernel_log import KernelLogFacts
from gpudoctor.probe.nvml import NOT_SHOWN, GpuHealth, NvLinkHealth, NvmlFacts, probe_nvml
from gpudoctor.core.unavailable import Unavailable

CORPUS = json.loads((FIXTURES.parent / "corpus.json").read_text())["cases"]


def nvml_from(name: str, monkeypatch) -> NvmlFacts:
    monkeypatch.setitem(sys.modules, "pynvml", recorded(name))
    return probe_nvml()


def facts_with(nvml: NvmlFacts, kernel_log=Unavailable("not read")) -> Facts:
    return dataclasses.replace(gpu2_facts(), nvml=nvml, kernel_log=kernel_log)


# (recording, the warn/error ids check must report, any info ids)
RECORDED = [
    ("pcie_v100_healthy", [], []),
    ("a100_row_remap_pending", ["gpu-row-remap-pending"], []),
    ("a100_persistence_off", [], ["gpu-persistence-off"]),
    ("gb200_power_brake", ["gpu-clocks-slowdown"], []),
    ("pcie_idle_gen1", [], []),  # PCIe gen 1 at idle is power saving, x16 of x16 is fine
    ("gpu_requires_reset", ["gpu-reset-required"], []),  # NVML refuses its queries until a reset
]


@pytest.mark.parametrize("name, problems, infos", RECORDED)
def test_recorded_devices(name, problems, infos, monkeypatch):
    found = check_gpu_health(facts_with(nvml_from(name, monkeypatch)))
    assert sorted(f.id for f in found if f.severity in (Severity.WARN, Severity.ERROR)) == problems
    assert sorted(f.id for f in found if f.severity is Severity.INFO) == infos
    if not problems:
        assert found[0].id == "gpu-health-ok"
    for f in found:
        assert f.area == "GPU health" and (f.severity is Severity.OK or (f.fix and f.why))


def test_power_brake_names_the_gpu_and_the_reasons(monkeypatch):
    [f] = check_gpu_health(facts_with(nvml_from("gb200_power_brake", monkeypatch)))
    assert "GPU 0" in f.title and "GPU 1" not in f.title
    assert "HW Power Brake Slowdown" in f.title
    assert "HW Slowdown, HW Power Brake Slowdown" in f.evidence["GPU 0 (NVIDIA GB200, unavailable: Not Supported)"]


def test_a_field_the_gpu_lacks_is_unavailable_with_nvmls_reason(monkeypatch):
    health = nvml_from("pcie_v100_healthy", monkeypatch).gpus[0].health
    assert isinstance(health, GpuHealth)
    assert health.remap_pending == Unavailable("Not Supported")
    assert (health.temperature_c, health.slowdown_c, health.shutdown_c) == (24, 82, 85)
    assert health.power_w == pytest.approx(25.33) and health.power_limit_w == 250.0
    assert health.retired_pending is False and health.retired_double_bit == 0


def test_nvml_and_the_pasted_nvidia_smi_of_one_device_agree(monkeypatch):
    """dcgm-exporter#16: the fixture is the NVML side of the same paste the corpus holds."""
    from_nvml = nvml_from("pcie_v100_healthy", monkeypatch).gpus[0].health
    [case] = [c for c in CORPUS if c["id"] == "dcgm-exporter-16-healthy"]
    reader = NvidiaSmiReader()
    reader.feed(case["text"].encode())
    reader.feed(b"")
    [pasted] = reader.gpus
    from_paste = pasted.health()
    shown_in_both = [
        f.name for f in dataclasses.fields(GpuHealth)
        if getattr(from_paste, f.name) != NOT_SHOWN and not isinstance(getattr(from_nvml, f.name), Unavailable)
    ]
    assert len(shown_in_both) >= 8
    for name in shown_in_both:
        assert getattr(from_paste, name) == getattr(from_nvml, name), name


def test_health_thresholds():
    hot = GpuHealth(temperature_c=80, slowdown_c=82, shutdown_c=90)
    assert ids(health_findings([("GPU 0", hot)])) == ["gpu-temperature-high"]
    assert health_findings([("GPU 0", hot)])[0].severity is Severity.WARN
    assert health_findings([("GPU 0", dataclasses.replace(hot, temperature_c=86))])[0].severity is Severity.ERROR
    assert health_findings([("GPU 0", GpuHealth(temperature_c=60, slowdown_c=82))]) == []
    narrow = GpuHealth(pcie_gen=4, pcie_max_gen=4, pcie_width=8, pcie_max_width=16)
    assert ids(health_findings([("GPU 0", narrow)])) == ["gpu-pcie-link-degraded"]
    capped = GpuHealth(power_w=200.0, power_limit_w=300.0, default_power_limit_w=700.0)
    assert ids(health_findings([("GPU 0", capped)])) == ["gpu-power-capped"]
    links = (NvLinkHealth(0, True, 0, 0), NvLinkHealth(1, False), NvLinkHealth(2, True, 0, 3))
    [f] = health_findings([("GPU 0", GpuHealth(nvlinks=links))])
    assert f.id == "gpu-nvlink-degraded" and "links 1 down" in f.evidence["GPU 0"] and "2 (3)" in f.evidence["GPU 0"]
    no_nvlink = (NvLinkHealth(0, False), NvLinkHealth(1, False))  # a PCIe GPU: nothing up, nothing down
    assert health_findings([("GPU 0 (NVIDIA A100 80GB PCIe, 0:1)", GpuHealth(nvlinks=no_nvlink))]) == []
    [sxm] = health_findings([("GPU 0 (NVIDIA H100 80GB HBM3, 0:1)", GpuHealth(nvlinks=no_nvlink))])  # always NVLinked
    assert "every NVLink down (2 links)" in sxm.evidence["GPU 0 (NVIDIA H100 80GB HBM3, 0:1)"]
    ecc = GpuHealth(ecc_volatile_uncorrected=2, retired_pending=True, remap_pending=True, remap_failure=True)
    assert ids(health_findings([("GPU 0", ecc)])) == ["gpu-ecc-uncorrectable", "gpu-pages-pending-retirement", "gpu-row-remap-failed"]


def test_facts_with_health_and_xids_survive_the_json_round_trip(monkeypatch):
    events = xid_events(CORPUS_LINES)
    facts = facts_with(nvml_from("gb200_power_brake", monkeypatch), KernelLogFacts("dmesg", events, ("x: y",)))
    back = Facts.from_dict(json.loads(json.dumps(facts.to_dict())))
    assert back == facts
    old = facts.to_dict()
    del old["kernel_log"], old["nvml"]["gpus"][0]["health"]  # a snapshot from before health was read
    again = Facts.from_dict(old)
    assert isinstance(again.kernel_log, Unavailable) and isinstance(again.nvml.gpus[0].health, Unavailable)
    assert from_plain(GpuHealth, to_plain(GpuHealth())) == GpuHealth()


CORPUS_LINES = [line for c in CORPUS if c["expected"] == ["nvidia-xid"] for line in c["text"].splitlines()]


def test_xid_findings_from_the_kernel_log():
    events = xid_events(CORPUS_LINES)
    [f] = check_xid_events(facts_with(gpu2_facts().nvml, KernelLogFacts("journalctl -k -b", events, ())))
    assert f.id == "gpu-xid-errors" and f.severity is Severity.ERROR
    assert f.evidence["source"] == "journalctl -k -b"
    assert "Xid 48 on PCI:0000:07:00" in f.evidence and "Double Bit ECC" in f.evidence["Xid 48 on PCI:0000:07:00"]
    assert "Xid 79 on PCI:0000:b3:00.0" in f.evidence  # the three-line "fallen off the bus" without a number
    assert "drain the node" in f.fix and "reset it when idle" in f.fix
    # The worst Xid (79 asks the most) leads: its meaning in the title, what it does in the why, its action first.
    assert f.title.startswith("GPU PCI:0000:b3:00.0 reported Xid 79: GPU has fallen off the bus; also Xid 48 (Double Bit ECC Error) on PCI:0000:07:00, ")
    assert f.why == ("Xid 79, GPU has fallen off the bus: a hardware fault; the rank on that GPU crashes or hangs, "
                     "every other rank times out, and the GPU fails again until it is reseated or replaced.")
    assert f.fix.startswith("drain the node (take it out") and "; Xid 48, 64, 119, 144, 145, 149: stop the jobs on this GPU" in f.fix
    app_only = tuple(e for e in events if e.xid == 13)
    [g] = check_xid_events(facts_with(gpu2_facts().nvml, KernelLogFacts("dmesg", app_only, ())))
    assert g.severity is Severity.WARN and "CUDA_LAUNCH_BLOCKING" in g.fix and g.evidence["Xid 13 on PCI:0000:cb:00"].count("3 time(s)")
    assert g.title == "GPU PCI:0000:cb:00 reported Xid 13: Graphics Engine Exception (often an out-of-range access in a kernel)"
    assert g.why == ("Xid 13, Graphics Engine Exception (often an out-of-range access in a kernel): the program on that GPU "
                     "faulted, so its rank died with a CUDA error and the other ranks wait for it until their timeout; "
                     "the GPU itself is usually fine.")
    assert g.fix.startswith("the job that ran on this GPU faulted") and "Xid 13:" not in g.fix  # one Xid: its action alone
    assert check_xid_events(facts_with(gpu2_facts().nvml, KernelLogFacts("dmesg", (), ()))) == []


def test_an_unreadable_kernel_log_is_said():
    [f] = check_xid_events(facts_with(gpu2_facts().nvml, Unavailable("dmesg: Operation not permitted")))
    assert f.id == "kernel-log-unreadable" and f.severity is Severity.INFO
    assert "Operation not permitted" in f.evidence["tried"]


def test_health_runs_with_every_check_on_an_older_snapshot():
    found = run_checks(gpu2_facts())  # recorded before health existed: no health, no kernel log
    assert "check-failed" not in ids(found)
    assert not any(f.area == "GPU health" for f in found)


def test_the_recovery_action_field_and_the_reset_status_paste():
    health = GpuHealth(recovery_action="drain-and-reset")
    [f] = health_findings([("GPU 3 (NVIDIA H100 80GB HBM3, 0:1)", health)])
    assert f.id == "gpu-reset-required" and "drain the node" in f.fix and "GPU 3" in f.title
    text = "    GPU Reset Status\n        Reset Required                    : Yes\n        Drain and Reset Recommended       : No\n"
    reader = NvidiaSmiReader()
    reader.feed(text.encode())
    reader.feed(b"")
    assert reader.gpus[0].health().recovery_action == "reset"
    assert [f.id for f in reader.findings()] == ["gpu-reset-required"]


def test_the_fleet_cell_names_each_problem_and_its_gpus(monkeypatch):
    from gpudoctor.checks.gpu_health import health_summary

    facts = facts_with(nvml_from("gpu_requires_reset", monkeypatch),
                       KernelLogFacts("dmesg", xid_events(CORPUS_LINES[:1] + ["NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."]), ()))
    cell, severity = health_summary(facts)
    assert cell.startswith("needs a reset (GPU 0)") and cell.endswith("Xid 79") and severity is Severity.ERROR
    assert health_summary(dataclasses.replace(gpu2_facts(), kernel_log=Unavailable("not read"))) is None
