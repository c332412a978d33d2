"""Rank conditions written the ways training scripts write them, and the
collectives and DDP forwards under them: each snippet is run through the
real engine with one rule, and must be flagged on the marked line (or not
at all). Shapes taken from public training scripts (nanoGPT, the HF
examples, YOLOv5, DETR/MAE utils, Lightning and accelerate examples)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from gpudoctor.linter import engine
from gpudoctor.linter.model import FileModel
from gpudoctor.linter.ranks import is_rank_condition
from gpudoctor.linter.rules import BY_ID

COLLECTIVE = "collective-under-rank-condition"
FORWARD = "ddp-forward-on-one-rank"


@pytest.fixture(autouse=True)
def loud_rules(monkeypatch):
    monkeypatch.setattr(engine, "RAISE_RULE_ERRORS", True)


def lines(rule: str, code: str) -> list[int]:
    found = engine.lint_source(textwrap.dedent(code), "case.py", [BY_ID[rule]])
    return sorted(d.line for d in found)


def marked(code: str) -> list[int]:
    return [n for n, line in enumerate(textwrap.dedent(code).splitlines(), 1) if line.rstrip().endswith("# hangs")]


HEADER = "import os\nimport torch\nimport torch.distributed as dist\n"

RANK_TESTS = [
    "rank == 0", "rank != 0", "0 == rank", "args.local_rank in [-1, 0]", "args.local_rank not in (-1, 0)",
    "dist.get_rank() == 0", "torch.distributed.get_rank() > 0", "local_rank == 0", "self.global_rank == 0",
    "is_main_process()", "not is_main_process()", "master_process", "accelerator.is_main_process",
    "accelerator.is_local_main_process", "trainer.is_global_zero", "self.trainer.is_global_zero",
    "int(os.environ['RANK']) == 0", "os.environ.get('LOCAL_RANK') == '0'", "RANK in {-1, 0}",
    "args.rank % ngpus_per_node == 0", "dist.is_initialized() and dist.get_rank() == 0",
    "not dist.is_initialized() or dist.get_rank() == 0", "ddp_rank == 0", "accelerator.process_index == 0",
    "state.is_world_process_zero", "rank < 1", "rank >= 1",
]
NOT_RANK_TESTS = [
    "dist.is_initialized()", "world_size > 1", "dist.get_world_size() > 1", "args.local_rank != -1",
    "args.local_rank == -1", "local_rank >= 0", "rank > -1", "rank < 0", "args.distributed", "ddp",
    "torch.cuda.is_available()", "epoch % 10 == 0", "num_ranks > 1", "src_rank == 0",
]


@pytest.mark.parametrize("test", RANK_TESTS)
def test_rank_conditions(test):
    tree = ast.parse(test, mode="eval")
    assert is_rank_condition(FileModel(ast.parse(""), ""), tree.body)


@pytest.mark.parametrize("test", NOT_RANK_TESTS)
def test_tests_every_rank_answers_alike(test):
    tree = ast.parse(test, mode="eval")
    assert not is_rank_condition(FileModel(ast.parse(""), ""), tree.body)


@pytest.mark.parametrize("test", RANK_TESTS)
def test_barrier_under_any_rank_condition_is_flagged(test):
    code = HEADER + f"if {test}:\n    dist.barrier()  # hangs\n"
    assert lines(COLLECTIVE, code) == marked(code)


@pytest.mark.parametrize("test", NOT_RANK_TESTS)
def test_barrier_under_a_test_every_rank_takes_is_fine(test):
    assert lines(COLLECTIVE, HEADER + f"if {test}:\n    dist.barrier()\n") == []


FLAGGED = {
    "early-return": '''
        import torch.distributed as dist

        def log_metrics(metrics):
            if not is_main_process():
                return
            out = [None] * dist.get_world_size()
            dist.all_gather_object(out, metrics)  # hangs
        ''',
    "early-continue": '''
        import torch.distributed as dist

        for step, batch in enumerate(loader):
            if args.local_rank not in [-1, 0]:
                continue
            dist.all_reduce(loss)  # hangs
        ''',
    "flag-from-rank": '''
        import os
        import torch.distributed as dist

        ddp_rank = int(os.environ["RANK"])
        should_log = ddp_rank == 0
        if should_log:
            dist.barrier()  # hangs
        ''',
    "helper-from-rank": '''
        import torch.distributed as dist

        def chief():
            return dist.get_rank() == 0

        if chief():
            dist.barrier()  # hangs
        ''',
    "nested-function": '''
        import torch.distributed as dist

        def train(rank):
            def sync_metrics():
                dist.all_reduce(total)

            if rank == 0:
                sync_metrics()  # hangs
        ''',
    "method-through-self": '''
        import torch.distributed as dist

        class Trainer:
            def _reduce(self, t):
                dist.all_reduce(t)
                return t

            def log(self, t):
                if self.global_rank == 0:
                    print(self._reduce(t))  # hangs
        ''',
    "else-arm-only": '''
        import torch.distributed as dist

        if rank == 0:
            save()
        else:
            dist.barrier()  # hangs
        ''',
    "new-group": '''
        import torch.distributed as dist

        if dist.get_rank() == 0:
            group = dist.new_group([0, 1])  # hangs
        ''',
    "lightning-sync-dist": '''
        import lightning as L

        class Model(L.LightningModule):
            def validation_step(self, batch, batch_idx):
                loss = self.loss(batch)
                if self.trainer.is_global_zero:
                    self.log("val_loss", loss, sync_dist=True)  # hangs
        ''',
    "fabric": '''
        from lightning.fabric import Fabric

        fabric = Fabric()
        if fabric.global_rank == 0:
            fabric.barrier()  # hangs
        ''',
}

NOT_FLAGGED = {
    "both-arms": '''
        import torch.distributed as dist

        if rank == 0:
            dist.broadcast(t, src=0)
        else:
            dist.broadcast(t, src=0)
        ''',
    "rank0-first-context-manager": '''
        from contextlib import contextmanager
        import torch.distributed as dist

        @contextmanager
        def torch_distributed_zero_first(local_rank):
            if local_rank not in [-1, 0]:
                dist.barrier(device_ids=[local_rank])
            yield
            if local_rank == 0:
                dist.barrier(device_ids=[0])
        ''',
    "rank0-only-io": '''
        import json
        import torch
        import torch.distributed as dist

        if dist.get_rank() == 0:
            torch.save(model.module.state_dict(), "ckpt.pt")
            with open("metrics.json", "w") as f:
                json.dump(metrics, f)
            print("saved")
        dist.barrier()
        ''',
    "value-chosen-by-rank": '''
        import torch.distributed as dist

        stop_list = [stop if RANK == 0 else None]
        dist.broadcast_object_list(stop_list, 0)
        ''',
    "player-and-trainers": '''
        import torch.distributed as dist

        def player():
            dist.broadcast_object_list(data, src=0)

        def trainer():
            dist.broadcast_object_list(data, src=0)

        if dist.get_rank() == 0:
            player()
        else:
            trainer()
        ''',
    "accelerate-main-process-save": '''
        from accelerate import Accelerator

        accelerator = Accelerator()
        accelerator.wait_for_everyone()
        if accelerator.is_main_process:
            unwrapped = accelerator.unwrap_model(model)
            unwrapped.save_pretrained("out", save_function=accelerator.save)
        ''',
    "builtin-reduce": '''
        from functools import reduce

        if rank == 0:
            total = reduce(lambda a, b: a + b, values)
        ''',
    "send-recv-are-point-to-point": '''
        import torch.distributed as dist

        if dist.get_rank() == 0:
            dist.send(t, dst=1)
        else:
            dist.recv(t, src=0)
        ''',
}


@pytest.mark.parametrize("name", FLAGGED)
def test_collective_shapes_flagged(name):
    code = FLAGGED[name]
    assert lines(COLLECTIVE, code) == marked(code)


@pytest.mark.parametrize("name", NOT_FLAGGED)
def test_correct_shapes_not_flagged(name):
    assert lines(COLLECTIVE, NOT_FLAGGED[name]) == []


def test_message_names_the_branch_and_the_collective_lines():
    code = textwrap.dedent(FLAGGED["nested-function"])
    (d,) = engine.lint_source(code, "case.py", [BY_ID[COLLECTIVE]])
    assert "line 6" in d.message and "line 8" in d.message and "dist.all_reduce" in d.message
    assert "every rank" in d.fix


FORWARDS = {
    "nanogpt-estimate-loss": ('''
        import os
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        ddp_rank = int(os.environ["RANK"])
        master_process = ddp_rank == 0
        model = DDP(model, device_ids=[ddp_local_rank])

        @torch.no_grad()
        def estimate_loss():
            losses = torch.zeros(eval_iters)
            for k in range(eval_iters):
                logits, loss = model(X, Y)
                losses[k] = loss.item()
            return losses.mean()

        while True:
            if iter_num % eval_interval == 0 and master_process:
                print(estimate_loss())  # hangs
            logits, loss = model(X, Y)
            loss.backward()
        ''', True),
    "self-model": ('''
        import os
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        class Trainer:
            def __init__(self, model):
                self.gpu_id = int(os.environ["LOCAL_RANK"])
                self.model = DDP(model, device_ids=[self.gpu_id])

            def _validate(self, x):
                with torch.no_grad():
                    return self.model(x)

            def train(self, epochs):
                for epoch in range(epochs):
                    if self.gpu_id == 0:
                        self._validate(self.val)  # hangs
        ''', True),
    "accelerate-prepare": ('''
        from accelerate import Accelerator

        accelerator = Accelerator()
        model, optimizer = accelerator.prepare(model, optimizer)
        if accelerator.is_main_process:
            outputs = model(**batch)  # hangs
        ''', True),
    "module-on-rank-0": ('''
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(net, device_ids=[rank])
        if rank == 0:
            out = model.module(x)
        ''', False),
    "unwrapped-on-rank-0": ('''
        from accelerate import Accelerator

        accelerator = Accelerator()
        model = accelerator.prepare(model)
        if accelerator.is_main_process:
            accelerator.unwrap_model(model)(x)
        ''', False),
    "every-rank-evaluates": ('''
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(net, device_ids=[rank])
        if dist.is_initialized():
            out = model(x)
        ''', False),
}


@pytest.mark.parametrize("name", FORWARDS)
def test_ddp_forward_shapes(name):
    code, flagged = FORWARDS[name]
    assert lines(FORWARD, code) == marked(code)
    assert bool(marked(code)) == flagged


# Shapes from training scripts in the corpus and public examples (written
# anew): the hang, marked `# hangs`, and the correct twin that must stay quiet.
SCRIPT_SHAPES = {
    "hf-barrier-under-main-ranks": '''
        if args.local_rank in [-1, 0]:
            dataset = build_features(args)
            torch.distributed.barrier()  # hangs
    ''',
    "spawned-worker-gpu-argument": '''
        import torch.multiprocessing as mp

        def main_worker(gpu, ngpus_per_node, args):
            if gpu == 0:
                dist.barrier()  # hangs

        mp.spawn(main_worker, nprocs=2, args=(2, args))
    ''',
    "reduce-helper-called-on-rank-0": '''
        def reduce_dict(stats):
            dist.all_reduce(stats)
            return stats

        if dist.get_rank() == 0:
            print(reduce_dict(stats))  # hangs
    ''',
    "all-gather-object-under-rank": '''
        gathered = [None] * 2
        if torch.distributed.get_rank() == 0:
            torch.distributed.all_gather_object(gathered, preds)  # hangs
    ''',
    "monitored-barrier-on-rank-0": '''
        if dist.get_rank() == 0:
            dist.monitored_barrier()  # hangs
    ''',
    "continue-for-other-ranks": '''
        for step, batch in enumerate(loader):
            if rank != 0:
                continue
            dist.barrier()  # hangs
    ''',
    "rank-greater-than-zero-returns": '''
        def evaluate(model, rank):
            if rank > 0:
                return None
            metrics = compute(model)
            dist.all_reduce(metrics)  # hangs
            return metrics
    ''',
    "helper-defined-from-get-rank": '''
        def get_rank():
            if not dist.is_initialized():
                return 0
            return dist.get_rank()

        def is_main_process():
            return get_rank() == 0

        def save_on_master(state):
            if is_main_process():
                dist.barrier()  # hangs
    ''',
    "lightning-strategy-barrier": '''
        def on_train_end(trainer):
            if trainer.is_global_zero:
                trainer.strategy.barrier()  # hangs
    ''',
    "env-rank-string": '''
        if os.environ["RANK"] == "0":
            dist.barrier()  # hangs
    ''',
    "all-reduce-in-loop-under-rank": '''
        if rank == 0:
            for meter in meters:
                dist.all_reduce(meter)  # hangs
    ''',
    # the correct twins
    "hf-rank-0-first": '''
        def load_and_cache_examples(args):
            if args.local_rank not in [-1, 0]:
                torch.distributed.barrier()
            dataset = build_features(args)
            if args.local_rank == 0:
                torch.distributed.barrier()
            return dataset
    ''',
    "same-collective-in-else": '''
        if rank == 0:
            dist.barrier()
            save()
        else:
            dist.barrier()
    ''',
    "broadcast-object-list-after-branch": '''
        if rank == 0:
            objects = [load_config()]
        else:
            objects = [None]
        dist.broadcast_object_list(objects, src=0)
    ''',
    "distributed-flag-from-env": '''
        ddp = int(os.environ.get("RANK", -1)) != -1
        if ddp:
            dist.barrier()
    ''',
    "world-size-from-env": '''
        if int(os.environ.get("WORLD_SIZE", 1)) > 1:
            dist.all_reduce(loss)
    ''',
    "dist-available-helper": '''
        def is_dist_avail_and_initialized():
            return dist.is_available() and dist.is_initialized()

        if is_dist_avail_and_initialized():
            dist.barrier()
    ''',
    "save-on-rank-0-then-barrier": '''
        def save(rank):
            if rank == 0:
                torch.save(state, "ckpt.pt")
            dist.barrier()
    ''',
}


@pytest.mark.parametrize("name", SCRIPT_SHAPES)
def test_script_shapes(name):
    code = HEADER + textwrap.dedent(SCRIPT_SHAPES[name])
    assert lines(COLLECTIVE, code) == marked(code)


FORWARD_SHAPES = {
    "trainer-class-local-rank-from-env": '''
        class Trainer:
            def __init__(self, model):
                self.gpu_id = int(os.environ["LOCAL_RANK"])
                self.model = DDP(model, device_ids=[self.gpu_id])

            def evaluate(self, x):
                if self.gpu_id == 0:
                    return self.model(x)  # hangs
    ''',
    "keyword-inputs-on-rank-0": '''
        model = DDP(net, device_ids=[rank])
        if rank == 0:
            loss = model(input_ids=x, labels=y).loss  # hangs
    ''',
    "eval-loop-in-train-function": '''
        def train(rank):
            model = DDP(net.to(rank), device_ids=[rank])
            for epoch in range(3):
                if rank == 0:
                    with torch.no_grad():
                        for x, y in val_loader:
                            acc = (model(x).argmax(1) == y).float().mean()  # hangs
    ''',
    "no-grad-on-every-rank": '''
        model = DDP(net, device_ids=[rank])
        with torch.no_grad():
            out = model(x)
        if rank == 0:
            print(out)
    ''',
    "raw-module-kept-aside": '''
        raw = net.to(rank)
        model = DDP(raw, device_ids=[rank])
        if rank == 0:
            raw(x)
    ''',
    "module-under-rank-0": '''
        model = DDP(net, device_ids=[rank])
        if rank == 0:
            out = model.module(x)
    ''',
}


@pytest.mark.parametrize("name", FORWARD_SHAPES)
def test_forward_script_shapes(name):
    code = HEADER + "from torch.nn.parallel import DistributedDataParallel as DDP\n" + textwrap.dedent(
        FORWARD_SHAPES[name])
    assert lines(FORWARD, code) == marked(code)
