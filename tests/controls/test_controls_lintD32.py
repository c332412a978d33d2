"""Controls and siblings for lintD32 (issue 41, items 2 and 4: an error is certain). An error only where the crash
or hang is certain on the path the script runs: the line is reached from the module's entry (`FileModel.unreached`),
and the launch the script is written for (an argparse flag's default, the launcher it documents) takes the branch.
Each program is the shape of a retired lint script (source in the comment above it), cut to a few lines and linted
by the real engine."""

from __future__ import annotations

import ast
import textwrap

from gpudoctor.linter import engine
from gpudoctor.linter.fragment import excerpt_evidence
from gpudoctor.linter.model import FileModel


def lint(code: str, rule: str) -> list:
    return [d for d in engine.lint_source(textwrap.dedent(code).lstrip("\n"), "train.py") if d.rule == rule]


def found(code: str, rule: str) -> list[tuple[int, str]]:
    """(line, severity) of each diagnostic of `rule`."""
    return [(d.line, d.severity) for d in lint(code, rule)]


def line_of(code: str, marker: str) -> int:
    """The line (1-based, as linted) that holds `marker`."""
    lines = textwrap.dedent(code).lstrip("\n").split("\n")
    return next(i for i, line in enumerate(lines, 1) if marker in line)


def model_of(code: str) -> FileModel:
    text = textwrap.dedent(code).lstrip("\n")
    return FileModel(ast.parse(text), text)


# lint heldout30 u005 (AkuSax/exhale-prediction-cvae train_vae.py): a torchrun VAE trainer that builds VAE3D (defined
# nowhere: NameError at start-up on every rank) and keeps an unused VAE2D whose __init__ reads resnet18, never
# imported; the only mention of VAE2D outside its `class` line is `super(VAE2D, self).__init__()` in its own body
VAE_TRAINER = """
    import os
    import torch
    import torch.nn as nn
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    class VAE2D(nn.Module):
        def __init__(self, latent_dim):
            super(VAE2D, self).__init__()
            resnet = resnet18(weights=None)  # unreached read
            self.encoder = nn.Sequential(*list(resnet.children())[:-1])

    def main():
        dist.init_process_group("nccl")
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        model = BUILT(latent_dim=8).to(local_rank)  # built here
        model = DDP(model, device_ids=[local_rank])

    if __name__ == "__main__":
        main()
"""


# a trainer whose old entry point is kept beside the new one: `evaluate` is called only by `legacy_train`, which
# nothing the file runs calls
LEGACY_PATH = """
    import os
    import torch
    import torch.distributed as dist

    def evaluate(model, loader):
        for batch in loader:
            out = model(batch.to(device))  # the read
        return out

    def legacy_train(model, loader):
        evaluate(model, loader)

    def train(model, loader):
        CALL

    def main():
        dist.init_process_group("nccl")
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        train(torch.nn.Linear(2, 2), [])

    if __name__ == "__main__":
        main()
"""


class TestUndefinedNameReachedFromTheEntry:
    """undefined-name: an error only where the read is reached from the module's entry; a read that only code the
    file never runs reaches (or nothing names: a class named only in its own body, `super(Cls, self)`) is a warning
    that says when it would fail."""

    rule = "undefined-name"

    def test_control_the_class_built_from_main_keeps_the_error(self):
        # VAE2D is what main builds: its __init__ runs on every rank, resnet18 raises there
        code = VAE_TRAINER.replace("BUILT", "VAE2D")
        assert found(code, self.rule) == [(line_of(code, "unreached read"), "error")]

    def test_sibling_the_class_named_only_in_its_own_super_call_runs_nothing(self):
        # lint heldout30 u005: VAE3D (built, defined nowhere) is the error; VAE2D's resnet18 is never reached: a
        # warning that says when it would fail
        code = VAE_TRAINER.replace("BUILT", "VAE3D")
        said = lint(code, self.rule)
        assert [(d.line, d.severity) for d in said] == [(line_of(code, "unreached read"), "warning"),
                                                       (line_of(code, "built here"), "error")]
        assert "only when `VAE2D` is built" in said[0].message

    def test_control_a_function_main_reaches_keeps_the_error(self):
        code = LEGACY_PATH.replace("CALL", "evaluate(model, loader)")
        assert found(code, self.rule) == [(line_of(code, "the read"), "error")]

    def test_sibling_a_function_only_dead_code_calls_is_a_warning_that_says_when(self):
        code = LEGACY_PATH.replace("CALL", "model.train()")
        said = lint(code, self.rule)
        assert [(d.line, d.severity) for d in said] == [(line_of(code, "the read"), "warning")]
        assert "legacy_train" in said[0].message and "evaluate()" in said[0].message

    def test_the_fact_reaches_through_spawn_and_registries(self):
        code = """
            import torch.multiprocessing as mp

            REGISTRY = {}

            def register(fn):
                REGISTRY[fn.__name__] = fn
                return fn

            @register
            def plugin():
                return 1

            def worker(rank):
                helper(rank)

            def helper(rank):
                return rank

            def dead():
                return helper(0)

            if __name__ == "__main__":
                mp.spawn(worker, nprocs=2)
        """
        model = model_of(code)
        defs = {n.name: n for n in ast.walk(model.tree) if isinstance(n, ast.FunctionDef)}
        assert model.unreached(defs["worker"].body[0]) is None
        assert model.unreached(defs["helper"].body[0]) is None
        assert model.unreached(defs["plugin"].body[0]) is None  # a decorator may register it
        assert "dead()" in model.unreached(defs["dead"].body[0]).words

    def test_control_a_library_module_has_no_entry_and_decides_nothing(self):
        code = """
            import torch

            def build(cfg):
                return torch.nn.Linear(cfg.n, cfg.n)
        """
        model = model_of(code)
        func = next(n for n in ast.walk(model.tree) if isinstance(n, ast.FunctionDef))
        assert model.unreached(func.body[0]) is None


# rank-hardcoded in a function nothing the file runs calls: the hang needs the call
OLD_SETUP = """
    import os
    import torch.distributed as dist

    def old_setup():
        dist.init_process_group("nccl", init_method="env://", rank=0, world_size=4)  # the pin

    def setup():
        dist.init_process_group("nccl")

    def main():
        SETUP()

    if __name__ == "__main__":
        main()
"""


class TestErrorsInCodeTheScriptNeverRuns:
    """The engine: an error of any rule at a line the module's entry never reaches is a warning that says when it
    would fail (the rule's evidence decides the failure, not whether the line runs)."""

    rule = "rank-hardcoded"

    def test_control_the_setup_main_calls_keeps_the_error(self):
        code = OLD_SETUP.replace("SETUP", "old_setup")
        assert found(code, self.rule) == [(line_of(code, "the pin"), "error")]

    def test_sibling_the_setup_nothing_calls_is_a_warning(self):
        code = OLD_SETUP.replace("SETUP", "setup")
        said = lint(code, self.rule)
        assert [(d.line, d.severity) for d in said] == [(line_of(code, "the pin"), "warning")]
        assert "old_setup()" in said[0].message


# lint heldout30b u032 (LaViLa main_pretrain.py) and u034 (iBOT main_pretrain.py), extracts: the main block builds its
# parser from `parents=[get_args_parser()]`, whose definition (every add_argument of the script) the extract left out
PARENTS_PARSER = """
    import argparse
    import os
    import torch
    import utils

    def train(args):
        utils.init_distributed_mode(args)
        transform = DataAugmentation(args.global_crops_scale, args.local_crops_scale)
        model = torch.nn.Linear(2, 2)

    if __name__ == "__main__":
        parser = argparse.ArgumentParser("VisionFM", parents=[get_args_parser()])
        ARGUMENT
        args = parser.parse_args()
        train(args)
"""


class TestExcerptByItsParentParser:
    """fragment: a parser built only from `parents=[builder()]`, the builder defined nowhere and no argument added
    anywhere in the file: the builder (the script's options) was left out, so the file reads as an excerpt."""

    rule = "undefined-name"

    def test_sibling_parent_parser_left_out(self):
        code = PARENTS_PARSER.replace("ARGUMENT", "pass")
        assert excerpt_evidence(model_of(code)) is not None
        assert found(code, self.rule) == []

    def test_control_an_argument_added_here_keeps_the_file_whole(self):
        code = PARENTS_PARSER.replace("ARGUMENT", 'parser.add_argument("--seed", type=int, default=0)')
        assert excerpt_evidence(model_of(code)) is None
        # (DataAugmentation and get_args_parser: two names read from nowhere, each an error where it is read)
        assert [s for _, s in found(code, self.rule)] == ["error", "error"]


# lint heldout30b u036 (BIT-Vision/EventPretrain main_pretrain.py): MAE's misc helpers, DDP under `args.distributed`,
# init_process_group imported and never called, the mp.spawn launcher commented out
DISTRIBUTED_FLAG = """
    import argparse
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.distributed import init_process_group
    import utils.misc as misc
    from models import build_model

    def main(args):
        global_rank = misc.get_rank()
        model = build_model(args)
        INIT
        if args.distributed:
            model = DDP(model, device_ids=[args.gpu])  # the wrap
        print(misc.get_world_size())

    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--distributed", OPTION)
        args = parser.parse_args()
        # mp.spawn(main, args=(args,), nprocs=2)
        main(args)
"""


def distributed_flag(option: str, init: str = "pass") -> str:
    return DISTRIBUTED_FLAG.replace("OPTION", option).replace("INIT", init)


class TestDistWithoutInitUnderTheScriptsFlag:
    """dist-without-init: DDP built under the script's own `--distributed` flag in a file that starts no group
    anywhere (a getter of another module, `misc.get_rank()`, starts none): an error where the flag's default takes
    the branch, a warning that names the flag where it does not."""

    rule = "dist-without-init"

    def test_sibling_default_off_is_a_warning_naming_the_flag(self):
        code = distributed_flag('default=False, type=bool')
        said = lint(code, self.rule)
        assert [(d.line, d.severity) for d in said] == [(line_of(code, "the wrap"), "warning")]
        assert "--distributed" in said[0].message

    def test_sibling_default_on_is_an_error(self):
        code = distributed_flag('default=True, type=bool')
        assert found(code, self.rule) == [(line_of(code, "the wrap"), "error")]

    def test_control_a_group_started_under_the_flag(self):
        code = distributed_flag('action="store_true"', 'if args.distributed:\n            init_process_group("nccl")')
        assert found(code, self.rule) == []

    def test_control_a_setup_helper_of_another_module_is_believed(self):
        code = distributed_flag('default=True, type=bool', "misc.init_distributed_mode(args)")
        assert found(code, self.rule) == []


# lint heldout30 u016 (CJHGray/ACGG train_diffusion.py): the group started at import with rank=0 and the launcher's
# WORLD_SIZE, in a script that takes the launcher's --local_rank
LAUNCHER_WORLD = """
    import argparse
    import os
    import torch.distributed as dist

    os.environ["MASTER_ADDR"] = "localhost"
    dist.init_process_group(backend="nccl", init_method="env://", rank=0,
                            world_size=int(os.environ["WORLD_SIZE"]) if "WORLD_SIZE" in os.environ else 1)

    def main():
        parser = argparse.ArgumentParser()
        FLAG
        args = parser.parse_args()
        dist.barrier()

    if __name__ == "__main__":
        main()
"""

# lint heldout30b u041 (solo-learn main_pretrain.py): the ffcv validation loader's group, under the strategy test
MODE_TEST = """
    import argparse
    import torch

    def main(args):
        if TEST:
            torch.distributed.init_process_group("nccl", rank=0, world_size=SIZE)  # the pin
            torch.cuda.set_device(0)

    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--distributed", OPTION)
        parser.add_argument("--devices", nargs="+", type=int, default=[0, 1])
        main(parser.parse_args())
"""


def mode_test(test: str, size: str = "len(args.devices)", option: str = 'action="store_true"') -> str:
    return MODE_TEST.replace("TEST", test).replace("SIZE", size).replace("OPTION", option)


class TestRankHardcodedUnderTheLaunchItIsWrittenFor:
    """rank-hardcoded: a literal rank with the launcher's WORLD_SIZE in a file written for that launcher (it takes
    --local_rank) fails whenever the launch starts several processes: an error; a literal rank under a test of the
    mode (not a branch per rank: the file's one init_process_group) with one process per device: an error where the
    flag's default takes it, a warning naming the test where it does not."""

    rule = "rank-hardcoded"

    def test_sibling_launcher_world_with_local_rank_flag_is_an_error(self):
        code = LAUNCHER_WORLD.replace("FLAG", 'parser.add_argument("--local_rank", default=0, type=int)')
        assert [s for _, s in found(code, self.rule)] == ["error"]

    def test_control_launcher_world_without_a_launch_stays_a_warning(self):
        code = LAUNCHER_WORLD.replace("FLAG", 'parser.add_argument("--config", default="c.yml")')
        assert [s for _, s in found(code, self.rule)] == ["warning"]

    def test_sibling_mode_test_with_default_off_is_a_warning(self):
        code = mode_test("args.distributed")
        said = lint(code, self.rule)
        assert [(d.line, d.severity) for d in said] == [(line_of(code, "the pin"), "warning")]
        assert "args.distributed" in said[0].message

    def test_sibling_mode_test_of_a_config_is_a_warning(self):
        code = mode_test('args.strategy == "ddp"')
        assert found(code, self.rule) == [(line_of(code, "the pin"), "warning")]

    def test_sibling_mode_test_with_default_on_is_an_error(self):
        code = mode_test("args.distributed", option="default=True, type=bool")
        assert found(code, self.rule) == [(line_of(code, "the pin"), "error")]

    def test_control_a_world_of_one_under_the_mode_test(self):
        code = mode_test("args.distributed", size="1")
        assert found(code, self.rule) == []
