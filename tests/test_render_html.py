"""render/html_page.py on the JSON of real runs (tests/fixtures/html/, made by
`gpudoctor allreduce --nproc 3 --sizes 4K,64K,1M,4M --iters 3 --warmup 1 --bisect --json`
and `gpudoctor run --nproc 2 --json FILE tests/scripts/straggler/job.py --steps 8
--slow-rank 1 --phase data --ms 150`, both on gloo/CPU). The charts need matplotlib
(the html extra, which .ci/run installs)."""

import dataclasses
import json
import os
import re

import pytest

pytest.importorskip("matplotlib", reason="the html extra is not installed: pip install -e '.[html]'")

from gpudoctor.commands.allreduce.verify import against_published  # noqa: E402
from gpudoctor.core.findings import Finding, Report, Severity  # noqa: E402
from gpudoctor.probe.links import LinkFacts  # noqa: E402
from gpudoctor.render.html_page import Part, page  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "html")
ENVELOPE = ("gpudoctor", "schema_version", "command", "ok", "findings")


def load(name: str) -> Report:
    """A --json document back into the Report it was printed from."""
    with open(os.path.join(FIXTURES, name)) as fh:
        doc = json.load(fh)
    findings = tuple(Finding.from_dict(f) for f in doc["findings"])
    return Report(doc["command"], findings, {k: v for k, v in doc.items() if k not in ENVELOPE})


def svgs(html: str) -> list[str]:
    return re.findall(r"<svg\b.*?</svg>", html, flags=re.S)


def assert_self_contained(html: str) -> None:
    """Nothing to fetch: no script, no external reference; the CSP forbids loading anything."""
    assert "default-src 'none'" in html
    assert not re.search(r"<script|<link|<img|<iframe|url\((?!#)", html, flags=re.I)
    # every reference points inside the page: matplotlib's glyphs and clip paths (#id),
    # the heat map's pixels (a PNG data URI)
    refs = re.findall(r'(?:href|src)="([^"]*)"', html)
    assert refs and all(ref.startswith(("#", "data:image/png;base64,")) for ref in refs)


def test_allreduce_page_draws_the_curve_and_the_pair_matrix():
    report = load("allreduce-bisect-3.json")
    html = page([Part("gpudoctor allreduce", report)], "gpudoctor allreduce")
    assert_self_contained(html)
    curve, pairs = svgs(html)
    # gloo on CPU: no published figure, said in words, and no dashed published line drawn
    assert "No published figure to compare with: this run is gloo on cpu" in html
    assert "stroke-dasharray" not in curve
    # the heat map: its cells are one image (a PNG inside the SVG)
    assert "<image" in pairs and "Pairs of ranks" in html
    for f in report.findings:
        assert f.id in html


def test_a_published_figure_is_drawn_and_named():
    """The real verdict (allreduce/verify.against_published) on this run's summary, as if it
    were 8 H200 over NVLink: the dashed line, the source named below the chart."""
    report = load("allreduce-bisect-3.json")
    link = LinkFacts(("NVIDIA H200",) * 8, 1, "nvlink", 18, ("NV18",), ("ok",))
    summary = dict(report.data["summary"], largest_bytes=1 << 30)
    findings = tuple(
        against_published(f, summary, link) if f.id == "allreduce-bandwidth" else f for f in report.findings
    )
    html = page([Part("gpudoctor allreduce", dataclasses.replace(report, findings=findings))], "t")
    assert "stroke-dasharray" in svgs(html)[0]
    assert "Published figure: 8x H200 over NVLink 4 (NVSwitch)" in html
    assert "https://github.com/NVIDIA/nccl-tests/issues/272" in html  # as text, not as a link
    assert_self_contained(html)


def test_run_page_draws_each_ranks_phases_and_names_the_straggler():
    report = load("run-straggler-2.json")
    html = page([Part("gpudoctor run", report)], "gpudoctor run")
    assert_self_contained(html)
    [phases] = svgs(html)
    assert phases.count("<g id=\"patch_") >= 2 * len(report.data["steps"]["phases"])  # a bar per rank and phase
    assert "Slowest: rank 1" in html and "in data" in html
    assert 'class="warn"' in html and "rank-straggler" in html  # the warning, unfolded with its evidence
    assert "<dt>late ms per step</dt>" in html


def test_untrusted_text_is_escaped():
    hostile = "<script>alert(1)</script> \x1b]52;c;aGk=\x07 & \u202e"
    finding = Finding("x-y", Severity.ERROR, hostile, {"<b>key</b>": hostile}, why=hostile, fix=hostile)
    html = page([Part("<i>part</i>", Report("run", (finding,), {})), Part("train-smoke", None, hostile)], "<t>")
    assert "<script" not in html and "<b>key" not in html and "<i>part" not in html and "<t>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "\x1b" not in html and "\\x1b]52" in html and "\u202e" not in html and "\\u202e" in html
    assert "did not finish" in html  # a report step with no report says why


def test_a_report_with_no_steps_says_so():
    report = Report("run", (), {"steps": {"phases": ["data"], "ranks": [], "slowest": None}})
    html = page([Part("gpudoctor run", report)], "t")
    assert "No step was seen" in html and not svgs(html)
