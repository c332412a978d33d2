"""Matched lines -> findings told as a story: the cause first, then what it caused.

`Diagnosis` is fed one candidate line at a time (it never holds the log), keeps
a small summary per pattern, and at the end orders the findings: root causes by
first appearance, then the consequences they explain, then consequences whose
cause is not in the log, then harmless lines.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable
import dataclasses
from dataclasses import dataclass, field
from typing import Optional

from gpudoctor.core.findings import Finding, Severity
from gpudoctor.knowledge import api_shape, launcher_only, setting_fix
from gpudoctor.knowledge.carried import carried, validation_error
from gpudoctor.knowledge.ending import DEGRADED_RUN
from gpudoctor.knowledge.evidence import HEADING_SHY, error_level, evidence_in
from gpudoctor.knowledge.libraries import package_of
from gpudoctor.knowledge.lines import LogLine, segments
from gpudoctor.knowledge.mentions import KEPT as MENTIONS_KEPT
from gpudoctor.knowledge.mentions import hold, lead_first, only_ended, quoted_in_sentence, said_in_prose, says_what_failed, speaks_of_error
from gpudoctor.knowledge.pattern import CAUSE, CONSEQUENCE, HARMLESS, Pattern, groups, needle_gate
from gpudoctor.knowledge.patterns import ALL, BY_ID
from gpudoctor.knowledge.patterns.classes17b import CPU_BUILD_STEP, PRINTED_PROBE
from gpudoctor.knowledge.patterns.classes9 import setup_of, zero_internal
from gpudoctor.knowledge.patterns.classes10a import read_by_wrapper_itself
from gpudoctor.knowledge.patterns.classes11a import TOLD_AFTER_OTHER_CAUSES as TOLD_AFTER_11A
from gpudoctor.knowledge.patterns.classes11a import by_frame as frame_class11
from gpudoctor.knowledge.patterns.classes12a import by_frame as frame_class12a
from gpudoctor.knowledge.patterns.classes13b import by_frame as frame_class13b
from gpudoctor.knowledge.patterns.classes13b import scalar_loss_gathered
from gpudoctor.knowledge.patterns.classes16c import bare_sibling_import
from gpudoctor.knowledge.patterns.classes17b import fault_fields
from gpudoctor.knowledge.patterns.classes31a import READ_AS_FOUND
from gpudoctor.knowledge.patterns.classes33i import TOLD_AFTER_OTHER_CAUSES as TOLD_AFTER_33I
from gpudoctor.knowledge.patterns.classes20a import SIZES_SAID
from gpudoctor.knowledge.patterns.classes23b import STOPPED_FROM_OUTSIDE
from gpudoctor.knowledge.patterns.classes21d import DETAIL_SAID
from gpudoctor.knowledge.patterns.classes22c import DETAIL_SAID as DETAIL_SAID_22C
from gpudoctor.knowledge.patterns.classes22d import DETAIL_SAID as DETAIL_SAID_22D, PLATFORM_NOTE, no_nccl_here
from gpudoctor.knowledge.patterns.classes23c import DETAIL_SAID as DETAIL_SAID_23C, REFUSED_VALUE
from gpudoctor.knowledge.patterns.classes23c import by_frame as frame_class23c
from gpudoctor.knowledge.patterns.classes24a import DETAIL_SAID as DETAIL_SAID_24A
from gpudoctor.knowledge.patterns.classes28b import BACKEND_NOT_BUILT, DETAIL_SAID as DETAIL_SAID_28B
from gpudoctor.knowledge.patterns.classes30c import DETAIL_SAID as DETAIL_SAID_30C
from gpudoctor.knowledge.patterns.classes31b import DETAIL_SAID as DETAIL_SAID_31B, DISABLED as BACKEND_DISABLED
from gpudoctor.knowledge.patterns.classes31c import DETAIL_SAID as DETAIL_SAID_31C
from gpudoctor.knowledge.patterns.builds import DETAIL_SAID as DETAIL_SAID_33J, ISOLATED_BUILD, NO_DISTRIBUTION, isolated_detail, no_distribution_said, under_build_hook
from gpudoctor.knowledge.patterns.launchers import DETAIL_SAID as DETAIL_SAID_BUILD
from gpudoctor.knowledge.patterns.classes20b import environment_report, reporting_error
from gpudoctor.knowledge.patterns.families6 import LOSS_NOT_FINITE
from gpudoctor.knowledge.patterns.families7 import GRAD_NORM_NOT_FINITE
from gpudoctor.knowledge.setting import Setting
from gpudoctor.knowledge.shapes import ShapePatterns
from gpudoctor.knowledge.patterns.network import CLIENT_RETRY
from gpudoctor.knowledge.patterns.launcher import MPI_SIGNALS, mpi_exit, stop_signal, stop_words
from gpudoctor.knowledge.progress import PROGRESS_AFTER, SCRIPT_STEP, WENT_ON_SHOWN, Progress, noted, own_end, set_up_step, warned
from gpudoctor.knowledge.ranks_heard import RanksHeard
from gpudoctor.knowledge.gpus_unused import GpusUnused
from gpudoctor.knowledge.nccl_loopback import NcclLoopback
from gpudoctor.knowledge.remedy import WARNED, Remedy, line_remedy, remedy_step
from gpudoctor.knowledge.reruns import Command, Openings, Prompts, RunStarts
from gpudoctor.knowledge.said_fixed import LINES as LINES_READ
from gpudoctor.knowledge.said_fixed import WINDOW as WINDOW_SAID
from gpudoctor.knowledge.said_fixed import SaidFixed
from gpudoctor.knowledge.paste_parts import WORDS_PLACE, PasteParts, Worked, contradicting
from gpudoctor.knowledge.build_cut import BuildCut
from gpudoctor.knowledge.forked import ForkSeen
from gpudoctor.knowledge.no_work import NoWork
from gpudoctor.knowledge.cuda_errors import BY_NAME as CUDA_FAULTS
from gpudoctor.knowledge.said_hang import SaidHang
from gpudoctor.knowledge.said_oom import SaidOom
from gpudoctor.knowledge.template_example import template_of
from gpudoctor.knowledge.reported import INTRODUCED, REPORTED_PLACE, ReportedError
from gpudoctor.knowledge.signs import KIND, STRONG, TOLD, Frame, Sign, Signs, time_of
from gpudoctor.knowledge.title_said import names_change, title_label
from gpudoctor.knowledge.unrecognised import (
    API_SHAPE,
    UNRECOGNISED,
    wrapped,
    class_step,
    class_why,
    message_class,
    next_step,
    unrecognised_why,
    what_it_says,
    whose,
    with_what_it_says,
)

# torchrun's negative exit codes are signals; the Root Cause block may be all a log has of them
SIGNAL_EXITCODES = {"-9": "launcher-sigkill", "-7": "launcher-sigbus", "-11": "launcher-sigsegv", "-6": "launcher-sigabrt"}
GATE = needle_gate(ALL)
# causes told after any other cause the log shows (classes11a.py: a process without a GPU; classes33i.py: a batch script's set-up)
TOLD_AFTER_OTHER_CAUSES = (*TOLD_AFTER_11A, *TOLD_AFTER_33I)
# Signals whose death says what failed (an arithmetic fault, an instruction this CPU lacks) and that no
# pattern of SIGNAL_EXITCODES tells; a stop signal (SIGTERM) or SIGKILL/SIGABRT say only that a rank was ended.
SELF_TELLING = re.compile(r"\((?:SIGFPE|SIGILL)\)$")
# A class rule's fix that hedges on whose frame raised ("...; if that frame is a library's (site-packages), upgrade it"): where
# the log shows that frame, named_fix keeps only the branch it decides
LIBRARY_CLAUSE = re.compile(r"; if that frame is a library's \(site-packages\), (?P<then>.*)$", re.DOTALL)
# Launchers that start more than one process (knowledge/launcher_only.py's names): one rank's progress after another's
# failure is no sign that the job went on.
MULTI_PROCESS_LAUNCHERS = frozenset({"torchrun", "deepspeed", "accelerate launch", "mpirun", "torch.multiprocessing.spawn",
                                     "paddle.distributed.launch"})
# A pattern whose lines are only progress when the other one is seen later.
RESOLVED_BY = {"store-barrier-waiting": "store-barrier-completed", "bitsandbytes-libcudart-not-found": "bitsandbytes-cuda-library-loaded"}
# The location a runtime writes before its error's message: Lua's "InstanceNormalization.lua:50: " (its
# `error()` with a position), a C program's "file.c:12: " (`Diagnosis.is_failure_line`)
RUNTIME_LOCATION = re.compile(r"^[\w./\\\-]+\.\w{1,4}:\d+: (?=\S)")
MEMO = 20000  # texts remembered (then forgotten all at once): bounded memory on any log
DIGIT_BYTES = b"0123456789"
# Lines whose numbers can change what they mean ("exit code 0" / "exit code 1"): never skipped as repeats.
NUMBERS_MATTER = ("exit", "code", "status", "errno", "signal", "error ", "world_size", "worker_count", "retr", "attempt")
# ... when a number stands by the word (at most one short word between: "exit status was 256", "error 2", "errno=28").
# A program's line that holds the word with its numbers elsewhere (20,931 lines of "Error with mp-1184945, confirm
# existence", dev7w: https://github.com/ajh011/chgcnn/blob/08da27d61b640187ee5f09f18a40a2e23dbfa7ef/logs/nohup.out) is read
# once, then skipped as the repeat it is: read line by line, it took diagnose 43 s on that 1 MB log.
NUMBER_BY_WORD = re.compile(r"(?:exit|code|status|errno|signal|error|world_size|worker_count|retr|attempt)\w*(?:\W{1,3}[a-z]{1,5})?\W{0,3}\d",
                            re.IGNORECASE)

# The signs a later run's own failure is told from, when the patterns named only earlier runs' (`later_runs_sign`): a whole
# exception, an exit status (a launcher's, a shell's, a scheduler's report), a fatal signal, a C++ or CUDA error's own line
# (knowledge/signs.py KIND); a native stack or a C++ backtrace cut before its first lines, a traceback cut before its
# exception, say too little to move the answer to another run.
LAST_RUNS_SIGNS = frozenset(("exception", "bare", "exit", "exitcode", "srun_what", "fatal", "signame", "caught", "glogsig", "shellsig",
                             "terminate", "what", "c10", "assertion", "devassert", "cuda", "cudastatus", "ncclerror"))
# Findings that only say "an exception" / "a failure" without knowing it: callers that want
# the meaning of a rank's output (run, the launcher) skip them.
GENERIC_FINDINGS = ("python-exception", "unrecognised-failure")
# Causes told after any cause a pattern names: the catch-alls, and a library's check refusing a value (knowledge/patterns/classes23c.py:
# read from any exception's frames, it is most often what the named failure led to, like the catch-alls)
TOLD_AFTER_NAMED_CAUSES = (*GENERIC_FINDINGS, REFUSED_VALUE)
# Patterns that read any exception's line: one a fallback warning just said was caught names no failure.
READS_ANY_EXCEPTION = (*GENERIC_FINDINGS, "setup-refused-by-program")
# Class rules whose fix names what the log names (`Diagnosis.named_fix`).
NAMED_IN_FIX = ("torch-api-version", "ddp-wrapper-private-attribute", "module-not-found", "launcher-not-found", "launcher-argument-unknown", "library-api-mismatch", "run-interrupted", "script-arguments-refused",
                "setup-refused-by-program", "value-type-refused", "ddp-device-mismatch", "zero-optimizer-internal-error",
                # the tenth round's classes (knowledge/patterns/classes10a.py): the key, path, call, object or log the line names
                "config-key-missing", "nccl-topology-sysfs", "cublas-execution-failed", "unpicklable-object", "paddle-launch-trainer-failed",
                # knowledge/patterns/classes10d.py: the package whose metadata is missing, the failed task's own log
                "package-metadata-missing", "task-runner-failed-see-log",
                # knowledge/patterns/classes11a.py: the class and its methods left abstract, the parameter a rendezvous lacks
                "abstract-class-instantiated", "rendezvous-rank-missing", "torch-call-arguments-refused",
                "loss-logits-labels-mismatch", "argument-choices-empty",
                # knowledge/patterns/classes12b.py: the line that indexed a 0-dim tensor, the extension's failed check
                "torch-scalar-indexed", "extension-check-failed",
                # knowledge/patterns/classes13b.py: the program of the container stack that is missing, and what installs it; what a file's first byte says it is
                "container-runtime-binary-missing", "load-file-not-saved-data",
                # knowledge/patterns/classes14b.py: the node and what refused the step there; the Function and the gradient it returned
                "slurm-step-start-failed", "autograd-invalid-gradient", "tensorflow-gpu-not-visible",
                "conv-input-channels-mismatch",
                # knowledge/patterns/classes15b.py: what the draw was given, the program mpirun could not start and where, why TF could not place the op
                "draw-from-empty-population", "mpirun-program-not-started", "tf-op-no-gpu-placement",
                "tensorflow-gpu-libraries-not-loaded",
                # knowledge/patterns/classes16b.py: the argument or the device gloo refused, the container option, the Python 2 name, the registry's missing type
                "gloo-backend-refused", "container-gpu-option-unknown", "python2-code-under-python3", "component-not-in-registry",
                # knowledge/patterns/classes17b.py: CUDA's error as its table names it, what it means and what to do
                "cuda-runtime-error",
                # knowledge/patterns/classes19a.py: CUDA's, HIP's or NVENC's error as its table of codes reads it
                "cuda-error-code", "nvenc-error-code",
                # knowledge/patterns/classes.py: the path that is not there (a script or a program the command names too); the
                # refusal of a setting in the message's own words
                "path-not-found", "settings-combination-refused",
                # knowledge/patterns/classes20a.py: what the message's sizes require, with its numbers
                *SIZES_SAID,
                # knowledge/patterns/classes21d.py: the path, the device string, the data set or checkpoint the line names
                *DETAIL_SAID,
                # knowledge/patterns/classes22c.py: the variable, the job, the MATLAB function and message the line names
                *DETAIL_SAID_22C,
                # knowledge/patterns/classes22d.py: the one-GPU program, the launcher and the Python it points at
                *DETAIL_SAID_22D,
                # knowledge/patterns/classes24a.py: the link that did not hand the GPU over, and its step
                *DETAIL_SAID_24A,
                # knowledge/patterns/classes28b.py: the GPU library, the backend list, the Vulkan call the line names, and their step
                *DETAIL_SAID_28B,
                # knowledge/patterns/classes30c.py: the program that is not installed, and the step that installs it
                *DETAIL_SAID_30C,
                # knowledge/patterns/classes31b.py: the GPU backend the program turned off, and the check that decides it
                *DETAIL_SAID_31B,
                # knowledge/patterns/classes31c.py: what the package was built for against what is installed, and its step
                *DETAIL_SAID_31C,
                # knowledge/patterns/builds.py, launchers.py: the line that decides why a build or an install failed, and its step;
                # the compiler's first error under a build's wrapper, or that only the wrapper shows
                *DETAIL_SAID_33J, *DETAIL_SAID_BUILD, NO_DISTRIBUTION)
# An empty input that its reader's failure leaves: the exception the log shows (no pattern names it) is the cause, when there
# is one (TF1's queue closed empty after its reader thread's "Can't parse serialized Example": dxv2k/pixel_link_py3's
# log_train.txt, heldout19w)
LEFT_BY_A_FAILED_READER = ("tf-input-queue-empty",)
AREAS = {CAUSE: "cause", CONSEQUENCE: "consequences", HARMLESS: "safe to ignore"}
# A launcher's summary that a rank failed with a status that is no signal (knowledge/launcher_only.py)
LAUNCHER_SUMMARIES = ("torchrun-root-cause", "torchrun-child-failed", "launcher-sigabrt")
# A collective that timed out ends the waiting rank: its watchdog aborts the communicator and the rank's
# next call raises. The Python traceback that rank prints then, cut in a paste or ending in torch's
# NCCL error, is the timeout surfacing, not a failure of its own.
COLLECTIVE_TIMEOUTS = ("nccl-watchdog-timeout", "nccl-timeout-dump-signal", "gloo-collective-timeout")
SURFACED = re.compile(r"NCCL error|Watchdog caught|DistBackendError|ProcessGroupNCCL")
WATCHDOG_STACK = "C++ exception raised from checkTimeout"  # signs' words for the watchdog's timeout check
# A failed connection attempt torch survives when the next address works (the pattern says so); a traceback
# that starts within SURFACING_LINES after it and is cut before it says what failed is that attempt failing
# the job (bmaltais/kohya_ss#2163: WinError 10049, then a traceback cut inside init_process_group).
CONNECTION_ATTEMPTS = ("windows-address-invalid",)
SURFACING_LINES = 5
# A collective timeout shorter than a second is a setting that fails healthy ranks: NCCL's communicator set-up and a
# first step take seconds (torch's defaults are 10 and 30 minutes).
SHORT_TIMEOUT_MS = 1_000
SHORT_TIMEOUT_WHY = ("The process group's collective timeout is set to {ms} ms: no collective, nor the communicator's set-up "
                     "before the first one, finishes that fast, so the watchdog gives up on ranks that are healthy; that setting "
                     "is the cause, whatever the peers were doing.")
SHORT_TIMEOUT_FIX = ("set a realistic timeout: leave it to torch's default or pass timeout=timedelta(minutes=30) to init_process_group "
                     "(or the program's own setting that passes it on; a value meant in seconds or minutes read as milliseconds is "
                     "the usual slip)")
# A watchdog timeout at one of the first collectives (SeqNum at most EARLY_SEQ: DDP's parameter broadcast, a barrier,
# the first steps): no collective has gone through yet, so the link between the GPUs or the nodes is as likely a
# cause as a peer still busy (PAI-Megatron-Patch#508: two nodes, SeqNum=4).
EARLY_SEQ = 5
EARLY_WHY = ("It timed out at SeqNum {seq}, one of the job's first collectives: none may have gone through yet, so besides a "
             "rank still loading or preprocessing, the usual cause is the connection NCCL set up between the GPUs or the "
             "nodes (an interface the other node cannot reach, an InfiniBand/RoCE port or GID setting, a firewall, peer-to-peer "
             "between GPUs that hangs).")
EARLY_FIX = ("rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET and check on every node the interface (NET/Socket, "
             "NCCL_SOCKET_IFNAME) and the transport (NET/IB, P2P) each rank picked; nccl-tests' all_reduce_perf across the same "
             "nodes shows whether the link works without the job (NCCL_P2P_DISABLE=1 and NCCL_IB_DISABLE=1 tell which transport hangs)")
# NCCL's connection closed by the other end while the ranks connect (its bootstrap, patterns/nccl.py `peer_closed`), with no
# rank seen ending: a peer that died while joining, or a connection that was no rank's (a port scan, a health check) closing
# before NCCL's handshake, which NCCL before 2.27.3 takes as a failure (heldout21 NVIDIA/nccl#1612: the answer asserted that
# another rank crashed). What was seen and what decides it, never a dead peer the log does not show.
BOOTSTRAP_LOSS_TITLE = ("NCCL's bootstrap failed: the other end closed a connection to this rank while the ranks connected; no rank "
                        "is seen ending: the log does not decide why")
BOOTSTRAP_LOSS_WHY = ("Seen: while the ranks connected to one another at start (NCCL's bootstrap, before the communicator exists), "
                      "the other end closed a connection to this rank, and no rank is seen ending in this log. Two causes print this "
                      "line: a rank that died while joining (its own output shows its error, its exit status is not 0), or a "
                      "connection that was no rank's, a port scanner, a health check or a load balancer that connected to the "
                      "bootstrap port and hung up before NCCL's handshake, which NCCL before 2.27.3 takes as a failure "
                      "(NVIDIA/nccl#1612).")
BOOTSTRAP_LOSS_FIX = ("read the other ranks' output and exit status at that moment: a rank that failed first is the cause, fix that; "
                      "if every other rank was alive: python -c 'import torch; print(torch.cuda.nccl.version())' and use NCCL 2.27.3 "
                      "or later (pip install -U nvidia-nccl-cu12), or keep probes off the nodes' ports (NCCL_SOCKET_IFNAME=an "
                      "interface only the job's nodes reach)")
SAMPLES = 4  # evidence lines kept per pattern (first ones, distinct ranks first)
# How near a later run's start a run's own end stands to be that run's last line (`ended_by_itself`): the end, then a
# line or two the program prints before its first opening ("Training started...", which it printed several times at once)
RUN_END_BEFORE_START = 3
EVIDENCE_CHARS = 300

# Consequences whose cause is not in the log are told in this order: the loss of a
# peer first, then the timeouts it leads to, then the launcher's summaries.
CONSEQUENCE_ORDER = (
    "nccl-remote-error",
    "nccl-peer-closed",
    "gloo-peer-closed",
    "dataloader-worker-exited",
    "store-socket-timeout",
    "nccl-watchdog-timeout",
    "nccl-timeout-dump-signal",
    "gloo-collective-timeout",
    "nccl-heartbeat-stuck",
    "nccl-process-teardown",
    "launcher-sigabrt",
    "slurm-task-failed",
    "torchrun-root-cause",
    "torchrun-child-failed",
    "torchrun-stopping-workers",
)


@dataclass
class Hit:
    line: int
    source: str
    where: LogLine
    fields: dict
    time: str = ""  # the line's own timestamp, when it has one
    in_sentence: bool = False  # a person's sentence quotes it ('on Windows "RuntimeError: ..."'), not a line of output

    def show(self) -> str:
        origin = self.where.where()
        text = self.where.text
        if len(text) > EVIDENCE_CHARS:
            text = text[: EVIDENCE_CHARS - 1] + "…"
        src = f"{self.source}:" if self.source else "line "
        return f"{src}{self.line}" + (f" [{origin}]" if origin else "") + f": {text}"


@dataclass
class Seen:
    """What one pattern matched in the whole log."""

    pattern: Pattern
    order: int  # position of its first hit among all hits
    first: Hit
    count: int = 0
    samples: list[Hit] = field(default_factory=list)
    ranks: set = field(default_factory=set)
    nodes: set = field(default_factory=set)
    by_rank: dict = field(default_factory=dict)  # rank -> fields of its first hit
    last: int = 0  # the line of its last hit (in its source)
    latest: Optional[Hit] = None  # its last hit (`Diagnosis.last_runs_hit`)

    def add(self, hit: Hit) -> None:
        self.count += 1
        self.last = max(self.last, hit.line)
        if self.latest is None or hit.line >= self.latest.line:
            self.latest = hit
        r, n = hit.where.rank, hit.where.node
        new_rank = r is not None and r not in self.ranks
        if r is not None:
            self.ranks.add(r)
            self.by_rank.setdefault(r, hit.fields)
        if n:
            self.nodes.add(n)
        if len(self.samples) < SAMPLES and (new_rank or not self.samples or r is None):
            self.samples.append(hit)


def first_hit(seen: Seen) -> int:
    """The line of `seen`'s first hit (it may be told from a later one: `Diagnosis.last_runs_hit`)."""
    return min([seen.first.line, *(hit.line for hit in seen.samples if hit.source == seen.first.source)])


ERROR_LINES_KEPT = 3
ADVICE_LINES = 2  # lines after a line read on for the remedy it states (a sentence a logger wrapped)



# torch's Module call: it hands the caller's arguments on to forward() unchanged (`result = self.forward(*input,
# **kwargs)`, torch 1.x; `return forward_call(*args, **kwargs)` in _call_impl, `return self._call_impl(*args, **kwargs)`
# in _wrapped_call_impl, torch 2.x), so a call refused for its arguments was written by the frame that called the module
MODULE_CALL = ("_call_impl", "_wrapped_call_impl", "__call__", "_slow_forward")


def arguments_from(frames) -> Optional[Frame]:
    """The frame whose call a "got an unexpected keyword argument" / "missing N required arguments" error is about:
    the innermost one, past torch's Module call that only passes the arguments on (MhLiao/DB#288: the user's
    structure/model.py passes training=True through two module calls to a decoder whose forward takes none)."""
    frames = list(frames)
    while len(frames) > 1 and frames[-1].func in MODULE_CALL and frames[-1].path.replace("\\", "/").endswith("torch/nn/modules/module.py"):
        frames.pop()
    return frames[-1] if frames else None


def bare(msg: LogLine, raw: str) -> bool:
    """The line as a person writes it: no logger's, launcher's or rank's prefix was peeled from it (those are output)."""
    return msg.rank is None and msg.local_rank is None and msg.node is None and raw.strip().endswith(msg.text) and len(raw.strip()) - len(msg.text) <= 4


def commented_code(preceding: Optional[Callable[[int], list[str]]], following: Optional[Callable[[int], list[str]]]) -> bool:
    """A "# ..." line is a comment in code, not a line some logger starts with "#" (a harness's "# error : ...", BuildKit's
    "#12 ..."), when the nearest line before or after it that holds anything is code (lines.py CODE_LINE, SOURCE_LINE)."""
    for near in (preceding(2)[::-1] if preceding is not None else [], following(2) if following is not None else []):
        text = next((seg.text for raw in near for seg in segments(raw) if seg.text), "")
        if text and LogLine(text).is_source():
            return True
    return False


class Diagnosis:
    """Feed it lines (`feed` / `feed_line`), then ask for `findings()`."""

    def __init__(self, patterns: Iterable[Pattern] = ALL) -> None:
        self.patterns = tuple(patterns)
        self.gate = GATE if self.patterns == ALL else needle_gate(self.patterns)
        self.recorded: dict[str, Seen] = {}  # what the patterns matched
        self.told: dict[str, Seen] = {}  # the same, settled with the signs (`seen`)
        self.title_said: Optional[tuple[int, str, str]] = None  # a thread's title that only names a crash no line shows (`tell`)
        # the errors the paste's own words report (knowledge/reported.py), by their line; and those no rule read (`feed_reported`)
        self.reported_at: dict[int, ReportedError] = {}
        self.reported_unread: list[ReportedError] = []
        self.reading_reported = False  # a report is being read (`feed_reported`): its hits are the reporter's quotes
        self.lines = 0
        self.hits = 0
        self.unwrapped_at = 0  # the width a hard-wrapped paste was joined back from (0: it was not wrapped)
        self.ended = ""  # the line that shows the run ended well (knowledge/ending.py), set by the reader
        self.tool = ""  # the first line of a GPU tool's output in the input (knowledge/ending.py), set by the reader
        self.launcher = ""  # the launcher the input shows (knowledge/launcher_only.py), set by the reader
        self.nccl_info = False  # the input shows NCCL's INFO lines, set by the reader
        self.setting = Setting()  # the settings the input shows: WSL, a cluster, a pod, Ray, an engine (knowledge/setting.py), set by the reader
        self.prompts: Optional[Prompts] = None  # the commands typed at a shell prompt in the input (knowledge/reruns.py), set by the reader
        self.openings: Optional[Openings] = None  # the input's opening lines and where they stand again (knowledge/reruns.py), set by the reader
        self.run_starts: Optional[RunStarts] = None  # where a run starts again as the log's own lines show (knowledge/reruns.py), set by the reader
        self.progress: Optional[Progress] = None  # the run's progress, fallback and stage lines (knowledge/progress.py), set by the reader
        self.ranks_heard: Optional[RanksHeard] = None  # what the log says of the job's ranks (knowledge/ranks_heard.py), set by the reader
        self.went_on_said: tuple[tuple[int, int], dict] = ((-1, -1), {})  # `went_on`'s answers, per finding id, while the story and its end stand
        self.said_fixed: Optional[SaidFixed] = None  # sentences that say an error before them was fixed or survived (knowledge/said_fixed.py), set by the reader
        self.said_oom: Optional[SaidOom] = None  # the reporter's words that the run ran out of GPU memory (knowledge/said_oom.py), set by the reader
        self.said_hang: Optional[SaidHang] = None  # the reporter's sentence that the run hangs, and the log lines around it (knowledge/said_hang.py), set by the reader
        self.gpus_unused: Optional[GpusUnused] = None  # a framework's start-up line that GPUs are there and unused (knowledge/gpus_unused.py), set by the reader
        self.nccl_loopback: Optional[NcclLoopback] = None  # NCCL's sockets on the loopback, and the nodes shown (knowledge/nccl_loopback.py), set by the reader
        self.ended_line = 0  # the line of `ended`, set by the reader
        # the paste's parts, the reporter's words and the output, and what in the output shows a run that worked
        # (knowledge/paste_parts.py), set by the reader
        self.paste = PasteParts()
        # the input's first line that shows a process forking (knowledge/forked.py), set by the reader; None where no reader
        # read the input whole (a rank's file of a folder): then CUDA's initialization error keeps its fork
        self.forks: Optional[ForkSeen] = None
        # the build's or pip install's progress lines the input ends in (knowledge/build_cut.py): a build pasted cut before its error
        self.build_cut: Optional[BuildCut] = None
        self.no_work: Optional[NoWork] = None  # the run's own line that it did no work (knowledge/no_work.py), set by the reader
        self.worked: tuple[Worked, ...] = ()
        # (line, text) of the first lines a logger wrote at error level that no pattern or sign read:
        # no failure the tool can name, but not "no line shows a failure" either
        self.error_lines: list[tuple[int, str]] = []
        self.error_count = 0
        # (line, text) of the first lines that speak of an error in words no rule reads (knowledge/mentions.py)
        self.mention_lines: list[tuple[int, str]] = []
        # (line, text, remedy): the first line no rule reads, logged at error level or a warning of a limit, that states its
        # own remedy (knowledge/remedy.py `line_remedy`)
        self.advised: Optional[tuple[int, str, Remedy]] = None
        self.mention_count = 0
        self.all_ranks: set[int] = set()
        self.sources: list[str] = []
        # the rank a whole input belongs to (a per-rank log file), for lines that do not say
        self.default_rank: Optional[int] = None
        # signs of failure read from the log's shape (tracebacks, signals, exits), whatever the patterns know
        self.signs = Signs()
        self.quiet: set[bytes] = set()  # raw lines, without their digits, that told nothing
        self.quiet_said: dict[bytes, str] = {}  # of those, the ones that speak of an error ("error", "mention"): counted again
        self.noise: dict[bytes, Seen] = {}  # raw lines, without digits, of harmless noise already sampled
        self.last: Seen  # the pattern seen last (set by record)
        self.known: dict[str, tuple[Pattern, ...]] = {}  # text -> the patterns it matched
        self.shapes = ShapePatterns(self.patterns)  # a text's shape (digits made 0) -> the patterns it may match
        self.settled_at = -1  # self.hits when the signs were last turned into a Seen

    # -- input -------------------------------------------------------------
    def feed_line(self, raw: str, line: int, source: str = "", following: Optional[Callable[[int], list[str]]] = None,
                  preceding: Optional[Callable[[int], list[str]]] = None) -> None:
        """One physical line that may hold a failure (the caller's prefilter said so).

        A log repeats its lines with only the numbers changed (a warning per step, per rank):
        a line that told nothing the last time is skipped, and a repeated harmless line is
        only counted."""
        key = raw.encode("utf-8", "surrogateescape").translate(None, DIGIT_BYTES)
        said = self.quiet_said.get(key)
        if said is not None:  # a line that speaks of an error, repeated with other numbers: counted and held, not read again
            self.count_said(said, raw, line, source)
            return
        if self.repeated(key):
            return
        hits, events = self.hits, self.signs.events
        self.read_line(raw, line, source, following, preceding)
        said = ""
        if self.hits == hits and self.signs.events == events:
            said = "error" if error_level(raw) else "mention" if speaks_of_error(raw) else ""
            self.count_said(said, raw, line, source)
            if self.advised is None and said != "mention" and (said or WARNED.search(raw) is not None):
                remedy = line_remedy(raw, following(ADVICE_LINES) if following is not None else [], line, warning=not said)
                self.advised = (line, raw.strip()[:200], remedy) if remedy is not None else None
        if self.signs.events != events:
            return  # not remembered: what the line said matters next time too
        if len(self.quiet) + len(self.noise) > MEMO:
            self.quiet.clear()
            self.quiet_said.clear()
            self.noise.clear()
        if self.hits == hits:
            low = raw.lower()
            if not any(word in low for word in NUMBERS_MATTER) or NUMBER_BY_WORD.search(raw) is None:  # "exit code 0" told nothing, "exit code 1" will
                self.quiet.add(key)
                if said:
                    self.quiet_said[key] = said
        elif self.hits == hits + 1 and self.last.pattern.role == HARMLESS and len(self.last.samples) >= SAMPLES:
            self.noise[key] = self.last

    def count_said(self, said: str, raw: str, line: int, source: str) -> None:
        """A line no rule read that is logged at error level (`said` "error") or speaks of an error ("mention"): counted, and
        held to be shown."""
        if said == "error":
            self.error_count += 1
            if len(self.error_lines) < ERROR_LINES_KEPT:
                self.error_lines.append((line, raw.strip()[:200]))
        elif said == "mention" and not self.signs.in_traceback(source, line):  # (a frame's path or source line)
            self.mention_count += 1
            hold(self.mention_lines, (line, raw.strip()[:200]))  # the first and the latest (mentions.lead_first picks)

    def told_nothing(self, key: bytes) -> bool:
        """Whether `repeated(key)` is true and changes nothing (a line that told nothing, not noise to count): the scanner
        leaves out of a block the lines of a trigger that are all such (reader.py `quiet_triggers`)."""
        return key in self.quiet and key not in self.quiet_said

    def may_forget(self, lines: int) -> bool:
        """Whether feeding this many more lines may forget the lines remembered (MEMO), and with them what `told_nothing` said."""
        return len(self.quiet) + len(self.noise) + lines > MEMO

    def repeated(self, key: bytes) -> bool:
        """Whether a line (its UTF-8 without digits: `key`) told nothing the last time, or is harmless noise
        sampled enough (then counted): it is not read again. The scanner asks before it decodes a line."""
        if key in self.quiet:
            return key not in self.quiet_said  # (one that speaks of an error is counted: feed_line)
        again = self.noise.get(key)
        if again is not None:
            again.count += 1
            return True
        return False

    def read_line(self, raw: str, line: int, source: str, following: Optional[Callable[[int], list[str]]],
                  preceding: Optional[Callable[[int], list[str]]] = None) -> None:
        for msg in segments(raw):
            if msg.rank is None and self.default_rank is not None:
                msg = LogLine(msg.text, self.default_rank, msg.local_rank, msg.node)
            if msg.rank is not None:
                self.all_ranks.add(msg.rank)
            if msg.text[:2] == "# " and commented_code(preceding, following):
                continue  # a comment in a script the log pastes (lines.py CODE_LINE): what its author wrote, not output
            if msg.is_source() or self.signs.is_quoted_source(source, line):
                glued = self.signs.see_source(msg, raw, line, source)
                if glued is None and PRINTED_PROBE.match(msg.text) is None:
                    continue
                # the exception glued to the source line is read as its own line; a script's print of its GPU probe is read
                # with the answer it printed after it (classes17b.py's program-found-no-gpu: no answer, no finding)
                msg = glued or msg
            else:
                self.signs.see(msg, raw, line, source, following, preceding)
                if self.signs.is_shown(source, line):
                    continue  # a row of a traceback's source display (rich's box, IPython's numbered lines): code, not output
            person = bare(msg, raw)
            text, found = msg.text, self.matches(msg.text)
            if not found and (read := carried(msg.text)) is not None:
                # a message in a library's shape (pydantic's, a C++ assert's, ggml's: knowledge/carried.py), read as the
                # exception its words are, for the classes of messages to decide; never the catch-all's
                text, found = read, [(p, m) for p, m in self.matches(read) if p.role == CAUSE and p.id not in READS_ANY_EXCEPTION]
            for p, m in found:
                if person and p.role != HARMLESS and said_in_prose(text, m.start(), m.end()):
                    continue  # a person's sentence that negates or asks about the error it names (mentions.py)
                if p.id in READS_ANY_EXCEPTION and self.signs.handled(msg.rank, line):
                    continue  # an exception a fallback warning said was caught: it names no failure
                context: list[str] = []
                if p.context_after and following is not None:
                    context = [seg.text for raw_next in following(p.context_after) for seg in segments(raw_next)]
                valued = (p.fields or groups)(m, context)
                if valued is None:
                    continue  # the line asks, and the lines after it do not give the answer the pattern reads (pattern.py)
                values = valued
                if p.id in READS_ANY_EXCEPTION and following is not None and "validation error" in str(values.get("message", "")):
                    # pydantic's header: its first error, on the lines after it, is the message (knowledge/carried.py)
                    under = [seg.text for raw_next in following(3) for seg in segments(raw_next)]
                    values["message"] = validation_error(str(values["message"]), under) or values["message"]
                if p.fields_before is not None and preceding is not None:
                    values.update(p.fields_before(line, preceding(p.context_before)))
                p = self.refine(p, values, msg)
                where = msg
                if p.id == "torchrun-root-cause" and values.get("rank", "").isdigit():
                    where = LogLine(msg.text, int(values["rank"]), msg.local_rank, values.get("host") or msg.node)
                quoted = person and quoted_in_sentence(msg.text, needle_at(p, msg.text)) or self.reading_reported
                self.record(p, Hit(line, source, where, values, time_of(raw), quoted))
                self.signs.claim(msg, line, p.id)
                signal = SIGNAL_EXITCODES.get(str(values.get("exitcode", ""))) if p.id == "torchrun-root-cause" else None
                if signal and signal in BY_ID and signal not in self.recorded:
                    self.record(BY_ID[signal], Hit(line, source, where, values))

    def matches(self, text: str) -> list[tuple[Pattern, re.Match]]:
        """The pattern that claims a message (the first in precedence order) and, when that is a
        consequence whose line quotes its cause ("watchdog ... exception: CUDA error: ..."),
        the cause's pattern too. Logs repeat their lines: what a text matched is remembered
        (exactly); a text with no needle of any pattern costs one search (`GATE`), and one whose
        shape was seen before is tried only against the patterns its shape may match (knowledge/shapes.py)."""
        known = self.known.get(text)
        if known is None:
            found = self.first_found(text)
            if not found:
                return []
            if len(self.known) > MEMO:
                self.known.clear()
            self.known[text] = tuple(p for p, _ in found)
            return found
        out = []
        for p in known:
            m = p.regex.search(text)
            if m is not None:
                out.append((p, m))
        return out

    def first_matches(self, text: str) -> tuple[Pattern, ...]:
        return tuple(p for p, _ in self.first_found(text))

    def first_found(self, text: str) -> list[tuple[Pattern, re.Match]]:
        candidates = self.shapes.of(text)
        if candidates is None:
            if self.gate.search(text) is None:
                return []  # no needle of any pattern: nothing to try
            candidates = self.patterns
        found: list[tuple[Pattern, re.Match]] = []
        start = 0
        for p in candidates:
            if found and (p.role != CAUSE or p.id in GENERIC_FINDINGS):
                continue  # after a consequence: only a specific cause it quotes
            m = p.match(text)
            if m is None:
                continue
            if found and m.start() <= start:
                continue  # a wrapper around the consequence ("NCCL error in: ..., remote process exited"), not a cause it quotes
            found.append((p, m))
            start = m.start()
            if p.role != CONSEQUENCE or len(found) == 2:
                break
        return found

    def is_failure_line(self, raw: str) -> bool:
        """Whether a line that holds no trigger word (knowledge/prefilter.py) is still a failure's own line, as a
        paste shows it (issue 35): a known failure's message pasted without its exception's class, alone on its line
        or as inline code (`Expected all tensors to be on the same device, ...`), or after the location another
        runtime puts before its error (Lua's `InstanceNormalization.lua:50: arguments are located on different
        GPUs`); or a logger's record at error level whose words hold none (glog's `E0228 04:58:23.710914 3021
        ResourceManager.cpp:95] Cannot load from file ...`). A sentence that only mentions the message ("I used to
        get Expected all tensors ... but now it works") does not open with it and is left as it was."""
        if error_level(raw):
            return True
        for msg in segments(raw):
            text = RUNTIME_LOCATION.sub("", msg.text, count=1)
            for p in self.first_matches(text):
                m = p.regex.search(text)
                if p.role == CAUSE and m is not None and m.start() == 0:
                    return True
        return False

    def feed(self, lines: Iterable[str], source: str = "") -> None:
        """Every line of a text (no prefilter: for short texts such as a rank's stderr)."""
        buffered = list(lines)

        def after(i: int) -> Callable[[int], list[str]]:
            return lambda n: buffered[i + 1 : i + 1 + n]

        def before(i: int) -> Callable[[int], list[str]]:
            return lambda n: buffered[max(0, i - n) : i]

        for i, raw in enumerate(buffered):
            self.lines += 1
            self.feed_line(raw, i + 1, source, after(i), before(i))

    def feed_reported(self, reports: Iterable[ReportedError], read: bool) -> None:
        """The errors the paste's own words report (knowledge/reported.py): their lines are marked as the reporter's (a
        finding told from them alone says so), and where `read` (the log shows no failure of its own), each whose line no
        rule read is read as a line of its own, by the same rules as the log's lines. Those no rule reads are kept
        (`reported_unread`)."""
        seen = {hit.line for s in self.recorded.values() if not s.first.source for hit in (s.first, *s.samples)}
        # a thread whose title names a change (a pull request's "# feat: add Jetson support"): the errors its people's sentences
        # quote are the problem the change fixes ("This caused `int("[N/A]")` to raise `ValueError`", heldout24b
        # Chen-zexi/vllm-cli#11, a merged pull request): quoted as reported, never read as the run's failure
        history = self.paste.title is not None and names_change(self.paste.title[1])
        for report in reports:
            self.reported_at[report.line] = report
            if report.line in seen or not read:
                continue
            if history and report.place != "title":
                self.reported_unread.append(report)
                continue
            hits, events, kept, self.reading_reported = self.hits, self.signs.events, len(self.signs.signs), True
            self.feed_line(report.text, report.line)
            self.reading_reported = False
            if report.place == "title" and self.error_lines and self.signs.retract(kept, HEADING_SHY):
                # a title's quote of a tool's line beside the log's own lines at error level: those lead, the title is quoted
                # (the thread's later posts may be another problem: heldout11's habitat-sim#504, a build error in the title)
                self.reported_unread.append(report)
                continue
            if self.hits == hits and self.signs.events == events and report.place == INTRODUCED:
                # the line a reporter's sentence introduces as the error, which no rule reads: the failure's own line, unrecognised
                self.signs.add(Sign(INTRODUCED, f"{KIND[INTRODUCED]}: {report.text[:120]}", report.text[:300], report.line, "",
                                    LogLine(report.text), text=report.text))
                continue
            if self.hits == hits and not report.shown:
                self.reported_unread.append(report)  # (one the log shows again is the log's own line: its answer tells it)

    def refine(self, p: Pattern, values: dict, msg: LogLine) -> Pattern:
        """What only the line's origin tells: an out-of-memory on GPU 0 reported by
        another rank means that rank put a context on GPU 0; a CPU tensor refused by NCCL
        inside DistributedDataParallel's constructor is the model left on the CPU."""
        if p.id == BACKEND_DISABLED and values.get("read_as") in BY_ID:
            # a GPU backend turned off, where the program's next lines say it stopped with nothing to run on (an error: the backend
            # it could not use), or show a GPU found and used through another (harmless) (knowledge/patterns/classes31b.py)
            p = BY_ID[values["read_as"]]
        if p.id in READ_AS_FOUND and values.get("read_as") in BY_ID:
            # a CUDA or HIP error read by its code whose fault has a finding of its own (knowledge/patterns/classes19a.py):
            # told as that finding, whatever program printed it
            p = BY_ID[values["read_as"]]
        if p.id == "cuda-oom" and "0" in (values.get("gpu"), values.get("gpu_old")):
            if (msg.rank or 0) != 0 or (msg.local_rank or 0) != 0:
                return BY_ID["cuda-oom-gpu0-other-ranks"]
        if p.id == "store-barrier-waiting" and int(values.get("joined", 0)) > int(values.get("world_size", 0)):
            return BY_ID["store-barrier-extra-ranks"]
        if p.id == "store-waiting-for-clients":
            # the barrier timing out with more arrivals than world_size: not a rank missing, a second launch in the store
            joined, expected = values.get("joined2") or values.get("joined"), values.get("expected2") or values.get("expected")
            if joined and expected and int(joined) > int(expected):
                return BY_ID["store-barrier-extra-ranks"]
        if p.id == "library-api-mismatch":
            # only an error raised inside a library is about two libraries; in the user's code it is the user's exception
            # (pytest's "E   AttributeError: ..." is told by its "path:line: AttributeError" line: the same class and message)
            sign = self.signs.exception_at(msg) or self.signs.same_exception(str(values.get("exception", "")), str(values.get("message", "")))
            last = sign.raised_in() if sign is not None else None
            if sign is not None and last is not None and values.get("callee"):
                last = arguments_from(sign.frames)
            if last is None and api_shape.WARNED.search(msg.text) is None:
                # no traceback of it in the log: the message alone names the API that does not fit its caller (issue 35
                # item 4: 12 of the development parts' 14 such lines were two packages' versions, or a bug a later one fixed);
                # not in a warning's line (a fallback a library logs, "[WARNING] apex not usable: AttributeError: ...")
                values["raised_by"] = api_shape.NOT_SHOWN
                return p
            if last is None or last.user():
                return BY_ID["python-exception"]
        if p.id in ("ddp-wrapper-attribute", "ddp-wrapper-private-attribute"):
            # read by torch's own parallel code (an older DDP's constructor), not through the wrapper by the user's:
            # no attribute of the user's model; the exception is the library's (knowledge/patterns/classes10a.py)
            sign = self.signs.exception_at(msg)
            if sign is not None and read_by_wrapper_itself((f.path, f.func) for f in sign.frames):
                values.update(exception=sign.what, message=sign.message)
                return BY_ID["python-exception"]
        if p.id == "nccl-process-teardown" and values.get("work3"):
            # "Timeout at NCCL work: N" is the watchdog saying the collective timed out (torch >= 2.4 prints it
            # before, or instead of, "Watchdog caught collective operation timeout"): the timeout, not only the teardown
            return BY_ID["nccl-watchdog-timeout"]
        if p.id == "ddp-device-mismatch" and values.get("gpus"):
            # two GPUs in one operation: the set-up its traceback's frames show (knowledge/patterns/classes9.py)
            sign = self.signs.exception_at(msg)
            values.update(setup_of((f.path for f in sign.frames) if sign is not None else (), values["gpus"], msg.rank is not None))
        if p.id == "run-interrupted" and values.get("exception"):
            # interrupted inside an `except` block that reports the exception it caught (knowledge/patterns/classes20b.py):
            # its parent stopped it after that failure, no one pressed Ctrl-C
            sign = self.signs.exception_at(msg)
            if sign is not None and sign.frames and reporting_error(sign.frames[-1].code):
                return BY_ID["interrupted-while-reporting-error"]
        if p.id == "module-not-found" and values.get("module"):
            # raised under pip's build hook (its isolated environment preparing a package's build): the build's import, not the
            # program's interpreter (knowledge/patterns/builds.py)
            sign = self.signs.exception_at(msg)
            if sign is not None and under_build_hook(sign.frames):
                values["detail"] = isolated_detail(str(values["module"]))
                return BY_ID[ISOLATED_BUILD]
        if p.id == "nccl-tensor-not-cuda":
            sign = self.signs.exception_at(msg)
            if sign is not None and any(f.in_ddp_constructor() for f in sign.frames):
                return BY_ID["ddp-model-on-cpu"]
        return p

    def record(self, p: Pattern, hit: Hit) -> None:
        seen = self.recorded.get(p.id)
        if seen is None:
            seen = self.recorded[p.id] = Seen(p, self.hits, hit)
        elif "SeqNum" in hit.fields and "SeqNum" not in seen.first.fields:
            # the watchdog's line that names the collective (SeqNum, OpType, how long it ran) says more
            # than the "Timeout at NCCL work" line before it: it is the one told
            seen.first = hit
            if hit.where.rank is not None:
                seen.by_rank[hit.where.rank] = hit.fields
        elif seen.first.fields.get("wrapper") and not hit.fields.get("wrapper") and hit.source == seen.first.source:
            # an exception's line that only wraps the failure (TensorFlow's "N root error(s) found", PaddlePaddle's bare
            # ResourceExhaustedError: patterns/classes23c.py): the line under it that names the allocation is the one told
            seen.first = hit
        seen.add(hit)
        self.hits += 1
        self.last = seen

    # -- the story -----------------------------------------------------------
    def explained_by(self, seen: Seen) -> Optional[Seen]:
        """The pattern in this log that explains `seen`, if any."""
        if seen.pattern is UNRECOGNISED:
            return self.attempt_before(seen)
        if seen.pattern.id == "launcher-sigkill" and (raiser := self.killed_after_raise(seen)) is not None:
            return raiser
        if seen.pattern.id in LEFT_BY_A_FAILED_READER:
            # the input's reader failed with an exception the log holds: that exception is why the queue was left empty
            reader = self.told.get(UNRECOGNISED.id) or self.told.get("python-exception") or self.told.get(REFUSED_VALUE)
            if reader is not None:
                return reader
        for after in seen.pattern.after:
            if after == "*":
                causes = [s for s in self.seen.values() if s.pattern.role == CAUSE and s is not seen and s.pattern.severity is Severity.ERROR
                          and self.fixed_before(s) is None]  # (not an error the text says is gone or did not stop the job)
                causes = [s for s in causes if not any(a != "*" and a in self.seen for a in s.pattern.after) and not self.runs_apart(s, seen)]
                if seen.pattern.id in STOPPED_FROM_OUTSIDE:
                    # a stop from outside: an error after it in the same file is what it caused, not why it came
                    causes = [s for s in causes if s.first.source != seen.first.source or s.first.line < seen.first.line]
                if causes:
                    return min(causes, key=lambda s: s.order)
            elif after in self.seen and after != seen.pattern.id and not self.runs_apart(self.seen[after], seen):
                return self.seen[after]
        return None

    def killed_after_raise(self, seen: Seen) -> Optional[Seen]:
        """The failure whose exception line stands right above each bare "Killed" of `seen` (patterns/launcher.py
        `killed_under_exception`): the program raised, then its process was killed as it went down (a server stopping its own
        process tree after its error), so the kill is that failure's consequence, not the kernel's OOM killer's; or None."""
        hits = [seen.first, *seen.samples]
        if not all(h.fields.get("bare") and h.fields.get("raised_line") for h in hits):
            return None
        raised = min(int(h.fields["raised_line"]) for h in hits)
        causes = [s for s in self.seen.values() if s is not seen and s.pattern.role == CAUSE and s.pattern.severity is Severity.ERROR
                  and s.first.source == seen.first.source and s.first.line <= raised]
        return max(causes, key=lambda s: s.first.line, default=None)

    def runs_apart(self, cause: Seen, seen: Seen) -> bool:
        """`cause` and `seen` are two runs' (the program started again after every line of the earlier one, at or before the
        later one's: `started_anew`): one run's failure did not cause what another printed (heldout18w: Slurm cancelled the
        last of seven jobs appended to one file; an earlier job's failed check did not cause that)."""
        if cause.first.source or seen.first.source:
            return False
        earlier, later = (cause, seen) if cause.first.line < seen.first.line else (seen, cause)
        many = self.many_processes(earlier)
        last = max(earlier.last, earlier.first.line)
        # (where several processes write the log, a line they all print is no run's start: the starts the log shows)
        restart = self.started_anew(last, many) if many else self.started_again(first_hit(earlier), last, many)
        return restart is not None and restart[0] <= later.first.line

    def attempt_before(self, seen: Seen) -> Optional[Seen]:
        """The failed connection attempt just before a traceback that does not say what failed (CONNECTION_ATTEMPTS)."""
        sign = seen.first.fields.get("sign")
        if not isinstance(sign, Sign) or not sign.cut:
            return None
        for pid in CONNECTION_ATTEMPTS:
            attempt = self.told.get(pid)
            if attempt is not None and attempt.first.source == seen.first.source and 0 < seen.first.line - attempt.first.line <= SURFACING_LINES:
                return attempt
        return None

    @property
    def seen(self) -> dict[str, Seen]:
        """What the log shows, per finding id: the patterns' matches settled with the signs."""
        self.settle()
        return self.told

    def settle(self) -> None:
        """Before the story is told: a failure the log shows but no cause pattern explains
        becomes an honest "unrecognised failure"; so does a Python exception that was not
        raised in the user's own code (the catch-all may only blame the user's code when
        the failing frame is theirs and nothing points at the environment)."""
        if self.settled_at == self.hits + self.signs.count:
            return
        self.settled_at = self.hits + self.signs.count
        self.told = dict(self.recorded)
        self.tell(self.told)
        self.gathered_loss_used(self.told)

    def retell(self) -> None:
        """The readers the story asks about runs (openings, process starts) are set: the story is settled again."""
        self.settled_at = -1

    def tell(self, told: dict[str, Seen]) -> None:
        """settle's story: what the patterns matched, with the signs that no pattern explained."""
        for pid, seen in list(told.items()):
            if seen.count == 1 and not seen.first.source and title_label(seen.first.line, seen.first.where.text):
                # a thread's title that names the crash by its label, and no line of the log that shows it: the reporter's
                # word, quoted beside the answer, not the run's failure (knowledge/title_said.py)
                del told[pid]
                self.title_said = (seen.first.line, seen.first.where.text, pid)
        for waiting, done in RESOLVED_BY.items():
            if done in told:
                told.pop(waiting, None)  # it was only progress
        for pid, seen in list(told.items()):
            told[pid] = self.last_runs_hit(seen)
        self.fork_not_shown(told)
        self.raised_not_degraded(told)
        generic = told.get("python-exception")
        if generic is not None:
            generic = told["python-exception"] = self.printed_first(generic)
            # (an environment report's own error is not the run's: the run's failure is told from what else the log shows)
            generic = self.environment_reported(told, generic)
        if generic is not None:
            sign = self.signs.exception(generic.first.fields.get("exception", ""), generic.first.where.rank)
            if generic.first.line != first_hit(generic):  # told from a later run's hit (`last_runs_hit`): that run's traceback
                sign = self.signs.exception_at(generic.first.where) or sign
            said = f"{generic.first.fields.get('exception', '')}: {generic.first.fields.get('message', '')}"
            original = self.signs.original_of(generic.first.source, generic.first.line, said)
            if original is not None:
                # a relay's line (knowledge/relays.py) whose original the log cuts: the original is the failure, told through the relay
                del told["python-exception"]
                first = Hit(original.line, original.source, original.where, {"sign": original}, original.time)
                told[UNRECOGNISED.id] = Seen(UNRECOGNISED, generic.order, first, generic.count, generic.samples, generic.ranks, generic.nodes, generic.by_rank)
                self.by_frame(told, original)
                return
            if sign is None or not sign.users_code_failed():
                del told["python-exception"]
                if sign is not None and any(pid in told for pid in COLLECTIVE_TIMEOUTS) and timeout_surfacing(sign):
                    return  # the timed-out rank's NCCL error: the timeout tells it
                first = Hit(generic.first.line, generic.first.source, generic.first.where, {**generic.first.fields, "sign": sign})
                told[UNRECOGNISED.id] = Seen(UNRECOGNISED, generic.order, first, generic.count, generic.samples, generic.ranks, generic.nodes, generic.by_rank)
                self.by_frame(told, sign, generic.first.fields.get("exception", ""), generic.first.fields.get("message", ""))
            return
        # (a batch script's set-up that failed explains no failure the log shows after it: the job's own failure is told too)
        explained = any(s.pattern.role == CAUSE and s.pattern.severity is Severity.ERROR and s.pattern.id not in TOLD_AFTER_33I for s in told.values())
        sign = self.signs.headline()
        later = self.later_runs_sign(told) if explained else None
        if later is not None:
            sign, explained = later, False  # the last run's own failure (an exit status too): the patterns named earlier runs'
        elif sign is not None and not explained:
            sign = self.last_runs_sign(sign)
        if not explained and later is None and (sign is None or sign.strength < STRONG):
            sign = self.fatal_signal_exit() or sign
        if sign is None or explained:
            return
        if (later is None and any(s.pattern.severity is Severity.ERROR and s.pattern.id not in TOLD_AFTER_33I for s in told.values()) and sign.strength < STRONG
                and not self.fatal_signal_exit()):
            return  # an exit code the launcher's own findings already tell: no second story
        if any(pid in told for pid in COLLECTIVE_TIMEOUTS) and timeout_surfacing(sign):
            return  # the timed-out rank's own Python stack as the watchdog took it down: the timeout tells it
        if sign.users_code_failed():  # an exception no pattern knows, raised in the user's own code: the catch-all
            catch_all = BY_ID["python-exception"]
            hit = Hit(sign.line, sign.source, sign.where, {"exception": sign.what, "message": sign.message}, sign.time)
            seen = Seen(catch_all, -1, hit)
            seen.add(hit)
            told[catch_all.id] = seen
            return
        hit = Hit(sign.line, sign.source, sign.where, {"sign": sign}, sign.time)
        seen = Seen(UNRECOGNISED, -1, hit)  # the failure the log shows comes before what it caused
        seen.add(hit)
        told[UNRECOGNISED.id] = seen
        self.by_frame(told, sign)

    def fork_not_shown(self, told: dict[str, Seen]) -> None:
        """CUDA's initialization error read as a forked child's (`cuda-fork-reinit`) in an input that shows no process forking
        (knowledge/forked.py): told as CUDA's error 3 (cuda-runtime-error), whose meaning and step name its causes and what
        decides between them (pywhispercpp, heldout27b: ggml's CUDA set-up in one process). An input no reader read whole
        (`forks` None) keeps the fork."""
        fork = told.get(FORK_REINIT)
        if fork is None or self.forks is None or self.forks.line:
            return
        del told[FORK_REINIT]
        runtime = BY_ID["cuda-runtime-error"]
        if runtime.id in told:
            return  # (CUDA's message, in another line, is told already)
        fields = {k: v for k, v in fork.first.fields.items() if k not in ("code", "meaning", "step")}
        told[runtime.id] = dataclasses.replace(fork, pattern=runtime, first=dataclasses.replace(fork.first, fields={**fields, **fault_fields(INITIALIZATION)}))

    def raised_not_degraded(self, told: dict[str, Seen]) -> None:
        """A warning that the run goes on degraded (knowledge/ending.py DEGRADED_RUN: the CPU for the GPU, a fallback kernel),
        or that a build has no GPU backend (RAISED_FAILS), read on a line the process raised is the run's failure, not a fallback: an error. Raised: the line is an
        exception's ("RuntimeError: ... CUDA_PATH is set but CUDA wasn't able to be loaded", Anjok07/ultimatevocalremovergui#738),
        or the pattern's line is the message of an abort or an exception the log shows (C++'s "terminate called after
        throwing an instance of 'Ort::Exception'" and its what(), k2-fsa/sherpa-onnx#1465): the same words a library logs as
        its warning before it falls back are there the error that stopped the program (heldout27b: both had been told as a
        warning that the model runs on the CPU)."""
        for pid, seen in list(told.items()):
            if pid not in RAISED_FAILS or seen.pattern.severity is not Severity.WARN:
                continue
            at = self.raised_at(seen)
            if at:
                p = seen.pattern
                title = f"{p.title}; here raised (line {at}): the program stopped on it, it did not go on without it"
                told[pid] = dataclasses.replace(seen, pattern=dataclasses.replace(p, severity=Severity.ERROR, title=title))

    def raised_at(self, seen: Seen) -> int:
        """The line where what `seen` read was raised (`raised_not_degraded`), or 0."""
        for hit in (seen.first, *seen.samples):
            if not hit.in_sentence and RAISED_LINE.match(hit.where.text):
                return hit.line
        return min((s.line for s in self.signs.signs if s.claimed == seen.pattern.id and s.kind in RAISED_KINDS), default=0)

    def environment_reported(self, told: dict[str, Seen], generic: Seen) -> Optional[Seen]:
        """The exception answer without an environment report's own traceback (collect_env's frames:
        knowledge/patterns/classes20b.py), which is told as that report's failure, not the run's (dphnAI/sonar#426: env.py's
        pip listing failed, above the server's cut stack): the answer from its next exception, or None when it had no other."""

        def reported(hit: Hit) -> bool:
            sign = self.signs.exception_at(hit.where)
            return sign is not None and not sign.cut and environment_report(sign.frames)

        if not reported(generic.first):
            return generic
        report = BY_ID["environment-report-failed"]
        told[report.id] = Seen(report, generic.order, generic.first, 1, [generic.first], generic.ranks, generic.nodes, generic.by_rank, generic.first.line)
        rest = [hit for hit in generic.samples if hit is not generic.first and not reported(hit)]
        if not rest or generic.count == 1:
            del told["python-exception"]
            return None
        told[generic.pattern.id] = Seen(generic.pattern, generic.order, rest[0], generic.count - 1, rest, generic.ranks, generic.nodes, generic.by_rank, generic.last)
        return told[generic.pattern.id]

    def printed_first(self, seen: Seen) -> Seen:
        """`seen` told from its first line that ends a traceback the log prints, when its first line is an error quoted alone
        (a title, a sentence: no traceback of its class in the log) and a later one ends one: the run's own output over a
        quotation of another error (NVIDIA/TensorRT-LLM#1950: the title's ImportError, solved, then the run's RuntimeError)."""
        first = seen.first
        if self.signs.exception(str(first.fields.get("exception", "")), first.where.rank) is not None:
            return seen  # its class has a traceback in the log: told from it already
        for hit in seen.samples:
            sign = self.signs.exception_at(hit.where) if hit.line > first.line and hit.source == first.source else None
            if sign is not None and sign.frames and not sign.cut:
                return Seen(seen.pattern, seen.order, hit, seen.count, seen.samples, seen.ranks, seen.nodes, seen.by_rank, seen.last)
        return seen

    def by_frame(self, told: dict[str, Seen], sign: Optional[Sign], exception: str = "", message: str = "") -> None:
        """An unrecognised exception whose innermost frame is ZeRO's own code is that class (knowledge/patterns/classes9.py);
        an EOFError in spawn's own _main is a child its parent sent nothing (knowledge/patterns/classes11a.py); zip() refusing
        a value in DataParallel's own gather_map is a replica's non-tensor output (knowledge/patterns/classes12a.py); a distributed
        sampler's own assert is a dataset with fewer samples than ranks (knowledge/patterns/classes13b.py); a ValueError, a
        TypeError or an assert raised in a library's own frame is its check refusing what its caller gave it
        (knowledge/patterns/classes23c.py)."""
        said = zero_internal(sign, exception, message)
        decided = ("zero-optimizer-internal-error", said) if said else (
            frame_class11(sign, exception, message) or frame_class12a(sign, exception, message) or frame_class13b(sign, exception, message)
            or self.refused_by_library(sign)
        )
        if decided:
            unrecognised = told.pop(UNRECOGNISED.id)
            first = unrecognised.first
            hit = Hit(first.line, first.source, first.where, decided[1], first.time)
            seen = told[decided[0]] = Seen(BY_ID[decided[0]], unrecognised.order, hit)
            seen.add(hit)

    def refused_by_library(self, sign: Optional[Sign]) -> Optional[tuple[str, dict]]:
        """A library's own check refusing what its caller gave it (knowledge/patterns/classes23c.py), when the message is of no
        class that names it already (an API's shape, Python's own type errors, the classes unrecognised.py names) and it is
        the first exception of its input: an earlier one (flax#3364's ValueError above a test's tearDown that failed after
        it) is the likelier cause, and the answer stays undecided."""
        if sign is None or message_class(sign) is not None or API_SHAPE.search(f"{sign.what}: {sign.message}"):
            return None
        said = " ".join(sign.message.split())[:40]
        earlier = [s.line for s in self.signs.signs if s.kind == "exception" and s.source == sign.source and s.line < sign.line]
        generic = self.recorded.get("python-exception")
        if generic is not None:  # an exception's line quoted alone, without its traceback
            earlier += [h.line for h in (generic.first, *generic.samples) if h.source == sign.source and h.line < sign.line
                        and " ".join(str(h.fields.get("message", "")).split())[:40] != said]
        return None if earlier else frame_class23c(sign)

    def gathered_loss_used(self, told: dict[str, Seen]) -> None:
        """DataParallel's warning that it gathered scalars into a vector, then the first failure after it, in the same input,
        where that vector is used as a scalar (backward's refusal, a size mismatch, a traceback cut inside backward): the
        failure is that use (knowledge/patterns/classes13b.py). Without such a failure the warning stays a lead."""
        warning = told.get("dataparallel-gathered-scalars")
        if warning is None:
            return
        for pid in ("python-exception", UNRECOGNISED.id):
            failure = told.get(pid)
            if failure is None or failure.first.source != warning.first.source or failure.first.line <= warning.first.line:
                continue
            fields = failure.first.fields
            sign = fields.get("sign")
            if not isinstance(sign, Sign):
                sign = self.signs.exception(fields.get("exception", ""), failure.first.where.rank) if fields.get("exception") else None
            said = scalar_loss_gathered(sign, fields.get("exception", ""), fields.get("message", ""))
            if not said:
                continue
            del told[pid]
            told.pop(warning.pattern.id)
            first = failure.first
            hit = Hit(first.line, first.source, first.where, {**said, "warning_line": warning.first.line}, first.time)
            seen = told["dataparallel-scalar-loss-gathered"] = Seen(BY_ID["dataparallel-scalar-loss-gathered"], failure.order, hit)
            seen.add(hit)
            return

    def fatal_signal_exit(self) -> Optional[Sign]:
        """A launcher's report that a worker died of a signal that is itself the failure (SIGFPE, SIGILL:
        'exitcode: -8'), which no pattern of its own tells: the line a launcher summary claimed shows
        the failure, so the answer names it rather than 'its cause is not in this log'."""
        return next((s for s in self.signs.signs if s.kind in ("exitcode", "exit") and SELF_TELLING.search(s.what)), None)

    def ordered(self) -> list[tuple[Seen, Optional[Seen]]]:
        """(what was seen, what explains it) in the order to tell it."""
        explain = {pid: self.explained_by(s) for pid, s in self.seen.items()}
        # an error a pattern names leads the catch-alls beside it (an exception no pattern knows is most often
        # what the named failure caused: the failure detector's own signs already give way to it, `settle`)
        roots = sorted(
            (s for s in self.seen.values() if s.pattern.role == CAUSE and explain[s.pattern.id] is None),
            key=lambda s: (self.past(s) or self.fixed_before(s) is not None, only_quoted(s), s.pattern.id in TOLD_AFTER_OTHER_CAUSES, s.pattern.severity is not Severity.ERROR,
                           s.pattern.id in TOLD_AFTER_NAMED_CAUSES, s.order),
        )
        out: list[tuple[Seen, Optional[Seen]]] = [(s, None) for s in roots]
        placed = {s.pattern.id for s in roots}
        # what each placed finding explains, right after the causes, by first appearance
        rest = sorted((s for s in self.seen.values() if s.pattern.id not in placed and explain[s.pattern.id] is not None), key=lambda s: s.order)
        out += [(s, explain[s.pattern.id]) for s in rest]
        placed |= {s.pattern.id for s in rest}
        rank_of = {pid: i for i, pid in enumerate(CONSEQUENCE_ORDER)}
        orphans = sorted(
            (s for s in self.seen.values() if s.pattern.id not in placed and s.pattern.role == CONSEQUENCE),
            key=lambda s: (rank_of.get(s.pattern.id, len(rank_of)), s.order),
        )
        if orphans and not roots:
            # no cause in the log: the first consequence heads the story, the rest follow from it
            out += [(orphans[0], None)] + [(s, orphans[0]) for s in orphans[1:]]
        else:
            out += [(s, None) for s in orphans]
        placed |= {s.pattern.id for s in orphans}
        out += sorted(((s, None) for s in self.seen.values() if s.pattern.id not in placed), key=lambda t: t[0].order)
        return out

    def stale(self, seen: Seen) -> Optional[tuple[Command, Command]]:
        """(the command, the later command that ran it again) when every line of `seen` is in the output of a
        command the paste shows run again after it (knowledge/reruns.py): an earlier attempt's, not the job's."""
        if self.prompts is None or seen.first.source:
            return None
        rerun = self.prompts.rerun_after(seen.first.line)
        if rerun is None and (sign := self.sign_of(seen) or seen.first.fields.get("sign")) is not None and isinstance(sign, Sign):
            # no command before it: the paste starts in a run's output, and a prompt after it runs the script its traceback
            # names again (`ran`'s line 0: the paste does not show the command that ran it first)
            mine = [f.path for f in sign.frames if f.user()]
            again = self.prompts.script_run_after(seen.first.line, mine)
            rerun = (Command(0, mine[-1]), again) if again is not None else None
        return rerun if rerun is not None and max(seen.last, seen.first.line) < rerun[1].line else None

    def past(self, seen: Seen) -> bool:
        """`seen` is not the run's end: an earlier attempt's, an earlier run's, or one the job went on past."""
        return (self.stale(seen) is not None or self.earlier_run(seen) is not None or self.went_on(seen) is not None
                or self.start_up_then_run(seen) is not None)

    def start_up_then_run(self, seen: Seen) -> Optional[tuple[int, str]]:
        """(line, text) of the progress after the log's last exception (PROGRESS_AFTER lines of one kind, their numbers
        moving, or a line of a kind the log printed before `seen` too: the same program's), when `seen` ends a traceback whose every
        frame is a module's top level (`<module>`: raised by the script's own top-level code, its imports, its set-up or a
        loop written there, with no function between that could have caught it) in a log one process writes, and no
        failure stands after `seen`; or None. That process wrote nothing more; progress after it is a later run's (a log
        several runs were appended to, whose first lines are another run's middle, so that no opening stands again:
        dev7w's main_test.py stopped on "No module named 'test_deeper_cluster'", then a test run prints its accuracy,
        https://github.com/FalsoMoralista/FGDCC/blob/968907008f0b8460b85a7a965d70c09af0596861/logs/nohup.out). A log whose
        every start fails the same way ends in that failure, and keeps it (dev7w's yejing97/clf_stroke). Where more than
        one process writes the log the progress may be another rank's, the failed one gone (a hang to come)."""
        if (self.progress is None or seen.first.source or seen.pattern.severity is not Severity.ERROR
                or self.many_processes(seen) or self.script_steps_after(seen)):
            return None
        first = seen.first.line
        tb = next((t for t in reversed(self.signs.signs) if t.kind == "exception" and t.frames and not t.source
                   and t.line < first and 0 < first - max(f.at for f in t.frames) <= 3), None)
        if tb is None or not all(f.func == "<module>" for f in tb.frames):
            return None
        if any(s.first.line > first and s.pattern.severity is Severity.ERROR and not s.first.source and self.explained_by(s) is not seen
               for s in self.seen.values()):
            return None  # (another failure after it; not what it caused: srun's report that its task exited with code 1)
        after = max(seen.last, first, self.progress.raised)
        return self.progress.after(after) or self.progress.again_after(after, first)

    def many_processes(self, seen: Seen) -> bool:
        """The log is written by more than one process (ranks, or a launcher that starts them): progress after one
        process's failure may be another's, still running while the failed one is gone (a hang to come)."""
        return bool(seen.ranks) or len(self.all_ranks) > 1 or self.launcher in MULTI_PROCESS_LAUNCHERS

    def failure_lines(self) -> list[tuple[int, int]]:
        """(first, last) line of every error-level failure of the log's own lines (not a rank file's)."""
        return [(s.first.line, max(s.last, s.first.line)) for s in self.seen.values()
                if s.pattern.severity is Severity.ERROR and not s.first.source]

    def went_on(self, seen: Seen) -> Optional[tuple[int, str, str]]:
        """(line, text, how) of what shows that the job went on past `seen` (knowledge/progress.py), or None:
        `how` "fallback", a library's own fallback right after it and no failure after that (JAX's CUDA plugin fails
        to load, then "Falling back to cpu."); `how` "progress", progress lines of one kind after the log's last
        failure, their numbers moving, in a log one process writes (a run restarted after an out-of-memory trains on;
        torch.compile's tracebacks, then the steps go on). A failure with nothing after it, or only set-up, stays the
        run's: a traceback at the end is the run's end."""
        if self.progress is None or seen.first.source or seen.pattern.severity is not Severity.ERROR:
            return None
        told = (self.hits + self.signs.count, self.ended_line)  # (asked for every finding, more than once: kept while the log's story and end stand)
        if self.went_on_said[0] != told:
            self.went_on_said = (told, {})
        if seen.pattern.id not in self.went_on_said[1]:
            self.went_on_said[1][seen.pattern.id] = self.progress_past(seen)
        return self.went_on_said[1][seen.pattern.id]

    def finite_again(self, seen: Seen) -> Optional[tuple[int, str, str]]:
        """(line, text, how) of what shows that a warning of a non-finite number is not the state the log ends in, or None.
        loss-not-finite: the value it read (its key) is logged finite again, in PROGRESS_AFTER lines of one kind after its
        last non-finite reading (knowledge/progress.py `finite_after`), how "finite". grad-norm-not-finite as a training loop
        logs it at each step it skips (espnet's "The grad norm is nan. Skipping updating the model."): no such line after
        its last one, and PROGRESS_AFTER progress lines of one kind after it, their numbers moving (a dynamic loss scaler's
        skips at the start, which the pattern calls normal), how "stopped"; not torch's clip_grad_norm_ warning, which
        Python prints once whatever follows. Only where one process writes the log: another rank's progress says nothing
        of this one's."""
        if self.progress is None or seen.first.source or self.many_processes(seen):
            return None
        fields, last = seen.first.fields, max(seen.last, seen.first.line)
        if seen.pattern.id == LOSS_NOT_FINITE:
            key = fields.get("key") or fields.get("hf") or fields.get("summary")
            finite = self.progress.finite_after(last, str(key)) if key else None
            return (*finite, "finite") if finite is not None else None
        if seen.pattern.id == GRAD_NORM_NOT_FINITE and fields.get("value"):
            went = self.progress.after(last)
            return (*went, "stopped") if went is not None else None
        return None

    def progress_past(self, seen: Seen) -> Optional[tuple[int, str, str]]:
        """`went_on`, worked out."""
        assert self.progress is not None
        if not seen.first.source and (caught := self.signs.caught_by(seen.first.where.rank, seen.first.line)) is not None:
            # a plug-in's exception its host program caught, saying it goes on without that plug-in (ComfyUI's custom nodes,
            # the web UI's extension scripts: knowledge/signs.py PLUGIN_SKIPPED), or one a logger wrote at DEBUG or INFO
            # level and went on from (its next record): the program's own lines say it caught it, not the run's failure
            return (caught[0], caught[1][:200], caught[2])
        if not seen.first.source and noted(seen.first.where.text):
            # the program's own record, at INFO or DEBUG level, that a part of it is not there and it goes on without it
            # (an optional backend, a library: knowledge/progress.py `noted`): it says itself that it went on
            return (seen.first.line, seen.first.where.text[:200], "noted")
        failures = self.failure_lines()
        last = max(seen.last, seen.first.line)
        fallback = self.progress.fallback_after(seen.first.line)
        if (fallback is not None and self.progress.raised <= fallback[2]
                and not any(last < first <= fallback[2] or first > fallback[0] for first, _ in failures)):
            return (fallback[0], fallback[1], "fallback")
        final = max([last, self.progress.raised, *(end for _, end in failures)])
        # no failure after it; and not a warning that the run goes on degraded (the CPU for the GPU, a loss not finite:
        # ending.py DEGRADED_RUN), where going on is what it warns of
        alone = not any(first > last for first, _ in failures) and seen.pattern.id not in DEGRADED_RUN
        sign = seen.first.fields.get("sign")
        shell = (sign.kind, sign.message) if isinstance(sign, Sign) else evidence_in(seen.first.where.text)  # (a pattern's hit: its line's)
        if (alone and shell is not None and shell[0] == "notfound" and set_up_step(shell[1])
                and self.lines - final >= PROGRESS_AFTER and not self.script_steps_after(seen)):
            # a batch script's set-up step the shell could not run (an environment's activate not found), and the job's own
            # output after it: the script went on to the job
            return (final + 1, f"the job's output, lines {final + 1}-{self.lines}", "set-up")
        then = seen.first.fields.get("then") if seen.pattern.id == "nvidia-smi-not-found" else None
        if alone and isinstance(then, str) and not self.many_processes(seen):
            # the shell could not find nvidia-smi, and the program's own record follows (a script that asks it for the
            # GPUs as it starts, then goes on: classes10c.py RECORD_AFTER): a step of the job, not what stopped it
            at, _, record = then.partition(": ")
            return (seen.first.line + int(at), record[:200], "tool-step")
        if self.many_processes(seen) or self.script_steps_after(seen):
            return None
        if alone and warned(seen.first.where.text):
            # a library's warning-level line the run got past: its steps, or a stage it starts, after it (bitsandbytes'
            # "compiled without GPU support" when the job uses none of its GPU parts); one process: where ranks write the
            # log, another's progress says nothing of the one that warned (NCCL's "WARN [Service thread] ..." before a hang)
            moved = self.progress.moved_after(final, frozenset(s.line for s in self.signs.signs if not s.source))
            if moved is not None:
                return (moved[0], moved[1], "warned")
        progress = self.progress.after(final)
        if progress is not None:
            return (progress[0], progress[1], "progress")
        if alone and self.ended_line > final and own_end(self.ended):
            # the job's own words that it is done (its training, its fine-tuning), after the log's last failure
            return (self.ended_line, self.ended, "ended")
        return None

    def moved_after(self, line: int) -> bool:
        """After `line` (a run's start) and after the input's last exception, a run got somewhere (a progress line or a
        stage it starts, knowledge/progress.py, that is no failure's own line): the log does not end in a failure."""
        if self.progress is None:
            return False
        failed = frozenset(s.line for s in self.signs.signs if not s.source)
        return self.progress.moved_after(max(line, self.progress.raised), failed) is not None

    def script_steps_after(self, seen: Seen) -> bool:
        """A shell script reports, at or after `seen`, a command of its own that it lost (knowledge/progress.py
        SCRIPT_STEP): the log is one command after another, and the progress after `seen` is a later command's."""
        return any(not s.source and s.line >= seen.first.line and SCRIPT_STEP.search(s.text) for s in self.signs.signs)

    def earlier_run(self, seen: Seen) -> Optional[tuple[int, str]]:
        """(line, opening) where the program started again after every line of `seen`, when what came after that start
        decides the log (a failure of the later run's own, or its end): `seen` is an earlier run's, in a log that several
        runs were appended to (knowledge/reruns.py Openings), or None. What decides: the later run got somewhere after
        the log's last exception (a progress line, a stage it starts: `moved_after`), its end, or a failure of its own.
        Where one process writes the log and no progress after the last failure says it already (`went_on`), an opening
        printed at every start is one too (`restart_after(repeated=True)`), when the later run got somewhere. A restart
        that is followed by nothing that decides
        (a run that starts again and is cut: a CUDA out-of-memory, then the same set-up again, and the log stops, dev7w:
        https://github.com/chengziHome/detection/blob/8bafff43c1722ddc6620af083f33a500c5051d1b/nohup.log) leaves the
        failure the log's answer."""
        if self.openings is None or seen.first.source or seen.pattern.severity is not Severity.ERROR or self.script_steps_after(seen):
            return None  # (a script's later command is no run of the failed one started again)
        first = first_hit(seen)
        restart = self.started_again(first, max(seen.last, seen.first.line), self.many_processes(seen))
        if restart is None and not self.many_processes(seen) and self.went_on(seen) is None and not self.by_jobs():
            # an opening the log printed at every earlier start too (a Hydra run started again and again, an OOM restarted
            # from its checkpoint, heldout17w): a start, where one process writes the log and the later run got somewhere
            restart = self.openings.restart_after(first, max(seen.last, seen.first.line), repeated=True)
            if (restart is not None and not self.moved_after(restart[0]) and self.ended_by_itself(seen, restart[0]) is None
                    and not self.failed_again_after(seen, restart[0])):
                return None
        if restart is None:
            return None
        # (where more than one process writes the log, a later line of progress may be another node's or rank's)
        moved = not self.many_processes(seen) and self.moved_after(restart[0])
        decided = (moved or self.ended_line > restart[0] or self.ended_by_itself(seen, restart[0]) is not None
                   or self.failed_again_after(seen, restart[0]))
        return restart if decided else None

    def failed_again_after(self, seen: Seen, again: int) -> bool:
        """Another failure of the log's own (an error cause, not what `seen` caused) with a line after line `again`, where the
        program started again: the later run's own failure. Its last line counts (diagI33): the catch-all for exceptions no
        pattern names holds every run's, its first an earlier run's (heldout31w Dane-ME/keypoint-detection: nine starts appended
        to one file, the last two failing in torch.stack, an earlier one's conv-input-channels line named)."""
        return any(
            other is not seen and other.pattern.role == CAUSE and other.pattern.severity is Severity.ERROR and not other.first.source
            and (max(other.last, other.first.line) if other.pattern.id in GENERIC_FINDINGS else other.first.line) > again
            and self.explained_by(other) is not seen  # (not what the failure itself caused)
            for other in self.seen.values())

    def ended_by_itself(self, seen: Seen, again: int) -> Optional[tuple[int, str]]:
        """(line, text) of the run's own end (knowledge/progress.py `run_end`: "- INFO - Done!", "Training completed") after
        every line of `seen` and right before line `again`, where the program started again (RUN_END_BEFORE_START lines at
        most), in a log one process writes; or None. That run went past its failure to its own end, and the failure is not
        the later run's (heldout22w: an out-of-memory caught and logged at every epoch, then "Done!", then the program
        started again four times and the log stops,
        https://github.com/Trm1001/Automatic_market_and_promotion_video_generation/blob/7ccb779826bfbf94dcf301be20c560c71fbed24c/results/train.log).
        Not a line the program prints as it starts (an opening: torchvision's "Done!" after it prepares a data set), nor
        where several processes write the log (one rank's end says nothing of another's failure)."""
        if self.progress is None or self.many_processes(seen):
            return None
        end = self.progress.ended_before(again, max(seen.last, seen.first.line), RUN_END_BEFORE_START)
        if end is None or (self.openings is not None and end[1] in self.openings.texts.values()):
            return None
        return end

    def started_again(self, first: int, last: int, many: bool) -> Optional[tuple[int, str]]:
        """(line, what stands there) where the program started again after the failure on lines `first` to `last`: a start
        its own lines show (`started_anew`), or its opening lines standing again (knowledge/reruns.py Openings); or None."""
        anew = self.started_anew(last, many)
        if self.by_jobs():
            return anew  # (a job's own output may follow its status, LSF's report, and stands again in the next job's)
        restart = self.openings.restart_after(first, last) if self.openings is not None else None
        return restart if restart is not None and (anew is None or restart[0] <= anew[0]) else anew

    def started_anew(self, last: int, many: bool) -> Optional[tuple[int, str]]:
        """(line, what stands there) of the first start after line `last` that the log's own lines show, not only repeat: a
        Python process of the program failing at its start after one ended (`many`: more than one process writes the log),
        or a batch scheduler's next job (knowledge/reruns.py RunStarts); or None. A paste that repeats its
        opening lines may be one run quoted twice: the rules that move a failure to another run ask for these starts."""
        return self.run_starts.start_after(last, many) if self.run_starts is not None else None

    def by_jobs(self) -> bool:
        """The log is several batch jobs' (knowledge/reruns.py RunStarts): their starts bound its runs, not its opening lines."""
        return self.run_starts is not None and bool(self.run_starts.jobs)

    def last_runs_hit(self, seen: Seen) -> Seen:
        """`seen`, told from its last hit where the program started again between its first hit and that one
        (`started_anew`): the same failure in the last of several runs appended to one log is that run's, at its own line
        and with its own words (heldout20w: the catch-all read a FileExistsError at line 31 and the last run's SyntaxError
        at line 8430, https://github.com/Viola868/deepseek_training/blob/e92843f895a592e816604e541afb72871dea9fd2/train.err)."""
        latest = seen.latest
        if latest is None or seen.first.source or latest.source or latest.line <= seen.first.line:
            return seen
        many = self.many_processes(seen)
        restart = self.started_anew(seen.first.line, many)
        if restart is None and not many and not self.by_jobs() and self.openings is not None:
            # (diagI33) the log's opening lines printed again after the first hit, at every start of one process's runs
            # (heldout31w Dane-ME/keypoint-detection's "=== Starting Training Pipeline ===")
            restart = self.openings.restart_after(first_hit(seen), seen.first.line, repeated=True)
            told_by = self.signs.exception_at(latest.where)
            if restart is not None and (told_by is None or restart[0] >= told_by.line):
                restart = None  # (a line the run repeats inside the last traceback, a frame's: no start before it)
        if restart is None or restart[0] > latest.line or seen.pattern.severity is not Severity.ERROR:
            return seen
        return Seen(seen.pattern, seen.order, latest, seen.count, seen.samples, seen.ranks, seen.nodes, seen.by_rank, seen.last, latest)

    def traceback_before(self, seen: Seen) -> Optional[int]:
        """The line of the traceback to read for `seen`: the log's first, or, where `seen` ends the traceback of a Python process
        of the program that started again later (knowledge/reruns.py RunStarts), that one's."""
        first = self.signs.first_traceback
        start = self.run_starts.start_before(seen.first.line) if self.run_starts is not None and not seen.first.source else None
        return start if start is not None and (first is None or start > first) else first

    def later_runs_sign(self, told: dict[str, Seen]) -> Optional[Sign]:
        """The strongest sign of a failure no pattern read (the first among equals) in a run that started after every failure
        the patterns name (`started_again`), or None: the last run's own failure, which no earlier run's finding explains
        (a log several runs were appended to: heldout20w's Viola868/deepseek_training train.err names a dozen failures of
        earlier runs, and the last run's SyntaxError)."""
        after = 0
        for s in told.values():
            if s.pattern.role == CAUSE and s.pattern.severity is Severity.ERROR and not s.first.source:
                restart = self.started_again(first_hit(s), max(s.last, s.first.line), self.many_processes(s))
                if restart is None:
                    return None
                after = max(after, restart[0])
        live = [g for g in (*self.signs.signs, *self.signs.latest) if g.line >= after and g.kind in LAST_RUNS_SIGNS
                and not g.claimed and not g.source and not g.cut and g.cause not in ("<next>", TOLD)]
        return min(live, key=lambda g: (-g.strength, g.line), default=None)

    def last_runs_sign(self, sign: Sign) -> Sign:
        """The sign to tell for the log's failure: `sign`, or where the program started again after it, the same choice among
        the signs after that start, run by run to the last (heldout20w: six LSF job reports appended, each "Exited with exit
        code 1"; the last run's is the log's failure, https://github.com/GraphFramEx/graphframex/blob/f847f39af5ecb7bb9e6032afd54b04e7c0de0e9e/job.out)."""
        kept = [g for g in (*self.signs.signs, *self.signs.latest) if not g.claimed and not g.source and g.cause not in ("<next>", TOLD)]
        many = len(self.all_ranks) > 1 or self.launcher in MULTI_PROCESS_LAUNCHERS
        for _ in kept:
            many = many or sign.where.rank is not None
            # (where several processes write the log, a line they all print is no run's start: the starts the log shows)
            restart = self.started_anew(sign.line, many) if many else self.started_again(sign.line, sign.line, many)
            later = [g for g in kept if restart is not None and g.line > restart[0]]
            if not later:
                break
            sign = min(later, key=lambda g: (-g.strength, g.line))
        return sign

    def other_setup(self, seen: Seen) -> Optional[tuple[int, str]]:
        """(line, text) of the first sentence after every line of `seen` that says the output after it is a working
        setup's (knowledge/reruns.py WORKING), or None."""
        if self.prompts is None or seen.first.source:
            return None
        return self.prompts.working_after(max(seen.last, seen.first.line))

    def fixed_before(self, seen: Seen) -> Optional[tuple[int, str, str]]:
        """(line, text) of a person's sentence right after every line of `seen` that says that error is gone since or did
        not stop the job, or right before it that says the run finished despite it (knowledge/said_fixed.py), or None: the
        error is the thread's history, or survived, not the run's failure."""
        if self.said_fixed is None or seen.first.source:
            return None
        title = self.paste.title
        quoted_by_title = title is not None and seen.first.line == title[0] and seen.last <= title[0]
        # (an error the thread's title quotes alone: the reporter says it gone anywhere in the post, rembg#668's sentence far below)
        said = self.said_fixed.after(max(seen.last, seen.first.line), window=LINES_READ if quoted_by_title else WINDOW_SAID)
        if said is None:
            # the reporter's words before the paste: the errors they show did not stop the run, it finished all the same
            # (google/deepvariant#722: "I got this error mesages, but it still finished SNP calling")
            said = self.said_fixed.before(seen.first.line)
        if said is not None and said[2] == "gone" and self.printed_traceback(seen):
            # the run's own traceback, then the thread's fix of it ("the problem is solved! But other errors appeared",
            # cyanysc/video-super-resolution#7): that run's failure stays; history is an error quoted alone (a title, a line
            # in prose: alncat/opusDSD#10, brownvc/ganimorph#15)
            return None
        return said

    def not_shown(self, seen: Seen) -> Optional[Worked]:
        """What in the output shows a run that worked, when `seen` is an error that stands only on the reporter's words (its
        every line is the thread's title or a person's sentence) and the output shows no failure of its own (no error the
        rules read there, no line logged at error level or that speaks of an error): the words' error is not this output's (knowledge/paste_parts.py);
        None otherwise."""
        def on_words(s: Seen) -> bool:  # every hit of `s` is a line of the reporter's words (none from a file, none uncounted)
            lines = {hit.line for hit in (s.first, *s.samples, s.latest) if hit is not None}
            return not s.first.source and s.count <= len(lines) and self.paste.words_only(lines)

        if not self.worked or seen.pattern.severity is not Severity.ERROR or not on_words(seen):
            return None
        if any(other.pattern.severity is Severity.ERROR and not on_words(other) for other in self.seen.values()):
            return None  # the output shows a failure of its own
        if any(line not in self.paste.words for line, _ in (*self.error_lines, *self.mention_lines)):
            return None  # (a line of the output logged at error level, or that speaks of an error no rule reads)
        return contradicting(self.worked, seen.pattern.id)

    def killall_status(self, seen: Seen) -> Optional[dict]:
        """The fields of killall's "no process found" line right before each of srun's reports in `seen` that a task exited
        with code 1 (knowledge/patterns/launcher.py KILLALL_FOUND_NONE), or None: that exit code is killall's, not the program's."""
        if seen.pattern.id != "slurm-task-failed":
            return None
        hits = [seen.first, *seen.samples]
        if all(h.fields.get("killall") and h.fields.get("how") == "Exited with exit code 1" for h in hits):
            return seen.first.fields
        return None

    def printed_traceback(self, seen: Seen) -> bool:
        """`seen`'s first line ends a traceback the log shows (its frames), not an error line quoted alone."""
        sign = seen.first.fields.get("sign")
        if not isinstance(sign, Sign):
            sign = self.sign_of(seen)  # (a traceback's sign stands at its header's line)
        return sign is not None and bool(sign.frames) and sign.line <= seen.first.line

    def spoken_before(self, line: int) -> list[tuple[int, str]]:
        """The lines before `line` that speak of an error no rule read (a logger's error level, or words:
        knowledge/mentions.py), the ones that decide most first; of the words, only a program's line that says what
        failed: not one that only says something ended (mpirun's "the job has been aborted" is its own report), nor
        a person's sentence ("When I train, the error occurred.")."""
        before = [*(seen for seen in self.error_lines if seen[0] < line and not only_ended(seen[1])),
                  *(seen for seen in self.mention_lines if seen[0] < line and says_what_failed(seen[1]))]
        return lead_first(before)[:MENTIONS_KEPT]

    def spoken_after(self, line: int) -> list[tuple[int, str]]:
        """The lines after `line` that speak of an error no rule read, as `spoken_before` picks them: a pod's own output
        pasted after its status (issue 35, heldout27's gpu-monitoring-tools-120)."""
        after = [*(seen for seen in self.error_lines if seen[0] > line and not only_ended(seen[1])),
                 *(seen for seen in self.mention_lines if seen[0] > line and says_what_failed(seen[1]))]
        # and the failures after it that no rule read (its fatal-level line, its exception): the pod's own, before the rest
        signs = [(s.line, (s.text or s.describe()).strip()[:200]) for s in self.signs.signs
                 if s.line > line and s.kind not in POD_REPORTS and not s.claimed]
        return [*signs[:MENTIONS_KEPT], *lead_first(after)][:MENTIONS_KEPT]

    def only_cause(self, seen: Seen) -> bool:
        """No other error-level cause is in the log than `seen`."""
        return not any(s is not seen and s.pattern.role == CAUSE and s.pattern.severity is Severity.ERROR for s in self.seen.values())

    def has_cause(self) -> bool:
        return any(s.pattern.role == CAUSE for s in self.seen.values())

    def ranks_with_cause(self) -> set[int]:
        """Ranks whose own failure (a cause-role line) is in the log."""
        return {r for s in self.seen.values() if s.pattern.role == CAUSE for r in s.ranks}

    def timeout_seconds(self) -> Optional[float]:
        """How long ranks waited in a collective before the watchdog fired, if the log says."""
        seen = self.seen.get("nccl-watchdog-timeout")
        ran = seen.first.fields.get("ran_ms") if seen else None
        if ran and ran.isdigit():
            return int(ran) / 1000
        gloo = self.seen.get("gloo-collective-timeout")
        ms = gloo.first.fields.get("timeout_ms") if gloo else None
        return int(ms) / 1000 if ms and ms.isdigit() else None

    def root_cause(self) -> Optional[dict]:
        """The first failing rank/node: torchrun's Root Cause block when the log has
        one, else the first line of the headline finding."""
        story = self.ordered()
        if not story or story[0][0].pattern.role == HARMLESS:
            return None
        if not any(f.severity is Severity.ERROR for f in self.findings()):
            return None  # warnings only: nothing failed
        head = story[0][0]
        out = {"id": head.pattern.id, "line": head.first.line, "role": head.pattern.role}
        if head.first.source:
            out["source"] = head.first.source
        if head.first.time:
            out["time"] = head.first.time
        sign = head.first.fields.get("sign") if head.pattern is UNRECOGNISED else self.sign_of(head)
        if isinstance(sign, Sign):  # what failed, when, and the user's frame
            out["what"] = sign.what
            if sign.time:
                out["time"] = sign.time
            frame = sign.user_frame()
            if frame is not None:
                out["frame"] = frame.short()
        if short_timeout(head) is not None:
            out["timeout_ms"] = short_timeout(head)  # the timeout it shows is the cause: no other rank's
        elif head.pattern.role == CONSEQUENCE and bootstrap_loss(head):
            out["stage"] = "bootstrap"  # lost while the ranks connect, no cause in the log: no rank's output is known to hold it
        elif head.pattern.role == CONSEQUENCE and (earlier := self.spoken_before(head.first.line)):
            out["lead"] = f"line {earlier[0][0]}"  # a line before it speaks of an error: the header points there
        block = self.seen.get("torchrun-root-cause")
        own = head.pattern.role == CAUSE and next((h.where.rank for h in head.samples if h.where.rank is not None), None)
        if str(head.first.fields.get("culprit_rank", "")).isdigit():
            own = int(head.first.fields["culprit_rank"])  # the line names the rank that failed
        if block is not None and "rank" in block.first.fields and not self.runs_apart(block, head):  # (not an earlier run's block)
            f = earliest_block(block)
            if own is None or own is False or own == int(f["rank"]):
                out.update(rank=int(f["rank"]), node=f.get("host"), exitcode=f.get("exitcode"), reported_by="torchrun Root Cause block")
                return out
            out["torchrun_root_cause_rank"] = int(f["rank"])  # the cause's own line names another rank: trust it
        signal = self.seen.get("nccl-timeout-dump-signal")
        if head.pattern.role == CONSEQUENCE and signal is not None:
            # torch names the rank whose collective timed out first ("from rank 6" / "this local rank")
            for hit in signal.samples:
                origin = hit.fields.get("from_rank") or (hit.where.rank if hit.fields.get("local") else None)
                if origin is not None:
                    out.update(rank=int(origin), reported_by="NCCL dump signal (first rank to time out)")
                    return out
        first = min((h for h in head.samples if h.where.rank is not None or h.where.node), key=lambda h: (h.source, h.line), default=head.first)
        if str(first.fields.get("culprit_rank", "")).isdigit():  # the line names the rank that failed, not its own
            out["rank"] = int(first.fields["culprit_rank"])
        elif first.where.rank is not None:
            out["rank"] = first.where.rank
        elif str(first.fields.get("rank_a", "")).isdigit():  # "Rank 1 is running ...", "rank 3 and rank 0 both on ..."
            out["rank"] = int(first.fields["rank_a"])
        elif first.where.local_rank is not None:
            out["local_rank"] = first.where.local_rank
        if first.where.node:
            out["node"] = first.where.node
        task = self.seen.get("slurm-task-failed")
        if "node" not in out and task is not None and out.get("rank") is not None:
            for hit in task.samples:  # srun names the node of each failed task
                if str(out["rank"]) in hit.fields.get("task", "").split(","):
                    out["node"] = hit.fields.get("node")
        return out

    def findings(self) -> list[Finding]:
        story = self.ordered()
        head_is_cause = bool(story) and story[0][0].pattern.role == CAUSE
        # a warning that explains an error is itself an error: it made the job fail
        # (noise that explains an error, like the store closing at exit, stays noise)
        fatal = {by.pattern.id for s, by in story if by is not None and s.pattern.severity is Severity.ERROR and by.pattern.role != HARMLESS
                 and not self.past(s)}
        hang = bool(story) and story[0][0].pattern.id in ("nccl-watchdog-timeout", "nccl-heartbeat-stuck")
        if not hang:  # P2P in use is only worth saying when the job hung
            story = [(s, by) for s, by in story if s.pattern.id != "nccl-p2p-in-use"]
        return [self.finding(s, by, head_is_cause, s.pattern.id in fatal) for s, by in story]

    def finding(self, seen: Seen, by: Optional[Seen], causes_known: bool, fatal: bool = False) -> Finding:
        p = seen.pattern
        severity = Severity.ERROR if fatal else p.severity
        role = p.role
        title = p.title
        ev: dict = {"role": role, "family": p.family}
        why, fix = p.why, p.fix
        example = None  # an issue template's own example traceback (knowledge/template_example.py)
        if p.id == "python-exception" and seen.first.fields.get("exception"):
            title = f"{title}: {seen.first.fields['exception']}"
            sign = self.signs.exception(seen.first.fields["exception"], seen.first.where.rank)
            frame = sign.raised_in() if sign is not None else None
            example = template_of(sign.frames, sign.message) if sign is not None else None
            if frame is not None:
                title += f" in your code at {frame.short()}"
                fix = f"read the traceback: the line that raised is {frame.path}:{frame.line}" + (f" (in {frame.func})" if frame.func else "") + "; fix it there"
                ev["raised_at"] = f"{frame.path}:{frame.line}"
            if sign is not None and sign.goes_on:
                # a message over several lines (a program's own "...\nThe following run failed ...:\n<command>"): its first
                # line alone cuts what it names
                ev["message_goes_on"] = goes_on_lines(sign)
                fix += (f"; the message goes on below its first line (lines {sign.goes_on[0][0]}-{sign.goes_on[-1][0]}, in the "
                        "evidence): what it names there (a command, a file, a value) is where to look")
            # a class of message whose line does not decide its cause is the same class in the user's own code:
            # its usual causes, what decides between them and its fix (the unrecognised answer names it the same way)
            known = message_class(sign, seen.first.fields["exception"], seen.first.fields.get("message", ""))
            if known is not None:
                why += class_why(known)
                fix = f"{class_step(known, seen.first.fields['exception'], seen.first.fields.get('message', ''))}; {fix}"
                ev["class"] = known.id
        if p.id == "windows-port-forbidden" and all(CLIENT_RETRY.search(h.where.text) for h in (seen.first, *seen.samples)):
            # torch's warning as its client tries the next address, not the error it raises when none connects (network.py)
            severity = Severity.WARN if severity is Severity.ERROR else severity
            title = (f"Windows refused one connection attempt (system error 10013) in torch's warning as its client retries (line "
                     f"{seen.first.line}): not decided whether it stopped the run")
            why = ("Torch prints this [W] line while its c10d client tries the addresses of the host one by one, and goes on; it raises "
                   "(DistNetworkError, 'failed to connect to any network address', an [E] line) only when none connects. Error 10013 "
                   "(WSAEACCES) says Windows refused that one attempt (a firewall, or a port in a range Hyper-V/WinNAT reserved); "
                   "whether it stopped the run is decided by what the log shows after it.")
            fix = ("read the lines after it: an [E] line or a DistNetworkError is the failure (then: " + fix + "); progress or the "
                   "run's own output after it means the connection went through on another address")
            ev["what decides it"] = "torch's error after the warning (an [E] line, DistNetworkError), or the run's output going on"
        fields = seen.first.fields
        told_later = self.signs.same_exception(str(fields["exception"]), str(fields.get("message", ""))) if fields.get("exception") else None
        if p.id == "library-api-mismatch" and fields.get("raised_by") == api_shape.NOT_SHOWN and not (told_later and told_later.frames):
            why, fix = api_shape.unshown(fields)
            ev["raised_by"] = api_shape.NOT_SHOWN
            title_line = self.paste.title[0] if self.paste.title is not None else None
            open_case = api_shape.undecided(fields, title_only=seen.first.line == title_line and seen.last <= (title_line or 0))
            if open_case:
                # the message alone does not decide a version (knowledge/api_shape.py): said, with what decides it
                severity = Severity.WARN if severity is Severity.ERROR else severity
                title = (f"{title}? not decided: a {fields.get('type')} reached code that takes it for a tensor"
                         if open_case == "builtin" else f"{title}? not decided: only the thread's title names the error")
                ev["what decides it"] = api_shape.what_decides(open_case, fields)
        elif p.role == CAUSE and p is not UNRECOGNISED and p.id != "python-exception" and fields.get("exception"):
            # whose frame raised the exception the class reads: a package's (upgrade or pin it) or your code's (change it);
            # a traceback told after the line the class read (pytest's "path:line: AttributeError") too
            sign = self.sign_of(seen) if not told_later or not told_later.frames else told_later
            if sign is not None and sign.frames and not sign.cut:
                ev["raised_by"] = sign.raised_by()
                raiser = sign.frames[-1]
                ev["raised_in"] = f"{raiser.path}:{raiser.line}" + (f" in {raiser.func}" if raiser.func else "")
        if p.id in NAMED_IN_FIX:
            fix = self.named_fix(seen, fix)
        if p.id == "module-not-found" and (sign := self.import_sign(seen)) is not None:
            # the project's own file imports a sibling by a bare name inside a package: Python 2's implicit relative import
            sibling = bare_sibling_import(sign.frames, str(seen.first.fields.get("module", "")))
            if sibling is not None:
                package, path = sibling
                module = seen.first.fields["module"]
                fix = (f"{path} is imported as part of the package {package} and imports {module} by a bare name: if {module}.py is "
                       f"in {package}/ beside it (ls {package}/{module}.py), that is Python 2's implicit relative import, which Python 3 "
                       f"removed: write `from {package} import {module}` (or `from . import {module}`) in that file; if it is not, {fix}")
                ev["bare_import"] = f"{package}.{module}"
        if p.id == "mpi-rank-failed" and seen.first.fields.get("signal") in MPI_SIGNALS:
            # the signal mpirun names says how that rank ended (most often; the rank's own output decides)
            fields = seen.first.fields
            node = f" (on node {fields['node']})" if fields.get("node") else ""
            why = f"mpirun names how rank {fields.get('rank', '?')}{node} ended: {MPI_SIGNALS[fields['signal']]}. {why}"
        elif p.id == "mpi-rank-failed" and seen.first.fields.get("exitcode"):
            # Open MPI's summary names the first process that failed and its exit code: what that code decides
            fields = seen.first.fields
            why = (f"mpirun names the first process that failed: rank {fields.get('rank', '?')}, exit code {fields['exitcode']}. "
                   f"{mpi_exit(fields['exitcode'])} {why}")
        if p.id == "launcher-terminated":
            # the signal's number says who most likely sent it and what to do; a Ctrl-C: where the run stood, from the
            # latest signal line whose lines before it show the program's own (the first may be a paste's title)
            stood = next((h.fields for h in sorted(seen.samples, key=lambda h: -h.line) if h.fields.get("stood_at")), {})
            words = stop_words(stop_signal(seen.first.fields), stood)
            if words is not None:
                title, why, fix = words
                if stop_signal(seen.first.fields) == "2" and stood:
                    ev.update(stood_at_line=stood["stood_at_line"], stood_at=stood["stood_at"])
        if p.id == "nvidia-xid" and seen.first.fields.get("meaning"):
            # the Xid the line names decides what it means and what to do (knowledge/xid.py): said, not left to a table
            fields = seen.first.fields
            title = f"{title}: Xid {fields['xid']}, {fields['meaning']}"
            fix = f"{fields['action']}; {fix}"
        if p.id == "cuda-error-code" and seen.first.fields.get("error"):
            # the code read by CUDA's table of errors (knowledge/cuda_errors.py, by patterns/classes19a.py): which error, and its message
            fields = seen.first.fields
            code = f" ({fields['code']})" if fields.get("code") and fields["error"] != f"error {fields['code']}" else ""
            title = f"{title}: {fields['error']}{code}" + (f", {fields['message']}" if fields.get("message") else "")
        elif p.id == "nvenc-error-code" and seen.first.fields.get("status"):
            title = f"{title}: {seen.first.fields['status']}" + (f" ({seen.first.fields['code']})" if seen.first.fields.get("code") else "")
        elif seen.first.fields.get("read_as") == p.id and seen.first.fields.get("step"):
            fix = f"{seen.first.fields['step']}; {fix}"  # a fault read by its code: its row's own step first (a native program's)
            if p.id == REFUSED_VALUE and seen.first.fields.get("passed_through"):
                # another package between the user's call and the raiser: whose value it refused is not decided (classes23c.py),
                # so the fix says what decides it; that the run failed there is decided by the traceback, so it stays the cause
                fix = seen.first.fields["step"]
        own_words = seen.first.where.text if seen.first.fields.get("program_words") else ""  # a line in a program's own words
        if (fit := setting_fix.fitted(p.id, why, self.setting, seen.first.line, own_words)) is not None:
            # the fix of the setting the log shows (knowledge/setting_fix.py): the Windows driver under WSL, a pod's GPU request,
            # a Ray trial's, an engine's memory flags, a rebuild of the program whose kernel raised
            step = seen.first.fields.get("step") if seen.first.fields.get("read_as") == p.id else None
            fix = (f"{step}; {fit.fix}" if fit.step_first else f"{fit.fix}; {step}") if fit.keeps_step and step else fit.fix
            if p.id == "program-found-no-gpu" and step:
                # a probe's answer that names its cause (a torch built without CUDA) decides it in any setting; another probe's
                # own step (TensorFlow's, JAX's, ROCm's) follows the setting's (classes17b.py)
                fix = f"{step}; {fit.fix}" if step == CPU_BUILD_STEP else f"{fit.fix}; {step}"
            why, ev["setting"] = fit.why, fit.shown
            title = fit.title or title
        if p.id == "cuda-oom" and seen.first.fields.get("hint"):
            # the program's own remedy for it, on the message's line or the next (Real-ESRGAN's "try to set --tile with a
            # smaller number"; knowledge/patterns/cuda.py oom_fields): quoted first
            fix = remedy_step(Remedy(seen.first.fields["hint"], seen.first.line + seen.first.fields.get("hint_after", 0))) + fix
        if p.id in SIZES_SAID + DETAIL_SAID + DETAIL_SAID_22C + DETAIL_SAID_22D + DETAIL_SAID_23C + DETAIL_SAID_24A + DETAIL_SAID_28B + DETAIL_SAID_30C + DETAIL_SAID_31B + DETAIL_SAID_31C + DETAIL_SAID_33J + DETAIL_SAID_BUILD and seen.first.fields.get("detail") and not (
                by is not None and seen.first.fields.get("wrapper")):  # (a build's wrapper told as the consequence of the line that decides)
            # the sizes the message gives (knowledge/patterns/classes20a.py); what it names (knowledge/patterns/classes21d.py, classes22c.py, classes22d.py)
            title = f"{title}: {seen.first.fields['detail']}"
        if p.id == NO_DISTRIBUTION:
            # what pip printed around it (releases for another Python, an index not reached, a tag only PyTorch's index has)
            pip_said, fix = no_distribution_said(seen.first.fields)
            title = f"{title}: {pip_said}"
        if p.id == "cuda-runtime-error" and seen.first.fields.get("error"):
            # the message read by CUDA's table of errors (knowledge/cuda_errors.py, by patterns/classes17b.py): which error it is, in CUDA's words
            title = f"{title}: {seen.first.fields['error']}, {seen.first.fields['message']}"
        if p is UNRECOGNISED:
            sign = seen.first.fields.get("sign")
            exception, message = seen.first.fields.get("exception", ""), seen.first.fields.get("message", "")
            if sign:
                title = f"unrecognised failure: {sign.describe()}"
            else:  # only the exception's line: its message says what failed
                title = f"unrecognised failure: {exception or 'an exception'}" + (f": {message[:80]}" if message else "")
                where = seen.first.where.where()
                title += f" on {where}" if where else ""
            said = what_it_says(sign, exception, message, seen.first.line)
            why = unrecognised_why(sign, exception, message)
            fix = with_what_it_says(next_step(sign, exception, message, self.traceback_before(seen), self.launcher), said)
            if sign is not None and getattr(sign, "cut", False) and PLATFORM_NOTE in self.seen:
                fix += no_nccl_here(self.seen[PLATFORM_NOTE].first.line)  # a cut traceback of a launch on Windows or macOS
            read_first: Optional[int] = None
            if sign is not None and sign.kind in ONLY_EXITED and (earlier := self.spoken_before(sign.line)):
                # a launcher's or a job runner's report that a process failed, with the process's own words above it:
                # shown, never "the failing rank's own output is not here"
                ev["lines that speak of an error"] = [f"line {n}: {text}" for n, text in earlier]
                fix = lead_step(earlier[0][0]) + ALSO_EVERY_RANK
                read_first = earlier[0][0]
            elif sign is not None and sign.kind in POD_REPORTS and (own := self.spoken_after(sign.line) or self.spoken_before(sign.line)):
                # a pod's failing status or event, with the pod's own output pasted after it (kubectl logs) or before it: the
                # error line there is the pod's own words for why it fails (dcgm-exporter's level=fatal under its CrashLoopBackOff)
                ev["lines that speak of an error"] = [f"line {n}: {text}" for n, text in own]
                fix = (f"read line {own[0][0]} first (and the others listed): beside the pod's status, output that speaks of an "
                       f"error, most often the failing pod's own words for why it fails; then {fix}")
                read_first = own[0][0]
            elif sign is not None and sign.kind == "exception" and sign.cut and (earlier := self.spoken_before(sign.line)):
                read_first = earlier[0][0]  # (a launcher's own traceback, cut: the process's words above it are the lead, `wrapped`)
            if (wraps := wrapped(sign, read_first)):
                # a report that only wraps the failure (a launcher's, Hydra's, a pod's status, an exit status; a launcher's own
                # frames): the headline says so and what decides the cause (issue 35, item 4)
                title = f"{title} — {wraps}"
                ev["wraps"] = True
            if sign is not None:
                ev.update(sign_evidence(sign))
            ev.update(said)
        short = short_timeout(seen)
        if short is not None:
            # the timeout the line shows is itself the cause: no collective (nor NCCL's set-up) ends that fast
            ev["timeout_ms"] = short
            title = f"{title} — its timeout is only {short} ms"
            why = SHORT_TIMEOUT_WHY.format(ms=short) + " " + why
            fix = SHORT_TIMEOUT_FIX + "; " + fix
        elif p.id == "nccl-watchdog-timeout" and str(seen.first.fields.get("SeqNum", "")).isdigit() and int(seen.first.fields["SeqNum"]) <= EARLY_SEQ:
            # one of the job's first collectives never went through: the connection is as likely as a slow peer
            ev["early_collective"] = int(seen.first.fields["SeqNum"])
            why += " " + EARLY_WHY.format(seq=seen.first.fields["SeqNum"])
            fix = EARLY_FIX + "; " + fix
        if by is not None and p.id == "launcher-sigkill" and self.killed_after_raise(seen) is by:
            # (diagI33) a bare "Killed" under the program's own exception: killed as it went down, not the OOM killer's
            title = "the process was killed right after the error printed above it (its process tree stopped as it went down)"
            why = ("A bare 'Killed' right under the line a traceback ends in: the program raised, then its process was killed with "
                   "SIGKILL as it went down (a server that stops its own workers after its error: sglang's kill_process_tree). "
                   "The error above it is the failure; the kill follows from it.")
            fix = f"fix the error above it ({by.pattern.id}); the kill needs nothing of its own"
        if by is not None:
            role = ev["role"] = CONSEQUENCE
            ev["consequence_of"] = by.pattern.id
            title = f"{title} (a consequence of {by.pattern.id})"
            if severity is Severity.ERROR:
                severity = Severity.WARN
        elif short is not None:
            pass  # its cause is the timeout it shows
        elif role == CONSEQUENCE and not causes_known and (earlier := self.spoken_before(seen.first.line)):
            # a consequence never denies a line that is there: the lines before it that speak of an error in words no
            # rule reads are its lead (heldout7's Theano-MPI#5: "## python: can't open file ..." above mpirun's report)
            title = f"{title} (its cause is no line gpudoctor reads: the lines before it that speak of an error are the lead)"
            ev["lines that speak of an error"] = [f"line {n}: {text}" for n, text in earlier]
            lead = lead_step(earlier[0][0])
            if p.id in LAUNCHER_SUMMARIES:
                exitcode = "-6" if p.id == "launcher-sigabrt" else seen.first.fields.get("exitcode")
                why = (f"{launcher_only.first_failure(seen.first.fields)}The launcher reports that a rank failed; the lines listed before it "
                       f"speak of an error. {launcher_only.reading(exitcode, seen.first.fields.get('error_file'))}")
                fix = lead + launcher_only.how_to_see(self.launcher)
            else:
                fix = lead + fix
        elif role == CONSEQUENCE and not causes_known and p.family == "launcher":
            title = f"{title} (its cause is not in this log: it is in the failing rank's own output)"
            if p.id in LAUNCHER_SUMMARIES:
                # all the log holds is torchrun's summary: what its exit status decides, and how to see the rank's error
                exitcode = "-6" if p.id == "launcher-sigabrt" else seen.first.fields.get("exitcode")
                why = launcher_only.first_failure(seen.first.fields) + launcher_only.why(exitcode, seen.first.fields.get("error_file"))
                fix = launcher_only.how_to_see(self.launcher)
            elif self.launcher:
                # another launcher's report (a CalledProcessError, deepspeed's return code, srun's task): its own
                # first clause, then how the launcher the log shows keeps each rank's output
                fix = f"{fix.split(';')[0]}; when the log holds none: {launcher_only.launcher_step(self.launcher)}"
            if p.id in ("launcher-child-exit", "slurm-task-failed"):
                why = exit_said(seen) + why  # what the status it names most often means
        elif role == CONSEQUENCE and not causes_known and bootstrap_loss(seen):
            # lost while the ranks connect, and no rank seen ending: a peer that died is one reading, a stray connection another
            title, why, fix = BOOTSTRAP_LOSS_TITLE, BOOTSTRAP_LOSS_WHY, BOOTSTRAP_LOSS_FIX
        elif role == CONSEQUENCE and not causes_known:
            title = f"{title} (its cause is not in this log: look at the other ranks' output)"
        elif role == HARMLESS:
            ev["safe_to_ignore"] = p.id != "nccl-p2p-in-use"  # P2P is only shown when the job hung
        if p.id in TOLD_AFTER_11A and by is None and self.only_cause(seen) and (spoken := sorted([*self.error_lines, *self.mention_lines])):
            # the warning says the process had no GPU; an error the log speaks of but does not show may be the failure
            # (chemprop/chemprop#929: "I receive errors ...", the trace cut after the warning; the thread's failure was a
            # bug of predict.py): said, never hidden behind it, and the warning is not asserted as the failure (a judge
            # read the error-level answer as a misread): a warning, and the log does not decide (log-inconclusive)
            ev["lines that speak of an error"] = [f"line {n}: {text}" for n, text in spoken[:MENTIONS_KEPT]]
            title = f"{title}; the log also speaks of an error it does not show (line {spoken[0][0]}): that error may be the failure, not this"
            severity = Severity.WARN
        rerun = self.stale(seen)
        if rerun is not None:
            # the output of a command the user ran again afterwards (corrected or not): that attempt's, not the job's
            ran, again = rerun
            severity = Severity.INFO
            title = f"{title} (an earlier attempt: " + (f"the command at line {ran.line}" if ran.line else f"{ran.text}, where it was raised,") + f" was run again at line {again.line})"
            ev["earlier_attempt"] = {"command": ran.text[:200], "line": ran.line, "run_again_at": again.line, "again": again.text[:200]}
        elif (restart := self.earlier_run(seen)) is not None:
            # a log several runs were appended to: the program started again after it, and the later run decides
            severity = Severity.INFO
            title = f"{title} (an earlier run's: the program started again at line {restart[0]})"
            ev["earlier_run"] = {"started_again_at": restart[0], "opening": restart[1]}
            if (ended := self.ended_by_itself(seen, restart[0])) is not None:
                ev["earlier_run"]["ended"] = f"line {ended[0]}: {ended[1]}"  # (that run went past it to its own end)
        elif (later_run := self.start_up_then_run(seen)) is not None:
            # stopped at its top level (imports, set-up), and a later run got somewhere in the same file: an earlier start's
            severity = Severity.INFO
            title = f"{title} (an earlier start's: the program stopped at its top level, and a later run got somewhere at line {later_run[0]})"
            ev["went_on"] = {"at": later_run[0], "line": later_run[1], "how": "later-run"}  # (log-inconclusive's case went-on)
        elif (went := self.went_on(seen)) is not None:
            # the job went on past it: a library's fallback, or progress after the log's last failure (knowledge/progress.py)
            severity = Severity.INFO
            title = f"{title} (the job went on past it: {WENT_ON_SHOWN[went[2]]} at line {went[0]})"
            ev["went_on"] = {"at": went[0], "line": went[1], "how": went[2]}
        elif (worked := self.not_shown(seen)) is not None:
            # the error stands only on the reporter's words, and the output pasted beside them shows a run that worked
            # (tinygrad/open-gpu-kernel-modules#44: a 5090's P2P error in the title, a 4090 pair's working P2P test pasted):
            # not that output's failure, and not asserted (log-inconclusive case not-shown)
            severity = Severity.INFO
            place = "title" if self.paste.title is not None and self.paste.title[0] == seen.first.line else "sentence"
            title = f"{title} (only in {WORDS_PLACE[place]}, line {seen.first.line}: the output shows a run that worked, {worked.show()[:120]})"
            ev["not_shown"] = {"line": seen.first.line, "place": place, "said": seen.first.where.text[:200], "output": worked.show(),
                               "how": worked.how}
        elif (working := self.other_setup(seen)) is not None:
            # a person's sentence after it says the output that follows is a setup's that works (facebookresearch/phosa#29:
            # the title quotes the failing machine's error, the paste is the working machine's run): not that run's failure
            severity = Severity.INFO
            title = f"{title} (another setup's: line {working[0]} says the output after it is a working run's)"
            ev["other_setup"] = {"line": working[0], "said": working[1]}
        elif (fixed := self.fixed_before(seen)) is not None:
            # the reporter's next words say this error is gone since (a change they name) or did not stop the job
            # (alncat/opusDSD#10, brownvc/ganimorph#15, openpathsampling/openpathsampling#857): history, not the failure
            severity = Severity.INFO
            title = f"{title} (line {fixed[0]} says " + SAID_WORDS[fixed[2]] + ")"
            ev["said_fixed"] = {"line": fixed[0], "said": fixed[1], "says": fixed[2]}
        elif (killall := self.killall_status(seen)) is not None:
            # srun's exit code 1 is killall's: the job script's `killall` found no process left to signal
            # (ComputationalRadiationPhysics/picongpu#198): no failure of the program's
            severity = Severity.INFO
            title = f"{p.title} (its exit code 1 is killall's own: line {killall['killall_line']} says it found no process to signal)"
            why = (f"Line {killall['killall_line']} is killall's report that no process of that name was left to signal ({killall['killall']!r}); "
                   "killall then exits 1, and srun reports that status as the task's. The program itself had ended before: this is no failure of it.")
            fix = "in the job script: killall -q -9 PROG || true   # or drop the killall: the program has ended by then"
            ev["killall"] = {"line": killall["killall_line"], "said": killall["killall"]}
        elif (finite := self.finite_again(seen)) is not None:
            # the same value is logged finite again after its last non-finite reading: an earlier run's (a log several runs
            # were appended to, dev8w's st-gcn restarted after its nan epochs) or steps the run got over, not its state now
            severity = Severity.INFO
            shows = "the same value is logged finite after it" if finite[2] == "finite" else f"none after line {seen.last}, and the run goes on"
            title = f"{title} (not the state the log ends in: {shows}, line {finite[0]})"
            ev["finite_again"] = {"at": finite[0], "line": finite[1], "how": finite[2]}
        where = seen.first.where.where()
        if len(seen.ranks) > 1:
            where = f"ranks {', '.join(str(r) for r in sorted(seen.ranks)[:8])}" + ("…" if len(seen.ranks) > 8 else "")
        ev["first_line"] = seen.first.line
        if seen.first.source:
            ev["source"] = seen.first.source
        if seen.first.fields.get("diverged"):  # what the two collective fingerprints differ in
            title += f" — they differ in {seen.first.fields['diverged']}"
        culprit = str(seen.first.fields.get("culprit_rank", ""))
        if culprit.isdigit():  # the line names the rank that failed: the rank that printed it is only the reporter
            title += f" — rank {culprit}" + (f" (reported by {where})" if where else "")
        elif where and p is not UNRECOGNISED:  # its title already says where
            title += f" — {where}"
        if seen.ranks:
            ev["ranks"] = sorted(seen.ranks)
        if seen.nodes:
            ev["nodes"] = sorted(seen.nodes)
        ev["count"] = seen.count
        ev.update({k: v for k, v in seen.first.fields.items() if k not in ev and k not in ("sign", "stood_at", "stood_at_line", "raised_by", "hint_after")})
        if p.id == "nccl-watchdog-timeout":
            ev.update(self.watchdog_suspects(seen))
        if p.id in ("nccl-watchdog-timeout", "nccl-heartbeat-stuck") and by is None and "nccl-p2p-in-use" in self.seen:
            # a hang with no error, between GPUs that talk peer-to-peer: the usual suspect
            ev["p2p_in_use"] = True
            fix += "; the GPUs talk peer-to-peer: rerun with NCCL_P2P_DISABLE=1 to rule out a P2P/ACS/IOMMU hang"
        ev["log"] = "\n".join(h.show() for h in seen.samples)
        quote = self.reported_at.get(seen.first.line) if not seen.first.source else None
        if quote is not None and seen.last in self.reported_at and all(hit.line in self.reported_at for hit in (seen.first, *seen.samples)):
            shown = (f"line {quote.shown} holds the same words" if quote.shown and quote.shown != quote.line
                     else "it stands alone under that sentence" if quote.place == INTRODUCED else "no line of the log shows it")
            ev["reported"] = f"line {quote.line}, {REPORTED_PLACE[quote.place]}: {shown}"
        if example is not None:
            # the template's example, left in the post: no run raised it
            severity = Severity.INFO
            title = f"{title} (the example traceback of {example.template}, left in the post: no run's failure)"
            ev["template_example"] = example.template
            fix = "nothing to fix here: the traceback is the template's own example; the run's own output decides what failed (paste it)"
        # grouped by role, so the report reads as a story: causes, then consequences, then noise
        if p is UNRECOGNISED:  # not a pattern: its catalog entry is in catalog/findings/diagnose.py
            return Finding(id="unrecognised-failure", severity=severity, title=title, evidence=ev, why=why, fix=fix, area=AREAS[ev["role"]])
        return Finding(id=p.id, severity=severity, title=title, evidence=ev, why=why, fix=fix, area=AREAS[ev["role"]])

    def named_fix(self, seen: Seen, fix: str) -> str:
        """A class rule's fix with the names this log gives: the module, the command, the launcher,
        the packages in the traceback (the one that raised and the one that called it)."""
        fields = seen.first.fields
        fix = fix.replace("MODULE", str(fields.get("module", "MODULE"))).replace("COMMAND", str(fields.get("command", "COMMAND")).rsplit("/", 1)[-1])
        fix = fix.replace("PROG", str(fields.get("prog", "PROG")).split(" ", 1)[0])
        if fields.get("path") and seen.pattern.id == "path-not-found":
            fix = fix.replace("`ls -l PATH`", f"`ls -l {shlex.quote(str(fields['path']))}`")
        fix = fix.replace("DIRECTIVE", str(fields.get("directive") or "the message's own words"))
        fix = re.sub(r"\b(EXPECTED|GOT|STEP)\b", lambda m: str(fields.get(m.group(1).lower(), m.group(1))), fix)
        sign = self.sign_of(seen)
        if "WHERE" in fix:
            last = sign.raised_in() if sign is not None else None
            fix = fix.replace("WHERE_FILE", shlex.quote(last.path) if last else "FILE")  # the raising frame's file, for a command
            fix = fix.replace("WHERE", f"{last.path}:{last.line}" + (f" in {last.func}" if last.func else "") if last else "not in this log")
            clause = LIBRARY_CLAUSE.search(fix)
            if clause is not None and last is not None and not last.cut:
                # whose frame raised is in the log: say the branch it decides, not both (issue 35, point 3)
                if last.user():
                    fix = fix[: clause.start()]
                else:
                    # (PACKAGE stays: the import name a frame shows is not always what pip installs, lightning-thunder's thunder)
                    fix = fix[: clause.start()] + f"; that frame is {whose(last)}: " + clause["then"]
        if sign is not None and "PACKAGES" in fix:
            # innermost first: the package that raised, then the one that called it
            # (what pip can show: not Python's own library, not a model's code from the Hub)
            packages = [pkg for f in reversed(sign.frames) if (pkg := package_of(f.path)) not in (None, "python") and " " not in pkg]
            packages = list(dict.fromkeys(packages))
            if packages:
                versions = " and ".join(f"the {pkg} version" for pkg in packages[:2])
                if len(packages) == 1:
                    versions += " and the code calling it"
                fix = fix.replace("VERSIONS", versions).replace("PACKAGES", " ".join(packages)).replace("RAISER", packages[0])
        fix = fix.replace("VERSIONS", "the installed versions of the packages in the traceback").replace("PACKAGES", "PACKAGE ...")
        return fix.replace("RAISER", "the package that raised it")

    def import_sign(self, seen: Seen) -> Optional[Sign]:
        """The traceback of the import error `seen` matched: the latest ModuleNotFoundError/ImportError that starts at or before it."""
        return next((s for s in reversed(self.signs.signs) if s.kind == "exception" and s.what in ("ModuleNotFoundError", "ImportError")
                     and s.line <= seen.first.line), None)

    def sign_of(self, seen: Seen) -> Optional[Sign]:
        exc = seen.first.fields.get("exception")
        if exc:
            return self.signs.exception(exc, seen.first.where.rank)
        # a traceback the matched line starts (Ctrl-C's ^C glued to its header): that traceback's, cut or not
        return next((s for s in self.signs.signs if s.kind == "exception" and s.line == seen.first.line), None)

    def watchdog_suspects(self, seen: Seen) -> dict:
        """Which ranks did not report the timeout, or were at an earlier SeqNum."""
        out: dict = {}
        seqs = {r: f.get("SeqNum") for r, f in seen.by_rank.items() if f.get("SeqNum")}
        if len(set(seqs.values())) > 1:
            low = min(int(v) for v in seqs.values())
            out["ranks_behind"] = sorted(r for r, v in seqs.items() if int(v) == low)
            out["seq_by_rank"] = {str(r): seqs[r] for r in sorted(seqs)}
        if seen.ranks and self.all_ranks:
            world = max(self.all_ranks) + 1
            # a rank that printed only the teardown or the dump signal timed out as well
            timed_out = set(seen.ranks)
            for pid in ("nccl-process-teardown", "nccl-timeout-dump-signal", "nccl-heartbeat-stuck"):
                if pid in self.seen:
                    timed_out |= self.seen[pid].ranks
            missing = sorted(set(range(world)) - timed_out)
            if missing and len(missing) < world:
                out["ranks_not_reporting"] = missing
        return out


# A launcher that runs Python: its child's exit status 1 is Python's for an uncaught exception (deepspeed's and mp.spawn's
# reports, a CalledProcessError whose command is an interpreter or a launcher of one)
RUNS_PYTHON = re.compile(r"python|\.py\b|torchrun|accelerate|deepspeed|terminated with|exits with return code")
SRUN_STATUS = re.compile(r"Exited with exit code (?P<code>\d+)")


# What a person's sentence beside an error says of it (knowledge/said_fixed.py's kinds), in a finding's words.
# CUDA's initialization error read as a forked child's, and the row of CUDA's table it is otherwise (`fork_not_shown`)
FORK_REINIT = "cuda-fork-reinit"
INITIALIZATION = CUDA_FAULTS["cudaerrorinitializationerror"]

# Warnings that, read on a line the process raised, are its failure (`raised_not_degraded`): those of a run that goes on
# degraded, and a build without its GPU backend that refuses the GPU's work (spconv's CPU-only build raises RuntimeError
# "... not implemented for CPU ONLY build.": open-mmlab/mmdetection3d#2061)
RAISED_FAILS = DEGRADED_RUN | {BACKEND_NOT_BUILT}
# An exception's own line ("RuntimeError: ...") and the signs of a process that raised (a C++ abort's terminate and what(), a
# traceback's exception): a warning of a degraded run read on one of them was raised (`raised_not_degraded`)
RAISED_LINE = re.compile(r"^\W{0,3}(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)\s*:\s*\S")
RAISED_KINDS = ("terminate", "what", "exception")

SAID_WORDS = {"gone": "it is gone since", "survived": "it did not stop the job", "ignorable": "it can be ignored"}


def needle_at(p: Pattern, text: str) -> int:
    """Where the words the pattern is keyed on start in the text (its first needle found)."""
    found = [at for at in map(text.find, p.needles) if at >= 0]
    return min(found) if found else 0


def only_quoted(seen: Seen) -> bool:
    """Every line of `seen` is an error a person's sentence quotes ('on Windows "RuntimeError: Distributed package doesn't have
    NCCL built in"'): the thread's mention of it, which a failure printed as the run's own line leads
    (Lightning-AI/pytorch-lightning#17445: the Trainer's ValueError printed, the NCCL error quoted in a sentence after it)."""
    return all(hit.in_sentence for hit in (seen.first, *seen.samples))


def exit_said(seen: Seen) -> str:
    """What the exit status a launcher's or srun's report names says, most often (never the cause), as the why's lead:
    1 from a Python launcher is an uncaught exception; srun's task may be any program (its code is that program's own
    status); srun's 'Killed'/'Terminated' came from outside."""
    fields = seen.first.fields
    if seen.pattern.id == "slurm-task-failed":
        how = str(fields.get("how", ""))
        who = f"srun names task {fields.get('task', '?')} on node {fields.get('node', '?')}: "
        if how == "Killed":
            return who + ("killed (SIGKILL, sent from outside: most often the kernel's OOM killer or the job's memory limit; "
                          "sacct -j JOBID -o JobID,State,MaxRSS,ExitCode decides). ")
        if how == "Terminated":
            return who + "terminated (SIGTERM, a stop from outside: scancel, the time limit, a pre-emption, or srun after another task failed). "
        status = SRUN_STATUS.search(how)
        return who + f"exit code {status.group('code')}. {mpi_exit(status.group('code'))} " if status else ""
    code = next((str(fields[k]) for k in ("code", "code2", "code3", "code4") if fields.get(k)), "")
    if not code:
        return ""
    rank = fields.get("rank_a") or fields.get("rank_b")
    who = f"The launcher names process {rank}, exit code {code}. " if rank else f"The launcher names exit code {code}. "
    reading = launcher_only.reading(code) if RUNS_PYTHON.search(seen.first.where.text) else mpi_exit(code)
    return who + reading + " "


def lead_step(line: int) -> str:
    """The next step's lead when lines before a launcher's report speak of an error (`Diagnosis.spoken_before`)."""
    return (f"read line {line} first (and the others listed): it speaks of an error before this report, and the "
            "failing rank's first error is most often the cause; ")


# Signs that only say a process exited or failed (a launcher's, mpirun's, a shell's report), not what failed
ONLY_EXITED = ("exit", "exitcode", "childfailed", "elastic", "elasticnofile", "mpirun", "dslaunch", "spawned", "srun_what", "stopped")
# Signs that a pod of the job fails (kubectl's status column, a Warning event): its own output, pasted after them, says why
POD_REPORTS = ("podstatus", "k8sevent")
# after the lead, for a report whose process gpudoctor cannot name: the rest of its output
ALSO_EVERY_RANK = ("if it is not the cause, each rank's whole output is: diagnose every rank's log (torchrun --tee 3 --log-dir DIR, "
                   "srun --output=%t.log) or the run folder")


def bootstrap_loss(seen: Seen) -> bool:
    """NCCL's connection closed by the other end while the ranks connected (BOOTSTRAP_LOSS_WHY)."""
    return seen.pattern.id == "nccl-peer-closed" and seen.first.fields.get("stage") == "bootstrap"


def short_timeout(seen: Seen) -> Optional[int]:
    """The collective timeout a watchdog's or gloo's line shows, in ms, when it is set shorter than any real
    collective may take (SHORT_TIMEOUT_MS): the setting is then the cause, not a peer (instructlab/training#520:
    Timeout(ms)=1)."""
    if seen.pattern.id not in ("nccl-watchdog-timeout", "gloo-collective-timeout"):
        return None
    value = str(seen.first.fields.get("Timeout(ms)") or seen.first.fields.get("timeout_ms") or "")
    return int(value) if value.isdigit() and int(value) < SHORT_TIMEOUT_MS else None


def timeout_surfacing(sign: Sign) -> bool:
    """A traceback that says nothing of its own beside a collective timeout: its exception line cut
    (or only its header kept), or torch's NCCL error that the aborted communicator raises."""
    if sign.kind == "tbheader" or sign.kind == "c10" and sign.what.startswith(WATCHDOG_STACK):
        return True  # (the C++ stack torch prints under the watchdog's own timeout message is that message's)
    return sign.kind == "exception" and (sign.cut or SURFACED.search(f"{sign.what}: {sign.message}") is not None)


def goes_on_lines(sign: Sign) -> list[str]:
    """An exception's message past its first line, as evidence: each line with its number."""
    return [f"line {n}: {text[:EVIDENCE_CHARS]}" for n, text in sign.goes_on]


def sign_evidence(sign: Sign) -> dict:
    """What the log shows of a failure no pattern knows."""
    ev: dict = {"kind": sign.kind, "what": sign.what}
    if sign.message and sign.message != sign.text:
        ev["message"] = sign.message
    if sign.goes_on:
        ev["message_goes_on"] = goes_on_lines(sign)
    if sign.cause and not sign.cause.startswith("<"):
        ev["raised_from"] = sign.cause
    if sign.time:
        ev["time"] = sign.time
    last, mine = sign.raised_in(), sign.user_frame()
    if last is not None:
        ev["raised_in"] = f"{last.path}:{last.line}" + (f" in {last.func}" if last.func else "")
    if mine is not None and mine is not last:
        ev["your_frame"] = f"{mine.path}:{mine.line}" + (f" in {mine.func}" if mine.func else "")
    return ev


def earliest_block(block: Seen) -> dict:
    """A multi-node job pasted whole has one Root Cause block per node's torchrun: the
    first failure of the job is the block with the earliest time, not the first printed."""
    blocks = [f for f in block.by_rank.values() if "rank" in f] or [block.first.fields]
    return min(blocks, key=lambda f: f.get("time") or "~")


def explain_lines(lines: Iterable[str], source: str = "") -> list[Finding]:
    """What a piece of output (a rank's stderr, a traceback) means, cause first.
    The API the launcher and other commands use; nothing when nothing is recognised."""
    d = Diagnosis()
    d.feed(lines, source)
    return d.findings()


def only_lost_a_peer(lines: Iterable[str]) -> bool:
    """True when the output only shows this rank suffering another rank's failure
    (a closed connection, a timeout, a remote error) and no failure of its own."""
    d = Diagnosis()
    d.feed(lines)
    roles = {s.pattern.role for s in d.seen.values() if s.pattern.role != HARMLESS}
    return roles == {CONSEQUENCE}


def pattern_for(finding_id: str) -> Optional[Pattern]:
    return BY_ID.get(finding_id)
