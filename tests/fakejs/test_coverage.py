"""The coverage page's rows hold: each probe gets its fingerprint, each refusal its exact text.

The page (``docs/guide/coverage.md``) is rendered from
:mod:`fakejs.testkit.coverage`; these tests check the page against the
facts, the facts against nats-server's lists (every key and flag once) and
against a running server.  The JetStream API probes run on both targets.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import signal
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.aio.client import Client
from nats.errors import NoRespondersError, TimeoutError

from fakejs.cli.flags import nats_server_flags
from fakejs.cli.settings import UNSUPPORTED, Exit, command_line
from fakejs.core.configfile.load import load_text
from fakejs.gocompat.goflag import FlagSet
from fakejs.jetstream import status
from fakejs.jetstream.config.consumer import ConsumerConfig
from fakejs.jetstream.config.stream import StreamConfig
from fakejs.jetstream.errors import ERRORS
from fakejs.testkit.coverage import (
    HEADERS,
    JETSTREAM_API,
    MONITORING,
    PROTOCOL,
    REFUSED,
    SERVED,
    STATUSES,
    SYSTEM_EVENTS,
    SYSTEM_REQUESTS,
    Feature,
)
from fakejs.testkit.coverage_jetstream import (
    ACKS,
    ADVISORIES,
    CONSUMER_FIELDS,
    DIRECT_GET_FIELDS,
    PULL_FIELDS,
    STATUS_LINES,
    STREAM_FIELDS,
    UNANSWERED_ERRORS,
    error_features,
)
from fakejs.testkit.coverage_reference import (
    CONNECT_FIELDS,
    FLAGS,
    NATS_SERVER_KEYS,
    all_features,
    config_features,
    with_reference,
)
from tests.harness.configured import configured_servers
from tests.harness.js import connected
from tests.harness.targets import Settings
from tests.harness.wait import eventually

PAGE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "coverage.md"
SILENCE = 0.5  # how long a probe that expects no answer listens
WAIT = 10.0


def test_the_coverage_page_shows_the_facts() -> None:
    """The page's tables are rendered from the facts (python -m tests.fakejs.test_coverage rewrites them)."""
    page = PAGE.read_text()
    expected = with_reference(page)
    diff = "".join(difflib.unified_diff(page.splitlines(True), expected.splitlines(True), "page", "facts"))
    assert page == expected, diff


ROW_SETS = [JETSTREAM_API, SYSTEM_REQUESTS, MONITORING, PROTOCOL, HEADERS, config_features()]
ROW_SETS += [STREAM_FIELDS, CONSUMER_FIELDS, PULL_FIELDS, tuple(row for row, _, _ in STATUS_LINES), error_features()]
ROW_SETS += [DIRECT_GET_FIELDS, ACKS, ADVISORIES, CONNECT_FIELDS, SYSTEM_EVENTS]


@pytest.mark.parametrize("rows", ROW_SETS)
def test_every_feature_is_listed_once_with_a_status(rows: tuple[Feature, ...]) -> None:
    names = [row.name for row in rows]
    assert len(names) == len(set(names))
    assert all(row.status in STATUSES for row in rows)
    assert all(row.how for row in rows if row.status != SERVED)


def test_every_configuration_key_and_flag_once() -> None:
    assert len(NATS_SERVER_KEYS) == len(set(NATS_SERVER_KEYS))
    assert [row.name for row in config_features()] == list(NATS_SERVER_KEYS)
    flags = FlagSet()
    nats_server_flags(flags)
    dests = {flag.dest for flag in flags.flags.values()}
    assert sorted(dest for dest, *_ in FLAGS) == sorted(dests)
    assert len(all_features()) > 250


def test_every_configuration_field_of_streams_and_consumers_once() -> None:
    assert [row.name for row in STREAM_FIELDS] == list(StreamConfig.__annotations__)
    assert [row.name for row in CONSUMER_FIELDS] == list(ConsumerConfig.__annotations__)
    assert len(STREAM_FIELDS) == 38 and len(CONSUMER_FIELDS) == 35  # nats-server 2.15's


@pytest.mark.parametrize("row,writer,arguments", [line for line in STATUS_LINES if line[1]], ids=lambda x: str(x))
def test_a_served_status_line_is_written_by_the_status_module(row: Feature, writer: str, arguments: tuple) -> None:
    written = getattr(status, writer)(*arguments).decode()
    assert written.startswith("NATS/1.0 " + row.name.split(" <")[0])


def fakejs_source() -> str:
    package = Path(status.__file__).resolve().parents[1]
    return "".join(path.read_text() for path in package.rglob("*.py") if path.name != "errors.py")


def test_error_codes_are_answered_as_the_rows_say() -> None:
    source = fakejs_source()
    answered = {spec.err_code for name, spec in ERRORS.items() if f'"{name}"' in source}
    assert len(ERRORS) == 227
    assert set(UNANSWERED_ERRORS) == {spec.err_code for spec in ERRORS.values()} - answered


@pytest.mark.parametrize("row", [row for row in config_features() if row.status == REFUSED], ids=lambda r: r.name)
def test_a_refused_configuration_key_fails_with_the_quoted_text(row: Feature) -> None:
    quoted = row.how
    problem = load_text(f"{row.name}: true\n", "coverage.conf").problem_text()
    assert f"coverage.conf:1:0: {quoted}\n" in problem


REFUSED_FLAG_ARGUMENTS = {
    "client_advertise": ["--client_advertise", "x:1"],
    "logtime_utc": ["--logtime_utc"],
    "log_size_limit": ["--log_size_limit", "100"],
    "syslog": ["-s"],
    "remote_syslog": ["-r", "udp://127.0.0.1:514"],
    "profile": ["--profile", "-1"],
}


@pytest.mark.parametrize("flag", [flag for flag in FLAGS if flag[2] == REFUSED], ids=lambda flag: flag[0])
def test_a_refused_flag_exits_with_the_quoted_text(flag: tuple[str, str, str, str]) -> None:
    dest, _, _, quoted = flag
    with pytest.raises(Exit) as ended:
        command_line(REFUSED_FLAG_ARGUMENTS[dest])
    assert ended.value.stderr == f"fakejs: {quoted}\n"
    assert any(text == quoted.removesuffix(": not supported by fakejs yet") for _, text in UNSUPPORTED)


# -- probes -------------------------------------------------------------------------------------


def fingerprint(reply: Any) -> str:
    """A reply reduced to what a row claims (see :mod:`fakejs.testkit.coverage`)."""
    headers = reply.headers or {}
    if "Status" in headers:
        return f"status:{headers['Status']}"
    try:
        doc = json.loads(reply.data)
    except ValueError:
        return "message"
    if isinstance(doc, dict) and "type" in doc:
        kind = doc["type"].removeprefix("io.nats.jetstream.api.v1.")
        return f"type:{kind}/{doc['error']['err_code']}" if "error" in doc else f"type:{kind}"
    if isinstance(doc, dict) and "error" in doc:
        return f"error:{doc['error']['code']}"
    if isinstance(doc, int):
        return "count"
    return "data" if isinstance(doc, dict) else "message"


async def probe(nc: Client, subject: str, body: bytes, expect: str) -> tuple[str, Any]:
    try:
        reply = await nc.request(subject, body, timeout=SILENCE if expect == "silent" else WAIT)
    except NoRespondersError:
        return "no responders", None
    except TimeoutError:
        return "silent", None
    return fingerprint(reply), reply


async def test_jetstream_api_rows(nc: Client, target: Any) -> None:
    await nc.request("$JS.API.STREAM.CREATE.S", b'{"name":"S","subjects":["s.>"],"allow_direct":true}', timeout=WAIT)
    consumer = b'{"stream_name":"S","config":{"durable_name":"C","ack_policy":"explicit"}}'
    await nc.request("$JS.API.CONSUMER.CREATE.S.C", consumer, timeout=WAIT)
    await nc.request("s.a", b"hi", timeout=WAIT)
    rows = [row for row in JETSTREAM_API if row.probe and (target.is_fake or row.status == SERVED)]
    silent = [row for row in rows if row.probe and row.probe.expect == "silent"]
    answered = [row for row in rows if row not in silent]
    seen: dict[str, str] = {}
    for row in answered:
        assert row.probe is not None
        seen[row.name], reply = await probe(nc, row.probe.subject, row.probe.body, row.probe.expect)
        if row.status == REFUSED:
            assert json.loads(reply.data)["error"]["description"] == row.how
    quiet = await asyncio.gather(*(probe(nc, row.probe.subject, b"", "silent") for row in silent if row.probe))
    seen.update((row.name, found) for row, (found, _) in zip(silent, quiet, strict=True))
    assert seen == {row.name: row.probe.expect for row in rows if row.probe}


SYSTEM_CONFIG = """
accounts { A { jetstream: enabled, users: [{user: a, password: a}] }, SYS { users: [{user: sys, password: sys}] } }
system_account: SYS
"""


@asynccontextmanager
async def system_clients(target_kind: str, tmp_path: Path) -> AsyncIterator[tuple[Client, Client, str]]:
    """A server with a system account: a client of it, one of account A, and the server's id."""
    async with configured_servers(target_kind, tmp_path) as start:
        target = await start(SYSTEM_CONFIG)
        system = await nats.connect(target.url, user="sys", password="sys")
        account = await nats.connect(target.url, user="a", password="a")
        try:
            yield system, account, system._server_info["server_id"]
        finally:
            await system.close()
            await account.close()


async def test_system_request_rows(target_kind: str, tmp_path: Path) -> None:
    seen, expected = {}, {}
    async with system_clients(target_kind, tmp_path) as (system, account, server_id):
        for row in SYSTEM_REQUESTS:
            if row.probe is None or (target_kind == "real" and row.status != SERVED):
                continue
            subject = row.probe.subject.replace("<id>", server_id)
            client = account if subject.startswith("A:") else system
            seen[row.name], reply = await probe(client, subject.removeprefix("A:"), row.probe.body, row.probe.expect)
            expected[row.name] = row.probe.expect
            if row.status == REFUSED:
                assert json.loads(reply.data)["error"]["description"] == row.how
    assert seen == expected


async def test_the_system_account_hears_jetstream_is_not_enabled_for_it(target_kind: str, tmp_path: Path) -> None:
    """nats-server answers 503, 10039 here (fakejs's system account used to hear no responders)."""
    async with system_clients(target_kind, tmp_path) as (system, _, _):
        found, _ = await probe(system, "$JS.API.INFO", b"", "type:account_info_response/10039")
    assert found == "type:account_info_response/10039"


async def test_the_system_account_purges_an_account(target_kind: str, tmp_path: Path) -> None:
    async with system_clients(target_kind, tmp_path) as (system, account, _):
        for name in ("S1", "S2"):
            await account.request(f"$JS.API.STREAM.CREATE.{name}", json.dumps({"name": name}).encode(), timeout=WAIT)
        for name in ("A", "NOPE"):
            reply = await system.request(f"$JS.API.ACCOUNT.PURGE.{name}", b"", timeout=WAIT)
            assert json.loads(reply.data) == {
                "type": "io.nats.jetstream.api.v1.account_purge_response",
                "initiated": True,
            }
        reply = await system.request("$JS.API.ACCOUNT.PURGE.a\\b", b"", timeout=WAIT)
        assert json.loads(reply.data)["error"]["description"] == "account name can not contain path separators"
        names = await account.request("$JS.API.STREAM.NAMES", b"", timeout=WAIT)
        assert json.loads(names.data)["total"] == 0
        unheard, _ = await probe(account, "$JS.API.ACCOUNT.PURGE.A", b"", "silent")
        assert unheard == "silent"


async def test_debug_subscribers_counts_the_system_account_s_clients(target_kind: str, tmp_path: Path) -> None:
    async with system_clients(target_kind, tmp_path) as (system, account, _):
        await system.subscribe("foo.bar")
        await system.subscribe("foo.*", queue="q")
        await account.subscribe("foo.bar")  # another account: not counted
        await account.flush()
        counts = {}
        for body in ("foo.bar", "foo.bar q", "foo.>", "x.y"):
            reply = await system.request("$SYS.DEBUG.SUBSCRIBERS", body.encode(), timeout=WAIT)
            counts[body] = reply.data
    assert counts == {"foo.bar": b"2", "foo.bar q": b"1", "foo.>": b"2", "x.y": b"0"}


async def test_nsubs_counts_an_account_s_clients(target_kind: str, tmp_path: Path) -> None:
    async with system_clients(target_kind, tmp_path) as (system, account, _):
        await account.subscribe("foo.bar")
        await account.subscribe("foo.*", queue="q")
        await account.flush()
        counts = {}
        for body in ('{"acc":"A","subject":"foo.bar"}', '{"acc":"A","subject":"foo.bar","queue":"cQ=="}'):
            reply = await system.request("$SYS.REQ.ACCOUNT.NSUBS", body.encode(), timeout=WAIT)
            counts[body] = reply.data
        unheard, _ = await probe(system, "$SYS.REQ.ACCOUNT.NSUBS", b'{"acc":"NOPE","subject":"x"}', "silent")
    assert list(counts.values()) == [b"2", b"1"]
    assert unheard == "silent"


SERVER_INFO_FIELDS = ["name", "host", "id", "ver", "feature_flags", "jetstream", "flags", "seq", "time"]


async def enter_lame_duck(target: Any) -> None:
    if target.is_fake:
        asyncio.get_running_loop().create_task(target.server.lame_duck())
    else:
        target.process.process.send_signal(signal.SIGUSR2)


async def announced(target: Any, subject: str, act: Any) -> bytes:
    """What a system client hears on ``subject`` when ``act(target)`` runs."""
    system = await nats.connect(target.url, user="sys", password="sys", allow_reconnect=False)
    heard: list[bytes] = []

    async def on_event(msg: Any) -> None:
        heard.append(msg.data)

    await system.subscribe(subject.replace("<id>", system._server_info["server_id"]), cb=on_event)
    await system.flush()
    await act(target)

    async def seen() -> list[bytes]:
        return heard

    await eventually(seen, what=subject)
    await system.close()
    return heard[0]


async def test_lame_duck_and_shutdown_are_announced(target_kind: str, tmp_path: Path) -> None:
    """``$SYS.SERVER.<id>.LAMEDUCK`` and ``...SHUTDOWN`` carry the server's identity alone."""
    config = SYSTEM_CONFIG + "lame_duck_grace_period: 1s\n"
    async with configured_servers(target_kind, tmp_path) as start:
        lame_duck = await announced(await start(config), "$SYS.SERVER.<id>.LAMEDUCK", enter_lame_duck)
        shutdown = await announced(await start(config), "$SYS.SERVER.<id>.SHUTDOWN", lambda target: target.stop())
    assert list(json.loads(lame_duck)) == SERVER_INFO_FIELDS
    assert list(json.loads(shutdown)) == SERVER_INFO_FIELDS


async def test_kick_closes_one_client(target_kind: str, tmp_path: Path) -> None:
    async with system_clients(target_kind, tmp_path) as (system, account, server_id):
        closed = asyncio.Event()

        async def on_closed() -> None:
            closed.set()

        url = f"nats://a:a@127.0.0.1:{system._current_server.uri.port}"
        victim = await nats.connect(url, allow_reconnect=False, closed_cb=on_closed)
        request = json.dumps({"cid": victim._server_info["client_id"]}).encode()
        reply = await system.request(f"$SYS.REQ.SERVER.{server_id}.KICK", request, timeout=WAIT)
        assert set(json.loads(reply.data)) == {"server"}
        await asyncio.wait_for(closed.wait(), WAIT)
        assert account.is_connected
        silent, _ = await probe(system, f"$SYS.REQ.SERVER.{server_id}.KICK", b"", "silent")
        assert silent == "silent"


async def test_ldm_tells_one_client(target_kind: str, tmp_path: Path) -> None:
    async with system_clients(target_kind, tmp_path) as (system, account, server_id):
        request = json.dumps({"cid": account._server_info["client_id"]}).encode()
        reply = await system.request(f"$SYS.REQ.SERVER.{server_id}.LDM", request, timeout=WAIT)
        assert set(json.loads(reply.data)) == {"server"}


def fetch(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=WAIT) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


async def test_monitoring_rows(make_target: Any, target_kind: str) -> None:
    target = await make_target(Settings(monitor=True))
    base = f"http://127.0.0.1:{target.http_port}"
    for row in MONITORING:
        if row.probe is None or (target_kind == "real" and row.status != SERVED):
            continue
        path = row.probe.subject if row.probe.subject.startswith("/") else "/nothing-here"
        status, text = await asyncio.to_thread(fetch, base + path)
        assert f"http:{status}" == row.probe.expect, row.name
        if row.status == REFUSED:
            assert text == row.how + "\n"


HEALTH_CHECKS = {
    "": (200, {"status": "ok"}),
    "?details=x": (400, "Error decoding boolean for 'details': strconv.ParseBool: parsing \"x\": invalid syntax"),
    "?stream=F": (400, {"status": "error", "error": '"account" must not be empty when checking stream health'}),
    "?account=$G&stream=M": (404, {"status": "unavailable", "error": 'JetStream stream "M" not found on account "$G"'}),
    "?account=$G&stream=F&consumer=C": (200, {"status": "ok"}),
    "?account=NOPE&details=1": (
        404,
        {
            "status": "error",
            "errors": [{"type": "ACCOUNT", "account": "NOPE", "error": 'JetStream account "NOPE" not found'}],
        },
    ),
}


async def test_healthz_checks_the_assets_named(make_target: Any) -> None:
    target = await make_target(Settings(monitor=True))
    async with connected(target) as nc:
        await nc.request("$JS.API.STREAM.CREATE.M", b'{"name":"M","storage":"memory"}', timeout=WAIT)
        await nc.request("$JS.API.STREAM.CREATE.F", b'{"name":"F","subjects":["f"]}', timeout=WAIT)
        await nc.request(
            "$JS.API.CONSUMER.CREATE.F.C", b'{"stream_name":"F","config":{"durable_name":"C"}}', timeout=WAIT
        )
    for query, (code, expected) in HEALTH_CHECKS.items():
        status, text = await asyncio.to_thread(fetch, f"http://127.0.0.1:{target.http_port}/healthz{query}")
        assert (status, json.loads(text) if isinstance(expected, dict) else text) == (code, expected), query


# -- the gaps closed: what used to be answered with silence or a bare 404 -------------------------------------


IMPORTED = ("$SYS.REQ.ACCOUNT.PING.STATZ", "$SYS.REQ.ACCOUNT.PING.CONNZ", "$SYS.REQ.SERVER.PING.CONNZ")


async def test_every_account_may_ask_about_itself(nc: Client) -> None:
    """nats-server imports these into every account; they used to be unheard outside the system account."""
    for subject in IMPORTED:
        found, reply = await probe(nc, subject, b"", "data")
        assert found == "data", subject
        document = json.loads(reply.data)["data"]
        if "account_statz" in document:
            assert [stat["acc"] for stat in document["account_statz"]] == ["$G"]
        else:
            assert document["num_connections"] == 1


if __name__ == "__main__":  # pragma: no cover - rewrites the page's tables from the facts
    PAGE.write_text(with_reference(PAGE.read_text()))
