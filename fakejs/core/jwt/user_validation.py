"""nats-io/jwt's ``Validate`` of a user claim, beyond its times: the issues that make nats-server refuse it.

A user JWT that decodes may still be refused (``User JWT no longer valid``):
a permission subject that is empty, starts or ends with ``.``, holds
``..``, or has a space (a queue group is allowed in ``sub`` alone, one
space at most); a ``src`` entry that is not a CIDR (Go's
``net.ParseCIDR``: an address alone is not one); a ``times`` range whose
``start`` or ``end`` is not ``HH:MM:SS``; a ``times_location`` that is not a
time zone; an ``issuer_account`` that is not an account key.
:func:`user_issues` lists them in nats-io/jwt's order.
"""

from __future__ import annotations

import ipaddress
import re
import zoneinfo
from collections.abc import Iterator, Mapping
from typing import Any

from fakejs.core.auth import decode_public_key
from fakejs.gocompat.goquote import quote_text

# Go's time.Parse("15:04:05", ...): an hour of one or two digits, minutes and seconds of two, a fraction allowed.
CLOCK_TIME = re.compile(r"([0-9]{1,2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?")
# Go's net.ParseCIDR: an address, "/", a prefix length in decimal.
CIDR = re.compile(r"([^/]+)/([0-9]+)")


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _subject_issues(subject: str) -> Iterator[str]:
    """nats-io/jwt's ``Subject.Validate``."""
    if subject == "":
        yield "subject cannot be empty"
        return
    if " " in subject:
        yield f"subject {quote_text(subject)} cannot have spaces"
    if subject[0] == "." or subject[-1] == ".":
        yield f"subject {quote_text(subject)} cannot start or end with a `.`"
    if ".." in subject:
        yield f"subject {quote_text(subject)} cannot contain consecutive `.`"


def _permission_issues(value: object, permit_queue: bool) -> Iterator[str]:
    """nats-io/jwt's ``checkPermission`` over a permission's ``allow`` and ``deny``."""
    if not isinstance(value, dict):
        return
    for subject in _strings(value.get("allow")) + _strings(value.get("deny")):
        tokens = subject.split(" ")
        if len(tokens) > 2:
            yield f'Permission Subject "{subject}" contains too many spaces'
            continue
        for token in tokens:
            yield from _subject_issues(token)
        if len(tokens) == 2 and not permit_queue:
            yield f'Permission Subject "{subject}" is not allowed to contain queue'


def is_cidr(text: str) -> bool:
    """Go's ``net.ParseCIDR`` accepts ``text``: an IPv4 or IPv6 address and a prefix length that fits it."""
    match = CIDR.fullmatch(text)
    if match is None or "%" in match.group(1):
        return False
    try:
        address = ipaddress.ip_address(match.group(1))
    except ValueError:
        return False
    return len(match.group(2)) <= 3 and int(match.group(2)) <= address.max_prefixlen


def sources(value: object) -> list[str]:
    """A ``src`` as nats-io/jwt's ``CIDRList`` reads it: a list as given, or one string split on commas."""
    if isinstance(value, str):
        return [part.strip().lower() for part in value.lower().split(",") if part.strip()]
    return _strings(value)


def clock_time(text: object) -> tuple[int, int, int] | None:
    """A ``times`` range's ``start`` or ``end`` read as Go's ``time.Parse("15:04:05", ...)`` reads it, else None."""
    match = CLOCK_TIME.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        return None
    hours, minutes, seconds = (int(match.group(i)) for i in (1, 2, 3))
    return (hours, minutes, seconds) if hours < 24 and minutes < 60 and seconds < 60 else None


def _time_issues(times: object, location: object) -> Iterator[str]:
    for entry in times if isinstance(times, list) else []:
        entry = entry if isinstance(entry, dict) else {}
        for name in ("start", "end"):
            text = entry.get(name) or ""
            if not text:
                yield f"time ranges {name} must contain a{'n' if name == 'end' else ''} {name}"
            elif clock_time(text) is None:
                yield f"{name} in time range is invalid {quote_text(text)}"
    if isinstance(location, str) and location and location not in ("UTC", "Local"):
        try:
            zoneinfo.ZoneInfo(location)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            yield f"could not parse iana time zone by name: unknown time zone {location}"


def user_issues(nats: Mapping[str, Any]) -> list[str]:
    """The issues nats-io/jwt's ``UserClaims.Validate`` finds in a user claim's ``nats`` part, in its order."""
    issues = [
        *_permission_issues(nats.get("sub"), permit_queue=True),
        *_permission_issues(nats.get("pub"), permit_queue=False),
        *(
            f"invalid cidr {quote_text(cidr)} in user src limits"
            for cidr in sources(nats.get("src"))
            if not is_cidr(cidr)
        ),
        *_time_issues(nats.get("times"), nats.get("times_location")),
    ]
    issuer_account = nats.get("issuer_account")
    if isinstance(issuer_account, str) and issuer_account and decode_public_key(issuer_account, 0) is None:
        issues.append("account_id is not an account public key")
    return issues
