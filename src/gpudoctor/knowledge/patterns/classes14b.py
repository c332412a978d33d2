"""Rules for classes of messages of the fourteenth round (issue 35, diagB14): the honest "unrecognised" and "inconclusive"
answers on the retired held-out part heldout13 whose log holds a line that decides the cause, in a class that recurs
across projects.

- Slurm could not start the step's program on a node: the node refused the launch ("Task launch for StepId failed on
  node N: Job credential expired / Invalid job credential / Job prolog failed"), or slurmstepd found no program to run
  ("execve(): PATH: No such file or directory", "Permission denied"): a node's clock, its MUNGE key, its prolog, or a
  path that is not there on the node;
- autograd's check of what a backward returned ("Function XBackward returned an invalid gradient at index I - got [..]
  but expected shape compatible with [..]", "returned an incorrect number of gradients"): a custom autograd Function (a
  compiled extension's) whose backward does not fit its inputs; Gaussian splatting rasterizers are most of the reports;
- "No rendezvous handler for env://" (or tcp://): the torch build has no rendezvous for the init_method's scheme (Windows
  builds before torch 1.8 had only file://), or the scheme is misspelt;
- a convolution given input of other channels than its weight takes ("Given groups=1, weight of size [64, 3, 7, 7], expected
  input[1, 1, 224, 224] to have 3 channels, but got 1 channels instead"), or an unbatched image ("Expected 4-dimensional input
  for 4-dimensional weight"): the numbers decide grayscale or RGBA images into an RGB model, a channels-last image, a
  missing batch dimension, or the model's configured input channels against the data's;
- torch's scaled_dot_product_attention with no backend left for its inputs ("No available kernel.  Aborting execution."):
  the code allowed only the fused kernels (a project's flash option, an sdpa_kernel context) and this GPU, dtype, mask or
  shape is not theirs;
- Windows' C/C++ compiler (MSVC's cl.exe) not installed or not on PATH where a C++/CUDA extension is built (torch's "where
  cl" check, nvcc's "Cannot find compiler 'cl.exe' in PATH", setuptools' "Microsoft Visual C++ 14.0 or greater is required");
- TensorFlow (and Keras's multi_gpu_model) asked for GPUs it has not registered; the devices it lists decide why: none (a
  CPU-only TensorFlow, or CUDA libraries it could not load), fewer than asked, or the same GPUs under names this Keras does
  not know (Keras and TensorFlow of releases that do not go together).

(Classes of the round that widen existing rules: torch 0.4's "rank is not set but it is required for env:// init method" is
launcher-env-missing, MXNet's "CUDA: initialization error" is cuda-fork-reinit, dash's "train.sh: 1: srun: not found" is
launcher-not-found (which says that srun exists only on a Slurm cluster), a DataLoader worker's segmentation fault gets its
own fix in dataloader-worker-killed, more ranks than GPUs is in nccl-duplicate-gpu's fix, DDP given device_ids [None] for a
module on the CPU says that no GPU was given to the process (ddp-device-ids-multi-device's fix), and an extension's illegal
memory access off cuda:0 names its missing device guard (cuda-illegal-memory-access's fix).)

Their examples are real lines from public threads (thread in the source); their counter-examples the nearest lines
that mean something else.
"""

from __future__ import annotations

import re

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, groups, pattern

E = Severity.ERROR

# What a node's refusal to start a step says, and what fixes it (Slurm's FAQ: "Why are jobs allocated nodes and then unable
# to initiate programs on some nodes?"; the credential carries the controller's time stamp and is signed with MUNGE).
SLURM_REFUSALS = (
    (re.compile(r"credential expired", re.I),
     "the node's clock and the controller's disagree (the credential Slurm signs carries the controller's time; a node whose clock "
     "is ahead or behind, typically after a reboot without NTP, rejects it as expired): the cluster's admins sync the clocks "
     "(timedatectl / chronyc tracking on NODE and on the controller); meanwhile resubmit with --exclude=NODE"),
    (re.compile(r"invalid job credential|credential.*(?:decode|verif)", re.I),
     "the node cannot verify the credential: MUNGE on NODE does not share the controller's key, or is not running (the same "
     "/etc/munge/munge.key on every node, munged restarted; the slurm user the same UID/GID everywhere): for the admins; "
     "meanwhile resubmit with --exclude=NODE"),
    (re.compile(r"prolog", re.I),
     "the node's prolog script failed and Slurm drained it (sinfo -R shows the reason): the admins read slurmd's log on NODE; "
     "meanwhile resubmit with --exclude=NODE"),
)

SLURM_SCRIPT = re.compile(r"/slurm_script$|/job\d+/")


def slurm_step_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    node = out.get("node") or "<node>"
    program = out.get("program", "")
    reason = out.get("reason") or out.get("reason2") or out.get("reason3") or ""
    out["reason"] = reason
    if program:
        if SLURM_SCRIPT.search(program):
            step = ("the node lost the copy of the batch script that slurmd keeps in its spool folder (SlurmdSpoolDir, here "
                    f"{program.rsplit('/', 1)[0]}): that folder was cleaned, is full or not writable on that node: the admins check the "
                    "node's spool folder and file systems; meanwhile resubmit with --exclude=NODE")
        elif "ermission" in reason:
            step = (f"{program} is there but cannot be run: chmod +x it, or run it through its interpreter (srun python script.py, "
                    "srun bash script.sh); a file system mounted noexec on the node refuses every program on it")
        else:
            step = (f"{program} is not at that path on the node (a file only on the login node, a command the node's PATH does not "
                    "hold): give srun a path on a file system every node mounts (which PROGRAM on the node), or set up the "
                    "environment in the batch script (module load, conda activate) before srun")
    else:
        step = next((s for rx, s in SLURM_REFUSALS if rx.search(reason)),
                    "the node refused to start the step: slurmd's log on NODE says why (sinfo -R shows a drained node); the admins "
                    "fix the node; meanwhile resubmit with --exclude=NODE")
    step = step.replace("NODE", node).replace("PROGRAM", program.rsplit("/", 1)[-1] or "the program")
    check = f"srun -N1 -w {node} hostname checks that node" if out.get("node") else "srun -N1 hostname checks a node"
    out["step"] = f"{step}; then {check}"
    return out


# A Gaussian splatting rasterizer's autograd Function (diff-gaussian-rasterization and its forks, 2DGS's surfel rasterizer).
RASTERIZER = re.compile(r"Rasteriz", re.I)


def gradient_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    function = out.get("function", "the function")
    got, expected = out.get("got"), out.get("expected")
    if got is not None and expected is not None:
        said = f"its backward returned a gradient of shape [{got}] for input {out.get('index', '?')}, whose shape is [{expected}]"
    elif out.get("detail"):
        said = f"its backward returned a gradient for input {out.get('index', '?')} that does not fit it ({out['detail'].strip()})"
    else:
        said = f"its backward returned {out.get('got_n', '?')} gradients for {out.get('expected_n', '?')} inputs"
    if RASTERIZER.search(function):
        if got is not None and got.split(",")[0].strip() == "0":
            step = ("no Gaussians are left (the first dimension, the number of Gaussians, is 0): the densification's pruning removed "
                    "them all, or the scene started with none (an empty or unreadable initial point cloud); check the number of points "
                    "at initialisation and the pruning thresholds for this dataset (graphdeco-inria/gaussian-splatting#482); a "
                    "rasterizer of another version than the renderer calls (a version mismatch: the renderer's settings or arguments "
                    "refused) can empty the scene the same way: install the repository's own rasterizer submodule")
        else:
            step = ("the installed rasterizer is not the one this renderer was written for (a version mismatch: another fork's "
                    "diff-gaussian-rasterization, 2DGS's two scales against 3DGS's three, another SH degree or feature size, a batch "
                    "of images where the rasterizer takes one): pip uninstall the rasterizer, then pip install the repository's own "
                    "submodule (./submodules/...), and pass inputs of the shapes it takes")
    elif out.get("expected_n"):
        step = (f"its backward must return exactly {out['expected_n']} values, one per input of forward (None for each input that "
                "needs no gradient, such as a flag or a size): add the missing Nones (or drop the extra ones); code written for an "
                "older torch, which let a backward return fewer, is the usual source")
    else:
        step = (f"the backward of {function} (a custom autograd.Function: a compiled extension's or the project's own) does not "
                "fit the inputs it was given: the extension is of another version than the code calling it (reinstall the version "
                "the project pins, rebuilt for this torch), or the call passes inputs of other shapes than it handles (a batch "
                "dimension, a feature size)")
    return {**out, "step": f"{function}: {said}; {step}"}


def conv_input_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    if out.get("dims"):
        out["step"] = (f"the convolution takes {out['weight_dims']}-dimensional input (a batch: N first) and got a {out['dims']}-dimensional "
                       "one (a single image or volume without its batch dimension): add it, x.unsqueeze(0) (or batch it through a "
                       "DataLoader)")
        return out
    expected, got = int(out["expected"]), int(out["got"])
    shape = [int(n) for n in re.findall(r"\d+", out.get("input", ""))]
    if len(shape) >= 3 and shape[-1] == expected and shape[1] == got:
        step = (f"the input is channels-last ({out.get('input')}: the {expected} channels are its last dimension): permute it to "
                "channels-first, x.permute(0, 3, 1, 2) (torchvision's ToTensor does it for images), before the model")
    elif (expected, got) == (3, 1):
        step = ("one-channel (grayscale) images into a model for RGB: convert them as they are read, Image.open(p).convert('RGB') "
                "(or x.repeat(1, 3, 1, 1)), or build the model with 1 input channel (and no RGB checkpoint for its first layer)")
    elif (expected, got) == (1, 3):
        step = ("RGB images into a model for one channel: convert them as they are read, Image.open(p).convert('L'), or build the "
                "model with 3 input channels")
    elif (expected, got) == (3, 4):
        step = ("four-channel images (PNG with an alpha channel, RGBA) into a model for RGB: Image.open(p).convert('RGB') as they "
                "are read")
    elif got == 0:
        step = "the input has no channels at all: the code that built it (a slice, an empty selection of channels) left none"
    else:
        step = (f"the model's configured input channels ({expected}) and what reaches the layer ({got}) differ: the data has other "
                "channels than the config says (its input/label channel options, a mask or conditioning channel the model "
                "concatenates to the image), the config changed one layer's channels and not its neighbour's, or the checkpoint "
                f"was trained for {expected}-channel inputs: make the config's channel counts those of the data")
    out["step"] = step
    return out


# A device name as TensorFlow or Keras lists it: "/gpu:0", "/device:GPU:0", "/job:localhost/replica:0/task:0/device:GPU:0"; XLA_GPU
# is XLA's view of a GPU TensorFlow itself did not register (its CUDA libraries did not load), not a GPU it can place ops on.
TF_GPU = re.compile(r"(?<![\w_])(?:device:)?gpu:\d+", re.I)
TF_LEGACY_NAMES = re.compile(r"'/(?:cpu|gpu):\d+'")


def tf_devices_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    have = out.get("available") or out.get("available2") or out.get("available3") or ""
    keras = bool(out.get("gpus"))
    if keras:
        asked = int(out["gpus"])
    else:  # the GPU the operation was pinned to: its index + 1 GPUs are needed
        index = re.search(r"gpu:(\d+)", out.get("spec") or out.get("spec2") or "", re.I)
        asked = int(index.group(1)) + 1 if index else 1
    seen = len(TF_GPU.findall(have))
    out.update(asked=str(asked), visible=str(seen))
    if seen == 0:
        step = ("TensorFlow registered no GPU devices at all (the devices it lists are CPU" + (" and XLA's" if "XLA_GPU" in have else "") + "): "
                "a CPU-only TensorFlow (tensorflow-cpu, or a pip 'tensorflow' older than 1.15 without -gpu), or a GPU build whose "
                "CUDA/cuDNN libraries it could not load (the 'Could not load dynamic library' lines at its start name them: each "
                "TensorFlow release needs one CUDA and cuDNN version); check with python -c \"import tensorflow as tf; "
                "print(tf.config.list_physical_devices('GPU'))\", and install the TensorFlow build and CUDA/cuDNN that go together")
    elif seen < asked:
        step = (f"{asked} GPUs are needed and TensorFlow sees {seen}: ask for {seen} (gpus={seen}, or devices up to GPU:{seen - 1}) or "
                "make the others visible (CUDA_VISIBLE_DEVICES, the scheduler's GPU request, nvidia-smi -L)")
    elif keras:
        step = (f"the {seen} GPUs are there, under names this Keras does not look for ({'/device:GPU:N' if not TF_LEGACY_NAMES.search(have) else 'no /cpu:0'}"
                "): Keras and TensorFlow of releases that do not go together; install the Keras release made for this TensorFlow "
                "(or use tf.keras, and tf.distribute.MirroredStrategy in place of multi_gpu_model)")
    else:
        step = ("the GPU is registered, under another name than the one the operation was pinned to (another /job:, /task: or "
                "replica than this process's, as the devices listed show): pin it to a device as the list names it, or let "
                "TensorFlow place it (tf.config.set_soft_device_placement(True), allow_soft_placement=True)")
    out["step"] = step
    return out


PATTERNS_EARLY = [
    pattern(
        "slurm-step-start-failed",
        "launcher",
        CAUSE,
        E,
        "Slurm could not start the job's program on a node: the node refused the launch, or the program is not there",
        # srun's report of a node's slurmd refusing the step; slurmstepd's own when the program it was to run is not there
        r"Task launch for (?:StepId=)?(?P<step_id>\S+) failed on node (?P<node>[^\s:]+): (?P<reason>.+?)\s*$"
        r"|Application launch failed: (?P<reason2>.+?)\s*$"
        r"|slurmstepd(?:-[\w.-]+)?: error: execve\(\): (?P<program>[^:]+): (?P<reason3>No such file or directory|Permission denied)",
        ("Task launch for", "Application launch failed", "execve()"),
        why="""srun (or sbatch, for the batch script) asks the slurmd daemon of each allocated node to start the step; slurmd
        checks the step's credential (signed with MUNGE, stamped with the controller's time), runs the node's prolog, and
        slurmstepd then execs the program. Here one of those steps failed on a node, before any of the job's code ran: a
        credential the node's clock calls expired or its MUNGE cannot verify, a prolog that failed, or a program (the batch
        script's copy in the node's spool folder, the command given to srun) that is not at its path there or cannot be
        executed. The training code and the GPUs are not involved; the node, or the path, is.""",
        fix="STEP",
        examples=[
            ("srun: error: Task launch for 36.0 failed on node cn131: Job credential expired",
             "ai4d-iasc/trixie#58 (after a reboot; launching without the per-node srun worked)"),
            ("srun: error: Task launch for 1443722.0 failed on node compute-0-1: Job credential expired",
             "c3nl-neuraldynamics/c3nl_cluster#61 and #18 (the head node's clock out of sync with the compute nodes: ntpdate fixed it)"),
            ("srun: error: Task launch for StepId=13.0 failed on node adas-ml-2: Invalid job credential", "NVIDIA/deepops#1179"),
            ("srun: error: Task launch for 23.0 failed on node hpc: Job prolog failed", "mknoxnv/ubuntu-slurm#4 (the node drained, 'Prolog error')"),
            ("slurmstepd: error: execve(): /tmp/slurmd/job2997814/slurm_script: No such file or directory",
             "ArjunaCluster/ArjunaUsers#21 and #20 (node c002, a file-system problem of the node)"),
            ("slurmstepd: error: execve(): mkdir: No such file or directory", "firelab/windninja#624"),
        ],
        not_examples=[
            # the program ran and failed: its own output says why (a launcher-only line, another verdict)
            "srun: error: compute-dy-t3small-1: task 0: Exited with exit code 1",
            "slurmstepd: error: couldn't chdir to `/root/burst-buffer': No such file or directory: going to /tmp instead",  # it goes on
            "srun: error: Unable to create step for job 10: Error generating job credential",  # the controller's side, before any node
        ],
        fields=slurm_step_fields,
    ),
    pattern(
        "rendezvous-scheme-unsupported",
        "platform",
        CAUSE,
        E,
        "this torch build has no rendezvous for the init_method's scheme: env:// and tcp:// on a Windows build before torch 1.8, or a misspelt scheme",
        # torch/distributed/rendezvous.py: the scheme of init_method (env:// by default and under a launcher) looked up among the registered handlers
        r"No rendezvous handler for (?P<scheme>[\w+.-]*)://",
        ("No rendezvous handler for",),
        why="""init_process_group finds its peers through a rendezvous named by init_method's scheme: env:// (the default, and
        what torch.distributed.launch, torchrun and Lightning's DDP use), tcp:// or file://. This torch has no handler for the
        scheme it was given. torch's Windows builds before 1.8 registered only file:// (no TCP store on Windows), so any
        launcher-started or default init fails there; on any system, a scheme that is misspelt (tcp// or a bare address) has
        no handler either. Distributed training on Windows also has no NCCL: only gloo.""",
        fix="""on Windows: one GPU needs no process group (run the script without the launcher, or Lightning's strategy/accelerator "dp" or
        devices=1); for several, torch >= 1.8 with backend="gloo" (torch >= 2.4: set USE_LIBUV=0 if its store refuses), or
        init_method="file:///C:/tmp/ddp_init" with backend="gloo"; or train on Linux or WSL2; elsewhere, spell the scheme:
        init_method="tcp://HOST:PORT" or "env://\"""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: No rendezvous handler for env://",
             "pytorch/pytorch#53135 (win10); Lightning-AI/pytorch-lightning#5358 (Windows 10: accelerator dp worked); RangiLyu/nanodet#280 (win10, torch 1.7.1)"),
            ("RuntimeError: No rendezvous handler for tcp://", "CAMMA-public/SelfSupSurg#6 (Windows)"),
        ],
        not_examples=[
            "RuntimeError: Distributed package doesn't have NCCL built in",  # the backend, not the rendezvous (another verdict)
            "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable RANK expected, but not set",
        ],
        fields=groups,
    ),
    pattern(
        "msvc-compiler-not-found",
        "platform",
        CAUSE,
        E,
        "a C++/CUDA extension is built on Windows and the Microsoft C++ compiler (MSVC's cl.exe) is not installed or not on PATH",
        # torch.utils.cpp_extension's own lookup (torch <= 1.x raised it); nvcc's host-compiler lookup; setuptools' MSVC lookup
        r"Command '\[(?P<q>['\"])where(?P=q), (?P=q)cl(?P=q)\]' returned non-zero exit status"
        r"|nvcc fatal\s*: Cannot find compiler 'cl\.exe' in PATH"
        r"|Microsoft Visual C\+\+ (?P<version>[\d.]+) (?:or greater )?is required",
        ("'where'", "Cannot find compiler 'cl.exe'", "Microsoft Visual C++"),
        why="""On Windows a package's C++ or CUDA extension (built by pip, by setup.py, or at first use by torch's
        cpp_extension load()) is compiled by MSVC, Microsoft's C++ compiler cl.exe, which nvcc also needs as its host
        compiler for CUDA code. torch looks it up with `where cl`, nvcc and setuptools each their own way, and none found it:
        Visual Studio's C++ build tools are not installed, or the shell is not one where they are set up (cl.exe is on PATH
        only in a "x64 Native Tools" prompt or after vcvars64.bat). Nothing of the package is wrong; no extension builds on
        this machine until MSVC is there.""",
        fix="""install Visual Studio Build Tools with the "Desktop development with C++" workload (a release your CUDA toolkit supports:
        nvcc names the newest MSVC it accepts), then build from an "x64 Native Tools Command Prompt for VS" (or after "vcvars64.bat") so
        that `where cl` finds it; or install a prebuilt wheel of the package made for your Python, torch and CUDA, which needs no
        compiler""".replace("\n        ", " "),
        examples=[
            ("subprocess.CalledProcessError: Command '['where', 'cl']' returned non-zero exit status 1.",
             "Ree1s/IDM#4; HRNet/HRNet-Semantic-Segmentation#176 (installing the Visual C++ compiler, cl.exe on PATH, solved it); zhanghang1989/PyTorch-Encoding#157"),
            ("nvcc fatal   : Cannot find compiler 'cl.exe' in PATH",
             "elda27/pydrr#6 (the maintainer: put cl.exe, the MSVC compiler, on PATH); AlexeyAB/darknet#8584; IDEA-Research/GroundingDINO#49"),
            ('> Microsoft Visual C++ 14.0 is required. Get it with "Build Tools for Visual Studio": https://visualstudio.microsoft.com/downloads/',
             "NVIDIA/apex#938 (torch's 'Error checking compiler version for cl' before it: install Visual Studio's C++ tools first)"),
        ],
        not_examples=[
            # cl.exe ran and failed on the code: another verdict (extension-build-failed reads what it said)
            "error: command 'C:\\Program Files (x86)\\Microsoft Visual Studio\\2022\\BuildTools\\VC\\Tools\\MSVC\\14.33.31629\\bin\\HostX86\\x86\\cl.exe' failed with exit code 2",
            # torch's warning before a build that setuptools may still find MSVC for: not a failure alone
            "UserWarning: Error checking compiler version for cl: [WinError 2] The system cannot find the file specified",
            "/bin/sh: 1: nvcc: not found",
        ],
        fields=groups,
    ),
]

PATTERNS = [
    pattern(
        "autograd-invalid-gradient",
        "numerics",
        CAUSE,
        E,
        "a custom autograd Function's backward returned gradients that do not fit its inputs (their shape, or their number)",
        # torch/csrc/autograd/engine.cpp validate_outputs: every gradient a backward returns is checked against its input's metadata
        r"[Ff]unction (?P<function>\w+) returned an (?:invalid gradient at index (?P<index>\d+) - "
        r"(?:got \[(?P<got>[^\]]*)\] but expected shape compatible with \[(?P<expected>[^\]]*)\]|(?P<detail>expected .*))"
        r"|incorrect number of gradients \(expected (?P<expected_n>\d+), got (?P<got_n>\d+)\))",
        ("returned an invalid gradient", "returned an incorrect number of gradients"),
        why="""Autograd checks what every backward returns against the inputs of its forward: one gradient per input, each of
        that input's shape (or one that sums to it), dtype and device. Built-in operations always pass; this Function is a
        custom one (torch.autograd.Function, usually the Python side of a compiled CUDA extension), and what it returned does
        not fit. Its backward and
        the inputs it was called with disagree: the extension is of another version than the code calling it, or the inputs
        have shapes it does not handle. Gaussian splatting rasterizers (diff-gaussian-rasterization and its forks,
        _RasterizeGaussiansBackward) are most of these reports: a rasterizer of another fork than the renderer's, or a scene
        with no Gaussians left, whose empty gradient loses the SH dimension.""",
        fix="""STEP""",
        examples=[
            ("RuntimeError: Function _RasterizeGaussiansBackward returned an invalid gradient at index 2 - got [0, 0, 3] but expected shape compatible with [0, 16, 3]",
             "hbb1/2d-gaussian-splatting#165 (always at step 9100 on a custom dataset; graphdeco-inria/gaussian-splatting#482); VITA-Group/FSGS#59; cvlab-kaist/RAIN-GS#17"),
            ("RuntimeError: Function _RasterizeGaussiansBackward returned an invalid gradient at index 5 - got [231550, 2] but expected shape compatible with [231550, 3]",
             "hbb1/2d-gaussian-splatting#43 (the maintainer: 2DGS takes two scales, not three)"),
            ("RuntimeError: Function _RasterizeGaussiansBackward returned an invalid gradient at index 4 - got [4224, 256, 256] but expected shape compatible with [4224, 256]",
             "ShijieZhou-UCLA/feature-3dgs#30 (the rasterizer ported to another project)"),
            ("RuntimeError: function SignBackward returned an incorrect number of gradients (expected 2, got 1)",
             "1zb/pytorch-image-comp-rnn#4 (the fix: return grad_output, None); huawei-noah/AdderNet#21; evanmy/sae#5"),
        ],
        not_examples=[
            # the check of a tensor's own grad, not a backward's output (another verdict)
            "RuntimeError: Mismatch in shape: grad_output[0] has a shape of torch.Size([2]) and output[0] has a shape of torch.Size([])",
            "RuntimeError: grad can be implicitly created only for scalar outputs",
            # torch <= 1.4's check of the gradient passed to tensor.backward(gradient=...): the caller's, no Function's (ngxbac/GAIN#2)
            "RuntimeError: invalid gradient at index 0 - expected shape [] but got [10, 2]",
        ],
        fields=gradient_fields,
    ),
    pattern(
        "conv-input-channels-mismatch",
        "platform",
        CAUSE,
        E,
        "a convolution's input does not have the shape its weight takes: other conv input channels than the model's, or no batch dimension",
        # ATen's check of a convolution's input against its weight (torch 0.4 printed the weight's size without brackets)
        r"Given (?:groups|transposed)=\d+, weight of size \[?(?P<weight>[\d, ]+?)\]?, expected input\[(?P<input>[\d, ]+)\] "
        r"to have (?P<expected>\d+) channels, but got (?P<got>\d+) channels instead"
        r"|Expected (?P<weight_dims>\d+)-dimensional input for \d+-dimensional weight \[?[\d, ]+\]?, but got (?P<dims>\d+)-dimensional input",
        ("channels, but got", "-dimensional input for"),
        why="""A convolution's weight fixes how many channels its input has (weight [out, in/groups, k, k]) and that the input
        comes in batches ([N, C, H, W]). The input that reached it has other channels, or no batch dimension. The numbers in the
        message say which: one channel where three are expected is grayscale images into a model for RGB (four: RGBA images
        with an alpha channel); the expected count in the input's last dimension is a channels-last image (H, W, C, as PIL,
        OpenCV and NumPy give it); any other pair is the model's configured input channels (a config's input or label channel
        options, a mask channel or conditioning an inpainting or conditional model concatenates) against what the data has, or
        one layer's channels changed without its neighbour's. The training code is fine for the data it was written for.""",
        fix="STEP",
        examples=[
            ("`RuntimeError: Given groups=1, weight of size 64 13 3 3, expected input[1, 3, 256, 256] to have 13 channels, but got 3 channels instead`",
             "tamarott/ASAPNet#10 (a custom RGB-to-depth dataset; the model's label channels from its dataset options)"),
            ("`RuntimeError: Given groups=1, weight of size [256, 7, 3, 3], expected input[4, 6, 64, 64] to have 7 channels, but got 6 channels instead`",
             "CompVis/latent-diffusion#159 (the inpainting config: a 1-channel mask plus the image channels)"),
            ("RuntimeError: Given groups=1, weight of size [64, 3, 7, 7], expected input[1, 1, 224, 224] to have 3 channels, but got 1 channels instead",
             "pavancm/CONTRIQUE#19 (grayscale images in the dataset: replicate them over three channels); jacobgil/pytorch-grad-cam#141"),
            ("RuntimeError: Given groups=1, weight of size [64, 1, 7, 7], expected input[5, 64, 70, 70] to have 1 channels, but got 64 channels instead",
             "arnab39/cycleGAN-PyTorch#5 (one layer's input channels changed to 1 for grayscale)"),
        ],
        not_examples=[
            # a linear layer's shapes: the tensor-shape-mismatch class (another verdict)
            "RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x512 and 2048x10)",
            "RuntimeError: The size of tensor a (3) must match the size of tensor b (9) at non-singleton dimension 0",
        ],
        fields=conv_input_fields,
    ),
    pattern(
        "sdpa-no-available-kernel",
        "cuda",
        CAUSE,
        E,
        "scaled_dot_product_attention found no attention kernel it was allowed to use for these inputs (the code turned off the math fallback; flash attention does not take them)",
        # aten/src/ATen/native/transformers/cuda/sdp_utils: every enabled backend refused the inputs, and the math backend was disabled
        r"No available kernel\.\s+Aborting execution\.",
        ("No available kernel",),
        why="""torch.nn.functional.scaled_dot_product_attention picks one of its backends: flash attention, memory-efficient
        attention, or the plain math kernel, which takes anything. Code that asks for the fused kernels only (a project's
        flash=True or use_flash_attn option, a torch.backends.cuda.sdp_kernel / sdpa_kernel context with enable_math=False,
        or a model's own settings for the GPU) leaves no kernel when the inputs do not fit them: a GPU flash attention does not
        support (before Ampere: V100, T4, the GTX/RTX 20 series; torch's Windows builds have none), float32 inputs (flash takes
        fp16/bf16), an attention mask, or inputs that are not 4-D. The warnings just before it ("Flash attention kernel not
        used because: ...", "Memory efficient kernel not used because: ...") say which reason applied to each.""",
        fix="""let it fall back: turn the project's flash option off (flash=False, use_flash_attn=False) or keep the math kernel enabled
        (torch.backends.cuda.enable_math_sdp(True); with torch.nn.attention.sdpa_kernel list SDPBackend.MATH too); or give the fused
        kernels what they take: fp16/bf16 inputs (autocast), no attn_mask (is_causal=True), 4-D (batch, heads, length, dim) tensors,
        a GPU of compute capability 8.0 or newer for flash""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: No available kernel.  Aborting execution.",
             "lucidrains/MEGABYTE-pytorch#6 (the maintainer: set flash to False); facebookresearch/sam2#48 and #57 (relax the kernel settings "
             "to allow other kernels than Flash Attention); lucidrains/x-transformers#143 (V100s; use_flash_attn=False worked)"),
        ],
        not_examples=[
            # the warnings before it: which backend refused and why (a lead, not the failure)
            "UserWarning: Flash attention kernel not used because: (Triggered internally at ../aten/src/ATen/native/transformers/cuda/sdp_utils.cpp:661.)",
            "RuntimeError: no kernel image is available for execution on the device",  # kernels not built for this GPU: another verdict
        ],
    ),
    pattern(
        "tensorflow-gpu-not-visible",
        "platform",
        CAUSE,
        E,
        "TensorFlow (or Keras's multi_gpu_model) was asked for a GPU it has not registered: none, fewer than asked, or under other names",
        # Keras's multi_gpu_model check; TensorFlow 1's placer and TensorFlow 2's: each lists the devices it has
        r"To call `?multi_gpu_model`? with `?gpus=(?P<gpus>\d+)`?, we expect the following devices to be available: (?P<expected>\[[^\]]*\])\. "
        r"However this machine only has: (?P<available>\[[^\]]*\])"
        r"|Could not satisfy explicit device specification '(?P<spec>[^']*(?i:gpu):\d+[^']*)' because no devices matching that specification are "
        r"registered in this process; available devices: (?P<available2>.*)"
        r"|was explicitly assigned to (?P<spec2>/device:GPU:\d+) but available devices are \[(?P<available3>[^\]]*)\]",
        ("However this machine only has", "no devices matching that specification", "but available devices are"),
        why="""TensorFlow places operations on the devices it registered when it started: the CPU, and each GPU whose CUDA and
        cuDNN libraries it could load. Code that names a GPU (tf.device('/gpu:1'), Keras's multi_gpu_model(gpus=N), a
        tower per GPU) fails when that GPU is not among them. The devices the message lists decide why: no GPU at all is a
        TensorFlow without GPU support or one whose CUDA libraries did not load (XLA_GPU devices alone are that case), fewer
        GPUs than asked is a machine, a CUDA_VISIBLE_DEVICES or a job with fewer, and the same GPUs under other names is a
        Keras that reads device names of another TensorFlow release.""",
        fix="STEP",
        examples=[
            ("ValueError: To call `multi_gpu_model` with `gpus=2`, we expect the following devices to be available: ['/cpu:0', '/gpu:0', '/gpu:1']. However this machine only has: [u'/cpu:0']. Try reducing `gpus`.",
             "fizyr/keras-retinanet#436 (TensorFlow saw no GPU); deepfakes/faceswap#948 (two RTX 2080 Ti, cuDNN not found)"),
            ("ValueError: To call multi_gpu_model with gpus=2, we expect the following devices to be available: ['/cpu:0', '/gpu:0', '/gpu:1']. However this machine only has: ['/cpu:0', '/gpu:0']. Try reducing gpus.",
             "deepfakes/faceswap#150 (one GPU)"),
            ("To call `multi_gpu_model` with `gpus=4`, we expect the following devices to be available: ['/cpu:0', '/gpu:0', '/gpu:1', '/gpu:2', '/gpu:3']. However this machine only has: ['/device:CPU:0', '/device:GPU:0', '/device:GPU:1', '/device:GPU:2', '/device:GPU:3']. Try reducing `gpus`.",
             "keras-team/keras#8220 (TF 1.4's device names; fixed in Keras, #8213)"),
            ("tensorflow.python.framework.errors_impl.InvalidArgumentError: Cannot assign a device to node 'gradients/ff_1/add_grad/BroadcastGradientArgs': Could not satisfy explicit device specification '/device:GPU:0' because no devices matching that specification are registered in this process; available devices: /job:localhost/replica:0/task:0/cpu:0",
             "tensorflow/tensorflow#8093 (failed call to cuInit)"),
            ("tensorflow.python.framework.errors_impl.InvalidArgumentError: Cannot assign a device for operation gpu_0/model/resnet_backbone/res1_input_conv/L2Loss: {{node gpu_0/model/resnet_backbone/res1_input_conv/L2Loss}}was explicitly assigned to /device:GPU:0 but available devices are [ /job:localhost/replica:0/task:0/device:CPU:0, /job:localhost/replica:0/task:0/device:XLA_CPU:0, /job:localhost/replica:0/task:0/device:XLA_GPU:0, /job:localhost/replica:0/task:0/device:XLA_GPU:1 ]. Make sure the device specification refers to a valid device.",
             "LiyaoTang/contrastBoundary#16 (XLA_GPU only: the CUDA libraries of that TensorFlow were not loaded)"),
        ],
        not_examples=[
            # the GPU is registered; the operation has no GPU kernel (soft placement, another verdict)
            "InvalidArgumentError (see above for traceback): Cannot assign a device for operation 'InceptionV4/Logits/Predictions': Could not satisfy explicit device specification '/device:GPU:0' because no supported kernel for GPU devices is available.",
            "2018-04-25 13:29:00.631243: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1030] Found device 0 with properties:",
        ],
        fields=tf_devices_fields,
    ),
]
