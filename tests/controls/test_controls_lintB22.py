"""Controls and siblings for lintB22 (issue 41): rules that stayed quiet where the lint corpus's readers
found the pitfall, widened on what makes it real, each beside the nearest script where the same shape is
right. Each program is a few lines of a lint development script (source in the comment above it), linted
by the real engine."""

from __future__ import annotations

import textwrap

from gpudoctor.linter import engine


def found(code: str, rule: str) -> list[tuple[int, tuple[int, ...], str]]:
    """(line, other lines of the same cause, message) of each diagnostic of `rule`."""
    return [(d.line, d.also, d.message) for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), "train.py")
            if d.rule == rule]


def lines(code: str, rule: str) -> list[int]:
    return [line for line, _, _ in found(code, rule)]


# lint heldout16 u058 (a segmentation trainer under torch.distributed.launch): `world_size = 8` divides the loss
DIVIDED = """
    import argparse
    import torch
    import torch.distributed as dist

    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", default=-1, type=int)

    def train(args, loss):
        world_size = 8
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group(backend="nccl")
        dist.all_reduce(loss)
        loss = USE
        return loss
"""


class TestWorldSizeHardcodedDividedBy:
    """world-size-hardcoded: a literal world size the file divides by, in a group a launcher starts."""

    rule = "world-size-hardcoded"

    def test_sibling_a_literal_world_size_that_averages_the_loss_is_said(self):
        [(line, _, message)] = found(DIVIDED.replace("USE", "loss / world_size"), self.rule)
        assert line == 9 and "`world_size` is the literal 8" in message and "launcher" in message

    def test_control_a_literal_never_read_as_a_count_is_not_said(self):
        # lint heldout16 u068: `world_size = 8` beside the launch comment, never read; heldout20 u016: only compared
        assert lines(DIVIDED.replace("USE", "loss if world_size > 1 else loss"), self.rule) == []

    def test_control_a_spawned_world_is_not_this_case(self):
        spawned = DIVIDED.replace('dist.init_process_group(backend="nccl")',
                                  'dist.init_process_group("nccl", rank=args.rank, world_size=world_size)')
        assert lines(spawned.replace("USE", "loss / world_size"), self.rule) == []


# lint heldout20 u036 (an evaluation driver): the GPU count read, then overwritten by a literal before mp.spawn
OVERWRITTEN = """
    import torch
    import torch.multiprocessing as mp

    def run_on_gpu(rank, world_size, chunks):
        torch.cuda.set_device(rank)

    if __name__ == "__main__":
        world_size = torch.cuda.device_count()
        world_size = 1
        chunks = [[] for _ in range(world_size)]
        mp.spawn(run_on_gpu, args=(world_size, chunks), nprocs=world_size, join=True)
"""

# lint heldout4 q005 (an MPI issue's repro): the GPU count maps the ranks onto the machine's GPUs
MAPPED = """
    import torch
    import torch.distributed as dist

    def main(rank, size):
        dist.init_process_group(backend="gloo", rank=rank, world_size=size)
        device_count = torch.cuda.device_count()
        device = rank % device_count
        torch.cuda.set_device(device)

    if __name__ == "__main__":
        torch.multiprocessing.spawn(main, args=(4,), nprocs=4)
"""


class TestWorldSizeHardcodedSpawnBesideTheCount:
    """world-size-hardcoded: mp.spawn given a literal count in a file that asks the GPU count and does not size
    the job with it."""

    rule = "world-size-hardcoded"

    def test_sibling_a_literal_written_over_the_gpu_count_is_said(self):
        [(line, _, message)] = found(OVERWRITTEN, self.rule)
        assert line == 9 and "one process" in message and "deliberate one-GPU run" in message

    def test_control_the_count_read_and_kept_is_not_said(self):
        assert lines(OVERWRITTEN.replace("        world_size = 1\n", ""), self.rule) == []

    def test_control_ranks_mapped_onto_the_gpus_are_not_said(self):
        assert lines(MAPPED, self.rule) == []

    def test_control_a_literal_checked_against_the_count_is_not_said(self):
        checked = MAPPED.replace("device = rank % device_count", "assert device_count >= size\n        device = rank")
        assert lines(checked, self.rule) == []


# lint heldout20 u042 / heldout15 u033: rank = the local rank, world size = this machine's GPU count
GPU_WORLD = """
    import torch
    import torch.distributed as dist

    def main(config):
        dist.init_process_group(backend="nccl", world_size=SIZE, rank=config["local_rank"])
"""


class TestRankFromLocalRankGpuCountWorld:
    """rank-from-local-rank: a world of this machine's GPU count is said, naming that it is right on one node."""

    rule = "rank-from-local-rank"

    def test_sibling_a_gpu_count_world_is_said_with_what_makes_it_right(self):
        [(line, _, message)] = found(GPU_WORLD.replace("SIZE", "torch.cuda.device_count()"), self.rule)
        assert line == 5 and "right while the job stays on one node" in message

    def test_control_a_literal_world_of_one_host_is_not_said(self):
        # dev6's debug script: `world_size=2`, the two GPUs of one host
        assert lines(GPU_WORLD.replace("SIZE", "2"), self.rule) == []

    def test_sibling_the_read_of_the_local_rank_is_named_as_a_place_of_the_cause(self):
        # lint heldout14 u010: LOCAL_RANK read in main(), handed to the setup() that starts the group
        code = """
            import os
            import torch.distributed as dist

            def setup(rank, world_size):
                dist.init_process_group("nccl", rank=rank, world_size=world_size)

            def main():
                world_size = int(os.environ["WORLD_SIZE"])
                rank = int(os.getenv("LOCAL_RANK", "0"))
                setup(rank, world_size)
        """
        [(line, also, message)] = found(code, self.rule)
        assert line == 5 and also == (9,) and "read at line 9" in message


# lint heldout20 u021 (an SSD trainer): a train and a test sampler, each told `rank=opt.local_rank`
SAMPLERS = """
    import torch
    import torch.distributed

    def main(opt, train_set, test_set):
        train_sampler = torch.utils.data.distributed.DistributedSampler(
            train_set,
            num_replicas=torch.distributed.get_world_size(),
            rank=opt.local_rank,
            shuffle=True
        )
        test_sampler = torch.utils.data.distributed.DistributedSampler(
            test_set,
            num_replicas=torch.distributed.get_world_size(),
            rank=opt.local_rank,
            shuffle=False
        )
"""


class TestLocalRankAsGlobalRankSamplersOneCause:
    """local-rank-as-global-rank: samplers told their rank by one local index are one cause, said once, naming
    their `rank=` lines."""

    rule = "local-rank-as-global-rank"

    def test_sibling_two_samplers_are_one_diagnostic_naming_their_rank_lines(self):
        [(line, also, _)] = found(SAMPLERS, self.rule)
        assert line == 5 and also == (8, 11, 14)

    def test_control_a_world_one_machine_holds_is_not_said(self):
        # lint heldout10 u045: `num_replicas=2` beside `rank=opt.local_rank`
        assert lines(SAMPLERS.replace("torch.distributed.get_world_size()", "2"), self.rule) == []


# lint heldout20 u042 (a molecular trainer): the parsed arguments copied into a dict, `--local_rank` read from it
DICT_READ = """
    import argparse
    import torch.distributed as dist

    def parse_args():
        parser = argparse.ArgumentParser()
        parser.add_argument("--local_rank", type=int, default=0)
        args = parser.parse_args()
        config = {}
        for key, value in vars(args).items():
            config[key] = value
        return config

    def main(world_size, config):
        dist.init_process_group(backend="nccl", world_size=world_size, rank=READ)
"""

# lint heldout20 u039 (a Hydra trainer): the flag parsed only to take it off the command line
STRIPPED = """
    import argparse
    import sys

    def filter_ddp_args():
        parser = argparse.ArgumentParser(add_help=False)
        parser.add_argument("--local_rank", type=int, default=0)
        args, remaining = parser.parse_known_args()
        sys.argv = [sys.argv[0]] + remaining
        return args.local_rank

    def main():
        local_rank = filter_ddp_args()
        USE
"""


class TestLocalRankArgReadBack:
    """local-rank-arg: the flag's value read back through a dict of the arguments is read; one returned to a
    name nothing reads is not."""

    rule = "local-rank-arg"

    def test_sibling_read_through_a_dict_of_the_arguments_is_said(self):
        assert lines(DICT_READ.replace("READ", 'config["local_rank"]'), self.rule) == [6]

    def test_control_never_read_back_is_not_said(self):
        assert lines(DICT_READ.replace("READ", "0"), self.rule) == []

    def test_control_returned_to_a_name_nothing_reads_is_not_said(self):
        assert lines(STRIPPED.replace("USE", "print('ready')"), self.rule) == []

    def test_sibling_returned_to_a_name_that_is_read_is_said(self):
        assert lines(STRIPPED.replace("USE", "print(local_rank)"), self.rule) == [6]


# lint heldout20 u055 (a trainer that relaunches itself under torch.distributed.run)
RELAUNCH = """
    import os
    import subprocess
    import sys

    def relaunch(num_gpus):
        cmd = [
            sys.executable, '-m', 'torch.distributed.run',
            f'--nproc_per_node={num_gpus}',
            PORT,
            os.path.abspath(__file__),
        ] + sys.argv[1:]
        return subprocess.run(cmd).returncode
"""


class TestHardcodedMasterPortLaunchCommand:
    """hardcoded-master-port: a launcher command the file builds with a literal --master_port."""

    rule = "hardcoded-master-port"

    def test_sibling_a_literal_port_option_is_said(self):
        [(line, _, message)] = found(RELAUNCH.replace("PORT", "'--master_port=29500'"), self.rule)
        assert line == 9 and "--master_port 29500" in message

    def test_control_a_port_from_the_environment_is_not_said(self):
        code = RELAUNCH.replace("PORT", "f'--master_port={os.environ.get(\"MASTER_PORT\", 29500)}'")
        assert lines(code, self.rule) == []

    def test_control_a_usage_note_in_a_docstring_is_not_said(self):
        # lint heldout14 u042: a second run's launch line with another port, written in the closing docstring
        code = '"""\npython -m torch.distributed.launch --nproc_per_node 4 --master_port 29510 ddp.py\n"""\n'
        assert lines(code, self.rule) == []


# lint heldout16 u068 (an OCR trainer): the global rank picks the device and then DDP's device_ids
DEVICE = """
    import torch
    import torch.distributed as dist

    dist.init_process_group(backend="nccl", init_method="env://")
    rank = dist.get_rank()
    torch.cuda.set_device(rank)
    model = build()
    model.cuda(rank)
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank], find_unused_parameters=True)
"""


class TestDeviceFromGlobalRankOneCause:
    """device-from-global-rank: the set_device and the device uses of one global rank are one cause."""

    rule = "device-from-global-rank"

    def test_sibling_the_later_device_uses_are_named_as_its_places(self):
        [(line, also, message)] = found(DEVICE, self.rule)
        assert line == 6 and also == (8, 9) and "at lines 8, 9" in message

    def test_control_the_local_rank_is_not_said(self):
        assert lines(DEVICE.replace("rank = dist.get_rank()", "rank = int(os.environ['LOCAL_RANK'])"), self.rule) == []


# lint heldout16 u011 (the ImageNet example's launcher with an all_reduce added to train())
ONE_ARM = """
    import torch.distributed as dist

    def train(model, loader, args):
        for data, target in loader:
            loss = model(data)
            dist.all_reduce(loss)

    def main_worker(gpu, args):
        if args.distributed:
            dist.init_process_group(backend=args.dist_backend, init_method=args.dist_url,
                                    world_size=args.world_size, rank=args.rank)
        model = build()
        for epoch in range(args.epochs):
            CALL
"""


class TestDistWithoutInitCalledAfterOneArm:
    """dist-without-init: a collective in a function called after a group started on one arm only."""

    rule = "dist-without-init"

    def test_sibling_a_collective_in_a_function_called_on_both_paths_is_said(self):
        [(line, _, message)] = found(ONE_ARM.replace("CALL", "train(model, loader, args)"), self.rule)
        assert line == 6 and "`train()`, which line 14 calls after the `if` on line 9" in message
        assert "not args.distributed" in message

    def test_control_the_call_made_only_on_the_arm_with_a_group_is_not_said(self):
        code = ONE_ARM.replace("CALL", "if args.distributed:\n                train(model, loader, args)")
        assert lines(code, self.rule) == []

    def test_control_a_function_that_tests_for_a_group_first_is_not_said(self):
        code = ONE_ARM.replace("dist.all_reduce(loss)", "if dist.is_initialized():\n                dist.all_reduce(loss)")
        assert lines(code.replace("CALL", "train(model, loader, args)"), self.rule) == []


# lint heldout20 u052 (a face-animation trainer): a world of one in a file that takes --local_rank
WORLD_OF_ONE = """
    import argparse
    import os
    import torch.distributed as dist

    parser = argparse.ArgumentParser()
    FLAG
    opt = parser.parse_args()
    if opt.mode == "train":
        os.environ["MASTER_ADDR"] = "localhost"
        os.environ["MASTER_PORT"] = "5678"
        dist.init_process_group("gloo", rank=0, world_size=1)
"""


class TestRankHardcodedWorldOfOneUnderALauncher:
    """rank-hardcoded: rank 0 of a world of one, in a file that takes a launcher's --local_rank."""

    rule = "rank-hardcoded"

    def test_sibling_a_world_of_one_beside_the_launchers_flag_is_said(self):
        code = WORLD_OF_ONE.replace("FLAG", 'parser.add_argument("--local_rank", default=0, type=int)')
        [(line, _, message)] = found(code, self.rule)
        assert line == 11 and "world of its own" in message and "runs as one process" in message

    def test_control_a_world_of_one_in_a_plain_script_is_not_said(self):
        assert lines(WORLD_OF_ONE.replace("FLAG", 'parser.add_argument("--mode", default="train")'), self.rule) == []


# lint heldout17 u052 (a retrieval trainer, the DeiT template): init_distributed_mode returns without a group
# where the launcher's variables are absent, and the epoch loop's barrier() is bare
HELPER = """
    import os
    import torch.distributed as dist

    def init_distributed_mode(config):
        if 'RANK' in os.environ and 'WORLD_SIZE' in os.environ:
            config['rank'] = int(os.environ["RANK"])
        else:
            print('Not using distributed mode')
            config['ddp'] = False
            return
        dist.init_process_group(backend='nccl', init_method='env://')

    def main(config, loader):
        init_distributed_mode(config)
        try:
            for epoch in range(config['epochs']):
                BARRIER
        except Exception as e:
            print(e)
"""


class TestDistWithoutInitAfterAHelperThatMayReturnEarly:
    """dist-without-init: a collective after the file's own set-up function that returns without a group on
    one path."""

    rule = "dist-without-init"

    def test_sibling_a_bare_barrier_after_the_helper_is_said(self):
        [(line, _, message)] = found(HELPER.replace("BARRIER", "dist.barrier()"), self.rule)
        assert line == 17 and "`init_distributed_mode()` on line 14" in message and "returns at line 10" in message

    def test_control_a_guarded_barrier_is_not_said(self):
        code = HELPER.replace("BARRIER", "if dist.is_initialized():\n                    dist.barrier()")
        assert lines(code, self.rule) == []

    def test_control_a_helper_that_starts_the_group_on_every_path_is_not_said(self):
        code = HELPER.replace("BARRIER", "dist.barrier()").replace("            return\n", "")
        assert lines(code, self.rule) == []

    def test_control_a_helper_that_returns_where_a_group_exists_is_not_said(self):
        code = HELPER.replace("BARRIER", "dist.barrier()").replace(
            "if 'RANK' in os.environ and 'WORLD_SIZE' in os.environ:", "if not dist.is_initialized():")
        assert lines(code, self.rule) == []
