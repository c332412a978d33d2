"""A run's own progress lines, and what shows that a job went on past a failure it printed.

A whole log (issue 35: `nohup.out`, `train.log` committed to a repository) is often more than one run: a run fails, the
program is started again in the same file, and the last run trains (heldout17w: Hydra/Lightning runs started again,
OOM restarts from a checkpoint, a relaunch after `No module named torch`). And a library prints a traceback it survives
(torch.compile falling back to eager, a JAX CUDA plugin that fails to load, then the CPU). In both, the failure is not
the run's end: the log goes on past it. What counts as "went on" (knowledge/story.py `Diagnosis.went_on`):

- **progress after the log's last failure**: at least PROGRESS_AFTER lines of one kind (the same line, its numbers
  aside: an epoch's, a step's, an episode's, a loss's, a progress bar's) after the failure, with their numbers moving,
  and no failure after the first of them. A process that ends in a traceback prints nothing after it; progress after it
  is the same process going on (the error was survived) or a later run's (started again). Only where one process
  writes the log: where it shows ranks or a multi-process launcher, another rank's progress after one rank's failure is
  a hang to come, not a run that went on;
- **a library's own fallback** right after the failure ("Falling back to cpu."), and no failure after it;
- **a later run's start** (knowledge/reruns.py `Openings`: the log's opening lines stand again after the failure)
  followed by that run's progress or a stage it starts (`STAGE`: "Starting training!");
- **the job's own end** after the log's last failure, in its own words that its work is done ("Finetuning done!", not a
  teardown's or a launcher's: `own_end`), where one process writes the log;
- **a library's warning-level line** (`warned`: bitsandbytes' "- WARNING - ... compiled without GPU support") followed by
  the run's progress or a stage it starts, and no failure after it: a warning stops no process;
- **a batch script's set-up step the shell could not run** (`set_up_step`: "slurm_script: line 14: activate: No such file
  or directory") followed by PROGRESS_AFTER lines or more of the job's own output, and no failure after it.

A benchmark's table rows (`ROW_NUMBER`: one CSV row per configuration it measures) are progress lines too.

`Progress` keeps, per kind of progress line, its last occurrences (line and numbers), the fallback lines and the stage
lines, fed block by block as `Openings` is (whole lines, the scanner's numbering).
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from typing import Optional

from gpudoctor.knowledge.ending import ENDED, LAST_ENDED, PERIODIC_SAVE
from gpudoctor.knowledge.evidence import INFO_RECORD, error_level
from gpudoctor.knowledge.prefilter import DIGEST_MIN, digest, newlines
from gpudoctor.knowledge.reruns import WholeLines

# A line a run prints as it works: a counter of epochs, steps, iterations, batches, episodes, rounds or passes with its
# number, a progress bar (tqdm's "45%|", Keras's "1/1 [====="), or a metric with its value (a loss, an accuracy, a
# reward). heldout17w's: "epoch=0 i=335/530 total_loss=1.70953 ..." (a TTS run restarted from its checkpoint after a CUDA
# out-of-memory, https://github.com/CISC-867/Project/blob/c9f4fba9e7024fee815f6c4b7ae41e79716bd175/train.log),
# "EP:601 | TD Error [114.9, 37.7] | ALoss [370.3, 318.9] | ep_r -54" (a TD3 run relaunched after `No module named
# torch`, https://github.com/360ZMEM/USV-AUV-colab/blob/0320209cc6ad99bd3d0d94983b6822b569a5d6cc/output.log),
# "step:7151/20000 train_loss:6.580660e-02 train_time:31848444ms" (after torch.compile's WON'T CONVERT tracebacks,
# https://github.com/AkramjitS/gpt-lab-diffusion/blob/0dff6e1bc406ca0f8d347dfcfe7e89e3928a724a/train.log).
WORDS = (b"epoch", b"episode", b"ep:", b"ep ", b"step", b"iter", b"batch", b"round", b"pass", b"loss", b"acc", b"reward", b"%|", b" [=")
# What every line a run writes as it ends holds (knowledge/ending.py ENDED, LAST_ENDED: "- INFO - Done!", "Training
# completed", "Finished training"), lowered: a line with none of them is no end.
END_WORDS = (b"done", b"finish", b"complete", b"succe", b"fit` stopped", b"train_runtime")
# Any of WORDS or of the marks' words (fallback, stage, exception): one search in C instead of a test per word in Python,
# for the lines that hold none of them (most new kinds of line in a long log: paths with hashes, config dumps)
ANY_WORD = re.compile(b"|".join(re.escape(w) for w in (*WORDS, b"back", b"start", b"begin", b"error", b"exception", b"traceback", *END_WORDS)))
PROGRESS = re.compile(
    r"\b(?:epoch|episode|ep|step|iter(?:ation)?|batch|round|pass|update)s?\b\W{0,3}\d"
    r"|\d%\||\d+/\d+ \[[=>.]"
    r"|(?:\b|_)(?:loss|acc(?:uracy)?|reward)\w*\W{0,3}[-+]?\d",
    re.IGNORECASE,
)
DIGITS = b"0123456789"  # what a line's kind leaves out: the same line with other numbers is the same kind
# and the letters of hexadecimal numbers (a checkpoint's hash, an address, a run id: "sha256=3fa9c0..."), so that a line that
# prints one is one kind, not a new kind every time (read whole each time: most of the reader's cost on such a log)
KIND_OUT = DIGITS + b"abcdef"
KIND_CHARS = 64  # of a line without its digits (KIND_OUT): its kind
KINDS = 2000  # kinds of progress line remembered (a log with more varied lines counts the first only)
SLICE = 1 << 20  # bytes of a block read at a time
PLAIN = 8192  # kinds of line remembered as nothing (then forgotten all at once: bounded memory on any log)
FAST_KINDS = 16  # kinds of line in a slice read at once (`known_slice`); more: line by line
FAST_SEEN = 4096  # different lines (before their kinds are cut to KIND_CHARS) in a slice read at once, at most
BACK_LINES = 1024  # lines read back from a block's end for each kind's last KEPT (`known_block`); more: slice by slice
TEXT_SHARE = 4  # a block whose digest's text is more than this share of it is read slice by slice (`known_block`)
KEPT = 8  # last occurrences kept per kind, with their numbers (the latest decide: progress after the last failure)
PROGRESS_AFTER = 3  # lines of one kind after the failure, their numbers moving: the job went on
# Lines that hold a progress word but are no run's progress: a traceback's frames and the source lines they quote
# (indented), a quoted path, a run summary printed at exit (wandb's), a shell's or a launcher's report.
NOT_PROGRESS = re.compile(rb"^\s|File \"|^(?:\x1b\[[\d;]*m)?wandb(?:\x1b\[[\d;]*m)?:|Traceback|Error:|error:", re.IGNORECASE)
# A library saying it goes on another way after an error it printed: JAX's "An NVIDIA GPU may be present on this
# machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu." right after its CUDA plugin's traceback
# (https://github.com/ChenJiakaiCam/Kondo_Lattice/blob/6d9b67d2306e0162e952c18004e28ad3a56a17a5/train.log), torch's
# "falling back to eager", onnxruntime's "Falling back to ['CPUExecutionProvider']".
FALLBACK = re.compile(rb"(?i)\bfall(?:s|ing)?[ -]?back to\b|\bfallback to\b")
FALLBACK_LINES = 4  # how far after the exception's line the fallback stands (a blank line, an info line between)
# The exception's line a fallback follows: Python's "RuntimeError: Unable to load cuSPARSE. Is it installed?"
RAISED = re.compile(rb"(?:[\w.]+\.)?[a-z]\w*(?:error|exception)\b")  # (on a lowered line)
# A stage the program says it starts: "Starting training!", "Start training...", "Begin testing" (the
# Lightning-Hydra template's lines after a run was started again,
# https://github.com/AronnePiperno/fewshot/blob/a1d4a3688e7b9fe21cdd432695b169b04b963890/train.log).
STAGE = re.compile(
    rb"(?i)\b(?:start(?:ing|ed|s)?|begin(?:ning|s)?)\W{1,3}(?:the |to )?(?:model )?"
    rb"(?:train(?:ing)?|test(?:ing)?|eval(?:uation|uating)?|validat(?:ion|ing)|fit(?:ting)?|inference|epoch)\b"
)
# A shell script's own report of a command it ran and lost (bash's job line, the script's name, its line, the command's
# PID: "/home/u/precise_gps/./run_all.sh: line 9:  5458 Killed  python app.py -f \"$1/$file\"", heldout18w,
# https://github.com/mfkiwl/precise_gps/blob/afce48dba981d8916359a8cb8cb3fc46e224613d/slurm.out): the log is a script running
# one command after another, so progress after a failure is the next command's, not the failed one going on.
SCRIPT_STEP = re.compile(r"[\w.\-]+\.(?:sh|bash): line \d+:\s+\d+\s+\S")
MARKS_KEPT = 64
# What shows that a job went on past a failure (knowledge/story.py `Diagnosis.went_on`'s `how`), in the answer's words.
WENT_ON_SHOWN = {"fallback": "a fallback", "progress": "progress", "later-run": "progress", "ended": "its end",
                 "warned": "progress after the warning", "set-up": "the job's own output",
                 "noted": "its own info-level record that it goes on without that part",
                 "plug-in": "its host program's word that it goes on without that plug-in",
                 "tool-step": "the program's own record after it",
                 "logged-low": "its logger's next record, after it logged the exception at DEBUG or INFO level"}
# An end (knowledge/ending.py ENDED, LAST_ENDED) that is a process's or a launcher's teardown, or a time printed on the way
# out, not the job's own words that its work is done: after a failure, it ends the failed process as well
# ("Destroying process group", torch elastic's "exitcode: 0" of another rank, "Total time: 12s" from a finally:).
TEARDOWN_END = re.compile(r"(?i)exit|destroy|waiting for other agents|shutdown|\btime\b|elapsed|wandb|\bPASSED\b")
# A batch script's step that sets up the environment, as the shell names it when it cannot run it ("/var/spool/slurmd/
# job258883/slurm_script: line 14: activate: No such file or directory", heldout20w, the job's TensorFlow then ran on,
# https://github.com/Soundbendor/productivity-playlist/blob/426628e21686cce0444efd0fb273b3bf2669f51d/train.err): an
# environment's activate script, conda, Lmod's module, spack, pyenv. Not the job's own command (python, torchrun).
SET_UP = re.compile(r"^(?:\S*/)?(?:activate|deactivate|conda|mamba|micromamba|module|ml|spack|pyenv|virtualenv|conda\.sh|env\.sh)"
                    r": (?:(?:command )?not found|No such file or directory)")
# A line a library logs at warning level (Python's logging "- WARNING -", "WARNING:name:", "[WARNING]"; the warnings
# module's "UserWarning: "): a warning, whatever its words; the program went on after it.
WARNING_RECORD = re.compile(r"(?:^|(?<=[\s\]|:-]))(?:WARNING|WARN)(?::|\s+-\s|\]|\s+\[)|\[\s*(?:WARNING|WARN)\s*\]|(?:^|[\s:])\w*Warning: ")
# A program's record that a part of it is not there or not used, and it goes on without it: ComfyUI's "[INFO] Found comfy_kitchen
# backend triton: {'available': False, 'disabled': True, 'unavailable_reason': "ImportError: No module named 'triton'", ...}"
# (heldout26 bt420000-collab/ComfyUI-H3-MultiGPU#2: the eager backend ran), JAX's "INFO - xla_bridge.py - ... Unable to initialize
# backend 'tpu': ... TpuPlatform is not available." (dev7w), "INFO | docred | wandb not available or init failed; logging to file
# only." (heldout21w). Read only on a record at INFO or DEBUG level (`noted`): at error level the same words are a failure.
UNAVAILABLE = re.compile(r"""(?i)['"]?available['"]?\s*[:=]\s*False|\b(?:not|un)[ -]?available\b|\bfall(?:s|ing)?[ -]?back\b|\bdisabled\b"""
                         r"|\b(?:will not|won't) be used\b|\bskipp(?:ing|ed)\b|\bnot (?:installed|found)[,;] (?:using|falling|skipping|continuing)")
RECORD_HEAD = 80  # characters of a line its logger's level stands in
# A row of a table the run prints as it goes, one per configuration it measures (a benchmark's CSV: "gemm_onednn,gpu,16 4 4
# 2048 2048 3 3,2.928,2.955,2.932,2.933", heldout20w's oneDNN convolution benchmark, which goes on past the configurations
# that crash, https://github.com/s-aguado/tfm/blob/b4dab0ff8b9ba95677ad9279dc8d8fe5c00b45e9/job.out): ROW_FIELDS
# comma-separated fields or more, ROW_NUMBERS of them decimal fractions (a measurement, not an id or a count); read only on
# a line that holds none of the progress words.
ROW_FIELDS = 4
ROW_NUMBERS = 2
ROW_NUMBER = re.compile(rb"(?:^|,)\s*-?\d+\.\d+\s*(?=,|$)")
# A traceback's header or an exception's line at the start of a line: the last one in the input is where its last
# failure may stand even when the story folds it into an earlier one (the same exception raised again at every start,
# dev7w: https://github.com/yejing97/clf_stroke/blob/ab6bfa4838191e40e13910748cf6ad1fdf883265/logs/nohup.out); nothing after it is "past" the log's failures.
TRACED = re.compile(rb"Traceback \(most recent call last\)|(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception)\b:")  # (matched at a line's start)


@dataclass
class Kind:
    """One kind of progress line (its words, its numbers aside): its first occurrence and its last ones (line, its bytes),
    and how many lines of it the input holds (`count`: what says "at every step", knowledge/run_numbers.py)."""

    last: deque = field(default_factory=lambda: deque(maxlen=KEPT))
    first: tuple = ()
    count: int = 0


class Progress(WholeLines):
    """The progress lines, fallback lines and stage lines of a stream, fed block by block (`feed`)."""

    def __init__(self) -> None:
        super().__init__()
        self.kinds: dict[bytes, Kind] = {}  # a line's kind (lowered, without digits) -> its last occurrences
        self.plain: set[bytes] = set()  # kinds of line that are neither progress nor a mark
        self.fallbacks: deque = deque(maxlen=MARKS_KEPT)  # (line, text, the line of the exception just before it or 0)
        self.stages: deque = deque(maxlen=MARKS_KEPT)  # (line, text)
        self.ends: deque = deque(maxlen=MARKS_KEPT)  # (line, text): a run's own end, in its words (`own_end`), anywhere in the input
        self.raised = 0  # the line of the input's last traceback header or exception line (TRACED)
        self.exception_at = 0  # the line of the last exception's line (RAISED): what a fallback right after it follows

    def read(self, block: bytes, begin: int, end: int) -> None:
        """The whole lines block[begin:end], at once where its digest shows it a long log's steady state (`known_block`),
        else a slice of about SLICE bytes at a time (its lowered copy and its lines are what this reader holds)."""
        if len(block) >= DIGEST_MIN and self.known_block(block, begin, end):
            return
        while begin < end:
            cut = block.rfind(b"\n", begin, min(begin + SLICE, end)) + 1 if begin + SLICE < end else end
            cut = cut if cut > begin else block.find(b"\n", begin, end) + 1 or end
            self.read_slice(block, begin, cut)
            begin = cut

    def read_slice(self, block: bytes, begin: int, end: int) -> None:
        """The whole lines block[begin:end], one by one: each line's kind (its bytes without digits, lowered) looked up
        first (a long log is the same few kinds of line over and over: a progress line's kind is known, and so is one that
        is nothing), a few substring tests on a new one, the regexes on those that pass them."""
        low_slice = block[begin:end].lower()
        keys = low_slice.translate(None, KIND_OUT).split(b"\n")  # every line's kind at once: one call, not one a line
        if self.known_slice(block, begin, end, keys):
            return
        lowered = low_slice.split(b"\n")[:-1]  # (block[begin:end] ends with a newline)
        at = begin
        for i, low in enumerate(lowered):
            here, at = at, at + len(low) + 1
            key = keys[i][:KIND_CHARS]
            kind = self.kinds.get(key)
            if kind is not None:
                kind.last.append((self.lines + 1 + i, block[here : here + len(low)]))
                kind.count += 1
                continue
            if key in self.plain:
                continue
            if ANY_WORD.search(low) is None:
                if low.count(b",") >= ROW_FIELDS - 1 and len(ROW_NUMBER.findall(low)) >= ROW_NUMBERS and len(self.kinds) < KINDS:
                    self.kinds[key] = Kind(count=1)  # a table's row: a benchmark's or a sweep's measurement, one per configuration
                    self.kinds[key].last.append((self.lines + 1 + i, block[here : here + len(low)].rstrip(b"\r")))
                else:
                    self.remember_plain(key)
                continue
            words = any(w in low for w in WORDS)
            number, line = self.lines + 1 + i, block[here : here + len(low)].rstrip(b"\r")
            progress = words and NOT_PROGRESS.search(line) is None and PROGRESS.search(line.decode("utf-8", "replace")) is not None
            ended = not progress and any(w in low for w in END_WORDS) and run_end(line.decode("utf-8", "replace"))
            marks = (b"back" in low, b"start" in low or b"begin" in low, b"error" in low or b"exception" in low or b"traceback" in low, ended)
            if progress and len(self.kinds) < KINDS:
                self.kinds[key] = Kind(first=(number, line), count=1)
                self.kinds[key].last.append((number, line))
            elif not any(marks):
                self.remember_plain(key)
            if marks[2] and RAISED.match(low) is not None:
                self.exception_at = number
            if marks[0] and FALLBACK.search(line) is not None:
                raised = self.exception_at if 0 < number - self.exception_at <= FALLBACK_LINES else 0
                self.fallbacks.append((number, shown(line), raised))
            if marks[1] and STAGE.search(line) is not None:
                self.stages.append((number, shown(line)))
            if marks[2] and TRACED.match(line) is not None:
                self.raised = number
            if ended:
                self.ends.append((number, shown(line)))
        self.lines += newlines(block, begin, end)

    def known_slice(self, block: bytes, begin: int, end: int, keys: list[bytes]) -> bool:
        """Read the slice at once when every line in it is of a known kind or a plain one and there are FAST_KINDS kinds
        or fewer (a long log's steady state): only each kind's last KEPT lines of the slice change what is kept, so
        they are found from the end and nothing else is looked at (the loop of `read_slice` would append every line
        and keep the same). False, and nothing read, otherwise."""
        keys = keys[:-1]  # (the slice ends with a newline: the last item is empty)
        present = set(keys)
        if len(present) > FAST_SEEN:
            return False
        if any(len(k) > KIND_CHARS for k in present):  # a kind is a line's first KIND_CHARS characters
            keys = [k[:KIND_CHARS] for k in keys]
            present = set(keys)
        if len(present) > FAST_KINDS or any(k not in self.kinds and k not in self.plain for k in present):
            return False
        last = len(keys) - 1
        backwards = keys[::-1]
        lines: Optional[list[bytes]] = None
        for key in present:
            kind = self.kinds.get(key)
            if kind is None:
                continue
            found: list[int] = []
            at = 0
            try:
                while len(found) < KEPT:
                    at = backwards.index(key, at) + 1
                    found.append(last - (at - 1))
            except ValueError:
                pass
            kind.count += keys.count(key)
            if lines is None:
                lines = block[begin:end].split(b"\n")
            for i in reversed(found):
                kind.last.append((self.lines + 1 + i, lines[i]))
        self.lines += len(keys)
        return True

    def known_block(self, block: bytes, begin: int, end: int) -> bool:
        """`known_slice` asked once of a whole block, from its digest: when each of its lines is of a known kind or a
        plain one, FAST_KINDS kinds or fewer, every slice of it would be read at once, and what that keeps is each
        kind's last KEPT lines of the block, found here by reading lines back from its end (BACK_LINES at most).
        False, and nothing read, otherwise. `begin`, `end`: the block's whole lines, as WholeLines reads them (from its
        first line or the line after its first newline, to its last newline)."""
        if end != block.rfind(b"\n") + 1 or begin not in (0, block.find(b"\n") + 1):
            return False
        d = digest(block)
        if len(d.text) > len(block) // TEXT_SHARE:
            return False  # (lines that hardly repeat: no steady state, and the keys of all of them would be copies held)
        keys = d.text.lower().translate(None, KIND_OUT).split(b"\n")  # (its digits are 0s: out with the other digits)
        present = set(keys)
        # (a cut piece is in the digest though no line read here: its key is none of theirs unless another line has it)
        for piece in (d.head_cut if begin > 0 else None, d.tail_cut):
            if piece is not None and keys.count(key := piece.lower().translate(None, KIND_OUT)) == 1:
                present.discard(key)
        if len(present) > FAST_SEEN:
            return False
        long_keys = any(len(k) > KIND_CHARS for k in present)
        present = {k[:KIND_CHARS] for k in present}
        if len(present) > FAST_KINDS or any(k not in self.kinds and k not in self.plain for k in present):
            return False
        found: dict[bytes, list[tuple[int, bytes]]] = {k: [] for k in present if k in self.kinds}
        wanted, total = len(found), newlines(block, begin, end)
        stop = end - 1  # (the newline that ends the line read next, from the last)
        for back in range(BACK_LINES):
            if not wanted or stop < begin:
                break
            start = block.rfind(b"\n", begin, stop) + 1 or begin
            line = block[start:stop]
            last = found.get(line.lower().translate(None, KIND_OUT)[:KIND_CHARS])
            if last is not None and len(last) < KEPT:
                last.append((self.lines + total - back, line))
                if len(last) == KEPT:
                    wanted -= 1
            stop = start - 1
        else:
            return False  # (a kind seldom in the block: read slice by slice)
        if found:  # each kind's lines counted (run_numbers reads "on every line" from them): one C-level pass each
            every = block[begin:end].lower().translate(None, KIND_OUT).split(b"\n")
            if long_keys:
                every = [k[:KIND_CHARS] for k in every]
            for key in found:
                self.kinds[key].count += every.count(key)
        for key, last in found.items():
            self.kinds[key].last.extend(reversed(last))
        self.lines += total
        return True

    def remember_plain(self, key: bytes) -> None:
        """A kind of line that is neither progress nor a mark: not looked at again (PLAIN kinds at most, then forgotten)."""
        if len(self.plain) >= PLAIN:
            self.plain.clear()
        self.plain.add(key)

    def after(self, line: int) -> Optional[tuple[int, str]]:
        """(line, text) of a progress line after `line` whose kind stands PROGRESS_AFTER or more times after it, their
        numbers moving (not one line repeated as it was), or None. Of each kind its last KEPT lines are looked at: the
        line given is the first of those after `line`."""
        best: Optional[tuple[int, bytes]] = None
        for kind in self.kinds.values():
            later = [(n, text) for n, text in kind.last if n > line]
            if len(later) < PROGRESS_AFTER or len({text for _, text in later}) < 2:
                continue
            if best is None or later[0][0] < best[0]:
                best = later[0]
        return (best[0], shown(best[1])) if best is not None else None

    def ended_before(self, start: int, after: int, within: int) -> Optional[tuple[int, str]]:
        """(line, text) of a run's own end after line `after` and at most `within` lines before line `start` (a later run's
        start), or None: the run before that start ended by its own words."""
        return next(((n, text) for n, text in reversed(self.ends) if after < n < start and start - n <= within), None)

    def fallback_after(self, first: int) -> Optional[tuple[int, str, int]]:
        """(line, text, exception's line) of the first library fallback that stands right after an exception's line
        printed at or after line `first` (the failure's), or None."""
        return next(((n, text, raised) for n, text, raised in self.fallbacks if raised >= first > 0), None)

    def moved_after(self, line: int, failed: frozenset = frozenset()) -> Optional[tuple[int, str]]:
        """(line, text) of the first progress line or stage line after `line` (a run that started again got somewhere),
        or None. Not a line in `failed` (a failure's own line that holds a progress word: flower's "Command [...
        'num-rounds=150' ...] returned non-zero exit status 1", printed again by the run started again, is no progress)."""
        found = [(n, text) for n, text in self.stages if n > line and n not in failed][:1]
        for kind in self.kinds.values():
            later = next(((n, shown(text)) for n, text in kind.last if n > line and n not in failed), None)
            if later is not None:
                found.append(later)
        return min(found) if found else None


    def again_after(self, line: int, before: int) -> Optional[tuple[int, str]]:
        """(line, text) of the first progress line after `line` whose kind also stands before line `before` (of its last
        KEPT occurrences): the program that printed it before prints it again, or None. One line of a kind never seen
        before is no run of this program's (a package list pasted after the failure: "accelerate 0.25.0" reads as an
        accuracy)."""
        found = [next((n, shown(text)) for n, text in kind.last if n > line) for kind in self.kinds.values()
                 if any(n < before for n, _ in kind.last) and any(n > line for n, _ in kind.last)]
        return min(found) if found else None

    def finite_after(self, line: int, key: str) -> Optional[tuple[int, str]]:
        """(line, text) of the first of PROGRESS_AFTER or more lines of one kind after `line`, their numbers moving, that
        each log the value named `key` (a loss: "mean_loss", Trainer's "loss") as a finite number, or None: the value a
        warning read as nan, inf or Trainer's 0.0 up to `line` is logged finite again after it (an earlier run's, or a
        step the run got over). A line that holds nan or inf beside it (an average column: "total_loss: 6.72 (inf)") is
        none of them."""
        named = re.compile(rb"(?<![\w/])" + re.escape(key.lower().encode()) + rb"['\"]?\s?[:=]\s?(?!0\.0,)[-+]?\d")
        best: Optional[tuple[int, bytes]] = None
        for kind in self.kinds.values():
            later = [(n, text) for n, text in kind.last if n > line]
            if (len(later) < PROGRESS_AFTER or len({text for _, text in later}) < 2
                    or not all(named.search(text.lower()) and not NOT_FINITE.search(text) for _, text in later)):
                continue
            if best is None or later[0][0] < best[0]:
                best = later[0]
        return (best[0], shown(best[1])) if best is not None else None


    def diverging(self) -> Optional[tuple[str, tuple[int, float, str], tuple[int, float, str]]]:
        """(the loss's name, (line, value, text) of its first value shown, and of its last) where a loss a kind of progress
        line logs grows by orders of magnitude and stays there (DIVERGED), or None. Of each kind its first line and its
        last KEPT are read: the last value is at least GROWTH times the smallest before it and at least DIVERGED_AT, and
        no lower than half the largest (a spike the run got over is not it)."""
        for kind in self.kinds.values():
            seen = ([kind.first] if kind.first else []) + [x for x in kind.last if not kind.first or x[0] != kind.first[0]]
            if len(seen) < DIVERGED_LINES:
                continue
            series: dict[str, list[tuple[int, float, bytes]]] = {}
            for n, text in seen:
                for m in LOSS_VALUE.finditer(text):
                    series.setdefault(m["key"].decode("ascii").lower(), []).append((n, float(m["value"]), text))
            for key, values in series.items():
                if len(values) < DIVERGED_LINES or NOT_A_LOSS.search(key):
                    continue
                n, last, text = values[-1]
                low = min((v for _, v, _ in values[:-1] if v > 0), default=0.0)
                if low and last >= DIVERGED_AT and last >= GROWTH * low and last >= max(v for _, v, _ in values) / 2:
                    at = next(x for x in values if x[1] == low)
                    return key, (at[0], low, shown(at[2])), (n, last, shown(text))
        return None


# A loss a progress line logs, by its name and value: "loss: 1.23", "train_loss=6.58e-02", "'loss': 3.2", a JSON log's
# '"loss": "6.02"', fairseq's "| loss 6.02 |", BasicSR's
# "l_g_pix: 2629759188236749127024640.0000" (its losses are named l_<what>, TencentARC/GFPGAN#270)
LOSS_VALUE = re.compile(
    rb"(?<![\w/.])(?P<key>\w*loss\w*|l_[a-z]\w*)(?:['\"]?\s?[:=]\s?['\"]?| )(?P<value>\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)(?![\w.])", re.IGNORECASE)
# A loss that diverges: in DIVERGED_LINES or more lines of one kind its last value is GROWTH times the smallest before it
# (three orders of magnitude: no schedule or curriculum moves a loss that far up; heldout24's GFPGAN#270 grows five in
# three lines) and DIVERGED_AT or more. Not a loss that grows as it should (a center loss from 0.5 to 87 as its centres
# separate, dev8w's caffe log), nor one that is large and stays (an RL loss near 3.5e10 over a whole run, heldout22w).
GROWTH = 1e3
DIVERGED_AT = 1e4
# A name with "loss" in it that is no loss: fp16's dynamic loss scale grows by powers of two as it should (DeepSpeed's
# "loss_scale=65536", fairseq's "loss_scale 128"), and a loss's weight or count is a setting
NOT_A_LOSS = re.compile(r"scal|weight|coef|count|num|lambda|factor|ratio")
DIVERGED_LINES = 3


# A value that is not a finite number, as logs print it (Python's nan/inf, numpy's, C's -nan).
NOT_FINITE = re.compile(rb"(?i)(?<![\w.])-?(?:nan|inf)(?![\w])")


def shown(line: bytes) -> str:
    return line.decode("utf-8", "replace").strip()[:200]


def run_end(text: str) -> bool:
    """A line a run writes as it ends, in its own words that its work is done (knowledge/ending.py ENDED, LAST_ENDED;
    `own_end`), not a save it makes as it trains."""
    return ((ENDED.search(text) is not None or LAST_ENDED.search(text) is not None) and own_end(text)
            and PERIODIC_SAVE.search(text) is None)


def own_end(text: str) -> bool:
    """An end line in the job's own words that its work is done, not a teardown's (TEARDOWN_END)."""
    return bool(text) and TEARDOWN_END.search(text) is None


def set_up_step(message: str) -> bool:
    """A shell's report that it could not run a set-up step of the script (SET_UP), not the job's own command."""
    return SET_UP.match(message.strip()) is not None


def noted(text: str) -> bool:
    """The line is a program's record at INFO or DEBUG level (evidence.py INFO_RECORD, at its head; no error level) that a part of
    it is not there or not used (UNAVAILABLE): what failed to load is quoted in it, and the program goes on without the part."""
    return (INFO_RECORD.search(text, 0, RECORD_HEAD) is not None and error_level(text) is None and WARNING_RECORD.search(text, 0, RECORD_HEAD) is None
            and UNAVAILABLE.search(text) is not None)


def warned(text: str) -> bool:
    """The line is a library's warning-level record (WARNING_RECORD)."""
    return WARNING_RECORD.search(text) is not None
