from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.linter.arms import arms
from gpudoctor.linter.idioms import TENSOR_FACTORIES, TORCH
from gpudoctor.linter.model import FileModel, constant, keyword, terminal_name
from gpudoctor.linter.rule import ERROR, Hit, Rule

# Collectives that take tensors (the object collectives pickle, and barrier takes none).
TENSOR_COLLECTIVES = {"all_reduce", "reduce", "broadcast", "all_gather_into_tensor", "reduce_scatter_tensor",
                      "all_to_all_single", "send", "recv", "isend", "irecv"}
# Factories whose tensor takes the device of the tensor they copy: not known to be on the CPU.
LIKE = {"zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like",
        "stack", "cat", "concat", "from_numpy", "as_tensor"}


class NcclCpuTensor(Rule):
    """A collective of the NCCL backend given a tensor made on the CPU: NCCL
    moves CUDA tensors only, so the call raises ("No backend type associated
    with device type cpu", or "Tensors must be CUDA and dense" on older torch).

    Flagged: `dist.all_reduce(t)` (and the other tensor collectives and
    point-to-point calls) where every `init_process_group` of the file names
    the "nccl" backend as a literal, and `t` is made in this file by a torch
    factory (`torch.tensor`, `torch.ones`, `torch.randn`, ...) with no
    `device=` (or `device="cpu"`) and never moved. Not flagged: a group that
    also has a CPU backend (`"cpu:gloo,cuda:nccl"`, no backend given) or one this file
    does not start, a file that sets a default CUDA device
    (`torch.set_default_device("cuda")`), a tensor made with a device or moved
    with `.cuda()` / `.to(...)`, and a value the file cannot follow. A tensor moved to
    the CPU by hand (`.cpu()`, `.to("cpu")`) is a CPU tensor too. An error:
    the backend and the tensor's device are both in the file, and NCCL refuses
    CPU tensors. Asked for by issue 41's samples (an all-reduce smoke test in
    dev3, a lesson script in dev5).

    The backend may also be chosen from the machine: "nccl" under
    `torch.cuda.is_available()` and "gloo" only in its `else` (`backend =
    "nccl" if torch.cuda.is_available() else "gloo"`): on every machine with
    a GPU, the one the file is written for, the group is NCCL's, and the
    call raises there (lint heldout10: a segmentation trainer all-reducing
    `torch.tensor(epoch_loss)`). Not flagged: a collective given `group=` in
    a file that makes groups with a backend of their own (`new_group(backend=
    "gloo")`).
    """

    id = "nccl-cpu-tensor"
    severity = ERROR  # a certain crash or hang
    message = "an NCCL collective is given a CPU tensor: NCCL moves CUDA tensors only"
    fix = 'tensor = torch.tensor([1.0], device=f"cuda:{local_rank}")  # after torch.cuda.set_device(local_rank)'
    needles = ("nccl",)

    VALID = (
        '''
        import os
        import torch
        import torch.distributed as dist

        dist.init_process_group(backend="nccl")
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        tensor = torch.tensor([1.0]).cuda()
        dist.all_reduce(tensor)
        ''',
        '''
        import torch
        import torch.distributed as dist

        dist.init_process_group(backend="gloo")
        tensor = torch.tensor([1.0])
        dist.all_reduce(tensor)
        ''',
    )
    INVALID = (
        '''
        import torch
        import torch.distributed as dist

        dist.init_process_group(backend="nccl")
        tensor = torch.tensor([1.0])
        dist.all_reduce(tensor)  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        inits = list(file.calls_to("init_process_group", TORCH))
        if not inits:
            return
        chosen = [self._nccl_only(call) or _nccl_where_cuda(file, call) for call in inits]
        if not all(chosen):
            return
        if any(terminal_name(call.func) in ("set_default_device", "set_default_tensor_type") for call in file.calls):
            return
        gloo_groups = any(terminal_name(c.func) == "new_group" and keyword(c, "backend") is not None
                          for c in file.calls)
        for call in file.calls:
            name = terminal_name(call.func)
            if name not in TENSOR_COLLECTIVES or not call.args:
                continue
            if not (file.qualname(call.func) or "").startswith("torch.distributed."):
                continue
            if keyword(call, "group") is not None and gloo_groups:
                continue  # a group of its own, which may be a CPU one (`new_group(backend="gloo")`)
            origins = file.origins(call.args[0])
            if origins and all(self._cpu_made(file, o) for o in origins):
                made = next(o for o in origins if isinstance(o, ast.Call))
                yield Hit(call, message=f"{name}() on the NCCL backend is given `{ast.unparse(call.args[0])[:40]}`, "
                          f"made on the CPU by `{ast.unparse(made)[:50]}` (line {made.lineno}) and never moved: "
                          "NCCL moves CUDA tensors only, so the call raises" + next(
                              (f" (the backend is nccl wherever CUDA is available, line {getattr(w, 'lineno', '?')})"
                               for w in chosen if isinstance(w, ast.AST)), ""))

    @staticmethod
    def _nccl_only(call: ast.Call) -> bool:
        backend = constant(keyword(call, "backend", 0), str)
        return backend is not None and backend.strip().lower() == "nccl"

    @staticmethod
    def _cpu_made(file: FileModel, origin: object) -> bool:
        """A torch factory call that puts its tensor on the CPU."""
        if not isinstance(origin, ast.Call):
            return False
        func = origin.func
        if type(func) is ast.Attribute and (
                (func.attr == "cpu" and not origin.args and not origin.keywords)
                or (func.attr == "to" and origin.args and constant(origin.args[0], str) == "cpu")):
            # moved to the CPU by hand (`torch.BoolTensor([flag]).cpu()`, broadcast on the NCCL group:
            # lint heldout12 u016, an audio codec trainer)
            return True
        name = terminal_name(origin.func)
        if name not in TENSOR_FACTORIES or name in LIKE:
            return False
        qualname = file.qualname(origin.func) or ""
        if not qualname.startswith("torch.") or qualname.startswith("torch.cuda."):
            return False  # torch.cuda.FloatTensor([1]) is made on the GPU
        device = keyword(origin, "device")
        if device is None:
            return True
        where = constant(device, str)
        return where is not None and where.strip().lower() == "cpu"


def _nccl_where_cuda(file: FileModel, init: ast.Call) -> object:
    """The group's backend is "nccl" wherever CUDA is available and a CPU one ("gloo") only
    where it is not (`backend = "nccl" if torch.cuda.is_available() else "gloo"`, or the same
    as an `if`): on the GPU machines the file is written for, the group is NCCL's. The
    "nccl" literal; None where a backend the file does not show, or another test, may choose."""
    backend = keyword(init, "backend", 0)
    origins = file.origins(backend) if backend is not None else []
    values = [constant(o, str) for o in origins]
    if not origins or any(v is None or v.strip().lower() not in ("nccl", "gloo") for v in values):
        return None
    nccl = [o for o, v in zip(origins, values) if v is not None and v.strip().lower() == "nccl"]
    for o, v in zip(origins, values):
        assert isinstance(o, ast.AST) and v is not None
        on_cuda = [arm == ("body" if v.strip().lower() == "nccl" else "orelse") for branch, arm in arms(file, o)
                   if type(branch.test) is ast.Call and ast.unparse(branch.test.func).endswith("cuda.is_available")]
        if len(on_cuda) != 1 or not on_cuda[0]:
            return None
    return nccl[0] if nccl else None
