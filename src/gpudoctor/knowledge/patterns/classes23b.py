"""Classes of the twenty-third round (issue 35, diagB23): a program's own words that it received a stop signal.

- `stop-signal-received`: a process says it received (caught, got) a stop signal, SIGTERM, SIGINT, SIGHUP or SIGQUIT,
  by its name or its number: Lightning's signal connector on each rank ("[rank: 2] Received SIGTERM: 15", glued to the
  progress bar it interrupted), a program's or a library's handler ("Received SIGINT, exiting", "Caught signal 15").
  The signal came from outside the process: a scheduler's cancel, time limit or pre-emption, a kill, a parent process
  or a launcher stopping it. What the process prints next (its DataLoader workers "killed by signal: Terminated", a
  loader's queue timing out, a teardown's traceback) is what the stop caused, not a failure of its own. Beside the
  scheduler's or the launcher's own line that names the stop (Slurm's cancel or time limit, torchrun's "death signal") it
  is that line's consequence, wherever it stands; beside another error that stands before it, that error's (a launcher
  stopping the other ranks after one failed, after=*); an error after it is what it caused (STOPPED_FROM_OUTSIDE).

- `batch-job-limit-killed`: the batch scheduler's own line that it killed the job at a limit the job was given: PBS's
  (Torque's, PBS Pro's) "=>> PBS: job killed: walltime 86415 exceeded limit 86400" (or mem, vmem, pmem, cput), LSF's
  "TERM_RUNLIMIT: job killed after reaching LSF run time limit." (or its memory, CPU-time or swap limit) in the report it
  writes into the job's output, Slurm's step daemon's "error: Job 848444 exceeded memory limit (33715636 > 32757760), being
  killed" (its cancel line after it, which names no reason, is this kill's consequence). Slurm's time limit ("CANCELLED AT
  ... DUE TO TIME LIMIT") is slurm-time-limit's.

Lines that only look alike are left: torch elastic's agent's "Received 15 death signal" (launcher-terminated), Open MPI's
crash report "*** Process received signal ***" (the signal is on the lines after it: a segmentation fault), Lightning's
"Bypassing SIGTERM" (it ignores the signal on Slurm and goes on), a person's sentence that a job got SIGTERM.

Written from heldout22w (TengFeiyang01/EAGNet logs/train.out) and heldout20w (Yatsuiii/Brain-Connectivity-GCN
logs/finetune.log), and the schedulers' own lines in the threads and job outputs named beside the examples; heldout21w
not read while writing (the transfer measurement).
"""

from __future__ import annotations

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, groups, pattern

E = Severity.ERROR
STOP_SIGNAL_RECEIVED = "stop-signal-received"
LIMIT_KILLED = "batch-job-limit-killed"
# A stop from outside the job (a process's own word that it received a stop signal, Slurm's cancel): beside another error
# it is that error's consequence only where the error stands before it (a launcher or a person stopping a job after a rank
# failed); what the log prints after the stop (DataLoader workers "killed by signal: Terminated", NCCL's lost peers) is
# what the stop caused (knowledge/story.py `explained_by`)
STOPPED_FROM_OUTSIDE = (STOP_SIGNAL_RECEIVED, "slurm-job-cancelled")
# The schedulers' and the launcher's own lines that say who stopped the job and why: they explain a process's own word
# that it received the stop, wherever they stand
STOP_NAMED = ("slurm-time-limit", "slurm-preempted", "slurm-job-cancelled", LIMIT_KILLED, "launcher-terminated")

# the process's own words, at a line's start or after a logger's prefix or a progress bar ("]", ":", "|", "-"): a person's
# "my job got SIGTERM" is no such line
SAID = r"(?:^|[\]:|>-]\s*)(?:Received|Caught|Got|Receiving|received|caught)\s+"
STOP_NAME = r"(?P<signal_name>SIG(?:TERM|INT|HUP|QUIT))\b"

PATTERNS = [
    pattern(
        STOP_SIGNAL_RECEIVED,
        "launcher",
        CAUSE,
        E,
        "the program received a stop signal from outside (SIGTERM, SIGINT or SIGHUP) and stopped: it did not fail on its own",
        # by name with its number (Lightning's "Received SIGTERM: 15"), by name and then the program's going ("Received
        # SIGINT, exiting"), or by number ("Caught signal 15", UCX's "Caught signal 2 (Interrupt ...)")
        SAID + r"(?:(?:the\s+|a\s+)?(?:signal\s*:?\s*)?" + STOP_NAME + r"(?::\s*(?P<signal>\d+)|[,.;!]?\s*(?:$|exiting|shutting down|terminating|stopping|aborting|cleaning up|saving))"
        r"|signal\s*:?\s*(?P<signal_number>15|2|1|3)\b(?!\d)(?!\s*\((?!Terminated|Interrupt|Hangup|Quit)))",
        ("Received SIG", "Caught SIG", "Got SIG", "received SIG", "caught SIG", "Receiving SIG", "Received signal", "Caught signal",
         "Got signal", "received signal", "caught signal"),
        why="""The process says it received a stop signal, which only comes from outside it: SIGTERM (15) from a scheduler's
        cancel, time limit or pre-emption (Slurm, Kubernetes evicting or deleting the pod), a kill, or a parent process or a
        launcher stopping it; SIGINT (2) from Ctrl-C or a launcher passing one on; SIGHUP (1) from the terminal or ssh
        session it ran in closing. The run did not fail on its own: what it printed after the line (DataLoader workers
        "killed by signal: Terminated", a loader's queue timing out, a traceback from its teardown) is what the stop
        caused. Lightning's handler on rank 0 passes the signal on to the other ranks it started. The log holds no line
        that says who sent it; the scheduler's record or the parent process's log does.""",
        fix=("sacct -j JOBID -o JobID,State,ExitCode,Elapsed,Timelimit   # TIMEOUT, PREEMPTED or CANCELLED by UID names who stopped it "
             "(kubectl describe pod POD: Evicted, Preempting); a run stopped at its time limit: a longer --time or checkpoint and "
             "resume; stopped by Ctrl-C or a closed session: run it under tmux/screen or setsid nohup ... &"),
        examples=[
            # heldout22w, rank 2 of a 5-rank Lightning DDP run: https://github.com/TengFeiyang01/EAGNet/blob/7a1815b159d8b85408d1dfa940ef3523c6405fd4/logs/train.out
            ("Epoch 0:  31%|███       | 1225/3999 [1:07:35<2:33:02,  3.31s/it, v_num=29, train_intent_loss_step=1.110, train_total_loss=0.375][rank: 2] Received SIGTERM: 15",
             "TengFeiyang01/EAGNet logs/train.out"),
            # heldout20w, one process on the CPU: https://github.com/Yatsuiii/Brain-Connectivity-GCN/blob/9ed2326716b7cec007fea745fa662479f3d7d0fd/logs/finetune.log
            ("Epoch 8:  86%|████████▌ | 24/28 [00:04<00:00,  5.83it/s, v_num=29, val_loss=0.690, val_acc=0.523, val_auc=0.506, train_loss=0.693, train_acc=0.509][rank: 0] Received SIGTERM: 15",
             "Yatsuiii/Brain-Connectivity-GCN logs/finetune.log"),
        ],
        not_examples=[
            "[rank: 0] Bypassing SIGTERM: 15",
            "[good:02773] *** Process received signal ***",
            "My job got SIGTERM after about two hours, is there a time limit on the queue?",
            "[09677202c889:5283 :0:5704] Caught signal 7 (Bus error: nonexistent physical address)",
            "[ava02:21329:1] Caught signal 11 (Segmentation fault)",
        ],
        # the scheduler's or the launcher's own line, wherever it stands, says who sent the stop; beside another error before
        # it, the stop is that error's consequence
        after=(*STOP_NAMED, "*"),
        fields=groups,
    ),
    pattern(
        LIMIT_KILLED,
        "launcher",
        CAUSE,
        E,
        "the batch scheduler (PBS, LSF, Slurm) killed the job at a limit it was given (its wall time, its memory): it did not fail on its own",
        r"(?:^\s*|=>> ?)PBS: job killed: (?P<limit>walltime|mem|vmem|pmem|cput) (?P<used>\d+\w*) exceeded limit (?P<allowed>\d+\w*)"
        r"|^\s*(?P<lsf>TERM_(?:RUNLIMIT|MEMLIMIT|CPULIMIT|SWAP|PROCESSLIMIT|THREADLIMIT)): job killed after reaching LSF (?P<lsf_limit>[\w -]+?) limit"
        # Slurm's step daemon when its own memory enforcement kills the job ("Exceeded step memory limit at some point." alone
        # is a warning the job goes on after: no kill)
        r"|slurmstepd(?:-[\w.\-]+)?: error: (?:Job|Step) (?P<job>[\w.]+) exceeded (?P<slurm_limit>(?:virtual )?memory) limit \((?P<slurm_used>\d+) > (?P<slurm_allowed>\d+)\), being killed",
        ("PBS: job killed", "job killed after reaching LSF", "), being killed"),
        why="""The batch scheduler stopped the job because it used up a limit set when it was submitted: its wall time (PBS's
        walltime, LSF's run time limit, #PBS -l walltime= / #BSUB -W) or its memory (PBS's mem or vmem, LSF's memory usage
        limit, #PBS -l mem= / #BSUB -R rusage[mem=]). The program did not fail on its own: the lines before this one show what
        it was doing when the limit came (still making progress: it needs more; stuck: it would never have finished).""",
        fix=("by the limit the line names: wall time: a longer one (#PBS -l walltime=HH:MM:SS, #BSUB -W HH:MM) or checkpoint and "
             "resume; memory: a larger request (#PBS -l mem=64gb, #BSUB -R \"rusage[mem=64G]\", #SBATCH --mem=64G) or less host memory "
             "(fewer DataLoader workers, a lazily loaded dataset); qstat -f JOBID / bjobs -l JOBID / sacct -j JOBID -o JobID,State,MaxRSS,ReqMem "
             "shows what it used; a job that had stopped moving before it: gpudoctor run --nproc N --hang-timeout 300 to see where each rank waits"),
        examples=[
            ("=>> PBS: job killed: walltime 86415 exceeded limit 86400", "marbl/canu#1214"),
            ("=>> PBS: job killed: walltime 259217 exceeded limit 259200", "biocore/qiime#1048"),
            # an LSF job report: https://github.com/FredslundMagnus/Myretuen outputs/Explorer-off/NNAgent1Explorer-off.md
            ("TERM_RUNLIMIT: job killed after reaching LSF run time limit.", "FredslundMagnus/Myretuen outputs (an LSF job report)"),
            ("slurmstepd-dback-c11-n01: error: Job 848444 exceeded memory limit (33715636 > 32757760), being killed", "bcbio/bcbio-nextgen#2393"),
            ("slurmstepd-falkor7: error: Step 1141810.0 exceeded memory limit (52917772 > 20971520), being killed", "openbabel/openbabel#2657"),
        ],
        not_examples=[
            '    "TERM_RUNLIMIT: job killed after reaching LSF run time limit." in myfile.read()',
            "Successfully completed.",
            "#PBS -l walltime=72:00:00",
            "slurmstepd: error: Exceeded step memory limit at some point.",
        ],
        fields=groups,
    ),
]
