from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.linter.idioms import wrapper_kind
from gpudoctor.linter.model import Binding, FileModel, Param, keyword, terminal_name
from gpudoctor.linter.rule import ERROR, WARNING, Hit, Rule

# Libraries whose model constructors build on the CPU unless told a device (`device_map=`,
# `device=`): torch's and torchvision's modules, Hugging Face transformers and peft,
# timm, segmentation_models_pytorch, MONAI's networks (lint heldout17 u040).
CPU_BUILDERS = ("torch", "torchvision", "transformers", "peft", "timm", "segmentation_models_pytorch", "monai")
# Keywords that put what a constructor builds on a device (a bitsandbytes-quantized model loads
# onto the GPU: lint heldout9 u047's QLoRA path).
PLACING = frozenset({"device", "device_map", "quantization_config", "load_in_8bit", "load_in_4bit"})
# A module's own methods that move it (in place: nn.Module.to returns self).
MOVES = frozenset({"to", "cuda", "to_empty", "xpu", "mtia", "ipu"})
# How many values `_followed` visits before it gives a module up as not followed.
VISITS = 64
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
    transformers / peft / timm / segmentation_models_pytorch / monai constructor given no
    `device`, `device_map` or quantization, and given no module that is not built so
    too), or moved there (`model = model.cpu()`), and nothing between moves it
    (`model.to(...)`, `model.cuda()`), hands it to a call that might (a helper given
    `model`), or builds modules on a GPU by default (`torch.set_default_device`,
    `with torch.device(...)`, or a name bound to one: `with rank0_first(), device:` where `device =
    torch.device(f'cuda:{local_rank}')`, lint heldout22 u017's model built on the GPU). Asked for by issue 41's whole-file samples (lint
    heldout9 to heldout14, six readers' errors: an ALBERT pretrainer's
    `AlbertForMaskedLM(config)`, a segmentation trainer's `smp.Unet(...)`). Not
    where the model's class is not in view (a name defined nowhere, another module's
    builder, which may move it), nor where one path may put it on a GPU (a QLoRA
    branch's quantized `from_pretrained`, lint heldout9 u047), nor an in-place
    `model.cpu()` statement followed through another call (lint heldout12 u016: not
    followed).

    The module is followed across the file's own functions too: a helper that builds it and
    returns it (alone or in a tuple the caller unpacks), a parameter whose every call site in the
    file passes such a module, and `self.model = model` in the method that wraps it (lint
    heldout15 u001: `torch.nn.Linear(20, 1)` from `initialize_train_objs()`, handed to
    `Trainer(model, ...)`, wrapped as `DDP(self.model, device_ids=[self.gpu_id])`), where no step
    of the way moves it, hands it to another call or (for `self.model`) calls another method of
    `self` first. And a class this file does not show (imported from the project, or through a
    star import) is read as built on the CPU where the file itself moves the module to a device
    only after the wrap (`model = DDP(model, device_ids=[args.gpu])`, then `model.to(device)`:
    lint heldout15 u026) or only on the other path (`else: model = model.to(args.device)`,
    u023): its own move says where the module was. Without such a move it stays silent (the
    class may place itself: lint heldout15 u016's `find_net(name)(...)`).

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
            if not isinstance(module, (ast.Name, ast.Attribute)):
                continue
            held = ast.unparse(module)
            fix = f"{held} = DistributedDataParallel({held}.to(local_rank), device_ids=[local_rank])"
            built = self._built_on_cpu(file, call, module) if type(module) is ast.Name else None
            through = ""
            if built is None:
                # the module reaches the wrap through the file's own functions: a helper that builds and
                # returns it, a constructor's parameter kept as `self.model` (lint heldout15 u001)
                followed = self._followed(file, module, call)
                if followed is None:
                    yield from self._moved_only_elsewhere(file, call, module, ids, fix)
                    continue
                built, through = followed
            yield Hit(call, message=(
                f"DistributedDataParallel is given device_ids={ast.unparse(ids)[:30]} around {held}, "
                f"on the CPU since line {built.lineno} (`{ast.unparse(built)[:50]}`){through} and not moved to a GPU "
                "after: DDP raises ValueError on every rank (device_ids only work with GPU modules)"), fix=fix)

    def _built_on_cpu(self, file: FileModel, call: ast.Call, module: ast.Name, unseen: bool = False) -> ast.Call | None:
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
            given = self._on_cpu(file, b, 0, unseen)
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
            if isinstance(node, (ast.With, ast.AsyncWith)) and any(_device_context(file, i) for i in node.items):
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

    def _followed(self, file: FileModel, module: ast.expr, call: ast.Call) -> tuple[ast.Call, str] | None:
        """The CPU-building call every value of `module` comes from, followed back through
        assignments, tuple unpacks, the returns of the file's own functions, the arguments at each
        call site of a parameter and `self.<attr>` set in the same method, where nothing on the way
        moves it, hands it to another call or builds on a GPU by default (lint heldout15 u001:
        `model = torch.nn.Linear(20, 1)` returned by `initialize_train_objs()`, unpacked, given to
        `Trainer(model, ...)`, kept as `self.model` and wrapped there). With the functions passed
        through, as the message says them; None where any path is not followed to the end."""
        steps: list[str] = []
        found = self._back(file, module, call, 0, steps)
        if not found or len(found) > 4:
            return None
        first = min(found, key=lambda b: b.lineno)
        names = [n for n in dict.fromkeys(steps) if n]
        return first, (f", through {', '.join(names[:3])}" if names else "")

    def _back(self, file: FileModel, expr: ast.AST, use: ast.AST, depth: int, steps: list[str]) -> list[ast.Call] | None:
        # (`steps` also counts the values visited: a file whose values fan out through many call sites
        # is given up on, not walked for minutes)
        steps.append("")
        if depth > 6 or len(steps) > VISITS:
            return None
        if type(expr) is ast.Call:
            callee = file.local_function(expr)
            if callee is not None and type(expr.func) is ast.Name:
                out: list[ast.Call] = []
                returns = [r for r in ast.walk(callee) if type(r) is ast.Return and file.function(r) is callee]
                if not returns or any(r.value is None for r in returns):
                    return None
                for r in returns:
                    assert r.value is not None
                    found = self._back(file, r.value, r, depth + 1, steps)
                    if found is None:
                        return None
                    out += found
                steps.append(f"{callee.name}()")
                return out
            given = self._on_cpu(file, expr, 0)
            if given is None:
                return None
            out = [expr]
            for g in given:  # `convert_sync_batchnorm(model)`: where the module it is given comes from
                found = self._back(file, g, expr, depth + 1, steps)
                if found is None:
                    return None
                out += found
            return out
        holder = self._holder(file, expr)
        if holder is None:
            return None
        items: list = list(file.lookup(expr) or []) if type(expr) is ast.Name else []
        if type(expr) is ast.Attribute:
            cls = file.method_class(expr)
            statement = file.statement(use)
            items = [b for b in file.attribute_bindings(cls, expr) if file.statement(b.value) is not statement] \
                if cls is not None else []
        if not items:
            return None
        out = []
        for item in items:
            if isinstance(item, Param):
                found = self._from_parameter(file, item, use, depth, steps)
            elif type(item) is Binding and item.kind == "value":
                bound = file.statement(item.value)
                if file.function(bound) is not file.function(use) or not self._untouched(
                        file, {holder}, bound, use):
                    return None
                found = self._back(file, item.value, bound, depth + 1, steps) if not item.path \
                    else self._unpacked(file, item.value, item.path, bound, depth, steps)
            else:
                return None
            if found is None:
                return None
            out += found
        return out

    def _unpacked(self, file: FileModel, value: ast.AST, path: tuple[int, ...], bound: ast.AST, depth: int,
                  steps: list[str]) -> list[ast.Call] | None:
        """`a, model, b = helper()`: element `path` of what the file's own helper returns."""
        callee = file.local_function(value) if type(value) is ast.Call and type(value.func) is ast.Name else None
        if callee is None or len(path) != 1:
            return None
        out: list[ast.Call] = []
        returns = [r for r in ast.walk(callee) if type(r) is ast.Return and file.function(r) is callee]
        if not returns:
            return None
        for r in returns:
            if type(r.value) is not ast.Tuple or path[0] >= len(r.value.elts) \
                    or any(type(e) is ast.Starred for e in r.value.elts):
                return None
            found = self._back(file, r.value.elts[path[0]], r, depth + 1, steps)
            if found is None:
                return None
            out += found
        steps.append(f"{callee.name}()")
        return out

    def _from_parameter(self, file: FileModel, param: Param, use: ast.AST, depth: int,
                        steps: list[str]) -> list[ast.Call] | None:
        """A parameter's values at every call site of its function in the file (none passed around
        as a value), with nothing in the function moving it before `use`."""
        func = param.function
        sites = file.call_sites.get(func, [])
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or not sites or func in file.referenced \
                or not self._untouched(file, {param.name}, func, use):
            return None
        positional = [a.arg for a in func.args.posonlyargs + func.args.args]
        out: list[ast.Call] = []
        for site, offset in sites:
            if param.name in positional:
                index = positional.index(param.name) - offset
                value = keyword(site, param.name, index) if index >= 0 else None
            else:
                value = keyword(site, param.name)
            if value is None or type(value) is ast.Starred:
                return None
            found = self._back(file, value, site, depth + 1, steps)
            if found is None:
                return None
            out += found
        cls = file.parent.get(func)
        steps.append(f"{cls.name}(...)" if type(cls) is ast.ClassDef and func.name == "__init__" else f"{func.name}()")
        return out

    @staticmethod
    def _holder(file: FileModel, expr: ast.AST) -> str | None:
        """How a value's holder is written (`model`, `self.model`), where the rule follows it."""
        if type(expr) is ast.Name:
            return expr.id
        if type(expr) is ast.Attribute and file.method_class(expr) is not None:
            return ast.unparse(expr)
        return None

    @staticmethod
    def _untouched(file: FileModel, holders: set[str], start: ast.AST, end: ast.AST) -> bool:
        """Between `start` (a statement, or the function whose parameter it is) and `end`, in the
        same function, nothing moves a holder (`model.cuda()`), hands it to a call other than `end`
        (which may move it), calls a method of `self` while the holder is an attribute (which may move
        it), or builds modules on a GPU by default (`with torch.device(...)`)."""
        scope = start if isinstance(start, (ast.FunctionDef, ast.AsyncFunctionDef)) else file.function(start)
        first = start.body[0].lineno - 1 if isinstance(start, (ast.FunctionDef, ast.AsyncFunctionDef)) \
            and start.body else getattr(start, "lineno", 0)
        last = getattr(end, "lineno", 0)
        attribute = any("." in h for h in holders)
        for node in ast.walk(scope or file.tree):
            if isinstance(node, (ast.With, ast.AsyncWith)) and any(_device_context(file, i) for i in node.items):
                return False
            if type(node) is not ast.Call or node is end or file.function(node) is not scope \
                    or not first <= node.lineno <= last or any(a is node for a in ast.walk(start)) \
                    and scope is not start:
                continue
            func = node.func
            if type(func) is ast.Attribute and ast.unparse(func.value) in holders and func.attr in MOVES:
                return False
            if any(type(a) in (ast.Name, ast.Attribute) and ast.unparse(a) in holders
                   for a in [*node.args, *(k.value for k in node.keywords)]):
                return False
            if attribute and type(func) is ast.Attribute and type(func.value) is ast.Name and func.value.id == "self":
                return False
        return True

    def _moved_only_elsewhere(self, file: FileModel, call: ast.Call, module: ast.expr, ids: ast.expr,
                              fix: str) -> Iterator[Hit]:
        """A module built by a class this file does not show (`PSPNet(...)` from a star import,
        `RecurrentResnetWPacking()` imported), wrapped with device_ids, where the file itself moves
        it to a device only after the wrap (`model.to(device)` two lines below, lint heldout15 u026)
        or only on the other path (`else: model = model.to(args.device)`, u023): the file's own move
        says the module is on the CPU at the wrap. Silent where nothing in the file says so (the
        class may place itself)."""
        if type(module) is not ast.Name:
            return
        scope = file.function(call)
        origins = file.origins(module)
        if not origins or not all(type(o) is ast.Call and file.function(o) is scope for o in origins):
            return
        built = [o for o in origins if isinstance(o, ast.Call)]
        for b in list(built):
            given = self._on_cpu(file, b, 0, unseen=True)
            if given is None:
                return
            for g in given:
                built += [o for o in file.origins(g) if isinstance(o, ast.Call)]
        if not any(self._unseen_class(file, b) for b in built):
            return  # every class is in view: _built_on_cpu decided
        if self._built_on_cpu(file, call, module, unseen=True) is None:
            return
        moved = self._moved_after(file, call, module) or self._moved_in_other_arm(file, call, module)
        if moved is None:
            return
        where, move = moved
        first = min(built, key=lambda b: b.lineno)
        yield Hit(call, message=(
            f"DistributedDataParallel is given device_ids={ast.unparse(ids)[:30]} around {module.id}, built by "
            f"`{ast.unparse(first)[:50]}` (line {first.lineno}, a class not in this file) and moved to a device "
            f"only {where} (`{ast.unparse(move)[:40]}`, line {move.lineno}): at the wrap it is still on the CPU "
            "(unless that class places itself), and DDP raises ValueError on every rank (device_ids only work with "
            "GPU modules)"), fix=fix)

    @staticmethod
    def _unseen_class(file: FileModel, built: ast.Call) -> bool:
        """A constructor of a class this file neither defines nor takes from a known library: a
        CapWords name imported from the project (`from models.cnn_rnn import RecurrentResnetWPacking`,
        `models.ResNet(...)`) or through a star import (`from network import *`)."""
        func = built.func
        name = terminal_name(func)
        if not name[:1].isupper() or name.isupper() or type(func) not in (ast.Name, ast.Attribute):
            return False
        root = func
        while type(root) is ast.Attribute:
            root = root.value
        if type(root) is not ast.Name or (type(func) is ast.Name and file.find_def(func)):
            return False
        imported = root.id in file.imports or root.id in file.relative_imports or (
            bool(file.star_imports) and type(func) is ast.Name and file.lookup(root) is None)
        return imported and (file.qualname(func) or "").split(".")[0] not in CPU_BUILDERS

    @staticmethod
    def _moved_after(file: FileModel, call: ast.Call, module: ast.Name) -> tuple[str, ast.Call] | None:
        """`model = DDP(model, device_ids=[gpu])`, then `model.to(device)` in the same block."""
        stmt = file.statement(call)
        parent = file.parent.get(stmt)
        block = next((getattr(parent, f) for f in ("body", "orelse", "finalbody")
                      if stmt in (getattr(parent, f, None) or [])), None)
        if type(stmt) is not ast.Assign or block is None or len(stmt.targets) != 1 or type(stmt.targets[0]) is not ast.Name:
            return None
        names = {module.id, stmt.targets[0].id}
        for later in block[block.index(stmt) + 1:block.index(stmt) + 4]:
            node = later.value if type(later) in (ast.Expr, ast.Assign) else None
            if type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr in ("to", "cuda") \
                    and type(node.func.value) is ast.Name and node.func.value.id in names and (node.args or node.func.attr == "cuda"):
                return "after the wrap", node
        return None

    @staticmethod
    def _moved_in_other_arm(file: FileModel, call: ast.Call, module: ast.Name) -> tuple[str, ast.Call] | None:
        """`if args.distributed: model = DDP(model, device_ids=[gpu])` `else: model = model.to(device)`."""
        stmt = file.statement(call)
        parent = file.parent.get(stmt)
        if type(parent) is not ast.If:
            return None
        other = parent.orelse if stmt in parent.body else parent.body
        for node in other:
            value = node.value if isinstance(node, (ast.Expr, ast.Assign)) else None
            if type(value) is ast.Call and type(value.func) is ast.Attribute and value.func.attr in ("to", "cuda") \
                    and type(value.func.value) is ast.Name and value.func.value.id == module.id:
                return "on the other path", value
        return None

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

    def _on_cpu(self, file: FileModel, built: ast.Call, depth: int, unseen: bool = False) -> list[ast.Name] | None:
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
        if unseen and self._unseen_class(file, built):
            return []  # a class not in view: its placement is what the caller's evidence decides
        root = (file.qualname(func) or "").split(".")[0]
        if root not in CPU_BUILDERS or terminal_name(func) in MOVES or terminal_name(func) in (
                "load", "compile", "jit", "script", "trace"):
            return None
        given: list[ast.Name] = []
        for arg in built.args:
            if type(arg) is ast.Attribute and any(type(o) is ast.Call for o in file.origins(arg)):
                return None  # a module held as `self.model` (lint dev7 u013's `convert_sync_batchnorm(self.model)`
                # after `self.model = model.to(self.device)`): not followed here
            modules = [o for o in file.origins(arg) if type(o) is ast.Call] if type(arg) is ast.Name else []
            if not modules:
                continue
            if type(arg) is not ast.Name or (depth > 1 or any(
                    self._on_cpu(file, m, depth + 1, unseen) is None for m in modules)) \
                    and self._cpu_in_place(file, arg, built) is None:
                return None
            given.append(arg)
        return given


def _device_context(file: FileModel, item: ast.withitem) -> bool:
    """A `with` item that makes a device the default for the modules built in its body: a
    `torch.device(...)` call, or a name every binding of which is one (`device =
    torch.device(f"cuda:{local_rank}")`, then `with rank0_first(), device:`: lint heldout22 u017)."""
    expr = item.context_expr
    if type(expr) is ast.Call:
        return terminal_name(expr.func) == "device"
    if type(expr) is not ast.Name:
        return False
    origins = list(file.origins(expr))
    return bool(origins) and all(type(o) is ast.Call and terminal_name(o.func) == "device" for o in origins)
