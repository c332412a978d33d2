"""Controls and siblings for diagD10 (issue 35: honest "unrecognised" answers on the older development parts turned into
a named cause by class). The classes are in knowledge/patterns/classes10d.py, plus faulthandler's "Fatal Python error:
<signal>" read as the signal it names (knowledge/patterns/launcher.py). `test_control_*` is the harmless or look-alike
input that must not get the verdict, `test_sibling_*` the nearest one that gets its own. Lines are real ones (threads
named beside them)."""

from __future__ import annotations

import pytest
from test_controls_detect8 import ENDED, TB, head, head_id, healthy

from gpudoctor import api


def ids(text: str) -> list[str]:
    return [f.id for f in api.diagnose(text).findings]


class TestCudaOomNvmlAssert:
    verdict = "cuda-oom-nvml-assert"

    def test_sibling_the_allocators_nvml_assert_is_an_out_of_memory(self):
        # m-bain/whisperX#1198 (an A100 MIG slice); pytorch/pytorch#112377, fal-ai/fal#478: the OOM report's NVML query
        log = TB + 'RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at "/pytorch/c10/cuda/CUDACachingAllocator.cpp":1015, please report a bug to PyTorch.\n'
        found = head(log)
        assert found is not None and found.id == self.verdict and "out of memory" in found.title
        assert "report a bug" not in found.fix  # the message's own "remedy" is not the fix

    def test_control_another_assert_of_the_allocator_is_not_it(self):
        log = TB + 'RuntimeError: !block->expandable_segment_ INTERNAL ASSERT FAILED at "/pytorch/c10/cuda/CUDACachingAllocator.cpp":2597, please report a bug to PyTorch.\n'
        assert self.verdict not in ids(log)

    def test_sibling_the_plain_out_of_memory_keeps_its_own(self):
        assert head_id(TB + "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB\n") == "cuda-oom"


class TestHostMemoryExhausted:
    verdict = "host-memory-exhausted"

    @pytest.mark.parametrize("line", [
        "MemoryError",  # ultralytics/ultralytics#9476 (Windows, dataloader workers)
        "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 1.61 GiB for an array with shape (753, 536, 536) and data type float64",  # MIC-DKFZ/nnUNet#2213
        "RuntimeError: [enforce fail at alloc_cpu.cpp:73] . DefaultCPUAllocator: can't allocate memory: you tried to allocate 116813856768 bytes. Error code 12 (Cannot allocate memory)",  # JingyunLiang/VRT#49
    ])
    def test_sibling_host_allocation_refused(self, line):
        assert head_id(TB + line + "\n") == self.verdict

    def test_control_the_gpus_out_of_memory_is_not_the_hosts(self):
        assert head_id(TB + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n") == "cuda-oom"

    def test_control_a_source_line_that_catches_it(self):
        log = TB + "    except MemoryError:\nValueError: the dataset has 0 samples\n"
        assert self.verdict not in ids(log)


class TestPythonRecursionLimit:
    verdict = "python-recursion-limit"

    def test_sibling_the_limit_reached(self):
        # deepspeedai/DeepSpeed#4440
        assert head_id(TB + "RecursionError: maximum recursion depth exceeded while calling a Python object\n") == self.verdict

    def test_control_a_setting_of_the_limit_in_a_healthy_run(self):
        assert healthy("sys.setrecursionlimit(10000)  # avoid RecursionError when pickling deep models\n" + ENDED)


class TestPackageMetadataMissing:
    verdict = "package-metadata-missing"

    def test_sibling_metadata_missing_names_the_package(self):
        # NVIDIA/TransformerEngine#1216 (the wheel build had failed)
        found = head(TB + "importlib.metadata.PackageNotFoundError: transformer-engine.\n")
        assert found is not None and found.id == self.verdict and "pip show transformer-engine" in found.fix

    def test_sibling_pkg_resources_wording(self):
        # CellProfiler/CellProfiler#2494
        log = TB + "pkg_resources.DistributionNotFound: The 'cellprofiler' distribution was not found and is required by the application\n"
        assert head_id(log) == self.verdict

    def test_control_a_module_not_found_is_its_own(self):
        assert head_id(TB + "ModuleNotFoundError: No module named 'transformer_engine'\n") == "module-not-found"


class TestStorageIoError:
    verdict = "storage-io-error"

    @pytest.mark.parametrize("line", [
        "OSError: [Errno 5] Input/output error",  # allenai/OLMo#737 (np.memmap on a shared filesystem)
        "[rank1]: OSError: [Errno 116] Stale file handle: xxx",  # modelscope/ms-swift#6695
    ])
    def test_sibling_the_storage_failed(self, line):
        assert head_id(TB + line + "\n") == self.verdict

    def test_control_a_full_disk_is_its_own(self):
        assert head_id(TB + "OSError: [Errno 28] No space left on device\n") == "disk-full"


class TestNumericalMismatch:
    verdict = "numerical-mismatch"

    def test_sibling_a_parity_check_failed(self):
        # Lightning-AI/lightning-thunder#2575
        log = TB + ("AssertionError: [column-parallel linear1_0.weight] Tensor-likes are not close!\n\n"
                    "Mismatched elements: 65 / 1536 (4.2%)\n"
                    "Greatest absolute difference: 0.00150299072265625 at index (31, 24) (up to 1e-05 allowed)\n")
        assert head_id(log) == self.verdict

    def test_control_the_call_in_a_healthy_log(self):
        assert healthy("    torch.testing.assert_close(actual=grad, expected=ref_grad, msg=msg)\n" + ENDED)


class TestMpiInitFailed:
    verdict = "mpi-init-failed"

    def test_sibling_mpi_init_under_torchrun(self):
        # NVIDIA-NeMo/Megatron-Bridge#650 (TP comm overlap bootstraps userbuffers through MPI)
        log = ("*** An error occurred in MPI_Init_thread\n*** on a NULL communicator\n"
               "*** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,\n***    and potentially your MPI job)\n")
        assert head_id(log) == self.verdict

    def test_control_an_error_in_another_mpi_call_is_not_init(self):
        assert self.verdict not in ids("*** An error occurred in MPI_Allreduce\n*** on communicator MPI_COMM_WORLD\n")


class TestK8sVolumeMountFailed:
    verdict = "k8s-volume-mount-failed"

    def test_sibling_a_hostpath_that_is_not_there(self):
        # skypilot-org/skypilot#7925
        log = ('  Warning  FailedMount  89s (x12 over 9m43s)  kubelet            MountVolume.SetUp failed for volume "sharedfs" : '
               "hostPath type check failed: /mnt/data is not a directory\n")
        found = head(log)
        assert found is not None and found.id == self.verdict and found.evidence["volume"] == "sharedfs"

    def test_control_a_mount_that_succeeded(self):
        assert self.verdict not in ids('  Normal   SuccessfulMountVolume  1m  kubelet  MountVolume.SetUp succeeded for volume "sharedfs"\n' + ENDED)


class TestTorchCompileFailed:
    verdict = "torch-compile-failed"

    def test_sibling_dynamos_footer_under_a_cut_traceback(self):
        # pytorch/pytorch#118984: the exception's line is cut, Dynamo's footer under it is not
        log = ("Set TORCH_LOGS=\"+dynamo\" and TORCHDYNAMO_VERBOSE=1 for more information\n\n\n"
               "You can suppress this exception and fall back to eager by setting:\n"
               "    import torch._dynamo\n    torch._dynamo.config.suppress_errors = True\n")
        assert head_id(log) == self.verdict

    def test_sibling_the_backends_own_error_leads_when_a_pattern_names_it(self):
        log = ("E   torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
               "E   torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
               "E   You can suppress this exception and fall back to eager by setting:\n")
        assert head_id(log) == "cuda-oom" and self.verdict in ids(log)

    def test_control_the_setting_in_a_healthy_log(self):
        assert healthy("torch._dynamo.config.suppress_errors = False  # fail loudly\n" + ENDED)


class TestDeepspeedCommNotInitialized:
    verdict = "deepspeed-comm-not-initialized"

    def test_sibling_deepspeed_comm_used_before_init(self):
        # THUDM/Chinese-Transformer-XL#17 (code written for DeepSpeed <= 0.5.9)
        found = head("DeepSpeed backend not set, please initialize it using init_process_group()\n")
        assert found is not None and found.id == self.verdict and "deepspeed.init_distributed()" in found.fix

    def test_sibling_torchs_own_group_missing_is_its_own(self):
        log = TB + "RuntimeError: Default process group has not been initialized, please make sure to call init_process_group.\n"
        assert head_id(log) == "pg-not-initialized"

    def test_control_deepspeeds_init_lines(self):
        assert healthy("[2023-11-21 20:42:18,931] [INFO] [comm.py:637:init_distributed] cdb=None\n" + ENDED)


class TestFaulthandlerSignal:
    """faulthandler's "Fatal Python error: <signal>" is the signal it names."""

    @pytest.mark.parametrize("line,verdict", [
        ("(RayWorker pid=3346) Fatal Python error: Bus error", "launcher-sigbus"),  # lm-sys/FastChat#2490
        ("Fatal Python error: Segmentation fault", "launcher-sigsegv"),  # pytorch/pytorch#72086
    ])
    def test_sibling_each_signal_its_own(self, line, verdict):
        assert verdict in ids(line + "\n\nThread 0x00007f8bf451b740 (most recent call first):\n")

    def test_control_a_fatal_error_that_is_no_signal(self):
        found = ids("Fatal Python error: init_fs_encoding: failed to get the Python codec of the filesystem encoding\n")
        assert not any(i.startswith("launcher-sig") for i in found)


class TestShellStatusOfASignal:
    """A shell's, docker's or a job runner's status 128 + N is signal N (knowledge/patterns/launcher.py SHELL_STATUS)."""

    @pytest.mark.parametrize("line,verdict", [
        ("sky.exceptions.CommandError: Command docker exec sky_container /bin/bash -c 'sudo apt-get update' failed with return code 137.",
         "launcher-sigkill"),  # skypilot-org/skypilot#3706
        ("comfyui-1 exited with code 139", "launcher-sigsegv"),  # YanWenKun/ComfyUI-Docker#68
        ("error Command failed with exit code 139.", "launcher-sigsegv"),  # n4ze3m/dialoqbase#90
    ])
    def test_sibling_status_128_plus_the_signal(self, line, verdict):
        assert head_id(line + "\n") == verdict

    @pytest.mark.parametrize("line", ["Process finished with exit code 1370", "exit code 1: 137 samples were skipped"])
    def test_control_a_status_that_is_no_signal(self, line):
        assert not any(i in ("launcher-sigkill", "launcher-sigsegv") for i in ids(line + "\n"))


class TestTaskRunnerFailedSeeLog:
    verdict = "task-runner-failed-see-log"
    # open-compass/opencompass#1040: the runner's line ends with "see", the task's log on the next line
    LOCAL = ("04/11 09:19:49 - OpenCompass - ERROR - /x/opencompass/runners/local.py - _launch - 192 - task "
             "OpenICLInfer[llama-2-7b/tydiqa-goldp_arabic] fail, see\n"
             "./outputs/default/20240411_091943/logs/infer/llama-2-7b/tydiqa-goldp_arabic.out\n")

    def test_sibling_the_tasks_log_is_the_step(self):
        found = head(self.LOCAL)
        assert found is not None and found.id == self.verdict and "tydiqa-goldp_arabic.out" in found.fix

    def test_sibling_the_summarys_exit_code(self):
        # open-compass/opencompass#696
        log = ("12/13 01:45:41 - OpenCompass - ERROR - /workspace/opencompass-main/opencompass/runners/base.py - summarize - 63 - "
               "OpenICLEval[mymodel_roberta/siqa] failed with code 127\n")
        assert head_id(log) == self.verdict

    def test_control_the_runners_launch_lines(self):
        log = ("04/11 09:19:44 - OpenCompass - INFO - Partitioned into 4 tasks.\n"
               "launch OpenICLInfer[llama-2-7b/tydiqa-goldp_arabic] on GPU 0\n" + ENDED)
        assert healthy(log)

    def test_sibling_the_tasks_own_traceback_when_pasted_is_the_cause(self):
        log = self.LOCAL + TB + "ModuleNotFoundError: No module named 'transformers_stream_generator'\n"
        assert head_id(log) == "module-not-found"


class TestLauncherNprocInvalid:
    verdict = "launcher-nproc-invalid"

    @pytest.mark.parametrize("value", ["GPUS=2", "--work-dir", ""])  # open-mmlab/mmdetection3d#2697, mmaction2#1476, zcablii/LSKNet#112
    def test_sibling_the_wrappers_arguments_out_of_order(self, value):
        log = TB + ('  File "/x/site-packages/torch/distributed/run.py", line 498, in determine_local_world_size\n'
                    '    raise ValueError(f"Unsupported nproc_per_node value: {nproc_per_node}")\n'
                    f"ValueError: Unsupported nproc_per_node value: {value}\n")
        assert head_id(log) == self.verdict

    def test_control_an_empty_int_elsewhere_is_not_it(self):
        log = TB + "ValueError: invalid literal for int() with base 10: ''\n"
        assert self.verdict not in ids(log)


class TestRsyncRemoteFailed:
    verdict = "rsync-remote-failed"

    def test_sibling_the_node_set_up_over_ssh_failed(self):
        # skypilot-org/skypilot#618
        log = ("rsync: connection unexpectedly closed (28 bytes received so far) [sender]\n"
               "rsync error: unexplained error (code 255) at io.c(235) [sender=3.1.2]\n"
               "2022-03-18 22:20:50,873 PANIC commands.py:724 -- Failed to setup head node.\n")
        assert head_id(log) == self.verdict

    def test_control_a_partial_transfer_is_not_a_connection_failure(self):
        log = "rsync error: some files/attrs were not transferred (see previous errors) (code 23) at main.c(1338) [sender=3.2.7]\n"
        assert self.verdict not in ids(log)
