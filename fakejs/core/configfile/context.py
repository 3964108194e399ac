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
    ``listen``-only block of a feature fakejs does not have); ``refusals``
    are settings nats-server would serve and fakejs cannot, so it refuses to
    start rather than run without them.
    """

    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)

    def error(self, token: Token, reason: str) -> None:
        self.errors.append(f"{token.where()}: {reason}")

    def warning(self, token: Token, reason: str) -> None:
        self.warnings.append(f"{token.where()}: {reason}")

    def notice(self, text: str) -> None:
        self.notices.append(text)

    def refuse(self, token: Token, feature: str) -> None:
        """A setting fakejs does not serve: it will not start with it (named, never silently dropped)."""
        self.refusals.append(f"{token.where()}: {feature}: not supported by fakejs yet")

    def unknown(self, key: str, token: Token) -> None:
        """nats-server's ``unknown field`` error, unless a ``$variable`` reference used the value."""
        if not token.used_variable:
            self.errors.append(f'{token.where()}: unknown field "{key}"')

    @property
    def failed(self) -> bool:
        """Whether the server must refuse to start (nats-server's errors, or fakejs's refusals)."""
        return bool(self.errors or self.refusals)

    def report(self) -> str:
        """nats-server's text for the stage: warnings first, then errors, each on its own line."""
        return "".join(line + "\n" for line in self.warnings + self.errors)
