from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from gpudoctor.linter.idioms import (is_ddp_wrapper, is_distributed_sampler, is_loader, iterated_origins, loader_arg,
                                     never_run)
from gpudoctor.linter.model import FileModel, constant, identifiers, terminal_name
from gpudoctor.linter.rule import Hit, Rule

# Another way a program gives each rank its part of the data (accelerate's `prepare`, a dataset's
# `shard`, HF datasets' `split_dataset_by_node`, a sampler of its own told the rank).
SHARDS = re.compile(r"\bprepare\(|\.shard\(|split_dataset_by_node|num_replicas|\bShardSampler|lightning|"
                    r"DistributedSampler\(|DistributedBatchSampler|\bsampler\s*=\s*(?!None)", re.IGNORECASE)
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
    """

    id = "no-distributed-sampler"
    message = ("DataLoader shuffles the whole dataset on every rank and no DistributedSampler splits it: each "
               "process trains on all of the data, every epoch is world-size passes over it")
    fix = "sampler = DistributedSampler(dataset); DataLoader(dataset, batch_size=..., sampler=sampler)"
    in_tests = False
    needles = ("DataLoader",)

    def relevant(self, text: str) -> bool:
        return "DataLoader" in text and "DistributedDataParallel" in text and "shuffle" in text

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
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        if SHARDS.search(file.text) or not any(is_ddp_wrapper(file, c) for c in file.calls):
            return
        if any(is_distributed_sampler(file, c) for c in file.calls):
            return
        iterated = {id(o) for loop in file.for_loops for o in iterated_origins(file, loop.iter)}
        # handed to a training function (`train(args, G, D, train_dataloader, ...)`, one of another module)
        iterated |= {id(o) for c in file.calls if TRAINS.search(terminal_name(c.func))
                     for arg in [*c.args, *(k.value for k in c.keywords)] for o in file.origins(arg)}
        for call in file.calls:
            if not is_loader(file, call) or constant(loader_arg(call, "shuffle")) is not True:
                continue
            if loader_arg(call, "sampler") is not None or loader_arg(call, "batch_sampler") is not None:
                continue
            if id(call) not in iterated or any(file.is_rank_test(t) for t in file.conditions(call)) \
                    or _single_process_arm(file, call) or never_run(file, call):
                continue  # (a function the script never runs builds no loader of its DDP run: lint heldout21 u057)
            dataset = loader_arg(call, "dataset")
            if dataset is None or self._per_rank(file, dataset):
                continue
            yield Hit(call, message=f"DataLoader over `{ast.unparse(dataset)[:40]}` shuffles the whole dataset "
                      "(shuffle=True) in a DistributedDataParallel program, and no DistributedSampler splits it: "
                      "every rank trains on all of the data, each in its own order, so an epoch is world-size "
                      "passes over it")

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
                    found += [n for n in ast.walk(o) if type(n) is ast.Name and n is not o]
            frontier = found
        return False


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
