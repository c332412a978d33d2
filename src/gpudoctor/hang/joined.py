"""The hang & crash doctor under torchrun or srun: no supervisor of gpudoctor's
own, so the ranks' doctors talk over the job's own store (the TCPStore at
MASTER_ADDR:MASTER_PORT that init_process_group uses; a client connection of
our own, keys under `gpudoctor/<job>/`), across nodes too.

- every rank publishes its collective trace there (when it changed, at most
  every ~0.5 s) and answers a request for its stacks;
- ranks 0 and WORLD_SIZE-1 line the traces up (two, so that one finishing early
  still leaves a watcher); the first to see a mismatch, a rank waiting for a
  finished peer, or a stall claims the report with compare_set, prints it, and
  ends its own process: torchrun then stops every other rank.
"""

from __future__ import annotations

from typing import Any

import atexit
import json
import os
import sys
import threading
import time
from datetime import timedelta

from gpudoctor.core.exit_code import ExitCode
from gpudoctor.launch import rundir as run_folder
from gpudoctor.launch import scratch
from gpudoctor.hang.tracer import stop_at_exit
from gpudoctor.hang.watch import STALL, CollectiveWatch

POLL_S = 0.5


def job_key() -> str:
    run_id = os.environ.get("TORCHELASTIC_RUN_ID") or os.environ.get("SLURM_JOB_ID") or "job"
    return f"gpudoctor/{run_id}/{os.environ.get('TORCHELASTIC_RESTART_COUNT', '0')}"


def launcher_name() -> str:
    """What started these ranks, in the words of the report's first line."""
    if "TORCHELASTIC_RUN_ID" in os.environ:
        return "torchrun"
    return "srun" if "SLURM_PROCID" in os.environ else "env://"


_run_dir: str | None = None


def joined_run_dir() -> str:
    """A run folder per job on each node, the same for all its local ranks: made
    private (launch/scratch.py). One that another user could have planted is
    refused, in a line on stderr, and this rank uses a fresh folder of its own:
    the hang doctor goes on, its run folder split."""
    global _run_dir
    if _run_dir is None:
        run_id = os.environ.get("TORCHELASTIC_RUN_ID") or os.environ.get("SLURM_JOB_ID") or "job"
        path = scratch.shared_path("run", run_id, os.environ.get("MASTER_PORT", ""))
        try:
            scratch.private_folder(path)
        except scratch.FolderRefused as exc:
            path = scratch.private_fallback("run")
            sys.stderr.write(f"gpudoctor run: run folder refused: {exc}; this rank uses {path} instead\n")
        _run_dir = path
        # Registered before the tracker's own exit hook, so it runs after its last write.
        atexit.register(_clean_up, path, _rank())
    return _run_dir


_ended_clean = False


def ended_clean() -> None:
    """The script of this rank ended with status 0: its files need not stay."""
    global _ended_clean
    _ended_clean = True


def _rank() -> int | None:
    text = os.environ.get("RANK") or os.environ.get("SLURM_PROCID") or ""
    return int(text) if text.isdigit() else None


def _clean_up(path: str, rank: int | None) -> None:
    """At a clean end, this rank's files go; the last rank out takes the folder
    (a report in it, or a rank that failed, keeps it)."""
    if not _ended_clean or rank is None or os.path.exists(os.path.join(path, run_folder.REPORT_FILE)):
        return
    for name in os.listdir(path) if os.path.isdir(path) else ():
        if name.startswith(run_folder.rank_files_prefix(rank)):
            try:
                os.unlink(os.path.join(path, name))
            except OSError:
                pass
    try:
        os.rmdir(path)
    except OSError:
        pass  # another rank's files are still there: that rank removes the folder


class JobStore:
    """Our own client of the job's TCPStore."""

    def __init__(self) -> None:
        self.store: Any = None  # a torch TCPStore once connected (torch imported lazily)
        self.prefix = job_key()

    def connect(self):
        if self.store is None:
            from torch.distributed import TCPStore

            host = os.environ.get("MASTER_ADDR", "127.0.0.1")
            port = int(os.environ.get("MASTER_PORT", "0"))
            self.store = TCPStore(host, port, is_master=False, timeout=timedelta(seconds=10), wait_for_workers=False)
        return self.store

    def key(self, *parts: object) -> str:
        return "/".join([self.prefix, *(str(p) for p in parts)])

    def has(self, key: str) -> bool:
        return bool(self.connect().check([key]))

    def get(self, key: str) -> str | None:
        return self.connect().get(key).decode("utf-8", "replace") if self.has(key) else None


class StoreWatch(CollectiveWatch):
    """CollectiveWatch over the store instead of the run folder."""

    def __init__(self, job: JobStore, world: int, hang_timeout: float | None):
        super().__init__(joined_run_dir(), world, hang_timeout)
        self.job = job

    def read(self):
        traces = {}
        for rank in range(self.nproc):
            raw = self.job.get(self.job.key("trace", rank))
            payload = json.loads(raw) if raw else None
            stacks = self.job.get(self.job.key("stacks", rank)) or ""
            traces[rank] = run_folder.trace_from_payload(rank, payload, stacks)
            stamp = hash((raw, stacks))
            self.stamps[rank] = stamp
        self.traces = traces
        return traces

    def stages(self) -> dict[int, str]:
        return {}  # no launcher's progress files under torchrun: collectives only

    def request_stacks(self, ranks: list[int]) -> None:
        self.job.connect().set(self.job.key("stacks-request"), "1")

    def answered(self, ranks: list[int]) -> bool:
        return all(self.job.has(self.job.key("stacks", r)) for r in ranks)

    def ended(self) -> dict[int, int]:
        """Ranks that said they ended: exit 0 for a clean end, 1 otherwise."""
        out = {}
        for rank, t in self.traces.items():
            if t.exit is not None:
                clean = t.exit.how == "exit" and t.exit.code in (0, None)
                out[rank] = 0 if clean else 1
        return out


def start(tracker, rank: int, world: int, hang_timeout: float | None) -> None:
    """Publish this rank's trace to the store; in ranks 0 and world-1, also watch."""
    job = JobStore()
    tracker.on_publish = lambda payload: _publish(job, rank, payload)
    own = OwnCalls(tracker.run_dir, rank)
    started = time.monotonic()

    def tick() -> None:
        _answer_stacks(job, tracker, rank)
        own.look(time.monotonic() - started)
        _carry_report(job, own, time.monotonic() - started)

    tracker.on_tick = tick
    if rank in (0, world - 1):
        watch = StoreWatch(job, world, hang_timeout)
        stopping = threading.Event()
        thread = threading.Thread(target=_watch, args=(watch, job, rank, stopping), name="gpudoctor-watch", daemon=True)
        thread.start()
        atexit.register(stop_at_exit, stopping, thread)


def _ready() -> bool:
    try:
        import torch.distributed as dist

        return dist.is_available() and dist.is_initialized()
    except Exception:  # noqa: BLE001
        return False


def _publish(job: JobStore, rank: int, payload: str) -> None:
    if not _ready():
        return  # the store's server may not be up before init_process_group
    try:
        job.connect().set(job.key("trace", rank), payload)
    except Exception:  # noqa: BLE001 - the job's store went away: the job is ending
        pass


def _answer_stacks(job: JobStore, tracker, rank: int) -> None:
    if not _ready() or tracker.stacks_sent:
        return
    try:
        if job.has(job.key("stacks-request")):
            text = tracker.stacks()
            tracker.stacks_sent = True
            run_folder.write_atomic(run_folder.stacks_path(tracker.run_dir, rank), text)
            tracker.publish(final=True)
            job.connect().set(job.key("stacks", rank), text[-60000:])
    except Exception:  # noqa: BLE001
        pass


BACKED_S = 3.0  # how long this rank must itself wait in a call before a mismatch read from the store ends the job


class OwnCalls:
    """This rank's own collective calls, as its own current-call file on this node
    says (runtime/collective_trace.py writes it): the local observation a verdict
    read from the job's store must agree with before it ends the job. Anyone who
    reaches the store can write a rank's trace there (docs/security.md); a forged
    record alone must not stop a healthy job."""

    def __init__(self, run_dir: str, rank: int):
        self.run_dir, self.rank = run_dir, rank
        self.key: tuple | None = None
        self.since = 0.0

    def look(self, now: float) -> None:
        cur = run_folder.read_current(self.run_dir, self.rank)
        key = (cur.pg, cur.seq, cur.state) if cur is not None else None
        if key != self.key or self.since == 0.0:
            self.key, self.since = key, now

    def backs(self, reason: str, now: float, hang_timeout: float | None) -> bool:
        """A mismatch or a finished peer: this rank has itself been waiting in one call
        for BACKED_S. A stall: its own calls have not moved for the hang timeout either."""
        still = now - self.since
        if reason == STALL:
            return still >= (hang_timeout or 0.0)
        return self.key is not None and self.key[2] == "started" and still >= BACKED_S


def _watch(watch: StoreWatch, job: JobStore, rank: int, stopping: threading.Event | None = None) -> None:
    start_s = time.monotonic()
    own = OwnCalls(watch.run_dir, rank)
    stopping = stopping or threading.Event()
    while not stopping.wait(POLL_S):
        if not _ready():
            continue
        now = time.monotonic() - start_s
        own.look(now)
        try:
            reason = watch.tick(now, watch.ended())
        except Exception:  # noqa: BLE001 - a store hiccup: look again next time
            continue
        if reason and not own.backs(reason, now, watch.hang_timeout):
            watch.seen = None  # judge the same traces again next time, when this rank may back it
            continue
        if reason and _claim(job, rank):
            try:
                _report_and_end(watch, reason, job, rank)
            finally:  # whatever went wrong in the report, the job still ends
                os._exit(ExitCode.TIMEOUT if reason == STALL else ExitCode.PROBLEM)


def _claim(job: JobStore, rank: int) -> bool:
    try:
        got = job.connect().compare_set(job.key("reported"), "", str(rank))
        return got.decode() == str(rank)
    except Exception:  # noqa: BLE001
        return False


def _report_and_end(watch: StoreWatch, reason: str, job: JobStore | None = None, rank: int = 0) -> None:
    from gpudoctor.knowledge.collectives import analyze
    from gpudoctor.hang.watch import rank_states
    from gpudoctor.render.run_text import findings_text

    traces = watch.read()
    states = rank_states(traces, watch.ended())
    findings = analyze(states, stalled_s=watch.stalled_s if reason == STALL else None)
    header = f"gpudoctor run: {watch.nproc} ranks of the {launcher_name()} job: stopped ({reason})"
    text = findings_text(findings, header)
    text += f"run folder on this node: {watch.run_dir} (each rank's stacks and collective trace)\n"
    try:
        run_folder.write_atomic(os.path.join(watch.run_dir, run_folder.REPORT_FILE), text)
    except OSError:
        pass
    sys.stderr.write(text)
    sys.stderr.flush()
    if job is not None:
        _hand_report_to_other_nodes(job, rank, watch.run_dir, text)
    # Ending this rank ends the job: torchrun stops every other rank when one fails.
    os._exit(ExitCode.TIMEOUT if reason == STALL else ExitCode.PROBLEM)


HANDOVER_S = 5.0  # how long the reporting rank waits for the other nodes to take the verdict


def node_count() -> int:
    """How many nodes the job has, as its launcher says (1 when it does not)."""
    for name in ("GROUP_WORLD_SIZE", "SLURM_NNODES", "SLURM_JOB_NUM_NODES"):
        text = os.environ.get(name, "")
        if text.isdigit() and int(text) > 0:
            return int(text)
    return 1


def _hand_report_to_other_nodes(job: JobStore, rank: int, run_dir: str, text: str) -> None:
    """Every node's output and run folder carry the verdict, not only this one's: the
    report goes to the job's store, and this rank (whose exit ends the job) waits a
    few seconds for one rank of every other node to take it (_carry_report)."""
    others = node_count() - 1
    if others < 1:
        return
    try:
        store = job.connect()
        store.set(job.key("report"), json.dumps({"node": os.uname().nodename, "rank": rank, "run_dir": run_dir, "text": text[-60000:]}))
        deadline = time.monotonic() + HANDOVER_S
        while time.monotonic() < deadline and store.add(job.key("report-taken"), 0) < others:
            time.sleep(0.1)
    except Exception:  # noqa: BLE001 - the store is going: this node's report stands alone
        pass


_carried = False


def _carry_report(job: JobStore, own: OwnCalls, now: float) -> None:
    """On every node but the one that reached it: the job's verdict, taken from the
    store, into this node's run folder and output (one rank per node, the one that
    creates the node's report file). Only while this rank itself has been waiting in
    one call for BACKED_S: anyone who reaches the store can write there, and a
    forged report must not reach the output of a job that is moving."""
    global _carried
    if _carried or not _ready() or not own.backs("carry", now, None):
        return
    try:
        if not job.has(job.key("report")):
            return
        raw = job.get(job.key("report")) or "{}"
        found = json.loads(raw)
        node, rank, where, text = str(found["node"]), int(found["rank"]), str(found["run_dir"]), str(found["text"])
    except Exception:  # noqa: BLE001 - nothing readable there: nothing to carry
        return
    _carried = True
    if node == os.uname().nodename:
        return  # this node reached the verdict itself
    from gpudoctor.render.escape import terminal

    header = f"gpudoctor run: the job's verdict was reached on node {node} by rank {rank} (its run folder there: {where}); it reads:\n"
    carried = terminal(header + text)
    try:
        fd = os.open(os.path.join(own.run_dir, run_folder.REPORT_FILE), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError:
        return  # another rank of this node carries it (or the folder is gone)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(carried)
    sys.stderr.write(carried)
    sys.stderr.flush()
    try:
        job.connect().add(job.key("report-taken"), 1)
    except Exception:  # noqa: BLE001
        pass
