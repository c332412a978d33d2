from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.linter.model import FileModel, constant, keyword
from gpudoctor.linter.rule import ERROR, Hit, Rule

FUNCTION_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


class SpawnArgsNotPicklable(Rule):
    """`mp.spawn(worker, args=(world_size, loader_fn))` where `loader_fn`
    is a function defined inside another function (or a lambda): mp.spawn
    always starts its processes with the `spawn` method, which pickles the
    function and every element of `args` to send them to the children, and
    pickle cannot name a local function or a lambda. The parent raises
    `AttributeError: Can't pickle local object 'run.<locals>.loader_fn'`
    (or `Can't pickle <function <lambda>>`) before any worker starts, on
    every machine. Asked for by issue 41's lint heldout20 (u028: two loader
    factories defined inside `run_experiment_ddp`, passed in `args=`).

    Flagged: an element of mp.spawn's (or `start_processes`' with the spawn
    or forkserver method) `args` tuple, or the function it starts, that is
    a `lambda` or a name this file binds only to a function defined inside
    another function (a closure) or to a lambda. Not flagged: a function
    defined at the module's top (pickled by its name), a method of a class
    or a parameter (its value is not in this file), `start_processes(...,
    start_method="fork")`, which pickles nothing.

    An error: the pickling fails whatever the machine or the launch.
    """

    id = "spawn-args-not-picklable"
    severity = ERROR
    message = ("mp.spawn pickles its function and args for the spawned processes, and a local function or a "
               "lambda cannot be pickled: the parent raises before any worker starts")
    fix = "define the function at the module's top level (or pass the values it closes over in args)"
    needles = ("spawn", "start_processes")
    local_evidence = True

    VALID = (
        '''
        import torch.multiprocessing as mp

        def make_loader(rank, world_size):
            return build(rank, world_size)

        def worker(rank, world_size, loader_fn):
            loader = loader_fn(rank, world_size)

        if __name__ == "__main__":
            mp.spawn(worker, args=(2, make_loader), nprocs=2)
        ''',
        '''
        import torch.multiprocessing as mp

        def run(model_fn, world_size):
            mp.spawn(worker, args=(world_size, model_fn), nprocs=world_size)  # a parameter: not this file's
        ''',
    )
    INVALID = (
        '''
        import torch.multiprocessing as mp

        def run(dataset_fn, world_size):
            def loader_fn(rank, ws):
                return dataset_fn(rank, ws)[0]

            mp.spawn(worker, args=(world_size, loader_fn), nprocs=world_size)  # flagged
        ''',
        '''
        import torch.multiprocessing as mp

        if __name__ == "__main__":
            mp.spawn(worker, args=(2, lambda x: x * 2), nprocs=2)  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        for call in file.calls:
            if not file.is_spawn(call):
                continue
            method = keyword(call, "start_method")
            if method is not None and constant(method, str) not in ("spawn", "forkserver"):
                continue
            items: list[ast.expr] = []
            target = keyword(call, "fn", 0)
            if target is not None:
                items.append(target)
            args = keyword(call, "args", 1)
            if isinstance(args, (ast.Tuple, ast.List)):
                items += [e for e in args.elts if type(e) is not ast.Starred]
            bad = [(item, why) for item in items for why in [self._unpicklable(file, item)] if why]
            if not bad:
                continue
            whys = ", ".join(why for _, why in bad)
            names = [ast.unparse(item) for item, _ in bad if type(item) is ast.Name]
            yield Hit(bad[0][0], message=f"mp.spawn pickles its function and args for the spawned processes, but "
                      f"pickle cannot name {whys}: the parent raises \"Can't pickle\" before any worker starts",
                      fix=f"define {', '.join(names) if names else 'the function'} at the module's top level, "
                      "passing what it closes over in args")

    @staticmethod
    def _unpicklable(file: FileModel, item: ast.expr) -> str:
        """What makes `item` unpicklable ("" when nothing this file shows)."""
        if type(item) is ast.Lambda:
            return "a lambda"
        if type(item) is not ast.Name:
            return ""
        bindings = file.lookup(item)
        if bindings:
            if all(type(getattr(b, "value", None)) is ast.Lambda for b in bindings):
                return f"{item.id} (a lambda)"
            return ""
        defs = file.find_def(item)
        if defs and all(isinstance(d, FUNCTION_DEFS) and isinstance(file.scope(d), FUNCTION_DEFS) for d in defs):
            return f"{item.id} (a function defined inside {file.scope(defs[0]).name})"  # type: ignore[attr-defined]
        return ""
