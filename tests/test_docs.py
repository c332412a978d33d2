"""Every finding id, lint rule and command has its documentation page."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "gpudoctor"
ID = re.compile(r"""(?:Finding\(\s*id=|\bok\(\s*)["']([a-z0-9]+(?:-[a-z0-9]+)+)["']""")


def finding_ids() -> set[str]:
    ids = set()
    for path in SRC.rglob("*.py"):
        ids.update(ID.findall(path.read_text()))
    return ids


def test_the_id_scan_finds_ids():
    assert "rank-crashed" in finding_ids()


def test_every_finding_id_has_a_page():
    missing = sorted(i for i in finding_ids() if not (ROOT / "docs" / "findings" / f"{i}.md").exists())
    assert missing == [], f"write docs/findings/<id>.md for: {missing}"


def test_every_command_has_a_page():
    for command in ("check", "allreduce", "train-smoke", "lint", "run"):
        assert (ROOT / "docs" / "commands" / f"{command}.md").exists(), command


def test_every_page_says_how_to_fix():
    for page in (ROOT / "docs" / "findings").glob("*.md"):
        assert re.search(r"(?im)^#+ .*fix|^\*\*fix", page.read_text()), f"{page.name} has no fix section"


def test_the_docs_index_lists_every_page():
    index = (ROOT / "docs" / "README.md").read_text()
    for folder in ("findings", "rules", "commands"):
        for page in (ROOT / "docs" / folder).glob("*.md"):
            assert f"({folder}/{page.name})" in index, f"docs/README.md does not list {folder}/{page.name}"
