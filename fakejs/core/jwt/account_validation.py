"""An account JWT checked as nats-io/jwt's ``AccountClaims.Validate`` checks it, in part.

nats-server refuses an account whose claims have a blocking issue (its
resolver lookup fails with ``account validation failed``: its users cannot
log in) and, at start, warns of each preloaded account's issues.  The
issues checked here: the imports (:func:`~fakejs.core.jwt.exports.import_issues`,
with the warning for the deprecated ``to``), the exports (their fields, a
kind's subjects containing one another), the ``imports`` and ``exports``
limits and ``wildcards`` (exports with wildcards refused when false), and
``tiered_limits`` with a blank tier name, ``mappings`` weighing over 100%, a
``trace`` destination not to publish to or a sampling out of range; with :func:`account_issues`' ``now``, the claim's ``exp`` and ``nbf``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fakejs.core.jwt.claims import Claims
from fakejs.core.jwt.exports import import_issues
from fakejs.core.subjects import has_wildcard, is_subset
from fakejs.gocompat.goquote import quote_text

NO_LIMIT = -1


@dataclass(frozen=True)
class Issue:
    """One validation issue: its text, and whether it makes the account invalid (an error, not a warning)."""

    text: str
    blocking: bool = True


def _count(limits: Mapping[str, Any], key: str) -> int:
    value = limits.get(key, 0)  # Go's zero value when left out (omitempty)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _entries(nats: Mapping[str, Any], key: str) -> list[Any]:
    value = nats.get(key)
    return value if isinstance(value, list) else []


def limit_issues(nats: Mapping[str, Any]) -> list[Issue]:
    """The ``imports``, ``exports`` and ``wildcards`` errors, in nats-io/jwt's order."""
    raw = nats.get("limits")
    limits: Mapping[str, Any] = raw if isinstance(raw, dict) else {}
    imports, exports = _entries(nats, "imports"), _entries(nats, "exports")
    issues: list[Issue] = []
    too_many_imports = Issue("the account contains more imports than allowed by the operator")
    import_limit = _count(limits, "imports")
    if any(limits.values()) and import_limit >= 0 and len(imports) > import_limit:
        issues.append(too_many_imports)
    if import_limit != NO_LIMIT and len(imports) > import_limit:
        issues.append(too_many_imports)
    export_limit = _count(limits, "exports")
    if export_limit != NO_LIMIT:
        if len(exports) > export_limit:
            issues.append(Issue("the account contains more exports than allowed by the operator"))
        if not limits.get("wildcards"):
            for export in exports:
                subject = export.get("subject") if isinstance(export, dict) else None
                if isinstance(subject, str) and has_wildcard(subject):
                    issues.append(Issue("the account contains wildcard exports that are not allowed by the operator"))
    return issues


RESPONSE_TYPES = ("", "Singleton", "Stream", "Chunked")


def _export_issues(export: Mapping[str, Any]) -> list[str]:
    """nats-io/jwt's ``Export.Validate`` errors of one export, in its order."""
    kind, subject = export.get("type"), export.get("subject")
    response_type, threshold = export.get("response_type", ""), export.get("response_threshold", 0)
    errors: list[str] = []
    if kind not in ("stream", "service"):
        errors.append(f"invalid export type: {quote_text(str(kind or ''))}")
    if kind == "service" and response_type not in RESPONSE_TYPES:
        errors.append(f"invalid response type for service: {quote_text(str(response_type))}")
    if kind == "stream":
        if response_type:
            errors.append(f"invalid response type for stream: {quote_text(str(response_type))}")
        if export.get("allow_trace"):
            errors.append("AllowTrace only valid for service export")
    if export.get("service_latency") and kind != "service":
        errors.append("latency tracking only permitted for services")
    if isinstance(threshold, int) and threshold < 0:
        errors.append("negative response threshold is invalid")
    if isinstance(threshold, int) and threshold > 0 and kind != "service":
        errors.append("response threshold only valid for services")
    text = subject if isinstance(subject, str) else ""
    if not text:
        errors.append("subject cannot be empty")
    elif " " in text:
        errors.append(f"subject {quote_text(text)} cannot have spaces")
    position = export.get("account_token_position")
    if isinstance(position, int) and position > 0:
        tokens = text.split(".")
        if not has_wildcard(text):
            errors.append(f"Account Token Position can only be used with wildcard subjects: {text}")
        elif position > len(tokens):
            errors.append(f"Account Token Position {position} exceeds length of subject '{text}'")
        elif tokens[position - 1] != "*":
            errors.append(
                f"Account Token Position {position} matches '{tokens[position - 1]}' but must match a * in: {text}"
            )
    return errors


def export_issues(nats: Mapping[str, Any]) -> list[Issue]:
    """nats-io/jwt's ``Exports.Validate``: each export's errors, then exports of a kind that contain another."""
    exports = [e for e in _entries(nats, "exports") if isinstance(e, dict)]
    issues = [Issue(text) for export in exports for text in _export_issues(export)]
    for kind in ("service", "stream"):
        subjects = [str(e.get("subject", "")) for e in exports if (e.get("type") == "service") == (kind == "service")]
        contained: dict[str, str] = {}
        for i, inner in enumerate(subjects):
            for j, outer in enumerate(subjects):
                if i != j and is_subset(inner, outer):
                    contained.setdefault(outer, inner)
        issues += [
            Issue(f"{kind} export subject {quote_text(outer)} already exports {quote_text(inner)}")
            for outer, inner in contained.items()
        ]
    return issues


def tier_issues(nats: Mapping[str, Any]) -> list[Issue]:
    """``OperatorLimits.Validate``: a blank tier name (plain limits beside tiers are dropped when decoded)."""
    limits = nats.get("limits")
    tiers = limits.get("tiered_limits") if isinstance(limits, dict) else None
    if isinstance(tiers, dict) and "" in tiers:
        return [Issue('Tiered JetStream Limits can not contain a blank "" tier name')]
    return []


def _weight(entry: Mapping[str, Any]) -> int:
    weight = entry.get("weight")
    return weight if isinstance(weight, int) and not isinstance(weight, bool) and weight else 100


def mapping_issues(nats: Mapping[str, Any]) -> list[Issue]:
    """nats-io/jwt's ``Mapping.Validate``: no weight over 100, nor in all (per cluster, and unscoped)."""
    raw = nats.get("mappings")
    issues: list[Issue] = []
    for source, entries in (raw if isinstance(raw, dict) else {}).items():
        per_cluster: dict[str, int] = {}
        total = 0
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, dict):
                continue
            weight, cluster = _weight(entry), entry.get("cluster")
            if weight > 100:
                issues.append(Issue(f"Mapping {quote_text(source)} has a weight {weight} that exceeds 100"))
            if isinstance(cluster, str) and cluster:
                per_cluster[cluster] = per_cluster.get(cluster, 0) + weight
                if per_cluster[cluster] > 100:
                    issues.append(
                        Issue(
                            f"Mapping {quote_text(source)} in cluster {quote_text(cluster)} exceeds 100% "
                            "among all of it's weighted to mappings"
                        )
                    )
            else:
                total += weight
        if total > 100:
            issues.append(Issue(f"Mapping {quote_text(source)} exceeds 100% among all of it's weighted to mappings"))
    return issues


def trace_issues(nats: Mapping[str, Any]) -> list[Issue]:
    """``Account.Validate``'s checks of ``trace``: a destination to publish to, a sampling in 0..100."""
    trace = nats.get("trace")
    if not isinstance(trace, dict):
        return []
    issues: list[Issue] = []
    destination = trace.get("dest")
    text = destination if isinstance(destination, str) else ""
    if not text:
        issues.append(Issue("the account Trace.Destination subject cannot be empty"))
    elif " " in text:
        issues.append(Issue(f"the account Trace.Destination subject {quote_text(text)} cannot have spaces"))
    if text and has_wildcard(text):
        issues.append(Issue(f"the account Trace.Destination subject {quote_text(text)} is not a valid publish subject"))
    sampling = trace.get("sampling", 0)
    if isinstance(sampling, int) and not 0 <= sampling <= 100:
        issues.append(
            Issue(f"the account Trace.Sampling value '{sampling}' is not valid, should be in the range [1..100]")
        )
    return issues


def account_issues(claims: Claims, now: float | None = None) -> list[Issue]:
    """The validation issues of an account claim (its times too when ``now`` is given), in nats-io/jwt's order."""
    issues: list[Issue] = []
    if now is not None and (problem := claims.time_problem(now)):
        issues.append(Issue(problem))
    issues.extend(Issue(text, blocking) for text, blocking in import_issues(claims.nats, claims.subject))
    issues.extend(export_issues(claims.nats))
    issues.extend(tier_issues(claims.nats))
    issues.extend(mapping_issues(claims.nats))
    issues.extend(trace_issues(claims.nats))
    issues.extend(limit_issues(claims.nats))
    return issues


def invalid(claims: Claims) -> bool:
    """Whether the account claim has a blocking issue other than its times (nats-server refuses the account)."""
    return any(issue.blocking for issue in account_issues(claims))
