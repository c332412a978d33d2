"""A paste of a terminal session: the commands the user typed at a shell prompt, and which
failure an attempt run again afterwards made stale.

Users paste what their terminal shows, prompts included: a command fails, they correct it
(a typo, a flag's value) and run it again, and the paste goes on with what the second run
printed. The first run's failure is then not the job's: it is an earlier attempt's
(NVIDIA/nccl#719: `python -m torch.distribute.launch` fails with "No module named
'torch.distribute'", and the same command with `torch.distributed` runs next, then the paste
ends; huggingface/text-generation-inference#1451: `--disable-custom-kernels True` is refused,
the command runs again after `export DISABLE_CUSTOM_KERNELS=true` and starts).

`Prompts` reads every block of the input (as `ending.Tail` does) and keeps the commands typed at
a prompt, with their line numbers. `rerun_after(line)` is the later command that runs the same
command again as the one whose output holds `line` (a near-identical command line, or the same
program and script), or None. Another command after a failure (`nvidia-smi`, `pip list`, `cat
config.yaml`) is the user looking into it, not an attempt: it never makes a failure stale.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Optional

from gpudoctor.knowledge.prefilter import may_hold, newlines

# A command typed at a shell prompt, as terminals show it: `user@host:dir$ cmd` (bash's default,
# with a conda/venv `(env) ` before it), `[user@host dir]$ cmd` (RHEL's), `user@host dir % cmd` (macOS zsh's),
# `➜  dir git:(main) ✗ cmd` (oh-my-zsh's), a bare `$ cmd`, PowerShell's `PS C:\dir> cmd` and cmd.exe's
# `C:\dir>cmd` (a Windows path holds no `:` past its drive: a warning's `C:\...\x.py:35: FutureWarning` is no prompt).
PROMPT = re.compile(
    rb"^(?:\([\w.\-]{1,60}\) )?(?:[\w.\-]{1,40}@(?P<host>[\w.\-]{1,80}):[^\n$#]{0,200}[$#] |\[[\w.\-]{1,40}@(?P<host2>[\w.\-]{1,80})[^\n\]]{0,200}\][$#] "
    rb"|[\w.\-]{1,40}@(?P<host3>[\w.\-]{1,80}) [^\n%@]{0,200}% |\xe2\x9e\x9c {1,2}\S{1,100}(?: git:\([^)\n]{0,100}\))?(?: \xe2\x9c\x97)? |\$ "
    rb"|PS [A-Za-z]:\\[^\n>:]{0,200}> |[A-Za-z]:\\[^\n>:]{0,200}>)(?P<command>\S[^\n]*)$",
    re.MULTILINE,
)
# The byte a prompt line holds right before its command (`$ `, `# `, `% `, a Windows path's `\`, the first of `➜`): lines that hold
# none are never matched. Single bytes, found with memchr: a log's blocks are mostly steps and warnings, and a
# regex (or a two-byte search) over each whole block would cost more than the rest of the read.
NEEDLES = (b"$", b"#", b"%", b"\\", b"\xe2")
CHECKS = 4096  # occurrences of a needle looked at per block, at most (a paste of a terminal session is short)
PARTIAL = 4096  # what of a line that runs past a block is kept: its head (a prompt and its command)
KEPT = 64  # commands remembered (the first and the latest): a log is not a terminal session
# What precedes the program on a command line and says nothing of which command it is.
ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=\S*$")
WRAPPERS = ("sudo", "env", "nohup", "time", "exec")
SAME_LINE = 0.8  # how alike two command lines are (difflib's ratio) to be one command run again
# The node a launch command starts (torchrun's --node_rank, accelerate's --machine_rank, NODE_RANK=): the same command with
# another node's rank is the job's other node, started beside it (karpathy/nanoGPT#55 pastes both), not a rerun.
# A person's sentence that says the output after it is a setup's that works: "In ubuntu 20.04 (working phosa) I see:", "it
# produces the correct results. Here's how the output looks like:" (facebookresearch/phosa#29: the thread's title quotes the
# failure of the other machine; the paste is the working one's). Present tense only: "it was working before", "it used to
# produce the correct results" say the failing setup once worked, and its failure stays the job's.
WORKING = re.compile(
    rb"produces the (?:correct|expected|right) (?:results?|output)|\(working [\w.\-]{1,40}\)"
    rb"|(?:here is|here's|this is) (?:the |my )?(?:output|log) (?:of|from|on) (?:the |my |a )?(?:working|successful) (?:run|machine|setup|environment|install)",
    re.IGNORECASE,
)
WORKING_LINES = 2000  # lines of the input searched for such a sentence (a thread's paste is short; a job's log holds none)
WORKING_KEPT = 4
# The programs that run a script (`script_run_after`): an interpreter, a launcher, an environment's runner.
RUNNER = re.compile(r"^(?:python[\d.]*|py|pypy\d*|torchrun|deepspeed|accelerate|srun|mpirun|mpiexec|horovodrun|uv|conda|poetry|pipenv)$")
NODE_RANK = re.compile(r"(?:--node[_-]rank|--machine[_-]rank|\bNODE_RANK|\bMACHINE_RANK)[= ]+(\d+)")


@dataclass(frozen=True)
class Command:
    line: int
    text: str
    host: str = ""  # the host its prompt names (user@host), '' when it names none

    def words(self) -> list[str]:
        """The command's words without the environment assignments and wrappers before the program."""
        words = self.text.replace("\\", " ").split()
        while words and (ASSIGNMENT.match(words[0]) or words[0] in WRAPPERS):
            words = words[1:]
        return words

    def runs_again(self, other: "Command") -> bool:
        """`self`, typed later, runs `other` again: the same program, subcommand and script (its first three
        words that are no option), or a command line nearly the same (one corrected word). `pip install ninja`
        after `pip install flash-attn` runs another command; a shell builtin that sets something up (`export`,
        `cd`) runs nothing. The words that name the command (the program, its subcommand and what it acts on, up to the
        first option: `identity`) must each be the same or a typo of it: `k get daemonsets` after `k get pods` lists
        another thing (NVIDIA/gpu-operator#193, heldout27), `nvidia-smi` after `nvidia-smiu` runs the command meant
        (dusty-nv/jetson-containers#125)."""
        mine, theirs = self.words(), other.words()
        if not mine or not theirs or mine[0] in ("export", "cd", "source", ".", "set", "unset"):
            return False
        if not alike(mine[0].rsplit("/", 1)[-1], theirs[0].rsplit("/", 1)[-1]):
            return False
        if not all(alike(a, b) for a, b in zip(identity(mine), identity(theirs))):
            return False
        if self.host and other.host and self.host != other.host:
            return False  # typed on another machine: the job's other node
        ranks = NODE_RANK.search(self.text), NODE_RANK.search(other.text)
        if ranks[0] is not None and ranks[1] is not None and ranks[0].group(1) != ranks[1].group(1):
            return False
        if [w for w in mine if not w.startswith("-")][:3] == [w for w in theirs if not w.startswith("-")][:3]:
            return True  # the same program, subcommand and script (pip install flash-attn, then with --no-build-isolation)
        return difflib.SequenceMatcher(None, " ".join(mine)[:300], " ".join(theirs)[:300]).ratio() >= SAME_LINE


IDENTITY_WORDS = 3  # the words that name a command: its program, subcommand and what it acts on
TYPO_ALIKE = 0.8  # how alike two words are (difflib's ratio) to be one word mistyped
TYPO_SHORTEST = 4  # characters of a word below which only the same word is alike


def identity(words: list[str]) -> list[str]:
    """The words that name a command, before its first option (at most IDENTITY_WORDS)."""
    out = []
    for word in words[:IDENTITY_WORDS]:
        if word.startswith("-"):
            break
        out.append(word)
    return out


def alike(a: str, b: str) -> bool:
    """The same word, or one mistyped (`nvidia-smiu` for `nvidia-smi`, `pyhton` for `python`): not another word, nor another
    version of it (`python3` after `python` is another interpreter: heldout19's detectron2-licenseplates#3 ran `python
    train.py`, then pasted `python3 train.py` at the prompt below its 'Killed')."""
    if a == b:
        return True
    if a.rstrip("0123456789.") == b.rstrip("0123456789."):
        return False
    return min(len(a), len(b)) >= TYPO_SHORTEST and difflib.SequenceMatcher(None, a, b).ratio() >= TYPO_ALIKE


def base_name(path: str) -> str:
    """A path's last part, whichever separator it uses."""
    return path.replace("\\", "/").rsplit("/", 1)[-1]


class WholeLines:
    """A stream read by whole lines as its blocks go by (`feed`, or `tee` around a reader's callback), with line numbers
    as the scanner counts them (1-based, over the same normalised text); `read` is what a reader does with them."""

    def __init__(self) -> None:
        self.lines = 0  # newlines seen before the current block
        self.partial = b""  # the unfinished last line of the previous block

    def feed(self, chunk: bytes) -> None:
        """A block of the input: its whole lines are read in place (a block is megabytes: never copied); the
        unfinished last line waits for the next block (its head only: what the readers look for starts a line)."""
        begin = 0
        if self.partial:
            nl = chunk.find(b"\n")
            if nl == -1:
                self.partial = (self.partial + chunk)[:PARTIAL]
                return
            head, self.partial = self.partial + chunk[: nl + 1], b""
            self.read(head, 0, len(head))
            begin = nl + 1
        cut = chunk.rfind(b"\n") + 1
        if cut > begin:
            self.read(chunk, begin, cut)
        self.partial = chunk[max(cut, begin) :][:PARTIAL]

    def read(self, block: bytes, begin: int, end: int) -> None:
        """The whole lines block[begin:end] (and self.lines counted past them)."""
        self.lines += newlines(block, begin, end)

    def line_at(self, block: bytes, begin: int, end: int, at: int) -> tuple[int, str]:
        """The number (as the scanner counts) and the text (spaces collapsed, 200 characters at most) of the whole line of
        block[begin:end], read now, that holds position `at`."""
        start = block.rfind(b"\n", begin, at) + 1 or begin
        stop = block.find(b"\n", at, end)
        text = block[start:end if stop == -1 else stop].decode("utf-8", "replace")
        return self.lines + block.count(b"\n", begin, at) + 1, " ".join(text.split())[:200]

    def end(self) -> None:
        """The input ended: its last line, if it had no newline, is read too."""
        if self.partial:
            chunk, self.partial = self.partial + b"\n", b""
            self.feed(chunk)

    def tee(self, other):
        def both(chunk: bytes) -> None:
            other(chunk)
            self.feed(chunk)

        return both


class HeadLines(WholeLines):
    """A stream of which only the first HEAD bytes are read, by whole lines, each block searched only where it may hold
    one of NEEDLES (prefilter.may_hold): what a job prints as it starts (a framework's device line, NCCL's interface).
    `read_head` is what a reader does with them."""

    HEAD = 1 << 20
    NEEDLES: tuple[bytes, ...] = ()

    def __init__(self) -> None:
        super().__init__()
        self.seen = 0  # bytes of the head read so far

    def read(self, block: bytes, begin: int, end: int) -> None:
        stop = end if self.seen + end - begin <= self.HEAD else block.rfind(b"\n", begin, begin + max(self.HEAD - self.seen, 0)) + 1 or begin
        if stop > begin:
            self.seen = self.HEAD if stop < end else self.seen + end - begin
            words = set(may_hold(block, self.NEEDLES))
            if words:
                self.read_head(block, begin, stop, words)
        self.lines += newlines(block, begin, end)

    def read_head(self, block: bytes, begin: int, end: int, words: set[bytes]) -> None:
        """The whole lines block[begin:end] of the head; `words`: the NEEDLES the block may hold."""


class Prompts(WholeLines):
    """The commands typed at a prompt in a stream, fed block by block (`feed`)."""

    def __init__(self) -> None:
        super().__init__()
        self.commands: list[Command] = []
        self.working: list[tuple[int, str]] = []  # sentences that say the output after them is a working setup's (WORKING)

    def read(self, block: bytes, begin: int, end: int) -> None:
        """The whole lines block[begin:end]."""
        for start in sorted(self.candidates(block, begin, end)):
            m = PROMPT.match(block, start, end)
            if m is not None:
                host = (m.group("host") or m.group("host2") or m.group("host3") or b"").decode("utf-8", "replace")
                self.keep(Command(self.lines + block.count(b"\n", begin, start) + 1, m.group("command").decode("utf-8", "replace").strip(), host))
        if self.lines < WORKING_LINES and len(self.working) < WORKING_KEPT:
            # only the input's first WORKING_LINES lines: a block is megabytes, and a case-blind search of all of
            # it cost a third of diagnose's speed on an ordinary log
            upto = begin
            for _ in range(WORKING_LINES - self.lines):
                nl = block.find(b"\n", upto, end)
                if nl == -1:
                    upto = end
                    break
                upto = nl + 1
            for w in WORKING.finditer(block, begin, upto):
                start = block.rfind(b"\n", begin, w.start()) + 1 or begin
                stop = block.find(b"\n", w.end(), end)
                text = block[start : stop if stop != -1 else end].decode("utf-8", "replace").strip()[:200]
                self.working.append((self.lines + block.count(b"\n", begin, start) + 1, text))
                if len(self.working) >= WORKING_KEPT:
                    break
        self.lines += newlines(block, begin, end)

    @staticmethod
    def candidates(block: bytes, begin: int, end: int) -> set[int]:
        """The starts of the lines that hold a needle near their start ($ and # followed by a space)."""
        starts: set[int] = set()
        for needle in NEEDLES:
            at, looked = block.find(needle, begin, end), 0
            while at != -1 and looked < CHECKS:
                looked += 1
                if needle == b"\\" or block[at + 1 : at + 2] == b" " or needle == b"\xe2" and block[at + 1 : at + 3] == b"\x9e\x9c":
                    start = block.rfind(b"\n", begin, at) + 1 or begin
                    if at - start <= 300:
                        starts.add(start)
                at = block.find(needle, at + 1, end)
        return starts

    def working_after(self, line: int) -> Optional[tuple[int, str]]:
        """The first sentence after `line` that says the output after it is a working setup's, or None."""
        return next((w for w in self.working if w[0] > line), None)

    def keep(self, command: Command) -> None:
        if len(self.commands) >= KEPT:
            del self.commands[1]  # the first stays: the command a paste starts with
        self.commands.append(command)

    def rerun_after(self, line: int) -> Optional[tuple[Command, Command]]:
        """(the command whose output holds `line`, the later command that runs it again), or None:
        no prompt before the line, or no later command that runs the same one again."""
        before = [c for c in self.commands if c.line < line]
        if not before:
            return None
        ran = before[-1]
        again = next((c for c in self.commands if c.line > line and c.runs_again(ran)), None)
        return (ran, again) if again is not None else None

    def script_run_after(self, line: int, scripts: list[str]) -> Optional[Command]:
        """The first command after `line` that runs one of `scripts` (the files a traceback ending at `line` names), where the
        paste shows no command before `line`: it starts in the output of a run of that script, and the script was run again
        (heldout26 YYuX-1145/Bert-VITS2-Integration-package#21: an IndentationError at train_ms.py line 58, then the prompt's
        `python train_ms.py -c ./configs/config.json`, whose run goes on past it). Or None."""
        names = {base_name(name) for name in scripts if name.endswith(".py")}
        if not names or any(c.line < line for c in self.commands):
            return None
        for c in self.commands:
            words = [w for w in c.words() if not w.startswith("-")][:3]
            # run by an interpreter or a launcher, or as itself (./train.py); `cat train.py`, `vim train.py` look into it
            if (c.line > line and words and (base_name(words[0]) in names or RUNNER.match(base_name(words[0])))
                    and any(base_name(w) in names for w in words)):
                return c
        return None


# A log that several runs were appended to (`nohup python train.py >> nohup.out` run again, issue 35's whole logs): a run
# fails, and the program is started again in the same file. Its opening lines (a banner, the settings it prints, a
# library's set-up notice) then stand again after the failure: the program started anew, and the failure before it is
# an earlier run's (dev7w: "Setting ds_accelerator to cuda (auto detect)" and DeepSpeed's cache warning stand again after a
# ValueError, then the run trains and ends,
# https://github.com/LIU-Hao-2002/GRPO_project/blob/0983847ee400603cbf7402314a94e1caa816bb02/logs/nohup.out).
# `Openings` keeps the input's first OPENING_LINES lines that say no failure, each by its longest stretch without
# digits (a literal found with memchr in every block, never a regex over the whole input), and where each stands again.
# A line a run prints over and over (a step's line, an evaluation's set-up) is no opening: past OPENING_REPEATS
# occurrences it is dropped, and one seen more than once before a failure starts no new run after it (`restart_after`).
OPENING_LINES = 20
OPENING_SCAN = 400  # lines of the input read for them, at most
OPENING_MIN = 16  # characters of a line's longest stretch without digits: shorter ones say too little to be one program's
OPENING_REPEATS = 16
# An opening printed at every start of a log many runs were appended to (heldout17w: a Lightning-Hydra template's
# "Enforcing tags! <cfg.extras.enforce_tags=True>" at each of 90 starts,
# https://github.com/AnudeepReddy-Katta/cifar10/blob/a8a89bd9e212779939624c9d899d57747c5eeca2/train.log) is kept up to
# OPENING_KEPT occurrences: past OPENING_REPEATS it is no start by itself (`restart_after(repeated=True)` asks more of it).
OPENING_KEPT = 512
REPEATED_STARTS = 3  # openings looked at for a start printed at every run's start: the log's first ones
LOGGED_FRAME = re.compile(r"\]\s{2,}\S|\^{3,}")
# (a traceback's frames and the source lines they quote; a rank's own line: every rank prints the same opening, one
# before another's failure and one after it, heldout4's karpathy/nanoGPT#545)
# A Markdown code fence that names a programming language (```python): what it holds is the source the reporter pasted, not
# what a run printed, and its lines are no opening: a line of a snippet pasted again further on (the working variant of
# the code, Oneflow-Inc/oneflow#8668: "a = oneflow.randn(2, 2)" in the failing snippet and again in the working one) starts
# no run. A fence with no language, or a shell's (```bash, ```console), may hold a run's output: its lines stay read.
CODE_FENCE = re.compile(rb"^\s*(?:>\s*)?```\s*(?P<lang>[\w+#.\-]*)")
SOURCE_LANGUAGES = frozenset((b"python", b"py", b"python3", b"ipython", b"julia", b"jl", b"lua", b"c", b"cpp", b"c++", b"cxx", b"cuda",
                              b"java", b"scala", b"go", b"rust", b"rs", b"js", b"javascript", b"ts", b"typescript", b"r", b"matlab",
                              b"yaml", b"yml", b"json", b"toml", b"ini", b"cfg", b"dockerfile", b"diff"))
# (pip prints its summary of a failed step twice, in its box and after it: "× Getting requirements to build wheel did not run
# successfully.", "│ exit code: 1": no start of a run)
NOT_OPENING = re.compile(rb"error|exception|interrupt|traceback|fail|fatal|killed|abort|File \"|^\s|^\[?(?:rank|default)?\d+\]?:"
                         rb"|did not run successfully|^(?:\xc3\x97|\xe2\x94\x82|\xe2\x95\xb0)", re.IGNORECASE)
DIGITS = re.compile(rb"\d+")


class Openings(WholeLines):
    """The input's opening lines and the lines where they stand again, fed block by block (`feed`)."""

    def __init__(self) -> None:
        super().__init__()
        self.needles: dict[bytes, list[int]] = {}  # an opening's literal -> the lines it stands on (its own first)
        self.texts: dict[bytes, str] = {}  # an opening's literal -> its whole line, as it first stood
        self.dropped: set[bytes] = set()  # openings printed past OPENING_KEPT times: no run's start
        self.often: set[bytes] = set()  # openings printed past OPENING_REPEATS times: a start only as `repeated`
        self.scanned = 0  # lines of the input looked at for openings
        self.in_source = False  # the scan is inside a code fence that names a language (CODE_FENCE)
        self.in_fence = False

    def read(self, block: bytes, begin: int, end: int) -> None:
        """The whole lines block[begin:end]: openings taken from the input's first lines, then every opening found."""
        at = begin
        while self.scanned < OPENING_SCAN and len(self.needles) + len(self.dropped) < OPENING_LINES and at < end:
            nl = block.find(b"\n", at, end)
            stop = nl if nl != -1 else end
            line = block[at:stop].rstrip(b"\r")
            self.scanned += 1
            fence = CODE_FENCE.match(line) if line.count(b"```") == 1 else None  # (```x``` on one line is inline code)
            if fence is not None:
                self.in_fence = not self.in_fence
                self.in_source = self.in_fence and fence.group("lang").lower() in SOURCE_LANGUAGES
            elif self.in_source or PROMPT.match(line) is not None:
                pass  # a line of pasted source, or a command typed at a prompt (whether it runs the job again is `Prompts`')
            elif line.strip() and not line.startswith(b"#") and NOT_OPENING.search(line) is None:
                needle = max(DIGITS.split(line.strip()), key=len)
                if len(needle) >= OPENING_MIN and needle not in self.needles and needle not in self.dropped:
                    self.needles[needle] = []
                    self.texts[needle] = line.decode("utf-8", "replace").strip()[:200]
            at = stop + 1
        found: list[tuple[int, bytes]] = []
        for needle in list(self.needles):
            pos, n = block.find(needle, begin, end), 0
            while pos != -1 and n <= OPENING_KEPT:  # (past that it is dropped: a line the run repeats)
                found.append((pos, needle))
                n += 1
                pos = block.find(needle, pos + len(needle), end)
        counted, number = begin, self.lines + 1
        for pos, needle in sorted(found):
            if needle in self.dropped:
                continue
            number += block.count(b"\n", counted, pos)
            counted = pos
            seen = self.needles[needle]
            if not seen or seen[-1] != number:
                seen.append(number)
            if len(seen) > OPENING_REPEATS:
                self.often.add(needle)
            if len(seen) > OPENING_KEPT:
                del self.needles[needle]
                self.dropped.add(needle)
        self.lines += newlines(block, begin, end)

    def starts(self) -> list[tuple[bytes, list[int]]]:
        """The first REPEATED_STARTS openings, by where they first stood, that are neither a logger's prefix the next line
        holds too nor a traceback a logger wrote under its prefix (torch._dynamo's "W0530 ... convert_frame.py:1233]
        guarded_code = compile_inner(...)", every line of each of its WON'T CONVERT tracebacks,
        https://github.com/AkramjitS/gpt-lab-diffusion/blob/0dff6e1bc406ca0f8d347dfcfe7e89e3928a724a/train.log)."""
        return [(needle, seen) for needle, seen in self.needles.items()
                if not LOGGED_FRAME.search(self.texts[needle]) and not (len(seen) > 1 and seen[1] == seen[0] + 1)][:REPEATED_STARTS]

    def restart_after(self, first: int, last: int, repeated: bool = False) -> Optional[tuple[int, str]]:
        """(line, opening) of the first opening that stands again after line `last`, having stood before it (the start of
        the run that failed) and at most once before line `first` (a program's start printed again, not a line its run
        repeats), or None. `repeated`: also an opening that stood more often before (at each start of a log many runs
        were appended to, or a line one run repeats: the caller asks for more, knowledge/story.py `earlier_run`)."""
        best: Optional[tuple[int, str]] = None
        for needle, seen in (self.needles.items() if not repeated else self.starts()):
            if not repeated and (needle in self.often or sum(1 for n in seen if n < first) > 1) or not any(n < last for n in seen):
                continue
            again = next((n for n in seen if n > last), None)
            if again is not None and (best is None or again < best[0]):
                best = (again, self.texts[needle])
        return best



# Where a log several runs were appended to starts a run again, as its own lines show (not only repeat):
# - Python's uncaught exception ends its process with a traceback whose outermost frame is the script's top level
#   (`<module>`, or runpy's under `python -m`). One whose every frame is a module's top level through an import, or a
#   compile error of the script (SyntaxError's frame names no function: `File "train.py", line 232`), is a
#   process that had just started: after a process ended, a new run of the program (dev7w: a KeyboardInterrupt, rounds
#   of training, then starts failing on "No module named 'torch'",
#   https://github.com/vinaikchhetri/WAFFLE-WM/blob/7b09509b44bcdc9209c2fdc09e053a4005dfbbdd/logs/nohup.out; heldout20w:
#   accelerate's ValueError under trainer.train(), then the script's own SyntaxError,
#   https://github.com/Viola868/deepseek_training/blob/e92843f895a592e816604e541afb72871dea9fd2/train.err). A traceback
#   another one's exception chains to is the same process's; code typed at a prompt (`<stdin>`, `<string>`) is a person
#   trying something; a traceback with no exception's line after its frames (a paste cut it) ended nothing we can tell.
# - A batch scheduler's own lines bound its jobs, whatever the program printed: LSF mails each job's report into the
#   output file ("Sender: LSF System <lsfadmin@host>", then the job's status, "Exited with exit code 1.", and only then the
#   job's own output: heldout20w's six reports appended,
#   https://github.com/GraphFramEx/graphframex/blob/f847f39af5ecb7bb9e6032afd54b04e7c0de0e9e/job.out), and Slurm's step
#   daemon ends a job it cancels ("slurmstepd: error: *** JOB 267031 ON dgx-15 CANCELLED AT 2025-08-21T02:33:05 ***"): the
#   next line that is not the scheduler's own (srun's and slurmstepd's words about the same end) is a later job's
#   (heldout18w: seven jobs appended to one file, https://github.com/heisenyan/openvla-oft, slurm.out).
PROCESS_STARTED = "a Python process of the program that had just started failed there, after one ended"
JOB_STARTED = "the batch scheduler's next job starts there"
# How the case `restarted` of log-inconclusive says the program started again, by what stands at the restart.
RESTART_HOW = {PROCESS_STARTED: "a Python process of it failed at its start after one ended", JOB_STARTED: "the batch scheduler's next job starts"}
TRACEBACK_HEADER = b"Traceback (most recent call last)"
FRAME_LINE = re.compile(rb'[ \t]{0,8}File "(?P<path>[^"\n]{1,400})", line \d+(?:, in (?P<func>\S{1,200}))?[ \t\r]*$')
EXCEPTION_CLASS = re.compile(rb"\s*(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Interrupt|Exit)")
CHAINING = b"above exception"  # "During handling of the above exception", "The above exception was the direct cause"
CHAIN_BYTES = 600  # how far before a traceback its chaining words are looked for (CHAIN_GAP lines)
TOP_LEVEL = frozenset((b"<module>", b"_run_module_as_main", b"_run_code"))
FRAME_GAP = 4  # lines from one frame to the next at most (its source line, a caret line or two)
RAISED_GAP = 6  # lines from a traceback's last frame to its exception's line at most (the source line, carets, another process's)
CHAIN_GAP = 3  # lines from a chained exception's words to its traceback at most
START_SPAN = 40  # lines a start-up traceback takes at most (a few frames of imports, the compile error's caret)
LSF_REPORT = b"Sender: LSF System <"
CANCELLED = b"CANCELLED AT "
SLURM_CANCEL = re.compile(rb"\*\*\* (?:JOB|STEP) \S+ ON \S+ CANCELLED AT ")
SCHEDULER_OWN = (b"srun", b"slurmstepd", b"sbatch", b"salloc")
KEPT_STARTS = 64  # starts of each kind remembered (the first and the latest)
LOOKED = 4096  # occurrences of each needle looked at per block, at most (a log is not a wall of tracebacks)
INDENTS = (b" ", b"\t", b"\n", b"\r", b"")
FRAME_NEEDLE = b'File "'
RUN_NEEDLES = (TRACEBACK_HEADER, FRAME_NEEDLE, LSF_REPORT, CANCELLED)


@dataclass
class Printed:
    """A traceback as `RunStarts` reads it: its first line, and its frames' functions (None: a compile error's)."""

    line: int
    chained: bool
    funcs: list[Optional[bytes]] = field(default_factory=list)
    last: int = 0
    typed: bool = False  # its outermost frame is code typed at a prompt (<stdin>, <string>)
    raised: bool = False  # an exception's line follows its frames (a traceback a paste cut is no process's end)

    def ended_process(self) -> bool:
        return bool(self.funcs) and self.raised and not self.typed and (self.funcs[0] is None or self.funcs[0] in TOP_LEVEL)

    def just_started(self) -> bool:
        """Every frame a module's top level, through an import (two frames or more) or down to a compile error: a process
        that had just started. One top-level frame alone is no start: a script's top-level loop whose call into C raised
        prints that too, at any step (a CUDA error, an out-of-memory)."""
        return (self.ended_process() and all(f is None or f in TOP_LEVEL for f in self.funcs)
                and (len(self.funcs) > 1 or self.funcs[0] is None))


def first_byte_of_line_before(block: bytes, begin: int, start: int, carried: bytes) -> bytes:
    """The first byte of the line before the one at `start` (`carried`: the previous block's last line's)."""
    if start <= begin:
        return carried
    before = block.rfind(b"\n", begin, start - 1) + 1 or begin
    return block[before : before + 1]


def keep(starts: list, start) -> None:
    """`start` remembered, past KEPT_STARTS in place of the second oldest (the first stays)."""
    if starts and starts[-1] == start:
        return
    if len(starts) >= KEPT_STARTS:
        del starts[1]
    starts.append(start)


class RunStarts(WholeLines):
    """The lines where a run starts again, as the log's own lines show, fed block by block (`feed`): a Python process of
    the program failing at its start after one ended (`starts`), a batch scheduler's next job (`jobs`)."""

    def __init__(self) -> None:
        super().__init__()
        self.current: Optional[Printed] = None
        self.ended: Optional[Printed] = None  # the last traceback that ended its process
        self.chained_at = -CHAIN_GAP - 1
        self.starts: list[tuple[int, bool]] = []  # (line, whether the process that ended before it had just started too)
        self.jobs: list[int] = []
        self.last_head = b""  # the first byte of the last line read (a frame after a line that stands at its start starts a traceback)
        self.raise_lines = 0  # lines still to look at for the current traceback's exception (past the end of a block)
        self.job_ended = False  # a job ended (Slurm's cancel) and the next job's first line is still to come

    def read(self, block: bytes, begin: int, end: int) -> None:
        """The whole lines block[begin:end]."""
        if self.raise_lines:
            self.raise_lines = self.look_for_exception(block, begin, end, self.raise_lines)
        found: list[tuple[int, int]] = []  # (position, kind): 0 a traceback's header, 1 a frame, 3 LSF's report, 4 a cancel
        present = may_hold(block, RUN_NEEDLES)  # (the block's shared digest: a needle it lacks costs no search of the block)
        for kind, needle in ((0, TRACEBACK_HEADER), (1, FRAME_NEEDLE), (3, LSF_REPORT), (4, CANCELLED)):
            if needle not in present:
                continue
            at, looked = block.find(needle, begin, end), 0
            while at != -1 and looked < LOOKED:
                looked += 1
                found.append((at, kind))
                at = block.find(needle, at + len(needle), end)
        counted, number, after = begin, self.lines + 1, begin
        for at, kind in sorted(found):
            start = block.rfind(b"\n", begin, at) + 1 or begin
            stop = block.find(b"\n", at, end)
            stop = stop if stop != -1 else end
            if self.job_ended and stop > after:  # (up to this line, which may be the next job's first)
                number, counted = self.next_job(block, after, stop, number, counted)
            number += block.count(b"\n", counted, start)
            counted = start
            after = max(after, stop + 1)
            if kind == 0:
                self.close()
                self.current = Printed(number, self.chained(block, begin, start, number, CHAIN_GAP), last=number)
            elif kind == 1:
                self.frame(block, begin, start, stop, end, number)
            elif kind == 3 and at == start:
                keep(self.jobs, number)
            elif kind == 4 and SLURM_CANCEL.search(block, start, stop) is not None:
                self.job_ended = True
        if self.job_ended and after < end:
            number, counted = self.next_job(block, after, end, number, counted)
        self.lines = number - 1 + block.count(b"\n", counted, end)  # (counted once: up to `counted` it was, above)
        self.last_head = first_byte_of_line_before(block, begin, end, self.last_head)
        said = block.rfind(CHAINING, max(begin, end - CHAIN_BYTES), end)  # (for a traceback at the next block's start)
        if said != -1:
            self.chained_at = self.lines + 1 - block.count(b"\n", said, end)

    def chained(self, block: bytes, begin: int, start: int, number: int, gap: int) -> bool:
        """Python's words that the exception below chains to the one above stand in the `gap` lines before line `number`
        (at `start`): the traceback there is the same process's."""
        said = block.rfind(CHAINING, max(begin, start - CHAIN_BYTES), start)
        if said != -1:
            self.chained_at = number - block.count(b"\n", said, start)
        return 0 < number - self.chained_at <= gap

    def frame(self, block: bytes, begin: int, start: int, stop: int, end: int, number: int) -> None:
        """The frame line block[start:stop], line `number`: the current traceback's, or the first of another."""
        m = FRAME_LINE.match(block, start, stop)
        if m is None:
            return
        current = self.current
        if current is None or not 0 < number - current.last <= FRAME_GAP or current.funcs and first_byte_of_line_before(block, begin, start, self.last_head) not in INDENTS:
            # frames with no header before them: a traceback printed without it, or a compile error's; after a line that is
            # no frame's (an exception's, at its line's start: Python indents frames and their source)
            self.close()
            current = self.current = Printed(number, self.chained(block, begin, start, number, CHAIN_GAP + 1), last=number)
        if not current.funcs:
            current.typed = m.group("path").startswith(b"<") and m.group("path") != b"<frozen runpy>"
        current.funcs.append(m.group("func"))
        current.last = number
        if not current.raised:
            self.raise_lines = self.look_for_exception(block, stop + 1, end, RAISED_GAP)

    def look_for_exception(self, block: bytes, at: int, end: int, lines: int) -> int:
        """The current traceback's exception's line among the next `lines` lines from `at` (not past another frame or
        header): whether it is whole. Returns the lines still to look at in the next block."""
        current = self.current
        while lines and at < end and current is not None:
            stop = block.find(b"\n", at, end)
            stop = stop if stop != -1 else end
            line = block[at:stop]
            if b'File "' in line or TRACEBACK_HEADER in line:
                return 0
            if EXCEPTION_CLASS.match(line) is not None:
                current.raised = True
                return 0
            lines -= 1
            at = stop + 1
        return lines if current is not None and at >= end else 0

    def next_job(self, block: bytes, at: int, upto: int, number: int, counted: int) -> tuple[int, int]:
        """The lines block[at:upto] after a job's end: the first that is not the scheduler's own starts the next job."""
        while at < upto and self.job_ended:
            stop = block.find(b"\n", at, upto)
            stop = stop if stop != -1 else upto
            line = block[at:stop].strip()
            if line and not line.startswith(SCHEDULER_OWN):
                number += block.count(b"\n", counted, at)
                counted = at
                keep(self.jobs, number)
                self.job_ended = False
            at = stop + 1
        return number, counted

    def close(self) -> None:
        """The traceback read last is whole: a start, when its process had just started after one ended."""
        printed, self.current = self.current, None
        self.raise_lines = 0
        if printed is None or printed.chained or not printed.ended_process():
            return
        if printed.just_started() and self.ended is not None:
            keep(self.starts, (printed.line, self.ended.just_started()))
        self.ended = printed

    def end(self) -> None:
        super().end()
        self.close()

    def start_before(self, line: int) -> Optional[int]:
        """The line of the process start whose traceback holds `line` (its exception's), or None."""
        return next((n for n, _ in reversed(self.starts) if n <= line < n + START_SPAN), None)

    def start_after(self, line: int, many: bool) -> Optional[tuple[int, str]]:
        """(line, what stands there) of the first start after `line`, or None: a job's, or a process's. `many`: more than one
        process writes the log, and each rank prints the same start-up failure: only a start after a process that had got
        past its start."""
        job = next((n for n in self.jobs if n > line), None)
        process = next((n for n, after_a_start in self.starts if n > line and not (many and after_a_start)), None)
        if job is not None and (process is None or job <= process):
            return (job, JOB_STARTED)
        return (process, PROCESS_STARTED) if process is not None else None
