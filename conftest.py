"""Collects the code examples of README.md and docs/ as tests (see tests/harness/doc_examples.py)."""

from sybil import Sybil
from sybil.parsers.markdown import SkipParser

from tests.harness.doc_examples import ExampleParser

pytest_collect_file = Sybil(
    parsers=[ExampleParser(), SkipParser()],
    patterns=["README.md", "docs/*.md", "docs/*/*.md"],
).pytest()
