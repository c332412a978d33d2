"""knowledge/reported.py: the errors a thread's title and its people's sentences report, and what is no report (a
supposition, a question, a condition, a quoted command)."""

from __future__ import annotations

import pytest

from gpudoctor.knowledge.reported import Reported, ReportedError, sentence_reports, title_reports


@pytest.mark.parametrize(
    "title, words",
    [
        # Oneflow-Inc/one-glm#25: the script's argparse error behind a label and a full-width colon
        ("# 报错：finetune_glm.py: error: unrecognized arguments: --deepspeed_config", "finetune_glm.py: error: unrecognized arguments: --deepspeed_config"),
        # ggml-org/llama.cpp#6184: a function's own prefix opens the message
        ("# ggml_init_cublas: no CUDA devices found, CUDA will be disabled", "ggml_init_cublas: no CUDA devices found, CUDA will be disabled"),
        # facebookresearch/fairseq#5382: a failure said of the path it quotes
        ("# fairseq-hydra-train couldn't find such file or directory: 'fairseq/data-bin/wikitext-103/dict.txt'",
         "fairseq-hydra-train couldn't find such file or directory: 'fairseq/data-bin/wikitext-103/dict.txt'"),
        ("# [Bug]: RuntimeError: CUDA error: out of memory", "RuntimeError: CUDA error: out of memory"),
        # docling-project/docling#2552: the words before a bare "error:" name whose error it is
        ("# CUDA driver error: invalid argumen", "CUDA driver error: invalid argumen"),
        ("# DSL pipeline: 'Internal data stream error.' received from the tiler", "Internal data stream error."),
    ],
)
def test_a_title_that_quotes_the_program(title, words):
    assert title_reports(title) == [words]


@pytest.mark.parametrize(
    "title",
    [
        "# Training error",  # the reporter's label, no message
        "# Error when training with 1 GPU",
        "# Is it an OOM?",  # a question whether it is that error
        "# Ranking models with `MultiWorkerMirroredStrategy` strategy",  # a quoted name, no failure
        "# torch.distributed.launch: Possible error when writing to different files from different nodes.",  # a supposition
    ],
)
def test_a_title_that_quotes_no_message(title):
    assert title_reports(title) == []


@pytest.mark.parametrize(
    "line, words",
    [
        # MIC-DKFZ/nnUNet#856: the reporter's own condition, then the error it gives
        ('If I use --nproc_per_node=4 or --nproc_per_node=8, I will get "negative dimensions are not allowed".', "negative dimensions are not allowed"),
        # open-mmlab/mmdetection#7459: a backticked message with backticks of its own
        ("It gives this error: `ValueError: IterBasedRunner: Only one of `max_epochs` or `max_iters` can be set.`",
         "ValueError: IterBasedRunner: Only one of `max_epochs` or `max_iters` can be set."),
        # nvidia-cosmos/cosmos-predict1#11: an inline triple-backtick quote after a colon
        ("The error is: ```OSError: [Errno 22] Invalid argument ```", "OSError: [Errno 22] Invalid argument"),
        ("Slightly different log output, but still reports `ggml_cuda_init: no CUDA devices found, CUDA will be disabled`:",
         "ggml_cuda_init: no CUDA devices found, CUDA will be disabled"),
    ],
)
def test_a_sentence_that_reports_the_program(line, words):
    assert sentence_reports(line) == [words]


@pytest.mark.parametrize(
    "line",
    [
        # microsoft/Swin-Transformer#20: a commenter's supposition
        'Without setting batch-size explicitly you might meet an error "CUDA out of memory".',
        # Eli-YiLi/PMM#3: what the GPU says under a condition, not this run
        'It seems not related to GPU, because GPU reports "CUDA out of memory" if batch size is too large.',
        "Is this a `CUDA out of memory` error?",
        "I used to get `RuntimeError: CUDA out of memory` but not anymore",
        "I run `python train.py --gpus 2` and it fails",  # a quoted command
        '    raise AttributeError("\'{}\' object has no attribute \'{}\'".format(type(self).__name__, name))',  # a traceback's source
    ],
)
def test_a_sentence_that_reports_nothing(line):
    assert sentence_reports(line) == []


def test_outside_a_thread_only_a_persons_sentence_reports():
    line = 'Epoch 3 done, the worker answered "invalid_request_error for the batch"'
    assert sentence_reports(line, framed=False) == [] and sentence_reports("I get " + line, framed=False) != []


def test_the_reader_keeps_the_title_and_the_sentences_outside_fences():
    text = (
        "# source: https://github.com/MIC-DKFZ/nnUNet/issues/856\n"
        "MIC-DKFZ/nnUNet · issue #856 · closed · Python\n"
        "# negative dimensions are not allowed\n"
        "\n"
        "ChibisukeDragon · description · 2021-11-16\n"
        'If I use --nproc_per_node=4, I will get "negative dimensions are not allowed".\n'
        "```\n"
        'I get "CUDA error: invalid device ordinal"\n'
        "```\n"
    )
    reader, data = Reported(), text.encode()
    for at in range(0, len(data), 7):  # blocks cut inside lines
        reader.feed(data[at : at + 7])
    reader.end()
    assert reader.reports == [ReportedError(6, "sentence", "negative dimensions are not allowed")]


def test_a_report_the_log_shows_again_says_where():
    # lightvector/KataGo#968: the title quotes the server's refusal, and the log's ERROR line holds it
    text = (
        "lightvector/KataGo · issue #968 · closed · C++\n"
        "# katago-v1.15.3-opencl-windows-x64 Server returned error 400: This version of KataGo is not enabled for distributed.\n"
        "ERROR: task loop loop thread failed: Server returned error 400: This version of KataGo is not enabled for distributed.\n"
    )
    reader = Reported()
    reader.feed(text.encode())
    reader.end()
    assert [r.shown for r in reader.reports] == [3]
