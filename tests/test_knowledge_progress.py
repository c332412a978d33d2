"""knowledge/progress.py: a run's progress, fallback and stage lines, read as the scanner numbers lines (whole lines,
across blocks)."""

from __future__ import annotations

import pytest

from gpudoctor.knowledge.progress import Progress

# (heldout17w's CISC-867/Project train.log: a TTS run restarted from its checkpoint after a CUDA out-of-memory)
LOG = (
    "Using default model\n"  # 1
    "epoch=0 i=0/530 total_loss=3.76425 spectro_loss=0.97041\n"  # 2
    "CUDA out of memory. Tried to allocate 1.17 GiB\n"  # 3
    "RuntimeError: CUDA out of memory.\n"  # 4
    "W | 06-21 06:59:42 | jax | a CUDA-enabled jaxlib is not installed. Falling back to cpu.\n"  # 5
    "[__main__][INFO] - Starting training!\n"  # 6
    "epoch=0 i=1/530 total_loss=8.81567 spectro_loss=0.62323\n"  # 7
    "epoch=0 i=2/530 total_loss=7.40716 spectro_loss=0.56287\n"  # 8
    "epoch=0 i=3/530 total_loss=1.13227 spectro_loss=0.22097\n"  # 9
    "    loss = criterion(out, target)  # a traceback's quoted source line\n"  # 10
)


def read(text: str, block: int) -> Progress:
    progress, data = Progress(), text.encode()
    for at in range(0, len(data), block):
        progress.feed(data[at : at + block])
    progress.end()
    return progress


@pytest.mark.parametrize("block", [7, 64, 1 << 20])
def test_what_it_reads_does_not_depend_on_the_blocks(block):
    progress = read(LOG, block)
    assert progress.after(4) == (7, "epoch=0 i=1/530 total_loss=8.81567 spectro_loss=0.62323")
    assert progress.after(7) is None  # two lines of the kind after it: not yet "went on"
    assert progress.fallback_after(1) == (5, progress.fallbacks[0][1], 4)  # right after the exception's line
    assert progress.fallback_after(5) is None
    assert progress.moved_after(4) == (6, "[__main__][INFO] - Starting training!")
    assert progress.raised == 4
    assert len(progress.kinds) == 1  # the quoted source line is no progress


def test_one_line_repeated_as_it_was_is_no_progress():
    assert read("x\n" + "epoch 3 loss 0.5\n" * 5, 64).after(1) is None


def test_a_slice_of_known_kinds_read_at_once_keeps_what_line_by_line_keeps(monkeypatch):
    # A long log's steady state: once each kind of line is known, a slice is read at once (only each kind's last lines
    # are kept). Read with SLICE small enough that most slices take that way, then line by line (FAST_KINDS 0): the
    # same kinds, the same kept lines with the same numbers, the same marks.
    from gpudoctor.knowledge import progress as module

    steps = "".join(f"epoch=0 i={i}/530 total_loss={i * 0.37:.5f}\nsaving to /ckpt/{i:x}.pt done\n" for i in range(400))
    text = LOG + steps + LOG + steps[: len(steps) // 3] + "RuntimeError: boom\n"
    monkeypatch.setattr(module, "SLICE", 512)
    fast = read(text, 1 << 20)
    monkeypatch.setattr(module, "FAST_KINDS", 0)
    slow = read(text, 1 << 20)
    assert fast.lines == slow.lines == text.count("\n")
    assert {k: list(v.last) for k, v in fast.kinds.items()} == {k: list(v.last) for k, v in slow.kinds.items()}
    assert {k: v.count for k, v in fast.kinds.items()} == {k: v.count for k, v in slow.kinds.items()}  # (every line counted)
    # (the last step line, cut into the error's line, is no progress)
    assert sum(v.count for v in fast.kinds.values()) == text.count("epoch=0 i=") - 1
    assert (fast.plain, list(fast.fallbacks), list(fast.stages), list(fast.ends), fast.raised) == (
        slow.plain, list(slow.fallbacks), list(slow.stages), list(slow.ends), slow.raised)
    assert fast.after(4) == slow.after(4) and fast.after(4) is not None
