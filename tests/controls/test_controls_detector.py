"""Controls and siblings of the failure detector (issue 35 item 2: "did it fail?").

Each class is one shape of evidence that a run failed, from a source that writes into these logs
(loggers' levels, the interpreter, Kubernetes, schedulers, Go programs, Python's tracebacks):
`test_control_*` is the healthy line that looks the same and must not count as a failure;
`test_sibling_*` is the nearest line that needs its own verdict, and gets it. Real lines from the
threads named; the healthy logs end as runs end, so that only the line under test decides."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.exit_code import report_exit
from gpudoctor.core.findings import Severity

ENDED = "{'train_runtime': 812.4, 'train_loss': 0.412, 'epoch': 3.0}\ntraining completed\n"


def errors(text: str):
    return [f for f in api.diagnose(text).findings if f.severity is Severity.ERROR]


def head(text: str) -> str:
    found = errors(text)
    return found[0].id if found else "-"


def ids(text: str) -> list[str]:
    return [f.id for f in api.diagnose(text).findings]


class TestUnrecognisedFailureHealthyLookalikes:
    """Lines that carry a failure's words in a healthy run: none of them is evidence."""

    verdict = "unrecognised-failure-healthy-lookalikes"

    def test_control_a_healthy_run_full_of_error_words_is_healthy(self):
        log = (
            "Error handling enabled: retries=3\n"
            "validation: 0 errors, 0 failures\n"
            "step 200 | loss 0.41 | error_rate=0.0 | grad_norm 1.2\n"
            "[WARNING] [config.py:78:_sanity_check] DeepSpeedConfig: cpu_offload is deprecated and will be removed in a future version\n"
            "logging level: CRITICAL (quiet)\n"
            "--log-level FATAL\n"
            "panic: false\n"
            "JobState=RUNNING Reason=None\n"
            + ENDED
        )
        report = api.diagnose(log)
        assert [f.id for f in report.findings if f.severity is Severity.ERROR] == []
        assert report_exit(report) == 0

    def test_sibling_the_same_log_cut_by_a_fatal_line_failed(self):
        log = "Error handling enabled: retries=3\nstep 200 | loss 0.41 | error_rate=0.0\nCRITICAL 03-29 08:10:03 [multiproc_executor.py:49] WorkerProc failed to start\n"
        assert head(log) == "unrecognised-failure"


class TestUnrecognisedFailureFatalLevel:
    """A logger's CRITICAL / FATAL / PANIC level (and glog's F) says the program cannot go on."""

    def test_control_the_level_named_as_a_setting_is_no_failure(self):
        log = "args: log_level=CRITICAL verbosity=FATAL\nlogging.CRITICAL: 50\nFATAL: 0 tests\n" + ENDED
        assert errors(log) == []

    def test_sibling_vllms_critical_line_is_a_failure(self):
        # Qwen2.5-Omni thread: vLLM's worker start failed, the paste cut inside the line
        found = errors("(VllmWorker rank=0 pid=4149980) INFO 03-29 08:10:01 [parallel_state.py:957] rank 0 in world size 4\n"
                       "CRITICAL 03-29 08:10:03 [multiproc_executor\n")
        assert found[0].id == "unrecognised-failure" and "CRITICAL" in found[0].title
        assert "CRITICAL 03-29" in found[0].evidence["log"]

    def test_sibling_glogs_fatal_line_is_a_failure(self):
        found = errors("I1127 12:00:00.100000 4242 main.cc:10] starting\nF1127 12:00:00.123456 4242 nccl_utils.cc:88] Check failed: result == ncclSuccess\n")
        assert found and found[0].id == "unrecognised-failure"

    def test_sibling_an_error_level_line_alone_stays_undecided(self):
        # an error a component logs and survives: shown, but it does not decide (log-inconclusive)
        log = 'E0902 20:48:24.809602       1 nonblockinggrpcserver.go:180] "handling stream failed" err="rpc error: code = Unimplemented"\n'
        assert ids(log) == ["log-inconclusive"]


class TestUnrecognisedFailureErrorEnding:
    """An error-level line that says the program is stopping is a failure; one that exits normally is not."""

    def test_control_an_error_count_exiting_normally_is_no_failure(self):
        assert errors("[ERROR] 0 errors, exiting normally\n" + ENDED) == []

    def test_sibling_an_error_that_aborts_is_a_failure(self):
        found = errors("2023-05-02 10:11:12,001 - ERROR - data_server.py:88 - shard reader crashed, aborting the epoch\n")
        assert found and found[0].id == "unrecognised-failure" and "stopping" in found[0].title

    def test_sibling_a_raylet_that_shuts_the_worker_down_is_its_own_pattern(self):
        # ray-project/ray#7788: the pattern that knows it names it
        assert head("(pid=81331) E0328 18:23:00.165781 81395 core_worker.cc:382] Raylet failed. Shutting down.\n") == "ray-node-dead"


class TestUnrecognisedFailurePythonCannotStart:
    """Python's own line when it cannot run the module or script it was given."""

    def test_control_the_interpreters_version_line_is_no_failure(self):
        assert errors("python: 3.10.12\npython: /usr/bin/python3\n" + ENDED) == []

    def test_sibling_a_module_spec_cut_before_its_reason_is_a_failure(self):
        # horovod/horovod#3769: the paste ends inside the line
        found = errors("/opt/amex/mlp-hub/mlpjhub/bin/python: Error while finding module specification for 'horovod.runner.task_fn' (ModuleNotFou\n")
        assert found and found[0].id == "unrecognised-failure" and "Python could not start" in found[0].title

    def test_sibling_the_whole_line_names_the_missing_module(self):
        line = ("/root/anaconda3/envs/test/bin/python: Error while finding module specification for 'torch.distribute.launch' "
                "(ModuleNotFoundError: No module named 'torch.distribute')\n")
        assert head(line) == "module-not-found"


class TestUnrecognisedFailureKubernetes:
    """kubectl describe's Warning events and kubectl get's STATUS column."""

    def test_control_normal_events_and_running_pods_are_no_failure(self):
        log = ("Normal   Scheduled  2m  default-scheduler  Successfully assigned default/trainer-0 to gpu-node-1\n"
               "pytorch-job-worker-1   1/1     Running   0          5m\n"
               "pytorch-job-worker-0   0/1     Completed   0          9m\n"
               "Warning: Permanently added 'gpu04,172.16.250.42' (ECDSA) to the list of known hosts.\n" + ENDED)
        assert errors(log) == []

    def test_sibling_a_failed_event_is_a_failure(self):
        # (skypilot-org/skypilot#7925's FailedMount is a class of its own now: k8s-volume-mount-failed, classes10d.py)
        found = errors("  Warning  BackOff  3m (x40 over 12m)  kubelet  Back-off restarting failed container\n")
        assert found and found[0].id == "unrecognised-failure" and "BackOff" in found[0].title

    def test_sibling_a_pod_in_crashloopbackoff_is_a_failure(self):
        found = errors("NAME                                         READY   STATUS             RESTARTS        AGE\n"
                       "nvidia-k8s-dra-driver-kubelet-plugin-xckkd   0/1     CrashLoopBackOff   6 (3m29s ago)   9m12s\n")
        assert found and found[0].id == "unrecognised-failure"


class TestUnrecognisedFailureJobState:
    """A scheduler's or a cluster manager's state of the job."""

    def test_control_a_completed_or_running_job_is_no_failure(self):
        log = "JobId=4242 JobName=train JobState=COMPLETED Reason=None\nstatus: FAILED: 0, SUCCEEDED: 4\n" + ENDED
        assert errors(log) == []

    def test_sibling_a_job_in_a_failed_state_is_a_failure(self):
        # skypilot-org/skypilot#5031
        found = errors("Job 1 is already in terminal state FAILED_CONTROLLER. For more details, run: sky jobs logs --controller 1\n")
        assert found and found[0].id == "unrecognised-failure" and "FAILED_CONTROLLER" in found[0].title


class TestUnrecognisedFailureGoPanic:
    def test_control_a_panic_setting_is_no_failure(self):
        assert errors("config:\npanic: false\nretries: 3\n" + ENDED) == []

    def test_sibling_a_go_panic_is_a_failure(self):
        found = errors("panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x1a2b3c]\n")
        assert found and found[0].id == "unrecognised-failure"


class TestUnrecognisedFailureLauncherError:
    def test_control_a_metric_called_error_is_no_failure(self):
        assert errors("Error: 0.0123\nTop-1 Error: 12.5%\n" + ENDED) == []

    def test_sibling_a_capitalised_failed_is_a_launchers_failure(self):
        # skypilot-org/skypilot#618: ray up's last line
        found = errors("Error: Failed to setup head node.\n")
        assert found and found[0].id == "unrecognised-failure"


SITE = "/opt/conda/lib/python3.10/site-packages"


class TestUnrecognisedFailureExceptionLine:
    """The line that ends a traceback is its exception, not the source line a frame quotes."""

    def test_control_a_quoted_call_is_not_the_exception(self):
        # Lightning-AI/lit-gpt#118 and axolotl-ai-cloud/axolotl#10: the paste ends on a frame's source line
        for source in ("CLI(setup)", "fire.Fire(do_cli)", "File", "Fi"):
            log = f'Traceback (most recent call last):\n  File "/home/u/lit-gpt/finetune/lora.py", line 271, in <module>\n    {source}\n'
            found = errors(log)
            assert found[0].id == "unrecognised-failure", source
            assert "cut before its last line" in found[0].title and source + " " not in found[0].title, source

    def test_sibling_a_ray_wrapper_with_its_class_is_the_exception(self):
        log = (f'Traceback (most recent call last):\n  File "{SITE}/ray/_private/worker.py", line 906, in get_objects\n'
               "ray.exceptions.RayTaskError(OSError)\n")
        found = errors(log)
        assert found and "RayTaskError(OSError)" in found[0].title

    def test_sibling_a_bare_builtin_exception_is_the_exception(self):
        log = 'Traceback (most recent call last):\n  File "/home/u/train.py", line 9, in <module>\n    next(it)\nStopIteration\n'
        assert "StopIteration" in errors(log)[0].title


class TestUnrecognisedFailureRichTraceback:
    def test_control_a_rich_panel_that_is_no_traceback_is_no_failure(self):
        log = "╭──────────────── Configuration ────────────────╮\n│ model: llama-7b                               │\n╰───────────────────────────────────────────────╯\n" + ENDED
        assert errors(log) == []

    def test_sibling_a_rich_traceback_cut_after_its_top_is_a_failure(self):
        # lm-sys/FastChat#1070: the paste ends on the box's top and a frame whose function wrapped to the next line
        log = ("╭─────────────────────────────── Traceback (most recent call last) ────────────────────────────────╮\n"
               "│ /home/ubuntu/ChatGPT/FastChat/fastchat/train/train_mem.py:4 in\n")
        found = errors(log)
        assert found and found[0].id == "unrecognised-failure" and "train_mem.py:4" in found[0].title


class TestUnrecognisedFailureCudaStatus:
    """A CUDA library's, the driver API's or NVML's status code names a failure, never its success."""

    def test_control_a_success_status_is_no_failure(self):
        assert errors("cudnn status: CUDNN_STATUS_SUCCESS\ncudaGetLastError() = cudaSuccess\nNVML_SUCCESS\n" + ENDED) == []

    def test_sibling_an_nvml_error_status_is_a_failure(self):
        found = errors("nvmlInit failed: NVML_ERROR_DRIVER_NOT_LOADED\n")
        assert found and found[0].id == "unrecognised-failure" and "NVML_ERROR_DRIVER_NOT_LOADED" in found[0].evidence["log"]


class TestUnrecognisedFailurePytest:
    """A test run's verdict: failed tests are a failure, a run whose tests all passed is not."""

    def test_control_a_run_whose_tests_passed_is_no_failure(self):
        log = "tests/test_distributed.py::test_allreduce PASSED\n===== 12 passed, 0 failed in 3.21s =====\n"
        assert errors(log) == []

    def test_sibling_a_run_with_a_failed_test_is_a_failure(self):
        found = errors("tests/test_distributed.py::test_allreduce FAILED\n===== 1 failed, 12 passed in 3.21s =====\n")
        assert found and found[0].id == "unrecognised-failure"


class TestUnrecognisedFailurePip:
    """pip's fatal lines (an install the job needs that did not happen)."""

    def test_control_the_resolvers_notice_is_no_failure(self):
        log = ("ERROR: pip's dependency resolver does not currently take into account all the packages that are installed. "
               "This behaviour is the source of the following dependency conflicts.\nSuccessfully installed accelerate-0.30.1\n" + ENDED)
        assert errors(log) == []

    def test_sibling_a_version_that_does_not_exist_is_a_failure(self):
        found = errors("ERROR: Could not find a version that satisfies the requirement torch==2.9.9 (from versions: 2.1.0, 2.1.1)\n"
                       "ERROR: No matching distribution found for torch==2.9.9\n")
        # (named by its class since diagJ33: knowledge/patterns/builds.py pip-no-matching-distribution)
        assert found and found[0].id == "pip-no-matching-distribution" and "torch==2.9.9" in found[0].title


class TestUnrecognisedFailureNvrm:
    """The kernel driver's NVRM lines: loading is no failure, an assertion or an Error! is."""

    def test_control_the_driver_loading_is_no_failure(self):
        log = "[    3.105245] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n" + ENDED
        assert errors(log) == []

    def test_sibling_a_chipset_setup_error_is_a_failure(self):
        # NVIDIA/open-gpu-kernel-modules#489
        found = errors("[    2.870841] NVRM objClInitPcieChipset: *** Chipset Setup Function Error!\n")
        assert found and found[0].id == "unrecognised-failure"


class TestUnrecognisedFailureLauncherExitStatus:
    def test_control_an_exit_status_of_zero_is_no_failure(self):
        assert errors("Process 0 exit with status code 0.\nProcess 1 exit with status code 0.\n" + ENDED) == []

    def test_sibling_horovodruns_non_zero_status_is_a_failure(self):
        found = errors("Process 1 exit with status code 1.\nTerminating remaining workers after failure of Process 1.\n")
        assert found and found[0].id == "unrecognised-failure" and "exit code 1" in found[0].title


class TestUnrecognisedFailureCutByThePaste:
    """A traceback cut by a terminal's width or a copy from the middle of a line is still one."""

    def test_control_a_frame_mentioned_in_prose_is_no_failure(self):
        log = 'see train.py", line 3, in main for the loop\nthe header reads "Traceback (most recent call last)" in docs\n' + ENDED
        assert errors(log) == []

    def test_sibling_a_header_cut_at_the_width_after_a_progress_bar_is_a_failure(self):
        # hiyouga/LLaMA-Factory#3631, cut at 80 columns
        log = " 15%|█▍        | 129/882 [40:17<3:41:05, 17.62s/it]Traceback (most recent call l\nast):\n"
        found = errors(log)
        assert found and found[0].id == "unrecognised-failure"

    def test_sibling_frames_whose_heads_were_cut_are_read_as_frames(self):
        # huggingface/trl#2791, cut at 80 columns: each frame's path goes on in the next line
        log = (
            '[rank0]:   File "/u/z/vision/Lib/anaconda3/envs/zq_torch/lib/python3.10/s\n'
            'ite-packages/accelerate/utils/operations.py", line 819, in forward\n'
            "[rank0]:     return model_forward(*args, **kwargs)\n"
        )
        found = errors(log)
        assert found and found[0].id == "unrecognised-failure" and "operations.py:819" in found[0].title
        assert found[0].evidence["raised_by"] == "accelerate"

    def test_sibling_torchruns_summary_with_its_link_cut_is_a_failure(self):
        # hiyouga/LLaMA-Factory#7050 cut at 80 columns
        found = errors("  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/er\nrors.html\n")
        assert found and found[0].id == "unrecognised-failure"

    def test_sibling_ipythons_header_after_the_class_is_not_a_cut_one(self):
        # pytorch/pytorch#55763: IPython names the exception before "Traceback (most recent call last)"
        log = ("ProcessExitedException                    Traceback (most recent call last)\n"
               "<ipython-input-1-e1523c2c83af> in <module>\n")
        found = errors(log)
        assert found and "ProcessExitedException" in found[0].title


class TestUnrecognisedFailureMarkdownInAPrefix:
    """A launcher's prefix before a line a user had put in Markdown: the Markdown is peeled too."""

    def test_control_glogs_stars_are_no_markdown(self):
        # ray-project/ray#9752: "*** SIGBUS (@...)" keeps its stars and its pattern
        log = "(pid=119) *** SIGBUS (@0x7f1ca25a2fe0) received by PID 119 (TID 0x7f23680c9740); stack trace: ***\n"
        assert head(log) == "launcher-sigbus"

    def test_sibling_inline_code_in_an_indented_block_is_the_message(self):
        found = errors("    `RuntimeError: Mismatch in shape: grad_output[0] has a shape of torch.Size([1, 8])`\n")
        assert found and found[0].title.startswith("unrecognised failure: RuntimeError: Mismatch in shape")

    def test_sibling_a_coloured_error_record_is_a_failure(self):
        # hpcaitech/ColossalAI#1779 in a terminal's colours
        found = errors("\x1b[31mERROR:torch.distributed.elastic.multiprocessing.errors.error_handler:{\x1b[0m\n")
        assert found and found[0].id == "unrecognised-failure"

    def test_sibling_inline_code_after_a_rank_prefix_is_the_message(self):
        found = errors("[rank0]: `RuntimeError: Mismatch in shape: grad_output[0] has a shape of torch.Size([1, 8])`\n")
        assert found and found[0].title.startswith("unrecognised failure: RuntimeError: Mismatch in shape")


class TestUnrecognisedFailureKernelAssertionCut:
    def test_control_a_kernel_launch_config_line_is_no_failure(self):
        assert errors("launching IndexKernel with block: [22,0,0], thread: [64,0,0] grid ok\n" + ENDED) == []

    def test_sibling_a_kernel_assertion_cut_before_failed_is_a_failure(self):
        # NVIDIA/Megatron-LM#881 cut at 120 columns
        log = "../aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [22,0,0], thread: [64,0,0] Assertion `-sizes[i] <= in\n"
        found = errors(log)
        assert found and "device-side assertion" in found[0].title

    def test_sibling_the_whole_line_keeps_its_pattern(self):
        log = ('../aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [22,0,0], thread: [64,0,0] Assertion '
               '`-sizes[i] <= index && index < sizes[i] && "index out of bounds"` failed.\n')
        assert head(log) == "cuda-index-out-of-range"


class TestUnrecognisedFailurePanic:
    """Go's and Rust's panics (device plugins, operators, tokenizers, installers)."""

    def test_control_a_panic_setting_and_a_thread_start_are_no_failure(self):
        assert errors("config:\npanic: false\nthread 'main' started\n" + ENDED) == []

    def test_sibling_a_go_panic_is_a_failure(self):
        found = errors("panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x1a2b3c]\n")
        assert found and found[0].id == "unrecognised-failure"

    def test_sibling_a_rust_panic_is_a_failure(self):
        found = errors("thread '<unnamed>' panicked at src/tokenizer/mod.rs:123:9:\nindex out of bounds: the len is 3 but the index is 7\n")
        assert found and found[0].id == "unrecognised-failure" and "panicked" in found[0].title


class TestUnrecognisedFailureGlibc:
    def test_control_memory_words_of_a_healthy_run_are_no_failure(self):
        assert errors("malloc: using jemalloc\nfree memory: 12 GiB\n" + ENDED) == []

    def test_sibling_glibcs_double_free_is_a_failure(self):
        found = errors("*** Error in `python': double free or corruption (!prev): 0x000055d5c1a7e2f0 ***\n")
        assert found and found[0].id == "unrecognised-failure" and "C library" in found[0].title


class TestUnrecognisedFailureMpi:
    def test_control_mpiruns_normal_end_is_no_failure(self):
        assert errors("Primary job terminated normally\n" + ENDED) == []

    def test_sibling_mpi_abort_is_a_failure(self):
        found = errors("MPI_ABORT was invoked on rank 0 in communicator MPI_COMM_WORLD with errorcode 1.\n")
        assert found and found[0].id == "unrecognised-failure"


class TestUnrecognisedFailureSlurmStep:
    def test_control_sruns_queue_lines_are_no_failure(self):
        assert errors("srun: job 4242 queued and waiting for resources\nsrun: job 4242 has been allocated resources\n" + ENDED) == []

    def test_sibling_a_node_failure_is_a_failure(self):
        found = errors("srun: error: Node failure on gpu-12\n")
        assert found and found[0].id == "unrecognised-failure" and "Slurm" in found[0].title


class TestUnrecognisedFailureShellKill:
    def test_control_a_job_that_is_done_is_no_failure(self):
        assert errors("[1]    12345 done       python train.py\n" + ENDED) == []

    def test_sibling_zshs_segmentation_fault_is_a_failure(self):
        found = errors("zsh: segmentation fault  python train.py\n")
        assert found and found[0].id == "unrecognised-failure"


class TestUnrecognisedFailureBuild:
    def test_control_nothing_to_build_is_no_failure(self):
        assert errors("make: Nothing to be done for 'all'.\nninja: no work to do.\n" + ENDED) == []

    def test_sibling_a_stopped_build_is_a_failure(self):
        found = errors("[12/40] Building CUDA object csrc/flash_fwd.o\nninja: build stopped: subcommand failed.\n")
        assert found and found[0].id in ("unrecognised-failure", "extension-build-failed")


class TestUnrecognisedFailureContainer:
    def test_control_a_pulled_image_is_no_failure(self):
        assert errors("Status: Downloaded newer image for nvcr.io/nvidia/pytorch:24.01-py3\n" + ENDED) == []

    def test_sibling_the_daemon_refusing_gpus_is_a_failure(self):
        found = errors('docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].\n')
        assert found and found[0].id in ("unrecognised-failure", "docker-gpu-runtime-missing")  # the latter: families5


class TestUnrecognisedFailureApt:
    def test_control_an_apt_warning_is_no_failure(self):
        log = "W: GPG error: https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64  InRelease: signatures couldn't be verified\n"
        assert errors(log + ENDED) == []

    def test_sibling_an_apt_error_is_a_failure(self):
        found = errors("E: Unable to locate package libnccl2\n")
        assert found and found[0].id == "unrecognised-failure"


class TestUnrecognisedFailureCliError:
    """uv's, cargo's and setuptools' `error: ...`; git's `fatal:` in a package build is noise."""

    def test_control_gits_fatal_in_a_build_and_an_error_metric_are_no_failure(self):
        log = "fatal: not a git repository (or any of the parent directories): .git\nerror: 0.0123\nerror: None\n" + ENDED
        assert errors(log) == []

    def test_sibling_uvs_failed_build_is_a_failure(self):
        found = errors("  × Failed to build `flash-attn==2.7.2.post1`\n")
        assert found and found[0].id == "unrecognised-failure"


class TestUnrecognisedFailureKubernetesReason:
    def test_control_a_restart_policy_is_no_failure(self):
        assert errors("restartPolicy: OnFailure\nbackoffLimit: 4\n" + ENDED) == []

    def test_sibling_a_job_past_its_backoff_limit_is_a_failure(self):
        found = errors("Warning  BackoffLimitExceeded  job-controller  Job has reached the specified backoff limit\n")
        assert found and found[0].id == "unrecognised-failure"


class TestUnrecognisedFailureChainedMarker:
    def test_control_a_chained_traceback_read_whole_has_one_story(self):
        log = (
            "Traceback (most recent call last):\n"
            '  File "/home/u/train.py", line 3, in <module>\n'
            "KeyError: 'input_ids'\n"
            "\n"
            "The above exception was the direct cause of the following exception:\n"
            "\n"
            "Traceback (most recent call last):\n"
            '  File "/home/u/train.py", line 9, in <module>\n'
            "ValueError: the batch has no input_ids\n"
        )
        assert [f.id for f in errors(log)] == ["python-exception"]  # no second, unrecognised failure for the marker

    def test_sibling_the_marker_alone_shows_an_exception(self):
        found = errors("The above exception was the direct cause of the following exception:\n")
        assert found and found[0].id == "unrecognised-failure"


class TestUnrecognisedFailureBracketedGlog:
    def test_control_a_bracketed_info_line_is_no_failure(self):
        assert errors("[rank3]:[I1128 21:34:35.285000 931 ProcessGroupNCCL.cpp:1200] [PG 0 Rank 3] ProcessGroupNCCL initialized\n" + ENDED) == []

    def test_sibling_a_bracketed_error_that_terminates_is_a_failure(self):
        log = "[rank3]:[E1128 21:34:35.285000 931 ProcessGroupNCCL.cpp:1200] [PG 0 Rank 3] Process group watchdog thread terminated with exception\n"
        assert errors(log)


class TestUnrecognisedFailureIpythonTraceback:
    """IPython's and Jupyter's tracebacks: the class in the header, frames as `File ...:N, in f(...)` and `Cell In[N], line M`."""

    def test_control_a_notebooks_cell_output_is_no_failure(self):
        log = "Cell In[3], line 1 ran in 2.1s\nFile saved: /home/u/out.py:12, in a moment\n" + ENDED
        assert errors(log) == []

    def test_sibling_a_notebook_traceback_cut_before_its_message_names_its_class_and_cell(self):
        # unslothai/unsloth#3150: the paste ends inside the library's frame
        log = (
            "---------------------------------------------------------------------------\n"
            "RuntimeError                              Traceback (most recent call last)\n"
            "Cell In[18], line 14\n"
            "     13 )\n"
            "---> 14 trainer.train()\n"
            "\n"
            "File /venv/main/lib/python3.12/site-packages/transformers/trainer.py:2238, in Trainer.train(self, resume_from_checkpoint)\n"
            "   2237 else:\n"
            "-> 2238     return inner_training_loop(\n"
        )
        found = errors(log)
        assert found[0].id == "unrecognised-failure"
        assert found[0].title.startswith("unrecognised failure: RuntimeError (the traceback is cut before its message)")
        assert found[0].evidence["raised_by"] == "transformers" and found[0].evidence["your_frame"] == "<ipython-input-18>:14 in <cell>"

    def test_sibling_an_old_ipython_traceback_takes_its_line_from_the_arrow(self):
        # pytorch/pytorch#55763
        log = (
            "ProcessExitedException                    Traceback (most recent call last)\n"
            "<ipython-input-1-e1523c2c83af> in <module>\n"
            "     35 if __name__==\"__main__\":\n"
            "---> 36     main()\n"
            "\n"
            "~/.local/lib/python3.8/site-packages/torch/multiprocessing/spawn.py in join(self, timeout)\n"
            "--> 188     while not context.join():\n"
        )
        found = errors(log)
        assert found[0].title.startswith("unrecognised failure: ProcessExitedException (the traceback is cut before its message)")
        assert found[0].evidence["raised_in"] == "~/.local/lib/python3.8/site-packages/torch/multiprocessing/spawn.py:188 in join"


class TestUnrecognisedFailurePytestRaisedAt:
    """pytest reports an exception as `E   Class: message` lines and `path.py:N: Class`: that is where it was raised."""

    def test_control_a_source_location_in_a_log_line_is_no_failure(self):
        assert errors("loaded config from conf/base.py:12: DefaultConfig\n" + ENDED) == []

    def test_sibling_pytests_location_line_is_the_raising_frame(self):
        # Lightning-AI/pytorch-lightning#749
        log = (
            "        raise AttributeError(\"'{}' object has no attribute '{}'\".format(\n"
            ">           type(self).__name__, name))\n"
            "E       AttributeError: 'LightningDataParallel' object has no attribute 'get_tqdm_dict'\n"
            "\n"
            "../../envs/pl3/lib/python3.6/site-packages/torch/nn/modules/module.py:576: AttributeError\n"
        )
        found = errors(log)  # (an error about an API's shape that a library raised: its class, diagB19)
        assert found[0].id == "library-api-mismatch" and found[0].evidence["raised_by"] == "torch"
        assert found[0].evidence["raised_in"].endswith("torch/nn/modules/module.py:576")
        assert "holds no traceback" not in found[0].fix


class TestUnrecognisedFailureRayWorkerRegistration:
    def test_control_a_worker_that_registered_is_no_failure(self):
        assert errors("Registered worker 2ea0a7ae to Raylet.\n" + ENDED) == []

    def test_sibling_a_worker_the_raylet_refused_is_a_failure(self):
        # ray-project/ray#21226
        found = errors("Failed to register worker 2ea0a7ae0dcfec5f2917ed1d37227bb2190a87c16f85aa3f859cd7ef to Raylet. \nInvalid: Invalid: Unknown worker\n")
        assert found and found[0].id == "unrecognised-failure"
