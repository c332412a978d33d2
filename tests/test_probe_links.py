"""The link probe's fail-soft answer off GPU."""

from gpudoctor.probe.links import RankPlace, link_facts


def test_link_facts_off_gpu():
    assert link_facts(None) is None
    assert link_facts([RankPlace(0, "a", 0), RankPlace(1, "a", 1)]) is None  # CPU ranks: no bus ids
    two_hosts = link_facts([RankPlace(0, "a", 0, "A100", "00000000:3b:00.0"), RankPlace(1, "b", 0, "A100", "00000000:3b:00.0")])
    assert two_hosts.hosts == 2 and two_hosts.kind == "unknown"
