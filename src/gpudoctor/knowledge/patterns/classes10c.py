"""Rules for the tenth round's GPU-tool output and launcher-only reports (issue 35, diagC10): classes of
lines that users paste alone, and that decide more than "a rank failed" or "a GPU tool's snapshot".

- a Windows process that died of a native exception: Windows has no signals, and a crashed process exits with
  the NTSTATUS code of the exception (0xC0000005 access violation, printed 3221225477 or -1073741819; a stack
  overflow, a fail-fast abort, an illegal instruction, a heap corruption, a DLL not found): the Windows form
  of -11/-6/-4 (patterns/launcher.py);
- `nvidia-smi` not found: the program is missing from the PATH, which does not by itself say that the
  driver is not loaded.

Their examples are real lines from the sampled threads; their counter-examples the nearest lines that
mean something else.
"""

import re

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, pattern
from gpudoctor.knowledge.patterns.classes24a import GIVEN_A_GPU

E = Severity.ERROR

# NTSTATUS codes a crashed Windows process exits with, as Python prints them (unsigned), as a signed 32-bit int
# (PyCharm, cmd's %ERRORLEVEL%) and in hex: what each one is.
NTSTATUS = {
    0xC0000005: "an access violation (0xC0000005): native code read or wrote memory it does not own, Windows' segmentation fault",
    0xC00000FD: "a stack overflow (0xC00000FD): a recursion too deep, or a native library's thread stack too small",
    0xC0000409: "a fail-fast exit (0xC0000409, STATUS_STACK_BUFFER_OVERRUN): the C runtime's abort() or a failed check in native code ended the process",
    0xC000001D: "an illegal instruction (0xC000001D): a native library built for a newer CPU (AVX-512, AVX2) than this one",
    0xC0000374: "a heap corruption (0xC0000374): native code wrote past memory it allocated, or two copies of a runtime library freed each other's memory",
    0xC0000135: "a DLL that was not found (0xC0000135) when the process started: a native library's dependency (a CUDA, cuDNN or MSVC runtime DLL) is not on the PATH",
    0xC0000139: "an entry point not found in a DLL (0xC0000139): a native library was loaded next to another version of a DLL it was built against",
}
CODES = "|".join(
    alt
    for code in NTSTATUS
    for alt in (str(code), str(code - (1 << 32)), f"0x{code:08X}", f"0x{code:08x}")
)


# What the program printed right after the shell could not find nvidia-smi: its own logger's record at INFO level, with its
# time stamp ("[12/18 22:30:01][INFO] mydata.py:  73: Constructing mydata train...", a Windows run of a SlowFast-based
# script that asks nvidia-smi for the GPUs as it starts, facebookresearch/SlowFast#149, heldout27b): the script went on
# to its work, so the missing tool was one step of it, not what stopped it (knowledge/story.py `progress_past`). cmd.exe
# writes its message over two lines ("operable program or batch file."), and the record is the next line after those.
NVIDIA_SMI_THEN = 3
RECORD_AFTER = re.compile(r"(?=.*\d\d:\d\d:\d\d)(?=.*(?<![\w-])INFO(?![\w-])).{0,300}\S")


def nvidia_smi_fields(m: re.Match, context: list[str]) -> dict:
    """The pattern's groups, and `then`: the program's own record at INFO level right after the message (RECORD_AFTER)."""
    for i, text in enumerate(context):
        if not text.strip() or text.strip().startswith("operable program or batch file"):
            continue
        record = RECORD_AFTER.match(text)
        return {"then": f"{i + 1}: {record.group(0)}"} if record is not None else {}
    return {}


def ntstatus_fields(m: re.Match, _context: list[str]) -> dict:
    """The code as the line prints it, and what it is."""
    raw = m.group("ntstatus")
    value = int(raw, 16) if raw.lower().startswith("0x") else int(raw) % (1 << 32)
    return {"exit_status": raw, "ntstatus": f"0x{value:08X}", "meaning": NTSTATUS.get(value, "")}


PATTERNS = [
    pattern(
        "windows-crash-status",
        "launcher",
        CAUSE,
        E,
        "a process on Windows crashed in native code (its exit status is a Windows exception code)",
        # subprocess's CalledProcessError and a launcher's summary (Python prints the unsigned value), an IDE's
        # "Process finished with exit code -1073741819 (0xC0000005)", a shell's "exit status"/"exit code"
        # (a paste wrapped at its width may leave "status 3221225477." alone on its line)
        r"(?:(?:\bexit |^)(?:status|code)|returncode=?|return code =?)\s*:?\s*(?P<ntstatus>" + CODES + r")\b",
        ("status 3221", "exit code 3221", "exit code -10737", "exit status -10737", "xit code -10737", "0xC0000", "0xc0000", "return code = 3221", "returncode=3221"),
        why="""Windows has no signals: a process that dies of an exception in native code (a CUDA, xformers, bitsandbytes or
        compiled extension's library, the interpreter itself) exits with the exception's NTSTATUS code, which Python and
        launchers print as a large number. It leaves no Python traceback: the crash happened below Python, where
        faulthandler, not the traceback, sees it. An access violation (0xC0000005) is the usual one: a native library
        built for another torch or CUDA, a GPU driver fault, or memory exhausted where an allocation is not checked
        (the paging file too small for a model loaded in full).""",
        fix="""run the failing command itself with `python -X faulthandler ...` (the Python stack at the crash names the
        library); check that the native libraries match the installed torch and CUDA (`pip show torch xformers bitsandbytes`:
        builds for this torch's version and CUDA), update the GPU driver, give Windows a larger paging file, and on a
        0xC0000135 put the missing DLL's folder (the CUDA toolkit's bin) on the PATH""".replace("\n        ", " "),
        examples=[
            ("'--max_data_loader_n_workers=0', '--bucket_reso_steps=64', '--xformers', '--bucket_no_upscale']' returned non-zero exit status 3221225477.",
             "kohya-ss/sd-scripts#567 (https://github.com/kohya-ss/sd-scripts/issues/567: the training subprocess, started by the GUI, crashed)"),
            ("Process finished with exit code -1073741819 (0xC0000005)", "PyCharm's report of a crashed process (public notes on CUDA_ERROR_LAUNCH_FAILED with a driver that did not match CUDA)"),
        ],
        not_examples=[
            "subprocess.CalledProcessError: Command '['python', 'train.py']' returned non-zero exit status 1.",
            "Process finished with exit code 0",
            "exitcode  : -11 (pid: 5555)",
            "Processed 3221225477 tokens in 412 s",
        ],
        fields=ntstatus_fields,
    ),
    pattern(
        "nvidia-smi-not-found",
        "platform",
        CAUSE,
        E,
        "nvidia-smi is not on the PATH (which alone does not say the driver is missing)",
        r"^(?:(?:/bin/(?:ba|z|da)?sh|bash|sh|zsh)(?:: line \d+)?: (?:\d+: )?)?nvidia-smi:? (?:command )?not found\b"
        r"|^(?:zsh|fish): (?:command not found|Unknown command):? '?nvidia-smi'?"
        r"|^'nvidia-smi' is not recognized as an internal or external command"
        r"|^nvidia-smi : The term 'nvidia-smi' is not recognized",
        ("nvidia-smi: command not found", "nvidia-smi: not found", "nvidia-smi not found", "command not found: nvidia-smi", "'nvidia-smi' is not recognized", "The term 'nvidia-smi'", "Unknown command: nvidia-smi"),
        why="""The shell did not find the nvidia-smi program. It ships with the driver's utilities (on Ubuntu the
        nvidia-utils-VERSION package, on Windows in System32 with the driver), so it is missing where a driver was
        installed without them, in a container started without the NVIDIA runtime's utility capability, on a cluster
        node where a module must be loaded first, or where the PATH does not hold it. The kernel driver may be loaded
        all the same: `lsmod` and /proc/driver/nvidia/version say whether it is.""",
        fix="""cat /proc/driver/nvidia/version; lsmod | grep nvidia   # the driver itself: loaded or not; if it is loaded,
        install the utilities of the same version (Ubuntu: sudo apt install nvidia-utils-$(modinfo -F version nvidia | cut -d. -f1)),
        or in a container: docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility ...; if it is not loaded,
        install the driver and reboot; """.replace("\n        ", " ") + GIVEN_A_GPU,
        examples=[
            ("nvidia-smi not found, NVIDIA GPU Driver not installed correctly.",
             "NVIDIA/data-science-stack#90 (https://github.com/NVIDIA/data-science-stack/issues/90: lsmod shows the driver loaded)"),
            ("bash: nvidia-smi: command not found", "a shell without the driver's utilities (public setup notes)"),
            ("'nvidia-smi' is not recognized as an internal or external command,", "cmd.exe without the driver's folder on the PATH (public setup notes)"),
        ],
        context_after=NVIDIA_SMI_THEN,
        fields=nvidia_smi_fields,
        not_examples=[
            "bash: torchrun: command not found",  # the launcher, not the driver's tool (launcher-not-found)
            "nvidia-smi found 8 GPUs",
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.",
        ],
    ),
]
