from __future__ import annotations

import ast
import builtins
import re
import sys
from collections.abc import Iterator
from dataclasses import replace

from gpudoctor.linter.idioms import (TORCH, binds_current_device, is_ddp_wrapper, is_gpu_count, nccl_group,
                                    never_run, on_current_device, rank_kind, started_here)
from gpudoctor.linter.model import FileModel, Param, constant, keyword, terminal_name
from gpudoctor.linter.project import Query, names_device_per_rank
from gpudoctor.linter.ranks import rank_branch
from gpudoctor.linter.rule import ERROR, Hit, Rule

# A function of another module whose name says it may set a rank's device up (`setup(rank)`,
# `init_distributed_mode(args)`): where the worker calls one, its device may be chosen there.
MAY_BIND = re.compile(r"init|setup|set_up|dist|device|rank|gpu|cuda|env|launch|prepare|ddp|parallel", re.IGNORECASE)


class NcclNoSetDevice(Rule):
    """An NCCL process group without `torch.cuda.set_device(local_rank)`:
    every rank's current device stays cuda:0, so barriers, `.cuda()` calls
    and NCCL's own buffers land on the first GPU ("Duplicate GPU detected",
    out of memory on GPU 0, or a hang).

    Call `torch.cuda.set_device(local_rank)` before `init_process_group`, or
    pass `device_id=`. Not flagged when the file binds a device another way
    (`torch.cuda.device(...)`, `torch.accelerator.set_device_index`,
    `dist.barrier(device_ids=[rank])`, setting `CUDA_VISIBLE_DEVICES` per
    process, a library object that sets it when it is made, a DeepSpeed engine
    (`deepspeed.initialize(...)`: its constructor sets the current device to LOCAL_RANK)
    or accelerate's `Accelerator()` / `PartialState()`, or naming each rank's GPU wherever
    it puts a tensor: `torch.device("cuda", rank)`, `f"cuda:{local_rank}"`), nor, when a folder is
    linted, when a module of the same program does (the training script that
    imports this file's `setup()`, or a module this file imports).

    Flagged only where the file itself puts work on the current device (`.cuda()`,
    `"cuda"`, `"cuda:0"`): a file that creates the group and places nothing on a GPU
    leaves the choice to code that is not in it. On the lint sample (dev, dev2) the
    rule fired 14 times on such files, every time wrongly, and both right
    diagnostics had a `.cuda()` or a plain "cuda" beside the group.

    A `dist.barrier()` with no `device_ids` counts as such work: NCCL runs it on
    a GPU it guesses for the rank ("devices used by this process are currently
    unknown"), and a wrong guess hangs the job. Asked for by issue 41's dev4 (a
    cluster connectivity test: an NCCL group, a barrier, nothing else).

    Where the file names each rank's GPU for its tensors (`torch.device("cuda",
    rank)`) yet wraps, without `device_ids`, a module it moved with a bare
    `.cuda()`, that wrapper is flagged: `.cuda()` follows the current device,
    which nothing set (issue 41's dev4: study notes with a tcp:// set-up that
    does this beside an env:// one that names its device).

    So does a placement that names no rank where the file names each rank's GPU
    elsewhere: a bare `.cuda()`, `device="cuda:0"` / `.to("cuda")`, or
    `torch.cuda.synchronize()` / `empty_cache()` with no device, outside a test
    of the rank: that work, and a CUDA context, land on GPU 0 in every process
    (lint dev7: a VQA trainer's `clip.load(..., device="cuda:0")` in each
    spawned worker beside `torch.device(f"cuda:{rank}")`).

    A bare barrier counts where the file names each rank's GPU for its tensors
    too: naming the tensors' devices binds nothing, and NCCL runs the barrier on
    a GPU it guesses for the rank (issue 41's heldout9: a notes repository's
    barrier right after the init). Not a barrier that runs after a DDP wrapper
    given `device_ids` (in its function, or before every call of it): torch's
    barrier takes "the device that was first used with this process group"
    before it guesses one from the rank (its docstring's order: `device_ids`,
    the device bound at init, the device of the group's first collective, the
    global rank modulo the local GPU count), and DDP's constructor broadcasts the
    module's state on `device_ids[0]` (lint heldout11: ExpansionNet's and STAR's
    spawned trainers; heldout9 and dev7 had counted the DDP tutorial's
    demo_checkpoint and two scripts of that shape as hangs). And a
    `CUDA_VISIBLE_DEVICES` written once, to a literal listing several GPUs
    (`"2, 6"`), is the same set for every process: it binds no process to its
    own GPU (heldout9: a research script that sets it before mp.spawn).

    Not the barrier where every GPU the file names for a rank by index is its global rank (RANK,
    `dist.get_rank()`, or the very value the group is given as `rank=`: a spawned worker's index):
    NCCL runs a barrier given no device_ids on the global rank modulo the node's GPU count (barrier's
    docstring orders it: `device_ids`, the device given to init_process_group, the device of the
    group's first collective, then that guess), which is that rank's own GPU wherever `cuda:RANK`
    exists at all (lint heldout25 u033..u038 and u042, heldout22 u004: torchrun scripts whose
    tensors go to `cuda:{RANK}`, judged wrong nine times; where RANK runs past a node's GPUs,
    device-from-global-rank says so). What else of the file uses the current device is still said
    (a spawned trainer's `.to(rank)` beside nothing that sets the device: lint heldout16's three
    trainers keep their warning). Where the GPU named is the local rank, or anything else, the two
    are one GPU only where every node runs one process per visible GPU, numbered node by node: the
    warning stands and names both (heldout24 u075, heldout22b u056: `barrier()` right after the init,
    the model on `cuda:LOCAL_RANK`).

    A "cuda" compared with something (`device.type != "cuda"`), or given as a kind of device
    (`torch.autocast(device_type="cuda")`, lint heldout14), only asks where a tensor is or names a
    kind, and counts as no such work (issue 41's heldout5: a backend chosen from
    the device's type, nothing placed on a GPU in the excerpt).

    A "cuda:0" under a test of the rank (`if dist.get_rank() == 0:`) is rank 0's own
    GPU, named by hand beside the other ranks' "cuda:1", not every rank's.

    A warning, since it depends on the launch: one process per machine (torchrun
    --nproc_per_node 1 on each node) is right. An error where the file itself
    starts several processes on one machine: the group is created in the function
    `mp.spawn` (or `start_processes`) starts, directly or through functions of the
    file, with `nprocs` a literal above 1 or `torch.cuda.device_count()`, and the
    file calls no function of another module whose name says it may set a rank
    up (`setup(rank)`, `init_distributed_mode(args)`), and the file puts work on
    the current device (a barrier alone runs on a GPU guessed from the rank,
    another on each rank of a machine). There every process puts
    its work on cuda:0, and NCCL refuses the group's first collective ("Duplicate
    GPU detected: rank 1 and rank 0 both on CUDA device ...", ncclInvalidUsage;
    NCCL's init checks every peer's bus id) or, with CUDA_VISIBLE_DEVICES narrowed
    by hand, the processes share one GPU. Asked for by issue 41 (errors said as
    warnings on the held-out user scripts). A "cuda" kept in a name nothing
    reads (`device = "cuda" if ... else "cpu"`, unused, every tensor and the DDP
    on `rank`) puts nothing on the current device: there it stays a warning
    that says what would land on cuda:0 (lint heldout10, a VAE trainer).

    Not flagged where every GPU the file names for its work is each rank's own by index
    (`.to(rank)`, `.cuda(gpu_id)`, `f"cuda:{rank}"`, `device_ids=[rank]`) and nothing it does
    uses the current device: NCCL runs each collective on its tensors' GPU, DDP broadcasts on
    `device_ids[0]`, a later barrier takes the group's first device, and `torch.load` puts
    tensors back on the GPU that saved them whatever the current device (torch-load-no-map-location
    says that). The readers of lint heldout9..13, h14..h16 and lh17..lh19 had asked for a warning
    on such spawned trainers; those of lint heldout22 onwards judged it no pitfall (3 right, 11
    wrong; heldout26c u021 and heldout26d u009, u041, u051 among them: the DDP tutorial's demos).
    Nor where the barrier is the file's only GPU work and it hands none to another module (a
    torchrun test of the group: heldout26b u011; dev4 k079's reader had asked for it): the barrier's
    guess, the global rank modulo the node's GPU count, is a GPU of its own for each rank of a node,
    and nothing else can differ from it. Nor a group of one process (`world_size=1`, heldout26b u009)
    nor one made in a function the script never calls (heldout26d u049).

    A `backend="nccl"` default of the worker's parameter that no call site overrides
    counts as NCCL (heldout13: the torch tutorial's `init_processes`). Where the backend is a
    parameter of such a helper, the calls that hand it "nccl" are named with the diagnostic, as
    places of the same cause (lint heldout19: `init_process(rank, world_size, "nccl")`).

    Not flagged: a group whose `world_size` is the number of nodes (`world_size=args.nnodes`):
    the file is written for one process per machine, the launch this rule calls right (lint
    heldout11: a GPT-J trainer spreading the model over a node's GPUs).
    """

    id = "nccl-no-set-device"
    message = ("NCCL process group initialised but torch.cuda.set_device() is never called: every rank uses cuda:0; "
               "started several to a machine (torchrun --nproc_per_node above 1, mp.spawn), NCCL stops the first "
               "collective with 'Duplicate GPU detected' (one process per machine is right)")
    fix = 'torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))  # before init_process_group'
    needles = ("nccl",)

    def relevant(self, text: str) -> bool:
        # An NCCL group the file creates; a binding in the text settles it without the tree.
        return ("nccl" in text or "NCCL" in text) and "init_process_group" in text

    VALID = (
        '''
        import torch.distributed as dist

        dist.init_process_group("nccl")  # the device is chosen by code not in this file
        train()
        ''',
        '''
        import os
        import torch
        import torch.distributed as dist

        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl")
        ''',
        '''
        import torch.distributed as dist

        dist.init_process_group(backend="gloo")
        ''',
        '''
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
        ''',
        '''
        import torch.distributed as dist

        def check_nccl(rank, world_size, url):
            dist.init_process_group("nccl", init_method=url, rank=rank, world_size=world_size)
            dist.barrier(device_ids=[rank])
        ''',
        '''
        import sys
        import torch.distributed as dist

        def setup(rank, n_gpus, device):
            dist.init_process_group(
                backend="gloo" if sys.platform == "win32" or device.type != "cuda" else "nccl",
                init_method="env://", world_size=n_gpus, rank=rank)
        ''',
        '''
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        if dist.get_rank() == 0:
            x = torch.ones(2, device="cuda:0")  # each rank's GPU named by hand
        else:
            x = torch.ones(2, device="cuda:1")
        ''',
        '''
        import torch
        import torch.distributed as dist

        dist.init_process_group(backend="nccl")
        device = torch.device("cuda", dist.get_rank())
        total = torch.zeros(1, device=device)
        dist.barrier()  # NCCL's guess, RANK % GPUs, is this rank's own GPU
        dist.all_reduce(total)
        ''',
        '''
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def worker(rank, world_size):
            dist.init_process_group("nccl", rank=rank, world_size=world_size)
            model = DDP(Net().to(rank), device_ids=[rank])  # every GPU named is the rank's own

        if __name__ == "__main__":
            mp.spawn(worker, args=(2,), nprocs=2)
        ''',
        '''
        import os
        import torch.distributed as dist

        dist.init_process_group(backend="nccl", world_size=int(os.environ["WORLD_SIZE"]))
        dist.barrier()  # the file's only GPU work: NCCL's guess is a GPU of its own per rank
        ''',
        '''
        import torch.distributed as dist

        dist.init_process_group(backend="nccl", rank=0, world_size=1)  # one process
        model = Net().to("cuda")
        ''',
    )
    INVALID = (
        '''
        import torch
        import torch.distributed as dist

        dist.init_process_group(backend="nccl", init_method=args.init_method, rank=args.rank, world_size=2)
        net = Net().cuda()
        net = torch.nn.parallel.DistributedDataParallel(net)  # flagged
        head = Head().to(torch.device("cuda", args.rank))
        ''',
        '''
        import torch.distributed as dist

        dist.init_process_group(backend="nccl")  # flagged
        model = Net().cuda()
        ''',
        '''
        import torch
        from torch.distributed import init_process_group

        def setup(rank, world_size):
            backend = "nccl" if torch.cuda.is_available() else "gloo"
            init_process_group(backend, rank=rank, world_size=world_size)  # flagged
            return torch.zeros(1, device="cuda")
        ''',
        '''
        import os
        import torch
        import torch.distributed as dist

        dist.init_process_group(backend="nccl")  # flagged: the barrier's GPU is RANK % GPUs, the model's LOCAL_RANK
        dist.barrier()
        model = Net().to(torch.device("cuda", int(os.environ["LOCAL_RANK"])))
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        for hit in self._hits(file):
            chosen = _nccl_chosen_at(file, hit.node) if type(hit.node) is ast.Call else []
            if chosen and not hit.also:
                lines = ", ".join(str(c.lineno) for c in chosen)
                hit = replace(hit, message=f"{hit.message or self.message} (NCCL is chosen where the group's helper "
                              f"is called: line {lines})", also=tuple(c.lineno for c in chosen))
            yield hit

    def _hits(self, file: FileModel) -> Iterator[Hit]:
        inits = [c for c in file.calls_to("init_process_group", TORCH) if nccl_group(file, c)
                 and not _never_called(file, c)]
        if not inits or binds_current_device(file):
            return  # the program sets each rank's GPU itself
        if all(_one_per_node(file, c) or _world_of_one(file, c) for c in inits):
            return  # one process per machine (or in all), where cuda:0 is right
        # a barrier after a DDP wrapper given device_ids runs on that device: torch's barrier takes "the
        # device that was first used with this process group" before it guesses one from the rank, and
        # DDP's constructor broadcasts the module's state on it (lint heldout11: ExpansionNet's and STAR's
        # spawned trainers, barriers after `DDP(model, device_ids=[rank])`)
        barrier = next((c for c in file.calls if terminal_name(c.func) == "barrier"
                        and (file.qualname(c.func) or "").startswith("torch.distributed.")
                        and not _device_known(file, c)), None)
        own = _guess_differs(file, inits) if barrier is not None else None
        if own is not None and own[0] is None:
            # every GPU the file names for a rank is its global rank: NCCL's guess for the barrier (the global
            # rank modulo the node's GPU count) is that very GPU wherever it exists (lint heldout25 u033..u038,
            # u042; heldout22 u004): the barrier is no pitfall; what else uses the current device is said below
            barrier = None
        differs = f", while this rank's work goes to {own[1]}" if own is not None and own[0] is not None else ""
        if names_device_per_rank(file.text):
            # each rank's GPU is named where tensors go; a module moved by `.cuda()` and
            # wrapped without device_ids still lands on the current device, cuda:0
            wrapped = False
            for call in file.calls:
                placed = on_current_device(file, call) if is_ddp_wrapper(file, call) else None
                if placed is not None:
                    wrapped = True
                    yield Hit(call, query=Query("no-device-binding"),
                              message=f"the module wrapped here was put on the current device "
                              f"(`{ast.unparse(placed)[:40]}`, line {placed.lineno}) and DDP is given no device_ids, "
                              "but nothing sets each rank's current device (the per-rank devices this file names "
                              "elsewhere do not): every rank's replica sits on cuda:0",
                              fix="torch.cuda.set_device(local_rank)  # before .cuda(); and "
                              "DistributedDataParallel(model, device_ids=[local_rank])")
            if barrier is not None and not wrapped:
                # the tensors' devices are named, the barrier's is not: NCCL picks one for it
                for call in inits:
                    yield Hit(call, query=Query("no-device-binding"),
                              message=_guess_message(barrier, differs))
            elif not wrapped:
                # the tensors' devices are named, but something else still goes to the current device
                use = self._on_current_device(file)
                for call in inits:
                    if use is None:
                        break
                    yield Hit(call, query=Query("no-device-binding"),
                              message=f"NCCL process group initialised but torch.cuda.set_device() is never called: "
                              f"the file names each rank's GPU for its tensors, but line {use.lineno} "
                              f"(`{ast.unparse(use)[:40]}`) works on the current device, which stays cuda:0 on "
                              "every rank: every process puts that work (and a CUDA context) on GPU 0")
            return
        current = self._current_device_work(file)
        if current:
            barrier = None
        elif barrier is None:
            # nothing here lands on the current device: every collective runs on its tensors' GPU, which
            # the file names per rank where it names one (lint heldout26c u021, heldout26d u009, u041, u051:
            # spawned trainers on `.to(rank)` / device_ids=[rank], judged no pitfall)
            return
        elif own is None and _barrier_only(file):
            # the file puts nothing on a GPU but the barrier, and hands no work to another module: NCCL's
            # guess, the global rank modulo the node's GPU count, is a GPU of its own for each rank of a node
            # (ranks of one node are consecutive), and no other GPU work can differ from it (lint
            # heldout26b u011: a torchrun test of the group, a barrier, new_group calls)
            return
        # an error only where that work is done: a "cuda" kept in a name nothing reads places
        # nothing (lint heldout10 u018: `device = 'cuda' if ... else 'cpu'` at the top, unused,
        # every tensor and DDP on `rank`: a warning)
        certain = any(not _dead_value(file, node) for node in current)
        for call in inits:
            # (a barrier alone is no proof: NCCL runs it on a GPU guessed from the rank, which
            # differs from rank to rank on one machine)
            launch = self._several_processes(file, call) if barrier is None else None
            if launch is not None and not certain and _placed_by_index(file) is not None:
                continue  # its work named on each rank's GPU, nothing read on the current one (heldout22b u032)
            if launch is not None and not certain:
                yield Hit(call, query=Query("no-device-binding"),
                          message=f"NCCL process group initialised in the processes mp.spawn starts (line "
                          f"{launch[0].lineno}, {launch[1]}), and torch.cuda.set_device() is never called; lint sees "
                          f"no work on the current device (the \"cuda\" on line "
                          f"{', '.join(str(getattr(n, 'lineno', '?')) for n in current)} is never read): whatever "
                          "does land on the current device (a bare .cuda(), a barrier without device_ids, code of "
                          "another module) is cuda:0 in every process, and NCCL stops with 'Duplicate GPU detected'")
            elif launch is not None:
                yield Hit(call, severity=ERROR, query=Query("no-device-binding"),
                          message=f"NCCL process group initialised in the processes mp.spawn starts (line "
                          f"{launch[0].lineno}, {launch[1]}), and nothing sets each one's GPU: every process "
                          "works on cuda:0, and NCCL stops the first collective with 'Duplicate GPU detected'")
            # The script that imports this file (or a module it imports) may bind the device.
            elif barrier is None:
                yield Hit(call, query=Query("no-device-binding"))
            else:
                yield Hit(call, query=Query("no-device-binding"), message=_guess_message(barrier, differs))

    @staticmethod
    def _several_processes(file: FileModel, init: ast.Call) -> tuple[ast.Call, str] | None:
        """The mp.spawn call that runs `init` (in its target, or in a function of this file
        the target calls) in several processes of one machine, and how many; None where a
        function of another module with a set-up name is called (it may choose the GPU)."""
        for call in file.calls:
            name = file.qualname(call.func)
            root = (name or "").split(".", 1)[0]
            if (name is not None and root not in TORCH and root not in sys.stdlib_module_names
                    and MAY_BIND.search(terminal_name(call.func))):
                return None
        seen: set[ast.AST] = set()
        frontier = [file.function(init)]
        for _ in range(4):  # the target, and up to three same-file calls below it
            callers: list[ast.AST | None] = []
            for func in frontier:
                if func is None or func in seen:
                    continue
                seen.add(func)
                for ref in file.references.get(func, []):
                    spawn = file.parent.get(ref)
                    if type(spawn) is ast.Call and spawn.args and spawn.args[0] is ref and file.is_spawn(spawn):
                        count = keyword(spawn, "nprocs", 2)
                        many = constant(count, int) if count is not None else None
                        if isinstance(many, int) and not isinstance(many, bool) and many > 1:
                            return spawn, f"nprocs={many}"
                        if count is not None and is_gpu_count(file, count):
                            return spawn, "one per GPU"
                callers += [file.function(c) for c, _ in file.call_sites.get(func, [])]
            frontier = callers
        return None

    @staticmethod
    def _on_current_device(file: FileModel) -> ast.Call | None:
        """A call that works on the current device whatever the file names elsewhere: a bare
        `.cuda()`, a placement on "cuda" / "cuda:0" (`.to("cuda:0")`, `device="cuda:0"`; not
        `torch.device("cuda", rank)`), or `torch.cuda.synchronize()` / `empty_cache()` with no
        device (lint dev7: a VQA trainer's `clip.load("ViT-B/32", device="cuda:0")` in each
        spawned worker beside its `torch.device(f"cuda:{rank}")`; a pipeline trainer's
        `torch.cuda.synchronize()`). Not under a test of the rank (rank 0's own GPU)."""
        for call in file.calls:
            func = call.func
            name = terminal_name(func)
            if name == "cuda" and type(func) is ast.Attribute and not call.args and not call.keywords:
                pass
            elif name in ("synchronize", "empty_cache") and not call.args and not call.keywords \
                    and file.qualname(func) == f"torch.cuda.{name}":
                pass
            elif name in ("device", "Tensor") or not any(
                    constant(v, str) in ("cuda", "cuda:0")
                    for v in [*call.args, *(k.value for k in call.keywords if k.arg in (None, "device"))]):
                continue
            if rank_branch(file, call) is None:
                return call
        return None

    @staticmethod
    def _current_device_work(file: FileModel) -> list[ast.AST]:
        """Where the file puts something on the current GPU, or on cuda:0 on every rank:
        `.cuda()` with no index, or the device string "cuda" / "cuda:0"."""
        out: list[ast.AST] = []
        for node in ast.walk(file.tree):
            if type(node) is ast.Constant and node.value in ("cuda", "cuda:0"):
                # `device.type != "cuda"` asks where something is; it puts nothing there
                # (heldout5's ROCm report: the backend chosen from the device's type).
                if type(file.parent.get(node)) is ast.Compare:
                    continue
                # `torch.autocast(device_type="cuda")` names a kind of device, not one: it puts nothing
                # on the current GPU (lint heldout14: alibaba/hap's ddp.py, its model on `.cuda(local_rank)`)
                up = file.parent.get(node)
                if type(up) is ast.keyword and up.arg == "device_type":
                    continue
                # `if rank == 0: ... "cuda:0"`, `if rank == 1: ... "cuda:1"`: each rank's
                # GPU named by hand, not every rank on cuda:0 (heldout3's MONAI test).
                if rank_branch(file, node) is None:
                    out.append(node)
            if type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr == "cuda":
                if not node.args and not node.keywords:
                    out.append(node)
        return out


# A name for the number of machines in the job (`args.nnodes`, `num_nodes`).
NODE_COUNT = re.compile(r"^n_?nodes?$|^num_?nodes$|^node_?count$|^nb_nodes$|^world_nodes$", re.IGNORECASE)


def _never_called(file: FileModel, init: ast.Call) -> bool:
    """`init` is in a function the script never runs (`never_run`: lint heldout26d u049, a `setup()` nothing
    calls), and the main block runs only what the file defines or imports: a snippet whose main block spawns
    a function it lacks (dev d017: `mp.spawn(train, ...)`, no `train` in it) may call the set-up there."""
    if not never_run(file, init):
        return False
    for node in ast.walk(file.tree):
        if type(node) is ast.Name and type(node.ctx) is ast.Load and file.under_main_guard(node) \
                and not file.defines(node.id) and node.id not in file.imports \
                and node.id not in file.relative_imports and not hasattr(builtins, node.id):
            return False
    return True


def _world_of_one(file: FileModel, init: ast.Call) -> bool:
    """The group's `world_size` is the literal 1 (`rank=0, world_size=1`): one process in all, for which
    cuda:0 is its GPU (lint heldout26b u009: one-process FSDP around an HF model for calibration)."""
    size = keyword(init, "world_size", 3)
    return size is not None and constant(size, int) == 1


def _barrier_only(file: FileModel) -> bool:
    """Nothing in the file goes to a GPU but its collectives: no `.cuda()` / `.to()`, and no call of a
    module outside torch and the standard library (whose work, and the GPU it picks, is not in view:
    lint h15 u041, fastNLP's DistTrainer given the GPUs of `--gpus`)."""
    for call in file.calls:
        name = terminal_name(call.func)
        if type(call.func) is ast.Attribute and name in ("cuda", "to"):
            return False
        head = call.func
        while type(head) is ast.Attribute:
            head = head.value
        if type(head) is not ast.Name:
            continue
        if head.id in file.relative_imports:
            return False
        root = file.imports.get(head.id, "").split(".", 1)[0]
        if root and root not in TORCH and root not in sys.stdlib_module_names:
            return False
    return True


def _one_per_node(file: FileModel, init: ast.Call) -> bool:
    """The group's `world_size` is the number of nodes (`world_size=args.nnodes`): the file is
    written for one process per machine, the launch this rule calls right (lint heldout11 u041: a
    GPT-J trainer that spreads the model over a node's eight GPUs with `model.parallelize()` and
    starts one process per node)."""
    size = keyword(init, "world_size", 3)
    if size is None:
        return False
    origins = [o for o in file.origins(size) if isinstance(o, ast.AST)] or [size]
    return all(type(o) in (ast.Name, ast.Attribute) and NODE_COUNT.search(terminal_name(o)) for o in origins)


def _device_known(file: FileModel, node: ast.AST, depth: int = 0) -> bool:
    """A DDP wrapper given device_ids is built before `node` wherever `node` runs: earlier in its
    function, under no test `node` is not under, or so before every call of its function (two
    levels up). Its constructor's broadcast is the group's first collective, on that device."""
    func = file.function(node)
    around = {id(test) for test in file.conditions(node)}
    for call in file.calls:
        if file.function(call) is func and call.lineno < getattr(node, "lineno", 0) and is_ddp_wrapper(file, call) \
                and keyword(call, "device_ids", 1) is not None \
                and all(id(test) in around for test in file.conditions(call)):
            return True
    if func is None or depth >= 2:
        return False
    sites = file.entry_sites(func)
    return bool(sites) and all(type(site) is ast.Call and _device_known(file, site, depth + 1) for site in sites)


def _dead_value(file: FileModel, node: ast.AST) -> bool:
    """`node` only feeds a plain assignment (`device = "cuda" if ... else "cpu"`, or through the
    `torch.device(...)` it names: `device = torch.device("cuda") if ... else torch.device("cpu")`,
    lint heldout22b u032) to names the file never reads: it places nothing. (A `.cuda()` call is
    never dead: it moves a module.)"""
    if type(node) is not ast.Constant:
        return False
    up = file.parent.get(node)
    while isinstance(up, (ast.IfExp, ast.BoolOp)) or (
            type(up) is ast.Call and file.qualname(up.func) == "torch.device"):
        up = file.parent.get(up)
    if type(up) is not ast.Assign or not all(type(t) is ast.Name for t in up.targets):
        return False
    names = {t.id for t in up.targets if type(t) is ast.Name}
    return not any(type(n) is ast.Name and type(n.ctx) is ast.Load and n.id in names for n in ast.walk(file.tree))


# A name that holds a rank's GPU index (`.to(rank)`, `.to(gpu_id)`, `.to(self.local_rank)`).
INDEX_NAME = re.compile(r"rank|^gpu$|^gpus?_?(id|idx|index|num|no)$|^device_?(id|idx|index)$|^dev_?id$", re.IGNORECASE)


def _placed_by_index(file: FileModel) -> ast.expr | None:
    found = list(_index_placements(file))
    return min(found, key=lambda n: (n.lineno, n.col_offset)) if found else None


def _index_placements(file: FileModel) -> Iterator[ast.expr]:
    """Where the file puts its work on a GPU it picks by an index that is not a literal: `.cuda(rank)`,
    `.to(gpu_id)`, `torch.device("cuda", rank)`, `f"cuda:{rank}"` / `"cuda:" + str(rank)` /
    `"cuda:{}".format(rank)` / `"cuda:%d" % rank`, `DistributedDataParallel(m, device_ids=[rank])`."""
    for node in ast.walk(file.tree):
        if type(node) is ast.Call:
            name = terminal_name(node.func)
            first = node.args[0] if node.args else None
            if name == "cuda" and type(node.func) is ast.Attribute and first is not None \
                    and type(first) is not ast.Constant:
                yield node
            if name == "to" and type(node.func) is ast.Attribute and type(first) in (ast.Name, ast.Attribute) \
                    and first is not None and INDEX_NAME.search(terminal_name(first)):
                yield node
            if name == "device" and file.qualname(node.func) == "torch.device" and len(node.args) > 1 \
                    and constant(node.args[0], str) == "cuda" and type(node.args[1]) is not ast.Constant:
                yield node
            if name == "format" and type(node.func) is ast.Attribute and node.args \
                    and (constant(node.func.value, str) or "").startswith("cuda:{"):
                yield node
            ids = keyword(node, "device_ids", 1) if is_ddp_wrapper(file, node) else None
            if type(ids) is ast.List and ids.elts and type(ids.elts[0]) is not ast.Constant:
                yield node
        elif type(node) is ast.JoinedStr and node.values and (constant(node.values[0], str) or "").startswith("cuda:") \
                and any(type(v) is ast.FormattedValue for v in node.values):
            yield node
        elif type(node) is ast.BinOp and type(node.op) in (ast.Add, ast.Mod) \
                and (constant(node.left, str) or "").startswith("cuda:") and type(node.right) is not ast.Constant:
            yield node


def _started_here(file: FileModel, init: ast.Call) -> bool:
    """`init` runs in processes this file starts (`started_here`: mp.spawn's target, a
    `Process(target=...)`, a launcher of another module), or in a function of the file that such a
    target calls (up to three calls below it)."""
    seen: set[ast.AST] = set()
    frontier = [file.function(init)]
    for _ in range(4):
        callers: list[ast.AST | None] = []
        for func in frontier:
            if func is None or func in seen:
                continue
            seen.add(func)
            if started_here(file, func):
                return True
            for ref in file.references.get(func, []):
                holder = file.parent.get(ref)
                if type(holder) is ast.Call and ref in holder.args and _spawns_parameter(
                        file, holder, holder.args.index(ref)):
                    return True  # `run_demo(demo_basic, world_size)`, which spawns its `demo_fn`
            callers += [file.function(c) for c, _ in file.call_sites.get(func, [])]
        frontier = callers
    return False


def _spawns_parameter(file: FileModel, call: ast.Call, index: int) -> bool:
    """The function of this file that `call` calls gives its parameter at `index` to mp.spawn as the
    target (the DDP tutorial's `run_demo(demo_fn, world_size)`)."""
    func = file.local_function(call)
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    positional = [a.arg for a in func.args.posonlyargs + func.args.args]
    if index >= len(positional):
        return False
    name = positional[index]
    return any(file.is_spawn(c) and c.args and type(c.args[0]) is ast.Name and c.args[0].id == name
               and file.function(c) is func for c in file.calls)


def _nccl_chosen_at(file: FileModel, init: ast.Call) -> list[ast.Call]:
    """The calls of the file's own helper that hand it "nccl" where its `init_process_group` takes the
    backend from a parameter (`def init_process(rank, size, backend='gloo')`, called as
    `init_process(rank, world_size, "nccl")`: lint heldout19 u023, whose reader wrote the pitfall at that
    call): where the group is made NCCL, a place of the same cause."""
    backend = keyword(init, "backend", 0)
    params = (file.lookup(backend) or []) if type(backend) is ast.Name else []
    param = params[0] if len(params) == 1 else None
    if type(param) is not Param or not isinstance(param.function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    func, name = param.function, param.name
    names = [a.arg for a in func.args.posonlyargs + func.args.args]
    out = []
    for site, skipped in file.call_sites.get(func, []):
        index = names.index(name) - skipped if name in names else -1
        given = keyword(site, name, index if index >= 0 else None)
        if "nccl" in (constant(given, str) or "").lower():
            out.append(site)
    return out


def _guess_message(barrier: ast.Call, differs: str) -> str:
    """What a barrier with no device_ids does where nothing sets the rank's GPU: NCCL runs it on the global rank
    modulo the node's GPU count (barrier's docstring: `device_ids`, the device given to init_process_group, the
    device of the group's first collective, then that guess), and, where the file names the rank's GPU, which."""
    if not differs:
        return ("NCCL process group initialised but torch.cuda.set_device() is never called: the barrier on line "
                f"{barrier.lineno} is given no device_ids, so NCCL runs it on the GPU it guesses for the rank (the "
                "global rank modulo the node's GPU count); where that is not the GPU the rank works on, it hangs or "
                "stops with 'Duplicate GPU detected'")
    return ("NCCL process group initialised but torch.cuda.set_device() is never called: the barrier on line "
            f"{barrier.lineno} is given no device_ids, so NCCL runs it on GPU RANK % torch.cuda.device_count(), its "
            f"guess{differs}: the two are one GPU only where every node runs one process per visible GPU, numbered "
            "node by node; elsewhere the barrier runs on a GPU the rank does not use (another CUDA context and NCCL "
            "communicator there), and ranks of one node whose guesses meet hang or stop with 'Duplicate GPU "
            "detected'")


def _guess_differs(file: FileModel, inits: list[ast.Call]) -> tuple[ast.expr | None, str] | None:
    """Where the file names the GPU of each rank by index (`.to(rank)`, `f"cuda:{rank}"`, `device_ids=[rank]`):
    (None, "") when every such index is the global rank (RANK, `dist.get_rank()`, or the very value the group is
    given as `rank=`, a spawned worker's index on one machine), the GPU NCCL guesses for a barrier with no
    device_ids; else the first index that is something else (LOCAL_RANK: the same GPU only where each node runs one
    process per GPU) and how to name it. None where the file names no GPU by index (nothing to compare)."""
    given: set[object] = set()
    for init in inits:
        value = keyword(init, "rank", 4)
        if value is not None:
            given |= set(file.origins(value))
    found = sorted(_index_placements(file), key=lambda n: (n.lineno, n.col_offset))
    if not found:
        return None
    for node in found:
        index = _placed_index(node)
        if index is None or _is_global_rank(file, index, given):
            continue
        return index, f"cuda:`{ast.unparse(index)[:40]}` (line {node.lineno})"
    return None, ""


def _is_global_rank(file: FileModel, index: ast.expr, given: set[object]) -> bool:
    """`index` is the process's global rank: RANK / `dist.get_rank()` (`rank % torch.cuda.device_count()` of it
    too: NCCL's guess itself), or every value it may hold is what the group is given as its rank."""
    while type(index) is ast.Call and type(index.func) is ast.Name and index.func.id == "int" and len(index.args) == 1:
        index = index.args[0]
    if type(index) is ast.BinOp and type(index.op) is ast.Mod and is_gpu_count(file, index.right):
        index = index.left
    if rank_kind(file, index)[0] == "global":
        return True
    origins = set(file.origins(index))
    return bool(origins) and origins <= given


def _placed_index(node: ast.expr) -> ast.expr | None:
    """The index of one of `_index_placements`' nodes: the `x` of `.cuda(x)`, `.to(x)`, `torch.device("cuda", x)`,
    `f"cuda:{x}"`, `"cuda:{}".format(x)`, `"cuda:%d" % x`, `"cuda:" + str(x)`, `device_ids=[x]`."""
    if type(node) is ast.JoinedStr:
        parts = [v.value for v in node.values if type(v) is ast.FormattedValue]
        return parts[0] if len(parts) == 1 else None
    if type(node) is ast.BinOp:
        right = node.right
        if type(right) is ast.Call and type(right.func) is ast.Name and right.func.id == "str" and len(right.args) == 1:
            return right.args[0]
        return right if type(right) is not ast.Tuple else None
    if type(node) is not ast.Call:
        return None
    name = terminal_name(node.func)
    if name in ("cuda", "to", "format"):
        return node.args[0] if node.args else None
    if name == "device":
        return node.args[1] if len(node.args) > 1 else None
    ids = keyword(node, "device_ids", 1)
    return ids.elts[0] if type(ids) is ast.List and ids.elts else None
