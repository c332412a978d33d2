"""Signs that a job failed, read from the shape of the log, independent of any pattern.

A pattern knows one message; this module knows what any failure looks like: a Python
traceback ending in an exception (any class, chained or not), a fatal signal or a
non-zero exit in a launcher's, agent's or srun's line, `Fatal Python error`, a C++
`terminate called` / `what():`, CUDA / NCCL / gloo error lines, device-side
assertions, a store barrier that waits for ranks. The lines reach it already peeled
of rank prefixes, ANSI colours, Markdown/HTML wrapping and quoting (`lines.strip`).

`Signs` is fed the same candidate lines as the patterns and keeps only the first few
signs (bounded memory); `Diagnosis` turns them into an honest "unrecognised failure"
when no pattern explains the failure, and asks it whether an exception was raised
in the user's own code (the only case in which "fix your code" is the right answer).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Optional

from gpudoctor.knowledge.evidence import RULES as EVIDENCE_RULES
from gpudoctor.knowledge.evidence import error_level, evidence_in
from gpudoctor.knowledge.libraries import PROJECTS, is_library, package_of, project_of
from gpudoctor.knowledge.lines import ANSI, LogLine, segments
from gpudoctor.knowledge.mentions import speaks_of_error
from gpudoctor.knowledge.operand_types import without_operand_message
from gpudoctor.knowledge.pattern import any_of
from gpudoctor.knowledge.relays import SPAN as RELAY_SPAN
from gpudoctor.knowledge.relays import Relayed, relay_in
from gpudoctor.knowledge.remedy import Remedy, remedy_in
from gpudoctor.knowledge.serving import READY

KEEP = 16  # signs kept (the first ones); later ones are only counted
LATEST = 4  # of those only counted, the latest kept apart (`Signs.latest`)
MAX_TRACEBACKS = 200  # tracebacks read frame by frame; later ones are only counted
TRACEBACK_LINES = 400  # lines after a "Traceback" header searched for its frames and exception
SHOWN_KEPT = 16384  # rows of tracebacks' source displays remembered (past this, they are read as any line)
QUOTED_KEPT = 4096  # quoted source lines remembered (a long log repeats its tracebacks; past this, they are read as any line)

TRACEBACK = "Traceback (most recent call last)"
FRAME = re.compile(r'^File "(?P<path>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>\S+))?')
# A frame whose head the paste cut (a terminal's wrap, a copy from the middle of a line):
# 'ite-packages/accelerate/utils/operations.py", line 819, in forward'
# IPython's and Jupyter's frames: "File ~/x/trainer.py:2238, in Trainer.train(self, ...)" (IPython 8, also as a
# VS Code link "File [~/x.py:323](https://...)"), "Cell In[18], line 14", and the old "~/x/spawn.py in spawn(fn, ...)" /
# "<ipython-input-1-e15> in <module>" whose line is the "---> 30" arrow under it.
IPYTHON_FRAME = re.compile(r"^File \[?(?P<path>[^\s\[\]]+?\.py):(?P<line>\d+)\]?(?:\([^)]*\))?(?:, in (?P<func>[\w.<>]+))?")
CELL_FRAME = re.compile(r"^Cell In ?\[(?P<cell>\d+)\], \[?line (?P<line>\d+)")
OLD_IPYTHON_FRAME = re.compile(r"^(?P<path>\S+\.py|<ipython-input-[\w-]+>) in (?P<func>[\w<>.]+)\(?")
IPYTHON_ARROW = re.compile(r"^-+> \[?(?P<line>\d+)")
# pytest's report of an exception: its "E   KeyError: 'x'" lines, then where it was raised, "path/module.py:576: KeyError"
PYTEST_E = re.compile(r"^E\s+(?P<cls>(?:[A-Za-z_]\w*\.)*[A-Z]\w*): (?P<message>.*)$")
PYTEST_WHERE = re.compile(r"^(?P<path>\S+\.py):(?P<line>\d+): (?P<cls>(?:[A-Za-z_]\w*\.)*[A-Z]\w*)$")
# (a notebook's copy may lose the spaces between them: "RuntimeErrorTraceback (most recent call last)")
IPYTHON_HEADER = re.compile(r"^(?P<cls>(?:[A-Za-z_]\w*\.)*[A-Z]\w*)\s*Traceback \(most recent call last\)")
CUT_FRAME = re.compile(r'^(?P<path>[^\s"]*\.py)", line (?P<line>\d+), in (?P<func>[\w<>.]+)\s*$')
# The exception line that ends a traceback: "KeyError: 'x'", "StopIteration", "torch.OutOfMemoryError: ..."
# (diagI33) also the classes a module names in lower case, after the module and with a message: OpenCV's "cv2.error: ...",
# the standard library's "zlib.error", "struct.error", "socket.timeout", "socket.gaierror" (heldout32e 0d3ng/object-detection-vino:
# the cv2.error line was taken for a traceback cut before its exception)
LOWER_CLASS = r"(?:[a-z_]\w*\.)+(?:error|timeout|gaierror|herror)(?=: )"
EXCEPTION_LINE = re.compile(r"^(?P<cls>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:\((?:[A-Za-z_]\w*\.)*[A-Z]\w*\))?|" + LOWER_CLASS + r")(?::(?: (?P<message>.*))?)?$")
# An exception line without a message must name an exception: "StopIteration", "torch.OutOfMemoryError",
# "KeyboardInterrupt", "RayTaskError(OSError)"; not a source line a frame quotes ("CLI(setup)",
# "fire.Fire(do_cli)", "Path") nor a frame's first word cut by the paste ("File", "Fi").
BARE_EXCEPTION = re.compile(r"(?:Error|Exception|Interrupt|Exit|Iteration|Warning|Failure|Timeout|Fault|Abort|Killed)(?:\(\w+\))?$|^(?:[a-z_]\w*\.)+[A-Z]\w*$")
# rich's traceback: "╭──── Traceback (most recent call last) ────╮", "│ /path/train.py:773 in <module> │", "╰───╯"
BOX_TOP = "╭┌"
BOX_BOTTOM = "╰└"
BOX_SIDE = "│┃"
# better_exceptions and loguru mark under a frame's source line the value of each name it used: "│     └ 42"
VALUE_MARKS = "│└"
# (a Windows path may hold spaces: "│ C:\\SD Kohya\\kohya_ss\\train_network.py:873 in <module>")
RICH_FRAME = re.compile(r"^[│|]\s*(?P<path>(?:[A-Za-z]:\\[^:│]*?|\S+)\.py):(?P<line>\d+) in(?: (?P<func>\S+)|\s*$)")
# rich's mark of the line a frame was running ("│ ❱ 873 │   train(args)"): a frame's excerpt, where the
# path line above it holds no other word the prefilter knows (a Windows drive path)
RICH_RUNNING = "│ ❱"
CARETS = re.compile(r"^[\^~ ]+$")
CHAINED = ("The above exception was the direct cause", "During handling of the above exception")
# Exceptions that end a program without a failure.
NOT_FAILURES = re.compile(r"^(?:SystemExit(?:: 0)?|GeneratorExit)$")

# What points at the environment rather than the user's code: a failed import, a missing
# symbol (two builds of a library), a GPU feature or version the install lacks, a launcher setting.
ENVIRONMENT_CLASSES = {"ImportError", "ModuleNotFoundError", "OSError", "NotImplementedError", "MisconfigurationException"}
ENVIRONMENT_WORDS = re.compile(
    r"undefined symbol|cannot open shared object|\.so\b|DLL load failed|not supported|unsupported|is not available|"
    r"requires? (?:a |an )?(?:GPU|CUDA|torch|version|PyTorch|NCCL)|compute capability|\bsm_\d+|\bCUDA\b|\bcuda\b|\bGPU\b|"
    r"\bdriver\b|\bNCCL\b|\bgloo\b|\bbf16\b|bfloat16|\bfp16\b|\bhalf\b|unexpected keyword argument|"
    # the rest of a call refused for its arguments: raised at the caller's line whoever's the callee is, so the caller's frame
    # does not make it the user's bug (an installed package of another version gives it too: patterns/classes13a.py,
    # benhenryL/Deblurring-3D-Gaussian-Splatting#14's "__new__() missing 2 required positional arguments")
    r"required (?:positional|keyword-only) arguments?\b|positional arguments? but \d+ (?:were|was) given|multiple values for (?:keyword )?argument|"
    r"no attribute '(?:_?cuda|distributed|compile|float8|bfloat16)|module '[\w.]+' has no attribute|version|"
    r"MASTER_ADDR|MASTER_PORT|WORLD_SIZE|LOCAL_RANK|\bstrategy\b|\bdevices?=|accelerator",
    re.IGNORECASE,
)

# One combined search per candidate line for every other sign; the group that matched names it.
OTHER_SIGNS = re.compile(
    "|".join(
        [
            r"Fatal Python error: (?P<fatal>.+)",
            r"terminate called (?:after throwing an instance of '(?P<terminate>[^']+)'|(?P<terminate_bare>recursively|without an active exception))",
            r"^what\(\):\s+(?P<what>.+)",
            r"Signal (?P<signum>\d+) \((?P<signame>SIG[A-Z]+)\) received by PID",
            r"Caught signal (?P<caughtnum>\d+) \((?P<caught>[^):]+)",
            r"^Exception raised from (?P<c10>\w+) at ",
            r"^(?P<ipython>(?:[A-Za-z_]\w*\.)*[A-Z]\w*)\s*Traceback \(most recent call last\)",
            r"(?P<barrierdone>Completed store-based barrier)",
            r"^(?P<bare>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception))$",
            r"-- Process (?P<spawned>\d+) terminated with the following error",
            r"\*\*\* (?P<glogsig>SIG[A-Z]+) (?:\(@|received)",
            # the shell's report of a killed child: "Segmentation fault (core dumped)", "line 3: 123 Killed  python train.py",
            # or glued to the progress bar the child was drawing ("0%|Killed", "[00:03<?, ?it/s]Killed"), a paste's
            # quote or emphasis marks after it
            r"(?:^|: |\d\s+|(?<=[|\]]))(?P<shellsig>Segmentation fault|Bus error|Aborted|Illegal instruction|Floating point exception|Killed)(?: ?\(core dumped\))?(?:[\s\"'_*`]*$|\s+(?=\S*python|torchrun|\S+\.py\b))",
            r"srun: error: (?P<srun_node>[\w.\-]+): tasks? (?P<srun_task>[\d,\-]+): (?P<srun_what>.+)",
            r"exitcode\s*:\s*(?P<exitcode>-?[1-9]\d*)",
            r"(?i:exit(?:ed)? with (?:exit |status )?code|exit(?:ed)? with status|(?<!errored out with )exit status|return(?:ed)? (?:non-zero exit status|code)|exit code)\s*[:=]?\s*(?P<exit>-?[1-9]\d*)",
            r"(?P<childfailed>[Cc]hildFailedError)",
            r"Assertion (?P<assertion>`[^`]*`|.{1,200}?) failed",
            # (and a kernel's assertion line cut before its "failed": "IndexKernel.cu:92: ... thread: [64,0,0] Assertion `-sizes[i] <= in")
            r"(?P<devassert>device-side assert(?:ion)? triggered|block: \[\d+,\d+,\d+\], thread: \[\d+,\d+,\d+\] Assertion(?!.*\bfailed\b))",
            # (and C programs' own capitalised wording: darknet's "CUDA Error: out of memory", AlexeyAB/darknet#5301)
            r"CUDA [Ee]rror: (?P<cuda>.+)",
            # a CUDA library's, the driver API's or NVML's status, never its success
            r"(?P<cudastatus>(?:CUBLAS|CUDNN|CUSOLVER|CUSPARSE|CUFFT|CURAND)_STATUS_(?!SUCCESS\b)[A-Z_]+|cudaError(?!_?Success\b)\w+|CUDA_ERROR_[A-Z_]+|NVML_ERROR_(?!SUCCESS\b)[A-Z_]+)",
            r"(?P<ncclerror>NCCL error\b.*|nccl\w+Error\b.*|ncclInternalError.*)",
            r"(?P<barrier>Waiting in store based barrier|store based barrier|\bchecked in\b)",
        ]
    )
)
# Literal words one of which every sign's line holds: the combined search runs only on those lines.
SIGN_WORDS = (
    "Fatal Python", "terminate called", "what():", "Signal ", "signal ", "SIG", "Segmentation fault", "Bus error", "Aborted",
    "Illegal instruction", "Floating point", "Killed", "srun: error", "exitcode", "exit", "Exit", "EXIT", "return", "ChildFailedError",
    "Assertion", "device-side assert", "CUDA error", "_STATUS_", "cudaError", "CUDA_ERROR_", "NVML_ERROR_", "NCCL WARN", "NCCL error", "ncclInternalError",
    "Error", "Exception", "gloo", "Gloo", "ERROR", "FATAL", "CRITICAL", "barrier", "checked in", "Exception raised from", "-- Process ",
)
SIGN_GATE = any_of(SIGN_WORDS)
# Lines that name NCCL or gloo and, anywhere after, a failure: matched from the line's start only
# (one pass, however often the words repeat), and only when no sign above matched.
LATE_SIGNS = re.compile(
    r"^(?=.*?(?:[Ee]rror|[Ff]ail|[Tt]imeout|[Aa]bort|[Uu]nhandled|closed|refused|No route|[Rr]emote))(?=.*?NCCL WARN (?P<ncclwarn>.*))"
    r"|^(?=.*?(?:[Ee]rror|failed|[Tt]imed out))(?=.*?\b(?P<gloo>[Gg]loo\b.*))"
)
# Signs whose message may go on over the next lines with advice (CUDA's "For debugging consider passing ...").
ADVISING = {"fatal", "terminate", "what", "c10", "assertion", "devassert", "cuda", "cudastatus", "ncclwarn", "ncclerror", "gloo", "bare"}
MESSAGE_LINES = 4  # lines after a message's first read for its advice
# A line after an exception's that is code or a Markdown fence, not more of its message: a paste that goes on with the
# source the reporter typed (">>> import torch", "f = open(config)", a closing ``` ): then none of those lines is the
# message's (heldout4 internlm-17, heldout11 fast-vqa-9, heldout9 yolov3-384)
PASTED_CODE = re.compile(r"\s*(?:`|>>>|\.\.\. |import \w|from [\w.]+ import |[A-Za-z_][\w.\[\]'\"]*\s*=\s*\S)")
# A line that starts a new log record rather than going on with a message: glog, a timestamp, a
# level, torchrun's banner, an NCCL line (after any rank prefix).
NEW_RECORD = re.compile(
    r"^\s*(?:\[rank\d+\]:|\[default\d+\]:|\d{1,5}: )?\s*(?:\[?[IWEF]\d{4} |\[?\d{4}-\d\d-\d\d|\*{5}|(?:ERROR|WARNING|INFO|DEBUG|CRITICAL)\b|"
    r"[\w.\-]+:\d+:\d+ \[\d+\] NCCL|Traceback|[\w.]*(?:Error|Exception|Warning): )"
)
GLUED_HEADER = TRACEBACK + ":"
TOLD = "<told>"  # a wrapper whose worker's exception follows it: told through that one
ORIGINAL = "Original Traceback (most recent call last)"  # a DataLoader worker's or a DataParallel replica's, re-raised
# torch re-raising a worker's exception: "Caught RuntimeError in DataLoader worker process 2." / "... in replica 0 on device 0."
CAUGHT = re.compile(r"^Caught \w+ in (?:DataLoader worker process \d+|replica \d+ on device \d+)")
# mp.spawn's join re-raising a process's traceback (torch >= 1.9, and before)
SPAWN_REPORTS = ("ProcessRaisedException", "Exception")
# the functions a parent relays a child's failure from, raising a bare Exception (OpenNMT-py/OpenNMT-py#887)
RELAY_HANDLERS = ("signal_handler", "error_handler")
# Ray's wrapper of a worker's exception ("ray.exceptions.RayTaskError(RuntimeError)"): the worker's own follows
# OpenNMT-py's and fairseq's ErrorHandler (and their forks'): the parent's signal handler raises Exception(msg), msg the
# marker and then the child's traceback, so the tracebacks above the marker are the parent's, waiting (OpenNMT/OpenNMT-py#887:
# https://github.com/OpenNMT/OpenNMT-py/issues/887)
RELAY_MARKER = "Tracebacks above this line can probably"
RAY_WRAPPER = re.compile(r"^(?:ray\.exceptions\.)?Ray\w*Error\((?P<inner>\w+)\)$")
# torch's C++ backtrace line: "frame #3: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x14d (0x78ee7c02261d in /x/libtorch_cuda.so)"
CPP_FRAME = re.compile(r"^frame #\d+: (?:.+ \+ 0x[0-9a-f]+ \(0x[0-9a-f]+ in |<unknown function> \+ 0x)")
CPP_FRAMES_SPAN = 80  # lines one C++ backtrace takes at most
# torch's NCCL watchdog in a C++ backtrace's frames: the thread that re-raises a collective's error, and the check in it that
# raised. Where a paste cut the message above `frame #0`, the frames still say whose exception it was: the error check
# (WorkNCCL::checkAndSetException, checkForNCCLErrorsInternal) raises an NCCL error a communicator reported (a peer that
# exited, a network error: "remote process exited or there was a network error", ncclSystemError), the timeout check
# (WorkNCCL::checkTimeout, the timeout pattern's to read) the collective timeout (issue 35, diagH32)
WATCHDOG_FRAME = re.compile(r"c10d::ProcessGroupNCCL::(?:WorkNCCL::)?(?P<check>checkForNCCLErrorsInternal|checkAndSetException|watchdogHandler|ncclCommWatchdog|workCleanupLoop)\(")
WATCHDOG_ERROR_CHECK = ("checkForNCCLErrorsInternal", "checkAndSetException")
WATCHDOG_FRAMES = ("a C++ backtrace of torch's NCCL watchdog thread (ncclCommWatchdog: it re-raises the error a collective met; that "
                   "error's message, above `frame #0`, is not in the log)")
WATCHDOG_ERROR_FRAMES = ("an NCCL error the NCCL watchdog's error check found (its C++ backtrace: WorkNCCL::checkAndSetException, "
                         "not the timeout check; the error's message, above `frame #0`, is not in the log)")
# Native backtraces in the other shapes they reach these logs, a process's stack printed as it died (no
# message of its own left in a paste that starts inside it): glibc's backtrace_symbols as Open MPI's
# and libc's fatal-signal handlers print it ("[host:3070] [ 7] /x/libcaffe2_gpu.so(_ZN2at...+0xbab)[0x7f4849b4c0fb]",
# "/lib/x86_64-linux-gnu/libc.so.6(+0x42520)[0x7f3c]"), and c10's on Windows ("00007FF873D2BD9300007FF873D2BD44
# python310.dll!PyObject_Call [<unknown file> @ <unknown line number>]"). ldd's "libc.so.6 => /lib/libc.so.6
# (0x00007f...)" and a loader's "Loaded 'C:\\Windows\\System32\\kernel32.dll'" are no stack.
NATIVE_FRAME = re.compile(
    r"(?:^|[\s:\]])(?:/|[\w.\-]+/)?[\w./\-]*\.so(?:\.[\d.]+)?\((?:[\w.$@]*\+0x[0-9a-fA-F]+)?\)\[0x[0-9a-fA-F]+\]"
    r"|^[0-9A-F]{16}(?:[0-9A-F]{16})? [\w.\-]+\.(?:dll|DLL|pyd|PYD|exe|EXE)!\S+ \[.* @ .*\]$"
)
NATIVE_WORDS = (")[0x", ".dll!", ".DLL!", ".pyd!", ".exe!", ".EXE!")
# Signs a native stack printed under belongs to: told once, by the report it is part of.
NATIVE_REPORT = ("terminate", "terminate_bare", "what", "c10", "c10watchdog", "cppframes", "nativeframes", "signame", "caught",
                 "glogsig", "shellsig", "shellkill", "glibc", "fatal")
# An exception glued to the source line before it: "... process.args, subprocess.CalledProcessError: Command '...' returned ..."
GLUED = re.compile(r"[\s,(](?P<cls>(?:[a-z_]\w*\.)+[A-Z]\w*(?:Error|Exception)): (?P<message>.+)$")
# Who owns the code that prints a sign with no frames.
KIND_PROJECT = {"ncclwarn": "NVIDIA/nccl", "ncclerror": "NVIDIA/nccl", "c10": "pytorch/pytorch", "c10watchdog": "pytorch/pytorch", "what": "pytorch/pytorch", "terminate": "pytorch/pytorch",
                "cuda": "pytorch/pytorch", "cudastatus": "pytorch/pytorch", "devassert": "pytorch/pytorch", "gloo": "pytorch/pytorch"}
KIND = {
    "fatal": "fatal Python error",
    "terminate": "C++ exception (terminate called)",
    "terminate_bare": "C++ terminate called",
    "what": "C++ exception (what())",
    "signame": "fatal signal",
    "caught": "fatal signal",
    "c10": "C++ exception (c10::Error)",
    "bare": "exception",
    "ipython": "exception",
    "barrierdone": "store barrier completed",
    "spawned": "mp.spawn process failed",
    "stopped": "stopped by a signal (usually the launcher stopping the ranks after a failure)",
    "glogsig": "fatal signal",
    "shellsig": "fatal signal",
    "srun_what": "srun task failed",
    "exitcode": "non-zero exit",
    "exit": "non-zero exit",
    "childfailed": "torchrun ChildFailedError",
    "assertion": "assertion failed",
    "devassert": "device-side assertion",
    "cuda": "CUDA error",
    "cudastatus": "CUDA library error",
    "ncclwarn": "NCCL warning",
    "ncclerror": "NCCL error",
    "gloo": "gloo error",
    "barrier": "store barrier still waiting for ranks",
    "cppframes": "a C++ exception's backtrace (frame #N lines; its message is not in the log)",
    "nativeframes": "a native stack trace of a process that crashed (its first lines, which name the signal or the exception, are not in the log)",
    "richcut": "an exception (a rich traceback box cut before its frames' paths and its exception line)",
    "tbheader": "an exception (the traceback is cut after its first line)",
    "c10watchdog": "the NCCL watchdog thread re-raised a collective's error (C++ exception raised from ncclCommWatchdog)",
    "introduced": "the message a sentence of the reporter's says the run printed (the line after it)",
    **{rule.kind: rule.what for rule in EVIDENCE_RULES},
}
# How much a sign says about the failure itself (the headline is the strongest sign, first seen first).
STRENGTH = {
    "exception": 5, "bare": 5, "c10": 4, "caught": 3, "fatal": 5, "terminate": 5, "terminate_bare": 4, "what": 4, "assertion": 5, "devassert": 5,
    "cuda": 4, "cudastatus": 4, "ncclerror": 4, "ncclwarn": 3, "gloo": 3, "signame": 3, "glogsig": 3, "shellsig": 3,
    "barrier": 3, "srun_what": 2, "stopped": 1, "childfailed": 1, "exitcode": 2, "exit": 1, "cppframes": 2, "c10watchdog": 2, "tbheader": 2,
    "nativeframes": 2, "richcut": 2, "introduced": 2,
    **{rule.kind: rule.strength for rule in EVIDENCE_RULES},
}
CUT_EXCEPTION_STRENGTH = 3  # a traceback cut before its exception line: below a CUDA error's or a C++ exception's line
RANKS_WORD = re.compile(r"\b(?:ranks?|workers?|processes|nodes)\b", re.IGNORECASE)
STOP_SIGNALS = {"SIGTERM", "SIGINT", "SIGHUP"}
CPP_REPORT = ("terminate", "terminate_bare", "what", "c10", "c10watchdog")
CPP_REPORT_LINES = 6
STORE_IO = {"recvBytes", "sendBytes", "recvValue", "doWait", "doGet", "get"}
STRONG = 3  # a sign at least this strong is a failure of its own, not only an exit status
# A warning that a component caught an exception and went on another way ("[WARNING] - Fallback to PyTorch
# due to exception <class '...ORTModuleONNXModelException'> was triggered. ... See details below:"): the
# exception and traceback it prints next were handled. Only at warning level: at error level, or a traceback
# further on, the run may still have failed.
FALLBACK = re.compile(
    r"(?:\bWARN(?:ING)?\b|^W\d{4} ).{0,120}?\b(?:[Ff]allback|[Ff]all(?:ing)? back) to \S+ (?:due to|because of|after) (?:an? )?(?:exception|error)\b"
)
# A host program's own line that it could not load one of its plug-ins and goes on without it: ComfyUI's "Cannot import
# /home/u/ComfyUI/custom_nodes/ComfyUI-WD14-Tagger module for custom nodes: [Errno 2] No such file or directory: ..." (printed
# right after the exception's traceback; a log viewer that shows a record's lines in reverse puts it before the exception's
# line, heldout24b Comfy-Org/ComfyUI#9923's RunPod log), the Stable Diffusion web UI's "*** Error loading script: tagger.py"
# and "*** Error running install.py for extension ..." (before the traceback it indents under it). The exception is the
# plug-in's, caught by its host, which starts all the same ("(IMPORT FAILED)" in its import times, the server up): no
# failure of the run. Not a plug-in's own error at run time ("!!! Exception during processing !!!", a node that failed
# while the workflow ran), nor a program's import of its own modules.
# (the web UI's stars as the line reaches the reader: a paste's markdown may have eaten two of them)
PLUGIN_SKIPPED = re.compile(r"\bCannot import \S.{0,300}? module for custom nodes: |^\*{1,3} ?Error (?:loading script: |running install\.py for extension )")
PLUGIN_WORDS = ("module for custom nodes", "Error loading script: ", "Error running install.py")
PLUGIN_INDENTED = 80  # lines of a traceback indented under the host's line, at most
PLUGIN_LINES = 3  # how far after the host's line the exception's own line stands, at most, where a viewer reversed them
# torch.compile's notice of where it found what it could not compile or capture ("skipping cudagraphs due to
# cpu device (cat). Found from :"), then that stack: a notice's frames, not a traceback (nothing was raised).
NOTICE_STACK = re.compile(r"\bFound from ?:$")
HANDLED_LINES = 4  # how far after the warning its exception or traceback starts (a blank line, the message, a blank line)
# The program's own progress after an exception (mozilla-ai/federated-finetuning#4:
# https://github.com/mozilla-ai/federated-finetuning/issues/4, flwr logged a KeyError 'ray' and the simulation ran on):
# a counter of epochs, steps, rounds or batches, a progress bar, a fallback, a run's good end. Two such lines of the same
# process after the exception line, and no failure after it from any process, say the exception was handled.
WENT_ON = re.compile(
    r"\b(?:epoch|step|iter(?:ation)?|round|batch|episode)\b\W{0,3}\d+|\d+%\|"
    r"|\b(?:training (?:is |was )?(?:complete|completed|finished|done)|finished training|successfully|fall(?:ing)? back|fallback)\b",
    re.IGNORECASE,
)
WENT_ON_LINES = 2
# A tool's own lower-case "error: " line (knowledge/evidence.py `toolerror`) is where Go's and Rust's tools stop: a usage hint or
# nothing follows. Where this many lines of the same paste block follow it with no error among them, the program went on
# (ChetanXpro/nodejs-whisper#203: whisper.cpp's "error: input file not found 'true'" for one argument, then the model loaded
# on the GPU, line after line; the reporter's problem was speed): the line is not the run's failure.
TOOL_WENT_ON_LINES = 8
# A logger's error level just before a traceback's header on its line ("ERROR :     Traceback ...", flwr's format)
LOGGED_AT = re.compile(r"(?<![\w-])(?:ERROR|CRITICAL|FATAL)\s*[:\]|-]?\s*$")
# A logger's error record right before a traceback that holds the exception's message ("[2025-07-16 15:24:47] ERROR main:
# Error analyzing USDJPY: could not convert string to float: 'markup'", then the traceback ending in that ValueError:
# Python's logger.exception(f"...: {e}") inside an `except` block, Bigthugboy/forex_ai_project's logs/main.log, heldout25w):
# the program caught it. It went on where the same logger's records follow the exception line, at no error level
# (LOGGED_WENT_ON of them: the next item processed); a record of the message only, then the log's end or a failure, stays
# the run's end. The message must stand in the record: a wrapper's empty "[ERROR] - " record before its traceback logs and
# re-raises (lightning-hydra-template's task wrapper, "Closing loggers..." next).
# A message's words that introduce what follows them as the message's text, right before a traceback's header
FORMATTED_AT = re.compile(r"(?<![\w.])(?:msg|message)\s*[:=]\s*$", re.IGNORECASE)
# Python's own suggestion after a NameError's, AttributeError's or ImportError's message ("... has no attribute 'setTitle'.
# Did you mean: 'set_title'?", 3.10 on): the traceback's printer adds it, str(e) holds none, so a record of the message
# lacks it (heldout27w sanayume/rainfalldata: "ERROR - ...: 'Axes' object has no attribute 'setTitle'" before the traceback)
SUGGESTION = re.compile(r"\. Did you mean:? .{1,120}\?$")
LOGGED_MESSAGE = 12  # characters of the exception's message the record must hold
LOGGED_WENT_ON = 2
# a stamped record's error level, in any logger's format ("[2025-07-16 15:24:47] ERROR main: ...", "... - ERROR - ...")
RECORD_ERROR = re.compile(r"(?<![\w-])(?:ERROR|CRITICAL|FATAL)(?![\w-])")
RECORD_LEVEL = re.compile(r"(?<![\w-])(?:ERROR|CRITICAL|FATAL|WARNING|WARN|INFO|DEBUG)(?![\w-])")
NO_DIGITS = str.maketrans("", "", "0123456789")
INFO_AT = re.compile(r"(?:INFO|DEBUG):")  # a logger's record at INFO or DEBUG level ("INFO:     Started server process [4127]")
LOGGED_AROUND = 3  # lines of a message over several lines, between the record and the header, or after the exception line
# The record Python's logging prints after the call stack of one it could not format or write (logging.Handler.handleError):
# "Message: " and the record's message as repr() writes it, then "Arguments: " and its arguments. Its own error: LOGGING_ERROR.
LOGGING_REPORT = "Message: "
LOGGING_CALL_STACK = "Call stack:"  # what it prints between its own error's traceback and that call stack
LOGGING_ARGUMENTS = "Arguments: "
LOGGED_RECORD = re.compile(r"^Message: (?:'.*'|\".*\"|[\w.]+\(.*\)|None)$")
LOGGING_ERROR = "an error of Python's logging (a record it could not format or write: it printed it and went on)"
HANDLED = "<handled>"  # the claim on a sign of an exception a fallback warning caught
DDP_CONSTRUCTOR = {"__init__", "_sync_module_states", "_sync_params_and_buffers", "_verify_param_shape_across_processes", "_ddp_init_helper"}
TIME = re.compile(r"(\d{4}-\d\d-\d\d[ T_]\d\d:\d\d:\d\d)|\b[IWEF](\d{4} \d\d:\d\d:\d\d)|^\[?(\d\d:\d\d:\d\d)")
SIGNALS = {"1": "SIGHUP", "2": "SIGINT", "4": "SIGILL", "6": "SIGABRT", "7": "SIGBUS", "8": "SIGFPE", "9": "SIGKILL", "11": "SIGSEGV", "15": "SIGTERM"}


# A package's console script, which pip writes into an environment's bin/ (`sys.exit(main())`, setuptools'
# `sys.exit(load_entry_point(...)())`, DeepSpeed's `ds` with its `from deepspeed.launcher.runner import main`): an
# extensionless file in a bin/ folder that runs an entry point is a package's frame wherever the environment lives (a folder
# of any name: .../oumi-dev-env/bin/oumi, ~/pytorch/bin/ds, .../cryodrgn/1.1.2/cryodrgn/bin/cryodrgn), not the user's script.
CONSOLE_SCRIPT_FILE = re.compile(r"[/\\]bin[/\\][A-Za-z][\w\-]*$")
ENTRY_POINT_CODE = re.compile(r"^sys\.exit\(.*\(\)\)$|\bload_entry_point\(|^from [\w.]+ import main$")
# A person's own ~/bin is theirs (controls/test_controls_diagB10.py): a script there is the user's, whatever it runs.
HOME_BIN = re.compile(r"^(?:~|/home/[^/\\]+|/Users/[^/\\]+|/root|[A-Za-z]:\\Users\\[^\\]+)[/\\]bin[/\\][^/\\]+$")


@dataclass
class Frame:
    path: str
    line: int
    func: str = ""
    cut: bool = False  # the paste cut the head of its path: whose code it is may not show
    code: str = ""  # the source line the traceback quotes under it (what the frame was running), when the log has it
    at: int = 0  # the log's line that holds the frame (1-based; 0 when not known)
    code_cut: bool = False  # the log ends inside that source line

    def user(self) -> bool:
        return not self.cut and not is_library(self.path) and not self.console_script()

    def console_script(self) -> bool:
        """A package's console script running its entry point (not the user's code; `package_of` knows the ones in a
        named environment folder by their path alone)."""
        return (CONSOLE_SCRIPT_FILE.search(self.path) is not None and ENTRY_POINT_CODE.search(self.code.strip()) is not None
                and HOME_BIN.match(self.path) is None)

    def in_ddp_constructor(self) -> bool:
        return self.path.replace("\\", "/").endswith("parallel/distributed.py") and self.func in DDP_CONSTRUCTOR

    def short(self) -> str:
        parts = self.path.replace("\\", "/").split("/")
        return "/".join(parts[-2:]) + f":{self.line}"


@dataclass
class Sign:
    """One piece of evidence that something failed."""

    kind: str  # "exception" or a key of KIND
    what: str  # the exception class, the signal, the exit code, the C++ type ...
    message: str
    line: int
    source: str
    where: LogLine
    time: str = ""
    frames: list[Frame] = field(default_factory=list)
    cause: str = ""  # a chained exception: the one it was raised from / while handling
    text: str = ""  # the log line itself
    claimed: str = ""  # the pattern that explains this line, if one does
    block: Optional["Sign"] = None  # the first sign of the C++ report this one is part of
    cut: bool = False  # a traceback whose exception line is not in the log
    remedy: Optional[Remedy] = None  # what the message itself says to do, and its line
    relay: Optional[Relayed] = None  # a cut traceback another process's relay printed: that relay (knowledge/relays.py)
    relaying: Optional[Relayed] = None  # an exception whose line is a relay: what it names of the original it prints under it
    goes_on: list[tuple[int, str]] = field(default_factory=list)  # an exception's message past its first line (`continued`)

    def raised_by(self) -> str:
        """'your code', or the package whose frame raised ('deepspeed', 'python'); '' when no frame shows."""
        last = self.raised_in()
        if last is None:
            return ""
        return "your code" if last.user() else package_of(last.path) or ("" if last.cut else "a library")

    def project(self) -> str:
        """The GitHub project whose code raised this ('pytorch/pytorch'), or '' when it is the
        user's code or not known: the innermost frame of a known library, else the exception's module."""
        for f in reversed(self.frames):
            if not f.user():
                found = project_of(f.path)
                if found:
                    return found
            elif f is self.frames[-1]:
                return ""  # raised in the user's own code
        if self.kind == "exception" and "." in self.what:
            return PROJECTS.get(self.what.split(".", 1)[0], "")
        return KIND_PROJECT.get(self.kind, "")

    @property
    def strength(self) -> int:
        if self.cut and self.kind == "exception":
            # frames whose exception line the paste cut say where, not what: a line that says what failed
            # outranks them (ComfyUI prints "CUDA error: operation not supported" above the frames, Comfy-Org/ComfyUI#4578)
            return CUT_EXCEPTION_STRENGTH
        return STRENGTH.get(self.kind, 1)

    def raised_in(self) -> Optional[Frame]:
        return self.frames[-1] if self.frames else None

    def user_frame(self) -> Optional[Frame]:
        return next((f for f in reversed(self.frames) if f.user()), None)

    def users_code_failed(self) -> bool:
        """The exception was raised in the user's own code and nothing points at the environment:
        the one case in which "fix the line in your code" is the right answer."""
        last = self.raised_in()
        if self.kind != "exception" or self.cut or last is None or not last.user():
            return False
        # (not the words of Python's own type error: "'>' not supported between instances of 'int' and 'Flag'" is the code's value)
        return self.what.rsplit(".", 1)[-1] not in ENVIRONMENT_CLASSES and ENVIRONMENT_WORDS.search(without_operand_message(self.message)) is None

    def describe(self) -> str:
        """'StopIteration on rank 3 at train.py:118'."""
        if self.relaying is not None and self.cause == "<next>":
            # a relay whose original the log does not hold: what the relay names of it, not where it was handed over
            return f"{self.relaying.what()} (relayed; the original's traceback is not in this log)"
        out = self.what
        # (a relayed original's what names the relay's class already: "RuntimeError in DataLoader worker process 0 (...)")
        if self.cause and self.cause != self.what and not self.cause.startswith("<") and not (self.relay and self.what.startswith(self.cause + " ")):
            out += f" (from {self.cause})"
        origin = self.where.where()
        if origin:
            out += f" on {origin}"
        frame = self.user_frame() or self.raised_in()
        if frame is not None:
            out += f" at {frame.short()}"
        return out


# How much of a physical line before a message is read again with it: a logger's, a
# timestamp's or a rank's prefix ("2024-05-01 10:00:00,123 - root - ERROR - ", "ERROR:torch...:").
PREFIX_WIDTH = 200


def as_written(raw: str, text: str) -> str:
    """The message `text` as written: with the prefix it was read without, and nothing else
    of its physical line. A tqdm line rewritten by bare carriage returns, or a paste that
    lost its line breaks, holds many messages; reading the whole line again for each of
    them gave every message the evidence of another and cost time quadratic in the line's
    length (a 28 KB Slurm output of 1,033 bar updates took 128 s, 86 KB of glued records
    300 s)."""
    whole = ANSI.sub("", raw) if "\x1b" in raw else raw
    if "\r" in whole.strip():
        whole = next((piece for piece in whole.split("\r") if text in piece), text)
    whole = whole.strip()
    if len(whole) > len(text) + PREFIX_WIDTH:
        at = whole.find(text)
        whole = whole[max(0, at - PREFIX_WIDTH): at + len(text)] if at >= 0 else text
    return whole


def watchdog_frames(sign: Sign, check: str) -> None:
    """A C++ backtrace without its message (`cppframes`) whose frames name torch's NCCL watchdog: told as the watchdog's, and as
    its error check's where they name it (WATCHDOG_FRAME)."""
    if sign.kind != "cppframes":
        return  # a report with its own message (terminate called, what(): ...): the message says what
    if check in WATCHDOG_ERROR_CHECK:
        sign.what = WATCHDOG_ERROR_FRAMES
    elif sign.what == KIND["cppframes"]:
        sign.what = WATCHDOG_FRAMES


class Signs:
    """Feed it the stripped candidate lines (`see`); it keeps the first signs of failure."""

    def __init__(self) -> None:
        self.signs: list[Sign] = []
        self.latest: list[Sign] = []  # the latest signs past the KEEP kept ones (none while there is room)
        self.count = 0
        self.events = 0  # anything that changed what this reader knows (a sign, a traceback, an exit note)
        self.tracebacks = 0
        self.first_traceback: Optional[int] = None  # the line of the first traceback header
        self.covered: dict[tuple[str, Optional[int]], int] = {}  # (source, rank) -> last line of the traceback read last
        # (source, line) of the source lines tracebacks quote under their frames: code, never a message the patterns read
        # (`x = f()  # RuntimeError: CUDA out of memory here` is what the program ran, not what it printed)
        self.quoted: set[tuple[str, int]] = set()
        # (source, line) of the rows of a traceback's source display (rich's box: `│   125 │   exc_map = {..., OSError:
        # ReadError}  │`; IPython's numbered lines; loguru's value marks `└ 42`), once the exception line it ends in is read:
        # that line is the failure, the rows are code and values (heldout21w MRBXCD/project_2026_1: httpcore's source was
        # read as an OSError). A display cut before its exception keeps its rows readable: the running frame's code is all
        # the log has of the failure then (dev5 text-generation-inference#3005's assert message).
        self.shown: set[tuple[str, int]] = set()
        self.warned_frames_at: dict[Optional[int], int] = {}  # rank -> line of a warning's C++ backtrace
        self.explained_at: dict[Optional[int], int] = {}  # rank -> the last line a pattern explained
        self.ignored_at: dict[Optional[int], int] = {}  # rank -> line of its last "Exception ignored in"
        self.ignored_span: dict[Optional[int], tuple[int, int]] = {}  # rank -> (first, last) line of the traceback Python ignored
        self.spawned: Optional[int] = None  # mp.spawn's "-- Process N terminated": the rank of the traceback that follows
        self.pytest_said: dict[Optional[int], LogLine] = {}  # rank -> pytest's last "E   Class: message" line
        self.fallback_at: dict[Optional[int], int] = {}  # rank -> line of its last fallback warning (FALLBACK)
        # (rank, first, last) line of an exception the program caught, with the line that shows it (number, text) and how:
        # a plug-in's its host skipped ("plug-in", PLUGIN_SKIPPED), or one a logger wrote at a low level ("logged-low")
        self.caught_spans: list[tuple[Optional[int], int, int, int, str, str]] = []
        self.went_on_span: dict[Optional[int], tuple[int, int]] = {}  # rank -> (first, last) line of a traceback it went on from
        # (line, text, class) of those tracebacks' exception lines (handled_after), for the undecided answer to name
        self.went_on: list[tuple[int, str, str]] = []
        self.relays: dict[tuple[str, Optional[int]], Relayed] = {}  # (source, rank) -> the last relay's line read
        self.before: list[str] = []  # the lines right before a traceback's header being read (a logger's record of it: LOGGED_MESSAGE)

    def claim(self, msg: LogLine, line: int, pattern_id: str) -> None:
        """A pattern explains this line: it is no sign of an unknown failure (nor is the
        traceback whose exception line it is, nor the C++ backtrace printed under it)."""
        self.explained_at[msg.rank] = line
        for s in reversed([*self.signs, *self.latest]):
            # an exception line without a rank prefix claims its traceback whatever rank that was given (mp.spawn's process)
            if (s.line == line and s.kind != "exception") or (s.kind == "exception" and s.text == msg.text and msg.rank in (s.where.rank, None)):
                s.claimed = s.claimed or pattern_id
                head = s.block or s
                for t in self.signs:  # the rest of its C++ report: terminate called / what() / c10 stack
                    if t is head or t.block is head:
                        t.claimed = t.claimed or pattern_id

    def see(self, msg: LogLine, raw: str, line: int, source: str, following: Optional[Callable[[int], list[str]]],
            preceding: Optional[Callable[[int], list[str]]] = None) -> None:
        text = msg.text
        self.before = preceding(LOGGED_AROUND) if preceding is not None and "Traceback" in text else []
        self.note_relay(text, msg.rank, line, source)
        if text.startswith("Exception ignored in"):
            self.ignored_at[msg.rank] = line
            self.events += 1
            return
        if "back to" in text and FALLBACK.search(text):
            self.fallback_at[msg.rank] = line
            self.events += 1
            return
        if any(w in text for w in PLUGIN_WORDS) and PLUGIN_SKIPPED.search(text):
            under = following(PLUGIN_INDENTED) if following is not None else []
            indented = next((i for i, nxt in enumerate(under) if nxt.strip() and not nxt[:1].isspace()), len(under))
            # (the exception's line under it: a viewer's reversal, or the end of the traceback the web UI indents under it)
            self.caught_spans.append((msg.rank, line, line + max(PLUGIN_LINES, indented), line, text, "plug-in"))
            self.events += 1
            return
        if text[-1:] == ":" and following is not None and NOTICE_STACK.search(text):
            self.covered[(source, msg.rank)] = line + notice_stack_lines(following(TRACEBACK_LINES))
            self.events += 1
            return
        box = text.find("╭", 1)
        if box > 0 and TRACEBACK in text[box:]:
            text = text[box:]  # rich's boxed header glued to the end of a progress bar ("...?it/s]╭──── Traceback (most recent call last) ────╮")
            msg = LogLine(text, msg.rank, msg.local_rank, msg.node)
        elif glued_header(text) and not text.startswith((TRACEBACK, ORIGINAL)):
            text = TRACEBACK + ":"  # a header glued to the end of a progress bar or a cut line ("...17.62s/it]Traceback (most recent call last):")
            msg = LogLine(text, msg.rank, msg.local_rank, msg.node)
        if (text.startswith(TRACEBACK) or text.startswith(ORIGINAL) or text[:1] in BOX_TOP and TRACEBACK in text  # plain, a worker's, or rich's boxed
                or "Traceback (most" in text and IPYTHON_HEADER.match(text)):  # or IPython's, after the exception's class
            self.tracebacks += 1
            if self.first_traceback is None:
                self.first_traceback = line
            self.events += 1
            if self.ignored_at.get(msg.rank, -10) >= line - 2:
                # Python reporting an exception it ignored (in a __del__, at exit): read whole, so that neither its frames
                # nor its exception line are read again as a failure of their own, and claimed as handled
                # (one cut before its exception line is not: what follows the cut may be another traceback's frames, so
                # only its header is passed over, and its lines are read as they come)
                if self.tracebacks <= MAX_TRACEBACKS and following is not None:
                    key, covered_before = (source, msg.rank), self.covered.get((source, msg.rank))
                    self.read_traceback(self.spawn_rank(msg), raw, line, source, following(TRACEBACK_LINES))
                    made = next((sign for sign in self.signs if sign.line == line and sign.where.rank == msg.rank), None)
                    if made is not None and made.kind == "exception" and not made.cut:
                        made.claimed = made.claimed or HANDLED
                        self.ignored_span[msg.rank] = (line, self.covered.get(key, line))
                        return
                    if made is not None:
                        self.signs.remove(made)
                        self.count -= 1
                    if covered_before is None:
                        self.covered.pop(key, None)
                    else:
                        self.covered[key] = covered_before
                return
            if self.tracebacks <= MAX_TRACEBACKS and following is not None:
                self.read_traceback(self.spawn_rank(msg), raw, line, source, following(TRACEBACK_LINES))
            return
        if (text[:6] == 'File "' or text[:1] in "│|" and (RICH_FRAME.match(text) or text.startswith(RICH_RUNNING))
                or '", line ' in text and CUT_FRAME.match(text)):
            self.headless(msg, raw, line, source, following)
            return
        if text[:2] == "E " and PYTEST_E.match(text):
            self.pytest_said[msg.rank] = msg  # the exception pytest reports; where it was raised follows
        elif text[-5:].rstrip().endswith(("Error", "Exception")) and ".py:" in text and (m := PYTEST_WHERE.match(text)):
            self.pytest_raised(m, msg, raw, line, source)
            return
        if text[:7] == "frame #" and CPP_FRAME.match(text):
            self.cpp_frames(msg, raw, line, source)
            return
        if any(word in text for word in NATIVE_WORDS) and NATIVE_FRAME.search(text):
            self.native_frames(msg, raw, line, source)
            return
        m = (OTHER_SIGNS.search(text) or LATE_SIGNS.match(text)) if SIGN_GATE.search(text) else None
        if m is None or m.lastgroup is None:
            # the line as written, when its prefix was the evidence (a logger's "ERROR:torch...error_handler:")
            whole = as_written(raw, text)
            found = evidence_in(text) or (evidence_in(whole) if whole != text else None)
            if found is not None and not (found[0] == "chained" and line <= self.covered.get((source, msg.rank), -1)):
                kind, value = found  # (a chained exception's marker inside a traceback read whole: that traceback tells it)
                if kind == "toolerror" and following is not None and tool_went_on(following(TOOL_WENT_ON_LINES)):
                    return  # it went on past its error line (TOOL_WENT_ON_LINES): no sign; the line still speaks of an error
                # its message is what the rule read (the tool's own words, without its "E: " or "× ")
                sign = Sign(kind, f"{KIND[kind]}: {value[:120]}", value[:300], line, source, msg, time_of(raw), text=text)
                above = self.signs[-1] if self.signs else None
                if (kind == "chained" and above is not None and above.kind == "exception" and above.claimed == HANDLED
                        and above.source == source and 0 < line - self.covered.get((source, msg.rank), -CHAINED_AFTER - 1) <= CHAINED_AFTER):
                    sign.claimed = HANDLED  # the chaining words under a traceback that was handled (the host's own): handled too
                self.add(sign)
            return
        kind = first_group(m)
        value = m.group(kind) or ""
        what, message = value, text
        if kind == "spawned":
            self.spawned = int(value)
            self.events += 1
            return
        if kind == "c10" and value in STORE_IO:
            self.explained_at[msg.rank] = line  # its backtrace is the store's too
            return  # a store read after a peer left: the store patterns tell it (a warning at a normal exit, too)
        if kind == "barrier" and value == "checked in" and RANKS_WORD.search(text) is None:
            return  # "checked in" in some other sense: only ranks or workers checking in at a barrier count
        if kind == "barrierdone":
            for s in self.signs:
                if s.kind == "barrier":
                    s.claimed = s.claimed or "store-barrier-completed"  # the waiting was progress
            self.events += 1
            return
        if kind in ("bare", "ipython"):
            kind, msg = "exception", self.spawn_rank(msg)
        elif kind == "c10" and value == "ncclCommWatchdog":
            if (frames := self.frames_above(msg.rank, line)) is not None:
                # the watchdog's rethrow under a backtrace whose message the paste cut (pytorch/pytorch#123678): one report, its
                # frames told as the watchdog's
                watchdog_frames(frames, value)
                return
            kind, what = "c10watchdog", KIND["c10watchdog"]  # it re-raises a collective's error: that error is the failure
        elif kind == "c10":
            what = f"C++ exception raised from {value}" + (" (the NCCL watchdog: a collective timed out)" if value == "checkTimeout" else
                                                           " (the NCCL watchdog's error check: an NCCL error a communicator reported)"
                                                           if value in WATCHDOG_ERROR_CHECK else "")
        elif kind == "caught":
            what = f"signal {m.group('caughtnum')} ({value})"
        elif kind == "assertion":
            what = f"assertion {value[:80]} failed"
        elif kind in ("signame", "glogsig", "shellsig"):
            what = m.group("signame") or value
            if what in STOP_SIGNALS:
                kind = "stopped"  # the launcher stopping the other ranks after a failure: a consequence
        elif kind == "srun_what":
            if "Exited with exit code 0" in value or "CANCELLED" in text or "Terminated" in value:
                return  # srun's own cancellation of the other tasks is not a failure of its own
            what = value.strip()
        elif kind in ("exitcode", "exit"):
            signal = value[1:] if value.startswith("-") else str(int(value) - 128) if value.isdigit() and 128 < int(value) < 160 else ""
            what = f"exit code {value}" + (f" ({SIGNALS[signal]})" if signal in SIGNALS else "")  # a shell reports signal N as 128+N
            if SIGNALS.get(signal) in STOP_SIGNALS:
                kind = "stopped"
        elif kind == "fatal":
            what = f"Fatal Python error: {value.strip()}"[:120]
        elif kind in ("cuda", "ncclwarn", "ncclerror", "gloo", "barrier", "what"):
            what = KIND[kind]
            message = value.strip() or text
        elif kind in ("terminate", "terminate_bare"):
            what = f"terminate called ({value})"
        elif kind == "devassert":
            what = KIND[kind]
        sign = Sign(kind, what, message[:300], line, source, msg, time_of(raw), text=text)
        if len(self.signs) < KEEP:
            after = following(MESSAGE_LINES) if following is not None and kind in ADVISING else []
            sign.remedy = remedy_in([(line, text), *continued(msg, line, after)])
        if kind in CPP_REPORT:
            # terminate called, what(), "Exception raised from": lines of one C++ report
            before = next((t for t in reversed(self.signs) if t.kind in CPP_REPORT and (None in (t.where.rank, msg.rank) or t.where.rank == msg.rank)), None)
            if before is not None and line - before.line <= CPP_REPORT_LINES:
                sign.block = before.block or before
                sign.claimed = sign.block.claimed
        self.add(sign)

    def headless(self, msg: LogLine, raw: str, line: int, source: str, following: Optional[Callable[[int], list[str]]]) -> None:
        """A traceback's frames without its header (the paste starts inside it): read from here
        as a traceback, unless a traceback already read holds this line."""
        if line <= self.covered.get((source, msg.rank), -1) or self.tracebacks >= MAX_TRACEBACKS or following is None:
            return
        self.tracebacks += 1
        if self.first_traceback is None:
            self.first_traceback = line  # its frames are in the log: the user is never sent to find them
        head = LogLine(("╭ " if msg.text[:1] in "│|" else "") + "(a traceback whose header is not in the log)", msg.rank, msg.local_rank, msg.node)
        self.read_traceback(self.spawn_rank(head), raw, line - 1, source, [raw, *following(TRACEBACK_LINES)])

    def cpp_frames(self, msg: LogLine, raw: str, line: int, source: str) -> None:
        """torch's C++ backtrace (`frame #3: c10d::... + 0x14d (0x7f... in libtorch_cuda.so)`) prints
        under a C++ exception; without its message (cut) the frames still say one was thrown. A
        warning's backtrace (TORCH_SHOW_CPP_STACKTRACES=1) is no failure."""
        if "Warning" in msg.text or "c10::warn" in msg.text:
            self.warned_frames_at[msg.rank] = line
            return
        watchdog = WATCHDOG_FRAME.search(msg.text) if "ProcessGroupNCCL::" in msg.text else None
        near = [s for s in self.signs if s.kind in CPP_REPORT + ("cppframes",) and s.where.rank == msg.rank and 0 <= line - s.line <= CPP_FRAMES_SPAN]
        far = -10 * CPP_FRAMES_SPAN
        if near or any(0 <= line - seen.get(msg.rank, far) <= CPP_FRAMES_SPAN for seen in (self.warned_frames_at, self.explained_at)):
            if watchdog is not None:
                for frames in near:
                    watchdog_frames(frames, watchdog.group("check"))  # (a backtrace with no message of its own: its frames say whose)
            return  # part of a C++ report already read or explained, or of a warning's backtrace
        sign = Sign("cppframes", KIND["cppframes"], msg.text[:300], line, source, msg, time_of(raw), text=msg.text)
        if watchdog is not None:
            watchdog_frames(sign, watchdog.group("check"))
        self.add(sign)

    def frames_above(self, rank: Optional[int], line: int) -> Optional[Sign]:
        """The C++ backtrace without a message just above `line` (the same rank's), if one is."""
        return next((s for s in reversed(self.signs) if s.kind == "cppframes" and s.where.rank == rank and 0 <= line - s.line <= CPP_FRAMES_SPAN), None)

    def native_frames(self, msg: LogLine, raw: str, line: int, source: str) -> None:
        """A native stack's frame (NATIVE_FRAME): a process died in native code; told once per stack, and
        not at all under a report that already said so (a signal's, a C++ exception's, glibc's)."""
        if any(s.kind in NATIVE_REPORT and s.where.rank == msg.rank and 0 <= line - s.line <= CPP_FRAMES_SPAN for s in self.signs):
            return
        self.add(Sign("nativeframes", KIND["nativeframes"], msg.text[:300], line, source, msg, time_of(raw), text=msg.text))

    def see_source(self, msg: LogLine, raw: str, line: int, source: str) -> Optional[LogLine]:
        """A line of quoted source with the exception glued to it (a paste that lost a line break:
        `raise CalledProcessError(retcode, process.args, subprocess.CalledProcessError: Command ...`):
        the exception's own text, for the patterns to read, or None."""
        m = GLUED.search(msg.text)
        if m is None:
            return None
        glued = LogLine(msg.text[m.start("cls") :], msg.rank, msg.local_rank, msg.node)
        self.add(Sign("exception", m.group("cls"), m.group("message")[:300], line, source, glued, time_of(raw), [], text=glued.text, cut=True))
        return glued

    def pytest_raised(self, m: re.Match, msg: LogLine, raw: str, line: int, source: str) -> None:
        """pytest's "path.py:576: AttributeError": where the exception of its "E   AttributeError: ..." line was raised."""
        said = self.pytest_said.get(msg.rank)
        em = PYTEST_E.match(said.text) if said is not None else None
        message = em.group("message") if em is not None and em.group("cls") == m.group("cls") else ""
        where = said if said is not None and message else msg
        frame = Frame(m.group("path"), int(m.group("line")))
        self.add(Sign("exception", m.group("cls"), message[:300], line, source, where, time_of(raw), [frame], text=where.text))

    def spawn_rank(self, msg: LogLine) -> LogLine:
        """A traceback mp.spawn prints after "-- Process N terminated" is rank N's."""
        if msg.rank is None and self.spawned is not None:
            return LogLine(msg.text, self.spawned, msg.local_rank, msg.node)
        return msg

    def read_traceback(self, head: LogLine, raw: str, line: int, source: str, after: list[str]) -> None:
        frames: list[Frame] = []
        boxed = head.text[:1] in BOX_TOP  # rich draws the frames in a box; the exception line follows it
        running: Optional[tuple[int, LogLine]] = None  # the first of rich's marks of a frame's running line in the box
        ipython = IPYTHON_HEADER.match(head.text) is not None  # IPython's frames and its numbered source lines
        display: list[int] = []  # the lines of its source display (rich's box rows, IPython's numbered lines)
        self.covered[(source, head.rank)] = line + len(after)  # its frames are not read again as a traceback of their own
        for i, nxt in enumerate(after):
            for seg in segments(nxt):
                if head.rank is not None and seg.rank is not None and seg.rank != head.rank:
                    continue  # another rank's line, interleaved
                if head.node and seg.node and seg.node != head.node:
                    continue
                text = seg.text
                if not text or CARETS.match(text):
                    continue
                if boxed:
                    if text[:1] in BOX_SIDE:
                        display.append(line + 1 + i)
                    rm = RICH_FRAME.match(text)
                    if rm:
                        frames.append(Frame(rm.group("path"), int(rm.group("line")), rm.group("func") or ""))
                    if running is None and text.startswith(RICH_RUNNING):
                        running = (line + 1 + i, seg)
                    boxed = text[:1] not in BOX_BOTTOM
                    continue
                fm = FRAME.match(text) or CUT_FRAME.match(text)
                if fm:
                    frames.append(Frame(fm.group("path"), int(fm.group("line")), fm.group("func") or "", cut=fm.re is CUT_FRAME, at=line + 1 + i))
                    continue
                if ipython:
                    frame = ipython_frame(text, frames)
                    if frame is not None:
                        frames.append(frame)
                    if frame is None and (text[:1] == "-" or text[:1].isdigit()):
                        display.append(line + 1 + i)  # a numbered source line IPython shows under the frame
                    if frame is not None or text[:1] in "-[" or text[:1].isdigit():
                        continue  # a frame, or the source lines IPython prints under it
                if text[:1] in VALUE_MARKS:
                    display.append(line + 1 + i)  # better_exceptions' (loguru's) marks of the values a frame's line used
                    continue
                if text.startswith(TRACEBACK):
                    self.covered[(source, head.rank)] = line + i
                    self.cut_traceback(head, raw, line, source, frames)  # a header without an exception line
                    return
                if frames and text.startswith(LOGGING_REPORT) and logging_report(head, after[i : i + 2]):
                    # the call stack Python's logging prints with a record it could not format or write, and the record
                    # (Handler.handleError): logging caught its own error, and the program went on
                    self.covered[(source, head.rank)] = line + 2 + i
                    self.logging_error(head, raw, line, source, frames, line + 1 + i, text)
                    return
                em = EXCEPTION_LINE.match(text) if frames or head.text[:1] in BOX_TOP else None
                if em is None or em.group("message") is None and ":" not in text and BARE_EXCEPTION.search(em.group("cls")) is None:
                    # (the line right under the frame, indented as Python prints it; not another program's line the paste interleaves)
                    if frames and not frames[-1].code and line + i == frames[-1].at and ("  " + text.strip()) in nxt:
                        frames[-1].code = text.strip()[:160]  # the source line a frame quotes: what it was running
                        if len(self.quoted) < QUOTED_KEPT:
                            self.quoted.add((source, line + 1 + i))
                        frames[-1].code_cut = i == len(after) - 1 and len(after) < TRACEBACK_LINES
                    continue  # the source line a frame quotes
                cls = em.group("cls")
                message = em.group("message") or ""
                self.covered[(source, head.rank)] = line + 1 + i
                self.shown.update((source, at) for at in display[: max(0, SHOWN_KEPT - len(self.shown))])
                if NOT_FAILURES.match(text) or cls in ("SystemExit",) and message.strip() in ("", "0", "None"):
                    return
                chained = self.chained_cause(after[i + 1 : i + 4])
                if not message.strip():  # a message that starts on the next lines: an error handler's relay marker there
                    message = next((seg.text for raw in after[i + 1 : i + 4] for seg in segments(raw) if RELAY_MARKER in seg.text), message)
                sign = Sign("exception", cls, message[:300], line, source, head, time_of(raw), frames, text=text)
                sign.relaying = self.note_relay(text, head.rank, line + 1 + i, source)  # a relay's exception line: its original follows
                goes_on = continued(head, line + 1 + i, after[i + 1 : i + 1 + MESSAGE_LINES])
                sign.remedy = remedy_in([(line + 1 + i, text), *goes_on])
                sign.goes_on = [] if any(PASTED_CODE.match(t) for _, t in goes_on) else goes_on
                # mp.spawn's report has no rank; the traceback it announces is given the spawned process's
                if self.signs and self.signs[-1].kind == "exception" and self.signs[-1].line < line and self.signs[-1].where.rank in (head.rank, None):
                    previous = self.signs[-1]
                    if previous.cause == "<next>":  # this traceback was raised from the previous one
                        previous.cause = TOLD if wrapper(previous.what, previous.message, previous.frames) else ""
                        sign.cause = previous.what
                relayed_on = chained or wrapper(cls, message, frames)
                if relayed_on:
                    sign.cause = "<next>"  # a worker's exception re-raised: the worker's own traceback follows
                host = plugin_after(after[i + 1 :]) if not relayed_on else None
                if host is not None:
                    self.caught_spans.append((head.rank, line, line + 1 + i, line + 2 + i + host[0], host[1], "plug-in"))
                by_host = not relayed_on and (host is not None or self.by_plugin_host(head.rank, line))
                low = self.logged_at_low_level(head, after[i + 1 :]) if not relayed_on else None
                if low is not None:  # (its finding is one the job went on past: the logger's next record)
                    self.caught_spans.append((head.rank, line, line + 1 + i, line + 2 + i + low[0], low[1], "logged-low"))
                if host_only(frames) or by_host or not relayed_on and (
                        handled_after(head, raw, after[i + 1 :]) or self.logged_went_on(head, message, after[i + 1 :])
                        or formatted_in_message(raw) or low is not None
                        or i + 1 < len(after) and any(seg.text == LOGGING_CALL_STACK for seg in segments(after[i + 1]))):
                    # (or logging's own error: the call stack of the record it could not write follows, LOGGING_CALL_STACK;
                    # or an IDE's or a notebook kernel's own traceback, HOST_PACKAGES: the host logged it, not the job)
                    sign.claimed = sign.claimed or HANDLED  # caught: the program logged it, or went on (WENT_ON)
                    self.went_on_span[head.rank] = (line, line + 1 + i)
                    if len(self.went_on) < KEEP:
                        self.went_on.append((line + 1 + i, text[:200], cls))
                self.add(sign)
                return
        if not frames and running is not None and TRACEBACK not in head.text:
            # a box the paste starts inside (no header) and cut before any frame's path: only the lines the frames
            # were running (❱) are left, and they are a traceback's
            at, seg = running
            where = LogLine(seg.text, head.rank, head.local_rank, head.node)
            self.add(Sign("richcut", KIND["richcut"], "", at, source, where, time_of(raw), [], text=seg.text, cut=True))
            return
        self.cut_traceback(head, raw, line, source, frames)

    def logging_error(self, head: LogLine, raw: str, line: int, source: str, frames: list[Frame], at: int, text: str) -> None:
        """The call stack of a record Python's logging could not format or write, with the record (`logging_report`): a sign
        of the error logging caught itself, claimed as handled, and kept as one the program went on from."""
        sign = Sign("exception", LOGGING_ERROR, "", line, source, head, time_of(raw), frames, text=text, cut=True, claimed=HANDLED)
        self.went_on_span[head.rank] = (line, at + 1)
        if len(self.went_on) < KEEP:
            self.went_on.append((at, text[:200], LOGGING_ERROR))
        self.add(sign)

    def note_relay(self, text: str, rank: Optional[int], line: int, source: str) -> Optional[Relayed]:
        """Keep the line if it is a relay of another process's error: the traceback that follows it is that error's."""
        relayed = relay_in(text, line)
        if relayed is not None:
            self.relays[(source, rank)] = relayed
        return relayed

    def relay_before(self, source: str, rank: Optional[int], line: int) -> Optional[Relayed]:
        """The relay whose original traceback starts at this line (its header or, cut above, its first frame)."""
        for key in ((source, rank), (source, None)):
            relayed = self.relays.get(key)
            if relayed is not None and 0 <= line - relayed.line <= RELAY_SPAN:
                return relayed
        return None

    def cut_traceback(self, head: LogLine, raw: str, line: int, source: str, frames: list[Frame]) -> None:
        """No exception line: the paste (or the log) was cut, but an exception was raised (a traceback
        header alone says so too)."""
        if not frames and TRACEBACK in head.text:  # a header alone, plain or rich's box top (weak: what else the log says comes first)
            self.add(Sign("tbheader", KIND["tbheader"], "", line, source, head, time_of(raw), [], cut=True))
        if frames:
            # IPython named the class in its header (a relay's `Original Traceback` names none)
            named = None if head.text.startswith(ORIGINAL) else IPYTHON_HEADER.match(head.text)
            what = f"{named.group('cls')} (the traceback is cut before its message)" if named else "an exception (the traceback is cut before its last line)"
            sign = Sign("exception", what, "", line, source, head, time_of(raw), frames, cut=True)
            previous = self.signs[-1] if self.signs else None
            if previous is not None and previous.cause == "<next>" and previous.where.rank == head.rank and previous.line < line:
                previous.cause, sign.cause = (TOLD if wrapper(previous.what, previous.message, previous.frames) else ""), previous.what
            relayed = self.relay_before(source, head.rank, line)
            if relayed is not None:  # another process's error its relay printed, cut: the relay names its class and where it ran
                sign.what, sign.relay = f"{relayed.what()} (its traceback is cut before the message)", relayed
            self.add(sign)

    @staticmethod
    def chained_cause(lines: list[str]) -> bool:
        return any(marker in seg.text for raw in lines for seg in segments(raw) for marker in CHAINED)

    def logged_went_on(self, head: LogLine, message: str, after: list[str]) -> bool:
        """The traceback being read follows a logger's error record that holds its exception's message (in the lines right
        before its header), and the same logger's records go on after its exception line at no error level
        (LOGGED_MESSAGE's why)."""
        said = SUGGESTION.sub("", message.strip())[:LOGGED_MESSAGE * 4]
        logged = next((raw for raw in self.before if said in raw and time_of(raw) and RECORD_ERROR.search(raw, 0, 120)), None)
        if len(said) < LOGGED_MESSAGE or logged is None:
            return False
        shape = record_shape(logged)
        records = unstamped = 0
        for nxt in after:
            for seg in segments(nxt):
                if not seg.text or head.rank is not None and seg.rank is not None and seg.rank != head.rank:
                    continue
                if TRACEBACK in seg.text or RECORD_ERROR.search(nxt, 0, 120) or error_level(nxt) is not None or EXCEPTION_LINE.match(seg.text):
                    return False  # a failure reported after it
                if not time_of(nxt):
                    unstamped += 1  # the message's own further lines, before the logger's next record
                    if records or unstamped > LOGGED_AROUND:
                        return False
                    continue
                if speaks_of_error(seg.text) or record_shape(nxt) != shape:
                    return False  # (another logger's record: a launcher's after its child died is no sign the job went on)
                records += 1
                if records >= LOGGED_WENT_ON:
                    return True
        return False

    def logged_at_low_level(self, head: LogLine, after: list[str]) -> Optional[tuple[int, str]]:
        """(index in `after`, text) of the same logger's next record, where the traceback being read is one a logger wrote
        under a record of its own at DEBUG or INFO level right before its header (Python's logging with exc_info=True:
        `logger.debug("Failed to load FFmpeg6 extension.", exc_info=True)`, torio's loader trying one FFmpeg after another,
        heldout28 buzz-1160) and that next record follows the exception's line: the program logged what it caught, at a
        level that says it expected it, and went on. None otherwise: at error or warning level, or with anything else after
        it, LOGGED_MESSAGE's rule decides."""
        record = self.before[-1] if self.before else ""
        level = RECORD_LEVEL.search(record, 0, 120)
        if level is None or level.group(0) not in ("DEBUG", "INFO") or not time_of(record):
            return None
        at, nxt = next(((k, raw) for k, raw in enumerate(after[:LOGGED_AROUND]) if raw.strip()), (0, ""))
        if head.rank is not None and all(seg.rank not in (None, head.rank) for seg in segments(nxt)):
            return None  # (another rank's line)
        following = RECORD_LEVEL.search(nxt, 0, 120)
        if (following is None or following.group(0) not in ("DEBUG", "INFO") or not time_of(nxt)
                or record_shape(nxt) != record_shape(record)):
            return None
        return (at, nxt.strip())

    def caught_by(self, rank: Optional[int], line: int) -> Optional[tuple[int, str, str]]:
        """(line, text, how) of what shows that the program caught the exception `line` is of (its traceback, or its line
        under its host's word): its host's word that it goes on without that plug-in ("plug-in", PLUGIN_SKIPPED), or its
        logger's next record after one it wrote at DEBUG or INFO level ("logged-low"); else None."""
        return next(((at, said, how) for r, first, last, at, said, how in self.caught_spans if r == rank and first <= line <= last), None)

    def by_plugin_host(self, rank: Optional[int], line: int) -> bool:
        """The line is of a plug-in's exception that its host program caught and went on from (PLUGIN_SKIPPED)."""
        caught = self.caught_by(rank, line)
        return caught is not None and caught[2] == "plug-in"

    def handled(self, rank: Optional[int], line: int) -> bool:
        """The line starts an exception that a fallback warning just before it said was caught, or is one of a
        traceback Python printed under "Exception ignored in" (it went on)."""
        first, last = self.ignored_span.get(rank, (0, -1))
        went_first, went_last = self.went_on_span.get(rank, (0, -1))
        return (0 < line - self.fallback_at.get(rank, -HANDLED_LINES - 1) <= HANDLED_LINES or first <= line <= last
                or went_first <= line <= went_last)

    def add(self, sign: Sign) -> None:
        self.events += 1
        self.count += 1
        if self.handled(sign.where.rank, sign.line):
            sign.claimed = sign.claimed or HANDLED
        if len(self.signs) < KEEP:
            self.signs.append(sign)
            return
        # full: a sign a pattern already explains makes room (an unknown failure later in a long log still counts)
        spent = next((i for i, s in enumerate(self.signs) if s.claimed and s.block is None and not any(t.block is s for t in self.signs)), None)
        if spent is not None:
            del self.signs[spent]
            self.signs.append(sign)
        else:  # kept apart: the last run's failure, in a log several runs were appended to, is among the latest
            self.latest = [*self.latest[1 - LATEST :], sign]

    def retract(self, kept: int, kinds: tuple[str, ...]) -> bool:
        """Take back the signs of these kinds added since the first `kept` were; whether one was."""
        taken = [s for s in self.signs[kept:] if s.kind in kinds]
        for s in taken:
            self.signs.remove(s)
            self.count -= 1
        return bool(taken)

    # -- what the log shows -------------------------------------------------
    def is_quoted_source(self, source: str, line: int) -> bool:
        """The line is the source line a traceback read already quotes under one of its frames."""
        return (source, line) in self.quoted

    def is_shown(self, source: str, line: int) -> bool:
        """The line is a row of the source display of a traceback read already, whose exception line the log shows."""
        return (source, line) in self.shown

    def in_traceback(self, source: str, line: int) -> bool:
        """The line is one of a traceback read already (its frames and their source lines), on any rank of `source`."""
        return any(line <= last for (src, _), last in self.covered.items() if src == source)

    def headline(self) -> Optional[Sign]:
        """The sign that says most about the failure; among equals, the first in the log.
        An exception chained into a later one is told through the later one (`cause`)."""
        live = [s for s in self.signs if s.cause not in ("<next>", TOLD) and not s.claimed]
        if not live:  # the exception it was chained into is not in the log (cut): it is the failure itself
            # (a wrapper told through its worker's exception is not: that one was read, and explained)
            live = [s for s in self.signs if not s.claimed and s.cause != TOLD]
        if not live:
            return None
        return min(live, key=lambda s: (-s.strength, s.source, s.line))

    def original_of(self, source: str, line: int, text: str) -> Optional[Sign]:
        """The cut traceback of the original error the relay on this line (`text`) printed (knowledge/relays.py), if the log
        has one; or that of the same relay said again further on (a paste's title quotes the relay, its body prints it whole)."""
        said = relay_in(text, line)
        return next((s for s in self.signs if s.relay is not None and s.source == source and not s.claimed and (
            s.relay.line == line or said is not None and s.relay.line > line and s.relay.what() == said.what())), None)

    def exception_at(self, msg: LogLine) -> Optional[Sign]:
        """The traceback whose exception line this is (read ahead from its header)."""
        return next((s for s in reversed([*self.signs, *self.latest]) if s.kind == "exception" and s.text == msg.text and s.where.rank == msg.rank), None)

    def same_exception(self, cls: str, message: str) -> Optional[Sign]:
        """The traceback read last whose exception is this class with this message (told on another line than the one quoted)."""
        return next((s for s in reversed(self.signs) if s.kind == "exception" and s.what.rsplit(".", 1)[-1] == cls
                     and message and s.message.strip() == message.strip()), None)

    def exception(self, cls: str, rank: Optional[int]) -> Optional[Sign]:
        """The traceback that ended in this exception (same rank when known)."""
        short = cls.rsplit(".", 1)[-1]
        found = [s for s in self.signs if s.kind == "exception" and s.what.rsplit(".", 1)[-1] == short and (rank is None or s.where.rank in (None, rank))]
        # a wrapper that re-raised a worker's exception is told through the worker's (`TOLD`); one raised again as the same class
        # from it ("The above exception was the direct cause", pandas' `raise KeyError(key) from err`) through the later one,
        # whose traceback holds the caller's frames (heldout26w aashifa05: the user's row['image'] at line 132)
        told = [s for s in found if s.cause != TOLD and self.raised_again(s) is None]
        return next(iter(told), next((s for s in found if s.cause != TOLD), found[0] if found else None))

    def raised_again(self, sign: Sign) -> Optional[Sign]:
        """The exception of the same class the next traceback ends in, where it was raised from `sign` (its `cause`, or the
        chaining words between the two: "The above exception was the direct cause of the following exception"), or None."""
        later = [s for s in self.signs if s.line > sign.line and s.source == sign.source and s.where.rank == sign.where.rank]
        nxt = next((s for s in later if s.kind == "exception"), None)
        if nxt is None or nxt.what.rsplit(".", 1)[-1] != sign.what.rsplit(".", 1)[-1]:
            return None
        between = [s for s in later if s.line < nxt.line]
        return nxt if nxt.cause == sign.what or (between and all(s.kind == "chained" for s in between)) else None


def ipython_frame(text: str, frames: list[Frame]) -> Optional[Frame]:
    """One of IPython's frames (a new one), or None; an arrow line gives the frame above it its line."""
    m = IPYTHON_FRAME.match(text)
    if m:
        return Frame(m.group("path"), int(m.group("line")), m.group("func") or "")
    m = CELL_FRAME.match(text)
    if m:
        return Frame(f"<ipython-input-{m.group('cell')}>", int(m.group("line")), "<cell>")
    m = OLD_IPYTHON_FRAME.match(text)
    if m:
        return Frame(m.group("path"), 0, m.group("func"))
    m = IPYTHON_ARROW.match(text)
    if m and frames and frames[-1].line == 0:
        frames[-1].line = int(m.group("line"))
    return None


def notice_stack_lines(after: list[str]) -> int:
    """How many of these lines are the stack a notice prints (its frames and their source lines, indented),
    up to the first line that is neither: a traceback after it is read as one."""
    n = 0
    for raw in after:
        body = raw.strip()
        if not body or not (raw[:1] in " \t" or body.startswith('File "')) or body.startswith(TRACEBACK):
            break
        n += 1
    return n


def record_shape(raw: str) -> str:
    """A logger's record's shape: what stands before its level word, digits left out, and the word after the level (the
    logger's name): "[2025-07-16 15:24:47] ERROR main: ..." and "[2025-07-16 15:24:50] INFO main: ..." are one logger's."""
    m = RECORD_LEVEL.search(raw, 0, 120)
    if m is None:
        return ""
    name = raw[m.end():m.end() + 60].split(None, 1)
    return raw[:m.start()].translate(NO_DIGITS) + "|" + (name[0] if name else "")


def logging_report(head: LogLine, lines: list[str]) -> bool:
    """`lines` are the record Python's logging prints under the call stack of a record it could not format or write
    (Handler.handleError: "Message: 'Uvicorn running on %s://%s:%d'" then "Arguments: ('http', '0.0.0.0', '8081')", heldout26
    YanWenKun/Hunyuan3D-2-WinPortable#9, where the server went on to serve the next request): the process's own lines."""
    texts = [seg.text for raw in lines for seg in segments(raw) if seg.text and (head.rank is None or seg.rank in (None, head.rank))]
    return len(texts) >= 2 and LOGGED_RECORD.match(texts[0]) is not None and texts[1].startswith(LOGGING_ARGUMENTS)


CHAINED_AFTER = 3  # lines from a traceback's exception line to the chaining words under it at most (a blank line between)
# The packages of an interactive host that runs the job (an IDE's kernel, a notebook's, a debugger) and of the messaging under
# them: a traceback whose every frame is theirs is the host's own error, which it logs and goes on from (Spyder's kernel's
# "CommError: The comm is not connected." after the last epoch, orhangazidemirci/Tree-NET train_log.log, heldout27w), not the
# job's failure. A traceback through any frame of the job's own code or of another library is the job's.
HOST_PACKAGES = frozenset({
    "spyder_kernels", "spyder", "ipykernel", "comm", "jupyter_client", "jupyter_server", "IPython", "tornado", "zmq", "debugpy",
    "pydevd", "_pydevd_bundle", "_pydev_bundle", "traitlets",
})


def host_only(frames: Sequence[Frame]) -> bool:
    """Every frame of a traceback is an interactive host's (HOST_PACKAGES), and it has some."""
    return bool(frames) and all(package_of(f.path) in HOST_PACKAGES for f in frames)


def handled_after(head: LogLine, raw: str, after: list[str]) -> bool:
    """A traceback's exception the program caught, by what the log shows: no failure after the exception line from any
    process (another exception or traceback, a line that reports an error: a launcher's, a signal's), and either the
    program went on (WENT_ON_LINES lines of its own progress: the same rank's, or unprefixed ones where the traceback's
    are; or a server's line that it is up and waits for requests, knowledge/serving.py READY) or a logger wrote the traceback at error level (its header carries the level: `ERROR :     Traceback ...`, a
    program's `log(ERROR, traceback.format_exc())`, which caught it). Python prints an exception that ends the process
    with a bare header, and the process prints nothing after it; another rank's progress (its own prefix) is no sign."""
    progress = 0
    for nxt in after:
        for seg in segments(nxt):
            text = seg.text
            if not text:
                continue
            if TRACEBACK in text or EXCEPTION_LINE.match(text) and ":" in text and not INFO_AT.match(text) or speaks_of_error(text):
                return False  # (a logger's "INFO:     ..." record is no exception's line)
            own = seg.rank == head.rank if head.rank is not None else seg.rank is None
            if own and WENT_ON.search(text):
                progress += 1
            elif own and READY.search(text):
                progress += WENT_ON_LINES  # a server that started after it, and is up (knowledge/serving.py): it went on
    at = raw.find(TRACEBACK)
    logged = at > 0 and (LOGGED_AT.search(raw[:at]) is not None or error_level(raw[:at]) is not None)
    return progress >= WENT_ON_LINES or logged


def plugin_after(after: list[str]) -> Optional[tuple[int, str]]:
    """(index in `after`, text) of the first line after a traceback's exception line, blank lines aside, where it is its
    host's word that the plug-in did not load and it goes on without it (PLUGIN_SKIPPED: ComfyUI's, printed after the
    traceback); else None."""
    for i, nxt in enumerate(after[:PLUGIN_LINES]):
        text = nxt.strip()
        if text:
            return (i, text) if any(w in text for w in PLUGIN_WORDS) and PLUGIN_SKIPPED.search(text) is not None else None
    return None


def formatted_in_message(raw: str) -> bool:
    """A traceback whose header follows a message's own words that introduce it as their text, on its line ("..., error
    happened with msg: Traceback (most recent call last):", PaddleOCR's loader logging traceback.format_exc() for a sample
    it skips, heldout28w shanmuka7482-ocr-project): the program formatted the exception into its own record, so it caught
    it. Python prints an uncaught exception's header at a line's start, or after a prefix that is no message of its own
    (a rank's "[rank0]: ", a bar's frame it is glued to); an exception whose message holds another's traceback
    ("RuntimeError: Traceback ...", a relay) names its class there, not these words."""
    at = raw.find(TRACEBACK)
    return at > 0 and FORMATTED_AT.search(raw, 0, at) is not None


def tool_went_on(after: list[str]) -> bool:
    """Whether a tool's own error line (evidence `toolerror`) is followed by TOOL_WENT_ON_LINES lines of its output with no
    error among them, before any blank line or fence: it went on past that error, it did not stop on it."""
    if len(after) < TOOL_WENT_ON_LINES:
        return False
    for raw in after:
        text = raw.strip()
        if not text or text.startswith(("```", "~~~")):
            return False  # the paste's block ends: what follows may be someone's words, or another paste
        if TRACEBACK in text or error_level(text) is not None or speaks_of_error(text) or evidence_in(text) is not None:
            return False
    return True


def glued_header(text: str) -> bool:
    """A line that ends in a traceback's header, whole or cut by the paste's width:
    "...17.62s/it]Traceback (most recent call last):", "... 17.62s/it]Traceback (most recent call l"."""
    at = text.rfind("Traceback (most rec")
    tail = text[at:].rstrip()
    # (the whole header without its colon is IPython's, after the exception's class: not cut)
    return at >= 0 and (tail == GLUED_HEADER or GLUED_HEADER.startswith(tail) and tail != TRACEBACK)


def wrapper(cls: str, message: str, frames: Sequence[Frame] = ()) -> bool:
    """An exception that re-raises another process's: Ray's RayTaskError(X), torch's 'Caught X in
    DataLoader worker process N' (its worker's traceback follows as 'Original Traceback'), and
    mp.spawn's join re-raising a process's error ('-- Process N terminated with the following error:'
    and that process's traceback follow: ProcessRaisedException, a bare Exception before torch 1.9), and the
    error handler of OpenNMT-py, fairseq and their forks re-raising a child's traceback in the parent's signal
    handler (its message starts with RELAY_MARKER, the child's traceback under it)."""
    if RAY_WRAPPER.match(cls) is not None or CAUGHT.match(message) is not None or RELAY_MARKER in message:
        return True
    return (cls.rsplit(".", 1)[-1] in SPAWN_REPORTS and bool(frames)
            and (frames[-1].path.replace("\\", "/").endswith("torch/multiprocessing/spawn.py")
                 # a parent's signal handler that re-raises a child's traceback as its message (fairseq's and OpenNMT-py's
                 # ErrorHandler: "-- Tracebacks above this line can probably be ignored --", then the child's)
                 or frames[-1].func in RELAY_HANDLERS))


def continued(head: LogLine, line: int, after: list[str]) -> list[tuple[int, str]]:
    """The lines after a message's first that go on with it (a message over several lines):
    up to a blank line, a new traceback, a frame, or a new log record."""
    out = []
    for i, raw in enumerate(after):
        if NEW_RECORD.match(raw):
            break
        seg = segments(raw)[0] if raw.strip() else None
        if seg is None or not seg.text or seg.text.startswith((TRACEBACK, "File \"")) or any(c in seg.text for c in CHAINED):
            break
        if head.rank is not None and seg.rank is not None and seg.rank != head.rank:
            continue  # another rank's line, interleaved
        out.append((line + 1 + i, seg.text))
    return out


def first_group(m: re.Match) -> str:
    """Which sign matched: the KIND group that took part (other groups are its details)."""
    return next(k for k in KIND if k in m.re.groupindex and m.group(k) is not None)


def time_of(raw: str) -> str:
    m = TIME.search(raw[:80])
    return next((g for g in m.groups() if g), "") if m else ""
