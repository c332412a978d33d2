"""The fleet table: one row per node, differing values marked, equal variables once."""

from __future__ import annotations

from rich.console import Console

from facts_cases import gpu2_facts, vary, with_env
from gpudoctor.checks.fleet import fleet_data, fleet_table
from gpudoctor.checks.node import node_facts
from gpudoctor.render.fleet_table import markdown_fleet, rich_fleet


def nodes():
    a = node_facts(with_env(gpu2_facts(), NCCL_DEBUG="WARN"), "node-1", (0, 1))
    b = node_facts(with_env(vary(gpu2_facts(), "torch.nccl", "2.21.5"), NCCL_DEBUG="WARN", NCCL_IB_DISABLE="1"), "node-2", (2, 3))
    c = node_facts(with_env(gpu2_facts(), NCCL_DEBUG="WARN"), "node-3", (4, 5))
    return [a, b, c]


def test_markdown_marks_the_odd_values():
    [section] = markdown_fleet(fleet_table(nodes()))
    rows = section.splitlines()
    assert rows[2].startswith("| node | ranks | torch | NCCL | driver |")
    assert "NCCL_IB_DISABLE" in rows[2] and "NCCL_DEBUG" not in rows[2]
    node2 = next(r for r in rows if r.startswith("| node-2 "))
    assert "| 2.21.5 * |" in node2 and "| 1 * |" in node2
    assert "| 2.27.5 |" in next(r for r in rows if r.startswith("| node-1 "))
    assert "Same on every node: `NCCL_DEBUG=WARN`" in section


def test_rich_table_shows_every_node():
    console = Console(width=220, record=True)
    console.print(*rich_fleet(fleet_table(nodes())))
    text = console.export_text()
    assert text.count("node-1") == 1 and "node-2" in text and "2.21.5 *" in text
    assert "same on every node: NCCL_DEBUG=WARN" in text


def test_json_names_the_differing_facts():
    data = fleet_data(nodes())
    assert data["differs"] == ["NCCL", "NCCL_IB_DISABLE"]
    assert [n["name"] for n in data["nodes"]] == ["node-1", "node-2", "node-3"]
    assert data["nodes"][1]["nccl"] == "2.21.5" and data["nodes"][1]["ranks"] == [2, 3]


def test_the_node_with_a_sick_gpu_stands_out(monkeypatch):
    """Three nodes; on node-2 the GPUs answer as the GB200 with its power brake asserted
    (NVSentinel#1666, tests/fixtures/gpu_health/nvml/gb200_power_brake.json)."""
    import dataclasses
    import sys

    from recorded_nvml import recorded
    from gpudoctor.probe.kernel_log import KernelLogFacts
    from gpudoctor.probe.nvml import probe_nvml

    monkeypatch.setitem(sys.modules, "pynvml", recorded("pcie_v100_healthy"))
    healthy = dataclasses.replace(gpu2_facts(), nvml=probe_nvml(), kernel_log=KernelLogFacts("dmesg", (), ()))
    monkeypatch.setitem(sys.modules, "pynvml", recorded("gb200_power_brake"))
    sick = dataclasses.replace(healthy, nvml=probe_nvml())
    fleet = [node_facts(f, f"node-{i + 1}", (2 * i, 2 * i + 1)) for i, f in enumerate((healthy, sick, healthy))]
    [section] = markdown_fleet(fleet_table(fleet))
    assert "| GPU health |" in section.splitlines()[2]
    node2 = next(r for r in section.splitlines() if r.startswith("| node-2 "))
    assert "| clocks slowed (GPU 0) * |" in node2
    assert "| ok |" in next(r for r in section.splitlines() if r.startswith("| node-1 "))
    data = fleet_data(fleet)
    assert "GPU health" in data["differs"] and data["nodes"][1]["health_severity"] == "warn"
