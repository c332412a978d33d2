"""Lining up ranks' collectives: real Flight Recorder dumps (tests/fixtures/flight_recorder/,
written by torch 2.13 gloo ranks of /tmp/frfix/train.py) and records as the readers make them."""

import os
import pickle

import pytest

from gpudoctor.knowledge.collectives import (
    CollectiveRecord,
    RankState,
    StackFrame,
    analyze,
    is_library_frame,
    main_thread_stack,
    parse_stack_text,
    read_fr_file,
    records_from_fr_dump,
    records_from_json,
    records_to_json,
    short_where,
)

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "flight_recorder")


def dump(case, rank):
    return read_fr_file(os.path.join(FIXTURES, case, f"fr_trace_rank_{rank}"))


def rec(rank, seq, kind="all_reduce", shape=(4,), dtype="float32", state="completed", where="/w/train.py:17", t=0):
    return CollectiveRecord(
        rank=rank,
        pg="0",
        seq=seq,
        kind=kind,
        input_shapes=(shape,) if shape is not None else (),
        input_dtypes=(dtype,) if shape is not None else (),
        state=state,
        where=where,
        function="<module>",
        time_ns=t or seq,
    )


def test_reads_a_real_flight_recorder_dump():
    records = dump("kind", 0)
    assert [(r.seq, r.kind, r.state) for r in records] == [
        (1, "all_reduce", "completed"),
        (2, "all_reduce", "completed"),
        (3, "all_reduce", "started"),
    ]
    first = records[0]
    assert first.rank == 0 and first.pg == "0"
    assert first.input_shapes == ((4,),) and first.input_dtypes == ("float32",)
    assert first.where.endswith("train.py:21") and first.function == "<module>"
    assert first.call().startswith("all_reduce [4] float32 at ") and first.call().endswith("train.py:21")


def test_reads_the_dict_torch_returns_and_skips_point_to_point():
    with open(os.path.join(FIXTURES, "kind", "fr_trace_rank_1"), "rb") as fh:
        raw = pickle.load(fh)
    raw["entries"].append(dict(raw["entries"][0], is_p2p=True, collective_seq_id=0, profiling_name="gloo:send"))
    records = records_from_fr_dump(raw, rank=1)
    assert [r.kind for r in records] == ["all_reduce", "all_reduce", "broadcast"]


def test_a_file_that_is_no_dump_is_a_value_error(tmp_path):
    bad = tmp_path / "fr_trace_rank_0"
    bad.write_bytes(b"\x00not a pickle")
    with pytest.raises(ValueError, match="not a Flight Recorder dump"):
        read_fr_file(str(bad))
    with pytest.raises(ValueError, match="no rank number"):
        read_fr_file(str(tmp_path / "trace"))


def test_kind_mismatch_from_real_dumps_names_both_calls():
    [f] = analyze([RankState(0, tuple(dump("kind", 0))), RankState(1, tuple(dump("kind", 1)))])
    assert f.id == "collective-mismatch" and f.severity.value == "error"
    assert "collective #3 differs across ranks: rank 0 called all_reduce at" in f.title
    assert "rank 1 called broadcast at" in f.title
    assert f.evidence["rank 0"].endswith("train.py:24") and f.evidence["rank 1"].startswith("broadcast [4] float32")
    assert "train.py:24 and " in f.fix and "if rank ==" in f.fix


def test_uneven_work_from_real_dumps():
    ranks = [RankState(0, tuple(dump("uneven", 0)), ended="finished"), RankState(1, tuple(dump("uneven", 1)), "failed")]
    [f] = analyze(ranks)
    assert f.id == "uneven-collectives"
    assert "rank 0 left the loop after 2 all_reduce calls at" in f.title and "rank 1 called a 3rd (collective #5)" in f.title
    assert "drop_last" in f.fix and "Join" in f.fix
    # The rank that left first is where the sequences part: the root cause, and a stop
    # decision of its own must become collective.
    assert f.evidence["root cause"] == "rank 0" and "broadcast it from rank 0" in f.fix


def test_shape_and_dtype_mismatch():
    ranks = [RankState(0, (rec(0, 1), rec(0, 2, state="started"))), RankState(1, (rec(1, 1), rec(1, 2, shape=(5,))))]
    [f] = analyze(ranks)
    assert f.id == "collective-mismatch" and f.evidence["differs in"] == "shape"
    assert "collective #2 (all_reduce) has a different shape on each rank: rank 0 [4]; rank 1 [5]" == f.title
    ranks = [RankState(0, (rec(0, 1, dtype="float64"),)), RankState(1, (rec(1, 1),))]
    [f] = analyze(ranks)
    assert f.evidence["differs in"] == "dtype" and "rank 0 float64; rank 1 float32" in f.title


def test_gather_may_differ_in_shape_by_rank():
    ranks = [RankState(0, (rec(0, 1, kind="gather", shape=(2, 4)),)), RankState(1, (rec(1, 1, kind="gather"),))]
    assert analyze(ranks, stalled_s=60) == []


def test_a_barrier_only_rank_0_calls():
    r0 = (rec(0, 1), rec(0, 2, kind="barrier", shape=None, state="started", where="/w/train.py:30"))
    ranks = [RankState(0, r0), RankState(1, (rec(1, 1),), ended="finished")]
    [f] = analyze(ranks)
    assert f.id == "collective-missing"
    assert f.title.startswith("rank 0 waits in barrier #2 at /w/train.py:30, which rank 1 never called")
    assert "out of any `if rank == ...` block" in f.fix


def test_a_stall_names_the_rank_that_holds_the_others_up():
    stack = (
        StackFrame("/w/train.py", 20, "<module>"),
        StackFrame("/w/train.py", 8, "load_next_shard"),
        StackFrame("/usr/lib/python3.11/time.py", 1, "sleep"),
    )
    ranks = [
        RankState(0, (rec(0, 1), rec(0, 2, state="started"))),
        RankState(1, (rec(1, 1),), stack=stack),
    ]
    assert analyze(ranks) == []  # no stall without the time that says so
    [f] = analyze(ranks, stalled_s=15)
    assert f.id == "collective-stall"
    assert f.title == (
        "rank 1 holds the others up: rank 0 waits in all_reduce #2 at /w/train.py:17; "
        "rank 1 is not in a collective: /w/train.py:8 in load_next_shard (time.sleep)"
        " — no collective progress for 15 s when --hang-timeout stopped the job"
    )
    assert f.evidence["root cause"] == "rank 1" and f.evidence["no progress for"] == "15 s"


def test_a_healthy_job_has_no_finding():
    ranks = [RankState(r, tuple(rec(r, s) for s in (1, 2, 3))) for r in (0, 1)]
    assert analyze(ranks, stalled_s=30) == []


def test_records_cross_a_process_boundary_as_json():
    records = dump("kind", 1)
    assert records_from_json(records_to_json(records)) == records


def test_library_frames_and_short_paths():
    assert is_library_frame("/x/.venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py")
    assert is_library_frame("/usr/lib/python3.11/threading.py") and is_library_frame("<frozen runpy>")
    assert not is_library_frame("/home/me/project/train.py")
    assert not is_library_frame("/x/.venv/lib/python3.11/site-packages/lightning_user_pkg/loop.py")
    assert short_where("/home/me/train.py:3", cwd="/home/me") == "train.py:3"
    assert short_where("/elsewhere/train.py:3", cwd="/home/me") == "/elsewhere/train.py:3"


def test_parses_faulthandler_and_traceback_stacks():
    fault = (
        "Fatal Python error: Aborted\n\n"
        "Thread 0x00007fb2619c6b80 (most recent call first):\n"
        '  File "/v/site-packages/torch/distributed/distributed_c10d.py", line 3252 in all_reduce\n'
        '  File "/w/train.py", line 6 in <module>\n'
    )
    [frames] = parse_stack_text(fault).values()
    assert [f.where for f in frames] == ["/w/train.py:6", "/v/site-packages/torch/distributed/distributed_c10d.py:3252"]
    text = (
        "Thread MainThread (most recent call last):\n"
        '  File "/w/train.py", line 20, in <module>\n    load_next_shard()\n'
        '  File "/w/train.py", line 8, in load_next_shard\n    time.sleep(100)\n'
        "Thread gpudoctor-trace (most recent call last):\n"
        '  File "/x/src/gpudoctor/hooks/trace.py", line 5, in run\n'
    )
    main = main_thread_stack(parse_stack_text(text))
    assert [f.where for f in main] == ["/w/train.py:20", "/w/train.py:8"] and main[-1].code == "time.sleep(100)"


def test_a_rank_in_the_rendezvous_waits_for_one_that_never_came():
    stack = (StackFrame("/w/train.py", 30, "<module>"), StackFrame("/w/train.py", 9, "prepare_data", "time.sleep(9)"))
    ranks = [RankState(0, (), stage="rendezvous"), RankState(1, (), stack=stack, stage="started")]
    [f] = analyze(ranks, stalled_s=20)
    assert f.title == (
        "rank 1 holds the others up: rank 0 waits in init_process_group (the rendezvous); "
        "rank 1 is not in a collective: /w/train.py:9 in prepare_data (time.sleep)"
        " — no collective progress for 20 s when --hang-timeout stopped the job"
    )
    assert "not in init_process_group" in f.fix


# -- point-to-point and roots -----------------------------------------------------------------------


def p2p(rank, kind, peer, n=1, state="started", where="/w/x.py:7", t=100):
    return CollectiveRecord(rank=rank, pg="0", seq=n, kind=kind, input_shapes=((4,),), input_dtypes=("float32",),
                            state=state, where=where, time_ns=t, peer=peer)  # fmt: skip


def test_both_ranks_blocked_sending_to_each_other_is_a_deadlock_with_both_lines():
    ranks = [
        RankState(0, (rec(0, 1), p2p(0, "send", 1, where="/w/x.py:7"))),
        RankState(1, (rec(1, 1), p2p(1, "send", 0, where="/w/x.py:9"))),
    ]
    [f] = analyze(ranks)
    assert f.id == "collective-deadlock"
    assert "rank 0 waits in send #1 to rank 1 at /w/x.py:7; rank 1 waits in send #1 to rank 0 at /w/x.py:9" in f.title
    assert f.evidence["cycle"] == "rank 0 -> rank 1 -> rank 0" and "batch_isend_irecv" in f.fix


def test_a_posted_matching_recv_or_a_moving_peer_is_no_deadlock():
    sender = RankState(0, (p2p(0, "send", 1),))
    posted = RankState(1, (p2p(1, "recv", 0, state="posted"), p2p(1, "send", 0, t=200)))
    assert analyze([sender, posted]) == []  # rank 1's irecv will take rank 0's send
    assert analyze([sender, RankState(1, (rec(1, 1),))]) == []  # rank 1 is not blocked


def test_a_collective_against_a_recv_from_the_rank_in_it_is_a_deadlock():
    ranks = [RankState(0, (rec(0, 1, state="started"),)), RankState(1, (p2p(1, "recv", 0),))]
    [f] = analyze(ranks)
    assert f.id == "collective-deadlock" and "rank 0 waits in all_reduce #1" in f.title
    assert "rank 1 waits in recv #1 from rank 0" in f.title


def test_each_rank_rooting_its_own_broadcast_is_a_mismatch_not_the_transport():
    def bcast(rank):
        return CollectiveRecord(rank=rank, pg="0", seq=1, kind="broadcast", input_shapes=((4,),),
                                input_dtypes=("float32",), state="started", where="/w/x.py:6", root=rank)  # fmt: skip

    [f] = analyze([RankState(0, (bcast(0),)), RankState(1, (bcast(1),))], stalled_s=30)
    assert f.id == "collective-mismatch" and f.evidence["differs in"] == "root"
    assert "rank 0 src=0 at /w/x.py:6; rank 1 src=1 at /w/x.py:6" in f.title and "src=0" in f.fix


def test_a_rank_that_destroyed_the_group_and_left_is_the_root_cause():
    destroy = CollectiveRecord(rank=1, pg="0", seq=1, kind="destroy_process_group", where="/w/x.py:16")
    ranks = [RankState(0, (rec(0, 1), rec(0, 2), rec(0, 3, state="started"))), RankState(1, (rec(1, 1), rec(1, 2), destroy), "finished")]
    [f] = analyze(ranks)
    assert f.id == "collective-missing" and f.evidence["root cause"] == "rank 1"
    assert f.title.startswith("rank 1 called destroy_process_group() at /w/x.py:16 after 2 collectives and left")
    assert "only after every rank is done" in f.fix


def test_a_new_group_made_on_some_ranks_only_names_the_rank_that_skipped_it():
    def new_group(rank):
        return CollectiveRecord(rank=rank, pg="0", seq=1, kind="new_group", input_shapes=((0, 1),), state="started", where="/w/x.py:14")

    ranks = [
        RankState(0, (rec(0, 1), new_group(0))),
        RankState(1, (rec(1, 1), new_group(1))),
        RankState(2, (rec(2, 1), rec(2, 2, state="started", where="/w/x.py:16"))),
    ]
    [f] = analyze(ranks)
    assert f.id == "collective-deadlock" and f.evidence["root cause"] == "rank 2"
    assert "rank 0 waits in new_group #1 at /w/x.py:14" in f.title and "every rank" in f.fix


def test_counts_are_compared_over_the_numbers_every_rank_s_records_cover():
    # Rank 1 died in C++: its last trace is the newest window (#9-#12); rank 0's is whole.
    full = tuple(rec(0, n, where="/w/x.py:18") for n in range(1, 16)) + (rec(0, 16, state="started", where="/w/x.py:18"),)
    window = tuple(rec(1, n, where="/w/x.py:18") for n in range(9, 13))
    [f] = analyze([RankState(0, full), RankState(1, window, "finished")])
    assert f.id == "uneven-collectives"
    # Over #9.. both have their records: rank 1 made 4 calls there, rank 0 its 8th is #16.
    assert "left the loop after 4 all_reduce calls at /w/x.py:18 since collective #9" in f.title
    assert "rank 0 called an 8th (collective #16)" in f.title


def test_a_group_made_on_some_ranks_only_shifts_the_next_and_is_named():
    def new_group(rank, n, members, line):
        return CollectiveRecord(rank=rank, pg="0", seq=n, kind="new_group", input_shapes=(members,), where=f"/w/x.py:{line}")

    ranks = [
        RankState(0, (new_group(0, 1, (0, 1), 10), new_group(0, 2, (0, 1, 2), 12))),
        RankState(1, (new_group(1, 1, (0, 1), 10), new_group(1, 2, (0, 1, 2), 12))),
        RankState(2, (new_group(2, 1, (0, 1, 2), 12),)),  # skipped the pair's group
    ]
    [f] = analyze(ranks)
    assert f.id == "collective-mismatch" and f.evidence["differs in"] == "group"
    assert f.title.startswith("new_group #1 differs across ranks: rank 0 made it with ranks [0, 1] at /w/x.py:10")
    assert "rank 2 made it with ranks [0, 1, 2] at /w/x.py:12" in f.title and f.evidence["root cause"] == "rank 2"


def test_a_send_larger_than_the_recv_that_meets_it_is_a_mismatch_whoever_noticed_first():
    send = CollectiveRecord(rank=0, pg="0", seq=1, kind="send", input_shapes=((1000,),), input_dtypes=("float32",), where="/w/x.py:12", peer=1)
    recv = CollectiveRecord(rank=1, pg="0", seq=1, kind="recv", input_shapes=((10,),), input_dtypes=("float32",), state="started", where="/w/x.py:15", peer=0)
    [f] = analyze([RankState(0, (send,)), RankState(1, (recv,), "failed")])
    assert f.id == "collective-mismatch" and f.evidence["differs in"] == "size"
    assert f.title.startswith("rank 0's send #1 to rank 1 does not fit the recv that meets it")
    assert "recv [10] float32 from rank 0 at /w/x.py:15" in f.title and f.evidence["root cause"] == "rank 1"


def test_a_ddp_forward_run_on_one_rank_only_is_told_to_use_model_module():
    forward = CollectiveRecord(rank=0, pg="0", seq=3, kind="broadcast", input_shapes=((1,),), input_dtypes=("int64",),
                               state="started", where="/w/x.py:24", function="<module> [DDP forward]")  # fmt: skip
    [f] = analyze([RankState(0, (rec(0, 1), rec(0, 2), forward)), RankState(1, (rec(1, 1), rec(1, 2)), "finished")])
    assert f.id == "collective-missing" and "model.module" in f.fix and "rank 0 ran the DDP-wrapped model's forward" in f.fix


def test_a_call_made_while_handling_an_error_names_the_error():
    handler = CollectiveRecord(rank=1, pg="0", seq=3, kind="broadcast_object_list", state="started", where="/w/x.py:11",
                               handling="RuntimeError: bad batch (raised at /w/x.py:21)")  # fmt: skip
    [f] = analyze([RankState(0, (rec(0, 1), rec(0, 2), rec(0, 3, state="started"))), RankState(1, (rec(1, 1), rec(1, 2), handler))])
    assert f.title.endswith("rank 1 made its call while handling RuntimeError: bad batch (raised at /w/x.py:21)")


def test_a_recv_from_any_rank_meets_any_send_and_waits_only_when_none_is_left():
    first = p2p(0, "recv", -1, n=1, state="completed")
    second = p2p(0, "recv", -1, n=2, where="/w/x.py:8", t=200)
    send = p2p(1, "send", 0, state="completed")
    ranks = [RankState(0, (first, second)), RankState(1, (send, rec(1, 1, state="started", kind="barrier", t=300)))]
    [f] = analyze(ranks)
    assert f.id == "collective-deadlock" and "rank 0 waits in recv #2 from any rank at /w/x.py:8" in f.title
    assert analyze([RankState(0, (first,)), RankState(1, (send,))]) == []  # the send met the recv from any rank
