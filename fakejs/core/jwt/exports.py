"""An account JWT's ``exports`` and ``imports``, and the activation tokens of private exports.

nats-server's ``updateAccountClaimsWithRefresh`` reads them: each export
becomes a stream or service export (a service's ``response_type`` and
``response_threshold``, a Go duration in nanoseconds), private when it has
``token_req`` (an importer needs an activation token) or an
``account_token_position`` (the importer's own key at that token of the
subject).  Each import names its exporter (``account``), the exported
``subject``, and where it appears in the importer: a stream's ``to`` is a
prefix and its ``local_subject`` a subject, a service's ``to`` (or the
``subject`` when ``local_subject`` is given) is the exporter's subject.

An import is kept only when its exporter is a known account whose export
approves it (:func:`approval_problem`, nats-server's
``checkStreamExportApproved``/``checkServiceExportApproved`` and
``checkAuth``); a token is checked as ``checkActivation`` does
(:func:`activation_problem`): it must be an activation claim for the
importer, issued by the exporter or one of its signing keys (naming the
exporter in ``issuer_account``), of the import's kind, covering its
subject, and not revoked by the export's ``revocations``.  Its ``exp`` and
``nbf`` are kept on the import (``Import.expires``, ``Import.not_before``):
the running server checks them on its clock, when it wires the import and,
if nats-server would find the import again by the token's subject
(``Import.ends_at_expiry``), for each message after.  nats-server leaves a refused
import out with a debug line and serves the rest of the account.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from fakejs.core.account_config import CHUNKED, SINGLETON, STREAM, Export, Import
from fakejs.core.jwt.claims import JwtError, decode
from fakejs.core.subjects import is_subset, is_valid_subject, tokens
from fakejs.gocompat.goquote import quote_text as go_quote

ACTIVATION = "activation"
NANOSECONDS = 1_000_000_000
# nats-io/jwt's ResponseType values and the fakejs reply types they are.
_RESPONSE_TYPES = {"Singleton": SINGLETON, "Stream": STREAM, "Chunked": CHUNKED}


@dataclass(frozen=True)
class ExportClaim:
    """One export of an account JWT (nats-io/jwt's ``Export``): the fakejs export and who may import it."""

    export: Export
    token_required: bool = False
    account_token_position: int = 0
    # ``revocations``: importing account key (or ``*``) -> activations issued at or before it are revoked.
    revocations: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class ImportClaim:
    """One import of an account JWT (nats-io/jwt's ``Import``), as the fakejs import it makes."""

    imported: Import
    token: str = ""
    subject: str = ""  # the JWT's ``subject``, as nats-server names the import in its log lines


def _text(entry: Mapping[str, Any], key: str) -> str:
    value = entry.get(key)
    return value if isinstance(value, str) else ""


def _entries(nats: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    value = nats.get(key)
    return [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def export_claims(nats: Mapping[str, Any]) -> tuple[ExportClaim, ...]:
    """The stream and service exports of an account claim's ``nats`` part, in its order."""
    found: list[ExportClaim] = []
    for entry in _entries(nats, "exports"):
        kind, subject = _text(entry, "type"), _text(entry, "subject")
        if kind not in ("stream", "service") or not subject:
            continue
        if kind == "service":
            response_type = _RESPONSE_TYPES.get(_text(entry, "response_type"), SINGLETON)
            threshold = _int(entry.get("response_threshold")) / NANOSECONDS
            export = Export(subject, True, (), response_type, threshold)
        else:
            export = Export(subject, False)
        raw = entry.get("revocations")
        revocations = {str(k): v for k, v in raw.items() if isinstance(v, int)} if isinstance(raw, dict) else {}
        position = _int(entry.get("account_token_position"))
        found.append(ExportClaim(export, bool(entry.get("token_req")), position, revocations))
    return tuple(found)


def import_claims(nats: Mapping[str, Any]) -> tuple[ImportClaim, ...]:
    """The imports of an account claim's ``nats`` part, in its order (entries without account or subject left out)."""
    found: list[ImportClaim] = []
    for entry in _entries(nats, "imports"):
        kind, account, subject = _text(entry, "type"), _text(entry, "account"), _text(entry, "subject")
        if kind not in ("stream", "service") or not account or not subject:
            continue
        to, local_subject = _text(entry, "to"), _text(entry, "local_subject")
        if kind == "service":
            # The importer publishes on ``subject`` (or ``local_subject``); the exporter's is ``to`` (or ``subject``).
            if local_subject:
                imported = Import(account, subject, True, local_subject)
            else:
                imported = Import(account, to or subject, True, subject)
        elif local_subject:
            imported = Import(account, subject, False, local_subject)
        else:
            prefix = to if not to or to.endswith(".") else to + "."
            imported = Import(account, subject, False, prefix + subject if to else "", to)
        found.append(ImportClaim(imported, _text(entry, "token"), subject))
    return tuple(found)


def _matching_export(exports: tuple[ExportClaim, ...], subject: str, service: bool) -> tuple[ExportClaim | None, bool]:
    """The export an import of ``subject`` goes through, and whether it matched exactly."""
    candidates = [e for e in exports if e.export.service == service]
    for claim in candidates:
        if claim.export.subject == subject:
            return claim, True
    return next((e for e in candidates if is_subset(subject, e.export.subject)), None), False


@dataclass(frozen=True)
class Exporter:
    """What an import's approval needs of the exporting account: its key, signing keys and exports."""

    public_key: str
    signing_keys: frozenset[str]
    exports: tuple[ExportClaim, ...]


def approval_problem(exporter: Exporter, importer_key: str, claim: ImportClaim) -> tuple[str, Import]:
    """Why ``exporter`` refuses the import (nats-server's error), or ``""`` and the import to wire.

    The import comes back with its activation token's ``exp`` and ``nbf``.
    """
    imported = claim.imported
    kind = "service" if imported.service else "stream"
    refused = f"{kind} import not authorized"
    if not is_valid_subject(imported.subject):
        return refused, imported
    export, exact = _matching_export(exporter.exports, imported.subject, imported.service)
    if export is None:
        return refused, imported
    if export.account_token_position > 0:
        names = [] if exact else tokens(imported.subject)
        position = export.account_token_position
        if position > len(names) or names[position - 1] != importer_key:
            return refused, imported
        return "", imported
    if not export.token_required:
        return "", imported
    problem, expires, not_before = activation_problem(exporter, importer_key, claim, export)
    if problem:
        return refused, imported
    found_again = _token_subject(claim.token) == (
        imported.local or imported.subject if imported.service else imported.subject
    )
    return "", replace(imported, expires=expires, not_before=not_before, ends_at_expiry=found_again)


def _token_subject(token: str) -> str:
    """The subject an activation token grants (nats-server looks its import up by it when the token expires)."""
    return _text(decode(token).nats, "subject")


def activation_problem(
    exporter: Exporter, importer_key: str, claim: ImportClaim, export: ExportClaim
) -> tuple[str, int, int]:
    """nats-server's ``checkActivation`` but for the times: a problem (``""``: none), the token's ``exp`` and ``nbf``."""
    if not claim.token:
        return "no activation token", 0, 0
    try:
        activation = decode(claim.token)
    except JwtError as exc:
        return f"invalid activation token: {exc}", 0, 0
    if activation.kind != ACTIVATION:
        return "not activation claim", 0, 0
    nats = activation.nats
    issuer_account = _text(nats, "issuer_account")
    imported = claim.imported
    if exporter.public_key not in (activation.issuer, issuer_account):
        return "activation token doesn't match account for import", 0, 0
    if activation.subject != importer_key:
        return "activation token doesn't match account it is being included in", 0, 0
    if _text(nats, "kind") != ("service" if imported.service else "stream"):
        return "mismatch between token import type and type of import", 0, 0
    if not is_subset(imported.subject, _text(nats, "subject")):
        return "activation token import subject doesn't match import", 0, 0
    if issuer_account and activation.issuer not in exporter.signing_keys | {exporter.public_key}:
        return "activation token issuer is not a signing key of the exporter", 0, 0
    for key in (activation.subject, "*"):
        if key in export.revocations and activation.issued_at <= export.revocations[key]:
            return "activation token revoked", 0, 0
    return "", activation.expires, activation.not_before


def import_issues(nats: Mapping[str, Any], account_key: str) -> list[tuple[str, bool]]:
    """nats-io/jwt's ``Import.Validate`` issues of an account claim's imports: (text, blocking).

    A blocking one (an error) makes the account invalid: nats-server refuses
    it (``account validation failed``) and warns of its issues at start.
    """
    issues: list[tuple[str, bool]] = []
    for entry in _entries(nats, "imports"):
        kind, subject = _text(entry, "type"), _text(entry, "subject")
        errors: list[str] = []
        if kind not in ("stream", "service"):
            errors.append(f"invalid import type: {go_quote(kind)}")
        if not _text(entry, "account"):
            errors.append("account to import from is not specified")
        issues += [(text, True) for text in errors]
        if _text(entry, "to"):
            issues.append(("the field to has been deprecated (use LocalSubject instead)", False))
        errors = []
        if not subject:
            errors.append("subject cannot be empty")
        if entry.get("share") and kind != "service":
            errors.append(f"sharing information (for latency tracking) is only valid for services: {go_quote(subject)}")
        if token := _text(entry, "token"):
            errors.extend(_token_issues(entry, token, account_key))
        issues += [(text, True) for text in errors]
    return issues


def _token_issues(entry: Mapping[str, Any], token: str, account_key: str) -> list[str]:
    """The activation token checks of ``Import.Validate`` (its times are checked when the import is used)."""
    subject = _text(entry, "subject")
    try:
        activation = decode(token)
    except JwtError:
        return [f"import {go_quote(subject)} contains an invalid activation token"]
    if activation.kind != ACTIVATION:
        return [f"import {go_quote(subject)} contains an invalid activation token"]
    nats = activation.nats
    issues: list[str] = []
    if _text(entry, "account") not in (activation.issuer, _text(nats, "issuer_account")):
        issues.append(f"activation token doesn't match account for import {go_quote(subject)}")
    if activation.subject != account_key:
        issues.append(f"activation token doesn't match account it is being included in, {go_quote(subject)}")
    if _text(nats, "kind") != _text(entry, "type"):
        issues.append(
            f"mismatch between token import type {_text(nats, 'kind')} and type of import {_text(entry, 'type')}"
        )
    covered = _text(entry, "to") if entry.get("type") == "service" and _text(entry, "to") else subject
    if not is_subset(covered, _text(nats, "subject")):
        issues.append(
            f"activation token import subject {go_quote(_text(nats, 'subject'))} doesn't match import {go_quote(subject)}"
        )
    return issues
