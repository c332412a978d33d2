from __future__ import annotations

from collections.abc import Iterator

from gpudoctor.linter.model import FileModel
from gpudoctor.linter.rule import ERROR, Hit, Rule


class SyntaxErrorRule(Rule):
    """The file is not valid Python, so no other rule could look at it.

    Reported by the linter itself (with Python's own message and position)
    rather than by a check; linting goes on with the other files.
    """

    id = "syntax-error"
    severity = ERROR  # a certain crash or hang
    message = "the file is not valid Python"
    fix = "python -m py_compile FILE  # shows the same error"

    VALID = ('''
        def ok():
            return 1
        ''',)
    INVALID = ('''
        def broken(:  # flagged
            return 1
        ''',)

    def check(self, file: FileModel) -> Iterator[Hit]:
        return iter(())  # the engine reports it: there is no tree to check
