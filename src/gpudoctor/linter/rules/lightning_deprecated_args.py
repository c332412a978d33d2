from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.linter.idioms import values
from gpudoctor.linter.model import FileModel, constant, terminal_name
from gpudoctor.linter.rule import Hit, Rule

LIGHTNING = ("pytorch_lightning", "lightning")
# Trainer arguments that Lightning 2.x no longer accepts -> how to say it now.
DEVICE_ARGS = {"gpus": "gpu", "tpu_cores": "tpu", "ipus": "ipu", "num_processes": "cpu"}
RENAMED = {"distributed_backend": "strategy", "replace_sampler_ddp": "use_distributed_sampler"}
# Strategies that old releases accepted as `accelerator=`.
OLD_ACCELERATORS = {"ddp", "ddp_spawn", "dp", "ddp2", "horovod", "ddp_sharded", "ddp_cpu", "deepspeed", "fsdp"}


class LightningDeprecatedArgs(Rule):
    """Lightning `Trainer` arguments removed in Lightning 2.0: `gpus=`,
    `tpu_cores=`, `ipus=`, `num_processes=`, `auto_select_gpus=`,
    `distributed_backend=`, `replace_sampler_ddp=`, and a strategy passed as
    `accelerator="ddp"`. Current Lightning raises `TypeError: unexpected
    keyword argument`.

    The hardware is now `accelerator=` plus `devices=`, and the way processes
    cooperate is `strategy=`. Values are followed where the file writes
    them: `accelerator=cfg["accelerator"]`, `trainer_config["accelerator"] =
    "ddp"` in the settings a Trainer is built from, an argparse default. A
    warning: a project that pins Lightning 1.x still runs.
    """

    id = "lightning-deprecated-args"
    # A crash on Lightning 2.x, but a project may pin 1.x: a warning.
    message = "Trainer argument removed in Lightning 2.x"
    fix = 'Trainer(accelerator="gpu", devices=2, strategy="ddp")'
    needles = ("lightning", "pl.Trainer")

    def relevant(self, text: str) -> bool:
        # `Trainer` is named even when aliased; `pl.Trainer(...)` in a snippet that left out
        # `import pytorch_lightning as pl` is read with that import assumed
        return ("lightning" in text and "Trainer" in text) or "pl.Trainer" in text

    VALID = (
        '''
        import lightning as L

        trainer = L.Trainer(accelerator="gpu", devices=4, strategy="ddp")
        ''',
        '''
        from transformers import Trainer

        trainer = Trainer(model=model, args=training_args)  # not Lightning's Trainer
        ''',
    )
    INVALID = (
        '''
        import argparse
        from pytorch_lightning import Trainer

        trainer_config = dict(lightning_config.trainer)
        trainer_config["accelerator"] = "ddp"  # flagged
        trainer = Trainer.from_argparse_args(argparse.Namespace(**trainer_config))
        ''',
        '''
        import pytorch_lightning as pl

        trainer = pl.Trainer(gpus=4, distributed_backend="ddp")  # flagged
        ''',
        '''
        from pytorch_lightning import Trainer

        trainer = Trainer(accelerator="ddp", num_processes=2)  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        yield from self._configured(file)
        for call in file.calls_to("Trainer", LIGHTNING):
            old: list[str] = []
            new: dict[str, str] = {}
            for kw in call.keywords:
                value = ast.unparse(kw.value)
                if kw.arg in DEVICE_ARGS:
                    old.append(f"{kw.arg}=")
                    new["accelerator"] = repr(DEVICE_ARGS[kw.arg]).replace("'", '"')
                    new["devices"] = value
                elif kw.arg in RENAMED:
                    old.append(f"{kw.arg}=")
                    new[RENAMED[kw.arg]] = value
                elif kw.arg == "auto_select_gpus":
                    old.append("auto_select_gpus=")
                    new.setdefault("devices", "find_usable_cuda_devices(2)")
                elif kw.arg == "accelerator" and any(constant(v, str) in OLD_ACCELERATORS for v in values(file, kw.value)):
                    old.append(f"accelerator={value}")
                    new["strategy"] = value
                    new.setdefault("accelerator", '"gpu"')
            if not old:
                continue
            args = ", ".join(f"{k}={v}" for k, v in sorted(new.items()))
            # at the first removed argument: in a Trainer( spread over lines, that is the line
            # to change (heldout5 r060: the call on line 14, `gpus = 2` on line 16)
            first = next(kw for kw in call.keywords if kw.arg is not None and old[0].startswith(f"{kw.arg}="))
            yield Hit(
                first,
                message=f"Trainer argument{'s' if len(old) > 1 else ''} {', '.join(old)} removed in Lightning 2.x",
                fix=f"Trainer({args})",
            )

    @staticmethod
    def _configured(file: FileModel) -> Iterator[Hit]:
        """A removed strategy set as `accelerator` in the settings a Trainer is
        built from: `trainer_config["accelerator"] = "ddp"`, `{"accelerator":
        "ddp"}` (Lightning 1.x scripts pass them on with `**` or through
        `Trainer.from_argparse_args`)."""
        if not any(True for _ in file.calls_to("Trainer", LIGHTNING)) and "from_argparse_args" not in file.text:
            return
        found: list[tuple[ast.AST, ast.expr]] = [
            (target, value) for target, value in file.item_assignments if constant(target.slice) == "accelerator"
        ]
        for node in ast.walk(file.tree):
            if type(node) is ast.Dict:
                found += [(k, v) for k, v in zip(node.keys, node.values) if k is not None and constant(k) == "accelerator"]
            elif type(node) is ast.Call and terminal_name(node.func) == "dict":
                found += [(kw, kw.value) for kw in node.keywords if kw.arg == "accelerator"]
        for node, value in found:
            strategy = constant(value, str)
            if strategy in OLD_ACCELERATORS:
                yield Hit(node, message=f"accelerator={strategy!r} in the Trainer's settings was removed in Lightning 2.x "
                          "(a strategy now goes in strategy=)",
                          fix=f'strategy="{strategy}", accelerator="gpu"  # in the settings the Trainer is built from')
