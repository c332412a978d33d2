"""Run the rules over files: find the files, read and parse each, run the
rules whose text test matches, drop suppressed diagnostics. Spreads large
runs over processes. Raises only for bad input (a missing path, an unknown
rule id); a bad file is a diagnostic."""

from __future__ import annotations

import ast
import contextlib
import gc
import multiprocessing
import os
import re
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace

from gpudoctor.linter.model import FileModel, import_line, position
from gpudoctor.linter.notebook import MAX_CELLS, NotNotebook, Notebook, cell_line, file_position, read_notebook, without_cell
from gpudoctor.linter.project import ModuleFacts, Project, Query, module_facts
from gpudoctor.linter.rule import ERROR, WARNING, Diagnostic, Hit, Rule
from gpudoctor.linter.rules import ALL, BY_ID, CHECKS
from gpudoctor.linter.repair import Repair, repair
from gpudoctor.linter.source import ALL_RULES, LINE_BREAK, decode, suppressions
from gpudoctor.core.user_file import PARSE_CAP, SOURCE_CAP, FileRefused, cap, read_capped, regular_stat

LINE_REF = re.compile(r"\bline (\d+)\b")
SKIPPED_DIRS = {"__pycache__", "site-packages", "node_modules", "venv", ".ipynb_checkpoints"}
SUFFIXES = (".py", ".ipynb")
# pytest's default test files: `test_*.py`, `*_test.py`, and its `conftest.py`.
TEST_FILE = re.compile(r"^(?:test_.*|.*_test|conftest)\.(?:py|ipynb)$")
# Syntax is judged by the interpreter running the linter.
PYTHON = f"Python {sys.version_info.major}.{sys.version_info.minor}"
# Tests and the corpus benchmark set this to see rule failures instead of silence.
RAISE_RULE_ERRORS = False
# Below this many files one process is faster than starting a pool.
PARALLEL_FROM = 64
# A notebook's cells that do not parse are left out, up to this many.
MAX_SKIPPED_CELLS = 50


class UnknownRule(ValueError):
    pass


class MissingPath(ValueError):
    """A path named on the command line that cannot be linted at all; the message is one line."""


# What to do about a file that was not read, by FileRefused.kind.
NOT_READ_FIX = {
    "denied": "ls -l FILE  # then chmod u+r FILE, or run as the file's owner",
    "loop": "ls -l FILE  # follow the links and point one at a real file",
    "missing": "ls -l FILE  # the link points nowhere: fix or remove it",
    "not-regular": "copy the source into a regular file and lint that",
    "directory": "name the .py files inside it, or the directory itself to lint every *.py under it",
    "too-large": f"export {SOURCE_CAP[0]}=<bytes>  # if the file really is Python to lint",
}


@dataclass(frozen=True)
class LintResult:
    diagnostics: tuple[Diagnostic, ...]
    files: int

    @property
    def ok(self) -> bool:
        return not self.diagnostics

    @property
    def errors(self) -> int:
        return sum(d.severity == ERROR for d in self.diagnostics)

    def failed(self, fail_on: str = "error") -> bool:
        """The run fails: an error, or with fail_on="warning" any diagnostic."""
        if fail_on == "never":
            return False
        return bool(self.errors) if fail_on == "error" else bool(self.diagnostics)


def choose_rules(select: Iterable[str] = (), ignore: Iterable[str] = ()) -> tuple[Rule, ...]:
    """The rules to run. With no `select`, all of them but the opt-in advice
    (`Rule.opt_in`), which runs only where `select` names it. File problems
    (syntax-error, unreadable-file) are always reported unless ignored: a
    file that cannot be read was not checked."""
    select, ignore = list(select), list(ignore)
    for rule_id in select + ignore:
        if rule_id not in BY_ID:
            raise UnknownRule(rule_id)
    chosen = [BY_ID[i] for i in select] if select else [r for r in CHECKS if not r.opt_in]
    chosen += [r for r in ALL if r not in CHECKS and r not in chosen]
    return tuple(r for r in chosen if r.id not in ignore)


def is_test_file(path: str) -> bool:
    """A test file by pytest's conventions: rules that do not fit tests skip it."""
    return bool(TEST_FILE.match(os.path.basename(path)))


def check_paths(paths: Sequence[str]) -> None:
    """MissingPath for the first path named that is not there (or a link to nothing)."""
    for path in paths:
        if not os.path.exists(path):
            if os.path.islink(path):  # a symlink loop or a dangling link is not "no such file"
                try:
                    os.stat(path)
                except OSError as exc:
                    raise MissingPath(_not_linted(path, exc)) from None
            raise MissingPath(f"no such file or directory: {path}")


def python_files(paths: Sequence[str]) -> list[str]:
    """Files named, plus the `*.py` and `*.ipynb` files under directories
    named (not in hidden folders, virtualenvs, `__pycache__` or `site-packages`)."""
    check_paths(paths)
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
            found += [os.path.join(root, f) for f in sorted(files) if f.endswith(SUFFIXES)]
    return list(dict.fromkeys(found))


@dataclass(frozen=True)
class FileResult:
    """One file read: its diagnostics, those that wait on the project's
    answer to a query, and the facts it adds to the project."""

    diagnostics: tuple[Diagnostic, ...]
    pending: tuple[tuple[Diagnostic, Query], ...] = ()
    facts: ModuleFacts | None = None
    deferred: tuple[str, ...] = ()  # rules to run once the project is known (`Rule.deferred`)
    cells: tuple[int, ...] = ()  # a notebook's code cells: where each starts in the joined text
    notebook: Notebook | None = None  # a notebook: where its joined text's lines are in the file


def lint_source(data: bytes | str, path: str, rules: Sequence[Rule] = ALL) -> list[Diagnostic]:
    """Diagnostics for one file's contents, the file being the whole program."""
    result = read_source(data, path, rules, defer=False)  # no project to wait for
    project = Project([result.facts] if result.facts is not None else [])
    return _settle([result], project)


def read_source(
    data: bytes | str, path: str, rules: Sequence[Rule] = ALL, defer: bool = True, known: ModuleFacts | None = None,
    parsed: ast.Module | None = None,
) -> FileResult:
    """Parse one file (once), run the rules on it, and note its facts. With
    `defer`, the rules that ask to wait for the project (`Rule.deferred`)
    are not run but named in the result. `known`: the file's facts, when it
    is read again."""
    if is_test_file(path):
        rules = [r for r in rules if r.in_tests]
    ids = {r.id for r in rules}
    if isinstance(data, bytes):
        decoded = decode(data)
        if decoded.text is None:
            if "unreadable-file" not in ids:
                return FileResult(())
            return FileResult((_file_problem(path, decoded.line, 1, "unreadable-file", decoded.problem),))
        text = decoded.text
    else:
        text = data
    if parsed is None and (too_many := _parse_cost(text)):
        if "unreadable-file" not in ids:
            return FileResult(())
        return FileResult((_file_problem(path, 1, 1, "unreadable-file", f"skipped, not linted: {too_many}"),))
    repaired: Repair | None = None
    said: tuple[Diagnostic, ...] = ()  # the file's own problem, reported with the rules' diagnostics
    try:
        if parsed is not None:  # (a notebook: its cells were parsed to see which are Python)
            tree = parsed
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # invalid escape sequences etc. are not ours to print
                tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        problem = f"not valid {PYTHON}: {exc.msg}"
        # A pasted snippet (cut off, fenced, prompted): the rules read it repaired, if it can be.
        checks = any(r.id not in ("syntax-error", "unreadable-file") for r in rules)
        repaired = repair(text) if checks and not path.endswith(".ipynb") else None
        if repaired is None:
            if "syntax-error" not in ids:
                return FileResult(())
            return FileResult((_file_problem(path, exc.lineno or 1, exc.offset or 1, "syntax-error", problem),))
        tree, text = repaired.tree, repaired.text
        if "syntax-error" in ids:
            problem += f"; the other rules read it repaired: {'; '.join(repaired.steps)}"
            said = (_file_problem(path, exc.lineno or 1, exc.offset or 1, "syntax-error", problem),)
    except MemoryError:  # not the file's fault: say what happened, not "not valid Python: "
        if "unreadable-file" not in ids:
            return FileResult(())
        return FileResult((_file_problem(path, 1, 1, "unreadable-file", "skipped, not linted: out of memory parsing it"),))
    except (ValueError, RecursionError) as exc:  # NUL bytes, absurd nesting
        if "syntax-error" not in ids:
            return FileResult(())
        return FileResult((_file_problem(path, 1, 1, "syntax-error", f"not valid {PYTHON}: {exc}"),))
    # A deferred rule's own test waits too: it runs when the file is read again.
    deferred = tuple(r.id for r in rules if r.deferred(text)) if defer else ()
    relevant = [r for r in rules if r.id not in deferred and r.relevant(text)
                and r.id not in ("syntax-error", "unreadable-file")]
    model = FileModel(tree, text) if relevant else None
    if model is not None:
        model.repaired = repaired is not None
        model.notebook = path.endswith(".ipynb")
        if repaired is not None:
            model.repaired_from = 1 if repaired.indented or not repaired.changed else min(repaired.changed)
    try:
        facts = known if known is not None else module_facts(path, tree, text, model)
    except RecursionError:  # absurd nesting: this file adds nothing to the project
        facts = ModuleFacts(path)
    except Exception:
        if RAISE_RULE_ERRORS:
            raise
        facts = ModuleFacts(path)
    if model is None:
        return FileResult(said, (), facts, deferred)
    hits: list[tuple[Rule, Hit]] = []
    for rule in relevant:
        try:
            hits += [(rule, hit) for hit in rule.check(model)]
        except Exception:  # one odd file must not stop the whole run
            if RAISE_RULE_ERRORS:
                raise
            continue  # this rule cannot follow this file: say nothing rather than guess
    if not hits:
        return FileResult(said, (), facts, deferred)
    lines = LINE_BREAK.split(text)  # as ast counts lines (not str.splitlines, which splits on \f too)
    suppressed = suppressions(text)
    done: set[Diagnostic] = set(said)
    pending: list[tuple[Diagnostic, Query]] = []
    caused: list[tuple[Diagnostic, Hashable]] = []
    for rule, hit in hits:
        d = _diagnostic(path, rule, hit, lines)
        if model.assumed and d.rule != "name-not-imported":  # that rule says what is missing itself
            d = _on_assumed_imports(d, model.assumed, certain=not model.assumed_open)
        if repaired is not None:
            read = _on_repaired(d, repaired, keep=rule.local_evidence)
            if read is None:
                continue
            d = read
        elif d.severity == ERROR and not (rule.local_evidence or hit.local) and model.excerpt is not None:
            d = _on_excerpt(d, model.excerpt)
        if d.severity == ERROR and hit.node is not None:
            unreached = model.unreached(hit.node)
            if unreached is not None:
                d = _on_unreached(d, unreached.words)
        if {d.rule, ALL_RULES} & suppressed.get(d.line, frozenset()):
            continue
        if hit.query is not None:
            pending.append((d, hit.query))
        elif hit.cause is not None:
            caused.append((d, hit.cause))
        else:
            done.add(d)
    done.update(one_per_cause(caused))
    return FileResult(tuple(done), tuple(pending), facts, deferred)


def one_per_cause(found: Iterable[tuple[Diagnostic, Hashable]]) -> Iterator[Diagnostic]:
    """One diagnostic per cause: the diagnostics of one rule, severity and cause (what the rule's
    `Hit.cause` says they are instances of) become the first of them, whose message names the other
    lines and whose `also` holds them. A user reads one finding per cause, and the fix at the first
    line says what to do at the others (lint heldout18 u032: five folders of one function made on
    every rank, one race; u023: one wrapper's state dict saved twice, one 'module.' prefix)."""
    groups: dict[tuple[str, str, Hashable], list[Diagnostic]] = {}
    for d, cause in found:
        groups.setdefault((d.rule, d.severity, cause), []).append(d)
    for group in groups.values():
        first = min(group, key=lambda d: (d.line, d.col))
        lines = sorted({d.line for d in group} - {first.line})
        if not lines:
            yield first
            continue
        named = " and ".join((", ".join(f"line {n}" for n in lines[:-1]), f"line {lines[-1]}")) if len(lines) > 1 \
            else f"line {lines[0]}"
        also = sorted({*lines, *(n for d in group for n in d.also)} - {first.line})
        yield replace(first, message=f"{first.message} (the same at {named})", also=tuple(also))


def _settle(results: Iterable[FileResult], project: Project) -> list[Diagnostic]:
    """Every file's diagnostics, with the pending ones the project keeps."""
    out: list[Diagnostic] = []
    for result in results:
        if result.deferred:
            result = _run_deferred(result, project)
        found = set(result.diagnostics)
        for d, query in result.pending:
            answer = project.answer(d.path, query)
            if answer is not None:
                found.add(replace(d, message=d.message.replace("{reached}", answer)) if answer else d)
        ordered = sorted(found, key=lambda d: (d.line, d.col, d.rule))
        if result.cells:
            ordered = [_in_cell(d, result.cells, result.notebook) for d in ordered]
        out += ordered
    return out


def _run_deferred(result: FileResult, project: Project) -> FileResult:
    """Run a file's deferred rules if it calls a function the project says
    communicates (a second parse, for the few files that do)."""
    if result.facts is None or not project.calls_collective(result.facts.path):
        return result
    path = result.facts.path
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return result
    text = decode(data).text
    if text is None:
        return result
    if path.endswith(".ipynb"):
        try:
            text = read_notebook(text).text
        except NotNotebook:
            return result
    again = read_source(text, path, [BY_ID[i] for i in result.deferred], defer=False, known=result.facts)
    return replace(result, diagnostics=result.diagnostics + again.diagnostics,
                   pending=result.pending + again.pending, deferred=())


def _in_cell(d: Diagnostic, starts: tuple[int, ...], notebook: Notebook | None = None) -> Diagnostic:
    """A notebook's diagnostic, its line counted within its code cell (and placed in the .ipynb file)."""
    cell, line = cell_line(starts, d.line)
    in_file = file_position(notebook, d.line, d.col) if notebook is not None else None
    if in_file is not None:
        d = replace(d, file_line=in_file[0], file_col=in_file[1])
    if d.also:  # the other places in the same cell, counted as `line` is (the message names every one)
        d = replace(d, also=tuple(n for c, n in (cell_line(starts, a) for a in d.also) if c == cell))

    def place(m: re.Match[str]) -> str:  # "line 12" in the message: in which cell
        c, n = cell_line(starts, int(m.group(1)))
        return f"cell {c} line {n}"

    return replace(d, cell=cell, line=line, message=LINE_REF.sub(place, d.message), fix=LINE_REF.sub(place, d.fix))


def _parse_cost(text: str) -> str:
    """'' when the syntax tree of `text` is of a size to build, else why not. What costs
    memory in a tree is its nodes, not the bytes: 800,000 one-line statements in 4.8 MB take
    2 GB. Lines, `;` and `,` (statements, list items) are counted, before anything is parsed."""
    limit = cap(PARSE_CAP)
    items = text.count("\n") + text.count(";") + text.count(",")
    if items <= limit:
        return ""
    return f"about {items:,} statements and items, above the {limit:,} limit on what is parsed (set {PARSE_CAP[0]} to raise it)"


def _file_problem(path: str, line: int, col: int, rule_id: str, message: str) -> Diagnostic:
    return Diagnostic(path, line, col, rule_id, message, BY_ID[rule_id].fix, BY_ID[rule_id].severity)


def _diagnostic(path: str, rule: Rule, hit: Hit, lines: list[str]) -> Diagnostic:
    if hit.node is not None:
        line, col = position(hit.node)
        # ast counts columns in UTF-8 bytes; people count characters.
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        if not text.isascii():
            col = len(text.encode("utf-8")[:col].decode("utf-8", "ignore"))
    else:
        line, col = hit.line, hit.col
    return Diagnostic(path, line, col + 1, rule.id, hit.message or rule.message, hit.fix or rule.fix,
                      hit.severity or rule.severity, also=tuple(sorted(set(hit.also) - {line})))


def _on_assumed_imports(d: Diagnostic, assumed: dict[str, str], certain: bool) -> Diagnostic:
    """A file that uses `nn` / `dist` / `os` ... without importing them (a pasted
    snippet) was read with their usual imports: say so, and claim no certainty
    unless the file leaves each name one meaning (`certain`: model.ONE_MEANING)."""
    imports = ", ".join(f"`{import_line(name, module)}`" for name, module in sorted(assumed.items()))
    return replace(d, severity=d.severity if certain else WARNING,
                   message=f"{d.message} (read assuming {imports}: the file does not import it)")


def _on_excerpt(d: Diagnostic, evidence: str) -> Diagnostic:
    """An error of a file that reads as an excerpt (`FileModel.excerpt`: an elision line, a definition
    import left unused beside a call of a definition it lacks) from a rule whose errors rest on what
    the file does not hold (`Rule.local_evidence` False): the lines left out may hold it, so it is a
    warning that says what was seen and what would decide it."""
    return replace(d, severity=WARNING,
                   message=f"{d.message} (the file reads as an excerpt: {evidence}; certain only if the "
                   "whole file shows the same)")


def _on_unreached(d: Diagnostic, words: str) -> Diagnostic:
    """An error at a line the module's entry never reaches (`FileModel.unreached`: a function or class nothing this
    script runs calls or builds): the failure the rule saw is certain only when that code runs, so it is a warning
    that says when (issue 41, item 2: an error only on the path the script runs)."""
    return replace(d, severity=WARNING, message=f"{d.message} (not on the path this script runs: {words})")


def _on_repaired(d: Diagnostic, repaired: Repair, keep: bool = False) -> Diagnostic | None:
    """A diagnostic of a snippet read after repair: the reading is not the program
    Python would run (lines were cut or completed), so it claims no certainty,
    unless the repair read every statement as written (`Repair.faithful`: a function's
    body, a cut-off end completed) and the rule's errors rest on the lines shown
    (`keep`: `Rule.local_evidence`; issue 41's heldout3: `nn.DataParallel(net,
    devices=...)` and `shuffle=sampler` in indented pastes are as certain as anywhere).
    None, not reported, where repair may have made it: it points at or names a line
    repair wrote on (`pass`; line 0, the function a snippet is read in), or the
    lines repair blanked name what its fix would add."""
    said = {d.line, *(int(n) for n in LINE_REF.findall(d.message))}
    if min(said) < 1 or said & repaired.inserted or repaired.may_hold_fix(d.fix):
        return None
    col = d.col + repaired.shift.get(d.line, 0)
    as_written = repaired.indented and not repaired.changed and not repaired.inserted and not repaired.shift
    severity = d.severity if keep and (repaired.faithful or as_written) else WARNING
    return replace(d, col=col, severity=severity, message=f"{d.message} ({repaired.note()})")


def _not_linted(path: str, exc: OSError) -> str:
    try:
        regular_stat(path)
    except FileRefused as refused:
        return str(refused)
    return f"{path}: {exc.strerror or exc}"


def lint_file(path: str, rules: Sequence[Rule] = ALL) -> list[Diagnostic]:
    """Diagnostics for one file, the file being the whole program."""
    result = read_file(path, rules)
    return _settle([result], Project([result.facts] if result.facts is not None else []))


def read_file(path: str, rules: Sequence[Rule] = ALL) -> FileResult:
    """One file, read through user_file: never blocks, never reads more than the cap."""
    try:
        data = read_capped(path, SOURCE_CAP)
    except FileRefused as refused:
        if "unreadable-file" not in {r.id for r in rules}:
            return FileResult(())
        fix = NOT_READ_FIX.get(refused.kind, "ls -l FILE")
        return FileResult((Diagnostic(path, 1, 1, "unreadable-file", f"skipped, not linted: {refused.reason}", fix,
                                      BY_ID["unreadable-file"].severity),))
    if path.endswith(".ipynb"):
        return _read_notebook(data, path, rules)
    return read_source(data, path, rules)


def _read_notebook(data: bytes, path: str, rules: Sequence[Rule]) -> FileResult:
    """A notebook's code cells read as one program (never run)."""
    text = decode(data).text
    try:
        if text is None:
            raise NotNotebook("not a notebook: cannot decode it")
        notebook = read_notebook(text)
    except NotNotebook as exc:
        if "unreadable-file" not in {r.id for r in rules}:
            return FileResult(())
        return FileResult((Diagnostic(path, 1, 1, "unreadable-file", f"skipped, not linted: {exc}",
                                      "python -m json.tool FILE  # shows where the JSON breaks",
                                      BY_ID["unreadable-file"].severity),))
    if too_many := _parse_cost(notebook.text):
        if "unreadable-file" not in {r.id for r in rules}:
            return FileResult(())
        return FileResult((_file_problem(path, 1, 1, "unreadable-file", f"skipped, not linted: {too_many}"),))
    # A cell that does not parse is left out, not reported: notebooks hold
    # scratch cells and IPython syntax, and the other cells still run.
    tree = None
    for _ in range(MAX_SKIPPED_CELLS):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(notebook.text, filename=path)
            break
        except SyntaxError as exc:
            if not notebook.starts:
                break
            notebook = without_cell(notebook, max(1, exc.lineno or 1))
        except (ValueError, RecursionError, MemoryError):
            break
    result = read_source(notebook.text, path, rules, parsed=tree)
    if notebook.dropped and "unreadable-file" in {r.id for r in rules}:
        said = f"only its first {MAX_CELLS:,} cells were linted: {notebook.dropped:,} more not read"
        result = replace(result, diagnostics=(*result.diagnostics, _file_problem(path, 1, 1, "unreadable-file", said)))
    if not notebook.starts:
        return result
    return replace(result, cells=notebook.starts, notebook=notebook)


def _read_ids(args: tuple[str, tuple[str, ...]]) -> FileResult:
    path, ids = args
    return read_file(path, [BY_ID[i] for i in ids])


def start_method(platform: str = sys.platform, threads: int | None = None) -> str:
    """fork where it is cheap and safe: on Linux, in a process of one thread (the CLI). With
    other threads running (the API in a Jupyter kernel), a forked worker can inherit a lock
    one of them held and wait on it for ever: forkserver forks from a clean single-threaded
    server instead. Windows has no fork, and macOS forks badly once system libraries started
    threads: spawn."""
    if platform != "linux":
        return "spawn"
    return "fork" if (threading.active_count() if threads is None else threads) == 1 else "forkserver"


# Reading a file allocates a tree of thousands of nodes that all stay alive until the
# file is done: at the default gen-0 threshold (700) the cycle collector runs over and
# over, scanning the live trees and the model each time, and finds almost nothing (ASTs
# and the model hold no reference cycles worth collecting early). mypy does the same.
GC_THRESHOLD = 50_000


def _collect_rarely() -> None:
    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])


def _worker_start() -> None:
    """A pool worker: rare collections, and SIGTERM's default action back. A forked worker
    inherits its parent's Python handlers, and the pool's terminate() stops its workers with
    SIGTERM: a caller whose handler ignores or defers SIGTERM (a service, a supervisor that
    was interrupted) would leave terminate() waiting on a worker that never dies."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # first: nothing before it can hold it up
    _collect_rarely()


@contextlib.contextmanager
def _rare_collections() -> Iterator[None]:
    saved = gc.get_threshold()
    _collect_rarely()
    try:
        yield
    finally:
        gc.set_threshold(*saved)


def lint_files(
    files: Sequence[str], rules: Sequence[Rule] = ALL, jobs: int | None = None, platform: str = sys.platform
) -> LintResult:
    """Lint `files` as one project (each is parsed once; the rules' project
    queries are answered once all are read); `jobs` processes (default: one
    per CPU for large runs)."""
    if jobs is None:
        jobs = (os.cpu_count() or 1) if len(files) >= PARALLEL_FROM else 1
    results: list[FileResult] = []
    if jobs <= 1 or len(files) < 2:
        with _rare_collections():
            results = [read_file(path, rules) for path in files]
    else:
        ids = tuple(r.id for r in rules)
        context = multiprocessing.get_context(start_method(platform))
        chunk = max(1, min(32, len(files) // (jobs * 8)))
        with context.Pool(jobs, initializer=_worker_start) as pool:
            results = list(pool.imap(_read_ids, [(p, ids) for p in files], chunksize=chunk))
    project = Project(r.facts for r in results if r.facts is not None)
    return LintResult(tuple(_settle(results, project)), len(files))


def lint_paths(
    paths: Sequence[str], select: Iterable[str] = (), ignore: Iterable[str] = (), jobs: int | None = None,
    exclude: Callable[[str], bool] | None = None,
) -> LintResult:
    """The whole command: validate, find files, lint them. `exclude`: files
    found in folders that it says to skip (files named are always linted)."""
    rules = choose_rules(select, ignore)
    files = python_files(paths)
    if exclude is not None:
        named = set(paths)
        files = [f for f in files if f in named or not exclude(f)]
    return lint_files(files, rules, jobs)
