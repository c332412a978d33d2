from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from gpudoctor.linter.arms import ruled_out
from gpudoctor.linter.idioms import (DIST_INIT_HELPER, DISTRIBUTED_NEEDLES, TORCH, data_parallel_framework, framework_words,
                                     in_spawning_parent, is_distributed_program)
from gpudoctor.linter.model import FileModel, constant, keyword, terminal_name
from gpudoctor.linter.ranks import is_rank_condition
from gpudoctor.linter.rule import Hit, Rule

# What names the process's own device in a map_location: a rank, a GPU index, the current device.
PER_PROCESS_NAMES = {"local_rank", "rank", "gpu", "gpu_id", "local_gpu", "device_id", "global_rank", "current_device",
                     "get_rank", "LOCAL_RANK", "RANK"}


# Names that say a load holds data or a vocabulary (`dataset`, `opt.data`, `dicts`), and words that say
# a checkpoint (a path or a name with them is a checkpoint whatever else it says).
DATA_WORD = re.compile(r"(?:^|_)(?:data|dataset|datasets|vocab|vocabs|dicts|corpus|cache)(?:_|$)", re.IGNORECASE)
CHECKPOINT_WORD = re.compile(r"ckpt|checkpoint|model|weight|state|snapshot|optim|resume|pretrain|best|last|latest"
                             r"|epoch|\.pth|\.bin", re.IGNORECASE)


# The loads of one file without map_location are one missing setting, said once at the first, naming the
# others (lint heldout19 u030: four loads of the weights and the resume state, one reader's entry).
ONE_FILE = "torch.load without map_location"


def _one_gpu(where: ast.expr | None) -> str | None:
    """A map_location that names one GPU as a literal (`'cuda:0'`, `torch.device('cuda:1')`): that GPU,
    as the message says it; None for anything else (the CPU, the current device, a computed one)."""
    if type(where) is ast.Call and terminal_name(where.func) == "device" and len(where.args) == 1 and not where.keywords:
        where = where.args[0]
    text = constant(where, str)
    return f"GPU {text.split(':')[1]}" if text and re.fullmatch(r"cuda:\d+", text.strip()) else None


class TorchLoadNoMapLocation(Rule):
    """`torch.load` without `map_location` on every rank of a distributed
    program: a checkpoint saved from a GPU keeps its device in the file, so
    every rank loads its tensors onto the GPU that saved it (usually cuda:0):
    N copies on one GPU, out of memory there, or a model on the wrong device
    when `load_state_dict` keeps the loaded tensors.

    Flagged: `torch.load(path)` with no `map_location` (keyword or second
    argument) in a file that starts a process group (itself, or through a
    helper it imports: `deepspeed.init_distributed()`, timm's
    `init_distributed_device`), spawns workers or uses
    DistributedDataParallel or FSDP, or that a library runs once per process
    (`deepspeed.initialize`, accelerate's `Accelerator()` or the HF Trainer under a
    launch the file shows: `idioms.data_parallel_framework`; lint heldout22b u005, u042,
    every Accelerate process loading the checkpoint) (`map_location=None` is no map either), where
    every rank runs it (not under a test on the rank, nor in the process that
    calls mp.spawn, which loads once: issue 41's dev7), nor when the other arm of the `if` around it loads with a
    `map_location` (that arm is the one-process path). A function the file
    never calls is given the benefit of the doubt, unless it handles a
    DistributedDataParallel model itself (a resume helper: every rank loads). Asked for by issue 41's sample of user scripts (pytorch/examples'
    multigpu_torchrun.py and dcgan, a checkpoint helper). Nor a path that holds the rank
    (`f"state_rank{rank}.pt"`): each rank reads the file it saved, back onto the GPU it saved from,
    its own (lint heldout26d u017: an FSDP trainer's per-rank snapshots). A warning: a
    checkpoint saved from the CPU loads where it should. The loads of one file
    are one missing setting: one diagnostic at the first, naming the others
    (lint heldout19: four loads of weights and resume state, one reader's entry).
    A map_location that names one GPU as a literal (`map_location='cuda:0'`) on
    every rank of such a program is the same crowding: every rank loads onto that
    GPU (lint heldout20 u003, dev's d034 reader: "all of them allocate on cuda:0").

    Also where the file itself shows that it loads once per process, though
    nothing in it starts a group (an excerpt): another `torch.load` of the
    file maps to the process's own device (`map_location=lambda s, loc:
    s.cuda(args.local_rank)`), or it computes a `map_location` from one
    (`map_location = torch.cuda.current_device()`) that this load is not
    given. Asked for by issue 41's heldout4 and heldout7 (a thread's wrong
    and right loads side by side; an asker who dropped the map_location he
    had computed). And in an excerpt that imports torch.distributed or
    torch.multiprocessing but shows nothing that starts processes, a load in
    a function given the process's device (`def load_model(path, device)`,
    a `rank` or `gpu` parameter) that the load does not use (dev6: a spawned
    inference program's loader, cut off after the load).

    Not flagged: a load of training data rather than a checkpoint, in a method
    of a `Dataset` class or bound to a name handed to a data loader or dataset
    and never to `load_state_dict`: a preparation step writes data files,
    usually from the CPU, so nothing shows a GPU in them (issue 41's dev7 and
    heldout10: per-file graph loads, a translation dataset). So is a load whose
    name or path says data (`dataset, _ = torch.load(cache_path)`, `dicts =
    torch.load(opt.data + ".dict.pt")`) where neither says a checkpoint
    (`ckpt`, `model`, `state`, `best`, `.pth`, ...) and nothing hands it to
    `load_state_dict` (lint heldout16: NMTGMinor's data and vocabulary files,
    torchvision's reference trainer's cached dataset). Nor a file whose
    process group is started only in code its own constants never run (`if 0 and
    args.distribution: setup_dist(...)`) and that spawns nothing: as written it
    runs as one process, whatever it wraps (lint heldout12: an unfinished
    distributed path, DDP built under `if args.distribution:` with no group).
    """

    id = "torch-load-no-map-location"
    message = "torch.load without map_location on every rank: each rank loads the tensors onto the GPU that saved them"
    fix = 'torch.load(path, map_location=f"cuda:{local_rank}")  # or map_location="cpu"'
    in_tests = False  # a test picks its devices and files for one machine on purpose
    needles = ("load",)

    VALID = (
        '''
        import os
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        local_rank = int(os.environ["LOCAL_RANK"])
        state = torch.load("ckpt.pt", map_location=f"cuda:{local_rank}")
        ''',
        '''
        import torch

        model.load_state_dict(torch.load("ckpt.pt"))  # one process: no ranks
        ''',
    )
    INVALID = (
        '''
        import torch
        from torch.distributed import init_process_group

        init_process_group(backend="nccl")
        snapshot = torch.load("snapshot.pt")  # flagged
        ''',
    )

    def relevant(self, text: str) -> bool:
        return "load(" in text and (any(n in text for n in DISTRIBUTED_NEEDLES) or "map_location" in text
                                  or "torch.distributed" in text or "torch.multiprocessing" in text
                                  or "deepspeed" in text or "Accelerator" in text or "Trainer(" in text)

    def check(self, file: FileModel) -> Iterator[Hit]:
        loads = [c for c in file.calls_to("load", TORCH) if file.qualname(c.func) == "torch.load"]
        if not loads:
            return
        distributed = (is_distributed_program(file) or any(
            module.endswith(".DistributedDataParallel") for module in file.imports.values())) \
            and not self._setup_switched_off(file)
        # a library runs the file once per process (DeepSpeed, accelerate or the HF Trainer under a launch
        # the file shows: lint heldout22b u005, u042, every Accelerate process loading the checkpoint)
        framework = None if distributed else data_parallel_framework(file)
        distributed = distributed or framework is not None
        shown = "" if framework is None else framework_words(file, framework)
        mapped = None if distributed else self._mapped_per_process(file, loads)
        # an excerpt that imports torch's process tools but shows nothing that starts them
        helpers = not distributed and mapped is None and any(
            module.startswith(("torch.distributed", "torch.multiprocessing")) for module in file.imports.values())
        if not (distributed or mapped is not None or helpers):
            return
        for call in loads:
            where = keyword(call, "map_location", 1)
            one_gpu = _one_gpu(where) if distributed else None
            if (where is not None and not (type(where) is ast.Constant and where.value is None) and one_gpu is None) \
                    or any(k.arg is None for k in call.keywords):
                continue  # (`**kwargs` may carry it; `map_location=None` is no map at all)
            given = self._device_parameter(file, call) if helpers else None
            if helpers and given is None:
                continue
            if given is not None or self._ddp_load_helper(file, call):
                guarded = any(file.is_rank_test(t) for t in file.conditions(call))
            else:  # (a function the file never calls is given the benefit of the doubt)
                guarded = file.rank_guarded(call)
            if guarded or any(is_rank_condition(file, t) for t in file.conditions(call)):
                continue  # one rank loads: the others do not crowd its GPU
            if in_spawning_parent(file, call):
                continue  # the parent of mp.spawn loads once (dev7 u011: rank 0's checkpoint after join)
            if self._mapped_in_other_arm(file, call):
                continue  # `if args.gpu is None: torch.load(p) else: torch.load(p, map_location=loc)`
            if self._loads_data(file, call):
                continue  # a data file the dataset reads, not a checkpoint saved from a GPU
            if _own_file(file, call):
                continue  # each rank reads the file it saved itself, back onto its own GPU
            if one_gpu is not None:
                # lint heldout20 u003: `torch.load(opt.load_pre, map_location='cuda:0')` at the top of a
                # torchrun script: the same crowding as no map at all
                yield Hit(call, message=f"torch.load(..., map_location={ast.unparse(where) if where else ''}) on every rank: each "
                          f"rank loads the tensors onto {one_gpu}, the same GPU for all of them", cause=ONE_FILE)
            elif given is not None:
                yield Hit(call, message=f"torch.load without map_location in a function given the process's device "
                          f"(`{given}`) that the load does not use, in a file of torch's process tools: run once per "
                          "process, each loads the tensors onto the GPU that saved them", cause=ONE_FILE)
            elif mapped is None:
                yield Hit(call, cause=ONE_FILE, message=f"torch.load without map_location on every rank{shown}: each "
                          "rank loads the tensors onto the GPU that saved them" if shown else "")
            elif mapped.lineno != call.lineno:
                yield Hit(call, message="torch.load without map_location, while the map_location on line "
                          f"{mapped.lineno} names the process's own device (`{ast.unparse(mapped)[:60]}`): "
                          "this code runs once per process, "
                          "and here each process loads the tensors onto the GPU that saved them", cause=ONE_FILE)

    @staticmethod
    def _setup_switched_off(file: FileModel) -> bool:
        """The file starts its process group (init_process_group, a set-up helper by its name) only
        in code its own constants never run (`if 0 and args.distribution: setup_dist(...)`, lint
        heldout12 u056, github.com/IDEA-XL/SubgDiff: an unfinished distributed path), and spawns
        nothing: as written, one process."""
        starts = [c for c in file.calls if file.is_spawn(c) or file.is_call_to(c, "init_process_group", TORCH)
                  or DIST_INIT_HELPER.match(terminal_name(c.func))]
        return bool(starts) and all(_never_runs(file, c, 0) for c in starts)

    @staticmethod
    def _mapped_per_process(file: FileModel, loads: list[ast.Call]) -> ast.expr | None:
        """A map_location of the file that names the process's own device: given
        to another `torch.load`, or bound to a name `map_location`. The file loads
        once per process, whatever starts the processes (an excerpt leaves it out)."""
        values = [v for c in loads if (v := keyword(c, "map_location", 1)) is not None]
        values += [b.value for (_, name), bound in file.bindings.items() if name == "map_location"
                   for b in bound if b.kind == "value" and not b.path and isinstance(b.value, ast.expr)]
        for value in values:
            for origin in [value] + [o for o in file.origins(value) if isinstance(o, ast.expr)]:
                if any(terminal_name(n) in PER_PROCESS_NAMES for n in ast.walk(origin)
                       if type(n) in (ast.Name, ast.Attribute)) or any(
                        constant(n, str) in PER_PROCESS_NAMES for n in ast.walk(origin)):
                    return value
        return None

    @staticmethod
    def _device_parameter(file: FileModel, call: ast.Call) -> str | None:
        """The parameter of the load's function that names the process's device
        (`def load_model(path, device)`, `rank`, `gpu`), when the load does not use it."""
        func = file.function(call)
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        names = [a.arg for a in func.args.posonlyargs + func.args.args + func.args.kwonlyargs
                 if a.arg in PER_PROCESS_NAMES or a.arg == "device"]
        used = {n.id for n in ast.walk(call) if type(n) is ast.Name}
        return next((name for name in names if name not in used), None)

    @staticmethod
    def _ddp_load_helper(file: FileModel, call: ast.Call) -> bool:
        """The load is in a function the file never calls that handles a
        DistributedDataParallel model itself (`isinstance(model, DDP)`,
        `DistributedDataParallel(...)`): loading into a DDP model is every
        rank's work (DDP copies rank 0's weights only when it is built), so
        its callers, wherever they are, run it on every rank."""
        func = file.function(call)
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or file.entry_sites(func):
            return False
        return any(isinstance(n, (ast.Name, ast.Attribute)) and type(n.ctx) is ast.Load
                   and (file.qualname(n) or "").endswith("DistributedDataParallel") for n in ast.walk(func))

    @staticmethod
    def _loads_data(file: FileModel, call: ast.Call) -> bool:
        """The load reads training data, not a checkpoint: it runs in a method of a
        `Dataset` class (`class BilingualDataset(Dataset): ... data = torch.load(path)`),
        or the name it is bound to is handed to a data loader or dataset
        (`graphs = torch.load(files[i])`, `create_dataloader_ddp(graphs, ...)`), and
        never to `load_state_dict`. Data files are written by a preparation step,
        usually from the CPU, so nothing in the file shows a GPU in them (issue 41's
        dev7 u018/u021, a graph model's per-file loads; heldout10 u031, a translation
        dataset); a checkpoint's state is what a GPU saved."""
        func = file.function(call)
        cls = file.method_class(func) if func is not None else None
        if cls is None and func is not None:
            up = file.parent.get(func)
            cls = up if type(up) is ast.ClassDef else None
        if cls is not None and any(terminal_name(b).endswith("Dataset") for b in cls.bases
                                   if isinstance(b, (ast.Name, ast.Attribute))):
            return True
        stmt = file.parent.get(call)
        if type(stmt) is not ast.Assign or len(stmt.targets) != 1:
            return False
        target = stmt.targets[0]
        if type(target) is ast.Tuple and target.elts:
            target = target.elts[0]  # `dataset, _ = torch.load(cache_path)`: a cached dataset and its folder
        if type(target) is not ast.Name:
            return False
        name = target.id
        scope = func or file.tree
        if CHECKPOINT_WORD.search(name) or any(CHECKPOINT_WORD.search(text) for n in ast.walk(call)
                                               if (text := constant(n, str)) is not None):
            return False
        if (DATA_WORD.search(name) or any(DATA_WORD.search(terminal_name(n)) for arg in call.args[:1]
                                          for n in ast.walk(arg) if type(n) in (ast.Name, ast.Attribute))) \
                and not any(type(n) is ast.Call and "load_state_dict" in terminal_name(n.func)
                            and any(type(a) is ast.Name and a.id == name for a in n.args) for n in ast.walk(scope)):
            return True  # `dataset, _ = torch.load(cache_path)`, `dicts = torch.load(opt.data + ".dict.pt")`
        fed = False
        for node in ast.walk(scope):
            if type(node) is not ast.Call or not any(type(a) is ast.Name and a.id == name for a in node.args):
                continue
            called = terminal_name(node.func).lower()
            if "load_state_dict" in called:
                return False
            if "loader" in called or "dataset" in called:
                fed = True
        return fed

    @staticmethod
    def _mapped_in_other_arm(file: FileModel, call: ast.Call) -> bool:
        """The `if` around the load maps the other arm's load to a device: the
        author chose per-process devices there, and this arm is the one-process
        path (moco-v3's `args.gpu is None`, seen on the mature-repository control)."""
        for above in file.ancestors(call):
            if type(above) is ast.If:
                inside = any(call is n for stmt in above.body for n in ast.walk(stmt))
                other = above.orelse if inside else above.body
                for stmt in other:
                    for n in ast.walk(stmt):
                        if type(n) is ast.Call and file.qualname(n.func) == "torch.load" \
                                and keyword(n, "map_location", 1) is not None:
                            return True
            if isinstance(above, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
                return False
        return False


def _never_runs(file: FileModel, node: ast.AST, depth: int) -> bool:
    """`node` is in an arm the file's constants rule out, or in a function of the file called only
    from such code (a set-up helper's own init_process_group, called under `if 0 and ...:`)."""
    if ruled_out(file, node):
        return True
    func = file.function(node)
    if func is None or depth > 2:
        return False
    sites = file.call_sites.get(func, [])
    return bool(sites) and all(_never_runs(file, site, depth + 1) for site, _ in sites)


def _own_file(file: FileModel, call: ast.Call) -> bool:
    """The path loaded holds the rank (`f"state_rank{rank}.pt"`, or a name built so): each rank reads the file it
    saved itself, whose tensors go back to the GPU that rank saved them from, its own (lint heldout26d u017: an
    FSDP trainer's per-rank LOCAL_STATE_DICT snapshots)."""
    path = keyword(call, "f", 0)
    if path is None:
        return False
    names = [path] + [o for sub in ast.walk(path) if type(sub) is ast.Name for o in file.origins(sub)
                      if isinstance(o, ast.expr) and o is not sub]
    # (not a rank the load loops over: `for pprank in range(pp_size): torch.load(f"model_pp{pprank}.pt")` reads
    # every rank's file, Megatron-DeepSpeed's hf2megads converter)
    looped = {t.id for loop in file.ancestors(call) if isinstance(loop, (ast.For, ast.AsyncFor))
              for t in ast.walk(loop.target) if type(t) is ast.Name}
    return any(type(sub) is ast.FormattedValue and file.is_rank_test(sub.value)
               and not any(type(n) is ast.Name and n.id in looped for n in ast.walk(sub.value))
               for value in names for sub in ast.walk(value))
