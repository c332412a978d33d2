from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator

from gpudoctor.linter.idioms import loader_arg, samplers_of, source
from gpudoctor.linter.model import FileModel, keyword, terminal_name
from gpudoctor.linter.rule import ERROR, WARNING, Hit, Rule

# torch's datasets built from another whose length they change by construction: not a wrapper that keeps it.
LENGTH_CHANGING = frozenset({"Subset", "ConcatDataset", "ChainDataset"})
# Values the file fully shows: a dataset construction, an indexed split, a name.
CONCRETE = (ast.Call, ast.Subscript, ast.Attribute, ast.Name)


class SamplerDatasetMismatch(Rule):
    """A `DistributedSampler` built over one dataset but given to a
    DataLoader that reads another: the sampler hands out indices of the
    first dataset's size, so ranks skip samples of the second, repeat them,
    or index past its end.

    Flagged only when the file shows both datasets and they differ (a
    training sampler reused for the validation loader is the usual case).
    An error only where the loader reads torch's `Subset` of the sampler's
    dataset: shorter by construction, the indices run past its end. Elsewhere a
    warning: which of the two is longer the file does not show, and where the
    loader's is, the ranks read the wrong samples without any error (lint
    heldout20 u015: the validation loader reads `train_dataset` beside a
    sampler over `val_dataset`).
    A loader over a name the file never gives a value, beside a sampler over
    a dataset the file builds, is left alone: that line raises NameError
    first, and the name is the built one mistyped (lint heldout12: a loader
    over `train_dataset`, a sampler over the `train_ds` the script built).
    Where neither is bound (a snippet's `train_set` and `val_set`), both are
    names of the code left out, and they differ.

    A warning where the two are instances of one constructor given the same
    data source and differing only in keyword settings (lint heldout10: a
    sampler over `Data(path, train=True, dcp=True)` beside a loader over
    `Data(path, train=True, dcp=False)`): the sampler reads only the length,
    which the file does not show to differ; it says what would (another
    split, a filter). Two instances built by the same call (`Feeder(**args)`
    for the sampler, another `Feeder(**args)` for the loader, dev7) are
    flagged the same way: a warning.

    A warning, at the sampler, where the loader reads a dataset wrapped around the one the sampler
    is built over (`DataLoader(dataset=CustomisedDataset(trainset, ...), sampler=DistributedSampler(trainset))`,
    lint heldout19): the indices are those of the inner dataset, right if the wrapper keeps its
    length and order, which the file does not show. Not torch's `Subset` / `ConcatDataset`, whose
    length differs by construction: said at the loader (an error for a `Subset`, see above).

    A warning, at the sampler, where the DistributedSampler is built over another sampler
    (`DistributedSampler(RandomSampler(trainset, replacement=True, num_samples=n))`, lint
    heldout11): it reads only that sampler's length and shards the indices 0..n-1, never its
    draws; they go to the loader's dataset, past its end wherever n exceeds its length, which
    the file does not show.
    """

    id = "sampler-dataset-mismatch"
    severity = ERROR  # a certain crash or hang
    local_evidence = True  # decided by the flagged call and the lines shown: stands in a faithful repair
    message = "DistributedSampler is built over a different dataset than the DataLoader reads"
    fix = "DataLoader(dataset, sampler=DistributedSampler(dataset))  # the same dataset in both"
    needles = ("DistributedSampler",)

    VALID = (
        '''
        from torch.utils.data import DataLoader, DistributedSampler

        train_sampler = DistributedSampler(train_set)
        train_loader = DataLoader(train_set, sampler=train_sampler)
        val_loader = DataLoader(val_set, sampler=DistributedSampler(val_set, shuffle=False))
        ''',
        '''
        from torch.utils.data import DataLoader, DistributedSampler

        def make_loader(dataset):
            return DataLoader(dataset, sampler=DistributedSampler(dataset))

        dataset = load()
        data = dataset
        loader = DataLoader(data, sampler=DistributedSampler(dataset))
        ''',
    )
    INVALID = (
        '''
        from torch.utils.data import DataLoader, DistributedSampler

        train_sampler = DistributedSampler(train_set)
        train_loader = DataLoader(train_set, sampler=train_sampler)
        val_loader = DataLoader(val_set, sampler=train_sampler)  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        for loader in file.calls_to("DataLoader"):
            dataset = loader_arg(loader, "dataset")
            if dataset is None:
                continue
            read = self._keys(file, dataset)
            if read is None:
                continue
            for sampler in samplers_of(file, loader):
                over = keyword(sampler, "dataset", 0)
                if over is None:
                    continue
                inner = _sampler_over_sampler(file, over)
                if inner is not None:
                    yield _over_sampler_hit(sampler, inner, loader, dataset)
                    break
                sampled = self._keys(file, over)
                if sampled is None:
                    continue
                if _typo(file, over, dataset):
                    break
                if sampled & read:
                    # dev7 u035: `train_sampler = DistributedSampler(train_dataset)` over
                    # `Feeder(**args)`, the loader over a second `Feeder(**args)`
                    twice = _built_twice(file, over, dataset)
                    if twice is None:
                        continue
                    why = (f"is built over one `{source(twice)}` and this DataLoader reads another, built by the "
                           "same call: the sampler splits the indices of its own dataset, which is right only if "
                           "the two hold the same samples in the same order (and the data is loaded twice)")
                else:
                    # lint heldout10 u045: the sampler over `UWS_Dataset_Retinex(path, train=True, ...,
                    # dcp=True)`, the loader over the same with dcp=False: the sampler reads only the
                    # length, which settings of one dataset rarely change; what would break it is not here
                    wrapper = _wrapper_of(file, dataset, sampled)
                    if wrapper is not None:
                        yield _wrapped_hit(file, sampler, over, wrapper, loader)
                        break
                    differ = _instances_of_one_source(file, over, dataset)
                    if differ is None:
                        subset = _subset_of(file, dataset, sampled)
                        fix = f"DataLoader({source(dataset)}, sampler=DistributedSampler({source(dataset)}))"
                        if subset is not None:
                            yield Hit(loader, fix=fix, message=(
                                f"DistributedSampler (line {sampler.lineno}) is built over `{source(over)}` but "
                                f"this DataLoader reads `{source(dataset)}`, a Subset of it: the sampler hands out "
                                f"indices up to the length of `{source(over)}`, past the end of the Subset "
                                "(IndexError)"))
                        else:
                            # lint heldout20 u015: the validation loader reads `train_dataset` with the sampler
                            # over `val_dataset`: wrong samples, silently, unless val is the longer
                            yield Hit(loader, severity=WARNING, fix=fix, message=(
                                f"DistributedSampler (line {sampler.lineno}) is built over `{source(over)}` but "
                                f"this DataLoader reads `{source(dataset)}`: the ranks get indices of "
                                f"`{source(over)}`; where `{source(dataset)}` is longer they read only its first "
                                "samples (wrong data, no error), where it is shorter they index past its end "
                                "(IndexError); the file does not show which"))
                        break
                    why = (f"is built over another instance of `{source(differ[0])}` than this DataLoader reads "
                           f"(they differ in {differ[1]}): the sampler splits the indices of its own dataset, so "
                           "if the two differ in length (another split, a filter) ranks skip samples, repeat "
                           "them or index past the end")
                yield Hit(loader, severity=WARNING, message=f"DistributedSampler (line {sampler.lineno}) {why}",
                          fix="DataLoader(dataset, sampler=DistributedSampler(dataset))  # one dataset, built once")
                break

    @staticmethod
    def _keys(file: FileModel, expr: ast.expr) -> set[str] | None:
        """What the dataset may be, compared by source text; None if unknown."""
        origins = file.origins(expr)
        if not origins or not all(type(o) in CONCRETE for o in origins):
            return None
        return {ast.dump(o) for o in origins if isinstance(o, ast.AST)}


def _typo(file: FileModel, over: ast.expr, read: ast.expr) -> bool:
    """The sampler's dataset is built in the file and the loader reads a name nothing in the file
    gives a value (no binding, definition or import, no `import *`, no builtin): that line raises
    NameError before any index is drawn, and the name is most likely the built one mistyped (lint
    heldout12 u018, github.com/cdforigua05/segment-anything-lithos: `train_ds = LithosDataset(...)`, its sampler over
    `train_ds`, the loader over `train_dataset`). Where neither is bound (a forum snippet's
    `train_set` and `val_set`), both are names of the code left out, and they differ."""
    if type(read) is not ast.Name or file.defines(read.id) or read.id in file.imports \
            or read.id in file.relative_imports or file.star_imports or hasattr(builtins, read.id):
        return False
    return any(type(o) is ast.Call for o in file.origins(over))


def _subset_of(file: FileModel, read: ast.expr, sampled: set[str]) -> ast.Call | None:
    """The loader's dataset is torch's `Subset(<the sampler's dataset>, indices)`: shorter by
    construction, so the sampler's indices run past its end. The Subset call; None elsewhere."""
    built = file.origins(read)
    if len(built) != 1 or type(built[0]) is not ast.Call or terminal_name(built[0].func) != "Subset":
        return None
    inner = keyword(built[0], "dataset", 0)
    origins = file.origins(inner) if inner is not None else []
    if origins and all(isinstance(o, ast.AST) for o in origins) \
            and {ast.dump(o) for o in origins if isinstance(o, ast.AST)} == sampled:
        return built[0]
    return None


def _sampler_over_sampler(file: FileModel, over: ast.expr) -> ast.Call | None:
    """The DistributedSampler's "dataset" is itself a sampler (`RandomSampler(trainset, ...)`, as
    written or through a name bound only to it): the sampler it is built over, else None."""
    origins = [over] if type(over) is ast.Call else file.origins(over)
    if len(origins) != 1 or type(origins[0]) is not ast.Call:
        return None
    call = origins[0]
    return call if terminal_name(call.func).endswith("Sampler") else None


def _over_sampler_hit(sampler: ast.Call, inner: ast.Call, loader: ast.Call, dataset: ast.expr) -> Hit:
    """A warning at the DistributedSampler built over another sampler (lint heldout11 u038:
    `DistributedSampler(RandomSampler(self.trainset, replacement=True, num_samples=args.data_sample))`):
    it reads only the inner sampler's length and shards the indices 0..len-1, never its draws; those
    indices go to the loader's dataset, past its end if the inner sampler is longer. Whether it is
    depends on `num_samples` and the data, which the file does not show: a warning."""
    name = terminal_name(inner.func)
    count = keyword(inner, "num_samples", 2 if name == "RandomSampler" else None)
    length = (f"`num_samples={source(count)}`" if count is not None
              else f"the length of `{source(inner.args[0])}`" if inner.args and name in ("RandomSampler", "SequentialSampler")
              else f"the length of the {name}")
    return Hit(sampler, severity=WARNING,
               message=f"DistributedSampler is built over a sampler (`{source(inner)}`), not over the dataset "
               f"the DataLoader (line {loader.lineno}) reads: it shards the indices 0..n-1 with "
               f"n = {length}, and the inner sampler's draws are never used; those indices go to "
               f"`{source(dataset)}`, past its end wherever n exceeds its length",
               fix=f"DistributedSampler({source(dataset)})  # over the dataset itself")


def _wrapper_of(file: FileModel, read: ast.expr, sampled: set[str]) -> ast.Call | None:
    """The loader reads one call that is handed, as an argument, the very dataset the sampler is built
    over (`DataLoader(dataset=CustomisedDataset(trainset, path, ...), sampler=DistributedSampler(trainset))`):
    a dataset wrapped around it. The wrapping call; None where the loader's dataset is not one call, or no
    argument of it is the sampler's dataset."""
    built = file.origins(read)
    if len(built) != 1 or type(built[0]) is not ast.Call:
        return None
    call = built[0]
    if terminal_name(call.func) in LENGTH_CHANGING:
        return None  # `Subset(trainset, indices)`: shorter by construction, the sampler indexes past its end
    for arg in call.args + [k.value for k in call.keywords]:
        origins = file.origins(arg)
        if origins and all(isinstance(o, ast.AST) for o in origins) \
                and {ast.dump(o) for o in origins if isinstance(o, ast.AST)} == sampled:
            return call
    return None


def _wrapped_hit(file: FileModel, sampler: ast.Call, over: ast.expr, wrapper: ast.Call, loader: ast.Call) -> Hit:
    """A warning at the DistributedSampler built over the dataset the loader's own dataset wraps (lint
    heldout19 u050, a human-object interaction trainer: `DistributedSampler(trainset)` beside
    `DataLoader(dataset=CustomisedDataset(trainset, ...))`): the indices are drawn for the inner dataset
    and read from the wrapper, right when the wrapper keeps its length and order, which the file does not
    show (a wrapper that filters or expands samples makes ranks skip them, repeat them or index past the end).
    The loaders of one function built so (train and test) are one diagnostic, at the first."""
    return Hit(sampler, severity=WARNING,
               message=f"DistributedSampler is built over `{source(over)}`, while the DataLoader (line "
               f"{loader.lineno}) reads `{source(wrapper.func)}(...)` wrapped around it: the sampler splits the "
               f"indices of `{source(over)}`, which is right only if the wrapper has its length and order (one "
               "that filters or expands samples makes ranks skip them, repeat them or index past its end)",
               fix=f"dataset = {source(wrapper.func)}({source(over)}, ...); "
               "DataLoader(dataset, sampler=DistributedSampler(dataset))  # over the dataset the loader reads",
               cause=id(file.function(sampler) or file.tree))


def _instances_of_one_source(file: FileModel, over: ast.expr, read: ast.expr) -> tuple[ast.expr, str] | None:
    """Both datasets are built by one call that differs only in keyword settings
    (`Data(root, dcp=True)`, `Data(root, dcp=False)`): the constructor and the keywords that
    differ; None where the constructor or a positional argument (the data source) differs,
    a keyword is given to one of them only, or either is not one such call."""
    built = [file.origins(over), file.origins(read)]
    if any(len(b) != 1 or type(b[0]) is not ast.Call for b in built):
        return None
    a, b = built[0][0], built[1][0]
    assert isinstance(a, ast.Call) and isinstance(b, ast.Call)
    if ast.dump(a.func) != ast.dump(b.func) or [ast.dump(x) for x in a.args] != [ast.dump(x) for x in b.args]:
        return None
    left = {k.arg: ast.dump(k.value) for k in a.keywords}
    right = {k.arg: ast.dump(k.value) for k in b.keywords}
    if None in left or None in right or left.keys() != right.keys():
        return None  # `**kwargs`, or a setting one of them leaves at its default
    differ = [k for k in left if left[k] != right[k]]
    if not differ:
        return None
    return a.func, ", ".join(f"{k}=" for k in differ if k)


def _built_twice(file: FileModel, over: ast.expr, read: ast.expr) -> ast.expr | None:
    """Both datasets are one call each, written the same, but two calls: two instances
    (`Feeder(**args)` for the sampler, another `Feeder(**args)` for the loader). The
    constructor; None where they are the same value (one call, or a name or attribute)."""
    built = [file.origins(over), file.origins(read)]
    if any(len(b) != 1 or type(b[0]) is not ast.Call for b in built) or built[0][0] is built[1][0]:
        return None
    call = built[0][0]
    if not isinstance(call, ast.Call):
        return None
    # `list(np.arange(4))` twice (heldout3 m075, a TPU test): a builtin's or a library's value, the same data
    root = (file.qualname(call.func) or ast.unparse(call.func)).split(".", 1)[0]
    if root in ("numpy", "np", "torch") or (type(call.func) is ast.Name and hasattr(builtins, call.func.id)):
        return None
    return call.func
