"""Recognise PyTorch's device-mismatch errors and explain them from the frames
they passed through: which module was running, where its tensors live, what was
passed in, and which line of the user's code it was.

PyTorch words the same fault many ways (CUDA's "Expected all tensors to be on
the same device", the meta/fake kernels' "Tensor on device meta is not on the
expected device cpu!", cuDNN's "Input type (torch.FloatTensor) and weight type
(torch.cuda.FloatTensor) should be the same", indexing's "indices should be
either on cpu or on the same device"...). The explanation needs no hook on the
hot path: a traceback keeps every frame alive, and the frames of
`Module._call_impl` hold `self`, `args` and `kwargs`.
"""

from __future__ import annotations

import re
from types import FrameType
from typing import Any

from gpudoctor.hooks.facts import DeviceMismatch
from gpudoctor.core.frames import is_library, is_own, user_source

_WORDINGS = re.compile(
    r"expected all tensors to be on the same device"
    r"|is not on the expected device"
    r"|expected device \S+ but got device"
    r"|expected object of device type"
    r"|to have the same device as tensor"
    r"|to be on the same device"
    r"|on cpu or on the same device as the indexed tensor"
    r"|different from other tensors on"
    r"|found one of them on device"
    r"|placeholder storage has not been allocated on mps device",
    re.IGNORECASE,
)
# cuDNN/conv: the types name the device ("torch.cuda.FloatTensor" vs "torch.FloatTensor").
_CONV_TYPES = re.compile(r"Input type \((torch\.[\w.]+)\) and weight type \((torch\.[\w.]+)\)")
_DEVICE = re.compile(r"\b(cpu|meta|mps|xpu|hpu|npu|cuda(?::\d+)?)\b")


def _conv_devices(message: str) -> tuple[str, ...] | None:
    m = _CONV_TYPES.search(message)
    if not m:
        return None
    devs = tuple("cuda" if ".cuda." in t else "mps" if ".mps." in t else "cpu" for t in m.groups())
    return devs if devs[0] != devs[1] else None  # same device: a dtype mismatch, not ours


def is_device_mismatch(exc: BaseException) -> bool:
    if not isinstance(exc, (RuntimeError, ValueError, TypeError)):
        return False
    message = str(exc)
    return bool(_WORDINGS.search(message)) or _conv_devices(message) is not None


def devices_named(message: str) -> tuple[str, ...]:
    conv = _conv_devices(message)
    if conv:
        return conv
    seen: list[str] = []
    for d in _DEVICE.findall(message):
        if d not in seen:
            seen.append(d)
    return tuple(seen)


def _device(t: Any) -> str:
    return str(t.device)


def _tensors(named: dict[str, Any]) -> dict[str, str]:
    """name -> device for the tensors among values (one level into lists, tuples and dicts)."""
    import torch

    out: dict[str, str] = {}
    for name, value in named.items():
        if isinstance(value, torch.Tensor):
            out[name] = _device(value)
        elif isinstance(value, (list, tuple)):
            for i, v in enumerate(value[:8]):
                if isinstance(v, torch.Tensor):
                    out[f"{name}[{i}]"] = _device(v)
        elif isinstance(value, dict):
            for k, v in list(value.items())[:8]:
                if isinstance(v, torch.Tensor):
                    out[f"{name}[{k!r}]"] = _device(v)
    return out


def module_tensors(module: Any) -> dict[str, str]:
    """The module's own parameters and buffers (not its children's): name -> device."""
    named = {n: p for n, p in module._parameters.items() if p is not None}
    named.update({n: b for n, b in module._buffers.items() if b is not None})
    return _tensors(named)


def model_devices(root: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for p in root.parameters():
        counts[_device(p)] = counts.get(_device(p), 0) + 1
    return counts


def qualified_name(root: Any, module: Any) -> str | None:
    for name, m in root.named_modules(remove_duplicate=False):
        if m is module:
            return name
    return None


def _module_of(frame: FrameType) -> Any:
    import torch

    this = frame.f_locals.get("self")
    return this if isinstance(this, torch.nn.Module) else None


def _call_inputs(frames: list[tuple[FrameType, int]], module: Any) -> dict[str, str] | None:
    """The tensors passed to `module`: from its forward's arguments, else from _call_impl's args."""
    for frame, _ in reversed(frames):
        if _module_of(frame) is not module:
            continue
        code = frame.f_code
        if code.co_name == "forward":
            names = code.co_varnames[1 : code.co_argcount + code.co_kwonlyargcount]
            got = _tensors({n: frame.f_locals[n] for n in names if n in frame.f_locals})
            if got:
                return got
        if code.co_name in ("_call_impl", "_wrapped_call_impl", "inner"):
            args = frame.f_locals.get("args") or ()
            kwargs = frame.f_locals.get("kwargs") or {}
            got = _tensors({f"args[{i}]": a for i, a in enumerate(args)} | dict(kwargs))
            if got:
                return got
    return None


def explain(
    exc: BaseException,
    frames: list[tuple[FrameType, int]],
    rank: int | None,
    root: Any = None,
) -> DeviceMismatch:
    """What failed where, from the frames the exception went through (outermost first)."""
    frames = [(f, n) for f, n in frames if not is_own(f.f_code.co_filename)]
    modules = [m for m in (_module_of(f) for f, _ in frames) if m is not None]
    inner = modules[-1] if modules else None
    name = type_name = root_type = None
    found_root = None
    if inner is not None:
        # The root is the outermost module on the stack that contains the inner one.
        candidates = ([root] if root is not None else []) + modules
        for candidate in candidates:
            qual = qualified_name(candidate, inner)
            if qual is not None:
                found_root, name = candidate, qual
                break
        if found_root is None:
            found_root, name = inner, ""
        type_name = type(inner).__name__
        root_type = type(found_root).__name__
    source = user_source(frames)
    # The tensors in the innermost frame of user code: the operands of the failing line.
    local_tensors: dict[str, str] = {}
    for frame, _ in reversed(frames):
        if not is_library(frame.f_code.co_filename, strict=False):
            local_tensors = _tensors({k: v for k, v in frame.f_locals.items() if k != "self"})
            break
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return DeviceMismatch(
        rank=rank,
        error=f"{type(exc).__name__}: {message}",
        devices_in_message=devices_named(str(exc)),
        module=name,
        module_type=type_name,
        root_type=root_type,
        module_tensors=module_tensors(inner) if inner is not None else {},
        inputs=(_call_inputs(frames, inner) or {}) if inner is not None else {},
        locals=local_tensors,
        model_devices=model_devices(found_root) if found_root is not None else {},
        source=source,
    )
