"""Controls and siblings for the verdicts the diagnose branch adds or changes (issue 35).

Each class is one verdict: `test_control_*` is the input that looks most like it and must not
get it; `test_sibling_*` is the nearest input that needs a different verdict, and gets its own."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.findings import Severity

OMP_BANNER = (
    "*****************************************\n"
    "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, "
    "please further tune the variable for optimal performance in your application as needed.\n"
    "*****************************************\n"
)
TB = (
    "Traceback (most recent call last):\n"
    '  File "/home/u/train.py", line 40, in <module>\n'
    '  File "/opt/conda/lib/python3.10/site-packages/mylib/core.py", line 7, in run\n'
)


def errors(text: str):
    return [f for f in api.diagnose(text).findings if f.severity is Severity.ERROR]


class TestUnrecognisedFailureRemedy:
    """unrecognised-failure quotes the remedy its own message states, and only that."""

    def test_control_advice_in_a_later_log_record_is_not_the_messages(self):
        found = errors(TB + "RuntimeError: the plan has 3 stages but the mesh has 2\n" + OMP_BANNER)
        assert found[0].id == "unrecognised-failure"
        assert "remedy" not in found[0].evidence
        assert "OMP_NUM_THREADS" not in found[0].fix

    def test_control_a_healthy_log_with_advice_words_is_healthy(self):
        assert errors(OMP_BANNER + "epoch 1 loss 0.31\n") == []

    def test_sibling_advice_that_continues_the_message_is_quoted(self):
        found = errors(TB + "RuntimeError: the plan has 3 stages but the mesh has 2.\nPlease set `pipeline_stages=2` in the config.\n")
        assert found[0].id == "unrecognised-failure"
        assert found[0].evidence["remedy"] == "Please set `pipeline_stages=2` in the config"
        assert found[0].evidence["remedy_line"] == 5


SMI_BOX = """+-----------------------------------------------------------------------------+
| NVIDIA-SMI 525.85.12    Driver Version: 525.85.12    CUDA Version: 12.0     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  NVIDIA A100-SXM...  On   | 00000000:07:00.0 Off |                    0 |
| N/A   31C    P0    60W / 400W |      0MiB / 81920MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+
|   1  NVIDIA A100-SXM...  On   | 00000000:0F:00.0 Off |                    0 |
| N/A   30C    P0    61W / 400W |      0MiB / 81920MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+
"""
PROGRESS = "".join(f"epoch 1 step {100 + i} | loss 0.{4300 + i} | lr 0.000{i % 10} | 512 samples/s | eta 00:1{i % 10}:00\n" for i in range(40))
CUT_CAUSE = (  # one line of torch's device-mismatch error, cut at 80 columns by a terminal copy
    "RuntimeError: Expected all tensors to be on the same device, but found at least \n"
    "two devices, cuda:0 and cpu! (when checking argument for argument index in metho\n"
    "d wrapper_CUDA__index_select)\n"
)


class TestHardWrappedPaste:
    """A paste is joined back at a window's width only when it was cut there."""

    def test_control_an_nvidia_smi_box_is_not_wrapped_text(self):
        from gpudoctor.commands.diagnose.paste import short_wrap_width, wrap_width

        assert wrap_width(SMI_BOX.encode()) == 0 and short_wrap_width(SMI_BOX.encode()) == 0
        assert "unwrapped_at" not in api.diagnose(SMI_BOX).data

    def test_control_a_progress_log_of_one_width_is_not_wrapped_text(self):
        from gpudoctor.commands.diagnose.paste import wrap_width

        assert wrap_width(PROGRESS.encode()) == 0
        report = api.diagnose(PROGRESS)
        assert "unwrapped_at" not in report.data and errors(PROGRESS) == []

    def test_control_a_natural_line_break_of_a_known_message_stays(self):
        # torch's launch deprecation warning breaks its own line after "is deprecated"
        text = (
            "/opt/conda/lib/python3.10/site-packages/torch/distributed/launch.py:181: FutureWarning: The module torch.distributed.launch is deprecated\n"
            "and will be removed in future. Use torchrun.\n"
        )
        report = api.diagnose(text)
        assert "unwrapped_at" not in report.data and errors(text) == []

    def test_sibling_a_cause_cut_at_the_width_is_read_joined(self):
        report = api.diagnose(CUT_CAUSE)
        assert report.data["unwrapped_at"] == 80
        assert errors(CUT_CAUSE)[0].id == "ddp-device-mismatch"


CPP_FRAMES = (
    "frame #3: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x14d (0x78ee7c02261d in /opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so)\n"
    "frame #4: <unknown function> + 0x145c0 (0x78eec64ee5c0 in /opt/conda/lib/python3.10/site-packages/torch/lib/libtorch.so)\n"
)
WARNING_FRAMES = (  # TORCH_SHOW_CPP_STACKTRACES=1 prints a warning's C++ backtrace: nothing failed
    "[W reducer.cpp:1300] Warning: find_unused_parameters=True was specified in DDP constructor, but did not find any unused parameters (function operator())\n"
    "frame #0: c10::Warning::Warning(c10::variant<c10::UserWarning, c10::DeprecationWarning>, c10::SourceLocation const&) + 0x4e (0x7f1 in /x/libc10.so)\n"
    "frame #1: c10::warn(c10::Warning const&) + 0x31 (0x7f2 in /x/libc10.so)\n"
    "frame #2: <unknown function> + 0x5a5950 (0x7fe374b3f950 in /x/libtorch_python.so)\n"
)


class TestUnrecognisedFailureDetector:
    """unrecognised-failure from the detector's evidence: each line it calls harmless has its
    dangerous sibling, the same-looking line that shows a failure."""

    def test_control_a_warnings_cpp_backtrace_is_no_failure(self):
        assert not any(f.id == "unrecognised-failure" for f in api.diagnose(WARNING_FRAMES).findings)

    def test_sibling_a_cpp_backtrace_without_its_message_is_a_failure(self):
        found = errors(CPP_FRAMES)
        assert found and found[0].id == "unrecognised-failure" and "backtrace" in found[0].title

    def test_control_a_metric_called_error_is_no_failure(self):
        assert errors("epoch 3 done\nError: 0.0123\nTop-1 Error: 12.5%\n") == []

    def test_sibling_a_launchers_error_line_is_a_failure(self):
        found = errors("Error: failed to run torchrun --nproc_per_node=4 --nnodes=1\n")
        assert found and found[0].id == "unrecognised-failure"

    def test_control_an_exception_python_ignored_at_exit_is_no_failure(self):
        log = (
            "Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7f62eb6ed630>\n"
            "Traceback (most recent call last):\n"
            f'  File "{"/opt/conda/lib/python3.10/site-packages"}/torch/utils/data/dataloader.py", line 1478, in __del__\n'
            "AssertionError: can only test a child process\n"
        )
        assert errors(log) == []

    def test_sibling_the_same_traceback_not_ignored_is_a_failure(self):
        log = (
            "Traceback (most recent call last):\n"
            '  File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/dataloader.py", line 1478, in __del__\n'
        )
        assert errors(log), "a traceback cut before its exception is still a failure"

    def test_control_a_store_warnings_backtrace_stays_a_warning(self):
        # the store's recv warning at a normal exit, with its C++ backtrace: the pattern explains it
        log = (
            "[W TCPStore.cpp:106] [c10d] recvValue failed on SocketImpl(fd=3, addr=[localhost]:29500): Connection reset by peer\n"
            "Exception raised from recvBytes at ../torch/csrc/distributed/c10d/Utils.hpp:670 (most recent call first):\n" + CPP_FRAMES
        )
        assert not any(f.id == "unrecognised-failure" for f in api.diagnose(log).findings)


def head_id(text: str) -> str:
    found = errors(text)
    return found[0].id if found else "-"


class TestModuleNotFound:
    def test_control_a_name_moved_between_versions_is_not_a_missing_module(self):
        assert head_id("ImportError: cannot import name 'is_torch_tpu_available' from 'transformers'\n") != "module-not-found"

    def test_control_a_logged_fallback_is_not_a_missing_module(self):
        assert head_id("[WARNING] apex not found: ImportError: No module named 'apex', using the native implementation\n") != "module-not-found"

    def test_sibling_a_module_the_jobs_python_cannot_import(self):
        found = errors("Traceback (most recent call last):\n  File \"/root/LLaMA-Factory/src/llamafactory/launcher.py\", line 15, in <module>\n"
                       "ModuleNotFoundError: No module named 'llamafactory'\n")
        assert found[0].id == "module-not-found" and 'import llamafactory' in found[0].fix


class TestLauncherNotFound:
    def test_control_a_compiler_not_found_is_not_the_launcher(self):
        assert head_id("/bin/sh: 1: nvcc: not found\n") != "launcher-not-found"

    def test_sibling_the_launcher_not_on_the_path(self):
        found = errors("/bin/sh: 1: torchrun: not found\n")
        assert found[0].id == "launcher-not-found" and "which torchrun" in found[0].fix


class TestLauncherArgumentUnknown:
    def test_control_the_users_script_refusing_the_launchers_flag_is_its_own_verdict(self):
        assert head_id("usage: train.py [-h]\ntrain.py: error: unrecognized arguments: --local-rank=0\n") != "launcher-argument-unknown"

    def test_sibling_torchrun_refusing_a_flag_of_another_version(self):
        found = errors("torchrun: error: unrecognized arguments: --nproc-per-node=1\n")
        assert found[0].id == "launcher-argument-unknown" and "torchrun --help" in found[0].fix


LIB = "/opt/conda/lib/python3.10/site-packages"


class TestLibraryApiMismatch:
    def test_control_raised_in_the_users_own_code_is_the_users_exception(self):
        log = ("Traceback (most recent call last):\n  File \"/home/u/train.py\", line 12, in main\n"
               "AttributeError: 'Config' object has no attribute 'lr'\n")
        assert head_id(log) == "python-exception"

    def test_sibling_without_a_traceback_the_message_names_the_api(self):
        # ray-project/ray#23302 (a Ray bug fixed by an upgrade): whose frame made the call is not shown, and the finding says so
        found = errors("AttributeError: 'dict' object has no attribute 'num_gpus_per_worker'\n")[0]
        assert found.id == "library-api-mismatch" and found.evidence["raised_by"].startswith("not shown")
        assert "an object of type dict has no attribute num_gpus_per_worker" in found.why

    def test_control_a_value_that_is_none_is_not_an_api_mismatch(self):
        log = (f"Traceback (most recent call last):\n  File \"{LIB}/axolotl/utils/trainer.py\", line 40, in setup\n"
               "AttributeError: 'NoneType' object has no attribute 'get'\n")
        assert head_id(log) != "library-api-mismatch"

    def test_sibling_one_library_calling_another(self):
        log = (f"Traceback (most recent call last):\n  File \"{LIB}/trl/scripts/vllm_serve.py\", line 30, in main\n"
               f"  File \"{LIB}/vllm/engine/arg_utils.py\", line 12, in __init__\n"
               "TypeError: EngineArgs.__init__() got an unexpected keyword argument 'worker_extension_cls'\n")
        found = errors(log)
        assert found[0].id == "library-api-mismatch"
        assert "the vllm version and the trl version" in found[0].fix and "pip show vllm trl" in found[0].fix


class TestGpuDriverUnusable:
    def test_control_a_driver_library_mismatch_is_its_own_verdict(self):
        assert head_id("Failed to initialize NVML: Driver/library version mismatch\n") == "nvml-driver-mismatch"

    def test_control_a_healthy_nvidia_smi_table_is_healthy(self):
        assert errors(SMI_BOX) == []

    def test_sibling_nvidia_smi_finding_no_gpu(self):
        found = errors("# nvidia-smi\nNo devices were found\n")
        assert found[0].id == "gpu-driver-unusable" and "lsmod | grep nvidia" in found[0].fix


class TestRankOutsideWorld:
    def test_control_an_invalid_device_ordinal_is_not_a_rank_outside_the_world(self):
        assert head_id("RuntimeError: CUDA error: invalid device ordinal\n") != "rank-outside-world"

    def test_sibling_a_sampler_built_for_one_node(self):
        found = errors("ValueError: Invalid rank 8, rank should be in the interval [0, 7]\n")
        assert found[0].id == "rank-outside-world" and "num_nodes" in found[0].fix


class TestRunInterrupted:
    def test_control_a_hint_that_names_keyboardinterrupt_is_no_interruption(self):
        assert head_id("Training... Press Ctrl-C (KeyboardInterrupt) to stop\nepoch 1 loss 0.3\n") == "-"

    def test_sibling_a_traceback_ending_in_keyboardinterrupt_says_where_it_waited(self):
        log = ("Traceback (most recent call last):\n"
               '  File "/opt/conda/lib/python3.10/multiprocessing/connection.py", line 379, in _recv\n'
               "KeyboardInterrupt\n")
        found = errors(log)
        assert found[0].id == "run-interrupted" and "multiprocessing/connection.py:379 in _recv" in found[0].fix


class TestCheckpointCorrupt:
    def test_control_a_shape_mismatch_on_load_is_not_a_corrupt_file(self):
        assert head_id("RuntimeError: Error(s) in loading state_dict for Net:\n\tsize mismatch for fc.weight: copying a param with shape torch.Size([10, 512])\n") != "checkpoint-corrupt"

    def test_sibling_a_storage_of_the_wrong_size(self):
        found = errors("RuntimeError: storage has wrong size: expected -4669315570785868528 got 512\n")
        assert found[0].id == "checkpoint-corrupt" and "dist.get_rank() == 0" in found[0].fix


class TestDeepspeedConfigMismatch:
    def test_control_another_deepspeed_config_error_is_not_a_mismatch_with_the_trainer(self):
        assert head_id("ValueError: Please check your DeepSpeed config: 'zero_optimization' is missing\n") != "deepspeed-config-mismatch"

    def test_sibling_the_trainers_check_of_the_deepspeed_config(self):
        found = errors("ValueError: Please correct the following DeepSpeed config values that mismatch TrainingArguments values:\n"
                       "- ds bf16.enabled=True vs hf bf16|bf16_full_eval=False\n"
                       "The easiest method is to set these DeepSpeed config values to 'auto'.\n")
        assert found[0].id == "deepspeed-config-mismatch" and '"auto"' in found[0].fix


class TestBf16UnsupportedGpu:
    def test_control_a_run_that_uses_bfloat16_is_healthy(self):
        assert errors("INFO: using dtype torch.bfloat16 on NVIDIA A100-SXM4-80GB\nstep 1 loss 2.1\n") == []

    def test_sibling_autocast_refusing_bfloat16_on_this_gpu(self):
        found = errors("RuntimeError: Current CUDA Device does not support bfloat16. Please switch dtype to float16.\n")
        assert found[0].id == "bf16-unsupported-gpu"


class TestLauncherSigsegv:
    def test_control_another_fatal_python_error_is_not_a_segfault(self):
        assert head_id("Fatal Python error: Aborted\n") != "launcher-sigsegv"

    def test_sibling_faulthandlers_report_of_a_segfault(self):
        found = errors("Fatal Python error: Segmentation fault\n\nThread 0x00007f2d (most recent call first):\n"
                       '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/elastic/agent/server/api.py", line 900 in _exit_barrier\n')
        assert found[0].id == "launcher-sigsegv"


class TestCudaErrorAsync:
    def test_control_the_watchdogs_timeout_check_is_a_timeout_not_a_cuda_error(self):
        log = ("frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >)"
               " + 0x1d2 (0x1554e9e0f8f2 in /x/site-packages/torch/lib/libtorch_cuda.so)\n")
        assert head_id(log) != "cuda-error-async"
        assert any(f.id == "nccl-watchdog-timeout" for f in api.diagnose(log).findings)

    def test_control_a_named_cuda_error_is_told_by_its_own_rule(self):
        log = ("RuntimeError: CUDA error: an illegal memory access was encountered\n"
               "Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:44 (most recent call first):\n")
        assert head_id(log) == "cuda-illegal-memory-access"

    def test_sibling_the_cuda_check_whose_message_was_cut(self):
        found = errors("Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:44 (most recent call first):\n")
        assert found[0].id == "cuda-error-async" and "CUDA_LAUNCH_BLOCKING=1" in found[0].fix


class TestTorchrunStoppingWorkers:
    def test_control_a_healthy_torchrun_run_prints_no_closing_signal(self):
        log = ("WARNING:torch.distributed.run:\n*****************************************\n"
               "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default\n"
               "step 100 loss 0.12\nINFO:torch.distributed.elastic.agent.server.api:[default] worker group successfully finished.\n")
        assert errors(log) == []

    def test_sibling_the_agent_stopping_the_workers_shows_the_run_did_not_finish(self):
        found = errors("WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 43837 closing signal SIGTERM\n")
        assert found and found[0].id == "torchrun-stopping-workers"


class TestGluedTracebackHeader:
    def test_control_a_progress_bar_alone_is_healthy(self):
        assert errors(" 15%|█▍        | 129/882 [40:17<3:41:05, 17.62s/it]\n") == []

    def test_sibling_a_header_glued_to_the_progress_bar_is_a_traceback(self):
        found = errors(" 15%|█▍        | 129/882 [40:17<3:41:05, 17.62s/it]Traceback (most recent call last):\n"
                       '  File "/home/u/train.py", line 9, in <module>\n')
        assert found and found[0].id == "unrecognised-failure"


class TestLogInconclusive:
    """A log with no failure is healthy only when it shows its run ending; otherwise the
    text does not decide (exit 1, never "healthy")."""

    STEPS = "".join(f"step {i} loss {1.0 / (i + 1):.3f}\n" for i in range(20))

    def test_control_a_log_that_ends_well_is_healthy(self):
        report = api.diagnose(self.STEPS + "Training completed. Do not forget to share your model!\n")
        assert [f.id for f in report.findings] == ["log-no-failure"] and report.ok
        assert "Training completed" in report.findings[0].evidence["ended"]

    TOPO = "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV4\t0-31\nGPU1\tNV4\t X \t0-31\n\nLegend:\n\n  X    = Self\n"

    def test_control_a_gpu_tools_output_beside_a_run_that_ended_well_is_healthy(self):
        report = api.diagnose(self.TOPO + self.STEPS + "Training completed.\n")
        assert [f.id for f in report.findings] == ["log-no-failure"] and report.ok

    def test_sibling_a_gpu_tools_whole_output_alone_shows_the_gpus_not_the_job(self):
        report = api.diagnose(self.TOPO)
        [f] = report.findings
        assert f.id == "log-inconclusive" and f.severity.value == "warn" and not report.ok
        assert "shows the GPUs, not the job" in f.title and f.evidence["tool"] == "Legend:"

    def test_sibling_the_same_steps_cut_before_an_end_do_not_decide(self):
        report = api.diagnose(self.STEPS)
        [f] = report.findings
        assert f.id == "log-inconclusive" and f.severity.value == "warn" and not report.ok
        assert "does not decide" in f.title

    def test_sibling_a_hangs_nccl_info_log_is_not_healthy(self):
        text = "".join(f"node1:123:456 [{r}] NCCL INFO Channel 00/02 : 0 1\n" for r in range(2))
        assert [f.id for f in api.diagnose(text).findings] == ["log-inconclusive"]

    BARRIER_GUESS = ("[rank1]:[W427 17:25:37.358470470 ProcessGroupNCCL.cpp:4115] [PG ID 0 PG GUID 0 Rank 1]  using GPU 1 to "
                     "perform barrier as devices used by this process are currently unknown. This can potentially cause a hang "
                     "if this rank to GPU mapping is incorrect.\n")

    def test_control_a_warning_in_a_log_that_ends_well_stays_healthy_with_warnings(self):
        report = api.diagnose(self.BARRIER_GUESS + self.STEPS + "Training completed. Do not forget to share your model!\n")
        assert report.ok and "log-inconclusive" not in [f.id for f in report.findings]

    def test_sibling_warnings_alone_in_a_log_cut_before_its_end_do_not_decide(self):
        # the warnings a run prints while it starts are in the log of a run that then fails, cut before the error
        report = api.diagnose(self.BARRIER_GUESS + self.STEPS)
        assert not report.ok and [f.id for f in report.findings] == ["barrier-unknown-device", "log-inconclusive"]

    # torchvision prepares MNIST before the job starts ("Processing...", "Done!"); a pod's log
    # cut while NCCL sets up (kubeflow/pytorch-operator#202) holds that "Done!" and no end
    MNIST_READY = "Extracting ../data/MNIST/raw/t10k-labels-idx1-ubyte.gz\n8192it [00:00, 314226.62it/s]\nProcessing...\nDone!\n"
    NCCL_SET_UP = ("master-0:1:1 [0] NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0> [1]eth0:192.168.4.230<0>\n"
                   "master-0:1:1 [0] NCCL INFO NET/Plu\n")

    def test_control_a_datasets_done_before_nccl_sets_up_is_no_end(self):
        report = api.diagnose("Using distributed PyTorch with nccl backend\n" + self.MNIST_READY + self.NCCL_SET_UP)
        assert [f.id for f in report.findings] == ["log-inconclusive"] and not report.ok

    def test_control_a_bare_done_with_steps_after_it_is_no_end(self):
        assert [f.id for f in api.diagnose(self.MNIST_READY + self.STEPS).findings] == ["log-inconclusive"]

    def test_sibling_a_bare_done_as_the_last_line_is_an_end(self):
        report = api.diagnose(self.STEPS + "Done!\n")
        assert [f.id for f in report.findings] == ["log-no-failure"] and report.ok

    def test_sibling_an_end_then_nccls_teardown_is_still_an_end(self):
        text = (self.STEPS + "Training completed.\n"
                "node1:12:34 [0] NCCL INFO comm 0x55d0c2a0 rank 0 nranks 2 cudaDev 0 busId 1000 - Destroy COMPLETE\n")
        report = api.diagnose(text)
        assert [f.id for f in report.findings] == ["log-no-failure"] and report.ok

    def test_control_pytests_passed_verdict_shows_an_end(self):
        report = api.diagnose("tests/test_dist.py::test_allreduce[2] PASSED                              [100%]\n")
        assert report.ok and "PASSED" in report.findings[0].evidence["ended"]

    def test_sibling_the_launchers_defaults_notice_says_passed_but_shows_no_end(self):
        text = ("The following values were not passed to `accelerate launch` and had defaults used instead:\n"
                "\t`--num_processes` was set to a value of `1`\n" + self.STEPS)
        assert [f.id for f in api.diagnose(text).findings] == ["log-inconclusive"]


class TestRayNodeDead:
    """ray-node-dead: Ray's head stopped hearing from a node's raylet (issue 35, worker-died family)."""

    def test_control_rays_hint_list_about_heartbeats_is_not_a_lost_node(self):
        assert head_id("        (2) raylet has lagging heartbeats due to slow network or busy workload.\n") != "ray-node-dead"

    def test_control_a_node_joining_the_cluster_is_healthy(self):
        log = "2023-02-24 04:10:02,112 INFO worker.py:1538 -- Connected to Ray cluster. View the dashboard at 127.0.0.1:8265\n"
        assert errors(log) == []

    def test_sibling_the_node_marked_dead_is_the_cause_of_the_actor_that_died_on_it(self):
        log = ("2022-02-15 16:53:52,096\tWARNING worker.py:1462 -- The node with node id: 8f205b12 and ip: 10.128.0.103 has been "
               "marked dead because the detector has missed too many heartbeats from it.\n"
               "(BackendExecutor pid=5126, ip=10.128.0.32) 2022-02-15 16:53:52,097\tERROR utils.py:42 -- The actor died "
               "unexpectedly before finishing this task.\n")
        found = errors(log)
        assert [f.id for f in found] == ["ray-node-dead"] and "raylet.out" in found[0].fix
        [dead] = [f for f in api.diagnose(log).findings if f.id == "ray-worker-died"]
        assert dead.evidence["consequence_of"] == "ray-node-dead"

    def test_sibling_a_raylet_terminated_names_its_node(self):
        found = errors("2023-02-24 04:30:19,237 WARNING worker.py:1851 -- Raylet is terminated: ip=192.168.207.5, id=abc3bf. "
                       "Termination is unexpected. Possible reasons include: (1) SIGKILL by the user or system OOM killer\n")
        assert found[0].id == "ray-node-dead" and found[0].evidence["node_ip"] == "192.168.207.5"


class TestRayWorkerDied:
    """ray-worker-died: a Ray worker/actor ended without a Python error; its own log holds the cause."""

    def test_control_a_task_that_raised_keeps_its_own_error(self):
        log = ("ray.exceptions.RayTaskError(RuntimeError): ray::WorkerDict.actor_rollout_init_model() (pid=1234, ip=10.0.0.1)\n"
               "RuntimeError: CUDA error: unspecified launch failure\n")
        ids = [f.id for f in errors(log)]
        assert "ray-worker-died" not in ids and ids[0] == "cuda-launch-failure"

    def test_control_an_actor_asked_to_exit_is_healthy(self):
        assert head_id("(TrainTrainable pid=4411) Actor exited normally: ray.actor.exit_actor() was called\n") != "ray-worker-died"

    def test_sibling_a_worker_killed_by_a_system_error(self):
        found = errors("(raylet) A worker died or was killed while executing a task by an unexpected system error. To troubleshoot "
                       "the problem, check the logs for the dead worker. Lease ID: 040000004df2 Worker ID: cd7df849\n")
        assert found[0].id == "ray-worker-died" and "python-core-worker" in found[0].fix

    def test_sibling_the_host_oom_killer_explains_the_dead_worker(self):
        log = ("[Mon Jan  6 10:00:00 2025] Out of memory: Killed process 90836 (ray::ActorMode) total-vm:900000000kB\n"
               "ray.exceptions.RayTaskError(ActorDiedError): ray::ActorModelRayActor.fit() (pid=90836, ip=10.47.0.60)\n")
        assert [f.id for f in errors(log)] == ["host-oom-killer"]
        [dead] = [f for f in api.diagnose(log).findings if f.id == "ray-worker-died"]
        assert dead.evidence["consequence_of"] == "host-oom-killer"


class TestSshAuthFailed:
    """ssh-auth-failed: a multi-node launcher's ssh login to another node was refused."""

    def test_control_the_same_launcher_failing_on_localhost_for_another_reason(self):
        log = ("Error: failed to run torchrun --nproc_per_node=2 --nnodes=2 --node_rank=0 train.py on 127.0.0.1, "
               "is localhost: True, exception: I/O operation on closed file\n")
        assert head_id(log) != "ssh-auth-failed"

    def test_control_a_file_permission_error_is_not_ssh(self):
        assert head_id("PermissionError: [Errno 13] Permission denied: '/data/ckpt/latest'\n") != "ssh-auth-failed"

    def test_sibling_deepspeeds_passwordless_ssh_check_keeps_its_own_verdict(self):
        log = "subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no 192.168.3.100 hostname' returned non-zero exit status 255.\n"
        assert head_id(log) == "deepspeed-host-unreachable-ssh"

    def test_sibling_colossalai_run_refused_by_the_other_host(self):
        found = errors("Error: failed to run torchrun --nproc_per_node=4 --nnodes=2 --node_rank=1 train.py on gpu-1648, "
                       "is localhost: False, exception: No authentication methods available\n")
        assert found[0].id == "ssh-auth-failed" and found[0].evidence["host"] == "gpu-1648"

    def test_sibling_a_key_paramiko_cannot_read(self):
        found = errors("Error: failed to run torchrun pretrain.py on 192.168.1.12, is localhost: False, exception: not a valid RSA private key file\n")
        assert found[0].id == "ssh-auth-failed" and "-m PEM" in found[0].fix


class TestCudaOomFix:
    """cuda-oom's fix names the distributed remedies (sharding, offload, shorter sequences) too."""

    def test_control_host_memory_is_not_a_gpu_oom(self):
        assert head_id("[Mon Jan  6 10:00:00 2025] Out of memory: Killed process 4242 (python) total-vm:90000000kB\n") == "host-oom-killer"

    def test_sibling_a_gpu_oom_gets_the_sharding_and_offload_fix(self):
        found = errors("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 25.00 GiB. GPU 0 has a total capacity of 23.65 GiB\n")
        assert found[0].id == "cuda-oom" and "ZeRO-3" in found[0].fix and "offload" in found[0].fix


COLOSSAL_RUN = "Error: failed to run torchrun --nproc_per_node=4 --nnodes=1 --node_rank=0 {addr} train.py on 127.0.0.1, is localhost: True, exception: {exc}\n"


class TestLauncherMasterAddrEmpty:
    """launcher-master-addr-empty: the torchrun command a launcher built has no master address or port."""

    def test_control_the_same_command_with_both_set_is_not_this(self):
        log = COLOSSAL_RUN.format(addr="--master_addr=10.0.0.1 --master_port=29500", exc="I/O operation on closed file")
        assert "launcher-master-addr-empty" not in [f.id for f in errors(log)]

    def test_control_torchruns_flag_in_two_words_is_not_empty(self):
        assert head_id("torchrun --nproc_per_node 8 --master_addr 10.0.0.1 --master_port 29500 train.py\n") != "launcher-master-addr-empty"

    def test_sibling_an_ssh_refusal_on_the_same_wrapper_keeps_its_own_verdict(self):
        log = COLOSSAL_RUN.format(addr="--master_addr=10.0.0.1 --master_port=29500", exc="No authentication methods available")
        assert head_id(log) == "ssh-auth-failed"

    def test_sibling_the_empty_address_is_named_beside_the_stores_error(self):
        log = "RuntimeError: Stop_waiting response is expected\n" + COLOSSAL_RUN.format(addr="--master_addr= --master_port=", exc="x")
        [found] = [f for f in errors(log) if f.id == "launcher-master-addr-empty"]
        assert found.evidence["empty"] == "addr" and "MASTER_ADDR" in found.fix


class TestLauncherEnvNotExportable:
    """launcher-env-not-exportable: the shell a launcher runs refused one variable's export; torchrun never started."""

    def test_control_a_python_identifier_error_is_not_the_shells_export(self):
        assert head_id("SyntaxError: invalid syntax. Perhaps you forgot a comma? 'train-set' is not a valid identifier\n") != "launcher-env-not-exportable"

    def test_control_an_export_that_worked_is_healthy(self):
        assert errors("export NCCL_DEBUG=INFO\nstep 1 loss 0.5\n") == []

    def test_sibling_a_missing_command_in_the_same_shell_keeps_its_own_verdict(self):
        assert head_id("/bin/sh: 1: torchrun: not found\n") == "launcher-not-found"

    def test_sibling_colossalai_runs_export_refused(self):
        found = errors("/bin/bash: line 0: export: `=/usr/bin/supervisord': not a valid identifier " + COLOSSAL_RUN.format(addr="", exc="x"))
        assert found[0].id == "launcher-env-not-exportable" and found[0].evidence["name"] == "=/usr/bin/supervisord"
        assert "env | grep" in found[0].fix


class TestLogInconclusiveErrorsLogged:
    """`log-inconclusive` case errors: lines logged at error level are shown, never called 'no failure'."""

    def test_control_an_error_rate_in_a_progress_line_is_no_error_level(self):
        report = api.diagnose("step 1 loss 0.3 error_rate 0.1\nINFO: validation found no ERROR rows\n")
        [f] = report.findings
        assert f.id == "log-inconclusive" and "no failure in these" in f.title and "error lines" not in f.evidence

    def test_sibling_a_controllers_klog_error_lines_are_shown(self):
        # tests/fixtures/log_sample/dev3/volcano-2701 (a GPU share that failed), its E-level lines
        log = ("I0224 06:16:07.968531       1 job_controller.go:320] Try to handle request <Queue: , Job: default/pg-e6>\n"
               "E0224 06:16:07.968578       1 job_controller.go:325] Failed to get job by <Queue: , Job: default/pg-e6> from cache\n")
        [f] = api.diagnose(log).findings
        assert f.id == "log-inconclusive" and "logged at error level" in f.title and "first: line 2" in f.title
        assert f.evidence["error lines"][0].startswith("line 2: E0224")

    def test_sibling_a_timestamped_level_then_the_loggers_name_is_shown(self):
        # logging's "%(asctime)s %(levelname)s %(name)s: %(message)s" and its "[name]" form
        for line in ("2024-05-01 10:00:00,123 ERROR trainer: could not save checkpoint to /ckpt: disk quota exceeded\n",
                     "2024-05-01 10:00:00 ERROR [data.loader] shard 12 unreadable, skipped\n"):
            [f] = api.diagnose("step 1 loss 2.3\n" + line + "step 2 loss 2.2\n").findings
            assert f.id == "log-inconclusive" and "logged at error level" in f.title and "first: line 2" in f.title, line

    def test_control_a_capitalised_phrase_after_a_time_stamp_is_no_level(self):
        report = api.diagnose("10:00:01 ERROR Handling: enabled (TORCH_NCCL_ASYNC_ERROR_HANDLING=1)\nstep 1 loss 2.3\n")
        [f] = report.findings
        assert f.id == "log-inconclusive" and "error lines" not in f.evidence

    def test_sibling_an_error_line_that_ends_the_run_is_a_failure_not_this(self):
        log = "E1128 21:34:35.285000 931 torch/distributed/elastic/multiprocessing/api.py:986] failed (exitcode: 1) local_rank: 0 (pid: 956) of binary: /usr/bin/python\n"
        assert "log-inconclusive" not in [f.id for f in api.diagnose(log).findings]
