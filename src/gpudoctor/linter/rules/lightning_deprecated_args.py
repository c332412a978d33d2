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
# Trainer arguments no other library's `Trainer` takes: they name Lightning's in a snippet without imports.
LIGHTNING_ONLY = {"gpus", "distributed_backend", "tpu_cores", "replace_sampler_ddp", "auto_select_gpus"}
# DDP plugins Lightning 1.7 removed (renamed in 1.5) -> the strategy that replaced each.
PLUGINS = {"DDPPlugin": "DDPStrategy", "DDPSpawnPlugin": "DDPSpawnStrategy", "DDPShardedPlugin": "DDPShardedStrategy",
           "DDPSpawnShardedPlugin": "DDPSpawnShardedStrategy"}
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

    A snippet that calls a `Trainer` it never imports nor defines is read as
    Lightning's where the call has an argument only Lightning's Trainer ever
    took (`gpus=`, `distributed_backend=`, `tpu_cores=`, `replace_sampler_ddp=`,
    `auto_select_gpus=`; Hugging Face's Trainer takes none of them): a help
    thread pastes the Trainer line, not its imports.

    And the DDP plugins Lightning 1.5 renamed to strategies and 1.7 removed (`plugins=DDPPlugin(...)`,
    `DDPSpawnPlugin`, `DDPShardedPlugin`, `DDPSpawnShardedPlugin`): imported from
    Lightning, or unimported inside a Trainer's `plugins=`. They are strategies
    now (`strategy=DDPStrategy(find_unused_parameters=False)`).
    """

    id = "lightning-deprecated-args"
    # A crash on Lightning 2.x, but a project may pin 1.x: a warning.
    message = "Trainer argument removed in Lightning 2.x"
    fix = 'Trainer(accelerator="gpu", devices=2, strategy="ddp")'
    needles = ("lightning", "pl.Trainer")

    def relevant(self, text: str) -> bool:
        # `Trainer` is named even when aliased; `pl.Trainer(...)` in a snippet that left out
        # `import pytorch_lightning as pl` is read with that import assumed
        return ("lightning" in text and ("Trainer" in text or "Plugin" in text)) or "pl.Trainer" in text or (
            "plugins=DDP" in text) or (
            "Trainer(" in text and any(f"{arg}=" in text for arg in LIGHTNING_ONLY))

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
        yield from self._plugins(file)
        for call in [*file.calls_to("Trainer", LIGHTNING), *self._unimported_trainers(file)]:
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
                message=f"Trainer argument{'s' if len(old) > 1 else ''} {', '.join(old)} removed in Lightning 2.x"
                + (" (read as Lightning's Trainer: the file does not import it, and no other library's Trainer "
                   "takes these arguments)" if file.qualname(call.func) is None else ""),
                fix=f"Trainer({args})",
            )

    @staticmethod
    def _plugins(file: FileModel) -> Iterator[Hit]:
        """A removed DDP plugin built: imported from Lightning, or unimported inside a
        Lightning-looking Trainer's `plugins=` (a snippet that left its imports out)."""
        for call in file.calls:
            name = terminal_name(call.func)
            if name not in PLUGINS:
                continue
            qualname = file.qualname(call.func)
            if qualname is not None and not qualname.startswith(LIGHTNING):
                continue
            if qualname is None and not any(
                    type(anc) is ast.keyword and anc.arg == "plugins" for anc in file.ancestors(call)):
                continue
            args = ", ".join(ast.unparse(a) for a in [*call.args, *call.keywords])
            yield Hit(call, message=f"{name} was renamed to a strategy in Lightning 1.5 and removed in 1.7 "
                      "(ImportError)",
                      fix=f"Trainer(strategy={PLUGINS[name]}({args}))  # from lightning.pytorch.strategies")

    @staticmethod
    def _unimported_trainers(file: FileModel) -> list[ast.Call]:
        """`Trainer(gpus=4, ...)` in a snippet that neither imports nor defines
        `Trainer`, given an argument only Lightning's Trainer ever took."""
        return [call for call in file.calls
                if type(call.func) is ast.Name and call.func.id == "Trainer" and "Trainer" not in file.imports
                and "Trainer" not in file.relative_imports and not file.star_imports
                and not file.defines("Trainer") and any(kw.arg in LIGHTNING_ONLY for kw in call.keywords)]

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
