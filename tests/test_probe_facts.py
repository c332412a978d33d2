"""The snapshot: JSON round trip, and reading saved files (good and bad)."""

from __future__ import annotations

import json

import pytest

from facts_cases import CPU_SNAPSHOT, GPU2_SNAPSHOT, cpu_facts
from gpudoctor.core.codec import SnapshotError, from_plain, to_plain
from gpudoctor.probe.facts import Facts, collect, load
from gpudoctor.probe.nvml import NvmlGpu
from gpudoctor.core.unavailable import Unavailable


def test_collect_round_trips_through_json():
    facts = collect()
    again = Facts.from_dict(json.loads(json.dumps(facts.to_dict())))
    assert again == facts


def test_unavailable_is_written_with_its_reason():
    plain = cpu_facts().to_dict()
    assert plain["nvml"]["driver_version"] == {"unavailable": "NVML Shared Library Not Found"}


def test_fixtures_load():
    assert load(CPU_SNAPSHOT).torch.cuda is None
    gpu = load(GPU2_SNAPSHOT)
    assert len(gpu.nvml.gpus) == 2 and gpu.torch.device_count == 2


def test_bare_facts_and_whole_report_both_load(tmp_path):
    report = json.loads(CPU_SNAPSHOT.read_text())
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(report["facts"]))
    assert load(bare) == load(CPU_SNAPSHOT)


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "no such file"),
        ("{oops", "not JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"findings": []}', "missing"),
        ('{"facts": {"schema": "one"}}', "facts.schema: expected an integer"),
    ],
)
def test_bad_files_raise_one_line(tmp_path, content, message):
    path = tmp_path / "facts.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(SnapshotError) as err:
        load(path)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_field_missing_from_an_older_snapshot_becomes_unavailable():
    plain = to_plain(cpu_facts().torch)
    del plain["nccl"]
    torch = from_plain(type(cpu_facts().torch), plain)
    assert torch.nccl == Unavailable("not in snapshot")


def test_wrong_type_is_refused():
    with pytest.raises(SnapshotError, match="index"):
        from_plain(NvmlGpu, {"index": "zero"})
