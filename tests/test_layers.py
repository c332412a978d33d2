"""The house's layering, read from the source: every import of gpudoctor's own
modules (lazy ones inside functions and TYPE_CHECKING ones included) runs
downward, a package never imports a sibling of its own layer, and so no two
packages import each other. ARCHITECTURE.md draws the same picture.

`python tests/test_layers.py` prints the picture: each package and what it imports.
"""

from __future__ import annotations

import ast
import collections
import functools
import pathlib

SRC = pathlib.Path(__file__).resolve().parent.parent / "src" / "gpudoctor"

# Bottom to top. A package may import its own modules and any package of a lower layer.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("core",),
    ("catalog",),  # every finding kind's words, which knowledge/ and every emitter above use
    ("knowledge", "render"),
    ("probe",),
    ("checks",),
    ("linter",),
    ("launch",),
    ("hang",),
    ("hooks",),
    ("commands",),
    ("api", "cli"),
    ("docs", "__main__", "(facade)"),
)
LAYER_OF = {pkg: i for i, layer in enumerate(LAYERS) for pkg in layer}
# Within commands/, each command is its own package and uses no other command,
# except `report`, which is a bug report made of the others' reports.
COMPOSES = {"report": {"check", "allreduce", "train_smoke"}}


def _module_name(path: pathlib.Path) -> tuple[str, bool]:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(parts), is_package


@functools.cache
def _import_nodes() -> tuple[tuple[str, bool, tuple[ast.Import | ast.ImportFrom, ...]], ...]:
    """(module, is_package, its import statements) for every source file, parsed once per
    process: five tests read the same ~300 files (each parse of them all was ~1 CPU-s)."""
    parsed = []
    for path in sorted(SRC.rglob("*.py")):
        module, is_package = _module_name(path)
        tree = ast.parse(path.read_text(), str(path))
        parsed.append((module, is_package, tuple(n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)))))
    return tuple(parsed)


def imports() -> list[tuple[str, str, int]]:
    """(importing module, imported gpudoctor module or name, line) for every import."""
    found = []
    for module, is_package, nodes in _import_nodes():
        for node in nodes:
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = module.split(".")[: None if is_package else -1]
                    base = base[: len(base) - node.level + 1]
                    name = ".".join([*base, node.module] if node.module else base)
                else:
                    name = node.module or ""
                targets = [f"{name}.{alias.name}" if name == "gpudoctor" else name for alias in node.names]
            else:
                continue
            found += [(module, t, node.lineno) for t in targets if t.split(".")[0] == "gpudoctor"]
    return found


def package_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "(facade)"
    if parts[1] == "__version__":
        return "core"
    if parts[1] in ("api", "__main__"):
        return parts[1]
    return parts[1]


def command_of(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) > 2 and parts[1] == "commands":
        return parts[2]
    return None


def violations() -> list[str]:
    out = []
    for module, target, line in imports():
        a, b = package_of(module), package_of(target)
        where = f"{module}:{line} imports {target}"
        if a not in LAYER_OF or b not in LAYER_OF:
            out.append(f"{where}: a package not in LAYERS ({a if a not in LAYER_OF else b})")
        elif a != b and LAYER_OF[b] > LAYER_OF[a]:
            out.append(f"{where}: upward ({a} is layer {LAYER_OF[a]}, {b} is layer {LAYER_OF[b]})")
        elif a != b and LAYER_OF[b] == LAYER_OF[a]:
            out.append(f"{where}: sideways within layer {LAYER_OF[a]}")
        elif a == b == "commands":
            ca, cb = command_of(module), command_of(target)
            if ca and cb and ca != cb and cb not in COMPOSES.get(ca, ()):
                out.append(f"{where}: one command using another")
    return out


def module_edges() -> dict[str, set[str]]:
    """Module -> the gpudoctor modules it imports, every import counted, lazy ones too.
    `from pkg import mod` is an edge to the module pkg.mod, `from pkg import name` (a
    name pkg/__init__.py defines) one to the package."""
    parsed = _import_nodes()
    modules = {module for module, _, _ in parsed}
    edges: dict[str, set[str]] = collections.defaultdict(set)
    for module, is_package, nodes in parsed:
        for node in nodes:
            if isinstance(node, ast.Import):
                edges[module] |= {a.name for a in node.names if a.name in modules}
            elif isinstance(node, ast.ImportFrom):
                base = module.split(".")[: None if is_package else -1]
                base = base[: len(base) - node.level + 1] if node.level else []
                name = ".".join([*base, node.module] if node.module else base) if node.level else node.module or ""
                for alias in node.names:
                    target = f"{name}.{alias.name}"
                    edges[module].add(target if target in modules else name)
    return {m: {t for t in targets if t in modules} for m, targets in edges.items()}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every circle of imports between modules of one package (package_of), each as the
    modules of one strongly connected component, sorted (Tarjan's algorithm)."""
    graph = {m: {t for t in targets if t != m and package_of(t) == package_of(m)} for m, targets in edges.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def picture() -> str:
    edges: dict[str, set[str]] = collections.defaultdict(set)
    for module, target, _ in imports():
        a, b = package_of(module), package_of(target)
        if a != b:
            edges[a].add(b)
    lines = []
    for i, layer in reversed(list(enumerate(LAYERS))):
        for pkg in layer:
            below = sorted(edges.get(pkg, ()), key=lambda p: (-LAYER_OF.get(p, 99), p))
            lines.append(f"{i:>2} {pkg:<10} -> {' '.join(below) or '(nothing of gpudoctor)'}")
    return "\n".join(lines)


def test_imports_run_downward_only():
    problems = violations()
    assert not problems, "imports against the layering:\n" + "\n".join(problems)


def test_every_package_has_a_layer():
    packages = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    packages |= {p.stem for p in SRC.glob("*.py") if p.stem not in ("__init__",)}
    assert packages - set(LAYER_OF) == set()


def test_core_imports_nothing_above_it():
    for module, target, line in imports():
        if package_of(module) == "core":
            assert package_of(target) == "core", f"{module}:{line} imports {target}"


def shadowed_names() -> list[str]:
    """A package defining a name that is also one of its submodules: importing the
    submodule rebinds the name to it (`commands.diagnose.explain` the function became
    the module once any test imported commands/diagnose/explain.py)."""
    found = []
    for init in sorted(SRC.rglob("__init__.py")):
        folder = init.parent
        subs = {p.stem for p in folder.glob("*.py")} | {p.name for p in folder.iterdir() if (p / "__init__.py").exists()}
        names = set()
        for node in ast.parse(init.read_text()).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        found += [f"{folder.relative_to(SRC.parent)}: {name}" for name in sorted(names & (subs - {"__init__"}))]
    return found


def test_no_package_defines_a_name_one_of_its_modules_has():
    assert shadowed_names() == []


def test_the_checker_sees_an_upward_import(tmp_path):
    """The test is not vacuous: the graph holds real edges, and an upward one is flagged."""
    found = imports()
    assert len(found) > 300
    assert any(package_of(m) == "cli" and package_of(t) == "commands" for m, t, _ in found)
    assert LAYER_OF["hang"] > LAYER_OF["launch"]
    fake = [("gpudoctor.launch.child", "gpudoctor.hang.tracer", 1)]
    a, b = package_of(fake[0][0]), package_of(fake[0][1])
    assert LAYER_OF[b] > LAYER_OF[a]


def test_no_circle_of_imports_between_modules_of_one_package():
    found = circles(module_edges())
    assert found == [], "modules of one package importing each other in a circle:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_checker_sees_a_planted_circle():
    """Not vacuous: the edges are the real ones, and a circle planted in them is found,
    as is one closed through a lazy import (the one hang/verdict <-> hang/watch had)."""
    edges = module_edges()
    assert "gpudoctor.hang.watch" in edges["gpudoctor.hang.verdict"]
    assert "gpudoctor.launch.rundir" in edges["gpudoctor.launch.supervisor"]  # `from gpudoctor.launch import rundir`
    planted = {m: set(t) for m, t in edges.items()}
    planted["gpudoctor.hang.watch"].add("gpudoctor.hang.verdict")
    assert ["gpudoctor.hang.verdict", "gpudoctor.hang.watch"] in circles(planted)
    three = {"a.p.x": {"a.p.y"}, "a.p.y": {"a.p.z"}, "a.p.z": {"a.p.x"}, "a.q.w": {"a.p.x"}}
    assert circles(three) == [["a.p.x", "a.p.y", "a.p.z"]]
    # Between packages it is the layering's to refuse, not this check's.
    assert circles({"gpudoctor.hang.x": {"gpudoctor.launch.y"}, "gpudoctor.launch.y": {"gpudoctor.hang.x"}}) == []


if __name__ == "__main__":
    print(picture())
    problems = violations()
    print(f"\n{len(problems)} import(s) against the layering")
    print("\n".join(problems))
    found = circles(module_edges())
    print(f"{len(found)} circle(s) of imports within a package")
    print("\n".join(" <-> ".join(c) for c in found))
