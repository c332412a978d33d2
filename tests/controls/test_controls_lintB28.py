"""Controls and siblings for lintB28 (issue 41: the recall fresh scripts show is lost). Each program is the shape of
a lint development script's missed pitfall (source in the comment above it), cut to a few lines and linted by the
real engine: the pitfall gets its rule, the nearest right script gets nothing."""

from __future__ import annotations

from test_controls_lintA22 import found

# a spawned trainer for SDAA cards (lint heldout26d u057): a vendor's one-device-per-rank backend, four processes
SPAWNED_ON_DEVICES = """
    import torch.distributed as dist
    import torch.multiprocessing as mp

    def demo_basic(rank, world_size):
        dist.init_process_group(BACKEND, rank=rank, world_size=world_size)

    if __name__ == "__main__":
        world_size = 4
        mp.spawn(demo_basic, args=(world_size,), nprocs=world_size, join=True)
"""


class TestWorldSizeSpawnedOnAcceleratorBackend:
    """world-size-hardcoded: a literal spawn count for a vendor's collective library, as for NCCL; not for gloo."""

    verdict = "world-size-hardcoded"
    rule = "world-size-hardcoded"

    def test_sibling_a_vendor_backend(self):
        assert found(SPAWNED_ON_DEVICES.replace("BACKEND", "'tccl'"), self.rule) == [(8, "warning")]

    def test_control_gloo(self):
        assert found(SPAWNED_ON_DEVICES.replace("BACKEND", "'gloo'"), self.rule) == []
