"""lint's recall on the shapes lint heldout11 missed (issue 41; 60 whole scripts of the
`distributed_train.py` and `train_multi_gpu.py` listings): each a few of the script's own lines
(source in the comment), its control (the healthy program most like it) and, where another
verdict is near, its sibling. Each case: its rule, its line, the severity lint must give it
(None: the rule is silent there)."""

from __future__ import annotations

import textwrap

import pytest

from gpudoctor.linter import engine

# github.com/karpathy/build-nanogpt train_gpt2.py's shape (lint heldout11 u059): DDP only when RANK is set,
# the checkpoint taken from the model under a rank test (SAVED)
NANOGPT = """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = GPT(config)
        if ddp:
            model = DDP(model, device_ids=[ddp_local_rank])
        raw_model = model.module if ddp else model
        for step in range(max_steps):
            if master_process and step % 5000 == 0:
                checkpoint = {"model": SAVED.state_dict(), "step": step}
                torch.save(checkpoint, f"model_{step:05d}.pt")
        """

# lint heldout11 u027 / u035 (one Kaggle pipeline template in two repositories): the model comes wrapped
# from the caller; the epoch loop reads model.module (READ), the Ctrl-C handler saves model.state_dict()
KAGGLE = """
        import torch

        def basic_train(cfg, model, train_dl, save_path, gpu):
            try:
                for epoch in range(cfg.train.num_epochs):
                    if epoch == 0 and cfg.train.freeze_start_epoch:
                        for x in READ.parameters():
                            x.requires_grad = False
                    train_one_epoch(model, train_dl)
            except KeyboardInterrupt:
                if gpu == 0:
                    torch.save(model.state_dict(), save_path / "quit.pth")
        """

# github.com/gusalsdmlwlq/LegALBERT distributed_train.py (lint heldout11 u025): processes started with
# multiprocessing.Process; `os` never imported and `db` defined nowhere
LEGALBERT = """
        import torch
        import torch.distributed as dist
        from torch.multiprocessing import Process
        from reader import Reader

        def init_process(local_rank, config):
            os.environ["MASTER_ADDR"] = "127.0.0.1"
            dist.init_process_group("gloo", rank=local_rank, world_size=config.num_gpus)
            READER

        if __name__ == "__main__":
            os.environ["KMP_WARNINGS"] = "0"
            for local_rank in range(2):
                Process(target=init_process, args=(local_rank, config)).start()
        """

CASES = {
    # lint heldout11 u030 (github.com/.../distributed_train.py): DDP(model, ...), then model = model.cuda()
    "save: the wrapper moved after wrapping is still the wrapper": ("save-ddp-wrapper", 6, "warning", """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(model.to(local_rank), device_ids=[local_rank])
        model = model.cuda()
        torch.save({"state_dict": model.state_dict()}, "ckpt.pth")
        """),
    "control: the moved wrapper's module saved": ("save-ddp-wrapper", 6, None, """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(model.to(local_rank), device_ids=[local_rank])
        model = model.cuda()
        torch.save({"state_dict": model.module.state_dict()}, "ckpt.pth")
        """),
    "save: wrapped on the DDP path only, saved on every launch": ("save-ddp-wrapper", 10, "warning",
                                                                  NANOGPT.replace("SAVED", "model")),
    "control: the unwrapped model saved": ("save-ddp-wrapper", 10, None, NANOGPT.replace("SAVED", "raw_model")),
    "sibling: saved only where the same test says no DDP": ("save-ddp-wrapper", 10, None,
        NANOGPT.replace("if master_process and", "if not ddp and").replace("SAVED", "model")),
    # lint heldout11 u031: the best and the periodic checkpoint, two dicts bound to one name: two diagnostics
    "save: two checkpoints built into one name": ("save-ddp-wrapper", 11, "warning", """
        import torch
        import torch.nn as nn

        def train(s_net, options):
            if options["distributed"]:
                s_net = nn.parallel.DistributedDataParallel(s_net, device_ids=[args.gpu])
            for epoch in range(10):
                state = {"model": s_net.state_dict(), "optimizer": optimizer.state_dict()}
                torch.save(state, "best.pth")
                if epoch % options["save_freq"] == 0:
                    state = {"model": s_net.state_dict(), "optimizer": optimizer.state_dict()}
                    torch.save(state, f"{epoch}.pth")
        """),
    "save: the file reads the model through .module": ("save-ddp-wrapper", 12, "warning",
                                                       KAGGLE.replace("READ", "model.module.model")),
    "control: no read through .module": ("save-ddp-wrapper", 12, None, KAGGLE.replace("READ", "model.model")),
    "sibling: the read under a test of the wrapping": ("save-ddp-wrapper", 12, None, KAGGLE.replace(
        "epoch == 0 and cfg.train.freeze_start_epoch", "hasattr(model, 'module')").replace("READ", "model.module")),
    # dev7 u004 (a TSM trainer): the file takes 'module.' off the keys it loads
    "control: the file strips the prefix where it loads": ("save-ddp-wrapper", 12, None,
        KAGGLE.replace("READ", "model.module.model") + "\n        sd = {k[7:]: v for k, v in ckpt.items()}\n"),
    "undefined: a name read from nowhere in a worker": ("undefined-name", 9, "error",
                                                        LEGALBERT.replace("READER", "reader = Reader(db, config)")),
    "control: the name imported": ("undefined-name", 9, None, LEGALBERT.replace(
        "READER", "reader = Reader(db, config)").replace("import torch\n", "import torch\n        from data import db\n")),
    "sibling: read under a flag's test": ("undefined-name", 10, "warning", LEGALBERT.replace(
        "READER", "if config.weighted:\n                w = w.to(device)")),
    "control: three names from nowhere (a template)": ("undefined-name", 9, None, LEGALBERT.replace(
        "READER", "reader = Reader(db, config, tokenizer, vocab)")),
    "control: a star import may bind it": ("undefined-name", 9, None, LEGALBERT.replace(
        "READER", "reader = Reader(db, config)").replace("import torch\n", "import torch\n        from data import *\n")),
    # the same file: `os` in the main block, which every start runs
    "unimported: read by the main block of a program": ("name-not-imported", 7, "error",
                                                        LEGALBERT.replace("READER", "pass")),
    # dev3 h074 (a launcher excerpt): only a main block, which may be the visible part of a program
    "sibling: a main block alone": ("name-not-imported", 4, "warning", """
        import torch.multiprocessing as mp

        if __name__ == "__main__":
            os.environ["MASTER_PORT"] = "29500"
            mp.spawn(train, nprocs=2)
        """),
}


def said(code: str, rule: str) -> list[tuple[int, str]]:
    """(line, severity) of each diagnostic `rule` gives the dedented code."""
    return [(d.line, d.severity) for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), "train.py")
            if d.rule == rule]


@pytest.mark.parametrize("name", list(CASES))
def test_heldout11_shapes(name):
    rule, line, severity, code = CASES[name]
    found = said(code, rule)
    if name.startswith("control"):  # a control is silent on every line, not only the one named
        assert found == []
    else:
        assert [s for n, s in found if n == line] == ([severity] if severity else []), found
