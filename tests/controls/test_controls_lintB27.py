"""Controls and siblings for lintB27 (issue 41: recall on the pitfalls fresh scripts hold). Each program is the
shape of a lint development script's missed pitfall (source in the comment above it), cut to a few lines and linted
by the real engine: the pitfall gets its rule, the nearest right script (or the excerpt lint cannot decide) gets
nothing or a warning."""

from __future__ import annotations

from test_controls_lintA22 import found


# OpenPecha/RoBERTa accelerate_train.py (lint heldout25c u003): a flat script, no main block, whose settings block
# types `==` for `=`; the name is read again further down. Padded to the length of a whole script with settings.
SETTINGS = "\n".join(f"    setting_{i} = {i}" for i in range(30))
FLAT_SCRIPT = """
    import os
    import torch
    from accelerate import Accelerator

    train_batch_size = 60
    num_epochs = 40
    CHECKPOINTING
    output_dir = "RoBERTa"
""" + SETTINGS + """
    accelerator = Accelerator()
    for epoch in range(num_epochs):
        if checkpointing_steps == "epoch":
            accelerator.save_state(os.path.join(output_dir, f"epoch_{epoch}"))
"""


class TestUndefinedNameInAFlatScript:
    """undefined-name: a script with no main block is read whole from 40 lines on; an excerpt is not."""

    verdict = "undefined-name"
    rule = "undefined-name"

    def test_sibling_the_typo_in_a_whole_script(self):
        assert found(FLAT_SCRIPT.replace("CHECKPOINTING", 'checkpointing_steps == "epoch"'), self.rule) == [(7, "error")]

    def test_control_the_assignment(self):
        assert found(FLAT_SCRIPT.replace("CHECKPOINTING", 'checkpointing_steps = "epoch"'), self.rule) == []

    def test_control_a_placeholder_makes_it_a_sketch(self):
        code = FLAT_SCRIPT.replace("CHECKPOINTING", 'checkpointing_steps == "epoch"').replace(
            'output_dir = "RoBERTa"', "output_dir = ...")
        assert found(code, self.rule) == []

    def test_control_a_short_excerpt(self):
        # heldout7 t019 (a CSDN post): `model=Net()`, Net defined in the part the post left out
        code = """
            import os
            os.environ["CUDA_VISIBLE_DEVICES"] = "0,1,3"

            import torch.nn as nn
            model = Net()
            model = nn.DataParallel(model, device_ids=[0, 1])
            model.cuda()
        """
        assert found(code, self.rule) == []


# HecktorSegmentation train_3d.py (lint heldout25c u041): a stray `oss` at the first checkpoint, more lines after it
STRAY = """
    import torch

    def train(net, epochs):
        for epoch in range(epochs):
            if epoch % 5 == 0 and epoch != 0:
                oss
                torch.save(net.state_dict(), f"net{epoch}.pth")
    STRAY_END
    if __name__ == "__main__":
        train(torch.nn.Linear(2, 2), 10)
"""


class TestUndefinedNameStrayExpression:
    """undefined-name: a bare name with lines after it raises; one as the file's last line is a line cut off."""

    verdict = "undefined-name"
    rule = "undefined-name"

    def test_sibling_a_stray_name_mid_block(self):
        assert found(STRAY.replace("STRAY_END", ""), self.rule) == [(6, "warning")]

    def test_control_a_name_cut_off_at_the_end(self):
        # dev5 n048: a thread's paste that stops at `cla`
        code = """
            import torch
            import torch.distributed as dist

            def setup(rank, world_size):
                dist.init_process_group("nccl", rank=rank, world_size=world_size)

            if __name__ == "__main__":
                setup(0, 1)
            cla
        """
        assert found(code, self.rule) == []


# unsloth-style LoRA fine-tune (lint heldout25c u013): `lora_dir` bound only under accelerator.is_main_process and
# read on every process; the file shows no launch of several processes
MAIN_ONLY = """
    import os
    from accelerate import Accelerator
    LAUNCH

    def main(args):
        accelerator = Accelerator()
        if accelerator.is_main_process:
            lora_dir = os.path.dirname(args.train_path)
        print(os.path.join(lora_dir, "outputs"))

    if __name__ == "__main__":
        main(None)
"""


class TestUndefinedNameBoundOnTheMainProcess:
    """undefined-name: bound under a rank test, read on every rank: an error only where the file runs several
    processes."""

    verdict = "undefined-name"
    rule = "undefined-name"

    def test_control_no_launch_shown(self):
        assert found(MAIN_ONLY.replace("LAUNCH", ""), self.rule) == [(9, "warning")]

    def test_sibling_a_launch_shown(self):
        code = MAIN_ONLY.replace("LAUNCH", '# accelerate launch --num_processes 4 train.py')
        assert found(code, self.rule) == [(9, "error")]


# marcoscannabrava/image_classifier fsdp.py (lint heldout25 u003): Lightning's FSDP strategy starts one process per
# device, and the script's own torch.save after fit runs in each
LIGHTNING_FSDP = """
    import lightning as L
    import torch

    trainer = L.Trainer(accelerator="gpu", max_epochs=2, strategy="fsdp")

    def main(net, loader):
        trainer.fit(model=net, train_dataloaders=loader)
        GUARD
            torch.save(net.state_dict(), "./cifar_fsdp.pth")

    main(None, None)
"""


class TestSaveAllRanksLightningStrategy:
    """save-all-ranks: a Lightning fsdp / deepspeed strategy runs the script on every device, as ddp does."""

    verdict = "save-all-ranks"
    rule = "save-all-ranks"

    def test_sibling_every_process_saves(self):
        assert found(LIGHTNING_FSDP.replace("GUARD", "if True:"), self.rule) == [(9, "warning")]

    def test_control_the_global_zero_saves(self):
        assert found(LIGHTNING_FSDP.replace("GUARD", "if trainer.is_global_zero:"), self.rule) == []

    def test_control_a_spawned_strategy(self):
        code = LIGHTNING_FSDP.replace("GUARD", "if True:").replace('"fsdp"', '"ddp_spawn"')
        assert found(code, self.rule) == []


# nanoGPT train.py with its rank set-up replaced (lint heldout25c u006): `master_process = True` on every process
MASTER_FLAG = """
    import os
    import torch
    from torch.distributed import init_process_group

    ddp = int(os.environ.get("RANK", -1)) != -1
    if ddp:
        init_process_group(backend="nccl")
    MASTER
    for iter_num in range(100):
        if iter_num % 10 == 0 and master_process:
            torch.save({"iter_num": iter_num}, os.path.join("out", "ckpt.pt"))
"""


class TestSaveAllRanksConstantMasterFlag:
    """save-all-ranks: a flag named for one process but set to a constant is no rank guard."""

    verdict = "save-all-ranks"
    rule = "save-all-ranks"

    def test_sibling_the_flag_is_true_everywhere(self):
        assert found(MASTER_FLAG.replace("MASTER", "master_process = True"), self.rule) == [(11, "warning")]

    def test_control_the_flag_reads_the_rank(self):
        code = MASTER_FLAG.replace("MASTER", 'master_process = int(os.environ.get("RANK", 0)) == 0')
        assert found(code, self.rule) == []


# LLaVA-style train.py (lint heldout25c u030, u033): a Trainer subclass of the file, run under torchrun, and the
# adapter branch of the save helper writes the config on every process before its rank test
TRAINER_SUBCLASS = """
    # torchrun --nproc_per_node 8 train.py
    import torch
    from transformers import Trainer

    class EventChatTrainer(Trainer):
        pass

    def safe_save_model_for_hf_trainer(trainer, output_dir):
        if getattr(trainer.args, "tune_mm_mlp_adapter", False):
            GUARD
                trainer.model.config.save_pretrained(output_dir)

    def train(model, args):
        trainer = EventChatTrainer(model=model, args=args)
        trainer.train()
        safe_save_model_for_hf_trainer(trainer, args.output_dir)

    if __name__ == "__main__":
        train(None, None)
"""


class TestSaveAllRanksTrainerSubclass:
    """save-all-ranks: a class of the file derived from transformers' Trainer runs the file once per process."""

    verdict = "save-all-ranks"
    rule = "save-all-ranks"

    def test_sibling_the_config_saved_on_every_process(self):
        assert found(TRAINER_SUBCLASS.replace("GUARD", "if True:"), self.rule) == [(16, "warning")]

    def test_control_saved_on_local_rank_zero(self):
        code = TRAINER_SUBCLASS.replace("GUARD", "if trainer.args.local_rank in (-1, 0):")
        assert found(code, self.rule) == []


# a DDP segmentation trainer (lint heldout25 u047): both epoch functions called with an extra world_size
EPOCHS = """
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP

    def train_epoch(model, loader, device, optimizer, epoch):
        pass

    def valid_epoch(model, loader, device, epoch):
        pass

    def main(model, loader, device, optimizer, world_size):
        for epoch in range(10):
            train_epoch(model, loader, device, optimizer, epoch, EXTRA)
            valid_epoch(model, loader, device, epoch, EXTRA)

    if __name__ == "__main__":
        main(None, None, None, None, 2)
"""


class TestUnexpectedArgumentOwnFunction:
    """unexpected-argument: a function of the file given more positional arguments than its def takes."""

    verdict = "unexpected-argument"
    rule = "unexpected-argument"

    def test_sibling_one_argument_too_many(self):
        assert found(EPOCHS.replace(", EXTRA", ", world_size"), self.rule) == [(12, "error")]

    def test_control_the_arguments_fit(self):
        assert found(EPOCHS.replace(", EXTRA", ""), self.rule) == []

    def test_control_a_def_that_takes_any(self):
        code = EPOCHS.replace(", EXTRA", ", world_size").replace("epoch):", "epoch, *rest):")
        assert found(code, self.rule) == []


# a launcher class (lint heldout25 u007): mp.spawn runs a bound method, passing the process index first
SPAWNED_METHOD = """
    import torch.multiprocessing as mp

    class Launcher:
        def __init__(self, world_size):
            self.world_size = world_size

        def _test(PARAMS):
            pass

        def execute_test(self):
            mp.spawn(self._test, nprocs=self.world_size, join=True)
"""


class TestUnexpectedArgumentSpawnedMethod:
    """unexpected-argument: mp.spawn of a method that takes no process index."""

    verdict = "unexpected-argument"
    rule = "unexpected-argument"

    def test_sibling_no_index_taken(self):
        # execute_test has no caller in the file: a warning
        assert found(SPAWNED_METHOD.replace("PARAMS", "self"), self.rule) == [(11, "warning")]

    def test_control_the_index_taken(self):
        assert found(SPAWNED_METHOD.replace("PARAMS", "self, rank"), self.rule) == []


# the same trainer (lint heldout25 u047): DDP's device_ids given the --local_rank option, an int
OPTION = """
    import argparse
    import torch

    def main(args, model):
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=args['local_rank'])

    if __name__ == "__main__":
        ap = argparse.ArgumentParser()
        ap.add_argument("-rank", "--local_rank", KIND)
        main(vars(ap.parse_args()), None)
"""


class TestDeviceIdsNotListIntOption:
    """device-ids-not-list: an option the file's parser stores as one int is one device, not a list."""

    verdict = "device-ids-not-list"
    rule = "device-ids-not-list"

    def test_sibling_an_int_option(self):
        assert found(OPTION.replace("KIND", "type=int, default=0"), self.rule) == [(5, "error")]

    def test_control_a_list_option(self):
        assert found(OPTION.replace("KIND", "type=int, nargs='+', default=[0]"), self.rule) == []


# a seq2seq fine-tune under accelerate (lint heldout22b u042): every Accelerate process loads the checkpoint
ACCELERATE_LOAD = """
    # accelerate launch --multi_gpu train.py
    import torch
    from accelerate import Accelerator

    def main(model):
        accelerator = Accelerator()
        model.load_state_dict(torch.load("output/model_seq2seq.pt"MAP))
        model = accelerator.prepare(model)

    if __name__ == "__main__":
        main(None)
"""


class TestTorchLoadNoMapLocationUnderALibraryLaunch:
    """torch-load-no-map-location: accelerate (DeepSpeed, the HF Trainer) under a launch the file shows runs every
    line once per process."""

    verdict = "torch-load-no-map-location"
    rule = "torch-load-no-map-location"

    def test_sibling_every_process_loads(self):
        assert found(ACCELERATE_LOAD.replace("MAP", ""), self.rule) == [(7, "warning")]

    def test_control_mapped_to_the_cpu(self):
        assert found(ACCELERATE_LOAD.replace("MAP", ', map_location="cpu"'), self.rule) == []


# an accelerate image-captioning trainer (lint heldout25c u002): generate called on the prepared model
PREPARED = """
    from accelerate import Accelerator

    def evaluate(model, loader):
        accelerator = Accelerator()
        model, loader = accelerator.prepare(model, loader)
        for batch in loader:
            outputs = HOLDER.generate(**batch)
"""


class TestWrapperMethodCallPreparedModel:
    """wrapper-method-call: the model accelerate's prepare returned is a DDP wrapper under a multi-process launch."""

    verdict = "wrapper-method-call"
    rule = "wrapper-method-call"

    def test_sibling_generate_on_the_prepared_model(self):
        assert found(PREPARED.replace("HOLDER", "model"), self.rule) == [(7, "warning")]

    def test_control_generate_on_the_unwrapped_model(self):
        assert found(PREPARED.replace("HOLDER", "accelerator.unwrap_model(model)"), self.rule) == []


# an FSDP fine-tune whose process group a helper module starts (lint heldout25 u009): every rank writes the sampler
# state to one file at each save step
FSDP_SAVE = """
    import os
    import torch
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

    def train(model, loader, save_every, directory):
        model = FSDP(model)
        for step, batch in enumerate(loader):
            is_save_step = (step + 1) % save_every == 0
            if is_save_step:
                GUARD
                    torch.save({"sampler": loader.sampler.state_dict()}, os.path.join(directory, "train_state.pt"))

    if __name__ == "__main__":
        train(None, [], 10, "ckpt")
"""


class TestSaveAllRanksFsdpProgram:
    """save-all-ranks: an FSDP program runs once per rank; a step flag computed in view reads no rank."""

    verdict = "save-all-ranks"
    rule = "save-all-ranks"

    def test_sibling_every_rank_saves_at_the_step(self):
        assert found(FSDP_SAVE.replace("GUARD", "if True:"), self.rule) == [(11, "warning")]

    def test_control_rank_zero_saves(self):
        assert found(FSDP_SAVE.replace("GUARD", "if torch.distributed.get_rank() == 0:"), self.rule) == []


# a Lightning CIFAR10 trainer (lint heldout25 u048): strategy='ddp' runs the script once per GPU, and its own
# prepare_data() downloads in each; a DataModule's prepare_data hook runs on one process per node
LIGHTNING_DOWNLOAD = """
    import pytorch_lightning as pl
    from pytorch_lightning import Trainer
    from torchvision import datasets

    class CIFAR(OWNER):
        def prepare_data(self):
            datasets.CIFAR10(root="./data", train=True, download=True)

    if __name__ == "__main__":
        data = CIFAR()
        data.prepare_data()
        trainer = Trainer(accelerator="gpu", devices=-1, strategy="ddp")
"""


class TestDatasetDownloadAllRanksLightning:
    """dataset-download-all-ranks: Lightning with several devices runs the script in every process."""

    verdict = "dataset-download-all-ranks"
    rule = "dataset-download-all-ranks"

    def test_control_the_hook_lightning_runs_once_per_node(self):
        code = LIGHTNING_DOWNLOAD.replace("OWNER", "pl.LightningDataModule").replace("        data.prepare_data()\n", "")
        assert found(code, self.rule) == []

    def test_sibling_a_plain_function_every_process_runs(self):
        code = LIGHTNING_DOWNLOAD.replace("class CIFAR(OWNER):\n        def prepare_data(self):",
                                          "def prepare_data():").replace(
            "            datasets.CIFAR10", "        datasets.CIFAR10").replace(
            "        data = CIFAR()\n        data.prepare_data()", "        prepare_data()")
        assert found(code, self.rule) == [(6, "warning")]


# macroexpansion/thyroid-classification distributed_training.py (lint heldout24b u052): the parser's construction
# commented out; lint heldout22 u001: FSDP's StateDictType read, never imported
READ_AS_ATTRIBUTE = """
    import argparse
    import torch
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    BUILT
    parser.add_argument("--local_rank", type=int)

    def save(model):
        with FSDP.state_dict_type(model, HOLDER.FULL_STATE_DICT):
            return model.state_dict()

    if __name__ == "__main__":
        save(torch.nn.Linear(2, 2))
"""


class TestUndefinedNameReadAsAttribute:
    """undefined-name: a name read only as `name.attr` is a module left unimported unless the reads show a parser
    or the name is written as a class."""

    verdict = "undefined-name"
    rule = "undefined-name"

    def test_sibling_the_parser_never_built(self):
        code = READ_AS_ATTRIBUTE.replace("BUILT", "").replace("HOLDER", "torch")
        assert found(code, self.rule) == [(5, "error")]

    def test_sibling_a_class_never_imported(self):
        code = READ_AS_ATTRIBUTE.replace("BUILT", "parser = argparse.ArgumentParser()").replace("HOLDER", "StateDictType")
        assert found(code, self.rule) == [(8, "error")]

    def test_control_a_module_left_unimported(self):
        # `fsdp.StateDictType`-style module reads stay name-not-imported's (an excerpt's import line)
        code = READ_AS_ATTRIBUTE.replace("BUILT", "parser = argparse.ArgumentParser()").replace("HOLDER", "sdt")
        assert found(code, self.rule) == []
