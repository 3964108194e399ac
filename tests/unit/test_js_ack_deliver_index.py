"""Where a JetStream delivery's shown subject starts in its ``$JS.ACK.`` reply (nats-server's ``jsAckDeliverIdx``)."""

from __future__ import annotations

import pytest

from fakejs.core.router import js_ack_deliver_index

ACK = "$JS.ACK.ORDERS.worker.1.5.5.1700000000000000000.0"


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (f"{ACK}@orders.1", len(ACK)),
        (ACK, -1),  # no subject carried
        ("$JS.ACK.OR@DERS.worker.1.5.5.1.0", -1),  # an @ in a name, before the eighth dot, does not count
        ("$JS.ACK.OR@DERS.worker.1.5.5.1.0@orders.1", len("$JS.ACK.OR@DERS.worker.1.5.5.1.0")),
        ("$JS.ACK.S.C.1@x", -1),  # fewer than eight dots
        ("_INBOX.abc@orders.1", -1),  # not an ack reply
        ("$JS.ACK.S.C.1.2.3.4.@", len("$JS.ACK.S.C.1.2.3.4.")),
    ],
)
def test_the_shown_subject_starts_after_the_acks_eighth_dot(reply: str, expected: int) -> None:
    assert js_ack_deliver_index(reply) == expected
