"""Findings in the area "verifications"."""

from gpudoctor.catalog.entry import FindingDoc

ENTRIES = (
    FindingDoc(
        id="checkpoint-module-prefix",
        severity="error",
        area="verifications",
        emitted_by="[`gpudoctor train-smoke`](../commands/train-smoke.md)",
        summary="""The keys in the saved checkpoint start with `module.`: the DDP wrapper's
`state_dict()` was saved instead of the model's.""",
        evidence="`path`, `prefixed_keys` (the first few).",
        why="""The plain model (for inference, or a later run without DDP) cannot load it:
`load_state_dict` fails with missing and unexpected keys until every key is renamed.""",
        fix="""Save the module inside the wrapper:

```python
torch.save(model.module.state_dict(), path)
```""",
        says="DDP's state_dict prefixes every key with 'module.'; the plain model cannot load it without renaming every key.",
        does="torch.save(model.module.state_dict(), path)",
    ),
    FindingDoc(
        id="checkpoint-reload-mismatch",
        severity="error",
        area="verifications",
        emitted_by="[`gpudoctor train-smoke`](../commands/train-smoke.md)",
        summary="""The checkpoint rank 0 wrote did not load into the plain model, or loaded and gave
different outputs from the live model on the same probe batch (beyond 1e-6).""",
        evidence="`path`, `load_error`, `output_max_diff`, `tolerance`.",
        why="""A checkpoint that cannot be loaded, or that loads into a different function, cannot
resume training or serve: the run's result is lost.""",
        fix="""Save and load the plain module's `state_dict` on the same model class:

```python
torch.save(model.module.state_dict(), path)
model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
```""",
        says="A checkpoint that does not reload into the model class, or reloads to different outputs, cannot resume training or serve.",
        does="model.load_state_dict(torch.load(path, map_location='cpu', weights_only=True))   # on the plain (unwrapped) model",
    ),
    FindingDoc(
        id="checkpoint-written-by-many",
        severity="error",
        area="verifications",
        emitted_by="[`gpudoctor train-smoke`](../commands/train-smoke.md)",
        summary="""A rank other than 0 also wrote the checkpoint (or rank 0 wrote it more than once). The
title says when the file on disk is no longer the one rank 0 saved (another rank
overwrote it).""",
        evidence="`path`, `files_written_per_rank`, `rank0_sha256`, `sha256_at_end`, `keys_at_end` and `module_prefixed_at_end` (when the file was overwritten), `injected` (when `GPUDOCTOR_FAULT=<rank>:saveall` caused it).",
        why="""`torch.save(...)` outside an `if rank == 0:` runs on every rank: N processes write the
same file at once, the last one wins, a reader may see a half-written file, and the
winner is often a rank that saved the DDP wrapper (keys prefixed with `module.`). On a
shared filesystem it also costs N times the I/O.""",
        fix="""Save from rank 0 only, the unwrapped model, and make the others wait:

```python
if dist.get_rank() == 0:
    torch.save(model.module.state_dict(), path)
dist.barrier()
```""",
        says="Every rank that saves writes the same file at the same time: the writes race, the last one wins and may be a half-written or a differently wrapped state_dict; N ranks also cost N times the I/O.",
        does="if dist.get_rank() == 0: torch.save(model.module.state_dict(), path)   # then dist.barrier() before any rank reads it",
    ),
    FindingDoc(
        id="gradient-average-wrong",
        severity="error",
        area="verifications",
        emitted_by="[`gpudoctor train-smoke`](../commands/train-smoke.md)",
        summary="""N ranks × batch B did not take the same step as one process on the concatenated N×B
batch: the relative difference of the parameter updates is above the tolerance. The
title names the parameter that differs most. The check runs on rank 0, from parameters
made identical first (a divergence is reported by `ranks-diverged`, not here).""",
        evidence="`relative_error`, `tolerance`, `max_abs_diff`, `max_update`, `worst_parameter`, `per_parameter_diff`, `ranks`, `batch_per_rank`, `checked_on`, `injected` (when `GPUDOCTOR_FAULT=<rank>:badgrad` caused it).",
        why="""DDP averages the ranks' gradients; the result equals the gradient of the mean loss over
the global batch only when every rank computes a mean-reduced loss over the same batch
size and nothing edits the gradients before the all-reduce. A rank that scales its loss
(`loss * world_size`, `loss.sum()` on one rank), a gradient hook that differs by rank, or
a communication hook that sums without dividing by the world size breaks it silently:
training still runs, at the wrong effective learning rate or with the wrong direction.""",
        fix="""Use the same mean-reduced loss on every rank and leave the gradients alone until
`backward()` has returned:

```python
loss = torch.nn.functional.mse_loss(model(x), y)   # reduction="mean", the same on every rank
loss.backward()
```""",
        says="DDP's promise is that N ranks with batch B take the same step as one process with the N*B batch; it breaks when ranks scale their loss differently, edit gradients before the all-reduce, or a comm hook sums without dividing by the world size.",
        does="loss = criterion(output, target)   # the same mean-reduced loss on every rank; no per-rank scaling or gradient edits before backward() returns",
    ),
    FindingDoc(
        id="loss-not-falling",
        severity="error",
        area="verifications",
        emitted_by="[`gpudoctor train-smoke`](../commands/train-smoke.md)",
        summary="""The evaluation loss of the reference job fell by less than the stated factor (10×), or
rose, over the run. The title names the worst rank and the factor reached.""",
        evidence="`rank`, `initial_loss`, `final_loss`, `factor`, `required`, `steps`, `per_rank_factor`.",
        why="""The job learns a linear teacher that its 2-layer MLP can represent exactly, with a
learning rate that converges in a few dozen steps on any healthy machine. A loss that
does not fall means the updates are wrong: a broken all-reduce, AMP overflow or
underflow (`--amp`), or a run too short to learn (`--steps` set very low).""",
        fix="""Give it more steps; if it still fails, look at the gradient-averaging and synchronisation
lines of the same report, and at the transport:

```sh
gpudoctor train-smoke --steps 400
gpudoctor allreduce --nproc 2
```""",
        says="The reference job learns a linear teacher that the model can fit exactly; when its loss does not fall, the updates reaching the optimizer are wrong (a broken all-reduce, AMP overflow) or the run was too short.",
        does="gpudoctor train-smoke --steps {steps}   # still failing: read the gradient-averaging line",
    ),
    FindingDoc(
        id="ranks-diverged",
        severity="error",
        area="verifications",
        emitted_by="[`gpudoctor train-smoke`](../commands/train-smoke.md)",
        summary="""At least one rank held different parameters from the others. The title names the
diverged rank(s) (judged against the digest most ranks hold; with two ranks, against
rank 0), the first sync point where they differed, the first parameter that differs,
and the largest element-wise difference between any two ranks.""",
        evidence="`diverged_ranks`, `first_diverged_step` (null when only the final digests differ), `sync_points`, `first_parameter`, `rank`, `max_abs_difference` (of that parameter), `max_abs_difference_any_parameter`, `injected` (when `GPUDOCTOR_FAULT=<rank>:nosync` caused it).",
        why="""DDP keeps replicas identical only because every rank applies the same averaged gradient
with the same optimizer state. A rank that steps under `no_sync()`, edits its gradients
after the all-reduce, has its own learning-rate schedule, or was not wrapped in DDP at
all drifts away; the checkpoint saved from rank 0 is then not the model the other ranks
trained, and results depend on which rank you ask.""",
        fix="""Do not step under `no_sync()`: with gradient accumulation, leave it on the micro-batch
that calls `optimizer.step()`:

```python
ctx = model.no_sync() if (i + 1) % accum_steps else contextlib.nullcontext()
with ctx:
    loss.backward()
```

and edit gradients (clipping, scaling) the same way on every rank, after `backward()`.""",
        says="DDP keeps replicas identical only if every rank applies the same averaged gradient: a rank that steps under no_sync(), edits its gradients after the all-reduce, or has its own optimizer state drifts away, and the model saved from rank 0 is not the one the others trained.",
        does="with model.no_sync() if (i + 1) % accum_steps else contextlib.nullcontext():   # leave no_sync() on the step that calls optimizer.step()",
    ),
    FindingDoc(
        id="sampler-order-fixed",
        severity="error",
        area="verifications",
        emitted_by="[`gpudoctor train-smoke`](../commands/train-smoke.md)",
        summary="""`set_epoch(1)` did not change the order of a rank's shard: epochs 0 and 1 read the
samples in the same sequence.""",
        evidence="`ranks` (those whose order did not change), `first_indices_epoch0`.",
        why="""`DistributedSampler` seeds its shuffle with `seed + epoch`; if the epoch never changes,
every epoch repeats the same order, which slows and biases training. Here the call was
made and still had no effect, so the sampler in use is not a working `DistributedSampler`
(a subclass that ignores the epoch, or `shuffle=False`).""",
        fix="""Use `DistributedSampler(dataset, shuffle=True)` and call `set_epoch` before every epoch:

```python
for epoch in range(epochs):
    sampler.set_epoch(epoch)
    for batch in loader: ...
```""",
        says="Without a new order every epoch, each rank sees its samples in the same sequence every epoch, which hurts convergence.",
        does="sampler.set_epoch(epoch)   # first line of every epoch, before iterating the DataLoader",
    ),
    FindingDoc(
        id="sampler-shards-wrong",
        severity="error",
        area="verifications",
        emitted_by="[`gpudoctor train-smoke`](../commands/train-smoke.md)",
        summary="""The ranks' `DistributedSampler` shards for one epoch are not a partition of the dataset:
some indices are read by more than one rank (beyond the padding `DistributedSampler`
adds), some by none, or the ranks got different numbers of samples.""",
        evidence="`dataset_size`, `ranks`, `samples_per_rank`, `shared_indices` / `shared_count`, `expected_padding`, `missing_indices` / `missing_count`, `out_of_range` (if any).",
        why="""Samples read twice are over-weighted, samples never read are never learned, and ranks
with different numbers of batches run different numbers of steps: the rank with more
waits at an all-reduce the others never join, and the job hangs at the end of the epoch.
The usual causes are a sampler built without `num_replicas`/`rank`, different datasets or
seeds on different ranks, or a sampler built over one dataset and a DataLoader reading
another.""",
        fix="""Build the sampler the same way on every rank, over the dataset the DataLoader reads:

```python
sampler = DistributedSampler(dataset, num_replicas=dist.get_world_size(), rank=dist.get_rank(), seed=0)
loader = DataLoader(dataset, batch_size=B, sampler=sampler)   # no shuffle=True next to a sampler
```""",
        says="Each rank must read a disjoint slice and together they must read everything, or some samples are trained on twice per epoch and others never; unequal slices make the ranks run different numbers of steps and hang at the last all-reduce.",
        does="DistributedSampler(dataset, num_replicas=dist.get_world_size(), rank=dist.get_rank())  # same dataset and seed on every rank",
    ),
    FindingDoc(
        id="smoke-checkpoint",
        severity="ok",
        area="verifications",
        emitted_by="[`gpudoctor train-smoke`](../commands/train-smoke.md)",
        summary="""Checkpointing is right: rank 0 alone wrote `model.module.state_dict()` (no `module.`
prefix on its keys); the file reloads into the plain, unwrapped model and gives the same
outputs as the live model on a probe batch; no other rank wrote a file, and the file on
disk at the end is the one rank 0 wrote.""",
        evidence="`path`, `keys`, `output_max_diff`.",
        why="Nothing is wrong.",
        fix="Nothing to fix. `--save PATH` keeps the checkpoint.",
    ),
    FindingDoc(
        id="smoke-gradient-averaging",
        severity="ok",
        area="verifications",
        emitted_by="[`gpudoctor train-smoke`](../commands/train-smoke.md)",
        summary="""DDP's gradient averaging is right: one more step taken by N ranks with batch B each moved
the parameters as one process taking the same step on the concatenated N×B batch, within
the stated tolerance (relative 1e-4 in float32, 5e-2 under `--amp`). The single-process
reference is computed inside rank 0, outside the timed loop, from the same starting
parameters.""",
        evidence="`relative_error` (max |update_DDP − update_reference| / max |update_reference|), `tolerance`, `max_abs_diff`.",
        why="Nothing is wrong: the all-reduce averages exactly what the mathematics of DDP promises.",
        fix="Nothing to fix.",
    ),
    FindingDoc(
        id="smoke-learning",
        severity="ok",
        area="verifications",
        emitted_by="[`gpudoctor train-smoke`](../commands/train-smoke.md)",
        summary="""The reference job learned: the evaluation loss (a fixed held-out set from the same linear
teacher) fell by at least the stated factor (10×) between the start and the end of the
run. The model can fit the teacher exactly, so the loss floor is 0.""",
        evidence="`initial_loss`, `final_loss`, `factor`, `required`.",
        why="Nothing is wrong: the gradients that reached the optimizer moved the model the right way.",
        fix="Nothing to fix.",
    ),
    FindingDoc(
        id="smoke-sharding",
        severity="ok",
        area="verifications",
        emitted_by="[`gpudoctor train-smoke`](../commands/train-smoke.md)",
        summary="""The ranks' `DistributedSampler` shards were checked and are right: for epoch 0 the
indices of all ranks are disjoint and together cover the whole dataset (apart from the
few indices `DistributedSampler` repeats to give every rank the same count, which the
line states), and `set_epoch(1)` gives every shard a new order. The line also shows what
happens without `set_epoch`: a twin sampler that never calls it returns epoch 0's order
again.""",
        evidence="`dataset_size`, `samples_per_rank`, `padding` (indices repeated to even out the shards), `order_repeats_without_set_epoch`.",
        why="""Nothing is wrong. The check proves that this torch's sampler shards the data as DDP
expects, and shows why the `set_epoch` call matters.""",
        fix="Nothing to fix. In your own loop keep `sampler.set_epoch(epoch)` at the top of every epoch.",
    ),
    FindingDoc(
        id="smoke-sync",
        severity="ok",
        area="verifications",
        emitted_by="[`gpudoctor train-smoke`](../commands/train-smoke.md)",
        summary="""All ranks held bit-identical parameters at every sync point during training (every
quarter of the run) and at the end: a SHA-256 digest of each parameter, compared across
ranks.""",
        evidence="`sync_points` (the steps compared), `ranks`.",
        why="Nothing is wrong: every rank applied the same averaged gradient at every step.",
        fix="Nothing to fix.",
    ),
)
