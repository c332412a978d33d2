"""--compare-dp: the same job under nn.DataParallel (one process, one thread per
GPU), for DDP's speed-up over it. DataParallel scatters each N*B batch over the
GPUs and gathers the outputs on GPU 0 every step; DDP runs one process per GPU.

Run as a single supervised rank (`launch_function("gpudoctor.commands.train_smoke.dp:run_dp", ...)`,
nproc 1), so a hang or crash here is reported like any other rank's.
"""

from __future__ import annotations

import time

from gpudoctor.commands.train_smoke.config import SmokeConfig, no_full_batch
from gpudoctor.commands.train_smoke.rank import amp_context, amp_setup, make_data, make_model, train_step
from gpudoctor.commands.train_smoke.result import DataParallelRun


def run_dp(ctx, cfg: SmokeConfig) -> DataParallelRun:
    import torch
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, RandomSampler, TensorDataset

    if problem := no_full_batch(cfg.global_batch, cfg.dataset_size):
        raise ValueError(problem)  # options.py refuses it first; never loop on an empty loader
    gpus = min(cfg.nproc, torch.cuda.device_count()) if cfg.device == "cuda" else 0
    device = torch.device("cuda", 0) if gpus else torch.device("cpu")
    x, y, _, _ = make_data(torch, cfg)
    dataset = TensorDataset(x, y)
    global_batch = cfg.global_batch  # what the N DDP ranks consume per step together
    sampler = RandomSampler(dataset, generator=torch.Generator().manual_seed(cfg.seed))
    loader = DataLoader(dataset, batch_size=global_batch, sampler=sampler, pin_memory=bool(gpus), drop_last=True)
    model = torch.nn.DataParallel(make_model(torch, cfg).to(device), device_ids=list(range(gpus)) or None)  # gpudoctor: ignore[dataparallel] (the comparison DDP is measured against)
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.step_lr, momentum=cfg.momentum)
    # the DDP job's step, autocast dtype and GradScaler: the two arms do the same work
    amp_dtype, scaler = amp_setup(torch, cfg, bool(gpus))
    amp = amp_context(torch, cfg, device, amp_dtype)
    ctx.progress("dp-train", 0)
    step = 0
    start = time.perf_counter()
    while step < cfg.steps:
        for xb, yb in loader:
            xb, yb = xb.to(device, non_blocking=True), yb.to(device, non_blocking=True)
            loss = train_step(F, model, xb, yb, optimizer, amp, scaler)
            step += 1
            if step >= cfg.steps:
                break
    if gpus:
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    ctx.progress("finished", step)
    return DataParallelRun(
        gpus=gpus,
        steps=step,
        global_batch=global_batch,
        seconds=seconds,
        steps_per_s=step / seconds if seconds > 0 else None,
        samples_per_s=step * global_batch / seconds if seconds > 0 else None,
        final_loss=float(loss.detach()),
    )
