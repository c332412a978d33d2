"""Controls and siblings for lintA26 (issue 41): an error only where the file decides it, and nothing where the
file shows the script right. Each program is the shape of a development script's false error or false warning
(source in the comment above it), cut to a few lines and linted by the real engine: the shape lint cannot decide
gets a warning or nothing, the nearest shape the file decides keeps its error."""

from __future__ import annotations

from test_controls_lintA22 import found, found_also

# yChenN1/Speech_flow train_accelerate.py (lint heldout24 u006): `Tensor` never imported, read only in the
# annotations of a nested function, under `from __future__ import annotations` (never evaluated)
ANNOTATED = """
    FUTURE
    import torch

    def train():
        def latent_to_audio(x: Tensor) -> Tensor:
            return x * 2
        return latent_to_audio(torch.zeros(1))

    if __name__ == "__main__":
        train()
"""


class TestUndefinedNameInAnnotations:
    """undefined-name: a name read only in annotations Python never evaluates is never looked up."""

    verdict = "undefined-name"
    rule = "undefined-name"

    def test_control_annotations_are_postponed(self):
        assert found(ANNOTATED.replace("FUTURE", "from __future__ import annotations"), self.rule) == []

    def test_sibling_annotations_are_evaluated(self):
        # without the future import the nested def evaluates its annotations when train() runs
        assert found(ANNOTATED.replace("FUTURE", "import os"), self.rule) == [(5, "error")]


# ForYourEyesOnlyyy/TinyRecursiveModels train_distributed.py (lint heldout20 u059): `epoch` (only `epc` is bound)
# read in the wandb branch, `use_wandb = is_main and bool(cfg.wandb.get("enabled", False))`
FLAGGED_RANK = """
    import torch
    import torch.distributed as dist

    def main(cfg):
        dist.init_process_group("nccl")
        is_main = dist.get_rank() == 0
        use_wandb = TEST
        for epc in range(cfg.epochs):
            if use_wandb:
                print(f"{epoch + 1}/{cfg.epochs}")

    if __name__ == "__main__":
        main(None)
"""


class TestUndefinedNameUnderRankAndFlag:
    """undefined-name: a rank test joined with a setting is decided by the setting: a warning naming it."""

    verdict = "undefined-name"
    rule = "undefined-name"

    def test_control_a_setting_decides(self):
        assert found(FLAGGED_RANK.replace("TEST", 'is_main and bool(cfg.wandb.get("enabled", False))'),
                     self.rule) == [(10, "warning")]

    def test_sibling_the_rank_alone_decides(self):
        assert found(FLAGGED_RANK.replace("TEST", "dist.get_rank() == 0"), self.rule) == [(10, "error")]


# nanoGPT's train_deepspeed.py (lint heldout24 u028): the usage lines of the docstring name a zero2 and a zero3
# config file, the config comes from the command line; estimate_loss() runs the engine under master_process
ENGINE = '''
    """
    $ deepspeed --num_gpus=4 train_deepspeed.py --deepspeed_config=deepspeed_configs/zero2_config.json
    $ deepspeed --num_gpus=8 train_deepspeed.py --deepspeed_config=deepspeed_configs/zero3_offload_config.json
    """
    import torch
    import deepspeed

    def estimate_loss(model, x):
        with torch.no_grad():
            return model(x)

    def train(model, args, x):
        CONFIG
        engine, optimizer, _, _ = deepspeed.initialize(model=model, config=ds_config)
        master_process = torch.distributed.get_rank() == 0
        if master_process:
            losses = estimate_loss(engine, x)
'''


class TestDdpForwardOnOneRankZeroStage:
    """ddp-forward-on-one-rank: a DeepSpeed engine's forward on one rank is an error only where the code sets
    ZeRO stage 3; a stage named only in the docstring is a warning."""

    verdict = "ddp-forward-on-one-rank"
    rule = "ddp-forward-on-one-rank"

    def test_control_the_stage_is_the_command_lines(self):
        assert found(ENGINE.replace("CONFIG", "ds_config = args.deepspeed_config"), self.rule) == [(17, "warning")]

    def test_sibling_the_code_sets_stage_3(self):
        assert found(ENGINE.replace("CONFIG", 'ds_config = {"zero_optimization": {"stage": 3}}'),
                     self.rule) == [(17, "error")]


# galaxygliese/Latent-DDBM train_deepspeed.py (lint heldout24 u044): `device = rank` with rank = dist.get_rank(),
# then the batches go `.to(device)`
DEVICE = """
    import torch
    import torch.distributed as dist

    def train(model, batch):
        dist.init_process_group("nccl")
        rank = dist.get_rank()
        BIND
        step = 0
        x = batch.to(USE)
"""


class TestDeviceFromGlobalRankBinding:
    """device-from-global-rank: said where the global rank is made the device (the fix's line), its use named."""

    verdict = "device-from-global-rank"
    rule = "device-from-global-rank"

    def test_sibling_said_at_the_binding(self):
        assert found_also(DEVICE.replace("BIND", "device = rank").replace("USE", "device"), self.rule) == [(7, (9,))]

    def test_control_the_rank_itself_is_used(self):
        # `rank = dist.get_rank()` is right as a rank: the mistake is its use as a device
        assert found_also(DEVICE.replace("BIND", "pass").replace("USE", "rank"), self.rule) == [(9, ())]


# galaxygliese/Latent-DDBM train_deepspeed.py (lint heldout24 u044, u045): an unused setup() with a literal
# MASTER_PORT; the main block runs train(), where deepspeed.init_distributed() starts the group
UNUSED_SETUP = """
    import os
    import torch.distributed as dist
    import deepspeed

    def setup(rank, world_size):
        os.environ['MASTER_ADDR'] = 'localhost'
        os.environ['MASTER_PORT'] = '12355'
        dist.init_process_group("gloo", rank=rank, world_size=world_size)

    def train(args):
        START

    if __name__ == '__main__':
        train(None)
"""


class TestHardcodedMasterPortUnusedSetup:
    """hardcoded-master-port: a set-up function the program never runs writes no process's port."""

    verdict = "hardcoded-master-port"
    rule = "hardcoded-master-port"

    def test_control_the_group_starts_elsewhere(self):
        assert found(UNUSED_SETUP.replace("START", "deepspeed.init_distributed()"), self.rule) == []

    def test_sibling_the_setup_is_called(self):
        assert found(UNUSED_SETUP.replace("START", "setup(0, 1)"), self.rule) == [(7, "warning")]


# A DeepSpeed trainer's shape (lint heldout24 u044's deepspeed.initialize, its loop, a barrier after it): the engine
# sets each process's current device to LOCAL_RANK when it is made (DeepSpeedEngine._set_distributed_vars)
ENGINE_SETS_DEVICE = """
    import torch.distributed as dist
    import deepspeed

    def main(model, args):
        dist.init_process_group("nccl")
        BUILD
        for x in loader:
            loss = engine(x.cuda())
            engine.backward(loss)
            engine.step()
        dist.barrier()

    if __name__ == "__main__":
        main(None, None)
"""


class TestNcclNoSetDeviceLibrarySetsIt:
    """nccl-no-set-device: a DeepSpeed engine (or accelerate's state) sets each process's GPU when it is made."""

    verdict = "nccl-no-set-device"
    rule = "nccl-no-set-device"

    def test_control_the_engine_sets_the_device(self):
        built = "engine, optimizer, loader, _ = deepspeed.initialize(args=args, model=model, training_data=data)"
        assert found(ENGINE_SETS_DEVICE.replace("BUILD", built), self.rule) == []

    def test_sibling_a_plain_model_and_loader(self):
        built = "engine, loader = model, make_loader(args)"
        assert found(ENGINE_SETS_DEVICE.replace("BUILD", built), self.rule) == [(5, "warning")]


# a diffusion trainer (lint heldout21 u027): under one `if config.rank == 0:` the DDP model goes to
# generation_callback() and fid_evaluation_callback(), both from modules not linted with it
HANDED_ON = """
    import torch
    from torch.nn.parallel import DistributedDataParallel
    from utils.sampling_utils import generation_callback
    from evaluation.fid import fid_evaluation_callback

    def train(config, model, step):
        model = DistributedDataParallel(model.cuda(), device_ids=[config.local_rank])
        if config.rank == 0:
            generation_callback(model, step)
        SECOND
            fid_evaluation_callback(model, step)
"""


class TestDdpForwardOnOneRankHandedOnOnce:
    """ddp-forward-on-one-rank: the functions not in view one rank test hands the model to are one guess."""

    verdict = "ddp-forward-on-one-rank"
    rule = "ddp-forward-on-one-rank"

    def test_control_one_test_is_one_diagnostic(self):
        assert found_also(HANDED_ON.replace("        SECOND\n", ""), self.rule) == [(9, (10,))]

    def test_sibling_two_tests_are_two(self):
        assert found_also(HANDED_ON.replace("SECOND", "if config.rank == 0 and step % 10 == 0:"),
                          self.rule) == [(9, ()), (11, ())]
