"""init_process_group("nccl") on a machine without a GPU: NCCL refuses, and
the doctor must let that error through exactly as python shows it."""

import os

import torch.distributed as dist

os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="0", RANK="0", WORLD_SIZE="1", LOCAL_RANK="0")
dist.init_process_group("nccl", init_method="tcp://127.0.0.1:0", rank=0, world_size=1)
print("joined")
