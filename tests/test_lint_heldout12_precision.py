"""lint v4, issue 41: the false diagnostics of lint heldout12 (58 scripts from the
`train_multi_gpu.py` / `train_dist.py` listings, retired to development), read one by one.
Where the rule was wrong, its class is fixed (the path it did not follow, the children it
did not see); each control is a small program written from the real lines (repository and
commit in the comment above it) and sits beside the sibling that must still get the
diagnostic. Each case: the rule, exactly the (line, severity) pairs it must give (empty:
silent), the code."""

from __future__ import annotations

import textwrap

import pytest

from gpudoctor.linter import engine

# github.com/dyzy41/ocr_code train_multi_gpu.py@12486be (lint heldout12 u023, a CRNN trainer):
# `random_sample = True` at the top, the sampler built only `if not random_sample:`.
SHUFFLE = """
        import torch

        random_sample = FLAG

        def main(train_dataset):
            if not random_sample:
                sampler = dataset.randomSequentialSampler(train_dataset, 64)
            else:
                sampler = None
            return torch.utils.data.DataLoader(
                train_dataset, batch_size=64,
                shuffle=True, sampler=sampler)
        """

# github.com/IvanBanny/Places-ResNet train_dist.py@fa13b6c (lint heldout12 u057): the test
# loader is built after training and read by one test() call.
ONCE = """
        import torch.multiprocessing as mp
        from torch.utils.data import DataLoader

        def test(model, test_loader):
            for inputs, labels in test_loader:
                model(inputs)

        def worker(rank, args):
            for epoch in range(args.epochs):
                step(model)
            test_loader = DataLoader(test_set, batch_size=64, num_workers=2, shuffle=False)
            CALL

        if __name__ == "__main__":
            mp.spawn(worker, args=(args,), nprocs=2)
        """

# github.com/bGuenes/sbi_model_comparison train_multi_gpu.py@7255bb5 (lint heldout12 u017): the
# --gpus default comes from device_count(), then CUDA_VISIBLE_DEVICES is set before mp.spawn.
VISIBLE = """
        import os
        import torch
        import torch.multiprocessing as mp

        if __name__ == "__main__":
            available = ','.join(map(str, range(torch.cuda.device_count())))
            gpus = parse(available)
            os.environ['CUDA_VISIBLE_DEVICES'] = gpus
            AFTER
        """

# github.com/Annusha/xmic train_dist.py@3f96c7c (lint heldout12 u037, a Dassl trainer): --local_rank
# taken, the rank read from LOCAL_RANK, a truncated launch note after the help string.
LAUNCH_NOTE = """
        import argparse
        import os

        parser = argparse.ArgumentParser()
        parser.add_argument('--local_rank', default=-1, type=int,
                            help='node rank for distributed training') #python -m torch.distributed.launch --nproc_per_node=
        args = parser.parse_args()
        rank = READ
        """

# github.com/cdforigua05/segment-anything-lithos train_multi_gpu.py@74c483a (lint heldout12 u018):
# the sampler over the dataset built (`train_ds`), the loader over a name nothing binds.
MISMATCH = """
        import torch
        from torch.utils.data import DataLoader

        def main_worker(args):
            train_ds = LithosDataset(args.root)
            OTHER
            train_sampler = torch.utils.data.distributed.DistributedSampler(train_ds)
            return DataLoader(train_dataset, batch_size=8, sampler=train_sampler)
        """

# github.com/IDEA-XL/SubgDiff train_dist.py@890553e (lint heldout12 u056): the set-up call switched
# off by `if 0 and ...`, DDP still built under the option, a resume load after it.
SWITCHED_OFF = """
        import torch

        def setup_dist(args):
            torch.distributed.init_process_group("nccl")

        def main(args):
            if TEST:
                setup_dist(args)
            model = Net().to(args.device)
            if args.distribution:
                model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank])
            ckpt = torch.load(args.resume)
            model.load_state_dict(ckpt["model"])
        """

CASES = {
    "control: the module's constant rules the sampler's arm out: sampler=None": (
        "shuffle-with-sampler", set(), SHUFFLE.replace("FLAG", "True")),
    "sibling: the constant rules the None arm out: a sampler on every path": (
        "shuffle-with-sampler", {(12, "error")}, SHUFFLE.replace("FLAG", "False")),
    "sibling: a sampler or None by an option: a warning naming both paths": (
        "shuffle-with-sampler", {(12, "warning")}, SHUFFLE.replace("FLAG", "args.random_sample")),
    "control: a loader read by one call after training": (
        "spawn-num-workers", set(), ONCE.replace("CALL", "test(model, test_loader)")),
    "sibling: the same loader read by that call every epoch": (
        "spawn-num-workers", {(11, "warning")}, ONCE.replace(
            "CALL", "for epoch in range(3):\n                test(model, test_loader)")),
    "sibling: the loader handed to code lint does not see": (
        "spawn-num-workers", {(11, "warning")}, ONCE.replace("CALL", "trainer.test(model, test_loader)")),
    "control: set after device_count(), then the workers are spawned": (
        "cuda-visible-devices-late", set(), VISIBLE.replace("AFTER", "mp.spawn(main, nprocs=2)")),
    # johnlockejrr/polyscriptor train_multi_gpu.py@006a918 (u030): a launcher of torchrun
    "control: set after device_count(), then torchrun is run": (
        "cuda-visible-devices-late", set(), VISIBLE.replace(
            "AFTER", "import subprocess\n            subprocess.run(['torchrun', 'train.py'], check=True)")),
    "sibling: set after device_count(), and this process goes on alone": (
        "cuda-visible-devices-late", {(8, "warning")}, VISIBLE.replace("AFTER", "torch.cuda.set_device(0)")),
    "control: the flag taken, the rank read from LOCAL_RANK, a note after the help string": (
        "deprecated-launch", set(), LAUNCH_NOTE.replace("READ", "int(os.environ['LOCAL_RANK'])")),
    "sibling: the flag taken and read: the note says how it must be started": (
        "deprecated-launch", {(6, "warning")}, LAUNCH_NOTE.replace("READ", "args.local_rank")),
    "control: the loader reads a name nothing binds (NameError, not a second dataset)": (
        "sampler-dataset-mismatch", set(), MISMATCH.replace("OTHER", "pass")),
    "sibling: the loader reads a second dataset the file builds": (  # a warning: lengths not shown (lintA22)
        "sampler-dataset-mismatch", {(8, "warning")}, MISMATCH.replace(
            "OTHER", "train_dataset = LithosDataset(args.val_root)")),
    "control: the group's set-up switched off by `if 0 and ...`: one process": (
        "torch-load-no-map-location", set(), SWITCHED_OFF.replace("TEST", "0 and args.distribution")),
    "sibling: the same set-up run under the option: every rank loads": (
        "torch-load-no-map-location", {(12, "warning")}, SWITCHED_OFF.replace("TEST", "args.distribution")),
}


@pytest.mark.parametrize("name", list(CASES))
def test_heldout12_precision_verdicts(name):
    rule, expected, code = CASES[name]
    text = textwrap.dedent(code).lstrip("\n")
    found = [d for d in engine.lint_source(text, "train.py") if d.rule == rule]
    assert {(d.line, d.severity) for d in found} == expected, [(d.line, d.severity, d.message) for d in found]


# github.com/DuBianJun-007/PhyMeT train_dist.py@869fb76 (lint heldout12 u052), cut before its
# `fit_one_epoch`: the epoch loop hands the loader to a function the file neither defines nor imports.
HANDED = """
        from torch.utils.data import DataLoader, DistributedSampler
        IMPORT

        def main(dataset):
            sampler = DistributedSampler(dataset)
            loader = DataLoader(dataset, sampler=sampler)
            for epoch in range(10):
                fit_one_epoch(model, loader)
        """


@pytest.mark.parametrize("imported, says", [("", "neither defined nor imported in this file"),
                                             ("from engine import fit_one_epoch", "comes from another module")])
def test_a_loader_handed_to_code_not_in_view_says_where_that_code_is(imported, says):
    text = textwrap.dedent(HANDED.replace("IMPORT", imported)).lstrip("\n")
    [d] = [d for d in engine.lint_source(text, "train.py") if d.rule == "sampler-no-set-epoch"]
    assert says in d.message and d.severity == "warning", d.message
