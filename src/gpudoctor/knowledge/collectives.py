"""Collective traces: every rank's collectives in order, and what lining them up says.

Pure: no torch import, no I/O but the two file readers. The records come from
PyTorch's Flight Recorder (the dict `torch._C._distributed_c10d._dump_fr_trace()`
returns once unpickled, or the per-rank files its dump writes, named
TORCH_FR_DUMP_TEMP_FILE + rank) or from gpudoctor's own rank-side trace; the
analysis lines the ranks up by (process group, sequence number) and says who
called what where:

- a different kind, shape, dtype or root at the same collective number, a new_group
  made with other ranks, a send that does not fit its recv (mismatch);
- ranks blocked on each other in a cycle: send/send, recv/recv, a collective against a
  recv, a new_group made on some ranks only (deadlock);
- a rank that finished while another waits in a collective it never called: the root
  cause is where the sequences part (the rank that left the loop first, destroyed the
  group, never joined), or the rank that made a call the others never make;
- a stall: who waits in which collective, and the rank that holds them up.

`gpudoctor run` feeds it live traces while the job runs; `gpudoctor diagnose DIR`
feeds it the files a run (or torch's own dump) left behind.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from gpudoctor.catalog.findings.collectives import (
    COLLECTIVE_DEADLOCK,
    COLLECTIVE_MISMATCH,
    COLLECTIVE_MISSING,
    COLLECTIVE_STALL,
    UNEVEN_COLLECTIVES,
)
from gpudoctor.catalog.findings.ranks import RENDEZVOUS_HANG
from gpudoctor.core.findings import Finding

AREA = "collectives"
# started: the rank is blocked in the call; completed: it returned; posted: an
# isend/irecv whose work nobody waits for yet (the rank is not blocked by it).
STARTED, COMPLETED, POSTED = "started", "completed", "posted"
# Point-to-point calls: lined up by peer and their number in that direction, not
# by the group's collective number.
SEND, RECV = "send", "recv"
P2P = frozenset({SEND, RECV})
# Appended to a record's function when DDP's forward made the collective (its buffer
# broadcast): a forward of the wrapped model on some ranks only.
DDP_FORWARD = " [DDP forward]"
# Calls of a group's life, not lined up by number either.
NEW_GROUP, DESTROY = "new_group", "destroy_process_group"
UNNUMBERED = P2P | {NEW_GROUP, DESTROY}

# Flight Recorder writes torch's C++ dtype names; users know the Python ones.
_DTYPES = {
    "Float": "float32",
    "Double": "float64",
    "Half": "float16",
    "BFloat16": "bfloat16",
    "Long": "int64",
    "Int": "int32",
    "Short": "int16",
    "Char": "int8",
    "Byte": "uint8",
    "Bool": "bool",
    "ComplexFloat": "complex64",
    "ComplexDouble": "complex128",
}

# Collectives whose tensors must be the same on every rank. gather/scatter and
# all_to_all legitimately differ by rank (the root holds the list; splits vary).
_SAME_SHAPE = {
    "all_reduce",
    "allreduce",
    "broadcast",
    "reduce",
    "all_gather",
    "allgather",
    "_allgather_base",
    "all_gather_into_tensor",
    "allgather_into_tensor_coalesced",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "_reduce_scatter_base",
    "all_reduce_coalesced",
    "allreduce_coalesced",
}
_ANY_DTYPE = {"gather", "scatter", "barrier"}


@dataclass(frozen=True)
class CollectiveRecord:
    """One collective call of one rank."""

    rank: int
    pg: str  # the process group ("0" is the default group)
    seq: int  # the collective's number within its group, from 1
    kind: str  # "all_reduce", "broadcast", "barrier", ...
    input_shapes: tuple[tuple[int, ...], ...] = ()
    input_dtypes: tuple[str, ...] = ()
    output_shapes: tuple[tuple[int, ...], ...] = ()
    output_dtypes: tuple[str, ...] = ()
    state: str = COMPLETED  # started | completed
    where: str = ""  # "path/train.py:17": the first frame outside torch
    function: str = ""  # the function that line is in
    time_ns: int = 0
    peer: int = -1  # send/recv: the other rank (global; -1 for a recv from any source)
    root: int = -1  # broadcast/reduce/scatter/gather: the root's global rank
    handling: str = ""  # made inside an `except`: "RuntimeError: bad batch at train.py:21"

    @property
    def started(self) -> bool:
        return self.state == STARTED

    @property
    def p2p(self) -> bool:
        return self.kind in P2P

    @property
    def numbered(self) -> bool:
        """A collective, lined up across ranks by its number in the group."""
        return self.kind not in UNNUMBERED

    def name(self) -> str:
        """`all_reduce #3`, `send #2 to rank 1`, `broadcast #4 from rank 0`."""
        if self.kind == SEND:
            return f"send #{self.seq} to rank {self.peer}"
        if self.kind == RECV:
            return f"recv #{self.seq} from " + (f"rank {self.peer}" if self.peer >= 0 else "any rank")
        return f"{self.kind} #{self.seq}"

    def call(self) -> str:
        """`all_reduce [4] float32 at train.py:17`."""
        shapes = ", ".join(_shape(s) for s in self.input_shapes)
        dtypes = ", ".join(sorted(set(self.input_dtypes)))
        tensors = " ".join(p for p in (shapes, dtypes) if p)
        at = f" at {short_where(self.where)}" if self.where else ""
        to = ""
        if self.kind == SEND or (self.kind == RECV and self.peer >= 0):
            to = f" {'to' if self.kind == SEND else 'from'} rank {self.peer}"
        elif self.root >= 0:
            to = f" root {self.root}"
        return f"{self.kind}{' ' + tensors if tensors else ''}{to}{at}"

    def to_dict(self) -> dict:
        return {
            "rank": self.rank,
            "pg": self.pg,
            "seq": self.seq,
            "kind": self.kind,
            "input_shapes": [list(s) for s in self.input_shapes],
            "input_dtypes": list(self.input_dtypes),
            "output_shapes": [list(s) for s in self.output_shapes],
            "output_dtypes": list(self.output_dtypes),
            "state": self.state,
            "where": self.where,
            "function": self.function,
            "time_ns": self.time_ns,
            "peer": self.peer,
            "root": self.root,
            "handling": self.handling,
        }

    @classmethod
    def from_dict(cls, d: Mapping) -> CollectiveRecord:
        return cls(
            rank=int(d["rank"]),
            pg=str(d.get("pg", "0")),
            seq=int(d["seq"]),
            kind=str(d["kind"]),
            input_shapes=tuple(tuple(int(x) for x in s) for s in d.get("input_shapes") or ()),
            input_dtypes=tuple(str(x) for x in d.get("input_dtypes") or ()),
            output_shapes=tuple(tuple(int(x) for x in s) for s in d.get("output_shapes") or ()),
            output_dtypes=tuple(str(x) for x in d.get("output_dtypes") or ()),
            state=str(d.get("state", COMPLETED)),
            where=str(d.get("where", "")),
            function=str(d.get("function", "")),
            time_ns=int(d.get("time_ns") or 0),
            peer=int(d.get("peer", -1)),
            root=int(d.get("root", -1)),
            handling=str(d.get("handling", "")),
        )


@dataclass(frozen=True)
class StackFrame:
    filename: str
    line: int
    function: str
    code: str = ""  # the source line, when known

    @property
    def where(self) -> str:
        return f"{self.filename}:{self.line}"


@dataclass(frozen=True)
class RankState:
    """What is known of one rank when the traces are lined up."""

    rank: int
    records: tuple[CollectiveRecord, ...] = ()
    # "" (still running) | "finished" (exit 0) | "failed": the words of the one rank-state
    # vocabulary (hang/verdict.STATES) this analysis needs; the verdict says the rest.
    ended: str = ""
    # The main thread's stack, outermost first, as the rank's stack dump showed it.
    stack: tuple[StackFrame, ...] = field(default_factory=tuple)
    stage: str = ""  # the launcher's stage: "rendezvous" while in init_process_group

    @property
    def collectives(self) -> tuple[CollectiveRecord, ...]:
        """The records lined up by collective number (no send/recv)."""
        return tuple(r for r in self.records if r.numbered)

    def last(self, pg: str) -> CollectiveRecord | None:
        mine = [r for r in self.collectives if r.pg == pg]
        return max(mine, key=lambda r: r.seq) if mine else None

    def waiting(self) -> CollectiveRecord | None:
        """The collective this rank is in and has not completed, if any."""
        started = [r for r in self.records if r.started]
        return max(started, key=lambda r: r.time_ns) if started else None

    def blocked(self) -> bool:
        """Waiting for its peers: in a collective, or in the rendezvous."""
        return not self.ended and (self.waiting() is not None or self.stage == RENDEZVOUS)


RENDEZVOUS = "rendezvous"


# -- where a call comes from -------------------------------------------------------------

# torch (installed or a source tree), gpudoctor itself, the standard library, frozen modules.
_LIBRARY = re.compile(
    r"^<|[\\/]torch[\\/]|[\\/](site|dist)-packages[\\/]gpudoctor[\\/]|[\\/]src[\\/]gpudoctor[\\/]"
    r"|[\\/]lib[\\/]python3\.\d+[\\/](?!site-packages|dist-packages)"
)


def is_library_frame(filename: str) -> bool:
    """Not the user's own line: torch, gpudoctor, the standard library, a frozen module."""
    return bool(_LIBRARY.search(filename))


def user_frame(frames: Iterable[StackFrame], innermost_first: bool = True) -> StackFrame | None:
    """The first frame, from the innermost, that is the user's own."""
    ordered = list(frames) if innermost_first else list(frames)[::-1]
    return next((f for f in ordered if not is_library_frame(f.filename)), None)


def short_where(where: str, cwd: str | None = None) -> str:
    """A path under the current directory is shown relative to it."""
    path, sep, line = where.rpartition(":")
    if not sep or not path:
        return where
    base = cwd or os.getcwd()
    if os.path.isabs(path) and path.startswith(base.rstrip(os.sep) + os.sep):
        path = os.path.relpath(path, base)
    return f"{path}:{line}"


def _shape(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(x) for x in shape) + "]"


# -- readers ------------------------------------------------------------------------------


def records_from_fr_dump(dump: Mapping, rank: int, p2p_taken: Mapping[str, int] | None = None) -> list[CollectiveRecord]:
    """A Flight Recorder dump (the unpickled dict) -> this rank's collectives, oldest first.

    On gloo every entry says state "scheduled"; what has completed is told by
    the group's `last_completed_collective` in pg_status (and by `retired`).
    That counter also counts gloo's send/recv, which the recorder does not list and
    which do not take a collective number: `p2p_taken` (per group name, from the
    rank's own hooks) is how many of them there were."""
    status = dump.get("pg_status") or {}
    out = []
    for e in dump.get("entries") or ():
        if e.get("is_p2p"):
            continue  # send/recv pair by peer, not by collective number
        seq = int(e.get("collective_seq_id") or 0)
        if seq <= 0:
            continue
        pg_id = str(e.get("pg_id", "0"))
        group = e.get("process_group")
        pg = str(group[0]) if isinstance(group, (list, tuple)) and group else pg_id
        done_upto = int((status.get(pg_id) or {}).get("last_completed_collective", -1))
        done_upto -= (p2p_taken or {}).get(pg, 0)
        completed = e.get("state") == "completed" or bool(e.get("retired")) or seq <= done_upto
        frames = [
            StackFrame(str(f.get("filename", "")), int(f.get("line") or 0), str(f.get("name", "")))
            for f in e.get("frames") or ()
        ]
        mine = user_frame(frames)
        name = str(e.get("profiling_name") or "")
        out.append(
            CollectiveRecord(
                rank=rank,
                pg=pg,
                seq=seq,
                kind=name.partition(":")[2] or name or "collective",
                input_shapes=tuple(tuple(int(x) for x in s) for s in e.get("input_sizes") or ()),
                input_dtypes=tuple(_DTYPES.get(str(d), str(d)) for d in e.get("input_dtypes") or ()),
                output_shapes=tuple(tuple(int(x) for x in s) for s in e.get("output_sizes") or ()),
                output_dtypes=tuple(_DTYPES.get(str(d), str(d)) for d in e.get("output_dtypes") or ()),
                state=COMPLETED if completed else STARTED,
                where=mine.where if mine else "",
                function=mine.function if mine else "",
                time_ns=int(e.get("time_created_ns") or 0),
            )
        )
    out.sort(key=lambda r: (r.pg, r.seq))
    return out


_RANK_SUFFIX = re.compile(r"(\d+)(?:\.\w+)?$")
class MalformedDump(ValueError):
    """A Flight Recorder dump whose contents do not have the dump's shape."""


MAX_DUMP_BYTES = 16 << 20  # torch's ring buffer (2,000 entries by default) dumps to well under 1 MB
MAX_DUMP_VALUES = 2_000_000  # values in a dump, counted as read: a pickle can list one big list many times


def read_fr_file(path: str, rank: int | None = None) -> list[CollectiveRecord]:
    """One file of a Flight Recorder dump (pickle, or the JSON form); the rank is
    the number the file name ends with (TORCH_FR_DUMP_TEMP_FILE + rank) unless given.

    The pickle is read by `plain_pickle` (plain data only: nothing it names is
    imported). Raises RefusedPickle (a ValueError) for a pickle that names a
    callable, ValueError for a file that is no dump or is malformed; each message
    starts with the path."""
    from gpudoctor.knowledge.plain_pickle import RefusedPickle, loads_plain

    if rank is None:
        m = _RANK_SUFFIX.search(os.path.basename(path))
        if not m or len(m.group(1)) > 9:
            raise ValueError(f"{path}: no rank number at the end of the file name")
        rank = int(m.group(1))
    with open(path, "rb") as fh:
        data = fh.read(MAX_DUMP_BYTES + 1)
    if len(data) > MAX_DUMP_BYTES:
        raise ValueError(f"{path}: larger than {MAX_DUMP_BYTES >> 20} MB, not read as a Flight Recorder dump")
    try:
        if data[:1] == b"\x80":
            dump = loads_plain(data)
        else:
            dump = json.loads(data.decode("utf-8"))
    except RefusedPickle as exc:
        raise RefusedPickle(f"{path}: {exc}") from None
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ValueError(f"{path}: not a Flight Recorder dump") from None
    if not isinstance(dump, dict) or "entries" not in dump:
        raise ValueError(f"{path}: not a Flight Recorder dump")
    problem = _dump_shape_problem(dump)
    if problem:
        raise MalformedDump(f"{path}: malformed Flight Recorder dump: {problem}")
    try:
        return records_from_fr_dump(dump, rank)
    except (TypeError, ValueError, AttributeError, KeyError, OverflowError, RecursionError) as exc:
        raise MalformedDump(f"{path}: malformed Flight Recorder dump: {type(exc).__name__}: {str(exc)[:120]}") from None


def _dump_shape_problem(dump: dict) -> str:
    """What is wrong with the shape of a dump, in words, or ''. The containers are
    walked iteratively (a hostile file may nest them deeper than Python recurses)
    and the walk stops at MAX_DUMP_VALUES (a list shared many times counts each time)."""
    entries = dump.get("entries")
    if not isinstance(entries, (list, tuple)):
        return f'"entries" is {type(entries).__name__}, not a list'
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            return f"entry {i} is {type(e).__name__}, not a record"
    if not isinstance(dump.get("pg_status") or {}, dict):
        return '"pg_status" is not a mapping'
    todo: list = [dump]
    seen = 0
    while todo:
        item = todo.pop()
        values = item.values() if isinstance(item, dict) else item
        for v in values:
            seen += 1
            if isinstance(v, (dict, list, tuple)):
                todo.append(v)
            elif isinstance(v, int) and not -(1 << 63) <= v < 1 << 64:
                return "a number beyond 64 bits"  # printing one of 4,300 digits raises
        if seen > MAX_DUMP_VALUES:
            return f"more than {MAX_DUMP_VALUES:,} values"
    return ""


def records_to_json(records: Iterable[CollectiveRecord]) -> list[dict]:
    return [r.to_dict() for r in records]


def records_from_json(items: Iterable[Mapping]) -> list[CollectiveRecord]:
    return [CollectiveRecord.from_dict(d) for d in items]


# -- the analysis -------------------------------------------------------------------------

def _group_by_seq(ranks: Sequence[RankState]) -> dict[tuple[str, int], dict[int, CollectiveRecord]]:
    table: dict[tuple[str, int], dict[int, CollectiveRecord]] = {}
    for state in ranks:
        for r in state.collectives:
            table.setdefault((r.pg, r.seq), {})[state.rank] = r
    return table


def _differs(calls: Mapping[int, CollectiveRecord]) -> str:
    """'kind', 'shape', 'dtype' or '' for the calls of one collective number."""
    recs = list(calls.values())
    if len({r.kind for r in recs}) > 1:
        return "kind"
    kind = recs[0].kind
    if kind in _SAME_SHAPE and len({r.input_shapes for r in recs}) > 1:
        return "shape"
    if kind not in _ANY_DTYPE and len({tuple(sorted(set(r.input_dtypes))) for r in recs}) > 1:
        return "dtype"
    if len({r.root for r in recs}) > 1 and all(r.root >= 0 for r in recs):
        return "root"
    return ""


def _root_word(kind: str) -> str:
    return "dst" if kind in ("reduce", "gather") else "src"


def _evidence_calls(calls: Mapping[int, CollectiveRecord]) -> dict[str, str]:
    return {f"rank {rank}": calls[rank].call() for rank in sorted(calls)}


def find_group_mismatch(ranks: Sequence[RankState]) -> Finding | None:
    """The first new_group whose ranks differ across ranks (by creation order)."""
    made: dict[int, dict[int, CollectiveRecord]] = {}
    for state in ranks:
        for r in state.records:
            if r.kind == NEW_GROUP:
                made.setdefault(r.seq, {})[state.rank] = r
    for n in sorted(made):
        calls = made[n]
        members = {rank: (r.input_shapes[0] if r.input_shapes else ()) for rank, r in calls.items()}
        if len(calls) < 2 or len(set(members.values())) < 2:
            continue
        votes = list(members.values())
        made_with = "; ".join(
            f"rank {rank} made it with ranks {list(members[rank]) or 'all'}"
            + (f" at {short_where(calls[rank].where)}" if calls[rank].where else "")
            for rank in sorted(calls)
        )
        ev: dict = {"new_group": n, "differs in": "group", **{f"rank {rank}": calls[rank].call() for rank in sorted(calls)}}
        odd = sorted(calls, key=lambda rank: (votes.count(members[rank]), rank))
        if votes.count(members[odd[0]]) < votes.count(members[odd[-1]]):
            ev["root cause"] = f"rank {odd[0]}"
        sites = " and ".join(sorted({short_where(r.where) for r in calls.values() if r.where})) or "those calls"
        return COLLECTIVE_MISMATCH(case="group", evidence=ev, n=n, made=made_with, sites=sites)
    return None


def _numel(r: CollectiveRecord) -> int:
    n = 0
    for shape in r.input_shapes:
        size = 1
        for d in shape:
            size *= d
        n += size
    return n


def find_p2p_mismatch(ranks: Sequence[RankState]) -> Finding | None:
    """A send and the recv it meets (same group, same pair, same number) that disagree:
    more elements sent than the recv's buffer holds, or another dtype."""
    by_rank = {s.rank: s for s in ranks}
    for s in ranks:
        for send in (r for r in s.records if r.kind == SEND and r.peer in by_rank):
            recv = next(
                (r for r in by_rank[send.peer].records if r.kind == RECV and r.peer == s.rank and r.pg == send.pg and r.seq == send.seq),
                None,
            )
            if recv is None or not send.input_shapes or not recv.input_shapes:
                continue
            what = "size" if _numel(send) > _numel(recv) else ("dtype" if set(send.input_dtypes) != set(recv.input_dtypes) else "")
            if not what:
                continue
            # The fix is the receiver's buffer (gloo aborts that rank, too).
            ev = {f"rank {s.rank}": send.call(), f"rank {recv.rank}": recv.call(), "differs in": what,
                  "root cause": f"rank {recv.rank}"}  # fmt: skip
            sites = " and ".join(sorted({short_where(r.where) for r in (send, recv) if r.where})) or "those calls"
            return COLLECTIVE_MISMATCH(
                case="p2p", evidence=ev, rank=s.rank, name=send.name(), sent=send.call(), receiver=recv.rank,
                received=recv.call(), sites=sites,
            )  # fmt: skip
    return None


def find_mismatch(ranks: Sequence[RankState]) -> Finding | None:
    """The first new_group, then the first collective number, whose calls differ across ranks
    (in kind, shape, dtype or root)."""
    groups = find_group_mismatch(ranks)
    if groups is not None:
        return groups
    p2p = find_p2p_mismatch(ranks)
    if p2p is not None:
        return p2p
    for (pg, seq), calls in sorted(_group_by_seq(ranks).items(), key=lambda kv: (kv[0][1], kv[0][0])):
        if len(calls) < 2:
            continue
        what = _differs(calls)
        if not what:
            continue
        recs = [calls[r] for r in sorted(calls)]
        sites = sorted({short_where(r.where) for r in recs if r.where})
        ddp = next((r for r in recs if r.function.endswith(DDP_FORWARD) and r.kind not in {o.kind for o in recs if o is not r}), None)
        # The title's and the fix's fields, and their case: `what` differs, or how the calls parted.
        fields: dict = {"seq": seq, "kind": recs[0].kind, "sites": " and ".join(sites) or "that call"}
        case = fix_case = what
        how = ""
        if what == "kind":
            how, fields = _diverged(ranks, pg, seq, calls)
            fields["seq"] = seq
            fields["calls"] = "; ".join(f"rank {r.rank} called {r.kind}" + (f" at {short_where(r.where)}" if r.where else "") for r in recs)
            case = fix_case = how or "kind"
            if not how:
                fields["sites"] = " and ".join(sites)
                fix_case = "kind" if sites else "kind-unplaced"
            if ddp is not None:
                fix_case = "ddp-forward"
                fields.update(rank=ddp.rank, where=short_where(ddp.where))
        elif what == "root":
            fields["roots"] = "; ".join(
                f"rank {r.rank} {_root_word(r.kind)}={r.root}" + (f" at {short_where(r.where)}" if r.where else "")
                for r in recs
            )
            fields["root"] = _root_word(recs[0].kind)
        else:
            fields["values"] = "; ".join(
                f"rank {r.rank} {', '.join(_shape(s) for s in r.input_shapes) if what == 'shape' else ', '.join(sorted(set(r.input_dtypes)))}"
                for r in recs
            )
        handled = [r for r in recs if r.handling]
        # A rank that made its call from an error handler: the error is where it departed.
        fields["handled"] = "".join(f"; rank {r.rank} made its call while handling {r.handling}" for r in handled)
        ev: dict = {"collective": seq, "process group": pg, "differs in": what, **_evidence_calls(calls)}
        if what == "kind" and how:
            ev["diverged by"] = how
        hint = _uneven_hint(ranks, pg, seq)
        if hint:
            ev["note"] = hint
        return COLLECTIVE_MISMATCH(case=case, fix_case=fix_case, evidence=ev, **fields)
    return None


ORDER, SKIP = "order", "skip"  # how two ranks' call sequences parted at a kind mismatch


def _diverged(
    ranks: Sequence[RankState], pg: str, seq: int, calls: Mapping[int, CollectiveRecord]
) -> tuple[str, dict]:
    """How the ranks' sequences part at collective #seq, where the kinds differ:
    (ORDER | SKIP | "", the fields of collective-mismatch's case of that name; "" and
    none where the records do not decide).
    ORDER: the calls swap places (each rank's next call is the other's call here), or every
    rank has made each of these calls, from the same lines, before: same calls, another order.
    SKIP: one rank's call here comes from a line no other rank has called it from in the
    records: a call made on some ranks only (the others skipped it)."""
    by_rank = {s.rank: s for s in ranks}

    def site(r: CollectiveRecord) -> tuple[str, str]:
        return (r.kind, r.where)

    def made(rank: int) -> set[tuple[str, str]]:
        return {site(r) for r in by_rank[rank].collectives if r.pg == pg} if rank in by_rank else set()

    here = {rank: site(r) for rank, r in calls.items()}
    nxt = {
        rank: next((site(r) for r in by_rank[rank].collectives if r.pg == pg and r.seq == seq + 1), None)
        for rank in calls
        if rank in by_rank
    }
    kinds = sorted({k for k, _ in here.values()})
    pair = sorted(calls)[:2]
    a, b = pair[0], pair[-1]
    swapped = nxt.get(a) == here[b] and nxt.get(b) == here[a]
    before = {rank: {site(r) for r in by_rank[rank].collectives if r.pg == pg and r.seq < seq} for rank in calls if rank in by_rank}
    everyone_made_both = len(before) == len(calls) and all(set(here.values()) <= made_here for made_here in before.values())
    if swapped or (everyone_made_both and all(w for _, w in here.values())):
        orders = "; ".join(
            f"rank {rank} calls {k}" + (f" ({short_where(w)})" if w else "") + " first" for rank, (k, w) in sorted(here.items())
        )
        lines = " and ".join(sorted({short_where(w) for _, w in here.values() if w})) or "those calls"
        return ORDER, {"orders": orders, "kinds": " and ".join(kinds), "lines": lines}
    only = [rank for rank, (k, w) in here.items() if w and all((k, w) not in made(o) for o in calls if o != rank)]
    if len(only) == 1 and len(calls) > 1:
        rank = only[0]
        k, w = here[rank]
        others = ", ".join(f"rank {o}" for o in sorted(calls) if o != rank)
        return SKIP, {"only": rank, "kind": k, "site": short_where(w), "others": others}
    return "", {}


def _site_counts(state: RankState, pg: str, upto: int, since: int = 1) -> dict[tuple[str, str], int]:
    """How many times the rank made each (call site, kind) in collectives #since..#upto."""
    counts: dict[tuple[str, str], int] = {}
    for r in state.collectives:
        if r.pg == pg and since <= r.seq <= upto and r.where:
            counts[(r.where, r.kind)] = counts.get((r.where, r.kind), 0) + 1
    return counts


def _known_since(ranks: Iterable[RankState], pg: str) -> int:
    """The first collective number whose record every one of these ranks still has. A
    trace published while its rank kept moving holds its newest calls only, and the
    Flight Recorder keeps a bounded buffer: counts are compared over the numbers that
    every rank's records cover, never a window against a whole history."""
    return max((min((r.seq for r in s.collectives if r.pg == pg), default=1) for s in ranks), default=1)


def _since_text(since: int) -> str:
    return f" since collective #{since}" if since > 1 else ""


def _uneven_hint(ranks: Sequence[RankState], pg: str, seq: int) -> str:
    """How often each rank made each call up to the mismatch, where they differ:
    the rank with fewer of a call skipped it, or ran its loop fewer times."""
    since = _known_since(ranks, pg)
    per_rank = {s.rank: _site_counts(s, pg, seq, since) for s in ranks}
    sites = sorted({w for c in per_rank.values() for w in c})
    parts = []
    for where, kind in sites:
        counts = {rank: c.get((where, kind), 0) for rank, c in sorted(per_rank.items())}
        if len(set(counts.values())) > 1:
            made = ", ".join(f"rank {rank} {n}" for rank, n in counts.items())
            parts.append(f"{kind} at {short_where(where)}: {made}")
    if not parts:
        return ""
    return (
        f"calls made up to #{seq}{_since_text(since)}: " + "; ".join(parts[:3]) + " — a rank with fewer of a call skipped it "
        "(a condition on its rank or data), or ran its loop fewer times (uneven batches: drop_last, "
        "or torch.distributed.algorithms.Join)"
    )


_CALLEE = re.compile(r"^(?:[\w\s,]+=\s*)?(?:return\s+|await\s+)?([A-Za-z_][\w.]*)\(")


def _describe_stack(stack: Sequence[StackFrame]) -> str:
    """`train.py:8 in load_next_shard (time.sleep)`: the user's innermost line, and
    the library call it is in when that is not the user's own."""
    if not stack:
        return "where unknown (no stack)"
    mine = user_frame(stack, innermost_first=False)
    if mine is None:
        top = stack[-1]
        return f"{short_where(top.where)} in {top.function}"
    inner = stack[stack.index(mine) + 1 :] if mine in stack else []
    callee = ""
    if inner:
        lib = inner[0]
        module = os.path.splitext(os.path.basename(lib.filename))[0]
        callee = f" ({module}.{lib.function})" if lib.function else ""
    elif mine.code:
        m = _CALLEE.match(mine.code.strip())
        callee = f" ({m.group(1)})" if m else ""
    return f"{short_where(mine.where)} in {mine.function}{callee}"


def _last_count(state: RankState, pg: str) -> int:
    last = state.last(pg)
    return last.seq if last else 0


def rank_positions(ranks: Sequence[RankState]) -> dict[int, str]:
    """One line per rank: where it stands (for a stall report)."""
    out = {}
    for s in ranks:
        w = s.waiting()
        if s.ended == "finished":
            out[s.rank] = f"finished after {_count_text(s)}"
        elif s.ended == "failed":
            out[s.rank] = f"failed after {_count_text(s)}"
        elif w is not None:
            out[s.rank] = f"waits in {w.name()}" + (f" at {short_where(w.where)}" if w.where else "")
        elif s.stage == RENDEZVOUS:
            at = user_frame(s.stack, innermost_first=False) if s.stack else None
            out[s.rank] = "waits in init_process_group (the rendezvous)" + (
                f" at {short_where(at.where)}" if at else ""
            )
        else:
            out[s.rank] = f"is not in a collective: {_describe_stack(s.stack)}" if s.stack else (
                f"is not in a collective (after {_count_text(s)})"
            )
    return out


def _count_text(s: RankState) -> str:
    n = max((r.seq for r in s.collectives), default=0)
    return f"{n} collective{'s' if n != 1 else ''}"


def _beyond(s: RankState) -> CollectiveRecord | None:
    """The collective a rank is held in: the one it waits in, or, for a rank that
    failed, the last it called (a collective that failed for a lost peer reads as
    completed in the Flight Recorder)."""
    if s.ended == "finished":
        return None
    if s.ended == "failed":
        return max(s.collectives, key=lambda r: (r.seq, r.time_ns)) if s.collectives else None
    w = s.waiting()
    return None if w is None or not w.numbered else w


def find_uneven(ranks: Sequence[RankState]) -> Finding | None:
    """A rank that ended while another waits in (or died in) a collective it never called."""
    for s in ranks:
        w = _beyond(s)
        if w is None:
            continue
        # Only a peer that finished cleanly: one that failed is a crash, told apart elsewhere.
        gone = [
            o
            for o in ranks
            if o.ended == "finished" and o.rank != s.rank and _last_count(o, w.pg) < w.seq and _member(o, w.pg)
        ]
        if not gone:
            continue
        o = gone[0]
        done = _last_count(o, w.pg)
        since = _known_since((o, s), w.pg)
        theirs = _site_counts(o, w.pg, done, since).get((w.where, w.kind), 0) if w.where else 0
        mine = _site_counts(s, w.pg, w.seq, since).get((w.where, w.kind), 0) if w.where else 0
        state = "failed in" if s.ended == "failed" else "waits in"
        last = o.last(w.pg)
        ev = {
            f"rank {o.rank}": f"finished after {done} collective{'s' if done != 1 else ''}"
            + (f" (its last: {last.call()})" if last is not None else ""),
            f"rank {s.rank}": f"{state} {w.call()} (#{w.seq})",
            "process group": w.pg,
        }
        destroyed = next((r for r in o.records if r.kind == DESTROY), None)
        if destroyed is not None:
            # Its sequence ends where it tore the group down: that call is the root cause.
            at = f" at {short_where(destroyed.where)}" if destroyed.where else ""
            ev[f"rank {o.rank}"] = f"destroyed the process group{at} after {done} collectives"
            ev["root cause"] = f"rank {o.rank}"
            return COLLECTIVE_MISSING(
                case="destroyed", evidence=ev, rank=o.rank, at=at, collectives=f"{done} collective{'s' if done != 1 else ''}",
                waiter=s.rank, state=state, name=w.name(), waiter_at=f" at {short_where(w.where)}" if w.where else "",
            )  # fmt: skip
        if theirs and mine > theirs:
            # The sequences part where the rank that finished left the loop: it is the root cause.
            ev["root cause"] = f"rank {o.rank}"
            return UNEVEN_COLLECTIVES(
                evidence=ev, rank=o.rank, calls=f"{theirs} {w.kind} call{'s' if theirs != 1 else ''}", where=short_where(w.where),
                since=_since_text(since), waiter=s.rank, nth=_an(_ordinal(mine)), seq=w.seq,
            )  # fmt: skip
        fix_case = "never-called" if w.where else "never-called-unplaced"
        if w.function.endswith(DDP_FORWARD):
            fix_case = "ddp-forward"
        return COLLECTIVE_MISSING(
            case="never-called", fix_case=fix_case, evidence=ev, rank=s.rank, state=state, kind=w.kind, seq=w.seq,
            at=f" at {short_where(w.where)}" if w.where else "", where=short_where(w.where), other=o.rank, done=done,
        )  # fmt: skip
    return _left_before_joining(ranks)


def _left_before_joining(ranks: Sequence[RankState]) -> Finding | None:
    """A rank that finished without ever joining while its peers wait for it in the rendezvous."""
    waiting = [s for s in ranks if not s.ended and s.stage == RENDEZVOUS]
    gone = [o for o in ranks if o.ended == "finished" and not o.records and o.stage in ("", "started", RENDEZVOUS)]
    if not waiting or not gone:
        return None
    o, s = gone[0], waiting[0]
    ev = {f"rank {o.rank}": "finished (exit 0) before joining", f"rank {s.rank}": "waits in init_process_group",
          "root cause": f"rank {o.rank}"}  # fmt: skip
    return COLLECTIVE_MISSING(
        case="never-joined", evidence=ev, rank=o.rank, waiters=", ".join(f"rank {w.rank}" for w in waiting),
        wait="wait" if len(waiting) > 1 else "waits",
    )  # fmt: skip


def _member(s: RankState, pg: str) -> bool:
    """Is the rank in that group? Every rank is in the default one; of another we
    know it only when the rank called a collective there."""
    return pg == "0" or s.last(pg) is not None


def _an(word: str) -> str:
    """`a 3rd`, `an 8th`, `an 11th`."""
    return f"an {word}" if word.startswith(("8", "11", "18")) else f"a {word}"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _made(s: RankState, kind: str, peer: int, pg: str) -> int:
    """How many `kind` calls with `peer` the rank has made in group `pg` (their numbers count up from 1)."""
    return max((r.seq for r in s.records if r.kind == kind and r.peer == peer and r.pg == pg), default=0)


def waits_for(s: RankState, by_rank: Mapping[int, RankState]) -> set[int]:
    """The live ranks that rank `s` is blocked on: the peer of a send/recv that has
    not made the matching call; the members of a group that have not reached its collective."""
    w = s.waiting()
    if w is None or s.ended:
        return set()
    if w.kind == NEW_GROUP:  # every rank of the world makes its groups, in the same order
        return {
            o.rank
            for o in by_rank.values()
            if o.rank != s.rank and not o.ended and sum(r.kind == NEW_GROUP for r in o.records) < w.seq
        }
    if w.kind == RECV and w.peer < 0:  # from any rank: blocked while more recvs were made than sends to it
        sent = sum(_made(o, SEND, s.rank, w.pg) for o in by_rank.values() if o.rank != s.rank)
        made = sum(_made(s, RECV, peer, w.pg) for peer in {r.peer for r in s.records if r.kind == RECV})
        return {o.rank for o in by_rank.values() if o.rank != s.rank and not o.ended} if sent < made else set()
    if w.p2p:
        o = by_rank.get(w.peer)
        if o is None or o.ended:
            return set()
        matching = RECV if w.kind == SEND else SEND
        return set() if _made(o, matching, s.rank, w.pg) >= w.seq else {o.rank}
    return {
        o.rank
        for o in by_rank.values()
        if o.rank != s.rank and not o.ended and _member(o, w.pg) and _last_count(o, w.pg) < w.seq
    }


def find_cycle(ranks: Sequence[RankState]) -> list[RankState]:
    """Ranks that each wait for the next, the last for the first: a deadlock that no
    timeout resolves. Empty when there is none."""
    by_rank = {s.rank: s for s in ranks}
    edges = {s.rank: waits_for(s, by_rank) for s in ranks}
    for start in sorted(edges):
        path = [start]
        seen = {start}
        while True:
            nxt = sorted(edges.get(path[-1], ()))
            if not nxt:
                break
            step = next((n for n in nxt if n == start), None)
            if step is not None:
                return [by_rank[r] for r in path]
            fresh = [n for n in nxt if n not in seen]
            if not fresh:
                break
            path.append(fresh[0])
            seen.add(fresh[0])
    return []


def _odd_one_out(ranks: Sequence[RankState], cycle: list[RankState]) -> RankState:
    """The rank of the cycle whose blocked call the fewest ranks are in (it departed from
    what the others do: the new_group the others make, the collective the others skip);
    the lowest rank when every rank is in the same kind of call."""
    def site(s: RankState) -> tuple:
        w = s.waiting()
        return (w.kind, w.where) if w is not None else ("", "")

    sites = [site(s) for s in ranks if s.waiting() is not None]
    return min(cycle, key=lambda s: (sites.count(site(s)), s.rank))


def find_deadlock(ranks: Sequence[RankState]) -> Finding | None:
    """A cycle of ranks blocked on each other (send/send, recv/recv, a collective
    against a recv ...), with every rank's line."""
    cycle = find_cycle(ranks)
    if not cycle:
        return None
    calls = {s.rank: s.waiting() for s in cycle}
    parts = []
    for s in cycle:
        w = calls[s.rank]
        assert w is not None
        at = f" at {short_where(w.where)}" if w.where else ""
        parts.append(f"rank {s.rank} waits in {w.name()}{at}")
    kinds = {w.kind for w in calls.values() if w is not None}
    sites = sorted({short_where(w.where) for w in calls.values() if w is not None and w.where})
    lines = " and ".join(sites) or "those calls"
    if kinds == {SEND}:
        case = "send"
    elif kinds == {RECV}:
        case = "recv"
    elif NEW_GROUP in kinds:
        case = "new-group"
    elif kinds & P2P:
        case = "p2p"
    else:
        case = "collective"
    ev: dict = {f"rank {s.rank}": call.call() for s in cycle if (call := calls[s.rank]) is not None}
    ev["cycle"] = " -> ".join(f"rank {s.rank}" for s in [*cycle, cycle[0]])
    ev["root cause"] = f"rank {_odd_one_out(ranks, cycle).rank}"
    return COLLECTIVE_DEADLOCK(case=case, evidence=ev, waits="; ".join(parts), lines=lines)


def find_unmatched_send(ranks: Sequence[RankState]) -> Finding | None:
    """A rank that sent a peer more than the peer received from it (or the other way)."""
    by_rank = {s.rank: s for s in ranks}
    for s in ranks:
        for r in s.records:
            if not r.p2p or r.peer not in by_rank:
                continue
            other = RECV if r.kind == SEND else SEND
            matched = _made(by_rank[r.peer], other, s.rank, r.pg)
            if other == RECV:  # a recv from any rank may be the one that meets it
                matched += _made(by_rank[r.peer], RECV, -1, r.pg)
            if r.seq > matched and r.seq == _made(s, r.kind, r.peer, r.pg):
                at = f" at {short_where(r.where)}" if r.where else ""
                ev = {f"rank {s.rank}": r.call(), f"rank {r.peer}": f"{matched} {other} call(s) with rank {s.rank}",
                      "differs in": "send/recv", "root cause": f"rank {s.rank}"}  # fmt: skip
                return COLLECTIVE_MISMATCH(
                    case="unmatched", evidence=ev, rank=s.rank, name=r.name(), at=at, other=other, peer=r.peer,
                    matched=matched, site=short_where(r.where) or "that call",
                )  # fmt: skip
    return None


def find_stall(ranks: Sequence[RankState], stalled_s: float, limit: str = "--hang-timeout") -> Finding | None:
    """No collective progress for `stalled_s`: who waits where, and who holds them up.
    `limit`: the option of the command that stopped the job, the one to raise when the
    work is legitimately long (`run --hang-timeout`, `allreduce`/`train-smoke --timeout`)."""
    waiting = [s for s in ranks if s.blocked()]
    if not waiting:
        return None
    calls = [w for w in (s.waiting() for s in waiting) if w is not None]
    seq = max((w.seq for w in calls), default=0)
    pg = calls[0].pg if calls else "0"
    holders = [s for s in ranks if not s.ended and not s.blocked()]
    holders.sort(key=lambda s: (_last_count(s, pg), s.rank))
    positions = rank_positions(ranks)
    ev: dict = {f"rank {r}": text for r, text in sorted(positions.items())}
    ev["no progress for"] = f"{stalled_s:.0f} s"
    if holders:
        h = holders[0]
        w = calls[0] if calls else None
        what = w.name() if w else "init_process_group"
        ev["timeout that fired"] = f"{limit} ({stalled_s:.0f} s without progress)"
        ev["root cause"] = f"rank {h.rank}"
        return COLLECTIVE_STALL(
            case="held-up", fix_case="held-up" if h.stack else "held-up-unseen", evidence=ev, rank=h.rank,
            positions=_positions_text(ranks, positions), seconds=stalled_s, limit=limit,
            stack=_describe_stack(h.stack), what=what,
        )  # fmt: skip
    unmatched = find_unmatched_send(ranks)
    if unmatched is not None:
        return unmatched
    if not calls:  # every live rank is still in init_process_group: the rendezvous, not a transport
        return _rendezvous_stall(ranks, stalled_s, positions)
    apart = _waits_apart(waiting, calls, positions, stalled_s, limit)
    if apart is not None:
        return apart
    ev["timeout that fired"] = f"{limit} ({stalled_s:.0f} s without progress)"
    return COLLECTIVE_STALL(case="transport", evidence=ev, seq=seq, seconds=stalled_s, positions=_positions_text(ranks, positions))


def _positions_text(ranks: Sequence[RankState], positions: Mapping[int, str]) -> str:
    """`rank 0 waits in all_reduce #2 at x.py:3; rank 1 ...`: where every rank stands, by rank."""
    return "; ".join(f"rank {s.rank} {positions[s.rank]}" for s in sorted(ranks, key=lambda s: s.rank))


def _waits_apart(
    waiting: Sequence[RankState], calls: Sequence[CollectiveRecord], positions: Mapping[int, str], stalled_s: float, limit: str
) -> Finding | None:
    """Every live rank waits, but not in the same call: other process groups, other
    collective numbers (a call more on one rank), or another kind or fingerprint at the
    same number. None when they all wait in one call with one fingerprint (the transport)."""
    prints = {(c.pg, c.seq, c.kind, c.input_shapes, tuple(sorted(set(c.input_dtypes))), c.root) for c in calls}
    if len(prints) == 1 and len(calls) == len(waiting):
        return None
    groups = sorted({c.pg for c in calls})
    ev: dict = {f"rank {c.rank}": positions[c.rank] for c in calls}
    ev["no progress for"] = f"{stalled_s:.0f} s"
    ev["timeout that fired"] = f"{limit} ({stalled_s:.0f} s without progress)"
    lines = " and ".join(sorted({short_where(c.where) for c in calls if c.where})) or "those calls"
    if len(groups) > 1:
        ev["differs in"] = "process group"
        waits = "; ".join(
            f"rank {c.rank} in {c.name()} of group {c.pg}" + (f" at {short_where(c.where)}" if c.where else "") for c in calls
        )
        return COLLECTIVE_STALL(case="process-groups", evidence=ev, waits=waits, lines=lines)
    seqs = sorted({c.seq for c in calls})
    ev["differs in"] = "collective number" if len(seqs) > 1 else "call"
    waits = "; ".join(f"rank {c.rank} in {c.name()}" + (f" at {short_where(c.where)}" if c.where else "") for c in calls)
    case = "collective-number" if len(seqs) > 1 else "call"
    return COLLECTIVE_STALL(case=case, fix_case="call", evidence=ev, waits=waits, lines=lines)


def _rendezvous_stall(ranks: Sequence[RankState], stalled_s: float, positions: Mapping[int, str]) -> Finding:
    """Every live rank waits in init_process_group: no rank is to blame, no transport
    ran. The evidence names no single rank (the root cause is the meeting point)."""
    ev: dict = {"ranks": "; ".join(f"{r}: {text}" for r, text in sorted(positions.items())), "no progress for": f"{stalled_s:.0f} s"}
    found = RENDEZVOUS_HANG(case="traces", evidence=ev, seconds=stalled_s, positions=_positions_text(ranks, positions))
    # Reported here among the collective findings (commands/diagnose and the verdict look for them
    # by this area), not in the kind's "ranks".
    return replace(found, area=AREA)


def analyze(
    ranks: Sequence[RankState],
    *,
    stalled_s: float | None = None,
    limit: str = "--hang-timeout",
) -> list[Finding]:
    """Findings from lining the ranks' collectives up: a mismatch first (the
    cause of everything after it), then a rank waiting for a finished peer, then
    (when the job made no progress for `stalled_s`) the stall."""
    mismatch = find_mismatch(ranks)
    if mismatch:
        return [mismatch]
    deadlock = find_deadlock(ranks)
    if deadlock:
        return [deadlock]
    uneven = find_uneven(ranks)
    if uneven:
        return [uneven]
    if stalled_s is not None:
        stall = find_stall(ranks, stalled_s, limit)
        if stall:
            return [stall]
    return []


def parse_stack_text(text: str) -> dict[str, list[StackFrame]]:
    """Thread stacks as traceback.format_stack or faulthandler print them ->
    {thread name: frames outermost first}."""
    threads: dict[str, list[StackFrame]] = {}
    current: list[StackFrame] | None = None
    name = ""
    tb_line = re.compile(r'^\s*File "(?P<f>[^"]+)", line (?P<l>\d+)(?:, in (?P<n>.+)| in (?P<n2>.+))?$')
    newest_first = False
    for line in text.splitlines():
        m = tb_line.match(line)
        if m:
            if current is None:
                current = threads.setdefault(name or "main", [])
            current.append(StackFrame(m["f"], int(m["l"]), (m["n"] or m["n2"] or "").strip()))
            continue
        if current is not None and current and line.startswith("    ") and not line.strip().startswith("File"):
            last = current[-1]
            if not last.code:
                current[-1] = StackFrame(last.filename, last.line, last.function, line.strip())
            continue
        stripped = line.strip()
        if stripped.startswith(("Thread ", "Current thread ")):
            if newest_first and current:
                current.reverse()
            name = stripped.rstrip(":").split(" (most recent")[0]
            newest_first = "most recent call first" in stripped
            current = threads.setdefault(name, [])
    if newest_first and current:
        current.reverse()
    return threads


_OWN_THREADS = ("collective_trace.py", "joined_watch.py")  # gpudoctor's own threads in a rank


def main_thread_stack(threads: Mapping[str, Sequence[StackFrame]]) -> tuple[StackFrame, ...]:
    """The main thread's frames from a parsed dump: the thread named MainThread
    (or faulthandler's "Current thread"), else the first that is not gpudoctor's own."""
    theirs = {
        name: frames
        for name, frames in threads.items()
        if frames and not any(f.filename.endswith(_OWN_THREADS) and f.function in ("loop", "_watch") for f in frames)
    }
    for name, frames in theirs.items():
        if "MainThread" in name or name.startswith("Current thread"):
            return tuple(frames)
    return tuple(next(iter(theirs.values()), ()))
