"""lint v4 on issue 41's dev7 (training scripts from public repositories, read by a
collector who never saw lint): precision first. Each case is one small program
written from the real lines (repository and commit in the comment above it), the
rule, and exactly the (line, severity) pairs that rule must give it (empty: silent).
Each rule the sample showed wrong has the real false alarm as a control beside the
sibling that must still fire."""

from __future__ import annotations

import textwrap

import pytest

from gpudoctor.linter import engine

CASES: dict[str, tuple[str, set[tuple[int, str]], str]] = {
    # dev7 u018 (github.com/Graph-and-Geometric-Learning/HEIST main_ddp.py@a40ece6): validate()
    # calls two DDP models; its only call is under `if rank == 0:`. One pitfall, said once, where
    # the ranks part.
    "ddp forward in a function called on rank 0: one diagnostic at the call": (
        "ddp-forward-on-one-rank", {(15, "warning")}, """
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        def validate(model, decoder, loader):
            with torch.no_grad():
                for x in loader:
                    high, low = model(x)
                    out = decoder(high, low)

        def train(rank, net, dec, loader):
            model = DDP(net, device_ids=[rank])
            decoder = DDP(dec, device_ids=[rank])
            if rank == 0:
                validate(model, decoder, loader)
            dist.barrier()
        """),
    # dev7 u049 (github.com/beanmah/DynBrainGNN main_ddp.py@e5112cd): the test pass under
    # `if args.local_rank == 0` calls four DDP models in a row: one diagnostic naming them.
    "four DDP models in one rank-0 block: one diagnostic": (
        "ddp-forward-on-one-rank", {(9, "warning")}, """
        import torch
        from torch.nn.parallel import DistributedDataParallel

        encoder = DistributedDataParallel(enc, device_ids=[args.local_rank])
        decoder = DistributedDataParallel(dec, device_ids=[args.local_rank])
        if args.local_rank == 0:
            with torch.no_grad():
                for node in loader:
                    z, mu, logvar = encoder(node)
                    a = decoder(z)
                    b = decoder(mu)
        """),
    # dev7 u022 (github.com/M-6J/test main_ddp.py@053ba9f): DDP(..., broadcast_buffers=False) and a
    # rank-0 eval_training under @torch.no_grad(): no buffer broadcast, no backward: local.
    "control: broadcast_buffers=False, a rank-0 forward under no_grad": (
        "ddp-forward-on-one-rank", set(), """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        @torch.no_grad()
        def eval_training(loader, model):
            for images, labels in loader:
                outputs = model(images)

        def main_worker(rank, net, loader):
            model = DDP(net, device_ids=[rank], broadcast_buffers=False)
            if rank == 0:
                eval_training(loader, model)
        """),
    "sibling: broadcast_buffers=False, a rank-0 forward with grad on (a backward may follow)": (
        "ddp-forward-on-one-rank", {(11, "warning")}, """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        def eval_training(loader, model):
            for images, labels in loader:
                outputs = model(images)

        def main_worker(rank, net, loader):
            model = DDP(net, device_ids=[rank], broadcast_buffers=False)
            if rank == 0:
                eval_training(loader, model)
        """),
    # dev7 u017 (github.com/FelixCaae/FGOVD main_ddp.py@bf332e9): the file tests for the wrapper
    # itself and reads the attribute on the bare model only in the other arm.
    "control: the bare model's attribute in the else of hasattr(model, 'module')": (
        "wrapper-method-call", set(), """
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(model, device_ids=[rank], output_device=rank)
        if hasattr(model, 'module'):
            queries = model.module.text_embedder(inputs)
        else:
            queries = model.text_embedder(inputs)
        """),
    "sibling: the attribute read in the wrapper's own arm of the test": (
        "wrapper-method-call", {(5, "error")}, """
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(model, device_ids=[rank], output_device=rank)
        if hasattr(model, 'module'):
            queries = model.text_embedder(inputs)
        """),
    # dev7 u020 (github.com/IFBigData/GRIT main_ddp.py@6eb25f2): `model.backbone` read at the top of
    # the function, the DDP wrapper built twelve lines below (no loop brings it back).
    "control: the attribute read before the wrapper is built": (
        "wrapper-method-call", set(), """
        import torch

        def train_and_test_ddp(args, model, local_rank):
            optimizer = torch.optim.Adam(model.backbone.parameters(), lr=args.lr)
            model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
            return optimizer
        """),
    "sibling: the same read after the wrapper is built": (
        "wrapper-method-call", {(5, "error")}, """
        import torch

        def train_and_test_ddp(args, model, local_rank):
            model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
            optimizer = torch.optim.Adam(model.backbone.parameters(), lr=args.lr)
            return optimizer
        """),
    # dev7 u024 (github.com/MyXPC/HCL_TMM2023 main_ddp.py@09dc04a): the reference is the unwrapped
    # model on each wrapping path, the bare name only where nothing wrapped it; the bare name's
    # attributes are read only in the `else` of `if args.gpus > 1 or args.distributed:`.
    "control: the wrapped paths excluded by the file's own tests": (
        "wrapper-method-call", set(), """
        from torch.nn.parallel import DistributedDataParallel as DDP

        def main(args, net1):
            if args.distributed:
                net1 = DDP(net1.cuda(), device_ids=[args.local_rank])
            elif args.gpus > 1:
                net1 = torch.nn.DataParallel(net1)
            if args.distributed:
                net1_ref = net1.module
            elif args.gpus > 1:
                net1_ref = net1.module
            else:
                net1_ref = net1
            if args.gpus > 1 or args.distributed:
                params = net1_ref.classifier_concat.parameters()
            else:
                params = net1.classifier_concat.parameters()
            return params
        """),
    "sibling: the bare name's attribute read where it may be the wrapper": (
        "wrapper-method-call", {(13, "warning")}, """
        from torch.nn.parallel import DistributedDataParallel as DDP

        def main(args, net1):
            if args.distributed:
                net1 = DDP(net1.cuda(), device_ids=[args.local_rank])
            elif args.gpus > 1:
                net1 = torch.nn.DataParallel(net1)
            if args.distributed:
                net1_ref = net1.module
            else:
                net1_ref = net1
            if args.gpus > 1 or args.distributed:
                params = net1_ref.classifier_concat.parameters()
            return params
        """),
    # dev7 u012 (github.com/CVML-Detection/DETR-pytorch main_ddp.py@14147ce): the free port is
    # picked once in the parent and handed to every spawned worker as an argument.
    "control: MASTER_PORT from a parameter mp.spawn hands down": (
        "master-port-per-process", set(), """
        import os
        import socket
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def find_free_port():
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(('', 0))
            return str(s.getsockname()[1])

        def main_worker(rank, world_size, master_addr, master_port):
            os.environ['MASTER_ADDR'] = master_addr
            os.environ['MASTER_PORT'] = master_port
            dist.init_process_group(backend='nccl', rank=rank, world_size=world_size)

        if __name__ == "__main__":
            mp.spawn(main_worker, args=(4, 'localhost', find_free_port()), nprocs=4)
        """),
    # (the same program, the pick moved into the worker: the cases below the table)
    # dev7 u017 (github.com/FelixCaae/FGOVD main_ddp.py@bf332e9): the loader's call spans six lines;
    # the warning is said at its `num_workers=8`.
    "spawned worker's DataLoader with workers: the warning at num_workers": ("spawn-num-workers", {(6, "warning")}, """
        import torch
        import torch.multiprocessing as mp

        def main(rank, world_size):
            train_dataloader = torch.utils.data.DataLoader(
                dataset, batch_size=8, sampler=train_sampler, num_workers=8, pin_memory=True)

        if __name__ == "__main__":
            mp.spawn(main, args=(2,), nprocs=2)
        """),
    # dev7 u002 (github.com/AbdiMohammad/SNR-Adaptive-Bottlefit main_ddp.py@371958b): on resume the
    # trainer calls its own `_load_snapshot(self)` with the snapshot's path.
    "a method of the file's class called with an argument it does not take": (
        "unexpected-argument", {(6, "error")}, """
        import os

        class Trainer:
            def __init__(self, output_dir):
                if os.path.exists(output_dir + "snapshot.pt"):
                    self._load_snapshot(output_dir + "snapshot.pt")

            def _load_snapshot(self):
                self.epochs_run = 0

        trainer = Trainer("out/")
        """),
    # dev7 u025 (github.com/Niax23/Reaction-Reasoning-Network main_ddp.py@c8ed800): spawn passes the
    # process index first, then four values, to a worker that takes four in all.
    "mp.spawn's args do not fit the worker's parameters": ("unexpected-argument", {(9, "error")}, """
        import torch.multiprocessing as torch_mp

        def main_worker(worker_idx, args, log_dir, model_dir):
            pass

        if __name__ == "__main__":
            torch_mp.spawn(
                main_worker, nprocs=args.num_gpus,
                args=(args, log_dir, model_dir, token_dir)
            )
        """),
    # dev7 u026 (github.com/NicholasKiefer/In-Time-Over-Parameterization main_ddp.py@188a5ca): every
    # rank evaluates each epoch, then rank 0 alone reloads the best weights and evaluates the DDP model.
    "a function run on every rank, and once more on rank 0 with the DDP model": (
        "ddp-forward-on-one-rank", {(14, "warning")}, """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        def evaluate(args, model, loader):
            with torch.no_grad():
                return sum(model(x).argmax(1).eq(y).sum() for x, y in loader)

        def main(args, net):
            model = DDP(net, device_ids=[args.local_rank])
            for epoch in range(args.epochs):
                acc_val = evaluate(args, model, valid_loader)
            if args.rank == 0:
                model.load_state_dict(torch.load("best.pt"))
                acc_test = evaluate(args, model, test_loader)
        """),
    # dev7 u029 (github.com/PhilipBotros/diloco main_ddp.py@1a1fc6d): the spawned worker's first call
    # is a set-up helper whose init_process_group gets no rank, and nothing sets RANK.
    "init_process_group without a rank in a helper only the spawned worker calls": (
        "init-without-rank-under-spawn", {(5, "error")}, """
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def setup():
            dist.init_process_group(backend="nccl")

        def train(rank, world_size):
            setup()

        if __name__ == "__main__":
            mp.spawn(train, args=(2,), nprocs=2)
        """),
    # dev7 u011 (github.com/ByUnal/mrl-clip-training-daquar main_ddp.py@f6a4f1c): after
    # `mp.spawn(..., join=True)` the parent loads rank 0's checkpoint and saves the final model, once.
    "control: the parent of mp.spawn loads and saves once": ("save-all-ranks", set(), """
        import torch
        import torch.multiprocessing as mp

        def train_ddp(rank, world_size):
            if rank == 0:
                torch.save(model.state_dict(), 'final.pth')

        def train_wrapper(world_size):
            mp.spawn(train_ddp, args=(world_size,), nprocs=world_size, join=True)
            checkpoint = torch.load('final.pth')
            model.load_state_dict(checkpoint)
            torch.save({'model_state_dict': model.state_dict()}, 'mrl_clip_vqa.pth')

        if __name__ == "__main__":
            train_wrapper(2)
        """),
    "sibling: the same save in the spawned worker, unguarded": ("save-all-ranks", {(5, "warning")}, """
        import torch
        import torch.multiprocessing as mp

        def train_ddp(rank, world_size):
            torch.save(model.state_dict(), 'final.pth')

        def train_wrapper(world_size):
            mp.spawn(train_ddp, args=(world_size,), nprocs=world_size, join=True)

        if __name__ == "__main__":
            train_wrapper(2)
        """),
    # dev7 u035 (github.com/TrinityNeo99/Zoom-Transformer main_ddp.py@5e5f8c4): `if save_model:` where every
    # call passes save_model=True; dev7 u041 (github.com/YujieLou/NeRF main_ddp.py@a484b32): an early return
    # on a command-line option of the file; heldout10 u008 (github.com/AI-4-atmosphere-remote-sensing/
    # cloud-phase-prediction train_ddp.py): `if hasattr(model, 'module'):`. Each is decided alike on every rank.
    "save under a flag every call passes as a literal": ("save-all-ranks", {(8, "warning")}, """
        import torch
        import torch.distributed as dist

        def train(model, epoch, save_model=True):
            dist.all_reduce(loss)
            if save_model:
                state_dict = model.state_dict()
                torch.save(state_dict, f"model-{epoch}.pt")

        dist.init_process_group("nccl")
        for epoch in range(10):
            train(model, epoch, save_model=True)
        """),
    "save after an early return on a command-line option": ("save-all-ranks", {(11, "warning")}, """
        import argparse
        import torch
        import torch.distributed as dist

        def train():
            parser = argparse.ArgumentParser()
            parser.add_argument("--render_only", action='store_true', help='only test')
            args = parser.parse_args()
            if args.render_only:
                return
            torch.save({'model_state_dict': model.module.state_dict()}, path)

        dist.init_process_group("nccl")
        train()
        """),
    "save under a test of the model's type": ("save-all-ranks", {(7, "warning"), (9, "warning")}, """
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        train_model(model)
        if hasattr(model, 'module'):
            torch.save(model.module.state_dict(), path + 'model.pth')
        else:
            torch.save(model.state_dict(), path + 'model.pth')
        """),
    "control: the same option set on rank 0 alone": ("save-all-ranks", set(), """
        import argparse
        import torch
        import torch.distributed as dist

        def train():
            parser = argparse.ArgumentParser()
            parser.add_argument("--save", action='store_true')
            args = parser.parse_args()
            args.save = dist.get_rank() == 0
            if not args.save:
                return
            torch.save({'model_state_dict': model.module.state_dict()}, path)

        dist.init_process_group("nccl")
        train()
        """),
    "control: a flag no parser of this file defines": ("save-all-ranks", set(), """
        import torch
        import torch.distributed as dist

        def main(args):
            dist.init_process_group("nccl")
            if args.save_ckpt:
                torch.save(model.state_dict(), path)

        main(get_args())
        """),
    # dev7 u020 (github.com/IFBigData/GRIT main_ddp.py@6eb25f2): the device string built from the global
    # rank first; dev7 u014 (github.com/ChingHuanChiu/Named-Entity-Recognition main_ddp.py@6e21f50):
    # `.to(dist.get_rank())` where the tensor is used
    "device string from the global rank, built into a name first": ("device-from-global-rank", {(6, "warning")}, """
        import torch
        import torch.distributed as dist

        def varsize_tensor_all_gather(tensor):
            cuda_device = f'cuda:{dist.get_rank()}'
            size_tens = torch.tensor(
                [tensor.shape[0]], dtype=torch.int64, device=cuda_device)
        """),
    "the global rank asked for where the tensor moves": ("device-from-global-rank", {(5, "warning")}, """
        import torch.distributed as dist

        def validate(y_val):
            dist.init_process_group("nccl")
            return gather_all(y_val.to(dist.get_rank()))
        """),
    "control: the device string from the local rank": ("device-from-global-rank", set(), """
        import os
        import torch

        def varsize_tensor_all_gather(tensor):
            cuda_device = f'cuda:{int(os.environ["LOCAL_RANK"])}'
            size_tens = torch.tensor(
                [tensor.shape[0]], dtype=torch.int64, device=cuda_device)
        """),
    # dev7 u003 (github.com/Ahmedhasssan/IM_SNN-SpQuant_SNN main_ddp.py@7daefdd): the spawn index
    # is the rank and the world size is the number of processes this one machine's spawn starts.
    "control: rank from the spawn index, world size the spawn's nprocs": ("rank-from-local-rank", set(), """
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def main():
            mp.spawn(main_worker, nprocs=args.nprocs, args=(args.nprocs, args))

        def main_worker(local_rank, nprocs, args):
            dist.init_process_group(backend='nccl', init_method='tcp://127.0.0.1:23457',
                                    world_size=args.nprocs, rank=local_rank)
        """),
    "sibling: the same rank with a world size of several nodes": ("rank-from-local-rank", {(9, "warning")}, """
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def main():
            mp.spawn(main_worker, nprocs=args.nprocs, args=(args.nprocs, args))

        def main_worker(local_rank, nprocs, args):
            dist.init_process_group(backend='nccl', init_method='tcp://10.0.0.1:23457',
                                    world_size=args.nprocs * args.nodes, rank=local_rank)
        """),
    # dev7 u010 (github.com/BrianZCS/distributed_pytorch main_ddp.py@91638f7): a course exercise
    # that runs one epoch, so the DistributedSampler's order never needs a new seed.
    "control: one epoch as written (range(1))": ("sampler-no-set-epoch", set(), """
        from torch.utils.data import DataLoader, DistributedSampler

        sampler = DistributedSampler(train_set)
        train_loader = DataLoader(train_set, batch_size=64, sampler=sampler)
        for epoch in range(1):
            for x, y in train_loader:
                step(x, y)
        """),
    # dev7 u035 (github.com/TrinityNeo99/Zoom-Transformer main_ddp.py@5e5f8c4): a DataLoader call over
    # several lines: the error is said at its `shuffle=True`.
    "shuffle=True beside a sampler: the error at the argument": ("shuffle-with-sampler", {(6, "error")}, """
        import torch

        train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset)
        loader = torch.utils.data.DataLoader(
            dataset=train_dataset,
            shuffle=True,
            sampler=train_sampler,
            batch_size=32)
        """),
    "control: shuffle on the sampler, not on the loader": ("shuffle-with-sampler", set(), """
        import torch

        train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset, shuffle=True)
        loader = torch.utils.data.DataLoader(
            dataset=train_dataset,
            sampler=train_sampler,
            batch_size=32)
        """),
}


CASES["control: the parent of mp.spawn loads once"] = (
    "torch-load-no-map-location", set(), CASES["control: the parent of mp.spawn loads and saves once"][2])
CASES["sibling: the load in the spawned worker"] = ("torch-load-no-map-location", {(5, "warning")}, (
    CASES["sibling: the same save in the spawned worker, unguarded"][2].replace(
        "torch.save(model.state_dict(), 'final.pth')", "model.load_state_dict(torch.load('final.pth'))")))
CASES["sibling: the same loop over two epochs"] = ("sampler-no-set-epoch", {(3, "warning")}, (
    CASES["control: one epoch as written (range(1))"][2].replace("range(1)", "range(2)")))
CASES["control: rank 0 evaluates the unwrapped model"] = ("ddp-forward-on-one-rank", set(), (
    CASES["a function run on every rank, and once more on rank 0 with the DDP model"][2].replace(
        "acc_test = evaluate(args, model, test_loader)", "acc_test = evaluate(args, model.module, test_loader)")))
CASES["control: the helper hands the worker's rank on"] = ("init-without-rank-under-spawn", set(), (
    CASES["init_process_group without a rank in a helper only the spawned worker calls"][2]
    .replace("def setup():", "def setup(rank, world_size):")
    .replace('backend="nccl")', 'backend="nccl", rank=rank, world_size=world_size)')
    .replace("    setup()", "    setup(rank, world_size)")))
CASES["control: the worker takes the index and every value of args"] = ("unexpected-argument", set(), (
    CASES["mp.spawn's args do not fit the worker's parameters"][2].replace("log_dir, model_dir):", "log_dir, model_dir, token_dir):")))
OWN_METHOD = CASES["a method of the file's class called with an argument it does not take"][2]
CASES["control: the method takes the path"] = ("unexpected-argument", set(), OWN_METHOD.replace(
    "def _load_snapshot(self):", "def _load_snapshot(self, path):"))
# lint heldout26d u010 (a trainer module whose Trainer other scripts build): a plain class, no base and no subclass
# here, is what its importers build, so the call is wrong on every instance; a class with a base stays unsaid
# (tests/controls/test_controls_lintB28.py)
CASES["sibling: the plain class is not built here (its importers build it as it is)"] = (
    "unexpected-argument", {(6, "error")}, OWN_METHOD.replace('trainer = Trainer("out/")', ""))
CASES["control: a stub a subclass fills in"] = ("unexpected-argument", set(), OWN_METHOD.replace(
    "self.epochs_run = 0", "raise NotImplementedError").replace('trainer = Trainer("out/")', ""))
CASES["control: the spawned worker's loader keeps its workers"] = ("spawn-num-workers", set(), (
    CASES["spawned worker's DataLoader with workers: the warning at num_workers"][2].replace(
        "pin_memory=True)", "pin_memory=True, persistent_workers=True)")))
CONTROL_PORT = CASES["control: MASTER_PORT from a parameter mp.spawn hands down"][2]
CASES["sibling: the spawned worker picks the port itself"] = ("master-port-per-process", {(13, "error")}, (
    CONTROL_PORT.replace("master_addr, master_port):", "master_addr):")
    .replace("= master_port", "= find_free_port()").replace("'localhost', find_free_port())", "'localhost')")))


@pytest.mark.parametrize("name", list(CASES))
def test_dev7_verdicts(name):
    rule, expected, code = CASES[name]
    text = textwrap.dedent(code).lstrip("\n")
    found = {(d.line, d.severity) for d in engine.lint_source(text, "train.py") if d.rule == rule}
    assert found == expected, [d.message for d in engine.lint_source(text, "train.py") if d.rule == rule]
