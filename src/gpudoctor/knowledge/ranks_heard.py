"""The ranks a log says the job has, and what their roll shows when no line is an error.

A distributed job's processes say who they are as they start: Lightning's `Initializing distributed: GLOBAL_RANK: 1,
MEMBER: 2/8`, accelerate's state block (`Num processes: 4`, `Process index: 3`, `Device: cuda:0`), a framework's or the
script's own `rank=0, world_size=2` and `Distributed available: False`. A launch command in the paste says how many
processes the job was meant to have (`mpirun -np 2`, `torchrun --nproc_per_node 2`, `accelerate launch
--num_processes 2`, `--world_size=2 --rank=0` typed by hand). Read together they show a failure no line names
(heldout19's no-error-line cases):

- **one rank claimed twice**: two processes print the same rank of the same world size (an `Initializing
  distributed` line is printed once per process): the ranks were not handed out by one launcher, and the job waits
  for the ranks nobody took (Lightning-AI/pytorch-lightning#4389: srun's one task per node and Lightning's own
  spawning gave both nodes ranks 0-3 of 8);
- **processes that each run alone**: every process says it is rank 0 of 1, or that no distributed backend is there,
  while the command asked for N (ml-explore/mlx#1196: `mpirun -np 2` and `Distributed available: False` twice);
- **ranks never heard**: a world size N and fewer ranks ever printing, the log ending in set-up (no step, no line that
  shows the ranks met), or a command that starts rank r of N by hand and nothing of the others
  (hpcaitech/ColossalAI#158). A log may be one rank's or one node's own output (a per-rank file names only its rank):
  this only says what it saw and what decides it, and only where the log shows no failure and no end;
- **a launch that runs the notebook's kernel**: a launcher's command whose script is `ipykernel_launcher.py`
  (ultralytics/ultralytics#2927): no rank runs the training.

`RanksHeard` reads the stream block by block (as `reruns.WholeLines` readers do: whole lines, the scanner's numbering),
keeps what each shape says (bounded), and `findings()` judges it once the input ended.
"""

from __future__ import annotations

import itertools
from collections import deque
import re
from dataclasses import dataclass
from collections.abc import Callable
from typing import Optional

from gpudoctor.catalog.findings.diagnose import LAUNCH_RUNS_NOTEBOOK_KERNEL, RANKS_DUPLICATED, RANKS_NOT_ALL_HEARD
from gpudoctor.core.findings import Finding, Severity
from gpudoctor.knowledge.prefilter import may_hold, newlines
from gpudoctor.knowledge.reruns import WholeLines

# A process's own line at start-up, printed once per process: the rank it took and the world size.
# Lightning (and NeMo through it): "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/8" ("initializing ddp: ..." before 1.5)
LIGHTNING = re.compile(rb"GLOBAL_RANK: (?P<rank>\d+), MEMBER: \d+/(?P<world>\d+)")
# accelerate's state as a script logs it (print(accelerator.state)): four lines, each process once
ACCELERATE = re.compile(
    rb"Num processes: (?P<world>\d+)[ \t]*\r?\n[^\n]{0,40}?Process index: (?P<rank>\d+)[ \t]*\r?\n"
    rb"[^\n]{0,40}?Local process index: \d+[ \t]*\r?\n[^\n]{0,40}?Device: [\w:]+"
)
# RETURNN's line as Horovod starts, once per process: "Horovod initialized. Hostname cluster-cn-286, pid 12116, rank 0 / size 1,
# local rank 0 / local size 1." (rwth-i6/returnn#1196: two processes under SGE's -pe mpi 2, each rank 0 of 1)
SLASHED = re.compile(rb"(?:\bpid (?P<pid>\d+), )?\brank (?P<rank>\d+) / size (?P<world>\d+)\b")
# A line that names a rank and the world size, as frameworks log them (Ray Train's "Setting up process group for: env://
# [rank=1, world_size=2]", xDiT's "world_size=4 rank=3 local_rank=-1", d3rlpy's "DistributedWorkerInfo(rank=0, backend='nccl',
# world_size=3)", "RANK=0, WORLD_SIZE=2"): a process may print it on every line it logs, so it says which ranks print here,
# not how many processes took a rank.
NAMED = re.compile(
    rb"\b(?:global_)?rank[=:] ?(?P<rank>\d+)\b[^\n]{0,120}?\bworld_size[=:] ?(?P<world>\d+)"
    rb"|\bworld_size[=:] ?(?P<world2>\d+)\b[^\n]{0,120}?\b(?:global_)?rank[=:] ?(?P<rank2>\d+)",
    re.IGNORECASE,
)
# Every rank and every world size a NAMED line of a block may pair, looked for (case-blind) in the block lowered: a pair of
# them all that is kept already leaves nothing for NAMED to find there (a regex that reads 120 characters after each "rank=",
# and a loop over its every match, cost a fifth of a second a block where a process prints "rank=3 world_size=8" on every line)
NAMED_RANK = re.compile(rb"rank[=:] ?(\d+)")
NAMED_WORLD = re.compile(rb"world_size[=:] ?(\d+)")
NAMED_PAIRS = 4096  # pairs of them, at most, asked about (more: every NAMED line read, as before)
# A process that says it is not part of a distributed job: a framework's or a script's words for it.
# "Distributed available: False" (a script's print of mx.distributed.is_available()), the Hugging Face examples'
# "Process rank: -1, device: cuda, n_gpu: 1, distributed training: False", accelerate's "Num processes: 1".
ALONE = re.compile(
    rb"[Dd]istributed (?:available|enabled|initiali[sz]ed)\s*[:=]\s*False\b|Process rank: -1,[^\n]{0,80}distributed training: False"
    rb"|^[^\n]{0,40}?Num processes: 1[ \t]*\r?$",
    re.MULTILINE,
)
# The processes a launch command asks for on this node: mpirun/mpiexec/horovodrun -np N, torchrun's and
# torch.distributed.launch's --nproc_per_node N (also as a Python list's words: ultralytics prints its DDP command so),
# accelerate launch --num_processes N, deepspeed --num_gpus N, srun -n/--ntasks N.
# (one regex per command, each searched only in a block that holds its own words: one regex of five branches, none
# beginning with a fixed word, cost 0.44 s of the rank-words benchmark's 8 MB read; each of these begins with one or is skipped)
LAUNCHES = (
    ((b"mpirun", b"mpiexec", b"horovodrun"), re.compile(rb"\b(?:mpirun|mpiexec|horovodrun)\b[^\n]{0,200}?\s-(?:np|n)\s+(?P<np>\d+)")),
    ((b"nproc",), re.compile(rb"--nproc[_-]per[_-]node['\",=\s]+(?P<nproc>\d+)")),
    ((b"num_processes", b"num-processes"), re.compile(rb"\baccelerate launch\b[^\n]{0,300}?--num[_-]processes[=\s]+(?P<accel>\d+)")),
    ((b"num_gpus", b"num-gpus"), re.compile(rb"\bdeepspeed\b[^\n]{0,200}?--num[_-]gpus[=\s]+(?P<ds>\d+)")),
    ((b"srun",), re.compile(rb"\bsrun\b[^\n]{0,200}?\s(?:-n\s*|--ntasks[=\s])(?P<srun>\d+)")),
)
# A process started by hand as one rank of a job: its rank and world size given on the command line
# (ColossalAI's benchmark README: `python train.py --world_size=2 --rank=0 --local_rank=0 --host=... --port=...`).
BY_HAND = re.compile(  # ("python" first, its word boundary asked after it: the regex engine then looks for that word)
    rb"python(?<!\wpython)[\d.]*\s[^\n]{0,300}?(?:--world[_-]size[=\s]+(?P<world>\d+)[^\n]{0,200}?--rank[=\s]+(?P<rank>\d+)"
    rb"|--rank[=\s]+(?P<rank2>\d+)[^\n]{0,200}?--world[_-]size[=\s]+(?P<world2>\d+))"
)
# A launch command whose script is a Jupyter kernel's entry point: a library that builds its own DDP command from
# sys.argv[0] inside a notebook (ultralytics/ultralytics#2927: "DDP command: ['/opt/conda/bin/python', '-m',
# 'torch.distributed.run', '--nproc_per_node', '2', '--master_port', '37607', '.../ipykernel_launcher.py']")
KERNEL = re.compile(rb"(?:torch\.distributed\.(?:run|launch)|torchrun|accelerate launch|deepspeed|mpirun|mpiexec)\b[^\n]{0,400}?ipykernel_launcher\.py")
KERNEL_WORDS = (b"ipykernel_launcher",)
# Lines that show the ranks met: an NCCL communicator of N ranks formed, the store barrier every rank passed, Lightning's
# "All distributed processes registered": the ranks a command started by hand did not wait for the others.
# (each searched only in a block that holds its words, as LAUNCHES)
METS = (
    ((b"nranks",), re.compile(rb"\bnranks \d+")),
    ((b"COMPLETE",), re.compile(rb"Init COMPLETE")),
    ((b"Completed",), re.compile(rb"Completed store-based barrier")),
    ((b"registered",), re.compile(rb"All (?:DDP |distributed )?processes registered|All \d+ processes registered")),
)
# Any line that names a rank by its number, in a shape no roll above reads ("Start running on rank=1.", Lightning's
# "LOCAL_RANK: 3 - CUDA_VISIBLE_DEVICES: [...]", torchrun's "[rank2]:" prefix): that rank printed here, so it is never
# called missing (d3rlpy's "rank=1" line, takuseno/d3rlpy#363; Lightning's LOCAL_RANK lines of ranks whose GLOBAL_RANK
# line the cut log does not reach yet, Lightning-AI/pytorch-lightning#4364)
# (two searches: torchrun's prefix, whose literal start the regex engine finds fast in a log that carries it on every
# line, and the words "rank=N", "rank: N", "rank N" in any case, searched only in a block that holds them)
MENTIONED_PREFIX = re.compile(rb"\[rank(\d+)\]")
MENTIONED = re.compile(rb"\b(?:global_|local_)?rank(?:\s*[=:]\s*|\s+)(\d+)\b", re.IGNORECASE)
# MENTIONED's numbers, found in the block lowered: the same matches, each begun at its "rank" (the word boundary asked after
# it, by a look behind), so that the regex engine looks for that word first instead of trying every byte (a fifth of the time)
MENTIONED_LOWER = re.compile(rb"rank(?:(?<!\wrank)|(?<=\bglobal_rank)|(?<=\blocal_rank))(?:\s*[=:]\s*|\s+)(\d+)\b")
MENTIONED_WORDS = (b"[rank", b"rank=", b"rank:", b"rank ", b"RANK=", b"RANK:", b"RANK ", b"Rank=", b"Rank:", b"Rank ")
MENTIONED_KEPT = 4096  # distinct rank numbers kept (a world larger than that is not told rank by rank)
# The words each shape's lines hold, looked for first (prefilter.may_hold: a block that holds none is not searched)
LIGHTNING_WORDS = (b"GLOBAL_RANK",)
ACCELERATE_WORDS = (b"Process index",)
SLASHED_WORDS = (b" / size ",)
NAMED_WORDS = (b"world_size", b"WORLD_SIZE", b"World_size")
ALONE_WORDS = (b"istributed available", b"istributed enabled", b"istributed initiali", b"training: False", b"Num processes")
LAUNCH_WORDS = (b"mpirun", b"mpiexec", b"horovodrun", b"nproc", b"num_processes", b"num-processes", b"num_gpus", b"num-gpus", b"srun")
BY_HAND_WORDS = (b"world_size", b"world-size")
MET_WORDS = (b"nranks", b"COMPLETE", b"Completed", b"registered")
NEEDLES = MENTIONED_WORDS + KERNEL_WORDS + LIGHTNING_WORDS + ACCELERATE_WORDS + SLASHED_WORDS + NAMED_WORDS + ALONE_WORDS + LAUNCH_WORDS + BY_HAND_WORDS + MET_WORDS
After = Callable[[int], Optional[tuple[int, str]]]  # Progress.after: the first progress line after a line, or None
ONE_RANK_TAIL = 12  # lines after one rank's start-up line alone, at most, for the log to end there (not a run that went on past it)
# A long log is read whole for its ranks only at its start and its end: the shapes are regular expressions that scan
# every byte of a block holding their words, and a log whose every line prints "rank=3 world_size=8" would be read at a
# tenth of the scanner's speed. A job's ranks say who they are as they start (its first lines) and a log that ends in
# set-up ends with them (its last blocks); in between, a long run's lines decide nothing here.
HEAD_BYTES = 4 << 20  # read whole from the start
TAIL_BYTES = 4 << 20  # and the last of the rest, read when the findings are asked for
TAIL_BLOCKS = 2  # the blocks that hold it, kept (the reader's blocks, 8 MB each; the last may be a short one)
KEPT = 256  # start-up lines kept (a job's ranks; a longer roll is a log that restarted many times)


@dataclass(frozen=True)
class Claim:
    line: int
    rank: int
    world: int
    text: str = ""
    once: bool = True  # a line each process prints once (LIGHTNING, ACCELERATE, SLASHED); NAMED lines may repeat
    pid: str = ""  # the process id the line names, when it names one


class Numbering:
    """Line numbers of positions in a block, counted on from the last one asked for (the scanner's numbering, 1-based)."""

    def __init__(self, block: bytes, begin: int, before: int) -> None:
        self.block, self.begin, self.before = block, begin, before
        self.at, self.number = begin, before + 1

    def of(self, pos: int) -> int:
        if pos < self.at:  # (the shapes are searched one after the other: count again from the block's start)
            self.at, self.number = self.begin, self.before + 1
        self.number += self.block.count(b"\n", self.at, pos)
        self.at = pos
        return self.number


class RanksHeard(WholeLines):
    """What the input's lines say of its ranks, fed block by block (`feed`, `tee`)."""

    def __init__(self) -> None:
        super().__init__()
        self.claims: list[Claim] = []  # start-up lines, once per process
        self.alone: list[tuple[int, str]] = []  # lines of a process that says it runs alone
        self.launch: Optional[tuple[int, int, str]] = None  # (line, processes asked for, the command's words): the first launch command
        self.by_hand: Optional[tuple[int, int, int, str]] = None  # (line, rank, world size, the command): a rank started by hand
        self.met = 0  # the last line that shows the ranks met (METS), 0 when none does
        self.named: set[tuple[int, int]] = set()  # (rank, world size) of the NAMED lines kept
        self.kernel: Optional[tuple[int, str]] = None  # (line, the command): a launch whose script is a notebook's kernel
        self.mentioned: set[int] = set()  # every rank number any line names (MENTIONED): those ranks printed here
        self.seen = 0  # bytes read whole from the start (HEAD_BYTES at most)
        self.tail: deque[tuple[bytes, int, int, int]] = deque(maxlen=TAIL_BLOCKS)  # (block, begin, end, lines before) past the head

    def read(self, block: bytes, begin: int, end: int) -> None:
        if self.seen < HEAD_BYTES:
            self.seen += end - begin
            self.read_block(block, begin, end, self.lines)
        else:
            self.tail.append((block, begin, end, self.lines))
        self.lines += newlines(block, begin, end)

    def read_tail(self) -> None:
        """The last TAIL_BYTES of a long log past its head, from a line's start, read now."""
        parts, left = [], TAIL_BYTES
        while self.tail and left > 0:
            block, begin, end, before = self.tail.pop()
            start = max(begin, end - left)
            if start > begin:
                nl = block.find(b"\n", start, end)
                start = end if nl == -1 else nl + 1
            parts.append((block, start, end, before + block.count(b"\n", begin, start)))
            left -= end - start
        self.tail.clear()
        for part in reversed(parts):
            self.read_block(*part)

    def read_block(self, block: bytes, begin: int, end: int, before: int) -> None:
        words = set(may_hold(block, NEEDLES))
        if words:
            self.read_shapes(block, begin, end, words, before)

    def read_shapes(self, block: bytes, begin: int, end: int, words: set[bytes], before: int) -> None:
        """Each shape searched only where its own words may be in the block (`before`: the lines before it)."""
        lines = Numbering(block, begin, before)
        for shape, needles in ((LIGHTNING, LIGHTNING_WORDS), (ACCELERATE, ACCELERATE_WORDS), (SLASHED, SLASHED_WORDS)):
            if not words.isdisjoint(needles):
                for m in itertools.islice(shape.finditer(block, begin, end), KEPT - len(self.claims)):
                    if quoted(block, begin, m.start()):
                        continue
                    pid = (m.groupdict().get("pid") or b"").decode("ascii")
                    self.claims.append(Claim(lines.of(m.start()), int(m["rank"]), int(m["world"]), shown(m.group(0)), pid=pid))
        low: Optional[bytes] = None  # block[begin:end] lowered, made for the case-blind shapes below that ask it
        if not words.isdisjoint(NAMED_WORDS) and len(self.claims) < KEPT:
            low = block[begin:end].lower()
            left = self.pairs_left(low)
            for m in NAMED.finditer(block, begin, end):
                if (left is not None and not left) or len(self.claims) >= KEPT:
                    break  # (every pair the block may hold is kept, or no more are: the rest of its matches add nothing)
                pair = (int(m["rank"] or m["rank2"]), int(m["world"] or m["world2"]))
                if pair not in self.named:
                    self.named.add(pair)
                    self.claims.append(Claim(lines.of(m.start()), *pair, text=shown(m.group(0)), once=False))
                    if left is not None:
                        left.discard(pair)
        if not words.isdisjoint(ALONE_WORDS):
            for m in itertools.islice(ALONE.finditer(block, begin, end), KEPT - len(self.alone)):
                self.alone.append((lines.of(m.start()), shown(m.group(0))))
        if not words.isdisjoint(MENTIONED_WORDS) and len(self.mentioned) < MENTIONED_KEPT:
            # (the distinct numbers first, in C: a log whose every line carries "[rank0]:" gives a few of them, not millions)
            said = set(MENTIONED_PREFIX.findall(block, begin, end)) if b"[rank" in words else set()
            if not words.isdisjoint(MENTIONED_WORDS[1:]):
                said.update(MENTIONED_LOWER.findall(low if low is not None else block[begin:end].lower()))
            self.mentioned.update(int(rank) for rank in said)
        self.read_commands(block, begin, end, words, lines)
        last = -1
        for needles, shape in METS:
            if not words.isdisjoint(needles):
                for met in shape.finditer(block, begin, end):
                    last = max(last, met.start())
        if last >= 0:
            self.met = lines.of(last)

    def pairs_left(self, low: bytes) -> Optional[set[tuple[int, int]]]:
        """The (rank, world size) pairs not kept yet that a NAMED match in the lowered block may be (each rank and each world
        size it names, paired), or None where they are more than NAMED_PAIRS."""
        ranks = {int(r) for r in set(NAMED_RANK.findall(low))}
        worlds = {int(w) for w in set(NAMED_WORLD.findall(low))}
        if len(ranks) * len(worlds) > NAMED_PAIRS:
            return None
        return {(r, w) for r in ranks for w in worlds} - self.named

    def read_commands(self, block: bytes, begin: int, end: int, words: set[bytes], lines: Numbering) -> None:
        """The first launch command, command that starts a rank by hand, and launch of a notebook's kernel."""
        launch = None
        if self.launch is None and not words.isdisjoint(LAUNCH_WORDS):
            # the first launch command in the block: the earliest of each command's first
            found = [m for needles, shape in LAUNCHES if not words.isdisjoint(needles) and (m := shape.search(block, begin, end)) is not None]
            launch = min(found, key=lambda m: m.start()) if found else None
        if launch is not None:
            asked = next(int(v) for v in launch.groups() if v is not None)
            self.launch = (lines.of(launch.start()), asked, shown(launch.group(0)))
        hand = BY_HAND.search(block, begin, end) if self.by_hand is None and not words.isdisjoint(BY_HAND_WORDS) else None
        if hand is not None:
            rank = int(hand["rank"] if hand["rank"] is not None else hand["rank2"])
            self.by_hand = (lines.of(hand.start()), rank, int(hand["world"] or hand["world2"]), shown(hand.group(0)))
        kernel = KERNEL.search(block, begin, end) if self.kernel is None and not words.isdisjoint(KERNEL_WORDS) else None
        if kernel is not None:
            self.kernel = (lines.of(kernel.start()), shown(kernel.group(0)))

    def findings(self, decided: bool, progress_after: Optional[After] = None) -> list[Finding]:
        """What the roll shows. `decided`: the log already shows a failure or its end (then only what it decides
        beside that is said: a rank claimed twice); `progress_after(line)`: a progress line after `line`, or None."""
        self.read_tail()
        out = self.kernel_launched() + self.duplicated() + self.each_alone()
        if out or decided:
            return out
        return self.not_all_heard(progress_after)

    def kernel_launched(self) -> list[Finding]:
        """A launcher told to run the notebook's kernel as each rank's script."""
        if self.kernel is None:
            return []
        line, command = self.kernel
        return [LAUNCH_RUNS_NOTEBOOK_KERNEL(evidence={"command": f"line {line}: {command}"}, line=line)]

    def duplicated(self) -> list[Finding]:
        """The same rank of one world size printed by two processes' start-up lines."""
        by_world: dict[int, list[Claim]] = {}
        for c in self.claims:
            if c.world > 1 and c.once:
                by_world.setdefault(c.world, []).append(c)
        for world, claims in sorted(by_world.items()):
            ranks = [c.rank for c in claims]
            twice = sorted({r for r in ranks if ranks.count(r) > 1})
            distinct = set(ranks)
            if not twice or len(distinct) >= world or repeated(ranks):
                continue  # every rank heard, or the same lines again: a log that holds its run twice (a restart, a paste repeated) is not this
            # as many processes as the job has, and fewer ranks than that among them: the log decides it
            severity = Severity.ERROR if len(claims) >= world else Severity.WARN
            missing = [r for r in range(world) if r not in distinct]
            seen = [f"line {c.line}: {c.text}" for c in claims if c.rank in twice][:6]
            return [RANKS_DUPLICATED(
                case="same", severity=severity,
                evidence={"start-up lines": seen, "world size": world, "ranks heard": span(sorted(distinct)),
                          "ranks never heard": span(missing)},
                count=len(claims), ranks=span(twice), world=world, heard=len(distinct),
                decided="" if severity is Severity.ERROR else "; fewer processes than the job has printed here, so a log pasted twice looks the same",
            )]
        return []

    def each_alone(self) -> list[Finding]:
        """Every process says it runs alone: while the launch command asked for several, or, with no launch shown,
        two processes (their pids differ) that each start as rank 0 of 1."""
        if any(c.world > 1 for c in self.claims):
            return []  # a process that knows its place in the job: the lines are another's
        alone = sorted(self.alone + [(c.line, c.text) for c in self.claims if c.once and c.world == 1])
        if len(alone) < 2:
            return []
        lines = [f"line {n}: {t}" for n, t in alone[:6]]
        if self.launch is not None and self.launch[1] >= 2:
            line, asked, command = self.launch
            return [RANKS_DUPLICATED(
                case="alone", severity=Severity.ERROR if len(alone) >= asked else Severity.WARN,
                evidence={"launch": f"line {line}: {command}", "alone": lines},
                count=len(alone), said=alone[0][1], command=command, asked=asked,
            )]
        pids = sorted({c.pid for c in self.claims if c.once and c.world == 1 and c.pid})
        if len(pids) < 2:
            return []  # one process's lines, or runs appended one after another: nothing says they were one job
        return [RANKS_DUPLICATED(
            case="alone-pids", severity=Severity.WARN, evidence={"alone": lines},
            count=len(pids), said=alone[0][1], pids=", ".join(pids[:8]),
        )]

    def not_all_heard(self, progress_after: Optional[After]) -> list[Finding]:
        """Ranks of a world size that never print here, and the log ends in set-up."""
        def waits(line: int) -> bool:  # nothing after `line` shows the ranks met or a step
            return self.met < line and (progress_after is None or progress_after(line) is None)

        if self.claims:
            world = max(c.world for c in self.claims)
            claims = [c for c in self.claims if c.world == world]
            distinct = sorted({c.rank for c in claims})
            last = max(c.line for c in claims)
            # (a rank another line names printed here too: only the ranks no line names are missing)
            missing = [r for r in range(world) if r not in distinct and r not in self.mentioned]
            if world > 1 and 2 <= len(distinct) < world and missing and waits(last):
                return [RANKS_NOT_ALL_HEARD(
                    case="merged",
                    evidence={"rank lines": [f"line {c.line}: {c.text}" for c in claims[:6]], "world size": world,
                              "ranks heard": span(distinct), "ranks never heard": span(missing)},
                    heard=span(distinct), world=world, missing=span(missing), last=last,
                )]
            once = [c for c in claims if c.once]
            alone = once and not self.mentioned - {once[0].rank}  # (no line names another rank)
            if world > 1 and alone and distinct == [once[0].rank] and waits(last) and self.lines - last <= ONE_RANK_TAIL and self.by_hand is None:
                # one rank's start-up line alone: the job's whole output with the others missing, or that rank's own log
                first = once[0]
                others = [r for r in range(world) if r != first.rank]
                return [RANKS_NOT_ALL_HEARD(
                    case="one-rank", evidence={"rank line": f"line {first.line}: {first.text}", "world size": world},
                    rank=first.rank, world=world, line=first.line, others=span(others), them="it" if len(others) == 1 else "them",
                )]
        if self.by_hand is not None and len({c.rank for c in self.claims if c.line != self.by_hand[0]}) < 2:
            line, rank, world, command = self.by_hand
            if world > 1 and waits(line):
                others = [r for r in range(world) if r != rank]
                return [RANKS_NOT_ALL_HEARD(
                    case="by-hand", evidence={"command": f"line {line}: {command}"},
                    rank=rank, world=world, line=line, others=span(others), them="it" if len(others) == 1 else "them", top=world - 1,
                )]
        return []


def quoted(block: bytes, begin: int, at: int) -> bool:
    """The line that holds `at` is a reply's quote of other output ("> initializing ddp: ..."): not a process's own line."""
    start = block.rfind(b"\n", begin, at) + 1 or begin
    return block[start:at].lstrip()[:1] == b">"


def repeated(ranks: list[int]) -> bool:
    """The sequence is one stretch said again (0, 1, 2, 0, 1, 2): the same output pasted twice, not two processes per rank."""
    n = len(ranks)
    return any(n % k == 0 and ranks == ranks[: n // k] * k for k in range(2, n + 1))


def span(ranks: list[int]) -> str:
    """0-3, 6 for [0, 1, 2, 3, 6]."""
    out: list[str] = []
    for r in ranks:
        if out and out[-1].split("-")[-1] == str(r - 1):
            out[-1] = f"{out[-1].split('-')[0]}-{r}"
        else:
            out.append(str(r))
    return ", ".join(out)


def shown(text: bytes) -> str:
    return " ".join(text.decode("utf-8", "replace").split())[:200]
