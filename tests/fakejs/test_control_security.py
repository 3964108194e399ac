"""Who may use the control API, and what a request to it may make the server do.

A server that asks clients for credentials asks the control API's callers
too (HTTP Basic or Bearer, or an authenticated NATS connection); a control
token guards it on an open server.  Cross-origin browser requests cannot
reach it, a scenario is only ever started by name, and bad input gets a 400.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import urllib.error
import urllib.request
from email.message import Message
from pathlib import Path
from typing import Any

import nats
import pytest

from fakejs import Server
from fakejs.testkit.control_api import DENIED
from fakejs.testkit.scenarios import MAX_SCENARIO_BYTES

JSON = {"Content-Type": "application/json"}
ORDERS = 'name = "mine"\n[[setup.streams]]\nname = "MINE"\nsubjects = ["mine.>"]\nstorage = "memory"\n'


async def call(
    server: Server, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, Message, Any]:
    """One HTTP request: status, reply headers and the body (decoded when JSON)."""

    def run() -> tuple[int, Message, Any]:
        request = urllib.request.Request(f"{server.http_url}{path}", data=body, method=method, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                status, reply, raw = response.status, response.headers, response.read()
        except urllib.error.HTTPError as exc:
            status, reply, raw = exc.code, exc.headers, exc.read()
        return status, reply, json.loads(raw) if reply["Content-Type"] == "application/json" and raw else raw

    return await asyncio.to_thread(run)


def basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# -- credentials over HTTP ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "good", "bad"),
    [
        ({"user": "u", "password": "p"}, basic("u", "p"), basic("u", "wrong")),
        ({"token": "s3cret"}, bearer("s3cret"), bearer("s3cre")),
        ({"control_token": "ctl"}, bearer("ctl"), bearer("other")),
        ({"user": "u", "password": "p", "control_token": "ctl"}, bearer("ctl"), basic("x", "p")),
    ],
    ids=["user-password", "token", "control-token", "user-password-and-control-token"],
)
async def test_http_needs_the_credentials(settings: dict[str, Any], good: dict[str, str], bad: dict[str, str]) -> None:
    async with Server(http_port=0, **settings) as server:
        for headers in ({}, bad, {"Authorization": "Digest x"}, {"Authorization": "Basic !!!"}):
            status, reply, doc = await call(server, "GET", "/fakejs/state", headers=headers)
            assert (status, doc) == (401, {"error": DENIED}), headers
            assert reply.get_all("WWW-Authenticate")[0] == 'Bearer realm="fakejs"'
        status, _, doc = await call(server, "GET", "/fakejs/state", headers=good)
        assert status == 200 and doc["streams"] == []
        status, _, doc = await call(server, "POST", "/fakejs/reset", b"{}", {**good, **JSON})
        assert (status, doc) == (200, {"streams_deleted": 0})
        # Monitoring stays open, as on nats-server.
        assert (await call(server, "GET", "/healthz"))[0] == 200


async def test_basic_is_offered_when_nats_has_a_user_and_password() -> None:
    async with Server(http_port=0, user="u", password="p") as server:
        _, reply, _ = await call(server, "GET", "/fakejs/state")
        assert reply.get_all("WWW-Authenticate") == ['Bearer realm="fakejs"', 'Basic realm="fakejs", charset="UTF-8"']
        assert (await call(server, "GET", "/fakejs/clock", headers=basic("u", "p")))[0] == 200


async def test_an_open_server_without_a_control_token_needs_nothing() -> None:
    async with Server(http_port=0) as server:
        assert (await call(server, "GET", "/fakejs/state"))[0] == 200


# -- credentials over NATS ---------------------------------------------------------------------


async def test_nats_control_needs_the_control_token_on_an_open_server() -> None:
    async with Server(control_token="ctl") as server:
        anyone = await nats.connect(server.url)
        holder = await nats.connect(server.url, token="ctl")
        wrong = await nats.connect(server.url, token="nope")
        try:
            for nc in (anyone, wrong):
                reply = await nc.request("$FAKEJS.RESET", b"{}", timeout=2)
                assert json.loads(reply.data) == {"error": DENIED}
            reply = await holder.request("$FAKEJS.RESET", b"{}", timeout=2)
            assert json.loads(reply.data) == {"streams_deleted": 0}
        finally:
            for nc in (anyone, holder, wrong):
                await nc.close()


@pytest.mark.parametrize("settings", [{"user": "u", "password": "p"}, {"token": "s3cret"}])
async def test_nats_control_for_authenticated_connections_only(settings: dict[str, Any]) -> None:
    async with Server(**settings) as server:
        credentials = {"user": "u", "password": "p"} if "user" in settings else {"token": "s3cret"}
        nc = await nats.connect(server.url, **credentials)
        reply = await nc.request("$FAKEJS.CLOCK", b"", timeout=2)
        assert json.loads(reply.data)["manual"] is False
        await nc.close()
        # A message the server itself moves onto a control subject (a JetStream delivery, say)
        # carries no client's credentials: refused.
        router = server.broker.accounts.default.router
        replies: list[bytes] = []
        sub = router.subscribe_internal("_INBOX.probe", lambda s, r, h, payload, o: replies.append(payload))
        router.publish("$FAKEJS.RESET", "_INBOX.probe", None, b"{}", None)
        router.unsubscribe(sub)
        assert [json.loads(r) for r in replies] == [{"error": DENIED}]


# -- browsers ----------------------------------------------------------------------------------


async def test_no_cross_origin_access() -> None:
    async with Server(http_port=0) as server:
        for method, path in (("GET", "/fakejs/state"), ("GET", "/varz"), ("GET", "/healthz")):
            _, reply, _ = await call(server, method, path, headers={"Origin": "http://evil.example"})
            assert "Access-Control-Allow-Origin" not in reply, path
        preflight = {"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"}
        status, reply, _ = await call(server, "OPTIONS", "/fakejs/reset", headers=preflight)
        assert status == 405 and reply["Allow"] == "POST" and "Access-Control-Allow-Origin" not in reply


@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("evil.example", 403),
        ("evil.example:8222", 403),
        ("127.0.0.1.nip.io", 403),
        ("localhost", 200),
        ("LOCALHOST.:8222", 200),
        ("app.localhost", 200),
        ("127.0.0.1:8222", 200),
        ("[::1]:8222", 200),
        ("fakejs:8222", 200),
    ],
)
async def test_dns_rebinding_names_are_refused_on_an_open_server(host: str, status: int) -> None:
    async with Server(http_port=0) as server:
        got, _, doc = await call(server, "POST", "/fakejs/reset", b"{}", {**JSON, "Host": host})
        assert got == status, doc
        read, _, _ = await call(server, "GET", "/fakejs/state", headers={"Host": host})
        assert read == status
        assert (await call(server, "GET", "/varz", headers={"Host": host}))[0] == 200  # monitoring stays open


async def test_any_host_name_with_a_control_token() -> None:
    async with Server(http_port=0, control_token="ctl") as server:
        headers = {**bearer("ctl"), "Host": "fakejs.ci.example.com:8222"}
        assert (await call(server, "GET", "/fakejs/state", headers=headers))[0] == 200


@pytest.mark.parametrize("ctype", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", None])
async def test_a_post_that_is_not_json_is_refused(ctype: str | None) -> None:
    async with Server(http_port=0) as server:
        headers = {} if ctype is None else {"Content-Type": ctype}
        await call(server, "POST", "/fakejs/faults/add", b'{"on": "pull.request", "do": "drop"}', headers)
        status, _, doc = await call(server, "POST", "/fakejs/reset", b"{}", headers)
        assert status == 415 and "application/json" in doc["error"]
        assert server.faults.installed() == []


async def test_changes_need_a_post() -> None:
    async with Server(http_port=0) as server:
        for path in ("/fakejs/reset", "/fakejs/action/restart", "/fakejs/faults/clear"):
            status, reply, _ = await call(server, "GET", path)
            assert (status, reply["Allow"]) == (405, "POST"), path
        assert (await call(server, "POST", "/fakejs/state", b"", JSON))[0] == 200
        assert (await call(server, "HEAD", "/fakejs/state"))[0] == 200


# -- scenarios by name only --------------------------------------------------------------------


def unknown(name: object) -> str:
    return f"no scenario named {name!r}: give a shipped name"


@pytest.mark.parametrize(
    "name",
    ["/", "/etc/passwd", "../x", "../scenarios/mine.toml", "/dev/zero", "missing", "missing.toml", ".hidden", ""],
)
async def test_a_request_names_no_path(tmp_path: Path, name: object) -> None:
    (tmp_path / "mine.toml").write_text(ORDERS)
    async with Server(http_port=0, scenario_dirs=[str(tmp_path)]) as server:
        for key in ("name", "path"):
            body = json.dumps({key: name}).encode()
            status, _, doc = await call(server, "POST", "/fakejs/scenario/start", body, JSON)
            assert status == 400 and doc["error"].startswith(unknown(name)), doc
        nc = await nats.connect(server.url)
        reply = await nc.request("$FAKEJS.SCENARIO.START", json.dumps({"name": name}).encode(), timeout=2)
        assert json.loads(reply.data)["error"].startswith(unknown(name))
        await nc.close()
        assert server.errors == []


async def test_a_name_that_is_not_a_string_is_refused_for_its_type() -> None:
    async with Server(http_port=0) as server:
        for key in ("name", "path"):
            body = json.dumps({key: 7}).encode()
            status, _, doc = await call(server, "POST", "/fakejs/scenario/start", body, JSON)
            assert (status, doc) == (400, {"error": f'field "{key}" of scenario/start: expected a string, got 7'})


async def test_shipped_and_configured_scenarios_start_by_name(tmp_path: Path) -> None:
    (tmp_path / "mine.toml").write_text(ORDERS)
    os.symlink("/dev/zero", tmp_path / "zero.toml")
    (tmp_path / "big.toml").write_bytes(b"#" * (MAX_SCENARIO_BYTES + 1))
    (tmp_path / "dir.toml").mkdir()
    async with Server(http_port=0, scenario_dirs=[str(tmp_path / "none"), str(tmp_path)]) as server:

        async def start(name: str) -> tuple[int, Any]:
            status, _, doc = await call(
                server, "POST", "/fakejs/scenario/start", json.dumps({"name": name}).encode(), JSON
            )
            return status, doc

        assert await start("mine.toml") == (200, {"scenario": "mine", "faults": []})
        assert (await start("mine"))[0] == 200
        status, doc = await start("leadership-change")
        assert status == 200 and doc["scenario"] == "leadership-change"
        for name in ("zero.toml", "dir.toml"):
            status, doc = await start(name)
            assert status == 400 and doc["error"].startswith(unknown(name))
        status, doc = await start("big.toml")
        assert (status, doc) == (400, {"error": f"scenario 'big.toml' is larger than {MAX_SCENARIO_BYTES} bytes"})


async def test_the_python_api_still_takes_paths(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text(ORDERS)
    async with Server() as server:
        assert server.control.start_scenario(path=str(path))["scenario"] == "mine"


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body", "text"),
    [
        ("faults/add", b"not json", "not JSON"),
        ("faults/add", b"\xff\xfe", "not JSON"),
        ("faults/add", b"[1, 2]", "must be a JSON object"),
        ("faults/add", b'"text"', "must be a JSON object"),
        ("faults/add", b"[" * 100_000, ""),
        ("clock/advance", b'{"seconds": NaN}', "NaN is not a JSON number"),
        ("clock/advance", b'{"seconds": [1]}', 'field "seconds" of clock/advance: expected a number >= 0, got [1]'),
        ("faults/remove", b'{"id": "x"}', 'field "id" of faults/remove: expected an integer, got "x"'),
        ("faults/remove", b'{"id": {}}', 'field "id" of faults/remove: expected an integer, got {}'),
        ("faults/add", b'{"bogus": 1}', 'unknown field "bogus" in faults/add: expected one of "after", "args"'),
        ("faults/add", b'{"on": "pull.request", "do": "drop", "match": "x"}', 'field "match" of faults/add'),
        ("action/disconnect", b'{"nobody": 1}', 'unknown field "nobody" in action/disconnect'),
        ("action/nope", b"{}", "unknown action"),
        ("nope/nope", b"{}", "unknown control operation"),
        ("scenario/start", b'{"toml": "[[[["}', ""),
    ],
)
async def test_bad_input_gets_400_and_no_traceback(
    caplog: pytest.LogCaptureFixture, path: str, body: bytes, text: str
) -> None:
    caplog.set_level(logging.INFO, logger="fakejs")
    async with Server(http_port=0) as server:
        status, _, doc = await call(server, "POST", f"/fakejs/{path}", body, JSON)
        assert status == 400 and text in doc["error"], doc
        nc = await nats.connect(server.url)
        reply = await nc.request("$FAKEJS." + path.replace("/", ".").upper(), body, timeout=2)
        assert text in json.loads(reply.data)["error"]
        await nc.close()
        assert server.errors == []
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


async def test_a_body_over_a_megabyte_gets_413() -> None:
    async with Server(http_port=0) as server:
        status, _, body = await call(server, "POST", "/fakejs/faults/add", b" " * ((1 << 20) + 1), JSON)
        assert status == 413 and body == b"413 Request Entity Too Large"
        assert (await call(server, "GET", "/fakejs/state"))[0] == 200
