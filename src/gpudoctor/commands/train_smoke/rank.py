"""What one rank of `train-smoke` does: the reference DDP job, and the facts the
verifications need, gathered outside the timed training loop.

    sharding      this rank's DistributedSampler order for epochs 0 and 1 (with
                  set_epoch), and for two passes of a twin that never calls it
    training      S steps of DDP + SGD over DistributedSampler batches, timed;
                  a digest of the parameters every S/4 steps
    after         evaluation loss, per-parameter digests and the spread of every
                  parameter across ranks, the checkpoint (rank 0 writes it and
                  reloads it), one extra step checked against a single process
                  on the concatenated batch, DataLoader worker start-up

Started by the launcher (`launch_function("gpudoctor.commands.train_smoke.rank:run_rank", ...)`)
or in-process as one rank of a torchrun/SLURM job (cfg.gather: the ranks
all-gather their results so every rank holds all of them).
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import time
from dataclasses import dataclass, replace
from typing import Any

from gpudoctor.core.codec import decode, encode
from gpudoctor.commands.train_smoke.config import (
    FAULT_BADGRAD,
    FAULT_HANGWORKERS,
    FAULT_NOSYNC,
    FAULT_SAVEALL,
    SYNC_POINTS,
    SmokeConfig,
)
from gpudoctor.launch.contract import write_contract
from gpudoctor.launch.rank import held_stack_signal
from gpudoctor.commands.train_smoke.workers import worker_init, worker_startup
from gpudoctor.commands.train_smoke.result import (
    PARTIAL,
    AllRanks,
    CheckpointReport,
    GradientCheck,
    Learning,
    RankReport,
    Sharding,
    Sync,
    Throughput,
    WorkerStartup,
)

HEARTBEAT_S = 0.2  # a heartbeat is a file write: at most this often inside the timed loop
BADGRAD_SCALE = 0.5  # what `badgrad` does to the rank's gradient (learning still works, the average is wrong)
STAGE_TRAIN = "train"


def make_data(torch, cfg: SmokeConfig):
    """(x, y, eval_x, eval_y): Gaussian inputs and a fixed linear teacher y = x @ w,
    the same on every rank and in every process, from the seed alone."""
    g = torch.Generator().manual_seed(cfg.seed)
    x = torch.randn(cfg.dataset_size, cfg.features, generator=g)
    w = torch.randn(cfg.features, 1, generator=g) / cfg.features**0.5  # var(y) ~ 1
    eval_x = torch.randn(cfg.eval_size, cfg.features, generator=g)
    return x, x @ w, eval_x, eval_x @ w


def make_model(torch, cfg: SmokeConfig):
    """The student: a 2-layer MLP (it can represent the teacher exactly, so the loss can reach 0)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(cfg.seed)
        return torch.nn.Sequential(
            torch.nn.Linear(cfg.features, cfg.hidden),
            torch.nn.ReLU(),
            torch.nn.Linear(cfg.hidden, 1),
        )


@dataclass
class _Setup:
    """What the timed loop trains with."""

    device: Any
    dataset: Any
    sampler: Any
    loader: Any
    model: Any  # the plain module inside ddp
    ddp: Any
    optimizer: Any
    scaler: Any  # a GradScaler with --amp on CUDA, else None
    amp_dtype: Any
    sharding: Sharding  # the sampler's orders, taken before the model exists


@dataclass
class _Trained:
    """What the timed loop leaves: the first and last steps' losses, the digests
    taken at SYNC_POINTS, and the time spent training (the digests' time taken out)."""

    steps: int
    epochs: int  # epochs started (the last one may be partial)
    samples: int
    seconds: float
    first_loss: Any  # detached 0-dim tensors; None before any step
    last_loss: Any
    digests: list
    first_batch_s: float  # the wait for the first batch, before the clock: DataLoader workers start there


def run_rank(ctx, cfg: SmokeConfig) -> RankReport | AllRanks:
    """This rank's report; with cfg.gather every rank's (AllRanks)."""
    import torch

    on_cuda = cfg.device == "cuda"
    device = ctx.cuda_device() if on_cuda else torch.device("cpu")
    if not on_cuda:
        _share_cores(torch, ctx.local_world_size)
    dist = ctx.init_process_group(cfg.backend, timeout_s=cfg.timeout_s)
    rank, world = dist.get_rank(), dist.get_world_size()

    x, y, eval_x, eval_y = make_data(torch, cfg)
    setup = _set_up(torch, ctx, dist, cfg, device, x, y, rank, world)
    eval_x, eval_y = eval_x.to(device), eval_y.to(device)
    initial_loss = _eval_loss(torch, setup.model, eval_x, eval_y)
    trained = _train(torch, ctx, cfg, setup)
    ctx.progress("verify", cfg.steps + 1)
    learning, sync, checkpoint, gradient = _after_training(
        torch, ctx, dist, cfg, setup, trained, initial_loss, eval_x, eval_y, rank, world
    )
    report = RankReport(
        rank=rank,
        world_size=world,
        device=str(device),
        backend=cfg.backend,
        amp=cfg.amp,
        fault=ctx.fault,
        threads=torch.get_num_threads(),
        sharding=setup.sharding,
        learning=learning,
        sync=sync,
        checkpoint=checkpoint,
        gradient=gradient,
        workers=None,
        throughput=Throughput(
            steps=trained.steps,
            batch_size=cfg.batch_size,
            seconds=trained.seconds,
            steps_per_s=trained.steps / trained.seconds if trained.seconds > 0 else None,
            samples=trained.samples,
            samples_per_s=trained.samples / trained.seconds if trained.seconds > 0 else None,
        ),
    )
    if cfg.num_workers > 0:
        report = replace(report, workers=_worker_startup(ctx, cfg, setup, trained, report))
    result: RankReport | AllRanks = report
    if cfg.gather:
        # Through the codec, as a result file would be: every rank checks the others' version.
        everyone: list = [None] * world
        dist.all_gather_object(everyone, encode(report))
        result = AllRanks(tuple(decode(RankReport, e, f"rank {r}'s report") for r, e in enumerate(everyone)))
    ctx.progress("finished", cfg.steps + 5)
    # DDP's reducer holds the group: release the model first, so the group is not torn
    # down under objects still using it (a bare gloo DDP loop that skipped this was seen
    # aborting at exit with "terminate called without an active exception").
    del setup, trained
    dist.destroy_process_group()
    return result


def _set_up(torch, ctx, dist, cfg: SmokeConfig, device, x, y, rank: int, world: int) -> _Setup:
    """The data, sampler, loader, DDP model, optimizer: a plain DDP job's set-up (and the injected fault)."""
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

    on_cuda = device.type == "cuda"
    dataset = TensorDataset(x, y)
    sampler: DistributedSampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True, seed=cfg.seed)
    loader_kw: dict = {"batch_size": cfg.batch_size, "sampler": sampler, "pin_memory": on_cuda}
    if cfg.num_workers > 0:
        loader_kw.update(
            num_workers=cfg.num_workers,
            persistent_workers=True,
            multiprocessing_context="spawn",
            worker_init_fn=worker_init,
        )
    loader = DataLoader(dataset, **loader_kw)
    ctx.progress("sharding", 0)
    sharding = _sampler_orders(DistributedSampler, dataset, sampler, world, rank, cfg.seed)
    model = make_model(torch, cfg).to(device)
    ddp = DDP(model, device_ids=[device.index] if on_cuda else None)
    _inject(dist, ctx.fault, ddp, model)
    amp_dtype, scaler = amp_setup(torch, cfg, on_cuda)
    return _Setup(
        device=device,
        dataset=dataset,
        sampler=sampler,
        loader=loader,
        model=model,
        ddp=ddp,
        optimizer=torch.optim.SGD(ddp.parameters(), lr=cfg.step_lr, momentum=cfg.momentum),
        scaler=scaler,
        amp_dtype=amp_dtype,
        sharding=sharding,
    )


def _train(torch, ctx, cfg: SmokeConfig, setup: _Setup) -> _Trained:
    """The timed loop: nothing in it but what a plain DDP loop does, a throttled
    heartbeat, and SYNC_POINTS digests whose time is taken out. What a plain loop
    would not pay for is decided before the clock starts: no autocast context
    without --amp (entering a disabled one costs ~8 us a step), no .to() of a
    batch that is already on the CPU, no per-step list of losses."""
    import torch.nn.functional as F

    device, sampler, model, ddp, optimizer, scaler = setup.device, setup.sampler, setup.model, setup.ddp, setup.optimizer, setup.scaler
    on_cuda = device.type == "cuda"
    amp = amp_context(torch, cfg, device, setup.amp_dtype)
    sync_every = max(1, cfg.steps // SYNC_POINTS)
    digests: list[tuple[int, str]] = []
    first_loss = loss = None
    paused = 0.0
    step = epoch = samples = 0
    last_beat = time.monotonic()
    ctx.progress(STAGE_TRAIN, 0)
    sampler.set_epoch(0)
    # The first batch is fetched before the clock: DataLoader workers start up there, a
    # cost measured on its own (dataloader-workers). With num_workers=0 that fetch takes
    # well under a millisecond.
    fetch = time.perf_counter()
    with held_stack_signal():  # the workers start here
        epoch_iter = iter(setup.loader)
    batches = itertools.chain([next(epoch_iter)], epoch_iter)
    start = time.perf_counter()
    first_batch_s = start - fetch
    while step < cfg.steps:
        for xb, yb in batches:
            ctx.fault_point(STAGE_TRAIN)
            now = time.monotonic()
            if step == 0 or now - last_beat >= HEARTBEAT_S:
                # "working on step k", after the fault point: a rank stuck there stays behind
                # the peers that wait for it in the all-reduce of step k.
                ctx.progress(STAGE_TRAIN, step + 1)
                last_beat = now
            if on_cuda:
                xb, yb = xb.to(device, non_blocking=True), yb.to(device, non_blocking=True)
            loss = train_step(F, ddp, xb, yb, optimizer, amp, scaler)
            if step == 0:
                first_loss = loss.detach()
            step += 1
            samples += len(yb)
            if step % sync_every == 0 or step == cfg.steps:
                if on_cuda:
                    torch.cuda.synchronize()  # queued work is training time, not digest time
                mark = time.perf_counter()
                digests.append((step, _model_digest(torch, model)))
                paused += time.perf_counter() - mark
            if step >= cfg.steps:
                break
        epoch += 1
        if step < cfg.steps:
            sampler.set_epoch(epoch)
            with held_stack_signal():
                batches = iter(setup.loader)
    del batches, epoch_iter
    if on_cuda:
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start - paused
    last_loss = loss.detach() if loss is not None else None
    return _Trained(step, epoch, samples, seconds, first_loss, last_loss, digests, first_batch_s)


def _after_training(
    torch, ctx, dist, cfg, setup: _Setup, trained: _Trained, initial_loss, eval_x, eval_y, rank, world
) -> tuple[Learning, Sync, CheckpointReport, GradientCheck | None]:
    """Outside the clock: learning, sync, checkpoint and the gradient check."""
    import torch.nn.functional as F

    model, device = setup.model, setup.device
    learning = Learning(
        initial_loss=initial_loss,
        final_loss=_eval_loss(torch, model, eval_x, eval_y),
        first_step_loss=float(trained.first_loss) if trained.first_loss is not None else None,
        last_step_loss=float(trained.last_loss) if trained.last_loss is not None else None,
        epochs=trained.epochs,
    )
    sync = Sync(
        checkpoints=tuple((step, digest) for step, digest in trained.digests),
        params={name: _digest(torch, p) for name, p in model.named_parameters()},
        spread=_param_spread(torch, dist, model),
    )
    ctx.progress("checkpoint", cfg.steps + 2)
    checkpoint = _checkpoint(torch, dist, ctx, cfg, rank, setup.ddp, model, device, eval_x)
    ctx.progress("gradient-check", cfg.steps + 3)
    gradient = _gradient_check(torch, F, dist, cfg, setup.ddp, model, setup.dataset, world, rank, device, setup.amp_dtype)
    return learning, sync, checkpoint, gradient


def _worker_startup(ctx, cfg: SmokeConfig, setup: _Setup, trained: _Trained, report: RankReport) -> WorkerStartup:
    """DataLoader worker start-up, measured last. The report so far is left in the run
    folder first: if the watchdog stops the job while workers start, the
    verifications already done are still shown (job.py reads it back)."""
    if ctx.run_dir and not cfg.gather:
        write_contract(os.path.join(ctx.run_dir, PARTIAL.format(rank=ctx.rank)), report)
    ctx.progress("dataloader-workers", cfg.steps + 4)
    while ctx.fault == FAULT_HANGWORKERS:
        time.sleep(60)
    return worker_startup(setup.loader, trained.first_batch_s, setup.dataset, setup.sampler, cfg)


def _share_cores(torch, local_world: int) -> None:
    """As torchrun does: ranks on one host split its cores instead of each taking all
    of them (oversubscribed CPU threads make every rank slower). OMP_NUM_THREADS wins."""
    if "OMP_NUM_THREADS" not in os.environ and local_world > 1:
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // local_world))


def amp_context(torch, cfg: SmokeConfig, device, dtype) -> Any:
    """What each step's forward runs under: autocast with --amp, else nothing (entering a
    disabled autocast context costs ~8 us a step)."""
    if cfg.amp:
        return lambda: torch.autocast(device.type, dtype=dtype)
    return contextlib.nullcontext


def train_step(F, model, xb, yb, optimizer, amp, scaler) -> Any:
    """One optimizer step; the DDP job and --compare-dp's DataParallel job both take it, so
    the two do the same work. fp16 autocast on CUDA comes with a GradScaler: without it
    small gradients underflow to zero and the step is a different one."""
    optimizer.zero_grad(set_to_none=True)
    with amp():
        loss = F.mse_loss(model(xb), yb)
    if scaler is not None:
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    else:
        loss.backward()
        optimizer.step()
    return loss


def amp_setup(torch, cfg: SmokeConfig, on_cuda: bool) -> tuple[Any, Any]:
    """(autocast dtype, GradScaler or None): float16 with a scaler on CUDA, bfloat16 on CPU."""
    return (torch.float16 if on_cuda else torch.bfloat16), (_grad_scaler(torch) if cfg.amp and on_cuda else None)


def _grad_scaler(torch):
    try:
        return torch.amp.GradScaler("cuda")
    except (AttributeError, TypeError):  # torch < 2.3
        return torch.cuda.amp.GradScaler()


def _inject(dist, fault: str | None, ddp, model) -> None:
    """The faults this command adds; each is what a real bug does to one rank."""
    if fault == FAULT_NOSYNC:
        # As if this rank trained under ddp.no_sync(): it keeps its own gradient and never
        # takes the average. A real no_sync() on one rank alone would leave its peers waiting
        # in the all-reduce forever (a hang, the launcher's finding); this rank still joins
        # the all-reduce so that its peers go on and the divergence can be measured.
        def keep_local_gradient(state, bucket):
            local = bucket.buffer().clone()
            shared = bucket.buffer().div_(dist.get_world_size())  # the peers still get a true average
            fut = dist.all_reduce(shared, async_op=True).get_future()
            return fut.then(lambda _: local)

        ddp.register_comm_hook(None, keep_local_gradient)
    elif fault == FAULT_BADGRAD:
        # A tensor hook runs before DDP's reducer reads the gradient: the rank sends a
        # wrong gradient into the average (as a per-rank loss scale bug would).
        for p in model.parameters():
            p.register_hook(lambda g: g * BADGRAD_SCALE)


def _sampler_orders(sampler_cls, dataset, sampler, world: int, rank: int, seed: int) -> Sharding:
    """The training sampler's order for epochs 0 and 1, and a twin's two passes without set_epoch."""
    sampler.set_epoch(0)
    epoch0 = list(sampler)
    sampler.set_epoch(1)
    epoch1 = list(sampler)
    twin = sampler_cls(dataset, num_replicas=world, rank=rank, shuffle=True, seed=seed)
    return Sharding(
        dataset_size=len(dataset),
        total_size=sampler.total_size,
        epoch0=tuple(epoch0),
        epoch1=tuple(epoch1),
        unset0=tuple(twin),
        unset1=tuple(twin),
    )


def _eval_loss(torch, model, x, y) -> float:
    import torch.nn.functional as F

    with torch.no_grad():
        return float(F.mse_loss(model(x), y))


def _tensor_bytes(torch, tensor) -> bytes:
    # Through a list, not through numpy: torch does not require numpy, and neither does gpudoctor.
    # The smoke model is a few thousand parameters, so the list costs well under a millisecond.
    return bytes(tensor.detach().reshape(-1).cpu().contiguous().view(torch.uint8).tolist())


def _digest(torch, tensor) -> str:
    return hashlib.sha256(_tensor_bytes(torch, tensor)).hexdigest()[:16]


def _model_digest(torch, model) -> str:
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(_tensor_bytes(torch, p))
    return h.hexdigest()[:16]


def _param_spread(torch, dist, model) -> dict[str, float]:
    """Per parameter, the largest element-wise difference between any two ranks
    (element-wise max over ranks minus min over ranks): the size of a divergence."""
    flat = torch.cat([p.detach().reshape(-1).float() for p in model.parameters()])
    high, low = flat.clone(), flat.clone()
    dist.all_reduce(high, op=dist.ReduceOp.MAX)
    dist.all_reduce(low, op=dist.ReduceOp.MIN)
    gap = (high - low).cpu()
    out, offset = {}, 0
    for name, p in model.named_parameters():
        n = p.numel()
        out[name] = float(gap[offset : offset + n].max()) if n else 0.0
        offset += n
    return out


def _checkpoint(torch, dist, ctx, cfg, rank, ddp, model, device, probe) -> CheckpointReport:
    """Rank 0 saves model.module.state_dict(), reloads it into a plain model and compares
    outputs; every rank reports the files it wrote; rank 0 re-reads the file at the end."""
    path = cfg.checkpoint_path
    wrote: list[str] = []
    saved = None
    reloaded = _Reloaded()
    if rank == 0:
        _save(torch, model.state_dict(), path)
        wrote.append(path)
        saved = _file_sha(path)
        reloaded = _reload(torch, cfg, path, model, device, probe)
    dist.barrier()
    if ctx.fault == FAULT_SAVEALL:
        # The unguarded line `torch.save(model.state_dict(), path)` that every rank runs.
        torch.save(ddp.state_dict(), path)  # gpudoctor: ignore[save-ddp-wrapper] (the injected fault)
        wrote.append(path)
    dist.barrier()
    at_end = None
    keys_at_end: tuple[str, ...] = ()
    keys_at_end_error = None
    if rank == 0:
        at_end = _file_sha(path)
        if at_end != saved:
            try:
                keys_at_end = tuple(torch.load(path, map_location="cpu", weights_only=True))
            except Exception as exc:  # noqa: BLE001 - a clobbered file is evidence, not a crash
                keys_at_end_error = f"{type(exc).__name__}: {exc}"[:300]
    return CheckpointReport(
        path=path,
        wrote=tuple(wrote),
        sha256=saved,
        sha256_at_end=at_end,
        keys=reloaded.keys,
        load_error=reloaded.load_error,
        output_max_diff=reloaded.output_max_diff,
        keys_at_end=keys_at_end,
        keys_at_end_error=keys_at_end_error,
    )


@dataclass(frozen=True)
class _Reloaded:
    """Rank 0's checkpoint read back into a plain model."""

    keys: tuple[str, ...] = ()
    load_error: str | None = None
    output_max_diff: float | None = None


def _reload(torch, cfg, path, model, device, probe) -> _Reloaded:
    try:
        state = torch.load(path, map_location=device, weights_only=True)
    except Exception as exc:  # noqa: BLE001
        return _Reloaded(load_error=f"{type(exc).__name__}: {exc}"[:300])
    keys = tuple(state)
    plain = make_model(torch, cfg).to(device)
    try:
        plain.load_state_dict(state)
    except RuntimeError as exc:
        return _Reloaded(keys, load_error=str(exc).strip().splitlines()[0][:300])
    with torch.no_grad():
        return _Reloaded(keys, output_max_diff=float((plain(probe) - model(probe)).abs().max()))


def _save(torch, state, path: str) -> None:
    """torch.save through the one writer of user-named outputs (core/user_file.py): the
    checkpoint replaces `path` at once, a private file, never through what is there."""
    import io

    from gpudoctor.core.user_file import write_output

    buffer = io.BytesIO()
    torch.save(state, buffer)
    write_output(path, buffer.getvalue())


def _file_sha(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()[:16]
    except OSError:
        return None


def _first_batch(sampler_cls, dataset, world: int, rank: int, seed: int, batch: int) -> list[int]:
    s = sampler_cls(dataset, num_replicas=world, rank=rank, shuffle=True, seed=seed)
    s.set_epoch(0)
    return list(s)[:batch]


def _gradient_check(torch, F, dist, cfg, ddp, model, dataset, world, rank, device, amp_dtype) -> GradientCheck | None:
    """One more DDP step, from parameters made identical first, on every rank's first
    batch; rank 0 takes the same step as a single process on the N*B concatenated batch.
    Plain SGD (no momentum), so each parameter moves by exactly -lr * its gradient."""
    from torch.utils.data import DistributedSampler

    with torch.no_grad():
        for p in model.parameters():
            dist.broadcast(p, 0)  # a divergence is the sync check's business, not this one's
    before = [p.detach().clone() for p in model.parameters()]
    x, y = dataset.tensors
    mine = _first_batch(DistributedSampler, dataset, world, rank, cfg.seed, cfg.batch_size)
    step = torch.optim.SGD(ddp.parameters(), lr=cfg.step_lr)
    step.zero_grad(set_to_none=True)
    with torch.autocast(device.type, dtype=amp_dtype, enabled=cfg.amp):
        loss = F.mse_loss(ddp(x[mine].to(device)), y[mine].to(device))
    loss.backward()
    step.step()
    if rank != 0:
        return None
    everyone = [i for r in range(world) for i in _first_batch(DistributedSampler, dataset, world, r, cfg.seed, cfg.batch_size)]
    reference = make_model(torch, cfg).to(device)
    with torch.no_grad():
        for q, b in zip(reference.parameters(), before):
            q.copy_(b)
    ref_step = torch.optim.SGD(reference.parameters(), lr=cfg.step_lr)
    with torch.autocast(device.type, dtype=amp_dtype, enabled=cfg.amp):
        ref_loss = F.mse_loss(reference(x[everyone].to(device)), y[everyone].to(device))
    ref_loss.backward()
    ref_step.step()
    worst_name, worst_diff, scale = "", 0.0, 0.0
    per_param = {}
    with torch.no_grad():
        for (name, p), q, b in zip(model.named_parameters(), reference.parameters(), before):
            diff = float(((p - b) - (q - b)).abs().max())
            per_param[name] = diff
            scale = max(scale, float((q - b).abs().max()))
            if diff > worst_diff:
                worst_name, worst_diff = name, diff
    return GradientCheck(
        ranks=world,
        batch_per_rank=len(mine),
        reference_batch=len(everyone),
        max_abs_diff=worst_diff,
        max_update=scale,
        relative_error=worst_diff / scale if scale > 0 else 0.0,
        worst_param=worst_name,
        per_param=per_param,
        tolerance=cfg.grad_tolerance,
    )
