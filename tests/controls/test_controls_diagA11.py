"""diagA11 (issue 35; the retired heldout10's first half and heldout9): each class test pairs a rule of
knowledge/patterns/classes11a.py, or a class of mistake fixed in a shared module, with its control (the look-alike that must not
get the verdict) and its sibling (the nearest input that gets its own). The mistakes: Python's library in a freely named
Windows environment taken for the user's code; torch's CUDA-initialisation warning told before the failure; a class left
abstract blamed on the line creating it; a triton of another release told as the program's own refusal. Real lines, threads
beside them."""

from __future__ import annotations

import pytest
from test_controls_detect8 import ENDED, TB, head, head_id, healthy

from gpudoctor import api
from gpudoctor.knowledge.libraries import package_of

# Ghailen-Ben-Achour/PointNet2_Segmentation#5: a DataLoader worker under spawn on Windows, its environment folder named freely
SPAWN_CHILD = (
    "Traceback (most recent call last):\n"
    '  File "<string>", line 1, in <module>\n'
    '  File "E:\\envs_1\\python3.8_tensor\\lib\\multiprocessing\\spawn.py", line 116, in spawn_main\n'
    "    exitcode = _main(fd, parent_sentinel)\n"
    '  File "E:\\envs_1\\python3.8_tensor\\lib\\multiprocessing\\spawn.py", line 126, in _main\n'
    "    self = reduction.pickle.load(from_parent)\n"
    "EOFError: Ran out of input\n"
)


class TestStandardLibraryFolder:
    """A Windows environment folder of any name holds Python's own library under lib\\; a project's own lib\\ is the user's."""

    @pytest.mark.parametrize("path", ["E:\\envs_1\\python3.8_tensor\\lib\\multiprocessing\\spawn.py",  # PointNet2_Segmentation#5
                                      "E:\\ananconda\\lib\\multiprocessing\\popen_spawn_win32.py"])  # translating-images-into-maps#8
    def test_sibling_the_standard_librarys_frames(self, path):
        assert package_of(path) == "python"

    @pytest.mark.parametrize("path", ["I:\\PointNet2_Segmentation-main\\train_semseg.py", "C:\\work\\seg\\lib\\models\\hrnet.py",
                                      "C:\\work\\seg\\lib\\utils\\utils.py"])
    def test_control_a_projects_own_lib_folder(self, path):
        assert package_of(path) is None


class TestSpawnChildReadNothing:
    verdict = "spawn-child-read-nothing"

    def test_sibling_the_spawned_child_found_its_pipe_empty(self):
        found = head(SPAWN_CHILD)
        assert found is not None and found.id == self.verdict and "num_workers=0" in found.fix
        assert "your code" not in found.title

    def test_control_an_empty_file_read_by_the_users_code(self):
        # the same line raised by pickle.load of an empty cache file in the user's own code: no spawned child
        log = TB + '  File "/home/u/data.py", line 41, in load_cache\n    return pickle.load(f)\nEOFError: Ran out of input\n'
        assert head_id(log) == "python-exception"

    def test_sibling_the_parents_own_pickling_error_is_the_cause(self):
        # jfzhang95/pytorch-deeplab-xception#220: the parent could not pickle the worker's dataset
        log = ('  File "E:\\ProgramData\\Anaconda3\\envs\\yolov5-master\\lib\\multiprocessing\\reduction.py", line 60, in dump\n'
               "    ForkingPickler(file, protocol).dump(obj)\n"
               "TypeError: can't pickle module objects\n" + SPAWN_CHILD)
        assert head_id(log) == "unpicklable-object"


class TestCudaInitWarningDriverTooOld:
    """torch warns and goes on on the CPU: a warning, not the failure; the error form stays cuda-driver-too-old."""

    verdict = "cuda-init-warning-driver-too-old"
    WARNING = ("/home/jsanders/.conda/envs/chemprop/lib/python3.11/site-packages/torch/cuda/__init__.py:749: UserWarning: CUDA "
               "initialization: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by "
               "downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx\n"
               "  return torch._C._cuda_getDeviceCount() if nvml_count < 0 else nvml_count\n")  # chemprop/chemprop#929

    def test_sibling_the_warning_alone_says_the_process_has_no_gpu(self):
        # ultralytics/yolov5#2389: the run went on on the CPU ("torch 1.7.1 CPU"): a GPU run that did not use the GPU
        found = head(self.WARNING + "YOLOv5 v4.0-14-gb75c432 torch 1.7.1 CPU\n")
        assert found is not None and found.id == self.verdict and "CPU" in found.title

    def test_sibling_an_error_the_log_speaks_of_but_does_not_show_is_named(self):
        # chemprop/chemprop#929: "I receive errors ...", the trace cut after the warning (the thread: a bug of predict.py)
        log = "I receive errors when using a model trained with --features-generators morgan_binary to make predictions.\n" + self.WARNING
        # (diagC12) a warning then, not the failure: the log does not decide, the spoken error is the lead
        report = api.diagnose(log)
        found = report.findings[0]
        assert found.id == self.verdict and found.severity.value == "warn" and "may be the failure, not this" in found.title
        assert head(log) is None and "log-inconclusive" in [f.id for f in report.findings]

    def test_sibling_a_later_failure_of_another_kind_is_the_cause(self):
        log = self.WARNING + TB + "ValueError: features_generators must be given for a model trained with them\n"
        assert head_id(log) == "python-exception"

    def test_sibling_the_error_form_is_the_failure(self):
        log = TB + "RuntimeError: The NVIDIA driver on your system is too old (found version 10010).\n"  # guo-pu/NanoDet-PyTorch#4
        assert head_id(log) == "cuda-driver-too-old"

    def test_control_a_driver_version_in_a_run_that_uses_the_gpu(self):
        # the healthy look-alike: the driver named, the GPU used, no warning from torch
        log = ("NVIDIA-SMI 470.57.02    Driver Version: 470.57.02    CUDA Version: 11.4\n"
               "YOLOv5 v4.0-14-gb75c432 torch 1.7.1 CUDA:0 (Tesla T4, 15109.75MB)\n"
               "     Epoch   gpu_mem       box       obj       cls     total   targets  img_size\n"
               "      0/299     3.21G   0.04582   0.02931   0.01672   0.09185        45       640\n")
        assert head_id(log) != self.verdict


class TestCaffeOutOfMemory:
    def test_sibling_caffes_cuda_check_of_an_allocation(self):
        log = "F0110 18:01:08.005344 19573 syncedmem.cpp:51] Check failed: error == cudaSuccess (2 vs. 0)  out of memory\n"  # Cysu/dgd_person_reid#17
        found = head(log)
        assert found is not None and found.id == "cuda-oom" and "mpiexec -n N" in found.fix

    def test_sibling_another_cuda_error_in_the_same_check(self):
        log = ("F0823 15:26:47.114929 10445 math_functions.cu:79] Check failed: error == cudaSuccess (77 vs. 0)  "
               "an illegal memory access was encountered\n")  # NVIDIA/caffe#76
        assert head_id(log) not in ("cuda-oom", "-")

    def test_control_caffes_memory_report_of_a_healthy_net(self):
        # Caffe logs the memory a net needs at every start: not a failure
        log = ("I0110 18:00:51.123456 19573 net.cpp:270] This network produces output loss\n"
               "I0110 18:00:51.123999 19573 net.cpp:283] Network initialization done.\n"
               "I0110 18:00:51.124001 19573 net.cpp:284] Memory required for data: 1089024\n")
        assert head_id(log) != "cuda-oom"


class TestAbstractClassInstantiated:
    verdict = "abstract-class-instantiated"

    def test_sibling_the_class_is_incomplete_not_the_line_that_creates_it(self):
        log = ('Traceback (most recent call last):\n  File "train-atari.py", line 258, in <module>\n'
               "    AsyncMultiGPUTrainer(config, predict_tower=predict_tower).train()\n"
               "TypeError: Can't instantiate abstract class AsyncMultiGPUTrainer with abstract methods get_predict_func\n")  # tensorpack#48
        found = head(log)
        assert found is not None and found.id == self.verdict and "get_predict_func" in found.fix and "train-atari.py" not in found.fix

    def test_sibling_python_312s_wording(self):
        log = TB + "TypeError: Can't instantiate abstract class ScitsrDataset without an implementation for abstract method 'len'\n"
        found = head(log)
        assert found is not None and found.id == self.verdict and "'len'" not in found.evidence["methods"]

    def test_control_another_type_error_at_the_same_line(self):
        assert head_id(TB + "TypeError: __init__() got an unexpected keyword argument 'predict_tower'\n") != self.verdict


class TestRendezvousRankMissing:
    verdict = "rendezvous-rank-missing"

    @pytest.mark.parametrize("line", [
        "ValueError: Error initializing torch.distributed using tcp:// rendezvous: rank parameter missing",  # CoinCheung/BiSeNet#233
        "ValueError: Error initializing torch.distributed using file:// rendezvous: rank parameter missing",  # salesforce/densecap#40
    ])
    def test_sibling_no_rank_given(self, line):
        found = head(TB + line + "\n")
        assert found is not None and found.id == self.verdict and "torchrun" in found.fix

    def test_sibling_env_rendezvous_is_the_launchers_environment(self):
        line = "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable RANK expected, but not set\n"
        assert head_id(TB + line) == "launcher-env-missing"

    def test_control_a_tcp_init_that_names_its_rank(self):
        assert healthy("init_process_group: init_method='tcp://127.0.0.1:23456', rank=0, world_size=2\n" + ENDED)


class TestTritonTorchMismatch:
    verdict = "triton-torch-mismatch"

    def test_sibling_a_triton_api_name_missing_is_not_the_programs_own_refusal(self):
        # deepbeepmeep/Wan2GP#641: Dynamo's debugging footer ("set TORCH_LOGS=...") is no remedy the message states
        log = ("The generation of the video has encountered an error, please check your terminal for more information. \\'AttributeError: "
               "type object \\'CompiledKernel\\' has no attribute \\'launch_enter_hook\\'\\n\\nSet TORCHDYNAMO_VERBOSE=1 for the internal "
               "stack trace (please do this especially if you\\'re reporting a bug to PyTorch). For even more developer context, set "
               'TORCH_LOGS="+dynamo"\\n\\\n')
        found = head(log)
        assert found is not None and found.id == self.verdict and "TORCH_LOGS" not in found.fix

    def test_sibling_triton_not_installed_is_a_missing_module(self):
        assert head_id(TB + "ModuleNotFoundError: No module named 'triton'\n") not in (self.verdict, "-")

    def test_control_a_healthy_line_naming_triton(self):
        assert healthy("compiled 12 kernels with triton 3.2.0 (CompiledKernel cache: ~/.triton/cache)\n" + ENDED)


class TestReplicaClasses:
    def test_sibling_the_module_not_on_the_first_device_id(self):
        log = ('  File "/home/ubuntu/miniconda3/envs/ID2/lib/python3.9/site-packages/torch/nn/parallel/comm.py", line 58, in broadcast_coalesced\n'
               "    return torch._C._broadcast_coalesced(tensors, devices, buffer_size)\n"
               "RuntimeError: All tensors must be on devices[0]: 0\n")  # SegmentationBLWX/cssegmentation#1
        assert head_id(TB + log) == "replicate-module-not-on-first-device"

    def test_sibling_two_devices_in_one_operation_stay_a_device_mismatch(self):
        line = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n"
        assert head_id(TB + line) == "ddp-device-mismatch"

    def test_sibling_replica_outputs_of_different_sizes(self):
        line = "RuntimeError: Gather got an input of invalid size: got [16, 24, 9490], but expected [16, 16, 9490]\n"  # sgrvinod/a-PyTorch-Tutorial-to-Image-Captioning#8
        found = head(TB + line)
        assert found is not None and found.id == "dataparallel-gather-size-mismatch" and "drop_last" in found.fix

    def test_control_a_concatenation_of_different_sizes_is_not_a_gather(self):
        line = "RuntimeError: Sizes of tensors must match except in dimension 1. Expected size 24 but got size 16 for tensor number 1 in the list.\n"
        assert head_id(TB + line) != "dataparallel-gather-size-mismatch"


class TestTorchCallArgumentsRefused:
    verdict = "torch-call-arguments-refused"

    @pytest.mark.parametrize("line", [
        "TypeError: sum received an invalid combination of arguments -got(dim=int, keepdim=bool) but expected one of   no arguments   *(int dim)",  # Cysu/open-reid#49
        "TypeError: new() received an invalid combination of arguments - got (numpy.int64, numpy.int64, int), but expected one of:",  # MRTNet#9
    ])
    def test_sibling_no_form_takes_these_arguments(self, line):
        found = head(TB + line + "\n")
        assert found is not None and found.id == self.verdict and "got (" in found.fix

    def test_control_an_unexpected_keyword_of_a_python_function(self):
        assert head_id(TB + "TypeError: chemprop_predict() got an unexpected keyword argument 'use_gpu'\n") != self.verdict


class TestLossLogitsLabelsMismatch:
    verdict = "loss-logits-labels-mismatch"

    def test_sibling_the_model_has_another_number_of_classes(self):
        line = "  (0) Invalid argument: logits and labels must be broadcastable: logits_size=[128,8631] labels_size=[128,501]\n"  # swghosh/DeepFace#2
        found = head(line)
        assert found is not None and found.id == self.verdict and "8631 classes, the labels have 501" in found.fix

    def test_sibling_the_batch_differs_not_the_classes(self):
        line = "InvalidArgumentError: logits and labels must be broadcastable: logits_size=[64,48] labels_size=[32,48]\n"  # tensorflow/models#6036
        found = head(line)
        assert found is not None and found.id == self.verdict and "the batch differs" in found.fix

    def test_control_keras_shape_check_is_not_this_kernels_message(self):
        assert head_id(TB + "ValueError: Shapes (None, 7) and (None, 8) are incompatible\n") != self.verdict


class TestArgumentChoicesEmpty:
    verdict = "argument-choices-empty"

    def test_sibling_a_gpu_argument_with_no_gpu_to_offer(self):
        line = "train.py: error: argument --gpu: invalid choice: 0 (choose from )\n"  # gfm-collab/chemprop-IR#3
        found = head(line)
        assert found is not None and found.id == self.verdict and "sees no CUDA GPU" in found.fix

    def test_control_a_gpu_not_among_the_listed_ones_is_another_refusal(self):
        line = "usage: train.py [-h] [--gpu {0,1,2,3}]\ntrain.py: error: argument --gpu: invalid choice: 4 (choose from 0, 1, 2, 3)\n"
        assert head_id(line) != self.verdict
