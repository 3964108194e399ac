"""``resolver { type: full | cache, dir, ... }``: the directory account resolvers, as nats-server's opts.go reads them.

``dir`` names the directory holding the account JWTs (made when missing, as
nats-server makes it even for ``-t``); ``allow_delete`` and ``hard_delete``
(full only) let the operator delete accounts; ``limit`` caps how many JWTs
the directory holds; ``interval`` (full only), ``timeout`` and ``ttl``
(cache only) are Go durations.  Each misuse is nats-server's error, in its
order; a map without a known ``type`` is the resolver's generic error.
"""

from __future__ import annotations

import errno
import os

from fakejs.conf import Token
from fakejs.core.configfile.context import ConfigContext
from fakejs.core.options import ServerOptions
from fakejs.core.resolver_directory import ResolverDirectory
from fakejs.gocompat.gotime import NS, format_duration, parse_duration

FULL = "FULL"
CACHE = "CACHE"
# nats-server checks that the directory's owner may write it (the mode's 0o200 bit).
OWNER_WRITE = 0o200


def _durations(members: dict[str, Token]) -> dict[str, int]:
    """``ttl``, ``interval`` and ``timeout`` in nanoseconds (``ValueError`` with Go's text for a bad one)."""
    durations: dict[str, int] = {}
    for name in ("ttl", "interval", "timeout"):
        if name in members:
            durations[name] = parse_duration(str(members[name].value))
    return durations


def _dir_problems(directory: str) -> list[str]:
    """nats-server's ``checkDir``."""
    if not directory:
        return ["dir has no value and needs to point to a directory"]
    if os.path.exists(directory) and (not os.path.isdir(directory) or not os.stat(directory).st_mode & OWNER_WRITE):
        return ["dir needs to point to an accessible directory"]
    return []


def make_directory(directory: str) -> str:
    """Go's ``os.MkdirAll`` for the store: the directory made if missing, or its error text ("" when fine)."""
    if os.path.exists(directory) and not os.path.isdir(directory):
        return f"mkdir {directory}: {os.strerror(errno.ENOTDIR).lower()}"
    try:
        os.makedirs(directory or "", exist_ok=True)
    except OSError as exc:
        return f"mkdir {directory}: {os.strerror(exc.errno or errno.ENOENT).lower()}"
    return ""


def _kind_problems(kind: str, members: dict[str, Token], durations: dict[str, int]) -> list[str]:
    allow_delete = bool(members["allow_delete"].value) if "allow_delete" in members else False
    if kind == CACHE:
        problems = []
        if durations.get("interval"):
            problems.append("CACHE does not accept sync")
        if allow_delete:
            problems.append("CACHE does not accept allow_delete")
        if "hard_delete" in members:
            problems.append("CACHE does not accept hard_delete")
        return problems
    problems = ["FULL does not accept ttl"] if durations.get("ttl") else []
    if "hard_delete" in members and not allow_delete:
        problems.append("hard_delete has no effect without delete")
    return problems


def directory_resolver(token: Token, options: ServerOptions, context: ConfigContext) -> bool:
    """Read a ``resolver`` map onto ``options``; False when its ``type`` is neither full nor cache (nor memory)."""
    members: dict[str, Token] = token.value
    kind = str(members["type"].value).upper() if "type" in members else ""
    if kind in ("MEM", "MEMORY"):
        options.account_resolver = "MEMORY"
        return True
    try:
        durations = _durations(members)
    except ValueError as exc:
        context.error(token, str(exc))
        return True
    if kind not in (FULL, CACHE):
        return False
    directory = str(members["dir"].value) if "dir" in members else ""
    for problem in _dir_problems(directory) + _kind_problems(kind, members, durations):
        context.error(token, problem)
    if problem := make_directory(directory):
        context.error(token, problem)
        return True
    timeout = durations.get("timeout")
    if timeout is not None and timeout <= 0:
        context.error(token, f"Fetch timeout {format_duration(timeout)} is too smal")
        return True
    limit = members["limit"].value if "limit" in members else 0
    options.account_resolver = kind
    options.resolver_directory = ResolverDirectory(
        kind=kind,
        directory=os.path.abspath(directory),
        allow_delete=bool(members["allow_delete"].value) if "allow_delete" in members else False,
        hard_delete=bool(members["hard_delete"].value) if "hard_delete" in members else False,
        limit=limit if isinstance(limit, int) else 0,
        interval=durations.get("interval", 0) / NS,
        timeout=(timeout or int(1.9 * NS)) / NS,
        ttl=durations.get("ttl", 0) / NS,
    )
    return True
