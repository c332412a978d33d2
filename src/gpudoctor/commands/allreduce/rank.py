"""What one rank does for `gpudoctor allreduce`.

For each size: fill a buffer with this rank's deterministic data, run the
collective once and check the result element by element against the exact
expected values; then `warmup` untimed calls and `iters` timed ones (CUDA
events around each call on a GPU; on CPU the host clock, read after each call of
a loop that a barrier lines up across ranks). Every rank's times and
wrong counts are gathered so rank 0 holds the whole row, writes it where the
supervisor's display can read it, and returns the table.

Started by the launcher (`launch_function("gpudoctor.commands.allreduce.rank:run_rank", ...)`)
or in-process as one rank of a torchrun/SLURM job.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass

from gpudoctor.commands.allreduce.bisect import PairTime, bisect_bytes, measure_pairs
from gpudoctor.commands.allreduce.bandwidth import Row, exact_value_range, format_size, make_row, planned_sizes
from gpudoctor.commands.allreduce.per_node import PerNode, measure_nodes
from gpudoctor.commands.allreduce.options import Sweep
from gpudoctor.core.codec import decode, encode
from gpudoctor.launch import rundir
from gpudoctor.probe.links import RankPlace

ROWS_FILE = rundir.ROWS_FILE
STAGE_FINISHED = "finished"
# Data repeats with a prime period, so a chunk that lands at the wrong offset
# (a multiple of any power of two) does not match by accident.
PERIOD = 1021
FAULT_WRONG = "wrong"
# GPUDOCTOR_FAULT=<rank>:slow: that rank sleeps this long before each of its collective
# calls (a straggler, for testing --bisect); inert unless the variable names the rank.
FAULT_SLOW = "slow"
SLOW_FAULT_S = 0.02
# GPUDOCTOR_FAULT=<rank>:slowlink<peer>: that rank sleeps as long before each --bisect
# all-reduce it does with <peer> only (one slow link, for testing --bisect).
FAULT_SLOW_LINK = "slowlink"
# GPUDOCTOR_FAULT=<rank>:hiccup<peer>: as slowlink, but only in the two passes, not in the
# recheck (a burst of the host's other work that spans both passes: no slow link).
FAULT_HICCUP = "hiccup"


@dataclass(frozen=True)
class SweepResult:
    """What rank 0 returns: the whole table, and where every rank ran (the
    other ranks return None)."""

    world_size: int
    rows: tuple[Row, ...]
    devices: tuple[RankPlace, ...]
    pairs: tuple[PairTime, ...] = ()  # --bisect: every pair's all-reduce time
    per_node: PerNode | None = None  # across nodes: each node's intra- and inter-node times


def size_stage(op: str, nbytes: int) -> str:
    """The heartbeat stage of one size, e.g. "all_reduce 4K"."""
    return f"{op} {format_size(nbytes)}"


def rank_values(torch, rank: int, world: int, dtype: str):
    """One period of rank `rank`'s data: small integers, zero where the rank does
    not contribute (see bandwidth.exact_value_range), as int64."""
    stride, half = exact_value_range(world, dtype)
    length = PERIOD * stride
    j = torch.arange(length, dtype=torch.int64)
    x = j * 48271 + (rank % 65536) * 16807 + 11
    values = ((x * x) >> 5) % (2 * half + 1) - half
    if stride > 1:
        values = torch.where((j + rank) % stride == 0, values, torch.zeros_like(values))
    return values


def summed_values(torch, world: int, dtype: str):
    """One period of the element-wise sum over all ranks, as int64 (exact)."""
    total = None
    for rank in range(world):
        v = rank_values(torch, rank, world, dtype)
        total = v if total is None else total + v
    return total


def tiled(torch, period_values, start: int, length: int, dtype, device):
    """Elements [start, start+length) of the periodic sequence, as `dtype` on `device`."""
    period = period_values.numel()
    offset = start % period
    reps = -(-(offset + length) // period)
    base = period_values.to(dtype=dtype, device=device)
    return base.repeat(reps)[offset : offset + length].contiguous()


class _Collective:
    """Buffers and calls of one op at one size, with the expected result."""

    def __init__(self, torch, dist, op: str, count: int, rank: int, world: int, dtype_name: str, device, *, delay_s: float = 0.0):
        self.torch, self.dist, self.op = torch, dist, op
        self.delay_s = delay_s  # slept before each call: the `slow` fault's straggler
        self.rank, self.world = rank, world
        dtype = getattr(torch, dtype_name)
        self.dtype, self.dtype_name, self.device = dtype, dtype_name, device
        mine = rank_values(torch, rank, world, dtype_name)
        if op == "all_reduce":
            self.input = tiled(torch, mine, 0, count, dtype, device)
            self.output = self.input.clone()
        elif op == "all_gather":
            chunk = count // world
            self.input = tiled(torch, mine, rank * chunk, chunk, dtype, device)
            self.output = torch.empty(count, dtype=dtype, device=device)
        elif op == "reduce_scatter":
            self.input = tiled(torch, mine, 0, count, dtype, device)
            self.output = torch.empty(count // world, dtype=dtype, device=device)
        elif op == "broadcast":
            self.input = tiled(torch, mine, 0, count, dtype, device)
            self.output = self.input.clone()
        else:
            raise ValueError(f"unknown op {op!r}")
        self._gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
        self._scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor

    def call(self) -> None:
        if self.delay_s:
            time.sleep(self.delay_s)
        if self.op == "all_reduce":
            self.dist.all_reduce(self.output)
        elif self.op == "all_gather":
            self._gather(self.output, self.input)
        elif self.op == "reduce_scatter":
            self._scatter(self.output, self.input)
        else:
            self.dist.broadcast(self.output, src=0)

    def reset(self) -> None:
        """Put this rank's own data back where an in-place op will read it."""
        if self.op in ("all_reduce", "broadcast"):
            self.output.copy_(self.input)

    def wrong(self) -> int:
        """Elements of this rank's result that differ from the exact expectation."""
        torch, n = self.torch, self.output.numel()
        if self.op == "all_reduce":
            expected = tiled(torch, summed_values(torch, self.world, self.dtype_name), 0, n, self.dtype, self.device)
        elif self.op == "reduce_scatter":
            total = summed_values(torch, self.world, self.dtype_name)
            expected = tiled(torch, total, self.rank * n, n, self.dtype, self.device)
        elif self.op == "broadcast":
            root = rank_values(torch, 0, self.world, self.dtype_name)
            expected = tiled(torch, root, 0, n, self.dtype, self.device)
        else:
            chunk = n // self.world
            wrong = 0
            for r in range(self.world):
                theirs = tiled(torch, rank_values(torch, r, self.world, self.dtype_name), r * chunk, chunk, self.dtype, self.device)
                wrong += int((self.output[r * chunk : (r + 1) * chunk] != theirs).sum().item())
            return wrong
        return int((self.output != expected).sum().item())

    def idle(self) -> None:
        """A timing buffer that stays finite: repeated in-place sums of real data
        would overflow float16 after a dozen calls."""
        if self.op == "all_reduce":
            self.output.zero_()


def _host_times(coll: _Collective, dist, iters: int) -> list[float]:
    """One barrier lines the ranks up, then the calls run back to back, as in a
    plain timing loop; a timestamp after each call gives each iteration's time."""
    dist.barrier()
    stamps = [time.perf_counter()]
    for _ in range(iters):
        coll.call()
        stamps.append(time.perf_counter())
    return [(b - a) * 1e6 for a, b in zip(stamps, stamps[1:])]


def _cuda_times(coll: _Collective, dist, iters: int, torch) -> list[float]:
    dist.barrier()
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(iters)]
    for start, end in events:
        start.record()
        coll.call()
        end.record()
    torch.cuda.synchronize()
    return [start.elapsed_time(end) * 1e3 for start, end in events]


def run_rank(ctx, sweep: Sweep, on_row: Callable[[Row], None] | None = None) -> SweepResult | None:
    """The whole sweep as one rank (its nproc is the job's; the world size is read
    from the process group). Rank 0 returns every row."""
    import torch

    op, dtype_name = sweep.op, sweep.dtype
    iters, warmup = sweep.iters, sweep.warmup
    on_cuda = sweep.device == "cuda"
    device = ctx.cuda_device() if on_cuda else torch.device("cpu")
    dist = ctx.init_process_group(sweep.backend, timeout_s=sweep.pg_timeout_s)
    rank, world = dist.get_rank(), dist.get_world_size()
    rows_path = os.path.join(ctx.run_dir, ROWS_FILE) if ctx.run_dir and rank == 0 else None
    rows: list[Row] = []
    plan = planned_sizes(op, list(sweep.sizes), dtype_name, world)
    for index, (nbytes, count) in enumerate(plan):
        stage = size_stage(op, nbytes)
        # Before the heartbeat: a rank that hangs here is seen behind its peers.
        ctx.fault_point(stage)
        ctx.progress(stage, index + 1)
        delay_s = SLOW_FAULT_S if ctx.fault == FAULT_SLOW else 0.0
        coll = _Collective(torch, dist, op, count, rank, world, dtype_name, device, delay_s=delay_s)
        coll.reset()
        coll.call()
        if ctx.fault == FAULT_WRONG:
            flat = coll.output.view(-1)
            flat[flat.numel() // 2] += 1  # what a corrupting transport would do to one element
        wrong = coll.wrong()
        coll.idle()
        for _ in range(warmup):
            coll.call()
        times = _cuda_times(coll, dist, iters, torch) if on_cuda else _host_times(coll, dist, iters)
        mine = torch.tensor([float(wrong), *times], dtype=torch.float64, device=device)
        everyone = [torch.empty_like(mine) for _ in range(world)]
        dist.all_gather(everyone, mine)
        if rank == 0:
            gathered = [t.tolist() for t in everyone]
            row = make_row(op, nbytes, count, dtype_name, world, [int(g[0]) for g in gathered], [g[1:] for g in gathered])
            rows.append(row)
            if rows_path:
                with open(rows_path, "a") as fh:
                    fh.write(json.dumps(encode(row)) + "\n")
            if on_row:
                on_row(row)
        del coll
    pairs: tuple[PairTime, ...] = ()
    if sweep.bisect and world > 1:
        ctx.progress("bisect", len(plan) + 1)
        slow, peers, transient = _bisect_fault(ctx.fault)
        pairs = tuple(measure_pairs(torch, dist, rank, world, device, getattr(torch, dtype_name), slow, peers, transient))
    devices = _devices(torch, dist, ctx, device, world)
    hosts = [place.host for place in devices]
    per_node = None
    if len(set(hosts)) > 1:  # across nodes only: one node runs nothing more
        ctx.progress("per-node", len(plan) + 2)
        per_node = measure_nodes(torch, dist, rank, hosts, device, getattr(torch, dtype_name), bisect_bytes(device.type))
    ctx.progress(STAGE_FINISHED, len(plan) + 3)
    dist.destroy_process_group()
    if rank != 0:
        return None
    return SweepResult(world, tuple(rows), devices, pairs, per_node)


def _bisect_fault(fault: str | None) -> tuple[float, frozenset[int] | None, bool]:
    """The sleep before each bisect all-reduce, with which peers (None: all), and
    whether in the two passes only (not in the recheck)."""
    if fault == FAULT_SLOW:
        return SLOW_FAULT_S, None, False
    for kind in (FAULT_SLOW_LINK, FAULT_HICCUP):
        peer = (fault or "").removeprefix(kind)
        if fault and fault.startswith(kind) and peer.isdigit():
            return SLOW_FAULT_S, frozenset({int(peer)}), kind == FAULT_HICCUP
    return 0.0, None, False


def read_row(line: str) -> Row:
    """One line of the rows file (ValueError if it is not a whole row of this gpudoctor)."""
    return decode(Row, json.loads(line), ROWS_FILE)


def _devices(torch, dist, ctx, device, world: int) -> tuple[RankPlace, ...]:
    """Where every rank ran: host, and on a GPU its name and PCI bus id, so the
    report can look up the link between the GPUs in NVML."""
    gpu = pci_bus_id = None
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        gpu = props.name
        try:  # NVML's form of the PCI address; older torch builds do not expose it
            pci_bus_id = "%08x:%02x:%02x.0" % (props.pci_domain_id, props.pci_bus_id, props.pci_device_id)
        except AttributeError:
            pass
    mine = RankPlace(dist.get_rank(), socket.gethostname(), ctx.local_rank, gpu, pci_bus_id)
    everyone: list = [None] * world
    dist.all_gather_object(everyone, encode(mine))
    return tuple(decode(RankPlace, place, f"rank {r}'s place") for r, place in enumerate(everyone))
