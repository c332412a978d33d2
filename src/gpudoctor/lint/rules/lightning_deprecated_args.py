from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.lint.model import FileModel, constant
from gpudoctor.lint.rule import ERROR, Hit, Rule

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
    cooperate is `strategy=`.
    """

    id = "lightning-deprecated-args"
    severity = ERROR  # a certain crash or hang
    message = "Trainer argument removed in Lightning 2.x"
    fix = 'Trainer(accelerator="gpu", devices=2, strategy="ddp")'
    needles = ("lightning",)

    def relevant(self, text: str) -> bool:
        return "lightning" in text and "Trainer" in text  # `Trainer` is named even when aliased

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
        import pytorch_lightning as pl

        trainer = pl.Trainer(gpus=4, distributed_backend="ddp")  # flagged
        ''',
        '''
        from pytorch_lightning import Trainer

        trainer = Trainer(accelerator="ddp", num_processes=2)  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
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
                elif kw.arg == "accelerator" and constant(kw.value, str) in OLD_ACCELERATORS:
                    old.append(f"accelerator={value}")
                    new["strategy"] = value
                    new.setdefault("accelerator", '"gpu"')
            if not old:
                continue
            args = ", ".join(f"{k}={v}" for k, v in sorted(new.items()))
            yield Hit(
                call,
                message=f"Trainer argument{'s' if len(old) > 1 else ''} {', '.join(old)} removed in Lightning 2.x",
                fix=f"Trainer({args})",
            )
