"""The rank side of the hang & crash doctor: this rank's collectives, published
to its run folder for the supervisor (and `gpudoctor diagnose DIR`) to line up.

Nothing is written on the hot path. PyTorch's Flight Recorder (TORCH_FR_BUFFER_SIZE,
set before torch is imported) records every collective, DDP's own bucket
all-reduces included; a background thread reads it every PUBLISH_S seconds and
rewrites rank<N>.collectives.json only when something changed. It is read
without its Python stacks: the first dump with stacks imports ~800 modules
(torch._dynamo, sympy: seconds, and memory in every rank). The user's
file:line comes from cheap hooks instead:

- each torch.distributed collective notes the call it is about to make (kind,
  shapes, the user's file:line, its number in the group), in memory and in a
  small memory-mapped file: when gloo aborts the process on a size mismatch, or
  the rank is SIGKILLed, that note is still on disk;
- DDP's construction, its forward and every backward note the user's line, which
  the collectives DDP makes itself (its bucket all-reduces) are attributed to;
- isend/irecv (send, recv and batch_isend_irecv are made of them) are noted with
  their peer and their number in that direction, and a work's wait() says when the
  rank is blocked on one (or on an async collective); new_group and
  destroy_process_group are noted too, and the object collectives lend their name
  to the collectives they make;
- an uncaught exception and os._exit() say how, and where, the rank ended.

The same thread answers the supervisor's request for a stack dump (every
thread, from sys._current_frames(): it works while the main thread waits in C).
"""

from __future__ import annotations

import atexit
import bisect
import dataclasses
import faulthandler
import functools
import mmap
import os
import pickle
import re
import sys
import threading
import time
import traceback
from collections import deque
from typing import Any

from gpudoctor.knowledge.collectives import (
    COMPLETED,
    DDP_FORWARD,
    DESTROY,
    NEW_GROUP,
    POSTED,
    RECV,
    SEND,
    STARTED,
    CollectiveRecord,
    is_library_frame,
    records_from_fr_dump,
    short_where,
)
from gpudoctor.launch import rundir as run_folder

PUBLISH_S = 0.5
FR_BUFFER_ENV = "TORCH_FR_BUFFER_SIZE"
FR_BUFFER = "128"  # entries kept: enough to line ranks up; the dump read every PUBLISH_S stays ~1 ms
WINDOW = 16  # records published while the rank keeps moving (see Tracker.publish)
PUBLISH_MOVING_S = 2.0  # how often they are, at most
THREAD_NAME = "gpudoctor-collectives"

# torch.distributed collectives and the position of their input tensor(s).
COLLECTIVES = {
    "all_reduce": 0,
    "broadcast": 0,
    "reduce": 0,
    "all_gather": 1,
    "all_gather_into_tensor": 1,
    "all_gather_single": 1,
    "reduce_scatter": 1,
    "reduce_scatter_tensor": 1,
    "all_to_all_single": 1,
    "all_to_all": 1,
    "gather": 0,
    "scatter": 0,
    "barrier": None,
    "monitored_barrier": None,
}
# Rooted collectives: the root's position, its keyword, and the keyword of its rank within the group.
ROOTS = {
    "broadcast": (1, "src", "group_src"),
    "reduce": (1, "dst", "group_dst"),
    "gather": (2, "dst", "group_dst"),
    "scatter": (2, "src", "group_src"),
}
# Point-to-point: the primitives send/recv and batch_isend_irecv are made of
# (each returns a work; send/recv wait on it at once).
P2P_CALLS = {"isend": (SEND, "dst", "group_dst"), "irecv": (RECV, "src", "group_src")}
P2P_KEPT = 64  # point-to-point calls kept for the trace
MONITORED_BARRIER_NUMBERS = 2  # collective numbers the Flight Recorder gives a monitored_barrier (torch 2.13, gloo)

_DTYPE_NAMES: dict = {}


def _dtype(t) -> str:
    name = _DTYPE_NAMES.get(t.dtype)
    if name is None:
        name = _DTYPE_NAMES[t.dtype] = str(t.dtype).replace("torch.", "")
    return name


def _input_kwarg(kwargs: dict):
    for name in ("tensor", "input_tensor", "input", "input_list", "input_tensor_list"):
        if name in kwargs:
            return kwargs[name]
    return None


def _root(kind: str, args, kwargs, pg) -> int:
    """The global rank of a rooted collective's root; -1 for any other (or unknown)."""
    spec = ROOTS.get(kind)
    if spec is None:
        return -1
    index, name, group_name = spec
    try:
        root = args[index] if len(args) > index else kwargs.get(name)
        if root is None and kwargs.get(group_name) is not None:
            root = _global_rank(pg, int(kwargs[group_name]))
        return int(root) if root is not None else -1
    except Exception:  # noqa: BLE001 - a note must never break the user's call
        return -1


def _global_rank(pg, group_rank: int) -> int:
    from torch.distributed import distributed_c10d

    return distributed_c10d.get_global_rank(pg, group_rank)


def _tensors(value) -> list:
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if hasattr(v, "shape") and hasattr(v, "dtype")]
    return []


_library_code: dict[Any, bool] = {}  # code object -> is it a library's (one dict lookup per frame)


def _user_frame(frame):
    """The innermost frame outside torch, gpudoctor and the stdlib; None if none is."""
    while frame is not None:
        code = frame.f_code
        lib = _library_code.get(code)
        if lib is None:
            lib = _library_code[code] = is_library_frame(code.co_filename)
        if not lib:
            return frame
        frame = frame.f_back
    return None


_sites: dict[tuple[Any, int], tuple[int, str, str]] = {}


def _site(frame) -> tuple[int, str, str]:
    """(line, "file:line", function) of the frame's current call. `f_lineno` decodes
    the code's line table from its start: ~3 us in a 300-line function, ~9 us in a
    1000-line one, on every call of a training step. A call site never changes, so
    it is decoded once, by code object and instruction."""
    key = (frame.f_code, frame.f_lasti)
    site = _sites.get(key)
    if site is None:
        if len(_sites) > 4096:  # code made on the fly, call after call: start over
            _sites.clear()
        line = frame.f_lineno or 0
        site = _sites[key] = (line, f"{frame.f_code.co_filename}:{line}", frame.f_code.co_name)
    return site


def line_of(frame) -> int:
    """The frame's current line."""
    return _site(frame)[0]


def user_where(frame) -> tuple[str, str]:
    """(file:line, function) of the innermost frame outside torch, gpudoctor and the stdlib."""
    frame = _user_frame(frame)
    if frame is None:
        return "", ""
    _, where, function = _site(frame)
    return where, function


def _time_of(note: tuple[int, Any, int, str]) -> int:
    return note[0]


class Tracker:
    def __init__(self, run_dir: str, rank: int):
        self.run_dir = run_dir
        self.rank = rank
        self.pid = os.getpid()
        self.stopping = threading.Event()  # set at exit: the publishing loop ends (stop_at_exit)
        self.exit: run_folder.RankExit | None = None
        self.history: deque[CollectiveRecord] = deque(maxlen=64)  # when the Flight Recorder is off
        # (group, number) -> (file:line, function, root, kind as the user called it, the error
        # it was made while handling): what the recorder does not know of a call
        self.sites: dict[tuple[str, int], tuple[str, str, int, str, str]] = {}
        self.object_call = ""  # all_gather_object & co. under way: their collectives carry its name
        # (time_ns, code object, line, what makes the collectives: "" or DDP_FORWARD)
        self.context: deque[tuple[int, Any, int, str]] = deque(maxlen=64)
        self.group: Any = None  # the default group, its name and its counter, looked up once
        self.group_name = "0"
        self.group_count: Any = None
        self.default_group: Any = lambda: None
        try:
            from torch.distributed import distributed_c10d

            self.default_group = distributed_c10d._get_default_group
        except Exception:  # noqa: BLE001 - a torch without distributed
            pass
        self.last_key: object = None
        self.last_status: object = None
        self.behind = False  # the published trace is not this rank's whole buffer as it is now
        self.window_at = -PUBLISH_MOVING_S  # time.monotonic() of the last publication of a window
        self.done_upto: dict[str, int] = {}  # per group: the last collective a hook saw return
        self.inflight: CollectiveRecord | None = None  # the hooked call under way (for when the recorder is off)
        self.calls = 0  # hooked calls that returned
        # Point-to-point. gloo gives a send/recv a number in its group's sequence, as it
        # does a collective, but the Flight Recorder numbers collectives alone: the
        # numbers they took are subtracted (how many, per group name).
        self.p2p_taken: dict[str, int] = {}
        self.p2p_made: dict[tuple[str, str, int], int] = {}  # (group, send|recv, peer) -> calls
        self.p2p: dict[int, CollectiveRecord] = {}  # token -> the newest calls, oldest first
        # id(work) -> the token of its send/recv, or the record of its async collective, until waited on
        self.works: dict[int, int | CollectiveRecord] = {}
        self.p2p_token = 0
        self.encoder = run_folder.CurrentEncoder()
        # Join mode (runtime/joined_watch.py): also publish to the job's store, answer over it.
        self.on_publish = None
        self.on_tick = None
        self.stacks_sent = False
        self.lock = threading.Lock()
        self.fatal: Any = None  # the file faulthandler writes to on a fatal signal
        self.mm = None
        try:
            fd = os.open(run_folder.current_path(run_dir, rank), os.O_RDWR | os.O_CREAT, 0o644)
            os.ftruncate(fd, run_folder.CURRENT_SIZE)
            self.mm = mmap.mmap(fd, run_folder.CURRENT_SIZE)
            os.close(fd)
        except OSError:
            self.mm = None

    # -- the hot path: one note per collective call, into memory --------------------------

    def note(self, kind: str, args, kwargs, group) -> CollectiveRecord | None:
        try:
            pg = group if group is not None else self.default_group()
            name = str(getattr(pg, "group_name", "0") or "0")
            seq = pg._get_sequence_number_for_group() + 1 - self.p2p_taken.get(name, 0)
            index = COLLECTIVES.get(kind)
            tensors = []
            if index is not None:
                value = args[index] if len(args) > index else _input_kwarg(kwargs)
                tensors = _tensors(value)
            root = _root(kind, args, kwargs, pg) if kind in ROOTS else -1
            rec = self.record(self.object_call or kind, name, seq, tensors, STARTED, sys._getframe(2), root=root)
            error = sys.exc_info()[1]
            if error is not None:  # made from an `except` block
                rec = dataclasses.replace(rec, handling=_handling(error))
        except Exception:  # noqa: BLE001 - a note must never break the user's collective
            return None
        self.inflight = rec
        self.sites[(rec.pg, rec.seq)] = (rec.where, rec.function, rec.root, rec.kind, rec.handling)
        if len(self.sites) > 1024:
            for key in list(self.sites)[:512]:
                del self.sites[key]
        self.write_current(rec)
        return rec

    def write_current(self, rec: CollectiveRecord) -> None:
        """The call under way, in the memory-mapped file that outlives an abort."""
        if self.mm is not None:
            data = self.encoder.encode(rec)
            if len(data) <= run_folder.CURRENT_SIZE - run_folder.CURRENT_HEADER:
                self.mm[run_folder.CURRENT_HEADER : run_folder.CURRENT_HEADER + len(data)] = data
                self.mm[:5] = len(data).to_bytes(4, "little") + run_folder.CURRENT_STARTED

    def record(self, kind: str, pg: str, seq: int, tensors: list, state: str, frame, root=-1, peer=-1) -> CollectiveRecord:
        """A call as the hooks note it, at the user's line that made it (`frame` and outward)."""
        where, function = user_where(frame)
        return CollectiveRecord(
            rank=self.rank,
            pg=pg,
            seq=seq,
            kind=kind,
            input_shapes=tuple(tuple(t.shape) for t in tensors),
            input_dtypes=tuple(_dtype(t) for t in tensors),
            state=state,
            where=where,
            function=function,
            time_ns=time.time_ns(),
            peer=peer,
            root=root,
        )

    def mark(self, depth: int = 2, by: str = "") -> None:
        """DDP or backward is about to make collectives of its own: remember the user's
        line. Called twice per training step, so it keeps to the bare minimum (the code
        object and line, formatted when a trace is published). Whatever the default
        group had enqueued before this point has returned: DDP's forward and backward
        wait for their own collectives, so a note here also settles the step before."""
        try:
            frame = _user_frame(sys._getframe(depth))
            if frame is not None:
                self.context.append((time.time_ns(), frame.f_code, line_of(frame), by))
            self.settled()
        except Exception:  # noqa: BLE001
            pass

    def settled(self) -> None:
        """Every collective the default group has enqueued so far has returned."""
        try:
            pg = self.default_group()
            if pg is not self.group:
                self.group = pg
                self.group_name = str(getattr(pg, "group_name", "0") or "0")
                self.group_count = pg._get_sequence_number_for_group
            seq = self.group_count() - self.p2p_taken.get(self.group_name, 0)
            if seq > self.done_upto.get(self.group_name, 0):
                self.done_upto[self.group_name] = seq
        except Exception:  # noqa: BLE001 - no group yet, or it was destroyed
            pass

    # -- point-to-point: a note when posted, the state when its work is waited on ---------------

    def note_p2p(self, kind: str, tensor, args, kwargs, peer_kw: str, group_peer_kw: str):
        """isend/irecv(tensor, peer, group, tag, group_peer) is about to be posted:
        (token, group, its sequence number now), or None if it cannot be noted."""
        try:
            group = args[1] if len(args) > 1 else kwargs.get("group")
            pg = group if group is not None else self.default_group()
            peer = args[0] if args else kwargs.get(peer_kw)
            if peer is None and kwargs.get(group_peer_kw) is not None:
                peer = _global_rank(pg, int(kwargs[group_peer_kw]))
            peer = -1 if peer is None else int(peer)
            name = str(getattr(pg, "group_name", "0") or "0")
            key = (name, kind, peer)
            number = self.p2p_made[key] = self.p2p_made.get(key, 0) + 1
            rec = self.record(kind, name, number, _tensors(tensor), POSTED, sys._getframe(2), peer=peer)
            self.p2p_token += 1
            self.p2p[self.p2p_token] = rec
            self.write_current(dataclasses.replace(rec, state=STARTED))  # gloo aborts a recv of the wrong size
            if len(self.p2p) > P2P_KEPT:
                for token in list(self.p2p)[: P2P_KEPT // 2]:
                    if self.p2p[token].state != STARTED:
                        del self.p2p[token]
                live = set(self.p2p)
                self.works = {w: t for w, t in self.works.items() if not isinstance(t, int) or t in live}
            return self.p2p_token, pg, pg._get_sequence_number_for_group()
        except Exception:  # noqa: BLE001 - a note must never break the user's call
            return None

    def raw_seq(self, group) -> int:
        """The group's sequence number as the backend counts it (send/recv included)."""
        try:
            pg = group if group is not None else self.default_group()
            return int(pg._get_sequence_number_for_group())
        except Exception:  # noqa: BLE001
            return 0

    def took(self, group, numbers: int) -> None:
        """A call took `numbers` of the group's sequence that are no collective numbers."""
        if numbers > 0:
            try:
                pg = group if group is not None else self.default_group()
                name = str(getattr(pg, "group_name", "0") or "0")
                self.p2p_taken[name] = self.p2p_taken.get(name, 0) + numbers
            except Exception:  # noqa: BLE001
                pass

    def pending(self, rec: CollectiveRecord | None, work) -> None:
        """An async collective returned its work: done when the work's wait() returns."""
        if rec is not None and hasattr(work, "wait"):
            if len(self.works) > 4 * P2P_KEPT:  # works dropped without a wait: forget the oldest
                self.works = dict(list(self.works.items())[2 * P2P_KEPT :])
            self.works[id(work)] = rec
        else:
            self.done(rec)

    def posted(self, noted, work) -> None:
        if noted is None:
            return
        token, pg, before = noted
        try:
            rec = self.p2p[token]
            taken = pg._get_sequence_number_for_group() - before
            if taken > 0:
                self.p2p_taken[rec.pg] = self.p2p_taken.get(rec.pg, 0) + taken
            if work is not None:
                self.works[id(work)] = token
        except Exception:  # noqa: BLE001
            pass

    def note_group_call(self, kind: str, args, kwargs) -> int | None:
        """new_group (every rank of the world must make it, in the same order) or
        destroy_process_group is about to be made."""
        try:
            shape: tuple[tuple[int, ...], ...] = ()
            if kind == NEW_GROUP:
                ranks = args[0] if args else kwargs.get("ranks")
                shape = (tuple(int(r) for r in ranks),) if ranks is not None else ()  # the ranks, shown as its "shape"
                pg = "0"
            else:
                group = args[0] if args else kwargs.get("group")
                pg = str(getattr(group, "group_name", "0") or "0") if group is not None else "0"
            key = (pg, kind, -1)
            number = self.p2p_made[key] = self.p2p_made.get(key, 0) + 1
            rec = dataclasses.replace(self.record(kind, pg, number, [], STARTED, sys._getframe(2)), input_shapes=shape)
            self.p2p_token += 1
            self.p2p[self.p2p_token] = rec
            return self.p2p_token
        except Exception:  # noqa: BLE001 - a note must never break the user's call
            return None

    def p2p_state(self, token: int | None, state: str) -> None:
        rec = self.p2p.get(token) if token is not None else None
        if token is not None and rec is not None:
            self.p2p[token] = dataclasses.replace(rec, state=state)
            self.calls += 1

    def attribute(self, rec: CollectiveRecord) -> CollectiveRecord:
        """The user's line of a recorded collective: the hook's note of that very
        call, else the DDP/backward line noted last before it was made."""
        if rec.where:
            return rec
        site = self.sites.get((rec.pg, rec.seq))
        if site is None:
            i = bisect.bisect_right(self.context, rec.time_ns, key=_time_of)
            if i == 0:
                return rec
            _, code, line, by = self.context[i - 1]
            site = (f"{code.co_filename}:{line}", code.co_name + by, -1, rec.kind, "")
        return dataclasses.replace(rec, where=site[0], function=site[1], root=site[2], kind=site[3], handling=site[4])

    def settle(self, rec: CollectiveRecord) -> CollectiveRecord:
        """The recorder marks a gloo collective completed a moment after wait()
        returned; a call the hooks saw return is completed now."""
        if rec.started and rec.seq <= self.done_upto.get(rec.pg, 0):
            return dataclasses.replace(rec, state=COMPLETED)
        return rec

    def done(self, rec: CollectiveRecord | None) -> None:
        """The hooked call returned. Its record stays as noted (started): `settle`
        marks it completed when it is read, which is rarely."""
        if rec is not None:
            self.inflight = None
            self.calls += 1
            if rec.seq > self.done_upto.get(rec.pg, 0):
                self.done_upto[rec.pg] = rec.seq
            if self.mm is not None:
                self.mm[4:5] = run_folder.CURRENT_COMPLETED
            self.history.append(rec)

    # -- publishing --------------------------------------------------------------------------

    def records(self, newest: int | None = None) -> tuple[list[CollectiveRecord], bool]:
        """This rank's collectives: the recorder's whole buffer, or its `newest` entries."""
        try:
            raw = _dump_fr_trace(True, False, False)  # no stacks: see the module's docstring
            dump = pickle.loads(raw)  # noqa: S301 - torch's own dump of this process
            if newest is not None and len(dump.get("entries") or ()) > newest:
                dump["entries"] = dump["entries"][-newest:]  # the buffer lists oldest first
            records = [
                self.settle(self.attribute(r)) for r in records_from_fr_dump(dump, self.rank, self.p2p_taken)
            ]
            if records:
                return self.with_p2p(records), True
        except Exception:  # noqa: BLE001 - no recorder in this build / no group yet
            pass
        inflight = [self.inflight] if self.inflight is not None else []
        return self.with_p2p([*map(self.settle, self.history), *inflight]), False

    def with_p2p(self, records: list[CollectiveRecord]) -> list[CollectiveRecord]:
        if not self.p2p:
            return records
        return sorted([*records, *self.p2p.values()], key=lambda r: r.time_ns)

    def publish(self, final: bool = False) -> None:
        if os.getpid() != self.pid:
            return  # a forked DataLoader worker: not this rank
        with self.lock:
            # The recorder's counters say cheaply whether anything happened; without
            # the recorder, the hooks' own notes do.
            status = (_group_status(), self.calls, self.inflight, self.p2p_token)
            moving = status != self.last_status
            self.last_status = status
            now = time.monotonic()
            # While collectives keep completing, the newest few are what lines the ranks
            # up, and they need not be written every look: a training loop turns the whole
            # buffer over between two looks, and reading and writing all of it every
            # 0.5 s cost the rank ~1.5 % of its core. Once the rank stops moving (a hang,
            # a wait, its end), all of it is written at the next look.
            if final:
                window = None
            elif moving:
                self.behind = True
                if now - self.window_at < PUBLISH_MOVING_S:
                    return
                window, self.window_at = WINDOW, now
            elif self.behind:
                window = None
            else:
                return  # nothing enqueued or completed since the last full publication
            self.behind = window is not None
            records, fr = self.records(window)
            key = (tuple((r.pg, r.seq, r.state) for r in records[-4:]), len(records), self.exit)
            if key == self.last_key and not final:
                return
            self.last_key = key
            text = run_folder.encode_trace(
                run_folder.PublishedTrace(self.rank, self.pid, fr, time.time(), tuple(records), self.exit)
            )
            try:
                run_folder.write_atomic(run_folder.trace_path(self.run_dir, self.rank), text)
            except OSError:
                pass  # the run folder is gone: the supervisor is done with us
            if self.on_publish is not None:
                self.on_publish(text)

    def stacks(self) -> str:
        names = {t.ident: t.name for t in threading.enumerate()}
        out = []
        for ident, frame in sys._current_frames().items():
            name = names.get(ident, str(ident))
            if name == THREAD_NAME:
                continue
            entries = [e for e in traceback.extract_stack(frame) if not _is_own(e.filename)]
            out.append(f"Thread {name} (most recent call last):\n")
            out += traceback.format_list(entries)
        return "".join(out)

    def answer_stack_request(self) -> None:
        request = run_folder.request_path(self.run_dir, self.rank)
        if not os.path.exists(request):
            return
        try:
            run_folder.write_atomic(run_folder.stacks_path(self.run_dir, self.rank), self.stacks())
            os.remove(request)
        except OSError:
            pass
        self.publish(final=True)

    def loop(self) -> None:
        while not self.stopping.wait(PUBLISH_S):
            try:
                self.publish()
                self.answer_stack_request()
                if self.on_tick is not None:
                    self.on_tick()
            except Exception:  # noqa: BLE001 - the watcher must outlive any one bad read
                pass

    # -- how the rank ends --------------------------------------------------------------------

    def ended(self, info: run_folder.RankExit) -> None:
        if os.getpid() != self.pid:
            return
        if self.exit is None:
            self.exit = info
        if info.how == "exit":  # the script's end: its main thread waits in no collective
            self.settled()
        self.publish(final=True)


def _dump_fr_trace(*args):
    """torch's Flight Recorder dump, looked up once (an attribute lookup on `torch`
    can start a lazy import of torch._dynamo that takes seconds)."""
    global _dump_fr_trace_fn
    if _dump_fr_trace_fn is None:
        # private, absent from torch's stubs: the Flight Recorder's in-process dump
        from torch._C._distributed_c10d import _dump_fr_trace as fn  # type: ignore[attr-defined]  # private, not in torch's stubs

        _dump_fr_trace_fn = fn
    return _dump_fr_trace_fn(*args)


_dump_fr_trace_fn = None


def _group_status():
    """The recorder's per-group counters (enqueued / completed): a few microseconds to read."""
    try:
        return pickle.loads(_dump_fr_trace(False, False, True)).get("pg_status")  # noqa: S301
    except Exception:  # noqa: BLE001
        return None


def _is_own(filename: str) -> bool:
    from gpudoctor.core.frames import is_own

    return is_own(filename) or f"{os.sep}gpudoctor{os.sep}runtime{os.sep}" in filename


_WORKER_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)', re.M)


def worker_origin(text: str) -> tuple[str, str, str] | None:
    """(file:line, type, message) of the exception a DataLoader worker raised, from the
    text torch re-raises it with in the rank ("Caught KeyError in DataLoader worker
    process 0. Original Traceback (most recent call last): ..."); None for any other."""
    head, found, original = text.partition("Original Traceback (most recent call last):")
    if not found or "DataLoader worker" not in head:
        return None
    frames = [f"{m['file']}:{m['line']}" for m in _WORKER_FRAME.finditer(original) if not is_library_frame(m["file"])]
    last = [line for line in original.strip().splitlines() if line.strip()][-1:] or [""]
    name, _, message = last[0].partition(": ")
    return (frames[-1] if frames else ""), name.strip() or "Exception", message.strip()[:500]


def _handling(error: BaseException) -> str:
    """`RuntimeError: bad batch at train.py:21`: the error an `except` block is handling."""
    text = str(error).strip().splitlines()[0][:200] if str(error).strip() else ""
    where = _exception_where(error.__traceback__)
    return f"{type(error).__name__}{': ' + text if text else ''}" + (f" (raised at {short_where(where)})" if where else "")


def exited(code: int, tb) -> None:
    """sys.exit(code) with a non-zero code ended the script (runtime/runner.py): where."""
    if _tracker is not None:
        _tracker.ended(run_folder.RankExit("sys.exit", where=_exception_where(tb), code=code))


def _exception_where(tb) -> str:
    where = ""
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if not is_library_frame(name):
            where = f"{name}:{tb.tb_lineno}"
        tb = tb.tb_next
    return where


_tracker: Tracker | None = None


HANG_TIMEOUT_ENV = run_folder.RUN_HANG_TIMEOUT_ENV  # `run --hang-timeout`, for ranks under torchrun
DEFAULT_HANG_TIMEOUT_S = 600.0  # here, where a rank reads it, so that it need not import the watch


def joined_rank() -> tuple[int, int] | None:
    """(rank, world size) of a rank that torchrun or srun started, with peers; else None."""
    from gpudoctor.launch.rank import join_context

    ctx = join_context()
    if ctx is None or ctx.joined_by == "gpudoctor" or ctx.world_size < 2:
        return None
    return ctx.rank, ctx.world_size


def prepare_environment() -> None:
    """Before torch is imported: ask for the Flight Recorder (unless the user chose a size)."""
    if os.environ.get(run_folder.RUN_COLLECTIVES_ENV) != "0":
        os.environ.setdefault(FR_BUFFER_ENV, FR_BUFFER)


def install(run_dir: str, rank: int, fatal_file: bool = True) -> Tracker | None:
    """Hooks and the publishing thread, once per process. Needs torch imported."""
    global _tracker
    if _tracker is not None:
        return _tracker
    tracker = _tracker = Tracker(run_dir, rank)
    try:
        _dump_fr_trace(False, False, True)  # resolve it now, in the main thread
    except Exception:  # noqa: BLE001 - a torch without the recorder: the hooks' own history serves
        pass
    _wrap_collectives(tracker)
    _wrap_p2p(tracker)
    _wrap_group_calls(tracker)
    _wrap_object_calls(tracker)
    _mark_ddp(tracker)
    _hook_exits(tracker)
    if fatal_file:  # else the caller keeps faulthandler writing to stderr
        try:
            fatal = open(run_folder.fatal_path(run_dir, rank), "w")  # noqa: SIM115 - open for the process's life
            faulthandler.enable(file=fatal, all_threads=True)
            tracker.fatal = fatal
        except OSError:
            pass
    thread = threading.Thread(target=tracker.loop, name=THREAD_NAME, daemon=True)
    thread.start()
    # Registered after _hook_exits' handler, so it runs first (atexit is last in, first out).
    atexit.register(stop_at_exit, tracker.stopping, thread)
    return tracker


STOP_JOIN_S = 2.0  # how long an ending process waits for one of its threads to leave a store call


def stop_at_exit(stopping: threading.Event, thread: threading.Thread) -> None:
    """End a daemon loop before the interpreter tears down: a thread still inside a
    torch store call while the process exits can take the process down with
    "terminate called without an active exception" (SIGABRT) after a clean run."""
    stopping.set()
    if thread is not threading.current_thread():
        thread.join(STOP_JOIN_S)


def _wrap_collectives(tracker: Tracker) -> None:
    from torch.distributed import ProcessGroup, distributed_c10d

    for kind in COLLECTIVES:
        original = getattr(distributed_c10d, kind, None)
        if original is None or getattr(original, "_gpudoctor", False):
            continue

        def make(kind=kind, original=original):
            @functools.wraps(original)
            def collective(*args, **kwargs):
                group = kwargs.get("group")
                if group is None:
                    for arg in args:
                        if isinstance(arg, ProcessGroup):
                            group = arg
                            break
                rec = tracker.note(kind, args, kwargs, group)
                if kind == "monitored_barrier":
                    before = tracker.raw_seq(group)
                    result = original(*args, **kwargs)
                    # Made of send/recv in C++ (rank 0 with every other rank): what they took of
                    # the group's sequence beyond the two numbers the recorder gives it on every rank.
                    tracker.took(group, tracker.raw_seq(group) - before - MONITORED_BARRIER_NUMBERS)
                else:
                    result = original(*args, **kwargs)
                if result is None:
                    tracker.done(rec)
                else:  # async_op=True: it is under way until its work is waited on
                    tracker.pending(rec, result)
                return result

            return collective

        _replace(kind, original, make())


def _replace(name: str, original, wrapped) -> None:
    """torch.distributed's function `name` becomes `wrapped`, where the user looks it up
    (torch.distributed) and where torch's own functions do (distributed_c10d)."""
    import torch.distributed as dist
    from torch.distributed import distributed_c10d

    wrapped._gpudoctor = True
    setattr(distributed_c10d, name, wrapped)
    if getattr(dist, name, None) is original:
        setattr(dist, name, wrapped)


def _wrap_p2p(tracker: Tracker) -> None:
    """isend/irecv (which send, recv and batch_isend_irecv call) are noted with their
    peer; a work's wait() says when the rank is blocked on one."""
    from torch.distributed import distributed_c10d

    for name, (kind, peer_kw, group_peer_kw) in P2P_CALLS.items():
        original = getattr(distributed_c10d, name, None)
        if original is None or getattr(original, "_gpudoctor", False):
            continue

        def make(kind=kind, original=original, peer_kw=peer_kw, group_peer_kw=group_peer_kw):
            @functools.wraps(original)
            def p2p(tensor, *args, **kwargs):
                noted = tracker.note_p2p(kind, tensor, args, kwargs, peer_kw, group_peer_kw)
                work = original(tensor, *args, **kwargs)
                tracker.posted(noted, work)
                return work

            return p2p

        _replace(name, original, make())

    work_type = getattr(distributed_c10d, "Work", None)
    original_wait = getattr(work_type, "wait", None)
    if original_wait is None or getattr(original_wait, "_gpudoctor", False):
        return

    @functools.wraps(original_wait)
    def wait(self, *args, **kwargs):
        token = tracker.works.pop(id(self), None) if tracker.works else None
        if token is None:
            return original_wait(self, *args, **kwargs)
        if isinstance(token, CollectiveRecord):  # an async collective: noted as under way already
            result = original_wait(self, *args, **kwargs)
            tracker.done(token)
            return result
        tracker.p2p_state(token, STARTED)
        result = original_wait(self, *args, **kwargs)
        tracker.p2p_state(token, COMPLETED)
        return result

    wait._gpudoctor = True  # type: ignore[attr-defined]  # our mark on the wrapper: wrapped once
    try:
        work_type.wait = wait  # type: ignore[union-attr]  # torch's Work class, wrapped at run time
    except (AttributeError, TypeError):  # a Work type that cannot be patched: sends are noted, not waited
        pass


OBJECT_CALLS = ("all_gather_object", "broadcast_object_list", "gather_object", "scatter_object_list")


def _wrap_object_calls(tracker: Tracker) -> None:
    """The object collectives pickle and make tensor collectives of their own: those are
    recorded under the name the user called (all_gather_object, not all_gather)."""
    from torch.distributed import distributed_c10d

    for name in OBJECT_CALLS:
        original = getattr(distributed_c10d, name, None)
        if original is None or getattr(original, "_gpudoctor", False):
            continue

        def make(name=name, original=original):
            @functools.wraps(original)
            def object_call(*args, **kwargs):
                outer, tracker.object_call = tracker.object_call, tracker.object_call or name
                try:
                    return original(*args, **kwargs)
                finally:
                    tracker.object_call = outer

            return object_call

        _replace(name, original, make())


def _wrap_group_calls(tracker: Tracker) -> None:
    """new_group (new_subgroups makes its groups with it) and destroy_process_group:
    a group made on some ranks only, or torn down while peers still use it."""
    from torch.distributed import distributed_c10d

    for name in (NEW_GROUP, DESTROY):
        original = getattr(distributed_c10d, name, None)
        if original is None or getattr(original, "_gpudoctor", False):
            continue

        def make(name=name, original=original):
            @functools.wraps(original)
            def group_call(*args, **kwargs):
                token = tracker.note_group_call(name, args, kwargs)
                try:
                    return original(*args, **kwargs)
                finally:  # made, or failed: either way the rank is no longer blocked in it
                    tracker.p2p_state(token, COMPLETED)

            return group_call

        _replace(name, original, make())


def _mark_ddp(tracker: Tracker) -> None:
    """DDP's own collectives (parameter checks at construction, bucket all-reduces in
    backward) are made from C++: note the user's line that leads to them."""
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP

    original_init, original_forward, original_backward = DDP.__init__, DDP.forward, torch.autograd.backward

    @functools.wraps(original_init)
    def ddp_init(self, *args, **kwargs):
        tracker.mark()
        result = original_init(self, *args, **kwargs)
        tracker.settled()
        return result

    # Forward and backward note the user's line before; nothing after: the next
    # note settles what they made (Tracker.mark), and so does the rank's end.
    @functools.wraps(original_forward)
    def ddp_forward(self, *args, **kwargs):
        tracker.mark(by=DDP_FORWARD)
        return original_forward(self, *args, **kwargs)

    @functools.wraps(original_backward)
    def backward(*args, **kwargs):
        tracker.mark()
        return original_backward(*args, **kwargs)

    DDP.__init__ = ddp_init  # type: ignore[method-assign]  # torch's own method, wrapped at run time
    DDP.forward = ddp_forward  # type: ignore[method-assign]  # the same
    torch.autograd.backward = backward


def _hook_exits(tracker: Tracker) -> None:
    original_hook = sys.excepthook

    def excepthook(exc_type, exc, tb):
        try:
            message = str(exc).strip().splitlines()[0][:500] if str(exc).strip() else ""
            where, name = _exception_where(tb), exc_type.__name__
            origin = worker_origin(str(exc))
            if origin is not None:  # re-raised from a DataLoader worker: its own frame and message
                where, name, message = origin
            tracker.ended(run_folder.RankExit("exception", name, message, where, 1))
        except Exception:  # noqa: BLE001
            pass
        original_hook(exc_type, exc, tb)

    sys.excepthook = excepthook
    original_exit = os._exit

    def _exit(code):
        try:
            where, _ = user_where(sys._getframe(1))
            tracker.ended(run_folder.RankExit("os._exit", where=where, code=int(code)))
        except Exception:  # noqa: BLE001
            pass
        original_exit(code)

    os._exit = _exit
    atexit.register(lambda: tracker.ended(run_folder.RankExit("exit", group_alive=_group_alive())))


def _group_alive() -> bool | None:
    """Whether the script ended with its default process group never destroyed: the
    threads of such a group can abort the process while the interpreter tears down."""
    try:
        import torch.distributed as dist

        return bool(dist.is_available() and dist.is_initialized())
    except Exception:  # noqa: BLE001 - an ending process: a fact, never an error
        return None


def install_rank(ctx) -> None:
    """A supervised rank's set-up (launch/child.py calls it before torch is imported):
    this rank's collectives, published for the supervisor's watch."""
    if os.environ.get(run_folder.RUN_COLLECTIVES_ENV) == "0":
        return
    prepare_environment()
    import torch  # noqa: F401 - every rank function uses it; the hooks need it

    install(ctx.run_dir, ctx.rank, fatal_file=False)
