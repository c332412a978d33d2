from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.linter.idioms import loader_arg, samplers_of, source
from gpudoctor.linter.model import FileModel, keyword
from gpudoctor.linter.rule import ERROR, Hit, Rule

# Values the file fully shows: a dataset construction, an indexed split, a name.
CONCRETE = (ast.Call, ast.Subscript, ast.Attribute, ast.Name)


class SamplerDatasetMismatch(Rule):
    """A `DistributedSampler` built over one dataset but given to a
    DataLoader that reads another: the sampler hands out indices of the
    first dataset's size, so ranks skip samples of the second, repeat them,
    or index past its end.

    Flagged only when the file shows both datasets and they differ (a
    training sampler reused for the validation loader is the usual case).
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
                sampled = self._keys(file, over)
                if sampled is None or sampled & read:
                    continue
                yield Hit(
                    loader,
                    message=f"DistributedSampler (line {sampler.lineno}) is built over `{source(over)}` "
                    f"but this DataLoader reads `{source(dataset)}`",
                    fix=f"DataLoader({source(dataset)}, sampler=DistributedSampler({source(dataset)}))",
                )
                break

    @staticmethod
    def _keys(file: FileModel, expr: ast.expr) -> set[str] | None:
        """What the dataset may be, compared by source text; None if unknown."""
        origins = file.origins(expr)
        if not origins or not all(type(o) in CONCRETE for o in origins):
            return None
        return {ast.dump(o) for o in origins if isinstance(o, ast.AST)}
