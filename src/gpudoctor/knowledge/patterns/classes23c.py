"""Classes of the twenty-third round (issue 35, diagC23): an exception a library raised, who called it, what it says and
what to do; and out-of-memory in the words of frameworks other than PyTorch.

- `library-refused-value`: the traceback's innermost frame is a library's and its exception is one whose raising means
  "what I was given is not what I take": Python's ValueError and TypeError, TensorFlow's InvalidArgumentError, a library's
  own config or validation error (an assert that states its condition is assertion-states-condition's, named already). The cause is the library's message, as it states it,
  raised in that library (its name and frame) and called from the user's line (the last frame that is not a library's),
  or, with no frame of the user's, from what the program that was started read (its console script or its package: an
  application framework between them, traitlets or Hydra, only passed the value on); the fix points at that call and
  quotes the message's own remedy where it gives one. Decided by the frames
  (knowledge/story.py `by_frame`), never by a line: the same line raised in the user's own frame is the user's exception
  (python-exception), and a message of a known class keeps its class (message_class: an API's shape, Python's own type
  errors, an environment's words). A message about the environment (a device, CUDA, a version) is not a value to correct at
  the call, and is left to the answers that read those; a frame that only raises again what it caught (`raise output`,
  `.reraise()`: DataParallel's replicas, a worker's relay) is not where the check was.
- `framework-oom`: TensorFlow's "OOM when allocating tensor" (its exception and its op's own line before it; on the host when
  the line names device:CPU), JAX's and XLA's "RESOURCE_EXHAUSTED: Out of memory while trying to allocate N bytes",
  PaddlePaddle's "Out of memory error on GPU N. Cannot allocate ...": each with that framework's own remedy (PyTorch's is
  cuda-oom's, MXNet's and Caffe's CUDA checks are cuda-oom's too, the host's OOM killer host-oom-killer's). TensorFlow's
  allocator notes "ran out of memory trying to allocate ... not a failure" are not one.

Written from the development parts' failed logs answered "unrecognised" with a library's frame (heldout17w flappy-bird,
heldout21w TOF eval, heldout6 bevdet-77, heldout8 opennmt-py-34, heldout19w pixel_link) and the
frameworks' own messages in public threads (named beside the examples); heldout22w not read while writing (the transfer
measurement). After that measurement the started program replaced the innermost other package as the named source when no
frame of the user's shows (one heldout22w answer named traitlets, nbconvert's application framework).
"""

from __future__ import annotations

import re
from typing import Optional

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.libraries import package_of, project_of
from gpudoctor.knowledge.operand_types import without_operand_message
from gpudoctor.knowledge.pattern import CAUSE, NOT_HEADING, groups, pattern
from gpudoctor.knowledge.signature import search_url
from gpudoctor.knowledge.signs import ENVIRONMENT_WORDS, Frame, Sign

E = Severity.ERROR

REFUSED_VALUE = "library-refused-value"
COMPILED = "a compiled extension"  # (knowledge/libraries.py package_of: a Cython frame its path does not name)
FRAMEWORK_OOM = "framework-oom"
# the findings whose title carries what the evidence names (knowledge/story.py)
DETAIL_SAID = (REFUSED_VALUE, FRAMEWORK_OOM)

# The classes whose raising says "the value, the type or the setting I was given is not one I take".
REFUSAL = re.compile(r"^(?:[A-Za-z_]\w*\.)*(?P<cls>ValueError|TypeError|InvalidArgumentError|\w*(?:Config|Configuration|Validation)Error)$")
# A frame that raises again what it caught (the exception held in a variable, a relay's reraise): the check was elsewhere.
RERAISE = re.compile(r"^raise(?:\s+[a-z_][\w.]*)?\s*$|\breraise\(|\.with_traceback\(")
# Where a paste ran the next traceback into the message's line: the message ends there.
RUN_ON = re.compile(r"During handling of the above exception|The above exception was the direct cause|Traceback \(most recent call last\)")
# TensorFlow's wrapper of the errors its graph raised: they are on the lines after it, and say what was refused.
WRAPPER = re.compile(r"^\d+ root error\(s\) found")
# Fewer characters than this say nothing of what was refused (a message the paste cut: "Could not find").
SHORTEST = 16


def message_of(sign: Sign) -> str:
    """The exception's message on one line, without a traceback the paste ran into it."""
    said = " ".join(sign.message.split())
    m = RUN_ON.search(said)
    return said[: m.start()].strip() if m else said


def entry_of(sign: Sign, package: str) -> str:
    """The program that was started, as the traceback's outermost frame that is not Python's own shows it: a package's
    console script by its name (jupyter-nbconvert), else that frame's package; the raising package when none shows. An
    application framework between it and the raiser (traitlets, Hydra, click) only passed the value on."""
    for f in sign.frames:
        owner = package_of(f.path) if not f.cut else None
        if f.cut or owner == "python":
            continue
        if owner is None and f.console_script():
            return re.split(r"[/\\]", f.path)[-1]
        return owner or package
    return package


def passed_through(sign: Sign, caller: Frame, package: str) -> str:
    """The package whose frames stand between the user's call and the raising package (the one the user called, which
    called the raiser), or '' when the user's call went straight into the raiser (or Python's own frames only). A
    compiled frame is named by its function's module ("spacy.syntax.nn_parser.Parser.add_label": spacy)."""
    frames = sign.frames
    at = next((i for i in range(len(frames) - 1, -1, -1) if frames[i] is caller), None)
    if at is None:
        return ""
    for f in frames[at + 1:]:
        if f.cut:
            return ""
        owner = package_of(f.path)
        if owner == COMPILED and "." in f.func:
            owner = f.func.split(".", 1)[0]
        if owner is None or owner == "python" or owner == COMPILED:
            continue
        return owner if owner != package else ""
    return ""


def refused_value(sign: Optional[Sign], exception: str = "", message: str = "") -> dict:
    """The evidence of a library's own check refusing what it was given ({} for any other exception or frame): the class,
    the message, the library and its frame, the call that gave it the value, the message's own remedy."""
    if sign is None or sign.kind != "exception" or sign.cut or sign.relay is not None or sign.relaying is not None:
        return {}
    m = REFUSAL.match(sign.what)
    last = sign.raised_in()
    if m is None or last is None or last.cut or last.user() or RERAISE.search(last.code):
        return {}
    package = package_of(last.path)
    if package is None or package == "python":
        return {}
    said = message_of(sign)
    if len(said) < SHORTEST or WRAPPER.match(said) or ENVIRONMENT_WORDS.search(without_operand_message(said)):
        return {}
    caller = sign.user_frame()
    where = f"{m['cls']} in {package} ({last.short()})"
    between = passed_through(sign, caller, package) if caller is not None else ""
    if caller is not None and between:
        # the user's call went into another package, which called the raiser: the refused value may be the user's, passed
        # on, or one that package made (spaCy's Parser.add_label filling a cupy array on the GPU, explosion/spaCy#3112: a
        # bug of spaCy's with cupy, the user's label a plain string): not decided by the frames (issue 35, diagB30)
        where += f", called by {between} from your code at {caller.short()}"
        call = f"the call at {caller.path}:{caller.line}" + (f" (`{caller.code}`)" if caller.code else "")
        step = (f"{call} goes into {between}, and {between} gave {package} what its check refused: compare the value the message "
                f"names with what you passed at that call; if it is yours, change it there; if {between} made it (a type or a "
                f"shape you never passed), it is {between}'s with this {package}: the versions of the two that go together "
                f"(`pip show {between} {package}`), or a bug of {between}'s that its issues name (search them for the message)")
        undecided = f"whether the value {package} refused is the one your call passed to {between}, or one {between} made"
    elif caller is not None:
        where += f", called from your code at {caller.short()}"
        step = f"the call at {caller.path}:{caller.line}" + (f" (`{caller.code}`)" if caller.code else "") + f" gives {package} what its check refused"
    else:
        entry = entry_of(sign, package)
        where += f", run as {entry}" if entry != package else ""
        step = f"no frame of your code is in the traceback: the value came from what you gave {entry} (its command line, its config, your data)"
        between = ""
    if sign.remedy is not None:
        step += f'; the message itself says: "{sign.remedy.text}" (line {sign.remedy.line})'
    project = project_of(last.path) or ""
    more = {"passed_through": between, "what decides it": undecided} if between else {}
    return more | {"exception": sign.what, "message": said[:300], "package": package, "raised_in": f"{last.path}:{last.line}" + (f" in {last.func}" if last.func else ""),
            "caller": f"{caller.path}:{caller.line}" if caller is not None else "", "detail": f"{where}: {said[:160]}",
            "project": project or "GitHub", "search": search_url(project, sign.what, said), "read_as": REFUSED_VALUE, "step": step}


def by_frame(sign: Optional[Sign], exception: str = "", message: str = "") -> Optional[tuple[str, dict]]:
    """The class an unrecognised exception's traceback decides (knowledge/story.py): the finding id and its evidence."""
    said = refused_value(sign, exception, message)
    return (REFUSED_VALUE, said) if said else None


TF_STEP = ("TensorFlow: lower the batch size (or the input size) until a step fits; TensorFlow maps nearly all of a GPU's memory when it "
           "starts, so another process on that GPU (nvidia-smi lists it) leaves it too little: one process per GPU, or "
           "tf.config.experimental.set_memory_growth(gpu, True) for each GPU before any op runs (TF_FORCE_GPU_ALLOW_GROWTH=true); what held "
           "the memory: its own hint, RunOptions(report_tensor_allocations_upon_oom=True); on several GPUs tf.distribute.MirroredStrategy "
           "splits the global batch across them")
TF_HOST_STEP = ("TensorFlow ran out of the host's memory (its CPU allocator, not a GPU's): lower the batch size or what the input pipeline "
                "holds in memory (tf.data's cache() and shuffle buffer, a dataset loaded whole as one tensor); `free -g` shows the host's memory")
JAX_STEP = ("JAX (XLA): JAX takes 75% of each GPU's memory when it starts, so a second process on the same GPU (another JAX, a TensorFlow "
            "or torch one: nvidia-smi lists it) leaves it too little: XLA_PYTHON_CLIENT_PREALLOCATE=false in the others, or one process per GPU; "
            "one process that needs more than its share: XLA_PYTHON_CLIENT_MEM_FRACTION=.95; else lower the batch size or shard the arrays "
            "across the GPUs (jax.sharding)")
# MLC LLM's own three remedies, the one its numbers decide first: weights larger than the GPU's share, or buffers that do not fit beside them
MLC_STEP_WEIGHTS = ("MLC LLM's own advice: the weights alone do not fit one GPU's share, so enable tensor parallelism by passing "
                    "--tensor-parallel-shards $NGPU to mlc_llm gen_config (then compile the model library again), or use a smaller "
                    "quantization; a larger gpu_memory_utilization (default 0.85) only helps when the weights nearly fit")
MLC_STEP_BUFFER = ("MLC LLM's own advice: the weights fit, the temporary buffers beside them do not: set a larger gpu_memory_utilization "
                   "(EngineConfig(gpu_memory_utilization=0.9); the default is 0.85) or a smaller --prefill-chunk-size in mlc_llm gen_config; "
                   "or spread the weights over GPUs with --tensor-parallel-shards $NGPU to mlc_llm gen_config (then compile the model "
                   "library again), or a smaller quantization")
PADDLE_STEP = ("PaddlePaddle's own advice: check whether another process uses that GPU (nvidia-smi): stop it or start PaddlePaddle on "
               "another GPU (CUDA_VISIBLE_DEVICES); if not, decrease the batch size of your model")


def oom_fields(m: re.Match, context: list[str]) -> dict:
    """Which framework ran out, on which device, and that framework's own remedy (the fix's first step)."""
    out = groups(m, context)
    if m.group("wrapper") is not None:
        out["detail"] = "TensorFlow (its root errors, under this line, name the allocation)" if m.group("roots") else "PaddlePaddle"
        out["step"] = TF_STEP if m.group("roots") else PADDLE_STEP
    elif m.group("shape") is not None:
        device = f"{m.group('device')}:{m.group('index')}" if m.group("device") else ""
        host = m.group("device") == "CPU"
        place = "in host memory (device CPU)" if host else (f"on {device}" if device else "on its device")
        out["detail"] = f"TensorFlow, {place}, allocating a tensor of shape [{m.group('shape')[:60]}]"
        out["step"] = TF_HOST_STEP if host else TF_STEP
    elif m.group("mlc_free") is not None:
        free, weights, buffer = (float(m.group(k)) for k in ("mlc_free", "mlc_weights", "mlc_buffer"))
        out["detail"] = f"MLC LLM, one GPU's {free:.0f} MB for weights of {weights:.0f} MB and buffers of {buffer:.0f} MB"
        out["step"] = MLC_STEP_WEIGHTS if weights >= free else MLC_STEP_BUFFER
    elif m.group("bytes") is not None:
        out["detail"] = f"JAX (XLA), allocating {int(m.group('bytes')) / 2**30:.2f} GiB"
        out["step"] = JAX_STEP
    else:
        out["detail"] = f"PaddlePaddle, on GPU {m.group('gpu')}, allocating {m.group('requested')}" + (
            f" with {m.group('available')} available" if m.group("available") else "")
        out["step"] = PADDLE_STEP
    out["read_as"] = FRAMEWORK_OOM
    return out


PATTERNS = [
    pattern(
        FRAMEWORK_OOM,
        "cuda",
        CAUSE,
        E,
        "a framework other than PyTorch (TensorFlow, JAX, PaddlePaddle, MLC LLM) ran out of memory",
        r"OOM when allocating tensor (?:with|of) shape ?\[(?P<shape>[^\]]*)\](?:.*?device:(?P<device>[A-Z]+):(?P<index>\d+))?"
        r"|(?i:resource[_ ]exhausted): Out of memory (?:while trying to allocate|allocating) (?P<bytes>\d+) bytes"
        r"|Out of memory error on GPU (?P<gpu>\d+)\. Cannot allocate (?P<requested>[\d.]+ ?[KMGT]?i?B) memory on GPU \d+"
        r"(?:, (?:[\d.]+ ?[KMGT]?i?B memory has been allocated and )?available memory is only (?P<available>[\d.]+ ?[KMGT]?i?B))?"
        # the exception's line that only wraps it (the allocation is named on the lines under it): TensorFlow's count of its
        # root errors, PaddlePaddle's class alone
        r"|(?P<wrapper>ResourceExhaustedError): *(?:(?P<roots>\d+) root error\(s\) found\.?)? *$"
        # MLC LLM's engine (TVM): the model's weights and its temporary buffers against one GPU's memory, before it serves
        r"|" + NOT_HEADING + r"Insufficient GPU memory error: The available single GPU memory is (?P<mlc_free>[\d.]+) MB, which is less than the sum of model "
        r"weight size \((?P<mlc_weights>[\d.]+) MB\) and temporary buffer size \((?P<mlc_buffer>[\d.]+) MB\)",
        ("OOM when allocating tensor", "Out of memory while trying", "Out of memory allocating", "Out of memory error on GPU", "ResourceExhaustedError:",
         "Insufficient GPU memory error: "),
        why="""The framework could not allocate the memory a step needs on its device: the batch, the model or the activations do
        not fit, or another process (another rank, or another framework, on the same GPU) holds part of it. TensorFlow and JAX
        take most of a GPU's memory when they start, so two processes on one GPU run out where one alone fits. TensorFlow's
        allocator notes that it "ran out of memory trying to allocate ... not a failure" are not this: they only say a faster
        algorithm did not fit, and the run goes on.""",
        fix="nvidia-smi   # another process on this GPU? then lower the batch size (or the input size), or spread the model and the batch over more GPUs",
        examples=[
            ("tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor of shape [4096] and type float",
             "lc222/seq2seq_chatbot_new#19 (a four-GPU server)"),
            ("2018-06-08 17:26:00.908130: W tensorflow/core/framework/op_kernel.cc:1202] OP_REQUIRES failed at tile_ops.cc:123 : Resource "
             "exhausted: OOM when allocating tensor with shape[16,1,892800,8,4,2,2] and type float on /job:localhost/replica:0/task:0/device:GPU:0 "
             "by allocator GPU_0_bfc", "zzw922cn/Automatic_Speech_Recognition#78 (the op's own line, before the exception)"),
            ("W tensorflow/core/framework/op_kernel.cc:1763] OP_REQUIRES failed at cast_op.cc:109 : Resource exhausted: OOM when allocating "
             "tensor with shape[1,559,512,3] and type float on /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu",
             "tensorflow/tensorflow#45238 (the CPU allocator: host memory)"),
            ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 7406166528 bytes.",
             "google-deepmind/alphafold#1023"),
            ("RuntimeError: Resource exhausted: Out of memory while trying to allocate 12582912 bytes.", "google-deepmind/alphafold#197 (an older jaxlib)"),
            ("Out of memory error on GPU 0. Cannot allocate 98.000244MB memory on GPU 0, 6.000000GB memory has been allocated and available "
             "memory is only 0.000000B.", "PaddlePaddle/Paddle#42228"),
            ("报错信息：Out of memory error on GPU 0. Cannot allocate 1.531250GB memory on GPU 0, available memory is only", "PaddlePaddle/Paddle#26892"),
            ("ResourceExhaustedError: 2 root error(s) found.", "Azure/MachineLearningNotebooks#880 (TensorFlow's wrapper; its root errors follow)"),
            ("RuntimeError: ResourceExhaustedError:", "PaddlePaddle/Paddle#42228 (PaddlePaddle's class; its message follows)"),
            ("TVMError: Check failed: (output_res.IsOk()) is false: Insufficient GPU memory error: The available single GPU memory is 20584.716 MB, "
             "which is less than the sum of model weight size (5977.188 MB) and temporary buffer size (15013.765 MB).",
             "mlc-ai/mlc-llm#3024 (a larger gpu_memory_utilization fixed it); mlc-ai/mlc-llm#2791, #2751"),
        ],
        not_examples=[
            # TensorFlow's allocator: a faster algorithm did not fit, the run goes on (MarvinTeichmann/MultiNet#55, heldout7)
            "2018-12-13 17:56:15.831145: W tensorflow/core/common_runtime/bfc_allocator.cc:219] Allocator (GPU_0_bfc) ran out of memory trying to "
            "allocate 3.64GiB. The caller indicates that this is not a failure, but may mean that there could be performance gains if more memory were available.",
            "Hint: If you want to see a list of allocated tensors when OOM happens, add report_tensor_allocations_upon_oom to RunOptions for current allocation info.",
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.36 GiB. GPU 1 has a total capacity of 47.50 GiB",
            "ResourceExhaustedError: Quota exceeded for the project",  # a quota's refusal in the same class, with its own message
        ],
        fields=oom_fields,
    ),
]

PATTERNS_BY_FRAME = [
    pattern(
        REFUSED_VALUE,
        "launcher",
        CAUSE,
        E,
        "a library's own check refused what it was given",
        # python-exception's line; the traceback's innermost frame decides (knowledge/story.py by_frame), never the line alone
        r"^(?P<exception>(?:[A-Za-z_]\w*\.)*(?:ValueError|TypeError|InvalidArgumentError|\w*(?:Config|Configuration|Validation)Error)): (?P<message>.+)",
        ("ValueError: ", "TypeError: ", "InvalidArgumentError: ", "Error: "),
        why="""A library checks what its caller gives it and raises when a value, a type or a setting is not one it takes: that is
        what Python's ValueError and TypeError mean, and TensorFlow's
        InvalidArgumentError and a library's own config or validation error say the same. The message is the library's own
        statement of what it refused; the traceback says which call gave it that value: the last frame of your code, or, when no
        frame of yours is in it, the command line, the config or the data a library's entry point read. Errors after it (other
        ranks, the launcher's summary) follow from it.""",
        fix="""make the value meet what the message asks: the argument at that call, or the config key, command-line option or
        data field it comes from (print it just before the call to see it); if the value is what you meant, the library's check
        may be wrong for it: its issues searched for the message (the evidence's `search`) say whether a later release takes it""".replace("\n        ", " "),
        examples=[
            ("ValueError: Found input variables with inconsistent numbers of samples: [151, 152]",
             "Luca-Marinescu-Stefan/Estimarea-distan-ei-frontale-prin-senzor-TOF eval.log (heldout21w: sklearn's check_consistent_length)"),
            ("ValueError: ndarray is not C-contiguous", "0x1B40/flappy-bird-with-deep-q output.log (heldout17w: pygame's sndarray.make_sound)"),
        ],
        # the same classes raised in the user's own frame are the user's (python-exception); an API's shape is library-api-mismatch's
        not_examples=["KeyError: 'loss'", "IndexError: list index out of range"],
        refines="python-exception",
    ),
]
