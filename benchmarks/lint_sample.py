"""lint on a sampled corpus of user scripts (issue 41): precision and recall
together, per rule and per severity.

PART_DIR holds the cases (`<id>.py`) and `manifest.json`, a list of cases,
each with `expected`: the pitfalls a reader found in the code, written before
lint was run on it (`{"line", "pitfall", "severity", "why"}`). A pitfall named
by a rule id is one lint claims; any other name is a pitfall lint has no rule
for (listed, not scored).

    python benchmarks/lint_sample.py tests/fixtures/lint_sample/dev [--json]

`gpudoctor lint --format json --no-config --exit-zero` is run once over every
case file (as a subprocess, the way a user runs it). A diagnostic matches an
expected pitfall of the same rule within 2 lines of its line; each expected
pitfall is matched at most once. A diagnostic that reports one cause seen at
several lines (its `also` lines) also takes the expected pitfalls of its rule
near those lines: a reader may have written the one cause at each place.
Per rule: precision = matched diagnostics / diagnostics (`tp` / `tp` + `fp`),
recall = expected pitfalls found / expected (`tp` + `also`, the extra ones a
diagnostic's other lines found, over that + `fn`); a reader's name for a
pitfall that a rule claims under another id is read as that id: ALIASES. Per severity, a match counts only when the severities
agree too (an error the reader called a warning is not a right error).
`syntax-error` and `unreadable-file` are counted apart: a snippet cut off
mid-statement is not valid Python, and saying so is neither right nor wrong
about distributed training.

Exit 0 after printing; 2 when PART_DIR or its manifest is missing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

RULES_DIR = Path(__file__).resolve().parents[1] / "docs" / "rules"
NOT_SCORED = frozenset({"syntax-error", "unreadable-file"})
SLACK = 2  # lines either side: a diagnostic may point at the call or at its argument
# A reader's name for a pitfall, written before a rule claimed it, -> the rule that claims it
# now. Only the name is mapped: the line, severity and why stay the reader's.
ALIASES = {
    "ddp-without-init": "dist-without-init",  # dev: DDP built before any process group
    "multigpu-collective": "removed-distributed-api",  # dev3: all_gather_multigpu, broadcast_multigpu
    "removed-pipeline-sync": "removed-distributed-api",  # dev3: torch.distributed.pipeline.sync.Pipe
    "init-without-master-addr": "master-addr-not-set",  # dev: mp.spawn workers on env:// with no MASTER_ADDR
    "unknown-ddp-kwarg": "unexpected-argument",  # dev: DDP(devices_ids=...)
    "module-init-kwargs": "unexpected-argument",  # dev2: super().__init__(embedding=...) in an nn.Module
    "rank-env-overwritten": "rank-hardcoded",  # dev: os.environ["RANK"] = "0" in a torchrun job
    "master-port-chosen-per-process": "master-port-per-process",  # heldout3: a free port picked beside the init
    "dataparallel-unknown-kwarg": "unexpected-argument",  # heldout3: nn.DataParallel(net, devices=[...])
    "ddp-without-device-ids": "ddp-no-device-ids",  # heldout4: MMDistributedDataParallel(model.cuda(), ...)
    "local-rank-as-global-index": "local-rank-as-global-rank",  # heldout3: all_gather's list indexed by local_rank
    "rank0-check-by-local-index": "local-rank-as-global-rank",  # dev3: reduce(dst=0) read where args.gpu == 0
    "ddp-single-process-multi-gpu": "ddp-no-device-ids",  # heldout3: one process, DDP with no device_ids over every GPU
    "ddp-one-process-many-gpus": "ddp-no-device-ids",  # heldout6: world_size=1, DDP over all visible GPUs
    "cuda-env-set-late": "cuda-visible-devices-late",  # heldout8: CUDA_LAUNCH_BLOCKING set after set_device
    "save-on-local-rank-zero": "local-rank-as-global-rank",  # dev: the DDP tutorial's snapshot under local_rank == 0
    # heldout12 u057: an early-stopping break under `if rank == 0:` in an epoch loop whose other ranks
    # go on to the next epoch's collectives (the rule's `break` case)
    "rank-conditional-early-exit": "collective-under-rank-condition",
    "early-stop-on-one-rank": "collective-under-rank-condition",  # heldout10 u012: the same break, rank 0 only
    # heldout17 u052: the patience test and its break under `if config['rank'] == 0:`, a barrier after it (the
    # rule's `break` case again; u042's shard-dependent early stop, under no rank test, is a miss of the rule)
    "rank-local-early-stop": "collective-under-rank-condition",
    "ddp-unwrapped-at-once": "dataparallel-unwrapped-at-once",  # dev7 u046: `model = DDP(model)`, then `model.module`
    # heldout13 u041, u021: a local assigned only under a rank test and read on every rank (UnboundLocalError
    # on the others), which undefined-name's `_bound_on_some_ranks` says in those words
    "unbound-on-some-ranks": "undefined-name",
    # heldout16 u026: `hp` read in the function mp.spawn runs, bound only by the main block (undefined-name's
    # names-not-in-reach case says it in those words)
    "spawn-worker-uses-main-block-name": "undefined-name",
    "name-bound-on-one-rank": "undefined-name",  # heldout18 u004: `acc` bound only under `gpu_id == 0`, read on every rank
    # heldout19 u015: `tokenization` read in the function mp.spawn runs, bound only by the main block (the
    # names-not-in-reach case of undefined-name, as spawn-worker-uses-main-block-name above)
    "name-bound-in-main-guard-under-spawn": "undefined-name",
    "ddp-loader-without-distributed-sampler": "no-distributed-sampler",  # dev7 u012: shuffle=True, no sampler, in DDP mode
    "no-gradient-sync-across-ranks": "no-gradient-sync",  # heldout13 u034: DataParallel in each process of a group
    "model-not-wrapped-in-ddp": "no-gradient-sync",  # heldout11 u045: a group, a trained model, no DDP
    # heldout14 u017: mp.spawn's `args=` tuple does not fit the worker's parameters, which
    # unexpected-argument's spawn arity check says (dev7 u025 was scored under that id)
    "spawn-args-mismatch": "unexpected-argument",
    # heldout9 to heldout14: DDP given device_ids around a module still on the CPU (DDP's ValueError)
    "ddp-wraps-module-before-to-device": "ddp-module-on-cpu",
    "ddp-device-ids-on-cpu-module": "ddp-module-on-cpu",
    "ddp-device-ids-module-on-cpu": "ddp-module-on-cpu",
    # heldout20 u046 (FashionMNIST(download=True) in the spawned worker), heldout4 q060 and heldout20 u040
    # (`download=` a rank test, the other ranks not waiting)
    "download-all-ranks": "dataset-download-all-ranks",
    "download-without-barrier": "dataset-download-all-ranks",
    "barrier-after-rank0-download": "dataset-download-all-ranks",
    "lr-scheduler-on-one-rank": "scheduler-step-on-one-rank",  # heldout13 u015: ReduceLROnPlateau.step on rank 0
    # h15 u003: a SummaryWriter on the main GPU only, None elsewhere, flushed on every rank
    "rank-only-object-used": "rank0-object-used-on-all-ranks",
    "nonexistent-dist-function": "nonexistent-dist-api",  # heldout21 u019: dist.init_process_method(...)
    # heldout21 u095, u105: nanoGPT's estimate_loss() forward of the FSDP model under `master_process` only, which
    # ddp-forward-on-one-rank claims for FSDP models too (its all-gather of the parameters)
    "fsdp-forward-on-one-rank": "ddp-forward-on-one-rank",
    # heldout21 u088, u095, u105: an FSDP full state dict gathered only under a rank test, which
    # collective-under-rank-condition claims (the gather is a collective: heldout21 u103)
    "fsdp-state-dict-on-one-rank": "collective-under-rank-condition",
}


def known_rules() -> set[str]:
    return {p.stem for p in RULES_DIR.glob("*.md") if p.stem != "index"}


def run_lint(part: Path, files: list[str]) -> list[dict]:
    """One lint run over every case file; the diagnostics, path relative to PART_DIR."""
    # lint runs inside PART_DIR (paths in the report are the manifest's); a relative PYTHONPATH
    # (`PYTHONPATH=src`, the caller's checkout) would point nowhere there and silently run the
    # installed gpudoctor instead, so it is made absolute first.
    pythonpath = os.pathsep.join(os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)
    env = {**os.environ, "PYTHONPATH": pythonpath} if pythonpath else None
    proc = subprocess.run(
        [sys.executable, "-m", "gpudoctor", "lint", "--format", "json", "--no-config", "--exit-zero", *files],
        cwd=part, capture_output=True, text=True, timeout=600, env=env)
    # exit 1 can still come with --exit-zero: a file that is not valid Python is never passed as checked
    if proc.returncode not in (0, 1) or not proc.stdout.strip():
        raise SystemExit(f"lint failed (exit {proc.returncode}): {proc.stderr.strip()[-500:]}")
    return list(json.loads(proc.stdout)["diagnostics"])


def rule_errors(part: Path, files: list[str]) -> list[str]:
    """Each case file linted again in this process with rule exceptions raised: a user's run
    swallows a rule's exception (that rule says nothing for the file), which would read here as
    a miss, not as the bug it is."""
    import traceback

    from gpudoctor.linter import engine

    engine.RAISE_RULE_ERRORS = True
    broken = []
    for name in files:
        try:
            engine.lint_files([str(part / name)])
        except Exception as exc:  # the point is to list them, whatever they are
            frames = [f for f in traceback.extract_tb(exc.__traceback__) if "gpudoctor" in f.filename]
            where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"
            broken.append(f"{name}: {type(exc).__name__} at {where}: {str(exc)[:100]}")
    return broken


def distance(e: dict, lines: list[int]) -> int:
    return min(abs(e["line"] - line) for line in lines)


def match(expected: list[dict], found: list[dict]) -> list[tuple[dict | None, dict | None]]:
    """Pair diagnostics with expected pitfalls of one case: same rule, nearest line within SLACK.
    A diagnostic is paired first through its own line, then through its `also` lines (the other
    places of the one cause it reports), and there with every expected pitfall of its rule left
    near one of them: those pairs after the first are marked `"also": True` in the pair's
    diagnostic copy, found pitfalls but not another right diagnostic."""
    pairs: list[tuple[dict | None, dict | None]] = []
    free = list(expected)
    ordered = sorted(found, key=lambda d: d["line"])
    for d in ordered:  # own lines first: a diagnostic's other places never take another's pitfall
        near = [e for e in free if e["pitfall"] == d["rule"] and abs(e["line"] - d["line"]) <= SLACK]
        if near:
            best = min(near, key=lambda e: abs(e["line"] - d["line"]))
            free.remove(best)
            pairs.append((best, d))
    matched = {id(d) for _, d in pairs}
    for d in ordered:
        also = [line for line in d.get("also", []) if line != d["line"]]
        near = [e for e in free if e["pitfall"] == d["rule"] and also and distance(e, also) <= SLACK]
        for e in sorted(near, key=lambda e: distance(e, also)):
            free.remove(e)
            pairs.append((e, dict(d, also_pair=id(d) in matched)))
            matched.add(id(d))
        if id(d) not in matched:
            pairs.append((None, d))
    pairs.extend((e, None) for e in free)
    return pairs


def ratio(num: int, den: int) -> str:
    return f"{num / den:.2f}" if den else "  - "


def score(part: Path) -> dict:
    cases = json.loads((part / "manifest.json").read_text(encoding="utf-8"))
    rules = known_rules()
    diagnostics = run_lint(part, [c["file"] for c in cases])
    by_file: dict[str, list[dict]] = {}
    for d in diagnostics:
        by_file.setdefault(os.path.normpath(d["path"]), []).append(d)
    per_rule: Counter[tuple[str, str]] = Counter()
    per_sev: Counter[tuple[str, str]] = Counter()
    misses, false_alarms, unclaimed, not_scored, sev_mismatch = [], [], [], [], []
    renamed = [f"{case['id']}:{e['line']} {e['pitfall']} -> {ALIASES[e['pitfall']]}"
               for case in cases for e in case["expected"] if e["pitfall"] in ALIASES]
    for case in cases:
        case["expected"] = [dict(e, pitfall=ALIASES.get(e["pitfall"], e["pitfall"])) for e in case["expected"]]
        found = by_file.get(os.path.normpath(case["file"]), [])
        not_scored += [f"{case['id']}:{d['line']} {d['rule']}" for d in found if d["rule"] in NOT_SCORED]
        found = [d for d in found if d["rule"] not in NOT_SCORED]
        # counted apart on both sides: a reader's "not valid Python" is no more scored than lint's
        not_scored += [f"{case['id']}:{e['line']} {e['pitfall']} (reader)"
                       for e in case["expected"] if e["pitfall"] in NOT_SCORED]
        claimed = [e for e in case["expected"] if e["pitfall"] in rules and e["pitfall"] not in NOT_SCORED]
        unclaimed += [f"{case['id']}:{e['line']} {e['pitfall']} ({e['severity']})"
                      for e in case["expected"] if e["pitfall"] not in rules]
        for exp, diag in match(claimed, found):
            if exp is not None and diag is not None and diag.get("also_pair"):
                per_rule[(diag["rule"], "also")] += 1  # another place of a diagnostic already right
                per_sev[(exp["severity"], "also" if exp["severity"] == diag["severity"] else "fn")] += 1
                continue
            if exp is not None and diag is not None:
                per_rule[(diag["rule"], "tp")] += 1
                if exp["severity"] == diag["severity"]:
                    per_sev[(diag["severity"], "tp")] += 1
                else:
                    per_sev[(diag["severity"], "fp")] += 1
                    per_sev[(exp["severity"], "fn")] += 1
                    sev_mismatch.append(f"{case['id']}:{diag['line']} {diag['rule']} lint {diag['severity']}, "
                                        f"reader {exp['severity']}")
            elif diag is not None:
                per_rule[(diag["rule"], "fp")] += 1
                per_sev[(diag["severity"], "fp")] += 1
                false_alarms.append(f"{case['id']}:{diag['line']} {diag['rule']} ({diag['severity']}): "
                                    f"{diag['message'][:110]}")
            elif exp is not None:
                per_rule[(exp["pitfall"], "fn")] += 1
                per_sev[(exp["severity"], "fn")] += 1
                misses.append(f"{case['id']}:{exp['line']} {exp['pitfall']} ({exp['severity']}): {exp['why'][:90]}")
    table = {}
    for rule in sorted({r for r, _ in per_rule}):
        tp, fp, fn = per_rule[(rule, "tp")], per_rule[(rule, "fp")], per_rule[(rule, "fn")]
        table[rule] = {"tp": tp, "fp": fp, "fn": fn}
        if per_rule[(rule, "also")]:
            table[rule]["also"] = per_rule[(rule, "also")]
    sev = {}
    for s in ("error", "warning"):
        sev[s] = {"tp": per_sev[(s, "tp")], "fp": per_sev[(s, "fp")], "fn": per_sev[(s, "fn")]}
        if per_sev[(s, "also")]:
            sev[s]["also"] = per_sev[(s, "also")]
    return {"part": str(part), "cases": len(cases), "diagnostics": len(diagnostics), "rules": table,
            "severity": sev, "misses": misses, "false_alarms": false_alarms,
            "severity_mismatch": sev_mismatch, "unclaimed": unclaimed, "not_scored": not_scored,
            "renamed": renamed, "rule_errors": rule_errors(part, [c["file"] for c in cases])}


def show(r: dict) -> None:
    print(f"{r['part']}: {r['cases']} cases, {r['diagnostics']} diagnostics")
    print(f"  {'rule':<34} {'tp':>3} {'fp':>3} {'fn':>3}  precision recall")

    def row(name: str, c: dict) -> None:
        found = c["tp"] + c.get("also", 0)  # a diagnostic's other places find pitfalls, not diagnostics
        also = f"  (+{c['also']} at its other lines)" if c.get("also") else ""
        print(f"  {name:<34} {c['tp']:>3} {c['fp']:>3} {c['fn']:>3}  {ratio(c['tp'], c['tp'] + c['fp']):>9} "
              f"{ratio(found, found + c['fn']):>6}{also}")

    for rule, c in r["rules"].items():
        row(rule, c)
    row("all rules", {k: sum(c.get(k, 0) for c in r["rules"].values()) for k in ("tp", "fp", "fn", "also")})
    for s, c in r["severity"].items():
        row(f"severity {s}", c)
    for title, key in (("misses", "misses"), ("false alarms", "false_alarms"),
                       ("severity differs", "severity_mismatch"),
                       ("pitfalls no rule claims (lint could learn)", "unclaimed"),
                       ("reader's pitfall names read as the rule that claims them now", "renamed"),
                       ("not scored (not valid Python)", "not_scored"),
                       ("rule exceptions (a user's run hides them: that rule said nothing for the file)", "rule_errors")):
        print(f"{title}: {len(r[key])}")
        for line in r[key]:
            print(f"  {line}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("part", help="folder with the cases and manifest.json")
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    args = parser.parse_args()
    part = Path(args.part)
    if not (part / "manifest.json").is_file():
        print(f"no manifest.json in {part}", file=sys.stderr)
        return 2
    result = score(part.resolve())
    result["part"] = args.part
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        show(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
