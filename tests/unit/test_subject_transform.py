"""The subject transform parser and applier (nats-server's ``subject_transform.go`` rules)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fakejs.core.subject_transform import (
    SubjectTransform,
    TransformError,
    fnv1a32,
    go_atoi,
    service_import_rename,
    stream_import_renames,
    transform_tokenize,
    transform_untokenize,
    validate_mapping,
)

TOKEN = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=12)


def parse(src: str, dest: str, rng: random.Random | None = None) -> SubjectTransform:
    transform = SubjectTransform.parse(src, dest, rng=rng)
    assert transform is not None
    return transform


def test_fnv1a32_matches_go() -> None:
    # Go: fnv.New32a() sums of "", "a" and "foobar".
    assert fnv1a32(b"") == 0x811C9DC5
    assert fnv1a32(b"a") == 0xE40C292C
    assert fnv1a32(b"foobar") == 0xBF9CF968


@pytest.mark.parametrize(
    ("text", "value"), [("1", 1), ("+2", 2), ("-3", -3), ("007", 7), ("9223372036854775807", 2**63 - 1)]
)
def test_go_atoi_accepts(text: str, value: int) -> None:
    assert go_atoi(text) == value


@pytest.mark.parametrize("text", ["", " 1", "1_0", "x", "+", "١", "9223372036854775808", "1.0"])
def test_go_atoi_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        go_atoi(text)


def test_empty_destination_is_no_transform() -> None:
    assert SubjectTransform.parse("a.*", "") is None


@pytest.mark.parametrize(
    ("src", "dest", "subject", "result"),
    [
        ("a.*.*", "b.$2.$1", "a.x.y", "b.y.x"),
        ("a.>", "b.>", "a.x.y", "b.x.y"),
        ("", "z.>", "a.b", "z.a.b"),
        (">", ">", "a.b", "a.b"),
        ("a.*", "{{sliceFromRight(1,3)}}", "a.abcdefgh", "ab.cde.fgh"),
        ("a.*", "{{sliceFromLeft(1,3)}}", "a.abcdefgh", "abc.def.gh"),
        ("a.*", "{{split(1,-)}}", "a.-ab--cd-", "ab.cd"),
        ("a.*", "x.{{wildcard(0)}}", "a.q", "x.a"),
        ("a.*", "x.{{left(1,2)}}.{{right(1,2)}}", "a.abcdef", "x.ab.ef"),
        ("a.*", "x.{{partition(7,1)}}.$1", "a.k1", "x.6.k1"),
        ("t5", "x.{{partition(9)}}", "t5", "x.0"),
    ],
)
def test_match(src: str, dest: str, subject: str, result: str) -> None:
    assert parse(src, dest).match(subject) == result


def test_split_from_left_works_on_bytes() -> None:
    got = parse("a.*", "{{splitFromLeft(1,1)}}").match("a.ü")
    assert got is not None and got.encode("utf-8", "surrogateescape") == b"\xc3.\xbc"


@pytest.mark.parametrize("subject", ["b.x", "a", "a.x.y", "a.*", "a..b", "a.>"])
def test_no_match(subject: str) -> None:
    assert parse("a.*", "b.$1").match(subject) is None


def test_random_draws_from_the_given_generator() -> None:
    rng, twin = random.Random(7), random.Random(7)
    transform = parse("a.*", "r.{{random(10)}}", rng)
    assert [transform.match("a.x") for _ in range(5)] == [f"r.{twin.getrandbits(31) % 10}" for _ in range(5)]
    assert parse("a.*", "r.{{random(0)}}").match("a.x") == "r.0"


def test_random_without_generator_is_an_error() -> None:
    with pytest.raises(RuntimeError):
        parse("a.*", "r.{{random(10)}}").match("a.x")


@pytest.mark.parametrize(
    ("src", "dest", "text"),
    [
        ("a.*", "b.*", "invalid subject"),
        ("a.*", "b.>", "invalid subject"),
        ("a..b", "c", "invalid subject"),
        ("a.*", "b.$2", "invalid mapping destination: wildcard index out of range in $2: [2]"),
        ("a", "b.$1", "invalid mapping destination: wildcard index out of range in $1"),
        ("a", "{{split(1,-)}}", "invalid mapping destination: wildcard index out of range in {{split(1,-)}}"),
        ("a.*", "{{bogus(1)}}", "invalid mapping destination: unknown function in {{bogus(1)}}"),
        (
            "a.*",
            "{{random()}}",
            "invalid mapping destination: function argument is invalid or in the wrong format in {{random()}}",
        ),
        (
            "a.*",
            "{{split(1,a b)}}",
            "invalid mapping destination: function argument is invalid or in the wrong format in {{split(1,a b)}}",
        ),
        (
            "a.*",
            "{{left(1,2147483648)}}",
            "invalid mapping destination: function argument is invalid or in the wrong format in {{left(1,2147483648)}}",
        ),
    ],
)
def test_parse_errors(src: str, dest: str, text: str) -> None:
    with pytest.raises(TransformError) as caught:
        SubjectTransform.parse(src, dest)
    assert str(caught.value) == text


def test_strict_mode() -> None:
    with pytest.raises(TransformError, match="not using all of the token wildcard"):
        SubjectTransform.parse("a.*.*", "b.$1", strict=True)
    with pytest.raises(TransformError, match=r"only mapping function allowed for import transforms"):
        SubjectTransform.parse("a.*", "b.{{partition(3,1)}}", strict=True)
    assert parse("a.*.*", "b.$2.$1").match("a.x.y") == "b.y.x"


@pytest.mark.parametrize(
    ("dest", "text"),
    [
        ("b..c", "invalid mapping destination: invalid transform"),
        ("b.a c", "invalid mapping destination: invalid transform"),
        (">.b", "invalid mapping destination: invalid transform in b"),
        ("b.{{x}}", "invalid mapping destination: unknown function in {{x}}"),
    ],
)
def test_validate_mapping(dest: str, text: str) -> None:
    with pytest.raises(TransformError) as caught:
        validate_mapping("a.*", dest)
    assert str(caught.value) == text
    validate_mapping("a.*", "")  # nothing to check


@given(st.lists(TOKEN, min_size=1, max_size=5))
def test_fwc_to_fwc_keeps_the_tail(tokens: list[str]) -> None:
    subject = "p." + ".".join(tokens)
    assert parse("p.>", "q.>").match(subject) == "q." + ".".join(tokens)


@given(TOKEN, st.integers(min_value=-3, max_value=15))
def test_slices_keep_every_byte(token: str, size: int) -> None:
    for function in ("sliceFromLeft", "sliceFromRight", "splitFromLeft", "splitFromRight"):
        got = parse("a.*", f"{{{{{function}(1,{size})}}}}").match("a." + token)
        assert got is not None and got.replace(".", "") == token
        pieces = got.split(".")
        assert all(pieces)
        if function.startswith("slice") and 0 < size < len(token):
            assert all(len(piece) <= size for piece in pieces)


@given(TOKEN, st.integers(min_value=1, max_value=50))
def test_partition_is_stable_and_in_range(token: str, buckets: int) -> None:
    transform = parse("a.*", f"{{{{partition({buckets},1)}}}}")
    got = transform.match("a." + token)
    assert got == transform.match("a." + token)
    assert got is not None and 0 <= int(got) < buckets
    assert int(got) == fnv1a32(token.encode()) % buckets


# -- reverse() and the import renames (nats-server's strict import transforms) ------------


@pytest.mark.parametrize(
    ("src", "dest", "subject", "back"),
    [
        ("a.*.*", "b.$2.$1", "a.1.2", "b.*.*"),
        ("t.*", "tt.{{wildcard(1)}}.x", "t.q", "tt.*.x"),
        ("ev.>", "from.a.ev.>", "ev.x.y", "from.a.ev.>"),
        ("uno", "one", "uno", "one"),
    ],
)
def test_reverse_leads_back(src: str, dest: str, subject: str, back: str) -> None:
    forward = SubjectTransform.parse(src, dest, strict=True)
    assert forward is not None
    reverse = forward.reverse()
    assert reverse is not None
    assert reverse.src == back
    assert reverse.match(forward.transform(subject)) == subject


def test_reverse_of_an_import_needing_more_references_is_none() -> None:
    forward = parse("a.*.*", "b.$1")  # not strict: one wildcard unused, no way back
    assert forward.reverse() is None


def test_tokenize_and_untokenize() -> None:
    assert transform_tokenize("a.*.b.*.>") == "a.$1.b.$2.>"
    assert transform_untokenize("a.$2.{{wildcard(1)}}.$x.>") == ("a.*.*.$x.>", ["$2", "{{wildcard(1)}}"])


def test_stream_import_renames() -> None:
    forward, back = stream_import_renames("ev.>", "from.a.ev.>")
    assert (forward("ev.x.y"), back("from.a.ev.x.y")) == ("from.a.ev.x.y", "ev.x.y")
    forward, back = stream_import_renames("t.*", "tt.$1.x")
    assert (forward("t.q"), back("tt.q.x")) == ("tt.q.x", "t.q")
    forward, back = stream_import_renames("a.*.*", "b.*.*")  # '*' tokens taken in order
    assert (forward("a.1.2"), back("b.1.2")) == ("b.1.2", "a.1.2")
    forward, back = stream_import_renames("a.*.*", "b.$2.$1")
    assert (forward("a.1.2"), back("b.2.1")) == ("b.2.1", "a.1.2")
    forward, back = stream_import_renames("uno", "one")
    assert (forward("uno"), back("one")) == ("one", "uno")
    forward, back = stream_import_renames("x.>", "x.>")
    assert (forward("x.y"), back("x.y")) == ("x.y", "x.y")


def test_service_import_renames() -> None:
    assert service_import_rename("remote.>", "api.>")("remote.foo.bar") == "api.foo.bar"
    assert service_import_rename("req.$2.$1", "svc.*.*")("req.b.a") == "svc.a.b"
    assert service_import_rename("local", "svc.x")("local") == "svc.x"
    assert service_import_rename("svc.*", "svc.*")("svc.q") == "svc.q"


def test_import_renames_allow_only_wildcard_functions() -> None:
    with pytest.raises(TransformError, match="only mapping function allowed for import"):
        stream_import_renames("a.*", "b.{{partition(3,1)}}")
