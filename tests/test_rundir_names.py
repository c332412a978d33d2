"""launch/rundir.py is the one place that spells the run folder's file names and
gpudoctor's GPUDOCTOR_* environment variables: every other module refers to it.
The scan reads the source's string literals (f-strings' text parts too), not its
docstrings or comments."""

import ast
import os
import re

from gpudoctor.core import user_file
from gpudoctor.launch import rank as rank_module
from gpudoctor.probe import host
from gpudoctor.launch import rundir

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src", "gpudoctor")

ENV_NAME = re.compile(r"GPUDOCTOR_[A-Z][A-Z0-9_]*")
RANK_SUFFIXES = (rundir.STDERR, rundir.STDOUT, rundir.PROGRESS, rundir.RESULT, rundir.ERROR, rundir.TRACE,
                 rundir.CURRENT, rundir.STACKS, rundir.STACKS_REQUEST, rundir.FATAL, rundir.STEPS, rundir.TIMELINE, rundir.THREADS, rundir.RENDEZVOUS)  # fmt: skip
FOLDER_FILES = (rundir.CONFIG_FILE, rundir.OUTCOME_FILE, rundir.ROWS_FILE, rundir.NARROWING_LOG, rundir.REPORT_FILE)
# A per-rank file: the suffix at the start of a literal (f"rank{r}.stderr" -> ".stderr")
# or after "rank<N>" / "rank*" in one.
RANK_FILE = re.compile(r"(?:^|rank(?:\d+|\*|<N>)?)(" + "|".join(re.escape(s) for s in RANK_SUFFIXES) + r")(?![\w-])")
FOLDER_FILE = re.compile(r"(?<![\w.-])(" + "|".join(re.escape(s) for s in FOLDER_FILES) + r"|findings-)")

# Modules allowed their own spelling, each for a reason:
ALLOWED = {
    # below launch/: they cannot import it; rundir lists their names (BELOW_LAUNCH_ENV)
    "core/user_file.py": "below launch/",
    "probe/host.py": "below launch/",
    # on every rank's start-up path, before anything heavier is imported (their comments say so)
    "launch/rank.py": "start-up path",
    "hooks/main.py": "start-up path",
}
# the findings' text for users, and the patterns' (why/fix about the user's own files, e.g. a
# transformers checkpoint's config.json): they name variables and files, they do not use them
PROSE = ("catalog/", "knowledge/patterns/")


def literals(tree: ast.AST):
    """(line, text) of every string literal that is not a docstring."""
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node.lineno, node.value


def spellings(source: str):
    """(line, what) for each GPUDOCTOR_ name and run-folder file name spelled in `source`."""
    for line, text in literals(ast.parse(source)):
        for m in ENV_NAME.finditer(text):
            yield line, m.group(0)
        for m in RANK_FILE.finditer(text):
            yield line, m.group(1)
        for m in FOLDER_FILE.finditer(text):
            yield line, m.group(1)


def sources():
    for folder, _, files in os.walk(SRC):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                yield os.path.relpath(path, SRC).replace(os.sep, "/"), open(path, encoding="utf-8").read()


def env_names() -> set[str]:
    named = {v for k, v in vars(rundir).items() if k.endswith("_ENV") and isinstance(v, str)}
    return named | set(rundir.BELOW_LAUNCH_ENV)


def test_the_scan_finds_a_name_and_a_file_spelled_anywhere_but_docstrings():
    source = '"""GPUDOCTOR_DOC rank0.stderr"""\nA = "GPUDOCTOR_NEW"\nB = f"rank{r}.stderr"\nC = "outcome.json"\nD = "x.stderr.gz"\n'
    assert sorted(what for _, what in spellings(source)) == sorted(["GPUDOCTOR_NEW", ".stderr", "outcome.json"])
    assert list(spellings('E = "torchrun error.json"\nF = "my_config.json"\n')) == []


def test_no_module_but_rundir_spells_a_run_folder_file_or_a_gpudoctor_variable():
    found = []
    for rel, text in sources():
        if rel == "launch/rundir.py" or rel.startswith(PROSE) or rel in ALLOWED:
            continue
        found += [f"{rel}:{line}: {what}" for line, what in spellings(text)]
    assert found == [], "spell these through gpudoctor.launch.rundir:\n" + "\n".join(found)


def test_the_modules_allowed_their_own_spelling_use_rundir_s_names():
    """...and only those: a new name there is still one rundir lists."""
    names = env_names()
    known_files = {*RANK_SUFFIXES, *FOLDER_FILES}
    for rel, text in sources():
        if rel in ALLOWED or rel.startswith(PROSE):
            for line, what in spellings(text):
                assert what in names or what in known_files, f"{rel}:{line}: {what} is not named in launch/rundir.py"
    assert (rank_module.FAULT_ENV, rank_module.RUN_DIR_ENV, rank_module.PROGRESS) == (rundir.FAULT_ENV, rundir.RUN_DIR_ENV, rundir.PROGRESS)
    assert rank_module.progress_path("/r", 3) == rundir.progress_path("/r", 3)
    assert rundir.BELOW_LAUNCH_ENV == (user_file.SOURCE_CAP[0], user_file.FACTS_CAP[0], host.NODE_NAME_ENV, user_file.RUN_JSON_CAP[0], user_file.PARSE_CAP[0])


def test_every_variable_rundir_names_is_distinct_and_used_somewhere():
    values = [v for k, v in vars(rundir).items() if k.endswith("_ENV") and isinstance(v, str)]
    assert len(values) == len(set(values))
    code = "\n".join(text for rel, text in sources() if rel != "launch/rundir.py")
    unused = [k for k, v in vars(rundir).items() if k.endswith("_ENV") and isinstance(v, str) and k not in code]
    assert unused == []
