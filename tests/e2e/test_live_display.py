"""What a user watching a terminal sees while `allreduce` runs: the live results
table with its progress bar. stderr is a real pseudo-terminal here, so rich animates.
train-smoke's spinner naming each rank's stage is read on the terminal of
tests/e2e/test_train_smoke.py::test_default_run_passes_every_verification_and_json_matches_rich_output,
whose rich run is that one."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from terminal import on_a_terminal  # noqa: E402

pytestmark = pytest.mark.slow


def test_allreduce_shows_the_table_filling_in_with_a_progress_bar(tmp_path):
    code, screen = on_a_terminal(
        ["allreduce", "--nproc", "2", "--sizes", "4K,64K", "--iters", "2", "--warmup", "1", "--json"], tmp_path / "out"
    )
    assert code == 0, screen[-2000:]
    assert "all_reduce: 2 rank(s), gloo on cpu" in screen, screen[-2000:]  # the table's title
    # The bar, from the first frame to the last (frames in between, and the first frame's
    # stage word, "starting ranks" or already "started", depend on timing).
    assert re.search(r"(starting ranks|started) .*\b0/2\b", screen) and re.search(r"finished .*\b2/2\b", screen), screen[-2000:]
    assert re.search(r"│\s*4K\s*│", screen) and re.search(r"│\s*64K\s*│", screen), screen[-2000:]  # rows as they come
    assert (tmp_path / "out").read_text().lstrip().startswith("{")  # stdout kept clean for --json
