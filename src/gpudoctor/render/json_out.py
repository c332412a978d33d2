"""`--json`: one object on stdout; the schema is in docs/json.md."""

from __future__ import annotations

import json
import math
from typing import Any

from gpudoctor.core.findings import Report


def _clean(value: Any) -> Any:
    # JSON has no NaN/Infinity; a measurement that could not be taken is null.
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def report_json(report: Report, strict: bool = False) -> str:
    return json.dumps(_clean(report.to_dict(strict)), indent=2, default=str)
