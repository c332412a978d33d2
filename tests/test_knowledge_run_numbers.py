"""knowledge/run_numbers.py: a quantity logged as exactly 0 throughout, and what the run's progress lines show."""

from __future__ import annotations

import pytest

from gpudoctor.knowledge.progress import Progress
from gpudoctor.knowledge.run_numbers import EXACT_ZERO, THROUGHPUT, progress_seen, zero_throughout


def read(text: str) -> Progress:
    progress = Progress()
    progress.feed(text.encode())
    progress.end()
    return progress


@pytest.mark.parametrize("value", ["0.0", "0.", "-0.0", "0.000E+00", "0.000000E+00", "0.0000e+00", "0e0"])
def test_exact_zeros(value):
    assert EXACT_ZERO.match(value.encode())


@pytest.mark.parametrize("value", ["0", "0.00", "0.0000", "0.00000", "0.000000", "1e-05", "0.001", "nan", "2.6e-06"])
def test_rounded_or_other_values_are_not_zero(value):
    # a fixed format with places is a value rounded (a converged loss, a learning rate of 1e-6 printed with five places)
    assert not EXACT_ZERO.match(value.encode())


def test_a_learning_rate_zero_on_every_line_and_its_count():
    text = "".join(f"{{'loss': 12.0{i}, 'grad_norm': 0.0, 'learning_rate': 0.0, 'epoch': 0.{i}}}\n" for i in range(12))
    (zero,) = zero_throughout(read(text))
    assert (zero.case, zero.key, zero.count, zero.first[0], zero.last[0]) == ("learning-rate", "learning_rate", 12, 1, 12)
    assert zero.beside == ("loss 12.011", "grad_norm 0.0")


def test_a_zero_in_one_kind_and_a_value_in_another_is_no_zero():
    # Trainer prints 0.0 and 2e-05 in different shapes (kinds of line): the value above 0 anywhere decides
    text = ("".join(f"{{'loss': 2.3{i}, 'learning_rate': 0.0, 'epoch': 0.0{i}}}\n" for i in range(6))
            + "".join(f"{{'loss': 2.1{i}, 'learning_rate': {i + 1}e-05, 'epoch': 0.{i}}}\n" for i in range(6)))
    assert zero_throughout(read(text)) == []


def test_the_pre_and_post_values_of_one_line():
    # EasyEdit's record: the pre-edit accuracy is 0 by design, the post-edit one 1.0, on the same line
    text = "".join(f"{{'pre': {{'acc': 0.0}}, 'case_id': {i}, 'post': {{'acc': 1.0}}}}\n" for i in range(8))
    assert zero_throughout(read(text)) == []


def test_progress_seen_merges_padded_kinds_and_reads_the_speed():
    text = "".join(f"| epoch   1 | {n:5d}/ 2323 batches | lr 20.00 | ms/batch  9.4{n % 7} | loss  {6.78 - n / 1000:.2f} | ppl   883.54\n"
                   for n in (200, 400, 1000, 2200))
    seen = progress_seen(read(text))
    assert seen is not None and seen.count == 4 and seen.last[0] == 4
    assert seen.loss == "loss 6.58 (line 1) -> 4.58 (line 4)" and seen.throughput.startswith("ms/batch 9.4")


@pytest.mark.parametrize("line, said", [
    (" iteration 71/ 100 | elapsed time per iteration (ms): 5361.6 | throughput per GPU (TFLOP/s/GPU): 243.6 |",
     "elapsed time per iteration (ms): 5361.6"),
    ("[timer.py:189:stop] 0/40, SamplesPerSec=83.48609168106144, MemAllocated=0.26GB", "SamplesPerSec=83.48609168106144"),
    ("step: 10  loss:  1.5568  memory: 26.47GiB(33.47%)  wps: 1,786  mfu: 10.46%", "wps: 1,786"),
    ('{"iteration": 83100, "iter_time": 3.6564724445343018, "data_time": 0.52}', 'iter_time": 3.6564724445343018'),
    ("Step:  40%|████      | 2/5 [00:42<01:03, 21.03s/it]", "21.03s/it"),
])
def test_throughput_as_frameworks_print_it(line, said):
    assert THROUGHPUT.search(line).group(0) == said


def test_a_failure_line_s_zero_is_a_placeholder():
    # dev7w lidengjiajia/DecisionSupportSystem-FedACT: every experiment failed within a second, its accuracy printed 0.0
    text = "".join(f"[2026-01-22 23:22:08] [INFO] [{i}/3840] (0.0%) Uci_sign_flip_r10_None_run1 - 失败 - Acc: 0.0 - 剩余时间: 20.0分钟\n" for i in range(1, 9))
    assert zero_throughout(read(text)) == []
