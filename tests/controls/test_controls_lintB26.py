"""Controls and siblings for lintB26 (issue 41: recall where users write: DeepSpeed, accelerate, the HF Trainer).
A rule follows what the code does (who makes the processes, who averages the gradients, who splits the data,
who saves), not one project's names. Each program is a few lines of a lint development script (source in the
comment above it), linted by the real engine: the right script that looks most like the pitfall gets nothing,
the pitfall gets its rule."""

from __future__ import annotations

import textwrap

from gpudoctor.linter import engine


def found(code: str, rule: str) -> list[tuple[int, tuple[int, ...]]]:
    """(line, also) of each diagnostic of `rule`."""
    return [(d.line, d.also) for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), "train.py")
            if d.rule == rule]


def lines(code: str, rule: str) -> list[int]:
    return [line for line, _ in found(code, rule)]


# a ChatGLM LoRA NER fine-tune under DeepSpeed (lint heldout24 u034): the loader draws from a RandomSampler of the
# whole dataset and the engine is given no training_data, so every rank trains on all of it
DEEPSPEED_LOADER = """
    import deepspeed
    from torch.utils.data import RandomSampler, DataLoader

    def main(args, conf, model, train_data, ner_collate):
        train_dataloader = DataLoader(
            train_data,
            batch_size=conf["train_micro_batch_size_per_gpu"],
            sampler=SAMPLER,
            drop_last=True,
            collate_fn=ner_collate.collate_fn
        )
        model_engine, optimizer, _, _ = deepspeed.initialize(config=conf, model=model, model_parameters=model.parameters())
        for i_epoch in range(args.num_train_epochs):
            train_iter = iter(train_dataloader)
            for step, batch in enumerate(train_iter):
                outputs = model_engine.forward(input_ids=batch["input_ids"].cuda(), labels=batch["labels"].cuda())
                model_engine.backward(outputs[0])
                model_engine.step()
"""

# a DeepSpeed trainer's data (lint heldout24 u047): the loader reads the dataset in order with no sampler; the
# evaluation loader beside it is read in order too, but never trained on
DEEPSPEED_PLAIN = """
    import deepspeed
    from torch.utils.data import DataLoader

    def train(model, train_dataset, val_dataset, train_config, collate_fn_padding):
        train_loader = DataLoader(train_dataset, batch_size=train_config['batch_size'], collate_fn=collate_fn_padding)
        val_loader = DataLoader(val_dataset, batch_size=train_config['batch_size'], collate_fn=collate_fn_padding)
        model_engine, optimizer, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(),
                                                             config=train_config['ds_config'])
        for epoch in range(train_config['epochs']):
            for batch in train_loader:
                loss = model_engine(batch)
                model_engine.backward(loss)
                model_engine.step()
            for batch in val_loader:
                model_engine.eval()
"""


class TestNoDistributedSamplerDeepSpeed:
    """no-distributed-sampler: a DeepSpeed engine averages the gradients of one process per GPU, and a loader the
    script builds over the whole dataset, not handed to the engine, feeds every rank all of it."""

    verdict = "no-distributed-sampler"
    rule = "no-distributed-sampler"

    def test_control_a_distributed_sampler_splits_it(self):
        code = DEEPSPEED_LOADER.replace("SAMPLER", "DistributedSampler(train_data)").replace(
            "import RandomSampler,", "import DistributedSampler,")
        assert lines(code, self.rule) == []

    def test_control_the_engine_builds_the_loader(self):
        # deepspeed.initialize(training_data=...) builds a DistributedSampler itself
        code = DEEPSPEED_LOADER.replace("SAMPLER", "RandomSampler(train_data)").replace(
            "model_parameters=model.parameters())", "model_parameters=model.parameters(), training_data=train_data)")
        assert lines(code, self.rule) == []

    def test_control_a_sampler_of_its_own(self):
        assert lines(DEEPSPEED_LOADER.replace("SAMPLER", "BucketSampler(train_data, rank, world)"), self.rule) == []

    def test_sibling_a_random_sampler_of_the_whole_dataset(self):
        assert lines(DEEPSPEED_LOADER.replace("SAMPLER", "RandomSampler(train_data)"), self.rule) == [5]

    def test_sibling_in_order_where_it_trains_not_where_it_evaluates(self):
        assert lines(DEEPSPEED_PLAIN, self.rule) == [5]

    def test_control_in_order_and_never_trained_on(self):
        # the evaluation loop alone: read in order on every rank, no backward, no step
        code = DEEPSPEED_PLAIN.replace("for batch in train_loader:", "for batch in val_loader:").replace(
            "model_engine.backward(loss)", "pass").replace("model_engine.step()", "pass")
        assert lines(code, self.rule) == []


# a ChatGLM LoRA fine-tune under DeepSpeed (lint heldout24 u034): the engine's save_pretrained every 50 steps
DEEPSPEED_SAVE = """
    import os
    import deepspeed
    import torch.distributed as dist

    def main(args, conf, model, loader):
        model_engine, optimizer, _, _ = deepspeed.initialize(config=conf, model=model, model_parameters=model.parameters())
        global_step = 0
        for batch in loader:
            model_engine.backward(model_engine(**batch)[0])
            model_engine.step()
            global_step += 1
            if global_step % 50 == 0:
                save_path = os.path.join(args.save_dir, f"model_step_{global_step}")
                SAVE

    if __name__ == "__main__":
        main(*load())
"""

# an HF Trainer fine-tune with DeepSpeed ZeRO-3 launched by torchrun (lint heldout24 u010): trainer.save_model saves on
# the main process by itself; the tokenizer's save_pretrained after it does not
TRAINER_SAVE = """
    from transformers import Trainer, TrainingArguments

    def main(args, model, tokenizer, train_dataset):
        training_args = TrainingArguments(output_dir=args.output_dir, deepspeed=args.deepspeed_config)
        trainer = Trainer(model=model, args=training_args, train_dataset=train_dataset)
        trainer.train()
        trainer.save_model(args.output_dir)
        SAVE

    if __name__ == "__main__":
        main(*load())
"""


# a seq2seq fine-tune under accelerate (lint heldout22b u005): the best checkpoint torch.saved by every process
ACCELERATE_EPOCH_SAVE = """
    \"\"\"Usage: LAUNCH\"\"\"
    import torch
    from accelerate import Accelerator

    def main(model, optimizer, loader, epochs):
        accelerator = Accelerator()
        model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
        for epoch in range(epochs):
            train_one_epoch(model, loader, optimizer, accelerator)
            torch.save({"optimizer": optimizer.state_dict(), "epoch": epoch}, "output/best.pt")

    if __name__ == "__main__":
        main(*load())
"""


class TestSaveAllRanksWhereALibraryMakesTheProcesses:
    """save-all-ranks: a file DeepSpeed, accelerate or the Trainer runs once per process saves on every rank, and
    `save_pretrained` writes like torch.save unless told which process saves."""

    verdict = "save-all-ranks"
    rule = "save-all-ranks"

    def test_control_under_the_rank_test(self):
        code = DEEPSPEED_SAVE.replace("SAVE", "if dist.get_rank() == 0:\n                    "
                                      "model_engine.save_pretrained(save_path)")
        assert lines(code, self.rule) == []

    def test_sibling_the_engine_saves_on_every_rank(self):
        assert lines(DEEPSPEED_SAVE.replace("SAVE", "model_engine.save_pretrained(save_path)"), self.rule) == [14]

    def test_control_the_trainer_saves_once(self):
        assert lines(TRAINER_SAVE.replace("SAVE", "pass"), self.rule) == []

    def test_control_told_which_process_saves(self):
        code = TRAINER_SAVE.replace("SAVE", "tokenizer.save_pretrained(args.output_dir, "
                                    "is_main_process=trainer.is_world_process_zero())")
        assert lines(code, self.rule) == []

    def test_sibling_the_tokenizer_after_the_trainer(self):
        assert lines(TRAINER_SAVE.replace("SAVE", "tokenizer.save_pretrained(args.output_dir)"), self.rule) == [8]

    def test_control_accelerate_with_no_multi_process_launch_in_view(self):
        # peft's and diffusers' examples: an Accelerator script that runs in one process as often as not
        assert lines(ACCELERATE_EPOCH_SAVE.replace("LAUNCH", "python train.py"), self.rule) == []

    def test_sibling_accelerate_launched_on_several_processes(self):
        assert lines(ACCELERATE_EPOCH_SAVE.replace("LAUNCH", "accelerate launch --num_processes 4 train.py"),
                     self.rule) == [10]

    def test_control_a_hook_the_library_calls(self):
        # diffusers' kandinsky decoder trainer (the issue 28 control): the EMA model saved in a save_state hook, which
        # accelerate runs where the script saves its state, under `if accelerator.is_main_process:`
        code = ACCELERATE_EPOCH_SAVE.replace("LAUNCH", "accelerate launch --num_processes 4 train.py").replace(
            "        for epoch in range(epochs):",
            "        def save_model_hook(models, weights, output_dir):\n"
            "            ema_unet.save_pretrained(os.path.join(output_dir, 'unet_ema'))\n"
            "        accelerator.register_save_state_pre_hook(save_model_hook)\n"
            "        for epoch in range(epochs):").replace(
            'torch.save({"optimizer": optimizer.state_dict(), "epoch": epoch}, "output/best.pt")', "pass")
        assert lines(code, self.rule) == []

    def test_control_transformers_shim_starts_no_group(self):
        # a BERT classifier (lint heldout24 u074): `deepspeed` is transformers' integration module, which has no
        # init_distributed: the script runs in one process (and that line raises)
        code = """
            from transformers import BertTokenizer, deepspeed

            def main(model, tokenizer, dir_name):
                deepspeed.init_distributed()
                model.save_pretrained(f'{dir_name}/bert_classifier')
                tokenizer.save_pretrained(f'{dir_name}/bert_classifier')

            if __name__ == "__main__":
                main(*load())
        """
        assert lines(code, self.rule) == []


# a 3D diffusion trainer under DeepSpeed (lint heldout24 u044): `device = rank` with rank = dist.get_rank(), the
# batches then moved with .to(device); its reader pointed at the alias
DEVICE_ALIAS = """
    import torch
    import torch.distributed as dist

    def train(model_engine, dataset, opt):
        local_rank = model_engine.local_rank
        rank = dist.get_rank()
        device = VALUE
        step = 0
        for batch in dataset:
            x = batch[0].to(device)
            model_engine.backward(model_engine(x))
"""


class TestDeviceFromGlobalRankNamesWhereItWasMade:
    """device-from-global-rank: where the global rank reaches the device through a name (`device = rank`), the
    diagnostic stands at that line, where the fix goes, and names the use as its other place: one cause, two
    places (lintA26's placement, kept at the merge)."""

    verdict = "device-from-global-rank"
    rule = "device-from-global-rank"

    def test_control_the_local_rank(self):
        assert found(DEVICE_ALIAS.replace("VALUE", "local_rank"), self.rule) == []

    def test_sibling_the_global_rank_names_the_alias(self):
        assert found(DEVICE_ALIAS.replace("VALUE", "rank"), self.rule) == [(7, (10,))]


# an audio-tagging trainer under accelerate (lint heldout23 u056): the main process saves the state dict of the model
# accelerator.prepare returned, a DistributedDataParallel wrapper under a multi-process launch
ACCELERATE_SAVE = """
    import torch
    from accelerate import Accelerator

    def train(args, model, optimizer, train_dataloader, checkpoint_path):
        accelerator = Accelerator()
        model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)
        for batch in train_dataloader:
            accelerator.backward(model(batch))
            optimizer.step()
        if accelerator.is_main_process:
            torch.save(SAVED.state_dict(), checkpoint_path)
"""


class TestSaveDdpWrapperAcceleratePrepared:
    """save-ddp-wrapper: the model accelerate prepared is DDP under a multi-process launch; its state dict's keys
    carry 'module.' unless it is unwrapped first."""

    verdict = "save-ddp-wrapper"
    rule = "save-ddp-wrapper"

    def test_control_unwrapped_first(self):
        assert lines(ACCELERATE_SAVE.replace("SAVED", "accelerator.unwrap_model(model)"), self.rule) == []

    def test_control_the_optimizer_beside_it(self):
        assert lines(ACCELERATE_SAVE.replace("SAVED", "optimizer"), self.rule) == []

    def test_sibling_the_prepared_model(self):
        assert lines(ACCELERATE_SAVE.replace("SAVED", "model"), self.rule) == [11]


# an audio LLM trainer under accelerate (lint heldout24 u007): the training step calls the prepared encoder's
# `.module`, which a one-process launch never made; a sibling trainer (lint heldout23 u053) reads `.module` only
# where accelerate started several processes
PREPARED_MODULE = """
    from accelerate import Accelerator

    def train(args, audio_encoder, llm, optimizer, dataloader):
        accelerator = Accelerator()
        audio_encoder, llm, optimizer, dataloader = accelerator.prepare(audio_encoder, llm, optimizer, dataloader)
        for batch in dataloader:
            READ
            loss = llm(audio_latent, batch["tokens"])
            accelerator.backward(loss)
"""


class TestModuleOfPreparedModel:
    """module-of-prepared-model: `.module` of what accelerator.prepare returned exists only under a multi-process
    launch."""

    rule = "module-of-prepared-model"

    def test_control_unwrapped(self):
        code = PREPARED_MODULE.replace("READ", "audio_latent = accelerator.unwrap_model(audio_encoder).encode(batch)")
        assert lines(code, self.rule) == []

    def test_control_only_where_the_launch_wrapped_it(self):
        code = PREPARED_MODULE.replace("READ", "audio_latent = (audio_encoder if accelerator.num_processes == 1 "
                                       "else audio_encoder.module).encode(batch)")
        assert lines(code, self.rule) == []

    def test_control_the_optimizer_beside_it(self):
        assert lines(PREPARED_MODULE.replace("READ", "audio_latent = optimizer.module"), self.rule) == []

    def test_sibling_the_prepared_encoder(self):
        assert lines(PREPARED_MODULE.replace("READ", "audio_latent = audio_encoder.module.encode(batch)"),
                     self.rule) == [7]


# a bird classifier under torch.distributed.launch (lint heldout24 u080): the namespace's rank is the local rank; a
# trainer across nodes (lint heldout18 u024) computes it from the node's rank instead
RANK_ATTRIBUTE = """
    import torch
    import torch.distributed as dist

    def setup(args):
        args.world_size = int(os.environ["WORLD_SIZE"])
        RANK
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group(backend="nccl", init_method="env://", world_size=args.world_size, rank=args.gpu)
"""


class TestRankFromLocalRankInANamespace:
    """rank-from-local-rank: `args.rank = args.local_rank` makes the index on this node the job's rank."""

    verdict = "rank-from-local-rank"
    rule = "rank-from-local-rank"

    def test_control_computed_from_the_node_rank(self):
        assert lines(RANK_ATTRIBUTE.replace("RANK", "args.rank = args.nr * args.gpus + args.local_rank"),
                     self.rule) == []

    def test_control_the_global_rank(self):
        assert lines(RANK_ATTRIBUTE.replace("RANK", 'args.rank = int(os.environ["RANK"])'), self.rule) == []

    def test_sibling_the_local_rank(self):
        assert lines(RANK_ATTRIBUTE.replace("RANK", "args.rank = args.local_rank"), self.rule) == [6]
