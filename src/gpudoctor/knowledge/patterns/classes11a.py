"""Rules for classes of messages of the eleventh round (issue 35, diagA11): the wrong, partly and honest answers on
the retired held-out parts heldout10 (its first half) and heldout9, sorted by the class of their failing message.

- torch's warning at CUDA initialisation that the driver is too old for this build: the process has no GPU and goes on
  on the CPU. That is decided (an error for a GPU run), but it is not why another failure happened: any other cause the
  log shows is told first (TOLD_AFTER_OTHER_CAUSES), and an error the log speaks of without showing it is named beside
  it, the warning then told as a warning and the log undecided (knowledge/story.py, diagC12); cuda-driver-too-old keeps
  the error forms;
- a class that cannot be instantiated because it leaves abstract methods unimplemented: the line that creates it is
  not the bug, the class is (a subclass written for another version of its base class, or a library mid-refactor);
- a tcp:// or file:// rendezvous given no rank or world size: nothing passed them (no launcher set the rank the
  script reads, or the script never passes them);
- the module copied to several GPUs from one process while not on device_ids[0]; DataParallel's replicas returning
  outputs of different sizes to its gather;
- a torch function whose installed forms take none of the arguments given (another torch version, or a type to
  convert); triton of another release than the torch that drives it (torch.compile);
- a loss whose logits and labels differ in shape (the model's classes or batch against the data's); an argument whose
  choices, built at run time, are empty (for a GPU argument: no CUDA GPU visible);
- a process started by spawn that read nothing from its parent (EOFError in spawn's _main): the parent failed to
  send it its work (a pickling error of its own, beside it) or died first; decided by the traceback's frame
  (knowledge/story.py), never by the line, which an empty file read by pickle prints as well.

Their examples are real lines from the sampled threads (thread in the source); their counter-examples the nearest
lines that mean something else.
"""

import re
from typing import Optional

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, groups, pattern

E = Severity.ERROR

# Causes the line decides that are told after any other cause the log shows (knowledge/story.py's order): torch's warning
# that this process has no GPU says why a run was slow or stopped for want of CUDA, not why another failure happened.
TOLD_AFTER_OTHER_CAUSES = ("cuda-init-warning-driver-too-old",)

# spawn's child reads its process object from the pipe its parent writes (multiprocessing/spawn.py, _main)
SPAWN_MAIN = re.compile(r"multiprocessing[/\\]spawn\.py$")


def spawn_child_read_nothing(sign, exception: str = "", message: str = "") -> dict:
    """The evidence of a spawned child that found its parent's pipe empty: an EOFError raised in spawn's own _main
    (the child unpickling the process object it was to run), {} for any other exception or frame."""
    if sign is None or sign.kind != "exception" or sign.cut:
        return {}
    last = sign.raised_in()
    if last is None or sign.what.rsplit(".", 1)[-1] != "EOFError" or not SPAWN_MAIN.search(last.path) or last.func != "_main":
        return {}
    return {"exception": sign.what, "message": sign.message[:200], "raised_in": f"{last.path}:{last.line} in _main"}


def abstract_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    methods = re.sub(r"['\"]", "", out.get("methods") or out.get("methods2") or "").strip()
    out["methods"] = methods
    out.pop("methods2", None)
    out["step"] = f"{out.get('cls', 'the class')} leaves {methods or 'abstract methods'} unimplemented"
    return out


def rendezvous_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    missing = out.get("missing", "rank")
    out["step"] = f"the {missing} for the {out.get('scheme', 'tcp')}:// rendezvous"
    return out


def empty_choices_step(arg: str, value: str) -> str:
    """What the empty list of choices says, by the argument's name (the fix's STEP)."""
    if not arg:
        return f"the value {value} was refused: the program's list of choices for it is empty"
    if re.search(r"gpu|device|cuda", arg, re.IGNORECASE):
        return f"{arg} {value} was refused because the program lists no GPU: this process sees no CUDA GPU"
    return f"{arg} {value} was refused because the program found nothing to offer for {arg}"


def logits_labels_step(logits: str, labels: str) -> str:
    """Which dimension differs, as the message's sizes say (the fix's STEP)."""
    a, b = [x.strip() for x in logits.split(",")], [x.strip() for x in labels.split(",")]
    if len(a) == len(b) == 2 and a[0] == b[0] and a[1] != b[1]:
        return f"the model gives {a[1]} classes, the labels have {b[1]}"
    if len(a) == len(b) == 2 and a[1] == b[1] and a[0] != b[0]:
        return f"the logits have {a[0]} rows, the labels {b[0]}: the batch differs, not the classes"
    return f"logits [{logits}] against labels [{labels}]"


PATTERNS_FIRST = [
    pattern(
        "cuda-init-warning-driver-too-old",
        "cuda",
        CAUSE,
        E,
        "this process cannot use the GPU: torch could not initialise CUDA (the NVIDIA driver is older than this torch build needs), warned, and went on on the CPU",
        # torch/cuda/__init__.py's device count warns (UserWarning) instead of raising; the RuntimeError/AssertionError forms,
        # raised when the code then uses CUDA, are cuda-driver-too-old's (patterns/cuda.py)
        r"UserWarning: CUDA initialization: The NVIDIA driver on your system is too old \(found version (?P<found>\d+)\)",
        ("CUDA initialization: The NVIDIA driver",),
        why="""torch asks the driver how many GPUs there are when it first needs to know (torch.cuda.is_available(),
        device_count()); the driver is older than the CUDA version this torch was built for, so CUDA cannot start and torch
        warns instead of failing: torch.cuda.is_available() is False and the program goes on on the CPU (slower, and
        using host memory, which a large model can exhaust), or stops where it needs CUDA ("Torch not compiled with CUDA
        enabled", "No CUDA GPUs are available"). What the line decides is that this process has no GPU; it does not crash
        the run by itself: a failure of another kind later in the log is that failure's own, and is told first. The found version is the driver's CUDA version as an integer (11040 = CUDA 11.4): nvidia-smi shows
        it as 'CUDA Version'.""",
        fix="""nvidia-smi   # 'CUDA Version' is the newest CUDA this driver runs: install the torch wheel built for it (or an older
        CUDA), e.g. pip install torch --index-url https://download.pytorch.org/whl/cu118, or update the driver; check with
        python -c "import torch; print(torch.version.cuda, torch.cuda.is_available())" before the run; a failure later in
        the log of another kind is to be read on its own""".replace("\n        ", " "),
        examples=[
            ("/home/jsanders/.conda/envs/chemprop/lib/python3.11/site-packages/torch/cuda/__init__.py:749: UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx",
             "chemprop/chemprop#929 (the run went on and failed in predict.py's own bug)"),
            ("UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 10010). Please update your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx",
             "ultralytics/yolov5#2389 (YOLOv5 then reports 'torch 1.7.1 CPU': it ran on the CPU)"),
            ("/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py:182: UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 12040). Please update your GPU driver by downloa",
             "sgl-project/sglang#11395 ('Falling back to CPU')"),
        ],
        not_examples=[
            "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver",  # the error: cuda-driver-too-old
            "UserWarning: CUDA initialization: Found no NVIDIA driver on your system.",
        ],
        # any other failure the log shows is told first (TOLD_AFTER_OTHER_CAUSES): the warning says only that the run had no GPU
        fields=groups,
    ),
    pattern(
        "triton-torch-mismatch",
        "platform",
        CAUSE,
        E,
        "the installed triton is not the version this torch was built with: torch.compile's code generator (Inductor) calls into it and finds another API",
        # torch pins the triton it generates code for (the pytorch-triton / triton wheel of the same release); a triton of another
        # release (a Windows build, a pip upgrade, a second package's pin) lacks the names Inductor uses
        r"type object \\?'CompiledKernel\\?' has no attribute \\?'(?P<attr>\w+)"
        r"|cannot import name '(?P<name>\w+)' from 'triton(?:\.[\w.]+)?'"
        r"|module 'triton(?:\.[\w.]+)?' has no attribute '(?P<attr2>\w+)'",
        ("CompiledKernel", "from 'triton", "module 'triton"),
        why="""torch.compile's Inductor writes Triton kernels and calls Triton's own Python API to compile and launch them; each torch
        release is built and tested against one triton release (installed with it as a dependency: triton on Linux, a separate
        build such as triton-windows on Windows). A name of that API missing from the installed triton (CompiledKernel's launch
        hooks, AttrsDescriptor, a compiler module) means the two are of different releases: triton was upgraded or downgraded on
        its own, another package pinned another one, or a Windows build of another release was installed. Code that does not
        compile does not touch triton, so only the compiled path (torch.compile, a model's compile option) fails.""",
        fix="""pip show torch triton   # install the triton this torch release requires (pip install --force-reinstall torch==<same
        version> brings its own; on Windows the triton-windows release made for that torch version), or turn torch.compile off
        (the program's compile option) to run without it""".replace("\n        ", " "),
        examples=[
            ("The generation of the video has encountered an error, please check your terminal for more information. \\'AttributeError: type object \\'CompiledKernel\\' has no attribute \\'launch_enter_hook\\'\\n\\nSet TORCHDYNAMO_VERBOSE=1 for the internal stack trace",
             "deepbeepmeep/Wan2GP#641 (an RTX 50 card on Windows, torch.compile)"),
            ("ImportError: cannot import name 'AttrsDescriptor' from 'triton.compiler.compiler' (G:\\pinokio\\api\\wan.git\\app\\env\\lib\\site-packages\\triton\\compiler\\compiler.py)",
             "deepbeepmeep/Wan2GP#1263 ('the wrong version of triton'; turning compile off avoided it)"),
            ("ImportError: cannot import name 'AttrsDescriptor' from 'triton.compiler.compiler' (...\\site-packages\\triton\\compiler\\compiler.py)",
             "woct0rdho/triton-windows#97 (transformers' generate compiling the model)"),
        ],
        not_examples=[
            "ModuleNotFoundError: No module named 'triton'",  # not installed at all
            "ImportError: cannot import name 'TrainingArguments' from 'transformers'",
        ],
        fields=groups,
    ),
]


PATTERNS = [
    pattern(
        "abstract-class-instantiated",
        "launcher",
        CAUSE,
        E,
        "a class could not be created: it leaves abstract methods of its base class unimplemented (the class is incomplete, not the line that creates it)",
        # Python < 3.12: "with abstract method(s) a, b"; 3.12 on: "without an implementation for abstract method(s) 'a', 'b'"
        r"TypeError: Can't instantiate abstract class (?P<cls>\w+)(?: with abstract methods? (?P<methods>[\w, ]+)"
        r"| without an implementation for abstract methods? (?P<methods2>['\w, ]+))",
        ("Can't instantiate abstract class",),
        why="""Python refuses to create an object of a class that still has abstract methods (declared with @abstractmethod in
        a base class and not implemented). The line that creates the object is not the bug: the class is incomplete. Most
        often its base class comes from a library whose version differs from the one the code was written for (a newer
        base declares an abstract method the code's subclass does not implement: torch_geometric's Dataset requiring
        len(), a trainer or runner base class gaining a method), or the library itself is caught mid-refactor (its own
        class left abstract in that commit); else the user's own subclass misses the method. The message names the class
        and the methods; where the class is defined (the user's code or a package) decides which.""",
        fix="""STEP: if the class is yours (a subclass of a library's base), implement those methods in it, with the signature
        the base declares; if the class or its base is a library's, install the library version (or commit) the project
        was written for (its requirements or README), or the release that fixed it: pip show the package and compare""".replace("\n        ", " "),
        examples=[
            ("TypeError: Can't instantiate abstract class AsyncMultiGPUTrainer with abstract methods get_predict_func",
             "tensorpack/tensorpack#48 (the library mid-refactor; a later commit fixed it)"),
            ("TypeError: Can't instantiate abstract class ModelRunner with abstract methods forward", "ngxbac/GAIN#3 (a catalyst version other than the project's)"),
            ("TypeError: Can't instantiate abstract class ScitsrDataset with abstract methods len", "Irene323/GFTE#18 (a torch_geometric Dataset subclass written for an older release)"),
        ],
        not_examples=[
            "TypeError: Can't instantiate typing.Any",
            "NotImplementedError: get_predict_func is not implemented for this trainer",
        ],
        fields=abstract_fields,
    ),
    pattern(
        "rendezvous-rank-missing",
        "timeout",
        CAUSE,
        E,
        "init_process_group was given no rank (or world size) for its tcp:// or file:// rendezvous: nothing passed it (no launcher set the rank the script reads)",
        r"Error initializing torch\.distributed using (?P<scheme>tcp|file)://(?: rendezvous)?: (?P<missing>rank|world size) parameter missing",
        ("parameter missing",),
        why="""With init_method='tcp://...' or 'file://...' every process must tell init_process_group its rank and the world size
        (as rank= and world_size=, or in the URL's ?rank=&world_size=): unlike env://, these rendezvous read nothing from
        the environment. A rank of -1 (the default) means "not given", and that is what arrives when the script passes
        rank=args.local_rank or an environment variable that no launcher set: the script was run with plain python (or on a
        machine where the project's launch script does not run, Windows among them) instead of the launcher the project
        documents (python -m torch.distributed.launch / torchrun), which gives each process --local_rank or LOCAL_RANK.
        Code written for torch 0.4 that passed neither also stops here.""",
        fix="""start the script the way the project documents, with the launcher that gives each process its rank:
        torchrun --nproc_per_node=N train.py (or python -m torch.distributed.launch --nproc_per_node=N train.py for code that
        reads --local_rank); or pass STEP yourself: init_process_group(..., rank=RANK, world_size=N) with a different RANK per
        process (0..N-1)""".replace("\n        ", " "),
        examples=[
            ("ValueError: Error initializing torch.distributed using tcp:// rendezvous: rank parameter missing",
             "CoinCheung/BiSeNet#233 (train.py run directly, on Windows, not through the documented launch)"),
            ("ValueError: Error initializing torch.distributed using tcp:// rendezvous: rank parameter missing",
             "CoinCheung/BiSeNet#164 (rank=args.local_rank, the script started without the launcher)"),
            ("ValueError: Error initializing torch.distributed using file:// rendezvous: rank parameter missing",
             "salesforce/densecap#40 (code for torch 0.4 that passes no rank)"),
        ],
        not_examples=[
            "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable RANK expected, but not set",  # launcher-env-missing
            "TypeError: forward() missing 1 required positional argument: 'rank'",
        ],
        fields=rendezvous_fields,
    ),
    pattern(
        "replicate-module-not-on-first-device",
        "ddp",
        CAUSE,
        E,
        "the module was copied to several GPUs from one process (DataParallel, or DistributedDataParallel given several device_ids), but its parameters are not all on the first GPU of device_ids",
        # torch/nn/parallel/comm.py's broadcast_coalesced, called by replicate(): every tensor must start on devices[0]
        r"[Aa]ll tensors must be on devices\[0\](?::\s*(?P<device>\d+))?",
        ("tensors must be on devices[0]",),
        why="""nn.DataParallel, and DistributedDataParallel when one process is given several GPUs in device_ids (torch < 1.9 allowed
        it), copy the module from the first GPU of device_ids to the others with one broadcast, which requires every parameter
        and buffer to be on that first GPU already. Here some are not: the model was left on the CPU or moved to another GPU
        (model.cuda(local_rank) while device_ids lists 0,1,2,3; a sub-module created after .cuda(); CUDA_VISIBLE_DEVICES
        that renumbers the GPUs), or several GPUs were listed where one process per GPU was meant.""",
        fix="""one process per GPU (torchrun, DDP): torch.cuda.set_device(local_rank); model.cuda(local_rank); DistributedDataParallel(model,
        device_ids=[local_rank]) with a single id; DataParallel: model.to(f"cuda:{device_ids[0]}") before wrapping, with every
        sub-module and buffer created before that move""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: All tensors must be on devices[0]: 0", "SegmentationBLWX/cssegmentation#1 (DistributedDataParallel given several device_ids per process)"),
            ("RuntimeError: all tensors must be on devices[0]", "vlgiitr/Group-Level-Emotion-Recognition#6 (DataParallel's forward, torch 0.4)"),
            ("RuntimeError: all tensors must be on devices[0]", "ujsyehao/yolov3-multigpu#3"),
        ],
        not_examples=[
            "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",  # ddp-device-mismatch
            "RuntimeError: module must have its parameters and buffers on device cuda:0 (device_ids[0]) but found one of them on device: cpu",
        ],
        fields=groups,
    ),
    pattern(
        "dataparallel-gather-size-mismatch",
        "ddp",
        CAUSE,
        E,
        "DataParallel could not join its replicas' outputs: they differ in size beyond the batch dimension",
        # torch/csrc/cuda/comm.cpp's gather (torch >= 1.0: "Gather got ... [a, b]"; 0.3-0.4: "gather got ... AxB")
        r"[Gg]ather got an input of invalid size: got (?P<got>\[[\d, ]+\]|\d+(?:x\d+)+), but expected (?P<expected>\[[\d, ]+\]|\d+(?:x\d+)+)",
        ("ather got an input of invalid size",),
        why="""nn.DataParallel splits each batch over the GPUs along dim 0, runs one replica per GPU and concatenates their outputs
        along that dimension, so every other dimension must agree between replicas. They differ when a replica's output size
        depends on its own share of the batch: sequences padded to the longest one in that share (captioning, speech, decoding
        to variable lengths), a tensor argument or attribute split with the batch that sets a channel count, a batch not
        divisible by the number of GPUs for an output whose batch is not on dim 0 (a model's cached key/values), or a model
        whose outputs are not batch-first. With one GPU there is nothing to join, so the same code runs.""",
        fix="""make every replica return the same sizes: pad to one length known for the whole batch (pass max_len to forward, or pad
        in the collate function to a fixed length), return outputs with the batch on dim 0 (or set DataParallel(dim=...)),
        use drop_last=True in the DataLoader; or train with DistributedDataParallel (torchrun, one process per GPU), which
        joins no outputs""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: Gather got an input of invalid size: got [16, 24, 9490], but expected [16, 16, 9490]",
             "sgrvinod/a-PyTorch-Tutorial-to-Image-Captioning#8 (DataParallel over several GPUs: captions decoded to different lengths)"),
            ("RuntimeError: Gather got an input of invalid size: got [1, 230], but expected [1, 231] when running with 2 or more gpus", "pytorch/pytorch#44141"),
            ("ValueError: gather got an input of invalid size: got 10x110x29, but expected 10x226x29", "SeanNaren/deepspeech.pytorch#325 (torch 0.4's wording)"),
            ("RuntimeError: Gather got an input of invalid size: got [2, 3, 12, 256, 64], but expected [2, 4, 12, 256, 64] (gather at /opt/conda/conda-bld/pytorch_1544199946412/work/torch/csrc/cuda/comm.cpp:227)",
             "huggingface/transformers#1220 (the last batch not divisible by the GPUs; past key/values have the batch on dim 1)"),
        ],
        not_examples=[
            "RuntimeError: Sizes of tensors must match except in dimension 1. Expected size 24 but got size 16 for tensor number 1 in the list.",
            "all_gather: got an input of size [16, 128] on rank 1",
        ],
        fields=groups,
    ),
    pattern(
        "torch-call-arguments-refused",
        "platform",
        CAUSE,
        E,
        "a torch function refused its arguments: no form of it in the installed torch takes them (code written for another torch version, or an argument of another type)",
        # torch's Python argument parser (python_arg_parser.cpp) lists the forms it has ("expected one of: * (...)")
        r"(?P<function>[\w.]+)(?:\(\))? received an invalid combination of arguments\s*-\s*got\s*\((?P<got>[^)]*)\)",
        ("received an invalid combination of arguments",),
        why="""torch checks each call against the forms (overloads) the installed version defines and lists them after "expected
        one of". The call matches none: either the code was written for another torch version, whose function took these
        arguments (a keyword such as keepdim= added in 0.2, torch.Tensor(tensor, int, ...) accepted before 0.4, a dtype or
        device argument that came later), or one argument is of a type no form takes (a list, a numpy integer or array, a
        float where a Tensor or an int is expected). Compare the "got (...)" with the forms listed: a name or a count of
        arguments no form has is a version difference; a type that differs (numpy.int64, list) is the value to convert.""",
        fix="""STEP: install the torch version the project was written for (its requirements or README; pip show torch), or update the
        call to a form the installed version lists; for a type that no form takes, convert it (int(x) for a numpy integer,
        torch.tensor(x) for a list, .item() for a one-element tensor)""".replace("\n        ", " "),
        examples=[
            ("TypeError: sum received an invalid combination of arguments -got(dim=int, keepdim=bool) but expected one of   no arguments   *(int dim)",
             "Cysu/open-reid#49 (keepdim= on a torch that did not have it)"),
            ("TypeError: new() received an invalid combination of arguments - got (Tensor, int, int, int), but expected one of:",
             "szagoruyko/diracnets#18 (code for torch 0.2 on torch 0.4)"),
            ("TypeError: mul() received an invalid combination of arguments - got (list), but expected one of:", "jiesutd/NCRFpp#31 (a list where a tensor was expected, torch 0.4)"),
            ("TypeError: new() received an invalid combination of arguments - got (numpy.int64, numpy.int64, int), but expected one of:",
             "matheusgadelha/MRTNet#9 (numpy integers as sizes)"),
        ],
        not_examples=[
            "TypeError: forward() got an unexpected keyword argument 'labels'",
            "ValueError: invalid combination of options: --fp16 and --bf16",
        ],
        fields=lambda m, ctx: {**groups(m, ctx), "step": f"{m.group('function')}() got ({m.group('got').strip()})"},
    ),
    pattern(
        "argument-choices-empty",
        "platform",
        CAUSE,
        E,
        "the program offers no value at all for an argument: the list of choices it builds at run time is empty (for a GPU argument: it sees no CUDA GPU)",
        # argparse's refusal with an empty list: choices=list(range(torch.cuda.device_count())) and the like
        r"(?:argument (?P<arg>-{0,2}[\w-]+): )?invalid choice: '?(?P<value>[^'\s]*)'? \(choose from ?\)",
        ("(choose from )", "(choose from)"),
        why="""argparse refused the value because it is not among the argument's choices, and the list of choices is empty: the
        program builds it when it starts, from what it finds on this machine, and found nothing. For a GPU argument (--gpu,
        --device) the list is the GPUs torch sees (range(torch.cuda.device_count())), so an empty list means this process sees
        no CUDA GPU: no NVIDIA driver or GPU, CUDA_VISIBLE_DEVICES set to nothing, or a torch built without CUDA (the CPU
        wheel). For another argument it is what the program lists from a folder or a registry (models, datasets) and found
        none of.""",
        fix="""STEP; for a GPU argument: python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available(),
        torch.cuda.device_count())"   # None or False: install the CUDA build of torch, or check the driver (nvidia-smi) and
        CUDA_VISIBLE_DEVICES; on a machine without a GPU, leave the argument out to run on the CPU""".replace("\n        ", " "),
        examples=[
            ('I receive the following error: "train_and_plot_cv_models.py: error: argument --gpu: invalid choice: 0 (choose from )."',
             "learningmatter-mit/Chem-prop-pred#3 (no CUDA GPU visible; the maintainer: run without the GPU flag)"),
            ("`train.py: error: argument --gpu: invalid choice: 0 (choose from )`", "gfm-collab/chemprop-IR#3"),
            ("invalid choice: 1 (choose from)", "chemprop/chemprop#141 (the maintainer: what the error looks like when no CUDA GPU is detected)"),
        ],
        not_examples=[
            "train.py: error: argument --gpu: invalid choice: 4 (choose from 0, 1, 2, 3)",  # a GPU that is not there: the list says which are
            "main.py: error: argument --gpus: invalid _gpus_allowed_type value: ''",
        ],
        fields=lambda m, ctx: {**groups(m, ctx), "step": empty_choices_step(m.group("arg") or "", m.group("value"))},
    ),
    pattern(
        "loss-logits-labels-mismatch",
        "numerics",
        CAUSE,
        E,
        "the loss got logits and labels of different shapes: the model's number of classes (or its batch) is not the data's",
        # TensorFlow's softmax cross-entropy kernel (xent_op.cc): "must be broadcastable" (1.5+), "must be same size" (before)
        r"logits and labels must be (?:broadcastable|same size): logits_size=\[(?P<logits>[\d, ]+)\] labels_size=\[(?P<labels>[\d, ]+)\]",
        ("logits and labels must be",),
        why="""A softmax cross-entropy takes logits of shape [batch, classes] from the model and one-hot labels of the same shape
        from the data. Here they differ. In the last dimension: the model's output layer has another number of classes than
        the labels (a head built for one dataset, 1000 or 8631 classes, trained on another; a class count in the config that
        is not the data's; a stray folder counted as a class by a directory loader). In the first: the model's output is not
        one row per example (a reshape or flatten that folds the batch, a fixed batch size in the graph) or the labels were
        batched differently. The sizes the message gives say which.""",
        fix="""STEP; set the model's number of classes to the data's (the config's num_classes, the last Dense/Linear layer's
        size) or remap the labels to the classes the model has; for a batch mismatch print the logits' and labels' shapes
        after each reshape""".replace("\n        ", " "),
        examples=[
            ("  (0) Invalid argument: logits and labels must be broadcastable: logits_size=[128,8631] labels_size=[128,501]",
             "swghosh/DeepFace#2 (a head for 8631 identities, labels for 501)"),
            ("logits and labels must be broadcastable: logits_size=[32,8] labels_size=[32,7]",
             "krishnaik06/Deep-Learning-Car-Brand#5 (a desktop.ini folder counted as an eighth class)"),
            ("InvalidArgumentError: logits and labels must be broadcastable: logits_size=[64,48] labels_size=[32,48]", "tensorflow/models#6036 (a reshape that doubled the batch)"),
            ("InvalidArgumentError (see above for traceback): logits and labels must be same size: logits_size=[9,2] labels_size=[10,2]", "perseus784/BvS#4 (TF 1.2's wording)"),
        ],
        not_examples=[
            "logits and labels have the same shape: [128, 501]",
            "ValueError: Shapes (None, 7) and (None, 8) are incompatible",
        ],
        fields=lambda m, ctx: {**groups(m, ctx), "step": logits_labels_step(m.group("logits"), m.group("labels"))},
    ),
]




PATTERNS_BY_FRAME = [
    pattern(
        "spawn-child-read-nothing",
        "dataloader",
        CAUSE,
        E,
        "a process started by spawn (a DataLoader worker, mp.spawn) read nothing from its parent: the parent failed to send it its work",
        # the exception's line (python-exception claims it); the traceback's innermost frame, spawn's own _main, decides it
        # (knowledge/story.py): pickle.load of an empty file prints the same line
        r"^EOFError: Ran out of input",
        ("EOFError: Ran out of input",),
        why="""Under the spawn start method (the only one on Windows, the default on macOS) a new process starts an empty
        interpreter and reads the object it is to run (a DataLoader worker with the dataset, or mp.spawn's function and
        arguments) from a pipe its parent writes with pickle. "Ran out of input" in spawn's _main means that pipe was empty:
        the parent could not pickle that object and stopped (its own error, printed beside this one, names what: "can't
        pickle ...", "Can't pickle local object ...", a BrokenPipeError), or the parent process died first. So the child's
        error is a consequence; what the dataset or the function holds decides it: open files, locks, generators, lambdas or
        local functions, a module object, a database handle. On Windows a script without the `if __name__ == "__main__":`
        guard is run again by every child, which fails the same way.""",
        fix="""DataLoader(..., num_workers=0) to confirm (the data is then loaded in the main process and the real error, if any,
        is raised there); then make what the worker receives picklable: open files, HDF5/LMDB handles and database connections
        in __getitem__ or worker_init_fn rather than in __init__, define collate functions and transforms at module level (no
        lambdas), and keep the training code under if __name__ == "__main__":; the parent's own error beside this one names
        the object""".replace("\n        ", " "),
        examples=[
            ("EOFError: Ran out of input", "Ghailen-Ben-Achour/PointNet2_Segmentation#5 (Windows, the DataLoader's workers at spawn)"),
            ("EOFError: Ran out of input", "yewzijian/RPMNet#28 (Windows; num_workers 0 fixed it)"),
            ("EOFError: Ran out of input", "jfzhang95/pytorch-deeplab-xception#220 (the parent's 'TypeError: can't pickle module objects' beside it)"),
        ],
        # the same line raised elsewhere (pickle.load of an empty file) is not this class: the frame decides
        not_examples=["EOFError: Compressed file ended before the end-of-stream marker was reached", "EOFError"],
        after=("spawn-unpicklable-object", "unpicklable-object"),  # the parent's own pickling error, when the log shows it
        refines="python-exception",
    ),
]


def by_frame(sign, exception: str = "", message: str = "") -> Optional[tuple[str, dict]]:
    """The class an unrecognised exception's traceback decides (knowledge/story.py): the finding id and its evidence."""
    said = spawn_child_read_nothing(sign, exception, message)
    return ("spawn-child-read-nothing", said) if said else None
