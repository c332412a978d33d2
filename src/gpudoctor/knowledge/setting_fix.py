"""The fix a finding gives in the setting the log shows (issue 35, diagA25).

A driver, visibility, kernel-image or out-of-memory finding has one cause wherever the job ran, but its fix is a command of
the setting: the Windows driver under WSL 2, a GPU node under a cluster's scheduler, the pod's GPU request in Kubernetes, the
trial's GPU request under Ray, an inference engine's own memory flags, a rebuild of the program whose kernel raised. Each row
of ROWS is one setting and the findings whose fix it decides; the first row whose setting the log shows (knowledge/setting.py)
gives such a finding its fix and a sentence before its why that names the line. Where the finding's own words say something the
setting contradicts (DKMS under WSL, "this torch build" for another program's kernel) the row replaces them. A log that shows
no setting a row knows keeps the finding's own words. The pattern pages list each row under "In another setting".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from gpudoctor.catalog.findings.gpu_health import PASSTHROUGH_FIX
from gpudoctor.knowledge.setting import AMD, CLUSTER, CONTAINER, ENGINE, INFERENCE, KERNEL, NATIVE_PROGRAM, NOTEBOOK, POD, RAY, RENTED, TRAINING, VM, WINDOWS, WSL, Kernel, Setting, Shown

# The findings that say the process reaches no driver or no GPU
NO_DRIVER = ("gpu-driver-unusable", "cuda-no-driver", "nvidia-smi-not-found", "cuda-no-gpus-visible", "driver-library-not-found")
# The findings that name NVIDIA's driver, tool or driver library as missing (on an AMD GPU: the wrong stack, not a missing part)
NVIDIA_ONLY = ("cuda-no-driver", "nvidia-smi-not-found", "gpu-driver-unusable", "driver-library-not-found")
# The findings that say the process was given no GPU (a program's own probe that found none among them: its answer says the
# same of the process, and the setting decides where its GPU was to come from)
NO_GPU = ("cuda-no-gpus-visible", "cuda-no-driver", "nvidia-smi-not-found", "program-found-no-gpu")
# The findings that say the process asks for a GPU past those it was given
FEWER = ("cuda-invalid-device-ordinal", "lightning-gpus-unavailable")


@dataclass(frozen=True)
class Row:
    setting: str  # a setting of knowledge/setting.py (KERNEL: another program's kernel)
    name: str  # the engine's name (ENGINE's rows), '' for the others
    findings: tuple[str, ...]
    shows: str  # how the answer and the page name the setting
    fix: str
    why: str  # a sentence put before the finding's own why
    replaces_why: bool = False  # the finding's own why says what the setting contradicts: `why` replaces it
    title: str = ""  # the title, where the finding's own contradicts the setting (PROGRAM: the program's name)
    unless: tuple[str, ...] = ()  # settings that, shown too, leave the finding its own words (an engine inside a training job)
    keeps_step: bool = False  # a step the finding's line decides (a framework's own, knowledge/story.py) follows the row's fix


# What to do when a native program ran out of GPU memory or has no kernels for the GPU: in words that fit any program
NATIVE_OOM_FIX = (
    "nvidia-smi   # the GPU's total memory and the processes that hold it: close the others on this GPU (another instance of PROGRAM, "
    "another miner or job, a desktop or browser on the card); then make what PROGRAM puts on the GPU smaller with its own options (a "
    "smaller input, work size, batch, resolution, model or context; fewer threads, streams or instances per GPU); what it must hold at "
    "once (a DAG for the current epoch, a model's weights) does not shrink: that needs a GPU with more memory; on Windows a GPU "
    "program's allocations must also fit in the page file: raise virtual memory (a page file at least the sum of the GPUs' memory)")
NATIVE_ARCH_FIX = (
    "nvidia-smi --query-gpu=name,compute_cap --format=csv   # this GPU's compute capability; then a build of PROGRAM that includes it: "
    "a release whose notes list this GPU's architecture, or a source build with it in the architecture list (nvcc -gencode "
    "arch=compute_XY,code=sm_XY; CMake -DCMAKE_CUDA_ARCHITECTURES=XY; the project's own option such as make TARGETS=\"XY\" or "
    "CUDA_ARCH=XY); cuobjdump --list-elf on its binary lists the architectures it holds; a card older than the CUDA toolkit "
    "PROGRAM needs builds for (CUDA 12 builds for compute capability 5.0 and newer, CUDA 11 for 3.5 and newer, CUDA 9 and 10 "
    "for 3.0 and newer) needs an older release of PROGRAM built for it, or a newer card")

ROWS = (
    Row(KERNEL, "", ("cuda-no-kernel-image",), "a CUDA error raised in the source of a program other than torch",
        "rebuild or reinstall PROGRAM for this GPU's architecture: nvidia-smi --query-gpu=name,compute_cap --format=csv gives it; a source "
        "build passes it to the compiler (CMake: -DCMAKE_CUDA_ARCHITECTURES=CC without the dot, e.g. 120; a PyTorch extension: "
        "TORCH_CUDA_ARCH_LIST=\"12.0\" pip install --no-build-isolation .), and a prebuilt wheel or binary must be one its release lists "
        "for that architecture (cuobjdump --list-elf on its library lists those it holds); reinstalling torch does not change it",
        "The CUDA error names SOURCE, a source file of PROGRAM, not of torch: PROGRAM was compiled for other compute capabilities than "
        "this GPU's (a new GPU with an older build, or an old GPU a newer build dropped), so it is that program's build, not torch's, "
        "that must include this GPU's architecture.",
        replaces_why=True, title="PROGRAM's own CUDA kernels have no build for this GPU's compute capability (architecture)"),
    Row(KERNEL, "", ("cuda-driver-too-old",), "a CUDA error raised in the source of a program other than torch",
        "install the build of PROGRAM for the CUDA this driver supports (nvidia-smi shows its CUDA Version; the program's release notes "
        "list its builds per CUDA), or update the NVIDIA driver; reinstalling torch does not change it",
        "The error names SOURCE, a source file of PROGRAM, not of torch: PROGRAM's kernels were built by a newer CUDA toolkit than this "
        "driver supports (their PTX needs a newer driver to compile), so it is PROGRAM's build, or the driver, that must change.",
        replaces_why=True, title="the NVIDIA driver is older than the CUDA that PROGRAM was built with"),
    Row(ENGINE, "vLLM", ("cuda-oom",), "vLLM",
        "lower --max-model-len (the longest sequence the KV cache must hold) and --max-num-seqs; keep --gpu-memory-utilization at 0.9 or "
        "below (1 leaves no room for activations) and lower it when other processes hold memory on the GPU (nvidia-smi); --enforce-eager "
        "saves the CUDA graphs' memory; a model larger than one GPU: --tensor-parallel-size N, or a quantized model (--quantization)",
        "vLLM takes --gpu-memory-utilization (default 0.9) of each GPU at start-up for the weights, its profiling run's activations and "
        "the KV cache: its own flags are the lever, not a training batch.", unless=(TRAINING,)),
    Row(ENGINE, "SGLang", ("cuda-oom",), "SGLang",
        "lower --mem-fraction-static (e.g. 0.8) when the activations run out, and --context-length, --max-running-requests and "
        "--chunked-prefill-size (e.g. 4096); a model larger than one GPU: --tp N",
        "SGLang reserves --mem-fraction-static of each GPU for the weights and the KV cache, and the rest holds the activations: its own "
        "flags are the lever, not a training batch.", unless=(TRAINING,)),
    Row(ENGINE, "TGI", ("cuda-oom",), "text-generation-inference",
        "lower --max-batch-prefill-tokens and --max-total-tokens (--max-input-tokens), set --cuda-memory-fraction 0.9 when other processes "
        "share the GPU, shard the model with --num-shard N, or quantize it (--quantize)",
        "text-generation-inference sizes its batches and KV cache from --max-batch-prefill-tokens and --max-total-tokens: its own flags "
        "are the lever, not a training batch.", unless=(TRAINING,)),
    Row(ENGINE, "llama.cpp", ("cuda-oom",), "llama.cpp",
        "offload fewer layers (a lower -ngl), use a smaller context (-c 4096) and smaller batches (-b, -ub), or a smaller quantization of "
        "the model (Q4_K_M)",
        "llama.cpp puts -ngl layers of the model and the context's KV cache (-c) on the GPU: those are the lever, not a training batch.", unless=(TRAINING,)),
    Row(ENGINE, "Ollama", ("cuda-oom",), "Ollama",
        "a smaller context (num_ctx, OLLAMA_CONTEXT_LENGTH), fewer parallel requests (OLLAMA_NUM_PARALLEL=1), one model loaded at a time "
        "(OLLAMA_MAX_LOADED_MODELS=1), fewer layers on the GPU (num_gpu), or a smaller quantization of the model",
        "Ollama places the model's layers and the context's KV cache on the GPU by its own estimate: its settings are the lever, not a "
        "training batch.", unless=(TRAINING,)),
    Row(ENGINE, "ComfyUI", ("cuda-oom",), "ComfyUI",
        "start ComfyUI with --lowvram (or --novram; --disable-smart-memory frees models between runs), lower the workflow's batch size, "
        "resolution or frame count, and use the offload option of the custom node that loads a large model",
        "ComfyUI keeps models on the GPU as its VRAM mode decides: its start-up flags and the workflow's sizes are the lever, not a "
        "training batch.", unless=(TRAINING,)),
    # a native program (a miner, a renderer, a basecaller, a docking or video tool: C, C++, Rust, Go) and no Python in the log
    # (knowledge/setting.py NATIVE_PROGRAM, or the failure's line in the program's own words, knowledge/patterns/classes31a.py):
    # its own options, the GPU's other processes and the card's size are the levers, not PyTorch's (issue 35, diagA31: nsfminer's
    # "Epoch 397 requires 4.17 GB ... 1024 MB available", rigel's "GPU#0 error: insufficient memory", lolMiner's "insufficient
    # memory for DAG"; T-Rex#280 and rigel#78: on Windows the page file backs a GPU's allocations); after the engines' rows
    Row(NATIVE_PROGRAM, "", ("cuda-oom", "framework-oom"), "a native program and no Python", NATIVE_OOM_FIX,
        "PROGRAM is not a PyTorch job: what it puts on the GPU is set by its own options and its input, and what it must hold at "
        "once (a mining algorithm's DAG for the current epoch, a model's weights, a frame buffer) does not shrink with a batch size. "
        "The GPU's memory did not hold what it asked for: the card is too small for that work, or another process holds part of it.",
        replaces_why=True, keeps_step=True),
    Row(NATIVE_PROGRAM, "", ("cuda-no-kernel-image",), "a native program and no Python", NATIVE_ARCH_FIX,
        "PROGRAM is not a PyTorch job: its CUDA kernels are those its own build compiled (a program that bundles libtorch ships its "
        "own build of it too), for the compute capabilities that build listed; this GPU's is not among them (a new GPU with an older "
        "build, or an old GPU that the program's CUDA toolkit no longer builds for), so it is that program's build, or the card, that "
        "must change; reinstalling torch does not change it.",
        replaces_why=True, title="PROGRAM's CUDA kernels have no build for this GPU's compute capability (architecture)", keeps_step=True),
    # a program that only infers (an upscaler, an audio separator, a structure predictor, a diffusion pipeline): its input's
    # size, the model's precision and where it runs are the levers (facebookresearch/demucs#46: "4GB is not enough to run on GPU
    # sadly", -d cpu; xinntao/Real-ESRGAN's own "try to set --tile with a smaller number"; YoshitakaMo/localcolabfold#105: a
    # 2 GiB GPU "too small"); after an engine's row, which names its own flags
    # (a framework other than PyTorch that only infers: the same levers without torch's words; its framework's own step follows,
    # YoshitakaMo/localcolabfold#105: JAX on a 2 GiB card)
    Row(INFERENCE, "", ("framework-oom",), "a run that only infers (predicts, generates, separates or upscales)",
        "nvidia-smi   # free the GPU of other processes and read its total memory against what the model needs; then make one step's "
        "input smaller with the program's own options (a shorter sequence or fewer residues, a lower resolution, batch size 1, fewer "
        "models or samples at once, its tile, chunk or segment option), or a smaller or lower-precision model; or run it on the CPU "
        "(the program's device option: -d cpu, --device cpu, --cpu), slower but not bound by the GPU's memory; a card smaller than the model's weights and one "
        "input's activations (a 2 GiB or 4 GiB card for a large model) needs a GPU with more memory",
        "Inference keeps no gradients or optimizer state on the GPU, only the model's weights and one step's activations: the size of "
        "one input, the model and the device are the levers, and a card smaller than those cannot run it.",
        unless=(TRAINING,), keeps_step=True),
    Row(INFERENCE, "", ("cuda-oom",), "a run that only infers (predicts, generates, separates or upscales)",
        "nvidia-smi   # free the GPU of other processes and read its total memory; run the model under torch.inference_mode() (or "
        "torch.no_grad()): without it every layer's activations are kept for a backward that never comes; then make one step's input smaller: the program's "
        "tile, chunk or segment option (an upscaler's --tile 256, an audio separator's --segment or shorter tracks, a shorter sequence, "
        "a lower resolution, batch size 1); load the model in half precision (--fp16, --half, torch_dtype=torch.float16) or a smaller or "
        "quantized model, one model at a time; offload it to CPU memory (diffusers' enable_model_cpu_offload(), device_map=\"auto\"); "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True where the message shows much memory reserved but unallocated; "
        "or run on the CPU (the program's device option: -d cpu, --device cpu, --cpu), slower but not bound by the GPU's memory; a "
        "model whose weights alone do not fit needs a GPU with more memory, or several: if nvidia-smi shows the other GPUs idle while this "
        "one is full, split the model over them (device_map=\"auto\") or start one process per GPU (torchrun --nproc_per_node=N, mpiexec -n N)",
        "Inference keeps no gradients or optimizer state on the GPU, only the model's weights and one step's activations: a training "
        "batch, ZeRO or FSDP are not the lever, the size of one input, the model's precision and the device are.",
        unless=(TRAINING,), keeps_step=True),
    # (NVIDIA's own: a CUDA build of torch told no NVIDIA driver, NVIDIA's tool or library not there; not a GPU not visible,
    # which a ROCm build says too, in HIP's words its own fix reads)
    Row(AMD, "", NVIDIA_ONLY, "an AMD GPU or AMD's GPU stack (ROCm, HIP, ZLUDA)",
        "an AMD GPU runs on AMD's stack, not NVIDIA's driver and CUDA: use the program's AMD option where it has one, and a ROCm build of "
        "PyTorch (Linux: pip install torch --index-url https://download.pytorch.org/whl/rocm6.4, the ROCm release your GPU's gfx "
        "architecture is listed for; Windows: a ROCm build for that GPU, such as TheRock's wheels, or the program's ZLUDA or DirectML "
        "path); check: python -c \"import torch; print(torch.version.hip, torch.cuda.is_available())\" must print a HIP version and True, "
        "and rocminfo (Linux) or the AMD driver's own tools list the GPU; a CUDA build of torch on an AMD GPU finds no NVIDIA driver",
        "PyTorch's CUDA build looks for NVIDIA's driver; on an AMD GPU it finds none, whatever AMD driver is installed: the ROCm build "
        "of torch (torch.cuda is then HIP underneath) is the one that uses the GPU.",
        replaces_why=True),
    Row(WSL, "", NO_DRIVER, "WSL",
        "under WSL 2 the driver is the Windows one (no Linux driver inside WSL: its kernel has no nvidia module to load, install or rebuild): in Windows install or "
        "update the NVIDIA driver (nvidia-smi.exe in PowerShell must list the GPU), then wsl --update and wsl --shutdown; wsl -l -v must "
        "show VERSION 2 (WSL 1 has no GPU: wsl --set-version DISTRO 2); inside WSL /usr/lib/wsl/lib/nvidia-smi and ls /usr/lib/wsl/lib/libcuda* "
        "show what it passes in; a Linux driver installed in the distro hides it (apt list --installed | grep -E 'nvidia-(driver|utils)': "
        "remove those; for CUDA install the cuda-toolkit package, not cuda or cuda-drivers); a GPU in TCC mode is not passed to WSL: "
        "nvidia-smi.exe -i N -dm 0 (WDDM) as Administrator, then reboot",
        "Under WSL 2 the GPU is the Windows NVIDIA driver's: WSL passes it in through /usr/lib/wsl/lib (libcuda, nvidia-smi), and WSL's "
        "kernel has no nvidia module to load or rebuild. nvidia-smi or CUDA inside WSL reach no GPU when the Windows driver does not "
        "drive it (too old, not installed, or the GPU in TCC mode, which WSL does not pass in), when the distro runs as WSL 1 (no GPU at "
        "all), or when a Linux driver package installed inside the distro shadows WSL's own libraries.",
        replaces_why=True),
    # a container: the runtime hands the GPU over, or not; before the VM's row, which a container in a VM shows too (immich-app/immich#14808,
    # heldout29: other containers in the same VM saw the GPU, so the passthrough was fine); a pod's, a notebook's, a cluster's or Ray's
    # row decides where it shows them
    Row(CONTAINER, "", NO_GPU, "a container (Docker, Podman, Apptainer)",
        "inside a container the GPU is the container runtime's to hand over, whatever the host has: docker exec CONTAINER nvidia-smi -L "
        "(apptainer exec --nv IMAGE nvidia-smi -L) lists the GPUs it was given; none, or an error: start it with the GPU (docker run "
        "--gpus all; compose: deploy.resources.reservations.devices with driver: nvidia and capabilities: [gpu], or runtime: nvidia; "
        "podman run --device nvidia.com/gpu=all; apptainer/singularity --nv), and a MIG instance or a vGPU slice by its UUID "
        "(NVIDIA_VISIBLE_DEVICES=MIG-<uuid>, or compose's device_ids, as nvidia-smi -L lists it where the driver runs); nvidia-smi works "
        "on the host (or in the VM) and in another container there: the driver and the toolkit are fine, this container's GPU options "
        "(its image's NVIDIA_VISIBLE_DEVICES or CUDA_VISIBLE_DEVICES among them) are what differ; it fails there too: the driver first "
        "(in a VM, its passthrough)",
        "A container sees a GPU only when its runtime hands one over (the NVIDIA Container Toolkit's hook or CDI for Docker and Podman, "
        "--nv for Apptainer): the device files, the driver's libraries and nvidia-smi are bound in from the host, and the image does "
        "not bring them.",
        unless=(POD, NOTEBOOK, CLUSTER, RAY)),
    Row(VM, "", ("gpu-driver-unusable", "cuda-no-driver", "cuda-no-gpus-visible"), "a virtual machine", PASSTHROUGH_FIX,
        "In a virtual machine the GPU reaches the guest through the hypervisor's passthrough (VFIO, GPU-PV), and the driver inside "
        "fails on what the passthrough gives it (the GPU's memory window, a hypervisor it refuses, a GPU not reset) as often as on "
        "itself."),
    Row(NOTEBOOK, "", NO_GPU, "a hosted notebook (Colab, Kaggle)",
        "a notebook's runtime has a GPU only when one is chosen for it: Colab: Runtime > Change runtime type > a GPU (T4, L4, A100), then "
        "run the notebook again from the top; Kaggle: Settings > Accelerator > GPU; a session whose GPU quota ran out is given a CPU "
        "runtime; !nvidia-smi in a cell shows the GPU the runtime has",
        "A hosted notebook's runtime has a GPU only when one was chosen for it (and the GPU quota allows it)."),
    Row(NOTEBOOK, "", ("cuda-driver-too-old",), "a hosted notebook (Colab, Kaggle)",
        "the runtime's driver is the host's and cannot be updated: keep the torch (or jax, or CUDA library) the runtime ships (pip "
        "uninstall what was installed over it, then restart the runtime), or install builds for the CUDA that !nvidia-smi shows there "
        "(torch: pip install torch --index-url https://download.pytorch.org/whl/cuXYZ, XYZ at or below its CUDA Version)",
        "A hosted notebook's driver is the host's: what the notebook installs must be built for a CUDA that driver supports."),
    Row(RENTED, "", ("cuda-driver-too-old",), "a rented GPU (RunPod, Vast.ai)",
        "the driver is the host's and cannot be updated from the container: rent a machine whose driver supports the image's CUDA "
        "(RunPod: filter by CUDA version; Vast.ai: the Max CUDA filter), or use an image and a torch wheel built for the CUDA the host "
        "has (nvidia-smi's CUDA Version)",
        "On a rented GPU the driver is the host's and the CUDA the image's: the image must not need a newer CUDA than the host's driver gives."),
    Row(RAY, "", NO_GPU + FEWER, "Ray",
        "Ray gives each task, actor and Tune trial only the GPUs it reserved (it sets CUDA_VISIBLE_DEVICES), so one that asks for none "
        "sees none: tune.run(..., resources_per_trial={'cpu': 4, 'gpu': 1}) or tune.with_resources(trainable, {'gpu': 1}); "
        "@ray.remote(num_gpus=1) for a task or actor; ScalingConfig(num_workers=N, use_gpu=True) for Ray Train; inside it, count its GPUs "
        "from 0 (ray.get_gpu_ids() lists those reserved); ray status shows the GPUs the cluster has; older Ray's local_mode=True leaves a "
        "trial's CUDA_VISIBLE_DEVICES empty: run GPU trials without local mode",
        "Under Ray the GPUs a task or trial sees are those it asked Ray for."),
    Row(POD, "", NO_GPU, "a Kubernetes pod",
        "in Kubernetes a pod gets a GPU only when its container asks for one (ls /dev/nvidia* inside it decides whether it got one): "
        "resources: limits: nvidia.com/gpu: 1 (a Kubeflow notebook: "
        "its GPUs field), with runtimeClassName: nvidia where the node's runtime does not hand GPUs over by default; kubectl describe node "
        "NODE must list nvidia.com/gpu under Allocatable (none: the NVIDIA device plugin or the GPU operator does not run on that node); "
        "then kubectl exec POD -- nvidia-smi lists the GPU",
        "A pod sees a GPU only when its spec asks for one, and no driver, device file or nvidia-smi is in it otherwise."),
    Row(CLUSTER, "", FEWER, "a cluster's scheduler",
        "ask the scheduler for as many GPUs per node as the processes you start there (Slurm: #SBATCH --gres=gpu:N or --gpus-per-node=N "
        "with --ntasks-per-node=N; PBS: select=1:ngpus=N), and choose each process's GPU by its local rank (LOCAL_RANK, SLURM_LOCALID), "
        "counting from 0 inside the job, never by its global rank or a fixed id; echo $CUDA_VISIBLE_DEVICES in the job shows the GPUs it got",
        "A job on a cluster sees only the GPUs it asked the scheduler for, numbered from 0 on each node."),
    Row(CLUSTER, "", NO_GPU, "a cluster's scheduler or module system",
        "on a cluster the login node usually has no GPU and no driver: run on a GPU node through the scheduler (Slurm: srun --gres=gpu:1 "
        "--pty nvidia-smi, or #SBATCH --gres=gpu:1 / --gpus=1 with the site's GPU partition; PBS: qsub -l select=1:ngpus=1; LSF: bsub "
        "-gpu num=1), and where the site ships CUDA as a module load it first (module avail cuda; module load cuda); inside the job "
        "echo $CUDA_VISIBLE_DEVICES shows the GPUs the scheduler gave it (none: the job asked for none)",
        "On a cluster the login node usually has no GPU, and a job sees only the GPUs it asked the scheduler for."),
    Row(WINDOWS, "", ("gpu-driver-unusable", "cuda-no-driver", "nvidia-smi-not-found"), "Windows",
        "on Windows the driver's nvidia-smi.exe is in C:\\Windows\\System32 (drivers before 2020: C:\\Program Files\\NVIDIA Corporation\\NVSMI, "
        "which you add to PATH): where nvidia-smi in cmd shows it; none, or no GPU under Device Manager > Display adapters (or a Code 43 "
        "there): install the current NVIDIA driver for the GPU from nvidia.com and reboot; then nvidia-smi lists it, and torch.cuda.is_available() "
        "is True with a CUDA build of torch (pip install torch --index-url https://download.pytorch.org/whl/cu128)",
        "On Windows the driver and its nvidia-smi.exe come from NVIDIA's Windows installer (not a Linux kernel module)."),
)
# Ray Tune's status line: the GPUs its trials asked for, of the cluster's
RAY_ASKED = re.compile(r"Resources requested: [\d.]+/[\d.]+ CPUs, (?P<asked>[\d.]+)/(?P<of>[\d.]+) GPUs")
LLAMA_CPP_BUILD = "llama.cpp: cmake -B build -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=CC && cmake --build build --config Release; "


@dataclass(frozen=True)
class Fitted:
    """A finding's words in the setting the log shows: its fix, its why, its title ('' where it keeps its own), and the line
    that showed the setting."""

    fix: str
    why: str
    shown: str
    title: str = ""
    keeps_step: bool = False  # the finding's own step (a framework's) follows `fix`
    step_first: bool = False  # ... or goes before it (a native program's own line says what it needed: that decides first)


def rows_for(finding: str) -> list[Row]:
    """The rows that decide this finding's fix in some setting (its page lists them)."""
    return [row for row in ROWS if finding in row.findings]


def fitted(finding: str, why: str, setting: Setting, line: int, own: str = "") -> Optional[Fitted]:
    """The words of finding `finding` (its own why `why`, its first line `line`) in the setting the log shows; None where it
    keeps its own. The first row whose setting is shown decides; else another program's kernel named at the line does. That
    kernel gives its title either way: the title never names torch for another program's kernel. `own`: the finding's line
    where it is in a program's own words (no PyTorch message): with no Python in the log, it shows a native program."""
    kernel = setting.kernel_near(line)
    titled = next((kernel_words(row, kernel) for row in rows_for(finding) if row.setting == KERNEL and kernel is not None), None)
    for row in rows_for(finding):
        if row.setting == KERNEL:
            continue
        if row.setting == NATIVE_PROGRAM:
            if titled is not None:
                continue  # the source file the error names says whose kernel it is: that row's words name it
            shown = setting.native() or (Shown(NATIVE_PROGRAM, line, own) if own and setting.python is None else None)
        else:
            shown = next((s for s in setting.shown if s.setting == row.setting and (row.setting != ENGINE or s.name == row.name)), None)
        if shown is None or any(s.setting in row.unless for s in setting.shown):
            continue
        said = f"The log shows {row.shows} (line {shown.line}: {shown.text[:120]})."
        if row.setting == NATIVE_PROGRAM:
            program = setting.program or "the program"
            return Fitted(row.fix.replace("PROGRAM", program), f"{said} {row.why.replace('PROGRAM', program.capitalize() if program == 'the program' else program)}"
                          + ("" if row.replaces_why else f" {why}"), f"{row.shows}: line {shown.line}: {shown.text}",
                          row.title.replace("PROGRAM", program if setting.program else "the program"), row.keeps_step, step_first=True)
        fix = row.fix
        if row.setting == RAY and (asked := tune_asked(setting)) is not None:
            fix = f"Ray Tune's line {asked[0]} shows its trials asked for none of the cluster's {asked[1]} GPUs; " + fix
        return Fitted(fix, f"{said} {row.why}" + ("" if row.replaces_why else f" {why}"), f"{row.shows}: line {shown.line}: {shown.text}",
                      titled.title if titled is not None else "", row.keeps_step)
    return titled


def tune_asked(setting: Setting) -> Optional[tuple[int, str]]:
    """(line, the cluster's GPUs) where Ray Tune's status line shows its trials asked for no GPU."""
    for s in setting.shown:
        m = RAY_ASKED.search(s.text) if s.setting == RAY else None
        if m is not None and float(m["asked"]) == 0:
            return s.line, m["of"]
    return None


def kernel_words(row: Row, kernel: Kernel) -> Fitted:
    def named(text: str) -> str:
        return text.replace("PROGRAM", kernel.program).replace("SOURCE", f"{kernel.source} (line {kernel.line})")

    fix = (LLAMA_CPP_BUILD if kernel.program == "llama.cpp" else "") + named(row.fix)
    return Fitted(fix, named(row.why), f"{kernel.program}: line {kernel.line}: {kernel.text}", named(row.title))

