"""Whose code a traceback frame is: the user's, Python's own, or a library's (and which
project's issue tracker owns it), however the library was installed.

A frame is a library's when its path lies in an installed-packages folder (site-packages,
dist-packages, a conda `pkgs/` cache, an `.egg`), in Python's own library (`lib/python3.X`,
`/usr/lib/python3`, Windows' `Lib\\`, `<frozen importlib._bootstrap>`), or in a source checkout
of a known library (`~/DeepSpeed/deepspeed/runtime/engine.py`, `transformers/src/transformers/…`,
`Megatron-LM/megatron/core/…`: an editable install). A notebook cell (`<ipython-input-3-…>`,
`/tmp/ipykernel_12/34.py`) and a script the user runs are the user's.
"""

from __future__ import annotations

import re
from typing import Optional

# Top-level package -> its GitHub project (where its issues are filed).
PROJECTS = {
    "torch": "pytorch/pytorch",
    "torchvision": "pytorch/vision",
    "torchaudio": "pytorch/audio",
    "torchtitan": "pytorch/torchtitan",
    "torchtune": "pytorch/torchtune",
    "torchrec": "pytorch/torchrec",
    "torchdata": "pytorch/data",
    "torch_xla": "pytorch/xla",
    "torchelastic": "pytorch/elastic",
    "functorch": "pytorch/pytorch",
    "thunder": "Lightning-AI/lightning-thunder",  # a source checkout: lightning-thunder/thunder/distributed/__init__.py (Lightning-AI/lightning-thunder#448)
    "caffe2": "pytorch/pytorch",  # its Python package, built in a pytorch checkout (pytorch/build/caffe2/python/workspace.py)
    "transformers": "huggingface/transformers",
    "accelerate": "huggingface/accelerate",
    "trl": "huggingface/trl",
    "peft": "huggingface/peft",
    "datasets": "huggingface/datasets",
    "diffusers": "huggingface/diffusers",
    "huggingface_hub": "huggingface/huggingface_hub",
    "safetensors": "huggingface/safetensors",
    "tokenizers": "huggingface/tokenizers",
    "timm": "huggingface/pytorch-image-models",
    "deepspeed": "deepspeedai/DeepSpeed",
    "lightning": "Lightning-AI/pytorch-lightning",
    "pytorch_lightning": "Lightning-AI/pytorch-lightning",
    "lightning_fabric": "Lightning-AI/pytorch-lightning",
    "megatron": "NVIDIA/Megatron-LM",
    "nemo": "NVIDIA/NeMo",
    "apex": "NVIDIA/apex",
    "transformer_engine": "NVIDIA/TransformerEngine",
    "colossalai": "hpcaitech/ColossalAI",
    "llamafactory": "hiyouga/LLaMA-Factory",
    "axolotl": "axolotl-ai-cloud/axolotl",
    "openrlhf": "OpenRLHF/OpenRLHF",
    "verl": "volcengine/verl",
    "ray": "ray-project/ray",
    "vllm": "vllm-project/vllm",
    "sglang": "sgl-project/sglang",
    "detectron2": "facebookresearch/detectron2",
    "fairseq": "facebookresearch/fairseq",
    "fairscale": "facebookresearch/fairscale",
    "xformers": "facebookresearch/xformers",
    "mmengine": "open-mmlab/mmengine",
    "mmcv": "open-mmlab/mmcv",
    "mmdet": "open-mmlab/mmdetection",
    "open_clip": "mlfoundations/open_clip",
    "flash_attn": "Dao-AILab/flash-attention",
    "bitsandbytes": "bitsandbytes-foundation/bitsandbytes",
    "triton": "triton-lang/triton",
    "horovod": "horovod/horovod",
    "numpy": "numpy/numpy",
}

# Folders that hold installed packages; the package is the folder right after them.
INSTALLED = re.compile(r"[/\\](?:site-packages|dist-packages)[/\\]")
# A conda package cache: /opt/conda/pkgs/pytorch-2.1.0-py3.10_cuda12.1_0/...
CONDA_PKGS = re.compile(r"[/\\]pkgs[/\\](?P<name>[A-Za-z][\w.]*?)-\d[^/\\]*[/\\]")
# The standard library's packages and modules a traceback passes through (threads, processes, pickling, imports, I/O).
STDLIB_NAMES = ("multiprocessing", "concurrent", "asyncio", "importlib", "json", "logging", "email", "http", "urllib", "xml", "ctypes",
                "unittest", "encodings", "collections", "distutils", "sqlite3", "xmlrpc", "tkinter", "threading", "subprocess", "runpy",
                "pickle", "copy", "copyreg", "socket", "ssl", "queue", "shutil", "os", "argparse", "pathlib", "contextlib", "functools",
                "typing", "inspect", "abc", "tempfile", "zipfile", "tarfile", "selectors", "weakref", "traceback", "warnings", "codecs",
                "enum", "dataclasses", "linecache", "pdb", "bdb", "socketserver", "ntpath", "posixpath", "genericpath", "sre_compile",
                "sre_parse", "gzip", "glob")
# Python's own library (the standard library, wherever Python lives).
# On Windows the library folder is `lib` as often as `Lib`, right under the Python install (Visual Studio's is Python37_64),
# a conda base or an environment.
STDLIB = re.compile(r"[/\\]lib[/\\]python\d[\d.]*[/\\]|^/usr/lib/python\d|[/\\]Lib[/\\]|^<frozen |^<(?:string|built-in)>$"
                    r"|(?i:[/\\](?:python\d*(?:[-_]\d+)?|(?:ana|mini)conda\d*|miniforge\d*|mambaforge|\.?venv|envs[/\\][^/\\]+)\\lib\\)"
                    # an environment folder of any name (E:\envs_1\python3.8_tensor\lib\multiprocessing\spawn.py): a Windows `lib\`
                    # holding one of the standard library's packages or modules that tracebacks pass through (a project's own lib\
                    # holds models\, utils\, datasets\, none of these)
                    r"|\\lib\\(?:" + "|".join(STDLIB_NAMES) + r")(?:\\|\.py$)")
# A package pip is building (`pip install` from source): pip-install-XXXX/flash-attn_<32 hex>/setup.py, pip-req-build-XXXX/setup.py
PIP_BUILD = re.compile(r"[/\\]pip-install-\w+[/\\](?P<name>[A-Za-z][\w.\-]*?)_[0-9a-f]{32}[/\\]|[/\\]pip-(?:req-)?build-\w+[/\\]")
# The code a model brings from the Hugging Face Hub (trust_remote_code): the model's, not the user's
HUB_CODE = re.compile(r"[/\\]transformers_modules[/\\](?P<model>[^/\\]+)[/\\]")
# A repository torch.hub fetched and runs (torch.hub.load('ultralytics/yolov5', ...)): the repository's code, not torch's
TORCH_HUB = re.compile(r"[/\\]torch[/\\]hub[/\\](?P<repo>(?!checkpoints[/\\])[^/\\]+)[/\\]")
# Code a library writes and runs: torch inductor's and triton's caches, unsloth's compiled trainers
GENERATED = re.compile(r"[/\\](?:(?P<inductor>torchinductor_[^/\\]+)|\.triton[/\\](?P<triton>cache)|(?P<name>[a-z]\w*?)_compiled_cache)[/\\]")
# Ray ships the job's working directory to each node: the path after it is the job's own layout
RAY_WORKING_DIR = re.compile(r"^.*?[/\\]runtime_resources[/\\](?:working_dir|py_modules)_files[/\\]_ray_pkg_[0-9a-f]+[/\\]")
EGG = re.compile(r"^[\w.\-]+\.egg$")
USER_PSEUDO = re.compile(r"^<(?:ipython-input|stdin|console)|[/\\]ipykernel_\d+[/\\]")
SEP = re.compile(r"[/\\]+")
# torch's own tree is torch's wherever it lies (a source build, a copied wheel).
ANYWHERE = {"torch"}
# A package's console script in an environment's bin/ (Scripts\ on Windows): the launcher's own frame.
CONSOLE_SCRIPTS = {"torchrun": "torch", "deepspeed": "deepspeed", "accelerate": "accelerate", "llamafactory-cli": "llamafactory",
                   "colossalai": "colossalai", "tune": "torchtune", "ray": "ray", "trl": "trl", "lightning": "lightning",
                   "horovodrun": "horovod", "lerobot-train": "lerobot", "text-generation-server": "text_generation_server"}
CONSOLE_SCRIPT = re.compile(r"[/\\](?:bin|Scripts)[/\\](?P<name>[\w.\-]+?)(?:-script\.py|\.exe)?$")
# pip's Windows launcher of any package's console script (Scripts\accelerate.exe\__main__.py, Scripts\dora.exe\__main__.py):
# never the user's own file, whatever the script's name
PIP_LAUNCHER = re.compile(r"[/\\]Scripts[/\\](?P<name>[\w.\-]+?)\.exe[/\\]__main__\.py$", re.IGNORECASE)
# An environment's own bin/ (conda's, a venv's, pip --user's ~/.local/bin, /usr/local/bin, Homebrew's): a file there
# without an extension is a package's console script (text-generation-server, lerobot-train, horovodrun), not a script of
# the user's (which runs as train.py)
ENV_BIN = re.compile(r"(?:[/\\](?:envs[/\\][^/\\]+|(?:ana|mini)conda\d*|miniforge\d*|mambaforge|conda|[\w.\-]*venv[\w.\-]*|\.local)|^/usr/local|^/opt/homebrew)"
                     r"[/\\]bin[/\\](?P<name>[A-Za-z][\w\-]*)$")


def package_of(path: str) -> Optional[str]:
    """The top-level package a library frame belongs to ('torch', 'deepspeed', 'python' for the
    standard library), or None for the user's own code."""
    if USER_PSEUDO.search(path):
        return None
    path = RAY_WORKING_DIR.sub("", path)
    m = INSTALLED.search(path)
    if m is not None:
        parts = [p for p in SEP.split(path[m.end():]) if p]
        while len(parts) > 1 and EGG.match(parts[0]):  # deepspeed-0.9.0-py3.10.egg/deepspeed/...
            parts = parts[1:]
        return module_name(parts[0]) if parts else "python"
    m = CONDA_PKGS.search(path)
    if m is not None:
        name = m.group("name").replace("-", "_")
        return "torch" if name == "pytorch" else name
    m = PIP_BUILD.search(path)
    if m is not None:
        return module_name((m.group("name") or "the package pip is building").replace("-", "_"))
    m = GENERATED.search(path)
    if m is not None:
        return "torch" if m.group("inductor") else "triton" if m.group("triton") else m.group("name")
    m = HUB_CODE.search(path)
    if m is not None:
        return f"{m.group('model')} (the model's code from the Hub)"
    m = TORCH_HUB.search(path)
    if m is not None:
        return f"{m.group('repo')} (a repository torch.hub fetched)"
    launcher = PIP_LAUNCHER.search(path)
    if launcher is not None:
        name = launcher.group("name")
        return CONSOLE_SCRIPTS.get(name, name.replace("-", "_"))
    script = CONSOLE_SCRIPT.search(path)
    if script is not None and script.group("name") in CONSOLE_SCRIPTS:
        return CONSOLE_SCRIPTS[script.group("name")]
    script = ENV_BIN.search(path)
    if script is not None:
        name = script.group("name")
        return CONSOLE_SCRIPTS.get(name) or (head if (head := name.split("-", 1)[0]) in PROJECTS else name.replace("-", "_"))
    if STDLIB.search(path) or path.startswith("<"):
        return "python"
    parts = [p for p in SEP.split(path) if p]
    if path.endswith((".pyx", ".pxd", ".pxi")):  # Cython source compiled into a package (python/ray/_raylet.pyx, pandas/_libs/hashtable_class_helper.pxi)
        # (its path as the package was built, relative: pandas/_libs/index.pyx is pandas')
        relative = not path.startswith(("/", "\\")) and re.match(r"^[A-Za-z]:", path) is None
        return next((p for p in parts if p in PROJECTS), (parts[0] if relative else parts[-2]) if len(parts) > 1 else "a compiled extension")
    for i, part in enumerate(parts[:-1]):
        if EGG.match(part):
            return module_name(parts[i + 1])
        if part in PROJECTS and (part in ANYWHERE or checkout(parts, i)):
            return part
    return packaged_checkout(parts)


def packaged_checkout(parts: list[str]) -> Optional[str]:
    """A project whose tracker is not known, laid out as a package: a GitHub archive unpacked
    (ultralytics-main/ultralytics/nn/tasks.py) or the src/ layout of an installable project
    (nanotron/src/nanotron/config/config.py). Its code is that package's, not the user's."""
    for i in range(1, len(parts) - 1):
        name, parent = parts[i], parts[i - 1]
        flat = re.sub(r"[^a-z0-9]", "", name.lower())
        if not flat or not name.isidentifier():
            continue
        if re.fullmatch(rf"{re.escape(name)}[-_.](?:main|master|\d[\w.]*)", parent, re.IGNORECASE):
            return name
        if parent == "src" and i >= 2 and re.sub(r"[^a-z0-9]", "", parts[i - 2].lower()).startswith(flat):
            return name
    return None


# Known packages whose name projects also give a folder of their own (OpenPCDet's pcdet/datasets/, a repo's
# datasets/coco/): only a checkout's own layout (src/datasets, or in a folder named after the project) is the library's.
FOLDER_NAMES = {"datasets", "lightning"}


def checkout(parts: list[str], i: int) -> bool:
    """parts[i] is a known package's name: a source checkout of it (an editable install) when it
    sits in a `src/` folder or in a folder named after the project (DeepSpeed/deepspeed,
    Megatron-LM/megatron), or holds the frame two folders deep (megatron/core/x.py); a folder of the
    user's that is only called like a library (~/work/deepspeed/train.py, ../pcdet/datasets/kitti/x.py:
    FOLDER_NAMES) is not."""
    parent = parts[i - 1] if i > 0 else ""
    flat = re.sub(r"[^a-z0-9]", "", parent.lower())
    named = parent == "src" or (bool(flat) and flat.startswith(parts[i].replace("_", "")))
    return named or (len(parts) - i >= 3 and parts[i] not in FOLDER_NAMES)


def module_name(part: str) -> str:
    """'torch', from 'torch' or 'six.py' or 'typing_extensions.py'."""
    return part[:-3] if part.endswith(".py") else part


def is_library(path: str) -> bool:
    return package_of(path) is not None


def project_of(path: str) -> Optional[str]:
    """'deepspeedai/DeepSpeed' for a frame of deepspeed's; None for the user's code, Python's own
    library, or a package whose tracker is not known."""
    package = package_of(path)
    return PROJECTS.get(package) if package else None


# Whose C++/CUDA source a native check names ("... INTERNAL ASSERT FAILED at "<path>":N", "Expected ... to be true" with its
# file, "Check failed" at file:line): torch's own tree is aten/, c10/ (and c10d/), caffe2/, torch/csrc/, torch/lib/ (c10d
# and THD before torch 1.8: pytorch/pytorch's torch/lib/c10d/reducer.cpp), THC/THCUNN; built at /pytorch/ (the official
# wheels' build root), in a conda-bld pytorch_<stamp>/work/ or a pip build of pytorch, or relative to its build folder (../).
# (TORCH_SOURCE is written to be used as a lookahead at a path's first character too: patterns/classes12b.py)
TORCH_SOURCE = (r"[^\"\s]*?(?<![^/\\\"'\s])(?:aten|c10d?|caffe2|THC\w*|THD|torch[/\\](?:csrc|lib|include)|third_party[/\\](?:gloo|tensorpipe|kineto|fbgemm))[/\\]"
                r"|/pytorch/|[^\"\s]*?[/\\](?:pytorch_\d+[/\\]work|pip-req-build-\w+[/\\](?:torch|aten|c10)|pytorch(?:-[\d.]+)?[/\\](?:torch|aten|c10))[/\\]")
TORCH_NATIVE = re.compile(TORCH_SOURCE)


def native_owner(path: str) -> Optional[str]:
    """Whose native source file a check's message names: "torch" (PyTorch's own tree, wherever it was built), "extension"
    (a file in any other tree: a project's csrc/, an installed extension's build path, a generated op), or None where the
    path does not decide (a bare file name: torch's reducer.cpp and an extension's sampling.cpp look alike)."""
    path = path.strip().strip("\"'`")
    if TORCH_NATIVE.match(path):
        return "torch"
    if not SEP.search(path):
        return None
    return "extension"
