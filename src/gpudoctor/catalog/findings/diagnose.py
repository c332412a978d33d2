"""Findings in the area "diagnose" (what `gpudoctor diagnose` reports besides its log
patterns, which have their own pages under docs/patterns/)."""

from __future__ import annotations

from gpudoctor.catalog.kind import FindingKind
from gpudoctor.catalog.findings import ranks as _ranks  # (a module: its kinds stay its own, not this area's)
from gpudoctor.core.findings import Severity

AREA = "diagnose"
EMITTED_BY = "[`gpudoctor diagnose DIR`](../commands/diagnose.md)"


LOG_INCONCLUSIVE = FindingKind(
    id="log-inconclusive",
    severity=Severity.WARN,
    when="exit 1: not healthy",
    area=AREA,
    emitted_by="[`gpudoctor diagnose`](../commands/diagnose.md) of a log or a paste",
    summary="""No line of the input shows a failure, and none shows the run ending well either (an exit
status 0, a finished training, a test that passed, nccl-tests' average bus bandwidth; or, as its last lines, the run's own
words that it is done: a time summary, an early stop, the final model's save, Ultralytics' "Results saved to"). A log cut
before its end and the log of a hang, whose last lines are set-up (NCCL INFO, a banner, a step),
look exactly like this, so `diagnose` does not call it healthy: it exits 1 and says what would
decide it; where the log shows its launcher (torchrun, DeepSpeed, accelerate, Paddle, mpirun, srun,
mp.spawn), the fix adds how that launcher shows each rank's own first error (`under_launcher`), and
where it shows torch elastic's note that the job runs on Windows or macOS, first that torch there has no NCCL. Where a
line no rule reads, logged at error level or a warning of a limit the run met (a version lower than it needs, a feature
not supported), states its own remedy after it ("... which may not be able to train FLUX model properly. Consider
upgrading to a newer version."), the fix leads with that remedy, quoted with its line (`advice`; never a deprecation
notice, nor a line that says the program went on past it). A GPU tool's output (an `nvidia-smi` table or `-q` report, `topo -m`, `dcgmi`,
`ibstatus`) with no fault in it gets the same answer (case `snapshot`): it shows the GPUs at one
moment, not the job, and a hang, a crash or a wrong setting leave it unchanged; the readings that
do show a fault (a GPU lost, ranks spinning in a collective, memory held with no process) are
their own findings. `diagnose` calls an input healthy (`log-no-failure`) only when it shows no
failure and does show the run's end; a run that ends after a warning that it went on degraded (its loss
not finite, the CPU for the GPU) gets this answer too (case `degraded`): it ended, but not well; so does a run that shows
an end beside lines that end on a failure word no rule reads, as a step's status does ("Test vid2vid failed", case `ended-but`): the end may be only a part's (torch
elastic's agent says SUCCEEDED of its own worker group while the script it ran reports a step `[Failure]`); so does a run whose own
line says it did no work (an epoch of zero iterations, zero examples or steps) with no progress after it, whether it shows an end or
not (case `no-work`): an end after no work is no evidence that it worked; and so does an exception the
program caught (case `handled`): a traceback a logger wrote, or one the same process went on after (its steps or rounds counted on), with
no failure after it. A log that several runs were appended to (`>> nohup.out` run again) whose failures all stand before
the program's opening lines stand again (or a Python process of it fails at its start after one ended, or a batch scheduler's
next job starts), and whose later run shows no failure, gets it too (case `restarted`): the failure
is an earlier run's, and is kept as such; so does a log whose failures the job went on past (case `went-on`): a library's
fallback right after it ("Falling back to cpu."), or, where one process writes the log, progress after its last failure
(steps, epochs, losses counting on): the failure is kept, as one the job went on past. So does a paste whose every
failure is one the reporter's next words say is gone since, before another problem ("Now, I do not have that error
anymore ... However, a new error happened"), did not stop the job, or can be ignored (a reply's "you can safely ignore this
error"), or whose words before the paste say the run finished despite it ("I got this error messages, but it still finished",
case `fixed`): the thread's history, or an error survived, kept as such. A thread whose own words quote the program's
message (its title, or a person's sentence that reports it: "I will get "negative dimensions are not allowed"") in words no
rule reads, above a log that shows no failure, gets it too (case `reported`): the message is named as the reporter's, and
what decides it said (a supposition or a question in prose is no report; a quoted message a rule reads is that rule's
finding, which says where it stands). A thread whose words report a failure (an error its title or a sentence quotes, a hang,
a crash, "fails", "slow" in the title) beside output that shows a run that worked (its own end the output's last line, a P2P
test whose copies flow, the framework listing the GPU a no-device error says it lacks) and no failure of its own gets it too
(case `not-shown`): the words' error is not asserted of that output (its finding is kept, as the words'), and the run is not
called healthy either; what would show the failure is said (the failing run's own output; for a hang, the kernel's log). An
input whose last lines are a package build's own progress (setuptools copying files into build/, compile commands, ninja's or
CMake's steps) or pip's (packages collected, downloaded, wheels being built), with no error line, gets it too (case
`build-cut`): a build pasted cut before its error, whose own first error line alone decides the cause; the fix says how to
get that line (`pip install -v ... | tee build.log`, then the first `error` line), never a guessed cause.""",
    evidence="`lines`: how many lines were read; `tool` (case `snapshot`): the tool's first line; `error lines` (case `errors`): the first three lines logged at error level, with their numbers; `lines that speak of an error` (case `mentions`): three lines that report an error or a failure in words no rule reads, with their numbers, the ones that decide most first (an exception's line, then a program's other lines, then a person's sentences; the latest first in each); `advice` (cases `log`, `errors`, `mentions`): the first line no rule reads, at error level or a warning of a limit, that states its own remedy, with its number; `launcher` (cases `log`, `errors`, `mentions`): the launcher the log shows, when it shows one; `progress`, `loss`, `throughput` and `would decide` (case `log`, where the run prints progress lines: knowledge/run_numbers.py): how many of its commonest kind of progress line that logs a loss (three or more, not one line repeated) and the last of them, with its number; the loss they log, first -> last, with their lines; the speed the last one prints (an iteration time, samples or tokens per second, TFLOPS, MFU); and what would decide a question about its numbers (a thread that asks why its accuracy or speed is not what it expected): the log shows them, it does not decide them; `earlier attempt` and `run again` (case `rerun`): the stale failure's finding and the command that ran again, with their lines; `other setup's failure` and `working run` (case `compared`): the failure's finding and the sentence that says the output after it is a working setup's, with their lines; `earlier error`, `said fixed` and `lines that speak of an error` (case `fixed`): the error's finding, the sentence after it that says it is gone since, did not stop the job or can be ignored (or the one before it that says the run finished despite it), and the lines after that sentence that speak of an error, with their lines; `ended` and `degraded` (case `degraded`): the line that shows the run's end, and the first warning that says it went on degraded (a loss or gradient not finite, the CPU or a fallback for the GPU), with its line; `no work` and `ended` (case `no-work`): the run's line that says it did no work, with its number, and the end, when the log shows one; `ended` and `lines that speak of an error` (case `ended-but`): the end, and three lines that end on a failure word (a status), with their numbers; `exception` (case `handled`): the caught exception's line, with its number, and `ended`, the end, when the log shows one; `earlier run`, `started again` and `ended` (case `restarted`): the earlier run's failure, the opening line that stands again (where the program started anew) or what started it anew (a Python process of it failing at its start, the batch scheduler's next job), and the later run's end when it shows one, with their lines; `failure`, `went on` and `ended` (case `went-on`): the failure the job went on past, the line that shows it went on (a fallback, a progress line), and the end when the log shows one, with their lines; `reported` and `lines that speak of an error` (case `reported`): the messages the thread's title and sentences quote, with their lines and places, and three other lines that speak of an error (beside lines the log itself wrote at error level, case `errors` leads and lists them as `reported`). `reported`, `output` and `finding` (case `not-shown`): the reporter's words that report the failure, with their line and place, what in the output shows a run that worked (its line, or the P2P test's reading), and the finding that stood on the words alone, when one did; `last build line` (case `build-cut`): the last line of the build's or pip's own progress the input ends in, with its number.",
    # "log": a run's output without an end; "snapshot": a GPU tool's output, no fault in it
    title={
        "log": "no failure in these {lines} line(s), and nothing that shows the run ended: the log does not decide",
        "snapshot": "no GPU fault in this GPU tool's output ({lines} line(s)), but it shows the GPUs, not the job: it does not decide whether the run was healthy",
        "errors": "{count} line(s) logged at error level, no failure gpudoctor can name, and nothing that shows the run ended: the log does not decide (first: line {first})",
        "mentions": "{count} line(s) speak of an error gpudoctor cannot read, and nothing shows the run ended: the log does not decide whether one of them stopped it (first: line {first})",
        "rerun": "the failure at line {first} is an earlier attempt's: {ran} was run again at line {again}, and nothing after that shows the rerun failing or ending: the log does not decide",
        "compared": "the failure at line {first} is another setup's: line {said} says the output after it is a working run's, and that output shows no failure and no end: the log does not decide",
        "fixed": "the error at line {first} is history: line {said} says {said_what}, and what the log shows after it is no failure gpudoctor reads: the log does not decide",
        "degraded": "the run reached its end, but went on degraded ({warning}, line {first}): not healthy, and the log does not decide whether what it produced is of use",
        "no-work": "line {first} shows the run doing no work ({shown}), and {after}: not healthy, and the log does not say why it had nothing to do",
        "build-cut": "these {lines} line(s) end in {what} (line {first}), with no error: {noun} pasted cut before its end; its end decides whether it failed, its own first error line why, and neither is here",
        "ended-but": "a line shows an end, but {count} line(s) end on a failure word gpudoctor cannot read: not healthy, and the log does not decide whether one of them failed the job (first: line {first})",
        "restarted": "the failure at line {first} is an earlier run's: the program started again at line {again} ({how}), and that run shows no failure; {end}: the log does not decide",
        "went-on": "the failure at line {first} is not the run's end: the job went on past it ({how} at line {at}), and nothing after that fails; {end}: the log does not decide",
        "handled": "an exception ({exception}, line {first}) that the program caught: it logged it, or went on after it; no failure gpudoctor can name, and the log does not decide whether it cost the run anything",
        "reported": "{place} quotes an error that no line of these {lines} line(s) shows (line {first}: {quoted}), in words gpudoctor has no rule for: the paste stops before the run printed it, and the log does not decide what raised it",
        "not-shown": "{place} reports a failure that the output pasted beside it does not show: {how} ({output}): reported, not shown, and the log does not decide",
    },
    why={
        "log": "No line shows a failure, and none shows the run ending: a log cut before its end and a hang's log (its last lines set-up or steps) look the same, so this text does not decide whether the run was healthy.",
        "errors": "A program logged errors (its logger's ERROR/E level) that neither stop a run by themselves nor match a known failure; "
        "no line shows a traceback, a signal or an exit, and none shows the run ending. Components log errors they retry and "
        "survive, and a run cut before its traceback logs them too, so they do not decide whether the run failed.",
        "mentions": "These lines report an error or a failure in words gpudoctor's rules do not read: an error quoted in prose, "
        "another runtime's or framework's own format, a program's own message. gpudoctor cannot tell whether one of them ended "
        "the run or was survived, and nothing shows the run ending (a log cut before its end and a hang's log look the same), "
        "so the log does not decide; the lines are the lead.",
        "snapshot": "Nothing in it shows a GPU fault (no GPU lost, no reading that failed), and no reading (utilisation against power, memory against processes) decides that ranks are stuck: one moment cannot tell ranks spinning in a collective from a run between two steps, so a reading that looks like it is told below as that, undecided; and the output is one moment of the GPUs: a job that hangs in its rendezvous, crashes or runs with a wrong setting leaves it unchanged.",
        "rerun": "The paste is a terminal session: the failure it shows is in the output of a command that the user then ran again "
        "(corrected or not), and what the second run printed shows no failure and no end. The first run's failure is not the job's "
        "(its finding is kept, as an earlier attempt's), and a paste cut while the rerun starts or hangs looks the same as one that went on well.",
        "fixed": "The text right after this error says it is not what ended the run: it is gone since (\"I do not have that error "
        "anymore\", \"if I install tensorpack==0.9.4 it works\"), it did not stop the job (\"they don't seem to kill the job\"), "
        "or a reply says it can be ignored (\"you can safely ignore this error\"); or the text right before the paste says the run "
        "finished despite it (\"I got this error messages, but it still finished\"). "
        "Threads paste their history (an issue's title, an earlier paste); the error's finding is kept, as that history, and what "
        "the log shows after it holds no failure gpudoctor reads: the problem left may be in words it does not read, cut, or a hang.",
        "compared": "The paste compares two setups: a sentence says the output after it is from one that works (\"In ubuntu 20.04 "
        "(working phosa) I see:\"), and the failure it shows stands before that sentence (the failing setup's, as the thread's "
        "title quotes it). The working run's output shows no failure and no end, and the failing setup's own output is not "
        "here: the failure's finding is kept, as the other setup's, and the log does not decide what failed there.",
        "ended-but": "A line shows an end, but an end is often only one part's: a launcher's of its own worker group (torch elastic's "
        "SUCCEEDED), a stage's or a test's; and other lines end on a failure word no rule reads, as a status does: a script's or a "
        "harness's status for a step, a program's own message, an error logged and maybe survived. Whether one of them failed the "
        "job is what the end does not say, so the run is not called healthy; the lines are the lead.",
        "handled": "The program caught this exception: a logger wrote its traceback (a program's own `log(ERROR, traceback.format_exc())`, "
        "or a message of the program's own that holds it, its header after the message's words, `logger.error(f\"..., error happened with msg: "
        "{{traceback.format_exc()}}\")`, "
        "or a logger's error record that quotes its message right before it, `logger.exception(f\"...: {{e}}\")`, with the logger's records going on "
        "after it: the next item processed), or the same process went on after it (its steps, epochs or rounds counted on, a fallback, "
        "a server that came up and waits for requests, its end), or it is Python's logging's own error (a record it could not format "
        "or write: logging prints the error's traceback, the call stack and the record's `Message:` and `Arguments:`, and returns), and nothing after it "
        "reports a failure. Python prints an exception that ends a process with a bare traceback, and the process prints nothing "
        "after it; a caught one ends the run only if the program then gives up, and what it did without the thing that failed (a "
        "backend, a file, a step it skipped) is what may matter. The log does not show either: it is not named an error of the "
        "run, nor is the run called healthy.",
        "restarted": "The file holds more than one run: lines the program printed as it started stand again after the failure "
        "(a banner, its settings, a library's set-up notice), a Python process of it failed at its start after one had ended, "
        "or a batch scheduler's next job starts (LSF's report, the line after Slurm's cancel), so the program was started anew "
        "after it (`>> nohup.out` run again, a job requeued), and what the later run printed shows no failure. The failure is an earlier run's, not the "
        "later one's (its finding is kept, as an earlier run's); the later run's own lines are all that speak of it, and a "
        "restart read from repeated lines is not the job's exit status: the log does not decide that the job is healthy.",
        "went-on": "A process that ends in a traceback prints nothing after it; this log goes on past the failure. Either a "
        "library printed an error and said it goes on another way (a fallback: the CPU for a GPU backend that did not load, "
        "eager code for what torch.compile could not compile), or the lines after the log's last failure are a run's own "
        "progress (its steps, epochs or losses counting on), the same process's (the error was survived) or a later run's "
        "(the program was started again in the same file; after a traceback the script's own top level raised, uncaught, one "
        "line of progress says so: that process wrote nothing more), or the job's own words that its work is done (its "
        "training or fine-tuning done, after the failure), or the library's line was only a warning and the run's progress "
        "follows it, or the shell could not run a set-up step of the batch script (an environment's activate) and the job's "
        "own output follows, or the line is the program's own record at INFO or DEBUG level that a part of it is not there and it "
        "goes on without it (an optional backend \"available: False\" with the import error as its reason, a library \"not available\"), "
        "or its host program said it goes on without a plug-in whose import failed (ComfyUI's custom nodes, the Stable Diffusion web UI's "
        "extension scripts), or a logger wrote the traceback under its own DEBUG or INFO record and its next record follows, or the "
        "program's own record follows a tool the shell could not find (a script asking nvidia-smi for the GPUs as it starts). "
        "Progress and an end are read so only where one process writes the log: "
        "another rank's progress after one rank's failure is a hang to come, not a job that went on. The failure is not the run's end (its finding is kept, as one the job went on past); what the "
        "run did without the thing that failed, and how it ends, is what the log does not decide.",
        "reported": "The thread's own words quote the program's message: its title, or a sentence that reports it (\"I will get ...\", "
        "\"it gives this error: ...\", \"still reports ...\"), and no line of the log shows it: the paste stops before the run printed it, "
        "or leaves it out. gpudoctor has no rule for these words and does not guess their cause; the message is the lead, and the run's "
        "own line of it, with the traceback or the lines above it, decides what raised it.",
        "not-shown": "The paste's words (the thread's title, a person's sentence) report a failure, and the output pasted beside them "
        "shows a run that worked: its own end is the output's last line (a test that passed, nccl-tests' average bus bandwidth, "
        "a finished training), a pasted P2P test shows peer copies flowing, or the framework lists the GPU that the words' error "
        "says it cannot see; and no line of that output shows a failure. Threads paste another run beside the words: a "
        "comparison machine's, a commenter's working setup, or a run that completed while the machine or a later run failed. "
        "The words are what the reporter saw somewhere; the output is what ran here: neither is the words' error asserted of "
        "this output, nor is the run called healthy, since the words report a failure. What decides is the failing run's own "
        "output, and for a machine that hangs or freezes, the kernel's log of the boot that hung.",
        "degraded": "A line shows the run ending, but a warning before it says the run went on degraded: its loss or gradients were "
        "not finite (the steps after it learned nothing, or were skipped), or it ran on a slower path than it was set up for (the "
        "CPU, a fallback kernel). The run did not crash, so no error is named; it did not end well either, so it is not called "
        "healthy: whether the model or the output it left is of use is what decides, and the log does not show it.",
        "build-cut": "The input's last lines are a package build's own output (setuptools copying the package into build/, the compile "
        "commands ninja or setuptools run, CMake's steps) or pip's (packages collected, downloaded, wheels being built), and no line "
        "shows an error: the paste stops before the build's end. A build of GPU code fails on one line of its own, further down: "
        "the toolkit not found (CUDA_HOME, nvcc), a GPU architecture or host compiler this nvcc refuses, a header or library not "
        "found, a compiler killed for memory; the lines that only say it failed (setuptools' \"command '.../nvcc' failed\", ninja's "
        "CalledProcessError, pip's \"Failed building wheel\") come after it. pip shows the build's output only with -v, and its error "
        "line is easy to miss among thousands of compile lines: none is guessed here.",
        "no-work": "The run's own line says it did no work: an epoch or a loop of zero iterations (a bar that counted nothing), a "
        "total of zero examples, samples, batches or steps; and no progress after it "
        "says otherwise. A run that ends there trained nothing, so its end is no evidence that it worked; one whose log stops "
        "there may be stuck or cut, but it had nothing to work through. Most often its data loader yields no batch (a data set "
        "that is empty, or smaller than one batch where the last partial batch is dropped; a path, a glob or a filter that "
        "matched no file; a bucket or a sampler that gives this process nothing).",
    },
    fix={
        "log": "{advice}tail -n 200 train.log | gpudoctor diagnose -   # the end of the log decides it; or give the job's exit status (echo $? after it), or run it under gpudoctor run --nproc N --hang-timeout 300{under_launcher}",
        "errors": "{advice}tail -n 200 train.log | gpudoctor diagnose -   # the end decides it (a traceback, an exit status); or search the error line in the project's issue tracker{under_launcher}",
        "mentions": "{advice}tail -n 200 train.log | gpudoctor diagnose -   # the end decides it (a traceback, an exit status); if a line above is the failure, its own words are the search: the program's docs or issue tracker; a job that stopped moving: gpudoctor run --nproc N --hang-timeout 300{under_launcher}",
        "snapshot": "gpudoctor diagnose train.log   # the job's own output decides it; nvidia-smi; sleep 60; nvidia-smi   # a second reading a minute later; gpudoctor check   # the GPUs, driver and torch as the job sees them",
        "rerun": "COMMAND 2>&1 | tee rerun.log; echo \"exit status $?\" >> rerun.log; gpudoctor diagnose rerun.log   # the rerun's whole output and exit status decide it; a rerun that stops moving: gpudoctor run --nproc N --hang-timeout 300",
        "fixed": "tail -n 200 train.log | gpudoctor diagnose -   # the run as it fails now: its end decides it (a traceback, an exit status); the lines above that speak of an error are the lead; a job that stopped moving: gpudoctor run --nproc N --hang-timeout 300",
        "compared": "python train.py 2>&1 | tee failing.log; gpudoctor diagnose failing.log   # on the failing setup: its whole output decides it; then compare the two setups' versions (gpudoctor check on each)",
        "ended-but": "read the lines above: a step a script or a harness reports failed is the failure, and that step's own output (its log, the command it ran) says why; the job's exit status decides whether it failed (echo $? after it)",
        "restarted": "read the earlier run's failure at line {first} if it may come back (its own finding is listed); the later run's exit status decides it (echo $? after it); write each run to its own file (python train.py > run-$(date +%s).log 2>&1) so that one run's failure is not read as another's",
        "went-on": "read the failure at line {first} if it may come back (its own finding is listed): a fallback is a part that did not load (install or configure it, or the run stays on the slower path); the job's exit status decides the run (echo $? after it); write each run to its own file (python train.py > run-$(date +%s).log 2>&1)",
        "went-on-set-up": "fix the set-up step at line {first} in the batch script (source <env>/bin/activate with the environment's real path, or conda activate <env> after conda's own set-up): until then the job runs in whatever Python the node gives it; the job's exit status decides the run (echo $? after it)",
        "went-on-tool": "nvidia-smi was not found at line {first}, and the program went on after it (a script that asks it for the GPUs as it starts): put the driver's tools on the PATH if you want that listing (Windows: `where nvidia-smi`; current drivers install it in C:\\Windows\\System32, older ones in C:\\Program Files\\NVIDIA Corporation\\NVSMI; Linux: the driver's nvidia-utils package); whether the job uses the GPU: python -c \"import torch; print(torch.cuda.is_available())\"; the job's exit status decides the run (echo $? after it)",
        "went-on-plug-in": "the plug-in's failure at line {first} (its own finding is listed, with its fix) is the host program's to skip: fix or reinstall that plug-in (install what it imports, in the host's own Python) or remove it if you do not use it; the host went on without it, and the job's own output after it decides the run",
        "handled": "read the exception at line {first} and the lines before it: a missing optional part (an extra not installed, a backend, a file) is installed or configured to silence it; the job's exit status decides whether the run failed (echo $? after it)",
        "reported": "grep -n -F -- {grep} train.log   # the run's own line of it: the traceback or the lines above it name what raised it; tail -n 200 train.log | gpudoctor diagnose -   # the run's end as it printed it; if the message is the program's own check, its words are the search: the program's docs or issue tracker",
        "not-shown": "COMMAND 2>&1 | tee failing.log; echo \"exit status $?\" >> failing.log; gpudoctor diagnose failing.log   # the failing run's own output decides it: this paste shows a run that worked",
        "not-shown-hang": "journalctl -k -b -1 | tail -n 200; dmesg -T | grep -i -E 'xid|nvrm|nccl|lockup|hung' | tail -n 50   # a system hang or freeze leaves the kernel's lines (an Xid, NVRM, a soft lockup) in the boot that hung; the hanging run's own output (COMMAND 2>&1 | tee hang.log) shows where it stopped",
        "build-cut-build": "pip install -v --no-build-isolation PACKAGE 2>&1 | tee build.log; grep -n -m1 -B2 -A3 -E 'error|fatal|Killed' build.log   # the build's first error line decides why it failed (a CMake build: cmake --build build 2>&1 | tee build.log); paste that line and the ones before it",
        "build-cut-install": "pip install -v PACKAGE 2>&1 | tee install.log; grep -n -m1 -B2 -A3 -E 'error|ERROR|fatal|Killed' install.log   # pip's first error line (or, for a package built from source, the build's own) decides why the install failed; paste that line and the ones before it",
        "no-work": "check what the run was given at line {first}: the data set's size and path (print(len(dataset)), len(loader) before training; the files its path or glob matches), the batch size against it (drop_last), and what the sampler or bucket gives each process; rerun until the counts above zero show before its end",
        "degraded": "gpudoctor diagnose --explain {warning}   # the warning's own fix; then check what the run left (evaluate the saved model, compare its speed with a run on the GPU) before trusting it",
    },
)


# A hang the reporter states beside a log that stops without an error (knowledge/said_hang.py, hang/stage.py): what usually
# hangs at the stage where the log stops, in the live hang doctor's words for that stage (its rank findings' why), and an
# inference server's in a server's words (knowledge/serving.py).
_PY_SPY = "py-spy dump --pid PID   # on every rank: the line each one waits on"
_RUN = "gpudoctor run --nproc N --hang-timeout 300 train.py   # stops the hang and names the rank furthest behind, with its stack"
_SETUP_WHY = (
    "After the rendezvous and before a step: a data loader that never returns (workers, /dev/shm), a model "
    "build or a checkpoint load one rank is still doing, or the first collective (DDP's broadcast of the parameters, a "
    "barrier) that one rank never reaches or whose transport never completes (PCIe P2P, the network)."
)
# (set-up that printed what it does, or that the reporter names: before the rendezvous or after it, the log does not say)
_SETUP_AT_WHY = (
    "Set-up that printed nothing more: the data (a loader or a dataset build that never returns: workers, /dev/shm), the "
    "model's build or a checkpoint load one rank is still doing, or the process group: its rendezvous, or its first "
    "collective (DDP's broadcast of the parameters, a barrier) that one rank never reaches or whose transport never "
    "completes (PCIe P2P, the network)."
)
_SETUP_FIX = (
    f"{_PY_SPY}; NCCL_DEBUG=INFO (does the first collective's communicator come up?); NCCL_P2P_DISABLE=1 to "
    f"rule out P2P; num_workers=0 to rule out the data loader; {_RUN}"
)
_CUT_WHY = (
    "The paste ends inside a line, or inside a block the program prints whole (an argument dump whose closing brace never "
    "comes): whoever pasted the log stopped there, not the program. The job got further than these lines, and where it "
    "hangs is in the lines the paste leaves out."
)
_CUT_FIX = "tail -n 50 LOG   # paste the log's last lines, where the job stopped, not its first ones"
_SHARD_PY_SPY = "py-spy dump --pid PID   # on every shard or worker process of the server: the line each one waits on"
_SERVING_SETUP_WHY = (
    "A server that stops while it starts waits on its shards: one still loading or downloading its weights, one that "
    "died while the launcher waits for it to be ready, or the NCCL communicator between the shards that never comes up "
    "(P2P between the GPUs, a container's /dev/shm too small)."
)
_SERVING_SETUP_FIX = (
    f"{_SHARD_PY_SPY}; NCCL_DEBUG=INFO (does the shards' communicator come up?); NCCL_P2P_DISABLE=1 to rule out P2P; "
    "give a container shared memory (docker run --shm-size 1g, or --ipc=host)"
)
_SERVING_WHY = (
    "An inference server that stops answering without an error is waiting: on one of its shards (a shard process stuck or "
    "dead while the others wait for it in NCCL between the shards), on requests that do not fit what its KV cache and "
    "batch were sized for (long prompts at once), or on the host (a container's /dev/shm, CPU memory)."
)
_SERVING_FIX = (
    f"{_SHARD_PY_SPY}; NCCL_DEBUG=INFO (the shards' communicator); send one request at a time, then lower the batch and "
    "context limits (TGI --max-batch-prefill-tokens / --max-total-tokens, vLLM --max-num-seqs / --max-model-len, a "
    "--cuda-memory-fraction or --gpu-memory-utilization below 1) to see whether the size of what is served decides it"
)

LOG_SAID_HANG = FindingKind(
    id="log-said-hang",
    severity=Severity.WARN,
    when="exit 1: the reporter's words decide that the run hangs; no line of the log decides why",
    area=AREA,
    emitted_by="[`gpudoctor diagnose`](../commands/diagnose.md) of a paste",
    summary="""The reporter says the job hangs ("the training gets stuck during the first iteration", "the program stuck
and only shows these", "hangs forever at init_process_group"), and the log beside the words shows no failure and no end.
A log cut while the run was still moving looks the same, so the log alone never decides a hang (`log-inconclusive`); the
sentence does. Not a statement of a hang: a question ("does it hang?"), a negation ("it does not hang", "no longer
stuck"), a hang resolved ("it used to hang until I set ..."), a hypothetical ("if it hangs", "this can cause the process
to hang"), a program's own line (a warning, NCCL's, a config's `freeze_layers`) or a metric that is stuck ("stuck at a
high loss"). Where the log stops (the last program lines of the sentence's paste) names the stage, and the stage what
usually hangs there: the rendezvous (`init_process_group`, its words picked by how many ranks logged joining: fewer
than all, all, or no count), the set-up after it (data, the model, the first collective; said with what set-up printed
last: its arguments, the model's summary, its weights loading), mid-training (a step with its number), an evaluation or
a checkpoint (rank 0's work while the others wait in a collective). A paste that ends inside a line or inside a block
the program prints whole (`Args {` with no `}`) was cut by whoever pasted it: no place the job stopped (case `cut`).
An inference server's log (TGI, vLLM, SGLang, ollama, Triton, llama.cpp's server: its own lines) gets a server's words
(cases `serving-*`): shards, requests, the KV cache, NCCL between the shards. A warning, not an error: the log itself (a
watchdog, a timeout) would decide it, and those are their own findings; an error the log shows stays the headline.""",
    evidence="""`said`: the reporter's sentence, with its line; `last line`: the program's line that shows where the run
stopped, with its number (case `unshown`: none near the sentence; where the log's lines show no stage and the sentence names
one, "stuck at \\"initializing ddp\\"", "after 3-5 epochs", the sentence's line, and the title says "the reporter's words");
`stage`; `joined` (cases `rendezvous-partial`, `rendezvous-all`): how many ranks logged joining ("MEMBER: 1/4");
`step` (case `training`): the last step, iteration or epoch; `set-up at` (cases `setup-at`, `setup-said`): what set-up
printed last, or the set-up step the reporter names where the log shows none of the program's lines;
`cut` (case `cut`): where the paste stops; `extensions root` (case `extension-build`): the folder torch builds the op in; `server` (cases `serving-*`): the line that shows the log is a server's.""",
    title={
        "rendezvous": "the reporter says it hangs (line {said}): it stops in the rendezvous, at init_process_group ({shown} line {last})",
        "rendezvous-partial": "the reporter says it hangs (line {said}): it stops in the rendezvous, where only {joined} ({shown} line {last})",
        "rendezvous-all": "the reporter says it hangs (line {said}): it stops in the rendezvous: {joined}, and none got past init_process_group ({shown} line {last})",
        "setup": "the reporter says it hangs (line {said}): it stops after set-up, before a step is logged ({shown} line {last})",
        "setup-at": "the reporter says it hangs (line {said}): it stops during set-up, after {at} ({shown} line {last})",
        "setup-said": "the reporter says it hangs (line {said}): it stops during set-up, {at} ({shown} line {last})",
        "training": "the reporter says it hangs (line {said}): it stops mid-training ({step}; {shown} line {last})",
        "evaluation": "the reporter says it hangs (line {said}): it stops at an evaluation or a checkpoint ({shown} line {last})",
        "cut": "the reporter says it hangs (line {said}); the paste is cut at line {last}, {cut}: it does not show where the job stopped",
        "extension-build": "the reporter says it hangs (line {said}): it stops as torch builds or loads a JIT extension in {at} ({shown} line {last})",
        "unshown": "the reporter says it hangs (line {said}); the log does not show where it stopped",
        "serving-setup": "the reporter says the server hangs (line {said}): it stops while the server starts ({shown} line {last})",
        "serving-setup-at": "the reporter says the server hangs (line {said}): it stops while the server starts, after {at} ({shown} line {last})",
        "serving-requests": "the reporter says the server hangs (line {said}): it stops while serving requests ({shown} line {last})",
        "serving-cut": "the reporter says the server hangs (line {said}); the paste is cut at line {last}, {cut}: it does not show where the server stopped",
        "serving-unshown": "the reporter says the server hangs (line {said}); the log does not show where it stopped",
    },
    why={
        "rendezvous": "Every rank waits in init_process_group until all of the world have joined, and the log does not say how "
        "many did: one that never got there (stuck or slow before init: imports, data loading) or that cannot reach "
        "MASTER_ADDR:MASTER_PORT keeps the others waiting.",
        "rendezvous-partial": "The ranks this log never shows joining did not reach init_process_group (or print to another "
        "node's log): the ones that joined wait there for them until the timeout. A rank that never gets there is stuck or "
        "slow before init (imports, data loading), or cannot reach MASTER_ADDR:MASTER_PORT.",
        "rendezvous-all": str(_ranks.RENDEZVOUS_HANG.why["watchdog"]),  # type: ignore[index]
        "setup": _SETUP_WHY,
        "setup-at": _SETUP_AT_WHY,
        "setup-said": _SETUP_AT_WHY,
        "training": str(_ranks.RANK_HUNG.why),
        "evaluation": "Evaluation and checkpointing are often rank 0's alone: the other ranks go on to the next collective "
        "and wait there for it; a long evaluation outlives the collective's timeout, and one that only some ranks run (a "
        "`dist` call inside `if rank == 0:`) never returns.",
        "cut": _CUT_WHY,
        "extension-build": "torch.utils.cpp_extension builds an op the first time it is loaded (DeepSpeed's and ColossalAI's ops, a "
        "project's CUDA kernels) in the extensions root it prints, and takes a lock file there first so that one process builds "
        "while the others wait. A build killed before it ended (Ctrl-C, an OOM kill, a job's time limit) leaves that lock, and "
        "every later run waits on it forever without a message; a first build on a slow machine also takes minutes with nothing printed.",
        "unshown": "A job that stops moving without an error waits somewhere: in the rendezvous, in a collective a rank "
        "never reaches, in a data loader. The log does not show where this one stopped.",
        "serving-setup": _SERVING_SETUP_WHY,
        "serving-setup-at": _SERVING_SETUP_WHY,
        "serving-requests": _SERVING_WHY,
        "serving-cut": f"{_CUT_WHY} {_SERVING_WHY}",
        "serving-unshown": _SERVING_WHY,
    },
    fix={
        "rendezvous": "NCCL_DEBUG=INFO TORCH_DISTRIBUTED_DEBUG=DETAIL on every rank (which ones reach init_process_group); "
        f"{_ranks.RENDEZVOUS_HANG.fix['watchdog']}; {_RUN}",  # type: ignore[index]
        "rendezvous-partial": "py-spy dump --pid PID   # on a rank that never logged joining: what it does before "
        f"init_process_group; nc -zv $MASTER_ADDR $MASTER_PORT from its host; {_RUN}",
        "rendezvous-all": f"{_ranks.RENDEZVOUS_HANG.fix['watchdog']}; NCCL_DEBUG=INFO TORCH_DISTRIBUTED_DEBUG=DETAIL; {_RUN}",  # type: ignore[index]
        "setup": _SETUP_FIX,
        "setup-at": _SETUP_FIX,
        "setup-said": _SETUP_FIX,
        "training": f"{_PY_SPY}; TORCH_DISTRIBUTED_DEBUG=DETAIL (a collective one rank calls and another does not); "
        f"NCCL_DEBUG=INFO NCCL_P2P_DISABLE=1 to rule out P2P; {_RUN}",
        "evaluation": f"{_PY_SPY}; run the evaluation or the save on every rank, or end rank 0's with dist.barrier() and "
        f"give init_process_group(timeout=...) the time it takes; {_RUN}",
        "cut": f"{_CUT_FIX}; then {_PY_SPY}; {_RUN}",
        "extension-build": "py-spy dump --pid PID   # a wait in torch's FileBaton.wait is the build lock; then, with no build running: "
        "find {at} -name lock   # remove the op's build folder that holds it (rm -rf {at}/<op>), or give the run a fresh "
        "TORCH_EXTENSIONS_DIR=/tmp/torch_ext_$USER; a build still running: wait for it, or pre-build the ops (DS_BUILD_OPS=1 pip install deepspeed)",
        "unshown": f"{_PY_SPY}; NCCL_DEBUG=INFO TORCH_DISTRIBUTED_DEBUG=DETAIL; NCCL_P2P_DISABLE=1 to rule out P2P (PCIe ACS "
        f"on GPUs behind switches); {_RUN}",
        "serving-setup": _SERVING_SETUP_FIX,
        "serving-setup-at": _SERVING_SETUP_FIX,
        "serving-requests": _SERVING_FIX,
        "serving-cut": f"{_CUT_FIX}; then {_SERVING_FIX}",
        "serving-unshown": _SERVING_FIX,
    },
)


# What to do when a GPU ran out of memory, whichever line says so: the run's own (knowledge/patterns/cuda.py cuda-oom) or the
# reporter's words (LOG_SAID_OOM)
OOM_FIX = ("nvidia-smi   # free the GPU of other processes; then lower the per-GPU batch size or the sequence length, use gradient "
           "accumulation / activation checkpointing, shard the model and optimizer state across the GPUs (ZeRO-3, FSDP) or offload "
           "them to CPU memory, or set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True; if nvidia-smi shows the other GPUs idle "
           "while this one is full, the job runs as one process: start one per GPU (torchrun --nproc_per_node=N, or mpiexec -n N "
           "for code launched with MPI)")

LOG_SAID_OOM = FindingKind(
    id="log-said-oom",
    severity=Severity.WARN,
    when="exit 1: the reporter's words say the run ran out of GPU memory; no line of the log shows the error",
    area=AREA,
    emitted_by="[`gpudoctor diagnose`](../commands/diagnose.md) of a paste",
    summary="""The reporter says the run ran out of GPU memory in their own words ("I got OOM error when I run ./run.sh", "the
training script run into OOM with 48 GB memory", a title "CUDA out of memory during training with A100 GPUs", "显存爆了",
"爆显存", "显存不足" in Chinese), and the log beside the words does not show the error: it shows no failure and no end (case
`undecided`: a paste cut before its error, a GPU tool's table), or a traceback cut before its exception line (case `cut`).
The words name the failure's family; they do not show which allocation failed, how much it asked for or what else held the
GPU, so this is a warning, and the run's own line decides it. Not a statement of it: a question ("CUDA OOM?"), a negation,
a way to avoid it or a hypothetical ("without OOM", "to avoid OOM", "if it goes OOM", "不会爆显存"), an out of memory said
resolved, host memory (the kernel's OOM killer, RAM: the host ran out, not a GPU), a program's own line (a logger's "... the
buffer to avoid OOM"; torch's "CUDA out of memory. Tried to allocate ..." is the run's own line, `cuda-oom`).""",
    evidence="""`said`: the reporter's words, with their line; `traceback` (case `cut`): the line where the cut traceback
starts.""",
    title={
        "undecided": "the reporter says the run ran out of GPU memory (line {said}); no line of the log shows the error",
        "cut": "the reporter says the run ran out of GPU memory (line {said}); the traceback at line {at} is cut before its exception line",
    },
    why="""A GPU's memory was used up: what the run put on it (weights, optimizer state, activations of a batch) did not
fit, or another process held part of it. Only the reporter's words say so here: the run's own message (torch's "CUDA out of
memory. Tried to allocate N GiB", with the GPU's total, free and reserved memory) is not in the log, so it does not show
which step asked for how much.""",
    fix="grep -n -i -E 'out of memory|OOM' run.log   # the run's own line decides it, and shows what it asked for "
    f"(gpudoctor diagnose --explain cuda-oom); {OOM_FIX}",
)


LOG_NO_FAILURE = FindingKind(
    id="log-no-failure",
    severity=Severity.OK,
    area=AREA,
    emitted_by="[`gpudoctor diagnose`](../commands/diagnose.md)",
    summary="""No known failure pattern matched any line of the log (harmless notices, such as torchrun's
`OMP_NUM_THREADS` line, may still be listed as info).""",
    evidence="`lines`: how many lines were read.",
    title={
        "log": "no known failure in {lines} line(s)",
        "outcome": "every one of the {ranks} rank(s) finished",
    },
    more_why="Nothing in this log says the job failed.",
    more_fix="""Nothing to fix. If the job did fail, the log may not hold the failing rank's output: diagnose
the run folder or every rank's log, and rerun with more to go on:

```sh
gpudoctor diagnose /path/to/run_folder/
NCCL_DEBUG=WARN TORCH_SHOW_CPP_STACKTRACES=1 torchrun ...
```""",
)


RUN_FOLDER_INCONSISTENT = FindingKind(
    id="run-folder-inconsistent",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by="[`gpudoctor diagnose DIR`](../commands/diagnose.md) on a run folder with gpudoctor's `outcome.json`",
    summary="""The folder's `outcome.json` contradicts itself: a rank recorded as finished or stopped that
also raised an exception, a rank recorded as finished with a non-zero exit code, ranks stopped
"after another rank failed" where no rank failed. gpudoctor's supervisor never writes such a file:
it was damaged or edited. The verdict drawn from the rest of the folder is listed after this one,
and the folder is never reported healthy.""",
    evidence="`outcome.json`: each contradiction, in words.",
    title="the run folder's {file} contradicts itself: {contradiction}",
    why="A verdict drawn from files that disagree can name the wrong rank, or call a failed job healthy.",
    fix="diagnose the ranks' own logs (gpudoctor diagnose DIR/rank1.stderr), or rerun the job for a folder written whole",
)


RANK_EXCEPTION = FindingKind(
    id="rank-exception",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""A torchrun error file (`error.json`, written by `@record`) holds an exception that no failure
pattern recognises. The earliest one is marked as the first failure (`role: cause`); later
ones are usually consequences of it.""",
    evidence="`role`, `rank`, `error_file`, `message`, and `traceback` (its last lines).",
    title={
        "first": "{who} raised {exception} (first failure)",
        "later": "{who} raised {exception}",
    },
    why="The rank's own exception, as torchrun's @record wrote it; the earliest error file is where the job failed first.",
    fix="read the traceback in {path}: its last frame in your code is the line to fix",
)


PICKLE_REFUSED = FindingKind(
    id="pickle-refused",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""A file in the run folder named like a Flight Recorder dump (its name ends in a rank number)
is a pickle that names something to import and call (`os.system`, a class, a checkpoint's tensor
rebuilder). gpudoctor did not load it: nothing it names was imported or run.""",
    evidence="`file`: the file, relative to the folder; `refused because`: what it names.",
    title="{file} not read: a pickle that names code to run ({names})",
    why="Unpickling imports and calls whatever the file names, so a pickle from someone else can run any command as you. A Flight Recorder dump holds only plain data (dicts, lists, strings, numbers) and names nothing; gpudoctor reads only such pickles.",
    fix="python -m pickletools {path} | grep -E 'GLOBAL|INST|REDUCE'   # see what it would run; delete it unless you made it",
)


FILES_NOT_READ = FindingKind(
    id="files-not-read",
    severity=Severity.WARN,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""Part of the run folder was not read: binary files, compressed logs this Python cannot
decompress (zstd before Python 3.14), damaged archives, malformed error files or Flight Recorder
dumps, broken links, folders deeper than 6 levels, files past the first 2,000.""",
    evidence="One entry per item (up to 20): its path and why it was not read; `--json` lists all of them in `data.not_read`.",
    title="{count} item(s) of the folder not read: {reasons}",
    why="What was not read cannot show the failure: the verdict covers only the files that were read.",
    fix="decompress or move the logs you need into the folder (at most 2,000 files, 6 levels deep), or diagnose one log at a time: gpudoctor diagnose FILE",
)


UNRECOGNISED_FAILURE = FindingKind(
    id="unrecognised-failure",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by="[`gpudoctor diagnose`](../commands/diagnose.md)",
    summary="""The log shows that the job failed, but no failure pattern explains it. Read from the
shape of the log, whatever the message: a Python traceback (any exception class, chained or
`raise ... from`), a fatal signal or a non-zero exit in a launcher's, agent's or srun's line,
`Fatal Python error`, a C++ `terminate called` / `what():`, CUDA / NCCL / gloo error lines, a
device-side assertion, a store barrier still waiting for ranks; a traceback cut at its top or its
bottom, torch's C++ backtrace without its message; the failure lines of launchers, shells, Hydra
and Ray, a command-line tool's own lower-case `error:` line, systemd's unit not found or failed to start
(`gpudoctor.knowledge.evidence`); in a thread, the one line a sentence of the reporter's introduces as
the error ("but it reports the error" above "`No slot 2 specificied on host work1`", evidence `kind`
`introduced`: knowledge/reported.py), whatever its words. Also what a Python exception
becomes when it was not raised in the user's own code (or when something in it points at the
environment: a failed import, a missing symbol, a GPU feature, a launcher setting).""",
    evidence="""`kind` and `what` (the exception class, the signal, the exit code), `message`, `raised_from`
(a chained exception), `time`, `raised_in` (the frame that raised) and `your_frame` (the last
frame in the user's own code), `raised_by` (`your code`, or the package whose frame raised, however
it was installed: site-packages, dist-packages, a conda package, an egg, Python's own library, an
editable checkout of a known library), `remedy` and `remedy_line` (what the message itself says to
do, quoted, and its line), `signature` (the error with numbers, paths and addresses normalised),
`project` and `search` (a search of that project's GitHub issues for it), the rank and node, and
the log lines.""",
    more_why="""gpudoctor does not guess a cause it cannot show; the first failure it names is where to look,
and later errors on other ranks are usually its consequences.""",
    more_fix="""The finding's fix starts with the remedy the message itself states, when it states one
(`the message itself says: "try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" (line 12)`),
then a next step that holds whatever the cause: the frame to read, and the debug variable that adds
what is missing, and ends with the search of the owning project's issues. A traceback cut before its
exception line is named by the last frame the log shows (its line in the log, the code it was running,
whose code it is: yours, or the package's) and the step says which lines of the full output decide it
(those after that frame, down to the exception's own line; each rank's output where a launcher ran it).
A cut traceback that a relay printed (`Caught X in DataLoader worker process N` / `in replica N on device N`
with its `Original Traceback`, `RayTaskError(X): ray::task() (pid=N)`, `-- Process N terminated with the
following error:`, a test's `Process N exited with error code C and exception:`, a process pool's
`RemoteTraceback`, `X: Traceback (most recent call last):`; `gpudoctor.knowledge.relays`) is that other
process's original error: the answer names it through the relay (`RuntimeError in DataLoader worker process 0
(its traceback is cut before the message)`) and says where it is read whole (`num_workers=0`, one GPU,
`ray logs worker --pid N`, the spawned function called in one process). An original printed whole is read
as any traceback is, and a pattern that knows it heads the answer.
A line that only reports that another process failed (DeepSpeed's launcher's `sigkill_handler`, Hydra's
`Error executing job with overrides`, a pod's `CrashLoopBackOff`, an exit status) and a traceback cut in a
launcher's own frames (torchrun's agent, `accelerate launch`, a package build) are no failure of their own: the
headline says so (`not the failure itself: ...`, evidence `wraps`), with what decides the cause and the line to read
first where the log holds one. torch's NCCL watchdog's C++ backtrace without its message is named by its frames:
its error check (`WorkNCCL::checkAndSetException`) raises an NCCL error a communicator reported, its timeout check
the collective timeout (`nccl-watchdog-timeout`).
For example:

```sh
CUDA_LAUNCH_BLOCKING=1 ...            # a CUDA error raised at the kernel that failed
TORCH_DISTRIBUTED_DEBUG=DETAIL ...    # collectives checked for shape and order
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET ...
PYTHONFAULTHANDLER=1 TORCH_SHOW_CPP_STACKTRACES=1 ...   # a native crash
```""",
)


# What the log's start-up lines say of the job's ranks (knowledge/ranks_heard.py).
RANKS_FROM_LOG = "[`gpudoctor diagnose`](../commands/diagnose.md) of a log or a paste (the ranks' start-up lines, the launch command)"


RANKS_DUPLICATED = FindingKind(
    id="ranks-duplicated",
    severity=Severity.ERROR,
    also=(Severity.WARN,),
    when="error when the log shows as many processes as the job has and they did not take distinct ranks (or each says it runs alone); warn when fewer printed here",
    area=AREA,
    emitted_by=RANKS_FROM_LOG,
    summary="""The processes of one job did not each get their own rank. Case `same`: two processes print the same
rank of the same world size in a line each prints once as it starts (Lightning's and NeMo's `Initializing distributed:
GLOBAL_RANK: 1, MEMBER: 2/8`, accelerate's state block `Num processes: 4` / `Process index: 3`), and some ranks of that
world size never print. Case `alone`: the launch command in the log asks for N processes (`mpirun -np 2`, `torchrun
--nproc_per_node 2`, `accelerate launch --num_processes 2`) and the processes each say they are not part of a job
(`Distributed available: False`, the Hugging Face examples' `Process rank: -1, ... distributed training: False`,
accelerate's `Num processes: 1`, a start-up line that says rank 0 of 1). Case `alone-pids` (warn): no launch command
is shown, and two processes (different pids) each start as rank 0 of 1 (`Horovod initialized. Hostname h, pid 12116, rank
0 / size 1`): one job's ranks that did not find each other, or separate runs. Every rank heard twice or more (a log that holds its run twice: a restart, a paste
repeated) is not this finding. It is an error when the log shows as many processes as the job has (the launch did it);
a warning when fewer printed here.""",
    evidence="`start-up lines` (case `same`): the lines of the ranks claimed twice, with their numbers; `world size`, `ranks heard`, `ranks never heard`; `launch` and `alone` (case `alone`): the launch command and the lines that say a process runs alone.",
    title={
        "same": "{count} processes started, and rank(s) {ranks} of world size {world} were taken twice: only {heard} distinct rank(s) of {world}{decided}",
        "alone": "{count} processes each say they are not part of a distributed job ({said}) while the launch asks for {asked} ({command}): each runs alone",
        "alone-pids": "{count} processes (pids {pids}) each start as a job of their own ({said}): they were meant as one job's ranks, or are separate runs",
    },
    why={
        "same": "Each process of a job must take its own rank: two that take one rank leave others that nobody takes, and every process then waits for them in the rendezvous (init_process_group, the trainer's set-up) until its timeout, with no error line. It happens when the ranks are counted per node (a node rank not passed, every node thinking it is node 0) or when a launcher starts the processes and the trainer starts its own as well (srun with one task per node while Lightning spawns the GPUs).",
        "alone-pids": "These processes of one log each started as rank 0 of a world of 1: if they were started as one job (an MPI or a scheduler's parallel environment, a launcher), none of them found the others, and each runs the whole job alone; the log shows no launch command that says how many were meant, so it does not decide that they were one job.",
        "alone": "The launcher started the processes, but none of them found the job: no rank and world size in its environment that the program reads, or no distributed backend it can load (an MPI library the framework was not built with or cannot find). Each then runs the whole job as rank 0 of 1: copies of a one-process job, or copies that wait.",
    },
    fix={
        "same": "srun --ntasks-per-node=<GPUs per node> --gres=gpu:<GPUs per node> python train.py   # one task per GPU from one launcher (Lightning and NeMo then read SLURM's ranks); with torchrun: torchrun --nnodes <N> --node_rank <this node's> --nproc_per_node <GPUs> train.py",
        "alone-pids": "mpirun -np 2 env | grep -E 'OMPI_COMM_WORLD_(RANK|SIZE)|PMI_RANK|^RANK=|WORLD_SIZE'   # with the launcher the job uses: each process must see its own rank and the size; an MPI job started by a scheduler needs its mpirun (or srun) in the job script, not only the scheduler's slot request",
        "alone": "{command} env | grep -E 'OMPI_COMM_WORLD_(RANK|SIZE)|PMI_RANK|^RANK=|WORLD_SIZE'   # each process must see its own rank and the size; then start the script with the launcher its framework reads (torchrun for torch.distributed, an mpirun whose MPI the framework loads, with its library on the path)",
    },
)


RANKS_NOT_ALL_HEARD = FindingKind(
    id="ranks-not-all-heard",
    severity=Severity.WARN,
    when="exit 1: the log shows no failure and no end, and ranks of the job never print in it",
    area=AREA,
    emitted_by=RANKS_FROM_LOG,
    summary="""The log shows no failure and no end, and it says the job has more ranks than print in it. Case `merged`:
the lines of two or more ranks (a log several ranks write: Lightning's `Initializing distributed: GLOBAL_RANK: 0,
MEMBER: 1/4`, accelerate's state block, a framework's `rank=1, world_size=3`) name a world size, some of its ranks never
print, and nothing after them shows a step or the ranks meeting (an NCCL communicator's `nranks`, `Init COMPLETE`, a
completed store barrier). Case
`by-hand`: a command starts one rank by hand (`python train.py --world_size=2 --rank=0`) and nothing in the log comes from
the others. Case `one-rank`: one rank's start-up line alone (`Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2`),
nothing after it: the job's whole output with the others missing, or that rank's own log file (which names only its own
rank), and the answer says which output decides it. The ranks that do not print either run elsewhere (another node or terminal whose output is not here) or never
started or joined: then the ones shown wait for them in the rendezvous and the job hangs with no error. The log does not
say which, so it is a warning that says what decides it.""",
    evidence="`rank lines` (case `merged`): the first line of each rank heard, with its number; `world size`, `ranks heard`, `ranks never heard`; `command` (case `by-hand`): the command that starts one rank; `rank line` (case `one-rank`): the one start-up line, with its number.",
    title={
        "merged": "rank(s) {heard} of world size {world} print here, rank(s) {missing} never do, and no step follows line {last}: the log is cut there, they run elsewhere, or they never started and the others wait for them",
        "by-hand": "the command at line {line} starts rank {rank} of world size {world} by hand, and nothing here comes from rank(s) {others}: unless {them} started elsewhere, rank {rank} waits for {them}",
        "one-rank": "only rank {rank} of world size {world} prints its start-up here (line {line}), and nothing after it shows a step or the ranks meeting: the log is cut there, it is rank {rank}'s own log (the others' logs decide), or rank(s) {others} never started or joined and rank {rank} waits for {them}",
    },
    why={
        "merged": "Each rank of the job prints these lines (its start-up, its rank and world size). A rank that never does runs on another node whose output is not in this log, or it never started or never reached the rendezvous: the ranks shown then wait for it in init_process_group until the timeout, and print nothing more. The log does not say which.",
        "one-rank": "Each rank prints this line once as it starts. One rank's own log file holds only its own line, so this may be all it should show; but where the ranks share one output (a launcher's console, a notebook, srun without --output per task), the others never started, or never reached this point, and rank {rank} waits for them in the rendezvous until the timeout.",
        "by-hand": "A job started rank by rank needs every rank's command running with the same address and port: rank {rank} waits in the rendezvous until all {world} have joined, printing nothing. The log shows one command; whether the others ran (another terminal, another node) it does not say.",
    },
    fix={
        "merged": "read the missing ranks' own output (their node's log; srun --label or torchrun --tee 3 puts each rank's name on its lines) and check on their host that their processes exist (nvidia-smi, ps) and what they see: echo $CUDA_VISIBLE_DEVICES; nc -zv $MASTER_ADDR $MASTER_PORT",
        "one-rank": "read the other ranks' own output (torchrun --tee 3, srun --label: each line then names its rank) to see where each stopped; in a notebook the other processes are not started by the cell at all (a notebook is one process): run the training as a script under a launcher (torchrun --nproc_per_node {world} train.py)",
        "by-hand": "start every rank: the same command once per rank with --rank 0 to {top} (and --local_rank, its GPU) and the same host and port, or let a launcher start them all: torchrun --nproc_per_node {world} train.py ...",
    },
)


LAUNCH_RUNS_NOTEBOOK_KERNEL = FindingKind(
    id="launch-runs-notebook-kernel",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=RANKS_FROM_LOG,
    summary="""A launch command in the log (`torch.distributed.run`, `torchrun`, `accelerate launch`, `deepspeed`, `mpirun`)
names `ipykernel_launcher.py` as the script each rank runs. A library that starts its own distributed job from inside a
notebook (ultralytics' `DDP command: [...]`) builds the command from the running program, and in a notebook that program
is the Jupyter kernel: every rank starts a kernel that waits for a notebook to connect, none trains, and the cell hangs
with no error. A notebook's traceback that passes through `ipykernel_launcher.py` is not this finding: only a launcher's
command that runs it.""",
    evidence="`command`: the launch command, with its line.",
    title="the launch command at line {line} runs the notebook's kernel (ipykernel_launcher.py) as every rank's script: no rank runs the training, and the cell waits",
    why="The distributed job was started from a notebook: the library built the launch command from the running program, which in a notebook is the Jupyter kernel, not a training script. Each rank starts a kernel that waits for a frontend, so nothing trains and nothing fails.",
    fix="put the training in a script and launch it from a terminal: torchrun --nproc_per_node <GPUs> train.py (ultralytics: yolo train ... device=0,1 on the command line); in a notebook, train on one GPU or use a notebook launcher (accelerate's notebook_launcher)",
)


# What a job's start-up lines say of the GPUs it found and uses (knowledge/gpus_unused.py).
GPUS_LEFT_UNUSED = FindingKind(
    id="gpus-left-unused",
    severity=Severity.WARN,
    also=(Severity.INFO,),
    when="warn (exit 1) when the log also shows that the job meant to use the GPUs and no end; info when it does not show what the job meant, or shows the run ended well",
    area=AREA,
    emitted_by="[`gpudoctor diagnose`](../commands/diagnose.md) of a log or a paste (a framework's start-up lines, the run's device and process-count lines)",
    summary="""The job's own lines say GPUs are there and it does not use them, or uses fewer than it was launched for: Lightning's `GPU available:
True (cuda), used: False` (case `none`: it runs on the CPU), or Unsloth's `Num GPUs = 2.` and then `Num GPUs used = 1`
(case `fewer`); the run's line that names its device as the CPU (SB3's `Using cpu device`, `Using device: cpu`,
accelerate's `Device: cpu`; the latest such line counts), a torch version that is a CPU build (`1.13.1+cpu`), torch's
`CUDA available: False`, or the reporter's sentence that the job still uses the CPU, beside a GPU the log shows
(nvidia-smi's header, `CUDA Version: 11.6`, a GPU's name, torch's `CUDA available: True`) or asks for (`device="cuda:0"`,
`device=0`, `CUDA_VISIBLE_DEVICES=0`): case `cpu-build` (the torch shown is a CPU build), `cpu-device` (torch says it sees
the GPU), `cpu` (the log does not say which), `cpu-fallback` (the framework's own line that it fell back to the CPU:
JAX's `No GPU/TPU found, falling back to CPU`, and any program's line that it found no GPU or CUDA and goes on on the CPU,
Applio's `GPU not detected, reverting to CPU`, `CUDA not available. Training will be extremely slow on CPU.`: such a line
shows the GPU was wanted, and its fix is the check that decides between a CPU-only build, the driver, a library that did
not load and the GPU's architecture;
TensorFlow's is `tensorflow-gpu-libraries-not-loaded`, onnxruntime's `onnxruntime-cuda-provider-failed`), `cpu-layers`
(llama.cpp's `offloaded 0/33 layers to GPU`, Ollama's `layers.offload=0`); the run's line that it is one process (`world_size: 1`, `World size (gpu
number): 1`, `Num processes: 1`, Lightning's `MEMBER: 1/1`, Horovod's `hvd.size()` of 1, `Not using distributed mode`) beside a launch that asked for several
(`--nproc_per_node 4`, `CUDA_VISIBLE_DEVICES=0,1,2,3 python train.py`) or the reporter's sentence that it uses one GPU
only (case `one-process`; `one-process-launched` where a launcher did start several and the script still says one). Nothing fails because of it: the run is slow, runs out of host memory, or a DDP strategy set up
for GPUs wraps a CPU model, so the log of such a run often holds no error line at all. It is a warning when the log also
shows that the job meant to use the GPUs: a GPU option (`--gpus`, `gpus=`, `--devices`, `accelerator="gpu"`,
`--num_gpus`, `device="cuda"`), a DDP strategy, a launch of one process per GPU, or the reporter's sentence that the GPU
is not used ("GPU usage is 0", "not running on my GPU"); info when it shows neither (a run meant for the CPU on a machine
with GPUs prints the same line) or shows that the run ended well. A log that chooses the CPU (`accelerator="cpu"`,
`--cpu`, `--device cpu`, `--no_cuda`) does not get it, nor does one process with nothing that asked for more (a
single-GPU run on a machine of eight). It is never an error and never stands before a failure the log names.""",
    evidence="`banner`: the start-up line(s) that say what is available and what is used, with their numbers; `on the CPU` and `GPU` (cases `cpu*`): the line that puts the run on the CPU and the line that shows the GPU; `torch`: a CPU build's version; `one process` and `the launch asked for` (case `one-process`); `the job asked for GPUs`: the line that shows a GPU option, a DDP strategy or a launch per GPU; `the reporter says`: the sentence that the GPU is not used; `what decides it` where the log does not (and where the CPU is only the reporter's sentence).",
    title={
        "none": "the job's start-up says a GPU is available and it uses none (line {line}: {banner}): it runs on the CPU{meant}",
        "fewer": "the job's start-up says {available} GPUs are available and it uses {used} (line {line}: {banner}){meant}",
        "cpu-build": "the job runs on the CPU with a CPU-only build of torch ({build}, line {line}: {banner}) while line {gpu_line} shows a GPU ({gpu}){meant}",
        "cpu-device": "the job runs on the CPU (line {line}: {banner}) while torch sees the GPU (line {gpu_line}: {gpu}){meant}",
        "cpu": "the job runs on the CPU (line {line}: {banner}) while line {gpu_line} shows a GPU ({gpu}){meant}",
        "cpu-layers": "llama.cpp put none of the model's layers on the GPU (line {line}: {banner}) while line {gpu_line} shows a GPU ({gpu}){meant}",
        "cpu-fallback": "the framework fell back to the CPU (line {line}: {banner}) while line {gpu_line} shows a GPU ({gpu}){meant}",
        "one-process": "the job runs as one process (line {line}: {banner}) where {asked}: the other GPUs stay idle",
        "one-process-launched": "the run says it is one process (line {line}: {banner}) where {asked}: each process the launcher started runs alone",
    },
    why={
        "none": "The framework found a usable GPU and put the model on the CPU, because its GPU option did not ask for one: Lightning reads gpus and devices as a count (--gpus 0 or gpus=0 is zero GPUs; '0,' with the comma, or [0], is GPU 0), and with no GPU option (or accelerator='cpu') it trains on the CPU. Nothing fails for it: the run is many times slower, runs out of host memory, or a DDP strategy set up for GPUs fails on the CPU model.",
        "fewer": "The library runs one process on one GPU unless it is launched once per GPU (and some releases train on one GPU only): the other GPUs it found stay idle, and the run takes as long as on one GPU.",
        "cpu-build": "A torch version ending in +cpu is the CPU-only wheel (pip's default on Windows and macOS, or from the CPU index): it has no CUDA code, so torch.cuda.is_available() is False whatever GPU and driver the machine has, and a library that picks its device from it runs on the CPU or refuses the GPU option. No line fails for it: the run is slow, or a GPU option is refused as an unknown device.",
        "cpu-device": "torch can use the GPU here, so the CPU is the program's own choice: the device it was given does not reach where the model is placed (an option the library reads under another name, a default it keeps, a device decided before the option is read), or the job runs under another Python than the one that printed torch's answer. No line fails for it: the run is slow and its GPU idle.",
        "cpu": "A job runs on the CPU beside a GPU when its torch is a CPU-only build (a version ending in +cpu), when torch cannot reach the GPU (a driver too old for its CUDA, a container started without the GPU), or when the device option naming the GPU does not reach where the model is placed. No line fails for any of these: the run is slow and its GPU idle.",
        "cpu-layers": "llama.cpp (and Ollama, LM Studio, koboldcpp, which run it) keeps every layer it does not offload on the CPU: a build without the GPU backend (llama-cpp-python installed without CMAKE_ARGS is the CPU build), --n-gpu-layers 0 (the default of older builds), too little free GPU memory for one layer, or a GPU its runtime does not support (an AMD gfx target outside ROCm's list). No line fails: generation is many times slower and the GPU idle.",
        "cpu-fallback": "The framework looked for the GPU and gave up on it: it is a build without CUDA (a jaxlib from the CPU wheel), or it could not load the CUDA libraries it was built against (the lines above it name the one it could not open). It goes on on the CPU with a warning, and no line fails: the run is many times slower and its GPU idle.",
        "one-process": "A training script started with plain python (or from a notebook) is one process on one GPU: data parallelism over N GPUs needs one process per GPU, started by a launcher (torchrun, accelerate launch, deepspeed, horovodrun) that sets the world size the script reads. A world size of 1 is the run's own word that it was started once.",
        "one-process-launched": "The launcher started several processes, but the script did not take the world size the launcher gave them (it reads it from its own option or config, or from --local_rank where the launcher sets the environment): each process trains alone on all of the data, often all of them on GPU 0, and nothing fails until memory runs out or the checkpoints overwrite each other.",
    },
    fix={
        "none": "Trainer(accelerator=\"gpu\", devices=1)   # or --gpus 1 (a count), or --gpus 0, with the comma (GPU 0); the start-up line then reads GPU available: True, used: True",
        "fewer": "torchrun --nproc_per_node {available} train.py   # one process per GPU, where the library supports data-parallel training (its multi-GPU launch); otherwise CUDA_VISIBLE_DEVICES=0 to run on one GPU on purpose",
        "cpu-build": "pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu126   # a CUDA build (the index for your driver's CUDA: https://pytorch.org/get-started/locally/); check: python -c \"import torch; print(torch.__version__, torch.cuda.is_available())\"",
        "cpu-device": "model = Model(..., device=\"cuda\")   # the library's own device option, where the model is built (SB3: PPO(\"MlpPolicy\", env, device=\"cuda\")); check it took: print(next(model.parameters()).device), and torch.cuda.is_available() with the python that runs the job",
        "cpu": "python -c \"import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())\"   # with the job's python: +cpu / None = a CPU build (pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu126); False with a CUDA build = the driver or the container (nvidia-smi); True = pass the device to the library (device=\"cuda\")",
        "cpu-layers": "llama-cli -m model.gguf -ngl 99   # every layer on the GPU, with a build that has the GPU backend (its start-up then says ggml_cuda_init: found 1 CUDA devices; llama-cpp-python: CMAKE_ARGS=\"-DGGML_CUDA=on\" pip install --force-reinstall --no-cache-dir llama-cpp-python); Ollama: OLLAMA_DEBUG=1 ollama serve says why it left the GPU out (an AMD gfx outside ROCm's list: HSA_OVERRIDE_GFX_VERSION=11.0.0)",
        "cpu-fallback": "pip install -U \"jax[cuda12]\"   # JAX: the CUDA build of jaxlib with its CUDA libraries (check: python -c \"import jax; print(jax.devices())\"); another framework: its CUDA build, and the CUDA libraries its lines above name",
        "one-process": "torchrun --nproc_per_node {n} train.py   # one process per GPU (the script's own launch command where it documents one); the run then says world size {n}",
        "cpu-fallback-program": "python -c \"import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available(), torch.cuda.get_arch_list())\"   # with the job's python (the program's own check is usually this one): +cpu / None = a CPU-only build (pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu126); False with a CUDA build = the driver is older than that CUDA, or no GPU reaches the process (nvidia-smi and its CUDA Version; a container started without --gpus); True = a library the program needs for the GPU did not load (the lines above its fallback name it: a CUDA or cuDNN DLL or .so, onnxruntime's provider) or the GPU's sm_XX is not in the arch list (a wheel built for it)",
        "one-process-accelerate": "accelerate launch --num_processes {n} script.py   # python script.py starts one process; accelerate launch starts one per GPU (or accelerate config once)",
        "one-process-horovod": "horovodrun -np {n} -H localhost:{n} python train.py   # python train.py starts one process: hvd.size() is 1 and only GPU 0 works; horovodrun starts one per GPU (pin each: config.gpu_options.visible_device_list = str(hvd.local_rank()))",
        "one-process-launched": "torchrun --nproc_per_node {n} train.py   # torchrun sets RANK, WORLD_SIZE and LOCAL_RANK in each process's environment: a script that takes its world size elsewhere needs its own switch (BasicSR: --launcher pytorch; a script reading --local_rank under python -m torch.distributed.launch: --use_env), and dist.init_process_group() with no world size of its own",
    },
)


# A thread's title that says the job does not use the GPU, beside a log that shows nothing of it (knowledge/gpus_unused.py).
LOG_SAID_GPU_UNUSED = FindingKind(
    id="log-said-gpu-unused",
    severity=Severity.WARN,
    when="exit 1: the thread's title says the job does not use the GPU, and no line of the log shows a failure or an end",
    area=AREA,
    emitted_by="[`gpudoctor diagnose`](../commands/diagnose.md) of a paste (a thread's title)",
    summary="""A pasted thread's title says the job runs without the GPU it should ("# GPU usage is 0", "# Unable to use GPU", "#
Running successfully but not on my GPU", "# Horovod only uses Single GPU", "# Training uses CPU instead of GPU"), and the log beside it shows no failure, no
end, and no line that says where the job runs (a framework's `GPU available: True, used: False` is `gpus-left-unused`;
an idle GPU in a pasted nvidia-smi table is `gpu-not-used`). The title is the reporter's words, so it is a warning that
says what decides it. A title that asks ("is it normal?") is not a statement of it, and an error the log shows stays
the answer.""",
    evidence="`said`: the title, with its line.",
    title="the reporter says the job does not use the GPU it should (line {line}: {said}); no line of the log shows why",
    why="A job leaves its GPU idle when it runs on the CPU (a torch or a library built without CUDA, a device or a GPU option left at the CPU, a GPU the process cannot see), when it was started as one process where one per GPU was meant (python train.py rather than torchrun or horovodrun), when it runs on another GPU than the one chosen (a device option the program does not pass on, CUDA_VISIBLE_DEVICES set after CUDA started), or when the GPU holds the model and waits on the CPU (data loading). The log shows none of these.",
    # (nvidia-smi first: it decides for any program; the framework's own check after it, PyTorch's and TensorFlow's, as
    # the development audit found this fix misfitting TensorFlow, Blender and C++ jobs when it opened with torch's)
    fix="nvidia-smi   # while the job runs: no process of the job = it runs on the CPU (then in the job's environment: python -c \"import torch; print(torch.__version__, torch.cuda.is_available(), torch.cuda.device_count())\" for PyTorch, python -c \"import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))\" for TensorFlow, the program's own device option otherwise); its process holding memory at 0 % = the GPU waits on data loading; one GPU of several busy = one process (torchrun --nproc_per_node <GPUs>, horovodrun -np <GPUs>), or another GPU than the chosen one (CUDA_VISIBLE_DEVICES=<n> python train.py: set before the program starts)",
)


# A loss that grows by orders of magnitude in a run's progress lines (knowledge/progress.py `Progress.diverging`).
LOSS_DIVERGING = FindingKind(
    id="loss-diverging",
    severity=Severity.WARN,
    also=(Severity.INFO,),
    when="warn (exit 1); info where the log shows the run ended (it got to its end; what it learned is in doubt)",
    area=AREA,
    emitted_by="[`gpudoctor diagnose`](../commands/diagnose.md) of a log or a paste (a run's progress lines)",
    summary="""A loss the run logs grows by three orders of magnitude or more across its progress lines and stays there
(GFPGAN's `l_g_pix` from 2.6e24 to 3.7e29 in three iterations): the training diverges, with no line that calls it an
error, since the numbers are still finite (when they reach nan or inf, [loss-not-finite](../patterns/loss-not-finite.md) says so).
A loss that spikes once and comes back, one that grows as it should by less (a center loss as its centres separate), or
one that is large and stays large is not this. It is the numbers' pattern, not a failure a line decides: a warning.""",
    evidence="`loss`: its name; `from`: its smallest value before, with its line; `to`: its last value, with its line.",
    title="the loss {key} grew from {low} to {high} in the lines shown (x{factor}): the training diverges",
    why="A loss that grows by orders of magnitude means the updates make the model worse at every step: a learning rate too high for the batch or the GPU count (no warm-up), no gradient clipping, fp16 overflowing, or a bad batch that threw the weights off. The run goes on without an error until the numbers overflow to inf or nan, and what it saves after the growth began is of no use.",
    fix="lower the learning rate (scale it with the total batch when there are fewer GPUs than the config was written for) or add warm-up, and clip gradients (torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)); restart from a checkpoint saved before the loss began to grow; torch.autograd.set_detect_anomaly(True) names the operation once it turns nan",
)


# A loss, a learning rate or an accuracy logged as exactly 0 at every step shown (knowledge/run_numbers.py `zero_throughout`).
STUCK_AT_ZERO = FindingKind(
    id="stuck-at-zero",
    severity=Severity.WARN,
    also=(Severity.INFO,),
    when="warn for a loss or a learning rate: exit 0 where the log shows the run ended (the warning leads instead of `log-no-failure`), exit 1 beside `log-inconclusive` where it does not; info for an accuracy (a regression's accuracy metric is always 0: a note after the answer)",
    area=AREA,
    emitted_by="[`gpudoctor diagnose`](../commands/diagnose.md) of a log or a paste (a run's progress lines)",
    summary="""The run's progress lines log its training loss, its learning rate or its accuracy as exactly 0 on every line
that logs it (five lines or more), and on none as anything else: LlamaFactory's and Trainer's `{'loss': 12.1034,
'grad_norm': 0.0, 'learning_rate': 0.0, ...}` at every step, a CNN's `Loss: 0.0` from its first batch to its last, a
`val_acc=0.0` at every epoch. No line calls it an error, and the run may even end well: its numbers say it learned
nothing. Exactly 0 is what the log prints: `0.0`, `0`, a scientific zero (`0.000000E+00`); a value printed rounded to
several places (`Train Loss: 0.0000`, `lr:0.00000`) is a small number, not 0, and decides nothing. Not this finding: a
value that is 0 at the start only (a warm-up from 0, an accuracy of 0 at the first epoch) or at the end only (a schedule
that decays to 0), since another line logs it above 0; an auxiliary, a KL or a validation loss at 0 (an MoE balance loss
without experts, TRL's GRPO loss beside its KL column, a validation loss printed 0); a Trainer loss of 0.0, which
[loss-not-finite](../patterns/loss-not-finite.md) reads (its nan filter). A warning: the lines decide that the number is
0; what made it 0 is what the fix checks.""",
    evidence="`value`: the quantity's name as the log prints it; `lines`: how many lines log it as 0; `first` and `last`: the first and the last of them, with their numbers; `beside` (when the last line shows it): the loss beside a learning rate or an accuracy of 0, a gradient norm of 0 or nan.",
    title={
        "loss": "the training loss ({value}) is logged as exactly 0 on every line that logs it ({count} lines, line {first} to line {last}): the model gets no gradient from it",
        "learning-rate": "the learning rate ({value}) is logged as exactly 0 on every line that logs it ({count} lines, line {first} to line {last}): the optimizer changes no weight",
        "accuracy": "the accuracy ({value}) is logged as exactly 0 on every line that logs it ({count} lines, line {first} to line {last}): no prediction equals its label",
    },
    why={
        "loss": "A training loss of exactly 0 from the first step logged is not a model that learned: no sample counts in it, so no gradient flows. The usual reasons: every label is masked (-100, IGNORE_INDEX) because the chat or conversation template (conv_style, template, prompt template) does not match the model, so the answer tokens the labels keep are never found; a maximum length that cuts every sample before its answer; a loss that returns 0 for a batch without targets; every step's loss nan, filtered to 0 by the trainer (a gradient norm of nan beside it). A loss printed with one decimal hides values below 0.05: more digits decide that.",
        "learning-rate": "Each update is the learning rate times the step the optimizer computes: at 0 the weights never change, whatever the loss says. A few lines at the very start of a warm-up from 0, or at the very end of a schedule that decays to 0, are normal; every line a run logs is not. The usual reasons: a warm-up longer than the run or stepped once per epoch (warmup_steps or warmup_ratio against the total steps), a scheduler that steps only after optimizer steps that were all skipped (fp16 overflowing at every step: Trainer steps the scheduler only when the optimizer ran), a DeepSpeed scheduler with warmup_min_lr 0 and more warm-up steps than the run, or a learning rate of 0 in the configuration.",
        "accuracy": "An accuracy of exactly 0 at every evaluation is below chance for a classifier: no prediction ever matched its label. For a regression (a continuous target, a mean-squared-error loss) it is what an accuracy metric always gives, and means nothing. For a classifier, the usual reasons: predictions and labels in different spaces (class ids against a label map that does not match the data set, a metric given logits or strings where it wants class ids), a label column that is empty or constant, or a model that gives one output for every input (its weights not loaded). An accuracy of 0 at the first epoch alone is normal.",
    },
    fix={
        "loss": "check one batch before training: labels = batch['labels']; print((labels != -100).sum())   # 0: every label is masked: use the template the model was trained with (conv_style / template / prompt_template) and a maximum length (cutoff_len, model_max_length) that keeps the answers; print the loss with more digits (f'{{loss:.6f}}'); with fp16, log nan steps as they are (logging_nan_inf_filter=False) and train in bf16 if they are all nan",
        "learning-rate": "print(scheduler.get_last_lr()) after a few optimizer steps, and compare the warm-up with the run's total steps (warmup_steps, warmup_ratio x max_steps, DeepSpeed's scheduler.params.warmup_num_steps and warmup_min_lr); check the learning rate the configuration sets (--learning_rate, optimizer.params.lr); with fp16, look for skipped steps (overflow lines) and train in bf16 if every step overflows",
        "accuracy": "a regression (a continuous target): drop the accuracy metric (Keras: metrics=['mae']), the loss is what to watch; a classifier: print a few predictions beside their labels in the evaluation loop (preds.argmax(-1)[:10], labels[:10]): they must be in the same class space; check the label map (class_to_idx, id2label) against the data set, that the metric receives class ids, and that the checkpoint evaluated is the one trained (its load reports no missing keys)",
    },
)


# NCCL's sockets on the loopback interface, and the nodes the log shows (knowledge/nccl_loopback.py).
NCCL_SOCKET_LOOPBACK = FindingKind(
    id="nccl-socket-loopback",
    severity=Severity.WARN,
    also=(Severity.INFO,),
    when="warn (exit 1) when the log shows the job spans several machines; info when it shows neither several nor one",
    area=AREA,
    emitted_by="[`gpudoctor diagnose`](../commands/diagnose.md) of a log or a paste (NCCL's INFO lines, the launch command)",
    summary="""NCCL says it uses the loopback interface alone for its sockets: `NCCL INFO Bootstrap : Using
lo:127.0.0.1<0>`, `NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0>`, or `NCCL_SOCKET_IFNAME set by environment to lo`.
Every rank then advertises 127.0.0.1, which on any other machine is that machine itself: ranks on one machine reach each
other, ranks on different machines never do, and the job hangs in its first collective or fails with a remote error,
often with no line that names the interface. It is a warning when the log shows several machines (NCCL's lines from two or
more hosts, `nNodes 2`, `--nnodes 2`, `--num_nodes 2`, `NNODES=2`, a node rank above 0), case `nodes`; info when it
shows no node count and one process's lines only (case `unknown`: the number of machines decides it). A log whose NCCL
lines come from several processes of one host, or whose launch says `--nnodes 1`, does not get it: on one machine the
loopback is enough. A list of interfaces that names lo among others is not this finding.""",
    evidence="`loopback`: NCCL's line, with its number; `several nodes` (case `nodes`): what shows them (the hosts of NCCL's lines, the node count, a node rank); `what decides it` (case `unknown`).",
    title={
        "nodes": "NCCL's sockets use the loopback interface (line {line}) in a job across several machines: the other machines cannot reach this rank at 127.0.0.1",
        "unknown": "NCCL's sockets use the loopback interface (line {line}): enough for ranks on one machine, unreachable from any other; the log does not show how many machines the job spans",
    },
    why="NCCL connects ranks through the interface NCCL_SOCKET_IFNAME names (or the first it finds), and advertises that interface's first address; on lo that is 127.0.0.1, which on every other machine is that machine itself, so the bootstrap and the NET/Socket connections between machines never form and the job hangs in its first collective or fails with a remote error. On one machine its ranks reach each other there, which is why only a job across machines suffers from it. A routable address put on lo (BGP unnumbered hosts) is not taken either: NCCL takes lo's first address.",
    fix="ip -br addr   # on each machine; then export NCCL_SOCKET_IFNAME=<the interface holding the address the other machines reach> (e.g. eth0, or ^lo,docker to exclude only those) and the same GLOO_SOCKET_IFNAME; a routable address kept on lo goes on an interface of its own (a dummy) named there",
)
