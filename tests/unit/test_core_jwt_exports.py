"""fakejs.core.jwt.exports and account_configs without a server: exports, imports and activation tokens.

Credentials come from :mod:`fakejs.testkit.jwt` with a fixed clock.
"""

from __future__ import annotations

from typing import Any

from fakejs.core.account_config import CHUNKED, SINGLETON, Export, Import, MapDestination, Mapping
from fakejs.core.imports import activation_current
from fakejs.core.jetstream_limits import JetStreamLimits
from fakejs.core.jwt.account_configs import (
    account_configs,
    approved_imports,
    exporter,
    message_trace,
    subject_mappings,
    tiered_limits,
    unknown_exporters,
)
from fakejs.core.jwt.account_validation import Issue, export_issues, limit_issues, mapping_issues, trace_issues
from fakejs.core.jwt.claims import decode
from fakejs.core.jwt.exports import export_claims, import_claims, import_issues
from fakejs.core.jwt.trust import AccountClaims, TrustedOperators, resolve
from fakejs.testkit.jwt import Account, Operator

NOW = 1_700_000_000.0
PRIVATE = {"type": "stream", "subject": "orders.>", "token_req": True}


def operator() -> Operator:
    return Operator("O", now=lambda: NOW)


def claims_of(account: Account) -> AccountClaims:
    return AccountClaims.from_claims(decode(account.jwt))


def imports_of(importer: Account, *exporters: Account) -> tuple[Import, ...]:
    found = {e.public_key: exporter(claims_of(e)) for e in exporters}
    return approved_imports(claims_of(importer), found)


def stream(exporter: Account, subject: str, **fields: Any) -> dict[str, Any]:
    return {"type": "stream", "account": exporter.public_key, "subject": subject, **fields}


def test_exports_become_fakejs_exports() -> None:
    op = operator()
    service = {"type": "service", "subject": "help.>", "response_type": "Chunked", "response_threshold": 5_000_000_000}
    account = op.account("EXP", exports=[service, {"type": "stream", "subject": "feed.*", "token_req": True}])
    claims = export_claims(decode(account.jwt).nats)
    assert [c.export for c in claims] == [Export("feed.*", False), Export("help.>", True, (), CHUNKED, 5.0)]
    assert [c.token_required for c in claims] == [True, False]
    assert export_claims({"exports": [{"type": "service", "subject": "a"}]})[0].export.response_type == SINGLETON


def test_imports_read_to_and_local_subject_as_nats_server_does() -> None:
    nats = {
        "imports": [
            {"type": "stream", "account": "A", "subject": "feed.>", "to": "from"},
            {"type": "stream", "account": "A", "subject": "feed.*", "local_subject": "mine.$1"},
            {"type": "service", "account": "A", "subject": "ask", "to": "help.desk"},
            {"type": "service", "account": "A", "subject": "help.desk", "local_subject": "ask"},
            {"type": "stream", "subject": "no.account"},
        ]
    }
    assert [c.imported for c in import_claims(nats)] == [
        Import("A", "feed.>", False, "from.feed.>", "from"),
        Import("A", "feed.*", False, "mine.$1"),
        Import("A", "help.desk", True, "ask"),
        Import("A", "help.desk", True, "ask"),
    ]


def test_public_private_and_token_position_exports_approve_their_importers() -> None:
    op = operator()
    positioned = {"type": "stream", "subject": "to.*.>", "account_token_position": 2}
    exp = op.account("EXP", exports=[{"type": "stream", "subject": "pub.>"}, PRIVATE, positioned])
    imp = op.account("IMP")
    imp.imports += [stream(exp, "pub.a"), stream(exp, "orders.>"), stream(exp, f"to.{imp.public_key}.x")]
    imp.imports.append(stream(exp, "to.SOMEONE.x"))
    assert [i.subject for i in imports_of(imp, exp)] == ["pub.a", f"to.{imp.public_key}.x"]
    imp.imports[1]["token"] = exp.activation(imp, "orders.>", expires=30)
    approved = imports_of(imp, exp)
    assert [(i.subject, i.expires) for i in approved][:2] == [("orders.>", int(NOW) + 30), ("pub.a", 0)]


def test_revoked_and_foreign_signing_key_activations_are_refused() -> None:
    op = operator()
    exp, imp = op.account("EXP", exports=[PRIVATE]), op.account("IMP")
    imp.imports.append(stream(exp, "orders.>", token=exp.activation(imp, "orders.>")))
    exp.exports[0]["revocations"] = {imp.public_key: int(NOW)}
    assert imports_of(imp, exp) == ()
    exp.exports[0]["revocations"] = {"*": int(NOW) - 1}
    assert len(imports_of(imp, exp)) == 1
    stranger_key = op.account("STRANGER").signing_key()
    imp.imports[0]["token"] = exp.activation(imp, "orders.>", signer=stranger_key)
    assert imports_of(imp, exp) == ()


def test_tokens_that_do_not_fit_their_import_are_validation_issues() -> None:
    op = operator()
    exp, imp, other = op.account("EXP", exports=[PRIVATE]), op.account("IMP"), op.account("OTHER")
    imp.imports.append(stream(exp, "orders.>", token=exp.activation(other, "orders.a")))
    issues = import_issues(decode(imp.jwt).nats, imp.public_key)
    assert issues == [
        ('activation token doesn\'t match account it is being included in, "orders.>"', True),
        ('activation token import subject "orders.a" doesn\'t match import "orders.>"', True),
    ]
    trusted = TrustedOperators.from_jwts([op.jwt])
    assert list(resolve(trusted, {a.public_key: a.jwt for a in (exp, imp)})) == [exp.public_key]


def test_account_configs_leave_out_imports_of_unknown_accounts() -> None:
    op = operator()
    exp, stranger = op.account("EXP", exports=[{"type": "stream", "subject": "a"}]), op.account("STRANGER")
    imp = op.account("IMP", imports=[stream(stranger, "b"), stream(exp, "a")])
    accounts = {a.public_key: claims_of(a) for a in (exp, imp)}
    configs = {c.name: c for c in account_configs(accounts)}
    assert configs[imp.public_key].imports == (Import(exp.public_key, "a", False),)
    assert configs[exp.public_key].exports == (Export("a", False),)


def test_an_activation_is_current_between_its_nbf_and_exp() -> None:
    imported = Import("A", "a", False, expires=100, not_before=50)
    assert [activation_current(imported, t) for t in (49, 50, 99, 100)] == [False, True, True, False]
    assert activation_current(Import("A", "a", False), 1e12)


def test_tiered_limits_are_read_as_nats_server_reads_them() -> None:
    tiers = tiered_limits({"tiered_limits": {"R1": {"mem_storage": 10, "streams": 2}, "R3": {"disk_storage": -1}}})
    assert tiers["R1"] == JetStreamLimits(10, 0, 2, 0, -1, -1, -1, False)
    assert tiers["R3"] == JetStreamLimits(0, -1, 0, 0, -1, -1, -1, False)
    op = operator()
    tiered = op.account("T", limits={"tiered_limits": {"R3": {"mem_storage": -1}}})
    [config] = account_configs({tiered.public_key: claims_of(tiered)})
    assert (config.jetstream, list(config.tiers)) == (JetStreamLimits(), ["R3"])
    off = op.account("OFF", limits={"tiered_limits": {"R1": {"streams": 3}}})
    assert account_configs({off.public_key: claims_of(off)})[0].jetstream is None


def test_mappings_and_their_validation() -> None:
    nats = {
        "mappings": {"a": [{"subject": "b", "weight": 40}, {"subject": "c", "weight": 60}], "x": [{"subject": "x.$9"}]}
    }
    assert subject_mappings(nats) == (Mapping("a", (MapDestination("b", 40), MapDestination("c", 60))),)
    assert subject_mappings({"mappings": {"a": [{"subject": "b"}]}})[0].destinations == (MapDestination("b", 100),)
    over = {"mappings": {"a": [{"subject": "b", "weight": 40}, {"subject": "c"}]}}
    assert [i.text for i in mapping_issues(over)] == [
        'Mapping "a" exceeds 100% among all of it\'s weighted to mappings'
    ]
    scoped = {
        "mappings": {
            "a": [{"subject": "b", "weight": 70, "cluster": "C"}, {"subject": "c", "weight": 70, "cluster": "C"}]
        }
    }
    assert [i.text for i in mapping_issues(scoped)] == [
        'Mapping "a" in cluster "C" exceeds 100% among all of it\'s weighted to mappings'
    ]


def test_limit_issues_follow_nats_io_jwt() -> None:
    exports = [{"type": "stream", "subject": "a.*"}, {"type": "stream", "subject": "b"}]
    assert [i.text for i in limit_issues({"limits": {"exports": 1}, "exports": exports})] == [
        "the account contains more exports than allowed by the operator",
        "the account contains wildcard exports that are not allowed by the operator",
    ]
    assert limit_issues({"limits": {"exports": -1}, "exports": exports}) == []
    # imports left out of limits is 0: an account with imports but no such limit is invalid
    assert len(limit_issues({"limits": {"subs": 1}, "imports": [{}]})) == 2
    assert limit_issues({"imports": [{}]}) == [Issue("the account contains more imports than allowed by the operator")]


def test_export_issues_follow_nats_io_jwt() -> None:
    exports = [
        {"type": "stream", "subject": "a.>"},
        {"type": "stream", "subject": "a.b", "account_token_position": 2},
        {"type": "service", "subject": "q", "response_type": "Many"},
    ]
    assert [i.text for i in export_issues({"exports": exports})] == [
        "Account Token Position can only be used with wildcard subjects: a.b",
        'invalid response type for service: "Many"',
        'stream export subject "a.>" already exports "a.b"',
    ]


def test_message_trace_as_nats_server_sets_it() -> None:
    assert message_trace({"trace": {"dest": "t", "sampling": 30}}) == ("t", 30)
    assert message_trace({"trace": {"dest": "t"}}) == ("t", 100)
    assert message_trace({"trace": {"dest": "t.*", "sampling": 30}}) == ("", 0)
    assert message_trace({}) == ("", 0)
    assert [i.text for i in trace_issues({"trace": {"dest": "t.>", "sampling": 101}})] == [
        'the account Trace.Destination subject "t.>" is not a valid publish subject',
        "the account Trace.Sampling value '101' is not valid, should be in the range [1..100]",
    ]


def test_unknown_exporters_are_named_as_nats_server_logs_them() -> None:
    op = operator()
    stranger, known = op.account("STRANGER"), op.account("KNOWN", exports=[{"type": "stream", "subject": "k"}])
    imports = [
        stream(stranger, "news.>"),
        {"type": "service", "account": stranger.public_key, "subject": "ask", "to": "help"},
    ]
    imp = op.account("IMP", imports=[*imports, stream(known, "k")])
    assert unknown_exporters(claims_of(imp), {known.public_key}) == [
        f"Can't locate account [{stranger.public_key}] for import of [ask] service (err=account missing)",
        f"Can't locate account [{stranger.public_key}] for import of [news.>] stream (err=account missing)",
    ]
