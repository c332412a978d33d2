"""Lines that show a run failed, from the programs that write into these logs besides Python's
tracebacks (which `signs` reads by their shape): launchers and their wrappers, job runners, Ray,
shells, argument parsers. Each rule is one table row: what it shows, its strength (as `signs`
counts it), the real lines it was taken from, and the nearest lines that must not count.

A rule here only says *that* the run failed. Why it failed is the patterns' business; when no
pattern knows, the answer is an honest `unrecognised-failure` naming this line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpudoctor.knowledge.mentions import SPEAKS, WHAT_FAILED
from gpudoctor.knowledge.pattern import any_of


@dataclass(frozen=True)
class Evidence:
    kind: str
    what: str  # what the line shows, in words
    regex: str
    strength: int  # 2: shows only that the run failed; 3: says what failed
    examples: tuple[str, ...]  # real lines, as they reach `signs` (prefixes peeled)
    not_examples: tuple[str, ...] = ()  # look alike, show no failure


# A logger's level, as the programs in these logs write it: Python's logging ("ERROR:root:",
# "- ERROR -", "[ERROR]"), vLLM's "ERROR 09-25 06:40:46", Ray's "ERROR worker.py:123 --",
# glog/klog/absl's "E0224 06:16:07.968578", logfmt's level=error. LEVEL_AT fills in the levels.
LEVEL_AT = (
    r"(?:^|(?<=[\s\]|:]))(?:{caps})(?::|\s+-\s|\s+\d\d-\d\d |\s+\d{{4}}-\d\d-\d\d \d\d:\d\d|\]|\s+\[[\w.]+:\d+|\s+[\w.\-]+\.(?:py|go|cc|cpp|h):\d+\]?\s)"
    r"|[\[|]\s*(?:{caps})\s*[\]|]"
    r"|(?:^|(?<=[\s\]):\[]))[{glog}]\d{{4}} \d\d:\d\d:\d\d\.\d+"
    # a logger's level letter in brackets before a date: "[E 2024-05-01 10:00:00 trainer.py:12]" (c10's "[E file.cpp:N]"
    # lines are the nccl and c10 patterns' to read: a cut one alone does not decide more than its log does)
    r"|\[[{glog}] \d{{4}}-\d\d-\d\d[ T]\d\d:\d\d"
    r"|^[\w.\-]+: (?:{caps}) (?=[A-Z])"
    # "%(asctime)s %(levelname)s %(name)s: %(message)s" and "... %(levelname)s [%(name)s] ...": the
    # level after a time stamp, then the logger's name (a lower-case dotted name, so a capitalised
    # phrase such as "ERROR Handling:" is not one)
    r"|(?<=\d )(?:{caps})\s+(?:[a-z_][\w.\-]*:|\[[a-z_][\w.\-]*\])\s"
    r"|\blevel=\"?(?:{lower})\b"
    # a JSON log record (structlog, zap, slog, tracing's json): an object with a message key and an error level
    # (a config dump that only holds the word has no message key: {{"log_level": "error"}} is a setting)
    r"|(?:^|(?<=[\s\]|:]))\{{(?=.*\"(?:msg|message|event)\"\s*:)(?=.*\"(?:level|severity|lvl)\"\s*:\s*\"(?:{lower}|{caps})\")"
    # an RFC 3339 time (its zone, Z or an offset, says so) then the level: Rust's tracing, Go's zap and logrus
    # text ("2023-05-30T10:39:23.156417Z ERROR HTTP request{...}: text_generation_router: ...")
    r"|\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)\s+(?:{caps})\s"
)
ERROR_LEVEL = re.compile(LEVEL_AT.format(caps="ERROR|CRITICAL|FATAL|PANIC", glog="EF", lower="error|fatal|critical|panic"))
# What every ERROR_LEVEL match holds: a level's word, logfmt's level=, a JSON record's level key, or glog's level
# letter before its date (each of LEVEL_AT's alternatives holds one; tests/test_knowledge_prefilter.py checks). The
# regex tries a dozen alternatives at every place of a line: a line with none of these costs a few finds instead.
LEVEL_WORDS = ("ERROR", "CRITICAL", "FATAL", "PANIC", "level=", '"level"', '"severity"', '"lvl"')
GLOG_LEVEL = re.compile(r"[EF]\d{4} |\[[EF] ")


def error_level(text: str) -> re.Match[str] | None:
    """ERROR_LEVEL.search(text), without the search for a line that cannot hold a level."""
    if not any(word in text for word in LEVEL_WORDS) and GLOG_LEVEL.search(text) is None:
        return None
    return ERROR_LEVEL.search(text)


# The levels at which a program says it cannot go on (glog's F aborts the process after the line). TensorFlow's, XLA's and
# JAX's logger (tsl, absl's format after a date) writes the same level letter after its time stamp: "2025-04-23
# 20:35:34.618070: F external/xla/xla/service/gpu/autotuning/gemm_fusion_autotuner.cc:1099] Non-OK-status: ..."
# (google-deepmind/mujoco_playground#113); its E lines are not read as errors here: TensorFlow prints them on every start
# ("Unable to register cuDNN factory", heldout11 and heldout16's healthy runs).
FATAL_LEVEL = LEVEL_AT.format(caps="CRITICAL|FATAL|PANIC", glog="F", lower="fatal|critical|panic") + (
    r"|(?<=\d\d:\d\d:\d\d\.\d{6}: )F [\w.\-/]+\.(?:cc|cpp|cu|h|hpp):\d+\] .*"  # (its file and message with it: the line's own words)
    # programs that are not Python say it in their own words (issue 35, diagA19): NAMD's and Charm++'s "FATAL ERROR: ..."
    # (after a replica's or a PE's name: "REPLICA 1 FATAL ERROR: CUDASOA integration is incompatible ..."), and a daemon's
    # lower-case level after its own name, as Slurm's daemons write it ("slurmd: fatal: can't stat gres.conf file ...")
    r"|(?:^|(?<=[\s\]|:]))FATAL ERROR:"
    r"|(?:^|(?<=\s))[a-z][\w.\-]*(?:\[\d+\])?: fatal: (?=\S)"
    # logrus's text format on a terminal (the NVIDIA Go tools: mig-parted, nvidia-ctk, the device plug-in): a four-letter
    # level and the seconds since start, "FATA[0000] ..." (logrus exits after it; PANI is its panic level)
    r"|(?:^|(?<=\s)(?<!^# ))(?:FATA|PANI)\[\d{4,}\] (?=\S)")
# An error-level line whose message says a call of the program raised: the server's handler caught an
# exception ("Exception calling application: ...", "Error in StreamActions: ..."). A component retrying a
# connection says none of these, nor does a server refusing an optional request it does not implement
# (kubernetes-sigs/dra-driver-nvidia-gpu#1423: "not supported by this driver", repeated while the driver works).
# (the rule's group holds the message from those words on: its signature is the message, not the time stamp)
RAISED = r"\b(?:[Ee]xception|[Ee]rror) (?:in|calling|while|during|when|raised)\b"
# An error-level line that says the program is stopping: most error lines are errors a component
# retries and survives (`log-inconclusive` shows them), these end it.
# ("exit status N" names a status, it is no program saying it stops: old pip's "Command errored out with exit status 1")
ENDING = (r"(?=.*?\b(?i:exit(?:s|ing|ed)?\b(?! (?:normally|successfully|cleanly|gracefully|status\b))|abort(?:s|ing|ed)?\b|"
          r"terminat(?:es|ing|ed)\b|shutting down|giving up|cannot continue|crash(?:ed|es)?\b|"
          r"stopp(?:ing|ed) (?:the )?(?:training|job|run|worker|process)))")

# An error line that says the program went on another way is no failure: slurmstepd's "couldn't chdir to
# `/root/x': No such file or directory: going to /tmp instead" before every step of a job that then runs
# (NVIDIA/deepops#1179). Read after a rule's own words, as a lookahead.
GOES_ON = r"(?!.*\b(?:instead|falling back|falls? back|will retry|retrying|ignoring|skipping)\b)"

RULES: tuple[Evidence, ...] = (
    Evidence(
        "argparse",
        "a program refused its command line",
        r"^(?:usage: .*?\] )?(?P<argparse>[\w.\-]+(?: [\w.\-]+){0,3}?(?:\.py)?): error: (?!\d)(?:unrecognized arguments|the following arguments are required|argument |invalid choice|ambiguous option|one of the arguments|expected one argument)",
        2,
        (
            "torchrun: error: unrecognized arguments: --nproc-per-node=1",  # torchtitan thread, old torchrun
            "train.py: error: the following arguments are required: --data",
            "launch.py: error: argument --local_rank: invalid int value: '0,1'",
        ),
        ("srun: error: Unable to allocate resources: Requested node configuration is not available",),  # srun's own rule
    ),
    Evidence(
        "notfound",
        "the shell stopped a command or a script of the job (a command or a file not found, a variable not set under set -u)",
        # (the shell's own name, or the script's: bash reports an error of a script as "$0: line N: ...", whether the script
        # is the job's launch script or one it sources; "unbound variable" is a script under set -u reading a variable never
        # set, which stops it there: heldout10's launch.sh, heldout15's train_ucf101.sh and Singularity's action script,
        # heldout17w's run_deepspeed.sh sourcing conda.sh)
        r"^(?:(?:/bin/(?:ba|z|da)?sh|bash|sh|zsh)(?:: line \d+)?|[^\s:]+: line \d+): (?:\d+: )?(?P<notfound>.+?: (?:(?:command )?not found|not a valid identifier|No such file or directory|Permission denied|syntax error\b|unbound variable).*)",
        3,
        (
            "/bin/sh: 1: torchrun: not found",
            "bash: deepspeed: command not found",
            "/bin/bash: line 1: srun: command not found",
            "/bin/bash: line 0: export: `=/usr/bin/supervisord': not a valid identifier Error: failed to run torchrun --nproc_per_node=1",  # colossalai run
            # https://github.com/simplescaling/s1/issues/106 (heldout10): the launch script's log folder does not exist
            "train/launch.sh: line 5: log/sft_20250321-170440.txt: No such file or directory",
            "examples/c3d_ucf101/train_ucf101.sh: line 5: train: command not found",  # https://github.com/chuckcho/video-caffe/issues/53 (heldout15)
            # heldout17w: a DeepSpeed launch script under set -u (https://github.com/2Elian/Drug-Recommend, nohup.log)
            "/data/lzm/DrugRecommend/src/models/baseline/run_deepspeed.sh: line 9: PYTHONPATH: unbound variable",
        ),
        ("NCCL INFO NET/Plugin: Plugin load returned 2 : libnccl-net.so: cannot open shared object file: No such file or directory",
         "see the script: line 9: it sets PYTHONPATH",  # prose: no script's path before the line number
         "export PYTHONPATH=${PYTHONPATH:-}  # avoids 'unbound variable' under set -u"),
    ),
    Evidence(
        "clierror",
        # a launcher's "Error: failed to run ..." and any program's own "Error: ..." line (darknet's "CUDA Error:
        # out of memory: Invalid argument"): what failed is in its words, not in a rank's output elsewhere
        "a program reported an error it stopped on (its Error: line)",
        r"(?:^|\s)Error: (?!.*\b(?i:crash\w*|fail\w*|abort\w*|died|terminated|killed)(?: \w+)?\s*[:=]\s*0\b)(?P<clierror>(?:failed to run|.*\b(?i:failed|not found|no such|cannot|could not|unable|invalid|refused|killed|crash(?:ed|es)?|abort(?:ed)?|died|terminated|exit(?:ed)? (?:with )?(?:code|status))\b).*)",
        2,
        (
            "Error: failed to run torchrun --nproc_per_node=4 --nnodes=1 --node_rank=0 --rdzv_backend=c10d --rdzv_endpoint=127.0.0.1:29500",  # colossalai run
            "Error: Failed to setup head node.",  # ray up under SkyPilot (skypilot-org/skypilot#618)
            "Error: Unable to connect to the host engine",  # dcgmi without nv-hostengine running
            "Error: training script crashed",  # a wrapper's words for the step it ran (issue 35, diagA15)
        ),
        ("Error: 0.0123", "Error: 12.5% (top-1)", "Error: none, crashed runs: 0"),  # a metric called "Error" in an evaluation print
    ),
    Evidence(
        "frames",
        "a Python traceback's frames (its exception is not in the log)",
        r"(?:^|\S\s+)(?P<frames>File \"[^\"]+\.py\", line \d+, in \w+)",
        2,
        (
            '/site-packages/ray/_private/worker.py", line 2623, in get values = worker.get_objects(object_refs) File "/home/c/.venvs/d/lib/python3.10/site-packages/ray/_private/worker.py", line 2623, in get',  # a traceback pasted as one line
        ),
        ('See the frame File "train.py" for details',),
    ),
    Evidence(
        "pyspy",
        "a py-spy dump of a running process (taken when a job hangs)",
        r"^(?P<pyspy>Process \d+: \S*python\S* .+)",
        2,
        ("Process 1808758: /usr/bin/python -u src/llamafactory/launcher.py --stage sft --do_train",),
        ("Process 0: loading shards", "Process rank: 0, device: cuda:0, n_gpu: 1, distributed training: True"),
    ),
    Evidence(
        "mpirun",
        "mpirun reported a process that failed",
        r"(?P<mpirun>(?:mpirun|prterun|orterun) detected that one or more processes exited with non-zero status|"
        r"(?:mpirun|prterun|orterun) noticed that process rank \d+ with PID \d+ on node \S+ exited on signal \d+.*|"
        r"(?:mpirun|prterun|orterun) has exited due to process rank \d+.*|MPI_ABORT was invoked on rank \d+.*|"
        r"Primary job\s+terminated normally, but \d+ process(?:es)? returned)",
        2,
        (
            "mpirun detected that one or more processes exited with non-zero status, thus causing",  # NVIDIA/nccl#241
            "Primary job  terminated normally, but 1 process returned",
            "mpirun noticed that process rank 3 with PID 0 on node gpu07 exited on signal 9 (Killed).",
            "prterun noticed that process rank 0 with PID 0 on node gpu1 exited on signal 9 (Killed).",  # Open MPI 5
            "MPI_ABORT was invoked on rank 0 in communicator MPI_COMM_WORLD with errorcode 1.",
        ),
        ("mpirun detected that the job finished", "Primary job terminated normally"),
    ),
    Evidence(
        "errorfile",
        "torchrun's error handler printed a rank's error record",
        r"(?:^|(?<=[\s>\]:]))(?P<errorfile>ERROR:torch\.distributed\.elastic\.multiprocessing\.errors\.error_handler:)",
        2,
        ("ERROR:torch.distributed.elastic.multiprocessing.errors.error_handler:{",),  # hpcaitech/ColossalAI#1779
        ("INFO:torch.distributed.elastic.multiprocessing.errors.error_handler: no error file defined",),
    ),
    Evidence(
        "thread",
        "an exception ended a thread",
        r"^Exception in thread (?P<thread>[^:]+):$",
        2,
        ("Exception in thread Thread-5:", "Exception in thread MainThread:"),
        ("Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7f62eb6ed630>",),
    ),
    Evidence(
        "elastic",
        "torchrun's failure summary (a rank failed; its error is in its own output)",
        r"^(?P<elastic>traceback) *: To enable traceback see: https?://\S*",
        2,
        ("traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",),
        ("To enable traceback see the docs",),  # (the link may be cut by the paste's width: "https://pytorch.org/docs/stable/elastic/er")
    ),
    Evidence(
        "raydied",
        "a Ray worker or actor died",
        r"(?P<raydied>(?:A|The) (?:worker|actor) died\b.*|Ray processes died\b.*|Raylet is terminated\b.*|Exception raised in creation task: .+|Error processing event\b.*|Failed to register worker \S+ to Raylet\b.*)",
        2,
        (
            "A worker died or was killed while executing a task by an unexpected system error. To troubleshoot the problem, check the logs for the dead worker.",
            "Exception raised in creation task: The actor died because of an error raised in its creation task, ray::LLMRayActor.__init__()",
            "2023-03-02 21:37:21,268\tERROR trial_runner.py:1062 -- Trial TorchTrainer_63ebb_00000: Error processing event.",
            "2020-01-23 19:31:13,975 ERROR scripts.py:410 -- Ray processes died unexpectedly",
            "2023-02-24 04:30:19,237 WARNING worker.py:1851 -- Raylet is terminated: ip=192.168.207.5, id=abc3bfd",  # ray-project/ray#31119
            "Failed to register worker 2ea0a7ae0dcfec5f2917ed1d37227bb2190a87c16f85aa3f859cd7ef to Raylet.",  # ray-project/ray#21226
        ),
        ("The actor is alive", "A worker started on node 10.0.0.5", "Registered worker 2ea0a7ae to Raylet."),
    ),
    Evidence(
        "hydra",
        "Hydra's job runner caught an exception",
        r"^(?P<hydra>Error executing job with overrides:).*",
        2,
        ("Error executing job with overrides: ['algorithm.adv_estimator=grpo', 'data.train_files=train.parquet']",),
        ("Executing job with overrides: ['lr=0.1']",),
    ),
    Evidence(
        "dslaunch",
        "DeepSpeed's launcher stopped the ranks after one failed",
        # (its handler runs only when a rank exited with an error or the launcher was signalled; it logs the kills at INFO)
        r"\[(?:ERROR|INFO)\] \[launch\.py:\d+:(?P<dslaunch>sigkill_handler)\]",
        2,
        ("[2023-07-20 15:45:13,982] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python3', '-u', 'main.py', '--local_rank=1'] exits with return code = 1",
         "[2023-11-21 20:42:22,682] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 156890"),  # 01-ai/Yi#152 (host memory ran out)
        ("[2023-07-20 15:45:13,982] [INFO] [launch.py:163:main] dist_world_size=2",),
    ),
)

# Windows could not start a command of the job: cmd.exe's own "not found", and the .exe shims pip and setuptools
# write for console scripts (torchrun.exe, accelerate.exe) whose Python was moved, renamed or removed.
RULES += (
    Evidence(
        "winlaunch",
        "Windows could not start a command of the job (not on PATH, or its launcher points at a Python that is gone)",
        r"^(?P<winlaunch>'[^']+' is not recognized as an internal or external command.*|Fatal error in launcher: .+|failed to create process\.)\s*$",
        3,
        (
            "failed to create process.",  # meta-llama/llama#611 (torchrun.exe's setuptools shim)
            "Fatal error in launcher: Unable to create process using '\"C:\\Users\\u\\miniconda3\\envs\\old\\python.exe\"  \"C:\\Users\\u\\miniconda3\\envs\\new\\Scripts\\torchrun.exe\" ': The system cannot find the file specified.",
            "'torchrun' is not recognized as an internal or external command,",
        ),
        ("If torchrun says 'failed to create process.', reinstall it", "Creating process group with backend gloo"),
    ),
)

# A native program's assert of a condition, in the shapes C and C++ libraries print it before they abort: a library's own
# macro or MSVC's "Assertion failed: COND (file:line)", ggml's "GGML_ASSERT: file:line: COND" (glibc's "Assertion `COND'
# failed." is `signs`' own "assertion"). What the condition names is read by knowledge/carried.py.
RULES += (
    Evidence(
        "nativeassert",
        "a native (C/C++) assert failed",
        r"(?:^|(?<=[\s\]:]))(?P<nativeassert>(?:Assertion failed: (?!\d+ (?:of|/|out of) )|GGML_ASSERT: \S+?:\d+: )\S.*|GGML_ASSERT\(.+\) failed.*)",
        3,
        (
            "RuntimeError: [TensorRT-LLM][ERROR] Assertion failed: mpiSize == tp * pp (/tmp/tritonbuild/tensorrtllm/tensorrt_llm/cpp/tensorrt_llm/runtime/worldConfig.cpp:99)",  # NVIDIA/TensorRT-LLM#1950
            "error report :stderr GGML_ASSERT: binding.cpp:712: split_arg.size() <= LLAMA_MAX_DEVICES",  # mudler/LocalAI#944
            "/src/llama.cpp/ggml/src/ggml.c:1804: GGML_ASSERT(ggml_can_repeat(b, a)) failed",  # ggml's later form
        ),
        ("GGML_ASSERT is defined in ggml.h", "Assertion failed: 0 of 120 checks", "static_assert(sizeof(int) == 4)"),
    ),
)

# Rules read from the whole line as written (the level is a prefix `lines.strip` peels off).
RULES += (
    Evidence(
        "fatallevel",
        "a program logged a fatal error (its logger's CRITICAL / FATAL / PANIC level: it cannot go on)",
        rf"(?P<fatallevel>(?:{FATAL_LEVEL})(?!\s*0\b)).*",
        2,
        (
            "CRITICAL 03-29 08:10:03 [multiproc_executor.py:49] WorkerProc failed to start",  # vLLM, a worker that died at start
            "2022-03-18 22:20:50,873 PANIC commands.py:724 -- Failed to setup head node.",  # ray up (skypilot-org/skypilot#618)
            "F1127 12:00:00.123456 4242 nccl_utils.cc:88] Check failed: result == ncclSuccess",  # glog/absl: the process aborts after it
            'time="2024-01-02T10:00:00Z" level=fatal msg="error starting plugin: failed to create NVML device"',
            "[2024-04-18 19:10:41] CRITICAL [olmo.util:158, rank=0] Uncaught OLMoThreadError: generator thread data thread 3 failed",
            "REPLICA 1 FATAL ERROR: CUDASOA integration is incompatible with the following options:",  # fhh2626/BFEE3#86 (NAMD 3.0)
            # https://github.com/BiBiServ/bibigrid/issues/705: slurmd stops (systemd: "Failed to start Slurm node daemon.")
            "Feb 02 09:52:07 bibigrid-worker slurmd[12912]: slurmd: fatal: can't stat gres.conf file /dev/nvidia0: No such file or directory",
            "2024-01-01 10:00:00,000 - CRITICAL - Loss diverged, stopping",  # the level and words that it stops
            # NVIDIA/mig-parted#44 (heldout27): a config whose devices is a string; logrus's text level, then exit 1
            "FATA[0000] Error parsing config file: unmarshal error: error unmarshaling JSON: while decoding JSON: invalid string input for 'devices': 7",
        ),
        ("--log-level CRITICAL", "logging.CRITICAL: 50", "log_level: FATAL", "FATAL: 0 tests", "F1 score 0.91 at epoch 3",
         "*** MPI_ERRORS_ARE_FATAL (see the docs)", "fatal: No names found, cannot describe anything.",  # git's, a build's probe
         "NO FATAL ERRORS FOUND", "if it says FATAL ERROR, look above",
         # a script that logs its stages at CRITICAL (heldout20w's sgsikorski/NLP-Project: it finished and saved)
         "CRITICAL:__main__:Starting finetuning"),
    ),
    Evidence(
        "errorending",
        "a program logged an error and said it is stopping",
        rf"(?P<errorending>(?:{ERROR_LEVEL.pattern}){ENDING}).*",
        2,
        (
            "(pid=81331) E0328 18:23:00.165781 81395 core_worker.cc:382] Raylet failed. Shutting down.",  # ray-project/ray#7788
            "2023-05-02 10:11:12,001 - ERROR - Data loader crashed, aborting the epoch",
            "[ERROR] worker 3 terminated: giving up after 3 restarts",
        ),
        ("[ERROR] 0 errors, exiting normally", "ERROR rate: 0.01 (training goes on)", "error_rate=0.0 exit_on_nan=True",
         "[WARNING] job will be terminated if it runs past its time limit"),
    ),
    Evidence(
        "errorraised",
        "a program logged, at error level, that a call raised an exception",
        rf"(?:{ERROR_LEVEL.pattern}).*?(?P<errorraised>{RAISED}.*)",
        2,
        (
            "ERROR 2025-08-21 19:35:25 y_server.py:245 Error in StreamActions: Currently not implemented for PI0",  # huggingface/lerobot#1772
            "ERROR 2025-10-29 05:30:24 /_server.py:636 Exception calling application: Policy type groot not supported. Supported policies: ['act', 'pi0']",  # huggingface/lerobot#2338
            "2024-03-01 10:00:00,123 - ERROR - Exception in callback Trainer.step(): shapes do not match",
        ),
        ("ERROR 2025-08-21 19:35:25 y_server.py:245 Connection to the robot lost, retrying in 1 s",
         "[WARNING] flash attention not supported on this GPU, using the math kernel",
         "INFO 2025-08-21 19:35:25 y_server.py:191 Observation #0 has been filtered out",
         'E0902 20:48:24.809602       1 nonblockinggrpcserver.go:180] "handling stream failed" err="rpc error: code = Unimplemented desc = device health reporting is not supported by this driver" logger="dra"'),
    ),
)
# Rules for what a scheduler, a cluster manager, Go or the interpreter itself says.
RULES += (
    Evidence(
        "pyexec",
        "Python could not start the program (the module or the script it was given)",
        r"^(?:\S*[/\\])?python[\d.]*(?:\.exe)?: (?P<pyexec>Error while finding module specification for .+|can't open file .+|"
        r"No module named .+|can't find '__main__' module in .+)",
        3,
        (
            "/opt/amex/mlp-hub/mlpjhub/bin/python: Error while finding module specification for 'horovod.runner.task_fn' (ModuleNotFou",  # horovod/horovod#3769
            "python: can't open file '/workspace/train.py': [Errno 2] No such file or directory",
            "/usr/bin/python3: No module named torch.distributed.run",
        ),
        ("python: 3.10.12", "python: /usr/bin/python3 (the interpreter in use)"),
    ),
    Evidence(
        "k8sevent",
        "Kubernetes reported that a pod of the job failed (an event of type Warning)",
        r"^\s*Warning\s+(?P<k8sevent>(?:Failed\w*|BackOff|Evicted|OOMKilling)\s+.+)",
        2,
        (
            'Warning  FailedMount  89s (x12 over 9m43s)  kubelet            MountVolume.SetUp failed for volume "sharedfs" : hostPath type check failed: /mnt/data is not a directory',  # skypilot-org/skypilot#7925
            "Warning  FailedScheduling  2m  default-scheduler  0/4 nodes are available: 4 Insufficient nvidia.com/gpu.",
            "Warning  BackOff  3m (x40 over 12m)  kubelet  Back-off restarting failed container",
        ),
        ("Normal   Scheduled  2m  default-scheduler  Successfully assigned default/trainer-0 to gpu-node-1",
         "Warning: Permanently added 'gpu04,172.16.250.42' (ECDSA) to the list of known hosts."),
    ),
    Evidence(
        "podstatus",
        "a pod of the job is failing (kubectl's STATUS column)",
        r"\s\d+/\d+\s+(?P<podstatus>CrashLoopBackOff|OOMKilled|Error|ImagePullBackOff|ErrImagePull|CreateContainer(?:Config)?Error|Init:(?:Error|CrashLoopBackOff))\s+\d+",
        2,
        ("nvidia-k8s-dra-driver-kubelet-plugin-xckkd         0/1     CrashLoopBackOff   6 (3m29s ago)   9m12s",  # NVIDIA/k8s-dra-driver-gpu#65
         "pytorch-job-worker-1   0/1     OOMKilled   2          5m"),
        ("pytorch-job-worker-1   1/1     Running   0          5m", "pytorch-job-worker-0   0/1     Completed   0          9m"),
    ),
    Evidence(
        "jobstate",
        "the scheduler or cluster manager says the job failed",
        r"(?:\bterminal state|\b[Ss]tate|\b[Ss]tatus(?: for job '[^']+')?|JobState)\W{0,3}(?P<jobstate>FAILED(?:_[A-Z_]+)?|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL)\b(?!\s*[:=]\s*\d)",
        2,
        (
            "Job 1 is already in terminal state FAILED_CONTROLLER. For more details, run: sky jobs logs --controller 1",  # skypilot-org/skypilot#5031
            "JobId=4242 JobName=train JobState=FAILED Reason=NonZeroExitCode Dependency=(null)",  # scontrol show job
            "State: OUT_OF_MEMORY (exit code 0)",  # seff
            "Status for job 'raysubmit_JT3Mu3PvdFLcvw4f': FAILED",  # ray job submit
        ),
        ("JobState=RUNNING Reason=None", "status: FAILED: 0, SUCCEEDED: 4", "State: COMPLETED (exit code 0)"),
    ),
    Evidence(
        "panic",
        "a Go or Rust program panicked (a device plugin, an operator, a tokenizer, an installer)",
        r"^(?P<panic>panic: (?!(?:true|false|\d+|null|~)\s*$).+|thread '[^']*' panicked at .+)",
        3,
        ("panic: runtime error: invalid memory address or nil pointer dereference",
         "panic: failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND",
         "thread '<unnamed>' panicked at src/tokenizer/mod.rs:123:9:"),
        ("panic: false", "panic: 0", "thread 'main' started"),
    ),
    Evidence(
        "lua",
        # Lua's stand-alone interpreters (lua, luajit, Torch7's th) print an uncaught error as "<interpreter>: <chunk>:<line>:
        # <message>", then "stack traceback:", and exit 1: the script stopped there. The message may go on over the next lines
        # (Torch7's nn.Container rethrows as "Container.lua:67: \nIn 3 module of nn.Sequential:\n<the module's error>").
        "the Lua interpreter stopped the script on an error (Torch7's luajit or th, lua)",
        r"^(?:\S*[/\\])?(?:luajit|lua(?:5\.[1-4]|jit)?|th)(?:\.exe)?: (?P<lua>(?:\S*?\.lua|\[string \"[^\"]*\"\]):\d+: *\S.*|cannot open \S+.*)",
        3,
        (
            "/home/ubuntu/torch/install/bin/luajit: neural-style/neural_style.lua:403: attempt to call field 'GPU' (a nil value)",  # https://github.com/jcjohnson/neural-style/issues/360 (heldout17)
            # https://github.com/OpenNMT/OpenNMT/issues/179 (heldout17)
            "/home/phong/torch/install/bin/lua: /home/phong/torch/install/share/lua/5.2/nn/Linear.lua:66: cublas runtime error : an internal operation failed at /home/phong/torch/extra/cutorch/lib/THC/THCBlas.cu:246",
            "lua: train.lua:12: module 'cutorch' not found:",
        ),
        ("/home/ubuntu/torch/install/bin/luajit: LuaJIT 2.1.0-beta1 -- Copyright (C) 2005-2015 Mike Pall.",
         "\t/home/prime/torch/install/share/lua/5.1/nn/THNN.lua:109: in function 'MSECriterion_updateOutput'",  # a frame of its traceback
         "th> require 'cutorch'",
         "/home/prime/torch/install/bin/luajit: /home/prime/torch/install/share/lua/5.1/nn/Container.lua:67: "),  # "luarethrown"'s
    ),
    Evidence(
        "luarethrown",
        # Torch7's nn containers catch a module's error and raise it again with the module's place: the interpreter's line
        # then ends at the container's file and line, and the module's own error follows ("In 17 module of nn.Sequential:",
        # then "THNN.lua:109: inconsistent tensor size at ...")
        "the Lua interpreter stopped the script on an error a Torch7 container raised again (the module's own error is on the next lines)",
        r"^(?:\S*[/\\])?(?:luajit|lua(?:5\.[1-4]|jit)?|th)(?:\.exe)?: (?P<luarethrown>\S*?\.lua:\d+:)\s*$",
        3,
        ("/home/prime/torch/install/bin/luajit: /home/prime/torch/install/share/lua/5.1/nn/Container.lua:67: ",  # https://github.com/jcjohnson/fast-neural-style/issues/152 (heldout14)
         "/media/ubuntu/JetsonSSD/torch/install/bin/luajit: ...u/JetsonSSD/torch/install/share/lua/5.1/nn/Container.lua:67:"),  # https://github.com/facebookarchive/MIXER/issues/1 (heldout17)
        ("/home/ubuntu/torch/install/bin/luajit: neural-style/neural_style.lua:403: attempt to call field 'GPU' (a nil value)",),
    ),
    Evidence(
        "glibc",
        "the C library stopped the process (memory corruption found by glibc)",
        r"(?P<glibc>\*\*\* (?:Error in [`'][^`']+'?: .+|stack smashing detected \*\*\*.*)|"
        r"^(?:free|malloc|realloc|munmap_chunk|malloc_consolidate)\(\): .+|^double free or corruption.*|^corrupted (?:size|double-linked list).*)",
        3,
        ("*** Error in `python': double free or corruption (!prev): 0x000055d5c1a7e2f0 ***", "free(): invalid pointer",
         "*** stack smashing detected ***: terminated", "corrupted size vs. prev_size"),
        ("malloc: using jemalloc", "free memory: 12 GiB"),
    ),
    Evidence(
        "slurm",
        "Slurm reported that the job step failed",
        r"(?P<slurm>srun: error: (?:Node failure on .+|.*\b(?:[Tt]ask \d+ launch failed|Unable to (?:allocate|create step|launch).*|Job step aborted).*)|"
        rf"^Job step aborted: .+|slurmstepd: error: {GOES_ON}.+)",
        2,
        ("srun: error: Node failure on gpu-12", "Job step aborted: Waiting up to 32 seconds for job step to finish.",
         "slurmstepd: error: execve(): train.sh: Permission denied"),
        ("srun: job 4242 queued and waiting for resources", "srun: job 4242 has been allocated resources",
         "slurmstepd: error: couldn't chdir to `/root/burst-buffer': No such file or directory: going to /tmp instead"),
    ),
    Evidence(
        "shellkill",
        "the shell reported the program killed by a signal",
        r"^(?:(?:zsh|bash|sh|fish): |\[\d+\]\s*[+-]?\s*\d+\s+)(?P<shellkill>(?:segmentation fault|bus error|abort(?:ed)?|killed|illegal hardware instruction|floating point exception)\b.*)",
        3,
        ("zsh: segmentation fault  python train.py", "[1]    12345 killed     python train.py", "zsh: bus error  torchrun --nproc_per_node 8 train.py"),
        ("[1]    12345 done       python train.py", "zsh: command not found: nvidia-smi"),
    ),
    Evidence(
        "fishkill",
        "the fish shell reported the job killed by a signal",
        r"(?:^|(?<=[\]\s]))fish: (?P<fishkill>(?:Job \d+, )?.{1,300}? terminated by signal\b.*)",
        3,
        ("fish: Job 1, 'python train.py' terminated by signal SIGSEGV (Address boundary error)",
         "Stepping through eval batches:   0%|          | 0/1 [00:00<?, ?it/s]fish: Job 1, 'python lerobot/scripts/train.py…' terminated by signal",  # huggingface/lerobot#755
         "fish: “torchrun --nproc_per_node 2 train.py” terminated by signal SIGKILL (Forced quit)"),
        ("fish: Job 1, 'python train.py &' has ended", "fish: Unknown command: torchrun"),
    ),
    Evidence(
        "reported",
        "a program reported an exception it caught (its class and message, after its own words)",
        r"(?:^|\s)(?:(?i:an? (?:unexpected |unhandled )?(?:error|exception) (?:has )?(?:occurred|occured|was raised|happened)|"
        r"error|exception|failed)|报错|错误|异常|出错)\s*[:：]\s*(?P<reported>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)\s*(?:[:：]|[–—-]\s)\s*\S.*)",
        3,
        ("An error occurred: UnboundLocalError – local variable 't7' referenced before assignment",  # Lightning-AI/lightning-thunder#368
         "报错：AttributeError: 'list' object has no attribute 'to'",  # OpenBMB/MiniCPM-V#361
         "Exception: ValueError - too many values to unpack"),
        ("An error occurred: see the log above", "error: KeyError handling is on", "Error: 0.0123"),
    ),
    Evidence(
        "invalid",
        "a program refused a value it was given as not valid (a setting, an argument, a settings string)",
        # the value in quotes, or its quote's end only when a GUI wrapped the value over two lines; not a value the
        # program replaces and goes on ("..., using the default")
        r"(?P<invalid>(?:'[^']{1,300}|^[^'\s]{1,300})' is not a valid (?:[\w-]+ ){0,3}[\w-]+\b(?!.*\b(?:using|falls? back|falling back|ignor\w*|defaults? to)\b).*)",
        2,
        ("warmup_init=False' is not a valid settings string.",  # kohya-ss/sd-scripts#1740 (the GUI wrapped the value)
         "' scale_parameter=False relative_step=False warmup_init=False' is not a valid settings string.",
         "'bf16-true' is not a valid precision setting"),
        ("'auto' is not a valid device, using cuda:0 instead", "'x' is not a valid identifier, defaults to 'y'", "the string is not a valid path"),
    ),
    Evidence(
        "build",
        "a build the job needs failed (make, ninja, cmake)",
        r"(?P<build>^make(?:\[\d+\])?: \*\*\* .*\bError \d+.*|^ninja: build stopped: .+|^CMake Error\b.*|^FAILED: \S+\.(?:o|so|obj)\b.*)",
        2,
        ("make: *** [Makefile:12: all] Error 2", "ninja: build stopped: subcommand failed.",
         "CMake Error at CMakeLists.txt:12 (find_package):", "FAILED: /test/flash-attention/hopper/build/temp.linux-x86_64-cpython-310/flash_fwd_hdim64_fp16_sm90.o"),
        ("make: Nothing to be done for 'all'.", "ninja: no work to do."),
    ),
    Evidence(
        "container",
        "the container runtime could not start the job's container",
        r"(?P<container>Error response from daemon: .+|OCI runtime (?:create|exec|start) failed.*)",
        3,
        ('docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].',
         'OCI runtime create failed: container_linux.go:380: starting container process caused: exec: "nvidia-smi": executable file not found in $PATH: unknown'),
        ("Status: Downloaded newer image for nvcr.io/nvidia/pytorch:24.01-py3",),
    ),
    Evidence(
        "apt",
        "apt could not install what the job needs",
        r"^E: (?P<apt>.+)",
        2,
        ("E: Unable to locate package libnccl2", "E: Package 'cuda-toolkit-12-4' has no installation candidate"),
        ("W: GPG error: https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64  InRelease: The following signatures couldn't be verified",),
    ),
    Evidence(
        "cli",
        "a command-line tool reported an error it stopped on (uv, cargo, setuptools)",
        r"^(?:error: |\s*× )(?P<cli>(?!None\b|False\b|0\b)[A-Z].+)",
        2,
        ("error: Failed to download distribution due to network timeout. Try increasing UV_HTTP_TIMEOUT (current value: 30s).",
         "  × Failed to build `flash-attn==2.7.2.post1`"),
        ("error: None", "error: 0.0123", "fatal: not a git repository (or any of the parent directories): .git"),
    ),
    Evidence(
        "k8sreason",
        "Kubernetes' reason for a container or a job that failed",
        r"\b(?P<k8sreason>BackoffLimitExceeded|DeadlineExceeded|CrashLoopBackOff|OOMKilled|ContainerCannotRun|CreateContainerConfigError)\b",
        2,
        ("pod failed: BackoffLimitExceeded", "      Reason:       OOMKilled"),
        ("restartPolicy: OnFailure", "backoffLimit: 4"),
    ),
    Evidence(
        "chained",
        "a Python exception raised while handling another (the traceback around it is cut)",
        r"^(?P<chained>The above exception was the direct cause of the following exception:|During handling of the above exception, another exception occurred:)$",
        2,
        ("The above exception was the direct cause of the following exception:",),
        ("see the above exception for the direct cause",),
    ),
)

RULES += (
    Evidence(
        "pytest",
        "a test run reported failed tests",
        r"^(?P<pytest>(?:FAILED|ERROR) [\w./\\-]+\.py::\S+.*|=+ (?:\d+ (?:passed|skipped|deselected|warnings?|xfailed|xpassed), )*[1-9]\d* (?:failed|errors?)\b.*)",
        2,
        ("FAILED tests/test_distributed.py::test_allreduce[nccl] - RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:219",
         "===== 1 failed, 12 passed in 3.21s =====", "=========== 3 passed, 2 errors in 9.87s ===========",
         "ERROR tests/test_fsdp.py::TestFSDP::test_wrap - torch.distributed.DistBackendError: NCCL error"),
        ("===== 12 passed in 3.21s =====", "tests/test_distributed.py::test_allreduce PASSED", "===== 12 passed, 0 failed in 3.21s ====="),
    ),
    Evidence(
        "status",
        "a test harness or a script reported a step of the job failed (its status word)",
        # A script's or a harness's status for a step it ran, in the words they print: a bracketed status
        # ("... >> /tmp/unit_test.log [Failure]", NVlabs/imaginaire#131: https://github.com/NVlabs/imaginaire/issues/131;
        # googletest's "[  FAILED  ] Suite.Test"), a cross mark before the step, the status last on the step's line
        # ("vid2vid.yaml ... FAILED", pytest -v's "tests/x.py::test_a FAILED [ 50%]", unittest's "... FAIL"), unittest's
        # report of a test and its summary. A launcher's "worker group ... SUCCEEDED" is its own workers' status, not the
        # script's: the run is not healthy beside it. Not a status: a count of none ("[FAILED] 0", "FAILED (failures=0)"),
        # the word quoted in code or a flag ('print("[FAILED]")', "--max-failures"), torchrun's own summary ("train.py
        # FAILED", read by the launcher patterns), a step the script goes on from (GOES_ON: "retrying", "skipping").
        rf"^(?P<status>(?:(?:.*?(?<=[\s>:|]))?\[\s*(?:FAILED|FAILURE|FAIL|Failed|Failure|Fail|✗|✘)\s*\](?!\s*[:=]?\s*0\b)"
        r"|(?:✗|✘|❌)\s*(?!0\b)\w|(?:FAILED|FAILURE|FAIL)[.!]?\s*$"
        r"|\S.*?(?:\s\.{2,}|:|\s-|::\S+)\s*(?:FAILED|FAILURE|FAIL|Failed|Failure)\s*(?:\[\s*\d+%\])?\s*$"
        rf"|(?:FAIL|ERROR): \w+ \([\w.]+\)\s*$|FAILED \((?:failures|errors)=[1-9]"
        # a tool's status field whose value is an error (py-nvtool's "STATUS: Error Not Supported", NVML's words for the call)
        r"|(?:STATUS|Status|status)\s*:\s*(?:ERROR|Error|error)\b(?!\s*[:=]?\s*(?:0|none|null)\b)\s*\S"
        rf"){GOES_ON}(?!.*\b(?i:optional|expected to fail|xfail)\b).*)",
        2,
        (
            "# error : vid2vid_street.yaml >> /tmp/unit_test.log [Failure] in run test bash scripts/test_training.sh",  # NVlabs/imaginaire#131
            "[  FAILED  ] ProcessGroupNCCLTest.testAllreduce (1203 ms)",  # googletest, torch's c10d C++ tests
            "✗ vid2vid_street.yaml",
            "FAILED",  # a script's own echo
            "vid2vid_street.yaml ... FAILED",
            "tests/test_distributed.py::test_allreduce FAILED                         [ 50%]",
            "test_allreduce (test_dist.DistTest) ... FAIL",
            "FAIL: test_allreduce (test_dist.DistTest)",
            "FAILED (failures=1, errors=2)",
            "Status: Failed",
            "STATUS: Error Not Supported",  # Akisoft41/py-nvtool#2 (heldout23): NVML refused the call on laptop GPUs
        ),
        (
            "[OK] vid2vid_street.yaml", "[  PASSED  ] 12 tests.", "[FAILED] 0", "FAILED (failures=0)", "FAILED: 0", "failed=0", "failures: 0",
            'print("[FAILED]")', "--max-failures 3", "FAILED: 0 of 12", "PASSED", "Failure rate: 0.01", "train.py FAILED", "Failures:",
            "[FAILED] download of shard 3, retrying", "✗ apex (optional)", "✓ vid2vid_street.yaml",
            "➜  skypilot git:(master) ✗ sky launch 1.yaml", "✗ 0 failed", "test_bf16 ... expected failure",
            "test_allreduce (test_dist.DistTest) ... ok",
            "status: error_rate=0.01", "Status: Error 0", "STATUS: error: none",
        ),
    ),
    Evidence(
        "pip",
        "pip could not install what the job needs",
        r"^(?:ERROR|error): (?P<pip>Failed building wheel for .+|Could not build wheels for .+|Could not find a version that satisfies .+|"
        r"No matching distribution found for .+|ResolutionImpossible.*|Cannot install .+|subprocess-exited-with-error|"
        r"metadata-generation-failed|legacy-install-failure|failed-wheel-build-for-install.*|Could not install packages .+|"
        # pip before 21.3: the build or install step of a package failed (its output follows: the compiler's error)
        r"Command errored out with exit status \d+:?)",
        3,
        ("ERROR: Could not find a version that satisfies the requirement torch==2.9.9 (from versions: 2.1.0, 2.1.1)",
         "error: metadata-generation-failed", "ERROR: No matching distribution found for flash-attn==9.9",
         "ERROR: Command errored out with exit status 1:"),  # open-mmlab/mmcv#1593 (setup.py develop of mmcv-full)
        ("ERROR: pip's dependency resolver does not currently take into account all the packages that are installed. This behaviour is the source of the following dependency conflicts.",),
    ),
    Evidence(
        "nvrm",
        "the NVIDIA kernel driver reported an error (its NVRM lines)",
        r"\bNVRM:? (?P<nvrm>.*(?:\*\*\* .*\b[Ee]rror\b.*|[Aa]ssertion failed.*|\bfailed!.*))",
        2,
        ("[    2.870841] NVRM objClInitPcieChipset: *** Chipset Setup Function Error!",  # NVIDIA/open-gpu-kernel-modules#489
         "[  217.545140] NVRM nvAssertFailedNoLog: Assertion failed: status == NV_OK @ kernel_gsp_ga102.c:235"),
        ("[    3.105245] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023",
         "NVRM: GPU 0000:01:00.0: Persistence mode is enabled"),
    ),
)

# Shapes the sampled logs showed with the failure line there and no rule reading it (heldout6, dev6):
# a launcher's summary quoted in prose, torch's NCCL process group logging an error whose message the
# paste cut, and a program's own message, pasted without its exception class, that names what was not set
# up and the call that sets it up.
RULES += (
    Evidence(
        "elasticnofile",
        "torchrun's summary that a worker failed without writing an error file (its traceback went to its own stderr)",
        # torch 1.9-1.10's elastic agent, in capitals, in its banner of asterisks and again quoted in prose
        r"(?P<elasticnofile>CHILD PROCESS FAILED WITH NO ERROR_FILE)",
        2,
        ("CHILD PROCESS FAILED WITH NO ERROR_FILE",
         'When I trained the model, it crashed and said " CHILD PROCESS FAILED WITH NO ERROR_FILE". How can I fix it?'),  # OpenDriveLab/LaneSegNet#16
        ("error_file: <N/A>", "INFO:torch.distributed.elastic.multiprocessing.errors.error_handler: no error file defined for parent, to copy child error file"),
    ),
    Evidence(
        "c10error",
        "torch's NCCL process group logged an error (its watchdog or its communicator; the message is cut)",
        # the C++ logger's error level before the file, as torch 1.x ("[E ProcessGroupNCCL.cpp:563]"), 2.x
        # ("[E528 08:54:10.938727404 ProcessGroupNCCL.cpp:629]", glog's "E0528 ... ProcessGroupNCCL.cpp:629]")
        # write it; a warning ([W ...]) or an info line of the same file is no failure
        r"(?:^|(?<=[\s\]:]))\[?E(?:\d{3,4} \d\d:\d\d:\d\d\.\d+(?: +\d+)?)? ?(?P<c10error>(?:[\w.\-]*/)*(?:ProcessGroupNCCL|NCCLUtils)\.[ch]pp:\d+\]?.*)",
        2,
        ("[rank1]:[E528 08:54:10.938727404 ProcessGroupNCCL.cpp:629",  # hao-ai-lab/FastVideo#443 (cut after the file)
         "[rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collectiv"),  # meta-llama/llama3#241 (cut)
        ("[rank0]:[W1010 12:00:00.123456789 ProcessGroupNCCL.cpp:4115] [PG 0 Rank 0] using GPU 0 to perform barrier as devices used by this process are currently unknown.",
         "[I ProcessGroupNCCL.cpp:1126] [Rank 0] ProcessGroupNCCL initialization options: NCCL_ASYNC_ERROR_HANDLING: 1"),
    ),
    Evidence(
        "notsetup",
        "a program's message that something it needs was not set up (pasted without its exception class)",
        # the message starts the line: what was not set or initialised, then its own remedy naming the call or
        # the setting that does it ("please initialize it using init_process_group()"); a logger's warning
        # that a variable is unset and what it uses instead names no remedy
        r"^(?P<notsetup>[A-Z][\w.\-]*(?: [\w.\-]+){0,5} (?:is |has )?not (?:been |yet )?(?:set|initiali[sz]ed|set up|configured)\b[,;:.]? "
        r"please (?:make sure to )?(?:initiali[sz]e|call)\b.*?\b(?:\w+\(\)|init\w*_\w+).*)",
        3,
        ("DeepSpeed backend not set, please initialize it using init_process_group()",  # THUDM/Chinese-Transformer-XL#17
         "Default process group has not been initialized, please make sure to call init_process_group."),
        ("TORCH_CUDA_ARCH_LIST is not set, all archs for visible cards are included for compilation.",
         "WARNING: CUDA_VISIBLE_DEVICES is not set.",
         "[WARNING] NCCL_SOCKET_IFNAME is not set, please set it to the interface to use",
         "Seed not set, please set one with set_seed for reproducible runs"),
    ),
)

# Python's argparse's own messages after "error: " (a script's refusal, read by "argparse" and the launcher patterns with the
# script's name before them; without it, the line is not a tool's of its own)
ARGPARSE_SAYS = (r"(?!unrecognized arguments|the following arguments are required|argument |invalid choice|ambiguous option"
                 r"|one of the arguments|expected one argument)")

# Lines in which a program that is not Python states its own failure, by their shape, whatever the message (issue 35, diagB26:
# the no-error-line rows of the retired parts, a tool's error line no rule read and the answer called inconclusive).
RULES += (
    Evidence(
        "toolerror",
        # Go's and Rust's command-line tools (cobra: podman, kubectl, helm, nvidia-ctk; clap: TGI's launcher; git) write their
        # error first on the line as "Error: " or "error: " and a lower-case message, then exit non-zero. Not the same words
        # from others: a Python logger's level is in capitals before a capitalised message or its logger's name
        # ("ERROR:root:"), a metric's value is a number, a field's is one word ("error: none"); a scheduler's lines (srun's,
        # slurmstepd's) and a script's argparse refusal ("train.py: error: ...") have rules of their own, and a line that says
        # the program goes on another way (GOES_ON) is no failure.
        "a command-line tool reported the error it stopped on (its own \"Error: \" or \"error: \" line, lower-case as Go's and Rust's tools write it)",
        r"^(?!(?:srun|slurmstepd|salloc|sbatch|[\w.\-]+\.py): )(?:[\w.\-]+: )?(?:[Ee]rror): " + GOES_ON + ARGPARSE_SAYS
        + r"(?P<toolerror>(?!(?:none|null|nil|false|true|ok|no|yes|n/a)\b)[a-z][\w'\-]*(?:[ :,]+\S+)+)",
        2,
        (
            "error: invalid value 'True' for '--disable-custom-kernels'",  # huggingface/text-generation-inference#1451 (clap)
            "Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all",  # NixOS/nixpkgs#420638 (podman)
            "Stderr: error: input file not found 'true'",  # ChetanXpro/nodejs-whisper#203 (whisper.cpp's main, through node)
        ),
        (
            "error: None", "Error: 0.0123", "error: none of the above", "error: n/a",
            "error: unrecognized arguments: --device 0",  # argparse's words without the script's name: the launcher rules' to read
            "srun: error: hgx: task 0: Terminated",  # dev7w FalsoMoralista/FGDCC: srun's own, as the job was cancelled after its run
            "slurmstepd: error: couldn't chdir to `/root/burst-buffer': No such file or directory: going to /tmp instead",  # NVIDIA/deepops#1179
            "  -e, --error-file FILE    where to write the error",  # a help text
            "error: retrying in 5 s",
        ),
    ),
    Evidence(
        "systemd",
        # systemd's own words for a unit that is not there or did not start (systemctl, journalctl -u): the service the job
        # needs (nv-fabricmanager, nvidia-persistenced, slurmd, docker, an inference server) is not running
        "systemd reported a service of the job missing or failing (a unit not found, failed to start, its process exited with an error)",
        r"(?:^|(?<=\]: ))(?P<systemd>Unit \S+\.(?:service|socket|target|mount|timer) (?:could not be found|not found)\.?"
        r"|Failed to (?:start|restart|enable|reload) \S+\.(?:service|socket|target): .+"
        r"|Failed to start [A-Z][^.]{2,120}\.\s*$"
        r"|Job for \S+\.service failed\b.*"
        r"|\S+\.service: (?:Main|Control) process exited, code=(?:exited, status=[1-9]\d*|killed|dumped)\b.*"
        r"|\S+\.service: Failed with result '[\w-]+'.*)",
        2,
        (
            "Unit vllm.service could not be found.",  # community-scripts/ProxmoxVED#2047 (heldout25)
            "Feb 02 09:52:07 bibigrid-worker systemd[1]: Failed to start Slurm node daemon.",  # BiBiServ/bibigrid#705
            "Failed to restart docker.service: Unit docker.service not found.",
            "nvidia-fabricmanager.service: Main process exited, code=exited, status=1/FAILURE",
            "Job for nvidia-fabricmanager.service failed because the control process exited with error code.",
        ),
        (
            "Started NVIDIA Persistence Daemon.", "nvidia-persistenced.service: Deactivated successfully.",
            "nvidia-fabricmanager.service: Main process exited, code=exited, status=0/SUCCESS", "-- No entries --",
            "Failed to start training, see below",  # a person's words: no unit, no systemd sentence
        ),
    ),
)

# Rules whose line, quoted in a thread's title, does not lead where the log shows its own lines at error level: the title is
# the reporter's words, and the pasted posts may be another problem (knowledge/story.py `Diagnosis.feed_reported`)
HEADING_SHY = ("toolerror", "systemd")
REGEX = re.compile("|".join(f"(?:{r.regex})" for r in RULES))
BY_KIND = {r.kind: r for r in RULES}
# Literal words one of which every rule's line holds (a line without any costs one search).
WORDS = ("ERROR", "CRITICAL", "FATAL", "PANIC", "level=", '"level"', '"severity"', '"lvl"', "python: ", "python3: ", "python2: ", "python3.", "python.exe: ", "Warning ",
         "CrashLoopBackOff", "OOMKilled", " Error ", "ImagePull", "ErrImage", "CreateContainer", "Init:", "FAILED", "OUT_OF_MEMORY",
         "BOOT_FAIL", "NODE_FAIL", "panic: ", "panicked at", "failed", "passed", "ERROR ", "NVRM", "*** ", "(): ", "double free", "corrupted ",
         "srun: error", "Job step aborted", "slurmstepd: error", "fault", "bus error", "abort", "killed", "illegal hardware", "make", "ninja: ",
         "CMake Error", "FAILED: ", "Error response from daemon", "OCI runtime", "E: ", "×", "BackoffLimitExceeded", "DeadlineExceeded",
         "ContainerCannotRun", "CreateContainerConfigError", "The above exception", "During handling", "MPI_ABORT", "prterun", "orterun", "error: ", "not found", "not a valid identifier", "No such file", "Permission denied", "syntax error", 'File "', "Process ", "Error: ", "Exception in thread", "To enable traceback", "died", "creation task", "Error processing", "processes died", "mpirun ", "Primary job", "Raylet is terminated", "error_handler:", "Error executing job", "sigkill_handler", "Failed to register worker", "terminated by signal", "Error", "Exception", "is not a valid",
         "failed to create process", "Fatal error in launcher", "is not recognized as an internal",
         "ProcessGroupNCCL.", "NCCLUtils.", "please initiali", "please make sure to call", "please call",
         "luajit: ", "lua: ", ".lua:", "unbound variable", "Assertion failed: ", "GGML_ASSERT",
         "FAIL", "Fail", "✗", "✘", "❌", "rror: ", "could not be found", "not found", ".service: ")
# and glog's E/F lines, whose level is a letter before the date
GATE = re.compile(any_of(WORDS).pattern + r"|[EF]\d{4} \d\d:|\d: F \S")  # (and tsl's F after its time stamp)


def evidence_in(text: str) -> tuple[str, str] | None:
    """(kind, the part of the line that shows it) for a line that shows a failure, else None."""
    if GATE.search(text) is None:
        return None
    m = REGEX.search(text)
    if m is None:
        return None
    kind = next((r.kind for r in RULES if m.group(r.kind) is not None), None)
    if kind == "fatallevel" and only_the_level(m.group(kind), text[m.end(kind):]):
        return None
    if kind == "clierror" and INFO_RECORD.search(text, 0, m.start(kind)) is not None:
        return None  # a record its logger wrote at INFO or DEBUG level: a summary of an error the program caught, not its stop
    return (kind, m.group(kind)) if kind else None


# A logger's INFO or DEBUG level before a program's "Error:" words ("[2025-07-16 15:26:52] INFO main: USDJPY: Error: could not
# convert string to float: 'markup'", a run's summary of the items that failed, Bigthugboy/forex_ai_project's logs/main.log)
INFO_RECORD = re.compile(r"(?<![\w-])(?:INFO|DEBUG)(?![\w-])")
# A logger's fatal level in its word (Python's logging "CRITICAL:__main__:", "- CRITICAL -", logfmt's level=fatal), which
# a program may log at for any message: glog's F letter aborts the process, and "FATAL ERROR:" and a daemon's "fatal:"
# are words a program says, not a level it chose.
WORD_LEVEL = re.compile(r"(?i:critical|panic)|FATAL(?! ERROR)|(?<==)\"?fatal")
# Words beyond a failure's that say the program stops or cannot go on ("Loss diverged, stopping", "halting", "loss is nan")
STOPS = re.compile(r"(?i)\b(?:stop\w*|halt\w*|diverg\w*|nan|inf)\b")
# A message says something only in words outside its logger's brackets: a line cut after the level and the logger's
# "[multiproc_executor" (dev4's vLLM workers failing, Qwen2.5-Omni#63) says nothing, and stays the failure it may be.
BRACKETED = re.compile(r"\[[^\]]*(?:\]|$)")
SAID_WORDS = 2


def only_the_level(level: str, message: str) -> bool:
    """A fatal-level line whose only failure sign is its level: the level in its word (WORD_LEVEL) and a message with no word
    of a failure (knowledge/mentions.py SPEAKS, WHAT_FAILED) nor of stopping (ENDING, STOPS): "CRITICAL:__main__:Starting finetuning", a script that logs
    its stages at CRITICAL so that they show (heldout20w, the run finished and saved:
    https://github.com/sgsikorski/NLP-Project/blob/295cca6133abac44b2b55c3f7766494465458a9a/finetune.log). Read as a line
    logged at error level, not a failure. A message of fewer than SAID_WORDS words (a line cut after its level) is none."""
    said = re.findall(r"\b[A-Za-z]{3,}\b", BRACKETED.sub(" ", message))
    return (len(said) >= SAID_WORDS and WORD_LEVEL.search(level) is not None and SPEAKS.search(message) is None
            and WHAT_FAILED.search(message) is None and re.match(ENDING, message) is None and STOPS.search(message) is None)
