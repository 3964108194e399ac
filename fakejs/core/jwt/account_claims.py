"""The fakejs accounts a set of trusted account JWTs make, with what they say about each other.

:meth:`~fakejs.core.jwt.trust.AccountClaims.config` reads what one account
JWT says of itself; :func:`account_configs` adds what needs the other
accounts: the exports (:mod:`fakejs.core.jwt.exports`) and the imports
their exporters approve.  An import from an account that is not known, or
that its exporter does not approve, is left out as nats-server leaves it
out (``Can't locate account``, ``... import not authorized``), and the
rest of the account is served.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from fakejs.core.account_config import AccountConfig, Import
from fakejs.core.jwt.exports import Exporter, approval_problem, export_claims, import_claims
from fakejs.core.jwt.trust import AccountClaims


def exporter(account: AccountClaims) -> Exporter:
    """What an importer's approval needs of ``account``: its key, its signing keys and its exports."""
    keys = account.signing_keys | account.scoped_keys
    return Exporter(account.public_key, keys, export_claims(account.claims.nats))


def approved_imports(account: AccountClaims, exporters: Mapping[str, Exporter]) -> tuple[Import, ...]:
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


def account_configs(accounts: Mapping[str, AccountClaims]) -> list[AccountConfig]:
    """The fakejs accounts of ``accounts`` (by the key they are stored under), with exports and imports."""
    exporters = {account.public_key: exporter(account) for account in accounts.values()}
    configs: list[AccountConfig] = []
    for name, account in accounts.items():
        exports = tuple(claim.export for claim in exporters[account.public_key].exports)
        configs.append(replace(account.config(name), exports=exports, imports=approved_imports(account, exporters)))
    return configs
