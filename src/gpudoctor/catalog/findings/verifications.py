"""Findings in the area "verifications"."""

from __future__ import annotations

from gpudoctor.catalog.kind import FindingKind
from gpudoctor.core.findings import Severity

AREA = "verifications"
EMITTED_BY = "[`gpudoctor train-smoke`](../commands/train-smoke.md)"


CHECKPOINT_MODULE_PREFIX = FindingKind(
    id="checkpoint-module-prefix",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""The keys in the saved checkpoint start with `module.`: the DDP wrapper's
`state_dict()` was saved instead of the model's.""",
    evidence="`path`, `prefixed_keys` (the first few).",
    title="checkpoint: {prefixed} of {keys} saved keys start with 'module.' (the DDP wrapper was saved)",
    why="DDP's state_dict prefixes every key with 'module.'; the plain model cannot load it without renaming every key.",
    fix="torch.save(model.module.state_dict(), path)",
)


CHECKPOINT_RELOAD_MISMATCH = FindingKind(
    id="checkpoint-reload-mismatch",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""The checkpoint rank 0 wrote did not load into the plain model, or loaded and gave
different outputs from the live model on the same probe batch (beyond 1e-6).""",
    evidence="`path`, `load_error`, `output_max_diff`, `tolerance`.",
    title={
        "load-failed": "checkpoint: reloading {path} into the plain model failed: {error}",
        "outputs-differ": "checkpoint: the reloaded model's outputs differ from the live model's by {diff:.3g} > {tolerance:g}",
    },
    why="A checkpoint that does not reload into the model class, or reloads to different outputs, cannot resume training or serve.",
    fix="model.load_state_dict(torch.load(path, map_location='cpu', weights_only=True))   # on the plain (unwrapped) model",
)


CHECKPOINT_WRITTEN_BY_MANY = FindingKind(
    id="checkpoint-written-by-many",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""A rank other than 0 also wrote the checkpoint (or rank 0 wrote it more than once). The
title says when the file on disk is no longer the one rank 0 saved (another rank
overwrote it).""",
    evidence="`path`, `files_written_per_rank`, `rank0_sha256`, `sha256_at_end`, `keys_at_end` and `module_prefixed_at_end` (when the file was overwritten), `injected` (when `GPUDOCTOR_FAULT=<rank>:saveall` caused it).",
    # {ranks}: "rank 1" or "ranks 1, 2"
    title={
        "also": "checkpoint: {ranks} also wrote {path}",
        "overwritten": "checkpoint: {ranks} also wrote {path}; the file on disk is no longer the one rank 0 saved",
    },
    why="Every rank that saves writes the same file at the same time: the writes race, the last one wins and may be a half-written or a differently wrapped state_dict; N ranks also cost N times the I/O.",
    fix="if dist.get_rank() == 0: torch.save(model.module.state_dict(), path)   # then dist.barrier() before any rank reads it",
)


GRADIENT_AVERAGE_WRONG = FindingKind(
    id="gradient-average-wrong",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""N ranks × batch B did not take the same step as one process on the concatenated N×B
batch: the relative difference of the parameter updates is above the tolerance. The
title names the parameter that differs most. The check runs on rank 0, from parameters
made identical first (a divergence is reported by `ranks-diverged`, not here).""",
    evidence="`relative_error`, `tolerance`, `max_abs_diff`, `max_update`, `worst_parameter`, `per_parameter_diff`, `ranks`, `batch_per_rank`, `checked_on`, `injected` (when `GPUDOCTOR_FAULT=<rank>:badgrad` caused it).",
    title="gradient-averaging: {ranks} ranks × batch {batch} moved the parameters differently from 1 process on "
    "{reference} samples: relative error {error:.3g} > {tolerance:g} (worst: {param!r})",
    why="DDP's promise is that N ranks with batch B take the same step as one process with the N*B batch; it breaks when ranks scale their loss differently, edit gradients before the all-reduce, or a comm hook sums without dividing by the world size.",
    fix="loss = criterion(output, target)   # the same mean-reduced loss on every rank; no per-rank scaling or gradient edits before backward() returns",
)


LOSS_NOT_FALLING = FindingKind(
    id="loss-not-falling",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""The evaluation loss of the reference job fell by less than the stated factor (10×), or
rose, over the run. The title names the worst rank and the factor reached.""",
    evidence="`rank`, `initial_loss`, `final_loss`, `factor`, `required`, `steps`, `per_rank_factor`.",
    title={
        "diverged": "learning: rank {rank}'s evaluation loss became {final} in {steps} steps (from {initial:.3g})",
        "rose": "learning: rank {rank}'s evaluation loss rose {ratio:.3g}× ({initial:.3g} → {final:.3g}) in {steps} steps; "
        "≥ {required:g}× required",
        "fell": "learning: rank {rank}'s evaluation loss fell only {ratio:.3g}× ({initial:.3g} → {final:.3g}) in {steps} steps; "
        "≥ {required:g}× required",
    },
    why="The reference job learns a linear teacher that the model can fit exactly; when its loss does not fall, the updates reaching the optimizer are wrong (a broken all-reduce, AMP overflow) or the run was too short.",
    # {more_steps}: twice the steps run, at least 200
    fix="gpudoctor train-smoke --steps {more_steps}   # still failing: read the gradient-averaging line",
)


RANKS_DIVERGED = FindingKind(
    id="ranks-diverged",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""At least one rank held different parameters from the others. The title names the
diverged rank(s) (judged against the digest most ranks hold; with two ranks, against
rank 0), the first sync point where they differed, the first parameter that differs,
and the largest element-wise difference between any two ranks.""",
    evidence="`diverged_ranks`, `first_diverged_step` (null when only the final digests differ), `sync_points`, `first_parameter`, `rank`, `max_abs_difference` (of that parameter), `max_abs_difference_any_parameter`, `injected` (when `GPUDOCTOR_FAULT=<rank>:nosync` caused it).",
    # {ranks} {hold}: "rank 2 holds" or "ranks 1, 2 hold"
    title={
        "from-step": "synchronisation: {ranks} {hold} different parameters from the other ranks from step {step}; "
        "first diverged parameter {param!r} on rank {rank}, max |difference| {difference:.3g}",
        "after-training": "synchronisation: {ranks} {hold} different parameters from the other ranks after training; "
        "first diverged parameter {param!r} on rank {rank}, max |difference| {difference:.3g}",
    },
    why="DDP keeps replicas identical only if every rank applies the same averaged gradient: a rank that steps under no_sync(), edits its gradients after the all-reduce, or has its own optimizer state drifts away, and the model saved from rank 0 is not the one the others trained.",
    fix="with model.no_sync() if (i + 1) % accum_steps else contextlib.nullcontext():   # leave no_sync() on the step that calls optimizer.step()",
)


SAMPLER_ORDER_FIXED = FindingKind(
    id="sampler-order-fixed",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""`set_epoch(1)` did not change the order of a rank's shard: epochs 0 and 1 read the
samples in the same sequence.""",
    evidence="`ranks` (those whose order did not change), `first_indices_epoch0`.",
    title="sharding: set_epoch(1) did not change the sample order of {ranks}",
    why="Without a new order every epoch, each rank sees its samples in the same sequence every epoch, which hurts convergence.",
    fix="sampler.set_epoch(epoch)   # first line of every epoch, before iterating the DataLoader",
)


SAMPLER_SHARDS_WRONG = FindingKind(
    id="sampler-shards-wrong",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""The ranks' `DistributedSampler` shards for one epoch are not a partition of the dataset:
some indices are read by more than one rank (beyond the padding `DistributedSampler`
adds), some by none, or the ranks got different numbers of samples.""",
    evidence="`dataset_size`, `ranks`, `samples_per_rank`, `shared_indices` / `shared_count`, `expected_padding`, `missing_indices` / `missing_count`, `out_of_range` (if any).",
    title="sharding: the ranks' DistributedSampler shards are not a partition of the {n} samples "
    "({shared} shared, {missing} missing, per-rank sizes {lengths})",
    why="Each rank must read a disjoint slice and together they must read everything, or some samples are trained on twice per epoch and others never; unequal slices make the ranks run different numbers of steps and hang at the last all-reduce.",
    fix="DistributedSampler(dataset, num_replicas=dist.get_world_size(), rank=dist.get_rank())  # same dataset and seed on every rank",
)


SMOKE_CHECKPOINT = FindingKind(
    id="smoke-checkpoint",
    severity=Severity.OK,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""Checkpointing is right: rank 0 alone wrote `model.module.state_dict()` (no `module.`
prefix on its keys); the file reloads into the plain, unwrapped model and gives the same
outputs as the live model on a probe batch; no other rank wrote a file, and the file on
disk at the end is the one rank 0 wrote.""",
    evidence="`path`, `keys`, `output_max_diff`.",
    title="checkpoint: only rank 0 wrote model.module.state_dict() ({keys} keys, no 'module.' prefix); "
    "it reloads into the plain model with the same outputs (max difference {diff:g})",
    more_why="Nothing is wrong.",
    more_fix="Nothing to fix. `--save PATH` keeps the checkpoint.",
)


SMOKE_GRADIENT_AVERAGING = FindingKind(
    id="smoke-gradient-averaging",
    severity=Severity.OK,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""DDP's gradient averaging is right: one more step taken by N ranks with batch B each moved
the parameters as one process taking the same step on the concatenated N×B batch, within
the stated tolerance (relative 1e-4 in float32, 5e-2 under `--amp`). The single-process
reference is computed inside rank 0, outside the timed loop, from the same starting
parameters.""",
    evidence="`relative_error` (max |update_DDP − update_reference| / max |update_reference|), `tolerance`, `max_abs_diff`.",
    title="gradient-averaging: {ranks} × batch {batch} == 1 process × batch {reference}: relative error {error:.2g} ≤ {tolerance:g}",
    more_why="Nothing is wrong: the all-reduce averages exactly what the mathematics of DDP promises.",
    more_fix="Nothing to fix.",
)


SMOKE_LEARNING = FindingKind(
    id="smoke-learning",
    severity=Severity.OK,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""The reference job learned: the evaluation loss (a fixed held-out set from the same linear
teacher) fell by at least the stated factor (10×) between the start and the end of the
run. The model can fit the teacher exactly, so the loss floor is 0.""",
    evidence="`initial_loss`, `final_loss`, `factor`, `required`.",
    title="learning: eval loss {initial:.3g} → {final:.3g} in {steps} steps: {factor:.3g}× lower "
    "(≥ {required:g}× required; the teacher's loss is 0)",
    more_why="Nothing is wrong: the gradients that reached the optimizer moved the model the right way.",
    more_fix="Nothing to fix.",
)


SMOKE_SHARDING = FindingKind(
    id="smoke-sharding",
    severity=Severity.OK,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""The ranks' `DistributedSampler` shards were checked and are right: for epoch 0 the
indices of all ranks are disjoint and together cover the whole dataset (apart from the
few indices `DistributedSampler` repeats to give every rank the same count, which the
line states), and `set_epoch(1)` gives every shard a new order. The line also shows what
happens without `set_epoch`: a twin sampler that never calls it returns epoch 0's order
again.""",
    evidence="`dataset_size`, `samples_per_rank`, `padding` (indices repeated to even out the shards), `order_repeats_without_set_epoch`.",
    # {padding}: " (+N repeated to even out the shards)" when DistributedSampler pads
    title={
        "reorders": "sharding: {ranks} × {per_rank} indices: disjoint, cover all {n}{padding}; set_epoch(1) reorders each shard",
        "repeats-without": "sharding: {ranks} × {per_rank} indices: disjoint, cover all {n}{padding}; set_epoch(1) reorders "
        "each shard, and without set_epoch epoch 1 repeats epoch 0's order",
    },
    more_why="""Nothing is wrong. The check proves that this torch's sampler shards the data as DDP
expects, and shows why the `set_epoch` call matters.""",
    more_fix="Nothing to fix. In your own loop keep `sampler.set_epoch(epoch)` at the top of every epoch.",
)


SMOKE_SYNC = FindingKind(
    id="smoke-sync",
    severity=Severity.OK,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""All ranks held bit-identical parameters at every sync point during training (every
quarter of the run) and at the end: a SHA-256 digest of each parameter, compared across
ranks.""",
    evidence="`sync_points` (the steps compared), `ranks`.",
    title={
        "ranks": "synchronisation: {ranks} bit-identical at steps {steps} (sha256 of every parameter)",
        "one-rank": "synchronisation: 1 rank: digests taken at steps {steps}, nothing to compare",
    },
    more_why="Nothing is wrong: every rank applied the same averaged gradient at every step.",
    more_fix="Nothing to fix.",
)
