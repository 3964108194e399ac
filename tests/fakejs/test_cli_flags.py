"""The command line's flags: nats-server's set, its order of checks, and fakejs's refusals.

Texts marked "binary" are what nats-server 2.15.1 printed for the same argv.
"""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

import pytest

from fakejs import cli
from fakejs._version import __version__
from fakejs.cli.flags import flag_set
from fakejs.cli.settings import Exit, usage_text, version_text
from fakejs.server.portsfile import executable_name, ports_json, urls

# Every flag name nats-server 2.15.1 defines (server.ConfigureOptions and its -h text).
NATS_SERVER_FLAGS = [
    "h",
    "help",
    "port",
    "p",
    "n",
    "name",
    "server_name",
    "addr",
    "a",
    "net",
    "client_advertise",
    "D",
    "debug",
    "V",
    "VV",
    "trace",
    "DV",
    "DVV",
    "T",
    "logtime",
    "logtime_utc",
    "user",
    "pass",
    "auth",
    "m",
    "http_port",
    "ms",
    "https_port",
    "c",
    "config",
    "t",
    "sl",
    "signal",
    "P",
    "pid",
    "ports_file_dir",
    "l",
    "log",
    "log_size_limit",
    "s",
    "syslog",
    "r",
    "remote_syslog",
    "version",
    "v",
    "profile",
    "routes",
    "cluster",
    "cluster_listen",
    "cluster_advertise",
    "no_advertise",
    "connect_retries",
    "cluster_name",
    "help_tls",
    "tls",
    "tlsverify",
    "tlscert",
    "tlskey",
    "tlscacert",
    "max_traced_msg_len",
    "js",
    "jetstream",
    "sd",
    "store_dir",
]


def ends(argv: list[str]) -> Exit:
    with pytest.raises(Exit) as caught:
        cli.command_line(argv)
    return caught.value


def test_every_nats_server_flag_is_known() -> None:
    known = flag_set().flags
    assert [name for name in NATS_SERVER_FLAGS if name not in known] == []


@pytest.mark.parametrize(
    "argv,stderr",
    [
        (["-x"], "flag provided but not defined: -x\n"),
        (["-p", "abc"], 'invalid value "abc" for flag -p: parse error\n'),
        (["-p"], "flag needs an argument: -p\n"),
        (["---x"], "bad flag syntax: ---x\n"),
        (["-js=maybe"], 'invalid boolean value "maybe" for -js: parse error\n'),
        (["--log_size_limit", "1k"], 'invalid value "1k" for flag -log_size_limit: parse error\n'),
        (["-sl"], "flag needs an argument: -sl\n"),
    ],
)
def test_a_flag_error_prints_go_text_and_the_usage_and_exits_0(argv: list[str], stderr: str) -> None:
    """binary: the message on stderr, the usage on stdout, status 0 (nats-server's usage function exits 0)."""
    end = ends(argv)
    assert (end.status, end.stderr, end.stdout) == (0, stderr, usage_text())


@pytest.mark.parametrize("argv", [["-v"], ["--version"], ["version"], ["--", "VERSION"], ["-h", "-v"], ["-v", "foo"]])
def test_version(argv: list[str]) -> None:
    """nats-server's line first (harnesses parse it), then fakejs's own version."""
    end = ends(argv)
    assert (end.status, end.stderr) == (0, "")
    first, second = end.stdout.splitlines()
    assert first == "nats-server: v2.15.1"
    assert re.search(r"v(\d+)\.(\d+)\.(\d+)", end.stdout).groups() == ("2", "15", "1")  # type: ignore[union-attr]
    assert second.startswith(f"fakejs: v{__version__} (") and "nats-server 2.15.1" in second


def test_the_version_shown_is_the_package_version() -> None:
    assert importlib.metadata.version("fakejs") == __version__


@pytest.mark.parametrize("argv", [["-h"], ["--help"], ["help"], ["-help=true"]])
def test_help(argv: list[str]) -> None:
    end = ends(argv)
    assert (end.status, end.stderr) == (0, "")
    assert end.stdout.startswith("\nUsage: fakejs [options]\n") and end.stdout.endswith("\n\n")


@pytest.mark.parametrize("argv", [["--help_tls"], ["-help_tls"], ["--help_tls", "-p", "1"]])
def test_help_tls(argv: list[str]) -> None:
    end = ends(argv)
    assert (end.status, end.stderr) == (0, "")
    assert end.stdout.startswith("\n") and end.stdout.endswith("\n")
    for served in ("--tlscert", "verify_and_map", "handshake_first", "pinned_certs", "TLS_AES_128_GCM_SHA256"):
        assert served in end.stdout
    assert "ocsp_peer" in end.stdout.split("fakejs refuses", 1)[1]


# nats-server 2.15.1's -h sections, in its order (binary).
NATS_SERVER_SECTIONS = [
    "Server Options:",
    "Logging Options:",
    "JetStream Options:",
    "Authorization Options:",
    "TLS Options:",
    "Cluster Options:",
    "Profiling Options:",
    "Common Options:",
]


def _sections(text: str) -> dict[str, str]:
    """The usage's sections by heading (a line ending in "Options:"), each with its lines."""
    found: dict[str, str] = {}
    heading = ""
    for line in text.splitlines():
        if line.endswith("Options:") and not line.startswith(" "):
            heading = line
            found[heading] = ""
        elif heading:
            found[heading] += line + "\n"
    return found


def test_usage_keeps_nats_server_sections_in_order_and_fakejs_flags_in_their_own() -> None:
    text = usage_text()
    sections = _sections(text)
    assert [name for name in sections if name in NATS_SERVER_SECTIONS] == NATS_SERVER_SECTIONS
    assert list(sections)[-2:] == ["fakejs Options:", "Common Options:"]
    own = sections["fakejs Options:"]
    for name in ("scenario", "scenario_dir", "clock", "autojump", "seed", "conformance", "no_control", "control_token"):
        assert f"--{name} " in own
    for name in ("max_payload", "tls-selfsigned", "tls_dir", "cluster_size", "demo_credentials", "loop"):
        assert f"--{name} " in own
    nats_server_part = "".join(body for name, body in sections.items() if name != "fakejs Options:")
    assert "--scenario" not in nats_server_part and "--seed" not in nats_server_part


def test_usage_names_fakejs_and_lists_every_nats_server_flag() -> None:
    text = usage_text()
    assert text.startswith("\nUsage: fakejs [options]\n       fakejs conformance run ")
    for name in NATS_SERVER_FLAGS:
        assert re.search(rf"[ ,]--?{re.escape(name)}\b", text), name


@pytest.mark.parametrize("flag", ["--client_advertise", "--logtime_utc", "--syslog", "--profile"])
def test_usage_marks_the_flags_fakejs_refuses(flag: str) -> None:
    line = next(line for line in usage_text().splitlines() if flag in line)
    assert line.endswith("(refused)")


def test_usage_describes_verbose_trace_truthfully() -> None:
    """fakejs has a system account ($SYS); -VV traces as -V does: the account's internal traffic is not traced."""
    line = next(line for line in usage_text().splitlines() if line.strip().startswith("-VV "))
    assert "no system account" not in line and "system account's internal traffic is not traced" in line
    assert cli.command_line(["-VV"]).options.trace is True


@pytest.mark.parametrize(
    "argv,stderr",
    [
        (["foo"], 'nats-server: unrecognized command: "foo"\n'),
        (["-"], 'nats-server: unrecognized command: "-"\n'),
        (["-p", "4222", "extra"], 'nats-server: unrecognized command: "extra"\n'),
        (["-js", "--", "-p"], 'nats-server: unrecognized command: "-p"\n'),
        (["-t"], "nats-server: must specify [-c, --config] option to check configuration file syntax\n"),
        (["--tls"], "nats-server: TLS Server certificate must be present and valid\n"),
        (["--tlsverify"], "nats-server: TLS Server certificate must be present and valid\n"),
        (["--tls", "--tlscert", "x"], "nats-server: TLS Server private key must be present and valid\n"),
        (
            ["--routes", "nats://127.0.0.1:1"],
            "nats-server: solicited routes require cluster capabilities, e.g. --cluster\n",
        ),
    ],
)
def test_nats_server_refusals(argv: list[str], stderr: str) -> None:
    """binary: these exact lines, status 1."""
    end = ends(argv)
    assert (end.status, end.stderr, end.stdout) == (1, stderr, "")


@pytest.mark.parametrize(
    "argv,named",
    [
        (["--client_advertise", "x:1"], "client advertise URLs for clusters (--client_advertise)"),
        (["-s"], "syslog logging (-s/--syslog)"),
        (["-r", "udp://127.0.0.1:514"], "remote syslog logging (-r/--remote_syslog)"),
        (["--log_size_limit", "100"], "log file rotation (--log_size_limit)"),
        (["--logtime_utc"], "UTC log timestamps (--logtime_utc)"),
        (["--profile", "-1"], "the profiling port (--profile)"),
        (["-T=false"], "log lines without timestamps (-T=false)"),
    ],
)
def test_unsupported_features_are_refused_by_name(argv: list[str], named: str) -> None:
    end = ends(argv)
    assert end.status == 1 and end.stdout == ""
    assert end.stderr.startswith(f"fakejs: {named}: not supported by fakejs yet"), end.stderr


@pytest.mark.parametrize(
    "argv", [["-tls=false", "--tlscert", "x"], ["-s=false"], ["--no_advertise=false"], ["-T"], ["-ms", "0"]]
)
def test_unsupported_flags_at_their_defaults_are_fine(argv: list[str]) -> None:
    assert cli.command_line(argv).options is not None


def test_defaults_are_nats_server_s_but_the_address() -> None:
    options = cli.command_line([]).options
    assert (options.host, options.port, options.http_port, options.jetstream) == ("127.0.0.1", 4222, None, False)
    assert (options.debug, options.trace, options.store_dir, options.ports_file_dir) == (False, False, "", "")


@pytest.mark.parametrize("argv", [["-js"], ["--jetstream"], ["-js=true"], ["--js=1"]])
def test_jetstream_only_when_asked(argv: list[str]) -> None:
    assert cli.command_line(argv).options.jetstream is True
    assert cli.command_line([*argv, "-js=false"]).options.jetstream is False


@pytest.mark.parametrize(
    "argv,port,http_port",
    [
        (["-p", "0"], 4222, None),
        (["-p", "-1", "-m", "-1"], 0, 0),
        (["--port=0x1000", "--http_port", "8222"], 4096, 8222),
        (["-m", "0"], 4222, None),
        (["-p", "5", "--port", "6"], 6, None),
    ],
)
def test_ports(argv: list[str], port: int, http_port: int | None) -> None:
    options = cli.command_line(argv).options
    assert (options.port, options.http_port) == (port, http_port)


@pytest.mark.parametrize(
    "argv,debug,trace",
    [
        (["-D"], True, False),
        (["-V"], False, True),
        (["-VV"], False, True),
        (["-DV"], True, True),
        (["-DVV"], True, True),
        (["-DV", "-D=false"], True, True),  # -DV is applied after -D, whatever the order given
        (["-D", "-V", "-DV=false"], False, False),
        (["-debug", "-trace=true"], True, True),
    ],
)
def test_debug_and_trace(argv: list[str], debug: bool, trace: bool) -> None:
    options = cli.command_line(argv).options
    assert (options.debug, options.trace) == (debug, trace)


def test_server_settings_reach_the_options(tmp_path) -> None:
    argv = ["-a", "0.0.0.0", "-n", "srv", "--user", "u", "--pass", "p", "--auth", "t", "-sd", str(tmp_path)]
    argv += ["-l", "log.txt", "-P", "pid.txt", "--ports_file_dir", str(tmp_path), "--max_payload", "2048"]
    command = cli.command_line(argv)
    options = command.options
    assert (options.host, options.name, options.user, options.password, options.token) == (
        "0.0.0.0",
        "srv",
        "u",
        "p",
        "t",
    )
    assert (options.store_dir, options.log_file, options.ports_file_dir) == (str(tmp_path), "log.txt", str(tmp_path))
    assert (options.max_payload, command.pid_file) == (2048, "pid.txt")


def test_fakejs_own_flags() -> None:
    command = cli.command_line(["--clock", "manual", "--autojump", "0.01", "--scenario", "x", "--no_control"])
    assert (command.clock, command.autojump, command.scenario, command.options.control) == ("manual", 0.01, "x", False)
    assert ends(["--autojump", "1"]).stderr == "fakejs: --autojump needs --clock manual\n"
    assert ends(["--clock", "fast"]).status == 1
    assert ends(["--max_payload", "0"]).stderr == "fakejs: --max_payload must be positive\n"


def test_main_prints_error_then_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["-x"]) == 0
    out = capsys.readouterr()
    assert (out.err, out.out) == ("flag provided but not defined: -x\n", usage_text())


def test_main_refuses_an_impossible_port(capsys: pytest.CaptureFixture[str]) -> None:
    """binary: ``[FTL] Error listening on port: 0.0.0.0:-2, "listen tcp: address -2: invalid port"``, status 1."""
    assert cli.main(["-p", "-2", "-a", "0.0.0.0"]) == 1
    assert 'Error listening on port: 0.0.0.0:-2, "listen tcp: address -2: invalid port"' in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv0,name",
    [
        ("/usr/bin/fakejs", "nats-server"),
        ("/x/fakejs/__main__.py", "nats-server"),
        ("/usr/bin/python3.11", "nats-server"),
        ("/opt/bin/nats-server", "nats-server"),
        ("./my-nats", "my-nats"),
    ],
)
def test_ports_file_name(argv0: str, name: str) -> None:
    assert executable_name(argv0) == name


def test_ports_file_json() -> None:
    """binary: ``{"nats":["nats://127.0.0.1:P"],"monitoring":["http://127.0.0.1:M"]}``, no newline."""
    text = ports_json(urls("nats", "127.0.0.1", 1), urls("http", "127.0.0.1", 2))
    assert text == '{"nats":["nats://127.0.0.1:1"],"monitoring":["http://127.0.0.1:2"]}'
    assert ports_json(urls("nats", "::1", 1)) == '{"nats":["nats://[::1]:1"]}'
    assert urls("nats", "0.0.0.0", 1)[0] == "nats://127.0.0.1:1"


def test_the_command_line_page_shows_what_version_and_help_print() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "guide" / "command-line.md").read_text()
    assert f"```text\n{version_text()}```" in page
    for section in [*NATS_SERVER_SECTIONS, "fakejs Options:"]:
        assert f"`{section}`" in page
    for flag in ("--client_advertise", "--logtime_utc", "--profile"):
        assert f"`{flag}`" in page
