"""Findings in the area "devices"."""

from gpudoctor.catalog.entry import FindingDoc

ENTRIES = (
    FindingDoc(
        id="device-mismatch",
        severity="error",
        area="devices",
        emitted_by="[`gpudoctor run`](../commands/run.md), `gpudoctor.watch()`",
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
        why="""An op needs all its tensors on one device. `module.to(device)` moves a module in place,
with all its parameters and buffers, but `tensor.to(device)` returns a *new* tensor (called
without assigning the result, it does nothing), tensors made inside `forward()` without
`device=` land on the CPU, and a plain tensor attribute (not a registered buffer) does not
move with its module. A submodule built on the `meta` device and never materialised fails
the same way.""",
        fix="""The fix line depends on which operand is the odd one out:

```python
x = x.to("cuda:0")                     # the input is elsewhere: assign the result of .to()
model.head.to("cuda:0")                # one submodule was left behind by model.to(...)
model.encoder.proj.to_empty(device="cpu")   # a meta submodule: materialise, then load or init its weights
mask = torch.ones(n, device=x.device)  # a tensor created inside forward()
self.register_buffer("mask", mask)     # a tensor attribute that must follow module.to()
```

`gpudoctor.device_map(model)` prints where every parameter and buffer lives.
Related: the lint rule [tensor-to-unassigned](../rules/tensor-to-unassigned.md).""",
        says="An op needs all its tensors on one device. Modules move in place with .to(), but tensor.to() returns a new tensor, and tensors made in forward() without device= stay on the CPU.",
        fix_cases={
            "module-split": '{module}.to("{device}")   # modules move in place; every parameter and buffer goes along',
            "meta": '{module}.to_empty(device="{device}")   # its weights were never materialised (meta device): then load or initialise them',
            "module-apart": '{module}.to("{device}")   # or model.to("{device}") after building the model',
            "input-apart": '{input} = {input}.to("{device}")   # before calling {module}; tensor.to() returns a new tensor: assign the result',
            "tensor-apart": '{tensor} = {tensor}.to("{device}")   # or create it with device=x.device; a plain tensor attribute does not move with module.to(): register_buffer() it',
            "unknown": "move every operand of the failing line to one device (x = x.to(device) — assign the result)",
        },
    ),
    FindingDoc(
        id="module-input-device",
        severity="warn",
        area="devices",
        emitted_by="[`gpudoctor run`](../commands/run.md), `gpudoctor.watch()`",
        summary="""A module was called with a tensor on another device than its own parameters (or
buffers) — seen at the call, before any op failed. When the same module then fails, the
[device-mismatch](device-mismatch.md) error says it all and this warning is not shown.""",
        evidence="""`module` (qualified name and class), `parameters on` (the device of its first parameter or
buffer), the input by its position or keyword (`input`, `input #2`, `mask`) with its
device, `source` and `line`.""",
        why="""The first op combining the two raises *Expected all tensors to be on the same device*;
if the module moves its input itself, every call pays a copy between devices. 0-dim
tensors are not reported (a CPU scalar mixes with any device), nor modules whose weights
accelerate's offloading hooks move.""",
        fix="""Move the input, or the module:

```python
x = x.to("cuda:0")        # assign the result: tensor.to() returns a new tensor
model.encoder.to("cuda:0")
```""",
        checked="""`gpudoctor run` wraps `nn.Module.__call__` for a short window only: from the start until a
few passes over every module have gone by with nothing new, again after every
`model.to()` / `.cuda()` and at every new epoch (`iter(DataLoader)`). Outside the window,
module calls run untouched.""",
        says="The first op that combines them raises 'Expected all tensors to be on the same device' (or, if the module moves the input itself, every call pays a copy).",
        fix_cases={
            "meta": '{module}.to_empty(device="{device}")   # then load or initialise its weights',
            "move": '{input} = {input}.to("{module_device}")   # before calling {module}; or {module}.to("{device}")',
        },
    ),
)
