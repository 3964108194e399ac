"""The ClusterConfig a command line or a file gives, and the /varz and ports-file entries built from it."""

from __future__ import annotations

from fakejs.cli.settings import command_line
from fakejs.core.cluster_config import ClusterConfig
from fakejs.core.configfile import load_text
from fakejs.server.portsfile import ports_json


def test_flags_fill_the_cluster() -> None:
    argv = ["--cluster", "nats://u:p@127.0.0.1:-1", "--cluster_name", "C", "--routes", "nats://a:1, nats-route://b:2"]
    cluster = command_line([*argv, "--no_advertise", "--connect_retries", "3"]).options.cluster
    assert cluster == ClusterConfig(
        name="C",
        host="127.0.0.1",
        port=0,
        routes=["nats://a:1", "nats-route://b:2"],
        username="u",
        password="p",
        no_advertise=True,
        connect_retries=3,
    )


def test_file_fills_the_cluster() -> None:
    text = (
        'cluster { name: C, listen: "127.0.0.1:4248", routes: [" nats://a:1 "], pool_size: -1, '
        'ping_interval: "10s", compression: false, authorization { user: u, password: p, timeout: 3 } }\n'
    )
    cluster = load_text(text, "f.conf").options.cluster
    assert cluster == ClusterConfig(
        name="C",
        host="127.0.0.1",
        port=4248,
        routes=["nats://a:1"],
        username="u",
        password="p",
        auth_timeout=3.0,
        pool_size=-1,
        ping_interval=10.0,
        compression="off",
    )


def test_no_port_no_cluster_and_flags_over_the_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert load_text("cluster { name: C }\n", "f.conf").options.cluster is None
    path = tmp_path / "f.conf"
    path.write_text("cluster { name: C, authorization { user: u, password: p } }\n")
    cluster = command_line(["-c", str(path), "--cluster", "nats://:-1"]).options.cluster
    assert cluster is not None and (cluster.name, cluster.host, cluster.username) == ("C", "0.0.0.0", "")


def test_ports_file_lists_the_route_port() -> None:
    text = ports_json(["nats://127.0.0.1:1"], ["http://127.0.0.1:2"], None, ["nats://127.0.0.1:3"])
    assert (
        text == '{"nats":["nats://127.0.0.1:1"],"monitoring":["http://127.0.0.1:2"],"cluster":["nats://127.0.0.1:3"]}'
    )
