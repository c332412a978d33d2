"""Controls and siblings for the diagnose patterns a user meets most (issue 34's method):
for each pattern id, the healthy or look-alike log text that must not get it
(test_control_*), and the nearest real failure line that needs another pattern and
gets its own (test_sibling_*). The lines are real ones, as users paste them (the
patterns' own sources and tests/fixtures/log_sample/dev/); each runs through the
whole of `diagnose`, not only the regex."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.findings import Severity

TB = 'Traceback (most recent call last):\n  File "/home/u/train.py", line 88, in <module>\n'


def ids(text: str) -> list[str]:
    return [f.id for f in api.diagnose(text).findings]


def head_id(text: str) -> str:
    """The first error diagnose gives (the cause it leads with), or "-"."""
    found = [f for f in api.diagnose(text).findings if f.severity is Severity.ERROR]
    return found[0].id if found else "-"


class TestCudaOom:
    def test_control_a_memory_report_line_is_no_oom(self):
        log = "step 200 | loss 1.83 | max_memory_allocated 45.97 GiB of 47.50 GiB | 3.1 it/s\n"
        assert "cuda-oom" not in ids(log)

    def test_control_host_memory_killer_is_not_the_gpus_memory(self):
        log = ("slurmstepd: error: Detected 1 oom-kill event(s) in StepId=1234567.batch. "
               "Some of your processes may have been killed by the cgroup out-of-memory handler.\n")
        assert head_id(log) == "host-oom-killer"

    def test_control_a_java_heap_out_of_memory_is_no_gpu(self):
        # the class name alone is Java's too (a data tool's JVM beside the job); torch's is torch.[cuda.]OutOfMemoryError
        log = ('Exception in thread "main" java.lang.OutOfMemoryError: Java heap space\n'
               "\tat java.util.Arrays.copyOf(Arrays.java:3332)\n")
        assert "cuda-oom" not in ids(log)

    def test_sibling_torchs_class_name_alone_is_the_gpus(self):
        assert head_id("torch.cuda.OutOfMemoryError\n") == "cuda-oom"

    def test_sibling_other_ranks_filling_gpu0_is_its_own_verdict(self):
        log = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 79.18 GiB "
               "of which 41.00 MiB is free. Process 568053 has 50.74 GiB memory in use. Process 568050 has 14.72 GiB memory in use. "
               "Process 568055 has 13.66 GiB memory in use.\n")
        assert head_id(log) == "cuda-oom-gpu0-other-ranks"

    def test_sibling_one_process_out_of_its_own_memory(self):
        log = ("[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.36 GiB. GPU 1 has a total capacity of "
               "47.50 GiB of which 1.52 GiB is free. Including non-PyTorch memory, this process has 45.97 GiB memory in use.\n")
        assert head_id(log) == "cuda-oom"


class TestHostOomKiller:
    def test_control_a_gpu_oom_is_not_the_hosts_killer(self):
        assert head_id("RuntimeError: CUDA error: out of memory\n") == "cuda-oom"

    def test_sibling_the_kernels_oom_killer_line(self):
        log = "Out of memory: Killed process 12345 (python) total-vm:98765432kB, anon-rss:65432100kB, file-rss:0kB, shmem-rss:0kB\n"
        assert head_id(log) == "host-oom-killer"


class TestNcclWatchdogTimeout:
    def test_control_the_watchdogs_frame_in_a_backtrace_is_no_timeout(self):
        log = "frame #3: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x10c (0x1554e9e1871c in /x/libtorch_cuda.so)\n"
        assert "nccl-watchdog-timeout" not in ids(log)

    def test_control_a_timeout_setting_printed_at_start_is_no_timeout(self):
        log = "INFO: init_process_group(backend='nccl', timeout=timedelta(seconds=1800))\nstep 1 loss 2.3\n"
        assert "nccl-watchdog-timeout" not in ids(log)

    def test_sibling_the_watchdog_catching_a_collective(self):
        log = ("[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: "
               "WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) "
               "ran for 600060 milliseconds before timing out.\n")
        assert "nccl-watchdog-timeout" in ids(log)

    def test_sibling_a_gloo_collective_timeout_is_gloos(self):
        log = "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms for recv operation to complete\n"
        got = ids(log)
        assert "nccl-watchdog-timeout" not in got and "gloo-collective-timeout" in got


class TestCudaIllegalMemoryAccess:
    def test_control_a_device_side_assert_is_its_own_verdict(self):
        assert head_id("RuntimeError: CUDA error: device-side assert triggered\n") == "cuda-device-assert"

    def test_sibling_the_illegal_access_of_the_old_runtime(self):
        assert head_id("RuntimeError: cuda runtime error (700) : an illegal memory access was encountered\n") == "cuda-illegal-memory-access"


class TestCudaDeviceAssert:
    def test_control_an_illegal_memory_access_is_not_an_assert(self):
        assert head_id("RuntimeError: CUDA error: an illegal memory access was encountered\n") != "cuda-device-assert"

    def test_sibling_the_assert_itself(self):
        assert head_id("RuntimeError: CUDA error: device-side assert triggered\n") == "cuda-device-assert"


class TestCudaNoKernelImage:
    def test_control_a_gpu_named_at_startup_is_healthy(self):
        log = "Using device: NVIDIA RTX A6000 (sm_86), torch 2.3.0+cu121\nepoch 1 loss 0.9\n"
        assert "cuda-no-kernel-image" not in ids(log)

    def test_sibling_an_old_driver_is_not_a_missing_kernel(self):
        log = "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n"
        assert head_id(log) == "cuda-driver-too-old"

    def test_sibling_the_missing_kernel_image(self):
        assert head_id("RuntimeError: CUDA error: no kernel image is available for execution on the device\n") == "cuda-no-kernel-image"


class TestCudaDriverTooOld:
    def test_control_a_driver_banner_is_healthy(self):
        log = "| NVIDIA-SMI 470.57.02    Driver Version: 470.57.02    CUDA Version: 11.4     |\n"
        assert "cuda-driver-too-old" not in ids(log)

    def test_sibling_a_driver_library_mismatch_is_its_own_verdict(self):
        assert head_id("Failed to initialize NVML: Driver/library version mismatch\n") == "nvml-driver-mismatch"

    def test_sibling_torch_refusing_the_old_driver(self):
        log = ("RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by "
               "downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx\n")
        assert head_id(log) == "cuda-driver-too-old"


class TestCudaTorchCpuBuild:
    def test_control_a_cpu_run_that_says_so_is_healthy(self):
        log = "torch 2.3.0+cpu, CUDA available: False, training on cpu\nepoch 1 loss 0.5\n"
        assert "cuda-torch-cpu-build" not in ids(log)

    def test_sibling_no_gpu_visible_is_not_a_cpu_build(self):
        log = "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver\n"
        assert head_id(log) not in ("cuda-torch-cpu-build", "-")

    def test_sibling_torch_without_cuda(self):
        assert head_id(TB + "AssertionError: Torch not compiled with CUDA enabled\n") == "cuda-torch-cpu-build"


class TestCudaInvalidDeviceOrdinal:
    def test_control_set_device_in_a_healthy_log(self):
        assert "cuda-invalid-device-ordinal" not in ids("rank 3: torch.cuda.set_device(3), device cuda:3\nstep 1 loss 1.0\n")

    def test_sibling_the_ordinal_error(self):
        assert head_id("RuntimeError: CUDA error: invalid device ordinal\n") == "cuda-invalid-device-ordinal"


class TestCudaForkReinit:
    def test_control_spawn_start_method_in_a_healthy_log(self):
        log = "INFO: multiprocessing start method: spawn\nepoch 1 loss 0.4\n"
        assert "cuda-fork-reinit" not in ids(log)

    def test_sibling_spawn_without_a_main_guard_is_its_own_verdict(self):
        log = ("RuntimeError: An attempt has been made to start a new process before the current process has finished "
               "its bootstrapping phase.\n")
        assert head_id(log) == "spawn-main-guard"

    def test_sibling_cuda_in_a_forked_child(self):
        log = ("RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, "
               "you must use the 'spawn' start method\n")
        assert head_id(log) == "cuda-fork-reinit"


class TestDdpUnusedParameters:
    def test_control_the_harmless_find_unused_warning_is_no_error(self):
        log = ("[W reducer.cpp:1300] Warning: find_unused_parameters=True was specified in DDP constructor, but did not find "
               "any unused parameters in the forward pass. This flag results in an extra traversal of the autograd graph "
               "every iteration, which can adversely affect performance.\n")
        assert head_id(log) == "-" and "ddp-unused-parameters" not in ids(log)

    def test_sibling_marked_ready_twice_is_its_own_verdict(self):
        log = ("RuntimeError: Expected to mark a variable ready only once. This error is caused by one of the following "
               "reasons: 1) Use of a module parameter outside the `forward` function.\n")
        assert head_id(log) == "ddp-marked-ready-twice"

    def test_sibling_the_reduction_not_finished(self):
        log = ("RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error "
               "indicates that your module has parameters that were not used in producing loss.\n")
        assert head_id(log) == "ddp-unused-parameters"


class TestDdpFindUnusedNotNeeded:
    def test_control_the_unused_parameter_error_is_not_the_warning(self):
        log = ("RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error "
               "indicates that your module has parameters that were not used in producing loss.\n")
        assert "ddp-find-unused-not-needed" not in ids(log)

    def test_sibling_the_warning_itself(self):
        log = ("[W reducer.cpp:1300] Warning: find_unused_parameters=True was specified in DDP constructor, but did not find "
               "any unused parameters in the forward pass.\n")
        assert "ddp-find-unused-not-needed" in ids(log)


class TestDdpDeviceMismatch:
    def test_control_devices_listed_in_a_healthy_log(self):
        log = "model on cuda:0, batch on cuda:0\nstep 1 loss 0.7\n"
        assert "ddp-device-mismatch" not in ids(log)

    def test_sibling_a_model_left_on_the_cpu(self):
        log = ("RuntimeError: Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same\n")
        assert head_id(log) == "ddp-device-mismatch"


class TestDataloaderWorkerKilled:
    def test_control_a_bus_error_is_shared_memory(self):
        log = ("RuntimeError: DataLoader worker (pid 7579) is killed by signal: Bus error. It is possible that dataloader's "
               "workers are out of shared memory. Please try to raise your shared memory limit.\n")
        assert head_id(log) == "dataloader-shm-bus-error"

    def test_sibling_a_worker_killed_by_sigkill(self):
        assert head_id("RuntimeError: DataLoader worker (pid 30001) is killed by signal: Killed.\n") == "dataloader-worker-killed"


class TestDataloaderShmBusError:
    def test_control_a_worker_killed_by_sigkill_is_not_shared_memory(self):
        assert head_id("RuntimeError: DataLoader worker (pid 30001) is killed by signal: Killed.\n") != "dataloader-shm-bus-error"

    def test_sibling_the_bus_error_in_a_worker(self):
        log = "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\n"
        assert head_id(log) == "dataloader-shm-bus-error"


class TestShmNoSpace:
    def test_control_a_full_disk_is_not_shared_memory(self):
        assert head_id("OSError: [Errno 28] No space left on device\n") == "disk-full"

    def test_sibling_torch_writing_its_shared_file(self):
        log = "RuntimeError: unable to write to file </torch_18692_1954506624>: No space left on device (28)\n"
        assert head_id(log) == "shm-no-space"


class TestDiskFull:
    def test_control_shared_memory_full_is_not_the_disk(self):
        log = "RuntimeError: unable to write to file </torch_18692_1954506624>: No space left on device (28)\n"
        assert head_id(log) != "disk-full"

    def test_sibling_too_many_open_files_is_its_own_errno(self):
        assert head_id("OSError: [Errno 24] Too many open files\n") == "too-many-open-files"

    def test_sibling_the_disk_full_errno(self):
        assert head_id(TB + "OSError: [Errno 28] No space left on device\n") == "disk-full"


class TestTooManyOpenFiles:
    def test_control_a_ulimit_line_printed_at_start_is_healthy(self):
        assert "too-many-open-files" not in ids("open files                      (-n) 1024\nstep 1 loss 0.2\n")

    def test_sibling_the_errno_24(self):
        assert head_id("OSError: [Errno 24] Too many open files\n") == "too-many-open-files"


class TestStoreAddressInUse:
    def test_control_the_store_listening_is_healthy(self):
        log = "INFO:torch.distributed.distributed_c10d:Rank 0: Completed store-based barrier for key:store_based_barrier_key:1 with 2 nodes.\n"
        assert head_id(log) == "-"

    def test_sibling_a_client_that_cannot_reach_the_store_is_a_connect_timeout(self):
        log = ("TimeoutError: The client socket has timed out after 1800s while trying to connect to (127.0.0.1, 48391).\n")
        assert head_id(log) == "store-connect-timeout"

    def test_sibling_the_port_already_bound(self):
        log = ("RuntimeError: The server socket has failed to listen on any local network address. The server socket has failed "
               "to bind to [::]:29500 (errno: 98 - Address already in use). The server socket has failed to bind to "
               "0.0.0.0:29500 (errno: 98 - Address already in use).\n")
        assert head_id(log) == "store-address-in-use"


class TestStoreConnectTimeout:
    def test_control_a_family_not_supported_retry_is_no_timeout(self):
        log = ("[W socket.cpp:697] [c10d] The client socket has failed to connect to [localhost]:29500 "
               "(errno: 97 - Address family not supported by protocol).\nstep 1 loss 0.3\n")
        assert "store-connect-timeout" not in ids(log)

    def test_sibling_the_client_timing_out(self):
        log = ("[E616 02:08:15.931416442 socket.cpp:1023] [c10d] The client socket has timed out after 600000ms while trying "
               "to connect to (172.17.0.9, 50437).\n")
        assert head_id(log) == "store-connect-timeout"


class TestRendezvousTimeout:
    def test_control_a_connection_error_is_not_a_timeout(self):
        log = "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has failed.\n"
        assert "rendezvous-timeout" not in ids(log)

    def test_sibling_the_rendezvous_timing_out(self):
        assert "rendezvous-timeout" in ids(TB + "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError\n")


class TestLauncherEnvMissing:
    def test_control_the_variables_printed_in_a_healthy_log(self):
        log = "MASTER_ADDR=10.0.0.1 MASTER_PORT=29500 RANK=0 WORLD_SIZE=2\nstep 1 loss 0.9\n"
        assert "launcher-env-missing" not in ids(log)

    def test_sibling_rank_not_set(self):
        log = ("ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable RANK expected, "
               "but not set\n")
        assert head_id(log) == "launcher-env-missing"


class TestPgNotInitialized:
    def test_control_the_pg_not_destroyed_warning_at_exit_is_harmless(self):
        log = ("[rank0]:[W530 08:34:35.154236112 ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has NOT been "
               "destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should call "
               "destroy_process_group to ensure that any pending NCCL operations have finished in this process.\n")
        assert head_id(log) == "-" and "pg-not-destroyed" in ids(log)

    def test_sibling_the_group_never_initialised(self):
        log = TB + "RuntimeError: Default process group has not been initialized, please make sure to call init_process_group.\n"
        assert head_id(log) == "pg-not-initialized"


class TestPgNotDestroyed:
    def test_control_a_group_never_initialised_is_an_error_not_this_notice(self):
        log = "RuntimeError: Default process group has not been initialized, please make sure to call init_process_group.\n"
        assert "pg-not-destroyed" not in ids(log)

    def test_sibling_the_exit_warning(self):
        log = ("[rank0]:[W530 08:34:35.154236112 ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has NOT been "
               "destroyed before we destruct ProcessGroupNCCL.\n")
        [f] = [f for f in api.diagnose(log).findings if f.id == "pg-not-destroyed"]
        assert f.severity is Severity.INFO


class TestLauncherOmpThreads:
    def test_control_the_user_setting_the_variable_is_not_the_banner(self):
        assert "launcher-omp-threads" not in ids("export OMP_NUM_THREADS=8\nstep 1 loss 0.5\n")

    def test_sibling_torchruns_banner_is_harmless(self):
        log = ("W0219 12:09:28.313000 140145133409408 torch/distributed/run.py:757] Setting OMP_NUM_THREADS environment variable "
               "for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable "
               "for optimal performance in your application as needed.\n")
        [f] = [f for f in api.diagnose(log).findings if f.id == "launcher-omp-threads"]
        assert f.severity is Severity.INFO and head_id(log) == "-"


class TestLauncherDeprecatedLaunch:
    def test_control_torchrun_itself_is_not_deprecated(self):
        assert "launcher-deprecated-launch" not in ids("+ torchrun --nproc_per_node=2 train.py\nstep 1 loss 0.5\n")

    def test_sibling_the_launch_deprecation_is_a_warning_not_the_failure(self):
        log = ("/usr/local/lib/python3.10/dist-packages/torch/distributed/launch.py:183: FutureWarning: The module "
               "torch.distributed.launch is deprecated\n")
        assert "launcher-deprecated-launch" in ids(log) and head_id(log) == "-"


class TestLauncherSigkill:
    def test_control_exitcode_minus_one_is_no_sigkill(self):
        assert "launcher-sigkill" not in ids("exitcode  : -1 (pid: 123)\n")

    def test_sibling_the_oom_killer_explains_the_sigkill(self):
        log = ("Out of memory: Killed process 2630 (python) total-vm:98765432kB, anon-rss:65432100kB, file-rss:0kB, shmem-rss:0kB\n"
               "E0325 20:57:27.620000 2606 site-packages/torch/distributed/elastic/multiprocessing/api.py:869] failed "
               "(exitcode: -9) local_rank: 5 (pid: 2630) of binary: /root/miniconda3/bin/python\n")
        assert head_id(log) == "host-oom-killer"

    def test_sibling_signal_9_alone(self):
        assert head_id("  traceback : Signal 9 (SIGKILL) received by PID 14750\n") == "launcher-sigkill"


class TestTorchrunChildFailed:
    def test_control_a_worker_group_that_finished_is_healthy(self):
        log = "INFO:torch.distributed.elastic.agent.server.api:[default] worker group successfully finished. Waiting 300 seconds for other agents to finish.\n"
        assert head_id(log) == "-"

    def test_sibling_the_cause_above_leads(self):
        log = (TB + "RuntimeError: CUDA error: invalid device ordinal\n"
               "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n")
        got = ids(log)
        assert head_id(log) == "cuda-invalid-device-ordinal" and "torchrun-child-failed" in got


class TestNcclUnhandledSystemError:
    def test_control_nccl_version_line_is_healthy(self):
        assert head_id("NCCL version 2.18.1+cuda12.1\nstep 1 loss 0.5\n") == "-"

    def test_sibling_an_unhandled_cuda_error_is_its_own(self):
        log = ("RuntimeError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, "
               "unhandled cuda error, NCCL version 2.14.3\n")
        assert head_id(log) == "nccl-unhandled-cuda-error"

    def test_sibling_the_system_error(self):
        log = ("RuntimeError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, "
               "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1\n")
        assert head_id(log) == "nccl-unhandled-system-error"


class TestNcclUnhandledCudaError:
    def test_control_the_system_error_is_not_a_cuda_error(self):
        log = "RuntimeError: NCCL Error 2: unhandled system error\n"
        assert head_id(log) != "nccl-unhandled-cuda-error"

    def test_sibling_an_oom_behind_it_leads(self):
        log = ("RuntimeError: CUDA error: out of memory\n"
               "RuntimeError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, "
               "unhandled cuda error, NCCL version 2.14.3\n")
        assert head_id(log) == "cuda-oom"


class TestNcclInvalidUsage:
    def test_control_a_remote_error_is_not_invalid_usage(self):
        log = ("torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, "
               "remote process exited or there was a network error, NCCL version 2.21.5\n")
        assert head_id(log) != "nccl-invalid-usage"

    def test_sibling_the_invalid_usage(self):
        log = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, invalid "
               "usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.20.5\n")
        assert head_id(log) == "nccl-invalid-usage"


class TestNcclRemoteError:
    def test_control_invalid_usage_is_not_a_remote_error(self):
        log = "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n"
        assert "nccl-remote-error" not in ids(log)

    def test_sibling_a_peer_crash_explains_the_remote_error(self):
        log = ("RuntimeError: CUDA error: an illegal memory access was encountered\n"
               "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, "
               "remote process exited or there was a network error, NCCL version 2.21.5\n")
        assert head_id(log) == "cuda-illegal-memory-access" and "nccl-remote-error" in ids(log)


class TestNcclSocketIfname:
    def test_control_nccl_choosing_its_interface_is_healthy(self):
        log = "node1:1958:1958 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0\nnode1:1958:1958 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
        assert "nccl-socket-ifname" not in ids(log)

    def test_sibling_no_interface_found(self):
        assert head_id("node1:1958:1958 [3] NCCL WARN Bootstrap : no socket interface found\n") == "nccl-socket-ifname"


class TestNcclPeerClosed:
    def test_control_nccl_info_connection_lines_are_healthy(self):
        log = "node1:183006:183181 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/CUMEM/read\n"
        assert "nccl-peer-closed" not in ids(log)

    def test_sibling_a_peer_that_closed(self):
        log = ("a100-st-p4d24xlarge-22:183006:183181 [1] misc/socket.cc:538 NCCL WARN Net : Connection closed by remote peer "
               "a100-st-p4d24xlarge-22.pcluster<47861>\n")
        assert "nccl-peer-closed" in ids(log)


class TestGlooPeerClosed:
    def test_control_the_store_closing_at_a_normal_exit_is_harmless(self):
        log = ("[W TCPStore.cpp:106] [c10d] recvValue failed on SocketImpl(fd=3, addr=[localhost]:29500): "
               "Connection reset by peer\n")
        assert "gloo-peer-closed" not in ids(log)

    def test_sibling_gloos_pair_closed(self):
        log = "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [172.28.0.12]:14004\n"
        assert "gloo-peer-closed" in ids(log)


class TestCudaDevicesBusy:
    def test_control_invalid_ordinal_is_not_busy(self):
        assert head_id("RuntimeError: CUDA error: invalid device ordinal\n") != "cuda-devices-busy"

    def test_sibling_the_busy_devices(self):
        assert head_id("RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable\n") == "cuda-devices-busy"


class TestStateDictMismatch:
    def test_control_a_corrupt_checkpoint_is_its_own_verdict(self):
        assert head_id("RuntimeError: storage has wrong size: expected -4669315570785868528 got 512\n") == "checkpoint-corrupt"

    def test_sibling_the_state_dict_that_does_not_fit(self):
        log = "RuntimeError: Error(s) in loading state_dict for DTNet:\n\tMissing key(s) in state_dict: \"fc.weight\".\n"
        assert head_id(log) == "state-dict-mismatch"


class TestNvmlDriverMismatch:
    def test_control_a_healthy_smi_banner(self):
        log = "| NVIDIA-SMI 525.85.12    Driver Version: 525.85.12    CUDA Version: 12.0     |\n"
        assert "nvml-driver-mismatch" not in ids(log)

    def test_sibling_no_devices_found_is_the_gpu_lost(self):
        assert head_id("$ nvidia-smi\nNo devices were found\n") != "nvml-driver-mismatch"

    def test_sibling_the_mismatch(self):
        assert head_id("Failed to initialize NVML: Driver/library version mismatch\n") == "nvml-driver-mismatch"


class TestSlurmTimeLimit:
    def test_control_the_time_limit_printed_at_submission_is_healthy(self):
        assert "slurm-time-limit" not in ids("#SBATCH --time=24:00:00\nsrun: job 123456 queued and waiting for resources\nstep 1 loss 0.5\n")

    def test_sibling_a_preemption_is_not_the_time_limit(self):
        log = "slurmstepd: error: *** JOB 37361369 ON learnfair5146 CANCELLED AT 2021-03-15T18:00:46 DUE TO PREEMPTION ***\n"
        assert head_id(log) == "slurm-preempted"

    def test_sibling_the_time_limit(self):
        log = "slurmstepd: error: *** JOB 494583 ON node1 CANCELLED AT 2024-04-20T09:09:37 DUE TO TIME LIMIT ***\n"
        assert head_id(log) == "slurm-time-limit"


class TestSlurmPreempted:
    def test_control_the_time_limit_is_not_a_preemption(self):
        log = "slurmstepd: error: *** JOB 494583 ON node1 CANCELLED AT 2024-04-20T09:09:37 DUE TO TIME LIMIT ***\n"
        assert head_id(log) != "slurm-preempted"

    def test_sibling_a_requeue(self):
        log = "slurmstepd: error: *** STEP 608.0 ON SERVER_NAME CANCELLED AT 2022-08-12T02:06:12 DUE TO JOB REQUEUE ***\n"
        assert head_id(log) == "slurm-preempted"


class TestCudaNoGpusVisible:
    def test_control_no_driver_is_its_own_verdict(self):
        log = ("RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed "
               "a driver from http://www.nvidia.com/Download/index.aspx\n")
        assert head_id(log) == "cuda-no-driver"

    def test_sibling_no_gpu_visible(self):
        assert head_id(TB + "RuntimeError: No CUDA GPUs are available\n") == "cuda-no-gpus-visible"


class TestCudaNoDriver:
    def test_control_no_gpus_visible_is_not_a_missing_driver(self):
        assert head_id("RuntimeError: CUDA error: no CUDA-capable device is detected\n") != "cuda-no-driver"

    def test_sibling_no_driver(self):
        log = "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver\n"
        assert head_id(log) == "cuda-no-driver"


class TestCudaLibraryMissing:
    def test_control_a_missing_opengl_library_is_not_cuda(self):
        assert head_id("ImportError: libGL.so.1: cannot open shared object file: No such file or directory\n") != "cuda-library-missing"

    def test_control_torchvisions_image_extension_warning(self):
        log = ("/site-packages/torchvision/io/image.py:13: UserWarning: Failed to load image Python extension: "
               "libtorch_cuda_cu.so: cannot open shared object file: No such file or directory\n")
        assert "cuda-library-missing" not in ids(log)

    def test_sibling_the_cuda_runtime_missing(self):
        log = "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory\n"
        assert head_id(log) == "cuda-library-missing"


class TestLauncherSigbus:
    def test_control_a_worker_bus_error_names_shared_memory(self):
        log = ("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\n"
               "  traceback : Signal 7 (SIGBUS) received by PID 4242\n")
        assert head_id(log) == "dataloader-shm-bus-error"

    def test_sibling_sigbus_alone(self):
        assert head_id("  traceback : Signal 7 (SIGBUS) received by PID 4242\n") == "launcher-sigbus"


class TestLauncherSigabrt:
    def test_control_sigbus_is_not_an_abort(self):
        assert "launcher-sigabrt" not in ids("  traceback : Signal 7 (SIGBUS) received by PID 4242\n")

    def test_sibling_an_ecc_error_behind_the_abort_leads(self):
        log = ("RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
               "  traceback : Signal 6 (SIGABRT) received by PID 80746\n")
        assert head_id(log) == "cuda-ecc-error" and "launcher-sigabrt" in ids(log)


class TestNvidiaXid:
    def test_control_an_nvrm_version_line_is_healthy(self):
        log = "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n"
        assert "nvidia-xid" not in ids(log)

    def test_sibling_a_gpu_fallen_off_the_bus(self):
        assert head_id("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.\n") == "nvidia-xid"


class TestCudaEccError:
    def test_control_an_illegal_access_is_not_ecc(self):
        assert head_id("RuntimeError: CUDA error: an illegal memory access was encountered\n") != "cuda-ecc-error"

    def test_sibling_the_uncorrectable_ecc_error(self):
        assert head_id("RuntimeError: CUDA error: uncorrectable ECC error encountered\n") == "cuda-ecc-error"


class TestRendezvousConnectionFailed:
    def test_control_a_rendezvous_timeout_is_not_a_failed_connection(self):
        assert "rendezvous-connection-failed" not in ids("torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError\n")

    def test_sibling_the_store_connection_failing(self):
        log = ("torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has "
               "failed. See inner exception for details.\n")
        assert "rendezvous-connection-failed" in ids(log)


class TestNcclDuplicateGpu:
    def test_control_distinct_devices_in_nccl_info(self):
        log = "".join(f"node1:100:100 [{r}] NCCL INFO Init COMPLETE comm 0x5 rank {r} nranks 2 cudaDev {r} busId {r}000\n" for r in range(2))
        assert "nccl-duplicate-gpu" not in ids(log)

    def test_sibling_two_ranks_on_one_gpu(self):
        log = "Duplicate GPU detected : rank 3 and rank 0 both on CUDA device f000\n"
        assert head_id(log) == "nccl-duplicate-gpu"


class TestStoreHostUnresolvable:
    def test_control_a_family_warning_is_not_a_name_lookup(self):
        log = ("[W socket.cpp:697] [c10d] The client socket has failed to connect to [localhost]:29500 "
               "(errno: 97 - Address family not supported by protocol).\n")
        assert "store-host-unresolvable" not in ids(log)

    def test_sibling_the_master_name_unknown(self):
        log = ("[W socket.cpp:601] [c10d] The IPv4 network addresses of (gpu-master, 29500) cannot be retrieved "
               "(gai error: -2 - Name or service not known).\n")
        assert "store-host-unresolvable" in ids(log)


class TestNcclSocketConnect:
    def test_control_a_retry_that_is_still_retrying(self):
        assert head_id("worker:101542:101934 [0] NCCL INFO Call to connect returned Connection timed out, retrying\n") == "-"

    def test_sibling_no_route_is_its_own_verdict(self):
        log = "ps-8:795:822 [0] include/socket.h:409 NCCL WARN Net : Connect to 192.168.1.9<54263> failed : No route to host\n"
        assert head_id(log) == "network-no-route"

    def test_sibling_connect_failed(self):
        log = "gpu-bql-144-103:18553:18611 [0] include/socket.h:360 WARN Call to connect failed : Connection timed out\n"
        assert head_id(log) == "nccl-socket-connect"


class TestNetworkNoRoute:
    def test_control_a_retry_not_yet_exhausted(self):
        log = ("zgiot:1183664:1184669 [0] NCCL INFO socketPollConnect: connect returned No route to host, retrying (26/34) "
               "after sleep for 2600 msec\n")
        assert "network-no-route" not in ids(log)

    def test_sibling_the_last_retry(self):
        log = ("zgiot:1183664:1184669 [0] NCCL INFO socketPollConnect: connect returned No route to host, retrying (34/34) "
               "after sleep for 3400 msec\n")
        assert "network-no-route" in ids(log)


class TestDdpWrapperAttribute:
    def test_control_a_users_own_class_missing_an_attribute(self):
        log = TB + "AttributeError: 'Config' object has no attribute 'lr'\n"
        assert head_id(log) == "python-exception"

    def test_sibling_the_ddp_wrapper_hiding_the_method(self):
        assert head_id(TB + "AttributeError: 'DistributedDataParallel' object has no attribute 'generate'\n") == "ddp-wrapper-attribute"


class TestPythonException:
    def test_control_a_user_warning_is_no_exception(self):
        assert head_id("UserWarning: this is only a warning: nothing failed\n") == "-"

    def test_sibling_an_nccl_error_is_nccls_not_pythons(self):
        assert head_id("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, invalid argument\n") != "python-exception"

    def test_sibling_a_missing_data_file_is_the_path_class(self):
        # a path the job opens that does not exist: its class rule names the path and why (classes.py path-not-found)
        log = TB + "FileNotFoundError: [Errno 2] No such file or directory: '/data/train/shard-00017.parquet'\n"
        assert head_id(log) == "path-not-found"

    def test_sibling_a_key_missing_in_the_users_data(self):
        assert head_id(TB + "KeyError: 'input_ids'\n") == "python-exception"


# -- class rules of issue 35 item 4 (families of the sampled corpus) -----------------------------

ZERO3_FRAMES = (
    "Traceback (most recent call last):\n"
    '  File "/root/miniconda3/envs/open/lib/python3.11/site-packages/deepspeed/runtime/zero/parameter_offload.py", line 351, in _end_of_forward_hook\n'
    "    self.get_param_coordinator(training=False).reset_step()\n"
    '  File "/root/miniconda3/envs/open/lib/python3.11/site-packages/deepspeed/runtime/zero/partitioned_param_coordinator.py", line 204, in reset_step\n'
    '    raise RuntimeError(f"still have inflight params "\n'
)


class TestZero3RanksDiverged:
    def test_control_deepspeeds_own_zero3_start_up_lines(self):
        log = ("[2024-06-03 10:01:02,003] [INFO] [partition_parameters.py:345:__exit__] finished initializing model - "
               "num_params = 723, num_elems = 70.55B\n"
               "[2024-06-03 10:01:05,120] [INFO] [config.py:1000:print]   zero_optimization_stage ...... 3\n")
        assert "zero3-ranks-diverged" not in ids(log)

    def test_control_a_users_own_check_that_ranks_agree(self):
        log = TB + "AssertionError: rank0 and rank2 disagree on the number of batches\n"
        assert "zero3-ranks-diverged" not in ids(log)

    def test_sibling_the_trace_check_failing(self):
        log = ("RuntimeError: disagreement between rank0 and rank2: rank0: [-4866073977605047075, -4957833660337767236, "
               "4361942804416314505], rank2: [2, 3, 4, 6, 34, 7, 8, 10]\n")
        assert head_id(log) == "zero3-ranks-diverged"

    def test_sibling_inflight_params_at_the_end_of_a_forward(self):
        log = ZERO3_FRAMES + ("RuntimeError: still have inflight params [{'id': 723, 'status': 'AVAILABLE', 'numel': 4194304, "
                              "'ds_numel': 4194304, 'shape': (512, 8192), 'ds_shape': (512, 8192)\n")
        assert head_id(log) == "zero3-ranks-diverged"

    def test_sibling_zero3s_grads_on_two_devices_is_a_device_mismatch(self):
        log = ("Traceback (most recent call last):\n"
               '  File "/usr/lib/python3/dist-packages/deepspeed/runtime/zero/stage3.py", line 2117, in unscale_and_clip_grads\n'
               "    self.fp32_partitioned_groups_flat[sub_group_id].grad.mul_(1. / combined_scale)\n"
               "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:1 and cpu!\n")
        assert head_id(log) not in ("zero3-ranks-diverged", "-")


class TestCudaPeerMappingsExhausted:
    def test_control_nccl_using_p2p_is_healthy(self):
        log = "node1:2201:2290 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM\nstep 10 loss 1.92\n"
        assert "cuda-peer-mappings-exhausted" not in ids(log)

    def test_sibling_peer_access_unsupported_is_its_own_verdict(self):
        log = "RuntimeError: CUDA error: peer access is not supported between these two devices\n"
        assert head_id(log) == "cuda-peer-access-unsupported"

    def test_sibling_the_cuda_error_with_torchs_advice_under_it(self):
        log = ("RuntimeError: CUDA error: peer mapping resources exhausted\n"
               "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
               "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n")
        assert head_id(log) == "cuda-peer-mappings-exhausted"


class TestSystemLibraryTooOld:
    def test_control_the_user_checking_their_glibc(self):
        log = "$ ldd --version\nldd (GNU libc) 2.28\n$ strings /lib64/libc.so.6 | grep GLIBC_2.2\nGLIBC_2.27\nGLIBC_2.28\n"
        assert "system-library-too-old" not in ids(log)

    def test_control_an_optional_kernel_that_falls_back(self):
        log = ("UserWarning: Failed to load the fused Adam kernel: /lib64/libm.so.6: version `GLIBC_2.29' not found; "
               "using the PyTorch implementation\n")
        assert "system-library-too-old" not in ids(log)

    def test_sibling_a_missing_cuda_library_is_its_own_verdict(self):
        log = "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory\n"
        assert head_id(log) == "cuda-library-missing"

    def test_sibling_a_prebuilt_extension_needing_a_newer_glibc(self):
        log = ("Traceback (most recent call last):\n"
               '  File "/root/anaconda3/envs/colos/lib/python3.9/site-packages/colossalai/kernel/__init__.py", line 4, in <module>\n'
               "    from colossalai._C import fused_optim\n"
               "ImportError: /lib64/libm.so.6: version `GLIBC_2.29' not found (required by "
               "/root/anaconda3/envs/colos/lib/python3.9/site-packages/colossalai/_C/fused_optim.cpython-39-x86_64-linux-gnu.so)\n")
        assert head_id(log) == "system-library-too-old"

    def test_sibling_an_older_libstdcxx_loaded_first(self):
        log = ("ImportError: /usr/lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.29' not found "
               "(required by /opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_python.so)\n")
        assert head_id(log) == "system-library-too-old"


NCCL_ID_FRAMES = (
    "[rank2]: frame #4: c10d::TCPStore::get(std::string const&) + 0x7a (0x7fdfeab5883a in /x/torch/lib/libtorch_cpu.so)\n"
    "[rank2]: frame #5: c10d::PrefixStore::get(std::string const&) + 0x31 (0x7fdfeab08bc1 in /x/torch/lib/libtorch_cpu.so)\n"
    "[rank2]: frame #9: c10d::ProcessGroupNCCL::broadcastUniqueNCCLID(ncclUniqueId*, bool, std::string const&, int) + 0xaf "
    "(0x7fdfb0e29b8f in /x/torch/lib/libtorch_cuda.so)\n"
    "[rank2]: frame #10: c10d::ProcessGroupNCCL::getNCCLComm(std::string const&, c10::Device&, c10d::OpType, int, bool) + 0xfbd "
    "(0x7fdfb0e35b2d in /x/torch/lib/libtorch_cuda.so)\n"
)


class TestNcclUniqueIdExchangeFailed:
    def test_control_a_store_get_frame_of_another_call(self):
        log = ("[rank1]: frame #4: c10d::TCPStore::get(std::string const&) + 0x7a (0x7fdfeab5883a in /x/torch/lib/libtorch_cpu.so)\n"
               "[rank1]: frame #5: c10d::PrefixStore::get(std::string const&) + 0x31 (0x7fdfeab08bc1 in /x/torch/lib/libtorch_cpu.so)\n")
        assert "nccl-unique-id-exchange-failed" not in ids(log)

    def test_sibling_the_full_message_says_socket_timeout(self):
        log = ("torch.distributed.DistBackendError: [3] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via "
               "c10d key-value store by key '0', but store->get('0') got error: Socket Timeout\n")
        assert head_id(log) == "store-socket-timeout"

    def test_sibling_only_the_backtrace_of_the_get(self):
        assert head_id(NCCL_ID_FRAMES) == "nccl-unique-id-exchange-failed"

    def test_sibling_rank_0s_own_error_heads_the_story(self):
        log = "[rank0]: " + TB.replace("\n", "\n[rank0]: ", 2) + "[rank0]: KeyError: 'input_ids'\n" + NCCL_ID_FRAMES
        assert head_id(log) == "python-exception"


class TestLauncherChildExitReports:
    verdict = "launcher-child-exit"

    def test_control_the_spawned_processs_own_error_heads_the_story(self):
        log = ("Traceback (most recent call last):\n"
               '  File "/opt/conda/lib/python3.7/site-packages/torch/multiprocessing/spawn.py", line 119, in join\n'
               "    raise Exception(msg)\n"
               "Exception: \n\n"
               "-- Process 0 terminated with the following error:\n"
               "Traceback (most recent call last):\n"
               '  File "/opt/conda/lib/python3.7/site-packages/torch/multiprocessing/spawn.py", line 20, in _wrap\n'
               "    fn(i, *args)\n"
               '  File "/home/u/train.py", line 41, in main\n'
               "    batch = data['input_ids']\n"
               "KeyError: 'input_ids'\n")
        assert head_id(log) == "python-exception"

    def test_sibling_old_torchs_spawn_report_alone(self):
        assert head_id("Exception: process 1 terminated with exit code 1\n") == "launcher-child-exit"

    def test_sibling_mp_spawn_wrapping_a_launchers_subprocess(self):
        log = ("Traceback (most recent call last):\n"
               '  File "/opt/conda/lib/python3.7/site-packages/torch/multiprocessing/spawn.py", line 119, in join\n'
               "    raise Exception(msg)\n"
               "Exception: \n\n"
               "-- Process 0 terminated with the following error:\n"
               "Traceback (most recent call last):\n"
               '  File "/opt/conda/lib/python3.7/site-packages/torchelastic/distributed/launch.py", line 401, in wrapper_fn\n'
               "    raise subprocess.CalledProcessError(returncode=process.returncode, cmd=cmd)\n"
               "subprocess.CalledProcessError: Command '['/opt/conda/bin/python', '-u', '/workspace/script.py']' returned non-zero exit status 1.\n")
        assert head_id(log) == "launcher-child-exit"

    def test_sibling_the_exception_glued_to_its_source_line(self):
        log = ("    raise CalledProcessError(retcode, process.args, subprocess.CalledProcessError: Command '['torchrun', '--nnodes', '1', "
               "'--nproc_per_node', '2', '/LLaMA-Factory/src/llamafactory/launcher.py', 'config/qwen_vl.yaml']' returned non-zero exit status 1.\n")
        found = api.diagnose(log).findings
        assert found[0].id == "launcher-child-exit" and "failing rank's own error" in found[0].fix


WATCHDOG = ("[E ProcessGroupNCCL.cpp:587] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(OpType=BROADCAST, "
            "Timeout(ms)=1800000) ran for 1802157 milliseconds before timing out.\n")


class TestNcclWatchdogTimeoutSurfacing:
    verdict = "nccl-watchdog-timeout"

    def test_control_a_real_error_in_user_code_still_heads(self):
        log = WATCHDOG + TB + "KeyError: 'input_ids'\n"
        assert head_id(log) == "python-exception"

    def test_sibling_the_timed_out_ranks_cut_traceback(self):
        log = (WATCHDOG + "Traceback (most recent call last):\n"
               ' File "scripts/training_test.py", line 172, in <module>\n   main(args)\n'
               ' File "/anaconda/envs/t/lib/python3.8/site-packages/tqdm/std.py", line 1168, in __iter__\n')
        assert head_id(log) == "nccl-watchdog-timeout"

    def test_sibling_the_nccl_error_the_aborted_communicator_raises(self):
        log = (WATCHDOG + TB + '  File "/opt/conda/lib/python3.7/site-packages/torch/autograd/__init__.py", line 149, in backward\n'
               "    allow_unreachable=True, accumulate_grad=True)\n"
               "RuntimeError: NCCL error in: /opt/conda/conda-b\n")
        assert head_id(log) == "nccl-watchdog-timeout"


class TestUnrecognisedFailureApiShape:
    verdict = "unrecognised-failure"

    def test_control_an_error_that_is_no_api_shape_gets_no_version_advice(self):
        found = api.diagnose("KeyError: 'input_ids'\n").findings
        assert found[0].id == "unrecognised-failure" and "do not go together" not in found[0].fix

    def test_sibling_an_api_shape_error_without_its_traceback(self):
        # the message alone decides its class (diagB19, knowledge/api_shape.py): library-api-mismatch, whose frame not shown
        found = api.diagnose("TypeError: BatchEncoding.to() got an unexpected keyword argument 'non_blocking'\n").findings
        assert found[0].id == "library-api-mismatch" and "BatchEncoding.to() takes no keyword argument non_blocking" in found[0].why

    def test_sibling_a_missing_attribute_without_its_traceback_is_the_class_rule(self):
        found = api.diagnose("AttributeError: 'AdamW' object has no attribute 'train'\n").findings
        assert found[0].id == "library-api-mismatch" and found[0].evidence["raised_by"].startswith("not shown")
        assert "find the package that defines AdamW" in found[0].fix

    def test_sibling_with_the_librarys_frame_it_is_the_class_rule(self):
        log = ("Traceback (most recent call last):\n"
               '  File "/usr/local/lib/python3.10/dist-packages/accelerate/commands/launch.py", line 562, in multi_gpu_launcher\n'
               '    if getattr(args, "same_network"):\n'
               "AttributeError: 'Namespace' object has no attribute 'same_network'\n")
        assert head_id(log) == "library-api-mismatch"


class TestSettingsCombinationRefused:
    def test_control_a_fallback_warning_is_no_refusal(self):
        log = "UserWarning: fused=True is not supported with foreach=True; falling back to the for-loop implementation\nstep 1 loss 2.1\n"
        assert "settings-combination-refused" not in ids(log)

    def test_sibling_bf16_on_an_old_gpu_is_its_own_verdict(self):
        log = ("ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has "
               "compute capability 7.5.\n")
        assert head_id(log) == "bf16-unsupported-gpu"

    def test_sibling_a_recipe_refusing_an_option_without_fsdp(self):
        log = ('[rank1]:   File "/home/u/torchtune/recipes/full_finetune_distributed.py", line 184, in __init__\n'
               "[rank1]:     raise ValueError(\n"
               "[rank1]: ValueError: ``minimize_all_reduces`` is not supported without FSDP\n")
        assert head_id(log) == "settings-combination-refused"

    def test_sibling_an_engine_refusing_an_option_a_trainer_passed(self):
        log = "(TaskRunner pid=79449) ValueError: `disable_mm_preprocessor_cache` is only supported for multimodal models.\n"
        assert head_id(log) == "settings-combination-refused"


class TestLauncherHostfileMalformed:
    def test_control_the_runner_reading_a_good_hostfile(self):
        log = ("[2023-06-01 10:00:00,000] [INFO] [runner.py:607:main] Using IP address of 10.0.0.1 for node worker-0\n"
               "[2023-06-01 10:00:00,001] [INFO] [multinode_runner.py:70:get_cmd] Running on the following workers: worker-0,worker-1\n")
        assert "launcher-hostfile-malformed" not in ids(log)

    def test_sibling_a_host_the_launcher_cannot_reach_is_its_own_verdict(self):
        log = ("subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no 192.168.3.100 hostname' "
               "returned non-zero exit status 255.\n")
        assert head_id(log) == "deepspeed-host-unreachable-ssh"

    def test_sibling_a_misspelt_slots(self):
        log = "ValueError: Hostfile contains a bad entry: {line}, unable to proceed with launching\n"
        found = api.diagnose(log).findings
        assert found[0].id == "launcher-hostfile-malformed" and "slots=N" in found[0].fix


class TestPgNotInitializedOldWording:
    verdict = "pg-not-initialized"

    def test_control_a_process_group_that_started(self):
        log = "INFO: process group initialized: backend=nccl, world_size=8\nstep 1 loss 2.0\n"
        assert "pg-not-initialized" not in ids(log)

    def test_sibling_torch_04s_ddp_without_a_process_group(self):
        assert head_id("AssertionError: collective only supported in process-group mode\n") == "pg-not-initialized"


class TestUnrecognisedFailureLauncherFrames:
    verdict = "unrecognised-failure"

    def test_control_a_cut_traceback_in_the_users_code_is_theirs(self):
        log = ('Traceback (most recent call last):\n  File "nlp_example.py", line 193, in <module>\n    main()\n'
               '  File "nlp_example.py", line 100, in training_function\n    raise Val\n')
        fix = api.diagnose(log).findings[0].fix
        assert "(your code)" in fix and "torchrun's own" not in fix

    def test_sibling_a_cut_traceback_in_torchruns_console_script(self):
        log = ("I0213 12:07:20.087000 870572 torch/distributed/elastic/agent/server/api.py:677] [default] Rendezvous'ing worker group\n"
               "Traceback (most recent call last):\n"
               '  File "/home/u/.pyenv/versions/venv311/bin/torchrun", line 8, in <module>\n    sys.exit(main())\n')
        fix = api.diagnose(log).findings[0].fix
        assert "torchrun's own" in fix and "RendezvousClosedError" in fix and "(your code)" not in fix

    def test_sibling_a_cut_traceback_in_the_etcd_rendezvous(self):
        log = ("Traceback (most recent call last):\n"
               '  File "/x/lib/python3.9/site-packages/torch/distributed/elastic/agent/server/api.py", line 538, in _rendezvous\n'
               "    store, group_rank, group_world_size = spec.rdzv_handler.next_rendezvous()\n"
               '  File "/x/lib/python3.9/site-packages/torch/distributed/elastic/rendezvous/etcd_rendezvous.py", line 152, in next_rendezvous\n')
        found = api.diagnose(log).findings
        assert found[0].id == "unrecognised-failure" and "torchrun's own" in found[0].fix


class TestNcclPeerClosedOldWording:
    verdict = "nccl-peer-closed"

    def test_control_a_connect_retry_is_no_lost_peer(self):
        log = "node0:13571:13600 [0] NCCL INFO Call to connect returned Connection refused, retrying\nstep 1 loss 2.0\n"
        assert "nccl-peer-closed" not in ids(log)

    def test_sibling_nccl_before_2_12_not_naming_the_peer(self):
        log = ("Genc-A100-VM:36759:36970 [0] include/socket.h:421 NCCL WARN Call to recv failed : Connection reset by peer\n"
               "Genc-A100-VM:36759:36970 [0] NCCL INFO transport/net_ib.cc:593 -> 2\n")
        assert head_id(log) == "nccl-peer-closed"


class TestDdpDeviceMismatchOldWording:
    verdict = "ddp-device-mismatch"

    def test_control_a_device_printed_at_start(self):
        log = "(BackendExecutor pid=5631) Moving model to device: cuda:1\n(BackendExecutor pid=5631) epoch 0 loss 0.71\n"
        assert "ddp-device-mismatch" not in ids(log)

    def test_sibling_torch_1x_naming_two_device_numbers(self):
        log = ("(BackendExecutor pid=5631) RuntimeError: Expected tensor for 'out' to have the same device as tensor for argument #2 "
               "'mat1'; but device 1 does not equal 3 (while checking arguments for addmm)\n")
        assert head_id(log) == "ddp-device-mismatch"


class TestSpawnUnpicklableObject:
    def test_control_a_deep_copy_that_cannot_pickle_state(self):
        log = TB + "TypeError: cannot pickle 'generator' object\n"
        assert "spawn-unpicklable-object" not in ids(log)

    def test_sibling_a_spawn_outside_the_main_guard_is_its_own_verdict(self):
        log = ("RuntimeError: An attempt has been made to start a new process before the current process has finished its "
               "bootstrapping phase.\n")
        assert head_id(log) == "spawn-main-guard"

    def test_sibling_a_librarys_local_hook_sent_to_a_worker(self):
        log = "AttributeError: Can't get local object 'AutoModelForCausalLMWithValueHead.post_init.<locals>.set_device_hook'\n"
        assert head_id(log) == "spawn-unpicklable-object"

    def test_sibling_a_lambda_given_to_mp_spawn(self):
        log = ("_pickle.PicklingError: Can't pickle <function <lambda> at 0x7f3a2c1d0e50>: attribute lookup <lambda> on "
               "__main__ failed\n")
        assert head_id(log) == "spawn-unpicklable-object"


class TestStoreSocketTimeoutOldWording:
    verdict = "store-socket-timeout"

    def test_control_a_timeout_setting_is_no_timeout(self):
        log = "INFO: Wait timeout for the store set to 300 s\nstep 1 loss 2.0\n"
        assert "store-socket-timeout" not in ids(log)

    def test_sibling_a_gloo_collective_timing_out_is_gloos(self):
        log = "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms for recv operation to complete\n"
        assert head_id(log) == "gloo-collective-timeout"

    def test_sibling_torch_10s_file_store_waiting_for_the_other_rank(self):
        log = (TB + "    dist.init_process_group(rank=0, backend='gloo', init_method='file:///shared/gloo_file', world_size=2)\n"
               "RuntimeError: Wait timeout\n")
        found = api.diagnose(log).findings
        assert found[0].id == "store-socket-timeout" and "file://" in found[0].why


class TestGlooDeviceSetupFailed:
    def test_control_gloo_connected_is_healthy(self):
        log = "[Gloo] Rank 0 is connected to 1 peer ranks. Expected number of connected peer ranks is : 1\nepoch 0 loss 0.9\n"
        assert "gloo-device-setup-failed" not in ids(log)

    def test_sibling_an_interface_name_that_does_not_exist(self):
        log = ("RuntimeError: [enforce fail at /pytorch/third_party/gloo/gloo/transport/tcp/device.cc:83] ifa != nullptr. "
               "Unable to find address for: ib0\n")
        assert head_id(log) == "gloo-no-address"

    def test_sibling_a_socket_call_failing_in_the_set_up(self):
        log = ("terminate called after throwing an instance of 'gloo::EnforceNotMet'\n"
               "  what():  [enforce fail at /pytorch/third_party/gloo/gloo/transport/tcp/device.cc:281] rv != -1. -1\n")
        assert head_id(log) == "gloo-device-setup-failed"


class TestRankUsageError:
    def test_control_a_rank_that_raised_exits_1(self):
        log = "Root Cause (first observed failure):\n[0]:\n  time      : 2023-03-16_22:39:06\n  rank      : 1 (local_rank: 1)\n  exitcode  : 1 (pid: 37881)\n"
        assert "rank-usage-error" not in ids(log)

    def test_sibling_the_refusal_itself_in_the_log_is_the_local_rank_verdict(self):
        log = "train.py: error: unrecognized arguments: --local-rank=1\n  exitcode  : 2 (pid: 37881)\n"
        assert head_id(log) == "launcher-local-rank-arg"

    def test_sibling_torchruns_block_with_exit_status_2(self):
        log = ("Root Cause (first observed failure):\n[1]:\n  time      : 2023-03-16_22:39:06\n  host      : node-01\n"
               "  rank      : 1 (local_rank: 1)\n  exitcode  : 2 (pid: 37881)\n  error_file: <N/A>\n")
        assert head_id(log) == "rank-usage-error"


class TestScriptArgumentsRefused:
    def test_control_the_usage_line_of_help(self):
        log = "usage: train.py [-h] [--output_dir OUTPUT_DIR] [--batch-size BATCH_SIZE]\n"
        assert "script-arguments-refused" not in ids(log)

    def test_sibling_a_launcher_refusing_its_own_flag_is_its_own_verdict(self):
        assert head_id("torchrun: error: unrecognized arguments: --nproc-per-node=1\n") == "launcher-argument-unknown"

    def test_sibling_a_required_argument_pushed_out_by_the_launcher(self):
        found = api.diagnose("train.py: error: the following arguments are required: --output_dir/--output-dir\n").findings
        assert found[0].id == "script-arguments-refused" and "python train.py --help" in found[0].fix


class TestNcclSocketIfnameQuoted:
    verdict = "nccl-socket-ifname"

    def test_control_nccl_bootstrapping_on_an_interface(self):
        log = "node1:1958:1958 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>\nstep 1 loss 2.0\n"
        assert "nccl-socket-ifname" not in ids(log)

    def test_sibling_invalid_usage_alone_is_its_own_verdict(self):
        log = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, invalid usage "
               "(run with NCCL_DEBUG=WARN for details), NCCL version 2.20.5\n")
        assert head_id(log) == "nccl-invalid-usage"

    def test_sibling_the_last_error_line_of_a_double_spaced_paste(self):
        log = ("nexpected error: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:2897, invalid "
               "usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.27.3\n\n"
               "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n\nLast error:\n\n"
               "Bootstrap : no socket interface found\n\n")
        assert head_id(log) == "nccl-socket-ifname"
