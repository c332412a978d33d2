"""`gpudoctor run`'s per-rank table of where the step time went, and its live
status line: plain text from the report's "steps" data (knowledge/stragglers.py's
verdict_json, docs/json.md)."""

from __future__ import annotations

from typing import Any


def steps_table(steps: dict[str, Any] | None, prefix: str = "") -> str:
    """One line per rank: ms per step in each phase, and how late it arrives."""
    if not steps or not steps.get("ranks"):
        return ""
    rows, phases = steps["ranks"], steps["phases"]
    nodes = len({r["node"] for r in rows}) > 1
    head = ["rank", *(["node"] if nodes else []), "step ms", *phases, "late ms", "last"]
    lines = [head]
    for r in rows:
        lines.append(
            [
                str(r["rank"]),
                *([str(r["node"])] if nodes else []),
                f"{r['step_ms']:.1f}",
                *(f"{r['phases_ms'][p]:.1f}" for p in phases),
                f"{r['late_ms']:.1f}",
                f"{r['last_share']:.0%}",
            ]
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    title = (
        f"gpudoctor run: time per step in ms, mean of the {steps['steps_compared']} steps every rank made "
        f"({steps['steps_per_s']:.2f} steps/s; collective = waiting inside collectives; "
        "late = arrival after the first rank; last = share of steps it arrived last)"
    )
    out = [title] + ["  ".join(cell.rjust(w) for cell, w in zip(line, widths)).rstrip() for line in lines]
    return "".join(f"{prefix}{line}\n" for line in out)


def status_line(steps: dict[str, Any] | None) -> str:
    """The live line: steps/s and the slowest rank with the phase it loses time in."""
    slowest = (steps or {}).get("slowest")
    if not steps or not slowest:
        return "gpudoctor run: waiting for the ranks' first steps"
    if slowest["late_ms"] < 1:
        return f"gpudoctor run: {steps['steps_per_s']:.2f} steps/s; no rank late"
    return (
        f"gpudoctor run: {steps['steps_per_s']:.2f} steps/s; slowest rank {slowest['rank']} "
        f"({slowest['late_ms']:.0f} ms late per step, {slowest['phase']})"
    )
