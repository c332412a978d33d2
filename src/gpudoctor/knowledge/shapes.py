"""The patterns a line may match, remembered by the line's shape: its text with every ASCII digit made a 0.

A log repeats its lines with other numbers (a metrics record per logging step, a progress bar per batch). The
diagnosis remembers what an exact text matched (`Diagnosis.known`), but a line whose numbers change every time
is a new text every time, and each was tried against every pattern: a Hugging Face Trainer log whose every record
holds `'grad_norm': nan` (each such record is read: it holds a trigger) ran at about 1 MB/s, most of it there.

The patterns a shape may match are found once, on the shape's second sighting (a shape seen once costs nothing
more than before): every pattern with a needle found in the shape (each needle's digits made 0 too) and a regex
that matches the shape, or that names a digit (`prefilter.digit_blind`: a literal 5, a class of some digits;
such a regex is tried on each line as before). A pattern left out cannot match any text of that shape: a needle
in the text is in its shape with its digits made 0, and a regex blind to digits matches the text exactly when it
matches its shape. The caller tries the patterns kept, on the line's own text, in their order: what it finds is
what trying them all finds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from gpudoctor.knowledge.pattern import Pattern
from gpudoctor.knowledge.prefilter import digit_blind

ZERO = str.maketrans("123456789", "000000000")
SHAPES = 4096  # shapes remembered (then forgotten all at once); sighted once, or with their patterns
LONGEST = 1024  # a longer text is not remembered: at most SHAPES * LONGEST * 2 characters held (8 MB)


class ShapePatterns:
    """For one list of patterns: `of(text)`, the patterns of that list that may match the text."""

    def __init__(self, patterns: Sequence[Pattern]) -> None:
        self.patterns = patterns
        self.table: Optional[list[tuple[Pattern, bool, tuple[str, ...]]]] = None  # (pattern, digit-blind, needles with 0s)
        self.sighted: set[str] = set()
        self.by_shape: dict[str, tuple[Pattern, ...]] = {}

    def of(self, text: str) -> Optional[tuple[Pattern, ...]]:
        """The patterns (in their order) that may match `text`, or None: its shape was not seen before (try them all)."""
        if len(text) > LONGEST:
            return None
        shape = text.translate(ZERO)
        found = self.by_shape.get(shape)
        if found is not None:
            return found
        if shape not in self.sighted:
            if len(self.sighted) >= SHAPES:
                self.sighted.clear()
            self.sighted.add(shape)
            return None
        if len(self.by_shape) >= SHAPES:
            self.by_shape.clear()
        table = self.table if self.table is not None else self.make_table()
        found = self.by_shape[shape] = tuple(
            p for p, blind, needles in table if any(n in shape for n in needles) and (not blind or p.regex.search(shape) is not None)
        )
        return found

    def make_table(self) -> list[tuple[Pattern, bool, tuple[str, ...]]]:
        key = tuple(map(id, self.patterns))  # (the patterns are held with the table: no id is another's while it is kept)
        kept = _TABLES.get(key)
        if kept is None:
            # (a pattern that only refines another's claim never matches a line itself: `Pattern.match`)
            table = [(p, digit_blind(p.regex), tuple(n.translate(ZERO) for n in p.needles)) for p in self.patterns if not p.refines]
            if len(_TABLES) >= 8:
                _TABLES.clear()
            kept = _TABLES[key] = (tuple(self.patterns), table)
        self.table = kept[1]
        return kept[1]


# the tables made, by the identities of the patterns they are of (the whole knowledge base's: made once per process)
_TABLES: dict[tuple[int, ...], tuple[tuple[Pattern, ...], list[tuple[Pattern, bool, tuple[str, ...]]]]] = {}
