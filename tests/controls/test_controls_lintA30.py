"""Controls and siblings for lintA30 (issue 41): recall on the scripts lint was not built on (lint heldout28 and
heldout27, 27b, 27c, retired to development), each widened chain with the clean script that looks most like it.
Each program is the shape of a development script, cut to a few lines and linted by the real engine (source in the
comment above it)."""

from __future__ import annotations

import textwrap

from test_controls_lintA22 import found, found_also

from gpudoctor.linter import engine

# transformers' run_language_modeling template with its set-up block cut out (lint heldout27b u022): the barrier pair
# around the model download stays, under the --local_rank tests, and nothing in the file starts a group.
HF_TEMPLATE = """
    import argparse
    import torch

    def main():
        parser = argparse.ArgumentParser()
        parser.add_argument("--local_rank", type=int, default=-1)
        args = parser.parse_args()
        SETUP
        if args.local_rank not in [-1, 0]:
            torch.distributed.barrier()
        model = build_model(args)
        if args.local_rank == 0:
            torch.distributed.barrier()
        model.train()

    if __name__ == "__main__":
        main()
"""


class TestDistWithoutInitBarrierInScriptFunction:
    """dist-without-init: a collective in the function the main block runs, in a file that starts no group."""

    verdict = "dist-without-init"
    rule = "dist-without-init"

    def test_sibling_barrier_under_the_local_rank_test_no_group_anywhere(self):
        assert found(HF_TEMPLATE.replace("SETUP", "pass"), self.rule) == [(10, "warning")]

    def test_control_the_template_starts_its_group(self):
        code = HF_TEMPLATE.replace("SETUP", 'if args.local_rank != -1:\n'
                                   '            torch.cuda.set_device(args.local_rank)\n'
                                   '            torch.distributed.init_process_group(backend="nccl")')
        assert found(code, self.rule) == []

    def test_control_a_set_up_helper_of_another_module(self):
        code = HF_TEMPLATE.replace("import torch\n", "import torch\n    from utils import init_distributed_mode\n") \
            .replace("SETUP", "init_distributed_mode(args)")
        assert found(code, self.rule) == []

    def test_control_a_trainer_starts_the_group_first(self):
        # a SageMaker FSDP run_clm.py (the mature-repository control): TrainingArguments starts the group under
        # torchrun, and the final barrier comes after trainer.train()
        code = """
            import torch.distributed as dist
            from transformers import Trainer, TrainingArguments

            def training_function(args):
                training_args = TrainingArguments(output_dir="/tmp", fsdp=args.fsdp)
                trainer = Trainer(model=model, args=training_args, train_dataset=dataset)
                trainer.train()
                dist.barrier()

            def main():
                training_function(parse_args())

            if __name__ == "__main__":
                main()
        """
        assert found(code, self.rule) == []

    def test_sibling_get_rank_under_no_test_is_an_error(self):
        # nothing starts a group and nothing tests whether the call runs: it raises on every run
        code = HF_TEMPLATE.replace("SETUP", "rank = torch.distributed.get_rank()")
        assert found(code, self.rule) == [(8, "error")]


# an accelerate trainer whose train loader is left out of `prepare` (lint heldout27c u023, heldout28 u006)
ACCELERATE_LOADER = """
    import torch
    from torch.utils.data import DataLoader
    from accelerate import Accelerator

    def main():
        accelerator = Accelerator()
        loader = DataLoader(dataset, batch_size=8, shuffle=True)
        PREPARE
        for batch in loader:
            loss = model(batch).loss
            accelerator.backward(loss)
            optimizer.step()
        accelerator.wait_for_everyone()

    if __name__ == "__main__":
        main()
"""


class TestNoDistributedSamplerUnprepared:
    """no-distributed-sampler: an accelerate train loader never given to `prepare`."""

    verdict = "no-distributed-sampler"
    rule = "no-distributed-sampler"

    def test_sibling_loader_left_out_of_prepare(self):
        code = ACCELERATE_LOADER.replace("PREPARE", "model, optimizer = accelerator.prepare(model, optimizer)")
        assert found(code, self.rule) == [(7, "warning")]

    def test_control_loader_prepared(self):
        code = ACCELERATE_LOADER.replace(
            "PREPARE", "model, optimizer, loader = accelerator.prepare(model, optimizer, loader)")
        assert found(code, self.rule) == []

    def test_control_loader_prepared_under_another_name(self):
        code = ACCELERATE_LOADER.replace("PREPARE", "model, optimizer, train_dl = accelerator.prepare(model, optimizer, "
                                         "loader)\n        loader = train_dl")
        assert found(code, self.rule) == []

    def test_control_one_process_script(self):
        # no launcher named, no multi-process API: as likely one process (mixed precision only)
        code = ACCELERATE_LOADER.replace("PREPARE", "model, optimizer = accelerator.prepare(model, optimizer)") \
            .replace("accelerator.wait_for_everyone()", "pass")
        assert found(code, self.rule) == []

    def test_control_prepare_of_a_parameter(self):
        # what the caller hands the helper is not read: the loader may be the one it prepares
        code = ACCELERATE_LOADER.replace("PREPARE", "model, optimizer = setup(accelerator, model, optimizer)") \
            .replace("def main():", "def setup(accelerator, *objects):\n"
                     "        return accelerator.prepare(objects[0], objects[1])\n\n    def main():")
        code = code.replace("return accelerator.prepare(objects[0], objects[1])",
                            "return accelerator.prepare(model_in, optim_in)").replace(
            "def setup(accelerator, *objects):", "def setup(accelerator, model_in, optim_in):")
        assert found(code, self.rule) == []


# a torchrun trainer (lint heldout27b u020): the log level set per node first, the save a hundred lines on
LOCAL_GATES = """
    import logging
    import os
    import torch
    import torch.distributed as dist

    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    logging.basicConfig(level=logging.INFO if local_rank in [-1, 0] else logging.WARN)
    model = build().to(local_rank)
    for epoch in range(10):
        train(model)
        if local_rank == SAVER:
            torch.save(model.module.state_dict(), "best.pt")
"""


class TestLocalRankAsGlobalRankGates:
    """local-rank-as-global-rank: one diagnostic at the first local-rank test, naming the tests that write, a
    `local_rank == 1` save among them."""

    verdict = "local-rank-as-global-rank"
    rule = "local-rank-as-global-rank"

    def test_sibling_the_save_test_is_named(self):
        assert found_also(LOCAL_GATES.replace("SAVER", "0"), self.rule) == [(8, (12,))]

    def test_sibling_local_rank_one_saves(self):
        assert found_also(LOCAL_GATES.replace("SAVER", "1"), self.rule) == [(8, (12,))]

    def test_control_the_global_rank_saves(self):
        code = LOCAL_GATES.replace("local_rank == SAVER", "dist.get_rank() == 0")
        assert found(code, self.rule) == []

    def test_sibling_a_save_is_named_before_a_folder(self):
        code = LOCAL_GATES.replace("SAVER", "0").replace(
            "model = build()", "if local_rank == 0:\n        os.makedirs('out', exist_ok=True)\n    model = build()")
        message = next(d.message for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), "train.py")
                       if d.rule == self.rule)
        assert "(`save()` at line 14)" in message


# a DeepSpeed evaluation script (lint heldout27 u010): the metric's process ids from the local rank
METRIC_IDS = """
    import os
    import deepspeed
    from datasets import load_metric

    local_rank = int(os.getenv("LOCAL_RANK", "0"))
    world_size = int(os.getenv("WORLD_SIZE", "1"))
    deepspeed.init_distributed()
    metric = load_metric("custom_metric.py", num_process=world_size, process_id=RANK)
"""


class TestLocalRankAsGlobalRankProcessId:
    """local-rank-as-global-rank: `process_id=` beside `num_process=` is a rank in the whole job."""

    verdict = "local-rank-as-global-rank"
    rule = "local-rank-as-global-rank"

    def test_sibling_process_id_from_the_local_rank(self):
        assert found(METRIC_IDS.replace("RANK", "local_rank"), self.rule) == [(8, "warning")]

    def test_control_process_id_from_the_global_rank(self):
        code = METRIC_IDS.replace("process_id=RANK", "process_id=int(os.environ['RANK'])")
        assert found(code, self.rule) == []


# nanoGPT's loop with estimate_loss imported and bound to the DDP model by functools.partial (lint heldout28 u004)
PARTIAL_EVAL = """
    import os
    import torch
    from functools import partial
    from torch.distributed import init_process_group
    from torch.nn.parallel import DistributedDataParallel as DDP
    from model.fns import estimate_loss, get_batch

    init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    master_process = int(os.environ["RANK"]) == 0
    model = DDP(GPT(config).to(local_rank), device_ids=[local_rank])
    estimate_loss = partial(estimate_loss, model=BOUND, get_batch=get_batch)
    for iter_num in range(1000):
        if iter_num % 100 == 0 TEST:
            losses = estimate_loss()
        loss = model(*get_batch("train"))
        loss.backward()
"""


class TestDdpForwardOnOneRankPartial:
    """ddp-forward-on-one-rank: the model bound by functools.partial is given at the call."""

    verdict = "ddp-forward-on-one-rank"
    rule = "ddp-forward-on-one-rank"

    def test_sibling_partial_bound_wrapper_called_on_the_master(self):
        code = PARTIAL_EVAL.replace("BOUND", "model").replace("TEST", "and master_process")
        assert found(code, self.rule) == [(15, "warning")]

    def test_control_partial_bound_the_unwrapped_module(self):
        code = PARTIAL_EVAL.replace("BOUND", "model.module").replace("TEST", "and master_process")
        assert found(code, self.rule) == []

    def test_control_called_on_every_rank(self):
        code = PARTIAL_EVAL.replace("BOUND", "model").replace("TEST", "")
        assert found(code, self.rule) == []


# a mixed-precision trainer that starts a group and splits the data but never wraps the model (lint heldout28 u016)
SCALER_STEP = """
    import torch
    import torch.distributed as dist
    from torch.utils.data import DataLoader, DistributedSampler

    def save(model, path):
        raw = model.module if hasattr(model, "module") else model
        torch.save(raw.state_dict(), path)

    def main():
        dist.init_process_group(backend="nccl")
        model = AutoModelForCausalLM.from_pretrained("gpt2").cuda()
        WRAP
        loader = DataLoader(data, sampler=DistributedSampler(data))
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        scaler = torch.cuda.amp.GradScaler()
        for batch in loader:
            loss = model(**batch).loss
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        save(model, "out.pt")

    if __name__ == "__main__":
        main()
"""


class TestNoGradientSyncScalerStep:
    """no-gradient-sync: a GradScaler's step is the optimizer's; a hasattr-guarded `.module` is no wrapper."""

    verdict = "no-gradient-sync"
    rule = "no-gradient-sync"

    def test_sibling_scaler_steps_an_unwrapped_model(self):
        assert found(SCALER_STEP.replace("WRAP", "pass"), self.rule) == [(11, "warning")]

    def test_control_the_model_is_wrapped(self):
        code = SCALER_STEP.replace("WRAP", "model = torch.nn.parallel.DistributedDataParallel(model)")
        assert found(code, self.rule) == []

    def test_control_module_read_without_asking(self):
        # `.module` read as such (not under hasattr): the model the file calls is a wrapper built elsewhere
        code = SCALER_STEP.replace("WRAP", "pass").replace(
            'raw = model.module if hasattr(model, "module") else model', "raw = model.module")
        assert found(code, self.rule) == []
