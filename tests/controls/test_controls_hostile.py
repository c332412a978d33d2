"""Controls and siblings for the verdicts the hostile-input branch adds or changes
(issue 39): the healthy input that looks most like the failure does not get the
verdict; the nearest input that needs another verdict gets its own."""

import socket
import threading

import pytest

from gpudoctor.launch.rendezvous import StoreNotAnswering, _check_in_as_client

torch = pytest.importorskip("torch")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TestRendezvousStoreSilent:
    def test_control_a_real_store_on_the_port_is_joined(self):
        from datetime import timedelta

        from torch.distributed import TCPStore

        port = _free_port()
        host = TCPStore("127.0.0.1", port, 2, is_master=True, timeout=timedelta(seconds=10), wait_for_workers=False)
        store, arrived = _check_in_as_client("127.0.0.1", port, 2, 5.0, "p", 1)
        assert arrived == 1 and store.get("p/rank1") == b"1" and host.get("p/rank1") == b"1"

    def test_sibling_a_silent_listener_is_named_as_something_else_on_the_port(self):
        with socket.socket() as silent:
            silent.bind(("127.0.0.1", 0))
            silent.listen(8)
            port = silent.getsockname()[1]
            with pytest.raises(StoreNotAnswering) as info:
                _check_in_as_client("127.0.0.1", port, 2, 1.0, "p", 1)
        assert info.value.answered and f"something else answers on port {port}" in str(info.value)
        assert info.value.finding().id == "rendezvous-store-silent"
        assert not [t for t in threading.enumerate() if t.name == "gpudoctor-rendezvous"]  # its wait was ended
