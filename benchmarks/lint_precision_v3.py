"""lint's precision on public code nobody here wrote (issue 28), per rule,
on the development and the held-out repositories separately.

The verdicts are data: tests/fixtures/lint_corpus_v3.json lists each
repository with its commit and its split (held-out when
int(sha256(repo)[:8], 16) % 4 == 0, decided before any diagnostic was
seen), and one judged verdict per diagnostic (repo, path, line, rule ->
right or not, and why), plus the real problems found by reading the code
(`misses`, for recall). Their code is never committed here.

    python benchmarks/lint_precision_v3.py [CORPUS] [--split dev|heldout|all]
    python benchmarks/lint_precision_v3.py CORPUS --extract MIRRORS  # first: write the files

`--extract` writes every .py / .ipynb file of each repository, at its
recorded commit, from bare git repositories `MIRRORS/owner+name/repo` (one
`git show` per file: an archive cut short by a missing object would leave
files truncated, and their "syntax errors" would be the extraction's).

With CORPUS (a folder with one `owner+name` sub-folder per repository, each
extracted at its commit), lint is run again on every repository of the
split and each diagnostic is matched with its verdict: unjudged ones are
printed (judge them, record them) and count against the exit status. Without
CORPUS, the stored verdicts are scored as recorded. The output says which.
Exit 0 when every diagnostic is judged; 1 otherwise; 2 for a missing folder.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

VERDICTS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "lint_corpus_v3.json"


def extract(repos: dict, mirrors: str, corpus: str) -> None:
    for repo, info in sorted(repos.items()):
        git = ["git", "--git-dir", os.path.join(mirrors, repo.replace("/", "+"), "repo")]
        listed = subprocess.run(git + ["ls-tree", "-r", "-z", "--name-only", info["commit"]],
                                capture_output=True, timeout=120)
        if listed.returncode != 0:
            print(f"cannot list {repo} at {info['commit']}", file=sys.stderr)
            continue
        for name in listed.stdout.decode("utf-8", "replace").split("\0"):
            if not name.endswith((".py", ".ipynb")):
                continue
            blob = subprocess.run(git + ["show", f"{info['commit']}:{name}"], capture_output=True, timeout=120)
            if blob.returncode != 0:
                continue  # not in the snapshot
            target = Path(corpus, repo.replace("/", "+"), name)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(blob.stdout)


def score(rows: list[dict], label: str) -> None:
    counts: Counter[tuple[str, bool]] = Counter((r["rule"], bool(r["verdict"])) for r in rows)
    right = sum(n for (_, v), n in counts.items() if v)
    wrong = sum(n for (_, v), n in counts.items() if not v)
    total = right + wrong
    print(f"{label}: {total} diagnostics judged, {right} right, {wrong} wrong, "
          f"precision {right / total if total else 1.0:.3f}")
    for rule in sorted({r for r, _ in counts}):
        r, w = counts[(rule, True)], counts[(rule, False)]
        print(f"  {rule:<34} {r:>3} right {w:>3} wrong  precision {r / (r + w):.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", nargs="?", help="folder with one owner+name sub-folder per repository")
    parser.add_argument("--verdicts", default=str(VERDICTS))
    parser.add_argument("--split", choices=("dev", "heldout", "all"), default="dev",
                        help="which repositories (held-out: score only at the end)")
    parser.add_argument("--extract", metavar="MIRRORS", help="write the repositories' files into CORPUS first")
    args = parser.parse_args()
    data = json.loads(Path(args.verdicts).read_text(encoding="utf-8"))
    if args.extract:
        if args.corpus is None:
            parser.error("--extract needs CORPUS")
        extract(data["repos"], args.extract, args.corpus)
    repos = {r: v for r, v in data["repos"].items() if args.split == "all" or v["split"] == args.split}
    stored = [v for v in data["verdicts"] if v["repo"] in repos]
    splits = ("dev", "heldout") if args.split == "all" else (args.split,)
    unjudged: list[str] = []
    if args.corpus is None:
        print(f"from the stored verdicts ({args.verdicts}); lint was not run")
        found = stored
    else:
        if not os.path.isdir(args.corpus):
            print(f"no corpus folder: {args.corpus}", file=sys.stderr)
            return 2
        from gpudoctor.linter.engine import lint_paths

        print(f"lint run again on the repositories under {args.corpus}")
        index = {(v["repo"], v["path"], v["line"], v["rule"], v.get("cell", 0)): v for v in stored}
        found = []
        for repo in sorted(repos):
            folder = os.path.join(args.corpus, repo.replace("/", "+"))
            if not os.path.isdir(folder):
                print(f"missing {repo} (extract it at {repos[repo]['commit']})", file=sys.stderr)
                continue
            for d in lint_paths([folder]).diagnostics:
                key = (repo, os.path.relpath(d.path, folder), d.line, d.rule, d.cell)
                if key in index:
                    found.append(index[key])
                else:
                    unjudged.append(f"{repo} {key[1]}:{f'cell {d.cell}:' if d.cell else ''}{d.line}: {d.rule} {d.message}")
    for split in splits:
        score([v for v in found if v["split"] == split], f"{split} ({sum(r['split'] == split for r in repos.values())} repositories)")
    misses = [m for m in data.get("misses", []) if m["repo"] in repos]
    if misses:
        caught = sum(bool(m["found"]) for m in misses)
        print(f"misses found by reading the code: {len(misses)}, reported by lint now: {caught} "
              f"(recall on them {caught / len(misses):.2f})")
    for line in unjudged:
        print(f"unjudged: {line}")
    return 1 if unjudged else 0


if __name__ == "__main__":
    sys.exit(main())
