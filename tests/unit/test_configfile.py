"""Configuration files mapped onto ServerOptions (fakejs.core.configfile), in-process.

Texts marked "binary" were checked against nats-server 2.15.1; the parity
module tests/parity/test_config_file.py keeps comparing the two.
"""

from __future__ import annotations

import os
from pathlib import Path

import nats
import pytest
from nats.js.errors import APIError

from fakejs import Server, options_from_config
from fakejs.cli import command_line
from fakejs.cli.settings import Exit
from fakejs.conf import ConfigError
from fakejs.core.configfile import ConfigFileError, load_text, start_problem
from fakejs.core.options import DEFAULT_PORT, MAX_PAYLOAD
from fakejs.targets import FakeJS
from fakejs.testkit.certs import TestCertificates
from fakejs.testkit.jwt import Operator


def loaded(text: str):  # type: ignore[no-untyped-def]
    return load_text(text, "f.conf")


@pytest.mark.parametrize(
    "text,attribute,value",
    [
        ("port: -1", "port", 0),
        ("port: 0", "port", DEFAULT_PORT),
        ("port: 4333", "port", 4333),
        ('listen: "127.0.0.2:4444"', "host", "127.0.0.2"),
        ('listen: "127.0.0.2:-1"', "port", 0),
        ("listen: 5555", "port", 5555),
        ("net: 0.0.0.0", "host", "0.0.0.0"),
        ("server_name: s1", "name", "s1"),
        ('http: "127.0.0.1:-1"', "http_port", 0),
        ('http: "127.0.0.1:0"', "http_port", None),
        ("http_port: 8222", "http_port", 8222),
        ("monitor_port: -1", "http_port", 0),
        ("max_payload: 2MB", "max_payload", 2 * 1024 * 1024),
        ("max_payload: 0", "max_payload", MAX_PAYLOAD),
        ("max_control_line: 8KB", "max_control_line", 8192),
        ("max_pending: 1000000", "max_pending", 1000000),
        ("max_connections: 5", "max_connections", 5),
        ("max_conn: 0", "max_connections", -1),
        ("max_subscriptions: 5", "max_subscriptions", 5),
        ("max_subs: -1", "max_subscriptions", -1),
        ('ping_interval: "30s"', "ping_interval", 30.0),
        ("ping_interval: 45", "ping_interval", 45.0),
        ("ping_max: 4", "ping_max", 4),
        ('write_deadline: "250ms"', "write_deadline", 0.25),
        ('lame_duck_duration: "45s"', "lame_duck_duration", 45.0),
        ('lame_duck_grace_period: "3s"', "lame_duck_grace_period", 3.0),
        ("debug: true", "debug", True),
        ("trace_verbose: true", "trace", True),
        ("log_file: /tmp/x.log", "log_file", "/tmp/x.log"),
        ("pidfile: /tmp/x.pid", "pid_file", "/tmp/x.pid"),
        ("ports_file_dir: /tmp", "ports_file_dir", "/tmp"),
        ('server_tags: ["a:1", "b"]', "server_tags", ["a:1", "b"]),
        ("server_tags: one", "server_tags", ["one"]),
        ("no_auth_user: bob", "no_auth_user", "bob"),
        ('system_account: "$SYS"', "system_account", "$SYS"),
        ("jetstream: true", "jetstream", True),
        ("jetstream: Enabled", "jetstream", True),
        ("jetstream: disable", "jetstream", False),
        ("jetstream {}", "jetstream", True),
        ("jetstream { enabled: false }", "jetstream", False),
        ('jetstream { store_dir: "/tmp/s" }', "store_dir", "/tmp/s"),
        ('store_dir: "/tmp/s"', "store_dir", "/tmp/s"),
        ("jetstream { max_mem_store: 1MB }", "jetstream_max_memory", 1024 * 1024),
        ('jetstream { max_memory_store: "2K" }', "jetstream_max_memory", 2048),
        ("jetstream { max_file: -1 }", "jetstream_max_store", -1),
        ('jetstream { max_file_store: "1G" }', "jetstream_max_store", 1 << 30),
        ("jetstream { domain: hub }", "jetstream_domain", "hub"),
        ("jetstream { max_buffered_size: 1Gb }", "jetstream_max_buffered_size", 1 << 30),
        ("jetstream { max_buffered_msgs: 20000 }", "jetstream_max_buffered_msgs", 20000),
        ('jetstream { unique_tag: " AZ " }', "jetstream_unique_tag", "az"),
        ("jetstream { strict: false }", "jetstream_strict", False),
        ('jetstream { sync_interval: "1m" }', "jetstream_sync_interval", 60.0),
        ("jetstream { sync: always }", "jetstream_sync_always", True),
        ("authorization { user: a, password: b }", "password", "b"),
        ("authorization { token: t }", "token", "t"),
        ("authorization { timeout: 1.5 }", "auth_timeout", 1.5),
        ('authorization { timeout: "3s" }', "auth_timeout", 3.0),
    ],
)
def test_key_sets_option(text: str, attribute: str, value: object) -> None:
    result = loaded(text + "\n")
    assert not result.context.failed, result.context
    assert getattr(result.options, attribute) == value


@pytest.mark.parametrize(
    "text,error",
    [
        ('port: "x"', "f.conf:1:0: interface conversion: interface {} is string, not int64"),
        ('server_name: "a b"', "f.conf:1:0: server name cannot contain spaces"),
        ("max_payload: 3GB", "f.conf:1:0: max_payload value is too big"),
        ('lame_duck_duration: "1s"', "f.conf:1:0: invalid lame_duck_duration of 1s, minimum is 30 seconds"),
        (
            'lame_duck_duration: "x"',
            'f.conf:1:0: error parsing lame_duck_duration: time: invalid duration "x"',
        ),
        ('listen: "abc"', 'f.conf:1:0: could not parse address string "abc"'),
        ("listen: true", "f.conf:1:0: expected port or host:port, got bool"),
        ("jetstream: 1", "f.conf:1:0: Expected map, bool or string to define JetStream, got int64"),
        ("jetstream { domain: 1 }", "f.conf:1:0: interface conversion: interface {} is int64, not string"),
        (
            'jetstream { max_mem_store: "1X" }',
            "f.conf:1:12: max_mem_store sizes defined as strings must end in K, M, G, T",
        ),
        ("jetstream { foo: 1 }", 'f.conf:1:12: unknown field "foo"'),
        ("leafnodes { port: x }", "f.conf:1:12: interface conversion: interface {} is string, not int64"),
        ("leafnodes { authorization { token: x } }", 'f.conf:1:28: unknown field "token"'),
        ("authorization { user: a, token: b }", "f.conf:1:0: Cannot have a user/pass and token"),
        ("zzz: 1", 'f.conf:1:0: unknown field "zzz"'),
        ('max_subs: "x"', "f.conf:1:0: interface conversion: interface {} is string, not int64"),
        ("accounts { A: { limits: 5 } }", "f.conf:1:16: Expected account limits to be a map/struct, got 5"),
        ("accounts { A: { limits: { foo: 1 } } }", 'f.conf:1:26: Unknown field "foo" parsing account limits'),
        (
            'accounts { A: { limits: { max_subs: "x" } } }',
            "f.conf:1:26: interface conversion: interface {} is string, not int64",
        ),
    ],
)
def test_option_errors(text: str, error: str) -> None:
    assert loaded(text + "\n").context.errors[0] == error


SEED = "SUAMK3KBEQTB6FIA3F2DEDQ4DEBJS7RN7UERJYBDTM5ETPMGAAUIAYWKVE"


@pytest.mark.parametrize(
    ("text", "error"),
    [  # nats-server -t's lines for the same files
        (
            'leafnodes { remotes: [ { url: "nats://x:1", nkey: "UABC" } ] }',
            'f.conf:1:44: Remote leafnode nkey is not a valid seed: "UABC"',
        ),
        (
            f'leafnodes {{ remotes: [ {{ url: "nats://x:1", credentials: "a.creds", nkey: "{SEED}" }} ] }}',
            "f.conf:1:68: Remote leafnode can not have both creds and nkey defined",
        ),
        (
            'leafnodes { port: -1, authorization { nkey: "UBAD" } }',
            "f.conf:1:38: Not a valid public nkey for leafnode authorization",
        ),
    ],
)
def test_leaf_key_errors(text: str, error: str) -> None:
    assert loaded(text + "\n").context.errors[0] == error


def test_a_used_variable_is_not_an_unknown_field() -> None:
    assert not loaded("P = 4333\nport: $P\n").context.errors
    assert loaded("P = 4333\n").context.errors == ['f.conf:1:0: unknown field "P"']


def test_integer_durations_warn() -> None:
    context = loaded("ping_interval: 2m\n").context  # 2m is the integer 2000000 here
    assert context.warnings == [
        'f.conf:1:0: invalid use of field "ping_interval": ping_interval should be converted to a duration'
    ]
    assert not context.errors


@pytest.mark.parametrize(
    "text,feature",
    [
        ("accounts { A: { limits: { max_conn: 1 } } }", "account connection limits (max_conn)"),
        ("accounts { A: { limits: { max_payload: 1 } } }", "account payload limits (max_payload)"),
        ("accounts { A: { limits: { max_leafs: 1 } } }", "account leaf node limits (max_leafs)"),
        ("tls { }", "TLS without a certificate (cert_file)"),
        ("leafnodes { tls: {} }", "TLS without a certificate (cert_file)"),
        (
            'leafnodes { remotes: [ { url: "nats://x:1", proxy: { url: "http://p:1" } } ] }',
            "leaf node connections (leafnodes { remotes [ { proxy } ] })",
        ),
        *(
            (
                f'leafnodes {{ remotes: [ {{ url: "nats://x:1", {key}: {value} }} ] }}',
                f"leaf node connections (leafnodes {{ remotes [ {{ {key} }} ] }})",
            )
            for key, value in (
                ("ws_compression", "true"),
                ("ws_no_masking", "true"),
                ("compression", "s2_fast"),
                ("first_info_timeout", '"2s"'),
                ("dial_timeout", '"2s"'),
                ("disabled", "true"),
                ("request_isolation", "true"),
                ("isolate_leafnode_interest", "true"),
                ("jetstream_cluster_migrate", "true"),
            )
        ),
        *(
            (f"leafnodes {{ port: -1, {key}: {value} }}", f"leaf node connections (leafnodes {{ {key} }})")
            for key, value in (
                ("dial_timeout", '"2s"'),
                ("min_version", '"2.8.0"'),
                ("isolate_leafnode_interest", "true"),
                ("write_deadline", '"2s"'),
            )
        ),
        ('cluster { listen: "127.0.0.1:-1", tls: {} }', "TLS between routes (cluster { tls })"),
        ("cluster { compression: s2_fast }", "route compression (cluster { compression })"),
        ("gateway { gateways: [] }", "gateways (gateway { gateways })"),
        ("logtime: false", "log lines without timestamps"),
        ("authorization { proxy_required: true }", "trusted proxies (proxy_required)"),
        ('http_base_path: "/nats"', "a monitoring base path"),
        ("no_fast_producer_stall: true", "fast producer stall"),
        ("jetstream { cipher: aes }", "encryption at rest"),
    ],
)
def test_refusals_name_the_feature(text: str, feature: str) -> None:
    context = loaded(text + "\n").context
    assert not context.errors
    assert len(context.refusals) == 1 and feature in context.refusals[0]
    assert context.refusals[0].endswith("not supported by fakejs yet")


@pytest.mark.parametrize(
    "text,limit",
    [("accounts { A: {} }", -1), ("accounts { A: { limits: { max_subs: 3 } } }", 3)],
)
def test_account_subscription_limit(text: str, limit: int) -> None:
    result = loaded(text + "\n")
    assert not result.context.failed, result.context
    assert [(a.name, a.max_subscriptions) for a in result.options.accounts] == [("A", limit)]


def test_leaf_remote_keys() -> None:
    text = f'leafnodes {{ remotes [ {{ url: "nats://x:1", credentials: "~/l.creds" }}, {{ url: "nats://y:1", seed: "{SEED}" }} ] }}\n'
    result = loaded(text)
    assert not result.context.failed, result.context
    leafnodes = result.options.leafnodes
    assert leafnodes is not None
    assert [(r.credentials, r.nkey) for r in leafnodes.remotes] == [(os.path.expanduser("~/l.creds"), ""), ("", SEED)]


def test_leaf_accounts_permissions_and_users() -> None:
    text = (
        "accounts { A { users [ {user: a, password: a} ] } }\n"
        "leafnodes { port: -1, authorization { account: A, users [ {user: x, password: y, account: A} ] }\n"
        'remotes [ { url: "nats://x:1", account: A, deny_imports: ["i.>"], deny_exports: "e.>" } ] }\n'
    )
    result = loaded(text)
    assert not result.context.failed, result.context
    leafnodes = result.options.leafnodes
    assert leafnodes is not None and leafnodes.account == "A"
    assert [(u.name, u.password, u.account) for u in leafnodes.users] == [("x", "y", "A")]
    remote = leafnodes.remotes[0]
    assert (remote.account, remote.deny_imports, remote.deny_exports) == ("A", ["i.>"], ["e.>"])
    assert start_problem(result.options, result.unserved) == ""


@pytest.mark.parametrize(
    "text,problem",
    [
        (
            'leafnodes { remotes [ { url: "nats://127.0.0.1:1", account: A } ] }',
            'cannot find local account "A" specified in leafnode remote',
        ),
        (
            "leafnodes { port: -1, authorization { users [ {user: x, password: y, account: Q} ] } }",
            'cannot find local account "Q" specified in leafnode authorization',
        ),
    ],
)
def test_leaf_accounts_must_exist(text: str, problem: str) -> None:
    result = loaded(text + "\n")
    assert not result.context.failed, result.context
    assert start_problem(result.options, result.unserved) == problem


@pytest.mark.parametrize(
    "leafnodes,problem",
    [
        ('remotes [ { url: "nats://127.0.0.1:1" } ]', "operator mode requires account nkeys in remotes. "),
        ('remotes [ { url: "nats://127.0.0.1:1", account: LA } ]', "operator mode requires account nkeys in remotes. "),
        (
            "port: -1, authorization { users [ {user: u, password: p} ] }",
            "operator mode does not allow specifying users",
        ),
        ("port: -1, authorization { account: A }", "operator mode and non account nkeys are incompatible"),
        ('remotes [ { url: "nats://127.0.0.1:1", account: "{key}" } ]', ""),
    ],
)
def test_leafnodes_in_operator_mode(leafnodes: str, problem: str) -> None:
    """In operator mode accounts are named by their public keys: remotes must bind one, leaf users are refused."""
    operator = Operator()
    system, account = operator.account("SYS"), operator.account("LA")
    config = operator.server_config(system_account=system, accounts=[system, account])
    result = loaded(f"{config}leafnodes {{ {leafnodes.replace('{key}', account.public_key)} }}\n")
    assert not result.context.failed, result.context
    found = start_problem(result.options, result.unserved)
    assert found.startswith(problem) and bool(found) == bool(problem)


def test_leafnodes_are_served_in_a_cluster_too() -> None:
    result = loaded('leafnodes { listen: "127.0.0.1:-1", authorization { user: a, password: b } }\n')
    assert not result.context.failed and not result.context.notices
    leafnodes = result.options.leafnodes
    assert leafnodes is not None and (leafnodes.host, leafnodes.port, leafnodes.username) == ("127.0.0.1", -1, "a")
    assert start_problem(result.options, result.unserved) == ""
    # A leaf port and leaf remotes beside a cluster start as well
    clustered = loaded('leafnodes { listen: "127.0.0.1:-1" }\ncluster { name: c, listen: "127.0.0.1:-1" }\n')
    assert start_problem(clustered.options, clustered.unserved) == ""
    remotes = (
        'leafnodes { remotes [ { url: "nats://127.0.0.1:7422" } ] }\ncluster { name: c, listen: "127.0.0.1:-1" }\n'
    )
    assert start_problem(loaded(remotes).options, loaded(remotes).unserved) == ""


def test_listener_only_blocks_are_accepted_with_a_notice() -> None:
    result = loaded(
        'gateway { name: g, listen: "127.0.0.1:-1" }\nwebsocket { port: -1, no_tls: true }\ncluster { name: c }\n'
    )
    assert not result.context.failed
    assert [line.split(" ")[0] for line in result.context.notices] == ["gateway"]
    assert start_problem(result.options, result.unserved) == ""


@pytest.mark.parametrize(
    "text,problem",
    [
        ("max_payload: 100MB", "max_payload (104857600) cannot be higher than max_pending (67108864)"),
        (
            'lame_duck_duration: "60s"\nlame_duck_grace_period: "2m"',
            "lame duck grace period (2m0s) should be strictly lower than lame duck duration (1m0s)",
        ),
        ("websocket { port: -1 }", "websocket requires TLS configuration"),
        ("mqtt { port: -1 }", "mqtt requires JetStream to be enabled if running in standalone mode"),
        ("gateway { port: -1 }", "gateway has no name"),
        ("no_auth_user: bob", 'no_auth_user: "bob" present, but users/nkeys are not defined'),
        (
            'server_name: a\ncluster { name: c, listen: "127.0.0.1:-1" }\njetstream: enabled',
            "Can't start JetStream: JetStream cluster requires configured routes or solicited leafnode "
            "for the system account",
        ),
        (
            'server_name: a\ncluster { name: c, listen: "127.0.0.1:-1", routes: ["nats://127.0.0.1:1"] }\n'
            "jetstream: enabled",
            "",
        ),
        (
            'server_name: a\ncluster { name: c, listen: "127.0.0.1:-1", routes: ["nats://127.0.0.1:1"] }\n'
            "jetstream: enabled\naccounts { A: { jetstream: enabled, users: [{user: a, password: a}] } }",
            "",
        ),
        ('cluster { port: -1, compression: "bogus" }', 'unsupported compression mode "bogus"'),
        ("jetstream { domain: hub }", ""),
    ],
)
def test_start_problems(text: str, problem: str) -> None:
    result = loaded(text + "\n")
    assert not result.context.failed
    assert start_problem(result.options, result.unserved) == problem


def test_empty_file_is_a_warning() -> None:
    context = loaded("").context
    assert context.warnings == ["f.conf: config has no values or is empty"] and not context.errors


# -- the command line ---------------------------------------------------------------------


def test_flags_override_the_file(tmp_path: Path) -> None:
    path = tmp_path / "s.conf"
    path.write_text("port: 4333\nserver_name: file\njetstream: true\ndebug: true\nmax_payload: 1KB\n")
    options = command_line(["-c", str(path), "-p", "-1", "-n", "flag", "-js=false"]).options
    assert (options.port, options.name, options.jetstream, options.debug, options.max_payload) == (
        0,
        "flag",
        False,
        True,
        1024,
    )


def test_check_only(tmp_path: Path) -> None:
    path = tmp_path / "s.conf"
    path.write_text("port: 4333\n")
    with pytest.raises(Exit) as end:
        command_line(["-t", "-c", str(path)])
    assert end.value.status == 0
    assert end.value.stderr.startswith(f"nats-server: configuration file {path} is valid (sha256:")
    path.write_text("port: 4333\nping_interval: 1\n")
    with pytest.raises(Exit) as end:
        command_line(["-c", str(path), "-t"])
    assert end.value.status == 1 and end.value.stderr.endswith("should be converted to a duration\n\n")
    assert command_line(["-c", str(path)]).warnings.endswith("should be converted to a duration\n")


def test_errors_and_refusals_on_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "s.conf"
    path.write_text('port: "x"\nfoo: 1\n')
    with pytest.raises(Exit) as end:
        command_line(["-c", str(path)])
    assert end.value.status == 1
    assert end.value.stderr == (
        f"nats-server: {path}:1:0: interface conversion: interface {{}} is string, not int64\n"
        f'{path}:2:1: unknown field "foo"\n\n'
    )
    path.write_text("logfile_size_limit: 1\n")
    with pytest.raises(Exit) as end:
        command_line(["-c", str(path)])
    assert (
        end.value.stderr == f"fakejs: {path}:1:0: log file rotation (logfile_size_limit): not supported by fakejs yet\n"
    )
    path.write_text("port: -1\nmax_payload: 100MB\n")
    with pytest.raises(Exit) as end:
        command_line(["-c", str(path)])
    assert end.value.stderr == "nats-server: max_payload (104857600) cannot be higher than max_pending (67108864)\n"


# -- in process ---------------------------------------------------------------------------------


def test_options_from_config_raises_nats_server_errors() -> None:
    with pytest.raises(ConfigFileError, match="unknown field"):
        options_from_config("port: -1\nnope: 1\n")
    with pytest.raises(ConfigError, match="Parse error"):
        options_from_config("port: [1\n")


async def test_server_from_configuration_text() -> None:
    options = options_from_config("port: -1\nmax_payload: 4KB\njetstream { max_mem_store: 1KB }\n")
    async with Server(options) as server:
        nc = await nats.connect(server.url)
        try:
            assert nc.max_payload == 4096
            js = nc.jetstream()
            with pytest.raises(APIError) as error:
                await js.add_stream(name="BIG", subjects=["big"], storage="memory", max_bytes=2048)
            assert error.value.err_code == 10028  # insufficient memory resources
        finally:
            await nc.close()


def test_fake_target_from_configuration() -> None:
    server = FakeJS(config="port: -1\nserver_name: cfg\n", seed=7).start()
    try:
        assert server.server.options.name == "cfg" and server.server.options.seed == 7
        assert not server.server.options.jetstream
    finally:
        server.stop()


@pytest.mark.fakejs(config="port: -1\nserver_name: from_marker\njetstream: enabled\n")
def test_pytest_marker_config(fakejs_server) -> None:  # type: ignore[no-untyped-def]
    assert fakejs_server.server.options.name == "from_marker"
    assert fakejs_server.server.jetstream is not None


def test_pid_file_and_notices_reach_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "s.conf"
    path.write_text(f'pid_file: "{tmp_path}/a.pid"\ngateway {{ name: g, listen: "127.0.0.1:-1" }}\n')
    command = command_line(["-c", str(path)])
    assert command.pid_file == f"{tmp_path}/a.pid"
    assert command.notices == [
        "gateway listener (127.0.0.1:-1) accepted from the configuration file but not served by fakejs"
    ]
    assert command_line(["-c", str(path), "-P", "b.pid"]).pid_file == "b.pid"


@pytest.mark.parametrize("value", ["true", '"300ms"', "auto"])
def test_a_leaf_remote_starts_with_the_tls_handshake(value: str) -> None:
    """A remote's ``handshake_first``: a fallback delay means the same (a remote always starts the handshake)."""
    result = loaded(f'leafnodes {{ remotes: [ {{ url: "nats://x:1", tls: {{ handshake_first: {value} }} }} ] }}\n')
    assert not result.context.failed, result.context
    assert result.options.leafnodes is not None
    (remote,) = result.options.leafnodes.remotes
    assert remote.tls is not None
    assert (remote.tls.handshake_first, remote.tls.handshake_first_fallback) == (True, 0.0)


def _leaf_port_tls(tmp_path: Path, handshake_first: str) -> str:
    certs = TestCertificates(tmp_path)
    files = f'cert_file: "{certs.server_cert_file}", key_file: "{certs.server_key_file}"'
    return f"leafnodes {{ tls: {{ {files}, handshake_first: {handshake_first} }} }}\n"


def test_the_leaf_port_takes_the_tls_handshake_first(tmp_path: Path) -> None:
    result = loaded(_leaf_port_tls(tmp_path, "true"))
    assert not result.context.failed, result.context
    assert result.options.leafnodes is not None and result.options.leafnodes.tls is not None
    assert result.options.leafnodes.tls.handshake_first


@pytest.mark.parametrize("value", ["auto", '"300ms"'])
def test_the_leaf_port_refuses_a_plain_text_fallback(tmp_path: Path, value: str) -> None:
    """nats-server would greet a leaf silent past the delay in plain text: fakejs refuses the delay by name."""
    context = loaded(_leaf_port_tls(tmp_path, value)).context
    assert not context.errors
    feature = "leaf node connections falling back to plain text after a delay (leafnodes { tls { handshake_first } })"
    assert len(context.refusals) == 1 and feature in context.refusals[0]


def test_leaf_remote_aliases_and_url_order() -> None:
    """nats-server's ``deny_import``/``deny_export`` and ``dont_randomize`` spellings, and ``no_randomize``."""
    text = (
        'leafnodes { remotes: [ { url: "nats://x:1", deny_import: "i.>", deny_export: ["e.>"], dont_randomize: true },'
        ' { url: "nats://y:1", no_randomize: false } ] }\n'
    )
    result = loaded(text)
    assert not result.context.failed, result.context
    assert result.options.leafnodes is not None
    first, second = result.options.leafnodes.remotes
    assert (first.deny_imports, first.deny_exports, first.no_randomize) == (["i.>"], ["e.>"], True)
    assert second.no_randomize is False
