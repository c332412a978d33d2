"""Controls and siblings for diagA21 (issue 35: never confidently wrong): a failure-looking line that the same run
clearly went on past is not that run's failure, and one nvidia-smi snapshot does not decide that ranks are stuck.

What shows that a job went on (knowledge/progress.py, knowledge/story.py `went_on`, its `how`): the job's own end
after the log's last failure ("ended"); a library's warning-level line, then the run's progress ("warned"); a batch
script's set-up step the shell could not run, then the job's own output ("set-up"); a benchmark's table rows going on
past the configurations that crashed ("progress", its rows read as progress). Each leaves the log undecided
(log-inconclusive, case went-on) with the line as info. The dangerous siblings keep their error: a failure with only
teardown after it, another rank's progress after one rank's failure, a failure after the thing gone past, the job's own
command not found. `gpu-collective-spin`: one table with no word of a hang is info (case snapshot); the reporter's
"freeze", or a second table, keeps the warning.

`test_control_*` is the look-alike input that must not get the verdict, `test_sibling_*` the nearest one that gets its
own. Lines are real ones from the development parts (their source beside them), cut short."""

from __future__ import annotations

import pytest

from gpudoctor import api
from gpudoctor.core.findings import Severity


def report(text: str):
    return api.diagnose(text)


def errors(text: str) -> list[str]:
    return [f.id for f in report(text).findings if f.severity is Severity.ERROR]


def went_on(text: str) -> list[dict]:
    return [f.evidence["went_on"] for f in report(text).findings if "went_on" in f.evidence]


def answer(text: str):
    return next((f for f in report(text).findings if f.id in ("log-no-failure", "log-inconclusive")), None)


# heldout20w, https://github.com/sgsikorski/NLP-Project/blob/295cca6133abac44b2b55c3f7766494465458a9a/finetune.log:
# a script that logs its stage at CRITICAL, then finishes and saves
FINETUNE_START = "INFO:__main__:Split the dataset\nINFO:__main__:Loaded meta-llama/Llama-3.2-1B\n"
CRITICAL_STAGE = "CRITICAL:__main__:Starting finetuning\n"
FINETUNE_DONE = "INFO:__main__:Finetuning done!\nINFO:__main__:Model and tokenizer saved to results\n"
# heldout20w, https://github.com/fablevi/ipex_csm_lora/blob/b0460d424f482c41958c69d6eb77dd11c270eef4/finetune.log: the
# script logs the traceback of a sample it could not read (logger.exception) and goes on
LOGGED_TRACEBACK = (
    "2025-05-08 21:50:20,128 - __main__ - ERROR - Error during finetuning: Error opening '.\\\\data\\\\egri_csillagok_0002.wav': System error.\n"
    "2025-05-08 21:50:20,192 - __main__ - ERROR - Traceback (most recent call last):\n"
    '  File "E:\\PythonApps\\csm-streaming\\lora_no_whsiper.py", line 405, in load_audio\n'
    "    waveform, sr = torchaudio.load(self.audio_path)\n"
    '  File "E:\\PythonApps\\csm-streaming\\venv\\lib\\site-packages\\soundfile.py", line 1265, in _open\n'
    '    raise LibsndfileError(err, prefix="Error opening {0!r}: ".format(self.name))\n'
    "soundfile.LibsndfileError: Error opening '.\\\\data\\\\egri_csillagok_0002.wav': System error.\n"
)
TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/home/u/NLP-Project/finetune.py", line 88, in <module>\n'
    "    trainer.train()\n"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 15.77 GiB\n"
)


class TestFatalLevelOnly:
    """A line whose only failure sign is its logger's fatal level, with a message that says nothing failed or stops
    (knowledge/evidence.py `only_the_level`): a line logged at error level, not a failure."""

    def test_control_a_stage_logged_at_critical_then_the_end_is_healthy(self):
        text = FINETUNE_START + CRITICAL_STAGE + FINETUNE_DONE
        assert errors(text) == [] and answer(text).id == "log-no-failure"

    @pytest.mark.parametrize(
        "line",
        [
            pytest.param("CRITICAL 03-29 08:10:03 [multiproc_executor.py:49] WorkerProc failed to start\n", id="says-what-failed"),
            pytest.param("CRITICAL 03-29 08:10:03 [multiproc_executor\n", id="cut-after-the-level"),  # dev4's Qwen2.5-Omni#63
            pytest.param("2024-01-01 10:00:00,000 - CRITICAL - Loss diverged, stopping\n", id="says-it-stops"),
        ],
    )
    def test_sibling_a_fatal_level_line_that_says_a_failure_stays_an_error(self, line):
        assert errors(FINETUNE_START + line)


class TestWentOnEnded:
    """The job's own words that it is done, after the log's last failure, where one process writes the log."""

    def test_control_a_logged_traceback_then_the_jobs_end_is_no_error(self):
        text = FINETUNE_START + LOGGED_TRACEBACK + FINETUNE_DONE
        assert errors(text) == []
        assert went_on(text)[0]["how"] == "ended"
        assert "went on past it (its end at line 10)" in answer(text).title

    def test_sibling_the_failure_after_the_end_stays_an_error(self):
        assert errors(FINETUNE_START + FINETUNE_DONE + LOGGED_TRACEBACK)

    @pytest.mark.parametrize(
        "after",
        [
            pytest.param("INFO:torch.distributed.distributed_c10d:Destroying process group\n", id="teardown"),
            pytest.param("Total time: 0:12:31\n", id="a-time-on-the-way-out"),
            pytest.param("", id="nothing"),
        ],
    )
    def test_sibling_a_traceback_followed_only_by_teardown_stays_an_error(self, after):
        assert errors(FINETUNE_START + TRACEBACK + after)

    def test_sibling_one_ranks_failure_then_another_ranks_end_stays_an_error(self):
        text = ("[rank1]: " + TRACEBACK.replace("\n", "\n[rank1]: ").rstrip("[rank1]: ")
                + "[rank0]: INFO:__main__:Finetuning done!\n")
        assert errors(text)


# heldout20w, https://github.com/fablevi/ipex_csm_lora/blob/b0460d424f482c41958c69d6eb77dd11c270eef4/finetune.log
BNB_WARNING = ("2025-05-08 21:53:48,163 - bitsandbytes.cextension - WARNING - The installed version of bitsandbytes was "
               "compiled without GPU support. 8-bit optimizers, 8-bit multiplication, and GPU quantization are unavailable.\n")
LORA_START = ("2025-05-08 21:53:46,126 - __main__ - INFO - Starting finetuning process\n"
              "2025-05-08 21:53:46,217 - __main__ - INFO - Calculating initial validation loss...\n")
LORA_TRAINS = ("2025-05-08 21:54:22,533 - __main__ - INFO - Initial validation loss: 11.706221\n"
               "2025-05-08 21:54:22,533 - __main__ - INFO - Starting epoch 1/13\n")


class TestWentOnWarned:
    """A library's warning-level line, then the run's progress (or a stage it starts), and no failure after it."""

    def test_control_bitsandbytes_set_up_warning_then_training_is_no_error(self):
        text = LORA_START + BNB_WARNING + LORA_TRAINS
        assert errors(text) == []
        assert went_on(text)[0]["how"] == "warned"

    def test_sibling_the_same_warning_last_stays_an_error(self):
        assert "bitsandbytes-cuda-setup-failed" in errors(LORA_START + BNB_WARNING)

    def test_sibling_a_failure_after_the_warning_stays_an_error(self):
        assert errors(LORA_START + BNB_WARNING + LORA_TRAINS + TRACEBACK)

    def test_sibling_the_warning_on_one_rank_then_another_ranks_progress_stays_an_error(self):
        text = "[rank1]: " + BNB_WARNING + "".join(f"[rank0]: {line}\n" for line in LORA_TRAINS.splitlines())
        assert "bitsandbytes-cuda-setup-failed" in errors(text)

    def test_sibling_bitsandbytes_own_set_up_failure_then_progress_stays_an_error(self):
        # bitsandbytes-foundation/bitsandbytes#1522: not a warning-level record, the library's own failure
        text = LORA_START + "CUDA Setup failed despite GPU being available. Inspect the CUDA SETUP outputs above to fix your environment!\n" + LORA_TRAINS
        assert "bitsandbytes-cuda-setup-failed" in errors(text)


# heldout20w, https://github.com/Soundbendor/productivity-playlist/blob/426628e21686cce0444efd0fb273b3bf2669f51d/train.err
ACTIVATE = "/var/spool/slurmd/job258883/slurm_script: line 14: activate: No such file or directory\n"
TF_RUNS = (
    "WARNING: There is a new version of neptune-client 0.9.1 (installed: 0.5.1).\n"
    "2021-04-19 14:22:10.682177: I tensorflow/stream_executor/platform/default/dso_loader.cc:44] Successfully opened dynamic library libcuda.so.1\n"
    "2021-04-19 14:22:13.550094: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1703] Adding visible gpu devices: 0\n"
    "2021-04-19 14:27:02.795350: I tensorflow/core/kernels/data/shuffle_dataset_op.cc:184] Filling up shuffle buffer (this may take a while): 1 of 10\n"
    "2021-04-19 14:27:13.944428: I tensorflow/core/kernels/data/shuffle_dataset_op.cc:233] Shuffle buffer filled.\n"
)


class TestWentOnSetUp:
    """A batch script's environment set-up step the shell could not run, then the job's own output."""

    def test_control_activate_not_found_then_the_job_runs_is_no_error(self):
        text = ACTIVATE + TF_RUNS
        assert errors(text) == []
        assert went_on(text)[0]["how"] == "set-up"
        assert "bin/activate" in answer(text).fix

    def test_sibling_the_jobs_own_command_not_found_stays_an_error(self):
        # the script went on to its next command: the job's own did not run
        assert errors(ACTIVATE.replace("activate: No such file or directory", "python: command not found") + TF_RUNS)

    def test_sibling_set_up_not_found_then_the_job_fails_stays_an_error(self):
        text = ACTIVATE + "Traceback (most recent call last):\n  File \"train.py\", line 1, in <module>\n    import tensorflow\nModuleNotFoundError: No module named 'tensorflow'\n"
        assert errors(text)

    def test_sibling_set_up_not_found_last_stays_an_error(self):
        assert errors(TF_RUNS + ACTIVATE)


# heldout20w, https://github.com/s-aguado/tfm/blob/b4dab0ff8b9ba95677ad9279dc8d8fe5c00b45e9/job.out: a oneDNN benchmark
# whose large configurations crash; its harness prints the next configurations' rows to the end
ROWS_BEFORE = ("gemm_parallel,gpu,4 2 2 2048 2048 3 3,2.062,2.097,2.114,2.073\n"
               "gemm_parallel,gpu,8 2 2 2048 2048 3 3,3.155,3.181,3.130,3.126\n")
CRASH = ("gemm_parallel,gpu,16 2 2 2048 2048 3 3,terminate called after throwing an instance of 'cl::sycl::runtime_error'\n"
         "  what():  Native API failed. Native API returns: -30 (CL_INVALID_VALUE) -30 (CL_INVALID_VALUE)\n"
         "2.383,terminate called after throwing an instance of 'cl::sycl::runtime_error'\n"
         "  what():  Native API failed. Native API returns: -30 (CL_INVALID_VALUE) -30 (CL_INVALID_VALUE)\n"
         "2.360\n")
ROWS_AFTER = ("gemm_onednn,cpu,4 2 2 1024 1024 3 3,0.313,0.224,0.215,0.228\n"
              "gemm_onednn,cpu,8 2 2 1024 1024 3 3,0.280,0.282,0.298,0.302\n"
              "gemm_onednn,cpu,16 2 2 1024 1024 3 3,0.430,0.440,0.431,0.443\n")


class TestWentOnRows:
    """A benchmark's table rows, one per configuration, going on after the configurations that crashed."""

    def test_control_rows_after_the_crash_are_no_error(self):
        text = ROWS_BEFORE + CRASH + ROWS_AFTER
        assert errors(text) == []
        assert went_on(text)[0]["how"] == "progress"

    def test_sibling_the_crash_last_stays_an_error(self):
        assert errors(ROWS_BEFORE + ROWS_AFTER + CRASH)

    def test_sibling_one_row_after_is_not_enough(self):
        assert errors(ROWS_BEFORE + CRASH + ROWS_AFTER.splitlines(keepends=True)[0])


SMI_HEAD = (
    "+-----------------------------------------------------------------------------+\n"
    "| NVIDIA-SMI 470.161.03   Driver Version: 470.161.03   CUDA Version: 11.4     |\n"
    "|-------------------------------+----------------------+----------------------+\n"
    "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
    "| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |\n"
    "|                               |                      |               MIG M. |\n"
    "|===============================+======================+======================|\n"
)
# heldout20's deepspeedai/DeepSpeedExamples#310: a question about a running job's card usage, no hang said
SMI_ROW = (
    "|   0  NVIDIA A100 80G...  Off  | 00000000:4F:00.0 Off |                    0 |\n"
    "| N/A   35C    P0    71W / 300W |   1015MiB / 80994MiB |    100%      Default |\n"
    "|                               |                      |             Disabled |\n"
    "+-------------------------------+----------------------+----------------------+\n"
)
ONE_TABLE = "# Test training card owner\n\nGPU usage rate:\n(deepspeed) [menkeyi@gpu1 DeepSpeed-Chat]$ nvidia-smi\n" + SMI_HEAD + SMI_ROW


def spin(text: str):
    return next((f for f in report(text).findings if f.id == "gpu-collective-spin"), None)


class TestCollectiveSpinSnapshot:
    def test_control_one_table_and_no_word_of_a_hang_is_info(self):
        found = spin(ONE_TABLE)
        assert found is not None and found.severity is Severity.INFO and "one reading does not decide" in found.title
        assert "sleep 60" in found.fix
        assert not any(f.severity is Severity.ERROR for f in report(ONE_TABLE).findings)
        # the undecided answer at its head does not deny the reading told below it, and says what a second reading decides
        head = report(ONE_TABLE).findings[0]
        assert head.id == "log-inconclusive" and "shows ranks stuck" not in head.why and "sleep 60" in head.fix

    def test_sibling_the_reporter_says_it_freezes_keeps_the_warning(self):
        # heldout20's lambdal/deeplearning-benchmark#21: "H100*4 running benchmark freeze"
        found = spin("# H100*4 running benchmark freeze\n\n" + SMI_HEAD + SMI_ROW)
        assert found is not None and found.severity is Severity.WARN and "ranks spinning in a collective" in found.title

    def test_sibling_a_second_table_that_still_spins_keeps_the_warning(self):
        found = spin(ONE_TABLE + "\n(deepspeed) [menkeyi@gpu1 DeepSpeed-Chat]$ nvidia-smi\n" + SMI_HEAD + SMI_ROW)
        assert found is not None and found.severity is Severity.WARN
