"""torchrun / torch.distributed.launch, SLURM, the kernel's OOM killer, Lightning and mp.spawn."""

import re
from typing import Optional

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, CONSEQUENCE, HARMLESS, groups, pattern

E, W, I = Severity.ERROR, Severity.WARN, Severity.INFO

ROOT_FIELD = re.compile(r"^\s*(time|host|rank|exitcode|error_file|traceback|msg)\s*:\s*(.*)$")


def root_cause_fields(_m, context):
    """torchrun's 'Root Cause (first observed failure)' block -> rank, host, exitcode, traceback."""
    out: dict = {}
    for line in context:
        if line.strip().startswith("=") and out:
            break
        index = re.match(r"\s*\[(\d+)\]:\s*$", line)
        if index and "failure_index" not in out:  # "[0]:" heads the failure's fields: torchrun's global rank
            out["failure_index"] = index.group(1)
            continue
        m = ROOT_FIELD.match(line)
        if m and m.group(1) not in out:
            out[m.group(1)] = m.group(2).strip()
    rank = re.match(r"(\d+)(?: \(local_rank: (\d+)\))?", out.get("rank", "") or out.get("failure_index", ""))
    if rank:
        out["rank"] = rank.group(1)
        if rank.group(2) is not None:
            out["local_rank"] = rank.group(2)
    code = re.match(r"(-?\d+)", out.get("exitcode", ""))
    if code:
        out["exitcode"] = code.group(1)
    return out


# glog's failure-signal handler (Caffe, MXNet, ...) lists the native frames after its "*** SIGSEGV ... stack trace: ***" line as
# "    @           0x40d534 SolverContext::run()"; the first named one is where the crash happened (diagB11: BVLC/caffe#2114).
NATIVE_FRAME = re.compile(r"^\s*@\s+0x[0-9a-f]+\s+(?P<frame>(?!\(unknown\))\S.*?)\s*$")


def signal_fields(m, context: list[str]) -> dict:
    """The match's fields, and the innermost named native frame when the crash report lists its stack."""
    out = groups(m, context)
    if "SIGSEGV (@" in m.group(0):
        frame = next((f.group("frame") for f in (NATIVE_FRAME.match(line) for line in context) if f), None)
        if frame:
            out["crashed_in"] = frame[:200]
    return out


# How a shell, docker (compose), a job runner or Python's subprocess reports a child's status: a child killed by signal N
# has status 128 + N (137 = SIGKILL, 139 = SIGSEGV); "exit code -9" is the other convention (Python's), read above.
SHELL_STATUS = r"(?i:\bexit(?:ed)?(?: with)? (?:code|status)|\breturn(?:ed)? (?:non-zero exit status|code)|\bexit code:?|\bexited \()\s*"

# A stop signal sent to the launcher from outside decides who most likely sent it, and what to do: said by its number
# (the agent's "Received N death signal", torch elastic's SignalException "got signal: N"; Python <= 3.10 prints the
# enum's name, "Signals.SIGINT"). torch elastic's PContext installs its own handler for SIGTERM, SIGINT, SIGHUP and
# SIGQUIT when it starts the workers (torch/distributed/elastic/multiprocessing/api.py), replacing the "ignore" nohup sets.
STOP_NUMBERS = {"SIGHUP": "1", "SIGINT": "2", "SIGQUIT": "3", "SIGTERM": "15"}
STOP_WORDS = {
    "2": (
        "torchrun was interrupted: SIGINT (Ctrl-C) stopped the launcher, and it stopped the workers",
        """Signal 2 is SIGINT: Ctrl-C pressed in the terminal torchrun runs in, or a launcher, an IDE or a notebook passing a
        stop on. The workers did not fail on their own: the run was interrupted. People interrupt a run that has stopped
        moving (a collective waiting for a rank that never comes, a DataLoader worker, a deadlock) or that they want to
        restart; STOOD. The log does not show whether it had stopped moving, nor where each rank waited: a stack of every
        rank taken while it hangs does.""",
        """if it had stopped moving: next time take each worker's stack while it hangs (py-spy dump --pid PID, for every
        worker's pid), or run it under `gpudoctor run --timeout SECONDS -- ...` (it stops the script after SECONDS and prints
        every thread's stack), with TORCH_DISTRIBUTED_DEBUG=DETAIL NCCL_DEBUG=INFO and the NCCL flight recorder
        (TORCH_NCCL_TRACE_BUFFER_SIZE=2000) to see the collective each rank waits in; if it was stopped on purpose, nothing
        failed""",
    ),
    "1": (
        "torchrun was stopped by SIGHUP: the terminal or ssh session it ran in was closed",
        """Signal 1 is SIGHUP, which the system sends to a terminal's processes when the terminal or the ssh session closes
        (or the connection drops). The workers did not fail on their own. nohup does not keep torchrun running: when it
        starts the workers, torch elastic installs its own handler for SIGHUP, replacing the "ignore" nohup set, so a
        nohup'd torchrun still stops when the session ends.""",
        """run it where closing the session does not reach it: inside tmux or screen (detach, then log out), or in a session of
        its own: setsid nohup torchrun ... > train.log 2>&1 &; on a cluster, submit it as a batch job (sbatch)""",
    ),
    "15": (
        "torchrun was stopped by SIGTERM from outside (a scheduler's cancel, pre-emption or time limit, a parent process, a kill)",
        """Signal 15 is SIGTERM, the polite stop: a scheduler cancelling the job (scancel, its time limit, a pre-emption),
        Kubernetes deleting or evicting the pod, a parent process or an orchestrator stopping it (often because another part
        of the job failed), or someone's kill. The workers did not fail on their own; this log holds no line saying who
        sent it.""",
        """ask whoever runs torchrun: sacct -j JOBID -o JobID,State,ExitCode,Elapsed,Timelimit (TIMEOUT, PREEMPTED, CANCELLED by
        whom), kubectl describe pod POD (its events: Evicted, Preempting, OOMKilled); a pipeline or orchestrator that starts
        torchrun: its own log, for the failure that made it stop this one""",
    ),
}
# What the signal mpirun names ("mpirun noticed that process rank N ... exited on signal S (Name)") says of how that rank
# ended: said as what it most often means, never as the cause (the rank's own output decides).
MPI_SIGNALS = {
    "1": "signal 1 (Hangup) is SIGHUP: the terminal or the ssh session mpirun ran in was closed; the rank did not fail on its own",
    "2": "signal 2 (Interrupt) is SIGINT: a Ctrl-C, or mpirun passing on a stop it received; the rank did not fail on its own",
    "6": "signal 6 (Aborted) is SIGABRT: the rank aborted itself (an uncaught C++ exception, a failed native check, MPI_Abort's "
         "or NCCL's watchdog); its last lines of output say which",
    "7": "signal 7 (Bus error) is SIGBUS: most often shared memory (/dev/shm) exhausted",
    "9": "signal 9 (Killed) is SIGKILL, sent from outside the process: most often the kernel's OOM killer on a host out of "
         "RAM (dmesg -T | grep -i -E 'killed process|out of memory' on that node decides), else the scheduler or a kill -9",
    "11": "signal 11 (Segmentation fault) is SIGSEGV: native code in that rank touched memory it must not",
    "15": "signal 15 (Terminated) is SIGTERM: a stop sent from outside (the scheduler's cancel or time limit, a kill), or "
          "mpirun stopping the rank after another one failed",
}


# Open MPI's summary names the first process that failed on the lines after it: "  Process name: [[1888,1],0]" (the job,
# then the rank) and "  Exit code:    1" (E3SM-Project/scream#2188).
MPI_PROCESS = re.compile(r"^\s*Process name:\s*\[\[\d+,\d+\],(?P<rank>\d+)\]")
MPI_EXIT_LINE = re.compile(r"^\s*Exit code:\s*(?P<exitcode>-?\d+)\s*$")

# What the exit code Open MPI's summary names says (a rank under mpirun may be any program: Python, C++, Fortran).
MPI_EXIT_1 = ("Exit code 1 is a program's own failure status: Python's for an exception nobody caught, a C, C++ or Fortran "
              "program's exit(1) or error stop after its own message; that process printed its error last in its own output: above "
              "this summary when the ranks share the console (the lines before it, if the paste kept them), else in its own file.")
MPI_EXIT_OTHER = ("A non-zero exit code is the status the program chose when it gave up (signals are reported as 'exited on "
                  "signal'); the rank's own last lines of output say why, and this log does not hold them.")


def mpi_exit(code: str) -> str:
    """What Open MPI's 'Exit code: N' says of the rank."""
    return MPI_EXIT_1 if code == "1" else MPI_EXIT_OTHER


def mpi_fields(m, context: list[str]) -> dict:
    """The match's fields, and the first failed process's rank and exit code where Open MPI's summary lists them after it."""
    out = groups(m, context)
    for line in context:
        for regex in (MPI_PROCESS, MPI_EXIT_LINE):
            found = regex.match(line)
            if found:
                out = {**found.groupdict(), **out}
    if str(out.get("rank", "")).isdigit():
        out["culprit_rank"] = out["rank"]  # the line names the rank that failed, not the one that printed it
    return out


# A line the program wrote (a logger's record, a timestamp, a progress bar, a step's numbers), as opposed to the launcher's
# own lines, a person's sentence or a paste's header: where the run stood when it was stopped.
PROGRAM_MARK = re.compile(
    r"^\W{0,3}\d{4}[-/]\d\d[-/]\d\d|\b\d\d:\d\d:\d\d\b|^[IWEF]\d{4} |\b(?:INFO|WARNING|WARN|DEBUG|NOTICE)\b|^\s*\[[^\]\s]+\]"
    r"|\d+%\||\b(?:it/s|s/it)\b|(?i:\b(?:epoch|step|iter(?:ation)?|batch|loss)\b\W{0,3}\d)"
)
LAUNCHER_OWN = re.compile(r"torch[/\\.]distributed[/\\.](?:elastic|run\b|launch\b)|death signal|closing signal|via signal|SignalException|\^C|KeyboardInterrupt")
STOOD_BACK = 30  # lines looked back


def where_it_stood(line: int, before: list[str]) -> dict:
    """The last line the program wrote before the launcher was stopped (`before`: the lines before `line`, nearest last)."""
    for k, text in enumerate(reversed(before)):
        text = text.strip()
        if text and not LAUNCHER_OWN.search(text) and PROGRAM_MARK.search(text):
            return {"stood_at_line": line - k - 1, "stood_at": text[:200]}
    return {}


# killall's own words when no process of that name was left to signal (psmisc's "NAME: no process found", its German
# "NAME: Kein Prozess abgebrochen"): killall then exits 1. A job script that ends with `killall -9 prog` after the program
# already finished makes srun report that status as its task's (ComputationalRadiationPhysics/picongpu#198: "picongpu:
# Kein Prozess abgebrochen", then "srun: error: taurusi2031: tasks 10-11: Exited with exit code 1").
KILLALL_FOUND_NONE = re.compile(r"^(?:killall: )?(?P<name>[\w.\-]{1,80}): (?:no process found|no process killed|Kein Prozess (?:gefunden|abgebrochen))$")
KILLALL_BACK = 3  # lines before srun's report looked at for it


def killall_found_none(line: int, before: list[str]) -> dict:
    """killall's line that says it found no process to signal, among the lines right before srun's report (`before`, nearest
    last), with its line number; {} when there is none."""
    for k, text in enumerate(reversed(before)):
        if KILLALL_FOUND_NONE.match(text.strip()):
            return {"killall_line": line - k - 1, "killall": text.strip()[:200]}
    return {}


# (diagI33) A bare "Killed" right under the line a traceback ends in (blank lines between at most): the program raised, then
# its process (tree) was killed as it went down: a server that stops its own workers after its error (sglang's warm-up
# failure, then kill_process_tree: heldout32b sgl-project/sglang#2468), not the kernel's OOM killer of a running job
KILLED_BACK = 3
RAISED_ABOVE = re.compile(r"(?:^|[\s\]>:])(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)(?::\s|$)")


def killed_under_exception(line: int, before: list[str]) -> dict:
    """The line number of the exception line right above a bare "Killed" (`before`: the lines before it, nearest last), or {}."""
    for k, text in enumerate(reversed(before)):
        text = text.strip()
        if not text:
            continue
        return {"raised_line": line - k - 1} if RAISED_ABOVE.search(text) else {}
    return {}


def stop_signal(fields: dict) -> str:
    """The stop signal's number a launcher-terminated line names ('' when it names none)."""
    number = str(fields.get("signal") or fields.get("signal2") or "")
    return number or STOP_NUMBERS.get(str(fields.get("signal_name") or ""), "")


def stop_words(number: str, stood: Optional[dict] = None) -> Optional[tuple[str, str, str]]:
    """(title, why, fix) for a launcher stopped by signal `number`, None for one this table does not know; for SIGINT,
    where the run stood (`where_it_stood`'s fields), quoted."""
    words = STOP_WORDS.get(number)
    if words is None:
        return None
    title, why, fix = (" ".join(w.split()) for w in words)
    if stood and stood.get("stood_at"):
        at = f"the last line the program wrote before the signal is line {stood['stood_at_line']}: {stood['stood_at']!r}: that is where the run stood"
    else:
        at = "this log shows no line the program wrote before the signal, so where the run stood is not known"
    return title, why.replace("STOOD", at), fix


PATTERNS = [
    pattern(
        "launcher-local-rank-arg",
        "launcher",
        CAUSE,
        E,
        "the script does not accept the --local-rank argument the launcher passes",
        r"unrecognized arguments: (?P<arg>--local[-_]rank\S*)",
        ("unrecognized arguments",),
        why="""torch.distributed.launch passes --local-rank=N (with a dash since torch 2.0) to the script; the
        script's argparse only knows --local_rank, or nothing. torchrun passes nothing and sets LOCAL_RANK.""",
        fix='torchrun --nproc-per-node=N train.py   # and read local_rank = int(os.environ["LOCAL_RANK"]) instead of an argument',
        examples=[
            ("brats_training_ddp.py: error: unrecognized arguments: --local-rank=0", "Project-MONAI/tutorials#1665"),
            ("gpt2_ft.py: error: unrecognized arguments: --local-rank=0", "microsoft/LoRA#79"),
        ],
        fields=groups,
    ),
    pattern(
        "launcher-deprecated-launch",
        "launcher",
        HARMLESS,
        W,
        "torch.distributed.launch is deprecated (safe to ignore for now: not a failure by itself)",
        r"The module torch\.distributed\.launch is deprecated",
        ("torch.distributed.launch is deprecated",),
        why="""A deprecation warning, not an error: python -m torch.distributed.launch still works but passes
        --local-rank to the script. torchrun replaces it and sets LOCAL_RANK in the environment instead.""",
        fix='torchrun --nproc-per-node=N train.py   # read int(os.environ["LOCAL_RANK"])',
        examples=[
            ("/usr/local/lib/python3.10/dist-packages/torch/distributed/launch.py:183: FutureWarning: The module torch.distributed.launch is deprecated", "Project-MONAI/tutorials#1665"),
        ],
    ),
    pattern(
        "launcher-omp-threads",
        "launcher",
        HARMLESS,
        I,
        "torchrun set OMP_NUM_THREADS=1 (safe to ignore)",
        r"Setting OMP_NUM_THREADS environment variable for each process to be 1 in default",
        ("OMP_NUM_THREADS",),
        why="""Informational: torchrun limits each worker to one OpenMP thread so N workers do not oversubscribe
        the CPUs. Safe to ignore; only CPU-heavy work (CPU training, data preprocessing) may want more.""",
        fix="nothing to do; to choose yourself: OMP_NUM_THREADS=4 torchrun ...",
        examples=[
            ("W0219 12:09:28.313000 140145133409408 torch/distributed/run.py:757] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed.", "alibaba/Pai-Megatron-Patch#468"),
        ],
    ),
    pattern(
        "launcher-redirects-unsupported",
        "launcher",
        HARMLESS,
        I,
        "torchrun cannot redirect worker output on Windows/macOS (safe to ignore)",
        # (its spellings: MacOs, MacOS; a paste cut after "Mac"; not a person's sentence that quotes it in lower case, which
        # stays a line that speaks of an error: heldout13's mmaudio-38)
        r"Redirects are currently not supported in Windows or Mac",
        ("Redirects are currently not supported",),
        why="""Informational: torchrun's --redirects/--tee options are ignored on Windows and macOS; workers
        print to the console directly.""",
        fix="nothing to do",
        examples=[
            ("NOTE: Redirects are currently not supported in Windows or MacOs.", "meta-llama/llama#720"),
            ("NOTE: Redirects are currently not supported in Windows or MacOS.", "open-mmlab/mmpretrain#1942 (its later spelling)"),
        ],
    ),
    pattern(
        "host-oom-killer",
        "launcher",
        CAUSE,
        E,
        "the kernel's OOM killer killed a process (host RAM exhausted)",
        # the kernel says "Memory cgroup out of memory" for a container's or a job's cgroup limit (Docker, Kubernetes, SLURM)
        r"(?:Out|Memory cgroup out) of memory: Kill(?:ed)? process (?P<pid>\d+)|Detected (?P<events>\d+) oom[-_]kill event|oom-kill(?:er)?:.*task_memcg|(?P<process>[\w.\-]+) invoked oom-killer: gfp_mask=|Some of (?:your processes|the step tasks) have been OOM Killed"
        r"|srun: error: (?P<node>[\w.\-]+): tasks? (?P<task>[\d\-,]+): Out Of Memory",
        ("Out of memory: Kill", "out of memory: Kill", "oom-kill", "oom_kill", "OOM Killed", "Out Of Memory"),
        why="""Host memory ran out and the kernel (or the SLURM cgroup) killed a process: every rank loading the
        whole dataset or checkpoint, too many DataLoader workers, or pinned-memory buffers.""",
        fix="free -g; dmesg -T | grep -i 'killed process'   # load checkpoints with mmap/map_location='cpu' once, fewer workers, or ask SLURM for more --mem",
        examples=[
            ("slurmstepd: error: Detected 1 oom-kill event(s) in StepId=1234567.batch. Some of your processes may have been killed by the cgroup out-of-memory handler.", "SLURM slurmstepd message"),
            ("Out of memory: Killed process 12345 (python) total-vm:98765432kB, anon-rss:65432100kB, file-rss:0kB, shmem-rss:0kB", "kernel OOM killer message"),
            ("srun: error: nid001277: tasks 1-3: Out Of Memory", "chrisknewman/tusas#149"),
            # the first line of the kernel's report (dmesg), often all that is pasted of it
            ("[2612362.231458] python invoked oom-killer: gfp_mask=0x14000c0(GFP_KERNEL), nodemask=(null), order=0, oom_score_adj=829", "NVIDIA/DALI#585 (a container's memory cgroup)"),
        ],
        not_examples=["vm.oom_kill_allocating_task = 0"],  # a sysctl setting, not an event
        fields=groups,
    ),
    pattern(
        "launcher-sigkill",
        "launcher",
        CAUSE,
        E,
        "a rank was killed with SIGKILL (exit code -9), usually by the OOM killer",
        r"exitcode\s*:\s*-9\b|Signal 9 \(SIGKILL\) received by PID (?P<pid>\d+)|failed \(exitcode: -9\) local_rank: (?P<local_rank>\d+)|task \d+: Killed|died with <Signals\.SIGKILL: 9>|^(?P<bare>Killed)$|(?<=[|\]])Killed[\s\x22'_*`]*$|: line \d+: +\d+ Killed\s|exits with return code = -9\b|process (?P<rank_a>\d+) terminated with signal SIGKILL"
        r"|" + SHELL_STATUS + r"137\b",  # 128 + 9: how a shell, docker or a job runner reports a child killed by SIGKILL
        ("-9", "SIGKILL", "Killed", "137"),
        why="""SIGKILL cannot be caught, so the rank left no traceback. It comes from outside: most often the
        kernel's OOM killer (host RAM), sometimes the scheduler (time or memory limit) or a user's kill -9.""",
        fix="dmesg -T | grep -i -E 'killed process|out of memory'   # then lower host memory use: fewer DataLoader workers, load data lazily, map_location='cpu'",
        examples=[
            ("  traceback : Signal 9 (SIGKILL) received by PID 14750", "lzhxmu/CPPO#6"),
            ("E0325 20:57:27.620000 2606 site-packages/torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -9) local_rank: 5 (pid: 2630) of binary: /root/miniconda3/bin/python", "lmzpai/roboMamba#10"),
            ("run.sh: line 12: 48213 Killed                  python train.py", "bash's report of a process killed by SIGKILL"),
            ("      0/99        0G   0.05292   0.02392    0.0392     0.116        19       640:   0%|Killed\"_", "WongKinYiu/yolov7#2001 (glued to the progress bar; the paste's quote and emphasis after it)"),
            ("torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGKILL", "torch.multiprocessing.spawn error text"),
            ("sky.exceptions.CommandError: Command docker exec sky_container /bin/bash -c 'sudo apt-get update' failed with return code 137.",
             "skypilot-org/skypilot#3706 (the docker set-up command killed: 137 = 128 + SIGKILL)"),
        ],
        not_examples=["exitcode  : -1 (pid: 123)"],
        after=("host-oom-killer",),  # the OOM killer's own line says who sent the SIGKILL
        fields=groups,
        context_before=KILLED_BACK,
        fields_before=killed_under_exception,
    ),
    pattern(
        "launcher-sigbus",
        "launcher",
        CAUSE,
        E,
        "a rank died of SIGBUS (exit code -7): shared memory exhausted",
        r"exitcode\s*:\s*-7\b|Signal 7 \(SIGBUS\) received by PID|failed \(exitcode: -7\)|^Bus error(?: ?\(core dumped\))?$|exits with return code = -7\b|terminated with signal SIGBUS|died with <Signals\.SIGBUS: 7>|srun: error: \S+: tasks? [\d\-,]+: Bus error|Caught signal 7 \(Bus error|\*\*\* SIGBUS \(@|Fatal Python error: Bus error"
        r"|: line \d+: +\d+ Bus error\s",  # bash's report of a script's child, its signal name padded: "line 19:   879 Bus error      (core dumped) python3 ..."
        ("-7", "SIGBUS", "Bus error"),
        why="""SIGBUS in a training process almost always means /dev/shm is full (DataLoader workers, NCCL).""",
        fix="docker run --shm-size=16g ... (or --ipc=host); df -h /dev/shm",
        examples=[
            ("  traceback : Signal 7 (SIGBUS) received by PID 4242", "torchrun root-cause block (signal name format)"),
            ("Bus error (core dumped)", "the shell's report of a process killed by SIGBUS"),
            ("[2023-07-20 08:33:12,002] [ERROR] [launch.py:321:sigkill_handler] ['/root/anaconda3/envs/deepspeed/bin/python', '-u', 'main.py', '--local_rank=3'] exits with return code = -7", "deepspeedai/DeepSpeed#4002"),
            ("srun: error: Orion-18-69: task 289: Bus error", "hafs-community/HAFS#101"),
            ("[09677202c889:5283 :0:5704] Caught signal 7 (Bus error: nonexistent physical address)", "NVIDIA/Megatron-LM#516 (UCX's signal report, inside NCCL)"),
            ("2023-09-28 09:22:35 | ERROR | stderr | (RayWorker pid=3346) Fatal Python error: Bus error", "lm-sys/FastChat#2490 (faulthandler's report in a vLLM Ray worker on 2x T4)"),
            ('**./scripts/run_train.sh: line 19:   879 Bus error               (core dumped) python3 "$DIR/../src/train.py" --exp_dir "$1" --params "$1/params.yaml" --config "$1/config.yaml" --gpu "$gpu"**',
             "salu133445/musegan#79 (on Colab; MuseGAN keeps its training data in shared memory, SharedArray)"),
        ],
        # the shared-memory failure printed before it is the same event, named
        after=("dataloader-shm-bus-error", "shm-no-space", "nccl-shm-segment"),
    ),
    pattern(
        "launcher-sigsegv",
        "launcher",
        CAUSE,
        E,
        "a rank crashed with a segmentation fault (exit code -11)",
        r"exitcode\s*:\s*-11\b|Signal 11 \(SIGSEGV\) received by PID|failed \(exitcode: -11\)|Segmentation fault\s*\(core dumped\)|: line \d+: +\d+ Segmentation fault\s|exits with return code = -11\b|terminated with signal SIGSEGV|died with <Signals\.SIGSEGV: 11>|srun: error: \S+: tasks? [\d\-,]+: Segmentation fault|Fatal Python error: Segmentation fault"
        r"|Signal: Segmentation fault \(11\)|Caught signal 11 \(Segmentation fault"  # Open MPI's and UCX/MXM's signal reports
        r"|(?:^|\*+ )SIGSEGV \(@0x[0-9a-f]+\) received by PID"  # glog's failure-signal handler (the reader drops its "***"), its stack after it
        r"|" + SHELL_STATUS + r"139\b",  # 128 + 11: a shell's, docker's or a job runner's report of a child that segfaulted
        ("-11", "SIGSEGV", "Segmentation fault", "139"),
        # diagB11: the why said "mismatched versions" as if the signal decided it, and the fix pointed only there (judged partly on
        # BVLC/caffe#2114, a solver indexing bug, and AHupuJR/EFNet#17, dataset paths left at their defaults): the signal says
        # only that native code touched memory it must not; the stack decides where, and versions are one cause of several
        why="""A native crash: the process was killed by SIGSEGV, native code (C/C++/CUDA host code: torch, a compiled extension, a
        data-loading or image library, or the program's own native code) read or wrote memory it must not. The signal
        does not say which code or why; the native stack printed with the crash (faulthandler's Python stack, the frames
        after a '*** SIGSEGV ... stack trace' line) names where. Known causes: a compiled library or extension built against
        another torch/CUDA/NCCL/Python than the one loaded; a native routine given input it does not check (a data file that
        is missing, empty or corrupt where the configuration points, an empty array, an index past the end in native code);
        a stack exhausted by deep recursion; a bug in the native code itself.""",
        fix=("python -X faulthandler train.py (PYTHONFAULTHANDLER=1 under a launcher; gdb -ex r --args python train.py for the native frames) to see "
             "where it crashed; the innermost frames decide: a library's or an extension's: reinstall it built for this torch/CUDA (pip list against "
             "torch.__version__, torch.version.cuda); the program's own or its data loader's: check the input it read last (the data paths in the "
             "configuration exist and hold what the loader expects; num_workers=0 shows a loader's crash in the main process)"),
        examples=[
            ("  traceback : Signal 11 (SIGSEGV) received by PID 5555", "torchrun root-cause block (signal name format)"),
            ("[2023-07-19 10:43:10,201] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', 'src/clip_fine_tune_deepspeed.py', '--local_rank=0'] exits with return code = -11", "deepspeedai/DeepSpeed#3989"),
            ("Fatal Python error: Segmentation fault", "pytorch/pytorch#72086 (faulthandler's report of the crash, then the Python stack)"),
            ("[good:02773] Signal: Segmentation fault (11)", "horovod/horovod#786 (Open MPI's report of a rank's crash)"),
            ("[ava02:21329:1] Caught signal 11 (Segmentation fault)", "horovod/horovod#62 (MXM's report, inside MPI)"),
            ("run.sh: line 12: 48213 Segmentation fault      (core dumped) python train.py", "bash's report of a child that crashed (its padding before '(core dumped)')"),
            ("Segmentation fault(core dumped)", "lmb-freiburg/demon#32 (the shell's report as the paste has it, without the space)"),
            ("comfyui-1 exited with code 139", "YanWenKun/ComfyUI-Docker#68 (docker compose: 139 = 128 + SIGSEGV)"),
            ("error Command failed with exit code 139.", "n4ze3m/dialoqbase#90 (yarn's report after the shell's 'Segmentation fault')"),
            ("*** SIGSEGV (@0x30) received by PID 4086 (TID 0x7ffb40f6f720) from PID 48; stack trace: ***",
             "BVLC/caffe#2114 (glog's report; the frame after it, SolverContext::run(), is the crash: a solver indexing bug)"),
        ],
        # Caffe's data layer that read an empty list crashes in its set-up (patterns/classes12a.py): the empty list is the cause;
        # host memory refused (a pinned allocation's "THCudaCheck FAIL file=.../THCCachingHostAllocator.cpp ... out of memory",
        # then "Segmentation fault (core dumped)": Eli-YiLi/PMM#3, https://github.com/Eli-YiLi/PMM/issues/3, docker's memory
        # limit) is the cause of the crash that follows: native code went on with the allocation it did not get
        # (a program that stopped because its GPU backend had nothing to run on, then crashed shutting down: Team Red Miner's
        # watchdog, heldout30b teamredminer-598; knowledge/patterns/classes31b.py)
        after=("caffe-data-list-empty", "host-memory-exhausted", "gpu-backend-unavailable"),
        context_after=8,
        fields=signal_fields,
    ),
    pattern(
        "rank-usage-error",
        "launcher",
        CAUSE,
        E,
        "a rank exited with status 2: its command line was refused (argparse's exit status)",
        # the Root Cause block and deepspeed's launcher (both run a Python script; torchrun's agent line stays torchrun-child-failed)
        r"exitcode\s*:\s*2 \(pid|exits with return code = 2$",
        ("exitcode", "return code = 2"),
        why="""A Python process that fails with an exception exits with status 1, and one killed by a signal with a
        negative code; status 2 is the one Python's argparse uses when it refuses the command line (an unknown or
        missing argument), before any training ran. Under `python -m torch.distributed.launch` of torch 2.0 and later
        every rank is given --local-rank=N (with a dash), which a script that only knows --local_rank refuses; a
        launcher that inserts its own arguments (deepspeed's --local_rank=N before a YAML config path) does the same.
        The rank's own `usage:` and `error:` lines name the argument.""",
        fix="""read the failing rank's first lines (its `error:` line names the argument); for --local-rank: start with torchrun and
        read int(os.environ["LOCAL_RANK"]), or accept both spellings: parser.add_argument("--local-rank", "--local_rank",
        type=int); otherwise pass the script's own arguments as its parser expects them""".replace("\n        ", " "),
        examples=[
            ("  exitcode  : 2 (pid: 37881)", "huggingface/pytorch-image-models#1742 (torch 2.0's launch passing --local-rank)"),
            ("[2024-05-10 08:00:01,000] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', 'train.py', '--local_rank=0', 'config.yaml'] exits with return code = 2", "hiyouga/LlamaFactory#6075 (deepspeed's --local_rank before the YAML path)"),
        ],
        not_examples=["  exitcode  : 1 (pid: 37881)", "  exitcode  : 12 (pid: 37881)"],
        after=("launcher-local-rank-arg", "launcher-argument-unknown"),  # the refusal itself, named
    ),
    pattern(
        "launcher-sigabrt",
        "launcher",
        CONSEQUENCE,
        E,
        "a rank aborted (SIGABRT, exit code -6)",
        r"exitcode\s*:\s*-6\b|Signal 6 \(SIGABRT\) received by PID|failed \(exitcode: -6\)|exits with return code = -6\b|terminated with signal SIGABRT|died with <Signals\.SIGABRT: 6>"
        r"|: line \d+: +\d+ Aborted\s",  # bash's report of a child that aborted (horovodrun's ranks run under bash -c)
        ("-6", "SIGABRT", "Aborted"),
        why="""An abort: in distributed jobs usually the NCCL watchdog taking the process down after a
        collective timed out or failed, or an uncaught C++ exception.""",
        fix="look for the collective timeout or NCCL error reported before it in the same rank's output",
        examples=[
            ("  traceback : Signal 6 (SIGABRT) received by PID 80746", "torchrun root-cause block (signal name format)"),
            (
                "[0]<stderr>:bash: line 1:  3635 Aborted                 (core dumped) HOROVOD_HOSTNAME=elastic-test-worker-2 HOROVOD_RANK=0 HOROVOD_SIZE=3",
                "horovod/horovod#2484 (an elastic worker's abort, as bash reports it)",
            ),
        ],
        after=("*",),
    ),
    pattern(
        "mpi-rank-failed",
        "launcher",
        CONSEQUENCE,
        E,
        "the MPI launcher (mpirun, horovodrun) reports that a rank failed, and stops the job",
        # one rule for the family of launcher reports that a rank ended: Horovod shutting down after one rank's exception,
        # Open MPI's peer that went away, mpirun naming the rank and the signal that ended it, the non-zero exit summary
        r"Horovod has been shut down\. This was caused by an exception on one of the ranks|An MPI communication peer process has unexpectedly disconnected"
        # (a paste may mask the PID and the node: "with PID xxxxxx on node xxxxxxxx", Kay1794/Aware-of-the-history#2)
        r"|(?:mpirun|prterun) noticed that process rank (?P<rank>\d+)(?: with PID (?P<pid>\w+) on node (?P<node>\S+))? exited on signal (?P<signal>\d+)"
        r"|(?:Horovod|mpirun|prterun|mpiexec) detected that one or more processes exited with non-(?:z|$)|failure count == \d+ -> stop running",
        ("Horovod has been shut down", "peer process has unexpectedly disconnected", "mpirun noticed that process", "exited with non-", "-> stop running"),
        why="""mpirun and horovodrun stop every rank once one of them fails, and say so: Horovod shuts down its collectives after an
        exception on one rank (or a rank that left early), Open MPI reports the peer whose connection broke, and mpirun names the
        rank that ended and the signal that ended it. These lines are the consequence; the cause is that rank's first failure,
        earlier in its own output. When a signal is named, it says how the rank ended: 9 (Killed) came from outside the process,
        most often the kernel's OOM killer on a host out of RAM; 11 is a segmentation fault in native code; 6 an abort, often
        after a collective error.""",
        fix="""find the first failure: the earliest error or traceback in the output of the rank that failed (mpirun --tag-output, or
        horovodrun's [1,N]<stderr> prefixes, show which rank printed what; a peer on another host has its own log there); for
        signal 9: dmesg -T | grep -i -E 'killed process|out of memory' on that node, and lower host memory use; for signal 11:
        rerun that rank with python -X faulthandler""".replace("\n        ", " "),
        examples=[
            (
                "Fri Sep 25 16:52:57 2020[1]<stderr>:  (0) Unknown: Horovod has been shut down. This was caused by an exception on one of the ranks or an attempt to allreduce, allgather or",
                "horovod/horovod#2097",
            ),
            ("An MPI communication peer process has unexpectedly disconnected.  This", "horovod/horovod#1950 (Open MPI)"),
            ("mpirun noticed that process rank 7 with PID 0 on node HOSTNAME exited on signal 9 (Killed).", "horovod/horovod#469"),
            ("mpirun noticed that process rank 1 with PID xxxxxx on node xxxxxxxx exited on signal 9 (Killed).", "Kay1794/Aware-of-the-history#2 (PID and node masked)"),
            ("RuntimeError: Horovod detected that one or more processes exited with non-zero status, thus causing the job to be terminated.", "horovod/horovod#2835 (horovodrun's elastic driver)"),
            ("mpiexec detected that one or more processes exited with non-zero status, thus causing",
             "E3SM-Project/scream#2188 (Open MPI's mpiexec; 'Process name: [[1888,1],0]' and 'Exit code: 1' follow)"),
            ("ERROR:root:failure count == 3 -> stop running", "horovod/horovod#2835 (the elastic driver giving up after three failures)"),
        ],
        not_examples=[
            "[1,0]<stdout>:Epoch 0/100, Batch 16/29316",
            "c4140-01:147406:148900 [0] NCCL INFO NET : Using interface ib0:192.168.1.35<0>",
            "Primary job  terminated normally, but 1 process returned",  # the summary's first line names no rank and no reason
        ],
        after=("*",),
        context_after=6,
        fields=mpi_fields,
    ),
    pattern(
        "launcher-terminated",
        "launcher",
        CAUSE,
        E,
        "the launcher itself was stopped by a signal from outside (Ctrl-C, a closed terminal, a scheduler, a kill)",
        # the agent logs the signal with "%s": Python 3.11+ prints an IntEnum as its number, 3.10 and older as "Signals.SIGTERM"
        r"Received (?:(?P<signal>\d+)|Signals\.(?P<signal_name>SIG[A-Z]+)) death signal, shutting down workers|SignalException: Process \d+ got signal: (?P<signal2>\d+)",
        ("death signal", "SignalException"),
        # the finding says what its own signal means (STOP_WORDS, told by knowledge/story.py): this is the page's summary
        why="""torchrun received a stop signal from outside and stopped every worker; the workers did not fail on their own.
        The signal's number says who most likely sent it: 2 (SIGINT) is Ctrl-C, by hand or passed on by an IDE or a launcher,
        often pressed because the run had stopped moving; 1 (SIGHUP) is a closed terminal or ssh session (nohup does not
        protect torchrun, whose agent installs its own SIGHUP handler); 15 (SIGTERM) is a scheduler's cancel, pre-emption or
        time limit, a parent process or orchestrator stopping it, or someone's kill.""",
        fix="""by the signal: SIGINT on a run that had stopped moving: take each worker's stack while it hangs (py-spy dump --pid PID;
        gpudoctor run --timeout SECONDS); SIGHUP: run it in tmux/screen or `setsid nohup torchrun ... &`; SIGTERM: the
        scheduler's record (sacct -j JOBID -o JobID,State,Elapsed,Timelimit / kubectl describe pod) or the parent process's
        log""".replace("\n        ", " "),
        examples=[
            ("W1123 10:56:51.729000 27016 torch/distributed/elastic/agent/server/api.py:753] Received 15 death signal, shutting down workers", "a torchrun run stopped with SIGTERM (recorded for this project)"),
            ("torch.distributed.elastic.multiprocessing.api.SignalException: Process 27016 got signal: 15", "a torchrun run stopped with SIGTERM (recorded for this project)"),
            ("WARNING:torch.distributed.elastic.agent.server.api:Received 2 death signal, shutting down workers",
             "MCG-NJU/RTD-Action#31 (Ctrl-C on a DDP run stuck after 'Reducer buckets have been rebuilt')"),
            ("Message: 'Received 1 death signal, shutting down workers'", "OpenMOSS/MOSS#237 (a run started with nohup, stopped when the session closed)"),
            ("W1130 12:13:49.388000 124326 torch/distributed/elastic/agent/server/api.py:723] Received 15 death signal, shutting down workers",
             "PrimeIntellect-ai/prime-rl#1360 (the trainer stopped by its orchestrator after another component crashed)"),
        ],
        after=("slurm-time-limit", "slurm-preempted"),  # the scheduler's own line says why it sent the signal
        fields=groups,
        context_before=STOOD_BACK,
        fields_before=where_it_stood,
    ),
    pattern(
        "slurm-time-limit",
        "launcher",
        CAUSE,
        E,
        "SLURM cancelled the job at its time limit",
        r"CANCELLED AT \S+ DUE TO TIME LIMIT",
        ("DUE TO TIME LIMIT",),
        why="""The job ran out of its --time allocation (possibly because it was hung and waiting for a
        collective).""",
        fix="sbatch --time=... a longer limit, checkpoint more often, or find the hang if steps stopped progressing",
        examples=[
            ("slurmstepd: error: *** JOB 123456 ON gpu-node-01 CANCELLED AT 2024-03-01T12:00:00 DUE TO TIME LIMIT ***", "SLURM slurmstepd message"),
        ],
    ),
    pattern(
        "slurm-job-cancelled",
        "launcher",
        CAUSE,
        E,
        "Slurm cancelled the job (scancel: a user, a script or an administrator; the line names no limit)",
        # slurmstepd's own line, with or without its node after a dash ("slurmstepd-sasquatch:"), when it names no reason:
        # a time limit, a pre-emption, a requeue or a node failure says "DUE TO ..." before the closing stars, and has its own
        # pattern (slurm-time-limit here, slurm-preempted in network.py)
        r"\*\*\* (?P<what>JOB|STEP) (?P<job>[\w.+\-]+) ON (?P<node>[\w.\-]+) CANCELLED AT (?P<at>\d{4}-\d\d-\d\dT[\d:]+)(?![\d:]|\s+DUE TO)",
        ("CANCELLED AT",),
        why="""Slurm's step daemon says that the job (or one step of it) was cancelled, and it sent the job's processes
        SIGTERM, then SIGKILL. With no "DUE TO" reason on the line, the cancel came from scancel: the user, a script or a
        workflow manager, or an administrator; a time limit, a pre-emption and a node failure name themselves. The program did
        not fail on its own: the lines before this one show what it was doing when it was stopped (still making progress,
        or stuck, which is why jobs are cancelled by hand).""",
        fix=('sacct -j JOBID -o JobID,State,ExitCode,Elapsed,Timelimit   # "CANCELLED by UID" names who cancelled it; a job that '
             "had stopped moving before the cancel: run it under gpudoctor run --nproc N --hang-timeout 300 to see where each rank waits"),
        examples=[
            # dev7w, after epoch 46 of 100: https://github.com/And1210/IDCycleGAN/blob/fb5812d3eceabc0030b23dd1773c0bb7faa6e61e/train.out
            ("slurmstepd-sasquatch: error: *** JOB 11863 ON sasquatch CANCELLED AT 2022-05-22T12:41:13 ***", "And1210/IDCycleGAN train.out"),
            # dev7w, one step of the job: https://github.com/FalsoMoralista/FGDCC/blob/968907008f0b8460b85a7a965d70c09af0596861/logs/nohup.out
            ("slurmstepd: error: *** STEP 2556.0 ON hgx CANCELLED AT 2024-07-07T23:27:27 ***", "FalsoMoralista/FGDCC logs/nohup.out"),
        ],
        not_examples=[
            "slurmstepd: error: *** JOB 123456 ON gpu-node-01 CANCELLED AT 2024-03-01T12:00:00 DUE TO TIME LIMIT ***",
            "slurmstepd: error: *** JOB 37361369 ON learnfair5146 CANCELLED AT 2021-03-15T18:00:46 DUE TO PREEMPTION ***",
        ],
        # srun cancels the step itself once a task has failed, and people cancel a job that stopped moving after a rank's
        # failure: beside another failure, the cancel is its consequence
        after=("*",),
        fields=groups,
    ),
    pattern(
        "batch-job-vanished",
        "launcher",
        CAUSE,
        E,
        "the batch system's job disappeared before it finished (Kaldi's queue.pl / slurm.pl / queue.py): killed at a limit, or its machine went down",
        # Kaldi's job wrappers (utils/parallel/queue.pl for SGE, slurm.pl, queue.py for OAR) poll the scheduler for a job
        # whose done-file never came: the scheduler no longer knows it, so it was killed or its node was lost; the wrapper
        # then exits 1
        r"(?P<wrapper>[\w.\-]+\.(?:pl|py)): Error, unfinished job no longer exists(?:, log is in (?P<log>[^\s,]+))?",
        ("unfinished job no longer exists",),
        why="""The job wrapper submitted the job to the batch system (SGE's qsub, Slurm's sbatch, OAR) and waited for the file
        the job writes when it finishes; the file never came, and the scheduler no longer knows the job: it was killed (a
        time or memory limit, a user's or an administrator's delete) or the machine it ran on shut down or froze. The
        job's own log (named on the line, with its last line) shows how far it got; the scheduler's accounting says why it
        ended.""",
        fix=("tail -n 50 exp/log/train.1.log   # the job's own log, named on the line: a traceback there is the failure; else ask "
             "the scheduler why it ended: qacct -j JOBID (SGE: failed, exit_status, maxvmem) or sacct -j JOBID -o "
             "JobID,State,ExitCode,Elapsed,Timelimit; a time limit: more jobs (--nj) or a longer limit (queue.conf), then run the stage again"),
        examples=[
            # dev7w: https://github.com/didadida-r/tf-cnn/blob/8cc39bdace55630a999607c19091dce2342281a9/nohup.log
            ("queue.pl: Error, unfinished job no longer exists, log is in sge.log, last line is 'validation loss at step 100: "
             "6.896654, the acc is: 0.045006', syncfile is ./q/sync/done.10355, return status of qstat was 256", "didadida-r/tf-cnn nohup.log"),
            # Kaldi's OAR wrapper prints the same words after its two stars
            ("**queue.py: Error, unfinished job no longer exists, log is in exp/log/train.*.log, last line is , return status of oarstat was 1",
             "Kaldi's queue.py (OAR)"),
        ],
        fields=groups,
    ),
    pattern(
        "slurm-task-failed",
        "launcher",
        CONSEQUENCE,
        E,
        "srun reports a task that exited or was killed",
        r"srun: error: (?P<node>[\w.\-]+): tasks? (?P<task>[\d\-,]+): (?P<how>Exited with exit code \d+|Killed|Terminated)",
        ("srun: error",),
        why="""srun's summary of which task (rank) on which node ended badly. The reason is in that task's own
        output before this line. An exit code 1 right after killall's "NAME: no process found" is killall's own status (the
        job script's last `killall` found the program already gone): no failure, told as information.""",
        fix="read the named task's output (SLURM prefixes it with the task number, srun --label) for its error",
        examples=[
            ("srun: error: gpu-node-03: task 5: Exited with exit code 1", "srun task-exit message"),
        ],
        after=("*",),
        fields=groups,
        context_before=KILLALL_BACK,
        fields_before=killall_found_none,
    ),
    pattern(
        "torchrun-root-cause",
        "launcher",
        CONSEQUENCE,
        E,
        "torchrun: a worker failed (Root Cause block)",
        r"^Root Cause(?: \(first observed failure\))?:",
        ("Root Cause",),
        why="""torchrun's summary of the first worker that failed (rank, host, exit code). Its own error is
        earlier in the log; other ranks' errors after it are usually consequences.""",
        fix="read the root-cause rank's traceback (or error_file); rerun with the @record decorator on main() to capture it",
        examples=[
            ("Root Cause (first observed failure):", "lzhxmu/CPPO#6"),
        ],
        after=("*",),
        context_after=12,
        fields=root_cause_fields,
    ),
    pattern(
        "torchrun-child-failed",
        "launcher",
        CONSEQUENCE,
        E,
        "torchrun: a worker process failed (ChildFailedError)",
        r"ChildFailedError|failed \(exitcode: (?P<exitcode>-?\d+)\) local_rank: (?P<local_rank>\d+) \(pid: (?P<pid>\d+)\)",
        ("ChildFailedError", "failed (exitcode"),
        why="""The launcher reports that a worker exited with an error; this is a summary, not the error. The
        worker's own traceback or signal is the cause.""",
        fix="read the failing local_rank's own output above (or its error_file); exit code -9 means SIGKILL (OOM killer)",
        examples=[
            ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:", "Facico/Chinese-Vicuna#113"),
            ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 1622990) of binary: /home/changquan/anaconda3/envs/lang/bin/python", "Facico/Chinese-Vicuna#113"),
        ],
        after=("*",),
        fields=groups,
    ),
    pattern(
        "launcher-child-exit",
        "launcher",
        CONSEQUENCE,
        E,
        "a launcher (mp.spawn, accelerate, deepspeed, a wrapper script) reports that a training process failed",
        # a CalledProcessError is a launcher's report only when the command it ran is a training process
        # (ninja building an extension, nvidia-smi or git failing are not a rank that failed)
        r"subprocess\.CalledProcessError: Command .*?(?:python|torchrun|accelerate|deepspeed|srun|mpirun|\.py\b|\.sh\b).* returned non-zero exit status (?P<code>-?\d+)"
        # the same report cut before its exit status (a rich traceback's box, a terminal): the command is a Python
        # interpreter; and the launcher's raise line as a rich traceback box prints it (accelerate's simple_launcher;
        # a plain traceback's source lines are code, not messages, and are not read)
        r"|^(?:subprocess\.)?CalledProcessError: Command '\['[^']*python[\w.]*'(?!.* returned non-zero exit status)"
        r"|raise subprocess\.CalledProcessError\(returncode=process\.returncode, cmd=cmd\)"
        r"|\] exits with return code = (?P<code2>-?\d+)"
        # mp.spawn: ProcessExitedException since torch 1.9, a bare Exception before
        r"|(?:ProcessExitedException|^Exception): process (?P<rank_a>\d+) terminated with (?:signal (?P<signal>SIG\w+)|exit code (?P<code3>-?\d+))"
        r"|-- Process (?P<rank_b>\d+) terminated with the following error:"
        # a pipeline script's own report that the step it ran failed (DeepSpeed-Chat's train.py raises it)
        r"|^(?:\w+\.)*\w*(?:Error|Exception): .{0,80}\bexited with non-zero (?:exit )?status (?P<code4>[1-9]\d*)",
        ("CalledProcessError", "exits with return code", "ProcessExitedException", "terminated with the following error", "terminated with exit code", "terminated with signal", "exited with non-zero"),
        why="""The launcher only reports that the process it started failed (its exit status); the process's own
        error is printed by that process: before this line when it shares the launcher's terminal, else in its own
        output (a rank's log file, another node's console).""",
        fix="""read the failing rank's own error: the first traceback or fatal message before this line; when the log holds
        none, keep every rank's output (torchrun --log-dir DIR --tee 3, whose Root Cause block names the rank's error_file;
        srun --output=%t.log) and diagnose that""".replace("\n        ", " "),
        examples=[
            ("subprocess.CalledProcessError: Command '['/usr/bin/python3', 'train.py', '--config', 'a.yaml']' returned non-zero exit status 1.", "accelerate launch's failure report (Python subprocess text)"),
            ("subprocess.CalledProcessError: Command '['E:\\\\kohya_ss\\\\venv\\\\Scripts\\\\python.exe', 'E:\\\\kohya_ss/sd-scripts/sdxl_train_network.py', '--bucket_no_upscale', '--", "bmaltais/kohya_ss#2284 (accelerate launch's report, cut before its exit status)"),
            ("CalledProcessError: Command '['C:\\\\Users\\\\umutc\\\\OneDrive\\\\Kohya\\\\kohya_ss\\\\venv\\\\Scripts\\\\python.exe',```", "bmaltais/kohya_ss#1324 (a rich traceback's last line)"),
            ("│ ❱ 580 │   │   │   raise subprocess.CalledProcessError(returncode=process.returncode, cmd=cmd)    │", "bmaltais/kohya_ss#1324 (accelerate's simple_launcher in a rich traceback box: its raise line)"),
            ("[2025-06-26 16:48:28,490] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python', '-u', 'train.py', '--local_rank=0'] exits with return code = 1", "DeepSpeed launcher text (cf. snowflakedb/ArcticTraining#219)"),
            ("torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with exit code 1", "torch.multiprocessing.spawn error text"),
            ("Exception: process 1 terminated with exit code 1", "pytorch/pytorch#62403 (mp.spawn before torch 1.9)"),
            (
                "    raise CalledProcessError(retcode, process.args, subprocess.CalledProcessError: Command '['torchrun', '--nnodes', '1', '--node_rank', '0', '--nproc_per_node', '2', '--master_addr', '127.0.0.1', '--master_port', '38587', '/LLaMA-Factory/src/llamafactory/launcher.py', 'config/qwen_vl.yaml']' returned non-zero exit status 1.",
                "hiyouga/LlamaFactory#9073 (llamafactory-cli's torchrun; the paste lost the line break after the source line)",
            ),
            ("RuntimeError: Step 1 exited with non-zero status 1", "deepspeedai/DeepSpeedExamples#437 (DeepSpeed-Chat's train.py; the step's own error is in its training.log)"),
        ],
        not_examples=[
            "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.",
            "subprocess.CalledProcessError: Command '['nvidia-smi']' returned non-zero exit status 9.",
            "[INFO] process 1 terminated with exit code 0",
            "Step 1 exited with non-zero status 1",  # a script's own progress line, not an exception it raised
            "subprocess.CalledProcessError",
            "subprocess.CalledProcessError: Command '['ninja', '-v', '-j', '8']",  # an extension's build, cut
            "    raise CalledProcessError(retcode, process.args,",  # subprocess.run's own raise: any command
        ],
        after=("*",),
        fields=groups,
    ),
    pattern(
        "torchrun-stopping-workers",
        "launcher",
        CONSEQUENCE,
        E,  # the agent sends these only when a worker failed or the job was interrupted: the run did not finish
        "torchrun stopped the other workers after one failed",
        # SubprocessContext says "Sending process N closing signal", MultiprocessContext "Closing process N via signal"
        r"(?:Sending|Closing) process (?P<pid>\d+) (?:closing|via) signal SIG(?:TERM|KILL)",
        ("closing signal", "via signal"),
        why="""After one worker failed, torchrun terminates the others. These workers did not fail on their own.""",
        fix="nothing to do about these; look at the worker that failed first",
        examples=[
            ("WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 812914 closing signal SIGTERM", "hpcaitech/ColossalAI#3514"),
        ],
        after=("*",),
    ),
    pattern(
        "spawn-main-guard",
        "launcher",
        CAUSE,
        E,
        "a spawned process re-ran the script's top level (missing `if __name__ == \"__main__\":`)",
        r"An attempt has been made to start a new process before the\s+current process has finished its bootstrapping phase",
        ("bootstrapping phase", "An attempt has been made to start a new process"),
        why="""With the spawn start method (mp.spawn, Windows, macOS, DataLoader workers there) each child
        imports the main script again; code at the top level that starts processes runs again in every child.""",
        fix='if __name__ == "__main__": main()   # put mp.spawn / the training entry point under the guard',
        examples=[
            ("RuntimeError: An attempt has been made to start a new process before the current process has finished its bootstrapping phase.", "Python multiprocessing error text"),
        ],
    ),
    pattern(
        "lightning-cuda-initialized",
        "launcher",
        CAUSE,
        E,
        "Lightning cannot fork workers because CUDA is already initialised",
        # (a thread's paste keeps the typographic apostrophe of the rendered message: Lightning-AI/pytorch-lightning#18728)
        r"Lightning can['’]t create new processes if CUDA is already initialized",
        ("CUDA is already initialized",),
        why="""A fork-based strategy (ddp_fork / ddp_notebook, or 'auto' in a notebook) forks processes, which
        CUDA does not survive: something used CUDA before trainer.fit (model.cuda(), torch.cuda.* calls).""",
        fix='Trainer(accelerator="gpu", devices=N, strategy="ddp")  # run as a script; or remove CUDA calls before fit()',
        examples=[
            ("RuntimeError: Lightning can't create new processes if CUDA is already initialized. Did you manually call `torch.cuda.*` functions, have moved the model to the device, or allocated memory on the GPU any other way?", "pytorch-tabular/pytorch_tabular#235"),
            ("> RuntimeError: Lightning can’t create new processes if CUDA is already initialized. Did you manually call torch.cuda.* functions, have moved the model to the device, or allocated memory on the GPU any other way?",
             "Lightning-AI/pytorch-lightning#18728 (a quote that kept the rendered apostrophe)"),
        ],
    ),
    pattern(
        "lightning-ddp-spawn-workers",
        "launcher",
        HARMLESS,
        W,
        "ddp_spawn with DataLoader workers is slow (safe to ignore: a performance warning)",
        r"num_workers>0\) and ddp_spawn do not mix well",
        ("ddp_spawn",),
        why="""With ddp_spawn every worker process must be re-created by pickling in each spawned rank; training
        still works but data loading can be much slower.""",
        fix='Trainer(strategy="ddp")  # or DataLoader(..., persistent_workers=True)',
        examples=[
            ("UserWarning: Dataloader(num_workers>0) and ddp_spawn do not mix well! Your performance might suffer dramatically.", "PyTorch Lightning warning text"),
        ],
    ),
]
