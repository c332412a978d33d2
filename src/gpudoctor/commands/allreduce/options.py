"""What `gpudoctor allreduce` will run: its options checked (`check_options`, the
one check both the CLI and the Python API run) and turned into one Sweep, with
the backend and device chosen. Pure: what torch sees of CUDA comes in as a
CudaFacts; bad input or an impossible request is a UsageError whose message says
what would work instead (the CLI prints it, exit 2; the API raises it)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from gpudoctor.core.usage import UsageError
from gpudoctor.launch.backend import BACKENDS, DEVICES, choose_backend, one_of
from gpudoctor.probe.cuda import CudaFacts

from gpudoctor.commands.allreduce.bandwidth import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MIN_BYTES,
    DEFAULT_SIZES,
    DTYPES,
    ELEMENT_BYTES,
    OPS,
    element_count,
    format_size,
    parse_size,
    parse_sizes,
    planned_sizes,
    size_range,
)

from gpudoctor.launch.capacity import nproc_problem

DEFAULT_CPU_NPROC = 2
MAX_SIZE_BYTES = 16 << 30


# Option errors and impossible backend requests (launch/backend.ImpossibleRequest)
# are the same kind of error: a usage error.
PlanError = UsageError


@dataclass(frozen=True, kw_only=True)
class Sweep:
    """What the ranks run: the options checked, the backend and device chosen. The
    job hands it to every rank as it is (run_rank's `sweep`), through the codec."""

    backend: str  # nccl | gloo
    device: str  # cuda | cpu
    nproc: int  # ranks to start (local mode) or the job's world size (join mode)
    op: str
    dtype: str
    sizes: tuple[int, ...]  # requested bytes, in order
    iters: int
    warmup: int
    timeout_s: float
    # The ranks' process-group timeout: timeout_s in a torchrun/SLURM job (no supervisor
    # there); a local job sets it a margin past its own watchdog (job.PG_TIMEOUT_MARGIN_S).
    pg_timeout_s: float
    bisect: bool = False  # then measure every pair of ranks (allreduce/bisect.py)

    def planned(self) -> list[tuple[int, int]]:
        """[(bytes, count)] each rank will run, after rounding to whole elements."""
        return planned_sizes(self.op, list(self.sizes), self.dtype, self.nproc)

    def rounding(self) -> list[str]:
        """One line per requested size that runs as another (whole elements; a whole
        number per rank for all_gather / reduce_scatter), so no size changes silently."""
        lines = []
        for size in self.sizes:
            count = element_count(self.op, size, self.dtype, self.nproc)
            ran = count * ELEMENT_BYTES[self.dtype]
            if ran != size:
                plural = "s" if count != 1 else ""
                per_rank = f", a multiple of {self.nproc} ranks" if self.op in ("all_gather", "reduce_scatter") else ""
                lines.append(
                    f"size {size} bytes runs as {ran} bytes: {count} whole {self.dtype} element{plural} "
                    f"of {ELEMENT_BYTES[self.dtype]} bytes{per_rank}"
                )
        return lines

    def with_changes(self, **changes) -> "Sweep":
        return replace(self, **changes)


@dataclass(frozen=True, kw_only=True)
class Options:
    """The command line as typed (strings where the user types words). Its defaults
    are the CLI's flags' and the Python API's (cli/allreduce.py, api.allreduce)."""

    nproc: int | None = None
    backend: str = "auto"
    device: str = "auto"
    sizes: str | None = None
    min_bytes: str | None = None
    max_bytes: str | None = None
    dtype: str = "float32"
    op: str = "all_reduce"
    iters: int = 20
    warmup: int = 5
    timeout: float = 300.0
    bisect: bool = False
    fault: str | None = None  # hidden --fault SPEC: a test hook (launch/rank.adopt_fault)


def check_options(o: Options) -> tuple[str, str, str, str, tuple[int, ...]]:
    """The checks that need no torch: (backend, device, op, dtype, sizes)."""
    backend = one_of("--backend", o.backend, BACKENDS)
    device = one_of("--device", o.device, DEVICES)
    op = one_of("--op", o.op.replace("-", "_"), OPS)
    dtype = one_of("--dtype", o.dtype, DTYPES)
    if o.nproc is not None and (problem := nproc_problem(o.nproc)):
        raise PlanError(problem)
    if o.iters < 1:
        raise PlanError(f"--iters must be at least 1 (got {o.iters})")
    if o.warmup < 0:
        raise PlanError(f"--warmup must be 0 or more (got {o.warmup})")
    if not o.timeout > 0:
        raise PlanError(f"--timeout must be a positive number of seconds (got {o.timeout:g})")
    try:
        if o.sizes is not None:
            if o.min_bytes is not None or o.max_bytes is not None:
                raise PlanError("give either --sizes or --min-bytes/--max-bytes, not both")
            sizes = parse_sizes(o.sizes)
        elif o.min_bytes is not None or o.max_bytes is not None:
            low = parse_size(o.min_bytes) if o.min_bytes is not None else DEFAULT_MIN_BYTES
            high = parse_size(o.max_bytes) if o.max_bytes is not None else DEFAULT_MAX_BYTES
            sizes = size_range(low, high)
        else:
            sizes = list(DEFAULT_SIZES)
    except PlanError:
        raise
    except ValueError as exc:
        flag = "--sizes" if o.sizes is not None else "--min-bytes/--max-bytes"
        message = str(exc)
        raise PlanError(message if message.startswith("--") else f"{flag}: {message}") from None
    big = [s for s in sizes if s > MAX_SIZE_BYTES]
    if big:
        raise PlanError(f"sizes above {format_size(MAX_SIZE_BYTES)} are not supported (got {format_size(big[0])})")
    return backend, device, op, dtype, tuple(sorted(sizes))


def default_nproc(backend: str, device: str, cuda: CudaFacts) -> int:
    """One rank per GPU when the run can be on GPUs, else two CPU ranks."""
    if backend != "gloo" and device != "cpu" and cuda.available and cuda.device_count >= 1:
        return cuda.device_count
    return DEFAULT_CPU_NPROC


def plan_sweep(o: Options, cuda: CudaFacts, world: int | None = None, ranks_per_host: int | None = None) -> Sweep:
    """Options -> Sweep. `world`/`ranks_per_host` are given in join mode (the job's
    WORLD_SIZE and LOCAL_WORLD_SIZE); locally both are --nproc."""
    backend, device, op, dtype, sizes = check_options(o)
    if world is None:
        nproc = o.nproc if o.nproc is not None else default_nproc(backend, device, cuda)
        world = ranks_per_host = nproc
    chosen_backend, chosen_device = choose_backend(backend, device, ranks_per_host or world, cuda)
    return Sweep(
        backend=chosen_backend, device=chosen_device, nproc=world, op=op, dtype=dtype, sizes=sizes, iters=o.iters,
        warmup=o.warmup, timeout_s=float(o.timeout), pg_timeout_s=float(o.timeout), bisect=o.bisect,
    )
