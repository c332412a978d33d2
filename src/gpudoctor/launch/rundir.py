"""The files a rank leaves in its run folder for the hang & crash doctor, and
their readers. No torch: the supervisor, `gpudoctor diagnose DIR` and the
ranks themselves read this module.

    rank<N>.collectives.json  the rank's collectives (published every ~0.5 s, and
                              once more when it ends), its last call, how it ended
    rank<N>.current           the call the rank is making now (a small memory-mapped
                              file: it survives an abort or SIGKILL)
    rank<N>.stacks.txt        every thread's Python stack, written on request
    rank<N>.stacks-request    the supervisor asks for rank<N>.stacks.txt
    rank<N>.fatal.txt         faulthandler's stacks when the rank died of a signal
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field

from gpudoctor.knowledge.collectives import CollectiveRecord, StackFrame, main_thread_stack, parse_stack_text
from gpudoctor.launch import scratch
from gpudoctor.core.codec import SnapshotError, decode, encode

# rank<N>.current: 4 bytes of length, one of state (S started, C completed), the call as JSON.
CURRENT_SIZE = 4096
CURRENT_HEADER = 5
CURRENT_STARTED, CURRENT_COMPLETED = b"S", b"C"


def trace_path(run_dir: str, rank: int) -> str:
    return os.path.join(run_dir, f"rank{rank}.collectives.json")


def current_path(run_dir: str, rank: int) -> str:
    return os.path.join(run_dir, f"rank{rank}.current")


def stacks_path(run_dir: str, rank: int) -> str:
    return os.path.join(run_dir, f"rank{rank}.stacks.txt")


def request_path(run_dir: str, rank: int) -> str:
    return os.path.join(run_dir, f"rank{rank}.stacks-request")


def fatal_path(run_dir: str, rank: int) -> str:
    return os.path.join(run_dir, f"rank{rank}.fatal.txt")


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

    def all_records(self) -> tuple[CollectiveRecord, ...]:
        """The published records, plus the last call when the rank died before publishing it."""
        cur = self.current
        if cur is None or any(
            r.pg == cur.pg and r.seq == cur.seq and r.kind == cur.kind and r.peer == cur.peer for r in self.records
        ):
            return self.records
        return (*self.records, cur)


def _read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def read_current(run_dir: str, rank: int) -> CollectiveRecord | None:
    try:
        with open(current_path(run_dir, rank), "rb") as fh:
            data = fh.read(CURRENT_SIZE)
        n = int.from_bytes(data[:4], "little")
        if not 0 < n <= CURRENT_SIZE - CURRENT_HEADER:
            return None
        record = decode(CollectiveRecord, json.loads(data[CURRENT_HEADER : CURRENT_HEADER + n]), "current call")
    except (OSError, ValueError):  # SnapshotError is a ValueError
        return None
    if data[4:5] == CURRENT_COMPLETED:
        return dataclasses.replace(record, state="completed")
    return record


def trace_from_payload(
    rank: int, payload: object, stacks: str = "", current: CollectiveRecord | None = None
) -> RankTrace:
    """A rank's published trace (the JSON of rank<N>.collectives.json, or of its store key)."""
    published = None
    if payload is not None:
        try:
            published = decode(PublishedTrace, payload, f"rank {rank}'s trace")
        except SnapshotError:
            published = None
    stack = main_thread_stack(parse_stack_text(stacks)) if stacks else ()
    return RankTrace(
        rank=rank,
        records=published.records if published else (),
        current=current,
        exit=published.exit if published else None,
        stack=stack,
        stacks_text=stacks,
        flight_recorder=published.flight_recorder if published else False,
        published=published.time if published else 0.0,
    )


def read_trace(run_dir: str, rank: int, with_current: bool = True) -> RankTrace:
    """What rank `rank` left in `run_dir`; empty parts for what it did not write."""
    payload = None
    text = _read_text(trace_path(run_dir, rank))
    if text:
        try:
            payload = json.loads(text)
        except ValueError:
            payload = None
    stacks = _read_text(stacks_path(run_dir, rank)) or _read_text(fatal_path(run_dir, rank))
    current = read_current(run_dir, rank) if with_current else None
    return trace_from_payload(rank, payload, stacks, current)
