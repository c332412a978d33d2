from __future__ import annotations

import ast
from collections.abc import Iterator

import re

from gpudoctor.linter.model import FileModel, terminal_name
from gpudoctor.linter.rule import ERROR, Hit, Rule

CONTAINERS = ("ModuleList", "ModuleDict")
# What precedes `ModuleList(` on its line when a name is bound to it:
# `self.layers = nn.` / `blocks: nn.ModuleDict = nn.` (the name is group 1).
BOUND = re.compile(r"(\w+)[ \t]*(?::[^=\n]*)?=[ \t]*[\w.]*$")


class ModulelistCalled(Rule):
    """An `nn.ModuleList` (or `nn.ModuleDict`) called like a module,
    `self.layers(x)`: the container has no `forward`, so the call raises
    `NotImplementedError: Module [ModuleList] is missing the required
    "forward" function`.

    Iterate over it (`for layer in self.layers: x = layer(x)`), or build an
    `nn.Sequential` if the layers run in order. Not flagged when the file
    also sets that attribute on an instance (`model.mid = new_block`): the
    container may have been replaced by a module before the call.
    """

    id = "modulelist-called"
    severity = ERROR  # a certain crash or hang
    local_evidence = True  # decided by the flagged call and the lines shown: stands in a faithful repair
    message = "an nn.ModuleList is called like a module: it has no forward()"
    fix = "for layer in self.layers: x = layer(x)"
    needles = CONTAINERS

    def relevant(self, text: str) -> bool:
        # Model files build ModuleLists all the time; only a call of a name
        # bound to one (`.layers(`) needs the tree.
        if "ModuleList" not in text and "ModuleDict" not in text:
            return False
        names = set()
        for kind in CONTAINERS:
            at = text.find(kind + "(")
            while at >= 0:
                m = BOUND.search(text, text.rfind("\n", 0, at) + 1, at)
                if m is not None:
                    names.add(m.group(1))
                at = text.find(kind + "(", at + 1)
        return any(f".{name}(" in text or f" {name}(" in text for name in names)

    VALID = (
        '''
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([nn.Linear(8, 8) for _ in range(4)])

            def forward(self, x):
                for layer in self.layers:
                    x = layer(x)
                return x
        ''',
        '''
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.Sequential(nn.Linear(8, 8), nn.ReLU())

            def forward(self, x):
                return self.layers(x)
        ''',
        '''
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.mid = nn.ModuleList([Block(), Block()])

            def forward(self, x):
                return self.mid(x) if self.converted else self.mid[1](self.mid[0](x))

        model = Net()
        model.mid = MidBlock()  # the container is replaced before the converted forward
        model.converted = True
        ''',
    )
    INVALID = (
        '''
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([nn.Linear(8, 8) for _ in range(4)])

            def forward(self, x):
                return self.layers(x)  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        for call in file.calls:
            func = call.func
            if type(func) is not ast.Attribute or file.method_class(func) is None:
                continue
            origins = file.origins(func)
            if not origins or origins == [func]:
                continue
            kinds = {terminal_name(o.func) for o in origins if type(o) is ast.Call and self._container(file, o)}
            if file.object_attributes.get(func.attr):
                continue  # `model.mid = UNetMidBlock(...)` elsewhere: maybe no container by the time it is called
            if len(kinds) == 1 and all(type(o) is ast.Call and self._container(file, o) for o in origins):
                kind = kinds.pop()
                name = ast.unparse(func)
                yield Hit(
                    call,
                    message=f"{name} is an nn.{kind}: calling it raises NotImplementedError (it has no forward)",
                    fix=f"for layer in {name}{'.values()' if kind == 'ModuleDict' else ''}: x = layer(x)",
                )

    @staticmethod
    def _container(file: FileModel, call: ast.Call) -> bool:
        return any(file.is_call_to(call, kind, ("torch",)) for kind in CONTAINERS)
