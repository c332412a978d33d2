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


def state(progress: Progress) -> tuple:
    return (progress.lines, {k: (list(v.last), v.count) for k, v in progress.kinds.items()}, progress.plain, list(progress.fallbacks),
            list(progress.stages), list(progress.ends), progress.raised, progress.exception_at)


@pytest.mark.parametrize("seed, whole", [(1, False), (2, False), (3, True)])
def test_a_big_block_of_known_kinds_read_from_its_digest_keeps_what_slices_keep(monkeypatch, seed, whole):
    # A block big enough to be digested (prefilter.DIGEST_MIN) whose lines are all of known kinds is read at once
    # (`known_block`): each kind's last lines, read back from its end. Fed in blocks of uneven sizes (cut pieces at
    # every edge: a line cut in two is a kind of its own in the digest; or `whole` lines), with a kind seldom there,
    # lines longer than a kind, hashes, CRLF and empty lines: what is kept is what reading it slice by slice keeps.
    import random

    from gpudoctor.knowledge.prefilter import DIGEST_MIN

    rng = random.Random(seed)
    shapes = ["[11/23/2024 10:00:{t:02d}] INFO trainer: rank={r} world_size=8 local_rank={r} step {s} loss 0.{s} | Completed batch {s}\n",
              "epoch {r} step {s}/50000 | loss 0.{s} | lr 3.0e-04\r\n", "wrote shard {s} sha256={h} in 0.5 s\n", "\n",
              "  8%|##        | {s}/50000 [01:12<13:48,  5.55it/s, loss=0.{s}]\n"]
    lines = []
    for i in range(300000):
        roll = rng.random()
        shape = rng.choice(shapes) if roll < 0.99997 else rng.choice(["Epoch {r} done, best loss 0.{s}\n", "new kind of line {h}\n"])
        lines.append(shape.format(t=i % 60, r=i % 8, s=rng.randrange(10 ** 6), h=f"{rng.getrandbits(64):016x}"))
    data = "".join(lines).encode()
    cuts = [0]
    while cuts[-1] < len(data):
        cut = cuts[-1] + rng.randrange(DIGEST_MIN, 2 * DIGEST_MIN)
        cuts.append(data.find(b"\n", cut) + 1 or len(data) if whole else cut)

    def feed(fast: bool) -> tuple[Progress, int]:
        taken = []
        real = Progress.known_block
        with monkeypatch.context() as m:
            m.setattr(Progress, "known_block", lambda self, *args: taken.append(fast and real(self, *args)) or taken[-1])
            progress = Progress()
            for a, b in zip(cuts, cuts[1:]):
                progress.feed(data[a:b])
            progress.end()
        return progress, sum(taken)

    fast, blocks = feed(True)
    slow, _ = feed(False)
    assert blocks >= 4
    assert state(fast) == state(slow)


@pytest.mark.parametrize("case", ["new kind first", "cut in a number"])
def test_a_big_block_s_first_line_and_its_cut_last_piece_count_as_they_are(monkeypatch, case):
    # the block's first line is whole where the block before ended with a newline (a kind never seen there: read slice by
    # slice); a last piece cut inside a line's number is of that line's kind (a kind of the block's lines all the same)
    from gpudoctor.knowledge.prefilter import DIGEST_MIN

    line = "INFO trainer: rank={r} world_size=8 step {s} loss 0.5 | Completed batch {s}\n"
    steady = "".join(line.format(r=i % 8, s=100000 + i) for i in range(DIGEST_MIN // 60)).encode()
    if case == "new kind first":
        blocks = [steady, b"iteration 5 reward 3\n" + steady]
    else:
        blocks = [steady, steady + b"INFO trainer: rank=1 world_size=8 step 7 loss 0.5 | Completed batch 13", b"4567\n"]

    def feed(fast: bool) -> Progress:
        with monkeypatch.context() as m:
            if not fast:
                m.setattr(Progress, "known_block", lambda self, *args: False)
            progress = Progress()
            for block in blocks:
                progress.feed(block)
            progress.end()
        return progress

    assert state(feed(True)) == state(feed(False))
