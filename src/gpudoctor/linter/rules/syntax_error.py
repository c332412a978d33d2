from __future__ import annotations

from collections.abc import Iterator

from gpudoctor.linter.model import FileModel
from gpudoctor.linter.rule import ERROR, Hit, Rule


class SyntaxErrorRule(Rule):
    """The file is not valid Python: Python would refuse to run it.

    Reported by the linter itself (with Python's own message and position)
    rather than by a check; linting goes on with the other files.

    A snippet pasted into a question (cut off mid-statement, in markdown
    fences, with `>>>` prompts or line numbers, taken from inside a function)
    is repaired in a few bounded steps so that the other rules can read the
    rest: this diagnostic then lists what was repaired, and each of theirs
    ends with `(read after repairing lines ... of a snippet that is not valid
    Python)` and is at most a warning. The syntax error itself stays an error:
    whatever the rules read, the file as written does not run. A file that
    cannot be repaired within the bounds gets this diagnostic only. See
    `docs/commands/lint.md`, "Snippets that are not valid Python".
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
