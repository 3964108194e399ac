"""NATS credentials for tests: operators, accounts and users minted as nats-io/jwt v2 writes them.

::

    op = Operator("O")
    sys_account = op.account("SYS")
    app = op.account("APP", jetstream=True)
    alice = app.user("alice", pub_allow=["orders.>"])
    config = op.server_config(system_account=sys_account, accounts=[sys_account, app])
    await nats.connect(url, user_credentials=alice.write_creds(tmp_path / "alice.creds"))

``claims`` (the JWT format: claims in Go's field order, the ``jti``, the
signature, decoding and checking, the ``.creds`` text), ``issuers``
(:class:`Operator`, :class:`Account`, :class:`User` and their signing
keys, scoped ones (:class:`ScopedKey`, :func:`user_template`) included,
with an injectable clock, and the operator-mode configuration for
nats-server) and ``demo`` (:class:`DemoCredentials`: an operator, an
account with JetStream and a user, ready made, for the pytest plugin's
``operator=True`` and the command line's ``--demo_credentials``).  Keys and signatures come from the ``nkeys`` package.  The
package may import :mod:`fakejs.core` (the nonce signature check) and
:mod:`fakejs.gocompat` (Go's JSON).
"""

from fakejs.testkit.jwt.claims import (
    claims_id,
    decode,
    decorate_jwt,
    decorate_seed,
    encode,
    format_user_config,
    issued_claims,
    verify,
)
from fakejs.testkit.jwt.demo import DemoCredentials
from fakejs.testkit.jwt.issuers import Account, Key, Operator, ResponsePermission, ScopedKey, User, user_template

__all__ = [
    "Account",
    "DemoCredentials",
    "Key",
    "Operator",
    "ResponsePermission",
    "ScopedKey",
    "User",
    "claims_id",
    "decode",
    "decorate_jwt",
    "decorate_seed",
    "encode",
    "format_user_config",
    "issued_claims",
    "user_template",
    "verify",
]
