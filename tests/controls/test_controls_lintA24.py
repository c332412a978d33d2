"""Controls and siblings for lintA24 (issue 41): the silent misses lint heldout22 / heldout22b's readers named that
the script decides as far as it can: a first-process test on the launcher's local rank that guards writing files
(right on one node, not on several), and a literal count of NCCL processes the file spawns itself. Each program is
a few lines of a development script (source in the comment above it), linted by the real engine."""

from __future__ import annotations

from test_controls_lintA22 import found

# maxime-temoschenko/TFE multi_gpu_train.py (lint heldout22b u040): a torchrun trainer whose prints, wandb run,
# folder and checkpoint are all gated on the LOCAL_RANK it reads
LOCAL_GATES = """
    import os
    from pathlib import Path
    import torch
    import torch.distributed as dist

    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group(backend="nccl")
    torch.cuda.set_device(local_rank)
    if FIRST == 0:
        print(f"Using device cuda:{local_rank}")
    if FIRST == 0:
        Path("checkpoints").mkdir(parents=True, exist_ok=True)
        torch.save(model.state_dict(), "checkpoints/last.pt")
"""


class TestLocalRankAsGlobalRankFirstProcessGate:
    """local-rank-as-global-rank: the first-process test written on the launcher's local rank, where it guards
    writing files: one warning per file, at the first such test, naming the ones that write."""

    verdict = "local-rank-as-global-rank"
    rule = "local-rank-as-global-rank"

    def test_sibling_the_local_rank_gate_that_writes_is_a_warning(self):
        assert found(LOCAL_GATES.replace("FIRST", "local_rank"), self.rule) == [(9, "warning")]

    def test_control_the_global_rank_gate(self):
        assert found(LOCAL_GATES.replace("FIRST", "dist.get_rank()"), self.rule) == []

    def test_control_a_gate_that_only_prints(self):
        code = LOCAL_GATES.replace("FIRST", "local_rank").replace(
            '        Path("checkpoints").mkdir(parents=True, exist_ok=True)\n'
            '        torch.save(model.state_dict(), "checkpoints/last.pt")\n', '        print("ready")\n')
        assert found(code, self.rule) == []

    def test_control_a_spawned_one_machine_job(self):
        # lint heldout19 u009's shape: the spawn index is the rank of a job of one machine
        code = """
            import torch
            import torch.distributed as dist
            import torch.multiprocessing as mp

            def main(local_rank, world_size):
                dist.init_process_group("nccl", rank=local_rank, world_size=world_size)
                if local_rank == 0:
                    torch.save(model.state_dict(), "last.pt")

            if __name__ == "__main__":
                mp.spawn(main, args=(2,), nprocs=2)
            """
        assert found(code, self.rule) == []

    def test_control_the_file_chooses_local_or_global_by_its_settings(self):
        # mature-repository control, EleutherAI/gpt-neox megatron/data/gpt2_dataset.py: the dataset index is built
        # by the first process of each node, or of the job, as the settings say where the files live
        code = """
            import os
            import numpy as np
            import torch

            if neox_args.use_shared_fs:
                should_process_dataset = torch.distributed.get_rank() == 0
            else:
                should_process_dataset = int(os.environ["LOCAL_RANK"]) == 0
            if should_process_dataset:
                np.save(doc_idx_filename, doc_idx, allow_pickle=True)
            torch.distributed.barrier()
            """
        assert found(code, self.rule) == []

    def test_sibling_the_sampler_told_the_local_rank_is_the_one_cause_said(self):
        # lint heldout20 u021: the sampler's rank=opt.local_rank is said; the save gate beside it is not said again
        code = LOCAL_GATES.replace("FIRST", "local_rank") + (
            "    sampler = torch.utils.data.distributed.DistributedSampler(\n"
            "        data, num_replicas=dist.get_world_size(), rank=local_rank)\n")
        assert found(code, self.rule) == [(14, "warning")]


# anthonyzhou-1/gpt-mp-solver train_mp.py (lint heldout22b u013): `world_size = 8` spawned for an NCCL group,
# each process on GPU `rank`
SPAWNED_EIGHT = """
    import torch
    import torch.multiprocessing as mp
    from torch.distributed import init_process_group

    def main(rank, world_size, args):
        init_process_group(backend=BACKEND, rank=rank, world_size=world_size)
        torch.cuda.set_device(rank)

    if __name__ == "__main__":
        world_size = COUNT
        mp.spawn(main, args=(world_size, None), nprocs=world_size)
"""


class TestWorldSizeHardcodedSpawnedNccl:
    """world-size-hardcoded: mp.spawn told a literal count for an NCCL group, in a file that never asks the
    machine how many GPUs it has."""

    verdict = "world-size-hardcoded"
    rule = "world-size-hardcoded"

    def test_sibling_eight_nccl_ranks_written_in(self):
        code = SPAWNED_EIGHT.replace("BACKEND", '"nccl"').replace("COUNT", "8")
        assert found(code, self.rule) == [(10, "warning")]

    def test_control_gloo_processes_need_no_gpu(self):
        code = SPAWNED_EIGHT.replace("BACKEND", '"gloo"').replace("COUNT", "8").replace(
            "        torch.cuda.set_device(rank)\n", "")
        assert found(code, self.rule) == []

    def test_control_the_count_from_the_machine(self):
        code = SPAWNED_EIGHT.replace("BACKEND", '"nccl"').replace("COUNT", "torch.cuda.device_count()")
        assert found(code, self.rule) == []


# KoDohwan/MIL-NCE_HowTo100M main_distributed.py (lint heldout22 u039): main() forces the spawned path, so the
# worker's DataParallel fallback under `if args.distributed: ... else:` never runs
FORCED_DISTRIBUTED = """
    import torch
    import torch.multiprocessing as mp

    def main(args):
        args.world_size = 1
        FORCE
        args.distributed = args.world_size > 1 or args.multiprocessing_distributed
        ngpus_per_node = torch.cuda.device_count()
        if args.multiprocessing_distributed:
            mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))
        else:
            main_worker(args.gpu, ngpus_per_node, args)

    def main_worker(gpu, ngpus_per_node, args):
        if args.distributed:
            model = torch.nn.parallel.DistributedDataParallel(model.cuda(gpu), device_ids=[gpu])
        else:
            model = torch.nn.DataParallel(model).cuda()
"""


class TestDataparallelForcedOff:
    """dataparallel: the fallback arm of a flag the file sets true before the worker runs is never taken."""

    verdict = "dataparallel"
    rule = "dataparallel"

    def test_control_the_flag_forced_true_in_main(self):
        code = FORCED_DISTRIBUTED.replace("FORCE", "args.multiprocessing_distributed = True")
        assert found(code, self.rule) == []

    def test_sibling_the_flag_left_to_the_command_line(self):
        code = FORCED_DISTRIBUTED.replace("FORCE", "pass")
        assert found(code, self.rule) == [(18, "warning")]

    def test_sibling_the_flag_forced_after_the_spawn_is_not_read_as_set(self):
        code = FORCED_DISTRIBUTED.replace("        FORCE\n", "").replace(
            "            main_worker(args.gpu, ngpus_per_node, args)\n",
            "            main_worker(args.gpu, ngpus_per_node, args)\n        args.multiprocessing_distributed = True\n")
        assert found(code, self.rule) == [(18, "warning")]
