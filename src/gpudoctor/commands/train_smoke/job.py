"""Run the reference job and turn what the ranks gathered into a Report.

Local mode: the supervised launcher starts N ranks of `job.run_rank`, each
returns its facts, and the verifications run here, after the ranks are gone.
Join mode (under torchrun / SLURM): this process is one rank; the ranks
all-gather their facts, every rank builds the same Report, rank 0 prints it.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import replace

from gpudoctor.launch import rundir
from gpudoctor.launch.scratch import FolderRefused, private_fallback, private_folder, shared_path, temp_folder_refused
from gpudoctor.core.codec import to_plain
from gpudoctor.probe.cuda import CudaFacts
from gpudoctor.core.findings import Finding, Report, Severity
from gpudoctor.catalog.findings.performance import DDP_VS_DP, DP_COMPARISON_NEEDS_GPUS
from gpudoctor.catalog.findings.ranks import SMOKE_NO_RESULT
from gpudoctor.commands.train_smoke.config import CHECKPOINT_NAME, SmokeConfig
from gpudoctor.commands.train_smoke.result import PARTIAL, AllRanks, DataParallelRun, RankReport
from gpudoctor.launch.contract import read_contract
from gpudoctor.commands.train_smoke.verify import Verification, not_run, throughput, verify_all

COMMAND = "train-smoke"
JOB = "gpudoctor.commands.train_smoke.rank:run_rank"
DP_JOB = "gpudoctor.commands.train_smoke.dp:run_dp"


def _config_data(cfg: SmokeConfig, checkpoint_kept: bool) -> dict:
    return {
        "nproc": cfg.nproc,
        "backend": cfg.backend,
        "device": cfg.device,
        "steps": cfg.steps,
        "batch_size": cfg.batch_size,
        "num_workers": cfg.num_workers,
        "amp": cfg.amp,
        "checkpoint": cfg.checkpoint_path if checkpoint_kept else None,
        "timeout_s": cfg.timeout_s,
        "model": f"MLP {cfg.features}-{cfg.hidden}-1 learning a linear teacher",
        "dataset_size": cfg.dataset_size,
        "optimizer": f"SGD lr={cfg.step_lr:g} momentum={cfg.momentum:g}",
    }


def build_report(
    cfg: SmokeConfig,
    verifications: list[Verification],
    *,
    head: Sequence[Finding] = (),
    tail: Sequence[Finding] = (),
    tp: dict | None = None,
    checkpoint_kept: bool = False,
    extra: dict | None = None,
    interrupted: bool = False,
    stop_signal: int = 0,
) -> Report:
    findings = [*head, *(f for v in verifications for f in v.findings), *tail]
    data = {
        "config": _config_data(cfg, checkpoint_kept),
        "verifications": [v.to_dict() for v in verifications],
        "throughput": tp or {},
        **(extra or {}),
    }
    return Report(COMMAND, tuple(findings), data, interrupted=interrupted, stop_signal=stop_signal)


def run_local(
    cfg: SmokeConfig,
    facts: CudaFacts | None = None,
    *,
    env: dict[str, str] | None = None,
    on_progress: Callable[[int, str, int], None] | None = None,
) -> Report:
    """Launch cfg.nproc supervised ranks of the reference job and verify what they return."""
    from gpudoctor.hang.run_ranks import run_local as run_ranks

    keep = bool(cfg.checkpoint_path)
    scratch = None if keep else tempfile.mkdtemp(prefix="gpudoctor-smoke-")
    if scratch:
        cfg = replace(cfg, checkpoint_path=os.path.join(scratch, CHECKPOINT_NAME))
    try:
        run = run_ranks(
            JOB, cfg, cfg.nproc, timeout=cfg.timeout_s, env=env, on_progress=on_progress, result_type=RankReport
        )
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    result = run.result
    head = list(run.findings)
    results: list[RankReport] = [r for r in result.results if r is not None]
    extra: dict = {"threads": result.threads()}
    if result.ok and len(results) == len(result.results):
        verifications = verify_all(results, cfg)
        tp = throughput(results)
        run.discard_logs()
    else:
        cause = run.cause
        if result.interrupted:
            reason = "interrupted"
        elif cause is not None:
            state = next(r.state for r in run.ranks if r.rank == cause.rank)
            reason = f"rank {cause.rank} {state} at '{cause.last_stage or 'start'}'"
        else:
            reason = f"timed out after {cfg.timeout_s:g} s" if result.timed_out else "a rank returned no result"
        partial = _partial_reports(result.run_dir, cfg) if result.timed_out else []
        if partial:  # stopped while DataLoader workers were measured: the rest was done
            verifications = verify_all(partial, cfg, workers_not_run=reason)
            tp = throughput(partial)
        else:
            verifications = not_run(reason)
            tp = None
        extra["logs"] = result.run_dir
        extra["ranks"] = run.ranks_json()
        extra["root_cause"] = run.root_json()
        if not head:  # every rank exited 0 and one still returned nothing
            head = [_no_result(result.run_dir)]
    tail: list[Finding] = []
    if cfg.compare_dp and tp:
        tail, dp = compare_dp(cfg, facts, tp, env=env)
        if dp:
            tp = {**tp, "dp": dp}
    return build_report(
        cfg, verifications, head=head, tail=tail, tp=tp, checkpoint_kept=keep, extra=extra, interrupted=result.interrupted,
        stop_signal=result.stop_signal,
    )


def _partial_reports(run_dir: str | None, cfg: SmokeConfig) -> list[RankReport]:
    """Every rank's report from before the worker measurement (rank.py), or none."""
    if not run_dir:
        return []
    reports = [read_contract(RankReport, os.path.join(run_dir, PARTIAL.format(rank=r))) for r in range(cfg.nproc)]
    return [r for r in reports if r is not None] if all(r is not None for r in reports) else []


def _no_result(run_dir: str) -> Finding:
    return SMOKE_NO_RESULT(evidence={"logs": run_dir}, logs=run_dir, stderr=rundir.rank_file(run_dir, "*", rundir.STDERR))


def compare_dp(cfg: SmokeConfig, facts: CudaFacts | None, tp: dict, env=None) -> tuple[list[Finding], dict | None]:
    """DDP vs nn.DataParallel on the same GPUs, or why it cannot run here."""
    gpus = facts.device_count if facts else 0
    if cfg.device != "cuda" or gpus < 2 or cfg.nproc < 2:
        why_not = (
            f"it ran on {cfg.device}" if cfg.device != "cuda" else f"{gpus} GPU visible" if gpus < 2 else f"--nproc {cfg.nproc}"
        )
        evidence = {"device": cfg.device, "gpus_visible": gpus, "nproc": cfg.nproc}
        return [DP_COMPARISON_NEEDS_GPUS(case="no-gpus", evidence=evidence, reason=why_not)], None
    from gpudoctor.hang.run_ranks import run_local as run_ranks

    run = run_ranks(DP_JOB, cfg, 1, timeout=cfg.timeout_s, env=env, result_type=DataParallelRun)
    if not run.result.ok or run.result.results[0] is None:
        # the launcher's findings about the DataParallel run, as warnings of this comparison
        failed = [
            dataclasses.replace(f, severity=Severity.WARN, title=f"--compare-dp: {f.title}", area=DDP_VS_DP.area) for f in run.findings
        ]
        return failed, None
    run.discard_logs()
    dp: DataParallelRun = run.result.results[0]
    ddp_rate = tp["total"]["samples_per_s"]
    speedup = ddp_rate / dp.samples_per_s if dp.samples_per_s else None
    evidence = {
        "ddp_samples_per_s": round(ddp_rate, 1),
        "dp_samples_per_s": round(dp.samples_per_s or 0.0, 1),
        "speedup": round(speedup, 3) if speedup is not None else None,
        "gpus": dp.gpus,
    }
    compared = DDP_VS_DP(
        case="compared" if speedup is not None else "no-speed-up",
        evidence=evidence,
        nproc=cfg.nproc,
        ddp=ddp_rate,
        gpus=dp.gpus,
        dp=dp.samples_per_s,
        speedup=speedup,
    )
    return [compared], {**to_plain(dp), "speedup": speedup}


def join_checkpoint_path(environ=None) -> str:
    """The default checkpoint path in join mode: the same string on every rank of one
    job (the launcher's id made a plain word, launch/scratch.py)."""
    env = os.environ if environ is None else environ
    run_id = env.get("TORCHELASTIC_RUN_ID") or env.get("SLURM_JOB_ID") or env.get("MASTER_PORT", "job")
    return os.path.join(shared_path("smoke", run_id), CHECKPOINT_NAME)


def _checkpoint_folder(path: str) -> tuple[str, list[Finding]]:
    """The default checkpoint's folder, made private; one another user could have
    planted is refused (a finding) and a fresh private folder used instead."""
    try:
        private_folder(os.path.dirname(path))
        return path, []
    except FolderRefused as exc:
        fallback = os.path.join(private_fallback("smoke"), CHECKPOINT_NAME)
        return fallback, [temp_folder_refused(exc, os.path.dirname(fallback), "train-smoke --save $HOME/smoke.pt")]


def run_joined(ctx, cfg: SmokeConfig) -> Report:
    """This process is one rank of a torchrun/SLURM job: run it, gather, verify."""
    from gpudoctor.hang.run_ranks import run_joined as run_as_rank
    from gpudoctor.commands.train_smoke.rank import run_rank

    keep = bool(cfg.checkpoint_path)
    refused: list[Finding] = []
    if keep:
        path = cfg.checkpoint_path
    else:
        path, refused = _checkpoint_folder(join_checkpoint_path())
    cfg = replace(cfg, checkpoint_path=path, gather=True, nproc=ctx.world_size)
    try:
        joined = run_as_rank(
            ctx,
            run_rank,
            cfg,
            command="train-smoke",
        )
    finally:
        if not keep and (ctx.rank == 0 or refused):  # refused: the folder is this rank's own
            shutil.rmtree(os.path.dirname(path), ignore_errors=True)
    if joined.failure is not None:
        return joined.with_fleet(
            build_report(cfg, not_run(f"rank 0 raised {joined.raised}"), head=[*refused, joined.failure], extra={"joined_by": ctx.joined_by})
        )
    gathered: AllRanks = joined.value
    results = list(gathered.ranks)
    tail: list[Finding] = []
    if cfg.compare_dp:
        tail = [DP_COMPARISON_NEEDS_GPUS(case="joined", evidence={"joined_by": ctx.joined_by}, nproc=ctx.local_world_size)]
    return joined.with_fleet(
        build_report(
            cfg,
            verify_all(results, cfg),
            head=refused,
            tail=tail,
            tp=throughput(results),
            checkpoint_kept=keep,
            extra={"joined_by": ctx.joined_by},
        )
    )
