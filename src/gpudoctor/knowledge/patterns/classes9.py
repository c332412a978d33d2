"""Rules for classes of messages found where the error line is in the log but the answer did not name
its cause and fix (issue 35 items 3 and 4, the ninth round): the readable parts' failed logs answered
generically, and the held-out judges' "partly" and "line-there" ones, sorted by the class of their
failing message.

- tensors of one operation on two GPUs in ONE process (every torch wording, the TH ops' "arguments are
  located on different GPUs" included): not a rank without its own GPU only, as the device-mismatch rule
  said, but most often a model split over the GPUs (device_map="auto") or nn.DataParallel's replicas. The
  line decides the mismatch (an error); the set-up that made it is read from the traceback's frames
  when they show it (knowledge/story.py's named_fix), else the fix names the three and how to tell them.

The rule's words are ddp-device-mismatch's (one concept, one finding id: patterns/ddp.py); its variants,
its set-ups and its steps live here. Its examples are real lines from the sampled threads; its
counter-examples the nearest lines that mean something else.
"""

import re
from typing import Iterable, Optional

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, groups, pattern

E = Severity.ERROR

# Two GPUs named by one device-mismatch line: "cuda:0 and cuda:7", "device 1 does not equal 0", the TH
# ops' "arguments are located on different GPUs" (torch <= 1.4), an autograd "expected device cuda:1 but got cuda:0".
GPU = re.compile(r"^(?:cuda:)?\d+$")
# the TH ops of torch <= 1.4: no devices named, two GPUs by its words; THCUNN's checkGPU assertion says it of "weight/gradient/input
# tensors" ("Assertion `THCTensor_(checkGPU)(state, 3, input, output, weight)' failed. Some of weight/gradient/input tensors are
# located on different GPUs. Please move them to a single one.", Alibaba-MIIL/ASL#50: DataParallel without a GPU per process)
OLD_TWO_GPUS = r"(?P<old_gpus>(?:arguments|tensors) are located on different GPUs)"

# How each set-up puts one process's tensors on two GPUs, and what to change (the fix's STEP).
SETUP_STEPS = {
    "split": (
        "a model split over the GPUs (device_map=\"auto\"/\"balanced\", a model's parallelize()): its hooks move "
        "each layer's inputs to that layer's GPU, and a tensor made or moved outside them (the inputs left on another "
        "GPU than model.device, an embedding or logits mixed by the model's own code, two models each placed "
        "automatically in one process) meets a layer on another GPU: move the inputs to the device of the layer "
        "that takes them (inputs to model.device, hidden states to lm_head.weight.device), give each model its own "
        "device_map/max_memory, or under torchrun load one whole model per process (device_map={'': local_rank}); "
        "model parallelism and DDP do not mix"
    ),
    "replicas": (
        "nn.DataParallel: it copies the model to every GPU and runs replica N on GPU N, so a tensor or module "
        "pinned to one GPU (.cuda(), device='cuda:0', a tensor kept as a plain attribute, not a registered buffer) "
        "is on GPU 0 while replica 1 runs on GPU 1: create such tensors on the input's device (x.device) or "
        "register them as buffers, or use DistributedDataParallel (torchrun, one process per GPU), which code "
        "written for one GPU runs unchanged (many projects do not support DataParallel)"
    ),
    "process": (
        "one process per GPU (torchrun, DDP, Ray Train): the process did not select its own GPU, so part of it "
        "stayed on cuda:0 (or on a GPU the code names): torch.cuda.set_device(local_rank) before building the "
        "model and move the data to that device (Ray Train: ray.train.torch.get_device() and prepare_model); code "
        "that names cuda:1 while the model defaults to cuda:0: keep cuda:0 in the code and pick the card with "
        "CUDA_VISIBLE_DEVICES=1"
    ),
}
# One GPU and the CPU (or another device type): a tensor not moved at all.
ONE_GPU_STEP = ("create tensors with device=x.device and assign the result of .to() (it is not in place); gpudoctor run names the module "
                "and the operands")
# Lua Torch7's cutorch says it after the Lua location of the call (DmitryUlyanov/texture_nets#83:
# "InstanceNormalization.lua:50: arguments are located on different GPUs"): none of torch's set-ups, its own step
LUA_LOCATION = re.compile(r"\.lua:\d+: $")
LUA_STEP = ("in Lua Torch7 (cutorch) a tensor stays on the GPU that was current when it was created or loaded, and an "
            "operation's tensors must all be on the current one: call cutorch.setDevice(n) before building or loading the model "
            "and its inputs, and move what was made under another device with :cuda() after it")
# The frames that show a set-up (paths as tracebacks print them, / or \).
SETUP_FRAMES = (
    ("replicas", re.compile(r"torch[/\\]nn[/\\]parallel[/\\](?:data_parallel|parallel_apply|replicate|scatter_gather)\.py$")),
    ("split", re.compile(r"accelerate[/\\](?:hooks|big_modeling)\.py$")),
    ("process", re.compile(r"torch[/\\]nn[/\\]parallel[/\\]distributed\.py$|ray[/\\]train[/\\]")),
)


def two_gpus(fields: dict) -> Optional[str]:
    """The two GPUs the line names ("cuda:0 and cuda:7"), "two GPUs" when it names none, None when one side is not a GPU."""
    # (torch < 1.10 checked that two CUDA tensors were on one GPU: its message names two GPUs even when a paste stops
    # before their numbers)
    if fields.get("old_gpus") or fields.get("old_same_gpu") and not fields.get("device_old_a"):
        return "two GPUs"
    for a, b in (("device_a", "device_b"), ("device_c", "device_d"), ("device_old_a", "device_old_b"), ("got", "expected"),
                 ("device_e", "device_f"), ("device_g", "device_h")):
        x, y = fields.get(a, ""), fields.get(b, "")
        if GPU.match(x) and GPU.match(y) and x.rsplit(":", 1)[-1] != y.rsplit(":", 1)[-1]:
            return f"GPU {x.rsplit(':', 1)[-1]} and GPU {y.rsplit(':', 1)[-1]}"
    return None


def device_names(m, context: list[str]) -> dict:
    """The line's devices, and what to change (the fix's STEP): for two GPUs the three set-ups that put one
    process's tensors on both (the traceback may pick one: `setup_of`), else the tensor left behind."""
    out = groups(m, context)
    gpus = two_gpus(out)
    out.pop("old_same_gpu", None)  # (which wording it was: not evidence)
    if out.get("old_gpus") and LUA_LOCATION.search(m.string[: m.start()]):
        return {**out, "gpus": gpus, "step": LUA_STEP}
    if gpus is None:
        return {**out, "step": ONE_GPU_STEP}
    steps = "; or ".join(f"({n}) {text}" for n, text in enumerate(SETUP_STEPS.values(), 1))
    step = (f"{gpus} met in one operation of one process: which set-up spread its tensors over two GPUs decides the fix: "
            f"{steps}. The traceback tells which: frames in accelerate's hooks (1), in torch/nn/parallel's data_parallel or "
            "parallel_apply (2), a rank's prefix or a DDP/Ray frame (3)")
    return {**out, "gpus": gpus, "step": step}


def setup_of(paths: Iterable[str], gpus: str, ranked: bool = False) -> dict:
    """The set-up the traceback's frames show, for a line that names two GPUs: which it is and its step alone
    (the fix's STEP); a line a rank printed ([rank1]:, a Ray worker's prefix) with no frame that says otherwise is
    one process per GPU; {} when nothing shows one (the fix keeps the three)."""
    paths = list(paths)
    shown = next((name for name, frame in SETUP_FRAMES if any(frame.search(p) for p in paths)), "process" if ranked else "")
    if not shown:
        return {}
    by = "the traceback's frames show" if any(frame.search(p) for _, frame in SETUP_FRAMES for p in paths) else "a rank printed it:"
    return {"setup": shown, "step": f"{gpus} met in one operation; {by} {SETUP_STEPS[shown]}"}


# Real lines of the class (the rule's examples are ddp-device-mismatch's; these are the two-GPU ones the sample holds).
EXAMPLES = [
    ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cuda:7! "
     "(when checking argument for argument mat2 in method wrapper_CUDA_mm)", "yuhuixu1993/qa-lora#17 (device_map='auto' over 8 GPUs, lm_head)"),
    ("RuntimeError: Expected tensor for argument #1 'input' to have the same device as tensor for argument #2 'weight'; "
     "but device 1 does not equal 0 (while checking arguments for cudnn_convolution)", "ms-dot-k/AVSR#5 (nn.DataParallel on code written for one GPU)"),
    ("**RuntimeError: arguments are located on different GPUs at /pytorch/aten/src/THC/generic/THCTensorMathCompareT.cu:31**",
     "switchablenorms/Sparse_SwitchNorm#3 (a tensor made on GPU 0 inside DataParallel's replicas)"),
    ("RuntimeError: Assertion `THCTensor_(checkGPU)(state, 3, input, output, weight)' failed. Some of weight/gradient/input tensors are "
     "located on different GPUs. Please move them to a single one. at /pytorch/aten/src/THCUNN/generic/SpatialDepthwiseConvolution.cu:19",
     "Alibaba-MIIL/ASL#50 (THCUNN's wording; the maintainer: the multi-GPU set-up is not initialised, one GPU per process)"),
    ("(torchaudio) stft input and window must be on the same device but got self on cuda:1 and window on cuda:0",
     "yeyupiaoling/VoiceprintRecognition-Pytorch#39 (multi-GPU training: the feature extractor's window left on GPU 0)"),
]


# -- an exception raised inside a ZeRO optimizer's own code ------------------------------------------------
# The frames of ZeRO's partitioning and optimizer code, by what they are (the first that fits names it).
ZERO_CODE = (
    (re.compile(r"deepspeed[/\\]runtime[/\\]zero[/\\]stage_1_and_2\.py$"), "DeepSpeed's ZeRO stage 1/2 optimizer", "deepspeed"),
    (re.compile(r"deepspeed[/\\]runtime[/\\]zero[/\\]"), "DeepSpeed's ZeRO stage 3 partitioning", "deepspeed"),
    (re.compile(r"deepspeed[/\\]runtime[/\\]bf16_optimizer\.py$"), "DeepSpeed's bf16 optimizer (ZeRO stage 0/1)", "deepspeed"),
    (re.compile(r"colossalai[/\\](?:zero|booster[/\\]plugin)[/\\].*(?:low_level|zero)"), "ColossalAI's ZeRO optimizer", "colossalai"),
)
# an exception's line, as the catch-all reads it
EXCEPTION_LINE = r"(?:^|[\s\"'(\[`])(?:[A-Za-z_]\w*\.)*(?P<exception>[A-Z]\w*(?:Error|Exception)): (?P<message>.+)"
# Exceptions that say something of their own wherever they are raised (the patterns and the other classes read them).
NOT_ZERO_INTERNAL = ("KeyboardInterrupt", "OutOfMemoryError", "MemoryError", "ModuleNotFoundError", "ImportError", "NotImplementedError", "DistBackendError")


# A message without frames that names ZeRO stage 3's own objects (the generator of its Init's all-gather, a
# parameter's partition status): git-cloner/llama2-lora-fine-tuning#9 pasted only that line.
ZERO3_OBJECTS = re.compile(r"\bInit\._convert_to_deepspeed_param\b|\bZeroParamStatus\b|\bds_status\b")


def zero_internal(sign, exception: str = "", message: str = "") -> dict:
    """The evidence of an exception raised in ZeRO's own code (its traceback's innermost frame is ZeRO's
    partitioning or optimizer, or, with no frame, its message names ZeRO stage 3's own objects), {} for any
    other: the exception, where and in what ZeRO raised it, and the package to pin or upgrade (the fix's STEP)."""
    if sign is not None and sign.kind == "exception" and not sign.cut:
        exception, message = sign.what, sign.message
    last = sign.raised_in() if sign is not None and sign.kind == "exception" and not sign.cut else None
    if not exception or exception.rsplit(".", 1)[-1] in NOT_ZERO_INTERNAL or "out of memory" in message.lower():
        return {}
    if last is None:
        found = ("DeepSpeed's ZeRO stage 3 partitioning", "deepspeed") if ZERO3_OBJECTS.search(message) else None
    else:
        path = last.path.replace("\\", "/")
        found = next(((what, package) for rx, what, package in ZERO_CODE if rx.search(path)), None)
    if found is None:
        return {}
    what, package = found
    function = last.func if last is not None and last.func else ""
    return {"exception": exception, "message": message[:200], "zero": what, "function": function or "?", "package": package,
            "step": (f"install the {package} version the training project pins, or upgrade it (`pip install -U {package}`): many of these "
                     f"are fixed upstream; search {package}'s issues for {function or 'the message'}" + (" with the message" if function else ""))}


PATTERNS_BY_FRAME = [
    pattern(
        "zero-optimizer-internal-error",
        "launcher",
        CAUSE,
        E,
        "ZeRO's own partitioning or optimizer code failed: its bookkeeping does not fit this model or set-up (or a bug of its version)",
        # the exception's line (python-exception claims it); the traceback's innermost frame, ZeRO's own code, decides it
        # (knowledge/story.py), so no line alone is this class and the unrecognised answer never names it from a message
        EXCEPTION_LINE,
        ("Error: ", "Exception: "),
        why="""The exception was raised inside the ZeRO optimizer's own code, not in yours: its bookkeeping of which
        parameters, gradients and partitions each rank holds (a partition index, a parameter id, the shape of a
        flattened buffer, the prefetch queue of stage 3) does not fit the model and the set-up it was given. Its
        message speaks of those internals, so it does not say what to change. What ZeRO is known not to handle: a model
        whose trainable parameters changed after the engine was built, or frozen ones handed to the optimizer (LoRA or
        QLoRA adapters, quantized 4/8-bit weights, a reference or reward model prepared a second time, a model prepared
        without an optimizer at stage 2); parameters of mixed dtypes in one group (an fp32 head in a bf16 model); ranks
        that run different code under stage 3 (generation, a branch taken on one rank, hooks added or removed), which
        breaks its prefetch trace; a feature the installed version does not combine with this stage (a sequence-parallel
        mode at stage 0, CPU offload at stage 1); and bugs of a release, fixed in a later one. What decides it: whether the
        same job runs at another stage (stage 2 (zero2) against stage 3 (zero3), offload off), and whether the installed
        version is the one the training project pins.""",
        # (WHERE: the innermost frame; STEP: the package to pin or upgrade; knowledge/story.py's named_fix)
        fix="""the error is ZeRO's own (the traceback's innermost frame: WHERE): run the same job at another ZeRO stage (2 instead of 3, or the
        reverse) or without offload to see whether this stage handles your set-up; give the optimizer only trainable
        parameters, in one dtype (filter on requires_grad, cast adapters and heads to the model's dtype), and prepare
        each model once; STEP""".replace("\n        ", " "),
        examples=[
            ("KeyError: 0", "cmnfriend/O-LoRA#3 (raised in get_first_param_index, deepspeed/runtime/zero/stage_1_and_2.py, at ZeRO 1/2 init with a quantized LoRA model)"),
            (
                "AssertionError: fp32 param and grad have different shape torch.Size([279245825]) vs torch.Size([1025])",
                "hpcaitech/ColossalAI#2834 (raised in colossalai/zero/sharded_optim/low_level_optim.py's step, LoRA under colossalai_zero2)",
            ),
            ("IndexError: pop from an empty deque", "huggingface/trl#1543 (raised in deepspeed/runtime/zero/partitioned_param_coordinator.py after the ZeRO-3 generation hooks were removed)"),
        ],
        # the same lines raised in the user's own code or in another library are not this class (the frame decides)
        not_examples=["KeyboardInterrupt", "UserWarning: the grad and param shapes differ; the optimizer state is rebuilt"],
        fields=groups,
        refines="python-exception",  # the traceback's innermost frame decides it (knowledge/story.py), never one line
    ),
]
