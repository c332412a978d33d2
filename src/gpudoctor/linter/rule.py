"""A lint rule carries its identity, its documentation and its examples.

Each rule is one module under `gpudoctor.linter.rules`: a `Rule` subclass whose
docstring is its documentation (first paragraph: what goes wrong and why),
with a default `message` and `fix`, and `VALID` / `INVALID` example programs
that one parametrised test runs for every rule. In an INVALID example every
line the rule must flag ends with the comment `# flagged`.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Hashable, Iterator
from dataclasses import dataclass
from typing import ClassVar

from gpudoctor.linter.model import FileModel
from gpudoctor.linter.project import Query

FLAGGED = "# flagged"
# Severities, as linters users know them: an error is a certain hang or
# crash (it fails the run by default); a warning is a risk or a heuristic.
ERROR = "error"
WARNING = "warning"
SEVERITIES = (ERROR, WARNING)


@dataclass(frozen=True)
class Diagnostic:
    """One problem at one place in one file. `line` and `col` are 1-based."""

    path: str
    line: int
    col: int
    rule: str
    message: str
    fix: str
    severity: str = ERROR
    # In a notebook: the code cell (1-based, counting code cells only) and
    # `line` is the line within it; 0 in a .py file.
    cell: int = 0
    # In a notebook: the line and column in the .ipynb file itself (where SARIF and
    # GitHub annotations point); 0 in a .py file, or when the file's layout was not followed.
    file_line: int = 0
    file_col: int = 0
    # The other lines where the same cause shows (the same folder made, the same wrapper saved, in
    # several places): one diagnostic per cause, at the first, naming these; counted like `line`.
    also: tuple[int, ...] = ()

    @property
    def where(self) -> str:
        """`path:line:col`, or `path:cell N:line:col` in a notebook."""
        cell = f"cell {self.cell}:" if self.cell else ""
        return f"{self.path}:{cell}{self.line}:{self.col}"

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "rule": self.rule,
            "severity": self.severity,
            "message": self.message,
            "fix": self.fix,
        }
        if self.cell:
            out["cell"] = self.cell
        if self.file_line:
            out["file_line"], out["file_col"] = self.file_line, self.file_col
        if self.also:
            out["also"] = list(self.also)
        return out


@dataclass(frozen=True)
class Hit:
    """What a rule reports: a node (or a line/col), and optionally a message
    and fix more specific than the rule's defaults."""

    node: ast.AST | None = None
    message: str = ""
    fix: str = ""
    line: int = 0
    col: int = 0  # 0-based, like ast's col_offset
    # "" is the rule's severity; a rule whose evidence decides only some of
    # its cases reports the others at a lower one.
    severity: str = ""
    # Set when the hit depends on the rest of the program: reported only if
    # the project's answer keeps it (see `project.Query`).
    query: Query | None = None
    # What the hit is an instance of, where a rule may find one cause at several places (the
    # folders one function makes on every rank, one wrapper saved at several calls): the engine
    # reports the hits of one rule with the same cause once, at the first, naming the others
    # (`Diagnostic.also`). None: a cause of its own.
    cause: Hashable | None = None
    # Other lines where this cause shows, named in the message (the save a helper makes, reported
    # at the call that runs the helper on every rank): `Diagnostic.also`.
    also: tuple[int, ...] = ()
    # True: this hit's error rests on the lines shown whatever the rule's `local_evidence` (a name
    # misspelt beside its right spelling, which the file binds): it stays an error in an excerpt.
    local: bool = False


class Rule:
    """Base class: subclasses set the class attributes and implement `check`."""

    id: ClassVar[str]
    message: ClassVar[str]
    fix: ClassVar[str]
    # The rule only runs on files containing one of these strings (cheap
    # text test first: most files have nothing for most rules).
    needles: ClassVar[tuple[str, ...]] = ()
    severity: ClassVar[str] = WARNING
    # False: the rule does not run on test files (pytest's `test_*.py`,
    # `*_test.py`, `conftest.py`), where the shape is often built on purpose.
    in_tests: ClassVar[bool] = True
    # True: advice, not a pitfall: what the rule says is true but costs speed, not a correct run
    # (spawn-num-workers). It runs only where it is named (`--select ID`, `select` in the
    # project's config), never in the default run, whose warnings are the distributed pitfalls.
    opt_in: ClassVar[bool] = False
    # True: every error the rule reports is decided by the statement it points at and the
    # names the lines shown bind (what a call is given, what a test around it reads), never
    # by what the file lacks. Such an error stands in a snippet that repair read faithfully
    # (`Repair.faithful`: nothing cut, nothing moved); any other rule's is a warning there.
    local_evidence: ClassVar[bool] = False
    VALID: ClassVar[tuple[str, ...]] = ()
    INVALID: ClassVar[tuple[str, ...]] = ()

    def relevant(self, text: str) -> bool:
        return not self.needles or any(n in text for n in self.needles)

    def deferred(self, text: str) -> bool:
        """The file can matter to this rule only through a function of the
        project that communicates (one it imports): the engine neither
        tests nor runs the rule now, and reads the file again once the
        project is known only if it imports or calls such a function. Most
        files never are. Asked before `relevant`, so it must be cheap."""
        return False

    def check(self, file: FileModel) -> Iterator[Hit]:
        raise NotImplementedError

    @classmethod
    def documentation(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def why(cls) -> str:
        """The docstring's first paragraph, on one line."""
        return " ".join(cls.documentation().split("\n\n", 1)[0].split())
