from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from gpudoctor.linter.model import FileModel, constant
from gpudoctor.linter.rule import Hit, Rule

MODULE = "torch.distributed.launch"
# A launch command written out: `python -m torch.distributed.launch ...`.
COMMAND = re.compile(r"-m\s+torch\.distributed\.launch(?![\w.])")


class DeprecatedLaunch(Rule):
    """`torch.distributed.launch` is deprecated: start the job with `torchrun`.

    The old launcher passes `--local_rank` on every worker's command line and
    cannot restart failed workers. `torchrun` (the same as `python -m
    torch.distributed.run`) sets `LOCAL_RANK`, `RANK` and `WORLD_SIZE` in the
    environment, supports `--standalone` and elastic restarts, and is what
    current PyTorch documents.

    Flagged: code that imports or runs the module, and launch commands
    (`python -m torch.distributed.launch ...`) written in strings or comments,
    because scripts document how they are started (not a docstring inside a
    function or class: it documents that code). A prose mention is not a
    launch command, and a file that also mentions `torchrun` (or
    `torch.distributed.run`) is documenting both launchers: only its imports
    are flagged.
    """

    id = "deprecated-launch"
    in_tests = False  # tests build this shape on purpose
    message = "torch.distributed.launch is deprecated"
    fix = "torchrun --nproc-per-node=NUM_GPUS train.py  # and read LOCAL_RANK from os.environ"
    needles = ("distributed.launch", "import launch")

    VALID = (
        '''
        # Start with: torchrun --nproc-per-node=4 train.py
        import os

        local_rank = int(os.environ["LOCAL_RANK"])
        ''',
        '''
        from torch.distributed.launcher.api import LaunchConfig, elastic_launch
        ''',
        '''
        # This script replaced torch.distributed.launch with the elastic agent.
        ''',
        '''
        import subprocess
        import sys

        module = "torch.distributed.launch" if OLD_TORCH else "torch.distributed.run"
        subprocess.run([sys.executable, "-m", module, "train.py"])
        ''',
        '''
        """Moved from `python -m torch.distributed.launch` to `torchrun`."""
        ''',
    )
    INVALID = (
        '''
        # python -m torch.distributed.launch --nproc_per_node=4 train.py  # flagged
        import torch.distributed as dist
        ''',
        '''
        import subprocess
        import sys

        subprocess.run([sys.executable, "-m", "torch.distributed.launch", "train.py"])  # flagged
        ''',
        '''
        from torch.distributed import launch  # flagged

        launch.main()
        ''',
        '''
        import torch.distributed.launch  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        lines: set[int] = set()
        knows_torchrun = "torchrun" in file.text or "torch.distributed.run" in file.text
        for node in ast.walk(file.tree):
            if isinstance(node, ast.Import):
                if any(a.name == MODULE or a.name.startswith(MODULE + ".") for a in node.names):
                    lines.add(node.lineno)
                    yield Hit(node)
            elif isinstance(node, ast.ImportFrom):
                if node.level == 0 and (
                    node.module == MODULE
                    or (node.module == "torch.distributed" and any(a.name == "launch" for a in node.names))
                ):
                    lines.add(node.lineno)
                    yield Hit(node)
            elif isinstance(node, ast.Constant) and constant(node, str) == MODULE and not knows_torchrun:
                if node.lineno not in lines:  # `["python", "-m", "torch.distributed.launch", ...]`
                    lines.add(node.lineno)
                    yield Hit(node)
        if knows_torchrun:
            return
        text = file.text
        # A docstring inside the code documents that code (a model's note on how its
        # authors trained it), not how this script is started: the module's own
        # docstring and comments do.
        body = file.tree.body
        prose = [(n.lineno, n.end_lineno or n.lineno) for n in ast.walk(file.tree)
                 if type(n) is ast.Expr and type(n.value) is ast.Constant and type(n.value.value) is str
                 and not (body and n is body[0])]
        for match in COMMAND.finditer(text):
            start = match.start() + match.group(0).index("torch")
            line = text.count("\n", 0, start) + 1
            if line in lines:
                continue
            if any(first <= line <= last for first, last in prose):
                continue
            lines.add(line)
            col = start - (text.rfind("\n", 0, start) + 1)
            yield Hit(line=line, col=col)
