"""The one pass over a block of log before any per-pattern work: which lines may hold a failure.

Most lines of a training log are healthy and repeat with only their numbers changed
(loss prints, progress bars, NCCL INFO lines). So a block is first reduced to its
distinct lines with the digits made 0 (`Digest`, once per block for all its readers:
the scanner, the launcher, end and nvidia-smi readers ask it before they search the
block), and the trigger words are looked for in that (usually a small fraction of the
block). Only a trigger found there is then searched in the whole block, to find the
lines that hold it. Everything runs in C (bytes.lower / translate / split / set / find);
Python only sees the candidate lines.

Every line a pattern or the structural reader (`signs`) reads contains a trigger: a
test checks each pattern's examples against `has_trigger`.
"""

from __future__ import annotations

import itertools
import operator
import re
import sys
from collections.abc import Iterable, Sequence
from typing import Any, Optional

if sys.version_info >= (3, 11):
    import re._parser as sre_parse
else:  # pragma: no cover
    import sre_parse

# Lower-case words; longer is cheaper and more precise.
TRIGGERS = (
    # what most failure lines say
    "error",
    "errno",
    "fail",
    "✗",  # a script's cross mark before a step that failed (evidence.py's "status")
    "✘",
    "❌",
    "warn",
    "exception",
    "内核映像",  # CUDA's "no kernel image" in a translated paste (cuda-no-kernel-image)
    "cuda_path is set",  # onnxruntime's CUDA provider not loaded, quoted without its "EP Error" (onnxruntime-cuda-provider-failed)
    "traceback",
    "timeout",
    "timed out",
    "kill",
    "cannot find -l",  # the linker's library not found, in a build of GPU code (build-dependency-missing)
    "which is incompatible",  # pip's list, after an install, of the packages whose requirement it broke (pip-installed-with-conflicts)
    "unknown cuda architecture",  # CMake's FindCUDA refusing an architecture name, under its "CMake Error" line (build-gpu-arch-unsupported)
    "signal",
    "sigsegv",
    "sigabrt",
    "sigbus",
    "sigterm",
    "abort",
    "exit",
    "fatal",
    "fata[",  # logrus's text level ("FATA[0000] ..."), the NVIDIA Go tools' fatal line
    "assert",
    "terminat",
    "what():",
    "root cause",
    "checked in",
    "barrier",
    "segmentation fault",
    "_fault",
    " fault",
    "illegal instruction",
    "_status_",
    "invalid",
    "watchdog",
    "no route",
    "refused",
    "not supported",
    # a program that runs on one GPU, in its own words (patterns/classes22d.py): Unsloth's, mmcv's MMDataParallel's
    "not support multi",
    "not work on multi",
    "only supports single gpu",
    "is not a valid",  # a program refusing a value (evidence.py's "invalid")
    " toolbox.",  # MATLAB's "gpuDeviceCount requires Parallel Computing Toolbox." (patterns/classes22c.py)
    "found from :",  # torch.compile's notice before the stack it found an op in (signs.NOTICE_STACK): its frames are no traceback
    # torch's warning for a GPU its build has no kernels for, by its other lines (patterns/cuda.py cuda-no-kernel-image)
    "install supports cuda capabilities",
    "gpu with pytorch, please check",
    # a loss that turned NaN / Inf in a step line (patterns/training.py): nothing else in such a line says failure
    "loss nan",
    "loss: nan",
    "loss=nan",
    "loss = nan",
    "loss': nan",
    "loss\": nan",
    "loss inf",
    "loss: inf",
    "loss=inf",
    "loss = inf",
    "loss': inf",
    "loss: -nan",
    "loss tensor(nan",
    "out of memory",
    "insufficient",  # a program's own words for a GPU's memory too small: rigel's "GPU#0 error: insufficient memory" (patterns/classes31a.py)
    "enough memory",  # "not enough memory on GPU 0", ethminer's "hasn't enough memory available" (patterns/classes31a.py)
    "enough gpu memory",
    "available on device",  # nsfminer's "Epoch 397 requires 4.17 GB ... from total of 1024.00 MB available on device." (classes31a.py)
    "oom when allocating",  # TensorFlow's root error under its ResourceExhaustedError, "(0) Resource exhausted: OOM when ..." (patterns/classes23c.py)
    "stopiteration",
    "undefined symbol",
    "your machine only has",
    "this machine only has",  # Keras's multi_gpu_model check, quoted without its ValueError (patterns/classes14b.py)
    "is required. get it with",  # setuptools' MSVC lookup on Windows, quoted without its "error:" (patterns/classes14b.py)
    "unable to launch the specified application",  # Open MPI's help text: the program not started on a node (patterns/classes15b.py)
    "unable to find the specified executable",
    "unless no samples are taken",  # numpy's choice, its ValueError on the line above (patterns/classes15b.py)
    "cannot dlopen some gpu libraries",  # TensorFlow's warning at level W, no level word (patterns/classes15b.py)
    "unknown flag: --gpus",  # docker before 19.03, its only line (patterns/classes16b.py)
    "exec: --nv",  # Singularity given --nv after the image: its action script's line (patterns/classes16b.py)
    "exec: --rocm",
    "reported lower than configured",  # Slurm's node reason: fewer GPUs than slurm.conf gives it (patterns/classes24a.py)
    "no gpu node in the cluster",  # the GPU operator's INFO line: no node has an NVIDIA GPU label (patterns/classes24a.py)
    "cuda.is_available()",  # a program's probe printed: no GPU in this process (patterns/classes17b.py)
    "cuda available",  # the same answer in an environment report's or a script's words, TF's and JAX's (classes17b.py, diagF31)
    "num gpus available",
    "is_gpu_available()",
    "list_physical_devices(",
    "[cpudevice(id=0)]",
    "device_type='cpu')",
    "build pytorch: none",
    "built with cuda",
    "+cpu",  # collect_env's "PyTorch version: 2.0.0+cpu"
    "version.cuda",
    "device_count()",
    "number of gpus: 0",
    "no gpu found",
    "no gpu detected",
    "no gpus found",
    "no gpus detected",
    "no devices found",  # a program's own last words when it found no device (hashcat: patterns/classes19a.py)
    "() return",  # a HIP or CUDA call and the status it returned, said in a sentence (patterns/classes19a.py)
    "busy or unavailable",  # CUDA's message for devices in exclusive mode or in use, said without a wrapper (patterns/cuda.py)
    # a parallel layout refused, its message printed alone or quoted in a sentence (patterns/classes20a.py)
    "incompatible with pipeline",
    "incompatible with tensor",
    "than the number of available",
    "available devices",
    "not enough slots",  # Open MPI's mpirun: more ranks than its hosts' slots
    "allocate any gpus on the driver",  # vLLM's Ray executor, its ValueError quoted alone (patterns/classes20a.py, diagD21)
    "nv_enc_err",  # NVENC's status by name (patterns/classes19a.py)
    # a program's count of its data, printed as it loads it, when it is 0 (patterns/classes15b.py's dataset-reported-empty)
    "in dataset: 0",
    "no image valid",  # (and "no image is valid": a program's check of its images, diagB16)
    "no image is valid",
    "in the dataset:0",
    "in the dataset: 0",
    "found 0 ",
    "loaded 0 ",
    "via ssh",
    "cuda_home",
    "train_batch_size is not equal",
    "could not run 'torchvision",
    "cannot open shared object",
    "device_map='auto'",
    "inconsistent compute device",
    "not initialized",
    "(device_ids[0])",
    "same device but",  # a device check that names both operands' devices, quoted without its exception (patterns/ddp.py)
    "paging file",
    # the GPU stack not ready, in lines with no word above (knowledge/gpu_library.py, patterns/classes28b.py, classes17b.py,
    # classes11b.py): a device plug-in's info line that the driver's library is not there, a DLL missing, a program's backends
    # the CPU's alone, the Vulkan loader with no driver, a program's own words that it found no GPU or refused its architecture
    "could not load nvml library",
    # the driver's own library not loadable, in a program's words with no word above (patterns/cluster.py: nvidia-smi's,
    # ffmpeg's hardware context's, pynvml's, numba's)
    "couldn't find libnvidia-ml",
    "cannot load libcuda",
    "cannot load nvcuda",
    "load nvcuda.dll",
    "nvml shared library not found",
    "driver library cannot be found",
    # a program's GPU backend turned off, in its own words (patterns/classes31b.py): xmr-stak's, an OpenCL probe's, cellpose's
    "insufficient driver",
    "backend nvidia",
    "backend amd",
    "backend intel",
    "backend cuda",
    "backend opencl",
    "opencl platform",
    "platform count",
    "opencl devices",
    "opencl device found",
    "torch cuda version not installed",
    "dll is missing",
    "dll was missing",
    "dll was not found",
    "cpuexecutionprovider",
    "sherpa_onnx_enable_gpu",
    "runners=[cpu",
    "dynamic llm libraries [cpu",
    "gpu offload support",
    "vkcreateinstance",
    "vkenumerate",
    "unsupported cuda architecture",
    "no agent was found",
    "but cuda is not available",
    "but no cuda device",
    "could not locate",
    "unable to load any of {",
    "not in available provider names",
    "cuda extension not installed",  # auto-gptq without its CUDA kernels (patterns/classes28b.py, diagC31)
    "cuda kernels for auto_gptq",
    # lines that arrive without any of the words above (continuation lines, bare NCCL lines, noise)
    "no device found",
    "no gpu to monitor",
    "detected by dmesg",  # a node agent's event quoting the kernel's Xid (gpud), in a JSON line with no other trigger
    "detected by kmsg",  # nvtop's only line when it cannot read NVML (patterns/classes10c.py)
    "got completion",
    "omp_num_threads",
    "redirects",
    "nvrm: xid",
    "duplicate gpu",
    "guessing device",
    "not compatible",
    "af_inet",
    "dmar:",
    "via p2p",
    "marked as ready",
    "closed by",
    "reset by peer",
    "remote process",
    "fallen off the bus",
    "process down",
    "driver on your system",
    "no socket interface",  # NCCL's "Last error:" line as torch quotes it: "Bootstrap : no socket interface found"
    "did not run successfully",  # pip's line for a package build that failed (its reason is in the lines above)
    "mismatches the version",  # torch.utils.cpp_extension: the toolkit's CUDA is not the one torch was built with
    "launch is deprecated",
    "no longer supports this gpu",  # torch's warning for a GPU older than its build supports (no level word on its line)
    "kernels for this gpu",  # torch 1.9 printed torch.distributed.launch's deprecation through logger.warn, with no level word
    "open nvidia.ko",  # the kernel module's own reasons for not driving a GPU (dmesg)
    "nvrm: the nvidia",
    "bootstrap riscv",
    "nodes are available",  # the scheduler's event for a pod no node takes
    "unschedulable",
    "in use by another",  # a GPU reset the driver refuses (MIG mode changes)
    "libbitsandbytes",  # bitsandbytes' CUDA SETUP lines: the library it wants, falls back to or loaded
    "unexpected happened",  # bitsandbytes' "CUDA SETUP: Something unexpected happened. Please compile from source"
    "configuration_auto.py",  # transformers' model-type mapping: a notebook's frame line, which carries no other trigger
    # the failure detector's lines without any word above: a traceback's frames whose header was
    # cut, torch's C++ backtrace, rich's boxed frames, a shell's "not found", Ray's dead workers
    'file "',
    # the same frame on a page that escaped its quotes (a paste from HTML: lines.strip
    # decodes it before any pattern reads the line)
    "file &quot;",
    "file &#34;",
    "file &#x22;",
    "frame #",
    ")[0x",  # a native stack's frame as glibc's backtrace_symbols writes it (signs.NATIVE_FRAME)
    ".dll!",  # ... and as c10 writes it on Windows (one frame of a stack is enough: the rest are told with it)
    "│ /",
    "│ ❱",  # rich's running line under a frame whose path is a Windows one ("│ C:\\...\\train.py:873 in <module>")
    "│ &#x2f;",  # rich's frame on a page that escaped its slashes
    "│ &#47;",
    '.py", line ',  # a frame whose head the paste cut
    "not found",
    "could not be found",  # systemd's "Unit X.service could not be found." (evidence.py's "systemd")
    "not recognized as an internal",  # cmd.exe's own "not found" (evidence.py's "winlaunch")
    " died",
    "not a valid identifier",
    "permission denied",
    "no such file",
    "process ",
    "no devices were found",
    "keyboardinterrupt",
    "invalid rank",
    "does not match",
    "storage has wrong size",
    "pytorchstreamreader",
    "might be corrupted",
    "mpirun ",
    "primary job",
    "raylet is terminated",
    "marked dead",
    "raylet connection closed",
    "%20",  # a line copied out of a URL (lines.strip decodes it)
    # torch's NCCL process group's own log lines (evidence.py's "c10error": an error-level one cut before its words)
    "processgroupnccl.",
    "ncclutils.",
    # a program's message, pasted without its class, that names the set-up call it lacks (evidence.py's "notsetup")
    "please initiali",
    "please make sure to call",
    "please call",
    # a logger's levels and the words of schedulers, cluster managers and the interpreter (evidence.py)
    "critical",
    "panic",
    "luajit: ",  # Lua's interpreters' error line (evidence.py's "lua"): "bin/luajit: x.lua:403: attempt to call field 'GPU' (a nil value)"
    "lua: ",
    ".lua:",  # (and Torch7's th, whose name alone is in too many words: its line names the chunk, x.lua:N:)
    ": f ",  # tsl's (TensorFlow, XLA, JAX) fatal line: "2025-04-23 20:35:34.618070: F external/xla/...cc:1099] Non-OK-status: ..."
    "unbound variable",  # a script under set -u (evidence.py's "notfound")
    "backoff",
    "evicted",
    "out_of_memory",
    "can't open file",
    "no module named",
    "__main__' module",
    "double free",
    "corrupted ",
    "ninja: build stopped",
    "make: ***",
    "make[",
    "e: unable",  # apt's E: lines (its others hold "error", "fail" or "not found")
    "e: package",
    "e: could not",
    "×",
    "backofflimitexceeded",
    "deadlineexceeded",
    "containercannotrun",
    "illegal hardware",
    # classes of messages (patterns/classes.py) whose lines hold none of the words above
    "cannot import name",
    "size mismatch for",
    "gated repo",
    "no gpu to monitor",  # nvtop finding no GPU (patterns/classes10a.py)
    "logits and labels must",  # a loss's logits and labels of different shapes (patterns/classes11a.py)
    "a total of ",  # Caffe's data layer logging how many images its list held, 0 among them (patterns/classes12a.py)
    "must be used in conjunction",  # nvidia-smi refusing a flag without the one it needs (patterns/classes11b.py)
    # numerics (patterns/families6.py): a logged loss that is nan, inf or Trainer's 0.0, a script stopping on it,
    # fp16's loss scaler skipping a step (the exceptions they raise hold "error"/"exception"/"assert"; each
    # trigger costs a scan of every block, so one word covers every spelling of nan)
    "stopping training",
    "overflow",
    "nan",
    ": inf",
    "=inf",
    "= inf",
    " (inf)",  # MetricLogger's running average (DINOv2, DeiT, MAE): "total_loss: 6.7223 (inf)"
    "': 0.0,",
    '": 0.0,',
    "train_loss",
)
DIGITS = b"0123456789"
HEX = DIGITS + b"abcdefABCDEF"
ZEROS = bytes.maketrans(DIGITS, b"0" * len(DIGITS))
TRIGGER_BYTES = tuple(dict.fromkeys(t.encode() for t in TRIGGERS))
# what each trigger looks like once the digits are out of the text
TRIGGER_KEYS = tuple((t, t.translate(None, DIGITS)) for t in TRIGGER_BYTES)


def has_trigger(text: str) -> bool:
    low = text.lower()
    return any(t in low for t in TRIGGERS)


class Digest:
    """A block of log reduced to its distinct lines with every digit made a 0 (`text`), and those again without
    digits or hex letters (`bare`): the lines a log repeats with other numbers collapse (most of them: a number of
    another length stays apart), and a checkpoint's hash, an address or a UUID no longer makes each line its own.
    A word (no newline in it) that is in the block is in `text` with its digits made 0 and in `bare` without its hex
    digits, so a word missing from either is not in the block: every reader of a block asks this first
    (`may_hold`), and searches the block itself only for the words that pass (each search of a whole block costs
    as much as all of this). A regex that cannot tell one digit from another (`digit_blind`) and reads one line
    at a time finds a line in `text` when it finds one in the block (`lines_holding`).
    A block read from a stream begins and ends inside a line: `head_cut` and `tail_cut` are its first and last pieces
    (digits made 0) where no other piece of it is the same, so that a reader of its whole lines alone knows the lines
    of `text` that are none of them (None: the piece is one of its lines too, or there is one piece)."""

    def __init__(self, block: bytes) -> None:
        pieces = block.translate(ZEROS).split(b"\n")
        self.text = b"\n".join(set(pieces))
        self.head_cut = pieces[0] if len(pieces) > 1 and pieces.count(pieces[0]) == 1 else None
        self.tail_cut = pieces[-1] if len(pieces) > 1 and pieces.count(pieces[-1]) == 1 else None
        self.size = len(block)
        self._bare: Optional[bytes] = None
        self._made = False

    def bare(self) -> bytes:
        """`text` without hex digits ('' where `text` is as big as half its block: lines that hardly repeat, one
        endless line; a second copy of them would hold memory and spare no search)."""
        if not self._made:
            if len(self.text) <= self.size // 2 or self.size < DIGEST_MIN:
                self._bare = b"\n".join(set(self.text.translate(None, HEX).split(b"\n")))
            self._made = True
        return self._bare or b""

    def may_hold(self, words: Iterable[bytes], lower: bool = False) -> list[bytes]:
        """The words (none with a newline) that may be in the block: all that are, perhaps a few that are not.
        `lower`: words in lower case, for the block lower-cased."""
        text, bare = self.text, self.bare()
        if lower:
            text, bare = text.lower(), bare.lower()
        skip_bare = self._bare is None
        out = []
        for word in words:
            keys = KEYS.get(word)
            if keys is None:
                keys = KEYS[word] = (word.translate(None, HEX), word.translate(ZEROS))
            if (skip_bare or keys[0] in bare) and keys[1] in text:
                out.append(word)
        return out


def lines_holding(block: bytes, words: Iterable[bytes]) -> bytes:
    """The distinct whole lines of `block` that hold one of the words (none with a newline), joined by newlines."""
    lines: set[bytes] = set()
    for word in words:
        pos = block.find(word)
        while pos != -1:
            start = block.rfind(b"\n", 0, pos) + 1
            stop = block.find(b"\n", pos)
            stop = len(block) if stop == -1 else stop
            lines.add(block[start:stop])
            pos = block.find(word, stop)
    return b"\n".join(lines)


def lines_with(digests: Sequence[Digest], words: Iterable[bytes], most: int) -> dict[bytes, set[bytes]]:
    """For each word (a trigger: lower case, no newline), the distinct lines of the digests' `text` (digits made 0, case
    kept) that hold it in any case: every line of their blocks that holds it is one of these, its digits made 0. A word
    on more than `most` such lines is left out (a block whose lines hardly repeat: reading them costs more than it
    spares), and so is every word where a digest's text is over LINES_WITH_TEXT bytes."""
    if any(len(d.text) > LINES_WITH_TEXT for d in digests):
        return {}
    texts = [(d.text, d.text.lower()) for d in digests]  # (ASCII letters only: offsets stay those of `text`)
    out: dict[bytes, set[bytes]] = {}
    for word in words:
        needle, found = word.translate(ZEROS), set[bytes]()
        for text, low in texts:
            pos = low.find(needle)
            while pos != -1 and len(found) <= most:
                start = low.rfind(b"\n", 0, pos) + 1
                stop = low.find(b"\n", pos)
                stop = len(low) if stop == -1 else stop
                found.add(text[start:stop])
                pos = low.find(needle, stop)
        if len(found) <= most:
            out[word] = found
    return out


def digit_blind(regex: re.Pattern) -> bool:
    """Whether the regex matches a text exactly when it matches the text with each ASCII digit made a 0: it names
    no digit (`\\d`, `\\w` and `[0-9]` treat them all alike; a literal 5, a class of some digits or a back-reference
    may not). Unsure is no."""
    try:
        tree = sre_parse.parse(regex.pattern, regex.flags)
    except Exception:  # (a private module: whatever it does in another Python)
        return False
    return _blind(tree)


def _blind(items: Any) -> bool:  # (a SubPattern: iterable, though typeshed does not say so)
    digits = range(ord("0"), ord("9") + 1)
    for op, av in items:
        name = str(op)
        if name in ("LITERAL", "NOT_LITERAL"):
            if av in digits:
                return False
        elif name == "IN":
            for kind, arg in av:
                kind = str(kind)
                if kind == "LITERAL" and arg in digits:
                    return False
                if kind == "RANGE" and arg[0] <= digits[-1] and arg[1] >= digits[0] and not (arg[0] <= digits[0] and arg[1] >= digits[-1]):
                    return False
                if kind not in ("LITERAL", "RANGE", "CATEGORY", "NEGATE"):
                    return False
        elif name in ("AT", "ANY", "CATEGORY"):
            continue
        elif name == "SUBPATTERN":
            if not _blind(av[-1]):
                return False
        elif name == "BRANCH":
            if not all(_blind(branch) for branch in av[1]):
                return False
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            if not _blind(av[2]):
                return False
        elif name in ("ASSERT", "ASSERT_NOT"):
            if not _blind(av[1]):
                return False
        elif name == "ATOMIC_GROUP":
            if not _blind(av):
                return False
        else:  # a back-reference, a conditional group, anything new
            return False
    return True


KEYS: dict[bytes, tuple[bytes, bytes]] = {}  # a word -> (without hex digits, with its digits made 0)
MANY = 1000  # a trigger found on this many lines of a block: its lines are found by reading every line
DIGEST_MIN = 1 << 20  # a block smaller than this is searched as it is
LINES_WITH_TEXT = 1 << 18  # a digest's text longer than this is not read line by line (`lines_with`)
_last: Optional[tuple[bytes, Digest]] = None  # the last big block digested: its readers (the tee, the scanner) share it


def digest(block: bytes) -> Digest:
    """The block's Digest, made once for all who read the same block (the same object: bytes cannot carry it)."""
    global _last
    last = _last
    if last is not None and last[0] is block:
        return last[1]
    made = Digest(block)
    if len(block) >= DIGEST_MIN:
        _last = (block, made)
    return made


_counted: Optional[tuple[bytes, int, int, int]] = None  # (block, begin, end, newlines): the last whole lines counted


def newlines(block: bytes, begin: int, end: int) -> int:
    """block.count(b"\n", begin, end), counted once for all the readers fed the same whole lines of the same block (each
    counts the lines it read; on a long log that count was a tenth of the time)."""
    global _counted
    last = _counted
    if last is not None and last[0] is block and last[1] == begin and last[2] == end:
        return last[3]
    n = block.count(b"\n", begin, end)
    if len(block) >= DIGEST_MIN:
        _counted = (block, begin, end, n)
    return n


def forget() -> None:
    """Let the last block go (the scanner, at the end of its input)."""
    global _last, _counted
    _last = _counted = None


def may_hold(block: bytes, words: Sequence[bytes]) -> Sequence[bytes]:
    """The words that may be in `block` (a cheap superset; all of them for a small block)."""
    return digest(block).may_hold(words) if len(block) >= DIGEST_MIN else words


def triggers_in(digests: Iterable[Digest]) -> list[bytes]:
    """The triggers that may be in the blocks the digests were made of."""
    found: set[bytes] = set()
    for d in digests:
        found.update(d.may_hold(TRIGGER_BYTES, lower=True))
    return [t for t in TRIGGER_BYTES if t in found]


def candidate_starts(low: bytes, end: int, triggers: Optional[Sequence[bytes]] = None) -> list[int]:
    """Start offsets of the lines in low[:end] (a lower-cased block) that contain a trigger. `triggers`: those
    that may be there (`triggers_in`, from the digests of the raw blocks), else found here."""
    if triggers is None:  # (the block is lower-cased already: its digest is)
        triggers = Digest(low if end == len(low) else low[:end]).may_hold(TRIGGER_BYTES)
    starts: set[int] = set()
    lines: Optional[list[bytes]] = None
    offsets: list[int] = []
    for trig in triggers:
        pos, seen = low.find(trig, 0, end), 0
        while pos != -1 and seen < MANY:
            seen += 1
            line_start = low.rfind(b"\n", 0, pos) + 1
            starts.add(line_start)
            nl = low.find(b"\n", pos, end)
            if nl == -1:
                break
            pos = low.find(trig, nl + 1, end)
        else:
            if pos != -1:  # a word on most lines (every line a warning): each line is asked once, in C's loops
                if lines is None:
                    lines = low[:end].split(b"\n")
                    offsets = list(map(operator.add, itertools.accumulate(map(len, lines), initial=0), itertools.count()))
                starts.update(itertools.compress(offsets, [trig in line for line in lines]))
    return sorted(starts)
