"""Pure: the ranks' gathered results -> one Verification per guarantee.

Each verification states its threshold, passes or fails with the numbers that
decided it, and carries the finding the report shows (an `ok` line, or an error
with the evidence: the rank, the parameter, the step, the difference). No torch
here: these functions read the ranks' RankReports (commands/train_smoke/result.py), so they
are tested with results built by hand as well as with real runs.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import mean
from typing import Any

from gpudoctor.checks.wording import plural
from gpudoctor.core.findings import Finding
from gpudoctor.hooks.checks import LOADER_STARTUP_FLOOR_S
from gpudoctor.launch import rundir
from gpudoctor.commands.train_smoke.config import LEARNING_FACTOR, OUTPUT_TOLERANCE, SMOKE_FAULTS, SmokeConfig
from gpudoctor.commands.train_smoke.result import RankReport
from gpudoctor.catalog.findings.performance import DATALOADER_WORKER_STARTUP, SMOKE_THROUGHPUT
from gpudoctor.catalog.findings.verifications import (
    CHECKPOINT_MODULE_PREFIX,
    CHECKPOINT_RELOAD_MISMATCH,
    CHECKPOINT_WRITTEN_BY_MANY,
    GRADIENT_AVERAGE_WRONG,
    LOSS_NOT_FALLING,
    RANKS_DIVERGED,
    SAMPLER_ORDER_FIXED,
    SAMPLER_SHARDS_WRONG,
    SMOKE_CHECKPOINT,
    SMOKE_GRADIENT_AVERAGING,
    SMOKE_LEARNING,
    SMOKE_SHARDING,
    SMOKE_SYNC,
)

NAMES = ("sharding", "learning", "synchronisation", "gradient-averaging", "checkpoint")


@dataclass(frozen=True)
class Verification:
    name: str
    passed: bool | None  # None: not run
    detail: str
    findings: tuple[Finding, ...] = ()

    def to_dict(self) -> dict:
        return {"name": self.name, "passed": self.passed, "detail": self.detail}


def _detail(finding: Finding) -> str:
    """A verification's detail: its finding's title after the name ("sharding: ...")."""
    return finding.title.split(": ", 1)[-1]


def _passed(name: str, finding: Finding) -> Verification:
    return Verification(name, True, _detail(finding), (finding,))


def _failed(name: str, findings: list[Finding]) -> Verification:
    return Verification(name, False, "; ".join(_detail(f) for f in findings), tuple(findings))


def _injected(results: Sequence[RankReport]) -> dict:
    """Evidence naming a fault injected for this command, so a test run is never mistaken for a real bug."""
    spec = ",".join(f"{r.rank}:{r.fault}" for r in results if r.fault in SMOKE_FAULTS)
    return {"injected": f"{rundir.FAULT_ENV}={spec}"} if spec else {}


def _which(ranks: list[int]) -> str:
    """[1] -> "rank 1", [1, 3] -> "ranks 1, 3"."""
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(map(str, ranks))


# ---------------------------------------------------------------- sharding
def verify_sharding(results: Sequence[RankReport]) -> Verification:
    name = "sharding"
    shards = [r.sharding for r in results]
    n, total = shards[0].dataset_size, shards[0].total_size
    world = len(results)
    padded = total - n
    epoch0 = [s.epoch0 for s in shards]
    seen = [i for order in epoch0 for i in order]
    unique = set(seen)
    missing = sorted(set(range(n)) - unique)
    stray = sorted(i for i in unique if not 0 <= i < n)
    repeats = len(seen) - len(unique)
    lengths = [len(order) for order in epoch0]
    problems: list[Finding] = []
    if missing or stray or repeats > padded or len(set(lengths)) > 1:
        owners: dict[int, list[int]] = {}
        for rank, order in enumerate(epoch0):
            for i in set(order):
                owners.setdefault(i, []).append(rank)
        shared = sorted(i for i, who in owners.items() if len(who) > 1)
        problems.append(
            SAMPLER_SHARDS_WRONG(
                evidence={
                    "dataset_size": n,
                    "ranks": world,
                    "samples_per_rank": lengths,
                    "shared_indices": shared[:10],
                    "shared_count": len(shared),
                    "expected_padding": padded,
                    "missing_indices": missing[:10],
                    "missing_count": len(missing),
                    **({"out_of_range": stray[:10]} if stray else {}),
                    **_injected(results),
                },
                n=n,
                shared=len(shared),
                missing=len(missing),
                lengths=lengths,
            )
        )
    fixed = [rank for rank, s in enumerate(shards) if len(s.epoch0) > 1 and s.epoch0 == s.epoch1]
    if fixed:
        problems.append(
            SAMPLER_ORDER_FIXED(
                evidence={"ranks": fixed, "first_indices_epoch0": list(shards[fixed[0]].epoch0[:8]), **_injected(results)},
                ranks=_which(fixed),
            )
        )
    if problems:
        return _failed(name, problems)
    repeats_without = all(s.unset0 == s.unset1 for s in shards)
    evidence = {"dataset_size": n, "samples_per_rank": lengths[0], "padding": padded, "order_repeats_without_set_epoch": repeats_without}
    return _passed(
        name,
        SMOKE_SHARDING(
            case="repeats-without" if repeats_without else "reorders",
            evidence=evidence,
            ranks=plural(world, "rank"),
            per_rank=lengths[0],
            n=n,
            padding=f" (+{padded} repeated to even out the shards)" if padded else "",
        ),
    )


# ---------------------------------------------------------------- learning
def verify_learning(results: Sequence[RankReport], factor: float = LEARNING_FACTOR) -> Verification:
    name = "learning"
    rows = []
    for r in results:
        ln = r.learning
        final = ln.final_loss
        if not math.isfinite(final):
            got = 0.0  # diverged to inf/NaN: the worst possible outcome
        else:
            got = ln.initial_loss / final if final > 0 else float("inf")
        rows.append((r.rank, ln.initial_loss, ln.final_loss, got))
    worst = min(rows, key=lambda row: row[3])
    rank, initial, final, got = worst
    steps = results[0].throughput.steps
    if got >= factor:
        evidence = {"initial_loss": initial, "final_loss": final, "factor": got, "required": factor}
        return _passed(
            name, SMOKE_LEARNING(evidence=evidence, initial=initial, final=final, steps=steps, factor=got, required=factor)
        )
    rose = final > initial
    case = "diverged" if not math.isfinite(final) else "rose" if rose else "fell"
    return _failed(
        name,
        [
            LOSS_NOT_FALLING(
                case=case,
                evidence={
                    "rank": rank,
                    "initial_loss": initial,
                    "final_loss": final,
                    "factor": got,
                    "required": factor,
                    "steps": steps,
                    "per_rank_factor": {row[0]: round(row[3], 3) for row in rows},
                    **_injected(results),
                },
                rank=rank,
                initial=initial,
                final=final,
                steps=steps,
                ratio=final / initial if rose else got,
                required=factor,
                more_steps=max(2 * steps, 200),
            )
        ],
    )


# ---------------------------------------------------------------- synchronisation
def _consensus(values: list) -> object:
    """The value most ranks hold; on a tie, rank 0's (the rank that saves the checkpoint)."""
    counts = Counter(values)
    top = max(counts.values())
    return values[0] if counts[values[0]] == top else next(v for v in values if counts[v] == top)


def verify_synchronisation(results: Sequence[RankReport]) -> Verification:
    name = "synchronisation"
    world = len(results)
    points = [r.sync.checkpoints for r in results]
    steps = [step for step, _ in points[0]]
    first_step = None
    diverged: set[int] = set()
    for i, step in enumerate(steps):
        held = [pts[i][1] if i < len(pts) else None for pts in points]
        agreed = _consensus(held)
        odd = {r.rank for r, digest in zip(results, held) if digest != agreed}
        if odd and first_step is None:
            first_step = step
        diverged |= odd
    first_param = first_rank = None
    for pname in results[0].sync.params:
        held = [r.sync.params.get(pname) for r in results]
        agreed = _consensus(held)
        odd_ranks = [r.rank for r, digest in zip(results, held) if digest != agreed]
        if odd_ranks:
            first_param, first_rank = pname, odd_ranks[0]
            diverged |= set(odd_ranks)
            break
    spread = results[0].sync.spread
    worst = max(spread.values(), default=0.0)
    if not diverged and worst == 0.0:
        return _passed(
            name,
            SMOKE_SYNC(
                case="ranks" if world > 1 else "one-rank",
                evidence={"sync_points": steps, "ranks": world},
                ranks=plural(world, "rank"),
                steps=", ".join(map(str, steps)),
            ),
        )
    ranks = sorted(diverged) or [0]
    gap = spread.get(first_param, worst) if first_param else worst
    return _failed(
        name,
        [
            RANKS_DIVERGED(
                case="from-step" if first_step is not None else "after-training",
                evidence={
                    "diverged_ranks": ranks,
                    "first_diverged_step": first_step,
                    "sync_points": steps,
                    "first_parameter": first_param,
                    "rank": first_rank,
                    "max_abs_difference": gap,
                    "max_abs_difference_any_parameter": worst,
                    **_injected(results),
                },
                ranks=_which(ranks),
                hold="holds" if len(ranks) == 1 else "hold",
                step=first_step,
                param=first_param,
                rank=first_rank,
                difference=gap,
            )
        ],
    )


# ---------------------------------------------------------------- gradient averaging
def verify_gradient_averaging(results: Sequence[RankReport]) -> Verification:
    name = "gradient-averaging"
    g = results[0].gradient
    if g is None:
        return Verification(name, None, "not run: rank 0 returned no gradient check")
    world, batch = g.ranks, g.batch_per_rank
    rel, tol = g.relative_error, g.tolerance
    if rel <= tol:
        return _passed(
            name,
            SMOKE_GRADIENT_AVERAGING(
                evidence={"relative_error": rel, "tolerance": tol, "max_abs_diff": g.max_abs_diff},
                ranks=plural(world, "rank"),
                batch=batch,
                reference=g.reference_batch,
                error=rel,
                tolerance=tol,
            ),
        )
    return _failed(
        name,
        [
            GRADIENT_AVERAGE_WRONG(
                evidence={
                    "relative_error": rel,
                    "tolerance": tol,
                    "max_abs_diff": g.max_abs_diff,
                    "max_update": g.max_update,
                    "worst_parameter": g.worst_param,
                    "per_parameter_diff": g.per_param,
                    "ranks": world,
                    "batch_per_rank": batch,
                    "checked_on": "rank 0",
                    **_injected(results),
                },
                ranks=world,
                batch=batch,
                reference=g.reference_batch,
                error=rel,
                tolerance=tol,
                param=g.worst_param,
            )
        ],
    )


# ---------------------------------------------------------------- checkpoint
def verify_checkpoint(results: Sequence[RankReport]) -> Verification:
    name = "checkpoint"
    c0 = results[0].checkpoint
    path = c0.path
    keys = c0.keys
    writers = {r.rank: len(r.checkpoint.wrote) for r in results}
    problems: list[Finding] = []
    extra = {rank: n for rank, n in writers.items() if (n if rank else n - 1)}
    clobbered = c0.sha256_at_end != c0.sha256
    if extra or clobbered:
        others = sorted(rank for rank in extra if rank != 0)
        at_end = list(c0.keys_at_end)
        problems.append(
            CHECKPOINT_WRITTEN_BY_MANY(
                case="overwritten" if clobbered else "also",
                evidence={
                    "path": path,
                    "files_written_per_rank": writers,
                    "rank0_sha256": c0.sha256,
                    "sha256_at_end": c0.sha256_at_end,
                    **({"keys_at_end": at_end} if at_end else {}),
                    **({"module_prefixed_at_end": sum(k.startswith("module.") for k in at_end)} if at_end else {}),
                    **_injected(results),
                },
                ranks=_which(others or sorted(extra)),
                path=path,
            )
        )
    prefixed = [k for k in keys if k.startswith("module.")]
    if prefixed:
        problems.append(
            CHECKPOINT_MODULE_PREFIX(
                evidence={"path": path, "prefixed_keys": prefixed[:6], **_injected(results)}, prefixed=len(prefixed), keys=len(keys)
            )
        )
    diff = c0.output_max_diff
    load_error = c0.load_error
    if load_error or diff is None or diff > OUTPUT_TOLERANCE:
        problems.append(
            CHECKPOINT_RELOAD_MISMATCH(
                case="load-failed" if load_error or diff is None else "outputs-differ",
                evidence={"path": path, "load_error": load_error, "output_max_diff": diff, "tolerance": OUTPUT_TOLERANCE, **_injected(results)},
                path=path,
                error=load_error,
                diff=diff,
                tolerance=OUTPUT_TOLERANCE,
            )
        )
    if problems:
        return _failed(name, problems)
    return _passed(name, SMOKE_CHECKPOINT(evidence={"path": path, "keys": len(keys), "output_max_diff": diff}, keys=len(keys), diff=diff))


# ---------------------------------------------------------------- workers
def verify_workers(results: Sequence[RankReport]) -> Verification | None:
    """DataLoader worker start-up per epoch, persistent_workers off vs on (only with --num-workers > 0)."""
    measured = [r.workers for r in results if r.workers is not None]
    if not measured:
        return None
    w = measured[0].num_workers
    off = mean(s for m in measured for s in m.off.startup_s)
    on_first = mean(m.on.startup_s[0] for m in measured)
    later = [s for m in measured for s in m.on.startup_s[1:]]
    on_later = mean(later) if later else on_first
    saves = max(0.0, off - on_later)
    finding = DATALOADER_WORKER_STARTUP(
        # persistent workers that save less than this change nothing worth a fix
        no_fix=saves < LOADER_STARTUP_FLOOR_S,
        evidence={
            "num_workers": w,
            "start_method": measured[0].start_method,
            "startup_s_persistent_off": round(off, 4),
            "startup_s_persistent_on_first": round(on_first, 4),
            "startup_s_persistent_on_later": round(on_later, 4),
            "epoch_s_persistent_off": round(mean(s for m in measured for s in m.off.epoch_s), 4),
        },
        spawned=plural(w, "spawned worker"),
        off=off,
        on_first=on_first,
        on_later=on_later,
        saves=saves,
        epochs=plural(measured[0].epochs, "epoch"),
        workers=w,
    )
    return _passed("dataloader-workers", finding)


# ---------------------------------------------------------------- throughput
def throughput(results: Sequence[RankReport]) -> dict:
    """The throughput the JSON carries: per rank, and the job's total."""
    per_rank: list[dict[str, Any]] = []
    for r in results:
        t = r.throughput
        per_rank.append(
            {
                "rank": r.rank,
                "steps": t.steps,
                "seconds": t.seconds,
                "steps_per_s": t.steps_per_s,
                "samples_per_s": t.samples_per_s,
            }
        )
    slowest = max(t["seconds"] for t in per_rank)
    steps = min(t["steps"] for t in per_rank)
    batch = results[0].throughput.batch_size
    samples = sum(r.throughput.samples for r in results)
    return {
        "per_rank": per_rank,
        "total": {
            "ranks": len(results),
            "batch_per_rank": batch,
            "global_batch": batch * len(results),
            "steps": steps,
            "seconds": slowest,
            # The ranks step in lockstep: the job goes as fast as its slowest rank.
            "steps_per_s": steps / slowest if slowest > 0 else None,
            "samples_per_s": samples / slowest if slowest > 0 else None,
        },
    }


def verify_throughput(tp: dict, device: str) -> Verification:
    total = tp["total"]
    if total["steps_per_s"] is None:  # the loop took no time the clock could see: no rate to state
        return Verification("throughput", None, "not measured: the timed loop took no measurable time")
    finding = SMOKE_THROUGHPUT(
        evidence={"steps_per_s": round(total["steps_per_s"], 2), "samples_per_s": round(total["samples_per_s"], 1)},
        steps_per_s=total["steps_per_s"],
        samples_per_s=total["samples_per_s"],
        ranks=plural(total["ranks"], "rank"),
        batch=total["batch_per_rank"],
        device=device,
        per_rank=", ".join("?" if r["steps_per_s"] is None else f"{r['steps_per_s']:.1f}" for r in tp["per_rank"]),
    )
    return _passed("throughput", finding)


def verify_all(results: Sequence[RankReport], cfg: SmokeConfig, workers_not_run: str = "") -> list[Verification]:
    """Every verification over the gathered per-rank results (ordered by rank).
    `workers_not_run`: why the DataLoader worker measurement did not finish (the
    results are the ranks' reports from before it, job.py)."""
    results = sorted(results, key=lambda r: r.rank)
    out = [
        verify_sharding(results),
        verify_learning(results),
        verify_synchronisation(results),
        verify_gradient_averaging(results),
        verify_checkpoint(results),
    ]
    workers = verify_workers(results)
    if workers_not_run:
        workers = Verification("dataloader-workers", None, f"not run: {workers_not_run}")
    if workers:
        out.append(workers)
    out.append(verify_throughput(throughput(results), results[0].device))
    return out


def not_run(reason: str) -> list[Verification]:
    """The verifications of a job that did not finish: none of them can be judged."""
    return [Verification(name, None, f"not run: {reason}") for name in NAMES]
