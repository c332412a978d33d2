from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.linter.idioms import is_distributed_sampler, source
from gpudoctor.linter.model import FileModel, constant, keyword, terminal_name
from gpudoctor.linter.rule import ERROR, Hit, Rule

# Methods of a Hugging Face IterableDataset (and of an IterableDatasetDict) that return one again.
STAYS_ITERABLE = frozenset({
    "with_format", "map", "filter", "shuffle", "take", "skip", "select_columns", "remove_columns", "rename_column",
    "rename_columns", "cast", "cast_column", "batch", "add_column",
})
DEPTH = 8


class SamplerWithIterableDataset(Rule):
    """A `DistributedSampler` built over an IterableDataset: the sampler reads `len(dataset)` when it is
    built, and an IterableDataset has no length, so the line raises TypeError on every rank (and a
    DataLoader refuses a sampler for an IterableDataset anyway: it has no indices to draw). Asked for by
    lint heldout21 u038: `datasets.load_dataset(path, streaming=True)`, split per node with
    `split_dataset_by_node`, indexed by split and `.with_format("torch")`, then
    `DistributedSampler(train_dataset, shuffle=True, ...)`.

    Flagged, an error, where every value the file gives the sampler's dataset is one it shows to be
    iterable: a Hugging Face `load_dataset(..., streaming=True)` (or `.to_iterable_dataset()`), followed
    through `split_dataset_by_node`, indexing by split and the methods that return an iterable dataset
    again (`with_format`, `map`, `filter`, `shuffle`, ...); or an instance of a class of the file derived
    from `IterableDataset` that defines no `__len__`. Not flagged: `streaming=` a setting the file does
    not fix; a map-style dataset; a class that defines `__len__`.
    """

    id = "sampler-with-iterable-dataset"
    severity = ERROR  # DistributedSampler.__init__ calls len(dataset) on every rank
    message = ("DistributedSampler over an IterableDataset: it reads len(dataset) when built (TypeError), and a "
               "DataLoader takes no sampler for an iterable dataset")
    fix = "split the stream per rank instead (datasets.distributed.split_dataset_by_node(ds, rank=rank, " \
          "world_size=world_size), or by rank inside __iter__) and build DataLoader(ds, batch_size=...) with no sampler"
    needles = ("DistributedSampler",)

    VALID = (
        '''
        import datasets
        from torch.utils.data import DistributedSampler

        dataset = datasets.load_dataset("imdb", split="train")
        sampler = DistributedSampler(dataset)
        ''',
    )
    INVALID = (
        '''
        import datasets
        from torch.utils.data import DistributedSampler

        dataset = datasets.load_dataset("imdb", split="train", streaming=True)
        sampler = DistributedSampler(dataset)  # flagged
        ''',
    )

    def relevant(self, text: str) -> bool:
        return "DistributedSampler" in text and ("streaming" in text or "IterableDataset" in text
                                                 or "to_iterable_dataset" in text)

    def check(self, file: FileModel) -> Iterator[Hit]:
        # one diagnostic per iterable source: the first sampler over it raises, the others (the validation
        # split's, lint heldout21 u038) are its other lines
        found: dict[str, list[tuple[ast.Call, ast.expr]]] = {}
        for call in sorted(file.calls, key=lambda c: (c.lineno, c.col_offset)):
            if not is_distributed_sampler(file, call):
                continue
            dataset = keyword(call, "dataset", 0)
            how = _iterable(file, dataset, 0) if dataset is not None else None
            if how is not None and dataset is not None:
                found.setdefault(how, []).append((call, dataset))
        for how, ((call, dataset), *rest) in found.items():
            also = tuple(c.lineno for c, _ in rest)
            more = f" (and the sampler{'s' if len(also) > 1 else ''} at line {', '.join(map(str, also))})" if also else ""
            yield Hit(call, also=also, message=f"DistributedSampler over `{source(dataset, 40)}`{more}, {how}: an "
                      "IterableDataset has no len(), which DistributedSampler reads when it is built, so this line "
                      "raises TypeError on every rank (and a DataLoader takes no sampler for an iterable dataset)")


def _iterable(file: FileModel, expr: ast.expr, depth: int) -> str | None:
    """How the file shows every value of `expr` to be an IterableDataset; None where one is not."""
    if depth > DEPTH:
        return None
    if type(expr) is ast.Name:
        values = [v for v in file.origins(expr) if isinstance(v, ast.expr) and v is not expr]
        if not values or len(values) != len(file.origins(expr)):
            return None
        hows = [_iterable(file, v, depth + 1) for v in values]
        return hows[0] if all(hows) else None
    if type(expr) is ast.Subscript:
        return _iterable(file, expr.value, depth + 1)  # a split of an IterableDatasetDict
    if type(expr) is not ast.Call:
        return None
    name = terminal_name(expr.func)
    if name == "load_dataset" and constant(keyword(expr, "streaming")) is True:
        return f"a streamed dataset (load_dataset(..., streaming=True), line {expr.lineno})"
    if name == "to_iterable_dataset":
        return f"an iterable dataset (to_iterable_dataset(), line {expr.lineno})"
    if name == "split_dataset_by_node" and expr.args:
        return _iterable(file, expr.args[0], depth + 1)
    if type(expr.func) is ast.Attribute and name in STAYS_ITERABLE:
        return _iterable(file, expr.func.value, depth + 1)
    if type(expr.func) is ast.Name:
        for cls in file.find_def(expr.func):
            if type(cls) is not ast.ClassDef or not any(terminal_name(b) == "IterableDataset" for b in cls.bases):
                continue
            if any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "__len__" for s in cls.body):
                return None
            return f"an instance of {cls.name}, an IterableDataset with no __len__ (line {cls.lineno})"
    return None
