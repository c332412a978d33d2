"""How fast is `gpudoctor lint` on a large corpus no one here wrote, and what
does it say about it?

Lints every .py (and .ipynb) file of the installed torch package, or of
the folder given, and, in the same run,
times a bare loop that only reads and `ast.parse`s the same files: the cost
of linting is the ratio of the two. A third loop parses and builds the
project model only (lint/project.py: the facts of each file, then the
Project), to show what reading a folder as one program costs. Library code is not a training script,
so every diagnostic printed here is a candidate false alarm to read.

    python benchmarks/lint_corpus.py [--jobs N] [--repeat N] [--show RULE|all]

torch is located, never imported (`importlib.util.find_spec`).
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import multiprocessing
import os
import sys
import time
import warnings
from collections import Counter


def source_of(path: str, data: bytes) -> bytes | str:
    """What lint parses: the file, or a notebook's code cells."""
    if not path.endswith(".ipynb"):
        return data
    from gpudoctor.linter.notebook import NotNotebook, read_notebook

    try:
        return read_notebook(data.decode("utf-8", "replace")).text
    except NotNotebook:
        return ""


def parse_only(path: str) -> int:
    with open(path, "rb") as f:
        data = f.read()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(source_of(path, data), filename=path)
    except (SyntaxError, ValueError):
        pass
    return data.count(b"\n")


def project_only(files: list[str]) -> tuple[float, int]:
    """Parse every file and build the project model (the facts each file adds,
    then the Project over them), without running the rules."""
    from gpudoctor.linter.project import Project, module_facts

    def one(path: str) -> object:
        with open(path, "rb") as f:
            data = f.read()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(source_of(path, data), filename=path)
        except (SyntaxError, ValueError):
            return None
        return module_facts(path, tree, data.decode("utf-8", "replace"), None)

    start = time.perf_counter()
    Project([f for f in map(one, files) if f is not None])
    return time.perf_counter() - start, 0


def baseline(files: list[str], jobs: int) -> tuple[float, int]:
    start = time.perf_counter()
    if jobs <= 1:
        lines = sum(parse_only(p) for p in files)
    else:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            lines = sum(pool.imap(parse_only, files, chunksize=max(1, len(files) // (jobs * 8))))
    return time.perf_counter() - start, lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes for the parallel runs")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each loop; the best time counts")
    parser.add_argument("--show", default="", help="print the diagnostics of this rule id (or 'all')")
    parser.add_argument("root", nargs="?", help="corpus directory (default: the installed torch package)")
    args = parser.parse_args()

    from gpudoctor.linter import engine
    from gpudoctor.linter.engine import lint_files, python_files
    from gpudoctor.linter.rules import ALL

    engine.RAISE_RULE_ERRORS = True  # a rule that breaks on this corpus must show, not go quiet

    root = args.root
    if root is None:
        spec = importlib.util.find_spec("torch")
        if spec is None or not spec.submodule_search_locations:
            print("torch is not installed: pass a corpus directory", file=sys.stderr)
            return 2
        root = list(spec.submodule_search_locations)[0]
    files = python_files([root])
    jobs = max(1, args.jobs)

    timings: dict[str, float] = {}
    cpu: dict[str, float] = {}  # CPU seconds of the 1-process loops: steadier than wall time on a shared machine
    result = None
    lines = 0
    runs = [
        ("parse, 1 process", lambda: baseline(files, 1)),
        ("project, 1 process", lambda: project_only(files)),
        ("lint, 1 process", lambda: lint_files(files, ALL, jobs=1)),
    ]
    if jobs > 1:
        runs += [
            (f"parse, {jobs} processes", lambda: baseline(files, jobs)),
            (f"lint, {jobs} processes", lambda: lint_files(files, ALL, jobs=jobs)),
        ]
    for _ in range(args.repeat):
        for name, run in runs:  # interleaved, so a busy moment hurts both loops alike
            start, start_cpu = time.perf_counter(), time.process_time()
            out = run()
            elapsed = time.perf_counter() - start
            if "1 process" in name:
                cpu[name] = min(cpu.get(name, float("inf")), time.process_time() - start_cpu)
            if isinstance(out, tuple):
                lines = max(lines, out[1])
            else:
                result = out
            timings[name] = min(timings.get(name, float("inf")), elapsed)

    print(f"corpus: {root}")
    print(f"files: {len(files)}  lines: {lines}")
    for name, seconds in timings.items():
        extra = f"  ({cpu[name]:.2f} s CPU)" if name in cpu else ""
        print(f"  {name:<22} {seconds:7.2f} s{extra}")
    serial = timings["lint, 1 process"] / timings["parse, 1 process"]
    serial_cpu = cpu["lint, 1 process"] / cpu["parse, 1 process"]
    print(f"ratio lint/parse, both 1 process: {serial:.2f}x wall, {serial_cpu:.2f}x CPU")
    project = cpu["project, 1 process"] / cpu["parse, 1 process"]
    print(f"ratio parse + project model / parse, both 1 process: {project:.2f}x CPU")
    if jobs > 1:
        parallel = timings[f"lint, {jobs} processes"]
        print(f"ratio lint ({jobs} processes) / parse (1 process): {parallel / timings['parse, 1 process']:.2f}x")
        print(f"ratio lint / parse, both {jobs} processes: {parallel / timings[f'parse, {jobs} processes']:.2f}x")

    assert result is not None
    counts = Counter(d.rule for d in result.diagnostics)
    print(f"diagnostics: {len(result.diagnostics)}")
    for rule in ALL:
        print(f"  {rule.id:<28} {counts.get(rule.id, 0)}")
    if args.show:
        for d in result.diagnostics:
            if args.show in ("all", d.rule):
                print(f"{d.path}:{d.line}:{d.col}: {d.rule} {d.message}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
