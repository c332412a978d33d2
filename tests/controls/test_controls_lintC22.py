"""Controls and siblings for lintC22 (issue 41 point 5): rules for pitfalls the lint corpus's readers named that
no rule had. Each program is a few lines of a development case (source in the comment above it), linted by the
real engine in this process."""

from __future__ import annotations

import textwrap

from gpudoctor.linter import engine


def rules(code: str) -> dict[str, list[tuple[int, str]]]:
    """{rule: [(line, severity)]} of the diagnostics of `code`."""
    out: dict[str, list[tuple[int, str]]] = {}
    for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), "train.py"):
        out.setdefault(d.rule, []).append((d.line, d.severity))
    return out


# lint heldout16 u013 (a DDP trainer class): the epoch's sums all-reduced through temporaries, then read
METRICS = """
    import torch
    import torch.distributed as dist

    def epoch_end(running_loss, total_samples, gpu_id):
        dist.all_reduce(torch.tensor([running_loss]).to(gpu_id), op=dist.ReduceOp.SUM)
        dist.all_reduce(torch.tensor([total_samples]).to(gpu_id), op=dist.ReduceOp.SUM)
        return running_loss / total_samples
"""


class TestAllreduceResultDiscarded:
    def test_sibling_each_temporary_is_said_where_it_is_reduced(self):
        assert rules(METRICS)["allreduce-result-discarded"] == [(5, "warning"), (6, "warning")]

    def test_control_the_named_tensor_read_after_is_quiet(self):
        code = METRICS.replace("dist.all_reduce(torch.tensor([running_loss]).to(gpu_id),",
                               "t = torch.tensor([running_loss]).to(gpu_id)\n        dist.all_reduce(t,")
        assert [line for line, _ in rules(code)["allreduce-result-discarded"]] == [7]

    def test_control_the_barrier_idiom_holds_no_value(self):
        # a zero tensor all-reduced to make the ranks meet (no figure of the program in it)
        code = "import torch\nimport torch.distributed as dist\n\ndist.all_reduce(torch.zeros(1).cuda())\n"
        assert "allreduce-result-discarded" not in rules(code)

    def test_sibling_reducing_a_cpu_tensor_on_nccl_is_another_rule(self):
        # the named tensor is reduced (no result lost) but stays on the CPU under NCCL
        code = """
            import torch
            import torch.distributed as dist

            dist.init_process_group("nccl")
            t = torch.tensor([1.0])
            dist.all_reduce(t)
        """
        found = rules(code)
        assert "allreduce-result-discarded" not in found and "nccl-cpu-tensor" in found


# lint heldout20 u028 (a DDP benchmark): loader factories defined inside run_experiment_ddp, passed to mp.spawn
LOADERS = """
    import torch.multiprocessing as mp

    def train_ddp_worker(rank, world_size, train_loader_fn, epochs):
        loader = train_loader_fn(rank, world_size)

    def run_experiment_ddp(dataset_fn, batch_size, epochs, world_size):
        def train_loader_fn(rank, ws):
            return dataset_fn(batch_size, rank, ws)[0]

        mp.spawn(
            train_ddp_worker,
            args=(world_size, train_loader_fn, epochs),
            nprocs=world_size,
            join=True,
        )
"""


class TestSpawnArgsNotPicklable:
    def test_sibling_a_local_function_in_args_is_an_error(self):
        assert rules(LOADERS)["spawn-args-not-picklable"] == [(12, "error")]

    def test_control_the_same_function_at_the_module_top_is_quiet(self):
        code = LOADERS.replace("        def train_loader_fn(rank, ws):\n            return dataset_fn(batch_size, rank, ws)[0]\n",
                               "")
        code = code.replace("import torch.multiprocessing as mp\n",
                            "import torch.multiprocessing as mp\n\n    def train_loader_fn(rank, ws):\n        return build(rank, ws)\n")
        assert "spawn-args-not-picklable" not in rules(code)

    def test_control_fork_pickles_nothing(self):
        code = LOADERS.replace("join=True,", "join=True, start_method='fork',").replace("mp.spawn(", "mp.start_processes(")
        assert "spawn-args-not-picklable" not in rules(code)

    def test_sibling_args_without_a_tuple_comma_is_another_rule(self):
        # dev: `mp.spawn(main_worker, args=(cfg), nprocs=n)`, one object and no comma
        code = """
            import torch.multiprocessing as mp

            def main_worker(rank, cfg):
                pass

            if __name__ == "__main__":
                cfg = parser.parse_args()
                mp.spawn(main_worker, args=(cfg), nprocs=2)
        """
        found = rules(code)
        assert "spawn-args-not-picklable" not in found and "spawn-args-not-tuple" in found


# lint heldout20 u046 (a FashionMNIST DDP demo): the datasets downloaded in the spawned worker
DOWNLOAD = """
    import torch.multiprocessing as mp
    from torchvision import datasets

    def run(rank, world_size, data_root="/tmp/data"):
        training_data = datasets.FashionMNIST(
            root=data_root,
            train=True,
            download=True,
        )
        test_data = datasets.FashionMNIST(root=data_root, train=False, download=True)

    if __name__ == "__main__":
        mp.spawn(run, args=(2,), nprocs=2)
"""


class TestDatasetDownloadAllRanks:
    def test_sibling_the_worker_s_downloads_are_one_race(self):
        found = [d for d in engine.lint_source(textwrap.dedent(DOWNLOAD).lstrip("\n"), "train.py")
                 if d.rule == "dataset-download-all-ranks"]
        assert [(d.line, d.also, d.severity) for d in found] == [(5, (8, 10), "warning")]

    def test_control_downloaded_by_the_parent_before_spawning_is_quiet(self):
        code = DOWNLOAD.replace("download=True", "download=False").replace(
            "    mp.spawn(", '    datasets.FashionMNIST(root="/tmp/data", download=True)\n        mp.spawn(')
        assert "dataset-download-all-ranks" not in rules(code)

    def test_control_zero_first_barrier_is_quiet(self):
        # the pattern written out: the other ranks wait at a barrier while rank 0 downloads
        code = DOWNLOAD.replace('    training_data = datasets', '    if rank != 0:\n                dist.barrier()\n'
                                '            training_data = datasets').replace(
            "from torchvision import datasets", "from torchvision import datasets\n    import torch.distributed as dist")
        assert "dataset-download-all-ranks" not in rules(code)

    def test_control_another_module_s_dataset_is_not_decided(self):
        # mature-repository control, ResNeSt scripts/torch/train.py: get_dataset(cfg.DATA.DATASET)(..., download=True)
        # in the spawned worker; its only registered dataset (ImageNet) ignores download
        code = DOWNLOAD.replace("datasets.FashionMNIST(", "get_dataset(cfg.DATA.DATASET)(")
        assert "dataset-download-all-ranks" not in rules(code)

    def test_sibling_download_by_rank_test_is_said_so(self):
        # lint heldout20 u040: STL10(..., download=(rank == 0)), the barrier after it
        code = DOWNLOAD.replace("download=True,", "download=(rank == 0),")
        found = [d for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), "train.py")
                 if d.rule == "dataset-download-all-ranks"]
        assert found[0].line == 5 and "download=rank == 0" in found[0].message


# lint heldout20 u022 (an apex DDP trainer): the scheduler stepped with rank 0's checkpoint save
SCHEDULE = """
    import torch.distributed as dist

    dist.init_process_group(backend="nccl", init_method="env://")
    for epoch in range(args.epochs):
        train_one_epoch(model, optimizer)
        if args.local_rank == 0:
            scheduler.step(epoch)
            save_checkpoint(model, epoch)
"""


class TestSchedulerStepOnOneRank:
    def test_sibling_stepped_under_the_rank_test(self):
        assert rules(SCHEDULE)["scheduler-step-on-one-rank"] == [(7, "warning")]

    def test_control_stepped_on_every_rank_is_quiet(self):
        code = SCHEDULE.replace("        if args.local_rank == 0:\n            scheduler.step(epoch)\n",
                                "        scheduler.step(epoch)\n        if args.local_rank == 0:\n")
        assert "scheduler-step-on-one-rank" not in rules(code)

    def test_control_the_scheduler_s_own_none_test_is_not_a_rank_test(self):
        # lint heldout16 u013: `if self.scheduler is not None: self.scheduler.step(loss)` on every rank
        code = SCHEDULE.replace("if args.local_rank == 0:", "if scheduler is not None:")
        assert "scheduler-step-on-one-rank" not in rules(code)

    def test_sibling_the_save_beside_it_is_rank_0_s_alone(self):
        # the checkpoint saved under the same test is one process's (save-all-ranks stays quiet); the step is said,
        # and the test's local rank as the multi-node warning (lintA24: lint heldout20 u022's reader asked for it)
        found = rules(SCHEDULE)
        assert "save-all-ranks" not in found
        assert sorted(found) == ["local-rank-as-global-rank", "scheduler-step-on-one-rank"]

