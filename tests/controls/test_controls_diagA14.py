"""diagA14 (issue 35; the retired heldout13's one confidently wrong answer, and launcher-only logs): each class test pairs a
widened or new rule with its control (the look-alike that must keep its verdict) and its dangerous sibling (the nearest
input that needs another). Real lines, threads beside them."""

from __future__ import annotations

import pytest
from test_controls_detect8 import LINK, ROOT_CAUSE, head, head_id

from gpudoctor import api

# MCG-NJU/RTD-Action#31: a DDP run that stopped moving after its first step, then Ctrl-C (the agent's words as torch 1.x logs them)
STUCK = ("[2024-02-22 19:20:17,149][datasets.builder][WARNING] - Found cached dataset json (/root/.cache/huggingface/datasets/json)\n"
         "[2024-02-22 19:20:22,163][torch.nn.parallel.distributed][INFO] - Reducer buckets have been rebuilt in this iteration.\n"
         "\n"
         "my run gets stuck here, after I interrupt it, it shows below\n"
         "\n")
AGENT = "WARNING:torch.distributed.elastic.agent.server.api:Received {n} death signal, shutting down workers\n"
CLOSING = "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 4797 closing signal SIG{name}\n"


class TestStopSignalSaysWhoSentIt:
    """launcher-terminated says what its own signal means: SIGINT a Ctrl-C (and where the run stood), SIGHUP a closed
    session (nohup does not protect torchrun), SIGTERM a scheduler's or a parent's stop."""

    def test_sibling_ctrl_c_on_a_stuck_run_says_where_it_stood(self):
        found = head(STUCK + AGENT.format(n=2) + CLOSING.format(name="INT"))
        assert found is not None and found.id == "launcher-terminated" and "SIGINT" in found.title
        assert found.evidence["stood_at_line"] == 2 and "Reducer buckets" in found.evidence["stood_at"]
        assert "did not fail on their own" in found.why and "py-spy dump" in found.fix and "nohup" not in found.fix

    @pytest.mark.parametrize("before", [
        "my run gets stuck, after I interrupt it, it shows below\n",
        # torchrun's own start-up banner is the launcher's line, not the program's
        "WARNING:torch.distributed.run:\nSetting OMP_NUM_THREADS environment variable for each process to be 1 in default\n"
        "W0219 12:09:28.313000 140145133409408 torch/distributed/run.py:757] Setting OMP_NUM_THREADS environment variable\n",
    ])
    def test_control_ctrl_c_with_no_program_line_before_it_says_so(self, before):
        found = head(before + AGENT.format(n="Signals.SIGINT"))
        assert found is not None and "SIGINT" in found.title and "stood_at" not in found.evidence
        assert "where the run stood is not known" in found.why

    # OpenMOSS/MOSS#237: started with nohup, stopped after a while
    def test_sibling_sighup_is_a_closed_session(self):
        found = head("Message: 'Received 1 death signal, shutting down workers'\n")
        assert found is not None and "SIGHUP" in found.title and "setsid" in found.fix and "tmux" in found.fix

    # PrimeIntellect-ai/prime-rl#1360: the trainer stopped by its orchestrator after another component crashed
    @pytest.mark.parametrize("line", [
        "W1130 12:13:49.388000 124326 torch/distributed/elastic/agent/server/api.py:723] Received 15 death signal, shutting down workers\n",
        "torch.distributed.elastic.multiprocessing.api.SignalException: Process 27016 got signal: 15\n",
    ])
    def test_sibling_sigterm_is_a_stop_from_outside(self, line):
        found = head(STUCK + line)
        assert found is not None and "SIGTERM" in found.title and "sacct" in found.fix and "stood_at" not in found.evidence

    def test_control_the_scheduler_that_cancelled_at_its_time_limit_still_leads(self):
        log = (AGENT.format(n=15) + "slurmstepd: error: *** JOB 1234567 ON gpu-node-03 CANCELLED AT 2024-03-01T10:00:00 DUE TO TIME LIMIT ***\n")
        assert head_id(log) == "slurm-time-limit"

    def test_sibling_the_agent_stopping_the_others_after_a_worker_failed_is_a_consequence(self):
        # hiyouga/LlamaFactory-like: a worker raised, torchrun sent SIGTERM to its peers; no death signal reached the agent
        log = ("Traceback (most recent call last):\n  File \"/home/u/train.py\", line 88, in <module>\n"
               "ValueError: the dataset has no column 'text'\n" + CLOSING.format(name="TERM") +
               "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 1622990) of binary: /usr/bin/python\n")
        ids = [f.id for f in api.diagnose(log).findings]
        assert "launcher-terminated" not in ids and head_id(log) != "launcher-terminated"


# E3SM-Project/scream#2188: Open MPI's summary of the first process that failed, all the log holds of it
MPIEXEC = ("mpiexec detected that one or more processes exited with non-zero status, thus causing\n"
           "the job to be terminated. The first process to do so was:\n\n"
           "  Process name: [[1888,1],{rank}]\n  Exit code:    {code}\n"
           "--------------------------------------------------------------------------\n")
# horovod/horovod#469, Kay1794/Aware-of-the-history#2 (PID and node masked in the paste)
NOTICED = "mpirun noticed that process rank {rank} with PID xxxxxx on node xxxxxxxx exited on signal {signal} ({name}).\n"


class TestMpiLauncherOnly:
    """mpirun's summary names the rank and how it ended: said by what that code or signal most often means, never as the cause."""

    def test_sibling_the_first_failed_process_and_its_exit_code(self):
        found = head(MPIEXEC.format(rank=0, code=1))
        assert found is not None and found.id == "mpi-rank-failed" and found.evidence.get("culprit_rank") == "0"
        assert "exit code 1" in found.why and "--output-filename" in found.fix

    @pytest.mark.parametrize("signal,name,said", [("9", "Killed", "OOM killer"), ("2", "Interrupt", "Ctrl-C"), ("15", "Terminated", "SIGTERM")])
    def test_sibling_the_signal_says_how_the_rank_ended(self, signal, name, said):
        found = head(NOTICED.format(rank=1, signal=signal, name=name))
        assert found is not None and found.id == "mpi-rank-failed" and said in found.why
        assert found.evidence["role"] == "consequence"  # what the signal most often means, not a cause asserted

    def test_control_the_oom_killers_own_line_decides_the_cause(self):
        log = ("Out of memory: Killed process 12345 (python) total-vm:98765432kB, anon-rss:65432100kB, file-rss:0kB, shmem-rss:0kB\n"
               + NOTICED.format(rank=1, signal=9, name="Killed"))
        assert head_id(log) == "host-oom-killer"


# THU-MIG/RepViT#65: torch.distributed.launch's own traceback, cut before its ChildFailedError, after the agent's summary
AGENT_FAILED = ("[2024-05-28 14:04:28,584] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1) local_rank: 2 "
                "(pid: 60554) of binary: /opt/conda/bin/python\n")
LAUNCHER_TB = ('Traceback (most recent call last):\n  File "/opt/conda/lib/python3.8/runpy.py", line 194, in _run_module_as_main\n'
               "    return _run_code(code, main_globals, None,\n"
               '  File "/opt/conda/lib/python3.8/site-packages/torch/distributed/launch.py", line 196, in <module>\n    main()\n')


class TestLaunchersOwnTraceback:
    """A traceback cut inside torch's launcher (torch.distributed.launch, torchrun) is the agent's own: said so, with what
    the agent raises there (ChildFailedError after a worker failed, a rendezvous error when it restarts), never decided."""

    def test_sibling_torch_distributed_launch_is_the_agents_own(self):
        found = head(AGENT_FAILED + LAUNCHER_TB)
        assert found is not None and found.id == "unrecognised-failure" and "ChildFailedError when a worker failed" in found.fix

    def test_control_a_ranks_own_cut_traceback_is_not_the_agents(self):
        log = AGENT_FAILED + LAUNCHER_TB + '  File "/home/u/RepViT/main.py", line 412, in main\n    train_one_epoch(model)\n'
        found = head(log)
        assert found is not None and found.id == "unrecognised-failure" and "ChildFailedError when a worker failed" not in found.fix


class TestOtherLaunchersSummaries:
    """deepspeed's, mp.spawn's and srun's reports alone: the status they name, by what it most often means."""

    @pytest.mark.parametrize("line", [
        # deepspeed's sigkill_handler (hiyouga/LlamaFactory#2444), mp.spawn before torch 1.9 (pytorch/pytorch#62403)
        "[2024-02-20 10:00:00,000] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', 'train_bash.py', '--stage', 'ppo'] exits with return code = 1",
        "Exception: process 1 terminated with exit code 1",
    ])
    def test_sibling_a_python_launchers_status_1_is_an_uncaught_exception(self, line):
        found = head(line + "\n")
        assert found is not None and found.id == "launcher-child-exit" and "Exit code 1 is Python's status" in found.why

    def test_sibling_an_srun_task_may_be_any_program(self):
        # ComputationalRadiationPhysics/picongpu#198 (a C++ code's task)
        found = head("srun: error: taurusi2031: tasks 10-11: Exited with exit code 1\n")
        assert found is not None and found.id == "slurm-task-failed" and "task 10-11 on node taurusi2031" in found.why
        assert "a program's own failure status" in found.why and "Python's status for" not in found.why

    def test_sibling_an_srun_task_terminated_was_stopped_from_outside(self):
        found = head("srun: error: gpu-node-03: task 5: Terminated\n")
        assert found is not None and found.id == "slurm-task-failed" and "SIGTERM, a stop from outside" in found.why

    def test_control_srun_saying_out_of_memory_decides_it(self):
        assert head_id("srun: error: nid001277: tasks 1-3: Out Of Memory\nsrun: error: nid001277: task 0: Killed\n") == "host-oom-killer"


class TestRankEndedByAStopSignal:
    """A rank torchrun's Root Cause block shows ended by SIGTERM/SIGINT/SIGHUP was stopped from outside: no error of its own."""

    @pytest.mark.parametrize("code,name", [(-15, "SIGTERM"), (-2, "SIGINT"), (-1, "SIGHUP")])
    def test_sibling_a_stopped_rank_did_not_fail_on_its_own(self, code, name):
        found = head(ROOT_CAUSE.format(code=code, traceback=f"Signal {-code} ({name}) received by PID 19555"))
        assert found is not None and found.id == "torchrun-root-cause" and f"is {name}: the rank did not fail on its own" in found.why

    def test_control_an_abort_keeps_its_reading(self):
        found = head(ROOT_CAUSE.format(code=-6, traceback="Signal 6 (SIGABRT) received by PID 19555"))
        assert found is not None and "did not fail on its own" not in found.why
