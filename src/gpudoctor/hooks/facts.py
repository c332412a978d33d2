"""What the runtime hooks saw in the user's process: one frozen dataclass per
kind of event. Hooks build them (they touch torch); hooks/checks.py turns them
into findings (pure). Devices are plain strings ("cpu", "cuda:0", "meta") so a
fact survives JSON and a test can write one by hand."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpudoctor.core.codec import SnapshotError, decode, encode
from gpudoctor.core.frames import Source as Source  # re-exported: the facts name it


@dataclass(frozen=True)
class DeviceMismatch:
    """An op failed because its operands live on different devices."""

    rank: int | None
    error: str  # the exception's first line, as PyTorch worded it
    devices_in_message: tuple[str, ...]  # devices the message names, in order
    module: str | None  # qualified name from the root ("encoder.layers.2.proj"); None outside any module
    module_type: str | None  # "Linear"
    root_type: str | None  # the outermost module's class ("Net")
    module_tensors: dict[str, str] = field(default_factory=dict)  # "weight" -> "meta" (direct params and buffers)
    inputs: dict[str, str] = field(default_factory=dict)  # "input" -> "cpu" (tensors passed to the module)
    locals: dict[str, str] = field(default_factory=dict)  # tensors in the failing user frame: "h" -> "cpu"
    model_devices: dict[str, int] = field(default_factory=dict)  # device -> parameter count, whole root model
    source: Source | None = None


@dataclass(frozen=True)
class ModuleInputDevice:
    """A module was called with a tensor on another device than its own parameters."""

    rank: int | None
    module: str
    module_type: str
    module_device: str
    input_name: str
    input_device: str
    source: Source | None = None


@dataclass(frozen=True)
class SamplerEpochRepeat:
    """A shuffling DistributedSampler was iterated twice with the same epoch."""

    rank: int | None
    sampler_type: str
    epoch: int
    iterations: int  # how many times it was iterated in all
    num_replicas: int
    dataset_len: int | None
    source: Source | None = None


@dataclass(frozen=True)
class LoaderRestarts:
    """A DataLoader with workers re-created its workers once per epoch."""

    rank: int | None
    spawned_rank: bool  # this process was started by mp.spawn / ddp_spawn
    start_method: str  # how the loader's workers are started: fork | spawn | forkserver
    num_workers: int
    persistent_workers: bool
    startup_s: tuple[float, ...]  # iter(loader) -> first batch, one per epoch
    lightning: bool  # Lightning is in the process (the fix names its strategy)
    source: Source | None = None


@dataclass(frozen=True)
class NcclDevice:
    """Which GPU a rank was on once it had joined an NCCL process group."""

    rank: int | None
    backend: str
    local_rank: int | None
    local_world_size: int | None
    visible_devices: str | None  # CUDA_VISIBLE_DEVICES, None when unset
    device_count: int | None
    current_device: int | None  # None when it could not be read (no CUDA: the reason is `note`)
    when: str  # "init_process_group" | "DistributedDataParallel"
    note: str = ""


@dataclass(frozen=True)
class CheckpointSave:
    """One torch.save call, as far as the checkpoint pitfalls care."""

    rank: int | None
    world_size: int
    path: str | None  # absolute path, None for a buffer
    ddp_wrapper: str | None  # where in the saved object a DDP wrapper / its state_dict was: "obj", "obj['model']"
    ddp_kind: str | None  # "wrapper" | "state_dict"
    example_key: str | None  # a "module."-prefixed key of that state_dict
    writers: int | None  # how many ranks have saved this path (from the process group's store), None unknown
    source: Source | None = None
    # Where the path is one file for every rank: "" (a network file system, or not known),
    # else this host's name (a node-local disk: each node's rank 0 saving its own copy is no clash).
    scope: str = ""


@dataclass(frozen=True)
class UncaughtError:
    """The exception that ended the script, as python printed its last line(s):
    matched against the failure patterns `diagnose` knows."""

    rank: int | None
    text: str  # "KeyError: 'LOCAL_RANK'", one line per exception of the chain


FACT_TYPES = {
    cls.__name__: cls
    for cls in (DeviceMismatch, ModuleInputDevice, SamplerEpochRepeat, LoaderRestarts, NcclDevice, CheckpointSave, UncaughtError)
}


def fact_to_dict(fact: Any) -> dict[str, Any]:
    """A fact as it crosses from the user's process to gpudoctor's (probe/codec's envelope)."""
    return encode(fact)


def fact_from_dict(d: dict[str, Any]) -> Any:
    """The inverse of fact_to_dict; SnapshotError for another schema version or an unknown kind."""
    kind = d.get("kind") if isinstance(d, dict) else None
    if kind not in FACT_TYPES:
        raise SnapshotError(f"runtime fact: unknown kind {kind!r}")
    return decode(FACT_TYPES[kind], d, f"runtime fact {kind}")
