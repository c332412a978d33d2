"""Rules for classes of messages of the seventeenth round (issue 35, diagB17): classes that recur across the parts of the
corpus, each written from the parts before the newest one it occurs in and then measured on that one (a
leave-one-part-out count, in the round's report), so that a rule is one that transfers and not one keyed on a message.

- CUDA's own error, in the words a program wraps it in: torch's "CUDA error: X", old torch's (THC) "cuda runtime error
  (N) : X" and "THCudaCheck FAIL file=... line=... error=N : X", darknet's "CUDA Error: X" / "CUDA Error Prev: X",
  Caffe's "Check failed: error == cudaSuccess (N vs. 0)  X", the driver API's "CUDA driver error: X". X is one of the
  fixed messages of CUDA's table of errors (cudaGetErrorString), so it names the fault whatever the wrapper: the rule
  reads it by that table (knowledge/cuda_errors.py's rows marked `message_class`), for the messages no specific pattern
  claims (a launch without its configuration, an operation this GPU, driver or OS does not support, a handle used where
  it does not belong, a user-space driver that does not match the kernel module, ...) and for the specific ones where
  the paste broke or cut their words (a space a wrap put inside a word, a message cut at the line's end) or a wrapper
  the specific pattern does not read. Written from heldout7 (ComfyUI's "operation not supported"), heldout10 (Caffe's
  peer access), heldout8/12/14's THC lines; measured on heldout16 it decided darknet's "__global__ function call is not
  configured", and, once words broken by a wrap were read, the THC line whose "illegal" a paste split.
- a program's own probe that found no GPU, printed: torch.cuda.is_available() False, device_count() 0, a server's
  "Number of GPUs: 0", a program's "No GPU found" (dev3, heldout5, heldout16): this process has no GPU; the line does not
  say why (a CPU build of torch, the driver, a container or a scheduler that gave no GPU, a GPU not NVIDIA's), and the fix
  is the checks that decide it. A warning: a run meant for the CPU prints the same. Written from dev3 and heldout5, it
  read neither of heldout16's two cases (a program's "No GPU found", added after; a REPL's is_available() whose False is
  on the next line, not read: a line alone does not hold it).
  Widened in the thirty-first session (diagF31, issue 35's gpu-not-visible family): the same answer in the other
  probes' words (collect_env's "Is CUDA available: False", TensorFlow's "Num GPUs Available: 0", tf.test.is_gpu_available()
  False, list_physical_devices('GPU') [] and its list of every device closed after the CPU, JAX's [CpuDevice(id=0)],
  torch's "returned False"), a REPL's or a script's call alone on its line with the answer on the next (the line holds
  only with that answer: no_gpu_fields returns None without it), and the answers that decide the cause or its step: a
  torch built without CUDA (collect_env's "CUDA used to build PyTorch: None", torch.version.cuda None), TensorFlow's
  (TF 2.11 and later has no GPU on native Windows), JAX's (its CUDA plugin).
- not a rule: old torch's "THCudaCheck FAIL file=.../THCGeneral.cpp line=N error=11 : invalid argument", the line torch
  1.0 and 1.1 print and go on from (pytorch/pytorch#15797; heldout8's ignite#464), is why "invalid argument" is not in
  the message class: CUDA's catch-all for a refused argument names no fault (its raised form, "RuntimeError: cuda runtime error
  (11) : invalid argument at ...", is read as the exception it is). One part holds it: left, as the round's report says.

(The round's third class is no line: an nvidia-smi snapshot whose every GPU is idle and holds no job's memory,
checks/gpu_activity.py's `gpu-not-used`.)

Their examples are real lines from public threads (thread in the source); their counter-examples the nearest lines that
mean something else.
"""

from __future__ import annotations

import re
from typing import Optional

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.cuda_errors import FAULTS, Fault
from gpudoctor.knowledge.pattern import CAUSE, groups, pattern

E = Severity.ERROR
W = Severity.WARN

# the errors of CUDA's table (knowledge/cuda_errors.py) whose message this class reads; a row's `finding` is the pattern
# that claims the message when it is whole and in a wrapper it reads: this rule then sees only the forms that pattern
# misses (a broken or cut message, an old wrapper), and says the same fault
WORDED: tuple[Fault, ...] = tuple(f for f in FAULTS if f.message_class)

# A wrapper's words before CUDA's message, whatever the program: old torch's THC (its check's print and the
# RuntimeError it raised), darknet, Caffe's glog check, torch's CUDA error, the driver API's.
WRAPPER = (
    r"(?P<wrapper>THCudaCheck FAIL file=\S+ line=\d+ error=(?P<code>\d+) ?:"
    r"|cuda runtime error ?\((?P<code2>\d+)\) ?:"
    r"|Check failed: \w+ == cudaSuccess \((?P<code3>\d+) vs\. 0\)\s*:?"
    r"|CUDA [Ee]rror(?: Prev)?:"
    r"|CUDA driver error:)\s*"
)
SHORTEST_CUT = 12  # characters of a message a cut line must keep to be read as that message


def tolerant(text: str) -> str:
    """A regex for CUDA's words as a paste may have broken them: a space inside a word (a wrap joined back with one), runs of
    white space between words."""
    out = []
    for i, ch in enumerate(text):
        if ch == " ":
            out.append(r"\s+")
            continue
        out.append(re.escape(ch))
        if ch.isalpha() and i + 1 < len(text) and text[i + 1].isalpha():
            out.append(" ?")
    return "".join(out)


def message_regex(message: str) -> str:
    """The message whole, or cut at the line's end anywhere after its first SHORTEST_CUT characters (or 60 % of it)."""
    keep = max(SHORTEST_CUT, int(len(message) * 0.6))
    if keep >= len(message):
        return tolerant(message)
    rest = message[keep:]
    cut = "".join(r"(?:\s+" if ch == " " else f"(?:{re.escape(ch)}" for ch in rest) + ")?" * len(rest)
    return tolerant(message[:keep]) + "(?:" + tolerant(rest) + "|" + cut + r"\s*$)"


MESSAGES = "|".join(f"(?P<m{i}>{message_regex(f.message)})" for i, f in enumerate(WORDED))


def cuda_error_fields(m: re.Match, context: list[str]) -> dict:
    out = {k: v for k, v in groups(m, context).items() if not re.fullmatch(r"m\d+", k)}
    index = next(int(k[1:]) for k, v in m.groupdict().items() if re.fullmatch(r"m\d+", k) and v is not None)
    fault = WORDED[index]
    code = out.pop("code2", None) or out.pop("code3", None) or out.get("code")
    out.update(fault_fields(fault, code or ""))
    said = m.group(f"m{index}")
    if said.split() != fault.message.split():
        out["as_written"] = said.strip()  # the words as the paste has them (broken or cut)
    return out


def fault_fields(fault: Fault, code: str = "") -> dict:
    """What this class says of a fault of CUDA's table (knowledge/cuda_errors.py): its message, name, meaning, and the step
    that decides it (`step`, the fix), with the number the line gave (`code`) where it gave one."""
    also = f" (the fault gpudoctor's {fault.finding} page explains)" if fault.finding else ""
    out = {"message": fault.message, "error": fault.name, "meaning": fault.meaning,
           "step": f"CUDA's {fault.name}{' (' + code + ')' if code else ''}: {fault.meaning}{also}: {fault.step}"}
    if code:
        out["code"] = code
    return out


PATTERNS_EARLY = [
    pattern(
        "cuda-runtime-error",
        "cuda",
        CAUSE,
        E,
        "CUDA returned an error, named by CUDA's own message in the program's words",
        # after every cuda pattern: a whole message in a wrapper that a specific pattern reads is that pattern's; a line that
        # reports it as a warning it survived (retried, ignored, fell back) does not decide the run failed
        r"^(?!.*(?i:\bwarn(?:ing)?\b|\bignor(?:e|ed|ing)\b|\bfalling back\b|\bretry(?:ing)?\b)).*?" + WRAPPER + r"(?:" + MESSAGES + r")",
        ("THCudaCheck FAIL", "cuda runtime error", "== cudaSuccess (", "CUDA Error", "CUDA error", "CUDA driver error"),
        why="""A CUDA call returned an error status and the program printed it in its own words: torch's "CUDA error:", old
        torch's "THCudaCheck FAIL ... error=N :" and "cuda runtime error (N) :", darknet's "CUDA Error:", Caffe's "Check failed:
        error == cudaSuccess (N vs. 0)". The words after them are CUDA's, from its fixed table of errors, so they name the
        fault whatever program printed them (the fix says what this one means). CUDA reports a kernel's fault at a later call
        that checks the device, so the line is often not where the fault happened: a run with launches made synchronous
        (CUDA_LAUNCH_BLOCKING=1) raises it at the call that failed.""",
        fix="STEP",
        examples=[
            ("CUDA error: operation not supported CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
             "https://github.com/Comfy-Org/ComfyUI/issues/4578; ComfyUI#940, #1150, #1845 (cudaMallocAsync on the GPU: --disable-cuda-malloc fixed it)"),
            ("RuntimeError: CUDA error: operation not supported", "lllyasviel/Fooocus#96 (its cuda_malloc, removed in a later release)"),
            ("F0314 10:13:03.513468  4816 p2p_sync.cpp:241] Check failed: error == cudaSuccess (51 vs. 0)  peer access has not been enabled",
             "https://github.com/BVLC/caffe/pull/2114 (a multi-GPU Caffe over more than 4 cards)"),
            ("Check failed: error == cudaSuccess (803 vs. 0)  system has unsupported display driver / cuda driver combination",
             "eric612/MobileNet-YOLO#266 (a 2080 Ti under nvidia-docker, nvidia-smi working)"),
            ("CUDA: Check failed: e == cudaSuccess (803 vs. 0) : system has unsupported display driver / cuda driver combination",
             "NVIDIA/nvidia-docker#1256"),
            # heldout16's, added after the rule was measured on it (the darknet line was decided without it)
            ("CUDA Error: __global__ function call is not configured",
             "https://github.com/pjreddie/darknet/pull/25 (the grayscale change trained on the GPU; then darknet: ./src/cuda.c:35: check_error: Assertion `0' failed)"),
            ("THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch_1513363039688/work/torch/lib/THC/generic/THCTensorCopy.c line=70 error=77 : an ill egal memory access was encountered",
             "https://github.com/svishwa/crowdcount-cascaded-mtl/issues/7 (torch 0.3; the paste's wrap put a space inside 'illegal')"),
        ],
        not_examples=[
            "RuntimeError: CUDA error: an illegal memory access was encountered",  # whole, in torch's words: cuda-illegal-memory-access
            "CUDA Error: out of memory",  # darknet's words for an OOM, whole: cuda-oom
            "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=405 error=11 : invalid argument",  # printed, and the run went on
            "RuntimeError: CUDA error: invalid argument",  # CUDA's catch-all for a refused argument: not this table's
            "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.",
            "[W] CUDA error: operation not supported by the async allocator, falling back to cudaMalloc",  # survived
        ],
        fields=cuda_error_fields,
    ),
]

# ROCm's runtime that found no GPU agent: what decides it on an AMD machine (its step, before the CUDA checks of the fix)
ROCM_STEP = ("ROCm's runtime found no GPU agent: rocminfo (Windows: hipInfo.exe from the HIP SDK) lists the GPUs it sees; none: the "
             "AMD driver or the ROCm/HIP SDK is not installed for this GPU, or the GPU is not one its ROCm release supports "
             "(HSA_OVERRIDE_GFX_VERSION=<the nearest supported gfx target> on Linux; ZLUDA's and the HIP SDK's list of cards on Windows)")


# the verbs a person or a script puts between a probe and its answer: "is_available() returned False"
ANSWERED = r"returns?|returned|returning|gives|gave|is|prints?|printed|shows?"
# what the answer itself decides, or the check that does, by the probe that answered (its step, before the fix's checks)
CPU_BUILD_STEP = ("this torch is built without CUDA (a CPU wheel: pip's default on Windows and macOS, or the CPU index), so it "
                  "sees no GPU whatever the driver: pip install --force-reinstall torch --index-url "
                  "https://download.pytorch.org/whl/cu126 (the index for the driver's 'CUDA Version' in nvidia-smi; "
                  "a ROCm build also has torch.version.cuda None: its torch.version.hip names its HIP)")
TF_STEP = ("TensorFlow sees no GPU: on native Windows, TensorFlow 2.11 and later has no GPU (WSL2, or tensorflow<2.11 with "
           "CUDA 11.2/cuDNN 8.1); on Linux pip install \"tensorflow[and-cuda]\" and python -c \"import tensorflow as tf; "
           "print(tf.sysconfig.get_build_info())\" names the CUDA and cuDNN it needs; its log at start "
           "(TF_CPP_MIN_LOG_LEVEL=0) says which library it could not load; a device plugin's GPU (DirectML's DML, Apple's Metal) is listed "
           "only when the plugin loads, and only for the TensorFlow release it was built for)")
JAX_STEP = ("JAX lists the CPU alone: its jaxlib has no CUDA plugin (pip install -U \"jax[cuda12]\" on Linux; JAX has no "
            "GPU build for native Windows: WSL2), or the plugin found no GPU (JAX_PLATFORMS=cuda makes it say why)")


# a script's print of its GPU probe, a line of code whose answer is the line after it (story.py reads it, where it skips
# other code lines): "print(torch.cuda.is_available())", "print(tf.config.list_physical_devices('GPU'))"
PRINTED_PROBE = re.compile(
    r"^print\(\s*(?:(?:torch\.)?cuda\.(?:is_available|device_count)\(\)|(?:tf\.)?test\.is_gpu_available\(\)"
    r"|(?:tf\.)?config\.(?:experimental\.)?list_physical_devices\(['\"]GPU['\"]\))\s*\)\s*$"
)
# the answer a REPL or a script printed on the line after the call: False (is_available), 0 (device_count), [] (TF's list)
ANSWER_NEXT = re.compile(r"^\s*(?:Out\[\d+\]:\s*)?(False|0|\[\])\s*$")
ANSWER_OF = {"is_available": "False", "device_count": "0", "is_gpu_available": "False", "list_physical_devices": "[]"}


def no_gpu_fields(m, context: list[str]) -> Optional[dict]:
    out = groups(m, context)
    asked = out.pop("asked", None)
    out.pop("count", None)
    if out.pop("listed", None):
        # TensorFlow's devices one a line, the CPU first: only the CPU where no device follows it
        if "PhysicalDevice(" in next((line for line in context if line.strip()), ""):
            return None
        out.update(step=TF_STEP, read_as="program-found-no-gpu")
    if asked is not None:
        # the call alone: the line holds only with its answer, the first line after it that is not blank
        said = next((line for line in context if line.strip()), "")
        answer = ANSWER_NEXT.match(said)
        wanted = next(v for k, v in ANSWER_OF.items() if k in asked)
        if answer is None or answer.group(1) != wanted:
            return None
        out["answer"] = said.strip()
        if "physical_devices" in asked or "gpu_available" in asked:
            out.update(step=TF_STEP, read_as="program-found-no-gpu")
    if out.pop("rocm", None):
        out.update(step=ROCM_STEP, read_as="program-found-no-gpu")
    for group, step in (("cpubuild", CPU_BUILD_STEP), ("tf", TF_STEP), ("jax", JAX_STEP)):
        if out.pop(group, None):
            out.update(step=step, read_as="program-found-no-gpu")
    return out


PATTERNS = [
    pattern(
        "program-found-no-gpu",
        "cuda",
        CAUSE,
        W,
        "the program found no GPU: CUDA is not available to this process (it runs on the CPU, or stops where it needs CUDA)",
        # a program's own probe, printed: torch's is_available()/device_count() (the user's print or the program's), a
        # server's GPU count at start-up. After cuda.py's and capability.py's rules, which claim the messages that quote it
        # (checkpoint-device-map's "... but torch.cuda.is_available() is False", accelerate's fp16 refusal)
        # (never a thread's title or a comment: "# torch.cuda.is_available()=False" is the reporter's words)
        r"^(?!#\s)(?!.*\bif\b)(?:.*\W)?(?:torch\.)?cuda\.is_available\(\)\)?['\"]?\s*(?:[:=]|->|" + ANSWERED + r")?\s*False\b"
        r"|^(?!#\s)(?!.*\bif\b)(?:.*\W)?(?:torch\.)?cuda\.device_count\(\)\)?['\"]?\s*(?:[:=]|->|" + ANSWERED + r")?\s*0\b(?![.\d])"
        r"|\bNumber of GPUs: 0\s*$"
        # the same answer in the other probes' words (issue 35, diagF31): an environment report's line (torch's collect_env
        # "Is CUDA available: False" / "No", a script's "CUDA Available: False", "PyTorch detects CUDA available:  False"),
        # TensorFlow's guide's "Num GPUs Available:  0", its tf.test.is_gpu_available() False and its
        # list_physical_devices('GPU') answered [], JAX's jax.devices() that lists the CPU alone; and the answers that name
        # the cause (a torch built without CUDA: collect_env's "CUDA used to build PyTorch: None", torch.version.cuda None)
        r"|^(?!#\s)[\w #()/.-]{0,40}?\bCUDA (?:is )?[Aa]vailable\s*[:=?]?\s*(?:False|No)\s*$"
        r"|^(?!#\s)(?!.*\bif\b)(?:.*\W)?(?P<tf>\bNum GPUs Available:?\s*0\s*$|is_gpu_available\(\)\)?['\"]?\s*(?:[:=]|->|" + ANSWERED + r")?\s*False\b"
        r"|list_physical_devices\((?:device_type=)?['\"]GPU['\"]\)\)?\s*(?:[:=]|->|==|" + ANSWERED + r")?\s*\[\]"
        # its list of every device that closes after the CPU (a list that goes on to a GPU ends its line with a comma)
        r"|\[PhysicalDevice\(name='/physical_device:CPU:0', device_type='CPU'\)\])"
        # the same list printed one device a line (a loop's print): the CPU's line with no device after it (no_gpu_fields)
        r"|^\s*(?P<listed>PhysicalDevice\(name='/physical_device:CPU:0', device_type='CPU'\))\s*$"
        r"|(?:^|[\s>(:=,])(?P<jax>\[CpuDevice\(id=0\)\])"
        # a REPL's or a script's call alone on its line, its answer on the next (no_gpu_fields reads it there): ">>>
        # torch.cuda.is_available()" then "False", "print(torch.cuda.device_count())" then "0", "In [2]:
        # tf.config.list_physical_devices('GPU')" then "Out[2]: []"
        r"|^\s*(?:>>>\s*|In \[\d+\]:\s*|.*?\bpython3?(?:\.exe)?\s+-c\s+['\"](?:import \w+(?: as \w+)?;\s*)+(?=print\())?(?:print\(\s*)?(?P<asked>(?:torch\.)?cuda\.(?P<count>device_count|is_available)\(\)"
        r"|(?:tf\.)?test\.is_gpu_available\(\)|(?:tf\.)?config\.(?:experimental\.)?list_physical_devices\(['\"]GPU['\"]\))\)?['\"]?\s*$"
        r"|^(?!#\s).*?(?P<cpubuild>\bCUDA used to build PyTorch: None\s*$|^PyTorch version: \d+\.\d+(?:\.\d+)?\+cpu\s*$|\bPyTorch built with CUDA:\s*False\s*$"
        r"|^(?!.*\bif\b).*\btorch\.version\.cuda\)?['\"]?\s*(?:[:=]|->|" + ANSWERED + r")?\s*None\b)"
        # a program's own warning that it looked and found none (heldout16's wording, added after the part was measured)
        # (as a sentence starts it, or in capitals: RVC's "NO GPU DETECTED: falling back to CPU"; never mid-sentence, Paddle's "but
        # there is no GPU detected on your machine" in a thread that discusses the message, heldout27b paddle-30953)
        r"|(?:^|[\s:\]])(?:No GPUs? (?:found|detected)|NO GPUS? (?:FOUND|DETECTED))\b(?!.*\bto monitor)"
        # the GPU asked for and none there, in the program's words or torch's (issue 35, heldout27b's no-error-line rows):
        # autocast's "User provided device_type of 'cuda', but CUDA is not available. Disabling", tortoise's "You set
        # cuda=True but no cuda device found."; and ROCm's runtime that found no GPU agent (SD.Next: "ROCm: no agent was found")
        r"|\b(?:device_type of '?cuda'?|cuda\s*=\s*True),? but (?:CUDA is not available|no (?:cuda|CUDA|GPU|gpu) devices? (?:was |were )?found)"
        r"|\b(?P<rocm>ROCm): no agent was found",
        ("is_available()", "device_count()", "Number of GPUs: 0", "CUDA available", "CUDA Available", "CUDA is available", "Num GPUs Available",
         "is_gpu_available()", "list_physical_devices(", "[CpuDevice(id=0)]", "device_type='CPU')", "CUDA used to build PyTorch: None", "PyTorch built with CUDA", "+cpu",
         "version.cuda", "No GPU found", "No GPU detected", "No GPUs found", "No GPUs detected",
         "NO GPU FOUND", "NO GPU DETECTED", "NO GPUS FOUND", "NO GPUS DETECTED", "but CUDA is not available", "but no cuda device", "but no CUDA device", "ROCm: no agent was found"),
        why="""The program asked for the GPUs and got none: torch.cuda.is_available() is False (device_count() 0), or the
        program's own count of GPUs at start-up is 0. The usual reasons: torch built without CUDA (a CPU wheel: its
        torch.version.cuda is None); no NVIDIA driver, or one older than the CUDA this torch was built for; a container or
        a scheduler that gave the job no GPU (docker run without --gpus, a compose service without a GPU reservation, a
        Kubernetes pod without an nvidia.com/gpu limit, a task runner's CUDA_VISIBLE_DEVICES left empty); or a GPU that is
        not NVIDIA's (ROCm needs its own torch, and a program that counts GPUs with nvidia-smi finds none). The line decides
        that this process has no GPU, not which of these: the checks in the fix do. The same answer in any probe's words
        reads the same (an environment report's "Is CUDA available: False", TensorFlow's "Num GPUs Available: 0" and its
        device list that holds the CPU alone, JAX's [CpuDevice(id=0)], a REPL's call with False on the next line); where the
        answer names its cause (a torch built without CUDA: "CUDA used to build PyTorch: None"), or the probe is
        TensorFlow's or JAX's (whose GPU builds are their own), the fix starts with that step. A warning: it says what the
        process saw, and a run meant for the CPU prints the same.""",
        fix="""in the job's own environment (the container, the task, the notebook): nvidia-smi   # no GPU or an error: the driver,
        or the container/scheduler did not give the GPU (docker run --gpus all, a GPU reservation in compose, a GPU limit in
        the pod); then python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())"   #
        version.cuda None: install a CUDA build of torch (pip install torch --index-url https://download.pytorch.org/whl/cu121,
        matching the driver's 'CUDA Version'); a CUDA version newer than nvidia-smi's: a torch for an older CUDA or a newer
        driver; and echo $CUDA_VISIBLE_DEVICES (empty hides every GPU)""".replace("\n        ", " "),
        examples=[
            ("(task, pid=201122) torch.cuda.is_available(): False", "https://github.com/skypilot-org/skypilot/issues/2510 (inside the task; the same code on the instance saw the GPU)"),
            ("(task, pid=201122) torch.cuda.device_count(): 0", "skypilot-org/skypilot#2510"),
            ("Number of GPUs: 0", "https://github.com/pytorch/serve/issues/403 (TorchServe counts GPUs with nvidia-smi: a ROCm machine's GPU is not counted)"),
            ("WARNING:root:No GPU found. Conversion on CPU is very slow.",
             "https://github.com/binary-husky/gpt_academic/issues/1717 (nougat in a docker-compose service that reserved no GPU)"),
            ("C:\\Python310\\lib\\site-packages\\torch\\amp\\autocast_mode.py:202: UserWarning: User provided device_type of 'cuda', but CUDA is not available. Disabling",
             "152334H/tortoise-tts-fast#9 (heldout27b: an RTX 3080, a torch that saw no CUDA: generation ran on the CPU)"),
            ("NO GPU DETECTED: falling back to CPU - this may take a while", "RVC-Project/Retrieval-based-Voice-Conversion-WebUI#2067 (heldout27b)"),
            ("13:25:40-858962 WARNING  ROCm: no agent was found", "vladmandic/sdnext#4101 (heldout27b: ZLUDA on an AMD Windows host, no GPU agent)"),
            # the other probes' answers (issue 35, diagF31)
            ("Warning: torch.cuda.is_available() returned False.", "https://github.com/oobabooga/textgen/issues/791 (its collect_env then showed 2.0.0+cpu on an RTX 3080)"),
            ("Is CUDA available: No", "https://github.com/pytorch/pytorch/issues/46868 (collect_env of torch 1.6, a 2080 Ti, driver 455)"),
            ("PyTorch detects CUDA available:  False", "https://github.com/mila-iqia/mila-docs/issues/213 (a cluster job's check script)"),
            ("PyTorch built with CUDA:         False", "mila-iqia/mila-docs#213 (the same script: a CPU build in the job's environment)"),
            ("Num GPUs Available:  0", "https://github.com/frankkramer-lab/MIScnn/issues/32 (TensorFlow's guide's print; then set_memory_growth's IndexError)"),
            ("[PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]", "https://github.com/tensorflow/tensorflow/issues/85006 (TF 2.18 on native Windows 11, an RTX 4080)"),
            ("PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')",
             "https://github.com/microsoft/tensorflow-directml-plugin/issues/320 (heldout30b: a loop's print of every device, the CPU alone; the DirectML plugin's DML device was not listed)"),
        ],
        not_examples=[
            "torch.cuda.is_available(): True",
            "    if not torch.cuda.is_available():",  # the code that asks, not the answer
            "    assert torch.cuda.is_available() == False",
            "RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map your storages to the CPU.",
            "Number of GPUs: 8",
            "torch.cuda.device_count(): 0.5",
            "No GPU to monitor.",  # nvtop's: gpu-monitor-no-gpu
            "RuntimeError: No CUDA GPUs are available",  # torch's error: cuda-no-gpus-visible
            "GPU detected: NVIDIA GeForce RTX 3080",
            "> WARNING:root:You are using GPU version PaddlePaddle, but there is no GPU detected on your machine. Maybe CUDA devices is not set properly.",
            "User provided device_type of 'cuda', and CUDA is available",
            "RuntimeError: Error: You set cuda=True but no cuda device found.",  # an error: program-found-no-device
            "Is CUDA available: True",
            "Num GPUs Available:  1",
            "[PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU'),",  # the list goes on to its GPU
            "[CudaDevice(id=0), CudaDevice(id=1)]",
            "torch.backends.mps.is_available(): False",  # another question (Apple's GPU), asked on Linux
            "torch.cuda.is_bf16_supported(): False",
            "CUDA used to build PyTorch: 12.1",
            "print(\"Num GPUs Available: \", len(tf.config.list_physical_devices('GPU')))",  # the code that asks
        ],
        fields=no_gpu_fields,
        context_after=2,
    ),
]
