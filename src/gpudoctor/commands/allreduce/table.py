"""The allreduce results table, nccl-tests' columns: as a rich Table (live on
stderr during the sweep, and in the final report) and as Markdown. It draws
rows in the shape the JSON carries them (bandwidth.public_row), so a Report
read back from JSON draws the same table."""

from __future__ import annotations

import math
from collections.abc import Iterable

from rich.table import Table

from gpudoctor.commands.allreduce.bandwidth import format_size

HEADERS = ["size", "count", "dtype", "time µs", "algbw GB/s", "busbw GB/s", "#wrong"]


def _number(value, digits: int) -> str:
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return "n/a"
    return f"{value:.{digits}f}"


def row_cells(row: dict) -> list[str]:
    return [
        format_size(row["bytes"]),
        str(row["count"]),
        row["dtype"],
        _number(row["time_us"], 1),
        _number(row["algbw_gbps"], 2),
        _number(row["busbw_gbps"], 2),
        str(row["wrong"]),
    ]


def heading(op: str, nproc: int, backend: str, device: str, iters: int) -> str:
    return f"{op}: {nproc} rank(s), {backend} on {device}, median of {iters} iteration(s)"


def results_table(rows: Iterable[dict], title: str = "") -> Table:
    table = Table(title=title or None, title_justify="left", header_style="bold")
    for i, name in enumerate(HEADERS):
        table.add_column(name, justify="left" if i in (0, 2) else "right")
    for row in rows:
        cells = row_cells(row)
        style = "bold red" if row["wrong"] else None
        table.add_row(*cells, style=style)
    return table


def average_line(summary: dict) -> str:
    """nccl-tests' last line: the bus bandwidth averaged over every size of the sweep."""
    avg = summary.get("avg_busbw_gbps")
    if not isinstance(avg, (int, float)):
        return ""
    return f"Avg bus bandwidth: {_number(avg, 4)} GB/s over {summary.get('sizes_run', '?')} size(s), {summary.get('placement', '')}"


def results_markdown(rows: Iterable[dict], title: str, summary: dict | None = None) -> str:
    from gpudoctor.render.markdown import table

    average = average_line(summary or {})
    return f"### Results\n\n{title}\n\n" + table(HEADERS, (row_cells(r) for r in rows)) + (f"\n\n{average}" if average else "")


CSV_COLUMNS = ("op", "bytes", "count", "dtype", "time_us", "algbw_gbps", "busbw_gbps", "wrong")


def results_csv(rows: Iterable[dict], summary: dict, per_node: dict | None = None) -> str:
    """`--csv`: one line per size, the JSON's columns plus in-place/out-of-place, for a spreadsheet or a plot;
    across nodes, `node` and `scope` columns and each node's lines after the sizes."""
    import csv
    import io

    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    extra = ["node", "scope"] if per_node else []
    out.writerow([*CSV_COLUMNS, "placement", *extra])
    for row in rows:
        out.writerow([*("" if row.get(c) is None else row.get(c) for c in CSV_COLUMNS), summary.get("placement", ""), *(["", "job"] if extra else [])])
    for line in node_csv_rows(per_node) if per_node else ():
        out.writerow(["" if v is None else v for v in line])
    return buf.getvalue()


def report_heading(report) -> str:
    """The table's title, read from a Report of this command (as the JSON carries it)."""
    data = report.data
    return heading(data["summary"]["op"], data["nproc"], data["backend"], data["device"], data["summary"]["iters"])


# ---- per node, across nodes (the JSON's `per_node`, per_node.per_node_json)

NODE_HEADERS = ["node", "ranks", "intra-node busbw GB/s", "intra µs", "inter-node send GB/s", "send µs", "receive GB/s"]


def node_cells(row: dict) -> list[str]:
    return [
        row["node"],
        ",".join(str(r) for r in row["ranks"]),
        _number(row.get("intra_busbw_gbps"), 3) if len(row["ranks"]) > 1 else "one rank",
        _number(row.get("intra_us"), 0) if len(row["ranks"]) > 1 else "",
        _number(row.get("inter_send_gbps"), 3),
        _number(row.get("inter_send_us"), 0),
        _number(row.get("inter_receive_gbps"), 3),
    ]


def node_title(per_node: dict) -> str:
    return (
        f"per node: intra-node all-reduce of each node's ranks, inter-node {format_size(per_node['bytes'])} sends "
        "between one rank per node (each node's best, of two passes)"
    )


def node_table(per_node: dict) -> Table:
    table = Table(title=node_title(per_node), title_justify="left", header_style="bold")
    for i, name in enumerate(NODE_HEADERS):
        table.add_column(name, justify="left" if i < 2 else "right")
    for row in per_node["nodes"]:
        table.add_row(*node_cells(row))
    return table


def node_markdown(per_node: dict) -> str:
    from gpudoctor.render.markdown import table

    return f"### Per node\n\n{node_title(per_node)}\n\n" + table(NODE_HEADERS, (node_cells(r) for r in per_node["nodes"]))


def node_csv_rows(per_node: dict) -> list[list]:
    """`--csv` across nodes: two lines per node after the sizes, in the same columns
    (`scope` says which: the job, a node's intra-node all-reduce, its inter-node send)."""
    out = []
    nbytes = per_node["bytes"]
    for row in per_node["nodes"]:
        if row.get("intra_us"):
            out.append(["all_reduce", nbytes, "", "", row["intra_us"], "", row["intra_busbw_gbps"], "", "in-place", row["node"], "intra-node"])
        if row.get("inter_send_us"):
            gbps = row["inter_send_gbps"]
            out.append(["send", nbytes, "", "", row["inter_send_us"], gbps, gbps, "", "", row["node"], "inter-node"])
    return out
