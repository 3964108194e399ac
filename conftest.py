"""Collects the code examples of README.md and docs/ as tests (see tests/harness/doc_examples.py)."""

import pytest
from sybil import Sybil
from sybil.parsers.markdown import SkipParser

# The test harness's own assertions say what they compared, as a test module's do (before it is imported)
pytest.register_assert_rewrite("tests.harness")

from tests.harness.doc_examples import ExampleParser  # noqa: E402  (after the rewrite is registered)

pytest_collect_file = Sybil(
    parsers=[ExampleParser(), SkipParser()],
    patterns=["README.md", "docs/*.md", "docs/*/*.md"],
).pytest()
