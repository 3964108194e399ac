"""Property: any nested value, written in any of the format's styles, parses back to itself."""

from __future__ import annotations

import datetime as dt
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from fakejs.conf import parse, plain

KEYWORDS = {"include", "true", "false", "yes", "no", "on", "off"}
keys = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True).filter(lambda k: k not in KEYWORDS)
bare_words = st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_./@:-]{0,10}", fullmatch=True).filter(
    lambda w: w.lower() not in KEYWORDS
)
texts = st.text(st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from("\t\n\r\"\\'"), max_size=12)
floats = st.builds(
    lambda whole, frac, neg: (whole, frac, neg), st.integers(0, 10**6), st.integers(0, 999), st.booleans()
)
stamps = st.datetimes(dt.datetime(1000, 1, 1), dt.datetime(9999, 12, 31)).map(
    lambda d: d.replace(microsecond=0, tzinfo=dt.UTC)
)


class Float(float):
    """A float that remembers the digits it is written with (the format has no exponents)."""

    text: str


def make_float(parts: tuple[int, int, bool]) -> Float:
    whole, frac, neg = parts
    text = f"{'-' if neg else ''}{whole}.{frac}"
    number = Float(text)
    number.text = text
    return number


class Bare(str):
    """A string that may be written without quotes."""


scalars = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    st.booleans(),
    floats.map(make_float),
    stamps,
    texts,
    bare_words.map(Bare),
)
trees = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=20,
)


class Style:
    """How to write: key separator, member terminator, quoting, spacing."""

    def __init__(self, draw: Any) -> None:
        self.sep = draw(st.sampled_from([" = ", "=", ": ", ":", " ", "\t"]))
        self.end = draw(st.sampled_from(["\n", ";", "; ", ",", ",\n", " \n", " # note\n", " // note\n"]))
        self.item_end = draw(st.sampled_from([",", ", ", "\n", ",\n", " # c\n"]))
        self.quote_keys = draw(st.booleans())
        self.single = draw(st.booleans())

    def key(self, key: str) -> str:
        return f'"{key}"' if self.quote_keys else key

    def scalar(self, value: Any) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, Float):
            return value.text
        if isinstance(value, int):
            return str(value)
        if isinstance(value, dt.datetime):
            return value.strftime("%Y-%m-%dT%H:%M:%SZ")
        if isinstance(value, Bare) and not self.single:
            return str(value)
        if self.single and "'" not in value and "\\" not in value and "\n" not in value:
            return f"'{value}'"
        escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t").replace("\n", "\\n")
        return '"' + escaped.replace("\r", "\\r") + '"'

    def value(self, value: Any) -> str:
        if isinstance(value, dict):
            return "{" + "".join(self.member(k, v) for k, v in value.items()) + "}"
        if isinstance(value, list):
            # A separator after every element: '[1]' is not valid, '[1,]' is.
            return "[" + "".join(self.value(item) + self.item_end for item in value) + "]"
        return self.scalar(value)

    def member(self, key: str, value: Any) -> str:
        return self.key(key) + self.sep + self.value(value) + self.end


@st.composite
def documents(draw: Any) -> tuple[dict[str, Any], str]:
    tree = draw(st.dictionaries(keys, trees, max_size=6))
    style = Style(draw)
    body = "".join(style.member(k, v) for k, v in tree.items())
    if draw(st.booleans()):
        body = "{\n" + body + "\n}\n"
    return tree, body


@settings(max_examples=300, deadline=None)
@given(documents())
def test_rendered_documents_parse_back(document: tuple[dict[str, Any], str]) -> None:
    tree, text = document
    assert plain(parse(text)) == tree, text
