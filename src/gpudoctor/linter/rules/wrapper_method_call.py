from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import replace

from gpudoctor.linter.arms import arms, fixed_truth, other_arms, tested_as_own_class, value_key
from gpudoctor.linter.idioms import prepared_model, wrapper_kind
from gpudoctor.linter.model import Binding, FileModel, Param, keyword, terminal_name
from gpudoctor.linter.ranks import same_everywhere
from gpudoctor.linter.rule import ERROR, WARNING, Hit, Rule

# What accelerate may wrap a prepared model in that hands on the attributes it lacks (DeepSpeed's engine and
# FSDP do, DDP does not): a file that names them may run under them (the mature-repository control: peft's
# `*_ds_zero3_offload.py` and `*_fsdp.py` examples call `model.generate` on the prepared model).
FORWARDING_BACKEND = re.compile(r"deepspeed|fsdp|FullyShardedDataParallel", re.IGNORECASE)
# The grouping mark of a read on the model accelerate's prepare returned (one wrapper wherever it is read).
PREPARED = "\0prepared:"
# What accelerator.prepare hands back that is no model (llama-recipes: `model, tokenizer = accelerator.prepare(...)`).
NOT_A_MODEL = re.compile(r"tokenizer|processor|optim|sched|loader|data", re.IGNORECASE)
# A test that says the run is distributed: under it, `x.module` reads the model out of a wrapper.
DISTRIBUTED = re.compile(r"distributed|ddp|world_size|n_gpu|num_gpus|local_rank", re.IGNORECASE)
# The file tests for the wrapper itself (`x.module if isinstance(x, DDP) else x`): it handles both paths.
WRAPPER_TEST = re.compile(r"isinstance\([^)]*(DataParallel|DDP)|hasattr\([^)]*['\"]module['\"]")
SCOPES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
BRANCHES = (ast.If, ast.IfExp, ast.For, ast.AsyncFor, ast.While, ast.ExceptHandler, ast.match_case)

# What a DistributedDataParallel / DataParallel wrapper has: nn.Module's public
# methods and attributes, the wrappers' own (torch 2.x, listed here since lint
# never imports torch), and the instance attributes their constructors set.
WRAPPER_NAMES = frozenset((
    'T_destination add_module apply bfloat16 broadcast_buffers buffers call_super_init children compile cpu cuda double dump_patches eval extra_repr float forward gather get_buffer get_extra_state get_parameter get_submodule half ipu join join_device join_hook join_process_group load_state_dict modules mtia named_buffers named_children named_modules named_parameters no_sync parallel_apply parameters register_backward_hook register_buffer register_comm_hook register_forward_hook register_forward_pre_hook register_full_backward_hook register_full_backward_pre_hook register_load_state_dict_post_hook register_load_state_dict_pre_hook register_module register_parameter register_state_dict_post_hook register_state_dict_pre_hook replicate requires_grad_ scatter set_extra_state set_submodule share_memory state_dict to to_empty to_kwargs train type will_sync_module_buffers xpu zero_grad'
    " module device_ids output_device process_group dim device device_type training find_unused_parameters"
    " gradient_as_bucket_view static_graph require_backward_grad_sync require_forward_param_sync"
    " bucket_bytes_cap mixed_precision logger reducer parameters_to_ignore src_device_obj"
).split())


class WrapperMethodCall(Rule):
    """A method or attribute of the user's model read through its
    DistributedDataParallel / DataParallel wrapper (`ddp_model.generate(...)`,
    `net.encoder`): the wrapper holds the model as `.module` and has none of
    its attributes, so the line raises AttributeError ("'DistributedDataParallel'
    object has no attribute ...").

    Flagged, an error: an attribute, not one nn.Module or the wrapper has and
    not one the file sets where it may land on the wrapper (a plain `nn.Module` class's own
    `self.mask_decoder = ...` does not: lint heldout11 u054), read on a name whose every value at
    that point is a `DistributedDataParallel(...)` / `DataParallel(...)`
    (through `.to()` / `.cuda()`, under a branch too: `model = model.to(device)` under `if
    args['resume']:` leaves the wrapper a wrapper, lint heldout18 u004). Asked for by issue 41's sample (four
    threads: MONAI, XPhoneBERT, simpletransformers, DiffCSE).

    A warning, saying what lint could not follow, where the code does not
    decide it: the name is a wrapper on one path only (`if distributed: model
    = DDP(model)`: that path raises), unless the use runs only where the
    file's own test excludes that path (an error where that test is the
    launch environment itself, `ddp = int(os.getenv("RANK", -1)) != -1`:
    run as the DDP program it is, under torchrun, the line raises; lint
    heldout11 u059); or the file never shows the wrapping
    but reads `.module` of the same name elsewhere under its own test of a
    distributed run (`model.module if args.distributed else model`; issue
    41's heldout5: a detector whose `model.rpn` broke distributed training),
    unless that read sits in the other arm of an `if` around the use or
    rebinds the name (`model = model.module`). A `.module` read alone says
    nothing: import nodes, DeepSpeed engines and Megatron's Float16Module
    have one too (23 such reads on the mature repositories). A warning too
    where the read sits under an `if` on a setting (an attribute or item of
    the parsed command line or of `args` / `cfg` / `config`...), not on the
    rank nor on the job's shape: it raises only where the user sets it (lint
    heldout16 u026: `model.gclstm_encoder` under `if args.transfer and
    args.model_type == 'classifier':`), also where a rank test stands beside
    it (`if args['resume'] and gpu_id == 0:`, lint heldout18 u004: only runs
    given --resume); reads under two settings are two warnings, each naming
    its own.

    And a parameter of a function of the file, read so (`def predict(messages, model): ...
    model.generate(...)`), where a call of the file hands it a name that every path there makes a
    wrapper (`predict(messages, model)` below `model = DDP(model, device_ids=[local_rank])`: lint
    heldout20 u020, a Qwen2-VL fine-tune whose test loop calls generate on the DDP wrapper): an
    error said at the read, naming that call; a warning where an `if` on a setting runs the call.
    Only where the function takes the parameter as it is: it never binds it again, runs the read
    whenever it runs (no branch around it) and never tests or unwraps it.

    The value is followed to the file's own classes (issue 41 item 3):
    `trainer.model.encode()` where `trainer = Trainer(...)` and only
    `Trainer.__init__` sets `self.model`, outside any branch, to a wrapper;
    and an instance of a class of the file that subclasses
    DistributedDataParallel / DataParallel without giving the attribute a
    meaning of its own (a method, a class attribute, or a `__getattr__` that
    could forward it). A `torch.compile(...)` of a wrapper is that wrapper here: the compiled
    module hands every attribute it lacks to the one it compiled (`model = torch.compile(model)`
    after `model = DDP(model, ...)`, then `model.module.get_loss(...)` in the step: lint heldout21
    u058, read by ddp-forward-bypassed). Reads of one wrapper on consecutive statements are one
    diagnostic naming every attribute (heldout5: `model.roi_heads.train()`
    then `model.backbone.eval()`).

    Not flagged (issue 41's dev7): a read in the arm of the file's own
    wrapper test that says the name is the bare model (`else` of `if
    hasattr(model, 'module'):`); a wrapper built after the read in the same
    function with no loop bringing it back; a path excluded by the file's
    tests, followed through `ref = model` bindings and through `if a or b:`
    (its `else` is the `else` of both); a read in the `except` handler of a
    `try` that reads the same name's `.module` (the handler runs where that
    failed: the name is the bare model there; heldout10); a name bound to a conditional
    expression whose arms run under the file's own test (`raw_model = model.module if ddp
    else model` after `if ddp: model = DDP(model)`: the `else` arm is the model where it was
    not wrapped; lint heldout11, a build-nanogpt script); a read in the body of `if
    isinstance(model, GFV):`, a class that is not a wrapper (lint heldout19).

    A warning too: an attribute read on the model accelerate's `accelerator.prepare(...)` returned
    (`model.generate(...)`, `model.save_pretrained(...)`: lint heldout25c u002, u003): under a
    multi-process launch prepare wraps it in DistributedDataParallel, which has none of the model's
    own attributes; run as one process, prepare returns the model itself. The fix reads it through
    `accelerator.unwrap_model(model)`. Not in a notebook (one process), nor in a file that names DeepSpeed
    or FSDP (their wrappers hand on the model's attributes: peft's zero3 and fsdp examples), nor on a
    tokenizer or processor prepare hands back, nor on a model the file froze before prepare
    (`vae.requires_grad_(False)`: accelerate wraps only a model with a trainable parameter; lint heldout27c u025).
    A function defined above the prepare and handed the prepared model by every call reads the wrapper too, so
    does one that reads the module's prepared model and is called from the module's top below the prepare (lint
    heldout29 u016, heldout30 u001: `evaluate(test_loader)` reading `model.image_forward`), and
    the reads of one prepared model are one missing unwrap, said once across functions (lint heldout29b u016:
    `model.model[i]` in train() and val()).
    """

    id = "wrapper-method-call"
    severity = ERROR  # a certain AttributeError
    local_evidence = True  # decided by the flagged call and the lines shown: stands in a faithful repair
    message = "the DDP / DataParallel wrapper has no such attribute: it lives on .module"
    fix = "model.module.method(...)  # the wrapped model"
    needles = ("DataParallel", "DDP", ".module", "prepare(")

    VALID = (
        '''
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(net.cuda(), device_ids=[rank])
        z = model.module.encode(x)
        model.train()
        ''',
        '''
        from torch.nn.parallel import DistributedDataParallel as DDP

        cond = unet.module.self_cond if isinstance(unet, DDP) else unet.self_cond
        ''',
    )
    INVALID = (
        '''
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(net.cuda(), device_ids=[rank])
        z = model.encode(x)  # flagged
        ''',
        '''
        from torch.nn.parallel import DistributedDataParallel as DDP

        if distributed:
            model = DDP(net.cuda(), device_ids=[rank])
        z = model.encode(x)  # flagged: a warning, the distributed path raises
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        # one diagnostic per run of statements and wrapper, naming each attribute read there:
        # `(model.rpn, model.backbone)` is one mistake on one line, and so are
        # `model.roi_heads.train()` and `model.backbone.eval()` on the next (heldout5 r043)
        seen: dict[tuple[int, str, str], list[str]] = {}
        hits: list[tuple[tuple[int, str, str], Hit]] = []
        last: dict[tuple[int, str, str], ast.AST] = {}  # the latest statement of each run
        # (reads under two different settings are two: each warning names the option that runs it)
        option: dict[int, str] = {}
        for node, hit, setting in sorted(self._reads(file), key=lambda read: (read[0].lineno, read[0].col_offset)):
            option[id(hit)] = setting
            stmt = file.statement(node)
            run = next((k for k, end in last.items() if k[1:] == (ast.unparse(node.value), hit.severity)
                        and (end is stmt or _follows(file, end, stmt))), None)
            if run is not None:
                seen[run].append(node.attr)
                last[run] = stmt
                continue
            run = (node.lineno, ast.unparse(node.value), hit.severity)
            seen[run], last[run] = [node.attr], stmt
            hits.append((run, hit))
        # and one per wrapper and function: five reads of `net.lmbda`, `net.aux_loss`, ... across a
        # validation loop are one missing `.module`, said once with its other lines (lint heldout15
        # u016 gave five errors in two functions); another function keeps its own
        grouped: dict[tuple[int | None, str, str, str], list[tuple[tuple[int, str, str], Hit]]] = {}
        for run, hit in hits:
            # (the model accelerate's prepare returned is one wrapper wherever it is read: one missing unwrap,
            # said once across functions; lint heldout29b u016's train() and val() reading `model.model[i]`)
            scope = None if option[id(hit)].startswith(PREPARED) else \
                id(file.function(hit.node) if hit.node is not None else None)
            key = (scope, run[1], run[2], option[id(hit)])
            grouped.setdefault(key, []).append((run, hit))
        for runs in grouped.values():
            (run, hit), rest = runs[0], runs[1:]
            names = [n for r, _ in runs for n in seen[r]]
            if len(set(names)) > 1:
                listed = ", ".join(f"`{n}`" for n in dict.fromkeys(names))
                hit = replace(hit, message=hit.message.replace(f"`{seen[run][0]}`", listed, 1))
            if rest:
                lines = ", ".join(str(r[0]) for r, _ in rest)
                word = "lines" if len(rest) > 1 else "line"
                hit = replace(hit, message=f"{hit.message} (the same wrapper at {word} {lines})",
                              also=tuple(sorted({r[0] for r, _ in rest} - {run[0]})))
            yield hit

    def _reads(self, file: FileModel) -> Iterator[tuple[ast.Attribute, Hit, str]]:
        """Each attribute read on a wrapper, its hit, and the setting the hit says runs it ("" if none)."""
        # attributes the file sets where they may land on a wrapper; not a plain model class's own
        # `self.mask_decoder = mask_decoder` (lint heldout11 u054: CellSAM's submodule, read through the
        # DDP wrapper as `cellsam_model.mask_decoder`)
        assigned = {
            node.attr for node in ast.walk(file.tree)
            if type(node) is ast.Attribute and type(node.ctx) is not ast.Load and not _model_own(file, node)}
        unwrapped = _module_reads(file)
        tested: bool | None = None  # the file tests for a wrapper somewhere: searched once, when first needed
        for node in ast.walk(file.tree):
            if type(node) is not ast.Attribute or type(node.ctx) is not ast.Load:
                continue
            # `ddp_model.generate`, `self.m.step` with `self.m = nn.DataParallel(m)` in a method,
            # or `trainer.model.encode` with `trainer = Trainer(...)` of the file's own class
            if type(node.value) is not ast.Name and file.method_class(node.value) is None \
                    and _instance_attribute(file, node.value) is None:
                continue
            if node.attr in WRAPPER_NAMES or node.attr in assigned or node.attr.startswith("_"):
                continue
            holder = ast.unparse(node.value)
            if _tested_bare(file, node, holder) or _tried_bare(file, node, holder) \
                    or tested_as_own_class(file, node, holder):
                continue  # `if hasattr(model, 'module'): model.module.x  else: model.x` (dev7 u017)
            fix = f"{holder}.module.{node.attr}"
            kinds = self._kinds(file, node.value, node, 0)
            if len(kinds) == 1 and "" not in kinds:
                kind = kinds.pop()
                setting = _on_a_setting(file, node)
                if setting is None:
                    yield node, Hit(node, message=f"{holder} is a {kind} wrapper: it has no `{node.attr}` "
                                    f"(AttributeError); the model's attributes live on {holder}.module", fix=fix), ""
                else:
                    yield node, Hit(node, severity=WARNING, fix=fix, message=(
                        f"{holder} is a {kind} wrapper: it has no `{node.attr}` (AttributeError, it lives on "
                        f"{holder}.module), on the path where `{ast.unparse(setting)[:60]}` holds (line "
                        f"{setting.lineno}), a setting of the command line or the configuration this file does "
                        "not decide")), ast.unparse(setting)
                continue
            # the model accelerate's prepare returned (lint heldout25c u002's `model.generate(...)`, u003's
            # `model.save_pretrained(...)`): under a multi-process launch prepare wraps it in DDP
            prepared = None if file.notebook or FORWARDING_BACKEND.search(file.text) \
                or NOT_A_MODEL.search(holder) else prepared_model(file, node.value)
            # (above prepare in the file, but in a function the prepared model is handed to: lint heldout29b u016's
            # `train(model, ...)`, defined above `main`'s prepare, reading `model.model[i]`)
            if prepared is not None and (prepared.lineno < node.lineno
                                         or file.function(prepared) is not file.function(node)):
                yield node, Hit(node, severity=WARNING, fix=f"accelerator.unwrap_model({holder}).{node.attr}",
                                message=f"{holder} is the model `{ast.unparse(prepared.func)[:40]}(...)` returned "
                                f"(line {prepared.lineno}): under a multi-process launch that is a "
                                f"DistributedDataParallel wrapper, which has no `{node.attr}` (AttributeError; "
                                "run as one process, prepare returns the model itself)"), f"{PREPARED}{prepared.lineno}"
                continue
            # a parameter the function takes as it is, handed a certain wrapper by a call of the file
            # (lint heldout20 u020: `predict(messages, model)` below `model = DDP(model, ...)`, and
            # predict's `model.generate(...)`): that call raises
            handed = _handed_wrapper(file, node, self)
            if handed is not None:
                site, arg, kind, setting = handed
                said = (f"{holder} is a parameter of {getattr(file.function(node), 'name', '')}(), and the call "
                        f"at line {site.lineno} hands it `{ast.unparse(arg)[:40]}`, a {kind} wrapper: there it has "
                        f"no `{node.attr}` (AttributeError, it lives on {holder}.module)")
                if setting is None:
                    yield node, Hit(node, fix=fix, message=said), ""
                else:
                    yield node, Hit(node, severity=WARNING, fix=fix, message=(
                        f"{said}, on the path where `{ast.unparse(setting)[:60]}` holds (line {setting.lineno}), a "
                        "setting of the command line or the configuration this file does not decide")), \
                        ast.unparse(setting)
                continue
            # Not every value is a wrapper here: say which path makes it one, as a warning
            if tested is None:
                tested = WRAPPER_TEST.search(file.text) is not None
            wrapping = None if tested else _wrapping(file, node.value, node, 0)
            if wrapping is not None:
                kind, where = wrapping
                launch = _launched(file, where)
                if launch is not None:
                    # the wrapping path is the distributed launch itself (lint heldout11 u059, a build-nanogpt
                    # script: `ddp = int(os.getenv("RANK", -1)) != -1`, `if ddp: model = DDP(...)`, then
                    # `'config': model.config` in the checkpoint): run as the DDP program it is, it raises
                    yield node, Hit(node, fix=fix, message=(
                        f"{holder} is a {kind} wrapper whenever the job is launched distributed ({launch}; wrapped "
                        f"at line {where}): there it has no `{node.attr}` (AttributeError, it lives on "
                        f"{holder}.module)")), ""
                    continue
                yield node, Hit(node, severity=WARNING, fix=fix, message=(
                    f"{holder} is a {kind} wrapper on the path through line {where}: there it has no "
                    f"`{node.attr}` (AttributeError, it lives on {holder}.module); lint cannot tell that "
                    "this line never runs on that path")), ""
                continue
            read = unwrapped.get(value_key(file, node.value))
            if read is not None and type(node.value) is ast.Name and read.lineno != node.lineno \
                    and not other_arms(file, read, node) and not _in_or_else(file, read, node):
                yield node, Hit(node, severity=WARNING, fix=fix, message=(
                    f"the file reads {holder}.module (line {read.lineno}), so {holder} is a DDP / "
                    f"DataParallel wrapper there, and the same {holder} is read here: a wrapper has no "
                    f"`{node.attr}` (AttributeError); lint cannot see where {holder} is wrapped")), ""

    def _kinds(self, file: FileModel, value: ast.expr, use: ast.AST, depth: int) -> set[str]:
        """The wrapper each value of `value` is ("" for anything else), through
        `model = model.cuda()`. A value assigned under a branch the use is not in
        (`elif n_gpu > 1: model = DataParallel(model)`) may not be the one there."""
        out: set[str] = set()
        built = _instance_attribute(file, value) if type(value) is ast.Attribute else None
        origins = file.origins(value) if built is None else built
        if not origins or depth > 4:
            return {""}
        origins = [o for o in origins if not _later(file, o, use)]
        if not origins:
            return {""}
        for o in origins:
            # a device move (`model = model.to(device)`) returns the module it is called on, wrapper or not,
            # under a branch too (lint heldout18 u004: a move under `if args['resume']:` left the wrapper)
            if type(o) is ast.Call and type(o.func) is ast.Attribute and o.func.attr in ("to", "cuda") \
                    and type(o.func.value) is ast.Name and not wrapper_kind(file, o):
                out |= self._kinds(file, o.func.value, o, depth + 1)
            elif type(o) is ast.Call and file.qualname(o.func) == "torch.compile" and o.args \
                    and type(o.args[0]) is ast.Name:
                # torch.compile's module hands every attribute it lacks to the one it compiled (`.module` of a
                # compiled DDP is the DDP's: lint heldout21 u058, `model = torch.compile(model)` after the wrap)
                out |= self._kinds(file, o.args[0], o, depth + 1)
            elif not isinstance(o, ast.AST) or (built is None and not _always_before(file, o, use)):
                return {""}
            else:
                out.add(wrapper_kind(file, o) or _project_wrapper(file, o, use))
        return out


# A test of the launcher's environment: torchrun (and torch.distributed.launch, SLURM wrappers that
# export it) sets RANK / LOCAL_RANK / WORLD_SIZE; a plain `python train.py` does not.
LAUNCH_ENV = re.compile(r"""(?:environ|getenv)\b[^\n]*?['"](?:RANK|LOCAL_RANK|WORLD_SIZE)['"]""")


def _launched(file: FileModel, line: int) -> str | None:
    """The wrapper built on `line` is built under a test of the launch environment (`if ddp:` with `ddp =
    int(os.getenv("RANK", -1)) != -1`, or `if "RANK" in os.environ:`): the test, as the message says it;
    else None."""
    wrap = next((c for c in file.calls if c.lineno == line and wrapper_kind(file, c)), None)
    up = file.parent.get(file.statement(wrap)) if wrap is not None else None
    if type(up) is not ast.If or wrap is None or not any(wrap is n for s in up.body for n in ast.walk(s)):
        return None
    test = up.test
    said = f"`{ast.unparse(test)[:40]}`, line {test.lineno}"
    if LAUNCH_ENV.search(ast.unparse(test)):
        return said
    if type(test) is ast.Name:
        for b in file.lookup(test) or []:
            if isinstance(b, Binding) and b.kind == "value" and not b.path and LAUNCH_ENV.search(ast.unparse(b.value)) \
                    and len(file.lookup(test) or []) == 1:
                return f"{said}; `{test.id}` = `{ast.unparse(b.value)[:50]}`"
    return None


def _model_own(file: FileModel, target: ast.Attribute) -> bool:
    """`self.x = ...` in a method of a class of the file whose bases are plain modules (`nn.Module`),
    not a wrapper or another class of the file that may be one: x is the model's, never the wrapper's."""
    cls = file.method_class(target)
    if cls is None:
        return False
    return bool(cls.bases) and all(ast.unparse(b) in ("nn.Module", "torch.nn.Module", "Module") for b in cls.bases)


def _instance_attribute(file: FileModel, value: ast.expr) -> list[object] | None:
    """For `trainer.model` where every value of `trainer` is an instance of one class of the
    file (`trainer = Trainer(...)`): the values `__init__` leaves in `self.model`, when only
    `__init__` sets it, outside any branch (issue 41 item 3: a value followed to a project
    class). None when the file does not say that much."""
    if type(value) is not ast.Attribute or type(value.value) is not ast.Name:
        return None
    found = file.lookup(value.value)
    if not found:
        return None
    classes = set()
    for b in found:
        built = b.value if isinstance(b, Binding) and b.kind == "value" and not b.path else None
        if type(built) is not ast.Call or type(built.func) is not ast.Name:
            return None
        classes |= {d for d in file.find_def(built.func) if type(d) is ast.ClassDef}
    if len(classes) != 1:
        return None
    cls = classes.pop()
    init = file.method(cls, "__init__")
    bindings = file.attributes.get((cls, value.attr), [])
    if init is None or not bindings or any(file.function(b.value) is not init for b in bindings):
        return None
    last = bindings[-1]
    if file.statement(last.value) not in init.body or last.path or last.kind != "value":
        return None
    return file.origins(last.value)


def _project_wrapper(file: FileModel, call: object, use: ast.AST) -> str:
    """The wrapper a class of the file subclasses (`class MyDDP(DistributedDataParallel): ...`),
    when the class gives the read attribute no meaning of its own (no such method or class
    attribute, no `__getattr__` that could forward it); else ""."""
    if type(call) is not ast.Call or type(call.func) is not ast.Name or type(use) is not ast.Attribute:
        return ""
    classes = [d for d in file.find_def(call.func) if type(d) is ast.ClassDef]
    if len(classes) != 1:
        return ""
    cls = classes[0]
    if len(cls.bases) != 1 or cls.keywords:
        return ""  # a mixin beside the wrapper may give the attribute a meaning
    names = {t.id for stmt in cls.body if isinstance(stmt, ast.Assign) for t in stmt.targets if type(t) is ast.Name}
    names |= {stmt.target.id for stmt in cls.body if isinstance(stmt, ast.AnnAssign) and type(stmt.target) is ast.Name}
    if use.attr in names or file.method(cls, use.attr) is not None or file.method(cls, "__getattr__") is not None:
        return ""
    for base in cls.bases:
        for kind in ("DistributedDataParallel", "DataParallel"):
            qualname = file.qualname(base) or ""
            if qualname.startswith("torch.") and qualname.endswith("." + kind):
                return kind
    return ""


def _wrapping(file: FileModel, value: ast.expr, use: ast.AST, depth: int,
              via: tuple[ast.AST, ...] = ()) -> tuple[str, int] | None:
    """A wrapper one of the values of `value` may be (`if distributed: model = DDP(model)`),
    through `model = model.cuda()` and `ref = model`, and the line that builds it; None when
    none is, or when the use (or a `ref = model` on the way, `via`) runs only where the file's
    own tests exclude that path (dev7 u024: `else: net1_ref = net1` after `if args.distributed:
    net1_ref = net1.module`)."""
    if depth > 4:
        return None
    for o in _origins_via(file, value, via):
        if isinstance(o, tuple):  # `ref = model`: follow `model` from that binding
            found = _wrapping(file, o[0], use, depth + 1, via + (o[1],))
            if found is not None:
                return found
            continue
        if not isinstance(o, ast.AST) or _later(file, o, use):
            continue
        kind = wrapper_kind(file, o)
        if kind and _nearby(file, o, use) and not any(_excluded(file, o, at) for at in (use, *via)):
            return kind, o.lineno  # type: ignore[attr-defined]
        if type(o) is ast.Call and type(o.func) is ast.Attribute and o.func.attr in ("to", "cuda") \
                and type(o.func.value) is ast.Name:
            found = _wrapping(file, o.func.value, use, depth + 1, via)
            if found is not None:
                return found
    return None


def _origins_via(file: FileModel, value: ast.expr, via: tuple[ast.AST, ...]) -> list[object]:
    """`file.origins(value)`, except that a binding `ref = other` (a plain name) comes back as
    (other, the binding's value) so that the caller can ask where that binding runs."""
    found = file.lookup(value) if type(value) is ast.Name else None
    if not found:
        return file.origins(value)
    out: list[object] = []
    for b in found:
        if isinstance(b, Binding) and b.kind == "value" and not b.path and type(b.value) is ast.Name:
            out.append((b.value, b.value))
        elif isinstance(b, Binding) and b.kind == "value" and not b.path and type(b.value) is ast.IfExp:
            # `raw_model = model.module if ddp else model`: each arm is followed from where it runs, so
            # that `model` in the `else` is not the wrapper built under `if ddp:` (lint heldout11 u059)
            for arm in (b.value.body, b.value.orelse):
                out += [(arm, arm)] if type(arm) is ast.Name else file.origins(arm)
        elif isinstance(b, Binding) and b.kind == "value" and not b.path:
            out += file.origins(b.value)
        else:
            return file.origins(value)
    return out


def _later(file: FileModel, origin: object, use: ast.AST) -> bool:
    """`origin` is computed after `use`, in the same function, and no loop around `use` brings
    it back before it (dev7 u020: `model.backbone` read at the top of a function that wraps the
    model in DDP twelve lines below)."""
    if not isinstance(origin, ast.AST) or file.function(origin) is not file.function(use):
        return False
    if (getattr(origin, "lineno", 0), getattr(origin, "col_offset", 0)) <= (
            getattr(use, "lineno", 0), getattr(use, "col_offset", 0)):
        return False
    loops = {id(a) for a in file.ancestors(use) if isinstance(a, (ast.For, ast.AsyncFor, ast.While))}
    return not any(id(a) in loops for a in file.ancestors(origin))


def _handed_wrapper(file: FileModel, use: ast.Attribute, rule: WrapperMethodCall) \
        -> tuple[ast.Call, ast.Name, str, ast.expr | None] | None:
    """A call of the file that hands the parameter read in `use` (`def predict(messages, model): ...
    model.generate(...)`) a name every path there makes a DDP / DataParallel wrapper (`predict(messages,
    model)` below `model = DDP(model, device_ids=[local_rank])`, lint heldout20 u020): that call, its
    argument, the wrapper, and the setting an `if` around the call tests (None where none does). Only
    where the parameter is never bound again, the read runs whenever the function does (no branch around
    it there, loops aside) and the function neither tests nor unwraps it (`hasattr(model, "module")`,
    `model.module`, `getattr(model, "module", model)`): it takes the wrapper as it is given."""
    holder = use.value
    if type(holder) is not ast.Name:
        return None
    found = file.lookup(holder)
    if not found or not all(isinstance(b, Param) for b in found):
        return None
    func = found[0].function  # type: ignore[union-attr]
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or file.function(use) is not func:
        return None
    for above in file.ancestors(use):
        if above is func:
            break
        if isinstance(above, BRANCHES) and not isinstance(above, (ast.For, ast.AsyncFor, ast.While)):
            return None
    key = ("wrapper handed", func, holder.id)  # once per function and parameter: `args.x` is read often
    if key not in file.memo:
        file.memo[key] = _handed_to(file, func, holder.id, rule)
    return file.memo[key]  # type: ignore[return-value]


def _handed_to(file: FileModel, func: ast.FunctionDef | ast.AsyncFunctionDef, name: str, rule: WrapperMethodCall) \
        -> tuple[ast.Call, ast.Name, str, ast.expr | None] | None:
    """`_handed_wrapper`'s call of the file that hands the parameter `name` of `func` a certain wrapper,
    where `func` neither tests nor unwraps it."""
    sites = file.call_sites.get(func, [])
    if not sites:
        return None
    body = ast.unparse(func)
    if WRAPPER_TEST.search(body) or re.search(rf"\b{re.escape(name)}\.module\b|['\"]module['\"]", body):
        return None
    positional = [a.arg for a in [*func.args.posonlyargs, *func.args.args]]
    for site, offset in sites:
        index = positional.index(name) - offset if name in positional else None
        if index is not None and index < 0:
            continue
        value = keyword(site, name, index)
        if type(value) is not ast.Name:
            continue
        kinds = rule._kinds(file, value, site, 0)
        if len(kinds) == 1 and "" not in kinds:
            return site, value, next(iter(kinds)), _on_a_setting(file, site)
    return None


# Names a script keeps its settings in (the parsed command line, a configuration).
SETTINGS = frozenset({"args", "opt", "opts", "cfg", "config", "conf", "hparams", "hp", "FLAGS", "flags", "params"})


def _on_a_setting(file: FileModel, node: ast.AST) -> ast.expr | None:
    """The test of an `if` around `node`, in its function, that reads a setting (`args.transfer`,
    `config["mode"]`: an attribute or item of the parsed arguments or of a name kept for settings)
    and no rank, nor a property every rank of a distributed job shares (`args.distributed`): the
    line runs only where the user sets it (lint heldout16 u026: `model.gclstm_encoder` read on the
    DDP wrapper under `if args.transfer and args.model_type == 'classifier':`). None elsewhere."""
    child = node
    for anc in file.ancestors(node):
        if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return None
        if type(anc) is ast.If and child is not anc.test:
            # the whole test, else one of its `and` terms: `args['resume'] and gpu_id == 0` runs only
            # where --resume is given (lint heldout18 u004)
            terms = [anc.test, *(anc.test.values if type(anc.test) is ast.BoolOp and type(anc.test.op) is ast.And
                                 else [])]
            setting = next((t for t in terms if _reads_setting(file, t) and not file.is_rank_test(t)
                            and not same_everywhere(t) and fixed_truth(file, t) is None), None)
            if setting is not None:
                return setting
        child = anc
    return None


def _reads_setting(file: FileModel, test: ast.expr) -> bool:
    """`test` reads an attribute or item of the parsed command line (a name bound to `parse_args()`)
    or of a name kept for settings."""
    for sub in ast.walk(test):
        base = sub.value if type(sub) in (ast.Attribute, ast.Subscript) else None  # type: ignore[attr-defined]
        if type(base) is not ast.Name:
            continue
        if base.id in SETTINGS or any(type(o) is ast.Call and terminal_name(o.func) in ("parse_args", "parse_known_args")
                                      for o in file.origins(base)):
            return True
    return False


def _tested_bare(file: FileModel, use: ast.Attribute, holder: str) -> bool:
    """`use` runs in the arm of the file's own wrapper test that says `holder` is the bare
    model: the `else` of `if hasattr(model, 'module'):` / `if isinstance(model, DDP):`, or the
    body of their negation (dev7 u017: `model.module.text_embedder(...)` else
    `model.text_embedder(...)`)."""
    for branch, arm in arms(file, use):
        test, negated = branch.test, False
        if type(test) is ast.UnaryOp and type(test.op) is ast.Not:
            test, negated = test.operand, True
        if type(test) is not ast.Call or type(test.func) is not ast.Name or len(test.args) != 2:
            continue
        if ast.unparse(test.args[0]) != holder or not WRAPPER_TEST.search(ast.unparse(test)):
            continue
        if arm == ("body" if negated else "orelse"):
            return True
    return False


def _tried_bare(file: FileModel, use: ast.Attribute, holder: str) -> bool:
    """`use` is in an `except` handler of a `try` whose body reads `holder.module`: the
    handler runs where that read failed, where `holder` is the bare model (heldout10 u001:
    `try: model.module.image_encoder ... except: model.image_encoder`), the `try` form of
    the file's own wrapper test."""
    child: ast.AST = use
    for above in file.ancestors(use):
        if isinstance(above, SCOPES):
            return False
        if type(above) is ast.Try and type(child) is ast.ExceptHandler:
            if any(type(n) is ast.Attribute and n.attr == "module" and ast.unparse(n.value) == holder
                   for stmt in above.body for n in ast.walk(stmt)):
                return True
        child = above
    return False


def _nearby(file: FileModel, origin: ast.AST, use: ast.AST) -> bool:
    """The wrapper is built in the use's own function, or in a method of its class (`self.model`):
    not a value that reaches a parameter from one of several call sites (fairscale's parity test
    passes a DDP model and a sharded one to one closure, and only the sharded one reaches `reduce`)."""
    if file.function(origin) is file.function(use):
        return True
    cls = file.method_class(use.value) if type(use) is ast.Attribute else None
    builder = file.function(origin)
    return cls is not None and builder is not None and file.parent.get(builder) is cls


def _excluded(file: FileModel, origin: ast.AST, use: ast.AST) -> bool:
    """The wrapper is built only in one arm of a test (`elif n_gpu > 1:` after `if local_rank != -1:`)
    and the use runs only in the other arm of the same test, or the two sit in different arms of one
    `if` (DeepSpeedExamples' BingBertSquad: apex's DDP, which has `disable_allreduce`, in the
    first arm)."""
    if other_arms(file, origin, use):
        return True
    built = {(ast.unparse(branch.test), arm) for branch, arm in arms(file, origin) if type(branch) is ast.If}
    # (an arm of a conditional expression too: `model.module if ddp else model`)
    used = {(ast.unparse(branch.test), arm) for branch, arm in arms(file, use)}
    used |= _or_else(file, use)
    # the same test, the other arm (fairscale's test_fsdp_regnet: DDP under `if ddp:`, FSDP's
    # `assert_state` under a later `if ddp: ... else:`)
    return any((test, "body" if arm == "orelse" else "orelse") in used for test, arm in built)


def _or_else(file: FileModel, use: ast.AST) -> set[tuple[str, str]]:
    """The `else` of `if a or b:` is the `else` of `if a:` and of `if b:` (dev7 u024: DDP under
    `if args.distributed:`, DataParallel under `elif args.gpus > 1:`, the bare model's use under
    the `else` of `if args.gpus > 1 or args.distributed:`): (test, "orelse") for each operand."""
    return {(ast.unparse(operand), "orelse") for branch, arm in arms(file, use)
            if type(branch) is ast.If and arm == "orelse" and type(branch.test) is ast.BoolOp
            and type(branch.test.op) is ast.Or for operand in branch.test.values}


def _in_or_else(file: FileModel, read: ast.AST, use: ast.AST) -> bool:
    """`read` (`net1.module` under `if args.distributed:`) runs only under a test whose `else`
    the use is in, as one operand of `if a or b:` (dev7 u024)."""
    tests = {ast.unparse(branch.test) for branch, arm in arms(file, read) if type(branch) is ast.If and arm == "body"}
    return any((test, "orelse") in _or_else(file, use) for test in tests)


def _follows(file: FileModel, first: ast.AST, then: ast.AST) -> bool:
    """`then` is the statement right after `first` in the same block."""
    block = file.parent.get(first)
    for field in ("body", "orelse", "finalbody"):
        body = getattr(block, field, None)
        if isinstance(body, list) and first in body:
            i = body.index(first)
            return i + 1 < len(body) and body[i + 1] is then
    return False


def _module_reads(file: FileModel) -> dict[tuple[str, tuple[int, ...]] | None, ast.Attribute]:
    """`x.module` reads on a plain name, by the value they read: the file treats that value as a wrapper."""
    out: dict[tuple[str, tuple[int, ...]] | None, ast.Attribute] = {}
    if "deepspeed" in file.text.lower():
        return out  # a DeepSpeed engine has `.module` and `backward`/`step` of its own (DeepSpeedExamples)
    for node in ast.walk(file.tree):
        if type(node) is ast.Attribute and node.attr == "module" and type(node.value) is ast.Name:
            stmt = file.statement(node)
            if type(stmt) is ast.Assign and any(type(t) is ast.Name and t.id == node.value.id for t in stmt.targets):
                continue  # `model = model.module if ... else model`: from here on the name is the model
            if node.value.id == "self" or not any(DISTRIBUTED.search(ast.unparse(branch.test))
                                                   for branch, arm in arms(file, node) if arm == "body"):
                # only where the file's own test says "distributed" (`model.module if args.distributed
                # else model`): `.module` alone is also an import node's, a DeepSpeed engine's, a
                # Megatron Float16Module's (the mature repositories: 23 such reads, none a DDP wrapper)
                continue
            out.setdefault(value_key(file, node.value), node)
    return out


def _always_before(file: FileModel, origin: ast.AST, use: ast.AST) -> bool:
    """The statement that computes `origin` runs whenever `use` does: no branch
    or loop around it that is not around `use` too."""
    around_use = set(map(id, file.ancestors(use)))
    for above in file.ancestors(origin):
        if isinstance(above, SCOPES):
            return True
        if isinstance(above, BRANCHES) and id(above) not in around_use:
            return False
    return True
