"""Every finding id, lint rule and command has its documentation page, and the
generated pages are what the code says (`python -m gpudoctor.docs`)."""

import pathlib
import re
import subprocess
import sys

from gpudoctor.catalog.findings import FINDINGS
from gpudoctor.docs.__main__ import COMMAND, differences, main
from gpudoctor.docs.pages import KINDS

ROOT = pathlib.Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "gpudoctor"
DOCS = ROOT / "docs"
# Finding(id="x-y", ...), Finding("x-y", ...) and ok("x-y", ...).
ID = re.compile(r"""(?:\bFinding\(\s*(?:id=)?|\bok\(\s*)["']([a-z0-9]+(?:-[a-z0-9]+)+)["']""")
NOT_CODE = ("catalog", "docs")  # the catalog itself, and the generator


def finding_ids() -> set[str]:
    ids = set()
    for path in SRC.rglob("*.py"):
        if path.relative_to(SRC).parts[0] not in NOT_CODE:
            ids.update(ID.findall(path.read_text()))
    return ids


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


def test_every_entry_says_how_to_fix():
    assert [e.id for e in FINDINGS.values() if not e.fix.strip() or not e.why.strip()] == []


def test_the_docs_index_lists_every_page():
    index = (DOCS / "README.md").read_text()
    for folder in [k.folder for k in KINDS] + ["commands"]:
        for page in (DOCS / folder).glob("*.md"):
            assert f"({folder}/{page.name})" in index, f"docs/README.md does not list {folder}/{page.name}"


# A repository path cited in prose (`docs/pre-commit.md`, `tests/test_wheel.py`), and a
# Markdown link; code blocks and spans are left out (a link there is code, not a link).
CITED_PATH = re.compile(r"(?<![\w/.-])((?:docs|tests|benchmarks|src|examples)/[\w./-]*[\w-](?:\.\w+)?)")
MD_LINK = re.compile(r"\]\(([^)\s]+)\)")
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)
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
        for m in MD_LINK.finditer(CODE.sub("", page.read_text())):
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
