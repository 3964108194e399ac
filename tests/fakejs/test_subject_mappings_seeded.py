"""Weighted subject mappings draw from the server's seeded generator: a seed fixes every choice."""

from __future__ import annotations

import json
import re

from fakejs.core.broker import Broker
from fakejs.core.configfile.load import load_text
from fakejs.core.options import ServerOptions
from fakejs.core.session import ClientSession
from fakejs.testkit.clock import ManualClock
from tests.harness.session_io import FakeIO

CONFIG = """
mappings {
  "w.*": [ {destination: "w.a.$1", weight: 30}, {destination: "w.b.$1", weight: 30},
           {destination: "w.r.{{random(1000)}}", weight: 20} ]
}
"""
MSG = re.compile(rb"MSG (\S+) ")


def _choices(seed: int, count: int = 60) -> list[str]:
    loaded = load_text(CONFIG, base=ServerOptions(seed=seed))
    assert not loaded.problem_text()
    broker = Broker(loaded.options, ManualClock(start_ns=0))
    session = ClientSession(broker, FakeIO())
    session.start()
    connect = json.dumps({"verbose": False, "protocol": 1, "headers": True}).encode()
    session.data_received(b"CONNECT " + connect + b"\r\nSUB > 1\r\nPING\r\n")
    session.take_output()
    session.data_received(b"PUB w.t 0\r\n\r\n" * count + b"PING\r\n")
    return [subject.decode() for subject in MSG.findall(session.take_output())]


def test_a_seed_fixes_the_weighted_choices() -> None:
    first = _choices(7)
    assert first == _choices(7)
    assert len(first) == 60
    kinds = {subject.rsplit(".", 1)[0] if subject.startswith("w.r.") else subject for subject in first}
    assert kinds == {"w.a.t", "w.b.t", "w.r", "w.t"}  # 20 % left to the subject itself
    assert first != _choices(8)
