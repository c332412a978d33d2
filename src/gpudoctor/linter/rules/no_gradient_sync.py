from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from gpudoctor.linter.idioms import TORCH, is_ddp_wrapper, is_distributed_sampler, is_optimizer, never_run
from gpudoctor.linter.model import FileModel, keyword, terminal_name
from gpudoctor.linter.rule import ERROR, Hit, Rule

# A call of another library or of the project that may wrap the model or average its gradients
# (`wrap_ddp(model)`, `deepspeed.initialize`, `hvd.DistributedOptimizer`, `accelerator.prepare`,
# `average_gradients(model)`, a Trainer that does it all).
MAY_SYNC = re.compile(r"ddp|parallel|distributed|wrap|fsdp|shard|grad|initialize|prepare|trainer|sync|allreduce"
                      r"|all_reduce|reduce_scatter|hook|zero", re.IGNORECASE)

# A model split over the ranks (tensor / pipeline parallel): its own collectives keep the shards in step
# (peft's tests/training/lora_tp.py: `from_pretrained(..., tp_plan=..., tp_size=world_size)`, the control).
SHARDED_MODEL = re.compile(r"tp_plan|tp_size|device_mesh|DeviceMesh|parallelize_module|tensor_parallel|"
                           r"pipeline_parallel|distribute_tensor|DTensor")
# nn.Module's, the optimizer's and torch's own calls that name gradients or syncing and average nothing.
HARMLESS = {"zero_grad", "requires_grad_", "clip_grad_norm_", "clip_grad_value_", "no_grad", "enable_grad",
            "set_grad_enabled", "GradScaler", "convert_sync_batchnorm", "SyncBatchNorm", "synchronize",
            "DataParallel", "parameters", "named_parameters"}


class NoGradientSync(Rule):
    """The file starts a process group (and, often, splits the data with a
    `DistributedSampler`), then trains (`loss.backward()`,
    `optimizer.step()`) a model that is never wrapped in
    `DistributedDataParallel` (nor FSDP) and whose gradients nothing
    all-reduces: each rank steps its own copy on its own shard, the replicas
    drift apart, and what rank 0 saves was trained on 1/world-size of the data.
    An `nn.DataParallel` wrapper, which only splits a batch over the GPUs of
    one process, does not synchronise the processes either.

    Wrap the model: `model = DistributedDataParallel(model.to(local_rank),
    device_ids=[local_rank])`.

    Flagged on the optimizer's `step()` (or on the DataParallel wrapper, where
    the file has one), where the file calls no function of another library or
    of the project that could wrap the model or average its gradients (a name
    with ddp, parallel, distributed, wrap, grad, sync, all_reduce, hook,
    initialize, prepare, trainer in it: deepspeed, Horovod, accelerate, a
    project's `wrap_ddp`) handed the trained model (the object whose
    `parameters()` the optimizer gets), and no torch collective but barriers and
    reductions of metrics (`dist.all_reduce(ddp_loss)`; weights averaged by hand
    count as a sync). Asked for by lint heldout13's
    readers (an ImageNet trainer whose DDP line is commented out and replaced by
    `DataParallel(model, device_ids=[args.gpu])` in each spawned process) and
    heldout10/11's (`model-not-wrapped-in-ddp`). Not where the model is split over
    the ranks (tensor or pipeline parallel: `tp_plan=`, a device mesh,
    `parallelize_module`; peft's LoRA tensor-parallel test, the mature-repository
    control), whose own collectives keep the shards in step. An error where DDP is given a
    process group of one rank (`process_group=new_group(ranks=[rank])`, through names and
    attributes): it averages each rank's gradients with themselves (lint heldout26d u009).
    Else a warning: code not in view
    (the model's own class) could still register gradient hooks.

    Where the file wraps a model in DDP (its process group may then be a helper's), another
    model whose parameters an optimizer is given, never wrapped, nor built from a wrapper, nor
    handed to a call that could sync it, is flagged where it is built: its gradients stay each
    rank's own (lint heldout9: a NeRF trainer's proposal network beside its DDP main network;
    heldout15: a light-enhancement network trained beside a DDP segmentation model, and a
    discriminator whose DDP line wraps the other discriminator a second time). An optimizer is
    one of torch.optim (its step read on the name it is bound to: `opt = optim.Adam(...)`,
    `opt.step()`); apex's `amp.initialize` casts and syncs nothing. There the optimizer shows
    the model is trained, where the backward and the step are in code not in view (an epoch
    function of another module handed both), and a call that may sync spares only the models it
    is given (lint heldout17: `ddp_load_checkpoint(model, ...)` reads the DDP model, not the
    motion discriminator trained beside it with its own optimizer). Not a model given to a torch
    container (`model = nn.Sequential(vit, mlp)`) that is what the DDP line wraps: its parameters
    are the wrapped model's (lint heldout18: a ViT and its head, one Sequential a Trainer wraps).

    Not where the file calls a model and reads its `.module` (`out = net(data_in)` beside
    `net.module.pre_process(data)`, the net from the project's `Loader(..., is_ddp=True).load()`: lint
    heldout21 u035): that is a wrapper built in code not in view; a `.module` read under a test that asks
    for it (`model.module if hasattr(model, "module") else model`, a save helper's) says nothing of what the
    model is (lint heldout28 u016). A GradScaler's `scaler.step(optimizer)` is the optimizer's step (that
    file's only one). Nor a model trained in a function the
    script never runs (`never_run`: lint heldout21 u057, `# main()` commented out in a main block that
    spawns the DDP tutorial's demo): no process group holds it.
    Nor where the optimizer is bound to a name that is only returned and every caller drops that value:
    nothing steps it (lint heldout25 u015: the DDP tutorial's `load_train_objs()` whose caller left the
    Trainer and its `train()` commented out).
    """

    id = "no-gradient-sync"
    message = ("a process group and a DistributedSampler, but the trained model is never wrapped in "
               "DistributedDataParallel and nothing all-reduces its gradients: every rank trains its own copy")
    fix = "model = DistributedDataParallel(model.to(local_rank), device_ids=[local_rank])"
    in_tests = False
    needles = ("init_process_group", "DistributedDataParallel")

    def relevant(self, text: str) -> bool:
        # (a DDP wrapper shows a process group too: the group may be made by a helper of the project)
        # (an optimizer built here trains what it is given, where the backward is in code not in view)
        return ("init_process_group" in text or "DistributedDataParallel" in text) and (
            "backward" in text or "optim" in text)

    VALID = (
        '''
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        dist.init_process_group("nccl")
        sampler = torch.utils.data.distributed.DistributedSampler(dataset)
        model = DDP(net.cuda(), device_ids=[rank])
        for x in loader:
            model(x).sum().backward()
            optimizer.step()
        ''',
    )
    INVALID = (
        '''
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        sampler = torch.utils.data.distributed.DistributedSampler(dataset)
        model = net.cuda()
        for x in loader:
            model(x).sum().backward()
            optimizer.step()  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        if SHARDED_MODEL.search(file.text):
            return
        yield from _group_of_one(file)
        grouped = any(True for _ in file.calls_to("init_process_group", TORCH))
        backward = [c for c in file.calls if terminal_name(c.func).endswith("backward")]
        steps = [c for c in file.calls if terminal_name(c.func) == "step" and (not c.args
                 and ("optim" in ast.unparse(c.func).lower() and "sched" not in ast.unparse(c.func).lower()
                      or _an_optimizer(file, c.func)) or _scaler_step(file, c))]
        if not backward and not steps and not any(is_optimizer(file, c) for c in file.calls):
            return
        # what is trained: the objects whose parameters are handed to an optimizer (`model.parameters()`)
        trained = {ast.unparse(c.func.value) for c in file.calls if type(c.func) is ast.Attribute
                   and c.func.attr in ("parameters", "named_parameters")}
        dataparallel = None
        wrappers: list[ast.Call] = []
        handed: set[str] = set()  # trained objects given to a call that may wrap them or sync their gradients
        for call in file.calls:
            name = terminal_name(call.func)
            if name in ("FullyShardedDataParallel", "fully_shard", "FSDP") \
                    or (file.qualname(call.func) or "").endswith("FullyShardedDataParallel"):
                return
            if is_ddp_wrapper(file, call):
                wrappers.append(call)
                continue
            if (file.qualname(call.func) or "").startswith("apex.amp."):
                continue  # apex's amp.initialize([net_a, net_b], opt) casts; it syncs nothing (lint heldout9 u038)
            if file.is_call_to(call, "DataParallel", TORCH):
                dataparallel = call
                continue
            if is_distributed_sampler(file, call) or name == "DistributedSampler":
                continue
            qualname = file.qualname(call.func) or ""
            if qualname.startswith("torch.distributed.") and name not in ("init_process_group", "barrier",
                                                                          "get_rank", "get_world_size",
                                                                          "destroy_process_group", "is_initialized",
                                                                          "is_available"):
                if not _a_metric(call):
                    return  # gradients or weights averaged by hand (a DiLoCo-style sketch: lint dev7)
                continue  # a metric's reduction
            if name not in HARMLESS and not qualname.startswith("torch.") and MAY_SYNC.search(name):
                handed |= _handles(call, trained)
        if wrappers:
            # beside a DDP model, a call that may sync spares only the models it is given (lint heldout17 u022:
            # `ddp_load_checkpoint(model, ...)` reads the wrapped model, not the discriminator beside it)
            yield from _left_unwrapped(file, wrappers, handed)
            return
        if handed or not backward or not steps:
            return
        if not grouped:
            return  # no group the file starts, no wrapper: what the project does is not in view
        if _read_as_wrapper(file):
            return  # the model the file calls is read as a wrapper (`net.module.pre_process`): built elsewhere
        if dataparallel is not None:
            yield Hit(dataparallel, message="each process of the group wraps its model in nn.DataParallel, which "
                      "splits a batch over one process's GPUs and synchronises nothing across processes; no "
                      "DistributedDataParallel and no gradient all-reduce: every rank trains its own copy on its "
                      "DistributedSampler shard, and the replicas drift apart",
                      fix="model = DistributedDataParallel(model, device_ids=[args.gpu])")
            return
        split = any(is_distributed_sampler(file, c) for c in file.calls)
        built = _built(file)
        yield Hit(built or steps[0], message=f"the model{' built here' if built else ''} is trained (the optimizer "
                  f"steps on line {steps[0].lineno}) in a process group, but it is never wrapped in "
                  "DistributedDataParallel and nothing here all-reduces its gradients: every rank trains its own copy"
                  + (" on its DistributedSampler shard" if split else "") + ", and the replicas drift apart",
                  # (the step is the other place a reader points at: lint heldout27c u020's entry)
                  also=(steps[0].lineno,) if built is not None and steps[0].lineno != getattr(built, "lineno", 0) else ())


# A tensor a script reduces to report it, not to train (`dist.all_reduce(ddp_loss)`, `reduce(correct)`).
METRIC = re.compile(r"loss|acc|correct|total|count|metric|num|sum|stat|score|top|time|len|size", re.IGNORECASE)


def _a_metric(call: ast.Call) -> bool:
    """A torch.distributed collective on a metric (`dist.all_reduce(ddp_loss)`), not on gradients or
    weights (`dist.all_reduce(p.grad)`, `all_reduce(param.data)`)."""
    if not call.args:
        return False
    text = ast.unparse(call.args[0])
    return METRIC.search(text) is not None and not re.search(r"grad|param|weight|\.data\b", text)


def _handles(call: ast.Call, trained: set[str]) -> set[str]:
    """The trained objects `call` is given, or is a method of (`wrap_ddp(model)`,
    `model.register_comm_hook(...)`, `GradientMaker(model, ...)`); not a loader's wrapper."""
    parts = [call.func, *call.args, *(k.value for k in call.keywords)]
    return {ast.unparse(node) for part in parts for node in ast.walk(part)
            if isinstance(node, (ast.Name, ast.Attribute)) and ast.unparse(node) in trained}


def _read_as_wrapper(file: FileModel) -> bool:
    """The file calls a model and reads its `.module` (`out = net(data_in)` beside `net.module.pre_process(data)`,
    lint heldout21 u035, where `net` comes from the project's `Loader(..., is_ddp=True).load()`): that model is a
    DDP (or DataParallel) wrapper built in code not in view, which may sync its gradients."""
    called = {ast.unparse(c.func) for c in file.calls}
    return any(type(n) is ast.Attribute and n.attr == "module" and type(n.ctx) is ast.Load
               and ast.unparse(n.value) in called and not _asked_first(file, n) for n in ast.walk(file.tree))


def _asked_first(file: FileModel, read: ast.Attribute) -> bool:
    """`model.module if hasattr(model, "module") else model`: a read of `.module` under a test that asks whether
    the object has one says nothing of what it is (lint heldout28 u016's save helper, beside a model never wrapped)."""
    asked = ast.unparse(read.value)
    for up in file.ancestors(read):
        test = getattr(up, "test", None) if type(up) in (ast.IfExp, ast.If) else None
        if test is not None and any(
                type(c) is ast.Call and terminal_name(c.func) in ("hasattr", "isinstance") and c.args
                and ast.unparse(c.args[0]) == asked for c in ast.walk(test)):
            return True
    return False


def _built(file: FileModel) -> ast.AST | None:
    """Where the model the optimizer is given is built (`model = Net().cuda()` for
    `optim.Adam(model.parameters())`), where one name shows it; else None."""
    for call in file.calls:
        func = call.func
        if type(func) is ast.Attribute and func.attr == "parameters" and type(func.value) is ast.Name:
            made = [o for o in file.origins(func.value) if isinstance(o, ast.Call)]
            if len(made) == 1:
                return made[0]
    return None


def _built_here(file: FileModel, origin: object) -> bool:
    """A model the file builds by a constructor or function it names (`LightNet()`,
    `ProposalNetwork(10).cuda()`, `models.resnet50()`), not a wrapper, nor what a method of some
    object hands back (`self.ddp_env.get_model()`, which may wrap it: lint heldout10)."""
    if not isinstance(origin, ast.Call) or is_ddp_wrapper(file, origin):
        return False
    call = origin
    while type(call.func) is ast.Attribute and call.func.attr in ("to", "cuda") and type(call.func.value) is ast.Call:
        call = call.func.value
    if is_ddp_wrapper(file, call):
        return False
    return type(call.func) is ast.Name or file.qualname(call.func) is not None


def _scaler_step(file: FileModel, call: ast.Call) -> bool:
    """`scaler.step(optimizer)`: a GradScaler steps the optimizer it is given (lint heldout28 u016, a mixed-precision
    trainer whose only step is the scaler's)."""
    if len(call.args) != 1 or call.keywords or type(call.func) is not ast.Attribute:
        return False
    given = call.args[0]
    return "optim" in ast.unparse(given).lower() or (type(given) is ast.Name and any(
        type(o) is ast.Call and is_optimizer(file, o) for o in file.origins(given)))


def _an_optimizer(file: FileModel, func: ast.expr) -> bool:
    """`opt.step` where `opt` is built by an optimizer's constructor (`opt = optim.Adam(...)`: lint heldout9 u038)."""
    if type(func) is not ast.Attribute or type(func.value) is not ast.Name:
        return False
    return any(type(o) is ast.Call and is_optimizer(file, o) for o in file.origins(func.value))


# torch's module containers: what they are given becomes a submodule of what they build.
CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict"})


def _inside_wrapped(file: FileModel, holder: ast.expr, wrapped: set[str], attributes: set[str]) -> bool:
    """`holder` is given to a torch container (`model = nn.Sequential(vit, mlp)`) whose result is what a
    DDP line wraps (the name, or the attribute a method wraps, `self.model = DDP(self.model)` with the
    container handed in as `model`): its parameters are the wrapped model's, and DDP syncs them (lint
    heldout18 u045: a ViT and its head trained as one Sequential that the Trainer wraps)."""
    text = ast.unparse(holder)
    for call in file.calls:
        if terminal_name(call.func) not in CONTAINERS or file.function(call) is not file.function(holder):
            continue
        given = [*call.args, *(k.value for k in call.keywords)]
        if not any(type(n) in (ast.Name, ast.Attribute) and ast.unparse(n) == text for g in given for n in ast.walk(g)):
            continue
        up = file.parent.get(call)
        targets = up.targets if type(up) is ast.Assign else []
        if any(ast.unparse(t) in wrapped or terminal_name(t) in attributes for t in targets):
            return True
    return False


def _left_unwrapped(file: FileModel, wrappers: list[ast.Call], spared: set[str]) -> Iterator[Hit]:
    """Beside a model the file wraps in DDP, another whose parameters an optimizer is given and
    that is never wrapped, nor built from a wrapper, nor handed to a call that may sync it: its
    gradients stay each rank's own (lint heldout9 u038: a NeRF trainer's proposal network beside
    its DDP-wrapped main network; heldout15 u026: a light-enhancement net trained beside the DDP
    segmentation model, and a discriminator whose DDP line wraps the other one a second time)."""
    wrapped: set[str] = set()
    attributes: set[str] = set()  # `trainer.model = DDP(trainer.model)` wraps what a method reads as `self.model`
    for call in wrappers:
        module = keyword(call, "module", 0)
        if module is None:
            return  # (`DDP(*args)`: what it wraps is not in view)
        wrapped |= {ast.unparse(n) for n in ast.walk(module) if isinstance(n, (ast.Name, ast.Attribute))}
        attributes |= {n.attr for n in ast.walk(module) if type(n) is ast.Attribute}
    said: set[str] = set()
    for opt in file.calls:
        if not is_optimizer(file, opt) or never_run(file, opt) or _dropped(file, opt):
            continue  # (an optimizer of a function the script never runs trains nothing in its group: heldout21 u057)
        given = [*opt.args, *(k.value for k in opt.keywords)]
        reached = given + [o for g in given if type(g) is ast.Name for o in file.origins(g) if isinstance(o, ast.AST)]
        for part in reached:
            for node in ast.walk(part):
                if not (type(node) is ast.Call and type(node.func) is ast.Attribute
                        and node.func.attr in ("parameters", "named_parameters")):
                    continue
                holder = node.func.value
                text = ast.unparse(holder)
                if type(holder) not in (ast.Name, ast.Attribute) or text in wrapped or text in said or text in spared \
                        or (type(holder) is ast.Attribute and holder.attr in attributes | {"module"}):
                    continue
                origins = file.origins(holder)
                if not origins or any(not _built_here(file, o) for o in origins):
                    continue  # a wrapper on some path, or a value not built in view (`self.env.get_model()`)
                if _inside_wrapped(file, holder, wrapped, attributes):
                    continue  # a part of the wrapped model: DDP all-reduces its gradients with the rest
                said.add(text)
                built = origins[0] if len(origins) == 1 and isinstance(origins[0], ast.AST) else node
                other = ast.unparse(keyword(wrappers[0], "module", 0) or wrappers[0])[:40]
                yield Hit(built, message=f"{text} is trained (its parameters go to the optimizer on line "
                          f"{opt.lineno}) in a process group, but unlike `{other}` (DistributedDataParallel, line "
                          f"{wrappers[0].lineno}) it is never wrapped, and nothing here all-reduces its gradients: "
                          "every rank steps its own copy, and the replicas drift apart",
                          fix=f"{text} = DistributedDataParallel({text}, device_ids=[local_rank])")


def _dropped(file: FileModel, opt: ast.Call) -> bool:
    """The optimizer is bound to a name that is only returned, and every caller of its function drops the value it
    returns at that place: nothing steps it (lint heldout25 u015: the DDP tutorial's `load_train_objs()` whose caller
    left `Trainer(model, ..., optimizer)` and `trainer.train()` commented out). Any other shape: False."""
    stmt = file.parent.get(opt)
    if type(stmt) is not ast.Assign or len(stmt.targets) != 1 or type(stmt.targets[0]) is not ast.Name:
        return False
    name, func = stmt.targets[0].id, file.function(opt)
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or file.references.get(func):
        return False
    index = None
    for node in ast.walk(func):
        if type(node) is ast.Name and node.id == name and type(node.ctx) is ast.Load:
            up = file.parent.get(node)
            if type(up) is ast.Tuple and type(file.parent.get(up)) is ast.Return:
                index = up.elts.index(node)
            else:
                return False  # stepped, or handed on
    sites = file.call_sites.get(func, [])
    if index is None or not sites:
        return False
    for site, _ in sites:
        bind = file.parent.get(site)
        if type(bind) is not ast.Assign or len(bind.targets) != 1 or type(bind.targets[0]) is not ast.Tuple:
            return False
        target = bind.targets[0].elts[index] if index < len(bind.targets[0].elts) else None
        if type(target) is not ast.Name:
            return False
        scope = file.function(site) or file.tree
        if any(type(n) is ast.Name and n.id == target.id and type(n.ctx) is ast.Load for n in ast.walk(scope)):
            return False
    return True


def _group_of_one(file: FileModel) -> Iterator[Hit]:
    """A DDP wrapper whose `process_group` is a `new_group` of one rank (`new_group(ranks=[rank])`, followed
    through names, attributes and parameters): DDP all-reduces the gradients within that group only, so each
    rank averages with itself and the replicas drift as if unwrapped (lint heldout26d u009: a trainer given
    `data_parallel_group = new_group(ranks=[rank])`). An error: the group's members are written in the call."""
    for call in file.calls:
        if not is_ddp_wrapper(file, call):
            continue
        group = keyword(call, "process_group", 99)
        if group is None:
            continue
        for origin in file.origins(group):
            if not (type(origin) is ast.Call and terminal_name(origin.func) == "new_group"):
                continue
            ranks = keyword(origin, "ranks", 0)
            if isinstance(ranks, (ast.List, ast.Tuple)) and len(ranks.elts) == 1 and type(ranks.elts[0]) is not ast.Starred:
                yield Hit(call, severity=ERROR,
                          message=f"DDP is given process_group={ast.unparse(group)[:40]}, a group of one rank "
                          f"(new_group(ranks={ast.unparse(ranks)}), line {origin.lineno}): it all-reduces each rank's "
                          "gradients with themselves only, so the replicas train apart as if unwrapped",
                          fix="DistributedDataParallel(model, device_ids=[local_rank])  # the default group: every rank")
                break
