"""The one codec for what crosses a process boundary: a typed round trip, and
the schema version and kind checked on load."""

import json

import pytest

from gpudoctor.launch.contract import RankError, RankResult, read_contract, write_contract
from gpudoctor.probe.codec import SCHEMA_VERSION, SnapshotError, decode, encode


def test_round_trip_through_json_gives_the_same_frozen_value():
    err = RankError("RuntimeError", "boom", "Traceback ...")
    assert decode(RankError, json.loads(json.dumps(encode(err)))) == err


def test_another_schema_version_or_kind_is_refused():
    payload = encode(RankError("E", "m", "t"))
    with pytest.raises(SnapshotError, match=f"schema 0, this gpudoctor reads {SCHEMA_VERSION}"):
        decode(RankError, {**payload, "schema": 0})
    with pytest.raises(SnapshotError, match="expected a 'RankResult'"):
        decode(RankResult, payload)
    with pytest.raises(SnapshotError, match="not a gpudoctor envelope"):
        decode(RankError, {"type": "E", "message": "m", "traceback": "t"})  # the unversioned shape


def test_contract_files_are_read_back_or_none(tmp_path):
    path = str(tmp_path / "rank0.result.json")
    assert read_contract(RankResult, path) is None  # no file: the rank returned nothing
    write_contract(path, RankResult({"rows": [1, 2]}))
    assert read_contract(RankResult, path) == RankResult({"rows": [1, 2]})
    assert read_contract(RankError, path) is None  # the wrong kind is not taken for an error
