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


# ComfyUI's start-up (Comfy-Org/ComfyUI#9923, heldout24b): one custom node pack fails to import, ComfyUI says so and starts
COMFY_NODE = ("Traceback (most recent call last):\n"
              '  File "/home/u/ComfyUI/nodes.py", line 2106, in load_custom_node\n'
              "    module_spec.loader.exec_module(module)\n"
              '  File "<frozen importlib._bootstrap_external>", line 1190, in get_data\n'
              "FileNotFoundError: [Errno 2] No such file or directory: '/home/u/ComfyUI/custom_nodes/ComfyUI-WD14-Tagger/__init__.py'\n"
              "\n"
              "Cannot import /home/u/ComfyUI/custom_nodes/ComfyUI-WD14-Tagger module for custom nodes: [Errno 2] No such file or "
              "directory: '/home/u/ComfyUI/custom_nodes/ComfyUI-WD14-Tagger/__init__.py'\n"
              "\n"
              "Import times for custom nodes:\n"
              "   0.0 seconds (IMPORT FAILED): /home/u/ComfyUI/custom_nodes/ComfyUI-WD14-Tagger\n"
              "\n"
              "Starting server\n")
# a ComfyUI node failing while a workflow runs (its own words for it): the run's failure
COMFY_RUN = ("got prompt\n"
             "!!! Exception during processing !!!\n"
             "Traceback (most recent call last):\n"
             '  File "/home/u/ComfyUI/execution.py", line 151, in recursive_execute\n'
             "    output_data, output_ui = get_output_data(obj, input_data_all)\n"
             "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 8.00 GiB total capacity)\n"
             "\n"
             "Prompt executed in 3.21 seconds\n")
# AUTOMATIC1111/stable-diffusion-webui: an extension's script that cannot import its dependency, the traceback under the line
WEBUI_SCRIPT = ("*** Error loading script: tagger.py\n"
                "    Traceback (most recent call last):\n"
                '      File "/home/u/stable-diffusion-webui/modules/scripts.py", line 382, in load_scripts\n'
                "        script_module = script_loading.load_module(scriptfile.path)\n"
                '      File "/home/u/stable-diffusion-webui/extensions/tagger/scripts/tagger.py", line 5, in <module>\n'
                "        import tensorflow as tf\n"
                "    ModuleNotFoundError: No module named 'tensorflow'\n"
                "\n"
                "---\n"
                "Running on local URL:  http://127.0.0.1:7860\n")


class TestPluginItsHostSkipped:
    def test_control_a_custom_node_comfyui_could_not_import_is_no_failure_of_the_run(self):
        assert errors(COMFY_NODE) == []
        [found] = [f for f in api.diagnose(COMFY_NODE).findings if f.id == "path-not-found"]
        assert found.severity.value == "info" and found.evidence["went_on"]["how"] == "plug-in"

    def test_control_the_same_lines_as_a_log_viewer_reversed_them(self):
        # RunPod's viewer shows the host's line first, the exception's line two lines under it
        reversed_lines = (COMFY_NODE.split("\n")[6] + "\n\n" + COMFY_NODE.split("\n")[4] + "\n"
                          '  File "<frozen importlib._bootstrap_external>", line 1190, in get_data\n')
        assert errors(reversed_lines) == []

    def test_control_an_extension_script_the_web_ui_could_not_load(self):
        assert errors(WEBUI_SCRIPT) == []
        [found] = [f for f in api.diagnose(WEBUI_SCRIPT).findings if f.id == "module-not-found"]
        assert found.evidence["went_on"]["how"] == "plug-in"

    def test_sibling_a_node_that_fails_while_the_workflow_runs_stays_the_failure(self):
        assert "cuda-oom" in errors(COMFY_RUN)
        assert "cuda-oom" in errors(COMFY_NODE + COMFY_RUN)

    def test_sibling_the_same_exception_without_its_hosts_word_stays_the_failure(self):
        text = COMFY_NODE.replace("Cannot import", "Could not open")
        assert "path-not-found" in errors(text)


# facebookresearch/SlowFast#149 (heldout27b): on Windows the script asks nvidia-smi for the GPUs, cmd.exe cannot find it,
# and the script's logger goes on
SMI_MISSING = ("'nvidia-smi' is not recognized as an internal or external command,\n"
               "operable program or batch file.\n")
SMI_THEN = "[12/18 22:30:01][INFO] mydata.py:  73: Constructing mydata train...\n"


class TestNvidiaSmiMissingStep:
    def test_control_the_program_going_on_after_the_missing_tool_is_no_failure(self):
        assert errors(SMI_MISSING + SMI_THEN) == []
        found = inconclusive(SMI_MISSING + SMI_THEN)
        assert found.evidence["went on"] == "line 3: [12/18 22:30:01][INFO] mydata.py:  73: Constructing mydata train..."
        assert "where nvidia-smi" in found.fix

    def test_sibling_the_missing_tool_alone_stays_the_error(self):
        assert errors(SMI_MISSING) == ["nvidia-smi-not-found"]
        assert errors("bash: nvidia-smi: command not found\nuser@host:~$ \n") == ["nvidia-smi-not-found"]

    def test_sibling_a_failure_after_the_programs_record_keeps_an_error(self):
        text = SMI_MISSING + SMI_THEN + "RuntimeError: Found no NVIDIA driver on your system.\n"
        assert errors(text) != []


# a logger's record of str(e), then Python's traceback, whose last line carries 3.10's suggestion that str(e) lacks
# (the shape of heldout27w sanayume/rainfalldata's "'Axes' object has no attribute 'setTitle'")
LOGGED_NAME_ERROR = ("2025-03-23 20:17:24 - INFO - epoch 3 done\n"
                     "2025-03-23 20:17:25 - ERROR - error while plotting: name 'plot_lossses' is not defined\n"
                     "Traceback (most recent call last):\n"
                     '  File "F:\\proj\\train.py", line 313, in report\n'
                     "    plot_lossses(history)\n"
                     "NameError: name 'plot_lossses' is not defined. Did you mean: 'plot_losses'?\n"
                     "2025-03-23 20:17:26 - INFO - saving the model to models/best.pth\n"
                     "2025-03-23 20:17:27 - INFO - evaluating on the test set\n")


class TestLoggedMessageWithPythonsSuggestion:
    def test_control_the_suggestion_python_adds_does_not_hide_the_record_of_the_message(self):
        plain = LOGGED_NAME_ERROR.replace(". Did you mean: 'plot_losses'?", "")
        assert [f.id for f in api.diagnose(LOGGED_NAME_ERROR).findings] == [f.id for f in api.diagnose(plain).findings]
        assert "python-exception" not in [f.id for f in api.diagnose(LOGGED_NAME_ERROR).findings]

    def test_sibling_a_record_of_another_message_leaves_the_traceback_the_runs(self):
        other = LOGGED_NAME_ERROR.replace("error while plotting: name 'plot_lossses' is not defined", "plotting failed")
        assert "python-exception" in [f.id for f in api.diagnose(other).findings]


# chidiwilliams/buzz#1160 (heldout28): torio's loader logs each FFmpeg it cannot load at DEBUG level with its traceback,
# and tries the next
TORIO = ("[2025-05-22 00:40:42,535] utils._find_ffmpeg_extension:114 DEBUG -> Loading FFmpeg6\n"
         "[2025-05-22 00:40:42,535] utils._find_ffmpeg_extension:120 DEBUG -> Failed to load FFmpeg6 extension.\n"
         "Traceback (most recent call last):\n"
         '  File "torio\\_extension\\utils.py", line 116, in _find_ffmpeg_extension\n'
         '  File "torio\\_extension\\utils.py", line 105, in _find_versionsed_ffmpeg_extension\n'
         "ModuleNotFoundError: No module named 'torio.lib'\n")
TORIO_NEXT = "[2025-05-22 00:40:42,535] utils._find_ffmpeg_extension:114 DEBUG -> Loading FFmpeg5\n"


class TestTracebackLoggedAtDebugLevel:
    def test_control_a_traceback_logged_at_debug_level_then_the_next_record_is_caught(self):
        assert errors(TORIO + TORIO_NEXT) == []
        [found] = [f for f in api.diagnose(TORIO + TORIO_NEXT).findings if f.id == "module-not-found"]
        assert found.evidence["went_on"]["how"] == "logged-low"

    def test_sibling_the_log_ending_at_the_exception_keeps_the_error(self):
        assert errors(TORIO) == ["module-not-found"]

    def test_sibling_an_error_level_record_before_it_is_not_this_rule(self):
        text = (TORIO + TORIO_NEXT).replace(":120 DEBUG -> Failed", ":120 ERROR -> Failed")
        assert errors(text) == ["module-not-found"]

    def test_sibling_another_programs_line_after_it_keeps_the_error(self):
        text = TORIO + "E0522 00:40:43.100000 1234 torch/distributed/elastic/multiprocessing/api.py:826] failed (exitcode: 1)\n"
        assert "module-not-found" in errors(text)


# CS1o/Stable-Diffusion-Info#57 (heldout27b): OneTrainer on an AMD RX 9070 XT, its CUDA build of torch told no NVIDIA driver
NO_NVIDIA = "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx\n"


def no_driver_fix(text: str) -> str:
    [found] = [f for f in api.diagnose(text).findings if f.id == "cuda-no-driver"]
    return found.fix


class TestAmdGpuSetting:
    def test_control_an_amd_gpus_stack_gets_the_rocm_fix_not_nvidias(self):
        for shows in ("I installed TheRock's ROCm wheels for my RX 9070 XT (gfx1201)\n", "torch 2.6.0+rocm6.2\n",
                      "GPU 0: AMD Radeon RX 7900 XTX\n"):
            assert "ROCm build of PyTorch" in no_driver_fix(shows + NO_NVIDIA)

    def test_sibling_a_ryzens_integrated_graphics_or_an_amd_cpu_is_no_amd_gpu(self):
        for shows in ("Display adapters: AMD Radeon(TM) Graphics, NVIDIA GeForce RTX 3060 Laptop GPU\n",
                      "CPU: AMD Ryzen 9 5950X 16-Core Processor\n"):
            assert "ROCm" not in no_driver_fix(shows + NO_NVIDIA)

    def test_sibling_hips_own_no_device_keeps_its_own_fix(self):
        # ROCm/hip#3191 (heldout18): a HIP program's hipErrorNoDevice is read in HIP's words; the ROCm-build fix is torch's
        text = "GPU 0: AMD Radeon PRO W6800\nhipGetDeviceCount failed: hipErrorNoDevice (100)\n"
        found = [f for f in api.diagnose(text).findings if f.id == "cuda-no-gpus-visible"]
        assert all("ROCm build of PyTorch" not in f.fix for f in found)

    def test_sibling_a_link_to_amds_projects_is_no_amd_gpu(self):
        text = "see https://github.com/ROCm/TheRock/issues/1 for the wheels\n" + NO_NVIDIA
        assert "ROCm" not in no_driver_fix(text)
