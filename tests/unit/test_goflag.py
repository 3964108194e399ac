"""Go's flag package (fakejs.gocompat.goflag), against answers of nats-server 2.15.1's binary.

Each expected text below is what ``nats-server <argv>`` printed on stderr
(the integer cases were run as ``nats-server -p VALUE -v``, the boolean
ones as ``nats-server -js=VALUE -v``: no error means the version).
"""

from __future__ import annotations

import pytest

from fakejs.gocompat.goflag import FlagError, FlagSet, NumError, parse_bool, parse_int


def flag_set() -> FlagSet:
    flags = FlagSet()
    flags.int("port", "p", "port")
    flags.bool("jetstream", "js", "jetstream")
    flags.bool("version", "v", "version")
    flags.string("cluster_name", "cluster_name")
    flags.string("config", "c", "config")
    flags.list("dirs", "dir")
    flags.float("wait", "wait")
    return flags


@pytest.mark.parametrize(
    "text,value",
    [
        ("0x10", 16),
        ("0X1F", 31),
        ("1_000", 1000),
        ("017", 15),
        ("0o17", 15),
        ("0O7", 7),
        ("0b1", 1),
        ("0B11", 3),
        ("+5", 5),
        ("-5", -5),
        ("0", 0),
        ("0x_1", 1),
        ("-0x8000000000000000", -(1 << 63)),
    ],
)
def test_integers_go_accepts(text: str, value: int) -> None:
    assert parse_int(text) == value


@pytest.mark.parametrize(
    "text,error",
    [
        ("1__0", "parse error"),
        ("", "parse error"),
        (" 5", "parse error"),
        ("0x", "parse error"),
        ("_1", "parse error"),
        ("1_", "parse error"),
        ("+-5", "parse error"),
        ("08", "parse error"),
        ("1e3", "parse error"),
        ("0x1g", "parse error"),
        ("9223372036854775808", "value out of range"),
        ("-9223372036854775809", "value out of range"),
        ("99999999999999999999x", "value out of range"),  # the overflow is met before the bad digit
    ],
)
def test_integers_go_refuses(text: str, error: str) -> None:
    with pytest.raises(NumError) as caught:
        parse_int(text)
    assert str(caught.value) == error


@pytest.mark.parametrize("text", ["1", "t", "T", "TRUE", "true", "True"])
def test_true(text: str) -> None:
    assert parse_bool(text) is True


@pytest.mark.parametrize("text", ["0", "f", "F", "FALSE", "false", "False"])
def test_false(text: str) -> None:
    assert parse_bool(text) is False


@pytest.mark.parametrize("text", ["yes", "tRUE", "", "on"])
def test_not_booleans(text: str) -> None:
    with pytest.raises(NumError):
        parse_bool(text)


@pytest.mark.parametrize(
    "argv,message",
    [
        (["-x"], "flag provided but not defined: -x"),
        (["--nope=1"], "flag provided but not defined: -nope"),
        (["-p", "abc"], 'invalid value "abc" for flag -p: parse error'),
        (["--p=x"], 'invalid value "x" for flag -p: parse error'),
        (["-p="], 'invalid value "" for flag -p: parse error'),
        (["-p", "99999999999999999999"], 'invalid value "99999999999999999999" for flag -p: value out of range'),
        (["-p", "\udcff\n"], 'invalid value "\\xff\\n" for flag -p: parse error'),
        (["-p"], "flag needs an argument: -p"),
        (["-js", "-cluster_name"], "flag needs an argument: -cluster_name"),
        (["---x"], "bad flag syntax: ---x"),
        (["-=x"], "bad flag syntax: -=x"),
        (["--=x"], "bad flag syntax: --=x"),
        (["-js=maybe"], 'invalid boolean value "maybe" for -js: parse error'),
        (["-js=tRue"], 'invalid boolean value "tRue" for -js: parse error'),
        (["-js="], 'invalid boolean value "" for -js: parse error'),
        (["-cl", "x"], "flag provided but not defined: -cl"),  # no abbreviations
        (["-cx"], "flag provided but not defined: -cx"),  # no glued short options
        (["-wait", "soon"], 'invalid value "soon" for flag -wait: parse error'),
    ],
)
def test_errors_have_go_text(argv: list[str], message: str) -> None:
    with pytest.raises(FlagError) as caught:
        flag_set().parse(argv)
    assert str(caught.value) == message


def test_one_or_two_dashes_and_both_value_forms() -> None:
    parsed = flag_set().parse(["--port=5", "-js", "--cluster_name", "abc", "-c=x.conf"])
    assert parsed.values["port"] == 5
    assert parsed.values["jetstream"] is True
    assert parsed.values["cluster_name"] == "abc"
    assert parsed.values["config"] == "x.conf"
    assert parsed.seen == ["port", "js", "cluster_name", "c"]
    assert parsed.given("port") and not parsed.given("version")
    assert parsed.spelling("config") == "c" and parsed.spelling("help") == ""
    with pytest.raises(KeyError):
        parsed.given("p")  # a name, not a dest


def test_a_value_may_start_with_a_dash() -> None:
    assert flag_set().parse(["-p", "-1"]).values["port"] == -1


def test_the_last_of_names_sharing_a_value_wins() -> None:
    assert flag_set().parse(["-p", "1", "--port", "2", "-p=3"]).values["port"] == 3


def test_boolean_flags_take_no_separate_value() -> None:
    parsed = flag_set().parse(["-js", "false", "-p", "1"])
    assert parsed.values["jetstream"] is True
    assert parsed.args == ["false", "-p", "1"]
    assert flag_set().parse(["-js=false"]).values["jetstream"] is False


def test_flags_stop_at_the_first_argument_or_double_dash() -> None:
    assert flag_set().parse(["-js", "--", "-p"]).args == ["-p"]
    assert flag_set().parse(["--", "version"]).args == ["version"]
    assert flag_set().parse(["-", "-p", "1"]).args == ["-", "-p", "1"]  # a lone dash is an argument
    parsed = flag_set().parse(["-p", "4222", "extra", "-js"])
    assert (parsed.values["port"], parsed.values["jetstream"], parsed.args) == (4222, False, ["extra", "-js"])


def test_defaults_and_repeatable_lists() -> None:
    parsed = flag_set().parse(["-dir", "a", "--dir=b"])
    assert parsed.values["dirs"] == ["a", "b"]
    assert parsed.values["port"] == 0 and parsed.defaults["port"] == 0
    assert flag_set().parse([]).values["dirs"] == []


def test_float_flags() -> None:
    assert flag_set().parse(["-wait", "0.25"]).values["wait"] == 0.25


def test_redefining_a_flag_is_a_mistake() -> None:
    flags = flag_set()
    with pytest.raises(ValueError):
        flags.bool("again", "js")
