"""Rules for classes of messages of the sixteenth round (issue 35, diagB16): the honest "unrecognised" and "inconclusive"
answers on the retired held-out part heldout15 whose log holds a line that decides the cause, in a class that recurs
across projects.

- the gloo backend (the only one torch's Windows and macOS wheels have, or the one a run chose) refused what the run asked
  of it: an argument only NCCL takes (dist.barrier(device_ids=[...]): "Function argument device_ids not supported for the
  selected backend gloo"), or a network device gloo could not make on this machine ("makeDeviceForHostname(): unsupported
  gloo device", Windows' libuv transport: "makeUVDevice(): interface or hostname can't be empty");
- a container tool did not take the option that gives the container its GPUs: docker older than 19.03 has no --gpus
  ("unknown flag: --gpus"), and Singularity/Apptainer read --nv written after the image as the command to run in it
  ("exec: --nv: not found");
- code written for Python 2 run under Python 3: a dict method, a built-in or a module Python 3 removed ("'dict' object has
  no attribute 'iteritems'", "name 'xrange' is not defined", "No module named 'cPickle'", "Missing parentheses in call to
  'print'"), a dict's keys/values or map()/zip()/filter() indexed as the lists they were in Python 2;
- a registry of components (OpenMMLab's mmcv/mmengine, detectron2's, fvcore's) has no entry for the type a configuration
  names ("KeyError: 'None is not in the detector registry'", "No object named 'X' found in 'BACKBONE' registry!"): the
  configuration's type is misspelt or missing, the module that registers it was not imported, or the installed library is
  another version than the configuration's.

(Rules of the round that widen existing ones: torch's lower-case "AssertionError: invalid device id" is
cuda-invalid-device-ordinal, whose fix names the gpu_ids option of the pix2pix/CycleGAN family of projects; a program's own
"No image valid" / "no image is valid" is dataset-reported-empty.)

Their examples are real lines from public threads (thread in the source); their counter-examples the nearest lines
that mean something else.
"""

from __future__ import annotations

import re

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, groups, pattern

E = Severity.ERROR


def gloo_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    if out.get("argument"):
        backend = out.get("backend", "gloo")
        out["step"] = (f"the code passes {out['argument']} (an NCCL-only argument: dist.barrier(device_ids=[local_rank]), as YOLOv5/v6's "
                       f"torch_distributed_zero_first does) to a {backend} process group: on Linux with GPUs start the group with "
                       "init_process_group('nccl'); where only gloo exists (Windows, macOS) leave the argument out (dist.barrier() when "
                       "dist.get_backend() != 'nccl'), or train as one process (one GPU, or the project's DataParallel mode)")
    else:
        out["step"] = ("gloo could not make its network device for this machine's hostname or interface: the Windows wheels of torch "
                       "2.8 and 2.9 fail so (their libuv transport), as does a hostname that resolves to no usable address (a VPN's or "
                       "a virtual machine's adapter) or GLOO_SOCKET_IFNAME set to an address instead of an interface's name: unset "
                       "GLOO_SOCKET_IFNAME or give it an interface name, set MASTER_ADDR=127.0.0.1 for one machine; code that passes a GPU "
                       "as init_process_group(device_id=...) asks gloo for a device per GPU: leave device_id out where the backend is "
                       "gloo; one GPU needs no "
                       "process group (skip init_process_group); several GPUs on Windows: run under WSL2 or Linux (nccl), or with "
                       "another torch version")
    return out


def container_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    if out.get("gpus"):
        out["step"] = ("this docker is older than 19.03 and has no --gpus option: upgrade docker (19.03 or later) and install the "
                       "NVIDIA Container Toolkit (nvidia-container-toolkit), then docker run --gpus all ...; with an older docker "
                       "that cannot be upgraded: nvidia-docker2's docker run --runtime=nvidia (a Makefile or script that writes "
                       "--gpus needs the newer docker)")
    else:
        out["step"] = ("Singularity/Apptainer options go before the image: singularity exec --nv -B outside:inside image.sif "
                       "command (written after the image, --nv is the command the container is asked to run); a wrapper script "
                       "that builds the command line (a site's singbatch) must put them there too")
    return out


def python2_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    what = next((out[k] for k in ("method", "builtin", "module", "function", "function2", "statement", "view") if out.get(k)), "")
    replacement = PY3.get(what.split(".")[-1], "")
    named = f"{what}: {replacement}; " if what and replacement else ""
    out["step"] = (f"{named}run the project under the Python 2 it was written for (a python2.7 environment), or port the code: "
                   "2to3 -w FILE (or replace each Python 2 name by hand: dict.items()/keys()/values(), range, str, pickle, io, "
                   "print() as a function, list(d.keys()) where a list is indexed); a newer release of the project may already run on "
                   "Python 3")
    return out


# Python 2's names and what Python 3 has in their place
PY3 = {
    "iteritems": "d.items()", "itervalues": "d.values()", "iterkeys": "d.keys()", "has_key": "key in d",
    "viewitems": "d.items()", "viewkeys": "d.keys()", "viewvalues": "d.values()",
    "xrange": "range()", "unicode": "str", "basestring": "str", "raw_input": "input()", "unichr": "chr()", "long": "int",
    "execfile": "exec(open(f).read())", "cmp": "(a > b) - (a < b), or functools.cmp_to_key for a sort",
    "cPickle": "import pickle", "cStringIO": "from io import StringIO (BytesIO for bytes)", "StringIO": "from io import StringIO",
    "urllib2": "urllib.request", "urlparse": "urllib.parse", "Queue": "import queue", "ConfigParser": "import configparser",
    "__builtin__": "import builtins", "httplib": "http.client", "Tkinter": "import tkinter", "commands": "subprocess",
    "izip": "zip()", "imap": "map()", "ifilter": "filter()", "izip_longest": "itertools.zip_longest",
    "print": "print(...) as a function", "exec": "exec(...) as a function",
    "dict_keys": "list(d.keys())", "dict_values": "list(d.values())", "dict_items": "list(d.items())",
    "map": "list(map(...))", "filter": "list(filter(...))", "zip": "list(zip(...))", "range": "list(range(...))",
    "maketrans": "str.maketrans", "letters": "string.ascii_letters", "lowercase": "string.ascii_lowercase",
    "uppercase": "string.ascii_uppercase",
}


def registry_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    name, registry = out.get("name") or out.get("name2") or "", out.get("registry") or out.get("registry2") or ""
    out["name"], out["registry"] = name, registry
    if name in ("None", "", "null"):
        # mmdetection 1.x's build_from_cfg formats the lookup's result, not the type it looked up: None whatever the name was
        out["step"] = (f"the message does not name the type (mmdetection 1.x's build_from_cfg prints None whatever it looked up): print "
                       f"the type the configuration gives the {registry or 'component'} (cfg.model.type); a project's own component "
                       "(its detector, head or dataset) is registered only when the project's code is installed with the library it "
                       "bundles (pip install -v -e . in the project, or its modules imported before the build), and the installed "
                       "library must be the version the configuration was written for; an empty type or a base configuration not "
                       "read gives the same")
    else:
        out["step"] = (f"'{name}' is not registered in the {registry or 'component'} registry of the installed library: check its "
                       "spelling against the library's registered names, import the module that registers it before the build "
                       "(the project's own package, custom_imports in an OpenMMLab configuration, a plug-in's import), and install "
                       "the version of the library (mmdet, mmcv, mmengine, detectron2) the configuration was written for: a project "
                       "that bundles its own copy of the library needs that copy built and on the path (pip install -v -e . in it)")
    return out


PATTERNS = [
    pattern(
        "gloo-backend-refused",
        "gloo",
        CAUSE,
        E,
        "the gloo backend (the only one on Windows and macOS, or the one the run chose) refused what it was asked: an argument "
        "only NCCL takes, or a network device it cannot make on this machine",
        # torch.distributed's barrier() and friends (device_ids is NCCL's only), c10d's GlooDeviceFactory (Windows: libuv)
        r"Function argument (?P<argument>device_ids) not supported for the selected backend (?P<backend>\w+)"
        r"|(?P<device>(?:makeDevice(?:ForHostname|ForInterface)\(\): )?unsupported gloo device"
        r"|makeUVDevice\(\): interface or hostname can't be empty)",
        ("not supported for the selected backend", "unsupported gloo device", "interface or hostname can't be empty"),
        why="""torch.distributed runs collectives through a backend: NCCL on Linux GPUs, gloo on the CPU and everywhere NCCL is
        not built (torch's Windows and macOS wheels have gloo only, so code written for NCCL falls back to it there). gloo does
        not take NCCL's per-GPU arguments: dist.barrier(device_ids=[local_rank]) names the GPU NCCL should use for the
        barrier, and any other backend refuses it. gloo also makes its own network device from the machine's hostname or
        GLOO_SOCKET_IFNAME's interface when the group starts; on Windows (torch 2.8 and 2.9 wheels) and with a hostname that
        resolves to no usable address it cannot, and init_process_group stops before any training.""",
        fix="STEP",
        examples=[
            ("RuntimeError: Function argument device_ids not supported for the selected backend gloo",
             "huawei-noah/Efficient-Computing#90 (Gold-YOLO on Windows: the answer: use DataParallel mode); meituan/YOLOv6#361 (the "
             "answer: set the backend to nccl)"),
            ("RuntimeError: makeDeviceForHostname(): unsupported gloo device",
             "IAHispano/Applio#1019, RVC-Boss/GPT-SoVITS#2626, SystemPanic/vllm-windows#19 (Windows, torch 2.8)"),
            ("Since recent updates, activating multi GPU on Windows generates an error (unsupported gloo device) and training is stopped.",
             "Nerogar/OneTrainer#1122 (init_process_group(..., device_id=device) on Windows' gloo; the traceback cut before its line)"),
            ("RuntimeError: GlooDeviceFactory::makeUVDevice(): interface or hostname can't be empty",
             "IAHispano/Applio#79 (Windows: the hostname the program passed)"),
        ],
        not_examples=[
            "[enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:83] ifa != nullptr. Unable to find address for: ib0",  # gloo-no-address
            "RuntimeError: Distributed package doesn't have NCCL built in",  # the NCCL side: backend-not-built
            "    dist.barrier(device_ids=[local_rank])",
        ],
        fields=gloo_fields,
    ),
    pattern(
        "container-gpu-option-unknown",
        "platform",
        CAUSE,
        E,
        "the container tool did not take the option that gives the container its GPUs (docker older than 19.03 has no --gpus; "
        "Singularity's --nv written after the image)",
        # docker's CLI (cobra) before 19.03; Singularity 2.x/3.x's action script given "--nv" as the command to exec
        r"unknown flag: (?P<gpus>--gpus)(?![\w-])"
        r"|(?:exec|\.singularity\.d/actions/\w+):(?: \d+:)? exec: (?P<nv>--nv(?:ccli)?|--rocm): (?:not found|No such file or directory)",
        ("unknown flag: --gpus", "exec: --nv", "exec: --rocm"),
        why="""A container gets GPUs only through its tool's option: docker run --gpus (docker 19.03 and later, with the NVIDIA
        Container Toolkit), singularity/apptainer exec --nv. docker before 19.03 does not know --gpus and stops before a
        container starts (make reports the command's status, 125). Singularity reads its own options only before the image's
        name; what comes after is the command to run inside it, so an --nv there is run as a program and is not found: the
        container then has no GPU either.""",
        fix="STEP",
        examples=[
            ("unknown flag: --gpus", "sarnikowski/bert_in_a_flask#5 (make train GPU=1: docker older than 19.03; the maintainer: docker >= 19.03 "
             "and nvidia-container-toolkit)"),
            ("/.singularity.d/actions/exec: 9: exec: --nv: not found",
             "jade-hpc-gpu/jade-hpc-gpu.github.io#82 (the site's singbatch wrote --nv and -B after the image)"),
        ],
        not_examples=[
            "unknown flag: --gpu-memory-utilization",  # a program's own option, not docker's
            "Error: unknown flag: --gpus-per-task",
            'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].',  # docker-gpu-runtime-missing
            "singularity exec --nv image.sif nvidia-smi",
        ],
        fields=container_fields,
    ),
    pattern(
        "python2-code-under-python3",
        "platform",
        CAUSE,
        E,
        "code written for Python 2 runs under Python 3: it uses a name or a behaviour Python 3 removed",
        # a dict method; a built-in; a module (its Python 3 name is another); print/exec as statements; a view or an iterator indexed
        r"has no attribute '(?P<method>iteritems|itervalues|iterkeys|has_key|viewitems|viewkeys|viewvalues)'"
        r"|NameError: (?:global )?name '(?P<builtin>xrange|unicode|basestring|raw_input|unichr|execfile|cmp|long)' is not defined"
        r"|No module named '?(?P<module>cPickle|cStringIO|urllib2|urlparse|Queue|ConfigParser|__builtin__|httplib|Tkinter)\b'?"
        r"|cannot import name '?(?P<function>izip|imap|ifilter|izip_longest)'?"
        r"|module '(?:itertools|string)' has no attribute '(?P<function2>izip|imap|ifilter|izip_longest|maketrans|letters|lowercase|uppercase)'"
        r"|Missing parentheses in call to '(?P<statement>print|exec)'"
        r"|'(?P<view>dict_keys|dict_values|dict_items|map|filter|zip)' object (?:is not subscriptable|does not support indexing)",
        ("iteritems", "itervalues", "iterkeys", "has_key", "viewitems", "viewkeys", "viewvalues", "is not defined", "No module named",
         "cannot import name", "has no attribute", "Missing parentheses in call to", "is not subscriptable", "does not support indexing"),
        why="""Python 3 removed or renamed what Python 2 code relies on: the dict methods iteritems/itervalues/iterkeys/has_key,
        the built-ins xrange, unicode, basestring, raw_input, the modules cPickle, cStringIO, urllib2, Queue, ConfigParser,
        itertools' izip/imap, print and exec as statements; and dict.keys()/values(), map(), zip() and filter() return views
        or iterators, not lists that can be indexed. The project (or the part of it that failed: a training loop's helper, a
        data script, TensorFlow 1 code reporting through its Coordinator) was written for Python 2 and is run under Python 3.
        Nothing about the GPUs or the distribution is involved.""",
        fix="STEP",
        examples=[
            ("INFO:tensorflow:Error reported to Coordinator: <class 'AttributeError'>, 'dict' object has no attribute 'iteritems'",
             "google-research/google-research#61 (depth_from_video_in_the_wild: the maintainer: a Python 2 / Python 3 issue)"),
            ("AttributeError: 'dict' object has no attribute 'has_key'", "a Python 2 dict method under Python 3 (pytorch/examples-era scripts)"),
            ("NameError: name 'xrange' is not defined", "Python 2's xrange under Python 3 (range)"),
            ("ModuleNotFoundError: No module named 'cPickle'", "Python 2's cPickle (pickle in Python 3)"),
            ("SyntaxError: Missing parentheses in call to 'print'. Did you mean print(...)?", "Python 2's print statement under Python 3"),
            ("TypeError: 'dict_keys' object is not subscriptable", "d.keys()[0], a Python 2 list, a view in Python 3"),
        ],
        not_examples=[
            "AttributeError: 'EasyDict' object has no attribute 'lr'",  # a configuration's missing key: config-key-missing
            "NameError: name 'torch' is not defined",
            "ModuleNotFoundError: No module named 'pickle5'",
            "TypeError: 'NoneType' object is not subscriptable",
            "AttributeError: 'str' object has no attribute 'decode'",  # h5py 3 under an older Keras, not Python 2 code
        ],
        fields=python2_fields,
    ),
    pattern(
        "component-not-in-registry",
        "platform",
        CAUSE,
        E,
        "the configuration names a component (a model, a backbone, a dataset, a hook) that the library's registry has no "
        "entry for",
        # mmcv's Registry (mmdet 1.x/2.x), mmengine's (OpenMMLab 2.x: "... registry. Please check whether the value ..."),
        # fvcore's / detectron2's Registry
        r"(?P<name>[\w.\-]+) is not in the (?:(?P<scope>[\w\-]+)::)?(?P<registry>[\w ]+?) registry\b"
        r"|No object named '(?P<name2>[^']+)' found in '(?P<registry2>[^']+)' registry",
        ("registry",),
        why="""OpenMMLab's libraries (mmcv, mmengine, mmdet, mmseg, ...) and detectron2 build the model, its parts, the datasets
        and the hooks from a configuration: each `type` names an entry of a registry that a class enters when the module that
        defines it is imported. The type here has no entry: it is misspelt or empty (None: the configuration has no type
        there, often a base configuration that was not read), the module that registers it (the project's own, a plug-in)
        was not imported, or the installed library is another version than the configuration was written for (components
        are renamed and moved between releases; a project that bundles its own copy of the library runs another one when that
        copy was not built).""",
        fix="STEP",
        examples=[
            ("KeyError: 'None is not in the detector registry'", "microsoft/RepPoints#40 (dist_train.sh: the model's type did not resolve "
             "in the bundled mmdetection)"),
            ("KeyError: 'RepPointsDetector is not in the models registry'", "mmdetection 1.x's wording of the same lookup"),
            ("KeyError: 'CustomDataset is not in the mmdet::dataset registry. Please check whether the value of `CustomDataset` is correct "
             "or it was registered as expected. More details can be found at https://mmengine.readthedocs.io/en/latest/advanced_tutorials/"
             "config.html#import-the-custom-module'", "mmengine's wording (OpenMMLab 2.x)"),
            ("KeyError: \"No object named 'build_resnet_fpn_backbone_custom' found in 'BACKBONE' registry!\"", "detectron2/fvcore's wording"),
        ],
        not_examples=[
            "01/15 18:29:50 - OpenCompass - DEBUG - Modules of opencompass's partitioner registry have been automatically imported",
            '  File "/x/mmengine/registry/registry.py", line 570, in build',
            "KeyError: 'lr'",
        ],
        fields=registry_fields,
    ),
]
