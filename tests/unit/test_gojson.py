"""Go-compatible JSON: syntax error texts, typed decoding, and output escaping."""

from __future__ import annotations

import pytest

from fakejs.gocompat.gojson import Field, GoJSONError, Struct, decode, decode_request, dumps, loads

SYNTAX = [
    (b"", "unexpected end of JSON input"),
    (b"   ", "unexpected end of JSON input"),
    (b"{", "unexpected end of JSON input"),
    (b'{"a":', "unexpected end of JSON input"),
    (b"x", "invalid character 'x' looking for beginning of value"),
    (b"{x", "invalid character 'x' looking for beginning of object key string"),
    (b'{"a" 1}', "invalid character '1' after object key"),
    (b'{"a":1 x}', "invalid character 'x' after object key:value pair"),
    (b"[1 x]", "invalid character 'x' after array element"),
    (b"{} x", "invalid character 'x' after top-level value"),
    (b"01", "invalid character '1' after top-level value"),
    (b'"\x01"', "invalid character '\\x01' in string"),
    (b'"\\q"', "invalid escape sequence `\\q` in string"),
    (b'"\\u12x4"', "invalid escape sequence `\\u12x4` in string"),
    (b"-x", "invalid character 'x' in numeric literal"),
    (b"1.x", "invalid character 'x' in numeric literal"),
    (b"1ex", "invalid character 'x' in numeric literal"),
    (b"tru", "unexpected end of JSON input"),
    (b"trx", "invalid character 'x' in literal true (expecting 'u')"),
    (b"nul1", "invalid character '1' in literal null (expecting 'l')"),
    (b"NaN", "invalid character 'N' looking for beginning of value"),
    (b"Infinity", "invalid character 'I' looking for beginning of value"),
    (b"{'a':1}", "invalid character '\\'' looking for beginning of object key string"),
    (b"\xef\xbb\xbf{}", "invalid character '\\ufeff' looking for beginning of value"),
    (b"[1,]", "invalid character ']' looking for beginning of value"),
    (b'{"a":1,}', "invalid character '}' looking for beginning of object key string"),
]


@pytest.mark.parametrize("data,message", SYNTAX)
def test_syntax_errors_read_like_go(data: bytes, message: str) -> None:
    with pytest.raises(GoJSONError) as info:
        loads(data)
    assert str(info.value) == message


def test_valid_json() -> None:
    assert loads(b' {"a":[1,2.5,"x",true,null]} ') == {"a": [1, 2.5, "x", True, None]}
    assert loads(b'"\xff"') == "\ufffd"  # Go replaces invalid UTF-8 in strings


INNER = Struct("Inner", (Field("name", "string"),))
OUTER = Struct(
    "Outer",
    (
        Field("flag", "bool"),
        Field("count", "int64"),
        Field("small", "int32"),
        Field("size", "uint64"),
        Field("tags", "[]string"),
        Field("inner", INNER),
        Field("meta", "map[string]string"),
    ),
)


def test_decode_matches_keys_case_insensitively_and_ignores_unknown() -> None:
    assert decode(OUTER, loads(b'{"FLAG":true,"Count":3,"nope":1}')) == {"flag": True, "count": 3}


def test_decode_null_leaves_fields_alone() -> None:
    assert decode(OUTER, loads(b'{"flag":null}')) == {}
    assert decode(OUTER, loads(b"null")) == {}


@pytest.mark.parametrize(
    "data,message",
    [
        (b'{"flag":"yes"}', "json: cannot unmarshal string into Go struct field Outer.flag of type bool"),
        (b'{"count":1.5}', "json: cannot unmarshal number 1.5 into Go struct field Outer.count of type int64"),
        (b'{"count":1e3}', "json: cannot unmarshal number 1e3 into Go struct field Outer.count of type int64"),
        (
            b'{"small":4294967296}',
            "json: cannot unmarshal number 4294967296 into Go struct field Outer.small of type int32",
        ),
        (b'{"size":-1}', "json: cannot unmarshal number -1 into Go struct field Outer.size of type uint64"),
        (b'{"tags":"a"}', "json: cannot unmarshal string into Go struct field Outer.tags of type []string"),
        (b'{"tags":[1]}', "json: cannot unmarshal number into Outer.tags.0 of type string"),
        (b'{"inner":{"name":5}}', "json: cannot unmarshal number into Go struct field Outer.inner.name of type string"),
        (b'{"inner":[]}', "json: cannot unmarshal array into Go struct field Outer.inner of type server.Inner"),
        (b"[]", "json: cannot unmarshal array into Go value of type server.Outer"),
        (b'{"count":"1","flag":"x"}', "json: cannot unmarshal string into Go struct field Outer.count of type int64"),
    ],
)
def test_decode_type_errors_read_like_go(data: bytes, message: str) -> None:
    with pytest.raises(GoJSONError) as info:
        decode(OUTER, loads(data))
    assert str(info.value) == message


def test_dumps_is_compact_and_html_safe_like_go() -> None:
    assert dumps({"a": "<b>&</b>", "n": [1, 2]}) == '{"a":"\\u003cb\\u003e\\u0026\\u003c/b\\u003e","n":[1,2]}'
    assert dumps({"u": "é\u2028"}) == '{"u":"é\\u2028"}'


# What nats-server 2.15.1 answered (err 10025 "invalid JSON: ...") for these bodies.
REQUEST = Struct(
    "StreamConfigRequest", (Field("name", "string"), Field("max_msgs", "int64"), Field("max_age", "time.Duration"))
)


@pytest.mark.parametrize(
    "body,message",
    [
        (
            b'{"name":"S3","max_msgs":"x"}',
            "json: cannot unmarshal string into Go struct field StreamConfigRequest.max_msgs of type int64",
        ),
        (b'{"name":"S3","foo":1}', 'json: unknown field "foo"'),
        (b'{"name":"S3"', "unexpected EOF"),
        (b"{bad", "invalid character 'b' looking for beginning of object key string at offset 2"),
        (b"5", "json: cannot unmarshal number into Go value of type server.StreamConfigRequest"),
        (b'{"name":"S3"} x', "invalid character 'x' looking for beginning of value at offset 15"),
        (
            b'{"name":"S3","max_age":1.5}',
            "json: cannot unmarshal number 1.5 into Go struct field StreamConfigRequest.max_age of type time.Duration",
        ),
        (
            b'{"name":"S3","max_msgs":1e3}',
            "json: cannot unmarshal number 1e3 into Go struct field StreamConfigRequest.max_msgs of type int64",
        ),
    ],
)
def test_request_errors_as_nats_server_reports_them(body: bytes, message: str) -> None:
    with pytest.raises(GoJSONError) as info:
        decode_request(REQUEST, body)
    assert str(info.value) == message


def test_request_decodes_every_value_in_turn() -> None:
    assert decode_request(REQUEST, b'{"name":"X"} {"name":"S3"}') == {"name": "S3"}
    assert decode_request(REQUEST, b"") == {}
    assert decode_request(REQUEST, b"  \r\n") == {}
    assert decode_request(REQUEST, b'{"NAME":"a"}') == {"name": "a"}


def test_lone_surrogates_become_replacement_characters() -> None:
    assert loads(b'"a\\ud800b"') == "a\ufffdb"
