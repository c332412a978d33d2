"""lint's recall on the warnings lint heldout15 missed, and its precision on the ones its readers called
false (issue 41; 60 whole scripts of the `multi_gpu.py` and `train_distributed.py` listings): each a few of
the script's own lines (source in the comment), its control (the healthy program most like it) and, where
another verdict is near, its sibling. Each case: its rule, its line, the severity lint must give it (None:
the rule is silent there, on every line)."""

from __future__ import annotations

import textwrap

import pytest

from gpudoctor.linter import engine

# github.com/AaronXueNF/ModulatedAtt train_distributed.py (lint heldout15 u016): the checkpoint saved on
# every rank under a test of the batch counter, which is the same on every rank (not a rank flag)
COUNTER = """
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        for epoch in range(epochs):
            for batch, inputs in enumerate(train_loader):
                step(inputs)
                if TEST:
                    torch.save(state, args["current_checkpoint"])
        """

# github.com/AgentVi/CLTR train_distributed.py (lint heldout15 u017; u047 and u048 derive from it): the
# project's own save helper given the DDP model's state dict, every rank, whenever args['save'] is set
CLTR = """
        import torch
        import torch.distributed as dist
        from utils import save_checkpoint

        def main(args):
            model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args['local_rank']])
            for epoch in range(args['epochs']):
                if args['save']:
                    SAVE({
                        'epoch': epoch + 1,
                        'state_dict': STATE,
                    }, is_best, args['save_path'])
            sampler = DistributedSampler(train_data, num_replicas=dist.get_world_size(), rank=RANK)

        main(args)
        """


def cltr(save: str = "save_checkpoint", state: str = "model.module.state_dict()", rank: str = "dist.get_rank()") -> str:
    return CLTR.replace("SAVE", save).replace("STATE", state).replace("RANK", rank)


# github.com/Cute77/learning-to-reweight-examples train_distributed.py (lint heldout15 u025): one arm of the
# rank-0 test saves, and so does its else, which every other rank takes
BOTH_ARMS = """
        import os
        import torch

        def train_net(net, local_rank):
            is_distributed = int(os.environ.get("WORLD_SIZE", 1)) > 1
            if is_distributed:
                torch.distributed.init_process_group(backend="nccl", init_method="env://")
            for epoch in range(10):
                if is_distributed and local_rank == 0:
                    torch.save(net.state_dict(), path)
                ELSE
                    torch.save(net.state_dict(), path)
        """

# github.com/Runki2018/litehandnet train_distributed.py (lint heldout15 u040): the checkpoint dict filled key
# by key, the DDP wrapper's state dict among them
FILLED = """
        import torch

        class Trainer:
            def __init__(self, gpu):
                self.model = torch.nn.parallel.DistributedDataParallel(Network().cuda(gpu), device_ids=[gpu])
                self.save_dict = {}

            def save_model(self, save_file):
                self.save_dict["epoch"] = self.epoch
                self.save_dict["state_dict"] = STATE
                torch.save(self.save_dict, save_file)
        """

# github.com/Wang-hao-thu/Knowledge_Distillation_AD train_distributed.py (lint heldout15 u049): mmcv's
# wrappers, MMDistributedDataParallel under a launcher and MMDataParallel, its one-GPU wrapper, without
MMCV = """
        import torch
        from mmcv.parallel import MMDataParallel, MMDistributedDataParallel

        if distributed:
            model = MMDistributedDataParallel(model.cuda(), device_ids=[torch.cuda.current_device()])
        else:
            model = ONE(model.cuda())
        for epoch in range(epochs):
            train(model)
            torch.save(STATE, "{}Cloner_{}.pth".format(checkpoint_path, epoch))
        """

# github.com/DeppMeng/DANNet train_distributed.py (lint heldout15 u026; heldout9 u038, a NeRF trainer's
# proposal network, the same): a second network trained beside the DDP-wrapped one, never wrapped itself
TWO_NETS = """
        import torch.nn as nn
        import torch.optim as optim

        init_distributed_mode(args)
        model = nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
        lightnet = LightNet()
        WRAP
        optimizer = optim.SGD(PARAMS, lr=args.learning_rate)
        for i_iter in range(args.num_steps):
            loss = seg_loss(model(lightnet(images)), labels)
            loss.backward()
            optimizer.step()
        """

# github.com/GitMonsters/octotetrahedral-agi train_distributed.py (lint heldout15 u030): a step-bounded
# `while` around the pass over the loader, each pass an epoch
STEPS = """
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        dist.init_process_group("nccl")
        sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True)
        dataloader = DataLoader(dataset, batch_size=8, sampler=sampler)
        while global_step < max_steps:
            EPOCH
            for batch in dataloader:
                train_step(batch)
                global_step += 1
            LAST
        """

# github.com/Cute77/learning-to-reweight-examples train_distributed.py (lint heldout15 u025): the loader's
# iterator rebuilt when it runs out, inside the step loop
RESTARTED = """
        import torch
        from torch.utils.data import DataLoader, distributed

        torch.distributed.init_process_group(backend="nccl", init_method="env://")
        train_sampler = distributed.DistributedSampler(train)
        data_loader = DataLoader(train, batch_size=128, sampler=train_sampler)
        data = iter(data_loader)
        for epoch in range(epochs):
            EPOCH
            for i in range(len(train)):
                try:
                    image, labels = next(data)
                except StopIteration:
                    data = iter(data_loader)
                    image, labels = next(data)
        """

# github.com/LookJohnny/csci653-as01 train_distributed.py (lint heldout15 u034; heldout12 u007 the same): the
# spawn's index is the rank of a world of nodes * GPUs per node, and nothing adds the node's rank
NODES = """
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def setup_distributed(rank, world_size):
            dist.init_process_group(backend="nccl", init_method="env://", world_size=world_size, rank=rank)

        def train_distributed(rank, world_size, args):
            setup_distributed(RANK, world_size)

        def main():
            world_size = SIZE
            mp.spawn(train_distributed, args=(world_size, args), nprocs=args.gpus_per_node, join=True)
        """

CASES = {
    "a save under a test of the batch counter": (
        "save-all-ranks", 9, "warning", COUNTER.replace("TEST", "batch and (batch + 1) % val_interval == 0")),
    "control: the counter test joined to a rank test": (
        "save-all-ranks", 9, None, COUNTER.replace("TEST", "batch % val_interval == 0 and dist.get_rank() == 0")),
    "sibling: a flag of another module (may be a rank flag)": (
        "save-all-ranks", 9, None, COUNTER.replace("TEST", "cfg.save_ckpt")),
    "the project's save helper given a state dict on every rank": ("save-all-ranks", 9, "warning", cltr()),
    "control: the helper called under a rank test": (
        "save-all-ranks", 10, None,
        cltr().replace("if args['save']:", "if args['save']:\n                if args['local_rank'] == 0:")),
    "sibling: a helper whose name says one process saves": (
        "save-all-ranks", 9, None, cltr(save="save_on_master").replace(
            "from utils import save_checkpoint", "from utils import save_on_master")),
    "the helper given the wrapper's state dict: said at the state dict": (
        "save-ddp-wrapper", 11, "warning", cltr(state="model.state_dict()")),
    "control: the helper given the model's own state dict": ("save-ddp-wrapper", 11, None, cltr()),
    "a sampler told its rank by the config dict's local_rank": (
        "local-rank-as-global-rank", 13, "warning", cltr(rank="args['local_rank']")),
    "control: the sampler told the global rank": ("local-rank-as-global-rank", 13, None, cltr(rank="args['rank']")),
    "the else of the rank-0 test saves too": (
        "save-all-ranks", 12, "warning", BOTH_ARMS.replace("ELSE", "else:")),
    "control: the other arm is the run without a launcher": (
        "save-all-ranks", 12, None, BOTH_ARMS.replace("ELSE", "elif not is_distributed:")),
    "a checkpoint dict filled with the wrapper's state dict": (
        "save-ddp-wrapper", 10, "warning", FILLED.replace("STATE", "self.model.state_dict()")),
    "control: filled with the model's own": (
        "save-ddp-wrapper", 10, None, FILLED.replace("STATE", "self.model.module.state_dict()")),
    "sibling: filled in the except of a try that unwraps first (lint heldout13 u031)": (
        "save-ddp-wrapper", 10, None, FILLED.replace(
            'self.save_dict["state_dict"] = STATE',
            'try:\n                    self.save_dict["state_dict"] = self.model.module.state_dict()\n'
            '                except AttributeError:\n'
            '                    self.save_dict["state_dict"] = self.model.state_dict()')),
    "mmcv's MMDistributedDataParallel and MMDataParallel are wrappers too": (
        "save-ddp-wrapper", 10, "warning",
        MMCV.replace("ONE", "MMDataParallel").replace("STATE", "model.state_dict()")),
    "control: the wrapped model's own state dict": (
        "save-ddp-wrapper", 10, None,
        MMCV.replace("ONE", "MMDataParallel").replace("STATE", "model.module.state_dict()")),
    "control: mmcv's MMDataParallel is its one-GPU wrapper": (
        "dataparallel", 7, None, MMCV.replace("ONE", "MMDataParallel").replace("STATE", "model.module.state_dict()")),
    "sibling: a project's DataParallel subclass drives every GPU": (
        "dataparallel", 8, "warning", MMCV.replace("ONE", "BalancedDataParallel").replace(
            "STATE", "model.module.state_dict()").replace(
            "import torch\n", "import torch\n        from data_parallel import BalancedDataParallel\n")),
    "a second network trained beside the DDP one, never wrapped": (
        "no-gradient-sync", 6, "warning", TWO_NETS.replace("WRAP", "pass").replace(
            "PARAMS", "list(model.parameters()) + list(lightnet.parameters())")),
    "control: both wrapped": (
        "no-gradient-sync", 6, None, TWO_NETS.replace(
            "WRAP", "lightnet = nn.parallel.DistributedDataParallel(lightnet, device_ids=[args.gpu])").replace(
            "PARAMS", "list(model.parameters()) + list(lightnet.parameters())")),
    "control: the second network handed back by another object's method (lint heldout10: it may wrap it)": (
        "no-gradient-sync", 6, None, TWO_NETS.replace("lightnet = LightNet()", "lightnet = env.get_model()").replace(
            "WRAP", "pass").replace("PARAMS", "list(model.parameters()) + list(lightnet.parameters())")),
    "sibling: the second network frozen (not given to the optimizer)": (
        "no-gradient-sync", 6, None, TWO_NETS.replace("WRAP", "lightnet.requires_grad_(False)").replace(
            "PARAMS", "model.parameters()")),
    "a while loop bounded by steps re-reads the loader": (
        "sampler-no-set-epoch", 5, "warning", STEPS.replace("EPOCH", "pass").replace("LAST", "pass")),
    "control: set_epoch at each pass": (
        "sampler-no-set-epoch", 5, None, STEPS.replace("EPOCH", "sampler.set_epoch(global_step)").replace(
            "LAST", "pass")),
    "sibling: a while that breaks after one pass": (
        "sampler-no-set-epoch", 5, None, STEPS.replace("EPOCH", "pass").replace("LAST", "break")),
    "the loader's iterator rebuilt inside the step loop": (
        "sampler-no-set-epoch", 5, "warning", RESTARTED.replace("EPOCH", "pass")),
    "control: set_epoch each epoch": (
        "sampler-no-set-epoch", 5, None, RESTARTED.replace("EPOCH", "train_sampler.set_epoch(epoch)")),
    "the spawn index as the rank of a world of several nodes": (
        "rank-from-local-rank", 5, "warning", NODES.replace("RANK", "rank").replace(
            "SIZE", "args.nodes * args.gpus_per_node")),
    "control: the node's rank added": (
        "rank-from-local-rank", 5, None, NODES.replace("RANK", "args.node_rank * args.gpus_per_node + rank").replace(
            "SIZE", "args.nodes * args.gpus_per_node")),
    "sibling: the spawn's processes are the whole world": (
        "rank-from-local-rank", 5, None, NODES.replace("RANK", "rank").replace("SIZE", "args.gpus_per_node")),
}


@pytest.mark.parametrize("rule, line, severity, code", list(CASES.values()), ids=list(CASES))
def test_heldout15_warnings(rule, line, severity, code):
    source = textwrap.dedent(code).lstrip("\n")
    found = [(d.line, d.severity) for d in engine.lint_source(source, "train.py") if d.rule == rule]
    # the one diagnostic named; where none is (a control, a sibling with another verdict), none on any line
    assert found == ([(line, severity)] if severity else []), found
