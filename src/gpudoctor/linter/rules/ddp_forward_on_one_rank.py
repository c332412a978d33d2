from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from dataclasses import replace

from gpudoctor.linter.arms import arms
from gpudoctor.linter.buffers import HAS, NONE, buffers
from gpudoctor.linter.idioms import TORCH, handed_back, is_torch_spawn_program, source, wrapper_kind
from gpudoctor.linter.model import FUNCTIONS, Binding, FileModel, Param, constant, keyword, position, terminal_name
from gpudoctor.linter.project import LIBRARIES, Query
from gpudoctor.linter.ranks import TRAINER_SHARDED, Branch, collective_reach, depends_on, rank_branch
from gpudoctor.linter.rule import ERROR, WARNING, Hit, Rule
from gpudoctor.linter.rules.collective_under_rank_condition import CollectiveUnderRankCondition, undecided

# Calls that may build a wrapped model (aliases and imports are checked too).
BUILDERS = {"DistributedDataParallel", "FullyShardedDataParallel", "to", "cuda", "prepare", "fully_shard",
            "setup", "setup_module", "initialize"}
# Lightning Fabric shards (and so communicates in forward) under these strategies.
FABRIC_SHARDED = re.compile(r"fsdp|FSDPStrategy|ModelParallelStrategy|fully_shard|deepspeed_stage_3|DeepSpeedStrategy\(\s*stage\s*=\s*3")
# The file itself sets accelerate's sharding (an FSDP or DeepSpeed plugin, a ZeRO-3 stage): the forward gathers.
ACCELERATE_SHARDED = re.compile(r"FullyShardedDataParallelPlugin|fsdp_plugin|DeepSpeedPlugin\([^)]*zero_stage\s*=\s*3")
# DeepSpeed communicates in forward under ZeRO stage 3 (parameters gathered on use).
ZERO_3 = re.compile(r"""["']?stage["']?\s*[:=]\s*3\b|zero_stage\s*[:=]\s*3\b|zero3|ZeRO-3""", re.IGNORECASE)
# A ZeRO stage the code sets, any stage: the number, or the `zeroN` of a config file's name.
ZERO_STAGE = re.compile(r"""["']?stage["']?\s*[:=]\s*(\d)\b|zero_stage\s*[:=]\s*(\d)\b|zero_?(\d)(?!\d)|ZeRO-(\d)""",
                        re.IGNORECASE)


class DdpForwardOnOneRank(Rule):
    """A DistributedDataParallel (or FSDP) model called only on some ranks,
    typically evaluation under `if rank == 0:`. The wrapper's forward is a
    collective: DDP broadcasts buffers from rank 0 (BatchNorm statistics) and
    SyncBatchNorm all-reduces, FSDP all-gathers the parameters. The rank that
    runs it waits for the others, which are already at their next
    collective: the job hangs, or the collectives pair up wrongly.

    Flagged: a call of a model built by `DistributedDataParallel(...)` /
    `FullyShardedDataParallel(...)` / FSDP2's `fully_shard(model)` /
    `accelerator.prepare(...)`, Lightning Fabric's `fabric.setup(...)` /
    `fabric.setup_module(...)` in a program that shards (an FSDP or
    model-parallel strategy), or a DeepSpeed engine under ZeRO stage 3
    (`deepspeed.initialize`; the stage the code sets, `"stage": 3` in its config: a stage named
    only in a comment or the docstring, such as a usage line's `zero3_offload_config.json` beside a
    zero2 one, or beside another stage, leaves it to the config the run is given, and the diagnostic
    is a warning that says so: lint heldout24 u028), under a test
    on the rank, or in a function whose every call in the file is under one,
    or in a function of another module of the project that is given the
    model under a test on the rank (`if rank == 0: evaluate(model, loader)`).
    A sharded model's `generate(...)` runs its forward too (lint heldout15 u020: an FSDP GPT's
    sample generated under `if is_main():`); a DDP wrapper has no `generate`
    (wrapper-method-call's AttributeError). One diagnostic per place the ranks part: the forwards under one rank
    test are one (dev7 u049: four models in one rank-0 test pass), at the
    first of them, or at the call of their function when the test is around
    that call (`if rank == 0: validate(model, decoder, ...)`, dev7 u018).
    Evaluate with the unwrapped model (`model.module`,
    `accelerator.unwrap_model(model)`), or on every rank and reduce the
    metrics.

    An error only where the forward must communicate: an FSDP / sharded
    model, an accelerate-prepared model whose FSDP or ZeRO-3 plugin the file
    sets, or a DDP (or accelerate-prepared) model whose module holds buffers (BatchNorm,
    `register_buffer`, a torchvision network with BatchNorm layers: `resnet18`,
    `vgg16_bn`, `densenet121`, ...) with `broadcast_buffers` on (the default). DDP then
    broadcasts them from rank 0 in the first forward after a training step,
    under `torch.no_grad()` too. A DDP model with no buffers, with
    `broadcast_buffers=False`, or whose module cannot be followed to its class
    is a warning that says what would make it hang. So is a split that needs, beside the rank
    test, a test the file does not decide (`is_master and args.debug_per_sample_loss`: a
    debugging dump, lint heldout21 u080) or passes a gate of the run's surroundings, as
    collective-under-rank-condition says them (its `undecided`). Not flagged: a DDP model
    with `broadcast_buffers=False` called under `torch.no_grad()` /
    `inference_mode()` (a `with` or a decorator, around the forward or the
    call of its function): no buffer to broadcast and no backward to follow,
    the forward is local (dev7 u022's rank-0 `eval_training`). Nor a DDP
    model's forwards under no_grad that come after a no-grad pass of every
    rank with nothing run with grad on between (the validation loss on every
    rank, then benchmark examples split by rank): DDP broadcasts buffers only
    in the first forward after one with grad on, so these make no collective
    (lint heldout18: three build-nanogpt trainers' HellaSwag evaluation).

    Also a warning: a model a function is given, called only where the batch
    is not empty (`if batch_size:` with `batch_size = input.size(0)`, `if
    len(x) > 0:`, no forward in the other arm), in a function that then makes
    a collective on every rank (its own, or a helper's: `sum_tensor(metrics)`).
    The collective shows the function runs on every rank; with an uneven
    evaluation set, the ranks with an empty shard skip the forward. Whether
    that hangs depends on what the caller passes (DDP with buffers, FSDP),
    which the function does not show (issue 41's dev6: a research repository's
    `distributed_predict`).

    Where that function's module is not among the files linted (a script linted alone, a
    star import of the project's module), a warning only where its name says it runs the model
    (`evaluate`, `validate`, `calculate_bleu`, `predict`, `sample`...): the message says the
    function is not in view (lint heldout12: a translation trainer's BLEU on rank 0, a trainer's
    `evaluate(model, ...)` through `from engine import *`). The functions not in view that one
    rank test hands the model to are one such guess, said once at the first, naming the others
    (lint heldout21 u027: `generation_callback(model, ...)` and `fid_evaluation_callback(model, ...)`
    twice under one `if config.rank == 0:`, three warnings no reader asked for). A model a project
    function not in view hands back (`model, loss = train_one_epoch(model, ...)`) is read as the one
    it was given. Such a function bound to the model first by `functools.partial` (nanoGPT's
    `estimate_loss = partial(estimate_loss, model=model, ...)`, then `estimate_loss()` where
    `master_process`: lint heldout28 u004) is given the model at that call; `estimate_loss` and
    `compute_loss` say they run it as `evaluate` does.

    Nor a model the file has unwrapped itself, under the test that wrapped it: every value it holds
    there is `enc_mod = encoder.module if world_size > 1 else encoder` (`encoder` wrapped under `if
    world_size > 1:`), or a parameter every call of the file hands such a value (lint heldout20 u001:
    `validate_encoder(enc_mod, proj_mod, ...)` on rank 0): the bare module on both paths.

    A transformers (or trl) Trainer's `evaluate` / `predict` under a rank test, in a file that shards
    the Trainer (`fsdp="full_shard ..."`, DeepSpeed stage 3), runs the sharded forward too: an error
    (lint heldout22 u008: the test set evaluated on local rank 0 of an FSDP SFTTrainer).

    Not flagged (lint heldout11, heldout10): a function called in both arms of the rank test
    (`if local_rank == 0: train(model, ..., writer)` `else: train(model, ...)`: every rank
    runs it), nor a forward past an early exit whose test holds only where the model is not
    wrapped (`if ddp_enabled and not use_ddp_train and not is_rank0(): return`, the model
    wrapped under `if use_ddp_train:`). Nor arms of a rank the file's one call gives as a literal,
    where nothing starts processes (`example(0, 2)` in main(): one process, rank 0; its
    rendezvous waits for rank 1, which rank-hardcoded says: lint heldout25 u032).
    """

    id = "ddp-forward-on-one-rank"
    severity = ERROR  # a certain crash or hang
    message = "DDP model called only on some ranks: its forward syncs with the other ranks and the job hangs"
    fix = "output = model.module(inputs)  # the unwrapped model: no collective on one rank"
    needles = ("DistributedDataParallel", "FullyShardedDataParallel", "fully_shard")

    def relevant(self, text: str) -> bool:
        return (any(n in text for n in self.needles) or ("accelerator" in text and ".prepare(" in text)
                or (("size(0)" in text or "shape[0]" in text or "len(" in text) and "all_" in text)
                or ("setup" in text and "abric" in text and _sharding_fabric(text))
                or ("deepspeed" in text and _zero_3(text))
                or ("Trainer(" in text and TRAINER_SHARDED.search(text) is not None))

    VALID = (
        '''
        import lightning as L

        fabric = L.Fabric(devices=1)
        model = fabric.setup_module(model)  # no sharding strategy: forward is local
        if fabric.is_global_zero:
            print(model(x))
        ''',
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
        import lightning as L
        from lightning.fabric.strategies import ModelParallelStrategy

        fabric = L.Fabric(devices=4, strategy=ModelParallelStrategy(parallelize))
        fabric.launch()
        model = fabric.setup_module(model)
        if fabric.global_rank == 0:
            sample = model.generate(prompt)  # flagged: generate runs the sharded forward
            print(model(prompt))
        ''',
        '''
        import torch.distributed as dist
        from torch.distributed.fsdp import fully_shard

        for block in model.layers:
            fully_shard(block)
        fully_shard(model)
        if dist.get_rank() == 0:
            logits = model(tokens)  # flagged
        ''',
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
            return sum(model(x).argmax(1).eq(y).sum() for x, y in loader)

        model = DistributedDataParallel(net.cuda(), device_ids=[local_rank])
        if dist.get_rank() == 0:
            print(evaluate(model, val_loader))  # flagged: where the ranks part
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        # Names that may hold a wrapped model: assigned one, or a parameter
        # named like a model (`def evaluate(model, loader)`).
        wrapped = {
            getattr(target, "id", getattr(target, "attr", ""))
            for target in self._targets(file)
        }
        # FSDP2 shards in place: `fully_shard(model)` makes `model` itself communicate.
        sharded = {
            terminal_name(call.args[0]): call.lineno for call in file.calls
            if terminal_name(call.func) == "fully_shard" and call.args and type(call.args[0]) in (ast.Name, ast.Attribute)
        }
        wrapped |= set(sharded)
        models: dict[tuple[int, int | None], list[tuple]] = {}
        for call in file.calls:
            func = call.func
            # `model.generate(...)` on a sharded model runs its forward (lint heldout15 u020: FSDP's
            # generate on the main rank alone); on a DDP wrapper it is wrapper-method-call's AttributeError
            generate = type(func) is ast.Attribute and func.attr == "generate"
            if type(func) is ast.Attribute and func.attr in ("forward", "generate"):
                func = func.value
            elif type(func) not in (ast.Name, ast.Attribute):
                continue
            name = terminal_name(func)
            if name not in wrapped and "model" not in name.lower() and "net" not in name.lower():
                continue
            if type(func) is ast.Attribute and file.method_class(func) is None:
                continue  # `self.model(...)` follows; `a.b.model(...)` cannot be followed
            built = next((o for o in handed_back(file, file.origins(func)) if self._wrapped(file, o)), None)
            if built is None and not (name in sharded and call.lineno > sharded[name]):
                continue
            if type(func) is ast.Name and _unwrapped_by_the_file(file, func):
                continue  # `enc_mod = encoder.module if world_size > 1 else encoder` (lint heldout20 u001)
            if generate and isinstance(built, ast.Call) and (
                    wrapper_kind(file, built) or terminal_name(built.func) == "prepare"):
                continue  # a DDP wrapper (or accelerate's, DDP by default) has no generate: not a forward
            shown = source(call.func) if generate else source(func)
            guarded = self._guard(file, call, set())
            if guarded is None or self._also_in(guarded[0].other, shown):
                continue  # (the other ranks run the same forward in the other arm)
            branch, site = guarded
            if _literal_rank_test(file, branch.test):
                continue  # one process, whose rank the file's one call gives: rank-hardcoded says its wait
            if isinstance(built, ast.AST) and _excludes_wrapper(file, branch, built):
                continue  # the ranks part only where the model is not wrapped (lint heldout10 u050)
            what = (self._kind(file, built) if isinstance(built, ast.Call)
                    else f"an FSDP2 model (`fully_shard({name})`, line {sharded[name]})")
            unwrap = "DistributedDataParallel" in what or "accelerate" in what
            severity, outcome = self._outcome(file, built)
            if severity == WARNING and "broadcast_buffers=False" in outcome and _no_grad(file, call, site):
                # no buffer broadcast, and under no_grad no backward follows: the forward is local
                # (dev7 u022: a rank-0 eval_training under @torch.no_grad())
                continue
            if "DistributedDataParallel" in what and _no_grad(file, call, site) and \
                    _after_no_grad_pass(file, site, shown) is not None:
                continue  # DDP broadcasts buffers only in the first forward after one with grad on
            # One diagnostic per place the ranks part: the rank-0 block, or the call of the
            # function that runs the forwards under the rank test (dev7 u018: `if rank == 0:
            # validate(rank, world_size, model, decoder, ...)`, u049: four models in one test pass)
            key = (id(branch.test), id(site) if site is not call else None)
            models.setdefault(key, []).append((call, shown, what, unwrap, severity, outcome, branch, site))
        hangs: set[int] | None = None
        for found in models.values():
            hit = self._one_diagnostic(file, found)
            if hit.severity == WARNING and type(hit.node) is ast.Call and hit.node is not found[0][0]:
                # the call under the rank test reaches a collective: collective-under-rank-condition
                # says the hang, as an error, at this call; a warning that it may hang adds nothing
                # (lint heldout15 u012: `if rank == 0: evaluate(model, ...)`, evaluate all-reduces)
                if hangs is None:
                    hangs = {id(h.node) for _, h in CollectiveUnderRankCondition()._hits(file)
                             if not h.severity and h.query is None}
                if id(hit.node) in hangs:
                    continue
            yield hit
        yield from self._passed_on(file, wrapped)
        yield from self._skipped_on_empty_batch(file)
        yield from self._sharded_trainer(file)

    def _sharded_trainer(self, file: FileModel) -> Iterator[Hit]:
        """`trainer.evaluate(...)` / `trainer.predict(...)` of a transformers (or trl) Trainer under a rank
        test, in a file that shards the Trainer (`fsdp="full_shard auto_wrap"`, DeepSpeed stage 3): they run
        the sharded model's forward, which gathers the parameters from every rank (lint heldout22 u008: the
        test set evaluated on local rank 0 after the final save)."""
        if not TRAINER_SHARDED.search(file.text):
            return
        for call in file.calls:
            func = call.func
            if type(func) is not ast.Attribute or func.attr not in ("evaluate", "predict") \
                    or type(func.value) not in (ast.Name, ast.Attribute):
                continue
            built = file.origins(func.value)
            if not built or not all(type(o) is ast.Call and terminal_name(o.func).endswith("Trainer")
                                    and (file.qualname(o.func) or "").split(".", 1)[0] in ("transformers", "trl")
                                    for o in built):
                continue
            branch = rank_branch(file, call)
            if branch is None:
                continue
            hit = Hit(call, severity=ERROR, fix=f"{source(func)}(...)  # on every rank: the sharded forward gathers",
                      message=f"{source(func)}() runs the model of a Trainer this file shards (FSDP or ZeRO-3: its "
                      f"forward gathers the parameters from every rank) only on some ranks (it depends on "
                      f"{depends_on(file, branch)}): the other ranks never join and the job hangs")
            yield undecided(file, branch, hit)

    @staticmethod
    def _one_diagnostic(file: FileModel, found: list[tuple]) -> Hit:
        """The forwards under one rank test as one diagnostic: at the first forward when the
        test is around it, at the call of its function when the test is around that call."""
        call, called, what, unwrap, _, outcome, branch, site = found[0]
        severity = ERROR if any(f[4] == ERROR for f in found) else WARNING
        if severity == ERROR:
            call, called, what, unwrap, _, outcome, branch, site = next(f for f in found if f[4] == ERROR)
        names = list(dict.fromkeys(f[1] for f in found))
        more = [n for n in names if n != called]
        also = f" (and {', '.join(f'`{n}`' for n in more)}, called there too)" if more else ""
        where = "called" if site is call else (
            f"called in {terminal_name(site.func) if type(site) is ast.Call else 'a function'}() (line {call.lineno}), "
            "which runs")
        subject = f"{called} is {what}, {where}"
        if called.endswith(".generate"):
            subject = f"{called[:-len('.generate')]} is {what}, and its generate() runs its forward, {where}"
        hit = Hit(
            site,
            message=f"{subject} only on some ranks (it depends on "
            f"{depends_on(file, branch)}){also}: {outcome}",
            fix=(f"{called}.module(...)  # the unwrapped model; or run this on every rank" if unwrap
                 else f"{called}(...)  # on every rank (a sharded model gathers its parameters in forward)"),
            severity=severity,
        )
        # the split needs a flag the file does not decide too (`is_master and args.debug_per_sample_loss`,
        # lint heldout21 u080), or sits behind a gate of the run's surroundings: a warning naming it
        return undecided(file, branch, hit) if severity == ERROR else hit

    @staticmethod
    def _skipped_on_empty_batch(file: FileModel) -> Iterator[Hit]:
        """`if batch_size: out = model(x)` in a function given the model, which then makes
        a collective on every rank: the function runs on every rank (its collective says
        so), and ranks whose shard of an uneven set is empty skip the forward. Whether that
        hangs depends on what the caller passes (a DDP model with buffers, FSDP): a warning."""
        for func, (collective, name) in collective_reach(file).items():
            if not isinstance(func, FUNCTIONS):
                continue
            params = {a.arg for a in func.args.posonlyargs + func.args.args + func.args.kwonlyargs}
            for call in ast.walk(func):
                callee = call.func if type(call) is ast.Call else None
                if type(callee) is not ast.Name or callee.id not in params or not MODEL_PARAM.search(callee.id):
                    continue
                test = _size_test(file, call, func, params - {callee.id})
                if test is None or file.function(call) is not func:
                    continue
                yield Hit(call, severity=WARNING,
                          message=f"{callee.id} is called only on ranks whose batch is not empty (`if {source(test)}`), "
                          f"and this function then reaches {name} on every rank (line {collective.lineno}): if "
                          f"{callee.id} is DDP with buffers (BatchNorm, broadcast_buffers on) or FSDP, the ranks with an "
                          "empty batch skip its collective and the job hangs; an unwrapped module "
                          f"({callee.id}.module) makes it local",
                          fix=f"{callee.id}.module(x)  # or pad the set so every rank gets a batch (drop_last / a "
                          "DistributedSampler that pads)")

    def _passed_on(self, file: FileModel, wrapped: set[str]) -> Iterator[Hit]:
        """A wrapped model given, under a rank test, to a function imported
        from the project: the project says whether that function calls it. The functions not in
        view that one rank test hands the model to are one guess, said once at the first, naming
        the others (lint heldout21 u027: `generation_callback(model, ...)` and two
        `fid_evaluation_callback(model, ...)` under one `if config.rank == 0:`; u103: `valid_multi_gpu`
        and `valid` under one test)."""
        unseen: dict[int, list[Hit]] = {}
        for call in file.calls:
            func = call.func
            if type(func) is not ast.Name:
                continue
            bound = _partial_of(file, func)
            if bound is not None and type(bound.args[0]) is ast.Name:
                # `estimate_loss = partial(estimate_loss, model=model, ...)`, then `estimate_loss()` under the rank
                # test: the arguments partial bound are given at this call (lint heldout28 u004, a nanoGPT trainer)
                func = bound.args[0]
            assert type(func) is ast.Name
            base = file.imports.get(func.id) or file.relative_imports.get(func.id)
            if not base and not file.defines(func.id):
                # through a star import of a project module (`from engine import *`: lint heldout12 u044)
                star = [m for m in file.star_imports if m.lstrip(".").split(".", 1)[0] not in LIBRARIES]
                base = f"{star[0]}.{func.id}" if len(star) == 1 else None
            if not base or base.lstrip(".").split(".", 1)[0] in LIBRARIES or (
                    bound is None and file.lookup(func) is not None):
                continue  # (partial's own argument is read before the name is rebound to what it makes)
            given = [*bound.args[1:], *call.args] if bound is not None else call.args
            keywords = [*bound.keywords, *call.keywords] if bound is not None else call.keywords
            passed = [(str(i), a) for i, a in enumerate(given)] + [(k.arg, k.value) for k in keywords if k.arg]
            for arg, value in passed:
                if type(value) is not ast.Name or value.id not in wrapped:
                    continue
                built = next((o for o in handed_back(file, file.origins(value)) if self._wrapped(file, o)), None)
                if not isinstance(built, ast.Call):
                    continue
                guarded = self._guard(file, call, set())
                if guarded is None:
                    break
                branch = guarded[0]
                severity, outcome = self._outcome(file, built)
                fix = f"{func.id}({value.id}.module, ...)  # the unwrapped model; or call it on every rank"
                yield Hit(
                    call,
                    message=f"{func.id}() calls {value.id}, {self._kind(file, built)}, and runs only on some "
                    f"ranks (it depends on {depends_on(file, branch)}): {outcome}",
                    fix=fix, query=Query("calls-argument", base, arg), severity=severity,
                )
                if EVALUATES.search(func.id):
                    # the module is not among the files linted (a script linted alone): the name says it runs
                    # the model (lint heldout12: `calculate_bleu(model, ...)`, `evaluate(model, ...)` under
                    # `if rank == 0:`), a warning that says what is not in view
                    unseen.setdefault(id(branch.test), []).append(Hit(
                        call, severity=WARNING, fix=fix, query=Query("not-in-view", base),
                        message=f"{value.id}, {self._kind(file, built)}, is given to {func.id}() only on some "
                        f"ranks (it depends on {depends_on(file, branch)}); {func.id} is not in view ({base}), but "
                        f"its name says it runs the model: if it calls {value.id}, {outcome}",
                    ))
                break
        for hits in unseen.values():
            lines = [position(h.node)[0] if h.node is not None else h.line for h in hits]
            others = sorted(set(lines[1:]) - {lines[0]})
            named = f" (the same test hands it on at line{'s' if len(others) > 1 else ''} {', '.join(map(str, others))})"
            yield replace(hits[0], message=hits[0].message + (named if others else ""), also=tuple(others))

    @staticmethod
    def _outcome(file: FileModel, built: object) -> tuple[str, str]:
        """(severity, what happens): an error only where the forward must
        communicate. A DDP forward does when its module holds buffers and
        `broadcast_buffers` is on: it broadcasts them from rank 0, under
        no_grad too (the first forward after a training step)."""
        hangs = "its forward syncs with the other ranks and the job hangs"
        ddp = built
        while type(ddp) is ast.Call and type(ddp.func) is ast.Attribute and ddp.func.attr in ("to", "cuda"):
            ddp = ddp.func.value
        if type(ddp) is ast.Call and terminal_name(ddp.func) == "prepare" and not ACCELERATE_SHARDED.search(file.text):
            return _prepared(file, ddp)
        if type(ddp) is ast.Call and terminal_name(ddp.func) == "initialize" and not _zero_3_in_code(file):
            return WARNING, ("it hangs under ZeRO stage 3 (its forward gathers the parameters from every rank); "
                             "the stage is the DeepSpeed config's, which this file names only in a comment or "
                             "docstring, or beside another stage: under stages 0 to 2 a no-grad forward is local")
        if type(ddp) is not ast.Call or wrapper_kind(file, ddp) != "DistributedDataParallel":
            return ERROR, hangs  # FSDP, ZeRO-3, a sharded Fabric model: its forward gathers parameters
        if constant(keyword(ddp, "broadcast_buffers", 4), bool) is False:
            return WARNING, ("with broadcast_buffers=False its forward broadcasts nothing, so a no-grad forward is "
                             "local; it hangs if a backward runs on these ranks alone (the gradient all-reduce)")
        module = keyword(ddp, "module", 0)
        found = buffers(file, module) if module is not None else None
        if found is not None and found.answer == HAS:
            return ERROR, (f"its forward broadcasts the module's buffers from rank 0 ({found.why}; broadcast_buffers "
                           "is on), under no_grad too, and the job hangs")
        if found is not None and found.answer == NONE:
            return WARNING, (f"its module holds no buffers ({found.why}), so a no-grad forward makes no collective; "
                             "it hangs once the model gets a buffer (BatchNorm) or a backward runs on these ranks alone")
        why = found.why if found is not None else "the wrapped module is not given"
        return WARNING, (f"it hangs if the module holds buffers (BatchNorm, register_buffer: DDP broadcasts them in "
                         f"forward, broadcast_buffers being on) or a backward runs; whether it does could not be "
                         f"followed: {why}")

    @staticmethod
    def _also_in(nodes: tuple[ast.AST, ...], called: str) -> bool:
        """`called` (the model, as written) is called in `nodes` too."""
        return any(type(sub) is ast.Call and source(sub.func) in (called, called + ".forward")
                   for node in nodes for sub in ast.walk(node))

    @staticmethod
    def _kind(file: FileModel, built: ast.Call) -> str:
        """What built the model, as the message shows it (the chain followed)."""
        name = terminal_name(built.func)
        where = f"(`{source(built.func)}(...)`, line {built.lineno})"
        if name == "fully_shard":
            return f"an FSDP2 model {where}"
        if name in ("setup", "setup_module"):
            return f"a Fabric model under a sharding strategy {where}"
        if name == "initialize":
            return f"a DeepSpeed {'ZeRO-3 ' if _zero_3_in_code(file) else ''}engine {where}"
        if name == "prepare":
            return f"an accelerate-prepared model {where}"
        if file.is_call_to(built, "FullyShardedDataParallel", TORCH):
            return f"an FSDP model {where}"
        return f"a DistributedDataParallel model {where}"

    def _targets(self, file: FileModel) -> Iterator[ast.AST]:
        for call in file.calls:
            name = terminal_name(call.func)
            if name not in BUILDERS and name not in file.imports and name not in file.module_aliases:
                continue
            if self._wrapped(file, call):
                parent = file.parent.get(call)
                if isinstance(parent, ast.Assign):
                    for target in parent.targets:
                        # `model, optimizer = fabric.setup(model, optimizer)`: the model comes first
                        yield target.elts[0] if isinstance(target, (ast.Tuple, ast.List)) and target.elts else target
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
        name = terminal_name(func)
        if name == "fully_shard":
            return True
        if type(func) is not ast.Attribute:
            return False
        receiver = terminal_name(func.value).lower()
        if name == "prepare":
            return "accelerator" in receiver
        if name in ("setup", "setup_module"):
            return "fabric" in receiver and _sharding_fabric(file.text)
        if name == "initialize":
            return receiver == "deepspeed" and _zero_3(file.text)
        return False

    def _guard(self, file: FileModel, node: ast.AST, seen: set) -> tuple[Branch, ast.AST] | None:
        """The rank test that decides whether `node` runs, and the node it is
        around: `node` itself, or (the first of) every call in the file of its function."""
        branch = rank_branch(file, node)
        if branch is not None:
            return branch, node
        func = file.function(node)
        if func is None or func in seen:
            return None
        seen.add(func)
        if file.references.get(func):
            return None  # passed on as a value (`launch(main)`, `save_hyperparameters(setup)`): it may run anywhere
        sites = file.entry_sites(func)
        if not sites:
            return None
        found = [self._guard(file, site, seen) for site in sites]
        if any(g is not None and any(s is not site and _inside(s, g[0].other) for s in sites)
               for g, site in zip(found, sites)):
            # called in both arms of the rank test (lint heldout11: `if local_rank == 0: train(model, ...,
            # writer)` `else: train(model, ...)`): every rank runs the function
            return None
        if all(found):
            return found[0]
        # Called on every rank at one place and under a rank test at another (dev7 u026: every
        # rank's `evaluate(args, model, ...)` each epoch, then `if args.rank == 0:` reloads the
        # best weights and evaluates the DDP model once more): the guarded call is a forward of
        # rank 0 alone when it hands the function the wrapped model itself.
        return next((g for g, site in zip(found, sites) if g is not None and self._hands_wrapped(file, node, site)), None)

    def _hands_wrapped(self, file: FileModel, forward: ast.AST, site: ast.AST) -> bool:
        """`site` calls the function of `forward` (`model(x)`, `model` its parameter) with a
        wrapped model for that parameter."""
        func = file.function(forward)
        callee = forward.func if type(forward) is ast.Call else None
        if type(site) is not ast.Call or not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                or type(callee) is not ast.Name:
            return False
        params = [a.arg for a in func.args.posonlyargs + func.args.args]
        given = next((k.value for k in site.keywords if k.arg == callee.id), None)
        if given is None and callee.id in params and params.index(callee.id) < len(site.args):
            given = site.args[params.index(callee.id)]
        return given is not None and any(self._wrapped(file, o) for o in file.origins(given))


def _partial_of(file: FileModel, func: ast.Name) -> ast.Call | None:
    """The `functools.partial(f, ...)` every value of `func` comes from, where `f` is a plain name: the
    function a call of `func` runs, with the arguments partial bound."""
    origins = file.origins(func)
    if len(origins) != 1 or type(origins[0]) is not ast.Call:
        return None
    made = origins[0]
    if (file.qualname(made.func) or "") != "functools.partial" or not made.args or type(made.args[0]) is not ast.Name:
        return None
    return made


def _unwrapped_by_the_file(file: FileModel, value: ast.AST, depth: int = 0) -> bool:
    """Every value the name `value` holds here is the file's own unwrapping of a wrapper (`enc_mod =
    encoder.module if world_size > 1 else encoder`: `_unwraps`), through names bound to it and
    through a parameter, where every call of the file hands it such a value (lint heldout20 u001)."""
    if type(value) is not ast.Name or depth > 3:
        return False
    found = file.lookup(value)
    if not found:
        return False
    for binding in found:
        if isinstance(binding, Param):
            handed = _handed_values(file, binding)
            if not handed or not all(_unwrapped_by_the_file(file, v, depth + 1) for v in handed):
                return False
        elif isinstance(binding, Binding) and binding.kind == "value" and not binding.path:
            if not (_unwraps(file, binding.value) or _unwrapped_by_the_file(file, binding.value, depth + 1)):
                return False
        else:
            return False
    return True


def _unwraps(file: FileModel, value: ast.AST) -> bool:
    """`m.module if T else m` (or `m if not T else m.module`) where every wrapper `m` may be there is
    built under `if T:`, or T tests for the wrapper itself (`hasattr(m, "module")`, `isinstance(m,
    DDP)`): the `.module` arm runs where it was wrapped, `m` where it was not."""
    if type(value) is not ast.IfExp:
        return False
    test, negated = value.test, False
    if type(test) is ast.UnaryOp and type(test.op) is ast.Not:
        test, negated = test.operand, True
    unwrapped, bare = (value.orelse, value.body) if negated else (value.body, value.orelse)
    if type(unwrapped) is not ast.Attribute or unwrapped.attr != "module" or type(bare) is not ast.Name \
            or ast.unparse(unwrapped.value) != bare.id:
        return False
    said = ast.unparse(test)
    if re.search(r"hasattr\(|isinstance\(", said) and bare.id in said:
        return True
    wraps = [o for o in file.origins(bare) if type(o) is ast.Call and wrapper_kind(file, o)]
    return bool(wraps) and all(
        any(type(branch) is ast.If and arm == "body" and ast.unparse(branch.test) == said for branch, arm in arms(file, w))
        for w in wraps)


def _handed_values(file: FileModel, param: Param) -> list[ast.expr]:
    """What the calls of the file hand the parameter `param`; empty where one hands nothing the file
    shows (a default, `*args`) or the function is passed around."""
    func = param.function
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or func in file.referenced:
        return []
    positional = [a.arg for a in [*func.args.posonlyargs, *func.args.args]]
    values: list[ast.expr] = []
    for site, offset in file.call_sites.get(func, []):
        index = positional.index(param.name) - offset if param.name in positional else None
        value = keyword(site, param.name, index) if index is None or index >= 0 else None
        if value is None:
            return []
        values.append(value)
    return values


def _excludes_wrapper(file: FileModel, branch: Branch, built: ast.AST) -> bool:
    """The rank test holds only where the model is not wrapped: it is `... and not X and ...` and the
    wrapper is built only under `if X:` (lint heldout10 u050: `if ddp_enabled and not use_ddp_train and
    not is_rank0(): return`, the model wrapped under `if use_ddp_train:`, a run with DDP never takes
    that exit)."""
    test = branch.test
    if type(test) is not ast.BoolOp or type(test.op) is not ast.And:
        return False
    negated = {ast.unparse(v.operand) for v in test.values if type(v) is ast.UnaryOp and type(v.op) is ast.Not}
    return any(type(up) is ast.If and ast.unparse(up.test) in negated and arm == "body"
               for up, arm in arms(file, built))


def _prepared(file: FileModel, prepare: ast.Call) -> tuple[str, str]:
    """(severity, what happens) for an accelerate-prepared model whose sharding the file does not
    set: accelerate wraps it in DDP for several processes, unless its config (not in the file) says
    FSDP or DeepSpeed. Every one of those communicates in a forward of a module with buffers (DDP
    broadcasts them; FSDP and ZeRO-3 gather the parameters anyway): an error there; else a warning
    that says what would make it hang (issue 41 item 4: an error only where the forward must
    communicate; lint heldout12 u028's reader read the DDP buffer broadcast)."""
    module = prepare.args[0] if prepare.args else None
    found = buffers(file, module) if module is not None else None
    if found is not None and found.answer == HAS:
        return ERROR, (f"its forward communicates: under accelerate's DDP it broadcasts the module's buffers from "
                       f"rank 0 ({found.why}), under FSDP or DeepSpeed ZeRO-3 it gathers the parameters, and the "
                       "job hangs")
    why = found.why if found is not None else "the prepared module is not given"
    return WARNING, ("it hangs if the forward communicates: under an FSDP or DeepSpeed ZeRO-3 accelerate config (not "
                     "in this file), or under its DDP where the module holds buffers (BatchNorm, register_buffer) or a "
                     f"backward runs on these ranks alone; whether the module holds buffers could not be told: {why}"
                     if found is None or found.answer != NONE else
                     f"its module holds no buffers ({found.why}), so under accelerate's DDP a no-grad forward makes no "
                     "collective; it hangs under an FSDP or DeepSpeed ZeRO-3 accelerate config (not in this file) or "
                     "once a backward runs on these ranks alone")


def _after_no_grad_pass(file: FileModel, node: ast.AST, model: str) -> ast.stmt | None:
    """The statement before `node` (in its block or an enclosing one, in its function) that last
    uses the model `model` names, where it runs it on every rank under no_grad, and runs whenever
    `node` does: no test, or the test of the `if` around `node` (or one of its `and`-ed parts). DDP
    broadcasts buffers only in the first forward after one with grad on (a forward with grad off
    clears `require_forward_param_sync`): after such a pass the no-grad forwards some ranks run
    make no collective (lint heldout18 u007..u009, build-nanogpt's train_gpt2.py: the validation
    loss on every rank under `if step % 250 == 0 or last_step:`, then under `if (step % 250 == 0 or
    last_step) and (not use_compile):` HellaSwag's examples split by `i % ddp_world_size`). None
    where a statement between uses the model otherwise (a step with grad on, a function it is
    handed to), or the pass may not run."""
    for up in file.ancestors(node):
        if isinstance(up, (*FUNCTIONS, ast.ClassDef)):
            return None
        for field in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(up, field, None)
            if not isinstance(block, list) or node not in block:
                continue
            for prev in reversed(block[:block.index(node)]):
                if isinstance(prev, (*FUNCTIONS, ast.ClassDef)):
                    continue  # defined, not run here
                forwards = _uses(file, prev, model)
                if not forwards:
                    continue
                if any(f is False for f in forwards) or not any(isinstance(f, ast.Call) for f in forwards):
                    return None  # the model is handed on or run with grad on: what state it leaves is unknown
                for f in forwards:
                    if isinstance(f, ast.Call):
                        branch = rank_branch(file, f)
                        if not _no_grad(file, f, f) or (branch is not None and _inside(branch.test, (prev,))):
                            return None
                if type(prev) is ast.If and not _implied(prev.test, node):
                    return None
                return prev
        if isinstance(up, (ast.For, ast.AsyncFor, ast.While)) and any(
                f is False or isinstance(f, ast.Call) and not _no_grad(file, f, f) for f in _uses(file, up, model)):
            return None  # the loop's previous pass may end with the model run with grad on (a training step)
        node = up
    return None


def _uses(file: FileModel, stmt: ast.AST, model: str) -> list[ast.Call | bool]:
    """What each use of the model `model` names in `stmt` does (`_forward`)."""
    return [_forward(file, n) for n in ast.walk(stmt) if type(n) in (ast.Name, ast.Attribute) and source(n) == model]


def _forward(file: FileModel, use: ast.AST) -> ast.Call | bool:
    """What a use of the model does: its forward (the call), nothing that runs it (`model.eval()`,
    `model.module`: True), or something lint cannot follow (handed to a function, rebound: False)."""
    up = file.parent.get(use)
    if type(up) is ast.Call and up.func is use:
        return up
    if type(up) is ast.Attribute and up.value is use:
        call = file.parent.get(up)
        if type(call) is ast.Call and call.func is up and up.attr == "forward":
            return call
        return up.attr not in ("generate", "__call__")
    return False


def _implied(test: ast.expr, node: ast.AST) -> bool:
    """`test` holds wherever `node` runs: `node` is an `if` of the same test, or of an `and` of it."""
    if type(node) is not ast.If:
        return False
    parts = node.test.values if type(node.test) is ast.BoolOp and type(node.test.op) is ast.And else [node.test]
    return any(ast.unparse(part) == ast.unparse(test) for part in parts)


def _inside(node: ast.AST, block: tuple[ast.AST, ...]) -> bool:
    """`node` is one of the statements of `block` or inside one."""
    return any(node is sub for stmt in block for sub in ast.walk(stmt))


def _no_grad(file: FileModel, call: ast.AST, site: ast.AST) -> bool:
    """`call` runs with grad off: inside `with torch.no_grad():` / `inference_mode()`, or in a
    function decorated with either, or its function is called (at `site`) inside one."""
    for node in (call, site):
        for anc in file.ancestors(node):
            if type(anc) in (ast.With, ast.AsyncWith) and any(
                    NO_GRAD.search(ast.unparse(item.context_expr)) for item in anc.items):  # type: ignore[attr-defined]
                return True
            if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(NO_GRAD.search(ast.unparse(d)) for d in anc.decorator_list):
                return True
    return False


NO_GRAD = re.compile(r"\b(no_grad|inference_mode)\b")
# A function whose name says it runs the model it is given on data (evaluation, inference, sampling).
# (`val` as a word of the name too: `val_one_epoch`, lint lh17 u008; not `interval`)
EVALUATES = re.compile(r"eval|valid|test|infer|predict|bleu|metric|accuracy|score|sampl|generat|reconstruct|estimat|loss"
                       r"|(?:^|_)val(?:_|$)", re.IGNORECASE)

# A parameter that holds the model a function is given: `model`, `net`, `ddp_model`.
MODEL_PARAM = re.compile(r"model|net$|^net", re.IGNORECASE)


def _size_test(file: FileModel, call: ast.AST, func: ast.AST, data: set[str]) -> ast.expr | None:
    """The test of an `if` around `call` (inside `func`) on the size of one of `data`'s
    parameters: `if batch_size:` with `batch_size = input.size(0)`, `if len(x) > 0:`."""
    child = call
    for anc in file.ancestors(call):
        if anc is func:
            return None
        if type(anc) is ast.If and child is not anc.test and any(child is s for s in anc.body):
            operands = [anc.test] if type(anc.test) is not ast.Compare else [anc.test.left, *anc.test.comparators]
            for operand in operands:
                for origin in [operand, *file.origins(operand)]:
                    if isinstance(origin, ast.AST) and _size_of(origin) in data:
                        # (a rank with an empty batch that runs the forward on a dummy input in the other arm is fine)
                        called = ast.unparse(call.func) if type(call) is ast.Call else ""
                        other = any(type(c) is ast.Call and ast.unparse(c.func) == called
                                    for stmt in anc.orelse for c in ast.walk(stmt))
                        return None if other else anc.test
        child = anc
    return None


def _size_of(node: ast.AST) -> str:
    """The name whose batch size `node` reads: `x.size(0)`, `x.shape[0]`, `len(x)`, else ""."""
    if type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr == "size" \
            and [constant(a) for a in node.args] == [0]:
        node = node.func.value
    elif type(node) is ast.Subscript and type(node.value) is ast.Attribute and node.value.attr == "shape" \
            and constant(node.slice) == 0:
        node = node.value.value
    elif type(node) is ast.Call and type(node.func) is ast.Name and node.func.id == "len" and len(node.args) == 1:
        node = node.args[0]
    else:
        return ""
    return node.id if type(node) is ast.Name else ""


@functools.lru_cache(maxsize=64)
def _sharding_fabric(text: str) -> bool:
    return FABRIC_SHARDED.search(text) is not None


def _zero_3_in_code(file: FileModel) -> bool:
    """The file's code sets ZeRO stage 3 (`"stage": 3` in its config dict, `zero_stage=3`), and no other
    stage: not a usage line in a comment or the docstring naming a config file (lint heldout24 u028:
    `deepspeed ... --deepspeed_config=deepspeed_configs/zero3_offload_config.json` beside a zero2 one, the
    config read from the command line)."""
    key = ("zero-3-in-code",)
    if key not in file.memo:
        file.memo[key] = _zero_stages(file) == {"3"}
    return bool(file.memo[key])


def _zero_stages(file: FileModel) -> set[str]:
    """The ZeRO stages the file's code names, outside comments and docstrings."""
    docstrings = {line for node in ast.walk(file.tree) if type(node) is ast.Expr and type(node.value) is ast.Constant
                  and type(node.value.value) is str for line in range(node.lineno, (node.end_lineno or node.lineno) + 1)}
    stages: set[str] = set()
    for number, line in enumerate(file.text.splitlines(), 1):
        code = line.split("#", 1)[0]
        if number in docstrings or not code.strip():
            continue
        for m in ZERO_STAGE.finditer(code):
            stages.add(next(g for g in m.groups() if g is not None))
    return stages


@functools.lru_cache(maxsize=64)
def _zero_3(text: str) -> bool:
    return ("stage" in text or "zero" in text.lower() or "ZeRO" in text) and ZERO_3.search(text) is not None


def _literal_rank_test(file: FileModel, test: ast.expr) -> bool:
    """`rank == 1` where `rank` is a parameter every call of the file gives as a literal and nothing in the file
    starts processes (`example(0, 2)` in main(), the DDP note's example run once: lint heldout25 u032): there is one
    process, and its rank is that literal; the arms do not part ranks."""
    if type(test) is not ast.Compare or is_torch_spawn_program(file) or "Process(" in file.text:
        return False
    for side in (test.left, *test.comparators):
        found = (file.lookup(side) or []) if type(side) is ast.Name and "rank" in side.id.lower() else []
        if len(found) == 1 and type(found[0]) is Param and not file.references.get(found[0].function):
            origins = file.origins(side)
            if origins and all(type(o) is ast.Constant for o in origins):
                return True
    return False
