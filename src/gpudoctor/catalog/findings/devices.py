"""Findings in the area "devices"."""

from __future__ import annotations

from gpudoctor.catalog.kind import FindingKind
from gpudoctor.core.findings import Severity

AREA = "devices"
# The title of a module called with its input on another device, whichever side the fix moves.
_CALLED_APART = "{label} has its parameters on {mine} but was called with input on {theirs}"
EMITTED_BY = "[`gpudoctor run`](../commands/run.md), `gpudoctor.watch()`"


DEVICE_MISMATCH = FindingKind(
    id="device-mismatch",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""An op failed because its tensors live on different devices — CUDA's *Expected all tensors
to be on the same device, but found at least two devices, cpu and cuda:0!*, or any of the
other wordings PyTorch uses for the same fault (*Tensor on device meta is not on the
expected device cpu!*, *Input type (torch.FloatTensor) and weight type
(torch.cuda.FloatTensor) should be the same*, *indices should be either on cpu or on the
same device as the indexed tensor*, ...). The title names the innermost module that was
running, by its qualified name from the root model (`encoder.layers.2.proj`), and which
operand sits apart.""",
    evidence="""`error` (PyTorch's message), `module` (qualified name and class), `module
parameters/buffers` (the device of each of its own parameters and buffers), `inputs` (the
device of each tensor passed to it), `tensors in the failing frame` (the tensors of the
innermost line of your code), `model` (how many parameters of the whole model are on each
device), `source` and `line` (your line of code), `rank` under several ranks.""",
    title={
        "module-split": "{label} has its own parameters/buffers on several devices: {devices}",
        "meta": _CALLED_APART,
        "module-apart": _CALLED_APART,
        "input-apart": _CALLED_APART,
        "tensor-apart": "a tensor {where} is on {odd_device} while the rest is on {device}: {tensors}",
        "unknown": "an op {where} mixed tensors on {devices}",
    },
    why="An op needs all its tensors on one device. Modules move in place with .to(), but tensor.to() returns a new tensor, and tensors made in forward() without device= stay on the CPU.",
    fix={
        "module-split": "{module}.to(\"{device}\")   # modules move in place; every parameter and buffer goes along",
        "meta": "{module}.to_empty(device=\"{device}\")   # its weights were never materialised (meta device): then load or initialise them",
        "module-apart": "{module}.to(\"{device}\")   # or model.to(\"{device}\") after building the model",
        "input-apart": "{input} = {input}.to(\"{device}\")   # before calling {module}; tensor.to() returns a new tensor: assign the result",
        "tensor-apart": "{tensor} = {tensor}.to(\"{device}\")   # or create it with device=x.device; a plain tensor attribute does not move with module.to(): register_buffer() it",
        "unknown": "move every operand of the failing line to one device (x = x.to(device) — assign the result)",
    },
)


MODULE_INPUT_DEVICE = FindingKind(
    id="module-input-device",
    severity=Severity.WARN,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""A module was called with a tensor on another device than its own parameters (or
buffers) — seen at the call, before any op failed. When the same module then fails, the
[device-mismatch](device-mismatch.md) error says it all and this warning is not shown.""",
    evidence="""`module` (qualified name and class), `parameters on` (the device of its first parameter or
buffer), the input by its position or keyword (`input`, `input #2`, `mask`) with its
device, `source` and `line`.""",
    title="{label} was called with {input} on {device}, but its parameters are on {module_device}",
    why="The first op that combines them raises 'Expected all tensors to be on the same device' (or, if the module moves the input itself, every call pays a copy).",
    checked="""`gpudoctor run` wraps `nn.Module.__call__` for a short window only: from the start until a
few passes over every module have gone by with nothing new, again after every
`model.to()` / `.cuda()` and at every new epoch (`iter(DataLoader)`). Outside the window,
module calls run untouched.""",
    fix={
        "meta": "{module}.to_empty(device=\"{device}\")   # then load or initialise its weights",
        "move": "{input} = {input}.to(\"{module_device}\")   # before calling {module}; or {module}.to(\"{device}\")",
    },
)
