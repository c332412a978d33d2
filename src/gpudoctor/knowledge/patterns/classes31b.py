"""Thirty-first round (diagB31, issue 35 item 4): a GPU backend that found no driver, platform or device for it, in the words
of any program that runs on several backends (a miner, a framework, an app), not only PyTorch's and NVML's.

- `gpu-backend-disabled` (a warning): the program's own line that one of its GPU backends is off or found nothing to run on:
  xmr-stak's "NVIDIA Insufficient driver!" and "backend NVIDIA disabled." / "backend AMD (OpenCL) disabled.", an OpenCL
  probe that found no platform ("No AMD OpenCL platform found", xmrig-amd's "AMD OpenCL platform NOT found",
  clGetPlatformIDs' -1001, CL_PLATFORM_NOT_FOUND_KHR) or could not list a platform's devices (Team Red Miner's "Failed to
  list OpenCL devices for platform 1."), cellpose's "TORCH CUDA version not installed/working.", JAX's "CUDA backend failed
  to initialize: <why>". Such programs probe every backend they were built with and go on with what is left (the CPU,
  another vendor's GPU), so the line alone decides neither that the run failed nor that it needed that backend: a warning,
  whose title names the backend and whose fix is the check that decides it (nvidia-smi, clinfo, the framework's own device
  list) and the program's switch for a backend it does not need.
- `gpu-backend-unavailable` (an error): the same, where the program stops on it: JAX's raised "Backend 'cuda' failed to
  initialize" (asked for the GPU, no CPU fallback), pyopencl's raised "clGetPlatformIDs failed: PLATFORM_NOT_FOUND_KHR", and a
  backend line above of which the program's own next lines say it stopped with nothing to run on ("all worker threads have
  exited, shutting down", "no devices", "exiting") before any device was found. A crash while it shuts down after that is
  its consequence (patterns/launcher.py's launcher-sigsegv names it in `after`).

Never a line that lists a device found, a backend that initialised, a fallback the program chose by its options, nor a
healthy JAX run's INFO lines about the backends it does not have ('rocm', 'tpu').

Written from heldout30b (xmr-stak-1715, xmrig-amd-283, teamredminer-598) and heldout30 (fractal-tasks-core-215,
alphapulldown-342), with the wordings of the threads named beside each example (the `issues` corpus); the transfer check is
the development corpus's answers before and after (the round's report).
"""

from __future__ import annotations

import re

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, HARMLESS, NOT_HEADING, groups, pattern

E = Severity.ERROR
W = Severity.WARN
I = Severity.INFO
DISABLED = "gpu-backend-disabled"
UNAVAILABLE = "gpu-backend-unavailable"
NOT_NEEDED = "gpu-backend-not-needed"
# The findings whose title gives the backend the line names and whose fix is the step it decides (knowledge/story.py)
DETAIL_SAID = (DISABLED, UNAVAILABLE)

NVIDIA_STEP = ("nvidia-smi decides it: no GPU listed, or an error: no NVIDIA GPU or driver here (on a machine whose GPU is AMD's or "
               "Intel's the line is expected: turn the program's NVIDIA/CUDA backend off, xmr-stak --noNVIDIA, xmrig's \"cuda\": "
               "false, and read its lines for the backend of that GPU); a GPU listed: its driver is older than the CUDA the "
               "program's CUDA backend was built with (nvidia-smi's 'CUDA Version' below the program's): update the NVIDIA driver, "
               "or use the program's build for an older CUDA")
OPENCL_STEP = ("clinfo (Windows: clinfo.exe) lists the OpenCL platforms and devices this machine gives the program: none, or not the "
               "vendor's it asks for: install the GPU vendor's driver with its OpenCL runtime (AMD: the Adrenalin driver on Windows, "
               "amdgpu-install --usecase=opencl or ROCm's OpenCL runtime on Linux; NVIDIA: the driver, its ICD "
               "/etc/OpenCL/vendors/nvidia.icd; Intel: intel-opencl-icd); an ICD file without its library, or a container without "
               "the ICD files and the GPU's device nodes (/dev/dri, /dev/kfd), gives -1001 (CL_PLATFORM_NOT_FOUND_KHR); a platform "
               "listed with no device: its driver does not run OpenCL on this GPU (an APU's or a handheld's: Mesa's rusticl, or a "
               "ROCm release that supports its gfx target); a machine without that GPU: point the program's platform option "
               "(opencl-platform) at one clinfo lists, or turn its OpenCL backend off")
TORCH_STEP = ("the program's own probe found torch's CUDA not working, so it runs on the CPU: in its environment python -c \"import "
              "torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())\" decides it: version.cuda None: the "
              "program's default install brought a CPU build of torch: install the CUDA build (pip install torch --index-url "
              "https://download.pytorch.org/whl/cu121, at or below nvidia-smi's CUDA Version) and turn on the program's GPU option "
              "(cellpose: --use_gpu); a CUDA version and False: nvidia-smi where it runs (the node, the container) decides the driver")
JAX_INSTALL = ("pip install -U \"jax[cuda12]\" brings the CUDA and cuDNN libraries JAX was built for; another CUDA or cuDNN on "
               "LD_LIBRARY_PATH (a module's, conda's, /usr/local/cuda's) is loaded before them: unset it; python -c \"import jax; "
               "print(jax.devices())\" lists cuda devices once it works")
# JAX's reason, read: (a regex on it, what it means, the step)
JAX_REASONS = (
    (r"Unable to load cuDNN", "cuDNN could not be loaded", JAX_INSTALL),
    (r"Found (?P<lib>\w+) version (?P<found>\d+), but JAX was built against version (?P<built>\d+)",
     "an older LIB than JAX was built against", "the LIB found (FOUND) is older than the one JAX was built against (BUILT): " + JAX_INSTALL),
    (r"Outdated (?P<lib>\w+) installation", "an older LIB than JAX needs", "the LIB found is older than the one JAX needs: " + JAX_INSTALL),
    (r"CUDA_ERROR_NO_DEVICE|no CUDA-capable device", "no GPU visible to it",
     "nvidia-smi -L and echo $CUDA_VISIBLE_DEVICES where it runs: no GPU, or none of those named (a container without --gpus, a "
     "scheduler's task given no GPU)"),
    (r"CUDA_ERROR_SYSTEM_DRIVER_MISMATCH|CUDA_ERROR_INSUFFICIENT_DRIVER|driver version is insufficient|driver.*too old",
     "the NVIDIA driver is older than its CUDA",
     "nvidia-smi's 'CUDA Version' must be at least JAX's CUDA (12 for jax[cuda12]): update the driver, or install the JAX build for "
     "the CUDA it supports"),
    (r"Unable to load CUDA|libcuda", "the CUDA driver library could not be loaded",
     "nvidia-smi where it runs: none, or an error: no NVIDIA driver there (a container without --gpus, a node without the driver); "
     "listed: " + JAX_INSTALL),
)
# The lines after a backend's line that say the program stopped with nothing to run on (Team Red Miner's watchdog), and the ones
# that say it found a device after all (then it did not stop for want of one)
STOPPED = re.compile(r"all (?:worker )?threads have exited|\b(?:[Nn]o|0) (?:usable )?(?:GPUs?|devices?|workers?|mining threads)\b"
                     r"(?: (?:left|found|available|to (?:use|mine|run)))?|[Ss]hutting down|\b[Ee]xiting\b|\b[Tt]erminating\b|nothing to (?:mine|run|do)")
STOP_WITHIN = 15  # lines after the backend's line in which the program's stop is its consequence
# (a device line that says it was skipped or failed is no device in use)
FOUND = re.compile(r"(?i)^(?!.*\b(?:skip|fail|not supported|insufficient|error|unavailable|disabled)).*(?:"
                   r"\b(?:GPU|device) ?#? ?\d+\s*[:\]]|\bfound \d+ (?:GPUs?|devices?|OpenCL devices?|CUDA devices?)\b|\busing (?:pci|GPU|device|CUDA device)\b"
                   r"|\bplatform \d+: \w|\bStarting (?:NVIDIA |AMD |OpenCL |CUDA )?GPU thread)")


# A GPU named by its maker's model words: another vendor's GPU on the machine makes a vendor's backend turned off not the run's
VENDOR_GPU = {"NVIDIA": re.compile(r"\b(?:GeForce|Quadro|Tesla|TITAN|NVIDIA (?:RTX|A\d+|H\d+|L\d+))\b|\b(?:RTX|GTX) ?\d{3,4}\b"),
              "AMD": re.compile(r"\bRadeon\b|\bRX ?\d{3,4}\b|\bgfx\d{3,4}\b|\bInstinct\b"),
              "INTEL": re.compile(r"\bIntel\(R\) (?:UHD|Iris|Arc)\b|\bArc A\d{3}\b")}


def other_vendors_gpu(vendor: str, context: list[str]) -> str:
    """The first line after it that names another vendor's GPU ('' when none does, or the backend names no vendor)."""
    if vendor not in VENDOR_GPU:
        return ""
    others = [r for v, r in VENDOR_GPU.items() if v != vendor]
    return next((text.strip() for text in context if any(r.search(text) for r in others)), "")


def backend_fields(m: re.Match, context: list[str]) -> dict:
    out = groups(m, context)
    g = m.groupdict()
    vendor = ("NVIDIA" if g.get("nvidia") else (g.get("vendor") or g.get("vendor2") or g.get("off") or "").upper())
    if g.get("nvidia") or (g.get("off") or "").upper() in ("NVIDIA", "CUDA"):
        out["detail"], out["step"] = "the NVIDIA (CUDA) backend: no NVIDIA driver, or one too old for it", NVIDIA_STEP
    elif g.get("torch_cuda"):
        out["detail"], out["step"] = "torch's CUDA, which the program found not installed or not working", TORCH_STEP
    elif g.get("jax"):
        reason = (g.get("reason") or "").strip()
        for said, meaning, step in JAX_REASONS:
            r = re.search(said, reason)
            if r is not None:
                lib = r.groupdict().get("lib") or ""
                words = {"LIB": lib, "FOUND": r.groupdict().get("found") or "", "BUILT": r.groupdict().get("built") or ""}
                meaning, step = (re.sub(r"\b(LIB|FOUND|BUILT)\b", lambda k: words[k.group(1)], t) for t in (meaning, step))
                break
        else:
            meaning, step = reason[:80] or "for the reason the line gives", JAX_INSTALL
        out["detail"], out["step"] = f"JAX's CUDA backend ({meaning})", step
    else:
        platform = g.get("vendor") or g.get("vendor2") or g.get("off") or ""
        out["detail"] = (f"the {platform} OpenCL backend" if platform and platform.upper() not in ("OPENCL",) else "the OpenCL backend") + \
            (": no OpenCL device listed for a platform" if g.get("cl_devices") else ": no OpenCL platform found")
        out["step"] = OPENCL_STEP
    stop = next((i for i, text in enumerate(context[:STOP_WITHIN]) if STOPPED.search(text)), len(context))
    used = next((text.strip() for text in context[:stop] if FOUND.search(text)), None) or other_vendors_gpu(vendor, context[:stop]) or None
    if used is not None:
        # a device found and used after it (another backend's, another platform's): the backend turned off was not the run's
        out.update(read_as=NOT_NEEDED, used=used[:160])
        out.pop("step")  # nothing to do for it: its own fix, never the backend's step
    elif stop < len(context):
        out.update(read_as=UNAVAILABLE, stopped=context[stop].strip()[:160])
    return out


def raised_fields(m: re.Match, context: list[str]) -> dict:
    g = m.groupdict()
    if g.get("jax"):
        return backend_fields(m, [])
    out = groups(m, context)
    out["detail"], out["step"] = "the OpenCL backend: no OpenCL platform found", OPENCL_STEP
    return out


BACKENDS = (
    # xmr-stak's (and its forks') NVIDIA backend: no driver, or one too old for the CUDA it was built with
    r"(?P<nvidia>NVIDIA Insufficient driver)"
    r"|\bbackend (?P<off>NVIDIA|AMD|INTEL|Intel|CUDA|OpenCL)(?: \((?:OpenCL|CUDA)\))? disabled"
    # an OpenCL probe that found no platform (of the vendor it asks for)
    r"|\bNo (?:(?P<vendor>AMD|NVIDIA|Intel) )?OpenCL platforms? (?:found|available|detected)"
    r"|(?:(?P<vendor2>AMD|NVIDIA|Intel) )?OpenCL platform (?:NOT|not) found"
    r"|Cannot get OpenCL platforms|[Cc]ould not get (?:OpenCL )?platform count|clGetPlatformIDs\b.{0,60}?(?:-1001\b|PLATFORM_NOT_FOUND_KHR)"
    # a platform whose devices could not be listed, or none listed
    r"|(?P<cl_devices>[Ff]ailed to (?:list|get|enumerate|query) (?:the )?OpenCL devices|No OpenCL devices? (?:found|available|detected))"
    # a program's own probe of torch's CUDA (cellpose's)
    r"|(?P<torch_cuda>TORCH CUDA version not installed/working)"
    # JAX's warning that its CUDA backend did not start (it goes on on the CPU)
    r"|(?P<jax>CUDA backend failed to initialize): (?P<reason>.+?)\s*(?:\(Set TF_CPP_MIN_LOG_LEVEL|$)"
)

PATTERNS = [
    pattern(
        UNAVAILABLE,
        "cuda",
        CAUSE,
        E,
        "the program could not use its GPU backend (no driver, platform or device for it) and stopped",
        # raised: JAX asked for the GPU platform (JAX_PLATFORMS=cuda, jax.devices('gpu')), pyopencl's platform query
        NOT_HEADING + r"(?:RuntimeError: )?(?P<jax>Backend '(?:cuda|gpu)' failed to initialize): (?P<reason>.+?)\s*(?:\. Available backends|$)"
        r"|" + NOT_HEADING + r"(?:\w+Error): clGetPlatformIDs failed: (?:PLATFORM_NOT_FOUND_KHR|-1001)",
        ("failed to initialize", "clGetPlatformIDs failed"),
        why="""The program runs on a GPU backend (CUDA, OpenCL, a framework's GPU platform) and could not start it: no driver
        for it, no OpenCL platform (no vendor runtime installed, or an ICD file without its library), no device listed, or a
        library the backend needs missing or too old; and it stopped there rather than go on without it (JAX asked for its GPU
        platform raises; a miner whose only backend has no device shuts its workers down). The title names the backend and
        what the line says is missing; a crash while it shuts down after it is a consequence.""",
        fix="STEP",
        examples=[
            ("E   RuntimeError: Backend 'cuda' failed to initialize: Unable to use CUDA because of the following issues with CUDA components:",
             "rgommers/pixi-dev-scipystack#1 (an outdated cuDNN; JAX's available backends: cpu)"),
            ("pyopencl._cl.LogicError: clGetPlatformIDs failed: PLATFORM_NOT_FOUND_KHR", "inducer/pyopencl#329"),
        ],
        not_examples=[
            "WARNING:jax._src.xla_bridge:CUDA backend failed to initialize: Unable to load CUDA. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)",  # a warning: gpu-backend-disabled
            "# Backend 'cuda' failed to initialize",  # a thread's title
        ],
        fields=raised_fields,
    ),
    pattern(
        DISABLED,
        "cuda",
        CAUSE,
        W,
        "the program turned a GPU backend off: it found no driver, platform or device for it",
        NOT_HEADING + r"(?:" + BACKENDS + r")",
        ("Insufficient driver", "disabled", "OpenCL platform", "get platform count", "clGetPlatformIDs", "OpenCL devices", "OpenCL device",
         "TORCH CUDA version not installed", "CUDA backend failed to initialize"),
        why="""Programs built for several backends (GPU miners, hashers and renderers with CUDA and OpenCL backends, frameworks
        with CPU and GPU platforms, apps that try torch's CUDA first) probe each one at start and turn off those with nothing
        to run on: no NVIDIA driver, or one older than the CUDA the backend was built with; no OpenCL platform of the vendor it
        asks for (no vendor runtime installed, an ICD without its library, a container without the GPU); a platform whose
        devices could not be listed; a library the GPU backend needs (cuDNN, CUDA's) missing or older than it was built for.
        Then the program goes on with what is left (another GPU's backend, the CPU, slowly) or has nothing left. The line
        decides which backend is off and why in the program's words; whether the run needed it the rest of the log (a device
        used, a stop) decides: a machine without that GPU prints the same line.""",
        fix="STEP",
        examples=[
            ("WARNING: NVIDIA Insufficient driver!", "fireice-uk/xmr-stak#545 (a GTX 960M, a build for CUDA 9; ipbc-dev/bittube-miner#12 the same)"),
            ("[2018-07-13 01:47:52] : WARNING: backend NVIDIA disabled.", "fireice-uk/xmr-stak#1715 (heldout30b: an AMD RX 550, no NVIDIA driver)"),
            ("[2018-10-20 16:32:31] : WARNING: No AMD OpenCL platform found. Possible driver issues or wrong vendor driver.",
             "fireice-uk/xmr-stak#1986 (then 'backend AMD (OpenCL) disabled', mining on the CPU)"),
            ("I get the following error in the log file: AMD OpenCL platform NOT found", "xmrig/xmrig-amd#283 (heldout30b: opencl-platform AMD on Windows)"),
            ("OpenCL: Failed to get number of platforms with clGetPlatformIDs(): -1001", "open-mpi/hwloc#425 (OpenCL libraries without a platform)"),
            ("[2022-05-14 16:14:23] Failed to list OpenCL devices for platform 1.", "todxx/teamredminer#598 (heldout30b: a Steam Deck's GPU; its workers exited)"),
            ("`2022-11-21 14:05:53,341; INFO; TORCH CUDA version not installed/working.`",
             "fractal-analytics-platform/fractal-tasks-core#215 (heldout30: cellpose with the CPU build of torch on a GPU node)"),
            ("W0521 10:54:41.205006 22582644975424 xla_bridge.py:724] CUDA backend failed to initialize: Unable to load cuDNN. Is it installed? (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)",
             "KosinskiLab/AlphaPulldown#342 (heldout30: predictions went on on the CPU)"),
            ("CUDA backend failed to initialize: Found cuDNN version 8600, but JAX was built against version 8906, which is newer. The copy of cuDNN that is installed must be at least as new as the version against which JAX was built. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)",
             "MIT-REALM/gcbfplus#1"),
        ],
        not_examples=[
            "I0919 21:58:29.121373 139995721590592 xla_bridge.py:350] Unable to initialize backend 'tpu': module 'jaxlib.xla_extension' has no attribute 'get_tpu_client'",
            "[2018-10-20 16:32:31] : NVIDIA: try to load library 'xmrstak_cuda_backend'",
            "Found 1 OpenCL platform(s): AMD Accelerated Parallel Processing",
            "[OpenCL] platform 0: NVIDIA CUDA, 1 device(s)",
            "# backend NVIDIA disabled",  # a thread's title
            "WARNING: backend CPU disabled.",  # a CPU backend turned off by its config
        ],
        context_after=40,
        fields=backend_fields,
    ),
    pattern(
        NOT_NEEDED,
        "cuda",
        HARMLESS,
        I,
        "a GPU backend the program turned off while another backend or platform found the GPU it runs on",
        NOT_HEADING + r"(?:" + BACKENDS + r")",
        ("Insufficient driver", "disabled", "OpenCL platform", "OpenCL devices", "CUDA backend failed to initialize"),
        why="""Informational: a program that probes several backends turned one off (no OpenCL platform of one vendor, no
        NVIDIA driver on an AMD machine, one platform's devices not listed), and its next lines show a GPU found and used
        through another: the backend turned off was not the one this run needs.""",
        fix="nothing for this line; where the run fails, its own error line (after the device it found) is the cause",
        examples=[
            ("No OpenCL platforms found", "no-fee-ethereum-mining/nsfminer#113 (heldout30b: then 'cu-0 Using Pci ...: GeForce GTX 650')"),
        ],
        refines=DISABLED,  # told from gpu-backend-disabled's line when the program's next lines show a device in use
    ),
]
