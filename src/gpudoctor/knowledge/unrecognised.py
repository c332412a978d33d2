"""Where the knowledge ends: a failure the log shows that no pattern explains.

The finding names what failed, where and when (from `signs`), and gives a next step that
is true whatever the cause: what to read, and which debug variable adds what. It never
guesses a fix.
"""

from __future__ import annotations

import re
from typing import Optional

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge import launcher_only
from gpudoctor.knowledge.carried import carried, validated
from gpudoctor.knowledge.evidence import ERROR_LEVEL
from gpudoctor.knowledge.pattern import CAUSE, Pattern
from gpudoctor.knowledge.libraries import PROJECTS, USER_PSEUDO, native_owner, package_of
from gpudoctor.knowledge.patterns import ALL, BY_ID, classes9, classes12a, classes20b, classes23c
from gpudoctor.knowledge.relays import relay_in
from gpudoctor.knowledge.remedy import Remedy, remedy_in, remedy_step
from gpudoctor.knowledge.signature import frame_search_url, search_url, signature
from gpudoctor.knowledge.signs import KIND, WATCHDOG_ERROR_FRAMES, Frame, Sign

# Not in the registry (no line matches it): `Diagnosis` makes it from the signs of failure.
UNRECOGNISED = Pattern(
    id="unrecognised-failure",
    family="launcher",
    role=CAUSE,
    severity=Severity.ERROR,
    title="unrecognised failure",
    regex=re.compile(r"(?!)"),
    needles=(),
    why="",
    fix="",
    examples=(),
)

WHY = """The log shows that the job failed ({what}), but none of gpudoctor's failure patterns
explains this failure, so no cause is guessed. Later errors on other ranks (timeouts, lost
connections) are usually consequences of the first failure."""

DISTRIBUTED = re.compile(r"distributed|c10d|nccl|gloo|rendezvous|elastic|ProcessGroup|barrier", re.IGNORECASE)
CUDA = re.compile(r"cuda|cudnn|cublas|device-side|GPU", re.IGNORECASE)
CUDA_WORDS = re.compile(r"\b(?:cuda|cudnn|cublas|cufft|curand|cusparse|nvml)\b|device-side assert", re.IGNORECASE)  # a message about CUDA itself, not a name holding "gpu"
# torchrun's own code (its elastic agent and rendezvous): a traceback that ends there is the launcher's, not a rank's.
# (torch.distributed.launch's main() runs torchrun's: THU-MIG/RepViT#65, its traceback cut at launch.py:196 after "failed (exitcode: 1)")
AGENT_FRAME = re.compile(r"(?:torch/distributed|torchelastic)/(?:elastic/)?(?:agent|rendezvous)/|torch/distributed/(?:run|launch|launcher/api)\.py$|/bin/torchrun$")
AGENT_STEP = ("; these frames are torchrun's own (its elastic agent), not a rank's. What the agent raises there: "
              "ChildFailedError when a worker failed (that worker's error is earlier in its output, or in the error_file of "
              "torchrun's Root Cause block), RendezvousClosedError when another node's agent closed the rendezvous (it failed, "
              "used up --max-restarts or was stopped), RendezvousTimeoutError when not every node joined in time (a host name "
              "or --rdzv-endpoint another node cannot reach), or a lost c10d store (the node that hosted it went away); the "
              "full exception line says which, the other nodes' torchrun output says why")
# torch's NCCL watchdog re-raises the error a collective met: the lines above its backtrace name that error, and decide
WATCHDOG_STEP = ("the NCCL watchdog re-raises the error a collective met, and the lines above its backtrace name it (`Process group "
                 "watchdog thread terminated with exception: ...`, `what(): ...`): `Watchdog caught collective operation timeout` "
                 "(a collective timed out: find the rank that never reached it; TORCH_NCCL_TRACE_BUFFER_SIZE=2000 dumps every rank's "
                 "last collectives), `NCCL error ... remote process exited or there was a network error` (a peer that died first, or "
                 "the network: NCCL_DEBUG=INFO names the peer), `CUDA error: ...` (that error is the cause: CUDA_LAUNCH_BLOCKING=1 "
                 "finds the kernel); paste those lines, or the same rank's whole output")
WATCHDOG_ERROR_STEP = ("its frames are the watchdog's error check (WorkNCCL::checkAndSetException), which raises an NCCL error a "
                       "communicator reported, not a timeout: ")

# Signs that only report that a process failed (a launcher's, a job runner's, a cluster manager's): the failure is that
# process's own error, and the headline says so and what decides it (issue 35, item 4; diagH32)
WRAPPED = {
    "dslaunch": "DeepSpeed's launcher stops every rank after one failed, and that rank's own error decides the cause",
    "hydra": "Hydra reports that the job raised, and the exception Hydra prints under this line decides the cause",
    **dict.fromkeys(("podstatus", "k8sreason", "k8sevent"), "Kubernetes reports that a container keeps failing, and the container's "
                    "own output (kubectl logs POD --previous) decides the cause"),
    **dict.fromkeys(("exit", "exitcode", "childfailed", "elastic", "elasticnofile", "mpirun", "srun_what"),
                    "it reports that a process failed, and that process's own error decides the cause"),
    "stopped": "launchers stop the other ranks so after one failed, and the first failing rank's own error decides the cause",
}
SIGNAL = re.compile(r"\((SIG[A-Z]+)\)")
CRASH_SIGNALS = ("SIGSEGV", "SIGABRT", "SIGBUS", "SIGFPE", "SIGILL")
# A traceback cut in a launcher's own frames: the launcher raising because what it started failed (the words its raising
# line or its function must hold, where the launcher's other frames raise for other reasons: accelerate's simple_launcher,
# multi_gpu_launcher and deepspeed_launcher run the script, its _validate_launch_command reads a config; torchrun's agent
# raises ChildFailedError for a worker, but a rendezvous error of its own too: its other frames are AGENT_STEP's to tell)
LAUNCHER_FRAMES = (
    (re.compile(r"torch/distributed/launcher/api\.py$"), "ChildFailedError",
     "torchrun's elastic agent raising ChildFailedError: a worker failed, and that worker's own error decides the cause"),
    (re.compile(r"accelerate/commands/launch\.py$"), "_launcher",
     "accelerate launch's own frames: the process it started failed, and that process's own error (printed above, in the same "
     "console) decides the cause"),
    (re.compile(r"deepspeed/launcher/(?:runner|launch)\.py$"), "",
     "DeepSpeed's launcher's own frames: a rank failed, and that rank's own error decides the cause"),
    (re.compile(r"(?:distutils|setuptools(?:/_distutils)?)/(?:dist|core)\.py$"), "",
     "a package build's frames (setuptools running a build command): the compiler's or the build command's own error decides the cause"),
    # a C++/CUDA extension's build (knowledge/patterns/builds.py, launchers.py: the build family): torch's own, DeepSpeed's op
    # builder compiling an op at first use, pip's hook preparing a package's build in its isolated environment
    (re.compile(r"torch/utils/cpp_extension\.py$"), "",
     "torch's build of a C++/CUDA extension (torch.utils.cpp_extension): the compiler's first `error:` line in the build's output decides the cause"),
    (re.compile(r"deepspeed/ops/op_builder/\w+\.py$"), "",
     "DeepSpeed building one of its ops at first use (its op builder): the compiler's first `error:` line in the build's output (ds_report "
     "shows which ops can build here) decides the cause"),
    (re.compile(r"pip/_vendor/(?:pyproject_hooks/_in_process|pep517/in_process)/_?in_process\.py$"), "",
     "pip's hook preparing the package's build: the exception the package's setup raised under it decides the cause"),
)


def wrapped(sign: Optional[Sign], lead: Optional[int] = None) -> str:
    """For a sign that only reports that a process failed (WRAPPED), or a traceback cut in a launcher's own frames
    (LAUNCHER_FRAMES): the headline's words that it is not the failure and what decides the cause, with the line to read
    first (`lead`) where one is; '' for any other sign."""
    if sign is None:
        return ""
    said = WRAPPED.get(sign.kind, "")
    signal = SIGNAL.search(sign.what) if said and sign.kind != "stopped" else None
    if signal is not None and signal.group(1) == "SIGKILL":
        said = ("the process was killed (SIGKILL), and what killed it decides the cause (the host's OOM killer: dmesg -T; a "
                "scheduler's memory or time limit: its record of the job)")
    elif signal is not None and signal.group(1) in CRASH_SIGNALS:
        said = f"the process crashed on {signal.group(1)}, and where it crashed decides the cause (PYTHONFAULTHANDLER=1 prints it)"
    if not said and sign.kind == "exception" and sign.cut and (last := sign.raised_in()) is not None:
        path = last.path.replace("\\", "/")
        said = next((words for where, raised, words in LAUNCHER_FRAMES
                     if where.search(path) and (not raised or raised in last.code or raised in last.func)), "")
    if not said:
        return ""
    # (no claim that the log lacks it where no line is read as its lead: a process's own words may be in no words gpudoctor reads,
    # kubeflow/kubeflow#4939's sudo line above kubectl's "command terminated with exit code 1")
    where = (f" (line {lead} speaks of an error: read it first)" if lead is not None else
             " (HYDRA_FULL_ERROR=1 prints it with its traceback)" if sign.kind == "hydra" else "")
    return f"not the failure itself: {said}{where}"


# An error about an API's shape (an attribute or an argument an object lacks): the class rule that
# tells it when the traceback shows a library raised it; without a traceback it is only a likelihood.
API_SHAPE = BY_ID["library-api-mismatch"].regex
API_SHAPE_STEP = ("; an error about an API's shape like this one, when a library raised it (not your code), means two installed "
                  "packages do not go together: one calls the other as another version of it worked: `pip show` the packages "
                  "in the traceback, upgrade the one that raised (or pin it to the version the caller requires) and search its "
                  "issues for the message")
# Classes of messages whose usual causes are known though the line does not decide which one holds
# (knowledge/patterns/classes.py, the rules that refine the catch-all): they never claim a line; the
# unrecognised answer names the class, what it usually means and what decides it, and so does the catch-all
# (python-exception) when the user's own code raised it (knowledge/story.py): `message_class` decides for both.
# A class that refines library-api-mismatch covers that class's lines when no library frame raised them.
# (Not the classes the traceback's innermost frame decides, whatever the message: knowledge/patterns/classes9.py, classes20b.py's told ones.)
CLASSES = tuple(p for p in ALL if p.refines in ("python-exception", "library-api-mismatch") and p not in classes9.PATTERNS_BY_FRAME
                and p not in classes12a.PATTERNS_BY_FRAME and p not in classes20b.PATTERNS_TOLD and p not in classes23c.PATTERNS_BY_FRAME)
# Classes whose words are about a library's own code: named only when the traceback shows a library's frame raised it.
RAISED_IN_A_LIBRARY = ("library-lookup-failed",)
# Classes whose words are about the call your code makes: named only when the traceback shows your frame raised it (a line
# alone, with no traceback, may be one library calling another: API_SHAPE_STEP's two packages that do not go together).
RAISED_IN_YOUR_CODE = ("call-arguments-refused",)
# A pydantic validation error (knowledge/carried.py): a configuration's check, before anything ran
VALIDATED_STEP = ("; it is a configuration check (pydantic's validation of the model the message names): the value it names was "
                  "refused before anything ran: correct it in the config, the arguments or the code that builds them")
# A Java (JVM) exception: its class is fully qualified under a JVM package root, and its frames are `at pkg.Class.method(File.java:N)`.
JAVA = re.compile(r"^(?:java|javax|jdk|scala|kotlin|org\.apache|com\.google|io\.grpc)\.(?:[a-z_]\w*\.)*[A-Z]\w*$")
JAVA_STEP = ("it is a Java exception: the `at package.Class.method(File.java:N)` lines under it are its stack, innermost first, "
             "and a `Caused by:` below them names the exception underneath, the one to read first")
# The family an unrecognised failure belongs to, by who wrote its sign: a plain Python exception is
# Python's, not the launcher's; a C++ report or a signal is the process's own ("native"); a launcher's,
# a scheduler's or a cluster manager's report is the launcher's; an install or build step is the platform's.
KIND_FAMILY = {
    **dict.fromkeys(("exception", "bare", "ipython", "tbheader", "frames", "chained", "thread", "hydra", "fatal", "pytest", "pyspy", "richcut", "notsetup"), "python"),
    **dict.fromkeys(("ncclwarn", "ncclerror", "c10watchdog", "c10error"), "nccl"),
    **dict.fromkeys(("cuda", "cudastatus", "devassert", "nvrm"), "cuda"),
    "gloo": "gloo",
    **dict.fromkeys(("terminate", "terminate_bare", "what", "c10", "cppframes", "signame", "glogsig", "shellsig", "shellkill", "caught", "glibc", "assertion", "nativeassert", "nativeframes"), "native"),
    **dict.fromkeys(("exitcode", "exit", "childfailed", "stopped", "srun_what", "spawned", "pyexec", "barrier", "barrierdone", "elastic", "errorfile",
                     "dslaunch", "mpirun", "raydied", "clierror", "status", "argparse", "notfound", "k8sevent", "podstatus", "jobstate", "slurm", "k8sreason",
                     "elasticnofile"), "launcher"),
}


# Signs that are an error-level log line which is itself the failure (evidence.py's rules): a program that
# caught an exception logs its message (str(exc), without the class) after its logger's level.
LOGGED = ("errorraised", "errorending", "fatallevel")
# The exception classes such a message is read as: the classes' rules are about the message, and the
# logger dropped the class. Not AssertionError (its rule reads any stated condition) nor the lookup
# classes (any message): both would claim every logged line.
LOGGED_AS = ("RuntimeError", "ValueError", "TypeError", "AttributeError")
# An error-level line is the failure already (a sign): a program's "not supported" there is named too,
# though feature-not-supported claims only the lines whose level its pattern reads.
LOGGED_CLASSES = (*CLASSES, BY_ID["feature-not-supported"])
# Where a logged message may start, after the level: past a logger's separators (": ", " - ", "] ").
MESSAGE_START = re.compile(r"(?::|\s-|\])\s+")


def logged_class(line: str) -> Optional[tuple[Pattern, str, str]]:
    """The class of the message an error-level log line holds, when one of CLASSES covers it, with the
    exception and the message it was read as (the fix's placeholders take the names they give)."""
    level = ERROR_LEVEL.search(line)
    said = line[level.end():] if level is not None else line  # the sign's line may have its level peeled (c10's "[E ...]")
    starts = [0, *(m.end() for m in MESSAGE_START.finditer(said))][:12]
    for p in LOGGED_CLASSES:
        if p.id in RAISED_IN_A_LIBRARY or p.id in RAISED_IN_YOUR_CODE:  # a logged line shows no frame
            continue
        if p.regex.search(said):
            return p, "", said
        read_as = next(((name, said[at:]) for at in starts for name in LOGGED_AS if p.regex.search(f"{name}: {said[at:]}")), None)
        if read_as is not None:
            return p, *read_as
    return None


def message_class(sign: Optional[Sign], exception: str = "", message: str = "") -> Optional[Pattern]:
    """The class of message this failure belongs to, when one of CLASSES covers it."""
    if sign is not None and sign.kind in LOGGED:
        logged = logged_class(sign.text)
        return logged[0] if logged is not None else None
    if sign is not None and sign.kind == "nativeassert":
        exception, message = "AssertionError", sign.message  # its condition, read as Python's assert's (knowledge/carried.py)
        read = carried(sign.text)
        if read is not None:
            message = read.split(": ", 1)[1]
    elif sign is not None:
        if sign.kind != "exception" or sign.cut:
            return None
        exception, message = sign.what, sign.message
    if not exception:
        return None
    text = f"{exception.rsplit('(', 1)[-1].rstrip(')')}: {message}"  # RayTaskError(AssertionError): the inner class
    # a package's frame raised it (not your code, nor Python's own library: os.environ's KeyError is the caller's lookup)
    in_a_library = sign is not None and sign.raised_by() not in ("", "your code", "python")
    in_your_code = sign is not None and sign.raised_by() == "your code"
    # the message as written, then the one it carries in a library's shape (a C++ assert or a pydantic error that a
    # RuntimeError or a ValidationError quotes: knowledge/carried.py)
    for said in (text, carried(message), validated(message)):
        known = next((p for p in CLASSES if said and p.regex.search(said) and (in_a_library or p.id not in RAISED_IN_A_LIBRARY)
                      and (in_your_code or p.id not in RAISED_IN_YOUR_CODE)), None)
        if known is not None:
            return known
    return None


def class_why(known: Pattern) -> str:
    """What a class's messages usually mean and what decides between its causes, added to a why."""
    return f" It is of a known class, {known.id} ({known.title}): {known.why}"


def class_step(known: Pattern, exception: str = "", message: str = "") -> str:
    """A class's own next step, led by its name (its page: gpudoctor diagnose --explain ID), with the
    names the message gives in place of the fix's upper-case placeholders (OWNER, ATTRIBUTE, ...)."""
    fix = known.fix
    m = known.regex.search(f"{exception.rsplit('(', 1)[-1].rstrip(')')}: {message}") if exception else None
    if m is not None:
        named = (known.fields(m, []) or {}) if known.fields is not None else m.groupdict()
        for name, value in named.items():
            if value:
                fix = re.sub(rf"\b{name.upper()}\b", lambda _: str(value), fix)
    return f"a message of the class {known.id} ({known.title}): {fix}"


def is_java(sign: Optional[Sign], exception: str = "") -> bool:
    return bool(JAVA.match(sign.what if sign is not None else exception))


def family_of(sign: Optional[Sign], exception: str = "", message: str = "") -> str:
    """What part of the stack failed, as far as the failure's own line tells."""
    if is_java(sign, exception):
        return "java"
    family = KIND_FAMILY.get(sign.kind, "platform") if sign is not None else "python"
    if family not in ("python", "native"):
        return family
    text = f"{sign.what} {sign.message}" if sign is not None else f"{exception} {message}"
    if "nccl" in text.lower():
        return "nccl"
    return "cuda" if CUDA_WORDS.search(text) else family


def unrecognised_why(sign: Optional[Sign], exception: str = "", message: str = "") -> str:
    # without a sign only the exception's own line was read: whose runtime raised it (Python, a JVM) is not known
    if sign is None:
        what = "an exception"
    elif is_java(sign):
        what = "a Java exception"
    else:
        what = "a Python exception" if sign.kind == "exception" else KIND.get(sign.kind, sign.kind)
    out = " ".join(WHY.format(what=what).split())
    known = message_class(sign, exception, message)  # (without a sign, the exception's own line)
    if known is not None:
        out += class_why(known)
    return out


# torch's assert macro ends every message with "please report a bug to PyTorch", whoever wrote the check: the file it names
# says whose it is (libraries.native_owner; an extension's file is patterns/classes12b.py's extension-check-failed)
NATIVE_ASSERT = re.compile(r"INTERNAL ASSERT FAILED at \"?(?P<path>[^\"\s:]+)\"?:\d+")


def native_check_step(message: str) -> str:
    """Whose C++ check failed, as far as the file its assert names decides (ModelTC/MQBench#128: c10d's reducer.cpp
    under torch/lib/ was called an extension's): PyTorch's own, or not said."""
    m = NATIVE_ASSERT.search(message) if "INTERNAL ASSERT" in message else None
    if m is None:
        return ""
    name = re.split(r"[/\\]", m.group("path"))[-1]
    owner = native_owner(m.group("path"))
    if owner == "torch":
        return (f"; the check that failed is PyTorch's own ({name}, in torch's source tree), not an extension's: torch's code met a "
                "state or an input it does not expect; its condition and file are the search in pytorch/pytorch's issues (a known bug "
                "of this version is fixed in a later one), and the call in your code that reached it (what it changed before) the lead")
    if owner is None:
        return (f"; the assert names {name} without its folder: the line does not say whether the check is PyTorch's own or a "
                "compiled extension's (extensions use torch's assert and its footer too); the condition and the file name, searched, tell which")
    return ""


def next_step(sign: Optional[Sign], exception: str = "", message: str = "", traceback_at: Optional[int] = None, launcher: str = "") -> str:
    """What to look at next, and which debug variable adds what; true whatever the cause.
    `traceback_at`: the line of the first traceback in the log, when a log holds one
    (the user is never sent to look for a traceback that is in the log); `launcher`: the one the
    log shows (knowledge/launcher_only.py), whose way of showing a rank's own error is the step."""
    if sign is None:
        if is_java(None, exception):
            out = JAVA_STEP
        elif relay_in(f"{exception}: {message}", 0) is not None:
            # a relay's line alone (knowledge/relays.py): the original it prints under its line is what is missing
            out = ("the original error, whose traceback the relay prints under its line, is not in this log: paste the lines "
                   "that follow the relay's line in the full output")
        elif traceback_at is not None:
            out = f"read the traceback that starts at line {traceback_at} of this log: its last frames say where {exception or 'the exception'} was raised"
        else:
            out = (f"this log holds no traceback for {exception or 'this exception'}: keep each rank's whole output (torchrun --tee 3 "
                   "--log-dir DIR, srun --output=%t.log) to see where it was raised")
        known = message_class(None, exception, message)
        if known is not None:
            out = f"{class_step(known, exception, message)}; {out}"
        elif API_SHAPE.search(f"{exception}: {message}"):
            out += API_SHAPE_STEP
        elif validated(message) is not None:
            out += VALIDATED_STEP
        elif CUDA.search(message):
            out += "; rerun with CUDA_LAUNCH_BLOCKING=1 so the failing kernel's own Python frame is reported"
        elif DISTRIBUTED.search(message):
            out += "; rerun with TORCH_DISTRIBUTED_DEBUG=DETAIL and NCCL_DEBUG=INFO (gloo: check GLOO_SOCKET_IFNAME and that the address is not a loopback one)"
        return out + native_check_step(message)
    text = f"{sign.what} {sign.message}"
    paths = " ".join(f.path for f in sign.frames[-3:])
    notebook = "Traceback" in sign.text or any(USER_PSEUDO.search(f.path) for f in sign.frames)
    if sign.kind == "exception" and sign.what.split(" ", 1)[0].endswith(("ProcessExitedException", "ProcessRaisedException")) and notebook:
        # an IPython traceback: mp.spawn was started from a notebook
        return ("mp.spawn re-imports the function it runs in each new process, which a notebook cannot provide: move the "
                "function into a .py module and import it, or run the training as a script (torchrun train.py)")
    if sign.kind == "exception":
        last, mine = sign.raised_in(), sign.user_frame()
        cut = sign.cut
        if last is None and is_java(sign):
            where = JAVA_STEP
        elif last is None and traceback_at is not None and traceback_at != sign.line:
            where = f"read the traceback that starts at line {traceback_at} of this log: its last frames say where it was raised"
        elif last is None:
            where = ("the log does not show where it was raised: keep each rank's whole output (torchrun --log-dir DIR --tee 3, "
                     "srun --output=%t.log) and read the traceback above the exception")
        elif cut:
            where = f"the last frame the log shows is {shown_frame(last)}"
        else:
            # whose code raised it, named (a library's, Python's own, a console script's); your code's is said below
            where = f"it was raised in {last.path}:{last.line}" + ("" if last.user() else f" ({whose(last)})")
        if sign.relaying is not None and sign.cause == "<next>":
            # a relay whose original the log does not hold: its frames only show where the original was handed over
            where = (f"the original error, whose traceback the relay prints under its line (line {sign.relaying.line} of this log), is not in "
                     f"this log: paste the lines that follow line {sign.relaying.line} in the full output; the frames above the relay "
                     f"only show where it was handed over")
        elif last is not None and mine is not None and mine is not last:
            called = f" (`{mine.code}`)" if cut and mine.code else ""
            # (what it passes, not a version: a version is said only where the log shows one, issue 35)
            where += f", called from your code at {mine.path}:{mine.line}{called}: check what that call passes"
        elif last is not None and last.user() and not cut:
            where += " (your code): the message says what it expected"
        elif last is not None and last.user():
            where += " (your code)"
        if cut:
            where += "; the exception line itself was cut from the paste: " + paste_step(last, sign, launcher)
        if cut and sign.relay is not None:  # the original error of a relay (knowledge/relays.py): where it is read whole
            where += (f"; this is the original error of {sign.relay.where}, which line {sign.relay.line} relays (the relay only "
                      f"says who handed it over): {sign.relay.step()}")
        extra = ""
        known = message_class(sign)
        if known is not None:
            where = f"{class_step(known, sign.what, sign.message)}; {where}"
        if cut and last is not None and AGENT_FRAME.search(last.path.replace("\\", "/")):
            extra = AGENT_STEP  # torchrun's own traceback: what its agent raises there is known
        elif CUDA.search(text) and not cut:
            extra = "; rerun with CUDA_LAUNCH_BLOCKING=1 so the failing kernel's own Python frame is reported"
        elif DISTRIBUTED.search(text + " " + paths):
            extra = "; rerun with TORCH_DISTRIBUTED_DEBUG=DETAIL (checks every collective's shapes and order) and NCCL_DEBUG=INFO"
        if cut and launcher:
            # the lines the paste lacks are a rank's own output: how the launcher the log shows keeps each rank's whole output
            extra += f"; the log shows {launcher}: {launcher_only.launcher_step(launcher)}"
        return where + extra + native_check_step(sign.message)
    if sign.kind == "c10" and CUDA.search(sign.what):
        return next_step_for("cudastatus")
    if sign.kind == "cppframes" and "NCCL watchdog" in sign.what:
        # a backtrace of the watchdog's, its message cut: what its frames say, and the lines that decide
        return (f"line {sign.line} is a C++ backtrace of torch's NCCL watchdog whose message (the lines before `frame #0`) is not in "
                "the log; " + (WATCHDOG_ERROR_STEP if sign.what == WATCHDOG_ERROR_FRAMES else "") + WATCHDOG_STEP)
    if sign.kind in CUT_HERE:
        shown = f"; the log shows {launcher}: {launcher_only.launcher_step(launcher)}" if launcher else ""
        return CUT_HERE[sign.kind].format(line=sign.line) + shown
    if sign.kind == "clierror" and sign.message.lower().startswith("failed to run"):
        said = LAUNCH_EXCEPTION.search(sign.message)
        if said is not None:  # ColossalAI's `colossalai run`: what it met starting the command on that host, in its words
            return launch_exception_step(said.group("exception").strip(), sign.line)
        return next_step_for(sign.kind)  # a launcher's own summary ("Error: failed to run torchrun ..."): the ranks' output is elsewhere
    if sign.kind in OWN_WORDS:
        out = OWN_WORDS[sign.kind].format(line=sign.line)
        logged = logged_class(sign.text) if sign.kind in LOGGED else None
        return f"{class_step(*logged)}; {out}" if logged is not None else out
    if sign.kind == "stopped":
        return ("the process was stopped by a signal, which launchers send to the other ranks after one failed: find the rank "
                "that failed first (its own output, or torchrun's Root Cause block) and read its error")
    if sign.kind in LAUNCHER_SUMMARY_KINDS and "(SIG" not in sign.what:
        # only torchrun's summary: what its exit status decides, and the command that shows the rank's own error
        code = EXIT_CODE.search(sign.what)
        return launcher_only.step(code.group(1) if code else None, "<N/A>" if sign.kind == "elasticnofile" else None, launcher)
    if sign.kind in ("signame", "glogsig", "shellsig", "shellkill", "fishkill", "glibc", "fatal", "caught", "nativeframes") or "(SIG" in sign.what:
        if "Killed" in sign.what or "SIGKILL" in sign.what:
            return "a SIGKILL is usually the host's OOM killer or the scheduler: check `dmesg -T | grep -i oom` and `sacct -j JOBID -o JobID,MaxRSS,State`"
        return ("a native crash: rerun with PYTHONFAULTHANDLER=1 (the Python stack of every thread at the crash) and "
                "TORCH_SHOW_CPP_STACKTRACES=1; `ulimit -c unlimited` and `gdb python core` give the native frame")
    if sign.kind == "exit" and "returned non-zero exit status" in sign.text:
        return CALLED_PROCESS_STEP.format(line=sign.line)
    return next_step_for(sign.kind)


def whose(frame: Frame) -> str:
    """Whose code a frame is, in words: your code, or the package it belongs to."""
    if frame.user():
        return "your code"
    if frame.cut:
        return "whose code the cut path does not show"
    pkg = package_of(frame.path)
    if pkg is None and frame.console_script():
        return "a package's console script"
    if pkg == "python":
        return "Python's own library"
    return f"{pkg}'s code" if pkg else "a library's code"


def shown_frame(frame: Frame) -> str:
    """The last frame a cut traceback shows: where it is in the log, the file, line and function, the code it was running, whose."""
    out = f"{frame.path}:{frame.line}" + (f" in {frame.func}" if frame.func else "")
    if frame.at:
        out += f" (line {frame.at} of this log)"
    if frame.code:
        out += f", running `{frame.code}`" + (" (the log ends inside that line)" if frame.code_cut else "")
    return out + ("" if frame.user() else f" ({whose(frame)})")


def paste_step(last: Optional[Frame], sign: Sign, launcher: str) -> str:
    """What to paste to decide a traceback cut before its exception line: the lines after its last frame, and how to keep them."""
    after = f"line {last.at} of this log" if last is not None and last.at else "its last frame"
    out = (f"the lines that follow {after} in the full output, down to the traceback's last line (the exception's class and "
           "message, `SomeError: ...`), decide what failed: paste them, or run gpudoctor diagnose on the whole output (where a "
           "terminal or a notebook cut it: rerun as `python train.py 2>&1 | tee run.log`)")
    if last is not None and last.code.endswith(".reraise()"):
        out += ("; that frame re-raises an exception caught in a DataParallel replica or a DataLoader worker: the lines after it "
                "name which (`Caught SomeError in replica 0 on device 0.` or `in DataLoader worker process 0.`) and hold its original "
                "traceback, whose last frame is where it was raised")
    if not launcher and sign.where.rank is not None:
        out += ("; it is one rank's traceback: keep each rank's whole output (torchrun --tee 3 --log-dir DIR, whose Root Cause block "
                "names each failed rank's error_file; srun --output=%t.log)")
    return out


# Signs that are only torchrun's summary of a rank that failed (knowledge/launcher_only.py); a bare "exit code 1"
# ("exit") may be any program's, told by next_step_for.
LAUNCHER_SUMMARY_KINDS = ("childfailed", "elastic", "elasticnofile", "exitcode")
EXIT_CODE = re.compile(r"^exit code (-?\d+)")
# Signs that are the failing process's own output, cut by the paste: what the log holds, and what is missing.
CUT_HERE = {
    "richcut": ("line {line} is inside a rich traceback box (❱ marks the line each frame was running), cut before the frames' "
                "paths and the exception's line: an exception was raised; the box's last frame and the line under the box, in "
                "the full output, say where and what"),
    "tbheader": ("line {line} is a traceback's header and the log ends (or goes on with other output) before its frames and its "
                 "exception: an exception was raised there; the lines that followed it in the full output name it"),
    "frames": ("line {line} holds a traceback pasted as one line (its frames run together): its last `File ...` is where the "
               "exception was raised; the exception's own line is not in it: paste the traceback's last line from the full output "
               "(the exception's class and message, `SomeError: ...`), which decides what failed"),
    "cppframes": ("line {line} is torch's C++ backtrace of an exception whose message (the lines before `frame #0`) is not in the "
                  "log; rerun with TORCH_SHOW_CPP_STACKTRACES=1 and NCCL_DEBUG=INFO if it came from a collective"),
    "chained": ("line {line} says an exception was raised while another was handled, but neither traceback is in the log: "
                "the lines around it in the full output name both"),
}
# Lines where a program, a tool or a cluster manager says in its own words what it could not do:
# what to read next, by who wrote the line (evidence.py's rules).
TOOL_STEP = ("line {line} is the tool's own error, and the words after it say what it could not do (a package, a version, a "
             "path, a toolkit): fix that and run the step again; the search below finds others who hit it")
CLUSTER_STEP = ("the scheduler or cluster manager says the job failed: its own record of the job says why (sacct -j JOBID -o "
                "JobID,State,ExitCode,MaxRSS; kubectl describe pod POD and kubectl logs POD --previous; sky jobs logs --controller; "
                "ray job logs JOB), and each rank's output shows the first error")
OWN_WORDS = {
    "pyexec": ("the interpreter at line {line} could not run the module or the script it was given: check the path, and that the "
               "package is installed for that interpreter (`python -m pip show PACKAGE` with the same python)"),
    "clierror": ("line {line} is a program's own error line: the words after 'Error:' say what it could not do (a path, a host, a "
                 "value, memory): fix that and run it again; the search below finds others who hit it"),
    "pip": TOOL_STEP, "apt": TOOL_STEP, "build": TOOL_STEP, "cli": TOOL_STEP, "container": TOOL_STEP,
    "nativeassert": ("line {line} is a native (C/C++) library's assert: the condition after it was false and the process aborted; "
                     "the condition names what it checked (a size, a count, a shape, a setting): read it against your configuration and "
                     "input (the file and line it names are in that library's source), and search the library's issues for the condition"),
    "fatallevel": ("line {line} is the program's own last word: its logger says it cannot go on, and the lines it logged just "
                   "before say why"),
    "errorending": "line {line} is the program saying it stops after an error: the lines it logged just before say why",
    "errorraised": ("line {line} is the program's own error: the call it names raised, and its message says what to change (a "
                    "setting, a supported choice, a version); the search below finds others who hit it"),
    "invalid": ("line {line} is the program refusing a value it was given: the value it quotes is the one to correct (its "
                "documentation or the message's next lines give the form it expects)"),
    "reported": ("line {line} is the program's own report of the exception it caught: its class and message say what failed; the "
                 "traceback it did not print is where it was raised (rerun without the program's try/except, or with its debug logging)"),
    "k8sevent": CLUSTER_STEP, "podstatus": CLUSTER_STEP, "k8sreason": CLUSTER_STEP, "jobstate": CLUSTER_STEP, "slurm": CLUSTER_STEP,
    "lua": ("line {line} is the Lua interpreter's error that stopped the script: the file and line before the message say where, "
            "the message what failed (a field or method that is nil: the installed package lacks what the code calls, an older or "
            "newer version than the code was written for, or a variable never set; the next lines, when the message goes on); the "
            "stack traceback under it names the calls that led there; search the project's issues for the message"),
    "luarethrown": ("line {line} is the Lua interpreter's error that stopped the script, raised again by a Torch7 container: the "
                    "module's own error is on the lines right after it (\"In N module of nn.Sequential:\", then the module's file, line "
                    "and message), and that message says what failed; the stack traceback under it names the calls that led there"),
    "panic": ("a Go or Rust program panicked at line {line}: the panic's message and the stack printed after it (goroutines, "
              "or RUST_BACKTRACE=1) say where; search the program's issues for the message"),
    "nvrm": ("the NVIDIA kernel driver logged an error at line {line}: `dmesg -T | grep -i -E 'NVRM|Xid'` around that time, the "
             "driver version against the GPU (open or proprietary kernel modules) and `nvidia-smi` say whether the GPU is usable"),
    "winlaunch": ("line {line} is Windows failing to start a command: `where COMMAND` shows which one runs; a launcher .exe (torchrun, "
                  "accelerate) made for a Python that was moved or removed: reinstall the package in the active environment (python -m pip "
                  "install --force-reinstall PACKAGE), or start it through the interpreter instead (python -m torch.distributed.run ...)"),
    "c10error": ("line {line} is torch's NCCL process group logging an error: the words after its file name say what (a collective "
                 "its watchdog timed out, an NCCL error, a communicator it aborted); where the paste cut them, the same rank's full "
                 "output holds them. Rerun with NCCL_DEBUG=INFO and TORCH_NCCL_TRACE_BUFFER_SIZE=2000 (the flight recorder's dump "
                 "of the last collectives of every rank shows which rank did not reach the one that failed)"),
    "notsetup": ("line {line} is the program's own message: it names what was not set up and the call that sets it up; make that "
                 "call (or the launcher that makes it) before the code that needs it runs"),
    "status": ("line {line} is a test harness's or a script's status for a step it ran (a launcher's SUCCEEDED elsewhere in the "
               "log is only its own workers' status): that step's own output (its log file, the command the script ran, or the "
               "failing test's section) says why; run the step alone to read it whole"),
    "pytest": ("a test run failed: each failing test's own section (its `E   ` lines) says why; rerun one alone with "
               "`pytest -x -q TEST` to read it whole"),
    # DeepSpeed's launcher (launch.py's sigkill_handler) kills every rank once one exited with an error or it got a signal
    "dslaunch": ("line {line} is DeepSpeed's launcher stopping every rank after one exited with an error (its [ERROR] "
                 "sigkill_handler line names that rank's command and 'exits with return code = N'): the rank's own error is in "
                 "its output before that line, which this log does not hold. A rank that printed no error was killed from "
                 "outside: return code -9 is a SIGKILL, the host's OOM killer when every rank loads the model into CPU memory at "
                 "once (`dmesg -T | grep -i -E 'killed process|out of memory'` and `free -g` decide it; fewer ranks per node, "
                 "low_cpu_mem_usage=True, ZeRO-3's deepspeed.zero.Init), -11 a segmentation fault in a native extension "
                 "(PYTHONFAULTHANDLER=1 prints where)"),
    # a Go or Rust command-line tool's own error line as it exits (evidence.py's "toolerror")
    "toolerror": ("line {line} is the tool's own error line, written as it stopped: its words after 'error:' name what it could not "
                  "do or refused (a value, a file, a device, a connection): correct that and run the same command again; the "
                  "search below finds others who hit it"),
    # systemd's words for a service the job needs that is missing or did not start (evidence.py's "systemd")
    "systemd": ("line {line} is systemd's: a service the job needs is not installed under that name, or did not start: "
                "`systemctl status UNIT` and `journalctl -u UNIT -b --no-pager | tail -50` show why it stopped; `systemctl "
                "list-unit-files | grep -i NAME` finds the name it is installed under (an install that never wrote the unit "
                "stopped before that step: its own output says why)"),
    # the line a reporter's sentence introduces as the error it met (knowledge/reported.py "introduced")
    "introduced": ("line {line} is the message the reporter's sentence before it says the run printed: its words say what "
                   "failed (a value, a name, a file or a host it could not use): check that against the command and the "
                   "configuration, and search the program's issues for the message"),
    # bash's own words for a command, a file or a variable it could not use (evidence.py's "notfound")
    "notfound": ("line {line} is the shell stopping the job's script on its own error, and it names what: a command not found "
                 "(`command -v NAME` on that node; the environment that has it not activated in the script, or a line whose "
                 "trailing backslash was lost so its next line ran as a command of its own), a file not found or not executable "
                 "(`ls -l PATH`), or under `set -u` a variable never set (conda's activation reads PS1: `set +u` before "
                 "`conda activate`, `set -u` after)"),
    # Hydra's run_and_report: the job's function raised, and Hydra prints that exception on the lines after this one
    "hydra": ("line {line} is Hydra's report that the job's function raised (the overrides it lists are the command line's): "
              "Hydra prints that exception on the lines right after it, with its traceback when HYDRA_FULL_ERROR=1 is set; they "
              "are the failure; where this log holds none of them, rerun with HYDRA_FULL_ERROR=1 and keep the whole output "
              "(`HYDRA_FULL_ERROR=1 python train.py ... 2>&1 | tee run.log`), then gpudoctor diagnose run.log"),
}
# Signs whose message is worth a signature and an issue search (not an exit code or a signal).
SEARCHABLE = {"exception", "fatal", "terminate", "what", "c10", "c10watchdog", "assertion", "nativeassert", "devassert", "cuda", "cudastatus", "ncclwarn", "ncclerror", "gloo",
              "pyexec", "pip", "apt", "build", "cli", "container", "panic", "lua", "glibc", "nvrm", "errorraised", "reported", "invalid", "notsetup",
              "toolerror", "systemd", "introduced"}


# Python's CalledProcessError ("Command '[...]' returned non-zero exit status N."): a program the script ran failed
CALLED_PROCESS_STEP = ("line {line} is Python's CalledProcessError: a command the script started (subprocess with check=True: "
                       "`accelerate launch` from a GUI's training button, a launcher script, a build step) exited with that "
                       "status; the command's own error is in its output before this line in the full output: run the command "
                       "the line quotes by hand, in the same environment, to read it whole")
# `colossalai run`'s report of a host it could not run the command on: "failed to run CMD on HOST, is localhost: B, exception: X"
LAUNCH_EXCEPTION = re.compile(r"\bon \S+, is localhost: \w+, exception: (?P<exception>.+)$")


def launch_exception_step(exception: str, line: int) -> str:
    """What the exception `colossalai run` met on a host says: the command's own failure, ssh's, or the OS refusing to start it."""
    out = f"line {line} is the launcher (colossalai run) saying it could not run the command on that host, and why: '{exception}'"
    if "bad command exit code" in exception:
        return out + ("; that is the command itself (torchrun and its ranks) exiting with an error on that host: the ranks' own "
                      "errors are in their output before this line, or on that host when it is another node")
    if "Argument list too long" in exception:
        return out + ("; the OS refused to start the command: with the environment the launcher forwards to it, it is longer than "
                      "the system allows (E2BIG): a very long variable (PATH, LD_LIBRARY_PATH, or one holding a file's content): "
                      "`env | wc -c` and `env | awk '{ print length, substr($0, 1, 40) }' | sort -n | tail`; unset or shorten it")
    if "authentication" in exception or "private key" in exception:
        return out + ("; ssh could not log in to that host: `ssh HOST true` must work without a password from this node (the key "
                      "in ~/.ssh, in a format the launcher's ssh library reads: `ssh-keygen -t rsa -m PEM` for an old one)")
    return out + "; the rank's output on that host (its own error) says more: run the command there by hand to read it"


def what_it_says(sign: Optional[Sign], exception: str = "", message: str = "", line: int = 0) -> dict:
    """What the failure's own message gives to go on: the remedy it states (quoted, with its
    line), whose code raised it, its signature and a search of the owning project's issues."""
    out: dict = {}
    anywhere = False  # no project known: search every project's issues
    if sign is not None:
        remedy, what, said = sign.remedy, sign.what, sign.message
        if remedy is None and sign.kind in OWN_WORDS and sign.text:
            # a tool's, a scheduler's or a logger's own line is read for advice as an exception's message is
            remedy = remedy_in([(sign.line, sign.text)])
        project = sign.project()
        raised_by = sign.raised_by()
        if raised_by:
            out["raised_by"] = raised_by
        searchable = sign.kind in SEARCHABLE and not sign.cut
        # raised in a library whose tracker is not known, or where no frame shows: any project's issues
        anywhere = raised_by not in ("your code", "python")
        if sign.kind != "exception":
            what = ""  # the line itself is the signature
        elif said == sign.text or said == what:
            said = ""
        last = sign.raised_in()
        if sign.kind == "exception" and sign.cut and last is not None and raised_by not in ("", "your code", "python"):
            # the message is cut: the threads that quote the same traceback end in the same frame
            out["search"] = frame_search_url(project, last.path, last.func)
            out["project"] = project or "GitHub"
            out["searched_by"] = "frame"
    else:
        remedy = remedy_in([(line, f"{exception}: {message}")]) if line else None
        what, said = exception, message.rstrip()
        if said.endswith(('",', '"')) and said.count('"') % 2:  # quoted in an error file: "message": "ValueError: ...",
            said = said.rstrip(',').removesuffix('"')
        project = PROJECTS.get(exception.split(".", 1)[0], "") if "." in exception else ""
        searchable = anywhere = bool(exception)
    out["family"] = family_of(sign, exception, message)
    known = message_class(sign, exception, message)
    if known is not None:
        out["class"] = known.id
    if remedy is not None:
        out["remedy"] = remedy.text
        out["remedy_line"] = remedy.line
    if searchable and (what or said):
        out["signature"] = signature(what, said)
        if project or anywhere:
            out["project"] = project or "GitHub"
            out["search"] = search_url(project, what, said)
    return out


def with_what_it_says(fix: str, said: dict) -> str:
    """The next step, led by the message's own remedy and followed by the issue search."""
    if "remedy" in said:
        fix = remedy_step(Remedy(said["remedy"], said["remedy_line"])) + fix
    if "search" not in said:
        return fix
    where = "the issues of every project on GitHub" if said["project"] == "GitHub" else f"{said['project']}'s issues"
    if said.get("searched_by") == "frame":
        return fix + f"; tracebacks that end in the same frame, in {where}: {said['search']}"
    return fix + f"; this error in {where}: {said['search']}"
    return fix


def next_step_for(kind: str) -> str:
    if kind == "c10watchdog":
        return WATCHDOG_STEP
    if kind in ("terminate", "terminate_bare", "what", "c10"):
        return "a C++ exception ended the process: rerun with TORCH_SHOW_CPP_STACKTRACES=1 for its C++ stack, and NCCL_DEBUG=INFO if it came from a collective"
    if kind in ("assertion", "devassert", "cuda", "cudastatus"):
        return ("rerun with CUDA_LAUNCH_BLOCKING=1 so the error is raised at the kernel that failed (an assertion on an index or a label "
                "usually means a value out of range, e.g. a class id >= num_classes); TORCH_USE_CUDA_DSA=1 on builds that support it")
    if kind in ("ncclwarn", "ncclerror"):
        return "rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET: NCCL then prints the interface, transport and peer it failed on"
    if kind == "gloo":
        return "check GLOO_SOCKET_IFNAME names an interface every node can reach, and rerun with TORCH_DISTRIBUTED_DEBUG=DETAIL"
    if kind == "barrier":
        return ("the barrier counts ranks as they arrive: check that every node started, that WORLD_SIZE (nnodes x nproc_per_node) "
                "is the number of ranks that really run, and that all use the same MASTER_ADDR:MASTER_PORT")
    return ("this log only shows that a process exited with an error: the failing rank's own output is not here; diagnose every "
            "rank's log (torchrun --tee 3 --log-dir DIR, srun --output=%t.log) or the run folder")
