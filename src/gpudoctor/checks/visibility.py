"""Which physical GPUs torch sees, and under which index.

NVML (and nvidia-smi) ignores CUDA_VISIBLE_DEVICES and numbers GPUs in PCI
bus order; the CUDA runtime, and so torch, sees only the listed GPUs,
renumbered from 0. `parse_visible_devices` reads the variable the way CUDA
does, following PyTorch's own model of it (`_parse_visible_devices` and
`_transform_uuid_to_ordinals` in torch/cuda/__init__.py):

- unset: every GPU;
- entries are read like C's strtoul: leading digits count, so "1gpu2" is 1;
- reading stops at the first entry that is not a number (or is negative),
  and, once matched against the GPUs, at the first index out of range or
  UUID that matches no GPU (or more than one);
- "" and "-1" therefore hide every GPU;
- a repeated entry hides every GPU;
- a value starting with "GPU-" or "MIG-" is a list of UUID prefixes; reading
  stops at the first entry without that prefix (spaces are not stripped).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpudoctor.catalog.findings.visibility import (
    DEVICE_COUNT,
    DEVICE_COUNT_MISMATCH,
    DEVICE_ORDER,
    DEVICE_ORDER_NOT_PCI,
    VISIBLE_DEVICES,
    VISIBLE_DEVICES_HIDE_ALL,
    VISIBLE_DEVICES_INVALID,
    VISIBLE_DEVICES_SET_AFTER_INIT,
    VISIBLE_OVERRIDE,
)
from gpudoctor.checks.wording import plural, quoted, shown
from gpudoctor.core.findings import Finding, Severity
from gpudoctor.probe.facts import Facts
from gpudoctor.probe.nvml import NOT_PERMITTED, NvmlFacts, NvmlGpu
from gpudoctor.core.unavailable import Unavailable

LEADING_NUMBER = re.compile(r"[+-]?\d+")


@dataclass(frozen=True)
class VisibleDevices:
    """CUDA_VISIBLE_DEVICES as CUDA reads it, before matching it to GPUs."""

    value: str | None
    kind: str  # "unset", "indices", "uuids" (GPU-), "mig" (MIG-)
    entries: tuple[int | str, ...]  # what is read, in order
    stopped_at: str | None  # the raw entry where reading stopped, if any
    stop_reason: str  # why reading stopped there; "" when it did not
    repeated: str | None  # a repeated entry: CUDA then hides every GPU
    loose: tuple[tuple[str, int], ...]  # entries read leniently: ("1gpu2", 1)

    @property
    def hides_all(self) -> bool:
        return self.kind != "unset" and not self.entries


def strtoul(text: str) -> int:
    """The number `text` starts with, or -1 (C's strtoul, as torch models it)."""
    m = LEADING_NUMBER.match(text)
    return int(m.group()) if m else -1


def parse_visible_devices(value: str | None) -> VisibleDevices:
    if value is None:
        return VisibleDevices(None, "unset", (), None, "", None, ())
    for prefix, kind in (("GPU-", "uuids"), ("MIG-", "mig")):
        if value.startswith(prefix):
            uuids: list[str] = []
            for elem in value.split(","):
                if elem in uuids:
                    return VisibleDevices(value, kind, (), None, "", elem, ())
                if not elem.startswith(prefix):
                    reason = f"does not start with {prefix}" + (" (spaces are not ignored in UUID lists)" if elem.strip().startswith(prefix) else "")
                    return VisibleDevices(value, kind, tuple(uuids), elem, reason, None, ())
                uuids.append(elem)
            return VisibleDevices(value, kind, tuple(uuids), None, "", None, ())
    indices: list[int] = []
    loose: list[tuple[str, int]] = []
    for elem in value.split(","):
        text = elem.strip()
        x = strtoul(text)
        if x in indices:
            return VisibleDevices(value, "indices", (), None, "", elem, tuple(loose))
        if x < 0:
            if not text:
                reason = "is empty"
            elif LEADING_NUMBER.match(text):
                reason = "is negative"
            else:
                reason = "is not a number"
            return VisibleDevices(value, "indices", tuple(indices), elem, reason, None, tuple(loose))
        if not text.lstrip("+").isdigit():
            loose.append((elem, x))
        indices.append(x)
    return VisibleDevices(value, "indices", tuple(indices), None, "", None, tuple(loose))


@dataclass(frozen=True)
class Selection:
    """The physical GPUs (NVML indices) CUDA exposes, in torch's order."""

    gpus: tuple[int, ...] | Unavailable
    stopped_at: str | None  # entry where matching stopped (out of range, unknown UUID)
    stop_reason: str
    all_hidden_by_repeat: bool = False


def _bare_uuid(uuid: str) -> str:
    u = uuid.strip().lower()
    for prefix in ("gpu-", "mig-"):
        if u.startswith(prefix):
            return u[len(prefix):]
    return u


def cuda_ordinals(nvml: NvmlFacts) -> tuple[int, ...]:
    """The NVML indices CUDA numbers 0, 1, ... with CUDA_VISIBLE_DEVICES unset: every GPU
    NVML counts (a lost one keeps its place) except those NVML refuses with NoPermission,
    which a cgroup or container gives to another job and CUDA does not enumerate. So in a
    Slurm job holding GPUs 4 and 5 of a node, cuda:0 is GPU 4."""
    if not isinstance(nvml.device_count, int):  # a snapshot or paste from before the count was kept
        return tuple(g.index for g in nvml.gpus)
    refused = {u.index for u in nvml.unreachable if u.kind == NOT_PERMITTED}
    return tuple(i for i in range(nvml.device_count) if i not in refused)


def _range(count: int, nvml: NvmlFacts) -> str:
    others = len([u for u in nvml.unreachable if u.kind == NOT_PERMITTED])
    if others:
        return f"this process may use {plural(count, 'GPU')} (NVML counts {count + others}; the others are another job's)"
    return f"this machine has {plural(count, 'GPU')}"


def select_gpus(parsed: VisibleDevices, nvml: NvmlFacts) -> Selection:
    """Match the parsed list against the physical GPUs, as CUDA does."""
    gpus = nvml.gpus
    ordinals = cuda_ordinals(nvml)
    count = len(ordinals)
    if parsed.kind == "unset":
        if not nvml.available:
            return Selection(Unavailable("NVML cannot list the GPUs"), None, "")
        return Selection(ordinals, None, "")
    if parsed.kind == "mig":
        return Selection(Unavailable("MIG instance UUIDs cannot be mapped to GPUs from here"), None, "")
    if not parsed.entries:
        return Selection((), None, "")
    if not nvml.available:
        if parsed.kind == "indices":
            return Selection(Unavailable("NVML cannot list the GPUs, so the indices cannot be checked"), None, "")
        return Selection(Unavailable("NVML cannot list the GPUs, so the UUIDs cannot be matched"), None, "")
    chosen: list[int] = []
    if parsed.kind == "indices":
        for entry in parsed.entries:
            assert isinstance(entry, int)
            if entry >= count:
                return Selection(tuple(chosen), str(entry), f"is out of range: {_range(count, nvml)}")
            chosen.append(ordinals[entry])
        return Selection(tuple(chosen), None, "")
    known = [(g.index, _bare_uuid(g.uuid)) for g in gpus if isinstance(g.uuid, str)]
    for entry in parsed.entries:
        assert isinstance(entry, str)
        want = _bare_uuid(entry)
        matches = [index for index, uuid in known if uuid.startswith(want)]
        if len(matches) != 1:
            reason = "matches no GPU's UUID" if not matches else f"matches {len(matches)} GPUs' UUIDs (ambiguous)"
            return Selection(tuple(chosen), entry, reason)
        if matches[0] in chosen:
            return Selection((), None, "", all_hidden_by_repeat=True)
        chosen.append(matches[0])
    return Selection(tuple(chosen), None, "")


@dataclass(frozen=True)
class DeviceRow:
    """One line of the torch-index -> physical-GPU table."""

    torch_index: int | None  # None: hidden from torch
    gpu: NvmlGpu | None  # None: NVML does not know it
    name: str
    memory_total_bytes: int | Unavailable
    matched_by: str  # "UUID", "PCI bus id", "CUDA_VISIBLE_DEVICES order", ""


def _bus(bus_id: str | Unavailable) -> tuple[int, int, int] | None:
    # NVML says "00000000:3B:00.0", torch's probe "0000:3b:00.0".
    if not isinstance(bus_id, str):
        return None
    m = re.fullmatch(r"([0-9a-fA-F]+):([0-9a-fA-F]+):([0-9a-fA-F]+)\.\d+", bus_id.strip())
    return (int(m[1], 16), int(m[2], 16), int(m[3], 16)) if m else None


def device_map(facts: Facts) -> tuple[DeviceRow, ...]:
    """Each torch device matched to its physical GPU (by UUID, else PCI bus
    id, else the CUDA_VISIBLE_DEVICES order), then the GPUs torch does not see."""
    gpus = facts.nvml.gpus
    by_uuid = {_bare_uuid(g.uuid): g for g in gpus if isinstance(g.uuid, str)}
    by_bus = {_bus(g.pci_bus_id): g for g in gpus if _bus(g.pci_bus_id)}
    by_index = {g.index: g for g in gpus}
    selection = select_gpus(parse_visible_devices(facts.visible_devices), facts.nvml)
    predicted = selection.gpus if isinstance(selection.gpus, tuple) else ()
    rows: list[DeviceRow] = []
    used: set[int] = set()
    for dev in facts.torch.devices:
        gpu, how = None, ""
        if isinstance(dev.uuid, str) and _bare_uuid(dev.uuid) in by_uuid:
            gpu, how = by_uuid[_bare_uuid(dev.uuid)], "UUID"
        elif _bus(dev.pci_bus_id) in by_bus:
            gpu, how = by_bus[_bus(dev.pci_bus_id)], "PCI bus id"
        elif dev.index < len(predicted) and predicted[dev.index] in by_index:  # not a GPU NVML cannot reach
            gpu, how = by_index[predicted[dev.index]], "CUDA_VISIBLE_DEVICES order"
        if gpu is not None:
            used.add(gpu.index)
        name = dev.name if isinstance(dev.name, str) else (gpu.name if gpu and isinstance(gpu.name, str) else "?")
        rows.append(DeviceRow(dev.index, gpu, name, dev.total_memory_bytes, how))
    for gpu in gpus:
        if gpu.index not in used:
            name = gpu.name if isinstance(gpu.name, str) else "?"
            rows.append(DeviceRow(None, gpu, name, gpu.memory_total_bytes, ""))
    return tuple(rows)


def mapping_lines(rows: tuple[DeviceRow, ...]) -> list[str]:
    out = []
    for r in rows:
        if r.torch_index is None:
            assert r.gpu is not None
            out.append(f"GPU {r.gpu.index} ({r.name}): hidden from torch")
        elif r.gpu is None:
            out.append(f"cuda:{r.torch_index} = {r.name} (not matched to an NVML GPU)")
        else:
            out.append(f"cuda:{r.torch_index} = GPU {r.gpu.index} ({r.name}, {shown(r.gpu.uuid)})")
    return out


def _torch_sees_cuda(facts: Facts) -> bool:
    t = facts.torch
    return t.imported and isinstance(t.cuda, str) and t.is_available is True


def check_visible_devices(facts: Facts) -> list[Finding]:
    """What CUDA makes of CUDA_VISIBLE_DEVICES: unset, a repeat that hides every GPU,
    a value that hides all, a list read only in part, or the GPUs it selects."""
    value = facts.visible_devices
    parsed = parse_visible_devices(value)
    gpus = facts.nvml.gpus
    selection = select_gpus(parsed, facts.nvml)
    evidence = {"CUDA_VISIBLE_DEVICES": value}
    if parsed.kind == "unset":
        if not gpus:
            return []
        return [VISIBLE_DEVICES(case="unset", evidence=evidence, every=_every(facts.nvml))]
    if parsed.repeated is not None or selection.all_hidden_by_repeat:
        return [_repeated(value, parsed, evidence, facts.nvml)]
    if parsed.hides_all:
        return [_hides_all(value, parsed, evidence, facts.nvml)]
    # Something was read; did reading (or matching) stop early, or read an entry loosely?
    stop_at, stop_why = parsed.stopped_at, parsed.stop_reason
    if selection.stopped_at is not None:
        stop_at, stop_why = selection.stopped_at, selection.stop_reason
    if stop_at is not None or parsed.loose:
        return [_read_in_part(facts, parsed, selection.gpus, stop_at, stop_why, evidence)]
    return [_selected(value, list(parsed.entries), selection.gpus, len(gpus), evidence)]


def _every(nvml: NvmlFacts) -> str:
    """How many GPUs 'every GPU' is: NVML's readable ones, and why any it counts are not among them."""
    others = [u.index for u in nvml.unreachable if u.kind == NOT_PERMITTED]
    lost = [u.index for u in nvml.unreachable if u.kind != NOT_PERMITTED]
    words = [str(len(nvml.gpus))]
    if others:
        words.append(f"NVML counts {plural(len(others), 'more GPU')}, another job's")
    if lost:
        words.append("not " + ", ".join(f"GPU {i}" for i in lost) + ", which NVML cannot reach")
    return "; ".join(words)


def _valid_list(nvml: NvmlFacts) -> tuple[str, str]:
    """visible-devices-invalid's fix case and indices: a list naming every GPU CUDA can number
    (or, without NVML, unset it)."""
    ordinals = cuda_ordinals(nvml)
    if ordinals:
        return "list-gpus", ",".join(str(i) for i in range(len(ordinals)))
    return "unset", ""


def _repeated(value, parsed, evidence: dict, nvml: NvmlFacts) -> Finding:
    fix_case, indices = _valid_list(nvml)
    return VISIBLE_DEVICES_INVALID(
        case="repeated", fix_case=fix_case, evidence={**evidence, "repeated": parsed.repeated or "two entries name the same GPU"},
        value=quoted(value), indices=indices,
    )


def _hides_all(value, parsed, evidence: dict, nvml: NvmlFacts) -> Finding:
    """Empty or negative: hiding every GPU on purpose. Anything else: a first entry CUDA cannot read."""
    gpu_count = len(nvml.gpus)
    stopped = parsed.stopped_at if parsed.stopped_at is not None else ""
    deliberate = stopped.strip() == "" or parsed.stop_reason == "is negative"
    if deliberate:
        # Without GPUs hiding them all changes nothing: nothing to undo.
        return VISIBLE_DEVICES_HIDE_ALL(
            evidence={**evidence, "GPUs NVML sees": gpu_count}, severity=Severity.WARN if gpu_count else Severity.INFO,
            no_fix=not gpu_count, value=quoted(value),
        )
    fix_case, indices = _valid_list(nvml)
    return VISIBLE_DEVICES_INVALID(
        case="first-entry", fix_case=fix_case,
        evidence={**evidence, "entries read": [], "stopped at": stopped, "GPUs NVML sees": gpu_count},
        value=quoted(value), entry=repr(stopped), reason=parsed.stop_reason, indices=indices,
    )


def _read_in_part(facts: Facts, parsed, chosen, stop_at, stop_why, evidence: dict) -> Finding:
    """CUDA stopped reading early or read an entry loosely: say what it exposes and what it dropped."""
    value = facts.visible_devices
    problems = []
    if stop_at is not None:
        problems.append(f"reading stops at {stop_at!r}, which {stop_why}")
    for raw, number in parsed.loose:
        problems.append(f"{raw!r} is read as {number}")
    visible = list(chosen) if isinstance(chosen, tuple) else list(parsed.entries)
    ignored = value.split(",")[len(visible):] if value is not None else []
    fix_case, indices = _valid_list(facts.nvml)
    return VISIBLE_DEVICES_INVALID(
        case="read-in-part", fix_case=fix_case,
        evidence={
            **evidence,
            "GPUs exposed (nvidia-smi index / UUID)": visible,
            "entries ignored": ignored,
            "GPUs NVML sees": len(facts.nvml.gpus) if facts.nvml.available else shown(facts.nvml.driver_version),
        },
        value=quoted(value), read_as=",".join(str(v) for v in visible) or "nothing", problems="; ".join(problems), indices=indices,
    )


def _selected(value, read: list, chosen, gpu_count: int, evidence: dict) -> Finding:
    """A valid list: which nvidia-smi GPU each cuda:N is (or just the entries when NVML cannot map them)."""
    if isinstance(chosen, Unavailable):
        return VISIBLE_DEVICES(
            case="entries", evidence={**evidence, "entries read": read, "mapping": str(chosen)}, severity=Severity.INFO,
            value=quoted(value), entries=", ".join(str(e) for e in read),
        )
    return VISIBLE_DEVICES(
        case="mapped", evidence={**evidence, "torch index -> nvidia-smi index": {f"cuda:{i}": g for i, g in enumerate(chosen)}},
        severity=Severity.INFO, value=quoted(value), gpus=plural(len(chosen), "GPU"), total=gpu_count,
        mapping=", ".join(f"cuda:{i} = GPU {g}" for i, g in enumerate(chosen)),
    )


def check_device_count(facts: Facts) -> list[Finding]:
    """NVML sees N GPUs, CUDA_VISIBLE_DEVICES says K of them, torch sees M."""
    if not (facts.nvml.available and facts.nvml.gpus and _torch_sees_cuda(facts)):
        return []
    if any(g.mig_mode == "enabled" for g in facts.nvml.gpus):
        return []  # CUDA counts MIG instances, not GPUs; mig-enabled says so
    selection = select_gpus(parse_visible_devices(facts.visible_devices), facts.nvml)
    if isinstance(selection.gpus, Unavailable):
        return []
    expected = len(selection.gpus)
    seen = facts.torch.device_count
    n = len(facts.nvml.gpus)
    rows = device_map(facts)
    evidence = {
        "GPUs NVML sees": n,
        "CUDA_VISIBLE_DEVICES": facts.visible_devices,
        "GPUs torch sees": shown(seen),
        "mapping": "\n".join(mapping_lines(rows)),
    }
    value = quoted(facts.visible_devices)
    if seen == expected:
        return [DEVICE_COUNT(case="all" if facts.visible_devices is None else "selected", evidence=evidence, seen=seen, n=n, value=value)]
    return [DEVICE_COUNT_MISMATCH(
        evidence={**evidence, "expected": expected, "torch warnings": list(facts.torch.cuda_warnings)},
        seen=shown(seen), n=n, value=value, expected=expected,
    )]


def _differ(gpus: tuple[NvmlGpu, ...]) -> bool:
    return len({(shown(g.name), shown(g.memory_total_bytes)) for g in gpus}) > 1


def check_device_order(facts: Facts) -> list[Finding]:
    """CUDA's default order (FASTEST_FIRST) may differ from nvidia-smi's (PCI bus)."""
    gpus = facts.nvml.gpus
    if len(gpus) < 2:
        return []
    order = facts.environment.get("CUDA_DEVICE_ORDER")
    rows = [r for r in device_map(facts) if r.torch_index is not None and r.gpu is not None and r.matched_by != "CUDA_VISIBLE_DEVICES order"]
    selection = select_gpus(parse_visible_devices(facts.visible_devices), facts.nvml)
    predicted = selection.gpus if isinstance(selection.gpus, tuple) else ()
    moved = [
        f"cuda:{r.torch_index} is GPU {r.gpu.index}, not GPU {predicted[r.torch_index]}"
        for r in rows
        if r.torch_index is not None and r.torch_index < len(predicted) and r.gpu and r.gpu.index != predicted[r.torch_index]
    ]
    evidence = {"CUDA_DEVICE_ORDER": order, "GPUs": [f"GPU {g.index}: {shown(g.name)}" for g in gpus]}
    if moved:
        mapping = "\n".join(mapping_lines(device_map(facts)))
        return [DEVICE_ORDER_NOT_PCI(case="renumbered", evidence={**evidence, "mapping": mapping}, moved="; ".join(moved))]
    if order == "PCI_BUS_ID":
        return [DEVICE_ORDER(case="pci-bus-id", evidence=evidence)]
    if _differ(gpus):
        return [DEVICE_ORDER_NOT_PCI(case="gpus-differ", evidence=evidence, order=quoted(order))]
    return [DEVICE_ORDER(case="identical", evidence=evidence)]


def check_set_after_init(facts: Facts) -> list[Finding]:
    """In the process that imported gpudoctor, CUDA was initialised with one
    CUDA_VISIBLE_DEVICES; a fresh process with the current value sees other GPUs."""
    here = facts.torch_in_process
    if facts.visible_override is not None or here.cuda_initialized is not True or not facts.torch.imported:
        return []
    child_uuids = tuple(_bare_uuid(d.uuid) for d in facts.torch.devices if isinstance(d.uuid, str))
    here_uuids = tuple(_bare_uuid(u) for u in here.device_uuids) if isinstance(here.device_uuids, tuple) else None
    same_count = here.device_count == facts.torch.device_count
    same_devices = here_uuids is None or len(child_uuids) != len(facts.torch.devices) or here_uuids == child_uuids
    evidence = {
        "CUDA_VISIBLE_DEVICES now": here.cuda_visible_devices,
        "GPUs in this process": shown(here.device_count),
        "GPUs in a fresh process": shown(facts.torch.device_count),
    }
    if same_count and same_devices:
        return [VISIBLE_DEVICES_SET_AFTER_INIT(case="same", evidence=evidence, severity=Severity.OK, no_why=True, no_fix=True)]
    return [VISIBLE_DEVICES_SET_AFTER_INIT(
        case="changed", evidence=evidence, here=shown(here.device_count), fresh=shown(facts.torch.device_count),
        devices=here.cuda_visible_devices or "0",
    )]


def check_visible_override(facts: Facts) -> list[Finding]:
    if facts.visible_override is None:
        return []
    env_value = facts.environment.get("CUDA_VISIBLE_DEVICES")
    seen = facts.torch.device_count
    mapping = mapping_lines(tuple(r for r in device_map(facts) if r.torch_index is not None))
    evidence = {"--visible": facts.visible_override, "environment": env_value, "GPUs torch would see": shown(seen),
                "mapping": "\n".join(mapping) or "none"}
    return [VISIBLE_OVERRIDE(evidence=evidence, value=quoted(facts.visible_override), env=quoted(env_value), seen=shown(seen))]


CHECKS = (check_visible_override, check_visible_devices, check_device_count, check_device_order, check_set_after_init)
