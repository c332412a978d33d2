"""The supervisor's stderr echo (launch/supervisor._Echo, issue 39 medium 5): a rank
that writes far more stderr than a report needs costs a bounded chunk of memory."""

import tracemalloc

from gpudoctor.launch.supervisor import _Echo


def test_a_flood_of_stderr_is_pumped_in_bounded_chunks(tmp_path):
    path = tmp_path / "rank0.stderr"
    with open(path, "wb") as fh:
        fh.write(b"first line\n")
        fh.write(b"\r 42%|####| 420/1000" * 1_000_000)  # ~20 MB in one line without end
        fh.write(b"\nlast line\n")
    seen: list[tuple[int, int, str]] = []
    echo = _Echo([str(path)], lambda rank, line: seen.append((rank, len(line), line[:10])))
    tracemalloc.start()
    echo.pump()
    echo.pump(final=True)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 8 << 20, peak
    assert seen[0] == (0, 10, "first line") and seen[-1] == (0, 9, "last line")
    assert all(n <= _Echo.ECHO_LINE for _, n, _ in seen) and len(seen) > 3


def test_a_line_written_in_two_parts_is_one_line(tmp_path):
    path = tmp_path / "rank0.stderr"
    seen: list[str] = []
    echo = _Echo([str(path)], lambda rank, line: seen.append(line))
    path.write_bytes(b"half")
    assert echo.pump() and seen == []
    with open(path, "ab") as fh:
        fh.write(b" and half\nno end")
    echo.pump()
    echo.pump(final=True)
    assert seen == ["half and half", "no end"]
