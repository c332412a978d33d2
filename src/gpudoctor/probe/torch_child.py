"""What torch sees, printed as one JSON line by a fresh child interpreter.

torch_info.py runs this file's text with `python -c` in a new process, so that
nothing the doctor's own process has imported or initialised colours the
answer, and so that a different CUDA_VISIBLE_DEVICES can be tried (`check
--visible`). It is therefore self-contained: standard library only, no
gpudoctor imports. Every value that cannot be read is written as
{"unavailable": "<reason>"}, the facts' JSON form of "unknown, because ...".
The JSON line starts with MARKER, so that anything torch prints on stdout
cannot be mistaken for it.
"""

import gc
import json
import os
import sys
import traceback
import warnings

MARKER = "GPUDOCTOR-TORCH-FACTS "


def unavailable(reason):
    return {"unavailable": reason}


def one_line(exc):
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def read(fn, default_reason=None):
    """fn() or the unavailable marker with the exception as the reason."""
    try:
        return fn()
    except Exception as exc:  # a probe never raises: the reason is the value
        return unavailable(default_reason or one_line(exc))


def bus_id(props):
    # Newer torch exposes the PCI location; format it the way sysfs and NVML do.
    try:
        return "%04x:%02x:%02x.0" % (props.pci_domain_id, props.pci_bus_id, props.pci_device_id)
    except AttributeError:
        return unavailable("this torch does not report the PCI bus id")


def uuid(props):
    value = getattr(props, "uuid", None)
    if value is None:
        return unavailable("this torch does not report device UUIDs")
    return str(value)


def device(torch, index):
    props = torch.cuda.get_device_properties(index)
    return {
        "index": index,
        "name": props.name,
        "capability": "%d.%d" % (props.major, props.minor),
        "total_memory_bytes": int(props.total_memory),
        "uuid": uuid(props),
        "pci_bus_id": bus_id(props),
    }


def nccl_version(torch):
    if not torch.cuda.is_available() and torch.version.cuda is None:
        return None
    parts = torch.cuda.nccl.version()
    return ".".join(str(p) for p in parts)


def cudnn_version(torch):
    v = torch.backends.cudnn.version()
    return None if v is None else str(v)


def backends():
    import torch.distributed as dist

    if not dist.is_available():
        return unavailable("torch.distributed is not available in this build")
    out = {}
    for name in ("gloo", "nccl", "mpi", "ucc", "xccl"):
        probe = getattr(dist, "is_%s_available" % name, None)
        if probe is not None:
            out[name] = bool(read(probe, "could not be queried") is True)
    return out


def probe():
    facts: dict[str, object] = {
        "status": "ok",
        "error": "",
        "detail": "",
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
    }
    try:
        import torch
    except BaseException as exc:  # an import that raises anything is a fact about this torch
        reason = "import torch failed: " + one_line(exc)
        facts.update(status="import-failed", error=one_line(exc))
        frames = traceback.extract_tb(exc.__traceback__)
        # Where it was raised says which torch (or which library) is at fault.
        facts["detail"] = "raised at %s:%s" % (frames[-1].filename, frames[-1].lineno) if frames else ""
        for key in ("version", "path", "cuda", "hip", "cudnn", "nccl", "is_available",
                    "device_count", "arch_list", "distributed", "backends"):
            facts[key] = unavailable(reason)
        facts["devices"] = []
        facts["cuda_warnings"] = []
        return facts

    facts["version"] = read(lambda: str(torch.__version__))
    facts["path"] = read(lambda: os.path.dirname(torch.__file__))
    facts["cuda"] = read(lambda: torch.version.cuda)
    facts["hip"] = read(lambda: getattr(torch.version, "hip", None))
    facts["cudnn"] = read(lambda: cudnn_version(torch))
    with warnings.catch_warnings(record=True) as caught:
        # torch reports a too-old driver or a missing kernel image as a warning.
        warnings.simplefilter("always")
        facts["is_available"] = read(lambda: bool(torch.cuda.is_available()))
        facts["device_count"] = read(lambda: int(torch.cuda.device_count()))
        count = facts["device_count"] if isinstance(facts["device_count"], int) else 0
        devices: list[object] = []
        for i in range(count if facts["is_available"] is True else 0):
            got = read(lambda i=i: device(torch, i))
            if "unavailable" in got:
                got = {"index": i, "name": got, "capability": got, "total_memory_bytes": got,
                       "uuid": got, "pci_bus_id": got}
            devices.append(got)
        facts["devices"] = devices
        facts["arch_list"] = read(lambda: [str(a) for a in torch.cuda.get_arch_list()])
        facts["nccl"] = read(lambda: nccl_version(torch))
    facts["cuda_warnings"] = sorted({str(w.message).strip() for w in caught})
    facts["distributed"] = read(lambda: bool(torch.distributed.is_available()))
    facts["backends"] = read(backends)
    return facts


def main():
    try:
        facts = probe()
    except BaseException as exc:  # last resort: still answer in the expected form
        facts = {"status": "probe-failed", "error": one_line(exc), "detail": traceback.format_exc()[-2000:]}
    sys.stdout.write("\n" + MARKER + json.dumps(facts, default=str) + "\n")
    sys.stdout.flush()
    # The exit's collections would walk every object torch made (~0.6 CPU-s of the
    # probe's ~2, benchmarks/rank_exit.py): none of them needs finalising.
    gc.freeze()


if __name__ == "__main__":
    main()
