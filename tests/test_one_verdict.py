"""One failure model: hang/verdict.root_cause is the one rule that names the rank a
failed job's trouble starts at (one test per rule), every rank has exactly one state
from verdict.STATES, and the report's words and the JSON never disagree on the root."""

import os
import re

import pytest

from gpudoctor.core.findings import Severity
from gpudoctor.hang.failures import launch_findings
from gpudoctor.hang.verdict import STATES, RankVerdict, diagnose_job, rank_records, root_cause
from gpudoctor.knowledge.collectives import CollectiveRecord, RankState, analyze
from gpudoctor.launch.rundir import RankExit, RankTrace
from gpudoctor.launch.supervisor import LaunchResult, RankOutcome

GLOO_CLOSED = "[/gloo/transport/tcp/pair.cc:553] Connection closed by peer [127.0.0.1]:40092"


def outcome(rank, state, code=None, ended=None, tail=(), step=0, stage="joined"):
    return RankOutcome(rank, state, code, None, stage, step, None, tuple(tail), f"/run/rank{rank}.stderr", None, ended)


def rec(rank, seq, state="completed", kind="all_reduce", where="/w/train.py:20"):
    return CollectiveRecord(rank, "0", seq, kind, ((4,),), ("float32",), state=state, where=where, time_ns=seq)


def job(*ranks, timed_out=False, interrupted=False):
    return LaunchResult(tuple(ranks), timed_out, interrupted, 2.0, "/run", timeout_s=10.0)


def human_roots(findings):
    """Every rank the report's words name as the root: "rank N failed first",
    "rank N holds the others up", evidence `root cause: rank N`, "waiting for rank N"."""
    named = set()
    for f in findings:
        if f.severity is not Severity.ERROR and f.id != "rank-waiting":
            continue
        named |= {int(m) for m in re.findall(r"rank (\d+) (?:failed first|holds the others up)", f.title)}
        named |= {int(m) for m in re.findall(r"waiting for rank (\d+)", f.title)}
        cause = f.evidence.get("root cause")
        if isinstance(cause, str) and cause.startswith("rank "):
            named.add(int(cause.split()[1]))
    return named


def agree(diagnosis, words=()):
    """The one check: the JSON's root rank is the only root the words name, and each
    rank has exactly one state, from the vocabulary."""
    root = diagnosis.root_cause["rank"] if diagnosis.root_cause else None
    named = human_roots([*diagnosis.findings, *words])
    assert named <= ({root} if root is not None else set()), (named, root)
    assert [r.rank for r in diagnosis.ranks] == sorted({r.rank for r in diagnosis.ranks})
    assert all(r.state in STATES for r in diagnosis.ranks)


# -- rule 1: a mismatch (or a finding that names its root) explains the crash it caused


def test_rule_1_a_mismatch_is_the_root_cause_even_of_the_crash_it_caused():
    traces = {
        0: RankTrace(0, (rec(0, 1), rec(0, 2, state="started", kind="broadcast", where="/w/train.py:30"))),
        1: RankTrace(1, (rec(1, 1), rec(1, 2, state="started"))),
    }
    result = job(outcome(0, "stopped"), outcome(1, "signaled", -6, 1.0))
    mismatch = analyze([RankState(r, t.records) for r, t in traces.items()])
    assert mismatch and mismatch[0].id == "collective-mismatch"
    cause = root_cause(result, traces, mismatch)
    assert cause.kind == "collective-mismatch" and cause.finding is mismatch[0]
    agree(diagnose_job(result, traces, mismatch))


def test_rule_1_a_timed_out_monitored_barrier_names_the_rank_that_never_reached_it():
    said = "RuntimeError: Rank 1 failed to pass monitoredBarrier in 5000 ms"
    result = job(outcome(0, "raised", 1, 5.0, tail=(said,)), outcome(1, "stopped"))
    cause = root_cause(result, {})
    assert (cause.rank, cause.kind) == (1, "collective-stall")
    agree(diagnose_job(result, {}, []))


# -- rule 2: the first rank to fail with its own error


def test_rule_2_the_earliest_own_failure_not_a_victim_nor_a_later_crash():
    result = job(
        outcome(0, "raised", 1, 1.0, tail=(f"RuntimeError: {GLOO_CLOSED}",)),  # first, but only lost its peer
        outcome(1, "exited", 3, 1.5),
        outcome(2, "signaled", -9, 2.0),
    )
    cause = root_cause(result, {})
    assert (cause.rank, cause.kind) == (1, "exit")
    d = diagnose_job(result, {}, [])
    assert [r.state for r in d.ranks] == [RankVerdict.LOST_PEER, RankVerdict.FAILED, RankVerdict.FAILED]
    agree(d)


def test_rule_2_a_tie_goes_to_the_lowest_rank():
    result = job(outcome(0, "ok", 0, 1.0), outcome(1, "exited", 2, 1.0), outcome(2, "exited", 2, 1.0))
    assert root_cause(result, {}).rank == 1


# -- rule 3: a collective finding when no rank failed on its own


def test_rule_3_a_collective_finding_when_no_rank_failed_on_its_own():
    traces = {0: RankTrace(0, (rec(0, 1), rec(0, 2, state="started", where="/w/train.py:30"))), 1: RankTrace(1, (rec(1, 1),))}
    result = job(outcome(0, "diagnosed"), outcome(1, "ok", 0, 1.0))
    found = analyze([RankState(0, traces[0].records), RankState(1, traces[1].records, ended="finished")])
    cause = root_cause(result, traces, found)
    assert cause.finding is found[0] and cause.rank == 0
    d = diagnose_job(result, traces, found)
    assert [r.state for r in d.ranks] == [RankVerdict.WAITING, RankVerdict.FINISHED]
    agree(d)


# -- rule 4: the watchdog fired and nothing lines up: never joined, starting, stuck


@pytest.mark.parametrize(
    "states, root",
    [
        ((("hung", 5, "joined"), ("nojoin", 0, "")), 1),  # never joined before all else
        ((("starting", 0, "python"), ("hung", 2, "joined")), 0),  # then still starting
        ((("hung", 4, "joined"), ("hung", 2, "joined")), 1),  # then the stuck rank furthest behind
    ],
)
def test_rule_4_the_watchdog_names_the_rank_the_others_wait_for(states, root):
    result = job(*(outcome(r, s, step=step, stage=stage) for r, (s, step, stage) in enumerate(states)), timed_out=True)
    assert root_cause(result, {}).rank == root
    d = diagnose_job(result, {}, [])
    assert d.root_cause["rank"] == root
    agree(d, launch_findings(result))  # the report's words for a watchdog stop


def test_rule_4_a_rank_not_in_a_collective_holds_up_one_that_waits_in_it():
    traces = {0: RankTrace(0, (rec(0, 1), rec(0, 2, state="started"))), 1: RankTrace(1, (rec(1, 1),))}
    result = job(outcome(0, "hung", step=1), outcome(1, "hung", step=1), timed_out=True)
    assert root_cause(result, traces).rank == 1
    assert [r.state for r in rank_records(result, traces)] == [RankVerdict.WAITING, RankVerdict.RUNNING]


# -- rule 5: no single rank


def test_rule_5_no_root_when_every_rank_finished_or_only_victims_failed():
    assert root_cause(job(outcome(0, "ok", 0, 1.0), outcome(1, "ok", 0, 1.0)), {}) is None
    victims = job(outcome(0, "raised", 1, 1.0, tail=(GLOO_CLOSED,)), outcome(1, "raised", 1, 1.0, tail=(GLOO_CLOSED,)))
    assert root_cause(victims, {}) is None
    d = diagnose_job(victims, {}, [])
    assert d.root_cause is None and [r.state for r in d.ranks] == [RankVerdict.LOST_PEER, RankVerdict.LOST_PEER]
    agree(d)


# -- one state per rank


@pytest.mark.parametrize(
    "process_state, victim_words, state",
    [
        ("ok", (), RankVerdict.FINISHED),
        ("exited", (), RankVerdict.FAILED),
        ("signaled", (), RankVerdict.FAILED),
        ("raised", (), RankVerdict.FAILED),
        ("raised", (GLOO_CLOSED,), RankVerdict.LOST_PEER),
        ("stopped", (GLOO_CLOSED,), RankVerdict.LOST_PEER),  # stopped after it printed its peer-loss error
        ("stopped", (), RankVerdict.RUNNING),
        ("diagnosed", (), RankVerdict.RUNNING),
        ("hung", (), RankVerdict.RUNNING),
        ("nojoin", (), RankVerdict.NEVER_JOINED),
        ("starting", (), RankVerdict.STARTING),
        ("interrupted", (), RankVerdict.INTERRUPTED),
    ],
)
def test_every_process_state_is_one_state_of_the_vocabulary(process_state, victim_words, state):
    result = job(outcome(0, process_state, tail=victim_words), outcome(1, "ok", 0, 1.0))
    [record, _] = rank_records(result, {})
    assert record.state == state and state in STATES


def test_a_rank_in_a_collective_when_stopped_is_waiting():
    traces = {0: RankTrace(0, (rec(0, 1), rec(0, 2, state="started")))}
    [record] = rank_records(job(outcome(0, "stopped")), traces)
    assert record.state == RankVerdict.WAITING and record.collective.seq == 2 and record.reached == 1


def test_the_record_says_the_rank_s_own_error_once():
    traces = {0: RankTrace(0, (rec(0, 1),), exit=RankExit("exception", "ValueError", "bad batch", "/w/train.py:16", 1))}
    [record] = rank_records(job(outcome(0, "raised", 1, 1.0)), traces)
    assert record.error == "ValueError: bad batch" and record.where == "/w/train.py:16" and record.state == RankVerdict.FAILED


# -- collective-stall names the option of the command that stopped the job


def test_the_stall_fix_names_the_limit_of_the_command_that_stopped_the_job():
    ranks = [RankState(0, (rec(0, 1), rec(0, 2, state="started"))), RankState(1, (rec(1, 1),))]
    [run_stall] = analyze(ranks, stalled_s=30)
    [smoke_stall] = analyze(ranks, stalled_s=30, limit="--timeout")
    assert run_stall.id == smoke_stall.id == "collective-stall"
    assert "raise --hang-timeout" in run_stall.fix
    assert "raise --timeout" in smoke_stall.fix and "--hang-timeout" not in smoke_stall.fix


@pytest.mark.slow
def test_allreduce_and_train_smoke_ranks_get_their_own_timeout_in_a_real_stall():
    """The ranks of allreduce/train-smoke (hang/run_ranks.run_local) have --timeout, no
    --hang-timeout; their ranks pass 12 all-reduces before one stops: it is named after
    #12, its true last, and the JSON records agree with the words."""
    from gpudoctor.hang.run_ranks import run_local
    from orphans import TAG_ENV, leftovers, new_tag

    here = os.path.dirname(os.path.abspath(__file__))
    tag = new_tag()
    env = {"PYTHONPATH": os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p), TAG_ENV: tag}
    run = run_local("launch_targets:many_then_hang", {"n": 12, "bad": 1}, 2, timeout=12, env=env)
    try:
        assert run.result.timed_out and leftovers(tag) == []
        stall = next(f for f in run.findings if f.id == "collective-stall")
        assert "raise --timeout" in stall.fix and "--hang-timeout" not in stall.fix
        assert "all_reduce #13" in stall.title, stall.title
        records = {r.rank: r for r in run.ranks}
        assert records[0].state == RankVerdict.WAITING and records[0].collective.seq == 13 and records[0].reached == 12
        assert records[1].state == RankVerdict.RUNNING and records[1].reached == 12
        assert run.cause is not None and run.cause.rank == 1
        assert human_roots(run.findings) <= {1}
        assert [r["rank"] for r in run.ranks_json()] == [0, 1]
    finally:
        run.discard_logs()


def test_diagnose_job_of_a_run_folder_read_back_lines_the_traces_up_itself():
    """diagnose_job(result, traces): the entry for a run folder read back from disk."""
    traces = {
        0: RankTrace(0, (rec(0, 1), rec(0, 2, state="started", kind="broadcast", where="/w/train.py:30"))),
        1: RankTrace(1, (rec(1, 1), rec(1, 2, state="started"))),
    }
    result = job(outcome(0, "diagnosed"), outcome(1, "diagnosed"))
    d = diagnose_job(result, traces)
    assert d.root_cause["kind"] == "collective-mismatch" and [f.id for f in d.findings] == ["collective-mismatch"]
    assert [r.state for r in d.ranks] == [RankVerdict.WAITING, RankVerdict.WAITING]
    agree(d)


def test_a_victim_s_record_says_its_error_without_gloo_s_source_location():
    said = GLOO_CLOSED + ". This is typically caused by a remote worker crashing."
    traces = {0: RankTrace(0, (rec(0, 1),), exit=RankExit("exception", "RuntimeError", said))}
    [record] = rank_records(job(outcome(0, "raised", 1, 1.0)), traces)
    assert record.state == RankVerdict.LOST_PEER and record.error == "RuntimeError: Connection closed by peer [127.0.0.1]:40092"


def test_an_interrupted_job_has_no_root_cause_and_its_stopped_ranks_say_so():
    result = job(outcome(0, "exited", 3, 1.0), outcome(1, "interrupted"), interrupted=True)
    assert root_cause(result, {}) is None
    d = diagnose_job(result, {}, [])
    assert d.root_cause is None and [r.state for r in d.ranks] == [RankVerdict.FAILED, RankVerdict.INTERRUPTED]
