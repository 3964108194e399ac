"""The ``fakejs`` logger's lines: undecodable subject bytes become text every handler can write."""

from __future__ import annotations

import logging

import pytest

from fakejs.core.log import get_logger


def test_an_undecodable_subject_byte_is_logged_as_an_escape(caplog: pytest.LogCaptureFixture) -> None:
    subject = b"s.\xff".decode("utf-8", "surrogateescape")
    with caplog.at_level(logging.INFO, logger="fakejs"):
        get_logger().info("[SUB %s 1] é", subject)
    (record,) = caplog.records
    assert record.getMessage() == "[SUB s.\\xff 1] é"
    assert caplog.text.encode("utf-8")  # what a test runner ships between processes


def test_a_line_without_such_bytes_is_left_as_it_was(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="fakejs"):
        get_logger().info("%s and %d", "ünïcode", 5)
    (record,) = caplog.records
    assert (record.msg, record.args) == ("%s and %d", ("ünïcode", 5))
