from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.lint.idioms import TORCH, source, wrapper_kind
from gpudoctor.lint.model import FileModel, terminal_name
from gpudoctor.lint.project import LIBRARIES, Query
from gpudoctor.lint.ranks import Branch, rank_branch
from gpudoctor.lint.rule import ERROR, Hit, Rule

# Calls that may build a wrapped model (aliases and imports are checked too).
BUILDERS = {"DistributedDataParallel", "FullyShardedDataParallel", "to", "cuda", "prepare"}


class DdpForwardOnOneRank(Rule):
    """A DistributedDataParallel (or FSDP) model called only on some ranks,
    typically evaluation under `if rank == 0:`. The wrapper's forward is a
    collective: DDP broadcasts buffers from rank 0 (BatchNorm statistics) and
    SyncBatchNorm all-reduces, FSDP all-gathers the parameters. The rank that
    runs it waits for the others, which are already at their next
    collective: the job hangs, or the collectives pair up wrongly.

    Flagged: a call of a model built by `DistributedDataParallel(...)` /
    `FullyShardedDataParallel(...)` / `accelerator.prepare(...)` under a test
    on the rank, or in a function whose every call in the file is under one,
    or in a function of another module of the project that is given the
    model under a test on the rank (`if rank == 0: evaluate(model, loader)`).
    Evaluate with the unwrapped model (`model.module`,
    `accelerator.unwrap_model(model)`), or on every rank and reduce the
    metrics.
    """

    id = "ddp-forward-on-one-rank"
    severity = ERROR  # a certain crash or hang
    message = "DDP model called only on some ranks: its forward syncs with the other ranks and the job hangs"
    fix = "output = model.module(inputs)  # the unwrapped model: no collective on one rank"
    needles = ("DistributedDataParallel", "FullyShardedDataParallel")

    def relevant(self, text: str) -> bool:
        return any(n in text for n in self.needles) or ("accelerator" in text and ".prepare(" in text)

    VALID = (
        '''
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(net.to(rank), device_ids=[rank])
        for x, y in loader:
            loss_fn(model(x), y).backward()
        if rank == 0:
            with torch.no_grad():
                print(model.module(x_val).argmax(1))
        ''',
        '''
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        def evaluate(model, loader):
            with torch.no_grad():
                return sum(model(x).argmax(1).eq(y).sum() for x, y in loader)

        model = DDP(net.to(rank), device_ids=[rank])
        correct = evaluate(model, val_loader)  # every rank evaluates its shard
        if rank == 0:
            print(correct)
        ''',
    )
    INVALID = (
        '''
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(net.to(rank), device_ids=[rank])
        for x, y in loader:
            loss_fn(model(x), y).backward()
        if rank == 0:
            with torch.no_grad():
                print(model(x_val).argmax(1))  # flagged
        ''',
        '''
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel

        @torch.no_grad()
        def evaluate(model, loader):
            return sum(model(x).argmax(1).eq(y).sum() for x, y in loader)  # flagged

        model = DistributedDataParallel(net.cuda(), device_ids=[local_rank])
        if dist.get_rank() == 0:
            print(evaluate(model, val_loader))
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        # Names that may hold a wrapped model: assigned one, or a parameter
        # named like a model (`def evaluate(model, loader)`).
        wrapped = {
            getattr(target, "id", getattr(target, "attr", ""))
            for target in self._targets(file)
        }
        for call in file.calls:
            name = terminal_name(call.func)
            if name not in wrapped and "model" not in name.lower() and "net" not in name.lower():
                continue
            func = call.func
            if type(func) is ast.Attribute and func.attr == "forward":
                func = func.value
            elif type(func) not in (ast.Name, ast.Attribute):
                continue
            if type(func) is ast.Attribute and file.method_class(func) is None:
                continue  # `self.model(...)` follows; `a.b.model(...)` cannot be followed
            if not any(self._wrapped(file, o) for o in file.origins(func)):
                continue
            branch = self._guard(file, call, set())
            if branch is None:
                continue
            yield Hit(
                call,
                message=f"{source(func)} is a DistributedDataParallel model called only on some ranks (it "
                f"depends on `{source(branch.test)}`, line {branch.line}): its forward syncs with the other ranks "
                "and the job hangs",
                fix=f"{source(func)}.module(...)  # the unwrapped model; or run this on every rank",
            )
        yield from self._passed_on(file, wrapped)

    def _passed_on(self, file: FileModel, wrapped: set[str]) -> Iterator[Hit]:
        """A wrapped model given, under a rank test, to a function imported
        from the project: the project says whether that function calls it."""
        for call in file.calls:
            func = call.func
            if type(func) is not ast.Name:
                continue
            base = file.imports.get(func.id) or file.relative_imports.get(func.id)
            if not base or base.lstrip(".").split(".", 1)[0] in LIBRARIES or file.lookup(func) is not None:
                continue
            passed = [(str(i), a) for i, a in enumerate(call.args)] + [(k.arg, k.value) for k in call.keywords if k.arg]
            for arg, value in passed:
                if type(value) is not ast.Name or value.id not in wrapped:
                    continue
                if not any(self._wrapped(file, o) for o in file.origins(value)):
                    continue
                branch = self._guard(file, call, set())
                if branch is None:
                    break
                yield Hit(
                    call,
                    message=f"{func.id}() calls {value.id}, a DistributedDataParallel model, and runs only on some "
                    f"ranks (it depends on `{source(branch.test)}`, line {branch.line}): its forward syncs with the "
                    "other ranks and the job hangs",
                    fix=f"{func.id}({value.id}.module, ...)  # the unwrapped model; or call it on every rank",
                    query=Query("calls-argument", base, arg),
                )
                break

    def _targets(self, file: FileModel) -> Iterator[ast.AST]:
        for call in file.calls:
            name = terminal_name(call.func)
            if name not in BUILDERS and name not in file.imports and name not in file.module_aliases:
                continue
            if self._wrapped(file, call):
                parent = file.parent.get(call)
                if isinstance(parent, ast.Assign):
                    yield from parent.targets
                elif isinstance(parent, (ast.AnnAssign, ast.NamedExpr)):
                    yield parent.target

    @staticmethod
    def _wrapped(file: FileModel, origin: object) -> bool:
        if type(origin) is not ast.Call:
            return False
        if wrapper_kind(file, origin) == "DistributedDataParallel":
            return True
        if file.is_call_to(origin, "FullyShardedDataParallel", TORCH):
            return True
        func = origin.func
        return (type(func) is ast.Attribute and func.attr == "prepare"
                and "accelerator" in terminal_name(func.value).lower())

    def _guard(self, file: FileModel, node: ast.AST, seen: set) -> Branch | None:
        """The rank test that decides whether `node` runs: around it, or
        around every call (in the file) of its function."""
        branch = rank_branch(file, node)
        if branch is not None:
            return branch
        func = file.function(node)
        if func is None or func in seen:
            return None
        seen.add(func)
        sites = file.entry_sites(func)
        if not sites:
            return None
        found = [self._guard(file, site, seen) for site in sites]
        return found[0] if all(found) else None
