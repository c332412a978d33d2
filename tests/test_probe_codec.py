"""The one codec for what crosses a process boundary: a typed round trip, and
the schema version and kind checked on load."""

import json
from dataclasses import dataclass

import pytest

from gpudoctor.launch.contract import RankError, read_contract, write_contract
from gpudoctor.core.codec import SCHEMA_VERSION, SnapshotError, decode, encode


@dataclass(frozen=True)
class Returned:
    """A rank function's result, as a command defines it."""

    rows: tuple[int, ...]
    points: tuple[tuple[int, str], ...] = ()
    note: str | None = None


def test_round_trip_through_json_gives_the_same_frozen_value():
    err = RankError("RuntimeError", "boom", "Traceback ...")
    assert decode(RankError, json.loads(json.dumps(encode(err)))) == err


def test_another_schema_version_or_kind_is_refused():
    payload = encode(RankError("E", "m", "t"))
    with pytest.raises(SnapshotError, match=f"schema 0, this gpudoctor reads {SCHEMA_VERSION}"):
        decode(RankError, {**payload, "schema": 0})
    with pytest.raises(SnapshotError, match="expected a 'Returned'"):
        decode(Returned, payload)
    with pytest.raises(SnapshotError, match="not a gpudoctor envelope"):
        decode(RankError, {"type": "E", "message": "m", "traceback": "t"})  # the unversioned shape


def test_contract_files_are_read_back_or_none(tmp_path):
    path = str(tmp_path / "rank0.result.json")
    assert read_contract(Returned, path) is None  # no file: the rank returned nothing
    write_contract(path, Returned((1, 2), ((50, "d50"), (100, "d100"))))
    assert read_contract(Returned, path) == Returned((1, 2), ((50, "d50"), (100, "d100")))
    assert read_contract(RankError, path) is None  # the wrong kind is not taken for an error


def test_a_tuple_with_one_type_per_position_is_checked_item_by_item():
    assert decode(Returned, encode(Returned((), ((1, "a"),)))).points == ((1, "a"),)
    with pytest.raises(SnapshotError, match=r"points\[0\]: expected 2 items, got 3"):
        decode(Returned, {**encode(Returned(())), "data": {"rows": [], "points": [[1, "a", "b"]]}})
    with pytest.raises(SnapshotError, match=r"points\[0\]\[1\]: expected a string"):
        decode(Returned, {**encode(Returned(())), "data": {"rows": [], "points": [[1, 2]]}})
