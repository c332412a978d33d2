"""Controls and siblings for the family rules found from the third development sample
(tests/fixtures/log_sample/dev3: GPU infrastructure, MPI launchers, GPU libraries; issue 35 item 4).

One class per verdict a family rule gives or widens: the look-alike that must not get it (a
build that succeeded, a driver that loaded, a rank that prints its progress), the nearest line
that needs another verdict and gets its own, and the family's variants, each a real line of the
sample. Each runs through the whole of `diagnose`."""

from __future__ import annotations

from gpudoctor.core.findings import Severity
from test_controls_patterns import head_id, ids
from test_controls_patterns2 import finding


# --- a package's C++/CUDA build: pip/uv from source as well as at first use ------------------


class TestExtensionBuildFailedInstall:
    verdict = "extension-build-failed"

    def test_control_a_wheel_that_built(self):
        log = ("  Building wheel for flash-attn (setup.py) ... done\n"
               "Successfully built flash-attn\nInstalling collected packages: flash-attn\nSuccessfully installed flash-attn-2.5.8\n")
        assert "extension-build-failed" not in ids(log)

    def test_control_no_cuda_runtime_while_building_is_only_a_warning(self):
        # torch says so whenever it builds without a visible GPU; the build itself may well succeed
        log = ("No CUDA runtime is found, using CUDA_HOME='C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.2'\n"
               "      running bdist_wheel\n      running build\n")
        assert "extension-build-failed" not in ids(log)

    def test_sibling_an_installed_binary_built_for_another_torch_is_not_a_build(self):
        log = ("ImportError: /opt/lib/python3.12/site-packages/flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so: undefined symbol: "
               "_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE\n")
        assert "extension-build-failed" not in ids(log)

    def test_sibling_deepspeed_without_cuda_home_keeps_its_own_verdict(self):
        assert head_id("AssertionError: CUDA_HOME does not exist, unable to compile CUDA op(s)\n") == "deepspeed-cuda-home-missing"

    def test_variant_pip_wheel_build_failed(self):
        log = (">   × python setup.py bdist_wheel did not run successfully.\n>   │ exit code: 1\n>   ╰─> [115 lines of output]\n"
               "  ERROR: Failed building wheel for transformer_engine\n")
        f = finding(log, "extension-build-failed")
        assert f.severity is Severity.ERROR
        assert "CUDA_HOME" in f.fix and "prebuilt wheel" in f.fix

    def test_variant_nvcc_missing_before_the_build(self):
        log = ("      RuntimeError: flash_attn was requested, but nvcc was not found.  Are you sure your environment has nvcc available?  "
               "If you're installing within a container from https://hub.docker.com/r/pytorch/pytorch, only images whose names contain "
               "'devel' will provide nvcc.\n")
        assert head_id(log) == "extension-build-failed"

    def test_sibling_toolkit_cuda_not_torchs_is_its_own_class(self):
        # diagJ33: the toolkit's CUDA against torch's decides the build's failure (knowledge/patterns/builds.py)
        log = ("RuntimeError:\n      The detected CUDA version (12.2) mismatches the version that was used to compile\n"
               "      PyTorch (11.7). Please make sure to use the same CUDA versions.\n")
        f = finding(log, "build-cuda-version-mismatch")
        assert f.evidence.get("nvcc_cuda") == "12.2" and f.evidence.get("torch_cuda") == "11.7"

    def test_variant_ninja_object_failed(self):
        log = "FAILED: /test/flash-attention/hopper/build/temp.linux-x86_64-cpython-310/flash_fwd_hdim64_fp16_sm90.o\n"
        assert head_id(log) == "extension-build-failed"


# --- the NVIDIA kernel module not bringing a GPU up ------------------------------------------


class TestGpuDriverUnusableKernelModule:
    verdict = "gpu-driver-unusable"

    def test_control_the_open_module_loading(self):
        log = ("[    2.757687] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  530.41.03  Release Build  (archlinux-builder@archalien)  \n"
               "[    2.783117] nvidia-modeset: Loading NVIDIA UNIX Open Kernel Mode Setting Driver for x86_64  530.41.03  Release Build  (archlinux-builder@archalien)  \n"
               "[   24.020428] nvidia-nvlink: Nvlink Core is being initialized, major device number 239\n")
        assert "gpu-driver-unusable" not in ids(log)

    def test_sibling_a_library_version_mismatch_is_its_own_verdict(self):
        assert head_id("Failed to initialize NVML: Driver/library version mismatch\n") == "nvml-driver-mismatch"

    def test_variant_open_module_refusing_a_gpu_without_gsp(self):
        log = ("[ 1157.046099] NVRM: The NVIDIA GPU 0000:af:00.0 (PCI ID: 10de:1db5)\n"
               "               NVRM: installed in this system is not supported by open\n"
               "               NVRM: nvidia.ko because it does not include the required GPU\n"
               "               NVRM: System Processor (GSP).\n")
        f = finding(log, "gpu-driver-unusable")
        assert "proprietary driver" in f.fix

    def test_sibling_the_same_message_head_over_a_gpu_fallen_off_the_bus_is_the_xid(self):
        # tests/fixtures/gpu_health/corpus.json nvsentinel-155: the GPU's line, then "fallen off the bus", then a failed probe
        log = ("[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\n               NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
               "               NVRM: fallen off the bus and is not responding to commands.\n[ 1843.439662] NVRM: The NVIDIA probe routine failed for 1 device(s).\n")
        assert "gpu-driver-unusable" not in ids(log) and "nvidia-xid" in ids(log)

    def test_variant_open_module_for_data_center_gpus_only(self):
        log = "[    3.513141] NVRM: Open nvidia.ko is only ready for use on Data Center GPUs.\n"
        assert head_id(log) == "gpu-driver-unusable"

    def test_variant_gsp_firmware_not_booting(self):
        assert head_id("[  217.545142] NVRM kgspInitRm_IMPL: cannot bootstrap riscv/gsp: 0xffff\n") == "gpu-driver-unusable"

    def test_variant_nvidia_smi_worded_without_the_hyphen(self):
        log = ("`NVIDIA SMI has failed because it could not communicate with the NVIDIA driver Make sure that the latest NVIDIA driver "
               "is installed and running.`\n")
        assert head_id(log) == "gpu-driver-unusable"


# --- a kernel library refusing an older GPU architecture --------------------------------------


class TestGpuCapabilityTooOldFlashAttention:
    verdict = "gpu-capability-too-old"

    def test_control_a_warning_about_the_backward_on_older_gpus(self):
        log = ("WARNING:root:Flash attention is only supported on A100 or H100 GPU during training due to head dim > 64 backward."
               "ref: https://github.com/HazyResearch/flash-attention/issues/190#issuecomment-1523359593\n")
        assert "gpu-capability-too-old" not in ids(log)

    def test_sibling_a_build_without_the_gpus_kernels(self):
        assert head_id("RuntimeError: CUDA error: no kernel image is available for execution on the device\n") == "cuda-no-kernel-image"

    def test_variant_flashattention_3_on_an_ampere_gpu(self):
        f = finding("RuntimeError: FlashAttention only supports Hopper GPUs or newer.\n", "gpu-capability-too-old")
        assert f.evidence.get("arch") == "Hopper" and "sm90" in f.why


# --- the MPI launchers' report that a rank failed ------------------------------------------


class TestMpiRankFailed:
    def test_control_ranks_printing_their_progress(self):
        log = ("[1,1]<stdout>:Epoch 0/100, Batch 16/29316\n[1,0]<stdout>:Total loss is  236.61468505859375 ETA is  7:57:00.494483\n"
               "c4140-01:147406:148900 [0] NCCL INFO NET : Using interface ib0:192.168.1.35<0>\n")
        assert "mpi-rank-failed" not in ids(log)

    def test_control_the_summarys_first_line_names_nothing(self):
        log = "Primary job  terminated normally, but 1 process returned\n"
        assert "mpi-rank-failed" not in ids(log)

    def test_sibling_the_oom_killer_that_sent_the_signal_is_the_cause(self):
        log = ("Out of memory: Killed process 12345 (python) total-vm:98765432kB, anon-rss:65432100kB, file-rss:0kB, shmem-rss:0kB\n"
               "mpirun noticed that process rank 7 with PID 0 on node HOSTNAME exited on signal 9 (Killed).\n")
        assert head_id(log) == "host-oom-killer"
        assert finding(log, "mpi-rank-failed").evidence.get("consequence_of") == "host-oom-killer"

    def test_sibling_a_segfault_reported_by_open_mpi_is_the_crash(self):
        log = ("[good:02773] *** Process received signal ***\n[good:02773] Signal: Segmentation fault (11)\n"
               "[good:02773] Signal code: Invalid permissions (2)\n")
        assert head_id(log) == "launcher-sigsegv"

    def test_variant_mpirun_naming_the_rank_and_signal(self):
        f = finding("mpirun noticed that process rank 7 with PID 0 on node HOSTNAME exited on signal 9 (Killed).\n", "mpi-rank-failed")
        assert f.severity is Severity.ERROR
        assert (f.evidence.get("rank"), f.evidence.get("signal")) == ("7", "9")
        assert "OOM killer" in f.why and "first failure" in f.fix

    def test_variant_horovod_shut_down_after_a_ranks_exception(self):
        log = ("Fri Sep 25 16:52:57 2020[1]<stderr>:  (0) Unknown: Horovod has been shut down. This was caused by an exception on one "
               "of the ranks or an attempt to allreduce, allgather or\n")
        assert head_id(log) == "mpi-rank-failed"

    def test_variant_open_mpi_peer_gone(self):
        log = ("An MPI communication peer process has unexpectedly disconnected.  This\n"
               "usually indicates a failure in the peer process (e.g., a crash or\n")
        assert head_id(log) == "mpi-rank-failed"


# --- the GPU stack under the job: the scheduler, the components that hand out GPUs ----------


class TestPodUnschedulable:
    def test_control_one_node_refusing_while_another_takes_the_task(self):
        log = ("I1009 06:42:18.755838       1 scheduler_helper.go:49] Predicates failed for task <default/lm-mpi-job-mpiworker-0> on node "
               "<p40-3>: task default/lm-mpi-job-mpiworker-0 on node p40-3 fit failed: node(s) resource fit failed\n"
               "I1009 06:42:18.755985       1 allocate.go:208] Binding Task <default/lm-mpi-job-mpiworker-0> to node <titanxp-4>\n")
        assert "pod-unschedulable" not in ids(log)

    def test_sibling_a_pod_pending_on_a_missing_host_path_is_not_the_scheduler(self):
        log = ("  Warning  FailedMount  89s (x12 over 9m43s)  kubelet            MountVolume.SetUp failed for volume \"sharedfs\" : "
               "hostPath type check failed: /mnt/data is not a directory\n")
        assert "pod-unschedulable" not in ids(log)

    def test_variant_a_gang_that_does_not_fit(self):
        log = ("    Message:               1/1 tasks in gang unschedulable: pod group is not ready, 1 Pending, 1 minAvailable.\n"
               "    Reason:                NotEnoughResources\n")
        f = finding(log, "pod-unschedulable")
        assert f.severity is Severity.ERROR and "minAvailable" in f.fix

    def test_variant_no_node_with_free_gpus(self):
        log = ("[map[type:PodScheduled lastProbeTime:<nil> lastTransitionTime:2018-02-26T21:58:32Z message:0/2 nodes are available: "
               "1 PodToleratesNodeTaints, 2 Insufficient nvidia.com/gpu. reason:Unschedulable status:False]]\n")
        assert finding(log, "pod-unschedulable").evidence.get("nodes") == "2"


class TestDriverLibraryNotFound:
    def test_control_the_plugin_finding_nvml(self):
        log = ("I0525 19:15:11.423875       1 factory.go:48] Detected NVML platform: found NVML library\n"
               "I0525 19:15:11.423930       1 factory.go:64] Using NVML manager\n")
        assert "driver-library-not-found" not in ids(log)

    def test_sibling_a_missing_cuda_runtime_library_is_its_own_verdict(self):
        assert head_id("ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory\n") == "cuda-library-missing"

    def test_variant_the_dra_plugin_in_a_crash_loop(self):
        log = ('Defaulted container "plugin" out of: plugin, init (init)\n'
               'Error: failed to create device library: failed to locate driver libraries: error locating "libnvidia-ml.so.1"\n')
        f = finding(log, "driver-library-not-found")
        assert f.evidence.get("library") == "libnvidia-ml.so.1" and "ldconfig" in f.fix

    def test_variant_the_container_runtime_hook(self):
        log = ("nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object file: "
               "no such file or directory: unknown\n")
        assert head_id(log) == "driver-library-not-found"


class TestGpuResetRefused:
    def test_control_a_mig_configuration_applied(self):
        log = ("DEBU[0000] Checking current MIG mode...                 \nDEBU[0000]   GPU 0: 0x20B510DE                          \n"
               "DEBU[0000]     Asserting MIG mode: Enabled              \nDEBU[0000]     Current MIG mode: Enabled                \n"
               "GPU 00000000:C1:00.0 was successfully reset.\n")
        assert "gpu-reset-refused" not in ids(log)

    def test_sibling_busy_devices_for_a_cuda_job_are_their_own_verdict(self):
        assert head_id("RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable\n") == "cuda-devices-busy"

    def test_variant_mig_parted_reset_refused(self):
        log = ("ERRO[0003]\nThe following GPUs could not be reset:\n  GPU 00000000:01:00.0: In use by another client\n"
               "  GPU 00000000:47:00.0: In use by another client\n"
               "FATA[0008] Error applying MIG configuration with hooks: error resetting all GPUs: exit status 255\n")
        f = finding(log, "gpu-reset-refused")
        assert f.severity is Severity.ERROR and "nvidia_drm" in f.fix


class TestLauncherSigabrtUnderBash:
    verdict = "launcher-sigabrt"

    def test_control_a_killed_child_is_sigkill_not_an_abort(self):
        assert head_id("run.sh: line 12: 48213 Killed                  python train.py\n") == "launcher-sigkill"

    def test_sibling_a_segfault_under_bash(self):
        assert head_id("run.sh: line 12: 48213 Segmentation fault      (core dumped) python train.py\n") == "launcher-sigsegv"

    def test_variant_horovods_worker_aborted(self):
        log = ("[0]<stderr>:bash: line 1:  3635 Aborted                 (core dumped) HOROVOD_HOSTNAME=elastic-test-worker-2 "
               "HOROVOD_RANK=0 HOROVOD_SIZE=3 HOROVOD_LOCAL_RANK=0\n")
        assert head_id(log) == "launcher-sigabrt"


class TestDataloaderWorkerExitedThread:
    verdict = "dataloader-worker-exited"

    def test_control_olmo_logging_its_steps(self):
        log = ("[2024-08-18 12:26:53] INFO     [olmo.train:966, rank=0] [step=1/739328,epoch=0]\n    optim/total_grad_norm=9.355\n"
               "    train/CrossEntropyLoss=11.35\n    System/Peak GPU Memory (MB)=42,083\n")
        assert "dataloader-worker-exited" not in ids(log)

    def test_sibling_a_worker_killed_by_a_signal_is_its_own_verdict(self):
        assert head_id("RuntimeError: DataLoader worker (pid 39424) is killed by signal: Killed.\n") == "dataloader-worker-killed"

    def test_variant_olmos_loader_thread_failed(self):
        log = ("[2024-04-18 19:06:17] INFO     [olmo.train:816, rank=0] [step=75/739328]\n    train/CrossEntropyLoss=7.417\n"
               "[2024-04-18 19:10:41] CRITICAL [olmo.util:158, rank=0] Uncaught OLMoThreadError: generator thread data thread 3 failed\n")
        f = finding(log, "dataloader-worker-exited")
        assert f.evidence.get("thread") == "data thread 3" and "dataset" in f.why


class TestMpiRankFailedCut:
    verdict = "mpi-rank-failed"

    def test_control_an_elastic_job_that_finished(self):
        log = "[0]<stdout>:166/166 [==============================] - 3s 18ms/step - loss: 0.21\nsuccess count == 2 -> stop running\n"
        assert "mpi-rank-failed" not in ids(log)

    def test_sibling_a_rank_that_segfaulted_under_the_elastic_driver(self):
        log = "[2]<stderr>:Signal: Segmentation fault (11)\nERROR:root:failure count == 3 -> stop running\n"
        assert head_id(log) == "launcher-sigsegv"

    def test_variant_horovodrun_summary_cut_mid_word(self):
        log = ("ERROR:root:failure count == 3 -> stop running\nProcess 2 exit with status code 1.\n"
               "RuntimeError: Horovod detected that one or more processes exited with non-zer\n")
        assert head_id(log) == "mpi-rank-failed"
