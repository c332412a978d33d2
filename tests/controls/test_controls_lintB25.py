"""Controls and siblings for lintB25 (issue 41: warnings readers do not count). Each narrowing silences
what its development false warnings share, beside the nearest script that must keep the warning; the
advice tier keeps a rule about speed out of the default run and in a run that names it. Each program is
a few lines of a lint development script (source in the comment above it), linted by the real engine."""

from __future__ import annotations

import textwrap

from gpudoctor.linter import engine


def found(code: str, rule: str, rules: tuple = engine.ALL) -> list[tuple[int, str]]:
    """(line, message) of each diagnostic of `rule`."""
    return [(d.line, d.message) for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), "train.py", rules)
            if d.rule == rule]


def lines(code: str, rule: str, rules: tuple = engine.ALL) -> list[int]:
    return [line for line, _ in found(code, rule, rules)]


# lint heldout18 u021 (an mp.spawn trainer): DataLoader workers in a spawned worker, no persistent_workers
SPAWNED_LOADER = """
    import torch.multiprocessing as mp
    from torch.utils.data import DataLoader

    def main_worker(gpu, args):
        loader = DataLoader(dataset, batch_size=64, num_workers=4)
        for epoch in range(args.epochs):
            for batch in loader:
                pass

    if __name__ == "__main__":
        mp.spawn(main_worker, args=(args,), nprocs=4)
"""


class TestSpawnNumWorkersIsAdvice:
    """spawn-num-workers: advice about speed, run only where it is named."""

    rule = "spawn-num-workers"

    def test_control_the_default_run_leaves_it_out(self):
        chosen = engine.choose_rules()
        assert self.rule not in {r.id for r in chosen}
        assert lines(SPAWNED_LOADER, self.rule, chosen) == []

    def test_sibling_named_it_runs_and_says_it(self):
        chosen = engine.choose_rules(select=[self.rule])
        assert lines(SPAWNED_LOADER, self.rule, chosen) == [5]

    def test_sibling_every_other_rule_still_runs_by_default(self):
        assert {r.id for r in engine.choose_rules()} == {r.id for r in engine.ALL} - {self.rule}

    def test_sibling_extend_select_runs_it_beside_every_default_rule(self, tmp_path, monkeypatch):
        # --extend-select (and `extend-select` in the config): the advice added, nothing else dropped
        from gpudoctor import api
        from gpudoctor.commands.lint.options import Options, validate

        script = tmp_path / "train.py"
        script.write_text(textwrap.dedent(SPAWNED_LOADER).lstrip("\n"))
        chosen = validate(Options(paths=(str(script),), extend_select=(self.rule,), config=False)).select
        assert set(chosen) == {r.id for r in engine.ALL}
        (tmp_path / "pyproject.toml").write_text(f'[tool.gpudoctor.lint]\nextend-select = ["{self.rule}"]\n')
        monkeypatch.chdir(tmp_path)
        assert self.rule in validate(Options(paths=(str(script),))).select
        said = [f.id for f in api.lint(str(script), extend_select=[self.rule]).findings]
        default = [f.id for f in api.lint(str(script)).findings]
        assert sorted(said) == sorted(default + [self.rule])
        assert self.rule not in default


# lint heldout23 u076 (harveyp123/Pytorch-DDP-Example mnist_ddp.py): the loss reduced to dst=0, read where
# `gpu` is 0, in a group whose rendezvous is this machine's loopback address
REDUCED = """
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp

    def train(gpu, args):
        torch.cuda.set_device(gpu)
        dist.init_process_group(backend="nccl", INIT world_size=args.world_size, rank=args.rank)
        reduced_loss = loss.data.clone()
        dist.reduce(reduced_loss, dst=0)
        if gpu == 0:
            print(reduced_loss.item())
"""

# lint heldout20 u052 (mychiux413/SAFA run_ddp.py): a local-rank gate over folders, MASTER_ADDR written here,
# the group ranked by the file
GATED = """
    import os
    import torch.distributed as dist

    def train(opt, log_dir):
        local_rank = opt.local_rank
        ADDR
        os.environ['MASTER_PORT'] = '5678'
        dist.init_process_group(GROUP)
        if local_rank == 0:
            os.makedirs(log_dir)
"""


class TestLocalRankAsGlobalRankOnOneNode:
    """local-rank-as-global-rank: a rendezvous at the loopback address is one node by construction."""

    rule = "local-rank-as-global-rank"

    def test_control_a_tcp_localhost_rendezvous_is_one_node(self):
        assert lines(REDUCED.replace("INIT", 'init_method="tcp://localhost:12345",'), self.rule) == []

    def test_control_master_addr_written_as_localhost_is_one_node(self):
        code = GATED.replace("ADDR", "os.environ['MASTER_ADDR'] = 'localhost'")
        assert lines(code.replace("GROUP", "'nccl', rank=opt.rank, world_size=opt.world_size"), self.rule) == []

    def test_sibling_a_launcher_ranked_group_whose_address_is_overwritten_is_said(self):
        # lint heldout21 u078 (a MONAI torchrun trainer): MASTER_ADDR = 'localhost' over torchrun's, no rank given
        code = GATED.replace("ADDR", "os.environ['MASTER_ADDR'] = 'localhost'")
        assert lines(code.replace("GROUP", "'nccl'"), self.rule) == [9]

    def test_sibling_a_rendezvous_on_another_host_is_said(self):
        assert lines(REDUCED.replace("INIT", 'init_method="tcp://10.0.0.1:12345",'), self.rule) == [10]

    def test_sibling_a_default_address_the_launcher_overrides_is_said(self):
        # setdefault: torchrun's MASTER_ADDR (another node's) wins over it
        code = GATED.replace("ADDR", "os.environ.setdefault('MASTER_ADDR', 'localhost')")
        assert lines(code.replace("GROUP", "'nccl', rank=opt.rank, world_size=opt.world_size"), self.rule) == [9]

    def test_sibling_a_loopback_address_beside_another_is_said(self):
        code = GATED.replace("ADDR", "os.environ['MASTER_ADDR'] = 'localhost' if opt.single else opt.master_addr")
        assert lines(code.replace("GROUP", "'nccl', rank=opt.rank, world_size=opt.world_size"), self.rule) == [9]


# lint heldout21 u035 (a torchrun trainer): the first-process test bound to a flag through a conditional expression
FLAG = """
    import os
    import torch
    import torch.distributed as dist

    local_rank = int(os.environ['LOCAL_RANK'])
    dist.init_process_group(backend='nccl')
    is_main = True if local_rank == 0 else False
    if is_main:
        WRITE
"""


class TestLocalRankAsGlobalRankFlagByConditional:
    """local-rank-as-global-rank: `is_main = True if local_rank == 0 else False` is the test as a flag."""

    rule = "local-rank-as-global-rank"

    def test_sibling_the_flag_guarding_a_save_is_said(self):
        assert lines(FLAG.replace("WRITE", "torch.save(model.state_dict(), 'saved_models/best.pt')"), self.rule) == [7]

    def test_control_the_flag_guarding_printing_only_is_not_said(self):
        assert lines(FLAG.replace("WRITE", "print('epoch done')"), self.rule) == []


# lint heldout23 u054 (qiuqiangkong/piano_transcription train_accelerate.py): Accelerate's per-machine first process
ACCELERATE = """
    import wandb
    import transformers
    from accelerate import Accelerator

    def train(args, wandb_log):
        accelerator = Accelerator()
        wandb_log = accelerator.TEST and wandb_log
        if wandb_log:
            wandb.init(project="mini_source_separation", config=vars(args))
        if accelerator.TEST:
            transformers.utils.logging.set_verbosity_warning()
"""


class TestLocalRankAsGlobalRankAccelerate:
    """local-rank-as-global-rank: Accelerate's is_local_main_process is the first process of each machine."""

    rule = "local-rank-as-global-rank"

    def test_sibling_a_wandb_run_under_is_local_main_process_is_said(self):
        [(line, message)] = found(ACCELERATE.replace("TEST", "is_local_main_process"), self.rule)
        assert line == 7 and "first process of each machine" in message and "`init()`" in message

    def test_control_the_whole_jobs_main_process_is_not_said(self):
        assert lines(ACCELERATE.replace("TEST", "is_main_process"), self.rule) == []

    def test_control_logging_settings_only_are_not_said(self):
        code = ACCELERATE.replace("wandb_log = accelerator.TEST and wandb_log", "wandb_log = accelerator.is_main_process")
        assert lines(code.replace("TEST", "is_local_main_process"), self.rule) == []


# lint heldout23 u071 (AIZOOTech/pytorch_mnist_ddp mnist_ddp.py): the DeiT-style init_distributed_mode,
# torchrun's variables first, then SLURM's, the rendezvous an option whose default is env://
SLURM = """
    import argparse
    import os
    import torch
    import torch.distributed as dist

    parser = argparse.ArgumentParser()
    parser.add_argument("--dist_url", default="env://")

    def init_distributed_mode(args):
        if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
            args.rank = int(os.environ["RANK"])
            args.gpu = int(os.environ["LOCAL_RANK"])
        elif "SLURM_PROCID" in os.environ:
            args.rank = int(os.environ["SLURM_PROCID"])
            args.gpu = args.rank % torch.cuda.device_count()
        torch.cuda.set_device(args.gpu)
        dist.init_process_group(backend="nccl", METHOD world_size=args.world_size, rank=args.rank)
"""


class TestMasterAddrNotSetSlurmOption:
    """master-addr-not-set: under SLURM, a rendezvous given as an option is the launcher's to choose."""

    rule = "master-addr-not-set"

    def test_control_the_rendezvous_an_option_is_not_said(self):
        # DeiT/MAE's SLURM launcher (run_with_submitit.py) passes its own --dist_url, a file:// URL
        assert lines(SLURM.replace("METHOD", "init_method=args.dist_url,"), self.rule) == []

    def test_sibling_no_init_method_is_said(self):
        # lint heldout11 u011 (Skovorp/feral distributed_train.py): env:// decided by the file itself
        assert lines(SLURM.replace("METHOD", ""), self.rule) == [17]

    def test_sibling_a_literal_env_url_is_said(self):
        assert lines(SLURM.replace("METHOD", 'init_method="env://",'), self.rule) == [17]


# lint heldout23 u071 (AIZOOTech/pytorch_mnist_ddp mnist_ddp.py): wrapped under `if args.distributed:`,
# saved under the same test by rank 0, the plain model saved in its `else`
SAVED = """
    import torch
    import torch.distributed as dist

    def main(args, device):
        model = Net().to(device)
        if args.distributed:
            model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
        train(model)
        if args.save_model:
            if SAVE_TEST:
                if dist.get_rank() == 0:
                    torch.save(model.state_dict(), "mnist_cnn.pt")
            else:
                torch.save(model.state_dict(), "mnist_cnn_.pt")
"""


class TestSaveDdpWrapperUnderTheWrappingTest:
    """save-ddp-wrapper: a save under the very test the wrapping is under saves the wrapper."""

    rule = "save-ddp-wrapper"

    def test_sibling_the_save_under_the_wrapping_test_is_said(self):
        [(line, message)] = found(SAVED.replace("SAVE_TEST", "args.distributed"), self.rule)
        assert line == 12 and "DistributedDataParallel wrapper" in message and "'module.'" in message

    def test_control_the_save_under_the_opposite_test_is_not_said(self):
        # `if not args.distributed:` saves there; the `else` (the wrapper) saves `.module`
        code = SAVED.replace("SAVE_TEST", "not args.distributed").replace(
            'torch.save(model.state_dict(), "mnist_cnn_.pt")', 'torch.save(model.module.state_dict(), "m.pt")')
        assert lines(code, self.rule) == []

    def test_control_a_wrapping_under_a_further_test_is_not_decided(self):
        # wrapped only `if args.distributed and args.ddp:`: the save's `if args.distributed:` may hold the plain model
        code = SAVED.replace("if args.distributed:\n            model =", "if args.distributed and args.ddp:\n"
                             "            model =").replace("SAVE_TEST", "args.distributed")
        assert lines(code, self.rule) == []
