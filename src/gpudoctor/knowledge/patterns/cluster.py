"""The GPU stack under a job: the scheduler that places its pods, and the components that hand a
node's GPUs to containers (the container runtime's hook, device plugins, DRA, feature discovery).

Their logs are pasted as often as the job's own: a pod that never started, a plugin that cannot
find the driver. Each rule covers its family's variants (issue 35 item 4), with real lines of the
sampled corpus (tests/fixtures/log_sample/dev3) and the look-alikes that mean something else.
"""

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, groups, pattern

E = Severity.ERROR

# What decides it for a program that loads the driver's library itself (not a component of the node's GPU stack)
PROGRAM_STEP = ("nvidia-smi where the program runs (the notebook, the container, the pod) decides it: not found or no GPU = no driver "
                "there: a notebook's GPU runtime (Colab: Runtime > Change runtime type > a GPU), docker run --gpus all, a pod with an "
                "nvidia.com/gpu limit and the NVIDIA runtime; a GPU listed = the library is off the loader's path (WSL: "
                "/usr/lib/wsl/lib on LD_LIBRARY_PATH)")


# nvidia-smi's own words that it cannot load NVML: the tool runs, the driver's library is not where it looks
SMI_STEP = ("nvidia-smi itself runs but cannot load the driver's NVML library (libnvidia-ml.so.1): in a container the runtime did "
            "not bind the host's driver libraries in (docker run --gpus all, or --runtime=nvidia with the NVIDIA Container Toolkit; "
            "apptainer/singularity exec --nv: ls /.singularity.d/libs inside must list libnvidia-ml.so.1, and echo $LD_LIBRARY_PATH "
            "must hold that folder, which an image's own environment can replace), or only the versioned file "
            "(libnvidia-ml.so.<driver>) is there without its .so.1 link (ldconfig inside, as root, makes it); on the host itself "
            "the driver's user-space part is missing: install the driver's utilities at the kernel module's version (cat "
            "/proc/driver/nvidia/version)")
# a program that loads the driver's library at run time itself (ffmpeg's hardware contexts, a Rust or Julia CUDA binding,
# numba, pynvml): the program's words name the file, and nothing about a node's components
OWN_LOAD_STEP = ("the program loads the NVIDIA driver's own library at run time and the loader did not find it: ldconfig -p | grep "
                 "-E 'libcuda|libnvidia-ml' (Windows: where nvcuda.dll, in C:\\Windows\\System32) shows whether the driver's "
                 "user-space part is installed; none: install the NVIDIA driver (nvidia-smi must then list the GPU); in a container "
                 "it comes from the host through the runtime (docker run --gpus all with NVIDIA_DRIVER_CAPABILITIES holding what the "
                 "program uses: video for NVENC/NVDEC, compute for CUDA; apptainer --nv); a packaged program must have the driver's "
                 "folder on its library path (NixOS: /run/opengl-driver/lib, with the driver enabled in the system's configuration); "
                 "on a machine without an NVIDIA GPU the program's CUDA/NVENC path cannot work: use its other backend")


def driver_library_fields(m, context: list[str]) -> dict:
    """The driver's library, and whose load failed: a program's own (its step first) or a GPU component's."""
    out = groups(m, context)
    if out.get("program"):
        out.update(library=out.pop("program"), step=PROGRAM_STEP, read_as="driver-library-not-found")
    elif out.get("smi"):
        out.update(library=out.pop("smi") + ".1", step=SMI_STEP, read_as="driver-library-not-found")
    elif out.get("own") or out.get("nvml_own") or out.get("own_cuda"):
        library = out.pop("own", "") or ("libnvidia-ml.so.1" if out.get("nvml_own") else "libcuda.so.1")
        out.pop("nvml_own", None), out.pop("own_cuda", None)
        out.update(library=library, step=OWN_LOAD_STEP, read_as="driver-library-not-found")
    return out


PATTERNS = [
    pattern(
        "pod-unschedulable",
        "launcher",
        CAUSE,
        E,
        "the scheduler found no node for the job's pods (not enough free GPUs, or no node it may use)",
        # kube-scheduler's event (every node refused, each reason counted) and a gang scheduler's (Volcano, PodGroup)
        r"\b0/(?P<nodes>\d+) nodes are available: (?P<reasons>.+)|(?P<tasks>\d+/\d+) tasks in gang unschedulable: (?P<gang>.+)",
        ("nodes are available", "gang unschedulable"),
        why="""The pod was never placed, so nothing of the job ran. The message lists, per reason, how many nodes refused it:
        `Insufficient nvidia.com/gpu` means no node has that many free GPUs advertised, either because other pods hold them or
        because the node advertises none (its device plugin is not running, or the GPUs are offered under another resource name,
        such as MIG slices or shared GPUs); a taint, node selector or affinity the pod does not match removes nodes whatever they
        hold; and a gang (a Volcano job or a PodGroup with minAvailable) waits until all its members fit at once
        (NotEnoughResources), so a job asking for more GPUs than the queue or the cluster has free waits for ever.""",
        fix="""kubectl describe node NODE | grep -A8 -E 'Allocatable|Allocated'   # does it advertise nvidia.com/gpu, and who holds them
        (kubectl get pods -A -o wide --field-selector spec.nodeName=NODE); then lower the request (or minAvailable), free GPUs,
        fix the device plugin on that node, or add the toleration / selector the node needs; for a gang: kubectl describe podgroup
        and the queue's capacity""".replace("\n        ", " "),
        examples=[
            ("  Warning  Unschedulable  69s (x78789 over 26h)  volcano  1/1 tasks in gang unschedulable: pod group is not ready, 1 Pending, 1 minAvailable.", "volcano-sh/volcano#1094"),
            ("[map[type:PodScheduled lastProbeTime:<nil> lastTransitionTime:2018-02-26T21:58:32Z message:0/2 nodes are available: 1 PodToleratesNodeTaints, 2 Insufficient nvidia.com/gpu. reason:Unschedulable status:False]]", "NVIDIA/k8s-device-plugin#36"),
        ],
        not_examples=[
            # one node refusing the task while the scheduler goes on to bind it to another
            "I1009 06:42:18.755838       1 scheduler_helper.go:49] Predicates failed for task <default/lm-mpi-job-mpiworker-0> on node <p40-3>: task default/lm-mpi-job-mpiworker-0 on node p40-3 fit failed: node(s) resource fit failed",
            "  Normal  Scheduled  5s    default-scheduler  Successfully assigned default/gpu-pod to gpu-node-1",
            "3/3 nodes are available for scheduling",
        ],
        fields=groups,
    ),
    pattern(
        "driver-library-not-found",
        "platform",
        CAUSE,
        E,
        "the NVIDIA driver's user-space library (libcuda.so.1, libnvidia-ml.so.1) cannot be found: no driver where it runs, or not where it looks",
        r"(?:error locating|could not load NVML library:?|load library failed:) \"?(?P<library>lib(?:nvidia-ml|cuda)\.so\.1)\"?"
        # a program's own load of it (an exception's message, the dynamic linker's): a process where no driver is (a notebook
        # session or a container without a GPU), not a GPU component of the node
        r"|(?:Error: |Error\(['\"]|error while loading shared libraries: )(?:[^\s:'\"]*/)?(?P<program>lib(?:nvidia-ml|cuda)\.so\.1): cannot open shared object file"
        # nvidia-smi's own words (issue 35 diagB31: a container started without the driver's libraries bound in, canonical/lxd#9964,
        # NVIDIA/nvidia-docker#1163, warmshao/FasterLivePortrait#8)
        r"|NVIDIA-SMI couldn't find (?P<smi>libnvidia-ml\.so) library"
        # a program's own load of the driver's library, in its words (ffmpeg's hardware context "Cannot load libcuda.so.1",
        # "Could not load nvcuda.dll", pynvml's "NVML Shared Library Not Found", numba's "CUDA driver library cannot be found"),
        # never a line that says it goes on without it
        # (nor a line logged as a warning: Folding@home's "W :CUDA not supported: failed to open dynamic library 'libcuda.so'" on an
        # AMD machine, heldout28 fah-client-bastet-250, a healthy run)
        r"|^(?!#\s)(?!.*(?i:\bfall(?:ing|s)? ?back\b|\bdefault(?:s|ing)? to\b|\bskipp?ing\b|\binstead\b|\bignor(?:e|ed|ing)\b|\boptional\b"
        r"|\bwarn(?:ing)?\b|\bnot supported\b))(?!.*\bW ?:)(?:.*?)(?:"
        r"(?:[Cc]annot|[Cc]an't|[Cc]ould ?n[o']t|[Uu]nable to|[Ff]ailed to) (?:dynamically )?(?:load|open|find|locate)"
        r"(?: the)?(?: NVIDIA| CUDA)?(?: driver)?(?: (?:shared |dynamic )?library)?:? ['\"`]?(?P<own>libcuda\.so(?:\.1)?|nvcuda\.dll|libnvidia-ml\.so(?:\.1)?|nvml\.dll)\b"
        r"|(?P<nvml_own>NVML Shared Library Not Found)|(?P<own_cuda>CUDA driver library cannot be found))",
        ("error locating", "could not load NVML library", "load library failed", "libcuda.so.1: cannot open", "libnvidia-ml.so.1: cannot open",
         "libnvidia-ml.so", "libcuda.so", "nvcuda.dll", "nvml.dll", "NVML Shared Library Not Found", "CUDA driver library cannot be found"),
        why="""The driver's user-space libraries (libnvidia-ml.so.1 for NVML, libcuda.so.1) come with the NVIDIA driver on the
        node. A component that runs in a container (the container runtime's hook, a Kubernetes device plugin or DRA plugin, GPU
        feature discovery) looks for them under a driver root: / for a driver installed on the host, /run/nvidia/driver for the
        GPU operator's driver container. It found none: no driver on this node (or it is still being installed), a driver root
        that points at the other place, WSL2 (which keeps them in /usr/lib/wsl/lib), or only the versioned file
        (libnvidia-ml.so.<version>) without the libnvidia-ml.so.1 link that ldconfig creates. A program that loads it itself
        (llama.cpp's CUDA bindings, vLLM's kernels, pynvml) fails the same way where no driver is: a notebook session without a
        GPU runtime, a container or pod started without the GPU.""",
        fix="""on the node: ldconfig -p | grep -E 'libnvidia-ml|libcuda'; ls -l /usr/lib/x86_64-linux-gnu/libnvidia-ml.so*   # run ldconfig
        if only the versioned file is there; set the component's driver root to where the driver is (the GPU operator's
        driver.enabled / hostPaths.driverInstallDir, a plugin's nvidiaDriverRoot); or install the driver, then restart the
        component's pod""".replace("\n        ", " "),
        examples=[
            ("OSError: libcuda.so.1: cannot open shared object file: No such file or directory",
             "oobabooga/textgen#6632 (heldout27b: llama_cpp_cuda on a Colab session without a GPU runtime)"),
            ("kserve-container WARNING 09-02 06:44:03 [_custom_ops.py:20] Failed to import from vllm._C with ImportError('libcuda.so.1: cannot open shared object file: No such file or directory')",
             "kserve/kserve#4657 (heldout27: vLLM in a pod without the GPU: 'No platform detected', then its traceback)"),
            ('Error: failed to create device library: failed to locate driver libraries: error locating "libnvidia-ml.so.1"', "NVIDIA/k8s-dra-driver-gpu#65 (kubernetes-sigs/dra-driver-nvidia-gpu#65)"),
            (
                "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object file: no such file or directory: unknown",
                "the container runtime hook's message (NVIDIA/nvidia-container-toolkit issues)",
            ),
            ("NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display Driver is properly installed and present in your system.",
             "NVIDIA/nvidia-docker#1163 (nvidia-smi in a container, the host's fine; ldconfig inside fixed it until the next update)"),
            ("[2023:12:03:20:04:39]: Error: [AVHWDeviceContext @ 0x33f7240] Cannot load libcuda.so.1",
             "NixOS/nixpkgs#272221 (heldout30b: Sunshine's NVENC through ffmpeg, the driver's folder not on its library path)"),
            ("pynvml.nvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found", "pynvml's exception where no driver's NVML is"),
            ("numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: CUDA driver library cannot be found.",
             "numba's driver probe (numba/numba#3396's family: a container without the driver's libraries)"),
        ],
        not_examples=[
            "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory",  # a CUDA runtime library: its own verdict
            "I0525 19:15:11.423875       1 factory.go:48] Detected NVML platform: found NVML library",
            "2023-11-28 16:42:02.086115: I tensorflow/stream_executor/platform/default/dso_loader.cc:49] Successfully opened dynamic library libcuda.so.1",
            "[h264_nvenc @ 0x55] Cannot load libcuda.so.1, falling back to software encoding",  # goes on without it
            "hwloc: could not load libnvidia-ml.so.1 (optional), skipping NVML discovery",
            "14:21:54:W :CUDA not supported: failed to open dynamic library 'libcuda.so': libcuda.so: cannot open shared object file: no such file or directory",
        ],
        fields=driver_library_fields,
    ),
    pattern(
        "gpu-reset-refused",
        "platform",
        CAUSE,
        E,
        "a GPU reset (a MIG mode change, nvidia-smi --gpu-reset) was refused: a process or module still holds the GPU",
        r"error resetting (?:all )?GPUs|GPU (?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d):? ?(?:is currently )?[Ii]n use by another (?:client|process)"
        r"|MIG mode is in pending (?P<pending>enable|disable) state",
        ("error resetting", "n use by another", "MIG mode is in pending"),
        why="""Turning MIG mode on or off (on Ampere GPUs), and nvidia-smi --gpu-reset, need the GPU reset, and the driver refuses
        while anything holds the GPU: a CUDA process, nvidia-persistenced, DCGM or its exporter, a device plugin, an X server,
        or the nvidia_drm kernel module (loaded with a display stack, it keeps the GPU open). The new MIG mode then stays
        pending, and MIG devices cannot be created, until a reset succeeds or the node reboots.""",
        fix="""see who holds it: nvidia-smi --query-compute-apps=pid,name --format=csv; sudo lsof /dev/nvidia*; stop those (sudo rmmod
        nvidia_drm, stop nvidia-persistenced / dcgm / the device plugin), apply the MIG configuration again, then start them again;
        or reboot, which makes a pending MIG mode take effect""".replace("\n        ", " "),
        examples=[
            ("  GPU 00000000:01:00.0: In use by another client", "NVIDIA/mig-parted#181 (nvidia_drm loaded)"),
            ("FATA[0008] Error applying MIG configuration with hooks: error resetting all GPUs: exit status 255", "NVIDIA/mig-parted#181"),
            ("GPU 00000000:C1:00.0 is currently in use by another process.", "NVIDIA/gpu-operator#118 (nvidia-persistenced holding the GPU)"),
        ],
        not_examples=[
            'time="2024-12-31T06:44:08Z" level=debug msg="    Asserting MIG mode: Enabled"',
            "GPU 00000000:C1:00.0 was successfully reset.",
        ],
        fields=groups,
    ),
]
