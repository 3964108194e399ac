"""Who a CONNECT logs in as: nats-server's credential checks (a login's user names its account).

:class:`Authenticator` follows ``processClientOrLeafAuthentication`` in
nats-server's ``auth.go`` for a server configured from options:

* nkey users first: a CONNECT naming a configured ``nkey`` must carry
  ``sig``, the base64url ed25519 signature of the nonce the server put in
  its INFO (a nonce is sent exactly when nkey users exist); naming an
  unknown nkey fails outright;
* then ``users``: the named user's password, plain or bcrypt
  (``$2a$``/``$2b$``/``$2x$``/``$2y$`` hashes), must match;
* otherwise the single ``token``, or the single ``user``/``password``.

A client presenting no user, password, token or nkey becomes the
``no_auth_user`` when one is configured (as nats-server, a bcrypt-hashed
password makes that login fail: the hash is compared with itself).

bcrypt and the ed25519 verifier (PyNaCl, installed with ``nkeys``) are
imported only when a hash or a signature has to be checked.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from fakejs.core.clientio import STANDARD, WEBSOCKET
from fakejs.core.options import ServerOptions
from fakejs.gocompat.curvekeys import crc16

if TYPE_CHECKING:
    from fakejs.core.clientio import PeerCertificate
    from fakejs.core.users import User

# nkeys' prefix bytes (the first base32 character of a key): U, A, N, O, C.
PREFIX_BYTE_USER = 20 << 3
_PUBLIC_PREFIXES = frozenset({20 << 3, 0, 13 << 3, 14 << 3, 2 << 3})
NONCE_RAW_LEN = 11
# The account of users configured outside any account (nats-server's globalAccountName).
GLOBAL_ACCOUNT = "$G"
_DIGITS = "0123456789"


def is_bcrypt(secret: str) -> bool:
    """nats-server's ``isBcrypt``: the secret is a bcrypt hash, not a plain password."""
    # ^\$2[abxy]\$\d{2}\$ (ASCII digits), without compiling a regular expression at start-up
    return (
        len(secret) >= 7
        and secret.startswith("$2")
        and secret[2] in "abxy"
        and secret[3] == "$"
        and secret[4] in _DIGITS
        and secret[5] in _DIGITS
        and secret[6] == "$"
    )


def decode_public_key(key: str, prefix: int | None = None) -> bytes | None:
    """The raw ed25519 key of a public nkey (``U...``, ``A...``...), or ``None`` when it is not one.

    ``prefix`` asks for one kind (:data:`PREFIX_BYTE_USER` for users, a curve key's too).
    """
    try:
        raw = base64.b32decode(key + "=" * (-len(key) % 8))
    except (binascii.Error, ValueError):
        return None
    if len(raw) != 35:
        return None
    body, checksum = raw[:-2], raw[-2:]
    if crc16(body) != int.from_bytes(checksum, "little"):
        return None
    if body[0] != prefix if prefix is not None else body[0] not in _PUBLIC_PREFIXES:
        return None
    return bytes(body[1:])


def is_valid_public_user_key(key: str) -> bool:
    """nkeys' ``IsValidPublicUserKey``."""
    return decode_public_key(key, PREFIX_BYTE_USER) is not None


def is_user_seed(seed: str) -> bool:
    """nkeys' ``DecodeSeed`` of a user's seed (``SU...``): its checksum and prefix."""
    if not seed.startswith("SU"):
        return False
    try:
        raw = base64.b32decode(seed + "=" * (-len(seed) % 8))
    except (binascii.Error, ValueError):
        return False
    body, checksum = raw[:-2], raw[-2:]
    return len(raw) == 36 and crc16(body) == int.from_bytes(checksum, "little")


def _decode_signature(sig: str) -> bytes | None:
    """base64url without padding, else standard base64 (as nats-server accepts)."""
    try:
        if "=" not in sig:
            return base64.urlsafe_b64decode(sig + "=" * (-len(sig) % 4))
    except (binascii.Error, ValueError):
        pass
    try:
        return base64.b64decode(sig, validate=True)
    except (binascii.Error, ValueError):
        return None


def verify_signature(public_key: str, nonce: bytes, sig: str) -> bool:
    """Whether ``sig`` is the nkey's ed25519 signature of ``nonce``."""
    raw_sig = _decode_signature(sig)
    raw_key = decode_public_key(public_key)
    if raw_sig is None or raw_key is None:
        return False
    # PyNaCl loads with the first nkey login, not at start
    from nacl.exceptions import CryptoError
    from nacl.signing import VerifyKey

    try:
        VerifyKey(raw_key).verify(nonce, raw_sig)
    except (CryptoError, ValueError, TypeError):
        return False
    return True


def new_nonce(random_bytes: bytes) -> str:
    """The INFO ``nonce``: 11 random bytes, base64url without padding (15 characters)."""
    return base64.urlsafe_b64encode(random_bytes).rstrip(b"=").decode()


class SecretCheck:
    """Constant-time comparison of plain secrets, bcrypt for hashes (successes remembered).

    bcrypt is slow on purpose; a test suite connects over and over with the
    same credentials, so a hash and password that matched once are kept
    (as a digest, never the password) and not hashed again.
    """

    def __init__(self) -> None:
        self._matched: set[bytes] = set()

    def same(self, stored: str, given: str) -> bool:
        if not is_bcrypt(stored):
            return hmac.compare_digest(
                stored.encode("utf-8", "surrogateescape"), given.encode("utf-8", "surrogateescape")
            )
        key = hashlib.sha256(stored.encode() + b"\x00" + given.encode("utf-8", "surrogateescape")).digest()
        if key in self._matched:
            return True
        # The first bcrypt-hashed password loads bcrypt, not the start
        import bcrypt

        try:
            ok = bcrypt.checkpw(given.encode("utf-8", "surrogateescape"), stored.encode())
        except ValueError:
            return False
        if ok:
            self._matched.add(key)
        return ok


class Login:
    """A successful login: the ``users`` entry it used (``None``: token, single user or no auth).

    ``signed``: the client proved it holds the nkey (signed the nonce);
    ``anonymous``: it showed no credentials and became the no_auth_user;
    ``expires``: when the login ends (a user JWT's ``exp``, Unix seconds; 0: never);
    ``account_expires``: when its account ends (an account JWT's ``exp``; 0: never).
    ``name_tag``: an operator-mode user JWT's ``name`` (nats-server's ``nameTag``), ``issuer_key``
    the key that issued it (the account or one of its signing keys; a configured nkey user's account
    name: nats-server's ``issuerForClient``) and ``tags`` its ``tags``.
    """

    __slots__ = ("account_expires", "anonymous", "expires", "issuer_key", "name_tag", "signed", "tags", "user")

    def __init__(
        self,
        user: User | None = None,
        signed: bool = False,
        anonymous: bool = False,
        expires: int = 0,
        name_tag: str = "",
        account_expires: int = 0,
        issuer_key: str = "",
        tags: tuple[str, ...] = (),
    ) -> None:
        self.user = user
        self.signed = signed
        self.anonymous = anonymous
        self.expires = expires
        self.account_expires = account_expires
        self.name_tag = name_tag
        self.issuer_key = issuer_key
        self.tags = tags

    def __repr__(self) -> str:
        return f"Login(user={self.user!r}, signed={self.signed}, anonymous={self.anonymous})"


OPEN = Login()


@dataclass(frozen=True)
class LoginRules:
    """How one kind of client connection logs in (nats-server's choices in ``processClientOrLeafAuthentication``).

    Plain clients use the server's ``authorization``; websocket clients use
    the ``websocket {}`` block's ``authorization {}`` / ``no_auth_user`` when
    it has any (an "override"), else the server's -- and the users, nkeys and
    certificate mapping are always the server's, each user limited by its
    ``allowed_connection_types``.
    """

    connection_type: str = STANDARD
    required: bool = False  # the client must log in (CONNECT with credentials, or the no_auth_user)
    timeout: float = 2.0  # seconds to log in
    greeting_required: bool = False  # the greeting INFO says auth_required
    user: str = ""
    password: str = ""
    token: str = ""
    no_auth_user: str = ""
    tls_map: bool = False  # users from the client certificate (``verify_and_map``)
    implicit_login: bool = False  # the no_auth_user is a ``users`` entry: a client may skip CONNECT

    def allows(self, user: User) -> bool:
        """The user may connect with this kind of connection (an empty list allows every kind)."""
        return not user.connection_types or self.connection_type in user.connection_types


def login_rules(options: ServerOptions, connection_type: str = STANDARD) -> LoginRules:
    """The rules of one connection type under ``options``."""
    required = options.auth_required
    standard = LoginRules(
        connection_type,
        required,
        options.auth_timeout,
        # a no_auth_user spares plain clients the credentials: their greeting says so
        required and not options.no_auth_user,
        options.user,
        options.password,
        options.token,
        options.no_auth_user,
        options.tls is not None and options.tls.verify_and_map,
    )
    ws = options.websocket
    if connection_type != WEBSOCKET or ws is None:
        return standard
    tls_map = ws.tls is not None and ws.tls.verify_and_map
    timeout = ws.auth_timeout or options.auth_timeout
    if not (ws.username or ws.token or ws.no_auth_user):
        # no override: the server's credentials; the greeting is the server's own (no_auth_user or not)
        return LoginRules(
            WEBSOCKET,
            required,
            timeout,
            required,
            standard.user,
            standard.password,
            standard.token,
            standard.no_auth_user,
            tls_map,
        )
    return LoginRules(WEBSOCKET, True, timeout, True, ws.username, ws.password, ws.token, ws.no_auth_user, tls_map)


def with_cookies(connect: dict[str, Any], cookies: dict[str, str], names: tuple[str, str, str]) -> dict[str, Any]:
    """A websocket client's CONNECT completed from its upgrade request's cookies (``user_cookie``...).

    As nats-server, a cookie fills only what the CONNECT leaves empty.
    """
    filled = dict(connect)
    for key, name in zip(("user", "pass", "auth_token"), names, strict=True):
        if name and not _text(connect, key) and name in cookies:
            filled[key] = cookies[name]
    return filled


def _text(connect: dict[str, Any], key: str) -> str:
    value = connect.get(key, "")
    return value if isinstance(value, str) else ""


class Authenticator:
    """The credential checks of one server's options."""

    def __init__(self, options: ServerOptions, secrets: SecretCheck | None = None) -> None:
        self.options = options
        users = options.all_users()  # an account's users name their account
        self.users = {u.name: u for u in users if not u.nkey}
        self.nkeys = {u.nkey: u for u in users if u.nkey}
        self.secrets = secrets or SecretCheck()
        self.rules: dict[str, LoginRules] = {}
        for kind in (STANDARD, WEBSOCKET):
            rules = login_rules(options, kind)
            self.rules[kind] = replace(rules, implicit_login=self.implicit_login(rules))

    @property
    def nonce_required(self) -> bool:
        """nats-server sends a nonce in INFO exactly when nkey users are configured."""
        return bool(self.nkeys)

    def implicit_login(self, rules: LoginRules) -> bool:
        """nats-server lets a client skip CONNECT when the no_auth_user is a ``users`` entry it may log in as."""
        user = self.users.get(rules.no_auth_user) if rules.no_auth_user else None
        return user is not None and rules.allows(user)

    def login(
        self,
        connect: dict[str, Any],
        nonce: bytes = b"",
        peer: PeerCertificate | None = None,
        rules: LoginRules | None = None,
    ) -> Login | None:
        """Who the CONNECT options (or, with ``verify_and_map``, the certificate) log in as; ``None``: refused."""
        rules = rules or self.rules[STANDARD]
        if not rules.required:
            return OPEN
        allowed = rules.allows
        user_name, password = _text(connect, "user"), _text(connect, "pass")
        token, nkey = _text(connect, "auth_token"), _text(connect, "nkey")
        no_auth = rules.no_auth_user
        anonymous = not (user_name or password or token)
        nkey_user: User | None = None
        if self.nkeys:
            if no_auth and anonymous and not nkey and no_auth in self.nkeys:
                nkey = no_auth
            if nkey:
                nkey_user = self.nkeys.get(nkey)
                if nkey_user is None or not allowed(nkey_user):
                    return None
        user: User | None = None
        became_no_auth = False
        if self.users and nkey_user is None and rules.tls_map:
            # Only a tls_map login loads the certificate mapping
            from fakejs.core.certmap import mapped_user

            user = mapped_user(peer, self.users, allowed)
            if user is None:
                return None
        elif self.users and nkey_user is None:
            if no_auth and anonymous and no_auth in self.users:
                user_name, password = no_auth, self.users[no_auth].password
                became_no_auth = True
            if user_name:
                user = self.users.get(user_name)
                if user is None or not allowed(user):
                    return None
        if nkey_user is not None:
            issuer_key = nkey_user.account or GLOBAL_ACCOUNT  # nats-server's issuerForClient: the user's account
            if nkey_user.nkey == no_auth:
                return Login(nkey_user, anonymous=anonymous, issuer_key=issuer_key)
            sig = _text(connect, "sig")
            if not sig or not verify_signature(nkey, nonce, sig):
                return None
            return Login(nkey_user, signed=True, issuer_key=issuer_key)
        if user is not None:
            return Login(user, anonymous=became_no_auth) if self.secrets.same(user.password, password) else None
        if rules.token:
            return OPEN if self.secrets.same(rules.token, token) else None
        if rules.user:
            if user_name != rules.user:
                return None
            return OPEN if self.secrets.same(rules.password, password) else None
        return None

    def password_ok(self, user_name: str, password: str) -> bool:
        """Whether a user and password are valid credentials (a ``users`` entry or the single user)."""
        if self.users:  # as for a login, the single user is not consulted then
            user = self.users.get(user_name)
            return user is not None and self.rules[STANDARD].allows(user) and self.secrets.same(user.password, password)
        opts = self.options
        if not opts.user or opts.token:
            return False
        same_user = hmac.compare_digest(opts.user.encode(), user_name.encode())
        return self.secrets.same(opts.password, password) and same_user

    def token_ok(self, token: str) -> bool:
        opts = self.options
        return bool(opts.token) and self.secrets.same(opts.token, token)


def validate(options: ServerOptions) -> str | None:
    """What nats-server refuses to start with among the authentication options (its text), if anything."""
    users = options.all_users()
    for user in users:
        if user.nkey and not is_valid_public_user_key(user.nkey):
            return "Not a valid public nkey for a user"
    no_auth = options.no_auth_user
    if not no_auth:
        return None
    if not users:
        return f'no_auth_user: "{no_auth}" present, but users/nkeys are not defined'
    if any(no_auth in (u.name, u.nkey) for u in users):
        return None
    return f'no_auth_user: "{no_auth}" not present as user or nkey in authorization block or account configuration'
