from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.linter.idioms import loader_arg
from gpudoctor.linter.model import FileModel, terminal_name
from gpudoctor.linter.rule import ERROR, Hit, Rule


class SamplerPassedAsShuffle(Rule):
    """`DataLoader(dataset, shuffle=sampler)` where `sampler` is a
    `DistributedSampler`: the sampler is read as a true flag, so the loader
    builds its own `RandomSampler` over the whole dataset and the distributed
    sampler is never used. Every rank trains on all of the data, in its own
    random order, and nothing raises.

    Pass it as `sampler=sampler` (and leave `shuffle` unset, or
    `shuffle=(sampler is None)`). Flagged where the name given as `shuffle`
    is bound, on some path, to a sampler's constructor and no `sampler=` /
    `batch_sampler=` is given. Asked for by issue 41's heldout3 (an ESPnet
    training loop: `shuffle=sampler` with the sampler built only when
    `args.distributed`).
    """

    id = "sampler-passed-as-shuffle"
    severity = ERROR
    local_evidence = True  # decided by the flagged call and the lines shown: stands in a faithful repair
    message = "a sampler is passed as shuffle=: the loader shuffles the whole dataset and never uses the sampler"
    fix = "DataLoader(dataset, sampler=sampler, shuffle=(sampler is None))"
    needles = ("DataLoader",)

    def relevant(self, text: str) -> bool:
        return "DataLoader" in text and "Sampler" in text

    VALID = (
        '''
        from torch.utils.data import DataLoader, DistributedSampler

        sampler = DistributedSampler(dataset) if distributed else None
        loader = DataLoader(dataset, shuffle=(sampler is None), sampler=sampler)
        ''',
    )
    INVALID = (
        '''
        import torch

        if args.distributed:
            sampler = torch.utils.data.distributed.DistributedSampler(train_dataset)
        else:
            sampler = None
        loader = torch.utils.data.DataLoader(train_dataset, batch_size=1, shuffle=sampler)  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        for call in file.calls_to("DataLoader"):
            shuffle = loader_arg(call, "shuffle")
            if not isinstance(shuffle, (ast.Name, ast.Attribute)):
                continue
            if any(loader_arg(call, name) is not None for name in ("sampler", "batch_sampler")):
                continue  # a sampler given too: shuffle-with-sampler's case, not this one
            samplers = [o for o in file.origins(shuffle)
                        if type(o) is ast.Call and terminal_name(o.func).endswith("Sampler")]
            if samplers:
                name = terminal_name(samplers[0].func)
                yield Hit(call, message=f"`{ast.unparse(shuffle)}` (a {name}, line {samplers[0].lineno}) is passed "
                          "as shuffle=, not sampler=: the loader shuffles the whole dataset on every rank and never "
                          "uses the sampler")
