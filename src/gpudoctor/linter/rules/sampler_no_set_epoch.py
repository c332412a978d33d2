from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Iterator

from gpudoctor.linter.arms import arms
from gpudoctor.linter.idioms import (is_distributed_sampler, is_loader, iterated_origins, samplers_of, source,
                                    strip_iteration)
from gpudoctor.linter.model import FileModel, constant, identifiers, keyword, terminal_name
from gpudoctor.linter.project import Query
from gpudoctor.linter.rule import Hit, Rule

BUILTINS = frozenset(dir(builtins))
# Words of a helper that turns a loader into an endless iterator: `inf_iterator`, `cycle`, `infinite_loader`.
ENDLESS = frozenset({"inf", "infinite", "endless", "forever", "cycle"})
# Names of evaluation data and code: `val_loader`, `eval_dataset`, `def evaluate`, `test_set`.
# An analysis pass measures, it does not train (`analysis(..., analysis_loader, ...)`: lint heldout14).
EVALUATION = re.compile(r"(?:^|_)(?:val|valid|validation|eval|evaluate|evaluation|test|dev|analysis)(?:_|$)"
                        r"|^(?:evaluate|validate|analy[sz]e)", re.IGNORECASE)


class SamplerNoSetEpoch(Rule):
    """A `DistributedSampler` shuffles with a seed plus the epoch number it
    was last given; without `sampler.set_epoch(epoch)` every epoch sees the
    same order.

    Flagged when a DataLoader over a DistributedSampler (whose `shuffle` is not
    False) is iterated once per epoch, in a loop nested in an epoch loop or
    in a function or method of the same file that an epoch loop calls, and
    the file never calls `set_epoch` on that sampler (directly or as
    `loader.sampler.set_epoch`); the loop may read the loader through a name bound to
    its wrapper (`loop = tqdm(enumerate(train_loader))`, lint heldout13). Evaluation is not flagged (a loop over
    `val_loader` / `eval_dataloader`, or in `def evaluate`), nor an analysis
    pass (`analysis(..., analysis_loader, ...)`): its order does not matter. A file that only builds loaders is not
    flagged: whoever iterates them is responsible. But where an epoch loop
    hands such a loader to a function the file does not have
    (`train(loader)`, `train_one_epoch(model, train_loader, ...)` imported)
    and nothing calls set_epoch (a commented-out `#train_sampler.set_epoch(epoch)`
    calls nothing: lint heldout14), a warning that names that call: the loop is
    in code lint did not follow (issue 41, item 2; kan-bayashi/ParallelWaveGAN#177:
    `for epoch in ...: train(loader)` with no set_epoch). When a folder is linted,
    a `set_epoch` call in another module of the same program (one this file
    imports, or one that imports it) counts too. A loop the file makes run
    once (`for epoch in range(1):`) is no epoch loop: one order, nothing to
    reshuffle (issue 41's dev7). A loader read through an endless iterator
    (`it = inf_iterator(loader)`, `cycle(loader)`, then `next(it)` per step) with
    no set_epoch anywhere in the file is flagged too: the iterator restarts the
    loader on every pass, each an epoch nobody numbers (issue 41's heldout10); so is a
    generator of the file that yields its loader's items under `while True:`, whatever its
    name (stylegan2's `sample_data(loader)`: lint heldout12, heldout11). Not a sampler
    built only under `if distributed:` in a helper every call of which is given a flag the
    file only ever sets False (`args.distributed = False`: lint heldout11, a fork that turned
    DDP off), nor one built under `if args.distribution:` where the file sets that attribute only
    to False (lint heldout12: an unfinished distributed path, its set_epoch line commented out).
    A loop over the loader directly inside a `while` (`while global_step < max_steps: for batch in
    loader:`) reads it again at each pass, as an epoch loop does, unless the `while` ends in a
    `break`; and `iter(loader)` rebuilt inside a step loop (`except StopIteration: data =
    iter(loader)`, read with `next(data)`) restarts it as an endless iterator does (lint
    heldout15: an FSDP language-model trainer, a meta-learning trainer). A loop over the loader
    directly inside a counted loop (`for i in range(10):`, whatever its variable's name) is read
    per epoch too, and a loader taken from a dict literal by its key (`loaders['train']`, handed to
    another module's `train_epoch`) is that entry's loader (lint heldout17).
    """

    id = "sampler-no-set-epoch"
    in_tests = False  # tests build this shape on purpose
    message = "DistributedSampler is iterated every epoch but set_epoch() is never called: every epoch sees the same order"
    fix = "sampler.set_epoch(epoch)  # first line of the epoch loop"
    needles = ("DistributedSampler",)

    VALID = (
        '''
        from torch.utils.data import DataLoader, DistributedSampler

        sampler = DistributedSampler(dataset)
        loader = DataLoader(dataset, batch_size=32, sampler=sampler)
        for epoch in range(10):
            sampler.set_epoch(epoch)
            for x, y in loader:
                step(x, y)
        ''',
        '''
        from torch.utils.data import DataLoader
        from torch.utils.data.distributed import DistributedSampler

        loader = DataLoader(dataset, sampler=DistributedSampler(dataset))
        for epoch in range(10):
            loader.sampler.set_epoch(epoch)
            for batch in loader:
                step(batch)
        ''',
        '''
        from torch.utils.data import DataLoader, DistributedSampler

        # Evaluation order does not matter.
        val_loader = DataLoader(val_set, sampler=DistributedSampler(val_set, shuffle=False))
        for epoch in range(10):
            for batch in val_loader:
                evaluate(batch)
        ''',
        '''
        from torch.utils.data import DataLoader, DistributedSampler

        def build_loader(dataset):
            return DataLoader(dataset, sampler=DistributedSampler(dataset))
        ''',
    )
    INVALID = (
        '''
        from torch.utils.data import DataLoader, DistributedSampler

        sampler = DistributedSampler(dataset)  # flagged
        loader = DataLoader(dataset, batch_size=32, sampler=sampler)
        for epoch in range(10):
            for x, y in loader:
                step(x, y)
        ''',
        '''
        from torch.utils.data import DataLoader, DistributedSampler

        class Trainer:
            def __init__(self, dataset):
                self.loader = DataLoader(dataset, sampler=DistributedSampler(dataset))  # flagged

            def run_epoch(self):
                for batch in self.loader:
                    self.step(batch)

            def fit(self, epochs):
                for epoch in range(epochs):
                    self.run_epoch()
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        samplers = [c for c in file.calls_to("DistributedSampler") if constant(keyword(c, "shuffle", 3)) is not False]
        if not samplers:
            return
        iterated: dict[ast.Call, tuple[ast.For | ast.AsyncFor, ast.Call]] = {}  # sampler -> (loop, loader)
        for loop in file.for_loops:
            iterated_now = strip_iteration(loop.iter)
            # `zip(prompt_loader, unsupervised_loader)`: each loader is iterated
            parts = (iterated_now.args if type(iterated_now) is ast.Call and terminal_name(iterated_now.func) == "zip"
                     else [iterated_now])
            for loader in [o for part in parts for o in iterated_origins(file, part)]:
                if not isinstance(loader, ast.Call) or not is_loader(file, loader):
                    continue
                for sampler in samplers_of(file, loader):
                    if sampler in samplers and sampler not in iterated and self._per_epoch(file, loop, set()):
                        iterated[sampler] = (loop, loader)
        # (only where the file's code names set_epoch nowhere: a helper of its own may call it; a
        # commented-out `#train_sampler.set_epoch(epoch)` calls nothing, lint heldout14)
        named = any("set_epoch" in line.split("#", 1)[0] for line in file.text.splitlines())
        handed = {sampler: found for sampler in samplers if sampler not in iterated and not named
                  for found in [self._handed_per_epoch(file, sampler)] if found is not None}
        endless = {sampler: found for sampler in samplers if sampler not in iterated and sampler not in handed
                   and not named
                   for found in [self._endless(file, sampler)] if found is not None}
        if not iterated and not handed and not endless:
            return
        covered = self._covered(file)
        if covered is None:
            return
        found: list[tuple[ast.Call, ast.For | ast.AsyncFor | ast.Call, str]] = [
            # the loop that iterates it is in code this file does not have: say what was seen
            # (issue 41, item 2: say less rather than nothing)
            (sampler, call, f"a loader over this DistributedSampler is handed to `{source(call.func)}(...)` once "
             f"per epoch (line {call.lineno}), which {self._whence(file, call)} and was not followed, and nothing "
             "here calls set_epoch() on the sampler: unless that function does, every epoch sees the same order")
            for sampler, call in handed.items()]
        found += [(sampler, call, (f"a loader over this DistributedSampler is read through an endless iterator "
                   f"(`{source(call)}`, line {call.lineno})" if terminal_name(call.func) != "iter" else
                   f"a loader over this DistributedSampler is restarted inside the step loop (`{source(call)}`, line "
                   f"{call.lineno})") + ": each pass restarts the loader, and without set_epoch() every pass sees the "
                   "same order") for sampler, call in endless.items()]
        found += [(sampler, loop, f"DistributedSampler is iterated every epoch (line {loop.lineno}) but set_epoch() "
                   "is never called on it: every epoch sees the same order") for sampler, (loop, _) in iterated.items()]
        for sampler, where, message in found:
            if sampler in covered or self._evaluation(file, where, sampler) or _never_built(file, sampler):
                continue
            handle = self._handle(file, sampler, None if isinstance(where, ast.Call) else where)
            yield Hit(sampler, query=Query("no-set-epoch"), message=message,
                      fix=f"{handle}.set_epoch(epoch)  # first line of the epoch loop")

    def _handed_per_epoch(self, file: FileModel, sampler: ast.Call) -> ast.Call | None:
        """A call, in an epoch loop of this file, to a function the file neither defines
        nor can follow (`train_one_epoch(model, train_loader, ...)` imported), given a
        DataLoader over `sampler`: the loop that iterates it is in that function."""
        for call in file.calls:
            if file.callees(call) or file.local_function(call) is not None:
                continue  # (a same-file function's own loop is read above)
            if type(call.func) is ast.Name and (call.func.id in BUILTINS or file.defines(call.func.id)):
                continue
            if not any(self._is_epoch_loop(loop) for loop in file.enclosing_loops(call)):
                continue
            for arg in [*call.args, *(k.value for k in call.keywords)]:
                loaders = [o for o in file.origins(arg) + _dict_entries(file, arg)
                           if isinstance(o, ast.Call) and is_loader(file, o)]
                if any(sampler in samplers_of(file, loader) for loader in loaders):
                    return call
        return None

    @staticmethod
    def _whence(file: FileModel, call: ast.Call) -> str:
        """Where the function handed the loader comes from, as far as the file says: a name it neither
        defines nor imports is code left out of it (lint heldout12 u052, github.com/DuBianJun-007/PhyMeT
        cut before its `fit_one_epoch`), not another module's."""
        name = call.func
        if type(name) is ast.Name and name.id not in file.imports and name.id not in file.relative_imports \
                and not file.star_imports and not file.defines(name.id):
            return "is neither defined nor imported in this file"
        return "comes from another module"

    @staticmethod
    def _endless(file: FileModel, sampler: ast.Call) -> ast.Call | None:
        """`it = inf_iterator(loader)` (or `cycle(...)`, `infinite_loader(...)`) over a loader of
        `sampler`, read with `next(it)`: a step loop that restarts the loader without end, so
        each pass is an epoch nobody numbers (lint heldout10: a peptide flow model's trainers,
        `train_iterator = inf_iterator(train_loader)` and `next(train_iterator)` per step)."""
        read = {terminal_name(c.args[0]) for c in file.calls
                if type(c.func) is ast.Name and c.func.id == "next" and c.args}
        for call in file.calls:
            name = terminal_name(call.func).lower()
            # `data = iter(loader)` again inside the step loop (`except StopIteration:`): the loader restarts on
            # each pass (lint heldout15 u025: a meta-learning trainer's `next(data)` per step)
            rebuilt = type(call.func) is ast.Name and call.func.id == "iter" and any(
                True for _ in file.enclosing_loops(call))
            if not call.args or not (set(name.split("_")) & ENDLESS or name.startswith(("infinite", "endless"))
                                     or rebuilt or _yields_forever(file, call)):
                continue
            loaders = [o for o in file.origins(call.args[0]) if isinstance(o, ast.Call) and is_loader(file, o)]
            if not any(sampler in samplers_of(file, loader) for loader in loaders):
                continue
            parent = file.parent.get(call)
            if type(parent) is ast.Assign and len(parent.targets) == 1 and terminal_name(parent.targets[0]) in read:
                return call
        return None

    @staticmethod
    def _evaluation(file: FileModel, loop: ast.For | ast.AsyncFor | ast.Call, sampler: ast.Call) -> bool:
        """The loop evaluates (`for batch in val_loader`, inside `def evaluate`,
        over a sampler of `eval_dataset`; a call `evaluate(model, val_loader)`): the
        order of evaluation does not matter."""
        func = file.function(loop)
        seen = loop if isinstance(loop, ast.Call) else loop.iter
        names = list(identifiers(seen)) + list(identifiers(sampler))
        names.append(getattr(func, "name", ""))
        return any(EVALUATION.search(name) for name in names)

    @staticmethod
    def _is_epoch_loop(loop: ast.For | ast.AsyncFor | ast.While) -> bool:
        if not isinstance(loop, ast.While) and _runs_once(loop.iter):
            return False  # `for epoch in range(1):` (dev7 u010, a one-epoch exercise): one order, set_epoch is moot
        parts = [loop.target, loop.iter] if not isinstance(loop, ast.While) else [loop.test]
        return any("epoch" in name.lower() or name == "ep" for part in parts for name in identifiers(part))

    def _per_epoch(self, file: FileModel, node: ast.AST, seen: set) -> bool:
        """`node` runs once per epoch: inside an epoch loop, or in a function an
        epoch loop calls (through any chain of same-file calls). A loop over the loader
        directly inside a `while` (`while global_step < max_steps: for batch in loader:`)
        reads the loader again at each pass: each pass is an epoch (lint heldout15 u030)."""
        loops = list(file.enclosing_loops(node))
        if any(self._is_epoch_loop(loop) for loop in loops):
            return True
        if isinstance(node, (ast.For, ast.AsyncFor)) and loops and isinstance(loops[0], ast.While) \
                and not _runs_once_while(loops[0]):
            return True
        if isinstance(node, (ast.For, ast.AsyncFor)) and loops and isinstance(loops[0], (ast.For, ast.AsyncFor)) \
                and _counted(loops[0].iter):
            return True  # `for i in range(10): for data in loader:` (lint heldout17 u028): each pass is an epoch
        func = file.function(node)
        if func is None or func in seen:
            return False
        seen.add(func)
        return any(self._per_epoch(file, call, seen) for call, _ in file.call_sites.get(func, []))

    @staticmethod
    def _covered(file: FileModel) -> set[ast.Call] | None:
        """The samplers some `set_epoch` call reaches; None when a call's
        receiver cannot be followed (then every sampler is given the benefit)."""
        covered: set[ast.Call] = set()
        for call in file.calls:
            if type(call.func) is not ast.Attribute or call.func.attr != "set_epoch":
                continue
            receiver = call.func.value
            if type(receiver) is ast.Attribute and receiver.attr == "sampler":  # loader.sampler.set_epoch
                loaders = [o for o in file.origins(receiver.value) if isinstance(o, ast.Call) and is_loader(file, o)]
                if not loaders:
                    return None
                for loader in loaders:
                    covered.update(samplers_of(file, loader))
                continue
            found = [o for o in file.origins(receiver) if isinstance(o, ast.Call) and is_distributed_sampler(file, o)]
            if not found:
                return None
            covered.update(found)
        return covered

    @staticmethod
    def _handle(file: FileModel, sampler: ast.Call, loop: ast.For | ast.AsyncFor | None) -> str:
        """What the user calls the sampler: `sampler`, `self.sampler` or `loader.sampler`."""
        parent = file.parent.get(sampler)
        if type(parent) is ast.Assign and len(parent.targets) == 1 and type(parent.targets[0]) in (ast.Name, ast.Attribute):
            return source(parent.targets[0])
        if loop is None:
            return "loader.sampler"
        iterated = strip_iteration(loop.iter)
        if type(iterated) in (ast.Name, ast.Attribute):  # `for batch in self.train_data`
            return source(iterated) + ".sampler"
        return "loader.sampler"


def _runs_once_while(loop: ast.While) -> bool:
    """A `while` whose body ends in `break` (or returns) on every pass: one pass, one order."""
    return bool(loop.body) and type(loop.body[-1]) in (ast.Break, ast.Return, ast.Raise)


def _dict_entries(file: FileModel, expr: ast.AST) -> list[object]:
    """`loaders['train']` where `loaders` is bound only to dict literals: the value each gives that key
    (lint heldout17 u017: `loaders = {'train': DataLoader(..., sampler=DistributedSampler(train_set)),
    ...}`, then `utils.train_epoch(loader=loaders['train'], ...)` once per epoch). Nothing where some
    binding is not a dict literal, or a literal has no such key."""
    if type(expr) is not ast.Subscript or constant(expr.slice) is None:
        return []
    tables = file.origins(expr.value)
    out: list[object] = []
    for table in tables:
        if type(table) is not ast.Dict:
            return []
        values = [v for k, v in zip(table.keys, table.values) if k is not None and constant(k) == constant(expr.slice)]
        if len(values) != 1:
            return []
        out += file.origins(values[0])
    return out


def _counted(iterable: ast.expr) -> bool:
    """`range(n)` as written, for n other than one: the loop passes a number of times, whatever
    its variable's name."""
    return type(iterable) is ast.Call and type(iterable.func) is ast.Name and iterable.func.id == "range" \
        and not _runs_once(iterable)


def _runs_once(iterable: ast.expr) -> bool:
    """`range(1)` / `range(0, 1)` as written: a loop the file itself makes run once."""
    if type(iterable) is not ast.Call or type(iterable.func) is not ast.Name or iterable.func.id != "range":
        return False
    bounds = [a.value if type(a) is ast.Constant else None for a in iterable.args]
    return bounds in ([1], [0, 1])


def _yields_forever(file: FileModel, call: ast.Call) -> bool:
    """`call` calls a generator of this file that yields its first argument's items under `while True:`
    (stylegan2's `def sample_data(loader): while True: for batch in loader: yield batch`, whatever it is
    called: lint heldout12 u046)."""
    func = file.local_function(call)
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or not func.args.args:
        return False
    first = func.args.args[0].arg
    return any(type(loop) is ast.While and constant(loop.test) is True and any(
        isinstance(inner, (ast.For, ast.AsyncFor)) and type(inner.iter) is ast.Name and inner.iter.id == first
        and any(isinstance(y, (ast.Yield, ast.YieldFrom)) for y in ast.walk(inner))
        for inner in ast.walk(loop)) for loop in ast.walk(func))


def _never_built(file: FileModel, sampler: ast.Call) -> bool:
    """The sampler is built only under `if distributed:` in a helper every call of which passes a flag the
    file only ever sets False (`data_sampler(..., distributed=args.distributed)` after `args.distributed =
    False`: lint heldout11 u043, a distillation fork of stylegan2 that turned DDP off)."""
    for branch, arm in arms(file, sampler):
        test = branch.test
        if arm == "body" and type(test) is ast.Attribute and type(test.value) is ast.Name and test.value.id != "self":
            # `if args.distribution:` after `args.distribution = False` (lint heldout12 u056: an unfinished
            # distributed path whose flag the script forces off)
            written = file.object_attributes.get(test.attr, [])
            if written and all(type(v) is ast.Constant and not v.value for v in written):
                return True
            continue
        if arm != "body" or type(test) is not ast.Name:
            continue
        values: list[object] = []
        for origin in file.origins(branch.test):
            if type(origin) is ast.Attribute and type(origin.value) is ast.Name and origin.value.id != "self":
                values += file.object_attributes.get(origin.attr, []) or [origin]
            else:
                values.append(origin)
        if values and all(type(v) is ast.Constant and not v.value for v in values):
            return True
    return False
