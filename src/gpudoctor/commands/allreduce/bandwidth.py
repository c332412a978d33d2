"""The numbers of a collective benchmark, the nccl-tests way: sizes, element
counts, algbw/busbw, and the value range that keeps a sum exact. Pure: no torch.

algbw = bytes / time. busbw = algbw x the op's bus factor, which turns algbw into
what each link carried, so it compares with the hardware's link speed whatever
the number of ranks (see nccl-tests' doc/PERFORMANCE.md for the derivations).
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

OPS = ("all_reduce", "all_gather", "reduce_scatter", "broadcast")
DTYPES = ("float32", "float16", "bfloat16")
ELEMENT_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}
# The largest integer up to which every integer is exactly representable: 2^(mantissa bits + 1).
MAX_EXACT_INT = {"float32": 2**24, "float16": 2**11, "bfloat16": 2**8}

UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*$", re.IGNORECASE)

# Default sweep: 4K .. 64M in steps of 4 (8 sizes: latency end to bandwidth end).
DEFAULT_SIZES = tuple(4096 * 4**k for k in range(8))
DEFAULT_MIN_BYTES = 4096
DEFAULT_MAX_BYTES = 64 << 20


def parse_size(text: str) -> int:
    """"4K" -> 4096, "1M" / "1MiB" / "1MB" -> 1048576, "512" -> 512 (binary units,
    as nccl-tests reads them). Raises ValueError with a message for the user."""
    m = _SIZE.match(text)
    if not m:
        raise ValueError(f"'{text}' is not a size (examples: 512, 4K, 1M, 64M, 1G)")
    value = float(m.group(1)) * UNITS[m.group(2).upper()]
    if value != int(value):
        raise ValueError(f"'{text}' is not a whole number of bytes")
    if value < 1:
        raise ValueError(f"'{text}': a size must be at least 1 byte")
    return int(value)


def parse_sizes(text: str) -> list[int]:
    """"4K,1M,64M" -> [4096, 1048576, 67108864], in the order given, duplicates dropped."""
    parts = [p for p in text.split(",") if p.strip()]
    if not parts:
        raise ValueError("--sizes is empty (example: --sizes 4K,1M,64M)")
    sizes: list[int] = []
    for part in parts:
        size = parse_size(part)
        if size not in sizes:
            sizes.append(size)
    return sizes


def size_range(min_bytes: int, max_bytes: int, factor: int = 2) -> list[int]:
    """min, min*2, min*4, ... up to max (nccl-tests' -b/-e/-f)."""
    if min_bytes > max_bytes:
        raise ValueError(f"--min-bytes ({format_size(min_bytes)}) is larger than --max-bytes ({format_size(max_bytes)})")
    sizes = []
    size = min_bytes
    while size <= max_bytes:
        sizes.append(size)
        size *= factor
    return sizes


def format_size(nbytes: int) -> str:
    """4096 -> "4K", 1572864 -> "1536K", 1000 -> "1000"."""
    for unit in ("T", "G", "M", "K"):
        if nbytes >= UNITS[unit] and nbytes % UNITS[unit] == 0:
            return f"{nbytes // UNITS[unit]}{unit}"
    return str(nbytes)


def element_count(op: str, nbytes: int, dtype: str, world: int) -> int:
    """Elements of the largest buffer of one call (the gathered output of
    all_gather, the input of reduce_scatter), as nccl-tests sizes them: a whole
    number of elements, and for the gather/scatter ops a whole number per rank."""
    count = max(1, nbytes // ELEMENT_BYTES[dtype])
    if op in ("all_gather", "reduce_scatter"):
        count = max(world, count // world * world)
    return count


def planned_sizes(op: str, sizes: list[int], dtype: str, world: int) -> list[tuple[int, int]]:
    """[(bytes, count)] actually run: each requested size rounded down to whole
    elements (per rank where the op splits the buffer), duplicates dropped."""
    seen: list[tuple[int, int]] = []
    for size in sizes:
        count = element_count(op, size, dtype, world)
        planned = (count * ELEMENT_BYTES[dtype], count)
        if planned not in seen:
            seen.append(planned)
    return seen


def bus_factor(op: str, world: int) -> float:
    """How much more than `bytes` each rank's link carries, per nccl-tests."""
    if op == "all_reduce":
        return 2 * (world - 1) / world
    if op in ("all_gather", "reduce_scatter"):
        return (world - 1) / world
    if op == "broadcast":
        return 1.0
    raise ValueError(f"unknown op {op!r}")


def algbw_gbps(nbytes: int, time_us: float) -> float:
    """GB/s (10^9 bytes per second, as nccl-tests prints)."""
    if not time_us or time_us <= 0 or not math.isfinite(time_us):
        return math.nan
    return nbytes / time_us / 1e3


def busbw_gbps(op: str, nbytes: int, time_us: float, world: int) -> float:
    return algbw_gbps(nbytes, time_us) * bus_factor(op, world)


def median_time_us(per_rank: list[list[float]]) -> float:
    """The collective's time: the slowest rank's median iteration. (Taking the
    max across ranks per iteration instead would add up the ranks' jitter: in a
    back-to-back loop one rank's long iteration is its peer's short one.)"""
    medians = [statistics.median(times) for times in per_rank if times]
    return max(medians) if medians else math.nan


def mean_time_us(per_rank: list[list[float]]) -> float:
    """The collective's time as nccl-tests takes it, for setting a run against a published
    figure: each rank's mean iteration (nccl-tests times the whole loop and divides by the
    iterations), averaged over the ranks (its default `-a 1`)."""
    means = [statistics.fmean(times) for times in per_rank if times]
    return statistics.fmean(means) if means else math.nan


def time_spread(per_rank: list[list[float]]) -> tuple[float, float]:
    """(fastest, 90th percentile) iteration of the rank whose median is the reported
    time: how far apart repeated measurements of one size were."""
    timed = [sorted(times) for times in per_rank if times]
    if not timed:
        return math.nan, math.nan
    times = max(timed, key=statistics.median)
    return times[0], times[min(len(times) - 1, int(0.9 * len(times)))]


@dataclass(frozen=True)
class Row:
    """One line of the results table: what every rank measured for one size.
    Rank 0 writes each to the run folder as it is done (the live table) and
    returns them all (probe/codec's envelope both ways)."""

    iters: int
    time_min_us: float  # the fastest iteration of the rank whose median is time_us
    time_p90_us: float  # its 90th percentile
    op: str
    bytes: int
    count: int
    dtype: str
    time_us: float
    algbw_gbps: float
    busbw_gbps: float
    wrong: int
    wrong_by_rank: tuple[int, ...]
    busbw_mean_gbps: float = math.nan  # from mean_time_us: nccl-tests' statistic, for published figures


# What the JSON carries of a row: nccl-tests' columns.
PUBLIC_COLUMNS = ("op", "bytes", "count", "dtype", "time_us", "algbw_gbps", "busbw_gbps", "wrong")


def make_row(
    op: str, nbytes: int, count: int, dtype: str, world: int, wrong_by_rank: list[int], times_by_rank: list[list[float]]
) -> Row:
    """One line of the results table, from what every rank measured for one size."""
    time_us = median_time_us(times_by_rank)
    fastest, p90 = time_spread(times_by_rank)
    return Row(
        iters=max((len(t) for t in times_by_rank), default=0),
        time_min_us=round(float(fastest), 2),
        time_p90_us=round(float(p90), 2),
        op=op,
        bytes=nbytes,
        count=count,
        dtype=dtype,
        time_us=round(float(time_us), 2),
        algbw_gbps=round(algbw_gbps(nbytes, time_us), 4),
        busbw_gbps=round(busbw_gbps(op, nbytes, time_us, world), 4),
        wrong=int(sum(wrong_by_rank)),
        wrong_by_rank=tuple(int(w) for w in wrong_by_rank),
        busbw_mean_gbps=round(busbw_gbps(op, nbytes, mean_time_us(times_by_rank), world), 4),
    )


def public_row(row: Row) -> dict:
    """A results row as the JSON carries it (nccl-tests' columns only)."""
    return {k: getattr(row, k) for k in PUBLIC_COLUMNS}


def exact_value_range(world: int, dtype: str) -> tuple[int, int]:
    """(stride, half): each rank puts integers in [-half, half] at one element in
    `stride` (zeros elsewhere), so that at most ceil(world/stride) ranks add into
    any element and every partial sum, in any order, is an integer no larger than
    the dtype holds exactly (256 for bfloat16, 2048 for float16). The expected
    result is then exact and a check can compare element by element."""
    limit = MAX_EXACT_INT[dtype]
    stride = -(-world // limit)
    contributors = -(-world // stride)
    half = max(1, min(16, limit // contributors))
    return stride, half


# all_reduce and broadcast reduce into the buffer they send (nccl-tests' "in-place"
# columns); all_gather and reduce_scatter write another buffer ("out-of-place").
PLACEMENT = {"all_reduce": "in-place", "broadcast": "in-place", "all_gather": "out-of-place", "reduce_scatter": "out-of-place"}


def summarize(rows: Sequence[Row], planned: int) -> dict:
    """Peak bus bandwidth (the bandwidth end of the sweep), the average bus bandwidth
    over every size (the figure nccl-tests prints last, "# Avg bus bandwidth") and the
    time of the smallest size (the latency end)."""
    finite = [r for r in rows if math.isfinite(r.busbw_gbps)]
    out: dict = {"sizes_run": len(rows), "sizes_planned": planned, "wrong": sum(r.wrong for r in rows)}
    if not finite:
        return out
    peak = max(finite, key=lambda r: (r.busbw_gbps, r.algbw_gbps))
    small = min(rows, key=lambda r: r.bytes)
    out.update(
        avg_busbw_gbps=round(sum(r.busbw_gbps for r in finite) / len(finite), 4),
        placement=PLACEMENT.get(finite[0].op, "unknown"),
        peak_busbw_gbps=peak.busbw_gbps,
        peak_busbw_bytes=peak.bytes,
        peak_algbw_gbps=max(r.algbw_gbps for r in finite),
        latency_us=small.time_us,
        latency_bytes=small.bytes,
        latency_min_us=small.time_min_us,
        latency_p90_us=small.time_p90_us,
        latency_iters=small.iters,
        largest_bytes=max(r.bytes for r in rows),
    )
    means = [r.busbw_mean_gbps for r in rows if math.isfinite(r.busbw_mean_gbps)]
    if means:
        out["peak_busbw_mean_gbps"] = max(means)  # nccl-tests' statistic: what a published figure is
    return out
