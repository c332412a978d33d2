"""`--html FILE` as users run it, and the page in a real headless Chromium (Debian's
`chromium`, which .ci/run installs): it loads with no console error or refused load,
its DOM holds every chart, and its screenshot is not blank."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import zlib

import pytest

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TESTS)
SRC = os.path.join(ROOT, "src")
EXTRA_LINE = "pip install 'gpudoctor[html]'"


def gpudoctor(*args: str, env=None, timeout=240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gpudoctor", *args], env=env, capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def without_matplotlib(tmp_path) -> dict:
    """An environment where `import matplotlib` fails, as where the extra is not installed."""
    shadow = tmp_path / "shadow" / "matplotlib"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text('raise ImportError("No module named matplotlib (shadowed by the test)")\n')
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(shadow.parent), SRC, os.environ.get("PYTHONPATH", "")]))


@pytest.mark.parametrize(
    "args",
    [
        ["allreduce", "--nproc", "2", "--html", "{page}"],
        ["report", "--skip", "allreduce,train-smoke", "-o", "{md}", "--html", "{page}"],
        ["run", "--nproc", "2", "--html", "{page}", os.path.join("tests", "scripts", "straggler", "job.py")],
    ],
)
def test_without_the_extra_one_line_exit_2_and_no_file(tmp_path, args):
    page, md = tmp_path / "page.html", tmp_path / "report.md"
    r = gpudoctor(*(a.format(page=page, md=md) for a in args), env=without_matplotlib(tmp_path))
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.count("\n") == 1 and EXTRA_LINE in r.stderr, r.stderr
    assert not page.exists() and not md.exists()  # refused before any work


def test_run_html_needs_nproc(tmp_path):
    r = gpudoctor("run", "--html", str(tmp_path / "p.html"), os.path.join("tests", "scripts", "straggler", "job.py"))
    assert r.returncode == 2 and "--html FILE needs --nproc N" in r.stderr, r.stderr


@pytest.mark.slow
def test_allreduce_html_beside_json_private_to_the_user(tmp_path):
    pytest.importorskip("matplotlib", reason="the html extra is not installed")
    page = tmp_path / "allreduce.html"
    r = gpudoctor("allreduce", "--nproc", "2", "--sizes", "4K,64K", "--iters", "2", "--warmup", "1", "--json", "--html", str(page))
    assert r.returncode == 0, r.stderr[-3000:]
    assert json.loads(r.stdout)["command"] == "allreduce"  # stdout is still the JSON alone
    assert f"HTML report written to {page}" in r.stderr
    assert stat.S_IMODE(page.stat().st_mode) == 0o600
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and html.count("<svg") == 1 and "allreduce-correct" in html


def png_pixels(path: str) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGB(A) bytes) of an 8-bit truecolour PNG, as Chromium writes
    its screenshots: the IDAT stream inflated and un-filtered (PNG spec, section 9)."""
    with open(path, "rb") as fh:
        data = fh.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        size = int.from_bytes(data[pos : pos + 4], "big")
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + size]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + size
    assert header is not None
    width, height, depth, colour = int.from_bytes(header[0:4], "big"), int.from_bytes(header[4:8], "big"), header[8], header[9]
    assert depth == 8 and colour in (2, 6), (depth, colour)
    bpp = 3 if colour == 2 else 4
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytearray(width * bpp)
    for y in range(height):
        line = raw[y * (stride + 1) : (y + 1) * (stride + 1)]
        kind, row = line[0], bytearray(line[1:])
        for i in range(stride):
            a = row[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                row[i] = (row[i] + a) & 0xFF
            elif kind == 2:
                row[i] = (row[i] + b) & 0xFF
            elif kind == 3:
                row[i] = (row[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(bytes(row))
        prev = row
    return width, height, [bytes(r[i : i + 3]) for r in rows for i in range(0, stride, bpp)]  # type: ignore[misc]


@pytest.mark.slow
def test_the_page_in_headless_chromium(tmp_path):
    pytest.importorskip("matplotlib", reason="the html extra is not installed")
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("no chromium on PATH (.ci/run installs Debian's chromium package)")
    sys.path.insert(0, TESTS)
    from test_render_html import load

    from gpudoctor.render.html_page import Part, page

    parts = [Part("gpudoctor allreduce", load("allreduce-bisect-3.json")), Part("gpudoctor run", load("run-straggler-2.json"))]
    html = tmp_path / "report.html"
    html.write_text(page(parts, "gpudoctor report"))
    base = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}",
            "--enable-logging=stderr", "--v=0"]  # fmt: skip
    url = html.as_uri()
    dom = subprocess.run([*base, "--dump-dom", url], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert dom.stdout.count("<svg") == 3 and "rank-straggler" in dom.stdout  # parsed: the curve, the pairs, the phases
    shot = tmp_path / "shot.png"
    r = subprocess.run([*base, "--window-size=1200,2400", f"--screenshot={shot}", url], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and shot.exists(), r.stderr[-2000:]
    # the page's own console: a script error, a load the CSP refused, a missing resource
    console = [line for line in (dom.stderr + r.stderr).splitlines() if re.search(r"CONSOLE|Refused to|net::ERR_", line)]
    assert console == [], console
    width, height, pixels = png_pixels(str(shot))
    assert (width, height) == (1200, 2400)
    colours = set(pixels)
    inked = sum(p != b"\xff\xff\xff" for p in pixels) / len(pixels)
    # a blank page is one colour; text alone is greys. The charts add the palette's colours.
    assert len(colours) > 200, len(colours)
    assert 0.03 < inked < 0.9, inked
    for rgb in (b"\x1f\x77\xb4", b"\xff\x7f\x0e"):  # tab:blue (the curve, forward), tab:orange (data)
        assert rgb in colours
