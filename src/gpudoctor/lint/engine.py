"""Run the rules over files: find the files, read and parse each, run the
rules whose text test matches, drop suppressed diagnostics. Spreads large
runs over processes. Raises only for bad input (a missing path, an unknown
rule id); a bad file is a diagnostic."""

from __future__ import annotations

import ast
import multiprocessing
import os
import re
import sys
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gpudoctor.lint.model import FileModel
from gpudoctor.lint.rule import Diagnostic, Hit, Rule
from gpudoctor.lint.rules import ALL, BY_ID, CHECKS
from gpudoctor.lint.source import ALL_RULES, decode, suppressions

LINE_BREAK = re.compile(r"\r\n|\r|\n")
SKIPPED_DIRS = {"__pycache__", "site-packages", "node_modules", "venv"}
# Syntax is judged by the interpreter running the linter.
PYTHON = f"Python {sys.version_info.major}.{sys.version_info.minor}"
# Tests and the corpus benchmark set this to see rule failures instead of silence.
RAISE_RULE_ERRORS = False
# Below this many files one process is faster than starting a pool.
PARALLEL_FROM = 64


class UnknownRule(ValueError):
    pass


class MissingPath(ValueError):
    pass


@dataclass(frozen=True)
class LintResult:
    diagnostics: tuple[Diagnostic, ...]
    files: int

    @property
    def ok(self) -> bool:
        return not self.diagnostics


def choose_rules(select: Iterable[str] = (), ignore: Iterable[str] = ()) -> tuple[Rule, ...]:
    """The rules to run. With no `select`, all of them. File problems
    (syntax-error, unreadable-file) are always reported unless ignored: a
    file that cannot be read was not checked."""
    select, ignore = list(select), list(ignore)
    for rule_id in select + ignore:
        if rule_id not in BY_ID:
            raise UnknownRule(rule_id)
    chosen = [BY_ID[i] for i in select] if select else list(CHECKS)
    chosen += [r for r in ALL if r not in CHECKS and r not in chosen]
    return tuple(r for r in chosen if r.id not in ignore)


def python_files(paths: Sequence[str]) -> list[str]:
    """Files named, plus the `*.py` files under directories named (not in
    hidden folders, virtualenvs, `__pycache__` or `site-packages`)."""
    for path in paths:
        if not os.path.exists(path):
            raise MissingPath(path)
    found: list[str] = []
    for path in paths:
        if not os.path.isdir(path):
            found.append(path)
            continue
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(
                d for d in dirs
                if not d.startswith(".") and d not in SKIPPED_DIRS
                and not os.path.exists(os.path.join(root, d, "pyvenv.cfg"))
            )
            found += [os.path.join(root, f) for f in sorted(files) if f.endswith(".py")]
    return list(dict.fromkeys(found))


def lint_source(data: bytes | str, path: str, rules: Sequence[Rule] = ALL) -> list[Diagnostic]:
    """Diagnostics for one file's contents."""
    ids = {r.id for r in rules}
    if isinstance(data, bytes):
        decoded = decode(data)
        if decoded.text is None:
            if "unreadable-file" not in ids:
                return []
            return [_file_problem(path, decoded.line, 1, "unreadable-file", decoded.problem)]
        text = decoded.text
    else:
        text = data
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences etc. are not ours to print
            tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        if "syntax-error" not in ids:
            return []
        return [_file_problem(path, exc.lineno or 1, exc.offset or 1, "syntax-error", f"not valid {PYTHON}: {exc.msg}")]
    except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, absurd nesting
        if "syntax-error" not in ids:
            return []
        return [_file_problem(path, 1, 1, "syntax-error", f"not valid {PYTHON}: {exc}")]
    relevant = [r for r in rules if r.relevant(text) and r.id not in ("syntax-error", "unreadable-file")]
    if not relevant:
        return []
    model = FileModel(tree, text)
    hits: list[tuple[Rule, Hit]] = []
    for rule in relevant:
        try:
            hits += [(rule, hit) for hit in rule.check(model)]
        except Exception:  # one odd file must not stop the whole run
            if RAISE_RULE_ERRORS:
                raise
            continue  # this rule cannot follow this file: say nothing rather than guess
    if not hits:
        return []
    lines = LINE_BREAK.split(text)  # as ast counts lines (not str.splitlines, which splits on \f too)
    out = [_diagnostic(path, rule, hit, lines) for rule, hit in hits]
    suppressed = suppressions(text)
    out = [d for d in out if not ({d.rule, ALL_RULES} & suppressed.get(d.line, frozenset()))]
    return sorted(set(out), key=lambda d: (d.line, d.col, d.rule))


def _file_problem(path: str, line: int, col: int, rule_id: str, message: str) -> Diagnostic:
    return Diagnostic(path, line, col, rule_id, message, BY_ID[rule_id].fix)


def _diagnostic(path: str, rule: Rule, hit: Hit, lines: list[str]) -> Diagnostic:
    if hit.node is not None:
        line, col = hit.node.lineno, hit.node.col_offset
        # ast counts columns in UTF-8 bytes; people count characters.
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        if not text.isascii():
            col = len(text.encode("utf-8")[:col].decode("utf-8", "ignore"))
    else:
        line, col = hit.line, hit.col
    return Diagnostic(path, line, col + 1, rule.id, hit.message or rule.message, hit.fix or rule.fix)


def lint_file(path: str, rules: Sequence[Rule] = ALL) -> list[Diagnostic]:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        if "unreadable-file" not in {r.id for r in rules}:
            return []
        return [_file_problem(path, 1, 1, "unreadable-file", f"cannot read: {exc.strerror or exc}")]
    return lint_source(data, path, rules)


def _lint_ids(args: tuple[str, tuple[str, ...]]) -> list[Diagnostic]:
    path, ids = args
    return lint_file(path, [BY_ID[i] for i in ids])


def lint_files(files: Sequence[str], rules: Sequence[Rule] = ALL, jobs: int | None = None) -> LintResult:
    """Lint `files`; `jobs` processes (default: one per CPU for large runs)."""
    if jobs is None:
        jobs = (os.cpu_count() or 1) if len(files) >= PARALLEL_FROM else 1
    diagnostics: list[Diagnostic] = []
    if jobs <= 1 or len(files) < 2:
        for path in files:
            diagnostics += lint_file(path, rules)
    else:
        ids = tuple(r.id for r in rules)
        # fork is cheap and safe here (no threads); elsewhere the platform default.
        context = multiprocessing.get_context("fork" if sys.platform == "linux" else None)
        chunk = max(1, min(32, len(files) // (jobs * 8)))
        with context.Pool(jobs) as pool:
            for found in pool.imap(_lint_ids, [(p, ids) for p in files], chunksize=chunk):
                diagnostics += found
    return LintResult(tuple(diagnostics), len(files))


def lint_paths(
    paths: Sequence[str], select: Iterable[str] = (), ignore: Iterable[str] = (), jobs: int | None = None
) -> LintResult:
    """The whole command: validate, find files, lint them."""
    rules = choose_rules(select, ignore)
    return lint_files(python_files(paths), rules, jobs)
