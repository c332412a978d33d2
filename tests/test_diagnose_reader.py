"""The streaming reader: blocks, line numbers, context across block ends,
endless lines, binary input, memory that does not grow with the log."""

from __future__ import annotations

import io

import pytest

from gpudoctor.commands.diagnose import reader
from gpudoctor.commands.diagnose.reader import BinaryInput, scan
from gpudoctor.knowledge.story import Diagnosis

HEALTHY = "epoch 0 step 12/500 loss 0.4321 lr 3.0e-04\n"
OOM = "[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 2 has a total capacity of 79.18 GiB of which 1.00 GiB is free.\n"
ROOT = (
    "Root Cause (first observed failure):\n[0]:\n  time      : 2025-05-21_15:43:03\n  host      : node9\n"
    "  rank      : 5 (local_rank: 1)\n  exitcode  : -9 (pid: 14750)\n  error_file: <N/A>\n"
    "  traceback : Signal 9 (SIGKILL) received by PID 14750\n====\n"
)


def run(text: bytes) -> Diagnosis:
    d = Diagnosis()
    scan(io.BytesIO(text), d, "")
    return d


@pytest.fixture
def small_blocks(monkeypatch):
    # blocks of 4 KiB with 1 KiB of lookahead: every boundary case shows up in a small log
    monkeypatch.setattr(reader, "BLOCK", 4096)
    monkeypatch.setattr(reader, "LOOKAHEAD", 1024)
    monkeypatch.setattr(reader, "MAX_LINE", 2048)


@pytest.mark.parametrize("before", [0, 1, 97, 250, 1000])
def test_line_numbers_survive_block_ends(small_blocks, before):
    d = run((HEALTHY * before + OOM + HEALTHY * 50).encode())
    seen = d.seen["cuda-oom"]
    assert seen.first.line == before + 1 and seen.first.where.rank == 2
    assert d.lines == before + 51


@pytest.mark.parametrize("cut", [1, 20, 35, 40, 44])
def test_a_failure_line_cut_by_a_block_end_is_still_found(small_blocks, cut):
    # the block's digest holds its lines; the line that runs across into the next block is digested apart
    pad = "x" * (4096 - cut - len(HEALTHY) * 60 - 1) + "\n"
    d = run((HEALTHY * 60 + pad + OOM + HEALTHY * 10).encode())
    assert d.seen["cuda-oom"].first.line == 62


def test_a_repeated_line_is_counted_as_before_it_is_decoded(small_blocks):
    # a repeat that told nothing is skipped before decoding only when it is ASCII (bytes and text then agree)
    warning = "[rank0]:[W socket.cpp:697] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 99 - Cannot assign requested address).\n"
    odd = "[rank0]: caf\u00e9 W\u00e4rning {} failed\n"
    text = "".join(warning.replace("29500", str(29500 + i)) + odd.format(i) for i in range(40)) + OOM
    streamed, fed = run(text.encode()), Diagnosis()
    fed.feed(text.splitlines())
    assert [f.to_dict() for f in streamed.findings()] == [f.to_dict() for f in fed.findings()]


def test_context_after_a_match_is_read_across_a_block_end(small_blocks):
    # put the Root Cause block right before a block boundary
    pad = HEALTHY * ((4096 - 1024 - 60) // len(HEALTHY))
    d = run((pad + ROOT + HEALTHY * 10).encode())
    fields = d.seen["torchrun-root-cause"].first.fields
    assert (fields["rank"], fields["host"], fields["exitcode"]) == ("5", "node9", "-9")


def test_an_endless_line_does_not_stop_the_scan(small_blocks):
    d = run(("x" * 20000 + "\n" + OOM).encode())
    assert "cuda-oom" in d.seen


def test_last_line_without_newline_and_crlf():
    d = run((HEALTHY + OOM.rstrip("\n")).replace("\n", "\r\n").encode())
    assert d.seen["cuda-oom"].first.line == 2 and d.lines == 2


def test_binary_input_is_refused():
    with pytest.raises(BinaryInput):
        run(b"\x7fELF\x00\x00\x00" + b"\x00" * 100)


def test_healthy_lines_never_reach_the_patterns(monkeypatch):
    fed = []
    monkeypatch.setattr(Diagnosis, "feed_line", lambda self, raw, *a, **k: fed.append(raw))
    run((HEALTHY * 1000 + OOM).encode())
    assert fed == [OOM.rstrip("\n")]


def test_undecodable_bytes_are_replaced():
    d = run(b"\x80\x81 garbage\n" + OOM.encode())
    assert "cuda-oom" in d.seen


def test_utf16_from_powershell_and_a_utf8_bom():
    text = HEALTHY + OOM
    d = run(text.encode("utf-16"))  # what PowerShell's `>` writes (with a BOM)
    assert d.seen["cuda-oom"].first.line == 2
    d = run(b"\xef\xbb\xbf" + text.encode())
    assert d.seen["cuda-oom"].first.line == 2


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_without_a_bom(encoding):
    # a paste through some Windows tools: UTF-16 with no BOM, every other byte NUL (not binary)
    d = run((HEALTHY + OOM).encode(encoding))
    assert d.seen["cuda-oom"].first.line == 2


def test_the_error_at_the_end_of_an_endless_line_is_found():
    # a progress bar that never printed a newline, the error appended after it
    bar = " 10%|#   | 1/10 [00:01<00:09]" * 20000
    d = run((HEALTHY + bar + " RuntimeError: CUDA error: an illegal memory access was encountered\n" + HEALTHY).encode())
    assert d.seen["cuda-illegal-memory-access"].first.line == 2 and d.lines == 3


def count_reads(monkeypatch) -> list[int]:
    reads: list[int] = []
    real = Diagnosis.read_line

    def read_line(self, raw, line, *args, **kwargs):
        reads.append(line)
        return real(self, raw, line, *args, **kwargs)

    monkeypatch.setattr(Diagnosis, "read_line", read_line)
    return reads


def test_a_repeated_error_line_that_told_nothing_is_read_once_and_still_counted(monkeypatch):
    # a data-preparation loop's own message, 20,931 times in a committed nohup.out (dev7w ajh011-chgcnn): each was
    # read with every pattern (ten seconds for 1 MB); the words after "Error" are not a number, so the repeats say
    # the same and are counted, not read
    reads = count_reads(monkeypatch)
    text = "".join(f"Error with mp-{1000 + 7 * i}, confirm existence\n" for i in range(3000))
    d = run(text.encode())
    assert len(reads) == 1
    assert d.mention_count + d.error_count == 3000


@pytest.mark.parametrize("line", ["worker 3 exited with exit code {}", "NCCL error {}: unhandled system error",
                                  "[Errno {}] No such file or directory", "process got signal: {}"])
def test_sibling_a_number_right_after_exit_error_errno_or_signal_is_read_each_time(monkeypatch, line):
    # "exit code 0" told nothing, "exit code 1" may: such lines are never skipped as repeats
    reads = count_reads(monkeypatch)
    run("".join(line.format(n) + "\n" for n in range(5)).encode())
    assert len(reads) == 5


OOM_TRACEBACK = ("Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n    step()\n"
                 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n")


@pytest.mark.parametrize("zeros_at", ["start", "middle"])
def test_a_log_with_a_stretch_of_nul_bytes_is_read_without_them(small_blocks, zeros_at):
    # `> nohup.out` under a running job: it writes on at its old offset, so the file starts with that many zeros
    # (many blocks of them here); a node that crashed mid-write leaves a zero-filled block inside
    log = HEALTHY * 50 + OOM_TRACEBACK
    data = (b"\x00" * (3 << 20) + log.encode()) if zeros_at == "start" else (log[:600].encode() + b"\x00" * 20000 + log[600:].encode())
    assert "cuda-oom" in run(data).seen


@pytest.mark.parametrize("blob", [bytes(range(256)) * 40, b"\x7fELF\x02\x01\x01" + b"\x00" * 9 + bytes(range(1, 32)) * 300,
                                  b"\x00" * 100000 + bytes(range(256)) * 40])
def test_sibling_a_binary_file_with_nul_bytes_is_still_refused(blob):
    with pytest.raises(BinaryInput):
        run(blob)


def test_sibling_nothing_but_zeros_is_an_empty_log():
    assert run(b"\x00" * 100000).lines == 0
