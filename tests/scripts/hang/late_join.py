"""Rank 1 is stuck preparing its data before init_process_group; rank 0 waits in the rendezvous."""
import time

import torch.distributed as dist


def prepare_data(rank):
    if rank == 1:
        time.sleep(3600)


import os  # noqa: E402

prepare_data(int(os.environ["RANK"]))
dist.init_process_group("gloo")
print("joined")
