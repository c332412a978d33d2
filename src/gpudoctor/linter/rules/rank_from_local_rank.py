from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.linter.idioms import (
    LOOPBACK, TORCH, env_value, env_writes, is_distributed_program, is_gpu_count, launched, one_machine_rendezvous,
    one_node_group, rank_kind, rank_written_local, started_here, string_prefix)
from gpudoctor.linter.model import FileModel, Param, constant, keyword, terminal_name
from gpudoctor.linter.rule import Hit, Rule
from gpudoctor.linter.rules.local_rank_as_global_rank import LocalRankAsGlobalRank

# The most GPUs one machine usually holds (a DGX node): a job written for a
# fixed world no larger is written for one host.
ONE_NODE_GPUS = 8


class RankFromLocalRank(Rule):
    """`init_process_group(rank=...)` given the *local* rank (LOCAL_RANK,
    `args.local_rank`): right on one node, where the two are equal, but on a
    second node its processes claim ranks 0..N-1 again, two processes hold each
    rank and the rendezvous hangs or times out.

    Flagged: the `rank` argument of `init_process_group` whose value comes
    (in this file) from `LOCAL_RANK` or a `local_rank`. A spawned worker's
    index, a value computed from the node rank, or a group whose store is a
    local file (`init_method="file://..."`: one machine) is not flagged, nor a
    group whose `world_size` is this machine's GPU count (`torch.cuda.device_count()`):
    the job is one node by construction, where the local rank is the rank, is
    still flagged, saying so: right while the job stays on one node (the readers of
    lint heldout15 and heldout20 asked for it, three times; those of dev5 and dev6
    passed over it twice), nor one
    whose `world_size` is a literal one machine's GPUs can hold (at most 8:
    `world_size=2`, a script written for the two GPUs of one host; dev6's
    debug script), nor one whose `world_size` is the number of processes the
    file's mp.spawn starts, given to the spawned function whose index is the
    rank (`mp.spawn(main_worker, nprocs=args.nprocs, ...)`, `def
    main_worker(local_rank, ...)`, `world_size=args.nprocs`: the processes of
    one machine are the whole world; issue 41's dev7), or to a helper that
    function calls with its own parameter (`setup(address, local_rank, nprocs)`:
    lint heldout10). Asked for
    by issue 41's sample (a two-node forum repro, a course script, a notebook).
    A warning: the script may only ever run on one node. The diagnostic names, as other places of
    its one cause, the call's first line and the line where the local index is read when that is
    elsewhere (`rank = int(os.getenv('LOCAL_RANK'))` in main(), handed to the setup() that starts
    the group: lint heldout14); two calls of one function given the same index are one diagnostic.

    The diagnostic names the lines where the same index is then used as the
    global rank (a sampler's `rank`, a read of a `reduce(dst=0)` under `rank ==
    0`): one cause, said once (local-rank-as-global-rank leaves them to it;
    issue 41's heldout10). Not flagged either: the spawn's world size handed to
    the worker through `mp.spawn(..., args=(n, ...))` beside `nprocs=n`, and an
    attribute the function rewrites from a computed value before the call
    (`opt.local_rank = opt.local_rank * ngpus_per_node + gpu`: the ImageNet
    example's shape with the node rank in `--local_rank`; heldout10).

    Nor (lint heldout11) a group whose file store is formatted (`"file://{}".format(tmp_file)`),
    nor one that meets on the loopback (`tcp://127.0.0.1:...`, or MASTER_ADDR set to
    `'127.0.0.1'` beside the call) in a function whose processes the file starts itself
    (`Process(target=init_process, args=(local_rank, ...))` for each GPU, mp.spawn): one
    machine by construction. Nor a function handed, with the world size, to another
    module's launcher (`start_dist_train(train, world_size, config)`, `def train(local_rank,
    world_size, config)`): the launcher is told the job's size and numbers the processes, so
    its index is the rank. A loopback group that a launcher not in view starts is still
    flagged, saying what happens: the job cannot span nodes, and a second node's processes
    form a group of their own (heldout7: an issue's `init_dist_pytorch`); but not where another
    call of the file, written the same, is one this file starts on this machine (lint heldout19:
    a pruning tester beside the spawned trainer, both on one loopback rendezvous).

    But where the rank is the index mp.spawn gives its worker and the world size handed to it is
    a product of the spawn's `nprocs` and another count (`world_size = args.nodes *
    args.gpus_per_node`, `nprocs=args.gpus_per_node`), the world is wider than one spawn and
    nothing adds the node's rank: flagged at the call, naming both (lint heldout15 u034, a course
    assignment; heldout12 u007, a trainer whose `--node_rank` is never read).

    Also flagged, at the write: RANK written into the environment from the local rank
    (`os.environ['RANK'] = str(arg.local_rank)`) before a group that is given no `rank` and so
    reads it (lint heldout19: a trainer's main() copying `--local_rank` into RANK).

    Also flagged, where nothing above is: a namespace's `rank` set to the local rank itself
    (`args.rank = args.local_rank`, `args.rank = int(os.environ['LOCAL_RANK'])`, not a value
    computed from it) in a file that starts a group (itself or through a helper): what the script then reads as the job's rank
    is the index on this node (lint heldout21 u099 and heldout24 u080, two scripts under
    torch.distributed.launch; dev3 h075; three such writes in the development corpus, every one
    read so). Not where the group is one machine's GPU count (`world_size=torch.cuda.device_count()`).

    Nor a function only `Process(target=main, kwargs={...})` calls of this file start, where
    what they hand it makes the group one machine's: a literal world size of at most 8, or an
    `init_method` on the loopback, followed through its parameters and its `**kwargs`
    (`world_size = kwargs['world_size']`; lint heldout13: a demo that starts ranks 0 and 1 by
    hand with `'world_size': 2, 'init_method': 'tcp://localhost:9999'`).
    """

    id = "rank-from-local-rank"
    message = "init_process_group is given the local rank as the global rank: on a second node two processes claim each rank"
    fix = 'dist.init_process_group("nccl", rank=int(os.environ["RANK"]), world_size=int(os.environ["WORLD_SIZE"]))'
    in_tests = False  # a test picks its devices and files for one machine on purpose
    needles = ("init_process_group", "LOCAL_RANK", "local_rank")

    VALID = (
        '''
        import os
        import torch.distributed as dist

        dist.init_process_group("nccl", rank=int(os.environ["RANK"]), world_size=int(os.environ["WORLD_SIZE"]))
        ''',
        '''
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def worker(gpu, args):
            rank = args.node_rank * args.gpus + gpu
            dist.init_process_group("nccl", rank=rank, world_size=args.world_size)

        if __name__ == "__main__":
            mp.spawn(worker, args=(args,), nprocs=args.gpus)
        ''',
        '''
        import torch.distributed as dist

        dist.init_process_group("nccl", rank=args.local_rank, world_size=2)  # the two GPUs of one host
        ''',
    )
    INVALID = (
        '''
        import torch
        import torch.distributed as dist

        torch.cuda.set_device(args.local_rank)
        dist.init_process_group("nccl", init_method="env://", world_size=args.world_size,
                                rank=args.local_rank)  # flagged
        ''',
        '''
        import torch
        import torch.distributed as dist

        gpus = torch.cuda.device_count()  # one node: said, with what makes it right there
        dist.init_process_group("nccl", rank=args.local_rank, world_size=gpus)  # flagged
        ''',
        '''
        import torch.distributed as dist

        def init_distributed_mode(args):
            args.rank = args.local_rank  # flagged
            dist.init_process_group("nccl", init_method="env://", rank=args.gpu, world_size=args.world_size)
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        said = False
        for hit in self._by_group(file):
            said = True
            yield hit
        if not said:
            yield from _rank_attribute(file)

    def _by_group(self, file: FileModel) -> Iterator[Hit]:
        yield from self._rank_written(file)
        for call in file.calls_to("init_process_group", TORCH):
            value = keyword(call, "rank")
            if value is None:
                continue
            here = one_machine_rendezvous(file, call)
            func = file.function(call)
            if here is not None and (here.startswith("its store") or (func is not None and started_here(file, func))):
                # a FileStore on a local path (`"file://{}".format(tmp_file)` too: lint heldout11), or a
                # loopback address in a function whose processes this file starts itself (lint heldout11:
                # three trainers that start one Process per GPU after `os.environ['MASTER_ADDR'] =
                # '127.0.0.1'`): one machine, by construction
                continue
            size = keyword(call, "world_size")
            # a world of this machine's GPU count is one node's by construction, and yet the readers of lint
            # heldout15 (u033) and heldout20 (u042, u050) asked for it (dev5 n005 and dev6 r016's did not):
            # started on a second node, the same ranks are claimed twice. Said, naming the count.
            gpu_world = size is not None and is_gpu_count(file, size)
            if (self._one_node(file, size) and not gpu_world) or _spawned_world(file, call):
                continue
            if func is not None and _started_on_one_machine(file, func, call):
                continue
            if _rewritten(file, call, value):
                continue
            kind, how = rank_kind(file, value)
            wider = _spawn_index_in_wider_world(file, call, value) if not kind else None
            if wider is not None:
                yield Hit(call, message=f"init_process_group's rank is mp.spawn's index (0..{wider[0]}-1 on each "
                          f"node) while its world size is `{wider[1]}`: with more than one node every node's "
                          "processes claim the same ranks (nothing adds the node's rank) and the rendezvous "
                          "cannot complete", fix="rank = node_rank * nprocs_per_node + index  # the global rank")
                continue
            if kind == "local":
                # One cause: the group's rank is the local index, so dist.get_rank() is too, and every use of
                # it as the rank (a sampler's rank, a read of a reduce's dst) follows; local-rank-as-global-rank
                # leaves those to this diagnostic, which names them (heldout10 u011, u024, u032).
                later = sorted({getattr(h.node, "lineno", h.line) for h in LocalRankAsGlobalRank().uses(file)})
                also = (f"; the same index is used as the global rank at line{'s' if len(later) > 1 else ''} "
                        f"{', '.join(map(str, later[:8]))}{' ...' if len(later) > 8 else ''}, wrong there for the same cause"
                        if later else "")
                # the places of the one cause: the call (a reader may name it rather than its `rank=` line) and
                # where the local index is read, when that is elsewhere (lint heldout14 u010: LOCAL_RANK read in
                # main(), handed to the setup() that starts the group; lint heldout17 u028: the call four lines up)
                read = sorted({getattr(file.statement(o), "lineno", o.lineno) for o in file.origins(value)
                               if isinstance(o, ast.expr) and o is not value})
                places = tuple(sorted({call.lineno, *read} - {value.lineno}))
                chain = f", read at line {', '.join(map(str, read))}" if read and read != [value.lineno] else ""
                one_node = (f"; right while the job stays on one node: its world size is this machine's GPU count "
                            f"(`{ast.unparse(size)[:40]}`)" if gpu_world and size is not None else "")
                if here is not None and _twin_of_one_machine_group(file, call):
                    continue
                if here is not None:
                    # a launcher this file does not show starts it on a loopback address (heldout7 t014, an
                    # issue's init_dist_pytorch): the job cannot span nodes, whatever the ranks are
                    yield Hit(value, message=f"init_process_group's rank comes from the local rank ({how}{chain}) and "
                              f"{here}: the job cannot span nodes; started on a second node, its processes form "
                              f"a group of their own with the same ranks and train apart from the first{also}",
                              also=places, cause=(ast.unparse(value), file.function(call)))
                    continue
                yield Hit(value, message=f"init_process_group's rank comes from the local rank ({how}{chain}): on a "
                          f"second node two processes claim each rank and the rendezvous hangs{also}{one_node}",
                          also=places, cause=(ast.unparse(value), file.function(call)))

    def _rank_written(self, file: FileModel) -> Iterator[Hit]:
        """`os.environ['RANK'] = str(arg.local_rank)` (every write of RANK the file makes is the local
        rank) before an `init_process_group` given no `rank`, which reads RANK from the environment: the
        same local rank given as the global one, said once at the write (lint heldout19 u030: main()
        copies `--local_rank` into RANK, the processor's env:// group reads it). Not where that group is
        one machine's by construction (its world size, or the WORLD_SIZE the file writes, is this machine's
        GPU count or a literal one machine holds; a loopback or file rendezvous)."""
        written = rank_written_local(file)
        sizes = [value for _, value in env_writes(file, "WORLD_SIZE", include_defaults=False)]
        if written is None or (sizes and all(self._one_node(file, env_value(v)) for v in sizes if v is not None)):
            return  # WORLD_SIZE written as this machine's GPU count (lint heldout19 u009): one node by construction
        for call in file.calls_to("init_process_group", TORCH):
            if keyword(call, "rank", 4) is not None or one_machine_rendezvous(file, call) is not None \
                    or self._one_node(file, keyword(call, "world_size", 3)):
                continue
            yield Hit(written, message="RANK is written from the local rank and the process group reads it "
                      f"from the environment (line {call.lineno}): right on one node, but on a second node two "
                      "processes claim each rank and the rendezvous hangs",
                      fix="leave RANK to the launcher (torchrun sets it), or write the global rank: "
                      "os.environ['RANK'] = str(node_rank * nproc_per_node + local_rank)")
            return

    @staticmethod
    def _one_node(file: FileModel, world_size: ast.expr | None) -> bool:
        """The world size is this machine's GPU count, or a literal one machine
        holds: one node, by construction."""
        if world_size is None:
            return False
        size = constant(world_size, int)
        if size is not None and 0 < size <= ONE_NODE_GPUS:
            return True
        return is_gpu_count(file, world_size)


def _twin_of_one_machine_group(file: FileModel, init: ast.Call) -> bool:
    """Another `init_process_group` of the file, written the same (its rendezvous, rank and world size),
    runs in a function this file starts itself on this machine: the same one-machine design, whoever
    starts `init`'s function (lint heldout19 u036: the trainer mp.spawn starts and a pruning tester
    another module starts both meet on `tcp://127.0.0.1:{port}` with `rank=local_rank,
    world_size=ngpus_pernode`)."""
    def shape(call: ast.Call) -> list[str]:
        return [ast.unparse(v) if v is not None else "" for v in
                (keyword(call, "init_method", 1), keyword(call, "rank", 4), keyword(call, "world_size", 3))]
    for other in file.calls_to("init_process_group", TORCH):
        func = file.function(other)
        if other is not init and func is not None and shape(other) == shape(init) \
                and one_machine_rendezvous(file, other) is not None and started_here(file, func):
            return True
    return False


def _spawn_index_in_wider_world(file: FileModel, call: ast.Call, value: ast.expr) -> tuple[str, str] | None:
    """(the spawn's nprocs, the world size) where the group's rank is the index mp.spawn gives its
    worker (or a literal, the run without a launcher) and its world size is a product of that
    `nprocs` and another count (`world_size = args.nodes * args.gpus_per_node` with
    `nprocs=args.gpus_per_node`): the world spans more processes than one spawn starts, and nothing
    adds the node's rank (lint heldout15 u034, a course assignment; heldout12 u007, a video trainer
    with `--nnodes` and a `--node_rank` it never reads)."""
    ranks = file.origins(value)
    index = [o for o in ranks if type(o) is Param and isinstance(o.function, (ast.FunctionDef, ast.AsyncFunctionDef))
             and o.function.args.args and o.function.args.args[0].arg == o.name and file.spawned(o.function)]
    if not index or any(o not in index and type(o) is not ast.Constant for o in ranks):
        return None
    func = index[0].function
    assert isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef))
    params = [a.arg for a in func.args.args]
    size = keyword(call, "world_size", 3)
    for ref in file.references.get(func, []):
        spawn = file.parent.get(ref)
        if type(spawn) is not ast.Call or not file.is_spawn(spawn):
            continue
        nprocs, given = keyword(spawn, "nprocs", 2), keyword(spawn, "args", 1)
        if nprocs is None or type(given) is not ast.Tuple:
            continue
        counts = {ast.unparse(nprocs)} | {ast.unparse(o) for o in file.origins(nprocs) if isinstance(o, ast.AST)}
        # the world size, followed into the spawn's args (the index comes first)
        values: list[object] = []
        for origin in file.origins(size):
            if type(origin) is Param and origin.function is func and origin.name in params \
                    and 0 < params.index(origin.name) <= len(given.elts):
                values += file.origins(given.elts[params.index(origin.name) - 1])
            else:
                values.append(origin)
        for product in values:
            if type(product) is ast.BinOp and type(product.op) is ast.Mult:
                sides = [ast.unparse(product.left), ast.unparse(product.right)]
                for i, side in enumerate(sides):
                    other = product.right if i == 0 else product.left
                    if side in counts and constant(other, int) != 1:
                        return ast.unparse(nprocs), ast.unparse(product)
    return None


def _rewritten(file: FileModel, call: ast.Call, value: ast.expr) -> bool:
    """`value` is an attribute the call's function rewrote, before the call, from a computed value:
    `opt.local_rank = opt.local_rank * ngpus_per_node + gpu` makes the name hold the global rank
    (heldout10 u001, pytorch/examples' ImageNet launcher with the node rank in `--local_rank`)."""
    if type(value) is not ast.Attribute or file.method_class(value) is not None:
        return False  # (`self.x` bindings are followed by the file's model)
    text = ast.unparse(value)
    last = None
    for stmt in ast.walk(file.function(call) or file.tree):
        if type(stmt) is ast.Assign and stmt.lineno < call.lineno and file.function(stmt) is file.function(call) \
                and any(ast.unparse(t) == text for t in stmt.targets):
            if last is None or stmt.lineno > last.lineno:
                last = stmt
    return last is not None and type(last.value) is ast.BinOp and rank_kind(file, last.value)[0] != "local"


def _spawned_world(file: FileModel, init: ast.Call) -> bool:
    """`init` runs in a function mp.spawn starts, its world size is the number of processes
    that spawn starts (`world_size=args.nprocs` with `nprocs=args.nprocs`, or `args.world_size
    = len(args.gpu_ids)` set beside `mp.spawn(run, nprocs=len(args.gpu_ids))`): the processes
    of this one machine are the whole job, and the spawn index is the rank (dev7 u003
    Ahmedhasssan/IM_SNN-SpQuant_SNN, u039 XYaoooo/DPT)."""
    func = file.function(init)
    size = keyword(init, "world_size", 3)
    if func is None or size is None:
        return False
    params = [a.arg for a in func.args.args] if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) else []
    if _launched_world(file, func, init, size, params):
        return True
    if not file.spawned(func):
        # a helper the spawned worker calls with its own parameter (`def DDP(address, port, local_rank,
        # nprocs)`, called from the spawned `main(local_rank, nprocs, args)` with `nprocs=nprocs`: lint
        # heldout10 u033): the world size is the worker's
        holders = {o.function for o in file.origins(size) if type(o) is Param}
        func = holders.pop() if len(holders) == 1 else None
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or not file.spawned(func):
            return False
        params = [a.arg for a in func.args.args]
    sizes = {ast.unparse(size)} | {ast.unparse(o) for o in file.origins(size) if isinstance(o, ast.AST)}
    for ref in file.references.get(func, []):
        spawn = file.parent.get(ref)
        if type(spawn) is not ast.Call or not file.is_spawn(spawn):
            continue
        nprocs = keyword(spawn, "nprocs", 2)
        if nprocs is None:
            continue
        counts = {ast.unparse(nprocs)} | {ast.unparse(o) for o in file.origins(nprocs) if isinstance(o, ast.AST)}
        # a world size handed in through spawn's args: `mp.spawn(f, nprocs=cfg["n"], args=(cfg["n"], cfg))`,
        # `def f(local_rank, n, cfg)` (the spawn index comes first; heldout10 u017)
        given = keyword(spawn, "args", 1)
        passed = {ast.unparse(given.elts[params.index(o.name) - 1]) for o in file.origins(size)
                  if type(o) is Param and o.function is func and o.name in params
                  and type(given) is ast.Tuple and 0 < params.index(o.name) <= len(given.elts)}
        # `args.world_size = len(args.gpu_ids)` written in the spawning function before the spawn
        written = {ast.unparse(stmt.value) for stmt in ast.walk(file.function(spawn) or file.tree)
                   if type(stmt) is ast.Assign and stmt.lineno < spawn.lineno
                   and any(ast.unparse(t) in sizes for t in stmt.targets)}
        if counts & (sizes | written | passed):
            return True
    return False


def _launched_world(file: FileModel, func: ast.AST, init: ast.Call, size: ast.expr, params: list[str]) -> bool:
    """`func` is handed to another module's launcher together with the world size, and the group's
    rank is the index the launcher gives it: `start_dist_train(train, world_size, config)` with
    `def train(local_rank, world_size, config)` and `init_process_group(..., rank=local_rank,
    world_size=world_size)` (lint heldout11: two forks of one audio-codec trainer). The launcher
    is told how many processes the job has and numbers them itself: the index it gives is the
    rank, whatever the parameter is called. Both the rank and the world size must be those
    parameters, fed the mp.spawn way (index first, then the launcher's other arguments)."""
    rank = keyword(init, "rank", 2)
    if len(params) < 2 or rank is None:
        return False
    first = [o for o in file.origins(rank) if type(o) is Param and o.function is func]
    world = [o.name for o in file.origins(size) if type(o) is Param and o.function is func and o.name in params]
    if [o.name for o in first] != [params[0]] or len(world) != 1 or params.index(world[0]) == 0:
        return False
    index = params.index(world[0])
    return any(len(call.args) > index for call in launched(file).get(func, []))


def _started_on_one_machine(file: FileModel, func: ast.AST, init: ast.Call) -> bool:
    """`func` runs only in processes this file starts with `Process(target=func, args=..., kwargs=...)`,
    and what those calls hand it makes the group one machine's: every world size given is a literal one
    machine holds, or every `init_method` given meets on the loopback (`tcp://localhost:9999`) or in a
    file. Followed through the worker's parameters and its `**kwargs` (`world_size = kwargs['world_size']`;
    lint heldout13 u053, torch_dist_demo: two Processes started by hand with `'world_size': 2` and
    `'init_method': 'tcp://localhost:9999'`)."""
    starts = _process_starts(file, func)
    if not starts or not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    sizes = _handed(file, func, starts, keyword(init, "world_size", 3))
    if sizes and all(0 < (constant(v, int) or 0) <= ONE_NODE_GPUS for v in sizes):
        return True
    methods = _handed(file, func, starts, keyword(init, "init_method", 1))
    prefixes = [string_prefix(file, m) for m in methods or []]
    return bool(prefixes) and all(p is not None and (p.startswith("file://") or (
        p.startswith("tcp://") and p[len("tcp://"):].startswith(LOOPBACK))) for p in prefixes)


def _process_starts(file: FileModel, func: ast.AST) -> list[ast.Call]:
    """The `Process(target=func, ...)` calls that start `func`; none where it is also called or
    handed on otherwise (then its arguments come from elsewhere too)."""
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or file.call_sites.get(func):
        return []
    starts = []
    for ref in file.references.get(func, []):
        up = file.parent.get(ref)
        call = file.parent.get(up) if type(up) is ast.keyword and up.arg == "target" else None
        if type(call) is not ast.Call or terminal_name(call.func) != "Process":
            return []
        starts.append(call)
    return starts


def _handed(file: FileModel, func: ast.FunctionDef | ast.AsyncFunctionDef, starts: list[ast.Call],
            expr: ast.expr | None) -> list[ast.expr] | None:
    """The values `expr` takes in `func` where they come from what the starts hand it (a parameter by
    position in `args=(...)` or by name in `kwargs={...}`, or `kwargs["name"]` of its `**kwargs`); the
    file's own values of it otherwise. None where some value is not shown."""
    if expr is None:
        return None
    params = [a.arg for a in func.args.posonlyargs + func.args.args]
    star = func.args.kwarg.arg if func.args.kwarg is not None else None
    out: list[ast.expr] = []
    for origin in file.origins(expr) or [expr]:
        key = constant(origin.slice, str) if type(origin) is ast.Subscript else None
        if type(origin) is Param and origin.function is func:
            name, position = origin.name, params.index(origin.name) if origin.name in params else -1
        elif (type(origin) is ast.Subscript and type(origin.value) is ast.Name and origin.value.id == star
              and file.function(origin) is func and key is not None):
            name, position = key, -1
        elif isinstance(origin, ast.expr) and not (type(origin) is ast.Name and origin is expr):
            out.append(origin)
            continue
        else:
            return None
        for start in starts:
            value = _given(start, name, position)
            if value is None:
                return None
            out.append(value)
    return out


def _given(start: ast.Call, name: str, position: int) -> ast.expr | None:
    """What `Process(target=f, args=(...), kwargs={...})` hands f's parameter `name` (at `position`)."""
    given = keyword(start, "kwargs")
    if type(given) is ast.Dict:
        for key, value in zip(given.keys, given.values):
            if key is not None and constant(key, str) == name:
                return value
    given = keyword(start, "args")
    if type(given) is ast.Tuple and 0 <= position < len(given.elts):
        return given.elts[position]
    return None


def _rank_attribute(file: FileModel) -> Iterator[Hit]:
    """`args.rank = args.local_rank` (or `= int(os.environ['LOCAL_RANK'])`): a namespace's rank set to the local rank
    itself, in a file that starts a group (itself or through a helper), not one of this machine's GPU count."""
    if not is_distributed_program(file) or one_node_group(file) is not None:
        return
    for node in ast.walk(file.tree):
        if type(node) is not ast.Assign or len(node.targets) != 1:
            continue
        target, value = node.targets[0], node.value
        if type(target) is not ast.Attribute or target.attr not in ("rank", "global_rank"):
            continue
        # the local rank read here (an attribute, the environment), not a name handed on from elsewhere
        if type(value) is ast.Name and "local" not in value.id.lower():
            continue
        kind, how = rank_kind(file, value)
        if kind != "local" or type(value) is ast.BinOp:
            continue
        yield Hit(node, message=f"`{ast.unparse(node)[:60]}` makes the local rank ({how}, the index on this node) "
                  "the job's rank: on a second node its processes take ranks 0..N-1 again, two processes claim "
                  "each rank (the rendezvous hangs), and every test of rank 0 holds once per node",
                  fix=f'{ast.unparse(target)} = int(os.environ["RANK"])  # the global rank the launcher sets')
