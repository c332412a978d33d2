"""Hooks on torch.distributed: learn this process's rank when it joins, and
look at which GPU an NCCL rank is on (right after init_process_group, and again
when DistributedDataParallel is built: many scripts set the device in between).

Everything here fails soft: on a machine without CUDA (or NCCL) the facts say
so and no finding comes of it.
"""

from __future__ import annotations

import functools
import os

import torch
import torch.distributed as dist
from torch.distributed import distributed_c10d

from gpudoctor.launch.rank import STAGE_JOINED, STAGE_RENDEZVOUS
from gpudoctor.hooks.facts import NcclDevice
from gpudoctor.core.frames import drop_own_frame
from gpudoctor.hooks.session import RANK, session


def _int_env(name: str) -> int | None:
    value = os.environ.get(name, "")
    return int(value) if value.isdigit() else None


def nccl_device_fact(backend: str, when: str, device_id=None) -> NcclDevice:
    """What a rank's GPU looks like now. Reads CUDA only when it is usable."""
    count = current = None
    note = ""
    try:
        if torch.cuda.is_available():
            count = torch.cuda.device_count()
            if isinstance(device_id, torch.device) and device_id.index is not None:
                current = device_id.index  # the process group was bound to this device
            elif isinstance(device_id, int):
                current = device_id
            else:
                current = torch.cuda.current_device()
        else:
            note = "CUDA is not available in this process"
    except Exception as exc:  # noqa: BLE001 - an unreadable device is a fact, not a crash
        note = f"{type(exc).__name__}: {exc}"
    return NcclDevice(
        rank=session.current_rank(),
        backend=backend,
        local_rank=_int_env("LOCAL_RANK"),
        local_world_size=_int_env("LOCAL_WORLD_SIZE"),
        visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES"),
        device_count=count,
        current_device=current,
        when=when,
        note=note,
    )


def progress(stage: str) -> None:
    """Heartbeats for the supervisor of `gpudoctor run --nproc` (it tells a rank
    that never joined from one that hung later)."""
    if session.role != RANK:
        return
    try:
        from gpudoctor.launch.rank import join_context

        ctx = join_context()
        if ctx is not None:
            ctx.progress(stage, 0)
    except Exception:  # noqa: BLE001
        pass


def _note_rendezvous(init_method, store) -> None:
    """A rank of `run --nproc`: where it goes to meet its peers (its init_method's
    tcp://host:port, else MASTER_ADDR:MASTER_PORT as env:// reads them at this moment,
    after whatever the script set), for the report of a rendezvous that never completes."""
    if session.role != RANK or store is not None:
        return
    try:
        from gpudoctor.launch import rundir

        run_dir, rank = os.environ.get(rundir.RUN_DIR_ENV), os.environ.get("RANK", "")
        if not run_dir or not rank.isdigit():
            return
        if isinstance(init_method, str) and init_method.startswith("tcp://"):
            address = init_method[len("tcp://"):].split("?")[0].split("/")[0]
        elif init_method in (None, "env://"):
            address = f"{os.environ.get('MASTER_ADDR', '')}:{os.environ.get('MASTER_PORT', '')}"
        else:
            return
        rundir.write_rendezvous(run_dir, int(rank), address)
    except Exception:  # noqa: BLE001 - the script's rendezvous matters, not this note
        pass


def _joined(device_id=None) -> None:
    session.rank = dist.get_rank()
    session.world_size = dist.get_world_size()
    backend = str(dist.get_backend())
    if "nccl" in backend.lower():
        session.record(nccl_device_fact(backend, "init_process_group", device_id))


def install() -> None:
    original_init = distributed_c10d.init_process_group

    @functools.wraps(original_init)
    def init_process_group(*args, **kwargs):
        _note_rendezvous(kwargs.get("init_method"), kwargs.get("store"))
        progress(STAGE_RENDEZVOUS)
        try:
            result = original_init(*args, **kwargs)
        except BaseException as exc:
            drop_own_frame(exc)
            raise
        progress(STAGE_JOINED)
        try:
            _joined(kwargs.get("device_id"))
        except Exception:  # noqa: BLE001
            pass
        return result

    dist.init_process_group = init_process_group
    distributed_c10d.init_process_group = init_process_group

    from torch.nn.parallel import DistributedDataParallel

    original_ddp_init = DistributedDataParallel.__init__

    @functools.wraps(original_ddp_init)
    def ddp_init(self, *args, **kwargs):
        try:
            original_ddp_init(self, *args, **kwargs)
        except BaseException as exc:
            drop_own_frame(exc)
            raise
        try:
            backend = str(dist.get_backend())
            if "nccl" in backend.lower():
                session.record(nccl_device_fact(backend, "DistributedDataParallel"))
        except Exception:  # noqa: BLE001
            pass

    setattr(DistributedDataParallel, "__init__", ddp_init)
