"""What a maintainer asks for first in a bug report, beyond torch and the driver
(what torch's collect_env, `accelerate env` and `ds_report` print): the installed
packages that matter to a distributed job, the OS and kernel, the CPU, the C
toolchain, and the CUDA compiler an extension build would use.

Packages are read from the installed distributions' metadata (importlib.metadata):
nothing is imported, so a broken package cannot break the probe. Every field that
cannot be read is Unavailable with its reason; nothing here raises."""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from gpudoctor.core.unavailable import Unavailable, describe_error

TOOL_TIMEOUT_S = 5.0
# The packages maintainers ask about (normalised names, PEP 503); with them every
# `nvidia-*` wheel (CUDA libraries, NCCL's nvidia-nccl-cu12) and every distribution
# that requires torch.
LISTED = ("torch", "numpy", "triton", "lightning", "pytorch-lightning", "accelerate", "deepspeed", "transformers",
          "apex", "flash-attn", "xformers", "torchvision", "torchaudio", "bitsandbytes", "onnxruntime")  # fmt: skip
NOT_PROBED = Unavailable("not in this snapshot (taken before gpudoctor read the software)")


@dataclass(frozen=True)
class Package:
    name: str  # as the distribution spells it
    version: str
    reason: str  # "listed" (one of LISTED), "nvidia wheel", or "requires torch"


@dataclass(frozen=True)
class Nvcc:
    """The CUDA compiler torch.utils.cpp_extension would build with: $CUDA_HOME (or
    $CUDA_PATH), else the `nvcc` on PATH, else /usr/local/cuda, in that order."""

    path: str
    found_by: str  # "CUDA_HOME", "CUDA_PATH", "PATH" or "/usr/local/cuda"
    release: str | Unavailable  # "12.4", from `nvcc --version`


@dataclass(frozen=True)
class SoftwareFacts:
    packages: tuple[Package, ...] | Unavailable
    os_name: str | Unavailable  # /etc/os-release PRETTY_NAME, or platform's words elsewhere
    kernel: str | Unavailable  # uname -r
    cpu_model: str | Unavailable
    gcc: str | None | Unavailable  # "13.2.0"; None: no gcc on PATH
    glibc: str | None | Unavailable  # "2.39"; None: not a glibc system (musl, macOS, Windows)
    nvcc: Nvcc | None | Unavailable  # None: no nvcc where an extension build looks


T = TypeVar("T")


def _safely(read: Callable[[], T]) -> T | Unavailable:
    try:
        return read()
    except Exception as exc:  # a probe never raises: the reason travels with the value
        return Unavailable(describe_error(exc))


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requires_torch(requirements: list[str] | None) -> bool:
    """An unconditional requirement on torch (not one behind an extra)."""
    for req in requirements or ():
        spec, _, marker = req.partition(";")
        m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
        if m and normalise(m.group(1)) == "torch" and "extra" not in marker:
            return True
    return False


def probe_packages() -> tuple[Package, ...] | Unavailable:
    from importlib import metadata

    def read() -> tuple[Package, ...]:
        seen: dict[str, Package] = {}
        for dist in metadata.distributions():
            try:
                name = dist.metadata["Name"]
                if not name:
                    continue
                key = normalise(name)
                if key in seen:  # the first on sys.path is the one imported
                    continue
                if key in LISTED:
                    reason = "listed"
                elif key.startswith("nvidia-"):
                    reason = "nvidia wheel"
                elif _requires_torch(dist.requires):
                    reason = "requires torch"
                else:
                    continue
                seen[key] = Package(name, str(dist.version), reason)
            except Exception:  # noqa: BLE001 - one damaged METADATA file hides that package only
                continue
        return tuple(sorted(seen.values(), key=lambda p: normalise(p.name)))

    return _safely(read)


def _os_release(root: Path) -> str:
    text = (root / "etc" / "os-release").read_text(errors="replace")
    fields = dict(re.findall(r'^([A-Z_]+)="?(.*?)"?$', text, re.M))
    return fields.get("PRETTY_NAME") or f"{fields.get('NAME', '?')} {fields.get('VERSION', '')}".strip()


def probe_os_name(root: Path = Path("/")) -> str | Unavailable:
    if platform.system() != "Linux":
        return _safely(lambda: f"{platform.system()} {platform.release()} ({platform.version()})")
    return _safely(lambda: _os_release(root))


def probe_cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str | Unavailable:
    def read() -> str:
        if cpuinfo.exists():
            text = cpuinfo.read_text(errors="replace")
            for key in ("model name", "Hardware", "cpu model", "Model"):  # x86, then Arm and others
                m = re.search(rf"^{key}\s*:\s*(.+)$", text, re.M)
                if m:
                    return m.group(1).strip()
        return platform.processor() or platform.machine() or "unknown"

    return _safely(read)


def _tool_output(argv: list[str]) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S, errors="replace")
    return (done.stdout or "") + (done.stderr or "")


def probe_gcc(which: Callable[[str], str | None] = shutil.which) -> str | None | Unavailable:
    path = which("gcc")
    if path is None:
        return None

    def read() -> str:
        first = _tool_output([path, "-dumpfullversion", "-dumpversion"]).strip().splitlines()
        if not first:
            raise ValueError(f"{path} -dumpversion printed nothing")
        return first[0]

    return _safely(read)


def probe_glibc() -> str | None | Unavailable:
    def read() -> str | None:
        if not hasattr(os, "confstr"):
            return None
        try:
            value = os.confstr("CS_GNU_LIBC_VERSION")  # "glibc 2.39"
        except (ValueError, OSError):
            return None  # not glibc
        return value.split()[-1] if value else None

    return _safely(read)


def nvcc_release(text: str) -> str | Unavailable:
    """"Cuda compilation tools, release 12.4, V12.4.131" -> "12.4"."""
    m = re.search(r"release (\d+\.\d+)", text)
    return m.group(1) if m else Unavailable(f"no 'release X.Y' in nvcc --version: {text.strip()[:80]!r}")


def find_nvcc(environ: Mapping[str, str], which: Callable[[str], str | None], exists: Callable[[str], bool]) -> tuple[str, str] | None:
    """(path, how it was found), in torch.utils.cpp_extension's order; None: no nvcc."""
    for var in ("CUDA_HOME", "CUDA_PATH"):
        home = environ.get(var)
        if home:
            candidate = os.path.join(home, "bin", "nvcc")
            return (candidate, var) if exists(candidate) else None  # the build uses this home or fails
    on_path = which("nvcc")
    if on_path:
        return on_path, "PATH"
    default = "/usr/local/cuda/bin/nvcc"
    return (default, "/usr/local/cuda") if exists(default) else None


def probe_nvcc(environ: Mapping[str, str] | None = None, which: Callable[[str], str | None] = shutil.which) -> Nvcc | None | Unavailable:
    def read() -> Nvcc | None:
        found = find_nvcc(os.environ if environ is None else environ, which, os.path.exists)
        if found is None:
            return None
        path, how = found
        return Nvcc(path, how, _safely(lambda: nvcc_release(_tool_output([path, "--version"]))))

    return _safely(read)


def probe_software() -> SoftwareFacts:
    return SoftwareFacts(
        packages=probe_packages(),
        os_name=probe_os_name(),
        kernel=_safely(platform.release),
        cpu_model=probe_cpu_model(),
        gcc=probe_gcc(),
        glibc=probe_glibc(),
        nvcc=probe_nvcc(),
    )
