"""Controls and siblings for diagB29 (issue 35: never confidently wrong). Answers that named a cause the log does not
decide: a start-up step with nothing to do read as a run that did no work, a traceback a program formatted into its own
log record read as the run's failure, a plug-in's import failure the program went on from, a tool missing from the PATH
while the program went on. `test_control_*` is the input that must not get the verdict, `test_sibling_*` the nearest one
that keeps it. Lines are real ones (threads named beside them)."""

from __future__ import annotations

from gpudoctor import api


def inconclusive(text: str):
    """The answer of a log with no error diagnose names (log-inconclusive and its kin)."""
    [found] = [f for f in api.diagnose(text).findings if f.id in ("log-inconclusive", "log-no-failure", "log-said-hang", "log-said-oom")]
    return found


def errors(text: str) -> list[str]:
    return [f.id for f in api.diagnose(text).findings if f.severity.value == "error"]


# AUTOMATIC1111/stable-diffusion-webui#12273: an extension hashes its models (none) at start-up, then the web UI loads its model
WEBUI_START = ("[AddNet] Updating model hashes...\n"
               "0it [00:00, ?it/s]\n"
               "Loading weights [48fd89ed36] from C:\\Users\\me\\stable-diffusion-webui\\models\\Stable-diffusion\\model.safetensors\n"
               "Creating model from config: C:\\Users\\me\\stable-diffusion-webui\\configs\\v1-inference.yaml\n"
               "LatentDiffusion: Running in eps-prediction mode\n")
# hpcaitech/Open-Sora#562 (dev5): every epoch ends at once with 0 iterations
ZERO_EPOCH = ("[2024-06-29 05:36:31] Beginning epoch 1...\n"
              "Epoch 1: 0it [00:00, ?it/s]\n")


class TestNoWorkStartUp:
    def test_control_a_start_up_bar_of_none_before_the_model_loads_is_no_work_undone(self):
        assert "no work" not in inconclusive(WEBUI_START).evidence

    def test_sibling_an_epoch_of_none_after_the_model_loaded_stays_no_work(self):
        text = WEBUI_START.replace("0it [00:00, ?it/s]\n", "") + ZERO_EPOCH
        assert inconclusive(text).evidence["no work"] == "line 6: Epoch 1: 0it [00:00, ?it/s]"

    def test_sibling_a_trainers_reload_of_its_best_model_after_the_epochs_takes_nothing_back(self):
        text = ZERO_EPOCH + "Loading best model from saves/checkpoint-0 (score: 0.5).\n"
        assert inconclusive(text).evidence["no work"] == "line 2: Epoch 1: 0it [00:00, ?it/s]"


# PaddleOCR's loader (heldout28w shanmuka7482/OCR-Project train.log): a sample whose image is missing is logged with its
# traceback inside the record's message, and the loader goes on to the next sample
PADDLE_RECORD = (", error happened with msg: Traceback (most recent call last):\n"
                 '  File "C:\\Users\\me\\anaconda3\\envs\\paddleocr\\Lib\\site-packages\\PaddleOCR\\ppocr\\data\\simple_dataset.py", line 131, in __getitem__\n'
                 '    raise Exception("{} does not exist!".format(img_path))\n'
                 "Exception: C:/data/testing_data\\O\\29270.png does not exist!\n")


class TestTracebackFormattedInAMessage:
    def test_control_a_traceback_a_loader_logged_in_its_own_message_is_caught(self):
        found = inconclusive(PADDLE_RECORD)
        assert found.id == "log-inconclusive" and "exception" in found.evidence
        assert errors(PADDLE_RECORD) == []

    def test_sibling_the_same_traceback_printed_by_python_at_a_lines_start_stays_the_failure(self):
        text = PADDLE_RECORD.replace(", error happened with msg: ", "")
        assert errors(text) != []

    def test_sibling_a_ranks_prefix_before_the_header_is_no_message(self):
        text = PADDLE_RECORD.replace(", error happened with msg: ", "[rank0]: ")
        assert errors(text) != []


# danielgatis/rembg#668 (heldout27b): the title quotes onnxruntime's library error; far below, the reporter says it is gone
# and turns to the problem left (the CPU used)
REMBG_FRAME = ("# source: https://github.com/danielgatis/rembg/issues/668\n"
               "danielgatis/rembg · issue #668 · open · Python\n"
               "labels: bug\n"
               "# FAIL : Failed to load library libonnxruntime_providers_cuda.so with error: libcublasLt.so.12: cannot open shared object file: No such file or directory\n"
               "\n"
               "catscarlet · comment · 2025-02-28\n"
               "Here is the core of the Dockerfile I build for testing\n"
               "\n" + "".join(f"RUN step {n}\n" for n in range(12)) + "\n")
REMBG_GONE = "After the docker image build finish. I test and it doesn't have the lib missing issue anymore, **BUT it still use ONLY CPU** .\n"


class TestTitleErrorSaidGone:
    def test_control_a_titles_error_the_reporter_says_is_gone_far_below_is_history(self):
        found = inconclusive(REMBG_FRAME + REMBG_GONE)
        assert "said fixed" in found.evidence and errors(REMBG_FRAME + REMBG_GONE) == []
        [provider] = [f for f in api.diagnose(REMBG_FRAME + REMBG_GONE).findings if f.id == "onnxruntime-cuda-provider-failed"]
        assert provider.severity.value == "info"

    def test_sibling_the_error_still_there_stays_the_titles_report(self):
        still = REMBG_GONE.replace("doesn't have the lib missing issue anymore, **BUT it still use ONLY CPU**",
                                   "still has the lib missing issue")
        [provider] = [f for f in api.diagnose(REMBG_FRAME + still).findings if f.id == "onnxruntime-cuda-provider-failed"]
        assert provider.severity.value != "info" and "said_fixed" not in provider.evidence

    def test_sibling_an_error_in_the_output_said_gone_far_below_keeps_the_same_posts_window(self):
        # the same error as the output's own line (not the title): a sentence WINDOW lines on is another post's
        text = REMBG_FRAME.replace("# FAIL : Failed", "[E:onnxruntime:Default] Failed", 1).replace("\nlabels: bug\n", "\nlabels: bug\n# rembg on the CPU\n", 1)
        text = text.replace("# rembg on the CPU\n[E:", "# rembg on the CPU\n\n[E:", 1)
        [provider] = [f for f in api.diagnose(text + REMBG_GONE).findings if f.id == "onnxruntime-cuda-provider-failed"]
        assert "said_fixed" not in provider.evidence
