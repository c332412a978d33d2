"""Rules for classes of messages of the twelfth round (issue 35, diagB12): the honest "unrecognised" answers on the
retired held-out part heldout11 (its entries 58..113) whose failing line is a common message that a class rule can name.

- torch's runtime compiler (NVRTC: the TorchScript fuser, the jiterator, a library's JIT kernels) refusing the GPU
  architecture it was asked to compile for (`nvrtc: error: invalid value for --gpu-architecture (-arch)`): the NVRTC of
  the CUDA version torch was built with predates this GPU (an RTX 30xx, sm_86, before CUDA 11.1 or with torch 1.7.0; an
  RTX 40xx, sm_89, or an H100, sm_90, before CUDA 11.8).

(The other classes of the round widen existing rules: `AssertionError: Invalid device id` is read by
cuda-invalid-device-ordinal, torch < 1.10's "expected them to be on GPU" and a pasted head of its "Expected tensor for
argument #1 ... to have the same device" by ddp-device-mismatch; and a failure's line that holds no trigger word is read
in a short paste, knowledge/story.py `Diagnosis.is_failure_line`.)

Their examples are real lines from public threads (thread in the source); their counter-examples the nearest lines
that mean something else.
"""

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, pattern

E = Severity.ERROR

PATTERNS_EARLY = [
    pattern(
        "nvrtc-arch-unknown",
        "cuda",
        CAUSE,
        E,
        "torch's runtime CUDA compiler (NVRTC) does not know this GPU's architecture: the GPU is newer than the CUDA version torch was built with",
        r"nvrtc: error: invalid value for --gpu-architecture",
        ("invalid value for --gpu-architecture",),
        why="""Some kernels are compiled while the program runs, for the GPU it runs on: TorchScript's fuser (a
        scripted model or loss, torch.jit.script), torch's jiterator (reductions such as prod on new GPUs) and libraries'
        own JIT kernels call NVRTC, the runtime compiler of the CUDA version torch was built with, with this GPU's
        architecture. An NVRTC older than the GPU does not know that architecture and refuses it: an RTX 30xx or A-series
        Ampere card (sm_86) with a CUDA 11.0 or older build (and torch 1.7.0, whose fuser asked for sm_86 from CUDA 11.0:
        pytorch/pytorch#47658, fixed in 1.7.1), an RTX 40xx (sm_89) or an H100 (sm_90) with a build older than CUDA 11.8
        (torch 1.10+cu113, 1.12+cu116). The installed CUDA toolkit does not matter: NVRTC comes with torch's wheel
        (torch.version.cuda is the one used).""",
        fix="""python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0), torch.cuda.get_device_capability(0))"
        # an sm_89/sm_90 GPU needs a torch built with CUDA 11.8 or newer (pip install torch --index-url https://download.pytorch.org/whl/cu118,
        or the newest the project supports); an sm_86 GPU needs CUDA 11.1+ and torch 1.7.1+; a project pinned to an old torch: the
        newest torch it runs with that has such a build""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: nvrtc: error: invalid value for --gpu-architecture (-arch)",
             "pytorch/pytorch#47658 (RTX 3090, torch 1.7.0); Improbable-AI/walk-these-ways#72 (RTX 4090, torch 1.10+cu113: cu116/cu118 fixed it); "
             "sczhou/CodeFormer#167 (RTX 4090: CUDA >= 11.8)"),
            ("RuntimeError: nvrtc: error: invalid value for --gpu-architecture (-arch) nvrtc compilation failed:",
             "chengxuxin/expressive-humanoid#9 (torch 1.10+cu113, Isaac Gym); WisconsinAIVision/yolact_edge#107 (RTX 3090, torch 1.7)"),
        ],
        not_examples=[
            "nvcc fatal   : Unsupported gpu architecture 'compute_89'",  # the toolkit's compiler building an extension (a build, not NVRTC)
            "RuntimeError: CUDA error: no kernel image is available for execution on the device",
        ],
    ),
]

PATTERNS = [
    pattern(
        "torch-scalar-indexed",
        "platform",
        CAUSE,
        E,
        "code written for PyTorch 0.3 or older indexes a 0-dim tensor (loss.data[0]), which PyTorch 0.5 and later refuse: the message names its remedy, .item()",
        # the error (torch >= 0.5); torch 0.4's UserWarning of the same words ("This will be an error in PyTorch 0.5") is survived
        r"^(?!.*\bWarning\b).*?(?P<exception>IndexError): invalid index of a 0-dim tensor\. Use `?tensor\.item\(\)",
        ("invalid index of a 0-dim tensor",),
        why="""Before PyTorch 0.4 a loss or any reduced value was a tensor of one element, and code read its number with
        `loss.data[0]` or `loss[0]`. Since 0.4 such a value is a 0-dim tensor (a scalar), which has no index 0: 0.4 warned
        ("This will be an error in PyTorch 0.5") and every later release raises this IndexError. The code predates the
        installed torch; the traceback's last frame of the project is the line to change (often the first of several such
        lines, each reached in turn).""",
        fix="""at the line that raised it (WHERE), read the number with .item(): loss.data[0] -> loss.item() (and x[0] of a 0-dim x -> x.item());
        grep -rn "data\\[0\\]" . for the project's other such lines; or run the project under the torch version it was written for""".replace("\n        ", " "),
        examples=[
            ("IndexError: invalid index of a 0-dim tensor. Use tensor.item() to convert a 0-dim tensor to a Python number",
             "thangvubk/video-super-resolution#7 (running_loss += loss.data[0]; the maintainer: change it to loss.item())"),
            ("IndexError: invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a number",
             "torch >= 1.6's wording (aten/src/ATen/native/TensorShape.cpp), as quoted in many project threads"),
        ],
        not_examples=[
            # torch 0.4's warning for the same code: the run goes on (pytorch/pytorch#9453's healthy run shows it)
            "9453.py:118: UserWarning: invalid index of a 0-dim tensor. This will be an error in PyTorch 0.5. Use tensor.item() to convert a 0-dim tensor to a Python number",
        ],
    ),
]
