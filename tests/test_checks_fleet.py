"""The fleet comparison on nodes built from the recorded snapshots, each case
one of the skews that hang or slow real multi-node jobs."""

from __future__ import annotations

import pytest

from facts_cases import by_id, cpu_facts, gpu2_facts, ids, torch_sees, vary, visible, with_env
from gpudoctor.checks import run_checks
from gpudoctor.checks.fleet import check_fleet, fleet_columns, fleet_findings
from gpudoctor.checks.fleet_diff import odd_values, rank_ranges, where
from gpudoctor.core.findings import Report, Severity
from gpudoctor.probe.facts import Facts
from gpudoctor.probe.host import HostFacts, InfinibandDevice, InfinibandPort
from gpudoctor.checks.node import NodeFacts, distinct_names, node_facts

ACTIVE = InfinibandPort(1, "ACTIVE", "InfiniBand", "400 Gb/sec (4X NDR)")
DOWN = InfinibandPort(1, "DOWN", "InfiniBand", "10 Gb/sec (4X SDR)")


def on_host(facts: Facts, name: str, ib=(InfinibandDevice("mlx5_0", (ACTIVE,)),)) -> Facts:
    return vary(facts, "host", HostFacts(hostname=name, name=name, infiniband=tuple(ib)))


def fleet(*facts: Facts, ranks_per_node: int = 2) -> list[NodeFacts]:
    """Nodes node-1, node-2, ... from facts, ranks numbered as torchrun numbers them."""
    return [
        node_facts(on_host(f, f"node-{i + 1}") if f.host.__class__ is not HostFacts else f, None,
                   tuple(range(i * ranks_per_node, (i + 1) * ranks_per_node)))
        for i, f in enumerate(facts)
    ]


def same(n: int = 4, facts: Facts | None = None) -> list[Facts]:
    return [facts or gpu2_facts()] * n


def test_identical_nodes_agree():
    findings = check_fleet(fleet(*same()))
    assert ids(findings) == ["fleet-consistent"]
    assert findings[0].severity is Severity.OK and "4 nodes agree" in findings[0].title


def test_different_hostnames_alone_are_fine():
    nodes = fleet(*same(2))
    assert nodes[0].hostname != nodes[1].hostname
    assert ids(check_fleet(nodes)) == ["fleet-consistent"]


def test_one_node_with_another_nccl():
    odd = vary(gpu2_facts(), "torch.nccl", "2.21.5")
    f = by_id(check_fleet(fleet(gpu2_facts(), gpu2_facts(), odd, gpu2_facts())), "fleet-nccl-mismatch")
    assert f.severity is Severity.ERROR
    assert "2.21.5 on ranks 4-5 (node-3)" in f.title and "2.27.5 on the other 3 nodes" in f.title
    assert f.evidence["values"] == {"2.27.5": "ranks 0-3,6-7 (node-1, node-2, node-4)", "2.21.5": "ranks 4-5 (node-3)"}
    assert "nvidia-nccl-cu12==2.27.5" in f.fix and "node-3" in f.fix


def test_one_node_with_another_driver():
    odd = vary(vary(gpu2_facts(), "nvml.driver_version", "535.183.01"), "nvml.cuda_driver_version", "12.2")
    f = by_id(check_fleet(fleet(gpu2_facts(), odd)), "fleet-driver-mismatch")
    assert f.severity is Severity.ERROR
    assert "535.183.01 (CUDA 12.2)" in f.title and "570.124.06" in f.fix


def test_one_node_without_a_driver():
    odd = vary(vary(gpu2_facts(), "nvml.available", False), "nvml.error", "NVML Shared Library Not Found")
    f = by_id(check_fleet(fleet(gpu2_facts(), odd)), "fleet-driver-mismatch")
    assert "none on ranks 2-3 (node-2)" in f.title


def test_one_node_with_another_torch():
    odd = vary(vary(gpu2_facts(), "torch.version", "2.12.1+cu128"), "torch.cuda", "12.8")
    f = by_id(check_fleet(fleet(gpu2_facts(), gpu2_facts(), odd)), "fleet-torch-mismatch")
    assert f.severity is Severity.ERROR
    assert "2.12.1+cu128 (CUDA 12.8) on ranks 4-5 (node-3)" in f.title
    assert f.fix.startswith("pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cu126")


def test_torch_that_does_not_import_on_one_node():
    broken = vary(vary(gpu2_facts(), "torch.status", "import-failed"), "torch.error", "ImportError: libcudart.so.12")
    f = by_id(check_fleet(fleet(gpu2_facts(), broken)), "fleet-torch-mismatch")
    assert "libcudart.so.12" in f.title


def test_fewer_visible_gpus_on_one_node():
    odd = visible(gpu2_facts(), "0", [0])
    findings = check_fleet(fleet(gpu2_facts(), odd))
    count = by_id(findings, "fleet-gpu-count-mismatch")
    assert count.severity is Severity.ERROR and "1 of 2 on ranks 2-3 (node-2)" in count.title
    env = by_id(findings, "fleet-env-mismatch")
    assert env.evidence["fact"] == "CUDA_VISIBLE_DEVICES" and env.severity is Severity.ERROR
    short = by_id(findings, "fleet-gpus-fewer-than-ranks")
    assert "ranks 2-3 (node-2) runs 2 ranks on 1 GPU" in short.title
    assert "--nproc-per-node=1" in short.fix


@pytest.mark.parametrize(
    "a,b,severity",
    [
        ("0,1", "1,0", Severity.WARN),  # the same GPUs, another order
        ("0,1", "0", Severity.ERROR),  # fewer GPUs on one node
        (None, "", Severity.ERROR),  # every GPU against none
    ],
)
def test_visible_devices_differ_on_a_machine_without_gpus(a, b, severity):
    nodes = fleet(with_env(cpu_facts(), CUDA_VISIBLE_DEVICES=a), with_env(cpu_facts(), CUDA_VISIBLE_DEVICES=b))
    f = by_id(check_fleet(nodes), "fleet-env-mismatch")
    assert f.evidence["fact"] == "CUDA_VISIBLE_DEVICES" and f.severity is severity
    assert f"{b or chr(39) * 2} on ranks 2-3 (node-2)" in f.title  # set-but-empty shows as ''


def test_a_gpu_missing_from_one_node():
    one = vary(torch_sees(gpu2_facts(), [0]), "nvml.gpus", gpu2_facts().nvml.gpus[:1])
    f = by_id(check_fleet(fleet(*same(3), one)), "fleet-gpu-count-mismatch")
    assert "1 of 1 on ranks 6-7 (node-4)" in f.title and "2 of 2 on the other 3 nodes" in f.title


def test_another_gpu_model():
    odd = vary(gpu2_facts(), "nvml.gpus[0].name", "NVIDIA A100-SXM4-80GB")
    odd = vary(odd, "nvml.gpus[1].name", "NVIDIA A100-SXM4-80GB")
    f = by_id(check_fleet(fleet(gpu2_facts(), odd)), "fleet-gpu-model-mismatch")
    assert f.severity is Severity.ERROR and "NVIDIA A100-SXM4-80GB on ranks 2-3 (node-2)" in f.title


def test_socket_ifname_missing_on_one_node():
    good = with_env(gpu2_facts(), NCCL_SOCKET_IFNAME="eth0")
    bad = with_env(gpu2_facts(), NCCL_SOCKET_IFNAME="ens1f0")
    findings = check_fleet(fleet(good, good, bad))
    f = by_id(findings, "fleet-socket-ifname-missing")
    assert f.severity is Severity.ERROR
    assert "NCCL_SOCKET_IFNAME='ens1f0' names no interface on ranks 4-5 (node-3)" in f.title
    assert f.fix.startswith("export NCCL_SOCKET_IFNAME=eth0")
    # The variable's difference is said by that finding, not twice.
    assert "fleet-env-mismatch" not in ids(findings)
    column = next(c for c in fleet_columns(fleet(good, bad)) if c.label == "NCCL interface")
    assert column.values == ("eth0 -> eth0", "ens1f0 -> none") and column.severity is Severity.ERROR


def test_gloo_socket_ifname_takes_exact_names():
    good = with_env(cpu_facts(), GLOO_SOCKET_IFNAME="eth0")
    prefix_only = with_env(cpu_facts(), GLOO_SOCKET_IFNAME="eth")
    f = by_id(check_fleet(fleet(good, prefix_only)), "fleet-socket-ifname-missing")
    assert "GLOO_SOCKET_IFNAME='eth'" in f.title


def test_socket_ifname_set_differently_but_present_everywhere():
    a = with_env(gpu2_facts(), NCCL_SOCKET_IFNAME="eth0")
    b = with_env(gpu2_facts(), NCCL_SOCKET_IFNAME="=eth0")
    f = by_id(check_fleet(fleet(a, b)), "fleet-env-mismatch")
    # both select eth0 on their own node: said, not an error (issue 34, item 5)
    assert f.evidence["fact"] == "NCCL_SOCKET_IFNAME" and f.severity is Severity.INFO


def test_infiniband_missing_on_one_node():
    nodes = fleet(on_host(gpu2_facts(), "gpu-01"), on_host(gpu2_facts(), "gpu-02", ib=()), on_host(gpu2_facts(), "gpu-03"))
    f = by_id(check_fleet(nodes), "fleet-infiniband-mismatch")
    assert f.severity is Severity.ERROR and "none on ranks 2-3 (gpu-02)" in f.title and "ibstat" in f.fix


def test_infiniband_port_down_on_one_node():
    down = on_host(gpu2_facts(), "gpu-02", ib=(InfinibandDevice("mlx5_0", (DOWN,)),))
    f = by_id(check_fleet(fleet(on_host(gpu2_facts(), "gpu-01"), down)), "fleet-infiniband-mismatch")
    assert "mlx5_0 (down) on ranks 2-3 (gpu-02)" in f.title


def test_unknown_infiniband_is_not_a_difference():
    # facts_cpu.json predates the host probe: its InfiniBand devices are unknown.
    nodes = [node_facts(cpu_facts(), "old"), node_facts(on_host(cpu_facts(), "new", ib=()), None)]
    assert "fleet-infiniband-mismatch" not in ids(check_fleet(nodes))


@pytest.mark.parametrize(
    "name,value,severity",
    [
        ("NCCL_IB_DISABLE", "1", Severity.ERROR),
        ("NCCL_PROTO", "Simple", Severity.ERROR),
        ("CUDA_LAUNCH_BLOCKING", "1", Severity.ERROR),
        ("NCCL_MIN_NCHANNELS", "4", Severity.ERROR),
        ("GLOO_DEVICE_TRANSPORT", "TCP", Severity.ERROR),
        ("NCCL_TOPO_FILE", "/etc/nccl/topo.xml", Severity.WARN),
        ("CUDA_MODULE_LOADING", "EAGER", Severity.WARN),
        ("CUDA_DEVICE_MAX_CONNECTIONS", "1", Severity.ERROR),
        ("NCCL_DEBUG", "INFO", Severity.INFO),
    ],
)
def test_a_variable_set_on_one_node_only(name, value, severity):
    odd = with_env(gpu2_facts(), **{name: value})
    f = by_id(check_fleet(fleet(*same(3), odd)), "fleet-env-mismatch")
    assert f.severity is severity and f.evidence["fact"] == name
    assert f"{value} on ranks 6-7 (node-4)" in f.title and "unset on the other 3 nodes" in f.title
    assert f.fix.startswith(f"unset {name}  # on node-4")


def test_a_variable_with_another_value():
    base = with_env(gpu2_facts(), NCCL_IB_HCA="mlx5_0,mlx5_1")
    odd = with_env(gpu2_facts(), NCCL_IB_HCA="mlx5_0")
    f = by_id(check_fleet(fleet(base, base, odd)), "fleet-env-mismatch")
    assert f.fix.startswith("export NCCL_IB_HCA=mlx5_0,mlx5_1  # on node-3")


def test_unrelated_and_per_rank_variables_are_not_compared():
    a = with_env(gpu2_facts(), RANK="0", LOCAL_RANK="0", GROUP_RANK="0", HOME="/a", SLURM_PROCID="0")
    b = with_env(gpu2_facts(), RANK="2", LOCAL_RANK="0", GROUP_RANK="1", HOME="/b", SLURM_PROCID="2")
    assert ids(check_fleet(fleet(a, b))) == ["fleet-consistent"]


def test_no_majority_lists_every_value():
    a, b = vary(gpu2_facts(), "torch.nccl", "2.21.5"), vary(gpu2_facts(), "torch.nccl", "2.26.2")
    f = by_id(check_fleet(fleet(gpu2_facts(), a, b)), "fleet-nccl-mismatch")
    assert f.title.count(" on ranks ") == 3


def test_findings_sorted_worst_first_and_fail_the_report():
    odd = with_env(vary(gpu2_facts(), "torch.nccl", "2.21.5"), NCCL_DEBUG="INFO")
    findings = check_fleet(fleet(gpu2_facts(), odd))
    assert [f.severity for f in findings] == sorted((f.severity for f in findings), key=lambda s: -s.rank)
    assert Report("check", tuple(findings)).failed()


def test_node_local_findings_are_grouped_with_their_nodes():
    small_shm = vary(cpu_facts(), "system.shm_total_bytes", 64 << 20)
    facts = [cpu_facts(), small_shm, cpu_facts(), cpu_facts()]
    nodes = fleet(*facts, ranks_per_node=8)
    findings = fleet_findings(nodes, [run_checks(f) for f in facts])
    shm = [f for f in findings if f.id == "shm-too-small"]
    assert len(shm) == 1
    assert shm[0].title.startswith("ranks 8-15 (node-2): /dev/shm is only 64 MiB")
    assert shm[0].evidence["nodes"] == ["node-2"] and shm[0].evidence["ranks"] == "8-15"
    # One line for what every node has in common, not four.
    [gloo] = [f for f in findings if f.id == "backend-gloo"]
    assert gloo.title.startswith("all 4 nodes: ")
    # The comparison comes first.
    assert ids(findings)[0] == "fleet-shm-mismatch"


def test_socket_ifname_said_once_across_fleet_and_node_findings():
    bad = with_env(gpu2_facts(), NCCL_SOCKET_IFNAME="ens1f0")
    facts = [gpu2_facts(), bad]
    findings = fleet_findings(fleet(*facts), [run_checks(f) for f in facts])
    assert "nccl-socket-ifname-missing" not in ids(findings)
    assert ids(findings).count("fleet-socket-ifname-missing") == 1


def test_rank_ranges_and_where():
    assert rank_ranges([8, 9, 10, 0, 1, 3]) == "0-1,3,8-10"
    assert rank_ranges([]) == ""
    nodes = fleet(*same(6), ranks_per_node=1)
    assert where(nodes[:1]) == "rank 0 (node-1)"
    assert where(nodes, 6) == "all 6 nodes"
    assert where(nodes[:5]) == "ranks 0-4 (node-1, node-2, node-3, node-4, … (5 nodes))"


def test_distinct_names_for_nodes_sharing_a_hostname():
    a = node_facts(on_host(with_env(cpu_facts(), GROUP_RANK="0"), "vm"), None)
    b = node_facts(on_host(with_env(cpu_facts(), GROUP_RANK="1"), "vm"), None)
    c = node_facts(on_host(cpu_facts(), "other"), None)
    assert [n.name for n in distinct_names([a, b, c])] == ["vm#0", "vm#1", "other"]


def test_values_that_stand_out():
    odd = vary(gpu2_facts(), "torch.nccl", "2.21.5")
    [nccl] = [c for c in fleet_columns(fleet(gpu2_facts(), odd, gpu2_facts())) if c.label == "NCCL"]
    assert odd_values(nccl) == [False, True, False]
    [tie] = [c for c in fleet_columns(fleet(gpu2_facts(), odd)) if c.label == "NCCL"]
    assert odd_values(tie) == [True, True]  # no majority: both are marked
    [same] = [c for c in fleet_columns(fleet(gpu2_facts(), gpu2_facts())) if c.label == "NCCL"]
    assert odd_values(same) == [False, False]
