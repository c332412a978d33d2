"""Pure: what the runtime hooks saw -> findings. No torch import, no printing.

Every check takes the facts of one process or of several ranks at once (merged
from their report fragments), and folds the same event seen on several ranks
into one finding whose evidence lists the ranks.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from gpudoctor.catalog.findings.checkpoints import CHECKPOINT_DDP_WRAPPER, CHECKPOINT_EVERY_RANK
from gpudoctor.catalog.findings.data import SAMPLER_WITHOUT_SET_EPOCH, SPAWNED_RANK_LOADER_WORKERS
from gpudoctor.catalog.findings.devices import DEVICE_MISMATCH, MODULE_INPUT_DEVICE
from gpudoctor.catalog.findings.distributed import NCCL_RANK_DEVICE
from gpudoctor.core.findings import Finding, Severity
from gpudoctor.hooks.facts import (
    CheckpointSave,
    DeviceMismatch,
    LoaderRestarts,
    ModuleInputDevice,
    NcclDevice,
    SamplerEpochRepeat,
    Source,
    UncaughtError,
)

F = TypeVar("F")

# Below this, re-creating the workers every epoch costs too little to mention.
LOADER_STARTUP_FLOOR_S = 0.05


def _grouped(facts: Iterable[F], key: Callable[[F], Hashable]) -> list[list[F]]:
    groups: dict[Hashable, list[F]] = {}
    for fact in facts:
        groups.setdefault(key(fact), []).append(fact)
    return list(groups.values())


def _ranks(group: Sequence[Any]) -> dict[str, Any]:
    ranks = sorted({f.rank for f in group if f.rank is not None})
    if not ranks:
        return {}
    return {"rank": ranks[0]} if len(ranks) == 1 else {"ranks": ranks}


def _source(src: Source | None) -> dict[str, Any]:
    if src is None:
        return {}
    ev = {"source": str(src)}
    if src.text:
        ev["line"] = src.text
    return ev


def _devices(named: dict[str, str]) -> str:
    return ", ".join(f"{name}={dev}" for name, dev in named.items())


def _module_label(name: str | None, type_name: str | None) -> str:
    if name is None:
        return "code outside any module"
    return f"`{name}` ({type_name})" if name else f"the root model ({type_name})"


def _attr(name: str) -> str:
    """How the user reaches a submodule from their model variable:
    "encoder.layers.2.proj" -> "model.encoder.layers[2].proj"."""
    out = "model"
    for part in name.split(".") if name else []:
        out += f"[{part}]" if part.isdigit() else f".{part}"
    return out


# -- 1. device mismatch --------------------------------------------------------


def _majority(model_devices: dict[str, int]) -> str | None:
    real = {d: n for d, n in model_devices.items() if d != "meta"}
    return max(real, key=lambda d: real[d]) if real else None


def _mismatch_story(f: DeviceMismatch) -> tuple[str, dict[str, Any]]:
    """device-mismatch's case for a failed op, from which operand sits apart, and its fields."""
    own = sorted(set(f.module_tensors.values()))
    given = sorted(set(f.inputs.values()))
    label = _module_label(f.module, f.module_type)
    majority = _majority(f.model_devices)
    if f.module is not None and len(own) > 1:
        target = majority or own[0]
        return "module-split", {"label": label, "devices": _devices(f.module_tensors), "module": _attr(f.module), "device": target}
    if f.module is not None and own and given and set(own).isdisjoint(given):
        mine, theirs = own[0], given[0]
        apart = {"label": label, "mine": mine, "theirs": theirs, "module": _attr(f.module)}
        if mine == "meta":
            return "meta", {**apart, "device": majority or theirs}
        if majority and mine != majority:
            # The module is the odd one out in its own model: move it, not the data.
            return "module-apart", {**apart, "device": majority}
        return "input-apart", {**apart, "input": next(iter(f.inputs)), "device": mine}
    # Module and inputs agree: the odd tensor was made or kept inside the code itself.
    odd = {n: d for n, d in f.locals.items() if d not in own + given}
    where = f"inside {label}" if f.module is not None else f"at {f.source}" if f.source else "in an op"
    if odd:
        name, dev = next(iter(odd.items()))
        home = (own or given or [d for d in f.devices_in_message if d != dev] or ["the other device"])[0]
        return "tensor-apart", {"where": where, "odd_device": dev, "tensors": _devices(odd), "tensor": name, "device": home}
    return "unknown", {"where": where, "devices": " and ".join(f.devices_in_message) or "two devices"}


def device_mismatch_findings(facts: Iterable[DeviceMismatch]) -> list[Finding]:
    out = []
    for group in _grouped(facts, lambda f: (f.module, f.error, f.source)):
        f = group[0]
        case, fields = _mismatch_story(f)
        evidence: dict[str, Any] = {**_ranks(group), "error": f.error}
        if f.module is not None:
            evidence["module"] = f"{f.module or '<root>'} ({f.module_type})"
            evidence["module parameters/buffers"] = _devices(f.module_tensors) or "none of its own"
            evidence["inputs"] = _devices(f.inputs) or "no tensors"
        if f.locals:
            evidence["tensors in the failing frame"] = _devices(f.locals)
        if f.model_devices:
            evidence["model"] = f"{f.root_type}: " + ", ".join(
                f"{n} parameter(s) on {d}" for d, n in sorted(f.model_devices.items())
            )
        evidence.update(_source(f.source))
        out.append(DEVICE_MISMATCH(case=case, evidence=evidence, **fields))
    return out


def module_input_findings(facts: Iterable[ModuleInputDevice], failed_modules: set[str]) -> list[Finding]:
    out = []
    for group in _grouped(facts, lambda f: (f.module, f.module_device, f.input_device)):
        f = group[0]
        if f.module in failed_modules:
            continue  # the device-mismatch finding already tells this story, with the error
        out.append(
            MODULE_INPUT_DEVICE(
                case="meta" if f.module_device == "meta" else "move",
                label=_module_label(f.module, f.module_type),
                input=f.input_name,
                device=f.input_device,
                module_device=f.module_device,
                module=_attr(f.module),
                evidence={
                    **_ranks(group),
                    "module": f"{f.module or '<root>'} ({f.module_type})",
                    "parameters on": f.module_device,
                    f.input_name: f.input_device,
                    **_source(f.source),
                },
            )
        )
    return out


# -- 2. DistributedSampler without set_epoch --------------------------------------


def sampler_findings(facts: Iterable[SamplerEpochRepeat]) -> list[Finding]:
    out = []
    for group in _grouped(facts, lambda f: (f.sampler_type, f.source)):
        f = group[0]
        out.append(
            SAMPLER_WITHOUT_SET_EPOCH(
                sampler=f.sampler_type,
                iterations=f.iterations,
                epoch=f.epoch,
                evidence={
                    **_ranks(group),
                    "epoch": f.epoch,
                    "iterations": f.iterations,
                    "num_replicas": f.num_replicas,
                    "dataset size": f.dataset_len,
                    **_source(f.source),
                },
            )
        )
    return out


# -- 3. DataLoader workers in a spawned rank ------------------------------------------


def loader_findings(facts: Iterable[LoaderRestarts]) -> list[Finding]:
    out = []
    for group in _grouped(facts, lambda f: f.source):
        f = group[0]
        spawn_started = f.spawned_rank or f.start_method in ("spawn", "forkserver")
        if f.persistent_workers or len(f.startup_s) < 2 or not spawn_started:
            continue
        starts = [s for g in group for s in g.startup_s]
        mean = sum(starts) / len(starts)
        if mean < LOADER_STARTUP_FLOOR_S:
            continue
        out.append(
            SPAWNED_RANK_LOADER_WORKERS(
                case="spawned-rank" if f.spawned_rank else "start-method",
                fix_case="lightning" if f.lightning else "spawn",
                method=f.start_method,
                startup_s=mean,
                workers=f.num_workers,
                evidence={
                    **_ranks(group),
                    "num_workers": f.num_workers,
                    "persistent_workers": f.persistent_workers,
                    "workers start with": f.start_method,
                    "epochs": len(f.startup_s),
                    "first batch after iter(loader), s": [round(s, 3) for s in f.startup_s],
                    "total start-up, s": round(sum(f.startup_s), 2),
                    **_source(f.source),
                },
            )
        )
    return out


# -- 4. NCCL ranks sharing a GPU ---------------------------------------------------


def nccl_device_findings(facts: Iterable[NcclDevice]) -> list[Finding]:
    latest: dict[Any, NcclDevice] = {}
    for f in facts:
        latest[f.rank] = f  # the latest look at each rank is the one that counts
    out = []
    for f in latest.values():
        finding = _nccl_device_finding(f)
        if finding:
            out.append(finding)
    return out


def _nccl_device_finding(f: NcclDevice) -> Finding | None:
    if "nccl" not in f.backend.lower() or f.local_rank is None or f.current_device is None:
        return None
    evidence = {
        "rank": f.rank,
        "backend": f.backend,
        "LOCAL_RANK": f.local_rank,
        "LOCAL_WORLD_SIZE": f.local_world_size,
        "CUDA_VISIBLE_DEVICES": f.visible_devices,
        "visible GPUs": f.device_count,
        "current device": f"cuda:{f.current_device}",
        "checked at": f.when,
    }
    count = f.device_count
    if count is not None and f.local_rank >= count:
        if f.visible_devices is not None and count >= 1 and f.current_device < count:
            return None  # each rank was given its own GPUs through CUDA_VISIBLE_DEVICES
        return NCCL_RANK_DEVICE(
            case="ranks-share-gpu", evidence=evidence, rank=f.rank, local_rank=f.local_rank, count=count, nproc=max(count, 1)
        )
    if f.current_device == f.local_rank:
        return None
    return NCCL_RANK_DEVICE(case="wrong-device", evidence=evidence, rank=f.rank, device=f.current_device, local_rank=f.local_rank)


# -- 5. checkpoints ------------------------------------------------------------------


def checkpoint_findings(facts: Iterable[CheckpointSave]) -> list[Finding]:
    saves = list(facts)
    out = []
    for group in _grouped((s for s in saves if s.ddp_kind), lambda s: (s.path, s.ddp_kind, s.ddp_wrapper)):
        s = group[0]
        found_in = "the object saved" if s.ddp_wrapper == "obj" else s.ddp_wrapper
        evidence = {**_ranks(group), "path": s.path or "a buffer", "found in": found_in}
        if s.example_key:
            evidence["key"] = s.example_key
        evidence.update(_source(s.source))
        case = "wrapper" if s.ddp_kind == "wrapper" else "state-dict"
        out.append(CHECKPOINT_DDP_WRAPPER(case=case, evidence=evidence, to=f" to {s.path}" if s.path else ""))
    for group in _grouped((s for s in saves if s.path and s.world_size > 1), lambda s: (s.scope, s.path)):
        ranks = sorted({s.rank for s in group if s.rank is not None})
        writers = max([len(ranks)] + [s.writers or 0 for s in group])
        if writers < 2:
            continue
        others = [r for r in ranks if r != 0]
        s = group[0]
        out.append(
            CHECKPOINT_EVERY_RANK(
                writers=writers,
                path=s.path,
                evidence={
                    "path": s.path,
                    "ranks seen saving it": ranks,
                    "writers": writers,
                    "world size": s.world_size,
                    **({"node": f"{s.scope} (a node-local disk: ranks on this node only)"} if s.scope else {}),
                    **({"not rank 0": others} if others else {}),
                    **_source(s.source),
                },
            )
        )
    return out


# -- all of them -----------------------------------------------------------------------


def uncaught_error_findings(facts: Iterable[UncaughtError]) -> list[Finding]:
    """The error that ended the script, when `diagnose` knows it (KeyError: 'LOCAL_RANK',
    a CPU-only torch asked for CUDA, ...): its cause and fix. The generic "a Python
    exception" pattern says nothing the traceback does not."""
    facts = list(facts)
    if not facts:
        return []  # the log patterns are imported only for an error to explain: a rank's import time
    from gpudoctor.knowledge.story import GENERIC_FINDINGS, Diagnosis

    found: dict[str, Finding] = {}
    for fact in facts:
        d = Diagnosis()
        d.default_rank = fact.rank
        d.feed(fact.text.splitlines())
        for f in d.findings():
            if f.id not in GENERIC_FINDINGS and f.severity in (Severity.ERROR, Severity.WARN) and f.id not in found:
                # the log bookkeeping (line numbers, counts) means nothing for one exception
                kept = {k: v for k, v in f.evidence.items() if k not in ("role", "family", "first_line", "count")}
                found[f.id] = replace(f, evidence=kept, area="script")
    return list(found.values())


def runtime_findings(facts: Iterable[Any]) -> list[Finding]:
    """Every finding the facts of one or several processes support, worst first."""
    facts = list(facts)

    def of(cls):
        return [f for f in facts if isinstance(f, cls)]

    mismatches = of(DeviceMismatch)
    failed = {f.module for f in mismatches if f.module is not None}
    found = [
        *device_mismatch_findings(mismatches),
        *module_input_findings(of(ModuleInputDevice), failed),
        *nccl_device_findings(of(NcclDevice)),
        *sampler_findings(of(SamplerEpochRepeat)),
        *loader_findings(of(LoaderRestarts)),
        *checkpoint_findings(of(CheckpointSave)),
        # a device error is explained above, from its frames: no second, vaguer finding
        *(uncaught_error_findings(of(UncaughtError)) if not mismatches else []),
    ]
    return sorted(found, key=lambda f: -f.severity.rank)
