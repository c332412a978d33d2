"""What is remembered by a line's shape (its digits made 0) answers as reading the line itself does
(knowledge/shapes.py, mentions.said_in_prose): a log whose every record holds nan with other numbers
was read at about 1 MB/s, each line tried against every pattern."""

import re

from gpudoctor.knowledge import mentions
from gpudoctor.knowledge.patterns import ALL
from gpudoctor.knowledge.prefilter import digit_blind
from gpudoctor.knowledge.shapes import ShapePatterns
from gpudoctor.knowledge.story import Diagnosis


def renumbered(text: str, by: int) -> str:
    return re.sub(r"\d", lambda m: str((int(m.group()) + by) % 10), text)


def every_try(d: Diagnosis, text: str) -> list:
    """first_found as it was: every pattern, in order (no shape remembered)."""
    shapes, d.shapes = d.shapes, ShapePatterns(())
    d.shapes.of = lambda _text: None  # type: ignore[method-assign]
    try:
        return d.first_found(text)
    finally:
        d.shapes = shapes


def test_a_shape_seen_before_finds_what_trying_every_pattern_finds():
    # every rule's example lines and their near misses, each with its digits changed (0.0 -> 1.1: Trainer's 0.0 loss
    # and a finite one have one shape), read after the shape was seen twice
    d = Diagnosis()
    lines = [e.line for p in ALL for e in p.examples] + [t for p in ALL for t in p.not_examples]
    lines += ["{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 1e-05, 'epoch': 0.01}",
              "{'loss': 0.5, 'grad_norm': nan, 'learning_rate': 1e-05, 'epoch': 0.01}",
              "12%|#2        | 120/1000 [01:12<08:48,  1.66it/s, loss=nan, grad_norm=nan]"]
    remembered = 0
    for line in lines:
        for by in (0, 1, 3):
            text = renumbered(line, by)
            for _ in range(2):
                d.shapes.of(text)  # seen twice: its patterns are remembered
            remembered += d.shapes.of(text) is not None
            assert [(p.id, m.span(), m.groupdict()) for p, m in d.first_found(text)] == \
                   [(p.id, m.span(), m.groupdict()) for p, m in every_try(d, text)], text
    assert remembered > len(lines)  # (long lines are not remembered)


def test_a_shape_leaves_out_only_patterns_it_cannot_match():
    d = Diagnosis()
    text = "{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 1e-05, 'epoch': 0.01}"
    d.shapes.of(text)
    kept = d.shapes.of(text)
    assert kept is not None and "loss-not-finite" in [p.id for p in kept] and len(kept) < len(d.patterns) / 10


def test_said_in_prose_reads_no_digit():
    # its answers are remembered by the text's shape: none of its regexes may tell one digit from another
    assert all(digit_blind(getattr(mentions, name)) for name in mentions.PROSE_REGEXES)
    import inspect

    used = set(re.findall(r"\b([A-Z_]{4,})\.(?:search|match|sub)\(", inspect.getsource(mentions._said_in_prose)))
    assert used <= set(mentions.PROSE_REGEXES), used


def test_said_in_prose_remembered_answers_as_read():
    for text, start, end in [("I don't get RuntimeError: CUDA out of memory on 2 GPUs", 12, 24),
                             ("Is this a CUDA out of memory error on 8 GPUs?", 10, 28),
                             ("you might meet an error CUDA out of memory with batch 64", 24, 42),
                             ("{'loss': 0.0, 'grad_norm': nan, 'epoch': 1.5}", 0, 13)]:
        for by in (0, 1, 5):
            t = renumbered(text, by)
            assert mentions.said_in_prose(t, start, end) == mentions._said_in_prose(t, start, end)
            assert mentions.said_in_prose(t, start, end) == mentions._said_in_prose(t, start, end)  # (the second: remembered)
