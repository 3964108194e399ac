"""Users, nkeys, no_auth_user and permissions, from one ``authorization`` block, on both targets.

The real nats-server reads the block from its configuration file; fakejs
gets the ServerOptions the same text maps onto (:func:`configure`).
"""

from __future__ import annotations

import asyncio
import base64
import json

import bcrypt
import nats
import nkeys
import pytest

from fakejs import ServerOptions
from tests.harness.configured import Start, configure, configured_fixture
from tests.harness.raw import RawClient, record
from tests.harness.wait import WAIT, eventually

AUTH_VIOLATION = b"-ERR 'Authorization Violation'\r\n"
HASH = bcrypt.hashpw(b"b-secret", bcrypt.gensalt(rounds=4)).decode()
SEED = nkeys.encode_seed(bytes([5]) * 32, nkeys.PREFIX_BYTE_USER).decode()
NKEY = nkeys.from_seed(bytearray(SEED.encode())).public_key.decode()
OTHER_SEED = nkeys.encode_seed(bytes([6]) * 32, nkeys.PREFIX_BYTE_USER).decode()


server = configured_fixture()


USERS = f"""
authorization {{
  users [
    {{ user: a, password: a-secret }}
    {{ user: b, password: "{HASH}" }}
    {{ nkey: {NKEY} }}
  ]
}}
"""


@pytest.mark.parametrize(
    "connect,accepted",
    [
        (b'{"verbose":false,"user":"a","pass":"a-secret"}', True),
        (b'{"verbose":false,"user":"a","pass":"wrong"}', False),
        (b'{"verbose":false,"user":"b","pass":"b-secret"}', True),
        (b'{"verbose":false,"user":"b","pass":"' + HASH.encode() + b'"}', False),
        (b'{"verbose":false,"user":"c","pass":"a-secret"}', False),
        (b'{"verbose":false}', False),
        (b'{"verbose":false,"nkey":"' + NKEY.encode() + b'"}', False),
        (b'{"verbose":false,"nkey":"' + NKEY.encode() + b'","sig":"AAAA"}', False),
    ],
    ids=["plain", "plain-wrong", "bcrypt", "bcrypt-hash-as-password", "unknown", "none", "nkey-no-sig", "nkey-bad-sig"],
)
async def test_users_log_in(server: Start, connect: bytes, accepted: bool) -> None:
    target = await server(USERS)
    transcript = await record(target.host, target.port, [b"CONNECT " + connect + b"\r\nPING\r\n"])
    info = transcript.infos()[0]
    assert info["auth_required"] is True and len(info["nonce"]) == 15
    if accepted:
        assert (transcript.without_greeting(), transcript.closed) == (b"PONG\r\n", False)
    else:
        assert (transcript.without_greeting(), transcript.closed) == (AUTH_VIOLATION, True)


async def test_nkey_signs_the_nonce_raw(server: Start) -> None:
    target = await server(USERS)
    pair = nkeys.from_seed(bytearray(SEED.encode()))
    other = nkeys.from_seed(bytearray(OTHER_SEED.encode()))
    for signer, accepted in ((pair, True), (other, False)):
        client = await RawClient.connect(target.host, target.port)
        try:
            await client.read_until(b"\r\n")
            nonce = json.loads(bytes(client.received)[5:].split(b"\r\n")[0])["nonce"]
            sig = base64.urlsafe_b64encode(signer.sign(nonce.encode())).rstrip(b"=").decode()
            connect = json.dumps({"verbose": False, "nkey": NKEY, "sig": sig})
            client.received.clear()
            await client.send(f"CONNECT {connect}\r\nPING\r\n".encode())
            await client.read_until(b"\r\n")
            if accepted:
                assert bytes(client.received) == b"PONG\r\n"
            else:
                assert bytes(client.received) == AUTH_VIOLATION and await client.wait_closed()
        finally:
            await client.close()


async def test_nats_py_with_nkey_seed_and_bcrypt_user(server: Start) -> None:
    target = await server(USERS)
    nc = await nats.connect(target.url, nkeys_seed_str=SEED, allow_reconnect=False)
    nc2 = await nats.connect(target.url, user="b", password="b-secret", allow_reconnect=False)
    try:
        sub = await nc.subscribe("greet")
        await nc.flush()
        await nc.flush()  # nats-py's PING can overtake the queued SUB: the second PONG follows it
        await nc2.publish("greet", b"hi")
        msg = await sub.next_msg(timeout=WAIT)
        assert msg.data == b"hi"
    finally:
        await nc.close()
        await nc2.close()


async def test_token_from_the_block_may_be_bcrypt(server: Start) -> None:
    target = await server(f'authorization {{ token: "{HASH}" }}')
    good = await record(target.host, target.port, [b'CONNECT {"verbose":false,"auth_token":"b-secret"}\r\n'])
    bad = await record(target.host, target.port, [b'CONNECT {"verbose":false,"auth_token":"nope"}\r\n'])
    assert "nonce" not in good.infos()[0]
    assert (good.without_greeting(), good.closed) == (b"", False)
    assert (bad.without_greeting(), bad.closed) == (AUTH_VIOLATION, True)


NO_AUTH = """
authorization {
  users [
    { user: admin, password: pw }
    { user: guest, password: "", permissions: { publish: "public.>", subscribe: "public.>" } }
  ]
}
no_auth_user: guest
"""


async def test_no_auth_user_is_who_comes_without_credentials(server: Start) -> None:
    target = await server(NO_AUTH)
    script = [b'CONNECT {"verbose":true}\r\nPUB public.x 0\r\n\r\nPUB private 0\r\n\r\nSUB private 1\r\n']
    transcript = await record(target.host, target.port, script)
    assert "auth_required" not in transcript.infos()[0]
    assert transcript.without_greeting() == (
        b"+OK\r\n+OK\r\n"
        b"-ERR 'Permissions Violation for Publish to \"private\"'\r\n"
        b"-ERR 'Permissions Violation for Subscription to \"private\"'\r\n"
    )
    assert not transcript.closed
    admin = await record(target.host, target.port, [b'CONNECT {"verbose":false,"user":"admin","pass":"pw"}\r\n'])
    assert (admin.without_greeting(), admin.closed) == (b"", False)
    wrong = await record(target.host, target.port, [b'CONNECT {"verbose":false,"user":"admin","pass":"x"}\r\n'])
    assert (wrong.without_greeting(), wrong.closed) == (AUTH_VIOLATION, True)


async def test_no_auth_user_may_skip_connect(server: Start) -> None:
    """The first operation other than CONNECT logs the client in as the no_auth_user, permissions and all."""
    target = await server(NO_AUTH)
    transcript = await record(
        target.host, target.port, [b"PUB private 0\r\n\r\nSUB public.x 1\r\nPUB public.x 0\r\n\r\n"]
    )
    assert transcript.without_greeting() == violation("Publish", "private") + b"+OK\r\n+OK\r\nMSG public.x 1 0\r\n\r\n"
    assert not transcript.closed


async def test_no_auth_user_still_times_out_without_any_operation(server: Start) -> None:
    target = await server(NO_AUTH.replace("authorization {", "authorization {\n  timeout: 0.3"))
    transcript = await record(target.host, target.port, [], sync=False, quiet=WAIT)  # ends at the hang-up
    assert (transcript.without_greeting(), transcript.closed) == (b"-ERR 'Authentication Timeout'\r\n", True)


async def test_nkey_no_auth_user_must_connect_first(server: Start) -> None:
    target = await server(USERS + f"no_auth_user: {NKEY}\n")
    refused = await record(target.host, target.port, [b"PING\r\n"])
    assert (refused.without_greeting(), refused.closed) == (AUTH_VIOLATION, True)
    anonymous = await record(target.host, target.port, [b'CONNECT {"verbose":false}\r\n'])
    assert (anonymous.without_greeting(), anonymous.closed) == (b"", False)


PERMS = """
authorization {
  users [
    { user: pub, password: pw, permissions: {
        publish: { allow: ["orders.>", "status.*"], deny: ["orders.secret", "status.internal"] }
        subscribe: { allow: ["events.>", "work.* workers", "jobs"], deny: ["events.secret", "jobs bad"] }
    } }
    { user: free, password: pw }
    { user: limited, password: pw, permissions: { publish: "only.this" } }
    { user: strict, password: pw, permissions: {
        publish: { allow: "foo.bar", deny: "foo.>" }
        subscribe: { allow: ["foo.bar", "foo.*"], deny: "foo.>" }
    } }
  ]
}
"""


def connect_as(user: str, verbose: bool = True) -> bytes:
    return b"CONNECT " + json.dumps({"verbose": verbose, "user": user, "pass": "pw"}).encode() + b"\r\n"


def violation(kind: str, subject: str, queue: str = "") -> bytes:
    text = f'Permissions Violation for {kind} to "{subject}"'
    if queue:
        text += f' using queue "{queue}"'
    return f"-ERR '{text}'\r\n".encode()


async def test_publish_allow_and_deny_with_wildcards(server: Start) -> None:
    target = await server(PERMS)
    pubs = ["orders.new", "orders.secret", "orders", "status.ok", "status.internal", "status.a.b", "other", "_INBOX.x"]
    script = [connect_as("pub")] + [f"PUB {s} 1\r\nx\r\n".encode() for s in pubs]
    transcript = await record(target.host, target.port, script)
    expected = b"+OK\r\n" + b"".join(
        b"+OK\r\n" if s in ("orders.new", "status.ok") else violation("Publish", s) for s in pubs
    )
    assert (transcript.without_greeting(), transcript.closed) == (expected, False)


async def test_subscribe_allow_deny_and_queues(server: Start) -> None:
    target = await server(PERMS)
    subs = [
        ("events.a", ""),
        ("events.*", ""),
        ("events.secret", ""),
        ("events.secret", "q"),
        ("other", ""),
        ("work.1", ""),
        ("work.1", "workers"),
        ("work.1", "others"),
        ("jobs", "good"),
        ("jobs", "bad"),
        ("jobs", "_sys_"),
        (">", ""),
        ("events..x", ""),
    ]
    script = [connect_as("pub")] + [
        f"SUB {s} {q} {i}\r\n".encode() if q else f"SUB {s} {i}\r\n".encode() for i, (s, q) in enumerate(subs)
    ]
    transcript = await record(target.host, target.port, script)
    allowed = {0, 1, 6, 8}
    expected = b"+OK\r\n" + b"".join(
        b"+OK\r\n" if i in allowed else violation("Subscription", s, q) for i, (s, q) in enumerate(subs)
    )
    assert (transcript.without_greeting(), transcript.closed) == (expected, False)


async def test_reply_subjects_are_not_checked_and_deny_wins(server: Start) -> None:
    target = await server(PERMS)
    script = [connect_as("pub"), b"PUB orders.new not.allowed.reply 0\r\n\r\n"]
    transcript = await record(target.host, target.port, script)
    assert transcript.without_greeting() == b"+OK\r\n+OK\r\n"
    script = [connect_as("strict"), b"PUB foo.bar 0\r\n\r\nSUB foo.bar 1\r\nSUB foo.* 2\r\nSUB foo 3\r\n"]
    transcript = await record(target.host, target.port, script)
    assert transcript.without_greeting() == (
        b"+OK\r\n"
        + violation("Publish", "foo.bar")
        + violation("Subscription", "foo.bar")
        + violation("Subscription", "foo.*")
        + violation("Subscription", "foo")
    )
    assert not transcript.closed


async def test_denied_messages_are_not_delivered_to_wider_subscriptions(server: Start) -> None:
    target = await server(PERMS)
    sub = await RawClient.connect(target.host, target.port)
    try:
        await sub.read_until(b"\r\n")
        await sub.send(
            connect_as("pub", verbose=False) + b"SUB events.* 1\r\nSUB events.> 2\r\nSUB jobs good 3\r\nPING\r\n"
        )
        await sub.read_until(b"PONG\r\n")
        sub.received.clear()
        script = [connect_as("free", verbose=False)] + [
            f"PUB {s} 2\r\nhi\r\n".encode() for s in ("events.secret", "events.open", "events.x.secret", "jobs")
        ]
        publisher = await record(target.host, target.port, script)
        assert publisher.without_greeting() == b""
        await sub.send(b"PING\r\n")
        await sub.read_until(b"PONG\r\n")
        got = bytes(sub.received)
        assert b"events.secret " not in got
        assert got.count(b"MSG events.open ") == 2 and got.count(b"MSG events.x.secret ") == 1
        assert got.count(b"MSG jobs 3 2\r\n") == 1
    finally:
        await sub.close()


async def test_connection_stays_open_and_nothing_is_delivered(server: Start) -> None:
    target = await server(PERMS)
    listener = await nats.connect(target.url, user="free", password="pw", allow_reconnect=False)
    try:
        got: list[str] = []

        async def keep(msg) -> None:
            got.append(msg.subject)

        await listener.subscribe(">", cb=keep)
        await listener.flush()
        script = [connect_as("limited", verbose=False), b"PUB elsewhere 1\r\nx\r\nPUB only.this 1\r\ny\r\nPING\r\n"]
        transcript = await record(target.host, target.port, script)
        assert transcript.without_greeting() == violation("Publish", "elsewhere") + b"PONG\r\n"
        assert not transcript.closed
        await listener.flush()
        await eventually(lambda: asyncio.sleep(0, got), what="the allowed message")
        assert got == ["only.this"]
    finally:
        await listener.close()


RESPONDER = """
authorization {
  users [
    { user: client, password: pw }
    { user: service, password: pw, permissions: {
        subscribe: "service.>"
        allow_responses: true
    } }
    { user: service2, password: pw, permissions: {
        subscribe: "service.>"
        publish: "log.>"
        allow_responses: { max: 2, expires: "1m" }
    } }
  ]
}
"""


async def test_allow_responses_lets_a_responder_answer_once(server: Start) -> None:
    target = await server(RESPONDER)
    service = await RawClient.connect(target.host, target.port)
    requester = await nats.connect(target.url, user="client", password="pw", allow_reconnect=False)
    try:
        await service.read_until(b"\r\n")
        await service.send(connect_as("service", verbose=False) + b"SUB service.echo 1\r\nPUB other 0\r\n\r\nPING\r\n")
        await service.read_until(b"PONG\r\n")
        assert bytes(service.received).split(b"\r\n", 1)[1] == violation("Publish", "other") + b"PONG\r\n"
        service.received.clear()
        request = asyncio.ensure_future(requester.request("service.echo", b"ping", timeout=3))
        await service.read_until(b"\r\nping\r\n")
        header = bytes(service.received).split(b"\r\n")[0].split(b" ")
        assert header[:3] == [b"MSG", b"service.echo", b"1"]
        reply = header[3]
        service.received.clear()
        await service.send(b"PUB " + reply + b" 4\r\npong\r\nPUB " + reply + b" 5\r\nagain\r\nPING\r\n")
        await service.read_until(b"PONG\r\n")
        assert bytes(service.received) == violation("Publish", reply.decode()) + b"PONG\r\n"
        response = await request
        assert response.data == b"pong"
    finally:
        await requester.close()
        await service.close()


async def test_allow_responses_with_max_and_publish_list(server: Start) -> None:
    target = await server(RESPONDER)
    service = await RawClient.connect(target.host, target.port)
    requester = await nats.connect(target.url, user="client", password="pw", allow_reconnect=False)
    try:
        await service.read_until(b"\r\n")
        await service.send(connect_as("service2", verbose=False) + b"SUB service.> 1\r\nPING\r\n")
        await service.read_until(b"PONG\r\n")
        service.received.clear()
        await requester.publish("service.x", b"q", reply="answers.here")
        await requester.flush()
        await service.read_until(b"\r\nq\r\n")
        service.received.clear()
        script = b"".join(b"PUB answers.here 1\r\n%d\r\n" % i for i in range(3)) + b"PUB log.x 0\r\n\r\nPING\r\n"
        await service.send(script)
        await service.read_until(b"PONG\r\n")
        assert bytes(service.received) == violation("Publish", "answers.here") + b"PONG\r\n"
    finally:
        await requester.close()
        await service.close()


async def test_jetstream_request_without_api_permission(server: Start) -> None:
    target = await server(PERMS)
    script = [connect_as("limited", verbose=False), b"SUB _INBOX.me 1\r\nPUB $JS.API.INFO _INBOX.me 0\r\n\r\n"]
    transcript = await record(target.host, target.port, script)
    assert transcript.without_greeting() == violation("Publish", "$JS.API.INFO")
    assert not transcript.closed
    allowed = await record(
        target.host,
        target.port,
        [connect_as("free", verbose=False), b"SUB _INBOX.me 1\r\nPUB $JS.API.INFO _INBOX.me 0\r\n\r\n"],
    )
    assert b"MSG _INBOX.me 1 " in allowed.without_greeting()


async def test_nats_py_jetstream_request_denied_times_out(server: Start) -> None:
    target = await server(PERMS)
    errors: list[Exception] = []

    async def on_error(exc: Exception) -> None:
        errors.append(exc)

    nc = await nats.connect(target.url, user="limited", password="pw", allow_reconnect=False, error_cb=on_error)
    try:
        with pytest.raises(nats.errors.TimeoutError):
            await nc.jetstream(timeout=0.5).account_info()
        assert nc.is_connected
    finally:
        await nc.close()


def test_fake_helper_maps_the_same_text() -> None:
    options = ServerOptions()
    configure(NO_AUTH, options)
    assert options.no_auth_user == "guest" and [u.name for u in options.users] == ["admin", "guest"]


@pytest.mark.parametrize("config", [NO_AUTH, USERS], ids=["no_auth_user", "nkeys"])
async def test_info_after_connect_requires_auth_and_has_no_nonce(server: Start, config: str) -> None:
    target = await server(config)
    connect = b'CONNECT {"verbose":false,"protocol":1,"user":"admin","pass":"pw"}\r\nPING\r\n'
    if config is USERS:
        connect = connect.replace(b'"admin","pass":"pw"', b'"a","pass":"a-secret"')
    transcript = await record(target.host, target.port, [connect])
    greeting, answer = transcript.infos()
    assert ("nonce" in greeting, "auth_required" in greeting) == (config is USERS, config is USERS)
    assert answer["connect_info"] is True and answer["auth_required"] is True and "nonce" not in answer


BCRYPT_GUEST = f"""
authorization {{
  users [ {{ user: guest, password: "{HASH}" }}, {{ user: nopass }} ]
}}
no_auth_user: guest
"""


@pytest.mark.parametrize(
    "script,accepted",
    [
        (b'CONNECT {"verbose":false}\r\n', False),  # the stored hash is compared with itself
        (b"PING\r\n", False),
        (b'CONNECT {"verbose":false,"user":"guest","pass":"b-secret"}\r\n', True),
        (b'CONNECT {"verbose":false,"user":"nopass"}\r\n', True),
        (b'CONNECT {"verbose":false,"user":"nopass","pass":"x"}\r\n', False),
    ],
    ids=["anonymous", "no-connect", "guest", "nopass", "nopass-with-pass"],
)
async def test_bcrypt_no_auth_user_and_passwordless_user(server: Start, script: bytes, accepted: bool) -> None:
    target = await server(BCRYPT_GUEST)
    transcript = await record(target.host, target.port, [script])
    if accepted:
        assert (transcript.without_greeting(), transcript.closed) == (b"", False)
    else:
        assert (transcript.without_greeting(), transcript.closed) == (AUTH_VIOLATION, True)
