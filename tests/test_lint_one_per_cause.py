"""`ddp-forward-bypassed` says one mistake once: forwards run through `model.module` that feed one
backward are one diagnostic naming the other lines (lint heldout15 u031, github.com/ghoudi-tamim
-style GAN step: five `net.module.<part>(...)` calls behind one `loss_g.backward()` gave six errors);
a second backward is a second diagnostic, and a step through the wrapper none."""

from __future__ import annotations

import textwrap

import pytest

from gpudoctor.linter import engine

STEP = """
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    def train(rank, model, loader, opt_g, opt_d):
        dist.init_process_group("nccl", rank=rank, world_size=2)
        net = DDP(model.to(rank), device_ids=[rank])
        for x, y in loader:
            BODY
    """

ONE_LOSS = """z = net.module.encoder(x)
            out = net.module.decoder(z)
            loss_g = (out - y).abs().mean()
            loss_g.backward()
            opt_g.step()"""

TWO_LOSSES = ONE_LOSS + """
            d = net.module.discriminator(out.detach())
            loss_d = d.mean()
            loss_d.backward()
            opt_d.step()"""

THROUGH_WRAPPER = """out = net(x)
            loss = (out - y).abs().mean()
            loss.backward()
            opt_g.step()"""


def bypassed(body: str) -> list:
    source = textwrap.dedent(STEP).lstrip("\n").replace("BODY", body)
    return [d for d in engine.lint_source(source, "train.py") if d.rule == "ddp-forward-bypassed"]


def test_forwards_behind_one_backward_are_one_diagnostic_naming_the_other_line():
    found = bypassed(ONE_LOSS)
    assert [d.line for d in found] == [9]
    assert "the same at lines 10" in found[0].message


@pytest.mark.parametrize("body, lines", [
    (TWO_LOSSES, [9, 14]),      # sibling: a second loss, its own backward: its own diagnostic
    (THROUGH_WRAPPER, []),      # control: the step runs through the wrapper
])
def test_each_backward_is_its_own_diagnostic(body, lines):
    assert [d.line for d in bypassed(body)] == lines
