"""Family rules found from the sixth development sample (tests/fixtures/log_sample/dev6, issue 35 item 4).

The sample's largest decided family that no rule named was a compiled extension (pytorch3d's _C, flash-attn,
a custom op) that does not fit the torch it is loaded into: the dynamic loader's 'undefined symbol' on Linux,
'The specified procedure could not be found' on Windows, whatever the package or the symbol. Its examples are
real lines from those threads; its counter-examples are the nearest lines that mean something else (a library
that is missing rather than mismatched, NCCL's own symbol, torchvision's harmless image-extension warning).
"""

import re

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, groups, pattern

E = Severity.ERROR

EXTENSION_UNDEFINED_SYMBOL = "extension-undefined-symbol"

# What a mangled C++ name says the extension was compiled against (Itanium mangling: c10 and at are torch's
# namespaces, St is std::, __cxx11 is libstdc++'s C++11 ABI).
_TORCH_SYMBOL = re.compile(r"3c10|^_ZN?K?2at|5torch|6caffe2")
_STD_SYMBOL = re.compile(r"^_ZN?K?St|^_ZSt|GLIBCXX")


def symbol_fields(m: re.Match, context: list[str]) -> dict:
    """The library and symbol, and what the symbol shows the library was built against."""
    out = groups(m, context)
    symbol = out.get("symbol", "")
    if _TORCH_SYMBOL.search(symbol):
        out["built_against"] = "another torch version (the symbol is torch's C++ API: c10/ATen)"
    elif _STD_SYMBOL.search(symbol):
        out["built_against"] = "a newer C++ standard library than the one loaded (libstdc++)"
    if "__cxx11" in symbol:
        out["cxx11_abi"] = "the symbol uses the C++11 string ABI (std::__cxx11): the extension and torch may differ in _GLIBCXX_USE_CXX11_ABI"
    return out


PATTERNS = [
    pattern(
        EXTENSION_UNDEFINED_SYMBOL,
        "platform",
        CAUSE,
        E,
        "a compiled extension does not fit the torch it is loaded into (undefined symbol: built for another version)",
        # Linux: ImportError/OSError, or the bare loader message a wrapper re-raised on its own line, an absolute
        # path (transformers' 'Failed to import ... because of the following error'); not the rest of a line a
        # terminal cut inside the path: that paste is read again joined. NCCL's symbols have their own rule
        r"(?:(?:ImportError|OSError): |^\s*(?=/))(?P<library>\S*?\.(?:so|pyd)(?:\.[\d.]+)?): undefined symbol: (?P<symbol>(?!nccl)\S+)"
        # Windows: the same mismatch, as the DLL loader words it (a missing DLL is 'module could not be found')
        r"|ImportError: DLL load failed(?: while importing (?P<module>\w+))?: The specified procedure could not be found"
        r"|OSError: \[WinError 127\] The specified procedure could not be found",
        ("undefined symbol: ", "The specified procedure could not be found"),
        why="""The dynamic loader refused a compiled library because it calls a function the already loaded libraries
        do not export. torch has no stable C++ ABI, so every compiled extension (pytorch3d, flash-attn, xformers,
        mmcv, apex, a project's custom CUDA ops) works only with the torch version, CUDA version and C++ ABI setting
        (_GLIBCXX_USE_CXX11_ABI) it was built against. Here the extension was built for another one: torch was
        upgraded or downgraded after the extension was installed, a pre-built wheel for another torch was chosen, or
        pip built it in an isolated environment with a different torch. A symbol of std:: or GLIBCXX instead points at
        the C++ standard library: the extension was built with a newer compiler than the libstdc++ loaded at run time.
        Nothing of the training ran: the import failed.""",
        fix="""python -c "import torch; print(torch.__version__, torch.version.cuda, torch._C._GLIBCXX_USE_CXX11_ABI)"   # then
        install the extension's build made for exactly that torch, CUDA and ABI (a wheel's name carries them:
        torch2.4, cu121, cxx11abiFALSE), or rebuild it from source against the installed torch: pip uninstall the
        extension, then pip install --no-build-isolation --no-cache-dir it (or `python setup.py install` in its clone);
        or install the torch version it was built for; for a std::/GLIBCXX symbol, use the environment's newer
        libstdc++ (conda install -c conda-forge libstdcxx-ng)""".replace("\n        ", " "),
        examples=[
            ("ImportError: /home/fwj/anaconda3/envs/pyfwj/lib/python3.10/site-packages/pytorch3d/_C.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZNK3c1010TensorImpl18compute_contiguousEv", "facebookresearch/pytorch3d#1608 (pytorch3d built with another torch; a fresh environment fixed it)"),
            ("ImportError: /.../envs/pytorch3d/lib/python3.8/site-packages/pytorch3d-0.7.8-py3.8-linux-x86_64.egg/pytorch3d/_C.cpython-38-x86_64-linux-gnu.so: undefined symbol: _ZNSt15__exception_ptr13exception_ptr9_M_addrefEv", "facebookresearch/pytorch3d#1921 (a std:: symbol; fixed by matching versions and the pre-built package)"),
            ("ImportError: /usr/local/lib/python3.8/dist-packages/flash_attn_2_cuda.cpython-38-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi", "Dao-AILab/flash-attention#723 (torch 2.1.0 + CUDA 12.1)"),
            ("/home/ligy/anaconda3/lib/python3.11/site-packages/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so: undefined symbol: _ZN2at4_ops5zeros4callEN3c108ArrayRefINS2_6SymIntEEENS2_8optionalINS2_10ScalarTypeEEENS6_INS2_6LayoutEEENS6_INS2_6DeviceEEENS6_IbEE", "Dao-AILab/flash-attention#1612 (the loader message on its own line, under transformers' 'Failed to import')"),
            ("ImportError: DLL load failed while importing _C: The specified procedure could not be found.", "facebookresearch/pytorch3d#1872 (a pytorch3d wheel built for torch 2.0.0 with torch 1.13.1 installed)"),
            ("OSError: [WinError 127] The specified procedure could not be found", "pytorch/pytorch#37733 (torch's own DLLs mismatched)"),
        ],
        not_examples=[
            # NCCL's symbol missing from libtorch_cuda: two NCCL libraries, its own rule (nccl-two-libraries)
            "ImportError: /home/user/.local/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclCommRegister",
            # a library that is not there at all (cuda-library-missing), not one that is there and mismatched
            "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory",
            "ImportError: DLL load failed: The specified module could not be found.",
            # torchvision's warning that its optional image extension did not load: training goes on
            # (casperg92/MaSIF_colab#7, NixOS/nixpkgs#162286)
            "/usr/local/lib/python3.9/dist-packages/torchvision/io/image.py:13: UserWarning: Failed to load image Python extension: '/usr/local/lib/python3.9/dist-packages/torchvision/image.so: undefined symbol: _ZN3c104impl8GPUTrace13gpuTraceStateE'If you don't plan on using image functionality from `torchvision.io`, you can ignore this warning. Otherwise, there might be something wrong with your environment. Did you have `libjpeg` or `libpng` installed before building `torchvision` from source?",
            "/home/octopus/workdir/lib/python3.10/site-packages/torchvision/io/image.py:13: UserWarning: Failed to load image Python extension: /home/octopus/workdir/lib/python3.10/site-packages/torchvision/image.so: undefined symbol: _ZN3c105ErrorC2ENS_14SourceLocationESs",
        ],
        fields=symbol_fields,
    ),
]
