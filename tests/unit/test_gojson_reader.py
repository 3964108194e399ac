"""The iterative Go-faithful JSON reader: depth, duplicates, folding, recursion, fast path."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakejs.gocompat import gojson
from fakejs.gocompat.gojson import (
    Field,
    GoJSONError,
    GoObject,
    Struct,
    decode,
    decode_request,
    parse,
    read_stream,
    unmarshal,
)
from fakejs.gocompat.gostruct import fold_name
from fakejs.gocompat.jsonscan import parse_value
from fakejs.gocompat.jsonvalue import NegativeZero, raw_text, to_plain


@pytest.fixture
def low_recursion_limit() -> Iterator[None]:
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(120)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def slow(data: bytes) -> object:
    """The careful reader alone, bypassing Python's C decoder."""
    value, end = parse_value(data, 0)
    assert end == len(data)
    return value


def test_ten_thousand_levels_are_read_one_more_is_refused(low_recursion_limit: None) -> None:
    value = parse(b"[" * 10_000 + b"]" * 10_000)
    for _ in range(9_999):
        value = value[0]
    assert value == []
    with pytest.raises(GoJSONError, match=r"^exceeded max depth$"):
        parse(b"[" * 10_001 + b"]" * 10_001)
    with pytest.raises(GoJSONError, match=r"^exceeded max depth at offset 50001$"):
        list(read_stream(b'{"a":' * 10_001 + b"1" + b"}" * 10_001))


def test_deep_values_convert_and_decode_without_recursion(low_recursion_limit: None) -> None:
    deep = b'{"a":' * 10_000 + b"1" + b"}" * 10_000
    plain = gojson.loads(deep)
    for _ in range(10_000):
        plain = plain["a"]
    assert plain == 1
    schema = Struct("Opts", (Field("x", "any"), Field("y", "bool")))
    out = decode(schema, parse(b'{"y":true,"x":' + b"[" * 9_999 + b"]" * 9_999 + b"}"))
    assert out["y"] is True


def test_objects_keep_members_in_order_with_duplicates() -> None:
    for read in (parse, slow):
        value = read(b'{"b":1,"a":2,"b":3}')
        assert isinstance(value, GoObject)
        assert list(value) == [("b", 1), ("a", 2), ("b", 3)]
        assert value.get("b") == 3
    assert gojson.loads(b'{"b":1,"a":2,"b":[{"c":1,"c":2}]}') == {"b": [{"c": 2}], "a": 2}


SCHEMA = Struct(
    "Req",
    (Field("pass", "string"), Field("k", "int"), Field("tags", "[]string"), Field("meta", "map[string]string")),
)


def test_keys_fold_like_go_and_the_last_match_wins() -> None:
    assert decode(SCHEMA, parse('{"pass":"a","PASS":"b","paſſ":"c"}'.encode())) == {"pass": "c"}
    assert decode(SCHEMA, parse('{"\u212a":1}'.encode())) == {"k": 1}  # Kelvin sign
    assert decode(SCHEMA, parse(b'{"pa_ss":"x","p-ass":"y"}')) == {}  # delimiters are significant
    assert fold_name("ı") != fold_name("i")  # dotless i only upper-cases to I; Go does not fold them
    assert fold_name("ß") == fold_name("ẞ")


def test_first_error_is_reported_with_the_key_as_written() -> None:
    with pytest.raises(GoJSONError) as info:
        decode(SCHEMA, parse(b'{"PASS":1,"pass":"ok","k":"x"}'))
    assert str(info.value) == "json: cannot unmarshal number into Go struct field Req.PASS of type string"
    with pytest.raises(GoJSONError) as info:
        decode(SCHEMA, parse(b'{"Meta":{"a/b":1}}'))
    assert str(info.value) == "json: cannot unmarshal number into Go struct field Req.Meta.a~1b of type string"
    with pytest.raises(GoJSONError) as info:
        decode(SCHEMA, parse(b'{"tags":["a",2]}'))
    assert str(info.value) == "json: cannot unmarshal number into Req.tags.1 of type string"


def test_duplicate_objects_merge_into_the_field() -> None:
    inner = Struct("In", (Field("a", "int"), Field("b", "int")))
    outer = Struct("Out", (Field("in", inner), Field("m", "map[string]string")))
    body = b'{"in":{"a":1},"IN":{"b":2},"m":{"x":"1"},"m":{"y":"2"}}'
    assert decode(outer, parse(body)) == {"in": {"a": 1, "b": 2}, "m": {"x": "1", "y": "2"}}
    assert decode_request(outer, b'{"in":{"a":1}} {"in":{"b":2}}') == {"in": {"a": 1, "b": 2}}


def test_strings_replace_bad_utf8_and_lone_surrogates_per_byte() -> None:
    for read in (parse, slow):
        assert read(b'"a\xe2\x82b"') == "a\ufffd\ufffdb"
        assert read(b'"\\ud800\\u0041\\udc00\\ud83d\\ude00"') == "\ufffdA\ufffd\U0001f600"


def test_minus_zero_is_refused_by_unsigned_fields_only() -> None:
    value = parse(b"-0")
    assert isinstance(value, NegativeZero) and value == 0
    schema = Struct("N", (Field("u", "uint64"), Field("i", "int64")))
    assert decode(schema, parse(b'{"i":-0}')) == {"i": 0}
    with pytest.raises(GoJSONError, match=r"number -0 into"):
        decode(schema, parse(b'{"u":-0}'))


def test_stream_decodes_each_value_before_reading_the_next() -> None:
    schema = Struct("S", (Field("a", "int"),))
    assert decode_request(schema, b'{"a":1} {"a":2}') == {"a": 2}
    assert decode_request(schema, b"  ") == {}
    with pytest.raises(GoJSONError, match=r'^json: unknown field "b"$'):
        decode_request(schema, b'{"b":1} nope')
    with pytest.raises(GoJSONError) as info:
        decode_request(schema, b'{"a":1}  xyz')
    assert str(info.value) == "invalid character 'x' looking for beginning of value at offset 10"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.lists(st.tuples(st.text(max_size=4), inner), max_size=4),
    max_leaves=20,
)


def render(value: object) -> bytes:
    """JSON text for a generated value; lists of pairs stand for objects (duplicates possible)."""
    if isinstance(value, list) and value and all(isinstance(v, tuple) for v in value):
        return b"{" + b",".join(json.dumps(k).encode() + b":" + render(v) for k, v in value) + b"}"
    if isinstance(value, list):
        return b"[" + b",".join(render(v) for v in value) + b"]"
    return json.dumps(value).encode()


@given(json_values)
@settings(max_examples=200, deadline=None)
def test_fast_and_careful_paths_agree(value: object) -> None:
    data = render(value)
    assert to_plain(parse(data)) == to_plain(slow(data))
    assert repr(parse(data)) == repr(slow(data))


def test_own_unmarshalers_get_the_raw_text_as_written() -> None:
    seen: list[str] = []

    def keep(raw: object) -> str:
        seen.append(raw_text(raw))
        return "ok"

    schema = Struct("E", (Field("e", "any", keep),))
    bodies = [b'{"e":[1, 2.50]}', b'{"e":"\\u0061"}', b'{"e": -0 }', b'{"e":{"a":1,"a":2}}', b'{"e":"plain"}']
    for body in bodies:
        unmarshal(schema, body)
        decode_request(schema, body)
    assert seen == [t for t in ["[1, 2.50]", '"\\u0061"', "-0", '{"a":1,"a":2}', '"plain"'] for _ in range(2)]


def _rune_after_string(prefix: bytes, rune_at: int) -> bytes:
    """``prefix`` then ``{"a":"xx…x"é}`` with the ``é`` starting at ``rune_at``."""
    return prefix + b'{"a":"' + b"x" * (rune_at - 7 - len(prefix)) + b'"\xc3\xa9}'


# What nats-server 2.15.1 answered for these bodies: its decoder's buffer ends
# at 64, 128, 256... for a first value, and elsewhere once a value was read.
SECOND_VALUE = b'{"stream_name":"' + b"x" * 100 + b'"} '


@pytest.mark.parametrize(
    "body,message",
    [
        (_rune_after_string(b"", 62), "invalid character 'é' after object key:value pair at offset 64"),
        (_rune_after_string(b"", 63), "invalid character '\\xc3' after object key:value pair at offset 64"),
        (_rune_after_string(b"", 255), "invalid character '\\xc3' after object key:value pair at offset 256"),
        (_rune_after_string(b"", 8191), "invalid character '\\xc3' after object key:value pair at offset 8192"),
        (_rune_after_string(SECOND_VALUE, 127), "invalid character '\\xc3' after object key:value pair at offset 128"),
        (_rune_after_string(SECOND_VALUE, 245), "invalid character '\\xc3' after object key:value pair at offset 246"),
        (_rune_after_string(SECOND_VALUE, 255), "invalid character 'é' after object key:value pair at offset 257"),
        (_rune_after_string(b" " * 70, 127), "invalid character '\\xc3' after object key:value pair at offset 128"),
    ],
)
def test_a_rune_cut_by_the_read_buffer_is_reported_as_its_first_byte(body: bytes, message: str) -> None:
    schema = Struct("S", (Field("stream_name", "string"),))
    with pytest.raises(GoJSONError) as info:
        decode_request(schema, body)
    assert str(info.value) == message
