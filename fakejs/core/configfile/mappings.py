"""The ``mappings { }`` (or ``maps``) block: top level for the global account, or inside an account.

Follows nats-server's ``parseAccountMappings`` and ``parseAccountMapDest``
(``opts.go``): a source subject maps to a destination string, to one
``{destination, weight, cluster}`` entry or to a list of them; weights are
integers or strings such as ``"40%"``.  Each mapping is then checked as
``AddWeightedMappings`` checks it (:func:`fakejs.core.mappings.check_mapping`),
its error reported as ``Error adding mapping for ...``.  Errors carry
nats-server's texts at its positions (a map member's position is its
key's).  nats-server walks the block in Go's map order, so several errors
may come out in any order there; fakejs keeps the file's.
"""

from __future__ import annotations

from fakejs.conf import Token
from fakejs.core.account_config import AccountConfig, MapDestination, Mapping
from fakejs.core.accounts import GLOBAL_ACCOUNT
from fakejs.core.configfile.context import ConfigContext
from fakejs.core.configfile.values import go_type, go_value
from fakejs.core.mappings import MappingError, check_mapping
from fakejs.core.options import ServerOptions
from fakejs.core.subject_transform import go_atoi
from fakejs.core.subjects import is_valid_subject
from fakejs.gocompat.goflag import go_quote

__all__ = ["apply_global", "parse_mappings"]


class _Panic(Exception):
    """A Go type assertion that failed: nats-server reports it and stops reading the block."""


def _string(token: Token) -> str:
    if not isinstance(token.value, str):
        raise _Panic(token, f"interface conversion: interface {{}} is {go_type(token.value)}, not string")
    return token.value


def apply_global(token: Token, options: ServerOptions, context: ConfigContext) -> None:
    """The top-level block: the global account's mappings (nats-server adds a ``$G`` account holding them)."""
    mappings = parse_mappings(token, context)
    if mappings:
        options.accounts.append(AccountConfig(GLOBAL_ACCOUNT, mappings=mappings))


def parse_mappings(token: Token, context: ConfigContext) -> tuple[Mapping, ...]:
    """The mappings of a ``mappings`` value (the ones without errors; errors go to ``context``)."""
    if not isinstance(token.value, dict):
        context.error(
            token, f"interface conversion: interface {{}} is {go_type(token.value)}, not map[string]interface {{}}"
        )
        return ()
    mappings: list[Mapping] = []
    try:
        for source, value in token.value.items():
            if not is_valid_subject(source):
                context.error(token, f"Subject {go_quote(source)} is not a valid subject")
                continue
            mapping = _mapping(source, value, context)
            if mapping is not None:
                mappings.append(mapping)
    except _Panic as panic:
        where, text = panic.args
        context.error(where, text)
    return tuple(mappings)


def _mapping(source: str, value: Token, context: ConfigContext) -> Mapping | None:
    entry = value.value
    if isinstance(entry, str):
        destinations = [MapDestination(entry)]
        prefix = f"Error adding mapping for {go_quote(source)} to {go_quote(entry)}"
    else:
        items = entry if isinstance(entry, list) else [value]
        parsed = [_destination(item, context) for item in items]
        destinations = [d for d in parsed if d is not None]
        if len(destinations) != len(parsed) and not isinstance(entry, list):
            return None
        prefix = f"Error adding mapping for {go_quote(source)}"
    try:
        check_mapping(source, destinations)
    except MappingError as exc:
        context.error(value, f"{prefix} : {exc}")
        return None
    return Mapping(source, tuple(destinations))


def _destination(item: Token, context: ConfigContext) -> MapDestination | None:
    """``parseAccountMapDest``: one ``{destination, weight, cluster}`` entry."""
    if not isinstance(item.value, dict):
        context.error(item, "Expected an entry for the mapping destination")
        return None
    subject = ""
    weight: int | None = None
    cluster = ""
    for key, member in item.value.items():
        field = key.lower()
        if field in ("dest", "destination"):
            subject = _string(member)
        elif field == "weight":
            weight = _weight(member, context)
            if weight is None:
                return None
        elif field == "cluster":
            cluster = _string(member)
        else:
            context.error(member, f"Unknown field {go_quote(key)} for mapping destination")
            return None
    if weight is None:
        context.error(item, f"Missing weight for mapping destination {go_quote(subject)}")
        return None
    return MapDestination(subject, weight, cluster)


def _weight(member: Token, context: ConfigContext) -> int | None:
    value = member.value
    if isinstance(value, str):
        text = value.removesuffix("%")
        try:
            weight = go_atoi(text)
        except ValueError:
            context.error(member, f"Invalid weight {go_quote(text)} for mapping destination")
            return None
    elif isinstance(value, int) and not isinstance(value, bool):
        weight = value
    else:
        context.error(member, f"Unknown entry type for weight of {go_value(member)}\n")
        return None
    if not 0 <= weight <= 100:
        context.error(member, f"Invalid weight {weight} for mapping destination")
        return None
    return weight
