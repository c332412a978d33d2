from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.lint.model import FileModel, constant, keyword
from gpudoctor.lint.rule import Hit, Rule

FLAGS = {"--local_rank", "--local-rank"}


class LocalRankArg(Rule):
    """A `--local_rank` command-line argument belongs to the deprecated
    `torch.distributed.launch`; `torchrun` passes the local rank in the
    `LOCAL_RANK` environment variable instead.

    Under `torchrun` the argument is never given, so the script silently uses
    its default (often 0) on every process: all ranks pick the same GPU. An
    argument whose default already reads `LOCAL_RANK` from the environment is
    not flagged.
    """

    id = "local-rank-arg"
    in_tests = False  # tests build this shape on purpose
    message = "argparse defines --local_rank: torchrun passes LOCAL_RANK in the environment"
    fix = 'local_rank = int(os.environ["LOCAL_RANK"])'
    needles = tuple(FLAGS)  # the flag is written as a string literal

    VALID = (
        '''
        import os

        local_rank = int(os.environ["LOCAL_RANK"])
        ''',
        '''
        import argparse
        import os

        parser = argparse.ArgumentParser()
        parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
        ''',
        '''
        import argparse

        parser = argparse.ArgumentParser()
        parser.add_argument("--rank", type=int, default=0)
        ''',
    )
    INVALID = (
        '''
        import argparse

        parser = argparse.ArgumentParser()
        parser.add_argument("--local_rank", type=int, default=0)  # flagged
        args = parser.parse_args()
        ''',
        '''
        import argparse

        parser = argparse.ArgumentParser()
        group = parser.add_argument_group("distributed")
        group.add_argument("--local-rank", "--local_rank", type=int, default=-1)  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        for call in file.calls:
            if type(call.func) is not ast.Attribute or call.func.attr != "add_argument":
                continue
            if not any(constant(a, str) in FLAGS for a in call.args):
                continue
            default = keyword(call, "default")
            if default is not None and any(
                constant(sub, str) == "LOCAL_RANK" for origin in file.origins(default) if isinstance(origin, ast.AST)
                for sub in ast.walk(origin)
            ):
                continue
            yield Hit(call)
