"""Findings in the area "performance"."""

from gpudoctor.catalog.entry import FindingDoc

ENTRIES = (
    FindingDoc(
        id="dataloader-worker-startup",
        severity="info",
        area="performance",
        emitted_by="[`gpudoctor train-smoke`](../commands/train-smoke.md)",
        summary="""With `--num-workers W > 0`, each rank measured what its DataLoader workers cost to start
under the `spawn` start method: the time to the first batch of every epoch with
`persistent_workers=False` (new workers every epoch), and with `persistent_workers=True`
(the first epoch, then the later ones). This is the Lightning "ddp_spawn and num_workers
do not mix well" warning, measured on this machine.""",
        evidence="`num_workers`, `start_method`, `startup_s_persistent_off`, `startup_s_persistent_on_first`, `startup_s_persistent_on_later`, `epoch_s_persistent_off` (means over ranks and epochs, seconds).",
        why="""A spawned worker is a new interpreter: it imports torch and unpickles the dataset before
it yields a batch. Without persistent workers every epoch pays that again, for every
rank; with many short epochs (or validation loops) it can dominate the run.""",
        fix="""Keep the workers alive between epochs:

```python
DataLoader(dataset, sampler=sampler, num_workers=W, persistent_workers=True)
```""",
        says="Under spawn every worker starts a new interpreter, imports torch and unpickles the dataset at every epoch unless the workers persist.",
        does="DataLoader(dataset, sampler=sampler, num_workers={workers}, persistent_workers=True)",
    ),
    FindingDoc(
        id="ddp-vs-dp",
        severity="info",
        area="performance",
        emitted_by="[`gpudoctor train-smoke`](../commands/train-smoke.md)",
        summary="""The same job (model, data, steps, global batch N×B) ran under `nn.DataParallel` over the
same GPUs in one process; the title gives both samples/s and DDP's speed-up.""",
        evidence="`ddp_samples_per_s`, `dp_samples_per_s`, `speedup`, `gpus`.",
        why="""`DataParallel` runs one Python thread per GPU, scatters every batch and replicates the
model on every step, and gathers outputs on GPU 0; DDP runs one process per GPU and
overlaps its all-reduce with the backward pass. PyTorch recommends DDP even on one
machine; this measures by how much on yours.""",
        fix="""Use DDP, one process per GPU:

```sh
torchrun --nproc-per-node N train.py    # with model = DistributedDataParallel(model, device_ids=[local_rank])
```""",
    ),
    FindingDoc(
        id="dp-comparison-needs-gpus",
        severity="warn",
        area="performance",
        emitted_by="[`gpudoctor train-smoke`](../commands/train-smoke.md)",
        summary="""`--compare-dp` was asked for but cannot run here: it needs CUDA, at least 2 visible GPUs
and `--nproc` ≥ 2, and gpudoctor's own launcher (inside a torchrun/SLURM job each process
already holds one GPU).""",
        evidence="`device`, `gpus_visible`, `nproc` (or `joined_by` in join mode).",
        why="""`nn.DataParallel` splits each batch across the GPUs of one process; with one GPU or on
CPU there is nothing to compare DDP with.""",
        fix="""Run it on a machine with two or more GPUs:

```sh
gpudoctor train-smoke --device cuda --nproc 2 --compare-dp
```""",
    ),
    FindingDoc(
        id="smoke-throughput",
        severity="ok",
        area="performance",
        emitted_by="[`gpudoctor train-smoke`](../commands/train-smoke.md)",
        summary="""The training loop's speed: steps/s and samples/s per rank and in total (the ranks step in
lockstep, so the total goes at the slowest rank: `steps / slowest rank's loop time`, and
samples/s counts every rank's batches). Only the training loop is timed; every
verification runs outside it.""",
        evidence="`steps_per_s`, `samples_per_s` (totals; the per-rank figures are in the table and in the JSON `throughput`).",
        why="A number to compare across machines and settings, not a pass/fail check.",
        fix="Nothing to fix. Compare backends or devices: `gpudoctor train-smoke --backend gloo --device cuda`.",
    ),
)
