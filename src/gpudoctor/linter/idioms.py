"""How PyTorch programs spell the things several rules look for: data
loaders and their samplers, DDP wrappers, tensors, process launches, optimizers, writes
to `os.environ`."""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator

from gpudoctor.linter.model import (ITERATION_WRAPPERS, LIBRARIES, MAIN_TEST, Binding, Element, FileModel, Param,
                                   constant, has_star_kwargs, identifiers, keyword, position, terminal_name)

# A word of a value that may differ from process to process (`str(local_rank)`, `gpu_ids[rank]`).
_RANK_WORD = re.compile(r"rank|local|proc|worker|index|idx|^i$|^gpu$|^gpu_id$|^device_id$", re.IGNORECASE)

# DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, ...)
LOADER_POSITIONS = {"dataset": 0, "batch_size": 1, "shuffle": 2, "sampler": 3, "batch_sampler": 4, "num_workers": 5}
TORCH = ("torch",)
# The argument torch.distributed.launch passes on every worker's command line (torchrun does not).
LOCAL_RANK_FLAGS = frozenset({"--local_rank", "--local-rank"})


def local_rank_flags(file: FileModel, call: ast.Call) -> set[str]:
    """The spellings of the old launcher's flag this call declares: argparse's
    `add_argument("--local_rank", ...)`, or absl's `flags.DEFINE_integer("local_rank", ...)`
    (which parses `--local_rank` too: lint heldout10, a T5 fine-tuning script)."""
    name = terminal_name(call.func)
    if type(call.func) is ast.Attribute and name == "add_argument":
        return {c for c in (constant(a, str) for a in call.args) if c in LOCAL_RANK_FLAGS}
    if name.startswith("DEFINE_") and call.args and (file.qualname(call.func) or "").startswith("absl."):
        flag = "--" + str(constant(call.args[0], str))
        return {flag} & LOCAL_RANK_FLAGS
    return set()

# torch functions that return a new tensor (a sample: the common ones in scripts).
TENSOR_FACTORIES = {
    "tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full", "rand", "randn", "randint",
    "randperm", "arange", "linspace", "logspace", "eye", "zeros_like", "ones_like", "empty_like",
    "full_like", "rand_like", "randn_like", "randint_like", "stack", "cat", "concat", "Tensor",
    "FloatTensor", "LongTensor", "IntTensor", "BoolTensor", "HalfTensor", "DoubleTensor", "ByteTensor",
}


def loader_arg(call: ast.Call, name: str) -> ast.expr | None:
    return keyword(call, name, LOADER_POSITIONS[name])


def is_loader(file: FileModel, node: object) -> bool:
    return file.is_call_to(node, "DataLoader")


def is_distributed_sampler(file: FileModel, node: object) -> bool:
    return file.is_call_to(node, "DistributedSampler")


def samplers_of(file: FileModel, loader: ast.Call) -> list[ast.Call]:
    """The DistributedSampler constructions a DataLoader call may draw from."""
    sampler = loader_arg(loader, "sampler")
    if sampler is None:
        return []
    return [o for o in file.origins(sampler) if isinstance(o, ast.Call) and is_distributed_sampler(file, o)]


def strip_iteration(node: ast.AST) -> ast.AST:
    """`enumerate(tqdm(loader))` -> `loader`."""
    while type(node) is ast.Call and node.args and terminal_name(node.func) in ITERATION_WRAPPERS:
        node = node.args[0]
    return node


def iterated_origins(file: FileModel, expr: ast.AST) -> list[object]:
    """What a loop over `expr` reads, as its origins show, through iteration wrappers and one name
    bound to one: `loop = tqdm(enumerate(train_loader))`, then `for i, batch in loop:` reads
    train_loader (lint heldout13 u057: a sand-water LSTM trainer's epoch function)."""
    out: list[object] = []
    for origin in file.origins(strip_iteration(expr)):
        inner = strip_iteration(origin) if isinstance(origin, ast.Call) else None
        if inner is not None and inner is not origin and type(inner) in (ast.Name, ast.Attribute):
            out += file.origins(inner)
        else:
            out.append(origin)
    return out


def is_tensor(file: FileModel, node: ast.expr) -> bool:
    """`node` certainly holds a tensor: every value it may have is built by
    a torch factory or unpacked from a DataLoader's batch."""
    origins = file.origins(node)
    return bool(origins) and all(_tensor_origin(file, o) for o in origins)


def _tensor_origin(file: FileModel, origin: object) -> bool:
    if type(origin) is ast.Call:
        qn = file.qualname(origin.func)
        return qn is not None and qn.startswith("torch.") and qn.rsplit(".", 1)[1] in TENSOR_FACTORIES
    if type(origin) is Element:
        # `for x, y in loader`: x and y are tensors; the whole batch may be a
        # dict or an object whose .to() works in place, so it is not claimed.
        if not origin.path:
            return False
        iterable = strip_iteration(origin.iterable)
        if any(is_loader(file, s) for s in file.origins(iterable)):
            return True
        # `for x, y in train_loader` where the loader comes from elsewhere
        # (a parameter, `accelerator.prepare(...)`): the name says what it is.
        return terminal_name(iterable).lower().endswith("loader")
    return False


# A function whose name says it wraps the model or takes it off its wrapper (`unwrap_model`, `de_parallel`,
# `setup_ddp`): what it hands back is not the model it was given.
REWRAPS = re.compile(r"wrap|parallel|module|bare|raw|single|prepare|setup|initiali|shard|compile|ddp|fsdp|distribut",
                     re.IGNORECASE)


def passed_through(file: FileModel, call: ast.Call) -> ast.Name | None:
    """The model a call of a project function not in this file is given and whose result the same name
    takes back (`model, train_loss, train_acc = train_one_epoch(model, ...)` from `from engine import *`:
    lint heldout12 u044, u045): read as the model it was given, the idiom's meaning. Not a library's
    function (its meaning is known), a method, nor one whose name says it wraps or unwraps
    (`model = de_parallel(model)`, `model = setup_ddp(model)`)."""
    if type(call) is not ast.Call or type(call.func) is not ast.Name or file.local_function(call) is not None \
            or REWRAPS.search(call.func.id):
        return None  # (a method, `accelerator.prepare(model)`, is an object's: its meaning is that object's)
    qualname = file.qualname(call.func) or ""
    if qualname.split(".", 1)[0] in LIBRARIES or qualname.startswith("torch"):
        return None
    target = file.parent.get(call)
    if type(target) is not ast.Assign or len(target.targets) != 1:
        return None
    name = target.targets[0]
    if isinstance(name, (ast.Tuple, ast.List)) and name.elts:  # the model comes first
        name = name.elts[0]
    if type(name) is not ast.Name:
        return None
    return next((a for a in call.args if type(a) is ast.Name and a.id == name.id), None)


def handed_back(file: FileModel, origins: list[object]) -> list[object]:
    """`origins` with each value a function hands back (`passed_through`) replaced by what it was given."""
    out: list[object] = []
    for origin in origins:
        given = passed_through(file, origin) if isinstance(origin, ast.Call) else None
        out += [o for o in file.origins(given) if o is not origin] if given is not None else [origin]
    return out


def wrapper_kind(file: FileModel, node: object) -> str:
    """"DistributedDataParallel" / "DataParallel" when `node` builds one (through
    `.to()` / `.cuda()` chains), else ""."""
    while type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr in ("to", "cuda"):
        node = node.func.value
    for kind in ("DistributedDataParallel", "DataParallel"):
        if file.is_call_to(node, kind, TORCH):
            return kind
    return ""


# Calls that set a process's current CUDA device.
# Optimizers by name, where the file's import does not say torch.optim (`from apex.optimizers import FusedAdam`).
OPTIMIZERS = {"SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "LBFGS", "Lamb",
              "LAMB", "Lion", "FusedAdam", "FusedLAMB", "Adafactor"}


def is_optimizer(file: FileModel, call: ast.Call) -> bool:
    """`call` builds an optimizer: one of torch.optim's (not a learning-rate scheduler), or one named as such."""
    qualname = file.qualname(call.func) or ""
    return (qualname.startswith("torch.optim.") and ".lr_scheduler." not in qualname) \
        or terminal_name(call.func) in OPTIMIZERS


DEVICE_BINDER_CALLS = {"set_device", "set_device_index", "set_device_idx", "set_default_device"}
# Library calls that set the process's current device when they run (the call -> the package it must come
# from): DeepSpeed's engine constructor sets it to LOCAL_RANK; accelerate's state sets each process's GPU.
LIBRARY_DEVICE_BINDERS = {"initialize": "deepspeed", "Accelerator": "accelerate", "PartialState": "accelerate"}


def binds_current_device(file: FileModel) -> bool:
    """The file sets each process's GPU where it could decide what `.cuda()` means:
    `torch.cuda.set_device(...)` & co., a `with torch.cuda.device(...)`, a
    `dist.barrier(device_ids=[rank])`, `CUDA_VISIBLE_DEVICES` set per process, or a library
    object that sets it when it is made: a DeepSpeed engine (`deepspeed.initialize(...)`: the
    engine sets the current device to LOCAL_RANK in its constructor) or accelerate's
    `Accelerator()` / `PartialState()` (their state sets each process's GPU)."""
    # (a mention only in comments binds nothing: `# print("forget to set CUDA_VISIBLE_DEVICES")`
    # above a commented-out check, lint heldout14's alibaba/hap ddp.py)
    if "CUDA_VISIBLE_DEVICES" in file.text and not _visible_devices_shared(file) and any(
            "CUDA_VISIBLE_DEVICES" in line.split("#", 1)[0] for line in file.text.splitlines()):
        return True
    for call in file.calls:
        name = terminal_name(call.func)
        if name in DEVICE_BINDER_CALLS or (name == "device" and file.qualname(call.func) == "torch.cuda.device"):
            return True
        if name in LIBRARY_DEVICE_BINDERS and LIBRARY_DEVICE_BINDERS[name] in (file.qualname(call.func) or ""):
            return True
        # `dist.barrier(device_ids=[rank])`: the program names each rank's GPU where it communicates
        if name == "barrier" and keyword(call, "device_ids") is not None:
            return True
    return False


def _visible_devices_shared(file: FileModel) -> bool:
    """Every mention of CUDA_VISIBLE_DEVICES in the file's code is a write of a value that is the
    same in every process: a literal (`"2, 6"`, `"1"`, directly or through a name bound to it), or
    a value that names no rank written outside the workers (`os.environ[...] = args.gpus` in main,
    before mp.spawn): each process's current device is still the first GPU of that set (issue
    41's heldout9: a research script's `gpu_ids = "2, 6"` set before mp.spawn; lint heldout13: a
    GAN trainer's `CUDA_VISIBLE_DEVICES = "1"` at the top; heldout12: `args.gpus` set in main)."""
    mentions = [n for n in ast.walk(file.tree) if type(n) is ast.Constant and n.value == "CUDA_VISIBLE_DEVICES"]
    writes = list(env_writes(file, "CUDA_VISIBLE_DEVICES"))
    in_code = sum(line.count("CUDA_VISIBLE_DEVICES") for line in file.text.splitlines()
                  if not line.lstrip().startswith("#"))
    if not writes or len(mentions) != len(writes) or in_code != len(mentions):
        return False  # read, or named in a command or a message: not decided here
    return all(value is not None and _same_in_every_process(file, node, value) for node, value in writes)


def _same_in_every_process(file: FileModel, node: ast.AST, value: ast.expr) -> bool:
    origins = file.origins(value) if type(value) is ast.Name else [value]
    if origins and all(isinstance(o, ast.AST) and constant(o, str) is not None for o in origins):
        return True  # a literal: one set for every process
    func = file.function(node)
    if func is not None and (file.spawned(func) or any(
            type(file.parent.get(ref)) is ast.keyword and getattr(file.parent.get(ref), "arg", None) == "target"
            for ref in file.references.get(func, []))):
        return False  # written in each worker: may differ per process
    return not any(_RANK_WORD.search(word) for word in identifiers(value))


def nccl_group(file: FileModel, call: ast.Call) -> bool:
    """An `init_process_group` call for an NCCL group that is not told its device (`device_id=`)."""
    return keyword(call, "device_id") is None and nccl_backend(file, call)


def nccl_backend(file: FileModel, call: ast.Call) -> bool:
    """An `init_process_group` call whose backend is NCCL on some path the file shows: each of its ranks
    drives a GPU."""
    backend = keyword(call, "backend", 0)
    if backend is None:
        return False
    for origin in file.origins(backend):
        value = constant(origin, str)
        if value is not None and "nccl" in value.lower():
            return True
        if type(origin) is ast.Attribute and origin.attr == "NCCL":  # dist.Backend.NCCL
            return True
        # `def init_processes(rank, size, fn, backend='nccl')` started by `Process(target=...)`:
        # no call site shows the argument, the default is what runs (lint heldout13: the
        # torch tutorial's hand-written all_reduce trainer)
        if type(origin) is Param and "nccl" in (constant(param_default(origin), str) or "").lower():
            return True
    return False


def param_default(param: Param) -> ast.expr | None:
    """The default value of `param` in its function's signature, or None."""
    func = param.function
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    args = func.args
    positional = [a.arg for a in args.posonlyargs + args.args]
    defaults = dict(zip(reversed(positional), reversed(args.defaults)))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    return defaults.get(param.name)


def is_ddp_wrapper(file: FileModel, call: ast.Call) -> bool:
    """torch's DistributedDataParallel, or a subclass named after it
    (mmcv's `MMDistributedDataParallel`) that takes the same arguments."""
    return file.is_call_to(call, "DistributedDataParallel", TORCH) or (
        terminal_name(call.func).endswith("DistributedDataParallel") and not file.callees(call))


def on_current_device(file: FileModel, call: ast.Call) -> ast.Call | None:
    """For a DDP wrapper given no `device_ids`: the `.cuda()` (no index) or
    `.to("cuda")` that put the module it wraps on the process's current
    device, passed directly or as the name it was assigned to (`net =
    net.cuda()`, or a bare `net.cuda()` statement before the wrap); else None."""
    if keyword(call, "device_ids", 1) is not None or has_star_kwargs(call) or \
            any(type(a) is ast.Starred for a in call.args):
        return None
    module = keyword(call, "module", 0)
    if module is None:
        return None
    if isinstance(module, ast.Call) and _to_current_device(module):
        return module
    if type(module) is not ast.Name:
        return None
    origins = file.origins(module)
    moved = [o for o in origins if isinstance(o, ast.Call) and _to_current_device(o)]
    if origins and len(moved) == len(origins):
        return moved[0]
    for stmt in file.calls:  # `net.cuda()` as a statement: nn.Module.cuda() moves it in place
        if (stmt.lineno < call.lineno and _to_current_device(stmt) and type(stmt.func) is ast.Attribute
                and type(stmt.func.value) is ast.Name and stmt.func.value.id == module.id
                and type(file.parent.get(stmt)) is ast.Expr and file.function(stmt) is file.function(call)):
            return stmt
    return None


def _to_current_device(node: ast.AST) -> bool:
    """`x.cuda()` with no device, or `x.to("cuda")`."""
    if type(node) is not ast.Call or type(node.func) is not ast.Attribute:
        return False
    if node.func.attr == "cuda":
        return not node.args and not node.keywords
    if node.func.attr == "to" and len(node.args) == 1 and not node.keywords:
        return constant(node.args[0], str) == "cuda"
    return False


def wrapper_arguments(file: FileModel, name: str, position: int) -> Iterator[tuple[str, ast.expr, list]]:
    """(kind, value, its origins) for each DataParallel / DistributedDataParallel the file
    builds with argument `name` (or positional `position`): what the device rules judge."""
    for call in file.calls:
        kind = wrapper_kind(file, call)
        if not kind:
            continue
        value = keyword(call, name, position)
        if value is not None:
            yield kind, value, file.origins(value)


# A helper from a library or another module that starts the process group:
# timm's `utils.init_distributed_device(args)`, DeiT's and MAE's
# `utils.init_distributed_mode(args)`, `setup_ddp()`, `ddp_setup(rank, n)`.
DIST_INIT_HELPER = re.compile(r"^(?:init|setup|initialize)_(?:distributed|dist|ddp)(?:_[a-z]+)?$"
                              r"|^(?:ddp|dist|distributed)_(?:init|setup)$")
# Text a file that starts a process group contains (a cheap test before parsing).
DISTRIBUTED_NEEDLES = ("init_process_group", "DistributedDataParallel", "FullyShardedDataParallel", "spawn",
                       "start_processes", "init_dist", "setup_dist", "initialize_dist", "_ddp", "ddp_init", "ddp_setup", "dist_init", "dist_setup",
                       "distributed_init", "distributed_setup")


def never_run(file: FileModel, node: ast.AST) -> bool:
    """`node` sits in a function at the top of a script that the script never runs: the file has a
    main block, and nothing in the file calls that function, passes it on or decorates it (lint
    heldout21 u057: `# main()` commented out in the main block, which spawns the DDP tutorial's demo
    instead). What such a function would do is no part of this program's run: not in its process
    group, not in its spawned workers."""
    if MAIN_TEST not in file.text:
        return False
    top = next((a for a in file.ancestors(node)
                if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef)) and file.parent.get(a) is file.tree), None)
    return top is not None and not top.decorator_list and not file.entry_sites(top)


def is_distributed_program(file: FileModel) -> bool:
    """The file starts a process group (itself, or through a helper it
    imports), spawns workers or wraps a model in DDP or FSDP: every statement at its
    top runs once per rank."""
    for call in file.calls:
        if file.is_call_to(call, "init_process_group", TORCH) or file.is_spawn(call):
            return True
        if file.is_call_to(call, "DistributedDataParallel", TORCH) \
                or file.is_call_to(call, "FullyShardedDataParallel", TORCH):
            return True  # (FSDP shards over the default group: lint heldout25 u009 starts it in a helper module)
        if DIST_INIT_HELPER.match(terminal_name(call.func)) and not file.callees(call) \
                and (file.qualname(call.func) or "").split(".", 1)[0] not in NO_GROUP_HELPERS:
            return True  # (a helper this file defines is read above: its own init_process_group)
    return False


# Where Lightning's Trainer comes from.
LIGHTNING = ("pytorch_lightning", "lightning")
# Lightning strategies that start one process per device, as DDP does (`fsdp`, `fsdp_native`,
# `deepspeed_stage_2`: lint heldout25 u003's torch.save after trainer.fit(strategy='fsdp')); their
# `_spawn` / `_notebook` / `_fork` variants run the rest of the script in one process.
MULTI_PROCESS_STRATEGIES = ("ddp", "fsdp", "deepspeed")


def lightning_multi_process(file: FileModel) -> ast.Call | None:
    """The Lightning `Trainer(...)` told to use several devices (`devices=4`, `gpus=2`, `devices=-1`) or a
    strategy of one process per device (MULTI_PROCESS_STRATEGIES): Lightning starts the script again for
    each device, so every line of it runs on every rank (issue 41's heldout4: a torch.save after fit; lint
    heldout25 u048: CIFAR10(download=True) in the main block). `ddp_spawn` / `ddp_notebook` run the rest
    of the script in one process only. None where there is none."""
    for call in file.calls:
        if terminal_name(call.func) != "Trainer" or not (file.qualname(call.func) or "").startswith(LIGHTNING):
            continue
        strategy = keyword(call, "strategy")
        named = constant(strategy, str) if strategy is not None else None
        if named is not None and ("spawn" in named or "notebook" in named or "fork" in named):
            continue
        if named is not None and named.startswith(MULTI_PROCESS_STRATEGIES):
            return call
        for arg in ("devices", "gpus"):
            count = constant(keyword(call, arg), int) if keyword(call, arg) is not None else None
            if isinstance(count, int) and not isinstance(count, bool) and (count > 1 or count == -1):
                return call
    return None


# Libraries whose modules a script may call a group-starting helper on that they do not have:
# transformers' `deepspeed` (`from transformers import deepspeed`) is its integration shim, with no
# `init_distributed` (lint heldout24 u074, whose `deepspeed.init_distributed()` raises AttributeError).
NO_GROUP_HELPERS = frozenset({"transformers"})


# Words by which a file shows it runs as several processes: a launch line it writes down (its docstring, a
# comment, a usage string), a launcher's variable or option it reads, a DeepSpeed config, DDP named.
MULTI_PROCESS_WORDS = re.compile(r"torchrun|torch\.distributed\.(?:run|launch)|accelerate launch|--nproc[_-]per[_-]node|"
                                 r"--num_processes|--multi_gpu|deepspeed|\bDDP\b|local_rank|LOCAL_RANK|WORLD_SIZE",
                                 re.IGNORECASE)


# accelerate's calls that only mean something with several processes: a barrier, a gather, one process going
# first. A file that uses one on its Accelerator is written for `accelerate launch` over several
# processes, whatever its text says about the launch (lint heldout27c u031, u033, u037: LoRA and PEFT trainers
# that end `accelerator.wait_for_everyone()`, then save on every process). Not a main-process test
# (`if accelerator.is_main_process:`) nor the count (`* accelerator.num_processes` in a total batch size): templates
# write them for one process too, and the test is the very one a rule about rank-dependent code reads (lint
# heldout25c u013's reader: a name bound under it, a warning only).
ACCELERATE_PROCESS_API = frozenset({
    "wait_for_everyone", "main_process_first", "local_main_process_first", "gather", "gather_for_metrics", "reduce",
    "pad_across_processes", "split_between_processes",
    # the process's own index read off the accelerator (`device_map={"": Accelerator().process_index}`: lint
    # heldout29 u004, a QLoRA script placing each process's copy on its own GPU): one process has only index 0
    "process_index", "local_process_index",
})
# accelerate's settings that only mean something with several processes: the DDP wrapper's own options
# (`Accelerator(kwargs_handlers=[DistributedDataParallelKwargs(find_unused_parameters=True)])`: lint heldout29
# u011, heldout29b u024) and one batch split across the processes (`Accelerator(split_batches=True)`: heldout29b u016).
ACCELERATE_PROCESS_SETTINGS = frozenset({"DistributedDataParallelKwargs"})
# accelerate's objects that carry the process's index besides an accelerator.
ACCELERATE_STATES = frozenset({"PartialState", "AcceleratorState", "state"})
# torch.distributed's calls that only mean something in a process group a library started (a Hugging Face
# Trainer's under torchrun: lint heldout29b u019, `dist.barrier()` at the start and end of a LoRA script).
TORCH_PROCESS_API = frozenset({"barrier", "all_reduce", "all_gather", "broadcast", "reduce", "gather", "get_rank",
                               "get_world_size", "all_gather_object", "broadcast_object_list"})


def accelerate_process_sign(file: FileModel) -> ast.AST | None:
    """The first use of accelerate's multi-process API on an accelerator (`accelerator.wait_for_everyone()`,
    `self.accelerator.gather_for_metrics(...)`, `accelerator.main_process_first()`, `accelerator.process_index`) or
    of a setting that only several processes have (`DistributedDataParallelKwargs(...)`, `Accelerator(split_batches=
    True)`): the sign that the file is written for several processes, where it names no launcher. None where it uses
    none."""
    found: list[ast.AST] = [n for n in ast.walk(file.tree) if type(n) is ast.Attribute
                            and n.attr in ACCELERATE_PROCESS_API and "accelerator" in terminal_name(n.value).lower()]
    for call in file.calls:
        qualname = file.qualname(call.func) or ""
        if not qualname.startswith("accelerate"):
            continue
        if terminal_name(call.func) in ACCELERATE_PROCESS_SETTINGS:
            found.append(call)
        elif terminal_name(call.func) == "Accelerator" and constant(keyword(call, "split_batches")) is True:
            found.append(next(k for k in call.keywords if k.arg == "split_batches"))
    return min(found, key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))) if found else None


def torch_process_sign(file: FileModel) -> ast.Call | None:
    """The first call of torch.distributed's process-group API (`dist.barrier()`, `dist.get_rank()`) in a file
    that starts no group itself: a library's launch (a Hugging Face Trainer's under torchrun) is what it is
    written for. None where it makes none."""
    for call in file.calls:
        qualname = file.qualname(call.func) or ""
        if qualname.startswith("torch.distributed.") and terminal_name(call.func) in TORCH_PROCESS_API:
            return call
    return None


def framework_words(file: FileModel, call: ast.Call) -> str:
    """How a message says that `call` (what `data_parallel_framework` returned) runs the file once per
    process, naming the accelerate call that shows it where the file names no launcher, or saying that the
    launch is the condition where nothing in the file shows it (`unshown_accelerate_launch`)."""
    words = MULTI_PROCESS_WORDS.search(file.text) is not None
    sign: ast.AST | None = None
    if not words:
        sign = accelerate_process_sign(file) if terminal_name(call.func) == "Accelerator" else torch_process_sign(file)
    if not words and sign is None and terminal_name(call.func) == "Accelerator":
        prepared = accelerate_training(file)
        at = f", the model it prepares on line {prepared.lineno}" if prepared is not None else ""
        # (lint heldout31 u023: `if cfg['use_accelerator']: accelerator = Accelerator()`, a setting of its config)
        test = next(iter(file.conditions(call)), None)
        where = f", where `{ast.unparse(test)[:50]}` holds (line {test.lineno})" if test is not None else ""
        return (" when launched as several processes (`accelerate launch` on several GPUs; this file shows no launch, "
                f"but trains through `{ast.unparse(call.func)[:40]}(...)` on line {call.lineno}{where}{at})")
    said = f" (the file runs once per process under `{ast.unparse(call.func)[:40]}(...)`, line {call.lineno}"
    if sign is not None and terminal_name(call.func) != "initialize":
        said += (f", launched as several: its `{ast.unparse(sign)[:50]}` on line {getattr(sign, 'lineno', '?')} only "
                 "means something with more than one process")
    return said + ")"


def data_parallel_framework(file: FileModel, unshown: bool = False) -> ast.Call | None:
    """The call by which a library runs this file's training data-parallel, one process per GPU
    under its launcher, with no process group or DDP wrapper the file makes itself: DeepSpeed's
    `deepspeed.initialize(...)` (the engine averages the gradients in its `backward`); accelerate's
    `Accelerator(...)` and transformers' or trl's `Trainer(...)` (`SFTTrainer`, `Seq2SeqTrainer`, or a class
    of the file derived from one: `class EventChatTrainer(Trainer):`, lint heldout25c u030, u033, u068) where
    the file also shows it runs as several processes (MULTI_PROCESS_WORDS: lint heldout24 u010's
    `srun torchrun --nproc_per_node ...` docstring, heldout21 u026's `device_map="DDP"`); those two run
    as well in one process, as most of the mature repositories' examples and notebooks do (read without
    that condition, the issue 28 control gained some 85 unjudged save-all-ranks warnings there). An
    `Accelerator` counts too where the file uses accelerate's multi-process API on it
    (`accelerate_process_sign`: a barrier, a gather, `main_process_first()`), which does nothing in one
    process: the file is written for several (lint heldout27c). Under `deepspeed`,
    `accelerate launch` or `torchrun` every statement at the top of such a file runs once per process,
    as in a DDP script. Never a notebook: Jupyter runs it in one process. The first such call, or None.

    With `unshown`, also an `Accelerator` that shows none of that but trains a model it prepares
    (`unshown_accelerate_launch`): the rules that say "every process" of such a file say the launch is their
    condition (issue 41, item 2: a warning that names what lint could not decide, not silence)."""
    if file.notebook:
        return None
    shown = MULTI_PROCESS_WORDS.search(file.text) is not None or torch_process_sign(file) is not None
    coordinated: bool | None = None  # accelerate's multi-process API used (computed once, where needed)
    bare: ast.Call | None = None
    for call in file.calls:
        qualname = file.qualname(call.func) or ""
        if qualname == "deepspeed.initialize":
            return call
        if qualname.startswith("accelerate.") and terminal_name(call.func) == "Accelerator":
            if coordinated is None:
                coordinated = shown or accelerate_process_sign(file) is not None
            if coordinated:
                return call
            bare = bare or call
        if not shown:
            continue
        if _hf_trainer(file, call.func) or _project_hf_trainer(file, call):
            return call
    if unshown and bare is not None and unshown_accelerate_launch(file):
        return bare
    return None


# A usage line that runs the script as one plain process (`python train.py`, `Usage: python3 train_ddpm.py
# parameters.ini`), in a comment or a string.
ONE_PROCESS_LINE = re.compile(r"(?:^|[\s`'\"(:])python3?\s+(?!-m\b)[\w./-]+\.py\b", re.MULTILINE)
# CUDA_VISIBLE_DEVICES written to one GPU's index: the run sees one GPU.
ONE_GPU = re.compile(r"\s*\d+\s*")


def accelerate_training(file: FileModel) -> ast.Call | None:
    """The first `accelerator.prepare(...)` that is given a model (an argument whose name says no optimizer,
    scheduler or loader: `model, optimizer, loader = accelerator.prepare(model, optimizer, loader)`): the
    file trains through accelerate. None where it prepares none."""
    for call in file.calls:
        func = call.func
        if type(func) is not ast.Attribute or func.attr != "prepare" \
                or "accelerator" not in terminal_name(func.value).lower():
            continue
        if any(type(a) in (ast.Name, ast.Attribute) and not NOT_A_MODEL.search(terminal_name(a))
               for a in call.args):
            return call
    return None


def unshown_accelerate_launch(file: FileModel) -> bool:
    """An accelerate training script (`accelerate_training`) that shows no launch, neither of several processes
    (`data_parallel_framework`'s signs) nor of one: no usage line that runs it as a plain `python x.py` (the
    issue 28 control's one-process examples, lint heldout31 u018's documented launch), no CUDA_VISIBLE_DEVICES
    set to one GPU (lint heldout31 u015's `'2'`), not a notebook. Under `accelerate launch` on several GPUs,
    what accelerate is for, every line of it runs once per process; its readers read every such script so
    (lint heldout29 u016, heldout30 u001, heldout31 u021, u023, u025, heldout27b u016: saves, a download, a
    load on every process). The launch is the one thing lint cannot decide here, and the rules that use this
    say so."""
    if file.notebook or accelerate_training(file) is None:
        return False
    if ONE_PROCESS_LINE.search(file.text) and _documents_one_process(file):
        return False
    return not any(type(value) is ast.Constant and isinstance(value.value, (str, int))
                   and ONE_GPU.fullmatch(str(value.value)) for _, value in env_writes(file, "CUDA_VISIBLE_DEVICES"))


def _documents_one_process(file: FileModel) -> bool:
    """A comment or a string of the file runs it as a plain `python x.py` (its usage line)."""
    if any(line.lstrip().startswith("#") and ONE_PROCESS_LINE.search(line) for line in file.text.splitlines()):
        return True
    return any(type(n) is ast.Constant and isinstance(n.value, str) and ONE_PROCESS_LINE.search(n.value)
               for n in ast.walk(file.tree))


# transformers' and trl's training settings, which only their Trainers take (`TrainingArguments`, `SFTConfig`).
HF_TRAINING_SETTINGS = re.compile(r"TrainingArguments$|^(?:SFT|DPO|GRPO|PPO|KTO|ORPO|Reward|CPO|BCO)Config$")


def _project_hf_trainer(file: FileModel, call: ast.Call) -> bool:
    """A Trainer class of the project's own modules, its body not in view (`from modeling.score_model.pairwise_model
    import PairwiseRewardModelTrainer`), given `args=` in a file that imports transformers' or trl's training
    settings (`TrainingArguments`, `SFTConfig`): the class is a Hugging Face Trainer's subclass, which those settings
    are for (lint heldout31 u001: a reward-model script whose `model.save_pretrained(...)` after `trainer.train()`
    runs on every torchrun process)."""
    func = call.func
    if type(func) is not ast.Name or not func.id.endswith("Trainer") or keyword(call, "args") is None \
            or file.lookup(func):
        return False
    module = file.imports.get(func.id) or file.relative_imports.get(func.id) or ""
    if not module or (not module.startswith(".") and module.split(".", 1)[0] in LIBRARIES):
        return False
    return any(HF_TRAINING_SETTINGS.search(name) and qualname.split(".", 1)[0] in ("transformers", "trl")
               for name, qualname in file.imports.items())


def _hf_trainer(file: FileModel, func: ast.expr, depth: int = 0) -> bool:
    """`func` is transformers' or trl's Trainer (`Seq2SeqTrainer`, `SFTTrainer`), or a class of this
    file derived from one (`class EventChatTrainer(Trainer):`, `class SFTTrainerNoShuffle(SFTTrainer):`:
    lint heldout25c u030, u033, u068, whose saves every process makes)."""
    if (file.qualname(func) or "").split(".", 1)[0] in ("transformers", "trl"):
        return terminal_name(func).endswith("Trainer")
    if depth >= 3 or type(func) is not ast.Name:
        return False
    classes = [n for n in file.tree.body if type(n) is ast.ClassDef and n.name == func.id]
    return len(classes) == 1 and any(_hf_trainer(file, base, depth + 1) for base in classes[0].bases)


# What `accelerator.prepare(...)` hands back that is no model: an optimizer, a scheduler, a loader (by the name the
# script gives it, where its construction is not in view: a parameter, a helper of another module).
NOT_A_MODEL = re.compile(r"optim|sched|loader|data|^opt$", re.IGNORECASE)


def _given_at_every_call(file: FileModel, param: Param) -> list[ast.expr]:
    """What each call of this file passes `param` (positional or by keyword); [] where the function is
    also referenced (a callback, called from elsewhere), no call is seen, or a call does not show it."""
    func = param.function
    sites = file.call_sites.get(func, [])
    if not sites or func in file.referenced or not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    positional = [a.arg for a in func.args.posonlyargs + func.args.args]
    out = []
    for call, offset in sites:
        index = positional.index(param.name) - offset if param.name in positional else -1
        value = keyword(call, param.name, index) if index >= 0 else keyword(call, param.name)
        if value is None:
            return []
        out.append(value)
    return out


def prepared_model(file: FileModel, holder: ast.expr, depth: int = 0) -> ast.Call | None:
    """The `accelerator.prepare(...)` call every value of `holder` comes from, where what it hands back there is
    the model (`model, optimizer, loader = accelerator.prepare(model, optimizer, loader)`: the first; not the
    optimizer, scheduler or loader beside it). Under a multi-process accelerate launch prepare wraps the model in
    DistributedDataParallel (lint heldout21 u004, u009, u024, heldout22b u005: `torch.save(model.state_dict(),
    ...)` of what prepare returned, read by their readers as a wrapper's 'module.'-prefixed checkpoint). A
    parameter is followed to what every call of its function in this file gives it. None where any value
    comes from elsewhere."""
    if type(holder) is not ast.Name:
        return None
    found: ast.Call | None = None
    for b in _global_at_calls(file, holder) or file.lookup(holder) or []:
        if isinstance(b, Param) and depth < 2:
            # a parameter of a function of this file: what each of its calls gives it (`save_checkpoint(model,
            # output_dir, epoch)`, `train(model, ...)` with the prepared model: lint heldout27 u020, heldout27b
            # u016); none where the function is called from elsewhere too, or a call gives something else
            passed = _given_at_every_call(file, b)
            if not passed:
                return None
            for value in passed:
                found = prepared_model(file, value, depth + 1)
                if found is None:
                    return None
            continue
        if not isinstance(b, Binding) or b.kind != "value" or type(b.value) is not ast.Call:
            return None
        call = b.value
        if type(call.func) is not ast.Attribute or call.func.attr != "prepare" \
                or "accelerator" not in terminal_name(call.func.value).lower():
            return None
        index = b.path[0] if b.path else 0
        if len(b.path) > 1 or index >= len(call.args) or (not b.path and len(call.args) != 1):
            return None
        given = call.args[index]
        if NOT_A_MODEL.search(holder.id) or NOT_A_MODEL.search(source(given)) or any(
                type(o) is ast.Call and (is_optimizer(file, o) or file.is_call_to(o, "DataLoader"))
                for o in file.origins(given)):
            return None
        if type(given) is ast.Name and _frozen_before(file, given, call):
            return None
        found = call
    return found


def _global_at_calls(file: FileModel, holder: ast.Name) -> list[Binding | Param] | None:
    """A module global read in a function of the file (`def evaluate(loader): ... model.image_forward(img)`, with
    `model` bound at the module's top): the binding it has at each call of that function, the last one above the
    call at the module's level (lint heldout29 u016 and heldout30 u001: evaluate() defined above the main block's
    `model = ...; vae, model, ... = accelerator.prepare(vae, model, ...)` and called below it). None where the
    function binds the name itself, is called from another function or passed on, or a binding that reaches a
    call runs under a test the call does not."""
    func = file.function(holder)
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or file.scope(holder) is not func \
            or file.bindings.get((func, holder.id)) or file.parent.get(func) is not file.tree:
        return None
    module = file.bindings.get((file.tree, holder.id))
    sites = file.entry_sites(func)
    if not module or not sites or any(type(site) is not ast.Call or file.function(site) is not None
                                      for site in sites):
        return None
    reaching: list[Binding | Param] = []
    for site in sites:
        before = [b for b in module if b.pos <= position(site)]
        if not before:
            return None
        last = max(before, key=lambda b: b.pos)
        if {id(t) for t in file.conditions(last.value)} - {id(t) for t in file.conditions(site)}:
            return None
        reaching.append(last)
    return reaching


def _frozen_before(file: FileModel, model: ast.Name, prepare: ast.Call) -> bool:
    """`model` has every parameter frozen above `prepare` in its function (`vae.requires_grad_(False)`, `for p in
    vae.parameters(): p.requires_grad = False`): accelerate wraps in DDP only a model with a trainable parameter,
    and hands this one back as it is (lint heldout27c u025: a try-on trainer's frozen VAE read through
    `vae.encode`; not heldout29 u016, whose VAE is frozen after prepare). Once per name and prepare: a walk of the
    prepare's scope, asked for every read of the prepared model."""
    key = ("frozen before prepare", model.id, id(prepare))
    known = file.memo.get(key)
    if isinstance(known, bool):
        return known
    file.memo[key] = answer = _frozen_walk(file, model, prepare)
    return answer


def _frozen_walk(file: FileModel, model: ast.Name, prepare: ast.Call) -> bool:
    scope = file.function(prepare)
    frozen: ast.stmt | ast.expr | None = None
    for node in ast.walk(scope or file.tree):
        if getattr(node, "lineno", prepare.lineno) >= prepare.lineno or file.function(node) is not scope:
            continue
        if type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr == "requires_grad_" \
                and ast.unparse(node.func.value) == model.id and node.args and constant(node.args[0]) is False:
            frozen = node if frozen is None or node.lineno > frozen.lineno else frozen
        if type(node) is ast.For and type(node.iter) is ast.Call and type(node.iter.func) is ast.Attribute \
                and node.iter.func.attr == "parameters" and ast.unparse(node.iter.func.value) == model.id \
                and not any(type(n) is ast.If for n in ast.walk(node)) and any(
                    type(n) is ast.Assign and any(type(t) is ast.Attribute and t.attr == "requires_grad" for t in n.targets)
                    and constant(n.value) is False for n in ast.walk(node)):
            frozen = node if frozen is None or node.lineno > frozen.lineno else frozen
    if frozen is None:
        return False
    # nothing between the freeze and prepare may give it trainable parameters again (lint heldout27c u033: a frozen
    # UNet handed to `patch_lora_layers(unet, ...)`, whose LoRA layers train: prepare wraps it)
    last = frozen.end_lineno or frozen.lineno
    for node in ast.walk(scope or file.tree):
        if type(node) is not ast.Name or node.id != model.id or not (last < node.lineno < prepare.lineno):
            continue
        up = file.parent.get(node)
        if not (type(up) is ast.Attribute and up.attr in HARMLESS_AFTER_FREEZE):
            return False
    return True


# What a script may do with a frozen model before prepare that gives it no trainable parameter.
HARMLESS_AFTER_FREEZE = frozenset({"to", "cuda", "eval", "half", "float", "bfloat16", "dtype", "device", "config",
                                   "requires_grad_", "enable_slicing", "enable_tiling"})


def rank_kind(file: FileModel, value: ast.expr) -> tuple[str, str]:
    """Which rank `value` holds, as its origins show: ("local", how) for
    LOCAL_RANK / a `local_rank`, ("global", how) for RANK / `dist.get_rank()`,
    ("", "") when neither shows (a spawn index, a literal, an argument)."""
    if type(value) is ast.BinOp:
        if type(value.op) is ast.Mod and is_world_size(file, value.right):
            kind, how = rank_kind(file, value.left)  # `rank % world_size` is the rank itself: no rank reaches it
            return kind, f"`{ast.unparse(value)[:60]}`, the rank itself" if kind else how
        return "", ""  # `rank % torch.cuda.device_count()`, `node * gpus + gpu`: computed on purpose
    # where the value comes from first: `local_rank = dist.get_rank()` is a global rank
    for origin in [o for o in file.origins(value) if o is not value] + [value]:
        if not isinstance(origin, ast.AST):
            continue
        if type(origin) is ast.BinOp:
            if origin is not value and type(origin.op) is ast.Mod and is_world_size(file, origin.right):
                return rank_kind(file, origin)  # `device = rank % world_size`
            continue  # computed: `local_rank + node_rank * gpus` is a global rank, `rank % n` a local one
        for sub in ast.walk(origin):
            text = constant(sub, str)
            # (`args['local_rank']`: a config dict's key, as CLTR's train_distributed.py reads it; lint heldout15)
            if text == "LOCAL_RANK" or (type(sub) in (ast.Name, ast.Attribute) and terminal_name(sub) == "local_rank") \
                    or (type(sub) is ast.Subscript and constant(sub.slice, str) == "local_rank"):
                return "local", f"`{ast.unparse(origin)[:60]}`"
            if text == "RANK" and (written := rank_written_local(file)) is not None:
                # lint heldout19 u030: `os.environ['RANK'] = str(arg.local_rank)` in main(), RANK read later
                return "local", f"`{ast.unparse(origin)[:60]}`, which line {written.lineno} writes from the local rank"  # type: ignore[attr-defined]
            if text in ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK") or (
                    type(sub) is ast.Call and terminal_name(sub.func) == "get_rank"):
                return "global", f"`{ast.unparse(origin)[:60]}`"
            # accelerate's indices: `Accelerator().process_index` is the global one, `local_process_index` the
            # node's (lint heldout29 u004: the global index as a QLoRA script's device_map GPU)
            if type(sub) is ast.Attribute and sub.attr in ("process_index", "local_process_index") and (
                    "accelerator" in terminal_name(sub.value).lower() or terminal_name(sub.value) in ACCELERATE_STATES):
                return ("global" if sub.attr == "process_index" else "local"), f"`{ast.unparse(origin)[:60]}`"
    return "", ""


def rank_written_local(file: FileModel) -> ast.AST | None:
    """The file's write of RANK into the environment from the local rank (`os.environ['RANK'] =
    str(arg.local_rank)`), where every write of RANK it makes is one: the RANK this file reads is then
    the local rank, whatever a launcher set (lint heldout19 u030, a skeleton-action trainer whose main()
    copies `--local_rank` into RANK before its processor reads RANK for the device). None otherwise; a
    computed write (`str(node_rank * gpus + local_rank)`) is not one."""
    key = ("rank-written-local", file.tree)
    memo = file.memo.get(key)
    if isinstance(memo, tuple):
        return memo[0]
    file.memo[key] = (None,)  # (a write of RANK from RANK itself reads it as the launcher's)
    writes = list(env_writes(file, "RANK", include_defaults=False))
    found = None
    if writes and all(value is not None and rank_kind(file, env_value(value))[0] == "local" for _, value in writes):
        found = writes[0][0]
    file.memo[key] = (found,)
    return found


def env_value(value: ast.expr) -> ast.expr:
    """`str(x)` / `int(x)` -> x: the value an environment write converts."""
    while type(value) is ast.Call and type(value.func) is ast.Name and value.func.id in ("str", "int") \
            and len(value.args) == 1 and not value.keywords:
        value = value.args[0]
    return value


def is_world_size(file: FileModel, value: ast.expr) -> bool:
    """`value` holds the number of processes in the job, as its origins show:
    `dist.get_world_size()`, WORLD_SIZE, a `world_size`. Not the GPUs of a node,
    whatever its name (`world_size = torch.cuda.device_count()`)."""
    if is_gpu_count(file, value):
        return False
    for origin in [o for o in file.origins(value) if o is not value] + [value]:
        if not isinstance(origin, ast.AST):
            continue
        for sub in ast.walk(origin):
            if constant(sub, str) in ("WORLD_SIZE", "SLURM_NTASKS") or (
                    type(sub) in (ast.Name, ast.Attribute) and terminal_name(sub) == "world_size") or (
                    type(sub) is ast.Call and terminal_name(sub.func) == "get_world_size"):
                return True
    return False


def is_gpu_count(file: FileModel, value: ast.expr | None, _depth: int = 0) -> bool:
    """Every value `value` may hold is this machine's GPU count, `torch.cuda.device_count()`.
    Bounded: a function that calls itself with `int(world_size)` makes the `int(...)` an origin
    of its own argument, and following it unbounded raised RecursionError (lint heldout24)."""
    if value is None or _depth > 8:
        return False
    origins = [o for o in file.origins(value) if isinstance(o, ast.AST)] or [value]
    return all(type(o) is ast.Call and terminal_name(o.func) == "device_count"
               or (type(o) is ast.Call and terminal_name(o.func) == "int" and len(o.args) == 1
                   and is_gpu_count(file, o.args[0], _depth + 1))
               for o in origins)


def one_node_group(file: FileModel) -> ast.Call | None:
    """An `init_process_group` whose `world_size` is this machine's GPU count: the job is one
    node by construction, so there the global rank is the local rank."""
    for call in file.calls_to("init_process_group", TORCH):
        if is_gpu_count(file, keyword(call, "world_size", 3)):
            return call
    return None


def is_torch_spawn_program(file: FileModel) -> bool:
    return any(file.is_spawn(call) for call in file.calls)


def env_writes(file: FileModel, variable: str, include_defaults: bool = True) -> Iterator[tuple[ast.AST, ast.expr | None]]:
    """Writes of `variable` into the process environment, as (node, value):
    `os.environ[V] = x`, `os.environ.update({V: x})`, `os.environ.update(V=x)`,
    `os.putenv(V, x)`, and `os.environ.setdefault(V, x)` if include_defaults."""
    for target, value in file.item_assignments:
        if constant(target.slice, str) == variable and file.qualname(target.value) == "os.environ":
            yield target, value
    for call in file.calls:
        func = call.func
        if type(func) is not ast.Attribute:
            continue
        if func.attr == "putenv" and file.qualname(func) == "os.putenv":
            if call.args and constant(call.args[0], str) == variable:
                yield call, call.args[1] if len(call.args) > 1 else None
        elif func.attr in ("update", "setdefault") and file.qualname(func.value) == "os.environ":
            if func.attr == "setdefault":
                if include_defaults and call.args and constant(call.args[0], str) == variable:
                    yield call, call.args[1] if len(call.args) > 1 else None
                continue
            for kw in call.keywords:
                if kw.arg == variable:
                    yield call, kw.value
            for arg in call.args:
                if type(arg) is ast.Dict:
                    for k, v in zip(arg.keys, arg.values):
                        if constant(k, str) == variable:
                            yield call, v


# Calls that pick a port anew each time they run.
PICKS_PORT = re.compile(r"free_port|open_port|unused_port|available_port|random_port|getsockname|randint|randrange",
                        re.IGNORECASE)
# Calls that hand one process's value to every process (MPI's bcast, torch's broadcast_object_list).
SHARES_VALUE = re.compile(r"bcast|broadcast|allgather|all_gather|scatter", re.IGNORECASE)


def port_pick(file: FileModel, value: ast.expr | None, depth: int = 0) -> ast.Call | None:
    """The port-picking call (`find_free_port()`, a socket's `getsockname()`) the
    value comes from, followed through names; None when one rank's pick is handed
    to every rank (`comm.bcast(_find_free_port(), root=0)`)."""
    if value is None or depth > 3:
        return None
    if any(type(sub) is ast.Call and SHARES_VALUE.search(terminal_name(sub.func)) for sub in ast.walk(value)):
        return None
    for sub in ast.walk(value):
        if type(sub) is ast.Call and PICKS_PORT.search(terminal_name(sub.func)):
            return sub
        if type(sub) is ast.Name and type(sub.ctx) is ast.Load:
            for origin in file.origins(sub):
                if isinstance(origin, ast.expr) and origin is not sub:
                    found = port_pick(file, origin, depth + 1)
                    if found is not None:
                        return found
    return None


def source(node: ast.AST, limit: int = 60) -> str:
    """Short source text of an expression, for messages."""
    text = ast.unparse(node)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def values(file: FileModel, expr: ast.expr) -> list[object]:
    """What `expr` may hold, followed where the value is written in the
    file: `file.origins`, then an argparse option's default for
    `args.workers` (`add_argument("--workers", default=4)`), and a constant
    dict's entry for `CONFIG["port"]` (`CONFIG = {"port": 12355}`). What
    cannot be followed stays as it is (the caller decides what that means)."""
    out: list[object] = []
    for origin in file.origins(expr):
        if type(origin) is ast.Attribute:
            default = argparse_default(file, origin.attr)
            if default is not None:
                out += file.origins(default)
                continue
        if type(origin) is ast.Subscript:
            key = constant(origin.slice)
            entries = [v for table in file.origins(origin.value) if type(table) is ast.Dict
                       for k, v in zip(table.keys, table.values) if k is not None and key is not None and constant(k) == key]
            if len(entries) == 1:
                out += file.origins(entries[0])
                continue
        out.append(origin)
    return out


def argparse_option(file: FileModel, dest: str) -> ast.Call | None:
    """The one `add_argument(...)` call of the file that stores `dest` (`--num-workers` / `--num_workers` /
    `dest="num_workers"`); None when there is none, or several."""
    key = ("argparse-options", file.tree)
    table = file.memo.get(key)
    if not isinstance(table, dict):  # (file.memo holds objects; this key only this table)
        found: dict[str, list[ast.Call]] = {}
        for call in file.calls:
            if type(call.func) is not ast.Attribute or call.func.attr != "add_argument":
                continue
            flags = [c for c in (constant(a, str) for a in call.args) if c]
            name = constant(keyword(call, "dest"), str)
            if name is None:
                longs = [f for f in flags if f.startswith("--")]
                name = (longs[0] if longs else flags[0] if flags else "").lstrip("-").replace("-", "_")
            if name:
                found.setdefault(name, []).append(call)
        table = file.memo[key] = found
    calls = table.get(dest, [])
    return calls[0] if len(calls) == 1 else None


def argparse_default(file: FileModel, dest: str) -> ast.expr | None:
    """The `default=` of the one argparse option of the file stored as `dest`; None when there is none,
    or several (`argparse_option`)."""
    option = argparse_option(file, dest)
    return keyword(option, "default") if option is not None else None


def spread_keywords(file: FileModel, call: ast.Call) -> dict[str, ast.expr] | None:
    """The keywords a call receives through `**kwargs` when the file builds
    that dict itself (`kwargs = dict(num_workers=8)`, `{"num_workers": 8}`);
    None when one of them cannot be followed."""
    out: dict[str, ast.expr] = {}
    for kw in call.keywords:
        if kw.arg is not None:
            continue
        origins = file.origins(kw.value)
        if len(origins) != 1:
            return None
        (table,) = origins
        if type(table) is ast.Dict:
            for k, v in zip(table.keys, table.values):
                name = constant(k, str) if k is not None else None
                if name is None:
                    return None
                out[name] = v
        elif type(table) is ast.Call and terminal_name(table.func) == "dict" and not table.args:
            for inner in table.keywords:
                if inner.arg is None:
                    return None
                out[inner.arg] = inner.value
        else:
            return None
    return out


def in_spawning_parent(file: FileModel, node: ast.AST) -> bool:
    """`node` runs in the process that starts the ranks with mp.spawn, once: it sits in the
    function that calls mp.spawn (not itself a spawned function), or beside that call under
    the module's `if __name__ == "__main__":` (dev7 u011, ByUnal/mrl-clip-training-daquar:
    the parent torch.loads rank 0's checkpoint after `mp.spawn(..., join=True)` and saves the
    final model)."""
    func = file.function(node)
    if func is not None and file.spawned(func):
        return False
    for call in file.calls:
        if not file.is_spawn(call) or file.function(call) is not func:
            continue
        if func is not None:
            return True
        main = [a for a in file.ancestors(call) if type(a) is ast.If and MAIN_TEST in ast.unparse(a.test)]
        if main and any(a is main[0] for a in file.ancestors(node)):
            return True
    return False


# The loopback address: a rendezvous there meets only processes of this machine.
LOOPBACK = ("localhost", "127.0.0.1", "::1")
# The name of another module's function that starts the ranks when given a function of this
# file (`start_dist_train(train, world_size, config)`, `launch(main, num_gpus)`).
LAUNCHER = re.compile(r"spawn|launch|start|run_dist|dist_run|multiproc", re.IGNORECASE)


def string_prefix(file: FileModel, expr: ast.expr | None, depth: int = 0) -> str | None:
    """The literal text a string value starts with: a literal, an f-string, `"...".format(x)`,
    `"..." % x`, `"..." + x`, through a name whose every value is one of those with the same
    start; None where it does not show."""
    if expr is None or depth > 3:
        return None
    text = constant(expr, str)
    if text is not None:
        return text
    if type(expr) is ast.JoinedStr:
        first = expr.values[0] if expr.values else None
        return constant(first, str) if first is not None else None
    if type(expr) is ast.Call and type(expr.func) is ast.Attribute and expr.func.attr == "format":
        return string_prefix(file, expr.func.value, depth + 1)
    if type(expr) is ast.BinOp and type(expr.op) in (ast.Add, ast.Mod):
        return string_prefix(file, expr.left, depth + 1)
    if type(expr) is ast.Name:
        origins = [o for o in file.origins(expr) if o is not expr]
        starts = {string_prefix(file, o, depth + 1) if isinstance(o, ast.expr) else None for o in origins}
        return starts.pop() if len(starts) == 1 else None
    return None


def one_machine_rendezvous(file: FileModel, init: ast.Call) -> str | None:
    """How the file shows that the process group `init` starts meets processes of this machine
    only, whatever the ranks are called: its store is a `file://` path, its `tcp://` address is
    the loopback, or MASTER_ADDR is set to the loopback in the same function, on every path
    that reaches the call (no test around the write that is not around the call). None where
    the file does not show it."""
    method = string_prefix(file, keyword(init, "init_method", 1))
    if method is not None and method.startswith("file://"):
        return "its store is a file (`file://`)"
    if method is not None and method.startswith("tcp://") and method[len("tcp://"):].startswith(LOOPBACK):
        return f"its address is the loopback (`{method}`)"
    if method is not None and not method.startswith("env://"):
        return None
    scope = file.function(init)
    around = {id(test) for test in file.conditions(init)}
    loopback = None
    for write, value in env_writes(file, "MASTER_ADDR", include_defaults=False):
        values = file.origins(value) if value is not None else []
        if not values or not all(constant(o, str) in LOOPBACK for o in values):
            return None  # another address is written somewhere: the file does not decide it
        if file.function(write) is scope and getattr(write, "lineno", 0) < init.lineno \
                and all(id(test) in around for test in file.conditions(write)):
            loopback = write
    return f"MASTER_ADDR is the loopback (line {loopback.lineno})" if loopback is not None else None  # type: ignore[attr-defined]


def launched(file: FileModel) -> dict[ast.AST, list[ast.Call]]:
    """Functions of this file handed, as the first argument, to a function of another module
    whose name says it starts processes (`start_dist_train(train, world_size, config)`,
    `launch(main, args.num_gpus, ...)`): function -> those calls. The launcher is not in view;
    by the convention of torch's mp.spawn it calls the function with the process's index first,
    then the arguments it is given after the function."""
    out: dict[ast.AST, list[ast.Call]] = {}
    for func, refs in file.references.items():
        for ref in refs:
            call = file.parent.get(ref)
            if type(call) is not ast.Call or not call.args or call.args[0] is not ref or file.is_spawn(call):
                continue
            name = file.qualname(call.func) or ""
            root = name.split(".", 1)[0]
            if not name or root in TORCH or root in sys.stdlib_module_names or file.local_function(call) is not None \
                    or not LAUNCHER.search(terminal_name(call.func)):
                continue
            out.setdefault(func, []).append(call)
    return out


def started_here(file: FileModel, func: ast.AST) -> bool:
    """The file starts the processes that run `func` itself: it is mp.spawn's target, a
    `Process(target=func, ...)`, or handed to a launcher of another module (`launched`)."""
    return file.spawned(func) or func in launched(file) or process_target(file, func)


def process_target(file: FileModel, func: ast.AST) -> bool:
    """`func` is the target of a `multiprocessing.Process(target=func, ...)` of this file."""
    for ref in file.references.get(func, []):
        up = file.parent.get(ref)
        call = file.parent.get(up) if type(up) is ast.keyword and up.arg == "target" else None
        if type(call) is ast.Call and terminal_name(call.func) == "Process":
            return True
    return False
