"""Controls and siblings for lintA29 (issue 41): precision and recall where the scripts lint was not built on (lint
heldout27, 27b, 27c, retired to development) showed them lost. Each program is the shape of a development script, cut
to a few lines and linted by the real engine (source in the comment above it)."""

from __future__ import annotations

import textwrap

from test_controls_lintA22 import found, found_also

from gpudoctor.linter import engine

# an accelerate LoRA trainer (lint heldout27c u031, u033): the loop, then `accelerator.wait_for_everyone()` and the
# unwrapped model saved with no main-process test. The file names no launcher; the barrier is for several processes.
ACCELERATE_SAVE = """
    import torch
    from accelerate import Accelerator

    def main():
        accelerator = Accelerator(mixed_precision="fp16")
        unet, optimizer, loader = accelerator.prepare(unet, optimizer, loader)
        for batch in loader:
            loss = unet(batch).loss
            accelerator.backward(loss)
            optimizer.step()
        SYNC
        unwrapped = accelerator.unwrap_model(unet)
        SAVE

    if __name__ == "__main__":
        main()
"""


class TestSaveAllRanksAccelerateProcessApi:
    """save-all-ranks: an Accelerator whose file uses accelerate's multi-process API is a run of several processes."""

    verdict = "save-all-ranks"
    rule = "save-all-ranks"

    def test_sibling_no_process_api_says_the_launch_is_the_condition(self):
        # no barrier, no gather and no launcher named: lintF33 (issue 41, item 2) says the launch is the condition
        # rather than nothing (the readers of lint heldout29 u016, heldout31 u021, u023 read such saves so)
        code = ACCELERATE_SAVE.replace("SYNC", "pass").replace("SAVE", "unwrapped.save_pretrained(out_dir)")
        assert found(code, self.rule) == [(13, "warning")]
        message = next(d.message for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), "train.py")
                       if d.rule == self.rule)
        assert "shows no launch" in message

    def test_control_one_process_accelerate_script(self):
        # its usage line runs it as one plain process
        code = ('    """Usage: python train.py --output_dir out"""\n' + ACCELERATE_SAVE).replace("SYNC", "pass").replace(
            "SAVE", "unwrapped.save_pretrained(out_dir)")
        assert found(code, self.rule) == []

    def test_control_the_save_gated_on_the_main_process(self):
        code = ACCELERATE_SAVE.replace("SYNC", "accelerator.wait_for_everyone()").replace(
            "SAVE", "if accelerator.is_main_process:\n            unwrapped.save_pretrained(out_dir)")
        assert found(code, self.rule) == []

    def test_control_accelerate_saves_on_the_main_process_itself(self):
        code = ACCELERATE_SAVE.replace("SYNC", "accelerator.wait_for_everyone()").replace(
            "SAVE", "accelerator.save(unwrapped.state_dict(), path)")
        assert found(code, self.rule) == []

    def test_sibling_barrier_then_save_on_every_process(self):
        code = ACCELERATE_SAVE.replace("SYNC", "accelerator.wait_for_everyone()").replace(
            "SAVE", "unwrapped.save_pretrained(out_dir)")
        assert found(code, self.rule) == [(13, "warning")]
        message = next(d.message for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), "train.py")
                       if d.rule == self.rule)
        assert "accelerator.wait_for_everyone` on line 11" in message

    def test_sibling_main_process_first_is_a_sign_too(self):
        # lint heldout27c u037: `with accelerator.main_process_first():`, then `model.save_pretrained(...)` each epoch
        code = ACCELERATE_SAVE.replace("SYNC", "with accelerator.main_process_first():\n            data = load()").replace(
            "SAVE", "torch.save(unwrapped.state_dict(), 'model.pt')")
        assert [line for line, _ in found(code, self.rule)] == [14]


class TestTorchLoadNoMapLocationAccelerateProcessApi:
    """torch-load-no-map-location: the same sign makes an accelerate file's load one per process."""

    verdict = "torch-load-no-map-location"
    rule = "torch-load-no-map-location"

    LOAD = """
        import torch
        from accelerate import Accelerator

        accelerator = Accelerator()
        state = torch.load(args.resume)
        model.load_state_dict(state)
        model, optimizer = accelerator.prepare(model, optimizer)
        SYNC
    """

    def test_control_no_process_api(self):
        assert found(self.LOAD.replace("SYNC", "train(model)"), self.rule) == []

    def test_sibling_a_gather_for_metrics(self):
        code = self.LOAD.replace("SYNC", "preds = accelerator.gather_for_metrics(model(batch))")
        assert [line for line, _ in found(code, self.rule)] == [5]


# PSMNet finetune (lint heldout27c u006), a monodepth DDP trainer (heldout27 u006), the ImageNet example's resume
# (heldout27 u018): the model is a wrapper on one path only, a checkpoint is loaded into that same model after the
# wrapping, and the epoch loop saves its state_dict. build-nanogpt's `if ddp:` (lint heldout11) loads nothing back.
CONDITIONAL_WRAP = """
    import torch
    import torch.nn as nn

    model = Net()
    if args.cuda:
        model = nn.DataParallel(model)
        model.cuda()
    LOAD
    for epoch in range(args.epochs):
        train(model)
        torch.save({"epoch": epoch, "state_dict": model.state_dict()}, f"ckpt_{epoch}.tar")
"""


class TestSaveDdpWrapperLoadedBack:
    """save-ddp-wrapper: a wrapper on one path only, whose checkpoints the file loads back into the same model."""

    verdict = "save-ddp-wrapper"
    rule = "save-ddp-wrapper"

    def test_control_loaded_back_into_the_same_model(self):
        code = CONDITIONAL_WRAP.replace("LOAD", "if args.loadmodel:\n    model.load_state_dict(torch.load(args.loadmodel)['state_dict'])")
        assert found(code, self.rule) == []

    def test_sibling_nothing_loaded_back(self):
        assert [line for line, _ in found(CONDITIONAL_WRAP.replace("LOAD", "pass"), self.rule)] == [11]

    def test_sibling_loaded_into_another_model(self):
        # the plain model of an evaluation path reads it: the prefix depends on the launch that saved it
        code = CONDITIONAL_WRAP.replace("LOAD", "if args.eval:\n    net = Net()\n    net.load_state_dict(torch.load(args.loadmodel))")
        assert [line for line, _ in found(code, self.rule)] == [13]

    def test_sibling_load_before_the_wrapping(self):
        # loaded into the plain model, then wrapped: the file's own load shows no round trip through the wrapper
        code = CONDITIONAL_WRAP.replace("model = Net()\n", "model = Net()\nmodel.load_state_dict(torch.load(path))\n").replace(
            "LOAD", "pass")
        assert [line for line, _ in found(code, self.rule)] == [12]


# a video-pretraining launcher (lint heldout27 u001): `else: raise NotImplementedError`, and under it the call the raise
# replaced, whose function the file no longer has
DEAD_CALL = """
    import argparse
    import torch.multiprocessing as mp

    def main():
        args = argparse.ArgumentParser().parse_args()
        if args.multiprocessing_distributed:
            mp.spawn(worker, nprocs=2, args=(args,))
        else:
            CUT
            main_worker(args.gpu, args)

    def worker(gpu, args):
        pass

    if __name__ == "__main__":
        main()
"""


class TestUndefinedNameBelowARaise:
    """undefined-name: a name read below a `raise` (or `return`) of its block is never looked up."""

    verdict = "undefined-name"
    rule = "undefined-name"

    def test_control_below_a_raise(self):
        assert found(DEAD_CALL.replace("CUT", "raise NotImplementedError"), self.rule) == []

    def test_control_below_a_return(self):
        assert found(DEAD_CALL.replace("CUT", "return"), self.rule) == []

    def test_sibling_the_raise_in_an_inner_block_only(self):
        # the raise ends its own `if`, not the block the call is in: the call runs when the test is false
        code = DEAD_CALL.replace("CUT", "if args.strict:\n                raise NotImplementedError")
        assert [line for line, _ in found(code, self.rule)] == [11]


# an ImageMol-style pretraining script (lint heldout27b u011): four models wrapped in DataParallel, each given DDP's
# `broadcast_buffers=False`
KEYWORDS = """
    import torch

    def main():
        model = torch.nn.DataParallel(model, device_ids=ids, broadcast_buffers=False)
        netG = torch.nn.DataParallel(netG, device_ids=ids, broadcast_buffers=False)
        netD = torch.nn.DataParallel(netD, device_ids=ids, OTHER=False)

    if __name__ == "__main__":
        main()
"""


class TestUnexpectedArgumentOneKeywordMistake:
    """unexpected-argument: one wrong keyword given to one callee at several calls is one diagnostic."""

    verdict = "unexpected-argument"
    rule = "unexpected-argument"

    def test_control_the_parameters_dataparallel_has(self):
        code = KEYWORDS.replace("broadcast_buffers=False", "output_device=0").replace("OTHER", "dim")
        assert found(code, self.rule) == []

    def test_sibling_the_same_keyword_at_three_calls(self):
        code = KEYWORDS.replace("OTHER", "broadcast_buffers")
        assert found_also(code, self.rule) == [(4, (5, 6))]

    def test_sibling_another_keyword_is_another_mistake(self):
        code = KEYWORDS.replace("OTHER", "find_unused_parameters")
        assert found_also(code, self.rule) == [(4, (5,)), (6, ())]


# an RWKV trainer under accelerate (lint heldout27b u016) and a GPT-2 chat trainer (lint heldout27 u020): the prepared
# model handed to the file's own function, which saves its state_dict
PREPARED_PARAMETER = """
    import torch
    from accelerate import Accelerator

    def save_checkpoint(model, output_dir, epoch):
        torch.save(model.state_dict(), f"{output_dir}/epoch_{epoch}.pt")

    def main():
        accelerator = Accelerator()
        model, loader, optimizer = accelerator.prepare(model, loader, optimizer)
        for epoch in range(3):
            train(model, loader, optimizer)
            GIVEN

    if __name__ == "__main__":
        main()
"""


class TestSaveDdpWrapperPreparedModelParameter:
    """save-ddp-wrapper: a parameter is followed to what every call of its function gives it."""

    verdict = "save-ddp-wrapper"
    rule = "save-ddp-wrapper"

    def test_control_the_unwrapped_model_given(self):
        code = PREPARED_PARAMETER.replace("GIVEN", "save_checkpoint(accelerator.unwrap_model(model), out, epoch)")
        assert found(code, self.rule) == []

    def test_control_one_call_gives_another_model(self):
        code = PREPARED_PARAMETER.replace(
            "GIVEN", "save_checkpoint(model, out, epoch)\n            save_checkpoint(ema_model, out, epoch)")
        assert found(code, self.rule) == []

    def test_sibling_the_prepared_model_given(self):
        code = PREPARED_PARAMETER.replace("GIVEN", "save_checkpoint(model, out, epoch)")
        assert [line for line, _ in found(code, self.rule)] == [5]


class TestSaveAllRanksMainProcessTestIsNoSign:
    """save-all-ranks: a main-process test alone does not make an accelerate file one of several processes."""

    verdict = "save-all-ranks"
    rule = "save-all-ranks"

    def test_control_only_a_main_process_test(self):
        # not read as a sign of several processes: the warning keeps the launch as its condition (lintF33)
        code = ACCELERATE_SAVE.replace("SYNC", "if accelerator.is_main_process:\n            print(loss)").replace(
            "SAVE", "unwrapped.save_pretrained(out_dir)")
        messages = [d.message for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), "train.py")
                    if d.rule == self.rule]
        assert len(messages) == 1 and "shows no launch" in messages[0] and "launched as several:" not in messages[0]

    def test_sibling_a_gather_as_well(self):
        code = ACCELERATE_SAVE.replace("SYNC", "losses = accelerator.gather(loss)").replace(
            "SAVE", "unwrapped.save_pretrained(out_dir)")
        assert [line for line, _ in found(code, self.rule)] == [13]


# a one-process 'multi-GPU' benchmark (lint heldout27 u014): a gloo group with rank=0, world_size=1, then MNIST with
# download=True and a folder made, no process started
WORLD_OF_ONE = """
    import os
    import torch.distributed as dist
    from torchvision import datasets

    def main():
        dist.init_process_group("gloo", rank=0, world_size=SIZE)
        os.makedirs("runs/exp")
        data = datasets.MNIST(root="./data", train=True, download=True)
        train(data)

    if __name__ == "__main__":
        main()
"""


class TestDatasetDownloadAllRanksWorldOfOne:
    """dataset-download-all-ranks: a literal world of one, no process started, is one process downloading."""

    verdict = "dataset-download-all-ranks"
    rule = "dataset-download-all-ranks"

    def test_control_world_of_one(self):
        assert found(WORLD_OF_ONE.replace("SIZE", "1"), self.rule) == []

    def test_sibling_world_of_two(self):
        assert [line for line, _ in found(WORLD_OF_ONE.replace("SIZE", "2"), self.rule)] == [8]

    def test_sibling_world_from_the_launcher(self):
        code = WORLD_OF_ONE.replace("SIZE", "int(os.environ['WORLD_SIZE'])")
        assert [line for line, _ in found(code, self.rule)] == [8]


class TestMkdirRaceAllRanksWorldOfOne:
    """mkdir-race-all-ranks: the same world of one makes its folder once."""

    verdict = "mkdir-race-all-ranks"
    rule = "mkdir-race-all-ranks"

    def test_control_world_of_one(self):
        assert found(WORLD_OF_ONE.replace("SIZE", "1"), self.rule) == []

    def test_sibling_world_of_two(self):
        assert [line for line, _ in found(WORLD_OF_ONE.replace("SIZE", "2"), self.rule)] == [7]


# a LoRA SFT trainer (lint heldout27 u038): under `self.local_rank == 0` the run's config is opened to read it; a
# results writer (lint heldout27 u010) opens its predictions file to append
LOCAL_ZERO_OPEN = """
    import json
    import os

    local_rank = int(os.environ["LOCAL_RANK"])
    if local_rank == 0:
        with open(path, MODE) as f:
            data = json.load(f)
"""


class TestLocalRankAsGlobalRankOpenToRead:
    """local-rank-as-global-rank: a file opened to read under the first-process test writes nothing."""

    verdict = "local-rank-as-global-rank"
    rule = "local-rank-as-global-rank"

    def test_control_opened_to_read(self):
        assert found(LOCAL_ZERO_OPEN.replace("MODE", '"r"'), self.rule) == []

    def test_control_opened_with_no_mode(self):
        assert found(LOCAL_ZERO_OPEN.replace("path, MODE", "path"), self.rule) == []

    def test_sibling_opened_to_append(self):
        assert [line for line, _ in found(LOCAL_ZERO_OPEN.replace("MODE", '"a"'), self.rule)] == [5]
