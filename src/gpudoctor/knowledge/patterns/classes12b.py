"""Rules for classes of messages of the twelfth round (issue 35, diagB12): the honest "unrecognised" answers on the
retired held-out part heldout11 (its entries 58..113) whose failing line is a common message that a class rule can name.

- torch's runtime compiler (NVRTC: the TorchScript fuser, the jiterator, a library's JIT kernels) refusing the GPU
  architecture it was asked to compile for (`nvrtc: error: invalid value for --gpu-architecture (-arch)`): the NVRTC of
  the CUDA version torch was built with predates this GPU (an RTX 30xx, sm_86, before CUDA 11.1 or with torch 1.7.0; an
  RTX 40xx, sm_89, or an H100, sm_90, before CUDA 11.8);
- a compiled extension's own assert, written with torch's macro (`... INTERNAL ASSERT FAILED at "<the extension's file>":N,
  please report a bug to PyTorch. <reason>`): the check and its reason are the extension's, not PyTorch's;
- code written for PyTorch 0.3 indexing a 0-dim tensor (`IndexError: invalid index of a 0-dim tensor. Use tensor.item()`).

(The other classes of the round widen existing rules: `AssertionError: Invalid device id` is read by
cuda-invalid-device-ordinal, torch < 1.10's "expected them to be on GPU" and a pasted head of its "Expected tensor for
argument #1 ... to have the same device" by ddp-device-mismatch; and a failure's line that holds no trigger word is read
in a short paste, knowledge/story.py `Diagnosis.is_failure_line`.)

Their examples are real lines from public threads (thread in the source); their counter-examples the nearest lines
that mean something else.
"""

import re

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.libraries import TORCH_SOURCE
from gpudoctor.knowledge.pattern import CAUSE, groups, pattern

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

def extension_check(m, context: list[str]) -> dict:
    """The failed check's condition (what follows the exception's class, not a sentence around it), the extension's
    file (its name) and line, the reason it gives after torch's footer, and the fix's STEP that names them."""
    out = groups(m, context)
    out["where"] = re.split(r"[/\\]", out["where"])[-1] + ":" + out.pop("line")
    condition = re.split(r"\b\w*(?:Error|Exception):(?: |$)", out.pop("condition", ""))[-1].strip(' "`')
    out["condition"] = condition or "none printed"
    out["reason"] = out.get("reason", "").strip().rstrip('".`') or "none given"
    out["step"] = f"read the check at {out['where']} in the extension's source (condition: {out['condition']}; its reason: {out['reason']})"
    return out


PATTERNS = [
    pattern(
        "extension-check-failed",
        "platform",
        CAUSE,
        E,
        "a compiled extension's own check failed (not PyTorch's, whatever its footer says): the op was given inputs it does not accept",
        # TORCH_INTERNAL_ASSERT / AT_ASSERTM in an extension's source: torch's footer, the extension's file. Whose file it is
        # is knowledge/libraries.py's decision (native_owner): a path of torch's own tree, wherever torch was built
        # (/pytorch/torch/lib/c10d/reducer.cpp, ../torch/csrc/..., conda-bld pytorch_<stamp>/work/c10/...), is PyTorch's own
        # assert (classes10d reads the allocator's); a bare file name does not decide (reducer.cpp is torch's, sampling.cpp
        # an extension's): neither is claimed here, and the unrecognised verdict shows the line
        r"(?P<condition>.*?) ?INTERNAL ASSERT FAILED at \"?(?P<where>(?!" + TORCH_SOURCE + r")(?=[^\"\s:]*[/\\])[^\"\s:]+)\"?:(?P<line>\d+), "
        r"please report a bug to PyTorch\.\s*(?P<reason>[^(]*)",
        ("INTERNAL ASSERT FAILED at",),
        why="""An extension's C++/CUDA source (an op a project or a library compiles against torch: point-cloud sampling,
        spline convolutions, a renderer's gather) checks its inputs with torch's own assert macro, which ends every message
        with "please report a bug to PyTorch" whoever wrote the check. The file the line names is the extension's, not
        torch's, so the check is the extension's and says what its op requires: the condition, and the reason after the
        footer (inputs on the CPU where the op runs on the GPU only, sizes that do not match what it was written for: a
        batch larger than one, a DataParallel replica given part of a batch, a tensor not contiguous), or an extension
        built for another torch than the one installed.""",
        fix="""STEP: give the op the inputs it
        accepts (on the GPU, contiguous, the batch size and shapes it was written for: try batch size 1 / one GPU to confirm),
        or rebuild/reinstall the extension for the installed torch; report it to the extension's project, not PyTorch's""".replace("\n        ", " "),
        examples=[
            ('RuntimeError: tgtidx.size(0) == 1 * nelems INTERNAL ASSERT FAILED at "generated/list_to_map_cuda.cpp":10, please report a bug to '
             'PyTorch. nelems of tgtidx does not match"',
             "isl-org/StableViewSynthesis#9 (the project's list_to_map op under DataParallel with a larger batch; one GPU, batch 1 works)"),
            ("RuntimeError: false INTERNAL ASSERT FAILED at pointnet2_ops/_ext-src/src/sampling.cpp:83, please report a bug to PyTorch. "
             "CPU not supported (furthest_point_sampling at pointnet2_ops/_ext-src/src/sampling.cpp:83)",
             "erikwijmans/Pointnet2_PyTorch#112 (the op runs on CUDA tensors only)"),
            ('RuntimeError: INTERNAL ASSERT FAILED at "/home/travis/build/rusty1s/pytorch_spline_conv/csrc/cuda/weighting_cuda.cu":47, please '
             "report a bug to PyTorch. Input mismatch",
             "pyg-team/pytorch_geometric#2795 (torch-spline-conv's weighting: sizes the op did not expect)"),
        ],
        not_examples=[
            # torch's own asserts: a PyTorch bug or a device mix-up inside torch (pytorch/pytorch#149822, #54415)
            'RuntimeError: t == DeviceType::CUDA INTERNAL ASSERT FAILED at "/pytorch/c10/cuda/impl/CUDAGuardImpl.h":28, please report a bug to PyTorch.',
            'RuntimeError: INTERNAL ASSERT FAILED at "/pytorch/aten/src/ATen/native/cuda/Reduce.cuh":896, please report a bug to PyTorch.',
            # c10d's DDP reducer, in torch's tree before 1.8 and after (ModelTC/MQBench#128: https://github.com/ModelTC/MQBench/issues/128;
            # the reducer's buckets vs a quantizer that re-wraps the parameters), and a wheel built by conda
            'RuntimeError: grad.numel() == bucket_view.numel() INTERNAL ASSERT FAILED at "/pytorch/torch/lib/c10d/reducer.cpp":343, please report a bug to PyTorch.',
            'RuntimeError: expected_autograd_hooks_ == 0 INTERNAL ASSERT FAILED at "../torch/csrc/distributed/c10d/reducer.cpp":1234, please report a bug to PyTorch.',
            'RuntimeError: false INTERNAL ASSERT FAILED at "/opt/conda/conda-bld/pytorch_1670525541990/work/aten/src/ATen/native/x.cpp":9, please report a bug to PyTorch.',
            # a bare file name: torch's or an extension's, the path does not say
            'RuntimeError: grad.numel() == bucket_view.numel() INTERNAL ASSERT FAILED at "reducer.cpp":343, please report a bug to PyTorch.',
        ],
        fields=extension_check,
    ),
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
