"""The one pass over a block of log before any per-pattern work: which lines may hold a failure.

Most lines of a training log are healthy and repeat with only their numbers changed
(loss prints, progress bars, NCCL INFO lines). So a block is first reduced to its
distinct lines with the digits taken out, and the trigger words are looked for in
that (usually a small fraction of the block). Only a trigger found there is then
searched in the whole block, to find the lines that hold it. Everything runs in C
(bytes.lower / translate / split / set / find); Python only sees the candidate lines.

Every line a pattern or the structural reader (`signs`) reads contains a trigger: a
test checks each pattern's examples against `has_trigger`.
"""

from __future__ import annotations

# Lower-case words; longer is cheaper and more precise.
TRIGGERS = (
    # what most failure lines say
    "error",
    "errno",
    "fail",
    "warn",
    "exception",
    "traceback",
    "timeout",
    "timed out",
    "kill",
    "signal",
    "sigsegv",
    "sigabrt",
    "sigbus",
    "sigterm",
    "abort",
    "exit",
    "fatal",
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
    "is not a valid",  # a program refusing a value (evidence.py's "invalid")
    "found from :",  # torch.compile's notice before the stack it found an op in (signs.NOTICE_STACK): its frames are no traceback
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
    "stopiteration",
    "undefined symbol",
    "your machine only has",
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
TRIGGER_BYTES = tuple(dict.fromkeys(t.encode() for t in TRIGGERS))
# what each trigger looks like once the digits are out of the text
TRIGGER_KEYS = tuple((t, t.translate(None, DIGITS)) for t in TRIGGER_BYTES)


def has_trigger(text: str) -> bool:
    low = text.lower()
    return any(t in low for t in TRIGGERS)


def candidate_starts(low: bytes, end: int) -> list[int]:
    """Start offsets of the lines in low[:end] (a lower-cased block) that contain a trigger."""
    view = low if end == len(low) else low[:end]
    distinct = b"\n".join(set(view.translate(None, DIGITS).split(b"\n")))
    starts: set[int] = set()
    for trig, key in TRIGGER_KEYS:
        if key not in distinct:
            continue
        pos = low.find(trig, 0, end)
        while pos != -1:
            line_start = low.rfind(b"\n", 0, pos) + 1
            starts.add(line_start)
            nl = low.find(b"\n", pos, end)
            if nl == -1:
                break
            pos = low.find(trig, nl + 1, end)
    return sorted(starts)
