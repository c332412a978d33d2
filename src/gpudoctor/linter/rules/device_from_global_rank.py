from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from gpudoctor.linter.idioms import TORCH, one_node_group, rank_kind as plain_rank_kind
from gpudoctor.linter.model import FileModel, Param, constant, keyword, terminal_name
from gpudoctor.linter.rule import ERROR, WARNING, Hit, Rule

SETTERS = {"set_device", "set_device_index"}
MOVERS = {"to", "cuda"}
# Names that say "the rank" without saying which (a local rank says so: `local_rank`, `gpu`).
RANK_NAMES = {"rank", "global_rank"}
# A count of processes (or GPUs) on one node: `ngpus_per_node`, `args.gpus`, `nproc_per_node`, `torch.cuda.device_count()`.
PER_NODE = re.compile(r"gpus|per_node|nproc|device_count|n_gpu|ngpu|num_gpu", re.IGNORECASE)
# The index of a process on its node, by name (the spawn index the ImageNet example calls `gpu`).
LOCAL_INDEX = {"gpu", "local_rank", "gpu_id", "local_gpu", "gpu_idx", "gpu_index", "local_process_index"}
# A launch line the file itself writes down (its docstring, a comment) that starts several nodes:
# `torchrun --nnodes=2 --nproc_per_node=4 ...`.
MULTI_NODE = re.compile(r"--nnodes[= ]+0*([2-9]|[1-9]\d+)\b")


class DeviceFromGlobalRank(Rule):
    """`torch.cuda.set_device(rank)` with the *global* rank (RANK,
    `dist.get_rank()`): right on one node, but on a second node rank 8 asks
    for GPU 8 of an 8-GPU machine ("invalid device ordinal"), or ranks of two
    nodes crowd the wrong GPUs.

    Flagged: `torch.cuda.set_device(...)` / `torch.accelerator.set_device_index(...)`
    whose value comes (in this file) from `RANK`, `SLURM_PROCID` or
    `dist.get_rank()`; and, once a file (where no set_device is), the same value used as a
    device: `.to(rank)`, `.cuda(rank)`, `torch.device("cuda", rank)`,
    `torch.device(f"cuda:{rank}")`, a tensor made with `device="cuda:{}".format(rank)`
    (any spelling of the index in a device string: f-string, `.format`, `%`, `"cuda:" + str(rank)`; a
    lesson's all_reduce, issue 41's dev5), DDP's `device_ids=[rank]`, FSDP's
    `device_id=rank` (a research example's FSDP set-up, dev6) (following a
    parameter to the file's calls: `main(rank=int(os.environ["RANK"]))`, and to the calls of a
    function of the file it is handed to: `init_processes(test, args)`, whose `fn(rank, ...)` gives
    `test` the RANK it read, the PyTorch tutorial's shape under torchrun, lint heldout25 u033..u038), a
    device string bound to a name first (`cuda_device = f'cuda:{dist.get_rank()}'`,
    `torch.tensor(..., device=cuda_device)`), and `.to(dist.get_rank())` (dev7),
    and an attribute of a namespace the file fills from the global rank elsewhere
    (`train_model(..., rank=args.rank)` with `args.rank = int(os.environ["RANK"])` in
    its init_distributed_mode: lint heldout11), and one the function rewrites with the global
    rank on the way to the use, whatever its name says (`args.local_rank = dist.get_rank()`, then
    `torch.device('cuda', args.local_rank)`: lint heldout14; not a rewrite in another arm).
    The global rank a file computes the launcher's way counts too: a node's offset plus the process's
    index on it (`rank = args.rank * ngpus_per_node + gpu`, the ImageNet example's formula with `gpu` the
    spawn index), then `model.cuda(args.rank)`, `torch.cuda.set_device(args.rank)` or a checkpoint mapped
    to `'cuda:{}'.format(args.rank)` where the example uses `args.gpu` (lint heldout30b u033, a MoCo
    trainer; heldout22 u041, u062: a resume's map_location).
    `rank % torch.cuda.device_count()` and LOCAL_RANK are not flagged, nor a
    spawned worker's index; `rank % world_size` is (it is the rank itself: a
    course answer's `model.to(rank % world_size)`, issue 41's dev4). Where an
    excerpt calls `set_device(rank)` and never assigns `rank` (nor takes it as a
    parameter), the warning says that where it comes from cannot be followed
    (a one-line quote in heldout4 whose thread was this fault). Asked for
    by issue 41's samples. A warning: the script may only ever run on one node; an
    error where the file writes down a launch of several nodes (`torchrun --nnodes=2
    ...` in its docstring: lint heldout15 u030).

    One cause, one diagnostic: the set_device and the device uses of the same global rank
    after it (DDP's `device_ids=[rank]`, `.cuda(rank)`) are said once, at the set_device,
    naming those lines (lint heldout16: readers who pointed at `device_ids=`). Where the global
    rank is first made the device under another name (`device = rank`, then `.to(device)`), it is
    said at that line, where the fix goes (`device = local_rank`), naming the uses (lint heldout24
    u044, u045, heldout21 u045: the readers pointed there, lint at the first use below; not a name
    that says rank, `rank = dist.get_rank()`, which is right as a rank). accelerate's `process_index` is the
    global rank too (`local_process_index` the node's), and a Hugging Face model placed whole on one GPU
    (`from_pretrained(..., device_map={"": index})`) is a device use (lint heldout29 u004).

    Not flagged where RANK is the local rank because the file writes it so
    (`os.environ['RANK'] = str(arg.local_rank)` in main(), then `rank =
    int(os.environ['RANK'])` and `.to(rank)`: lint heldout19; rank-from-local-rank
    says that write).

    Not flagged where the job is one node by construction: its
    `init_process_group` is given `world_size=torch.cuda.device_count()`, so
    the global rank is the local rank (the same reading rank-from-local-rank
    makes); and `rank % world_size` is the local index when that "world size"
    is the GPU count of the machine (`world_size = torch.cuda.device_count()`).
    """

    id = "device-from-global-rank"
    message = "the GPU is chosen by the global rank: on a second node the index is past the GPUs there"
    fix = 'torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))'
    in_tests = False  # a test picks its devices and files for one machine on purpose
    needles = ("set_device", "RANK", "get_rank", "SLURM_PROCID", "process_index")

    VALID = (
        '''
        import os
        import torch

        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        ''',
        '''
        import torch
        import torch.distributed as dist

        torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
        ''',
        '''
        import torch
        import torch.distributed as dist

        world_size = torch.cuda.device_count()
        dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29500", rank=rank, world_size=world_size)
        torch.cuda.set_device(dist.get_rank())  # one node by construction: the rank is the local rank
        ''',
    )
    INVALID = (
        '''
        import torch
        import torch.distributed as dist

        dist.init_process_group(backend="nccl")
        rank = dist.get_rank()
        torch.cuda.set_device(rank)  # flagged
        ''',
        '''
        import torch

        torch.cuda.set_device(rank)  # flagged: `rank` is never assigned here, which one it is cannot be followed
        ''',
        '''
        import os
        import torch
        import torch.nn as nn
        import torch.distributed as dist

        def main(rank, world_size):
            dist.init_process_group("nccl", rank=rank, world_size=world_size)
            model = nn.Linear(10, 10).to(rank)  # flagged

        if __name__ == "__main__":
            main(rank=int(os.environ["RANK"]), world_size=int(os.environ["WORLD_SIZE"]))
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        if one_node_group(file) is not None:
            return  # world_size is this machine's GPU count: the global rank is the local rank
        said = False  # the global rank as a device is said once a file: one cause, however many uses
        severity, launch = self._launch(file)
        uses = list(self._global_uses(file))
        for call in file.calls:
            if terminal_name(call.func) not in SETTERS or not call.args:
                continue
            qualname = file.qualname(call.func) or ""
            if not qualname.startswith("torch."):
                continue
            kind, how = rank_kind(file, call.args[0])
            if not kind and type(call.args[0]) is ast.Attribute:
                # `args.rank = args.rank * ngpus_per_node + gpu`, then `torch.cuda.set_device(args.rank)` (lint
                # heldout30b u033): the namespace's attribute as the function rewrote it, or as the file fills it
                kind, how = self._reassigned_rank(file, call.args[0])
                if kind != "global":
                    kind, how = self._attribute_rank(file, call.args[0])
            if kind == "global":
                # the same rank used as a device further on (DDP's `device_ids=[rank]`, `.cuda(rank)`) is this
                # one cause: named as its other places, where a reader may point (lint heldout16 u048, u068)
                later = tuple(sorted({at.lineno for at, _, _, _ in uses} - {call.lineno}))
                yield Hit(call, severity=severity, message=f"the GPU is chosen by the global rank ({how}): on a second "
                          f"node the index is past the GPUs there (invalid device ordinal){launch}"
                          + (f"; the same rank is used as a device at line{'s' if len(later) > 1 else ''} "
                             f"{', '.join(map(str, later[:6]))}" if later and not said else ""),
                          also=later if not said else ())
                said = True
            elif self._unresolved_rank(file, call.args[0]):
                said = True
                name = ast.unparse(call.args[0])
                yield Hit(call, message=f"the GPU is chosen by `{name}`, which this file never assigns, so "
                          f"where it comes from cannot be followed: if `{name}` is the global rank, on a second node "
                          "the index is past the GPUs there (invalid device ordinal)")
        if said or not uses:
            return
        at, how, fsdp, value = uses[0]
        later = tuple(sorted({a.lineno for a, _, _, _ in uses[1:]} - {at.lineno}))
        binding = _device_binding(file, value)
        if binding is not None:  # said where the global rank becomes the device, its uses named as its other places
            later = tuple(sorted({a.lineno for a, _, _, _ in uses} - {binding.lineno}))
            shown = ", ".join(map(str, later[:6]))
            yield Hit(binding, severity=severity, message=f"`{ast.unparse(binding)[:60]}` makes the global rank "
                      f"({how}) the device, used as a GPU index at line{'s' if len(later) > 1 else ''} {shown}: on a "
                      f"second node the index is past the GPUs there (invalid device ordinal){launch}",
                      fix=f'{ast.unparse(binding.targets[0])} = ' + (
                          ast.unparse(binding.value).replace("process_index", "local_process_index")
                          if "process_index" in how else 'int(os.environ["LOCAL_RANK"])'), also=later)
            return
        yield Hit(at, severity=severity, message=f"the global rank ({how}) is used as a GPU index: on a second "
                  f"node the index is past the GPUs there (invalid device ordinal){launch}",
                  fix='FSDP(model, device_id=int(os.environ["LOCAL_RANK"]))' if fsdp else
                  'local_rank = int(os.environ["LOCAL_RANK"]); model.to(local_rank)', also=later)

    def _global_uses(self, file: FileModel) -> Iterator[tuple[ast.expr, str, bool, ast.expr]]:
        """Each use of the global rank as a device (`.to(rank)`, `device_ids=[rank]`, ...): where to say it,
        how the rank shows, whether it is FSDP's `device_id`, and the value used."""
        for call in file.calls:
            value = self._device_value(file, call)
            if value is None:
                continue
            kind, how = self._reassigned_rank(file, value)
            if not kind:
                kind, how = rank_kind(file, value)
            if not kind:
                kind, how = self._attribute_rank(file, value)
            if kind == "global":
                fsdp = file.is_call_to(call, "FullyShardedDataParallel", TORCH)
                # at the `.to(rank)` that ends a model built over ten lines (lint heldout15 u057), not where the
                # chain begins; a constructor's `device_id=` and an index inside a device string at the call
                at = value if type(value) is ast.Name and type(call.func) is ast.Attribute \
                    and call.func.attr in ("to", "cuda") and value in call.args else call
                yield at, how, fsdp, value

    @staticmethod
    def _attribute_rank(file: FileModel, value: ast.expr) -> tuple[str, str]:
        """The rank a value holds where it comes from an attribute of a namespace the file fills
        elsewhere (`train_model(..., rank=args.rank)` and, in init_distributed_mode(args),
        `args.rank = int(os.environ["RANK"])`: lint heldout11 u021): "global" when every such
        assignment in the file is the global rank."""
        for origin in [o for o in file.origins(value) if isinstance(o, ast.Attribute)] + [value]:
            if not (type(origin) is ast.Attribute and type(origin.value) is ast.Name):
                continue
            base, attr = origin.value.id, origin.attr
            assigned = [node.value for node in ast.walk(file.tree) if type(node) is ast.Assign
                        and any(type(t) is ast.Attribute and t.attr == attr and type(t.value) is ast.Name
                                and t.value.id == base for t in node.targets)]
            kinds = [rank_kind(file, v) for v in assigned]
            if kinds and all(kind == "global" for kind, _ in kinds):
                return "global", f"`{base}.{attr}`, set from {kinds[0][1]}"
        return "", ""

    @staticmethod
    def _reassigned_rank(file: FileModel, value: ast.expr) -> tuple[str, str]:
        """The rank an attribute of a namespace holds where the function rewrites it just before, on
        the way to the use (`args.local_rank = dist.get_rank()`, then `torch.device('cuda',
        args.local_rank)`: lint heldout14, a CoFi trainer and its copy, whose attribute's name says
        local while it holds the global rank). The last such assignment in the use's function, in a
        block around the use, before it; ("", "") where there is none."""
        if type(value) is not ast.Attribute or type(value.value) is not ast.Name or value.value.id == "self":
            return "", ""
        base, attr, func = value.value.id, value.attr, file.function(value)
        around = set(map(id, file.ancestors(value)))
        found: ast.Assign | None = None
        for node in ast.walk(func or file.tree):
            if type(node) is not ast.Assign or node.lineno >= value.lineno or file.function(node) is not func:
                continue
            if not any(type(t) is ast.Attribute and t.attr == attr and type(t.value) is ast.Name
                       and t.value.id == base for t in node.targets):
                continue
            if _same_block_before(file, node, around) and (found is None or node.lineno > found.lineno):
                found = node
        if found is None:
            return "", ""
        kind, how = rank_kind(file, found.value)
        return (kind, f"`{base}.{attr}`, set from {how} on line {found.lineno}") if kind else ("", "")

    @staticmethod
    def _launch(file: FileModel) -> tuple[str, str]:
        """An error where the file writes down a launch of several nodes (lint heldout15 u030: `torchrun
        --nnodes=2 --nproc_per_node=4 ...` in its docstring, `set_device(dist.get_rank())`): under the launch
        it is written for, the second node's ranks ask for GPUs it does not have. Else a warning (the
        script may only ever run on one node). The severity, and what the message adds."""
        found = MULTI_NODE.search(file.text)
        if found is None:
            return WARNING, ""
        line = file.text.count("\n", 0, found.start()) + 1
        return ERROR, f"; this file's own launch line (line {line}) starts {found.group(1)} nodes"

    @staticmethod
    def _unresolved_rank(file: FileModel, value: ast.expr) -> bool:
        """`set_device(rank)` in an excerpt that never assigns `rank` (nor takes it as a
        parameter): the name says rank, and the file cannot say which one."""
        return (type(value) is ast.Name and value.id in RANK_NAMES and file.lookup(value) is None
                and value.id not in file.imports and value.id not in file.relative_imports
                and not file.star_imports)

    @staticmethod
    def _device_value(file: FileModel, call: ast.Call) -> ast.expr | None:
        """The value a call takes as a GPU index: `x.to(v)`, `x.cuda(v)`,
        `torch.device("cuda", v)`, `torch.device(f"cuda:{v}")`, DDP's `device_ids=[v]`."""
        func = call.func
        if type(func) is ast.Attribute and func.attr in MOVERS:
            value = call.args[0] if call.args else keyword(call, "device")
            return value if _index(value) else _string_index(value)
        qualname = file.qualname(func) or ""
        if qualname == "torch.device":
            if len(call.args) == 2 and _index(call.args[1]):
                return call.args[1]
            return _string_index(call.args[0]) if len(call.args) == 1 else None
        if file.is_call_to(call, "DistributedDataParallel", TORCH):
            ids = keyword(call, "device_ids")
            if type(ids) is ast.List and len(ids.elts) == 1 and _index(ids.elts[0]):
                return ids.elts[0]
            return None
        if file.is_call_to(call, "FullyShardedDataParallel", TORCH):  # FSDP(model, device_id=rank)
            device = keyword(call, "device_id")
            return device if _index(device) else None
        if type(func) is ast.Attribute and func.attr == "from_pretrained":
            # the whole model placed on one GPU: `from_pretrained(..., device_map={"": rank})` (lint heldout29 u004,
            # a QLoRA script's `device_map = {"": Accelerator().process_index}`)
            placed = keyword(call, "device_map")
            for mapping in [placed] + ([o for o in file.origins(placed) if isinstance(o, ast.expr)]
                                       if type(placed) is ast.Name else []):
                if type(mapping) is ast.Dict and len(mapping.keys) == 1 and constant(mapping.keys[0]) == "" \
                        and _index(mapping.values[0]):
                    return mapping.values[0]
            return None
        if qualname.startswith("torch."):  # a factory told where: torch.tensor(x, device="cuda:{}".format(rank))
            device = keyword(call, "device")
            if type(device) is ast.Name:
                # the string built first: `cuda_device = f'cuda:{dist.get_rank()}'` (lint dev7: a
                # variable-size all_gather helper's tensors), `torch.tensor(..., device=cuda_device)`
                strings = [_string_index(o) if isinstance(o, ast.expr) else None for o in file.origins(device)]
                return strings[0] if len(strings) == 1 else None
            return _string_index(device)
        return None


def rank_kind(file: FileModel, value: ast.expr) -> tuple[str, str]:
    """`idioms.rank_kind`, and the global rank a file computes the launcher's way: a node's offset plus the
    process's index on it (`args.rank * ngpus_per_node + gpu`, the ImageNet example's formula, with `gpu` the
    spawn index; `node_rank * args.gpus + local_rank`). idioms leaves a computed rank unread on purpose (`rank %
    device_count` is a local one); this sum is the global rank by construction, and where it picks the GPU
    (`model.cuda(args.rank)`, `map_location='cuda:{}'.format(args.rank)`) the index is past the GPUs of every node
    but the first (lint heldout30b u033, a MoCo trainer; heldout22 u041, u062: PDPP and HRDM's resume)."""
    kind, how = plain_rank_kind(file, value)
    if kind:
        return kind, how
    for origin in [value] + [o for o in file.origins(value) if o is not value]:
        if type(origin) is ast.BinOp and type(origin.op) is ast.Add and _node_offset(file, origin):
            return "global", f"`{ast.unparse(origin)[:60]}`, a node's offset plus the index on it"
    return "", ""


def _node_offset(file: FileModel, total: ast.BinOp) -> bool:
    """`total` is `node * per_node + index`: a product of which one side counts the processes of a node,
    plus a process's index on its node (a local rank, a name that says so, or the index mp.spawn hands)."""
    for product, index in ((total.left, total.right), (total.right, total.left)):
        if type(product) is not ast.BinOp or type(product.op) is not ast.Mult:
            continue
        if not any(PER_NODE.search(terminal_name(side)) for side in (product.left, product.right)):
            continue
        if terminal_name(index) in LOCAL_INDEX or plain_rank_kind(file, index)[0] == "local":
            return True
        if type(index) is ast.Name and any(_spawn_index(file, b) for b in file.lookup(index) or []):
            return True  # the first parameter of the function mp.spawn starts: the process's index on its node
    return False


def _spawn_index(file: FileModel, binding: object) -> bool:
    """`binding` is the first parameter of a function mp.spawn starts: the index it hands each process."""
    if type(binding) is not Param or not isinstance(binding.function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    first = binding.function.args.args[:1]
    return bool(first) and first[0].arg == binding.name and file.spawned(binding.function)


def _device_binding(file: FileModel, value: ast.expr) -> ast.Assign | None:
    """`device = rank` (the global rank) and then `.to(device)`: the one assignment, before the use in its
    function, that makes the global rank the device, where the fix goes (`device = local_rank`). Readers
    point there (lint heldout24 u044, u045: `device = rank` with rank = dist.get_rank(); heldout21 u045:
    `device_id = rank`); lint said the first use, lines below. Not a name that says rank (`rank =
    dist.get_rank()` is right as a rank: its use as a device is the mistake)."""
    if type(value) is not ast.Name or "rank" in value.id.lower():
        return None
    func = file.function(value)
    binds = [node for node in ast.walk(func or file.tree) if type(node) is ast.Assign and file.function(node) is func
             and any(type(t) is ast.Name and t.id == value.id for t in node.targets)]
    if len(binds) != 1 or binds[0].lineno >= value.lineno or rank_kind(file, binds[0].value)[0] != "global":
        return None
    return binds[0]


def _same_block_before(file: FileModel, stmt: ast.stmt, around: set[int]) -> bool:
    """`stmt` sits in a block that also holds, after it, a statement around the use (`around`: the
    ids of the use's ancestors): it runs on the way to the use, not in a sibling arm."""
    parent = file.parent.get(stmt)
    for field in ("body", "orelse", "finalbody", "handlers"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and stmt in block:
            return any(id(later) in around for later in block[block.index(stmt) + 1:])
    return False


def _string_index(value: ast.expr | None) -> ast.expr | None:
    """The index spelled into a device string: `f"cuda:{v}"`, `"cuda:{}".format(v)`, `"cuda:%d" % v`,
    `"cuda:" + str(v)` (lint heldout31 u016: a DDPM trainer's `tr.device("cuda:" + str(args.rank))`)."""
    if type(value) is ast.BinOp and type(value.op) is ast.Add and type(value.left) is ast.Constant \
            and str(value.left.value).startswith("cuda:") and type(value.right) is ast.Call \
            and type(value.right.func) is ast.Name and value.right.func.id == "str" and len(value.right.args) == 1:
        return value.right.args[0] if _index(value.right.args[0]) else None
    if type(value) is ast.JoinedStr:
        parts = [v.value for v in value.values if type(v) is ast.FormattedValue]
        head = value.values[0] if value.values else None
        if len(parts) == 1 and type(head) is ast.Constant and str(head.value).startswith("cuda"):
            return parts[0] if _index(parts[0]) or type(parts[0]) is ast.Call else None
        return None
    if type(value) is ast.Call and type(value.func) is ast.Attribute and value.func.attr == "format":
        template = value.func.value
        if type(template) is ast.Constant and str(template.value).startswith("cuda") and len(value.args) == 1:
            return value.args[0]
        return None
    if type(value) is ast.BinOp and type(value.op) is ast.Mod and type(value.left) is ast.Constant \
            and str(value.left.value).startswith("cuda") and type(value.right) is not ast.Tuple:
        return value.right
    return None


def _index(value: ast.expr | None) -> bool:
    """A device index the rule can follow: a name, an attribute, `rank % n`, or the rank
    asked for where it is used (`y_val.to(dist.get_rank())`: lint dev7, a CRF tagger's validation)."""
    if type(value) is ast.Call and terminal_name(value.func) == "get_rank":
        return True
    return type(value) in (ast.Name, ast.Attribute) or (
        type(value) is ast.BinOp and type(value.op) is ast.Mod and type(value.left) is not ast.Constant)
