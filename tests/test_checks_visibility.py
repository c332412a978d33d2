"""CUDA_VISIBLE_DEVICES as CUDA reads it, case by case, held against
PyTorch's own parser; then the visibility checks on real snapshots."""

from __future__ import annotations

import pytest

from facts_cases import by_id, cpu_facts, gpu2_facts, ids, vary, visible, with_env
from gpudoctor.checks.visibility import (
    check_device_count,
    check_device_order,
    check_set_after_init,
    check_visible_devices,
    check_visible_override,
    device_map,
    parse_visible_devices,
    select_gpus,
)
from gpudoctor.core.findings import Severity
from gpudoctor.core.unavailable import Unavailable

# value -> (entries read, where reading stopped, repeated entry)
PARSE_CASES = {
    "0,1": ((0, 1), None, None),
    "1,0": ((1, 0), None, None),
    "1gpu2": ((1,), None, None),  # strtoul: leading digits count
    "1gpu2,2ampere": ((1, 2), None, None),
    "0,7,1": ((0, 7, 1), None, None),  # range is checked against the GPUs, not here
    "": ((), "", None),
    "-1": ((), "-1", None),
    "-3,0": ((), "-3", None),
    "0,-1,1": ((0,), "-1", None),  # a negative entry ends the list
    "0,0": ((), None, "0"),  # a repeated entry hides everything
    "0,1,0": ((), None, "0"),
    "1,01": ((), None, "01"),  # "01" reads as 1: a repeat
    " 0 , 1 ": ((0, 1), None, None),  # spaces around indices are skipped
    "0,,1": ((0,), "", None),
    "garbage": ((), "garbage", None),
    "cuda:0": ((), "cuda:0", None),
    "1,gpu": ((1,), "gpu", None),
    "+1": ((1,), None, None),
    "0x1": ((0,), None, None),
    "GPU-abc,GPU-def": (("GPU-abc", "GPU-def"), None, None),
    "GPU-abc,1": (("GPU-abc",), "1", None),
    "GPU-abc, GPU-def": (("GPU-abc",), " GPU-def", None),  # no stripping in UUID lists
    "GPU-abc,GPU-abc": ((), None, "GPU-abc"),
    "MIG-1b2c,MIG-3d4e": (("MIG-1b2c", "MIG-3d4e"), None, None),
    "0,GPU-abc": ((0,), "GPU-abc", None),  # the first entry decides the kind
}


@pytest.mark.parametrize("value", list(PARSE_CASES))
def test_parse_visible_devices(value):
    entries, stopped, repeated = PARSE_CASES[value]
    parsed = parse_visible_devices(value)
    assert parsed.entries == entries
    assert parsed.stopped_at == stopped
    assert parsed.repeated == repeated
    assert parsed.hides_all == (entries == ())


def test_unset_means_every_gpu():
    parsed = parse_visible_devices(None)
    assert parsed.kind == "unset" and not parsed.hides_all


def test_loose_entries_are_recorded():
    assert parse_visible_devices("1gpu2,3").loose == (("1gpu2", 1),)
    assert parse_visible_devices(" 1").loose == ()


@pytest.mark.parametrize("value", list(PARSE_CASES))
def test_parser_agrees_with_pytorch(value, monkeypatch):
    torch_cuda = pytest.importorskip("torch.cuda")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", value)
    assert tuple(torch_cuda._parse_visible_devices()) == PARSE_CASES[value][0]


def test_lone_sign_is_invalid_not_a_crash():
    # torch's own helper raises ValueError on "+"; CUDA reads no number there.
    assert parse_visible_devices("+").entries == ()
    assert parse_visible_devices("0,-").entries == (0,)


# --- matching against the GPUs of the 2-GPU snapshot ---------------------------

def _select(value):
    facts = gpu2_facts()
    return select_gpus(parse_visible_devices(value), facts.nvml)


def test_select_stops_at_out_of_range_index():
    sel = _select("0,7,1")
    assert sel.gpus == (0,) and sel.stopped_at == "7"


def test_select_first_index_out_of_range_hides_all():
    assert _select("2").gpus == ()


def test_select_uuid_prefix():
    assert _select("GPU-c81f").gpus == (1,)
    assert _select("GPU-c81f4b72-3d5e-4a90-b2c6-7e0d9f1a5b84,GPU-5e3a").gpus == (1, 0)


def test_select_ambiguous_or_unknown_uuid_stops():
    assert _select("GPU-").gpus == ()  # matches both GPUs: ambiguous
    sel = _select("GPU-5e3a,GPU-ffff")
    assert sel.gpus == (0,) and sel.stopped_at == "GPU-ffff"


def test_select_two_prefixes_of_one_gpu_hide_all():
    sel = _select("GPU-5e3a,GPU-5e3a9d")
    assert sel.gpus == () and sel.all_hidden_by_repeat


def test_select_uuids_agree_with_pytorch():
    torch_cuda = pytest.importorskip("torch.cuda")
    uuids = [g.uuid for g in gpu2_facts().nvml.gpus]
    for value in ("GPU-c81f", "GPU-5e3a,GPU-c81f", "GPU-", "GPU-5e3a,GPU-ffff", "GPU-5e3a,GPU-5e3a9d"):
        candidates = list(parse_visible_devices(value).entries)
        expected = torch_cuda._transform_uuid_to_ordinals(candidates, uuids)
        assert list(_select(value).gpus) == expected, value


def test_select_mig_cannot_be_mapped():
    assert isinstance(_select("MIG-1b2c").gpus, Unavailable)


def test_select_without_nvml_is_unknown():
    facts = cpu_facts()
    sel = select_gpus(parse_visible_devices("1,0"), facts.nvml)
    assert isinstance(sel.gpus, Unavailable)


# --- device map --------------------------------------------------------------

def test_device_map_by_uuid():
    facts = visible(gpu2_facts(), "1,0", [1, 0])
    rows = device_map(facts)
    assert [(r.torch_index, r.gpu.index, r.matched_by) for r in rows] == [(0, 1, "UUID"), (1, 0, "UUID")]


def test_device_map_by_pci_bus_when_torch_reports_no_uuid():
    facts = visible(gpu2_facts(), "1,0", [1, 0])
    facts = vary(facts, "torch.devices[0].uuid", Unavailable("this torch does not report device UUIDs"))
    assert device_map(facts)[0].matched_by == "PCI bus id"
    assert device_map(facts)[0].gpu.index == 1


def test_device_map_lists_hidden_gpus():
    facts = visible(gpu2_facts(), "1", [1])
    rows = device_map(facts)
    assert [(r.torch_index, r.gpu.index) for r in rows] == [(0, 1), (None, 0)]


def test_device_map_empty_on_cpu_machine():
    assert device_map(cpu_facts()) == ()


# --- the checks ----------------------------------------------------------------

def test_cpu_machine_unset_says_nothing():
    assert check_visible_devices(cpu_facts()) == []


def test_cpu_machine_garbage_is_a_warning():
    [f] = check_visible_devices(with_env(cpu_facts(), CUDA_VISIBLE_DEVICES="garbage"))
    assert f.id == "visible-devices-invalid" and f.severity is Severity.WARN
    assert "garbage" in f.title and f.fix


def test_gpu_machine_unset_is_ok():
    facts = gpu2_facts()
    assert by_id(check_visible_devices(facts), "visible-devices").severity is Severity.OK
    assert by_id(check_device_count(facts), "device-count").severity is Severity.OK


def test_subset_is_info_with_mapping():
    facts = visible(gpu2_facts(), "1", [1])
    f = by_id(check_visible_devices(facts), "visible-devices")
    assert f.severity is Severity.INFO and "cuda:0 = GPU 1" in f.title
    count = by_id(check_device_count(facts), "device-count")
    assert "cuda:0 = GPU 1" in count.evidence["mapping"]
    assert "GPU 0 (NVIDIA H100 80GB HBM3): hidden from torch" in count.evidence["mapping"]


def test_list_cut_short_by_out_of_range_entry():
    facts = visible(gpu2_facts(), "0,7,1", [0])
    f = by_id(check_visible_devices(facts), "visible-devices-invalid")
    assert f.severity is Severity.WARN
    assert "'7'" in f.title and "out of range" in f.title
    assert f.evidence["entries ignored"] == ["7", "1"]
    assert by_id(check_device_count(facts), "device-count").severity is Severity.OK  # torch agrees: 1


def test_loose_entry_warns():
    facts = visible(gpu2_facts(), "1gpu2", [1])
    f = by_id(check_visible_devices(facts), "visible-devices-invalid")
    assert "'1gpu2' is read as 1" in f.title


def test_repeated_entry_hides_all():
    facts = visible(gpu2_facts(), "0,0", [])
    f = by_id(check_visible_devices(facts), "visible-devices-invalid")
    assert "repeated" in f.title


@pytest.mark.parametrize("value", ["", "-1"])
def test_hide_all_idiom(value):
    facts = vary(visible(gpu2_facts(), value, []), "torch.is_available", False)
    f = by_id(check_visible_devices(facts), "visible-devices-hide-all")
    assert f.severity is Severity.WARN and f.fix == "unset CUDA_VISIBLE_DEVICES"
    on_cpu = by_id(check_visible_devices(with_env(cpu_facts(), CUDA_VISIBLE_DEVICES=value)), "visible-devices-hide-all")
    assert on_cpu.severity is Severity.INFO


def test_uuid_list_with_space_is_cut():
    facts = visible(gpu2_facts(), "GPU-5e3a, GPU-c81f", [0])
    f = by_id(check_visible_devices(facts), "visible-devices-invalid")
    assert "spaces" in f.title


def test_device_count_mismatch():
    # CUDA_VISIBLE_DEVICES unset, NVML sees 2 GPUs, torch only 1.
    f = by_id(check_device_count(visible(gpu2_facts(), None, [0])), "device-count-mismatch")
    assert f.severity is Severity.WARN
    assert f.evidence["GPUs NVML sees"] == 2 and f.evidence["GPUs torch sees"] == 1 and f.evidence["expected"] == 2


def test_device_order_identical_gpus_is_ok():
    assert by_id(check_device_order(gpu2_facts()), "device-order").severity is Severity.OK


def test_device_order_mixed_gpus_warns_until_pci_bus_id():
    mixed = vary(gpu2_facts(), "nvml.gpus[1].name", "NVIDIA RTX A4000")
    f = by_id(check_device_order(mixed), "device-order-not-pci")
    assert f.fix == "export CUDA_DEVICE_ORDER=PCI_BUS_ID"
    fixed = with_env(mixed, CUDA_DEVICE_ORDER="PCI_BUS_ID")
    assert by_id(check_device_order(fixed), "device-order").severity is Severity.OK


def test_device_order_reordered_by_cuda_warns_with_mapping():
    # CUDA_VISIBLE_DEVICES unset, but torch's cuda:0 is nvidia-smi's GPU 1 (FASTEST_FIRST).
    facts = visible(gpu2_facts(), None, [1, 0])
    f = by_id(check_device_order(facts), "device-order-not-pci")
    assert "cuda:0 is GPU 1, not GPU 0" in f.title


def test_explicit_reorder_is_not_a_device_order_problem():
    facts = visible(gpu2_facts(), "1,0", [1, 0])
    assert ids(check_device_order(facts)) == ["device-order"]


def _initialised_here(facts, count, uuids, now):
    facts = vary(facts, "torch_in_process.cuda_initialized", True)
    facts = vary(facts, "torch_in_process.device_count", count)
    facts = vary(facts, "torch_in_process.device_uuids", tuple(uuids))
    return vary(facts, "torch_in_process.cuda_visible_devices", now)


def test_visible_devices_set_after_init():
    base = gpu2_facts()
    all_uuids = [g.uuid for g in base.nvml.gpus]
    # The process initialised CUDA with both GPUs, then set CUDA_VISIBLE_DEVICES=0.
    facts = _initialised_here(visible(base, "0", [0]), 2, all_uuids, "0")
    f = by_id(check_set_after_init(facts), "visible-devices-set-after-init")
    assert f.severity is Severity.ERROR
    assert f.evidence["GPUs in this process"] == 2 and f.evidence["GPUs in a fresh process"] == 1


def test_visible_devices_set_after_init_same_count_other_order():
    base = gpu2_facts()
    all_uuids = [g.uuid for g in base.nvml.gpus]
    facts = _initialised_here(visible(base, "1,0", [1, 0]), 2, all_uuids, "1,0")
    assert by_id(check_set_after_init(facts), "visible-devices-set-after-init").severity is Severity.ERROR


def test_visible_devices_unchanged_since_init_is_ok():
    base = gpu2_facts()
    facts = _initialised_here(base, 2, [g.uuid for g in base.nvml.gpus], None)
    assert by_id(check_set_after_init(facts), "visible-devices-set-after-init").severity is Severity.OK


def test_set_after_init_needs_cuda_initialised_here():
    assert check_set_after_init(gpu2_facts()) == []  # the CLI: torch never imported in-process


def test_visible_override_explains_the_what_if():
    facts = vary(visible(gpu2_facts(), None, [1, 0]), "visible_override", "1,0")
    [f] = check_visible_override(facts)
    assert f.id == "visible-override" and f.evidence["--visible"] == "1,0" and f.evidence["environment"] is None
    assert "cuda:0 = GPU 1" in f.evidence["mapping"]
    # the other visibility checks judge the what-if value, not the environment's
    assert "cuda:0 = GPU 1" in by_id(check_visible_devices(facts), "visible-devices").title
    assert check_set_after_init(facts) == []


def test_device_count_leaves_mig_to_the_mig_check():
    facts = vary(visible(gpu2_facts(), None, [0]), "nvml.gpus[1].mig_mode", "enabled")
    assert check_device_count(facts) == []
