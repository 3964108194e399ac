"""Operator (JWT) mode: an account JWT's JetStream limits, plain and tiered, in ``$JS.API.INFO`` and enforced.

A single server's streams have one replica: the ``R1`` tier of
``tiered_limits`` is the one that applies; the others are reported with
no usage.  Both targets run the same tests.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nats
import pytest

from fakejs.testkit.jwt import Account, Operator
from tests.harness.configured import configured_servers
from tests.harness.targets import Target
from tests.harness.wait import WAIT

UNLIMITED = {
    "max_memory": -1, "max_storage": -1, "max_streams": -1, "max_consumers": -1, "max_ack_pending": -1,
    "memory_max_stream_bytes": -1, "storage_max_stream_bytes": -1, "max_bytes_required": False,
}  # fmt: skip
NOT_SET = dict.fromkeys(UNLIMITED, 0) | {"max_bytes_required": False}
UNUSED = {"memory": 0, "storage": 0, "reserved_memory": 0, "reserved_storage": 0, "streams": 0, "consumers": 0}
# What an account with tiered limits leaves out of its own JetStream limits (nats-io/jwt's omitempty).
TIERED_ONLY = {"mem_storage": 0, "disk_storage": 0, "streams": 0, "consumer": 0}


@pytest.fixture
async def start(target_kind: str, tmp_path: Path) -> Any:
    async with configured_servers(target_kind, tmp_path) as start_config:

        async def start_with(operator: Operator, *accounts: Account) -> Target:
            system = operator.account("SYS")
            config = operator.server_config(system_account=system, accounts=[system, *accounts])
            return await start_config(config)

        yield start_with


async def ask(target: Target, account: Account, tmp_path: Path, *requests: tuple[str, Any]) -> list[dict[str, Any]]:
    """Each request's JSON answer, from a user of ``account``."""
    creds = account.user("u").write_creds(tmp_path / "u.creds")
    nc = await nats.connect(target.url, user_credentials=creds, allow_reconnect=False)
    try:
        answers = []
        for subject, body in requests:
            reply = await nc.request(subject, json.dumps(body).encode() if body is not None else b"", timeout=WAIT)
            answers.append(json.loads(reply.data))
        return answers
    finally:
        await nc.close()


def stream(name: str, **config: Any) -> tuple[str, Any]:
    return f"$JS.API.STREAM.CREATE.{name}", {"name": name, "subjects": [name.lower()], "storage": "memory", **config}


INFO = ("$JS.API.INFO", None)


async def test_plain_limits_are_the_accounts_limits(start: Any, tmp_path: Path) -> None:
    operator = Operator("O")
    limits = {"mem_storage": 4096, "streams": 2, "max_ack_pending": 9, "mem_max_stream_bytes": 1024}
    app = operator.account("APP", jetstream=True, limits=limits)
    target = await start(operator, app)
    [info] = await ask(target, app, tmp_path, INFO)
    assert info["limits"] == UNLIMITED | {
        "max_memory": 4096, "max_streams": 2, "max_ack_pending": 9, "memory_max_stream_bytes": 1024,
    }  # fmt: skip
    assert "tiers" not in info


async def test_tiered_limits_in_account_info(start: Any, tmp_path: Path) -> None:
    operator = Operator("O")
    tiers = {
        "R1": {"mem_storage": 1000, "disk_storage": -1, "streams": 2},
        "R3": {"mem_storage": -1, "max_ack_pending": 5},
    }
    app = operator.account("APP", jetstream=True, limits={**TIERED_ONLY, "tiered_limits": tiers})
    target = await start(operator, app)
    created, info = await ask(target, app, tmp_path, stream("S", max_bytes=100), INFO)
    assert created["did_create"] is True
    assert info["limits"] == NOT_SET
    assert (info["streams"], info["reserved_memory"]) == (1, 100)
    assert info["tiers"] == {
        "R1": UNUSED | {"streams": 1, "reserved_memory": 100, "limits": NOT_SET | {
            "max_memory": 1000, "max_storage": -1, "max_streams": 2, "max_ack_pending": -1,
            "memory_max_stream_bytes": -1, "storage_max_stream_bytes": -1,
        }},
        "R3": UNUSED | {"limits": NOT_SET | {
            "max_memory": -1, "max_ack_pending": 5, "memory_max_stream_bytes": -1, "storage_max_stream_bytes": -1,
        }},
    }  # fmt: skip


async def test_the_r1_tier_limits_a_single_servers_streams(start: Any, tmp_path: Path) -> None:
    operator = Operator("O")
    tiers = {"R1": {"mem_storage": -1, "disk_storage": -1, "streams": 1}}
    app = operator.account("APP", jetstream=True, limits={**TIERED_ONLY, "tiered_limits": tiers})
    target = await start(operator, app)
    first, second = await ask(target, app, tmp_path, stream("S"), stream("T"))
    assert first["did_create"] is True
    assert second["error"] == {"code": 400, "err_code": 10027, "description": "maximum number of streams reached"}


async def test_without_an_r1_tier_no_stream_is_created(start: Any, tmp_path: Path) -> None:
    operator = Operator("O")
    tiers = {"R3": {"mem_storage": -1, "disk_storage": -1}}
    app = operator.account("APP", jetstream=True, limits={**TIERED_ONLY, "tiered_limits": tiers})
    target = await start(operator, app)
    one, three = await ask(target, app, tmp_path, stream("S"), stream("T", num_replicas=3))
    assert one["error"] == {
        "code": 400, "err_code": 10120, "description": "no JetStream default or applicable tiered limit present",
    }  # fmt: skip
    assert three["error"]["err_code"] == 10074  # replicas > 1 not supported in non-clustered mode


async def test_tiers_without_storage_leave_jetstream_off(start: Any, tmp_path: Path) -> None:
    operator = Operator("O")
    app = operator.account("APP", jetstream=True, limits={**TIERED_ONLY, "tiered_limits": {"R1": {"streams": 3}}})
    target = await start(operator, app)
    [info] = await ask(target, app, tmp_path, INFO)
    assert info["error"] == {"code": 503, "err_code": 10039, "description": "JetStream not enabled for account"}


async def test_tiered_limits_win_over_plain_ones(start: Any, tmp_path: Path) -> None:
    """nats-io/jwt drops the plain JetStream limits of an account JWT with tiered ones."""
    operator = Operator("O")
    limits = {"mem_storage": -1, "disk_storage": -1, "streams": 5, "tiered_limits": {"R1": {"mem_storage": 100}}}
    app = operator.account("APP", jetstream=True, limits=limits)
    target = await start(operator, app)
    [info] = await ask(target, app, tmp_path, INFO)
    assert info["limits"] == NOT_SET
    assert info["tiers"]["R1"]["limits"] == NOT_SET | {
        "max_memory": 100, "max_ack_pending": -1, "memory_max_stream_bytes": -1, "storage_max_stream_bytes": -1,
    }  # fmt: skip


async def test_plain_limits_left_out_are_zero(start: Any, tmp_path: Path) -> None:
    """nats-server reads a left-out JetStream limit as 0: no file storage here, any number of streams."""
    operator = Operator("O")
    app = operator.account("APP", limits={"mem_storage": 1000})
    target = await start(operator, app)
    file_stream, memory_stream, info = await ask(target, app, tmp_path, stream("T", storage="file"), stream("S"), INFO)
    assert file_stream["error"] == {
        "code": 500,
        "err_code": 10047,
        "description": "insufficient storage resources available",
    }
    assert memory_stream["did_create"] is True
    assert info["limits"] == NOT_SET | {
        "max_memory": 1000, "max_ack_pending": -1, "memory_max_stream_bytes": -1, "storage_max_stream_bytes": -1,
    }  # fmt: skip
