"""Controls and siblings for diagA27 (issue 35: never the wrong line). Every wrong answer on last session's fresh logs took as
the failure a line that is not where the run stopped: a line the program went on past (Python logging's report of a record it
could not write, an INFO record that an optional backend is not there, a batch script's missing `activate`), an earlier
attempt's (a traceback above the prompt that runs the same script again), a line the reporter's sentence introduces that is
only the output's first (a program's "Starting server"), the reporter's words about another run (an out-of-memory of a run on
another number of GPUs); and a frame of a compiled library (`.pxi`) taken for the user's. `test_control_*` is the input that
must not get the verdict, `test_sibling_*` the nearest one that keeps it. Lines are real ones (threads named beside them)."""

from __future__ import annotations

from test_controls_detect8 import head
from test_controls_diagB20 import ids

from gpudoctor import api


def answer(text: str):
    """The answer of a log with no error diagnose names (log-inconclusive and its kin)."""
    [found] = [f for f in api.diagnose(text).findings if f.id in ("log-inconclusive", "log-no-failure", "log-said-hang", "log-said-oom")]
    return found


FRAME = "# source: https://github.com/{repo}/issues/{n}\n{repo} · issue #{n} · open · Python\n# {title}\n\n"

# YanWenKun/Hunyuan3D-2-WinPortable#9 (heldout26): the API server's stderr through FastChat's logger; uvicorn's start-up record
# that logging could not format (logging printed it and went on), the next request, then the request's own traceback (cut)
LOGGING_ERROR = (
    '2025-03-19 10:38:42 | ERROR | stderr |   File "D:\\Program Files\\Hunyuan3D2\\python_standalone\\Lib\\site-packages\\uvicorn\\server.py", line 215, in _log_started_message\n'
    "2025-03-19 10:38:42 | ERROR | stderr |     logger.info(\n"
    "2025-03-19 10:38:42 | ERROR | stderr | Message: 'Uvicorn running on %s://%s:%d (Press CTRL+C to quit)'\n"
    "2025-03-19 10:38:42 | ERROR | stderr | Arguments: ('http', '0.0.0.0', '8081')\n"
    "2025-03-19 10:39:05 | INFO | controller | Worker generating...\n")
GENERATE_FAILED = (
    "2025-03-19 10:46:16 | ERROR | stderr | Traceback (most recent call last):\n"
    '2025-03-19 10:46:16 | ERROR | stderr |   File "D:\\Program Files\\Hunyuan3D2\\Hunyuan3D-2\\api_server.py", line 208, in generate\n'
    "2025-03-19 10:46:16 | ERROR | stderr |     file_path, uid = worker.generate(uid, params)\n"
    '2025-03-19 10:46:16 | ERROR | stderr |   File "D:\\Program Files\\Hunyuan3D2\\Hunyuan3D-2\\api_server.py", line 165, in generate\n'
    "2025-03-19 10:46:16 | ERROR | stderr |     image = self.pipeline_t\n")


class TestUnrecognisedFailureLoggingError:
    verdict = "unrecognised-failure"

    def test_control_loggings_own_error_report_is_not_the_failure(self):
        found = head(LOGGING_ERROR + GENERATE_FAILED)
        assert found is not None and found.id == self.verdict and found.evidence["first_line"] == 6
        assert "api_server.py:165" in found.evidence["raised_in"]

    def test_control_loggings_own_error_report_alone_is_handled(self):
        assert head(LOGGING_ERROR) is None and answer(LOGGING_ERROR).evidence["exception"].startswith("line 3: Message:")

    def test_sibling_the_same_frames_where_the_log_stops_stay_the_failure(self):
        found = head("".join(LOGGING_ERROR.splitlines(keepends=True)[:2]))
        assert found is not None and found.id == self.verdict and "server.py:215" in found.evidence["raised_in"]


# bt420000-collab/ComfyUI-H3-MultiGPU#2 (heldout26): comfy_kitchen's INFO records of its backends; the eager one was used
BACKENDS = (
    "2026-09-08T16:44:26.834451 - [INFO] Found comfy_kitchen backend triton: {'available': False, 'disabled': True, "
    "'unavailable_reason': \"ImportError: No module named 'triton'\", 'capabilities': []}\n"
    "2026-09-08T16:44:26.835164 - [INFO] Found comfy_kitchen backend eager: {'available': True, 'disabled': False, "
    "'unavailable_reason': None, 'capabilities': ['adaln', 'apply_rope']}\n")


class TestModuleNotFound:
    verdict = "module-not-found"

    def test_control_an_info_record_that_a_backend_is_unavailable_is_not_the_failure(self):
        assert head(BACKENDS) is None and answer(BACKENDS).evidence["went on"].startswith("line 1: - [INFO] Found comfy_kitchen")

    def test_sibling_the_same_words_at_error_level_stay_the_failure(self):
        text = BACKENDS.replace("[INFO]", "[ERROR]")
        found = head(text)
        assert found is not None and found.id == self.verdict and found.evidence["module"] == "triton"


# MikeEmmett/InvokeAI#14 (heldout26): the Colab cell's `source .venv/bin/activate` failed, and InvokeAI started all the same
INVOKE = ("InvokeAI Public URL: https://8a82-34-125-72-98.ngrok-free.app/\n"
          "/bin/bash: line 1: /content/invokeai/.venv/bin/activate: No such file or directory\n"
          "[2025-05-14 07:26:52,019]::[InvokeAI]::INFO --> PyTorch CUDA memory allocator: cudaMallocAsync\n"
          "[2025-05-14 07:26:52,057]::[InvokeAI]::INFO --> Using torch device: Tesla T4\n"
          "[2025-05-14 07:27:11,515]::[InvokeAI]::INFO --> cuDNN version: 90100\n"
          "INFO:InvokeAI:cuDNN version: 90100\n")


class TestPathNotFound:
    verdict = "path-not-found"

    def test_control_a_set_up_steps_missing_activate_the_job_went_on_past(self):
        assert head(INVOKE) is None and "set-up step at line 2" in answer(INVOKE).fix

    def test_sibling_the_missing_activate_with_nothing_after_it_stays_the_failure(self):
        found = head(INVOKE.split("[2025")[0])
        assert found is not None and found.id == self.verdict


# YYuX-1145/Bert-VITS2-Integration-package#21 (heldout26): the first run's IndentationError, then the same script run again
RERUN = (FRAME.format(repo="YYuX-1145/Bert-VITS2-Integration-package", n=21, title="在算力云上运行 最后一步训练出错")
         + "XzJosh216 · description · 2023-09-08\n"
         'File "train_ms.py", line 58\n'
         "    shutil.copy('./pretrained_models/G_0.pth','./logs/OUTPUT_MODEL/G_0.pth')\n"
         "    ^\n"
         "IndentationError: unexpected indent\n"
         "root@autodl-container-9e2911833c-f68eb341:~/autodl-tmp/Bert-VITS2-Integration-Package# python train_ms.py -c ./configs/config.json\n"
         "INFO:OUTPUT_MODEL:{'train': {'log_interval': 10, 'eval_interval': 100, 'seed': 52, 'epochs': 1000}}\n")


class TestPythonException:
    verdict = "python-exception"

    def test_control_an_earlier_attempts_error_above_the_same_script_run_again(self):
        assert head(RERUN) is None and answer(RERUN).title.startswith("the failure at line 9 is an earlier attempt's: train_ms.py")

    def test_sibling_another_script_run_or_the_same_one_read_leaves_the_error_the_runs(self):
        for command in ("# python infer.py", "# cat train_ms.py"):
            found = head(RERUN.replace("# python train_ms.py", command))
            assert found is not None and found.id == self.verdict and found.evidence["exception"] == "IndentationError"


# neuratech-ai/ComfyUI-MultiGPU#1 (heldout26): the sentence introduces the output, whose first line is the server's start
VALIDATION = (FRAME.format(repo="neuratech-ai/ComfyUI-MultiGPU", n=1, title="Can't change from default 0 and 1")
              + "RandomInternetPreson · description · 2024-08-04\n"
              "I get this error when trying to use the default settings:\n\n"
              "Starting server\n\n"
              "To see the GUI go to: http://127.0.0.1:8188\n"
              "got prompt\n"
              "Failed to validate prompt for output 9:\n"
              "* DualCLIPLoaderMultiGPU 32:\n"
              "  - Value not in list: device: 'cuda:1' not in ['cuda:0']\n"
              "Output will be ignored\n\n"
              "I'm on Ubuntu\n")


class TestUnrecognisedFailureIntroduced:
    verdict = "unrecognised-failure"

    def test_control_the_outputs_first_status_line_is_not_the_introduced_error(self):
        assert head(VALIDATION) is None and "Starting server" not in str(answer(VALIDATION).evidence)

    def test_sibling_a_lone_message_without_failure_words_stays_the_introduced_error(self):
        # deepspeedai/DeepSpeed#3624: the message the sentence introduces, whatever its words
        text = VALIDATION.replace("Starting server", "No slot 2 specificied on host work1")
        found = head(text)
        assert found is not None and found.id == self.verdict and found.evidence["kind"] == "introduced"


# Jiayi-Pan/TinyZero#100 (heldout26b): the out-of-memory is the 1-GPU run's; the log is the 2-GPU run's, stuck at NCCL's set-up
TWO_RUNS = (FRAME.format(repo="Jiayi-Pan/TinyZero", n=100, title="How to run SFT on 2 L40 GPUs")
            + "cychomatica · description · 2025-03-21\n"
            "The trainer will be launched when only using 1 GPU, but later an OOM error will occur. When using 2 GPUs, the trainer "
            "will get stuck after NCCL initialization. Here is my log \n\n```\n"
            "NCCL version 2.20.5+cuda12.4\n```\n")


class TestLogSaidOom:
    verdict = "log-said-oom"

    def test_control_an_out_of_memory_said_of_a_run_on_another_number_of_gpus(self):
        assert self.verdict not in ids(TWO_RUNS)

    def test_sibling_an_out_of_memory_said_of_the_one_run_told(self):
        assert self.verdict in ids(TWO_RUNS.replace("When using 2 GPUs, the trainer will get stuck after NCCL initialization", "I need help"))


# aashifa05/smart-pill-identification's training log (heldout26w): pandas' KeyError raised in its Cython lookup, raised again
# from it in pandas' get_loc, called from the user's row['image']
KEY_ERROR = ("Traceback (most recent call last):\n"
             '  File "C:\\Users\\u\\AppData\\Local\\Programs\\Python\\Python311\\Lib\\site-packages\\pandas\\core\\indexes\\base.py", line 3812, in get_loc\n'
             "    return self._engine.get_loc(casted_key)\n"
             '  File "pandas/_libs/index.pyx", line 167, in pandas._libs.index.IndexEngine.get_loc\n'
             '  File "pandas/_libs/hashtable_class_helper.pxi", line 7096, in pandas._libs.hashtable.PyObjectHashTable.get_item\n'
             "KeyError: 'image'\n\n"
             "The above exception was the direct cause of the following exception:\n\n"
             "Traceback (most recent call last):\n"
             '  File "C:\\Users\\u\\Desktop\\Admin\\train_imprint_robust_v2.py", line 132, in load_data\n'
             "    img_path = Path(train_path) / row['image']\n"
             '  File "C:\\Users\\u\\AppData\\Local\\Programs\\Python\\Python311\\Lib\\site-packages\\pandas\\core\\indexes\\base.py", line 3819, in get_loc\n'
             "    raise KeyError(key) from err\n"
             "KeyError: 'image'\n")


class TestUnrecognisedFailureLibraryFrame:
    verdict = "unrecognised-failure"

    def test_control_a_compiled_librarys_pxi_frame_is_not_your_code(self):
        found = head(KEY_ERROR)
        assert found is not None and found.id == self.verdict and "your code" not in found.title
        assert "train_imprint_robust_v2.py:132" in found.fix

    def test_sibling_a_key_error_raised_in_your_own_code_stays_yours(self):
        text = ("Traceback (most recent call last):\n"
                '  File "C:\\Users\\u\\Desktop\\Admin\\train_imprint_robust_v2.py", line 132, in load_data\n'
                "    img_path = Path(train_path) / labels['image']\n"
                "KeyError: 'image'\n")
        found = head(text)
        assert found is not None and found.id == "python-exception" and "your code" in found.title


# Chen-zexi/vllm-cli#11 (heldout24b), a merged pull request: its description tells the error the change fixes
CHANGE = (FRAME.format(repo="Chen-zexi/vllm-cli", n=11, title="feat: add NVIDIA Jetson platform support").replace("issue #11 · open", "pull request #11 · merged")
          + "massif-01 · description · 2026-01-09\n"
          "## Problem\n\n"
          "On Jetson devices, `nvidia-smi` returns `[N/A]` for memory and utilization fields:\n"
          "```\n0, Orin (nvgpu), [N/A], [N/A], [N/A], [N/A], [N/A]\n```\n\n"
          "This caused `int(\"[N/A]\")` to raise `ValueError`, and the PyTorch fallback was never triggered.\n")


class TestUnrecognisedFailureChangeNamed:
    verdict = "unrecognised-failure"

    def test_control_the_error_a_pull_requests_description_says_it_fixes(self):
        assert head(CHANGE) is None and answer(CHANGE).evidence["reported"][0].startswith("line 13, a sentence")

    def test_sibling_the_same_sentence_under_a_title_that_reports_it_is_read(self):
        found = head(CHANGE.replace("feat: add NVIDIA Jetson platform support", "Jetson is not detected as a GPU"))
        assert found is not None and found.id == self.verdict and found.evidence["what"] == "ValueError"


class TestLogSaidHang:
    verdict = "log-said-hang"

    def test_control_torchs_own_watchdog_words_of_a_hang_are_no_persons(self):
        # heldout7 VLM-R1#257: torch's watchdog message, wrapped (its line starts mid-word)
        text = (FRAME.format(repo="om-ai-lab/VLM-R1", n=257, title="NCCL watchdog")
                + "cates a NCCL/CUDA API (e.g., CudaEventDestroy) hang blocking the watchdog, and could be triggered by another thread\n"
                "NCCL version 2.21.5+cuda12.4\n")
        assert self.verdict not in ids(text)

    def test_sibling_a_persons_sentence_that_names_nccl_says_the_run_hangs(self):
        assert ids(TWO_RUNS)[0] == self.verdict
