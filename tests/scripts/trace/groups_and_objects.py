"""One gloo rank (world size 1) under the collective tracker: a new_group, an object
collective and an async all_reduce, then what was published. Prints one JSON line for
tests/test_collective_trace.py."""

import json
import sys

import torch
import torch.distributed as dist

from gpudoctor.launch import rundir as run_folder
from gpudoctor.hang import tracer as collective_trace

run_dir = sys.argv[1]
collective_trace.prepare_environment()
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:" + sys.argv[2], rank=0, world_size=1)
collective_trace.PUBLISH_S = 3600.0  # the test publishes, not the background thread
tracker = collective_trace.install(run_dir, 0, fatal_file=False)
group = dist.new_group([0])  # NEW_GROUP LINE
out = [None]
dist.all_gather_object(out, {"acc": 0.5})  # OBJECT LINE
work = dist.all_reduce(torch.ones(2), async_op=True)  # ASYNC LINE
pending = dict(tracker.works)
work.wait()
tracker.publish(final=True)
trace = run_folder.read_trace(run_dir, 0)
print(json.dumps({
    "records": [(r.seq, r.kind, r.state, r.where) for r in trace.records],
    "pending": [r.kind for r in pending.values() if not isinstance(r, int)],
    "left": len(tracker.works),
}))
