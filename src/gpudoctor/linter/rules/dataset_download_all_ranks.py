from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from gpudoctor.linter.idioms import (data_parallel_framework, framework_words, in_spawning_parent, is_distributed_program,
                                     lightning_multi_process, source)
from gpudoctor.linter.model import DEFS, FileModel, keyword, terminal_name
from gpudoctor.linter.rule import Hit, Rule
from gpudoctor.linter.rules.save_all_ranks import _single_process_arm, world_of_one

# A context that lets one process go first (`with torch_distributed_zero_first(rank):`, Accelerate's
# `with accelerator.main_process_first():`, `with local_main_first():`).
GOES_FIRST = re.compile(r"first|zero_first|rank_zero|main_process", re.IGNORECASE)
# The packages whose dataset classes fetch their files when given download=True.
DOWNLOADERS = ("torchvision.datasets.", "torchaudio.datasets.", "torchtext.datasets.", "medmnist.")
# torchvision's downloading datasets by name, for a snippet that left its imports out.
KNOWN = frozenset({"MNIST", "FashionMNIST", "KMNIST", "EMNIST", "QMNIST", "CIFAR10", "CIFAR100", "STL10", "SVHN",
                   "Caltech101", "Caltech256", "CelebA", "Flowers102", "Food101", "OxfordIIITPet", "StanfordCars",
                   "FGVCAircraft", "DTD", "EuroSAT", "GTSRB", "Omniglot", "SEMEION", "USPS", "VOCDetection",
                   "VOCSegmentation", "Places365", "SBDataset", "PCAM", "RenderedSST2", "Country211"})


class DatasetDownloadAllRanks(Rule):
    """A dataset built with `download=` on the ranks of a distributed
    script, two shapes of one race:

    - `download=True` on every rank: each rank finds the files missing on a
      fresh machine and fetches them into the same folder at once; the
      archives overwrite one another half-written and a rank can read
      another's partial file (a corrupt-archive or MD5 error, or a silent
      bad extract).
    - `download=(rank == 0)` (or a name bound to such a test): rank 0
      fetches while the other ranks build the same dataset at the same
      moment with `download=False`, find no files and raise "Dataset not
      found or corrupted"; a barrier after the call comes too late.

    Asked for by issue 41's lint heldout10 (u006, u019: MNIST / CIFAR10
    with download=True in every rank), heldout20 (u046: FashionMNIST in the
    spawned worker; u040: STL10 with `download=(rank == 0)`, the barrier
    after it) and heldout4 (q060: `download = args.local_rank == 0`).

    Flagged: a dataset of torchvision, torchaudio, torchtext or medmnist
    (by its import, or by a torchvision dataset's name where the snippet
    has no imports) given `download=` True or a rank test, in a script that
    is distributed (it starts a process group, spawns workers or wraps a
    model in DDP or FSDP, or gives Lightning's Trainer several devices or a strategy of one process per
    device, which runs the script again in each: lint heldout25 u048), on every rank. Not flagged: a
    call in a LightningModule's or DataModule's `prepare_data` hook (Lightning runs it on one process
    per node), a call under a rank test
    (`if rank == 0:`), in the process that calls mp.spawn (it runs once,
    before the ranks), in the arm of `if args.distributed:` that runs one
    process, inside `with torch_distributed_zero_first(rank):` or
    `accelerator.main_process_first()`, or after a barrier that a rank test
    puts the other ranks at first (`if rank != 0: dist.barrier()`, the
    zero-first pattern written out), nor in a file whose every process group is a literal world
    of one and that starts no processes (`init_process_group("gloo", rank=0, world_size=1)`: one
    process downloads; lint heldout27 u014, a one-process 'multi-GPU' benchmark).

    A dataset class of the file built on one of those (`class CustomCIFAR10(datasets.CIFAR10):`, given
    `download=True` in each spawned worker: lint heldout30b u028) downloads as its base does, where it
    hands its keywords on (no `__init__` of its own, or `super().__init__(**kwds)`) and has no `download`
    of its own. A file a library runs data-parallel (`deepspeed.initialize(...)`; accelerate's
    `Accelerator()` or transformers' Trainer where the file shows several processes:
    `idioms.data_parallel_framework`) runs every line once per process, its download too (lint
    heldout27 u024: CIFAR10 built before `deepspeed.initialize(..., training_data=trainset)`). An accelerate
    training script that shows no launch (`idioms.unshown_accelerate_launch`: it prepares a model, names no
    launcher, and says nowhere that it runs as one process) is said with the launch as the condition: "runs
    in every process when launched as several processes (`accelerate launch` on several GPUs; this file shows
    no launch, ...)" (lint heldout31 u023: a coursework DDPM's module-level MNIST download; issue 41, item 2).

    A dataset class of another module (`get_dataset(name)(..., download=True)`)
    is not flagged: whether it downloads at all is not in this file (ResNeSt's
    only registered dataset, ImageNet, takes `download` and ignores it: the
    mature-repository control).

    A warning: on a machine where the data is there already (a second run,
    a shared cache filled beforehand) nothing is downloaded and nothing
    races; the file cannot say which machine it runs on.
    """

    id = "dataset-download-all-ranks"
    in_tests = False
    message = ("the dataset is downloaded on the ranks at the same time: on a fresh machine they race on one "
               "folder (partial archives), or the ranks that do not download find no files")
    fix = "download on rank 0 first: if rank == 0: Dataset(root, download=True); dist.barrier(); then build it " \
          "with download=False on every rank"
    needles = ("download",)

    VALID = (
        '''
        import torch.distributed as dist
        from torchvision import datasets

        dist.init_process_group("nccl")
        if dist.get_rank() == 0:
            datasets.MNIST("./data", download=True)
        dist.barrier()
        train = datasets.MNIST("./data", download=False)
        ''',
        '''
        import torch.multiprocessing as mp
        from torchvision import datasets

        def worker(rank, world_size):
            train = datasets.CIFAR10("./data", train=True, download=False)

        if __name__ == "__main__":
            datasets.CIFAR10("./data", train=True, download=True)  # the parent, once
            mp.spawn(worker, args=(2,), nprocs=2)
        ''',
        '''
        import torch.distributed as dist
        from torchvision import datasets

        def build(rank):
            if rank != 0:
                dist.barrier()
            train = datasets.CIFAR10("./data", download=rank == 0)
            if rank == 0:
                dist.barrier()
            return train
        ''',
    )
    INVALID = (
        '''
        import torch.multiprocessing as mp
        from torchvision import datasets

        def worker(rank, world_size):
            train = datasets.FashionMNIST("./data", train=True, download=True)  # flagged

        if __name__ == "__main__":
            mp.spawn(worker, args=(2,), nprocs=2)
        ''',
        '''
        import os
        import torch.distributed as dist
        from torchvision.datasets import STL10

        def main(rank):
            dist.init_process_group("nccl")
            data = STL10("./data", split="unlabeled", download=(rank == 0))  # flagged
            dist.barrier()

        main(int(os.environ["RANK"]))
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        calls = [c for c in file.calls if keyword(c, "download") is not None and self._downloads(file, c)]
        distributed = is_distributed_program(file) or lightning_multi_process(file)
        framework = None if distributed else data_parallel_framework(file, unshown=True)
        if not calls or not (distributed or framework is not None):
            return  # (a library's launch, DeepSpeed's engine: every line runs once per process, lint heldout27 u024)
        # an accelerate training script that shows no launch: the launch is the condition, said (issue 41, item 2)
        unshown = framework is not None and data_parallel_framework(file) is None
        if world_of_one(file):
            return  # every group a literal world of one, no process started: one process downloads (lint heldout27 u014)
        for call in calls:
            value = keyword(call, "download")
            assert value is not None
            kind = self._kind(file, value)
            if not kind:
                continue
            if file.rank_guarded(call) or in_spawning_parent(file, call) or _single_process_arm(file, call):
                continue
            if self._under_main_guard_of_spawner(file, call) or self._goes_first(file, call) \
                    or self._prepare_data_hook(file, call):
                continue
            name = terminal_name(call.func) or "the dataset"
            if kind == "all" and unshown and framework is not None:
                message = (f"{name}(..., download=True) runs in every process{framework_words(file, framework)}: on a "
                           "fresh machine every process fetches the files into the same folder at once, and the "
                           "half-written archives race (corrupt-archive or checksum errors)")
            elif kind == "all":
                message = (f"{name}(..., download=True) runs on every rank: on a fresh machine every rank fetches "
                           "the files into the same folder at once, and the half-written archives race "
                           "(corrupt-archive or checksum errors)")
            else:
                message = (f"{name}(..., download={source(value)}): one rank downloads while the others build "
                           "the same dataset at the same moment with download=False and, on a fresh machine, "
                           "raise 'Dataset not found' (a barrier after the call comes too late)")
            # the datasets one function downloads (train and test) are one race, said once at the first
            yield Hit(call, message=message, also=(value.lineno,) if value.lineno != call.lineno else (),
                      cause=id(file.function(call) or file.tree))

    @staticmethod
    def _kind(file: FileModel, value: ast.expr) -> str:
        """"all" (download=True), "one" (download on one rank, by a rank test), "" (neither)."""
        values: list[object] = [value]
        if type(value) is ast.Name:
            bindings = file.lookup(value)
            if not bindings:
                return ""
            values = [getattr(b, "value", None) for b in bindings]
            if any(not isinstance(v, ast.expr) or getattr(b, "kind", "") != "value" for v, b in zip(values, bindings)):
                return ""
        if all(type(v) is ast.Constant and v.value is True for v in values):
            return "all"
        if all(isinstance(v, ast.expr) and file.is_rank_test(v) for v in values):
            return "one"
        return ""

    @staticmethod
    def _under_main_guard_of_spawner(file: FileModel, call: ast.Call) -> bool:
        """At the module's top under `if __name__ == "__main__":` of a script that spawns its ranks: the
        parent, once."""
        return file.function(call) is None and file.under_main_guard(call) and any(
            file.is_spawn(c) for c in file.calls)

    @staticmethod
    def _prepare_data_hook(file: FileModel, call: ast.Call) -> bool:
        """In a class's `prepare_data` method: Lightning's hook, which it runs on one process per node
        (not a module-level function of that name the main block calls: lint heldout25 u048)."""
        func = file.function(call)
        return isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) and func.name == "prepare_data" \
            and type(file.parent.get(func)) is ast.ClassDef

    @staticmethod
    def _goes_first(file: FileModel, call: ast.Call) -> bool:
        """Inside a `with` that lets one process go first, or after a barrier the other ranks meet first
        (`if rank != 0: dist.barrier()`) in the same function."""
        for above in file.ancestors(call):
            if type(above) in (ast.With, ast.AsyncWith) and any(
                    GOES_FIRST.search(terminal_name(item.context_expr)) for item in above.items):  # type: ignore[attr-defined]
                return True
        func = file.function(call)
        for other in file.calls:
            if terminal_name(other.func) == "barrier" and file.function(other) is func \
                    and other.lineno < call.lineno and any(file.is_rank_test(t) for t in file.conditions(other)):
                return True
        return False

    @staticmethod
    def _downloads(file: FileModel, call: ast.Call) -> bool:
        """A dataset class known to fetch its files when told to download."""
        qn = file.call_name(call)
        if qn is not None and "." in qn:
            return qn.startswith(DOWNLOADERS)
        return terminal_name(call.func) in KNOWN or _downloading_subclass(file, call)


def _downloading_subclass(file: FileModel, call: ast.Call) -> bool:
    """`call` builds a dataset class of this file derived from a downloading one (`class
    CustomCIFAR10(datasets.CIFAR10):`, lint heldout30b u028: a MoCo trainer's two-view CIFAR10) that hands
    its keywords to that base: no `__init__` of its own, or one whose `super().__init__(...)` passes
    `**kwargs` or `download=` on; and no `download` method of its own (which may fetch nothing)."""
    if type(call.func) is not ast.Name:
        return False
    classes = [d for d in file.find_def(call.func) if type(d) is ast.ClassDef]
    if len(classes) != 1:
        return False
    (cls,) = classes
    if not any((file.qualname(base) or "").startswith(DOWNLOADERS) or
               ((file.qualname(base) is None or "." not in (file.qualname(base) or "")) and terminal_name(base) in KNOWN)
               for base in cls.bases):
        return False
    methods = {stmt.name: stmt for stmt in cls.body if isinstance(stmt, DEFS)}
    if "download" in methods:
        return False
    init = methods.get("__init__")
    if init is None:
        return True
    return any(type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr == "__init__"
               and any(kw.arg is None or kw.arg == "download" for kw in node.keywords) for node in ast.walk(init))
