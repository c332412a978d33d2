"""The fleet table of `gpudoctor check` on many nodes: one row per node, one
column per compared fact, the values that stand out marked; variables that
are the same everywhere listed once under it. Rich for the terminal, Markdown
for a bug report. It draws the plain table that checks/fleet.py `fleet_table`
computed, and decides nothing."""

from __future__ import annotations

from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from gpudoctor.render.markdown import table

STYLES = {"error": "bold red", "warn": "yellow", "info": "cyan"}
MARK = " *"  # a value that stands out, for terminals and pastes without colour


def _split(data: dict[str, Any]) -> tuple[list[dict], list[dict]]:
    """(columns to show: every fact, and the variables that differ; variables equal on every node)."""
    columns = data["columns"]
    shown = [c for c in columns if not c["variable"] or (c["severity"] != "ok" and not c["interface"])]
    same = [c for c in columns if c["variable"] and c["severity"] == "ok"]
    return shown, same


def _cell(column: dict, i: int) -> str:
    value = column["values"][i]
    return ("?" if value is None else value) + (MARK if column["odd"][i] else "")


class _TableOrBlocks:
    """The table where it fits the width; else one block per node, a fact a line
    (a narrow terminal, or COLUMNS in a log: a squeezed table loses its headers)."""

    def __init__(self, table: Table, blocks: list[Text]):
        self.table, self.blocks = table, blocks

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        natural = Measurement.get(console, options.update_width(100_000), self.table).maximum  # unsqueezed
        if natural <= options.max_width:
            yield self.table
        else:
            yield from self.blocks


def _blocks(data: dict[str, Any], shown: list[dict]) -> list[Text]:
    lines = [Text(f"{len(data['nodes'])} nodes", style="bold")]
    for i, node in enumerate(data["nodes"]):
        lines.append(Text.assemble(("node ", "bold"), (node["name"], "bold"), f"  ranks {node['ranks']}"))
        for c in shown:
            differs = c["severity"] != "ok"
            style = STYLES.get(c["severity"], "") if c["odd"][i] else "dim" if differs else ""
            lines.append(Text.assemble(f"    {c['label']}: ", (_cell(c, i), style)))
    return lines


def rich_fleet(data: dict[str, Any]) -> list[RenderableType]:
    shown, same = _split(data)
    nodes = data["nodes"]
    grid = Table(title=f"{len(nodes)} nodes", title_justify="left", header_style="bold", pad_edge=False)
    grid.add_column("node", no_wrap=True)
    grid.add_column("ranks", no_wrap=True)
    for c in shown:
        grid.add_column(c["label"])
    for i, node in enumerate(nodes):
        cells: list[RenderableType] = [node["name"], node["ranks"]]
        for c in shown:
            differs = c["severity"] != "ok"
            style = STYLES.get(c["severity"], "") if c["odd"][i] else "dim" if differs else ""
            cells.append(Text(_cell(c, i), style=style))
        grid.add_row(*cells)
    parts: list[RenderableType] = [_TableOrBlocks(grid, _blocks(data, shown))]
    if same:
        parts.append(Text("same on every node: " + ", ".join(f"{c['label']}={c['values'][0]}" for c in same), style="dim"))
    parts.append(Text(""))
    return parts


def markdown_fleet(data: dict[str, Any]) -> list[str]:
    shown, same = _split(data)
    nodes = data["nodes"]
    rows = ([n["name"], n["ranks"], *(_cell(c, i) for c in shown)] for i, n in enumerate(nodes))
    section = f"### Nodes\n\n{table(['node', 'ranks', *(c['label'] for c in shown)], rows)}"
    if any(any(c["odd"]) for c in shown):
        section += "\n\n`*`: differs from most nodes (or there is no majority)."
    if same:
        section += "\n\nSame on every node: " + ", ".join(f"`{c['label']}={c['values'][0]}`" for c in same)
    return [section]
