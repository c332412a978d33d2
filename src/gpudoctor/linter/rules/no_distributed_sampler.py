from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from gpudoctor.linter.idioms import (TORCH, data_parallel_framework, is_ddp_wrapper, is_distributed_sampler, is_loader,
                                     iterated_origins, loader_arg, never_run)
from gpudoctor.linter.model import FileModel, constant, identifiers, keyword, terminal_name
from gpudoctor.linter.rule import Hit, Rule

# Another way a program gives each rank its part of the data (accelerate's `prepare`, a dataset's
# `shard`, HF datasets' `split_dataset_by_node`, a sampler of its own told the rank).
SHARDS = re.compile(r"\bprepare\(|\.shard\(|split_dataset_by_node|num_replicas|\bShardSampler|lightning|"
                    r"DistributedSampler\(|DistributedBatchSampler|\bsampler\s*=\s*(?!None)", re.IGNORECASE)
# ... the same where the engine is DeepSpeed's, less a sampler of any kind: a DeepSpeed script hands
# its loader a `RandomSampler` of the whole dataset (lint heldout24: five of its scripts), which the
# loader's own check reads.
ENGINE_SHARDS = re.compile(r"\bprepare\(|\.shard\(|split_dataset_by_node|num_replicas|\bShardSampler|lightning|"
                           r"DistributedSampler\(|DistributedBatchSampler", re.IGNORECASE)
# ... the same where the loaders are accelerate's to split: the file's own cuts, not `prepare(`.
OWN_SHARDS = re.compile(r"\.shard\(|split_dataset_by_node|num_replicas|\bShardSampler|split_between_processes|"
                        r"DistributedSampler\(|DistributedBatchSampler|\bsampler\s*=\s*(?!None)", re.IGNORECASE)
# A loop that trains: it backpropagates or steps an optimizer (or an engine).
STEPS = re.compile(r"\.backward\(|\.step\(")
# A test that tells the distributed run from the single-process one (`if opts.dist_mode == 'ddp':`).
DISTRIBUTED_TEST = re.compile(r"ddp|dist|world_size|parallel|multi|n_?gpus?|num_gpus", re.IGNORECASE)
# A function that trains on the loader it is handed.
TRAINS = re.compile(r"train|fit", re.IGNORECASE)
# Words in a dataset's construction that say it is cut per rank (`MyData(split, rank=rank)`).
PER_RANK = re.compile(r"rank|world|replica|shard|num_gpus|nprocs", re.IGNORECASE)


class NoDistributedSampler(Rule):
    """A DistributedDataParallel program whose training DataLoader shuffles
    the whole dataset (`shuffle=True`) with no `DistributedSampler`: every
    rank iterates every sample, each in its own order, so an "epoch" is N
    passes over the data, the job does N times the work of one process for
    the same result, and the per-rank batch size is not the share of the
    global batch the script was tuned for.

    Give each rank its share: `sampler = DistributedSampler(dataset)`,
    `DataLoader(dataset, sampler=sampler)` (no `shuffle=`), and
    `sampler.set_epoch(epoch)` at the top of each epoch.

    Flagged: a `DataLoader(..., shuffle=True)` given no sampler or batch
    sampler, in a file that builds a `DistributedDataParallel` wrapper and
    iterates that loader in a loop, where nothing in the file builds a
    DistributedSampler or otherwise cuts the data per rank (no sampler
    passed to any loader, no `num_replicas`, no `shard(`, accelerate's
    `prepare`, Lightning, and the dataset built from no rank or world size).
    Asked for by lint heldout13's readers (three spawned GAN and detection
    trainers, `DataLoader(train_dataset, batch_size=..., shuffle=True)` beside
    `DDP(model, device_ids=[rank])`) and heldout11's. A warning: a program may
    mean every rank to see all the data (an ensemble, a small fine-tune), and
    a loader under a test of the rank (rank 0's own evaluation) is not
    flagged, nor one built in a function the script never runs (lint
    heldout21 u057: `# main()` commented out, the main block spawning the
    DDP tutorial's demo): it is no loader of the DDP run.

    The same where the data-parallel engine is DeepSpeed's: `deepspeed.initialize(...)` not
    given `training_data=` (where it is, the engine builds a DistributedSampler itself) averages
    the gradients of one process per GPU, and a loader the script builds itself over the whole
    dataset feeds every rank all of it. There a loader is also flagged where it draws from a
    `RandomSampler` of the dataset (`DataLoader(train_data, sampler=RandomSampler(train_data))`,
    a single-GPU fine-tuning loop moved under DeepSpeed) or reads it in order with no sampler at
    all (every rank then trains on the same batches). Asked for by lint heldout24's readers (11
    DeepSpeed trainers; 12 of 13 such loaders in the development corpus were read so).

    A loader with no sampler and no shuffle (in a DDP or DeepSpeed program) is flagged only where
    it trains: a loop over it backpropagates or steps (`model_engine.backward(loss)`,
    `optimizer.step()`), or it is the one loader handed to a function named for training
    (`training_loop(dataloader)`); an evaluation loader read in order on every rank is not.
    The dataset's own construction is read for the rank through the names it is built from, not
    through the attributes of a namespace (`load_data(args.train_path)` does not read `args`'s
    parser, whose `--local_rank` says nothing of the dataset).

    The same where the model is wrapped in FSDP (`FullyShardedDataParallel(model)`, FSDP2's `fully_shard(model)`),
    which averages the gradients across ranks as DDP does, for a shuffled loader only (lint heldout31 u002: a reward
    model's `DataLoader(train_dataset, shuffle=True)` under torchrun; a loader read in order, the same batches on
    every rank, is how the issue 28 control's optimizer tests compare runs).

    And where the engine is accelerate's: `accelerator.prepare(...)` replaces each DataLoader it is given
    by one that gives each process its share; a training loader the file never hands to it (the model,
    optimizer and scheduler prepared, the loader left out) feeds every process all the data. Flagged where
    the file shows it runs as several processes (a launcher named, or accelerate's multi-process API used:
    `data_parallel_framework`), the loader (by the names it is bound to) is in no `prepare` call, and a
    loop that steps iterates it; not where any `prepare` is given a function's parameter or a starred
    list (what it prepares is not read), nor where the file cuts its data itself. A warning. Asked for by
    lint heldout27c u023 and heldout28 u006's readers (a diffusion trainer's and a forecasting
    trainer's train loader left out of `accelerator.prepare`).
    """

    id = "no-distributed-sampler"
    message = ("DataLoader shuffles the whole dataset on every rank and no DistributedSampler splits it: each "
               "process trains on all of the data, every epoch is world-size passes over it")
    fix = "sampler = DistributedSampler(dataset); DataLoader(dataset, batch_size=..., sampler=sampler)"
    in_tests = False
    needles = ("DataLoader",)

    def relevant(self, text: str) -> bool:
        return "DataLoader" in text and ("DistributedDataParallel" in text or "deepspeed" in text
                                         or "Accelerator" in text or "fully_shard" in text
                                         or "FullyShardedDataParallel" in text)

    VALID = (
        '''
        from torch.utils.data import DataLoader, DistributedSampler
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(net, device_ids=[rank])
        sampler = DistributedSampler(dataset)
        loader = DataLoader(dataset, batch_size=32, sampler=sampler)
        for x in loader:
            model(x)
        ''',
        '''
        from torch.utils.data import DataLoader
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(net, device_ids=[rank])
        loader = DataLoader(ShardedSet(root, rank=rank, world_size=world), batch_size=32, shuffle=True)
        for x in loader:
            model(x)
        ''',
    )
    INVALID = (
        '''
        from torch.utils.data import DataLoader
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(net, device_ids=[rank])
        loader = DataLoader(dataset, batch_size=32, shuffle=True)  # flagged
        for x in loader:
            model(x)
        ''',
        '''
        import deepspeed
        from torch.utils.data import DataLoader, RandomSampler

        engine, optimizer, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=conf)
        loader = DataLoader(train_data, batch_size=8, sampler=RandomSampler(train_data))  # flagged
        for batch in loader:
            engine.backward(engine(**batch).loss)
            engine.step()
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        engines = list(file.calls_to("initialize", ("deepspeed",)))
        deepspeed = bool(engines) and all(keyword(c, "training_data") is None for c in engines)
        wrappers = [c for c in file.calls if is_ddp_wrapper(file, c)]
        # FSDP averages the gradients across ranks as DDP does (`FullyShardedDataParallel(model)`, FSDP2's
        # `fully_shard(model)`: lint heldout31 u002, a reward model under torchrun)
        sharded = [] if wrappers else [c for c in file.calls if file.is_call_to(c, "FullyShardedDataParallel", TORCH)
                                       or file.is_call_to(c, "fully_shard", TORCH)]
        if not deepspeed and not wrappers and not sharded:
            yield from self._unprepared(file)
            return  # (a DeepSpeed engine given training_data builds its own DistributedSampler)
        program = "FullyShardedDataParallel" if sharded else "DistributedDataParallel"
        if (ENGINE_SHARDS if deepspeed else SHARDS).search(file.text):
            return
        if any(is_distributed_sampler(file, c) for c in file.calls):
            return
        loops: dict[int, list[ast.AST]] = {}
        for loop in file.for_loops:
            for o in iterated_origins(file, loop.iter):
                loops.setdefault(id(o), []).append(loop)
        # handed to a training function (`train(args, G, D, train_dataloader, ...)`, one of another module)
        handed: dict[int, int] = {}
        for c in file.calls:
            if TRAINS.search(terminal_name(c.func)):
                given = {id(o) for arg in [*c.args, *(k.value for k in c.keywords)] for o in file.origins(arg)
                         if is_loader(file, o)}
                for o in given:
                    handed[o] = max(handed.get(o, 0), len(given))
        for call in file.calls:
            if not is_loader(file, call) or loader_arg(call, "batch_sampler") is not None:
                continue
            how = self._whole(file, call, deepspeed)
            if not how or (sharded and how != "shuffled"):
                continue  # (under FSDP only a shuffled loader: the same batches on every rank are a test's own
                # choice in the issue 28 control, distributed_shampoo's optimizer comparisons)
            if (id(call) not in loops and id(call) not in handed) or any(
                    file.is_rank_test(t) for t in file.conditions(call)) \
                    or _single_process_arm(file, call) or never_run(file, call):
                continue  # (a function the script never runs builds no loader of its DDP run: lint heldout21 u057)
            if how == "in order" and handed.get(id(call)) != 1 and not any(
                    STEPS.search(ast.unparse(loop)) for loop in loops.get(id(call), [])):
                continue  # read in order and never trained on: an evaluation loader
            dataset = loader_arg(call, "dataset")
            if dataset is None or self._per_rank(file, dataset):
                continue
            shown = f"`{ast.unparse(dataset)[:40]}`"
            if not deepspeed:
                yield Hit(call, message=f"DataLoader over {shown} {WHOLE[how]} in a {program} program, "
                          f"and no DistributedSampler splits it: every rank trains on all of the data{ORDER[how]}, "
                          "so an epoch is world-size passes over it")
                continue
            yield Hit(call, message=f"DataLoader over {shown} {WHOLE[how]} in a DeepSpeed program "
                      f"(deepspeed.initialize, line {engines[0].lineno}, is given no training_data), and no "
                      f"DistributedSampler splits it: every rank trains on all of the data{ORDER[how]}, so an "
                      "epoch is world-size passes over it",
                      fix="sampler = DistributedSampler(dataset); DataLoader(dataset, batch_size=..., "
                      "sampler=sampler); or deepspeed.initialize(..., training_data=dataset) and iterate the "
                      "loader it returns")

    def _unprepared(self, file: FileModel) -> Iterator[Hit]:
        """accelerate's shape: a training loader, shuffled or read in order, that no `prepare` call is given."""
        framework = data_parallel_framework(file)
        if framework is None or terminal_name(framework.func) != "Accelerator" or OWN_SHARDS.search(file.text):
            return
        prepares = [c for c in file.calls if terminal_name(c.func).startswith("prepare")
                    and type(c.func) is ast.Attribute]
        if not prepares:
            return
        given: set[str] = set()
        for prep in prepares:
            for arg in [*prep.args, *(k.value for k in prep.keywords)]:
                if type(arg) is ast.Starred:
                    return  # `prepare(*objects)`: what it prepares is not read
                for name in (n for n in ast.walk(arg) if type(n) is ast.Name):
                    func = file.function(prep)
                    if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) and name.id in {
                            a.arg for a in [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]}:
                        return  # a parameter prepared: the loader a caller hands it may be this one
                    given.add(name.id)
        for call in file.calls:
            if not is_loader(file, call) or loader_arg(call, "batch_sampler") is not None:
                continue
            how = self._whole(file, call, False)
            if not how or any(file.is_rank_test(t) for t in file.conditions(call)) or never_run(file, call):
                continue
            names = _bound_names(file, call)
            if not names or names & given:
                continue
            loops = [loop for loop in file.for_loops
                     if {n.id for n in ast.walk(loop.iter) if type(n) is ast.Name} & names
                     and STEPS.search(ast.unparse(loop))]
            if not loops:
                continue
            dataset = loader_arg(call, "dataset")
            if dataset is None or self._per_rank(file, dataset):
                continue
            first = min(prepares, key=lambda c: c.lineno)
            yield Hit(call, message=f"DataLoader over `{ast.unparse(dataset)[:40]}` {WHOLE[how]}, and it is never "
                      f"passed to accelerator.prepare (line {first.lineno} prepares "
                      f"{', '.join(ast.unparse(a) for a in first.args)[:60] or 'others'}): under a launch of several "
                      f"processes (`{ast.unparse(framework.func)}(...)`, line {framework.lineno}) every process "
                      f"trains on all of the data{ORDER[how]} (the loop on line {loops[0].lineno})",
                      fix="model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)")

    @staticmethod
    def _whole(file: FileModel, call: ast.Call, deepspeed: bool) -> str:
        """How the loader reads the whole dataset: "shuffled" (`shuffle=True`, no sampler), "random"
        (a `RandomSampler`, in a DeepSpeed program), "in order" (no sampler, no shuffle); "" where it is
        given another sampler (or, in a DDP program, any sampler)."""
        sampler = loader_arg(call, "sampler")
        if sampler is None:
            return "shuffled" if constant(loader_arg(call, "shuffle")) is True else "in order"
        if deepspeed and any(type(o) is ast.Call and terminal_name(o.func) == "RandomSampler"
                             for o in file.origins(sampler)):
            return "random"
        return ""

    @staticmethod
    def _per_rank(file: FileModel, dataset: ast.expr) -> bool:
        """The dataset is built from the rank or the world size (cut per rank by its own code)."""
        seen: set[int] = set()
        frontier: list[ast.AST] = [dataset]
        for _ in range(4):  # the dataset, and what it is built from, three steps back
            found: list[ast.AST] = []
            for expr in frontier:
                for o in [o for o in file.origins(expr) if isinstance(o, ast.AST)] or [expr]:
                    if id(o) in seen:
                        continue
                    seen.add(id(o))
                    if any(PER_RANK.search(word) for word in identifiers(o)) or any(
                            PER_RANK.search(constant(sub, str) or "") for sub in ast.walk(o)):
                        return True
                    # (the names it is built from, not a namespace's: `load_data(args.train_path)` is no
                    # read of `args`'s parser, whose `--local_rank` says nothing of the data: lint heldout24 u034)
                    found += [n for n in ast.walk(o) if type(n) is ast.Name and n is not o
                              and type(file.parent.get(n)) is not ast.Attribute]
            frontier = found
        return False


# How a loader reads the whole dataset, and the order each rank then sees it in.
WHOLE = {"shuffled": "shuffles the whole dataset (shuffle=True)",
         "random": "draws from a RandomSampler over the whole dataset",
         "in order": "reads the whole dataset in order (no sampler)"}
ORDER = {"shuffled": ", each in its own order", "random": ", each in its own order",
         "in order": ", the same batches on every rank"}


def _bound_names(file: FileModel, call: ast.Call) -> set[str]:
    """The names `call`'s value is bound to: its assignment's, then those of assignments whose value reads
    one of them (`active = train_loader`, `loader = skip_first_batches(train_loader, n)`), and the names a
    function of the file that returns it is bound to at its calls (position by position)."""
    names: set[str] = set()
    stmt = file.statement(call)
    if type(stmt) is ast.Assign and stmt.value is call:
        names |= {t.id for t in stmt.targets if type(t) is ast.Name}
    elif type(stmt) is ast.Assign and isinstance(stmt.value, ast.Call) and call in stmt.value.args:
        return set()  # built inside another call: what that call makes of it is not read
    if not names:
        return names
    func = file.function(call)
    for ret in (n for n in ast.walk(func) if type(n) is ast.Return) if func is not None else ():
        assert func is not None
        values = ret.value.elts if type(ret.value) is ast.Tuple else [ret.value]
        for index, value in enumerate(values):
            if type(value) is ast.Name and value.id in names:
                for site, _ in file.call_sites.get(func, []):
                    up = file.statement(site)
                    if type(up) is ast.Assign and up.value is site:
                        for target in up.targets:
                            element = target.elts[index] if type(target) is ast.Tuple and index < len(target.elts) \
                                else None
                            if type(element) is ast.Name:
                                names.add(element.id)
                            elif type(target) is ast.Name and len(values) == 1:
                                names.add(target.id)
    for _ in range(2):
        for node in ast.walk(file.tree):
            if type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name \
                    and {n.id for n in ast.walk(node.value) if type(n) is ast.Name} & names \
                    and not (isinstance(node.value, ast.Call) and terminal_name(node.value.func).startswith("prepare")):
                names.add(node.targets[0].id)
    return names


def _single_process_arm(file: FileModel, node: ast.AST) -> bool:
    """`node` is on the single-process arm of a test of the distributed mode: the `else` of
    `if opts.dist_mode == 'ddp':`, or the body of `if not args.distributed:` / `if mode != 'ddp':` (lint dev7 u012:
    a detector trainer's two loaders, a DistributedSampler-less one for DDP and one for DP)."""
    child = node
    for up in file.ancestors(node):
        if type(up) is ast.If and DISTRIBUTED_TEST.search(ast.unparse(up.test)):
            negated = (type(up.test) is ast.UnaryOp and type(up.test.op) is ast.Not) or (
                type(up.test) is ast.Compare and type(up.test.ops[0]) is ast.NotEq)
            if (child in up.orelse) != negated:
                return True
        child = up
    return False
