"""Rules for classes of messages of the nineteenth round (issue 35, diagA19): GPU programs that are not Python print CUDA's,
HIP's and NVENC's errors by number or by enum name, and say "no device" in their own words; each is read as a class here.
(The round's fatal lines in a native program's own words are failure evidence: knowledge/evidence.py's "fatallevel".)

- CUDA's (and HIP's) error by its code, in the shapes programs print it: CudaMiner's "cudaError 30 (unknown error)
  calling 'cudaFree(0)'", cuda-samples' helper (checkCudaErrors) "CUDA error at file:line
  code=13(cudaErrorInvalidSymbol)", AMReX's "CUDA error 2 in file ... line 193: out of memory", Claymore's "CUDA error
  11 - cannot write buffer for DAG", LAMMPS geryon's "Cuda driver error 1 in call at file ...", a driver call's
  "cuGraphicsGLRegisterBuffer failed with error(219)", HIP's "'hipErrorInvalidDevice'(101)" and "hipGetDeviceCount()
  returns 100", a driver status by name ("CUDA_ERROR_NO_BINARY_FOR_GPU"), Caffe's "Check failed: error == cudaSuccess
  (30 vs. 0)  unknown error". One table (knowledge/cuda_errors.py's `FAULTS`, whose words classes17b's message class says
  too) maps each fault's runtime name, its numbers (the runtime's before and since CUDA 10.1, which renumbered it), the
  driver API's CUresult name and number and HIP's name to what it means and what to do. A fault gpudoctor already has a
  finding for (out of memory, no device, an invalid device ordinal, no kernel image, an illegal address, a launch
  failure, a driver too old, devices busy, ...) is told as that finding, so one cause has one verdict whatever program
  printed it; the others are `cuda-error-code`, whose fix is the row's. A shape keyed on one enum reads the number in
  it; a shape that does not say which (a bare "CUDA error N") reads all three, and where they disagree says what the
  number means in each and what decides (the message or name beside it, the CUDA version the program was built with).
  Written from heldout18 (CudaMiner, Claymore, AMReX/PeleC, LAMMPS, HIP, guppy, DeepStream) with heldout8's Caffe and
  heldout17's DL4J, and xmr-stak's "[CUDA] Error gpu N: <file.cu>:line", which names where and not which error; measured
  on heldout15 and heldout14, not read while writing: none of their 170 answers changed.
- NVENC's status (the GPU's video encoder, NVENCSTATUS) by number or name: ffmpeg's "OpenEncodeSessionEx failed: out of
  memory (10)", VideoProcessingFramework's "nvEncOpenEncodeSessionEx(...) returned error 10" (heldout18's nvlax, VPF#161 and
  VPF#501): at opening a session, 10 is most often a consumer card's limit on encoding sessions at once (`nvenc-error-code`).
- a program that looked for devices of the kind it runs on and found none it can use, in its own words, where it stops:
  hashcat's "No devices found/left.", Blender's "Error: Found no Cycles device of the specified type", LAMMPS' "ERROR:
  Could not find/initialize a specified accelerator device" (heldout18): `program-found-no-device`. Keyed on the line
  alone (hashcat's last line) or at error level; never a notice that names devices found, nor a fallback to the CPU in a
  run that goes on, nor NCCL's INFO "NET/IB : No device found." (no InfiniBand: it uses sockets).

Their examples are real lines from public threads (thread in the source); their counter-examples the nearest lines that
mean something else.
"""

from __future__ import annotations

import re

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.cuda_errors import BY_NAME, ENUMS, FAULTS, Fault, by_message
from gpudoctor.knowledge.pattern import CAUSE, pattern

E = Severity.ERROR

# a program's CUDA check that prints where it failed and not which error (xmr-stak's "[CUDA] Error gpu N: <file.cu>:line")
UNNAMED = ("a CUDA call in the program's own GPU code (the file and line it names) returned an error on this GPU, and the "
           "program does not print which")
UNNAMED_STEP = ("the call at that line of the program's source says what failed; when every GPU fails the same way after the "
                "program ran a while, their clocks, voltage or power are the usual cause (an overclock or undervolt: rerun at "
                "stock settings; sudo dmesg -T | grep -i xid for the driver's view); at its start, a build or a driver that does "
                "not fit the GPU")
# HIP's devices are those of the platform it was built for
HIP_DEVICES = ("HIP sees only the GPUs of the platform it was built for: hipconfig --platform must say amd on an AMD GPU and "
               "nvidia on an NVIDIA one; rocminfo or rocm-smi list the AMD GPUs it can use, and HIP_VISIBLE_DEVICES or "
               "ROCR_VISIBLE_DEVICES hide the others")


# The words every shape's line holds (a shape's own, before the number or the name): the pattern's needles
NEEDLES = ("cudaError", "CUDA error", "CUDA Error", "Cuda error", "cuda error", "Cuda driver error", "CUDA driver error",
           "CUDA_ERROR_", "hipError", "failed with error", "() return", "vs. 0)", "[CUDA] Error gpu", " in file ")
LIBRARIES = r"(?!DNN|BLAS|FFT|SPARSE|RAND|SOLVER|Lt)"  # cuDNN's, cuBLAS' ... own statuses are another table
KNOWN = "|".join(re.escape(f.message) for f in sorted(FAULTS, key=lambda f: -len(f.message)))
SHAPES = (
    # a number with the runtime's, the driver's or HIP's name in parentheses: cuda-samples' checkCudaErrors, a person's "4(cudaError...)"
    r"(?:code=)?(?P<code_named>[1-9]\d*)\s*\((?P<name_numbered>(?:cudaError|hipError)[A-Z]\w*|CUDA_ERROR_[A-Z_]+)\)"
    # CudaMiner's "cudaError 30 (unknown error)": the runtime's number and its message
    r"|\bcudaError (?P<runtime_code>[1-9]\d*) \((?P<runtime_message>[^)]*)\)"
    # HIP's name, with its number in parentheses or not
    r"|(?P<hip_name>hipError[A-Z]\w*)'?(?:\s*\((?P<hip_code>\d+)\))?"
    # Caffe's glog check of a runtime call, for the messages the message class (classes17b) does not read
    r"|Check failed: \w+ == cudaSuccess \((?P<caffe_code>[1-9]\d*) vs\. 0\)\s*(?P<caffe_message>.*)"
    # the driver API's number in a program's words (LAMMPS' geryon)
    r"|\b(?i:cuda driver error)\s*(?P<driver_code>[1-9]\d*)\b"
    # a driver (cu...), runtime (cuda...) or HIP (hip...) call and the number it returned
    rf"|\b(?P<call>(?:cuda|hip)[A-Z]\w*|cu{LIBRARIES}[A-Z]\w*)(?:\([^)]*\))?'?\s*(?:failed with error|failed with code|returns?|returned|error)\s*[(:=#]?\s*(?P<call_code>[1-9]\d*)\b"
    # a driver status by name (TensorFlow's E lines, guppy's, a paste of a CUresult)
    r"|\b(?P<driver_name>CUDA_ERROR_[A-Z_]+)\b"
    # the runtime's name alone
    r"|\b(?P<runtime_name>cudaError[A-Z]\w+)\b"
    # a bare "CUDA error N": which enum the number is from the line does not say (AMReX, Claymore), its message may
    r"|\b(?i:cuda)[ _]?(?i:error)\s*(?:code\s*)?[:=#]?\s*(?P<bare_code>[1-9]\d*)\b(?!\s*%|\.\d)(?:.*?(?::|\s-)\s*(?P<bare_message>.*))?"
    # "cuda error: " in any case, then one of the table's messages (CryptoDredge's lower-case "cuda error: out of memory")
    rf"|\b(?i:cuda error)\s*:\s*(?P<any_message>(?i:{KNOWN}))"
    # a call and CUDA's message (tiny-cuda-nn's "cudaDeviceSynchronize() failed with error operation not supported"), or a
    # check that names the source line and then the message (AMReX's "GPU last error detected in file F line N: msg")
    rf"|\b(?:cuda|hip)[A-Z]\w*(?:\([^)]*\))?\s+failed with error:?\s*(?P<call_message>{KNOWN})"
    rf"|\berror\b.{{0,40}}? in file \S+ line \d+:\s*(?P<file_message>{KNOWN})"
    # xmr-stak's CUDA check and its forks' (bittube-miner): the GPU and the source line, not the error
    r"|\[CUDA\] Error gpu (?P<unnamed_gpu>\d+)\s*:"
)
# a line that reports the error as one it survived (retried, ignored, fell back) does not decide that the run failed
SURVIVED = r"^(?!.*(?i:\bwarn(?:ing)?\b|\bignor(?:e|ed|ing)\b|\bfalling back\b|\bretry(?:ing)?\b))"
# an allocation of pinned host memory the driver refused is the host's memory (host-memory-exhausted reads it), not the GPU's
HOST_MEMORY = r"(?!.*(?:[Hh]ost ?[Aa]lloc|MallocHost|[Pp]inned|pin.memory|bytes on host))"


def enums_of(g: dict, call: str, name: str) -> tuple[str, ...]:
    """The enums a line's number may come from, as its shape says (a bare "CUDA error N" says none)."""
    if g.get("driver_code") or call.startswith("cu") and not call.startswith("cuda"):
        return ("driver",)
    if g.get("hip_name") or call.startswith("hip") or name.startswith("hip"):
        return ("hip",)
    if g.get("bare_code"):
        return ("runtime", "runtime before CUDA 10.1", "driver")
    return ("runtime", "runtime before CUDA 10.1")


def undecided(code: str, read: dict[str, Fault]) -> dict:
    """A number that is another error in each enum the line may print it from: each said, and what decides."""
    meaning = "; ".join(f"in the {enum} enum it is {f.name} ({f.message})" for enum, f in read.items())
    return {"enum": "not said by the line", "error": f"error {code}", "meaning": meaning,
            "step": (f"which enum the program prints decides: the message or name beside the number, or the program's source at "
                     f"the call (a cu... call returns the driver's CUresult, a cuda... call the runtime's cudaError_t; a program "
                     f"built with CUDA older than 10.1 uses the runtime's old numbers): {meaning}")}


def not_in_table(code: str, name: str, message: str) -> dict:
    out = {"error": name or f"error {code}", "meaning": "an error gpudoctor's table of CUDA's errors does not hold",
           "step": ("the program's source at the call that returned it says which API's status it is; cudaGetErrorString (or "
                    "cuGetErrorString, hipGetErrorString) of that status names it; CUDA_LAUNCH_BLOCKING=1 names the call")}
    return {**out, "message": message.strip()} if message else out


# The calls that start CUDA in a process (a program's first CUDA call; cudaFree(0) is the idiom for it): an error there is
# CUDA not starting on this GPU, whatever came later
STARTS_CUDA = re.compile(r"\bcudaFree\(0\)|\b(?:cuInit|cudaSetDevice|cudaGetDeviceCount|cuDeviceGetCount|cuDevicePrimaryCtxRetain|cuCtxCreate\w*|hipInit|hipGetDeviceCount|hipSetDevice)\b")


def told(fault: Fault, name: str, code: str, enums: tuple[str, ...], line: str = "") -> dict:
    """A fault the line decides: its name in the enum the line printed it from, and its finding or its meaning and step."""
    meaning, step = fault.meaning, fault.step
    start = STARTS_CUDA.search(line)
    if start is not None and not fault.finding:  # CUDA did not start: the line decides which half of a catch-all's meaning holds
        step = f"the call that failed ({start.group(0)}) is the one that starts CUDA in the process, so CUDA did not start on this GPU: {step}"
    shown = name or (fault.driver if enums == ("driver",) else fault.hip if enums == ("hip",) else "") or fault.name
    out: dict = {"error": shown, "message": fault.message}
    if shown != fault.name:
        out["runtime_name"] = fault.name
    if enums == ("hip",):
        step = f"{HIP_DEVICES}; {step}" if step else HIP_DEVICES
    if fault.finding:
        out["read_as"] = fault.finding  # the finding this fault already has (knowledge/story.py tells it as that one)
        out["program_words"] = True  # in the program's own words, not torch's: with no Python in the log, a native program's (setting_fix.py)
        if step:
            out["step"] = f"{shown}: {step}"  # (said before the finding's own fix)
    elif meaning:
        out.update(meaning=meaning, step=f"{shown}{' (' + code + ')' if code else ''}: {meaning}: {step}")
    return out


def code_fields(m: re.Match, _context: list[str]) -> dict:
    """The fault a line names, by name, by message or by number in the enum its shape prints, and how it is told."""
    g = {k: v for k, v in m.groupdict().items() if v is not None}
    if g.get("unnamed_gpu"):  # the program names the GPU and its own source line, not which error
        gpu = g["unnamed_gpu"]
        return {"gpu": gpu, "error": f"one the program does not name (GPU {gpu})", "meaning": UNNAMED,
                "step": f"a CUDA call failed on GPU {gpu}: {UNNAMED_STEP}"}
    name = g.get("name_numbered") or g.get("hip_name") or g.get("driver_name") or g.get("runtime_name") or ""
    message = next((g[k] for k in ("runtime_message", "caffe_message", "bare_message", "any_message", "call_message", "file_message") if g.get(k)), "")
    code = next((g[k] for k in ("code_named", "runtime_code", "hip_code", "caffe_code", "driver_code", "call_code", "bare_code") if g.get(k)), "")
    call = g.get("call", "")
    enums = enums_of(g, call, name)
    out: dict = {"call": call} if call else {}
    if code:
        out["code"] = code
    fault = (BY_NAME.get(name.lower()) if name else None) or (by_message(message) if message else None)
    if fault is None and code:
        read = {enum: ENUMS[enum][int(code)] for enum in enums if int(code) in ENUMS[enum]}
        if len({f.name for f in read.values()}) > 1:
            return {**out, **undecided(code, read)}
        fault = next(iter(read.values()), None)
        if fault is not None:
            out["enum"] = " or ".join(read)
    if fault is None:
        return {**out, **not_in_table(code, name, message)}
    return {**out, **told(fault, name, code, enums, m.string)}


# NVENC's status (NVENCSTATUS in nvEncodeAPI.h), by number: its name, and for the ones programs meet at opening a session,
# what it means there and what to do
NVENC_SESSION_LIMIT = ("a GeForce or Quadro-class card's driver allows only a few encoding sessions at once, for all processes "
                       "together (3 in older drivers, 5 then 8 in newer ones): one more is refused, most often with this status; "
                       "it is also refused when the GPU's memory is really full")
NVENC_SESSION_STEP = ("nvidia-smi --query-gpu=encoder.stats.sessionCount --format=csv (and the other encoders on the GPU: "
                      "nvidia-smi, ffmpeg and OBS processes) shows the sessions open; encode fewer streams at once per GPU, "
                      "spread them over GPUs, use a data-center GPU (no session limit) or a driver with a higher limit")
NVENC_STATUS: dict[int, tuple[str, str, str]] = {
    1: ("NV_ENC_ERR_NO_ENCODE_DEVICE", "no GPU with an NVENC encoder is available to this process",
        "nvidia-smi -L in the same environment; a container needs the video capability (NVIDIA_DRIVER_CAPABILITIES=compute,video,utility)"),
    2: ("NV_ENC_ERR_UNSUPPORTED_DEVICE", "the GPU has no NVENC encoder this driver can use (a GPU without one), or the session "
        "limit of a consumer card was reached", "check the GPU in NVIDIA's encoder support matrix; " + NVENC_SESSION_STEP),
    3: ("NV_ENC_ERR_INVALID_ENCODERDEVICE", "the device handle passed to NVENC is not one it can use", ""),
    4: ("NV_ENC_ERR_INVALID_DEVICE", "the device or its CUDA context passed to NVENC is invalid", ""),
    5: ("NV_ENC_ERR_DEVICE_NOT_EXIST", "the device NVENC was told to use no longer exists", ""),
    6: ("NV_ENC_ERR_INVALID_PTR", "a pointer passed to NVENC is invalid", ""),
    8: ("NV_ENC_ERR_INVALID_PARAM", "a parameter of the encoding (size, rate, preset, profile) is one NVENC does not take", ""),
    9: ("NV_ENC_ERR_INVALID_CALL", "NVENC's calls were made in the wrong order", ""),
    10: ("NV_ENC_ERR_OUT_OF_MEMORY", NVENC_SESSION_LIMIT, NVENC_SESSION_STEP),
    11: ("NV_ENC_ERR_ENCODER_NOT_INITIALIZED", "the encoder was used before it was initialised", ""),
    12: ("NV_ENC_ERR_UNSUPPORTED_PARAM", "an encoding option this GPU's NVENC does not support (a codec, a profile, B-frames)", ""),
    15: ("NV_ENC_ERR_INVALID_VERSION", "the program was built against a newer NVENC API than the driver provides",
         "update the NVIDIA driver (or use a build of the program made with an older Video Codec SDK)"),
    20: ("NV_ENC_ERR_GENERIC", "NVENC failed without a specific reason", ""),
}
NVENC_BY_NAME = {name: code for code, (name, _m, _s) in NVENC_STATUS.items()}


def nvenc_fields(m: re.Match, _context: list[str]) -> dict:
    g = {k: v for k, v in m.groupdict().items() if v is not None}
    said = g.get("nvenc_code") or g.get("nvenc_code2")
    code = int(said) if said else NVENC_BY_NAME.get(g.get("nvenc_name", ""), 0)
    name, meaning, step = NVENC_STATUS.get(code, (g.get("nvenc_name", f"status {code}"), "", ""))
    step = step or "the encoder's parameters and the driver's NVENC support for this GPU decide; NVIDIA's Video Codec SDK documents the status"
    out = {"status": name, "step": f"{name} ({code}){': ' + meaning if meaning else ''}: {step}"}
    if code:
        out["code"] = str(code)
    if g.get("nvenc_call"):
        out["call"] = g["nvenc_call"]
    return out


NO_DEVICE = (
    # hashcat's last words, alone on their line
    r"^No (?:\w+ )?devices? (?:found|left|detected|available)(?:/left)?\s*\.?\s*$"
    # at error level, in the program's own words: found none, or could not find or initialise the device it was told to use
    # (right after the level, a program's or a component's name allowed between: "Error reading GPU information, set no
    # GPU" is a program going on without one)
    r"|(?:^|[\s\]:>(])(?:ERROR|Error|error|FATAL|Fatal|fatal)\b[\]:)]?\s*(?:[\w.\-]+:\s*)?(?P<said>(?:[Ff]ound no|[Nn]o|"
    r"[Cc]ould not (?:find/initiali[sz]e|find|initiali[sz]e|detect)|[Cc]annot find|[Uu]nable to (?:find|detect)|[Ff]ailed to (?:find|detect))"
    r"\s+(?:a |any )?(?:specified |requested |usable |suitable |compatible |available )?(?:[\w/-]+ ){0,2}?(?:devices?|GPUs?|accelerators?)\b"
    r"(?! ids?\b| memory\b)[^;]*)"
    # at error level, the device an option asked for and none found (tortoise's "RuntimeError: Error: You set cuda=True but no
    # cuda device found."; heldout27b tortoise-fast-145): a warning of the same is program-found-no-gpu's
    r"|(?:^|[\s\]:>(])(?:ERROR|Error|error|FATAL|Fatal|fatal)\b[\]:)]?\s*(?:[\w.\-]+:\s*)?(?P<asked>[^;\n]{0,60}?\b(?:cuda|gpu)\s*=\s*True,? "
    r"but no (?:cuda |CUDA |gpu |GPU )?devices? (?:was |were )?found)"
)
FELL_BACK = r"^(?!.*(?i:\bfall(?:ing|s)? back\b|\busing (?:the )?CPU\b|\bon (?:the )?CPU\b|\bwill (?:be )?us(?:e|ing) (?:the )?CPU\b|\binstead\b|\bwarn(?:ing)?\b|\bINFO\b))"


PATTERNS_EARLY = [
    pattern(
        "cuda-error-code",
        "cuda",
        CAUSE,
        E,
        "a CUDA or HIP call returned an error",
        # after every cuda pattern and the message class: a whole message a specific pattern reads is that pattern's
        SURVIVED + HOST_MEMORY + r".*?(?:" + SHAPES + r")",
        NEEDLES,
        why="""A CUDA (or HIP) call returned an error status and the program printed its number or its enum name rather
        than CUDA's message: "cudaError 30", "CUDA error 2 in file ...", "code=13(cudaErrorInvalidSymbol)", "Cuda driver
        error 1", "failed with error(219)", "CUDA_ERROR_NO_BINARY_FOR_GPU", "hipErrorInvalidDevice (101)". The numbers
        come from three tables: the runtime API's cudaError_t (renumbered in CUDA 10.1: unknown error was 30 and is 999,
        an illegal address was 77 and is 700), the driver API's CUresult (a cu... call's; it differs from the runtime's
        below 100, 1 is an invalid value there and a missing launch configuration in the old runtime) and HIP's, which
        follows the runtime's new numbers. gpudoctor reads the number in the table the line's shape prints it from, and
        where the line does not say which, says what it means in each. A fault gpudoctor has a finding for (out of
        memory, no device, an invalid device ordinal, no kernel for this GPU, an illegal address, a launch failure, a
        driver too old, devices busy) is told as that finding; the fix below is this error's.""",
        fix="STEP",
        examples=[
            ("[2014-01-28 12:42:22] GPU #0: cudaError 30 (unknown error) calling 'cudaStreamQuery(context_streams[stream][thr_id])' (salsa_kernel.cu line 919)",
             "https://github.com/cbuchner1/CudaMiner/issues/82 (after minutes of mining on two Tesla M2090s; heldout18)"),
            ("[2021-04-21 14:52:10] GPU #0: cudaError 30 (unknown error) calling 'cudaFree(0)' (salsa_kernel.cu line 240)",
             "https://github.com/dogecoin/dogecoin/issues/1843 (an old CudaMiner build's first call on an RTX 2070 SUPER; heldout18)"),
            ("22:07:05:037	7f0	GPU 0, CUDA error 11 - cannot write buffer for DAG",
             "https://github.com/nanopool/Claymore-Dual-Miner/issues/230 (more GTX 1060 cards on one rig; heldout18)"),
            ("> Cuda driver error 1 in call at file 'geryon/nvd_kernel.h' in line 364.",
             "https://github.com/lammps/lammps/issues/2619 (a second LAMMPS instance with the GPU package in one process; heldout18)"),
            ("CUDA error at C:/projects/skymind/deploy/windows-x86_64/libnd4j/blas/cuda/NativeOps.cu:5232 code=13(cudaErrorInvalidSymbol) \"result\"",
             "https://github.com/deeplearning4j/deeplearning4j-examples/issues/403 (heldout17)"),
            ("However, I got error: 'hipErrorInvalidDevice'(101) at square.cpp:61, when I tested square.cpp.",
             "https://github.com/ROCm/hip/issues/2265 (HIP_PLATFORM amd on an NVIDIA GPU; heldout18)"),
            ("amrex::Abort::10::CUDA error 2 in file /nlsasfs/home/fdmod/srkumar/PeleC/Submodules/PelePhysics/Submodules/amrex/Src/Base/AMReX_Arena.cpp line 193: out of memory !!!",
             "https://github.com/Pele-Suite/PeleC/issues/809 (16 MPI ranks on one GPU; told as cuda-oom; heldout18)"),
            ("  [guppy/error] *common::LoadModuleFromFatbin: Loading fatbin file shared.fatbin failed with: CUDA error at /builds/ofan/ont_core_cpp/ont_core/common/cuda_common.cpp:54: CUDA_ERROR_NO_BINARY_FOR_GPU",
             "https://github.com/biocorecrg/master_of_pores/issues/106 (told as cuda-no-kernel-image; heldout18)"),
            ("F0204 18:10:50.435636 15168 math_functions.hpp:176] Check failed: error == cudaSuccess (30 vs. 0)  unknown error",
             "https://github.com/happynear/caffe-windows/issues/184 (Caffe's cudaMemset on two GTX 1080s; heldout8)"),
            ("cuda error: out of memory in cduMem::cduMem (8)",
             "https://github.com/technobyl/CryptoDredge/issues/89 (several RTX 3060s; told as cuda-oom; heldout18)"),
            ("[CUDA] Error gpu 1: <C:/Projects/bittube-miner/xmrstak/backend/nvidia/nvcc_code/",
             "https://github.com/ipbc-dev/bittube-miner/issues/22 (all six GPUs after 20-30 minutes; the maintainer suspects an overclock; heldout18)"),
        ],
        not_examples=[
            "RuntimeError: CUDA error: out of memory",  # CUDA's message in torch's words: cuda-oom's own
            "CUDA error 0: no error",  # success is no error
            "[W] cudaError 2 (out of memory) on the first try, retrying with a smaller buffer",  # survived
            "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=405 error=11 : invalid argument",  # printed, the run went on
            "CUDNN_STATUS_EXECUTION_FAILED",  # cuDNN's own status table
            "cudnnConvolutionForward failed with error 8",  # cuDNN's number, not CUDA's
            # pinned host memory the driver could not page-lock (talmolab/sleap#2001): host-memory-exhausted's
            "2024-10-22 09:22:17.233972: E tensorflow/stream_executor/cuda/cuda_driver.cc:802] failed to alloc 34359738368 bytes on host: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
        ],
        fields=code_fields,
    ),
    pattern(
        "nvenc-error-code",
        "cuda",
        CAUSE,
        E,
        "NVIDIA's video encoder (NVENC) refused a call",
        # ffmpeg's "OpenEncodeSessionEx failed: out of memory (10)", VPF's "nvEncOpenEncodeSessionEx(...) returned error 10",
        # a status by name (NV_ENC_ERR_...)
        SURVIVED + r".*?(?:(?P<nvenc_call>(?:nvEnc)?(?:OpenEncodeSession(?:Ex)?|InitializeEncoder|EncodePicture|CreateInputBuffer|"
        r"CreateBitstreamBuffer|RegisterResource|MapInputResource))\b(?:\([^)]*\))?\s*(?:failed\b.*?\((?P<nvenc_code>[1-9]\d?)\)|"
        r"returned error (?P<nvenc_code2>[1-9]\d?)\b)|\b(?P<nvenc_name>NV_ENC_ERR_[A-Z_]+))",
        ("EncodeSession", "InitializeEncoder", "EncodePicture", "CreateInputBuffer", "CreateBitstreamBuffer", "RegisterResource",
         "MapInputResource", "NV_ENC_ERR_"),
        why="""NVENC, the GPU's hardware video encoder, returned an error status (NVENCSTATUS) to a program that encodes with
        it (ffmpeg's h264_nvenc/hevc_nvenc, NVIDIA's VideoProcessingFramework, OBS, a streaming server). The status
        decides what failed: at opening a session, out of memory (10) is most often the driver's limit on encoding
        sessions at once on a GeForce or Quadro-class card, counted over every process on the GPU, and an unsupported
        device (2) a GPU without NVENC or the same limit; an invalid version (15) a driver older than the program's
        NVENC API.""",
        fix="STEP",
        examples=[
            ("[h264_nvenc @ 0x55ba06f470c0] OpenEncodeSessionEx failed: out of memory (10): (no details)",
             "https://github.com/illnyang/nvlax/issues/4 (a fourth ffmpeg output on an RTX 2080 Ti; keylase/nvidia-patch lifts the limit; heldout18)"),
            ("RuntimeError: NvEncoder : m_nvenc.nvEncOpenEncodeSessionEx(&encodeSessionExParams, &hEncoder) returned error 10",
             "https://github.com/NVIDIA/VideoProcessingFramework/issues/161 (two encoding processes on a GeForce RTX 3090; heldout18)"),
        ],
        not_examples=[
            "[h264_nvenc @ 0x5581] Loaded Nvenc version 11.1",
            "[W] OpenEncodeSessionEx failed: out of memory (10), retrying in 1 s",  # survived
            "Error initializing output stream 3:0 -- Error while opening encoder for output stream #3:0 - maybe incorrect parameters such as bit_rate, rate, width or height",
        ],
        fields=nvenc_fields,
    ),
]

PATTERNS = [
    pattern(
        "program-found-no-device",
        "cuda",
        CAUSE,
        E,
        "the program found no device of the kind it runs on (or not the one it was told to use), and stopped",
        FELL_BACK + r".*?(?:" + NO_DEVICE + r")",
        ("No device", "No devices", "no device", "no devices", "No GPU", "no GPU", "Found no", "found no", "ould not find",
         "ould not initiali", "ould not detect", "annot find", "nable to find", "nable to detect", "ailed to find", "ailed to detect",
         "but no cuda device", "but no CUDA device", "but no gpu device", "but no GPU device"),
        why="""The program looked for the devices it runs on (CUDA, OpenCL, its accelerator package's) and found none it
        could use, or not the one its options named, and stopped there. The line does not say why; the usual reasons: the
        driver or the runtime of that kind is not installed or not visible to the process (a container or a notebook
        started without its GPU, an OpenCL or CUDA runtime the program needs missing beside the driver), CUDA_VISIBLE_DEVICES
        hiding the GPUs, or the program asked for more devices, another index or another type than the machine has (a GPU
        count or a device type in its options).""",
        fix="""in the job's own environment: nvidia-smi -L   # no GPU or an error: the driver, or the container or notebook was
        given none (docker run --gpus all, the notebook's GPU runtime); echo $CUDA_VISIBLE_DEVICES (empty hides every GPU);
        then the program's own device list (hashcat -I, blender's Cycles device preferences, clinfo for OpenCL) and its device
        options: the count and the indices it is given must be ones that list shows""".replace("\n        ", " "),
        examples=[
            ("No devices found/left.", "https://github.com/philsmd/7z2hashcat/issues/47 (hashcat 6.2.5 whose GPU drivers were not set up for it; heldout18)"),
            ("Error: Found no Cycles device of the specified type",
             "https://github.com/Giodestone/blender-colab/issues/20 (Blender 3.6 in Colab; heldout18)"),
            ("ERROR: Could not find/initialize a specified accelerator device (src/GPU/gpu_extra.h:57)",
             "https://github.com/lammps/lammps/issues/4131 ('package gpu 4' on a machine with fewer GPUs; heldout18)"),
            ("RuntimeError: Error: You set cuda=True but no cuda device found.",
             "https://github.com/152334H/tortoise-tts-fast/issues/145 (an RTX 3060 on Windows; --device 0 made it run; heldout27b)"),
        ],
        not_examples=[
            "ps-SYS-420GP-TNR:1697708:1698247 [1] NCCL INFO NET/IB : No device found.",  # no InfiniBand: NCCL uses sockets
            "WARNING - xla_bridge.py - 2022-04-08 20:52:52,172 - No GPU/TPU found, falling back to CPU.",  # a fallback
            "2025-01-20 12:28:47,577 WARNING: no GPU detected, will be using CPU",
            "Found 2 devices",
            "> WARNING: NVIDIA no device found",  # a warning: the program goes on with another backend
            "UserWarning: No device id is provided via `init_process_group` or `barrier`.",
        ],
    ),
]
