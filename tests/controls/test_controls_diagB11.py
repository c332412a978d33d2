"""Controls and siblings for diagB11 (issue 35: the retired heldout10, entries 63..124). The classes are in
knowledge/patterns/classes11b.py, plus a native framework's CUDA check read as the out-of-memory it names
(patterns/cuda.py) and a segmentation fault told by what the log shows of it (patterns/launcher.py). `test_control_*` is
the look-alike input that must not get the verdict, `test_sibling_*` the nearest one that gets its own. Lines are real
ones (threads named beside them)."""

from __future__ import annotations

import pytest
from test_controls_detect8 import TB, head, head_id

from gpudoctor import api
from gpudoctor.knowledge.lines import strip


def ids(text: str) -> list[str]:
    return [f.id for f in api.diagnose(text).findings]


# The look-alike inputs that must not get the verdict (the control of each class).
CONTROLS = [
    # a collective's timeout is not a kernel stopped for time
    ("[E ProcessGroupNCCL.cpp:828] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, "
     "Timeout(ms)=1800000) ran for 1800435 milliseconds before timing out.\n", "cuda-launch-timeout"),
    # another "Expected ... to be true" check is not the GPU's architecture
    (TB + "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n", "gpu-arch-check-failed"),
    # a matrix that is not positive-definite is the input's property, no library failure
    (TB + "torch._C._LinAlgError: linalg.cholesky: The factorization could not be completed because the input is not positive-definite "
     "(the leading minor of order 3 is not positive-definite).\n", "cusolver-failed"),
    # MUNGE's hint, printed before its failure, is no failure by itself; a request the scheduler cannot place is not authentication
    ("srun: error: If munged is up, restart with --num-threads=10\n", "slurm-auth-failed"),
    ("srun: error: Unable to allocate resources: Requested node configuration is not available\n", "slurm-auth-failed"),
    # BVLC/caffe#2114: peer access in the same CUDA check is no out-of-memory
    ("F0317 11:50:21.572767 29807 p2p_sync.cpp:142] Check failed: error == cudaSuccess (51 vs. 0)  peer access has not been enabled\n", "cuda-oom"),
    # a field the GPU lacks, in healthy `nvidia-smi -q` output, is no refused command (wsl#7852's excerpt has its like)
    ("==============NVSMI LOG==============\nDriver Version                            : 510.06\nAttached GPUs                             : 1\n"
     "    MIG Mode\n        Current                           : [Not Supported]\n", "nvidia-smi-command-refused"),
    # the training script's own YAML naming its GPUs is no launcher refusing them
    ("train_batch_size: 1\nmixed_precision: fp16\ngpu_ids: all\n", "accelerate-multi-gpu-one-gpu"),
    # a CUDA call's status in the same CHECK (heldout8's caffe-windows#184) and glog's info line are no native check of the code's own
    ("F0204 18:10:50.435636 15168 math_functions.hpp:176] Check failed: error == cudaSuccess (30 vs. 0)  unknown error\n", "native-check-failed"),
    ("I0602 18:15:13.552311 13690 solver.cpp:218] Iteration 100 (2.1 iter/s), loss = 0.53\n", "native-check-failed"),
    # a dict's missing key is no archive's; weights that sum to zero are no empty dataset
    (TB + "KeyError: 'part'\n", "npz-array-missing"),
    (TB + "RuntimeError: invalid multinomial distribution (sum of probabilities <= 0)\n", "sampler-zero-samples"),
    # ray's glog report of a bus error is not a segfault
    ("(pid=119) *** SIGBUS (@0x7f1ca25a2fe0) received by PID 119 (TID 0x7f23680c9740) from PID 18446744072138403808; stack trace: ***\n",
     "launcher-sigsegv"),
]


@pytest.mark.parametrize("log,verdict", CONTROLS)
def test_control_the_look_alike_does_not_get_the_verdict(log, verdict):
    assert verdict not in ids(log)


# The real lines of each class, and the nearest lines that get another answer (their siblings).
ANSWERS = [
    ("RuntimeError: CUDA error: the launch timed out and was terminated", "cuda-launch-timeout"),  # Visual-Attention-Network/SegNeXt#59
    ("Check failed: error == cudaSuccess (6 vs. 0)  the launch timed out and was terminated", "cuda-launch-timeout"),  # happynear/caffe-windows#250
    ("numba.cuda.cudadrv.driver.CudaAPIError: [702] Call to cuMemcpyDtoH results in CUDA_ERROR_LAUNCH_TIMEOUT", "cuda-launch-timeout"),  # numba/numba#4351
    ("RuntimeError: CUDA error: an illegal memory access was encountered", "cuda-illegal-memory-access"),  # a kernel that faulted
    ("RuntimeError: CUDA error: CUBLAS_STATUS_INVALID_VALUE when calling `cublasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, "
     "&beta, c, ldc)`", "cublas-call-refused"),  # open-edge-platform/anomalib#762
    ("RuntimeError: cusolver error: CUSOLVER_STATUS_INTERNAL_ERROR, when calling `cusolverDnCreate(handle)`", "cusolver-failed"),  # KAIST-VCLAB/sphere-stereo#9
    # cuBLAS failing on the GPU, or unable to start, keep their own answers
    ("RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, "
     "&beta, c, ldc)`", "cublas-execution-failed"),
    ("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`", "cublas-init-failed"),
    # dmlc/gluon-cv#1575 (MXNet) and Cysu/dgd_person_reid#17 (Caffe): a native framework's CHECK of a CUDA call that ran out of memory
    ("terminate called after throwing an instance of 'dmlc::Error'\n  what():  [15:00:54] /home/centos/mxnet/3rdparty/mshadow/mshadow/"
     "./stream_gpu-inl.h:217: Check failed: e == cudaSuccess: CUDA: out of memory", "cuda-oom"),
    ("F0110 18:01:08.005344 19573 syncedmem.cpp:51] Check failed: error == cudaSuccess (2 vs. 0)  out of memory", "cuda-oom"),
    # nvidia-smi refusing its command line (cfregly/ai-performance-engineering#8, influxdata/telegraf#6573), and the driver
    # refusing nvidia-smi, its sibling
    ("The -i command line argument must be used in conjunction with -n or -p.", "nvidia-smi-command-refused"),
    ("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.", "nvidia-smi-command-refused"),
    ("Failed to initialize NVML: Driver/library version mismatch", "nvml-driver-mismatch"),
    # a program driving Slurm without Slurm's commands (haoyi-duan/WorldScore#10, e2crawfo/auto_yolo#1); its siblings: the shell's
    # own "command not found" and a job's file that is missing
    ('RuntimeError: Could not detect "srun", are you indeed on a slurm cluster?', "slurm-commands-missing"),
    ("FileNotFoundError: [Errno 2] No such file or directory: 'sbatch': 'sbatch'", "slurm-commands-missing"),
    ("/bin/bash: line 1: srun: command not found", "launcher-not-found"),
    ("FileNotFoundError: [Errno 2] No such file or directory: 'sbatch_logs/train.out'", "path-not-found"),
    # showlab/Tune-A-Video#96: accelerate's MULTI_GPU configuration with one GPU id
    ("ValueError: Less than two GPU ids were configured and tried to run on on multiple GPUs. Please ensure at least two are specified "
     "for `--gpu_ids`, or use `--gpu_ids='all'`.", "accelerate-multi-gpu-one-gpu"),
    # an .npz without the array read (ouusan/some-papers#43), a sampler over an empty dataset (aqlaboratory/openfold#226, zhou13/lcnn#64)
    ("KeyError: 'part is not a file in the archive'", "npz-array-missing"),
    ("RuntimeError: cannot sample n_sample <= 0 samples", "sampler-zero-samples"),
    ("ValueError: num_samples should be a positive integer value, but got num_samples=0", "sampler-zero-samples"),
    # NVIDIA/caffe#76: another status in the same check keeps its own answer
    ("F1116 15:55:02.388101 30214 cudnn_conv_layer.cu:137] Check failed: error == cudaSuccess (77 vs. 0)  an illegal memory access was "
     "encountered", "cuda-illegal-memory-access"),
]


@pytest.mark.parametrize("line,verdict", ANSWERS)
def test_sibling_each_line_gets_its_own_answer(line, verdict):
    assert head_id(TB + line + "\n") == verdict


def test_sibling_an_earlier_out_of_memory_is_what_the_cublas_call_reported():
    log = (TB + "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
           + TB + "RuntimeError: CUDA error: CUBLAS_STATUS_INVALID_VALUE when calling `cublasSgemm( handle, opa, opb, m, n, k)`\n")
    assert head_id(log) == "cuda-oom"


@pytest.mark.parametrize("line,accepted", [
    ("RuntimeError: Expected is_sm90 || is_sm8x || is_sm75 to be true, but got false.", ["is_sm90", "is_sm8x", "is_sm75"]),  # MoFHeka/LLaMA-Megatron#5
    ("RuntimeError: Expected is_sm80 to be true, but got false.  (Could this error message be improved?  If so, please report an "
     "enhancement request to PyTorch.)", ["is_sm80"]),  # hiyouga/ChatGLM-Efficient-Tuning#200
])
def test_the_architecture_check_names_what_it_accepts(line, accepted):
    found = head(TB + line + "\n")
    assert found is not None and found.id == "gpu-arch-check-failed" and found.evidence["accepted"] == accepted
    assert "enhancement request" not in found.fix  # torch's footer is no remedy


def test_munge_unreachable_names_its_socket():
    # LilyDaytoy/OpenPVSG#17: srun of an mmdet training script on a node whose munged is not reachable
    log = ("srun: error: If munged is up, restart with --num-threads=10\n"
           'srun: error: Munge encode failed: Failed to access "/var/run/munge/munge.socket.2": No such file or directory\n'
           "srun: error: slurm_send_node_msg: auth_g_create: REQUEST_RESOURCE_ALLOCATION has authentication error\n")
    found = head(log)
    assert found is not None and found.id == "slurm-auth-failed" and found.evidence["socket"] == "/var/run/munge/munge.socket.2"


def test_the_native_stack_names_where_the_segfault_was():
    # BVLC/caffe#2114: glog's report of the crash, then the native frames
    log = ("*** SIGSEGV (@0x30) received by PID 4086 (TID 0x7ffb40f6f720) from PID 48; stack trace: ***\n"
           "    @       0x3d80c0f710 (unknown)\n"
           "    @           0x40d534 SolverContext::run()\n"
           "    @           0x408db2 main\n"
           "Segmentation fault (core dumped)\n")
    found = head(log)
    assert found is not None and found.id == "launcher-sigsegv" and found.evidence["crashed_in"] == "SolverContext::run()"


def test_control_a_launchers_exit_code_alone_decides_no_version_mismatch():
    # AHupuJR/EFNet#17: only torchrun's line (the cause was dataset paths left at their defaults)
    found = head("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -11) local_rank: 0 (pid: 4242) of binary: /usr/bin/python\n")
    assert found is not None and found.id == "launcher-sigsegv" and "crashed_in" not in found.evidence
    assert "does not say which code" in found.why and "data paths" in found.fix


def test_a_query_the_gpu_does_not_support_is_told_apart_from_a_wrong_command_line():
    # keylase/nvidia-patch#89: nvidia-smi dmon on a GeForce GT 640
    found = head("# nvidia-smi dmon\nNot supported on the device(s)\nFailed to process command line\n")
    assert found is not None and found.id == "nvidia-smi-command-refused"
    assert found.evidence["refused"] == "the query is not supported on this GPU"


# Jun-CEN/Open-World-Semantic-Segmentation#3: a traceback pasted as one inline-code span, closed after its exception's name
SPAN_TB = ('`Traceback (most recent call last):\n  File "train_embedding.py", line 45, in train\n    loss, acc = segmentation_module(batch_data)\n'
           '  File "/home/u/anomaly/lib/nn/parallel/data_parallel.py", line 84, in _async_copy_stream\n    assert type(inputs) in (tuple, list)\n')


def test_sibling_the_span_closed_after_the_exception_is_its_last_line():
    found = head(SPAN_TB + "AssertionError`\n")
    assert found is not None and "AssertionError" in found.title and "cut" not in found.title


def test_control_a_traceback_cut_inside_the_span_stays_cut():
    found = head(SPAN_TB)
    assert found is not None and found.id == "unrecognised-failure" and "cut" in found.title


def test_control_inline_code_that_opens_and_closes_on_the_line_keeps_its_words():
    assert strip("ValueError: Please ensure at least two are specified for `--gpu_ids`").text.endswith("`--gpu_ids`")


@pytest.mark.parametrize("line,condition,values", [
    ("F0602 18:15:13.552311 13690 decode_bbox_layer.cpp:110] Check failed: keep_num > 0 (0 vs. 0)", "keep_num > 0", "0 vs. 0"),  # zhaoweicai/cascade-rcnn#18
    ("dgl._ffi.base.DGLError: [02:00:36] /opt/dgl/src/rpc/rpc.cc:484: Check failed: l_id < local_data_shape[0] (18446744073707713820 vs. 630098) : ",
     "l_id < local_data_shape[0]", "18446744073707713820 vs. 630098"),  # dmlc/dgl#6868
])
def test_the_native_check_is_read_from_its_own_words_not_its_timestamp(line, condition, values):
    found = head(line + "\n*** Check failure stack trace: ***\n")
    assert found is not None and found.id == "native-check-failed"
    assert (found.evidence["condition"], found.evidence["values"]) == (condition, values) and "message" not in found.evidence
