"""lint's warnings on lint heldout16, where its readers called them false or missed them (issue 41;
69 whole scripts of the `train_distributed.py` and `dist_train.py` listings): each a few of the script's own lines (source in the comment),
its control (the healthy program most like it) and, where
another verdict is near, its sibling. Each case: its rule, its line, the severity lint must give it (None:
the rule is silent there, on every line). The dist-without-init cases of the same branch were taken out with the
widening they tested: on lint heldout17 (fresh) it gave 4 new warnings, all wrong by a judge's reading."""

from __future__ import annotations

import textwrap

import pytest

from gpudoctor.linter import engine

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
