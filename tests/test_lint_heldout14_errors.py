"""lint's errors on the shapes lint heldout14 missed or overstated (issue 41; 60 scripts of the `ddp.py`
and `multi_gpu.py` listings): each a few of the script's own lines (source in the comment), its control
(the healthy program most like it) and, where another verdict is near, its sibling. Each case: its rule
and every (line, severity) lint must give for it (empty: the rule is silent on every line)."""

from __future__ import annotations

import textwrap

import pytest

from gpudoctor.linter import engine

# github.com/Sukruthmothakapally/Audio-Emotion-Classifier-with-Deep-Learning-and-Parallel-Computing
# ddp.py (lint heldout14 u016): the main block calls train() with names only its parameters have
MAIN_CALL = """
        import torch
        import torch.distributed as dist

        def train(rank, world_size, train_loader, num_classes):
            dist.init_process_group("gloo", rank=rank, world_size=world_size)
            return len(train_loader), num_classes

        if __name__ == "__main__":
            BIND
            train(rank, world_size, train_loader, num_classes)
        """

# github.com/amin-ally/Daily_projects ddp.py (lint heldout14 u026): the spawned worker reads `dataset`,
# built nowhere, and `DataLoader`, never imported: two causes, each its own error
WORKER = """
        import torch
        import torch.distributed as dist
        from torch.utils.data.distributed import DistributedSampler

        def train(rank, world_size):
            dist.init_process_group("nccl", rank=rank, world_size=world_size)
            classes = len(dataset.classes)
            sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank)
            loader = LOADER(dataset, batch_size=32, sampler=sampler)

        if __name__ == "__main__":
            torch.multiprocessing.spawn(train, args=(2,), nprocs=2)
        """

# github.com/KnurpsBram/pytorch_dataparallel_sandbox multi_gpu.py (lint heldout14 u050): the wrapper is
# built as `ddp_net`, and the step's forward runs on `my_net`, the module it wraps
BYPASS = """
        import torch
        import torch.nn as nn
        from torch.nn.parallel import DistributedDataParallel as DDP

        def main(rank, loader, optimizer):
            my_net = nn.Linear(4, 1).to(rank)
            WRAP
            for x, y in loader:
                optimizer.zero_grad()
                y_hat = FORWARD(x)
                loss = nn.L1Loss()(y, y_hat)
                loss.backward()
                optimizer.step()
        """

# an ALBERT pretrainer (lint heldout11 u025) and a segmentation trainer (lint heldout10 u044): a
# transformers / smp model built on the CPU, wrapped with device_ids=[local_rank] and never moved
ON_CPU = """
        import torch
        from transformers import AlbertConfig, AlbertForMaskedLM

        def train(local_rank):
            torch.cuda.set_device(local_rank)
            model = BUILD
            MOVE
            model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
        """



def on_cpu(build: str, move: str) -> str:
    return ON_CPU.replace("BUILD", build).replace("MOVE", move)


CASES = {
    "on cpu: a library model wrapped with device_ids, never moved": (
        "ddp-module-on-cpu", [(8, "error")], on_cpu("AlbertForMaskedLM(AlbertConfig())", "model.train()")),
    "control: moved to the rank's GPU first": (
        "ddp-module-on-cpu", [], on_cpu("AlbertForMaskedLM(AlbertConfig())", "model.to(local_rank)")),
    "sibling: another module's builder, which may move it": (
        "ddp-module-on-cpu", [], on_cpu("build_model(AlbertConfig())", "model.train()")),
    # lint heldout12 u016 (an audio codec trainer): `model.cpu()` in place, then the wrap with device_ids
    "on cpu: moved to the CPU in place before the wrap": (
        "ddp-module-on-cpu", [(8, "error")], on_cpu("build_model(AlbertConfig())", "model.cpu()")),
    "on cpu: moved to the CPU, then through convert_sync_batchnorm": (
        "ddp-module-on-cpu", [(9, "error")], on_cpu("build_model(AlbertConfig())", "model.cpu()\n            "
                                                    "model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)")),
    # lint heldout8 u019 (github.com/JIA-Lab-research/PointGroup/issues/34): the wrapper moved after it is built
    "sibling: no device_ids, the wrapper moved after it is built": (
        "ddp-module-on-cpu", [(8, "warning")], on_cpu("AlbertForMaskedLM(AlbertConfig())", "pass").replace(
            "DistributedDataParallel(model, device_ids=[local_rank])", "DistributedDataParallel(model).to(local_rank)")),
    "control: no device_ids, the module moved before the wrap": (
        "ddp-module-on-cpu", [], on_cpu("AlbertForMaskedLM(AlbertConfig())", "model.to(local_rank)").replace(
            "DistributedDataParallel(model, device_ids=[local_rank])", "DistributedDataParallel(model)")),
    "sibling: handed to a helper that may move it": (
        "ddp-module-on-cpu", [], on_cpu("AlbertForMaskedLM(AlbertConfig())", "place(model, local_rank)")),
    "undefined: the main block passes names only a function's parameters have": (
        "undefined-name", [(10, "error")], MAIN_CALL.replace("BIND", "pass")),
    "control: the main block binds them": ("undefined-name", [], MAIN_CALL.replace(
        "BIND", "rank, world_size, train_loader, num_classes = 0, 1, [], 10")),
    "undefined: a value never built and a class never imported, two errors": (
        "undefined-name", [(7, "error"), (9, "error")], WORKER.replace("LOADER", "DataLoader")),
    "control: the class imported, the value built": ("undefined-name", [], WORKER.replace(
        "LOADER", "DataLoader").replace("import torch\n", "import torch\n        from torch.utils.data import DataLoader\n"
                                        ).replace("    dist.init", "    dataset = None\n            dist.init")),
    "control: a relative star import may bind them": ("undefined-name", [], WORKER.replace(
        "LOADER", "DataLoader").replace("import torch\n", "import torch\n        from .data import *\n")),
    # lint heldout10 u043 (a Mask R-CNN trainer): two torchvision classes one import line supplies
    "sibling: two classes read in one function are one cause": ("undefined-name", [(4, "error")], """
        import torch

        def create_model(model, num_classes):
            model.box_predictor = FastRCNNPredictor(1024, num_classes)
            model.mask_predictor = MaskRCNNPredictor(256, 256, num_classes)
            return model

        if __name__ == "__main__":
            create_model(torch.nn.Module(), 4)
        """),
    # lint heldout9 u004 / dev d017 (a course assignment's notes): placeholders on three lines, a template
    "control: a template's placeholders": ("undefined-name", [], WORKER.replace("LOADER", "DataLoader").replace(
        "num_replicas=world_size", "num_replicas=replicas")),
    "bypassed: the forward runs on the module the wrapper holds": (
        "ddp-forward-bypassed", [(10, "error")],
        BYPASS.replace("WRAP", "ddp_net = DDP(my_net, device_ids=[rank])").replace("FORWARD", "my_net")),
    "control: the forward runs on the wrapper": (
        "ddp-forward-bypassed", [],
        BYPASS.replace("WRAP", "ddp_net = DDP(my_net, device_ids=[rank])").replace("FORWARD", "ddp_net")),
    "sibling: the module's name rebound to the wrapper": (
        "ddp-forward-bypassed", [],
        BYPASS.replace("WRAP", "my_net = DDP(my_net, device_ids=[rank])").replace("FORWARD", "my_net")),
    "sibling: the module's forward under no_grad (evaluation)": (
        "ddp-forward-bypassed", [],
        BYPASS.replace("WRAP", "ddp_net = DDP(my_net, device_ids=[rank])").replace(
            "y_hat = FORWARD(x)", "with torch.no_grad():\n                    y_hat = my_net(x)")),
}


@pytest.mark.parametrize("rule, expected, code", list(CASES.values()), ids=list(CASES))
def test_heldout14_errors(rule, expected, code):
    source = textwrap.dedent(code).lstrip("\n")
    found = [(d.line, d.severity) for d in engine.lint_source(source, "train.py") if d.rule == rule]
    assert found == expected, found
