"""lint's recall on the shapes lint heldout12 missed (issue 41; 58 whole scripts of the
`train_multi_gpu.py` and `train_dist.py` listings): each a few of the script's own lines (source in
the comment), its control (the healthy program most like it) and, where another verdict is near,
its sibling. Each case: its rule, its line, the severity lint must give it (None: the rule is
silent there, on every line)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from gpudoctor.linter import engine
from gpudoctor.linter.model import FileModel

# github.com/TakakiFushimi/ghost-train train_multi_gpu.py (lint heldout12 u010): `nn` comes through
# `from network.AEI_Net import *`; G wrapped on 2+ GPUs, then its state_dict saved
GHOST = """
        import torch
        STAR

        def train(G, args):
            if torch.cuda.device_count() >= 2:
                G = nn.DataParallel(G, device_ids=[0, 1])
            for it in range(args.iters):
                torch.save(G.state_dict(), "G_latest.pth")
        """

# github.com/CuiJiali-CV/pytorch-ddp train_ddp.py (lint heldout10 u033): DistributedDataParallel and dist
# through `from ddp_utils import *`, the rank kept in a dict (`args = vars(parser.parse_args())`), the group
# started in a helper the spawned worker calls with its own nprocs
PYTORCH_DDP = """
        from ddp_utils import *
        from nets import _netG

        def setup(address, local_rank, nprocs):
            os.environ["MASTER_ADDR"] = address
            torch.cuda.set_device(local_rank)
            dist.init_process_group(backend="nccl", init_method="env://", world_size=SIZE, rank=local_rank)

        def main(local_rank, nprocs, args):
            setup(args["master_address"], local_rank, nprocs)
            netG = DistributedDataParallel(_netG().cuda(local_rank), device_ids=[local_rank])
            for ep in range(args["epochs"]):
                if TEST:
                    syn = netG(fix_z)

        if __name__ == "__main__":
            args = vars(parser.parse_args())
            mp.spawn(main, nprocs=args["nprocs"], args=(args["nprocs"], args))
        """

# github.com/Cecilia-xue/AGT train_dist.py (lint heldout12 u044, u045): the epoch function, from a star
# import, is given the DDP model and hands it back; rank 0 saves it
AGT = """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP
        from engine import *

        def train(rank, model, args):
            model = DDP(model.to(rank), device_ids=[rank])
            for epoch in range(args.epochs):
                model, train_loss = STEP(model, train_loader, optimizer)
                if rank == 0:
                    torch.save(model.state_dict(), f"ckpt_{epoch}.pth")
        """

# lint heldout12 u004 (an audio codec trainer): `.module` saved under `if data_parallel and rank == 0:`, the
# model itself in the else, which the wrapped ranks but 0 take too
CODEC = """
        import torch
        import torch.distributed as dist

        def train(config, model):
            if config.data_parallel:
                model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[config.local_rank])
            for epoch in range(config.epochs):
                if TEST:
                    torch.save(model.module.state_dict(), f"epoch{epoch}.pth")
                else:
                    torch.save(model.state_dict(), f"epoch{epoch}.pth")
        """

# github.com/.../train_dist.py (lint heldout12 u034, a translation trainer): the BLEU of the DDP model, by a
# function of the project's metrics module, on rank 0 only
BLEU = """
        import torch.nn as nn
        from src.utils.metrics import CALLED

        def train(rank, model, val_data):
            model = nn.parallel.DistributedDataParallel(model, device_ids=[rank])
            if rank == 0:
                score = CALLED(model, val_data)
        """

# lint heldout12 u028 (a ChatGLM fine-tuning script): accelerate's prepare hands back a model of its own
PREPARED = """
        from accelerate import Accelerator
        from engine import train_one_epoch

        accelerator = Accelerator()
        model, optimizer = accelerator.prepare(model, optimizer)
        model, loss = train_one_epoch(model, loader)
        if accelerator.is_main_process:
            out = model(batch)
        """

# github.com/rosinality/stylegan2-pytorch train.py's shape (lint heldout12 u046, heldout11 u029 and u043): the
# sampler from a helper, the loader read through an endless generator the file defines
STYLEGAN = """
        from torch.utils import data

        def data_sampler(dataset, shuffle, distributed):
            if distributed:
                return data.distributed.DistributedSampler(dataset, shuffle=shuffle)
            return data.RandomSampler(dataset)

        def sample_data(loader):
            LOOP
                for batch in loader:
                    yield batch

        def train(args, loader):
            loader = sample_data(loader)
            for i in range(args.iter):
                real_img = next(loader)

        if __name__ == "__main__":
            args.distributed = FLAG
            sampler = data_sampler(dataset, shuffle=True, distributed=args.distributed)
            train(args, data.DataLoader(dataset, batch_size=4, sampler=sampler))
        """



# lint heldout12 u018 (a SAM fine-tuning script): mp.spawn's workers meet at `args.init_method`, whose argparse
# default is env://, and nothing sets MASTER_ADDR
SAM_SPAWN = """
        import argparse
        import torch
        import torch.multiprocessing as mp

        def main_worker(gpu, ngpus_per_node, args):
            torch.cuda.set_device(gpu)
            torch.distributed.init_process_group(backend="nccl", init_method=args.init_method, rank=gpu,
                                                 world_size=ngpus_per_node)

        if __name__ == "__main__":
            parser = argparse.ArgumentParser()
            parser.add_argument("--init_method", type=str, default=DEFAULT)
            args = parser.parse_args()
            mp.spawn(main_worker, nprocs=2, args=(2, args))
        """


# github.com/ZhikangNiu/encodec-pytorch's trainer as forked (lint heldout12 u016): the discriminator flag moved
# to the CPU by hand and broadcast on the NCCL group
ENCODEC = """
        import random
        import torch
        import torch.distributed as dist

        def train(config, local_rank):
            dist.init_process_group(backend="nccl", init_method="env://")
            flag = torch.BoolTensor([random.random() < config.p]).MOVE
            if dist.is_initialized():
                dist.broadcast(flag, 0)
        """


def stylegan(loop: str, flag: str) -> str:
    """STYLEGAN with its generator's loop and its distributed flag."""
    return STYLEGAN.replace("LOOP", loop).replace("FLAG", flag)


STAR_DIST = """from mpi_utils import *


def step(rank, x):
    if rank == 0:
        dist.all_reduce(x)
    return x
"""

CASES = {
    "a star import's nn.DataParallel is torch's": ("dataparallel", 6, "warning", GHOST.replace(
        "STAR", "from network.AEI_Net import *")),
    "and its state_dict saved is the wrapper's": ("save-ddp-wrapper", 8, "warning", GHOST.replace(
        "STAR", "from network.AEI_Net import *")),
    # the same star import in a torch file and in one that never mentions torch: only the first's `dist` is
    # torch.distributed (mpi4py programs keep a communicator of their own under such names)
    "a star import's dist in a torch file is torch.distributed": ("collective-under-rank-condition", 7, "error",
                                                                  "import torch\n" + STAR_DIST),
    "control: a star import's dist in a file without torch": ("collective-under-rank-condition", 6, None,
                                                              STAR_DIST),
    "a rank kept in a dict splits the ranks": ("ddp-forward-on-one-rank", 14, "warning", PYTORCH_DDP.replace(
        "SIZE", "nprocs").replace("TEST", 'ep % args["vis_iter"] == 0 and args["local_rank"] == 0')),
    "sibling: a dict's other key does not": ("ddp-forward-on-one-rank", 14, None, PYTORCH_DDP.replace(
        "SIZE", "nprocs").replace("TEST", 'ep % args["vis_iter"] == 0 and args["visualise"] == 0')),
    # the worker's own nprocs reaches the helper's init: one machine, the spawn index is the rank
    "control: a helper started with the spawned worker's world size": ("rank-from-local-rank", 7, None,
                                                                       PYTORCH_DDP.replace("SIZE", "nprocs")
                                                                       .replace("TEST", "True")),
    "sibling: a helper given a world size of its own": ("rank-from-local-rank", 7, "warning", PYTORCH_DDP.replace(
        "SIZE", 'int(os.environ["WORLD_SIZE"])').replace("TEST", "True")),
    "a model handed back by the epoch function is the wrapper it was given": ("save-ddp-wrapper", 10, "warning",
                                                                             AGT.replace("STEP", "train_one_epoch")),
    "control: a function named as unwrapping it": ("save-ddp-wrapper", 10, None, AGT.replace("STEP", "unwrap_model")),
    "the else of `if wrapped and rank == 0:` saves the wrapper too": ("save-ddp-wrapper", 11, "warning", CODEC.replace(
        "TEST", "config.data_parallel and dist.get_rank() == 0")),
    "control: the else of the wrapping's own test": ("save-ddp-wrapper", 11, None, CODEC.replace(
        "TEST", "config.data_parallel")),
    "an evaluation function not in view, given the DDP model on rank 0": ("ddp-forward-on-one-rank", 7, "warning",
                                                                          BLEU.replace("CALLED", "calculate_bleu")),
    "control: a function whose name says nothing of running it": ("ddp-forward-on-one-rank", 7, None,
                                                                  BLEU.replace("CALLED", "log_summary")),
    # (a warning since lintA19: the prepared module's buffers, or an FSDP / ZeRO-3 accelerate config, would make
    # its forward communicate, and neither is in view; issue 41 item 4)
    "sibling: a model a method hands back is that object's": ("ddp-forward-on-one-rank", 8, "warning", PREPARED),
    "a loader read through a generator that yields it forever": ("sampler-no-set-epoch", 5, "warning",
                                                                 stylegan("while True:", "n_gpu > 1")),
    "control: a generator that ends with the loader": ("sampler-no-set-epoch", 5, None, stylegan("if True:", "n_gpu > 1")),
    # heldout11 u043: the fork set `args.distributed = False`; the DistributedSampler is never built
    "control: the sampler's helper only ever told distributed=False": ("sampler-no-set-epoch", 5, None,
                                                                       stylegan("while True:", "False")),
    "spawned workers on an option whose default is env://": ("master-addr-not-set", 7, "warning",
                                                            SAM_SPAWN.replace("DEFAULT", '"env://"')),
    "control: an option whose default is a tcp:// address": ("master-addr-not-set", 7, None,
                                                            SAM_SPAWN.replace("DEFAULT", '"tcp://127.0.0.1:23456"')),
    "a tensor moved to the CPU by hand, broadcast on NCCL": ("nccl-cpu-tensor", 9, "error",
                                                            ENCODEC.replace("MOVE", "cpu()")),
    "control: the same flag moved to the GPU": ("nccl-cpu-tensor", 9, None, ENCODEC.replace("MOVE", "cuda()")),
}


@pytest.mark.parametrize("rule, line, severity, code", list(CASES.values()), ids=list(CASES))
def test_heldout12_shapes(rule, line, severity, code):
    source = textwrap.dedent(code).lstrip("\n")
    found = [(d.line, d.severity) for d in engine.lint_source(source, "train.py") if d.rule == rule]
    # the one diagnostic named; where none is (a control, a sibling with another verdict), none on any line
    assert found == ([(line, severity)] if severity else []), found


def test_an_evaluation_function_in_view_that_does_not_run_the_model(tmp_path):
    """The project holds calculate_bleu and it never calls the model it is given: the project answers, and the
    name-based warning for a function not in view is not said (nor the one the project would keep)."""
    (tmp_path / "src" / "utils").mkdir(parents=True)
    (tmp_path / "src" / "utils" / "metrics.py").write_text("def calculate_bleu(model, data):\n    return len(data)\n")
    (tmp_path / "train.py").write_text(textwrap.dedent(BLEU.replace("CALLED", "calculate_bleu")).lstrip("\n"))
    found = engine.lint_files([str(tmp_path / "train.py"), str(tmp_path / "src" / "utils" / "metrics.py")]).diagnostics
    assert [d for d in found if d.rule == "ddp-forward-on-one-rank"] == []


def test_a_parameter_read_in_its_own_reassignment_is_the_callers_value():
    """`loader = sample_data(loader)` in `def train(args, loader)`: the `loader` read on the right is the
    parameter (what the call sites pass), not the value being assigned."""
    code = "def train(loader):\n    loader = wrap(loader)\n\ntrain(DataLoader(ds))\n"
    file = FileModel(ast.parse(code), code)
    read = next(n for n in ast.walk(file.tree) if type(n) is ast.Call and ast.unparse(n) == "wrap(loader)").args[0]
    assert [ast.unparse(o) for o in file.origins(read) if isinstance(o, ast.AST)] == ["DataLoader(ds)"]
