"""The class of the thirty-first round (issue 35, diagC31): a compiled package that says itself it was built for another torch.

xFormers checks at import that its C++/CUDA extensions load, and when they do not it prints what it was built for beside
what it found: "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:" then "PyTorch 2.2.2+cu121
with CUDA 1201 (you have 2.2.2+cu118)" and "Python 3.10.11 (you have 3.10.14)", on the lines after it or glued on one line by
a paste. Its pairs decide the step: a torch whose version ends in +cpu is torch's CPU-only build (nothing of the run uses the
GPU, whatever xFormers does); another CUDA or another torch version is an xFormers wheel for another torch (or a torch
changed after it was installed). The run goes on without memory-efficient attention (a warning); what fails after it, if
anything, is told by its own line.

One verdict, `extension-built-for-other-torch`, keyed on xFormers' own line (a thread's heading that quotes it is the
reporter's words: pattern.NOT_HEADING).

Written from heldout28's hallo-64 (xFormers for torch 2.2.2+cu121 under 2.2.2+cu118, read as triton's ModuleNotFoundError
after it) and heldout29's invokeai-4788 (the CPU-only torch, the warning not read), and the threads named beside the examples
(the issues corpus).
"""

from __future__ import annotations

import re

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, NOT_HEADING, groups, pattern

W = Severity.WARN
BUILT_FOR_OTHER_TORCH = "extension-built-for-other-torch"
# The findings whose title gives what the line names and whose fix is the step it decides (knowledge/story.py)
DETAIL_SAID = (BUILT_FOR_OTHER_TORCH,)

# xFormers' pairs: what it was built for, and what it found ("you have")
TORCH_PAIR = re.compile(r"PyTorch\s+(?P<built>\S+)\s+with CUDA\s+(?P<cuda>\d+)\s+\(you have (?P<have>[^)\s]+)\)")
PYTHON_PAIR = re.compile(r"Python\s+(?P<built>\d[\d.]*)\s+\(you have (?P<have>\d[\d.]*)\)")
INDEX = "https://download.pytorch.org/whl/"


def cuda_tag(version: str) -> str:
    """The wheel tag in a torch version (2.2.2+cu121 -> cu121), or ''."""
    local = version.partition("+")[2]
    return local if re.fullmatch(r"cu\d+|rocm[\d.]+|cpu", local) else ""


def built_fields(m: re.Match, context: list[str]) -> dict:
    """xFormers' pairs, from its line and the lines after it, and the step they decide."""
    out = groups(m, context)
    text = " ".join([m.string[m.start():], *context[:3]])
    torch, python = TORCH_PAIR.search(text), PYTHON_PAIR.search(text)
    if torch is None:
        out["detail"] = "xFormers' C++/CUDA extensions did not load"
        out["step"] = ("XFORMERS_MORE_DETAILS=1 python -m xformers.info   # says why they did not load and what it was built for; then "
                       "install the xformers wheel made for the installed torch, or the torch it was built for")
        return out
    built, have = torch["built"], torch["have"]
    out["built_for"], out["you_have"] = built, have
    base = built.partition("+")[0]
    built_tag, have_tag = cuda_tag(built), cuda_tag(have)
    reinstall_torch = f"pip install torch=={base} --index-url {INDEX}{built_tag or 'cu' + torch['cuda'][:2] + torch['cuda'][3:]}"
    if have_tag == "cpu":
        out["detail"] = f"the installed torch {have} is its CPU-only build (xFormers was built for {built})"
        out["step"] = (f"{reinstall_torch}   # torch's CUDA build, the one xFormers was built for (a CPU-only torch runs nothing "
                       "on the GPU: torch.cuda.is_available() is False); then python -c \"import torch; print(torch.version.cuda)\" "
                       "prints its CUDA and xFormers loads")
    elif have == built:
        same = f"the torch it was built for ({built}) is the one installed"
        if python is not None and python["built"] != python["have"]:
            same += f"; only Python differs ({python['built']}, you have {python['have']})"
        out["detail"] = f"xFormers' C++/CUDA extensions did not load, though {same}"
        out["step"] = ("XFORMERS_MORE_DETAILS=1 python -m xformers.info   # the loader's own error (a DLL or library it needs, a "
                       "Python it was not built for); reinstall xformers for this Python and torch (pip install --force-reinstall "
                       f"--no-deps xformers --index-url {INDEX}{have_tag or 'cu' + torch['cuda'][:2] + torch['cuda'][3:]})")
    else:
        what = "another CUDA" if base == have.partition("+")[0] else "another torch version"
        out["detail"] = f"xFormers was built for torch {built}, and {have} is installed ({what})"
        have_index = f" --index-url {INDEX}{have_tag}" if have_tag else ""
        out["step"] = (f"install the xformers release built for torch {have} (xFormers' release notes name the torch of each; "
                       f"pip install --no-deps xformers==VERSION{have_index}), or the torch it was built for: {reinstall_torch}; "
                       "then python -m xformers.info lists its operators as available")
    return out


PATTERNS = [
    pattern(
        BUILT_FOR_OTHER_TORCH,
        "platform",
        CAUSE,
        W,
        "a compiled package says it was built for another torch: its C++/CUDA extensions did not load",
        NOT_HEADING + r"(?P<package>xFormers) can't load C\+\+/CUDA extensions\. xFormers was built for",
        ("can't load C++/CUDA extensions",),
        why="""A package with compiled C++/CUDA extensions (xFormers' memory-efficient attention and fused operators) works only
        with the torch, CUDA and Python it was built for. xFormers checks at import that its extensions load, and when they do
        not it names what it was built for and what it found. A torch whose version ends in +cpu is torch's CPU-only build
        (pip's default on Windows, or a requirement that pulled torch from PyPI over the CUDA one): nothing of the run uses
        the GPU. Another CUDA or torch version is an xFormers wheel for another torch, or a torch changed after xFormers was
        installed (an upgrade that a package's requirement pulled in). The run goes on without those operators (slower, more
        memory), or stops where the program needs them.""",
        fix="STEP",
        fields=built_fields,
        context_after=3,
        examples=[
            ("WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:",
             "open-mmlab/PIA#30 (the next line: 'PyTorch 2.1.2+cu121 with CUDA 1201 (you have 2.1.2+cpu)': a CPU-only torch; its CUDA build fixed it)"),
            ("WARNING:xformers:WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:",
             "TheLastBen/fast-stable-diffusion#2672 (built for 2.0.1+cu118, torch 2.1.0+cu121 installed)"),
            ("> `python scripts/inference.py --source_image 1.jpg --driving_audio 1.wav WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was "
             "built for: PyTorch 2.2.2+cu121 with CUDA 1201 (you have 2.2.2+cu118) Python 3.10.11 (you have 3.10.14) Please reinstall xformers",
             "fudan-generative-vision/hallo#64 (heldout28, retired: a paste glued on one line)"),
        ],
        not_examples=[
            "# [bug]: WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for",  # a thread's heading
            "xFormers 0.0.25.dev741",
            "memory_efficient_attention.cutlassF:               available",
            "Applying attention optimization: xformers... done.",
            "A matching Triton is not available, some optimizations will not be enabled",
        ],
    ),
]
