"""Operator (JWT) mode: NATS JWTs decoded and verified, the chain of trust, and the logins they make.

Sans-IO, and without a clock of its own (the caller passes the time):
``claims`` (a JWT's header, claims and signature check, ``exp``/``nbf``),
``trust`` (trusted operators, account JWTs and the fakejs accounts they
make), ``exports`` (an account JWT's exports and imports, and the
activation tokens of private exports), ``account_validation`` (what makes an
account JWT invalid, as nats-io/jwt validates it), ``account_configs`` (the accounts of
a set of account JWTs, with the imports their exporters approve), ``scoped``
(scoped signing keys and the permission templates their users get), ``shapes``
(the JSON types of each claim's fields, as Go reads them), ``user_validation``
(a user claim's subjects, networks and times checked), ``times`` (a user JWT's
connect times), ``login`` (a CONNECT's user JWT and nonce signature checked: the
user, its account and expiry) and ``callout`` (an authorization callout's request JWT
signed, its response JWT checked); ``directory`` keeps the account JWTs of a
full or cache resolver in a directory (files, no clock).  The package may
import the core modules
below the broker's CONNECT handling (``auth`` for nkey signatures,
``users``, ``account_config``, ``options``); the broker and the
configuration file import it.
"""
