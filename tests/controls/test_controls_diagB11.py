"""Controls and siblings for diagB11 (issue 35: the retired heldout10, entries 63..124). The classes are in
knowledge/patterns/classes11b.py, plus a native framework's CUDA check read as the out-of-memory it names
(patterns/cuda.py), a segmentation fault told by what the log shows of it (patterns/launcher.py) and a traceback pasted
as one inline-code span (knowledge/lines.py). `test_control_*` is the look-alike input that must not get the verdict,
`test_sibling_*` the nearest one that gets its own. Lines are real ones (threads named beside them)."""

from __future__ import annotations

import pytest
from test_controls_detect8 import TB, head, head_id

from gpudoctor import api
from gpudoctor.knowledge.lines import strip


def ids(text: str) -> list[str]:
    return [f.id for f in api.diagnose(text).findings]


class TestCudaLaunchTimeout:
    verdict = "cuda-launch-timeout"

    @pytest.mark.parametrize("line", [
        "RuntimeError: CUDA error: the launch timed out and was terminated",  # Visual-Attention-Network/SegNeXt#59
        "Check failed: error == cudaSuccess (6 vs. 0)  the launch timed out and was terminated",  # happynear/caffe-windows#250
        "numba.cuda.cudadrv.driver.CudaAPIError: [702] Call to cuMemcpyDtoH results in CUDA_ERROR_LAUNCH_TIMEOUT",  # numba/numba#4351
    ])
    def test_sibling_every_form_of_the_error_is_the_timeout(self, line):
        found = head(TB + line + "\n")
        assert found is not None and found.id == self.verdict and "watchdog" in found.why

    def test_control_a_collectives_timeout_is_no_kernel_stopped(self):
        log = ("[E ProcessGroupNCCL.cpp:828] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, "
               "Timeout(ms)=1800000) ran for 1800435 milliseconds before timing out.\n")
        assert self.verdict not in ids(log)

    def test_sibling_a_kernel_that_faulted_keeps_its_own(self):
        assert head_id(TB + "RuntimeError: CUDA error: an illegal memory access was encountered\n") == "cuda-illegal-memory-access"


class TestGpuArchCheckFailed:
    verdict = "gpu-arch-check-failed"

    @pytest.mark.parametrize("line,accepted", [
        ("RuntimeError: Expected is_sm90 || is_sm8x || is_sm75 to be true, but got false.", ["is_sm90", "is_sm8x", "is_sm75"]),  # MoFHeka/LLaMA-Megatron#5
        ("RuntimeError: Expected is_sm80 to be true, but got false.  (Could this error message be improved?  If so, please report an "
         "enhancement request to PyTorch.)", ["is_sm80"]),  # hiyouga/ChatGLM-Efficient-Tuning#200
    ])
    def test_sibling_the_check_names_the_architectures_it_accepts(self, line, accepted):
        found = head(TB + line + "\n")
        assert found is not None and found.id == self.verdict and found.evidence["accepted"] == accepted
        assert "enhancement request" not in found.fix  # torch's footer is no remedy

    def test_control_another_expected_true_check_is_not_the_gpu(self):
        log = TB + "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n"
        assert self.verdict not in ids(log)


class TestCublasCallRefused:
    verdict = "cublas-call-refused"
    # open-edge-platform/anomalib#762
    LINE = ("RuntimeError: CUDA error: CUBLAS_STATUS_INVALID_VALUE when calling `cublasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, b, "
            "ldb, &beta, c, ldc)`\n")

    @pytest.mark.parametrize("line,verdict", [
        (LINE, verdict),
        # cuBLAS failing on the GPU, or unable to start, keep their own answers
        (LINE.replace("INVALID_VALUE", "EXECUTION_FAILED"), "cublas-execution-failed"),
        ("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`\n", "cublas-init-failed"),
    ])
    def test_sibling_each_status_gets_its_answer(self, line, verdict):
        assert head_id(TB + line) == verdict

    def test_control_an_earlier_out_of_memory_is_what_the_call_reported(self):
        log = TB + "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n" + TB + self.LINE
        assert head_id(log) == "cuda-oom"


class TestCusolverFailed:
    verdict = "cusolver-failed"

    def test_sibling_a_failed_cusolver_call(self):
        # KAIST-VCLAB/sphere-stereo#9 (torch.inverse)
        found = head(TB + "RuntimeError: cusolver error: CUSOLVER_STATUS_INTERNAL_ERROR, when calling `cusolverDnCreate(handle)`\n")
        assert found is not None and found.id == self.verdict and found.evidence["status"] == "INTERNAL_ERROR"

    def test_control_a_matrix_that_is_not_positive_definite_is_the_inputs_property(self):
        log = TB + ("torch._C._LinAlgError: linalg.cholesky: The factorization could not be completed because the input is not "
                    "positive-definite (the leading minor of order 3 is not positive-definite).\n")
        assert self.verdict not in ids(log)


class TestSlurmAuthFailed:
    verdict = "slurm-auth-failed"

    def test_sibling_munge_unreachable_is_the_cause(self):
        # LilyDaytoy/OpenPVSG#17: srun of an mmdet training script on a node whose munged is not reachable
        log = ("srun: error: If munged is up, restart with --num-threads=10\n"
               'srun: error: Munge encode failed: Failed to access "/var/run/munge/munge.socket.2": No such file or directory\n'
               "srun: error: slurm_send_node_msg: auth_g_create: REQUEST_RESOURCE_ALLOCATION has authentication error\n")
        found = head(log)
        assert found is not None and found.id == self.verdict and found.evidence["socket"] == "/var/run/munge/munge.socket.2"

    @pytest.mark.parametrize("log", [
        "srun: error: If munged is up, restart with --num-threads=10\n",  # MUNGE's hint, printed before its failure
        "srun: error: Unable to allocate resources: Requested node configuration is not available\n",  # a request the scheduler cannot place
    ])
    def test_control_munges_hint_and_a_refused_allocation_are_not_authentication(self, log):
        assert self.verdict not in ids(log)


class TestSlurmCommandsMissing:
    verdict = "slurm-commands-missing"

    @pytest.mark.parametrize("line,command", [
        ('RuntimeError: Could not detect "srun", are you indeed on a slurm cluster?', "srun"),  # haoyi-duan/WorldScore#10
        ("FileNotFoundError: [Errno 2] No such file or directory: 'sbatch': 'sbatch'", "sbatch"),  # e2crawfo/auto_yolo#1
    ])
    def test_sibling_the_program_cannot_find_slurms_command(self, line, command):
        found = head(TB + line + "\n")
        assert found is not None and found.id == self.verdict and found.evidence["command"] == command

    @pytest.mark.parametrize("line,verdict", [
        ("/bin/bash: line 1: srun: command not found", "launcher-not-found"),  # the shell's own words
        ("FileNotFoundError: [Errno 2] No such file or directory: 'sbatch_logs/train.out'", "path-not-found"),  # a job's file
    ])
    def test_control_the_shells_words_and_a_missing_file_keep_their_own(self, line, verdict):
        assert head_id(TB + line + "\n") == verdict


class TestAccelerateMultiGpuOneGpu:
    verdict = "accelerate-multi-gpu-one-gpu"

    def test_sibling_the_launchers_configuration_names_one_gpu(self):
        # showlab/Tune-A-Video#96
        line = ("ValueError: Less than two GPU ids were configured and tried to run on on multiple GPUs. Please ensure at least two are "
                "specified for `--gpu_ids`, or use `--gpu_ids='all'`.\n")
        assert head_id(line) == self.verdict

    def test_control_the_training_scripts_own_yaml_naming_gpus_is_no_refusal(self):
        assert self.verdict not in ids("train_batch_size: 1\nmixed_precision: fp16\ngpu_ids: all\n")


class TestNvidiaSmiCommandRefused:
    verdict = "nvidia-smi-command-refused"

    @pytest.mark.parametrize("log,refused", [
        # keylase/nvidia-patch#89: nvidia-smi dmon on a GeForce GT 640
        ("# nvidia-smi dmon\nNot supported on the device(s)\nFailed to process command line\n", "the query is not supported on this GPU"),
        # cfregly/ai-performance-engineering#8, influxdata/telegraf#6573
        ("The -i command line argument must be used in conjunction with -n or -p.\n", "the command line's options are not a combination it takes"),
        ("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n", "the command line's options are not a combination it takes"),
    ])
    def test_sibling_each_refusal_is_told_apart(self, log, refused):
        found = head(log)
        assert found is not None and found.id == self.verdict and found.evidence["refused"] == refused

    def test_control_a_field_the_gpu_lacks_in_healthy_output_is_no_refusal(self):
        log = ("==============NVSMI LOG==============\nDriver Version                            : 510.06\n"
               "Attached GPUs                             : 1\n    MIG Mode\n        Current                           : [Not Supported]\n")
        assert self.verdict not in ids(log)

    def test_sibling_the_driver_refusing_nvidia_smi_keeps_its_own(self):
        assert head_id("Failed to initialize NVML: Driver/library version mismatch\n") == "nvml-driver-mismatch"


class TestNativeCheckFailed:
    verdict = "native-check-failed"

    @pytest.mark.parametrize("line,condition,values", [
        ("F0602 18:15:13.552311 13690 decode_bbox_layer.cpp:110] Check failed: keep_num > 0 (0 vs. 0)", "keep_num > 0", "0 vs. 0"),  # zhaoweicai/cascade-rcnn#18
        ("dgl._ffi.base.DGLError: [02:00:36] /opt/dgl/src/rpc/rpc.cc:484: Check failed: l_id < local_data_shape[0] (18446744073707713820 vs. 630098) : ",
         "l_id < local_data_shape[0]", "18446744073707713820 vs. 630098"),  # dmlc/dgl#6868
    ])
    def test_sibling_the_check_is_read_from_its_own_words_not_its_timestamp(self, line, condition, values):
        found = head(line + "\n*** Check failure stack trace: ***\n")
        assert found is not None and found.id == self.verdict
        assert (found.evidence["condition"], found.evidence["values"]) == (condition, values) and "message" not in found.evidence

    @pytest.mark.parametrize("log", [
        # a CUDA call's status in the same CHECK (caffe-windows#184) is the CUDA error's; glog's info line is no check
        "F0204 18:10:50.435636 15168 math_functions.hpp:176] Check failed: error == cudaSuccess (30 vs. 0)  unknown error\n",
        "I0602 18:15:13.552311 13690 solver.cpp:218] Iteration 100 (2.1 iter/s), loss = 0.53\n",
    ])
    def test_control_a_cuda_status_or_an_info_line_is_not_it(self, log):
        assert self.verdict not in ids(log)


class TestNpzArrayMissing:
    verdict = "npz-array-missing"

    def test_sibling_the_archive_lacks_the_array(self):
        assert head_id(TB + "KeyError: 'part is not a file in the archive'\n") == self.verdict  # ouusan/some-papers#43

    def test_control_a_dicts_missing_key_is_no_archives(self):
        assert self.verdict not in ids(TB + "KeyError: 'part'\n")


class TestSamplerZeroSamples:
    verdict = "sampler-zero-samples"

    @pytest.mark.parametrize("line", [
        "RuntimeError: cannot sample n_sample <= 0 samples",  # aqlaboratory/openfold#226
        "ValueError: num_samples should be a positive integer value, but got num_samples=0",  # zhou13/lcnn#64
    ])
    def test_sibling_an_empty_dataset_under_either_sampler(self, line):
        assert head_id(TB + line + "\n") == self.verdict

    def test_control_weights_that_sum_to_zero_are_no_empty_dataset(self):
        assert self.verdict not in ids(TB + "RuntimeError: invalid multinomial distribution (sum of probabilities <= 0)\n")


class TestCudaOom:
    """A native framework's CHECK of a CUDA call that ran out of memory (Caffe, MXNet) is the out-of-memory it names."""

    verdict = "cuda-oom"

    @pytest.mark.parametrize("log", [
        # dmlc/gluon-cv#1575 (MXNet) and Cysu/dgd_person_reid#17 (Caffe)
        "terminate called after throwing an instance of 'dmlc::Error'\n  what():  [15:00:54] /home/centos/mxnet/3rdparty/mshadow/mshadow/"
        "./stream_gpu-inl.h:217: Check failed: e == cudaSuccess: CUDA: out of memory\n",
        "F0110 18:01:08.005344 19573 syncedmem.cpp:51] Check failed: error == cudaSuccess (2 vs. 0)  out of memory\n",
    ])
    def test_sibling_the_frameworks_cuda_check_is_the_out_of_memory(self, log):
        assert head_id(log) == self.verdict

    def test_control_peer_access_in_the_same_check_is_no_out_of_memory(self):
        log = "F0317 11:50:21.572767 29807 p2p_sync.cpp:142] Check failed: error == cudaSuccess (51 vs. 0)  peer access has not been enabled\n"
        assert self.verdict not in ids(log)

    def test_sibling_another_status_in_the_check_keeps_its_own(self):
        # NVIDIA/caffe#76
        log = ("F1116 15:55:02.388101 30214 cudnn_conv_layer.cu:137] Check failed: error == cudaSuccess (77 vs. 0)  an illegal memory access "
               "was encountered\n")
        assert head_id(log) == "cuda-illegal-memory-access"


class TestLauncherSigsegv:
    """The segfault is told by what the log shows of it: the native frame where glog's report lists one, and no version
    mismatch where only a launcher's exit code is there."""

    verdict = "launcher-sigsegv"

    def test_sibling_the_native_stack_names_where_it_crashed(self):
        # BVLC/caffe#2114: glog's report of the crash, then the native frames
        log = ("*** SIGSEGV (@0x30) received by PID 4086 (TID 0x7ffb40f6f720) from PID 48; stack trace: ***\n"
               "    @       0x3d80c0f710 (unknown)\n"
               "    @           0x40d534 SolverContext::run()\n"
               "    @           0x408db2 main\n"
               "Segmentation fault (core dumped)\n")
        found = head(log)
        assert found is not None and found.id == self.verdict and found.evidence["crashed_in"] == "SolverContext::run()"

    def test_control_a_launchers_exit_code_alone_decides_no_version_mismatch(self):
        # AHupuJR/EFNet#17: only torchrun's line (the cause was dataset paths left at their defaults)
        found = head("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -11) local_rank: 0 (pid: 4242) of binary: /usr/bin/python\n")
        assert found is not None and found.id == self.verdict and "crashed_in" not in found.evidence
        assert "does not say which code" in found.why and "data paths" in found.fix

    def test_control_a_bus_error_in_glogs_words_is_no_segfault(self):
        log = "(pid=119) *** SIGBUS (@0x7f1ca25a2fe0) received by PID 119 (TID 0x7f23680c9740) from PID 18446744072138403808; stack trace: ***\n"
        assert self.verdict not in ids(log)


class TestInlineCodeTraceback:
    """Jun-CEN/Open-World-Semantic-Segmentation#3: a traceback pasted as one inline-code span, closed after its exception's name."""

    SPAN = ('`Traceback (most recent call last):\n  File "train_embedding.py", line 45, in train\n    loss, acc = segmentation_module(batch_data)\n'
            '  File "/home/u/anomaly/lib/nn/parallel/data_parallel.py", line 84, in _async_copy_stream\n    assert type(inputs) in (tuple, list)\n')

    def test_sibling_the_span_closed_after_the_exception_is_its_last_line(self):
        found = head(self.SPAN + "AssertionError`\n")
        assert found is not None and "AssertionError" in found.title and "cut" not in found.title

    def test_control_a_traceback_cut_inside_the_span_stays_cut(self):
        found = head(self.SPAN)
        assert found is not None and found.id == "unrecognised-failure" and "cut" in found.title

    def test_control_inline_code_that_opens_and_closes_on_the_line_keeps_its_words(self):
        assert strip("ValueError: Please ensure at least two are specified for `--gpu_ids`").text.endswith("`--gpu_ids`")
