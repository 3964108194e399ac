"""fakejs.core.jwt.scoped without a server: scoped signing keys, their templates and the users they issue."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakejs.core.jwt.claims import Claims, decode
from fakejs.core.jwt.scoped import (
    EXPANSION_LIMIT,
    MUSTACHE,
    ScopeError,
    TemplateError,
    UserScope,
    expand_template,
    has_empty_permissions,
    scoped_user,
    user_scopes,
)
from fakejs.testkit.jwt import Operator, user_template

NOW = 1_700_000_000.0


def claims(
    name: str = "alice", tags: tuple[str, ...] = (), account_tags: tuple[str, ...] = ()
) -> tuple[Claims, Claims]:
    """A scoped user's claims and its account's."""
    app = Operator("O", now=lambda: NOW).account("APP", tags=account_tags)
    key = app.scoped_signing_key("role")
    return decode(app.user(name, signer=key, tags=tags).jwt), decode(app.jwt)


def expanded(template: dict[str, object], **options: object) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    user, account = claims(**options)  # type: ignore[arg-type]
    result = expand_template({**user_template(), **template}, user, account)
    return result["pub"], result["sub"]


def test_the_account_jwt_holds_its_scoped_keys_as_nats_io_jwt_writes_them() -> None:
    app = Operator("O").account("APP")
    plain, scoped = app.signing_key(), app.scoped_signing_key("svc", pub_allow=["a"], limits={"subs": 3})
    entries = decode(app.jwt).nats["signing_keys"]
    assert plain.public_key in entries
    entry = next(e for e in entries if isinstance(e, dict))
    assert list(entry) == ["kind", "key", "role", "template", "description"]
    assert entry["template"] == {"pub": {"allow": ["a"]}, "sub": {}, "subs": 3, "data": -1, "payload": -1}
    scope = user_scopes(decode(app.jwt).nats)[scoped.public_key]
    assert (scope.role, scope.template["subs"]) == ("svc", 3)


def test_a_scoped_user_has_no_limits_of_its_own() -> None:
    user, _ = claims()
    assert has_empty_permissions(user.nats)
    for own in ({"subs": -1}, {"src": ""}, {"times": []}, {"pub": {"allow": []}}, {"resp": {}}, {"bearer_token": True}):
        assert not has_empty_permissions({**user.nats, **own}), own
    for zero in ({"subs": 0}, {"pub": None}, {"times_location": ""}, {"bearer_token": False}, {"pub": {"x": 1}}):
        assert has_empty_permissions({**user.nats, **zero}), zero


def test_names_keys_and_tags_expand() -> None:
    publish, subscribe = expanded(
        {
            "pub": {"allow": ["{{ name() }}.{{SUBJECT()}}", "{{account-name()}}.{{account-subject()}}"]},
            "sub": {"allow": ["{{tag(dept)}}.{{account-tag(region)}}.{{tag(dept)}}"], "deny": ["{{tag(level)}}"]},
        },
        name="bob",
        tags=("dept:a", "dept:b", "level:1", "Level:2"),
        account_tags=("region:eu",),
    )
    assert publish["allow"][0].startswith("bob.U") and publish["allow"][1].startswith("APP.A")
    # Each combination replaces every occurrence of a tag's text at once, as nats-server's strings.Replace does.
    assert subscribe["allow"] == ["a.eu.a", "a.eu.a", "b.eu.b", "b.eu.b"]
    # The tag's name is lowered, the JWT's tags are taken as they are.
    assert subscribe["deny"] == ["1"]


def test_missing_tags_and_invalid_subjects() -> None:
    publish, subscribe = expanded({"pub": {"allow": ["{{tag(x)}}", "plain"]}, "sub": {"allow": ["{{tag(x)}}"]}})
    assert publish == {"allow": ["plain"], "deny": []}
    assert subscribe == {"allow": [], "deny": [">"]}
    with pytest.raises(TemplateError, match=re.escape('generated invalid subject "{{tag(x)}}": "x" is not defined')):
        expanded({"sub": {"deny": ["{{tag(x)}}"]}})
    with pytest.raises(TemplateError, match=re.escape('template operation in "{{who()}}": "who()" is not defined')):
        expanded({"pub": {"allow": ["{{who()}}"]}})
    with pytest.raises(TemplateError, match="generated invalid subject"):
        expanded({"pub": {"deny": ["{{name()}}"]}}, name="two words")
    # Without templates a list is kept as it is, invalid subjects and all.
    assert expanded({"pub": {"allow": ["a..b"]}})[0]["allow"] == ["a..b"]


def test_expansions_are_limited() -> None:
    values = tuple(f"t:{i}" for i in range(65))
    with pytest.raises(TemplateError, match=f"template expansion exceeds limit: {EXPANSION_LIMIT}"):
        expanded({"sub": {"allow": ["{{tag(t)}}.{{ tag(t) }}"]}}, tags=values)
    assert len(expanded({"sub": {"allow": ["{{tag(t)}}.x"]}}, tags=values)[1]["allow"]) == 65


def test_a_scoped_user_gets_the_template_in_place_of_its_own() -> None:
    user, account = claims()
    scope = UserScope("KEY", "role", {**user_template(limits={"subs": 2}), "bearer_token": True})
    nats = scoped_user(scope, user, account)
    assert (nats["subs"], nats["bearer_token"], nats["issuer_account"]) == (2, True, account.subject)
    with pytest.raises(ScopeError, match="scoped users require no permissions or limits set"):
        scoped_user(scope, Claims(user.subject, user.issuer, "user", nats={"subs": 1}), account)
    with pytest.raises(ScopeError, match="User JWT generated invalid permissions"):
        scoped_user(UserScope("KEY", "", {"pub": {"deny": ["{{x()}}"]}}), user, account)


def test_templates_with_proxies_are_named() -> None:
    assert UserScope("K", "", {"times": [{"start": "01:00:00", "end": "02:00:00"}]}).unserved() == []
    assert UserScope("K", "", {"proxy_required": True}).unserved() == ["trusted proxies (proxy_required)"]
    assert UserScope("K", "", user_template()).unserved() == []


OPERATIONS = st.sampled_from(
    [
        "name()",
        "subject()",
        "account-name()",
        "account-subject()",
        "tag(a)",
        "account-tag(a)",
        "TAG(a)",
        "x()",
        " tag(b) ",
    ]
)
TEMPLATE_SUBJECTS = st.lists(
    st.lists(
        st.sampled_from(["a", "b.", ".", ">", "*", " ", "{{", "}}"]) | OPERATIONS.map(lambda op: "{{" + op + "}}")
    ).map(lambda parts: "".join(parts)),
    max_size=4,
)


@settings(max_examples=300, deadline=None)
@given(
    allow=TEMPLATE_SUBJECTS,
    deny=TEMPLATE_SUBJECTS,
    tags=st.lists(st.sampled_from(["a:1", "a:2", "b:x", "A:3", "a:", "b: y"]), max_size=5),
)
def test_any_template_expands_or_is_refused(allow: list[str], deny: list[str], tags: list[str]) -> None:
    user, account = claims(tags=tuple(tags), account_tags=tuple(tags))
    try:
        result = expand_template({"pub": {"allow": allow, "deny": deny}, "sub": {"allow": deny}}, user, account)
    except TemplateError:
        return
    for permission in (result["pub"], result["sub"]):
        assert all(isinstance(subject, str) for subject in permission["allow"] + permission["deny"])
        if any("{{" in subject for subject in permission["allow"]):  # a list with templates is fully expanded
            assert not any(MUSTACHE.search(subject) for subject in permission["allow"])
