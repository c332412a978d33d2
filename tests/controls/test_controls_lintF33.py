"""Controls and siblings for lintF33 (issue 41, items 1 and 2: recall on the groups the retired parts' readers found
missed most; where the launch is the one value lint cannot resolve, a warning that says so rather than nothing).
Each program is the shape of a retired lint script's missed pitfall (source in the comment above it), cut to a few
lines and linted by the real engine: the pitfall gets its rule, the nearest right script gets nothing."""

from __future__ import annotations

from gpudoctor.linter import engine
import textwrap

from test_controls_lintA22 import found


def messages(code: str, rule: str) -> list[str]:
    return [d.message for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), "train.py") if d.rule == rule]


# lint heldout31 u023 (a coursework DDPM), u021 (a diffusers DDPM fine-tune), heldout29 u016 and heldout30 u001 (a
# CLIP-style encoder): an accelerate training script that names no launch and saves, downloads or loads on every
# process; its readers read every one of them as the multi-process launch accelerate is for
ACCELERATE_TRAINING = """
    import torch
    from accelerate import Accelerator
    from torchvision.datasets import MNIST

    def main(model, optimizer):
        accelerator = Accelerator(mixed_precision="fp16")
        dataset = MNIST("./data", train=True, download=True)
        loader = torch.utils.data.DataLoader(dataset, batch_size=64, shuffle=True)
        model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
        for epoch in range(10):
            for x, y in loader:
                loss = model(x, y)
                accelerator.backward(loss)
                optimizer.step()
            GUARD
            SAVE

    if __name__ == "__main__":
        main(*build())
"""


def accelerate_training(save: str = 'torch.save(model.state_dict(), "ckpt.pt")', guard: str = "pass",
                        head: str = "") -> str:
    code = ACCELERATE_TRAINING.replace("GUARD", guard).replace("SAVE", save)
    return code.replace("    import torch\n", f"    import torch\n{head}", 1) if head else code


class TestSaveAllRanksUnderAnUnshownAccelerateLaunch:
    """save-all-ranks: an accelerate training script (a model given to `accelerator.prepare`) that names no launch
    still saves on every process under `accelerate launch` on several GPUs; a warning that says the launch is the
    condition. Not where the file says it runs as one process."""

    verdict = "save-all-ranks"
    rule = "save-all-ranks"

    def test_sibling_epoch_save(self):
        assert found(accelerate_training(), self.rule) == [(16, "warning")]

    def test_sibling_message_names_the_unshown_launch(self):
        (message,) = messages(accelerate_training(), self.rule)
        assert "shows no launch" in message and "accelerate launch" in message

    def test_sibling_accelerator_under_a_setting(self):
        # lint heldout31 u023: the Accelerator is made under a setting of the file's config; the message names it
        code = """
            import torch
            from accelerate import Accelerator

            if cfg["use_accelerator"]:
                accelerator = Accelerator()
                model, optimizer = accelerator.prepare(model, optimizer)
            for epoch in range(3):
                train(model)
                torch.save(model.state_dict(), "ckpt.pt")
        """
        assert found(code, self.rule) == [(9, "warning")]
        (message,) = messages(code, self.rule)
        assert "where `cfg['use_accelerator']` holds (line 4)" in message

    def test_control_guarded_by_the_main_process(self):
        code = accelerate_training(guard="if accelerator.is_main_process:",
                                   save='    torch.save(model.state_dict(), "ckpt.pt")')
        assert found(code, self.rule) == []

    def test_control_accelerates_saving_once(self):
        assert found(accelerate_training(save='accelerator.save(model.state_dict(), "ckpt.pt")'), self.rule) == []

    def test_control_one_gpu_pinned(self):
        # lint heldout31 u015's note: CUDA_VISIBLE_DEVICES='2' at the top pins the run to one GPU, one process
        code = accelerate_training(head='    import os\n    os.environ["CUDA_VISIBLE_DEVICES"] = "2"\n')
        assert found(code, self.rule) == []

    def test_control_documented_one_process_launch(self):
        code = '    """Usage: python train.py --epochs 10"""\n' + accelerate_training()
        assert found(code, self.rule) == []

    def test_control_no_model_prepared(self):
        # an inference script: the accelerator only gives the device
        code = """
            import torch
            from accelerate import Accelerator

            accelerator = Accelerator()
            model = load().to(accelerator.device)
            torch.save(model(batch), "out.pt")
        """
        assert found(code, self.rule) == []


class TestSaveAllRanksPreparedModelsOwnSave:
    """save-all-ranks: the project model's own save method called on what `accelerator.prepare` returned
    (`model.save(path)`: lint heldout29 u016, heldout30 u001, u003) writes on every process like torch.save."""

    verdict = "save-all-ranks"
    rule = "save-all-ranks"

    def test_sibling_model_save(self):
        assert found(accelerate_training(save='model.save(f"ckpt_{epoch}.pth")'), self.rule) == [(16, "warning")]

    def test_control_model_save_on_the_main_process(self):
        code = accelerate_training(guard="if accelerator.is_main_process:",
                                   save='    accelerator.unwrap_model(model).save(f"ckpt_{epoch}.pth")')
        assert found(code, self.rule) == []

    def test_control_engine_checkpoint_on_every_rank(self):
        # DeepSpeed's engine.save_checkpoint(dir) must run on every rank
        assert found(accelerate_training(save='model.save_checkpoint("ckpt")'), self.rule) == []


class TestDownloadUnderAnUnshownAccelerateLaunch:
    """dataset-download-all-ranks: the accelerate training script's download runs in every process of a
    multi-process launch."""

    verdict = "dataset-download-all-ranks"
    rule = "dataset-download-all-ranks"

    def test_sibling_download_in_every_process(self):
        assert found(accelerate_training(), self.rule) == [(7, "warning")]

    def test_control_main_process_first(self):
        code = accelerate_training().replace(
            '        dataset = MNIST("./data", train=True, download=True)',
            '        with accelerator.main_process_first():\n'
            '            dataset = MNIST("./data", train=True, download=True)')
        assert found(code, self.rule) == []

    def test_control_one_gpu_pinned(self):
        code = accelerate_training(head='    import os\n    os.environ["CUDA_VISIBLE_DEVICES"] = "0"\n')
        assert found(code, self.rule) == []


class TestTorchLoadUnderAnUnshownAccelerateLaunch:
    """torch-load-no-map-location: not widened to the accelerate training script that shows no launch. Its readers
    split (lint heldout31 u025's asked for the load; heldout29 u016's saw the same load and left it out, heldout27b
    u016's passed over it): a load before `prepare`, copied into the model by load_state_dict, is the weakest of
    the "every process" pitfalls, and the scored corpus would gain one right and two false."""

    verdict = "torch-load-no-map-location"
    rule = "torch-load-no-map-location"

    def test_control_resume_in_a_script_that_shows_no_launch(self):
        code = accelerate_training(save="pass").replace(
            "        for epoch in range(10):",
            '        model.load_state_dict(torch.load("ckpt.pt"))\n        for epoch in range(10):')
        assert found(code, self.rule) == []

    def test_sibling_resume_under_a_launch_the_file_names(self):
        code = '    """Usage: accelerate launch --num_processes 4 train.py"""\n' + accelerate_training(save="pass").replace(
            "        for epoch in range(10):",
            '        model.load_state_dict(torch.load("ckpt.pt"))\n        for epoch in range(10):')
        assert found(code, self.rule) == [(12, "warning")]


# lint heldout31 u016 (a DDPM trainer): the device string spelt by concatenation, `"cuda:" + str(rank)`
CONCATENATED_DEVICE = """
    import os
    import torch
    import torch.distributed as dist

    def main():
        dist.init_process_group(backend="nccl")
        rank = RANK
        device = torch.device("cuda:" + str(rank))
        model = build().to(device)
"""


class TestDeviceFromGlobalRankConcatenated:
    """device-from-global-rank: `"cuda:" + str(v)` is one more spelling of the index in a device string."""

    verdict = "device-from-global-rank"
    rule = "device-from-global-rank"

    def test_sibling_global_rank_concatenated(self):
        assert found(CONCATENATED_DEVICE.replace("RANK", "dist.get_rank()"), self.rule) == [(8, "warning")]

    def test_control_local_rank_concatenated(self):
        assert found(CONCATENATED_DEVICE.replace("RANK", 'int(os.environ["LOCAL_RANK"])'), self.rule) == []


# lint heldout31 u002 (a reward model under torchrun): FSDP2's `fully_shard(model)` and a shuffled loader with no sampler
FSDP_LOADER = """
    import torch
    import torch.distributed as dist
    from torch.distributed.fsdp import fully_shard
    from torch.utils.data import DataLoader, DistributedSampler

    def train(train_dataset):
        dist.init_process_group(backend="nccl")
        train_loader = DataLoader(train_dataset, batch_size=8, LOADER)
        model = fully_shard(build()).cuda()
        optimizer = torch.optim.AdamW(model.parameters())
        for batch in train_loader:
            model(batch).loss.backward()
            optimizer.step()
"""


class TestNoDistributedSamplerUnderFsdp:
    """no-distributed-sampler: FSDP averages the gradients across ranks as DDP does; a shuffled loader with no
    sampler feeds every rank all of the data."""

    verdict = "no-distributed-sampler"
    rule = "no-distributed-sampler"

    def test_sibling_shuffled_loader(self):
        assert found(FSDP_LOADER.replace("LOADER", "shuffle=True"), self.rule) == [(8, "warning")]

    def test_control_distributed_sampler(self):
        code = FSDP_LOADER.replace("LOADER", "sampler=DistributedSampler(train_dataset)")
        assert found(code, self.rule) == []

    def test_control_read_in_order(self):
        # the same batches on every rank: how the issue 28 control's optimizer tests compare runs
        assert found(FSDP_LOADER.replace("LOADER", "shuffle=False"), self.rule) == []


# lint heldout31 u001 (a reward-model script under torchrun): a Trainer class of the project's own modules given
# transformers' TrainingArguments, then `model.save_pretrained(...)` on every process
PROJECT_TRAINER = """
    import os
    from transformers import HfArgumentParser, TrainingArguments
    from modeling.reward import PairwiseRewardModelTrainer

    def main():
        args, training_args = HfArgumentParser((ModelArguments, TrainingArguments)).parse_args_into_dataclasses()
        local_rank = int(os.environ.get("LOCAL_RANK", 0))
        model = load_model(args, local_rank)
        trainer = PairwiseRewardModelTrainer(model=model, ARGS train_dataset=train_dataset)
        trainer.train()
        model.save_pretrained(training_args.output_dir)

    if __name__ == "__main__":
        main()
"""


class TestSaveAllRanksProjectTrainer:
    """save-all-ranks: a Trainer class of another module of the project, given `args=` in a file that imports
    transformers' TrainingArguments, is a Hugging Face Trainer's subclass: under the launch the file shows, the save
    after `trainer.train()` runs on every process."""

    verdict = "save-all-ranks"
    rule = "save-all-ranks"

    def test_sibling_project_trainer_given_training_arguments(self):
        assert found(PROJECT_TRAINER.replace("ARGS", "args=training_args,"), self.rule) == [(11, "warning")]

    def test_control_not_given_the_training_arguments(self):
        # a trainer of the project's own, of any kind: what it runs is not in view
        assert found(PROJECT_TRAINER.replace("ARGS", "config=args,"), self.rule) == []

    def test_control_told_which_process_saves(self):
        code = PROJECT_TRAINER.replace("ARGS", "args=training_args,").replace(
            "model.save_pretrained(training_args.output_dir)",
            "model.save_pretrained(training_args.output_dir, is_main_process=trainer.is_world_process_zero())")
        assert found(code, self.rule) == []


# lint heldout29 u016, heldout30 u001 (a CLIP-style encoder): evaluate() reads the module's `model` and is called
# from the main block after `accelerator.prepare(...)` rebound it
GLOBAL_READ = """
    import torch
    from accelerate import Accelerator

    def evaluate(loader):
        return [model.image_forward(x) for x in loader]

    if __name__ == "__main__":
        model = build()
        accelerator = Accelerator()
        PREPARE
        print(evaluate(loader))
"""


class TestWrapperMethodCallGlobalRead:
    """wrapper-method-call: a function reading the module's prepared model, called after the prepare, reads the
    wrapper; one missing unwrap with the reads of the main block."""

    verdict = "wrapper-method-call"
    rule = "wrapper-method-call"

    def test_sibling_called_after_prepare(self):
        code = GLOBAL_READ.replace("PREPARE", "model, loader = accelerator.prepare(model, loader)")
        assert found(code, self.rule) == [(5, "warning")]

    def test_control_unwrapped_before_the_call(self):
        code = GLOBAL_READ.replace("PREPARE", "model, loader = accelerator.prepare(model, loader)\n"
                                   "        model = accelerator.unwrap_model(model)")
        assert found(code, self.rule) == []

    def test_control_called_before_prepare(self):
        code = GLOBAL_READ.replace("        PREPARE\n        print(evaluate(loader))",
                                   "        print(evaluate(loader))\n        model, loader = accelerator.prepare(model, loader)")
        assert "print(evaluate(loader))\n        model, loader" in code
        assert found(code, self.rule) == []
