"""What the GPU or the install cannot do: a dtype the GPU lacks, no GPU at all for fp16,
a compute capability below what a library needs, peer-to-peer access the GPUs do not
have, two NCCL libraries in one process. Each answer points at the environment, never at
the user's code (these exceptions are raised from library frames)."""

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge import gpu_library
from gpudoctor.knowledge.pattern import CAUSE, groups, pattern

E = Severity.ERROR

PATTERNS = [
    pattern(
        "bf16-unsupported-gpu",
        "cuda",
        CAUSE,
        E,
        "bfloat16 was asked for on a GPU without bf16 support (compute capability < 8.0)",
        r"Bfloat16 is only supported on GPUs with compute capability of at least (?P<needed>[\d.]+)\.(?: Your (?P<gpu>.+?) GPU has compute capability (?P<capability>[\d.]+))?"
        r"|Your setup doesn't support bf16/gpu"
        r"|bf16 mixed precision requires (?:PyTorch >= [\d.]+ and )?a supported device"
        r"|(?:Current )?CUDA [Dd]evice does not support bfloat16",
        ("Bfloat16 is only supported", "doesn't support bf16", "bf16 mixed precision requires", "does not support bfloat16"),
        why="""bfloat16 arithmetic needs an Ampere or newer GPU (compute capability 8.0: A100, RTX 30xx and
        later). V100 (7.0), T4 and RTX 20xx (7.5), P100 (6.0) do not have it, so the library refuses the dtype.""",
        fix="use float16 instead (e.g. --dtype=half, --fp16 / mixed_precision='fp16', torch_dtype=torch.float16), or run on an Ampere-or-newer GPU",
        examples=[
            ("ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla V100-SXM2-32GB GPU has compute capability 7.0. You can use float16 instead by explicitly setting the`dtype` flag in CLI, for example: --dtype=half.", "volcengine/verl#2594"),
            ("ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has compute capability 7.5. You can use float16 instead by explicitly setting the`dtype` flag in CLI, for example: --dtype=half.", "substratusai/vllm-docker#37"),
            ("RuntimeError: Current CUDA Device does not support bfloat16. Please switch dtype to float16.", "karpathy/nanoGPT (torch.autocast on a V100)"),
        ],
        not_examples=["INFO: using dtype torch.bfloat16 on NVIDIA A100-SXM4-80GB"],
        fields=groups,
    ),
    pattern(
        "fp16-needs-gpu",
        "cuda",
        CAUSE,
        E,
        "fp16 mixed precision was asked for, but this process sees no GPU",
        r"fp16 mixed precision requires a GPU",
        ("fp16 mixed precision requires",),
        why="""accelerate (and the scripts built on it) refuses fp16 when torch.cuda.is_available() is False: a
        CPU-only torch build, a missing or mismatched NVIDIA driver, or CUDA_VISIBLE_DEVICES hiding every GPU.
        The mixed-precision setting is not the problem; the missing GPU is.""",
        fix='python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())"   # a +cpu build or False: install a CUDA build of torch; or set mixed_precision="no" to train on CPU',
        examples=[
            ("ValueError: fp16 mixed precision requires a GPU", "bmaltais/kohya_ss#719"),
            ("ValueError: fp16 mixed precision requires a GPU", "ShivamShrirao/diffusers#97"),
        ],
        not_examples=["mixed_precision: fp16 (GPU 0: NVIDIA GeForce RTX 3080)"],
    ),
    pattern(
        "gpu-capability-too-old",
        "cuda",
        CAUSE,
        E,
        "the library does not support a GPU this old (compute capability too low)",
        r"GPUs? with compute capability (?:below|less than|<) (?P<needed>[\d.]+) (?:is|are) not supported|compute capability (?P<capability>[\d.]+) is (?:too old|not supported)"
        r"|FlashAttention(?:Hopper)? only supports (?P<arch>Turing|Ampere|Hopper|Blackwell) GPUs or newer",
        ("compute capability below", "compute capability less than", "compute capability <", "is too old", "is not supported", "GPUs or newer"),
        why="""The library (vLLM, FlashAttention, Triton kernels) only ships kernels for newer GPUs; a P100 (6.0)
        or older cannot run it whatever the settings. FlashAttention-2 needs an Ampere GPU (sm80) or newer, and
        FlashAttention-3 (its hopper/ build) a Hopper one (sm90): on an older GPU use the version or attention backend
        (sdpa) that supports it.""",
        fix="run on a GPU with the compute capability the library needs (nvidia-smi --query-gpu=name,compute_cap --format=csv), or use a version / backend that still supports yours",
        examples=[
            ("RuntimeError: GPUs with compute capability below 7.0 are not supported.", "vllm-project/vllm#1284"),
            ("RuntimeError: FlashAttention only supports Hopper GPUs or newer.", "Dao-AILab/flash-attention#1481 (FlashAttention-3 on an A100)"),
        ],
        not_examples=["RuntimeError: CUDA error: operation not supported"],
        fields=groups,
    ),
    pattern(
        "rtx4000-p2p-ib-unsupported",
        "nccl",
        CAUSE,
        E,
        "RTX 40xx GPUs: accelerate refuses NCCL P2P/IB, which these cards do not support",
        r"Using RTX 4000 series doesn't support faster communication broadband via P2P or IB",
        ("RTX 4000 series",),
        why="""Consumer RTX 40xx cards have no peer-to-peer (P2P) access between GPUs, and NCCL would try it and
        hang or fail; accelerate checks this and stops unless P2P and InfiniBand are disabled.""",
        fix='export NCCL_P2P_DISABLE=1 NCCL_IB_DISABLE=1   # before starting, or launch with `accelerate launch`, which sets them',
        examples=[
            ('NotImplementedError: Using RTX 4000 series doesn\'t support faster communication broadband via P2P or IB. Please set `NCCL_P2P_DISABLE="1"` and `NCCL_IB_DISABLE="1" or use `accelerate launch` which will do this automatically', "cocktailpeanut/fluxgym#283"),
        ],
        not_examples=["NCCL INFO Channel 00 : 0[0] -> 1[1] via P2P/IPC"],
    ),
    pattern(
        "cuda-peer-access-unsupported",
        "nccl",
        CAUSE,
        E,
        "these GPUs cannot access each other's memory (peer access is not supported)",
        r"peer access is not supported between these two devices|cudaErrorPeerAccessUnsupported",
        ("peer access is not supported", "PeerAccessUnsupported"),
        why="""NCCL (or a direct copy) tried CUDA peer-to-peer access between two GPUs that do not support it:
        consumer GPUs, GPUs under different PCIe root complexes, a VM or container without P2P, or an IOMMU/ACS
        setting that blocks it. The log already names the failing call; more NCCL debug output adds nothing.""",
        fix="export NCCL_P2P_DISABLE=1   # NCCL then goes through host memory; nvidia-smi topo -p2p r shows which pairs support P2P",
        examples=[
            ("[2025-09-09 23:51:24] 9b405963aa12:774:854 [0] transport/shm.cc:590 NCCL WARN Cuda failure 217 'peer access is not supported between these two devices'", "NVIDIA/nccl#1838"),
            ("[rank1]: Cuda failure 'peer access is not supported between these two devices'", "the 'Last error:' line of an ncclUnhandledCudaError, as torch prints it"),
        ],
        not_examples=["NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM"],
    ),
    pattern(
        "cuda-peer-mappings-exhausted",
        "nccl",
        CAUSE,
        E,
        "a GPU ran out of peer mappings: more GPUs (or processes) talk peer-to-peer than it can map",
        r"peer mapping resources exhausted|cudaErrorTooManyPeers",
        ("peer mapping resources exhausted", "TooManyPeers"),
        why="""CUDA's cudaErrorTooManyPeers: enabling peer-to-peer access needs a hardware mapping per peer, and a GPU has
        only a few (8 on most PCIe systems). A job that makes every GPU of a large node a peer of every other (more
        than 9 GPUs in one process group, NCCL or a model split with device_map over all of them), or that starts more
        processes than the node has GPUs, so that several share a GPU and each maps the others, runs out.""",
        fix="""start one process per GPU and no more: num_processes in the accelerate config (`accelerate config`, then
        `accelerate test`), --nproc_per_node for torchrun, equal to the GPUs the job uses (nvidia-smi -L); on a node with more than
        8 GPUs, restrict the job to 8 (CUDA_VISIBLE_DEVICES) or export NCCL_P2P_DISABLE=1 so NCCL goes through host memory""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: CUDA error: peer mapping resources exhausted", "hiyouga/LlamaFactory#1213 (num_processes: 10 in the accelerate config)"),
            ("NCCL WARN Cuda failure 'peer mapping resources exhausted'", "NCCL's report of the same CUDA error"),
        ],
        not_examples=[
            "RuntimeError: CUDA error: peer access is not supported between these two devices",  # its own pattern
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB",
        ],
    ),
    pattern(
        "nccl-two-libraries",
        "platform",
        CAUSE,
        E,
        "undefined NCCL symbol: torch loaded a mismatched NCCL library (two NCCL installs)",
        r"undefined symbol: (?P<symbol>nccl\w+)",
        ("undefined symbol: nccl",),
        why="""libtorch_cuda.so needs an NCCL function its loaded libnccl does not have: two NCCL libraries are
        installed (the pip wheel nvidia-nccl-cu1x and a system or conda one found first through LD_LIBRARY_PATH),
        or the wheel is older than torch expects. Nothing in the training code is involved: `import torch` fails.""",
        fix="pip list | grep -i nccl; echo $LD_LIBRARY_PATH   # remove the other libnccl from the path (or unset LD_LIBRARY_PATH) and reinstall the nvidia-nccl wheel torch pins: pip install --force-reinstall torch",
        examples=[
            ("ImportError: /home/user/.local/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclCommRegister", "pytorch/pytorch#119072"),
            ("ImportError: ... libtorch_cuda.so: undefined symbol: ncclMemFree", "a project's troubleshooting page quoting the import error (nl2atl docs)"),
        ],
        not_examples=["ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory"],
        fields=groups,
    ),
    pattern(
        "nccl-not-compiled",
        "platform",
        CAUSE,
        E,
        "the NCCL backend was asked for, but this torch build has no NCCL (Windows, macOS, CPU builds)",
        r"but NCCL support is not compiled",
        ("NCCL support is not compiled",),
        why="""torch warns that it has no NCCL when a process group is set up with backend='nccl' (or a library
        defaults to it): NCCL exists only in Linux CUDA builds. On Windows and macOS the init then fails or the
        job hangs; gloo is the backend there.""",
        fix='dist.init_process_group(backend="gloo")   # on Windows/macOS; for NCCL use Linux (or WSL2) with a CUDA build of torch',
        examples=[
            ("D:\\Python39\\lib\\site-packages\\torch\\distributed\\distributed_c10d.py:613: UserWarning: Attempted to get default timeout for nccl backend, but NCCL support is not compiled", "pytorch/pytorch#159742"),
        ],
        not_examples=["RuntimeError: Distributed package doesn't have NCCL built in"],
    ),
    pattern(
        "amp-unscale-fp16-gradients",
        "cuda",
        CAUSE,
        E,
        "mixed precision (GradScaler) over parameters that are themselves fp16",
        r"Attempting to unscale FP16 gradients",
        ("unscale FP16 gradients",),
        why="""torch.cuda.amp's GradScaler keeps master weights in fp32 and refuses gradients that are fp16: the
        trainable parameters were loaded or cast to float16 (model.half(), torch_dtype=torch.float16, a PEFT/LoRA
        adapter created on an fp16 model) while fp16 mixed precision is also on.""",
        fix="keep the trainable parameters in float32 (load with torch_dtype=torch.float32, or cast the adapter: for p in model.parameters(): p.data = p.data.float() if p.requires_grad else p.data); or use bf16 without a GradScaler",
        examples=[
            ("ValueError: Attempting to unscale FP16 gradients.", "mark1879/Baichuan-13B-Finetuning#21"),
        ],
        not_examples=["INFO: scaler will unscale FP16 gradients of the fp32 master copy before clipping"],
    ),
    pattern(
        "torchvision-cuda-mismatch",
        "platform",
        CAUSE,
        E,
        "torchvision's CUDA ops are missing: torchvision does not match the installed torch build",
        r"Could not run 'torchvision::(?P<op>\w+)' with arguments from the 'CUDA' backend|PyTorch and torchvision were compiled with different CUDA (?:major )?versions",
        ("'torchvision::", "PyTorch and torchvision were compiled"),
        why="""A CPU-only torchvision next to a CUDA torch (or a torchvision built for another torch/CUDA version:
        pip resolved them separately) has no CUDA kernels for its ops (nms, roi_align), so the first detection
        model that runs them on the GPU fails. The training code is fine.""",
        fix='pip install --force-reinstall torch torchvision --index-url https://download.pytorch.org/whl/cu121   # the pair from one index; check: python -c "import torch, torchvision; print(torch.__version__, torchvision.__version__)"',
        examples=[
            ("NotImplementedError: Could not run 'torchvision::nms' with arguments from the 'CUDA' backend. This could be because the operator doesn't exist for this backend, or was omitted during the selective/custom build process (if using custom build).", "ultralytics/ultralytics#7713"),
            ("RuntimeError: Could not run 'torchvision::nms' with arguments from the 'CUDA' backend. 'torchvision::nms' is only available for these backends: [CPU, BackendSelect, Named, AutogradOther, AutogradCPU, AutogradCUDA, AutogradXLA, Tracer, Autocast, Batched, VmapMode].", "hustvl/YOLOP#217"),
        ],
        not_examples=["NotImplementedError: Could not run 'aten::empty_strided' with arguments from the 'Meta' backend"],
        fields=groups,
    ),
    pattern(
        "cuda-library-missing",
        "platform",
        CAUSE,
        E,
        "a GPU library the program needs cannot be loaded",
        # the library's file in every loader's words (knowledge/gpu_library.py reads which part of the stack it is): Linux's
        # dlopen as an exception or the dynamic linker says it, Windows' (a DLL missing, torch's WinError 126, ctypes' module
        # not found), Paddle's and cuDNN's own. Never onnxruntime's provider library (onnxruntime-cuda-provider-failed names
        # the dependency), TensorFlow's dso_loader warning (tensorflow-gpu-libraries-not-loaded), torchvision's optional image
        # extension, nor the driver's own libraries (driver-library-not-found)
        r"^(?!.*(?:onnxruntime_providers|Could not load dynamic library|Failed to load image Python extension)).*?(?:"
        r"(?:Error: |Error\(['\"]|error while loading shared libraries: )(?:[^\s:'\"]*/)?(?P<library>" + gpu_library.SO + r"): cannot open shared object file"
        r"|(?<![\w.-])(?:[^\s'\"]*[\\/])?(?P<missing>" + gpu_library.DLL + r") (?:is|was) (?:missing|not found)"
        r"|dynamic library \((?:[^()\s]*[/\\])?(?P<named>" + gpu_library.LIBRARY + r")\) that (?P<loader>\w+) depends on is not configured correctly"
        r"|Could not load library (?P<cudnn>" + gpu_library.LIBRARY + r")\. Error"
        r"|\[WinError 126\][^\"]{0,80}Error loading \"(?P<path>[^\"]*?(?P<win>" + gpu_library.DLL + r"))\" or one of its dependencies"
        r"|Could not find module '(?P<module_path>[^']*?(?P<module>" + gpu_library.DLL + r"))'"
        # CTranslate2's (faster-whisper's), cuDNN 8's on Windows, cuDNN 9's list of the names it tried, NVRTC's own
        r"|Library (?P<ct2>" + gpu_library.LIBRARY + r") is not found or cannot be loaded"
        r"|Could not locate (?P<locate>" + gpu_library.LIBRARY + r")\. Please make sure it is in your library path"
        r"|Unable to load any of \{(?P<anyof>" + gpu_library.LIBRARY + r")"
        r"|failed to open (?P<nvrtc>" + gpu_library.LIBRARY + r")\. Make sure that \S+ is installed correctly)",
        ("cannot open shared object file", ".dll is missing", ".dll was missing", ".dll was not found", ".dll is not found", "dynamic library (",
         "Could not load library", "WinError 126", "Could not find module", "is not found or cannot be loaded", "Could not locate ",
         "Unable to load any of {", "failed to open lib"),
        why="""A compiled package (torch itself, onnxruntime, Paddle, an extension: mmcv, apex, a custom op, llama.cpp's
        bindings) was built against a GPU library this machine does not provide at that version, or provides where the
        loader does not look: a wheel for another CUDA (CUDA's runtime, cuBLAS and NVRTC carry CUDA's major version in their
        file names, cuDNN its own), a toolkit or cuDNN not installed, LD_LIBRARY_PATH (PATH on Windows) not pointing at it.
        The file's name says which part of the stack is missing and at which version; nothing in the training code runs
        before this.""",
        fix="STEP",
        examples=[
            ("ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory", "CannyLab/tsne-cuda#126"),
            ("ImportError: libcudart.so.10.0: cannot open shared object file: No such file or directory", "leofansq/CPCL#4"),
            ("PreconditionNotMetError: The third-party dynamic library (cudnn64_8.dll) that Paddle depends on is not configured correctly. (error code is 126)",
             "PaddlePaddle/Paddle#39256 (Windows, paddle.utils.run_check(): cuDNN 8's DLL not on PATH)"),
            ('OSError: [WinError 126] The specified module could not be found. Error loading "C:\\Users\\me\\miniconda3\\lib\\site-packages\\torch\\lib\\cudnn_cnn_infer64_8.dll" or one of its dependencies.',
             "torch on Windows, a cuDNN DLL or one it needs not found (pytorch/pytorch issues)"),
            ("RuntimeError: Library cublas64_12.dll is not found or cannot be loaded",
             "SYSTRAN/faster-whisper issues (CTranslate2 4.x built for CUDA 12, run where CUDA 12's cuBLAS is not on PATH)"),
            ("Could not locate cudnn_ops_infer64_8.dll. Please make sure it is in your library path!",
             "SYSTRAN/faster-whisper issues (Windows: cuDNN 8's DLLs not on PATH; the process then exits)"),
            ("Unable to load any of {libcudnn_cnn.so.9.1.0, libcudnn_cnn.so.9.1, libcudnn_cnn.so.9, libcudnn_cnn.so}",
             "m-bain/whisperX issues (CTranslate2 built for cuDNN 9 beside a torch that brought cuDNN 8)"),
            ("nvrtc: error: failed to open libnvrtc-builtins.so.12.1. Make sure that libnvrtc-builtins.so.12.1 is installed correctly.",
             "pytorch/pytorch issues (torch's JIT fusers compiling at run time, NVRTC's builtins of another CUDA)"),
        ],
        not_examples=[
            "ImportError: libGL.so.1: cannot open shared object file: No such file or directory",
            # torchvision's warning that its image extension did not load: harmless for training
            "/site-packages/torchvision/io/image.py:13: UserWarning: Failed to load image Python extension: libtorch_cuda_cu.so: cannot open shared object file: No such file or directory",
            # NCCL's optional network plug-in, probed at start (it goes on with its own implementation)
            "node1:1697707:1697707 [0] NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: cannot open shared object file: No such file or directory",
            # TensorFlow's warning (tensorflow-gpu-libraries-not-loaded reads its summary)
            "2021-04-28 17:38:36.167870: W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file: No such file or directory",
            'OSError: [WinError 126] The specified module could not be found. Error loading "C:\\x\\torch\\lib\\shm.dll" or one of its dependencies.',
        ],
        fields=gpu_library.library_fields,
    ),
    pattern(
        "windows-paging-file-too-small",
        "platform",
        CAUSE,
        E,
        "Windows ran out of virtual memory loading torch's CUDA DLLs (paging file too small)",
        r"WinError 1455\]|The paging file is too small for this operation to complete",
        ("WinError 1455", "paging file is too small"),
        why="""Every process that imports a CUDA build of torch on Windows commits virtual memory for its large
        CUDA DLLs; each DataLoader worker (spawned, so it imports torch again) and each rank does it once more,
        and the page file runs out. It is not the model or the batch size.""",
        fix="fewer processes: DataLoader(num_workers=0..2) on Windows; or let Windows manage a larger page file (System > Advanced > Performance > Virtual memory) on a drive with free space",
        examples=[
            ('OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading "D:\\anaconda3\\envs\\yolov5\\lib\\site-packages\\torch\\lib\\caffe2_detectron_ops_gpu.dll" or one of its dependencies.', "ultralytics/yolov5#11418"),
            ("OSError: [WinError 1455] The paging file is too small for this operation to complete", "thu-ml/tianshou#297"),
        ],
        not_examples=["OSError: [WinError 126] The specified module could not be found. Error loading caffe2_nvrtc.dll"],
    ),
]
