"""The configuration file format, rule by rule (see also tests/parity/test_conf_errors.py)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from fakejs.conf import SUFFIXES, ConfigError, Token, digest, parse, parse_file, plain
from fakejs.conf.values import go_json


def values(text: str) -> dict[str, object]:
    return plain(parse(text))


def error(text: str) -> str:
    with pytest.raises(ConfigError) as caught:
        parse(text, "c.conf")
    return str(caught.value)


# -- assignments, separators, comments -------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "a = 1\nb = x\n",
        "a: 1\nb: x",
        "a 1\nb x\n",
        "a=1;b=x",
        "a = 1, b = x",
        "a\t=\t1;\n\n  b : x ;",
        "{a = 1, b = x}",
        '{"a": 1, "b": "x"}',
        "a = 1 # one\n// two\nb = x // three\n",
        "# head\na = 1\n#tail\nb = x\n# end",
        "'a' = 1\n\"b\": x",
    ],
)
def test_assignment_styles_separators_and_comments(text: str) -> None:
    assert values(text) == {"a": 1, "b": "x"}


def test_later_keys_win() -> None:
    assert values("a = 1\na = 2\n") == {"a": 2}


def test_json_is_accepted_with_trailing_commas() -> None:
    text = '{\n  "s": "x", "n": [1, 2.5, true, null_is_a_string, {"m": {}}, ],\n}\n'
    assert values(text) == {"s": "x", "n": [1, 2.5, True, "null_is_a_string", {"m": {}}]}


# -- strings ---------------------------------------------------------------------------


def test_double_quoted_escapes() -> None:
    assert values(r's = "a\tb\nc\rd\"e\\f\x41\xe2\x82\xac"') == {"s": 'a\tb\nc\rd"e\\fA€'}


def test_single_quotes_are_raw() -> None:
    assert values(r"s = 'a\tb \x41'") == {"s": r"a\tb \x41"}


def test_bare_strings_end_at_blanks_and_separators() -> None:
    assert error("a = hello world\n").endswith("but got 'w' instead.'")
    assert values("a = nats://host:4222/x?y\nb = a/b.c-d\n") == {"a": "nats://host:4222/x?y", "b": "a/b.c-d"}
    assert values("a = [x,y]\n") == {"a": ["x", "y"]}
    assert values("a = {b = x}\n") == {"a": {"b": "x"}}


def test_bare_string_escapes_make_it_a_string() -> None:
    assert values(r"a = tru\x65" + "\n") == {"a": "true"}


def test_block_strings_end_at_a_closing_paren_alone_on_a_line() -> None:
    assert values("a (\n  x ) y\n  z\n)\nb = 1\n") == {"a": "\n  x ) y\n  z\n", "b": 1}


def test_addresses_and_host_ports_are_strings() -> None:
    got = values("a = 127.0.0.1\nb: 0.0.0.0:4222\nc localhost:4222\nd = 1.2.3\n")
    assert got == {"a": "127.0.0.1", "b": "0.0.0.0:4222", "c": "localhost:4222", "d": "1.2.3"}


def test_digits_followed_by_letters_are_strings() -> None:
    assert values("a = 4222abc\nb = 1kx\nc = 2s\n") == {"a": "4222abc", "b": "1kx", "c": "2s"}


# -- numbers, booleans, dates --------------------------------------------------------


def test_numbers() -> None:
    assert values("a = 0\nb = -17\nc = 1.5\nd = -0.25\ne = 007\n") == {"a": 0, "b": -17, "c": 1.5, "d": -0.25, "e": 7}


SUFFIX_TABLE = [
    ("k", 10**3), ("kb", 2**10), ("ki", 2**10), ("kib", 2**10),
    ("m", 10**6), ("mb", 2**20), ("mi", 2**20), ("mib", 2**20),
    ("g", 10**9), ("gb", 2**30), ("gi", 2**30), ("gib", 2**30),
    ("t", 10**12), ("tb", 2**40), ("ti", 2**40), ("tib", 2**40),
    ("p", 10**15), ("pb", 2**50), ("pi", 2**50), ("pib", 2**50),
    ("e", 10**18), ("eb", 2**60), ("ei", 2**60), ("eib", 2**60),
]  # fmt: skip


@pytest.mark.parametrize("suffix,multiplier", SUFFIX_TABLE)
def test_size_suffixes(suffix: str, multiplier: int) -> None:
    assert SUFFIXES[suffix] == multiplier
    for spelled in (suffix, suffix.upper(), suffix.capitalize()):
        assert values(f"a = 3{spelled}\nb = -2{spelled}\n") == {"a": 3 * multiplier, "b": -2 * multiplier}


def test_unknown_suffix_drops_the_key_and_products_wrap() -> None:
    assert values("a = 1kbb\nb = 2\n") == {"b": 2}
    assert values("a = 16eb\n") == {"a": 0}
    assert values("a = 9223372036854775807\n") == {"a": 2**63 - 1}
    assert error("a = 9223372036854775808\n") == "integer '9223372036854775808' is out of the range"


@pytest.mark.parametrize(
    "word,truth",
    [(w, True) for w in ("true", "TRUE", "Yes", "on", "ON")]
    + [(w, False) for w in ("false", "False", "no", "NO", "off")],
)
def test_booleans(word: str, truth: bool) -> None:
    assert values(f"a = {word}\n") == {"a": truth}
    assert values(f"a = '{word}'\n") == {"a": word}


def test_zulu_datetimes() -> None:
    assert values("a = 2016-05-04T18:53:41Z\n") == {"a": dt.datetime(2016, 5, 4, 18, 53, 41, tzinfo=dt.UTC)}
    assert error(
        "a = 2016-05-04\n"
    ) == "Parse error on line 2: 'Expected 'T' in ISO8601 datetime, but found '\n' instead.'".replace("'\n'", "'\\n'")
    assert error("a = 2016-02-30T00:00:00Z\n") == "expected Zulu formatted DateTime, but got '2016-02-30T00:00:00Z'"


# -- nesting ---------------------------------------------------------------------------


def test_nested_maps_and_arrays() -> None:
    text = "a {\n b { c = [1, [2, 3, ], {d: e}\n ] }\n f: []\n g {}\n}\n"
    assert values(text) == {"a": {"b": {"c": [1, [2, 3], {"d": "e"}]}, "f": [], "g": {}}}


def test_a_number_right_before_a_closing_bracket_is_an_error() -> None:
    # nats-server's number state does not stop at ']', so '[1]' cannot be written.
    assert error("a = [1]\n").startswith("Parse error on line 2: 'Expected an array value terminator")


# -- includes --------------------------------------------------------------------------


def test_includes_are_relative_to_the_including_file(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "main.conf").write_text("a = 1\ninclude sub/one.conf\nm { include 'two.conf' }\n")
    (tmp_path / "sub" / "one.conf").write_text('b = 2\ninclude "../sub/two.conf"\n')
    (tmp_path / "two.conf").write_text("top = yes\n")
    (tmp_path / "sub" / "two.conf").write_text("c = 3\n")
    tree = parse_file(str(tmp_path / "main.conf"))
    assert plain(tree) == {"a": 1, "b": 2, "c": 3, "m": {"top": True}}
    assert tree["c"].source_file == str(tmp_path / "sub" / "two.conf")
    assert (tree["c"].line, tree["c"].pos) == (1, 0)


def test_include_errors_name_the_include(tmp_path: Path) -> None:
    (tmp_path / "main.conf").write_text("include nope.conf\n")
    with pytest.raises(ConfigError) as caught:
        parse_file(str(tmp_path / "main.conf"))
    assert (
        str(caught.value)
        == f"error parsing include file 'nope.conf', open {tmp_path}/nope.conf: no such file or directory"
    )
    assert caught.value.stderr_line() == "nats-server: " + str(caught.value)


def test_missing_main_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^open .*/none\.conf: no such file or directory$"):
        parse_file(str(tmp_path / "none.conf"))
    with pytest.raises(ConfigError, match=r"^read .*: is a directory$"):
        parse_file(str(tmp_path))


# -- variables -------------------------------------------------------------------------


def test_variables_from_enclosing_maps_innermost_first() -> None:
    text = "x = 1\na { x = 2, b { c = $x }, d = [$x] }\ne = $x\n"
    assert values(text) == {"x": 1, "a": {"x": 2, "b": {"c": 2}, "d": [2]}, "e": 1}


def test_a_used_variable_is_marked() -> None:
    tree = parse("x = 1\ny = $x\n")
    assert tree["x"].used_variable and not tree["y"].used_variable


def test_environment_values_are_parsed_as_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FJ_INT", "4222")
    monkeypatch.setenv("FJ_SIZE", "1k")
    monkeypatch.setenv("FJ_STR", "'4222'")
    monkeypatch.setenv("FJ_MAP", "{a: [1, x, ]}")
    monkeypatch.setenv("FJ_CHAIN", "$FJ_INT")
    got = values("a = $FJ_INT\nb = $FJ_SIZE\nc = $FJ_STR\nd = $FJ_MAP\ne = $FJ_CHAIN\n")
    assert got == {"a": 4222, "b": 1000, "c": "4222", "d": {"a": [1, "x"]}, "e": 4222}


def test_variable_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    assert error("a = 1\nb = $nope\n") == "variable reference for 'nope' on line 2 can not be found"
    monkeypatch.setenv("FJ_A", "$FJ_B")
    monkeypatch.setenv("FJ_B", "$FJ_A")
    assert error("a = $FJ_A\n") == (
        "variable reference for 'FJ_A' on line 1 could not be parsed: "
        "variable reference for 'FJ_B' on line 1 could not be parsed: "
        "variable reference for 'FJ_A' on line 1 could not be parsed: variable reference cycle for 'FJ_A'"
    )


def test_bcrypt_hashes_are_strings() -> None:
    hashed = "$2a$11$W2zko751KUvVy59mUTWmpOdWjpEm5qhcCZRd05GjI/sSOT.xtiHyG"
    assert values(f"p = {hashed}\n") == {"p": hashed}


# -- positions ---------------------------------------------------------------------------


def test_positions_are_those_of_the_key() -> None:
    tree = parse("port = 4222\n  m {\n    k = [a,\n  b]\n  }\n", "x.conf")
    assert tree["port"].where() == "x.conf:1:0"  # columns count from 0 on the first line only
    assert tree["m"].where() == "x.conf:2:3"
    member = tree["m"].value["k"]
    assert (member.line, member.pos) == (3, 5)
    first, second = member.value
    assert isinstance(first, Token) and (first.line, first.pos, first.value) == (3, 10, "a")
    assert (second.line, second.pos, second.value) == (4, 3, "b")


# -- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,message",
    [
        ('a = "x\n', "Parse error on line 2: 'Unexpected EOF.'"),
        ("a {\n b = 1\n", "Parse error on line 3: 'Unexpected EOF processing map.'"),
        ("a = (\nx\n", "Parse error on line 3: 'Unexpected EOF processing block.'"),
        ("foo\n", "config is invalid (c.conf:2:1)"),
        ("= 1", "Parse error on line 1: 'Unexpected key separator '=''"),
        (
            "a = 1 b\n",
            "Parse error on line 1: 'Expected a top-level value to end with a new line, comment or EOF, but got 'b' instead.'",
        ),
        (
            'a = "\\q"',
            "Parse error on line 1: 'Invalid escape character 'q'. Only the following escape characters are allowed: \\xXX, \\t, \\n, \\r, \\\", \\\\.'",
        ),
        ('a = "\\xzz"', "Parse error on line 1: 'Expected two hexadecimal digits after '\\x', but got 'zz''"),
        ("a = .5", "Parse error on line 1: 'Floats must start with a digit'"),
        ("a = 1.x", "Parse error on line 1: 'Floats must have a digit after the '.', but got 'x' instead.'"),
        ("a = 12-3", "Parse error on line 1: 'All ISO8601 dates must be in full Zulu form.'"),
        ("a { b = , }", "Parse error on line 1: 'Unexpected map value terminator \",\".'"),
        ("a = [,]", "Parse error on line 1: 'Unexpected array value terminator ','.'"),
        ("include [x]", "Parse error on line 1: 'Expected include value but found start of an array'"),
    ],
)
def test_error_messages(text: str, message: str) -> None:
    assert error(text) == message


# -- digest ---------------------------------------------------------------------------


def test_digest_matches_nats_server() -> None:
    # nats-server -t prints this digest for 'port = 4222'.
    assert digest(parse("port = 4222\n")) == "sha256:797533ebd0dfba7d34a0f9337ecf147e442871f48ddfd07ed751575a5737267e"


@pytest.mark.parametrize(
    "number,text",
    [
        (1.5, "1.5"),
        (3.0, "3"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (1.5e-7, "1.5e-7"),
        (0.000001, "0.000001"),
        (-0.0, "-0"),
    ],
)
def test_go_float_text(number: float, text: str) -> None:
    assert go_json(number) == text


def test_go_json_sorts_keys_and_escapes() -> None:
    tree = parse("b = '<&>'\na = [2016-05-04T18:53:41Z, on]\n")
    assert go_json(tree) == '{"a":["2016-05-04T18:53:41Z",true],"b":"\\u003c\\u0026\\u003e"}'
