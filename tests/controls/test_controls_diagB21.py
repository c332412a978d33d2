"""Controls and siblings for diagB21 (issue 35: whole logs that hold several runs appended one after another; the answer is
the last run's, never confidently another run's). A run starts again where a Python process of the program fails at its
start after one ended, or where a batch scheduler's next job starts (LSF's report, the line after Slurm's cancel); the last
run's failure leads, told at its own line and with its own words, and an earlier run's is kept as an earlier run's.
`test_control_*` is the look-alike input that must not get the verdict, `test_sibling_*` the nearest one that gets its own.
Lines are real ones (sources named beside them)."""

from __future__ import annotations

from test_controls_diagA17 import DS_BANNER, OOM

from gpudoctor import api
from gpudoctor.core.findings import Severity


def errors(text: str) -> list:
    return [f for f in api.diagnose(text).findings if f.severity is Severity.ERROR]


def finding(text: str, fid: str):
    return next((f for f in api.diagnose(text).findings if f.id == fid), None)


ENDED = "{'train_runtime': 812.4, 'train_loss': 0.412, 'epoch': 3.0}\ntraining completed\n"
TRAINER_STEPS = "".join(f"{{'loss': 0.{i}12, 'learning_rate': 1e-05, 'epoch': 0.{i}}}\n" for i in range(1, 8))

# https://github.com/vinaikchhetri/WAFFLE-WM/blob/7b09509b44bcdc9209c2fdc09e053a4005dfbbdd/logs/nohup.out (dev7w): a run
# stopped by Ctrl-C, a run of rounds, then starts outside the conda environment
INTERRUPTED = (
    "Traceback (most recent call last):\n"
    '  File "/home/exouser/Implementation/src/main.py", line 136, in <module>\n'
    "    fed_avg(args, client_data_dict, trainset, testset)\n"
    '  File "/home/exouser/Implementation/src/fedavg.py", line 125, in client_update\n'
    "    optimizer.zero_grad()\n"
    "KeyboardInterrupt\n"
)
ROUNDS = "".join(f"Round {r}\nserver stats: [loss: 1.925\nserver stats: [accuracy: 69.735\n" for r in range(6))
NO_TORCH = (
    "Traceback (most recent call last):\n"
    '  File "/home/exouser/Implementation/src/main.py", line 96, in <module>\n'
    "    from models import MP,CNN_CIFAR\n"
    '  File "/home/exouser/Implementation/src/models.py", line 1, in <module>\n'
    "    import torch\n"
    "ModuleNotFoundError: No module named 'torch'\n"
)


class TestModuleNotFoundLastRun:
    """A start that fails at its imports after an earlier run ended is the last run: its failure leads."""

    verdict = "module-not-found"

    def test_sibling_the_last_starts_import_failure_leads_and_the_earlier_interrupt_is_kept(self):
        found = errors(INTERRUPTED + ROUNDS + NO_TORCH + NO_TORCH)
        assert [f.id for f in found] == ["module-not-found"]
        assert found[0].evidence["first_line"] == 36  # the last start's own exception
        earlier = finding(INTERRUPTED + ROUNDS + NO_TORCH + NO_TORCH, "run-interrupted")
        assert earlier is not None and earlier.severity is Severity.INFO and earlier.evidence["earlier_run"]["started_again_at"] == 25

    def test_control_a_failed_start_then_a_run_that_ends_gets_no_error(self):
        assert errors(INTERRUPTED + ROUNDS + NO_TORCH + ROUNDS + ENDED) == []

    def test_control_a_chained_traceback_is_the_same_process(self):
        # the exception raised while handling an import error is the same process's, not a new start
        text = (NO_TORCH + "\nDuring handling of the above exception, another exception occurred:\n\n"
                + "Traceback (most recent call last):\n"
                + '  File "/home/exouser/Implementation/src/main.py", line 98, in <module>\n'
                + "    raise RuntimeError('install torch first')\nRuntimeError: install torch first\n")
        assert not [f for f in api.diagnose(INTERRUPTED + text).findings if "earlier_run" in f.evidence and f.id != "run-interrupted"]

    def test_control_an_import_tried_at_the_prompt_after_the_crash_is_no_new_run(self):
        # a person's `python -c` / REPL check after the run's failure: the run's failure stays the answer
        tried = ('Traceback (most recent call last):\n  File "<stdin>", line 1, in <module>\n'
                 "ModuleNotFoundError: No module named 'torch'\n")
        assert "run-interrupted" in [f.id for f in errors(INTERRUPTED + tried)]


# https://github.com/Viola868/deepseek_training/blob/e92843f895a592e816604e541afb72871dea9fd2/train.err (heldout20w): an
# earlier start refused by accelerate under trainer.train() (its exception's line as one process prints it), then the last
# start's SyntaxError, two processes at once
DEVICE_MAP = (
    '  File "training_swanlab.py", line 257, in <module>\n'
    "    main()\n"
    '  File "training_swanlab.py", line 250, in main\n'
    "    trainer.train()\n"
    '  File "/share/home/zhangshanqi/pytorch/lib/python3.8/site-packages/accelerate/accelerator.py", line 1300, in prepare\n'
    "    raise ValueError(\n"
    "ValueError: You can't train a model that has been loaded with `device_map='auto'` in any distributed mode. Please rerun your "
    "script specifying `--num_processes=1` or by launching with `python {{myscript.py}}`.\n"
)
SYNTAX = (
    '  File "training_swanlab.py", line 232\n'
    '  File "training_swanlab.py", line 232\n'
    '        optim="adamw_bnb_8bit"          # 8-bit\n'
    'optim="adamw_bnb_8bit"          # 8-bit\n'
    "        ^\n"
    "^\n"
    "SyntaxErrorSyntaxError: : invalid syntaxinvalid syntax\n"
)


class TestUnrecognisedFailureLastRun:
    """The last run's failure no pattern names is told, at its line, beside the earlier runs' named ones."""

    verdict = "unrecognised-failure"

    def test_sibling_the_last_starts_syntax_error_leads_over_an_earlier_runs_named_failure(self):
        text = "Traceback (most recent call last):\n" + DEVICE_MAP + SYNTAX
        found = errors(text)
        assert found and found[0].id in ("unrecognised-failure", "python-exception") and "SyntaxError: invalid syntax" in found[0].title + str(found[0].evidence)
        earlier = finding(text, "device-map-auto-distributed")
        assert earlier is not None and earlier.severity is Severity.INFO and "earlier run's" in earlier.title

    def test_control_a_traceback_the_paste_cuts_after_a_named_failure_is_no_later_run(self):
        # facebookresearch/pytorch3d#929 (dev6): magma's CUDA error, then the run's traceback cut after two frames
        text = ("CUDA runtime error: an illegal memory access was encountered (700) in magma_queue_destroy_internal at "
                "/opt/conda/conda-bld/magma-cuda110_1598416697386/work/interface_cuda/interface.cpp:945\n"
                "Traceback (most recent call last):\n"
                '  File "/share/home/wanghui/workspacce/zzy/spin_render/train.py", line 14, in <module>\n'
                "    trainer.train()\n"
                '  File "/share/home/wanghui/workspacce/zzy/spin_render/utils/base_trainer.py", line 65, in train\n')
        found = errors(text)
        assert found and found[0].id == "cuda-illegal-memory-access"

    def test_sibling_the_last_run_after_its_banner_exits_1_and_that_is_the_failure(self):
        # an out-of-memory run, the DeepSpeed banner again (dev7w's LIU-Hao-2002/GRPO_project), steps, and the last run's
        # exit status as PyCharm prints it: not "an earlier run's failure, and that run shows no failure"
        text = DS_BANNER + OOM + DS_BANNER + TRAINER_STEPS + "Process finished with exit code 1\n"
        found = errors(text)
        assert [f.id for f in found] == ["unrecognised-failure"] and "exit code 1" in found[0].title
        assert finding(text, "cuda-oom").severity is Severity.INFO

    def test_control_the_last_run_after_its_banner_exits_0(self):
        assert errors(DS_BANNER + OOM + DS_BANNER + TRAINER_STEPS + "Process finished with exit code 0\n") == []

    def test_sibling_every_lsf_report_exits_1_and_the_last_ones_is_the_failure(self):
        found = errors(LSF_EXITED * 3)
        assert [f.id for f in found] == ["unrecognised-failure"] and found[0].evidence["first_line"] == 2 * 14 + 7

    def test_control_the_last_lsf_report_completed_gets_no_error(self):
        assert errors(LSF_EXITED * 2 + LSF_DONE) == []


# https://github.com/GraphFramEx/graphframex/blob/f847f39af5ecb7bb9e6032afd54b04e7c0de0e9e/job.out (heldout20w): LSF's
# report of each job, appended; the job's own output follows its status
LSF_HEAD = (
    "Sender: LSF System <lsfadmin@eu-g2-18>\n"
    "Subject: Job 200772762: <python exp_synthetic/main.py> in cluster <euler> {status}\n"
    "\n"
    "Started at Mon Jan 17 20:54:01 2022\n"
    "Your job looked like:\n"
    "\n"
    "{result}\n"
    "\n"
    "Resource usage summary:\n"
    "    CPU time :                                   7.20 sec.\n"
    "The output (if any) follows:\n"
    "__gnn_train_scores:  {{'prec': 0.975210879806468, 'recall': 0.9784965034965035, 'acc': 0.9831932773109243}}\n"
    "PS:\n"
    "Read file <job.err> for stderr output of this job.\n"
)
LSF_EXITED = LSF_HEAD.format(status="Exited", result="Exited with exit code 1.")
LSF_DONE = LSF_HEAD.format(status="Done", result="Successfully completed.")

# https://github.com/heisenyan/openvla-oft slurm.out (heldout18w): seven jobs appended; Slurm cancels the last
SPLIT = (
    "Traceback (most recent call last):\n"
    '  File "/home/congcong/yanzhengyang/openvla-oft/vla-scripts/finetune.py", line 1186, in <module>\n'
    "    finetune()\n"
    '  File "/home/congcong/miniconda3/envs/openvla-oft/lib/python3.10/site-packages/tensorflow_datasets/core/splits.py", line 780, in _rel_to_abs_instr\n'
    "    raise ValueError(\n"
    "ValueError: Unknown split 'val'. Should be one of ['train'].\n"
)
STEPS = "".join(f"Epoch: {e}, L1: 0.078, Percep: 2.367, Gen: 0.504, Disc: 0.500:  28%| 141/496 [10:30<31:54,  5.39s/it]\n" for e in range(26, 30))


def cancel(job: int) -> str:
    return f"slurmstepd: error: *** JOB {job} ON dgx-06 CANCELLED AT 2025-08-21T02:35:44 ***\n"


class TestSlurmJobCancelledLastJob:
    """Slurm's cancel of the last job is that job's failure, not a consequence of an earlier job's."""

    verdict = "slurm-job-cancelled"

    def test_sibling_the_last_jobs_cancel_leads_and_the_earlier_jobs_failure_is_kept(self):
        text = SPLIT + cancel(267031) + "Thu Aug 21 02:36:47 2025\n" + STEPS + cancel(267039)
        found = errors(text)
        assert [f.id for f in found] == ["slurm-job-cancelled"] and found[0].evidence["first_line"] == len(text.splitlines())
        earlier = finding(text, "library-refused-value")  # tensorflow_datasets' own check refused the split (classes23c.py)
        assert earlier is not None and earlier.severity is Severity.INFO and "earlier run's" in earlier.title

    def test_control_one_jobs_cancel_after_its_own_traceback_stays_its_consequence(self):
        text = SPLIT + cancel(267031) + "srun: error: dgx-06: task 0: Terminated\n"
        found = errors(text)
        assert found and found[0].id == "library-refused-value" and "slurm-job-cancelled" not in [f.id for f in found]


SRUN_EXIT = "srun: error: gpu-01: task 0: Exited with exit code 1\n"


class TestSlurmTaskFailedLastRun:
    """srun's report that the last run's task exited is that run's failure, not a consequence of an earlier run's."""

    verdict = "slurm-task-failed"

    def test_sibling_the_last_runs_task_exit_is_not_explained_by_an_earlier_runs_failure(self):
        text = DS_BANNER + OOM + DS_BANNER + TRAINER_STEPS + SRUN_EXIT
        assert [f.id for f in errors(text)] == ["slurm-task-failed"]
        assert finding(text, "cuda-oom").severity is Severity.INFO

    def test_control_the_task_exit_right_after_its_own_runs_failure_stays_its_consequence(self):
        found = errors(DS_BANNER + TRAINER_STEPS + OOM + SRUN_EXIT)
        assert [f.id for f in found] == ["cuda-oom"]
