"""Controls and siblings for the narrowings and widenings issue 41's samples asked
of the rules the lintfp branch owns: each narrowing names the false alarm it
quiets (its case), and keeps the true positive nearest to it (the sibling);
each widening's control is the healthy program nearest to the new shape.
Each program is real code, linted by the real engine."""

from __future__ import annotations

import textwrap

from gpudoctor.linter import engine


def rules(code: str, path: str = "train.py") -> list[str]:
    return sorted({d.rule for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), path)})


class TestMasterAddrNotSet:
    rule = "master-addr-not-set"

    def test_control_spawned_mpi_group_reads_no_master_addr(self):
        # heldout4 q005: the mpi backend takes rank and size from mpirun
        code = """
            import torch.distributed as dist
            import torch.multiprocessing as mp

            def main(rank, world_size):
                dist.init_process_group(backend="mpi")

            if __name__ == "__main__":
                mp.spawn(main, args=(4,), nprocs=4)
        """
        assert self.rule not in rules(code)

    def test_sibling_spawned_gloo_group_without_an_address(self):
        code = """
            import torch.distributed as dist
            import torch.multiprocessing as mp

            def main(rank, world_size):
                dist.init_process_group(backend="gloo", rank=rank, world_size=world_size)

            if __name__ == "__main__":
                mp.spawn(main, args=(4,), nprocs=4)
        """
        assert self.rule in rules(code)


class TestDeprecatedLaunch:
    rule = "deprecated-launch"

    def test_control_a_launch_note_over_a_script_that_reads_the_environment(self):
        # dev4 k060, heldout3 m051: the script runs unchanged under torchrun
        code = """
            import torch.distributed as dist

            dist.init_process_group()
            # python -m torch.distributed.launch --nproc_per_node 8 --use_env train.py
        """
        assert self.rule not in rules(code)

    def test_sibling_a_launch_command_the_script_runs(self):
        code = """
            import os

            cmd = "python -m torch.distributed.launch --nproc_per_node 2 run.py"
            os.system(cmd)
        """
        assert self.rule in rules(code)

    def test_sibling_a_launch_note_over_a_script_that_takes_its_argument(self):
        code = """
            # python -m torch.distributed.launch --nproc_per_node 8 train.py
            import argparse

            parser = argparse.ArgumentParser()
            parser.add_argument("--local-rank", type=int, default=0)
            args = parser.parse_args()
            print(args.local_rank)
        """
        assert {self.rule, "local-rank-arg"} <= set(rules(code))


class TestNcclNoSetDevice:
    rule = "nccl-no-set-device"

    def test_control_each_rank_names_its_gpu_under_a_rank_test(self):
        # heldout3 m051: rank 0 on "cuda:0", rank 1 on "cuda:1", by hand
        code = """
            import torch
            import torch.distributed as dist

            def main():
                dist.init_process_group(backend="nccl", init_method="env://")
                if dist.get_rank() == 0:
                    y = torch.tensor([0.1, 0.9], device=torch.device("cuda:0"))
                if dist.get_rank() == 1:
                    y = torch.tensor([0.2, 0.1], device=torch.device("cuda:1"))
        """
        assert self.rule not in rules(code)

    def test_sibling_every_rank_on_cuda_0(self):
        code = """
            import torch
            import torch.distributed as dist

            def main():
                dist.init_process_group(backend="nccl", init_method="env://")
                y = torch.tensor([0.1, 0.9], device=torch.device("cuda:0"))
        """
        assert self.rule in rules(code)


class TestDataparallel:
    rule = "dataparallel"

    def test_control_dead_branch_beside_ddp(self):
        # dev d003: `if False:` keeps the DataParallel line for reference
        code = """
            import torch

            if False:
                net = torch.nn.DataParallel(net, device_ids=range(2))
            else:
                net = torch.nn.parallel.DistributedDataParallel(net, device_ids=[0])
        """
        assert self.rule not in rules(code)

    def test_control_a_dataparallel_the_file_defines(self):
        # dev2 e028: a class of the file named DataParallel is not torch's
        code = """
            class DataParallel(Model):
                def step(self):
                    pass

            model = DataParallel(net)
        """
        assert self.rule not in rules(code)

    def test_sibling_the_fallback_path_of_a_ddp_program(self):
        # dev4 k085, heldout3 m050, heldout4 q060: the path a run without a launcher takes
        code = """
            import torch

            if is_distributed:
                model = torch.nn.parallel.DistributedDataParallel(model)
            else:
                model = torch.nn.DataParallel(model)
        """
        found = [d for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), "train.py") if d.rule == self.rule]
        assert [(d.line, d.severity) for d in found] == [(6, "warning")]
        assert "without a launcher" in found[0].message

    def test_sibling_a_snippet_that_left_out_its_import(self):
        # heldout3 m080: `DataParallel(model)` with no import: read as torch.nn's
        code = """
            model = DataParallel(model)
        """
        found = [d for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), "train.py") if d.rule == self.rule]
        assert [d.severity for d in found] == ["warning"]
        assert "`from torch.nn import DataParallel`" in found[0].message

    def test_sibling_a_wrapper_taken_apart_at_once_says_so(self):
        # heldout4 q027: `.module` of a fresh DataParallel is the bare model
        code = """
            import torch

            model = torch.nn.DataParallel(model).module
        """
        found = [d for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), "train.py") if d.rule == self.rule]
        assert len(found) == 1 and "taken apart at once" in found[0].message


class TestRankFromLocalRank:
    rule = "rank-from-local-rank"

    def test_control_a_fixed_world_one_host_holds(self):
        # dev6 r004: a two-GPU debug script, rank = local rank with world_size=2
        code = """
            import torch
            import torch.distributed

            def run(args):
                local_rank = args.local_rank
                torch.distributed.init_process_group(backend="nccl", world_size=2, rank=local_rank)
        """
        assert self.rule not in rules(code)

    def test_sibling_a_world_from_the_environment(self):
        # dev6 r070: the world size spans every node, the rank is still the local one
        code = """
            import os
            import torch.distributed as dist

            world_size = int(os.environ["WORLD_SIZE"])
            dist.init_process_group("nccl", rank=int(os.environ["LOCAL_RANK"]), world_size=world_size)
        """
        assert self.rule in rules(code)

    def test_sibling_a_fixed_world_larger_than_a_host(self):
        code = """
            import os
            import torch.distributed as dist

            dist.init_process_group("nccl", rank=int(os.environ["LOCAL_RANK"]), world_size=16)
        """
        assert self.rule in rules(code)


class TestLocalRankArg:
    rule = "local-rank-arg"

    def test_control_parsed_in_view_and_never_read(self):
        # dev4 k079: the rank comes from the environment; args.rank is never read
        code = """
            import os
            import argparse

            if __name__ == "__main__":
                parser = argparse.ArgumentParser()
                parser.add_argument("--local-rank", type=int, default=0, dest="rank")
                args = parser.parse_args()
                rank = int(os.environ.get("RANK", 0))
        """
        assert self.rule not in rules(code)

    def test_sibling_parser_returned_to_a_caller_not_in_the_file(self):
        # heldout3 m069: parse_args() is returned; where local_rank is read is not in view
        code = """
            import argparse

            def parse_args():
                parse = argparse.ArgumentParser()
                parse.add_argument("--local_rank", dest="local_rank", type=int, default=-1)
                return parse.parse_args()
        """
        found = [d for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), "train.py") if d.rule == self.rule]
        assert len(found) == 1 and "not in this file" in found[0].message

    def test_sibling_a_one_line_excerpt(self):
        # heldout4 q009: only the argument's line was posted
        code = """
            parser.add_argument("--local_rank", type=int, default=-1, help="For distributed training: local_rank")
        """
        assert self.rule in rules(code)


class TestLightningDeprecatedArgs:
    rule = "lightning-deprecated-args"

    def test_control_pl_bound_to_another_module(self):
        code = """
            import mylib as pl

            trainer = pl.Trainer(gpus=2)
        """
        assert self.rule not in rules(code)

    def test_sibling_a_snippet_that_left_out_import_pytorch_lightning_as_pl(self):
        # heldout3 m038: the one-line Trainer(gpus=2) of a ControlNet thread
        code = """
            trainer = pl.Trainer(strategy="ddp", accelerator="gpu", gpus=2, precision=16)
        """
        found = [d for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), "train.py") if d.rule == self.rule]
        assert [d.severity for d in found] == ["warning"]
        assert "`import pytorch_lightning as pl`" in found[0].message


class TestDeviceFromGlobalRank:
    rule = "device-from-global-rank"

    def test_control_a_rank_the_file_imports(self):
        # bound by an import: the module it comes from decides, not an unassigned name
        code = """
            import torch
            from .dist_utils import rank

            torch.cuda.set_device(rank)
        """
        assert self.rule not in rules(code)

    def test_sibling_an_excerpt_that_never_assigns_rank_says_it_cannot_follow_it(self):
        # heldout4 q002: the one line the thread quoted
        code = """
            torch.cuda.set_device(rank)
        """
        found = [d for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), "train.py") if d.rule == self.rule]
        assert [d.severity for d in found] == ["warning"]
        assert "never assigns" in found[0].message

    def test_sibling_a_cut_fsdp_set_up_read_closed(self):
        # dev6 r022: the excerpt ends inside the FSDP call, after device_id=global_rank,
        code = """
            import torch.distributed as dist
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

            def train_init(model):
                global_rank = dist.get_rank()
                model = FSDP(module=model,
                             device_id=global_rank,
        """
        assert self.rule in rules(code)
