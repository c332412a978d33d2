# Modelled on: https://github.com/pytorch/pytorch/issues/132696
import os
import sys
import time

import torch
import torch.distributed as dist

rank = int(os.environ["RANK"])
shard = f"/nonexistent/shard-{rank}.bin"
if rank == 1 and not os.path.exists(shard):
    print("no shard, nothing to do")
    sys.exit(0)  # @A
dist.init_process_group("gloo")
dist.barrier()
