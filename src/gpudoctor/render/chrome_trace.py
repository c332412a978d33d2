"""`gpudoctor run --trace FILE`: the ranks' step phases and collectives as Chrome
trace-event JSON (the format torch's profiler writes), which Perfetto
(ui.perfetto.dev) and chrome://tracing open: one process track per rank, its
phases on one thread track and its waits inside collectives on another.

A slice is (phase index, start ns, duration ns, label) on its rank's own clock:
ranks of one node share it (CLOCK_MONOTONIC); the tracks of different nodes are
each on their own node's clock, so only their shapes compare, not their offsets."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

PHASE_TRACK, COLLECTIVE_TRACK = 0, 1


def chrome_trace(timelines: dict[int, list], phases: Sequence[str], nodes: dict[int, str] | None = None) -> str:
    starts = [s[1] for slices in timelines.values() for s in slices]
    origin = min(starts) if starts else 0
    collective = list(phases).index("collective") if "collective" in phases else -1
    events: list[dict[str, Any]] = []
    for rank in sorted(timelines):
        node = (nodes or {}).get(rank)
        name = f"rank {rank}" + (f" ({node})" if node else "")
        events.append({"ph": "M", "name": "process_name", "pid": rank, "args": {"name": name}})
        events.append({"ph": "M", "name": "process_sort_index", "pid": rank, "args": {"sort_index": rank}})
        events.append({"ph": "M", "name": "thread_name", "pid": rank, "tid": PHASE_TRACK, "args": {"name": "phases"}})
        events.append(
            {"ph": "M", "name": "thread_name", "pid": rank, "tid": COLLECTIVE_TRACK, "args": {"name": "collectives"}}
        )
        for slice_ in timelines[rank]:
            try:
                phase, start, took, label = int(slice_[0]), int(slice_[1]), int(slice_[2]), str(slice_[3])
                word = phases[phase]
            except (ValueError, TypeError, IndexError):
                continue  # a slice that is not one: skipped, never guessed at
            events.append(
                {
                    "ph": "X",
                    "name": label or word,
                    "cat": word,
                    "pid": rank,
                    "tid": COLLECTIVE_TRACK if phase == collective else PHASE_TRACK,
                    "ts": (start - origin) / 1000.0,
                    "dur": took / 1000.0,
                }
            )
    return json.dumps({"traceEvents": events, "displayTimeUnit": "ms"})
