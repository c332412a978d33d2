"""A run's own line that it did no work: an epoch or a loop of zero iterations (tqdm's "Epoch 1: 0it [00:00, ?it/s]"), a
bar whose total is zero ("0/0 ["), a count of zero examples, samples, batches or steps ("Num examples = 0", "Total
optimization steps = 0"). A run that ends after such a line, or whose log stops there, trained nothing: its end is no
evidence that it worked (issue 35: hpcaitech/Open-Sora#562, dev5: every epoch "0it" while the bucket reports 3 batches). An
empty list of the devices a run uses ("Use gpus:" with none
after it, RVC) is no such line: the run goes on, on the CPU ("NO GPU DETECTED: falling back to CPU", heldout27b rvc-2067),
which is the GPU not used, not no work. A bar of none that the program's start-up prints before it builds its model (the
web UI's "[AddNet] Updating model hashes..." then "0it [00:00, ?it/s]" for no file to hash, then "Loading weights [...]",
"Creating model from config: ...", heldout28b stable-diffusion-webui-12273) was a set-up step with nothing to do, not the
run's work: the model's loading after it takes it back, as work after it does. What decides the answer is in commands/diagnose/analyse.py `no_failure` (log-inconclusive case `no-work`). `NoWork` reads the whole input as its blocks go by
(`feed`, `tee`) and keeps the last such line.
"""

from __future__ import annotations

import re

from gpudoctor.knowledge.prefilter import DIGEST_MIN, digest, may_hold, newlines
from gpudoctor.knowledge.reruns import WholeLines

# Each shape on a line of its own; a bar's frames on one line (CR between them): the last frame decides (`last_frame`).
NO_WORK = re.compile(
    # tqdm with no total that counted nothing and ended at once (00:00: a loop that waited with nothing counted is a stall,
    # heldout10's bert-sklearn#17 "0it [00:27, ?it/s]" under a bar at 0/42), or a total of zero: the last frame on its line
    rb"(?:^|(?<=[ \t:|]))0it \[00:00[^\]\r\n]*\][^\r\n]*$|(?:^|(?<=[ \t:|]))0/0 \["
    # a count of what the run was to work through, zero
    rb"|\b(?:num(?:ber)?[ _]?(?:of[ _])?(?:train(?:ing)?[ _])?(?:examples|samples|batches|steps)"
    rb"|total (?:optimi[sz]ation |training |train )?(?:steps|batches|samples|examples)"
    rb"|(?:train(?:ing)?|total) (?:batches|samples|examples))\s*[=:]\s*0(?![\d.,])",
    re.IGNORECASE | re.MULTILINE,
)
# A bar's count above zero, or a bar with work to do (a total above zero): work after a line of none takes it back (a bar
# printed frame by frame on lines of their own, "0it [00:00, ?it/s]" then "1it [00:00,  1.02it/s]", heldout15's loramaster#5;
# a loop that yielded nothing before the training's bar "0/42 [00:09<?, ?it/s]", heldout10's bert-sklearn#17, a stall).
WORK = re.compile(rb"(?<![\d.])(?:[1-9]\d*it|\d+/[1-9]\d*) \[")
# A program's own line that it now builds or loads its model (the web UI's and diffusers' start-up words): what came before it
# was the start-up, not the run's work. Only words said while a model is being built, never a trainer's reload of its best
# model at its end ("Loading best model from ..."), which comes after the epochs it would take back.
MODEL_BUILT = re.compile(rb"^(?:Loading weights \[[0-9a-f]+\] from |Creating model from config: |Loading pipeline components\.\.\.)",
                         re.MULTILINE)
# Where a NO_WORK match can be, found fast (a literal, or a pattern that starts with one letter): NO_WORK itself opens with
# alternatives the regex engine tries at every byte (diagnose_throughput's ordinary log: 9.7 MB/s when it searched whole
# blocks), so it is tried only on the lines these find. Each count NO_WORK reads ends in one of these words' tails, in
# lower or upper case ("Num Examples = 0", "TOTAL STEPS: 0"); a pattern that opens with a literal is searched fast.
BAR_NONE = (b"0it [00:00", b"0/0 [")
ZERO_COUNT = tuple((tail, re.compile(tail + rb"\s*[=:]\s*0(?![\d.,])"))
                   for tail in (b"amples", b"AMPLES", b"teps", b"TEPS", b"atches", b"ATCHES"))


class NoWork(WholeLines):
    """The input's last line that shows the run doing no work (NO_WORK): `last` (line, text), or None."""

    def __init__(self) -> None:
        super().__init__()
        self.last: tuple[int, str] | None = None

    def read(self, block: bytes, begin: int, end: int) -> None:
        after = begin  # where work after the last line of none is looked for
        found = _last_match(block, begin, end)
        if found is not None:
            self.last = self.line_at(block, begin, end, found.start())
            after = found.end()
        if self.last is not None and (WORK.search(block, after, end) is not None or MODEL_BUILT.search(block, after, end) is not None):
            self.last = None
        self.lines += newlines(block, begin, end)


def _last_match(block: bytes, begin: int, end: int) -> re.Match[bytes] | None:
    """The last NO_WORK match in block[begin:end] (whole lines), NO_WORK tried only on the lines around each spot BAR_NONE
    and ZERO_COUNT find, from the last spot back: the first line that matches holds the last match of its kind."""
    best: re.Match[bytes] | None = None
    spots: list[tuple[int, int]] = []  # (where the line's search starts, where the spot ends)
    for needle in may_hold(block, BAR_NONE):
        at = block.rfind(needle, begin, end)
        while at != -1:
            spots.append((at, at + len(needle)))
            at = block.rfind(needle, begin, at)
    # (a big block is searched only for the counts its digest holds: the digest's lines are the block's with each digit a 0, so
    # a count of zero there is one of any single digit in the block, and a block whose lines print "samples" or "steps" on
    # every line with no count of them costs no search; a find is faster than a count's own search for its literal)
    seen = digest(block).text if len(block) >= DIGEST_MIN else None
    for tail, count in ZERO_COUNT:
        if (count.search(seen) is not None) if seen is not None else block.find(tail, begin, end) != -1:
            spots.extend((m.start(), m.end()) for m in count.finditer(block, begin, end))
    for start, stop in sorted(spots, reverse=True):
        if best is not None and best.start() >= start:
            break  # every spot left is before the match already found
        first = block.rfind(b"\n", begin, start) + 1 or begin
        first = max(first, begin)
        last = block.find(b"\n", stop, end)
        for match in NO_WORK.finditer(block, first, end if last == -1 else last):
            if best is None or match.start() > best.start():
                best = match
    return best
