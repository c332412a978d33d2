"""Controls and siblings for lintB20 (issue 41): lint warnings right, one diagnostic per cause, and
quiet where the file shows why. Each program is a few lines of a lint heldout17 / heldout18 script
(source in the comment above it), linted by the real engine."""

from __future__ import annotations

import textwrap

from gpudoctor.linter import engine


def found(code: str, rule: str) -> list[tuple[int, tuple[int, ...]]]:
    """(line, other lines of the same cause) of each diagnostic of `rule`."""
    return [(d.line, d.also) for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), "train.py")
            if d.rule == rule]


# lint heldout18 u010 (a horovod-style trainer): four folders tested and made at the module's top on every rank
FOLDERS = """
    import os
    import torch.distributed as dist

    dist.init_process_group("nccl")
    if not os.path.exists(config.output_dir):
        os.mkdir(config.output_dir)
    if not os.path.exists(config.output_dir + "/log"):
        os.mkdir(config.output_dir + "/log")
    if not os.path.exists(config.output_dir + "/models"):
        os.mkdir(config.output_dir + "/models")
    MORE
"""


class TestMkdirRaceAllRanksOnePerCause:
    """mkdir-race-all-ranks: the folders one function (or the module's top) makes on every rank are one
    race, said once at the first, naming the others."""

    rule = "mkdir-race-all-ranks"

    def test_sibling_the_folders_of_one_scope_are_one_diagnostic_naming_the_others(self):
        assert found(FOLDERS.replace("MORE", ""), self.rule) == [(6, (8, 10))]
        message = next(d.message for d in engine.lint_source(textwrap.dedent(FOLDERS.replace("MORE", "")).lstrip("\n"),
                                                            "train.py") if d.rule == self.rule)
        assert message.endswith("(the same at line 8 and line 10)")

    def test_sibling_a_folder_made_in_another_function_is_its_own(self):
        more = "def save(path):\n        os.makedirs(path + '/ckpt')\n    save(config.output_dir)\n"
        assert found(FOLDERS.replace("MORE", more), self.rule) == [(6, (8, 10)), (12, ())]

    def test_control_made_on_rank_0_is_not_reported(self):
        code = FOLDERS.replace("MORE", "").replace('dist.init_process_group("nccl")\n',
                                                   'dist.init_process_group("nccl")\nif dist.get_rank() == 0:\n')
        code = code.replace("\n    if not", "\n        if not").replace("\n        os.mkdir", "\n            os.mkdir")
        assert found(code, self.rule) == []


# lint heldout17 u023 (a watermarking trainer): the encoder-decoder's DDP state dict saved after pretraining and
# again at the end of training, in another function
TWO_SAVES = """
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    def pretrain(net_Encdec, path):
        torch.save(net_Encdec.state_dict(), path + "/pre.pth")

    def main(model, other, path):
        dist.init_process_group("nccl")
        net_Encdec = DDP(model.cuda(), device_ids=[0])
        SECOND = DDP(other.cuda(), device_ids=[0])
        pretrain(net_Encdec, path)
        torch.save(net_Encdec.state_dict(), path + "/encdec.pth")
        torch.save(SECOND.state_dict(), path + "/second.pth")
"""


class TestSaveDdpWrapperOnePerCause:
    """save-ddp-wrapper: one wrapper's state dict saved at several calls is one 'module.' prefix, said once."""

    rule = "save-ddp-wrapper"

    def test_sibling_one_wrapper_saved_twice_is_one_diagnostic(self):
        assert found(TWO_SAVES.replace("SECOND", "net_Encdec"), self.rule)[0] == (6, (13, 14))

    def test_sibling_another_wrapper_saved_is_its_own(self):
        assert found(TWO_SAVES.replace("SECOND", "net_Gen"), self.rule) == [(6, (13,)), (14, ())]

    def test_control_the_unwrapped_state_dict_is_not_reported(self):
        code = TWO_SAVES.replace("SECOND", "net_Gen").replace(".state_dict()", ".module.state_dict()")
        assert found(code, self.rule) == []


# lint heldout18 u061 (SfmLearner's train.py): both networks wrapped in DataParallel when several GPUs show
NETS = """
    import torch

    def main(args, models, device):
        model1 = models.DispNetS()
        if torch.cuda.device_count() > 1:
            model1 = torch.nn.DataParallel(model1)
        model2 = models.PoseExpNet()
        if torch.cuda.device_count() > 1:
            model2 = torch.nn.DataParallel(model2)
        return model1.to(device), model2.to(device)
    OTHER
"""


class TestDataParallelOnePerCause:
    """dataparallel: the wraps of one function are one choice of DataParallel, said once."""

    rule = "dataparallel"

    def test_sibling_two_wraps_in_one_function_are_one_diagnostic(self):
        assert found(NETS.replace("OTHER", ""), self.rule) == [(6, (9,))]

    def test_sibling_a_wrap_in_another_function_is_its_own(self):
        other = "\ndef evaluate(net):\n        return torch.nn.DataParallel(net)\n"
        assert found(NETS.replace("OTHER", other), self.rule) == [(6, (9,)), (13, ())]

    def test_control_distributed_data_parallel_is_not_reported(self):
        code = NETS.replace("OTHER", "").replace("torch.nn.DataParallel(model1)", "model1.cuda()")
        code = code.replace("torch.nn.DataParallel(model2)", "model2.cuda()")
        assert found(code, self.rule) == []


# lint heldout18 u041 (a CIFAR DDP demo): the train and test loaders of one spawned worker
LOADERS = """
    import torch.multiprocessing as mp
    from torch.utils.data import DataLoader

    def main(rank, world_size, trainset, testset, epochs):
        train_loader = DataLoader(trainset, batch_size=64, num_workers=8)
        test_loader = DataLoader(testset, batch_size=64, num_workers=8)
        for epoch in range(epochs):
            for batch in train_loader:
                pass
            for batch in test_loader:
                pass

    if __name__ == "__main__":
        mp.spawn(main, args=(4,), nprocs=4)
"""


class TestSpawnNumWorkersOnePerCause:
    """spawn-num-workers: the loaders one spawned worker builds are one missing persistent_workers."""

    rule = "spawn-num-workers"

    def test_sibling_two_loaders_of_one_worker_are_one_diagnostic(self):
        assert found(LOADERS, self.rule) == [(5, (6,))]

    def test_control_persistent_workers_is_not_reported(self):
        assert found(LOADERS.replace("num_workers=8)", "num_workers=8, persistent_workers=True)"), self.rule) == []
