"""Controls and siblings for lintA20 (issue 41): lint errors only where this file decides the crash or
the silent divergence, and errors where it does. Each program is a few lines of a lint heldout18 or
heldout17 script (source in the comment above it), linted by the real engine."""

from __future__ import annotations

import textwrap

from gpudoctor.linter import engine


def found(code: str, rule: str) -> list[tuple[int, str]]:
    """(line, severity) of each diagnostic of `rule`."""
    return [(d.line, d.severity) for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), "train.py")
            if d.rule == rule]


# Moujuruo/adv_pytorch train_multigpu.py (lint heldout18 u041): the step unwraps the DDP wrapper it is
# handed into a name of its own and runs every forward through that name
ALIAS_STEP = """
    import torch
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP

    def train_step(images, targets, ddp_network):
        network = ddp_network.module
        network.d_optimizer.zero_grad()
        perturb, g_output = FORWARD
        d_real = network.discriminator(images)
        d_loss = F.binary_cross_entropy_with_logits(d_real, torch.ones_like(d_real)) + g_output.mean()
        d_loss.backward()
        network.d_optimizer.step()
        return d_loss.item()

    def main(rank, loader, AdvFaces, config):
        network = DDP(AdvFaces(config).to(rank), device_ids=[rank])
        for images, targets in loader:
            train_step(images, targets, network)
"""

# tanghme0w/CIRtoolbox ddp_train.py (lint heldout17 u052): `model_without_ddp = model.module` on the
# distributed path (the model itself on the other), and the step's forwards are its methods
WITHOUT_DDP = """
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP

    def train(config, model, loader, optimizer, scaler, loss_func):
        model_without_ddp = model
        if config['distributed']:
            model = DDP(model, device_ids=[config['gpu']])
            model_without_ddp = model.module
        for ref_img, captions, target_img in loader:
            optimizer.zero_grad()
            query_emb = QUERY(ref_img, captions)
            tgt_emb = model_without_ddp.target_forward(target_img)
            loss = loss_func(100 * query_emb @ tgt_emb.T)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
"""


class TestDdpForwardBypassedModuleAlias:
    """ddp-forward-bypassed: `network = ddp_network.module` is the wrapper's `.module` under another
    name; a training forward through that name bypasses DDP as `ddp_network.module(...)` does."""

    rule = "ddp-forward-bypassed"

    def test_control_the_step_calls_the_wrapper_is_not_reported(self):
        assert found(ALIAS_STEP.replace("FORWARD", "ddp_network(images, targets)"), self.rule) == []

    def test_sibling_the_forward_through_the_alias_is_an_error(self):
        assert found(ALIAS_STEP.replace("FORWARD", "network(images, targets)"), self.rule) == [(6, "error")]

    def test_sibling_an_alias_bound_on_the_distributed_path_only_is_an_error(self):
        code = WITHOUT_DDP.replace("QUERY", "model_without_ddp.query_forward")
        assert found(code, self.rule) == [(11, "error")]

    def test_control_the_wrapper_runs_the_forward_beside_the_alias_is_not_reported(self):
        code = WITHOUT_DDP.replace("QUERY", "model")
        assert found(code, self.rule) == []


# chenziwen23/classification main_ddp.py (lint heldout18 u003): the training epoch, another module's
# function, is handed `mvit_without_ddp` (the wrapper's `.module` on the distributed path) and an
# optimizer over its parameters; only the evaluation gets the wrapper
EPOCH_HELPER = """
    import torch
    from torch import nn
    from trainer.engine import train_one_epoch, evaluate
    from tools import utils

    def main(args, mvit, criterion, loader, val_loader, device):
        if args.enable:
            mvit = nn.parallel.DistributedDataParallel(mvit)
            mvit_without_ddp = mvit.module
        else:
            mvit_without_ddp = mvit
        optimizer = utils.get_optimizer(args.optimizer, PARAMS, args.lr)
        for epoch in range(args.epochs):
            train_stats = train_one_epoch(TRAINED, criterion, loader, optimizer, device, epoch)
            val_stats = evaluate(val_loader, mvit, device, epoch)
"""


class TestDdpForwardBypassedEpochHelperGivenModule:
    """ddp-forward-bypassed: a training function handed the wrapper's `.module` and an optimizer over
    its parameters runs its step on the bare module; handed the wrapper, DDP's forward runs."""

    rule = "ddp-forward-bypassed"

    def test_control_the_epoch_handed_the_wrapper_is_not_reported(self):
        code = EPOCH_HELPER.replace("PARAMS", "mvit_without_ddp.parameters()").replace("TRAINED", "mvit")
        assert found(code, self.rule) == []

    def test_sibling_the_epoch_handed_the_module_is_an_error(self):
        code = EPOCH_HELPER.replace("PARAMS", "mvit_without_ddp.parameters()").replace("TRAINED", "mvit_without_ddp")
        assert found(code, self.rule) == [(14, "error")]

    def test_control_an_optimizer_over_another_module_is_not_reported(self):
        code = EPOCH_HELPER.replace("PARAMS", "head.parameters()").replace("TRAINED", "mvit_without_ddp")
        assert found(code, self.rule) == []

    def test_control_the_epoch_handed_the_wrapper_too_is_not_reported(self):
        code = EPOCH_HELPER.replace("PARAMS", "mvit_without_ddp.parameters()").replace(
            "TRAINED", "mvit_without_ddp, mvit")
        assert found(code, self.rule) == []


# ornamentt/Parsecaps main_ddp.py (lint heldout18 u036): the wrapper is bound to lower-case `model`,
# never read, and the file's own train() is handed the module it wraps
LOCAL_TRAIN = """
    import torch
    from torch import nn
    from torch.optim import Adam

    def train(Model, train_loader, args):
        optimizer = Adam(Model.parameters(), lr=args['learning_rate'])
        for data, labels in train_loader:
            optimizer.zero_grad()
            y_pred = Model(data)
            loss = nn.functional.cross_entropy(y_pred, labels)
            loss.backward()
            optimizer.step()

    def main(local_rank, Model, train_loader, args):
        Model.cuda()
        Model = nn.SyncBatchNorm.convert_sync_batchnorm(Model)
        if torch.cuda.device_count() > 1:
            model = nn.parallel.DistributedDataParallel(Model, device_ids=[local_rank])
        train(Model=TRAINED, train_loader=train_loader, args=args)
"""


class TestDdpForwardBypassedWrapperNeverReadLocalTrain:
    """ddp-forward-bypassed: a wrapper never read while the file's own training function is handed the
    module it wraps (and runs forward and backward on it) is the same bypass as another module's."""

    rule = "ddp-forward-bypassed"

    def test_control_the_wrapper_handed_to_train_is_not_reported(self):
        assert found(LOCAL_TRAIN.replace("TRAINED", "model"), self.rule) == []

    def test_sibling_the_module_handed_to_train_is_an_error(self):
        assert found(LOCAL_TRAIN.replace("TRAINED", "Model"), self.rule) == [(19, "error")]


# codebyutkarsh20/Improving-Satellite-Image-classification-with-ViT main_ddp.py (lint heldout18 u004):
# the project's own load_model/save_model read on the DDP wrapper, one under `--resume and rank 0`
RESUME = """
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP

    def main(args, gpu_id, Model, exp, num_epochs, device):
        model = DDP(Model().to(device), device_ids=[gpu_id])
        resume_epochs = 0
        if TEST:
            resume_epochs = model.load_model(exp)
            model = MOVED
        for epoch in range(resume_epochs + 1, num_epochs + 1):
            if gpu_id == 0:
                model.save_model(epoch, exp)
"""


class TestWrapperMethodCallSettingAndRank:
    """wrapper-method-call: a read under `if <setting> and <rank test>:` runs only where the user sets
    that option: a warning naming it; a device move under that test leaves the wrapper a wrapper."""

    rule = "wrapper-method-call"

    def test_control_the_reads_through_module_are_not_reported(self):
        code = RESUME.replace("TEST", "args['resume'] and gpu_id == 0").replace("MOVED", "model.to(device)") \
            .replace("model.load_model", "model.module.load_model").replace("model.save_model", "model.module.save_model")
        assert found(code, self.rule) == []

    def test_sibling_a_setting_beside_the_rank_test_is_a_warning_and_the_later_save_an_error(self):
        code = RESUME.replace("TEST", "args['resume'] and gpu_id == 0").replace("MOVED", "model.to(device)")
        assert found(code, self.rule) == [(8, "warning"), (12, "error")]

    def test_sibling_the_rank_test_alone_stays_an_error(self):
        # one cause, said once with its other line (the save's)
        code = RESUME.replace("TEST", "gpu_id == 0").replace("MOVED", "model.to(device)")
        assert found(code, self.rule) == [(8, "error")]

    def test_sibling_a_branch_that_unwraps_stays_a_warning(self):
        # the save then reads a wrapper on one path only: a warning of its own, not the --resume one's
        code = RESUME.replace("TEST", "args['resume'] and gpu_id == 0").replace("MOVED", "model.module")
        assert found(code, self.rule) == [(8, "warning"), (12, "warning")]


# cgnerds/CMUNeXt main_ddp.py (lint heldout18 u002): LOCAL_RANK written as "0" at import, then read
# back for set_device and DDP's device_ids in a group torchrun's environment starts
PINNED = """
    import os
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    WRITE

    def main(model):
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        dist.init_process_group(backend='nccl')
        model = DDP(model.to(local_rank), device_ids=[local_rank], output_device=local_rank)

    if __name__ == "__main__":
        main(None)
"""


class TestSetDeviceLiteralLocalRankWritten:
    """set-device-literal: `os.environ['LOCAL_RANK'] = "0"` on a line every process runs, read back as
    the device, overwrites what torchrun gives each process: every process of a node on GPU 0."""

    rule = "set-device-literal"

    def test_control_a_default_the_launcher_overrides_is_not_reported(self):
        assert found(PINNED.replace("WRITE", "os.environ.setdefault('LOCAL_RANK', '0')"), self.rule) == []

    def test_control_a_write_only_where_no_launcher_set_it_is_not_reported(self):
        code = PINNED.replace("WRITE", "if 'LOCAL_RANK' not in os.environ:\n        os.environ['LOCAL_RANK'] = '0'")
        assert found(code, self.rule) == []

    def test_sibling_the_write_at_import_is_an_error(self):
        assert found(PINNED.replace("WRITE", "os.environ['LOCAL_RANK'] = \"0\""), self.rule) == [(6, "error")]

    def test_sibling_a_group_whose_rank_a_flag_gives_stays_a_warning(self):
        code = PINNED.replace("WRITE", "os.environ['LOCAL_RANK'] = \"0\"").replace(
            "backend='nccl'", "backend='nccl', rank=args.rank, world_size=args.world_size")
        assert found(code, self.rule) == [(6, "warning")]


# YigongQin/GrainGraphNN (lint heldout16 u026): the worker mp.spawn runs reads `hp`, `args` and `device`,
# which only the main block binds; the children import the file without running that block
SPAWNED = """
    import argparse
    import torch
    import torch.multiprocessing as mp
    from torch.utils.data import DataLoader

    BOUND

    def criterion(pred, y):
        return torch.nn.functional.mse_loss(pred, y) * args.weight

    def dist_train(rank, world_size, train_list):
        train_loader = DataLoader(train_list, batch_size=hp.batch_size, shuffle=True)
        for x, y in train_loader:
            loss = criterion(x.to(device), y.to(device))

    if __name__ == '__main__':
        parser = argparse.ArgumentParser()
        args = parser.parse_args()
        hp = argparse.Namespace(batch_size=args.batch_size)
        device = 'cuda'
        mp.spawn(dist_train, args=(2, []), nprocs=2, join=True)
"""


class TestUndefinedNameSpawnedMainBlockNames:
    """undefined-name: the names a spawned worker reads that only the main block binds are one cause,
    said once as an error at the worker's own first read, naming the others; bound at the module's
    top, they are there in every child."""

    rule = "undefined-name"

    def test_control_names_bound_at_the_top_are_not_reported(self):
        code = SPAWNED.replace("BOUND", "args, hp, device = argparse.Namespace(weight=1.0), None, 'cuda'")
        assert found(code, self.rule) == []

    def test_sibling_three_main_block_names_are_one_error(self):
        assert found(SPAWNED.replace("BOUND", ""), self.rule) == [(12, "error")]
