"""check's Report with what the CLI draws above the findings: the probed facts
(one node) or the nodes x facts table (several). Neither is in the JSON beyond
what `data` already carries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpudoctor.core.findings import Report


@dataclass(frozen=True)
class CheckReport(Report):
    facts: Any = None  # probe/facts.Facts of the one node judged
    table: dict | None = None  # checks/fleet.fleet_table of the nodes compared
