"""Findings in the area "visibility"."""

from __future__ import annotations

from gpudoctor.catalog.kind import FindingKind
from gpudoctor.core.findings import Severity

AREA = "visibility"
EMITTED_BY = "[`gpudoctor check`](../commands/check.md)"


DEVICE_COUNT_MISMATCH = FindingKind(
    id="device-count-mismatch",
    severity=Severity.WARN,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="NVML sees N GPUs and `CUDA_VISIBLE_DEVICES` selects K of them, but torch in a fresh process sees a different number.",
    evidence="`GPUs NVML sees`, `CUDA_VISIBLE_DEVICES`, `GPUs torch sees`, `expected`, the mapping, and torch's warnings.",
    title="torch sees {seen} GPUs, but NVML sees {n} and CUDA_VISIBLE_DEVICES={value} should give {expected}",
    why="A GPU that NVML lists and CUDA_VISIBLE_DEVICES selects is not usable by CUDA: it may be in a bad state, held in a Prohibited compute mode, or claimed by a container's device list.",
    fix="nvidia-smi -q -i <GPU index>  # look at the GPU torch does not see",
)


DEVICE_COUNT = FindingKind(
    id="device-count",
    severity=Severity.OK,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="torch's `device_count()` in a fresh process equals what NVML's GPU list and `CUDA_VISIBLE_DEVICES` predict.",
    evidence="`GPUs NVML sees`, `CUDA_VISIBLE_DEVICES`, `GPUs torch sees`, `mapping` (each `cuda:N` with its nvidia-smi index and UUID; hidden GPUs listed too).",
    title={
        "all": "torch sees all {n} GPUs",
        "selected": "torch sees {seen} of {n} GPUs, the ones CUDA_VISIBLE_DEVICES={value} selects",
    },
    more_why="The table answers \"which physical GPU is my cuda:0?\" by UUID, not by guessing.",
    more_fix="Nothing to fix. A difference is reported as [`device-count-mismatch`](device-count-mismatch.md).",
)


DEVICE_ORDER_NOT_PCI = FindingKind(
    id="device-order-not-pci",
    severity=Severity.WARN,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="`CUDA_DEVICE_ORDER` is not `PCI_BUS_ID` on a machine whose GPUs differ, or torch's devices (matched by UUID) are already numbered differently from `nvidia-smi`.",
    evidence="`CUDA_DEVICE_ORDER`, `GPUs`, and the mapping when torch's order differs (e.g. `cuda:0 is GPU 1, not GPU 0`).",
    title={
        "renumbered": "torch numbers the GPUs differently from nvidia-smi: {moved}",
        "gpus-differ": "CUDA_DEVICE_ORDER is {order}, not PCI_BUS_ID, on a machine whose GPUs differ",
    },
    why={
        "renumbered": "CUDA's default CUDA_DEVICE_ORDER=FASTEST_FIRST puts the fastest GPU first; nvidia-smi uses PCI bus order, so cuda:0 may not be the GPU you meant.",
        "gpus-differ": "With the default FASTEST_FIRST order, CUDA puts the fastest GPU first, so torch's cuda:0 (and the indices in CUDA_VISIBLE_DEVICES) may not be nvidia-smi's GPU 0.",
    },
    fix="export CUDA_DEVICE_ORDER=PCI_BUS_ID",
)


DEVICE_ORDER = FindingKind(
    id="device-order",
    severity=Severity.OK,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="torch numbers the GPUs as `nvidia-smi` does: `CUDA_DEVICE_ORDER=PCI_BUS_ID` is set, or the GPUs are identical.",
    evidence="`CUDA_DEVICE_ORDER`, `GPUs`.",
    title={
        "pci-bus-id": "CUDA_DEVICE_ORDER=PCI_BUS_ID: torch numbers GPUs as nvidia-smi does",
        "identical": "The GPUs are identical, so CUDA numbers them as nvidia-smi does",
    },
    more_why="With identical GPUs CUDA's default order falls back to PCI order, so the numbering agrees.",
    more_fix="Nothing to fix. See [`device-order-not-pci`](device-order-not-pci.md).",
)


VISIBLE_DEVICES_HIDE_ALL = FindingKind(
    id="visible-devices-hide-all",
    severity=Severity.WARN,
    also=(Severity.INFO,),
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="`CUDA_VISIBLE_DEVICES` is empty or a negative index (`\"\"`, `-1`): the usual way to hide every GPU. `warn` on a machine with GPUs, `info` without.",
    evidence="`CUDA_VISIBLE_DEVICES`, `GPUs NVML sees`.",
    title="CUDA_VISIBLE_DEVICES={value} hides every GPU from CUDA and torch",
    why="An empty value or a negative index is the way to hide all GPUs; torch then runs on CPU only.",
    fix="unset CUDA_VISIBLE_DEVICES",
)


VISIBLE_DEVICES_INVALID = FindingKind(
    id="visible-devices-invalid",
    severity=Severity.WARN,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="`CUDA_VISIBLE_DEVICES` contains entries CUDA does not read the way they look. CUDA reads the list like C's `strtoul`: `1gpu2` is read as `1`; reading stops at the first entry that is not a number, is negative, is out of range (`0,7,1` on a 2-GPU machine exposes only GPU 0), or is a UUID that matches no GPU (or several); a repeated entry (`0,0`) hides every GPU; in a `GPU-…` UUID list, a space after a comma ends the list.",
    evidence="`CUDA_VISIBLE_DEVICES`, the GPUs actually exposed, the entries ignored, and how many GPUs NVML sees.",
    title={
        "repeated": "CUDA_VISIBLE_DEVICES={value} hides every GPU: an entry is repeated",
        "first-entry": "CUDA_VISIBLE_DEVICES={value} hides every GPU: its first entry {entry} {reason}",
        "read-in-part": "CUDA_VISIBLE_DEVICES={value} is read as {read_as}: {problems}",
    },
    why={
        "repeated": "CUDA treats a list that names a GPU twice as invalid and exposes no GPU at all.",
        "first-entry": "CUDA reads the list up to the first entry that is not a GPU index or GPU-/MIG- UUID; nothing before it means no GPU.",
        "read-in-part": "CUDA reads CUDA_VISIBLE_DEVICES like C's strtoul and stops at the first invalid or out-of-range entry, silently dropping the rest; torch then sees fewer GPUs than the list names.",
    },
    fix={
        "list-gpus": "export CUDA_VISIBLE_DEVICES={indices}",
        "unset": "unset CUDA_VISIBLE_DEVICES  # or list GPU indices: export CUDA_VISIBLE_DEVICES=0,1",
    },
)


VISIBLE_DEVICES_SET_AFTER_INIT = FindingKind(
    id="visible-devices-set-after-init",
    severity=Severity.ERROR,
    also=(Severity.OK,),
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="In the Python process that ran the check (a notebook, a training script calling gpudoctor), CUDA was initialised with one set of GPUs, and a fresh process with the current `CUDA_VISIBLE_DEVICES` sees a different set. `os.environ[\"CUDA_VISIBLE_DEVICES\"]` was changed after CUDA started. The `gpudoctor check` command itself never initialises CUDA, so it reports this only when the facts come from such a process.",
    evidence="`CUDA_VISIBLE_DEVICES now`, `GPUs in this process`, `GPUs in a fresh process`.",
    title={
        "same": "This process sees the GPUs a fresh process would",
        "changed": "CUDA_VISIBLE_DEVICES was changed after CUDA was initialised: this process sees {here} GPUs, a fresh one {fresh}",
    },
    why="CUDA reads CUDA_VISIBLE_DEVICES once, when it initialises; setting os.environ afterwards has no effect on this process.",
    fix="CUDA_VISIBLE_DEVICES={devices} python train.py  # set it before the process starts",
)


VISIBLE_DEVICES = FindingKind(
    id="visible-devices",
    severity=Severity.OK,
    also=(Severity.INFO,),
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="How `CUDA_VISIBLE_DEVICES` maps torch's indices to physical GPUs. `ok` when it is unset (CUDA sees every GPU); `info` when it selects a clean subset or order, e.g. `1,0` makes torch's `cuda:0` nvidia-smi's GPU 1.",
    evidence="`CUDA_VISIBLE_DEVICES`, and `torch index -> nvidia-smi index`.",
    title={
        "unset": "CUDA_VISIBLE_DEVICES is unset: CUDA sees every GPU ({every})",
        "entries": "CUDA_VISIBLE_DEVICES={value} selects {entries}",
        "mapped": "CUDA_VISIBLE_DEVICES={value} exposes {gpus} of {total}: {mapping}",
    },
    more_why="NVML and `nvidia-smi` ignore the variable and number GPUs in PCI order; CUDA, and so torch, sees only the listed GPUs, renumbered from 0.",
    more_fix="Nothing to fix. A list CUDA reads differently from what it says is reported as [`visible-devices-invalid`](visible-devices-invalid.md).",
)


VISIBLE_OVERRIDE = FindingKind(
    id="visible-override",
    severity=Severity.INFO,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="`gpudoctor check --visible LIST` probed torch with `CUDA_VISIBLE_DEVICES=LIST` instead of the environment's value: this finding shows what torch would see.",
    evidence="`--visible`, `environment` (the real value), `GPUs torch would see`, `mapping`.",
    title="What-if: torch probed with CUDA_VISIBLE_DEVICES={value} (the environment has {env}): torch would see {seen} GPU(s)",
    more_why="It lets you try a value (`1,0`, a UUID list) before putting it in a job script; the other visibility findings judge the what-if value.",
    more_fix="""Nothing to fix; if the mapping is what you want:

```sh
export CUDA_VISIBLE_DEVICES=1,0
```""",
)
