"""What a configuration reload changes and refuses (fakejs.core.reload_options), without a server."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fakejs.core.account_config import AccountConfig, Export
from fakejs.core.cluster_config import ClusterConfig
from fakejs.core.jetstream_limits import JetStreamLimits
from fakejs.core.options import ServerOptions
from fakejs.core.reload_options import ReloadRefused, diff_options
from fakejs.core.transport_config import TLSConfig, WebSocketConfig
from fakejs.core.users import User


def lines(old: ServerOptions, new: ServerOptions) -> list[str]:
    return [change.line for change in diff_options(old, new)]


def test_nothing_changed_reloads_the_users_and_accounts_as_nats_server_does() -> None:
    options = ServerOptions(port=4222)
    assert lines(options, replace(options, config_digest="sha256:x")) == [
        "Reloaded: authorization users",
        "Reloaded: accounts",
    ]


def test_changes_come_in_nats_server_order_with_its_lines() -> None:
    old = ServerOptions(port=4222)
    new = replace(old, max_payload=2000, debug=True, users=[User(name="a", password="b")], ping_interval=90.0)
    new.max_connections = 10
    assert lines(old, new) == [
        "Reloaded: debug = true",
        "Reloaded: max_connections = 10",
        "Reloaded: authorization users",
        "Reloaded: accounts",
        "Reloaded: ping_interval = 1m30s",
        "Reloaded: max_payload = 2000",
    ]


@pytest.mark.parametrize(
    "field,old,new,error",
    [
        ("port", 4222, 4223, "config reload not supported for Port: old=4222, new=4223"),
        ("host", "127.0.0.1", "0.0.0.0", "config reload not supported for Host: old=127.0.0.1, new=0.0.0.0"),
        ("name", "a", "b", "config reload not supported for ServerName: old=a, new=b"),
        ("store_dir", "/a", "/b", "config reload not supported for jetstream storage directory"),
        ("store_dir", "/a", "", "config reload not supported for jetstream storage dir"),
        ("jetstream_max_memory", -1, 10, "config reload not supported for jetstream dynamic max memory and store"),
        ("jetstream_max_store", 10, 5, "config reload not supported for decreasing jetstream max memory and store"),
        ("jetstream_max_store", 10, -1, "config reload not supported for jetstream max memory and max store"),
        ("max_subscriptions", 0, 5, "config reload not supported for MaxSubs: old=0, new=5"),
        ("max_pending", 1, 2, "config reload not supported for MaxPending: old=1, new=2"),
        ("jetstream_strict", True, False, "config reload not supported for NoJetStreamStrict: old=false, new=true"),
        ("jetstream_sync_interval", None, 10.0, "config reload not supported for SyncInterval: old=2m0s, new=10s"),
        (
            "jetstream_request_queue_limit",
            0,
            50,
            "config reload not supported for JetStreamRequestQueueLimit: old=10000, new=50",
        ),
        (
            "websocket",
            None,
            WebSocketConfig(port=1),
            "config reload not supported for Websocket: old={ 0          0 false <nil> false map[] false [] false 0s 0s"
            " map[] <nil>}, new={0.0.0.0 1          0 false <nil> false map[] false [] false 0s 0s map[] <nil>}",
        ),
        ("jetstream_sync_always", False, True, "config reload not supported for SyncAlways: old=false, new=true"),
        ("jetstream_max_catchup", 0, 5, "config reload not supported for JetStreamMaxCatchup: old=0, new=5"),
        (
            "jetstream_info_queue_limit",
            0,
            50,
            "config reload not supported for JetStreamInfoQueueLimit: old=10000, new=50",
        ),
        ("control", False, True, "config reload of control is not supported by fakejs yet"),
        ("system_account", "SYS", "S2", "config reload not supported for SystemAccount: old=SYS, new=S2"),
    ],
)
def test_options_that_cannot_be_reloaded_refuse_the_reload(field: str, old: object, new: object, error: str) -> None:
    before = replace(ServerOptions(port=4222), **{field: old})
    after = replace(before, debug=True, **{field: new})
    with pytest.raises(ReloadRefused) as refused:
        diff_options(before, after)
    assert str(refused.value) == error


def test_accounts_are_reloaded_but_not_their_jetstream_limits() -> None:
    old = ServerOptions(port=4222, accounts=[AccountConfig("A")])
    added = replace(old, accounts=[AccountConfig("A"), AccountConfig("B", exports=(Export("x", service=False),))])
    assert lines(old, added) == ["Reloaded: authorization users", "Reloaded: accounts"]
    limited = replace(old, accounts=[AccountConfig("A", jetstream=JetStreamLimits())])
    assert lines(old, limited) == ["Reloaded: authorization users", "Reloaded: accounts"]
    tiered = replace(old, accounts=[AccountConfig("A", jetstream=JetStreamLimits(), tiers={"R1": JetStreamLimits()})])
    with pytest.raises(ReloadRefused) as refused:
        diff_options(limited, tiered)
    assert str(refused.value) == "config reload of the JetStream of account A is not supported by fakejs yet"
    with pytest.raises(ReloadRefused):
        diff_options(ServerOptions(port=4222), limited)  # from the global account's JetStream alone
    more = replace(limited, accounts=[AccountConfig("A", jetstream=JetStreamLimits(max_memory=10))])
    assert lines(limited, more) == ["Reloaded: authorization users", "Reloaded: accounts"]


def test_files_logging_and_tags_in_nats_server_order() -> None:
    old = ServerOptions(port=4222, pid_file="/a.pid")
    new = replace(old, pid_file="", ports_file_dir="/p", log_file="/l", trace_headers=True, max_traced_msg_len=9)
    new.server_tags = ["az:1"]
    assert [change.line for change in diff_options(old, new) if change.field not in ("users", "accounts")] == [
        "Reloaded: trace_headers = true",
        "",  # a pid file taken away: nothing written, nothing logged
        "Reloaded: ports_file_dir = /p",
        "Reloaded: log_file = /l",
        "Reloaded: max_traced_msg_len = 9",
        "Reloaded: tags",
    ]


def test_tls_is_reloaded_every_time_and_its_timeout_when_changed() -> None:
    old = ServerOptions(port=4222, tls=TLSConfig(cert_file="c", key_file="k"), auth_timeout=3.0)
    same = replace(old, tls=TLSConfig(cert_file="c", key_file="k"))
    assert lines(old, same)[-1] == "Reloaded: tls = enabled"
    slower = replace(old, tls=TLSConfig(cert_file="c2", key_file="k", timeout=3.0), auth_timeout=4.0)
    assert lines(old, slower)[2:] == [
        "Reloaded: authorization timeout = 4",
        "Reloaded: tls timeout = 3",
        "Reloaded: tls = enabled",
    ]


def test_tls_turned_on_and_off() -> None:
    plain, secure = ServerOptions(port=4222), ServerOptions(port=4222, tls=TLSConfig(timeout=3.0))
    assert lines(plain, secure)[2:] == ["Reloaded: tls timeout = 3", "Reloaded: tls = enabled"]
    assert lines(secure, plain)[2:] == ["Reloaded: tls timeout = 2", "Reloaded: tls = disabled"]


def test_raised_jetstream_limits_are_reloaded() -> None:
    old = ServerOptions(port=4222, jetstream_max_memory=10 * 1024 * 1024, jetstream_max_store=1024)
    new = replace(old, jetstream_max_memory=30 * 1024 * 1024, jetstream_max_store=2048)
    assert lines(old, new)[2:] == [
        "Reloaded: JetStream max_mem_store = 30.00 MB",
        "Reloaded: JetStream max_file_store = 2.00 KB",
    ]


def test_jetstream_turned_off_takes_its_store_settings_without_a_line() -> None:
    old = ServerOptions(port=4222, store_dir="/s", jetstream_max_memory=100)
    new = replace(old, jetstream=False, store_dir="", jetstream_max_memory=-1)
    assert [change.line for change in diff_options(old, new) if change.line][2:] == ["Reloaded: JetStream"]
    assert {change.field for change in diff_options(old, new)} >= {"store_dir", "jetstream_max_memory"}


def test_cluster_routes_are_reloaded() -> None:
    old = ServerOptions(port=4222, cluster=ClusterConfig(name="C", port=6222))
    new = replace(old, cluster=ClusterConfig(name="C", port=6222, routes=["nats-route://h:6223"]))
    assert lines(old, new)[2:] == ["Reloaded: cluster routes"]


@pytest.mark.parametrize(
    "change,error",
    [
        ({"port": 6223}, "config reload not supported for cluster port: old=6222, new=6223"),
        ({"host": "127.0.0.1"}, "config reload not supported for cluster host: old=0.0.0.0, new=127.0.0.1"),
        ({"pool_size": 5}, "config reload of cluster pool_size is not supported by fakejs yet"),
        ({"compression": "off"}, "config reload of cluster compression is not supported by fakejs yet"),
        ({"accounts": ["A"]}, "config reload of cluster accounts is not supported by fakejs yet"),
    ],
)
def test_cluster_changes_refused(change: dict[str, object], error: str) -> None:
    old = ServerOptions(port=4222, cluster=ClusterConfig(name="C", port=6222))
    assert old.cluster is not None
    with pytest.raises(ReloadRefused) as refused:
        diff_options(old, replace(old, cluster=replace(old.cluster, **change)))  # type: ignore[arg-type]
    assert str(refused.value) == error


@pytest.mark.parametrize(
    "change",
    [{"advertise": "10.0.0.1:7000"}, {"no_advertise": True}, {"ping_interval": 5.0, "ping_max": 4}],
)
def test_cluster_settings_are_reloaded(change: dict[str, object]) -> None:
    old = ServerOptions(port=4222, cluster=ClusterConfig(name="C", port=6222))
    assert old.cluster is not None
    assert lines(old, replace(old, cluster=replace(old.cluster, **change)))[2:] == ["Reloaded: cluster"]  # type: ignore[arg-type]


def test_a_cluster_advertise_that_is_no_host_port_is_refused() -> None:
    old = ServerOptions(port=4222, cluster=ClusterConfig(name="C", port=6222))
    assert old.cluster is not None
    with pytest.raises(ReloadRefused) as refused:
        diff_options(old, replace(old, cluster=replace(old.cluster, advertise="h:1:2")))
    assert (
        str(refused.value) == "invalid Cluster.Advertise value of h:1:2, err=address h:1:2: too many colons in address"
    )


def test_the_batch_limits_reload_as_one() -> None:
    old = ServerOptions(port=4222, jetstream=True)
    changes = diff_options(old, replace(old, jetstream_batch_timeout=5.0))[2:]
    # All four are set (one line): the running limits are made again from them.
    assert [(change.field, change.line) for change in changes] == [
        ("jetstream_batch_inflight_per_stream", "Reloaded: JetStream limits"),
        ("jetstream_batch_inflight_total", ""),
        ("jetstream_batch_max_msgs", ""),
        ("jetstream_batch_timeout", ""),
    ]
    both = replace(old, jetstream_batch_max_msgs=5, jetstream_batch_inflight_total=7)
    assert [line for line in lines(old, both)[2:] if line] == ["Reloaded: JetStream limits"]


def test_a_websocket_change_of_certificates_only_is_kept_quietly() -> None:
    old = ServerOptions(port=4222, websocket=WebSocketConfig(port=1, tls=TLSConfig(cert_file="a")))
    assert old.websocket is not None
    assert lines(old, replace(old, websocket=replace(old.websocket, tls=TLSConfig(cert_file="b"))))[2:] == []
    pinned = replace(old.websocket, tls=TLSConfig(cert_file="a", pinned_certs=["p"]))
    with pytest.raises(ReloadRefused) as refused:
        diff_options(old, replace(old, websocket=pinned))
    assert " false map[p:{}] false " in str(refused.value)


def test_clustering_turned_on_or_off_is_refused_as_a_new_cluster_host() -> None:
    plain, clustered = ServerOptions(port=4222), ServerOptions(port=4222, cluster=ClusterConfig(port=6222))
    with pytest.raises(ReloadRefused) as refused:
        diff_options(plain, clustered)
    assert str(refused.value) == "config reload not supported for cluster host: old=, new=0.0.0.0"
    with pytest.raises(ReloadRefused) as refused:
        diff_options(clustered, plain)
    assert str(refused.value) == "config reload not supported for cluster host: old=0.0.0.0, new="


def test_new_pinned_certs_are_counted() -> None:
    old = ServerOptions(port=4222, tls=TLSConfig(pinned_certs=["a"]))
    new = replace(old, tls=TLSConfig(pinned_certs=["b", "c", "b"]))
    assert lines(old, new)[2:] == ["Reloaded: tls = enabled", "Reloaded: 2 pinned_certs"]


def test_handshake_first_lines() -> None:
    old = ServerOptions(port=4222, tls=TLSConfig())
    new = replace(old, tls=TLSConfig(handshake_first=True, handshake_first_fallback=0.05))
    assert lines(old, new)[3:] == [
        "Reloaded: Client TLS handshake first: true",
        "Reloaded: Client TLS handshake first fallback delay: 50ms",
    ]


def test_cluster_name_and_routes_have_their_lines_in_nats_server_order() -> None:
    old = ServerOptions(port=4222, cluster=ClusterConfig(name="C", port=6222))
    new = replace(old, cluster=ClusterConfig(name="D", port=6222, routes=["nats-route://h:6223"]), pid_file="/p")
    assert lines(old, new)[2:] == ["Reloaded: cluster", "Reloaded: pid_file = /p", "Reloaded: cluster routes"]


def test_cluster_authorization_is_reloaded() -> None:
    old = ServerOptions(port=4222, cluster=ClusterConfig(name="C", port=6222, username="u", password="p"))
    new = replace(old, cluster=ClusterConfig(name="C", port=6222, username="u", password="q"))
    assert lines(old, new)[2:] == ["Reloaded: cluster"]


def test_cluster_dial_retries_are_reloaded() -> None:
    old = ServerOptions(port=4222, cluster=ClusterConfig(name="C", port=6222))
    new = replace(old, cluster=ClusterConfig(name="C", port=6222, connect_retries=5, connect_backoff=True))
    assert lines(old, new)[2:] == ["Reloaded: cluster"]
