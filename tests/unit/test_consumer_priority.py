"""Priority groups: pin assignment and expiry, overflow thresholds, and the checks on a pull's group fields."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from fakejs.gocompat import gotime
from fakejs.gocompat.gotime import NS
from fakejs.jetstream.consumer.priority_groups import PriorityGroups, check_pull, wanted
from fakejs.jetstream.consumer.pull_requests import WaitingRequest
from fakejs.testkit.clock import ManualClock
from tests.harness.consumer_parts import START_NS, FakeConsumer, Recorder, consumer_config


@dataclass
class Rig:
    consumer: FakeConsumer
    clock: ManualClock
    groups: PriorityGroups
    pinned: Recorder
    unpinned: Recorder


def rig(**fields: Any) -> Rig:
    fields.setdefault("priority_groups", ["G"])
    consumer = FakeConsumer(consumer_config(durable_name="D", ack_policy="explicit", **fields))
    clock = ManualClock(start_ns=START_NS)
    pins = iter(f"PIN{i}" for i in range(1, 100))
    pinned, unpinned = Recorder(), Recorder()
    groups = PriorityGroups(consumer, clock, new_pin_id=lambda: next(pins), on_pinned=pinned, on_unpinned=unpinned)
    return Rig(consumer, clock, groups, pinned, unpinned)


def pull(group: str = "G", pin: str = "", min_pending: int = 0, min_ack_pending: int = 0) -> WaitingRequest:
    fields = {"group": group, "id": pin, "min_pending": min_pending, "min_ack_pending": min_ack_pending, "priority": 0}
    return WaitingRequest(reply="inbox", batch_left=1, bytes_left=0, expires=None, group=fields)


def test_the_first_pull_of_a_group_is_pinned_and_others_wait_or_are_refused() -> None:
    r = rig(priority_policy="pinned_client", priority_timeout=2 * NS)
    first = pull()
    assert r.groups.admit(first) == "serve"
    assert r.groups.pin_id == "PIN1" and first.group is not None and first.group["id"] == "PIN1"
    assert r.pinned.calls == [("G", "PIN1")]
    assert r.groups.admit(pull()) == "skip"  # no id: waits for the pin to go
    assert r.groups.admit(pull(pin="OTHER")) == "refuse"
    assert r.groups.admit(pull(pin="PIN1")) == "serve"
    assert r.groups.stamp(None) == b"NATS/1.0\r\nNats-Pin-Id: PIN1\r\n\r\n"


def test_a_pin_expires_when_its_client_stops_pulling() -> None:
    r = rig(priority_policy="pinned_client", priority_timeout=2 * NS)
    r.groups.admit(pull())
    r.clock.advance(1.5)
    assert r.groups.check_pin({"group": "G", "id": "PIN1"}) is None  # a pull with the pin keeps it
    r.clock.advance(1.9)
    assert r.groups.pin_id == "PIN1" and r.unpinned.calls == []
    r.clock.advance(0.2)
    assert r.groups.pin_id == "" and r.unpinned.calls == [("G", "timeout")]
    assert r.consumer.kicks == 1
    assert r.groups.admit(pull()) == "serve" and r.groups.pin_id == "PIN2"


def test_a_pull_with_another_pin_id_is_refused_on_arrival() -> None:
    r = rig(priority_policy="pinned_client")
    r.groups.admit(pull())
    assert r.groups.check_pin({"group": "G", "id": "OTHER"}) == b"NATS/1.0 423 Nats-Pin-Id mismatch\r\n\r\n"
    assert r.groups.check_pin({"group": "G", "id": ""}) is None


def test_a_pin_handed_to_a_request_that_is_then_dropped_is_taken_back() -> None:
    r = rig(priority_policy="pinned_client")
    request = pull()
    r.groups.admit(request)
    r.groups.request_dropped(request)
    assert r.groups.pin_id == ""
    r.clock.advance(3600)
    assert r.unpinned.calls == []  # its timer went with it


def test_unpin_and_expire_announce_why_the_pin_went() -> None:
    r = rig(priority_policy="pinned_client")
    r.groups.admit(pull())
    r.groups.unpin("G")
    assert r.unpinned.calls == [("G", "admin")] and r.groups.pin_id == ""
    r.groups.unpin("G")  # an advisory even when nobody is pinned
    r.groups.expire("G")  # but no timeout without a pin
    assert r.unpinned.calls == [("G", "admin"), ("G", "admin")]
    r.groups.admit(pull())
    r.groups.expire("G")
    assert r.unpinned.calls[-1] == ("G", "timeout")


def test_overflow_serves_a_pull_only_past_its_thresholds() -> None:
    r = rig(priority_policy="overflow")
    r.consumer.num_pending = 3
    assert r.groups.admit(pull(min_pending=5)) == "skip"
    r.consumer.num_pending = 4  # with the message at hand, 5 are pending
    assert r.groups.admit(pull(min_pending=5)) == "serve"
    assert r.groups.admit(pull(min_ack_pending=2)) == "skip"
    r.consumer.num_ack_pending = 2
    assert r.groups.admit(pull(min_ack_pending=2)) == "serve"
    assert r.groups.admit(pull()) == "serve"
    assert r.groups.stamp(None) is None  # only pinned deliveries carry a pin header


def test_info_reports_the_first_group_and_its_pin() -> None:
    r = rig(priority_policy="pinned_client", priority_groups=["G", "H"])
    assert r.groups.state() == [{"group": "G", "pinned_ts": gotime.rfc3339(0)}]
    r.clock.advance(1)
    r.groups.admit(pull())
    pinned_ts = gotime.rfc3339(START_NS + NS)
    assert r.groups.state() == [{"group": "G", "pinned_client_id": "PIN1", "pinned_ts": pinned_ts}]


def test_a_pin_outlives_a_switch_to_no_policy() -> None:
    assert wanted(consumer_config(), pinned=False) is False
    assert wanted(consumer_config(), pinned=True) is True
    assert wanted(consumer_config(priority_policy="overflow", priority_groups=["G"]), pinned=False) is True


@pytest.mark.parametrize(
    ("policy", "group", "reason"),
    [
        ("none", {"min_pending": 1}, "Not a Overflow Priority consumer"),
        ("overflow", {"id": "PIN"}, "Not a Pinned Client Priority consumer"),
        ("overflow", {"priority": 10}, "Priority must be between 0 and 9"),
        ("overflow", {"group": ""}, "Priority Group missing"),
        ("overflow", {"group": "X"}, "Invalid Priority Group"),
    ],
)
def test_a_pull_s_group_fields_must_fit_the_policy(policy: str, group: dict[str, Any], reason: str) -> None:
    config = consumer_config(priority_policy=policy, priority_groups=["G"])
    fields = {"group": "G", "id": "", "min_pending": 0, "min_ack_pending": 0, "priority": 0, **group}
    assert check_pull(config, fields, None) == f"NATS/1.0 400 Bad Request - {reason}\r\n\r\n".encode()


def test_a_pull_without_group_fields_passes_any_policy_check() -> None:
    config = consumer_config(priority_policy="none")
    assert check_pull(config, None, None) is None
    fields = {"group": "G", "id": "", "min_pending": 0, "min_ack_pending": 0, "priority": 0}
    assert check_pull(consumer_config(priority_policy="overflow", priority_groups=["G"]), fields, None) is None
