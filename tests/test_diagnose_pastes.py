"""Pastes as people paste them (issue 35 item 5): quoted, fenced, indented, behind rank prefixes,
coloured, CRLF, UTF-16, HTML-escaped, hard-wrapped at a window's width. The verdict of a real log
is the same however it arrives. Run through the real reader (normalisation, prefilter) and the
knowledge base, as `gpudoctor diagnose` reads a file or a paste."""

from __future__ import annotations

import html
import io
from pathlib import Path

import pytest

from gpudoctor.commands.diagnose.analyse import diagnose
from gpudoctor.commands.diagnose.inputs import Target
from gpudoctor.commands.diagnose.paste import short_wrap_width, wrap_width
from gpudoctor.core.findings import Severity

CORPUS = Path(__file__).parent / "fixtures" / "log_corpus"


def report(data: bytes):
    return diagnose(Target("text", "<text>"), io.BytesIO(data))


def headline(data: bytes) -> tuple[str, bool]:
    r = report(data)
    shown = [f for f in r.findings if f.severity in (Severity.ERROR, Severity.WARN)]
    return (shown[0].id if shown else "-"), any(f.severity is Severity.ERROR for f in r.findings)


def log(name: str) -> str:
    text = (CORPUS / f"{name}.log").read_text(encoding="utf-8")
    return text.split("\n", 1)[1] if text.startswith("# source") else text


def each_line(prefix: str):
    return lambda t: "\n".join(prefix + line for line in t.split("\n"))


SHAPES = {
    "quoted": each_line("> "),
    "quoted twice": each_line(">> "),
    "fenced": lambda t: "```text\n" + t + "\n```",
    "indented code block": each_line("    "),
    "torch rank prefix": each_line("[rank0]: "),
    "srun --label": each_line("0: "),
    "torchrun --tee": each_line("[default0]:"),
    "ray actor": each_line("(RayTrainWorker pid=1234, ip=10.0.0.5) "),
    "ansi colours": lambda t: "\n".join("\x1b[31m" + line + "\x1b[0m" for line in t.split("\n")),
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "html-escaped": html.escape,
    # a page that writes every quote and slash as a numeric entity
    "html numeric entities": lambda t: t.replace("&", "&#38;").replace('"', "&#34;").replace("'", "&#x27;").replace("/", "&#x2F;").replace(">", "&#62;"),
}
ENCODINGS = {"utf-16 with a bom": lambda t: t.encode("utf-16"), "utf-8 with a bom": lambda t: b"\xef\xbb\xbf" + t.encode()}
# real logs of different kinds: a traceback ending in an exception, NCCL lines, a GPU-tool paste
LOGS = ["produced-raise-keyerror-rank1", "medsegdiff-27-unused-params", "returnn-1486-gpu-lost-pcie", "sglang-3820-nccl-no-route-to-host"]


@pytest.mark.parametrize("name", LOGS)
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_paste_shape_keeps_the_verdict(name, shape):
    text = log(name)
    assert headline(SHAPES[shape](text).encode()) == headline(text.encode())


@pytest.mark.parametrize("name", LOGS)
@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_an_encoding_keeps_the_verdict(name, encoding):
    text = log(name)
    assert headline(ENCODINGS[encoding](text)) == headline(text.encode())


def cut_at(text: str, width: int) -> str:
    """What a terminal copy gives: every line cut into pieces of `width` characters."""
    return "\n".join(piece for line in text.split("\n") for piece in ([line[i : i + width] for i in range(0, len(line), width)] or [""]))


def test_a_log_hard_wrapped_at_a_terminals_width_is_joined_back():
    text = log("medsegdiff-27-unused-params")
    wrapped = cut_at(text, 80)
    assert wrap_width(wrapped.encode()) == 80
    r = report(wrapped.encode())
    assert r.data["unwrapped_at"] == 80
    assert headline(wrapped.encode()) == headline(text.encode()) == ("ddp-unused-parameters", True)


def test_a_web_consoles_padded_word_wrap_is_joined_back():
    # GraphGPT#44 as pasted: word-wrapped at 75 columns, each line padded with spaces to the width
    text = log("graphgpt-44-timeout-after-first-epoch")
    assert wrap_width(text.encode()) == 75
    r = report(text.encode())
    assert any("Watchdog caught collective operation timeout" in str(f.evidence.get("log", "")) for f in r.findings)


def test_one_long_line_cut_once_is_read_again_joined():
    text = log("stablediffusion-106-same-device")
    wrapped = cut_at(text, 80)
    assert short_wrap_width(wrapped.encode()) == 80
    r = report(wrapped.encode())
    assert r.data.get("unwrapped_at") == 80
    assert headline(wrapped.encode()) == headline(text.encode()) == ("ddp-device-mismatch", True)


def test_a_line_copied_out_of_a_url_is_decoded():
    # turboderp-org/exllamav2#530: the error was pasted from a URL, every space written %20
    assert headline(b"libtorch_cuda.so:%20undefined%20symbol:%20ncclCommRegister\n") == ("nccl-two-libraries", True)


def test_a_url_inside_a_message_is_left_as_it_is():
    from gpudoctor.knowledge.lines import strip

    line = "see https://example.org/a%20b for details"
    assert strip(line).text == line


def test_inline_code_opened_and_not_closed_on_the_line_is_peeled():
    # deepspeedai/DeepSpeed#5696: the paste opens an inline-code span and is cut inside it
    found, failed = headline(b"`RuntimeError: Mism\n")
    assert failed


SAMPLE = Path(__file__).parent / "fixtures" / "log_sample" / "dev"
# measured over every dev case with a verdict by benchmarks/paste_shapes.py (0.966 -> 0.986 kept):
# a traceback's frames behind escaped quotes, and an nvidia-smi table behind a paste's own prefix
SHAPED_SAMPLES = ["openrlhf-922-llmengine-no-model-executor", "transformers-13986-nvidia-smi-uneven-memory"]


@pytest.mark.parametrize("name", SHAPED_SAMPLES)
@pytest.mark.parametrize("shape", ["html-escaped", "html numeric entities", "quoted", "torch rank prefix", "ansi colours", "indented code block"])
def test_a_sampled_logs_verdict_survives_its_paste_shape(name, shape):
    text = (SAMPLE / f"{name}.log").read_text(encoding="utf-8")
    plain = headline(text.encode())
    assert plain[0] not in ("-", "log-inconclusive") and headline(SHAPES[shape](text).encode()) == plain
