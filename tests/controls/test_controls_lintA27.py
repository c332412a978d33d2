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


# multinode.py rewritten for one process per machine (lint heldout25b u014): rank 0 of 2 at a LAN address, each
# machine's copy told its rank by hand; the same pin at a file:// store (lint dev3 h057) shows no other copy
OWN_RENDEZVOUS = """
    import torch
    from torch.distributed import init_process_group

    def ddp_setup():
        init_process_group(backend="nccl", init_method=METHOD, world_size=2, rank=0)

    if __name__ == "__main__":
        ddp_setup()
"""

# the DDP note's example run as one process (lint heldout25 u032): main() calls example(0, 2), nothing spawns
RUN_ONCE = """
    import os
    import torch.distributed as dist
    import torch.multiprocessing as mp
    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP

    def example(rank, world_size):
        dist.init_process_group("gloo", rank=rank, world_size=world_size)
        model = nn.Linear(10, 10).to(rank)
        ddp_model = DDP(model, device_ids=[rank])

    def main():
        START

    if __name__ == "__main__":
        main()
"""


class TestRankHardcodedOnEachMachine:
    """rank-hardcoded: rank 0 pinned at an address other machines reach is one machine's copy (a warning); at a
    file:// store it stays an error."""

    verdict = "rank-hardcoded"
    rule = "rank-hardcoded"

    def test_control_an_address_other_machines_reach(self):
        assert found(OWN_RENDEZVOUS.replace("METHOD", '"tcp://192.168.126.228:8080"'), self.rule) == [(5, "warning")]

    def test_sibling_a_file_store(self):
        assert found(OWN_RENDEZVOUS.replace("METHOD", '"file:///tmp/rendezvous"'), self.rule) == [(5, "error")]


class TestSetDeviceLiteralRunOnce:
    """set-device-literal: a rank the file's one call gives as a literal is one process's own GPU; the hang is
    rank-hardcoded's, said at the init naming the call."""

    verdict = "set-device-literal"
    rule = "set-device-literal"

    def test_control_the_literal_rank_is_the_call_argument(self):
        assert found(RUN_ONCE.replace("START", "example(0, 2)"), self.rule) == []
        assert found(RUN_ONCE.replace("START", "example(0, 2)"), "rank-hardcoded") == [(8, "error")]

    def test_sibling_spawned_workers_pick_gpu_zero(self):
        code = RUN_ONCE.replace("START", "mp.spawn(example, args=(2,), nprocs=2)").replace(
            "device_ids=[rank]", "device_ids=[0]")
        assert found(code, self.rule) == [(10, "warning")]


# nanoGPT's train.py with its rank set-up cut out (lint heldout25c u006): `master_process = True` on every process
ALWAYS_MASTER = """
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.distributed import init_process_group

    init_process_group(backend="nccl")
    FLAG
    model = DDP(GPT().cuda(), device_ids=[0])
    for iter_num in range(100):
        if iter_num % 10 == 0 and master_process:
            losses = model(torch.zeros(1))
"""


# the DDP note's example reworked to feed rank 0 and rank 1 different batches (lint heldout25 u032), run once as
# example(0, 2): one process, whose rank is 0
ARMS = """
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP

    def example(rank, world_size):
        dist.init_process_group("gloo", rank=rank, world_size=world_size)
        ddp_model = DDP(nn.Linear(10, 10).to(rank), device_ids=[rank])
        for i in range(10):
            if rank == 0:
                outputs = ddp_model(torch.randn(1, 10).to(rank))
            if rank == 1:
                outputs = ddp_model(torch.randn(2, 10).to(rank))
            outputs.sum().backward()

    def main():
        START

    if __name__ == "__main__":
        main()
"""


class TestDdpForwardOnOneRankAlwaysTrueFlag:
    """ddp-forward-on-one-rank: a flag set only to True is the same on every rank, whatever its name says."""

    verdict = "ddp-forward-on-one-rank"
    rule = "ddp-forward-on-one-rank"

    def test_control_the_flag_is_a_literal(self):
        assert found(ALWAYS_MASTER.replace("FLAG", "master_process = True"), self.rule) == []

    def test_control_the_one_call_gives_a_literal_rank(self):
        assert found(ARMS.replace("START", "example(0, 2)"), self.rule) == []

    def test_sibling_spawned_ranks_take_one_arm_each(self):
        assert [line for line, _ in found(ARMS.replace("START", "mp.spawn(example, args=(2,), nprocs=2)"),
                                          self.rule)] == [12, 14]

    def test_sibling_the_flag_is_the_rank_test(self):
        code = ALWAYS_MASTER.replace("FLAG", "master_process = torch.distributed.get_rank() == 0")
        assert [line for line, _ in found(code, self.rule)] == [10]


# The DDP tutorial's multigpu_torchrun.py with the Trainer left commented out (lint heldout25 u015)
DROPPED = """
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.distributed import init_process_group

    class Trainer:
        def __init__(self, model, optimizer):
            self.model = model.to(0)
            self.model = DDP(self.model, device_ids=[0])
            self.optimizer = optimizer

    def load_train_objs():
        model = torch.nn.Linear(20, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
        return model, optimizer

    def main():
        init_process_group(backend="nccl")
        model, optimizer = load_train_objs()
        USE

    if __name__ == "__main__":
        main()
"""


class TestNoGradientSyncOptimizerDropped:
    """no-gradient-sync: an optimizer whose value every caller drops steps nothing; one that is stepped beside an
    unwrapped model keeps the warning."""

    verdict = "no-gradient-sync"
    rule = "no-gradient-sync"

    def test_control_the_optimizer_is_dropped(self):
        assert found(DROPPED.replace("USE", "# Trainer(model, optimizer)"), self.rule) == []

    def test_sibling_the_optimizer_is_stepped(self):
        assert [line for line, _ in found(DROPPED.replace("USE", "optimizer.step()"), self.rule)] == [12]


# a smoke-segmentation trainer (lint heldout25 u047): the train and the validation loader are built alike
TWO_LOADERS = """
    from torch.utils.data import DataLoader
    from torch.utils.data.distributed import DistributedSampler

    def main(training_data, validation_data):
        train_sampler = DistributedSampler(training_data)
        valid_sampler = DistributedSampler(validation_data)
        training_data_loader = DataLoader(training_data, sampler=train_sampler, batch_size=8, shuffle=True)
        validation_data_loader = VALID
"""


class TestShuffleWithSamplerOneCause:
    """shuffle-with-sampler: the loaders of one function that certainly raise are one error, at the first."""

    verdict = "shuffle-with-sampler"
    rule = "shuffle-with-sampler"

    def test_control_the_second_loader_is_never_reached(self):
        code = TWO_LOADERS.replace("VALID", "DataLoader(validation_data, sampler=valid_sampler, batch_size=8, shuffle=True)")
        assert found(code, self.rule) == [(7, "error")]

    def test_sibling_the_second_loader_is_right(self):
        code = TWO_LOADERS.replace("VALID", "DataLoader(validation_data, sampler=valid_sampler, batch_size=8)")
        assert found(code, self.rule) == [(7, "error")]


# a DeepSpeed speech trainer (lint heldout25c u024): validate() all-reduces, called under the local-rank test, inside a
# test of whether a validation loader was built
NESTED = """
    import torch
    import torch.distributed as dist

    class Trainer:
        def validate(self):
            total = torch.zeros(1)
            dist.all_reduce(total)
            return total.item()

        def train(self, epochs):
            dist.init_process_group("nccl")
            for epoch in range(epochs):
                if dist.get_rank() == 0:
                    INNER
                        self.validate()
"""


class TestCollectiveUnderANestedSetting:
    """collective-under-rank-condition: a setting tested inside the rank branch is one more part of the split (a
    warning naming it); a loop counter there decides nothing (the error stands)."""

    verdict = "collective-under-rank-condition"
    rule = "collective-under-rank-condition"

    def test_control_a_setting_inside_the_branch(self):
        assert found(NESTED.replace("INNER", "if self.val_dataloader:"), self.rule) == [(15, "warning")]

    def test_sibling_a_periodic_step_inside_the_branch(self):
        assert found(NESTED.replace("INNER", "if epoch % 5 == 0:"), self.rule) == [(15, "error")]
