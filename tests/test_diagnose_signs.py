"""A failed log is never called healthy, and where the knowledge ends the answer says so.

Each case is a short log as users paste it (real lines from the public threads named
beside them, wrapped the ways they arrive: rank prefixes, Markdown, quoting, ANSI), run
through the real reader (prefilter included) and the knowledge base, as
`gpudoctor diagnose` does."""

from __future__ import annotations

import pytest

from gpudoctor import api
from gpudoctor.core.findings import Severity


def diagnose(text: str):
    return api.diagnose(text)


def head(text: str):
    report = diagnose(text)
    errors = [f for f in report.findings if f.severity is Severity.ERROR]
    assert errors, f"called healthy: {[f.id for f in report.findings]}"
    return errors[0], report


TB = 'Traceback (most recent call last):\n  File "/home/me/train.py", line 118, in main\n    out = model(x)\n'
LIB = '  File "/opt/conda/lib/python3.10/site-packages/torch/nn/parallel/distributed.py", line 795, in __init__\n    _sync_module_states(\n'

# log -> the finding that heads the answer (issue 27's list of wrong and missing answers)
CASES = {
    # exceptions whose class does not end in Error, from a DataParallel replica (huggingface/transformers#8145)
    "dp-stopiteration": (TB + "StopIteration: Caught StopIteration in replica 0 on device 0.\n", "dataparallel-replica-stopiteration"),
    "lightning-misconfiguration": ("pytorch_lightning.utilities.exceptions.MisconfigurationException: No 'test_dataloader()' method defined to run 'Trainer.test'.\n", "lightning-misconfiguration"),
    "privileged-port": ("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. The server socket has failed to bind to [::]:98 (errno: 13 - Permission denied). The server socket has failed to bind to 0.0.0.0:98 (errno: 13 - Permission denied).\n", "store-port-privileged"),
    "address-in-use": ("[W socket.cpp:401] [c10d] The server socket has failed to listen on [::]:47531 (errno: 98 - Address already in use).\n", "store-address-in-use"),
    "rendezvous-closed": ('    "message": "RendezvousClosedError: ",\n', "rendezvous-closed"),
    "rendezvous-timeout": ("torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError\n", "rendezvous-timeout"),
    "two-nccl": ("ImportError: /usr/lib/python3/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclMemFree\n", "nccl-two-libraries"),
    "fp16-no-gpu": (TB.replace("/home/me/train.py", "/opt/conda/lib/python3.10/site-packages/accelerate/accelerator.py") + "ValueError: fp16 mixed precision requires a GPU\n", "fp16-needs-gpu"),
    "bf16-v100": ("ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla V100-SXM2-32GB GPU has compute capability 7.0.\n", "bf16-unsupported-gpu"),
    "rtx4000-p2p": ('NotImplementedError: Using RTX 4000 series doesn\'t support faster communication broadband via P2P or IB. Please set `NCCL_P2P_DISABLE="1"` and `NCCL_IB_DISABLE="1" or use `accelerate launch` which will do this automatically\n', "rtx4000-p2p-ib-unsupported"),
    "barrier-device-ids": ("TypeError: barrier() got an unexpected keyword argument 'device_ids'\n", "barrier-device-ids-old-torch"),
    "fsdp-requires-grad": ("ValueError: `FlatParameter` requires uniform `requires_grad`\n", "fsdp-uniform-requires-grad"),
    "syncbn-double-backward": ("RuntimeError: derivative for batch_norm_backward_elemt is not implemented\n", "syncbn-double-backward"),
    "peer-access": ("node1:774:854 [0] transport/shm.cc:590 NCCL WARN Cuda failure 217 'peer access is not supported between these two devices'\n[rank0]: RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled cuda error, NCCL version 2.18.1\n", "cuda-peer-access-unsupported"),
    "ddp-model-on-cpu": (TB + LIB + "RuntimeError: Tensors must be CUDA and dense\n", "ddp-model-on-cpu"),
    "collective-cpu-tensor": (TB + "RuntimeError: Tensors must be CUDA and dense\n", "nccl-tensor-not-cuda"),
    "static-graph": ("RuntimeError: Your training graph has changed in this iteration, e.g., one parameter is unused in first iteration, but then got used in the second iteration. this is not compatible with static_graph set to True.\n", "ddp-static-graph-changed"),
    "no-route": ("ps-8:795:822 [0] include/socket.h:409 NCCL WARN Net : Connect to 192.168.1.9<54263> failed : No route to host\n", "network-no-route"),
    "barrier-fewer": ("INFO - Waiting in store based barrier to initialize process group for rank: 0, key: store_based_barrier_key:2 (world_size=8, worker_count=1, timeout=0:30:00)\n" * 3, "store-barrier-waiting"),
    "barrier-more": ("Waiting in store based barrier to initialize process group for rank: 0, key: store_based_barrier_key:1 (world_size=4, worker_count=8, timeout=0:30:00)\n", "store-barrier-extra-ranks"),
    "windows-10013": ("[W socket.cpp:436] [c10d] The server socket has failed to bind to [kodachi]:51545 (system error: 10013 - An attempt was made to access a socket in a way forbidden by its access permissions.).\n", "windows-port-forbidden"),
    "slurm-preempted": ("slurmstepd: error: *** JOB 37361369 ON learnfair5146 CANCELLED AT 2021-03-15T18:00:46 DUE TO PREEMPTION ***\nsrun: error: learnfair5146: task 0: Terminated\n", "slurm-preempted"),
    # faulthandler's report of a segfault is the segfault family's (pytorch/pytorch#72086)
    "fatal-python-error-segfault": ("Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007f2c (most recent call first):\n  File \"/usr/lib/python3/site-packages/torch/distributed/elastic/agent/server/api.py\", line 850 in _invoke_run\n", "launcher-sigsegv"),
    "fatal-python-error-bus": ("Fatal Python error: Bus error\n\nCurrent thread 0x00007f2c (most recent call first):\n  File \"/usr/lib/python3/site-packages/torch/distributed/elastic/agent/server/api.py\", line 850 in _invoke_run\n", "launcher-sigbus"),
    # no pattern knows these: the structural reader still sees a failure
    "fatal-python-error": ("Fatal Python error: PyThreadState_Get: the function must be called with the GIL held, but the GIL is released\n\nCurrent thread 0x00007f2c (most recent call first):\n  File \"/usr/lib/python3/site-packages/torch/distributed/elastic/agent/server/api.py\", line 850 in _invoke_run\n", "unrecognised-failure"),
    "terminate-called": ("terminate called after throwing an instance of 'std::runtime_error'\n  what():  something native went wrong\n", "unrecognised-failure"),
    "checked-in": ("[rank0]: rank 1 of 8 ranks has already checked in, waiting for the others\n", "unrecognised-failure"),
    "cut-traceback": ('[rank6]: Traceback (most recent call last):\n[rank6]:   File "/workspace/finetune.py", line 281, in <module>\n[rank6]:     train()\n', "unrecognised-failure"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_answer_heads_the_report(name):
    text, expected = CASES[name]
    first, report = head(text)
    assert first.id == expected, f"{name}: {[f.id for f in report.findings]}"
    assert not report.ok


@pytest.mark.parametrize(
    "wrapping",
    [
        lambda t: f"**{t}**",  # Markdown bold (the example)
        lambda t: f"> {t}",  # a quoted paste
        lambda t: f"<pre>{t}</pre>",
        lambda t: f"\x1b[31m{t}\x1b[0m",
        lambda t: f"[rank3]: {t}",
        lambda t: f"`{t}`",
    ],
    ids=["bold", "quote", "pre", "ansi", "rank-prefix", "inline-code"],
)
def test_wrapped_error_lines_are_still_failures(wrapping):
    first, _ = head(wrapping("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!") + "\n")
    assert first.id == "ddp-device-mismatch"


def test_an_exception_in_a_library_is_unrecognised_and_names_rank_and_frame():
    text = "".join(f"[rank3]: {line}\n" for line in (TB + LIB + "SomeLibraryError: the widget was not frobnicated").splitlines())
    first, report = head(text)
    assert first.id == "unrecognised-failure"
    assert first.title == "unrecognised failure: SomeLibraryError on rank 3 at me/train.py:118"
    assert "your own code" not in first.fix and "distributed.py:795" in first.fix
    assert report.data["root_cause"]["rank"] == 3 and report.data["root_cause"]["frame"] == "me/train.py:118"


def test_the_catch_all_blames_the_users_code_only_when_their_frame_raised():
    first, _ = head(TB + "KeyError: 'input_ids'\n")
    assert first.id == "python-exception" and "/home/me/train.py:118" in first.fix
    # the same frame, but the message points at the environment: not "fix your code"
    first, _ = head(TB + "RuntimeError: this op needs a compute capability of 8.0 or higher on your GPU\n")
    assert first.id == "unrecognised-failure"
    # a message that says what it does not support is that class (knowledge/patterns/classes7.py), not the user's line
    first, _ = head(TB + "RuntimeError: this op is not supported on your GPU's compute capability\n")
    assert first.id == "feature-not-supported"


def test_a_chained_exception_is_told_by_its_first_cause():
    # `raise RuntimeError(...) from exc`: the KeyError in the user's code is where it started
    library = '  File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/dataloader.py", line 795, in __next__\n    x\n'
    text = TB + "KeyError: 'x'\n\nThe above exception was the direct cause of the following exception:\n\n" + TB + library + "RuntimeError: could not load batch\n"
    first, report = head(text)
    assert first.id == "python-exception" and "KeyError" in first.title and "/home/me/train.py:118" in first.fix
    assert report.data["root_cause"]["what"] == "KeyError"


def test_device_side_assertions_interleaved_between_ranks_name_the_first_rank():
    lines = [
        "[rank1]: /pytorch/aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [5,0,0] Assertion `t >= 0 && t < n_classes` failed.",
        "[rank0]: epoch 0 step 10 loss 2.31",
        "[rank2]: /pytorch/aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [7,0,0] Assertion `t >= 0 && t < n_classes` failed.",
    ]
    first, report = head("\n".join(lines) + "\n")
    assert report.data["root_cause"]["rank"] == 1
    assert first.id == "cuda-index-out-of-range" and "num_classes" in first.fix
    # an assertion no pattern knows: still a failure, and the next step that finds the kernel
    first, report = head("[rank2]: /src/kernels/my_op.cu:40: my_kernel: block: [0,0,0], thread: [1,0,0] Assertion `x < limit` failed.\n")
    assert first.id == "unrecognised-failure" and "CUDA_LAUNCH_BLOCKING=1" in first.fix and report.data["root_cause"]["rank"] == 2


def test_the_launcher_stopping_the_other_ranks_is_not_the_failure():
    text = (
        "config check failed: dataset path missing, exiting\n"
        "W1125 01:56:01.714000 22188 torch/distributed/elastic/multiprocessing/api.py:1028] Sending process 22207 closing signal SIGTERM\n"
        "E1125 01:56:01.738000 22188 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: 3) local_rank: 0 (pid: 22198) of binary: /usr/bin/python3\n"
        "  traceback : Signal 15 (SIGTERM) received by PID 22207\n"
    )
    report = diagnose(text)
    assert not report.ok and "SIGTERM" not in report.findings[0].title


def test_srun_cancelling_the_other_tasks_is_not_a_second_cause():
    text = (
        "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total capacity)\n"
        "srun: error: gpu-node-01: task 0: Exited with exit code 1\n"
        "slurmstepd: error: *** STEP 6053.0 ON gpu-node-01 CANCELLED AT 2024-04-23T12:18:08 ***\n"
        "srun: error: gpu-node-02: task 1: Terminated\n"
    )
    report = diagnose(text)
    causes = [f for f in report.findings if f.evidence.get("role") == "cause" and f.severity is Severity.ERROR]
    assert [f.id for f in causes] == ["cuda-oom"]


@pytest.mark.parametrize(
    "text",
    [
        # Python reporting an exception it ignored at exit
        "Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7f62eb6ed630>\nTraceback (most recent call last):\n"
        '  File "/usr/lib/python3/site-packages/torch/utils/data/dataloader.py", line 1479, in __del__\n'
        "AssertionError: can only test a child process\n",
        # a barrier that waited while ranks arrived, then completed
        "Waiting in store based barrier to initialize process group for rank: 3, key: store_based_barrier_key:1 (world_size=6, worker_count=4, timeout=0:30:00)\n"
        "Rank 0: Completed store-based barrier for key:store_based_barrier_key:1 with 6 nodes.\n",
        # warnings and retries of a run that went on
        "/opt/conda/lib/python3.10/site-packages/torch/utils/checkpoint.py:31: UserWarning: the use_reentrant parameter should be passed explicitly.\n  warnings.warn(\n"
        "node1:4821:4821 [0] NCCL INFO socketPollConnect: connect returned Connection refused, retrying (1/34) after sleep for 100 msec\n"
        "exitcode: 0\nepoch 3 done, loss 0.12\n",
    ],
    ids=["ignored-at-exit", "barrier-completed", "warnings"],
)
def test_healthy_logs_stay_healthy(text):
    # never called failed; a log that shows no end either is "inconclusive", not healthy
    report = diagnose(text)
    assert not [f for f in report.findings if f.severity is Severity.ERROR], [(f.id, f.title) for f in report.findings]
    assert report.ok or [f.id for f in report.findings if f.severity is Severity.WARN] == ["log-inconclusive"]


def test_repeated_lines_are_counted_but_read_once():
    line = "[rank{r}]:[W socket.cpp:697] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 99 - Cannot assign requested address).\n"
    report = diagnose("".join(line.format(r=i % 8) for i in range(200)))
    [noise] = [f for f in report.findings if f.id == "ipv6-address-family"]
    assert noise.evidence["count"] == 200 and not_failed(report)


def test_an_unknown_failure_after_many_explained_lines_is_still_seen():
    explained = "node1:4821:4833 [0] NCCL WARN Cuda failure 'invalid argument'\n" * 40
    text = explained + TB + LIB + "StopIteration\n"
    report = diagnose(text)
    assert "unrecognised-failure" not in {f.id for f in report.findings}  # the NCCL failure explains the log
    # the same with the NCCL lines told as harmless noise: the StopIteration is the failure
    noise = "".join(f"[rank{i % 8}]:[W socket.cpp:697] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 99 - Cannot assign requested address).\n" for i in range(40))
    first, _ = head(noise + TB + LIB + "StopIteration\n")
    assert first.id == "unrecognised-failure" and "StopIteration" in first.title


@pytest.mark.parametrize(
    "line",
    [
        "INFO: checkpoint step_1000 checked in to the model registry",
        "[W1123 10:02:11.512 48213 ProcessGroupNCCL.cpp:1250] Warning: TORCH_NCCL_AVOID_RECORD_STREAMS is the default now, this environment variable is thus deprecated.",
        "torchrun: exitcode: 0, all workers finished",
        "node1:4821:4833 [0] NCCL INFO NET/IB : No device found.",
        "Epoch 3: 100%|##########| 500/500 [01:12<00:00, 6.9it/s, loss=0.213, error_rate=0.04]",
    ],
)
def test_healthy_lines_that_look_alike_are_not_signs(line):
    report = diagnose(line + "\n")
    assert not_failed(report), [(f.id, f.title) for f in report.findings]


def test_a_repeat_with_other_numbers_is_read_again_when_numbers_matter():
    first, _ = head("Process finished with exit code 0\n" * 3 + "Process finished with exit code 1\n")
    assert first.id == "unrecognised-failure" and "exit code 1" in first.title


def test_an_exception_of_any_class_raised_in_the_users_code_is_the_catch_all():
    first, report = head("[rank3]: " + TB.replace("\n", "\n[rank3]: ").rstrip("[rank3]: ") + "\n[rank3]: StopIteration\n")
    assert first.id == "python-exception" and "StopIteration in your code at me/train.py:118" in first.title
    assert report.data["root_cause"]["rank"] == 3


def test_a_refused_bind_is_told_by_its_reason_not_as_address_in_use():
    text = (
        "[W socket.cpp:436] [c10d] The server socket has failed to bind to [kodachi]:51545 (system error: 10013 - An attempt was made to access a socket in a way forbidden by its access permissions.).\n"
        "[E socket.cpp:472] [c10d] The server socket has failed to listen on any local network address.\n"
    )
    report = diagnose(text)
    causes = [f.id for f in report.findings if f.evidence.get("role") == "cause"]
    assert causes == ["windows-port-forbidden"]


def test_nccl_retries_are_a_failure_only_when_the_last_one_fails():
    line = "zgiot:1183664:1184669 [0] NCCL INFO socketPollConnect: connect returned No route to host, retrying ({n}/34) after sleep for 100 msec\n"
    assert not_failed(diagnose("".join(line.format(n=n) for n in range(1, 10))))  # it may still connect
    first, _ = head("".join(line.format(n=n) for n in range(1, 35)))
    assert first.id == "network-no-route"


def test_a_rich_boxed_traceback_is_read():
    # the shape of rich's traceback (as accelerate/Lightning scripts print it, e.g. bmaltais/kohya_ss#639)
    text = (
        "╭─────────────────────────────── Traceback (most recent call last) ────────────────────────────────╮\n"
        "│ /home/me/train_network.py:773 in <module>                                                        │\n"
        "│                                                                                                  │\n"
        "│ ❱ 773 │   train(args)                                                                            │\n"
        "╰──────────────────────────────────────────────────────────────────────────────────────────────────╯\n"
        "StopIteration\n"
    )
    first, report = head(text)
    assert "StopIteration" in first.title and report.data["root_cause"]["frame"] == "me/train_network.py:773"


def test_an_attribute_missing_from_a_module_points_at_the_version_not_the_code():
    first, _ = head(TB + "AttributeError: module 'torch' has no attribute 'compile'\n")
    assert first.id == "torch-api-version"  # a name torch added (2.0): the installed torch's version (diagA15)
    first, _ = head(TB + "AttributeError: 'NoneType' object has no attribute 'shape'\n")
    assert first.id == "python-exception"


def not_failed(report) -> bool:
    """Not called failed: no error (a log that shows no end either is inconclusive, not an error)."""
    return not any(f.severity is Severity.ERROR for f in report.findings)


def test_a_carriage_return_line_is_read_segment_by_segment_as_written():
    """A tqdm line rewritten by bare \\r holds many messages: each is read again as written
    (its own prefix kept) and never as the whole line, which gave every bar update the
    evidence of another segment and cost time quadratic in the line's length (a 28 KB
    Slurm output of 1,033 bar updates took minutes)."""
    from gpudoctor.knowledge.signs import as_written

    bar = "".join(f"\r 40%|####      | {i}/1000 [00:{i % 60:02d}<01:30, 6.6it/s]" for i in range(50))
    raw = bar + "\rERROR:root:no space left on device while writing ckpt.pt" + bar + "\n"
    assert as_written(raw, "0/1000 [00:00<01:30, 6.6it/s]").startswith("40%|")
    assert as_written(raw, "no space left on device while writing ckpt.pt") == "ERROR:root:no space left on device while writing ckpt.pt"
    # a paste that lost its line breaks: the record with its own prefix, not its neighbours
    glued = "".join(f"[rank{i % 4}]: epoch 1 step {i} loss 0.5 " for i in range(100))
    record = "epoch 1 step 50 loss 0.5"
    assert as_written(glued, record).endswith(record) and len(as_written(glued, record)) <= len(record) + 200
    # an ordinary line is the line as written, prefix included (the sibling: unchanged behaviour)
    assert as_written("[rank0]: ERROR:torch.distributed: boom\n", "boom") == "[rank0]: ERROR:torch.distributed: boom"
