"""Controls and siblings for the verdicts a job of ranks gets from how it ended
(hang/failures.launch_findings, hang/verdict.diagnose_job) and from lining its ranks'
collective traces up (knowledge/collectives.analyze), issue 34's method: the ending
that looks most like the failure must not get the verdict (test_control_*); the
nearest ending that needs another verdict gets its own (test_sibling_*).

The inputs are what the launcher records of a finished job (RankOutcome, LaunchResult,
the ranks' RankTrace) built as tests/test_one_verdict.py builds them, and the Flight
Recorder dumps of real gloo jobs in tests/fixtures/flight_recorder/: no rank runs here."""

from __future__ import annotations

import os

from gpudoctor.core.findings import Severity
from gpudoctor.hang.failures import launch_findings
from gpudoctor.hang.verdict import RankVerdict, diagnose_job
from gpudoctor.knowledge.collectives import CollectiveRecord, RankState, analyze, read_fr_file
from gpudoctor.launch.rundir import RankExit, RankTrace
from gpudoctor.launch.supervisor import LaunchResult, RankOutcome

GLOO_CLOSED = "[/gloo/transport/tcp/pair.cc:553] Connection closed by peer [127.0.0.1]:40092"
FLIGHT_RECORDER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "flight_recorder")


def outcome(rank, state, code=None, ended=None, tail=(), step=0, stage="joined", signal=None):
    return RankOutcome(rank, state, code, signal, stage, step, None, tuple(tail), f"/run/rank{rank}.stderr", None, ended)


def job(*ranks, timed_out=False, interrupted=False, **progress):
    return LaunchResult(tuple(ranks), timed_out, interrupted, 2.0, "/run", timeout_s=10.0, **progress)


def rec(rank, seq, state="completed", kind="all_reduce", where="/w/train.py:20", peer=-1):
    return CollectiveRecord(rank, "0", seq, kind, ((4,),), ("float32",), state=state, where=where, time_ns=seq, peer=peer)


def found(result, traces=None):
    """rank -> finding id, as the report of a launched job says them."""
    return {f.evidence.get("rank", f.id): f.id for f in launch_findings(result, traces=traces or {})}


def by(findings, verdict):
    return [f for f in findings if f.id == verdict]


# -- how a rank ended


class TestRankCrashed:
    def test_control_a_rank_gpudoctor_stopped_with_sigterm_after_its_peer_failed(self):
        # rank 1 ended by gpudoctor's own SIGTERM (-15): stopped, not crashed
        result = job(outcome(0, "exited", 3, 1.0), outcome(1, "stopped", -15, None, signal="SIGTERM"))
        assert found(result) == {0: "rank-crashed", 1: "rank-stopped"}

    def test_control_a_rank_that_raised_a_python_exception_is_raised_not_crashed(self):
        result = job(outcome(0, "raised", 1, 1.0, tail=("ValueError: bad batch",)), outcome(1, "stopped", -15, signal="SIGTERM"))
        assert "rank-crashed" not in found(result).values()

    def test_sibling_killed_by_a_signal_it_did_not_get_from_gpudoctor(self):
        result = job(outcome(0, "signaled", -11, 1.0, signal="SIGSEGV"), outcome(1, "stopped", -15, signal="SIGTERM"))
        [crashed] = by(launch_findings(result), "rank-crashed")
        assert crashed.evidence["rank"] == 0 and crashed.severity is Severity.ERROR and "SIGSEGV" in crashed.title

    def test_sibling_the_first_to_exit_nonzero_is_the_root_cause(self):
        d = diagnose_job(job(outcome(0, "stopped", -15), outcome(1, "exited", 3, 1.0)), {}, [])
        assert d.root_cause["rank"] == 1 and d.root_cause["kind"] == "exit"
        assert [f.id for f in d.findings] == ["rank-crashed", "rank-stopped"]


class TestRankRaised:
    def test_control_a_rank_that_raised_only_because_its_peer_was_gone_is_a_warning_not_the_cause(self):
        result = job(outcome(0, "raised", 1, 1.5, tail=(f"RuntimeError: {GLOO_CLOSED}",)), outcome(1, "exited", 3, 1.0))
        findings = launch_findings(result)
        assert [f.id for f in findings] == ["rank-crashed", "rank-raised"]
        [victim] = by(findings, "rank-raised")
        assert victim.severity is Severity.WARN and victim.evidence["state"] == RankVerdict.LOST_PEER

    def test_control_a_job_that_finished_has_no_rank_raised(self):
        assert launch_findings(job(outcome(0, "ok", 0, 1.0), outcome(1, "ok", 0, 1.0))) == []

    def test_sibling_its_own_exception_is_an_error_with_the_line(self):
        traces = {0: RankTrace(0, (rec(0, 1),), exit=RankExit("exception", "ValueError", "bad batch", "/w/train.py:16", 1))}
        d = diagnose_job(job(outcome(0, "raised", 1, 1.0), outcome(1, "stopped", -15)), traces, [])
        [raised] = by(d.findings, "rank-raised")
        assert raised.severity is Severity.ERROR and "ValueError: bad batch" in raised.title and "/w/train.py:16" in raised.title
        assert d.root_cause["rank"] == 0 and d.root_cause["kind"] == "exception"

    def test_sibling_the_peer_loss_error_of_a_bystander_is_rank_peer_lost(self):
        d = diagnose_job(job(outcome(0, "raised", 1, 1.5, tail=(f"RuntimeError: {GLOO_CLOSED}",)), outcome(1, "exited", 3, 1.0)), {}, [])
        assert [f.id for f in d.findings] == ["rank-crashed", "rank-peer-lost"]


class TestRankAbortedAfterItsScriptEnded:
    """SIGABRT after the script's own end, its process group never destroyed: the
    group's threads aborting at interpreter teardown (issue 24's slow-start test saw it)."""

    def aborted(self, group_alive):
        result = job(outcome(0, "ok", 0, 1.0), outcome(1, "signaled", -6, 1.0, signal="SIGABRT"))
        traces = {1: RankTrace(1, (rec(1, 1),), exit=RankExit("exit", group_alive=group_alive))}
        return diagnose_job(result, traces, []).findings[0]

    def test_control_the_same_abort_with_the_group_destroyed_keeps_the_native_crash_advice(self):
        f = self.aborted(group_alive=False)
        assert "after its script had ended" in f.title and "destroy_process_group" not in f.fix

    def test_control_an_abort_before_the_script_ended_is_a_native_crash(self):
        result = job(outcome(0, "ok", 0, 1.0), outcome(1, "signaled", -6, 1.0, signal="SIGABRT"))
        f = diagnose_job(result, {1: RankTrace(1, (rec(1, 1),))}, []).findings[0]
        assert "after its script had ended" not in f.title and "destroy_process_group" not in f.fix

    def test_sibling_never_destroyed_the_fix_is_to_destroy_it(self):
        f = self.aborted(group_alive=True)
        assert f.id == "rank-crashed" and f.severity is Severity.ERROR
        assert "after its script had ended" in f.title and f.fix.startswith("dist.destroy_process_group()")


class TestRankPeerLost:
    def test_control_a_rank_whose_own_error_only_mentions_a_socket_is_not_a_victim(self):
        said = "OSError: [Errno 98] Address already in use"
        d = diagnose_job(job(outcome(0, "raised", 1, 1.0, tail=(said,)), outcome(1, "stopped", -15)), {}, [])
        assert "rank-peer-lost" not in [f.id for f in d.findings] and d.root_cause["rank"] == 0

    def test_sibling_the_victim_names_the_rank_that_failed_first(self):
        d = diagnose_job(job(outcome(0, "exited", 2, 1.0), outcome(1, "raised", 1, 1.2, tail=(f"RuntimeError: {GLOO_CLOSED}",))), {}, [])
        [lost] = by(d.findings, "rank-peer-lost")
        assert "rank 0" in lost.title and "Connection closed by peer" in lost.title


# One H200, `gpudoctor run --nproc 1` of an embedding indexed past its end, then all_reduce
# (tests/fixtures/gpu_truth/h200-logs/run-assert.log): the exception, then the store closing.
ASSERT_RAISED = RankExit("exception", "DistBackendError", "NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:93, "
                         "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.28.9", "/tmp/gl/assert.py:4")
STORE_CLOSING = (
    "[rank0]:[W1128 21:43:47.061433858 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=15, addr=[localhost]:52614, "
    "remote=[localhost]:23531): Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?",
)


class TestRankPeerLostOwnException:
    def test_control_teardown_lines_after_its_own_exception_do_not_make_a_victim(self):
        result = job(outcome(0, "raised", 1, 1.0, tail=STORE_CLOSING))
        d = diagnose_job(result, {0: RankTrace(0, (), exit=ASSERT_RAISED)}, [])
        assert "rank-peer-lost" not in [f.id for f in d.findings] and d.root_cause["rank"] == 0

    def test_sibling_an_exception_that_says_the_peer_closed_is_a_victim(self):
        closed = RankExit("exception", "RuntimeError", GLOO_CLOSED, "/w/train.py:20")
        result = job(outcome(0, "exited", 2, 1.0), outcome(1, "raised", 1, 1.2))
        d = diagnose_job(result, {1: RankTrace(1, (), exit=closed)}, [])
        assert by(d.findings, "rank-peer-lost")


class TestRankStopped:
    def test_control_a_rank_that_ended_on_its_own_is_not_stopped(self):
        result = job(outcome(0, "exited", 3, 1.0), outcome(1, "ok", 0, 0.5))
        assert found(result) == {0: "rank-crashed"}

    def test_sibling_stopped_after_a_peer_failed(self):
        d = diagnose_job(job(outcome(0, "exited", 3, 1.0), outcome(1, "stopped", -15)), {}, [])
        [stopped] = by(d.findings, "rank-stopped")
        assert stopped.severity is not Severity.ERROR and "rank 0" in stopped.title


class TestLaunchInterrupted:
    def test_control_the_watchdog_stopping_the_job_is_not_an_interruption(self):
        result = job(outcome(0, "hung", step=3), outcome(1, "hung", step=3), timed_out=True)
        assert "launch-interrupted" not in found(result).values()

    def test_sibling_ctrl_c(self):
        [f] = launch_findings(job(outcome(0, "interrupted"), outcome(1, "interrupted"), interrupted=True))
        assert f.id == "launch-interrupted" and "all 2 ranks" in f.title


# -- the watchdog fired: moving, stuck, waiting, never joined


class TestRankHung:
    def test_control_still_completing_collectives_when_the_timeout_fired(self):
        # the item 2: ranks at collective #336 and #368 are out of time, not hung
        traces = {0: RankTrace(0, (rec(0, 335), rec(0, 336, "started"))), 1: RankTrace(1, (rec(1, 367), rec(1, 368, "started")))}
        result = job(outcome(0, "hung", step=40), outcome(1, "hung", step=44), timed_out=True,
                     progress_done=704, progress_quiet_s=0.2, progress_window_s=5.0)  # fmt: skip
        [f] = launch_findings(result, traces=traces)
        assert f.id == "timeout-still-progressing" and "transport" not in f.why

    def test_control_the_rank_the_others_wait_for_is_hung_they_are_waiting(self):
        result = job(outcome(0, "hung", step=4), outcome(1, "hung", step=2), timed_out=True)
        assert found(result) == {1: "rank-hung", 0: "rank-waiting"}

    def test_sibling_no_progress_in_the_last_window_is_a_hang(self):
        result = job(outcome(0, "hung", step=2), outcome(1, "hung", step=2), timed_out=True,
                     progress_done=8, progress_quiet_s=9.0, progress_window_s=5.0)  # fmt: skip
        findings = launch_findings(result)
        assert [f.id for f in findings] == ["rank-hung", "rank-waiting"] and findings[0].evidence["rank"] == 0


class TestRankWaiting:
    def test_control_a_rank_alone_is_the_stuck_one_not_waiting(self):
        assert found(job(outcome(0, "hung", step=2), timed_out=True)) == {0: "rank-hung"}

    def test_sibling_waiting_names_the_rank_furthest_behind(self):
        findings = launch_findings(job(outcome(0, "hung", step=7), outcome(1, "hung", step=7), outcome(2, "hung", step=3), timed_out=True))
        waiting = by(findings, "rank-waiting")
        assert [f.evidence["rank"] for f in waiting] == [0, 1] and all("rank 2" in f.title for f in waiting)


class TestRankNeverJoined:
    def test_control_a_rank_still_importing_torch_is_starting_not_never_joined(self):
        result = job(outcome(0, "starting", stage="python"), outcome(1, "hung", stage="rendezvous"), timed_out=True)
        assert found(result)[0] == "rank-still-starting"

    def test_sibling_a_rank_stopped_before_the_rendezvous(self):
        result = job(outcome(0, "hung", stage="rendezvous"), outcome(1, "nojoin", stage="started"), timed_out=True)
        got = found(result)
        assert got[1] == "rank-never-joined" and got[0] == "rank-waiting"


class TestRendezvousHang:
    def test_control_one_rank_past_the_rendezvous_is_not_a_rendezvous_hang(self):
        result = job(outcome(0, "hung", stage="rendezvous"), outcome(1, "hung", step=1, stage="joined"), timed_out=True)
        assert "rendezvous-hang" not in found(result).values()

    def test_sibling_every_rank_stopped_in_the_rendezvous(self):
        result = job(outcome(0, "hung", stage="rendezvous"), outcome(1, "hung", stage="rendezvous"), timed_out=True)
        assert set(found(result).values()) == {"rendezvous-hang"}


# -- lining the traces up


def p2p(rank, kind, peer, state="started", where="/w/x.py:7"):
    return CollectiveRecord(rank, "0", 1, kind, ((4,),), ("float32",), state=state, where=where, time_ns=100, peer=peer)


class TestCollectiveDeadlock:
    def test_control_a_send_against_the_peers_matching_recv_is_no_deadlock(self):
        ranks = [RankState(0, (rec(0, 1), p2p(0, "send", 1))), RankState(1, (rec(1, 1), p2p(1, "recv", 0, where="/w/x.py:9")))]
        assert analyze(ranks) == []

    def test_control_a_peer_still_working_is_no_deadlock(self):
        assert analyze([RankState(0, (p2p(0, "send", 1),)), RankState(1, (rec(1, 1),))]) == []

    def test_sibling_both_ranks_sending_to_each_other(self):
        ranks = [RankState(0, (rec(0, 1), p2p(0, "send", 1))), RankState(1, (rec(1, 1), p2p(1, "send", 0, where="/w/x.py:9")))]
        [f] = analyze(ranks, stalled_s=30)
        assert f.id == "collective-deadlock" and f.evidence["cycle"] == "rank 0 -> rank 1 -> rank 0"

    def test_sibling_the_same_calls_in_another_order_is_a_mismatch_not_a_deadlock(self):
        ranks = [RankState(0, (rec(0, 1), rec(0, 2, "started", kind="broadcast", where="/w/x.py:30"))),
                 RankState(1, (rec(1, 1), rec(1, 2, "started")))]  # fmt: skip
        assert [f.id for f in analyze(ranks)] == ["collective-mismatch"]


class TestUnevenCollectives:
    def test_control_every_rank_finished_the_same_count(self):
        ranks = [RankState(r, (rec(r, 1), rec(r, 2), rec(r, 3)), ended="finished") for r in range(2)]
        assert analyze(ranks, stalled_s=30) == []

    def test_sibling_the_recorded_gloo_job_whose_rank_0_left_the_loop_early(self):
        dumps = [read_fr_file(os.path.join(FLIGHT_RECORDER, "uneven", f"fr_trace_rank_{r}")) for r in range(2)]
        [f] = analyze([RankState(0, tuple(dumps[0]), ended="finished"), RankState(1, tuple(dumps[1]), ended="failed")])
        assert f.id == "uneven-collectives" and f.evidence["root cause"] == "rank 0"

    def test_sibling_a_peer_that_never_made_the_call_at_all_is_collective_missing(self):
        ranks = [RankState(0, (rec(0, 1), rec(0, 2, "started", where="/w/x.py:40"))), RankState(1, (rec(1, 1),), ended="finished")]
        assert [f.id for f in analyze(ranks)] == ["collective-missing"]


class TestCollectiveMissing:
    def test_control_a_peer_that_is_still_running_is_not_missing_the_call(self):
        ranks = [RankState(0, (rec(0, 1), rec(0, 2, "started"))), RankState(1, (rec(1, 1),))]
        assert analyze(ranks) == []

    def test_control_a_peer_that_failed_is_a_crash_not_a_missing_call(self):
        ranks = [RankState(0, (rec(0, 1), rec(0, 2, "started"))), RankState(1, (rec(1, 1),), ended="failed")]
        assert "collective-missing" not in [f.id for f in analyze(ranks)]

    def test_sibling_a_peer_that_finished_before_the_call(self):
        ranks = [RankState(0, (rec(0, 1), rec(0, 2, "started", where="/w/x.py:40"))), RankState(1, (rec(1, 1),), ended="finished")]
        [f] = analyze(ranks)
        assert f.id == "collective-missing" and "/w/x.py:40" in f.title and f.severity is Severity.ERROR

    def test_sibling_a_peer_that_finished_without_joining(self):
        ranks = [RankState(0, stage="rendezvous"), RankState(1, ended="finished", stage="started")]
        [f] = analyze(ranks)
        assert f.id == "collective-missing" and f.evidence["root cause"] == "rank 1"
