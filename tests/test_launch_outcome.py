"""outcome.json: how a job ended, kept in its run folder by the supervisor and
read back by `gpudoctor diagnose DIR` as the same LaunchResult (launch/supervisor.py)."""

import json
import os

from gpudoctor.core.codec import SnapshotError, decode, encode
from gpudoctor.launch import rundir
from gpudoctor.launch.contract import RankError
from gpudoctor.launch.supervisor import LaunchResult, RankOutcome, read_outcome, write_outcome
from gpudoctor.hang.verdict import root_cause


def result_in(folder):
    ranks = (
        RankOutcome(0, "stopped", -15, "SIGTERM", "joined", 3, None, ("waiting",), "/old/rank0.stderr", {"rows": 1}, None),
        RankOutcome(1, "raised", 1, None, "joined", 2, RankError("ValueError", "bad batch", "Traceback ..."),
                    ("ValueError: bad batch",), "/old/rank1.stderr", None, 1.5),
    )  # fmt: skip
    return LaunchResult(ranks, False, False, 4.2, str(folder), 30.0, {1: "raise"}, 0, "stall", False, 1.0, 3.2)


def test_the_outcome_comes_back_as_the_same_result_without_the_ranks_values_and_at_its_new_place(tmp_path):
    write_outcome(result_in(tmp_path))
    assert oct(os.stat(rundir.outcome_path(str(tmp_path))).st_mode & 0o777) == "0o600"  # private, through scratch.write_file
    moved = tmp_path.rename(tmp_path.parent / "moved")
    back = read_outcome(str(moved))
    assert back is not None
    assert back.faults == {1: "raise"} and back.stalled_s == 3.2 and back.diagnosed == "stall"
    assert [r.result for r in back.ranks] == [None, None]  # the command's own data stays with the command
    assert [r.stderr_path for r in back.ranks] == [str(moved / "rank0.stderr"), str(moved / "rank1.stderr")]
    assert back.run_dir == str(moved)
    assert back.ranks[1].error == RankError("ValueError", "bad batch", "Traceback ...")
    assert root_cause(back, {}).rank == 1  # the same verdict from the result read back


def test_no_outcome_or_another_shape_reads_as_none(tmp_path):
    assert read_outcome(str(tmp_path)) is None
    with open(rundir.outcome_path(str(tmp_path)), "w") as fh:
        json.dump({"schema": 1, "kind": "LaunchResult", "data": {"ranks": "?"}}, fh)
    assert read_outcome(str(tmp_path)) is None


def test_a_mapping_with_number_keys_gets_its_numbers_back():
    result = result_in("/r")
    assert decode(LaunchResult, json.loads(json.dumps(encode(result))), "outcome").faults == {1: "raise"}
    bad = encode(result)
    bad["data"]["faults"] = {"one": "raise"}
    try:
        decode(LaunchResult, bad, "outcome")
    except SnapshotError as exc:
        assert "not a number" in str(exc)
    else:
        raise AssertionError("a key that is not a number was read")
