"""The operation builders of :mod:`fakejs.parity.operations` as hypothesis strategies.

:class:`StrategyDraw` is a :class:`~fakejs.parity.configs.Draw` over a
hypothesis ``draw`` function, so the property tests draw from exactly the
value sets the campaigns use, and hypothesis can still shrink every choice.
Only the test suite needs hypothesis; campaigns never import this module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from fakejs.parity.configs import Draw, consumer_config
from fakejs.parity.operations import BUILDERS, Operation, build
from fakejs.parity.vocabulary import BASE, Vocabulary

T = TypeVar("T")


class StrategyDraw:
    """Choices from a hypothesis ``draw``: every pick stays shrinkable."""

    def __init__(self, draw: Callable[..., Any]) -> None:
        self.draw = draw

    def choice(self, values: Sequence[T]) -> T:
        picked: T = self.draw(st.sampled_from(list(values)))
        return picked

    def integer(self, low: int, high: int) -> int:
        return int(self.draw(st.integers(low, high)))


def _composite(builder: Callable[[Draw], T]) -> SearchStrategy[T]:
    return st.composite(lambda draw: builder(StrategyDraw(draw)))()


def consumer_configs(v: Vocabulary = BASE) -> SearchStrategy[dict[str, Any]]:
    return _composite(lambda d: consumer_config(d, v))


def operations(kind: str, v: Vocabulary = BASE) -> SearchStrategy[list[Operation]]:
    """The operations one draw of ``kind`` makes, as a hypothesis strategy."""
    if kind not in BUILDERS:
        raise KeyError(f"unknown operation {kind!r} (known: {', '.join(sorted(BUILDERS))})")
    return _composite(lambda d: build(kind, d, v))
