"""Controls and siblings for lintA9 (issue 41): the model-and-wrapper rules and the
rank-to-device rules on the sample's user scripts. Each widening's control is the
healthy program nearest to the new shape; each narrowing's sibling keeps the true
positive nearest to what it quiets. Real code, linted by the real engine."""

from __future__ import annotations

import textwrap

from gpudoctor.linter import engine


def found(text: str, rule: str) -> list[tuple[int, str]]:
    """(line, severity) of each diagnostic of `rule` on the raw text."""
    return [(d.line, d.severity) for d in engine.lint_source(text, "train.py") if d.rule == rule]


def messages(text: str, rule: str) -> list[str]:
    return [d.message for d in engine.lint_source(text, "train.py") if d.rule == rule]


def code(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


class TestDataparallel:
    """The functional form, `nn.parallel.data_parallel`, is the same single-process scheme."""

    rule = "dataparallel"

    def test_control_a_project_function_named_data_parallel_is_not_torchs(self):
        text = code("""
            def data_parallel(model, batch):
                return model(batch)

            out = data_parallel(model, batch)
        """)
        assert found(text, self.rule) == []

    def test_control_an_unimported_data_parallel_without_torchs_keywords_is_not_read_as_torchs(self):
        assert found("out = data_parallel(model, batch)\n", self.rule) == []

    def test_sibling_nn_parallel_data_parallel_is_flagged(self):
        # heldout3 m068: a speech model's CNN run through the functional form
        text = code("""
            import torch
            import torch.nn as nn

            x = nn.parallel.data_parallel(self.cnn, x, range(torch.cuda.device_count()))
        """)
        assert found(text, self.rule) == [(4, "warning")]

    def test_sibling_an_unimported_data_parallel_with_torchs_keywords_says_how_it_was_read(self):
        # heldout7 t002
        text = "pred = data_parallel(model, inputs=(src, lengths), device_ids=[0, 1, 2])\n"
        assert found(text, self.rule) == [(1, "warning")]
        assert "from torch.nn.parallel import data_parallel" in messages(text, self.rule)[0]


class TestDataparallelUnwrappedAtOnce:
    """`model = nn.DataParallel(model)` then `model = model.module`: the only name
    that held the wrapper is rebound (heldout6 s001)."""

    rule = "dataparallel-unwrapped-at-once"

    def test_control_the_wrapper_kept_under_another_name(self):
        # heldout4 q028's replacement lines: para_model keeps the wrapper and trains through it
        text = code("""
            import torch

            self.para_model = torch.nn.DataParallel(self.model)
            self.model = self.para_model.module
            self.train_epoch(self.para_model, loader)
        """)
        assert found(text, self.rule) == []

    def test_control_unwrapped_after_the_wrapper_ran(self):
        text = code("""
            import torch

            model = torch.nn.DataParallel(model)
            loss = model(x).sum()
            model = model.module
        """)
        assert found(text, self.rule) == []

    def test_sibling_rebound_to_module_on_the_next_statement(self):
        text = code("""
            import torch

            model = torch.nn.DataParallel(model, device_ids=list(range(torch.cuda.device_count())))
            model = model.module
        """)
        assert found(text, self.rule) == [(4, "warning")]

    def test_sibling_taken_apart_on_the_same_line_keeps_its_words(self):
        text = "import torch\n\nmodel = torch.nn.DataParallel(model).module\n"
        assert found(text, self.rule) == [(3, "warning")]
        assert "built and discarded at once" in messages(text, self.rule)[0]


class TestSaveDdpWrapper:
    """The file saves `model.module.state_dict()` and, on the same path, `model.state_dict()`
    (heldout7 t016, t029): a warning, the wrapping is not in view."""

    rule = "save-ddp-wrapper"

    def test_control_the_two_saves_in_the_arms_of_a_test(self):
        text = code("""
            import torch

            if args.distributed:
                torch.save(model.module.state_dict(), path)
            else:
                torch.save(model.state_dict(), path)
        """)
        assert found(text, self.rule) == []

    def test_control_module_saved_only_under_a_hasattr_test(self):
        text = code("""
            import torch

            def save(model, path):
                if hasattr(model, "module"):
                    torch.save(model.module.state_dict(), path)
                    return
                torch.save(model.state_dict(), path)
        """)
        assert found(text, self.rule) == []

    def test_control_two_different_models(self):
        text = code("""
            import torch

            torch.save(generator.module.state_dict(), "g.pt")
            torch.save(ema.state_dict(), "ema.pt")
        """)
        assert found(text, self.rule) == []

    def test_sibling_the_same_name_saved_both_ways(self):
        text = code("""
            import torch

            torch.save(model.module.state_dict(), path)
            torch.save(model.state_dict(), path)
        """)
        assert found(text, self.rule) == [(4, "warning")]
        assert "lint cannot see where model is wrapped" in messages(text, self.rule)[0]

    def test_sibling_a_wrapper_in_view_stays_as_it_was(self):
        text = code("""
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            model = DDP(net, device_ids=[local_rank])
            torch.save(model.state_dict(), "ckpt.pt")
        """)
        assert found(text, self.rule) == [(5, "warning")]


class TestWrapperMethodCall:
    """Reads of one wrapper's attributes on consecutive statements are one mistake
    (heldout5 r043: roi_heads, then backbone)."""

    rule = "wrapper-method-call"

    def test_control_the_unwrapped_name_reads_the_model(self):
        text = code("""
            actual_model = model.module if args.distributed else model
            actual_model.roi_heads.train()
            actual_model.backbone.eval()
        """)
        assert found(text, self.rule) == []

    def test_sibling_consecutive_reads_are_said_once_naming_both(self):
        text = code("""
            from torch.nn.parallel import DistributedDataParallel as DDP

            model = DDP(net.cuda(), device_ids=[rank])
            model.roi_heads.train()
            model.backbone.eval()
        """)
        assert found(text, self.rule) == [(4, "error")]
        assert "`roi_heads`, `backbone`" in messages(text, self.rule)[0]

    def test_sibling_reads_apart_in_one_function_are_one_cause_naming_the_other_line(self):
        # one wrapper, one fix: since lint heldout15 (u016: five errors for one `net = DDP(net)`) reads apart in
        # one function are said once, naming the other line; reads in another function are said there
        # (tests/test_lint_one_per_cause.py)
        text = code("""
            from torch.nn.parallel import DistributedDataParallel as DDP

            model = DDP(net.cuda(), device_ids=[rank])
            model.roi_heads.train()
            step()
            model.backbone.eval()
        """)
        assert found(text, self.rule) == [(4, "error")]
        assert "(the same wrapper at line 6)" in messages(text, self.rule)[0]


class TestWrapperMethodCallThroughProjectClasses:
    """Issue 41 item 3: the value followed to a class of the file."""

    verdict = "wrapper-method-call"

    def test_control_the_class_wraps_only_on_one_path(self):
        text = code("""
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Trainer:
                def __init__(self, net, rank, distributed):
                    self.model = net
                    if distributed:
                        self.model = DDP(net, device_ids=[rank])

            trainer = Trainer(net, rank, False)
            z = trainer.model.encode(x)
        """)
        assert found(text, "wrapper-method-call") == []

    def test_control_a_subclass_that_forwards_attributes(self):
        text = code("""
            from torch.nn.parallel import DistributedDataParallel

            class ForwardingDDP(DistributedDataParallel):
                def __getattr__(self, name):
                    try:
                        return super().__getattr__(name)
                    except AttributeError:
                        return getattr(self.module, name)

            model = ForwardingDDP(net, device_ids=[rank])
            z = model.encode(x)
        """)
        assert found(text, "wrapper-method-call") == []

    def test_control_a_subclass_with_a_mixin_that_may_define_it(self):
        text = code("""
            from torch.nn.parallel import DistributedDataParallel
            from project.mixins import EncodeMixin

            class MyDDP(EncodeMixin, DistributedDataParallel):
                pass

            model = MyDDP(net, device_ids=[rank])
            z = model.encode(x)
        """)
        assert found(text, "wrapper-method-call") == []

    def test_sibling_an_instance_attribute_set_to_the_wrapper_in_init(self):
        text = code("""
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Trainer:
                def __init__(self, net, rank):
                    self.model = DDP(net.to(rank), device_ids=[rank])

            trainer = Trainer(net, rank)
            z = trainer.model.encode(x)
        """)
        assert found(text, "wrapper-method-call") == [(8, "error")]

    def test_sibling_a_plain_subclass_of_ddp(self):
        text = code("""
            from torch.nn.parallel import DistributedDataParallel

            class MyDDP(DistributedDataParallel):
                pass

            model = MyDDP(net, device_ids=[rank])
            z = model.encode(x)
        """)
        assert found(text, "wrapper-method-call") == [(7, "error")]


class TestDeviceFromGlobalRank:
    """One node by construction (world_size is the machine's GPU count): the global rank
    is the local rank."""

    rule = "device-from-global-rank"

    def test_control_world_size_is_the_gpu_count(self):
        text = code("""
            import torch
            import torch.distributed as dist

            world_size = torch.cuda.device_count()
            dist.init_process_group("nccl", init_method="tcp://127.0.0.1:23456", rank=rank, world_size=world_size)
            torch.cuda.set_device(dist.get_rank())
        """)
        assert found(text, self.rule) == []

    def test_control_rank_modulo_a_gpu_count_named_world_size(self):
        text = code("""
            import torch
            import torch.distributed as dist

            world_size = torch.cuda.device_count()
            model = Net().to(dist.get_rank() % world_size)
        """)
        assert found(text, self.rule) == []

    def test_sibling_world_size_from_the_environment_is_flagged(self):
        text = code("""
            import os
            import torch
            import torch.distributed as dist

            dist.init_process_group("nccl", world_size=int(os.environ["WORLD_SIZE"]))
            torch.cuda.set_device(dist.get_rank())
        """)
        assert found(text, self.rule) == [(6, "warning")]

    def test_sibling_rank_modulo_the_jobs_world_size_is_the_rank_itself(self):
        # dev4 k089
        text = code("""
            import torch.distributed as dist

            world_size = dist.get_world_size()
            model = Net().to(dist.get_rank() % world_size)
        """)
        assert found(text, self.rule) == [(4, "warning")]
