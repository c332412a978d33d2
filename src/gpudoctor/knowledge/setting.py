"""Pure: the setting a log shows a GPU job ran in, each with the line that shows it (issue 35, diagA25).

A driver, visibility, device-count, kernel-image or out-of-memory finding has one cause and, depending on where the job
ran, a different fix: the Windows driver under WSL 2 (no Linux driver inside it), a GPU node and `module load` on a cluster's
login node, the pod's GPU request in Kubernetes, the trial's GPU request under Ray, an inference engine's own memory flags.
This reader only gathers the facts: which settings the input shows, and the first line that shows each. The findings
whose fix depends on the setting choose it from them (knowledge/setting_fix.py).

A setting counts only where a line shows it: the machine's own words (WSL's kernel name and driver folder, a scheduler's
directives and commands, a pod's manifest and kubectl, Ray's status and worker prefixes, an engine's start-up lines and
commands), the thread's own header (the tracker it was filed in, its title), or a person saying the job ran there ("nvidia-smi
inside WSL fails"). A link, a path or a word in passing (docs.nvidia.com/cuda/wsl-user-guide, /mnt/c/data, "kubernetes.io")
shows nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from gpudoctor.knowledge.libraries import native_owner, package_of
from gpudoctor.knowledge.reruns import HeadLines

WSL = "wsl"  # Windows Subsystem for Linux: the GPU comes from the Windows driver
WINDOWS = "windows"  # Windows itself (a Windows Python, cmd.exe, PowerShell)
CLUSTER = "cluster"  # an HPC cluster's scheduler or module system (Slurm, PBS, LSF, Lmod)
POD = "pod"  # a Kubernetes pod
RAY = "ray"  # a Ray task, actor or Tune trial
ENGINE = "engine"  # an inference engine (its name in Shown.name)
VM = "vm"  # a virtual machine's guest: the GPU is the hypervisor's to pass through
NOTEBOOK = "notebook"  # a hosted notebook (Google Colab, Kaggle): its runtime's GPU and driver are the host's
RENTED = "rented"  # a rented cloud GPU (RunPod, Vast.ai): the driver is the host's, the image the renter's
TRAINING = "training"  # a training job (an RL or fine-tuning framework's frames, a backward pass): an engine in it is a component
INFERENCE = "inference"  # a program that only infers (predicts, generates, separates, upscales): no optimizer step on the GPU
KERNEL = "kernel"  # a CUDA kernel of a program other than torch (Setting.kernels)
AMD = "amd"  # an AMD GPU, or AMD's GPU stack (ROCm, HIP, ZLUDA): NVIDIA's driver and CUDA are not what runs it
CONTAINER = "container"  # a container (Docker, Podman, Apptainer/Singularity): the GPU is the runtime's to hand over
PYTHON = "python"  # Python runs in the job (a traceback, a .py file, site-packages, python on a command line): no row's own
NATIVE_PROGRAM = "native"  # a native program (C, C++, Rust, Go: a miner, a renderer, a basecaller) and no Python in the log



def said_on(places: bytes) -> bytes:
    """A person saying the job ran on one of these places: "on Colab", "in Kaggle", "on RunPod" (not a URL's host)."""
    return rb"(?<![\w/.-])(?:[Ii]n|[Oo]n|[Uu]sing|[Vv]ia|[Ff]rom|[Ww]ithin|[Ww]ith) (?:the |my |a )?(?:[Gg]oogle )?(?:" + places + rb")\b(?![/.]\w)"


# A person saying where it ran: "inside WSL", "on WSL2", "using docker in WSL 2" (not "without WSL", not a URL's /wsl/)
SAID_WSL = rb"(?<![\w/.-])(?:[Ii]n|[Ii]nside|[Oo]n|[Uu]nder|[Uu]sing|[Vv]ia|[Ff]rom|[Ww]ithin|[Tt]hrough) (?:the |my |a )?WSL ?2?\b(?![/.])"


@dataclass(frozen=True)
class Sign:
    setting: str
    regex: re.Pattern
    needles: tuple[bytes, ...]
    name: str = ""  # the engine it names (ENGINE's signs)


def sign(setting: str, regex: bytes, needles: tuple[bytes, ...], name: str = "") -> Sign:
    return Sign(setting, re.compile(regex, re.MULTILINE), needles, name)


SIGNS = (
    # WSL's kernel (uname, the issue template's "Kernel Version"), its driver folder and device, the toolkit's detection,
    # wsl.exe's commands, its file share, the template's checked box, a person's "inside WSL"
    sign(WSL, rb"\d-[Mm]icrosoft(?:-standard(?:-WSL2)?)?\b|/usr/lib/wsl/(?:lib|drivers)\b|/dev/dxg\b|WSL environment detected"
              rb"|\bwsl(?:\.exe)? (?:--?(?:update|shutdown|install|set-version|set-default-version|list|status|version)\b|-l -v)"
              rb"|\\\\wsl(?:\$|\.localhost)\\|^\s*- \[[xX]\] WSL ?2|" + SAID_WSL,
         (b"icrosoft", b"/usr/lib/wsl", b"/dev/dxg", b"WSL", b"wsl")),
    # Windows: its version banner, a PowerShell prompt, cmd.exe's and PowerShell's "not recognized", a Windows user's or
    # program's folder in a path (a traceback's C:\Users\...\site-packages)
    sign(WINDOWS, rb"Microsoft Windows \[Version|^\s*PS [A-Z]:\\|is not recognized as an internal or external command|The term '[\w.-]+' is not recognized"
                  rb"|\b[A-Z]:\\(?:Users|Program Files|ProgramData|Windows|Python\d*|anaconda3|miniconda3)\\",
         (b"Microsoft Windows", b"PS ", b"is not recognized", b":\\")),
    # a virtual machine: the guest's kernel naming its hypervisor, its firmware's machine name, VFIO on the host, a hypervisor's
    # domain XML, a person's "passthrough to the VM" / "in a VM"
    sign(VM, rb"Hypervisor detected: (?:KVM|Xen|VMware|Microsoft Hyper-V)|DMI: (?:QEMU|VMware|Microsoft Corporation Virtual Machine)|\bvfio-pci\b"
             rb"|<hostdev mode=|(?<![\w/.-])(?:GPU|PCI|PCIe|[Gg]pu) pass-?through\b|(?<![\w/.-])pass-?through (?:of )?(?:the |a |my )?(?:GPU|card|device)"
             rb"|(?<![\w/.-])pass(?:ed|ing)? (?:the |a |my )?(?:GPU|card) through\b|(?<![\w/.-])(?:[Ii]n|[Ii]nside|[Oo]n) (?:the |a |my )?(?:VM|guest VM|virtual machine)\b",
         (b"Hypervisor detected", b"DMI: ", b"vfio", b"<hostdev", b"passthrough", b"pass-through", b"pass through", b"VM", b"virtual machine")),
    # an AMD GPU: AMD's stack (ROCm, its tools and build tags, HIP's device variable and errors, ZLUDA, TheRock's ROCm wheels, a
    # gfx architecture), a discrete Radeon or Instinct GPU named, a person's "AMD GPU" (CS1o/Stable-Diffusion-Info#57, heldout27b:
    # OneTrainer on an RX 9070 XT with TheRock's wheels, told "Found no NVIDIA driver"). Not a Ryzen's integrated "AMD Radeon(TM)
    # Graphics" beside an NVIDIA GPU, nor an AMD CPU (Ryzen, EPYC, Threadripper), nor a link's or a path's word (github.com/ROCm/...)
    sign(AMD, rb"(?<![\w/.-])(?:ROCm|rocm-smi|rocminfo|ZLUDA|TheRock)\b(?![/.]\w)|\+rocm\d|\bHIP_VISIBLE_DEVICES\b|\bhipError\w+"
              rb"|\bgfx(?:90[68a]|94[02]|103\d|110\d|115\d|120\d|1[01]\dx)\b|\bAMD Radeon (?:RX|PRO|Pro|VII|Instinct)\b|\bRadeon RX ?\d{3,4}"
              rb"|\bInstinct MI\d{2,3}|(?<![\w/.-])AMD (?:GPU|graphics card|video card)s?\b|\bAMD on Windows\b",
         (b"ROCm", b"rocm", b"HIP_VISIBLE", b"hipError", b"ZLUDA", b"TheRock", b"gfx", b"Radeon", b"Instinct", b"AMD ")),
    # a container: its runtime's commands, docker compose's service prefix ("immich_machine_learning  | ..."), the NVIDIA
    # container stack named, a person's "in a docker container" (issue 35 diagB31: immich-app/immich#14808, heldout29, a
    # container in a VM whose other containers saw the GPU)
    sign(CONTAINER, rb"(?:^|[\s$;&|(`])(?:docker|podman|nerdctl)(?:-compose\b| compose\b| run\b| exec\b| start\b)|\bdocker-compose\b"
                    rb"|\bnvidia-(?:container-(?:toolkit|runtime|cli)|docker)\b|(?:^|[\s$;&|(`])(?:apptainer|singularity) (?:run|exec|shell|instance)\b"
                    rb"|(?<![\w/.-])(?:[Ii]n|[Ii]nside|[Aa]s|[Ff]rom|[Ww]ithin|[Oo]n) (?:a |the |my |its |this |our )?(?:[Dd]ocker|[Pp]odman) (?:container|image|compose)s?\b",
         (b"docker", b"podman", b"nerdctl", b"nvidia-container", b"apptainer", b"singularity", b"Docker", b"Podman")),
    # a hosted notebook: a Colab cell's frame and its drive, Colab's module, Kaggle's folders, a person's "on Colab"
    sign(NOTEBOOK, rb"File \"/content/|/content/drive/|\bgoogle\.colab\b|/kaggle/(?:working|input)/|" + said_on(rb"[Cc]olab|Kaggle"),
         (b"/content/", b"google.colab", b"/kaggle/", b"olab", b"Kaggle")),
    # a rented GPU: RunPod's and Vast.ai's own paths and hosts, a person's "on RunPod"
    sign(RENTED, rb"/runpod-volume/|\bRUNPOD_POD_ID\b|\bproxy\.runpod\.net\b|\bVAST_CONTAINERLABEL\b|" + said_on(rb"RunPod|[Rr]unpod|Vast(?:\.ai)?"),
         (b"runpod", b"RUNPOD", b"RunPod", b"Runpod", b"VAST_", b"Vast")),
    # a cluster: Slurm's directives, commands and step daemon, PBS's and LSF's, the module system, a login node
    sign(CLUSTER, rb"^\s*#(?:SBATCH|PBS|BSUB)\b|(?:^|[\s$;&|(`])(?:srun|sbatch|salloc|qsub|bsub|squeue|sinfo)\s+-|\bslurmstepd\b|\bSLURM_[A-Z_]+="
                  rb"|(?:^|[\s$;&|(`])(?:module|ml) (?:load|add|avail|av|spider|purge|list)\b|\bLmod\b|\blogin[- ]nodes?\b|@login\d*[.:\s]",
         (b"#SBATCH", b"#PBS", b"#BSUB", b"srun", b"sbatch", b"salloc", b"qsub", b"bsub", b"squeue", b"sinfo", b"slurmstepd", b"SLURM_",
          b"module ", b"ml ", b"Lmod", b"login")),
    # Kubernetes: kubectl, a manifest's GPU request, runtime class and kind, the kubelet, a pod's description, Kubeflow's notebooks
    sign(POD, rb"\bkubectl\b|\bnvidia\.com/gpu:|\bruntimeClassName\b|^\s*kind: (?:Pod|Deployment|StatefulSet|Job|PyTorchJob|RayCluster|Notebook)\s*$"
              rb"|\bkubelet\b|\bdescribe pod\b|(?<![/.\w])(?:[\w-]+\.)?kubernetes\.io/[\w.-]+=|\b(?:[Ii]n|[Oo]n|[Ii]nside) (?:a |the |my |our )?(?:Kubernetes|k8s|K8s) (?:pod|cluster|node)"
              rb"|github\.com/kubeflow/",
         (b"kubectl", b"nvidia.com/gpu", b"runtimeClassName", b"kind: ", b"kubelet", b"describe pod", b"kubernetes.io", b"ubernetes", b"k8s", b"K8s",
          b"kubeflow")),
    # Ray: a task's or actor's prefix and its worker's "(pid=N, ip=...)", Tune's resource line, a trial's resources
    sign(RAY, rb"\bray::\w|^\((?:[\w:]+ )?pid=\d+(?:, ip=[\d.]+)?\) |\bresources_per_trial\b|\bray\.exceptions\.|\bRay\w*Error\(",
         (b"ray::", b"pid=", b"resources_per_trial", b"ray.exceptions", b"Ray")),
    # Ray Tune's status line: the CPUs and GPUs its trials asked for, of the cluster's
    sign(RAY, rb"\bResources requested: [\d.]+/[\d.]+ CPUs, [\d.]+/[\d.]+ GPUs", (b"Resources requested",), "Tune"),
    # a training job: an RL or fine-tuning framework's frames and actors, a backward pass or optimizer step in a traceback
    sign(TRAINING, rb"[/\\](?:trl|verl|openrlhf|llamafactory|axolotl)[/\\]|[/\\]transformers[/\\]trainer\.py|\.backward\(|optimizer\.step\("
                   rb"|\b(?:GRPOTrainer|PPOTrainer|ActorModelRayActor)\b|\bactor_rollout_ref\b",
         (b"trl", b"verl", b"openrlhf", b"llamafactory", b"axolotl", b"trainer.py", b".backward(", b"optimizer.step(", b"Trainer", b"ActorModelRayActor",
          b"actor_rollout_ref")),
    # a training script started or in a traceback (train.py, train_net.py, training.py): the job trains, whatever it also infers
    sign(TRAINING, rb"(?<![\w-])(?:train|training|finetune|fine_tune|pretrain)(?:_\w+)?\.py\b", (b"train", b"finetune", b"fine_tune"), "script"),
    # inference: a script or module that predicts, generates, separates or upscales (inference_realesrgan.py, predict.py,
    # `python -m demucs.separate`), a traceback's frame of such a function or of a function under torch.no_grad() /
    # torch.inference_mode() (torch's decorate_context), a diffusers pipeline, a person's "during inference" (not "for inference",
    # "in inference": a comment beside a training run, openai/guided-diffusion#72)
    sign(INFERENCE, rb"(?<![\w-])\w*(?:inference|infer|predict|prediction|separate|upscale|txt2img|img2img|transcribe|synthesi[sz]e)\w*\.py\b"
                    rb"|(?<![\w-])-m \w+(?:\.\w+)*\.(?:separate|predict|inference|infer|generate|upscale|transcribe)\b"
                    rb"|^\s*File \"[^\"]+\", line \d+, in (?:\w+_)?(?:inference|infer|predict|separate|upscale|enhance|generate|transcribe)(?:_\w+)?\s*$"
                    rb"|[/\\]torch[/\\]utils[/\\]_contextlib\.py\", line \d+, in decorate_context|[/\\]diffusers[/\\]pipelines[/\\]"
                    rb"|(?<![\w/.-])(?:[Dd]uring|[Aa]t|[Ww]hen running|[Ww]hile running|[Ww]hen doing) inference\b",
         (b"infer", b"predict", b"separate", b"upscale", b"txt2img", b"img2img", b"transcribe", b"synthesi", b"generate", b"enhance",
          b"decorate_context", b"diffusers", b"nference")),
    # Python in the job: a traceback, a frame, a script, a package folder, python or pip on a command line, an interpreter's
    # version in an issue template, a Python exception's class at a line's start (not a C++ exception's what())
    sign(PYTHON, rb"Traceback \(most recent call last\)|^\s*File \"[^\"\n]+\", line \d+|\.py\b|[/\\](?:site|dist)-packages[/\\]"
                 rb"|(?<![\w/.-])(?:python[\d.]*|pip3?|conda|jupyter|ipython)(?:\.exe)?(?= )|\bPython(?: version)?:? ?[23]\.\d+|\bimport (?:torch|tensorflow|jax|numpy)\b"
                 rb"|^(?:\w+\.)*[A-Z]\w*(?:Error|Exception): ",
         (b"Traceback", b"File \"", b".py", b"-packages", b"python", b"pip", b"conda", b"jupyter", b"Python", b"import ", b"Error: ", b"Exception: ")),
    # a native program: a C++ exception's end (terminate, what()), a native frame in a shared library, a Windows program's .exe
    # at a prompt or in a path (not python.exe)
    sign(NATIVE_PROGRAM, rb"\bterminate called after throwing an instance of\b|^\s*what\(\): |^\s*frame #\d+: .* in \S+\.so\b"
                 rb"|(?<![\w.-])(?!python|pip|conda)[\w-]+\.exe\b(?![\w.])",
         (b"terminate called", b"what(): ", b"frame #", b".exe")),
    # inference engines: their start commands, start-up lines and packages
    sign(ENGINE, rb"\bvllm serve\b|\bvllm\.entrypoints\b|\bStarting vLLM\b|\bvLLM API server\b|[/\\]site-packages[/\\]vllm[/\\]|\bLLM\(model=",
         (b"vllm", b"vLLM", b"LLM(model="), "vLLM"),
    sign(ENGINE, rb"\bsglang\.launch_server\b|[/\\]site-packages[/\\]sglang[/\\]|\bPrefill batch\.", (b"sglang", b"Prefill batch"), "SGLang"),
    sign(ENGINE, rb"\btext[_-]generation[_-](?:launcher|server|router)\b", (b"text_generation", b"text-generation"), "TGI"),
    sign(ENGINE, rb"\bllama-(?:server|cli)\b|\bllama_(?:model_load|new_context_with_model|init_from_model)\b|\bllm_load_tensors\b|\bggml_cuda_\w+|[/\\]ggml-cuda[/\\]",
         (b"llama-server", b"llama-cli", b"llama_", b"llm_load_tensors", b"ggml_cuda", b"ggml-cuda"), "llama.cpp"),
    sign(ENGINE, rb"\bollama (?:serve|run)\b|\bllama runner started\b|\bstarting llama server\b|msg=\"[^\"]*\" [^\n]*source=\w+\.go", (b"ollama", b"llama runner", b"starting llama", b"source="), "Ollama"),
    sign(ENGINE, rb"\*\* ComfyUI (?:startup|Path|Base)|[/\\]ComfyUI[/\\](?:main\.py|comfy[/\\]|custom_nodes[/\\])|\bcomfy[/\\]model_management\.py|^To see the GUI go to:",
         (b"ComfyUI", b"comfy", b"To see the GUI"), "ComfyUI"),
)
NEEDLES = tuple(dict.fromkeys(n for s in SIGNS for n in s.needles))
# The thread's tracker (a collected thread's `# source:` line): an issue filed with WSL, a Kubernetes project, Ray or an
# inference engine is about that setting
TRACKER = re.compile(
    rb"^# source: https://github\.com/(?:(?P<wsl>microsoft/WSL/)"
    rb"|(?P<pod>(?:kubeflow|kubernetes|kubernetes-sigs|k3s-io|k0sproject|kubeedge)/|rancher/rke2/|canonical/microk8s/|NVIDIA/(?:k8s-device-plugin|gpu-operator|k8s-dra-driver)\w*/)"
    rb"|(?P<vm>(?:cloud-hypervisor|QubesOS|kubevirt|proxmox)/|NVIDIA/kubevirt-gpu-device-plugin/|jamesstringer90/Easy-GPU-PV/)"
    rb"|(?P<ray>ray-project/)|(?P<vllm>vllm-project/)|(?P<sglang>sgl-project/)|(?P<tgi>huggingface/text-generation-inference/)"
    rb"|(?P<llamacpp>(?:ggerganov|ggml-org)/llama\.cpp/)|(?P<ollama>ollama/ollama/)|(?P<comfyui>(?:comfyanonymous|Comfy-Org)/ComfyUI/)"
    # programs that only run a trained model: separate audio, upscale or restore images, transcribe, predict structures
    rb"|(?P<inference>(?:facebookresearch|adefossez)/demucs/|xinntao/Real-ESRGAN/|TencentARC/GFPGAN/|sczhou/CodeFormer/|openai/whisper/"
    rb"|SYSTRAN/faster-whisper/|m-bain/whisperX/|YoshitakaMo/localcolabfold/|sokrypton/ColabFold/|lllyasviel/Fooocus/|danielgatis/rembg/))",
    re.MULTILINE,
)
# A thread's title line, and the words in it that name the setting: "nvidia-smi on WSL doesn't work", "nvidia-smi not found in
# pod", "[vllm] - ...", "Ray Tune trial gets no GPU"
TITLE_LINE = re.compile(rb"^# (?!source:)[^\n]*", re.MULTILINE)
TITLE_WORDS = re.compile(
    rb"(?P<wsl>\bWSL ?2?\b)|(?P<pod>\b(?:[Pp]ods?|[Kk]ubernetes|[Kk]8s|k3s|k0s|microk8s|Kubeflow|KubeRay)\b)"
    rb"|(?P<vm>\b(?:[Pp]ass-?through|VFIO|vfio|Proxmox|Hyper-V|GPU-PV|ESXi|vSphere|KubeVirt|HVM|virtual machine)\b)"
    rb"|(?P<container>(?<![\w/.-])(?:[Dd]ocker|[Pp]odman|[Aa]pptainer|[Ss]ingularity)(?![\w/.-]))|(?P<notebook>\b(?:[Cc]olab|Kaggle)\b)|(?P<rented>\b(?:RunPod|[Rr]unpod|Vast\.ai|vast\.ai)\b)"
    rb"|(?P<cluster>\b(?:HPC|[Ss]lurm|SLURM|login node)\b)|(?P<ray>\bRay ?(?:Tune|Train|Serve|[Cc]luster|actor|task|worker|trial)s?\b)"
    rb"|(?P<training>\b(?:[Tt]raining|[Ff]ine-?tun(?:e|ing)|[Pp]re-?training)\b)"
    rb"|(?P<inference>\b(?:[Ii]nference|[Ii]nferencing|[Pp]redicting|[Uu]pscaling)\b)"
    rb"|(?P<vllm>\b[vV][lL][lL][mM]\b)|(?P<sglang>\b[sS][gG][lL]ang\b)|(?P<llamacpp>\bllama[.]?cpp\b|\bllama-server\b)|(?P<ollama>\b[oO]llama\b)"
)
# A collected thread's second line: the repository and its main language ("owner/name · issue #N · open · C++"); a program
# written in C, C++, Rust, Go or CUDA is a native one, one written in Python a Python job
REPOSITORY = re.compile(rb"^(?P<repo>[\w.-]+/(?P<name>[\w.-]+)) \xc2\xb7 (?:issue|pull request) #\d+ \xc2\xb7 \w+(?: \xc2\xb7 (?P<language>[^\n]*))?$", re.MULTILINE)
NATIVE_LANGUAGES = {b"C", b"C++", b"Cuda", b"Rust", b"Go", b"C#", b"Zig", b"Fortran", b"Assembly", b"Objective-C", b"Pascal"}
NAMED = {"wsl": (WSL, ""), "vm": (VM, ""), "container": (CONTAINER, ""), "notebook": (NOTEBOOK, ""), "rented": (RENTED, ""), "pod": (POD, ""), "cluster": (CLUSTER, ""), "ray": (RAY, ""), "vllm": (ENGINE, "vLLM"), "sglang": (ENGINE, "SGLang"),
         "tgi": (ENGINE, "TGI"), "llamacpp": (ENGINE, "llama.cpp"), "ollama": (ENGINE, "Ollama"), "comfyui": (ENGINE, "ComfyUI"),
         "inference": (INFERENCE, ""), "training": (TRAINING, "")}
# A native source file a CUDA error names as where it was raised: "(at C:\\...\\src\\kernels\\awq\\gemv_awq.cu:318)", "in function
# ggml_cuda_compute_forward at /opt/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:2761", "CUDA error at /builds/.../cuda_common.cpp:54"
NATIVE = re.compile(rb"(?P<path>(?:[A-Za-z]:)?[\w.~+-]*(?:[/\\][\w.~+-]+)+\.(?:cu|cuh|cpp|cc|cxx|c|hpp|h))(?::\d+|\(\d+\))")
NATIVE_NEEDLES = (b".cu:", b".cuh:", b".cpp:", b".cc:", b".cxx:", b".c:", b".h:", b".hpp:", b".cu(", b".cpp(")
CUDA_WORDS = re.compile(rb"CUDA|cuda|kernel image|NO_BINARY")
KERNELS_KEPT = 8
LINES_SEARCHED = 64  # lines holding one needle that a sign's search reads, per block
KERNEL_SPAN = 3  # lines between a CUDA error's line and the line that names its source file
# The folders a project keeps its native sources in: the project is the folder above the first of them
SOURCE_FOLDERS = {"src", "csrc", "source", "sources", "ggml", "kernels", "kernel", "include", "common", "cuda", "lib", "ops"}
# What a checkout's folder adds to the project's name (nunchaku-dev, llama.cpp-master, foo_v2)
CHECKOUT_SUFFIX = re.compile(r"[-_](?:dev|main|master|git|src|v?\d[\w.]*)$", re.IGNORECASE)
# Projects whose native tree is known by a folder's name wherever it lies (TensorFlow's stream_executor/cuda/cuda_driver.cc)
NATIVE_PROJECTS = {"tensorflow": "TensorFlow", "jaxlib": "jaxlib", "xla": "XLA", "paddle": "PaddlePaddle", "mxnet": "MXNet",
                   "onnxruntime": "onnxruntime", "ggml": "ggml", "llama.cpp": "llama.cpp", "ctranslate2": "CTranslate2"}
# Folders that hold projects rather than name one
NOT_PROJECTS = {"home", "opt", "usr", "local", "tmp", "root", "build", "builds", "mnt", "data", "work", "workspace", "app", "code", "users",
                "desktop", "documents", "downloads", "projects", "repos", "git", "third_party", "external", "deps", "vendor"}
# The CUDA toolkit's own tree (/usr/local/cuda/include/thrust/..., /usr/local/cuda-12.4/targets/...)
TOOLKIT = re.compile(r"[/\\]cuda(?:-\d+(?:\.\d+)?)?[/\\](?:include|targets)[/\\]|[/\\](?:thrust|cub)[/\\]")
HEADER_LINES = 6  # a collected thread's header: its source, its tracker line, its labels, its title


@dataclass(frozen=True)
class Shown:
    """A setting the input shows: which, the engine it names (ENGINE's), and the first line that shows it."""

    setting: str
    line: int
    text: str
    name: str = ""


@dataclass(frozen=True)
class Kernel:
    """A native source file of a program other than torch that a CUDA error's line names: whose kernel raised it."""

    program: str
    source: str
    line: int
    text: str


@dataclass(frozen=True)
class Setting:
    """The settings an input shows, each with its first line (none: a plain machine, or the input does not say), and the
    native source files of other programs than torch its CUDA errors name."""

    shown: tuple[Shown, ...] = ()
    kernels: tuple[Kernel, ...] = ()
    program: str = ""  # the program a collected thread is about (its repository's name), '' where the input does not say
    python: Optional[Shown] = None  # the first line that shows Python in the job
    native_program: Optional[Shown] = None  # the first line that shows a native program (C, C++, Rust, Go)

    def native(self) -> Optional[Shown]:
        """The line that shows a native program ran, where no line shows Python."""
        return None if self.python is not None else self.native_program

    def kernel_near(self, line: int) -> Optional[Kernel]:
        """Another program's source file named on `line` or within KERNEL_SPAN lines of it."""
        return min((k for k in self.kernels if abs(k.line - line) <= KERNEL_SPAN), key=lambda k: abs(k.line - line), default=None)

    def of(self, setting: str) -> Optional[Shown]:
        return next((s for s in self.shown if s.setting == setting), None)

    def first(self, settings: tuple[str, ...]) -> Optional[Shown]:
        """The first of `settings`, in that order, the input shows."""
        return next((s for name in settings if (s := self.of(name)) is not None), None)


class SettingSeen(HeadLines):
    """The settings the input's head shows, fed block by block (`feed`, `tee`); `setting()` once it ended."""

    NEEDLES = NEEDLES + NATIVE_NEEDLES + (b"# ",)

    def __init__(self) -> None:
        super().__init__()
        self.found: dict[str, Shown] = {}
        self.kernels: list[Kernel] = []
        self.program = ""

    def read_head(self, block: bytes, begin: int, end: int, words: set[bytes]) -> None:
        if self.lines < HEADER_LINES:
            self.read_header(block, begin, end)
        for s in SIGNS:
            if (s.name or s.setting) in self.found or words.isdisjoint(s.needles):
                continue
            for start, stop in needle_lines(block, begin, end, words.intersection(s.needles)):
                m = s.regex.search(block, start, stop)
                if m is not None:
                    self.keep(s.setting, s.name, self.line_at(block, begin, end, m.start()))
                    break
        if len(self.kernels) < KERNELS_KEPT and not words.isdisjoint(NATIVE_NEEDLES):
            self.read_kernels(block, begin, end, words.intersection(NATIVE_NEEDLES))

    def read_kernels(self, block: bytes, begin: int, end: int, needles: set[bytes]) -> None:
        """The native source files of programs other than torch that lines speaking of CUDA name."""
        for start, stop in needle_lines(block, begin, end, needles):
            if CUDA_WORDS.search(block, start, stop) is None:
                continue
            for m in NATIVE.finditer(block, start, stop):
                path = m["path"].decode("utf-8", "replace")
                program = program_of(path) if native_owner(path) == "extension" else ""
                if program:
                    line, text = self.line_at(block, begin, end, m.start())
                    self.kernels.append(Kernel(program, path, line, text))
                    if len(self.kernels) >= KERNELS_KEPT:
                        return
                    break

    def read_header(self, block: bytes, begin: int, end: int) -> None:
        """A collected thread's header: the tracker it was filed in and its title."""
        stop = begin
        for _ in range(HEADER_LINES - self.lines):
            nl = block.find(b"\n", stop, end)
            stop = end if nl == -1 else nl + 1
        if (m := REPOSITORY.search(block, begin, stop)) is not None:
            self.program = m["name"].decode("utf-8", "replace")
            language = (m["language"] or b"").split(b" \xc2\xb7 ")[0].strip()
            if language in NATIVE_LANGUAGES:
                self.keep(NATIVE_PROGRAM, "", self.line_at(block, begin, end, m.start()))
            elif language in (b"Python", b"Jupyter Notebook"):
                self.keep(PYTHON, "", self.line_at(block, begin, end, m.start()))
        if (m := TRACKER.search(block, begin, stop)) is not None:
            self.keep(*NAMED[next(k for k, v in m.groupdict().items() if v is not None)], self.line_at(block, begin, end, m.start()))
        for title in TITLE_LINE.finditer(block, begin, stop):
            for m in TITLE_WORDS.finditer(title.group()):
                self.keep(*NAMED[next(k for k, v in m.groupdict().items() if v is not None)], self.line_at(block, begin, end, title.start()))

    def keep(self, setting: str, name: str, at: tuple[int, str]) -> None:
        key = name or setting
        if key not in self.found or at[0] < self.found[key].line:
            self.found[key] = Shown(setting, at[0], at[1], name)

    def setting(self) -> Setting:
        shown = tuple(sorted((s for s in self.found.values() if s.setting not in (PYTHON, NATIVE_PROGRAM)), key=lambda s: s.line))
        return Setting(shown, tuple(self.kernels), self.program, self.found.get(PYTHON), self.found.get(NATIVE_PROGRAM))


def needle_lines(block: bytes, begin: int, end: int, needles: set[bytes]) -> list[tuple[int, int]]:
    """(start, stop) of the lines of block[begin:end] that hold one of the needles, in order; at most LINES_SEARCHED of each
    needle's (a sign shows on one of its first lines, or the log repeats it)."""
    found: set[tuple[int, int]] = set()
    for needle in needles:
        at = block.find(needle, begin, end)
        for _ in range(LINES_SEARCHED):
            if at == -1:
                break
            start = block.rfind(b"\n", begin, at) + 1 or begin
            stop = block.find(b"\n", at, end)
            stop = end if stop == -1 else stop
            found.add((start, stop))
            at = block.find(needle, stop, end)
    return sorted(found)


def program_of(path: str) -> str:
    """The program a native source file belongs to: an installed package's name, or the folder above the project's first
    source folder (/opt/llama.cpp/ggml/src/... -> llama.cpp, ...\\nunchaku-dev\\src\\kernels\\... -> nunchaku); '' when the
    path does not say."""
    if TOOLKIT.search(path):
        return ""  # the CUDA toolkit's own headers (thrust, cub): the program that compiled them is not named here
    named = next((NATIVE_PROJECTS[p.lower()] for p in re.split(r"[/\\]+", path) if p.lower() in NATIVE_PROJECTS), None)
    if named is not None:
        return named
    package = package_of(path) if re.search(r"[/\\](?:site|dist)-packages[/\\]", path) else None
    if package and package != "python":
        return package
    parts = [p for p in re.split(r"[/\\]+", path) if p]
    for i, part in enumerate(parts[:-1]):
        if part.lower() in SOURCE_FOLDERS and i > 0:
            name = CHECKOUT_SUFFIX.sub("", parts[i - 1])
            return name if re.fullmatch(r"[A-Za-z][\w.+-]*", name) and name.lower() not in NOT_PROJECTS else ""
    return ""
