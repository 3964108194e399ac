"""How nats-server 2.15.1 reads client JSON, on both targets.

nats-server is built with Go's JSON v2 engine behind the v1 API.  What that
means for clients, each point read off the real binary:

* syntax errors use the v2 texts (``invalid escape sequence `\\p` in string``,
  ``invalid character '\\x00' in string``), quote the offending rune whole, and
  -- in ``$JS.API`` replies, which add ``at offset N`` -- count the offset
  just past it;
* arrays and objects nest up to 10,000 deep; one more is ``exceeded max depth``;
* request bodies are a stream of values decoded one at a time, so a decoding
  error in the first comes before a syntax error in the next;
* object members are decoded in document order: duplicates are allowed, the
  last one wins, keys match fields case-insensitively with Unicode simple
  folding (``paſſ`` is ``pass``), and the first type error is reported with
  the path as written (``config.DURABLE_NAME``, ``subjects.0``);
* ``CONNECT`` follows the same rules; a type error closes the connection.
"""

from __future__ import annotations

import json

import pytest

from tests.harness.direct import DirectEnv
from tests.harness.env import env_fixture
from tests.harness.raw import record
from tests.harness.targets import Settings

env = env_fixture(DirectEnv)

INFO = "$JS.API.STREAM.INFO.S"
UNPIN = "$JS.API.CONSUMER.UNPIN.S.C"
MSG_GET = "$JS.API.STREAM.MSG.GET.S"


def deep_array(levels: int) -> bytes:
    return b"[" * levels + b"]" * levels


def deep_object(levels: int, inner: bytes = b"1") -> bytes:
    return b'{"a":' * levels + inner + b"}" * levels


async def started(env: DirectEnv) -> DirectEnv:
    await env.start()
    await env.publish("s.a", b"hello")
    return env


async def description(env: DirectEnv, subject: str, body: bytes) -> str:
    """The error description of a ``$JS.API`` reply ("" when the request succeeded)."""
    assert env.wire is not None
    _, frame = await env.wire.request(subject, body)
    reply = json.loads(frame.payload)
    return str(reply.get("error", {}).get("description", ""))


async def status(env: DirectEnv, subject: str, body: bytes) -> str | None:
    assert env.wire is not None
    _, frame = await env.wire.request(subject, body)
    return frame.status


SYNTAX = [
    (b'{"subjects_f\\pilter":"x"}', "invalid escape sequence `\\p` in string at offset 14"),
    (b'{"x\\p":1}', "invalid escape sequence `\\p` in string at offset 5"),
    (b'{"a\\u12":1}', 'invalid escape sequence `\\u12":` in string at offset 9'),
    (b'{"a":"\\ "}', 'invalid escape sequence "\\\\ " in string at offset 8'),
    (b'{"a":"\\\xc3\xa9"}', 'invalid escape sequence "\\\\\\xc3" in string at offset 8'),
    (b'{"a":"\\u00\xc3\xa9"}', "invalid escape sequence `\\u00\u00e9` in string at offset 12"),
    (b'{"a\x00":1}', "invalid character '\\x00' in string at offset 4"),
    (b"{\xc3\xa9}", "invalid character '\u00e9' looking for beginning of object key string at offset 3"),
    (b"{\xff}", "invalid character '\\xff' looking for beginning of object key string at offset 2"),
    (b"{} \xef\xbb\xbf", "invalid character '\\ufeff' looking for beginning of value at offset 6"),
    (b'{"a":tru}', "invalid character '}' in literal true (expecting 'e') at offset 9"),
    (b'{"a":1.e5}', "invalid character 'e' in numeric literal at offset 8"),
    (b'{"a":1]', "invalid character ']' after object key:value pair at offset 7"),
    (b'{"subjects_filter":"\xff\xc3"', "unexpected EOF"),
    (b'{"a":1,', "unexpected EOF"),
    (deep_array(10_001), "exceeded max depth at offset 10001"),
    (deep_object(10_001), "exceeded max depth at offset 50001"),
    (deep_object(9_999, b"[[1]]"), "exceeded max depth at offset 49997"),
    (b"{} " + b"[" * 10_001, "exceeded max depth at offset 10004"),
]


@pytest.mark.parametrize("body,text", SYNTAX, ids=range(len(SYNTAX)))
async def test_syntax_errors_name_the_offset_past_the_offending_text(env: DirectEnv, body: bytes, text: str) -> None:
    await started(env)
    assert await description(env, INFO, body) == "invalid JSON: " + text


DECODING = [
    (INFO, deep_array(10_000), "json: cannot unmarshal array into Go value of type server.JSApiStreamInfoRequest"),
    (INFO, deep_object(10_000), 'json: unknown field "a"'),
    (INFO, b'{"a":1} x', 'json: unknown field "a"'),
    (INFO, b"{} tru", "unexpected EOF"),
    (
        INFO,
        b'{"subjects_filter":"x"} {"offset":"y"}',
        "json: cannot unmarshal string into Go struct field JSApiStreamInfoRequest.offset of type int",
    ),
    (
        INFO,
        b'{"subjects_filter":"x","SUBJECTS_FILTER":5,"subjects_filter":"y"}',
        "json: cannot unmarshal number into Go struct field JSApiStreamInfoRequest.SUBJECTS_FILTER of type string",
    ),
    (
        INFO,
        b'{"subjects_filter":5,"deleted_details":"x"}',
        "json: cannot unmarshal number into Go struct field JSApiStreamInfoRequest.subjects_filter of type string",
    ),
    (
        INFO,
        '{"ſubjects_filter":5}'.encode(),
        "json: cannot unmarshal number into Go struct field JSApiStreamInfoRequest.ſubjects_filter of type string",
    ),
    (INFO, b'{"subjects-filter":5}', 'json: unknown field "subjects-filter"'),
    (INFO, b'{"\\u0000":1}', 'json: unknown field "\\x00"'),
    (INFO, b'{"\\u00ad\\ud800":1}', 'json: unknown field "\\u00ad\ufffd"'),
    (
        MSG_GET,
        b'{"seq":1e400}',
        "json: cannot unmarshal number 1e400 into Go struct field JSApiMsgGetRequest.seq of type uint64",
    ),
    (
        MSG_GET,
        b'{"seq":"1","seq":1}',
        "json: cannot unmarshal string into Go struct field JSApiMsgGetRequest.seq of type uint64",
    ),
    (
        MSG_GET,
        b'{"seq":-0}',
        "json: cannot unmarshal number -0 into Go struct field JSApiMsgGetRequest.seq of type uint64",
    ),
    (
        MSG_GET,
        b'{"multi_last":["a",1]}',
        "json: cannot unmarshal number into JSApiMsgGetRequest.multi_last.1 of type string",
    ),
    (
        "$JS.API.STREAM.CREATE.T",
        b'{"name":"T","sources":[{},{"NAME":1}]}',
        "json: cannot unmarshal number into Go struct field StreamConfigRequest.sources.1.NAME of type string",
    ),
    (
        "$JS.API.STREAM.CREATE.T",
        b'{"name":"T","sources":{}}',
        "json: cannot unmarshal object into Go struct field StreamConfigRequest.sources of type []*server.StreamSource",
    ),
    (
        "$JS.API.STREAM.CREATE.T",
        b'{"name":"T","metadata":{"a/b~c":5}}',
        "json: cannot unmarshal number into Go struct field StreamConfigRequest.metadata.a~1b~0c of type string",
    ),
    (
        "$JS.API.CONSUMER.CREATE.S",
        b'{"stream_name":"S","CONFIG":{"Durable_Name":5}}',
        "json: cannot unmarshal number into Go struct field CreateConsumerRequest.CONFIG.Durable_Name of type string",
    ),
    (
        "$JS.API.CONSUMER.CREATE.S",
        b'{"stream_name":"S","config":{"backoff":[1,"x"]}}',
        "json: cannot unmarshal string into CreateConsumerRequest.config.backoff.1 of type time.Duration",
    ),
    ("$JS.API.CONSUMER.CREATE.S", b'{"action":[1, 2.50]}', "unknown consumer action: [1, 2.50]"),
    ("$JS.API.CONSUMER.CREATE.S", b'{"action":1e400}', "unknown consumer action: 1e400"),
    ("$JS.API.STREAM.CREATE.T", b'{"name":"T","retention":"\\u006cimits"}', 'can not unmarshal "\\"\\\\u006cimits\\""'),
    (UNPIN, b'{"group":"g"}x', "invalid character 'x' after top-level value"),
    (UNPIN, deep_array(10_001), "exceeded max depth"),
    (UNPIN, b'{"a\\p":1}', "invalid escape sequence `\\p` in string"),
    (UNPIN, b"", "unexpected end of JSON input"),
]


@pytest.mark.parametrize("subject,body,text", DECODING, ids=range(len(DECODING)))
async def test_decoding_follows_go(env: DirectEnv, subject: str, body: bytes, text: str) -> None:
    await started(env)
    await env.add_consumer(priority_policy="pinned_client", priority_groups=["g"])
    assert await description(env, subject, body) == "invalid JSON: " + text


async def test_a_later_duplicate_wins_and_keys_fold(env: DirectEnv) -> None:
    await started(env)
    body = '{"SUBJECTS_FILTER":"nope","ſubjects_filter":"s.*","deleted_details":true}'.encode()
    assert await description(env, INFO, body) == ""


@pytest.mark.parametrize(
    "body,expected",
    [
        (deep_array(600), "408 Malformed Request"),
        (deep_object(600), "408 Empty Request"),
        (b'{"seq":1,"a":' + deep_array(10_001) + b"}", "408 Malformed Request"),
        (b'{"seq":"x","seq":1}', "408 Malformed Request"),
        (b'{"seq":1,"a":' + deep_array(9_999) + b"}", None),
        (b'{"SEQ":1,"seq":1,"zzz":1}', None),
    ],
    ids=["deep-array", "deep-object", "too-deep-member", "first-error", "deep-member", "duplicates"],
)
async def test_direct_get_bodies(env: DirectEnv, body: bytes, expected: str | None) -> None:
    await started(env)
    _, frames = await env.get(body)
    assert len(frames) == 1
    assert (frames[0].split(b"\r\n")[1][len(b"NATS/1.0 ") :].decode() or None) == expected


@pytest.mark.parametrize(
    "body,expected",
    [
        (b'{"batch":1,"no_wait":true,"x":' + deep_array(10_001) + b"}", "400 Bad Request - exceeded max depth"),
        (b'{"batch":1,"no_wait":true,"a\\p":1}', "400 Bad Request - invalid escape sequence `\\p` in string"),
        (b"{\xff}", "400 Bad Request - invalid character '\\xff' looking for beginning of object key string"),
        (
            b'{"batch":1,"no_wait":true,"batch":"x"}',
            "400 Bad Request - json: cannot unmarshal string into Go struct field .batch of type int",
        ),
    ],
    ids=["too-deep", "escape", "invalid-byte", "first-error"],
)
async def test_pull_request_bodies(env: DirectEnv, body: bytes, expected: str) -> None:
    await env.start()
    await env.add_consumer()
    assert await status(env, "$JS.API.CONSUMER.MSG.NEXT.S.C", body) == expected


async def test_a_deep_pull_request_body_is_served(env: DirectEnv) -> None:
    await started(env)
    await env.add_consumer()
    body = b'{"batch":1,"no_wait":true,"x":' + deep_array(600) + b"}"
    assert env.wire is not None
    _, frame = await env.wire.request("$JS.API.CONSUMER.MSG.NEXT.S.C", body)
    assert (frame.status, frame.payload) == (None, b"hello")


@pytest.mark.parametrize(
    "connect,answer",
    [
        (b'{"verbose":true,"x":' + deep_object(600) + b"}", b"+OK\r\nPONG\r\n"),
        (b'{"verbose":true,"verbose":false}', b"PONG\r\n"),
        (b'{"VERBOSE":true}', b"+OK\r\nPONG\r\n"),
        (b'{"verbose":true,"x":' + deep_array(700) + b"}", b"+OK\r\nPONG\r\n"),
        (b'{"verbose":"x"}', None),
        (b'{"verbose":true} x', None),
        (b'{"verbose":true,"a\\p":1}', None),
        (b'{"verbose":true,"protocol":1,"protocol":"1"}', None),
    ],
    ids=["deep", "duplicate", "folded", "deep-array", "type-error", "trailing", "escape", "later-type-error"],
)
async def test_connect_json(target, connect: bytes, answer: bytes | None) -> None:
    transcript = await record(target.host, target.port, [b"CONNECT " + connect + b"\r\nPING\r\n"])
    if answer is None:
        assert transcript.closed
        assert transcript.without_greeting() == b""
    else:
        assert (transcript.without_greeting(), transcript.closed) == (answer, False)


USER = Settings(user="a", password="b")


@pytest.mark.parametrize(
    "connect,answer",
    [
        (b'{"verbose":true,"user":"a","pass":5}', None),
        (b'{"verbose":true,"user":5,"pass":"b"}', None),
        (b'{"verbose":true,"user":"a","pass":"b","pass":5}', None),
        (b'{"verbose":true,"user":"a","pass":null}', b"-ERR 'Authorization Violation'\r\n"),
        (b'{"verbose":true,"user":"a","pass":"x","PASS":"b"}', b"+OK\r\nPONG\r\n"),
        (b'{"verbose":true,"user":"a","pass":"b","PASS":"x"}', b"-ERR 'Authorization Violation'\r\n"),
        ('{"verbose":true,"user":"a","paſſ":"b"}'.encode(), b"+OK\r\nPONG\r\n"),
        (b'{"verbose":true,"USER":"a","Pass":"b"}', b"+OK\r\nPONG\r\n"),
        (b'{"verbose":true,"user":"a","pass":"b\\ud800"}', b"-ERR 'Authorization Violation'\r\n"),
    ],
    ids=[
        "pass-number",
        "user-number",
        "later-pass-number",
        "pass-null",
        "dup-last-wins",
        "dup-last-wrong",
        "long-s",
        "folded",
        "surrogate",
    ],
)
async def test_connect_credentials_json(make_target, connect: bytes, answer: bytes | None) -> None:
    target = await make_target(USER)
    transcript = await record(target.host, target.port, [b"CONNECT " + connect + b"\r\nPING\r\n"])
    if answer is None:
        assert transcript.closed
        assert transcript.without_greeting() == b""
    else:
        assert transcript.without_greeting() == answer
        assert transcript.closed == answer.startswith(b"-ERR")
