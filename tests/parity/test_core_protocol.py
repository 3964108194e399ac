"""The core protocol, byte for byte, on both targets.

Each case is a raw byte script and the exact bytes nats-server 2.15.1
answers (after its greeting INFO), and whether it then hangs up.  The same
expectations must hold for fakejs and for the real server.
"""

from __future__ import annotations

import json

import pytest

from tests.harness.raw import RawClient, record
from tests.harness.targets import Settings, Target
from tests.harness.wait import WAIT

QUIET = b'CONNECT {"verbose":false,"pedantic":false}\r\n'
HDRS = b'CONNECT {"verbose":false,"pedantic":false,"headers":true}\r\n'

CASES = [
    # --- CONNECT -------------------------------------------------------------
    ("connect-empty-is-verbose", [b"CONNECT {}\r\n"], b"+OK\r\n", False),
    ("connect-quiet", [QUIET], b"", False),
    ("connect-keys-case-insensitive", [b'CONNECT {"VERBOSE":false}\r\n'], b"", False),
    ("connect-unknown-field", [b'CONNECT {"verbose":false,"foo":1}\r\n'], b"", False),
    ("connect-null-keeps-default", [b'CONNECT {"verbose":null}\r\n'], b"+OK\r\n", False),
    ("connect-no-space", [b'CONNECT{"verbose":false}\r\n'], b"", False),
    ("connect-bad-json", [b"CONNECT {\r\n"], b"", True),
    ("connect-trailing-garbage", [b'CONNECT {"verbose":false} x\r\n'], b"", True),
    ("connect-wrong-type", [b'CONNECT {"verbose":"x"}\r\n'], b"", True),
    ("connect-float-protocol", [b'CONNECT {"verbose":false,"protocol":1.5}\r\n'], b"", True),
    ("connect-name-not-string", [b'CONNECT {"verbose":false,"name":5}\r\n'], b"", True),
    (
        "connect-protocol-2",
        [b'CONNECT {"verbose":false,"protocol":2}\r\n'],
        b"-ERR 'invalid client protocol'\r\n",
        True,
    ),
    (
        "connect-protocol-negative",
        [b'CONNECT {"verbose":false,"protocol":-1}\r\n'],
        b"-ERR 'invalid client protocol'\r\n",
        True,
    ),
    (
        "connect-no-responders-without-headers",
        [b'CONNECT {"verbose":false,"no_responders":true}\r\n'],
        b"-ERR 'no responders requires headers support'\r\n",
        True,
    ),
    (
        "connect-account-field",
        [b'CONNECT {"verbose":false,"account":"A"}\r\n'],
        b"-ERR 'Authorization Violation'\r\n",
        True,
    ),
    ("connect-verbose-twice", [b"CONNECT {}\r\nCONNECT {}\r\n"], b"+OK\r\n+OK\r\n", False),
    # --- unknown and malformed operations --------------------------------------
    ("unknown-op", [b"FOO\r\n"], b"-ERR 'Unknown Protocol Operation'\r\n", True),
    ("msg-from-client", [b"MSG a 1 0\r\n"], b"-ERR 'Unknown Protocol Operation'\r\n", True),
    ("route-op-from-client", [b"RS+ a\r\n"], b"-ERR 'Unknown Protocol Operation'\r\n", True),
    ("unsub-without-space", [b"UNSUB\r\n"], b"-ERR 'Unknown Protocol Operation'\r\n", True),
    ("pub-missing-size", [b"PUB foo\r\n"], b"", True),
    ("pub-bad-size", [b"PUB foo x\r\n"], b"", True),
    ("pub-negative-size", [b"PUB a -1\r\n"], b"", True),
    ("pub-too-many-args", [b"PUB a b c 1\r\n"], b"", True),
    ("pub-payload-too-long", [b"PUB foo 3\r\nabcd\r\n"], b"-ERR 'Unknown Protocol Operation'\r\n", True),
    ("sub-missing-sid", [b"SUB foo\r\n"], b"", True),
    ("unsub-too-many-args", [b"UNSUB 1 2 3\r\n"], b"", True),
    ("hpub-without-headers", [b"HPUB a 1 1\r\nx\r\n"], b"", True),
    ("client-err", [b"-ERR x\r\n"], b"", True),
    ("client-info-ignored", [b"INFO {}\r\n"], b"", False),
    ("client-info-bad", [b"INFO x\r\n"], b"", True),
    ("client-ok-ignored", [b"+OK\r\n"], b"", False),
    ("ping-with-junk", [QUIET, b"PINGxx\r\n"], b"PONG\r\n", False),
    ("lowercase-ops", [b'connect {"verbose":false}\r\nsub a 1\r\npub a 1\r\nx\r\n'], b"MSG a 1 1\r\nx\r\n", False),
    ("hmsg-from-client", [b"HMSG a 1 0\r\n\r\n"], b"+OK\r\n", False),
    # --- PUB / SUB ---------------------------------------------------------------
    ("pub-before-connect-verbose", [b"PUB a 2\r\nab\r\n"], b"+OK\r\n", False),
    ("sub-then-pub", [b"SUB a 1\r\nPUB a 1\r\nx\r\n"], b"+OK\r\n+OK\r\nMSG a 1 1\r\nx\r\n", False),
    ("pub-with-reply", [QUIET, b"SUB a 1\r\nPUB a r.1 2\r\nhi\r\n"], b"MSG a 1 r.1 2\r\nhi\r\n", False),
    ("payload-with-crlf", [QUIET, b"SUB a 1\r\nPUB a 4\r\n\r\n\r\n\r\n"], b"MSG a 1 4\r\n\r\n\r\n\r\n", False),
    ("tabs-as-separators", [QUIET, b"SUB\ta\t1\r\nPUB\ta\t1\r\nx\r\n"], b"MSG a 1 1\r\nx\r\n", False),
    ("duplicate-sid-ignored", [QUIET, b"SUB a 1\r\nSUB a 1\r\nPUB a 1\r\nx\r\n"], b"MSG a 1 1\r\nx\r\n", False),
    ("wildcard-star", [QUIET, b"SUB a.* 1\r\nPUB a.b 0\r\n\r\nPUB a.b.c 0\r\n\r\n"], b"MSG a.b 1 0\r\n\r\n", False),
    (
        "wildcard-gt",
        [QUIET, b"SUB a.> 1\r\nPUB a 0\r\n\r\nPUB a.b 0\r\n\r\nPUB a.b.c 0\r\n\r\n"],
        b"MSG a.b 1 0\r\n\r\nMSG a.b.c 1 0\r\n\r\n",
        False,
    ),
    (
        "publish-to-wildcard-subject",
        [QUIET, b"SUB a.b 1\r\nSUB a.* 2\r\nPUB a.* 0\r\n\r\n"],
        b"MSG a.* 2 0\r\n\r\n",
        False,
    ),
    (
        "invalid-sub-subjects",
        [b"SUB >.a 1\r\nSUB a. 2\r\nSUB * 3\r\n"],
        b"-ERR 'Invalid Subject'\r\n-ERR 'Invalid Subject'\r\n+OK\r\n",
        False,
    ),
    ("queue-names-not-validated", [b"SUB a q.x 4\r\nSUB a q* 5\r\n"], b"+OK\r\n+OK\r\n", False),
    (
        "queue-group-one-member",
        [QUIET, b"SUB a q 1\r\nSUB a q 2\r\nUNSUB 1\r\nPUB a 1\r\nx\r\n"],
        b"MSG a 2 1\r\nx\r\n",
        False,
    ),
    ("echo-off", [b'CONNECT {"verbose":false,"echo":false}\r\nSUB a 1\r\nPUB a 1\r\nx\r\n'], b"", False),
    (
        "unsub-max",
        [b"SUB a 1\r\nUNSUB 1 2\r\nPUB a 0\r\n\r\nPUB a 0\r\n\r\nPUB a 0\r\n\r\n"],
        b"+OK\r\n+OK\r\n+OK\r\nMSG a 1 0\r\n\r\n+OK\r\nMSG a 1 0\r\n\r\n+OK\r\n",
        False,
    ),
    ("unsub-bad-max-removes", [QUIET, b"SUB a 1\r\nUNSUB 1 x\r\nPUB a 1\r\nx\r\n"], b"", False),
    ("unsub-unknown-sid", [b"UNSUB 99\r\n"], b"+OK\r\n", False),
    ("sub-before-connect-kept", [b"SUB a q 1\r\n", QUIET, b"PUB a 0\r\n\r\n"], b"+OK\r\nMSG a 1 0\r\n\r\n", False),
    (
        "second-connect-drops-subs",
        [QUIET, b"SUB a 1\r\nSUB b q 2\r\n", QUIET, b"PUB a 0\r\n\r\nPUB b 0\r\n\r\n"],
        b"",
        False,
    ),
    (
        "second-connect-frees-sids",
        [QUIET, b"SUB a 1\r\n", QUIET, b"SUB b 1\r\nPUB a 0\r\n\r\nPUB b 0\r\n\r\n"],
        b"MSG b 1 0\r\n\r\n",
        False,
    ),
    # --- headers ---------------------------------------------------------------
    (
        "hpub-hmsg",
        [HDRS, b"SUB a 1\r\nHPUB a 12 14\r\nNATS/1.0\r\n\r\nhi\r\n"],
        b"HMSG a 1 12 14\r\nNATS/1.0\r\n\r\nhi\r\n",
        False,
    ),
    (
        "hpub-with-reply",
        [HDRS, b"SUB a 1\r\nHPUB a r 12 12\r\nNATS/1.0\r\n\r\n\r\n"],
        b"HMSG a 1 r 12 12\r\nNATS/1.0\r\n\r\n\r\n",
        False,
    ),
    ("hpub-header-larger-than-total", [HDRS, b"HPUB a 3 2\r\n"], b"", True),
    (
        "headers-stripped-for-non-header-subscriber",
        [HDRS, b"HPUB a 12 14\r\nNATS/1.0\r\n\r\nhi\r\n"],
        b"",
        False,
    ),
    # --- reserved subjects ---------------------------------------------------------
    (
        "reserved-subjects",
        [QUIET, b"PUB $NRG.x 0\r\n\r\nPUB a _R_.x 0\r\n\r\nPUB a $JS.ACK.x 0\r\n\r\nPUB _GR_.x 0\r\n\r\n"],
        b"-ERR 'Permissions Violation for Publish to \"$NRG.x\"'\r\n"
        b"-ERR 'Permissions Violation for Publish with Reply of \"_R_.x\"'\r\n"
        b"-ERR 'Permissions Violation for Publish with Reply of \"$JS.ACK.x\"'\r\n"
        b"-ERR 'Permissions Violation for Publish to \"_GR_.x\"'\r\n",
        False,
    ),
    # --- pedantic ----------------------------------------------------------------
    (
        "pedantic-invalid-publish-subject",
        [b'CONNECT {"verbose":false,"pedantic":true}\r\nSUB a.* 1\r\nPUB a.* 1\r\nx\r\n'],
        b"-ERR 'Invalid Publish Subject'\r\nMSG a.* 1 1\r\nx\r\n",
        False,
    ),
    ("pedantic-is-default", [b"PUB a..b 0\r\n\r\n"], b"-ERR 'Invalid Publish Subject'\r\n+OK\r\n", False),
    # --- no responders -------------------------------------------------------------
    (
        "no-responders",
        [b'CONNECT {"verbose":false,"headers":true,"no_responders":true}\r\nSUB r.> 5\r\nPUB nobody r.1 0\r\n\r\n'],
        b"HMSG r.1 5 38 38\r\nNATS/1.0 503\r\nNats-Subject: nobody\r\n\r\n\r\n",
        False,
    ),
    (
        "no-responders-not-asked",
        [HDRS, b"SUB r.> 5\r\nPUB nobody r.1 0\r\n\r\n"],
        b"",
        False,
    ),
    (
        "no-responders-needs-own-reply-sub",
        [b'CONNECT {"verbose":false,"headers":true,"no_responders":true}\r\nPUB nobody r.1 0\r\n\r\n'],
        b"",
        False,
    ),
    # --- limits --------------------------------------------------------------------
    ("max-payload", [QUIET, b"PUB a 1048577\r\n"], b"-ERR 'Maximum Payload Violation'\r\n", True),
    ("max-control-line", [QUIET, b"SUB " + b"a" * 4100 + b" 1\r\n"], b"-ERR 'maximum control line exceeded'\r\n", True),
    ("max-control-line-partial", [QUIET, b"PUB " + b"a" * 5000], b"-ERR 'maximum control line exceeded'\r\n", True),
]


@pytest.mark.parametrize("script,expected,closed", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
async def test_raw_exchange(target: Target, script: list[bytes], expected: bytes, closed: bool) -> None:
    transcript = await record(target.host, target.port, script, timeout=2.0)
    assert transcript.without_greeting() == expected
    assert transcript.closed == closed


async def test_byte_by_byte_input_gives_the_same_answer(target: Target) -> None:
    script = HDRS + b"SUB a 1\r\nHPUB a r 12 14\r\nNATS/1.0\r\n\r\nhi\r\nPUB a 2\r\nyo\r\n"
    transcript = await record(target.host, target.port, [bytes([b]) for b in script], separate_writes=True)
    assert transcript.without_greeting() == b"HMSG a 1 r 12 14\r\nNATS/1.0\r\n\r\nhi\r\nMSG a 1 2\r\nyo\r\n"


async def test_greeting_info(target: Target) -> None:
    client = await RawClient.connect(target.host, target.port)
    try:
        line = await client.read_until(b"\r\n")
    finally:
        await client.close()
    assert line.startswith(b"INFO {") and line.endswith(b"} \r\n")
    info = json.loads(line[5:-3])
    assert info["version"] == "2.15.1"
    assert info["proto"] == 1
    assert info["api_lvl"] == 5
    assert info["headers"] is True
    assert info["max_payload"] == 1048576
    assert info["port"] == target.port
    assert info["host"] == "127.0.0.1"
    assert info["client_ip"] == "127.0.0.1"
    assert isinstance(info["client_id"], int) and info["client_id"] > 0
    assert len(info["server_id"]) == 56 and info["server_id"].startswith("N")
    assert "auth_required" not in info and "connect_info" not in info
    if target.is_fake:
        assert info["fakejs"]
        assert info["server_name"].startswith("fakejs")


async def test_connect_info_after_first_pong(target: Target) -> None:
    """Protocol-1 clients get a second INFO (connect_info) after their first PONG, once."""
    script = [b'CONNECT {"verbose":false,"protocol":1}\r\nPING\r\n', b"PING\r\n"]
    transcript = await record(target.host, target.port, script)
    body = transcript.without_greeting()
    assert body.startswith(b"PONG\r\nINFO {")
    assert body.endswith(b" \r\nPONG\r\n")
    infos = transcript.infos()
    assert len(infos) == 2
    second = infos[1]
    assert second["connect_info"] is True
    assert second["remote_account"] == "$G"
    assert second["client_id"] == infos[0]["client_id"]


async def test_protocol_zero_gets_no_second_info(target: Target) -> None:
    transcript = await record(target.host, target.port, [b'CONNECT {"verbose":false}\r\nPING\r\n'])
    assert transcript.without_greeting() == b"PONG\r\n"


async def test_max_payload_setting(make_target) -> None:
    target = await make_target(Settings(max_payload=8))
    transcript = await record(target.host, target.port, [QUIET, b"PUB a 8\r\n12345678\r\nPUB a 9\r\n"])
    assert transcript.infos()[0]["max_payload"] == 8
    assert transcript.without_greeting() == b"-ERR 'Maximum Payload Violation'\r\n"
    assert transcript.closed


async def test_other_clients_unaffected_by_a_violation(target: Target) -> None:
    good = await RawClient.connect(target.host, target.port)
    await good.read_until(b"\r\n")
    await good.send(QUIET + b"SUB a 1\r\nPING\r\n")
    await good.read_until(b"PONG\r\n")
    bad = await record(target.host, target.port, [b"GARBAGE\r\n"])
    assert bad.closed
    await record(target.host, target.port, [QUIET, b"PUB a 2\r\nok\r\n"])
    received = await good.read_until(b"ok\r\n", timeout=WAIT)
    await good.close()
    assert received.endswith(b"MSG a 1 2\r\nok\r\n")
