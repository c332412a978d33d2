"""`ddp-forward-bypassed` says one mistake once: forwards run through `model.module` in one training
step are one diagnostic naming the other lines (lint heldout15 u031, github.com/JeremGamingYT/MTLD
train_distributed.py: five `model.module.<part>(...)` calls behind `loss_g.backward()` gave six errors,
then the discriminator's `loss_d.backward()` in the same loop a second one, where its reader saw one
bypassed wrapper); the same wrapper bypassed in another function's step is its own, and a step
through the wrapper none."""

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
    (TWO_LOSSES, [9]),          # a second loss in the same step: the same bypassed wrapper, one diagnostic
    (THROUGH_WRAPPER, []),      # control: the step runs through the wrapper
])
def test_one_diagnostic_per_wrapper_and_step(body, lines):
    found = bypassed(body)
    assert [d.line for d in found] == lines
    assert not found or "the same at lines 10, 14" in found[0].message


def test_another_step_is_its_own_diagnostic():
    # sibling: a second training loop (another step) bypassing the same wrapper is said on its own
    second = ONE_LOSS + """
        for x, y in loader:
            out = net.module.decoder(x)
            loss = (out - y).abs().mean()
            loss.backward()"""
    assert [d.line for d in bypassed(second)] == [9, 15]


# `wrapper-method-call`: reads of model attributes on one wrapper in one function are one missing
# `.module` (lint heldout15 u016, github.com/AaronXueNF/ModulatedAtt train_distributed.py@be68996: `net.train_qualities`,
# `net.lmbda[level]`, `net.aux_loss()` on `net = DDP(...)` gave five errors in two functions)
READS = """
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    def validate(net, loader):
        for level, alpha in iter(net.train_qualities):
            lmbda = alpha * net.lmbda[level]
            for img in loader:
                out = net(img)
                aux = net.aux_loss().item()
    OTHER
    def main(model, loader):
        dist.init_process_group("nccl")
        net = DDP(model.cuda(), device_ids=[0])
        validate(net, loader)
        train(net, loader)
    """

TRAIN = """
    def train(net, loader):
        level = next(net.train_qualities_cycle)
    """
TRAIN_UNWRAPPED = """
    def train(net, loader):
        level = next(net.module.train_qualities_cycle)
    """


def wrapper_reads(other: str) -> list:
    source = textwrap.dedent(READS).lstrip("\n").replace("OTHER\n", textwrap.dedent(other).lstrip("\n"))
    return [d for d in engine.lint_source(source, "train.py") if d.rule == "wrapper-method-call"]


def test_reads_on_one_wrapper_in_one_function_are_one_diagnostic_naming_the_other_lines():
    found = wrapper_reads(TRAIN_UNWRAPPED)
    assert [d.line for d in found] == [5]
    assert "`train_qualities`, `lmbda`, `aux_loss`" in found[0].message
    assert "the same wrapper at lines 6, 9" in found[0].message


def test_another_function_keeps_its_own_diagnostic():
    assert [d.line for d in wrapper_reads(TRAIN)] == [5, 11]    # sibling: train() reads it too


# `collective-under-rank-condition`: collectives in one condition block are one mistake (lint
# heldout15 u056, github.com/ZihaoZhao/Pytorch-ASR-WaveNet train_distributed.py@b701738: `if args.local_rank == 0:` then two
# `reduce_tensor(...)` calls, each reaching `dist.all_reduce`, gave two errors)
BLOCK = """
    import torch.distributed as dist

    def reduce_tensor(t):
        rt = t.clone()
        dist.all_reduce(rt)
        return rt

    def epoch_end(args, loss, val):
        BODY
    """

ONE_IF = """if args.local_rank == 0:
        a = reduce_tensor(loss)
        b = reduce_tensor(val)"""
TWO_IFS = """if args.local_rank == 0:
        a = reduce_tensor(loss)
    if args.rank == 0:
        dist.all_reduce(val)"""
EVERY_RANK = """a = reduce_tensor(loss)
    b = reduce_tensor(val)
    if args.local_rank == 0:
        print(a, b)"""


def under_rank(body: str) -> list:
    source = textwrap.dedent(BLOCK).lstrip("\n").replace("BODY", body)
    return [d for d in engine.lint_source(source, "train.py") if d.rule == "collective-under-rank-condition"]


@pytest.mark.parametrize("body, lines", [
    (ONE_IF, [10]),             # the real case: one block, one diagnostic
    (TWO_IFS, [10, 12]),        # sibling: another condition, its own diagnostic
    (EVERY_RANK, []),           # control: every rank reduces, only the print is rank-0
])
def test_one_diagnostic_per_condition_block(body, lines):
    found = under_rank(body)
    assert [d.line for d in found] == lines
    if body is ONE_IF:
        assert "the same condition at line 11" in found[0].message


# `if rank == 0: evaluate(model, ...)` where evaluate() runs the DDP model and all-reduces: one hang,
# said by collective-under-rank-condition as an error; ddp-forward-on-one-rank's "may hang" warning on
# the same call adds nothing (lint heldout15 u012, github.com/22pilarskil/StockHeadlineAnalysis train_distributed.py@273fc88,
# whose evaluate() calls `dist.all_reduce`); without the all-reduce the warning is the only word and stays
EVALUATE = """
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    from torch.nn.parallel import DistributedDataParallel as DDP

    def evaluate(model, x):
        out = model(x)
        REDUCE
        return out

    def worker(rank, world_size):
        dist.init_process_group("nccl", rank=rank, world_size=world_size)
        torch.cuda.set_device(rank)
        model = DDP(torch.nn.Linear(2, 2).cuda(rank), device_ids=[rank])
        if rank == 0:
            evaluate(model, torch.ones(2, 2).cuda(rank))

    if __name__ == "__main__":
        mp.spawn(worker, args=(2,), nprocs=2)
    """


@pytest.mark.parametrize("reduce, rules", [
    ("dist.all_reduce(out)", {("collective-under-rank-condition", "error")}),
    ("pass", {("ddp-forward-on-one-rank", "warning")}),     # sibling: no collective, the forward's own warning
])
def test_one_hang_at_one_call_is_said_once(reduce, rules):
    source = textwrap.dedent(EVALUATE).lstrip("\n").replace("REDUCE", reduce)
    found = {(d.rule, d.severity) for d in engine.lint_source(source, "train.py") if d.line == 16}
    assert found == rules
