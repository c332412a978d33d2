from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from gpudoctor.linter.arms import ruled_out
from gpudoctor.linter.idioms import TORCH
from gpudoctor.linter.model import FileModel
from gpudoctor.linter.rule import Hit, Rule

# Keywords of torch.nn.parallel.data_parallel(module, inputs, device_ids, output_device, dim, module_kwargs).
TORCH_KEYWORDS = {"inputs", "device_ids", "output_device", "module_kwargs"}
# A class named as a DataParallel (`BalancedDataParallel`, nncore's `NNDataParallel`,
# Detectron.pytorch's `mynn.DataParallel`); not the multi-process wrappers whose names end
# the same way (`MMDistributedDataParallel`, fairscale's `ShardedDataParallel`, FSDP).
DATAPARALLEL_NAME = re.compile(r"^(?:[A-Z]\w*)?DataParallel$")
MULTI_PROCESS_NAMES = ("DistributedDataParallel", "ShardedDataParallel")
# Frameworks whose DataParallel is not torch's (Paddle's is one process per device) and
# their usual aliases, when a snippet does not import them.
OTHER_FRAMEWORKS = {"paddle", "fluid", "torch_xla", "xm", "oneflow", "flow", "mindspore", "ms", "jittor", "jt",
                    "mxnet", "mx", "gluon", "megengine", "mge", "tensorflow", "tf", "keras", "chainer"}


# mmcv's MMDataParallel is its single-GPU wrapper ("MMDataParallel only supports single GPU training, if
# you need to train with multiple GPUs, please use MMDistributedDataParallel", mmcv/parallel/data_parallel.py;
# its train_step asserts `len(self.device_ids) == 1`): no process drives several GPUs through it.
ONE_DEVICE_LIBRARIES = ("mmcv", "mmengine")


class DataParallel(Rule):
    """`nn.DataParallel` runs one process with a thread per GPU: it copies
    the model to every GPU on every step, scatters each batch and gathers
    the outputs on GPU 0, so it is slower than DistributedDataParallel even
    on one machine and GPU 0 runs out of memory first.

    Use one process per GPU with DistributedDataParallel, started by
    `torchrun`. Flagged: building a DataParallel, also where the file builds
    a DistributedDataParallel on another path: a run started without a
    launcher takes the DataParallel path and is the slow one (issue 41's
    samples: readers flagged three of four such fallbacks); and a wrapper
    taken apart at once (`nn.DataParallel(model).module` is the bare model:
    nothing runs in parallel at all). Not flagged: `isinstance(model,
    nn.DataParallel)` checks, code in an arm the file's own values rule
    out: `if False:`, or the `else:` of `if args.distributed:` where the file
    sets the flag true before the test runs (lint heldout22 u039: main() sets
    `args.multiprocessing_distributed = True`, from which `args.distributed`
    follows, then spawns the worker holding the fallback). Not run on test files.

    The functional form, `nn.parallel.data_parallel(module, inputs,
    device_ids)`, is the same scheme run on every call (replicate, scatter,
    gather) and is flagged too (issue 41's heldout3 and heldout7: a speech
    model's CNN and a trainer's forward); a bare `data_parallel(...)` the
    file never imports or defines counts only when torch's own keywords show
    it (`inputs=`, `device_ids=`, `output_device=`).

    A class named as a DataParallel that is not torch's is read as its subclass
    (issue 41's heldout8: `BalancedDataParallel`, nncore's `NNDataParallel`,
    Detectron.pytorch's `mynn.DataParallel`, three threads whose single process
    drove every GPU): `<Capitalised>DataParallel(...)` or `x.DataParallel(...)`,
    saying that only the name was read, or the line of the file's own subclass.
    Not flagged: the multi-process wrappers named alike (`...DistributedDataParallel`,
    fairscale's `ShardedDataParallel`, FSDP), another framework's (Paddle's
    `paddle.DataParallel` is one process per device; torch_xla's), a function
    (`set_model_DataParallel(...)`), a class of the file that subclasses no
    DataParallel, PyTorch-Encoding's `DataParallelModel` (its name does not end so), nor mmcv's
    `MMDataParallel`, its single-GPU wrapper (mmcv documents it as one device only and its
    `train_step` asserts one; lint heldout15 u049: the non-distributed arm of an mmcv trainer).

    The wraps of one function (or of the module's top) are one choice of
    DataParallel, said once at the first, naming the other lines (lint
    heldout18 u061: two networks wrapped, then wrapped again); a wrapper
    taken apart at once is said on its own.
    """

    id = "dataparallel"
    in_tests = False  # tests build this shape on purpose
    message = "nn.DataParallel: one process drives every GPU; DistributedDataParallel is faster"
    fix = "model = DistributedDataParallel(model.to(local_rank), device_ids=[local_rank])  # torchrun --nproc-per-node=N"
    needles = ("DataParallel", "data_parallel")

    VALID = (
        '''
        import os
        from torch.nn.parallel import DistributedDataParallel as DDP

        local_rank = int(os.environ["LOCAL_RANK"])
        model = DDP(model.to(local_rank), device_ids=[local_rank])
        ''',
        '''
        import torch.nn as nn

        def unwrap(model):
            return model.module if isinstance(model, nn.DataParallel) else model
        ''',
        '''
        import paddle
        from fairscale.nn.data_parallel import ShardedDataParallel

        model = paddle.DataParallel(model)  # Paddle's: one process per device
        model = ShardedDataParallel(model, optimizer)
        ''',
    )
    INVALID = (
        '''
        import torch.nn as nn

        model = nn.DataParallel(model)  # flagged
        ''',
        '''
        from torch.nn import DataParallel as DP

        model = DP(model, device_ids=[0, 1]).cuda()  # flagged
        ''',
        '''
        import torch.nn as nn

        if args.distributed:
            model = nn.parallel.DistributedDataParallel(model.cuda(gpu), device_ids=[gpu])
        else:
            model = nn.DataParallel(model).cuda()  # flagged: the path of a run without a launcher
        ''',
        '''
        import torch.nn as nn

        model = nn.DataParallel(model).module  # flagged: taken apart at once, nothing runs in parallel
        ''',
        '''
        import torch.nn as nn

        out = nn.parallel.data_parallel(net, x, device_ids=[0, 1])  # flagged: the same scheme, per call
        ''',
        '''
        from data_parallel import BalancedDataParallel

        model = BalancedDataParallel(gpu0_bsz, model, dim=0).cuda()  # flagged: a DataParallel by its name
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        # (torch's, apex's, DeepSpeed's): DataParallel is then the path of a run started without a launcher
        fallback = "DistributedDataParallel" in file.text
        # The wraps of one function (or of the module's top) are one choice of DataParallel, said once at
        # the first, naming the others (lint heldout18 u061: its two networks wrapped, then wrapped again)
        def scope(call: ast.Call) -> int:
            return id(file.function(call) or file.tree)

        for call in file.calls_to("DataParallel", TORCH):
            if self._dead(file, call):
                continue
            up = file.parent.get(call)
            if type(up) is ast.Attribute and up.attr == "module":
                yield Hit(call, message="nn.DataParallel taken apart at once: `.module` of a new wrapper is the "
                          "bare model, so one GPU does all the work; keep the wrapper, or better, use "
                          "DistributedDataParallel", cause=(scope(call), "module"))
            elif fallback:
                yield Hit(call, message=self.message + ": the file builds DistributedDataParallel on another "
                          "path, and a run started without a launcher takes this one", cause=scope(call))
            else:
                yield Hit(call, cause=scope(call))
        torch_calls = set(map(id, file.calls_to("DataParallel", TORCH)))
        for call in file.calls:
            if id(call) not in torch_calls and not self._dead(file, call):
                subclass = self._named_subclass(file, call)
                if subclass is not None:
                    yield Hit(call, message=f"`{ast.unparse(call.func)}` {subclass}: one process drives every GPU "
                              "(its replicas are threads), and DistributedDataParallel is faster", cause=scope(call))
        for call in file.calls:
            how = self._functional(file, call)
            if how is not None and not self._dead(file, call):
                yield Hit(call, message="nn.parallel.data_parallel: one process drives every GPU, replicating the "
                          "module and scattering the inputs on every call; DistributedDataParallel is faster" + how,
                          cause=scope(call))

    @staticmethod
    def _functional(file: FileModel, call: ast.Call) -> str | None:
        """`torch.nn.parallel.data_parallel(...)`: "" (or the import it is read as), else None."""
        if file.is_call_to(call, "data_parallel", TORCH):
            return ""
        func = call.func
        if type(func) is ast.Name and func.id == "data_parallel" and not file.defines(func.id) \
                and func.id not in file.imports and func.id not in file.relative_imports and not file.star_imports \
                and any(k.arg in TORCH_KEYWORDS for k in call.keywords):
            return " (read as torch's `from torch.nn.parallel import data_parallel`, as its keywords show: the file " \
                   "does not import it)"
        return None

    @staticmethod
    def _named_subclass(file: FileModel, call: ast.Call) -> str | None:
        """How a call of a class named as a DataParallel that is not torch's reads
        (`BalancedDataParallel(...)`, `mynn.DataParallel(...)`), or None: a function or a
        class of the file that does not subclass a DataParallel, a multi-process wrapper,
        another framework's."""
        func = call.func
        name = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else ""
        if not DATAPARALLEL_NAME.match(name) or name.endswith(MULTI_PROCESS_NAMES):
            return None
        root = func
        while type(root) is ast.Attribute:
            root = root.value
        if name == "DataParallel" and type(root) is ast.Name and root.id in ("torch", "nn"):
            return None  # torch's own name, read through a star import (`torch` from `lfqa_utils`): not a subclass
        qualname = file.qualname(func)
        if qualname is not None:
            if qualname.split(".", 1)[0] in OTHER_FRAMEWORKS or qualname.startswith("torch."):
                return None  # (torch's own DataParallel is read by `calls_to`)
            if qualname.split(".", 1)[0] in ONE_DEVICE_LIBRARIES and name == "MMDataParallel":
                return None  # mmcv's one-GPU wrapper: its train_step asserts a single device
        elif type(root) is not ast.Name or root.id in OTHER_FRAMEWORKS:
            return None
        elif root is not func and (file.lookup(root) is not None or file.defines(root.id)):
            return None  # `x.DataParallel` of a class, a parameter or a value of the file: not followed
        if type(func) is ast.Name:
            defined = [d for (_, n), found in file.defs.items() if n == name for d in found]
            if defined:
                classes = [d for d in defined if type(d) is ast.ClassDef]
                if len(classes) != len(defined) or not any(
                        (file.qualname(b) or ast.unparse(b)).endswith("DataParallel") for c in classes for b in c.bases):
                    return None
                return f"is the file's subclass of a DataParallel (line {classes[0].lineno})"
            if file.defines(name):
                return None  # bound to something else: not followed
        where = f"imported from `{qualname.rsplit('.', 1)[0]}`" if qualname is not None and "." in qualname else \
            "whose definition this file does not show"
        return f"is read by its name as a subclass of nn.DataParallel ({where})"

    @staticmethod
    def _dead(file: FileModel, node: ast.AST) -> bool:
        """In an `if` arm the file's own values never take: `if False:` (code kept for reference), or the
        `else:` of `if args.distributed:` where the file sets that flag true before the test runs (lint
        heldout22 u039: `args.multiprocessing_distributed = True` in main(), so main_worker's DataParallel
        fallback never runs; its reader found nothing to say there)."""
        return ruled_out(file, node)
