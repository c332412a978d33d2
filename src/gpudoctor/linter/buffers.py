"""Does a module hold buffers that DistributedDataParallel broadcasts?

DDP's forward broadcasts the module's buffers from rank 0 (BatchNorm's running
statistics, anything `register_buffer`ed) whenever `broadcast_buffers` is on
(the default) and the previous forward ran with grad enabled, `torch.no_grad()`
or not (torch/nn/parallel/distributed.py: `will_sync_module_buffers`). A model
with no buffers makes no collective in a no-grad forward. The answer is one of
HAS, NONE or UNKNOWN, with the chain that decided it (or that could not be
followed), as the message shows it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass

from gpudoctor.linter.model import FileModel, terminal_name

HAS, NONE, UNKNOWN = "has", "none", "unknown"

# torch.nn layers that carry buffers (running statistics).
BUFFERED = {"BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "LazyBatchNorm1d", "LazyBatchNorm2d",
            "LazyBatchNorm3d", "convert_sync_batchnorm"}
# torch.nn layers without buffers (a sample: the common ones in scripts).
BUFFERLESS = {
    "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "ReLU", "ReLU6", "LeakyReLU", "PReLU", "GELU", "SiLU", "ELU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax",
    "Dropout", "Dropout2d", "Dropout3d", "Embedding", "EmbeddingBag", "LayerNorm", "GroupNorm", "RMSNorm",
    "GRU", "LSTM", "RNN", "MultiheadAttention", "TransformerEncoderLayer", "TransformerDecoderLayer",
    "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d", "AdaptiveMaxPool2d", "Flatten", "Unflatten", "Identity", "Upsample", "PixelShuffle",
    "Parameter", "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "BCELoss", "BCEWithLogitsLoss",
}
# torchvision's model builders whose networks hold BatchNorm layers (torchvision.models.*:
# `resnet18(...)`, `models.vgg16_bn(...)`); ViT, Swin, ConvNeXt, AlexNet and plain VGG are not here.
TORCHVISION_BATCHNORM = re.compile(
    r"(resnet\d+|resnext\w+|wide_resnet\w+|vgg\d+_bn|densenet\d+|mobilenet_v[23]\w*|efficientnet\w+|"
    r"inception_v3|googlenet|shufflenet\w+|mnasnet\w+|regnet_\w+)")
# Attributes a module's __init__ sets that are not submodules.
PLAIN = {"int", "float", "str", "bool", "len", "list", "dict", "tuple", "set", "range", "getattr", "max", "min"}
CONTAINERS = {"Sequential", "ModuleList", "ModuleDict"}
# Calls that return the module they are given.
SAME_MODULE = {"to", "cuda", "cpu", "half", "float", "double", "bfloat16", "train", "eval", "requires_grad_"}
BRANCHES = (ast.If, ast.IfExp, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.With, ast.Match)
DEPTH = 6


@dataclass(frozen=True)
class Buffers:
    answer: str  # HAS, NONE or UNKNOWN
    why: str  # the chain that decided it, or the step that could not be followed


def buffers(file: FileModel, module: ast.AST) -> Buffers:
    """Whether the module `module` evaluates to holds buffers."""
    return _expr(file, module, 0)


def _expr(file: FileModel, node: ast.AST, depth: int) -> Buffers:
    if depth > DEPTH:
        return Buffers(UNKNOWN, f"`{_src(node)}` is built too far away to follow")
    if isinstance(node, ast.Call):
        func = node.func
        name = terminal_name(func)
        if type(func) is ast.Attribute and name in SAME_MODULE:
            return _expr(file, func.value, depth + 1)
        if name in BUFFERED:
            return Buffers(HAS, f"`{_src(node)}` has running statistics")
        if (file.qualname(func) or "").startswith("torchvision.models.") and TORCHVISION_BATCHNORM.fullmatch(name):
            return Buffers(HAS, f"torchvision's `{name}` has BatchNorm layers")
        if name in CONTAINERS:
            return _all_parts(file, [a for a in node.args if not isinstance(a, ast.Starred)], depth, f"`{name}(...)`")
        if name in BUFFERLESS and not file.classes.get(name):
            return Buffers(NONE, f"`{name}` holds none")
        if type(func) is ast.Name and file.classes.get(name):
            return _class(file, file.classes[name][-1], depth)
        returned = [o for o in file.origins(node) if o is not node]
        if returned:  # a function of this file that builds the model
            return _all_ways(file, node, returned, depth)
        return Buffers(UNKNOWN, f"`{_src(func)}` is not defined in this file")
    if isinstance(node, (ast.Name, ast.Attribute)):
        origins = [o for o in file.origins(node) if o is not node]
        if not origins:
            return Buffers(UNKNOWN, f"`{_src(node)}` comes from outside this file")
        return _all_ways(file, node, origins, depth)
    return Buffers(UNKNOWN, f"`{_src(node)}` cannot be followed")


def _all_ways(file: FileModel, node: ast.AST, origins: list[object], depth: int) -> Buffers:
    """The values `node` may have: one answer when they all agree."""
    found = [_expr(file, o, depth + 1) if isinstance(o, ast.AST) else Buffers(UNKNOWN, f"`{_src(node)}` is a parameter")
             for o in origins]
    if len({f.answer for f in found}) == 1:
        return found[0]
    return Buffers(UNKNOWN, f"`{_src(node)}` may be built more than one way")


def _all_parts(file: FileModel, parts: Sequence[ast.AST], depth: int, what: str) -> Buffers:
    """A container of modules: HAS if any part has, NONE if every part has none."""
    found = [_expr(file, p, depth + 1) for p in parts]
    has = next((f for f in found if f.answer == HAS), None)
    if has is not None:
        return Buffers(HAS, f"{what} holds {has.why[1:] if has.why.startswith('`') else has.why}")
    unknown = next((f for f in found if f.answer == UNKNOWN), None)
    if unknown is not None:
        return unknown
    return Buffers(NONE, f"{what} holds none")


def _class(file: FileModel, cls: ast.ClassDef, depth: int) -> Buffers:
    """A module class of this file: the layers its methods build, and its
    base classes. A buffered layer built only on some path (`if use_bn:`)
    leaves the answer open."""
    for base in cls.bases:
        base_name = terminal_name(base)
        if base_name == "Module":
            continue
        if type(base) is ast.Name and file.classes.get(base_name):
            inherited = _class(file, file.classes[base_name][-1], depth + 1)
            if inherited.answer != NONE:
                return inherited
            continue
        return Buffers(UNKNOWN, f"`{cls.name}` derives from `{_src(base)}`, not defined in this file")
    open_path: Buffers | None = None
    for func in (s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))):
        for sub in ast.walk(func):
            if not isinstance(sub, ast.Call):
                continue
            name = terminal_name(sub.func)
            if name == "register_buffer" or name in BUFFERED:
                if func.name == "__init__" and not _branched(file, sub, func):
                    return Buffers(HAS, f"`{cls.name}` builds `{_src(sub.func)}` (line {sub.lineno})")
                open_path = Buffers(UNKNOWN, f"`{cls.name}` builds `{_src(sub.func)}` only on some path (line {sub.lineno})")
    if open_path is not None:
        return open_path
    init = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
    if init is None:
        return Buffers(NONE, f"`{cls.name}` holds none")
    parts = [s.value for s in ast.walk(init) if isinstance(s, ast.Assign) and isinstance(s.value, ast.Call)
             and any(type(t) is ast.Attribute and terminal_name(t.value) == "self" for t in s.targets)
             and not _plain(file, s.value)]
    found = _all_parts(file, parts, depth, f"`{cls.name}`")
    if found.answer == NONE:
        return Buffers(NONE, f"`{cls.name}` holds none")
    return found


def _plain(file: FileModel, call: ast.Call) -> bool:
    """A call that builds a plain value, not a submodule: `int(...)`, `torch.zeros(...)`."""
    name = terminal_name(call.func)
    if name in PLAIN:
        return True
    qualname = file.qualname(call.func) or ""
    return qualname.startswith("torch.") and name[:1].islower() and qualname.count(".") == 1


def _branched(file: FileModel, node: ast.AST, stop: ast.AST) -> bool:
    for above in file.ancestors(node):
        if above is stop:
            return False
        if isinstance(above, BRANCHES):
            return True
    return False


def _src(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 60 else text[:57] + "..."
