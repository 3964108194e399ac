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
with an injectable clock, the operator-mode configuration for
nats-server, and :func:`push_account`, an account JWT update sent over a
system account user's connection), ``callout`` (an authorization
callout service: :class:`CalloutService` reads a server's request and
answers with a user JWT, :class:`Allow`, or an error, :class:`Deny`) and
``demo`` (:class:`DemoCredentials`: an operator, an account with JetStream
and a user, ready made, for the pytest plugin's ``operator=True`` and the
command line's ``--demo_credentials``).  Keys and signatures come from the
``nkeys`` package.  The
package may import :mod:`fakejs.core` (the nonce signature check) and
:mod:`fakejs.gocompat` (Go's JSON).
"""

from fakejs.testkit.jwt.callout import (
    AUTH_CALLOUT_SUBJECT,
    Allow,
    AuthorizationRequest,
    CalloutService,
    CurveKey,
    Deny,
    RequestError,
    read_request,
)
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
from fakejs.testkit.jwt.issuers import (
    Account,
    Key,
    Operator,
    ResponsePermission,
    ScopedKey,
    User,
    push_account,
    user_template,
)

__all__ = [
    "AUTH_CALLOUT_SUBJECT",
    "Account",
    "Allow",
    "AuthorizationRequest",
    "CalloutService",
    "CurveKey",
    "DemoCredentials",
    "Deny",
    "Key",
    "Operator",
    "RequestError",
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
    "push_account",
    "read_request",
    "user_template",
    "verify",
]
