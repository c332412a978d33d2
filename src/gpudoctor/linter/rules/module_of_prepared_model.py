from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from gpudoctor.linter.idioms import prepared_model, source
from gpudoctor.linter.model import FileModel, terminal_name
from gpudoctor.linter.rule import Hit, Rule

# A test that asks how the script was launched or whether the model is wrapped: under it `.module` is read where
# the wrapper exists (`if accelerator.num_processes == 1: val_model = model else: val_model = model.module`).
LAUNCH_TEST = re.compile(r"num_processes|distributed_type|use_distributed|world_size|n_?gpus?|device_count|"
                         r"hasattr|isinstance|DistributedDataParallel|\bDDP\b", re.IGNORECASE)


class ModuleOfPreparedModel(Rule):
    """`model.module` of the model `accelerator.prepare(...)` returned: prepare wraps the model in
    DistributedDataParallel only when the launch has several processes. Run in one (a single-GPU
    `accelerate launch`, `python train.py`, a debug run) it hands the model back as it was, which has
    no `.module`, and the line raises AttributeError. `accelerator.unwrap_model(model)` is the bare
    model under every launch.

    Flagged: `.module` read on a name every value of which is the model `accelerator.prepare(...)`
    handed back in this file (the model among what it prepares, not the optimizer, scheduler or loader
    beside it), not under a test of the launch or of the wrapping (`if accelerator.num_processes > 1:`,
    `accelerator.distributed_type`, a world size or GPU count, `hasattr(model, "module")`,
    `isinstance(model, DistributedDataParallel)`), nor inside a `try` that catches AttributeError. One
    diagnostic per file, naming the other lines.

    Asked for by lint heldout23's and heldout24's readers (a DiT trainer's `model.module.state_dict()`
    checkpoint, a validation's `model.module.extract_features(...)`, an audio encoder's
    `audio_encoder.module.encode(...)` in the training step): five such reads in the development
    corpus, every one read so; three under `if accelerator.num_processes == 1: val_model = model else:
    val_model = model.module` were not, and are not flagged. A warning: under the multi-process launch
    the script is written for, it works.
    """

    id = "module-of-prepared-model"
    message = ("`.module` of the model accelerator.prepare returned: under a one-process launch prepare does not "
               "wrap it, and this raises AttributeError")
    fix = "accelerator.unwrap_model(model)  # the bare model under every launch"
    needles = ("prepare(",)

    VALID = (
        '''
        from accelerate import Accelerator

        accelerator = Accelerator()
        model, optimizer = accelerator.prepare(model, optimizer)
        state = accelerator.unwrap_model(model).state_dict()
        ''',
        '''
        from accelerate import Accelerator

        accelerator = Accelerator()
        model, optimizer = accelerator.prepare(model, optimizer)
        val_model = model if accelerator.num_processes == 1 else model.module
        ''',
    )
    INVALID = (
        '''
        from accelerate import Accelerator

        accelerator = Accelerator()
        model, optimizer = accelerator.prepare(model, optimizer)
        state = model.module.state_dict()  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        for node in ast.walk(file.tree):
            if type(node) is not ast.Attribute or node.attr != "module" or type(node.value) is not ast.Name:
                continue
            prepared = prepared_model(file, node.value)
            if prepared is None or _launch_decides(file, node):
                continue
            used = source(file.parent.get(node) or node, 50)
            yield Hit(node, cause=("module of prepared", node.value.id),
                      message=f"`{used}` reads `.module` of the model `{source(prepared.func)}(...)` returned (line "
                      f"{prepared.lineno}): prepare wraps it in DistributedDataParallel only under a multi-process "
                      "launch; under one process the model has no `.module` and this raises AttributeError",
                      fix=f"accelerator.unwrap_model({node.value.id})  # the bare model under every launch")


def _launch_decides(file: FileModel, node: ast.AST) -> bool:
    """A test of the launch or of the wrapping is around `node` (in its function), or a `try` there catches the
    AttributeError."""
    for test in file.conditions(node):
        if LAUNCH_TEST.search(ast.unparse(test)):
            return True
    for up in file.ancestors(node):
        if type(up) is ast.Try and any(
                h.type is None or any(terminal_name(t) in ("AttributeError", "Exception")
                                      for t in ([h.type] if type(h.type) is not ast.Tuple else h.type.elts))
                for h in up.handlers):
            return True
    return False
