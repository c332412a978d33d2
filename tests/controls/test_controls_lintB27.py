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
