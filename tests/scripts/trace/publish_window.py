"""One gloo rank (world size 1) under the collective tracker: DDP steps, then the
tracker's publications read back. Prints one JSON line for tests/test_collective_trace.py."""

import json
import os
import sys

run_dir = sys.argv[1]
os.environ.setdefault("TORCH_FR_BUFFER_SIZE", "128")
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

from gpudoctor.launch import rundir as run_folder # noqa: E402
from gpudoctor.hang import tracer as collective_trace # noqa: E402

dist.init_process_group("gloo", init_method="tcp://127.0.0.1:" + sys.argv[2], rank=0, world_size=1)
collective_trace.PUBLISH_S = 3600.0  # the test publishes, not the background thread
tracker = collective_trace.install(run_dir, 0, fatal_file=False)
model = DDP(torch.nn.Linear(4, 1))
for _ in range(30):
    loss = model(torch.ones(2, 4)).sum()  # FORWARD LINE
    loss.backward()  # BACKWARD LINE


def published():
    trace = run_folder.read_trace(run_dir, 0, with_current=False)
    return [(r.seq, r.kind, r.state, r.where) for r in trace.records]


tracker.publish()
moving = published()
tracker.publish()  # nothing moved since: the whole buffer is written
quiet = published()
print(json.dumps({"moving": moving, "quiet": quiet, "window": collective_trace.WINDOW}))
sys.stdout.flush()
dist.destroy_process_group()
os._exit(0)
