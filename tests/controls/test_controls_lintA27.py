"""Controls and siblings for lintA27 (issue 41): precision where the freshest scripts (lint heldout25, 25b, 25c) showed
it lost. Each program is the shape of a development script, cut to a few lines and linted by the real engine (source in
the comment above it)."""

from __future__ import annotations

from test_controls_lintA22 import found

# FreqPure's torchrun evaluation (lint heldout25 u033..u038): init_processes reads RANK and hands it to test(), which
# puts every tensor on cuda:{rank} and ends with a barrier given no device_ids
HANDED_RANK = """
    import os
    import torch
    import torch.distributed as dist

    def test(rank, world_size):
        device = torch.device(DEVICE)
        total = torch.tensor([0]).to(device)
        dist.barrier()
        dist.all_reduce(total)

    def init_processes(fn):
        rank = int(os.environ["RANK"])
        local_rank = int(os.environ["LOCAL_RANK"])
        world_size = int(os.environ["WORLD_SIZE"])
        dist.init_process_group(backend="nccl")
        fn(rank, world_size)

    if __name__ == "__main__":
        init_processes(test)
"""


class TestNcclBarrierOnTheGuessedGpu:
    """nccl-no-set-device: a barrier with no device_ids runs on RANK % GPUs; where the file's GPU is the global rank,
    that is its own GPU: nothing to say. Where it is the local rank, the warning names both."""

    verdict = "nccl-no-set-device"
    rule = "nccl-no-set-device"

    def test_control_the_rank_names_the_gpu(self):
        assert found(HANDED_RANK.replace("DEVICE", "'cuda:{}'.format(rank)"), self.rule) == []

    def test_sibling_the_local_rank_names_the_gpu(self):
        code = HANDED_RANK.replace("DEVICE", "'cuda:{}'.format(local_rank)").replace(
            "fn(rank, world_size)", "fn(local_rank, world_size)")
        assert found(code, self.rule) == [(15, "warning")]


class TestDeviceFromGlobalRankHandedOn:
    """device-from-global-rank: the RANK a launcher helper hands to the function it is given reaches the device."""

    verdict = "device-from-global-rank"
    rule = "device-from-global-rank"

    def test_control_the_local_rank_is_handed_on(self):
        code = HANDED_RANK.replace("DEVICE", "'cuda:{}'.format(rank)").replace(
            "fn(rank, world_size)", "fn(local_rank, world_size)")
        assert found(code, self.rule) == []

    def test_sibling_the_global_rank_is_handed_on(self):
        assert found(HANDED_RANK.replace("DEVICE", "'cuda:{}'.format(rank)"), self.rule) == [(6, "warning")]


# The DDP tutorial's multigpu_torchrun.py (lint heldout25 u014..u016) and its multi-node copies (heldout25b u003..u011):
# the snapshot is saved by a private helper under `self.gpu_id == 0`; multinode.py rewritten for one process per
# machine fixes the local rank to 0 (heldout25b u014)
SNAPSHOT = """
    import os
    import torch
    from torch.distributed import init_process_group

    class Trainer:
        def __init__(self, model):
            self.gpu_id = GPU_ID
            self.model = model.to(self.gpu_id)

        def _save_snapshot(self, epoch):
            torch.save({"MODEL_STATE": self.model.state_dict(), "EPOCHS_RUN": epoch}, "snapshot.pt")

        def train(self, max_epochs):
            for epoch in range(max_epochs):
                if self.gpu_id == 0 and epoch % 10 == 0:
                    self._save_snapshot(epoch)

    if __name__ == "__main__":
        init_process_group(backend="nccl")
        Trainer(None).train(5)
"""

# LLaVA-style trainer (lint heldout25c u030): the adapter is written under `local_rank == 0 or local_rank == -1`; an
# old HF script (lint heldout23 u031) gates its saves on `args.local_rank in [-1, 0]` with a --local_rank flag torchrun
# never gives
FLAG_GATE = """
    import argparse
    import torch
    import torch.distributed as dist

    def main():
        parser = argparse.ArgumentParser()
        parser.add_argument("--local_rank", type=int, default=-1)
        args = parser.parse_args()
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group("nccl")
        if TEST:
            torch.save({}, "model.pt")

    if __name__ == "__main__":
        main()
"""


class TestLocalRankGateWritesThroughAHelper:
    """local-rank-as-global-rank: a first-process gate on the launcher's local rank that writes files through a
    private helper, or spelled with the launcher-less -1, is said; a local rank the file fixes to 0 is not."""

    verdict = "local-rank-as-global-rank"
    rule = "local-rank-as-global-rank"

    def test_control_the_local_rank_is_a_literal(self):
        assert found(SNAPSHOT.replace("GPU_ID", "0"), self.rule) == []

    def test_sibling_the_launcher_gives_the_local_rank(self):
        assert found(SNAPSHOT.replace("GPU_ID", 'int(os.environ["LOCAL_RANK"])'), self.rule) == [(15, "warning")]

    def test_control_the_flag_is_never_given(self):
        # local-rank-arg says it: under torchrun args.local_rank is -1 on every process, which the test lets through
        assert found(FLAG_GATE.replace("TEST", "args.local_rank in [-1, 0]"), self.rule) == []

    def test_sibling_the_first_process_or_no_launcher(self):
        # the flag's default is LOCAL_RANK (torchrun's too): the test takes each node's first process
        code = FLAG_GATE.replace("TEST", "args.local_rank == 0 or args.local_rank == -1").replace(
            "default=-1", 'default=int(os.environ.get("LOCAL_RANK", -1))').replace("import argparse", "import argparse, os")
        assert found(code, self.rule) == [(11, "warning")]
