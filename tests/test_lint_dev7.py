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
}


@pytest.mark.parametrize("name", list(CASES))
def test_dev7_verdicts(name):
    rule, expected, code = CASES[name]
    text = textwrap.dedent(code).lstrip("\n")
    found = {(d.line, d.severity) for d in engine.lint_source(text, "train.py") if d.rule == rule}
    assert found == expected, [d.message for d in engine.lint_source(text, "train.py") if d.rule == rule]
