"""Root cause and victims of a failed job, from how each rank ended and what it left
in its run folder (real error texts of gloo ranks, torch 2.13)."""

from gpudoctor.core.exit_code import ranks_exit
from gpudoctor.knowledge.collectives import CollectiveRecord, analyze
from gpudoctor.hang.watch import CollectiveWatch, rank_states, read_traces
from gpudoctor.hang.verdict import diagnose_job
from gpudoctor.launch.rundir import PublishedTrace, RankExit, RankTrace, encode_trace, trace_path
from gpudoctor.launch.supervisor import LaunchResult, RankOutcome

GLOO_CLOSED = (
    "[/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] "
    "Connection closed by peer [127.0.0.1]:40092. This is typically caused by a remote worker crashing. "
    "Check the logs of the remote worker before reporting an error. GLHF! 🏖️"
)
GLOO_CLOSED_LINE = "[rank0]: RuntimeError: " + GLOO_CLOSED


def outcome(rank, state, code, ended, tail=(), signal=None):
    return RankOutcome(rank, state, code, signal, "joined", 0, None, tuple(tail), f"/run/rank{rank}.stderr", None, ended)


def rec(rank, seq, state="completed", kind="all_reduce", where="/w/train.py:20"):
    return CollectiveRecord(rank, "0", seq, kind, ((4,),), ("float32",), state=state, where=where, time_ns=seq)


def test_the_first_rank_to_fail_on_its_own_is_the_root_cause_and_its_peer_a_victim():
    ranks = (
        outcome(0, "exited", 1, 1.2, tail=[GLOO_CLOSED_LINE]),
        outcome(1, "exited", 1, 1.2, tail=["[rank1]: ValueError: bad batch at step 2"]),
    )
    traces = {
        0: RankTrace(0, (rec(0, 1), rec(0, 2), rec(0, 3)), exit=RankExit("exception", "RuntimeError", GLOO_CLOSED)),
        1: RankTrace(1, (rec(1, 1), rec(1, 2)), exit=RankExit("exception", "ValueError", "bad batch", "/w/train.py:16", 1)),
    }
    result = LaunchResult(ranks, False, False, 2.0, "/run")
    job = diagnose_job(result, traces, [])
    first, victim = job.findings
    assert first.id == "rank-raised" and first.title.startswith("rank 1 failed first: it raised ValueError: bad batch at ")
    assert "(after collective #2)" in first.title
    assert victim.id == "rank-peer-lost" and victim.severity.value == "info"
    assert victim.title.startswith("rank 0 failed because rank 1 was gone (after collective #3): RuntimeError: Connection closed by peer")
    assert ranks_exit(result, job.cause_exitcode) == 1
    assert job.root_cause["rank"] == 1 and job.root_cause["reached"] == 2 and job.root_cause["type"] == "ValueError"
    assert [r.state for r in job.ranks] == ["lost-peer", "failed"]


def test_a_signal_gives_128_plus_its_number():
    ranks = (outcome(0, "exited", 1, 0.5, tail=[GLOO_CLOSED_LINE]), outcome(1, "signaled", -9, 0.5, signal="SIGKILL"))
    result = LaunchResult(ranks, False, False, 1.0, "/run")
    job = diagnose_job(result, {}, [])
    assert ranks_exit(result, job.cause_exitcode) == 137 and job.root_cause["signal"] == "SIGKILL"
    assert "OOM" in job.findings[0].fix


def test_a_collective_finding_is_the_root_cause_when_no_rank_failed_on_its_own():
    ranks = (outcome(0, "diagnosed", -15, None), outcome(1, "diagnosed", -15, None))
    traces = {
        0: RankTrace(0, (rec(0, 1), rec(0, 2, "started", "barrier", "/w/train.py:30"))),
        1: RankTrace(1, (rec(1, 1), rec(1, 2, "started"))),
    }
    states = rank_states(traces, {})
    result = LaunchResult(ranks, False, False, 1.0, "/run", diagnosed="mismatch")
    job = diagnose_job(result, traces, analyze(states), "mismatch")
    assert [f.id for f in job.findings] == ["collective-mismatch"]
    assert job.root_cause["rank"] == 0 and job.root_cause["where"] == "/w/train.py:30"  # the call rank 1 never made
    assert ranks_exit(result, job.cause_exitcode) == 1 and [r.state for r in job.ranks] == ["waiting", "waiting"]


def test_the_watch_stops_a_mismatch_from_published_traces(tmp_path):
    for rank, kind in ((0, "all_reduce"), (1, "broadcast")):
        records = (rec(rank, 1), rec(rank, 2, "started", kind))
        (tmp_path / f"rank{rank}.collectives.json").write_text(encode_trace(PublishedTrace(rank, 1, True, 0.0, records)))
    watch = CollectiveWatch(str(tmp_path), 2, hang_timeout=5)
    assert watch.tick(1.0, {}) == "mismatch"
    assert trace_path(str(tmp_path), 1).endswith("rank1.collectives.json")
    assert read_traces(str(tmp_path), 2)[1].records[-1].kind == "broadcast"


def test_the_watch_waits_for_the_hang_timeout_then_asks_for_stacks(tmp_path):
    for rank in (0, 1):
        records = (rec(rank, 1),) + ((rec(0, 2, "started"),) if rank == 0 else ())
        (tmp_path / f"rank{rank}.collectives.json").write_text(encode_trace(PublishedTrace(rank, 1, True, 0.0, records)))
    watch = CollectiveWatch(str(tmp_path), 2, hang_timeout=5)
    assert watch.tick(1.0, {}) is None and watch.tick(5.9, {}) is None  # progress seen at 1.0: 4.9 s
    assert watch.tick(6.5, {}) is None  # 5.5 s without progress: stacks requested
    assert (tmp_path / "rank1.stacks-request").exists()
    for rank in (0, 1):
        (tmp_path / f"rank{rank}.stacks.txt").write_text("Thread MainThread (most recent call last):\n")
    assert watch.tick(7.0, {}) == "stall" and watch.stalled_s >= 5


def test_the_watch_leaves_a_rank_that_said_it_raised_to_the_crash_path(tmp_path):
    """Rank 1 finished; rank 0's barrier failed and its trace says so, but its process
    is still printing the traceback: it is not a rank waiting in the barrier."""
    raised = RankExit("exception", "RuntimeError", GLOO_CLOSED, "/w/train.py:12", 1)
    published = {
        0: PublishedTrace(0, 1, True, 0.0, (rec(0, 1), rec(0, 2, "started", "barrier", "/w/train.py:12")), raised),
        1: PublishedTrace(1, 1, True, 0.0, (rec(1, 1),), RankExit("exit")),
    }
    for rank, trace in published.items():
        (tmp_path / f"rank{rank}.collectives.json").write_text(encode_trace(trace))
    watch = CollectiveWatch(str(tmp_path), 2, hang_timeout=5)
    assert watch.tick(1.0, {1: 0}) is None and watch.tick(3.9, {1: 0}) is None
    assert watch.tick(4.5, {1: 0}) == "uneven"  # it never ended: judged without waiting any longer


def test_a_timed_out_monitored_barrier_names_the_rank_that_never_reached_it():
    # torch 2.13 gloo, rank 0's error when rank 1 never reaches dist.monitored_barrier
    said = "[Rank 0]: Rank 1 failed to pass monitoredBarrier in 4000 ms"
    ranks = (outcome(0, "exited", 1, 5.0, tail=[f"RuntimeError: {said}"]), outcome(1, "stopped", -15, None))
    traces = {0: RankTrace(0, (rec(0, 1),), exit=RankExit("exception", "RuntimeError", said, "/w/train.py:15", 1))}
    result = LaunchResult(ranks, False, False, 6.0, "/run")
    job = diagnose_job(result, traces, [])
    assert job.root_cause["rank"] == 1
    assert job.findings[0].title.startswith("rank 1 never reached the monitored_barrier at /w/train.py:15 that rank 0 waited in")
    assert ranks_exit(result, job.cause_exitcode) == 1


def test_a_mismatch_is_1_even_when_gloo_aborted_a_rank_on_it_first():
    ranks = (outcome(0, "signaled", -6, 1.0, signal="SIGABRT"), outcome(1, "stopped", -15, None))
    traces = {0: RankTrace(0, (rec(0, 1, "started"),)), 1: RankTrace(1, (rec(1, 1, "started", kind="broadcast"),))}
    result = LaunchResult(ranks, False, False, 2.0, "/run")
    states = rank_states(traces, {0: -6})
    job = diagnose_job(result, traces, analyze(states))
    assert job.findings[0].id == "collective-mismatch" and ranks_exit(result, job.cause_exitcode) == 1
