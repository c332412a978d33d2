"""Hooks on torch.utils.data: a DistributedSampler iterated twice with the same
epoch, and DataLoader workers re-created every epoch (timed: iter(loader) to
its first batch). Both run once per epoch, never per batch: the first batch of
a new set of workers is timed by a hook on that one iterator, which removes
itself when the batch is there."""

from __future__ import annotations

import multiprocessing
import sys
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from torch.utils.data import DataLoader, DistributedSampler

from gpudoctor.hooks.facts import LoaderRestarts, SamplerEpochRepeat, Source
from gpudoctor.core.frames import caller_source, drop_own_frame
from gpudoctor.hooks.session import session


@dataclass
class _SamplerTally:
    sampler_type: str
    num_replicas: int
    dataset_len: int | None
    epochs: list[int] = field(default_factory=list)
    repeated: int | None = None
    source: Source | None = None


@dataclass
class _LoaderTally:
    num_workers: int
    persistent: bool
    start_method: str
    startup_s: list[float] = field(default_factory=list)
    source: Source | None = None


class _Tallies:
    """One tally per live object. Keyed by id() but checked through a weak
    reference: a new sampler may get the id of one already collected, and must
    not inherit its epochs."""

    def __init__(self):
        self.by_id: dict[int, tuple[Callable[[], Any], Any]] = {}
        self.all: list[Any] = []  # every tally, including those of collected objects

    def get(self, obj: Any, make: Callable[[], Any]) -> Any:
        entry = self.by_id.get(id(obj))
        if entry is not None and entry[0]() is obj:
            return entry[1]
        tally = make()
        ref: Callable[[], Any]
        try:
            ref = weakref.ref(obj)
        except TypeError:
            ref = lambda: obj  # noqa: E731 - no weak references: keep it (rare)
        self.by_id[id(obj)] = (ref, tally)
        self.all.append(tally)
        return tally

    def __contains__(self, obj: Any) -> bool:
        entry = self.by_id.get(id(obj))
        return entry is not None and entry[0]() is obj


_samplers = _Tallies()
_loaders = _Tallies()


def _sampler_facts() -> list[SamplerEpochRepeat]:
    rank = session.current_rank()
    return [
        SamplerEpochRepeat(
            rank=rank,
            sampler_type=t.sampler_type,
            epoch=t.repeated,
            iterations=len(t.epochs),
            num_replicas=t.num_replicas,
            dataset_len=t.dataset_len,
            source=t.source,
        )
        for t in _samplers.all
        if t.repeated is not None
    ]


def _loader_facts() -> list[LoaderRestarts]:
    rank = session.current_rank()
    lightning = "lightning" in sys.modules or "pytorch_lightning" in sys.modules
    return [
        LoaderRestarts(
            rank=rank,
            spawned_rank=session.spawn_index is not None,
            start_method=t.start_method,
            num_workers=t.num_workers,
            persistent_workers=t.persistent,
            startup_s=tuple(t.startup_s),
            lightning=lightning,
            source=t.source,
        )
        for t in _loaders.all
        if len(t.startup_s) >= 2
    ]


def _len(dataset: Any) -> int | None:
    try:
        return len(dataset)
    except TypeError:
        return None


def _start_method(loader: DataLoader) -> str:
    ctx = loader.multiprocessing_context
    if ctx is not None:
        return ctx.get_start_method()
    # allow_none: asking must not fix the default, or a later set_start_method() would fail.
    return multiprocessing.get_start_method(allow_none=True) or multiprocessing.get_all_start_methods()[0]


def _time_first_batch(it: Any, start: float, tally: _LoaderTally) -> None:
    """Time the iterator's first batch with an instance attribute that shadows
    its class's `_next_data` once, then deletes itself: the batches after it
    go straight to torch. A weak reference, so that an iterator never consumed
    is still freed (and its workers shut down) as soon as it is dropped."""
    ref = weakref.ref(it)

    def first_next_data():
        this = ref()
        assert this is not None  # called through the iterator itself, so it is alive
        del this.__dict__["_next_data"]
        try:
            data = this._next_data()
        except BaseException as exc:
            drop_own_frame(exc)
            raise
        tally.startup_s.append(time.perf_counter() - start)
        return data

    it.__dict__["_next_data"] = first_next_data


def install() -> None:
    original_sampler_iter = DistributedSampler.__iter__

    def sampler_iter(self):
        try:
            tally = _samplers.get(
                self, lambda: _SamplerTally(type(self).__name__, self.num_replicas, _len(self.dataset))
            )
            epoch = self.epoch
            if self.shuffle and epoch in tally.epochs and tally.repeated is None:
                tally.repeated = epoch
                tally.source = caller_source()
            tally.epochs.append(epoch)
        except Exception:  # noqa: BLE001 - a tally must never break the user's data
            pass
        try:
            return original_sampler_iter(self)
        except BaseException as exc:
            drop_own_frame(exc)
            raise

    setattr(DistributedSampler, "__iter__", sampler_iter)

    original_loader_iter = DataLoader.__iter__

    def loader_iter(self):
        start = time.perf_counter()
        try:
            it = original_loader_iter(self)
        except BaseException as exc:
            drop_own_frame(exc)
            raise
        if self.num_workers <= 0:
            return it
        try:
            if not it.__dict__.get("_gpudoctor_seen"):
                it.__dict__["_gpudoctor_seen"] = True  # a persistent iterator, reset: no new workers
                tally = _loaders.get(
                    self,
                    lambda: _LoaderTally(self.num_workers, bool(self.persistent_workers), _start_method(self)),
                )
                if tally.source is None:
                    tally.source = caller_source()
                _time_first_batch(it, start, tally)
        except Exception:  # noqa: BLE001
            pass
        return it

    setattr(DataLoader, "__iter__", loader_iter)
    session.collectors += [_sampler_facts, _loader_facts]
