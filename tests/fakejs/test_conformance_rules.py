"""The conformance watch's rules on pulls and acks, each broken by a wrong client and kept by a right one.

Every client is core NATS by hand (pulls are ``PUB $JS.API.CONSUMER.MSG.NEXT``
with a JSON body, acks are publishes to the message's reply subject), so a
test shows the exact bytes that break a rule: the violation's evidence is
that ``PUB`` (or the ``MSG`` the client failed to answer).  Time is a
:class:`~fakejs.testkit.clock.ManualClock`: windows pass in an instant.

Pinned: ``pull-limits``, ``pull-expires``, ``pull-buffer``, ``pull-threshold``,
``heartbeat-configured``, ``no-ack-after-term``, ``ack-sync``,
``ordered-reset``, ``no-pull-storm``; the report as JSON and over
``$FAKEJS.CONFORMANCE`` / ``$FAKEJS.CONFORMANCE.EXPECT``.
"""

from __future__ import annotations

import json

from fakejs import ManualClock, Server
from fakejs.testkit.conformance import RULES
from tests.fakejs.clients import eventually
from tests.fakejs.conformance_kit import (
    CONSUMER,
    STREAM,
    Puller,
    api,
    check,
    connect,
    only,
    publish,
    seconds,
    setup,
    watch_of,
)


def test_the_rules_under_test() -> None:
    assert len(RULES) == 17


# -- pull-limits --------------------------------------------------------------------------------


async def test_pull_over_max_batch_breaks_pull_limits() -> None:
    async with Server(conformance=True, clock=ManualClock()) as server:
        nc = await connect(server.url, "greedy")
        await setup(nc, max_batch=5)
        puller = await Puller(nc).start()
        sent = await puller.pull(batch=10, expires=seconds(1))
        await puller.wait_status("409 Exceeded MaxRequestBatch")
        check(only(server.conformance(), "pull-limits"), "greedy", sent)
        await nc.close()


async def test_max_bytes_without_batch_breaks_pull_limits() -> None:
    async with Server(conformance=True, clock=ManualClock()) as server:
        nc = await connect(server.url, "bytes-only")
        await setup(nc)
        puller = await Puller(nc).start()
        sent = await puller.pull(max_bytes=1024, expires=seconds(1))
        await nc.flush()
        violation = only(server.conformance(), "pull-limits")
        check(violation, "bytes-only", sent)
        assert "max_bytes without a batch" in violation.detail
        await nc.close()


async def test_pulls_within_the_consumer_limits_keep_pull_limits() -> None:
    async with Server(conformance=True, clock=ManualClock()) as server:
        nc = await connect(server.url, "modest")
        await setup(nc, max_batch=5, max_bytes=4096, max_expires=seconds(2))
        puller = await Puller(nc).start()
        await puller.pull(batch=5, max_bytes=4096, expires=seconds(2))
        await nc.flush()
        assert not server.conformance(), server.conformance().text()
        await nc.close()


# -- pull-expires -------------------------------------------------------------------------------


async def test_waiting_pull_without_expires_breaks_pull_expires() -> None:
    async with Server(conformance=True, clock=ManualClock()) as server:
        nc = await connect(server.url, "forever")
        await setup(nc)
        puller = await Puller(nc).start()
        sent = await puller.pull(batch=1)
        check(only(server.conformance(), "pull-expires"), "forever", sent)
        await nc.close()


async def test_pulls_with_expires_or_no_wait_keep_pull_expires() -> None:
    async with Server(conformance=True, clock=ManualClock()) as server:
        nc = await connect(server.url, "bounded")
        await setup(nc)
        puller = await Puller(nc).start()
        await puller.pull(batch=1, no_wait=True)
        await puller.wait_status("404")
        await puller.pull(batch=1, expires=seconds(1))
        assert not server.conformance(), server.conformance().text()
        await nc.close()


# -- pull-buffer and pull-threshold ---------------------------------------------------------------


async def consume_six_of_ten(server: Server, name: str) -> Puller:
    """A loop with a buffer of 10 that got 6: 4 still owed, the threshold (5) reached."""
    watch_of(server).expect(STREAM, CONSUMER, consume=True)
    nc = await connect(server.url, name)
    await setup(nc)
    await publish(nc, 6)
    puller = await Puller(nc).start()
    await puller.pull(batch=10, expires=seconds(30), idle_heartbeat=seconds(5))
    await puller.wait_messages(6)
    return puller


async def test_top_up_past_the_buffer_breaks_pull_buffer() -> None:
    async with Server(conformance=True, clock=ManualClock()) as server:
        puller = await consume_six_of_ten(server, "overfill")
        sent = await puller.pull(batch=10, expires=seconds(30), idle_heartbeat=seconds(5))
        violation = only(server.conformance(), "pull-buffer")
        check(violation, "overfill", sent)
        assert "14 over a buffer of 10" in violation.detail
        await puller.nc.close()


async def test_top_up_to_the_buffer_at_the_threshold_keeps_both_rules() -> None:
    async with Server(conformance=True, clock=ManualClock()) as server:
        puller = await consume_six_of_ten(server, "refill")
        await puller.pull(batch=6, expires=seconds(30), idle_heartbeat=seconds(5))
        assert not server.conformance(), server.conformance().text()
        await puller.nc.close()


async def test_top_up_above_the_threshold_breaks_pull_threshold() -> None:
    async with Server(conformance=True, clock=ManualClock()) as server:
        watch_of(server).expect(STREAM, CONSUMER, consume=True)
        nc = await connect(server.url, "eager")
        await setup(nc)
        await publish(nc, 2)
        puller = await Puller(nc).start()
        await puller.pull(batch=10, expires=seconds(30), idle_heartbeat=seconds(5))
        await puller.wait_messages(2)
        sent = await puller.pull(batch=2, expires=seconds(30), idle_heartbeat=seconds(5))  # 8 of 10 still owed
        violation = only(server.conformance(), "pull-threshold")
        check(violation, "eager", sent)
        assert "8 of a 10 messages buffer still owed" in violation.detail
        await nc.close()


# -- heartbeat-configured ---------------------------------------------------------------------------


async def test_long_pull_without_heartbeat_breaks_heartbeat_configured() -> None:
    async with Server(conformance=True, clock=ManualClock()) as server:
        nc = await connect(server.url, "deaf")
        await setup(nc)
        puller = await Puller(nc).start()
        sent = await puller.pull(batch=1, expires=seconds(60))
        check(only(server.conformance(), "heartbeat-configured"), "deaf", sent)
        await nc.close()


async def test_consume_loop_pull_without_heartbeat_breaks_heartbeat_configured() -> None:
    async with Server(conformance=True, clock=ManualClock()) as server:
        watch_of(server).expect(STREAM, CONSUMER, consume=True)
        nc = await connect(server.url, "deaf-loop")
        await setup(nc)
        puller = await Puller(nc).start()
        sent = await puller.pull(batch=10, expires=seconds(5))
        check(only(server.conformance(), "heartbeat-configured"), "deaf-loop", sent)
        await nc.close()


async def test_long_pull_with_heartbeat_keeps_heartbeat_configured() -> None:
    async with Server(conformance=True, clock=ManualClock()) as server:
        watch_of(server).expect(STREAM, CONSUMER, consume=True)
        nc = await connect(server.url, "listening")
        await setup(nc)
        puller = await Puller(nc).start()
        await puller.pull(batch=10, expires=seconds(60), idle_heartbeat=seconds(5))
        assert not server.conformance(), server.conformance().text()
        await nc.close()


# -- acknowledgements ---------------------------------------------------------------------------


async def one_message(server: Server, name: str) -> Puller:
    nc = await connect(server.url, name)
    await setup(nc)
    await publish(nc, 1)
    puller = await Puller(nc).start()
    await puller.pull(batch=1, expires=seconds(1))
    await puller.wait_messages(1)
    return puller


async def test_ack_after_term_breaks_no_ack_after_term() -> None:
    async with Server(conformance=True, clock=ManualClock()) as server:
        puller = await one_message(server, "undecided")
        msg = puller.messages()[0]
        await puller.nc.publish(msg.reply, b"+TERM")
        await puller.nc.publish(msg.reply, b"+ACK")
        await puller.nc.flush()
        violation = only(server.conformance(), "no-ack-after-term")
        check(violation, "undecided", f"PUB {msg.reply} 4\r\n+ACK\r\n".encode())
        await puller.nc.close()


async def test_term_alone_keeps_no_ack_after_term() -> None:
    async with Server(conformance=True, clock=ManualClock()) as server:
        puller = await one_message(server, "decided")
        await puller.nc.publish(puller.messages()[0].reply, b"+TERM")
        await puller.nc.flush()
        assert not server.conformance(), server.conformance().text()
        await puller.nc.close()


async def test_ack_without_reply_breaks_ack_sync() -> None:
    async with Server(conformance=True, clock=ManualClock()) as server:
        watch_of(server).expect(STREAM, CONSUMER, ack_sync=True)
        puller = await one_message(server, "fire-and-forget")
        msg = puller.messages()[0]
        await puller.nc.publish(msg.reply, b"+ACK")
        await puller.nc.flush()
        check(only(server.conformance(), "ack-sync"), "fire-and-forget", f"PUB {msg.reply} 4\r\n+ACK\r\n".encode())
        await puller.nc.close()


async def test_double_ack_keeps_ack_sync() -> None:
    async with Server(conformance=True, clock=ManualClock()) as server:
        watch_of(server).expect(STREAM, CONSUMER, ack_sync=True)
        puller = await one_message(server, "careful")
        confirmed = await puller.nc.request(puller.messages()[0].reply, b"+ACK", timeout=2)
        assert confirmed.data == b""
        assert not server.conformance(), server.conformance().text()
        await puller.nc.close()


# -- ordered-reset --------------------------------------------------------------------------------


ORDERED = {"ack_policy": "none", "mem_storage": True, "deliver_policy": "all", "inactive_threshold": seconds(60)}


async def ordered_with_a_gap(server: Server, name: str) -> tuple[Puller, str]:
    """An ordered consumer whose second delivery is dropped: the client sees 1 then 3."""
    nc = await connect(server.url, name)
    await api(nc, f"$JS.API.STREAM.CREATE.{STREAM}", {"name": STREAM, "subjects": ["s.>"], "storage": "memory"})
    created = await api(nc, f"$JS.API.CONSUMER.CREATE.{STREAM}", {"stream_name": STREAM, "config": ORDERED})
    consumer = created["name"]
    await publish(nc, 3)
    server.control.add_fault(on="consumer.deliver", do="drop", match={"consumer": consumer}, after=1, times=1)
    puller = await Puller(nc, consumer).start()
    await puller.pull(batch=3, expires=seconds(5))
    await puller.wait_messages(2)
    assert [m.metadata.sequence.consumer for m in puller.messages()] == [1, 3]
    return puller, consumer


async def test_gap_without_reset_breaks_ordered_reset() -> None:
    clock = ManualClock()
    async with Server(conformance=True, clock=clock) as server:
        puller, consumer = await ordered_with_a_gap(server, "unordered")
        assert not server.conformance()  # the reset has the window to come
        clock.advance(watch_of(server).settings.window + 0.1)
        violation = only(server.conformance(), "ordered-reset")
        third = puller.messages()[1]
        check(violation, "unordered", f"MSG s.a {third.reply} 2\r\nm2\r\n".encode(), consumer)
        assert "delivery 3 after 1: no reset from stream sequence 2" in violation.detail
        await puller.nc.close()


async def test_reset_from_the_wrong_sequence_breaks_ordered_reset() -> None:
    async with Server(conformance=True, clock=ManualClock()) as server:
        puller, consumer = await ordered_with_a_gap(server, "skipper")
        config = {**ORDERED, "deliver_policy": "by_start_sequence", "opt_start_seq": 4}
        body = json.dumps({"stream_name": STREAM, "config": config}).encode()
        await puller.nc.request(f"$JS.API.CONSUMER.CREATE.{STREAM}", body, timeout=2)
        violation = only(server.conformance(), "ordered-reset")
        check(violation, "skipper", body, consumer)
        assert violation.detail == "reset from stream sequence 4, not 2"
        await puller.nc.close()


async def test_reset_after_the_last_sequence_keeps_ordered_reset() -> None:
    clock = ManualClock()
    async with Server(conformance=True, clock=clock) as server:
        puller, _ = await ordered_with_a_gap(server, "ordered")
        config = {**ORDERED, "deliver_policy": "by_start_sequence", "opt_start_seq": 2}
        await api(puller.nc, f"$JS.API.CONSUMER.CREATE.{STREAM}", {"stream_name": STREAM, "config": config})
        clock.advance(watch_of(server).settings.window + 0.1)
        assert not server.conformance(), server.conformance().text()
        await puller.nc.close()


# -- no-pull-storm -----------------------------------------------------------------------------------


async def empty_pulls(server: Server, clock: ManualClock, name: str, count: int, pause: float) -> list[bytes]:
    """``count`` no_wait pulls of an empty consumer, each after the last one's 404 and ``pause`` seconds."""
    watch_of(server).settings.storm_limit = 3
    nc = await connect(server.url, name)
    await setup(nc)
    puller = await Puller(nc).start()
    sent = []
    for _ in range(count):
        sent.append(await puller.pull(batch=1, no_wait=True))
        await eventually(lambda: len(puller.statuses()) >= len(sent), what="the 404")
        clock.advance(pause)
    return sent


async def test_empty_pulls_retried_at_once_break_no_pull_storm() -> None:
    clock = ManualClock()
    async with Server(conformance=True, clock=clock) as server:
        sent = await empty_pulls(server, clock, "stormy", 5, 0.0)
        violation = only(server.conformance(), "no-pull-storm")
        check(violation, "stormy", sent[3])
        assert violation.detail == "4 pulls ended empty within a second (limit 3)"


async def test_empty_pulls_spaced_out_keep_no_pull_storm() -> None:
    clock = ManualClock()
    async with Server(conformance=True, clock=clock) as server:
        await empty_pulls(server, clock, "patient", 6, 0.4)
        assert not server.conformance(), server.conformance().text()


# -- the report -------------------------------------------------------------------------------------


async def test_report_as_json_names_rule_source_client_bytes_and_time() -> None:
    async with Server(conformance=True, clock=ManualClock()) as server:
        nc = await connect(server.url, "forever")
        await setup(nc)
        puller = await Puller(nc).start()
        sent = await puller.pull(batch=1)
        doc = server.conformance().describe()
        assert doc["watched"] is True
        assert set(doc["settings"]) == {"window", "backoff", "race", "threshold", "storm_limit"}
        assert set(doc["rules"]) == set(RULES)
        [violation] = doc["violations"]
        assert violation["rule"] == "pull-expires"
        assert violation["statement"] == RULES["pull-expires"].statement
        assert violation["source"] == RULES["pull-expires"].source
        assert violation["client"]["name"] == "forever"
        assert (violation["stream"], violation["consumer"]) == (STREAM, CONSUMER)
        assert violation["bytes"] == sent.decode()
        assert violation["time"].endswith("Z")
        assert json.loads(json.dumps(doc)) == doc
        assert "[pull-expires] forever S/C: a waiting pull without expires" in server.conformance().text()
        await nc.close()


async def test_report_over_nats_and_expect_request() -> None:
    async with Server(conformance=True, clock=ManualClock()) as server:
        nc = await connect(server.url, "remote")
        await setup(nc)
        expected = await nc.request(
            "$FAKEJS.CONFORMANCE.EXPECT", json.dumps({"stream": STREAM, "consumer": CONSUMER, "consume": True}).encode()
        )
        assert json.loads(expected.data) == {"stream": STREAM, "consumer": CONSUMER, "consume": True, "ack_sync": False}
        puller = await Puller(nc).start()
        sent = await puller.pull(batch=10, expires=seconds(5))  # a consume loop's pull: heartbeats asked for
        reply = json.loads((await nc.request("$FAKEJS.CONFORMANCE", b"")).data)
        assert reply["violations"] == server.conformance().describe()["violations"]
        assert [v["rule"] for v in reply["violations"]] == ["heartbeat-configured"]
        assert reply["violations"][0]["bytes"] == sent.decode()
        await nc.close()


async def test_unwatched_server_says_so_and_refuses_expectations() -> None:
    async with Server() as server:
        nc = await connect(server.url, "anyone")
        reply = json.loads((await nc.request("$FAKEJS.CONFORMANCE", b"")).data)
        assert (reply["watched"], reply["violations"]) == (False, [])
        body = json.dumps({"stream": STREAM, "consumer": CONSUMER, "ack_sync": True}).encode()
        refused = json.loads((await nc.request("$FAKEJS.CONFORMANCE.EXPECT", body)).data)
        assert "conformance=True" in refused["error"]
        assert server.conformance().text().startswith("client conformance: not watched")
        await nc.close()
