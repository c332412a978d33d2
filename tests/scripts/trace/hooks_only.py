"""One gloo rank (world size 1) under the collective tracker with the Flight
Recorder off: the hooks' own notes are the trace. Explicit collectives from one
line, then what was published and what rank0.current holds. Prints one JSON line
for tests/test_collective_trace.py."""

import json
import os
import sys

run_dir = sys.argv[1]
os.environ["TORCH_FR_BUFFER_SIZE"] = "0"  # torch 2.13 records by default
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

from gpudoctor.launch import rundir as run_folder # noqa: E402
from gpudoctor.hang import tracer as collective_trace # noqa: E402

dist.init_process_group("gloo", init_method="tcp://127.0.0.1:" + sys.argv[2], rank=0, world_size=1)
collective_trace.PUBLISH_S = 3600.0  # the test publishes, not the background thread
tracker = collective_trace.install(run_dir, 0, fatal_file=False)
tensor = torch.ones(3)
for _ in range(5):
    dist.all_reduce(tensor)  # ALL_REDUCE LINE
dist.broadcast(torch.ones(2, 2), 0)  # BROADCAST LINE

tracker.publish()
trace = run_folder.read_trace(run_dir, 0)
current = run_folder.read_current(run_dir, 0)
print(json.dumps({
    "flight_recorder": trace.flight_recorder,
    "records": [(r.seq, r.kind, r.state, r.where, [list(s) for s in r.input_shapes]) for r in trace.records],
    "current": [current.seq, current.kind, current.state, current.where] if current else None,
}))
sys.stdout.flush()
dist.destroy_process_group()
os._exit(0)
