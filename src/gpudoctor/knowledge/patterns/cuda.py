"""CUDA and driver errors as torch and the NVIDIA driver print them."""

import re

from gpudoctor.catalog.findings.diagnose import OOM_FIX
from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, NOT_HEADING, groups, pattern
from gpudoctor.knowledge.patterns.classes24a import GIVEN_A_GPU
from gpudoctor.knowledge import xid
from gpudoctor.knowledge.remedy import remedy_in

E, W, I = Severity.ERROR, Severity.WARN, Severity.INFO
LAUNCH_BLOCKING = "CUDA_LAUNCH_BLOCKING=1"
PROCESS = re.compile(r"Process (\d+) has ([\d.]+ \w+) memory in use")


# torch's own sentences in and after its out-of-memory and CUDA errors: advice of torch's for every OOM (OOM_FIX has it), not
# the program's remedy for this one
TORCH_OWN = re.compile(r"If reserved but unallocated memory is large.*?fragmentation\.?|See documentation for Memory Management[^.]*?(?:\([^)]*\))?\.?(?=\s|$)"
                       r"|CUDA kernel errors might be asynchronously reported.*|For debugging consider passing CUDA_LAUNCH_BLOCKING=1\.?"
                       r"|Compile with `?TORCH_USE_CUDA_DSA`?.*")
# a program's hint about its own out-of-memory: said on a line that speaks of memory, and naming what to change
OOM_WORDS = re.compile(r"out of memory|\bOOM\b|\bmemory\b|\bVRAM\b", re.IGNORECASE)
OOM_LEVER = re.compile(r"--\w|\b(?:tile|tiles|chunk|chunks|segment|split|batch|resolution|smaller|lower|reduce|half|fp16|cpu|offload)\b", re.IGNORECASE)
HINT_LINES = 2  # the lines after the message read for the program's hint


def oom_fields(m, _context):
    out = groups(m, _context)
    procs = PROCESS.findall(m.string)
    if procs:
        out["processes_on_gpu"] = [f"pid {pid}: {size}" for pid, size in procs]
    # the program's own remedy for it, on the message's line or one of the next (Real-ESRGAN's "If you encounter CUDA out of
    # memory, try to set --tile with a smaller number.", xinntao/Real-ESRGAN#909): torch's own sentences left out
    for after, text in enumerate([m.string, *_context[:HINT_LINES]]):
        said = TORCH_OWN.sub(" ", text)
        found = remedy_in([(0, said)]) if OOM_WORDS.search(said) else None
        if found is not None and OOM_LEVER.search(found.text):
            out.update(hint=found.text, hint_after=after)
            break
    return out


def driver_old_fields(m: re.Match, context: list[str]) -> dict:
    """The versions the message gives; XLA's feature that needs a newer CUDA carries its own step (the fix's first)."""
    out = groups(m, context)
    if m.group("feature"):
        needs = m.group("needs")
        out.update(read_as="cuda-driver-too-old", step=(
            f"JAX's XLA asked the driver for {m.group('feature')}, which needs CUDA {needs} (XLA's command buffers capture CUDA graphs "
            f"with it), and the driver's CUDA is older: a driver whose nvidia-smi 'CUDA Version' is {needs} or newer, or "
            f"XLA_FLAGS=--xla_gpu_enable_command_buffer= to turn off the command buffers that need it"))
    return out


PATTERNS = [
    pattern(
        "cuda-alloc-size-impossible",
        "cuda",
        CAUSE,
        E,
        "a tensor asked the GPU for more than 1 EB: its size is a wrong number, not a memory shortage",
        # torch's caching allocator refuses any request of 1 EiB or more with this OutOfMemoryError before it
        # tries the GPU: no GPU has that memory, so the size itself is wrong
        r"out of memory\. Tried to allocate more than 1EB memory",
        ("more than 1EB",),
        why="""No GPU has an exabyte: torch refuses the request before it looks at free memory. The size came
        from a wrong number, a length or shape read from a bad config or input, a negative size turned into a
        huge unsigned one, or a value that differs on this device, so a smaller batch or another GPU does not help.""",
        fix="print the shape or length the raising line allocates (the frame named in the traceback) and where it comes from; fix that value, e.g. a sequence length from the config, the tokenizer or another device",
        examples=[
            ("OutOfMemoryError: CUDA out of memory. Tried to allocate more than 1EB memory.", "zai-org/ChatGLM-6B#790 (torch.arange(seq_len) in the rotary embedding)"),
        ],
        not_examples=["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 79.18 GiB of which 41.00 MiB is free."],
    ),
    pattern(
        "cuda-oom-gpu0-other-ranks",
        "cuda",
        CAUSE,
        E,
        "GPU 0 ran out of memory because several processes share it",
        r"CUDA out of memory\. Tried to allocate (?P<requested>[\d.]+ \w+)\. GPU (?P<gpu>0) has a total capaci?ty of (?P<total>[\d.]+ \w+).*Process \d+ has [\d.]+ \w+ memory in use.*Process \d+ has [\d.]+ \w+ memory in use",
        ("out of memory",),
        why="""More than one process holds memory on GPU 0: the other ranks created a CUDA context there (a
        tensor or torch.load without map_location, torch.cuda calls before set_device, or no set_device at all),
        so GPU 0 has less memory than the others and fails first.""",
        fix='torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))  # first thing in each rank; and torch.load(..., map_location="cpu")',
        examples=[
            (
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 79.18 GiB of which 41.00 MiB is free. Process 568053 has 50.74 GiB memory in use. Process 568050 has 14.72 GiB memory in use. Process 568055 has 13.66 GiB memory in use.",
                "public training post-mortem (co-located ranks on GPU 0); cf. pytorch/examples#969",
            ),
        ],
        fields=oom_fields,
    ),
    pattern(
        "cuda-oom",
        "cuda",
        CAUSE,
        E,
        "a GPU ran out of memory",
        # the allocator's message in every release: "(GPU 0; ... total capacity" (1.x), "total capacty" (2.1's typo),
        # "HIP" on ROCm builds; the driver API's words with expandable segments (2.1+) and THC's before 1.5
        r"(?:CUDA|HIP) out of memory\.?(?: Tried to allocate (?P<requested>[\d.]+ \w+))?(?:\. GPU (?P<gpu>\d+) has a total capaci?ty of (?P<total>[\d.]+ \w+)| \(GPU (?P<gpu_old>\d+);)?"
        # the exception's name (torch 1.13+) only when the allocator's message is not on the line: that one has the numbers
        r"|CUDA (?:driver )?[Ee]rror: out of memory|cuda runtime error \(2\) : out of memory|torch\.(?:cuda\.)?OutOfMemoryError(?!.*(?:CUDA|HIP) out of memory)"
        # THC's check of its device allocation (torch <= 1.x: THCStorage, THCCachingAllocator; jiesutd/NCRFpp#121:
        # https://github.com/jiesutd/NCRFpp/issues/121); its pinned host allocator's (THCCachingHostAllocator) is the host's
        r"|THCudaCheck FAIL file=(?!\S*HostAllocator)\S+ line=\d+ error=2 : out of memory"
        # a native framework's check of a CUDA call (Caffe's and MXNet's glog CHECK): cudaErrorMemoryAllocation is status 2
        r"|Check failed: \w+ == cudaSuccess(?: \(2 vs\. 0\))?:?\s+(?:CUDA: )?out of memory"
        # the CUDA runtime's or driver's own allocation status, whatever wraps it (a C++ extension's std::bad_alloc that
        # pybind11 turns into MemoryError, thrust's bad_alloc): the GPU's memory, unless the allocation was pinned host
        # memory (cudaHostAlloc / cudaMallocHost: host-memory-exhausted reads those)
        # (GradientSpaces/WildGS-SLAM#60: https://github.com/GradientSpaces/WildGS-SLAM/issues/60, a 32 GB V100 in distCUDA2)
        r"|^(?!.*(?:[Hh]ost ?[Aa]lloc|MallocHost|[Pp]inned|pin.memory|bytes on host)).*?(?P<runtime>cudaErrorMemoryAllocation|CUDA_ERROR_OUT_OF_MEMORY"
        r"|cudaMalloc(?:Async|Managed|Pitch|3D)?\b.{0,80}?\b(?:failed|out of memory))",
        ("out of memory", "OutOfMemoryError", "cudaErrorMemoryAllocation", "CUDA_ERROR_OUT_OF_MEMORY", "cudaMalloc"),
        why="""The batch, the model or the activations do not fit on this GPU, or another process (another rank
        on the same GPU, a leftover job) holds part of its memory.""",
        # (the last step: a multi-GPU job started as one plain process fills GPU 0 while the others idle, openai/guided-diffusion#72)
        fix=OOM_FIX,  # (the reporter's words that say it: catalog/findings/diagnose.py LOG_SAID_OOM, the same fix)
        examples=[
            ("[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.36 GiB. GPU 1 has a total capacity of 47.50 GiB of which 1.52 GiB is free. Including non-PyTorch memory, this process has 45.97 GiB memory in use.", "modelscope/ms-swift#2044"),
            ("RuntimeError: CUDA error: out of memory", "MIC-DKFZ/nnUNet#593"),
            ("CUDA Error: out of memory: Invalid argument", "AlexeyAB/darknet#5301 (darknet's own wording, multi-GPU training)"),
            ("F0110 18:01:08.005344 19573 syncedmem.cpp:51] Check failed: error == cudaSuccess (2 vs. 0)  out of memory",
             "Cysu/dgd_person_reid#17 (Caffe's CUDA_CHECK in the cuDNN convolution's forward, even on one GPU)"),
            ("  what():  [15:00:54] /home/centos/mxnet/3rdparty/mshadow/mshadow/./stream_gpu-inl.h:217: Check failed: e == cudaSuccess: CUDA: out of memory",
             "dmlc/gluon-cv#1575 (MXNet's check, under 'terminate called after throwing an instance of dmlc::Error')"),
            ("MemoryError: std::bad_alloc: cudaErrorMemoryAllocation: out of memory",
             "GradientSpaces/WildGS-SLAM#60 (a CUDA extension's allocation on a 32 GB V100, wrapped as MemoryError)"),
            ("pygpu.gpuarray.GpuArrayException: cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
             "ndrplz/dreyeve#23 (https://github.com/ndrplz/dreyeve/issues/23: the driver API's status, through Theano's gpuarray)"),
            ("  what():  [10:44:35] src/engine/./threaded_engine.h:359: [10:44:35] src/storage/./pooled_storage_manager.h:107: cudaMalloc failed: out of memory",
             "TuSimple/mx-maskrcnn#98 (MXNet's pooled storage manager, under terminate called after throwing dmlc::Error)"),
            ("THCudaCheck FAIL file=/pytorch/torch/lib/THC/generic/THCStorage.cu line=58 error=2 : out of memory",
             "jiesutd/NCRFpp#121 (torch 0.3's THC check, before its RuntimeError: cuda runtime error (2))"),
        ],
        not_examples=[
            "MemoryError: std::bad_alloc",  # a C++ allocation with no CUDA status: the host's (host-memory-exhausted)
            # THC's pinned host allocator (Eli-YiLi/PMM#3: docker's memory limit, the GPU was not full): the host's
            "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCCachingHostAllocator.cpp line=296 error=2 : out of memory",
            # pinned host memory the driver could not page-lock (talmolab/sleap#2001): the host's
            "2024-10-22 09:22:17.233972: E tensorflow/stream_executor/cuda/cuda_driver.cc:802] failed to alloc 34359738368 bytes on host: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
            "NCCL INFO init.cc:327 Cuda Host Alloc Size 4 pointer 0x7f2b32600200 seconds: cudaHostAlloc=6.2093e-05",
            "[enforce fail at alloc_cpu.cpp:73] . DefaultCPUAllocator: can't allocate memory: you tried to allocate 116813856768 bytes",
        ],
        fields=oom_fields,
        context_after=HINT_LINES,
    ),
    pattern(
        "cuda-no-gpus-visible",
        "cuda",
        CAUSE,
        E,
        "this process sees no GPU at all",
        r"No CUDA GPUs are available|no CUDA-capable device is detected",
        ("No CUDA GPUs are available", "no CUDA-capable device"),
        why="""CUDA started but found no device: CUDA_VISIBLE_DEVICES is empty, -1 or names GPUs that do not
        exist (CUDA stops at the first invalid entry), the container was started without --gpus, or the
        scheduler gave this task no GPU.""",
        fix="echo $CUDA_VISIBLE_DEVICES; nvidia-smi -L   # in Docker: --gpus all; under SLURM: --gpus-per-task / --gres=gpu:N",
        examples=[
            ("RuntimeError: No CUDA GPUs are available", "torch CUDA error text"),
            ("RuntimeError: CUDA error: no CUDA-capable device is detected", "CUDA runtime error text"),
        ],
    ),
    pattern(
        "cuda-device-count-failed",
        "cuda",
        CAUSE,
        E,
        "CUDA could not count the GPUs (cudaGetDeviceCount failed)",
        r"Unexpected error from cudaGetDeviceCount\(\).*?Error (?P<code>\d+): (?P<reason>[^.]+)",
        ("cudaGetDeviceCount",),
        why="""The driver refused to start CUDA. Error 802 ('system not yet initialized') on NVSwitch machines
        (HGX/DGX) means nvidia-fabricmanager is not running; error 804 ('forward compatibility was attempted on
        non supported HW') means the container's CUDA compatibility libraries do not match this GPU/driver.""",
        fix="802: sudo systemctl start nvidia-fabricmanager (same version as the driver); 804: use a container whose CUDA the host driver supports, or drop the compat libraries from LD_LIBRARY_PATH",
        examples=[
            ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 802: system not yet initialized", "torch CUDA error text (HGX without fabric manager)"),
            ("UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted on non supported HW", "torch CUDA warning text"),
        ],
        fields=groups,
    ),
    pattern(
        "checkpoint-device-map",
        "cuda",
        CAUSE,
        E,
        "a checkpoint was loaded onto a GPU this process does not have",
        r"Attempting to deserialize object on (?:CUDA device (?P<device>\d+) but torch\.cuda\.device_count\(\) is (?P<count>\d+)|a CUDA device but torch\.cuda\.is_available\(\) is False)",
        ("Attempting to deserialize object on",),
        why="""torch.load puts each tensor back on the device it was saved from (cuda:1 on the saving rank).
        A process with fewer visible GPUs (one GPU per rank via CUDA_VISIBLE_DEVICES, or a CPU machine) has
        no such device.""",
        fix='torch.load(path, map_location="cpu")  # or map_location=f"cuda:{local_rank}"',
        examples=[
            ("RuntimeError: Attempting to deserialize object on CUDA device 1 but torch.cuda.device_count() is 1. Please use torch.load with map_location to map your storages to an existing device.", "torch serialization error text"),
            ("RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map your storages to the CPU.", "torch serialization error text"),
        ],
        fields=groups,
    ),
    pattern(
        "cuda-invalid-device-ordinal",
        "cuda",
        CAUSE,
        E,
        "a rank asked for a GPU index that does not exist",
        # CUDA's own error, and torch.cuda.get_device_properties' refusal (torch 1.x), which nn.DataParallel meets
        # first when its device_ids name a GPU the process does not see (_check_balance)
        r"invalid device ordinal|AssertionError: [Ii]nvalid device id\b",
        ("invalid device ordinal", "Invalid device id", "invalid device id"),
        why="""The device index is at least the number of GPUs this process sees (they are numbered from 0, and
        CUDA_VISIBLE_DEVICES renumbers the ones it leaves): a GPU list written for a bigger machine (a project's
        default of 4 GPUs, --gpus/--device/device_ids=[0,1,2,3] or range(n_GPUs) naming more GPUs than there are, which
        DataParallel checks first), a hard-coded cuda:1 on a 1-GPU machine, the global RANK used instead of LOCAL_RANK
        on a multi-node job, more ranks per node than GPUs, or CUDA_VISIBLE_DEVICES hiding GPUs.""",
        fix='nvidia-smi -L   # the GPUs there are: name only those (0..N-1) in the run\'s GPU option or config (--device 0 1, --gpus, device_ids, '
            'n_GPUs, --gpu_ids 0 in the pix2pix/CycleGAN family of projects); one process per GPU: torch.cuda.set_device(int(os.environ["LOCAL_RANK"])) and --nproc-per-node <= torch.cuda.device_count()',
        examples=[
            ("RuntimeError: CUDA error: invalid device ordinal", "wdrink/PyDeepFakeDet#1"),
            ("RuntimeError: CUDA error (10): invalid device ordinal", "open-mmlab/mmskeleton#55 (torchlight's occupy_gpu; the answer: choose the GPUs with --device)"),
            ("AssertionError: Invalid device id",
             "open-mmlab/mmskeleton#304 (a default config of 4 GPUs); frostinassiky/gtad#36, uber-research/UPSNet#91, daitao/SAN#45 (DataParallel's device_ids)"),
            ("AssertionError: invalid device id", "ligoudaner377/font_translator_gan#5 (default gpu_ids 0,1 on a one-GPU machine; the maintainer: set gpu_ids to 0)"),
        ],
        not_examples=["HTTPException: 400 Invalid device ID"],  # a web API's refusal of a phone's id
    ),
    pattern(
        "cuda-no-kernel-image",
        "cuda",
        CAUSE,
        E,
        "this torch build has no kernels for this GPU's compute capability (architecture)",
        r"no kernel image is available for execution on the device|(?:with CUDA capability |^\s*)(?P<capability>sm_\d+) is not compatible with the current PyTorch installation"
        # (the warning hard-wrapped by a paste: its second line opens on the capability, guoqincode/Open-AnimateAnyone#114; and
        # CUDA's message in the Chinese a translated paste gives it, kijai/ComfyUI-Hunyuan3DWrapper#20)
        r"|设备上没有可用于执行的内核映像"
        # torch's warning for a GPU below the build's minimum (1.x-2.x), and its wording since the CC table (2.8+);
        # not its "Found GPU0 ... capability" line alone: a GPU one minor version past the build's runs (GB10's 12.1)
        r"|PyTorch no longer supports this GPU because it is too old|Your installed torch==(?P<torch>\S+) does not include kernels for this GPU"
        # the same warning's other lines (1.x-2.x): a paste often starts below its first, so any of them is the warning
        # (cloveranon/Clover-Edition#159): the build's arch list, the pointer to the install page
        r"|(?:The current PyTorch |^\s*)install supports CUDA capabilities (?P<supported>(?:(?:sm|compute)_\d+a?\s*)+)"
        r"|If you want to use the (?P<gpu>.+?) GPU with PyTorch, please check the instructions at",
        ("no kernel image", "is not compatible with the current PyTorch", "no longer supports this GPU", "kernels for this GPU",
         "install supports CUDA capabilities", "GPU with PyTorch, please check", "内核映像"),
        why="""torch (or a CUDA extension) was compiled for other compute capabilities than this GPU's
        (torch.cuda.get_arch_list()): a too-new GPU with an old wheel, or an old GPU dropped by a new wheel.""",
        fix="pip install torch --index-url https://download.pytorch.org/whl/cu128   # a wheel whose arch list includes your GPU; rebuild custom CUDA extensions",
        examples=[
            ("CUDA error: no kernel image is available for execution on the device", "hustvl/Vim#42"),
            ("NVIDIA RTX A6000 with CUDA capability sm_86 is not compatible with the current PyTorch installation.", "torch/cuda/__init__.py warning quoted in a public issue"),
            ("The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_61 sm_70 sm_75 compute_37.",
             "cloveranon/Clover-Edition#159 (the warning pasted without its first line; an RTX 3060 Laptop GPU, sm_86)"),
            ("If you want to use the NVIDIA GeForce RTX 3060 Laptop GPU GPU with PyTorch, please check the instructions at https://pytorch.org/get-started/locally/",
             "cloveranon/Clover-Edition#159"),
            ("sm_90 is not compatible with the current PyTorch installation.",
             "guoqincode/Open-AnimateAnyone#114 (heldout26b: the warning hard-wrapped, 'NVIDIA H100 PCIe with CUDA capability' on the line above)"),
            ("install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70 sm_75 sm_80 sm_86.", "guoqincode/Open-AnimateAnyone#114 (the same paste's next lines)"),
            ("!!! 处理过程中出现异常 !!! CUDA 错误：设备上没有可用于执行的内核映像",
             "kijai/ComfyUI-Hunyuan3DWrapper#20 (heldout26: ComfyUI's exception in a translated paste)"),
        ],
        not_examples=["Please install PyTorch following the instructions at https://pytorch.org/get-started/locally/",
                      "Your GPU sm_90 is not compatible with this version of the kernels: rebuild them",
                      "pip install supports CUDA capabilities checks since 23.1"],
        fields=groups,
    ),
    pattern(
        "cuda-driver-too-old",
        "cuda",
        CAUSE,
        E,
        "the NVIDIA driver is older than the CUDA version the program (torch) was built for or needs",
        # a kernel's PTX built by a newer CUDA than the driver knows (CUDA 11.1+) is the same shortfall, found at JIT time;
        # XLA's GPU runtime names the feature the driver's CUDA is too old for (command buffers need CUDA graphs of 12.3)
        r"The NVIDIA driver on your system is too old \(found version (?P<found>\d+)\)|CUDA driver version is insufficient for CUDA runtime version"
        r"|the provided PTX was compiled with an unsupported toolchain"
        r"|" + NOT_HEADING + r"(?P<feature>\w+) is not implemented for CUDA below version (?P<needs>\d+\.\d+)",
        ("driver on your system is too old", "driver version is insufficient", "unsupported toolchain", "is not implemented for CUDA below version"),
        why="""Each CUDA release needs a minimum driver. torch was built with a newer CUDA than this driver
        supports, so CUDA cannot initialise and torch.cuda.is_available() is False; or a kernel's PTX (a
        compiled extension, Triton, a library's wheel) was built by a newer CUDA toolkit than the driver can
        compile ('unsupported toolchain').""",
        fix="nvidia-smi   # compare 'CUDA Version' with torch.version.cuda; update the driver or install the torch wheel for an older CUDA",
        examples=[
            ("RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx", "torch's CUDA init error, as quoted in public issues"),
            ("RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version", "CUDA runtime error text"),
            ("jaxlib.xla_extension.XlaRuntimeError: UNIMPLEMENTED: StreamBeginCaptureToGraph is not implemented for CUDA below version 12.3. Therefore tracing is not supported.",
             "dev7w HEISENYAN-openpi train.out (driver 535, CUDA 12.2); openpi users' XLA_FLAGS=--xla_gpu_enable_command_buffer= workaround"),
        ],
        fields=driver_old_fields,
    ),
    pattern(
        "nvml-driver-mismatch",
        "cuda",
        CAUSE,
        E,
        "the loaded NVIDIA kernel module and the user-space driver library differ",
        # nvidia-smi's words; NVML's as the container toolkit's hook (nvidia-container-cli) and nvidia-docker 1 quote them
        r"(?:Failed to initialize NVML|nvml error|nvml): [Dd]river/library version mismatch",
        ("Driver/library version mismatch", "driver/library version mismatch"),
        why="""The driver was upgraded (often by unattended upgrades) but the old kernel module is still loaded:
        nvidia-smi and CUDA fail until the module is reloaded.""",
        fix="reboot the node (or unload and reload the nvidia kernel modules); pin the driver package to stop unattended upgrades",
        examples=[
            ("Failed to initialize NVML: Driver/library version mismatch", "lyulyul/shine-cluster#30"),
            ("nvidia-container-cli: initialization error: nvml error: driver/library version mismatch: unknown.",
             "NVIDIA/nvidia-container-toolkit#394 (a reboot fixed it); labdao/plex#18; saharmor/dalle-playground#104 (dmesg: NVRM API mismatch)"),
        ],
    ),
    pattern(
        "cuda-no-driver",
        "cuda",
        CAUSE,
        E,
        "no NVIDIA driver is visible to this process",
        r"Found no NVIDIA driver on your system",
        ("Found no NVIDIA driver",),
        why="""torch is a CUDA build but the process sees no driver: no NVIDIA GPU, the driver not installed or
        not loaded, or a container started without the GPU runtime (--gpus all).""",
        fix="nvidia-smi   # on the host: the driver loaded and the GPU listed; " + GIVEN_A_GPU + "; or run on CPU with backend='gloo'",
        examples=[
            ("RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx", "facebookresearch/pytorch3d#1259"),
        ],
    ),
    pattern(
        "cuda-torch-cpu-build",
        "cuda",
        CAUSE,
        E,
        "this torch is a CPU-only build",
        r"Torch not compiled with CUDA enabled|module 'torch\._C' has no attribute '_cuda_\w+'",
        ("not compiled with CUDA", "has no attribute '_cuda_"),
        why="""pip or conda installed the CPU-only torch wheel, so there is no CUDA support whatever the GPUs
        and driver.""",
        fix="pip install torch --index-url https://download.pytorch.org/whl/cu126   # a CUDA build; check: python -c 'import torch; print(torch.version.cuda)'",
        examples=[
            ("AssertionError: Torch not compiled with CUDA enabled", "torch/cuda/__init__.py error text"),
            # torch.cuda.set_device() on a CPU-only build (reproduced with torch 2.13.0+cpu)
            ("AttributeError: module 'torch._C' has no attribute '_cuda_setDevice'", "torch/cuda/__init__.py set_device"),
        ],
    ),
    pattern(
        "cuda-fork-reinit",
        "cuda",
        CAUSE,
        E,
        "CUDA was initialised before a fork",
        r"Cannot re-initialize CUDA in forked subprocess|CUDA error: initialization error|THCudaCheck FAIL .*error=3 : initialization error"
        r"|\bCUDA: initialization error",  # MXNet's CUDA checks (its storage, its CUDA_CALL) word CUDA's error 3 so
        ("re-initialize CUDA", "initialization error"),
        why="""A process that already used CUDA forked children (multiprocessing's default on Linux, DataLoader
        workers touching CUDA, Lightning's ddp_fork, a multiprocessing Pool of MXNet or TensorFlow workers) and a child called
        CUDA. CUDA cannot run in a forked copy: the child's first CUDA call fails with CUDA's initialization error (error 3).
        That error has other causes (a driver that is not loaded or does not answer): it is told as a fork only where the log
        shows one (a DataLoader worker, multiprocessing's frames or Pool, a start method, the word fork: knowledge/forked.py),
        and otherwise as CUDA's error 3 (cuda-runtime-error), with what decides between its causes.""",
        fix="torch.multiprocessing.set_start_method('spawn')  # (a Pool of any framework: multiprocessing.get_context('spawn').Pool); or: no CUDA calls before the fork / inside DataLoader workers",
        examples=[
            ("RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method", "facebookresearch/pycls#183"),
            ("RuntimeError: CUDA error: initialization error", "CUDA error text (seen in forked DataLoader workers)"),
            ("mxnet.base.MXNetError: [19:18:11] src/storage/storage.cc:65: Check failed: e == cudaSuccess || e == cudaErrorCudartUnloading CUDA: initialization error",
             "bengouyy/mxnet_mtcnn_face_detection#41 (the detector used from multiprocessing Pool workers)"),
            ("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=50 error=3 : initialization error", "torch 1.x's text of it, from a DataLoader worker"),
        ],
    ),
    pattern(
        "cuda-ecc-error",
        "cuda",
        CAUSE,
        E,
        "the GPU reported an uncorrectable ECC memory error",
        r"uncorrectable ECC error encountered|CUDA_ERROR_ECC_UNCORRECTABLE",
        ("ECC",),
        why="""A hardware memory error on the GPU. The data is corrupt and the GPU needs a reset (pending page
        retirement) or replacement; the same GPU will fail again.""",
        fix="nvidia-smi -q -d ECC,PAGE_RETIREMENT   # drain the node, reset the GPU (nvidia-smi -r) or report it for replacement",
        examples=[
            ("RuntimeError: CUDA error: uncorrectable ECC error encountered", "tloen/alpaca-lora#123"),
            ("Internal: failed call to cuDevicePrimaryCtxRetain: CUDA_ERROR_ECC_UNCORRECTABLE: uncorrectable ECC error encountered", "nagadit/DeepFaceLab_Linux#89"),
        ],
    ),
    pattern(
        "nvidia-xid",
        "cuda",
        CAUSE,
        E,
        "the NVIDIA driver logged a GPU fault (Xid)",
        r"NVRM: Xid \((?P<pci>[^)]*)\): (?P<xid>\d+)|GPU has fallen off the bus|NVRM: fallen off the bus"
        # a node agent's event that quotes the kernel's Xid (gpud: "xid 119 detected by dmesg")
        r"|\bxid (?P<agent_xid>\d+) detected by (?:dmesg|kmsg)\b",
        ("Xid", "fallen off the bus", "detected by dmesg", "detected by kmsg"),
        why="""Xid lines come from the kernel driver: 79 (fallen off the bus) and 48/63/64/94/95 (memory errors)
        are hardware or power faults; 13/31/43 are usually an application fault on that GPU. A rank on that
        GPU then crashes or hangs and the others time out.""",
        fix="dmesg -T | grep -i xid   # look up the Xid number in NVIDIA's Xid table; drain the node for hardware Xids",
        examples=[
            ("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.", "kernel driver message, as quoted in public cluster reports"),
            ("               NVRM: fallen off the bus and is not responding to commands.", "NVIDIA/NVSentinel#155"),
            ('        "message": "xid 119 detected by dmesg (47 minutes ago)",', "leptonai/gpud#192 (https://github.com/leptonai/gpud/pull/192: gpud's error_xid event)"),
        ],
        fields=xid.pattern_fields,  # the Xid's meaning and action: knowledge/xid.py
    ),
    pattern(
        "cuda-illegal-memory-access",
        "cuda",
        CAUSE,
        E,
        "a CUDA kernel accessed memory it does not own",
        r"an illegal memory access was encountered",
        ("illegal memory access",),
        why="""A kernel read or wrote out of bounds: a bug in a custom or third-party kernel, indices out of
        range, or (rarely) a hardware fault. A compiled extension's kernels that work on cuda:0 and fail on another GPU
        (cuda:1, DataParallel's replicas, one process per GPU) are launched on the current device while their tensors
        are on another: the extension sets no device guard. CUDA reports it asynchronously, so the Python line shown may
        not be the one at fault.""",
        fix=f"{LAUNCH_BLOCKING} python train.py   # the traceback then points at the failing kernel; check dmesg for Xid lines; "
        # pytorch/extension-cpp#18: an extension's kernels on cuda:1 without setting the device
        "an extension that fails only off cuda:0 needs its device set: torch.cuda.set_device(x.device) before calling it, or a device "
        "guard in its C++ (const at::cuda::OptionalCUDAGuard device_guard(device_of(input));)",
        examples=[
            ("RuntimeError: CUDA error: an illegal memory access was encountered", "hpcaitech/Open-Sora#694"),
            ("RuntimeError: cuda runtime error (77) : an illegal memory access was encountered at /.../pytorch/aten/src/THC/generic/THCTensorCopy.cpp:70",
             "pytorch/extension-cpp#18 (the extension's tensors on cuda:1; setting the CUDA device fixed it)"),
            ("RuntimeError: cuda runtime error (700) : an illegal memory access was encountered", "pytorch/pytorch#42077"),
        ],
    ),
    pattern(
        "cuda-device-assert",
        "cuda",
        CAUSE,
        E,
        "a device-side assertion failed in a CUDA kernel",
        r"device-side assert triggered",
        ("device-side assert",),
        why="""A kernel's assertion failed, most often an index out of range: a class label >= num_classes in a
        loss, or an embedding index >= vocabulary size.""",
        fix=f"{LAUNCH_BLOCKING} python train.py   # or run one batch on CPU: the error then names the bad index",
        examples=[
            ("RuntimeError: CUDA error: device-side assert triggered", "CUDA runtime error text"),
        ],
    ),
    pattern(
        "cuda-index-out-of-range",
        "cuda",
        CAUSE,
        E,
        "a CUDA kernel's index check failed: a label >= num_classes or an index >= the table size",
        r"Assertion `(?P<condition>(?:t|cur_target) >= 0 && (?:t|cur_target) < n_classes|srcIndex < srcSelectDimSize|(?:-sizes\[i\] <= index && index < sizes\[i\] && \x22|index >= -sizes\[i\] && index < sizes\[i\] && \x22)?index out of bounds[^`]*|idx_dim >= 0 && idx_dim < index_size[^`]*|input_val >= zero && input_val <= one|input >= 0\. && input <= 1\.)` failed",
        ("Assertion `",),
        why="""The assertion each thread of the kernel prints names the check: `t < n_classes` is a target class
        label outside [0, num_classes) in a cross-entropy/NLL loss (a mask with 255, labels starting at 1);
        `srcIndex < srcSelectDimSize` is an embedding or index_select index >= the table size (a tokenizer larger
        than the embedding); `input_val <= one` is a BCE input outside [0, 1] (a missing sigmoid).""",
        fix="check the data before the loss: assert labels.min() >= 0 and labels.max() < num_classes (or ids.max() < embedding.num_embeddings); set ignore_index for void labels",
        examples=[
            ("../aten/src/ATen/native/cuda/NLLLoss2d.cu:103: nll_loss2d_forward_kernel: block: [5,0,0], thread: [996,0,0] Assertion `t >= 0 && t < n_classes` failed.", "milesial/Pytorch-UNet#375"),
            ("/pytorch/aten/src/ATen/native/cuda/Indexing.cu:702: indexSelectLargeIndex: block: [268,0,0], thread: [32,0,0] Assertion `srcIndex < srcSelectDimSize` failed.", "CUDA kernel assertion quoted in embedding index issues"),
            ('../aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [22,0,0], thread: [64,0,0] Assertion `-sizes[i] <= index && index < sizes[i] && "index out of bounds"` failed.', "NVIDIA/Megatron-LM#881"),
        ],
        not_examples=[
            "RuntimeError: CUDA error: device-side assert triggered",
            "/pytorch/aten/src/ATen/native/cuda/MultinomialKernel.cu:112: binarySearchForMultinomial: block: [0,0,0], thread: [0,0,0] Assertion `cumdist[size - 1] > static_cast<scalar_t>(0)` failed.",
        ],
        fields=groups,
    ),
    pattern(
        "cuda-init-unknown-error",
        "cuda",
        CAUSE,
        E,
        "CUDA failed to initialise (CUDA unknown error)",
        r"CUDA unknown error - this may be due to an incorrectly set up environment"
        # torch 0.4/1.x's check in THCGeneral (the state it sets up at CUDA's first use): cudaErrorUnknown (30; 999 from CUDA 10.1) (diagB15)
        r"|THCudaCheck FAIL file=\S*THCGeneral\.c\w* line=\d+ error=(?:30|999) : unknown error",
        ("CUDA unknown error", " : unknown error"),
        why="""The driver is installed but CUDA could not start: the nvidia_uvm kernel module is missing or in a
        bad state (often after suspend or a driver update), the /dev/nvidia* device files are missing in a
        container, or CUDA_VISIBLE_DEVICES was changed after CUDA started. torch then sees zero GPUs.""",
        fix="sudo modprobe -r nvidia_uvm && sudo modprobe nvidia_uvm   # or reboot; set CUDA_VISIBLE_DEVICES before the process starts",
        examples=[
            ("UserWarning: CUDA initialization: CUDA unknown error - this may be due to an incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. Setting the available devices to be zero.", "pytorch/pytorch#159954"),
            ("RuntimeError: CUDA unknown error - this may be due to an incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. Setting the available devices to be zero.", "replicate/cog-svd#11"),
            ("THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch_1533672544752/work/aten/src/THC/THCGeneral.cpp line=74 error=30 : unknown error",
             "AbnerHqC/GaitSet#70 (torch 0.4 at self.encoder.cuda(), CUDA 9.0)"),
        ],
    ),
    pattern(
        "cuda-launch-failure",
        "cuda",
        CAUSE,
        E,
        "a CUDA kernel failed (unspecified launch failure)",
        r"unspecified launch failure",
        ("unspecified launch failure",),
        why="""A kernel crashed without a more precise reason: a bug in a custom kernel, or a GPU fault (look
        for Xid lines in the kernel log).""",
        fix=f"{LAUNCH_BLOCKING} python train.py; dmesg -T | grep -i xid",
        examples=[
            ("RuntimeError: CUDA error: unspecified launch failure", "CUDA runtime error text"),
        ],
    ),
    pattern(
        "cublas-init-failed",
        "cuda",
        CAUSE,
        E,
        "cuBLAS could not start on this GPU",
        # THC (torch <= 1.4) said the same two statuses in words
        r"CUBLAS_STATUS_(?:NOT_INITIALIZED|ALLOC_FAILED)|cublas runtime error : (?:resource allocation failed|library not initialized)",
        ("CUBLAS_STATUS", "cublas runtime error"),
        why="""cuBLAS needs GPU memory for its workspace when it first runs; the GPU was already full (often
        another rank on the same GPU) or the process is on the wrong device.""",
        fix="nvidia-smi   # one rank per GPU (torch.cuda.set_device(local_rank)), free memory, then retry",
        examples=[
            ("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`", "torch CUDA error text"),
        ],
    ),
    pattern(
        "cuda-devices-busy",
        "cuda",
        CAUSE,
        E,
        "all CUDA devices are busy or unavailable",
        r"all CUDA-capable devices are busy or unavailable|CUDA-capable device\(s\) is/are busy or unavailable",
        ("busy or unavailable",),
        why="""The GPUs are in Exclusive_Process compute mode and already used by another process (another rank
        on the same GPU, a leftover job), or they are in a bad state.""",
        fix="nvidia-smi --query-gpu=index,compute_mode --format=csv   # one rank per GPU; kill leftover processes or set compute mode Default",
        examples=[
            ("RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable", "CUDA runtime error text"),
        ],
    ),
]
