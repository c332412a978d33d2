"""The fork and no-work readers on blocks big enough to be read through their digest (prefilter.DIGEST_MIN): what they
find there is what they find in a small paste, and a block full of their needles' look-alikes ("network", "samples")
is read without finding anything."""

from __future__ import annotations

from gpudoctor.knowledge.forked import LINES_SEARCHED, ForkSeen
from gpudoctor.knowledge.no_work import NoWork
from gpudoctor.knowledge.prefilter import DIGEST_MIN


def filler(line: bytes, size: int = DIGEST_MIN * 2) -> bytes:
    return line * (size // len(line) + 1)


def read(reader, *chunks: bytes):
    for chunk in chunks:
        reader.feed(chunk)
    reader.end()
    return reader


def test_fork_line_after_many_lookalike_lines_is_found_with_its_number():
    lookalikes = b"NCCL INFO Using network Socket; work_dir /ckpt\n" * (LINES_SEARCHED * 3)
    block = lookalikes + b"RuntimeError: Caught RuntimeError in DataLoader worker process 0.\n" + filler(b"step 1 loss 0.5\n")
    seen = read(ForkSeen(), block)
    assert seen.line == LINES_SEARCHED * 3 + 1
    assert "DataLoader worker process 0" in seen.text


def test_lookalikes_alone_show_no_fork():
    seen = read(ForkSeen(), filler(b"NCCL INFO Using network Socket; framework ready; pooling layer\n"))
    assert seen.line == 0


def test_fork_in_a_later_big_block_is_found():
    first = filler(b"epoch 1 step 2 loss 0.25\n")
    second = filler(b"epoch 1 step 3 loss 0.25\n", DIGEST_MIN) + b"  File \"multiprocessing/process.py\", line 314, in _bootstrap\n"
    seen = read(ForkSeen(), first, second)
    assert seen.line == first.count(b"\n") + second.count(b"\n")


def test_zero_count_in_a_big_block_of_sample_words_is_found():
    block = filler(b"[rank0]: 812 samples registered | 12 samples/s\n") + b"  Num examples = 0\n"
    assert read(NoWork(), block).last == (block.count(b"\n"), "Num examples = 0")


def test_counts_above_zero_in_a_big_block_are_no_line_of_no_work():
    assert read(NoWork(), filler(b"  Num examples = 5\n  Total optimization steps = 7\n")).last is None
