"""Controls and siblings for diagB14 (issue 35: the retired heldout13's lines that decide a cause): the classes in
knowledge/patterns/classes14b.py (Slurm could not start the step on a node, a rendezvous scheme this torch lacks, a custom
autograd Function's backward that does not fit its inputs) and the existing rules they widen (torch 0.4's env:// words,
MXNet's CUDA initialization error, dash's "srun: not found", a DataLoader worker's segfault, more ranks than GPUs).
`test_control_*` is the look-alike input that must not get the verdict, `test_sibling_*` the nearest one that gets its
own. Lines are real ones (threads named beside them)."""

from __future__ import annotations

import pytest
from test_controls_detect8 import TB, head, head_id

from gpudoctor import api


def ids(text: str) -> list[str]:
    return [f.id for f in api.diagnose(text).findings]


class TestSlurmStepStartFailed:
    verdict = "slurm-step-start-failed"

    @pytest.mark.parametrize("line,step", [
        ("srun: error: Task launch for 36.0 failed on node cn131: Job credential expired", "sync the clocks"),  # ai4d-iasc/trixie#58
        ("srun: error: Task launch for StepId=13.0 failed on node adas-ml-2: Invalid job credential", "munge.key"),  # NVIDIA/deepops#1179
        ("srun: error: Task launch for 23.0 failed on node hpc: Job prolog failed", "prolog"),  # mknoxnv/ubuntu-slurm#4
        # ArjunaCluster/ArjunaUsers#21: the batch script's copy gone from the node's spool folder
        ("slurmstepd: error: execve(): /tmp/slurmd/job2997814/slurm_script: No such file or directory", "spool folder"),
        ("slurmstepd: error: execve(): mkdir: No such file or directory", "not at that path"),  # firelab/windninja#624
    ])
    def test_sibling_what_refused_the_step_and_what_fixes_it(self, line, step):
        found = head(line + "\n")
        assert found is not None and found.id == self.verdict and step in found.fix and "STEP" not in found.fix

    def test_sibling_the_node_is_named(self):
        found = head("srun: error: Task launch for 36.0 failed on node cn131: Job credential expired\n")
        assert found is not None and found.evidence.get("node") == "cn131" and "--exclude=cn131" in found.fix

    @pytest.mark.parametrize("log", [
        # NVIDIA/deepops#1179: slurmstepd could not chdir and went on in /tmp
        "slurmstepd: error: couldn't chdir to `/root/burst-buffer': No such file or directory: going to /tmp instead\n",
        # pytorch/torchx#486: the program ran and failed; its own output says why
        "srun: error: compute-dy-t3small-1: task 0: Exited with exit code 1\n",
    ])
    def test_control_a_step_that_started(self, log):
        assert self.verdict not in ids(log)

    def test_sibling_munge_on_the_submitting_node_keeps_its_own(self):
        # LilyDaytoy/OpenPVSG#17: srun itself got no credential (no node was asked)
        log = ('srun: error: Munge encode failed: Failed to access "/var/run/munge/munge.socket.2": No such file or directory\n'
               "srun: error: slurm_send_node_msg: auth_g_create: REQUEST_RESOURCE_ALLOCATION has authentication error\n")
        assert head_id(log) == "slurm-auth-failed"


class TestRendezvousSchemeUnsupported:
    verdict = "rendezvous-scheme-unsupported"
    # pytorch/pytorch#53135 (win10): the frame and the line
    FRAME = ('  File "C:\\Users\\k\\anaconda3\\envs\\e\\lib\\site-packages\\torch\\distributed\\rendezvous.py", line 82, in rendezvous\n'
             '    raise RuntimeError("No rendezvous handler for {}://".format(result.scheme))\n')

    @pytest.mark.parametrize("scheme", ["env", "tcp"])  # CAMMA-public/SelfSupSurg#6: tcp:// on Windows
    def test_sibling_a_scheme_this_torch_lacks(self, scheme):
        found = head(TB + self.FRAME + f"RuntimeError: No rendezvous handler for {scheme}://\n")
        assert found is not None and found.id == self.verdict and 'backend="gloo"' in found.fix
        assert found.evidence.get("scheme") == scheme

    def test_sibling_quoted_in_a_sentence(self):
        # NVlabs/Deep_Object_Pose#319: the error said in the user's own words
        line = "When I use python -m torch.distributed.launch --nproc_per_node=1 train.py, I got RuntimeError: No rendezvous handler for env://\n"
        assert head_id(line) == self.verdict

    def test_sibling_the_backend_not_built_keeps_its_own(self):
        assert head_id(TB + "RuntimeError: Distributed package doesn't have NCCL built in\n") == "backend-not-built"

    def test_control_the_env_rendezvous_missing_its_variables(self):
        # the handler exists and ran: the launcher's variables are missing (another verdict)
        log = TB + "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable RANK expected, but not set\n"
        assert head_id(log) == "launcher-env-missing"


class TestAutogradInvalidGradient:
    verdict = "autograd-invalid-gradient"
    BACKWARD = ('  File "/home/u/envs/gs/lib/python3.9/site-packages/torch/autograd/__init__.py", line 200, in backward\n'
                "    Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass\n")

    @pytest.mark.parametrize("message,step", [
        # hbb1/2d-gaussian-splatting#165, VITA-Group/FSGS#59: no Gaussians left
        ("Function _RasterizeGaussiansBackward returned an invalid gradient at index 2 - got [0, 0, 3] but expected shape compatible "
         "with [0, 16, 3]", "no Gaussians are left"),
        # hbb1/2d-gaussian-splatting#43: 2DGS takes two scales
        ("Function _RasterizeGaussiansBackward returned an invalid gradient at index 5 - got [231550, 2] but expected shape "
         "compatible with [231550, 3]", "repository's own"),
        # 1zb/pytorch-image-comp-rnn#4: a Function written for an older torch
        ("function SignBackward returned an incorrect number of gradients (expected 2, got 1)", "exactly 2 values"),
    ])
    def test_sibling_what_the_backward_returned(self, message, step):
        found = head(TB + self.BACKWARD + f"RuntimeError: {message}\n")
        assert found is not None and found.id == self.verdict and step in found.fix and "STEP" not in found.fix

    @pytest.mark.parametrize("line", [
        # the shape check of the gradient given to tensor.backward(gradient=...): the caller's (ngxbac/GAIN#2)
        "RuntimeError: invalid gradient at index 0 - expected shape [] but got [10, 2]\n",
        "RuntimeError: Mismatch in shape: grad_output[0] has a shape of torch.Size([2]) and output[0] has a shape of torch.Size([])\n",
    ])
    def test_control_a_gradient_the_caller_passed(self, line):
        assert self.verdict not in ids(TB + self.BACKWARD + line)


class TestWidenedRules:
    def test_sibling_torch_04s_env_words_are_the_launchers_variables(self):
        # STVIR/pysot#60: train.py run in PyCharm, no launcher
        line = ("RuntimeError: rank is not set but it is required for env:// init method at /opt/conda/conda-bld/pytorch_1524590031827/"
                "work/torch/lib/THD/process_group/General.cpp:17\n")
        found = head(line)
        assert found is not None and found.id == "launcher-env-missing" and "torchrun" in found.fix

    def test_control_a_rank_print(self):
        assert "launcher-env-missing" not in ids("rank is not set yet, waiting for the launcher\nepoch 1 loss 0.3\n")

    def test_sibling_mxnets_cuda_initialization_error_is_the_fork(self):
        # bengouyy/mxnet_mtcnn_face_detection#41: the detector used from multiprocessing Pool workers (the pool's relay above
        # the error shows the fork: knowledge/forked.py)
        line = ("multiprocessing.pool.RemoteTraceback: \n"
                "mxnet.base.MXNetError: [19:18:11] src/storage/storage.cc:65: Check failed: e == cudaSuccess || e == "
                "cudaErrorCudartUnloading CUDA: initialization error\n")
        found = head(line)
        assert found is not None and found.id == "cuda-fork-reinit" and "spawn" in found.fix

    def test_control_mxnets_out_of_memory_is_not_the_fork(self):
        line = ("mxnet.base.MXNetError: [09:29:48] src/storage/./pooled_storage_manager.h:143: cudaMalloc failed: out of memory\n")
        assert head_id(line) != "cuda-fork-reinit"

    def test_sibling_dashs_srun_not_found_is_no_slurm_cluster(self):
        # zhiyuanyou/SAFECount#16: quoted in a sentence, as the thread has it
        found = head('When i sh train.sh, there are "train.sh: 1: srun: not found\n')
        assert found is not None and found.id == "launcher-not-found" and "Slurm cluster" in found.fix

    def test_control_a_scripts_missing_compiler_is_not_the_launcher(self):
        assert "launcher-not-found" not in ids("build.sh: 4: nvcc: not found\n")

    @pytest.mark.parametrize("signal,step", [("Segmentation fault", "num_workers=0"), ("Killed", "dmesg")])
    def test_sibling_a_workers_signal_names_its_own_step(self, signal, step):
        # Matrix-ASC/DeLA#12 (a segfault in the dataset's C++ grid subsampling); the OOM killer's Killed
        found = head(TB + f"RuntimeError: DataLoader worker (pid 971351) is killed by signal: {signal}.\n")
        assert found is not None and found.id == "dataloader-worker-killed" and step in found.fix

    def test_sibling_duplicate_gpu_names_the_process_count(self):
        # facebookresearch/ViewDiff#24: accelerate's 4 processes on a one-GPU machine
        found = head("Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 1000\n")
        assert found is not None and found.id == "nccl-duplicate-gpu" and "--num_processes" in found.fix


class TestTensorflowGpuNotVisible:
    verdict = "tensorflow-gpu-not-visible"
    KERAS = ("ValueError: To call `multi_gpu_model` with `gpus=2`, we expect the following devices to be available: ['/cpu:0', "
             "'/gpu:0', '/gpu:1']. However this machine only has: {have}. Try reducing `gpus`.\n")

    @pytest.mark.parametrize("have,step", [
        ("[u'/cpu:0']", "no GPU devices"),  # fizyr/keras-retinanet#436
        ("['/cpu:0', '/gpu:0']", "gpus=1"),  # deepfakes/faceswap#150 (one GPU)
        ("['/device:CPU:0', '/device:GPU:0', '/device:GPU:1']", "Keras release made for this TensorFlow"),  # keras-team/keras#8220
    ])
    def test_sibling_the_devices_listed_decide_why(self, have, step):
        found = head(TB + self.KERAS.format(have=have))
        assert found is not None and found.id == self.verdict and step in found.fix and "STEP" not in found.fix

    def test_sibling_tensorflows_placer_with_xla_devices_only(self):
        # LiyaoTang/contrastBoundary#16: XLA_GPU is no GPU TensorFlow registered
        line = ("tensorflow.python.framework.errors_impl.InvalidArgumentError: Cannot assign a device for operation gpu_0/L2Loss: "
                "{{node gpu_0/L2Loss}}was explicitly assigned to /device:GPU:0 but available devices are [ /job:localhost/replica:0/"
                "task:0/device:CPU:0, /job:localhost/replica:0/task:0/device:XLA_GPU:0 ]. Make sure the device specification refers "
                "to a valid device.\n")
        found = head(TB + line)
        assert found is not None and found.id == self.verdict and found.evidence.get("visible") == "0"

    def test_control_an_op_without_a_gpu_kernel(self):
        # tensorflow/models#4548: the GPU is registered; the operation has no GPU kernel (soft placement)
        line = ("InvalidArgumentError (see above for traceback): Cannot assign a device for operation 'InceptionV4/Logits/Predictions': "
                "Could not satisfy explicit device specification '/device:GPU:0' because no supported kernel for GPU devices is available.\n")
        assert self.verdict not in ids(TB + line)


def test_sibling_ddp_given_no_gpu_says_lightnings_gpus_count():
    # ShannonAI/mrc-for-flat-nested-ner#128: --gpus="0" (GPU available: True, used: False), then DDP's device_ids [None]
    log = ("GPU available: True, used: False\n" + TB +
           "ValueError: DistributedDataParallel device_ids and output_device arguments only work with single-device/multiple-device GPU "
           "modules or CPU modules, but got device_ids [None], output_device None, and module parameters {device(type='cpu')}.\n")
    found = head(log)
    assert found is not None and found.id == "ddp-device-ids-multi-device" and "gpus=1" in found.fix


class TestMsvcCompilerNotFound:
    verdict = "msvc-compiler-not-found"

    @pytest.mark.parametrize("line", [
        "subprocess.CalledProcessError: Command '['where', 'cl']' returned non-zero exit status 1.",  # Ree1s/IDM#4
        "nvcc fatal   : Cannot find compiler 'cl.exe' in PATH",  # elda27/pydrr#6
    ])
    def test_sibling_no_msvc_where_an_extension_is_built(self, line):
        found = head(TB + line + "\n")
        assert found is not None and found.id == self.verdict and "Desktop development with C++" in found.fix

    def test_sibling_cl_that_ran_and_failed_keeps_its_own(self):
        # IDEA-Research/GroundingDINO#356: cl.exe was found and failed on the code
        line = ("error: command 'C:\\\\Program Files (x86)\\\\Microsoft Visual Studio\\\\2022\\\\BuildTools\\\\VC\\\\Tools\\\\MSVC\\\\14.33.31629"
                "\\\\bin\\\\HostX86\\\\x86\\\\cl.exe' failed with exit code 2\n")
        assert head_id(line) not in ("-", self.verdict)

    def test_control_torchs_warning_alone(self):
        # setuptools may still find MSVC itself after torch's warning (NVIDIA/apex#521): not a failure alone
        line = "UserWarning: Error checking compiler version for cl: [WinError 2] The system cannot find the file specified\n"
        assert self.verdict not in ids(line)


@pytest.mark.parametrize("have,step", [
    ("/job:localhost/replica:0/task:0/cpu:0", "no GPU devices"),  # tensorflow/tensorflow#8093 (cuInit failed)
    ("/job:localhost/replica:0/task:0/device:CPU:0, /job:localhost/replica:0/task:0/device:GPU:0", "TensorFlow sees 1"),  # GPU:1 on one GPU
])
def test_sibling_tensorflows_placer_counts_the_gpu_it_was_pinned_to(have, step):
    line = ("tensorflow.python.framework.errors_impl.InvalidArgumentError: Cannot assign a device to node 'x': Could not satisfy explicit "
            f"device specification '/device:GPU:1' because no devices matching that specification are registered in this process; "
            f"available devices: {have}\n")
    found = head(TB + line)
    assert found is not None and found.id == "tensorflow-gpu-not-visible" and step in found.fix


class TestConvInputChannelsMismatch:
    verdict = "conv-input-channels-mismatch"

    @pytest.mark.parametrize("message,step", [
        # pavancm/CONTRIQUE#19: grayscale images in the dataset
        ("Given groups=1, weight of size [64, 3, 7, 7], expected input[1, 1, 224, 224] to have 3 channels, but got 1 channels instead",
         "convert('RGB')"),
        # CompVis/latent-diffusion#159: the inpainting config's mask channel
        ("Given groups=1, weight of size [256, 7, 3, 3], expected input[4, 6, 64, 64] to have 7 channels, but got 6 channels instead",
         "mask or conditioning channel"),
        # tamarott/ASAPNet#10: torch 0.4's wording, the label channels of the dataset options
        ("Given groups=1, weight of size 64 13 3 3, expected input[1, 3, 256, 256] to have 13 channels, but got 3 channels instead",
         "configured input channels (13)"),
        ("Given groups=1, weight of size [32, 3, 3, 3], expected input[1, 416, 416, 3] to have 3 channels, but got 416 channels instead",
         "permute(0, 3, 1, 2)"),
        ("Expected 4-dimensional input for 4-dimensional weight [64, 3, 7, 7], but got 3-dimensional input of size [3, 224, 224] instead",
         "unsqueeze(0)"),
    ])
    def test_sibling_the_numbers_decide_the_step(self, message, step):
        found = head(TB + f"RuntimeError: {message}\n")
        assert found is not None and found.id == self.verdict and step in found.fix and "STEP" not in found.fix

    def test_sibling_a_linear_layers_shapes_keep_their_class(self):
        line = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x512 and 2048x10)\n"
        assert self.verdict not in ids(TB + line)

    def test_control_a_model_summary_that_prints_channels(self):
        log = "Conv2d(3, 64, kernel_size=(7, 7)) expected input channels: 3, got images with 3 channels\nepoch 1 loss 0.41\n"
        assert self.verdict not in ids(log)


def test_sibling_an_extensions_illegal_access_names_the_device_guard():
    # pytorch/extension-cpp#18: the extension's tensors on cuda:1, its kernels launched on the current device
    found = head(TB + "RuntimeError: cuda runtime error (77) : an illegal memory access was encountered at "
                 "/opt/pytorch/aten/src/THC/generic/THCTensorCopy.cpp:70\n")
    assert found is not None and found.id == "cuda-illegal-memory-access" and "device guard" in found.fix


class TestSdpaNoAvailableKernel:
    verdict = "sdpa-no-available-kernel"
    # lucidrains/MEGABYTE-pytorch#6: the project's flash attention on a GPU (or inputs) it does not take
    FRAME = '  File ".../MEGABYTE_pytorch/attend.py", line 111, in flash_attn\n    out = F.scaled_dot_product_attention(\n'

    def test_sibling_no_kernel_left_for_the_inputs(self):
        found = head(TB + self.FRAME + "RuntimeError: No available kernel.  Aborting execution.\n")
        assert found is not None and found.id == self.verdict and "flash=False" in found.fix

    def test_sibling_kernels_not_built_for_the_gpu_keep_their_own(self):
        found = head(TB + "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
        assert found is not None and found.id != self.verdict

    def test_control_the_warnings_of_a_run_that_falls_back(self):
        # the warning alone: the math kernel took over (Andromeda#9 shows them before a failure; alone they are a lead)
        log = (".../attend.py:168: UserWarning: Memory efficient kernel not used because: (Triggered internally at "
               "../aten/src/ATen/native/transformers/cuda/sdp_utils.h:545.)\n  out = F.scaled_dot_product_attention(\nstep 10 loss 2.31\n")
        assert self.verdict not in ids(log)
