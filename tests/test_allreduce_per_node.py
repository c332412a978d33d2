"""allreduce's per-node figures across nodes and their verdict (pure): which node is
below the others, judged like with like against the run's own noise. The first two
cases' figures are what the multi-node tier measured (tests/multinode/test_tier.py,
2 nodes x 2 ranks, gloo, 64 KiB on a busy 2-core machine): unshaped, then with node 1's
NIC shaped by `tc qdisc replace dev gdeth root tbf rate 20mbit burst 32kbit latency 400ms`."""

import csv
import io

from rich.console import Console

from gpudoctor.commands.allreduce.bisect import PairTime
from gpudoctor.commands.allreduce.per_node import NodeTimes, PerNode, node_findings, node_rows, per_node_json
from gpudoctor.commands.allreduce.table import node_table, results_csv
from gpudoctor.core.findings import Severity

KB64 = 65536
TWO = (NodeTimes("n0", (0, 1), 520.3, 511.8), NodeTimes("n1", (2, 3), 522.0, 530.9))
CONTROL = PerNode(KB64, TWO, (PairTime(0, 2, 189.4, 157.1), PairTime(2, 0, 182.3, 145.8)))
SHAPED = PerNode(KB64, TWO, (PairTime(0, 2, 476.6, 162.7), PairTime(2, 0, 27572.6, 27527.8)))


def test_the_unshaped_control_is_ok_and_states_its_floor():
    [f] = node_findings(CONTROL)
    assert f.id == "allreduce-slow-node" and f.severity is Severity.OK
    assert f.title.startswith("no node stands out across 2 nodes (64K: inter-node sends 146 to 157 µs; floor ")
    assert "margin 200%" in f.title


def test_the_shaped_node_is_named_with_its_figures_and_what_to_check():
    [f] = node_findings(SHAPED)
    assert f.severity is Severity.WARN and f.evidence["slow"] == ["n1"]
    assert f.title.startswith("node n1 sends to the other nodes at 0.002 GB/s (64K in 27573 µs, again 27528 µs), 1% of the others' 0.403 GB/s")
    assert "floor 193%, margin 200%" in f.title  # n0's two passes disagreed: the floor says so, and n1 is beyond it
    assert "n1" in f.fix and "tc qdisc show" in f.fix and "ethtool" in f.fix
    assert "n1's way out or n0's way in" in f.why
    assert f.evidence["nodes"]["n1"] == "ranks 2, 3: intra-node 0.1255 GB/s busbw, sends 0.0024 GB/s, receives 0.4028 GB/s"


def test_a_hiccup_in_one_pass_is_not_a_slow_node():
    hiccup = PerNode(KB64, TWO, (PairTime(0, 2, 189.4, 157.1), PairTime(2, 0, 27572.6, 145.8)))
    assert [f.severity for f in node_findings(hiccup)] == [Severity.OK]


def test_a_node_slower_by_less_than_the_margin_is_not_named():
    # 3x the other node's time: above the floor, not above the margin on top of it
    near = PerNode(KB64, TWO, (PairTime(0, 2, 1000.0, 1010.0), PairTime(2, 0, 3000.0, 3030.0)))
    assert [f.severity for f in node_findings(near)] == [Severity.OK]


def test_one_node_or_nothing_measured_says_nothing():
    assert node_findings(None) == []
    assert node_findings(PerNode(KB64, (TWO[0],), ())) == []
    untimed = PerNode(KB64, TWO, (PairTime(0, 2, 189.4, 0.0), PairTime(2, 0, 182.3, 0.0)))  # no repeat: no floor
    assert node_findings(untimed) == []


def three(slow_out=(), slow_in=()):
    """3 nodes of one rank: every direction 400 µs, 20 ms out of / into the nodes named."""
    sends = []
    for a in range(3):
        for b in range(3):
            if a != b:
                us = 20000.0 if a in slow_out or b in slow_in else 400.0
                sends.append(PairTime(a, b, us, us * 1.05))
    return PerNode(1 << 24, tuple(NodeTimes(f"n{i}", (i,)) for i in range(3)), tuple(sends))


def test_with_three_nodes_a_slow_receiver_is_named_and_not_its_senders():
    [f] = node_findings(three(slow_in=(2,)))
    assert f.severity is Severity.WARN and f.evidence["slow"] == ["n2"]
    assert f.title.startswith("node n2 receives from the other nodes")


def test_with_three_nodes_a_slow_nic_both_ways_is_named_once():
    [f] = node_findings(three(slow_out=(1,), slow_in=(1,)))
    assert f.evidence["slow"] == ["n1"]
    assert "node n1 sends" in f.title and "node n1 receives" in f.title
    assert [f.severity for f in node_findings(three())] == [Severity.OK]


def test_rows_give_intra_and_inter_node_figures_side_by_side():
    rows = node_rows(CONTROL)
    assert rows[0]["node"] == "n0" and rows[0]["ranks"] == [0, 1]
    assert rows[0]["intra_us"] == 511.8 and rows[0]["intra_busbw_gbps"] == round(KB64 / 511.8 / 1e3, 4)  # 2(n-1)/n = 1
    assert rows[0]["inter_send_us"] == 157.1 and rows[0]["inter_receive_us"] == 145.8
    single = node_rows(three())[0]
    assert single["intra_us"] is None and single["intra_busbw_gbps"] is None


def test_the_table_and_the_csv_carry_every_node():
    data = per_node_json(SHAPED)
    console = Console(width=80, record=True, force_terminal=False)
    console.print(node_table(data))
    text = console.export_text()
    assert "n0" in text and "n1" in text and "0.002" in text and "…" not in text.replace("...", "")
    lines = list(csv.reader(io.StringIO(results_csv([], {"placement": "in-place"}, data))))
    assert lines[0][-2:] == ["node", "scope"]
    assert [(r[-2], r[-1]) for r in lines[1:]] == [("n0", "intra-node"), ("n0", "inter-node"), ("n1", "intra-node"), ("n1", "inter-node")]
    assert results_csv([], {}).splitlines()[0].endswith(",wrong,placement")  # one node: the columns as before
