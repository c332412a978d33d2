"""Controls and siblings for the rest of the diagnose patterns (issue 34's method), one
class per pattern id: the look-alike that must not get the pattern (an INFO line naming
the same thing, a setting printed at start, the frame of a traceback, the pattern's own
not_examples), and the nearest real failure line that needs another pattern and gets
its own. The lines are real ones (the patterns' sources, tests/fixtures/log_corpus and
tests/fixtures/log_sample/dev); each runs through the whole of `diagnose`."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.findings import Severity
from test_controls_patterns import TB, head_id, ids


def finding(text: str, id: str):
    found = [f for f in api.diagnose(text).findings if f.id == id]
    assert found, f"{id} not in {[f.id for f in api.diagnose(text).findings]}"
    return found[0]


# --- capability: what this GPU, torch build or platform cannot do ---------------------------


class TestFp16NeedsGpu:
    def test_control_fp16_on_a_named_gpu_is_healthy(self):
        assert "fp16-needs-gpu" not in ids("mixed_precision: fp16 (GPU 0: NVIDIA GeForce RTX 3080)\nepoch 1 loss 0.7\n")

    def test_sibling_unscaling_fp16_gradients_is_the_amp_error(self):
        assert head_id("ValueError: Attempting to unscale FP16 gradients.\n") == "amp-unscale-fp16-gradients"

    def test_sibling_no_gpu_for_fp16(self):
        assert head_id(TB + "ValueError: fp16 mixed precision requires a GPU\n") == "fp16-needs-gpu"


class TestAmpUnscaleFp16Gradients:
    def test_control_an_info_line_about_unscaling_is_healthy(self):
        log = "INFO: scaler will unscale FP16 gradients of the fp32 master copy before clipping\nstep 10 loss 1.2\n"
        assert "amp-unscale-fp16-gradients" not in ids(log)

    def test_sibling_fp16_without_a_gpu_is_its_own_verdict(self):
        assert head_id("ValueError: fp16 mixed precision requires a GPU\n") == "fp16-needs-gpu"


class TestGpuCapabilityTooOld:
    def test_control_an_unsupported_cuda_operation_is_not_the_gpus_age(self):
        assert "gpu-capability-too-old" not in ids("RuntimeError: CUDA error: operation not supported\n")

    def test_control_an_old_driver_is_not_an_old_gpu(self):
        log = ("RuntimeError: The NVIDIA driver on your system is too old (found version 10010). Please update your GPU driver by "
               "downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx\n")
        assert head_id(log) == "cuda-driver-too-old"

    def test_sibling_a_build_without_the_gpus_kernels(self):
        assert head_id("RuntimeError: CUDA error: no kernel image is available for execution on the device\n") == "cuda-no-kernel-image"

    def test_sibling_the_capability_refused(self):
        assert head_id("RuntimeError: GPUs with compute capability below 7.0 are not supported.\n") == "gpu-capability-too-old"


class TestRtx4000P2pIbUnsupported:
    def test_control_p2p_channels_in_a_healthy_log(self):
        log = "node0:13572:13572 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via P2P/IPC\nstep 1 loss 2.1\n"
        assert "rtx4000-p2p-ib-unsupported" not in ids(log)

    def test_sibling_peer_access_refused_by_cuda_is_its_own_verdict(self):
        log = "[rank1]: Cuda failure 'peer access is not supported between these two devices'\n"
        assert head_id(log) == "cuda-peer-access-unsupported"


class TestCudaPeerAccessUnsupported:
    def test_control_p2p_channels_set_up_are_healthy(self):
        log = "g148:14937:69361 [0] NCCL INFO Channel 00/1 : 0[0] -> 7[7] via P2P/CUMEM\nstep 1 loss 2.0\n"
        assert "cuda-peer-access-unsupported" not in ids(log)

    def test_sibling_another_cuda_failure_inside_nccl(self):
        assert head_id("[1] misc/shmutils.cc:103 NCCL WARN Cuda failure 'invalid argument'\n") == "nccl-cuda-failure"

    def test_sibling_the_peer_access_failure(self):
        log = ("[2025-09-09 23:51:24] 9b405963aa12:774:854 [0] transport/shm.cc:590 NCCL WARN Cuda failure 217 "
               "'peer access is not supported between these two devices'\n")
        assert head_id(log) == "cuda-peer-access-unsupported"


class TestNcclTwoLibraries:
    def test_control_a_missing_cudnn_is_a_missing_library_not_two_nccls(self):
        log = "ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory\n"
        assert head_id(log) == "cuda-library-missing"

    def test_sibling_the_undefined_nccl_symbol(self):
        log = "ImportError: /home/user/.local/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclCommRegister\n"
        assert head_id(log) == "nccl-two-libraries"


class TestNcclNotCompiled:
    def test_control_a_nccl_less_build_that_runs_gloo_is_healthy(self):
        log = "torch 2.3.0+cpu, distributed backend: gloo (NCCL not available on this platform)\nepoch 1 loss 0.9\n"
        assert "nccl-not-compiled" not in ids(log)

    def test_sibling_init_refused_for_want_of_nccl(self):
        assert head_id("RuntimeError: Distributed package doesn't have NCCL built in\n") == "backend-not-built"


class TestBackendNotBuilt:
    def test_control_the_raise_line_quoted_in_a_traceback_is_not_the_error(self):
        log = '    raise RuntimeError("Distributed package doesn\'t have NCCL " "built in")\n'
        assert "backend-not-built" not in ids(log)

    def test_sibling_the_default_timeout_warning_is_nccl_not_compiled(self):
        log = ("D:\\Python39\\lib\\site-packages\\torch\\distributed\\distributed_c10d.py:613: UserWarning: Attempted to get default "
               "timeout for nccl backend, but NCCL support is not compiled\n")
        assert head_id(log) == "nccl-not-compiled"


class TestTorchvisionCudaMismatch:
    def test_control_another_operator_missing_for_a_backend(self):
        log = "NotImplementedError: Could not run 'aten::empty_strided' with arguments from the 'Meta' backend\n"
        assert "torchvision-cuda-mismatch" not in ids(log)

    def test_sibling_torch_without_cuda(self):
        assert head_id(TB + "AssertionError: Torch not compiled with CUDA enabled\n") == "cuda-torch-cpu-build"


class TestWindowsPagingFileTooSmall:
    def test_control_another_windows_dll_error(self):
        log = "OSError: [WinError 126] The specified module could not be found. Error loading caffe2_nvrtc.dll\n"
        assert "windows-paging-file-too-small" not in ids(log)

    def test_sibling_a_missing_cuda_library(self):
        log = "ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory\n"
        assert head_id(log) == "cuda-library-missing"


# --- frameworks: DataParallel, FSDP, DDP construction, Lightning, DeepSpeed, accelerate --------


class TestDataparallelReplicaStopiteration:
    def test_control_another_exception_caught_in_a_replica(self):
        assert "dataparallel-replica-stopiteration" not in ids("RuntimeError: Caught RuntimeError in replica 0 on device 0.\n")

    def test_sibling_the_module_not_on_device_ids_0(self):
        log = "RuntimeError: module must have its parameters and buffers on device cuda:0 (device_ids[0]) but found one of them on device: cuda:1\n"
        assert head_id(log) == "dataparallel-module-not-on-first-device"


class TestDataparallelModuleNotOnFirstDevice:
    def test_control_tensors_on_two_devices_is_the_generic_mismatch(self):
        log = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n"
        assert head_id(log) == "ddp-device-mismatch"

    def test_sibling_stopiteration_in_a_replica(self):
        assert head_id("StopIteration: Caught StopIteration in replica 0 on device 0.\n") == "dataparallel-replica-stopiteration"


class TestFsdpUniformRequiresGrad:
    def test_control_a_mixed_dtype_is_another_flatparameter_rule(self):
        log = "ValueError: `FlatParameter` requires uniform dtype but got torch.float16 and torch.float32\n"
        assert "fsdp-uniform-requires-grad" not in ids(log)

    def test_sibling_the_compute_device_mismatch(self):
        log = "[rank4]: ValueError: Inconsistent compute device and `device_id` on rank 0: cuda:1 vs cuda:0\n"
        assert head_id(log) == "fsdp-device-mismatch"


class TestFsdpDeviceMismatch:
    def test_control_params_on_two_devices_is_not_the_device_id(self):
        log = "ValueError: FSDP only supports single device modules but got params on {device(type='cuda', index=0), device(type='cpu')}\n"
        assert "fsdp-device-mismatch" not in ids(log)

    def test_sibling_non_uniform_requires_grad(self):
        assert head_id("ValueError: `FlatParameter` requires uniform `requires_grad`\n") == "fsdp-uniform-requires-grad"


class TestDdpStaticGraphChanged:
    def test_control_unused_parameters_without_static_graph(self):
        log = ("RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error "
               "indicates that your module has parameters that were not used in producing loss.\n")
        assert head_id(log) == "ddp-unused-parameters"

    def test_sibling_the_static_graph_changed(self):
        log = ("RuntimeError: Your training graph has changed in this iteration, e.g., one parameter is unused in first iteration, "
               "but then got used in the second iteration. this is not compatible with static_graph set to True.\n")
        assert head_id(log) == "ddp-static-graph-changed"


class TestBarrierDeviceIdsOldTorch:
    def test_control_device_id_refused_by_init_is_not_barrier(self):
        log = "TypeError: __init__() got an unexpected keyword argument 'device_id'\n"
        assert "barrier-device-ids-old-torch" not in ids(log)

    def test_sibling_barrier_guessing_the_gpu_is_a_warning(self):
        log = ("[W ProcessGroupNCCL.cpp:1569] Rank 0 using best-guess GPU 0 to perform barrier as devices used by this process are "
               "currently unknown. This can potentially cause a hang if this rank to GPU mapping is incorrect.\n")
        got = ids(log)
        assert "barrier-unknown-device" in got and "barrier-device-ids-old-torch" not in got


class TestSyncbnDoubleBackward:
    def test_control_another_missing_derivative(self):
        log = "RuntimeError: derivative for aten::grid_sampler_2d_backward is not implemented\n"
        assert "syncbn-double-backward" not in ids(log)

    def test_sibling_the_batch_norm_derivative(self):
        assert head_id(TB + "RuntimeError: derivative for batch_norm_backward_elemt is not implemented\n") == "syncbn-double-backward"


class TestLightningGpusUnavailable:
    def test_control_lightnings_gpu_banner_is_healthy(self):
        log = "GPU available: True (cuda), used: True\nTPU available: False, using: 0 TPU cores\nLOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0,1]\n"
        assert "lightning-gpus-unavailable" not in ids(log)

    def test_sibling_another_misconfiguration(self):
        log = "pytorch_lightning.utilities.exceptions.MisconfigurationException: No 'test_dataloader()' method defined to run 'Trainer.test'.\n"
        assert head_id(log) == "lightning-misconfiguration"

    def test_sibling_the_gpus_requested(self):
        log = "lightning_fabric.utilities.exceptions.MisconfigurationException: You requested gpu: [1]\n But your machine only has: [0]\n"
        assert head_id(log) == "lightning-gpus-unavailable"


class TestLightningMisconfiguration:
    def test_control_the_exceptions_module_named_in_a_healthy_line(self):
        assert "lightning-misconfiguration" not in ids("lightning_fabric.utilities.exceptions: nothing raised\nepoch 0 done\n")

    def test_sibling_the_gpus_the_machine_lacks(self):
        log = "lightning_fabric.utilities.exceptions.MisconfigurationException: You requested gpu: [1]\n"
        assert head_id(log) == "lightning-gpus-unavailable"


class TestDeviceMapAutoDistributed:
    def test_control_device_map_auto_in_a_single_process_is_healthy(self):
        log = "model = AutoModelForCausalLM.from_pretrained(name, device_map='auto')\nLoading checkpoint shards: 100%|##########| 2/2\n"
        assert "device-map-auto-distributed" not in ids(log)

    def test_sibling_a_model_on_two_devices(self):
        log = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cuda:1!\n"
        assert head_id(log) == "ddp-device-mismatch"


class TestDdpModelOnCpu:
    verdict = "ddp-model-on-cpu"
    CONSTRUCTOR = (
        "Traceback (most recent call last):\n"
        '  File "/home/me/train.py", line 40, in <module>\n'
        "    model = DDP(model, device_ids=[local_rank])\n"
        '  File "/opt/conda/lib/python3.10/site-packages/torch/nn/parallel/distributed.py", line 798, in __init__\n'
        "    _sync_module_states(\n"
        '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/utils.py", line 270, in _sync_params_and_buffers\n'
        "    dist._broadcast_coalesced(\n"
    )
    COLLECTIVE = (
        "Traceback (most recent call last):\n"
        '  File "/home/me/train.py", line 40, in sync_metrics\n'
        "    dist.all_reduce(loss_sum)\n"
        '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 2050, in all_reduce\n'
        "    work = group.allreduce([tensor], opts)\n"
    )

    def test_control_a_cpu_tensor_in_the_users_collective_is_not_the_model(self):
        log = self.COLLECTIVE + "RuntimeError: Tensors must be CUDA and dense\n"
        assert head_id(log) == "nccl-tensor-not-cuda"

    def test_sibling_the_model_left_on_the_cpu_in_ddps_constructor(self):
        log = self.CONSTRUCTOR + "RuntimeError: Tensors must be CUDA and dense\n"
        assert head_id(log) == "ddp-model-on-cpu"


class TestNcclTensorNotCuda:
    def test_control_the_same_error_from_ddps_constructor_is_the_model(self):
        log = TestDdpModelOnCpu.CONSTRUCTOR + "RuntimeError: Tensors must be CUDA and dense\n"
        assert "nccl-tensor-not-cuda" not in ids(log) and head_id(log) == "ddp-model-on-cpu"

    def test_sibling_a_tensor_on_the_wrong_gpu(self):
        log = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n"
        assert head_id(log) == "ddp-device-mismatch"

    def test_sibling_no_backend_for_the_cpu(self):
        assert head_id("RuntimeError: No backend type associated with device type cpu\n") == "nccl-tensor-not-cuda"


class TestDeepspeedBatchSizeMismatch:
    def test_control_the_auto_batch_settings_printed_at_start(self):
        log = '  "train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto"\n[INFO] DeepSpeed info: version=0.14.0\n'
        assert "deepspeed-batch-size-mismatch" not in ids(log)

    def test_sibling_cuda_home_missing_to_build_its_ops(self):
        log = "deepspeed.ops.op_builder.builder.MissingCUDAException: CUDA_HOME does not exist, unable to compile CUDA op(s)\n"
        assert head_id(log) == "deepspeed-cuda-home-missing"


class TestDeepspeedCudaHomeMissing:
    def test_control_cuda_home_exported_in_the_script(self):
        assert "deepspeed-cuda-home-missing" not in ids("export CUDA_HOME=/usr/local/cuda-12.1\nUsing /root/.cache/torch_extensions as PyTorch extensions root...\n")

    def test_sibling_the_extension_failing_to_build(self):
        assert head_id("RuntimeError: Error building extension 'fused_adam'\n") == "extension-build-failed"


class TestExtensionBuildFailed:
    def test_control_the_extension_being_built(self):
        log = "Using /root/.cache/torch_extensions/py310_cu121 as PyTorch extensions root...\nBuilding extension module fused_adam...\n"
        assert "extension-build-failed" not in ids(log)

    def test_sibling_no_cuda_home_to_build_with(self):
        assert head_id("AssertionError: CUDA_HOME does not exist, unable to compile CUDA op(s)\n") == "deepspeed-cuda-home-missing"


class TestDeepspeedHostUnreachableSsh:
    def test_control_the_runner_naming_the_nodes_ip(self):
        log = "[INFO] [runner.py:283:main] Using IP address of 192.168.2.57 for node 192.168.2.57\n"
        assert "deepspeed-host-unreachable-ssh" not in ids(log)

    def test_sibling_ssh_refusing_the_key(self):
        assert head_id("user@node2: Permission denied (publickey).\n") == "ssh-auth-failed"

    def test_sibling_the_ssh_check_failing(self):
        log = "subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no 192.168.3.100 hostname' returned non-zero exit status 255.\n"
        assert head_id(log) == "deepspeed-host-unreachable-ssh"


# --- network and store -----------------------------------------------------------------------


class TestStorePortPrivileged:
    def test_control_permission_denied_on_a_high_port_is_no_privileged_port(self):
        # errno 13 on 29500 is a security policy (SELinux, a container profile), not a port below 1024
        log = "[rank0]:[W socket.cpp:464] [c10d] The server socket has failed to bind to [::]:29500 (errno: 13 - Permission denied).\n"
        assert "store-port-privileged" not in ids(log)

    def test_control_a_file_permission_error_is_no_port(self):
        assert "store-port-privileged" not in ids("PermissionError: [Errno 13] Permission denied: '/data/ckpt/last.pt'\n")

    def test_control_a_port_in_use_is_not_a_privileged_port(self):
        log = "The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use).\n"
        assert head_id(log) == "store-address-in-use"

    def test_sibling_windows_forbidding_the_port(self):
        assert head_id("The server socket has failed to bind to [kodachi]:51545 (system error: 10013\n") == "windows-port-forbidden"


class TestWindowsPortForbidden:
    def test_control_port_10013_in_use_on_linux(self):
        log = "[W socket.cpp:426] [c10d] The server socket has failed to bind to [::]:10013 (errno: 98 - Address already in use).\n"
        assert head_id(log) == "store-address-in-use"

    def test_control_an_invalid_address_on_windows_is_a_warning_only(self):
        log = ("[W socket.cpp:697] [c10d] The client socket has failed to connect to [host]:29500 (system error: 10049 - "
               "The requested address is not valid in its context.).\n")
        assert "windows-port-forbidden" not in ids(log)

    def test_sibling_a_privileged_port_on_linux(self):
        log = "[W socket.cpp:426] [c10d] The server socket has failed to bind to [::]:97 (errno: 13 - Permission denied).\n"
        assert head_id(log) == "store-port-privileged"


class TestWindowsAddressInvalid:
    def test_control_it_is_a_warning_not_an_error(self):
        log = ("[W socket.cpp:697] [c10d] The client socket has failed to connect to [local.id.seewo.com]:29500 (system error: "
               "10049 - The requested address is invalid in its context.).\nepoch 1 loss 0.5\n")
        assert head_id(log) == "-" and finding(log, "windows-address-invalid").severity is Severity.WARN

    def test_sibling_the_port_forbidden(self):
        assert head_id("The server socket has failed to bind to [kodachi]:51545 (system error: 10013\n") == "windows-port-forbidden"


class TestStoreAddressInUsePermissionDenied:
    verdict = "store-address-in-use"
    NOT_LISTENING = ("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
                     "The server socket has failed to bind to [::]:{port} (errno: {errno} - {why}). The server socket has failed "
                     "to bind to 0.0.0.0:{port} (errno: {errno} - {why}).\n")

    def test_control_no_listener_for_want_of_permission_is_not_a_port_in_use(self):
        log = self.NOT_LISTENING.format(port=29500, errno=13, why="Permission denied")
        assert "store-address-in-use" not in ids(log)

    def test_sibling_the_same_line_on_a_privileged_port(self):
        assert head_id(self.NOT_LISTENING.format(port=98, errno=13, why="Permission denied")) == "store-port-privileged"

    def test_sibling_the_same_line_with_the_port_in_use(self):
        assert head_id(self.NOT_LISTENING.format(port=29500, errno=98, why="Address already in use")) == "store-address-in-use"


class TestRendezvousClosed:
    def test_control_a_rendezvous_timeout_is_its_own_verdict(self):
        log = TB + "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError\n"
        assert "rendezvous-closed" not in ids(log) and "rendezvous-timeout" in ids(log)

    def test_sibling_the_closed_rendezvous(self):
        assert head_id(TB + "torch.distributed.elastic.rendezvous.api.RendezvousClosedError\n") == "rendezvous-closed"


BARRIER = ("Waiting in store based barrier to initialize process group for rank: 0, key: store_based_barrier_key:1 "
           "(world_size={world}, worker_count={count}, timeout=0:30:00)\n")


class TestStoreBarrierWaiting:
    def test_control_the_barrier_completed(self):
        log = ("INFO - torch.distributed.distributed_c10d - Rank 0: Completed store-based barrier for key:store_based_barrier_key:1 "
               "with 6 nodes.\n")
        assert "store-barrier-waiting" not in ids(log)

    def test_sibling_more_workers_than_the_world(self):
        assert head_id(BARRIER.format(world=4, count=8)) == "store-barrier-extra-ranks"

    def test_sibling_ranks_missing(self):
        assert head_id(BARRIER.format(world=8, count=1)) == "store-barrier-waiting"


class TestStoreBarrierExtraRanks:
    def test_control_fewer_workers_than_the_world_is_waiting(self):
        got = ids(BARRIER.format(world=8, count=1))
        assert "store-barrier-extra-ranks" not in got and "store-barrier-waiting" in got

    def test_sibling_the_barrier_timing_out(self):
        log = ("RuntimeError: Timed out initializing process group in store based barrier on rank: 1, for key: store_based_barrier_key:1 "
               "(world_size=2, worker_count=1, timeout=0:30:00)\n")
        assert head_id(log) == "store-waiting-for-clients"


class TestStoreBarrierCompleted:
    def test_control_a_barrier_that_timed_out_is_no_success(self):
        log = ("Timed out initializing process group in store based barrier on rank: 0, for key: store_based_barrier_key:1 "
               "(world_size=2, worker_count=1, timeout=0:30:00)\n")
        assert "store-barrier-completed" not in ids(log) and head_id(log) == "store-waiting-for-clients"

    def test_sibling_still_waiting_in_the_barrier(self):
        assert head_id(BARRIER.format(world=8, count=1)) == "store-barrier-waiting"

    def test_sibling_the_completed_barrier_is_safe(self):
        log = "Rank 0: Completed store-based barrier for key:store_based_barrier_key:1 with 6 nodes.\nepoch 1 loss 0.3\n"
        assert head_id(log) == "-" and finding(log, "store-barrier-completed").evidence.get("safe_to_ignore")


class TestMonitoredBarrierRankLate:
    def test_control_the_call_quoted_in_a_traceback(self):
        assert "monitored-barrier-rank-late" not in ids("[rank0]: dist.monitored_barrier(timeout=datetime.timedelta(seconds=5))\n")

    def test_sibling_a_collective_timeout_in_gloo(self):
        log = "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms for recv operation to complete\n"
        assert head_id(log) == "gloo-collective-timeout"

    def test_sibling_the_late_rank_is_named_not_the_reporter(self):
        log = "[rank0]:[E1125 01:57:29.085855338 ProcessGroupGloo.cpp:67] [Rank 0]: Rank 1 failed to pass monitoredBarrier in 5000 ms\n"
        assert head_id(log) == "monitored-barrier-rank-late"
        assert finding(log, "monitored-barrier-rank-late").title.endswith("— rank 1 (reported by rank 0)")


class TestStoreWaitingForClients:
    def test_control_a_barrier_timing_out_with_more_workers_than_the_world_is_no_missing_rank(self):
        # powersgd-21 in the corpus: world_size=2, worker_count=4 (a second init on top of the launcher's)
        log = ("Timed out initializing process group in store based barrier on rank: 0, for key: store_based_barrier_key:1 "
               "(world_size=2, worker_count=4, timeout=0:02:00)\n")
        assert "store-waiting-for-clients" not in ids(log) and head_id(log) == "store-barrier-extra-ranks"

    def test_control_a_barrier_still_waiting_has_not_timed_out(self):
        got = ids(BARRIER.format(world=8, count=1))
        assert "store-waiting-for-clients" not in got and "store-barrier-waiting" in got

    def test_control_the_barrier_completed(self):
        log = "Rank 0: Completed store-based barrier for key:store_based_barrier_key:1 with 2 nodes.\n"
        assert "store-waiting-for-clients" not in ids(log)

    def test_sibling_a_socket_timeout_reading_the_store(self):
        assert head_id("torch.distributed.DistStoreError: Socket Timeout\n") == "store-socket-timeout"

    def test_sibling_the_clients_that_never_came(self):
        log = "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/2 clients joined.\n"
        assert head_id(log) == "store-waiting-for-clients"


class TestStoreSocketTimeout:
    def test_control_a_client_connect_timeout_is_its_own_verdict(self):
        log = "torch.distributed.DistNetworkError: The client socket has timed out after 300000ms while trying to connect to (036c56dce41b, 41331).\n"
        assert head_id(log) == "store-connect-timeout"

    def test_sibling_the_store_reset_by_its_peer(self):
        log = ("torch.distributed.DistBackendError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d "
               "key-value store by key '0', but store->get('0') got error: Connection reset by peer\n")
        assert head_id(log) == "store-connection-lost"

    def test_sibling_the_store_get_timing_out(self):
        log = ("torch.distributed.DistBackendError: [3] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d "
               "key-value store by key '0', but store->get('0') got error: Socket Timeout\n")
        assert head_id(log) == "store-socket-timeout"


class TestStoreConnectionLost:
    def test_control_the_should_dump_check_failing_at_exit_is_harmless(self):
        log = ('[rank8]:[W318 10:00:41.929037914 ProcessGroupNCCL.cpp:1771] [PG ID 0 PG GUID 0 Rank 8] Failed to check the "should dump" '
               "flag on TCPStore, (maybe TCPStore server has shut down too early), with error: Connection reset by peer\n")
        got = ids(log)
        assert "store-connection-lost" not in got and "store-closed-at-exit" in got

    def test_control_the_store_constructed_in_a_traceback(self):
        assert "store-connection-lost" not in ids("    store = TCPStore(result.hostname, result.port, world_size, start_daemon, timeout)\n")

    def test_sibling_a_socket_timeout(self):
        assert head_id("torch.distributed.DistStoreError: wait timeout after 600000ms, keys: /default_pg/0//cuda//0\n") == "store-socket-timeout"


class TestStoreClosedAtExit:
    def test_control_the_store_reset_while_running_is_no_exit_notice(self):
        log = ("[rank1]:[W618 10:26:54.029068449 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=105, addr=[localhost]:39468, "
               "remote=[::ffff:0.0.0.0]:12201): Connection reset by peer\n")
        assert "store-closed-at-exit" not in ids(log)

    def test_sibling_the_connection_lost(self):
        log = ("[W522 11:47:46.952883182 TCPStore.cpp:106] [c10d] sendBytes failed on SocketImpl(fd=77, addr=[::ffff:127.0.0.1]:39732, "
               "remote=[::ffff:127.0.0.1]:29600): Broken pipe\n")
        assert head_id(log) == "store-connection-lost"


class TestIpv6AddressFamily:
    def test_control_cannot_assign_an_address_for_a_remote_host_is_no_ipv6_notice(self):
        log = "[W socket.cpp:558] [c10d] The client socket has failed to connect to [10.0.0.5]:29500 (errno: 99 - Cannot assign requested address).\n"
        assert "ipv6-address-family" not in ids(log)

    def test_control_a_refused_connection_is_not_the_ipv6_notice(self):
        log = "[W socket.cpp:558] [c10d] The client socket has failed to connect to [node1]:29500 (errno: 111 - Connection refused).\n"
        assert "ipv6-address-family" not in ids(log)

    def test_sibling_the_port_in_use(self):
        log = "The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use).\n"
        assert head_id(log) == "store-address-in-use"

    def test_sibling_the_notice_is_safe_to_ignore(self):
        log = ("[W socket.cpp:601] [c10d] The IPv6 network addresses of (localhost, 51595) cannot be retrieved "
               "(gai error: -2 - Name or service not known).\nepoch 1 loss 0.4\n")
        assert head_id(log) == "-" and finding(log, "ipv6-address-family").evidence.get("safe_to_ignore")


# --- NCCL -------------------------------------------------------------------------------------


class TestNcclShmSegment:
    def test_control_nccl_using_shm_in_a_healthy_log(self):
        log = "node0:4242:4300 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct\nstep 1 loss 1.0\n"
        assert "nccl-shm-segment" not in ids(log)

    def test_sibling_a_full_dev_shm_for_the_dataloader(self):
        log = "RuntimeError: unable to write to file </torch_18_1915233750>: No space left on device (28)\n"
        assert head_id(log) == "shm-no-space"

    def test_sibling_the_segment_nccl_could_not_create(self):
        log = ("ubuntu:9621:9691 [6] misc/shmutils.cc:71 NCCL WARN Error: failed to extend /dev/shm/nccl-fjwOOB to 5967876 bytes\n")
        assert head_id(log) == "nccl-shm-segment"


class TestNcclIbVerbs:
    def test_control_the_verbs_wrapper_notice_of_a_healthy_startup(self):
        # torchtitan's example startup log: printed on a host without IB, and the run goes on
        log = "[rank0]:[2026-09-11 23:05:42] devvm7508:2914395:2914395 [0] misc/ibvwrap.cc:185 (wrap_ibv_alloc_pd) NCCL WARN lib wrapper not initialized.\n"
        assert "nccl-ib-verbs" not in ids(log)

    def test_control_libibverbs_missing_is_harmless(self):
        log = "ip-172-31-0-137:14605:14673 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
        assert "nccl-ib-verbs" not in ids(log)

    def test_sibling_a_completion_error_on_the_fabric(self):
        log = "NET/IB : Got completion from peer 11.214.147.122<39138> with error 12, opcode 0, len 0, vendor err 129\n"
        assert head_id(log) == "nccl-ib-completion-error"

    def test_sibling_a_verbs_call_failing(self):
        assert head_id("node08:6561:6600 [0] misc/ibvwrap.cc:280 NCCL WARN Call to ibv_create_qp failed\n") == "nccl-ib-verbs"


class TestNcclIbCompletionError:
    def test_control_the_ofi_provider_chosen_in_a_healthy_log(self):
        assert "nccl-ib-completion-error" not in ids("node0:4242:4242 [0] NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)\n")

    def test_control_the_ib_transport_chosen_in_a_healthy_log(self):
        log = "node0:4242:4242 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:10.0.0.1<0>\nstep 1 loss 1.0\n"
        assert "nccl-ib-completion-error" not in ids(log)

    def test_sibling_a_verbs_call_failing_at_setup(self):
        log = "dgxh100-3:2152176:2152299 [0] misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with error Network is unreachable\n"
        assert head_id(log) == "nccl-ib-verbs"


class TestNcclIbNoDevice:
    def test_control_a_verbs_call_failing_is_no_harmless_notice(self):
        log = "spark01:2683:2826 [0] misc/ibvwrap.cc:268 NCCL WARN Call to ibv_create_cq failed\n"
        got = ids(log)
        assert "nccl-ib-no-device" not in got and head_id(log) == "nccl-ib-verbs"

    def test_sibling_no_device_found_is_safe_to_ignore(self):
        log = "worker:101542:101542 [0] NCCL INFO NET/IB : No device found.\nepoch 1 loss 0.7\n"
        assert head_id(log) == "-" and finding(log, "nccl-ib-no-device").evidence.get("safe_to_ignore")


class TestNcclP2pInUse:
    P2P = "node0:13572:13572 [1] NCCL INFO Channel 00 : 1[1] -> 0[0] via P2P/IPC\n"

    def test_control_p2p_in_a_job_that_did_not_hang_is_not_shown(self):
        assert "nccl-p2p-in-use" not in ids(self.P2P + "step 100 loss 0.2\n")

    def test_sibling_p2p_then_a_watchdog_timeout(self):
        log = self.P2P + (
            "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600060 milliseconds before timing out.\n"
        )
        assert head_id(log) == "nccl-watchdog-timeout"
        assert "nccl-p2p-in-use" in ids(log) and finding(log, "nccl-watchdog-timeout").evidence.get("p2p_in_use")


class TestNcclCollectiveMismatch:
    def test_control_the_torch_fingerprint_mismatch_is_its_own_verdict(self):
        log = ("RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint("
               "SequenceNumber=1OpType=BARRIER), but Rank 2 is running collective: CollectiveFingerPrint(SequenceNumber=0OpType=BARRIER).\n")
        assert head_id(log) == "collective-fingerprint-mismatch"

    def test_sibling_nccls_mismatch_warning(self):
        log = ("init.cc:1247 NCCL WARN Mismatched collective detected, please check your collective calls at and around rank 39. "
               "You can use NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=COLL to see the collective logs\n")
        assert head_id(log) == "nccl-collective-mismatch"


class TestCollectiveFingerprintMismatch:
    def test_control_the_detail_debug_setting_printed_at_start(self):
        log = "TORCH_DISTRIBUTED_DEBUG=DETAIL: collective fingerprints are checked on every call\nstep 1 loss 0.9\n"
        assert "collective-fingerprint-mismatch" not in ids(log)

    def test_sibling_nccls_own_mismatch_warning(self):
        assert head_id("n136-081-017:201800:201850 [2] NCCL WARN NET/IB : collective mismatch error\n") == "nccl-collective-mismatch"

    MISMATCH = ("RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running collective: CollectiveFingerPrint("
                "SequenceNumber={s0}, OpType={op0}, TensorShape={sh0}, TensorDtypes=Float), but Rank 1 is running collective: "
                "CollectiveFingerPrint(SequenceNumber={s1}, OpType={op1}, TensorShape={sh1}, TensorDtypes=Float).\n")

    def test_sibling_a_shape_mismatch_says_shape_not_another_op(self):
        # produced-collective-shape-mismatch in the corpus: both ranks all_reduce, [2] against [3]
        log = self.MISMATCH.format(s0=0, op0="ALLREDUCE", sh0="[2]", s1=0, op1="ALLREDUCE", sh1="[3]")
        assert "the shape: rank 0 [2], rank 1 [3]" in finding(log, "collective-fingerprint-mismatch").title

    def test_sibling_another_op_says_op(self):
        log = self.MISMATCH.format(s0=5, op0="ALLREDUCE", sh0="[4]", s1=5, op1="BROADCAST", sh1="[4]")
        assert "the op: rank 0 runs ALLREDUCE, rank 1 BROADCAST" in finding(log, "collective-fingerprint-mismatch").title

    def test_sibling_a_rank_ahead_says_position(self):
        log = ("RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint("
               "SequenceNumber=1OpType=BARRIER), but Rank 2 is running collective: CollectiveFingerPrint(SequenceNumber=0OpType=BARRIER).\n")
        assert "the position: rank 1 is at collective #1, rank 2 at #0" in finding(log, "collective-fingerprint-mismatch").title


class TestNcclCudaFailure:
    def test_control_peer_access_is_its_own_cuda_failure(self):
        assert head_id("[rank1]: Cuda failure 'peer access is not supported between these two devices'\n") == "cuda-peer-access-unsupported"

    def test_sibling_an_illegal_access_reported_inside_nccl(self):
        log = "n122-164-108:7400:7642 [1] include/alloc.h:125 NCCL WARN Cuda failure 700 'an illegal memory access was encountered'\n"
        assert head_id(log) == "cuda-illegal-memory-access"


class TestNcclInternalError:
    def test_control_a_system_error_is_not_internal(self):
        log = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
               "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3\n")
        assert "nccl-internal-error" not in ids(log)

    def test_sibling_invalid_usage(self):
        log = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, invalid usage "
               "(run with NCCL_DEBUG=WARN for details), NCCL version 2.20.5\n")
        assert head_id(log) == "nccl-invalid-usage"

    def test_sibling_the_internal_error(self):
        assert head_id("RuntimeError: NCCL Error 3: internal error\n") == "nccl-internal-error"


class TestNcclError:
    def test_control_nccls_version_banner_is_healthy(self):
        log = "node0:4242:4242 [0] NCCL INFO NCCL version 2.19.3+cuda12.3\nstep 1 loss 1.1\n"
        assert "nccl-error" not in ids(log)

    def test_sibling_the_nccl_error_with_its_cause_in_the_log(self):
        log = ("[1] misc/shmutils.cc:103 NCCL WARN Cuda failure 'invalid argument'\n"
               "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, invalid "
               "argument (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3\n")
        assert head_id(log) == "nccl-cuda-failure"

    def test_sibling_the_nccl_error_alone(self):
        log = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, invalid "
               "argument (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3\n")
        assert head_id(log) == "nccl-error"


WATCHDOG = ("[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) "
            "ran for 600060 milliseconds before timing out.\n")


class TestNcclCommAborted:
    def test_control_the_abort_setting_printed_at_start(self):
        log = "TORCH_NCCL_ASYNC_ERROR_HANDLING=1: the communicator is aborted on error\nstep 1 loss 1.0\n"
        assert "nccl-comm-aborted" not in ids(log)

    def test_sibling_the_timeout_that_aborted_it_leads(self):
        log = WATCHDOG + ("RuntimeError: NCCL communicator was aborted on rank 0. Original reason for failure was: [Rank 0] Watchdog "
                          "caught collective operation timeout\n")
        assert head_id(log) == "nccl-watchdog-timeout"


class TestNcclTimeoutDumpSignal:
    def test_control_the_flight_recorder_setting_printed_at_start(self):
        log = "TORCH_NCCL_DUMP_ON_TIMEOUT=1 TORCH_NCCL_TRACE_BUFFER_SIZE=2000\nstep 1 loss 1.0\n"
        assert "nccl-timeout-dump-signal" not in ids(log)

    def test_sibling_the_watchdog_timeout_leads(self):
        log = ("[rank2]:[E901 05:20:03.118859045 ProcessGroupNCCL.cpp:1746] [PG ID 0 PG GUID 0(default_pg) Rank 2] Received a dump signal "
               "due to a collective timeout from  rank 6 and we will try our best to dump the debug info. Last enqueued NCCL work: 460631, "
               "last completed NCCL work: 460630.\n") + WATCHDOG
        assert head_id(log) == "nccl-watchdog-timeout"


class TestNcclProcessTeardown:
    def test_control_the_watchdog_timeout_is_its_own_verdict(self):
        log = ("[E ProcessGroupNCCL.cpp:915] [Rank 1] NCCL watchdog thread terminated with exception: [Rank 1] Watchdog caught collective "
               "operation timeout: WorkNCCL(SeqNum=778778, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for "
               "1800413 milliseconds before timing out.\n")
        assert head_id(log) == "nccl-watchdog-timeout"

    def test_sibling_an_illegal_access_taking_the_watchdog_down(self):
        log = ("[rank0]:[E504 22:44:08.389636235 ProcessGroupNCCL.cpp:1896] [PG ID 0 PG GUID 0(default_pg) Rank 0] Process group watchdog "
               "thread terminated with exception: CUDA error: an illegal memory access was encountered\n")
        assert head_id(log) == "cuda-illegal-memory-access"


class TestNcclHeartbeatStuck:
    def test_control_the_heartbeat_setting_printed_at_start(self):
        log = "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=480 TORCH_NCCL_ENABLE_MONITORING=1\nstep 1 loss 1.0\n"
        assert "nccl-heartbeat-stuck" not in ids(log)

    def test_sibling_a_collective_timeout(self):
        assert head_id(WATCHDOG) == "nccl-watchdog-timeout"

    def test_sibling_the_stuck_watchdog(self):
        log = ("[rank1]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 1] Heartbeat monitor timed out! Process will be terminated after dumping "
               "debug info. workMetaList_.size()=103\n")
        assert head_id(log) == "nccl-heartbeat-stuck"


class TestNcclNoGpu:
    def test_control_gloo_on_a_cpu_machine_is_healthy(self):
        log = "Initializing process group with backend gloo (no GPUs found: training on CPU)\nepoch 1 loss 0.8\n"
        assert "nccl-no-gpu" not in ids(log)

    def test_sibling_torch_built_without_cuda(self):
        assert head_id(TB + "AssertionError: Torch not compiled with CUDA enabled\n") == "cuda-torch-cpu-build"

    def test_sibling_nccl_without_a_gpu(self):
        assert head_id("RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!\n") == "nccl-no-gpu"


class TestIommuFault:
    def test_control_the_iommu_enabled_at_boot(self):
        log = "[    0.000000] DMAR: IOMMU enabled\n[    0.412345] DMAR: Host address width 46\n"
        assert "iommu-fault" not in ids(log)

    def test_sibling_a_gpu_fallen_off_the_bus(self):
        log = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.\n"
        assert head_id(log) == "nvidia-xid"

    def test_sibling_the_page_fault(self):
        log = "amdgpu 0000:03:00.0: AMD-Vi: Event logged [IO_PAGE_FAULT domain=0x0010 address=0x64a7f000 flags=0x0000]\n"
        assert head_id(log) == "iommu-fault"


class TestIommuFaultDevice:
    """A fault whose line names no GPU driver: which device it is decides, so a warning that says how to tell."""

    def test_control_a_gpu_drivers_own_fault_is_the_gpus(self):
        log = "amdgpu 0000:03:00.0: AMD-Vi: Event logged [IO_PAGE_FAULT domain=0x0010 address=0x64a7f000 flags=0x0000]\n"
        assert "iommu-fault-device" not in ids(log) and head_id(log) == "iommu-fault"

    def test_control_the_iommu_enabled_at_boot(self):
        assert "iommu-fault-device" not in ids("[    0.000000] DMAR: IOMMU enabled\n")

    def test_sibling_a_fault_of_a_device_named_by_address_only_is_a_warning(self):
        log = "DMAR: [DMA Read] Request device [3b:00.0] PASID ffffffff fault addr 7f8a0000 [fault reason 06] PTE Read access is not set\n"
        [f] = [f for f in api.diagnose(log).findings if f.id == "iommu-fault-device"]
        assert f.severity is Severity.WARN and "lspci -s" in f.fix and head_id(log) == "-"


class TestGlooCollectiveTimeout:
    def test_control_the_gloo_timeout_setting_printed_at_start(self):
        log = "init_process_group(backend='gloo', timeout=timedelta(seconds=1800))\nstep 1 loss 1.0\n"
        assert "gloo-collective-timeout" not in ids(log)

    def test_sibling_nccls_watchdog_timeout(self):
        got = ids(WATCHDOG)
        assert "gloo-collective-timeout" not in got and head_id(WATCHDOG) == "nccl-watchdog-timeout"


# --- CUDA ---------------------------------------------------------------------------------------


class TestCudaOomGpu0OtherRanks:
    def test_control_one_process_out_of_its_own_memory(self):
        log = ("[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.36 GiB. GPU 1 has a total capacity of "
               "47.50 GiB of which 1.52 GiB is free. Including non-PyTorch memory, this process has 45.97 GiB memory in use.\n")
        assert "cuda-oom-gpu0-other-ranks" not in ids(log)

    def test_sibling_an_oom_of_the_old_format(self):
        log = ("OutOfMemoryError: CUDA out of memory. Tried to allocate 172.00 MiB (GPU 0; 79.35 GiB total capacity; 73.95 GiB "
               "already allocated; 12.19 MiB free; 76.80 GiB reserved in total by PyTorch)\n")
        assert head_id(log) == "cuda-oom"


class TestCudaDeviceCountFailed:
    def test_control_the_device_count_printed_at_start(self):
        log = "torch.cuda.device_count() = 8, cudaGetDeviceCount ok\nepoch 1 loss 0.6\n"
        assert "cuda-device-count-failed" not in ids(log)

    def test_sibling_cudas_unknown_init_error(self):
        log = ("UserWarning: CUDA initialization: CUDA unknown error - this may be due to an incorrectly set up environment, e.g. "
               "changing env variable CUDA_VISIBLE_DEVICES after program start. Setting the available devices to be zero.\n")
        assert head_id(log) == "cuda-init-unknown-error"


class TestCudaInitUnknownError:
    def test_control_cuda_visible_devices_printed_at_start(self):
        log = "CUDA_VISIBLE_DEVICES=0,1 (set before the program started)\nepoch 1 loss 0.6\n"
        assert "cuda-init-unknown-error" not in ids(log)

    def test_sibling_fabric_manager_not_ready(self):
        log = ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() "
               "that might have already set an error? Error 802: system not yet initialized\n")
        assert head_id(log) == "cuda-device-count-failed"


class TestCheckpointDeviceMap:
    def test_control_a_checkpoint_loaded_with_map_location(self):
        log = "loading checkpoint ckpt/last.pt with map_location=cuda:0\nresumed at step 1200\n"
        assert "checkpoint-device-map" not in ids(log)

    def test_sibling_an_invalid_device_ordinal(self):
        assert head_id("RuntimeError: CUDA error: invalid device ordinal\n") == "cuda-invalid-device-ordinal"

    def test_sibling_the_checkpoint_saved_on_another_gpu(self):
        log = ("RuntimeError: Attempting to deserialize object on CUDA device 1 but torch.cuda.device_count() is 1. Please use "
               "torch.load with map_location to map your storages to an existing device.\n")
        assert head_id(log) == "checkpoint-device-map"


class TestCudaIndexOutOfRange:
    def test_control_another_kernels_assertion_is_not_an_index(self):
        log = ("/pytorch/aten/src/ATen/native/cuda/MultinomialKernel.cu:112: binarySearchForMultinomial: block: [0,0,0], thread: "
               "[0,0,0] Assertion `cumdist[size - 1] > static_cast<scalar_t>(0)` failed.\n")
        assert "cuda-index-out-of-range" not in ids(log)

    def test_control_the_generic_device_assert_is_not_the_index(self):
        assert head_id("RuntimeError: CUDA error: device-side assert triggered\n") == "cuda-device-assert"

    def test_sibling_an_illegal_memory_access(self):
        assert head_id("RuntimeError: CUDA error: an illegal memory access was encountered\n") == "cuda-illegal-memory-access"

    def test_sibling_the_index_kernels_bounds_check(self):
        # megatron-881 in the corpus: the assert of aten's IndexKernel.cu
        log = ('../aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [22,0,0], thread: [64,0,0] Assertion '
               '`-sizes[i] <= index && index < sizes[i] && "index out of bounds"` failed.\n')
        assert head_id(log) == "cuda-index-out-of-range"


class TestCudaLaunchFailure:
    def test_control_a_kernel_launch_in_a_profile_is_healthy(self):
        log = "cudaLaunchKernel    12.4%    1.203ms    0.012ms    100 calls\nstep 1 loss 0.5\n"
        assert "cuda-launch-failure" not in ids(log)

    def test_sibling_an_illegal_memory_access(self):
        assert head_id("RuntimeError: CUDA error: an illegal memory access was encountered\n") == "cuda-illegal-memory-access"

    def test_sibling_the_launch_failure(self):
        assert head_id("RuntimeError: CUDA error: unspecified launch failure\n") == "cuda-launch-failure"


class TestCublasInitFailed:
    def test_control_cublas_workspace_setting_printed_at_start(self):
        log = "CUBLAS_WORKSPACE_CONFIG=:4096:8 (deterministic cuBLAS)\nstep 1 loss 0.5\n"
        assert "cublas-init-failed" not in ids(log)

    def test_sibling_a_gpu_out_of_memory(self):
        assert head_id("RuntimeError: CUDA error: out of memory\n") == "cuda-oom"

    def test_sibling_cublas_failing_to_start(self):
        log = "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`\n"
        assert head_id(log) == "cublas-init-failed"


# --- DDP ----------------------------------------------------------------------------------------


class TestDdpMarkedReadyTwice:
    def test_control_the_unused_parameter_error_is_not_ready_twice(self):
        log = ("RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error "
               "indicates that your module has parameters that were not used in producing loss.\n")
        assert "ddp-marked-ready-twice" not in ids(log)

    def test_sibling_the_static_graph_changed(self):
        log = ("RuntimeError: Your training graph has changed in this iteration, e.g., one parameter is unused in first iteration, "
               "but then got used in the second iteration. this is not compatible with static_graph set to True.\n")
        assert head_id(log) == "ddp-static-graph-changed"


class TestDdpDeviceIdsMultiDevice:
    def test_control_device_ids_in_a_replicas_frame(self):
        log = "    return parallel_apply(replicas, inputs, kwargs, self.device_ids[:len(replicas)])\n"
        assert "ddp-device-ids-multi-device" not in ids(log)

    def test_control_the_barrier_warning_naming_device_ids(self):
        log = ("[rank5]:[W427 17:25:37.358470470 ProcessGroupNCCL.cpp:4115] [PG ID 0 PG GUID 0 Rank 5]  using GPU 5 to perform barrier "
               "as devices used by this process are currently unknown. This can potentially cause a hang if this rank to GPU mapping "
               "is incorrect. You can pecify device_id in init_process_group() to force use of a particular device.\n")
        assert "ddp-device-ids-multi-device" not in ids(log)

    def test_sibling_dataparallels_first_device(self):
        log = "RuntimeError: module must have its parameters and buffers on device cuda:0 (device_ids[0]) but found one of them on device: cpu\n"
        assert head_id(log) == "dataparallel-module-not-on-first-device"


class TestDdpModelMismatch:
    def test_control_the_parameter_count_printed_at_start(self):
        log = "rank 0: model has 2247 params (124.4M elements)\nrank 3: model has 2247 params (124.4M elements)\n"
        assert "ddp-model-mismatch" not in ids(log)

    def test_sibling_a_collective_fingerprint_mismatch(self):
        log = ("RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint("
               "SequenceNumber=1OpType=BARRIER), but Rank 2 is running collective: CollectiveFingerPrint(SequenceNumber=0OpType=BARRIER).\n")
        assert head_id(log) == "collective-fingerprint-mismatch"


class TestDdpGradStrides:
    def test_control_a_real_reducer_error_is_no_harmless_warning(self):
        log = ("Parameter at index 753 has been marked as ready twice. This means that multiple autograd engine  hooks have fired for "
               "this particular parameter during this iteration.\n")
        assert "ddp-grad-strides" not in ids(log) and head_id(log) == "ddp-marked-ready-twice"

    def test_sibling_the_strides_warning_is_safe_to_ignore(self):
        log = ("[W reducer.cpp:313] Warning: Grad strides do not match bucket view strides. This may indicate grad was not created "
               "according to the gradient layout contract, or that the param's strides changed since DDP was constructed.  This is "
               "not an error, but may impair performance.\nepoch 1 loss 0.3\n")
        assert head_id(log) == "-" and finding(log, "ddp-grad-strides").evidence.get("safe_to_ignore")


class TestEnvVarDeprecated:
    def test_control_the_new_variable_printed_at_start(self):
        log = "TORCH_NCCL_ASYNC_ERROR_HANDLING=1\nstep 1 loss 1.0\n"
        assert "env-var-deprecated" not in ids(log)

    def test_sibling_the_deprecated_launcher(self):
        log = ("FutureWarning: The module torch.distributed.launch is deprecated\nand will be removed in future. Use torchrun.\n"
               "Note that --use-env is set by default in torchrun.\n")
        got = ids(log)
        assert "launcher-deprecated-launch" in got and "env-var-deprecated" not in got


class TestBarrierUnknownDevice:
    def test_control_the_barrier_with_device_ids_in_a_frame(self):
        log = "    dist.barrier(device_ids=[args.local_rank])\nstep 1 loss 1.0\n"
        assert "barrier-unknown-device" not in ids(log)

    def test_sibling_device_ids_refused_by_old_torch(self):
        assert head_id("TypeError: barrier() got an unexpected keyword argument 'device_ids'\n") == "barrier-device-ids-old-torch"


# --- DataLoader ---------------------------------------------------------------------------------


class TestDataloaderAncdata:
    def test_control_the_sharing_strategy_printed_at_start(self):
        log = "torch.multiprocessing sharing strategy: file_descriptor (ulimit -n 1024)\nepoch 1 loss 0.5\n"
        assert "dataloader-ancdata" not in ids(log)

    def test_sibling_too_many_open_files(self):
        assert head_id("OSError: [Errno 24] Too many open files\n") == "too-many-open-files"


class TestDataloaderTimeout:
    def test_control_the_timeout_setting_printed_at_start(self):
        log = "DataLoader(num_workers=8, timeout=300, persistent_workers=True)\nepoch 1 loss 0.5\n"
        assert "dataloader-timeout" not in ids(log)

    def test_sibling_a_worker_killed(self):
        assert head_id("RuntimeError: DataLoader worker (pid 30001) is killed by signal: Killed.\n") == "dataloader-worker-killed"

    def test_sibling_the_timeout(self):
        assert head_id("RuntimeError: DataLoader timed out after 300 seconds\n") == "dataloader-timeout"


class TestDataloaderSamplerShuffle:
    def test_control_the_sampler_printed_at_start(self):
        log = "DataLoader(sampler=DistributedSampler(shuffle=True), shuffle=False, batch_size=32)\nepoch 1 loss 0.5\n"
        assert "dataloader-sampler-shuffle" not in ids(log)

    def test_sibling_a_dataloader_timeout(self):
        assert head_id("RuntimeError: DataLoader timed out after 300 seconds\n") == "dataloader-timeout"


class TestDataloaderWorkerExited:
    def test_control_a_worker_killed_by_a_signal_is_its_own_verdict(self):
        assert head_id("RuntimeError: DataLoader worker (pid 30001) is killed by signal: Killed.\n") == "dataloader-worker-killed"

    def test_sibling_the_exit_explained_by_a_bus_error(self):
        log = ("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\n"
               "RuntimeError: DataLoader worker (pid 39424) exited unexpectedly with exit code 1. Details are lost due to "
               "multiprocessing. Rerunning with num_workers=0 may give better error trace.\n")
        assert head_id(log) == "dataloader-shm-bus-error"

    def test_sibling_the_exit_alone(self):
        assert head_id("RuntimeError: DataLoader worker (pid(s) 3216) exited unexpectedly\n") == "dataloader-worker-exited"


# --- gloo ---------------------------------------------------------------------------------------


class TestGlooHostnameUnresolvable:
    def test_control_gloo_interface_setting_printed_at_start(self):
        log = "GLOO_SOCKET_IFNAME=eth0 MASTER_ADDR=dgx-1.ai MASTER_PORT=29500\nstep 1 loss 1.0\n"
        assert "gloo-hostname-unresolvable" not in ids(log)

    def test_sibling_no_address_for_an_interface(self):
        log = "RuntimeError: [enforce fail at /pytorch/third_party/gloo/gloo/transport/tcp/device.cc:83] ifa != nullptr. Unable to find address for: ib0\n"
        assert head_id(log) == "gloo-no-address"

    def test_sibling_the_hostname(self):
        log = "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:127] rp != nullptr. Unable to find address for: dgx-1.ai\n"
        assert head_id(log) == "gloo-hostname-unresolvable"


class TestGlooNoAddress:
    def test_control_the_interface_named_at_start(self):
        log = "GLOO_SOCKET_IFNAME=ib0\nnode0:4242:4242 [0] NCCL INFO Bootstrap : Using ib0:10.0.0.1<0>\n"
        assert "gloo-no-address" not in ids(log)

    def test_sibling_a_hostname_that_does_not_resolve(self):
        log = "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:127] rp != nullptr. Unable to find address for: dgx-1.ai\n"
        assert head_id(log) == "gloo-hostname-unresolvable"


class TestGlooLoopbackFallback:
    def test_control_it_is_a_warning_while_the_job_runs(self):
        log = ("[rank8] Warning: Unable to resolve hostname to a (local) address. Using the loopback address as fallback. Manually set "
               "the network interface with GLOO_SOCKET_IFNAME\nepoch 1 loss 0.4\n")
        assert head_id(log) == "-"

    def test_sibling_the_loopback_refusing_the_mesh(self):
        log = ("[rank8] Warning: Unable to resolve hostname to a (local) address. Using the loopback address as fallback. Manually set "
               "the network interface with GLOO_SOCKET_IFNAME\n"
               "RuntimeError: Gloo connectFullMesh failed with [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:152] timed out "
               "connecting: SO_ERROR: Connection refused, remote=[127.0.0.1]:14215\n")
        assert head_id(log) == "gloo-loopback-fallback"


class TestGlooConnectFullMesh:
    def test_control_gloo_pairs_connecting_in_a_healthy_log(self):
        log = "INFO: gloo full mesh connected: 4 pairs via eth0\nepoch 1 loss 0.4\n"
        assert "gloo-connect-full-mesh" not in ids(log)

    def test_sibling_a_peer_that_closed(self):
        log = "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [10.0.0.2]:62112\n"
        assert head_id(log) == "gloo-peer-closed"

    def test_sibling_the_mesh_refused(self):
        log = ("RuntimeError: [/opt/conda/conda-bld/pytorch_1623448255797/work/third_party/gloo/gloo/transport/tcp/pair.cc:799] connect "
               "[192.168.0.222]:2226: Connection refused\n")
        assert head_id(log) == "gloo-connect-full-mesh"


class TestGlooSizeMismatch:
    def test_control_a_gloo_timeout_is_not_a_size_mismatch(self):
        log = "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms for recv operation to complete\n"
        assert "gloo-size-mismatch" not in ids(log)

    def test_sibling_nccls_message_truncated(self):
        log = ("node1:4242:4300 [0] NCCL WARN NET/Socket : peer 10.0.0.2<35021> message truncated : receiving 1048576 bytes instead of "
               "65536. If you believe your socket network is in healthy state, there may be a mismatch in collective sizes or "
               "environment settings (e.g. NCCL_PROTO, NCCL_ALGO) between ranks\n")
        assert head_id(log) == "nccl-collective-mismatch"

    def test_sibling_the_preamble_longer_than_the_buffer(self):
        log = "what():  [enforce fail at /opt/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:446] op.preamble.length <= op.nbytes. 256000 vs 128000\n"
        assert head_id(log) == "gloo-size-mismatch"


class TestLibuvMissing:
    def test_control_use_libuv_off_in_a_frame(self):
        assert "libuv-missing" not in ids("    store = TCPStore(host, port, world_size, is_master, use_libuv=False)\n")

    def test_control_use_libuv_set_at_start(self):
        assert "libuv-missing" not in ids("USE_LIBUV=0 torchrun --nproc_per_node 2 train.py\nstep 1 loss 1.0\n")

    def test_sibling_the_backend_not_built(self):
        assert head_id("RuntimeError: Distributed package doesn't have NCCL built in\n") == "backend-not-built"


# --- launchers ----------------------------------------------------------------------------------


class TestLauncherLocalRankArg:
    def test_control_an_unknown_torchrun_flag_is_its_own_verdict(self):
        log = "torchrun: error: unrecognized arguments: --nproc-per-node=1\n"
        assert "launcher-local-rank-arg" not in ids(log) and head_id(log) == "launcher-argument-unknown"

    def test_sibling_the_script_refusing_local_rank(self):
        assert head_id("gpt2_ft.py: error: unrecognized arguments: --local-rank=0\n") == "launcher-local-rank-arg"


class TestLauncherRedirectsUnsupported:
    def test_control_it_is_safe_to_ignore(self):
        log = "NOTE: Redirects are currently not supported in Windows or MacOs.\nepoch 1 loss 0.5\n"
        assert head_id(log) == "-" and finding(log, "launcher-redirects-unsupported").evidence.get("safe_to_ignore")

    def test_sibling_nccl_missing_on_that_platform(self):
        log = ("NOTE: Redirects are currently not supported in Windows or MacOs.\n"
               "RuntimeError: Distributed package doesn't have NCCL built in\n")
        assert head_id(log) == "backend-not-built"


class TestLauncherTerminated:
    def test_control_the_raise_line_in_the_traceback(self):
        log = '    raise SignalException(f"Process {os.getpid()} got signal: {sigval}", sigval=sigval)\n'
        assert "launcher-terminated" not in ids(log)

    def test_sibling_the_job_out_of_time(self):
        log = "slurmstepd: error: *** JOB 1234567 ON gpu-node-03 CANCELLED AT 2024-03-01T10:00:00 DUE TO TIME LIMIT ***\n"
        assert head_id(log) == "slurm-time-limit"

    def test_sibling_the_time_limit_that_sent_the_signal_leads_whatever_the_order(self):
        log = ("W1123 10:56:51.729000 27016 torch/distributed/elastic/agent/server/api.py:753] Received 15 death signal, shutting down workers\n"
               "slurmstepd: error: *** JOB 1234567 ON gpu-node-03 CANCELLED AT 2024-03-01T10:00:00 DUE TO TIME LIMIT ***\n")
        assert head_id(log) == "slurm-time-limit"
        assert finding(log, "launcher-terminated").evidence.get("consequence_of") == "slurm-time-limit"

    def test_sibling_the_agent_killed_with_sigterm(self):
        log = "torch.distributed.elastic.multiprocessing.api.SignalException: Process 27016 got signal: 15\n"
        assert head_id(log) == "launcher-terminated"


class TestSlurmTaskFailed:
    def test_control_an_allocation_refused_is_no_failed_task(self):
        assert "slurm-task-failed" not in ids("srun: error: Unable to allocate resources: Requested node configuration is not available\n")

    def test_control_srun_info_lines_are_healthy(self):
        log = "srun: job 1234567 queued and waiting for resources\nsrun: job 1234567 has been allocated resources\nstep 1 loss 1.0\n"
        assert "slurm-task-failed" not in ids(log)

    def test_sibling_the_task_failure_explained_by_the_oom(self):
        log = ("[rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.36 GiB. GPU 5 has a total capacity of 47.50 GiB "
               "of which 1.52 GiB is free. Including non-PyTorch memory, this process has 45.97 GiB memory in use.\n"
               "srun: error: gpu-node-03: task 5: Exited with exit code 1\n")
        assert head_id(log) == "cuda-oom"


class TestTorchrunRootCause:
    def test_control_the_phrase_in_prose_is_not_torchruns_block(self):
        log = "INFO: see the Root Cause section of the report for details\nepoch 1 loss 0.5\n"
        assert "torchrun-root-cause" not in ids(log)

    def test_sibling_the_error_it_summarises_leads(self):
        log = ("RuntimeError: CUDA error: an illegal memory access was encountered\n"
               "Root Cause (first observed failure):\n[0]:\n  time      : 2024-05-01_10:00:00\n  rank      : 1 (local_rank: 1)\n"
               "  exitcode  : 1 (pid: 4242)\n")
        assert head_id(log) == "cuda-illegal-memory-access"


class TestLauncherChildExit:
    def test_control_a_tool_the_job_ran_failing_is_no_training_process(self):
        log = "subprocess.CalledProcessError: Command '['nvidia-smi']' returned non-zero exit status 9.\n"
        assert "launcher-child-exit" not in ids(log)

    def test_sibling_ninja_failing_is_the_extension_build(self):
        log = "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.\n"
        assert head_id(log) == "extension-build-failed"

    def test_control_the_raise_line_in_the_traceback(self):
        log = "    raise subprocess.CalledProcessError(returncode=process.returncode,\n"
        assert "launcher-child-exit" not in ids(log)

    def test_sibling_the_childs_own_error_leads(self):
        log = ("RuntimeError: CUDA error: device-side assert triggered\n"
               "subprocess.CalledProcessError: Command '['/usr/bin/python3', 'train.py', '--config', 'a.yaml']' returned non-zero exit status 1.\n")
        assert head_id(log) == "cuda-device-assert"


class TestSpawnMainGuard:
    def test_control_the_main_guard_in_a_frame(self):
        log = "if __name__ == '__main__':\n    mp.spawn(main, nprocs=2)\nepoch 1 loss 0.5\n"
        assert "spawn-main-guard" not in ids(log)

    def test_sibling_lightning_with_cuda_already_initialised(self):
        log = ("RuntimeError: Lightning can't create new processes if CUDA is already initialized. Did you manually call `torch.cuda.*` "
               "functions, have moved the model to the device, or allocated memory on the GPU any other way?\n")
        assert head_id(log) == "lightning-cuda-initialized"


class TestLightningCudaInitialized:
    def test_control_lightnings_strategy_printed_at_start(self):
        log = "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2\nGPU available: True (cuda), used: True\n"
        assert "lightning-cuda-initialized" not in ids(log)

    def test_sibling_cuda_in_a_forked_child(self):
        log = "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method\n"
        assert head_id(log) == "cuda-fork-reinit"


class TestLightningDdpSpawnWorkers:
    def test_control_the_ddp_spawn_strategy_named_at_start(self):
        log = "Trainer(strategy='ddp_spawn', devices=2)\nGPU available: True (cuda), used: True\n"
        assert "lightning-ddp-spawn-workers" not in ids(log)

    def test_sibling_cuda_initialised_before_spawning(self):
        log = ("RuntimeError: Lightning can't create new processes if CUDA is already initialized. Did you manually call `torch.cuda.*` "
               "functions, have moved the model to the device, or allocated memory on the GPU any other way?\n")
        assert head_id(log) == "lightning-cuda-initialized"


class TestExceptionIgnoredAtExit:
    def test_control_a_real_assertion_error_is_no_exit_noise(self):
        log = TB + "AssertionError: Torch not compiled with CUDA enabled\n"
        assert "exception-ignored-at-exit" not in ids(log) and head_id(log) == "cuda-torch-cpu-build"

    def test_sibling_the_dataloaders_del_at_exit_is_safe(self):
        log = ("Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x152b2ae06520>\n"
               "Traceback (most recent call last):\nAssertionError: can only test a child process\n")
        assert head_id(log) == "-" and finding(log, "exception-ignored-at-exit").evidence.get("safe_to_ignore")
