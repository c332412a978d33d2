"""Findings in the area "performance"."""

from __future__ import annotations

from gpudoctor.catalog.kind import FindingKind
from gpudoctor.core.findings import Severity

AREA = "performance"
EMITTED_BY = "[`gpudoctor train-smoke`](../commands/train-smoke.md)"


DATALOADER_WORKER_STARTUP = FindingKind(
    id="dataloader-worker-startup",
    severity=Severity.INFO,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""With `--num-workers W > 0`, each rank measured what its DataLoader workers cost to start
under the `spawn` start method: the time to the first batch of every epoch with
`persistent_workers=False` (new workers every epoch), and with `persistent_workers=True`
(the first epoch, then the later ones). This is the Lightning "ddp_spawn and num_workers
do not mix well" warning, measured on this machine.""",
    evidence="`num_workers`, `start_method`, `startup_s_persistent_off`, `startup_s_persistent_on_first`, `startup_s_persistent_on_later`, `epoch_s_persistent_off` (means over ranks and epochs, seconds).",
    # {spawned}: "2 spawned workers"; {epochs}: "2 epochs"
    title="dataloader-workers: {spawned} per rank: {off:.2f} s to the first batch of every epoch with persistent_workers=False; "
    "with persistent_workers=True {on_first:.2f} s once, then {on_later:.3f} s per epoch (saves {saves:.2f} s per epoch per rank; "
    "persistent_workers=False timed over {epochs}, True over the training loop's first and one more)",
    why="Under spawn every worker starts a new interpreter, imports torch and unpickles the dataset at every epoch unless the workers persist.",
    fix="DataLoader(dataset, sampler=sampler, num_workers={workers}, persistent_workers=True)",
)


DDP_VS_DP = FindingKind(
    id="ddp-vs-dp",
    severity=Severity.INFO,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""The same job (model, data, steps, global batch N×B) ran under `nn.DataParallel` over the
same GPUs in one process; the title gives both samples/s and DDP's speed-up.""",
    evidence="`ddp_samples_per_s`, `dp_samples_per_s`, `speedup`, `gpus`.",
    title={
        "compared": "DDP on {nproc} GPUs: {ddp:.0f} samples/s; nn.DataParallel on {gpus}: {dp:.0f} samples/s"
        " — DDP is {speedup:.2f}× DataParallel",
        "no-speed-up": "DDP on {nproc} GPUs: {ddp:.0f} samples/s; nn.DataParallel on {gpus}: {dp:.0f} samples/s",
    },
    why="DataParallel runs one Python thread per GPU in one process, scatters every batch and gathers outputs on GPU 0; "
    "DDP overlaps the all-reduce with backward in one process per GPU.",
    fix="model = DistributedDataParallel(model, device_ids=[local_rank])   # launched with torchrun --nproc-per-node N",
    more_why="""`DataParallel` also replicates the model on every step. PyTorch recommends DDP even on one
machine; this measures by how much on yours.""",
)


DP_COMPARISON_NEEDS_GPUS = FindingKind(
    id="dp-comparison-needs-gpus",
    severity=Severity.WARN,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""`--compare-dp` was asked for but cannot run here: it needs CUDA, at least 2 visible GPUs
and `--nproc` ≥ 2, and gpudoctor's own launcher (inside a torchrun/SLURM job each process
already holds one GPU).""",
    evidence="`device`, `gpus_visible`, `nproc` (or `joined_by` in join mode).",
    # "no-gpus": under gpudoctor's launcher, {reason} what is missing; "joined": inside a torchrun/SLURM job
    title={
        "no-gpus": "--compare-dp needs 2 or more GPUs and --nproc ≥ 2 on CUDA: not run ({reason})",
        "joined": "--compare-dp runs only under gpudoctor's own launcher, not inside a torchrun/SLURM job",
    },
    why={
        "no-gpus": "nn.DataParallel splits each batch across the GPUs of one process; with one GPU or on CPU there is nothing to compare.",
        "joined": "The DataParallel run is one process over all GPUs; inside a job that already holds one process per GPU it cannot run.",
    },
    fix={
        "no-gpus": "gpudoctor train-smoke --device cuda --nproc 2 --compare-dp   # on a machine with 2+ GPUs",
        "joined": "gpudoctor train-smoke --device cuda --nproc {nproc} --compare-dp",
    },
)


SMOKE_THROUGHPUT = FindingKind(
    id="smoke-throughput",
    severity=Severity.OK,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""The training loop's speed: steps/s and samples/s per rank and in total (the ranks step in
lockstep, so the total goes at the slowest rank: `steps / slowest rank's loop time`, and
samples/s counts every rank's batches). Only the training loop is timed; every
verification runs outside it.""",
    evidence="`steps_per_s`, `samples_per_s` (totals; the per-rank figures are in the table and in the JSON `throughput`).",
    # {ranks}: "2 ranks"; {per_rank}: each rank's steps/s, "2.0, 1.9"
    title="throughput: {steps_per_s:.1f} steps/s, {samples_per_s:.0f} samples/s in total ({ranks} × batch {batch} on {device}); "
    "per rank {per_rank} steps/s",
    more_why="A number to compare across machines and settings, not a pass/fail check.",
    more_fix="Nothing to fix. Compare backends or devices: `gpudoctor train-smoke --backend gloo --device cuda`.",
)
