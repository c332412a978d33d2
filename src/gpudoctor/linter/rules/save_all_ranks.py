from __future__ import annotations

from collections.abc import Iterator

import ast
import re

from gpudoctor.linter.idioms import (DISTRIBUTED_NEEDLES, TORCH, data_parallel_framework, framework_words, in_spawning_parent,
                                     is_distributed_program, is_torch_spawn_program, lightning_multi_process,
                                     prepared_model)
from gpudoctor.linter.arms import arms, ruled_out
from gpudoctor.linter.model import Element, FileModel, constant, keyword, terminal_name
from gpudoctor.linter.project import LIBRARIES, Query
from gpudoctor.linter.ranks import is_rank_condition, is_rank_value, same_everywhere
from gpudoctor.linter.rule import Hit, Rule

# A switch that says the run is distributed (`if args.distributed:`, `if dist.is_initialized():`,
# `if ddp:`); not a GPU count, which a DataParallel run has too.
# (`if args.dist:`, lint heldout19 u044: the group started in its body, the plain run's makedirs in the `else`)
DISTRIBUTED_SWITCH = re.compile(r"distributed|^is_initialized$|^(?:use_|is_)?ddp(?:_enabled)?$|^(?:use_|is_)?dist$",
                                re.IGNORECASE)



class SaveAllRanks(Rule):
    """`torch.save` in a distributed script without a rank-0 guard: every
    process writes the same file at the same time, which wastes I/O and can
    leave a corrupt checkpoint when the writes interleave. A distributed
    script starts a process group (itself, or through a helper it imports:
    timm's `utils.init_distributed_device(args)`, `deepspeed.init_distributed()`),
    spawns workers or wraps a model in DDP. The process that calls mp.spawn
    runs once: a save beside that call is not flagged (issue 41's dev7).

    A guard is a test on the rank (`if rank == 0:`, `if dist.get_rank() == 0`,
    `if args.local_rank in (-1, 0)`, `accelerator.is_main_process`, an early
    `if rank != 0: return`, Lightning's `@rank_zero_only`, a helper or flag
    computed from the rank, `if should_save():` with `def should_save():
    return dist.get_rank() == 0`, in this file or imported from another
    module of the project) around the call, or around every call, within the
    file, of the function or method that contains it. A file name that
    contains the rank (one file per rank; also through a folder the function
    set from the rank before, `args.save_dir = os.path.join(args.save_dir,
    f'ensemble_{rank}')`: lint heldout19) is not flagged, nor is a function
    the file never calls, nor a save under a flag or predicate this file
    cannot resolve (`if args.save_logs:` set in another module): it may be
    a rank flag. A flag the file decides alike on every rank is no guard: a
    parameter every call gives a literal (`train(epoch, save_model=True)`), an
    option of the file's own argparse parser nothing reassigns (`if
    args.render_only: return`), `hasattr(model, "module")` / `isinstance(...)`
    (issue 41's dev7 and heldout10), a setting read with `getattr(trainer.args,
    "tune_mm_mlp_adapter", False)` (lint heldout25c u030, u033: LLaVA's config save
    before its rank test). Nor is a flag named for one process that the file sets to a
    constant only (`master_process = True`: a nanoGPT script with its rank set-up replaced,
    lint heldout25c u006): true on every process alike. A heuristic: a warning. A test that an object exists (`if
    writer is not None:`, `if writer:`) is a rank guard where the object is
    built only under a rank test and is None elsewhere (issue 41's heldout9: a
    research script saving its best checkpoint where its TensorBoard writer
    exists, `writer = None` on the other ranks).

    A Lightning script whose `Trainer` is given several devices (`devices=4`,
    `gpus=2`) or a `ddp`, `fsdp` or `deepspeed` strategy is distributed too: Lightning runs the script
    once per device, so a `torch.save` after `trainer.fit(...)` runs on every
    rank unless it tests `trainer.is_global_zero` (issue 41's heldout4: a
    4-GPU fit whose saved module came out empty; lint heldout25 u003, `strategy='fsdp'`). `ddp_spawn` and
    `ddp_notebook` are not: the rest of the script runs in one process.

    A save in the file's own save helper (a function named for saving: `def
    save_checkpoint(state, is_best): torch.save(state, path)`) is said at the helper's first
    call that runs on every rank, naming the save (lint dev7: a course's ImageNet trainer, a
    skeleton-action trainer's `save_checkpoint` -> `save_states`): the helper serves every
    caller, the call is the mistake.

    Not flagged either: a save in the arm of the file's distributed switch where the run is
    not distributed (the `else` of `if args.distributed:` / `if dist.is_initialized():`, the
    body of `if not args.distributed:`): one process runs there (lint heldout11: a GAN
    trainer's plain save beside its rank-0 save). Nor a save that never runs: under a
    test the file's constants make false, or under a strict comparison an `if` of the
    same test just above made false (`if loss < best: best = loss`, then `if loss <
    best: torch.save(...)`; lint heldout13, a save its reader found unreachable).

    A loop's counter is no rank flag: `if batch and (batch + 1) % val_interval == 0:` with `batch`
    the index `enumerate` yields (or an element of `range`) is the same on every rank (lint
    heldout15: a compression trainer's current and best checkpoints), nor is a flag the file computes
    in view from no rank and no call (`is_save_step = (step + 1) % save_every == 0`: lint heldout25
    u009, an FSDP program whose every rank saves its sampler state). A save in the `else` of
    a test that holds on rank 0 only (`if is_distributed and local_rank == 0: torch.save(...)
    else: torch.save(...)`) runs on every other rank, and is flagged there (lint heldout15: a
    meta-learning trainer saving one path in both arms). And a save helper of the project's own
    modules (`from utils import save_checkpoint`), given a state dict on every rank
    (`save_checkpoint({'state_dict': model.state_dict(), ...}, is_best, path)`), is flagged at its
    call, saying that its body is not in view (lint heldout15: CLTR's train_distributed.py and
    two derivatives); not a helper whose name says one process saves (`save_on_master`), a
    method of an object (DeepSpeed's `engine.save_checkpoint(dir)` must run on every rank), nor
    a library's (mmcv's, detectron2's).

    A file a library runs data-parallel (`deepspeed.initialize(...)`; accelerate's `Accelerator()` or
    transformers' `Trainer` where the file shows a multi-process launch: see
    `idioms.data_parallel_framework`) is distributed too: under its launcher every line runs once per
    process. And a Hugging Face `save_pretrained(dir)` (of a model, a tokenizer, a processor, a
    DeepSpeed engine) is a save like `torch.save`: every process writes the same files into `dir`
    unless it is told `is_main_process=` (or a `save_function=` that saves once). Asked for by lint
    heldout21..24's readers (`model_engine.save_pretrained(args.save_dir)` after a DeepSpeed loop,
    `tokenizer.save_pretrained(args.output_dir)` after `trainer.train()`, a `torch.save` each epoch
    under accelerate: 12 such saves in the development corpus, every one read so). An `Accelerator()`
    whose file names no launcher counts where the file uses accelerate's multi-process API on it (a
    barrier, `accelerator.wait_for_everyone()`; a gather; `main_process_first()`),
    which does nothing in one process, and the message names that line (lint heldout27c u031, u033,
    u037: LoRA and PEFT trainers saving on every process after the barrier), or reads the process's index
    (`device_map={"": Accelerator().process_index}`: lint heldout29 u004), or is given a setting only several
    processes have (`kwargs_handlers=[DistributedDataParallelKwargs(...)]`, `split_batches=True`: lint heldout29
    u011, heldout29b u016, u024); a Trainer whose file calls torch.distributed's group API itself
    (`dist.barrier()`: lint heldout29b u019) likewise. A Trainer that shows none of it is left unsaid
    (it runs as one process as often as not), as are some 85 in the mature repositories' examples and
    notebooks that the issue 28 control found so. An `Accelerator` that shows none of it but trains a model
    it prepares (`idioms.unshown_accelerate_launch`) is said with the launch as the condition: "when launched
    as several processes (`accelerate launch` on several GPUs; this file shows no launch, ...)" (issue 41,
    item 2: what lint cannot decide is named, not kept silent). The readers of the retired parts read every
    such save so (lint heldout29 u016, heldout30 u001, heldout31 u021, u023, heldout27b u016: 5 of 5), and the
    issue 28 control's 184 accelerate files gain none (their saves are guarded or their launch shown). Not
    where the file says it runs as one process: a usage line `python train.py` in a comment or a string, or
    CUDA_VISIBLE_DEVICES set to one GPU (lint heldout31 u015's `'2'`).
    `trainer.save_model()` and `accelerator.save(...)` save on the main process by themselves and
    are not read as saves; a save method of what `accelerator.unwrap_model(...)` returned
    (`accelerator.unwrap_model(model).save_model(path)`, a project model's own `save`) is (lint heldout29
    u011), and so is the project model's own `save(path)` called on what `accelerator.prepare(...)` returned
    (`model.save(f"{model_path}/model_{epoch}.pth")`: lint heldout29 u016, heldout30 u001; `vae.save(dir,
    save_name=...)` beside the same save on the unwrapped model under `is_main_process`: heldout30 u003). A save helper of the project's own modules given no state dict counts where the file calls it
    elsewhere under a rank test (lint heldout29b u003: a NeRF trainer's periodic `save_model(network, ...)`
    beside two rank-0 calls of it). A script whose `deepspeed` is transformers' integration module (`from
    transformers import deepspeed`) starts no group with its `deepspeed.init_distributed()`, which
    that module does not have (lint heldout24 u074: its reader read the script as one process).
    Nor a file whose every group is a world of one (`init_process_group(..., world_size=1)`) and that
    starts no processes nor reads a launcher's variables: one process saves (lint heldout26b u009).
    Nor a save in a function the file only registers as a library's hook
    (`accelerator.register_save_state_pre_hook(save_model_hook)`): it runs where the library saves
    its state, which diffusers' scripts do on the main process (the issue 28 control). A save
    helper's call on every rank is a place of the file's one missing guard too (lint
    heldout21 u006: `commit_state`'s torch.save and `save_weights()` in one epoch loop, one
    reader's entry).

    The saves of one file on every rank are one missing guard: one diagnostic at the
    first, naming the others (lint heldout19: four checkpoint saves of one training
    function; lint heldout20 u003-u005: train()'s periodic saves and val()'s best-model
    save, one reader's entry each); saves in the two arms of an `if` are alternatives,
    each said.
    """

    id = "save-all-ranks"
    in_tests = False  # tests build this shape on purpose
    message = "torch.save runs on every rank: all processes write the same file"
    fix = "if dist.get_rank() == 0: torch.save(...)  # then dist.barrier() before other ranks read it"
    needles = ("save",)

    VALID = (
        '''
        import torch
        import torch.distributed as dist

        dist.init_process_group("gloo")
        if dist.get_rank() == 0:
            torch.save(model.state_dict(), "ckpt.pt")
        ''',
        '''
        import os
        import torch
        import torch.distributed as dist

        class Trainer:
            def __init__(self):
                self.gpu_id = int(os.environ["LOCAL_RANK"])

            def _save_checkpoint(self, epoch):
                torch.save(self.model.module.state_dict(), "ckpt.pt")

            def train(self, epochs):
                for epoch in range(epochs):
                    if self.gpu_id == 0:
                        self._save_checkpoint(epoch)

        dist.init_process_group("nccl")
        ''',
        '''
        import torch
        import torch.distributed as dist

        def save_shard(state, rank):
            torch.save(state, f"optimizer-rank{rank}.pt")  # one file per rank

        dist.init_process_group("gloo")
        save_shard(optimizer.state_dict(), dist.get_rank())
        ''',
    )
    INVALID = (
        '''
        import torch
        import torch.distributed as dist

        dist.init_process_group("gloo")
        for epoch in range(10):
            train_one_epoch()
            torch.save(model.module.state_dict(), "ckpt.pt")  # flagged
        ''',
        '''
        import torch
        import torch.multiprocessing as mp

        def worker(rank, world_size):
            train(rank)
            save_checkpoint()  # flagged: the save helper's call, on every rank

        def save_checkpoint():
            torch.save(model.state_dict(), "ckpt.pt")

        if __name__ == "__main__":
            mp.spawn(worker, args=(2,), nprocs=2)
        ''',
    )

    def relevant(self, text: str) -> bool:
        return "save" in text and (any(n in text for n in DISTRIBUTED_NEEDLES) or "Trainer(" in text
                                   or "deepspeed" in text or "Accelerator" in text)

    def check(self, file: FileModel) -> Iterator[Hit]:
        saves = sorted([c for c in file.calls_to("save", TORCH) if file.qualname(c.func) == "torch.save"]
                       + [c for c in file.calls if _model_save(c) or _prepared_save(file, c)],
                       key=lambda c: (c.lineno, c.col_offset))
        imported = {id(c): module for c, module in _imported_savers(file)}
        framework = data_parallel_framework(file, unshown=True)
        if not (saves or imported) or not (is_distributed_program(file) or lightning_multi_process(file) or framework):
            return
        if framework is None and world_of_one(file):
            return  # every group the file makes is one process (lint heldout26b u009: FSDP for calibration)
        # where only the library makes the processes, the message says which
        only = framework if not (is_distributed_program(file) or lightning_multi_process(file)) else None
        shown = "" if only is None else framework_words(file, only)
        said: set[int] = set()
        candidates = saves + [c for c in file.calls if id(c) in imported]
        for call in sorted(candidates, key=lambda c: (c.lineno, c.col_offset)):
            # One file per rank (`f"ckpt-{rank}.pt"`) is deliberate.
            own = _model_save(call) or _prepared_save(file, call)  # a model's own save: every argument is its own
            given = call.args[1:] if id(call) not in imported and not own else call.args
            if any(self._per_rank(file, arg) for arg in given + [kw.value for kw in call.keywords]):
                continue
            # the `else` of `if rank == 0:` runs on every other rank (lint heldout15 u025: `if is_distributed
            # and local_rank == 0: torch.save(...) else: torch.save(...)`, the same path in both arms)
            other = _other_ranks_arm(file, call)
            tests = [t for t in file.conditions(call) if other is None or t is not other.test]
            # a flag named for one process that the file sets alike on every process (`master_process = True`)
            constant = _constant_flags(file, tests)
            if constant:
                tests = [t for t in tests if not file.is_rank_test(t)]
                if _called_on_one_rank(file, call) or in_spawning_parent(file, call):
                    continue
            elif (other is None and file.rank_guarded(call)) or in_spawning_parent(file, call):
                continue  # (the parent of mp.spawn saves once: dev7 u011)
            if other is not None and (any(file.is_rank_test(t) for t in tests) or _called_on_one_rank(file, call)):
                continue
            if ruled_out(file, call):
                continue  # never runs: a test the file's constants, or the `if` just above, make false
            if _hook(file, call):
                continue  # a hook the library calls where it saves its state (on the main process, as a rule)
            if _single_process_arm(file, call):
                continue  # the `else` of `if args.distributed:`: one process (lint heldout11 u029)
            if any(is_rank_condition(file, test) or self._made_on_some_ranks(file, test) for test in tests):
                continue  # a helper of this file computed from the rank, or an object only some ranks made
            if id(call) in imported or other is not None:
                if not any(self._unresolved_flag(file, test) for test in tests) and id(call) not in said:
                    said.add(id(call))
                    yield Hit(call, message=_other_message(file, call, other, imported.get(id(call))))
                continue
            helper = self._imported_test(file, tests)
            if helper:  # `if is_first():` with the helper from another module: the project says what it computes
                yield Hit(call, query=Query("not-rank-guard", helper))
            elif not any(self._unresolved_flag(file, test) for test in tests):
                # (`if args.save_ckpt:` may be a rank flag set elsewhere: no guess)
                site, helpers = self._helper_site(file, call)
                if id(site) in said:
                    continue
                said.add(id(site))
                if site is call:
                    # the saves of one file on every rank are one missing guard: said once, at the first
                    # (lint heldout19 u054: four checkpoint saves of one training function; heldout20 u003:
                    # train()'s and val()'s, one reader's entry); saves in the two arms of an `if` are
                    # alternatives, each said (dev7); an `else` with no save in its `if` arm is no alternative
                    # (heldout20 u003: val()'s best-model save under `if epoch == 1: ... else:`)
                    alternatives = tuple(id(branch) for branch, arm in arms(file, call) if arm == "orelse"
                                         and any(_in_body(branch, s) for s in saves))
                    flag = (f" under `{constant[0][0].id}`, which this file sets to {ast.unparse(constant[0][1])} on every "
                            f"process (line {constant[0][1].lineno})" if constant else "")
                    yield Hit(call, cause=("every rank saves", alternatives),
                              message=f"{_saver(call, own)} runs on every rank{flag}{shown}: all processes write the "
                              f"same file{'s' if own else ''}"
                              if shown or flag or own else "", fix=_main_process_fix(only, call))
                else:
                    inner = f" in {helpers[-1]}()" if len(helpers) > 1 else ""
                    # (the save itself is a place of this cause too: lint heldout17 u042's reader wrote it there)
                    yield Hit(site, message=f"{helpers[0]}() runs on every rank from this call{shown} and writes with "
                              f"{_saver(call, own)} (line {call.lineno}{inner}): all processes write the same file",
                              also=(call.lineno,), cause=("every rank saves", ()))

    @staticmethod
    def _helper_site(file: FileModel, call: ast.Call) -> tuple[ast.AST, list[str]]:
        """Where a save made in the file's own save helper (`def save_checkpoint(state, ...):
        torch.save(state, path)`, a function named for saving) runs on every rank: its first call
        not under a rank test, followed up through helpers that call it (`save_checkpoint()` ->
        `save_states()`); the call itself where it is not in such a helper. The helper serves
        whoever calls it; the mistake is the call that runs on every rank (lint dev7: a course's
        ImageNet `save_checkpoint({...}, is_best)` each epoch, a skeleton trainer's
        `self.save_checkpoint(epoch + 1)`)."""
        node: ast.AST = call
        helpers: list[str] = []
        for _ in range(3):
            func = file.function(node)
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or "save" not in func.name.lower() \
                    or file.references.get(func):
                break
            sites = sorted((c for c, _ in file.call_sites.get(func, []) if not file.rank_guarded(c)),
                           key=lambda c: (c.lineno, c.col_offset))
            if not sites:
                break
            helpers.insert(0, func.name)
            node = sites[0]
        return node, helpers

    @staticmethod
    def _per_rank(file: FileModel, arg: ast.expr) -> bool:
        """The file name holds the rank, written there or in the variable
        passed (`path = f"ckpt_{rank}.pt"`; `torch.save(state, path)`), or in a
        namespace attribute the path is built from, which the function set from
        the rank before (`args.save_dir = os.path.join(args.save_dir,
        f'ensemble_{rank}')`, then `save_path = os.path.join(args.save_dir,
        args.algo)`: lint heldout19 u048, one folder per rank)."""
        if file.is_rank_test(arg):
            return True
        if type(arg) is ast.Name and any(
                isinstance(o, ast.expr) and o is not arg and file.is_rank_test(o) for o in file.origins(arg)):
            return True
        # the path and the values of the names it is built from (`os.path.join(save_path, name)`)
        built = [arg] + [o for sub in ast.walk(arg) if type(sub) is ast.Name for o in file.origins(sub)
                         if isinstance(o, ast.expr) and o is not sub]
        return any(_attribute_set_from_rank(file, sub) for value in built for sub in ast.walk(value)
                   if type(sub) is ast.Attribute and type(sub.value) is ast.Name)

    @staticmethod
    def _made_on_some_ranks(file: FileModel, test: ast.expr) -> bool:
        """`if writer is not None:` (or `if writer:`) where `writer` is None, or something built
        only under a test of the rank (`if args.local_rank == 0: writer = SummaryWriter(...)
        else: writer = None`): the test is the rank test, one step removed (issue 41's
        heldout9: a research script's best checkpoint saved where its TensorBoard writer exists)."""
        if type(test) is ast.Compare and len(test.ops) == 1 and type(test.ops[0]) is ast.IsNot \
                and type(test.comparators[0]) is ast.Constant and test.comparators[0].value is None:
            test = test.left
        if type(test) is not ast.Name:
            return False
        origins = file.origins(test)
        made = [o for o in origins if not (type(o) is ast.Constant and o.value is None)]
        if not made or len(made) == len(origins):
            return False  # never None, or never anything else
        return all(isinstance(o, ast.AST) and any(is_rank_condition(file, t) for t in file.conditions(o))
                   for o in made)

    @staticmethod
    def _unresolved_flag(file: FileModel, test: ast.expr) -> bool:
        """A bare flag or predicate (`if args.save_logs:`, `if should_save():`)
        that does not read the job's shape (`if args.distributed:` does), nor is
        decided alike on every rank by this file: a literal every path gives it
        (`def train(self, epoch, save_model=True)` called with `save_model=True`),
        an option of this file's argparse parser that nothing reassigns
        (`if args.render_only: return`), or a question about the model's type
        (`hasattr(model, "module")`, `isinstance(...)`): lint dev7's skeleton-action and
        NeRF trainers, lint heldout10's save of the unwrapped model on every rank."""
        while isinstance(test, ast.UnaryOp) and type(test.op) is ast.Not:
            test = test.operand
        if isinstance(test, ast.BoolOp):
            return any(SaveAllRanks._unresolved_flag(file, v) for v in test.values)
        if not isinstance(test, (ast.Name, ast.Attribute, ast.Call)) or same_everywhere(test):
            return False
        if type(test) is ast.Call and type(test.func) is ast.Name and test.func.id in ("hasattr", "isinstance") \
                and file.lookup(test.func) is None:
            return False
        if type(test) is ast.Call and type(test.func) is ast.Name and test.func.id == "getattr" \
                and file.lookup(test.func) is None and len(test.args) >= 2 and not file.is_rank_test(test):
            # a setting read off a config (`getattr(trainer.args, "tune_mm_mlp_adapter", False)`): every
            # process reads the same (lint heldout25c u030, u033: LLaVA's adapter-only save)
            return False
        if type(test) is ast.Name:
            origins = file.origins(test)
            return not (origins and all(type(o) is ast.Constant or _counter(o) or _plain_test(file, o)
                                        for o in origins))
        if type(test) is ast.Attribute and type(test.value) is ast.Name and test.value.id in ("args", "opt", "FLAGS"):
            return not SaveAllRanks._option(file, test.attr) or any(
                type(n) is ast.Attribute and n.attr == test.attr and type(n.ctx) is ast.Store
                for n in ast.walk(file.tree))
        return True

    @staticmethod
    def _option(file: FileModel, dest: str) -> bool:
        """An `add_argument` of this file stores `dest` (`--render_only`, `--render-only`, `dest=`)."""
        for call in file.calls:
            if type(call.func) is ast.Attribute and call.func.attr == "add_argument":
                flags = [c for c in (constant(a, str) for a in call.args) if c]
                named = constant(keyword(call, "dest"), str)
                if named == dest or any(f.lstrip("-").replace("-", "_") == dest for f in flags if f.startswith("--")):
                    return True
        return False

    @staticmethod
    def _imported_test(file: FileModel, tests: list[ast.expr]) -> str:
        """The dotted name of a function or flag imported from a module that
        may be the project's, tested around the call."""
        for test in tests:
            for node in ast.walk(test):
                if type(node) is ast.Call:
                    node = node.func
                if type(node) is not ast.Name:
                    continue
                base = file.imports.get(node.id) or file.relative_imports.get(node.id)
                if base and base.lstrip(".").split(".", 1)[0] not in LIBRARIES and file.lookup(node) is None:
                    return base
        return ""


def world_of_one(file: FileModel) -> bool:
    """Every process group the file makes is a world of one (`init_process_group(..., world_size=1)`, a literal)
    and it starts no processes (no spawn, no `Process(`, no launcher's LOCAL_RANK read): one process runs it, so
    nothing any rule says "every rank" does happens twice (a save, a download, a folder made)."""
    inits = list(file.calls_to("init_process_group", TORCH))
    if not inits or is_torch_spawn_program(file) or any(terminal_name(c.func) == "Process" for c in file.calls):
        return False
    if any(type(n) is ast.Constant and n.value in ("LOCAL_RANK", "RANK", "WORLD_SIZE") for n in ast.walk(file.tree)):
        return False
    return all(constant(keyword(c, "world_size", 3), int) == 1 for c in inits)


def _main_process_fix(framework: ast.Call | None, call: ast.Call) -> str:
    """The guard to paste where a library makes the processes: accelerate's or the Trainer's own main-process
    test ("": the rule's `dist.get_rank() == 0`)."""
    if framework is None:
        return ""
    saved = ast.unparse(call)[:60]
    if terminal_name(framework.func) == "Accelerator":
        return f"if accelerator.is_main_process: {saved}  # after accelerator.wait_for_everyone()"
    if terminal_name(framework.func).endswith("Trainer"):
        return f"if trainer.is_world_process_zero(): {saved}"
    return ""


def _model_save(call: ast.Call) -> bool:
    """A model's own save that writes files, as `torch.save` does: a `save_pretrained` (below), or a save method
    called on what accelerate's `unwrap_model(...)` returned (`accelerator.unwrap_model(model).save_model(path)`:
    lint heldout29 u011, a diffusion trainer's checkpoint on every process; `.save(path)`, `.save_weights(path)`).
    Only what `unwrap_model` gives: a method of any other object may save once by itself (`trainer.save_model()`)
    or have to run on every rank (DeepSpeed's `engine.save_checkpoint(dir)`)."""
    if _pretrained_save(call):
        return True
    func = call.func
    return type(func) is ast.Attribute and func.attr.startswith("save") and not ONE_PROCESS_NAME.search(func.attr) \
        and type(func.value) is ast.Call and terminal_name(func.value.func) == "unwrap_model" \
        and keyword(call, "is_main_process") is None and bool(call.args or call.keywords)


def _pretrained_save(call: ast.Call) -> bool:
    """`x.save_pretrained(dir)` (transformers', peft's, diffusers' models, tokenizers and processors; a
    DeepSpeed engine passes it to its module) not told which process saves: without
    `is_main_process=` (or a `save_function=`, accelerate's `accelerator.save`) every process writes."""
    return type(call.func) is ast.Attribute and call.func.attr == "save_pretrained" \
        and keyword(call, "is_main_process") is None and keyword(call, "save_function") is None


def _hook(file: FileModel, call: ast.AST) -> bool:
    """`call` is in a function the file never calls, only registers as a library's hook
    (`accelerator.register_save_state_pre_hook(save_model_hook)`): it runs where the library saves its
    state, which the file guards there (`if accelerator.is_main_process: accelerator.save_state(...)`:
    diffusers' training scripts in the issue 28 control)."""
    func = file.function(call)
    if func is None or file.call_sites.get(func):
        return False
    refs = file.references.get(func, [])
    return bool(refs) and all(type(up := file.parent.get(ref)) is ast.Call and "hook" in terminal_name(up.func)
                              for ref in refs)


def _saver(call: ast.Call, own: bool) -> str:
    """How the message names a save: `torch.save`, `model_engine.save_pretrained(...)`."""
    return f"`{ast.unparse(call.func)[:50]}(...)`" if own else "torch.save"


def _prepared_save(file: FileModel, call: ast.Call) -> bool:
    """`model.save(path)` on the model accelerate's `prepare(...)` returned: the project model's own save method
    (lint heldout29 u016 and heldout30 u001, a CLIP-style encoder's `model.save(f"{model_path}/model_{epoch}.pth")`;
    heldout30 u003, a VAE's `vae.save(dir, save_name=...)`, which the same file calls under `is_main_process` on the
    unwrapped model), writing files as torch.save does. Only `save` given a path: a DeepSpeed engine's
    `save_checkpoint(dir)` must run on every rank."""
    func = call.func
    return type(func) is ast.Attribute and func.attr == "save" and type(func.value) is ast.Name \
        and bool(call.args or call.keywords) and prepared_model(file, func.value) is not None


# A helper whose name says it saves on one process only (`save_on_master`, `save_main_process`).
ONE_PROCESS_NAME = re.compile(r"master|main|rank|zero|primary|first|leader|chief", re.IGNORECASE)
# Libraries whose save helpers are not the project's (and may have to run on every rank: DeepSpeed's).
LIBRARY_SAVERS = {"mmcv", "mmengine", "mmdet", "mmseg", "detectron2", "deepspeed", "fairseq", "apex", "ignite",
                  "colossalai", "megatron", "lightning_fabric", "horovod", "fairscale", "ray", "tensorflow", "keras",
                  "paddle", "jax", "flax", "safetensors", "huggingface_hub", "peft", "diffusers", "sklearn",
                  "joblib", "onnx", "torch_xla", "nni", "optuna"}


def _imported_savers(file: FileModel) -> list[tuple[ast.Call, str]]:
    """Calls of a save helper of the project's own modules (`from utils import save_checkpoint`,
    `utils.save_checkpoint(...)` with `import util.misc as utils`) given a state dict
    (`save_checkpoint({"state_dict": model.state_dict(), ...}, is_best, path)`), with the module
    it comes from. Not a helper whose name says one process saves (`save_on_master`), nor a
    method of an object (DeepSpeed's `engine.save_checkpoint(dir)` must run on every rank),
    nor a library's (lint heldout15: CLTR's train_distributed.py and two derivatives). Given no state dict, the
    helper counts where the file calls it elsewhere under a rank test (`_guarded_elsewhere`)."""
    out: list[tuple[ast.Call, str]] = []
    for call in file.calls:
        name = terminal_name(call.func)
        if not name.lower().startswith("save") or ONE_PROCESS_NAME.search(name):
            continue
        if file.local_function(call) is not None or file.callees(call):
            continue
        if type(call.func) is ast.Name:
            module = file.imports.get(name) or file.relative_imports.get(name) or ""
        elif type(call.func) is ast.Attribute and type(call.func.value) is ast.Name:
            root = call.func.value
            module = file.imports.get(root.id) or file.relative_imports.get(root.id) or ""
        else:
            continue
        top = module.lstrip(".").split(".", 1)[0]
        if not module or (not module.startswith(".") and (top in LIBRARIES or top in LIBRARY_SAVERS)) \
                or module.startswith("torch"):
            continue
        if any(_state_dict_in(file, arg) for arg in call.args + [kw.value for kw in call.keywords]) \
                or _guarded_elsewhere(file, call):
            out.append((call, module.rsplit(".", 1)[0] if type(call.func) is ast.Name else module))
    return out


def _guarded_elsewhere(file: FileModel, call: ast.Call) -> bool:
    """The file calls the same helper elsewhere under a rank test (`if (epoch + 1) % cfg.save_ep == 0 and
    cfg.local_rank == 0: save_model(network, ...)`): it knows the helper writes once per call. A call of it on
    every rank is the guard it left out (lint heldout29b u003: a NeRF trainer's periodic `save_model(...)` beside
    two rank-0 ones)."""
    text = ast.unparse(call.func)
    return any(other is not call and ast.unparse(other.func) == text and file.rank_guarded(other)
               for other in file.calls)


def _state_dict_in(file: FileModel, expr: ast.expr) -> bool:
    """`expr` holds a module's `state_dict()`: written in it, or in the dict a name of it was given."""
    values = [expr] + ([o for o in file.origins(expr) if isinstance(o, ast.AST)] if type(expr) is ast.Name else [])
    return any(type(n) is ast.Call and terminal_name(n.func) == "state_dict" for v in values for n in ast.walk(v))


def _plain_test(file: FileModel, origin: object) -> bool:
    """A flag's value the file computes in view from no rank and no call (`is_save_step = (step + 1) %
    save_every == 0`: lint heldout25 u009, every rank saving its sampler state): alike on every rank."""
    return isinstance(origin, (ast.Compare, ast.BoolOp, ast.UnaryOp)) and not file.is_rank_test(origin) \
        and not any(type(n) is ast.Call for n in ast.walk(origin))


def _counter(origin: object) -> bool:
    """A loop's counter: the index `enumerate` yields, an element of `range(...)`: the same at each step of
    every rank, never a rank flag (lint heldout15 u016: `if batch and (batch + 1) % val_interval == 0:`)."""
    if not isinstance(origin, Element) or type(origin.iterable) is not ast.Call:
        return False
    name = terminal_name(origin.iterable.func)
    return (name == "enumerate" and origin.path[:1] == (0,)) or (name == "range" and not origin.path)


def _other_ranks_arm(file: FileModel, call: ast.AST) -> ast.If | None:
    """The `if` whose `else` holds `call`, where its test holds on rank 0 only (`if rank == 0:`, `if
    is_distributed and local_rank == 0:`): the `else` runs on every other rank."""
    scope = file.function(call)
    for branch, arm in arms(file, call):
        if file.function(branch) is not scope:
            break
        if type(branch) is not ast.If or not file.is_rank_test(branch.test):
            continue
        if arm == "orelse" and _rank_zero(file, branch.test):
            return branch
        return None  # the innermost rank test decides
    return None


def _rank_zero(file: FileModel, test: ast.expr) -> bool:
    """`rank == 0`, alone or joined by `and` to other tests."""
    if type(test) is ast.BoolOp and type(test.op) is ast.And:
        return any(_rank_zero(file, v) for v in test.values)
    if type(test) is not ast.Compare or len(test.ops) != 1 or type(test.ops[0]) is not ast.Eq:
        return False
    left, right = test.left, test.comparators[0]
    return (constant(right) == 0 and is_rank_value(file, left)) or (constant(left) == 0 and is_rank_value(file, right))


def _constant_flags(file: FileModel, tests: list[ast.expr]) -> list[tuple[ast.Name, ast.Constant]]:
    """The flags named for one process (`master_process`) in the rank tests of `tests` where the file
    gives each only constants (`master_process = True`, a nanoGPT script with its rank set-up replaced:
    lint heldout25c u006): true on every process alike, no guard. Empty where any rank test reads
    anything else (`rank == 0`, `master_process = ddp_rank == 0`)."""
    found: list[tuple[ast.Name, ast.Constant]] = []
    for test in tests:
        if not file.is_rank_test(test):
            continue
        parts = test.values if type(test) is ast.BoolOp and type(test.op) is ast.And else [test]
        for part in parts:
            if not file.is_rank_test(part):
                continue
            origins = file.origins(part) if type(part) is ast.Name else []
            values = [o for o in origins if type(o) is ast.Constant and type(o.value) is bool]
            if type(part) is not ast.Name or not values or len(values) != len(origins):
                return []
            found.append((part, values[0]))
    return found


def _called_on_one_rank(file: FileModel, call: ast.AST) -> bool:
    """The function around `call` is called, in this file, only under rank tests."""
    func = file.function(call)
    sites = file.entry_sites(func) if func is not None else []
    return bool(sites) and all(file.rank_guarded(site) for site in sites)


def _other_message(file: FileModel, call: ast.Call, other: ast.If | None, module: str | None) -> str:
    if other is not None:
        both = any(type(n) is ast.Call and file.qualname(n.func) == "torch.save"
                   for s in other.body for n in ast.walk(s))
        return (f"torch.save in the else of `if {ast.unparse(other.test)[:60]}:` (line {other.lineno}) runs on every "
                "other rank" + (", and the if's body saves too" if both else "")
                + ": all processes write the same file")
    guarded = next((o for o in file.calls if o is not call and ast.unparse(o.func) == ast.unparse(call.func)
                    and file.rank_guarded(o)), None)
    if guarded is not None and not any(_state_dict_in(file, a) for a in call.args + [k.value for k in call.keywords]):
        return (f"{terminal_name(call.func)}() of `{module}` runs on every rank here, while this file calls it under a "
                f"rank test at line {guarded.lineno}: if it writes the file (its body is not in this file), all "
                "processes write the same one")
    return (f"{terminal_name(call.func)}() of `{module}` is given a state_dict on every rank: if it writes the file "
            "(its body is not in this file), all processes write the same one")


def _attribute_set_from_rank(file: FileModel, attribute: ast.Attribute) -> bool:
    """`args.save_dir` is assigned, earlier in the same function, a value that holds the rank
    (`args.save_dir = os.path.join(args.save_dir, f'ensemble_{rank}')`)."""
    text, scope = ast.unparse(attribute), file.function(attribute)
    return any(type(node) is ast.Assign and file.function(node) is scope and node.lineno < attribute.lineno
               and any(ast.unparse(t) == text for t in node.targets) and file.is_rank_test(node.value)
               for node in ast.walk(scope or file.tree))


def _single_process_arm(file: FileModel, call: ast.AST, _seen: set[ast.AST] | None = None) -> bool:
    """`call` runs in the arm of the file's distributed switch where the run is not distributed:
    the `else` of `if args.distributed:` / `if dist.is_initialized():` / `if ddp:`, or the body of
    `if not args.distributed:`. One process runs there (lint heldout11 u029: a GAN trainer's rank-0
    save under `if args.distributed: if args.local_rank == 0:`, and its plain save in the `else`)."""
    for branch, arm in arms(file, call):
        test, negated = branch.test, False
        while type(test) is ast.UnaryOp and type(test.op) is ast.Not:
            test, negated = test.operand, not negated
        if type(test) is ast.Call:
            test = test.func
        # `if args['distributed']:` reads the switch from a config dict (lint heldout15 u017, u047, u048:
        # CLTR-style train_distributed.py, DataParallel and its log folder in the `else`)
        if type(test) is ast.Subscript and type(test.slice) is ast.Constant and type(test.slice.value) is str:
            name = test.slice.value
        elif type(test) in (ast.Name, ast.Attribute):
            name = terminal_name(test)
        else:
            continue
        if not DISTRIBUTED_SWITCH.search(name):
            continue
        if arm == ("body" if negated else "orelse"):
            return True
    # or in a function that the file enters only from there: `if args.distributed: main_distributed(args)
    # else: main(args)` (lint heldout15 u015: main()'s saves run in the one process of a plain run)
    func = file.function(call)
    seen = _seen if _seen is not None else set()
    if func is None or func in seen:
        return False
    seen.add(func)
    sites = file.entry_sites(func)
    return bool(sites) and all(_single_process_arm(file, site, seen) for site in sites)


def _in_body(branch: ast.AST, node: ast.AST) -> bool:
    """`node` is in the `if` arm (the body) of `branch`."""
    body = getattr(branch, "body", [])
    return any(node is n for part in (body if isinstance(body, list) else [body]) for n in ast.walk(part))
