"""lint's warnings on lint heldout17, where its reader called them false or missed them (issue 41; 62 whole
`ddp_train.py` scripts): each a few of the script's own lines (source in the comment), its control (the
healthy program most like it) and its sibling (the nearest program that keeps the warning). Each case: its
rule, its line, the severity lint must give it (None: the rule is silent there, on every line)."""

from __future__ import annotations

import textwrap

import pytest

from gpudoctor.linter import engine

# github.com/akira-l/ELP-CUB ddp_train.py (lint heldout17 u009; u010 the same): a `setup()` that writes
# MASTER_PORT, whose one call is commented out; the main block starts the group itself (torchrun)
DEAD_SETUP = """
        import os
        import torch.distributed as dist

        def setup(rank, world_size):
            os.environ["MASTER_ADDR"] = "localhost"
            os.environ["MASTER_PORT"] = "1234"

        if __name__ == "__main__":
            CALL
            dist.init_process_group(backend="nccl")
        """
# lint dev6 r030: the group starts inside the function that writes the port, the main block cut off
CUT_MAIN = """
        import os
        import torch.distributed as dist

        def init_process(rank, size, fn, backend="gloo"):
            os.environ["MASTER_ADDR"] = "127.0.0.1"
            os.environ["MASTER_PORT"] = "29500"
            dist.init_process_group(backend, rank=rank, world_size=size)

        if __name__ == "__main__":
            size = 4
        """

# github.com/shuoyueli4519/VAETrying ddp_train.py (u046): --local_rank parsed, then replaced by the global
# rank before anything reads it
REPLACED = """
        import argparse
        import torch
        import torch.distributed as dist

        if __name__ == "__main__":
            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=-1)
            opt = parser.parse_args()
            FIRST
            torch.distributed.init_process_group(backend="nccl")
            opt.local_rank = torch.distributed.get_rank()
            torch.cuda.set_device(opt.local_rank)
        """

# github.com/fyy-debug/Improving-Deep-Watermarking-Robustness-with-an-Ensemble-of-Expert-Noisers ddp_train.py
# (u023, absl flags): FLAGS.local_rank picks the device; "LOCAL_RANK" appears only inside a
# printed string, which reads nothing from the environment
ABSL = """
        import torch
        from absl import flags

        FLAGS = flags.FLAGS
        flags.DEFINE_integer("local_rank", 0, "rank of GPU used")

        def train():
            device = torch.device("cuda", FLAGS.local_rank)
            print(WORDS.format(FLAGS.local_rank))
        """

# github.com/XufengGAO/SCOT ddp_train.py (u003): `--local_rank` required by argparse, beside a LOCAL_RANK read from the environment
REQUIRED = """
        import argparse
        import os

        def init_distributed_mode(args):
            args.gpu = int(os.environ["LOCAL_RANK"])

        if __name__ == "__main__":
            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, REQUIRED)
            args = parser.parse_args()
            init_distributed_mode(args)
        """

# github.com/shwgao/LUMOS-IPDPS26 ddp_train.py (u047): CUDA_VISIBLE_DEVICES written after torch.cuda.is_available(), then the main block
# calls the file's run_demo(), which starts the workers with torch.multiprocessing.spawn
LATE_THEN_SPAWN = """
        import os
        import torch

        def run_demo(demo_fn, world_size):
            STARTS

        def train(rank, world_size):
            pass

        if __name__ == "__main__":
            if not torch.cuda.is_available():
                os.environ["CUDA_VISIBLE_DEVICES"] = ""
            run_demo(train, 2)
        """

# github.com/jeya-maria-jose/essential_codes ddp_train.py (u028): a module-level script whose epoch loop is
# `for i in range(10):` around the pass over the loader
COUNTED = """
        import torch

        sampler = torch.utils.data.distributed.DistributedSampler(train_set)
        data_loader = torch.utils.data.DataLoader(train_set, batch_size=128, sampler=sampler)
        for i in range(N):
            SET
            for it, (data, target) in enumerate(data_loader):
                step(data, target)
        """

# github.com/dice-group/aswa ddp_train.py (u017, an SWA trainer): the loaders in a dict, the training one handed to utils.train_epoch once per epoch
LOADERS = """
        import torch
        import utils

        loaders = {
            "train": torch.utils.data.DataLoader(
                train_set, batch_size=64, shuffle=False,
                sampler=torch.utils.data.distributed.DistributedSampler(train_set)),
            "val": torch.utils.data.DataLoader(val_set, batch_size=64, shuffle=False),
        }
        for epoch in range(start_epoch, epochs):
            SET
            train_res = utils.train_epoch(epoch=epoch, loader=loaders["train"], model=model)
        """

# github.com/fuqichen1998/Deformer ddp_train.py (u022): the DDP model and, beside it, a discriminator with an
# optimizer of its own, both handed to another module's epoch function; the checkpoint helper reads the model
DISCRIMINATOR = """
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        from utils.epoch import single_epoch
        from utils.utils import ddp_load_checkpoint

        def main(args, local_rank):
            dist.init_process_group(backend="nccl")
            model = get_network(args).to(local_rank)
            ddp_load_checkpoint(model, resume_path=args.resume)
            model = DDP(model, device_ids=[local_rank])
            optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
            motion_discriminator = MotionDiscriminator(rnn_size=1024)
            motion_discriminator.cuda()
            motion_dis_optimizer = torch.optim.AdamW(motion_discriminator.parameters(), lr=args.motion_dis_lr)
            WRAP
            for epoch in range(args.epochs):
                single_epoch(model=model, optimizer=optimizer, motion_dis_model=motion_discriminator,
                             motion_dis_optimizer=motion_dis_optimizer)
        """

CASES = {
    "control: a setup() nothing calls, the main block starting the group itself": (
        "hardcoded-master-port", 6, None, DEAD_SETUP.replace("CALL", "#setup(0, 1)")),
    "sibling: the main block calls that setup()": (
        "hardcoded-master-port", 6, "warning", DEAD_SETUP.replace("CALL", "setup(0, 1)")),
    "sibling: a snippet with no main block (the call left out of the post)": (
        "hardcoded-master-port", 6, "warning", DEAD_SETUP.split("        if __name__")[0]),
    "sibling: the group starts in another function of the module, not in its main block": (
        "hardcoded-master-port", 6, "warning", DEAD_SETUP.replace("CALL", "pass").replace(
            '            dist.init_process_group(backend="nccl")',
            '            pass\n\n        def init_dist():\n            dist.init_process_group(backend="nccl")')),
    "sibling: the group starts in the uncalled function (an excerpt cut before its call)": (
        "hardcoded-master-port", 6, "warning", CUT_MAIN),
    "control: --local_rank replaced by the group's rank before any read": (
        "local-rank-arg", 7, None, REPLACED.replace("FIRST", "pass")),
    "sibling: the flag read before it is replaced": (
        "local-rank-arg", 7, "warning", REPLACED.replace("FIRST", "torch.cuda.set_device(opt.local_rank)")),
    "absl's --local_rank where LOCAL_RANK is only words in a printed string": (
        "local-rank-arg", 5, "warning", ABSL.replace("WORDS", '"LOCAL_RANK{} Epoch"')),
    "control: the file reads LOCAL_RANK from the environment": (
        "local-rank-arg", 5, None, ABSL.replace("WORDS", 'os.environ["LOCAL_RANK"] + "{}"')),
    "--local_rank required beside the environment's LOCAL_RANK": (
        "local-rank-arg", 9, "warning", REQUIRED.replace("REQUIRED", "required=True")),
    "control: the same flag with a default": (
        "local-rank-arg", 9, None, REQUIRED.replace("REQUIRED", "default=-1")),
    "control: CUDA_VISIBLE_DEVICES set, then a helper of the file spawns the workers": (
        "cuda-visible-devices-late", 12, None, LATE_THEN_SPAWN.replace(
            "STARTS", "torch.multiprocessing.spawn(demo_fn, args=(world_size,), nprocs=world_size)")),
    "sibling: the helper runs the worker in this process": (
        "cuda-visible-devices-late", 12, "warning", LATE_THEN_SPAWN.replace("STARTS", "demo_fn(0, world_size)")),
    "a counted loop around the pass over the loader, no set_epoch": (
        "sampler-no-set-epoch", 3, "warning", COUNTED.replace("N", "10").replace("SET", "pass")),
    "control: the counted loop calls set_epoch": (
        "sampler-no-set-epoch", 3, None, COUNTED.replace("N", "10").replace("SET", "sampler.set_epoch(i)")),
    "control: a loop the file makes run once": (
        "sampler-no-set-epoch", 3, None, COUNTED.replace("N", "1").replace("SET", "pass")),
    "a dict's training loader handed to another module's epoch function": (
        "sampler-no-set-epoch", 7, "warning", LOADERS.replace("SET", "pass")),
    "control: the same, with set_epoch on that loader's sampler": (
        "sampler-no-set-epoch", 7, None, LOADERS.replace("SET", 'loaders["train"].sampler.set_epoch(epoch)')),
    "a discriminator with its own optimizer beside the DDP model, the step in another module": (
        "no-gradient-sync", 13, "warning", DISCRIMINATOR.replace("WRAP", "pass")),
    "control: the discriminator wrapped in DDP too": (
        "no-gradient-sync", 13, None, DISCRIMINATOR.replace(
            "WRAP", "motion_discriminator = DDP(motion_discriminator, device_ids=[local_rank])")),
    "control: the discriminator handed to a helper that may wrap it": (
        "no-gradient-sync", 13, None, DISCRIMINATOR.replace("WRAP", "wrap_ddp(motion_discriminator)")),
}


@pytest.mark.parametrize("rule, line, severity, code", list(CASES.values()), ids=list(CASES))
def test_heldout17_warnings(rule, line, severity, code):
    source = textwrap.dedent(code).lstrip("\n")
    found = [(d.line, d.severity) for d in engine.lint_source(source, "train.py") if d.rule == rule]
    # the one diagnostic named; where none is (a control), none on any line
    assert found == ([(line, severity)] if severity else []), found
