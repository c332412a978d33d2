"""Every finding id, lint rule and command has its documentation page, and the
generated pages are what the code says (`python -m gpudoctor.docs`)."""

import ast
import pathlib
import re
import string
import subprocess
import sys

import pytest

from gpudoctor.catalog.findings import AREAS, FINDINGS
from gpudoctor.catalog.kind import FindingKind, kinds_in
from gpudoctor.core.findings import Severity
from gpudoctor.docs.__main__ import COMMAND, differences, main
from gpudoctor.docs.pages import KINDS

ROOT = pathlib.Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "gpudoctor"
DOCS = ROOT / "docs"
NOT_CODE = ("catalog", "docs")  # the catalog itself, and the generator
# Code that still writes its own `why` text: each failure pattern is its own
# documented unit (knowledge/patterns/), hang/meaning.py rewords a rank's finding (a full disk, a pattern),
# and these few files were left for later. Every other file takes its `why`
# from the catalog.
OWN_WHY = ("knowledge/patterns/", "hang/meaning.py", "linter/formats.py",
           "knowledge/unrecognised.py")
# The same for the `fix` (the command a user pastes): these still write their own
# (train_smoke/job.py: only joined-rank-failed's, which hang/failures.py's kind will hold).
OWN_FIX = ("knowledge/patterns/", "hang/meaning.py", "linter/")


def code_files() -> list[tuple[str, ast.Module]]:
    out = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC)
        if rel.parts[0] not in NOT_CODE:
            out.append((rel.as_posix(), ast.parse(path.read_text(), str(path))))
    return out


class _Code(list):
    """code_files(), parsed on first use (every source file: seconds of CPU, which each xdist
    worker and the collecting controller paid at import, whether or not it ran a test here)."""

    _loaded = False

    def _load(self) -> None:
        if not self._loaded:
            self._loaded = True
            super().extend(code_files())

    def __iter__(self):
        self._load()
        return super().__iter__()

    def __len__(self) -> int:
        self._load()
        return super().__len__()

    def append(self, item) -> None:
        self._load()
        super().append(item)

    def pop(self, *args):
        self._load()
        return super().pop(*args)


CODE = _Code()
_WALKED: dict[int, tuple[ast.Module, list[ast.AST]]] = {}


def nodes(tree: ast.Module) -> list[ast.AST]:
    """ast.walk(tree), walked once per tree: the scans below each read every node of
    every source file, eight tests over again (the tree is kept with its nodes, so a
    tree a test plants in CODE and drops again cannot leave its id to another)."""
    if id(tree) not in _WALKED:
        _WALKED[id(tree)] = (tree, list(ast.walk(tree)))
    return _WALKED[id(tree)][1]


def _called(node: ast.Call) -> str:
    return node.func.id if isinstance(node.func, ast.Name) else node.func.attr if isinstance(node.func, ast.Attribute) else ""


def finding_ids() -> set[str]:
    """The ids in Finding(id="x-y", ...), Finding("x-y", ...) and ok("x-y", ...)."""
    ids = set()
    for _, tree in CODE:
        for node in nodes(tree):
            if isinstance(node, ast.Call) and _called(node) in ("Finding", "ok"):
                arg = next((k.value for k in node.keywords if k.arg == "id"), node.args[0] if node.args else None)
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    ids.add(arg.value)
    return ids


# The name each kind is declared under in its area module: what an emitter imports and calls.
KIND_NAMES = {name: k for area in AREAS for name, k in vars(area).items() if isinstance(k, FindingKind)}
# The keywords of a kind call that are not template fields.
NOT_FIELDS = {"evidence", "case", "fix_case", "severity", "no_why", "no_fix"}
# Files that still build a Finding(...) themselves, being converted to kind calls; the list
# only shrinks. Failure patterns (knowledge/patterns/, knowledge/story.py's pattern findings)
# and lint diagnostics are their own documented units, with their words beside their rule.
OWN_FINDINGS = ("core/", "knowledge/story.py", "linter/")
NOT_CONVERTED: tuple[str, ...] = ()


def kind_calls() -> list[tuple[str, int, FindingKind, ast.Call]]:
    """Every call of a kind by its declared name (`GPU_LOST(...)`, `gpus.GPU_LOST(...)`)."""
    out = []
    for rel, tree in CODE:
        for node in nodes(tree):
            if isinstance(node, ast.Call):
                name = _called(node)
                if name in KIND_NAMES:
                    out.append((rel, node.lineno, KIND_NAMES[name], node))
    return out


def kind_ids() -> set[str]:
    """The ids the code reports through kinds: named, called, or looked up with kind_of("id")."""
    ids = set()
    for _, tree in CODE:
        for node in nodes(tree):
            if isinstance(node, ast.Name) and node.id in KIND_NAMES:
                ids.add(KIND_NAMES[node.id].id)
            elif isinstance(node, ast.Attribute) and node.attr in KIND_NAMES:
                ids.add(KIND_NAMES[node.attr].id)
            elif isinstance(node, ast.alias) and node.name in KIND_NAMES:
                ids.add(KIND_NAMES[node.name].id)
            elif isinstance(node, ast.Call) and _called(node) == "kind_of" and node.args and isinstance(node.args[0], ast.Constant):
                ids.add(node.args[0].value)
    return ids


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def wrong_kind_calls(calls) -> list[str]:
    """The kind calls whose case or fields do not match the kind's templates."""
    wrong = []
    for rel, line, k, call in calls:
        where = f"{rel}:{line} {k.id}"
        kw = {a.arg: a.value for a in call.keywords}
        if None in kw:  # **fields: not checked here
            continue
        given = set(kw) - NOT_FIELDS
        case = kw.get("case")
        fix_case = kw.get("fix_case", case)
        needed: set[str] = set()
        allowed: set[str] = set()
        for name, chosen in (("title", case), ("why", case), ("fix", fix_case)):
            if name != "title" and isinstance(kw.get(f"no_{name}"), ast.Constant) and kw[f"no_{name}"].value is True:
                continue
            texts = k.texts(name)
            allowed |= {f for t in texts.values() for f in _fields(t)}
            if list(texts) in ([], [""]):
                needed |= _fields(texts.get("", ""))
            elif isinstance(chosen, ast.Constant):
                needed |= _fields(texts.get(chosen.value, ""))
            elif chosen is None:
                wrong.append(f"{where}: its {name} has cases, name one ({sorted(texts)})")
        for key in ("case", "fix_case"):
            named = kw.get(key)
            if isinstance(named, ast.Constant) and not any(named.value in k.texts(n) for n in ("title", "why", "fix")):
                wrong.append(f"{where}: none of its texts has a case {named.value!r}")
        titles = k.texts("title")
        if isinstance(case, ast.Constant) and list(titles) != [""] and case.value not in titles:
            wrong.append(f"{where}: its title has no case {case.value!r}")
        if not needed <= given:
            wrong.append(f"{where}: fills {sorted(given)}, its texts need {sorted(needed)}")
        if not given <= allowed:
            wrong.append(f"{where}: fills {sorted(given - allowed)}, which no text of it has")
        for sev in ast.walk(kw.get("severity") or ast.Pass()):  # Severity.X, or each branch of a choice
            if isinstance(sev, ast.Attribute) and sev.attr in Severity.__members__ and Severity[sev.attr] not in k.severities:
                wrong.append(f"{where}: reported as {sev.attr}, its severities are {k.severity_text}")
    return wrong


def unused_cases(calls) -> list[str]:
    """The cases of a kind that no call names (a kind called with a case chosen at run time counts as all used)."""
    used: dict[str, set] = {}
    for _, _, k, call in calls:
        kw = {a.arg: a.value for a in call.keywords}
        for key in ("case", "fix_case"):
            if key in kw:
                used.setdefault(k.id, set()).add(kw[key].value if isinstance(kw[key], ast.Constant) else ...)
    out = []
    for k in FINDINGS.values():
        names = {c for name in ("title", "why", "fix") for c in k.texts(name) if c}
        if ... in used.get(k.id, set()):
            continue
        out += [f"{k.id}: {c}" for c in sorted(names - used.get(k.id, set()))]
    return out


def written_whys(skip: tuple[str, ...] = OWN_WHY, name: str = "why") -> list[str]:
    """`why=` (or `fix=`) given a text written in place: a string, an f-string, or
    a sum of strings. For a fix, an empty string (no fix to give) is not a text."""
    found = []
    for rel, tree in CODE:
        if rel.startswith(skip):
            continue
        for node in nodes(tree):
            if isinstance(node, ast.keyword) and node.arg == name:
                lookups = {id(n) for c in ast.walk(node.value) if isinstance(c, ast.Call) for n in ast.walk(c)}
                if any(isinstance(n, ast.JoinedStr) or isinstance(n, ast.Constant) and isinstance(n.value, str) and (n.value or name == "why")
                       for n in ast.walk(node.value) if id(n) not in lookups):
                    found.append(f"{rel}:{node.value.lineno}")
    return found


def written_fixes(skip: tuple[str, ...] = OWN_FIX) -> list[str]:
    return written_whys(skip, "fix")


def test_the_id_scan_finds_ids():
    assert "allreduce-correct" in kind_ids()  # a kind called by name
    tree = ast.parse('Finding(id="a-b"); ok("c-d", "t", "x"); Finding("e-f", Severity.OK, "t")')
    CODE.append(("checks/example.py", tree))
    try:
        assert {"a-b", "c-d", "e-f"} <= finding_ids()
    finally:
        CODE.pop()


def test_every_finding_id_is_in_the_catalog():
    missing = sorted(finding_ids() - set(FINDINGS))
    assert missing == [], f"add a FindingKind to src/gpudoctor/catalog/findings/ for: {missing}, then run {COMMAND}"


def test_every_kind_is_a_finding_the_code_reports():
    unused = sorted(set(FINDINGS) - finding_ids() - kind_ids())
    assert unused == [], f"no code reports these ids any more: remove their kinds, then run {COMMAND}: {unused}"


def test_every_kind_call_names_its_case_and_fills_its_fields():
    calls = kind_calls()
    assert wrong_kind_calls(calls) == []


def test_the_kind_call_check_notices_a_wrong_call():
    tree = ast.parse('VISIBLE_DEVICES_INVALID(case="no-such", evidence={}); FLEET_NCCL_MISMATCH(evidence={}); '
                     'FLEET_NCCL_MISMATCH(version="1", odd="n", extra=1); MIG_ENABLED(severity=Severity.OK if a else Severity.ERROR)')
    calls = [("checks/example.py", 1, KIND_NAMES[_called(n)], n) for n in ast.walk(tree) if isinstance(n, ast.Call) and _called(n) in KIND_NAMES]
    wrong = wrong_kind_calls(calls)
    assert any("none of its texts has a case 'no-such'" in w for w in wrong)
    assert any("fleet-nccl-mismatch: fills [], its texts need" in w for w in wrong)
    assert any("fills ['extra'], which no text of it has" in w for w in wrong)
    assert any("mig-enabled: reported as OK" in w for w in wrong)


def test_no_new_file_builds_its_own_findings():
    # A file converted to kind calls leaves NOT_CONVERTED; none may join it.
    building = {rel for rel, tree in CODE for n in nodes(tree)
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("Finding", "ok")}
    assert sorted(building - set(NOT_CONVERTED) - {r for r in building if r.startswith(OWN_FINDINGS)}) == []


def test_a_kind_fills_its_words_and_refuses_a_wrong_case():
    k = FindingKind(id="a-b", severity=Severity.WARN, also=(Severity.INFO,), area="x", emitted_by="", summary="", evidence="",
                    title="{n} GPUs", why={"one": "one {n}", "two": "two"}, fix="run {cmd}")
    f = k(case="one", evidence={"v": 1}, n=2, cmd="ls")
    assert (f.id, f.severity, f.title, f.why, f.fix, f.area, f.evidence) == ("a-b", Severity.WARN, "2 GPUs", "one 2", "run ls", "x", {"v": 1})
    assert k(case="two", severity=Severity.INFO, no_fix=True, n=1).to_dict()["fix"] == ""
    with pytest.raises(KeyError):
        k(n=1, cmd="ls")  # its why has cases: one must be named
    with pytest.raises(KeyError):
        k(case="one", n=1)  # a field is not filled in
    assert k.severity_text == "warn / info"


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
    assert written_whys() == [], "move these sentences into the kind (why=) and call the kind"


def test_no_emitter_writes_its_own_fix():
    assert written_fixes() == [], "move these commands into the kind (fix=) and call the kind"


def test_the_written_fix_scan_finds_them():
    every = written_fixes(skip=())
    for own in OWN_FIX:
        assert any(w.startswith(own) for w in every), f"{own} takes its fix from the catalog now"
    tree = ast.parse('Finding(id="a-b", fix="x"); Finding(id="a-b", fix=f"{n} x"); Finding(id="a-b", fix=fix("a-b")); '
                     'Finding(id="a-b", fix=fix("a-b") if n else "")')
    CODE.append(("checks/example.py", tree))
    try:
        assert [w for w in written_fixes() if w.startswith("checks/example.py")] == ["checks/example.py:1"] * 2
    finally:
        CODE.pop()


def test_the_written_why_scan_finds_them():
    # Each file let off still writes its own (else it must leave the list).
    every = written_whys(skip=())
    for own in OWN_WHY:
        assert any(w.startswith(own) for w in every), f"{own} takes its why from the catalog now"
    tree = ast.parse('Finding(id="a-b", why="x"); Finding(id="a-b", why=f"{n} x"); Finding(id="a-b", why=why("a-b"))')
    CODE.append(("checks/example.py", tree))
    try:
        assert [w for w in written_whys() if w.startswith("checks/example.py")] == ["checks/example.py:1"] * 2
    finally:
        CODE.pop()


def _unused(name: str) -> list[str]:
    """The texts of the kinds (`why` or `fix`, each case) that no code asks for: by a kind
    call naming its case (or any case, chosen at run time)."""
    used: set[tuple[str, object]] = set()
    for _, _, k, call in kind_calls():
        kw = {a.arg: a.value for a in call.keywords}
        off = kw.get(f"no_{name}")
        if isinstance(off, ast.Constant) and off.value is True:
            continue
        chosen = kw.get("fix_case", kw.get("case")) if name == "fix" else kw.get("case")
        if list(k.texts(name)) == [""] or chosen is None:
            used.add((k.id, ""))
        else:
            used.add((k.id, chosen.value if isinstance(chosen, ast.Constant) else ...))
    called = kind_ids()
    return sorted(f"{k.id}: {c or '(one text)'}" for k in FINDINGS.values() for c in k.texts(name)
                  if (k.id, c) not in used and (k.id, ...) not in used and not (c == "" and k.id in called and name == "fix"))


def test_every_sentence_in_the_catalog_is_used():
    assert _unused("why") == [], "no code says these any more: remove them from the catalog"


def test_every_fix_in_the_catalog_is_used():
    assert _unused("fix") == [], "no code gives these fixes any more: remove them from the catalog"


def test_every_kind_says_why_and_how_to_fix():
    assert [k.id for k in FINDINGS.values() if not (k.texts("fix") or k.more_fix.strip()) or not (k.texts("why") or k.more_why.strip())] == []


def test_the_docs_index_lists_every_page():
    index = (DOCS / "README.md").read_text()
    for folder in [k.folder for k in KINDS] + ["commands"]:
        for page in (DOCS / folder).glob("*.md"):
            assert f"({folder}/{page.name})" in index, f"docs/README.md does not list {folder}/{page.name}"


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
