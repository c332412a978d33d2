"""lint v4, issue 41 point 2: warning precision. The false warnings of the held-out
user scripts (lint heldout10, retired to development) and dev7, read one by one: where
the rule was wrong, its class is fixed, and where one cause made several diagnostics,
it is said once, at its root, naming the other lines. Each case is one small program
written from the real lines (repository and commit in the comment above it), the rule,
and exactly the (line, severity) pairs that rule must give it (empty: silent); each
control sits beside the sibling that must still get the diagnostic."""

from __future__ import annotations

import textwrap

import pytest

from gpudoctor.linter import engine

# heldout10 u011 (github.com/AhmedShakr/CVproject1 train_ddp.py@5721328): the group's rank is
# LOCAL_RANK, and the samplers and the reads of six reduced tensors use the same index.
LOCAL_GROUP = """
        import os
        import torch
        import torch.distributed as dist
        from torch.utils.data import DistributedSampler

        def main():
            rank = int(os.environ["LOCAL_RANK"])
            world_size = int(os.environ["WORLD_SIZE"])
            dist.init_process_group(backend="nccl", INIT world_size=world_size)
            train_sampler = DistributedSampler(train_set, num_replicas=world_size, rank=rank)
            loss_tensor = torch.tensor(running_loss).to(rank)
            total_tensor = torch.tensor(total).to(rank)
            dist.reduce(loss_tensor, dst=0, op=dist.ReduceOp.SUM)
            dist.reduce(total_tensor, dst=0, op=dist.ReduceOp.SUM)
            if rank == 0:
                print(loss_tensor.item() / total_tensor.item())
        """

# heldout10 u001 (github.com/0xIbra/RobustSAM train_ddp.py@477eab3), the ImageNet example's
# shape: `--local_rank` holds the node rank and is rewritten to the global rank before the group.
REWRITTEN = """
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def main_worker(gpu, ngpus_per_node, opt):
            opt.gpu = gpu
            REWRITE
            dist.init_process_group(backend="nccl", init_method="tcp://10.0.0.1:23456",
                                    world_size=opt.world_size, rank=opt.local_rank)

        def main(opt, ngpus_per_node):
            mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, opt))
        """

# heldout10 u017 (github.com/BboyHanat/TransCG train_ddp.py@af80569, mp.spawn with the world size from the config, handed
# to the worker through spawn's args, beside nprocs): the spawn's processes are the whole world.
SPAWN_ARGS = """
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def dist_trainer(local_rank, dist_num, config):
            dist.init_process_group(backend='nccl', init_method=config['url'],
                                    world_size=dist_num,
                                    rank=local_rank)

        def main(cfg_params):
            mp.spawn(dist_trainer, nprocs=cfg_params['dist']['dist_num'],
                     args=(GIVEN, cfg_params))
        """

# dev7 u018 (github.com/Graph-and-Geometric-Learning/HEIST main_ddp.py@a40ece6): per-file graph
# data loaded on every rank and handed to a data loader, never to load_state_dict.
DATA_LOAD = """
        import torch
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def train_one_epoch(rank, model, files, args):
            dist.init_process_group("nccl", rank=rank, world_size=args.world_size)
            for i in range(len(files)):
                graphs = torch.load(files[i], weights_only=False)
                USE

        mp.spawn(train_one_epoch, args=(model, files, args), nprocs=2)
        """

# heldout10 u001 again: the launch written in the file's first comment is torch.distributed.launch,
# which exports MASTER_ADDR / MASTER_PORT; the script's mp.spawn workers inherit them.
LAUNCHED = """
        COMMENT
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def main_worker(gpu, ngpus_per_node, opt):
            dist.init_process_group(backend="nccl", world_size=opt.world_size, rank=gpu)

        def main(opt, ngpus_per_node):
            mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, opt))
        """

# heldout10 u001: the encoder's size read through `.module` in a `try`, through the model itself
# in its `except` (the handler runs where the model is no wrapper).
TRIED = """
        import torch

        def main_worker(gpu, opt, model):
            if opt.distributed:
                model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[gpu])
            try:
                size = model.module.image_encoder.img_size
            except AttributeError:
                size = READ.image_encoder.img_size
            return size
        """

# dev7 u023 (a course's ImageNet ResNet-50 adapted to DDP, main_ddp.py): the state dict is built
# by the caller of the ImageNet example's save_checkpoint helper, which saves whatever it is given.
HELPER = """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        def train(net, rank, epoch):
            model = DDP(net, device_ids=[rank])
            STATE

        def save_checkpoint(state, filename='checkpoint.pth.tar'):
            torch.save(state, filename)
        """

# lint heldout15 u009 (github.com/wxc971231/ddp-tutorial-series multi_gpu.py@a3e8893): the spawn target given as `fn=`
TUTORIAL = """
        import torch
        import torch.multiprocessing as mp
        from torch.distributed import init_process_group
        from torch.nn.parallel import DistributedDataParallel as DDP

        class Trainer:
            def __init__(self, model, gpu_id):
                self.gpu_id = gpu_id
                self.model = DDP(model.to(gpu_id), device_ids=[gpu_id])

            def _save_checkpoint(self):
                torch.save(self.model.module.state_dict(), "checkpoint.pt")

            def train(self, max_epochs):
                for epoch in range(max_epochs):
                    if self.gpu_id == 0 and epoch % 10 == 0:
                        self._save_checkpoint()

        def main(rank, world_size):
            init_process_group("nccl", rank=rank, world_size=world_size)
            trainer = Trainer(torch.nn.Linear(2, 2), rank)
            trainer.train(10)

        if __name__ == "__main__":
            mp.spawn(fn=main, args=(2,), nprocs=2)
        """


# lint heldout15 u057: a ten-line constructor ending in `.to(rank)`, rank the global rank
GLOBAL_DEVICE = """
        import torch
        import torch.distributed as dist
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

        dist.init_process_group("nccl")
        rank = dist.get_rank()
        lm = torch.nn.Linear(
            16,
            16,
        ).to(rank)
        """

CASES: dict[str, tuple[str, set[tuple[int, str]], str]] = {
    "control: a local index that is the group's own rank: said once, at the group (u011)": (
        "local-rank-as-global-rank", set(), LOCAL_GROUP.replace("INIT", "init_method=url, rank=rank,")),
    "root: the group given LOCAL_RANK, one diagnostic (u011)": (
        "rank-from-local-rank", {(9, "warning")}, LOCAL_GROUP.replace("INIT", "init_method=url, rank=rank,")),
    "sibling: the group's rank from torchrun's RANK: the sampler, and one read of two reduced tensors": (
        "local-rank-as-global-rank", {(10, "warning"), (15, "warning")}, LOCAL_GROUP.replace("INIT", "")),
    # heldout10 u045 (github.com/Ephemeral182/UWNR train_ddp.py@f918f8c, apex): DistributedSampler(num_replicas=2, rank=opt.local_rank)
    "control: a sampler over a literal world of two, one machine's": ("local-rank-as-global-rank", set(), """
        from torch.utils.data.distributed import DistributedSampler

        sampler = DistributedSampler(dataset, num_replicas=2, rank=opt.local_rank)
        """),
    "sibling: the same sampler beside the job's world size": ("local-rank-as-global-rank", {(4, "warning")}, """
        import torch.distributed as dist
        from torch.utils.data.distributed import DistributedSampler

        sampler = DistributedSampler(dataset, num_replicas=dist.get_world_size(), rank=opt.local_rank)
        """),
    "control: --local_rank rewritten to the global rank before the group (u001)": (
        "rank-from-local-rank", set(), REWRITTEN.replace("REWRITE", "opt.local_rank = opt.local_rank * ngpus_per_node + gpu")),
    "sibling: the same group where nothing rewrites it": (
        "rank-from-local-rank", {(8, "warning")}, REWRITTEN.replace("REWRITE", "opt.local_rank = opt.local_rank")),
    "control: the world size handed through spawn's args is its nprocs (u017)": (
        "rank-from-local-rank", set(), SPAWN_ARGS.replace("GIVEN", "cfg_params['dist']['dist_num']")),
    "sibling: spawn's args hand another world size": (
        "rank-from-local-rank", {(7, "warning")}, SPAWN_ARGS.replace("GIVEN", "cfg_params['dist']['world']")),
    "control: data files loaded for a data loader (dev7 u018)": (
        "torch-load-no-map-location", set(), DATA_LOAD.replace("USE", "loader = create_dataloader_ddp(graphs, args.batch_size)")),
    "sibling: the same load read into the model, a checkpoint": (
        "torch-load-no-map-location", {(8, "warning")}, DATA_LOAD.replace("USE", "model.load_state_dict(graphs)")),
    # heldout10 u031 (github.com/CloudedLeopard17/English_Hindi_Translation train_ddp.py@436947c): a translation dataset's prepared tensors
    "control: a Dataset class loads its prepared data": ("torch-load-no-map-location", set(), """
        import torch
        import torch.distributed as dist
        from torch.utils.data import Dataset

        class BilingualDataset(Dataset):
            def __init__(self, path):
                data = torch.load(path)
                self.inputs = data['encoder_inps']

        dist.init_process_group("nccl")
        train_set = BilingualDataset("train.pt")
        """),
    "control: spawned workers under the launcher the file names (u001)": (
        "master-addr-not-set", set(), LAUNCHED.replace(
            "COMMENT", "# python -m torch.distributed.launch train_ddp.py --multiprocessing-distributed")),
    "sibling: the same workers, no launcher written": (
        "master-addr-not-set", {(6, "warning")}, LAUNCHED.replace("COMMENT", "# train_ddp.py --multiprocessing-distributed")),
    # dev7 u029 (github.com/PhilipBotros/diloco main_ddp.py@1a1fc6d): init_process_group(backend="nccl")
    # in a spawned worker: it fails at RANK first, one cause said by init-without-rank-under-spawn.
    "control: a rankless group in a spawned worker is the error's (u029)": (
        "master-addr-not-set", set(), LAUNCHED.replace("COMMENT", "").replace(
            ', world_size=opt.world_size, rank=gpu', '')),
    "sibling: the rankless group's own diagnostic": (
        "init-without-rank-under-spawn", {(5, "error")}, LAUNCHED.replace("COMMENT", "").replace(
            ', world_size=opt.world_size, rank=gpu', '')),
    "control: the bare model read in the except of a .module try (u001)": ("wrapper-method-call", set(),
                                                                          TRIED.replace("READ", "model")),
    "sibling: the wrapper read in the except of another try": (
        "wrapper-method-call", {(9, "warning")}, TRIED.replace("READ", "model").replace("model.module.image", "opt.image")),
    # heldout10 u038 (github.com/DeepHM/deeplabv3plus_DPDDP train_ddp.py@d024aa6): the launch command written twice
    "one launch command written twice: one diagnostic at the first": ("deprecated-launch", {(1, "warning")}, """
        # python -m torch.distributed.launch --nproc_per_node=4 train.py
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--local_rank", type=int)
        # python -m torch.distributed.launch --nproc_per_node=4 train.py
        """),
    # heldout10 u038: save_checkpoint saves one state dict, then again under `if save_best:`; a dict built in
    # its own statement is said where the wrapper's state is taken (dev7's readers: u003, u015, u043), naming
    # the other save
    # (a third save of the same wrapper's state is the same cause: said by that diagnostic too, lintB20)
    "one checkpoint saved twice: one diagnostic at its state dict; another save its own": (
        "save-ddp-wrapper", {(6, "warning")}, """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        def train(net, rank, save_best):
            model = DDP(net, device_ids=[rank])
            state = {'epoch': 1, 'state_dict': model.state_dict()}
            if rank != 0:
                return
            torch.save(state, 'last.pth')
            if save_best:
                torch.save(state, 'best.pth')
            torch.save(model.state_dict(), 'weights.pth')
        """),
    "a state built for a save helper: said where the wrapper's state is taken": ("save-ddp-wrapper", {(6, "warning")},
        HELPER.replace("STATE", "save_checkpoint({'epoch': epoch, 'state_dict': model.state_dict()})")),
    "sibling: the checkpoint dict spread over the helper's own save: said at the save": (
        "save-ddp-wrapper", {(9, "warning")}, HELPER.replace("STATE", "save_checkpoint(model)").replace(
            "torch.save(state, filename)", "torch.save({'epoch': 1,\n                        'state_dict': state.state_dict()},\n"
            "                       filename)")),
    # lint heldout15 u017 (github.com/AgentVi/CLTR train_distributed.py@df33f0f, torch.distributed.launch): the log folder of the
    # `else` of `if args['distributed']:` is made by the one DataParallel process; the save folder after the `if`
    # by every rank
    "the single-process arm of a config dict's switch makes its folder once; after the if every rank": (
        "mkdir-race-all-ranks", {(15, "warning")}, """
        import os
        import torch.distributed as dist
        from torch import nn

        def main(args, model):
            if args['distributed']:
                dist.init_process_group('nccl')
                model = nn.parallel.DistributedDataParallel(model, device_ids=[args['local_rank']])
            else:
                model = nn.DataParallel(model, device_ids=[0])
                path = './save_file/log_file/debug/'
                if not os.path.exists(path):
                    os.makedirs(path)
            if not os.path.exists(args['save_path']):
                os.makedirs(args['save_path'])

        if __name__ == '__main__':
            main({'distributed': True, 'local_rank': 0, 'save_path': 'out'}, nn.Linear(2, 2))
        """),
    # lint heldout15 u009 (github.com/wxc971231/ddp-tutorial-series multi_gpu.py@a3e8893): `mp.spawn(fn=main, ...)` by keyword; the
    # Trainer's gpu_id is main's spawn index, so `if self.gpu_id == 0` saves once; the sibling saves on every rank
    "a spawn target passed as fn=: its first parameter is the rank": ("save-all-ranks", set(), TUTORIAL),
    "sibling: the same save without the rank test": (
        "save-all-ranks", {(17, "warning")}, TUTORIAL.replace("self.gpu_id == 0 and ", "")),
    # lint heldout15 u015 (github.com/AMeenakshi/SVDD2024 train_distributed.py@f613b3b): `if args.distributed:
    # main_distributed(args) else: main(args)`: main()'s saves run in one process; the sibling,
    # main_distributed's save without a rank test, on every rank
    "a function entered only from the single-process arm saves once": ("save-all-ranks", {(9, "warning")}, """
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        def main_distributed(args, model):
            dist.init_process_group(backend='nccl')
            model = DDP(model.cuda(args.local_rank), device_ids=[args.local_rank])
            for epoch in range(args.epochs):
                torch.save(model.module.state_dict(), f"model_{epoch}.pt")

        def main(args, model):
            for epoch in range(args.epochs):
                torch.save(model.state_dict(), f"model_{epoch}.pt")

        if __name__ == "__main__":
            args, model = parse_args(), torch.nn.Linear(2, 2)
            if args.distributed:
                main_distributed(args, model)
            else:
                main(args, model)
        """),
    # lint heldout15 u057 (github.com/Zilize/cs336-assign1 train_distributed.py@55d529a, torchrun + FSDP2): `TransformerLM(...)` over
    # ten lines, then `.to(rank)` with rank = dist.get_rank(): said at the index (line 10), not where the model's
    # call begins (line 7); a constructor's `device_id=` (dev6 r022) is said at the constructor
    "the global rank as a device: said at the index": ("device-from-global-rank", {(10, "warning")}, GLOBAL_DEVICE),
    "sibling: a constructor's device_id= is said at the constructor": (
        "device-from-global-rank", {(7, "warning")}, GLOBAL_DEVICE.replace("lm = torch.nn.Linear(", "sharded = FSDP(lm,")
        .replace("            16,\n            16,\n        ).to(rank)", "                       device_id=rank)")),
    # lint heldout15 u049 (github.com/Wang-hao-thu/Knowledge_Distillation_AD train_distributed.py@5200fe0, mmcv
    # init_dist on one arm of `if launcher == None:`): the step's all_reduce inside the
    # epoch and batch loops is the first use without a group, said there once (the barrier after the loop was)
    "a group started on one arm: said at the first use, inside the loops": ("dist-without-init", {(12, "warning")}, """
        import torch
        import torch.distributed as dist
        from mmcv.runner import init_dist

        def train(config, launcher=None):
            if launcher == None:
                distributed = False
            else:
                init_dist(launcher)
            for epoch in range(10):
                for x in config["data"]:
                    dist.all_reduce(x)
            dist.barrier()

        if __name__ == "__main__":
            train({"data": []})
        """),
}


@pytest.mark.parametrize("name", list(CASES))
def test_warning_precision_verdicts(name):
    rule, expected, code = CASES[name]
    text = textwrap.dedent(code).lstrip("\n")
    found = {(d.line, d.severity) for d in engine.lint_source(text, "train.py") if d.rule == rule}
    assert found == expected, [(d.line, d.message) for d in engine.lint_source(text, "train.py") if d.rule == rule]


def test_one_cause_names_its_other_lines():
    # heldout10 u011: the group's rank names the sampler and the reduce read it decides
    text = textwrap.dedent(LOCAL_GROUP.replace("INIT", "init_method=url, rank=rank,")).lstrip("\n")
    [root] = [d for d in engine.lint_source(text, "train.py") if d.rule == "rank-from-local-rank"]
    assert "lines 10, 15" in root.message
    text = textwrap.dedent(LOCAL_GROUP.replace("INIT", "")).lstrip("\n")
    read = [d for d in engine.lint_source(text, "train.py") if d.rule == "local-rank-as-global-rank" and d.line == 15]
    assert len(read) == 1 and "`loss_tensor` (line 13), `total_tensor` (line 14)" in read[0].message


def test_a_wrapper_ddp_on_one_path_and_dataparallel_on_another_is_named_ddp():
    # lint heldout15 u017 (github.com/AgentVi/CLTR train_distributed.py@df33f0f): `model` is DDP under `if args['distributed']:` and
    # DataParallel in the `else`; the saved state's wrapper is named the same in every run (it followed the
    # string hashing of the run)
    text = textwrap.dedent("""
        import torch
        from torch import nn

        def main(args, model):
            torch.distributed.init_process_group('nccl')
            if args['distributed']:
                model = nn.parallel.DistributedDataParallel(model, device_ids=[args['local_rank']])
            else:
                model = nn.DataParallel(model, device_ids=[0])
            torch.save({'state_dict': model.state_dict()}, 'ckpt.pth')
        """).lstrip("\n")
    [found] = [d for d in engine.lint_source(text, "train.py") if d.rule == "save-ddp-wrapper"]
    assert "a DistributedDataParallel wrapper's" in found.message
