"""What a rank of a gpudoctor job imported: tests/rank_modules/sitecustomize.py, put on
PYTHONPATH with RANK_MODULES_OUT set, has every rank write its sys.modules at exit
(tests/e2e/test_rank_imports.py, tests/e2e/test_train_smoke.py)."""

from __future__ import annotations

import glob
import json
import os
from pathlib import Path

HELPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rank_modules")
# A rank pays for the doctor only what it runs there: none of the supervisor's side.
SUPERVISOR_SIDE = ("rich", "gpudoctor.launch.supervisor", "gpudoctor.hang.watch", "gpudoctor.render.console")


def recording_env(out: Path, env: dict[str, str]) -> dict[str, str]:
    """env with the ranks of the job it starts writing their modules to "OUT.<pid>.json"."""
    env = dict(env, RANK_MODULES_OUT=str(out))
    env["PYTHONPATH"] = os.pathsep.join([HELPER, *filter(None, [env.get("PYTHONPATH")])])
    return env


def recorded(out: Path) -> list[dict]:
    found = []
    for path in glob.glob(f"{out}.*.json"):
        with open(path) as fh:
            found.append(json.load(fh))
    return found


def supervisor_side(modules: list[str]) -> list[str]:
    return sorted(m for m in modules if m in SUPERVISOR_SIDE or m.startswith("rich."))
