"""Did it fail? Evidence of failure from every shape a paste takes (issue 35 item 2): a traceback
cut at the top, at the bottom or glued to its source line, rich's boxed frames, torch's C++
backtrace, Ray's exceptions, shells and launchers. When no pattern knows why, the answer is
`unrecognised-failure` (exit 1) naming the line, never healthy. Real lines from the threads named."""

from __future__ import annotations

import pytest

from gpudoctor import api
from gpudoctor.core.exit_code import report_exit
from gpudoctor.core.findings import Severity

SITE = "/opt/conda/lib/python3.10/site-packages"

FAILED = {
    # hiyouga/LLaMA-Factory: the paste starts inside the traceback and stops before the exception
    "frames without header or exception": (
        '[rank1]:   File "/home/project/LLaMA-Factory/src/llamafactory/launcher.py", line 23, in <module>\n'
        "[rank1]:     launch()\n"
        '[rank1]:   File "/home/project/LLaMA-Factory/src/llamafactory/train/tuner.py", line 50, in run_exp\n'
        "[rank1]:     run_sft(model_args, data_args, training_args, finetuning_args, generating_args, callb\n"
    ),
    # a traceback header and nothing after it (the paste ends)
    "a header alone": "06/11/2024 08:00:16 - INFO - llamafactory.cli - Initializing distributed tasks\nTraceback (most recent call last):\n",
    # deepspeedai/DeepSpeed#3775: rich's boxed traceback, its top and its exception cut
    "rich frames without the box top": (
        "│ /opt/conda/lib/python3.9/site-packages/deepspeed/utils/nvtx.py:11 in wrapped_fn                  │\n"
        "│                                                                                                  │\n"
        "│    8 │   function call.\"\"\"                                                                       │\n"
        "│ /opt/conda/lib/python3.9/site-packages/deepspeed/runtime/zero/stage3.py:2086 in backward         │\n"
    ),
    # axolotl: torch's C++ backtrace, its message cut
    "a c++ backtrace": (
        "frame #3: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x14d (0x78ee7c02261d in /root/miniconda3/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so)\n"
        "frame #4: <unknown function> + 0x145c0 (0x78eec64ee5c0 in /root/miniconda3/lib/python3.11/site-packages/torch/lib/libtorch.so)\n"
    ),
    # hiyouga/LLaMA-Factory#9073: an exception glued to the source line before it
    "an exception glued to its source line": (
        "    raise CalledProcessError(retcode, process.args, subprocess.CalledProcessError: Command '['torchrun', '--nnodes', '1']' "
        "returned non-zero exit status 1.\n"
    ),
    # ray-project/ray: the exception class Ray prints, inside a traceback
    "ray's exception class": (
        "Traceback (most recent call last):\n"
        f'  File "{SITE}/ray/train/_internal/utils.py", line 54, in check_for_failure\n'
        "ray.exceptions.RayTaskError(RuntimeError): ray::_Inner.train() (pid=2288, ip=10.12.86.0, repr=TorchTrainer)\n"
    ),
    "a shell that cannot run the launcher": "/bin/sh: 1: torchrun: not found\n",
    "an argument the launcher refuses": "usage: torchrun [-h]\ntorchrun: error: unrecognized arguments: --nproc-per-node=1\n",
    "colossalai run's summary": "Error: failed to run torchrun --nproc_per_node=4 --nnodes=1 --node_rank=0 --rdzv_backend=c10d\n",
    "torchrun's summary, its rank's error cut": "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n====\n",
    "a ray worker that died": "(raylet) A worker died or was killed while executing a task by an unexpected system error.\n",
    "hydra's runner": "Error executing job with overrides: ['algorithm.adv_estimator=grpo']\n",
}


@pytest.mark.parametrize("name", sorted(FAILED))
def test_a_failure_no_pattern_knows_is_unrecognised_never_healthy(name):
    report = api.diagnose(FAILED[name])
    errors = [f for f in report.findings if f.severity is Severity.ERROR]
    assert errors, f"called healthy: {[f.id for f in report.findings]}"
    assert report_exit(report) == 1
    if errors[0].id == "unrecognised-failure":
        assert errors[0].evidence.get("log"), "the finding names the line that shows the failure"


def test_frames_of_a_traceback_already_read_are_not_a_second_failure():
    log = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/train.py", line 3, in <module>\n'
        '  File "/home/u/model.py", line 9, in forward\n'
        "KeyError: 'input_ids'\n"
    )
    report = api.diagnose(log)
    assert [f.id for f in report.findings if f.severity is Severity.ERROR] == ["python-exception"]


def test_a_ray_wrapper_is_told_through_the_workers_own_exception():
    # ray-project/ray: RayTaskError(RuntimeError) re-raises a worker's exception; the worker's traceback
    # follows without a header, here cut before its message
    log = (
        "Traceback (most recent call last):\n"
        f'  File "{SITE}/ray/_private/worker.py", line 906, in get_objects\n'
        "ray.exceptions.RayTaskError(RuntimeError): ray::RayTrainWorker._RayTrainWorker__execute() (pid=2475, ip=10.12.86.0)\n"
        f'  File "{SITE}/ray/train/_internal/worker_group.py", line 31, in __execute\n'
        '  File "/tmp/ipykernel_8937/2468910161.py", line 65, in train_loop_per_worker\n'
    )
    found = [f for f in api.diagnose(log).findings if f.severity is Severity.ERROR]
    assert found[0].id == "unrecognised-failure"
    assert found[0].title.startswith("unrecognised failure: RuntimeError in the Ray task or actor RayTrainWorker._RayTrainWorker__execute (pid 2475)")
    assert "2468910161.py:65" in found[0].title


def test_a_ray_wrapper_alone_is_still_a_failure():
    log = (
        "Traceback (most recent call last):\n"
        f'  File "{SITE}/ray/_private/worker.py", line 906, in get_objects\n'
        "ray.exceptions.RayTaskError(OSError): ray::TaskRunner.run() (pid=4237, ip=10.130.1.15)\n"
    )
    assert [f for f in api.diagnose(log).findings if f.severity is Severity.ERROR]


def test_a_dataloader_workers_exception_is_told_through_its_original_traceback():
    log = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/train.py", line 40, in <module>\n'
        f'  File "{SITE}/torch/_utils.py", line 394, in reraise\n'
        "RuntimeError: Caught RuntimeError in DataLoader worker process 2.\n"
        "Original Traceback (most recent call last):\n"
        '  File "/home/u/data/worker.py", line 12, in __getitem__\n'
        "RuntimeError: the shard index 17 is past the 16 shards on this rank\n"
    )
    found = [f for f in api.diagnose(log).findings if f.severity is Severity.ERROR]
    assert "data/worker.py:12" in found[0].title and "Caught" not in found[0].title


def test_torchruns_error_handler_record_is_a_failure_whatever_its_logger_prefix():
    # hpcaitech/ColossalAI#1779: the record's first line is only the logger's prefix and a brace
    report = api.diagnose('ERROR:torch.distributed.elastic.multiprocessing.errors.error_handler:{\n  "message": {\n')
    assert [f for f in report.findings if f.severity is Severity.ERROR]
