"""The story the knowledge base tells from matched lines: cause first,
consequences marked, warnings that caused errors promoted, the API other
commands use (explain_lines, only_lost_a_peer)."""

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge import explain_lines, only_lost_a_peer

WATCHDOG = "[rank1]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600060 milliseconds before timing out."
PEER = "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [172.28.0.12]:14004"
OOM_RANK3 = "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.36 GiB. GPU 3 has a total capacity of 47.50 GiB of which 1.52 GiB is free."
OMP = "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded"


def ids(findings):
    return [f.id for f in findings]


def test_cause_first_even_when_it_comes_later_in_the_log():
    found = explain_lines([WATCHDOG, PEER, OOM_RANK3, OMP])
    assert ids(found)[0] == "cuda-oom"
    by = {f.id: f for f in found}
    for consequence in ("nccl-watchdog-timeout", "gloo-peer-closed"):
        assert by[consequence].evidence["consequence_of"] == "cuda-oom"
        assert by[consequence].severity is Severity.WARN
    assert ids(found)[-1] == "launcher-omp-threads" and by["launcher-omp-threads"].severity is Severity.INFO


def test_the_watchdog_fields_are_evidence():
    [f] = explain_lines([WATCHDOG])
    assert (f.evidence["OpType"], f.evidence["SeqNum"], f.evidence["NumelIn"], f.evidence["Timeout(ms)"]) == ("ALLREDUCE", "1580", "466119168", "600000")
    assert f.severity is Severity.ERROR and "its cause is not in this log" in f.title


def test_a_warning_that_explains_an_error_becomes_an_error():
    found = explain_lines([
        "[rank8] Warning: Unable to resolve hostname to a (local) address. Using the loopback address as fallback. Manually set the network interface with GLOO_SOCKET_IFNAME",
        "RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error",
    ])
    assert ids(found) == ["gloo-loopback-fallback", "gloo-connect-full-mesh"]
    assert found[0].severity is Severity.ERROR


def test_out_of_memory_on_gpu_0_from_another_rank():
    [f] = explain_lines(["[rank3]: RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 10.76 GiB total capacity; 9.50 GiB already allocated)"])
    assert f.id == "cuda-oom-gpu0-other-ranks"
    [f] = explain_lines(["[rank0]: RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 10.76 GiB total capacity; 9.50 GiB already allocated)"])
    assert f.id == "cuda-oom"


def test_a_victim_only_lost_a_peer():
    assert only_lost_a_peer(["Traceback (most recent call last):", "  File \"train.py\", line 3", PEER])
    assert only_lost_a_peer([WATCHDOG])
    assert not only_lost_a_peer([OOM_RANK3, PEER])
    assert not only_lost_a_peer([OMP])
    assert not only_lost_a_peer(["epoch 1 loss 0.3"])


def test_nothing_recognised_is_nothing():
    assert explain_lines(["epoch 0 step 10 loss 2.1", ""]) == []


def test_an_unknown_exception_is_still_the_cause():
    # no traceback shows where it was raised: an honest "unrecognised failure", not "fix your code"
    found = explain_lines(["[rank2]: KeyError: 'input_ids'", WATCHDOG])
    assert ids(found) == ["unrecognised-failure", "nccl-watchdog-timeout"]
    assert found[0].evidence["exception"] == "KeyError" and found[0].evidence["ranks"] == [2]
    assert found[0].title.startswith("unrecognised failure: KeyError")


def test_an_exception_raised_in_the_users_own_code_points_at_the_line():
    found = explain_lines(['[rank2]: Traceback (most recent call last):', '[rank2]:   File "/home/me/train.py", line 118, in main',
                           "[rank2]:     x = batch['input_ids']", "[rank2]: KeyError: 'input_ids'", WATCHDOG])
    assert ids(found) == ["python-exception", "nccl-watchdog-timeout"]
    assert "/home/me/train.py:118" in found[0].fix


def test_a_hang_between_gpus_that_use_p2p_points_at_p2p():
    [head, p2p] = explain_lines(["node0:13572:13572 [1] NCCL INFO Channel 00 : 1[1] -> 0[0] via P2P/IPC", WATCHDOG])
    assert head.id == "nccl-watchdog-timeout" and head.evidence["p2p_in_use"] is True
    assert "NCCL_P2P_DISABLE=1" in head.fix
    assert p2p.id == "nccl-p2p-in-use" and p2p.severity is Severity.INFO


def test_lines_cut_short_are_still_recognised():
    # a paste cut at the terminal's width, or a log that ends mid-line
    cut = {
        "[rank5]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLRE": "nccl-watchdog-timeout",
        "Duplicate GPU detected : rank 3 and rank 0 bo": "nccl-duplicate-gpu",
        "RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLRED": "collective-fingerprint-mismatch",
        "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients": "store-waiting-for-clients",
        "RuntimeError: DDP expects same model across all ranks, but Rank 3 has 2247 par": "ddp-model-mismatch",
    }
    for line, expected in cut.items():
        assert [f.id for f in explain_lines([line])] == [expected], line
    [wd] = explain_lines([next(iter(cut))])
    assert wd.evidence["SeqNum"] == "1580" and wd.evidence["ranks"] == [5]


def test_root_cause_rank_from_torchruns_block_or_the_causes_own_line():
    from gpudoctor.knowledge import Diagnosis

    block = ["Root Cause (first observed failure):", "[0]:", "  host      : node9", "  rank      : 2 (local_rank: 2)", "  exitcode  : 1 (pid: 7)", "===="]
    d = Diagnosis()
    d.feed([WATCHDOG, *block])  # only consequences: torchrun's block names the rank
    assert (d.root_cause()["rank"], d.root_cause()["node"]) == (2, "node9")
    d = Diagnosis()
    d.feed([OOM_RANK3, *block])  # the cause's own line says rank 3
    assert d.root_cause()["rank"] == 3 and d.root_cause()["torchrun_root_cause_rank"] == 2


def test_a_rank_that_printed_only_the_teardown_timed_out_too():
    # hiyouga/LlamaFactory#7396: rank 3 shows only "Exception ... detected by watchdog"; rank 1 is silent
    wd = WATCHDOG.replace("[rank1]", "[rank{r}]").replace("[Rank 1]", "[Rank {r}]")
    teardown = "[rank3]:[E321 02:07:08.465224069 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 3] Exception (either an error or timeout) detected by watchdog at work: 1580, last enqueued NCCL work: 1582, last completed NCCL work: 1579."
    found = explain_lines([wd.format(r=0), wd.format(r=4), teardown, wd.format(r=2)])
    assert found[0].id == "nccl-watchdog-timeout"
    assert found[0].evidence["ranks_not_reporting"] == [1]


def test_a_consequence_that_quotes_its_cause_reports_the_cause_but_not_its_wrapper():
    # the watchdog line quotes the CUDA error that ended the rank
    found = explain_lines(["[E ProcessGroupNCCL.cpp:916] [Rank 0] NCCL watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered"])
    assert found[0].id == "cuda-illegal-memory-access"
    # "NCCL error in: ..." only wraps the remote-error message: no second cause
    found = explain_lines(["torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1347, remote process exited or there was a network error, NCCL version 2.18.5"])
    assert [f.id for f in found] == ["nccl-remote-error"]


def test_the_rank_a_line_names_is_the_first_failing_rank():
    from gpudoctor.knowledge.story import Diagnosis

    d = Diagnosis()
    d.feed(["init.cc:1247 NCCL WARN Mismatched collective detected, please check your collective calls at and around rank 39. You can use NCCL_DEBUG=INFO"])
    assert d.root_cause()["rank"] == 39
    # torchrun's Root Cause block cut after its "[0]:" line still names rank 0
    d = Diagnosis()
    d.feed(["torch.distributed.elastic.multiprocessing.errors.ChildFailedError:", "Root Cause (first observed failure):", "[0]:", "  time      : 2022-11-29_17:14:20", "  host      : GPU236"])
    assert d.root_cause()["rank"] == 0
