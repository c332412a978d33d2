"""The link probe's fail-soft answer off GPU."""

from gpudoctor.probe.links import link_facts


def test_link_facts_off_gpu():
    assert link_facts(None) is None
    assert link_facts([{"rank": 0, "host": "a"}, {"rank": 1, "host": "a"}]) is None  # CPU ranks: no bus ids
    two_hosts = link_facts([{"host": "a", "pci_bus_id": "00000000:3b:00.0"}, {"host": "b", "pci_bus_id": "00000000:3b:00.0"}])
    assert two_hosts.hosts == 2 and two_hosts.kind == "unknown"
