"""The fakejs accounts a set of trusted account JWTs make, with what they say about each other.

:meth:`~fakejs.core.jwt.trust.AccountClaims.config` reads what one account
JWT says of itself; :func:`account_configs` adds what needs the other
accounts: the exports (:mod:`fakejs.core.jwt.exports`) and the imports
their exporters approve, the weighted subject ``mappings``, the message
``trace`` destination and the
JetStream limits as nats-server reads them (plain or ``tiered_limits``).  An import from an account that is not known, or
that its exporter does not approve, is left out as nats-server leaves it
out (``Can't locate account``, ``... import not authorized``), and the
rest of the account is served.
"""

from __future__ import annotations

from collections.abc import Container
from collections.abc import Mapping as Mapped
from dataclasses import replace
from typing import Any

from fakejs.core.account_config import AccountConfig, Import, MapDestination, Mapping
from fakejs.core.jetstream_limits import NO_LIMIT, JetStreamLimits
from fakejs.core.jwt.exports import Exporter, approval_problem, export_claims, import_claims
from fakejs.core.jwt.trust import AccountClaims
from fakejs.core.mappings import MappingError, check_mapping
from fakejs.core.subjects import is_valid_literal_subject


def exporter(account: AccountClaims) -> Exporter:
    """What an importer's approval needs of ``account``: its key, its signing keys and its exports."""
    keys = account.signing_keys | account.scoped_keys
    return Exporter(account.public_key, keys, export_claims(account.claims.nats))


def approved_imports(account: AccountClaims, exporters: Mapped[str, Exporter]) -> tuple[Import, ...]:
    """The imports of ``account`` whose exporter is known and approves them, in the JWT's order."""
    approved: list[Import] = []
    for claim in import_claims(account.claims.nats):
        found = exporters.get(claim.imported.account)
        if found is None:
            continue
        problem, imported = approval_problem(found, account.public_key, claim)
        if not problem:
            approved.append(imported)
    return tuple(approved)


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _unlimited(value: int) -> int:
    """nats-server's ``toUnlimited``: a positive limit, else -1."""
    return value if value > 0 else NO_LIMIT


def jetstream_limits(limits: Mapped[str, object]) -> JetStreamLimits:
    """JetStream limits of a claim (plain or one tier), read as nats-server reads them.

    Storage, stream and consumer limits are taken as given (0 when left
    out: no storage of that kind, any number of streams or consumers); the
    per-stream byte caps and ``max_ack_pending`` are -1 unless positive.
    """
    return JetStreamLimits(
        max_memory=_int(limits.get("mem_storage")),
        max_storage=_int(limits.get("disk_storage")),
        max_streams=_int(limits.get("streams")),
        max_consumers=_int(limits.get("consumer")),
        max_ack_pending=_unlimited(_int(limits.get("max_ack_pending"))),
        memory_max_stream_bytes=_unlimited(_int(limits.get("mem_max_stream_bytes"))),
        storage_max_stream_bytes=_unlimited(_int(limits.get("disk_max_stream_bytes"))),
        max_bytes_required=bool(limits.get("max_bytes_required")),
    )


def tiered_limits(limits: Mapped[str, object]) -> dict[str, JetStreamLimits]:
    """``limits.tiered_limits`` by tier name (``R1``, ``R3``), each read by :func:`jetstream_limits`."""
    raw = limits.get("tiered_limits")
    if not isinstance(raw, dict):
        return {}
    return {str(name): jetstream_limits(tier) for name, tier in raw.items() if isinstance(tier, dict)}


def with_tiers(config: AccountConfig, account: AccountClaims) -> AccountConfig:
    """``config`` with the JWT's JetStream limits as nats-server reads them, tiered when it has tiers.

    nats-io/jwt drops the plain JetStream limits of a claim with tiered ones:
    JetStream is on when a tier has storage, and follows the tier of its
    streams' replicas (``R1`` on a single server).
    """
    tiers = tiered_limits(account.limits)
    if not tiers:
        plain = jetstream_limits(account.limits) if config.jetstream is not None else None
        return replace(config, jetstream=plain)
    if not any(t.max_memory or t.max_storage for t in tiers.values()):
        return replace(config, jetstream=None)
    return replace(config, jetstream=tiers.get("R1", JetStreamLimits()), tiers=tiers)


def subject_mappings(nats: Mapped[str, Any]) -> tuple[Mapping, ...]:
    """The account JWT's weighted ``mappings``; one nats-server cannot add is left out, as it leaves it out.

    A destination's weight is 100 when left out (nats-io/jwt's ``GetWeight``).
    """
    raw = nats.get("mappings")
    if not isinstance(raw, dict):
        return ()
    found: list[Mapping] = []
    for source, entries in raw.items():
        if not isinstance(entries, list):
            continue
        destinations = [
            MapDestination(str(e.get("subject", "")), _int(e.get("weight")) or 100, str(e.get("cluster", "")))
            for e in entries
            if isinstance(e, dict)
        ]
        try:
            check_mapping(str(source), destinations)
        except MappingError:
            continue
        found.append(Mapping(str(source), tuple(destinations)))
    return tuple(found)


def unknown_exporters(account: AccountClaims, known: Container[str]) -> list[str]:
    """nats-server's error for each import of ``account`` whose exporter it cannot find, when it first uses it.

    ``Can't locate account [<key>] for import of [<subject>] <kind> (err=account missing)``.
    """
    return [
        f"Can't locate account [{claim.imported.account}] for import of [{claim.subject}] "
        f"{'service' if claim.imported.service else 'stream'} (err=account missing)"
        for claim in import_claims(account.claims.nats)
        if claim.imported.account not in known
    ]


def unserved_features(account: AccountClaims) -> list[str]:
    """What the account JWT asks that fakejs does not serve (refused by name at start)."""
    nats = account.claims.nats
    exports = [e for e in nats.get("exports") or [] if isinstance(e, dict)]
    imports = [i for i in nats.get("imports") or [] if isinstance(i, dict)]
    features: list[str] = []
    if any(e.get("service_latency") for e in exports):
        features.append("service latency tracking of account JWT exports (service_latency)")
    if any(entry.get("allow_trace") for entry in exports + imports):
        features.append("message tracing through account JWT exports and imports (allow_trace)")
    return features


def message_trace(nats: Mapped[str, Any]) -> tuple[str, int]:
    """The account JWT's ``trace``: its destination and sampling (100 when not in 1..100), as nats-server sets them."""
    trace = nats.get("trace")
    if not isinstance(trace, dict):
        return "", 0
    destination, sampling = trace.get("dest"), _int(trace.get("sampling"))
    if not isinstance(destination, str) or not is_valid_literal_subject(destination):
        return "", 0
    return destination, sampling if 0 < sampling <= 100 else 100


def account_configs(accounts: Mapped[str, AccountClaims]) -> list[AccountConfig]:
    """The fakejs accounts of ``accounts`` (by the key they are stored under), with exports and imports."""
    exporters = {account.public_key: exporter(account) for account in accounts.values()}
    configs: list[AccountConfig] = []
    for name, account in accounts.items():
        exports = tuple(claim.export for claim in exporters[account.public_key].exports)
        imports = approved_imports(account, exporters)
        nats = account.claims.nats
        config = replace(
            account.config(name),
            exports=exports,
            imports=imports,
            mappings=subject_mappings(nats),
            message_trace=message_trace(nats),
        )
        configs.append(with_tiers(config, account))
    return configs
