"""Sizes, element counts, bus factors and the exact-value range (pure)."""

import json
import math

import pytest

from gpudoctor.commands.allreduce.bandwidth import (
    DEFAULT_SIZES,
    MAX_EXACT_INT,
    Row,
    algbw_gbps,
    bus_factor,
    busbw_gbps,
    element_count,
    exact_value_range,
    format_size,
    make_row,
    median_time_us,
    parse_size,
    parse_sizes,
    planned_sizes,
    public_row,
    size_range,
    summarize,
)
from gpudoctor.core.codec import decode, encode


@pytest.mark.parametrize(
    "text, expected",
    [
        ("512", 512),
        ("4K", 4096),
        ("4k", 4096),
        ("4KB", 4096),
        ("4KiB", 4096),
        ("1M", 1 << 20),
        ("64M", 64 << 20),
        ("1G", 1 << 30),
        ("1.5M", 3 << 19),
        (" 2K ", 2048),
    ],
)
def test_parse_size_reads_binary_units(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "4X", "K", "-1", "0", "1.3", "4 K B", "1e3"])
def test_parse_size_rejects_what_is_not_a_size(text):
    with pytest.raises(ValueError):
        parse_size(text)


def test_parse_sizes_keeps_order_and_drops_duplicates():
    assert parse_sizes("4K,1M,4096,64M") == [4096, 1 << 20, 64 << 20]
    with pytest.raises(ValueError, match="empty"):
        parse_sizes(" , ")


def test_size_range_doubles_like_nccl_tests():
    assert size_range(4096, 32768) == [4096, 8192, 16384, 32768]
    assert size_range(1000, 3000) == [1000, 2000]
    assert size_range(8, 8) == [8]
    with pytest.raises(ValueError, match="larger"):
        size_range(2048, 1024)


def test_default_sweep_spans_latency_to_bandwidth():
    assert DEFAULT_SIZES[0] == 4096 and DEFAULT_SIZES[-1] == 64 << 20
    assert all(b == 4 * a for a, b in zip(DEFAULT_SIZES, DEFAULT_SIZES[1:]))


@pytest.mark.parametrize("nbytes, text", [(4096, "4K"), (1 << 20, "1M"), (3 << 19, "1536K"), (1000, "1000"), (1 << 30, "1G")])
def test_format_size(nbytes, text):
    assert format_size(nbytes) == text


def test_element_count_rounds_to_whole_elements_per_rank():
    assert element_count("all_reduce", 4096, "float32", 3) == 1024
    assert element_count("all_reduce", 4097, "float16", 3) == 2048
    assert element_count("all_reduce", 1, "float32", 2) == 1  # never an empty buffer
    assert element_count("all_gather", 4096, "float32", 3) == 1023  # a multiple of the world size
    assert element_count("reduce_scatter", 8, "float32", 4) == 4  # at least one element per rank
    assert element_count("broadcast", 4096, "bfloat16", 7) == 2048


def test_planned_sizes_reports_real_bytes_and_drops_duplicates_after_rounding():
    assert planned_sizes("all_gather", [4096, 4095, 100], "float32", 3) == [(4092, 1023), (96, 24)]


@pytest.mark.parametrize(
    "op, world, factor",
    [
        ("all_reduce", 1, 0.0),
        ("all_reduce", 2, 1.0),
        ("all_reduce", 4, 1.5),
        ("all_reduce", 8, 1.75),
        ("all_gather", 4, 0.75),
        ("reduce_scatter", 8, 0.875),
        ("broadcast", 8, 1.0),
    ],
)
def test_bus_factors_are_nccl_tests(op, world, factor):
    assert bus_factor(op, world) == pytest.approx(factor)


def test_bandwidth_in_gb_per_second():
    # 1 GB in 1 s: algbw 1 GB/s; all_reduce over 4 ranks: busbw 1.5 GB/s.
    assert algbw_gbps(10**9, 1e6) == pytest.approx(1.0)
    assert busbw_gbps("all_reduce", 10**9, 1e6, 4) == pytest.approx(1.5)
    assert math.isnan(algbw_gbps(1024, 0.0))


def test_time_is_the_slowest_ranks_median_iteration():
    per_rank = [[10.0, 50.0, 30.0], [20.0, 10.0, 40.0]]
    assert median_time_us(per_rank) == 30.0  # rank 0's median; rank 1's is 20
    assert median_time_us([[5.0, 1000.0, 6.0, 7.0]]) == 6.5  # one slow outlier does not move it
    assert math.isnan(median_time_us([]))


def test_make_row_has_the_nccl_tests_columns_and_wrong_by_rank():
    row = make_row("all_reduce", 1 << 20, 1 << 18, "float32", 2, [0, 3], [[100.0, 200.0, 300.0], [100.0, 150.0, 100.0]])
    assert row.time_us == 200.0
    assert row.algbw_gbps == pytest.approx((1 << 20) / 200.0 / 1e3, rel=1e-3)
    assert row.busbw_gbps == row.algbw_gbps  # factor 1 at two ranks
    assert row.wrong == 3 and row.wrong_by_rank == (0, 3)
    assert list(public_row(row)) == ["op", "bytes", "count", "dtype", "time_us", "algbw_gbps", "busbw_gbps", "wrong"]


def test_a_row_goes_through_the_codec_unchanged_even_with_nan():
    row = make_row("all_reduce", 4096, 1024, "float32", 2, [0, 0], [[], []])  # no timed iteration: nan
    back = decode(Row, json.loads(json.dumps(encode(row))))
    assert json.dumps(encode(back)) == json.dumps(encode(row))
    assert math.isnan(back.time_us) and back.wrong_by_rank == (0, 0)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("world", [1, 2, 3, 8, 255, 256, 257, 300, 2048, 5000, 100_000])
def test_exact_value_range_keeps_every_partial_sum_exact(dtype, world):
    stride, half = exact_value_range(world, dtype)
    contributors = -(-world // stride)
    assert half >= 1 and stride >= 1
    assert contributors * half <= MAX_EXACT_INT[dtype]


def test_summary_takes_peak_busbw_and_smallest_size_latency():
    rows = [
        make_row("all_reduce", 4096, 1024, "float32", 2, [0, 0], [[50.0], [60.0]]),
        make_row("all_reduce", 1 << 20, 1 << 18, "float32", 2, [0, 0], [[500.0], [500.0]]),
        make_row("all_reduce", 1 << 24, 1 << 22, "float32", 2, [0, 1], [[2000.0], [2000.0]]),
    ]
    s = summarize(rows, 4)
    assert s["peak_busbw_bytes"] == 1 << 24 and s["latency_bytes"] == 4096 and s["latency_us"] == 60.0
    assert s["sizes_run"] == 3 and s["sizes_planned"] == 4 and s["wrong"] == 1
    assert s["largest_bytes"] == 1 << 24
    assert summarize([], 3) == {"sizes_run": 0, "sizes_planned": 3, "wrong": 0}
