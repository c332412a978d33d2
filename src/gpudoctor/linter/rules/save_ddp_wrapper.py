from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from gpudoctor.linter.arms import arms, holding, other_arms, ruled_out, tested_as_own_class, value_key
from gpudoctor.linter.idioms import TORCH, passed_through, prepared_model, source, wrapper_kind as torch_wrapper_kind
from gpudoctor.linter.model import FileModel, end_position, identifiers, keyword, position, terminal_name
from gpudoctor.linter.ranks import is_rank_condition
from gpudoctor.linter.rule import ERROR, WARNING, Hit, Rule


def wrapper_kind(file: FileModel, node: object, depth: int = 0) -> str:
    """torch's DDP / DataParallel, or apex's DistributedDataParallel: it holds the model on
    `.module` too, so its state_dict keys carry the same prefix (lint heldout10: a CycleGAN
    trainer's `netG_A2B = DDP(netG_A2B, delay_allreduce=True)` from apex.parallel). Through
    `.to()` / `.cuda()` on a builder of this file that returns a wrapper on every path
    (lint heldout10: `model = build_sam_model(...).to(device)`, which returns `DDP(model, ...)`)."""
    kind = torch_wrapper_kind(file, node)
    while not kind and type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr in ("to", "cuda"):
        node = node.func.value
    if not kind and depth < 3 and type(node) is ast.Name:
        # `model = model.cuda()` after `model = DDP(model, ...)`: `.cuda()` returns the wrapper itself
        # (lint heldout11 u030: github.com/.../distributed_train.py wraps, then moves the wrapper)
        origins = [o for o in file.origins(node) if o is not node
                   and not (isinstance(o, ast.AST) and other_arms(file, o, node))]
        kinds = {wrapper_kind(file, o, depth + 1) for o in origins}
        return kinds.pop() if origins and len(kinds) == 1 else ""
    if kind or type(node) is not ast.Call:
        return kind
    if file.is_call_to(node, "DistributedDataParallel", ("apex",)):
        return "apex DistributedDataParallel"
    for mm in ("MMDistributedDataParallel", "MMDataParallel"):
        # mmcv's subclasses of torch's wrappers (lint heldout15 u049): the model on `.module` too
        if file.is_call_to(node, mm, ("mmcv", "mmengine")):
            return mm
    if depth < 3 and file.qualname(node.func) == "copy.deepcopy" and node.args and type(node.args[0]) is ast.Name:
        # a deep copy of a wrapper is a wrapper (DDP's __getstate__ / __setstate__ rebuild it on the default group):
        # the EMA model `ema_model = copy.deepcopy(model)` made after `model = DDP(model, ...)` (lint heldout30 u021)
        origins = [o for o in file.origins(node.args[0]) if o is not node]
        kinds = {wrapper_kind(file, o, depth + 1) for o in origins}
        return kinds.pop() if origins and len(kinds) == 1 else ""
    given = passed_through(file, node)
    if depth < 3 and given is not None:
        origins = [o for o in file.origins(given) if o is not node]
        kinds = {wrapper_kind(file, o, depth + 1) for o in origins}
        return kinds.pop() if origins and len(kinds) == 1 else ""
    if depth < 3 and file.local_function(node) is not None:
        origins = file.origins(node)
        kinds = {wrapper_kind(file, o, depth + 1) for o in origins if o is not node}
        if origins and len(kinds) == 1 and node not in origins:
            return kinds.pop()
    return ""


# Calls whose value is new at every run: a path built from one names a file of this run only.
RUN_STAMPS = frozenset({"time", "time_ns", "now", "utcnow", "uuid1", "uuid4", "getpid", "mkstemp", "mkdtemp",
                        "NamedTemporaryFile"})


class SaveDdpWrapper(Rule):
    """`torch.save` of a DistributedDataParallel (or DataParallel) wrapper, or
    of its `state_dict()`: every key carries a `module.` prefix, so the
    checkpoint does not load into the plain model (`Missing key(s) in
    state_dict`), and pickling the wrapper ties the file to DDP.

    Save the wrapped model, `model.module.state_dict()`. Flagged only when
    every value the saved object may hold is a wrapper (a
    `model.module if ... else model` unwrap is fine, and so is a name unwrapped
    in one arm of an `if` and the plain model in the other), and not in a file that
    reads its checkpoint back into a wrapper right after saving it
    (`ddp_model.load_state_dict(torch.load(path))` later in the same function,
    under no test the save is not under: the DDP tutorial's demo_checkpoint, a
    book's save-then-load notes): that round trip is consistent. So is a load
    under the save's own rank test written again (`if args.rank == 0:` around the
    best model's save in the epoch loop and around its load after it, lint dev7),
    and a load, under any test, of a path the file stamps with the run
    (`'models/{}_{}.pkl'.format(args.data, time.time())`, a uuid, a temporary
    file): only this run's save is there to read (lint heldout13: the TGL trainer,
    whose GPU workers save and load on the scheduler's word). A save that never
    runs (under a strict comparison an `if` of the same test just above made
    false: `if loss < best: best = loss`, then `if loss < best: torch.save(model,
    p)`) is not flagged. A load into the wrapper on another path (a resume under `if args.resume:`, in another method)
    reads the checkpoints of earlier runs, which evaluation and export read too:
    the save of the model's weights is flagged, and the message names the resume
    (issue 41's heldout9: a course script's model file, a research trainer's
    per-epoch weights). Not a checkpoint that bundles the training state (the
    optimizer's or scheduler's state_dict beside the model's) and that the resume
    path reads back, where the file also saves the unwrapped model
    (`model.module.backbone.state_dict()`), or where it is one file rewritten in
    place at the path the resume reads (`args.checkpoint_dir / 'checkpoint.pth'`
    both times): a resume checkpoint, whose one reader is that path (the
    mature-repository control: barlowtwins and vicreg save one beside their
    unwrapped backbone, and one in their evaluate.py); where nothing unwrapped is
    saved and the checkpoints are a series (`f"ckpt_{epoch}.pt"`), that
    checkpoint is the only weights the run leaves, and it is flagged (lint
    heldout9/heldout10). A checkpoint dict spread over lines in the save is
    said at its `torch.save`; one built in its own statement, or passed to a save
    helper, at the wrapper's `state_dict()` (naming the helper's save, which
    serves every caller); either way naming the other line, the state dict's or
    the save's (lint heldout17 u029: a reader's entry at the state dict, four
    lines into the `torch.save` call); a state dict taken into a name first
    (`ckp = self.model.state_dict(); torch.save(ckp, path)`) is followed. One
    wrapper's state saved at several calls (the last checkpoint, then under `if
    save_best:` the best; after pretraining, then after training, in another
    function: lint heldout17 u023) is one diagnostic at the first save, naming
    the others, and so are the state dicts of several wrappers one file saves
    (lint heldout20 u026: a GAN's netG and netD, one reader's entry). A
    wrapper rebound to one of nn.Module's methods that return the module itself
    (`generator = generator.train()` after `generator = DDP(generator, ...)`,
    lint heldout20 u019) is still the wrapper, and so is its deep copy (`ema_model =
    copy.deepcopy(model)` after the wrap: DDP's `__getstate__` / `__setstate__` rebuild a wrapper, whose
    state_dict keys carry the prefix; lint heldout30 u021, an EMA model's checkpoint). apex's
    DistributedDataParallel is a wrapper too, and so is what a builder of this
    file returns on every path (`build(...).to(device)`); an arm that raises or
    returns does not count as a path where the model stays plain. A save helper
    the file does not define (`utils.save_checkpoint({...}, is_best)`,
    `save_on_master(net.state_dict(), path)`) is read as a save of the state dict
    it is given. A checkpoint dict filled key by key above the save, in its function
    (`self.save_dict["state_dict"] = self.model.state_dict()`, then `torch.save(self.save_dict,
    path)`), is read as one built whole, and said at the state dict (lint heldout15, a hand-pose
    trainer). mmcv's `MMDistributedDataParallel` and `MMDataParallel` hold the model on `.module`
    too (lint heldout15, an mmcv distillation trainer).

    The whole wrapper object pickled (`torch.save(ddp_model, path)`) is flagged for DDP: its
    unpickling rebuilds the reducer on the default process group, so the file loads only in a
    distributed run. Not for DataParallel, which loads wherever torch does and holds the
    model on `.module` (lint heldout11: a single-process DataParallel script's `torch.save(model,
    'models/model_scripted.pt')`).

    A warning too where the model is a wrapper on one path and the plain model on
    another (`if ddp: model = DDP(model)`, then `torch.save(model.state_dict(), p)`)
    and nothing unwraps it: the checkpoint's keys carry the prefix or not depending
    on the launch, and one saved under one launch does not load under the other
    (lint heldout11: build-nanogpt's `if ddp:`, a distillation script's
    `if options['distributed']:`, a `set_model` returning DDP, DataParallel or the
    model; a wrapper moved after a conditional wrapping, `model = model.to(device)`: lint heldout29b u015;
    a test around both the wrapping and the save, `if __name__ == "__main__":`, decides nothing between
    them: lint heldout29b u004). Where every test the wrapping is under holds where the save runs too (`if
    args.distributed: model = DDP(model)`, then under `if args.distributed:` rank 0's
    `torch.save(model.state_dict(), p)`), the save is the wrapper's: said as one (lint heldout23:
    the mnist_ddp template in three repositories). Not where the save's own tests read the wrapping (`hasattr`,
    `isinstance`) or a name of the test the wrapping is under (`if not ddp:`), where
    the other arm of an `if` around it reads `.module`, where some path unwraps
    (`m.module if isinstance(m, DDP) else m`), nor in the body of `if isinstance(model,
    GFV):`, a class that is not a wrapper (lint heldout19), nor in a file that takes 'module.'
    off the keys it loads (`k[7:]`, `k.replace("module.", "")`): its own loads read
    either kind (nor, whatever the paths, a save whose checkpoint a `torch.load` of the file reads back by
    its name, `'./resume/model_epoch_{}.pth'` for `'{}/model_epoch_{}.pth'`, in such a file: lint heldout29
    u024, a segmentation trainer whose resume strips the prefix), nor where the wrapping runs whenever its function does, above the
    save (a save closure defined after `encoder = DDP(encoder)`: always the wrapper's
    keys). A wrapper moved after wrapping (`model = model.cuda()`) is still the
    wrapper. The `else` of a test that joins the wrapping's test to another (`if
    data_parallel and rank == 0:` saving `.module`) is no unwrapping: the wrapped
    ranks but 0 take it (lint heldout12, an audio codec trainer). Nor where the file loads a
    checkpoint into that same model after the wrapping (`if args.cuda: model = nn.DataParallel(model)`,
    then `model.load_state_dict(torch.load(args.loadmodel)['state_dict'])`, then the epoch loop's
    save): its own checkpoints go back into a model wrapped as the saving run's was (lint heldout27
    u006, u018, the ImageNet example's resume, and heldout27c u006: none a pitfall to their readers);
    a load into another model, or into this one before the wrapping, keeps the warning.

    A name a function of the project not defined here is given and takes back
    (`model, train_loss = train_one_epoch(model, ...)` through `from engine import *`)
    is read as the model it was given, and the message says so; not a function named
    as unwrapping it (`unwrap_model`, `de_parallel`), nor a library's (lint heldout12:
    one trainer in two repositories).

    A warning where the file never shows the wrapping but saves the same
    name's `.module.state_dict()` elsewhere (`torch.save(model.module.state_dict(),
    p)` and, in the same function, `torch.save(model.state_dict(), p)`): the file
    itself says the model lives on `.module`, so the other save carries the
    prefix, whatever the wrapper is (issue 41's heldout7: a forum answer and a
    detector's issue, each quoting the right call and the one that broke
    loading). Not when the `.module` save sits under a test this one is not
    under (`model.module.state_dict() if distributed else model.state_dict()`,
    `if hasattr(model, "module"):`), nor where the name is rebound to its `.module`. So is
    one where the same function reads through `model.module` (`model.module.backbone.parameters()`)
    under tests that say nothing of the wrapping (`if epoch == 0 and cfg.freeze:`) and outside a
    `try` that catches the AttributeError: that read raises unless the model is a wrapper (lint
    heldout11: a Kaggle template's Ctrl-C save beside its backbone freeze, in two repositories).

    An error at the load where the same file loads that checkpoint back into a model
    that is no wrapper: `torch.save(ddp_model.state_dict(), "ckpt.pt")` and
    `model.load_state_dict(torch.load("ckpt.pt"))` (the same path, as a literal or the
    same name), `model` built plain here (a class this file defines, a torch /
    torchvision / timm model, or a wrapper's `.module`; not a name defined nowhere, as a
    skeleton's `MyModel()`, nor another module's builder, which may wrap), `strict` not turned
    off: every key has the 'module.' prefix the model's keys lack, and load_state_dict
    raises "Missing key(s) in state_dict" (pytorch/pytorch#3805, pfnet/pfrl#55). Asked for
    by issue 41 (errors said as warnings on the held-out user scripts).

    The model `accelerator.prepare(...)` hands back is a DistributedDataParallel wrapper under a
    multi-process accelerate launch (the plain model under one process): `torch.save` of its
    `state_dict()` with no `accelerator.unwrap_model(...)` writes 'module.'-prefixed keys there,
    which the plain model does not load (lint heldout21 u004, u009, u024, heldout22b u005,
    heldout23 u056: five such saves in the development corpus, every one read so). Only the
    element of prepare's result that is the model: not the optimizer, scheduler or loader beside
    it (by how it is built where that is in view, else by its name).
    """

    id = "save-ddp-wrapper"
    in_tests = False  # tests build this shape on purpose
    message = "torch.save of the DDP wrapper: its state_dict keys carry a 'module.' prefix"
    fix = "torch.save(model.module.state_dict(), path)"
    needles = ("DataParallel", ".module.", "prepare(")

    VALID = (
        '''
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(net, device_ids=[local_rank])
        torch.save(model.module.state_dict(), "ckpt.pt")
        ''',
        '''
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(net, device_ids=[local_rank])
        to_save = model.module if hasattr(model, "module") else model
        torch.save({"model": to_save.state_dict()}, "ckpt.pt")
        ''',
        '''
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        def train(args, generator):
            if args.distributed:
                g_module = generator.module
            else:
                g_module = generator
            torch.save({"g": g_module.state_dict()}, "ckpt.pt")

        if args.distributed:
            generator = DDP(generator, device_ids=[args.local_rank])
        train(args, generator)
        ''',
        '''
        import torch

        if args.distributed:
            torch.save(model.module.state_dict(), path)
        else:
            torch.save(model.state_dict(), path)
        ''',
    )
    INVALID = (
        '''
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = Net().to(local_rank)
        model = DDP(model, device_ids=[local_rank])
        torch.save(model.state_dict(), "ckpt.pt")  # flagged
        ''',
        '''
        import torch
        import torch.nn as nn

        class Trainer:
            def __init__(self, net, gpu):
                self.model = nn.parallel.DistributedDataParallel(net, device_ids=[gpu])

            def save(self, epoch):
                torch.save({"epoch": epoch, "model": self.model.state_dict()}, "ckpt.pt")  # flagged
        ''',
        '''
        import torch

        torch.save(model.module.state_dict(), path)
        torch.save(model.state_dict(), path)  # flagged: a warning, the file saves model.module elsewhere
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        yield from self._loaded_bare(file)
        for _, hit in self._saves(file):
            yield hit

    def _saves(self, file: FileModel) -> Iterator[tuple[ast.Call, Hit]]:
        """Each torch.save of a wrapper's state, with its diagnostic."""
        saves = [call for call in file.calls_to("save", TORCH) if file.qualname(call.func) == "torch.save"]
        resumed = None
        for load in self._loads_into_wrapper(file):
            if any(self._round_trip(file, save, load) for save in saves):
                return  # the file saves and loads back at once: its round trip is consistent
            resumed = resumed or load
        # the unwrapped model saved too (`torch.save(model.module.backbone.state_dict(), p)`: barlowtwins,
        # vicreg): the wrapper's checkpoint is the resume path's alone. Where no save of `.module` is seen,
        # that checkpoint is the only weights the run leaves (lint heldout10: a flow model's and a
        # segmentation trainer's `{"model": model.state_dict(), "optimizer": ...}`, resumed into the wrapper)
        # a save helper this file does not define, given the state dict (`utils.save_checkpoint({"state_dict":
        # model.state_dict(), ...}, is_best)`, DETR's `save_on_master(net.state_dict(), PATH)`: lint
        # heldout10): it writes what it is given; only a state dict is said there (a helper given the
        # wrapper object may unwrap it)
        helpers = [call for call in file.calls if call.args and terminal_name(call.func).startswith("save")
                   and file.qualname(call.func) != "torch.save" and not file.callees(call)
                   and file.local_function(call) is None]
        exported = any(".module" in ast.unparse(call.args[0] if call.args else call) for call in saves + helpers)
        # ... or it is one file, rewritten in place, that a load of this file reads back from the same path
        # (`torch.save(state, args.checkpoint_dir / 'checkpoint.pth')`: barlowtwins' and vicreg's evaluate.py)
        loaded_from = {self._fixed_path(file, keyword(c, "f", 0)) for c in file.calls
                       if file.qualname(c.func) == "torch.load"} - {None}
        for call in saves + helpers:
            obj = keyword(call, "obj", 0) if call in saves else call.args[0]
            if obj is None or ruled_out(file, call):
                continue  # (a save under a test the `if` above made false never runs: lint heldout13 u057)
            if call in saves and self._strips_prefix(file) and _read_back(file, keyword(call, "f", 1)):
                continue  # the file reads this checkpoint back itself, taking 'module.' off (lint heldout29 u024)
            values = self._saved_values(file, obj)
            if resumed is not None and self._training_state(values) and (
                    exported or self._fixed_path(file, keyword(call, "f", 1)) in loaded_from):
                continue  # a resume checkpoint (model, optimizer, ...) that the resume path reads back
            for saved in values:
                if isinstance(saved, ast.Call) and isinstance(saved.func, ast.Attribute) and saved.func.attr == "state_dict":
                    state_dict, holder = True, saved.func.value
                else:
                    state_dict, holder = False, saved
                if not state_dict and call in helpers:
                    continue
                if self._unwrapped_elsewhere(file, holder) or tested_as_own_class(file, saved, source(holder)):
                    continue  # (`if isinstance(model, GFV): save(model.state_dict())`: the bare model there)
                prepared = prepared_model(file, holder) if state_dict else None
                origins: list[object] = [prepared] if prepared is not None \
                    else _through_self_returns(file, file.origins(holder))
                kinds = {"accelerate"} if prepared is not None else {wrapper_kind(file, o) for o in origins}
                if not origins or "" in kinds:
                    unwrapped = self._module_saved(file, holder, saved) if state_dict else None
                    if unwrapped is not None:
                        what = ("saves " if type(unwrapped) is ast.Call else "reads ") + source(unwrapped)
                        yield call, Hit(saved, severity=WARNING, fix=f"torch.save({source(holder)}.module.state_dict(), path)",
                                  message=f"torch.save of {source(holder)}.state_dict(), while line "
                                  f"{unwrapped.lineno} {what}: the file holds "
                                  f"the model on {source(holder)}.module, so these keys carry a 'module.' prefix; "
                                  f"lint cannot see where {source(holder)} is wrapped")
                        break
                    here = self._wrapped_on_this_path(file, origins, saved) if state_dict else None
                    wrap = here or (self._wrapped_on_some_path(file, origins, saved) if state_dict else None)
                    if wrap is None:
                        continue
                    if here is None and self._loaded_back(file, holder, wrap):
                        continue  # wrapped or not, the file reads its checkpoint back into the same holder
                    if here is not None:
                        kind, fix = wrapper_kind(file, here), f"torch.save({source(holder)}.module.state_dict(), path)"
                        message = (f"torch.save of {source(holder)}.state_dict(), a {kind} wrapper's: its keys carry "
                                   f"a 'module.' prefix (this save runs only where the wrapping on line "
                                   f"{here.lineno} ran: the test it is under holds here too)")
                    else:
                        kind, fix = wrapper_kind(file, wrap), f"torch.save(getattr({source(holder)}, 'module', {source(holder)}).state_dict(), path)"
                        message = (f"torch.save of {source(holder)}.state_dict(): {source(holder)} is a {kind} wrapper "
                                   f"on the path through line {wrap.lineno} and the plain model on another, and "
                                   "nothing unwraps it here: the checkpoint's keys carry a 'module.' prefix or not "
                                   "depending on how the script was launched, and one saved under one launch does "
                                   "not load under the other")
                else:
                    # DDP on one path and DataParallel on another (lint heldout15 u017): name the distributed
                    # one, every time (a set's pop follows the run's string hashing)
                    kind = min(kinds, key=lambda k: ("Distributed" not in k, k))
                    fix = f"torch.save({source(holder)}.module.state_dict(), path)"
                    message = ""
                    if not state_dict and kind == "DataParallel":
                        # a pickled DataParallel loads wherever torch does and holds the model on `.module`
                        # (lint heldout11 u056); only a DDP object needs a process group to load
                        continue
                    if prepared is not None:
                        fix = f"torch.save(accelerator.unwrap_model({source(holder)}).state_dict(), path)"
                        message = (f"torch.save of {source(holder)}.state_dict(), the model "
                                   f"`{source(prepared.func)}(...)` returned (line {prepared.lineno}): under a "
                                   "multi-process launch that is a DistributedDataParallel wrapper, so its keys carry "
                                   "a 'module.' prefix and the checkpoint does not load into the plain model")
                if message:
                    pass
                elif state_dict:
                    message = (f"torch.save of {source(holder)}.state_dict(), a {kind} wrapper's: "
                               "its keys carry a 'module.' prefix")
                elif kind == "DistributedDataParallel":
                    message = (f"torch.save of {source(holder)}, a {kind} wrapper object: loading it needs a "
                               "process group (unpickling DDP rebuilds it on the default group, 'Default process "
                               "group has not been initialized' elsewhere), and its weights carry a 'module.' prefix")
                else:
                    message = (f"torch.save of {source(holder)}, a {kind} wrapper object: loading it needs the "
                               "wrapper class, and its weights carry a 'module.' prefix")
                through = next((o for o in origins if isinstance(o, ast.Call) and passed_through(file, o)), None)
                if through is not None:
                    message += (f" (read through `{source(through.func)}(...)` on line {through.lineno}, not defined in "
                                f"this file, as the model it is given back: if it returns another, this may not hold)")
                if resumed is not None:
                    message += (f"; this file loads it back into the wrapper (line {resumed.lineno}), "
                                "which works, but the plain model (evaluation, export, a run without DDP) does not "
                                "load it")
                # at the call: a checkpoint dict spread over lines is one save (heldout9's resume scripts);
                # at the call: a checkpoint dict spread over lines is one save (heldout9's resume scripts);
                # at the state dict where it is taken in another statement, through a name or a helper's
                # parameter (`state = {"state_dict": model.state_dict()}` ... `torch.save(state, p)`,
                # `save_checkpoint({"state_dict": model.state_dict(), ...}, is_best)`: lint dev7 u003, u023),
                # naming the helper's save there: it is every caller's
                # (a state dict saved by its name, `ckp = model.state_dict(); torch.save(ckp, p)`: at the save)
                if call in helpers and message.startswith("torch.save of "):
                    message = f"{terminal_name(call.func)}() is given " + message[len("torch.save of "):]
                direct = type(obj) is ast.Name and saved in file.origins(obj)
                # (a helper's call: at the state dict it is given, as the docstring says; lint heldout15 u017,
                # u047, u048: `save_checkpoint({... 'state_dict': model.state_dict(), ...}, ...)` spread over lines)
                at = call if saved is not obj and call not in helpers and (direct or self._inside(saved, call)) \
                    else saved
                if at is saved and saved is not obj and file.function(saved) is not file.function(call):
                    message += f" (saved by the torch.save on line {call.lineno})"
                # One wrapper saved at several calls is one cause (heldout10 u038: `torch.save(state, last)`,
                # then under `if is_best:` `torch.save(state, best)`; lint heldout17 u023: the encoder-decoder's
                # state after pretraining and after training): said at the first save, naming the others.
                # The wrappers of one file saved so are one cause too (lint heldout20 u026: netG and netD).
                # the save and the state dict on other lines (a checkpoint dict spread over lines) are one
                # place: the diagnostic names the other line too (lint heldout17 u029: a reader's entry at
                # `"model_state_dict": net.state_dict(),` four lines into the torch.save call)
                other = {getattr(saved, "lineno", at.lineno), call.lineno} - {at.lineno}
                if other and at is call:
                    message += f" (the state taken at line {min(other)})"
                elif other and f"line {call.lineno}" not in message:
                    message += f" (saved by the call on line {call.lineno})"
                yield call, Hit(at, message=message, fix=fix, cause=("saved wrapped", state_dict),
                                also=tuple(sorted(other)))
                break

    @staticmethod
    def _wrapped_on_some_path(file: FileModel, origins: list[object], saved: ast.AST) -> ast.Call | None:
        """The wrapper call where the saved model is a DDP / DataParallel wrapper on one path and the
        plain model on another (`if ddp: model = DDP(model)`, then `torch.save(model.state_dict(), p)`),
        and the save is not on a path the file decides: not under a test that reads the wrapping
        (`hasattr(model, "module")`, `isinstance(model, DDP)`) or a name of the test the wrapping is
        under (`if not args.distributed:`), nor in an arm whose other arm reads `.module`
        (lint heldout11: u031's `if options['distributed']:`, u039's DDP-or-DataParallel `set_model`,
        u059's build-nanogpt `if ddp:`: github.com/karpathy/build-nanogpt train_gpt2.py's shape)."""
        wraps = [o for o in origins if isinstance(o, ast.Call) and wrapper_kind(file, o)]
        if not wraps or len(wraps) == len(origins) or SaveDdpWrapper._strips_prefix(file):
            return None
        if any(type(o) is ast.Attribute and o.attr == "module" for o in origins):
            return None  # unwrapped on some path (`unwrap_ddp(v1)`: `m.module if isinstance(m, DDP) else m`)
        if SaveDdpWrapper._wrapped_before(file, wraps, saved):
            return None
        said = {n for test in file.conditions(saved) for n in identifiers(test)}
        if said & {"module", "hasattr", "isinstance", "getattr", "DistributedDataParallel", "DataParallel", "DDP"}:
            return None
        # the `else` of `if ddp and rank == 0:` holds on the wrapped ranks but 0 too: its parts decide
        # nothing there (lint heldout12 u004: `.module` saved in the body, the wrapper in the else)
        undecided = {id(branch.test) for branch, arm in arms(file, saved) if arm == "orelse"
                     and type(branch.test) is ast.BoolOp and type(branch.test.op) is ast.And}
        said = {core for test in file.conditions(saved) if id(test) not in undecided
                for core in SaveDdpWrapper._conjuncts(test)}
        around = {id(test) for test in file.conditions(saved)}
        for wrap in wraps:
            # (a test around both, the `if __name__ == "__main__":` block, decides nothing between them: lint
            # heldout29b u004, a detector's mid-epoch `FPN.state_dict()` beside its `if args.mGPUs:` unwrapped save)
            if said & {core for test in file.conditions(wrap) if id(test) not in around
                       for core in SaveDdpWrapper._conjuncts(test)}:
                return None  # the save's path is decided by the test the wrapping is under (`if not ddp:`);
                # not by one that lets both through (`if local_rank == 0 or not distributed:`, heldout10 u009)
        for branch, arm in arms(file, saved):
            if id(branch.test) in undecided:
                continue
            other = branch.orelse if arm == "body" else branch.body
            for node in ast.walk(ast.Module(body=other, type_ignores=[]) if isinstance(other, list) else other):
                if type(node) is ast.Attribute and node.attr == "module":
                    return None  # `if ...: save(model.module.state_dict()) else: save(model.state_dict())`
        return wraps[0]

    @staticmethod
    def _wrapped_on_this_path(file: FileModel, origins: list[object], saved: ast.AST) -> ast.Call | None:
        """The wrapping, above the save in its function, whose tests all hold where the save runs
        (`if args.distributed: model = DDP(model)`, then `if args.distributed: if rank == 0:
        torch.save(model.state_dict(), p)`): there the model is the wrapper, whatever it is on the
        other path (lint heldout23 u071, u073, u074: the mnist_ddp template's save, three readers'
        entries). Not where the name is unwrapped on some path or the file's loads strip 'module.'."""
        wraps = [o for o in origins if isinstance(o, ast.Call) and wrapper_kind(file, o)]
        if not wraps or SaveDdpWrapper._strips_prefix(file) or any(
                type(o) is ast.Attribute and o.attr == "module" for o in origins):
            return None
        holds = holding(file, saved)
        for wrap in wraps:
            needs = holding(file, wrap)
            if needs and needs <= holds and file.function(wrap) is file.function(saved) \
                    and wrap.lineno < getattr(saved, "lineno", 0) and next(iter(file.enclosing_loops(wrap)), None) is None:
                return wrap
        return None

    @staticmethod
    def _wrapped_before(file: FileModel, wraps: list[ast.Call], saved: ast.AST) -> bool:
        """A wrapping that runs whenever its function does (no test, no loop around it), written
        above the save in the save's own function or in one the save's function is nested in:
        every read after it is the wrapper, whatever the name held before (github.com/
        facebookresearch/ijepa src/train.py: `encoder = DistributedDataParallel(encoder)` in `main`,
        then a `save_checkpoint` closure defined below it)."""
        scopes = []
        scope = file.function(saved)
        while scope is not None:
            scopes.append(scope)
            scope = file.function(scope)
        for wrap in wraps:
            if (file.function(wrap) in scopes and wrap.lineno < getattr(saved, "lineno", 0)
                    and next(iter(file.conditions(wrap)), None) is None
                    and next(iter(file.enclosing_loops(wrap)), None) is None):
                return True
        return False

    @staticmethod
    def _conjuncts(test: ast.expr) -> set[str]:
        """The tests that must all hold for `test` to, `not` taken off, as written: `if not ddp and
        master:` holds `ddp` and `master`; an `or` holds none of its parts alone."""
        parts = test.values if type(test) is ast.BoolOp and type(test.op) is ast.And else [test]
        out = set()
        for part in parts:
            while type(part) is ast.UnaryOp and type(part.op) is ast.Not:
                part = part.operand
            if not (type(part) is ast.BoolOp and type(part.op) is ast.Or):
                out.add(ast.unparse(part))
        return out

    @staticmethod
    def _inside(node: ast.AST, call: ast.Call) -> bool:
        """`node` is written inside the call's own text (a checkpoint dict spelt in the save)."""
        return position(call) <= position(node) and end_position(node) <= end_position(call)

    def _loaded_bare(self, file: FileModel) -> Iterator[Hit]:
        """`torch.save(ddp_model.state_dict(), P)` and, in the same file,
        `model.load_state_dict(torch.load(P))` into a model that is no wrapper (built
        plain, or the wrapper's `.module`), strict: every key has a 'module.' prefix
        the model's keys lack, and load_state_dict raises."""
        saved: dict[str, int] = {}
        for call in file.calls_to("save", TORCH):
            obj, path = keyword(call, "obj", 0), keyword(call, "f", 1)
            if (type(obj) is ast.Call and type(obj.func) is ast.Attribute and obj.func.attr == "state_dict"
                    and not obj.args and self._wrapped(file, obj.func.value) and self._same_path(path) is not None):
                saved[self._same_path(path) or ""] = call.lineno
        if not saved:
            return
        for call in file.calls:
            func = call.func
            if type(func) is not ast.Attribute or func.attr != "load_state_dict" or not call.args:
                continue
            strict = keyword(call, "strict", 1)
            if strict is not None and not (type(strict) is ast.Constant and strict.value is True):
                continue
            loaded = call.args[0]
            if type(loaded) is ast.Name and self._touched(file, loaded):
                continue  # `consume_prefix_in_state_dict_if_present(sd, "module.")`: the keys may be fixed
            origins = file.origins(loaded) if type(loaded) is ast.Name else [loaded]
            if len(origins) != 1 or type(origins[0]) is not ast.Call or file.qualname(origins[0].func) != "torch.load":
                continue
            line = saved.get(self._same_path(keyword(origins[0], "f", 0)) or "\0")
            if line is None or not self._plain(file, func.value):
                continue
            yield Hit(call, severity=ERROR,
                      message=f"{source(func.value)}.load_state_dict() is given the checkpoint line {line} saved "
                      "from a DDP / DataParallel wrapper's state_dict: its keys carry a 'module.' prefix this "
                      "model's keys lack, so loading raises (\"Missing key(s) in state_dict\")",
                      fix="torch.save(model.module.state_dict(), path)  # when saving; or load into the wrapper")

    @staticmethod
    def _touched(file: FileModel, name: ast.Name) -> bool:
        """The state dict's name is read anywhere in its function but in this load
        (passed to a helper that strips the prefix in place, its keys rewritten)."""
        scope = file.function(name)
        return any(type(n) is ast.Name and n.id == name.id and n is not name and type(n.ctx) is ast.Load
                   and file.function(n) is scope for n in ast.walk(scope or file.tree))

    @staticmethod
    def _fixed_path(file: FileModel, path: ast.expr | None) -> str | None:
        """The path as written, where every save writes the same file: literals, names and attributes
        joined (`args.checkpoint_dir / 'checkpoint.pth'`), through a name bound once; None where it is
        formatted from values (`f"ckpt_{epoch}.pt"`, `'%d.pt' % it`: one file per save)."""
        if type(path) is ast.Name:
            origins = file.origins(path)
            if len(origins) != 1 or origins[0] is path or not isinstance(origins[0], ast.expr):
                return None  # bound on several paths, or not in view
            path = origins[0]
        if path is None or any(type(n) is ast.JoinedStr or type(n) is ast.BinOp and type(n.op) is ast.Mod
                               or type(n) is ast.Call and terminal_name(n.func) not in ("join", "Path")
                               for n in ast.walk(path)):
            return None
        return ast.unparse(path)

    @staticmethod
    def _same_path(path: ast.expr | None) -> str | None:
        """The path as written, where two writings of it are the same file: a string
        literal, or a name or attribute (`CHECKPOINT_PATH`, `args.ckpt`)."""
        if type(path) is ast.Constant and isinstance(path.value, str):
            return repr(path.value)
        if isinstance(path, (ast.Name, ast.Attribute)):
            return ast.unparse(path)
        return None

    @staticmethod
    def _plain(file: FileModel, holder: ast.expr) -> bool:
        """The model is no wrapper: every value it may hold is built here and is not
        DDP / DataParallel, or it is a wrapper's `.module`."""
        if type(holder) is ast.Attribute and holder.attr == "module":
            return SaveDdpWrapper._wrapped(file, holder.value)
        origins = file.origins(holder)
        return bool(origins) and all(type(o) is ast.Call and not wrapper_kind(file, o)
                                     and terminal_name(o.func) not in ("load", "getattr")
                                     and SaveDdpWrapper._seen_model(file, o) for o in origins)

    @staticmethod
    def _seen_model(file: FileModel, call: ast.Call) -> bool:
        """The call builds a model whose class the file shows: a class this file defines, or a
        library's model (torch, torchvision, timm), through `.to()` / `.cuda()`. A name the file
        neither defines nor imports (`MyModel()` in a skeleton, lint heldout14 u043) or a builder
        of another module (`build_model(cfg)`, which may return the model wrapped) is not seen."""
        while type(call.func) is ast.Attribute and call.func.attr in ("to", "cuda") \
                and type(call.func.value) is ast.Call:
            call = call.func.value
        if type(call.func) is ast.Name and any(type(d) is ast.ClassDef for d in file.find_def(call.func)):
            return True
        return (file.qualname(call.func) or "").split(".")[0] in ("torch", "torchvision", "timm")

    @staticmethod
    def _unwrapped_elsewhere(file: FileModel, holder: ast.expr) -> bool:
        """`g_module = generator.module if distributed else generator`, or the
        same in two arms of an `if`: some assignment of the name unwraps, so
        the wrapper is the non-distributed path's plain model."""
        if type(holder) is not ast.Name:
            return False
        bindings = file.bindings.get((file.scope(holder), holder.id), [])
        values = [b.value for b in bindings] + [v for b in bindings if type(b.value) is ast.IfExp
                                                 for v in (b.value.body, b.value.orelse)]
        return any(type(v) is ast.Attribute and v.attr == "module" for v in values)

    @staticmethod
    def _module_saved(file: FileModel, holder: ast.expr, saved: ast.AST) -> ast.expr | None:
        """A `holder.module.state_dict()` of the same value in the same function, under no test this
        save is not under too (`if hasattr(model, "module"):` decides nothing for the other path):
        the file says the model is `holder.module` wherever this save runs. Or a read through
        `holder.module` (`model.module.backbone.parameters()`) in the same function whose own tests
        say nothing of the wrapping (`if epoch == 0 and cfg.train.freeze_start_epoch:`), outside a
        `try` that catches the AttributeError: it raises unless the model is a wrapper (lint
        heldout11 u027 and u035, one Kaggle pipeline template in two repositories: the Ctrl-C save
        of `model.state_dict()` beside `model.module.model.parameters()`)."""
        key = value_key(file, holder)
        if key is None:
            return None
        read: ast.expr | None = None
        reads_count = not SaveDdpWrapper._strips_prefix(file)
        around = set(arms(file, saved))
        for node in ast.walk(file.function(saved) or file.tree):
            if not (type(node) is ast.Attribute and node.attr == "module" and type(node.value) is ast.Name
                    and value_key(file, node.value) == key and file.function(node) is file.function(saved)):
                continue
            outer = file.parent.get(node)
            call = file.parent.get(outer) if type(outer) is ast.Attribute and outer.attr == "state_dict" else None
            if type(call) is ast.Call and set(arms(file, call)) <= around:
                return call
            if reads_count and read is None and type(outer) is ast.Attribute and outer.attr != "state_dict" \
                    and not any(SaveDdpWrapper._about_wrapping(branch.test) for branch, _ in set(arms(file, node)) - around) \
                    and not SaveDdpWrapper._attribute_error_caught(file, node):
                read = outer
        return read

    @staticmethod
    def _strips_prefix(file: FileModel) -> bool:
        """The file takes the 'module.' prefix off the keys it loads (`k[7:]`, `k.replace("module.", "")`,
        `consume_prefix_in_state_dict_if_present`): its own loads read either kind of checkpoint
        (lint dev7 u004: a TSM trainer's resume and fine-tune paths strip it)."""
        for node in ast.walk(file.tree):
            if type(node) is ast.Constant and node.value in ("module.", "module"):
                if type(file.parent.get(node)) is ast.Call:
                    return True
            elif type(node) is ast.Slice and type(node.lower) is ast.Constant and node.lower.value == 7 \
                    and node.upper is None:
                return True
            elif type(node) is ast.Call and terminal_name(node.func) == "consume_prefix_in_state_dict_if_present":
                return True
        return False

    @staticmethod
    def _about_wrapping(test: ast.expr) -> bool:
        """The test may decide whether the model is wrapped (a launch, a device, a rank, the wrapper)."""
        words = ("module", "hasattr", "isinstance", "getattr", "distributed", "ddp", "parallel", "world",
                 "gpu", "rank", "cuda", "device", "multi", "dp")
        return any(word in name.lower() for name in identifiers(test) for word in words)

    @staticmethod
    def _attribute_error_caught(file: FileModel, node: ast.AST) -> bool:
        """`node` runs in the body of a `try` whose handlers catch AttributeError (or everything)."""
        child = node
        for anc in file.ancestors(node):
            if type(anc) is ast.Try and child in anc.body:
                for handler in anc.handlers:
                    names = set(identifiers(handler.type)) if handler.type is not None else {"BaseException"}
                    if names & {"AttributeError", "Exception", "BaseException"}:
                        return True
            child = anc
        return False

    @staticmethod
    def _saved_values(file: FileModel, obj: ast.expr) -> list[ast.expr]:
        """The object saved, or the values of a checkpoint dict, or the `state_dict()` a
        name saved was given (`ckp = self.model.state_dict(); torch.save(ckp, path)`)."""
        out = [obj]
        origins = file.origins(obj) if type(obj) is ast.Name else [obj]
        for origin in origins:
            if type(origin) is ast.Dict:
                out += [v for v in origin.values if v is not None]
            elif type(origin) is ast.Call and type(origin.func) is ast.Name and origin.func.id == "dict":
                out += [kw.value for kw in origin.keywords]
            elif (type(obj) is ast.Name and len(origins) == 1 and type(origin) is ast.Call
                  and type(origin.func) is ast.Attribute and origin.func.attr == "state_dict" and not origin.args):
                out.append(origin)
        # a checkpoint dict filled key by key above the save, in its function (`self.save_dict["state_dict"] =
        # self.model.state_dict()`, then `torch.save(self.save_dict, save_file)`: lint heldout15 u040); not in
        # the `except` of a `try` that unwraps first (`try: d['model'] = net.module.state_dict() except:
        # d['model'] = net.state_dict()`: lint heldout13 u031)
        if isinstance(obj, (ast.Name, ast.Attribute)):
            spelled, scope = ast.unparse(obj), file.function(obj)
            for node in ast.walk(scope or file.tree):
                if type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Subscript \
                        and ast.unparse(node.targets[0].value) == spelled and node.lineno < obj.lineno \
                        and file.function(node) is scope \
                        and not any(type(up) is ast.ExceptHandler for up in file.ancestors(node)):
                    out.append(node.value)
        return out

    @staticmethod
    def _loaded_back(file: FileModel, holder: ast.expr, wrap: ast.Call) -> bool:
        """Where the model is a wrapper on one path only: the file loads a checkpoint into that same
        holder after the wrapping, in the function that saves it (`if args.cuda: model =
        nn.DataParallel(model)`, then `model.load_state_dict(torch.load(args.loadmodel)['state_dict'])`,
        then the epoch loop's `torch.save({'state_dict': model.state_dict(), ...})`). The file's own
        checkpoints go back into a model wrapped as the saving run's was: under one launch, 'module.'
        on both sides or on neither. Lint heldout27 u006, u018 (the ImageNet example's resume) and
        heldout27c u006: three such saves, none a pitfall to their readers."""
        func = file.function(holder)
        spelled, key = source(holder), value_key(file, holder)
        for call in file.calls:
            if type(call.func) is ast.Attribute and call.func.attr == "load_state_dict" \
                    and source(call.func.value) == spelled and call.lineno > wrap.lineno \
                    and (file.function(call) is func or (key is not None and value_key(file, call.func.value) == key)):
                return True
        return False

    @staticmethod
    def _wrapped(file: FileModel, node: ast.AST) -> bool:
        origins = file.origins(node)
        return bool(origins) and all(wrapper_kind(file, o) for o in origins)

    def _loads_into_wrapper(self, file: FileModel) -> Iterator[ast.Call]:
        """The loads of a checkpoint into a wrapper: `ddp_model.load_state_dict(...)`,
        `ddp_model = torch.load(...)`."""
        for call in file.calls:
            func = call.func
            if type(func) is ast.Attribute and func.attr == "load_state_dict" and self._wrapped(file, func.value):
                yield call
            if file.qualname(func) == "torch.load":
                target = file.parent.get(call)
                if type(target) is ast.Assign and len(target.targets) == 1 and type(target.targets[0]) is ast.Name:
                    name = target.targets[0]
                    others = file.bindings.get((file.scope(name), name.id), [])
                    if any(
                        b.kind == "value" and not b.path and b.value is not call and self._wrapped(file, b.value)
                        for b in others
                    ):
                        yield call

    @staticmethod
    def _training_state(values: list[ast.expr]) -> bool:
        """The checkpoint bundles more training state than the model: another `.state_dict()`
        (the optimizer's, the scheduler's) beside it, as a resume checkpoint does."""
        return sum(1 for v in values if type(v) is ast.Call and type(v.func) is ast.Attribute
                   and v.func.attr == "state_dict") > 1

    @staticmethod
    def _round_trip(file: FileModel, save: ast.Call, load: ast.Call) -> bool:
        """The load runs right after the save, in the same function and under no test the save
        is not under (the DDP tutorial's demo_checkpoint, a book's save-then-load notes): the
        file shows its checkpoint being read back, and the two agree. A load on another path
        (a resume under `if args.resume:`, in another method) reads checkpoints of earlier
        runs, which other programs read too."""
        if file.function(save) is not file.function(load):
            return False
        if SaveDdpWrapper._run_stamped(file, keyword(save, "f", 1), SaveDdpWrapper._load_path(file, load)):
            return True
        if load.lineno < save.lineno:
            return False
        around_save = {id(test) for test in file.conditions(save)}
        # a rank test written again (`if args.rank == 0:` around the best model's save in the epoch loop,
        # and again around its load after the loop): the same ranks take both (lint dev7 u026)
        rank_tests = {ast.unparse(test) for test in file.conditions(save) if is_rank_condition(file, test)}
        return all(id(test) in around_save or (ast.unparse(test) in rank_tests and is_rank_condition(file, test))
                   for test in file.conditions(load))

    @staticmethod
    def _load_path(file: FileModel, load: ast.Call) -> ast.expr | None:
        """The path a load into the wrapper reads: `torch.load(P)` itself, or the one given to
        `model.load_state_dict(torch.load(P))`."""
        read: ast.Call | None = load
        if file.qualname(load.func) != "torch.load":
            given = load.args[0] if load.args else None
            read = given if type(given) is ast.Call and file.qualname(given.func) == "torch.load" else None
        return keyword(read, "f", 0) if read is not None else None

    @staticmethod
    def _run_stamped(file: FileModel, saved_to: ast.expr | None, loaded_from: ast.expr | None) -> bool:
        """The save and the load name one path, a name that some assignment of it builds from the time
        or a fresh id (`['models/{}_{}.pkl'.format(args.data, time.time())]`, `uuid.uuid4()`,
        `tempfile.mkstemp()`): a file of this run only, so whatever test guards the load, it reads
        back what this run saved, into the wrapper it was saved from (lint heldout13: the TGL trainer's
        `path_saver`, saved and loaded by its GPU workers on the scheduler's word, in four repositories)."""
        if type(saved_to) is not ast.Name or type(loaded_from) is not ast.Name or saved_to.id != loaded_from.id \
                or file.scope(saved_to) is not file.scope(loaded_from):
            return False
        values = [b.value for b in file.bindings.get((file.scope(saved_to), saved_to.id), [])]
        return any(type(n) is ast.Call and terminal_name(n.func) in RUN_STAMPS
                   for value in values for n in ast.walk(value))


# nn.Module's methods that return the module itself: `generator = generator.train()` keeps the wrapper.
RETURNS_SELF = frozenset({"train", "eval", "to", "cuda", "cpu", "half", "float", "double", "bfloat16", "requires_grad_"})


def _through_self_returns(file: FileModel, origins: list[object]) -> list[object]:
    """`origins`, where a call of one of nn.Module's methods that return the module itself, on a name
    every value of which is a DDP / DataParallel wrapper there (`generator = generator.train()` after
    `generator = DDP(generator, ...)`, lint heldout20 u019), stands for those wrappers. Where some of that name's
    values are wrappers and some not (`if cfg.use_multi_gpu: model = nn.DataParallel(model)`, then `model =
    model.to(device)`: lint heldout29b u015, a group-activity trainer's stage-2 checkpoint), it stands for all of
    them: the model moved is the wrapper on one path and the plain model on the other."""
    out: list[object] = []
    for origin in origins:
        if type(origin) is ast.Call and type(origin.func) is ast.Attribute and origin.func.attr in RETURNS_SELF \
                and type(origin.func.value) is ast.Name and not wrapper_kind(file, origin):
            inner = [o for o in file.origins(origin.func.value) if o is not origin]
            if inner and any(type(o) is ast.Call and wrapper_kind(file, o) for o in inner):
                out += inner
                continue
        out.append(origin)
    return out


def _path_words(expr: ast.expr | None) -> set[str]:
    """The literal pieces of a checkpoint path long enough to name it (`'{}/model_epoch_{}.pth'` -> `model_epoch_`)."""
    words: set[str] = set()
    for node in ast.walk(expr) if expr is not None else ():
        if type(node) is ast.Constant and type(node.value) is str:
            for piece in re.split(r"\{[^}]*\}|%\w|/|\\", node.value):
                if len(piece) >= 5 and any(c.isalpha() for c in piece) and piece not in (".pth", ".ckpt", ".pt"):
                    words.add(piece)
    return words


def _read_back(file: FileModel, path: ast.expr | None) -> bool:
    """A `torch.load` of this file reads a path named like the save's (`'./resume/model_epoch_{}.pth'` for a save
    to `'{}/model_epoch_{}.pth'`): where the file also takes 'module.' off the keys it loads, its own resume reads
    the wrapper's checkpoint (lint heldout29 u024, a segmentation trainer's `k[7:]` resume; its judge: no defect)."""
    saved = _path_words(path)
    return bool(saved) and any(file.qualname(c.func) == "torch.load" and saved & _path_words(keyword(c, "f", 0))
                               for c in file.calls)
