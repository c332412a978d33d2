"""Controls and siblings for whole logs (issue 35, diagB23): a program's own line that it received a stop signal from
outside, before the DataLoader errors that stop causes (patterns/classes23b.py), and an earlier run that ended by its own
words after a failure it went past, then was started again in the same file (knowledge/story.py `earlier_run`). The
sample's cases are the logs as committed; the other lines are real ones from the logs named beside them."""

from __future__ import annotations

from gpudoctor import api
from gpudoctor.core.findings import Severity
from test_controls_classes6 import case
from test_controls_diagC20 import found, head

# Lightning's signal connector on a DDP rank, glued to the progress bar it interrupted (heldout22w TengFeiyang01/EAGNet
# logs/train.out, line 62)
RECEIVED = "Epoch 0:  31%|███       | 1225/3999 [1:07:35<2:33:02,  3.31s/it, v_num=29, train_total_loss=0.375][rank: 2] Received SIGTERM: 15\n"
# the DataLoader's report of a worker the same stop reached (the same log, line 136)
WORKER_TERMINATED = "RuntimeError: DataLoader worker (pid 4020138) is killed by signal: Terminated. \n"
# a dataset's own error on rank 0 (heldout18w 3jp4rk/Condenser out.log, lines 306-308)
DATASET_ERROR = ('Traceback (most recent call last):\n  File "/usr/lib/python3.9/random.py", line 449, in sample\n'
                 '    raise ValueError("Sample larger than population or is negative")\n'
                 "ValueError: Sample larger than population or is negative\n")


class TestStopSignalReceived:
    verdict = "stop-signal-received"

    def test_sibling_a_rank_received_sigterm_then_its_dataloader_workers(self):
        # heldout22w: Lightning's "[rank: 2] Received SIGTERM: 15", then two tracebacks of DataLoader workers "killed by
        # signal: Terminated": the stop from outside is the answer, the workers' ends its consequence
        findings = api.diagnose(case("heldout22w", "TengFeiyang01-EAGNet-logs-train-out")).findings  # (once: a long log)
        fs, f = {g.id: g for g in reversed(findings)}, findings[0]
        assert f.id == "stop-signal-received" and f.severity is Severity.ERROR and "sacct" in f.fix
        assert f.evidence["signal_name"] == "SIGTERM"
        assert fs["dataloader-worker-exited"].severity is not Severity.ERROR or "stop-signal-received" in fs["dataloader-worker-exited"].title

    def test_sibling_one_process_received_sigterm_then_its_loader_timed_out(self):
        # heldout20w Yatsuiii/Brain-Connectivity-GCN: "[rank: 0] Received SIGTERM: 15" in epoch 8, then the DataLoader's
        # queue timeout and "DataLoader worker (pid(s) ...) exited unexpectedly"
        assert head(case("heldout20w", "Yatsuiii-Brain-Connectivity-GCN-logs-finetune-log")).id == "stop-signal-received"

    def test_sibling_a_worker_terminated_with_no_received_line_is_the_loaders_consequence(self):
        f = head("Epoch 3:  12%|█▏        | 40/331 [00:20<02:27]\n" + WORKER_TERMINATED)
        assert f.id == "dataloader-worker-exited"

    def test_sibling_an_error_after_the_stop_is_what_it_caused(self):
        # the stop, then a worker killed outright (the SIGKILL that follows a SIGTERM not obeyed in time; the DataLoader's
        # own text): the stop stays the answer, and is not made the consequence of what came after it
        killed = "RuntimeError: DataLoader worker (pid 30001) is killed by signal: Killed.\n"
        assert head(RECEIVED + killed).id == "stop-signal-received"
        assert found(killed + RECEIVED)["stop-signal-received"].severity is not Severity.ERROR  # (before it: its consequence)

    def test_sibling_the_schedulers_line_names_the_stop(self):
        # Slurm's time limit (slurmstepd's message) after Lightning's line: the scheduler says who sent it and why
        limit = "slurmstepd: error: *** JOB 123456 ON gpu-node-01 CANCELLED AT 2024-03-01T12:00:00 DUE TO TIME LIMIT ***\n"
        fs = found(RECEIVED + limit)
        assert head(RECEIVED + limit).id == "slurm-time-limit" and "slurm-time-limit" in fs["stop-signal-received"].title

    def test_control_another_rank_failed_first(self):
        # a rank's own error, then Lightning's line on another rank as the job is torn down: the error is the answer
        fs = found(DATASET_ERROR + RECEIVED.replace("rank: 2", "rank: 1"))
        assert head(DATASET_ERROR + RECEIVED.replace("rank: 2", "rank: 1")).id != "stop-signal-received"
        assert fs["stop-signal-received"].severity is not Severity.ERROR or "consequence" in fs["stop-signal-received"].title

    def test_control_torchrun_death_signal_is_the_launchers(self):
        line = "W1123 10:56:51.729000 27016 torch/distributed/elastic/agent/server/api.py:753] Received 15 death signal, shutting down workers\n"
        fs = found(line)
        assert "launcher-terminated" in fs and "stop-signal-received" not in fs

    def test_control_mpi_crash_report(self):
        # Open MPI's report of a crash: the signal is named on the lines after it (dev3 horovod-786)
        text = "[good:02773] *** Process received signal ***\n[good:02773] Signal: Segmentation fault (11)\n"
        assert "stop-signal-received" not in found(text)

    def test_control_lightning_bypassing_sigterm_on_slurm(self):
        # Lightning's handler when Slurm requeues the job: it ignores the signal and goes on
        assert "stop-signal-received" not in found("[rank: 0] Bypassing SIGTERM: 15\nEpoch 4: 100%|██████████| 28/28\n")

    def test_control_a_person_says_the_job_got_sigterm(self):
        assert "stop-signal-received" not in found("My job got SIGTERM after about two hours, is there a time limit on the queue?\n")


class TestEarlierRunEndedByItself:
    verdict = "log-inconclusive"

    def test_sibling_caught_out_of_memory_then_its_end_then_runs_started_again(self):
        # heldout22w Trm1001: each epoch's OOM caught and logged at error level, "- INFO - Done!", then the program started
        # again (its "Experiment directory created" line), and the last run shows no failure: not failed
        findings = api.diagnose(case("heldout22w", "Trm1001-Automatic_market_and_promotion_video_generation-results-train-log")).findings
        fs = {g.id: g for g in reversed(findings)}
        assert findings[0].id == "log-inconclusive" and not any(f.severity is Severity.ERROR for f in findings)
        assert "earlier run" in fs["cuda-oom"].title

    def test_control_a_failure_then_the_set_up_again_and_the_log_stops(self):
        # dev7w chengziHome/detection: a CUDA out-of-memory ends the run, the same set-up starts again (COCO's "Done
        # (t=15.47s)" among it, no end of the earlier run), and the log stops: the failure stays the answer
        assert head(case("dev7w", "chengziHome-detection-nohup-log")).id == "cuda-oom"


class TestMessageGoesOn:
    verdict = "python-exception"

    def test_sibling_a_message_over_several_lines_names_the_failed_sub_run(self):
        # heldout22w AdityasCode/rcod job.err: "ValueError: Failed job id bye..", then "Deleting tmp results dir...", "The
        # following run falied to save results file:" and the sub-run's command: the first line alone cuts what it names
        f = head(case("heldout22w", "AdityasCode-rcod-job-err"))
        assert f.id == "python-exception" and "create_tmp_empty.sh" in " ".join(f.evidence["message_goes_on"])
        assert "the message goes on below its first line" in f.fix

    def test_control_a_paste_that_goes_on_with_the_code_typed(self):
        # heldout4 internlm-17: the NameError's line, then the source the reporter typed at the REPL (">>> import torch" ...)
        assert "message_goes_on" not in head(case("heldout4", "internlm-17-repl-torch-not-defined")).evidence


class TestBatchJobLimitKilled:
    verdict = "batch-job-limit-killed"

    # the end of an LSF job report (FredslundMagnus/Myretuen outputs/Explorer-off/NNAgent1Explorer-off.md)
    LSF = ("------------------------------------------------------------\n\n"
           "TERM_RUNLIMIT: job killed after reaching LSF run time limit.\nExited with exit code 140.\n\n"
           "Resource usage summary:\n\n    CPU time :                                   119996.00 sec.\n")

    def test_sibling_lsf_run_time_limit(self):
        f = head(self.LSF)
        assert f.id == "batch-job-limit-killed" and f.severity is Severity.ERROR and "#BSUB -W" in f.fix

    def test_sibling_pbs_walltime_names_who_stopped_the_rank(self):
        # marbl/canu#1214's line after Lightning's received SIGTERM: the scheduler says why the stop came
        text = RECEIVED + "=>> PBS: job killed: walltime 86415 exceeded limit 86400\n"
        assert head(text).id == "batch-job-limit-killed" and "batch-job-limit-killed" in found(text)["stop-signal-received"].title

    def test_sibling_slurms_memory_kill_then_its_cancel(self):
        # bcbio/bcbio-nextgen#2393: Slurm's own memory enforcement, then the cancel line that names no reason (it was read as
        # a person's scancel)
        text = ("slurmstepd-dback-c11-n01: error: Job 848444 exceeded memory limit (33715636 > 32757760), being killed\n"
                "slurmstepd-dback-c11-n01: error: Exceeded job memory limit\n"
                "slurmstepd-dback-c11-n01: error: *** JOB 848444 ON dback-c11-n01 CANCELLED AT 2018-05-04T17:06:42 ***\n")
        assert head(text).id == "batch-job-limit-killed" and found(text)["slurm-job-cancelled"].severity is not Severity.ERROR

    def test_control_slurms_warning_that_a_step_went_past_its_memory(self):
        # chaos/slurm#54: printed after a job that completed; no kill
        assert "batch-job-limit-killed" not in found("52428800 bytes (52 MB) copied, 0.459204 s, 114 MB/s\nslurmstepd: Exceeded step memory limit at some point.\n")

    def test_control_a_job_that_completed(self):
        assert "batch-job-limit-killed" not in found(self.LSF.replace("TERM_RUNLIMIT: job killed after reaching LSF run time limit.\nExited with exit code 140.",
                                                                      "Successfully completed."))

    def test_control_the_submission_scripts_limit(self):
        # the job script LSF and PBS echo into the output: a request, not a kill
        assert "batch-job-limit-killed" not in found("#PBS -l walltime=72:00:00\n#BSUB -W 4320\n# end of BSUB options\n")
