"""lint's recall on the warnings lint heldout16 missed, and its precision on the ones its readers called
false (issue 41; 69 whole scripts of the `train_distributed.py` and `dist_train.py` listings): each a few of
the script's own lines (source in the comment), its control (the healthy program most like it) and, where
another verdict is near, its sibling. Each case: its rule, its line, the severity lint must give it (None:
the rule is silent there, on every line)."""

from __future__ import annotations

import textwrap

import pytest

from gpudoctor.linter import engine

# github.com/lijiayu0725/fcos-simple dist_train.py (lint heldout16 u045; LESA_classification's dist_train.py,
# u011, the same in val() and train()): the group is started only where WORLD_SIZE says several processes,
# and the step all-reduces its losses with no test: a plain `python dist_train.py` raises there. Said once,
# at the first call the path reaches (val() runs after train() on the same path)
FCOS = """
        import os
        import torch.distributed as dist

        def train(model, loader):
            for batch in loader:
                loss = model(batch).mean()
                loss.backward()
                dist.all_reduce(loss)

        def val(model, loader):
            for batch in loader:
                dist.all_reduce(model(batch).mean())

        def main(args, model, loader):
            args.distributed = int(os.environ.get("WORLD_SIZE", 1)) > 1
            if args.distributed:
                dist.init_process_group(backend="nccl", init_method="env://")
            ELSE
            for epoch in range(args.epochs):
                train(model, loader)
                val(model, loader)
        """

# github.com/ShuoSIr7/AI6103_EfficientViT dist_train.py (lint heldout16 u023; DeiT's init_distributed_mode):
# the helper returns, with no group, where no launcher set RANK, and its caller asks the group's size next
DEIT = """
        import os
        import torch.distributed as dist

        def init_distributed_mode(args):
            if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
                args.rank = int(os.environ["RANK"])
            else:
                print("Not using distributed mode")
                args.distributed = False
                return
            dist.init_process_group(backend="nccl", init_method="env://")

        def main(args):
            if args.distributed:
                init_distributed_mode(args)
                USE
        """

# github.com/chuber11/NMTGMinor train_distributed.py (lint heldout16 u008) and github.com/DylanLIiii/reb-maxsup
# dist_train.py (u012, torchvision's classification reference): a spawned worker loads its data files and its
# cached dataset; the data were written from the CPU by a preparation step, unlike a checkpoint
LOAD = """
        import torch
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def main(rank, opt):
            dist.init_process_group("nccl", rank=rank, world_size=opt.world_size)
            LOAD

        if __name__ == "__main__":
            mp.spawn(main, args=(opt,), nprocs=2)
        """

# github.com/3SAILab/S train_distributed.py (lint heldout15 u013; u034 and u055 the same, and lint heldout14
# u017): MASTER_PORT falls back to a literal, in a program that spawns its processes itself, where no launcher
# sets it: the fallback is the port of every run
FALLBACK = """
        import os
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def setup(rank, world_size):
            os.environ["MASTER_ADDR"] = os.environ.get("MASTER_ADDR", "localhost")
            os.environ["MASTER_PORT"] = VALUE
            dist.init_process_group("nccl", rank=rank, world_size=world_size)

        def train(rank, world_size):
            setup(rank, world_size)

        if __name__ == "__main__":
            LAUNCH
        """
SPAWN = "mp.spawn(train, args=(2,), nprocs=2)"
TORCHRUN = 'train(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))'


def fallback(port: str = 'os.environ.get("MASTER_PORT", "12355")', launch: str = SPAWN) -> str:
    return FALLBACK.replace("VALUE", port).replace("LAUNCH", launch)


CASES = {
    "a collective reached on the path that started no group": (
        "dist-without-init", 8, "warning", FCOS.replace("ELSE", "pass")),
    "control: the other path leaves": (
        "dist-without-init", 8, None, FCOS.replace("ELSE", 'else:\n                raise SystemExit("use torchrun")')),
    "sibling: the other path starts its own group": (
        "dist-without-init", 8, None, FCOS.replace("ELSE", 'else:\n                dist.init_process_group("gloo")')),
    "a choice of rendezvous inside the flag's `if`: the flag still decides (lint heldout12 u033)": (
        "dist-without-init", 8, "warning", FCOS.replace("ELSE", "pass").replace(
            '                dist.init_process_group(backend="nccl", init_method="env://")',
            '                if args.dist_url.startswith("tcp://"):\n'
            '                    dist.init_process_group("nccl", init_method=args.dist_url)\n'
            '                else:\n'
            '                    dist.init_process_group(backend="nccl", init_method="env://")')),
    "a helper that returns without a group, and its caller asks the group's size": (
        "dist-without-init", 16, "warning", DEIT.replace("USE", "num_tasks = dist.get_world_size()")),
    "control: the caller tests the flag the helper resets": (
        "dist-without-init", 17, None,
        DEIT.replace("USE", "if args.distributed:\n                    num_tasks = dist.get_world_size()")),
    "control: a function that answers a question before its start (axolotl's is_main_process, v3 control)": (
        "dist-without-init", 16, None, DEIT.replace("USE", "num_tasks = dist.get_world_size()").replace(
            "                return\n", "                return False\n")),
    "sibling: the helper returns early only where a group exists": (
        "dist-without-init", 16, None, DEIT.replace("USE", "num_tasks = dist.get_world_size()").replace(
            'if "RANK" in os.environ and "WORLD_SIZE" in os.environ:', "if not dist.is_initialized():")),
    "control: a data file's load": ("torch-load-no-map-location", 7, None, LOAD.replace(
        "LOAD", 'dicts = torch.load(opt.data + ".dict.pt")')),
    "control: a cached dataset's load": ("torch-load-no-map-location", 7, None, LOAD.replace(
        "LOAD", "dataset, _ = torch.load(cache_path, weights_only=False)")),
    "sibling: the checkpoint's load": ("torch-load-no-map-location", 7, "warning", LOAD.replace(
        "LOAD", "checkpoint = torch.load(opt.load_from)")),
    "sibling: a checkpoint in the data folder": ("torch-load-no-map-location", 7, "warning", LOAD.replace(
        "LOAD", 'dataset = torch.load(opt.data + "/model_best.pth")')),
    "a literal MASTER_PORT fallback in a program that spawns its processes": (
        "hardcoded-master-port", 7, "warning", fallback()),
    "a default written under a test of MASTER_PORT, in a program that spawns": (
        "hardcoded-master-port", 8, "warning", fallback().replace(
            'os.environ["MASTER_PORT"] = os.environ.get("MASTER_PORT", "12355")',
            'if "MASTER_PORT" not in os.environ:\n                os.environ["MASTER_PORT"] = "12355"')),
    "control: the same fallback where a launcher starts the processes": (
        "hardcoded-master-port", 7, None, fallback(launch=TORCHRUN)),
    "sibling: the fallback is a port picked at run time": (
        "hardcoded-master-port", 7, None, fallback(port='os.environ.get("MASTER_PORT", str(find_free_port()))')),
}


@pytest.mark.parametrize("rule, line, severity, code", list(CASES.values()), ids=list(CASES))
def test_heldout16_warnings(rule, line, severity, code):
    source = textwrap.dedent(code).lstrip("\n")
    found = [(d.line, d.severity) for d in engine.lint_source(source, "train.py") if d.rule == rule]
    # the one diagnostic named; where none is (a control, a sibling with another verdict), none on any line
    assert found == ([(line, severity)] if severity else []), found
