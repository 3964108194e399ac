"""The client conformance watch: fakejs judges how a client consumes.

A server started with ``conformance=True`` watches every client's pulls,
acknowledgements and reactions to the statuses it is sent, against rules
taken from ADR-37 (the simplified consume algorithm), ADR-13 (pull
requests), ADR-42 (priority groups) and ADR-17 (ordered consumers); see
:data:`~fakejs.testkit.conformance.rules.RULES`.  A rule broken becomes a
:class:`~fakejs.testkit.conformance.report.Violation` naming the rule, the
client, the offending bytes and when.

Inside: ``rules`` (ids, statements, sources, settings), ``wire``
(reading pull requests, ack subjects and status headers), ``loops``
(one consume loop's pending counts, as the server can reconstruct them),
``checks`` (what a pull, an ack or a status must satisfy), ``ordered``
(``ordered-reset``: an ordered consumer restarting after a gap), ``watch``
(the sans-IO engine, fed by :class:`~fakejs.core.hooks.WireTap` calls with
the server clock's time) and ``report`` (violations and their report).  It
may import ``core`` and ``jetstream``; the server installs it as the
broker's tap.
"""

from fakejs.testkit.conformance.report import ConformanceReport, Violation
from fakejs.testkit.conformance.rules import RULES, Rule, Settings
from fakejs.testkit.conformance.watch import Conformance

__all__ = ["RULES", "Conformance", "ConformanceReport", "Rule", "Settings", "Violation"]
