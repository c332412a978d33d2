"""lint v4 (issue 41): a failure the file itself makes certain is said as an error;
where the launch decides, a warning that says which launch fails. Each case is one
small program, its rule, its line and the severity lint must give it (None: the
rule is silent); each error case sits beside its control (the healthy program most
like it) and its sibling (the nearest program that needs the other verdict)."""

from __future__ import annotations

import textwrap

import pytest

from gpudoctor.linter import engine

# A DDP checkpoint loaded into the plain model: "Missing key(s) in state_dict" ... "Unexpected
# key(s): module.model.hidden_layers.0.weight" (github.com/pfnet/pfrl/pull/55;
# github.com/pytorch/pytorch/issues/3805: the wrapper adds the `module.` prefix).
LOADED_PLAIN = """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        def train(rank):
            model = ToyModel().to(rank)
            ddp_model = DDP(model, device_ids=[rank])
            if rank == 0:
                torch.save(ddp_model.state_dict(), "ckpt.pt")

        def evaluate():
            model = ToyModel()
            model.load_state_dict(torch.load("ckpt.pt", map_location="cpu"))

        class ToyModel(torch.nn.Module):
            pass
        """

CASES: dict[str, tuple[str, int, str | None, str | None]] = {
    # dev4 k053 (github.com/vladargunov/mipt-distributed-learning, a course launcher):
    # rank=0 with world_size=torch.cuda.device_count(): one process waits for ranks nothing
    # starts, one per GPU all claim rank 0.
    "rank pinned, world size the GPU count": ("rank-hardcoded", 5, "error", """
        import torch

        if __name__ == "__main__":
            world_size = torch.cuda.device_count()
            torch.distributed.init_process_group("nccl", rank=0, world_size=world_size)
        """),
    "control: the rank from the launcher, world size the GPU count": ("rank-hardcoded", 6, None, """
        import os
        import torch

        if __name__ == "__main__":
            world_size = torch.cuda.device_count()
            torch.distributed.init_process_group("nccl", rank=int(os.environ["RANK"]), world_size=world_size)
        """),
    "sibling: rank pinned, world size from the command line": ("rank-hardcoded", 5, "warning", """
        import torch

        def setup(args):
            world_size = args.world_size
            torch.distributed.init_process_group("nccl", rank=0, world_size=world_size)
        """),
    "sibling: rank pinned, GPU count, a rendezvous of its own (per-rank files)": ("rank-hardcoded", 4, "warning", """
        import torch

        n = torch.cuda.device_count()
        torch.distributed.init_process_group("nccl", init_method="tcp://10.0.0.1:23456", rank=0, world_size=n)
        """),
    # heldout4 q016 (github.com/JuliaWolleb/Diffusion-based-Segmentation/issues/63): improved-diffusion's
    # set-up with `comm.bcast` taken out: RANK "0" of "4" and a port bound at run time.
    "RANK pinned, MASTER_PORT picked at run time": ("rank-hardcoded", 8, "error", """
        import os
        import socket
        import torch.distributed as dist

        def setup_dist():
            if dist.is_initialized():
                return
            os.environ["RANK"] = "0"
            os.environ["WORLD_SIZE"] = "4"
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("", 0))
            port = s.getsockname()[1]
            os.environ["MASTER_PORT"] = str(port)
            dist.init_process_group(backend="nccl", init_method="env://")
        """),
    "the same set-up's port, with a literal world size above 1": ("master-port-per-process", 13, "error", None),
    # openai/improved-diffusion's own set-up (mature-repository control): rank 0's pick handed
    # to every rank, the rank and size from MPI.
    "control: the port picked once and broadcast": ("master-port-per-process", 8, None, """
        import os
        import torch.distributed as dist
        from mpi4py import MPI

        def setup_dist():
            comm = MPI.COMM_WORLD
            os.environ["RANK"] = str(comm.rank)
            os.environ["MASTER_PORT"] = str(comm.bcast(_find_free_port(), root=0))
            dist.init_process_group(backend="nccl", init_method="env://")
        """),
    "sibling: a port per process, the world size the launcher's": ("master-port-per-process", 5, "warning", """
        import os
        import torch.distributed as dist

        def setup():
            os.environ["MASTER_PORT"] = str(find_free_port())
            dist.init_process_group("nccl")
        """),
    "sibling: RANK pinned, a fixed port (per-rank copies can meet)": ("rank-hardcoded", 4, "warning", """
        import os
        import torch.distributed as dist

        os.environ["RANK"] = "1"
        os.environ["WORLD_SIZE"] = "4"
        os.environ["MASTER_PORT"] = "29500"
        dist.init_process_group(backend="nccl", init_method="env://")
        """),
    # NCCL refuses a group whose processes share a GPU: "Duplicate GPU detected : rank 2 and
    # rank 0 both on CUDA device 4000" (github.com/csguoh/MambaIR/issues/39, at DDP's
    # construction; github.com/NVIDIA/Megatron-LM/issues/661, at a barrier).
    "NCCL in the processes the file's mp.spawn starts, one per GPU, no device set": (
        "nccl-no-set-device", 7, "error", """
        import torch
        import torch.distributed as dist
        import torch.multiprocessing as mp
        from torch.nn.parallel import DistributedDataParallel as DDP

        def worker(rank, world_size):
            dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29500", rank=rank, world_size=world_size)
            model = DDP(torch.nn.Linear(10, 10).cuda())

        if __name__ == "__main__":
            n = torch.cuda.device_count()
            mp.spawn(worker, args=(n,), nprocs=n)
        """),
    "control: the same worker sets its device": ("nccl-no-set-device", 8, None, """
        import torch
        import torch.distributed as dist
        import torch.multiprocessing as mp
        from torch.nn.parallel import DistributedDataParallel as DDP

        def worker(rank, world_size):
            torch.cuda.set_device(rank)
            dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29500", rank=rank, world_size=world_size)
            model = DDP(torch.nn.Linear(10, 10).cuda())

        if __name__ == "__main__":
            n = torch.cuda.device_count()
            mp.spawn(worker, args=(n,), nprocs=n)
        """),
    "sibling: the same worker started by a launcher (one per machine is right)": ("nccl-no-set-device", 6, "warning", """
        import os
        import torch
        import torch.distributed as dist

        def main():
            dist.init_process_group("nccl", rank=int(os.environ["RANK"]), world_size=int(os.environ["WORLD_SIZE"]))
            model = torch.nn.Linear(10, 10).cuda()

        if __name__ == "__main__":
            main()
        """),
    "sibling: spawned, but a set-up helper of another module runs first": ("nccl-no-set-device", 8, "warning", """
        import torch
        import torch.distributed as dist
        import torch.multiprocessing as mp
        from common import setup_device

        def worker(rank, world_size):
            setup_device(rank)
            dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29500", rank=rank, world_size=world_size)
            model = torch.nn.Linear(10, 10).cuda()

        if __name__ == "__main__":
            mp.spawn(worker, args=(2,), nprocs=2)
        """),
    # lintA28: world_size=1, one process in all: cuda:0 is its GPU (heldout26b u009)
    "control: spawned as one process": ("nccl-no-set-device", 6, None, """
        import torch
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def worker(rank):
            dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29500", rank=rank, world_size=1)
            model = torch.nn.Linear(10, 10).cuda()

        if __name__ == "__main__":
            mp.spawn(worker, nprocs=1)
        """),
    # lint heldout10 u018 (a VAE trainer's train_ddp.py, mp.spawn one per GPU): every tensor and
    # DDP on `rank`; the only "cuda" is a module-level `device` nothing reads. The file does not
    # decide that anything lands on cuda:0: a warning saying what would.
    # lintA28: and the work named on each rank's GPU, nothing read on the current one: no pitfall (heldout22b u032)
    "control: spawned, the only current-device value never read": ("nccl-no-set-device", 8, None, """
        import torch
        import torch.distributed as dist
        import torch.multiprocessing as mp
        from torch.nn.parallel import DistributedDataParallel as DDP
        device = "cuda" if torch.cuda.is_available() else "cpu"

        def worker(rank, world_size):
            dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29500", rank=rank, world_size=world_size)
            model = DDP(torch.nn.Linear(10, 10).to(rank), device_ids=[rank])

        if __name__ == "__main__":
            n = torch.cuda.device_count()
            mp.spawn(worker, args=(n,), nprocs=n)
        """),
    "sibling: the same, the model put on that device": ("nccl-no-set-device", 8, "error", """
        import torch
        import torch.distributed as dist
        import torch.multiprocessing as mp
        from torch.nn.parallel import DistributedDataParallel as DDP
        device = "cuda" if torch.cuda.is_available() else "cpu"

        def worker(rank, world_size):
            dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29500", rank=rank, world_size=world_size)
            model = DDP(torch.nn.Linear(10, 10).to(device))

        if __name__ == "__main__":
            n = torch.cuda.device_count()
            mp.spawn(worker, args=(n,), nprocs=n)
        """),
    # lint heldout10 u045 (an underwater-image GAN, torch.distributed.launch): the sampler over
    # `UWS_Dataset_Retinex(path, train=True, ..., dcp=True)`, the loader over the same with
    # dcp=False; dev7 u035 (a skeleton-action trainer): a second `Feeder(**args)` for the loader.
    # The sampler reads only the length, which the file does not show to differ: warnings.
    "sampler over a second instance of the dataset, one setting differs": ("sampler-dataset-mismatch", 4, "warning", """
        from torch.utils.data import DataLoader, DistributedSampler

        sampler = DistributedSampler(Frames(root, train=True, dcp=True), num_replicas=2, rank=rank)
        loader = DataLoader(dataset=Frames(root, train=True, dcp=False), batch_size=4, sampler=sampler)
        """),
    "sampler over a second instance of the dataset, the same call": ("sampler-dataset-mismatch", 5, "warning", """
        from torch.utils.data import DataLoader, DistributedSampler

        train_dataset = Feeder(**args.train_feeder_args)
        sampler = DistributedSampler(train_dataset)
        loader = DataLoader(dataset=Feeder(**args.train_feeder_args), batch_size=4, sampler=sampler)
        """),
    # heldout3 m075 (a torch_xla test): `list(np.arange(4))` built for the sampler and again for the loader
    "control: a builtin's value built twice is the same data": ("sampler-dataset-mismatch", 5, None, """
        import numpy as np
        from torch.utils.data import DataLoader, DistributedSampler

        sampler = DistributedSampler(list(np.arange(4)), num_replicas=world, rank=rank)
        loader = DataLoader(list(np.arange(4)), batch_size=4, sampler=sampler)
        """),
    "control: one dataset for the sampler and the loader": ("sampler-dataset-mismatch", 5, None, """
        from torch.utils.data import DataLoader, DistributedSampler

        train_dataset = Feeder(**args.train_feeder_args)
        sampler = DistributedSampler(train_dataset)
        loader = DataLoader(dataset=train_dataset, batch_size=4, sampler=sampler)
        """),
    # (a warning since lintA22: the file shows neither length; a shorter val set raises, a longer one is read
    # in part, lint heldout20 u015)
    "sibling: the training sampler given to the validation loader": ("sampler-dataset-mismatch", 6, "warning", """
        from torch.utils.data import DataLoader, DistributedSampler

        train_set, val_set = Frames(root, "train"), Frames(root, "val")
        sampler = DistributedSampler(train_set)
        loader = DataLoader(train_set, batch_size=4, sampler=sampler)
        val_loader = DataLoader(val_set, batch_size=4, sampler=sampler)
        """),
    # lint heldout10 u043 (a segmentation trainer, mp.spawn): the backend is nccl wherever CUDA is
    # available, the epoch loss all-reduced as `torch.tensor(epoch_loss)`: "No backend type
    # associated with device type cpu" on every GPU machine.
    "NCCL chosen where CUDA is available, a CPU tensor all-reduced": ("nccl-cpu-tensor", 9, "error", """
        import torch
        import torch.distributed as dist

        def setup(rank, world_size):
            backend = "nccl" if torch.cuda.is_available() else "gloo"
            dist.init_process_group(backend=backend, rank=rank, world_size=world_size)

        def epoch_end(epoch_loss):
            dist.all_reduce(torch.tensor(epoch_loss), op=dist.ReduceOp.SUM)
        """),
    "control: the same tensor made on the rank's GPU": ("nccl-cpu-tensor", 9, None, """
        import torch
        import torch.distributed as dist

        def setup(rank, world_size):
            backend = "nccl" if torch.cuda.is_available() else "gloo"
            dist.init_process_group(backend=backend, rank=rank, world_size=world_size)

        def epoch_end(epoch_loss):
            dist.all_reduce(torch.tensor(epoch_loss, device="cuda"), op=dist.ReduceOp.SUM)
        """),
    "sibling: the backend from the command line (it may be gloo)": ("nccl-cpu-tensor", 9, None, """
        import torch
        import torch.distributed as dist

        def setup(rank, world_size, args):
            backend = "nccl" if args.use_nccl else "gloo"
            dist.init_process_group(backend=backend, rank=rank, world_size=world_size)

        def epoch_end(epoch_loss):
            dist.all_reduce(torch.tensor(epoch_loss), op=dist.ReduceOp.SUM)
        """),
    # Issue 41 point 3: a stop decided on one rank (github.com/Lightning-AI/pytorch-lightning/issues/379,
    # early stopping met on some ranks: "the training hangs"; github.com/talmolab/sleap-nn/pull/471,
    # rank 0 leaves the loop on a stop command, the others wait in the next collective).
    "while True, the only way out a break on rank 0": ("collective-under-rank-condition", 9, "error", """
        import torch.distributed as dist

        def train(rank, model, batches):
            while True:
                loss = model(next(batches)).sum()
                loss.backward()
                dist.all_reduce(loss)
                if rank == 0 and loss.item() < 0.01:
                    break
        """),
    "control: the decision broadcast, every rank breaks": ("collective-under-rank-condition", 11, None, """
        import torch
        import torch.distributed as dist

        def train(rank, model, batches):
            while True:
                loss = model(next(batches)).sum()
                loss.backward()
                stop = torch.tensor(int(rank == 0 and loss.item() < 0.01))
                dist.broadcast(stop, src=0)
                if stop.item():
                    break
        """),
    "sibling: the same break in a loop over the batches (it may be the last one)": (
        "collective-under-rank-condition", 9, "warning", """
        import torch.distributed as dist

        def train(rank, model, batches):
            for batch in batches:
                loss = model(batch).sum()
                loss.backward()
                dist.all_reduce(loss)
                if rank == 0 and loss.item() < 0.01:
                    break
        """),
    # LOADED_PLAIN: a DDP checkpoint loaded into the plain model
    "the wrapper's state_dict saved, then loaded into the plain model": ("save-ddp-wrapper", 12, "error",
                                                                          LOADED_PLAIN),
    # lint heldout14 u043 (daniellee6925/from_scratch ddp.py, a "Skeleton for using DDP"): the model
    # loaded into is `MyModel()`, a class the file never defines: not seen to be plain (its save stays
    # a warning); nor is `build_model(cfg)` of another module, which may return it wrapped
    "sibling: loaded into a model whose class the file does not show": ("save-ddp-wrapper", 12, None, LOADED_PLAIN.replace(
        "class ToyModel(torch.nn.Module):\n            pass\n", "").replace("ToyModel", "MyModel")),
    "control: loaded back into the wrapper (the tutorial's round trip)": ("save-ddp-wrapper", 9, None, """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        def train(rank):
            model = ToyModel().to(rank)
            ddp_model = DDP(model, device_ids=[rank])
            if rank == 0:
                torch.save(ddp_model.state_dict(), "ckpt.pt")
            ddp_model.load_state_dict(torch.load("ckpt.pt", map_location={"cuda:0": f"cuda:{rank}"}))
        """),
    "sibling: loaded into the plain model with strict=False (keys skipped, no raise)": (
        "save-ddp-wrapper", 12, None, LOADED_PLAIN.replace('torch.load("ckpt.pt", map_location="cpu"))',
                                                           'torch.load("ckpt.pt"), strict=False)')),
    "sibling: the prefix stripped in place before the load": ("save-ddp-wrapper", 13, None, """
        import torch
        from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present
        from torch.nn.parallel import DistributedDataParallel as DDP

        def train(rank):
            ddp_model = DDP(ToyModel().to(rank), device_ids=[rank])
            torch.save(ddp_model.state_dict(), "ckpt.pt")

        def evaluate():
            model = ToyModel()
            state = torch.load("ckpt.pt")
            consume_prefix_in_state_dict_if_present(state, "module.")
            model.load_state_dict(state)

        class ToyModel(torch.nn.Module):
            pass
        """),
    # heldout3 m013 (github.com/bamos/densenet.pytorch/issues/5): an indented paste that needs
    # no other repair is read line for line; its TypeError is certain.
    "an indented paste read as written keeps a certain error": ("unexpected-argument", 3, "error", """
            if args.cuda:
                net = net.cuda()
                net = nn.DataParallel(net, devices=[0, 1, 2, 3])
        """),
    # (lintA10's Repair.faithful: completing a cut-off last statement reads every line shown as
    # written, and the call's own arguments decide the TypeError: it stays an error)
    "sibling: the same paste with its last line cut off still has the whole call: an error": (
        "unexpected-argument", 3, "error", """
            if args.cuda:
                net = net.cuda()
                net = nn.DataParallel(net, devices=[0, 1, 2, 3])
            out = [net(x) for x in
        """),
}


@pytest.mark.parametrize("name", list(CASES))
def test_severity_follows_what_the_file_decides(name):
    rule, line, severity, code = CASES[name]
    code = code or CASES["RANK pinned, MASTER_PORT picked at run time"][3]
    text = textwrap.dedent(code).lstrip("\n")
    if "paste" in name:  # a method's body pasted alone: its first line indented
        text = textwrap.indent(text, "    ")
    found = [d for d in engine.lint_source(text, "train.py") if d.rule == rule and d.line == line]
    assert [d.severity for d in found] == ([severity] if severity else []), [d.message for d in found]
