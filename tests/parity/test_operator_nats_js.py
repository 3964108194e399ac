"""Operator (JWT) mode with nats.js: ``credsAuthenticator``, ``jwtAuthenticator`` and ``nkeyAuthenticator``.

The credentials are minted by :mod:`fakejs.testkit.jwt` here and written to
files that ``tests/js/authenticators.mjs`` reads; the script logs in each
way, makes a round trip and reports what it got, on both targets.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from fakejs.testkit.jwt import Account, User
from fakejs.testkit.jwt import Operator as JwtOperator
from tests.harness.operator import StartOperator, operator_start_fixture

start = operator_start_fixture()

JS_DIR = Path(__file__).resolve().parent.parent / "js"
REFUSED = {"name": "AuthorizationError", "message": "Authorization Violation"}


def node() -> str:
    """The node binary, when tests/js has its packages (``npm ci --prefix tests/js``)."""
    binary = shutil.which("node")
    if binary is None:
        pytest.skip("node not found")
    for package in ("nats-core", "transport-node"):
        if not (JS_DIR / "node_modules" / "@nats-io" / package).is_dir():
            pytest.skip(f"tests/js/node_modules lacks @nats-io/{package} (npm ci in tests/js)")
    return binary


def write_credentials(directory: Path, user: User, bearer: User) -> None:
    """What the script reads: the user's ``.creds``, JWT and seed, and a bearer user's JWT."""
    user.write_creds(directory / "user.creds")
    (directory / "user.jwt").write_text(user.jwt)
    (directory / "user.seed").write_text(user.seed)
    (directory / "bearer.jwt").write_text(bearer.jwt)


async def logins(url: str, directory: Path) -> dict[str, object]:
    proc = await asyncio.create_subprocess_exec(
        node(),
        str(JS_DIR / "authenticators.mjs"),
        url,
        str(directory),
        cwd=JS_DIR,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, (out.decode(), err.decode())
    result: dict[str, object] = json.loads(out.decode().strip().splitlines()[-1])
    return result


def accounts() -> tuple[JwtOperator, Account, Account]:
    operator = JwtOperator("O")
    return operator, operator.account("SYS"), operator.account("APP", jetstream=True)


@pytest.mark.parametrize("issuer", ["account", "signing_key", "scoped_key"])
async def test_nats_js_authenticators(issuer: str, start: StartOperator, tmp_path: Path) -> None:
    """A user issued by the account, by a signing key or by a scoped key logs in every way a JWT can."""
    node()
    operator, system, app = accounts()
    signer = {"account": None, "signing_key": app.signing_key(), "scoped_key": app.scoped_signing_key("all")}[issuer]
    bearer_signer = app.scoped_signing_key("bearer", bearer=True) if issuer == "scoped_key" else signer
    user = app.user("js", signer=signer)
    bearer = app.user("bearer", signer=bearer_signer, bearer=issuer != "scoped_key")
    target = await start(operator, system, app)
    write_credentials(tmp_path, user, bearer)
    assert await logins(target.url, tmp_path) == {
        "creds": "ok",
        "jwtAndSeed": "ok",
        "jwtAndNkey": "ok",
        "bearer": "ok",
        "nkeyAlone": REFUSED,
        "jwtUnsigned": REFUSED,
    }
