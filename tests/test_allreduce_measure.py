"""The rank's data: deterministic, non-constant, different on every rank, and
with a sum each dtype holds exactly, so the check can compare element by element."""

import pytest
import torch

from gpudoctor.commands.allreduce.rank import PERIOD, rank_values, size_stage, summed_values, tiled


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("world", [1, 2, 3, 8, 300])
def test_sum_in_the_dtype_is_exact_in_any_order(dtype, world):
    tdtype = getattr(torch, dtype)
    values = [rank_values(torch, r, world, dtype) for r in range(world)]
    exact = summed_values(torch, world, dtype)
    forward = torch.zeros_like(values[0], dtype=tdtype)
    for v in values:
        forward = forward + v.to(tdtype)
    backward = torch.zeros_like(values[0], dtype=tdtype)
    for v in reversed(values):
        backward = backward + v.to(tdtype)
    assert torch.equal(forward, exact.to(tdtype)) and torch.equal(backward, exact.to(tdtype))
    assert torch.equal(forward.to(torch.int64), exact)  # nothing was rounded


def test_a_plain_fp16_sum_of_naive_data_would_not_be_exact():
    # Why the range matters: 300 ranks adding 16 each overflow bfloat16's exact integers.
    naive = torch.full((4,), 16.0, dtype=torch.bfloat16)
    total = torch.zeros(4, dtype=torch.bfloat16)
    for _ in range(300):
        total = total + naive
    assert total[0].item() != 4800.0


def test_data_is_non_constant_and_differs_by_rank():
    a, b = rank_values(torch, 0, 4, "float32"), rank_values(torch, 1, 4, "float32")
    assert a.unique().numel() > 4
    assert not torch.equal(a, b)
    assert torch.equal(a, rank_values(torch, 0, 4, "float32"))  # deterministic


def test_tiled_reads_the_periodic_sequence_at_any_offset():
    base = torch.arange(PERIOD, dtype=torch.int64)
    t = tiled(torch, base, PERIOD - 2, 5, torch.float32, torch.device("cpu"))
    assert t.tolist() == [PERIOD - 2, PERIOD - 1, 0, 1, 2]
    # A chunk shifted by a power of two does not match: the period is prime.
    whole = tiled(torch, base, 0, 4096, torch.float32, torch.device("cpu"))
    assert not torch.equal(whole[:1024], whole[1024:2048])


def test_stage_names_the_op_and_size():
    assert size_stage("all_reduce", 4096) == "all_reduce 4K"
