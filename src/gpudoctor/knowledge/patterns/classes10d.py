"""Rules for classes of messages of the tenth round (issue 35, diagD10): the honest "unrecognised" answers on the older
development parts (dev, dev3..dev6, heldout4..heldout6) whose failing line is a common message that a class rule can
name, sorted by the class of that message.

- the CUDA caching allocator's NVML assert (`NVML_SUCCESS == r INTERNAL ASSERT FAILED ... CUDACachingAllocator.cpp`): the
  GPU ran out of memory and torch, writing its out-of-memory report, could not list the GPU's processes through NVML
  (a MIG slice, a container, Jetson);
- host memory refused to Python or torch (MemoryError, numpy's "Unable to allocate", torch's DefaultCPUAllocator);
- Python's recursion limit (RecursionError: maximum recursion depth exceeded);
- a distribution whose metadata is missing (importlib.metadata.PackageNotFoundError, pkg_resources.DistributionNotFound):
  the package is not installed in this environment as pip sees it;
- an I/O error from the storage under a file (EIO, a stale NFS handle);
- a numerical comparison that failed its tolerance (torch.testing.assert_close: "Tensor-likes are not close!");
- Open MPI's MPI_Init failing in a process that no MPI launcher started;
- a Kubernetes volume the pod cannot mount (kubelet's MountVolume.SetUp failed);
- a failure raised inside torch.compile (Dynamo's exceptions and the footer it prints under them);
- DeepSpeed's communication backend used before deepspeed.init_distributed().

Their examples are real lines from the sampled threads (thread in the source); their counter-examples the nearest lines
that mean something else.
"""

from gpudoctor.core.findings import Severity
import re

from gpudoctor.knowledge.pattern import CAUSE, CONSEQUENCE, groups, pattern

E = Severity.ERROR

# The start of an exception's name as a traceback's last line has it (dotted module path allowed, not a part of a word).
EXCEPTION_START = r"(?:^|[\s\"'(\[`:\]])(?:[A-Za-z_]\w*\.)*"


def package_step(m, context: list[str]) -> dict:
    out = groups(m, context)
    name = out.get("package") or out.get("package2") or "the package"
    out["package"] = name.split("==")[0].split(">")[0].split("<")[0].strip(" .'\"")
    out["step"] = out["package"]
    return out


LOG_PATH = re.compile(r"^\s*(?P<task_log>\S+\.(?:out|log|err|txt))\s*$")


def task_log(m, context: list[str]) -> dict:
    """The failed task's own log: on the runner's line, or (OpenCompass's "fail, see" ends its line) on the next one."""
    out = groups(m, context)
    if not out.get("task_log"):
        nxt = next((c for c in (LOG_PATH.match(line) for line in context[:1]) if c), None)
        if nxt is not None:
            out["task_log"] = nxt.group("task_log")
    task = out.get("task") or out.get("task2") or "the task"
    out["step"] = f"{out['task_log']} (the log of {task})" if out.get("task_log") else f"the log the runner keeps for {task} (its work/output folder: logs/<stage>/<model>/<dataset>.out)"
    return out


PATTERNS_EARLY = [
    pattern(
        "cuda-oom-nvml-assert",
        "cuda",
        CAUSE,
        E,
        "the GPU ran out of memory; torch's out-of-memory report failed in NVML (caching allocator's NVML_SUCCESS assert), so the OOM shows as an internal assert",
        # c10/cuda/CUDACachingAllocator.cpp, reportProcessMemoryInfo(): called only when an allocation failed, to list the
        # processes using the GPU in the OutOfMemoryError's text; it asserts that NVML answered
        r"NVML_SUCCESS == (?:r|DriverAPI::get\(\)->\w+\([^)]*\)) INTERNAL ASSERT FAILED at \"?(?P<where>[^\"\s]*CUDACachingAllocator\.cpp)\"?(?::(?P<line>\d+))?",
        ("NVML_SUCCESS",),
        why="""The assert is in the code of torch's CUDA caching allocator that runs only after an allocation has failed: to
        write the out-of-memory message it asks NVML which processes use the GPU, and asserts that NVML answered. Where NVML
        cannot answer that question (a MIG slice, whose processes NVML does not report per slice; a container without
        access to NVML's process list; Jetson/Tegra, where NVML is partial), the assert fires instead of the usual
        "CUDA out of memory" error. So the run did run out of GPU memory (or of the MIG slice's share of it); the NVML
        failure only hides the message. What decides it: the same step with a smaller batch or model passes, and
        nvidia-smi (or torch.cuda.mem_get_info()) shows the memory of the slice, not of the whole GPU.""",
        fix="""treat it as CUDA out of memory: lower the batch size or sequence length, use gradient checkpointing or a smaller
        (or quantized) model, free cached tensors; on a MIG slice, remember it has only its own share of the GPU's memory (a
        larger slice or a whole GPU); check the CUDA_VISIBLE_DEVICES names the slice you meant (MIG-<uuid>); a torch whose
        allocator no longer asserts there (pytorch/pytorch#112377) then shows the plain out-of-memory message""".replace("\n        ", " "),
        examples=[
            ('RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at "/pytorch/c10/cuda/CUDACachingAllocator.cpp":1015, please report a bug to PyTorch.',
             "m-bain/whisperX#1198 (an A100 MIG 1g.10gb slice, some files only)"),
            ('RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at "/opt/conda/conda-bld/pytorch_1695392020201/work/c10/cuda/CUDACachingAllocator.cpp":1154, please report a bug to PyTorch.',
             "pytorch/pytorch#112377 (Llama2-13B on a MIG slice: out of memory)"),
            ('RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at "../c10/cuda/CUDACachingAllocator.cpp":830, please report a bug to PyTorch.',
             "fal-ai/fal#478 ('CUDA OOM could sometimes look like' this)"),
        ],
        not_examples=[
            'RuntimeError: !block->expandable_segment_ INTERNAL ASSERT FAILED at "/pytorch/c10/cuda/CUDACachingAllocator.cpp":2597, please report a bug to PyTorch.',
            "RuntimeError: NVML error: Driver/library version mismatch",
        ],
        fields=groups,
    ),
]


# The words of a MemoryError that say the host refused the memory: Python's own (no message at all, pybind11's std::bad_alloc),
# numpy's "Unable to allocate ... for an array", the C library's errno 12, or a message that names the host's memory.
HOST_SAID = r"Unable to allocate|bad_alloc|bad allocation|[Cc]annot allocate memory|\bRAM\b|\bhost\b|\bCPU\b|\bswap\b|page file|paging file"
# The words that make a memory error the GPU's whatever wraps it: the CUDA runtime's or driver's allocation status.
DEVICE_SAID = r"(?:cudaErrorMemoryAllocation|CUDA_ERROR_OUT_OF_MEMORY|CUDA (?:error: )?out of memory|cudaMalloc)"

PATTERNS = [
    pattern(
        "memory-error-own-message",
        "platform",
        CAUSE,
        E,
        "a MemoryError with a program's own message: the run ran out of memory, and which (host RAM or the GPU's) is in that message and the code that raised it, not in Python's class",
        # a message of a library's own: none of the host's words (those are host-memory-exhausted's)
        EXCEPTION_START + r"MemoryError: (?P<message>(?!.*(?:" + HOST_SAID + r"))\S.*)$",
        ("MemoryError",),
        why="""Python raises MemoryError itself when the host refuses memory, with no message (numpy's says "Unable to allocate
        ... for an array"); torch reports the GPU's memory as "CUDA out of memory" (OutOfMemoryError) instead. A MemoryError
        with a sentence of its own was raised by a program's code on purpose, and programs do that for either memory: a
        library that checks whether a model fits where it will run raises it for the GPU's (pykeen's "The current model can't
        be trained on this hardware with these parameters." when no batch size fits on the GPU), another for the host's. The
        class says only that memory ran short; the message, the `raise MemoryError(...)` line above it and the device the run
        was given say which.""",
        fix="""read the message and the code that raised it (the `raise MemoryError(...)` line in the traceback): a run on a GPU
        (device='cuda') that a library found too big for it is out of GPU memory: a smaller batch, a smaller model (fewer
        embedding dimensions, layers or parameters), mixed precision, or a GPU with more memory (nvidia-smi during the run shows
        its memory filling); if it is the host's RAM: watch it during the run (free -g), lower DataLoader num_workers, load data
        lazily, raise the job's or container's memory limit""".replace("\n        ", " "),
        examples=[
            ("MemoryError: The current model can't be trained on this hardware with these parameters.",
             "pykeen/pykeen#576 (RGCN on a 16 GB V100: the GPU's memory; the maintainer: reduce the embedding dimension)"),
        ],
        not_examples=[
            "MemoryError",
            "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 1.61 GiB for an array with shape (753, 536, 536) and data type float64",
            "MemoryError: std::bad_alloc",
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB",
        ],
        fields=groups,
    ),
    pattern(
        "host-memory-exhausted",
        "platform",
        CAUSE,
        E,
        "the process could not get host memory (RAM): Python's MemoryError, torch's/numpy's CPU allocation, the OS's ENOMEM, or pinned (page-locked) host memory refused",
        # (not a MemoryError that wraps the CUDA runtime's allocation status: the GPU's, cuda-oom's)
        r"(?:" + EXCEPTION_START + r"(?:_Array)?MemoryError(?:: (?P<message>(?!.*" + DEVICE_SAID + r")\S.*))?$"
        r"|DefaultCPUAllocator: (?:can't allocate memory|not enough memory): you tried to allocate (?P<bytes>\d+) bytes"
        # pinned (page-locked) host memory the CUDA runtime could not get: the host's, though CUDA reports it
        r"|(?P<pinned>(?:cudaHostAlloc|cudaMallocHost|CachingHostAllocator)\b.{0,200}?(?:out of memory|cudaErrorMemoryAllocation|failed).*"
        r"|failed to alloc \d+ bytes on host: CUDA_ERROR_OUT_OF_MEMORY.*|could not allocate pinned host memory of size: \d+)"
        # the OS refusing the process memory (ENOMEM), most often at fork() of DataLoader workers
        r"|OSError: \[Errno 12\] (?P<enomem>Cannot allocate memory))",
        ("MemoryError", "DefaultCPUAllocator", "cudaHostAlloc", "cudaMallocHost", "CachingHostAllocator", "bytes on host", "pinned host memory", "[Errno 12]"),
        why="""The request for memory was refused by the operating system, on the host, not on the GPU (a GPU's is a "CUDA out of
        memory" OutOfMemoryError): the process, with everything else on the machine, used up the RAM it may have (and on
        Windows the page file, which backs every allocation there). In training this is most often the same data held by
        many processes: each DataLoader worker or each rank on the node loading the whole dataset, a model loaded in full
        in every rank before sharding (a big checkpoint times 8 ranks), a container's or a job's memory limit (cgroup,
        SLURM --mem) below what all of them need; or one allocation far larger than intended (the size the message gives:
        a wrong shape, an array built of the whole dataset). Pinned memory (pin_memory=True, which torch takes from its
        caching host allocator, cudaHostAlloc, a framework's host buffers for copies to the GPU) is host memory too, though the CUDA runtime reports its failure: page-locked memory is
        limited by the RAM and by the container's or the user's locked-memory limit (ulimit -l), often far below the RAM.""",
        fix="""watch host memory during the run (free -g, top; on Windows the Task Manager's commit charge): lower DataLoader
        num_workers (each one copies what the dataset holds), load data lazily (memory-mapped files, a streaming dataset)
        instead of all at once, load the model once per node or straight to the GPU (low_cpu_mem_usage=True,
        map_location), start fewer ranks per node; on Windows enlarge the page file; pinned memory: pin_memory=False, or raise ulimit -l (a container: docker run --ulimit memlock=-1 --ipc=host, its locked and shared memory limits); in a container or SLURM job, raise its
        memory limit; a single huge allocation: check the shape in the message against what you meant""".replace("\n        ", " "),
        examples=[
            ("MemoryError", "ultralytics/ultralytics#9476 (Windows: dataloader workers re-importing ultralytics until RAM and page file ran out)"),
            ("numpy.core._exceptions._ArrayMemoryError: Unable to allocate 1.61 GiB for an array with shape (753, 536, 536) and data type float64",
             "MIC-DKFZ/nnUNet#2213"),
            ("RuntimeError: [enforce fail at alloc_cpu.cpp:73] . DefaultCPUAllocator: can't allocate memory: you tried to allocate 116813856768 bytes. Error code 12 (Cannot allocate memory)",
             "JingyunLiang/VRT#49 (16 GB of RAM)"),
            ("2024-10-22 09:22:17.233972: E tensorflow/stream_executor/cuda/cuda_driver.cc:802] failed to alloc 34359738368 bytes on host: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
             "talmolab/sleap#2001 (pinned host memory the CUDA driver could not page-lock: https://github.com/talmolab/sleap/issues/2001)"),
            ("OSError: [Errno 12] Cannot allocate memory", "ClementPinard/FlowNetPytorch#85 (os.fork() of DataLoader workers as RAM filled up)"),
        ],
        not_examples=[
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB",
            "    except MemoryError:",
            "OutOfMemoryError",
            "MemoryError: std::bad_alloc: cudaErrorMemoryAllocation: out of memory",  # the GPU's (GradientSpaces/WildGS-SLAM#60)
            "NCCL INFO init.cc:327 Cuda Host Alloc Size 4 pointer 0x7f2b32600200 seconds: cudaHostAlloc=6.2093e-05",
        ],
        fields=groups,
    ),
    pattern(
        "python-recursion-limit",
        "launcher",
        CAUSE,
        E,
        "Python's recursion limit was reached (RecursionError): a function calls itself without end, or a structure is nested too deep",
        EXCEPTION_START + r"(?:RecursionError|RuntimeError): maximum recursion depth exceeded(?P<where>.*)",
        ("maximum recursion depth",),
        why="""Python stops a thread whose call stack grows past its recursion limit (1000 frames by default). Nearly always the
        calls are a cycle that never ends: a method that reaches itself again (a __getattr__ or property that reads an
        attribute it does not have, which calls __getattr__ again; a wrapper whose forward calls the wrapped module that is
        the wrapper itself: a model wrapped twice, a patched method that calls its patched self; a __deepcopy__ or
        __reduce__ that copies itself). Less often the work is legitimately deep: pickling or deep-copying a long linked
        structure, a very deep nn.Sequential built recursively. The traceback's repeating frames show the cycle: the
        same few lines over and over.""",
        fix="""read the frames that repeat in the traceback (Python prints the first ones and "[Previous line repeated N more
        times]"): the cycle is between them; break it there (a __getattr__ that raises AttributeError for a missing name
        instead of reading it again; wrap the model once; call the original method, not the patched name); only when the
        depth is legitimate raise the limit (sys.setrecursionlimit(10000)) or make the structure flat""".replace("\n        ", " "),
        examples=[
            ("RecursionError: maximum recursion depth exceeded while calling a Python object", "deepspeedai/DeepSpeed#4440 (the training loop under DeepSpeed on several GPUs)"),
            ("RecursionError: maximum recursion depth exceeded in comparison", "Python's message when the limit is hit in a comparison"),
        ],
        not_examples=["sys.setrecursionlimit(10000)  # avoid RecursionError when pickling deep models", "    except RecursionError:"],
        fields=groups,
    ),
    pattern(
        "package-metadata-missing",
        "platform",
        CAUSE,
        E,
        "a package's installed metadata was not found: it is not installed in this environment (as pip sees it)",
        EXCEPTION_START + r"(?:PackageNotFoundError: (?:No package metadata was found for )?(?P<package>[A-Za-z0-9][\w.\-]*)"
        r"|DistributionNotFound: (?:The '(?P<package2>[^']+)' distribution was not found and is required by (?P<by>.+)|(?P<package3>[A-Za-z0-9][\w.\-]*\S*)$))",
        ("PackageNotFoundError", "DistributionNotFound"),
        why="""The code asked Python's packaging metadata (importlib.metadata.version(), pkg_resources) for an installed
        distribution by name, and this environment has no record of it (no .dist-info/.egg-info for that name). The package
        is then not installed in the interpreter that runs (another virtual environment or conda env, the system python
        under sudo or a launcher), or only half installed: a pip install from source whose build failed (the package's
        folder importable from the source tree on sys.path, without metadata), a copy put on PYTHONPATH by hand, an
        editable install whose metadata was removed. Version checks at import time (transformers, accelerate, TE) read this
        metadata, so an import can fail this way although the folder is there.""",
        fix="""in the same interpreter the job runs (python -m pip, not another pip): `python -m pip show STEP`; not there: install it
        (python -m pip install STEP, or its wheel for this CUDA/torch); installed from source: reinstall it and read the
        build's own error if the build fails (pip install -v --no-build-isolation ...), and do not run from inside its
        source folder""".replace("\n        ", " "),
        examples=[
            ("importlib.metadata.PackageNotFoundError: transformer-engine.", "NVIDIA/TransformerEngine#1216 (the wheel build from git had failed)"),
            ("importlib.metadata.PackageNotFoundError: No package metadata was found for bitsandbytes", "importlib.metadata's wording since Python 3.10"),
            ("pkg_resources.DistributionNotFound: The 'cellprofiler' distribution was not found and is required by the application", "CellProfiler/CellProfiler#2494"),
        ],
        not_examples=[
            "ModuleNotFoundError: No module named 'transformer_engine'",
            "WARNING: Package(s) not found: transformer-engine",
        ],
        fields=package_step,
    ),
    pattern(
        "storage-io-error",
        "platform",
        CAUSE,
        E,
        "the filesystem returned an I/O error (EIO, or a stale NFS handle): the storage under the file failed, not the program",
        EXCEPTION_START + r"(?:OSError|IOError|\w+Error): \[Errno (?P<errno>5|116)\] (?P<what>Input/output error|Stale file handle|Unable to [^(]*\(.*errno = 116.*)(?P<path>: .*)?",
        ("Errno 5]", "Errno 116]"),
        why="""The call reached the operating system, which could not read or write the file: errno 5 (EIO) is the storage
        device or the network filesystem failing the request (a failing disk, a network or parallel filesystem (NFS,
        Lustre, GPFS, a cloud FUSE mount such as s3fs/gcsfuse/blobfuse) that lost its server or timed out, a file larger
        than the mount supports through memory-mapping); errno 116 (ESTALE) is an NFS client holding a handle to a file that
        another client deleted or replaced (shared checkpoint, cache or lock files written from several nodes). It is no
        bug in the program: the same code works on local disk, and on a shared filesystem it fails only sometimes or only
        on some nodes.""",
        fix="""check the mount the path is on (df -h PATH; dmesg -T | grep -i -E 'i/o error|nfs|lustre'); put the file on local disk
        (or node-local scratch) to confirm; for files written by many ranks, let one rank write and the others wait (a
        barrier), and give each node its own cache and lock directory (HF_HOME, TMPDIR) rather than one on NFS; a failing
        disk or mount is one for the cluster's admins""".replace("\n        ", " "),
        examples=[
            ("OSError: [Errno 5] Input/output error", "allenai/OLMo#737 (np.memmap of the global indices on a shared filesystem, multi-node only)"),
            ("OSError: [Errno 116] Stale file handle", "huggingface/transformers#9732 (torch.save of a checkpoint)"),
            ("[rank1]: OSError: [Errno 116] Stale file handle: xxx", "modelscope/ms-swift#6695 (a datasets cache on a shared filesystem, every node)"),
        ],
        not_examples=[
            "OSError: [Errno 28] No space left on device",
            "FileNotFoundError: [Errno 2] No such file or directory: 'data/train.json'",
            "OSError: [Errno 121] Remote I/O error",
        ],
        fields=groups,
    ),
    pattern(
        "numerical-mismatch",
        "numerics",
        CAUSE,
        E,
        "a numerical check failed: two results differ by more than its tolerance (torch.testing.assert_close)",
        r"(?P<what>Tensor-likes|Scalars) are not (?P<how>close|equal)!",
        ("are not close!", "are not equal!"),
        why="""A test or a parity check compared a result with a reference (torch.testing.assert_close, the assertion of
        torch's test helpers) and found elements further apart than its tolerance (rtol/atol; exactly equal for "not
        equal"). The lines after it give how many elements differ and the greatest absolute and relative difference
        against the tolerance allowed. Small differences on a few elements are numerical: another kernel, another
        reduction order (tensor-parallel and distributed sums add in another order), TF32 or bf16 matmuls, a fused
        kernel; large ones, or many elements, are a wrong result (a bug in the code under test, a wrong shard or
        gradient).""",
        fix="""compare the greatest difference with the tolerance in the lines after it: a difference near the precision of the
        dtype (1e-3 in bf16/fp16, 1e-5 with TF32) is numerical: compare in float32 with TF32 off
        (torch.backends.cuda.matmul.allow_tf32 = False) or use a tolerance for that dtype (rtol/atol of assert_close);
        a large one, or one that does not shrink in float32, is a wrong result: bisect which op or shard differs""".replace("\n        ", " "),
        examples=[
            ("AssertionError: [column-parallel linear1_0.weight] Tensor-likes are not close!", "Lightning-AI/lightning-thunder#2575 (tensor-parallel gradient parity: 1.5e-3 against 1e-5 allowed)"),
            ("AssertionError: Scalars are not close!", "torch.testing.assert_close's wording for two numbers"),
        ],
        not_examples=["torch.testing.assert_close(actual=grad, expected=ref_grad, msg=msg)", "all close: True"],
        fields=groups,
    ),
    pattern(
        "mpi-init-failed",
        "launcher",
        CAUSE,
        E,
        "MPI could not initialise in this process (MPI_Init failed): a library that bootstraps through MPI ran without an MPI launcher's runtime",
        r"(?:^|\*\s*)An error occurred in (?P<call>MPI_Init(?:_thread)?)\b|It looks like (?P<call2>MPI_INIT) failed for some reason",
        ("An error occurred in MPI_Init", "MPI_INIT failed"),
        why="""Open MPI's MPI_Init could not set up the process: it needs the runtime of an MPI launcher (mpirun/mpiexec, or
        srun with the PMI/PMIx plugin Open MPI was built for) to tell it its rank and peers, or a working singleton set-up.
        Started by torchrun, by srun without a matching --mpi, or in a container whose Open MPI does not match the host's,
        it fails and aborts the process ("on a NULL communicator ... MPI_ERRORS_ARE_FATAL"). In PyTorch jobs MPI is
        usually not the launcher but a library that uses it to bootstrap: TransformerEngine's userbuffers for
        tensor-parallel communication overlap (tp_comm_overlap), Horovod, mpi4py imported by a dependency.""",
        fix="""start the job the way the library's MPI needs (mpirun -np N ..., or srun --mpi=pmix ... on SLURM), or switch the
        library away from MPI: for TransformerEngine/Megatron/NeMo's tensor-parallel comm overlap turn tp_comm_overlap off
        or bootstrap userbuffers with NCCL/gloo (tp_comm_bootstrap_backend='nccl' in Megatron-Core, ub_bootstrap
        settings in TE); `ompi_info | head` and `srun --mpi=list` show what this Open MPI supports""".replace("\n        ", " "),
        examples=[
            ("*** An error occurred in MPI_Init_thread", "NVIDIA-NeMo/Megatron-Bridge#650 (TP communication overlap, the recipe's default, under torchrun)"),
            ("It looks like MPI_INIT failed for some reason; your parallel process is", "Open MPI's help text for a failed init"),
        ],
        not_examples=["[INFO] MPI_Init_thread: thread level MPI_THREAD_MULTIPLE", "*** An error occurred in MPI_Allreduce"],
        fields=groups,
    ),
    pattern(
        "k8s-volume-mount-failed",
        "launcher",
        CAUSE,
        E,
        "Kubernetes could not mount a volume of the pod (MountVolume failed): the pod cannot start",
        r"MountVolume\.(?P<stage>SetUp|MountDevice|WaitForAttach|NewMounter initialization) failed for volume \"(?P<volume>[^\"]+)\"\s*:?\s*(?P<reason>.*)"
        r"|Unable to (?:attach or )?mount volumes(?: for pod [^:]+)?: unmounted volumes=\[(?P<volumes>[^\]]*)\]",
        ("MountVolume.", "mount volumes"),
        why="""The kubelet must set up every volume of a pod before its containers start; here one could not be mounted, so the
        pod stays in ContainerCreating/Pending and the job never starts (a launcher above Kubernetes may only report it as
        pending or pulling images). The reason after the volume's name says which: a hostPath that does not exist on that
        node or is not of the type the spec says (a directory), a PersistentVolumeClaim not bound or bound in another
        zone, an NFS/CSI server that does not answer, a Secret or ConfigMap that does not exist.""",
        fix="""kubectl describe pod POD (its Events give the volume and the reason) and fix that volume: create the hostPath on every
        node the pod can run on (or correct the path/type in the pod spec or the launcher's pod_config), bind the PVC
        (kubectl get pvc), create the missing Secret/ConfigMap, or reach the NFS/CSI server from the node""".replace("\n        ", " "),
        examples=[
            ('Warning  FailedMount  89s (x12 over 9m43s)  kubelet            MountVolume.SetUp failed for volume "sharedfs" : hostPath type check failed: /mnt/data is not a directory',
             "skypilot-org/skypilot#7925 (the pod Pending; SkyPilot reported it as pulling images)"),
            ("Warning  FailedMount  2m  kubelet  Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[kube-api-access-x data]: timed out waiting for the condition",
             "kubelet's event for a volume that never mounted"),
        ],
        not_examples=["Normal   SuccessfulMountVolume  1m  kubelet  MountVolume.SetUp succeeded for volume \"sharedfs\""],
        fields=groups,
    ),
    pattern(
        "torch-compile-failed",
        "platform",
        CAUSE,
        E,
        "the failure was raised inside torch.compile (Dynamo tracing or a compiler backend)",
        r"(?:" + EXCEPTION_START + r"_dynamo\.exc\.(?P<exception>BackendCompilerFailed|Unsupported|InternalTorchDynamoError|TorchRuntimeError|UserError|"
        r"RestartAnalysis|TorchDynamoException)\b(?P<message>.*)"
        r"|You can suppress this exception and fall back to eager by setting:)",
        ("_dynamo.exc.", "fall back to eager"),
        why="""The exception went through torch.compile: Dynamo (which traces the Python code into graphs) or the backend that
        compiles them (Inductor, or another backend: Thunder, TensorRT) raised it, which Dynamo says by its exception
        classes and by the footer it prints under them ("You can suppress this exception and fall back to eager").
        BackendCompilerFailed is the compiler failing on a graph (the exception after "raised:" is the compiler's);
        Unsupported is Python that Dynamo cannot trace under fullgraph=True (or with a wrapper such as FSDP/DDP it does not
        support in that torch version); TorchRuntimeError is the traced code failing on fake tensors, often the same error
        the eager code would raise. What decides whether compile is at fault: the same step without torch.compile.""",
        fix="""run the same step without torch.compile (or with torch._dynamo.config.suppress_errors = True, which falls back to
        eager for graphs that fail): if it then works, the compiler is at fault: TORCH_LOGS="+dynamo" TORCHDYNAMO_VERBOSE=1
        give the failing graph and op; try another torch version, mode="default" instead of max-autotune, fullgraph=False
        for Unsupported, or compile the inner module instead of the FSDP/DDP wrapper; if eager fails too, fix that error
        first""".replace("\n        ", " "),
        examples=[
            ("You can suppress this exception and fall back to eager by setting:", "pytorch/pytorch#118984 (torch.compile with DDP and checkpointing, torch 2.2.0)"),
            ("E           torch._dynamo.exc.BackendCompilerFailed: backend='<thunder.dynamo.compiler.ThunderCompiler object at 0x7fd84ecee6b0>' raised:",
             "Lightning-AI/lightning-thunder#2085 (ThunderFX as Dynamo's backend)"),
            ("[rank1]: You can suppress this exception and fall back to eager by setting:", "karpathy/nanoGPT#545 (the footer under a rank's traceback)"),
        ],
        not_examples=[
            "torch._dynamo.config.suppress_errors = False  # fail loudly",
            "W1009 12:00:00.000 torch/_dynamo/convert_frame.py:844] torch._dynamo hit config.cache_size_limit (8)",
        ],
        after=("*",),  # the error the backend raised, when a pattern names it (after "raised:"), is the cause; compile is where
        fields=groups,
    ),
    pattern(
        "deepspeed-comm-not-initialized",
        "ddp",
        CAUSE,
        E,
        "DeepSpeed's communication backend was used before it was initialised (deepspeed.init_distributed() not called)",
        r"DeepSpeed backend not set, please initialize it using init_process_group\(\)",
        ("DeepSpeed backend not set",),
        why="""deepspeed.comm (DeepSpeed >= 0.6) holds its own communication backend, set by deepspeed.init_distributed() (which
        deepspeed.initialize() calls when the process group is not set up yet). A call into deepspeed.comm before that
        (a collective, get_rank, a barrier in the program's own set-up) finds no backend. Code written for older DeepSpeed
        made the process group with torch.distributed alone and used DeepSpeed's calls after it; with a newer DeepSpeed
        the same code stops here. The message's "init_process_group" is deepspeed.comm's name for it.""",
        fix="""call deepspeed.init_distributed() (it makes the torch process group too) before the first DeepSpeed or
        torch.distributed call, in place of torch.distributed.init_process_group; or run the code with the DeepSpeed
        version it was written for (its requirements)""".replace("\n        ", " "),
        examples=[
            ("DeepSpeed backend not set, please initialize it using init_process_group()", "THUDM/Chinese-Transformer-XL#17 (code for DeepSpeed <= 0.5.9)"),
            ("AssertionError: DeepSpeed backend not set, please initialize it using init_process_group()", "deepspeed/comm/comm.py's assertion as raised"),
        ],
        not_examples=["[INFO] [comm.py:637:init_distributed] cdb=None", "Initializing TorchBackend in DeepSpeed with backend nccl"],
        fields=groups,
    ),
    pattern(
        "task-runner-failed-see-log",
        "launcher",
        CONSEQUENCE,
        E,
        "a task runner reports that one of its tasks failed: the task's own error is in the task log it names, not in this log",
        # OpenCompass's LocalRunner (runners/local.py _launch) and its summary (runners/base.py summarize); a runner of the same
        # shape ("task NAME fail(ed), see PATH")
        r"\btask (?P<task>\S+) fail(?:ed)?(?: with code (?P<code>-?\d+))?, see(?:\s+(?P<task_log>\S+\.(?:out|log|err|txt)))?\s*$"
        r"|- summarize - \d+ - (?P<task2>\w+\[[^\]]*\]) failed with code (?P<code2>-?\d+)",
        ("fail, see", "failed, see", "failed with code"),
        why="""The runner starts each task (an inference or evaluation job, a shard of the work) as its own process and writes that
        process's output to a file of its own; on the console it reports only that the task failed (and its exit code),
        pointing at that file. The task's traceback, and so the cause, is in that file, not in the runner's output pasted
        here. The same cause usually fails every task of the run (a model that does not load, a missing package, a GPU out
        of memory), so the first task's log is the one to read. Exit code 127 is a command not found (the task's python or
        its entry point).""",
        fix="""read the failed task's own log: STEP; its last traceback is the cause: gpudoctor diagnose that file; rerun the run
        with --debug (OpenCompass) to have the tasks print to the console instead""".replace("\n        ", " "),
        examples=[
            ("04/11 09:19:49 - OpenCompass - ERROR - /cluster/project/sachan/yilei/projects/opencompass/opencompass/runners/local.py - _launch - 192 - task OpenICLInfer[llama-2-7b/tydiqa-goldp_arabic,llama-2-7b/tydiqa-goldp_russian] fail, see",
             "open-compass/opencompass#1040 (every OpenICLInfer task failed; the path of its .out on the next line)"),
            ("12/13 01:45:41 - OpenCompass - ERROR - /workspace/opencompass-main/opencompass/runners/base.py - summarize - 63 - OpenICLEval[mymodel_roberta/siqa] failed with code 127",
             "open-compass/opencompass#696 (the maintainer: check the output log in the outputs folder)"),
        ],
        not_examples=[
            "launch OpenICLInfer[llama-2-7b/tydiqa-goldp_arabic] on GPU 0",
            "04/11 09:19:44 - OpenCompass - INFO - Partitioned into 4 tasks.",
            "task 3 failed, retrying (attempt 2/3)",
        ],
        context_after=1,
        fields=task_log,
    ),
    pattern(
        "launcher-nproc-invalid",
        "launcher",
        CAUSE,
        E,
        "torchrun (torch.distributed.launch) was given a --nproc_per_node that is not a number of processes",
        # torch/distributed/run.py determine_local_world_size: int(nproc_per_node), else "cpu"/"gpu"/"auto", else this
        r"Unsupported nproc_per_node value: ?(?P<value>.*)",
        ("nproc_per_node",),
        why="""The launcher reads --nproc_per_node as a number of processes per node (or cpu, gpu, auto) and got something else.
        Almost always it was started by a project's wrapper script (tools/dist_train.sh CONFIG GPUS ..., run_dist.sh) whose
        positional arguments were not given as it expects: the GPU count left out, so the variable is empty (the value
        is '') or is the next argument (a path, --work-dir, GPUS=2); a script written for another order of arguments does
        the same. Nothing ran yet.""",
        fix="""give the wrapper its arguments in its own order, the number of GPUs where it reads it (e.g. bash tools/dist_train.sh
        CONFIG 4 --work-dir DIR: read the script's GPUS=$2 / NGPUS line), or call torchrun yourself with --nproc_per_node=N
        (or --nproc_per_node=gpu for every visible GPU)""".replace("\n        ", " "),
        examples=[
            ("ValueError: Unsupported nproc_per_node value: GPUS=2", "open-mmlab/mmdetection3d#2697"),
            ("ValueError: Unsupported nproc_per_node value: --work-dir", "open-mmlab/mmaction2#1476 (the GPU count left out: the next option read as it)"),
            ("ValueError: Unsupported nproc_per_node value: ", "zcablii/LSKNet#112 (dist_train.sh run with its placeholders: the count empty)"),
        ],
        not_examples=[
            "torchrun --nproc_per_node=8 train.py",
            "ValueError: invalid literal for int() with base 10: ''",  # alone: any int() of an empty string
        ],
        fields=groups,
    ),
    pattern(
        "rsync-remote-failed",
        "launcher",
        CAUSE,
        E,
        "rsync could not copy files to or from the remote node: its connection (over ssh) failed or closed",
        # rsync's exit codes: 255 its remote shell (ssh) failed, 12 the protocol stream ended (the remote side went away)
        r"rsync error: (?P<what>unexplained error|error in rsync protocol data stream) \(code (?P<code>255|12)\)",
        ("rsync error: ",),
        why="""A cluster launcher (ray up, sky launch, a job script) copies the code, keys and credentials to each node with rsync,
        which runs over ssh. Code 255 is ssh itself failing: the node not reachable or not yet accepting ssh (a VM still
        booting or restarting its sshd in its first minutes), the key or user refused, the host key changed; code 12 is the
        remote side ending the transfer: no rsync installed on the node, a login shell on it that prints text into the
        stream, or the node dropping the connection. "connection unexpectedly closed (N bytes received so far)" before it
        is the same event. The set-up of that node fails, not the training.""",
        fix="""test the same connection by hand, with the key and user the launcher uses: ssh -v -i KEY USER@NODE true (it shows
        refused, timed out or denied), and `ssh USER@NODE which rsync`; a fresh VM: wait until it accepts ssh and relaunch
        (sky launch / ray up again retries the set-up); install rsync in the node's image; remove what prints from the node's
        ~/.bashrc for non-interactive shells""".replace("\n        ", " "),
        examples=[
            ("rsync error: unexplained error (code 255) at io.c(235) [sender=3.1.2]", "skypilot-org/skypilot#618 (ray up's head node set-up on a fresh Azure VM)"),
            ("rsync error: error in rsync protocol data stream (code 12) at io.c(226) [sender=3.1.2]", "davidolrik/sublime-rsync-ssh#47 (the two ends' rsync did not agree)"),
        ],
        not_examples=["rsync -avz --progress ./ user@node:~/work", "sent 76 bytes  received 138 bytes  total size 9236", "rsync error: some files/attrs were not transferred (see previous errors) (code 23)"],
        fields=groups,
    ),
]

