"""The container tests' podman and image, set up once per session (per worker under xdist)."""

from __future__ import annotations

import pytest

from tests.container.engine import Podman, build_image, set_up_podman


@pytest.fixture(scope="session")
def podman() -> Podman:
    """Podman as the recipe configured it (the tests are skipped, with the reason, where it cannot run)."""
    return set_up_podman()


@pytest.fixture(scope="session")
def image(podman: Podman, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The repository's image, built once; its ID."""
    return build_image(podman, tmp_path_factory.mktemp("image") / "iid")
