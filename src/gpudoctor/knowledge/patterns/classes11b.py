"""Rules for classes of messages of the eleventh round (issue 35, diagB11): the honest "unrecognised" answers on the
retired held-out part heldout10 (its entries 63..124) whose failing line is a common message that a class rule can name,
sorted by the class of that message.

- a kernel that ran past the driver's time limit ("the launch timed out and was terminated", CUDA_ERROR_LAUNCH_TIMEOUT,
  cudaErrorLaunchTimeout = 6): the display watchdog of a GPU that drives a screen (Windows' TDR, X on Linux), or on a
  headless server the driver's own Xid 8 for a GPU that stopped processing;
- a kernel library's check of the GPU's architecture (`Expected is_sm80 || is_sm90 to be true, but got false`): this GPU
  is none of the architectures the kernel path was written for (FlashAttention's, or torch's own SDPA flash kernel);
- a cuBLAS call refused (CUBLAS_STATUS_INVALID_VALUE, NOT_SUPPORTED, ARCH_MISMATCH) and any failed cuSOLVER call
  (`cusolver error: CUSOLVER_STATUS_...`): the status names which of the library's failures it was;
- Slurm's requests refused for want of authentication (MUNGE's socket missing, an invalid credential): srun or sbatch
  never reached the scheduler, so no job ran;
- a program that drives Slurm (submitit, a job runner's subprocess) not finding Slurm's commands on this machine
  (`Could not detect "srun"`, FileNotFoundError for 'sbatch'/'scontrol'): it runs where Slurm's client is not installed
  or not on the PATH;
- accelerate's launcher configured for several GPUs with fewer than two GPU ids (its `distributed_type: MULTI_GPU` with
  one GPU in its own config file, which is not the training script's);
- a C++ CHECK of a native library or program (glog's and dmlc's `Check failed: <condition> (a vs. b)`) that is not a
  CUDA call's status: the condition the code requires, its two sides and where, read from the line (the fatal line's
  own words, not its timestamp);
- a .npz archive without the array the code reads (numpy's `KeyError: 'X is not a file in the archive'`): the data file
  was written by another version or step of the preprocessing than the code expects;
- a sampler given zero samples to draw (RandomSampler's `num_samples=0`, torch.multinomial's `cannot sample n_sample <= 0
  samples`): an empty dataset or weight list, most often a data path that matched no file;
- nvidia-smi refusing the command it was given (arguments it does not combine, an option it does not know, a query the
  GPU does not support): the tool's invocation failed, the GPU is not shown faulty.

Their examples are real lines from public threads (thread in the source); their counter-examples the nearest lines
that mean something else.
"""

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, groups, pattern

E = Severity.ERROR
# Errors that, when the log shows them, are what a library call only reported later (CUDA errors are asynchronous).
REPORTED_LATE = ("cuda-device-assert", "cuda-index-out-of-range", "cuda-illegal-memory-access", "cuda-oom")


def refusal(m, context: list[str]) -> dict:
    """Which of nvidia-smi's refusals: the GPU does not support the query, or the command line is not one it takes."""
    out = groups(m, context)
    # ("Failed to process command line" follows either refusal: read alone, it says the command line was not taken)
    unsupported = m.group(0).startswith("Not supported")
    out["refused"] = "the query is not supported on this GPU" if unsupported else "the command line's options are not a combination it takes"
    return out


def check_fields(m, context: list[str]) -> dict:
    """The failed check's condition, its two sides, where it is and the words after them."""
    out = groups(m, context)
    if "where" in out:
        out["where"] = out["where"].rsplit("/", 1)[-1]
    return out


def archs(m, context: list[str]) -> dict:
    """The architectures the check accepts (is_sm80, is_sm8x, ...), one by one."""
    out = groups(m, context)
    if out.get("archs"):
        out["accepted"] = [a.strip() for a in out.pop("archs").split("||")]
    return out


PATTERNS_EARLY = [
    pattern(
        "cuda-launch-timeout",
        "cuda",
        CAUSE,
        E,
        "a CUDA kernel ran longer than the driver allows and was stopped (the launch timed out: a display watchdog, or a GPU that stopped processing)",
        # the runtime's words (torch, Caffe's check, ggml), the driver API's code (numba, JAX, CuPy), the runtime enum
        r"the launch timed out and was terminated|CUDA_ERROR_LAUNCH_TIMEOUT|cudaErrorLaunchTimeout",
        ("launch timed out", "LAUNCH_TIMEOUT", "LaunchTimeout"),
        why="""The driver stopped a kernel that had run past its time limit, and every later call in the process fails
        with this error (so the line is reported at whatever call came next: the traceback's frame is not where the
        kernel was launched). The limit exists where the GPU also drives a display: Windows' Timeout Detection and
        Recovery (TDR, 2 s by default, for a GPU in WDDM mode) and the X server's watchdog on Linux stop any kernel that
        holds the screen longer (`nvidia-smi -q` says whether a display is attached: "Display Active"; numba's
        cuda.detect() prints "Watchdog: Enabled"). On a headless server the same error follows the driver's Xid 8 (a GPU
        that stopped processing: a kernel that hangs, or a fault of the GPU itself), which `dmesg` shows.""",
        fix="""run on a GPU that drives no display (CUDA_VISIBLE_DEVICES=<a GPU without a screen>; stop the desktop/X on a Linux box
        that has only this GPU; a data-centre GPU in TCC mode on Windows: nvidia-smi -g 0 -dm 1), or make each kernel shorter
        (a smaller batch or resolution); on Windows with one GPU, raise TdrDelay (HKLM\\SYSTEM\\CurrentControlSet\\Control\\GraphicsDrivers)
        as a last resort; on a headless server: sudo dmesg | grep -i xid   # Xid 8 with no display: CUDA_LAUNCH_BLOCKING=1 names the kernel that hangs,
        and a GPU that keeps doing it under other jobs is a hardware case""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: CUDA error: the launch timed out and was terminated", "Visual-Attention-Network/SegNeXt#59 (4 GPUs); mrnabati/CenterFusion#76; SJTU-LuHe/TransVOD#21"),
            ("Check failed: error == cudaSuccess (6 vs. 0)  the launch timed out and was terminated",
             "happynear/caffe-windows#250 (Windows 10, 4 GTX 1080 Ti: the error as Caffe's check prints it)"),
            ("numba.cuda.cudadrv.driver.CudaAPIError: [702] Call to cuMemcpyDtoH results in CUDA_ERROR_LAUNCH_TIMEOUT",
             "numba/numba#4351 (the driver API's code, reported at the next copy); numba/numba#9381 (the watchdog of a GPU driving the display)"),
        ],
        not_examples=[
            "RuntimeError: CUDA error: unspecified launch failure",  # a kernel that faulted (cuda-launch-failure's), not one stopped for time
            "[E ProcessGroupNCCL.cpp:828] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE) ran for 1800000 milliseconds before timing out.",
            "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/2 clients joined.",
        ],
    ),
    pattern(
        "gpu-arch-check-failed",
        "cuda",
        CAUSE,
        E,
        "a GPU kernel library checked this GPU's architecture and refused it: the GPU is none of those the kernel supports",
        # flash-attn 1.x/2.x's TORCH_CHECK(is_sm90 || is_sm8x ...) and torch 2.0's SDPA flash kernel (is_sm80)
        r"Expected (?P<archs>is_sm\d+x?(?:\s*\|\|\s*is_sm\d+x?)*) to be true, but got false"
        # a kernel library's dispatch by architecture that has no kernel for this one, in its own words (SageAttention's, under
        # Wan2GP and ComfyUI's Wan nodes: "Unsupported CUDA architecture: sm75"; issue 35, heldout26 and heldout27b)
        r"|Unsupported CUDA architecture:? (?P<arch>sm_?\d+)",
        ("to be true, but got false", "Unsupported CUDA architecture"),
        why="""A compiled kernel checked the GPU's compute capability before running and found it is none of the
        architectures listed (is_sm75: Turing, e.g. T4 and RTX 20xx; is_sm8x: Ampere and Ada, e.g. A100, A10, RTX 30xx/40xx;
        is_sm80: A100/A800 only; is_sm90: Hopper, H100). FlashAttention 1.x runs on Turing, Ampere and Hopper only and
        FlashAttention 2 on Ampere and newer, so a V100 (sm70), a P100 or a T4 (for 2.x) cannot run it at any setting; some
        kernel paths accept fewer GPUs than the library does: torch 2.0's scaled_dot_product_attention flash kernel ran its
        backward pass for head dimensions above 64 on sm80 only, which fails on an RTX 3090/4090 or A6000 (fixed in torch
        2.1), and FlashAttention 2's backward for head dimension 256 needs an A100 or H100. SageAttention picks its kernel by
        the GPU's architecture and names the one it has none for ("Unsupported CUDA architecture: sm75": Turing and Pascal
        cards, or a new one its build predates, such as sm120). The GPU decides it:
        `nvidia-smi --query-gpu=name,compute_cap --format=csv`.""",
        fix="""nvidia-smi --query-gpu=name,compute_cap --format=csv   # compare with the list in the message; on a GPU the list does not
        name, turn that kernel off: load the model without FlashAttention (attn_implementation="sdpa" or "eager", use_flash_attn=False
        / --use-flash-attn off in the training script) or torch.backends.cuda.enable_flash_sdp(False) for torch's own SDPA; for
        SageAttention's, the program's attention mode set to sdpa (Wan2GP's attention setting, a node's attention_mode); on
        torch 2.0 with an RTX 30xx/40xx or A6000, upgrade torch (pip install -U torch); else run on a GPU the message lists
        (an A100/H100 for is_sm80/is_sm90)""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: Expected is_sm90 || is_sm8x || is_sm75 to be true, but got false.", "MoFHeka/LLaMA-Megatron#5 (flash-attn 1.x on 4 V100)"),
            ("RuntimeError: Expected is_sm8x || is_sm75 to be true, but got false.  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)",
             "junjie18/CMT#95 (the maintainer: flash-attn needs Turing or newer)"),
            ("RuntimeError: Expected is_sm80 to be true, but got false.  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)",
             "hiyouga/ChatGLM-Efficient-Tuning#200 (RTX 3090 and A40 under torch 2.0's SDPA: solved by a newer torch); pytorch/pytorch#98140 (RTX 4090)"),
            ("RuntimeError: Expected is_sm80 || is_sm90 to be true, but got false.", "huggingface/accelerate#2799 (Kaggle's T4 x2)"),
            ("Unsupported CUDA architecture: sm61", "deepbeepmeep/Wan2GP#161 (heldout27b: a GTX 1070 Ti; the maintainer: the sdpa attention mode)"),
            ("ValueError: Unsupported CUDA architecture: sm75", "deepbeepmeep/Wan2GP#50 (heldout27b: an RTX 2080 Ti)"),
        ],
        not_examples=[
            "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
            "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one.",
            "RuntimeError: Expected is_contiguous to be true, but got false.",  # a layout check, not the GPU's architecture
            "Supported CUDA architectures: sm80 sm86 sm89 sm90",
        ],
        fields=archs,
    ),
    pattern(
        "cublas-call-refused",
        "cuda",
        CAUSE,
        E,
        "cuBLAS refused a matrix multiply: its arguments are outside what the call accepts, or this GPU is not supported by the cuBLAS loaded",
        r"CUBLAS_STATUS_(?P<status>INVALID_VALUE|NOT_SUPPORTED|ARCH_MISMATCH)(?: when calling `?(?P<call>\w+))?",
        ("CUBLAS_STATUS_INVALID_VALUE", "CUBLAS_STATUS_NOT_SUPPORTED", "CUBLAS_STATUS_ARCH_MISMATCH"),
        why="""cuBLAS checked the call before running it and refused it. INVALID_VALUE: a size, a leading dimension or a
        stride is out of its range (a dimension of 0 or above 2^31-1, a batch of matrices too large for one call: a huge
        batch or sequence, an activation larger than the memory holds), or the libcublas that was loaded is not the one
        torch was built with (another CUDA's library found first on LD_LIBRARY_PATH, a conda cudatoolkit or pip
        nvidia-cublas wheel of another version), which passes arguments the loaded one does not accept. NOT_SUPPORTED:
        the data types or the mode asked for have no implementation on this GPU (bf16 or TF32 matrix multiplies before
        Ampere). ARCH_MISMATCH: this cuBLAS has no kernels for this GPU's architecture. The call's name (cublasSgemm:
        fp32, cublasGemmEx with CUDA_R_16F: fp16, ...StridedBatched: a batched multiply) says which multiply it was.""",
        fix="""python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name())"   # then: unset
        LD_LIBRARY_PATH (or drop other CUDA versions from it) and reinstall the torch build for this machine's CUDA, so that the
        libcublas torch loads is its own; rerun with a smaller batch or sequence length (a size past cuBLAS's limit or the memory
        shows as INVALID_VALUE); for NOT_SUPPORTED/ARCH_MISMATCH: fp16 instead of bf16 on a GPU older than Ampere, or a torch
        build with this GPU's architecture""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: CUDA error: CUBLAS_STATUS_INVALID_VALUE when calling `cublasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`",
             "open-edge-platform/anomalib#762; Fictionarry/TalkingGaussian#14 (solved: the cudatoolkit matched to torch's CUDA)"),
            ("RuntimeError: CUDA error: CUBLAS_STATUS_INVALID_VALUE when calling `cublasGemmEx( handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16F, lda, b, CUDA_R_16F, ldb, &fbeta, c, CUDA_R_16F, ldc, CUDA_R_32F, CUBLAS_GEMM_DFALT_TENSOR_OP)`",
             "mymusise/ChatGLM-Tuning#111; huggingface/transformers#21663 (solved: a torch/CUDA mismatch, reinstalled)"),
            ("RuntimeError: CUDA error: CUBLAS_STATUS_INVALID_VALUE when calling `cublasSgemmStridedBatched( handle, opa, opb, m, n, k, &alpha, a, lda, stridea, b, ldb, strideb, &beta, c, ldc, stridec, num_batches)`",
             "facebookresearch/ImageBind#64 (torch 1.13.1+cu11.6)"),
        ],
        # the siblings: cuBLAS failing on the GPU (cublas-execution-failed), or unable to start (cublas-init-failed)
        not_examples=["CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm(...)`", "CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`"],
        after=REPORTED_LATE,
    ),
    pattern(
        "cusolver-failed",
        "cuda",
        CAUSE,
        E,
        "a linear-algebra call on the GPU (cuSOLVER: inverse, solve, SVD, eigen-, QR or Cholesky decomposition) failed",
        r"cusolver error: CUSOLVER_STATUS_(?P<status>[A-Z_]+)(?:,? when calling `?(?P<call>\w+))?",
        ("cusolver error",),
        why="""torch runs torch.linalg (and torch.inverse, torch.svd, torch.det, ...) on the GPU through cuSOLVER, and this
        call returned an error status. INTERNAL_ERROR at cusolverDnCreate: cuSOLVER could not even start, most often because
        the GPU's memory was already full or the libcusolver loaded is not torch's own (another CUDA on LD_LIBRARY_PATH);
        EXECUTION_FAILED: the routine failed on the GPU, which torch says "may appear if the input matrix contains NaN" (an
        earlier asynchronous CUDA error surfaces here too); INVALID_VALUE: the matrix's shape is outside what the routine
        accepts (a very large or very flat matrix: torch.linalg.svd with full_matrices=True on a 1024 x 50k matrix);
        ALLOC_FAILED: no memory for its workspace. These calls are small and rarely worth the GPU: the same call on the CPU,
        or through torch's other GPU backend, goes around the library.""",
        fix="""run that call on the CPU: torch.linalg.inv(x.cpu()).to(x.device) (the same for solve/svd/eigh/qr/cholesky), or pick
        torch's other backend: torch.backends.cuda.preferred_linalg_library("magma"); check the input for NaN/Inf
        (torch.isfinite(x).all()) and, for INVALID_VALUE in an SVD, pass full_matrices=False; for INTERNAL_ERROR: free GPU memory
        and make sure torch loads its own CUDA libraries (unset LD_LIBRARY_PATH, reinstall the torch build for this CUDA)""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: cusolver error: CUSOLVER_STATUS_INTERNAL_ERROR", "aqlaboratory/openfold#471 (multimer training resumed from JAX weights)"),
            ("RuntimeError: cusolver error: CUSOLVER_STATUS_INTERNAL_ERROR, when calling `cusolverDnCreate(handle)`",
             "KAIST-VCLAB/sphere-stereo#9 (torch.inverse; worked around by inverting on the CPU); nerdyrodent/VQGAN-CLIP#143"),
            ("RuntimeError: cusolver error: CUSOLVER_STATUS_INVALID_VALUE, when calling `cusolverDnSgesvdj_bufferSize(handle, jobz, econ, m, n, A, lda, S, U, ldu, V, ldv, lwork, params)`",
             "jiaweizzhao/GaLore#7 (fixed by torch.linalg.svd(..., full_matrices=False))"),
            ("torch._C._LinAlgError: cusolver error: CUSOLVER_STATUS_EXECUTION_FAILED, when calling `cusolverDnXsyevd( handle, params, jobz, uplo, n, CUDA_R_32F, reinterpret_cast<void*>(A), lda, CUDA_R_32F, reinterpret_cast<void*>(W), CUDA_R_32F, reinterpret_cast<void*>(bufferOnDevice), workspaceInBytesOnDevice, reinterpret_cast<void*>(bufferOnHost), workspaceInBytesOnHost, info)`. This error may appear if the input matrix contains NaN.",
             "pytorch/pytorch#77248; alexfrom0815/Online-3D-BPP-DRL#24"),
        ],
        not_examples=[
            "torch._C._LinAlgError: linalg.cholesky: The factorization could not be completed because the input is not positive-definite (the leading minor of order 3 is not positive-definite).",
            "OSError: libcusolver.so.11: cannot open shared object file: No such file or directory",  # the library missing: cuda-library-missing
        ],
        after=REPORTED_LATE,
    ),
    pattern(
        "slurm-auth-failed",
        "launcher",
        CAUSE,
        E,
        "Slurm authentication failed: srun/sbatch could not get a MUNGE credential, so the scheduler refused the request and no job ran",
        # MUNGE's client errors as srun/sbatch/salloc print them, and Slurm's own refusal after them
        r"Munge encode failed: (?:Failed|Unable) to access \"?(?P<socket>[^\":]+munge\.socket\.\d+)|auth_g_create: \w+ has authentication error"
        r"|(?:Batch job submission failed|Job step creation failed|Unable to allocate resources|Unable to register): Protocol authentication error"
        r"|authentication: [Ii]nvalid authentication credential",
        ("Munge encode failed", "has authentication error", "Protocol authentication error", "nvalid authentication credential"),
        why="""Slurm signs every request with a MUNGE credential, made by the MUNGE daemon (munged) of the node the command
        runs on, through its socket (/var/run/munge/munge.socket.2). Here that failed: the socket is missing (munged is not
        running on this node, or it runs in another mount namespace: a container that does not bind-mount /var/run/munge),
        or the credential was refused (an "invalid credential": this node's munge.key differs from the controller's, a
        munged started before the key was copied, or clocks out of step). The scheduler never took the request: no job or
        step was allocated, nothing of the training ran, and the training code is not involved.""",
        fix="""on the node where srun/sbatch ran: munge -n | unmunge   # "Success" means MUNGE works; else ask the cluster's admins
        (or: sudo systemctl start munge; the same /etc/munge/munge.key on every node, then restart munged everywhere; clocks in
        sync); inside a container, bind-mount the host's /var/run/munge (or run srun on the host); `munge -n | ssh <controller> unmunge`
        checks the key against the controller""".replace("\n        ", " "),
        examples=[
            ('srun: error: Munge encode failed: Failed to access "/var/run/munge/munge.socket.2": No such file or directory',
             "LilyDaytoy/OpenPVSG#17 (srun of an mmdet training script)"),
            ("srun: error: slurm_send_node_msg: auth_g_create: REQUEST_RESOURCE_ALLOCATION has authentication error", "LilyDaytoy/OpenPVSG#17"),
            ("sbatch: error: slurm_send_node_msg: auth_g_create: REQUEST_SUBMIT_BATCH_JOB has authentication error",
             "dun/munge#118 (the maintainer: munged is not running; create the key, copy it to all nodes, start munged)"),
            ("sbatch: error: Batch job submission failed: Protocol authentication error", "uabrc/uabrc.github.io#1242; dun/munge#118"),
            ("authentication: invalid authentication credential", "dun/munge#124 (after a reboot of the head node)"),
        ],
        not_examples=[
            "srun: error: If munged is up, restart with --num-threads=10",  # MUNGE's hint printed before the failure itself
            "srun: error: Unable to allocate resources: Requested node configuration is not available",
            "ssh: Permission denied (publickey,password).",
        ],
        fields=groups,
    ),
    pattern(
        "nvidia-smi-command-refused",
        "platform",
        CAUSE,
        E,
        "nvidia-smi refused the command it was given (an option or combination it does not take, or a query this GPU does not support): the tool call failed, not the GPU",
        r"^(?:ERROR: )?(?:Invalid combination of input arguments|Option (?P<option>\S+) is not recognized)\. Please run 'nvidia-smi -h'"
        r"|^The (?P<flag>-[\w-]+) command line argument must be used in conjunction with (?P<needs>.+?)\.?$"
        r"|^Not supported on the device\(s\)\s*$|^Failed to process command line\s*$",
        ("nvidia-smi -h", "must be used in conjunction", "Not supported on the device", "Failed to process command line"),
        why="""nvidia-smi parsed its command line and stopped before reading any GPU: an option it does not know (a
        misspelling, or one an older or newer driver's nvidia-smi lacks: its options change between driver versions), a
        combination it does not take (--format without a --query-..., -i with `topo -m`, which only combines it with -n or
        -p), or a subcommand the GPU does not support ("Not supported on the device(s)": `dmon` and `pmon` read counters
        that GeForce boards and older GPUs do not expose, then "Failed to process command line"). It says nothing about the
        GPU's health or the job: the GPUs are as a plain `nvidia-smi` shows them. A script or a monitor that calls nvidia-smi
        this way fails at that call on every machine with the same driver.""",
        fix="""nvidia-smi -h   # the options this driver's nvidia-smi takes: fix the call (for a selective query: nvidia-smi
        --query-gpu=index,name,utilization.gpu,memory.used --format=csv; `nvidia-smi topo -m` takes no -i: read the GPU's row, or
        `nvidia-smi topo -p -i 0,1` for a pair); for a query the GPU does not support (dmon/pmon on a GeForce), read the same
        counters with nvidia-smi --query-gpu=... -l 1, or a monitor built on NVML (nvitop, gpustat) that shows N/A for what the
        board lacks""".replace("\n        ", " "),
        examples=[
            ("The -i command line argument must be used in conjunction with -n or -p.",
             "cfregly/ai-performance-engineering#8 (nvidia-smi topo -m -i 0 in a NUMA topology script)"),
            ("Not supported on the device(s)", "keylase/nvidia-patch#89 (nvidia-smi dmon and pmon on a GeForce GT 640)"),
            ("Failed to process command line", "keylase/nvidia-patch#89"),
            ("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.", "influxdata/telegraf#6573 (--format without a --query-gpu)"),
            ("ERROR: Option noheader is not recognized. Please run 'nvidia-smi -h' for help.", "wilmerwang/GPUSitter#4"),
        ],
        not_examples=[
            "    Pending                     : [Not Supported]",  # a field the GPU lacks, in healthy `nvidia-smi -q` output
            "|  0  GeForce GT 640      Off  | 00000000:01:00.0 N/A |                  N/A |",
            "Failed to initialize NVML: Driver/library version mismatch",  # the driver, not the command line: its own pattern
        ],
        fields=refusal,
    ),
    pattern(
        "slurm-commands-missing",
        "launcher",
        CAUSE,
        E,
        "a program that submits to Slurm cannot find Slurm's commands (srun, sbatch, scontrol) on this machine",
        # submitit's own check, and Python's subprocess failing to start the command (the name it could not find)
        r"Could not detect \"(?P<command>srun|sbatch)\", are you indeed on a slurm cluster"
        r"|FileNotFoundError: \[Errno 2\] No such file or directory: '(?P<command2>srun|sbatch|scontrol|squeue|sinfo|salloc|scancel|sacct)'",
        ("are you indeed on a slurm cluster", "No such file or directory: '"),
        why="""The program (submitit, hydra's submitit launcher, a job runner) runs Slurm's command-line tools to submit or
        manage its jobs, and the command is not on this machine's PATH: the program was started on a machine that is not a
        Slurm cluster's login or compute node (a workstation, a cloud VM, a container without Slurm's client), or where
        the cluster loads Slurm as a module that this shell has not loaded; compute nodes of some clusters also lack the
        admin tools (scontrol) that login nodes have. No job was submitted.""",
        fix="""which srun sbatch scontrol   # in the shell that starts the program: empty means Slurm's client is not here; run it on
        the cluster's login node (module load slurm where the cluster uses modules), or pick the program's local mode instead
        of Slurm (submitit: AutoExecutor(folder, cluster="local") or "debug"; the project's own --use_slurm False / launcher=local
        option)""".replace("\n        ", " "),
        examples=[
            ('RuntimeError: Could not detect "srun", are you indeed on a slurm cluster?',
             "haoyi-duan/WorldScore#10 (--use_slurm True); facebookresearch/phyre-fwd#3 (hydra's submitit launcher)"),
            ("FileNotFoundError: [Errno 2] No such file or directory: 'sbatch': 'sbatch'", "e2crawfo/auto_yolo#1 (the demo submits with sbatch)"),
            ("FileNotFoundError: [Errno 2] No such file or directory: 'scontrol'", "facebookincubator/submitit#1601 (requeue from a compute node without scontrol)"),
        ],
        not_examples=[
            "FileNotFoundError: [Errno 2] No such file or directory: 'sbatch_logs/train.out'",  # a file of the job's: path-not-found
            "/bin/bash: line 1: srun: command not found",  # the shell's own words: launcher-not-found
        ],
        fields=lambda m, ctx: {"command": m.group("command") or m.group("command2")},
    ),
    pattern(
        "accelerate-multi-gpu-one-gpu",
        "launcher",
        CAUSE,
        E,
        "accelerate launch was configured to run on several GPUs but its configuration names fewer than two GPU ids",
        r"Less than two GPU ids were configured and tried to run on on multiple GPUs",
        ("Less than two GPU ids were configured",),
        why="""accelerate launch reads its own configuration (the file `accelerate config` wrote, by default
        ~/.cache/huggingface/accelerate/default_config.yaml, or the one --config_file names) before the script starts. There
        distributed_type is MULTI_GPU (or --multi_gpu was passed) while gpu_ids (or --gpu_ids) lists a single GPU, so it
        refuses to start: multi-GPU training needs at least two processes on two GPUs. This is accelerate's file, not the
        training script's: a gpu_ids key in the script's own YAML does not reach accelerate. Nothing of the training ran.""",
        fix="""accelerate env   # shows the configuration file accelerate used and its values; then either run on one GPU:
        accelerate launch --num_processes 1 --gpu_ids 0 train.py (without --multi_gpu), or answer `accelerate config` again
        (multi-GPU only with two or more GPUs), or in that file set gpu_ids: all (or two ids or more, with num_processes equal to
        their count)""".replace("\n        ", " "),
        examples=[
            ("ValueError: Less than two GPU ids were configured and tried to run on on multiple GPUs. Please ensure at least two are specified for `--gpu_ids`, or use `--gpu_ids='all'`.",
             "showlab/Tune-A-Video#96 (gpu_ids: all was in the training script's YAML); huggingface/accelerate#1316 (distributed_type: MULTI_GPU with gpu_ids: '0')"),
        ],
        not_examples=[
            "accelerate launch --multi_gpu --num_processes 2 --gpu_ids 0,1 train.py",
            "gpu_ids: all",  # the key in a training script's own YAML (showlab/Tune-A-Video#96's config)
        ],
    ),
    pattern(
        "native-check-failed",
        "platform",
        CAUSE,
        E,
        "a CHECK in native (C++) code failed: a condition the code requires was false, and the process aborted",
        # glog's "F0602 18:15:13.552311 13690 file.cpp:110] Check failed: ..." and dmlc's "[02:00:36] /path/file.cc:484: Check failed: ...";
        # a CUDA/cuDNN/NCCL call's status is the cuda patterns' (or the unrecognised answer's CUDA status)
        r"(?:(?P<where>[\w.\-/]+\.(?:cc|cpp|cu|cuh|h|hpp|c):\d+)\]?:? )?Check failed: (?!\w+ == (?:cuda|ncclS|CUDNN_STATUS_S|CUBLAS_STATUS_S)\w*uccess)"
        # a condition may hold calls and parentheses, two deep: a call's or an index's right after a name (`kv_.emplace(k, v).second`)
        # and a group's at its start or after an operator (`(lhs.ctx()) == (rhs.ctx())`); a parenthesis after a word and a space
        # is the message's prose (OneFlow's "cpu:0 (positional 0)", whose words are a device mismatch's); a call of NCCL's or
        # CUDA's own (`ncclGroupEnd() : unhandled system error`), or of TensorFlow's stream executor (`stream->parent()->
        # GetConvolveAlgorithms(...)`, after its "could not create cudnn handle"), is that library's status, not a check of the
        # program's (the stream executor's: added after the transfer measurement, heldout18's CRLab/pc_scene_completion_ws#1)
        r"(?!(?:nccl|cuda|cudnn|cublas)\w*\(|stream->)(?P<condition>(?:[^()]|(?:(?<=[\w\])(])|(?<=[=<>!&|] )|(?<=: ))\((?:[^()]|\([^()]*\))*\))+?)(?: \((?P<values>[^()]*? vs\. [^()]*?)\)(?:\s*:?\s*(?P<message>\w.*?))?)?[\s:]*$",
        ("Check failed: ",),
        why="""A CHECK macro (glog's, used by Caffe, MXNet, DGL, Paddle and TensorFlow's C++) found a condition the code
        requires false and aborted the process (SIGABRT, after "*** Check failure stack trace: ***"). The condition, its two
        sides in parentheses (the values at the time) and the file and line say what failed: a count that must be positive
        found 0 (the input produced nothing for that step: no boxes kept, an empty batch or label set), an index or id out of
        range (a huge number such as 18446744073707713820 is a negative value wrapped around), a file descriptor of -1 (a
        file that could not be opened: the words after the values name it). The line does not decide whose mistake it is: the
        data, the model definition or the configuration (a prototxt, a yaml) may break the condition, or the native code may
        assert something it should handle (a bug of that version).""",
        fix="""read the condition against what reached that code: the file and line the check names, and the input or setting it
        counts (the dataset's annotations, the thresholds and shapes in the model's configuration, the path after the values);
        if nothing of yours breaks it, search the project's issues for the check's file and condition (a known bug of that
        version); rerun on one GPU/process to see whether the multi-GPU split (a batch per GPU of 0 or 1) is what empties it""".replace("\n        ", " "),
        examples=[
            ("F0602 18:15:13.552311 13690 decode_bbox_layer.cpp:110] Check failed: keep_num > 0 (0 vs. 0)", "zhaoweicai/cascade-rcnn#18 (2 GPUs: both workers abort)"),
            ("dgl._ffi.base.DGLError: [02:00:36] /opt/dgl/src/rpc/rpc.cc:484: Check failed: l_id < local_data_shape[0] (18446744073707713820 vs. 630098) : ",
             "dmlc/dgl#6868 (distributed training: an id out of the partition's range)"),
            ("F0110 18:01:18.770076 19640 io.cpp:52] Check failed: fd != -1 (-1 vs. -1) File not found: external/exp/snapshots/model.caffemodel",
             "Cysu/dgd_person_reid#17 (a snapshot file that does not exist)"),
            ("F1207 10:43:16.922251 3493939 rpc_server.cpp:134] Check failed: kv_.emplace(k, v).second",
             "Oneflow-Inc/oneflow#6953 (a condition that is a call: a key registered twice by two processes of one node)"),
            ("src/operator/operator_util.cc:648: Check failed: (lhs.ctx()) == (rhs.ctx()) operands context mismatch 3 1 vs. 3 0",
             "apache/mxnet#1935 (operands on two GPUs: training on gpu(1), gpu(2) with the data on gpu(0))"),
        ],
        not_examples=[
            "F1116 15:55:02.388101 30214 cudnn_conv_layer.cu:137] Check failed: error == cudaSuccess (77 vs. 0)  an illegal memory access was encountered",
            "F0204 18:10:50.435636 15168 math_functions.hpp:176] Check failed: error == cudaSuccess (30 vs. 0)  unknown error",
            "I0602 18:15:13.552311 13690 solver.cpp:218] Iteration 100 (2.1 iter/s), loss = 0.53",
            "F1028 20:39:07.626992 206314 collective_boxing_executor.cpp:452] Check failed: ncclGroupEnd() : unhandled system error",
            "F tensorflow/core/kernels/conv_ops_3d.cc:395] Check failed: stream->parent()->GetConvolveAlgorithms( conv_parameters.ShouldIncludeWinogradNonfusedAlgo<T>(), &algorithms)",
        ],
        fields=check_fields,
    ),
    pattern(
        "npz-array-missing",
        "dataloader",
        CAUSE,
        E,
        "the .npz archive the code loads has no array of the name it reads (KeyError: '... is not a file in the archive')",
        r"KeyError: ['\"]?(?P<key>.+?) is not a file in the archive",
        ("is not a file in the archive",),
        why="""numpy.load of a .npz file returns an archive of named arrays, and the code read one by a name the archive does
        not hold (numpy's own KeyError, raised in npyio's __getitem__). The file is not the one the code was written for: a
        dataset file written by another version of the preprocessing script or downloaded from another release (the keys
        changed), a file saved with np.savez(a, b) whose arrays are named arr_0, arr_1 while the code reads names (or the
        reverse), a cache (cached latents, features) written by another version of the tool, or a truncated or half-written
        file. `np.load(path).files` lists the names the archive has.""",
        fix="""python -c "import sys, numpy; print(numpy.load(sys.argv[1]).files)" FILE.npz   # the names the archive holds; then
        regenerate the file with the preprocessing step of the same version as the training code (or download the release the
        code expects), delete a stale cache so the tool writes it again, or read the key the file has""".replace("\n        ", " "),
        examples=[
            ("KeyError: 'part is not a file in the archive'", "ouusan/some-papers#43 (the 3DPW training npz has no 'part' array)"),
            ("KeyError: 'arr_1 is not a file in the archive'", "kentsommer/pytorch-value-iteration-networks#9"),
            ("KeyError: 'arr_0 is not a file in the archive'", "derrian-distro/LoRA_Easy_Training_Scripts#144 (cached latents of another sd-scripts version)"),
            ("KeyError: 'tr_col_mean is not a file in the archive'", "philipperemy/stock-volatility-google-trends#1 (the maintainer: the npz must be updated)"),
        ],
        not_examples=[
            "KeyError: 'part'",  # a dict's key: the library-lookup classes
            "zipfile.BadZipFile: File is not a zip file",  # a .npz that is not an archive at all
        ],
    ),
    pattern(
        "sampler-zero-samples",
        "dataloader",
        CAUSE,
        E,
        "a sampler was given zero samples to draw: the dataset (or its list of weights) it was built on is empty",
        # RandomSampler's (shuffle=True) refusal of an empty dataset, and torch.multinomial's under a weighted sampler
        r"num_samples should be a positive integer value, but got num_samples=0\b|cannot sample n_sample <= 0 samples",
        ("num_samples=0", "cannot sample n_sample"),
        why="""A DataLoader's sampler draws as many samples as its data holds: RandomSampler (shuffle=True) refuses a dataset of
        length 0 ("num_samples should be a positive integer value, but got num_samples=0"), and torch.multinomial, under a
        WeightedRandomSampler or a project's own sampler that mixes datasets by weight, refuses to draw 0 ("cannot sample
        n_sample <= 0 samples"). The dataset or the list it draws from is empty: the data path matched no file (a path typo,
        a glob that matches nothing, a folder of another layout, images of another extension than the dataset class looks for), a filter
        or a split removed every entry, or the annotations list no sample. Nothing of the training ran.""",
        fix="""check the data the loader is built from: ls the paths the configuration names (a typo or a wrong root gives an empty
        dataset; the file extension the dataset class globs for); print(len(dataset)) before the DataLoader is made, and fail early
        when it is 0""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: cannot sample n_sample <= 0 samples", "aqlaboratory/openfold#226 (the maintainer: a typo in a path name)"),
            ("ValueError: num_samples should be a positive integer value, but got num_samples=0",
             "zhou13/lcnn#64 (the maintainer: the dataset is not set up); yichaojie/MobileNetV3#1 (images of another extension than .jpg)"),
        ],
        not_examples=[
            "ValueError: num_samples should be a positive integer value, but got num_samples=-1",
            "RuntimeError: invalid multinomial distribution (sum of probabilities <= 0)",
        ],
    ),
]
