"""Violations and the report that lists them (as data, as JSON, as text)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from fakejs.gocompat import gotime
from fakejs.testkit.conformance.rules import RULES


class Client(Protocol):
    """What the watch reads of a client session."""

    @property
    def cid(self) -> int: ...

    @property
    def name(self) -> str: ...

    @property
    def account(self) -> Any: ...


@dataclass(frozen=True)
class ClientRef:
    """A client as a violation names it (its connection may be gone by then)."""

    cid: int
    name: str
    account: Any = None


@dataclass(frozen=True)
class Violation:
    """A rule a client broke: who, what it sent or failed to answer, and when (server time)."""

    rule: str
    client_name: str
    client_id: int
    stream: str
    consumer: str
    detail: str
    evidence: bytes
    at: float  # the server clock's monotonic time
    at_ns: int  # the server clock's wall time

    @property
    def statement(self) -> str:
        return RULES[self.rule].statement

    def describe(self) -> dict[str, Any]:
        """JSON-ready: the evidence as text (bytes that are not UTF-8 escaped)."""
        return {
            "rule": self.rule,
            "statement": self.statement,
            "source": RULES[self.rule].source,
            "client": {"name": self.client_name, "cid": self.client_id},
            "stream": self.stream,
            "consumer": self.consumer,
            "detail": self.detail,
            "bytes": self.evidence.decode("utf-8", "backslashreplace"),
            "time": gotime.rfc3339(self.at_ns),
        }

    def line(self) -> str:
        who = self.client_name or f"cid {self.client_id}"
        where = f"{self.stream}/{self.consumer}" if self.stream else ""
        evidence = self.evidence_line(200)
        return f"[{self.rule}] {who} {where}: {self.detail}\n    at {gotime.rfc3339(self.at_ns)}: {evidence}"

    def evidence_line(self, limit: int) -> str:
        """The evidence on one line (CRLF shown as ``\\r\\n``), cut to ``limit`` characters."""
        evidence = self.evidence.decode("utf-8", "backslashreplace").replace("\r\n", "\\r\\n")
        return evidence if len(evidence) <= limit else evidence[: limit - 3] + "..."


@dataclass
class ConformanceReport:
    """What the watch found: violations in the order they happened, and the settings it judged by."""

    violations: list[Violation] = field(default_factory=list)
    settings: dict[str, float] = field(default_factory=dict)
    watched: bool = True
    suppressed: dict[str, int] = field(default_factory=dict)  # more of the same, counted only
    exercised: dict[str, int] = field(default_factory=dict)  # how often each rule had something to judge

    def __bool__(self) -> bool:
        """True when some client broke a rule."""
        return bool(self.violations)

    def broken(self) -> set[str]:
        """The ids of the rules broken."""
        return {v.rule for v in self.violations}

    def of(self, rule: str) -> list[Violation]:
        if rule not in RULES:
            raise KeyError(f"unknown conformance rule {rule!r}")
        return [v for v in self.violations if v.rule == rule]

    def describe(self) -> dict[str, Any]:
        return {
            "watched": self.watched,
            "settings": self.settings,
            "violations": [v.describe() for v in self.violations],
            "suppressed": self.suppressed,
            "exercised": self.exercised,
            "rules": {rule.id: {"statement": rule.statement, "source": rule.source} for rule in RULES.values()},
        }

    def text(self) -> str:
        if not self.watched:
            return "client conformance: not watched (start the server with conformance=True)"
        if not self.violations:
            return "client conformance: no rule broken"
        total = len(self.violations) + sum(self.suppressed.values())
        lines = [f"client conformance: {total} violation(s) of {len(self.broken())} rule(s)"]
        lines.extend(v.line() for v in self.violations)
        for rule, count in sorted(self.suppressed.items()):
            lines.append(f"[{rule}] {count} more like these, not listed")
        return "\n".join(lines)
