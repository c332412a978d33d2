from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.linter.idioms import wrapper_kind
from gpudoctor.linter.model import FileModel

SCOPES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
BRANCHES = (ast.If, ast.IfExp, ast.For, ast.AsyncFor, ast.While, ast.ExceptHandler, ast.match_case)
from gpudoctor.linter.rule import ERROR, Hit, Rule

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

    Flagged: an attribute, not one nn.Module or the wrapper has and not one the
    file sets on the wrapper, read on a name whose every value at that point is
    a `DistributedDataParallel(...)` / `DataParallel(...)` (through `.to()` /
    `.cuda()`). Asked for by issue 41's sample (four threads: MONAI,
    XPhoneBERT, simpletransformers, DiffCSE).
    """

    id = "wrapper-method-call"
    severity = ERROR  # a certain AttributeError
    message = "the DDP / DataParallel wrapper has no such attribute: it lives on .module"
    fix = "model.module.method(...)  # the wrapped model"
    needles = ("DataParallel", "DDP")

    VALID = (
        '''
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(net.cuda(), device_ids=[rank])
        z = model.module.encode(x)
        model.train()
        ''',
    )
    INVALID = (
        '''
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(net.cuda(), device_ids=[rank])
        z = model.encode(x)  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        assigned = {
            node.attr for node in ast.walk(file.tree)
            if type(node) is ast.Attribute and type(node.ctx) is not ast.Load}
        for node in ast.walk(file.tree):
            if type(node) is not ast.Attribute or type(node.ctx) is not ast.Load:
                continue
            # `ddp_model.generate`, or `self.m.step` with `self.m = nn.DataParallel(m)` in a method
            if type(node.value) is not ast.Name and file.method_class(node.value) is None:
                continue
            if node.attr in WRAPPER_NAMES or node.attr in assigned or node.attr.startswith("_"):
                continue
            kinds = self._kinds(file, node.value, node, 0)
            if len(kinds) != 1 or "" in kinds:
                continue
            kind = kinds.pop()
            holder = ast.unparse(node.value)
            yield Hit(node, message=f"{holder} is a {kind} wrapper: it has no `{node.attr}` "
                      f"(AttributeError); the model's attributes live on {holder}.module",
                      fix=f"{holder}.module.{node.attr}")

    def _kinds(self, file: FileModel, value: ast.expr, use: ast.AST, depth: int) -> set[str]:
        """The wrapper each value of `value` is ("" for anything else), through
        `model = model.cuda()`. A value assigned under a branch the use is not in
        (`elif n_gpu > 1: model = DataParallel(model)`) may not be the one there."""
        out: set[str] = set()
        origins = file.origins(value)
        if not origins or depth > 4:
            return {""}
        for o in origins:
            if not isinstance(o, ast.AST) or not _always_before(file, o, use):
                return {""}
            if type(o) is ast.Call and type(o.func) is ast.Attribute and o.func.attr in ("to", "cuda") \
                    and type(o.func.value) is ast.Name and not wrapper_kind(file, o):
                out |= self._kinds(file, o.func.value, o, depth + 1)
            else:
                out.add(wrapper_kind(file, o))
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
