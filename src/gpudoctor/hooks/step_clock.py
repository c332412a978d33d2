"""The rank side of the straggler doctor: where each training step's time goes.

Per step, this rank's time loading data (the DataLoader iterator's `__next__`),
in DDP's forward, in backward, in the optimizer step, waiting inside collectives,
and the rest ("other": the user's own Python between them). A step ends at each
optimizer step; without an optimizer, at each backward; without either, at each
collective call.

Waiting inside collectives is what lines the ranks up (knowledge/stragglers.py):
- an explicit torch.distributed collective: the time in the call;
- DDP's gradient all-reduce: it is made from C++ during backward, and the
  backward returns only once it is done. DDP buckets the parameters in reverse
  order, so the first parameter's gradient is, as a rule, the last computed: a
  hook on it marks the end of the backward's own work, and the time from there to
  the backward's return is the wait;
- DDP's buffer broadcast in forward (`_sync_buffers`).

Cheap by design: a few `perf_counter_ns` calls and one tuple per step in the
training loop; no I/O. A background thread publishes the newest records
(`RankSteps`) when they changed, every PUBLISH_S: to the run folder under
`gpudoctor run --nproc`, to the job's store under torchrun. Times are measured
on this rank's own clock, which is never compared with another node's.
"""

from __future__ import annotations

import atexit
import dataclasses
import functools
import json
import os
import socket
import threading
import time
from collections import deque
from typing import Any

from gpudoctor.core.user_file import RUN_JSON_CAP, read_capped, read_json
from gpudoctor.launch import rundir
from gpudoctor.knowledge.stragglers import COLLECTIVE, PHASES, RankSteps, StepVerdict

DATA, FORWARD, BACKWARD, OPTIMIZER, OTHER = (PHASES.index(p) for p in ("data", "forward", "backward", "optimizer", "other"))
# What ends a step, weakest first: the strongest kind seen so far is the one that does.
BY_COLLECTIVE, BY_BACKWARD, BY_OPTIMIZER = 1, 2, 3
DELIMITERS = {BY_COLLECTIVE: "collective", BY_BACKWARD: "backward", BY_OPTIMIZER: "optimizer"}
RECENT = 128  # records published: enough for every rank's windows to overlap
SLICES = 40_000  # trace slices kept per rank with --trace (the newest)
PUBLISH_S = 1.0
OFF_ENV = rundir.RUN_STEPS_ENV  # "0": no accounting (benchmarks compare with it off)
TRACE_ENV = rundir.RUN_TRACE_ENV  # `run --trace FILE`: keep slices for the trace
THREAD_NAME = "gpudoctor-steps"

_ns = time.perf_counter_ns  # CLOCK_MONOTONIC on Linux: one clock for every process of a node


steps_path = rundir.steps_path
timeline_path = rundir.timeline_path


class StepClock:
    def __init__(self, rank: int, trace: bool = False):
        self.rank = rank
        self.node = socket.gethostname()
        self.pid = os.getpid()
        self.acc = [0] * len(PHASES)  # ns per phase in the step under way
        self.inner = 0  # ns of timed regions that ended so far (nesting: a region's own time excludes them)
        self.start = _ns()
        self.index = 0
        self.delimiter = 0
        self.recent: deque[tuple[int, int, int, list[int]]] = deque(maxlen=RECENT)
        self.slices: deque[tuple[int, int, int, str]] | None = deque(maxlen=SLICES) if trace else None
        self.callback_ns = 0  # when the backward's own work was done (its last gradient)
        self.gradient_hooks: list[Any] = []  # their handles (benchmarks/step_clock_cost.py removes them)
        self.armed: set[int] = set()  # id() of the modules whose last gradient is marked
        self.opt_start: list[tuple[int, int]] = []  # optimizer steps under way: (start ns, inner)
        self.published = -1

    # -- the hot path ------------------------------------------------------------------------

    def leave(self, phase: int, t0: int, i0: int, label: str = "") -> int:
        """A region of `phase` that began at t0 (self.inner was i0 then) ends now."""
        now = _ns()
        took = now - t0
        self.acc[phase] += took - (self.inner - i0)
        self.inner = i0 + took
        if self.slices is not None:
            self.slices.append((phase, t0, took, label))
        return now

    def boundary(self, kind: int, now: int) -> None:
        if kind > self.delimiter:
            # A stronger delimiter shows up (the first optimizer step after the first
            # backward): the step the weaker one just ended is part of this one.
            if self.delimiter and self.recent:
                index, start, _, acc = self.recent.pop()
                self.acc = [a + b for a, b in zip(acc, self.acc)]
                self.start, self.index = start, index
            self.delimiter = kind
        if kind != self.delimiter:
            return
        # Kept raw (ns, the phases' list itself): the publisher turns it into a record.
        self.recent.append((self.index, self.start, now - self.start, self.acc))
        self.acc = [0, 0, 0, 0, 0, 0]
        self.start = now
        self.index += 1

    # -- publishing --------------------------------------------------------------------------

    def summary(self, final: bool = False) -> RankSteps:
        for _ in range(5):
            try:
                raw = tuple(self.recent)  # the main thread may append meanwhile
                break
            except RuntimeError:
                continue
        else:
            raw = ()
        recent = tuple(_record(*r) for r in raw)
        return RankSteps(self.rank, self.node, self.index, DELIMITERS.get(self.delimiter, ""), recent, final)

    def timeline(self) -> list[tuple[int, int, int, str]]:
        for _ in range(5):
            try:
                return list(self.slices or ())
            except RuntimeError:
                continue
        return []


def _record(index: int, start: int, total: int, acc: list[int]) -> tuple[int, ...]:
    """A published record (knowledge/stragglers.py): µs, "other" the step's rest."""
    phases = [v // 1000 for v in acc]
    phases[OTHER] = (total - (sum(acc) - acc[OTHER])) // 1000
    return (index, start // 1000, total // 1000, *phases)


_clock: StepClock | None = None


def clock() -> StepClock | None:
    return _clock


def install(rank: int, trace: bool = False) -> StepClock:
    """The hooks, once per process. Needs torch imported."""
    global _clock
    if _clock is not None:
        return _clock
    c = _clock = StepClock(rank, trace)
    _hook_data(c)
    _hook_ddp(c)
    _hook_backward(c)
    _hook_optimizer(c)
    _hook_collectives(c)
    return c


def _hook_data(c: StepClock) -> None:
    from torch.utils.data import dataloader

    cls = dataloader._BaseDataLoaderIter
    original = cls.__next__

    @functools.wraps(original)
    def __next__(self):
        t0, i0 = _ns(), c.inner
        try:
            return original(self)
        finally:
            c.leave(DATA, t0, i0)

    cls.__next__ = __next__  # type: ignore[method-assign]  # the hook wraps torch's own method at run time


def _hook_ddp(c: StepClock) -> None:
    from torch.nn.parallel import DistributedDataParallel as DDP

    original_init, original_forward = DDP.__init__, DDP.forward

    @functools.wraps(original_init)
    def ddp_init(self, *args, **kwargs):
        result = original_init(self, *args, **kwargs)
        try:
            arm_model(c, self.module)
        except Exception:  # noqa: BLE001 - timing must never break the user's model
            pass
        return result

    @functools.wraps(original_forward)
    def ddp_forward(self, *args, **kwargs):
        t0, i0 = _ns(), c.inner
        try:
            return original_forward(self, *args, **kwargs)
        finally:
            c.leave(FORWARD, t0, i0)

    DDP.__init__ = ddp_init  # type: ignore[method-assign]  # the hook wraps torch's own method at run time
    DDP.forward = ddp_forward  # type: ignore[method-assign]  # the same
    original_sync = getattr(DDP, "_sync_buffers", None)
    if original_sync is not None:

        @functools.wraps(original_sync)
        def sync_buffers(self, *args, **kwargs):
            t0, i0 = _ns(), c.inner
            try:
                return original_sync(self, *args, **kwargs)
            finally:
                c.leave(COLLECTIVE, t0, i0, "DDP buffer broadcast")

        DDP._sync_buffers = sync_buffers  # type: ignore[method-assign]  # a private torch method, wrapped at run time


def _hook_backward(c: StepClock) -> None:
    import torch

    original = torch.autograd.backward

    @functools.wraps(original)
    def backward(*args, **kwargs):
        t0, i0 = _ns(), c.inner
        c.callback_ns = 0
        try:
            return original(*args, **kwargs)
        finally:
            now = c.leave(BACKWARD, t0, i0)
            done = c.callback_ns
            if done > t0:
                # Up to the last gradient the backward's own work; after it, the wait
                # for DDP's all-reduce of the last bucket (and of any still in flight).
                wait = now - done
                c.acc[BACKWARD] -= wait
                c.acc[COLLECTIVE] += wait
                if c.slices is not None:
                    c.slices[-1] = (BACKWARD, t0, done - t0, "")
                    c.slices.append((COLLECTIVE, done, wait, "DDP gradient all-reduce"))
            c.boundary(BY_BACKWARD, now)

    torch.autograd.backward = backward


def arm_model(c: StepClock, module) -> None:
    """A DDP model built before the clock was installed (gpudoctor.watch())."""
    if id(module) not in c.armed:
        c.armed.add(id(module))
        _mark_last_gradient(c, module)


def since(steps: RankSteps, first: int) -> RankSteps:
    """The records of steps numbered `first` and later."""

    return dataclasses.replace(steps, recent=tuple(r for r in steps.recent if r[0] >= first))


def _mark_last_gradient(c: StepClock, module) -> None:
    """DDP buckets the parameters in reverse order, so the first parameter's gradient
    is, as a rule, the last the backward computes: a hook on it (registered once, one
    call per step) says when the backward's own work is done. (A hook queued per
    backward on the loss's node, as an autograd final callback, was exact but cost
    ~25 us a step.)"""
    for p in module.parameters():
        if p.requires_grad:

            def mark(param) -> None:
                c.callback_ns = _ns()

            c.gradient_hooks.append(p.register_post_accumulate_grad_hook(mark))
            return


def _hook_optimizer(c: StepClock) -> None:
    from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

    def pre(optimizer, args, kwargs):
        c.opt_start.append((_ns(), c.inner))

    def post(optimizer, args, kwargs):
        if c.opt_start:
            t0, i0 = c.opt_start.pop()
            c.boundary(BY_OPTIMIZER, c.leave(OPTIMIZER, t0, i0))

    register_optimizer_step_pre_hook(pre)
    register_optimizer_step_post_hook(post)


def _hook_collectives(c: StepClock) -> None:
    import torch.distributed as dist
    from torch.distributed import distributed_c10d

    from gpudoctor.hang.tracer import COLLECTIVES

    for kind in COLLECTIVES:
        original = getattr(distributed_c10d, kind, None)
        if original is None or getattr(original, "_gpudoctor_clock", False):
            continue

        def make(kind=kind, original=original):
            @functools.wraps(original)
            def collective(*args, **kwargs):
                t0, i0 = _ns(), c.inner
                try:
                    return original(*args, **kwargs)
                finally:
                    c.boundary(BY_COLLECTIVE, c.leave(COLLECTIVE, t0, i0, kind))

            collective._gpudoctor_clock = True  # type: ignore[attr-defined]  # our mark on torch's function: wrapped once
            return collective

        wrapped = make()
        setattr(distributed_c10d, kind, wrapped)
        if getattr(dist, kind, None) is original:
            setattr(dist, kind, wrapped)


# -- publishing -------------------------------------------------------------------------------


def encode_steps(steps: RankSteps) -> str:
    from gpudoctor.core.codec import encode

    return json.dumps(encode(steps))


def decode_steps(text: str, rank: int) -> RankSteps | None:
    from gpudoctor.core.codec import SnapshotError, decode

    try:
        return decode(RankSteps, json.loads(text), f"rank {rank}'s steps")
    except (ValueError, SnapshotError, RecursionError):
        return None


def read_steps(run_dir: str, nproc: int) -> list[RankSteps]:
    """What the ranks of `run --nproc` published in the run folder."""
    out = []
    for rank in range(nproc):
        try:
            steps = decode_steps(read_capped(steps_path(run_dir, rank), RUN_JSON_CAP).decode("utf-8", "replace"), rank)
        except (OSError, ValueError, RecursionError):  # FileRefused is a ValueError
            continue
        if steps is not None:
            out.append(steps)
    return out


def read_timelines(run_dir: str, nproc: int) -> dict[int, list[list[Any]]]:
    out = {}
    for rank in range(nproc):
        try:
            slices = read_json(timeline_path(run_dir, rank))
        except (OSError, ValueError):  # FileRefused is a ValueError
            continue
        if isinstance(slices, list):
            out[rank] = slices
    return out


class Publisher:
    """Writes the clock's summary when it changed: to a run folder, or through `send`."""

    def __init__(self, c: StepClock, run_dir: str, send=None):
        self.clock = c
        self.run_dir = run_dir
        self.send = send  # joined mode: the job's store
        self.lock = threading.Lock()

    def publish(self, final: bool = False) -> None:
        c = self.clock
        if os.getpid() != c.pid:
            return  # a forked DataLoader worker: not this rank
        with self.lock:
            if c.index == c.published and not final:
                return
            c.published = c.index
            text = encode_steps(c.summary(final))
            if self.send is not None:
                self.send(text, final)
            from gpudoctor.launch.rundir import write_atomic

            try:
                write_atomic(steps_path(self.run_dir, c.rank), text)
                if final and c.slices is not None:
                    write_atomic(timeline_path(self.run_dir, c.rank), json.dumps(c.timeline()))
            except OSError:
                pass  # the run folder is gone: the supervisor is done with us

    def loop(self, stopping: threading.Event) -> None:
        while not stopping.wait(PUBLISH_S):
            try:
                self.publish()
            except Exception:  # noqa: BLE001 - the publisher must outlive any one bad write
                pass


def start_publishing(c: StepClock, run_dir: str, send=None) -> Publisher:
    from gpudoctor.hang.tracer import stop_at_exit

    publisher = Publisher(c, run_dir, send)
    stopping = threading.Event()
    thread = threading.Thread(target=publisher.loop, args=(stopping,), name=THREAD_NAME, daemon=True)
    thread.start()
    atexit.register(lambda: publisher.publish(final=True))
    atexit.register(stop_at_exit, stopping, thread)  # runs first: the loop ends before the final publication
    return publisher


def install_for_run() -> StepClock | None:
    """Under `gpudoctor run`: a rank of `--nproc` publishes to its run folder, a rank of
    torchrun / srun to the job's store (and its node's run folder); a lone process
    accounts for nothing."""
    from gpudoctor.hang.tracer import joined_rank
    from gpudoctor.hooks.session import ENV_SUPERVISED, RANK, session

    trace = bool(os.environ.get(TRACE_ENV))
    run_dir = os.environ.get(rundir.RUN_DIR_ENV)
    rank = os.environ.get("RANK", "")
    if session.role == RANK and os.environ.get(ENV_SUPERVISED) and run_dir and rank.isdigit():
        c = install(int(rank), trace)
        start_publishing(c, run_dir)
        return c
    joined = joined_rank() if session.role != RANK else None
    if joined is None:
        return install(0, True) if trace else None  # a lone process: only for its trace
    from gpudoctor.hang import joined as joined_watch

    c = install(joined[0], trace)
    start_publishing(c, joined_watch.joined_run_dir(), StoreSender(joined[0]).send)
    return c


class StoreSender:
    """A joined rank's summary, to the job's store (once torch.distributed is up)."""

    def __init__(self, rank: int):
        from gpudoctor.hang.joined import JobStore

        self.rank = rank
        self.job = JobStore()
        self.connected = False

    def send(self, text: str, final: bool) -> None:
        from gpudoctor.hang.joined import _ready

        # At the end the user may have destroyed the group; the store (torchrun's
        # agent's) is still there, but connect only to a store seen up before.
        if not (self.connected or _ready()):
            return
        try:
            self.job.connect().set(self.job.key("steps", self.rank), text)
            self.connected = True
        except Exception:  # noqa: BLE001 - the job's store went away: the job is ending
            pass


def gather_joined(world: int, own: RankSteps, wait_s: float = 3.0) -> list[RankSteps]:
    """Every rank's summary from the job's store (this rank's own as it is now),
    waiting up to `wait_s` for the others' last one (published as they end: a fast
    loop's periodic summaries, a second apart, may share no step with this one)."""
    from gpudoctor.hang.joined import JobStore

    job = JobStore()
    found: dict[int, RankSteps] = {own.rank: own}
    latest: dict[int, RankSteps] = {}
    deadline = time.monotonic() + wait_s
    while True:
        for rank in range(world):
            if rank in found:
                continue
            try:
                text = job.get(job.key("steps", rank))
            except Exception:  # noqa: BLE001 - no store: this rank's own figures only
                return list(found.values())
            steps = decode_steps(text, rank) if text else None
            if steps is not None:
                latest[rank] = steps
                if steps.final:
                    found[rank] = steps
        if len(found) == world or time.monotonic() > deadline:
            return [found.get(r) or latest[r] for r in sorted({*found, *latest})]
        time.sleep(0.2)


def joined_verdict() -> StepVerdict | None:
    """Rank 0 of a joined job, at its end: every rank's accounting and the verdict
    (None elsewhere, or with no steps)."""
    from gpudoctor.knowledge.stragglers import analyze_steps
    from gpudoctor.hang.tracer import joined_rank

    joined = joined_rank()
    if _clock is None or joined is None or joined[0] != 0 or _clock.index == 0:
        return None
    return analyze_steps(gather_joined(joined[1], _clock.summary(final=True)))


def write_trace(path: str, timelines: dict[int, list], nodes: dict[int, str] | None = None) -> str | None:
    """`run --trace FILE`: the ranks' slices as a Chrome trace; a one-line problem instead of raising."""
    from gpudoctor.render.chrome_trace import chrome_trace
    from gpudoctor.hooks.trace_file import write_private

    return write_private(path, chrome_trace(timelines, PHASES, nodes))


def write_own_trace() -> tuple[str, bool] | None:
    """A process that is not a rank of `--nproc` (a lone script, a rank of torchrun)
    writes its own trace: FILE, or FILE.rank<N>.json under torchrun. (The line to say,
    whether the trace was written); None when there is no trace to write."""
    from gpudoctor.hang.tracer import joined_rank
    from gpudoctor.hooks.report import rank_json_path

    path = os.environ.get(TRACE_ENV)
    if not path or _clock is None or _clock.slices is None:
        return None
    joined = joined_rank()
    if joined is not None:
        path = rank_json_path(path, joined[0], joined[1])
    problem = write_trace(path, {_clock.rank: _clock.timeline()}, {_clock.rank: _clock.node})
    return (problem, False) if problem else (f"gpudoctor run: trace written to {path} (open it in ui.perfetto.dev)", True)
