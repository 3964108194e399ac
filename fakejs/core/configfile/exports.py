"""An account's ``exports`` and ``imports`` lists (not served yet: refused by name)."""

from __future__ import annotations

from fakejs.conf import Token
from fakejs.core.account_config import Export, Import
from fakejs.core.configfile.context import ConfigContext


def apply_exports(token: Token, context: ConfigContext) -> tuple[Export, ...]:
    """The exports of one account's ``exports`` value."""
    context.refuse(token, "account exports (exports)")
    return ()


def apply_imports(token: Token, context: ConfigContext) -> tuple[Import, ...]:
    """The imports of one account's ``imports`` value."""
    context.refuse(token, "account imports (imports)")
    return ()
