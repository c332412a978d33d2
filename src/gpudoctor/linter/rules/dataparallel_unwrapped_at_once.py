from __future__ import annotations

from collections.abc import Iterator

import ast

from gpudoctor.linter.idioms import TORCH
from gpudoctor.linter.model import FileModel
from gpudoctor.linter.rule import Hit, Rule

WRAPPERS = ("DataParallel", "DistributedDataParallel")


class DataparallelUnwrappedAtOnce(Rule):
    """`model = nn.DataParallel(model).module`: the wrapper is built and
    thrown away on the same line, since `.module` is the model that went in.
    What is kept runs on one GPU, with nothing split across the others, and
    nothing says so: training is just as slow as without the wrapper (with
    `DistributedDataParallel(...).module`, each rank trains alone and the
    gradients are never averaged).

    Keep the wrapper for training (`model = nn.DataParallel(model)`) and
    read `.module` only where the bare model is needed (saving its
    `state_dict`, calling its own methods). A warning: the line is certain,
    but a later line may wrap the model again (issue 41's heldout4 found
    both: an event-camera trainer that kept only the bare model, and a
    detection trainer that wrapped it again two lines below).
    """

    id = "dataparallel-unwrapped-at-once"
    message = "the DataParallel wrapper is built and discarded at once (`.module`): the model that is kept runs on one GPU"
    fix = "model = nn.DataParallel(model)  # keep the wrapper; read model.module only to save or call its own methods"
    needles = ("DataParallel",)

    VALID = (
        '''
        import torch.nn as nn

        model = nn.DataParallel(model)
        torch.save(model.module.state_dict(), "ckpt.pt")
        ''',
        '''
        import torch.nn as nn

        wrapped = nn.DataParallel(model)
        bare = wrapped.module
        ''',
    )
    INVALID = (
        '''
        import torch

        model = torch.nn.DataParallel(model, device_ids=[0, 1]).module  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        for node in ast.walk(file.tree):
            if type(node) is not ast.Attribute or node.attr != "module" or type(node.value) is not ast.Call:
                continue
            call = node.value
            wrapper = next((w for w in WRAPPERS if file.is_call_to(call, w, TORCH)), None)
            if wrapper is None:
                continue
            if wrapper == "DistributedDataParallel":
                yield Hit(node, message="the DistributedDataParallel wrapper is built and discarded at once "
                          "(`.module`): the model that is kept trains alone on each rank, its gradients never "
                          "averaged", fix="model = DistributedDataParallel(model, device_ids=[local_rank])  "
                          "# keep the wrapper for training")
            else:
                yield Hit(node)
