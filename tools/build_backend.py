"""fakejs's build backend: setuptools', plus mypy in the build environment for a compiled build.

``pip install .`` builds pure Python, as setuptools alone would.  With
``FAKEJS_MYPYC=1`` in the environment, the build also needs mypy (whose
mypyc compiles the modules setup.py lists) and a C compiler; this backend
asks pip for the same mypy the test extra pins, so the compiled build stays
one command: ``FAKEJS_MYPYC=1 pip install .``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from setuptools import build_meta
from setuptools.build_meta import (  # noqa: F401 - the hooks this backend keeps as setuptools has them
    build_editable,
    build_sdist,
    build_wheel,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)

MYPY = "mypy==2.4.1"  # the version pinned by the test extra: the compiled modules are checked by it


def compiled() -> bool:
    """Whether ``FAKEJS_MYPYC`` asks for the compiled build (setup.py reads the same variable)."""
    return os.environ.get("FAKEJS_MYPYC", "").lower() in ("1", "yes", "true", "on")


@contextmanager
def _pure() -> Iterator[None]:
    """The environment without ``FAKEJS_MYPYC``: setup.py, run for its requirements, does not need mypy yet."""
    asked = os.environ.pop("FAKEJS_MYPYC", None)
    try:
        yield
    finally:
        if asked is not None:
            os.environ["FAKEJS_MYPYC"] = asked


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    """setuptools' requirements, and mypy when the wheel is compiled."""
    if not compiled():
        requires: list[str] = build_meta.get_requires_for_build_wheel(config_settings)
        return requires
    with _pure():
        requires = build_meta.get_requires_for_build_wheel(config_settings)
    return [*requires, MYPY]
