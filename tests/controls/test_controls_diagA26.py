"""Controls and siblings for diagA26 (issue 35: the answer's evidence from the right part of the paste). A thread's paste
is the reporter's words (its title, people's sentences) and the output (a run's or a tool's lines): knowledge/paste_parts.py
reads which is which and what the output shows. An error that stands only on the words, beside output that shows a run
that worked, is not asserted (log-inconclusive case `not-shown`); words that report a failure beside output whose run
completed are not called healthy either (the same case). An exception a logger wrote and the program went on past is
not the run's error (case `handled`). `test_control_*` is the input that must not get the verdict, `test_sibling_*` the
nearest one that keeps another. Lines and cases are real ones (threads named beside them)."""

from __future__ import annotations

from test_controls_classes6 import case
from test_controls_detect8 import head, healthy

from gpudoctor import api


def answer(text: str):
    [found] = [f for f in api.diagnose(text).findings if f.id in ("log-inconclusive", "log-no-failure", "log-said-hang")]
    return found


FRAME = "# source: https://github.com/NVIDIA/nccl-tests/issues/44\nNVIDIA/nccl-tests · issue #44 · closed · Cuda\n"
# nccl-tests#44: the run the reporter pasted, which completed
NCCL_RUN = ("```\n"
            "   134217728      16777216   float   3298.6   20.34   20.34  0e+00   3070.3   21.86   21.86  0e+00\n"
            "# Out of bounds values : 0 OK\n"
            "# Avg bus bandwidth    : 6.6\n")
# Bigthugboy/forex_ai_project's logs/main.log (heldout25w): logger.exception's record, its traceback, and the next item
CAUGHT = ("[2025-07-16 15:24:47] INFO main: Training AI model...\n"
          "[2025-07-16 15:24:47] ERROR main: Error analyzing USDJPY: could not convert string to float: 'markup'\n"
          "Traceback (most recent call last):\n"
          '  File "/Users/admin/forex_ai_project/main.py", line 151, in analyze_and_signal\n'
          "    model, scaler, calibration_model = train_signal_model(df)\n"
          '  File "/Users/admin/forex_ai_project/venv/lib/python3.10/site-packages/pandas/core/generic.py", line 2168, in __array__\n'
          "    arr = np.asarray(values, dtype=dtype)\n"
          "ValueError: could not convert string to float: 'markup'\n")
NEXT = ("[2025-07-16 15:24:47] INFO main: Fetching price data for BTCUSD...\n"
        "[2025-07-16 15:24:50] INFO main: Fetched 1431 rows of price data for BTCUSD\n")


class TestLogInconclusiveNotShown:
    verdict = "log-inconclusive"

    def test_control_a_titles_error_beside_a_working_p2p_run_is_not_asserted(self):
        text = case("heldout25", "tinygrad-ogkm-44-4090-pair-p2p-test")  # tinygrad/open-gpu-kernel-modules#44: a 4090 pair's run
        found = answer(text)
        assert head(text) is None and found.id == self.verdict and found.evidence["reported"].startswith("line 3, the thread's title")
        assert "P2P" in found.evidence["output"]

    def test_control_a_titles_no_device_beside_a_framework_that_sees_the_gpu(self):
        text = case("heldout25", "wsl-9272-tf-gpu-list")  # microsoft/WSL#9272: a commenter's TensorFlow lists GPU:0
        found = answer(text)
        assert head(text) is None and found.id == self.verdict and "GPU:0" in found.evidence["output"]

    def test_control_a_hang_in_the_title_beside_a_completed_run_is_not_healthy(self):
        text = FRAME + "# System hangs running nccl-tests, with 2 2080ti and NVlink bridge.\n\n" + NCCL_RUN
        found = answer(text)
        assert not healthy(text) and found.id == self.verdict and "journalctl -k" in found.fix
        assert found.evidence["reported"].startswith("line 3, the thread's title") and "Avg bus bandwidth" in found.evidence["output"]

    def test_control_a_hang_in_the_title_beside_a_completed_run_and_more_output_is_not_healthy(self):
        # (nccl-tests#44's run, then the topology the reporter pasted under it: the end is not the output's last line)
        text = (FRAME + "# System hangs running nccl-tests, with 2 2080ti and NVlink bridge.\n\n" + NCCL_RUN + "```\n```\n"
                "        GPU0    GPU1    CPU Affinity\nGPU0     X      NV2     0-23\nGPU1    NV2      X      0-23\n```\n")
        found = answer(text)
        assert not healthy(text) and found.id == self.verdict and "journalctl -k" in found.fix

    def test_control_a_sentence_that_the_run_fails_beside_a_completed_run_is_not_healthy(self):
        text = (FRAME + "# nccl-tests on 2 2080ti with NVlink bridge\n\nAlexWang1900 · description · 2020-03-01\n"
                "When I use the NVlink bridge my training crashes after a few minutes. Here is the nccl-tests run:\n" + NCCL_RUN)
        found = answer(text)
        assert not healthy(text) and found.id == self.verdict and found.evidence["reported"].startswith("line 6, a sentence")

    def test_sibling_a_sentence_that_it_no_longer_fails_beside_a_completed_run_is_healthy(self):
        text = (FRAME + "# nccl-tests on 2 2080ti with NVlink bridge\n\nAlexWang1900 · description · 2020-03-01\n"
                "It does not crash anymore since I set NCCL_P2P_DISABLE=1. Here is the nccl-tests run:\n" + NCCL_RUN)
        assert healthy(text)

    def test_control_a_whole_log_has_no_reporters_words(self):
        """A log committed to a repository (only the corpus' "# source:" line, no thread's header or byline): its lines are
        all output, a comment line in it is no title, and its completed run is healthy."""
        text = ("# source: https://github.com/NVIDIA/nccl-tests/blob/0000000/logs/run.log\n"
                "# System hangs running nccl-tests, with 2 2080ti and NVlink bridge.\n" + NCCL_RUN.removeprefix("```\n"))
        assert healthy(text)

    def test_sibling_the_same_run_without_the_words_is_healthy(self):
        assert healthy(FRAME + "# nccl-tests results on 2 2080ti with NVlink bridge\n\n" + NCCL_RUN)

    def test_sibling_a_hang_in_the_title_beside_a_cut_run_is_the_hang(self):
        text = FRAME + "# System hangs running nccl-tests, with 2 2080ti and NVlink bridge.\n\n" + NCCL_RUN.split("# Out")[0]
        assert answer(text).id == "log-said-hang"

    def test_sibling_a_titles_error_beside_a_gpu_table_stays(self):
        # RLinf/RLinf#255: the out-of-memory of the title, and an nvidia-smi table from before the run: consistent with it
        found = head(case("heldout25", "rlinf-255-4090-pair-smi"))
        assert found is not None and found.id == "cuda-oom"

    def test_sibling_a_titles_error_beside_a_cut_run_stays(self):
        # nunchaku-tech/ComfyUI-nunchaku#67: the kernel image error of the title, the paste cut in ComfyUI's start-up
        found = head(case("heldout24b", "comfyui-nunchaku-67-windows-startup"))
        assert found is not None and found.id == "cuda-no-kernel-image"

    def test_sibling_the_output_shows_the_titles_error_too(self):
        # wilicc/gpu-burn#123: the title's CUDA_ERROR_UNKNOWN stands in the run's own output as well
        found = head(case("heldout25", "gpu-burn-123-8xv100-init"))
        assert found is not None and found.id == "cuda-error-code"

    def test_sibling_a_no_device_title_beside_a_framework_that_sees_none_stays(self):
        text = (FRAME + "# [WIN11 22H2 WSL2]failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected\n\n"
                "tf version: 2.1.0 \nuse GPU []\nCUDA available: False\n")
        found = head(text)
        assert found is not None and found.id == "cuda-no-gpus-visible"


class TestLogInconclusiveHandledLogged:
    verdict = "log-inconclusive"

    def test_control_a_logged_exception_then_the_next_item_is_not_the_runs_error(self):
        text = CAUGHT + NEXT
        found = answer(text)
        assert head(text) is None and found.id == self.verdict and "ValueError" in found.title

    def test_sibling_a_logged_exception_that_ends_the_log_stays_the_error(self):
        assert head(CAUGHT) is not None

    def test_sibling_a_logged_exception_then_another_loggers_records_stays_the_error(self):
        # torch elastic's agent, after the script's process died (its own logger: no sign the script went on)
        agent = ("[2024-03-04 10:12:31,123] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 2417 closing signal SIGTERM\n"
                 "[2024-03-04 10:12:31,124] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 2418 closing signal SIGTERM\n")
        found = head(CAUGHT + agent)
        assert found is not None and "ValueError" in found.title + str(found.evidence)

    def test_sibling_a_logged_exception_then_a_failure_that_ends_the_run_stays(self):
        text = CAUGHT + NEXT + "Traceback (most recent call last):\n  File \"/Users/admin/forex_ai_project/main.py\", line 12, in <module>\n    main()\nKeyError: 'BTCUSD'\n"
        assert head(text) is not None


# a server's start after a traceback of an optional part (uvicorn's own lines, as vLLM's API server prints them; the
# traceback's shape as Python prints one a program catches with traceback.print_exc())
OPTIONAL = ("Traceback (most recent call last):\n"
            '  File "/usr/local/lib/python3.10/dist-packages/vllm/model_executor/models/registry.py", line 300, in _try_load\n'
            "    mod = importlib.import_module(module_name)\n"
            "RuntimeError: operator torchvision::nms does not exist\n")
SERVED = ("INFO:     Started server process [4127]\nINFO:     Waiting for application startup.\n"
          "INFO:     Application startup complete.\nINFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)\n")


class TestLogInconclusiveHandledServerUp:
    verdict = "log-inconclusive"

    def test_control_a_traceback_then_the_server_up_is_not_the_runs_error(self):
        text = OPTIONAL + SERVED
        assert head(text) is None and answer(text).id == self.verdict

    def test_sibling_a_traceback_then_the_startup_failing_stays_the_error(self):
        text = OPTIONAL + "INFO:     Waiting for application startup.\nERROR:    Application startup failed. Exiting.\n"
        assert head(text) is not None
