"""The host probe on this machine and on a sysfs tree laid out as the kernel lays
out /sys/class/infiniband on a node with two ConnectX ports."""

from __future__ import annotations

import socket

from gpudoctor.probe.host import NODE_NAME_ENV, probe_host, probe_infiniband
from gpudoctor.core.unavailable import Unavailable


def write_port(root, device: str, port: int, state: str, layer: str, rate: str) -> None:
    d = root / device / "ports" / str(port)
    d.mkdir(parents=True)
    (d / "state").write_text(state + "\n")
    (d / "link_layer").write_text(layer + "\n")
    (d / "rate").write_text(rate + "\n")


def test_infiniband_devices_and_port_states(tmp_path):
    write_port(tmp_path, "mlx5_0", 1, "4: ACTIVE", "InfiniBand", "400 Gb/sec (4X NDR)")
    write_port(tmp_path, "mlx5_1", 1, "1: DOWN", "Ethernet", "100 Gb/sec (4X EDR)")
    devices = probe_infiniband(tmp_path)
    assert [d.name for d in devices] == ["mlx5_0", "mlx5_1"]
    assert devices[0].ports[0].state == "ACTIVE" and devices[0].active
    assert devices[1].ports[0].link_layer == "Ethernet" and not devices[1].active


def test_no_infiniband_directory_means_none(tmp_path):
    assert probe_infiniband(tmp_path / "absent") == ()


def test_unreadable_port_file_is_a_reason_not_an_exception(tmp_path):
    (tmp_path / "mlx5_0" / "ports" / "1").mkdir(parents=True)
    [device] = probe_infiniband(tmp_path)
    assert isinstance(device.ports[0].state, Unavailable)


def test_this_machine_and_the_test_only_name(tmp_path):
    host = probe_host({}, tmp_path)
    assert host.hostname == socket.gethostname() and host.name == socket.gethostname()
    assert probe_host({NODE_NAME_ENV: "node-7"}, tmp_path).name == "node-7"
