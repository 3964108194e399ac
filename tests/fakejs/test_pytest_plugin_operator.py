"""The pytest plugin's operator mode: ``@pytest.mark.fakejs(operator=True)`` and ``fakejs_credentials``."""

from __future__ import annotations

import pytest

# Loaded before pytester's in-process runs (see test_pytest_plugin.py).
import trustme  # noqa: F401

from tests.harness.targets import REAL_BINARY

SUITE = """
import nats
import pytest

@pytest.mark.fakejs(operator=True)
async def test_the_client_logs_in_as_the_user(fakejs_client, fakejs_credentials):
    js = fakejs_client.jetstream()
    await js.add_stream(name="S", subjects=["s.>"])
    assert (await js.publish("s.a", b"x")).seq == 1
    assert fakejs_credentials.creds_file.name == "user.creds"
    assert fakejs_credentials.account.name == "APP"

@pytest.mark.fakejs(operator=True, config="max_payload: 512\\n")
async def test_more_users_and_a_stranger(fakejs_server, fakejs_credentials, tmp_path):
    reader = fakejs_credentials.account.user("reader", sub_allow=["news.>"])
    nc = await nats.connect(fakejs_server.url, user_credentials=reader.write_creds(tmp_path / "reader.creds"))
    assert nc.max_payload == 512
    await nc.close()
    with pytest.raises(Exception, match="Authorization Violation"):
        await nats.connect(fakejs_server.url, allow_reconnect=False, max_reconnect_attempts=0)

def test_credentials_need_operator_mode(fakejs_credentials):
    pass
"""

INI = "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"


@pytest.mark.parametrize("target", ["fake", "real"])
def test_operator_mode_on_both_targets(target: str, pytester: pytest.Pytester) -> None:
    if target == "real" and REAL_BINARY is None:
        pytest.skip("nats-server not installed")
    pytester.makeini(INI)
    pytester.makepyfile(test_operator=SUITE)
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", f"--fakejs-target={target}")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*fakejs_credentials needs @pytest.mark.fakejs(operator=True)*"])
