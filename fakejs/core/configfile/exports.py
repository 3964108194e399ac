"""An account's ``exports`` and ``imports`` keys, onto :class:`Export` and :class:`Import` data.

Follows nats-server's ``parseAccountExports`` / ``parseExportStreamOrService``
and ``parseAccountImports`` / ``parseImportStreamOrService`` (``opts.go``):
each entry is a map with a ``stream`` or a ``service``; exports may name the
``accounts`` allowed to import them and, for services, a ``response_type``
(``Singleton``, ``Stream``, ``Chunked``) and ``response_threshold``; imports
name ``{account, subject}`` with a ``prefix`` or ``to`` (streams) or a
``to`` (services).  Bad entries are reported with nats-server's texts and
skipped, the rest kept.  Keys are read in file order (nats-server's map order
is random, so when two keys contradict each other the one reported may differ).

The checks that need every account -- does the exporter exist, does it export
the subject to the importer, do two imports form a cycle -- are
:func:`check_imports`, run once all accounts are known; nats-server reports
them against the ``accounts`` key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fakejs.conf import Token
from fakejs.core.account_config import CHUNKED, SINGLETON, STREAM, AccountConfig, Export, Import
from fakejs.core.configfile.context import ConfigContext
from fakejs.core.configfile.values import go_type
from fakejs.core.subject_transform import (
    TransformError,
    service_import_rename,
    stream_import_renames,
    transform_untokenize,
)
from fakejs.core.subjects import has_wildcard, is_subset, is_valid_subject, overlap
from fakejs.gocompat.goflag import go_quote
from fakejs.gocompat.gotime import parse_duration

__all__ = ["apply_exports", "apply_imports", "check_imports"]

_RESPONSE_TYPES = {
    "single": SINGLETON,
    "singleton": SINGLETON,
    "stream": STREAM,
    "chunk": CHUNKED,
    "chunked": CHUNKED,
}
_THRESHOLD_KEYS = ("threshold", "response_threshold", "response_max_time", "response_time")


class _Panic(Exception):
    """A value of the wrong type where nats-server asserts one: it panics and drops the entry."""

    def __init__(self, token: Token, wanted: str) -> None:
        super().__init__(wanted)
        self.token = token
        self.reason = f"interface conversion: interface {{}} is {go_type(token.value)}, not {wanted}"


def _as(token: Token, kind: type, wanted: str) -> Any:
    value = token.value
    if isinstance(value, kind) and not (kind is not bool and isinstance(value, bool)):
        return value
    raise _Panic(token, wanted)


# -- exports -------------------------------------------------------------------


def apply_exports(token: Token, context: ConfigContext) -> tuple[Export, ...]:
    """An account's ``exports`` array, in file order (bad entries reported and left out)."""
    if not isinstance(token.value, list):
        context.error(token, f"Exports should be an array, got {go_type(token.value)}")
        return ()
    exports: list[Export] = []
    for entry in token.value:
        try:
            export = _export(entry, context)
        except _Panic as panic:
            context.error(panic.token, panic.reason)
            continue
        if export is not None:
            exports.append(export)
    return tuple(exports)


def _export(entry: Token, context: ConfigContext) -> Export | None:
    if not isinstance(entry.value, dict):
        context.error(entry, f"Export Items should be a map with type entry, got {go_type(entry.value)}")
        return None
    subject: str | None = None
    service = False
    accounts: tuple[str, ...] = ()
    response_type = SINGLETON
    response_token: Token | None = None
    threshold = 0.0
    threshold_seen = False
    for key, value in entry.value.items():
        name = key.lower()
        if name in ("stream", "service"):
            if subject is not None and service != (name == "service"):
                other = "service" if service else "stream"
                context.error(value, f'Detected {name} "{_go(value)}" but already saw a {other}')
                continue
            if name == "stream" and response_token is not None:
                context.error(response_token, "Detected response directive on non-service")
                continue
            if not isinstance(value.value, str):
                context.error(value, f"Expected {name} name to be string, got {go_type(value.value)}")
                continue
            subject, service = value.value, name == "service"
        elif name in ("response", "response_type"):
            if response_token is not None:
                context.error(value, "Duplicate response type definition")
                continue
            response_token = value
            if not isinstance(value.value, str):
                context.error(value, f"Expected response type to be string, got {go_type(value.value)}")
                continue
            kind = _RESPONSE_TYPES.get(value.value.lower())
            if kind is None:
                context.error(value, f'Unknown response type: "{value.value}"')
                continue
            response_type = kind
            if subject is not None and not service:
                context.error(value, "Detected response directive on non-service")
        elif name in _THRESHOLD_KEYS:
            if threshold_seen:
                context.error(value, "Duplicate response threshold detected")
                continue
            threshold_seen = True
            threshold = _threshold(value, context)
            if subject is not None and not service:
                context.error(value, "Detected response directive on non-service")
        elif name == "accounts":
            names = _as(value, list, "[]interface {}")
            accounts = tuple(_as(item, str, "string") for item in names)
        elif name == "account_token_position":
            _as(value, int, "int64")
        elif name in ("latency", "allow_trace"):
            context.refuse(value, f"export {name}")
        else:
            context.unknown(key, value)
    if subject is None:
        return None
    if not service:
        return Export(subject, False, accounts)
    return Export(subject, True, accounts, response_type, threshold)


def _threshold(value: Token, context: ConfigContext) -> float:
    text = value.value
    if not isinstance(text, str):
        context.error(value, f"Expected response threshold to be a parseable time duration, got {go_type(text)}")
        return 0.0
    try:
        return parse_duration(text) / 1e9
    except ValueError:
        context.error(value, f'Expected response threshold to be a parseable time duration, got "{text}"')
        return 0.0


def _go(token: Token) -> str:
    value = token.value
    return value if isinstance(value, str) else str(value)


# -- imports -------------------------------------------------------------------


@dataclass
class _Draft:
    account: str = ""
    subject: str = ""
    service: bool = False
    seen: bool = False


def apply_imports(token: Token, context: ConfigContext) -> tuple[Import, ...]:
    """An account's ``imports`` array, in file order (bad entries reported and left out)."""
    if not isinstance(token.value, list):
        context.error(token, f"Imports should be an array, got {go_type(token.value)}")
        return ()
    imports: list[Import] = []
    for entry in token.value:
        try:
            found = _import(entry, context)
        except _Panic as panic:
            context.error(panic.token, panic.reason)
            continue
        if found is None:
            continue
        if found.service:
            dup = next(
                (i for i in imports if i.service and i.local == found.local and i.account == found.account), None
            )
            if dup is not None:
                context.error(
                    entry,
                    f'Duplicate service import subject "{found.local}", previously used in import '
                    f'for account "{dup.account}", subject "{dup.subject}"',
                )
                continue
        imports.append(found)
    return tuple(imports)


def _import(entry: Token, context: ConfigContext) -> Import | None:
    if not isinstance(entry.value, dict):
        context.error(entry, f"Import Items should be a map with type entry, got {go_type(entry.value)}")
        return None
    draft = _Draft()
    prefix = to = ""
    for key, value in entry.value.items():
        name = key.lower()
        if name in ("stream", "service"):
            if draft.seen and draft.service != (name == "service"):
                other = "service" if draft.service else "stream"
                context.error(value, f"Detected {name} but already saw a {other}")
                continue
            if not isinstance(value.value, dict):
                label = name.capitalize()
                context.error(value, f"{label} entry should be an account map, got {go_type(value.value)}")
                continue
            account, subject = _account_map(value, context)
            if not account or not subject:
                context.error(value, "Expect an account name and a subject")
                continue
            draft = _Draft(account, subject, name == "service", True)
            if name == "stream" and prefix and to:
                context.error(value, "Stream import can not have a 'prefix' and a 'to' property")
        elif name == "prefix":
            prefix = _as(value, str, "string")
        elif name == "to":
            to = _as(value, str, "string")
            if draft.seen and not draft.service and prefix:
                context.error(value, "Stream import can not have a 'prefix' and a 'to' property")
                continue
        elif name == "share":
            _as(value, bool, "bool")
        elif name == "allow_trace":
            if draft.seen and draft.service:
                context.error(value, "Detected allow_trace directive on a non-stream")
                continue
            context.refuse(value, "import allow_trace")
        else:
            context.unknown(key, value)
    if not draft.seen:
        return None
    if draft.service:
        return Import(draft.account, draft.subject, True, to or draft.subject)
    return Import(draft.account, draft.subject, False, stream_local(draft.subject, prefix, to), prefix)


def _account_map(token: Token, context: ConfigContext) -> tuple[str, str]:
    account = subject = ""
    for key, value in token.value.items():
        name = key.lower()
        if name == "account":
            account = _as(value, str, "string")
        elif name == "subject":
            subject = _as(value, str, "string")
        else:
            context.unknown(key, value)
    return account, subject


# -- the checks across accounts --------------------------------------------------


def _exported(exports: tuple[Export, ...], subject: str, service: bool, importer: str, known: set[str]) -> bool:
    """nats-server's ``checkStreamExportApproved`` / ``checkServiceExportApproved``."""
    if not is_valid_subject(subject):
        return False
    candidates = [e for e in exports if e.service == service]
    exact = [e for e in candidates if e.subject == subject]
    for export in exact or [e for e in candidates if is_subset(subject, e.subject)][:1]:
        allowed = [a for a in export.accounts if a in known]
        return not allowed or importer in allowed
    return False


def check_imports(accounts: list[AccountConfig]) -> list[str]:
    """nats-server's errors for exports and imports that need every account to judge, in its order.

    Each text is reported against the ``accounts`` key (``FILE:LINE:COL: text``).
    """
    by_name = {a.name: a for a in accounts}
    known = set(by_name)
    errors: list[str] = []
    for service in (False, True):
        kind = "service" if service else "stream"
        for account in accounts:
            for export in account.exports:
                if export.service == service:
                    errors.extend(
                        f'"{n}" account not defined for {kind} export' for n in export.accounts if n not in known
                    )
    # Imports already accepted, per account: nats-server's cycle and duplicate checks look at them.
    streams: dict[str, list[Import]] = {}
    services: dict[str, list[Import]] = {}
    for account in accounts:
        for imp in account.imports:
            if not imp.service:
                problem = _stream_problem(account.name, imp, by_name, known, streams)
                if problem is not None:
                    errors.append(
                        problem if problem.startswith('"') else f'Error adding stream import "{imp.subject}": {problem}'
                    )
    for account in accounts:
        for imp in account.imports:
            if imp.service:
                problem = _service_problem(account.name, imp, by_name, known, services)
                if problem is not None:
                    errors.append(
                        problem
                        if problem.startswith('"')
                        else f'Error adding service import "{imp.subject}": {problem}'
                    )
    return errors


def _stream_problem(
    name: str, imp: Import, by_name: dict[str, AccountConfig], known: set[str], done: dict[str, list[Import]]
) -> str | None:
    exporter = by_name.get(imp.account)
    if exporter is None:
        return f'"{imp.account}" account not defined for stream import'
    if not _exported(exporter.exports, imp.subject, False, name, known):
        return "stream import not authorized"
    if imp.prefix and has_wildcard(imp.prefix):
        return "stream import prefix can not contain wildcard tokens"
    if _stream_cycle(imp.account, imp.local, {name}, by_name, done) or _stream_cycle(
        imp.account, imp.subject, {name}, by_name, done
    ):
        return "import forms a cycle"
    if has_wildcard(imp.subject) and imp.local and imp.local != imp.subject:
        try:
            stream_import_renames(imp.subject, imp.local)
        except TransformError as exc:
            return _transform_problem("stream", imp.subject, imp.local, exc)
    if any(o.account == imp.account and o.subject == imp.subject for o in done.get(name, [])):
        return "stream import already exists"
    done.setdefault(name, []).append(imp)
    return None


def _service_problem(
    name: str, imp: Import, by_name: dict[str, AccountConfig], known: set[str], done: dict[str, list[Import]]
) -> str | None:
    exporter = by_name.get(imp.account)
    if exporter is None:
        return f'"{imp.account}" account not defined for service import'
    local = imp.local or imp.subject
    if not is_valid_subject(local) or not is_valid_subject(imp.subject):
        return "invalid subject"
    if not _exported(exporter.exports, imp.subject, True, name, known):
        return "service import not authorized"
    if _service_cycle(imp.account, local, {name}, done):
        return "import forms a cycle"
    if has_wildcard(imp.subject) and local != imp.subject:
        try:
            service_import_rename(local, imp.subject)
        except TransformError as exc:
            return _transform_problem("service", local, transform_untokenize(imp.subject)[0], exc)
    done.setdefault(name, []).append(imp)
    return None


def _transform_problem(kind: str, source: str, destination: str, exc: TransformError) -> str:
    """nats-server's text for an import whose rename is not a strict (reversible) transform."""
    return (
        f"failed to create mapping transform for {kind} import subject from {go_quote(source)} "
        f"to {go_quote(destination)}: {exc}"
    )


def _service_cycle(account: str, subject: str, visited: set[str], done: dict[str, list[Import]]) -> bool:
    """nats-server's ``checkServiceImportsForCycles``: does ``account`` route ``subject`` back to a visited one."""
    for imp in done.get(account, []):
        if overlap(subject, imp.subject):
            if imp.account in visited:
                return True
            follow = imp.local if is_subset(imp.local, subject) else subject
            if _service_cycle(imp.account, follow, visited | {account}, done):
                return True
    return False


def _stream_cycle(
    account: str, subject: str, visited: set[str], by_name: dict[str, AccountConfig], done: dict[str, list[Import]]
) -> bool:
    """nats-server's ``checkStreamImportsForCycles``: does ``account`` export ``subject`` it imports from a visited one."""
    exports = by_name[account].exports
    if not any(not e.service and is_subset(subject, e.subject) for e in exports):
        return False
    for imp in done.get(account, []):
        if overlap(subject, imp.local):
            if imp.account in visited:
                return True
            follow = imp.local if is_subset(imp.local, subject) else subject
            if _stream_cycle(imp.account, follow, visited | {account}, by_name, done):
                return True
    return False


def stream_local(subject: str, prefix: str, to: str) -> str:
    """Where a stream import's messages appear in the importing account: ``prefix`` or ``to`` applied."""
    if prefix:
        return prefix + ("" if prefix.endswith(".") else ".") + subject
    return to or subject
