"""Configuration files: fakejs's parser against ``nats-server -t -c FILE``.

Each case is a file (plus any files it includes, and environment variables).
nats-server must say exactly what :class:`fakejs.conf.ConfigError` says, on
stderr with status 1 -- or, for a file it accepts, print the same
``sha256:`` digest of the parsed values that :func:`fakejs.conf.digest`
computes (which shows the two parses agree value for value).  The files run
from their own directory, so paths in messages need no rewriting.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from fakejs import conf

REAL = shutil.which("nats-server")
pytestmark = pytest.mark.real_only


@dataclass
class Case:
    text: str
    files: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)


BCRYPT = "$2a$11$W2zko751KUvVy59mUTWmpOdWjpEm5qhcCZRd05GjI/sSOT.xtiHyG"

VALID = {
    "equals": Case("port = 4222\n"),
    "colon_no_newline": Case("port: 4222"),
    "space_and_semicolon": Case("port 4222; server_name = srv1\n"),
    "json": Case('{"port": 4222, "server_name": "a", "debug": true, "authorization": {"user": "u", "password": "p"}}'),
    "json_pretty": Case('{\n  "port": 4222,\n  "accounts": {"A": {"users": [{"user": "a", "password": "b"}]}}\n}\n'),
    "comments": Case("# c\n// d\nport = 4222 # trailing\nserver_name: 'x' // t\n"),
    "sizes": Case("max_payload = 1MB\nmax_pending: 64mb\nmax_control_line 4KiB\n"),
    "size_powers_of_ten": Case("max_payload = 1m\nmax_pending: 2G\n"),
    "booleans": Case("debug = yes\ntrace: off\nlogtime TRUE\n"),
    "escapes": Case('authorization { user = "a\\x41\\t", password = "p\\"q\\\\" }\n'),
    "single_quotes": Case("authorization { user = 'a b', password = 'x\\y' }\n"),
    "variable": Case("P = 4333\nport = $P\n"),
    "nested_variable": Case("authorization { PW = s3cr3t; user = admin; password = $PW }\n"),
    "outer_variable": Case("PW = s3cr3t\nauthorization { user = admin\n password = $PW\n}\n"),
    "environment": Case("port = $FAKEJS_CONF_PORT\n", env={"FAKEJS_CONF_PORT": "4555"}),
    "environment_string": Case("server_name = $FAKEJS_CONF_NAME\n", env={"FAKEJS_CONF_NAME": "n1"}),
    "include": Case(
        "include ./inc/a.conf\n",
        files={"inc/a.conf": "port = 4223\ninclude 'b.conf'\n", "inc/b.conf": "server_name: from_b\n"},
    ),
    "include_in_map": Case(
        'authorization {\n include "auth.conf"\n}\n', files={"auth.conf": "user = a\npassword = b\n"}
    ),
    "arrays_of_maps": Case(
        "accounts {\n A {\n users = [\n {user: a, password: b}\n {user: c, password: d},\n ]\n }\n}\n"
    ),
    "block_string": Case("authorization { user: a, password: (\nsec ret\n)\n}\n"),
    "bcrypt": Case(f"authorization {{ user: a, password: {BCRYPT} }}\n"),
    "listen_host_port": Case("listen: 127.0.0.1:4333\n"),
    "bare_host_port": Case("listen = localhost:4333\n"),
    "duration_string": Case("ping_interval = \"2m\"\nwrite_deadline: '3s'\n"),
    "trailing_brace": Case("port = 4222\n}"),
    "separators": Case("port = 4222,\tserver_name = x;\n\n"),
    "quoted_keys": Case("\"port\" = 4222\n'server_name': x\n"),
    "tags_array": Case("server_tags: [a, 'b c', \"d\"]\n"),
    "json_trailing_commas": Case('{"server_tags": ["a", ], }'),
}

BROKEN = {
    "unterminated_double_quote": Case('server_name = "abc\n'),
    "unterminated_single_quote": Case("server_name = 'abc\n"),
    "unterminated_map": Case("authorization {\n user = a\n"),
    "unterminated_array": Case("server_tags = [a, b\n"),
    "single_number_array": Case("server_tags = [1]\n"),
    "unterminated_block": Case("server_name = (\nabc\n"),
    "key_without_value": Case("port\n"),
    "key_at_eof": Case("port = 1\nfoo"),
    "leading_separator": Case("= 1\n"),
    "stray_after_value": Case("port = 4222 x\n"),
    "invalid_escape": Case('server_name = "a\\qb"\n'),
    "bad_hex_escape": Case('server_name = "a\\xZZ"\n'),
    "undefined_variable": Case("port = $NOPE_FAKEJS\n"),
    "variable_defined_later": Case("port = $P\nP = 1\n"),
    "environment_cycle": Case("port = $FJ_A\n", env={"FJ_A": "$FJ_B", "FJ_B": "$FJ_A"}),
    "environment_not_a_value": Case("port = $FJ_A\n", env={"FJ_A": "1 2"}),
    "environment_unterminated": Case("port = $FJ_A\n", env={"FJ_A": "[1,2"}),
    "missing_include": Case("include nope.conf\n"),
    "include_directory": Case("include sub\n", files={"sub/x.conf": "port = 1\n"}),
    "nested_missing_include": Case("include 'sub/a.conf'\n", files={"sub/a.conf": 'include "b.conf"\n'}),
    "broken_include": Case("include inc.conf\n", files={"inc.conf": "port = \n"}),
    "absolute_include_is_relative": Case("include /nonexistent-fakejs/x.conf\n"),
    "include_array": Case("include [a]\n"),
    "include_number": Case("include 12\n"),
    "integer_out_of_range": Case("port: 99999999999999999999\n"),
    "float_without_fraction": Case("port = 1.\n"),
    "float_without_integer": Case("port = .5\n"),
    "minus_without_digit": Case("port = -x\n"),
    "short_date": Case("port = 2016-05-04\n"),
    "bad_date_zone": Case("port = 2016-05-04T18:53:41X\n"),
    "bad_date_value": Case("port = 2016-13-04T18:53:41Z\n"),
    "dash_in_number": Case("port = 12-3\n"),
    "map_double_terminator": Case("authorization { user = a,, password = b }\n"),
    "map_value_terminator": Case("authorization { user = , }\n"),
    "map_key_separator": Case("authorization { = 1 }\n"),
    "map_array_end": Case("authorization { ] }\n"),
    "map_key_eof": Case("authorization { user"),
    "map_quoted_key_eof": Case("authorization { 'user"),
    "map_double_quoted_key_eof": Case('authorization { "user'),
    "map_stray": Case("authorization { user = a b }\n"),
    "array_leading_comma": Case("server_tags = [,a]\n"),
    "json_block_stray": Case('{"port": 4222 x}'),
    "quoted_key_eof": Case('"port'),
    "value_newline": Case("port =\n4222\n"),
    "nul_character": Case("port = 4222\n\x00\n"),
}


def run_real(tmp_path: Path) -> tuple[int, str]:
    assert REAL is not None
    done = subprocess.run([REAL, "-t", "-c", "c.conf"], cwd=tmp_path, capture_output=True, timeout=30, check=False)
    assert done.stdout == b""
    return done.returncode, done.stderr.decode("utf-8", "replace")


def prepare(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if REAL is None:
        pytest.skip("nats-server not found")
    (tmp_path / "c.conf").write_text(case.text)
    for name, text in case.files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    for name, value in case.env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_files_give_the_same_digest(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prepare(VALID[name], tmp_path, monkeypatch)
    status, stderr = run_real(tmp_path)
    tree = conf.parse_file("c.conf")
    expected = conf.VALID_FORMAT.format(path="c.conf", digest=conf.digest(tree))
    assert (status, stderr) == (0, expected + "\n")


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_files_give_the_same_error(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prepare(BROKEN[name], tmp_path, monkeypatch)
    status, stderr = run_real(tmp_path)
    with pytest.raises(conf.ConfigError) as caught:
        conf.parse_file("c.conf")
    assert (status, stderr) == (conf.EXIT_STATUS, caught.value.stderr_line() + "\n")
