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
    more_why="""`DataParallel` runs one Python thread per GPU, scatters every batch and replicates the
model on every step, and gathers outputs on GPU 0; DDP runs one process per GPU and
overlaps its all-reduce with the backward pass. PyTorch recommends DDP even on one
machine; this measures by how much on yours.""",
    more_fix="""Use DDP, one process per GPU:

```sh
torchrun --nproc-per-node N train.py    # with model = DistributedDataParallel(model, device_ids=[local_rank])
```""",
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
    more_why="""`nn.DataParallel` splits each batch across the GPUs of one process; with one GPU or on
CPU there is nothing to compare DDP with.""",
    more_fix="""Run it on a machine with two or more GPUs:

```sh
gpudoctor train-smoke --device cuda --nproc 2 --compare-dp
```""",
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
    more_why="A number to compare across machines and settings, not a pass/fail check.",
    more_fix="Nothing to fix. Compare backends or devices: `gpudoctor train-smoke --backend gloo --device cuda`.",
)
