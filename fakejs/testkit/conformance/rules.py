"""The conformance rules: an id, one line saying what a client must do, and where it is written.

Ids are stable (reports, tests and the rule table of docs/guide/conformance.md use them).  Sources
name the ADR section the rule comes from; where a rule needs a number the
ADR leaves open (how soon "a new pull" must come, what "backs off" means),
it is a :class:`Settings` field, shown in the report.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    """One thing a consuming client must (not) do."""

    id: str
    statement: str
    source: str


RULES: dict[str, Rule] = {
    rule.id: rule
    for rule in (
        Rule(
            "pull-limits",
            "A pull's batch, max_bytes and expires stay within the consumer's max_batch, "
            "max_request_max_bytes and max_request_expires, and a max_bytes pull sets a batch.",
            "ADR-13 Request Body; ADR-37 Max messages and max bytes options",
        ),
        Rule(
            "pull-expires",
            "Every pull that waits carries expires (no_wait pulls excepted): a pull without it never ends.",
            "ADR-37 Fetch/Consume Configuration options (expires is required)",
        ),
        Rule(
            "pull-buffer",
            "A pull asks only for what refills the buffer: what earlier pulls still owe plus its batch "
            "(or max_bytes) never exceeds the loop's buffer.",
            "ADR-37 Buffering messages",
        ),
        Rule(
            "pull-threshold",
            "A loop tops up only once what its pulls still owe has dropped to the threshold "
            "(half the buffer by default), not one request per message.",
            "ADR-37 Defaults and constraints (threshold_messages, threshold_bytes)",
        ),
        Rule(
            "pending-reconcile",
            "After a status carrying Nats-Pending-Messages/Nats-Pending-Bytes the loop subtracts them: "
            "it neither over-pulls nor stalls (a consume loop owed nothing pulls again).",
            "ADR-37 Buffering messages; Message processing algorithm steps 6-9",
        ),
        Rule(
            "heartbeat-configured",
            "A consume loop's pulls, and every pull with expires over 30 s, ask for idle heartbeats.",
            "ADR-37 Idle heartbeats; Fetch Configuration options",
        ),
        Rule(
            "heartbeat-missed",
            "After two idle heartbeats missed, a consume loop publishes a new pull.",
            "ADR-37 Idle heartbeats (as nats.go's Consume() recovers)",
        ),
        Rule(
            "terminal-stops",
            "After 409 Consumer Deleted (or Consumer is push based) the loop publishes no more pulls.",
            "ADR-37 Status handling",
        ),
        Rule(
            "leadership-repull",
            "After 409 Leadership Change a consume loop publishes a fresh pull.",
            "ADR-37 Status handling (consume() recovers with a new pull)",
        ),
        Rule(
            "reconnect-repull",
            "After a reconnect a consume loop publishes a fresh pull on its new connection.",
            "ADR-37 Server reconnects",
        ),
        Rule(
            "max-waiting-backoff",
            "After 409 Exceeded MaxWaiting the loop backs off before pulling again.",
            "ADR-37 Status handling (warnings); ADR-13 Pull(n) Requests (max_waiting)",
        ),
        Rule(
            "pin-dropped-on-423",
            "After 423 Nats-Wrong-Pin-Id the loop pulls without the refused pin id.",
            "ADR-42 Pinning (client: clear the id on 423)",
        ),
        Rule(
            "pin-id-echoed",
            "Once a message brings Nats-Pin-Id, every pull of that group carries it as id.",
            "ADR-42 Pinning (client: store the id and use it in every pull)",
        ),
        Rule(
            "no-ack-after-term",
            "A message answered +TERM gets no further acknowledgement.",
            "JetStream model: Acknowledgement Models (+TERM ends redelivery)",
        ),
        Rule(
            "ack-sync",
            "Where AckSync is asked for, every acknowledgement carries a reply subject (a double ack).",
            "JetStream model: Exactly Once Delivery (AckSync double-acks)",
        ),
        Rule(
            "ordered-reset",
            "An ordered consumer that sees a gap in its delivery sequence recreates its consumer "
            "from the last stream sequence it got plus one.",
            "ADR-17 Ordered consumer",
        ),
        Rule(
            "no-pull-storm",
            "Pulls that come back empty are not retried in a storm (at most storm_limit a second per loop).",
            "ADR-37 Consume (pull at the threshold); ADR-13 No Wait Pull Requests",
        ),
    )
}


@dataclass
class Settings:
    """The numbers the ADRs leave open, in seconds of server time.

    ``window``: how soon a reaction the rules ask for must come (a new pull
    after a status, a reconnect or missed heartbeats; an ordered consumer's
    reset).  ``backoff``: the least wait after ``409 Exceeded MaxWaiting``.
    ``race``: how long after a status a pull may still have crossed it on
    the wire (the first pull only).  ``threshold``: the refill point as a
    share of the buffer.  ``storm_limit``: empty pulls a second per loop.
    """

    window: float = 1.0
    backoff: float = 0.1
    race: float = 0.05
    threshold: float = 0.5
    storm_limit: int = 20

    def describe(self) -> dict[str, float]:
        return {
            "window": self.window,
            "backoff": self.backoff,
            "race": self.race,
            "threshold": self.threshold,
            "storm_limit": self.storm_limit,
        }
