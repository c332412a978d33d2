"""The scanner leaves out of a block a trigger whose every line there told nothing (commands/diagnose/quiet_triggers.py):
the lines it reads, their numbers and its findings are those it reads searching for every trigger, whatever the block
edges cut, and when its memory of lines is forgotten on the way."""

from __future__ import annotations

import io
import random

import pytest

from gpudoctor.commands.diagnose import reader
from gpudoctor.commands.diagnose.quiet_triggers import quiet_triggers
from gpudoctor.knowledge import story
from gpudoctor.knowledge.prefilter import Digest
from gpudoctor.knowledge.story import Diagnosis

# a framework's start-up words on every line ("process " is a trigger), healthy lines, and lines that tell something
QUIET = "11/23/2024 10:{m:02d}:00 - INFO - Process rank: {r}, device: cuda:{r}, n_gpu: 1, distributed training: True, step {s}\n"
HEALTHY = "[rank{r}]: epoch 1 step {s}/50000 | loss 0.{s} | lr 3.0e-04\n"
SAID = "ERROR process {r} gave up {s}\n"  # told nothing a pattern reads, but speaks of an error: counted each time
NEW = "the signal handler of {w}\n"  # a new line each time (another trigger's): the lines remembered grow
TOLD = [
    "Process {r} told something new {s}\n",  # a trigger's line seen once among its quiet look-alikes
    "[rank{r}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU {r} has a total capacity of 79.18 GiB\n",
    "WARNING: process {r} exited with exit code {s}\n",
    "Process rank: {r}, device: cuda:{r}, caf\u00e9 {s}\n",  # not ASCII: read each time
]


def reads(text: bytes, monkeypatch, quiet: bool) -> tuple[list[tuple[int, str]], list[dict]]:
    """The lines the scanner fed (number, text) and the findings, with the quiet triggers left out or not."""
    fed: list[tuple[int, str]] = []
    real = Diagnosis.feed_line

    def feed_line(self, raw, line, *args, **kwargs):
        fed.append((line, raw))
        return real(self, raw, line, *args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(Diagnosis, "feed_line", feed_line)
        if not quiet:
            m.setattr(reader, "quiet_triggers", lambda *args: [])
        d = Diagnosis()
        reader.scan(io.BytesIO(text), d, "")
    return fed, [f.to_dict() for f in d.findings()]


def log(seed: int, lines: int = 3000) -> bytes:
    rng = random.Random(seed)
    out = []
    for i in range(lines):
        roll = rng.random()
        shape = QUIET if roll < 0.55 else HEALTHY if roll < 0.86 else SAID if roll < 0.87 else NEW if roll < 0.99 else rng.choice(TOLD)
        out.append(shape.format(m=i % 60, r=i % 8, s=rng.randrange(100000), w="".join(rng.choice("abcdefghij") for _ in range(8))))
    return "".join(out).encode()


@pytest.mark.parametrize("block", [512, 1500, 4096, 10007])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_lines_read_are_those_read_searching_every_trigger(monkeypatch, block, seed):
    monkeypatch.setattr(reader, "BLOCK", block)
    monkeypatch.setattr(reader, "LOOKAHEAD", 256)
    monkeypatch.setattr(reader, "MAX_LINE", 1024)
    text = log(seed)
    assert reads(text, monkeypatch, quiet=True) == reads(text, monkeypatch, quiet=False)


@pytest.mark.parametrize("memo", [3, 10, 40])
def test_the_same_when_the_memory_of_lines_is_forgotten_in_a_block(monkeypatch, memo):
    # (every line the scanner remembers is forgotten at once past MEMO: a quiet line is then read again)
    monkeypatch.setattr(story, "MEMO", memo)
    monkeypatch.setattr(reader, "BLOCK", 4096)
    monkeypatch.setattr(reader, "LOOKAHEAD", 256)
    text = log(4, 2000)
    assert reads(text, monkeypatch, quiet=True) == reads(text, monkeypatch, quiet=False)


def test_a_line_cut_by_the_block_edge_is_no_line_of_the_block():
    d = Diagnosis()
    told = b"Process rank: 1, step 7\n"
    d.feed_line(told.decode().strip(), 1)  # (a line that told nothing: now quiet)
    chunk = b"rank: 2, step 8 was cut\n" + told * 3 + b"11/23 Process rank: 3, step 9 is cut"
    # the chunk's first and last pieces are not its lines: what they hold decides nothing ...
    assert (Digest(chunk).head_cut, Digest(chunk).tail_cut) == (b"rank: 0, step 0 was cut", b"00/00 Process rank: 0, step 0 is cut")
    # ... but the line that runs across the edge is read whole from the other digest
    assert quiet_triggers([b"process "], [Digest(chunk), Digest(b"carried Process rank: 2, step 8 was cut\n")], chunk, 1 << 16, d) == []
    assert quiet_triggers([b"process "], [Digest(chunk), Digest(b"Process rank: 2, step 8\n")], chunk, 1 << 16, d) == [b"process "]


def test_a_whole_line_like_the_cut_piece_is_still_a_line_of_the_block():
    d = Diagnosis()
    d.feed_line("Process rank: 1, step 7", 1)
    chunk = b"rank: 2\n" + b"Process rank: 1, step 7\n" * 3 + b"Process rank: 6, step 6 told something\n" + b"Process rank: 5, step 5 told something"
    assert Digest(chunk).tail_cut is None
    assert quiet_triggers([b"process "], [Digest(chunk), Digest(b"x rank: 2\n")], chunk, 1 << 16, d) == []


def test_a_first_piece_like_a_line_of_the_block_and_the_input_s_last_lines_are_read():
    d = Diagnosis()
    d.feed_line("Process rank: 1, step 7", 1)
    quiet = b"Process rank: 1, step 7\n" * 3
    # the chunk's first piece is also one of its whole lines (its digits aside), which told something
    chunk = b"Process 5 told something\n" + quiet + b"Process 6 told something\n" + quiet + b"Process rank: 2"
    assert Digest(chunk).head_cut is None
    assert quiet_triggers([b"process "], [Digest(chunk), Digest(b"no trigger here\n")], chunk, 1 << 16, d) == []
    # at the input's end the buffer's digest holds whole lines only: its first line is read like the others
    last = b"Process 5 told something\n" + quiet
    assert quiet_triggers([b"process "], [Digest(last)], b"", 1 << 16, d) == []
