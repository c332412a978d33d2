"""The run folder: the one place that names its files and gpudoctor's
environment variables, and the readers of what the ranks leave there. No
torch: the supervisor, `gpudoctor diagnose DIR` and the ranks themselves read
this module. docs/run-folder.md lists the files for users.

What the supervisor writes:
    rank<N>.stderr, rank<N>.stdout  each rank's output
    config.json               the rank function's config (allreduce, train-smoke)
    outcome.json              how the job ended: the LaunchResult, each rank's RankOutcome
What each rank writes:
    rank<N>.progress          its stage and step (heartbeats for the supervisor)
    rank<N>.result.json       its function's return value, through the one codec
    rank<N>.error.json        its function's exception, through the one codec
    rank<N>.collectives.json  its collectives (published every ~0.5 s, and
                              once more when it ends), its last call, how it ended
    rank<N>.current           the call the rank is making now (a small memory-mapped
                              file: it survives an abort or SIGKILL)
    rank<N>.stacks.txt        every thread's Python stack, written on request
    rank<N>.stacks-request    the supervisor asks for rank<N>.stacks.txt
    rank<N>.fatal.txt         faulthandler's stacks when the rank died of a signal
    rank<N>.steps.json        where its step time went (`run`'s step accounting)
    rank<N>.timeline.json     its step slices, for `run --trace`
    findings-<label>-<pid>.json  the facts a process of `run` observed (a fragment)
    allreduce.rows.jsonl      allreduce's rows as rank 0 measures them
    nccl-narrowing.log        allreduce's log of narrowing down an NCCL failure
    report.txt                a torchrun/SLURM job's report, written by rank 0
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field

from gpudoctor.knowledge.collectives import CollectiveRecord, StackFrame, main_thread_stack, parse_stack_text
from gpudoctor.launch import scratch
from gpudoctor.core.codec import SnapshotError, decode, encode
from gpudoctor.core.user_file import RUN_TEXT_TAIL, FileRefused, open_regular, read_json, read_tail

# gpudoctor's environment variables. Modules below launch/ cannot import this one;
# the three they read are spelled there and listed here by the same name
# (tests/test_rundir_names.py checks that they match):
#   core/user_file.py  SOURCE_CAP, FACTS_CAP, RUN_JSON_CAP (GPUDOCTOR_MAX_SOURCE_BYTES,
#                      GPUDOCTOR_MAX_FACTS_BYTES, GPUDOCTOR_MAX_RUN_FILE_BYTES, PARSE_CAP's GPUDOCTOR_MAX_SOURCE_ITEMS)
#   probe/host.py      NODE_NAME_ENV (GPUDOCTOR_NODE_NAME)
BELOW_LAUNCH_ENV = ("GPUDOCTOR_MAX_SOURCE_BYTES", "GPUDOCTOR_MAX_FACTS_BYTES", "GPUDOCTOR_NODE_NAME", "GPUDOCTOR_MAX_RUN_FILE_BYTES",
                    "GPUDOCTOR_MAX_SOURCE_ITEMS")  # fmt: skip
RUN_DIR_ENV = "GPUDOCTOR_RUN_DIR"  # the run folder, for every rank the supervisor starts
FAULT_ENV = "GPUDOCTOR_FAULT"  # "1:crash,0:slow": faults ranks inject on purpose (launch/rank.py)
STORE_FD_ENV = "GPUDOCTOR_STORE_FD"  # rank 0's listening socket for the job's store
JOB_TAG_ENV = "GPUDOCTOR_JOB_TAG"  # the job's tag, inherited by each rank's descendants (launch/sweep.py)
RUN_ENV = "GPUDOCTOR_RUN"  # the runtime hooks are wanted (hooks/session.py)
RUN_JSON_ENV = "GPUDOCTOR_RUN_JSON"  # the top process writes the merged report there
RUN_STRICT_ENV = "GPUDOCTOR_RUN_STRICT"  # a warning turns exit code 0 into 1
RUN_TIMEOUT_ENV = "GPUDOCTOR_RUN_TIMEOUT"  # the top process stops the script after S seconds
RUN_FRAGMENTS_ENV = "GPUDOCTOR_RUN_FRAGMENTS"  # every process but the top leaves its facts there
RUN_SUPERVISED_ENV = "GPUDOCTOR_RUN_SUPERVISED"  # a rank of `run --nproc` (hooks/main.py spells it too)
RUN_TARGET_ENV = "GPUDOCTOR_RUN_TARGET"  # what runs, for the report's header
RUN_COLLECTIVES_ENV = "GPUDOCTOR_RUN_COLLECTIVES"  # "0": no collective tracing (benchmarks)
RUN_STEPS_ENV = "GPUDOCTOR_RUN_STEPS"  # "0": no step accounting (benchmarks)
RUN_TRACE_ENV = "GPUDOCTOR_RUN_TRACE"  # `run --trace FILE`: keep slices for the trace
RUN_HANG_TIMEOUT_ENV = "GPUDOCTOR_RUN_HANG_TIMEOUT"  # `run --hang-timeout`, for ranks under torchrun
MAX_LINE_ENV = "GPUDOCTOR_MAX_LINE_BYTES"  # diagnose's longest line (tests use a small one)
PROGRESS_EVERY_ENV = "GPUDOCTOR_PROGRESS_EVERY"  # seconds between a long run's log lines (default 30)
# Set by gpudoctor for the processes it starts, never by a user: a top command (`run`,
# `allreduce`, `train-smoke`) drops any of them it inherits (a shell left over from a run, a
# job script), so that none acts without the flag that sets it. (FAULT_ENV: only `--fault`.)
CHILD_ONLY_ENV = (
    RUN_ENV, RUN_JSON_ENV, RUN_STRICT_ENV, RUN_TIMEOUT_ENV, RUN_FRAGMENTS_ENV, RUN_SUPERVISED_ENV, RUN_TARGET_ENV,
    RUN_TRACE_ENV, RUN_HANG_TIMEOUT_ENV, RUN_DIR_ENV, STORE_FD_ENV, JOB_TAG_ENV,
)  # fmt: skip


def drop_inherited(environ) -> list[str]:
    """Remove CHILD_ONLY_ENV's variables from `environ` (a top command's own); their names."""
    return [name for name in CHILD_ONLY_ENV if environ.pop(name, None) is not None]

# The run folder's own files (the per-rank ones through the helpers below).
CONFIG_FILE = "config.json"
OUTCOME_FILE = "outcome.json"
ROWS_FILE = "allreduce.rows.jsonl"
NARROWING_LOG = "nccl-narrowing.log"
REPORT_FILE = "report.txt"
FRAGMENT_PREFIX = "findings-"
FRAGMENT_GLOB = FRAGMENT_PREFIX + "*.json"
RANK_PREFIX = "rank"  # every per-rank file is rank<N>.<suffix>

# Per-rank files: rank<N> + one of these.
STDERR, STDOUT, PROGRESS = ".stderr", ".stdout", ".progress"
RESULT, ERROR = ".result.json", ".error.json"
TRACE, CURRENT, STACKS, STACKS_REQUEST, FATAL = ".collectives.json", ".current", ".stacks.txt", ".stacks-request", ".fatal.txt"
STEPS, TIMELINE = ".steps.json", ".timeline.json"
THREADS, RENDEZVOUS = ".threads", ".rendezvous"


def rank_file(run_dir: str, rank: int | str, suffix: str) -> str:
    """rank<N><suffix> in the run folder (rank "*": the pattern for every rank's)."""
    return os.path.join(run_dir, f"{RANK_PREFIX}{rank}{suffix}")


def rank_files_prefix(rank: int) -> str:
    """What the names of all of one rank's files start with."""
    return f"{RANK_PREFIX}{rank}."


def fragment_name(label: str, pid: int) -> str:
    return f"{FRAGMENT_PREFIX}{label}-{pid}.json"


def stderr_path(run_dir: str, rank: int) -> str:
    return rank_file(run_dir, rank, STDERR)


def stdout_path(run_dir: str, rank: int) -> str:
    return rank_file(run_dir, rank, STDOUT)


def progress_path(run_dir: str, rank: int) -> str:
    return rank_file(run_dir, rank, PROGRESS)


def result_path(run_dir: str, rank: int) -> str:
    return rank_file(run_dir, rank, RESULT)


def error_path(run_dir: str, rank: int) -> str:
    return rank_file(run_dir, rank, ERROR)


def steps_path(run_dir: str, rank: int) -> str:
    return rank_file(run_dir, rank, STEPS)


def timeline_path(run_dir: str, rank: int) -> str:
    return rank_file(run_dir, rank, TIMELINE)


def threads_path(run_dir: str, rank: int) -> str:
    return rank_file(run_dir, rank, THREADS)


def write_threads(run_dir: str, rank: int) -> None:
    """The rank's torch intra-op threads (torch.get_num_threads()), once torch is
    imported: what the report says each rank ran with. A courtesy: never raises."""
    try:
        import torch

        write_atomic(threads_path(run_dir, rank), str(torch.get_num_threads()))
    except Exception:  # noqa: BLE001 - the rank's work matters, not this line
        pass


def read_threads(run_dir: str, rank: int) -> int | None:
    """What write_threads left; None when the rank left nothing."""
    text = _read_text(threads_path(run_dir, rank), []).strip()
    return int(text) if text.isdigit() else None


def rendezvous_path(run_dir: str, rank: int) -> str:
    return rank_file(run_dir, rank, RENDEZVOUS)


def write_rendezvous(run_dir: str, rank: int, address: str) -> None:
    """`host:port` the rank is about to meet its peers at (init_process_group), so that
    a rendezvous that never completes can be told by whom the port is held. Never raises."""
    try:
        write_atomic(rendezvous_path(run_dir, rank), address)
    except OSError:
        pass


def read_rendezvous(run_dir: str, rank: int) -> tuple[str, int] | None:
    """(host, port) a rank went to meet its peers at; None when it left none."""
    host, _, port = _read_text(rendezvous_path(run_dir, rank), []).strip().rpartition(":")
    return (host, int(port)) if host and port.isdigit() else None


def outcome_path(run_dir: str) -> str:
    return os.path.join(run_dir, OUTCOME_FILE)


def config_path(run_dir: str) -> str:
    return os.path.join(run_dir, CONFIG_FILE)


# rank<N>.current: 4 bytes of length, one of state (S started, C completed), the call as JSON.
CURRENT_SIZE = 4096
CURRENT_HEADER = 5
CURRENT_STARTED, CURRENT_COMPLETED = b"S", b"C"


def trace_path(run_dir: str, rank: int) -> str:
    return rank_file(run_dir, rank, TRACE)


def current_path(run_dir: str, rank: int) -> str:
    return rank_file(run_dir, rank, CURRENT)


def stacks_path(run_dir: str, rank: int) -> str:
    return rank_file(run_dir, rank, STACKS)


def request_path(run_dir: str, rank: int) -> str:
    return rank_file(run_dir, rank, STACKS_REQUEST)


def fatal_path(run_dir: str, rank: int) -> str:
    return rank_file(run_dir, rank, FATAL)


def write_atomic(path: str, text: str) -> None:
    scratch.write_file(path, text)


@dataclass(frozen=True)
class RankExit:
    """How a rank ended, as it said itself (absent when it died too abruptly)."""

    how: str  # "exception" | "os._exit" | "sys.exit" (a non-zero code) | "exit"
    type: str = ""
    message: str = ""
    where: str = ""  # "path/train.py:12": the user's line
    code: int | None = None
    # how == "exit": whether the default process group was still initialised when the
    # script ended (never destroyed); None where not known
    group_alive: bool | None = None


@dataclass(frozen=True)
class PublishedTrace:
    """What a rank publishes (rank<N>.collectives.json, or its key in the job's
    store), through the one codec."""

    rank: int
    pid: int
    flight_recorder: bool  # False: the records come from gpudoctor's hooks alone
    time: float  # time.time() of the publication
    records: tuple[CollectiveRecord, ...]
    exit: RankExit | None = None


def encode_trace(trace: PublishedTrace) -> str:
    return json.dumps(encode(trace))


def encode_current(record: CollectiveRecord) -> bytes:
    return json.dumps(encode(record)).encode()


# Stand-ins for a call's number and time while its site's template is encoded: never a
# real seq, and a time_ns some 200 years from now.
_SEQ_MARK = b"7390113370419377"
_TIME_MARK = b"8162331250917111931"


class CurrentEncoder:
    """encode_current, byte for byte, for the hook every collective call goes
    through. Calls from one site differ only in their number and time: the codec
    encodes each site once, with stand-ins for those two, and a call fills them in
    (~1 us where the whole encoding takes ~7 us, and several times that right after
    a collective has left the caches cold)."""

    LIMIT = 1024  # sites kept; code that makes new ones call after call starts over

    def __init__(self) -> None:
        self.templates: dict[tuple, tuple[bytes, bytes, bytes] | None] = {}

    def encode(self, record: CollectiveRecord) -> bytes:
        key = (record.rank, record.pg, record.kind, record.peer, record.root, record.input_shapes, record.input_dtypes,
               record.output_shapes, record.output_dtypes, record.handling, record.state, record.where, record.function)  # fmt: skip
        try:
            parts = self.templates[key]
        except KeyError:
            if len(self.templates) >= self.LIMIT:
                self.templates.clear()
            parts = self.templates[key] = _template(record)
        if parts is None:
            return encode_current(record)
        head, middle, tail = parts
        return b"".join((head, str(record.seq).encode(), middle, str(record.time_ns).encode(), tail))


def _template(record: CollectiveRecord) -> tuple[bytes, bytes, bytes] | None:
    """The site's encoding split around its number and time; None if the stand-ins are
    not found once each, in that order (then every call is encoded in full)."""
    text = encode_current(dataclasses.replace(record, seq=int(_SEQ_MARK), time_ns=int(_TIME_MARK)))
    head, seq_found, rest = text.partition(_SEQ_MARK)
    middle, time_found, tail = rest.partition(_TIME_MARK)
    if not (seq_found and time_found) or _SEQ_MARK in rest or _TIME_MARK in tail or _TIME_MARK in head:
        return None
    return head, middle, tail


@dataclass(frozen=True)
class RankTrace:
    """Everything a rank left behind about its collectives."""

    rank: int
    records: tuple[CollectiveRecord, ...] = ()
    current: CollectiveRecord | None = None  # the call it was making last
    exit: RankExit | None = None
    stack: tuple[StackFrame, ...] = field(default_factory=tuple)  # main thread, outermost first
    stacks_text: str = ""  # every thread, as dumped
    flight_recorder: bool = False
    published: float = 0.0  # time.time() of its last publication
    unread: tuple[tuple[str, str], ...] = ()  # (file name, why) of what was refused or read only in part

    def all_records(self) -> tuple[CollectiveRecord, ...]:
        """The published records, plus the last call when the rank died before publishing it."""
        cur = self.current
        if cur is None or any(
            r.pg == cur.pg and r.seq == cur.seq and r.kind == cur.kind and r.peer == cur.peer for r in self.records
        ):
            return self.records
        return (*self.records, cur)


# Another's run folder is input like any other: every file in it is read through
# core/user_file (regular files only, never through a link into /proc or /sys, never
# blocking, capped). What could not be read is said (RankTrace.unread), not guessed at.
MAX_RECORDS = 20_000  # a rank's published collectives kept (its hooks publish the last 64; a dump some thousands)


def _read_text(path: str, unread: list[tuple[str, str]]) -> str:
    """The end of a rank's text file ('' when absent); what was skipped or refused goes to `unread`."""
    try:
        data, skipped = read_tail(path)
    except FileRefused as exc:
        if exc.kind != "missing":
            unread.append((os.path.basename(path), exc.reason))
        return ""
    if skipped:
        unread.append((os.path.basename(path), f"read only its last {RUN_TEXT_TAIL >> 20} MB ({skipped:,} bytes before them skipped)"))
    return data.decode("utf-8", "replace")


def read_json_file(path: str, unread: list[tuple[str, str]] | None = None) -> object:
    """A run-folder JSON file's contents, or None when absent or refused (then said in `unread`)."""
    try:
        return read_json(path)
    except FileRefused as exc:
        if unread is not None and exc.kind != "missing":
            unread.append((os.path.basename(path), exc.reason))
        return None


def read_current(run_dir: str, rank: int) -> CollectiveRecord | None:
    try:
        with open_regular(current_path(run_dir, rank)) as fh:
            data = fh.read(CURRENT_SIZE)
        n = int.from_bytes(data[:4], "little")
        if not 0 < n <= CURRENT_SIZE - CURRENT_HEADER:
            return None
        record = decode(CollectiveRecord, json.loads(data[CURRENT_HEADER : CURRENT_HEADER + n]), "current call")
    except (OSError, ValueError, RecursionError):  # SnapshotError and FileRefused are ValueErrors
        return None
    if data[4:5] == CURRENT_COMPLETED:
        return dataclasses.replace(record, state="completed")
    return record


def trace_from_payload(
    rank: int, payload: object, stacks: str = "", current: CollectiveRecord | None = None,
    unread: list[tuple[str, str]] | None = None,
) -> RankTrace:  # fmt: skip
    """A rank's published trace (the JSON of rank<N>.collectives.json, or of its store key)."""
    published = None
    said = unread if unread is not None else []
    envelope = payload if isinstance(payload, dict) else {}  # the codec's
    body = envelope.get("data")
    if isinstance(body, dict) and isinstance(body.get("records"), list) and len(body["records"]) > MAX_RECORDS:
        skipped = len(body["records"]) - MAX_RECORDS
        payload = {**envelope, "data": {**body, "records": body["records"][-MAX_RECORDS:]}}
        said.append((os.path.basename(trace_path("", rank)), f"read its last {MAX_RECORDS:,} collectives ({skipped:,} before them skipped)"))
    if payload is not None:
        try:
            published = decode(PublishedTrace, payload, f"rank {rank}'s trace")
        except (SnapshotError, RecursionError):
            published = None
    stack = main_thread_stack(parse_stack_text(stacks)) if stacks else ()
    return RankTrace(
        rank=rank,
        records=_settled(published.records, current) if published else (),
        current=current,
        exit=published.exit if published else None,
        stack=stack,
        stacks_text=stacks,
        flight_recorder=published.flight_recorder if published else False,
        published=published.time if published else 0.0,
        unread=tuple(said),
    )


def _settled(records: tuple[CollectiveRecord, ...], current: CollectiveRecord | None) -> tuple[CollectiveRecord, ...]:
    """The published records, with what the newer current-call file shows returned marked so.

    Records are published every couple of seconds; the current call is written at every
    call. A rank that returned from collective N of a group and died before its next
    publication left N (and maybe earlier ones) published as started: calls of one group
    complete in order, so every call of that group up to N has returned."""
    if current is None or current.started or not current.numbered:
        return records
    return tuple(
        dataclasses.replace(r, state="completed")
        if r.started and r.numbered and r.pg == current.pg and r.seq <= current.seq
        else r
        for r in records
    )


def read_trace(run_dir: str, rank: int, with_current: bool = True) -> RankTrace:
    """What rank `rank` left in `run_dir`; empty parts for what it did not write."""
    unread: list[tuple[str, str]] = []
    payload = read_json_file(trace_path(run_dir, rank), unread)
    stacks = _read_text(stacks_path(run_dir, rank), unread) or _read_text(fatal_path(run_dir, rank), unread)
    current = read_current(run_dir, rank) if with_current else None
    return trace_from_payload(rank, payload, stacks, current, unread)
