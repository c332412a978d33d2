from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.linter.idioms import loader_arg
from gpudoctor.linter.model import FileModel, constant
from gpudoctor.linter.rule import ERROR, Hit, Rule


class ShuffleWithSampler(Rule):
    """`DataLoader(..., shuffle=True, sampler=...)` raises `ValueError:
    sampler option is mutually exclusive with shuffle` when it is built.

    The sampler decides the order; with a `DistributedSampler`, pass
    `shuffle=True` to the sampler (its default) and leave the DataLoader's
    `shuffle` unset. The same holds for `batch_sampler=`.
    """

    id = "shuffle-with-sampler"
    severity = ERROR  # a certain crash or hang
    message = "DataLoader gets shuffle=True and a sampler: it raises ValueError (they are mutually exclusive)"
    fix = "DataLoader(dataset, sampler=DistributedSampler(dataset, shuffle=True))  # no shuffle= on the loader"
    needles = ("DataLoader",)

    def relevant(self, text: str) -> bool:
        # A loader with a sampler: `sampler=`, `batch_sampler=`, `DistributedSampler`, a variable named so.
        return "DataLoader" in text and "ampler" in text

    VALID = (
        '''
        from torch.utils.data import DataLoader, DistributedSampler

        loader = DataLoader(dataset, batch_size=32, sampler=DistributedSampler(dataset, shuffle=True))
        ''',
        '''
        from torch.utils.data import DataLoader

        loader = DataLoader(dataset, batch_size=32, shuffle=sampler is None, sampler=sampler)
        ''',
        '''
        from torch.utils.data import DataLoader

        loader = DataLoader(dataset, shuffle=True, sampler=None)
        ''',
    )
    INVALID = (
        '''
        from torch.utils.data import DataLoader, DistributedSampler

        sampler = DistributedSampler(dataset)
        loader = DataLoader(dataset, batch_size=32, shuffle=True, sampler=sampler)  # flagged
        ''',
        '''
        import torch

        loader = torch.utils.data.DataLoader(dataset, 32, True, sampler)  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        for call in file.calls_to("DataLoader"):
            if constant(loader_arg(call, "shuffle")) is not True:
                continue
            for name in ("sampler", "batch_sampler"):
                value = loader_arg(call, name)
                if value is not None and not (type(value) is ast.Constant and value.value is None):
                    yield Hit(call, message=f"DataLoader gets shuffle=True and {name}=: it raises ValueError "
                              "(they are mutually exclusive)")
                    break
