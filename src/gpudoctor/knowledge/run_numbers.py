"""What a run's own numbers show: the loss, learning rate and accuracy its progress lines log, and how far it got.

Issue 35 (items 2 and 4): many failed threads fail in their results, not by a crash: a LoRA run whose loss is 0 from its
first step, a learning rate that is 0 at every step, an accuracy of 0 at every epoch; and many threads ask about a run
that looks healthy ("accuracy lower than the paper", "slower than expected"), where nothing in the log decides. Both are
read here from the progress lines `knowledge/progress.py` keeps (per kind of line: its first line, its last KEPT, and how
many), never from a regex over every line of the input.

- `zero_throughout`: a quantity logged as exactly 0 on every line shown that logs it, ZERO_LINES lines or more, and never
  as anything else (finding `stuck-at-zero`, a warning). Exactly 0 is how the number is printed: Python's `0.0`, `0`, or
  a scientific zero (`0.000000E+00`); a fixed format with several places (`0.0000`, `lr:0.00000`) is a rounded value
  (a converged loss, a learning rate of 1e-6 printed with five places) and decides nothing. Not a value that is 0 at
  the start only (a warm-up from 0, an accuracy of 0 at epoch 0) or at the end only (a schedule decayed to 0): another
  line logs it above 0. The loss read is the training loss (not an auxiliary, a KL or a validation loss: an MoE balance
  loss, TRL's GRPO loss beside its KL, are 0 in runs that learn).
- `progress_seen`: the run's commonest kind of progress line that logs a loss (SEEN_LINES lines or more, not one line
  repeated), the last of them, the loss it logs first -> last, and the speed its last line prints: what an undecided
  answer says the log showed. None where no such lines stand (a command line, a configuration dump, a download bar).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from gpudoctor.knowledge.progress import LOSS_VALUE as LOSS_NAMED
from gpudoctor.knowledge.progress import Progress, shown

# A loss a line logs, by its name and value (progress.py's LOSS_VALUE, with any spaces between them: pytorch/examples'
# "| loss  5.00 |", a padded "Loss:  0.0")
LOSS_VALUE = re.compile(
    rb"(?<![\w/.])(?P<key>\w*loss\w*|l_[a-z]\w*)(?:['\"]?\s*[:=]\s*['\"]?|\s+)(?P<value>\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)(?![\w.])", re.IGNORECASE)
assert LOSS_NAMED.pattern.startswith(rb"(?<![\w/.])(?P<key>")  # (the same names as the divergence check reads)
ZERO_LINES = 5  # lines that log the value as 0 (and none that logs it otherwise): "at every step shown"

# The value as a number is printed: exactly 0 (Python's repr, an integer, a scientific zero), or a rounded fixed format
# (a bare integer 0 is no measured value: a drawing's or a config's "train_loss= 0", dev8w's git diff)
EXACT_ZERO = re.compile(rb"^[-+]?(?:0\.0?|0\.0+[eE][-+]?\d+|0[eE][-+]?\d+)$")
# A line that reports a failure: its number is a placeholder, not a measurement ("[545/3840] ... - 失败 - Acc: 0.0", dev7w's
# federated-learning runner, whose every experiment failed within a second)
FAILED_LINE = re.compile(rb"(?i)fail|error|exception|abort|\xe5\xa4\xb1\xe8\xb4\xa5")  # (the last: 失败, "failed")
NUMBER = rb"(?P<value>[-+]?(?:\d[\d,]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|nan|inf)"
# The training loss by its name: loss, train_loss, total_loss, lm loss, "Train Loss" (not aux_loss, kl_loss, val_loss)
TRAIN_LOSS = re.compile(rb"(?i)^(?:train(?:ing)?_|tr_)?(?:total_|lm_|avg_|mean_|overall_)?loss$")
# The words of a line that is no training step: an evaluation's, or a reinforcement-learning record whose loss is beta
# times a KL near 0 (TRL's GRPO, RLOO, PPO)
NOT_TRAINING = re.compile(rb"(?i)\b(?:eval|evaluat\w*|val|valid|validation|test|testing)\b|\b(?:eval|val|test)_|['\"]kl['\"]|\breward")
LEARNING_RATE = re.compile(rb"(?<![\w/.])['\"]?(?P<key>lr|learning_rate|learning rate)['\"]?(?:\s?[:=]\s?\[?\s?|\s+)['\"]?" + NUMBER + rb"(?![\w.])", re.I)
ACCURACY = re.compile(rb"(?<![\w/.@])['\"]?(?P<key>(?:(?:train|val|valid|test|eval)_)?acc(?:uracy)?(?:@1|1)?|top-?1)['\"]?(?:\s?[:=]\s?|\s+)['\"]?" + NUMBER + rb"(?![\w.])", re.I)
GRAD_NORM = re.compile(rb"(?<![\w/.])['\"]?grad[ _]norm['\"]?\s?[:=]\s?" + NUMBER + rb"(?![\w.])", re.I)

# Each quantity: its case name (finding `stuck-at-zero`), how its value is found, which keys count
QUANTITIES = (("loss", LOSS_VALUE), ("learning-rate", LEARNING_RATE), ("accuracy", ACCURACY))


@dataclass(frozen=True)
class Zero:
    """A quantity logged as exactly 0 on every line shown that logs it."""

    case: str  # loss, learning-rate, accuracy
    key: str  # its name as the log prints it
    count: int  # lines of the kinds that log it as 0
    first: tuple[int, str]  # (line, text) of the first of them
    last: tuple[int, str]
    beside: tuple[str, ...]  # what else the last line shows of the run (its loss, a grad_norm of 0)


def values(case: str, text: bytes) -> list[tuple[str, bytes]]:
    """(key, value) of every reading of `case` on the line (the training loss only, on a training line)."""
    if case == "loss":
        if NOT_TRAINING.search(text):
            return []
        return [(m["key"].decode("ascii", "replace"), m["value"]) for m in LOSS_VALUE.finditer(text) if TRAIN_LOSS.match(m["key"])]
    rx = LEARNING_RATE if case == "learning-rate" else ACCURACY
    return [(m["key"].decode("ascii", "replace"), m["value"]) for m in rx.finditer(text)]


def zero_throughout(progress: Progress) -> list[Zero]:
    """The quantities logged as exactly 0 on every progress line shown that logs them (ZERO_LINES or more lines), and
    on no line as anything else."""
    out = []
    for case, _ in QUANTITIES:
        zero_lines: list[tuple[int, bytes]] = []
        count, key, decided = 0, "", True
        for kind in progress.kinds.values():
            seen = ([kind.first] if kind.first else []) + [x for x in kind.last if not kind.first or x[0] != kind.first[0]]
            read = [(n, text, values(case, text)) for n, text in seen]
            read = [(n, text, vals) for n, text, vals in read if vals]
            if not read:
                continue
            if any(EXACT_ZERO.match(v) is None for _, _, vals in read for _, v in vals) or any(FAILED_LINE.search(t) for _, t, _ in read):
                decided = False  # a value above 0, or one printed rounded, or a failure's line: not 0 throughout
                break
            count += kind.count
            key = key or read[0][2][0][0]
            zero_lines += [(n, text) for n, text, _ in read]
        if not decided or count < ZERO_LINES or not zero_lines:
            continue
        zero_lines.sort()
        (n1, t1), (n2, t2) = zero_lines[0], zero_lines[-1]
        out.append(Zero(case, key, count, (n1, shown(t1)), (n2, shown(t2)), beside_of(case, t2)))
    return out


def beside_of(case: str, text: bytes) -> tuple[str, ...]:
    """What else the line shows of the run: its training loss where the learning rate or the accuracy is 0, a gradient
    norm of 0 (no gradient reaches the weights, or the steps are skipped)."""
    out = []
    if case != "loss":
        out += [f"{k} {v.decode('ascii', 'replace')}" for k, v in values("loss", text)[:1]]
    grad = GRAD_NORM.search(text)
    if grad is not None and (EXACT_ZERO.match(grad["value"]) or grad["value"].lower() == b"nan"):
        out.append(f"grad_norm {grad['value'].decode('ascii')}")
    return tuple(out)


# The speed a progress line prints, as frameworks print it: Megatron's "elapsed time per iteration (ms): 5361.6" and
# "throughput per GPU (TFLOP/s/GPU): 243.6", DeepSpeed's "SamplesPerSec=83.48" and "samples/sec: 47.411", InternLM's
# "tflops=93.48", "tgs (tokens/gpu/second)=2104.89", nanotron's "tokens_per_sec: 22.8K", torchtitan's "wps: 1,786  mfu:
# 10.46%", nanoGPT's "time 48.25ms, mfu 7.48%", pytorch/examples' "ms/batch 9.43", tqdm's "21.03s/it", "3.2it/s"
THROUGHPUT = re.compile(
    r"(?i)(?:(?<!data )(?<!data_)\b(?:elapsed[ _]time[ _]per[ _]iteration(?:[ _]\(?ms\)?)?|iter(?:ation)?[ _]time(?: \(s\))?|step[ _]time|batch[ _]time"
    r"|cost_time|time|ms/batch|samples/sec|samplespersec|samples_per_second|tokens_per_sec(?:_per_gpu)?|tgs \(tokens/gpu/second\)"
    r"|wps|tps|mfu|(?:model_|hardware_)?tflops(?:_per_gpu)?|throughput per gpu \(tflop/s/gpu\))['\"]?\s?[:=]?\s{0,3}"
    r"\d(?:[\d.,]*\d)?[KMG]?(?:\s?(?:ms|s|%))?(?![\w.])"
    r"|\b\d[\d.]*\s?(?:it/s|s/it|samples/s|tokens/s|tok/s)\b)"
)
THROUGHPUT_SHOWN = 3
SEEN_LINES = 3  # progress lines that log a loss, at least, for an undecided answer to tell the run's progress


@dataclass(frozen=True)
class Seen:
    """What the run's own progress lines show: their commonest kind (one that logs a loss first), how many, the last of
    them; the loss they log first -> last; the speed the last one prints."""

    count: int
    last: tuple[int, str]
    loss: str  # "loss 6.78 (line 9) -> 5.00 (line 19)", or ""
    throughput: str  # "ms/batch 9.44, ... (line 19)", or ""


def progress_seen(progress: Optional[Progress]) -> Optional[Seen]:
    """The run's progress as its commonest kind of progress line shows it, or None where it prints none."""
    if progress is None or not progress.kinds:
        return None
    kinds = [k for k in progress.kinds.values() if k.last]
    if not kinds:
        return None
    named = {id(k): name_of(k.last[-1][1]) for k in kinds}
    with_loss = [k for k in kinds if named[id(k)]]
    # a training step's line before an evaluation's ("| end of epoch 1 | valid loss 5.15 |" is no training loss)
    with_loss = [k for k in with_loss if NOT_TRAINING.search(k.last[-1][1]) is None] or with_loss
    if not with_loss:
        return None  # (a command line, a configuration dump, a download bar: no run's progress to tell)
    kind = max(with_loss, key=lambda k: k.count)
    # the kinds that log the same loss (one line's padding apart: "|   200/ 2323 batches" and "|  1000/ 2323 batches")
    name = named[id(kind)]
    same = [k for k in with_loss if named[id(k)] == name]
    first = min((k.first or k.last[0]) for k in same)
    last = max(k.last[-1] for k in same)
    count = sum(k.count for k in same)
    if count < SEEN_LINES or first[1] == last[1]:
        return None  # one or two lines, or one line repeated: no progress
    loss = ""
    if first[0] != last[0]:
        a, b = loss_of(first[1]), loss_of(last[1])
        if a is not None and b is not None and a[0] == b[0]:
            loss = f"{a[0]} {a[1]} (line {first[0]}) -> {b[1]} (line {last[0]})"
    text = last[1].decode("utf-8", "replace")
    speeds = []
    for m in THROUGHPUT.finditer(text):
        said = " ".join(m.group(0).replace('"', "").replace("'", "").split())
        if said not in speeds:
            speeds.append(said)
    throughput = f"{', '.join(speeds[:THROUGHPUT_SHOWN])} (line {last[0]})" if speeds else ""
    return Seen(count, (last[0], shown(last[1])), loss, throughput)


def loss_of(text: bytes) -> Optional[tuple[str, str]]:
    """(name, value) of the loss a line logs: its training loss first, else the first loss it names (not a loss scale)."""
    found = [(m["key"].decode("ascii", "replace"), m["value"].decode("ascii")) for m in LOSS_VALUE.finditer(text)
             if not re.search(r"(?i)scal|weight|coef|count|num|lambda|factor|ratio", m["key"].decode("ascii", "replace"))]
    main = [x for x in found if TRAIN_LOSS.match(x[0].encode())]
    return (main or found)[0] if found else None


def name_of(text: bytes) -> str:
    """The name of the loss a line logs (`loss_of`), or ''."""
    named = loss_of(text)
    return named[0] if named is not None else ""
