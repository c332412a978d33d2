"""Controls and siblings for lintA25 (issue 41): an error only where the script certainly fails. Each case is the
shape of a development script's false error (or of a right error said as a warning), cut to a few lines and linted
by the real engine: the healthy or undecided shape gets no error, the nearest shape the script decides keeps it."""

from __future__ import annotations

from test_controls_lintA22 import found, found_also

# Brotiger/ml-sympson_net-catalyst distributed.py (lint heldout22b u051): `val_sampler` (for `valid_sampler`) in the
# get_loaders of a runner class the file never uses: the main block trains a dl.SupervisedRunner
UNUSED_CLASS = """
    import torch
    from torch.utils.data import DataLoader
    from catalyst import dl

    class CustomSupervisedRunner(dl.SupervisedRunner):
        def get_loaders(self):
            val_dataset = self.val_dataset
            return DataLoader(val_dataset, batch_size=128, sampler=val_sampler)

    if __name__ == '__main__':
        runner = RUNNER()
        runner.train(engine=dl.DistributedDataParallelEngine())
"""


class TestUndefinedNameInAClassNothingUses:
    """undefined-name: a read in a method of a class the file never names is not run by this program: no error, a
    warning that says when it would fail (lintD32: an error only on the path the script runs)."""

    verdict = "undefined-name"
    rule = "undefined-name"

    def test_control_the_class_is_never_used(self):
        assert found(UNUSED_CLASS.replace("RUNNER", "dl.SupervisedRunner"), self.rule) == [(8, "warning")]

    def test_sibling_the_class_is_built(self):
        assert found(UNUSED_CLASS.replace("RUNNER", "CustomSupervisedRunner"), self.rule) == [(8, "error")]


# ru-llm trainer (lint heldout22 u017): the model is built inside `with rank0_first(), device:`, device a
# torch.device of the rank's GPU: built on the GPU, then wrapped with device_ids
BUILT_UNDER_DEVICE = """
    import os
    import torch
    from torch.nn.parallel import DistributedDataParallel
    from transformers import AutoConfig, AutoModelForCausalLM

    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device(f'cuda:{local_rank}')
    torch.cuda.set_device(device)
    WITH
        config = AutoConfig.from_pretrained(args.model_name, use_cache=False)
        model = AutoModelForCausalLM.from_config(config, torch_dtype=torch.bfloat16)
    model = DistributedDataParallel(model, device_ids=[local_rank])
"""


class TestDdpModuleBuiltUnderADeviceContext:
    """ddp-module-on-cpu: a module built inside a `with` whose item is a torch.device (held in a name) is on it."""

    verdict = "ddp-module-on-cpu"
    rule = "ddp-module-on-cpu"

    def test_control_built_inside_the_device_named_in_a_variable(self):
        assert found(BUILT_UNDER_DEVICE.replace("WITH", "with rank0_first(), device:"), self.rule) == []

    def test_sibling_built_inside_another_context(self):
        assert found(BUILT_UNDER_DEVICE.replace("WITH", "with rank0_first():"), self.rule) == [(12, "error")]


# DictNet trainer (lint heldout22b u032): mp.spawn over every GPU, no set_device, each worker's model and DDP on
# `rank`, and one "cuda" kept in a device nothing reads
SPAWNED_BY_INDEX = """
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    from torch.nn.parallel import DistributedDataParallel as DDP

    def demo(rank, world_size):
        dist.init_process_group('nccl', rank=rank, world_size=world_size)
        device = torch.device(
            "cuda") if torch.cuda.is_available() else torch.device("cpu")
        model = DictNet()
        model.to(rank)
        ddp_model = DDP(model, device_ids=[rank])
        READ

    if __name__ == "__main__":
        world_size = torch.cuda.device_count()
        mp.spawn(demo, args=(world_size,), nprocs=world_size, join=True)
"""


class TestNcclNoSetDeviceUnreadTorchDevice:
    """nccl-no-set-device: a "cuda" given to torch.device(...) in a name nothing reads places nothing: a warning."""

    verdict = "nccl-no-set-device"
    rule = "nccl-no-set-device"

    def test_control_the_device_is_never_read(self):
        # lintA28: the work named on each rank's GPU, nothing read on the current one: no pitfall (heldout22b u032)
        assert found(SPAWNED_BY_INDEX.replace("READ", "train(ddp_model, rank)"), self.rule) == []

    def test_sibling_the_device_is_read(self):
        assert found(SPAWNED_BY_INDEX.replace("READ", "train(ddp_model, device)"), self.rule) == [(7, "error")]


# jiaqianjing llm trainer (lint heldout15 u020): only the main rank trains the tokenizer (ending in a barrier)
# when its vocabulary file is missing, the others go on to the barrier after the branch
TOKENIZER_ON_MAIN = """
    from pathlib import Path
    import torch.distributed as dist

    def load_data(split):
        data = read(split)
        if dist.is_initialized(): dist.barrier()
        return data

    def main():
        GATE
            if is_main():
                data = load_data("pretrain")
                train_tokenizer(data)
        if dist.is_initialized(): dist.barrier()
"""


class TestCollectiveUnderRankTestInsideAnOptionTest:
    """collective-under-rank-condition: a rank split inside a test of an option whose default is off hangs only on
    the runs that turn it on: a warning naming that test; inside a test of the file system it stays an error (a
    first run on a fresh machine takes it)."""

    verdict = "collective-under-rank-condition"
    rule = "collective-under-rank-condition"

    def test_control_the_split_runs_only_when_an_option_is_set(self):
        code = TOKENIZER_ON_MAIN.replace("GATE", 'if getattr(args, "train_tokenizer", False):')
        assert found(code, self.rule) == [(12, "warning")]

    def test_sibling_the_split_runs_when_a_file_is_missing(self):
        code = TOKENIZER_ON_MAIN.replace("GATE", 'if not Path("tokenizer_vocab.txt").exists():')
        assert found(code, self.rule) == [(12, "error")]


# nested_learning FSDP trainer (lint heldout22 u003): save_checkpoint leaves unless checkpointing is enabled in
# the config (off by default), then on every rank but 0, before the FULL_STATE_DICT gather
CONFIG_GATED_SAVE = """
    import torch.distributed as dist
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, FullStateDictConfig, StateDictType

    def save_checkpoint(cfg, model, step, rank):
        ckpt_cfg = cfg.train.get("checkpoint")
        GATE
        if rank != 0:
            return
        full_state_cfg = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
        with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, full_state_cfg):
            model_state = model.state_dict()
        torch.save(model_state, "ckpt.pt")

    dist.init_process_group("nccl")
    model = FSDP(net)
    for step in range(steps):
        train_step(model)
        save_checkpoint(cfg, model, step, dist.get_rank())
"""


class TestCollectiveReachedOnlyWhenAnOptionIsOn:
    """collective-under-rank-condition: a split reached only past an early exit that an option off by default
    takes (`if not ckpt_cfg.get("enable", False): return`): a warning, naming it, said at the rank test too."""

    verdict = "collective-under-rank-condition"
    rule = "collective-under-rank-condition"

    def test_control_the_save_is_off_unless_enabled(self):
        code = CONFIG_GATED_SAVE.replace("GATE", 'if not ckpt_cfg or not ckpt_cfg.get("enable", False):\n'
                                                 "            return")
        assert [sev for _, sev in found(code, self.rule)] == ["warning"]

    def test_sibling_the_save_runs_every_step(self):
        code = CONFIG_GATED_SAVE.replace("GATE", "pass")
        assert found(code, self.rule) == [(11, "error")]
        assert 7 in found_also(code, self.rule)[0][1]


# OLMo-style FSDP SFT (lint heldout21 u080): a per-sample loss dump run with the FSDP model on the master only,
# when a debug flag is passed
DEBUG_FORWARD = """
    import torch
    import torch.distributed as dist
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

    dist.init_process_group("nccl")
    model = FSDP(net)
    is_master = dist.get_rank() == 0
    for steps, batch in enumerate(loader):
        loss = model(batch).loss
        loss.backward()
        optimizer.step()
        if TEST:
            with torch.no_grad():
                per_sample = model(batch)
"""


class TestFsdpForwardOnOneRankBehindAFlag:
    """ddp-forward-on-one-rank: the rank test joined to a flag the file does not decide is a warning naming it."""

    verdict = "ddp-forward-on-one-rank"
    rule = "ddp-forward-on-one-rank"

    def test_control_only_with_a_debug_flag(self):
        code = DEBUG_FORWARD.replace("TEST", "is_master and args.debug_per_sample_loss")
        assert found(code, self.rule) == [(14, "warning")]

    def test_sibling_every_step_on_the_master(self):
        code = DEBUG_FORWARD.replace("TEST", "is_master")
        assert found(code, self.rule) == [(14, "error")]


# minimind issue 52 (lint dev d023), run with torchrun --nproc_per_node 3: RANK pinned in the environment
ENV_PIN = """
    import os
    import torch.distributed as dist

    os.environ['MASTER_ADDR'] = 'localhost'
    os.environ['MASTER_PORT'] = '12355'
    os.environ["RANK"] = "PINNED"
    os.environ["WORLD_SIZE"] = "3"
    dist.init_process_group(backend="nccl")
"""


class TestRankZeroPinned:
    """rank-hardcoded: rank 0 pinned with a world above 1 is an error (a file that is rank 0's only shows no copy
    for the other ranks); another rank pinned is a per-rank file (lint heldout4 q020): a warning."""

    verdict = "rank-hardcoded"
    rule = "rank-hardcoded"

    def test_sibling_rank_zero_of_three(self):
        assert found(ENV_PIN.replace("PINNED", "0"), self.rule) == [(6, "error")]

    def test_control_rank_one_is_a_per_rank_file(self):
        assert found(ENV_PIN.replace("PINNED", "1"), self.rule) == [(6, "warning")]

    def test_control_rank_zero_of_one(self):
        assert found(ENV_PIN.replace("PINNED", "0").replace('"3"', '"1"'), self.rule) == []


# nemotron-finetune train_fsdp.py (lint heldout21 u094): trl's SFTTrainer with fsdp="full_shard auto_wrap", the
# final save on local rank 0 only
TRAINER_SAVE = """
    import os
    from trl import SFTConfig, SFTTrainer

    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    sft_config = SFTConfig(output_dir="out", SHARDING)
    trainer = SFTTrainer(model=model, args=sft_config, train_dataset=train)
    trainer.train()
    if local_rank == 0:
        trainer.save_model("out")
"""


class TestTrainerSaveModelOnOneRank:
    """collective-under-rank-condition: a transformers / trl Trainer's save_model under a rank test, where the file
    shards the Trainer (FSDP, ZeRO-3), gathers the full state dict: an error; under plain DDP it is no collective."""

    verdict = "collective-under-rank-condition"
    rule = "collective-under-rank-condition"

    def test_sibling_under_fsdp(self):
        assert found(TRAINER_SAVE.replace("SHARDING", 'fsdp="full_shard auto_wrap"'), self.rule) == [(9, "error")]

    def test_control_under_plain_ddp(self):
        assert found(TRAINER_SAVE.replace("SHARDING", "ddp_find_unused_parameters=False"), self.rule) == []


# DMFF-like training script (lint dev4 k065): a dataset class of another module built before a DistributedSampler,
# at the top of a script that loops over epochs; nothing in the file starts a process group
SAMPLER_FIRST = """
    import torch
    from torch.utils.data import DistributedSampler
    import data_pre

    dataset = BEFORE
    sampler = DistributedSampler(dataset)
    for epoch in range(10):
        sampler.set_epoch(epoch)
"""


class TestDistWithoutInitAfterAnotherModulesCall:
    """dist-without-init: where the only call before the sampler is another module's with no set-up name, in a
    script, an error; a set-up-like name (which may start the group) is believed."""

    verdict = "dist-without-init"
    rule = "dist-without-init"

    def test_sibling_a_data_class_before(self):
        assert found(SAMPLER_FIRST.replace("BEFORE", 'data_pre.Data("train")'), self.rule) == [(6, "error")]

    def test_control_a_set_up_call_before(self):
        assert found(SAMPLER_FIRST.replace("BEFORE", 'data_pre.setup_distributed("train")'), self.rule) == []


class TestTrainerEvaluateOnOneRank:
    """ddp-forward-on-one-rank: a sharded Trainer's evaluate under a rank test runs the sharded forward on one rank:
    an error; the same Trainer under plain DDP evaluates locally."""

    verdict = "ddp-forward-on-one-rank"
    rule = "ddp-forward-on-one-rank"

    def test_sibling_under_fsdp(self):
        code = TRAINER_SAVE.replace("SHARDING", 'fsdp="full_shard auto_wrap"').replace(
            'trainer.save_model("out")', "metrics = trainer.evaluate(eval_dataset=test)")
        assert found(code, self.rule) == [(9, "error")]

    def test_control_under_plain_ddp(self):
        code = TRAINER_SAVE.replace("SHARDING", "ddp_find_unused_parameters=False").replace(
            'trainer.save_model("out")', "metrics = trainer.evaluate(eval_dataset=test)")
        assert found(code, self.rule) == []
