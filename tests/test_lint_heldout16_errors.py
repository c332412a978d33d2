"""lint's errors on the shapes lint heldout16 missed or overstated (issue 41; 69 scripts of the
`train_distributed.py` and `dist_train.py` listings): each a few of the script's own lines (source in
the comment), its control (the healthy program most like it) and its sibling (the nearest program that
needs another verdict). Each case: its rule and every (line, severity) lint must give for it (empty:
silent)."""

from __future__ import annotations

import textwrap

import pytest

from gpudoctor.linter import engine

# github.com/.../train_distributed.py (lint heldout16 u064): the best-checkpoint value is computed on the
# main process only; the other ranks leave the epoch at the `else: continue` before reading it
GUARD = """
        import torch.distributed as dist
        import utils
        from engine import evaluate, train_one_epoch

        def main(model, epochs):
            best = 0.0
            for epoch in range(epochs):
                train_one_epoch(model, epoch)
                if utils.is_main_process():
                    perf = evaluate(model)
                else:
                    LEAVE
                if perf >= best:
                    best = perf
                    AFTER

        if __name__ == "__main__":
            main(None, 2)
        """

# NVlabs-style launcher (lint heldout16 u049): a dry run returns on rank 0 before a barrier every rank
# makes; u060: rank 0's evaluation thread broadcasts, the others wait under `args.eval` and a schedule
EARLY = """
        import os
        import torch.distributed as dist

        def launch(c, dry_run):
            rank = int(os.getenv("RANK", 0))
            if TEST:
                print("exiting")
                return
            dist.barrier()
        """

# a periodic save in the step loop (lint heldout16 u019:250): the loop decides the period comes
PERIODIC = """
        import torch.distributed as dist

        def train(loader, rank, every, verbose):
            step = 0
            for batch in loader:
                step += 1
                if TEST:
                    dist.barrier()
        """

# github.com/.../train_distributed.py (lint heldout16 u019): DeepSpeed's save_checkpoint, which its docs
# say every process must call (deepspeed.ai/getting-started/#model-checkpointing), on local rank 0 only
DEEPSPEED = """
        import os
        import deepspeed

        def main(model, ds_config):
            local_rank = int(os.environ.get("LOCAL_RANK", 0))
            deepspeed.init_distributed()
            model_engine, optimizer, _, _ = deepspeed.initialize(model=model, config=ds_config)
            train(model_engine)
            SAVE
        """

# github.com/.../dist_train.py (lint heldout16 u026): the main block spawns the workers, which start the
# group, and then tears a group down in the parent, which never started one
PARENT = """
        import torch.distributed as dist
        import torch.multiprocessing as mp
        from models import Regressor

        def dist_train(rank, world_size, model):
            dist.init_process_group("nccl", rank=rank, world_size=world_size)
            WORKER

        if __name__ == "__main__":
            model = Regressor(3)
            BEFORE
            mp.spawn(dist_train, args=(2, model), nprocs=2, join=True)
            PARENT
        """

# the DDP tutorial's elastic_ddp.py as pasted (lint heldout16 u056): the parser is built, its parse_args()
# line left out, and `args` read in the main block's last line
ARGS = """
        import argparse
        import torch.distributed as dist

        def spmd_main(local_world_size, local_rank):
            dist.init_process_group(backend="nccl")

        if __name__ == "__main__":
            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=0)
            parser.add_argument("--local_world_size", type=int, default=1)
            READ
        """

# the other library methods whose docs say every rank must call them (pytorch.org/docs/stable/fsdp.html:
# "This needs to be called on all ranks since it uses collective communications"; distributed.checkpoint:
# "uses collectives to coordinate writes across ranks"), on the main rank only
LIBRARY = """
        import torch.distributed as dist
        import torch.distributed.checkpoint as dcp
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

        def save(model, optim, rank):
            model = FSDP(model)
            if rank == 0:
                CALL
        """

# Megatron-DeepSpeed tools/retro/query/retro_dataset.py (mature-repository control): rank 0 raises, the others
# wait in a barrier and exit, the same test twice: left as the pairing it was, past the early exit
RAISES = """
        import torch.distributed as dist

        def verify(rank, found, sizes_match):
            if not found:
                if rank == 0:
                    raise Exception("neighbor directory not found")
                dist.barrier()
                exit()
            if not sizes_match:
                if rank == 0:
                    raise Exception("num chunks differ")
                dist.barrier()
                exit()
        """

CASES = {
    "undefined: read only past `else: continue` on the other ranks": (
        "undefined-name", [], GUARD.replace("LEAVE", "continue").replace("AFTER", "print(best)")),
    "sibling: the other ranks go on to the read": (
        "undefined-name", [(13, "error")], GUARD.replace("LEAVE", "pass").replace("AFTER", "print(best)")),
    "collective: reached only by the ranks that did not `continue` in the else": (
        "collective-under-rank-condition", [(15, "error")],
        GUARD.replace("LEAVE", "continue").replace("AFTER", "dist.barrier()")),
    "control: the else goes on (every rank reaches the barrier)": (
        "collective-under-rank-condition", [],
        GUARD.replace("LEAVE", "perf = 0.0").replace("AFTER", "dist.barrier()")),
    "early return: also needs a flag of the command line, a warning": (
        "collective-under-rank-condition", [(9, "warning")], EARLY.replace("TEST", "dry_run and rank == 0")),
    "sibling: on the rank alone, an error": (
        "collective-under-rank-condition", [(9, "error")], EARLY.replace("TEST", "rank == 0")),
    "sibling: a test every rank of a job passes alike decides nothing, an error": (
        "collective-under-rank-condition", [(9, "error")],
        EARLY.replace("TEST", "dist.is_initialized() and rank == 0")),
    "periodic: a step counter the loop advances, an error": (
        "collective-under-rank-condition", [(8, "error")], PERIODIC.replace("TEST", "step % every == 0 and rank == 0")),
    "sibling: a setting the loop never changes, a warning": (
        "collective-under-rank-condition", [(8, "warning")], PERIODIC.replace("TEST", "verbose and rank == 0")),
    "deepspeed: save_checkpoint on local rank 0 only": (
        "collective-under-rank-condition", [(10, "error")],
        DEEPSPEED.replace("SAVE", 'if local_rank == 0:\n                model_engine.save_checkpoint("out")')),
    "control: every rank saves its part": (
        "collective-under-rank-condition", [], DEEPSPEED.replace("SAVE", 'model_engine.save_checkpoint("out")')),
    "sibling: the same call on a model not from deepspeed.initialize (a trainer of the project's)": (
        "collective-under-rank-condition", [],
        DEEPSPEED.replace("SAVE", 'if local_rank == 0:\n                model.save_checkpoint("out")')),
    "fsdp: the full optimizer state gathered on rank 0 alone": (
        "collective-under-rank-condition", [(8, "error")],
        LIBRARY.replace("CALL", "state = FSDP.full_optim_state_dict(model, optim)")),
    "dcp: a distributed checkpoint written on rank 0 alone": (
        "collective-under-rank-condition", [(8, "error")],
        LIBRARY.replace("CALL", 'dcp.save({"model": model}, checkpoint_id="ckpt")')),
    "sibling: told no_dist=True, it coordinates nothing": (
        "collective-under-rank-condition", [],
        LIBRARY.replace("CALL", 'dcp.save({"model": model}, checkpoint_id="ckpt", no_dist=True)')),
    "sibling: over a process group of its own (the first replica's shards)": (
        "collective-under-rank-condition", [],
        LIBRARY.replace("CALL", 'dcp.save({"model": model}, checkpoint_id="ckpt", process_group=optim.group)')),
    "control: rank 0 raises and the others leave after a barrier, twice": ("collective-under-rank-condition", [], RAISES),
    "parent: a group torn down where mp.spawn's workers started it": (
        "dist-without-init", [(13, "error")], PARENT.replace("WORKER", "pass").replace("BEFORE", "pass")
        .replace("PARENT", "dist.destroy_process_group()")),
    "control: each worker tears its own group down": (
        "dist-without-init", [], PARENT.replace("WORKER", "dist.destroy_process_group()")
        .replace("BEFORE", "pass").replace("PARENT", "print('done')")),
    "sibling: the parent first runs a set-up of another module (it may start a group)": (
        "dist-without-init", [], PARENT.replace("WORKER", "pass").replace("BEFORE", "models.init_distributed()")
        .replace("PARENT", "dist.destroy_process_group()")),
    "args: the parsed arguments read but never assigned": (
        "undefined-name", [(11, "error")], ARGS.replace("READ", "spmd_main(args.local_world_size, args.local_rank)")),
    "control: parse_args() binds them": (
        "undefined-name", [], ARGS.replace(
            "READ", "args = parser.parse_args()\n            spmd_main(args.local_world_size, args.local_rank)")),
    "sibling: an attribute the parser does not define (a module left unimported, name-not-imported's)": (
        "undefined-name", [], ARGS.replace("READ", "spmd_main(cfg.world, cfg.local_rank)")),
}


@pytest.mark.parametrize("rule, expected, code", list(CASES.values()), ids=list(CASES))
def test_heldout16_errors(rule, expected, code):
    source = textwrap.dedent(code).lstrip("\n")
    found = [(d.line, d.severity) for d in engine.lint_source(source, "train.py") if d.rule == rule]
    assert found == expected, found
