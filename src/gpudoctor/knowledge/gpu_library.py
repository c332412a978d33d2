"""Which part of the GPU stack a shared library is, from its file's name, and what installs the one a program could not load.

A program that cannot load a GPU library names the file, in its platform's words: Linux's `libcublasLt.so.11: cannot open
shared object file`, Windows' `cublasLt64_13.dll is missing`, `The third-party dynamic library (cudnn64_8.dll) ... is not
configured correctly`, `Could not load library cudnn_cnn_infer64_8.dll`. The name alone says which component it is (the CUDA
runtime, cuBLAS, cuDNN, NCCL, TensorRT, ROCm's, torch's own CUDA library) and, for the libraries versioned by CUDA's major
release (the runtime, cuBLAS, NVRTC, nvJitLink) or cuDNN's, which major version the program was built for; so the fix is to
install that component at that version, or the program's build for the CUDA the machine has. Libraries versioned on their
own (cuFFT's libcufft.so.11 is CUDA 12's, cuRAND's .so.10 is both 11's and 12's) name their component, not the CUDA release.
The NVIDIA driver's own libraries (libcuda.so.1, nvcuda.dll, libnvidia-ml.so.1) are the driver's: their fix is no package but
a machine or container with the driver (patterns/cluster.py's driver-library-not-found).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from gpudoctor.knowledge.libraries import package_of
from gpudoctor.knowledge.pattern import groups

# The file names of the GPU libraries, as a regex fragment (Linux: lib<name>.so[.N...]; Windows: <name>[64][_N[_N]].dll)
SO_NAMES = (r"cudart|cublas(?:Lt)?|cudnn(?:_\w+?)?|cufft\w*?|curand|cusparse\w*?|cusolver\w*?|nvrtc(?:-builtins)?|nvJitLink|nvToolsExt|cupti"
            r"|nccl|nvinfer\w*?|nvonnxparser|c10_cuda|torch_cuda\w*?|amdhip64|rocblas|hipblas\w*?|MIOpen|rocm_smi64")
DLL_NAMES = (r"cudart|cublas(?:Lt)?|cudnn(?:_\w+?)?|cufft\w*?|curand|cusparse|cusolver\w*?|nvrtc(?:-builtins)?|nvJitLink|nvToolsExt|cupti"
             r"|nvinfer\w*?|c10_cuda|torch_cuda\w*?|caffe2_nvrtc|amdhip64|rocblas|hipblas\w*?|MIOpen")
SO = rf"lib(?:{SO_NAMES})\.so(?:\.\d+)*(?![\w-])"
DLL = rf"(?<![\w-])(?:{DLL_NAMES})(?:64)?(?:_\d+)*\.dll\b"
LIBRARY = rf"{SO}|{DLL}"
LIBRARY_RE = re.compile(LIBRARY)


@dataclass(frozen=True)
class Component:
    """A part of the GPU stack a library file belongs to."""

    name: str  # "cuBLAS", "cuDNN", "the CUDA runtime"
    kind: str  # "cuda" (versioned by CUDA's major), "cuda-own" (versioned on its own), "cudnn", "nccl", "tensorrt", "torch", "rocm"
    pip: str = ""  # the pip package that ships it for CUDA 11 and 12 ("nvidia-cublas-cu{major}")


# (the name's stem, the component); the first row whose stem starts the file's name decides
COMPONENTS = (
    ("cudart", Component("the CUDA runtime", "cuda", "nvidia-cuda-runtime-cu{major}")),
    ("cublas", Component("cuBLAS", "cuda", "nvidia-cublas-cu{major}")),
    ("nvrtc", Component("NVRTC", "cuda", "nvidia-cuda-nvrtc-cu{major}")),
    ("nvJitLink", Component("nvJitLink", "cuda", "nvidia-nvjitlink-cu{major}")),
    ("cudnn", Component("cuDNN", "cudnn", "nvidia-cudnn-cu12")),
    ("cufft", Component("cuFFT", "cuda-own")),
    ("curand", Component("cuRAND", "cuda-own")),
    ("cusparse", Component("cuSPARSE", "cuda-own")),
    ("cusolver", Component("cuSOLVER", "cuda-own")),
    ("nvToolsExt", Component("NVTX", "cuda-own")),
    ("cupti", Component("CUPTI", "cuda-own")),
    ("nccl", Component("NCCL", "nccl")),
    ("nvinfer", Component("TensorRT", "tensorrt")),
    ("nvonnxparser", Component("TensorRT", "tensorrt")),
    ("c10_cuda", Component("torch's own CUDA library", "torch")),
    ("torch_cuda", Component("torch's own CUDA library", "torch")),
    ("caffe2_nvrtc", Component("torch's own CUDA library", "torch")),
    ("amdhip64", Component("ROCm's HIP runtime", "rocm")),
    ("rocblas", Component("ROCm's rocBLAS", "rocm")),
    ("hipblas", Component("ROCm's hipBLAS", "rocm")),
    ("MIOpen", Component("ROCm's MIOpen", "rocm")),
    ("rocm_smi", Component("ROCm's SMI library", "rocm")),
)
# The major version in a file's name: libcublasLt.so.11, cublasLt64_13.dll, cudnn64_8.dll, cudart64_110.dll (11.0),
# cudart64_12.dll, nvrtc64_120_0.dll (12.0), libcudnn_cnn_infer.so.8, cudnn_cnn_infer64_8.dll
SO_VERSION = re.compile(r"\.so\.(\d+)")
DLL_VERSION = re.compile(r"64_(\d+)")


@dataclass(frozen=True)
class Library:
    """A GPU library a program could not load: its file, its component, the major version its name says (or '')."""

    file: str
    component: Component
    major: str

    def detail(self) -> str:
        """'libcublasLt.so.11 (cuBLAS of CUDA 11)', for a finding's title."""
        if self.major and self.component.kind == "cuda":
            return f"{self.file} ({self.component.name} of CUDA {self.major})"
        if self.major and self.component.kind == "cudnn":
            return f"{self.file} (cuDNN {self.major})"
        return f"{self.file} ({self.component.name})"

    def bundled_step(self, loader: str) -> str:
        """The step for a library the loading package ships in its own folder (torch's wheels bring cuDNN and cuBLAS in
        torch/lib): the file, or a library it needs in turn, is missing or cannot load there."""
        return (f"{self.file} ships with {loader} (in its own folder): it or a library it needs in turn is missing or cannot load "
                f"(a broken or mixed install; on Windows the Visual C++ redistributable, and zlibwapi.dll for cuDNN 8): "
                f"pip install --force-reinstall --no-cache-dir {loader} (the CUDA build of it for this driver), and install the "
                "latest Visual C++ redistributable on Windows")

    def step(self, loader: str = "") -> str:
        """What installs it, or what the program needs instead: the component at the version the name gives, where the
        machine looks for it, or the loading program's build for the CUDA the machine has."""
        who = loader or "the package that loads it"
        windows = self.file.endswith(".dll")
        where = (f"where {self.file}   # (cmd) empty: no folder on PATH holds it" if windows
                 else f"ldconfig -p | grep {self.file.split('.so')[0]}; echo $LD_LIBRARY_PATH   # empty: no folder the loader searches holds it")
        kind, major = self.component.kind, self.major
        if kind == "torch":
            return (f"{where}; {self.file} is torch's own: the torch install is broken or mixed (a CUDA torch over a CPU one, "
                    "two torch builds in one environment): pip uninstall -y torch && pip install torch --index-url "
                    "https://download.pytorch.org/whl/cu121 (the CUDA build for this driver)")
        if kind == "rocm":
            return (f"{where}; {self.file} is {self.component.name}: install ROCm (its lib folder, /opt/rocm/lib, on LD_LIBRARY_PATH) "
                    f"or, on an NVIDIA or CPU machine, {who}'s build for CUDA or the CPU")
        if kind == "cuda" and major:
            pip = self.component.pip.format(major=major) if major in ("11", "12") else ""
            return (f"{who} was built for CUDA {major}: install {self.component.name} for CUDA {major}"
                    + (f" (pip install {pip}, or the CUDA {major} toolkit" if pip else f" (the CUDA {major} toolkit")
                    + (f" with its bin folder on PATH)" if windows else ", its lib64 folder on LD_LIBRARY_PATH)")
                    + f", or the build of {who} for the CUDA this machine has (nvidia-smi's 'CUDA Version' is the newest its driver "
                    f"runs); check: {where}")
        if kind == "cudnn" and major:
            return (f"{who} was built for cuDNN {major}: install cuDNN {major} for your CUDA (pip install 'nvidia-cudnn-cu12=={major}.*' "
                    f"or NVIDIA's archive" + (", its bin folder on PATH)" if windows else ", its lib folder on LD_LIBRARY_PATH)")
                    + f", or the build of {who} for the cuDNN you have; check: {where}")
        return (f"install {self.component.name} for the CUDA {who} was built for (its name or its docs say which: +cu121, -cu12) "
                + ("with its folder on PATH" if windows else "with its folder on LD_LIBRARY_PATH")
                + f", or the build of {who} for the CUDA this machine has; check: {where}")


def library(file: str) -> Optional[Library]:
    """The GPU library a file name is, or None for any other library (libGL, libnuma, libtpu, NCCL's net plug-in)."""
    name = file.strip("'\"`").rsplit("/", 1)[-1].rsplit("\\", 1)[-1]
    if LIBRARY_RE.fullmatch(name) is None:
        return None
    stem = name[3:] if name.startswith("lib") and ".so" in name else name
    component = next((c for prefix, c in COMPONENTS if stem.startswith(prefix)), None)
    if component is None:
        return None
    m = SO_VERSION.search(name) if ".so" in name else DLL_VERSION.search(name)
    major = m.group(1) if m else ""
    if len(major) >= 3 and component.kind == "cuda":  # cudart64_110.dll, nvrtc64_120_0.dll: 11.0, 12.0
        major = major[:-1]
    return Library(name, component, major)


# What decides it when the library's name is not one gpudoctor knows (the fix of a finding whose line names another file)
UNKNOWN_STEP = ("ldd FILE | grep 'not found' (Windows: the Dependencies tool on the DLL) names what it could not load; install the "
                "library of the version it names, or the build of the package for the CUDA this machine has")
# The groups of cuda-library-missing's regex that hold the library's file, and those that hold the path it was loaded from
FILE_GROUPS = ("library", "missing", "named", "cudnn", "win", "module", "ct2", "locate", "anyof", "nvrtc")
PATH_GROUPS = ("path", "module_path")


def library_fields(m: re.Match, context: list[str]) -> dict:
    """A load failure's evidence: the library's file (`library`), what it is (`detail`, for the title) and what installs it
    (`step`, the fix), with the package that loaded it where the line names it (Paddle's words, a path in site-packages)."""
    out = groups(m, context)
    name = next((out.pop(k) for k in FILE_GROUPS if out.get(k)), "")
    path = next((out.pop(k) for k in PATH_GROUPS if out.get(k)), "")
    loader = out.pop("loader", "") or (package_of(path) or "" if path else "")
    out["library"] = name
    if path:
        out["path"] = path
    found = library(name)
    if found is None:
        out["detail"], out["step"] = name, UNKNOWN_STEP.replace("FILE", name)
        return out
    out["component"] = found.component.name
    if found.major:
        out["version"] = found.major
    loader = "" if loader == "python" else loader
    bundled = bool(path and loader) and re.search(rf"[/\\]{re.escape(loader)}[/\\]", path) is not None
    out["detail"] = found.detail()
    out["step"] = found.bundled_step(loader) if bundled else found.step(loader)
    return out
