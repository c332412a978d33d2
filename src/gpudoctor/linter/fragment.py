"""Whether a file is a fragment: an excerpt of a longer program, by its own evidence.

Users paste the part of a script they think matters (issue 41: "the snippets they paste"), and
collectors keep the set-up, training and saving functions of a long file; either way the lines
left out may define the names the rest reads, start the process group, set RANK. An error that
rests on what the file does not hold (`Rule.local_evidence` False) is certain only in a whole
file; in a fragment it is a warning that says so (the engine sees to it), and `undefined-name`
leaves unsaid the functions and classes the cut-out part plainly defined.

One fact, `excerpt_evidence`, read through `FileModel.excerpt`: the words that say why the file
reads as an excerpt, or None for a file whole by its own evidence. Only what the text shows counts:

- an elision: a comment that is an ellipsis (`# ...`, `#   ... training ...`) or says code was
  left out (`# rest of the code`, `# helpers omitted for brevity`, `# restated, shortened`: lint
  dev d032 and d036, whose `get_dataset`/`get_next_batch` were shortened away), or a `...` line
  standing among the statements of a body (not a stub's whole body);
- an import that only a definition reads, never read, beside a call of a name of that
  definition's kind that nothing defines: `dataclass` unused and `GPTConfig(...)` defined nowhere
  (lint heldout28 u005, the extract left out the config and model classes), `argparse` unused and
  `parse_args()` defined nowhere (heldout28 u013), `Dataset` unused and
  `UltraFineWebDataset(...)` defined nowhere (heldout27b u023);
- a parser built only from `parents=[get_args_parser()]`, the builder defined nowhere and no argument added
  anywhere in the file (heldout30b u032 and u034, extracts of the DeiT/MAE lineage's main_pretrain.py: every
  option of the script was in the builder left out). A whole file that calls a function
  it forgot to define (`save_model(epoch)`, lint heldout9 u033) keeps its error: nothing pairs it.

A file lint read repaired (cut off, indented) is handled apart (`engine._on_repaired`).
"""

from __future__ import annotations

import ast
import re
from typing import Protocol

from gpudoctor.linter.unbound import unbound


class Source(Protocol):
    """What the reader needs of a file (the linter's FileModel has both): its tree and its text."""

    @property
    def tree(self) -> ast.Module: ...

    @property
    def text(self) -> str: ...

# A comment that is an elision: an ellipsis alone, or words between two (`# ...`, `# ...... tcp init ......`;
# not a banner, `# ....... DEBUG .......`).
ELLIPSIS_COMMENT = re.compile(r"^#\s*(?:\.{3,}|\u2026)(?:[^.\u2026A-Z]{0,40}(?:\.{3,}|\u2026))?\s*$")
# A short comment that says code was left out: the words end it (`# helpers omitted`, `# restated, shortened`,
# `# (code omitted)`), or it says so outright (`# rest of the code`, `# ... for brevity`). Not a sentence that
# says something may be left out (`# so it can be omitted.`, `# is omitted in SD3.5`: the mature-repository control).
LEFT_OUT = re.compile(r"^#[^\n]*?(?:(?<!be )(?<!is )(?<!are )(?<!when )\b(?:omitted|elided|snipped|shortened)[\s).\]]*$"
                      r"|\bfor brevity\b|(?<=^#)\s*(?:\.{3,}\s*)?rest of (?:the )?(?:code|file|script|training)\b|\bnot shown\b)",
                      re.IGNORECASE)
# Words enough for a sentence of prose, not a note of what was cut.
NOTE_WORDS = 9
# ... unless what was shortened is not code (`the path in the file URL shortened`: lint dev3 h057).
NOT_CODE = re.compile(r"\b(?:path|url|name|log|output|traceback|message)s?\b", re.IGNORECASE)

# Imports only a definition reads (a class or a function the file would define), each with the
# test a called name must pass to be a definition of that kind.
DEFINITION_IMPORTS: dict[str, str] = {"dataclass": "class", "dataclasses": "class", "field": "class",
                                      "Dataset": "dataset", "IterableDataset": "dataset",
                                      "argparse": "arguments", "ArgumentParser": "arguments"}


def _kind(name: str) -> set[str]:
    """The kinds of definition a called name may be (`GPTConfig`: a class; `TextDataset`: a class
    and a dataset; `parse_args`: what builds the arguments)."""
    kinds = set()
    if name[:1].isupper() and any(c.islower() for c in name):
        kinds.add("class")
        if name.endswith("Dataset"):
            kinds.add("dataset")
    if "arg" in name.lower() and not kinds:
        kinds.add("arguments")
    return kinds


def excerpt_evidence(file: Source) -> str | None:
    """Why `file` reads as an excerpt of a longer program, or None (see the module's docstring)."""
    return _elision(file) or _definitions_left_out(file) or _parent_parser_left_out(file)


def _parent_parser_left_out(file: Source) -> str | None:
    """An argparse parser built from `parents=[builder()]`, the builder defined nowhere and no argument added
    anywhere in the file (lint heldout30b u032 and u034, extracts of the DeiT/MAE-lineage main_pretrain.py:
    `argparse.ArgumentParser('VisionFM', parents=[get_args_parser()])`, every option of the script in the
    builder the extract left out)."""
    if "parents" not in file.text or ".add_argument(" in file.text:
        return None
    missing = None
    for node in ast.walk(file.tree):
        if type(node) is not ast.Call or getattr(node.func, "attr", getattr(node.func, "id", None)) != "ArgumentParser":
            continue
        parents = next((k.value for k in node.keywords if k.arg == "parents"), None)
        if type(parents) not in (ast.List, ast.Tuple):
            continue
        for item in parents.elts:  # type: ignore[union-attr]
            if type(item) is ast.Call and type(item.func) is ast.Name:
                missing = missing if missing is not None else unbound(file.tree)
                if item.func.id in missing:
                    return (f"its parser is built from `parents=[{item.func.id}()]` (line {item.lineno}), which it never "
                            "defines, and it adds no argument anywhere: the lines that define the options were left out")
    return None


# Cheap first test: a file with none of these holds no elision comment.
ELISION_WORDS = ("...", "\u2026", "omitted", "elided", "snipped", "shortened", "brevity", "rest of", "not shown")


def _elision(file: Source) -> str | None:
    lowered = file.text.lower()
    if not any(word in lowered for word in ELISION_WORDS):
        return _ellipsis_statement(file)
    in_strings = {line for node in ast.walk(file.tree)
                  if type(node) is ast.Constant and isinstance(node.value, str) and node.end_lineno
                  for line in range(node.lineno, node.end_lineno + 1)}
    previous = ""
    for number, raw in enumerate(file.text.split("\n"), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#") and number not in in_strings:
            # an ellipsis line inside a block of comments is part of what they show (an example's rows)
            elided = ELLIPSIS_COMMENT.match(line) is not None and not previous.startswith("#")
            elided = elided or (LEFT_OUT.match(line) is not None and len(line.split()) <= NOTE_WORDS
                                and NOT_CODE.search(line) is None)
            if elided:
                return f"line {number} says lines were left out (`{line[:40]}`)"
        previous = line
    return _ellipsis_statement(file)


def _ellipsis_statement(file: Source) -> str | None:
    """A `...` line standing among the statements of a body (not a stub's whole body)."""
    for node in ast.walk(file.tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list) or type(node) is ast.ClassDef:
            continue
        stmts = [s for s in body if not (type(s) is ast.Expr and type(s.value) is ast.Constant
                                         and isinstance(s.value.value, str))]
        for stmt in stmts:
            if type(stmt) is ast.Expr and type(stmt.value) is ast.Constant and stmt.value.value is Ellipsis \
                    and len(stmts) > 1:
                return f"line {stmt.lineno} is a `...` standing for lines left out"
    return None


def _definitions_left_out(file: Source) -> str | None:
    imported: dict[str, int] = {}
    for node in ast.walk(file.tree):
        if type(node) is ast.Import:
            for alias in node.names:
                imported[(alias.asname or alias.name).split(".", 1)[0]] = node.lineno
        elif type(node) is ast.ImportFrom and node.module != "__future__":
            for alias in node.names:
                imported[alias.asname or alias.name] = node.lineno
    unused = {name: DEFINITION_IMPORTS[name] for name in imported if name in DEFINITION_IMPORTS}
    if not unused:
        return None
    read = {n.id for n in ast.walk(file.tree) if type(n) is ast.Name}
    unused = {name: kind for name, kind in unused.items() if name not in read}
    if not unused:
        return None
    missing = unbound(file.tree)
    called = sorted({n.func.id for n in ast.walk(file.tree)
                     if type(n) is ast.Call and type(n.func) is ast.Name and n.func.id in missing})
    for name in called:
        for imported_name, kind in unused.items():
            if kind in _kind(name):
                return (f"it imports `{imported_name}` (line {imported[imported_name]}) and never uses it, "
                        f"and calls `{name}`, which it never defines: the definition that used the import "
                        "was left out")
    return None
