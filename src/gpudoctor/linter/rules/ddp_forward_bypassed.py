from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import replace

from gpudoctor.linter.arms import ruled_out
from gpudoctor.linter.idioms import is_optimizer, prepared_model, wrapper_kind
from gpudoctor.linter.model import Binding, FileModel, position, terminal_name
from gpudoctor.linter.rule import ERROR, WARNING, Hit, Rule
from gpudoctor.linter.rules.ddp_forward_on_one_rank import _no_grad
from gpudoctor.linter.rules.wrapper_method_call import WRAPPER_NAMES, WrapperMethodCall, _wrapping

# The file all-reduces gradients itself (`dist.all_reduce(p.grad)`): bypassing the wrapper is its design.
MANUAL_SYNC = re.compile(r"all_reduce\([^)\n]*\.grad\b|all_reduce_coalesced\([^)\n]*grad")
# What the wrapper's `.module` is handed to without a forward running: a copy, a save, a test of its type.
NOT_A_FORWARD = frozenset({
    "isinstance", "hasattr", "getattr", "setattr", "type", "id", "print", "len", "str", "repr", "deepcopy", "copy",
    "save", "load_state_dict", "state_dict", "unwrap_model", "count_parameters", "update", "summary", "watch",
})
# Attributes read on `.module` that are no forward (nn.Module's own methods, less `forward`).
MODULE_METHODS = WRAPPER_NAMES - {"forward"}
# nn.Module's own private methods and state: no forward of the user's model.
MODULE_PRIVATE = frozenset({
    "_apply", "_parameters", "_buffers", "_modules", "_get_name", "_load_from_state_dict", "_save_to_state_dict",
    "_named_members", "_register_state_dict_hook", "_register_load_state_dict_pre_hook", "_replicate_for_data_parallel",
    "_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_version", "_non_persistent_buffers_set",
    "_state_dict_hooks", "_load_state_dict_pre_hooks", "_slow_forward", "_orig_mod",
})


def _module_private(name: str) -> bool:
    """`name` is nn.Module's own (`_apply`, `_modules`, a dunder), not a method of the user's model whose name
    starts with `_` (`model.module._loss(input)` is a forward: lint heldout21 u048)."""
    return name in MODULE_PRIVATE or (name.startswith("__") and name.endswith("__"))


class DdpForwardBypassed(Rule):
    """The training loss comes from a forward of the DistributedDataParallel
    wrapper's `.module` (`loss = model.module.compute_loss(x)`,
    `model.module(x)`, a loss helper handed `model.module`), and the
    wrapper itself is never called in that step: DDP prepares its gradient
    all-reduce in its own `forward`, so `loss.backward()` fills each
    rank's gradients without averaging them, and the replicas train apart
    in silence. Asked for by issue 41's corpus (dev7 u031:
    `loss_obj = model.module.compute_loss(input_ids, attention_mask)`;
    heldout10 u028: `loss_dict, info_dict = model.module.get_loss(batch)`;
    heldout10 u032: `forward_UnifiedVoice(self.model.module, ...)` in a
    trainer's `_train_step`, whose losses its caller backpropagates).

    An error where the file decides it: every value of the wrapper there is
    a `DistributedDataParallel(...)`, and the value the forward returns
    reaches a `.backward()` (or `accelerator.backward(...)`) in the same
    function, or in a function of the file that calls it and takes what it
    returns. A warning, naming the line, where the name is a DDP wrapper on
    one path only (`if args.distributed: model = DDP(model)`).

    A warning where `.module`'s own step is handed the batch of the loop over a loader that never
    calls the wrapper (`trainer.module.step(batch, batch_idx, epoch, phase=phase)`, lint heldout20
    u027): its backward is inside that method, not in view.

    Also where the step runs inside the method of `.module` itself: it is handed an optimizer
    (`ddp_model.module.OneEpoch(optimizer, user, pos, neg)`, lint heldout13 u061), or a method
    named for training is handed a loader (`model.module.train(train_loader, val_data=...)`,
    the model's own loop, not nn.Module's one-flag `train`: lint heldout12 u017).

    And where the wrapper is kept under another name and the step calls the module it wraps
    (`ddp_net = DDP(my_net, device_ids=[rank])`, then `y_hat = my_net(x)` and `loss.backward()`,
    lint heldout14 u050): the same bypass without `.module`. Not where the name is rebound to
    the wrapper (`model = DDP(model)`), nor where that step calls the wrapper too. A script that
    wraps at its top and trains in a function it calls below (`model_parallel =
    DistributedDataParallel(model)`, then `train()` running `model(...)`: lint heldout15 u054) is
    the same, and so is a method of the module it wraps (`loss = model.compute_loss(x, y)` beside
    `ddp_model = DDP(model, ...)`, the wrapper called only in rank 0's validation: lint heldout17
    u049). Where the wrapper's name is never read at all, a training function of another module
    (its name says it trains) handed the module it wraps and an optimizer over that module's
    parameters is the same bypass (`ddpmodel = DDP(model, ...)`, then `utils.train_epoch(...,
    model=model, optimizer=optimizer)`: lint heldout17 u017), and so is the file's own function handed
    that module, in which it runs the forward whose loss is backpropagated (`model = DDP(Model, ...)`
    never read, then `train(Model=Model, ...)`: lint heldout18 u036).

    Arms the file's own constants never take count for nothing (`USE_TEST_MODEL = True`, then the test
    model trained bare beside `ddp_model = DDP(model, ...)` while the other arm, never run, calls the
    wrapper: lint heldout26d u057): neither their bindings nor their calls of the wrapper.

    A submodule's forward reached through `.module` is one too (`txt = model_ddp.module.film.clip.encode_text(ids)`,
    its loss backpropagated in the warm-up epochs: lint heldout26 u010), up to three attributes down.

    A method of the user's model whose name starts with `_` is a forward like any other
    (`loss = model.module._loss(input)`, lint heldout21 u048; not nn.Module's own `_apply`,
    `_modules`, ...), and where DataParallel wraps the name on another path (`elif args.n_gpu > 1:`),
    the DDP path is still said, as a warning naming it.

    The wrapper's `.module` kept under a name of its own is the same `.module`: a forward through
    `network = ddp_network.module` at the top of a step (said at that line, where the step unwraps
    what it is handed: lint heldout18 u041), or through `model_without_ddp = model.module` bound on
    the distributed path (the bare model on the other: lint heldout17 u052), where every other value
    the function gives that name is the bare model. And a function whose name says it trains, handed
    the bare module (or that name) and an optimizer built over its parameters, but not the wrapper,
    runs its step on the bare module (`train_one_epoch(mvit_without_ddp, criterion, loader,
    optimizer, ...)` while only the evaluation gets `mvit`: lint heldout18 u003).

    So is a name bound as `raw_model = model.module if ddp else model` where the test is the one the
    wrap runs under (`if ddp: model = DDP(model, ...)`), or asks for the wrapper itself
    (`hasattr(model, 'module')`, `isinstance(model, DDP)`): the name is the bare module wherever the
    wrapper exists, so a training forward through it (`logits, loss = raw_model(x, y)`, lint heldout21
    u054, nanoGPT's template) bypasses DDP on every distributed run: an error. Not another test
    (`model.module if args.unwrap else model`): with that setting off, DDP's forward runs.

    A warning where the wrapper is the model accelerate's `accelerator.prepare(...)` returned: under a
    multi-process launch that is a DistributedDataParallel wrapper, and a training forward through its
    `.module` (`posterior = vae.module.encode(images)`, its loss to `accelerator.backward(loss)`: lint
    heldout30 u004, a VAE fine-tune; heldout29 u011, a GAN's discriminator losses) skips DDP's forward as
    above; run as one process prepare hands the model back, which has no `.module` at all.

    One diagnostic per wrapper and training step (its loop, else its function), naming the other
    lines: a GAN step that runs the generator and the discriminator through `model.module` and
    backpropagates two losses is one bypassed wrapper (lint heldout15 u031).

    The forward's value is followed to the backward through the bindings that reach it: a
    validation loop that runs the bare module with no backward of its own, beside a training loop
    that binds the same names again from the wrapper before its backward reads them, is no
    training step (lint heldout20 u033: `predictions = efs_model(data)` under the comment that
    unequal validation shards must not enter DDP's forward).

    Not flagged: `.module` read for nn.Module's own methods (`state_dict`,
    `parameters`, `eval`, ...), for a save, a copy or an EMA update; a
    forward under `torch.no_grad()` / `inference_mode()` (evaluation); a
    step that also calls the wrapper (`out = model(x)`, then
    `model.module.loss(out, y)`: DDP's forward ran), hands the bare
    wrapper to a helper or calls a function of the file that calls it; DataParallel's `.module` (no gradient all-reduce
    to miss); a file that all-reduces `.grad` itself. Nor a wrapper whose gradients no optimizer
    steps, where the file shows every optimizer: the optimizers the step's function steps are built
    from torch.optim in view, every one of the file is given parameters it shows, and none holds the
    wrapper's, or the one that does clears them with zero_grad() after this loss and before it steps
    (lint heldout17 u021: an agent's embedding feeds a Q network whose optimizer alone steps; u023:
    the generator's loss reaches the encoder-decoder, whose optimizer clears its gradients first).
    Nothing diverges there: the wrapper's weights change by no unaveraged gradient.
    """

    id = "ddp-forward-bypassed"
    severity = ERROR  # a certain silent divergence: no gradient is averaged
    in_tests = False  # tests bypass the wrapper on purpose, to compare against a manual reduction (nanotron)
    message = "the training forward runs on the DDP wrapper's .module: DDP never all-reduces the gradients"
    fix = "loss = model(batch)  # call the DDP wrapper; put the loss computation in the module's forward"
    needles = (".module",)

    VALID = (
        '''
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(net.cuda(), device_ids=[rank])
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        torch.save(model.module.state_dict(), "ckpt.pt")
        with torch.no_grad():
            val = model.module.compute_loss(x_val)
        ''',
        '''
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(net.cuda(), device_ids=[rank])
        for x, y in loader:
            out = model(x)
            loss = model.module.loss_fn(out, y)  # the wrapper's forward ran
            loss.backward()
        ''',
    )
    INVALID = (
        '''
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(net.cuda(), device_ids=[rank])
        for batch in loader:
            loss = model.module.compute_loss(batch)  # flagged
            loss.backward()
            optimizer.step()
        ''',
    )

    def relevant(self, text: str) -> bool:
        return "DistributedDataParallel" in text or (".module" in text and "prepare(" in text)

    def check(self, file: FileModel) -> Iterator[Hit]:
        if MANUAL_SYNC.search(file.text):
            return
        yield from self._plain_module_called(file)
        # one diagnostic per wrapper and step: a step that runs five submodules through `model.module`
        # is one mistake, said once with its other lines, also where it backpropagates two losses
        # (lint heldout15 u031: the generator's `loss_g.backward()` and the discriminator's
        # `loss_d.backward()` in one loop, six errors and then two for one bypassed wrapper)
        groups: dict[tuple[str, int], list[tuple[Hit, ast.Call]]] = {}
        for key, hit, call in self._module_forwards(file):
            groups.setdefault(key, []).append((hit, call))
        for hits in groups.values():
            (first, call), *rest = sorted(hits, key=lambda pair: (position(pair[0].node or pair[1]), position(pair[1])))
            if rest:
                lines = ", ".join(str(c.lineno) for _, c in rest)
                first = replace(first, message=f"{first.message} (the same at lines {lines})")
            yield first

    def _module_forwards(self, file: FileModel) -> Iterator[tuple[tuple[str, int], Hit, ast.Call]]:
        """Each forward run through `W.module` whose loss is backpropagated, keyed by the wrapper
        and the step (the innermost loop, else the function) it runs in."""
        kinds = WrapperMethodCall()
        for node in ast.walk(file.tree):
            if type(node) is not ast.Attribute or node.attr != "module" or type(node.ctx) is not ast.Load:
                continue
            if type(node.value) is not ast.Name and file.method_class(node.value) is None:
                continue
            where = _unwrapped_where_wrapped(file, node)
            for use, shown in [(node, f"{ast.unparse(node.value)}.module"), *_aliases(file, node, kinds)]:
                yield from self._module_forward(file, node, use, shown, kinds, where if use is not node else None)

    @staticmethod
    def _said_at(file: FileModel, node: ast.Attribute, use: ast.expr, call: ast.Call) -> ast.AST:
        """Where the bypass is said: at the forward, or at `name = W.module` where the step itself
        unwraps the wrapper it is handed and runs its forwards through that name (lint heldout18
        u041: `network = ddp_network.module` at the top of train_step)."""
        if use is node:
            return call
        func = file.function(call) or file.tree
        same = file.function(node) is file.function(call) and _step(file, node, func) is _step(file, call, func)
        return file.statement(node) if same else call

    def _module_forward(self, file: FileModel, node: ast.Attribute, use: ast.expr, shown: str,
                        kinds: WrapperMethodCall, where: ast.expr | None = None,
                        ) -> Iterator[tuple[tuple[str, int], Hit, ast.Call]]:
        """The training forward (if any) run through `use`: `node` (`W.module`) itself, or a name
        bound to it (`network = ddp_network.module`, written `shown`); `where`, the test of `raw =
        W.module if T else W` that is the wrap's own (`_unwrapped_where_wrapped`)."""
        call, what = self._forward(file, use, shown)
        if call is None or _no_grad(file, call, call):
            return
        holder = ast.unparse(node.value)
        names = _names_of(file, node.value) | ({use.id} if type(use) is ast.Name else set())
        backward = self._backward(file, call, holder) or _steps_inside(file, call, use) \
            or _epoch_handed(file, call, use, holder, names)
        unseen = None if backward is not None else _steps_on_batch(file, call, use, holder)
        backward = backward or unseen
        if backward is None:
            return
        if type(backward) is ast.Call and not _stepped(file, names, backward):
            return  # no optimizer steps what this loss leaves in the wrapper's gradients
        found = kinds._kinds(file, node.value, node, 0)
        severity = ""
        prepared = prepared_model(file, node.value) if found == {""} else None
        if found == {"DistributedDataParallel"}:
            seen = f"{holder} is a DistributedDataParallel wrapper"
        elif prepared is not None:
            # accelerate's prepare wraps the model in DDP under a multi-process launch; under one process it
            # hands the model back, which has no `.module` (lint heldout30 u004, heldout29 u011)
            seen = (f"{holder} is the model `accelerator.prepare(...)` returned (line {prepared.lineno}), a "
                    "DistributedDataParallel wrapper under a multi-process launch (the `.module` it reads exists "
                    "only there)")
            severity = WARNING
        elif found <= {"DistributedDataParallel", "DataParallel", ""}:
            # (DataParallel on another path, `elif args.n_gpu > 1:`, lint heldout21 u048: said for the DDP one)
            path = _wrapping(file, node.value, node, 0)
            if path is None or path[0] != "DistributedDataParallel":
                return
            seen = f"{holder} is a DistributedDataParallel wrapper on the path through line {path[1]}"
            severity = WARNING
            if where is not None:
                # the name is the bare module exactly where the wrapper exists: no path runs DDP's forward
                seen = (f"{holder} is a DistributedDataParallel wrapper wherever `{ast.unparse(where)[:40]}` holds "
                        f"(line {path[1]})")
                severity = ""
        else:
            return
        at_line = f"line {backward.lineno}" if backward.lineno != call.lineno else "this line"
        tail = "" if not severity else "; lint cannot tell whether this step runs on that path"
        if unseen is not None:
            # the backward runs inside the model's own step, which the file does not show (lint heldout20 u027)
            severity, tail = WARNING, f"{tail}, if {what} backpropagates (its body is not in view)"
        step = (f"the loss backpropagated at {at_line} comes from {what}" if type(backward) is ast.Call else
                f"the training step runs inside {what}, handed `{ast.unparse(backward)[:40]}`")
        loop = _step(file, call, file.function(call) or file.tree)
        at = self._said_at(file, node, use, call)
        if at is not call:
            step = f"{step} (line {call.lineno})"
        if use is not node:
            seen = f"{seen}, {shown} = {ast.unparse(node)} (line {node.lineno}) its bare module"
        yield (holder, id(loop)), Hit(at, severity=severity, message=(
            f"{seen}, and {step}, never through the wrapper: "
            f"DDP's forward does not run, so its gradient all-reduce never fires and each rank trains "
            f"its own diverging copy{tail}"),
            fix=f"call {holder}(...) itself (a forward that returns the loss), not {holder}.module"), call

    def _plain_module_called(self, file: FileModel) -> Iterator[Hit]:
        """`ddp_net = DDP(my_net, device_ids=[rank])`, then the step's `y_hat = my_net(x)` whose loss is
        backpropagated, and `ddp_net` never called in that step (lint heldout14 u050,
        KnurpsBram/pytorch_dataparallel_sandbox multi_gpu.py): the module the wrapper holds runs
        its own forward, DDP's never does, so no gradient is all-reduced. Only where the wrapper is
        kept under another name in the same function, and the module's name still holds the value
        it was given (not rebound to the wrapper, `model = DDP(model)`)."""
        for build in file.calls:
            if wrapper_kind(file, build) != "DistributedDataParallel" or not build.args \
                    or type(build.args[0]) is not ast.Name or ruled_out(file, build):
                continue
            module = build.args[0]
            target = file.parent.get(build)
            if type(target) is not ast.Assign or len(target.targets) != 1 or type(target.targets[0]) is not ast.Name \
                    or target.targets[0].id == module.id:
                continue
            holder, scope = target.targets[0].id, file.function(build)
            given = _live_origins(file, module)
            unused = next((call for call in file.calls if self._after(file, call, build, scope)
                           and (_trains_apart(file, call, module, given) or _trains_here(file, call, module, given))),
                          None) if _never_read(file, holder, scope) else None
            if unused is not None:
                inside = _trains_here(file, unused, module, given)
                does = (f"this call of the file's own {ast.unparse(unused.func)}() gets {module.id}, the module it "
                        f"wraps, whose forward there feeds the loss backpropagated at line {inside.lineno}"
                        if inside is not None else
                        f"this training call gets {module.id}, the module it wraps, and an optimizer over its "
                        "parameters")
                yield Hit(unused, message=(
                    f"{holder} = DistributedDataParallel({module.id}, ...) (line {build.lineno}) is never used: "
                    f"{does}, so DDP's forward never runs, its gradient all-reduce never fires and each "
                    "rank trains its own diverging copy"),
                    fix=f"{module.id} = DistributedDataParallel({module.id}, ...)  # train the wrapper")
                continue
            for call in file.calls:
                bare = call.func.value if type(call.func) is ast.Attribute else call.func
                if type(bare) is not ast.Name or bare.id != module.id \
                        or not self._after(file, call, build, scope) \
                        or _live_origins(file, bare) != given or _no_grad(file, call, call):
                    continue
                if type(call.func) is ast.Attribute and (call.func.attr in MODULE_METHODS
                                                         or call.func.attr.startswith("_")):
                    continue  # nn.Module's own methods (`model.train()`, `model.state_dict()`): no forward
                backward = self._backward(file, call, holder)
                if backward is None or not _stepped(file, {holder, f"{holder}.module", module.id}, backward):
                    continue
                shown = ast.unparse(call.func)
                where = f"line {backward.lineno}" if backward.lineno != call.lineno else "this line"
                yield Hit(call, message=(
                    f"{module.id} is the module wrapped as {holder} = DistributedDataParallel({module.id}, ...) "
                    f"(line {build.lineno}), and the loss backpropagated at {where} comes from {shown}(...), "
                    f"never through {holder}: DDP's forward does not run, so its gradient all-reduce never fires "
                    "and each rank trains its own diverging copy"),
                    fix=f"{holder}(...)  # call the DDP wrapper (a forward that returns the loss), not the module it wraps")
                break

    @staticmethod
    def _after(file: FileModel, call: ast.Call, build: ast.Call, scope: ast.AST | None) -> bool:
        """`call` runs after the wrap `build`: below it in the same function, or, for a wrap at the
        top of a script, in a function whose every call in the file is a module-level statement
        below the wrap (lint heldout15 u054: `model_parallel = DistributedDataParallel(model)` at
        the top, then `train()` at the end runs `model(...)`)."""
        func = file.function(call)
        if func is scope:
            return (call.lineno, call.col_offset) > (build.lineno, build.col_offset)
        if scope is not None or not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                or file.function(func) is not None or file.references.get(func):
            return False
        sites = file.call_sites.get(func, [])
        return bool(sites) and all(file.function(site) is None and site.lineno > build.lineno for site, _ in sites)

    @staticmethod
    def _forward(file: FileModel, node: ast.expr, shown: str) -> tuple[ast.Call | None, str]:
        """The call that runs a forward of `node` (`W.module`, or a name bound to it, written
        `shown`): `W.module(x)`, `W.module.method(x)` (not one of nn.Module's own), a submodule's
        (`W.module.film.clip.encode_text(x)`, up to three attributes down), or a helper handed `W.module`."""
        parent = file.parent.get(node)
        if type(parent) is ast.Call and parent.func is node:
            return parent, f"{shown}(...)"
        if type(parent) is ast.Attribute and parent.attr == "train":
            call = file.parent.get(parent)
            if isinstance(call, ast.Call) and call.func is parent and _own_train_loop(call):
                return call, f"{shown}.train(...)"  # the model's own loop, not nn.Module.train
        if type(parent) is ast.Attribute and parent.attr not in MODULE_METHODS and not _module_private(parent.attr):
            call = file.parent.get(parent)
            # a submodule's forward through the chain (`W.module.film.clip.encode_text(ids)`, lint heldout26 u010)
            for _ in range(3):
                if type(call) is not ast.Attribute or call.attr in MODULE_METHODS or _module_private(call.attr):
                    break
                parent, call = call, file.parent.get(call)
            if type(call) is ast.Call and call.func is parent:
                return call, f"{shown}.{ast.unparse(parent)[len(ast.unparse(node)) + 1:]}(...)"
            return None, ""
        if type(parent) is ast.Call and (node in parent.args or any(k.value is node for k in parent.keywords)):
            name = parent.func.attr if type(parent.func) is ast.Attribute else getattr(parent.func, "id", "")
            if name and name not in NOT_A_FORWARD:
                return parent, f"{name}({shown}, ...)"
        return None, ""

    def _backward(self, file: FileModel, call: ast.Call, holder: str) -> ast.Call | None:
        """The `.backward()` the forward's value reaches: in its own function, or in a function of
        the file that calls that one and takes what it returns. None where the step also calls the
        wrapper itself or hands it on (DDP's forward may run there)."""
        func = file.function(call) or file.tree  # (a script's loop at the module's top)
        if self._calls_wrapper(file, _step(file, call, func), holder):
            return None
        tainted = _flow(func, {id(call)}, set())
        found = _reaching_backward(file, func, tainted, {id(call)})
        if found is not None:
            return found
        if not any(type(r) is ast.Return and r.value is not None and _mentions(r.value, tainted, {id(call)})
                   for r in ast.walk(func)):
            return None
        for site, _ in file.call_sites.get(func, []):
            caller = file.function(site) or file.tree
            if self._calls_wrapper(file, _step(file, site, caller), holder):
                continue
            found = _reaching_backward(file, caller, _flow(caller, {id(site)}, set()), {id(site)})
            if found is not None:
                return found
        return None

    @staticmethod
    def _calls_wrapper(file: FileModel, step: ast.AST, holder: str, depth: int = 0) -> bool:
        """`step` calls the wrapper (`model(x)`, `model.forward(x)`), hands it to a call as is (not
        the call that builds it), or calls a function of the file that does (`self._forward(batch)`
        reading `self.model(batch)`)."""
        for node in ast.walk(step):
            if type(node) is not ast.Call or wrapper_kind(file, node) or ruled_out(file, node):
                continue  # (a call in an arm the file's constants never take runs no forward: lint heldout26d u057)
            target = ast.unparse(node.func)
            if target in (holder, f"{holder}.forward"):
                return True
            if any(ast.unparse(a) == holder for a in [*node.args, *(k.value for k in node.keywords)]):
                return True
            callees = [callee for callee, _ in file.callees(node) if callee is not step] if depth < 2 else []
            if any(DdpForwardBypassed._calls_wrapper(file, callee, holder, depth + 1) for callee in callees):
                return True
        return False


def _step(file: FileModel, node: ast.AST, func: ast.AST) -> ast.AST:
    """The training step around `node`: its innermost loop within `func`, else `func`
    (dev7 u031: the optimizer built from the wrapper before the loop is no forward)."""
    return next(iter(file.enclosing_loops(node)), func)


def _mentions(expr: ast.AST, names: set[str], nodes: set[int]) -> bool:
    """`expr` reads one of `names` or contains one of `nodes`, other than through `.detach()` /
    `.item()` (a value cut from the graph: no gradient flows from it)."""
    if type(expr) is ast.Call and type(expr.func) is ast.Attribute and expr.func.attr in ("detach", "item"):
        return False
    if id(expr) in nodes or (type(expr) is ast.Name and type(expr.ctx) is ast.Load and expr.id in names):
        return True
    return any(_mentions(child, names, nodes) for child in ast.iter_child_nodes(expr))


def _flow(func: ast.AST, nodes: set[int], names: set[str]) -> set[str]:
    """The names in `func` bound, directly or through other bindings, from one of `nodes`."""
    names = set(names)
    assigns = [n for n in ast.walk(func) if type(n) in (ast.Assign, ast.AugAssign, ast.AnnAssign)]
    for _ in range(4):
        before = len(names)
        for stmt in assigns:
            value = getattr(stmt, "value", None)
            if value is None or not _mentions(value, names, nodes):
                continue
            targets = stmt.targets if type(stmt) is ast.Assign else [stmt.target]  # type: ignore[attr-defined]
            for target in targets:
                names |= {n.id for n in ast.walk(target) if type(n) is ast.Name}
        if len(names) == before:
            break
    return names


def _backward_in(func: ast.AST, names: set[str], nodes: set[int]) -> ast.Call | None:
    """A `x.backward()` (or `accelerator.backward(x)`, `scaler.scale(x).backward()`) in `func`
    on a value that reads one of `names` or contains one of `nodes`."""
    for node in ast.walk(func):
        if type(node) is not ast.Call or type(node.func) is not ast.Attribute or node.func.attr != "backward":
            continue
        if _mentions(node.func.value, names, nodes) or any(_mentions(a, names, nodes) for a in node.args[:1]):
            return node
    return None


def _reaching_backward(file: FileModel, func: ast.AST, names: set[str], nodes: set[int]) -> ast.Call | None:
    """`_backward_in`, where the value backpropagated is the forward's by the bindings that reach the
    backward: a name bound again before the backward reads it carries that binding's value, not the
    forward's (lint heldout20 u033: the validation loop's `predictions = efs_model(data)`, no backward
    there, and the training loop's `loss.backward()`, whose `predictions` is `ddp_model(data)` of its
    own batch, bound again before every read)."""
    for node in ast.walk(func):
        if type(node) is not ast.Call or type(node.func) is not ast.Attribute or node.func.attr != "backward":
            continue
        operands: list[ast.AST] = [node.func.value, *node.args[:1]]
        if any(_mentions(o, names, nodes) for o in operands) and _reached(file, func, operands, names, nodes):
            return node
    return None


# Methods that change the object they are called on: a container a forward's output is put in.
MUTATORS = frozenset({"append", "extend", "insert", "update", "add", "setdefault"})


def _reached(file: FileModel, func: ast.AST, exprs: list[ast.AST], names: set[str], nodes: set[int]) -> bool:
    """Whether the value of `exprs` may come from one of `nodes`, followed back through the bindings
    that reach each read of one of `names` (`file.lookup`: the last before the read, in its arms).
    True also where the chain leaves what bindings show: a name whose object `func` changes in place
    with such a value (`outs.append(out)`, `outs[k] = out`, `self.out = out`)."""
    changed = _changed_in_place(func, names, nodes)
    todo, seen = list(exprs), set()
    while todo:
        expr = todo.pop()
        for sub in _read_nodes(expr):
            if id(sub) in nodes:
                return True
            if type(sub) is not ast.Name or sub.id not in names or id(sub) in seen:
                continue
            seen.add(id(sub))
            if sub.id in changed or len(seen) > 200:
                return True
            for binding in file.lookup(sub) or []:
                if not isinstance(binding, Binding):
                    continue
                value = binding.value
                todo += [value.value, value.target] if type(value) is ast.AugAssign else [value]
    return False


def _changed_in_place(func: ast.AST, names: set[str], nodes: set[int]) -> set[str]:
    """The names whose object `func` changes in place with a value that reads one of `names` or holds
    one of `nodes`: the base of an assigned item or attribute (`outs[k] = out`, `self.out = out`), the
    receiver of a method that fills it (`outs.append(out)`)."""
    out: set[str] = set()
    for node in ast.walk(func):
        if type(node) in (ast.Assign, ast.AugAssign, ast.AnnAssign):
            value = getattr(node, "value", None)
            targets = node.targets if type(node) is ast.Assign else [node.target]  # type: ignore[attr-defined]
            if value is None or not _mentions(value, names, nodes):
                continue
            for target in targets:
                for part in ast.walk(target):
                    if type(part) in (ast.Attribute, ast.Subscript):
                        base = part
                        while type(base) in (ast.Attribute, ast.Subscript):
                            base = base.value  # type: ignore[attr-defined]
                        if type(base) is ast.Name:
                            out.add(base.id)
        elif type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr in MUTATORS \
                and type(node.func.value) is ast.Name \
                and any(_mentions(a, names, nodes) for a in [*node.args, *(k.value for k in node.keywords)]):
            out.add(node.func.value.id)
    return out


def _read_nodes(expr: ast.AST) -> Iterator[ast.AST]:
    """`expr` and the nodes in it, other than under `.detach()` / `.item()` (cut from the graph)."""
    if type(expr) is ast.Call and type(expr.func) is ast.Attribute and expr.func.attr in ("detach", "item"):
        return
    yield expr
    for child in ast.iter_child_nodes(expr):
        yield from _read_nodes(child)


# What a training step is handed: an optimizer it steps, a loader it iterates.
OPTIMIZER = re.compile(r"optim|^opt$", re.IGNORECASE)
# ... and the name of a method that trains on a loader (not `evaluate(val_loader)`).
TRAINS = re.compile(r"train|fit|epoch|learn", re.IGNORECASE)
# ... and of one that only stores or restores the module's state.
SAVES = re.compile(r"save|load|checkpoint|ckpt|export|restore", re.IGNORECASE)


def _steps_inside(file: FileModel, call: ast.Call, module: ast.expr) -> ast.expr | None:
    """An argument that says the training step runs inside the called method of `.module`: an
    optimizer (`model.module.OneEpoch(optimizer, user, pos, neg)`, lint heldout13 u061) or a
    loader (`model.module.train(train_loader, ...)`, lint heldout12 u017) whose origin is
    torch's optimizer or DataLoader, or whose name says so. The method backpropagates through
    the bare module: DDP's forward never ran."""
    func = call.func
    if type(func) is not ast.Attribute or func.value is not module or SAVES.search(func.attr):
        return None  # a helper handed `.module` (`save_checkpoint(model.module, optimizer)`): not its own step
    trains = bool(TRAINS.search(func.attr))
    for arg in [*call.args, *(k.value for k in call.keywords)]:
        if type(arg) not in (ast.Name, ast.Attribute):
            continue
        made = [terminal_name(o.func) if not (file.qualname(o.func) or "").startswith("torch.optim.") else "optim"
                for o in file.origins(arg) if type(o) is ast.Call]
        if "optim" in made or OPTIMIZER.search(terminal_name(arg)):
            return arg
        if trains and ("DataLoader" in made or terminal_name(arg).endswith("loader")):
            return arg
    return None


def _steps_on_batch(file: FileModel, call: ast.Call, module: ast.expr, holder: str) -> ast.expr | None:
    """`W.module.step(batch, ...)` (a method named `step` or for training) in a loop over a loader (a
    DataLoader, or a name ending in `loader`, through `enumerate` / `tqdm`), handed the loop's batch, in
    a loop that never calls the wrapper: the model's own training step, its backward inside it (lint
    heldout20 u027: `trainer.module.step(batch, batch_idx, epoch, phase=phase)`). The batch handed."""
    func = call.func
    if type(func) is not ast.Attribute or func.value is not module or SAVES.search(func.attr) \
            or not (func.attr == "step" or TRAINS.search(func.attr)):
        return None
    for loop in file.enclosing_loops(call):
        if type(loop) is not ast.For:
            continue
        source = loop.iter
        while type(source) is ast.Call and terminal_name(source.func) in ("enumerate", "tqdm", "iter") and source.args:
            source = source.args[0]
        made = [terminal_name(o.func) for o in file.origins(source) if type(o) is ast.Call]
        if type(source) not in (ast.Name, ast.Attribute) or not (
                "DataLoader" in made or terminal_name(source).lower().endswith("loader")):
            continue
        batch = {n.id for n in ast.walk(loop.target) if type(n) is ast.Name}
        handed = [a for a in [*call.args, *(k.value for k in call.keywords)] if type(a) is ast.Name and a.id in batch]
        if handed and not DdpForwardBypassed._calls_wrapper(file, loop, holder):
            return handed[0]
        return None
    return None


def _epoch_handed(file: FileModel, call: ast.Call, module: ast.expr, holder: str, names: set[str]) -> ast.expr | None:
    """An optimizer handed, beside `module` (the wrapper's `.module`, or a name bound to it), to a
    function whose name says it trains (`train_one_epoch(mvit_without_ddp, criterion, loader,
    optimizer, ...)`, lint heldout18 u003), built over the parameters of one of `names` (the
    module's): the step runs inside on the bare module. None where the wrapper is handed too (its
    forward may run there) or the optimizer's parameters are not in view."""
    handed = [*call.args, *(k.value for k in call.keywords)]
    callee = terminal_name(call.func)
    if not any(a is module for a in handed) or not TRAINS.search(callee) or SAVES.search(callee) \
            or any(ast.unparse(a) == holder for a in handed):
        return None
    return next((a for a in handed if type(a) in (ast.Name, ast.Attribute) and _optimizer_over(file, a, names)), None)


def _optimizer_over(file: FileModel, optimizer: ast.expr, names: set[str]) -> bool:
    """Every value of `optimizer` is a call that reads `.parameters()` of one of `names`
    (`utils.get_optimizer(args.optimizer, mvit_without_ddp.parameters(), args.lr)`)."""
    origins = file.origins(optimizer)
    return bool(origins) and all(
        type(o) is ast.Call and any(type(n) is ast.Call and type(n.func) is ast.Attribute
                                    and n.func.attr in ("parameters", "named_parameters")
                                    and ast.unparse(n.func.value) in names for n in ast.walk(o))
        for o in origins)


def _unwrapped_where_wrapped(file: FileModel, node: ast.Attribute) -> ast.expr | None:
    """The test of `raw = W.module if T else W` (`node` is its `W.module`) where T is what decides the
    wrap: the test every `W = DistributedDataParallel(W, ...)` of the file runs under (nanoGPT's `if ddp:
    model = DDP(model, ...)`, then `raw_model = model.module if ddp else model`), or a test of the wrapper
    itself (`hasattr(W, 'module')`, `isinstance(W, DDP)`). Then the name is the bare module on every path
    where the wrapper exists, and a training forward through it never runs DDP's (lint heldout21 u054:
    `logits, loss = raw_model(x, y)`). None for another test (`model.module if args.unwrap else model`:
    with the setting off, DDP's forward runs)."""
    choice = file.parent.get(node)
    if type(choice) is not ast.IfExp or choice.body is not node or ast.unparse(choice.orelse) != ast.unparse(node.value):
        return None
    test, holder = choice.test, ast.unparse(node.value)
    if type(test) is ast.Call and type(test.func) is ast.Name and test.func.id in ("hasattr", "isinstance") \
            and test.args and ast.unparse(test.args[0]) == holder:
        return test
    builds = [c for c in file.calls if wrapper_kind(file, c) == "DistributedDataParallel" and _bound_to(file, c) == holder]
    text = ast.unparse(test)
    if builds and all(any(ast.unparse(t) == text for t in file.conditions(b)) for b in builds):
        return test
    return None


def _aliases(file: FileModel, node: ast.Attribute, kinds: WrapperMethodCall) -> list[tuple[ast.Name, str]]:
    """The reads of a name bound to `node` (`network = ddp_network.module`, lint heldout18 u041;
    `model_without_ddp = model.module` on the distributed path, lint heldout17 u052), in its
    function, with how a message writes them. Only where every other value the function gives
    that name is the bare model: the wrapped name before it is wrapped, or in the other arm of the
    `if` that wraps it (`else: mvit_without_ddp = mvit`, lint heldout18 u003), or a value no
    DistributedDataParallel(...) reaches; not `net = model.module if args.x else model` on a wrapper
    (that path runs DDP's forward)."""
    stmt = file.parent.get(node)
    if stmt is not None and _unwrapped_where_wrapped(file, node) is not None:
        stmt = file.parent.get(stmt)  # `raw = W.module if T else W`, T the wrap's own test
    elif type(stmt) is not ast.Assign or stmt.value is not node:
        return []
    if type(stmt) is not ast.Assign or len(stmt.targets) != 1 or type(stmt.targets[0]) is not ast.Name:
        return []
    name, scope = stmt.targets[0].id, file.function(stmt)
    holder = ast.unparse(node.value)
    builds = [c for c in ast.walk(scope or file.tree) if type(c) is ast.Call
              and wrapper_kind(file, c) == "DistributedDataParallel" and _bound_to(file, c) == holder]
    for other in ast.walk(scope or file.tree):
        if other is stmt or file.function(other) is not scope:
            continue
        if type(other) is ast.Assign:
            targets, value = other.targets, other.value if len(other.targets) == 1 else None
        elif type(other) in (ast.AnnAssign, ast.AugAssign, ast.For):
            targets, value = [other.target], None  # type: ignore[attr-defined]
        else:
            continue
        if any(type(n) is ast.Name and n.id == name for t in targets for n in ast.walk(t)) \
                and (value is None or not _bare(file, value, holder, builds, other, kinds)):
            return []
    reads = [use for use in ast.walk(scope or file.tree) if type(use) is ast.Name and use.id == name
             and type(use.ctx) is ast.Load and file.function(use) is scope and any(o is node for o in file.origins(use))]
    return [(use, name) for use in reads]


def _bound_to(file: FileModel, call: ast.Call) -> str:
    """The one target `call`'s value is assigned to, as written (`model` for `model = DDP(model)`); ""
    elsewhere."""
    stmt = file.parent.get(call)
    return ast.unparse(stmt.targets[0]) if type(stmt) is ast.Assign and len(stmt.targets) == 1 else ""


def _bare(file: FileModel, value: ast.expr, holder: str, builds: list[ast.Call], stmt: ast.AST,
          kinds: WrapperMethodCall) -> bool:
    """`value`, assigned by `stmt`, is no DDP wrapper: the wrapper's name before every wrap of it, or
    in the other arm of the `if` that wraps it, or another value no wrapper reaches."""
    if ast.unparse(value) != holder:
        if type(value) in (ast.Name, ast.Attribute):
            return "DistributedDataParallel" not in kinds._kinds(file, value, value, 0)
        return type(value) is not ast.Call or not wrapper_kind(file, value)
    if not builds:
        return False
    if all(position(stmt) < position(b) for b in builds) \
            and not any(True for _ in file.enclosing_loops(stmt)):
        return True
    for branch in file.ancestors(stmt):
        if type(branch) is ast.If and any(stmt is n for s in branch.orelse for n in ast.walk(s)):
            return all(any(b is n for s in branch.body for n in ast.walk(s)) for b in builds)
    return False


def _own_train_loop(call: ast.Call) -> bool:
    """`model.module.train(train_loader, epochs=...)`: nn.Module.train takes one flag (`mode`); a
    call with more, or with another keyword, is the model's own training method."""
    return len(call.args) + len(call.keywords) > 1 or any(k.arg not in ("mode", None) for k in call.keywords)


def _never_read(file: FileModel, holder: str, scope: ast.AST | None) -> bool:
    """`holder`, the name the wrapper is bound to, is never read in its scope (nor, at the top of a
    script, anywhere in the file)."""
    where = scope if scope is not None else file.tree
    return not any(type(n) is ast.Name and n.id == holder and type(n.ctx) is ast.Load for n in ast.walk(where))


def _trains_apart(file: FileModel, call: ast.Call, module: ast.Name, given: set[int]) -> bool:
    """`call` is a training step of another module (its name says it trains) handed `module` itself (the
    value the wrapper was given) and an optimizer the file builds over `module.parameters()` (lint
    heldout17 u017: `utils.train_epoch(..., model=model, optimizer=optimizer)`, the wrapper bound to a
    name never read)."""
    if not TRAINS.search(terminal_name(call.func)) or file.local_function(call) is not None:
        return False
    handed = [*call.args, *(k.value for k in call.keywords)]
    if not any(type(a) is ast.Name and a.id == module.id and {id(o) for o in file.origins(a)} == given
               for a in handed):
        return False
    return any(type(a) is ast.Name and module.id in _trained_names(file, a) for a in handed)


def _trains_here(file: FileModel, call: ast.Call, module: ast.Name, given: set[int]) -> ast.Call | None:
    """`call` runs a function of this file handed `module` itself (the value the wrapper was given),
    where that parameter runs a forward whose loss is backpropagated and no wrapper is built (lint
    heldout18 u036: `train(Model=Model, ...)`, the wrapper bound to `model` and never read): that
    backward; else None."""
    func = file.local_function(call)
    if func is None or type(call.func) is not ast.Name:
        return None
    params = [a.arg for a in [*func.args.posonlyargs, *func.args.args]]
    same = [type(a) is ast.Name and a.id == module.id and {id(o) for o in file.origins(a)} == given for a in call.args]
    param = next((params[i] for i, s in enumerate(same) if s and i < len(params)), None)
    param = param or next((k.arg for k in call.keywords if k.arg and type(k.value) is ast.Name
                           and k.value.id == module.id and {id(o) for o in file.origins(k.value)} == given), None)
    if param is None or any(type(c) is ast.Call and wrapper_kind(file, c) for c in ast.walk(func)):
        return None
    forwards = {id(c) for c in ast.walk(func) if type(c) is ast.Call and type(c.func) is ast.Name
                and c.func.id == param and not _no_grad(file, c, c)}
    return _backward_in(func, _flow(func, forwards, set()), forwards) if forwards else None


def _trained_names(file: FileModel, optimizer: ast.expr) -> set[str]:
    """The names whose `.parameters()` the optimizer `optimizer` (a name bound to one of torch.optim's)
    is given; empty where it is not such an optimizer."""
    names: set[str] = set()
    for built in file.origins(optimizer):
        if type(built) is ast.Call and is_optimizer(file, built):
            names |= {ast.unparse(h) for h in _parameter_owners(file, built) or ()}
    return names


def _parameter_owners(file: FileModel, built: ast.Call) -> list[ast.expr] | None:
    """The modules whose `.parameters()` (or `named_parameters()`) the optimizer built by `built` is
    given, through the names it is handed; None where one of what it is given shows none (a list the
    file fills elsewhere: what it trains is not in view)."""
    owners: list[ast.expr] = []
    for part in [*built.args[:1], *(k.value for k in built.keywords if k.arg == "params")]:
        reached = [o for o in file.origins(part) if isinstance(o, ast.AST)] if type(part) is ast.Name else [part]
        if not reached or (type(part) is ast.Name and _grown(file, part.id)):
            return None  # a list the file fills or extends elsewhere
        for value in reached:
            found = [n.func.value for n in ast.walk(value) if type(n) is ast.Call
                     and type(n.func) is ast.Attribute and n.func.attr in ("parameters", "named_parameters")]
            if not found:
                return None
            owners += found
    return owners if owners else None


def _grown(file: FileModel, name: str) -> bool:
    """`name` is added to after it is bound (`params += ...`, `params.append(p)`, `.extend(...)`)."""
    return any((type(n) is ast.AugAssign and type(n.target) is ast.Name and n.target.id == name)
               or (type(n) is ast.Call and type(n.func) is ast.Attribute and n.func.attr in ("append", "extend", "insert")
                   and type(n.func.value) is ast.Name and n.func.value.id == name)
               for n in ast.walk(file.tree))


def _stepped(file: FileModel, names: set[str], backward: ast.Call) -> bool:
    """Whether an optimizer may step the gradients this backward leaves in the bypassed wrapper (whose
    parameters' owners the file writes as `names`: `_names_of`). False only where the file shows it
    cannot: every optimizer the backward's function steps is one of torch.optim's built in view, every
    such optimizer of the file is given parameters it shows, and those over the wrapper's (or over a
    module built from one of `names`) are none, or each clears them with zero_grad() after this
    backward and before its step (lint heldout17 u021: the agent's embedding feeds the Q network, whose optimizer alone
    steps; u023: the generator's loss reaches the encoder-decoder, whose own optimizer clears its
    gradients before it steps)."""
    if "add_param_group" in file.text:
        return True  # an optimizer given more parameters later: what it trains is not all in view
    func = file.function(backward) or file.tree
    steps = [(c, c.args[0] if c.args else c.func.value) for c in ast.walk(func)
             if type(c) is ast.Call and type(c.func) is ast.Attribute and c.func.attr == "step" and _steps_optimizer(c)]
    if not steps or any(not file.origins(o) or not all(type(b) is ast.Call and is_optimizer(file, b)
                                                      for b in file.origins(o)) for _, o in steps):
        return True  # it steps elsewhere, or an optimizer not built in view
    trainers: set[int] = set()
    for built in (c for c in file.calls if is_optimizer(file, c)):
        owners = _parameter_owners(file, built)
        if owners is None:
            return True  # what it trains is not in view
        if any(_owned(file, owner, names, 0) for owner in owners):
            trainers.add(id(built))
    if not trainers:
        return False
    ours = [(step, o) for step, o in steps if any(id(b) in trainers for b in file.origins(o))]
    return not ours or not all(_cleared_before(file, step, o, names, backward) for step, o in ours)


def _steps_optimizer(call: ast.Call) -> bool:
    """`optimizer.step()`, or a scaler's `scaler.step(optimizer)`; not a scheduler's or an
    environment's step."""
    receiver = ast.unparse(call.func.value).lower()  # type: ignore[attr-defined]
    if "sched" in receiver:
        return False
    if not call.args:
        return bool(OPTIMIZER.search(terminal_name(call.func.value)))  # type: ignore[attr-defined]
    return "scaler" in receiver and len(call.args) == 1 and type(call.args[0]) in (ast.Name, ast.Attribute)


def _names_of(file: FileModel, wrapper: ast.expr) -> set[str]:
    """How the file writes the bypassed wrapper's parameters' owner: the wrapper, its `.module`, and the
    module each of its DistributedDataParallel(...) values wraps (a name, `.to()` / `.cuda()` peeled)."""
    text = ast.unparse(wrapper)
    names = {text, f"{text}.module"}
    for built in file.origins(wrapper):
        if type(built) is not ast.Call or wrapper_kind(file, built) != "DistributedDataParallel" or not built.args:
            continue
        inner = built.args[0]
        while type(inner) is ast.Call and type(inner.func) is ast.Attribute and inner.func.attr in ("to", "cuda"):
            inner = inner.func.value
        if type(inner) in (ast.Name, ast.Attribute):
            names.add(ast.unparse(inner))
    return names


def _owned(file: FileModel, owner: ast.expr, names: set[str], depth: int) -> bool:
    """`owner` (what `.parameters()` is read on) may hold the wrapper's parameters: it is one of
    `names`, a value not built in view, or built by calls handed one of them whole (not an attribute
    of it: `DQN(agent.module.state_dim)` holds no agent) or handed a name so built."""
    if ast.unparse(owner) in names:
        return True
    origins = file.origins(owner)
    built = [o for o in origins if isinstance(o, ast.Call)]
    if not origins or len(built) != len(origins):
        return depth == 0  # not built in view: only what the optimizer is given directly may hold it
    for origin in built:
        for call in (n for n in ast.walk(origin) if type(n) is ast.Call):
            given = [*call.args, *(k.value for k in call.keywords)]
            if any(ast.unparse(a) in names for a in given):
                return True
            if depth < 2 and any(_owned(file, a, names, depth + 1) for a in given if type(a) is ast.Name):
                return True
    return False


def _cleared_before(file: FileModel, step: ast.Call, stepped: ast.expr, names: set[str], backward: ast.Call) -> bool:
    """Before `step`, in the block that holds it, a zero_grad() of that optimizer (or of one of
    `names`) runs after the statement that holds `backward`, if that block holds it at all."""
    stmt = file.statement(step)
    block = next((getattr(file.parent.get(stmt), f) for f in ("body", "orelse", "finalbody")
                  if stmt in getattr(file.parent.get(stmt), f, ())), None)
    if block is None:
        return False
    at = block.index(stmt)
    cleared = {ast.unparse(stepped), *names}
    holds = next((i for i, s in enumerate(block) if any(n is backward for n in ast.walk(s))), None)
    for i in range(at - 1, -1, -1):
        if holds is not None and i <= holds:
            return False
        if any(type(c) is ast.Call and type(c.func) is ast.Attribute and c.func.attr == "zero_grad"
               and ast.unparse(c.func.value) in cleared for c in ast.walk(block[i])):
            return True
    return False


def _live_origins(file: FileModel, name: ast.expr) -> set[int]:
    """The values `name` may hold, less those bound in an arm the file's own constants never take
    (`USE_TEST_MODEL = True`, then `if USE_TEST_MODEL: model = ... else: model = ZeroModel(...)`: lint
    heldout26d u057, whose test model is trained bare beside `ddp_model = DDP(model, ...)`)."""
    return {id(o) for o in file.origins(name) if not (isinstance(o, ast.AST) and ruled_out(file, o))}
