"""The multi-node tier runs only when asked (`GD_MULTINODE_TIER=1`, as .ci/run
does) and where it can (root, `ip netns`): it starts real nodes, which takes a
minute or two, so the everyday `pytest -q` leaves it out with one line saying why."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from nodes import available  # noqa: E402


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent
    mine = [item for item in items if here in Path(str(item.fspath)).parents]
    if not mine:
        return
    if os.environ.get("GD_MULTINODE_TIER") != "1":
        reason = "the multi-node tier runs with GD_MULTINODE_TIER=1 (as .ci/run does)"
    else:
        reason = available() or ""
    if reason:
        for item in mine:
            item.add_marker(pytest.mark.skip(reason=reason))
