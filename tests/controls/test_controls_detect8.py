"""Controls and siblings for detect8 (issue 35 items 2 and 5): the shapes of failure lines the sampled logs held
that the detector did not read (heldout6, dev3, dev4, dev6), and the words for a log that holds only a launcher's
summary. Each class is one shape: `test_control_*` is the harmless line that looks the same and must not count as a
failure, `test_sibling_*` the nearest line that needs its own verdict. Lines are real ones (threads named beside
them); healthy logs end as runs end, so that only the line under test decides."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.exit_code import report_exit
from gpudoctor.core.findings import Severity

ENDED = "{'train_runtime': 812.4, 'train_loss': 0.412, 'epoch': 3.0}\ntraining completed\n"
TB = 'Traceback (most recent call last):\n  File "/home/u/train.py", line 88, in <module>\n'


def errors(text: str):
    return [f for f in api.diagnose(text).findings if f.severity is Severity.ERROR]


def head(text: str):
    found = errors(text)
    return found[0] if found else None


def head_id(text: str) -> str:
    found = head(text)
    return found.id if found is not None else "-"


def unrecognised(text: str, kind: str):
    """The unrecognised failure diagnose leads with, read from a line of this detector kind."""
    found = head(text)
    assert found is not None and found.id == "unrecognised-failure" and found.evidence["kind"] == kind
    return found


def healthy(text: str) -> bool:
    return report_exit(api.diagnose(text)) == 0


# torchrun's summary as torch 2.x prints it (FlagOpen/FlagEmbedding#1438): all the log holds of the failure
ROOT_CAUSE = (
    "============================================================\n"
    "FlagEmbedding.finetune.embedder.encoder_only.m3 FAILED\n"
    "------------------------------------------------------------\n"
    "Failures:\n"
    "  <NO_OTHER_FAILURES>\n"
    "------------------------------------------------------------\n"
    "Root Cause (first observed failure):\n"
    "[0]:\n"
    "  time      : 2025-05-05_20:46:23\n"
    "  host      : DXHWVXX2VQ\n"
    "  rank      : 0 (local_rank: 0)\n"
    "  exitcode  : {code} (pid: 19555)\n"
    "  error_file: <N/A>\n"
    "  traceback : {traceback}\n"
    "============================================================\n"
)
LINK = "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"


class TestUnrecognisedFailureChildFailedNoErrorFile:
    """torch 1.9-1.10's elastic agent: 'CHILD PROCESS FAILED WITH NO ERROR_FILE', quoted in prose (OpenDriveLab/LaneSegNet#16)."""

    def test_control_the_error_handlers_info_line_about_no_error_file(self):
        log = ("INFO:torch.distributed.elastic.multiprocessing.errors.error_handler: no error file defined for parent, to copy child error file\n"
               + ENDED)
        assert healthy(log)

    def test_sibling_the_summary_quoted_in_prose_is_a_launcher_only_failure(self):
        log = 'When I trained the model, it crashed and said " CHILD PROCESS FAILED WITH NO ERROR_FILE". How can I fix it?\n'
        found = unrecognised(log, "elasticnofile")
        assert "its own stderr" in found.fix and "--redirects 3" in found.fix and "@record" in found.fix
        assert "CHILD PROCESS FAILED WITH NO ERROR_FILE" in found.evidence["log"]

    def test_sibling_the_banner_with_a_sigkill_exit_is_the_oom_killer(self):
        log = ("CHILD PROCESS FAILED WITH NO ERROR_FILE\n"
               "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 4242) of binary: /usr/bin/python3\n")
        assert head_id(log) == "launcher-sigkill"


class TestUnrecognisedFailureNcclProcessGroupError:
    """torch's NCCL process group logging at error level, cut by the paste after its file name (hao-ai-lab/FastVideo#443,
    meta-llama/llama3#241)."""

    def test_control_a_warning_of_the_same_file_in_a_healthy_run(self):
        log = ("[rank0]:[W1010 12:00:00.123456789 ProcessGroupNCCL.cpp:4115] [PG 0 Rank 0] using GPU 0 to perform barrier as devices "
               "used by this process are currently unknown. This can potentially cause a hang if this rank to GPU mapping is incorrect.\n"
               "[rank0]:[I ProcessGroupNCCL.cpp:1126] [Rank 0] ProcessGroupNCCL initialization options: NCCL_ASYNC_ERROR_HANDLING: 1\n"
               + ENDED)
        assert healthy(log)

    def test_sibling_the_error_line_cut_after_its_file(self):
        log = ("Steps:   0%|▎    | 4/2000 [05:01<35:47:14, 64.55s/it, loss=0.1532, step_time=52.15s, grad_norm=0.601]\n"
               "[rank1]:[E528 08:54:10.938727404 ProcessGroupNCCL.cpp:629\n")
        found = unrecognised(log, "c10error")
        assert found.evidence["family"] == "nccl" and "NCCL_DEBUG=INFO" in found.fix

    def test_sibling_the_whole_watchdog_line_is_the_timeout(self):
        log = ("[rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4, "
               "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.\n")
        assert head_id(log) == "nccl-watchdog-timeout"


class TestUnrecognisedFailureNotSetUp:
    """A program's message naming what was not set up and the call that does it, pasted without its exception class
    (THUDM/Chinese-Transformer-XL#17)."""

    def test_control_a_variable_not_set_and_what_is_used_instead(self):
        log = ("/usr/lib/python3/site-packages/torch/utils/cpp_extension.py:1965: UserWarning: TORCH_CUDA_ARCH_LIST is not set, all "
               "archs for visible cards are included for compilation.\n"
               "Seed not set, please set one with set_seed for reproducible runs\n"
               + ENDED)
        assert healthy(log)

    def test_sibling_the_bare_message_quotes_its_remedy(self):
        # a message of this shape no pattern knows: the detector's answer quotes its remedy
        log = "Model not initialized, please call load() or train() first\n"
        found = unrecognised(log, "notsetup")
        assert 'the message itself says: "please call load() or train() first"' in found.fix

    def test_sibling_deepspeeds_message_is_its_class_now(self):
        # THUDM/Chinese-Transformer-XL#17: once told by this detector, now knowledge/patterns/classes10d.py's class
        log = "我已将模型进行切分，尝试使用单机两卡进行finetune，但是报如下错误：\nDeepSpeed backend not set, please initialize it using init_process_group()\n"
        assert head_id(log) == "deepspeed-comm-not-initialized"

    def test_sibling_torchs_message_with_its_class_is_its_pattern(self):
        log = TB + "ValueError: Default process group has not been initialized, please make sure to call init_process_group.\n"
        assert head_id(log) == "pg-not-initialized"


class TestUnrecognisedFailureNativeStack:
    """A native stack trace pasted without the lines that name its signal: glibc's backtrace_symbols as Open MPI prints
    it (horovod/horovod#1122), c10's on Windows (NVlabs/nvdiffrast#222)."""

    def test_control_ldd_and_a_loader_naming_libraries(self):
        log = ("\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f3c1a200000)\n"
               "Loaded 'C:\\Windows\\System32\\kernel32.dll'. Symbols loaded.\n"
               + ENDED)
        assert healthy(log)

    def test_sibling_windows_frames_are_a_native_crash(self):
        log = ("```\n"
               "00007FF873D2BD9300007FF873D2BD44 python310.dll!PyObject_Call [<unknown file> @ <unknown line number>]\n"
               "00007FF873D4B5E700007FF873D458A0 python310.dll!PyEval_EvalFrameDefault [<unknown file> @ <unknown line number>]\n")
        found = unrecognised(log, "nativeframes")
        assert "PYTHONFAULTHANDLER=1" in found.fix

    def test_sibling_open_mpis_frames_under_rank_prefixes(self):
        log = ("[1,3]<stderr>:[mlc-cluster-23:03070] [ 8] [1,3]<stderr>:/opt/anaconda/lib/python3.7/site-packages/torch/lib/"
               "libcaffe2_gpu.so(+0x25ee391)[0x7f4849b10391]\n"
               "[1,3]<stderr>:[mlc-cluster-23:03070] [ 9] [1,3]<stderr>:/opt/anaconda/lib/python3.7/site-packages/torch/lib/"
               "libcaffe2.so(_ZN2at6native7div_outERNS_6TensorERKS1_S4_+0xcd)[0x7f4844c96abd]\n")
        assert unrecognised(log, "nativeframes").evidence["ranks"] == [3]

    def test_sibling_the_signal_report_above_the_frames_names_it(self):
        log = ("[good:02773] *** Process received signal ***\n"
               "[good:02773] Signal: Segmentation fault (11)\n"
               "[good:02773] [ 0] /lib/x86_64-linux-gnu/libpthread.so.0(+0x12730)[0x7f4849b10391]\n")
        assert head_id(log) == "launcher-sigsegv"


class TestUnrecognisedFailureRichBoxCut:
    """rich's traceback box the paste starts inside and cuts before any frame's path (bmaltais/kohya_ss#1530,
    zai-org/ChatGLM2-6B#195): only the lines the frames were running (❱) are left."""

    def test_control_a_rich_panel_without_a_running_mark(self):
        log = ("╭─ Options ───────────────────────────────────────────╮\n"
               "│ --config  PATH  the training config                  │\n"
               "│ --help          Show this message and exit.          │\n"
               "╰──────────────────────────────────────────────────────╯\n"
               + ENDED)
        assert healthy(log)

    def test_sibling_the_running_lines_alone_are_an_exception(self):
        log = ("│    85 │   │   │   │   │      __spec__ = mod_spec)                                                │\n"
               "│ ❱  86 │   exec(code, run_globals)                                                                │\n"
               "│    87 │   return run_globals                                                                     │\n")
        found = unrecognised(log, "richcut")
        assert "❱  86" in found.evidence["log"]

    def test_sibling_the_box_with_its_exception_under_it_names_the_exception(self):
        log = ("│ ❱  707 │   │   raise RuntimeError(                                                      │\n"
               "╰──────────────────────────────────────────────────────────────────────────────────────────╯\n"
               "RuntimeError: Default process group has not been initialized, please make sure to call init_process_group.\n")
        assert head_id(log) == "pg-not-initialized"


class TestTorchrunRootCauseLauncherOnly:
    """torchrun's Root Cause block is all the log holds: its exit code says what it decides, and the fix is how to see
    the rank's own error; where the rank's traceback is in the log, that is told instead."""

    verdict = "torchrun-root-cause"

    def test_control_the_ranks_traceback_in_the_log_leads(self):
        log = TB + "KeyError: 'lr'\n" + ROOT_CAUSE.format(code="1", traceback=LINK)
        found = head(log)
        assert found is not None and found.id != "torchrun-root-cause" and "--redirects 3" not in found.fix

    def test_sibling_exit_code_1_with_no_error_file(self):
        found = head(ROOT_CAUSE.format(code="1", traceback=LINK))
        assert found is not None and found.id == "torchrun-root-cause"
        assert "Exit code 1 is Python's status for an exception nobody caught" in found.why and "@record" in found.why
        assert "it is in the failing rank's own output" in found.title
        assert "--redirects 3 --log-dir" in found.fix and "--tee 3" in found.fix

    def test_sibling_a_sigkill_exit_is_the_oom_killer(self):
        found = head(ROOT_CAUSE.format(code="-9", traceback="Signal 9 (SIGKILL) received by PID 19555"))
        assert found is not None and found.id == "launcher-sigkill" and "dmesg" in found.fix

    def test_sibling_a_segfault_exit(self):
        assert head_id(ROOT_CAUSE.format(code="-11", traceback="Signal 11 (SIGSEGV) received by PID 19555")) == "launcher-sigsegv"


class TestLauncherSigabrtLauncherOnly:
    """An abort (-6) with nothing of the rank's output: what SIGABRT decides; with the collective's timeout in the log,
    the timeout is told and the abort is its consequence."""

    verdict = "launcher-sigabrt"

    def test_control_the_timeout_in_the_log_explains_the_abort(self):
        log = ("[rank0]:[E ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4, "
               "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.\n"
               + ROOT_CAUSE.format(code="-6", traceback="Signal 6 (SIGABRT) received by PID 19555"))
        assert head_id(log) == "nccl-watchdog-timeout"
        abort = next(f for f in api.diagnose(log).findings if f.id == "launcher-sigabrt")
        assert "Exit code -6 is SIGABRT" not in abort.why

    def test_sibling_the_block_alone_says_what_an_abort_is(self):
        found = head(ROOT_CAUSE.format(code="-6", traceback="Signal 6 (SIGABRT) received by PID 19555"))
        assert found is not None and found.id == "launcher-sigabrt"
        assert "Exit code -6 is SIGABRT" in found.why and "--redirects 3" in found.fix
        assert "error_file" not in found.why  # a signal leaves no error file whatever the script does


class TestTorchrunChildFailedLauncherOnly:
    """A ChildFailedError line alone: no exit code, so only what the codes would decide, and how to see the rank's error."""

    verdict = "torchrun-child-failed"

    def test_control_a_child_failed_class_named_in_a_docstring_is_no_failure(self):
        log = "See torch.distributed.elastic.multiprocessing.errors for how ChildFailed errors are recorded\n" + ENDED
        assert healthy(log)

    def test_sibling_the_summary_line_alone(self):
        found = head("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n")
        assert found is not None and found.id == "torchrun-child-failed"
        assert "-9 SIGKILL sent from outside" in found.why and "--redirects 3" in found.fix

    def test_sibling_a_signal_that_tells_the_failure_is_a_native_crash_not_a_summary(self):
        # huggingface/open-r1#254's shape: local_rank 6 died of SIGFPE (-8), which no pattern of its own tells
        found = head("E0301 10:05:00.000000 1 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -8) "
                     "local_rank: 6 (pid: 4242) of binary: /usr/bin/python\n")
        assert found is not None and found.id == "unrecognised-failure" and "SIGFPE" in found.title
        assert "PYTHONFAULTHANDLER=1" in found.fix and "Exit code 1" not in found.fix


# canonical/inference-snaps#143: nvidia-smi on a DGX Spark (GB10, unified memory)
GB10_TABLE = (
    "+-----------------------------------------------------------------------------------------+\n"
    "| NVIDIA-SMI 580.95.05              Driver Version: 580.95.05      CUDA Version: 13.0     |\n"
    "+-----------------------------------------+------------------------+----------------------+\n"
    "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n"
    "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |\n"
    "|                                         |                        |               MIG M. |\n"
    "|=========================================+========================+======================|\n"
    "|   0  NVIDIA GB10                    Off |   0000000F:01:00.0 Off |                  N/A |\n"
    "| N/A   41C    P0             11W /  N/A  | {memory}          |      0%      Default |\n"
    "|                                         |                        |                  N/A |\n"
    "+-----------------------------------------+------------------------+----------------------+\n"
)


class TestGpuReadingUnsupported:
    """A memory column nvidia-smi fills with 'Not Supported' (a GPU that shares the host's memory): shown, no fault."""

    def test_control_n_a_in_the_fan_and_power_cap_of_a_row_with_its_memory(self):
        found = api.diagnose(GB10_TABLE.format(memory="  1024MiB /  98304MiB")).findings
        assert "gpu-reading-unsupported" not in [f.id for f in found]

    def test_sibling_not_supported_memory_is_shown_as_info_and_decides_nothing(self):
        report = api.diagnose(GB10_TABLE.format(memory="Not Supported         "))
        f = next(f for f in report.findings if f.id == "gpu-reading-unsupported")
        assert f.severity is Severity.INFO and f.evidence["Not Supported"] == ["memory use"] and "mem_get_info" in f.fix
        assert [g.id for g in report.findings if g.severity is not Severity.INFO] == ["log-inconclusive"]

    def test_sibling_err_in_the_memory_column_is_a_failed_reading(self):
        found = api.diagnose(GB10_TABLE.format(memory="ERR!                  ")).findings
        assert "gpu-reading-failed" in [f.id for f in found] and "gpu-reading-unsupported" not in [f.id for f in found]
