"""The rank reader's fast forms (knowledge/ranks_heard.py): the rank numbers any line names, found in the block lowered,
are those MENTIONED finds; a block whose every NAMED pair is kept already is not read match by match, and what is kept is
what reading every match keeps; a command that starts a rank by hand is found as before."""

from __future__ import annotations

import random
import re

import pytest

from gpudoctor.knowledge import ranks_heard
from gpudoctor.knowledge.ranks_heard import BY_HAND, MENTIONED, MENTIONED_LOWER, RanksHeard

WORDS = ["rank", "RANK", "Rank", "global_rank", "GLOBAL_RANK", "local_rank", "LOCAL_RANK", "my_rank", "xrank", "_global_rank",
         "world_size", "ranks", "=", ":", " = ", ": ", " ", "  ", "\n", "\t", "3", "12", "0", "7a", "_", ",", "[", "]", "-", "é"]


def texts() -> list[bytes]:
    rng = random.Random(5)
    made = [b"Start running on rank=1.", b"LOCAL_RANK: 3 - CUDA_VISIBLE_DEVICES: [0,1,2,3]", b"GLOBAL_RANK: 2, MEMBER: 3/8",
            b"local_rank=4 global_rank=5 rank 6 xrank=7 my_rank=8 RANK=10abc rank\n11", b"_global_rank=12 rank=13"]
    made += ["".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 40))).encode() for _ in range(3000)]
    return made


def test_mentioned_numbers_found_lowered_are_mentioneds_own():
    for text in texts():
        assert MENTIONED_LOWER.findall(text.lower()) == MENTIONED.findall(text), text


def test_by_hand_is_the_command_it_was():
    before = re.compile(BY_HAND.pattern.replace(rb"python(?<!\wpython)", rb"\bpython"))
    commands = [b"python train.py --world_size=2 --rank=0 --local_rank=0", b"xpython train.py --world_size=2 --rank=1",
                b"$ python3.10 -u train.py --rank 1 --world-size 4", b"cpython3 a.py --rank=0 --world_size=2", b"_python a.py --rank=0 --world_size=2"]
    for text in commands + texts()[:500]:
        assert [m.span() for m in BY_HAND.finditer(text)] == [m.span() for m in before.finditer(text)], text


def claims(text: bytes, monkeypatch, every_match: bool) -> list:
    with monkeypatch.context() as m:
        if every_match:
            m.setattr(RanksHeard, "pairs_left", lambda self, low: None)
        heard = RanksHeard()
        heard.feed(text)
        heard.end()
        heard.read_tail()
    return heard.claims


@pytest.mark.parametrize("late", [b"", b"INFO rank=9 world_size=16 step 3\n", b"WORLD_SIZE=16, RANK=3\n", b"Global_Rank: 11, World_Size: 8\n", b"rank=3 world_size: 16\n"])
def test_named_pairs_kept_are_those_every_match_keeps(monkeypatch, late):
    lines = b"".join(b"[11/23] INFO trainer: rank=%d world_size=8 local_rank=%d step %d loss 0.5\n" % (i % 8, i % 8, i) for i in range(40000))
    text = lines + late + lines[:1000]
    kept = claims(text, monkeypatch, every_match=False)
    assert kept == claims(text, monkeypatch, every_match=True)
    assert len(kept) == 8 + bool(late)


def test_named_pairs_stop_at_the_claims_kept(monkeypatch):
    monkeypatch.setattr(ranks_heard, "KEPT", 5)
    text = b"".join(b"rank=%d world_size=64\n" % (i % 64) for i in range(2000))
    kept = claims(text, monkeypatch, every_match=False)
    assert kept == claims(text, monkeypatch, every_match=True) and len(kept) == 5
