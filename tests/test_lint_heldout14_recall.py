"""lint's recall on the warnings lint heldout14 missed (issue 41; 60 whole scripts of the `ddp.py` and
`multi_gpu.py` listings): each a few of the script's own lines (source in the comment), its control (the
healthy program most like it) and, where another verdict is near, its sibling. Each case: its rule, its
line, the severity lint must give it (None: the rule is silent there, on every line)."""

from __future__ import annotations

import textwrap

import pytest

from gpudoctor.linter import engine

# github.com/bohanhou14/SAMOYEDS ddp.py (lint heldout14 u031; u013, u019 and botkop/lark's `size = 2` the same):
# a number of GPU workers written into the file, handed to mp.spawn: the file is the launch (the reader asked
# for world-size-hardcoded; the readers of nine other parts passed the same shape over)
SPAWNED = """
        import torch
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def run_inference(rank, world_size):
            dist.init_process_group(BACKEND, rank=rank, world_size=world_size)
            PLACE

        def main():
            world_size = COUNT
            mp.spawn(run_inference, args=(world_size,), nprocs=world_size, join=True)
        """

# github.com/MMinasyan/hy-models ddp.py (lint heldout14 u010): torchrun decides the world, the file says 2;
# each process's GPU is its LOCAL_RANK and nothing sets the current device (the reader asked for
# nccl-no-set-device too: lint leaves a torchrun launch its benefit, see the rule's page)
TORCHRUN = """
        import os
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        def setup(rank, world_size):
            dist.init_process_group("nccl", rank=rank, world_size=world_size)

        def main():
            world_size = SIZE
            rank = int(os.getenv('LOCAL_RANK', '0'))
            setup(rank, world_size)
            device = torch.device(f'cuda:{rank}')
            model = HyCorr(config).to(rank)
            ddp_model = DDP(model, device_ids=[device.index])
        """

# github.com/Leo-AO-99/CSYE7105_FINAL ddp.py (lint heldout14 u008; KoDohwan's multi_gpu.py u051 and heldout9's
# MNIST trainer the same): the author's own address as the rendezvous of processes mp.spawn starts here
ADDRESS = """
        import torch
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def train(rank, world_size):
            dist.init_process_group(backend='nccl', world_size=world_size, rank=rank, init_method="URL")
            torch.cuda.set_device(rank)

        if __name__ == "__main__":
            mp.spawn(train, args=(n_gpus,), nprocs=n_gpus)
        """

# the same rendezvous in a file each machine's rank starts by hand: the master's address is the file's to name
BY_HAND = """
        import sys
        import torch.distributed as dist

        dist.init_process_group(backend='gloo', init_method="tcp://10.1.1.20:23456", rank=int(sys.argv[1]),
                                world_size=2)
        """

# github.com/alibaba/hap ddp.py (lint heldout14 u025): `Process(target=run)` per GPU, the model on
# `.cuda(local_rank)`; CUDA_VISIBLE_DEVICES is named only in a commented-out check, and autocast's
# device_type="cuda" puts nothing on a GPU
HAP = """
        import sys
        import torch
        import torch.multiprocessing as mp
        from torch.nn.parallel import DistributedDataParallel as DDP

        def run(global_rank, local_rank):
            import torch.distributed as dist
            dist.init_process_group('nccl', rank=global_rank)
            VISIBLE
            model = get_model().cuda(local_rank)
            dmodel = DDP(model, device_ids=[local_rank])
            with torch.autocast(device_type="cuda"):
                loss = dmodel(x, y)

        if __name__ == '__main__':
            ranks = [int(x) for x in sys.argv[1].split(',')]
            # if torch.cuda.device_count() != len(ranks):
            #     print("forget to set CUDA_VISIBLE_DEVICES")
            for local_rank, global_rank in enumerate(ranks):
                mp.Process(target=run, args=(global_rank, local_rank)).start()
        """

# github.com/crj1998/CoFiexp ddp.py (lint heldout14 u041; crj1998/SR u042 the same): the attribute named
# local_rank is rewritten with the global rank, and then picks the GPU
COFI = """
        import os
        import torch
        import torch.distributed as dist

        def main(args):
            args.local_rank = int(os.environ["LOCAL_RANK"])
            if args.local_rank == -1:
                device = torch.device('cuda', args.gpu)
            else:
                dist.init_process_group(backend='nccl')
                REWRITE
                device = torch.device('cuda', args.local_rank)
        """

# github.com/Zephyr271828/DDP-for-NC ddp.py (lint heldout14 u022): the loader is handed to an imported train()
# every epoch, and the set_epoch line is commented out; an analysis pass reads another loader
NC = """
        import torch
        from torch.utils.data.distributed import DistributedSampler
        from utils import train, analysis

        def main(rank, world_size):
            train_loader = torch.utils.data.DataLoader(
                dataset=train_set,
                sampler=DistributedSampler(train_set, num_replicas=world_size, rank=rank))
            analysis_loader = torch.utils.data.DataLoader(
                dataset=train_set,
                sampler=DistributedSampler(train_set, num_replicas=world_size, rank=rank))
            for epoch in range(1, epochs + 1):
                EPOCH
                train(ddp_model, criterion, train_loader, optimizer, epoch)
                analysis(train_graphs, ddp_model, analysis_loader, epoch)
        """

# github.com/alex4727/stable-diffusion multi_gpu.py (lint heldout14 u056), a sampling script: the wrappers are
# handed to a helper that returns `.module`; the DDP branch samples on each rank's own GPU, the DP one on one GPU
PEEL = """
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        from torch.nn import DataParallel as DP

        def peel_model(model):
            if isinstance(model, DP) or isinstance(model, DDP):
                model = model.module
            return model

        def run(rank, opt):
            model = load_model_from_config(config, opt.ckpt)
            if opt.DDP:
                model = peel_model(DDP(model, device_ids=[rank]))
            elif opt.DP:
                model = peel_model(DP(model, device_ids=[0, 1]))
            samples = model.sample(prompt)
        """

# github.com/IDEA-XL/SubgDiff train_dist.py (lint heldout12 u056): the distributed path is forced off
# (`args.distribution = False`) and its set_epoch line commented out; the loader restarts endlessly
SUBGDIFF = """
        import torch
        from torch.utils.data import DataLoader

        def main(args):
            FLAG
            if args.distribution:
                train_sampler = torch.utils.data.distributed.DistributedSampler(train_set)
                train_iterator = inf_iterator(DataLoader(train_set, 32, shuffle=False, sampler=train_sampler))
            for it in range(start_iter, max_iters + 1):
                # train_sampler.set_epoch(it)
                batch = next(train_iterator)
        """

CASES = {
    "control: a sampler on a path the script forces off": (
        "sampler-no-set-epoch", 7, None, SUBGDIFF.replace("FLAG", "args.distribution = False")),
    "sibling: the same path left to the command line": (
        "sampler-no-set-epoch", 7, "warning", SUBGDIFF.replace("FLAG", "pass")),
    "a DataParallel wrapper handed to a helper that returns its .module": (
        "dataparallel-unwrapped-at-once", 15, "warning", PEEL),
    "control: a helper that returns the wrapper": (
        "dataparallel-unwrapped-at-once", 15, None, PEEL.replace("model = model.module", "model.eval()")),
    "sibling: the DDP branch of a program that trains, flagged too": (
        "dataparallel-unwrapped-at-once", 13, "warning",
        PEEL.replace("elif opt.DP:\n                model = peel_model(DP(model, device_ids=[0, 1]))",
                     "pass").replace("samples = model.sample(prompt)", "model(x).sum().backward()")),
    # lintA24: an NCCL group's spawned literal is how many GPUs the job needs (lint heldout22b u013)
    "a literal count of NCCL workers the file spawns itself": (
        "world-size-hardcoded", 10, "warning",
        SPAWNED.replace("BACKEND", '"nccl"').replace("PLACE", "sd.to(rank)").replace("COUNT", "2")),
    "control: a literal count of gloo workers the file spawns itself": (
        "world-size-hardcoded", 10, None,
        SPAWNED.replace("BACKEND", '"gloo"').replace("PLACE", "pass").replace("COUNT", "2")),
    "a literal world size where torchrun decides it": (
        "world-size-hardcoded", 10, "warning", TORCHRUN.replace("SIZE", "2")),
    "control: the launcher's WORLD_SIZE": (
        "world-size-hardcoded", 10, None,
        TORCHRUN.replace("SIZE", "int(os.environ['WORLD_SIZE'])")),
    "sibling: its GPU picked by LOCAL_RANK under torchrun, the launch not in view": (
        "nccl-no-set-device", 7, None, TORCHRUN.replace("SIZE", "2")),
    "a spawned worker's literal tcp:// address": (
        "hardcoded-init-method-address", 6, "warning", ADDRESS.replace("URL", "tcp://10.1.1.20:23456")),
    "control: the loopback": ("hardcoded-init-method-address", 6, None, ADDRESS.replace("URL", "tcp://127.0.0.1:23456")),
    "sibling: ranks started by hand on each machine": ("hardcoded-init-method-address", 4, None, BY_HAND),
    # lintA28: the model and DDP on cuda(local_rank), autocast names a kind: nothing on the current device
    "control: Process workers; CUDA_VISIBLE_DEVICES only in a comment": (
        "nccl-no-set-device", 8, None, HAP.replace("VISIBLE", "pass")),
    "control: CUDA_VISIBLE_DEVICES set per process": (
        "nccl-no-set-device", 8, None, HAP.replace("VISIBLE", "os.environ['CUDA_VISIBLE_DEVICES'] = str(local_rank)")
        .replace("import sys\n", "import os\nimport sys\n")),
    "local_rank rewritten with the global rank, then the GPU index": (
        "device-from-global-rank", 12, "warning", COFI.replace("REWRITE", "args.local_rank = dist.get_rank()")),
    "control: left the launcher's LOCAL_RANK": ("device-from-global-rank", 12, None, COFI.replace("REWRITE", "pass")),
    "sibling: rewritten in the other arm, not on the way to the use": (
        "device-from-global-rank", 13, None, COFI.replace("REWRITE", "pass").replace(
            "device = torch.device('cuda', args.gpu)",
            "args.local_rank = dist.get_rank()\n                device = torch.device('cuda', args.gpu)")),
    "handed to an imported train() each epoch, set_epoch commented out": (
        "sampler-no-set-epoch", 8, "warning", NC.replace("EPOCH", "#train_sampler.set_epoch(epoch)")),
    "control: set_epoch called": (
        "sampler-no-set-epoch", 8, None, NC.replace("EPOCH", "train_loader.sampler.set_epoch(epoch)")),
}


@pytest.mark.parametrize("rule, line, severity, code", list(CASES.values()), ids=list(CASES))
def test_heldout14_shapes(rule, line, severity, code):
    source = textwrap.dedent(code).lstrip("\n")
    found = [(d.line, d.severity) for d in engine.lint_source(source, "train.py") if d.rule == rule]
    # the one diagnostic named; where none is (a control, a sibling with another verdict), none on any line
    assert found == ([(line, severity)] if severity else []), found
