"""Controls and siblings for diagA10 (issue 35, the retired heldout8 and heldout7): the wrong answers fixed by class (an
attribute DDP's own constructor read, a parent's signal handler relaying a child's error, a config container's missing
key blamed on a package, the decisive NCCL line and a quoted spawn error missed) and the classes of messages added in
knowledge/patterns/classes10a.py. `test_control_*` is the harmless or look-alike input that must not get the verdict,
`test_sibling_*` the nearest one that gets its own. Lines are real ones (threads named beside them)."""

from __future__ import annotations

from test_controls_detect8 import ENDED, TB, head, head_id, healthy

from gpudoctor import api

# pytorch/examples#253: torch 0.3's DDP constructor reading its own _module_copies
DDP_OWN_READ = (
    "Traceback (most recent call last):\n"
    '  File "distributed_imagenet_main.py", line 92, in main\n'
    "    model = torch.nn.parallel.DistributedDataParallel(model)\n"
    '  File "/home/andrew/ml/local/lib/python2.7/site-packages/torch/nn/parallel/distributed.py", line 124, in __init__\n'
    "    for param_tuple in zip(*map(lambda m: m.parameters(), self._module_copies)):\n"
    '  File "/home/andrew/ml/local/lib/python2.7/site-packages/torch/nn/modules/module.py", line 262, in __getattr__\n'
    "    type(self).__name__, name))\n"
    "AttributeError: 'DistributedDataParallel' object has no attribute '_module_copies'\n"
)


class TestDdpWrapperAttribute:
    """The attribute is read through the wrapper only when the user's code reads it; DDP's own code reading its own
    attribute (an older torch's constructor) is the library's exception, told as unrecognised with its line."""

    verdict = "ddp-wrapper-attribute"

    def test_control_the_wrappers_own_constructor_read_it(self):
        found = head(DDP_OWN_READ)
        assert found is not None and found.id == "unrecognised-failure"
        assert "_module_copies" in found.evidence["message"] and found.evidence["raised_by"] == "torch"

    def test_sibling_the_users_code_reads_it_through_the_wrapper(self):
        log = (TB + '  File "/x/site-packages/torch/nn/modules/module.py", line 1695, in __getattr__\n'
               "    raise AttributeError(f\"'{type(self).__name__}' object has no attribute '{name}'\")\n"
               "AttributeError: 'DistributedDataParallel' object has no attribute 'generate'\n")
        assert head_id(log) == "ddp-wrapper-attribute"


class TestPythonException:
    """A bare Exception raised in a parent's signal handler relays a child's traceback (OpenNMT-py/OpenNMT-py#887): it is
    no exception of the user's code; the child's traceback after it is the failure."""

    verdict = "python-exception"
    RELAY = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 22, in main\n'
        "    multi_main(opt)\n"
        '  File "/paddle/OpenNMT-py/onmt/train_multi.py", line 94, in signal_handler\n'
        "    raise Exception(msg)\n"
        "Exception:\n\n"
        "-- Tracebacks above this line can probably\n"
        "                 be ignored --\n\n"
    )

    def test_control_the_handlers_relay_is_not_the_users_exception(self):
        log = self.RELAY + ("Traceback (most recent call last):\n"
                            '  File "/paddle/OpenNMT-py/onmt/train_multi.py", line 52, in run\n'
                            "    single_main(opt)\n"
                            '  File "/paddle/OpenNMT-py/onmt/trainer.py", line 171, in train\n')
        found = head(log)
        assert found is not None and found.id == "unrecognised-failure" and found.evidence["first_line"] == 11

    def test_sibling_the_childs_own_exception_after_the_relay_is_the_failure(self):
        log = self.RELAY + ("Traceback (most recent call last):\n"
                            '  File "/paddle/OpenNMT-py/onmt/trainer.py", line 171, in train\n'
                            "    loss = self.compute(batch)\n"
                            "ValueError: lengths array has incorrect size\n")
        found = head(log)
        assert found is not None and found.evidence.get("exception", found.evidence.get("what")) == "ValueError"


class TestConfigKeyMissing:
    verdict = "config-key-missing"

    def test_control_python2_dict_method_on_a_config_container(self):
        # taoxugit/AttnGAN#84: Python 2 code, not a key the config lacks
        assert head_id(TB + "AttributeError: 'EasyDict' object has no attribute 'iteritems'\n") != self.verdict

    def test_sibling_a_key_the_config_lacks_is_no_package_to_upgrade(self):
        log = TB + ('  File "../pcdet/datasets/augmentor/database_sampler.py", line 35, in __init__\n'
                    "    sampler_cfg.DB_INFO_PATH[0] = sampler_cfg.BACKUP_DB_INFO['DB_INFO_PATH']\n"
                    "AttributeError: 'EasyDict' object has no attribute 'BACKUP_DB_INFO'\n")  # open-mmlab/OpenPCDet#1151
        found = head(log)
        assert found is not None and found.id == self.verdict and "pip install" not in found.fix and "'BACKUP_DB_INFO'" in found.fix

    def test_sibling_another_librarys_object_stays_an_api_mismatch(self):
        log = TB + ('  File "/x/site-packages/transformers/trainer.py", line 1400, in train\n'
                    "AttributeError: 'AdamW' object has no attribute 'train'\n")  # hiyouga/LlamaFactory#5647
        assert head_id(log) == "library-api-mismatch"


class TestNcclTopologySysfs:
    verdict = "nccl-topology-sysfs"

    def test_control_a_search_fallback_warning_and_a_vnic(self):
        log = ("graph/search.cc:1135 NCCL WARN Could not find a path for pattern 1, falling back to simple order\n"  # NVIDIA/NeMo-Run#266
               "NCCL INFO Topology detection: network path /sys/devices/virtual/net/eth0 is not a PCI device (vNIC). Attaching to first CPU\n"
               + ENDED)
        assert self.verdict not in [f.id for f in api.diagnose(log).findings] and healthy(log)

    def test_sibling_the_warning_before_the_system_error_chain_is_the_cause(self):
        log = ("I followed the instructions in ReadMe, and when trying to run train.py, I face NCCL error:\n"  # xg-chu/CrowdDet#86
               "d13186ffee3a:57:75 [0] misc/topo.cc:22 NCCL WARN Could not find real path of /sys/class/pci_bus/0000:02/../../0000:02:00.0\n"
               "d13186ffee3a:57:75 [0] NCCL INFO init.cc:876 -> 2\n")
        found = head(log)
        assert found is not None and found.id == self.verdict and found.evidence["returns"] == "2 (ncclSystemError)"


class TestCublasExecutionFailed:
    verdict = "cublas-execution-failed"

    def test_control_a_workspace_setting_line(self):
        assert healthy("cublas: using the CUBLAS_WORKSPACE_CONFIG=:4096:8 setting for deterministic execution\n" + ENDED)

    def test_sibling_cublas_that_could_not_start_is_its_own(self):
        assert head_id("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`\n") == "cublas-init-failed"

    def test_sibling_the_gemm_that_failed(self):
        found = head("RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, opb, m, n, k, "
                     "&alpha, a, lda, b, ldb, &beta, c, ldc)`\n")  # thu-coai/CDial-GPT#65
        assert found is not None and found.id == self.verdict and "cublasSgemm" in found.fix


class TestCudaInvalidLaunchConfiguration:
    verdict = "cuda-invalid-launch-configuration"

    def test_control_a_configuration_value_refused(self):
        assert head_id("ValueError: invalid configuration: `num_processes` must be a positive integer\n") != self.verdict

    def test_sibling_the_kernel_launch_refused(self):
        assert head_id(TB + "RuntimeError: CUDA error: invalid configuration argument\n") == self.verdict  # THUDM/LongBench#23


class TestGpuMonitorNoGpu:
    verdict = "gpu-monitor-no-gpu"

    def test_control_a_monitor_waiting_for_a_job(self):
        assert self.verdict not in [f.id for f in api.diagnose("There is no GPU to monitor on this node yet; waiting\n").findings]

    def test_sibling_nvtop_finding_none(self):
        log = "$ ./nvtop-3.2.0-x86_64.AppImage\nNo GPU to monitor.\n"  # Syllo/nvtop#392
        assert head_id(log) == self.verdict


class TestPaddleLaunchTrainerFailed:
    verdict = "paddle-launch-trainer-failed"

    def test_control_the_launchers_gpu_log_warning(self):
        log = "LAUNCH WARNING 2023-08-08 20:34:19,551 save gpu log failed\n" + ENDED  # PaddlePaddle/Paddle#56095
        assert self.verdict not in [f.id for f in api.diagnose(log).findings]

    def test_sibling_the_abort_of_a_trainer_names_its_log(self):
        log = ("INFO 2021-05-24 17:17:14,611 launch_utils.py:307] terminate all the procs\n"  # PaddlePaddle/Paddle#33074
               "ERROR 2021-05-24 17:17:14,611 launch_utils.py:545] ABORT!!! Out of all 4 trainers, the trainer process with "
               "rank=[3] was aborted. Please check its log.\n")
        found = api.diagnose(log).findings[0]
        assert found.id == self.verdict and "log/workerlog.3" in found.fix

    def test_sibling_the_container_line_names_the_log_and_the_signal(self):
        log = ("LAUNCH INFO 2022-10-25 15:17:31,067 Pod failed\nLAUNCH ERROR 2022-10-25 15:17:31,067 Container failed !!!\n"
               "Container rank 0 status failed cmd ['/usr/bin/python3.8', '-u', 'train.py'] code -6 log log/default.fpwuxo.0.log\n")
        found = api.diagnose(log).findings[0]  # PaddlePaddle/Paddle#47326
        assert found.id == self.verdict and "log/default.fpwuxo.0.log" in found.fix and "SIGABRT" in found.fix

    def test_sibling_a_trainers_own_error_before_it_is_the_cause(self):
        log = ("RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle)`\n"
               "LAUNCH ERROR 2022-10-25 15:17:31,067 Container failed !!!\n")
        assert head_id(log) == "cublas-execution-failed"


class TestUnpicklableObject:
    verdict = "unpicklable-object"

    def test_control_a_local_function_is_the_spawn_rules(self):
        assert head_id("AttributeError: Can't pickle local object 'main.<locals>.collate'\n") == "spawn-unpicklable-object"

    def test_sibling_a_lock_and_a_redefined_class(self):
        assert head_id("TypeError: can't pickle _thread.lock objects\n") == self.verdict  # pytorch/ignite#1091
        assert head_id("_pickle.PicklingError: Can't pickle <class 'nerfstudio.data.datamanagers. VanillaDataManager'>: it's not the "
                       "same object as nerfstudio.data.datamanagers.VanillaDataManager\n") == self.verdict  # nerfstudio#2176


class TestSpawnBadFileDescriptor:
    verdict = "spawn-bad-file-descriptor"

    def test_control_the_source_line_that_names_it(self):
        assert healthy("    fds_to_keep = sorted(self._fds)\n" + ENDED)

    def test_sibling_the_quoted_error_over_a_cut_traceback(self):
        log = ("I got error: `bad value(s) in fds_to_keep`.\nstarting 8 processes for FSDP training\n"  # eric-mitchell/direct-preference-optimization#14
               "Traceback (most recent call last):\n" '  File "/d2/dpo/train.py", line 111, in <module>\n')
        assert head_id(log) == self.verdict


class TestFsdpDeviceMismatch:
    """FSDP's check of device_id against the rank's current device, as torch prints it and as a person retypes it."""

    verdict = "fsdp-device-mismatch"

    def test_control_a_sentence_about_devices(self):
        log = "I wonder whether an inconsistent compute device setting matters on rank 3\n" + ENDED
        assert self.verdict not in [f.id for f in api.diagnose(log).findings]

    def test_sibling_the_message_retyped_in_prose(self):
        log = ("i run the finetune.py without lora and use the fsdp ,but there is a error, fsdp/_init_utils.py,line889 inconsistent "
               "compute device and'device_id ' on rank 3: cuda:0 vs cuda:3; i run the programmer in Single machine multi card\n")  # h2oai/h2ogpt#671
        assert head_id(log) == self.verdict


class TestPaddleMultiGpuCheckFailed:
    verdict = "paddle-multi-gpu-check-failed"

    def test_control_the_single_gpu_step_and_p2p_warnings(self):
        log = ("PaddlePaddle works well on 1 GPU.\n"  # PaddlePaddle/PaddleOCR#9313
               "W0307 10:05:35.871594 24496 parallel_executor.cc:666] Cannot enable P2P access from 0 to 1\n"
               "PaddlePaddle is installed successfully! Let's start deep learning with PaddlePaddle now.\n")
        assert self.verdict not in [f.id for f in api.diagnose(log).findings]

    def test_sibling_the_check_on_two_gpus_failed(self):
        log = "PaddlePaddle works well on 1 GPU.\nWARNING:root:PaddlePaddle meets some problem with 2 GPUs. This may be caused by:\n"
        assert head_id(log) == self.verdict


class TestPaddleLibraryVersionMismatch:
    verdict = "paddle-library-version-mismatch"

    def test_control_the_version_notice(self):
        log = "W0307 10:05:31.753669 24496 gpu_resources.cc:91] device: 0, cuDNN Version: 8.0.\n" + ENDED
        assert self.verdict not in [f.id for f in api.diagnose(log).findings]

    def test_sibling_the_build_and_the_machine_differ(self):
        log = ("W0808 20:36:32.951223 14459 gpu_resources.cc:217] WARNING: device: . The installed Paddle is compiled with CUDNN 8.2, but "
               "CUDNN version in your machine is 8.0, which may cause serious incompatible bug.\n")  # PaddlePaddle/Paddle#56095
        found = [f for f in api.diagnose(log).findings if f.id == self.verdict]
        assert found and found[0].evidence["built"] == "8.2" and found[0].evidence["found"] == "8.0"


class TestScriptArgumentsRefused:
    """Paddle's launcher report after a trainer's own error: the trainer's error leads (PaddlePaddle/PaddleOCR#3327)."""

    verdict = "script-arguments-refused"

    def test_control_the_launchers_report_alone(self):
        log = ("ERROR 2021-07-13 15:04:06,240 launch_utils.py:545] ABORT!!! Out of all 8 trainers, the trainer process with "
               "rank=[0, 1, 2, 3, 4, 5, 6, 7] was aborted. Please check its log.\n")
        assert api.diagnose(log).findings[0].id == "paddle-launch-trainer-failed"

    def test_sibling_the_trainers_argparse_error_before_it(self):
        log = ("train.py: error: unrecognized arguments: --gpus [2,3,4,6]\n"
               "INFO 2021-07-13 15:04:06,240 launch_utils.py:307] terminate all the procs\n"
               "ERROR 2021-07-13 15:04:06,240 launch_utils.py:545] ABORT!!! Out of all 8 trainers, the trainer process with "
               "rank=[0, 1, 2, 3, 4, 5, 6, 7] was aborted. Please check its log.\n")
        assert head_id(log) == self.verdict


class TestLauncherSigsegv:
    """The shell's report of a crashed process, with or without the space before "(core dumped)" (lmb-freiburg/demon#32):
    it is the failure, not a traceback header the paste cut."""

    verdict = "launcher-sigsegv"

    def test_control_a_sentence_about_a_segmentation_fault(self):
        log = "Is a segmentation fault (core dumped) expected when the dataset folder is missing?\n" + ENDED
        assert healthy(log)

    def test_sibling_the_report_without_its_space_after_a_cut_traceback(self):
        log = ("When I run python training.py, an errror message showed up:\nTraceback (most recent call last):\n...\n"
               "start iteration 0\nSegmentation fault(core dumped)\n")
        assert head_id(log) == self.verdict
        assert head_id("Bus error(core dumped)\n") == "launcher-sigbus"


class TestOnnxruntimeCudaProviderFailed:
    verdict = "onnxruntime-cuda-provider-failed"

    def test_control_the_providers_asked_for(self):
        log = "Available providers: ['CUDAExecutionProvider', 'CPUExecutionProvider']\n" + ENDED
        assert self.verdict not in [f.id for f in api.diagnose(log).findings]

    def test_sibling_the_provider_could_not_be_created(self):
        log = ("2022-01-31 20:57:03.234399301 [W:onnxruntime:Default, onnxruntime_pybind_state.cc:535 CreateExecutionProviderInstance] "
               "Failed to create CUDAExecutionProvider. Please reference https://onnxruntime.ai/docs/reference/execution-providers/"
               "CUDA-ExecutionProvider.html#requirements to ensure all dependencies are met.\n")  # Lednik7/CLIP-ONNX#2
        found = [f for f in api.diagnose(log).findings if f.id == self.verdict]
        assert found and found[0].evidence["provider"] == "CUDA"


class TestNcclUnhandledSystemError:
    """NCCL's result printed as its number by caffe2's CHECK (2 = ncclSystemError); and the system error explained by the
    topology warning before it."""

    verdict = "nccl-unhandled-system-error"

    def test_control_a_successful_status(self):
        log = "I0101 cuda_nccl_gpu.cc:24] status == ncclSuccess. 0 vs 0 checked\n" + ENDED
        assert self.verdict not in [f.id for f in api.diagnose(log).findings]

    def test_sibling_the_status_number_two(self):
        log = ("[E net_dag.cc:188] Exception from operator chain starting at '' (type 'NCCLAllreduce'): caffe2::EnforceNotMet: "
               "[enforce fail at cuda_nccl_gpu.cc:24] status == ncclSuccess. 2 vs 0.  Error at: /root/code\n")  # video-nonlocal-net#14
        assert head_id(log) == self.verdict

    def test_sibling_the_topology_warning_before_it_is_the_cause(self):
        log = ("d13186ffee3a:57:75 [0] misc/topo.cc:22 NCCL WARN Could not find real path of /sys/class/pci_bus/0000:02/../../0000:02:00.0\n"
               "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1275, unhandled system error, NCCL version 2.4.8\n")
        assert head_id(log) == "nccl-topology-sysfs"
