"""What a key handler reports to: errors and warnings against a value's position."""

from __future__ import annotations

from dataclasses import dataclass, field

from fakejs.conf import Token


@dataclass
class ConfigContext:
    """The errors and warnings of one file's option stage, in the order they were found.

    nats-server does not stop at the first bad option: it collects them and
    then refuses to start, listing each as ``FILE:LINE:COL: reason``.
    ``notices`` are log lines for settings accepted but not served (a
    ``listen``-only block of a feature fakejs does not have).
    """

    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)

    def error(self, token: Token, reason: str) -> None:
        self.errors.append(f"{token.where()}: {reason}")

    def warning(self, token: Token, reason: str) -> None:
        self.warnings.append(f"{token.where()}: {reason}")

    def notice(self, text: str) -> None:
        self.notices.append(text)
