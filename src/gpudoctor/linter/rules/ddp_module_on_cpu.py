from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.linter.idioms import wrapper_kind
from gpudoctor.linter.model import FileModel, keyword, terminal_name
from gpudoctor.linter.rule import ERROR, WARNING, Hit, Rule

# Libraries whose model constructors build on the CPU unless told a device (`device_map=`,
# `device=`): torch's and torchvision's modules, Hugging Face transformers and peft,
# timm, segmentation_models_pytorch.
CPU_BUILDERS = ("torch", "torchvision", "transformers", "peft", "timm", "segmentation_models_pytorch")
# Keywords that put what a constructor builds on a device (a bitsandbytes-quantized model loads
# onto the GPU: lint heldout9 u047's QLoRA path).
PLACING = frozenset({"device", "device_map", "quantization_config", "load_in_8bit", "load_in_4bit"})
# A module's own methods that move it (in place: nn.Module.to returns self).
MOVES = frozenset({"to", "cuda", "to_empty", "xpu", "mtia", "ipu"})
# What makes every new module start on a GPU, or builds it there.
DEFAULT_DEVICE = ("set_default_device", "set_default_tensor_type", "set_default_dtype_and_device")


class DdpModuleOnCpu(Rule):
    """DistributedDataParallel given `device_ids` around a module whose
    parameters are on the CPU: DDP raises ValueError ("DistributedDataParallel
    device_ids and output_device arguments only work with single-device/multiple-
    device GPU modules or CPU modules, but got device_ids [0], output_device None,
    and module parameters {device(type='cpu')}", DDP's `__init__` in
    torch/nn/parallel/distributed.py) on every rank, before training.

    Flagged, an error: `DDP(model, device_ids=[local_rank])` where every value
    `model` may hold there is built on the CPU in the same function (a class this file
    defines whose body moves nothing to a device, or a torch / torchvision /
    transformers / peft / timm / segmentation_models_pytorch constructor given no
    `device`, `device_map` or quantization, and given no module that is not built so
    too), or moved there (`model = model.cpu()`), and nothing between moves it
    (`model.to(...)`, `model.cuda()`), hands it to a call that might (a helper given
    `model`), or builds modules on a GPU by default (`torch.set_default_device`,
    `with torch.device(...)`). Asked for by issue 41's whole-file samples (lint
    heldout9 to heldout14, six readers' errors: an ALBERT pretrainer's
    `AlbertForMaskedLM(config)`, a segmentation trainer's `smp.Unet(...)`). Not
    where the model's class is not in view (a name defined nowhere, another module's
    builder, which may move it), nor where one path may put it on a GPU (a QLoRA
    branch's quantized `from_pretrained`, lint heldout9 u047), nor an in-place
    `model.cpu()` statement followed through another call (lint heldout12 u016: not
    followed).

    A warning: DDP built with no `device_ids` around a module nothing moved before,
    and the wrapper moved to a device only after it (`DistributedDataParallel(model)
    .to(device)`, or `model = DDP(model)` then `model.to(device)`: lint heldout8 u019, a
    PointGroup issue; heldout9 u004, a course file): when DDP was built the parameters
    were still on the CPU, unless code not shown moved them; with NCCL its first
    broadcast of them raises, and DDP is never told the rank's device.
    """

    id = "ddp-module-on-cpu"
    severity = ERROR  # DDP's own ValueError, on every rank
    message = "DistributedDataParallel is given device_ids around a module still on the CPU: ValueError on every rank"
    fix = "model = DistributedDataParallel(model.to(local_rank), device_ids=[local_rank])"
    needles = ("DistributedDataParallel", "DDP")

    VALID = (
        '''
        import torch.nn as nn
        from torch.nn.parallel import DistributedDataParallel as DDP

        def main(local_rank):
            model = nn.Linear(4, 2)
            model.to(local_rank)
            model = DDP(model, device_ids=[local_rank])
        ''',
        '''
        import torch.nn as nn
        from torch.nn.parallel import DistributedDataParallel as DDP

        def main(local_rank):
            model = nn.Linear(4, 2)
            model = DDP(model)  # a CPU module without device_ids: DDP over gloo
        ''',
    )
    INVALID = (
        '''
        import torch.nn as nn
        from torch.nn.parallel import DistributedDataParallel as DDP

        def main(local_rank):
            model = nn.Linear(4, 2)
            model = DDP(model, device_ids=[local_rank])  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        if any(name in file.text for name in DEFAULT_DEVICE):
            return
        for call in file.calls:
            if wrapper_kind(file, call) != "DistributedDataParallel" or type(call.func) is ast.Attribute \
                    and call.func.attr in MOVES:
                continue
            ids = keyword(call, "device_ids", 1)
            module = keyword(call, "module", 0)
            if ids is None or (type(ids) is ast.Constant and ids.value is None):
                moved = self._wrapper_moved(file, call, module)
                if moved is not None:
                    yield Hit(call, severity=WARNING, message=(
                        f"DistributedDataParallel is built around {getattr(module, 'id', 'the module')} with no device_ids, "
                        f"and the wrapper is moved to a device only after it (line {moved.lineno}): when DDP was "
                        "built the parameters were still where the module was (the CPU, unless code not shown "
                        "moved it); with NCCL its first broadcast of them raises, and DDP never learns the "
                        "rank's device"),
                        fix="model = DistributedDataParallel(model.to(local_rank), device_ids=[local_rank])")
                continue
            if type(module) is not ast.Name:
                continue
            built = self._built_on_cpu(file, call, module)
            if built is None:
                continue
            yield Hit(call, message=(
                f"DistributedDataParallel is given device_ids={ast.unparse(ids)[:30]} around {module.id}, "
                f"on the CPU since line {built.lineno} (`{ast.unparse(built)[:50]}`) and not moved to a GPU "
                "after: DDP raises ValueError on every rank (device_ids only work with GPU modules)"),
                fix=f"{module.id} = DistributedDataParallel({module.id}.to(local_rank), device_ids=[local_rank])")

    def _built_on_cpu(self, file: FileModel, call: ast.Call, module: ast.Name) -> ast.Call | None:
        """The (first) CPU-building call of `module`'s values, where each is one and nothing in the
        function moves the module or hands it on between it and the wrap; else None."""
        scope = file.function(call)
        origins = file.origins(module)
        if not origins or not all(type(o) is ast.Call and file.function(o) is scope for o in origins):
            return None
        built = [o for o in origins if isinstance(o, ast.Call)]
        names = {module.id} | {t.id for b in built for t in self._targets(file, b)}
        cpu = self._cpu_in_place(file, module, call)
        for b in list(built) if cpu is None else []:
            given = self._on_cpu(file, b, 0)
            if given is None:
                return None
            names |= {g.id for g in given}
            for g in given:
                moved = self._cpu_in_place(file, g, b)
                built += [moved] if moved is not None else [o for o in file.origins(g) if isinstance(o, ast.Call)]
        if cpu is not None:
            built = [cpu]
        first = min(b.lineno for b in built)
        for node in ast.walk(scope or file.tree):
            if isinstance(node, (ast.With, ast.AsyncWith)) and any(
                    terminal_name(i.context_expr.func) == "device" for i in node.items
                    if type(i.context_expr) is ast.Call):
                return None
            if type(node) is not ast.Call or node is call or not first <= node.lineno <= call.lineno \
                    or file.function(node) is not scope:
                continue
            func = node.func
            if type(func) is ast.Attribute and type(func.value) is ast.Name and func.value.id in names \
                    and func.attr in MOVES:
                return None  # moved in place
            if any(type(a) is ast.Name and a.id in names for a in [*node.args, *(k.value for k in node.keywords)]) \
                    and node not in built:
                return None  # handed to a call that may move it
        return min(built, key=lambda b: b.lineno)

    @staticmethod
    def _wrapper_moved(file: FileModel, call: ast.Call, module: ast.expr | None) -> ast.Call | None:
        """`DDP(model).to(device)`, or `model = DDP(model)` then `model.to(device)` / `.cuda()` in the
        same function, where nothing moved the module before the wrap (lint heldout8 u019, a
        PointGroup issue's `DistributedDataParallel(model).to(device)`; heldout9 u004, a course
        file's `model = DDP(model)` then `model.to(device)`): the move that places the model comes
        after DDP was built. The move, or None."""
        if type(module) is not ast.Name:
            return None  # `DDP(model.cuda())`: moved in the call
        scope = file.function(call)
        if any(type(o) is ast.Call and type(o.func) is ast.Attribute and o.func.attr in MOVES
               and not any(n is call for n in ast.walk(o)) for o in file.origins(module)):
            return None
        for node in ast.walk(scope or file.tree):
            if type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr in MOVES \
                    and type(node.func.value) is ast.Name and node.func.value.id == module.id \
                    and file.function(node) is scope and node.lineno < call.lineno:
                return None  # moved before the wrap
        parent = file.parent.get(call)
        if type(parent) is ast.Attribute and parent.attr in MOVES:
            moved = file.parent.get(parent)
            return moved if type(moved) is ast.Call else None
        if type(parent) is not ast.Assign or len(parent.targets) != 1 or type(parent.targets[0]) is not ast.Name:
            return None
        held = parent.targets[0].id
        later = [node for node in ast.walk(scope or file.tree)
                 if type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr in MOVES
                 and type(node.func.value) is ast.Name and node.func.value.id == held
                 and file.function(node) is scope and node.lineno > call.lineno]
        return min(later, key=lambda n: n.lineno) if later else None

    @staticmethod
    def _cpu_in_place(file: FileModel, name: ast.Name, before: ast.AST) -> ast.Call | None:
        """A bare `name.cpu()` statement of the same function above `before`, after every value
        `name` may hold there and with no move of `name` after it (lint heldout12 u016: `model.cpu()`
        before `convert_sync_batchnorm(model)` and the wrap)."""
        scope = file.function(before)
        line = getattr(before, "lineno", 0)
        after = max((getattr(o, "lineno", 0) for o in file.origins(name)), default=0)
        last: ast.Call | None = None
        moved = 0
        for node in ast.walk(scope or file.tree):
            if type(node) is not ast.Call or type(node.func) is not ast.Attribute or type(node.func.value) is not ast.Name \
                    or node.func.value.id != name.id or file.function(node) is not scope or not after < node.lineno < line:
                continue
            if node.func.attr == "cpu" and type(file.parent.get(node)) is ast.Expr:
                last = node if last is None or node.lineno > last.lineno else last
            elif node.func.attr in MOVES:
                moved = max(moved, node.lineno)
        return last if last is not None and last.lineno > moved else None

    @staticmethod
    def _targets(file: FileModel, built: ast.Call) -> list[ast.Name]:
        stmt = file.parent.get(built)
        if type(stmt) is ast.Assign:
            return [t for t in stmt.targets if type(t) is ast.Name]
        return []

    def _on_cpu(self, file: FileModel, built: ast.Call, depth: int) -> list[ast.Name] | None:
        """The call leaves a module on the CPU: `x.cpu()`, a class of this file whose body moves
        nothing, or a library constructor given no device; a library call given a module
        (`get_peft_model(base_model, config)`) where that module is built on the CPU too. The
        names of the modules it was given (checked for moves by the caller); None where it may
        not be on the CPU."""
        func = built.func
        if type(func) is ast.Attribute and func.attr == "cpu" and not built.args:
            return []
        if any(k.arg in PLACING or k.arg is None for k in built.keywords) \
                or any(type(a) is ast.Starred for a in built.args):
            return None
        if type(func) is ast.Name:
            defs = file.find_def(func)
            if defs:
                plain = len(defs) == 1 and type(defs[0]) is ast.ClassDef and not any(
                    word in ast.unparse(defs[0]) for word in ("cuda", "device", ".to("))
                return [] if plain else None
        root = (file.qualname(func) or "").split(".")[0]
        if root not in CPU_BUILDERS or terminal_name(func) in MOVES or terminal_name(func) in (
                "load", "compile", "jit", "script", "trace"):
            return None
        given: list[ast.Name] = []
        for arg in built.args:
            modules = [o for o in file.origins(arg) if type(o) is ast.Call] if type(arg) is ast.Name else []
            if not modules:
                continue
            if type(arg) is not ast.Name or (depth > 1 or any(
                    self._on_cpu(file, m, depth + 1) is None for m in modules)) \
                    and self._cpu_in_place(file, arg, built) is None:
                return None
            given.append(arg)
        return given
