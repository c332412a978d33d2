"""Rules for classes of messages found where the error line is in the log but no pattern named it
(issue 35 items 3 and 4, the eighth round): the readable parts' failed logs answered only
"unrecognised" or "an exception", and the held-out judge's "partly" ones, sorted by the class of
their failing message.

- a relay: an exception that only says another process, thread or worker raised (DataParallel's
  replica, a DataLoader worker, a Ray task or actor, a test's child process, a multiprocessing helper
  that re-raises the child's traceback as its message); the real error is the traceback under it
  (named, not claimed: the line does not say what failed);
- a program's own check that refused the set-up it was given and says what to change: a config
  composer (Hydra, OmegaConf) refusing a key, or a message that states its own remedy (claimed, an
  error: the program itself stopped there);
- a value of another type or dtype than an operation takes, the message naming both (claimed, an
  error: the line says what was refused and what was expected; the traceback says which call passed it).

Their examples are real lines from the sampled threads; their counter-examples the nearest lines that
mean something else.
"""

import re

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, pattern
from gpudoctor.knowledge.relays import STEPS

E = Severity.ERROR
W = Severity.WARN
# the start of a Python exception's text: the class, after a prefix or a quote, with or without its module
EXCEPTION_START = r"(?:^|[\s\"'(\[`])(?:[A-Za-z_]\w*\.)*"
# What a program tells its reader to do, at a sentence's start: a verb of set-up (not "report", "check" or
# "see": those say where to look, not what to change), after "please" or a purpose clause ("To append to your
# config use ...", "For multi-gpu training use ..."). DIRECTIVE's words name something concrete: a name in
# backquotes or quotes, a variable, a flag, a key=value, a command, a script.
DIRECTIVE_VERBS = r"(?:define|set|use|specify|pass|add|append|install|select|choose|restrict|export|provide|give)"
DIRECTIVE = r"(?i:(?:(?:to|for|if you want to) [^.,;:`]{3,60}?,? )?(?:(?:please|you (?:can|should|must|need to)) )?" + DIRECTIVE_VERBS + r")\b"
# (a package the message asks to be installed, by its name: "Please install av to use video compression", ckkelvinchan/RealBasicVSR#11)
CONCRETE = (r"(?:`[^`]+`|'[\w./-]+'|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\s--?[a-z][\w-]*|\+?[\w.]+=\S|pip install|\S+\.py\b"
            r"|\b[Pp]lease install (?!it\b|them\b|the\b|this\b|that\b|an?\b)[A-Za-z][\w.-]*)")
DIRECTIVE_LINE = re.compile(r"^\W*(?P<directive>" + DIRECTIVE + r".*" + CONCRETE + r".*)$")


# How to have the relayed error raised where it happened, by who relayed it (the fix's STEP): each relay shape's own
# step (knowledge/relays.py), in the order relay_names tries the line's groups.
RELAY_STEPS = {key: STEPS[key] for key in ("worker", "pin_device", "replica", "task", "process", "traceback")}


def relay_names(m, _context: list[str]) -> dict:
    """Where the real error was raised, as the relay names it (the fix's WHERE), and how to have it raised
    there (STEP)."""
    out = {k: v for k, v in m.groupdict().items() if v is not None}
    if "replica" in out:
        where = f"DataParallel's replica {out['replica']} (on GPU {out['device']})"
    elif "worker" in out:
        where = f"DataLoader worker process {out['worker']}"
    elif "pin_device" in out:
        where = f"the DataLoader's pin-memory thread (GPU {out['pin_device']})"
    elif "task" in out:
        where = f"the Ray task or actor {out['task']} (pid {out['pid']}" + (f", node {out['ip']})" if out.get("ip") else ")")
    elif "process" in out:
        where = f"child process {out['process']} (its exit code {out['code']})"
    else:
        where = "a child process, whose traceback became this exception's message"
    step = next(text for key, text in RELAY_STEPS.items() if key in out).replace("PID", out.get("pid", "PID"))
    return {**out, "where": where, "step": step}


def refusal_names(m, context: list[str]) -> dict:
    """What to change (the fix's DIRECTIVE): the remedy the message states, quoted (on its own line or, for
    Hydra, on the line after it: "To append to your config use +lr=0.01"), and for a config key what the
    composer's rules say."""
    out = {k: v for k, v in m.groupdict().items() if v is not None}
    said = (out.get("directive") or "").strip().rstrip("`'\"")
    if not said and context:
        following = DIRECTIVE_LINE.match(context[0].strip())
        said = following.group("directive").strip().rstrip("`'\"") if following else ""
    steps = [f'"{said[:240]}"'] if said else []
    key = out.get("key") or out.get("key2") or out.get("key3") or ""
    if key and out.get("mandatory"):
        steps.append(f"the config leaves {key} mandatory (???) and nothing gave it: set it on the command line ({key}=VALUE) or in the config file")
    elif key and "key3" in out:
        steps.append(f"the config (a struct) has no key {key}: spell it as the config's file does, or add it to the config's schema")
    elif key:
        steps.append(f"the config has no key {key} to override: add it with +{key}=VALUE (++{key}=VALUE sets it or adds it), or spell it as the config's file does")
    if out.get("repo"):
        steps.append(f"'{out['repo']}' is neither a folder on this machine nor a Hub repo id (namespace/name): point it to the folder that "
                     "holds the model's files (a relative path is read from the folder the process runs in), or to a Hub id")
    elif out.get("folder"):
        steps.append(f"the folder {out['folder']} has no {out['file']}: point the path to the folder that holds the model's whole set of files "
                     f"({out['file']} beside the weights and the tokenizer), or give a Hub id")
    if key:
        out["key"] = key
    out["directive"] = "; ".join(steps)
    return out


# What to pass instead, by the check that refused (the fix's STEP).
TYPE_STEPS = {
    "dtype": ("cast the input to the weights' dtype (x.to(next(model.parameters()).dtype)) or run the forward under torch.autocast "
              "instead of calling .half() on one side only"),
    "batch": ("a batch of a library's own objects needs that library's DataLoader or collate function "
              "(torch_geometric.loader.DataLoader for PyG graphs), or a collate_fn that turns them into tensors"),
    "instance": "wrap or build the object the way the API's documentation gives (the order of wrappers such as jit, compile, FSDP matters)",
    "valid": "None where a component was expected means it did not load: install or enable it, or pick one the message lists",
}


def type_names(m, _context: list[str]) -> dict:
    """What was passed and what was expected, as far as the message names them (the fix's GOT and EXPECTED),
    and what to pass instead (STEP); the fix's WHERE is the traceback's last frame (knowledge/story.py's named_fix)."""
    out = {k.rstrip("2345"): v for k, v in m.groupdict().items() if v is not None}
    groups = m.groupdict()
    kind = ("batch" if groups.get("got3") else "instance" if groups.get("got4") else "valid" if groups.get("got5") else "dtype")
    return {"expected": "what the operation takes", "got": "what was passed", **out, "step": TYPE_STEPS[kind]}


PATTERNS_RELAYED = [
    pattern(
        "worker-error-relayed",
        "launcher",
        CAUSE,
        W,
        "an exception that relays another process's or worker's error: the real error is the traceback under this line",
        # the message text as unrecognised.message_class reads it, "Class: message" (RayTaskError(X): its inner class)
        EXCEPTION_START + r"(?:[A-Z]\w*(?:Error|Exception)): (?:"
        r"Caught \w+ in (?:replica (?P<replica>\d+) on device (?P<device>\d+)|DataLoader worker process (?P<worker>\d+)"
        r"|pin memory thread for device (?P<pin_device>\d+))"
        r"|ray::(?P<task>[\w.]+)\(\) \(pid=(?P<pid>\d+)(?:, ip=(?P<ip>[\d.:a-f]+))?"
        r"|Process (?P<process>\d+) exited with error code (?P<code>\d+) and exception:"
        r"|(?P<traceback>Traceback \(most recent call last\):)\s*$)",
        ("Caught ", "ray::", "exited with error code", "Traceback (most recent call last)"),
        why="""The exception's line is a relay: another process or thread raised the real error, and the code that waited for
        it raised it again where it was waiting, with only a pointer to where it happened. DataParallel runs a copy of the
        model per GPU in threads and re-raises a replica's error; a DataLoader worker process re-raises the dataset's or the
        collate function's error in the main process; Ray re-raises a task's or an actor's error in the caller (as
        RayTaskError); torch's distributed tests re-raise a child process's error; some multiprocessing helpers re-raise a
        child's traceback as the message. The real exception, its message and its frames are in the traceback printed
        under this line (after `Original Traceback`, the `ray::...` frames, the text after `exception:`), and its last line
        says what failed; the frames above this line (reraise, parallel_apply, ray.get) only show where it was handed over.
        When that inner traceback is cut from the paste, the cause is not in the log: the answer is then that original, named
        through the relay (the class the relay names, where it ran) with where to read it whole. To have the error raised where it
        happened: a DataLoader worker: rerun with num_workers=0; a DataParallel replica: run the model on one GPU (an error
        only replicas 1 and up raise is usually a tensor created on a fixed device inside forward); a Ray task or actor:
        its own log on its node (`ray logs worker --pid PID`); a test's child or a multiprocessing helper: the text after
        the line, or the function called in the main process.""",
        # (STEP: RELAY_STEPS's words for the relay the line names; the docs page lists them in the why)
        fix="""the error was raised in WHERE: read the traceback printed under this line to its last line: that exception is
        the failure to diagnose (paste it whole if it is cut); STEP""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: Caught RuntimeError in replica 1 on device 1.", "ultralytics/yolov5#115 (a model wrapped in nn.DataParallel, its replica's traceback cut)"),
            ("RuntimeError: Caught RuntimeError in DataLoader worker process 0.", "huggingface/lerobot#2488 (video decoding inside a worker)"),
            (
                " FAILED thunder/tests/distributed/test_moe.py::TestLlama4MoEDistributed::test_llama4_moe_distributed - RuntimeError: Process 0 exited with error code 10 and exception:",
                "Lightning-AI/lightning-thunder#2659 (a distributed test's child process)",
            ),
            ("ValueError: Traceback (most recent call last):", "dmlc/dgl#3534 (dgl.multiprocessing re-raises the child's traceback as the message)"),
        ],
        fields=relay_names,
        refines="python-exception",  # the unrecognised answer names it: the real error is elsewhere, not in this line
        not_examples=[
            "Traceback (most recent call last):",  # a traceback's own header
            "RuntimeError: Caught an unknown exception!",
            "-- Process 2 terminated with the following error:",  # mp.spawn's relay: the launcher pattern's line
        ],
    ),
]

PATTERNS = [
    pattern(
        "setup-refused-by-program",
        "platform",
        CAUSE,
        E,
        "the program's own check refused the set-up it was given, and its message says what to change",
        r"^(?!.*(?i:\bwarn(?:ing)?\b|\bdeprecat)).*?" + EXCEPTION_START + r"(?:"
        # a config composer refusing a key: Hydra's override of a key the config does not have, OmegaConf's value
        # the config leaves mandatory (???) or a key not in a struct config
        r"(?:ConfigCompositionException|OverrideParseException): Could not override '(?P<key>[\w.]+)'"
        r"|(?P<mandatory>MissingMandatoryValue): Missing mandatory value:? (?P<key2>[\w.]+)"
        r"|Config(?:Attribute|Key)Error: Key '(?P<key3>[\w.]+)' (?:is not in struct|not in '\w+')"
        # a model path that holds no model: a local path that does not exist, read as a Hub repo id, or a folder without
        # the file a loader needs (config.json beside the weights)
        r"|HFValidationError: Repo id must (?:be in the form|use alphanumeric)[^:]*: '(?P<repo>[^']+)'"
        r"|OSError: (?P<folder>\S+) does not appear to have a file named (?P<file>[\w-]+(?:\.[\w-]+)*)"
        # a program's own message that states its remedy after what it found
        # (what it found, then a sentence that starts with the remedy; something concrete named in the message)
        r"|(?P<exception>[A-Z]\w*(?:Error|Exception)): (?=.*" + CONCRETE + r")(?P<message>(?:.*?[.!?]\s+)?)"
        r"(?P<directive>" + DIRECTIVE + r".*))",
        ("Could not override", "Missing mandatory value", "is not in struct", "Repo id must", "does not appear to have a file named", "Error: ", "Exception: "),
        why="""The program stopped on a check of its own before doing any work: the set-up it was given is not the one it
        needs, and its message says what to change. A config composer (Hydra, OmegaConf) refuses a key: an override of a
        key the config does not define (Hydra adds a new key only as +key=value), a value the config leaves mandatory
        (`???`) and nobody gave, a key a structured config does not have; a model loader refuses a path that holds no model
        (a local path that does not exist is read as a Hub repo id and refused as one; a folder without config.json or the
        weights' index is not a model's folder); a training program refuses a set-up it does not
        run on (more GPUs visible than a single-process trainer drives, a setting its mode requires, an argument left
        out). Nothing crashed: the line is the whole cause, and its own words are the fix. Hydra's rules for a key: key=value
        sets a key the config has, +key=value adds one it lacks, ++key=value sets or adds it; a single-process program that
        refuses several visible GPUs runs on one (CUDA_VISIBLE_DEVICES=0) or under its own multi-GPU launcher.""",
        # (DIRECTIVE: the message's own remedy, quoted, and for a config key the composer's rule; knowledge/story.py's named_fix)
        fix="do what the message says, then run the same command again: DIRECTIVE",
        examples=[
            ("hydra.errors.ConfigCompositionException: Could not override 'lr'.", "facebookresearch/audiocraft#446 (dora grid binds a key the config lacks: +lr=0.01)"),
            ("`omegaconf.errors.MissingMandatoryValue: Missing mandatory value: channels`", "facebookresearch/audiocraft#477 (a required config value left unset)"),
            (
                "RuntimeError:  [!] 2 active GPUs. Define the target GPU by `CUDA_VISIBLE_DEVICES`. For multi-gpu training use `TTS/bin/distribute.py`.",
                "coqui-ai/TTS#2997 (the single-process trainer with two GPUs visible)",
            ),
            ("ValueError: 'policy.repo_id' argument missing. Please specify it to push the model to the hub.", "huggingface/lerobot#1424 (push_to_hub on by default)"),
            ("omegaconf.errors.ConfigAttributeError: Key 'use_cache' is not in struct", "an OmegaConf struct config read with a key it does not define"),
            (
                "huggingface_hub.utils._validators.HFValidationError: Repo id must be in the form 'repo_name' or 'namespace/repo_name': './llm/vicuna-7b'. Use `repo_type` argument if needed.",
                "salesforce/LAVIS#313 (the config's placeholder path to the LLM)",
            ),
            (
                "OSError: /workspace/models/chatpjlm-0/v0.2.5/turbomind/triton_models/tokenizer does not appear to have a file named config.json. Checkout 'https://huggingface.co//workspace/models/chatpjlm-0/v0.2.5/turbomind/triton_models/tokenizer/None' for available files.",
                "InternLM/lmdeploy#82 (a tokenizer folder without config.json)",
            ),
            ("AssertionError: Please install av to use video compression.",
             "ckkelvinchan/RealBasicVSR#11 (mim train mmedit ...: the package the check names, PyAV, is not installed)"),
        ],
        not_examples=[
            "RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at \"/pytorch/c10/cuda/CUDACachingAllocator.cpp\":1015, please report a bug to PyTorch.",
            "FutureWarning: `torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', args...)` instead.",
            "RuntimeError: Error(s) in loading state_dict for Model: Missing key(s) in state_dict: \"fc.weight\".",
            "[WARNING] ValueError: 'wandb' not installed. Please install it with `pip install wandb` to log runs; logging to the console",
            "RuntimeError: the backend failed to load. Please install it again and retry",  # no package named: nothing concrete to do
            "    raise ValueError(\"Please set `MASTER_ADDR`\")",  # a traceback's source line
        ],
        context_after=1,
        fields=refusal_names,
    ),
]

PATTERNS_TYPES = [
    pattern(
        "value-type-refused",
        "platform",
        CAUSE,
        E,
        "an operation refused a value of another type or dtype than it takes (the message names both)",
        r"^(?!.*(?i:\bwarn(?:ing)?\b)).*?" + EXCEPTION_START + r"(?P<exception>TypeError|ValueError|RuntimeError): (?P<message>"
        r"Input type \((?P<got>[\w.]+)\) and weight type \((?P<expected>[\w.]+)\) should be the same.*"
        r"|expected (?:scalar type|m1 and m2 to have the same dtype, but got:) (?P<expected2>\w+)(?: but found| !=) (?P<got2>\w+).*"
        r"|(?:mat1 and mat2|self and mat2) must have the same dtype.*"
        r"|(?:[\w.]+: )?batch must contain (?P<expected3>[^;]+); found (?P<got3><class '[\w.]+'>|[^\s,;]+).*"
        r"|Expected [`'\"]?(?P<what>\w+)[`'\"]? to be (?:of type|an instance of) [`'\"]?(?P<expected4>[\w.]+)[`'\"]?,? but got [`'\"]?(?P<got4>[\w.<>' ]+?)[`'\"]?\.?$"
        r"|An object of type (?P<got5><class '[\w.]+'>) is not a valid (?P<expected5>\w+)\b.*)",
        ("should be the same", "expected scalar type", "to have the same dtype", "must have the same dtype", "batch must contain", "to be of type",
         "to be an instance of", "is not a valid"),
        why="""An operation got an object of another kind than it takes, and its check says both: a tensor in half
        precision where the layer's weights are in float (or the reverse: the input cast by .half() or autocast while the
        model was not, a model loaded in one dtype fed data in another, a DataParallel or a wrapper that changed one side);
        a batch of objects the default collate function cannot stack (a graph library's Data objects need that library's
        own DataLoader); a model or a module wrapped in another order or by another tool than the API expects (a compiled
        or jitted model where a plain one is wanted, or the reverse); or None where an optional component that did not
        load (an executor, an extension) was to be. The line names what was passed and what was expected, not which line
        of code passed it: the traceback's frames do. What to pass instead: a dtype: cast the input to the
        weights' dtype or run under torch.autocast; a graph library's objects: its own DataLoader; a wrapped model: the
        wrapping order the API documents; None: install or enable the component that did not load.""",
        # (STEP: TYPE_STEPS's words for the check the line names: a dtype, a batch, an instance, a component)
        fix="pass what the operation expects (EXPECTED) instead of GOT, at the call that passed it (the traceback's last frame: WHERE): STEP",
        examples=[
            ("RuntimeError: Input type (torch.cuda.HalfTensor) and weight type (torch.cuda.FloatTensor) should be the same", "ultralytics/yolov5#475 (a half input into a float model under DataParallel)"),
            (
                "TypeError: default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found <class 'torch_geometric.data.data.Data'>",
                "pyg-team/pytorch_geometric#8475 (PyG graphs given to torch's DataLoader)",
            ),
            ("[rank0]: TypeError: Expected `model` to be of type `thunder.core.module.ThunderModule`, but got Sequential", "Lightning-AI/lightning-thunder#2629"),
            (
                "ValueError: An object of type <class 'NoneType'> is not a valid Executor. Executor list: [None, torchex]",
                "Lightning-AI/lightning-thunder#2243 (nvFuser's executor did not load)",
            ),
            ("RuntimeError: expected scalar type Half but found Float", "torch's dtype check in a matmul"),
        ],
        fields=type_names,
        not_examples=[
            "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cuda:1!",
            "UserWarning: Input type (float) is not a valid choice; using float32",
            "TypeError: unsupported operand type(s) for +: 'int' and 'str'",
        ],
    ),
]
