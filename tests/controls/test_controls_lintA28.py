"""Controls and siblings for lintA28 (issue 41): precision where the freshest scripts (lint heldout26, 26b, 26c, 26d)
showed it lost. Each program is the shape of a development script, cut to a few lines and linted by the real engine
(source in the comment above it)."""

from __future__ import annotations

from test_controls_lintA22 import found, found_also

# cp_vton_exp test_ddp.py (lint heldout26d u049): setup() holds the NCCL init and nothing calls it; the main block runs
# main(), defined in the file. dev d017 (an AlexNet study snippet): the same setup(), but the main block spawns `train`,
# which the snippet lacks, and which may call it
UNCALLED_SETUP = """
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp

    def setup(rank, world_size):
        dist.init_process_group("nccl", rank=rank, world_size=world_size)

    def main():
        model = Net().cuda()

    if __name__ == "__main__":
        MAIN
"""


class TestNcclNoSetDeviceUncalledSetup:
    """nccl-no-set-device: a group made in a function the whole script never calls is no group of its run."""

    verdict = "nccl-no-set-device"
    rule = "nccl-no-set-device"

    def test_control_setup_never_called(self):
        assert found(UNCALLED_SETUP.replace("MAIN", "main()"), self.rule) == []

    def test_sibling_the_main_block_spawns_a_function_not_in_the_file(self):
        code = UNCALLED_SETUP.replace("MAIN", "mp.spawn(train, args=(2,), nprocs=2)")
        assert [line for line, _ in found(code, self.rule)] == [6]


# llm-compressor fsdp_example.py (lint heldout26b u009): one process, a literal world of one, the model on "cuda:0"
ONE_PROCESS = """
    import torch.distributed as dist

    dist.init_process_group(backend="nccl", rank=0, world_size=SIZE)
    model = Model.from_pretrained(path, device_map="cuda:0")
    model = FSDP(model)
"""


class TestNcclNoSetDeviceWorldOfOne:
    """nccl-no-set-device: a world of one process has one GPU, cuda:0; a world of several keeps the warning."""

    verdict = "nccl-no-set-device"
    rule = "nccl-no-set-device"

    def test_control_world_of_one(self):
        assert found(ONE_PROCESS.replace("SIZE", "1"), self.rule) == []

    def test_sibling_world_of_two(self):
        assert found(ONE_PROCESS.replace("SIZE", "2"), self.rule) == [(3, "warning")]


# the ddp-tutorial demos under mp.spawn (lint heldout26d u041, heldout26c u021): every GPU named is the rank's own,
# nothing on the current device; heldout26d u039's sibling puts a tensor on it with a bare .cuda()
BY_INDEX = """
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    from torch.nn.parallel import DistributedDataParallel as DDP

    def demo_basic(rank, world_size):
        dist.init_process_group("nccl", rank=rank, world_size=world_size)
        model = DDP(ToyModel().to(rank), device_ids=[rank])
        WORK

    if __name__ == "__main__":
        mp.spawn(demo_basic, args=(2,), nprocs=2, join=True)
"""


class TestNcclNoSetDeviceEveryGpuNamed:
    """nccl-no-set-device: spawned workers whose every GPU is the rank's own: nothing lands on the current device."""

    verdict = "nccl-no-set-device"
    rule = "nccl-no-set-device"

    def test_control_every_gpu_the_rank_own(self):
        assert found(BY_INDEX.replace("WORK", "loss = model(torch.randn(20, 10).to(rank)).sum()"), self.rule) == []

    def test_sibling_a_bare_cuda_beside(self):
        assert found(BY_INDEX.replace("WORK", "x = torch.ones(1).cuda()"), self.rule) == [(7, "error")]


# a DeepSpeed trainer (lint heldout26 u006): save_checkpoint, a collective, under `if rank == 0:` twice in one
# function, the last checkpoint and the best one: one mistake, said once naming the other line
SAVES = """
    import deepspeed

    def train(args, rank):
        model_engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model)
        for epoch in range(3):
            if rank == 0:
                model_engine.save_checkpoint(checkpoint_dir, tag="last")
            if val_loss < best:
                best = val_loss
                if TEST:
                    model_engine.save_checkpoint(checkpoint_dir, tag="best")
"""


class TestCollectiveUnderRankConditionOneSaveTwice:
    """collective-under-rank-condition: one library collective under the same rank test twice is one diagnostic."""

    verdict = "collective-under-rank-condition"
    rule = "collective-under-rank-condition"

    def test_control_the_second_save_under_the_same_test(self):
        assert [line for line, _ in found_also(SAVES.replace("TEST", "rank == 0"), self.rule)] == [7]

    def test_sibling_the_second_save_under_another_test(self):
        code = SAVES.replace("TEST", "rank == 0 and epoch == 2")
        assert [line for line, _ in found_also(code, self.rule)] == [7, 11]


# playground fsdp_example.py (lint heldout26b u008): FSDP2 memory tracing on torch's fake backend, one process
FAKE = """
    import torch
    from torch.testing._internal.distributed.fake_pg import FakeStore

    if __name__ == "__main__":
        world_size = 4
        store = FakeStore()
        torch.distributed.init_process_group(BACKEND, rank=0, world_size=world_size, store=store)
"""


class TestRankHardcodedFakeGroup:
    """rank-hardcoded: the fake backend plays every rank in one process; a real backend keeps the error."""

    verdict = "rank-hardcoded"
    rule = "rank-hardcoded"

    def test_control_fake_backend(self):
        assert found(FAKE.replace("BACKEND", '"fake"'), self.rule) == []

    def test_sibling_nccl_backend(self):
        assert found(FAKE.replace("BACKEND", '"nccl"').replace(", store=store", ""), self.rule) == [(7, "error")]


# ddp-tutorial multinode.py edited for a face2comics UNet (lint heldout26b u010): rank=1 of 2 at another machine's
# tcp:// address, LOCAL_RANK only in a comment
BY_HAND = """
    import os
    from torch.distributed import init_process_group

    def ddp_setup():
        init_process_group(backend="nccl", init_method="tcp://192.168.1.10:12355", rank=1, world_size=2)

    class Trainer:
        def __init__(self, model):
            self.local_rank = LOCAL
"""


class TestRankHardcodedCommentedLauncher:
    """rank-hardcoded: a launcher's variable only in a comment launches nothing: the per-machine copy's warning."""

    verdict = "rank-hardcoded"
    rule = "rank-hardcoded"

    def test_control_launcher_variable_in_a_comment(self):
        assert found(BY_HAND.replace("LOCAL", '0  # int(os.environ["LOCAL_RANK"])'), self.rule) == [(5, "warning")]

    def test_sibling_launcher_variable_read(self):
        assert found(BY_HAND.replace("LOCAL", 'int(os.environ["LOCAL_RANK"])'), self.rule) == [(5, "error")]


# llm-compressor fsdp_example.py (lint heldout26b u009): a group of one process, then save_pretrained
ONE_SAVE = """
    import torch.distributed as dist

    dist.init_process_group(backend="nccl", rank=0, world_size=SIZE)
    model = FSDP(model)
    model.save_pretrained(save_dir)
"""


class TestSaveAllRanksWorldOfOne:
    """save-all-ranks: where every group is one process, one process saves; a world read from the launch keeps it."""

    verdict = "save-all-ranks"
    rule = "save-all-ranks"

    def test_control_world_of_one(self):
        assert found(ONE_SAVE.replace("SIZE", "1"), self.rule) == []

    def test_sibling_world_from_the_launch(self):
        code = ONE_SAVE.replace("SIZE", 'int(os.environ["WORLD_SIZE"])').replace("import torch", "import os, torch")
        assert found(code, self.rule) == [(5, "warning")]


# llm-compressor's torchrun experiment (lint heldout26d u056): `if not is_ddp(): init_dist()`, is_ddp() asking
# is_initialized(); the other arm already has a group
GUARDED_START = """
    import torch.distributed as dist

    def is_ddp():
        return ASK

    def init_dist():
        dist.init_process_group(backend="nccl")

    def run():
        if not is_ddp():
            init_dist()
        rank = dist.get_rank()
"""


class TestDistWithoutInitHelperAsksForGroup:
    """dist-without-init: an `if` on a helper that asks is_initialized() starts a group on the arm that lacks one."""

    verdict = "dist-without-init"
    rule = "dist-without-init"

    def test_control_helper_asks_is_initialized(self):
        assert found(GUARDED_START.replace("ASK", "dist.is_initialized() and dist.get_world_size() > 1"),
                     self.rule) == []

    def test_sibling_helper_asks_the_environment(self):
        assert found(GUARDED_START.replace("ASK", 'os.environ.get("WORLD_SIZE") is not None'),
                     self.rule) == [(12, "warning")]


# AQLM's FSDP fine-tune (lint heldout26d u017): each rank torch.loads the LOCAL_STATE_DICT snapshot it saved
OWN_SNAPSHOT = """
    import os
    import torch

    torch.distributed.init_process_group("nccl")

    def load_state(args, model):
        rank = torch.distributed.get_rank()
        state = torch.load(PATH)
        model.load_state_dict(state)

    load_state(args, model)
"""


class TestTorchLoadNoMapLocationOwnFile:
    """torch-load-no-map-location: a rank reading the file it saved itself puts the tensors back on its own GPU."""

    verdict = "torch-load-no-map-location"
    rule = "torch-load-no-map-location"

    def test_control_per_rank_snapshot(self):
        assert found(OWN_SNAPSHOT.replace("PATH", 'os.path.join(args.save, f"model_rank{rank}.pt")'), self.rule) == []

    def test_sibling_every_rank_file_in_a_loop(self):
        # Megatron-DeepSpeed's hf2megads converter: `for pprank in ...: torch.load(f"model_pp{pprank}.pt")`
        code = OWN_SNAPSHOT.replace("state = torch.load(PATH)", 'for pprank in range(4):\n            state = torch.load(f"model_pp{pprank}.pt")')
        assert found(code, self.rule) == [(9, "warning")]

    def test_sibling_one_file_for_every_rank(self):
        assert found(OWN_SNAPSHOT.replace("PATH", 'os.path.join(args.save, "model.pt")'), self.rule) == [(8, "warning")]


# Continual-Learning-Framework test_ddp.py (lint heldout26d u025): a module-level mp.spawn() given no function
UNGUARDED_SPAWN = """
    import torch.multiprocessing as mp

    def worker(rank):
        pass

    mp.spawn(ARGS)
"""


class TestSpawnNoMainGuardNoFunction:
    """spawn-no-main-guard: a spawn given no function raises before any child starts: a warning; given one, an error."""

    verdict = "spawn-no-main-guard"
    rule = "spawn-no-main-guard"

    def test_control_spawn_given_no_function(self):
        assert found(UNGUARDED_SPAWN.replace("ARGS", ""), self.rule) == [(6, "warning")]

    def test_sibling_spawn_given_its_worker(self):
        assert found(UNGUARDED_SPAWN.replace("ARGS", "worker, nprocs=2"), self.rule) == [(6, "error")]


# Diff-UNet's AMOS trainer (lint heldout26c u020): DistributedDataParallel under `if self.num_gpus > 1:` in a
# trainer the main block builds from the command line; no group anywhere in the file
TRAINER = """
    from torch.nn.parallel import DistributedDataParallel

    class Trainer:
        def __init__(self, model, num_gpus=1):
            self.model = model
            TEST
                self.model = DistributedDataParallel(self.model)

    if __name__ == "__main__":
        BEFORE
        trainer = Trainer(Net(), num_gpus=4)
"""


class TestDistWithoutInitUnderTest:
    """dist-without-init: a wrapper under a test the file does not decide raises only where it holds: a warning."""

    verdict = "dist-without-init"
    rule = "dist-without-init"

    def test_control_wrapper_under_a_gpu_count_test(self):
        assert found(TRAINER.replace("TEST", "if num_gpus > 1:").replace("BEFORE", "pass"), self.rule) == [(7, "warning")]

    def test_control_the_same_after_another_module_call(self):
        code = TRAINER.replace("TEST", "if num_gpus > 1:").replace("BEFORE", "args = parse_args()")
        assert found(code.replace("from torch", "from utils import parse_args\n    from torch"), self.rule) == [
            (8, "warning")]

    def test_sibling_wrapper_on_every_run(self):
        assert found(TRAINER.replace("TEST", "if True:").replace("BEFORE", "pass"), self.rule) == [(7, "error")]


# CRAFT's DDP trainer (lint heldout26b u021): dist.reduce_op.SUM in two averaging helpers
REDUCE_OP = """
    import torch.distributed as dist

    def average_gradients(model):
        for param in model.parameters():
            dist.all_reduce(param.grad.data, op=dist.reduce_op.SUM)

    def reduce_tensor(tensor):
        dist.all_reduce(tensor, op=SECOND)
"""


class TestDeprecatedReduceOpOnePerFile:
    """deprecated-reduce-op: the old name used twice in a file is one diagnostic naming the other line."""

    verdict = "deprecated-reduce-op"
    rule = "deprecated-reduce-op"

    def test_control_the_current_name_at_the_second_use(self):
        assert found_also(REDUCE_OP.replace("SECOND", "dist.ReduceOp.SUM"), self.rule) == [(5, ())]

    def test_sibling_the_old_name_twice(self):
        assert found_also(REDUCE_OP.replace("SECOND", "dist.reduce_op.SUM"), self.rule) == [(5, (8,))]
