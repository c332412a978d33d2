"""Controls and siblings for lintB31 (issue 41: the recall on the classes the fresh parts miss most, save-all-ranks
and save-ddp-wrapper). Each program is the shape of a retired lint script's missed pitfall (source in the comment
above it), cut to a few lines and linted by the real engine: the pitfall gets its rule, the nearest right script gets
nothing."""

from __future__ import annotations

from test_controls_lintA22 import found
from test_controls_lintF33 import messages

# an accelerate trainer whose launch shows only in its settings (lint heldout29 u011: DistributedDataParallelKwargs;
# heldout29b u016: split_batches=True; heldout29 u004: `Accelerator().process_index` as the device)
ACCELERATE_SAVE = """
    import torch
    from accelerate import Accelerator, DistributedDataParallelKwargs

    def main():
        accelerator = Accelerator(SETTINGS)
        model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
        for epoch in range(10):
            train_one_epoch(model, loader)
            GUARD
            torch.save(accelerator.unwrap_model(model).state_dict(), f"ckpt_{epoch}.pt")

    if __name__ == "__main__":
        main()
"""


def accelerate_save(settings: str) -> str:
    return ACCELERATE_SAVE.replace("SETTINGS", settings).replace("GUARD", "pass")


class TestSaveAllRanksAccelerateSettings:
    """save-all-ranks: an accelerate file whose settings only several processes have (DDP's kwargs handler, one batch
    split across processes) is written for a multi-process launch; a bare `Accelerator()` is not read so."""

    verdict = "save-all-ranks"
    rule = "save-all-ranks"

    def test_sibling_ddp_kwargs_handler(self):
        settings = "kwargs_handlers=[DistributedDataParallelKwargs(find_unused_parameters=True)]"
        assert found(accelerate_save(settings), self.rule) == [(10, "warning")]

    def test_sibling_split_batches(self):
        assert found(accelerate_save("split_batches=True"), self.rule) == [(10, "warning")]

    def test_control_a_bare_accelerator(self):
        # no setting of several processes: since lintF33 said with the launch as its condition, not as a sign
        assert found(accelerate_save("mixed_precision='fp16'"), self.rule) == [(10, "warning")]
        assert all("shows no launch" in m for m in messages(accelerate_save("mixed_precision='fp16'"), self.rule))

    def test_control_split_batches_off(self):
        assert all("shows no launch" in m and "split_batches" not in m
                   for m in messages(accelerate_save("split_batches=False"), self.rule))

    def test_control_bare_accelerator_one_process_usage(self):
        code = '    """python train.py"""\n' + accelerate_save("mixed_precision='fp16'")
        assert found(code, self.rule) == []

    def test_control_guarded_by_the_main_process(self):
        code = ACCELERATE_SAVE.replace("SETTINGS", "split_batches=True").replace(
            "GUARD\n            torch.save", "if accelerator.is_main_process:\n                torch.save")
        assert found(code, self.rule) == []


# HoytWen/RecPO sft.py (lint heldout29 u004): the device map takes accelerate's process index
PROCESS_INDEX = """
    from accelerate import Accelerator
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTTrainer

    def train(model_name, output_dir):
        device_map = {"": Accelerator().INDEX}
        model = AutoModelForCausalLM.from_pretrained(model_name, device_map=device_map)
        tokenizer = AutoTokenizer.from_pretrained(model_name)
        trainer = SFTTrainer(model=model, tokenizer=tokenizer)
        trainer.train()
        trainer.save_model(output_dir)
        tokenizer.save_pretrained(output_dir)

    if __name__ == "__main__":
        train("TinyLlama/TinyLlama-1.1B", "out")
"""


class TestSaveAllRanksAccelerateProcessIndex:
    """save-all-ranks: a file that reads accelerate's process index is written for several processes; the tokenizer
    saved after `trainer.save_model` (which saves once by itself) is written by every one."""

    verdict = "save-all-ranks"
    rule = "save-all-ranks"

    def test_sibling_the_process_index(self):
        assert found(PROCESS_INDEX.replace("INDEX", "process_index"), self.rule) == [(12, "warning")]

    def test_sibling_the_local_process_index(self):
        assert found(PROCESS_INDEX.replace("INDEX", "local_process_index"), self.rule) == [(12, "warning")]

    def test_control_the_device_only(self):
        # `Accelerator().device` is one GPU's as well: nothing says several processes
        assert found(PROCESS_INDEX.replace("{\"\": Accelerator().INDEX}", "Accelerator().device"), self.rule) == []

    def test_control_the_save_told_which_process(self):
        code = PROCESS_INDEX.replace("INDEX", "process_index").replace(
            "tokenizer.save_pretrained(output_dir)", "if trainer.is_world_process_zero():\n"
            "            tokenizer.save_pretrained(output_dir)")
        assert found(code, self.rule) == []


# joshbav/llama2classify distributed_train.py (lint heldout29b u019): a Trainer script that calls dist.barrier()
TRAINER_BARRIER = """
    import torch.distributed as dist
    from transformers import Trainer

    trainer = Trainer(model=model, args=training_args, train_dataset=ds)
    trainer.train()
    BARRIER
    model.save_pretrained(args.output_dir)
"""


class TestSaveAllRanksTrainerWithTorchDistributed:
    """save-all-ranks: a Hugging Face Trainer script that uses torch.distributed's group API itself is written for
    several processes; one that does not is not read so."""

    verdict = "save-all-ranks"
    rule = "save-all-ranks"

    def test_sibling_a_barrier(self):
        code = TRAINER_BARRIER.replace("BARRIER", "if dist.is_initialized():\n        dist.barrier()")
        assert found(code, self.rule) == [(8, "warning")]

    def test_control_no_group_api(self):
        assert found(TRAINER_BARRIER.replace("BARRIER", "pass"), self.rule) == []

    def test_control_only_rank_zero_saves(self):
        code = TRAINER_BARRIER.replace("BARRIER", "dist.barrier()").replace(
            "model.save_pretrained(args.output_dir)",
            "if dist.get_rank() == 0:\n        model.save_pretrained(args.output_dir)")
        assert found(code, self.rule) == []


# an accelerate GAN trainer (lint heldout29 u011): the unwrapped model's own save method, every process
UNWRAPPED_SAVE = """
    from accelerate import Accelerator, DistributedDataParallelKwargs

    accelerator = Accelerator(kwargs_handlers=[DistributedDataParallelKwargs(find_unused_parameters=True)])
    model, optimizer = accelerator.prepare(model, optimizer)
    for step in range(steps):
        train_step(model, optimizer)
        if step % 1000 == 0:
            SAVE
"""


class TestSaveAllRanksUnwrappedModelSave:
    """save-all-ranks: a save method called on what `unwrap_model` returned writes a file as torch.save does; not
    a Trainer's `save_model()` (main process only) nor accelerate's own `save_state`."""

    verdict = "save-all-ranks"
    rule = "save-all-ranks"

    def test_sibling_save_model(self):
        code = UNWRAPPED_SAVE.replace("SAVE", "accelerator.unwrap_model(model).save_model(f'ckpt_{step}.pkl')")
        assert found(code, self.rule) == [(8, "warning")]

    def test_sibling_save(self):
        code = UNWRAPPED_SAVE.replace("SAVE", "accelerator.unwrap_model(model).save(f'ckpt_{step}.pkl')")
        assert found(code, self.rule) == [(8, "warning")]

    def test_control_under_the_main_process(self):
        code = UNWRAPPED_SAVE.replace("SAVE", "if accelerator.is_main_process:\n"
                                      "                accelerator.unwrap_model(model).save_model('ckpt.pkl')")
        assert found(code, self.rule) == []

    def test_control_accelerates_save_state(self):
        assert found(UNWRAPPED_SAVE.replace("SAVE", "accelerator.save_state('ckpt')"), self.rule) == []

    def test_control_a_method_of_another_object(self):
        assert found(UNWRAPPED_SAVE.replace("SAVE", "trainer.save_model('ckpt')"), self.rule) == []


# zju3dv/neuralbody-style train_net.py (lint heldout29b u003): the project's save_model, twice under a rank test and
# once not
PROJECT_SAVER = """
    import torch.distributed as dist
    from lib.utils.net_utils import save_model

    def train(cfg, network, optimizer):
        for epoch in range(cfg.epochs):
            trainer.train(epoch, network, optimizer)
            if (epoch + 1) % cfg.save_freq == 0FIRST:
                save_model(network, optimizer, cfg.model_dir, epoch)
            if (epoch + 1) % cfg.save_ep == 0 and cfg.local_rank == 0:
                save_model(network, optimizer, cfg.model_dir, epoch)

    if __name__ == "__main__":
        dist.init_process_group(backend="nccl", init_method="env://")
        train(cfg, network, optimizer)
"""


class TestSaveAllRanksProjectSaverGuardedElsewhere:
    """save-all-ranks: the project's save helper (its body not in view, given no state dict) called on every rank
    where the file guards another call of it; not where every call is guarded, nor a helper the file never guards."""

    verdict = "save-all-ranks"
    rule = "save-all-ranks"

    def test_sibling_one_call_unguarded(self):
        assert found(PROJECT_SAVER.replace("FIRST", ""), self.rule) == [(8, "warning")]

    def test_control_every_call_guarded(self):
        assert found(PROJECT_SAVER.replace("FIRST", " and cfg.local_rank == 0"), self.rule) == []

    def test_control_never_guarded(self):
        # a helper this file never guards may save once by itself: its body is not in view
        code = PROJECT_SAVER.replace("FIRST", "").replace(" and cfg.local_rank == 0", "")
        assert found(code, self.rule) == []


# wjchaoGit/Group-Activity-Recognition train_net.py (lint heldout29b u015): DataParallel under a switch, then moved
MOVED_AFTER_WRAPPING = """
    import torch
    import torch.nn as nn

    def train_net(cfg, model):
        if cfg.use_multi_gpu:
            model = nn.DataParallel(model)
        model = model.to(device=device)
        for epoch in range(cfg.epochs):
            train_epoch(model)
            state = {"epoch": epoch, "state_dict": SAVED, "optimizer": optimizer.state_dict()}
            torch.save(state, cfg.result_path + f"/epoch{epoch}.pth")
"""


class TestSaveDdpWrapperMovedAfterWrapping:
    """save-ddp-wrapper: a model wrapped on one path and moved with `.to()` is the wrapper on that path still; the
    unwrapped save is not flagged."""

    verdict = "save-ddp-wrapper"
    rule = "save-ddp-wrapper"

    def test_sibling_moved_conditional_wrapper(self):
        # said at the state dict, taken in its own statement (as the retired script's reader placed it)
        assert found(MOVED_AFTER_WRAPPING.replace("SAVED", "model.state_dict()"), self.rule) == [(10, "warning")]

    def test_control_unwrapped_where_wrapped(self):
        saved = "(model.module if cfg.use_multi_gpu else model).state_dict()"
        assert found(MOVED_AFTER_WRAPPING.replace("SAVED", saved), self.rule) == []

    def test_control_never_wrapped(self):
        code = MOVED_AFTER_WRAPPING.replace("SAVED", "model.state_dict()").replace(
            "model = nn.DataParallel(model)", "model.half()")
        assert found(code, self.rule) == []


# jwyang/fpn.pytorch-style trainval_net.py (lint heldout29b u004): the whole program in the main block, the
# mid-epoch checkpoint saving FPN.state_dict() where the epoch's end unwraps under `if args.mGPUs:`
MAIN_BLOCK = """
    import torch
    import torch.nn as nn
    from model.utils.net_utils import save_checkpoint

    if __name__ == "__main__":
        FPN = build_fpn()
        if args.mGPUs:
            FPN = nn.DataParallel(FPN)
        for epoch in range(args.epochs):
            for step in range(iters):
                train_step(FPN)
                if step % args.save_interval == 0:
                    save_checkpoint({"model": SAVED}, f"fpn_{epoch}_{step}.pth")
            if args.mGPUs:
                save_checkpoint({"model": FPN.module.state_dict()}, f"fpn_{epoch}.pth")
            else:
                save_checkpoint({"model": FPN.state_dict()}, f"fpn_{epoch}.pth")
"""


class TestSaveDdpWrapperInTheMainBlock:
    """save-ddp-wrapper: the main-process test around both the wrapping and the save decides nothing between them;
    a save under the wrapping's own switch is decided."""

    verdict = "save-ddp-wrapper"
    rule = "save-ddp-wrapper"

    def test_sibling_the_mid_epoch_save(self):
        assert found(MAIN_BLOCK.replace("SAVED", "FPN.state_dict()"), self.rule) == [(13, "warning")]

    def test_control_the_mid_epoch_save_unwrapped(self):
        saved = "(FPN.module if args.mGPUs else FPN).state_dict()"
        assert found(MAIN_BLOCK.replace("SAVED", saved), self.rule) == []

    def test_control_under_the_switch(self):
        code = MAIN_BLOCK.replace("if step % args.save_interval == 0:", "if not args.mGPUs:").replace(
            "SAVED", "FPN.state_dict()")
        assert found(code, self.rule) == []


# lucidrains-style block-recurrent trainer under accelerate (lint heldout29b u016): train() defined above main's
# prepare, given one argument too many, reading the model's own attribute through the prepared wrapper
ACCELERATE_TRAIN = """
    from accelerate import Accelerator

    accelerator = Accelerator(split_batches=True)

    def train(model, loader, optim, epoch):
        for i in range(len(model.layers)):
            model.layers[i].clear()
        loss = model(next(loader))
        accelerator.backward(loss)

    def val(model, loader):
        return model.layers[0].loss(next(loader))

    def main(model, loader, optim):
        FREEZE
        model, optim, loader = accelerator.prepare(model, optim, loader)
        for i in range(100):
            train(CALL)
            val(model, loader)

    main(build(), make_loader(), make_optimizer())
"""


class TestUnexpectedArgumentInAnAccelerateScript:
    """unexpected-argument: the file's own function given more arguments than it takes, in an accelerate script
    that names no torch wrapper; not a call that fits."""

    verdict = "unexpected-argument"
    rule = "unexpected-argument"

    def test_sibling_one_argument_too_many(self):
        code = ACCELERATE_TRAIN.replace("FREEZE", "pass").replace("CALL", "model, loader, optim, scheduler, i")
        assert found(code, self.rule) == [(18, "error")]

    def test_control_the_call_fits(self):
        code = ACCELERATE_TRAIN.replace("FREEZE", "pass").replace("CALL", "model, loader, optim, i")
        assert found(code, self.rule) == []


def found_lines(code: str, rule: str) -> list[tuple[int, tuple[int, ...]]]:
    from test_controls_lintA22 import found_also
    return found_also(code, rule)


class TestWrapperMethodCallPreparedInAnotherFunction:
    """wrapper-method-call: the prepared model handed to a function defined above the prepare is the wrapper there
    too, one missing unwrap across functions; a model frozen before prepare is handed back unwrapped."""

    verdict = "wrapper-method-call"
    rule = "wrapper-method-call"

    def test_sibling_read_in_train_and_val(self):
        code = ACCELERATE_TRAIN.replace("FREEZE", "pass").replace("CALL", "model, loader, optim, i")
        assert found(code, self.rule) == [(6, "warning")]
        assert found_lines(code, self.rule) == [(6, (7, 12))]

    def test_control_frozen_before_prepare(self):
        # accelerate wraps in DDP only a model with a trainable parameter (lint heldout27c u025's frozen VAE)
        code = ACCELERATE_TRAIN.replace("FREEZE", "model.requires_grad_(False)").replace(
            "CALL", "model, loader, optim, i")
        assert found(code, self.rule) == []


# a TransReID-style trainer (lint heldout29b u005): the output folder, tested for itself and for being there
OUTPUT_FOLDER = """
    import os
    import torch

    if __name__ == "__main__":
        args = parser.parse_args()
        torch.distributed.init_process_group(backend="nccl", init_method="env://")
        output_dir = cfg.OUTPUT_DIR
        if TEST:
            os.makedirs(output_dir)
"""


class TestMkdirRaceTestedForItsPath:
    """mkdir-race-all-ranks: a path tested for itself beside the exists test is no flag; another name is."""

    verdict = "mkdir-race-all-ranks"
    rule = "mkdir-race-all-ranks"

    def test_sibling_the_path_and_exists(self):
        code = OUTPUT_FOLDER.replace("TEST", "output_dir and not os.path.exists(output_dir)")
        assert found(code, self.rule) == [(9, "warning")]

    def test_control_a_flag_this_file_cannot_resolve(self):
        code = OUTPUT_FOLDER.replace("TEST", "cfg.SAVE and not os.path.exists(output_dir)")
        assert found(code, self.rule) == []

    def test_control_rank_zero(self):
        code = OUTPUT_FOLDER.replace("TEST", "output_dir and torch.distributed.get_rank() == 0")
        assert found(code, self.rule) == []


class TestDeviceFromAccelerateProcessIndex:
    """device-from-global-rank: accelerate's global process index as the GPU a model is placed on; not the local
    one, nor a model spread by `device_map="auto"`."""

    verdict = "device-from-global-rank"
    rule = "device-from-global-rank"

    def test_sibling_the_global_index(self):
        assert found(PROCESS_INDEX.replace("INDEX", "process_index"), self.rule) == [(7, "warning")]

    def test_control_the_local_index(self):
        assert found(PROCESS_INDEX.replace("INDEX", "local_process_index"), self.rule) == []

    def test_control_auto_placement(self):
        code = PROCESS_INDEX.replace('{"": Accelerator().INDEX}', '"auto"  # Accelerator().process_index')
        assert found(code, self.rule) == []


class TestWrapperMethodCallFrozenThenGivenAdapters:
    """wrapper-method-call: a model frozen, then handed to a function that adds trainable layers (LoRA), is wrapped
    by prepare after all (lint heldout27c u033's UNet)."""

    verdict = "wrapper-method-call"
    rule = "wrapper-method-call"

    def test_sibling_adapters_after_the_freeze(self):
        code = ACCELERATE_TRAIN.replace("FREEZE", "model.requires_grad_(False)\n        add_lora_layers(model)").replace(
            "CALL", "model, loader, optim, i")
        assert found(code, self.rule) == [(6, "warning")]


# a semantic-segmentation trainer (lint heldout29 u024): DDP's state saved each epoch, read back by its own resume
# with the 'module.' prefix taken off
RESUME_STRIPS = """
    import torch
    from collections import OrderedDict

    def checkpoint(nets, epoch):
        torch.save(nets.state_dict(), "{}/model_epoch_{}.pth".format(args.saveroot, epoch))

    def main(args):
        model = build_model()
        if args.resume_epoch:
            loaded = torch.load("./resume/LOADED_epoch_{}.pth".format(args.resume_epoch))
            model.load_state_dict(OrderedDict((k[7:], v) for k, v in loaded.items()))
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
        for epoch in range(10):
            train(model)
            checkpoint(model, epoch)

    if __name__ == "__main__":
        main(args)
"""


class TestSaveDdpWrapperReadBackStripped:
    """save-ddp-wrapper: a wrapper's checkpoint that the file's own resume reads back by name, taking 'module.' off,
    is consistent; one the file never reads back is still said."""

    verdict = "save-ddp-wrapper"
    rule = "save-ddp-wrapper"

    def test_sibling_another_checkpoint_read_back(self):
        assert found(RESUME_STRIPS.replace("LOADED", "pretrained"), self.rule) == [(5, "warning")]

    def test_control_read_back_by_the_resume(self):
        assert found(RESUME_STRIPS.replace("LOADED", "model"), self.rule) == []
