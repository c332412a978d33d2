"""lint's recall on the shapes lint heldout13 missed (issue 41; 61 whole scripts of the `train_dist.py`
and `ddp.py` listings): each a few of the script's own lines (source in the comment), its control (the
healthy program most like it) and, where another verdict is near, its sibling. Each case: its rule, its
line, the severity lint must give it (None: the rule is silent there, on every line)."""

from __future__ import annotations

import textwrap

import pytest

from gpudoctor.linter import engine

# github.com/2aron-chen/Skunkworks ddp.py (lint heldout13 u048), a copy of the PyTorch DDP tutorial's old
# multigpu.py: the spawned worker starts an NCCL group and moves the model with `.to(gpu_id)`; nothing
# sets the current device (the tutorial's current multigpu.py calls torch.cuda.set_device(rank))
MULTIGPU = """
        import os
        import torch
        import torch.multiprocessing as mp
        from torch.distributed import init_process_group
        from torch.nn.parallel import DistributedDataParallel as DDP

        def main(rank, world_size):
            BIND
            init_process_group(backend="nccl", rank=rank, world_size=world_size)
            model = DDP(Net().to(rank), device_ids=[rank])

        if __name__ == "__main__":
            mp.spawn(main, args=(2,), nprocs=2)
        """

# the same model under torchrun: the launch, not in the file, may give each process its own GPU
TORCHRUN = """
        import os
        import torch
        from torch.distributed import init_process_group
        from torch.nn.parallel import DistributedDataParallel as DDP

        def main():
            rank = int(os.environ["LOCAL_RANK"])
            init_process_group(backend="nccl")
            model = DDP(Net().to(rank), device_ids=[rank])

        if __name__ == "__main__":
            main()
        """

# github.com/seba-1511/dist_tuto.pth-style trainer (lint heldout13 u038): `Process(target=init_processes)`,
# whose `backend='nccl'` default no call site overrides; AlexNet moved with `.cuda(rank)`
PROCESS = """
        import torch.distributed as dist
        from torch.multiprocessing import Process

        def run(rank, size):
            model = Net().cuda(rank)

        def init_processes(rank, size, fn, backend=BACKEND):
            dist.init_process_group(backend, rank=rank, world_size=size)
            fn(rank, size)

        if __name__ == "__main__":
            for rank in range(2):
                Process(target=init_processes, args=(rank, 2, run)).start()
        """

# github.com/cjw94103/AttentionGAN_reimpl train_dist.py (lint heldout13 u043): CUDA_VISIBLE_DEVICES set once
# at the top, the same for every spawned process; the models moved by the spawn index
PINNED = """
        import os
        VISIBLE
        import torch
        import torch.multiprocessing as mp

        def main_worker(rank, world_size):
            WORKER
            torch.distributed.init_process_group("nccl", rank=rank, world_size=world_size)
            G = torch.nn.parallel.DistributedDataParallel(Gen().to(rank), device_ids=[rank])

        if __name__ == "__main__":
            mp.spawn(main_worker, nprocs=torch.cuda.device_count(), args=(torch.cuda.device_count(),))
        """

# github.com/Kaustubh-CH/MLNeuronInverter train_dist.py (lint heldout13 u001, and u016 of the same lineage):
# a SLURM launcher pins GPU 0 in the branch that starts the group
SLURM = """
        import os
        import torch
        import torch.distributed as dist

        params = {"world_size": int(os.environ["WORLD_SIZE"])}
        if params["world_size"] > 1:  # multi-GPU training
            torch.cuda.set_device(0)
            INIT
        """

# github.com/yamanishi/furusato_recommend-style trainer (lint heldout13 u061): the model's own epoch method
# is handed the optimizer and run on the DDP wrapper's .module
EPOCH = """
        import torch.optim as optim
        from torch.nn.parallel import DistributedDataParallel as DDP

        def train(rank, model, loader):
            ddp_model = DDP(model, device_ids=[rank])
            optimizer = optim.Adam(ddp_model.parameters(), lr=1e-3)
            for i in range(200):
                CALL
        """

# lint heldout13 u057 (a sand-water LSTM trainer): the epoch function reads the loader through `loop =
# tqdm(enumerate(train_loader))`; nothing calls set_epoch
TQDM = """
        from torch.utils.data import DataLoader
        from torch.utils.data.distributed import DistributedSampler
        from tqdm import tqdm

        def train(model, epoch):
            loop = tqdm(enumerate(train_loader), total=len(train_loader))
            for batch_idx, (seq, labels) in loop:
                model(seq).sum().backward()

        if __name__ == "__main__":
            trainSampler = DistributedSampler(trainDataSet)
            train_loader = DataLoader(dataset=trainDataSet, batch_size=64, sampler=trainSampler)
            for epoch in range(1, 11):
                EPOCH
                train(model, epoch)
        """

# github.com/cjw94103/AttentionGAN_reimpl train_dist.py (lint heldout13 u043, u044): the spawned worker's
# training loader shuffles the whole dataset and is handed to the project's train(); no DistributedSampler
GAN = """
        import torch
        from torch.utils.data import DataLoader
        from train_func import train

        def main_worker(rank, world_size, args):
            G = torch.nn.parallel.DistributedDataParallel(Gen().to(rank), device_ids=[rank])
            LOADER
            train(args, G, train_dataloader)
        """

# github.com/zhanghang1989/PyTorch-Encoding-style ImageNet trainer (lint heldout13 u034): the DDP line is commented
# out and each spawned process of the group wraps its model in DataParallel
ENCODING = """
        import torch
        import torch.distributed as dist

        def main_worker(gpu, args):
            dist.init_process_group(backend="nccl", rank=gpu, world_size=args.world_size)
            train_sampler = torch.utils.data.distributed.DistributedSampler(trainset)
            WRAP
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for image, target in train_loader:
                loss = criterion(model(image), target)
                loss.backward()
                optimizer.step()
        """

CASES = {
    "each process of the group wraps its model in DataParallel": (
        "no-gradient-sync", 7, "warning", ENCODING.replace("WRAP", "model = torch.nn.DataParallel(model, device_ids=[gpu])")),
    "control: the model is wrapped in DDP": (
        "no-gradient-sync", 7, None,
        ENCODING.replace("WRAP", "model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[gpu])")),
    "control: the gradients all-reduced by hand": (
        "no-gradient-sync", 7, None, ENCODING.replace("WRAP", "model = model.cuda(gpu)").replace(
            "loss.backward()", "loss.backward()\n                for p in model.parameters():\n"
            "                    dist.all_reduce(p.grad)")),
    # huggingface/peft tests/training/lora_tp.py: the model loaded tensor-parallel over the group's ranks
    "control: a tensor-parallel model": (
        "no-gradient-sync", 7, None, ENCODING.replace(
            "WRAP", "model = AutoModel.from_pretrained(name, tp_plan='auto', tp_size=dist.get_world_size())")),
    "control: a project helper is handed the model": (
        "no-gradient-sync", 7, None, ENCODING.replace("WRAP", "model = wrap_ddp(model, gpu)")),
    "a DDP worker's loader shuffles the whole dataset": (
        "no-distributed-sampler", 7, "warning",
        GAN.replace("LOADER", "train_dataloader = DataLoader(ImageDataset(args.data_path), batch_size=4, shuffle=True)")),
    "control: a DistributedSampler splits it": (
        "no-distributed-sampler", 7, None,
        GAN.replace("LOADER", "train_dataloader = DataLoader(ds, batch_size=4, sampler=DistributedSampler(ds))")),
    "control: the dataset is cut by rank": (
        "no-distributed-sampler", 7, None,
        GAN.replace("LOADER", "train_dataloader = DataLoader(Part(root, rank, world_size), batch_size=4, shuffle=True)")),
    "sibling: the same loader on the single-process arm": (
        "no-distributed-sampler", 8, None,
        GAN.replace("LOADER", "if args.mode != 'ddp':\n"
                    "                train_dataloader = DataLoader(ImageDataset(args.data_path), batch_size=4, shuffle=True)")),
    "a loader read through a tqdm bound to a name, no set_epoch": (
        "sampler-no-set-epoch", 11, "warning", TQDM.replace("EPOCH", "pass")),
    "control: set_epoch at the top of the epoch": (
        "sampler-no-set-epoch", 11, None, TQDM.replace("EPOCH", "trainSampler.set_epoch(epoch)")),
    "the model's epoch method handed the optimizer, on .module": (
        "ddp-forward-bypassed", 8, "error", EPOCH.replace("CALL", "loss = ddp_model.module.OneEpoch(optimizer, loader)")),
    "the model's own train loop (not nn.Module.train) on .module": (
        "ddp-forward-bypassed", 8, "error", EPOCH.replace("CALL", "ddp_model.module.train(loader, epochs=1)")),
    "control: an evaluation method handed a loader": (
        "ddp-forward-bypassed", 8, None, EPOCH.replace("CALL", "acc = ddp_model.module.evaluate(loader)")),
    "control: a checkpoint helper handed .module and the optimizer": (
        "ddp-forward-bypassed", 8, None, EPOCH.replace("CALL", "save_last_checkpoint(ddp_model.module, optimizer, i)")),
    "control: nn.Module.train() on .module": (
        "ddp-forward-bypassed", 8, None, EPOCH.replace("CALL", "ddp_model.module.train(True)")),
    "set_device(0) in the branch that starts the group": ("set-device-literal", 7, "warning",
                                                          SLURM.replace("INIT", 'dist.init_process_group("nccl")')),
    "sibling: the literal in a branch without the group's init": (
        "set-device-literal", 7, None, SLURM.replace("INIT", "pass") + 'dist.init_process_group("nccl")\n'),
    # lintA28: every GPU named is the rank's own, nothing on the current device: no pitfall (heldout26c u021)
    "control: spawned workers place the model by index, no current device": ("nccl-no-set-device", 9, None,
                                                                    MULTIGPU.replace("BIND", "pass")),
    "control: the worker sets its device": ("nccl-no-set-device", 9, None,
                                            MULTIGPU.replace("BIND", "torch.cuda.set_device(rank)")),
    "sibling: the same model under torchrun, the launch not in view": ("nccl-no-set-device", 9, None, TORCHRUN),
    "control: Process target whose backend default is nccl, the model on cuda(rank)": (
        "nccl-no-set-device", 8, None, PROCESS.replace("BACKEND", "'nccl'")),
    "control: its default is gloo": ("nccl-no-set-device", 8, None, PROCESS.replace("BACKEND", "'gloo'")),
    "Process workers on env:// with no MASTER_ADDR": ("master-addr-not-set", 8, "warning",
                                                      PROCESS.replace("BACKEND", "'gloo'")),
    "control: the parent sets MASTER_ADDR before starting them": (
        "master-addr-not-set", 8, None, PROCESS.replace("BACKEND", "'gloo'").replace(
            "for rank in range(2):", 'os.environ["MASTER_ADDR"] = "127.0.0.1"\n            for rank in range(2):')),
    "control: one literal CUDA_VISIBLE_DEVICES for every process, models by index": ("nccl-no-set-device", 8, None,
                                                           PINNED.replace("VISIBLE", 'os.environ["CUDA_VISIBLE_DEVICES"] = "1"')
                                                           .replace("WORKER", "pass")),
    "control: each worker narrows it to its own GPU": ("nccl-no-set-device", 8, None,
                                                      PINNED.replace("VISIBLE", "pass").replace(
                                                          "WORKER", 'os.environ["CUDA_VISIBLE_DEVICES"] = str(rank)')),
}


@pytest.mark.parametrize("rule, line, severity, code", list(CASES.values()), ids=list(CASES))
def test_heldout13_shapes(rule, line, severity, code):
    source = textwrap.dedent(code).lstrip("\n")
    found = [(d.line, d.severity) for d in engine.lint_source(source, "train.py") if d.rule == rule]
    # the one diagnostic named; where none is (a control, a sibling with another verdict), none on any line
    assert found == ([(line, severity)] if severity else []), found
