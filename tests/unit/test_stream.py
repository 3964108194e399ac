"""A stream without a server: publish rules, limits, expiry and the API-facing operations.

The stream runs on a real router and a manual clock; its JetStream is a
small stand-in implementing :class:`StreamHost` that records what the
stream asks of it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from fakejs.jetstream.storage.store import MessageStore, StoredMessage
from fakejs.jetstream.stream.stream import Stream
from fakejs.protocol import headers as hdrs
from tests.harness.stream_host import SECOND, T0, Host, config


class Listener:
    """A consumer that records what its stream tells it."""

    def __init__(self, name: str = "C", subjects: tuple[str, ...] = (">",)) -> None:
        self.name = name
        self.config = {"name": name}
        self.created_ns = T0
        self.subjects = subjects
        self.events: list[tuple[Any, ...]] = []

    def signaled(self, subject: str) -> bool:
        return any(s == ">" or s == subject for s in self.subjects)

    def message_stored(self, msg: StoredMessage) -> None:
        self.events.append(("stored", msg.seq))

    def message_removed(self, seq: int, subject: str = "") -> None:
        self.events.append(("removed", seq))

    def purged(self, start: int, last_seq: int, wider: bool) -> None:
        self.events.append(("purged", start, last_seq, wider))

    def is_equal_or_subset_match(self, subject: str) -> bool:
        return True

    def is_filtered_match(self, subject: str) -> bool:
        return False

    def delete(self, reason: str = "") -> None:
        self.events.append(("deleted",))


def make(**fields: Any) -> tuple[Stream, Host]:
    host = Host()
    cfg = config(**fields)
    stream = Stream(host, cfg, host.clock.time_ns(), MessageStore(cfg["storage"], cfg["first_seq"]))
    stream.attach()
    return stream, host


def publish(stream: Stream, subject: str = "s.a", data: bytes = b"x", **headers: str) -> dict[str, Any]:
    """Publish with a reply subject; returns the decoded PubAck."""
    block = hdrs.build([(k.replace("_", "-"), v) for k, v in headers.items()]) if headers else None
    ack = stream.ingest(subject, "reply", block, data)
    assert ack is not None
    return dict(json.loads(ack))


def error_of(ack: dict[str, Any]) -> tuple[int, str]:
    assert ack["seq"] == 0 and ack["stream"] == "S", ack
    return ack["error"]["err_code"], ack["error"]["description"]


def seqs(stream: Stream) -> list[int]:
    return [m.seq for m in stream.store]


# -- acknowledgements ------------------------------------------------------------------------


def test_each_message_is_acknowledged_with_its_sequence() -> None:
    stream, _ = make()
    assert stream.ingest("s.a", "reply", None, b"1") == b'{"stream":"S","seq":1}'
    assert publish(stream) == {"stream": "S", "seq": 2}
    assert stream.store.msgs == 2


def test_no_reply_or_no_ack_means_no_pub_ack_but_the_message_is_stored() -> None:
    stream, _ = make()
    assert stream.ingest("s.a", "", None, b"x") is None
    quiet, _ = make(no_ack=True)
    assert quiet.ingest("s.a", "reply", None, b"x") is None
    assert stream.store.msgs == quiet.store.msgs == 1


def test_a_publish_through_the_router_is_acknowledged_before_consumers_hear_of_it() -> None:
    stream, host = make()
    listener = Listener()
    stream.register_consumer(listener)
    heard: list[tuple[Any, ...]] = []
    host.router.subscribe_internal("inbox", lambda s, r, h, p, o: heard.append(("ack", json.loads(p)["seq"])))
    original = listener.message_stored
    listener.message_stored = lambda msg: (heard.append(("stored", msg.seq)), original(msg))  # type: ignore[method-assign]
    host.router.publish("s.a", "inbox", None, b"x", None)
    assert heard == [("ack", 1), ("stored", 1)]


def test_status_lines_and_client_info_are_not_stored() -> None:
    stream, _ = make()
    block = b"NATS/1.0 503 oops\r\nNats-Request-Info: {}\r\nk: v\r\n\r\n"
    stream.ingest("s.a", "reply", block, b"x")
    stored = stream.store.get(1)
    assert stored is not None and stored.hdr is not None
    assert hdrs.pairs(stored.hdr) == [("k", "v")]
    assert hdrs.status(stored.hdr)[0] == 0


# -- duplicates and expectations ----------------------------------------------------------------


def test_a_repeated_message_id_is_a_duplicate_inside_the_window() -> None:
    stream, host = make(duplicate_window=2 * SECOND)
    assert publish(stream, Nats_Msg_Id="a") == {"stream": "S", "seq": 1}
    assert publish(stream, Nats_Msg_Id="a") == {"stream": "S", "seq": 1, "duplicate": True}
    assert stream.store.msgs == 1
    host.clock.advance(2.5)
    assert publish(stream, Nats_Msg_Id="a") == {"stream": "S", "seq": 2}


def test_expected_last_sequence_and_subject_sequence() -> None:
    stream, _ = make()
    publish(stream, "s.a")
    publish(stream, "s.b")
    assert error_of(publish(stream, Nats_Expected_Last_Sequence="1")) == (10071, "wrong last sequence: 2")
    assert publish(stream, Nats_Expected_Last_Sequence="2")["seq"] == 3
    assert error_of(publish(stream, "s.a", Nats_Expected_Last_Subject_Sequence="1")) == (
        10071,
        "wrong last sequence: 3",
    )
    assert publish(stream, "s.b", Nats_Expected_Last_Subject_Sequence="2")["seq"] == 4


def test_expected_stream_and_expected_last_message_id() -> None:
    stream, _ = make()
    assert error_of(publish(stream, Nats_Expected_Stream="T"))[0] == 10060
    publish(stream, Nats_Msg_Id="first")
    assert error_of(publish(stream, Nats_Expected_Last_Msg_Id="other")) == (10070, "wrong last msg ID: first")
    assert publish(stream, Nats_Expected_Last_Msg_Id="first")["seq"] == 2


# -- limits ------------------------------------------------------------------------------------


def test_discard_old_drops_the_oldest_over_max_msgs() -> None:
    stream, _ = make(max_msgs=2)
    listener = Listener()
    stream.register_consumer(listener)
    for _ in range(3):
        publish(stream)
    assert seqs(stream) == [2, 3]
    assert ("removed", 1) in listener.events


def test_discard_new_refuses_over_max_msgs_and_max_bytes() -> None:
    stream, _ = make(max_msgs=1, discard="new")
    publish(stream)
    assert error_of(publish(stream)) == (10077, "maximum messages exceeded")
    small, _ = make(max_bytes=40, discard="new")
    assert publish(small, data=b"x" * 10)["seq"] == 1
    assert error_of(publish(small, data=b"x" * 20)) == (10077, "maximum bytes exceeded")


def test_max_msgs_per_subject_keeps_the_newest_of_each_subject() -> None:
    stream, _ = make(max_msgs_per_subject=1)
    for subject in ("s.a", "s.b", "s.a"):
        publish(stream, subject)
    assert seqs(stream) == [2, 3]


def test_a_discard_new_stream_without_a_count_or_size_limit_keeps_each_subjects_newest() -> None:
    """A key-value bucket's shape: a subject's message replaces its last, with or without headers, and a
    consumer hears of each one replaced."""
    stream, _ = make(max_msgs_per_subject=1, discard="new", allow_rollup_hdrs=True, deny_delete=True)
    listener = Listener()
    stream.register_consumer(listener)
    for subject in ("s.a", "s.b", "s.a"):
        publish(stream, subject)
    assert publish(stream, "s.b", KV_Operation="DEL")["seq"] == 4
    assert seqs(stream) == [3, 4]
    assert [event for event in listener.events if event[0] == "removed"] == [("removed", 1), ("removed", 2)]


def test_discard_new_per_subject_refuses_a_full_subject() -> None:
    stream, _ = make(max_msgs_per_subject=1, discard="new", discard_new_per_subject=True)
    publish(stream, "s.a")
    assert error_of(publish(stream, "s.a")) == (10077, "maximum messages per subject exceeded")
    assert publish(stream, "s.b")["seq"] == 2


def test_max_msg_size_and_sealed_streams_refuse() -> None:
    stream, _ = make(max_msg_size=4)
    assert error_of(publish(stream, data=b"12345"))[0] == 10054
    sealed, _ = make()
    sealed.config["sealed"] = True
    assert error_of(publish(sealed))[0] == 10109


# -- roll-ups ---------------------------------------------------------------------------------------


def test_rollups_purge_the_subject_or_the_stream() -> None:
    stream, _ = make(allow_rollup_hdrs=True)
    for subject in ("s.a", "s.b", "s.a"):
        publish(stream, subject)
    publish(stream, "s.a", Nats_Rollup="sub")
    assert seqs(stream) == [2, 4]
    publish(stream, "s.c", Nats_Rollup="all")
    assert seqs(stream) == [5]


def test_rollups_need_permission_and_a_known_kind() -> None:
    stream, _ = make()
    assert error_of(publish(stream, Nats_Rollup="sub")) == (10111, "rollup not permitted")
    allowed, _ = make(allow_rollup_hdrs=True)
    assert error_of(publish(allowed, Nats_Rollup="odd")) == (10111, 'rollup value invalid: "odd"')


# -- expiry ------------------------------------------------------------------------------------


def test_max_age_removes_messages_on_the_clock() -> None:
    stream, host = make(max_age=2 * SECOND)
    publish(stream)
    host.clock.advance(1)
    publish(stream)
    host.clock.advance(1.5)
    assert seqs(stream) == [2]
    host.clock.advance(1)
    assert seqs(stream) == []


def test_message_ttls_need_the_stream_to_allow_them_and_expire_on_the_clock() -> None:
    stream, _ = make()
    assert error_of(publish(stream, Nats_TTL="1s")) == (10166, "per-message TTL is disabled")
    ttl, host = make(allow_msg_ttl=True, max_age=10 * SECOND)
    publish(ttl, "s.a", Nats_TTL="1s")
    publish(ttl, "s.b", Nats_TTL="never")
    publish(ttl, "s.c")
    host.clock.advance(1.5)
    assert seqs(ttl) == [2, 3]
    host.clock.advance(10)
    assert seqs(ttl) == [2]  # "never" outlives max_age


def test_an_invalid_ttl_is_refused() -> None:
    stream, _ = make(allow_msg_ttl=True)
    assert error_of(publish(stream, Nats_TTL="soon"))[0] == 10165


# -- retention ---------------------------------------------------------------------------------


def test_an_interest_stream_without_interest_uses_a_sequence_and_stores_nothing() -> None:
    stream, _ = make(retention="interest")
    assert publish(stream)["seq"] == 1
    assert stream.store.msgs == 0
    stream.register_consumer(Listener(subjects=("s.b",)))
    assert publish(stream, "s.a")["seq"] == 2
    assert publish(stream, "s.b")["seq"] == 3
    assert seqs(stream) == [3]


def test_consumer_acks_and_removals_are_decided_by_the_jetstream() -> None:
    stream, host = make()
    listener = Listener()
    stream.register_consumer(listener)
    stream.acked(listener, 7)
    stream.remove_consumer(listener)
    assert host.acked == [("C", 7)]
    assert host.removed == ["C"]


# -- the operations the API asks for ----------------------------------------------------------------


def test_purge_on_request_is_refused_when_sealed_or_denied() -> None:
    stream, _ = make()
    for subject in ("s.a", "s.b", "s.a"):
        publish(stream, subject)
    assert stream.purge_on_request("s.a", 0, 0) == 2
    assert seqs(stream) == [2]
    denied, _ = make(deny_purge=True)
    with pytest.raises(Exception, match="stream purge not permitted"):
        denied.purge_on_request("", 0, 0)


def test_erase_message_reports_a_missing_sequence_as_the_store_does() -> None:
    memory, _ = make()
    publish(memory)
    assert memory.erase_message(1) is None
    missing = memory.erase_message(1)
    assert missing is not None and missing.to_dict() == {
        "code": 400,
        "err_code": 10043,
        "description": "sequence 1 not found",
    }
    disk, _ = make(storage="file")
    publish(disk)
    publish(disk)
    eof = disk.erase_message(9)
    assert eof is not None and eof.to_dict()["err_code"] == 10057 and eof.description == "stream store EOF"
    denied, _ = make(deny_delete=True)
    with pytest.raises(Exception, match="message delete not permitted"):
        denied.erase_message(1)


def test_find_message_by_sequence_subject_and_time() -> None:
    stream, host = make()
    publish(stream, "s.a", b"1")
    host.clock.advance(1)
    publish(stream, "s.b", b"2")
    publish(stream, "s.a", b"3")
    assert stream.find_message(2, "", "", None).data == b"2"
    assert stream.find_message(0, "s.a", "", None).seq == 3
    assert stream.find_message(2, "", "s.a", None).seq == 3
    assert stream.find_message(0, "", "", T0 + SECOND).seq == 2
    with pytest.raises(Exception, match="no message found"):
        stream.find_message(9, "", "", None)


def test_subjects_page_counts_all_and_pages_from_an_offset() -> None:
    stream, _ = make()
    for subject in ("s.c", "s.a", "s.b", "s.a"):
        publish(stream, subject)
    assert stream.subjects_page("s.*", 0) == (3, {"s.c": 1, "s.a": 2, "s.b": 1})
    assert stream.subjects_page("s.*", 1) == (3, {"s.b": 1, "s.c": 1})
    info = stream.info(subjects={"s.a": 2})
    assert list(info["state"]) == [
        "messages",
        "bytes",
        "first_seq",
        "first_ts",
        "last_seq",
        "last_ts",
        "num_subjects",
        "subjects",
        "consumer_count",
    ]


def test_update_applies_new_limits_subjects_and_direct_get() -> None:
    stream, host = make()
    for _ in range(3):
        publish(stream)
    stream.update(config(max_msgs=1, subjects=["t.>"], allow_direct=True))
    assert seqs(stream) == [3]
    assert stream.ingest("t.a", "reply", None, b"x") is not None
    assert not host.router.has_interest("s.a")
    answers: list[tuple[bytes | None, bytes]] = []
    host.router.subscribe_internal("inbox", lambda s, r, h, p, o: answers.append((h, p)))
    host.router.publish("$JS.API.DIRECT.GET.S", "inbox", None, b'{"seq":4}', None)
    assert answers and answers[0][1] == b"x"
    assert hdrs.get(answers[0][0], "Nats-Sequence") == b"4"
    stream.update(config(max_msgs=1, subjects=["t.>"]))
    assert not host.router.has_interest("$JS.API.DIRECT.GET.S")
