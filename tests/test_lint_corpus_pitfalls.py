"""lint v4, issue 41 point 5: pitfalls the readers of the sampled corpus named that no
rule claimed, now claimed under the readers' own names: `ddp-forward-bypassed` (the
training forward runs on the DDP wrapper's `.module`) and `mkdir-race-all-ranks` (every
rank creates the same directory without exist_ok). Each case is a small program written
from the real lines (repository and commit in the comment above it), the rule, and
exactly the (line, severity) pairs that rule must give it (empty: silent); each control
sits beside the sibling that must still get the diagnostic."""

from __future__ import annotations

import textwrap

import pytest

from gpudoctor.linter import engine

# dev7 u031 (github.com/Shoaib-git20/bd3lm main_ddp.py@f07e710): the loss from the module's
# own method, backpropagated on every rank; the wrapper is only handed to the optimizer.
BYPASS = """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        def main(local_rank):
            model = Diffusion(config, tokenizer).to(local_rank)
            model = DDP(model, device_ids=[local_rank])
            optimizer, scheduler = get_optimizer_and_scheduler(model, config)
            for batch in train_loader:
                optimizer.zero_grad()
                loss_obj = model.module.compute_loss(batch["input_ids"].to(local_rank))
                loss = loss_obj.loss
                loss.backward()
                optimizer.step()
                if model.module.ema:
                    model.module.ema.update(model.parameters())
            STEP
        """

# heldout10 u028 (github.com/Ced3-han/PepHAR train_ddp.py@2c7aa1d): a step closure over the
# wrapper; its no_grad validation reads the same method (no gradient there).
CLOSURE = """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        def main(local_rank):
            model = DDP(get_model(config.model).to(local_rank), device_ids=[local_rank])

            def train(it):
                model.train()
                batch = recursive_to(next(train_iterator), local_rank)
                loss_dict, info_dict = model.module.get_loss(batch)
                loss = sum_weighted_losses(loss_dict, config.train.loss_weights)
                loss.backward()
                optimizer.step()

            def validate(it):
                with torch.no_grad():
                    loss_dict, info_dict = model.module.get_loss(batch)

            for it in range(max_iters):
                train(it)
        """

# heldout10 u032 (github.com/CreateIntelligens/index-tts-lora train_ddp.py@ccaa468): the
# trainer's step hands `self.model.module` to an imported loss helper and returns its losses;
# the epoch loop backpropagates them.
TRAINER = """
        from torch.nn.parallel import DistributedDataParallel as DDP
        from train import forward_UnifiedVoice

        class Trainer:
            def __init__(self, rank):
                self.model = load_UnifiedVoice(cfg, path, rank)
                self.model = DDP(self.model, device_ids=[rank], find_unused_parameters=True)

            def train(self, loader):
                for batch in loader:
                    loss_text, loss_mel, acc = self._train_step(batch)
                    weighted_loss = 0.5 * loss_text + 0.5 * loss_mel
                    weighted_loss.backward()
                    self.optimizer.step()

            def _train_step(self, batch):
                outputs = forward_UnifiedVoice(
                    self.model.module,
                    batch,
                    output_loss=True,
                )
                loss_text, loss_mel = outputs["loss"]
                return loss_text, loss_mel, outputs["mel_accuracy"]
        """

# dev7 u034 (github.com/TrinityNeo99/MS-G3D main_ddp.py@c2e6720), a torchrun script: every rank
# tests and creates the work dir, then a timestamped dir that ranks starting together share.
WORK_DIR = """
        import os
        from datetime import datetime
        import torch.distributed as dist

        dist.init_process_group(backend='nccl')

        def main():
            arg = parser.parse_args()
            if not os.path.exists(arg.work_dir):
                os.mkdir(arg.work_dir)
            arg.timestamp = "{0:%Y%m%dT%H-%M-%S/}".format(datetime.now())
            current_work_dir = os.path.join(arg.work_dir, arg.model_saved_name, arg.timestamp)
            CREATE

        if __name__ == '__main__':
            main()
        """

# dev7 u025 (github.com/Niax23/Reaction-Reasoning-Network main_ddp.py@c8ed800): the parent
# makes the log dir before mp.spawn; dev7 u015 (github.com/Chiranjit680/Reversible-ViT
# main_ddp.py@62f093a): the module's top tests and creates it, so the parent made it first.
SPAWNED = """
        import os
        import time
        import torch.multiprocessing as mp

        TOP

        def make_dir(args):
            detail_dir = os.path.join(args.base_log, f'{time.time()}')
            if not os.path.exists(detail_dir):
                os.makedirs(detail_dir)
            return detail_dir

        def main_worker(worker_idx, args, log_dir):
            WORKER

        if __name__ == '__main__':
            log_dir = make_dir(args)
            mp.spawn(main_worker, nprocs=2, args=(args, log_dir))
        """

CASES = {
    # ddp-forward-bypassed
    "module method gives the loss": (BYPASS.replace("STEP", "pass"), "ddp-forward-bypassed", {(11, "error")}),
    "step closure, no_grad validation quiet": (CLOSURE, "ddp-forward-bypassed", {(11, "error")}),
    "module handed to a loss helper, caller backpropagates": (TRAINER, "ddp-forward-bypassed", {(18, "error")}),
    # control: the wrapper's own forward runs in the step, the module only computes the loss from it
    "wrapper called in the step": (
        BYPASS.replace("loss_obj = model.module.compute_loss(", "loss_obj = model.module.loss_from(model(")
        .replace('.to(local_rank))', '.to(local_rank)))').replace("STEP", "pass"), "ddp-forward-bypassed", set()),
    # control: a helper of the file runs the wrapper's forward in the step
    "wrapper called through a helper": (
        BYPASS.replace("loss_obj = model.module.compute_loss(", "loss_obj = model.module.loss_from(forward(")
        .replace('.to(local_rank))', '.to(local_rank)))').replace("STEP", "pass")
        .replace("    optimizer, scheduler",
                 "    def forward(x):\n                return model(x)\n            optimizer, scheduler"),
        "ddp-forward-bypassed", set()),
    # control: DataParallel's .module (no all-reduce to miss; `dataparallel` speaks for it)
    "DataParallel module": (
        BYPASS.replace("DDP(model, device_ids=[local_rank])", "torch.nn.DataParallel(model)")
        .replace("STEP", "pass"), "ddp-forward-bypassed", set()),
    # control: evaluation and saving through .module
    "no_grad forward and save": (BYPASS.replace("loss.backward()", "pass").replace(
        "STEP", "torch.save(model.module.state_dict(), 'ckpt.pt')"), "ddp-forward-bypassed", set()),
    # sibling: a wrapper on the distributed path only: a warning naming that path
    "wrapper on one path": (
        BYPASS.replace("model = DDP(model", "if args.distributed:\n                model = DDP(model")
        .replace("STEP", "pass"), "ddp-forward-bypassed", {(12, "warning")}),
    # mkdir-race-all-ranks
    "test then mkdir, timestamped makedirs": (
        WORK_DIR.replace("CREATE", "os.makedirs(current_work_dir)"), "mkdir-race-all-ranks",
        {(11, "warning")}),  # one function's folders: one race, said at the first naming line 14 (lintB20)
    "exist_ok": (WORK_DIR.replace("os.mkdir(arg.work_dir)", "os.makedirs(arg.work_dir, exist_ok=True)")
                 .replace("CREATE", "os.makedirs(current_work_dir, 0o755, True)"), "mkdir-race-all-ranks", set()),
    # a flag this file cannot resolve may be a rank flag: no guess (this path once called save-all-ranks'
    # helper with the wrong arguments, which the engine swallowed as "nothing to say" for the whole file)
    # (the other makedirs of the file is still said: the whole rule went quiet when that helper raised)
    "an unresolved flag": (WORK_DIR.replace("if not os.path.exists(arg.work_dir):", "if arg.save_logs:")
                           .replace("CREATE", "os.makedirs(current_work_dir)"), "mkdir-race-all-ranks",
                           {(14, "warning")}),
    "rank 0 creates": (WORK_DIR.replace("if not os.path.exists(arg.work_dir):", "if dist.get_rank() == 0:")
                       .replace("CREATE", "pass"), "mkdir-race-all-ranks", set()),
    "lost race caught": (WORK_DIR.replace("CREATE", "try:\n                os.makedirs(current_work_dir)\n"
                                                    "            except FileExistsError:\n                pass")
                         .replace("if not os.path.exists(arg.work_dir):\n                os.mkdir(arg.work_dir)",
                                  "pass"), "mkdir-race-all-ranks", set()),
    "parent makes it before spawning": (SPAWNED.replace("TOP", "").replace("WORKER", "train(worker_idx)"),
                                        "mkdir-race-all-ranks", set()),
    "tested at the module's top of a spawn script": (
        SPAWNED.replace("TOP", "if not os.path.exists('expt_logs'):\n            os.makedirs('expt_logs')")
        .replace("WORKER", "train(worker_idx)"), "mkdir-race-all-ranks", set()),
    # siblings: the same helper called by every spawned rank; an untested makedirs at the module's top
    "every spawned rank makes it": (SPAWNED.replace("TOP", "").replace("WORKER", "make_dir(args)"),
                                    "mkdir-race-all-ranks", {(11, "warning")}),
    "untested at the module's top of a spawn script": (
        SPAWNED.replace("TOP", "os.makedirs('expt_logs')").replace("WORKER", "train(worker_idx)"),
        "mkdir-race-all-ranks", {(6, "warning")}),
}


@pytest.mark.parametrize("name", list(CASES))
def test_corpus_pitfall_verdicts(name):
    text, rule, expected = CASES[name]
    text = textwrap.dedent(text)
    found = [d for d in engine.lint_source(text, "train.py") if d.rule == rule]
    assert {(d.line, d.severity) for d in found} == expected, [(d.line, d.message) for d in found]
