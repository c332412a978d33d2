"""Every finding id, lint rule and command has its documentation page, and the
generated pages are what the code says (`python -m gpudoctor.docs`)."""

import ast
import pathlib
import re
import string
import subprocess
import sys

import pytest

from gpudoctor.catalog import fix, why
from gpudoctor.catalog.findings import FINDINGS
from gpudoctor.docs.__main__ import COMMAND, differences, main
from gpudoctor.docs.pages import KINDS

ROOT = pathlib.Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "gpudoctor"
DOCS = ROOT / "docs"
NOT_CODE = ("catalog", "docs")  # the catalog itself, and the generator
# Code that still writes its own `why` text: each failure pattern is its own
# documented unit (knowledge/patterns/), the hang diagnosis is being rewritten,
# and these few files were left for later. Every other file takes its `why`
# from the catalog.
OWN_WHY = ("knowledge/patterns/", "hang/", "commands/train_smoke/job.py", "linter/formats.py",
           "knowledge/xid.py", "knowledge/unrecognised.py")
# The same for the `fix` (the command a user pastes): these still write their own.
OWN_FIX = ("knowledge/patterns/", "hang/", "linter/", "commands/train_smoke/job.py")


def code_files() -> list[tuple[str, ast.Module]]:
    out = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC)
        if rel.parts[0] not in NOT_CODE:
            out.append((rel.as_posix(), ast.parse(path.read_text(), str(path))))
    return out


CODE = code_files()


def _called(node: ast.Call) -> str:
    return node.func.id if isinstance(node.func, ast.Name) else node.func.attr if isinstance(node.func, ast.Attribute) else ""


def finding_ids() -> set[str]:
    """The ids in Finding(id="x-y", ...), Finding("x-y", ...) and ok("x-y", ...)."""
    ids = set()
    for _, tree in CODE:
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _called(node) in ("Finding", "ok"):
                arg = next((k.value for k in node.keywords if k.arg == "id"), node.args[0] if node.args else None)
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    ids.add(arg.value)
    return ids


def lookup_calls(name: str = "why") -> list[tuple[str, int, ast.Call]]:
    """Every catalog lookup `why(...)` (or `fix(...)`) in the code: (file, line, call)."""
    return [(rel, node.lineno, node) for rel, tree in CODE for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name]


def why_calls() -> list[tuple[str, int, ast.Call]]:
    return lookup_calls("why")


def fix_calls() -> list[tuple[str, int, ast.Call]]:
    return lookup_calls("fix")


def written_whys(skip: tuple[str, ...] = OWN_WHY, name: str = "why") -> list[str]:
    """`why=` (or `fix=`) given a text written in place: a string, an f-string, or
    a sum of strings. For a fix, an empty string (no fix to give) is not a text."""
    found = []
    for rel, tree in CODE:
        if rel.startswith(skip):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == name:
                lookups = {id(n) for c in ast.walk(node.value) if isinstance(c, ast.Call) for n in ast.walk(c)}
                if any(isinstance(n, ast.JoinedStr) or isinstance(n, ast.Constant) and isinstance(n.value, str) and (n.value or name == "why")
                       for n in ast.walk(node.value) if id(n) not in lookups):
                    found.append(f"{rel}:{node.value.lineno}")
    return found


def written_fixes(skip: tuple[str, ...] = OWN_FIX) -> list[str]:
    return written_whys(skip, "fix")


def test_the_id_scan_finds_ids():
    assert "rank-crashed" in finding_ids()
    assert "p2p-ok" in finding_ids()  # made with ok(...)
    assert "collective-missing" in finding_ids()  # Finding("...", ...) without id=


def test_every_finding_id_is_in_the_catalog():
    missing = sorted(finding_ids() - set(FINDINGS))
    assert missing == [], f"add a FindingDoc to src/gpudoctor/catalog/findings/ for: {missing}, then run {COMMAND}"


def test_every_catalog_entry_is_a_finding_the_code_reports():
    unused = sorted(set(FINDINGS) - finding_ids())
    assert unused == [], f"no code reports these ids any more: remove their entries, then run {COMMAND}: {unused}"


def test_the_generated_pages_match_the_code():
    stale = differences(DOCS)
    assert stale == [], f"docs differ from the code: run `{COMMAND}` ({stale[:5]})"


def test_the_check_notices_an_edited_page(tmp_path):
    docs = tmp_path / "docs"
    assert main([str(docs)]) == 0  # writes a fresh tree
    assert differences(docs) == []
    page = docs / "findings" / "rank-crashed.md"
    page.write_text(page.read_text().replace("## Fix", "## Fix\n\nsomething else"))
    (docs / "rules" / "no-such-rule.md").write_text("# old\n")
    found = differences(docs)
    assert str(page) in found
    assert f"{docs / 'rules' / 'no-such-rule.md'} (no entry has this page)" in found
    check = subprocess.run(
        [sys.executable, "-m", "gpudoctor.docs", "--check", str(docs)], capture_output=True, text=True, timeout=60
    )
    assert check.returncode == 1 and f"run `{COMMAND}`" in check.stderr and str(page) in check.stdout
    assert main([str(docs)]) == 0
    assert differences(docs) == [] and not (docs / "rules" / "no-such-rule.md").exists()


def test_every_command_has_a_page():
    for command in ("check", "allreduce", "train-smoke", "lint", "run", "diagnose", "report"):
        assert (DOCS / "commands" / f"{command}.md").exists(), command


def test_no_emitter_writes_its_own_why():
    assert written_whys() == [], "move these sentences into the catalog entry (says= or cases=) and call catalog.why"


def test_no_emitter_writes_its_own_fix():
    assert written_fixes() == [], "move these commands into the catalog entry (does= or fix_cases=) and call catalog.fix"


def test_the_written_fix_scan_finds_them():
    for own in OWN_FIX:
        assert any(w.startswith(own) for w in written_fixes(skip=())), f"{own} takes its fix from the catalog now"
    tree = ast.parse('Finding(id="a-b", fix="x"); Finding(id="a-b", fix=f"{n} x"); Finding(id="a-b", fix=fix("a-b")); '
                     'Finding(id="a-b", fix=fix("a-b") if n else "")')
    CODE.append(("checks/example.py", tree))
    try:
        assert [w for w in written_fixes() if w.startswith("checks/example.py")] == ["checks/example.py:1"] * 2
    finally:
        CODE.pop()


def test_the_written_why_scan_finds_them():
    # Each file let off still writes its own (else it must leave the list).
    for own in OWN_WHY:
        assert any(w.startswith(own) for w in written_whys(skip=())), f"{own} takes its why from the catalog now"
    tree = ast.parse('Finding(id="a-b", why="x"); Finding(id="a-b", why=f"{n} x"); Finding(id="a-b", why=why("a-b"))')
    CODE.append(("checks/example.py", tree))
    try:
        assert [w for w in written_whys() if w.startswith("checks/example.py")] == ["checks/example.py:1"] * 2
    finally:
        CODE.pop()


def _wrong_lookups(calls: list[tuple[str, int, ast.Call]], one: str, cases: str) -> list[str]:
    """The lookups whose id, case or fields do not match the entry's `one` text or its `cases`."""
    wrong = []
    for rel, line, call in calls:
        where = f"{rel}:{line}"
        args = [a.value if isinstance(a, ast.Constant) else None for a in call.args]
        if not args or not isinstance(args[0], str) or len(args) > 2 or None in args:
            wrong.append(f"{where}: the id and the case must be written as strings")
            continue
        entry = FINDINGS.get(args[0])
        if entry is None:
            wrong.append(f"{where}: no catalog entry {args[0]!r}")
            continue
        case = args[1] if len(args) == 2 else None
        text = getattr(entry, cases).get(case) if case is not None else getattr(entry, one)
        if not text:
            wrong.append(f"{where}: {args[0]!r} has no " + (f"case {case!r}" if case else f"`{one}` (it has {cases})"))
            continue
        fields = {name for _, name, _, _ in string.Formatter().parse(text) if name}
        given = {k.arg for k in call.keywords}
        if fields != given:
            wrong.append(f"{where}: {args[0]!r} {case or ''} fills {sorted(given)}, its text has {sorted(fields)}")
    return wrong


def test_every_why_lookup_names_an_entry_its_case_and_its_fields():
    calls = why_calls()
    assert len(calls) > 80  # the scan sees the emitters
    assert _wrong_lookups(calls, "says", "cases") == []


def test_every_fix_lookup_names_an_entry_its_case_and_its_fields():
    calls = fix_calls()
    assert len(calls) > 70  # the scan sees the emitters
    assert _wrong_lookups(calls, "does", "fix_cases") == []


def _unused(calls: list[tuple[str, int, ast.Call]], one: str, cases: str) -> list[tuple[str, str | None]]:
    used = set()
    for _, _, call in calls:
        args = [a.value for a in call.args if isinstance(a, ast.Constant)]
        used.add((args[0], args[1] if len(args) > 1 else None))
    listed = {(e.id, None) for e in FINDINGS.values() if getattr(e, one)}
    listed |= {(e.id, case) for e in FINDINGS.values() for case in getattr(e, cases)}
    return sorted(listed - used, key=str)


def test_every_sentence_in_the_catalog_is_used():
    assert _unused(why_calls(), "says", "cases") == [], "no code says these any more: remove them from the catalog"
    assert [e.id for e in FINDINGS.values() if e.says and e.cases] == []  # one or the other


def test_every_fix_in_the_catalog_is_used():
    assert _unused(fix_calls(), "does", "fix_cases") == [], "no code gives these fixes any more: remove them from the catalog"
    assert [e.id for e in FINDINGS.values() if e.does and e.fix_cases] == []  # one or the other


def test_a_missing_entry_or_case_fails_loudly():
    assert why("visible-devices-invalid", "repeated").startswith("CUDA treats a list that names a GPU twice")
    assert why("fleet-socket-ifname-missing", backend="NCCL", var="NCCL_SOCKET_IFNAME").startswith(
        "NCCL binds to the interfaces NCCL_SOCKET_IFNAME names;")
    with pytest.raises(KeyError):
        why("no-such-finding")
    with pytest.raises(KeyError):
        why("visible-devices-invalid", "no-such-case")
    with pytest.raises(KeyError):
        why("visible-devices-invalid")  # it has cases: one must be named
    with pytest.raises(KeyError):
        why("fleet-socket-ifname-missing")  # its fields are not filled in
    assert fix("visible-devices-invalid", "list-gpus", indices="0,1") == "export CUDA_VISIBLE_DEVICES=0,1"
    with pytest.raises(KeyError):
        fix("visible-devices-invalid")  # it has fix cases: one must be named
    with pytest.raises(KeyError):
        fix("mig-enabled")  # its fields are not filled in


def test_every_entry_says_how_to_fix():
    assert [e.id for e in FINDINGS.values() if not e.fix.strip() or not e.why.strip()] == []


def test_the_docs_index_lists_every_page():
    index = (DOCS / "README.md").read_text()
    for folder in [k.folder for k in KINDS] + ["commands"]:
        for page in (DOCS / folder).glob("*.md"):
            assert f"({folder}/{page.name})" in index, f"docs/README.md does not list {folder}/{page.name}"


def test_the_catalog_loads_only_when_a_why_is_asked_for():
    # `gpudoctor check` imports every check; the entries (two dozen modules of text) wait for the first why.
    code = ("import sys, gpudoctor.checks as c, gpudoctor.cli.check, gpudoctor.launch.fleet; c.all_checks(); "
            "print('gpudoctor.catalog.findings' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.stdout.strip() == "False", run.stderr


# A repository path cited in prose (`docs/pre-commit.md`, `tests/test_wheel.py`), and a
# Markdown link; code blocks and spans are left out (a link there is code, not a link).
CITED_PATH = re.compile(r"(?<![\w/.-])((?:docs|tests|benchmarks|src|examples)/[\w./-]*[\w-](?:\.\w+)?)")
MD_LINK = re.compile(r"\]\(([^)\s]+)\)")
CODE_SPANS = re.compile(r"```.*?```|`[^`\n]*`", re.S)
FRONT_FILES = ("README.md", ".pre-commit-hooks.yaml", "action.yml")


def broken_citations(root: pathlib.Path) -> list[str]:
    """Every repository path the front files cite, and every relative Markdown link in
    README.md and docs/, that does not exist."""
    broken = []
    for name in FRONT_FILES:
        for m in CITED_PATH.finditer((root / name).read_text()):
            if not (root / m.group(1)).exists():
                broken.append(f"{name}: {m.group(1)}")
    for page in [root / "README.md", *sorted((root / "docs").rglob("*.md"))]:
        for m in MD_LINK.finditer(CODE_SPANS.sub("", page.read_text())):
            target = m.group(1).split("#")[0]
            if target and "://" not in target and not target.startswith("mailto:") and not (page.parent / target).exists():
                broken.append(f"{page.relative_to(root)}: {m.group(1)}")
    return broken


def test_every_path_the_docs_cite_exists():
    assert broken_citations(ROOT) == []


def test_the_citation_check_notices_a_missing_page(tmp_path):
    for name in FRONT_FILES:
        (tmp_path / name).write_text("")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "here.md").write_text("[ok](here.md) `[code](gone.md)` [gone](../docs/gone.md#x)\n")
    (tmp_path / ".pre-commit-hooks.yaml").write_text("# see docs/integrations.md\n")
    assert broken_citations(tmp_path) == [".pre-commit-hooks.yaml: docs/integrations.md", "docs/here.md: ../docs/gone.md#x"]
