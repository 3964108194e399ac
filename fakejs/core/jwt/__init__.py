"""Operator (JWT) mode: NATS JWTs decoded and verified, the chain of trust, and the logins they make.

Sans-IO, and without a clock of its own (the caller passes the time):
``claims`` (a JWT's header, claims and signature check, ``exp``/``nbf``),
``trust`` (trusted operators, account JWTs and the fakejs accounts they
make), ``exports`` (an account JWT's exports and imports, and the
activation tokens of private exports), ``validation`` (what makes an
account JWT invalid, as nats-io/jwt validates it), ``account_claims`` (the accounts of
a set of account JWTs, with the imports their exporters approve), ``times``
(a user JWT's connect times) and ``login`` (a CONNECT's user JWT and nonce signature checked: the
user, its account and expiry).  The package may import the core modules
below the broker's CONNECT handling (``auth`` for nkey signatures,
``users``, ``account_config``, ``options``); the broker and the
configuration file import it.
"""
