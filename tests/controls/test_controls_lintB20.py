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

    def test_sibling_a_folder_made_in_another_function_is_the_same_race(self):
        # one file's folders made on every rank are one race (lintA22, lint heldout20 u003-u005)
        more = "def save(path):\n        os.makedirs(path + '/ckpt')\n    save(config.output_dir)\n"
        assert found(FOLDERS.replace("MORE", more), self.rule) == [(6, (8, 10, 12))]

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

    def test_sibling_another_wrapper_saved_is_the_same_cause(self):
        # one file's wrappers saved so are one cause (lintA22, lint heldout20 u026: netG and netD)
        assert found(TWO_SAVES.replace("SECOND", "net_Gen"), self.rule) == [(6, (13, 14))]

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


# lint heldout18 u016 (an EfficientNet CenterNet trainer): `multi_gpu=True` set in main(), the unwrapped state
# saved under `if multi_gpu:` and the wrapper's under `else:`, both on every rank
FLAG = """
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    def main(args, net):
        dist.init_process_group("nccl", init_method="env://")
        model = DDP(net.cuda(), device_ids=[args.local_rank])
        multi_gpu = VALUE
        train(model, multi_gpu=multi_gpu)
        if multi_gpu:
            torch.save(model.module.state_dict(), "ddp.pth")
        else:
            torch.save(model.state_dict(), "single.pth")

    if __name__ == "__main__":
        main(parse_args(), Net())
"""


class TestSaveAllRanksDeadArm:
    """save-all-ranks: a save in the arm a local flag bound once to a literal never takes does not run."""

    rule = "save-all-ranks"

    def test_control_the_arm_the_flag_rules_out_is_not_reported(self):
        assert [line for line, _ in found(FLAG.replace("VALUE", "True"), self.rule)] == [11]

    def test_sibling_a_flag_bound_twice_leaves_both_arms_reported(self):
        code = FLAG.replace("VALUE", "True\n        if args.single:\n            multi_gpu = False")
        assert [line for line, _ in found(code, self.rule)] == [13, 15]  # the flag's second binding: 2 lines down


# lint heldout18 u016, u017: torch.distributed.launch's `--local_rank` as the rank, and a literal world size
LAUNCH = """
    import argparse
    import torch
    import torch.distributed as dist

    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)
    args = parser.parse_args()
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group(
        "nccl",
        init_method="env://",
        world_size=SIZE,
        rank=args.local_rank,
    )
"""


class TestWorldSizeHardcodedUnderLaunch:
    """world-size-hardcoded: a group whose rank is the launcher's `--local_rank` is started by the launcher,
    which decides the world size."""

    rule = "world-size-hardcoded"

    def test_sibling_a_literal_world_size_beside_the_launchers_local_rank_is_reported(self):
        assert [line for line, _ in found(LAUNCH.replace("SIZE", "4"), self.rule)] == [12]

    def test_control_the_launchers_world_size_is_not_reported(self):
        assert found(LAUNCH.replace("SIZE", 'int(os.environ["WORLD_SIZE"])'), self.rule) == []

    def test_control_a_parameter_named_local_rank_is_not_read_as_the_launchers(self):
        code = """
            import torch.distributed as dist

            def run(local_rank):
                dist.init_process_group("nccl", init_method="env://", world_size=4, rank=local_rank)
        """
        assert found(code, self.rule) == []


# lint heldout18 u007 (karpathy's build-nanogpt train_gpt2.py): the validation pass runs on every rank under
# no_grad, then HellaSwag's examples are split by rank, each rank running its share of forwards under no_grad
NANOGPT = """
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group("nccl")
    ddp_rank = dist.get_rank()
    ddp_world_size = dist.get_world_size()
    model = DDP(GPT(config).cuda(), device_ids=[0])
    for step in range(max_steps):
        last_step = step == max_steps - 1
        if step % 250 == 0 or last_step:
            model.eval()
            with torch.no_grad():
                for _ in range(20):
                    logits, loss = model(x, y)
        if (step % 250 == 0 or last_step) and GATE:
            for i, example in enumerate(examples):
                if i % ddp_world_size != ddp_rank:
                    continue
                with torch.no_grad():
                    logits, loss = model(tokens)
        model.train()
        logits, loss = model(x, y)
        loss.backward()
"""


class TestDdpForwardOnOneRankAfterNoGradPass:
    """ddp-forward-on-one-rank: DDP broadcasts buffers only in the first forward after one with grad on;
    uneven forwards under no_grad that follow a no-grad pass of every rank broadcast nothing."""

    rule = "ddp-forward-on-one-rank"

    def test_control_uneven_no_grad_forwards_after_an_all_rank_no_grad_pass_are_not_reported(self):
        assert found(NANOGPT.replace("GATE", "True"), self.rule) == []

    def test_sibling_without_the_no_grad_pass_before_them_they_are_reported(self):
        code = NANOGPT.replace("GATE", "True").replace("with torch.no_grad():\n                for _",
                                                        "if True:\n                for _")
        assert [line for line, _ in found(code, self.rule)] == [21]

    def test_sibling_under_a_test_the_pass_does_not_share_they_are_reported(self):
        code = NANOGPT.replace("(step % 250 == 0 or last_step) and GATE", "step % 100 == 0")
        assert [line for line, _ in found(code, self.rule)] == [21]

    def test_control_a_local_rank_the_file_does_not_parse_is_not_read_as_the_launchers(self):
        # lint dev6 r004, a two-GPU debug script: `run(args: Namespace)` with `world_size=2, rank=local_rank`
        code = """
            import torch.distributed

            def run(args):
                local_rank = args.local_rank
                torch.distributed.init_process_group(backend="nccl", world_size=2, rank=local_rank)
        """
        assert found(code, self.rule) == []


# lint heldout17 u042 (a trainer whose `_save_model` helper writes one path): said at the call that runs the helper
# on every rank, the helper's torch.save among its lines (its reader wrote the pitfall at the save)
HELPER = """
    import torch
    import torch.distributed as dist

    def _save_model(model, path):
        torch.save(model.state_dict(), path)

    def train(model, loader, path):
        dist.init_process_group("nccl")
        for batch in loader:
            model(batch).sum().backward()
        GUARD_save_model(model, path)

    if __name__ == "__main__":
        train(Net(), make_loader(), "model.pth")
"""


class TestSaveAllRanksHelperNamesTheSave:
    """save-all-ranks: a save helper called on every rank is said at the call, and the save is one of its lines."""

    rule = "save-all-ranks"

    def test_sibling_the_helpers_call_on_every_rank_names_the_save_line(self):
        assert found(HELPER.replace("GUARD", ""), self.rule) == [(11, (5,))]

    def test_control_the_call_on_rank_0_is_not_reported(self):
        assert found(HELPER.replace("GUARD", "if dist.get_rank() == 0: "), self.rule) == []


# lint heldout18 u045 (a ViT face-id trainer): the backbone and its head trained as one Sequential that the
# Trainer wraps in DDP; the optimizer's groups name the two parts
PARTS = """
    import torch.distributed as dist
    import torch.nn as nn
    from torch import optim
    from torch.nn.parallel import DistributedDataParallel as DDP

    class Trainer:
        def __init__(self, model, optimizer, gpu_id):
            self.model = DDP(model.to(gpu_id), device_ids=[gpu_id])
            self.optimizer = optimizer

    def main(rank, VisionTransformer):
        dist.init_process_group("nccl", rank=rank, world_size=2)
        vit = VisionTransformer()
        mlp = nn.Linear(1000, 10)
        model = nn.Sequential(vit, PART)
        optimizer = optim.AdamW([{"params": vit.parameters()}, {"params": mlp.parameters()}])
        Trainer(model, optimizer, rank)
"""


class TestNoGradientSyncPartOfTheWrappedModel:
    """no-gradient-sync: a model given to the container the DDP line wraps is part of the wrapped model."""

    rule = "no-gradient-sync"

    def test_control_the_parts_of_the_wrapped_sequential_are_not_reported(self):
        assert found(PARTS.replace("PART", "mlp"), self.rule) == []

    def test_sibling_a_part_left_out_of_the_sequential_is_reported(self):
        assert [line for line, _ in found(PARTS.replace("PART", "nn.ReLU()"), self.rule)] == [14]  # mlp, built here


# lint heldout18 u006 (a GAN trainer class): the GPU count printed, then two processes spawned whatever it is
SPAWN_COUNT = """
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp

    def train(rank, world_size):
        dist.init_process_group("gloo", rank=rank, world_size=world_size)
        DEVICE

    if __name__ == "__main__":
        n_gpus = torch.cuda.device_count()
        print("Number of GPU device available: ", n_gpus)
        world_size = 2
        mp.spawn(train, args=(world_size,), nprocs=world_size)
"""


class TestWorldSizeHardcodedSpawnPastTheCount:
    """world-size-hardcoded: a spawn's literal count in a file that only prints the machine's GPU count."""

    rule = "world-size-hardcoded"

    def test_sibling_the_count_printed_and_a_literal_spawned_is_reported(self):
        assert [line for line, _ in found(SPAWN_COUNT.replace("DEVICE", "torch.cuda.set_device(rank)"),
                                          self.rule)] == [12]

    def test_control_ranks_mapped_onto_the_gpus_there_are_not_reported(self):
        # lint heldout4 q005: `device = rank % device_count`
        code = SPAWN_COUNT.replace("DEVICE", "torch.cuda.set_device(rank % torch.cuda.device_count())")
        assert found(code, self.rule) == []

    def test_control_the_count_spawned_is_not_reported(self):
        assert found(SPAWN_COUNT.replace("DEVICE", "pass").replace("world_size = 2", "world_size = n_gpus"),
                     self.rule) == []
