"""A stopped node's ports stay bound, refusing connections, until its restart takes them back."""

from __future__ import annotations

import socket

import pytest

from fakejs.core.options import ServerOptions
from fakejs.server.port_holds import PortHold, PortHolds


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def bind(port: int, reuse: bool = True) -> None:
    with socket.socket() as other:
        if reuse:
            other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        other.bind(("127.0.0.1", port))


def test_a_held_port_is_taken_by_nobody_else_and_refuses_connections() -> None:
    port = free_port()
    hold = PortHold("127.0.0.1", [port, 0, None])
    assert hold.ports == [port]
    for reuse in (False, True):
        with pytest.raises(OSError):
            bind(port, reuse)
    with socket.socket() as client, pytest.raises(ConnectionRefusedError):
        client.connect(("127.0.0.1", port))
    hold.release()
    bind(port)  # given back


def test_a_port_taken_already_is_left_out() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        assert PortHold("127.0.0.1", [listener.getsockname()[1]]).ports == []


def test_the_holds_of_a_cluster_by_node() -> None:
    options = ServerOptions(port=free_port(), http_port=free_port())
    holds = PortHolds()
    holds.hold(2, options)
    with pytest.raises(OSError):
        bind(options.port)
    holds.release(2)
    holds.release(2)  # nothing held: nothing to do
    bind(options.port)
    holds.hold(0, options)
    holds.release_all()
    bind(options.http_port)  # type: ignore[arg-type]
